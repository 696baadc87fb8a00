"""Per-operator costs read from a timings file (``tvmdevice info --plot … --timings FILE``).

The file is JSON: a list of records, or an object whose ``"operators"`` key
holds that list.  Each record is one operator's (or one device call's) cost::

    {"op_index": 3, "op_type": "CONV_2D", "device": "cmsis-nn", "value": 12.5, "unit": "us"}

``op_index`` is the operator's index in the model (``null`` for a step of no
operator, e.g. a copy, whose ``op_type`` is then its label; a partition's one
call is its first operator's index with type ``PARTITION``); ``value`` is a
number ≥ 0 in ``unit`` (one unit per file: ``us``, ``ns``, ``instructions``
...).  ``bench --profile --json`` and a firmware profile write this shape;
anyone can.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgumentError
from ..partition import PARTITION_TYPE

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule

__all__ = ["OperatorCost", "load_timings", "read_timings"]

_FIELDS = ("op_index", "op_type", "device", "value", "unit")


@dataclass(frozen=True)
class OperatorCost:
    """One record of a timings file."""

    op_index: int | None
    op_type: str
    device: str
    value: float
    unit: str


def load_timings(path: str) -> list[dict[str, Any]]:
    """The records of the timings file at ``path`` as JSON (checked against a model by :func:`read_timings`)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidArgumentError(f"--timings {path!r} does not exist" if not p.exists()
                                   else f"--timings {path!r} is not a file")
    try:
        data = json.loads(p.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InvalidArgumentError(f"--timings {path!r} is not JSON: {e}") from None
    records = data.get("operators") if isinstance(data, dict) else data
    if not isinstance(records, list) or not records:
        raise InvalidArgumentError(f"--timings {path!r}: expected a non-empty list of "
                                   f"{{{', '.join(_FIELDS)}}} records (or an object with one under \"operators\")")
    return records


def _record(path: str, k: int, r: Any, module: "CompiledModule") -> OperatorCost:
    where = f"--timings {path!r} record {k}"
    if not isinstance(r, dict) or any(f not in r for f in _FIELDS):
        raise InvalidArgumentError(f"{where}: needs the fields {', '.join(_FIELDS)}")
    index, value = r["op_index"], r["value"]
    if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
        raise InvalidArgumentError(f"{where}: op_index must be an integer or null, not {index!r}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise InvalidArgumentError(f"{where}: value must be a number >= 0, not {value!r}")
    if not all(isinstance(r[f], str) for f in ("op_type", "device", "unit")):
        raise InvalidArgumentError(f"{where}: op_type, device and unit must be strings")
    if index is not None:
        graph = module.graph
        n = len(graph.operators)
        if not 0 <= index < n:
            raise InvalidArgumentError(f"{where}: operator #{index} is not in model {graph.name!r} "
                                       f"({n} operators); were the timings measured on another model?")
        part = module.placement.ops[index].partition
        partition_call = r["op_type"] == PARTITION_TYPE and part is not None and part.first == index
        if graph.operators[index].type != r["op_type"] and not partition_call:
            raise InvalidArgumentError(f"{where}: operator #{index} of model {graph.name!r} is "
                                       f"{graph.operators[index].type}, not {r['op_type']}; were the timings "
                                       f"measured on another model (or another target)?")
    return OperatorCost(index, r["op_type"], r["device"], float(value), r["unit"])


def read_timings(path: str, module: "CompiledModule", records: list[dict[str, Any]] | None = None,
                 ) -> list[OperatorCost]:
    """The costs in the timings file at ``path``, checked against ``module``'s operators (and partitions); one
    clear error when they do not fit.

    :param records: the file's records when :func:`load_timings` has read them already.
    """
    rows = records if records is not None else load_timings(path)
    costs = [_record(path, k, r, module) for k, r in enumerate(rows)]
    units = sorted({c.unit for c in costs})
    if len(units) > 1:
        raise InvalidArgumentError(f"--timings {path!r} mixes units ({', '.join(units)}); one unit per file")
    return costs
