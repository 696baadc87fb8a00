"""TFLite flatbuffer -> :class:`tvmdevice.ir.Graph`.

The flatbuffer is read only through the generated readers of the ``tflite``
package, each table through a bounds-checked view (:mod:`._bounds`): an
offset, vtable, vector or string outside the file is a ModelFormatError
naming the table, never a stray IndexError/struct.error/TypeError.  On top of
that every vector length is checked against the file size before it is
iterated, every index against its table, every enum against its range, and
the tensors' total size against a limit before anything is allocated.

Where the file is ambiguous the reader does what TensorFlow Lite Micro does
(the runtime tvmdevice is bit-exact with): the operator code is the larger of
its two code fields, and a buffer's inline data wins over an offset.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import tflite

from tvmdevice import ops
from tvmdevice.aot.frontend import _schema
from tvmdevice.aot.frontend._bounds import checked
from tvmdevice.errors import InvalidArgumentError, ModelFormatError, UnsupportedOperatorError
from tvmdevice.ir import ABSENT, Graph, Operator, Quantization, Tensor

__all__ = ["load_tflite", "tensor_bytes_limit", "MAX_TOTAL_TENSOR_BYTES", "MAX_RANK", "MAX_TENSOR_BYTES_ENV"]

#: Default cap on the summed size of all tensors of a model, constants and
#: activations.  Microcontroller models need kilobytes to a few megabytes
#: (MLPerf Tiny's all stay under 1 MB).  A shape costs nothing in the file: a
#: 424-byte ADD model declaring two [1, 10000000] activations made the host
#: ``c`` target allocate 1.1 GB (its numpy kernels compute in int64), one
#: declaring [1, 120000000] 6.7 GB before failing.  Raise the cap with
#: ``max_tensor_bytes=`` (load, compile) or the environment variable.
MAX_TOTAL_TENSOR_BYTES = 16 * 1024 * 1024
#: Environment variable that overrides :data:`MAX_TOTAL_TENSOR_BYTES`.
MAX_TENSOR_BYTES_ENV = "TVMDEVICE_MAX_TENSOR_BYTES"
#: Highest tensor rank accepted (TFLM itself stops at 5-6).
MAX_RANK = 8
_IDENTIFIER = b"TFL3"
_SCHEMA_VERSION = 3


def tensor_bytes_limit(limit: int | None = None) -> int:
    """The tensor size limit in force: ``limit`` if given, else ``$TVMDEVICE_MAX_TENSOR_BYTES``,
    else :data:`MAX_TOTAL_TENSOR_BYTES`.

    :raises InvalidArgumentError: a limit (or the variable) that is not a positive integer.
    """
    source = "max_tensor_bytes"
    if limit is None:
        text = os.environ.get(MAX_TENSOR_BYTES_ENV, "").strip()
        if not text:
            return MAX_TOTAL_TENSOR_BYTES
        source = f"${MAX_TENSOR_BYTES_ENV}"
        try:
            limit = int(text, 0)
        except ValueError:
            raise InvalidArgumentError(f"{source}={text!r} is not an integer number of bytes") from None
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit <= 0:
        raise InvalidArgumentError(f"{source} must be a positive integer number of bytes, not {limit!r}")
    return int(limit)


def load_tflite(path_or_bytes: str | Path | bytes | bytearray | memoryview, name: str | None = None, *,
                max_tensor_bytes: int | None = None) -> Graph:
    """Import a TFLite model (int8 quantized, single subgraph) as a Graph.

    Every operator is also validated structurally by the operator layer
    (:func:`tvmdevice.ops.validate`), so a returned graph has consistent
    operand counts, shapes and options.  Whether a device supports an
    operator's parameters is decided later, at placement.

    :param path_or_bytes: a file path or the flatbuffer's bytes.
    :param name: graph name; defaults to the file stem, else the subgraph name.
    :param max_tensor_bytes: the most bytes all tensors together may declare
        (default ``$TVMDEVICE_MAX_TENSOR_BYTES``, else :data:`MAX_TOTAL_TENSOR_BYTES`);
        checked before anything is allocated for them.
    :raises ModelFormatError: the file is malformed, truncated, inconsistent or over the size limit.
    :raises UnsupportedOperatorError: the model uses something not implemented.
    :raises InvalidArgumentError: ``max_tensor_bytes`` (or the variable) is not a positive integer.
    """
    limit = tensor_bytes_limit(max_tensor_bytes)
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
    graph = _Reader(data, limit).graph(name)
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
    variable: bool = False  # TFLite's is_variable: operator state kept across runs


class _Reader:
    """One pass over a model's flatbuffer; methods raise on the first problem."""

    def __init__(self, data: bytes, limit: int) -> None:
        if len(data) < 8:
            raise ModelFormatError(f"not a TFLite model: {len(data)} bytes is too short")
        if data[4:8] != _IDENTIFIER:
            raise ModelFormatError(
                f"not a TFLite model: file identifier is {data[4:8]!r}, expected {_IDENTIFIER!r}")
        self.data = data
        self.limit = limit
        self.model = checked(tflite.Model.GetRootAs(data, 0), "the model table")

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
        self.sub = checked(m.Subgraphs(0), "subgraph 0")
        self.n_buffers = self._length(m.BuffersLength(), 4, "buffers")
        tensors_raw = [self._tensor_header(i) for i in range(self._length(self.sub.TensorsLength(), 4, "tensors"))]
        self._check_total_size(tensors_raw)
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

    def _check_total_size(self, tensors_raw: list[_RawTensor]) -> None:
        """The memory a model may ask for, bounded before anything is allocated for it.

        Declared shapes cost nothing in the file (an activation has no data),
        so a few bytes can ask for gigabytes: the summed size of all tensors
        is held to the user's limit (:func:`tensor_bytes_limit`).
        """
        total = sum(t.nbytes for t in tensors_raw)
        if total > self.limit:
            big = max(tensors_raw, key=lambda t: t.nbytes)
            raise ModelFormatError(
                f"tensors need {total} bytes in total, over the {self.limit}-byte limit (the largest is "
                f"{big.where}, shape {list(big.shape)}, {big.nbytes} bytes); if the model is meant to be this "
                f"large, raise the limit with max_tensor_bytes= or ${MAX_TENSOR_BYTES_ENV}")

    # -- tensors ---------------------------------------------------------
    def _tensor_header(self, i: int) -> _RawTensor:
        t = checked(self.sub.Tensors(i), f"tensor {i}")
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
        quant = t.Quantization()
        quant = None if quant is None else checked(quant, f"{where} quantization")
        return _RawTensor(name, where, shape, code, dtype, nbytes, t.Buffer(), quant, bool(t.IsVariable()))

    def _tensor(self, i: int, raw: _RawTensor, operators: list[Operator]) -> Tensor:
        where = raw.where
        if raw.dtype is None:
            users = [f"operator {op.index} ({op.type})" for op in operators if i in op.inputs + op.outputs]
            used = f", used by {users[0]}" if users else ""
            type_name = _schema.TYPE_NAMES.get(raw.code, str(raw.code))
            raise UnsupportedOperatorError(f"{where} has type {type_name}, which is not supported{used}")
        quant = self._quantization(raw)
        data = self._constant(raw)
        if raw.variable and data is not None:
            raise ModelFormatError(f"{where} is a variable tensor with constant data; TFLM keeps operator state "
                                   "in the arena and overwrites it, so a variable tensor must have an empty buffer")
        return Tensor(index=i, name=raw.name, shape=raw.shape, dtype=raw.dtype, quant=quant, data=data,
                      is_variable=raw.variable)

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
            if len(shape) == 1 and shape[0] == n:
                # TFLM's rule: the quantized dimension is never checked on a 1-D
                # tensor (its allocator copies it as it is and no kernel reads it
                # for a bias), so converters leave the filter's axis on per-channel
                # biases (TFLM's own person detection model: 8 scales on axis 3 of
                # a [8] bias).  One scale per element can only mean axis 0.
                axis = 0
            if not 0 <= axis < len(shape) or shape[axis] != n:
                raise ModelFormatError(
                    f"{where} has {n} per-channel scales on axis {axis} but shape {list(shape)}")
        scale.flags.writeable = False
        zero_point.flags.writeable = False
        return Quantization(scale=scale, zero_point=zero_point, axis=axis)

    def _payload(self, b: int, where: str) -> bytes:
        """The constant bytes of buffer ``b`` (empty: the tensor is not a constant).

        Inline ``data`` wins whenever the buffer has any: TFLM's
        GetFlatbufferTensorBuffer (micro_allocator.cc) reads only ``data``
        and LiteRT's InterpreterBuilder::ParseTensors prefers it over
        ``offset``.  Without inline data, ``offset > 1`` with ``size`` is the
        layout of models over 2 GB (data after the flatbuffer, at an absolute
        file position; 0 and 1 mean "inline"), which LiteRT reads and TFLM
        ignores; it is read as LiteRT does.
        """
        buf = checked(self.model.Buffers(b), f"buffer {b}")
        if not buf.DataIsNone():
            n = self._length(buf.DataLength(), 1, f"buffer {b}")
            if n:
                return bytes(buf.DataAsNumpy().tobytes())
        start, size = buf.Offset(), buf.Size()
        if start <= 1 or size == 0:
            return b""
        if start + size > len(self.data):
            raise ModelFormatError(f"{where}: external buffer [{start}, {start + size}) is past the end")
        return self.data[start:start + size]

    def _constant(self, raw: _RawTensor) -> np.ndarray | None:
        b = raw.buffer
        where = raw.where
        if not 0 <= b < self.n_buffers:
            raise ModelFormatError(f"{where} refers to buffer {b}, out of range [0, {self.n_buffers})")
        payload = self._payload(b, where)
        if len(payload) == 0:
            if raw.nbytes == 0:
                # TFLM's rule: a tensor of zero elements has nothing to read, so an
                # empty buffer (its own, or the schema's empty buffer 0) is all its
                # constant data can be: a RESHAPE to a scalar has a [0] shape operand.
                array = np.zeros(raw.shape, dtype=raw.dtype)
                array.flags.writeable = False
                return array
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
        op = checked(self.sub.Operators(i), f"operator {i}")
        n_codes = self._length(self.model.OperatorCodesLength(), 4, "operator codes")
        idx = op.OpcodeIndex()
        if not 0 <= idx < n_codes:
            raise ModelFormatError(f"operator {i} uses operator code {idx}, out of range [0, {n_codes})")
        oc = checked(self.model.OperatorCodes(idx), f"operator code {idx}")
        code = _schema.builtin_code(oc)
        if code == _schema.CUSTOM_CODE:
            custom = oc.CustomCode()
            label = custom.decode("utf-8", "replace") if custom else "?"
            raise UnsupportedOperatorError(f"operator {i} is the custom operator {label!r}; "
                                           "custom operators are not supported")
        op_type = _schema.OPCODE_NAMES.get(code, f"builtin code {code}")
        where = f"operator {i} ({op_type})"
        if op_type in _schema.NOT_IN_TFLM:
            raise UnsupportedOperatorError(f"{where} is not supported: {_schema.NOT_IN_TFLM[op_type]}")
        if op_type not in _schema.SUPPORTED_OPS:
            raise UnsupportedOperatorError(
                f"{where} is not supported; supported operators: {', '.join(sorted(_schema.SUPPORTED_OPS))}")
        if not op.CustomOptionsIsNone():
            # TFLM's allocator refuses a builtin operator that carries custom options at all.
            raise ModelFormatError(f"{where} is a builtin operator with custom options "
                                   "(tflite-micro refuses such a file)")
        n_t = len(tensors_raw)
        ins = self._ints(op.InputsIsNone(), op.InputsAsNumpy, op.InputsLength(), f"{where} inputs")
        outs = self._ints(op.OutputsIsNone(), op.OutputsAsNumpy, op.OutputsLength(), f"{where} outputs")
        for k, t in enumerate(ins):
            if t != ABSENT and not 0 <= t < n_t:
                raise ModelFormatError(f"{where} input {k} is tensor {t}, out of range [0, {n_t})")
        for k, t in enumerate(outs):
            if not 0 <= t < n_t:
                raise ModelFormatError(f"{where} output {k} is tensor {t}, out of range [0, {n_t})")
        self._intermediates(op, where, tensors_raw)
        _check_signature(where, op_type, ins, outs, tensors_raw)
        options = _schema.decode_options(op_type, op, where)
        return Operator(index=i, type=op_type, inputs=ins, outputs=outs, options=options)


    def _intermediates(self, op: Any, where: str, tensors_raw: list[_RawTensor]) -> None:
        """An operator's ``intermediates``: tensors no kernel reads or writes (the converter's LSTM lists
        them).  tflite-micro's allocator refuses any that holds data (``ValidateSubgraph``: "Does not
        support intermediate tensor with non-zero size"), and reads one past the tensor table unchecked."""
        n_t = len(tensors_raw)
        for k, t in enumerate(self._ints(op.IntermediatesIsNone(), op.IntermediatesAsNumpy, op.IntermediatesLength(),
                                         f"{where} intermediates")):
            if not 0 <= t < n_t:
                raise ModelFormatError(f"{where} intermediate {k} is tensor {t}, out of range [0, {n_t})")
            raw = tensors_raw[t]
            if raw.nbytes != 0:
                raise ModelFormatError(
                    f"{where} intermediate {k} ({raw.where}) has shape {list(raw.shape)}, {raw.nbytes} bytes: "
                    "tflite-micro supports only zero-sized intermediate tensors")


#: What to do about a float operator: the model must be int8-quantized.
FLOAT_MODEL_FIX = (". tvmdevice runs int8-quantized models: convert the model with full-integer "
                   "quantization (TFLite converter: optimizations=[tf.lite.Optimize.DEFAULT], a "
                   "representative_dataset, inference_input_type=inference_output_type=tf.int8)")


def _check_signature(where: str, op_type: str, ins: tuple[int, ...], outs: tuple[int, ...],
                     tensors_raw: list[_RawTensor]) -> None:
    """Arity and data type of each operand, before any kernel looks at it
    (constness is checked by :func:`_check_dataflow` once buffers are read)."""
    sig = _schema.SIGNATURES[op_type]
    roles = sig.roles(len(ins))
    required = sig.required_inputs
    out_roles = sig.output_roles(len(outs))
    if not required <= len(ins) <= len(roles) or not outs or len(outs) != len(out_roles):
        raise ModelFormatError(f"{where} has {len(ins)} inputs and {len(outs)} outputs; expected "
                               f"{required}..{len(roles) if not sig.variadic else 'n'} inputs and "
                               f"{len(sig.outputs) if not sig.variadic_outputs else '1..n'} output(s)")
    for kind, idxs, rs in (("input", ins, roles), ("output", outs, out_roles)):
        for k, (t, role) in enumerate(zip(idxs, rs)):
            if t == ABSENT:
                if not role.optional:
                    raise ModelFormatError(f"{where} {kind} {k} ({role.name}) is required but absent")
                if not role.may_be_absent:
                    raise ModelFormatError(
                        f"{where} {kind} {k} ({role.name}) is given as absent (-1); {op_type} reads it whenever "
                        f"it has {k + 1} inputs: leave it off the end instead (tflite-micro crashes on such a file, "
                        "LiteRT refuses it)")
                continue
            raw = tensors_raw[t]
            dtype = raw.dtype
            if dtype not in role.dtypes:
                type_name = _schema.TYPE_NAMES.get(raw.code, str(raw.code))
                allowed = ", ".join(sorted(str(d) for d in role.dtypes))
                fix = FLOAT_MODEL_FIX if dtype is not None and dtype.kind == "f" else ""
                raise UnsupportedOperatorError(
                    f"{where} {kind} {k} ({role.name}, {raw.where}) has type {type_name}; "
                    f"supported: {allowed}{fix}")


def _check_dataflow(graph: Graph) -> None:
    """Every operator input exists when the operator runs; every tensor is written once.

    Variable tensors (operator state) exist from the start, as TFLM allocates
    and resets them before the first run; operators update them in place, so
    no operator may also list one as an output.
    """
    ready = set(graph.inputs) | {t.index for t in graph.tensors if t.is_constant or t.is_variable}
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
