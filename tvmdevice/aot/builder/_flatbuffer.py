"""Serialise a model description to a TFLite flatbuffer ("TFL3", schema v3).

Uses the builder functions the ``tflite`` package generates from the schema
(``tflite.TensorStart``, ``tflite.Conv2DOptionsAddStrideW``, ...) on a
``flatbuffers.Builder``; nothing here knows the binary layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import flatbuffers
import numpy as np
import tflite

__all__ = ["TensorSpec", "OperatorSpec", "ModelSpec", "serialize"]

#: Constant data is aligned so int32/int64/float32 arrays can be read in place.
DATA_ALIGNMENT = 16


@dataclass
class TensorSpec:
    """One tensor: shape, TFLite type code, buffer index and quantization."""

    name: str
    shape: tuple[int, ...]
    type: int
    buffer: int = 0
    scales: Sequence[float] | None = None
    zero_points: Sequence[int] | None = None
    quantized_dimension: int = 0
    #: TFLite's is_variable: operator state (LSTM, SVDF) kept across runs.
    is_variable: bool = False


@dataclass
class OperatorSpec:
    """One operator: builtin code, operand indices and options.

    ``options`` is ``(table_name, {field: value})`` with the schema's table
    name (``"Conv2DOptions"``) and CamelCase field names (``"StrideW"``); a
    list value is written as an int32 vector.

    ``deprecated_code`` overrides what the operator code's int8
    ``deprecated_builtin_code`` field holds (normally ``min(code, 127)``), to
    write a file whose two code fields disagree.

    ``intermediates`` are the operator's ``intermediates`` tensor indices (the
    converter's LSTM writes them; none when empty).
    """

    code: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options: tuple[str, dict[str, Any]] | None = None
    deprecated_code: int | None = None
    intermediates: tuple[int, ...] = ()


@dataclass
class ModelSpec:
    """A whole single-subgraph model; ``buffers[0]`` must be empty (schema rule)."""

    tensors: list[TensorSpec] = field(default_factory=list)
    operators: list[OperatorSpec] = field(default_factory=list)
    buffers: list[bytes] = field(default_factory=lambda: [b""])
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    name: str = "main"
    description: str = "tvmdevice model builder"
    #: Write operator codes the way pre-2.3 converters did: only the int8
    #: ``deprecated_builtin_code``, ``builtin_code`` left at 0.
    legacy_opcodes: bool = False
    #: Schema version written to the file (3 for every current TFLite model).
    version: int = 3
    #: Extra copies of the subgraph, for models TFLite Micro would call with
    #: control flow (tvmdevice refuses them; tests use this).
    extra_subgraphs: int = 0
    #: Store constant data after the flatbuffer (``Buffer.offset``/``size``),
    #: the layout TFLite uses for models over 2 GB.
    external_buffers: bool = False
    #: Raw ``(offset, size)`` fields written into buffer ``i`` *besides* its
    #: inline data (a file that gives both; readers must prefer the data).
    buffer_offset_fields: dict[int, tuple[int, int]] = field(default_factory=dict)


def _vector(b: flatbuffers.Builder, start: Any, values: Sequence[Any], prepend: Any) -> int:
    start(b, len(values))
    for v in reversed(values):
        prepend(v)
    return b.EndVector()


def _int32_vector(b: flatbuffers.Builder, start: Any, values: Sequence[int]) -> int:
    return _vector(b, start, [int(v) for v in values], b.PrependInt32)


def _offset_vector(b: flatbuffers.Builder, start: Any, offsets: Sequence[int]) -> int:
    return _vector(b, start, offsets, b.PrependUOffsetTRelative)


def _data_vector(b: flatbuffers.Builder, data: bytes) -> int:
    # Like CreateByteVector, but aligned for the element type read from it.
    b.StartVector(1, len(data), DATA_ALIGNMENT)
    b.head = b.head - len(data)
    b.Bytes[b.head:b.head + len(data)] = data
    return b.EndVector()


def _buffer(b: flatbuffers.Builder, data: bytes, external: int | None,
            raw_fields: tuple[int, int] | None) -> int:
    vec = _data_vector(b, data) if data and external is None else None
    tflite.BufferStart(b)
    if vec is not None:
        tflite.BufferAddData(b, vec)
    if external is not None and data:
        tflite.BufferAddOffset(b, external)
        tflite.BufferAddSize(b, len(data))
    elif raw_fields is not None:
        tflite.BufferAddOffset(b, raw_fields[0])
        tflite.BufferAddSize(b, raw_fields[1])
    return tflite.BufferEnd(b)


def _quantization(b: flatbuffers.Builder, t: TensorSpec) -> int | None:
    if t.scales is None:
        return None
    scale = _vector(b, tflite.QuantizationParametersStartScaleVector, [float(np.float32(s)) for s in t.scales],
                    b.PrependFloat32)
    zps = t.zero_points if t.zero_points is not None else [0] * len(t.scales)
    zero_point = _vector(b, tflite.QuantizationParametersStartZeroPointVector, [int(z) for z in zps],
                         b.PrependInt64)
    tflite.QuantizationParametersStart(b)
    tflite.QuantizationParametersAddScale(b, scale)
    tflite.QuantizationParametersAddZeroPoint(b, zero_point)
    tflite.QuantizationParametersAddQuantizedDimension(b, t.quantized_dimension)
    return tflite.QuantizationParametersEnd(b)


def _tensor(b: flatbuffers.Builder, t: TensorSpec) -> int:
    name = b.CreateString(t.name)
    shape = _int32_vector(b, tflite.TensorStartShapeVector, t.shape)
    quant = _quantization(b, t)
    tflite.TensorStart(b)
    tflite.TensorAddShape(b, shape)
    tflite.TensorAddType(b, t.type)
    tflite.TensorAddBuffer(b, t.buffer)
    tflite.TensorAddName(b, name)
    if quant is not None:
        tflite.TensorAddQuantization(b, quant)
    if t.is_variable:
        tflite.TensorAddIsVariable(b, True)
    return tflite.TensorEnd(b)


def _options(b: flatbuffers.Builder, table: str, fields: dict[str, Any]) -> int:
    vectors = {k: _int32_vector(b, getattr(tflite, f"{table}Start{k}Vector"), v)
               for k, v in fields.items() if isinstance(v, (list, tuple))}
    getattr(tflite, f"{table}Start")(b)
    for k, v in fields.items():
        getattr(tflite, f"{table}Add{k}")(b, vectors.get(k, v))
    return getattr(tflite, f"{table}End")(b)


def _operator(b: flatbuffers.Builder, op: OperatorSpec, opcode_index: int) -> int:
    inputs = _int32_vector(b, tflite.OperatorStartInputsVector, op.inputs)
    outputs = _int32_vector(b, tflite.OperatorStartOutputsVector, op.outputs)
    intermediates = _int32_vector(b, tflite.OperatorStartIntermediatesVector, op.intermediates) \
        if op.intermediates else None
    table, options = "", None
    if op.options is not None:
        table = op.options[0]
        options = _options(b, table, op.options[1])
    tflite.OperatorStart(b)
    tflite.OperatorAddOpcodeIndex(b, opcode_index)
    tflite.OperatorAddInputs(b, inputs)
    tflite.OperatorAddOutputs(b, outputs)
    if intermediates is not None:
        tflite.OperatorAddIntermediates(b, intermediates)
    if options is not None:
        tflite.OperatorAddBuiltinOptionsType(b, getattr(tflite.BuiltinOptions, table))
        tflite.OperatorAddBuiltinOptions(b, options)
    return tflite.OperatorEnd(b)


def _operator_code(b: flatbuffers.Builder, code: int, deprecated: int | None, legacy: bool) -> int:
    tflite.OperatorCodeStart(b)
    # Codes above 127 live only in builtin_code; the deprecated int8 field
    # then holds PLACEHOLDER_FOR_GREATER_OP_CODES (127).
    tflite.OperatorCodeAddDeprecatedBuiltinCode(b, min(code, 127) if deprecated is None else deprecated)
    if not legacy:
        tflite.OperatorCodeAddBuiltinCode(b, code)
    tflite.OperatorCodeAddVersion(b, 1)
    return tflite.OperatorCodeEnd(b)


def _align(n: int) -> int:
    return -(-n // DATA_ALIGNMENT) * DATA_ALIGNMENT


def serialize(spec: ModelSpec) -> bytes:
    """The TFLite flatbuffer for ``spec`` (followed by the constant data when
    ``spec.external_buffers`` is set)."""
    if not spec.external_buffers:
        return _serialize(spec, None)
    # Offsets are absolute file positions, so they depend on the flatbuffer's
    # size: build once with placeholders of the same width, then for real.
    probe = _serialize(spec, [1 << 40] * len(spec.buffers))
    offsets, position = [], _align(len(probe))
    for data in spec.buffers:
        offsets.append(position)
        position = _align(position + len(data))
    flat = _serialize(spec, offsets)
    if len(flat) != len(probe):
        raise RuntimeError("flatbuffer size changed between passes")  # cannot happen: fixed-width fields
    out = bytearray(flat)
    for offset, data in zip(offsets, spec.buffers):
        out.extend(bytes(offset - len(out)))
        out.extend(data)
    return bytes(out)


def _serialize(spec: ModelSpec, external: list[int] | None) -> bytes:
    b = flatbuffers.Builder(1024)
    keys = [(op.code, op.deprecated_code) for op in spec.operators]
    codes = sorted(set(keys), key=keys.index)
    code_index = {key: i for i, key in enumerate(codes)}
    buffers = [_buffer(b, data, None if external is None else external[i], spec.buffer_offset_fields.get(i))
               for i, data in enumerate(spec.buffers)]
    tensors = [_tensor(b, t) for t in spec.tensors]
    operators = [_operator(b, op, code_index[key]) for op, key in zip(spec.operators, keys)]
    sub_name = b.CreateString(spec.name)
    sub_tensors = _offset_vector(b, tflite.SubGraphStartTensorsVector, tensors)
    sub_inputs = _int32_vector(b, tflite.SubGraphStartInputsVector, spec.inputs)
    sub_outputs = _int32_vector(b, tflite.SubGraphStartOutputsVector, spec.outputs)
    sub_ops = _offset_vector(b, tflite.SubGraphStartOperatorsVector, operators)
    tflite.SubGraphStart(b)
    tflite.SubGraphAddTensors(b, sub_tensors)
    tflite.SubGraphAddInputs(b, sub_inputs)
    tflite.SubGraphAddOutputs(b, sub_outputs)
    tflite.SubGraphAddOperators(b, sub_ops)
    tflite.SubGraphAddName(b, sub_name)
    subgraph = tflite.SubGraphEnd(b)
    op_codes = [_operator_code(b, code, deprecated, spec.legacy_opcodes) for code, deprecated in codes]
    description = b.CreateString(spec.description)
    model_codes = _offset_vector(b, tflite.ModelStartOperatorCodesVector, op_codes)
    model_subgraphs = _offset_vector(b, tflite.ModelStartSubgraphsVector, [subgraph] * (1 + spec.extra_subgraphs))
    model_buffers = _offset_vector(b, tflite.ModelStartBuffersVector, buffers)
    tflite.ModelStart(b)
    tflite.ModelAddVersion(b, spec.version)
    tflite.ModelAddOperatorCodes(b, model_codes)
    tflite.ModelAddSubgraphs(b, model_subgraphs)
    tflite.ModelAddDescription(b, description)
    tflite.ModelAddBuffers(b, model_buffers)
    b.Finish(tflite.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())
