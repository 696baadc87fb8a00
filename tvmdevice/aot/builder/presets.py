"""Ready-made models: one operator at a time for tests, and a small demo CNN."""

from __future__ import annotations

from typing import Any, Sequence

from tvmdevice.aot.builder.model import ModelBuilder, TensorRef

__all__ = ["single_op_model", "demo_model", "SINGLE_OP_DEFAULT_SHAPES"]

#: Input shape used by :func:`single_op_model` when none is given.
SINGLE_OP_DEFAULT_SHAPES: dict[str, tuple[int, ...]] = {
    "CONV_2D": (1, 8, 8, 3), "DEPTHWISE_CONV_2D": (1, 8, 8, 3), "FULLY_CONNECTED": (1, 16),
    "AVERAGE_POOL_2D": (1, 8, 8, 3), "MAX_POOL_2D": (1, 8, 8, 3), "SOFTMAX": (1, 10),
    "ADD": (1, 4, 4, 3), "MUL": (1, 4, 4, 3), "RESHAPE": (1, 4, 4, 3), "QUANTIZE": (1, 16),
    "DEQUANTIZE": (1, 16), "PAD": (1, 4, 4, 3), "CONCATENATION": (1, 4, 4, 3), "MEAN": (1, 4, 4, 3),
    "LOGISTIC": (1, 16), "TANH": (1, 16), "UNIDIRECTIONAL_SEQUENCE_LSTM": (1, 3, 5), "SVDF": (1, 8),
}

_METHODS = {
    "CONV_2D": "conv2d", "DEPTHWISE_CONV_2D": "depthwise_conv2d", "FULLY_CONNECTED": "fully_connected",
    "AVERAGE_POOL_2D": "avg_pool2d", "MAX_POOL_2D": "max_pool2d", "SOFTMAX": "softmax", "RESHAPE": "reshape",
    "PAD": "pad", "MEAN": "mean", "LOGISTIC": "logistic", "TANH": "tanh", "DEQUANTIZE": "dequantize",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "lstm", "SVDF": "svdf",
}


def single_op_model(op_type: str, input_shape: Sequence[int] | None = None, input_scale: float = 0.05,
                    input_zero_point: int = 0, seed: int = 0, **params: Any) -> bytes:
    """A model made of one ``op_type`` operator on fresh graph input(s).

    :param params: the builder method's keyword arguments (``filters``,
        ``kernel``, ``stride``, ``padding``, ...).  Extra ones by operator:

        * ADD, MUL: ``input2_shape``, ``input2_scale``, ``input2_zero_point``;
        * CONCATENATION: ``input_shapes`` (list), ``axis``;
        * QUANTIZE: ``input_dtype`` ("float32" or "int8"), ``scale``, ``zero_point``.
    :raises ValueError: for an operator type the builder does not know.
    """
    shape = tuple(input_shape) if input_shape is not None else SINGLE_OP_DEFAULT_SHAPES.get(op_type)
    if shape is None:
        raise ValueError(f"unknown operator type {op_type!r}; known: {', '.join(sorted(SINGLE_OP_DEFAULT_SHAPES))}")
    b = ModelBuilder(name=op_type.lower(), seed=seed)
    if op_type == "QUANTIZE":
        dtype = params.pop("input_dtype", "float32")
        x = b.input(shape, input_scale, input_zero_point, dtype=dtype)
        y = b.quantize(x, params.pop("scale", 0.05), params.pop("zero_point", 0))
    elif op_type in ("ADD", "MUL"):
        x = b.input(shape, input_scale, input_zero_point)
        x2 = b.input(params.pop("input2_shape", shape), params.pop("input2_scale", input_scale),
                     params.pop("input2_zero_point", input_zero_point))
        y = (b.add if op_type == "ADD" else b.mul)(x, x2, **params)
    elif op_type == "CONCATENATION":
        shapes = params.pop("input_shapes", [shape, shape])
        xs: list[TensorRef] = [b.input(s, input_scale, input_zero_point) for s in shapes]
        y = b.concatenation(xs, **params)
    else:
        x = b.input(shape, input_scale, input_zero_point)
        method = getattr(b, _METHODS[op_type])
        if op_type == "CONV_2D":
            params.setdefault("filters", 4)
        elif op_type == "FULLY_CONNECTED":
            params.setdefault("units", 8)
        elif op_type == "RESHAPE":
            params.setdefault("shape", (shape[0], -1))
        elif op_type == "PAD":
            params.setdefault("paddings", [[0, 0]] + [[1, 1]] * (len(shape) - 1))
        elif op_type == "MEAN":
            params.setdefault("axes", [1, 2] if len(shape) == 4 else [len(shape) - 1])
        elif op_type in ("UNIDIRECTIONAL_SEQUENCE_LSTM", "SVDF"):
            params.setdefault("units", 4)
        y = method(x, **params)
    b.output(y)
    return b.build()


def demo_model(seed: int = 0) -> bytes:
    """A small int8 CNN: [1,16,16,1] -> CONV_2D -> DEPTHWISE_CONV_2D -> ADD
    (residual) -> AVERAGE_POOL_2D -> RESHAPE -> FULLY_CONNECTED -> SOFTMAX -> [1,10].
    """
    b = ModelBuilder(name="demo", seed=seed)
    x = b.input((1, 16, 16, 1), scale=1.0 / 128, zero_point=0)
    c1 = b.conv2d(x, filters=8, kernel=(3, 3), activation="RELU", out_scale=0.02, out_zero_point=-128)
    d1 = b.depthwise_conv2d(c1, kernel=(3, 3), activation="RELU", out_scale=0.02, out_zero_point=-128)
    s = b.add(c1, d1, out_scale=0.04, out_zero_point=-128)
    p = b.avg_pool2d(s, pool=2)
    f = b.reshape(p, (1, -1))
    logits = b.fully_connected(f, 10, out_scale=0.1, out_zero_point=0)
    b.output(b.softmax(logits))
    return b.build()
