"""Per-operator costs read from a timings file (``tvmdevice info --plot … --timings FILE``).

The file is JSON: a list of records, or an object whose ``"operators"`` key
holds that list.  Each record is one operator's (or one device call's) cost::

    {"op_index": 3, "op_type": "CONV_2D", "device": "cmsis-nn", "value": 12.5, "unit": "us"}

``op_index`` is the operator's index in the model (``null`` for a step of no
operator, e.g. a copy, whose ``op_type`` is then its label; a partition's one
call is its first operator's index with type ``PARTITION``); ``value`` is a
number ≥ 0 in ``unit`` (one unit per file: ``us``, ``ns``, ``instructions``
...).  A firmware profile (``run``/``bench DIR --cpu … --profile --json``)
writes this shape under ``"operators"``; anyone can.

``tvmdevice bench MODEL --json`` (a ``.tflite`` on the host) is read too: its
``"steps"`` (each step of the schedule with its mean time) become records in
``us``, each step's operator taken from the model compiled for the same
target, whose devices must be the steps' own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..aot.schedule import KernelStep
from ..errors import InvalidArgumentError
from ..partition import PARTITION_TYPE

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule

__all__ = ["OperatorCost", "TimingsFile", "load_timings", "read_timings"]

_FIELDS = ("op_index", "op_type", "device", "value", "unit")
_STEP_FIELDS = ("step", "device", "mean_us")


@dataclass(frozen=True)
class OperatorCost:
    """One record of a timings file."""

    op_index: int | None
    op_type: str
    device: str
    value: float
    unit: str


@dataclass(frozen=True)
class TimingsFile:
    """A timings file as read: its ``records``, either operator records or ``bench``'s steps (``steps``)."""

    path: str
    records: list[Any]
    steps: bool = False


def load_timings(path: str) -> TimingsFile:
    """The timings file at ``path`` read as JSON (checked against a model by :func:`read_timings`)."""
    p = Path(path)
    if not p.is_file():
        raise InvalidArgumentError(f"--timings {path!r} does not exist" if not p.exists()
                                   else f"--timings {path!r} is not a file")
    try:
        data = json.loads(p.read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InvalidArgumentError(f"--timings {path!r} is not JSON: {e}") from None
    steps = isinstance(data, dict) and "operators" not in data and "steps" in data
    records = (data.get("steps") if steps else data.get("operators")) if isinstance(data, dict) else data
    if not isinstance(records, list) or not records:
        raise InvalidArgumentError(f"--timings {path!r}: expected a non-empty list of "
                                   f"{{{', '.join(_FIELDS)}}} records (or an object with one under \"operators\", "
                                   "or the \"steps\" of bench --json)")
    return TimingsFile(path, records, steps)


def _from_step(path: str, k: int, s: Any, module: "CompiledModule") -> dict[str, Any]:
    """``bench --json``'s step record ``s`` as an operator record, its operator from ``module``'s schedule."""
    where = f"--timings {path!r} step record {k}"
    if not isinstance(s, dict) or any(f not in s for f in _STEP_FIELDS):
        raise InvalidArgumentError(f"{where}: needs the fields {', '.join(_STEP_FIELDS)}")
    index, schedule = s["step"], module.schedule.steps
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(schedule):
        raise InvalidArgumentError(f"{where}: step {index!r} is not one of the {len(schedule)} steps of "
                                   f"{module.graph.name!r} on {module.target}; bench it with the same target")
    step = schedule[index]
    if isinstance(step, KernelStep):
        if s["device"] != step.device:
            raise InvalidArgumentError(f"{where}: step {index} ran on {s['device']!r}, but on {step.device!r} for "
                                       f"target {module.target}; pass the target the bench used")
        return {"op_index": step.op_index, "op_type": step.call.type, "device": step.device,
                "value": s["mean_us"], "unit": "us"}
    label = s.get("label") if isinstance(s.get("label"), str) else f"copy t{step.tensor} {step.src}->{step.dst}"
    return {"op_index": None, "op_type": label, "device": s["device"], "value": s["mean_us"], "unit": "us"}


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


def read_timings(path: str, module: "CompiledModule", loaded: TimingsFile | None = None) -> list[OperatorCost]:
    """The costs in the timings file at ``path``, checked against ``module``'s operators (and partitions); one
    clear error when they do not fit.

    :param loaded: the file when :func:`load_timings` has read it already.
    """
    file = loaded if loaded is not None else load_timings(path)
    rows = [_from_step(path, k, s, module) for k, s in enumerate(file.records)] if file.steps else file.records
    costs = [_record(path, k, r, module) for k, r in enumerate(rows)]
    units = sorted({c.unit for c in costs})
    if len(units) > 1:
        raise InvalidArgumentError(f"--timings {path!r} mixes units ({', '.join(units)}); one unit per file")
    return costs
