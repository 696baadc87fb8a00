"""Ready-made models: one operator at a time for tests, and a small demo CNN."""

from __future__ import annotations

from typing import Any, Sequence

from tvmdevice.aot.builder.model import ModelBuilder, TensorRef

__all__ = ["single_op_model", "demo_model", "SINGLE_OP_DEFAULT_SHAPES"]

#: Input shape used by :func:`single_op_model` when none is given.
SINGLE_OP_DEFAULT_SHAPES: dict[str, tuple[int, ...]] = {
    "CONV_2D": (1, 8, 8, 3), "DEPTHWISE_CONV_2D": (1, 8, 8, 3), "FULLY_CONNECTED": (1, 16),
    "AVERAGE_POOL_2D": (1, 8, 8, 3), "MAX_POOL_2D": (1, 8, 8, 3), "SOFTMAX": (1, 10),
    "ADD": (1, 4, 4, 3), "SUB": (1, 4, 4, 3), "MUL": (1, 4, 4, 3), "RESHAPE": (1, 4, 4, 3), "QUANTIZE": (1, 16),
    "DEQUANTIZE": (1, 16), "PAD": (1, 4, 4, 3), "CONCATENATION": (1, 4, 4, 3), "MEAN": (1, 4, 4, 3),
    "LOGISTIC": (1, 16), "TANH": (1, 16),
    "TRANSPOSE": (1, 4, 5, 3), "SLICE": (1, 4, 5, 3), "STRIDED_SLICE": (1, 4, 5, 3), "SPLIT": (1, 4, 5, 3),
    "SPLIT_V": (1, 4, 5, 3), "PACK": (1, 4, 5, 3), "UNPACK": (1, 4, 5, 3), "SQUEEZE": (1, 4, 1, 3),
    "EXPAND_DIMS": (1, 4, 5, 3), "GATHER": (1, 4, 5, 3), "PADV2": (1, 4, 5, 3), "RESIZE_NEAREST_NEIGHBOR": (1, 4, 5, 3),
    "RESIZE_BILINEAR": (1, 4, 5, 3), "BROADCAST_TO": (1, 4, 1, 3),
    "MAXIMUM": (1, 4, 4, 3), "MINIMUM": (1, 4, 4, 3), "SQUARED_DIFFERENCE": (1, 4, 4, 3), "RELU": (1, 16),
    "RELU6": (1, 16), "RELU_N1_TO_1": (1, 16), "LEAKY_RELU": (1, 16), "HARD_SWISH": (1, 16),
    "PRELU": (1, 4, 4, 3), "ARG_MAX": (1, 10), "ARG_MIN": (1, 10), "SUM": (1, 4, 4, 3), "REDUCE_MAX": (1, 4, 4, 3),
    "TRANSPOSE_CONV": (1, 4, 4, 3), "BATCH_MATMUL": (1, 4, 6), "LOG_SOFTMAX": (1, 10),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (1, 3, 5), "SVDF": (1, 8),
}

_METHODS = {
    "CONV_2D": "conv2d", "DEPTHWISE_CONV_2D": "depthwise_conv2d", "FULLY_CONNECTED": "fully_connected",
    "AVERAGE_POOL_2D": "avg_pool2d", "MAX_POOL_2D": "max_pool2d", "SOFTMAX": "softmax", "RESHAPE": "reshape",
    "PAD": "pad", "MEAN": "mean", "LOGISTIC": "logistic", "TANH": "tanh", "DEQUANTIZE": "dequantize",
    "TRANSPOSE": "transpose", "SLICE": "slice", "STRIDED_SLICE": "strided_slice", "SPLIT": "split",
    "SPLIT_V": "split_v", "UNPACK": "unpack", "SQUEEZE": "squeeze", "EXPAND_DIMS": "expand_dims", "GATHER": "gather",
    "PADV2": "padv2", "RESIZE_NEAREST_NEIGHBOR": "resize_nearest", "RESIZE_BILINEAR": "resize_bilinear",
    "BROADCAST_TO": "broadcast_to",
    "RELU": "relu", "RELU6": "relu6", "RELU_N1_TO_1": "relu_n1_to_1", "LEAKY_RELU": "leaky_relu",
    "HARD_SWISH": "hard_swish", "PRELU": "prelu", "ARG_MAX": "arg_max", "ARG_MIN": "arg_min", "SUM": "sum",
    "REDUCE_MAX": "reduce_max", "TRANSPOSE_CONV": "transpose_conv", "LOG_SOFTMAX": "log_softmax",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "lstm", "SVDF": "svdf",
}

#: Default arguments of the shape operators' builder methods, from the input shape.
_SHAPE_DEFAULTS: dict[str, Any] = {
    "TRANSPOSE": lambda s: {"perm": list(range(len(s)))[::-1]},
    "SLICE": lambda s: {"begin": [min(1, d - 1) for d in s], "size": [-1] * len(s)},
    "STRIDED_SLICE": lambda s: {"begin": [0] * len(s), "end": list(s), "strides": [1] * (len(s) - 1) + [2]},
    "SPLIT": lambda s: {"num_splits": 2, "axis": 1}, "SPLIT_V": lambda s: {"size_splits": [1, -1], "axis": 1},
    "UNPACK": lambda s: {"axis": 1}, "EXPAND_DIMS": lambda s: {"axis": -1},
    "GATHER": lambda s: {"positions": [2, 0, 1], "axis": 1},
    "PADV2": lambda s: {"paddings": [[0, 0]] + [[1, 1]] * (len(s) - 1), "value": 3},
    "RESIZE_NEAREST_NEIGHBOR": lambda s: {"size": (7, 6)}, "RESIZE_BILINEAR": lambda s: {"size": (7, 6)},
    "BROADCAST_TO": lambda s: {"shape": (2,) + tuple(s[1:2]) + (5,) + tuple(s[3:])},
}
#: Two-input operators: op type -> builder method.
_BINARY = {"ADD": "add", "MUL": "mul", "MAXIMUM": "maximum", "MINIMUM": "minimum",
           "SQUARED_DIFFERENCE": "squared_difference", "BATCH_MATMUL": "batch_matmul"}


def single_op_model(op_type: str, input_shape: Sequence[int] | None = None, input_scale: float = 0.05,
                    input_zero_point: int = 0, seed: int = 0, **params: Any) -> bytes:
    """A model made of one ``op_type`` operator on fresh graph input(s).

    :param params: the builder method's keyword arguments (``filters``,
        ``kernel``, ``stride``, ``padding``, ...).  Extra ones by operator:

        * every operator: ``input_dtype`` ("int8", or "int16" for the int16x8 variants);
        * ADD, SUB, MUL, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, BATCH_MATMUL: ``input2_shape``,
          ``input2_scale``, ``input2_zero_point``;
        * CONCATENATION, PACK: ``input_shapes`` (list), ``axis``;
        * QUANTIZE: ``input_dtype`` ("float32", "int8" or "int16"), ``output_dtype``,
          ``scale``, ``zero_point``.
    :raises ValueError: for an operator type the builder does not know.
    """
    shape = tuple(input_shape) if input_shape is not None else SINGLE_OP_DEFAULT_SHAPES.get(op_type)
    if shape is None:
        raise ValueError(f"unknown operator type {op_type!r}; known: {', '.join(sorted(SINGLE_OP_DEFAULT_SHAPES))}")
    b = ModelBuilder(name=op_type.lower(), seed=seed)
    dtype = params.pop("input_dtype", "float32" if op_type == "QUANTIZE" else "int8")
    if op_type == "QUANTIZE":
        x = b.input(shape, input_scale, input_zero_point, dtype=dtype)
        y = b.quantize(x, params.pop("scale", 0.05), params.pop("zero_point", 0),
                       dtype=params.pop("output_dtype", "int8"))
    elif op_type in ("SUB", *_BINARY):
        x = b.input(shape, input_scale, input_zero_point, dtype=dtype)
        # BATCH_MATMUL's rhs is [..., depth, 5] by default.
        default2 = (*shape[:-2], shape[-1], 5) if op_type == "BATCH_MATMUL" else shape
        x2 = b.input(params.pop("input2_shape", default2), params.pop("input2_scale", input_scale),
                     params.pop("input2_zero_point", input_zero_point), dtype=dtype)
        y = getattr(b, {"SUB": "sub", **_BINARY}[op_type])(x, x2, **params)
    elif op_type in ("CONCATENATION", "PACK"):
        shapes = params.pop("input_shapes", [shape, shape])
        xs: list[TensorRef] = [b.input(s, input_scale, input_zero_point, dtype=dtype) for s in shapes]
        y = (b.concatenation if op_type == "CONCATENATION" else b.pack)(xs, **params)
    else:
        x = b.input(shape, input_scale, input_zero_point, dtype=dtype)
        method = getattr(b, _METHODS[op_type])
        if op_type == "CONV_2D":
            params.setdefault("filters", 4)
        elif op_type == "TRANSPOSE_CONV":
            params.setdefault("filters", 4)
        elif op_type == "FULLY_CONNECTED":
            params.setdefault("units", 8)
        elif op_type == "RESHAPE":
            params.setdefault("shape", (shape[0], -1))
        elif op_type == "PAD":
            params.setdefault("paddings", [[0, 0]] + [[1, 1]] * (len(shape) - 1))
        elif op_type in ("MEAN", "SUM", "REDUCE_MAX"):
            params.setdefault("axes", [1, 2] if len(shape) == 4 else [len(shape) - 1])
        elif op_type in _SHAPE_DEFAULTS:
            params = {**_SHAPE_DEFAULTS[op_type](shape), **params}
        elif op_type in ("UNIDIRECTIONAL_SEQUENCE_LSTM", "SVDF"):
            params.setdefault("units", 4)
        y = method(x, **params)
    for t in y if isinstance(y, list) else [y]:
        b.output(t)
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
