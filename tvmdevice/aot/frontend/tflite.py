"""TFLite flatbuffer -> :class:`tvmdevice.aot.ir.Graph`.

The flatbuffer is read only through the generated readers of the ``tflite``
package.  Those readers trust the file: an out-of-range offset surfaces as
``IndexError``/``struct.error``, a huge vector length as a loop that never
ends.  So every vector length is checked against the file size before it is
iterated, every index against its table, every size before anything is
allocated, and any low-level exception is turned into
:class:`ModelFormatError`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tflite

from tvmdevice import ops
from tvmdevice.aot.frontend import _schema
from tvmdevice.aot.ir import ABSENT, Graph, Operator, Quantization, Tensor
from tvmdevice.errors import ModelError, ModelFormatError, UnsupportedOperatorError

__all__ = ["load_tflite", "MAX_TOTAL_TENSOR_BYTES", "MAX_RANK"]

#: Cap on the summed size of all tensors of a model (a microcontroller model
#: is kilobytes to a few megabytes; this only stops hostile files).
MAX_TOTAL_TENSOR_BYTES = 256 * 1024 * 1024
#: Highest tensor rank accepted (TFLM itself stops at 5-6).
MAX_RANK = 8
_IDENTIFIER = b"TFL3"
_SCHEMA_VERSION = 3

# Exceptions the generated readers raise on corrupt input.
_LOW_LEVEL = (IndexError, struct.error, TypeError, OverflowError, UnicodeDecodeError,
              AttributeError, ValueError, MemoryError, RecursionError, KeyError)


def load_tflite(path_or_bytes: str | Path | bytes | bytearray | memoryview, name: str | None = None) -> Graph:
    """Import a TFLite model (int8 quantized, single subgraph) as a Graph.

    Every operator is also validated structurally by the operator layer
    (:func:`tvmdevice.ops.validate`), so a returned graph has consistent
    operand counts, shapes and options.  Whether a device supports an
    operator's parameters is decided later, at placement.

    :param path_or_bytes: a file path or the flatbuffer's bytes.
    :param name: graph name; defaults to the file stem, else the subgraph name.
    :raises ModelFormatError: the file is malformed, truncated or inconsistent.
    :raises UnsupportedOperatorError: the model uses something not implemented.
    """
    if isinstance(path_or_bytes, (str, Path)):
        path = Path(path_or_bytes)
        try:
            data = path.read_bytes()
        except OSError as e:
            raise ModelFormatError(f"cannot read model file {str(path)!r}: {e}") from None
        name = name if name is not None else path.stem
    else:
        # An immutable private copy: the caller may reuse its buffer.
        data = bytes(path_or_bytes)
    try:
        graph = _Reader(data).graph(name)
    except ModelError:
        raise
    except _LOW_LEVEL as e:
        raise ModelFormatError(f"malformed TFLite flatbuffer: {type(e).__name__}: {e}") from None
    for op in graph.operators:
        ops.validate(graph, op)
    return graph


@dataclass
class _RawTensor:
    """A tensor's header as read, before its data and quantization are decoded."""

    name: str
    where: str  # "tensor 3 ('conv/weights')" for messages
    shape: tuple[int, ...]
    code: int  # TFLite TensorType
    dtype: np.dtype | None  # None: a type tvmdevice does not support
    nbytes: int
    buffer: int
    quant: Any  # tflite.QuantizationParameters or None


class _Reader:
    """One pass over a model's flatbuffer; methods raise on the first problem."""

    def __init__(self, data: bytes) -> None:
        if len(data) < 8:
            raise ModelFormatError(f"not a TFLite model: {len(data)} bytes is too short")
        if data[4:8] != _IDENTIFIER:
            raise ModelFormatError(
                f"not a TFLite model: file identifier is {data[4:8]!r}, expected {_IDENTIFIER!r}")
        self.data = data
        self.model = tflite.Model.GetRootAs(data, 0)

    # -- helpers ---------------------------------------------------------
    def _length(self, n: int, elem_size: int, what: str) -> int:
        # A vector cannot hold more elements than the file has bytes for;
        # checking first keeps a corrupt length from driving a huge loop.
        if n < 0 or n * elem_size > len(self.data):
            raise ModelFormatError(f"{what}: length {n} does not fit in a {len(self.data)}-byte file")
        return n

    def _ints(self, is_none: bool, as_numpy: Any, n: int, what: str) -> tuple[int, ...]:
        if is_none or n == 0:
            return ()
        self._length(n, 4, what)
        return tuple(int(v) for v in as_numpy())

    # -- top level -------------------------------------------------------
    def graph(self, name: str | None) -> Graph:
        m = self.model
        if m.Version() != _SCHEMA_VERSION:
            raise ModelFormatError(f"TFLite schema version {m.Version()} is not supported (expected 3)")
        n_sub = self._length(m.SubgraphsLength(), 4, "subgraphs")
        if n_sub != 1:
            raise UnsupportedOperatorError(f"model has {n_sub} subgraphs; exactly one is supported")
        self.sub = m.Subgraphs(0)
        if self.sub is None:
            raise ModelFormatError("subgraph 0 is missing")
        self.n_buffers = self._length(m.BuffersLength(), 4, "buffers")
        tensors_raw = [self._tensor_header(i) for i in range(self._length(self.sub.TensorsLength(), 4, "tensors"))]
        total = sum(t.nbytes for t in tensors_raw)
        if total > MAX_TOTAL_TENSOR_BYTES:
            raise ModelFormatError(
                f"tensors need {total} bytes in total, over the {MAX_TOTAL_TENSOR_BYTES}-byte limit")
        n_t = len(tensors_raw)
        operators = [self._operator(i, tensors_raw) for i in
                     range(self._length(self.sub.OperatorsLength(), 4, "operators"))]
        tensors = [self._tensor(i, raw, operators) for i, raw in enumerate(tensors_raw)]
        inputs = self._ints(self.sub.InputsIsNone(), self.sub.InputsAsNumpy, self.sub.InputsLength(), "inputs")
        outputs = self._ints(self.sub.OutputsIsNone(), self.sub.OutputsAsNumpy, self.sub.OutputsLength(), "outputs")
        for kind, idx in [("input", i) for i in inputs] + [("output", o) for o in outputs]:
            if not 0 <= idx < n_t:
                raise ModelFormatError(f"graph {kind} tensor index {idx} is out of range [0, {n_t})")
        if not outputs:
            raise ModelFormatError("the model declares no outputs")
        if name is None:
            sub_name = self.sub.Name()
            name = sub_name.decode("utf-8", "replace") if sub_name else "model"
        graph = Graph(name=name, tensors=tensors, operators=operators, inputs=inputs, outputs=outputs)
        _check_dataflow(graph)
        return graph

    # -- tensors ---------------------------------------------------------
    def _tensor_header(self, i: int) -> _RawTensor:
        t = self.sub.Tensors(i)
        if t is None:
            raise ModelFormatError(f"tensor {i} is missing")
        raw_name = t.Name()
        name = raw_name.decode("utf-8", "replace") if raw_name else f"tensor_{i}"
        where = f"tensor {i} ({name!r})"
        shape = self._ints(t.ShapeIsNone(), t.ShapeAsNumpy, t.ShapeLength(), f"{where} shape")
        if len(shape) > MAX_RANK:
            raise ModelFormatError(f"{where} has rank {len(shape)}, more than {MAX_RANK}")
        if any(d < 0 for d in shape):
            raise ModelFormatError(f"{where} has a negative dimension in shape {list(shape)}")
        if t.Sparsity() is not None:
            raise UnsupportedOperatorError(f"{where} is sparse; sparse tensors are not supported")
        code = t.Type()
        dtype = _schema.NUMPY_TYPES.get(code)
        itemsize = dtype.itemsize if dtype is not None else 1
        # Python ints: no overflow however large the dimensions are.
        nbytes = itemsize
        for d in shape:
            nbytes *= d
        return _RawTensor(name, where, shape, code, dtype, nbytes, t.Buffer(), t.Quantization())

    def _tensor(self, i: int, raw: _RawTensor, operators: list[Operator]) -> Tensor:
        where = raw.where
        if raw.dtype is None:
            users = [f"operator {op.index} ({op.type})" for op in operators if i in op.inputs + op.outputs]
            used = f", used by {users[0]}" if users else ""
            type_name = _schema.TYPE_NAMES.get(raw.code, str(raw.code))
            raise UnsupportedOperatorError(f"{where} has type {type_name}, which is not supported{used}")
        quant = self._quantization(raw)
        data = self._constant(raw)
        return Tensor(index=i, name=raw.name, shape=raw.shape, dtype=raw.dtype, quant=quant, data=data)

    def _quantization(self, raw: _RawTensor) -> Quantization | None:
        q = raw.quant
        where = raw.where
        if q is None or q.ScaleIsNone() or q.ScaleLength() == 0:
            return None
        n = self._length(q.ScaleLength(), 4, f"{where} scales")
        scale = np.array(q.ScaleAsNumpy(), dtype=np.float32)
        if q.ZeroPointIsNone() or q.ZeroPointLength() != n:
            raise ModelFormatError(f"{where} has {n} scales but {q.ZeroPointLength()} zero points")
        self._length(n, 8, f"{where} zero points")
        zero_point = np.array(q.ZeroPointAsNumpy(), dtype=np.int64)
        axis = int(q.QuantizedDimension())
        if not np.all(np.isfinite(scale)) or np.any(scale <= 0):
            raise ModelFormatError(f"{where} has a non-positive or non-finite scale")
        if n > 1:
            shape = raw.shape
            if not 0 <= axis < len(shape) or shape[axis] != n:
                raise ModelFormatError(
                    f"{where} has {n} per-channel scales on axis {axis} but shape {list(shape)}")
        scale.flags.writeable = False
        zero_point.flags.writeable = False
        return Quantization(scale=scale, zero_point=zero_point, axis=axis)

    def _constant(self, raw: _RawTensor) -> np.ndarray | None:
        b = raw.buffer
        where = raw.where
        if not 0 <= b < self.n_buffers:
            raise ModelFormatError(f"{where} refers to buffer {b}, out of range [0, {self.n_buffers})")
        buf = self.model.Buffers(b)
        if buf is None:
            raise ModelFormatError(f"buffer {b} of {where} is missing")
        if buf.Offset() > 1:
            # Models over 2 GB keep constant data after the flatbuffer, at an
            # absolute file offset (0 and 1 mean "inline").
            start, size = buf.Offset(), buf.Size()
            if start + size > len(self.data):
                raise ModelFormatError(f"{where}: external buffer [{start}, {start + size}) is past the end")
            payload = self.data[start:start + size]
        else:
            n = 0 if buf.DataIsNone() else self._length(buf.DataLength(), 1, f"buffer {b}")
            if n == 0:
                return None
            payload = buf.DataAsNumpy().tobytes()
        if len(payload) == 0:
            return None
        if len(payload) != raw.nbytes:
            raise ModelFormatError(
                f"{where}: buffer {b} holds {len(payload)} bytes but shape {list(raw.shape)} of "
                f"{raw.dtype} needs {raw.nbytes}")
        # A copy: aligned, and independent of the file's bytes.
        array = np.frombuffer(payload, dtype=raw.dtype).reshape(raw.shape).copy()
        array.flags.writeable = False
        return array

    # -- operators -------------------------------------------------------
    def _operator(self, i: int, tensors_raw: list[_RawTensor]) -> Operator:
        op = self.sub.Operators(i)
        if op is None:
            raise ModelFormatError(f"operator {i} is missing")
        n_codes = self._length(self.model.OperatorCodesLength(), 4, "operator codes")
        idx = op.OpcodeIndex()
        if not 0 <= idx < n_codes:
            raise ModelFormatError(f"operator {i} uses operator code {idx}, out of range [0, {n_codes})")
        oc = self.model.OperatorCodes(idx)
        code = max(oc.DeprecatedBuiltinCode(), oc.BuiltinCode())
        if code == _schema.CUSTOM_CODE:
            custom = oc.CustomCode()
            label = custom.decode("utf-8", "replace") if custom else "?"
            raise UnsupportedOperatorError(f"operator {i} is the custom operator {label!r}; "
                                           "custom operators are not supported")
        op_type = _schema.OPCODE_NAMES.get(code, f"builtin code {code}")
        where = f"operator {i} ({op_type})"
        if op_type not in _schema.SUPPORTED_OPS:
            raise UnsupportedOperatorError(
                f"{where} is not supported; supported operators: {', '.join(sorted(_schema.SUPPORTED_OPS))}")
        n_t = len(tensors_raw)
        ins = self._ints(op.InputsIsNone(), op.InputsAsNumpy, op.InputsLength(), f"{where} inputs")
        outs = self._ints(op.OutputsIsNone(), op.OutputsAsNumpy, op.OutputsLength(), f"{where} outputs")
        for k, t in enumerate(ins):
            if t != ABSENT and not 0 <= t < n_t:
                raise ModelFormatError(f"{where} input {k} is tensor {t}, out of range [0, {n_t})")
        for k, t in enumerate(outs):
            if not 0 <= t < n_t:
                raise ModelFormatError(f"{where} output {k} is tensor {t}, out of range [0, {n_t})")
        _check_signature(where, op_type, ins, outs, tensors_raw)
        options = _schema.decode_options(op_type, op, where)
        return Operator(index=i, type=op_type, inputs=ins, outputs=outs, options=options)


def _check_signature(where: str, op_type: str, ins: tuple[int, ...], outs: tuple[int, ...],
                     tensors_raw: list[_RawTensor]) -> None:
    """Arity and data type of each operand, before any kernel looks at it
    (constness is checked by :func:`_check_dataflow` once buffers are read)."""
    sig = _schema.SIGNATURES[op_type]
    roles = sig.roles(len(ins))
    required = sig.required_inputs
    if not required <= len(ins) <= len(roles) or len(outs) != len(sig.outputs):
        raise ModelFormatError(f"{where} has {len(ins)} inputs and {len(outs)} outputs; expected "
                               f"{required}..{len(roles) if not sig.variadic else 'n'} inputs and "
                               f"{len(sig.outputs)} output(s)")
    for kind, idxs, rs in (("input", ins, roles), ("output", outs, sig.outputs)):
        for k, (t, role) in enumerate(zip(idxs, rs)):
            if t == ABSENT:
                if not role.optional:
                    raise ModelFormatError(f"{where} {kind} {k} ({role.name}) is required but absent")
                continue
            raw = tensors_raw[t]
            dtype = raw.dtype
            if dtype not in role.dtypes:
                type_name = _schema.TYPE_NAMES.get(raw.code, str(raw.code))
                allowed = ", ".join(sorted(str(d) for d in role.dtypes))
                raise UnsupportedOperatorError(
                    f"{where} {kind} {k} ({role.name}, {raw.where}) has type {type_name}; "
                    f"supported: {allowed}")


def _check_dataflow(graph: Graph) -> None:
    """Every operator input exists when the operator runs; every tensor is written once."""
    ready = set(graph.inputs) | {t.index for t in graph.tensors if t.is_constant}
    for t in graph.inputs:
        if graph.tensors[t].is_constant:
            raise ModelFormatError(f"graph input tensor {t} is a constant")
    for op in graph.operators:
        where = f"operator {op.index} ({op.type})"
        sig = _schema.SIGNATURES[op.type]
        roles = sig.roles(len(op.inputs))
        for k, (t, role) in enumerate(zip(op.inputs, roles)):
            if t == ABSENT:
                continue
            if role.constant and not graph.tensors[t].is_constant:
                raise UnsupportedOperatorError(f"{where} input {k} ({role.name}) must be a constant tensor")
            if t not in ready:
                raise ModelFormatError(f"{where} reads tensor {t} before any operator writes it")
        for t in op.outputs:
            if t in ready:
                raise ModelFormatError(f"{where} writes tensor {t}, which is already a constant, "
                                       "a graph input or another operator's output")
            ready.add(t)
    for t in graph.outputs:
        if t not in ready:
            raise ModelFormatError(f"graph output tensor {t} is never written")
