"""The operator table: which installed device runs which operator and data-type variant.

Generated from the code, never kept by hand: the rows are the kernel keys
every installed device declares (:attr:`~tvmdevice.device_type.DeviceType.operators`:
``"ADD"`` for the int8 kernel, ``"ADD:int16"`` for a variant, see
:func:`tvmdevice.ops.kernel_key`) plus any operator of the operator layer no
device declares; each row's data types come from the operator layer's
signature (:data:`tvmdevice.ops.OPERATORS`).  A device's claim is subject to
its parameter checks when an operator is prepared (a refusal names the
limit and placement falls back to the next device); each device's column
names its numeric target options, among them those limits.

``tvmdevice plugins --ops`` prints it; ``python -m tvmdevice.optable`` prints
the README's sections (:mod:`tvmdevice.optable.render`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tvmdevice.optable.tflm import BEYOND_TFLM

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.device_type import DeviceType
    from tvmdevice.ops import OpDef
    from tvmdevice.registry import Registry

__all__ = ["Row", "Column", "OperatorTable", "build", "dtype_label"]

# Index-like operand types (shapes, axes, indices): not what a row's data types name.
_INDEX = frozenset({np.dtype("<i4"), np.dtype("<i8")})
_ORDER = {"int8": 0, "int16": 1, "int32": 2, "int64": 3, "float32": 4}


@dataclass(frozen=True)
class Row:
    """One operator variant.

    :ivar op_type: the TFLite operator.
    :ivar key: the kernel key devices declare (``"CONV_2D"``, ``"CONV_2D:int16"``).
    :ivar dtypes: its data types, e.g. ``"int8"``, ``"int16x8"`` (int16 activations, int8 weights),
        ``"float32, int8 → int8"``.
    :ivar devices: the devices that declare it, in the table's column order.
    :ivar note: what else to know (the oracle of an operator TFLM has no kernel for), or ``""``.
    """

    op_type: str
    key: str
    dtypes: str
    devices: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True)
class Column:
    """One installed device.

    :ivar name: the device name.
    :ivar distribution: the distribution that ships it.
    :ivar options: its numeric target options with their defaults (``"-max_kernel=16"``), among
        them the limits its parameter checks apply to the operators it declares.
    """

    name: str
    distribution: str
    options: tuple[str, ...]


@dataclass(frozen=True)
class OperatorTable:
    """Operator variants × installed devices."""

    columns: tuple[Column, ...]
    rows: tuple[Row, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "devices": [{"name": c.name, "distribution": c.distribution, "options": list(c.options)}
                        for c in self.columns],
            "operators": [{"operator": r.op_type, "key": r.key, "dtypes": r.dtypes, "devices": list(r.devices),
                           **({"note": r.note} if r.note else {})} for r in self.rows],
        }


def _names(dtypes: frozenset) -> list[str]:
    return sorted((np.dtype(d).name for d in dtypes), key=lambda n: _ORDER.get(n, 9))


def _data_role(definition: "OpDef") -> Any:
    """The operand that carries the data (not a shape, an axis or an index)."""
    inputs = definition.signature.inputs
    for role in inputs:
        if role.name in ("input", "input1", "lhs"):
            return role
    return next((r for r in inputs if not r.dtypes <= _INDEX), inputs[0])


def dtype_label(op_type: str, variant: str, variants: set[str]) -> str:
    """The data types of one kernel key of ``op_type``, from the operator layer's signature.

    :param variant: the key's variant (``""`` for the base kernel).
    :param variants: every variant of ``op_type`` some device declares: the base
        kernel covers the data types besides the one every variant names (int16 for
        ``QUANTIZE:int8->int16``, ``QUANTIZE:int16->int8``...) and those only an int16
        variant adds (:data:`tvmdevice.ops.int16.EXTRA_DTYPES`).
    """
    from tvmdevice.ops import OPERATORS

    definition = OPERATORS.get(op_type)
    if definition is None:
        return variant or "(the device's own)"
    sig = definition.signature
    if variant:
        if "->" in variant:
            return variant.replace("->", " → ")
        # int16 activations with int8-only inputs besides (weights): TFLM's "16x8".
        weights = [r for r in sig.inputs if r.dtypes == frozenset({np.dtype("i1")})]
        return f"{variant}x8" if variant == "int16" and weights else variant
    from tvmdevice.ops.int16 import EXTRA_DTYPES

    parts = [set(v.replace("->", " ").split()) for v in variants]
    # and the types only an int16 variant adds (QUANTIZE's int32 output, with an int16 input)
    taken = (set.intersection(*parts) if parts else set()) | {
        n for dtypes in EXTRA_DTYPES.get(op_type, {}).values() for n in _names(dtypes)}
    ins = [n for n in _names(_data_role(definition).dtypes) if n not in taken]
    out_role = sig.outputs[0]
    outs = [n for n in _names(out_role.dtypes) if n not in taken]
    if ins == outs or out_role.dtypes <= _INDEX:
        return ", ".join(ins)
    return f"{', '.join(ins)} → {', '.join(outs)}"


def _numeric_options(t: "DeviceType") -> tuple[str, ...]:
    return tuple(f"-{o.name}={o.default}" for o in t.options if o.type in (int, float))


def build(registry: "Registry | None" = None) -> OperatorTable:
    """The table for the devices of ``registry`` (default: the process registry)."""
    from tvmdevice import get_registry
    from tvmdevice.ops import OPERATORS

    registry = registry or get_registry()
    records = [r for r in registry.records() if r.status == "loaded"]
    types = [(t, r.distribution) for r in records for t in r.device_types]
    types.sort(key=lambda pair: (not pair[0].is_host, pair[0].name))
    columns = tuple(Column(t.name, dist, _numeric_options(t)) for t, dist in types)
    keys = {k for t, _ in types for k in t.operators} | set(OPERATORS)
    variants: dict[str, set[str]] = {}
    for key in keys:
        op_type, _, variant = key.partition(":")
        variants.setdefault(op_type, set())
        if variant:
            variants[op_type].add(variant)
    rows = []
    for key in sorted(keys, key=lambda k: (k.partition(":")[0], k.partition(":")[2])):
        op_type, _, variant = key.partition(":")
        rows.append(Row(op_type=op_type, key=key, dtypes=dtype_label(op_type, variant, variants[op_type]),
                        devices=tuple(t.name for t, _ in types if key in t.operators),
                        note="" if variant else BEYOND_TFLM.get(op_type, "")))
    return OperatorTable(columns=columns, rows=tuple(rows))
