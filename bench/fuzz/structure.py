"""A TFLite model as a plain, mutable Python structure, read from and written to a flatbuffer.

The ``tflite`` package has readers and builder functions but no object API, so
:func:`read` walks a file through the readers into the dataclasses below and
:func:`write` serializes them back with the builder functions.  Every field a
mutation may want to change is kept as the file holds it, without checks:
operator-code fields (``deprecated_builtin_code``, ``builtin_code``,
``version``), the option union's type separately from its table (so that a
type can disagree with the table it carries), ``intermediates``, quantization
arrays of any lengths, buffers' ``offset`` and ``size``, and every subgraph.

Option tables are read generically: a table's fields are the names of its
``<Table>Add<Field>`` builder functions in the ``tflite`` package.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from typing import Any

import flatbuffers
import numpy as np
import tflite


@dataclass
class Buffer:
    data: bytes = b""
    offset: int = 0
    size: int = 0


@dataclass
class Quantization:
    scale: list[float] = field(default_factory=list)
    zero_point: list[int] = field(default_factory=list)
    quantized_dimension: int = 0
    min: list[float] = field(default_factory=list)
    max: list[float] = field(default_factory=list)


@dataclass
class Tensor:
    name: str
    shape: list[int]
    type: int
    buffer: int = 0
    quantization: Quantization | None = None
    is_variable: bool = False
    shape_signature: list[int] | None = None


@dataclass
class Options:
    """An option table: its schema name (``"Conv2DOptions"``) and ``{Field: value}`` (CamelCase)."""

    table: str
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass
class Operator:
    opcode_index: int
    inputs: list[int]
    outputs: list[int]
    intermediates: list[int] = field(default_factory=list)
    #: The union's type code as written; normally ``BuiltinOptions.<table>``.
    options_type: int = 0
    options: Options | None = None
    custom_options: bytes | None = None


@dataclass
class OperatorCode:
    deprecated_builtin_code: int = 0
    builtin_code: int = 0
    version: int = 1
    custom_code: str | None = None


@dataclass
class Subgraph:
    tensors: list[Tensor] = field(default_factory=list)
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    operators: list[Operator] = field(default_factory=list)
    name: str = "main"


@dataclass
class Model:
    version: int = 3
    operator_codes: list[OperatorCode] = field(default_factory=list)
    subgraphs: list[Subgraph] = field(default_factory=list)
    buffers: list[Buffer] = field(default_factory=lambda: [Buffer()])
    description: str = ""

    def copy(self) -> Model:
        return copy.deepcopy(self)

    def code_of(self, op: Operator) -> int:
        """The builtin operator ``op`` names (the larger of its code's two fields, as TFLite reads it)."""
        if not 0 <= op.opcode_index < len(self.operator_codes):
            return -1
        c = self.operator_codes[op.opcode_index]
        return max(c.builtin_code, c.deprecated_builtin_code)


# -- option tables -------------------------------------------------------------


@functools.cache
def option_tables() -> dict[int, str]:
    """``{union type code: table name}`` for every option table the ``tflite`` package knows."""
    return {v: k for k, v in vars(tflite.BuiltinOptions).items()
            if not k.startswith("_") and isinstance(v, int) and v and hasattr(tflite, f"{k}Start")}


@functools.cache
def table_fields(table: str) -> tuple[tuple[str, bool], ...]:
    """``(Field, is_vector)`` for each field of an option table, in schema order."""
    prefix = f"{table}Add"
    names = [n[len(prefix):] for n in dir(tflite) if n.startswith(prefix)]
    return tuple((n, hasattr(tflite, f"{table}Start{n}Vector")) for n in sorted(names))


def _read_options(op: Any, table: str) -> Options | None:
    """The option table as ``table`` (None when it cannot be read as that type: a union type that
    disagrees with the table written)."""
    try:
        return _read_table(op, table)
    except Exception:  # noqa: BLE001 - offsets of another table's layout
        return None


def _read_table(op: Any, table: str) -> Options | None:
    tab = op.BuiltinOptions()
    if tab is None:
        return None
    obj = getattr(tflite, table)()
    obj.Init(tab.Bytes, tab.Pos)
    fields: dict[str, Any] = {}
    for name, is_vector in table_fields(table):
        if is_vector:
            if not getattr(obj, f"{name}IsNone")():
                fields[name] = [int(v) for v in getattr(obj, f"{name}AsNumpy")()]
        else:
            getter = getattr(obj, name, None)
            if getter is None:
                continue
            value = getter()
            if isinstance(value, (bool, int, float, np.generic)):
                fields[name] = value.item() if isinstance(value, np.generic) else value
    return Options(table, fields)


def _ints(obj: Any, name: str) -> list[int]:
    if getattr(obj, f"{name}IsNone")():
        return []
    return [int(v) for v in getattr(obj, f"{name}AsNumpy")()]


def _floats(obj: Any, name: str) -> list[float]:
    if getattr(obj, f"{name}IsNone")():
        return []
    return [float(v) for v in getattr(obj, f"{name}AsNumpy")()]


def read(data: bytes) -> Model:
    """The structure of the model in ``data``; raises whatever the ``tflite`` readers raise on a bad file."""
    m = tflite.Model.GetRootAs(data, 0)
    model = Model(version=m.Version(), description=(m.Description() or b"").decode("utf-8", "replace"))
    model.buffers = []
    for i in range(m.BuffersLength()):
        b = m.Buffers(i)
        model.buffers.append(Buffer(bytes(b.DataAsNumpy()) if b.DataLength() else b"", b.Offset(), b.Size()))
    for i in range(m.OperatorCodesLength()):
        c = m.OperatorCodes(i)
        # Raw fields: the reader's BuiltinCode() answers the larger of the two, hiding a disagreement.
        tab = c._tab
        off_dep, off_code = tab.Offset(4), tab.Offset(10)
        dep = tab.Get(flatbuffers.number_types.Int8Flags, tab.Pos + off_dep) if off_dep else 0
        code = tab.Get(flatbuffers.number_types.Int32Flags, tab.Pos + off_code) if off_code else 0
        custom = c.CustomCode()
        model.operator_codes.append(OperatorCode(dep, code, c.Version(),
                                                 custom.decode("utf-8", "replace") if custom else None))
    tables = option_tables()
    for s in range(m.SubgraphsLength()):
        g = m.Subgraphs(s)
        sub = Subgraph(inputs=_ints(g, "Inputs"), outputs=_ints(g, "Outputs"),
                       name=(g.Name() or b"").decode("utf-8", "replace"))
        for i in range(g.TensorsLength()):
            t = g.Tensors(i)
            q = t.Quantization()
            quant = None
            if q is not None:
                quant = Quantization(_floats(q, "Scale"), _ints(q, "ZeroPoint"), q.QuantizedDimension(),
                                     _floats(q, "Min"), _floats(q, "Max"))
            sig = _ints(t, "ShapeSignature") if not t.ShapeSignatureIsNone() else None
            sub.tensors.append(Tensor((t.Name() or b"").decode("utf-8", "replace"), _ints(t, "Shape"), t.Type(),
                                      t.Buffer(), quant, bool(t.IsVariable()), sig))
        for i in range(g.OperatorsLength()):
            o = g.Operators(i)
            kind = o.BuiltinOptionsType()
            table = tables.get(kind)
            sub.operators.append(Operator(
                o.OpcodeIndex(), _ints(o, "Inputs"), _ints(o, "Outputs"), _ints(o, "Intermediates"), kind,
                _read_options(o, table) if table else None,
                None if o.CustomOptionsIsNone() else bytes(o.CustomOptionsAsNumpy())))
        model.subgraphs.append(sub)
    return model


# -- writing -----------------------------------------------------------------------


def _vector(b: flatbuffers.Builder, start: Any, values: list[Any], prepend: Any) -> int:
    start(b, len(values))
    for v in reversed(values):
        prepend(v)
    return b.EndVector()


def _int32s(b: flatbuffers.Builder, values: list[int]) -> int:
    b.StartVector(4, len(values), 4)
    for v in reversed(values):
        b.PrependInt32(int(v))
    return b.EndVector()


def _bytes(b: flatbuffers.Builder, data: bytes) -> int:
    # Aligned like a converter's buffers so that int32/float arrays can be read in place.
    b.StartVector(1, len(data), 16)
    b.head = b.head - len(data)
    b.Bytes[b.head:b.head + len(data)] = data
    return b.EndVector()


def _write_options(b: flatbuffers.Builder, opts: Options) -> int:
    vectors = {k: _int32s(b, v) for k, v in opts.fields.items() if isinstance(v, (list, tuple))}
    getattr(tflite, f"{opts.table}Start")(b)
    for k, v in opts.fields.items():
        getattr(tflite, f"{opts.table}Add{k}")(b, vectors.get(k, v))
    return getattr(tflite, f"{opts.table}End")(b)


def _write_quantization(b: flatbuffers.Builder, q: Quantization) -> int:
    f32 = [float(np.float32(v)) for v in q.scale]
    scale = _vector(b, tflite.QuantizationParametersStartScaleVector, f32, b.PrependFloat32)
    zps = _vector(b, tflite.QuantizationParametersStartZeroPointVector, [int(z) for z in q.zero_point],
                  b.PrependInt64)
    lo = _vector(b, tflite.QuantizationParametersStartMinVector, q.min, b.PrependFloat32) if q.min else None
    hi = _vector(b, tflite.QuantizationParametersStartMaxVector, q.max, b.PrependFloat32) if q.max else None
    tflite.QuantizationParametersStart(b)
    if lo is not None:
        tflite.QuantizationParametersAddMin(b, lo)
    if hi is not None:
        tflite.QuantizationParametersAddMax(b, hi)
    tflite.QuantizationParametersAddScale(b, scale)
    tflite.QuantizationParametersAddZeroPoint(b, zps)
    tflite.QuantizationParametersAddQuantizedDimension(b, q.quantized_dimension)
    return tflite.QuantizationParametersEnd(b)


def _write_tensor(b: flatbuffers.Builder, t: Tensor) -> int:
    name = b.CreateString(t.name)
    shape = _int32s(b, t.shape)
    sig = _int32s(b, t.shape_signature) if t.shape_signature is not None else None
    quant = _write_quantization(b, t.quantization) if t.quantization is not None else None
    tflite.TensorStart(b)
    tflite.TensorAddShape(b, shape)
    tflite.TensorAddType(b, t.type)
    tflite.TensorAddBuffer(b, t.buffer)
    tflite.TensorAddName(b, name)
    if quant is not None:
        tflite.TensorAddQuantization(b, quant)
    if t.is_variable:
        tflite.TensorAddIsVariable(b, True)
    if sig is not None:
        tflite.TensorAddShapeSignature(b, sig)
    return tflite.TensorEnd(b)


def _write_operator(b: flatbuffers.Builder, op: Operator) -> int:
    inputs, outputs = _int32s(b, op.inputs), _int32s(b, op.outputs)
    inter = _int32s(b, op.intermediates) if op.intermediates else None
    options = _write_options(b, op.options) if op.options is not None else None
    custom = _bytes(b, op.custom_options) if op.custom_options is not None else None
    tflite.OperatorStart(b)
    tflite.OperatorAddOpcodeIndex(b, op.opcode_index)
    tflite.OperatorAddInputs(b, inputs)
    tflite.OperatorAddOutputs(b, outputs)
    if inter is not None:
        tflite.OperatorAddIntermediates(b, inter)
    if options is not None:
        tflite.OperatorAddBuiltinOptionsType(b, op.options_type)
        tflite.OperatorAddBuiltinOptions(b, options)
    if custom is not None:
        tflite.OperatorAddCustomOptions(b, custom)
    return tflite.OperatorEnd(b)


def _write_subgraph(b: flatbuffers.Builder, g: Subgraph) -> int:
    tensors = [_write_tensor(b, t) for t in g.tensors]
    operators = [_write_operator(b, op) for op in g.operators]
    name = b.CreateString(g.name)
    vt = _vector(b, tflite.SubGraphStartTensorsVector, tensors, b.PrependUOffsetTRelative)
    vi, vo = _int32s(b, g.inputs), _int32s(b, g.outputs)
    vops = _vector(b, tflite.SubGraphStartOperatorsVector, operators, b.PrependUOffsetTRelative)
    tflite.SubGraphStart(b)
    tflite.SubGraphAddTensors(b, vt)
    tflite.SubGraphAddInputs(b, vi)
    tflite.SubGraphAddOutputs(b, vo)
    tflite.SubGraphAddOperators(b, vops)
    tflite.SubGraphAddName(b, name)
    return tflite.SubGraphEnd(b)


def _write_code(b: flatbuffers.Builder, c: OperatorCode) -> int:
    custom = b.CreateString(c.custom_code) if c.custom_code is not None else None
    tflite.OperatorCodeStart(b)
    tflite.OperatorCodeAddDeprecatedBuiltinCode(b, c.deprecated_builtin_code)
    tflite.OperatorCodeAddBuiltinCode(b, c.builtin_code)
    tflite.OperatorCodeAddVersion(b, c.version)
    if custom is not None:
        tflite.OperatorCodeAddCustomCode(b, custom)
    return tflite.OperatorCodeEnd(b)


def _write_buffer(b: flatbuffers.Builder, buf: Buffer) -> int:
    data = _bytes(b, buf.data) if buf.data else None
    tflite.BufferStart(b)
    if data is not None:
        tflite.BufferAddData(b, data)
    if buf.offset:
        tflite.BufferAddOffset(b, buf.offset)
    if buf.size:
        tflite.BufferAddSize(b, buf.size)
    return tflite.BufferEnd(b)


def write(model: Model) -> bytes:
    """The flatbuffer (``TFL3``) for ``model``, exactly as its fields say."""
    b = flatbuffers.Builder(1 << 16)
    buffers = [_write_buffer(b, buf) for buf in model.buffers]
    subgraphs = [_write_subgraph(b, g) for g in model.subgraphs]
    codes = [_write_code(b, c) for c in model.operator_codes]
    description = b.CreateString(model.description)
    vcodes = _vector(b, tflite.ModelStartOperatorCodesVector, codes, b.PrependUOffsetTRelative)
    vsubs = _vector(b, tflite.ModelStartSubgraphsVector, subgraphs, b.PrependUOffsetTRelative)
    vbufs = _vector(b, tflite.ModelStartBuffersVector, buffers, b.PrependUOffsetTRelative)
    tflite.ModelStart(b)
    tflite.ModelAddVersion(b, model.version)
    tflite.ModelAddOperatorCodes(b, vcodes)
    tflite.ModelAddSubgraphs(b, vsubs)
    tflite.ModelAddDescription(b, description)
    tflite.ModelAddBuffers(b, vbufs)
    b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def resolve(model: Model, path: tuple[Any, ...]) -> Any:
    """The value at ``path`` (attribute names, list indices and dict keys) in ``model``; None past its end."""
    node: Any = model
    for key in path:
        try:
            node = node[key] if isinstance(key, int) or isinstance(node, dict) else getattr(node, key)
        except (IndexError, AttributeError, KeyError, TypeError):
            return None
    return node
