"""The operator parameter space the kernels contract explores.

One hypothesis strategy per operator type, each drawing the keyword
arguments of :func:`tvmdevice.aot.builder.single_op_model`: shapes, strides,
paddings, dilations, depth multipliers, groups, fused activations,
per-channel or per-tensor weights, optional bias, broadcasting shapes and
quantization parameters.  Draws may fall outside what a device (or even the
host reference) accepts; the check counts those as declined instead of
filtering them, so a device's refusals are visible in the report.
"""

from __future__ import annotations

from typing import Any, Callable

from . import shape_space
from .kernel_space_arith import ARITH_STRATEGIES

__all__ = ["STRATEGIES", "variants"]

ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
PADDINGS = ("SAME", "VALID")


def _st() -> Any:
    from hypothesis import strategies as st

    return st


def _quant(draw: Any) -> dict[str, Any]:
    st = _st()
    return {"input_scale": draw(st.sampled_from([0.0078125, 0.05, 0.3]), label="input_scale"),
            "input_zero_point": draw(st.sampled_from([0, -128, -17, 5, 127]), label="input_zero_point")}


def _window(draw: Any, max_kernel: int = 4, dilate: bool = True) -> dict[str, Any]:
    """Kernel/pool size, stride, dilation and padding, with an input large enough for VALID padding."""
    st = _st()
    kh, kw = draw(st.integers(1, max_kernel), label="kh"), draw(st.integers(1, max_kernel), label="kw")
    sh, sw = draw(st.integers(1, 3), label="sh"), draw(st.integers(1, 3), label="sw")
    dh, dw = (draw(st.integers(1, 3), label="dh"), draw(st.integers(1, 3), label="dw")) if dilate else (1, 1)
    padding = draw(st.sampled_from(PADDINGS), label="padding")
    # VALID needs the effective window inside the input; SAME takes any size.
    h = (kh - 1) * dh + 1 + draw(st.integers(0, 6), label="extra_h")
    w = (kw - 1) * dw + 1 + draw(st.integers(0, 6), label="extra_w")
    if padding == "SAME":
        h, w = draw(st.integers(1, 10), label="h"), draw(st.integers(1, 10), label="w")
    out = {"kernel": (kh, kw), "stride": (sh, sw), "padding": padding, "h": h, "w": w}
    if dilate:
        out["dilation"] = (dh, dw)
    return out


def conv2d(draw: Any) -> dict[str, Any]:
    st = _st()
    win = _window(draw)
    c, filters = draw(st.integers(1, 8), label="channels"), draw(st.integers(1, 8), label="filters")
    groups = [g for g in (1, 2, 3, 4, c) if c % g == 0 and filters % g == 0]
    return {"input_shape": (1, win.pop("h"), win.pop("w"), c), "filters": filters, **win,
            "groups": draw(st.sampled_from(sorted(set(groups))), label="groups"),
            "activation": draw(st.sampled_from(ACTIVATIONS), label="activation"),
            "per_channel": draw(st.booleans(), label="per_channel"), "bias": draw(st.booleans(), label="bias"),
            **_quant(draw)}


def depthwise_conv2d(draw: Any) -> dict[str, Any]:
    st = _st()
    win = _window(draw)
    c = draw(st.integers(1, 8), label="channels")
    return {"input_shape": (1, win.pop("h"), win.pop("w"), c), **win,
            "depth_multiplier": draw(st.integers(1, 3), label="depth_multiplier"),
            "activation": draw(st.sampled_from(ACTIVATIONS), label="activation"),
            "per_channel": draw(st.booleans(), label="per_channel"), "bias": draw(st.booleans(), label="bias"),
            **_quant(draw)}


def fully_connected(draw: Any) -> dict[str, Any]:
    st = _st()
    batches, depth = draw(st.integers(1, 3), label="batches"), draw(st.integers(1, 40), label="depth")
    keep = draw(st.booleans(), label="keep_num_dims")
    shape = (1, batches, depth) if keep else (batches, depth)
    return {"input_shape": shape, "units": draw(st.integers(1, 16), label="units"), "keep_num_dims": keep,
            "activation": draw(st.sampled_from(ACTIVATIONS), label="activation"),
            "per_channel": draw(st.booleans(), label="per_channel"), "bias": draw(st.booleans(), label="bias"),
            **_quant(draw)}


def pool2d(draw: Any) -> dict[str, Any]:
    st = _st()
    win = _window(draw, dilate=False)
    c = draw(st.integers(1, 8), label="channels")
    return {"input_shape": (1, win.pop("h"), win.pop("w"), c), "pool": win.pop("kernel"), **win,
            "activation": draw(st.sampled_from(ACTIVATIONS), label="activation"), **_quant(draw)}


def _binary(draw: Any) -> dict[str, Any]:
    """ADD/MUL: equal shapes or every broadcasting pattern, either operand the broadcast one."""
    st = _st()
    h, w, c = (draw(st.integers(1, 5), label=k) for k in ("h", "w", "c"))
    full = (1, h, w, c)
    other = draw(st.sampled_from([full, (1, 1, 1, c), (1, h, 1, 1), (1, 1, 1, 1), (1, h, w, 1), (c,), (w, c)]),
                 label="broadcast_shape")
    first, second = (other, full) if draw(st.booleans(), label="swap") else (full, other)
    return {"input_shape": first, "input2_shape": second,
            "input2_scale": draw(st.sampled_from([0.0078125, 0.05, 0.3]), label="input2_scale"),
            "input2_zero_point": draw(st.sampled_from([0, -128, 9, 127]), label="input2_zero_point"),
            "activation": draw(st.sampled_from(ACTIVATIONS), label="activation"), **_quant(draw)}


def _vector(draw: Any) -> tuple[int, int]:
    st = _st()
    return draw(st.integers(1, 3), label="rows"), draw(st.integers(1, 40), label="cols")


def softmax(draw: Any) -> dict[str, Any]:
    st = _st()
    return {"input_shape": _vector(draw), "beta": draw(st.sampled_from([1.0, 0.5, 2.0]), label="beta"),
            **_quant(draw)}


def unary(draw: Any) -> dict[str, Any]:
    """LOGISTIC, TANH, DEQUANTIZE: a 2-D input and its quantization."""
    return {"input_shape": _vector(draw), **_quant(draw)}


def quantize(draw: Any) -> dict[str, Any]:
    st = _st()
    return {"input_shape": _vector(draw), "input_dtype": draw(st.sampled_from(["float32", "int8"]), label="dtype"),
            "scale": draw(st.sampled_from([0.0078125, 0.05, 0.3]), label="scale"),
            "zero_point": draw(st.sampled_from([0, -128, -3, 100]), label="zero_point"), **_quant(draw)}


def _nhwc(draw: Any) -> tuple[int, int, int, int]:
    st = _st()
    return (1, *(draw(st.integers(1, 5), label=k) for k in ("h", "w", "c")))


def reshape(draw: Any) -> dict[str, Any]:
    st = _st()
    shape = _nhwc(draw)
    _, h, w, c = shape
    tensor, option = draw(st.sampled_from([(True, True), (True, False), (False, True)]), label="shape_source")
    return {"input_shape": shape, "shape": draw(st.sampled_from([(1, -1), (h * w, c), (1, h, w * c), (-1,)]),
                                                label="new_shape"),
            "shape_tensor": tensor, "new_shape_option": option, **_quant(draw)}


def pad(draw: Any) -> dict[str, Any]:
    st = _st()
    shape = _nhwc(draw)
    paddings = [[0, 0]] + [[draw(st.integers(0, 2)), draw(st.integers(0, 2))] for _ in range(3)]
    return {"input_shape": shape, "paddings": paddings, **_quant(draw)}


def concatenation(draw: Any) -> dict[str, Any]:
    st = _st()
    base = list(_nhwc(draw))
    axis = draw(st.integers(-4, 3), label="axis")
    shapes = []
    for _ in range(draw(st.integers(2, 3), label="inputs")):
        s = list(base)
        s[axis] = draw(st.integers(1, 4), label="axis_size")
        shapes.append(tuple(s))
    return {"input_shape": shapes[0], "input_shapes": shapes, "axis": axis, **_quant(draw)}


def mean(draw: Any) -> dict[str, Any]:
    st = _st()
    return {"input_shape": _nhwc(draw), "axes": draw(st.sampled_from([[1, 2], [2, 1], [1], [2], [3]]), label="axes"),
            "keep_dims": draw(st.booleans(), label="keep_dims"), **_quant(draw)}


def lstm(draw: Any) -> dict[str, Any]:
    """UNIDIRECTIONAL_SEQUENCE_LSTM (int8): sequence shape, state size, layout, cell clip and scale."""
    st = _st()
    shape = (draw(st.integers(1, 3), label="d0"), draw(st.integers(1, 4), label="d1"),
             draw(st.integers(1, 12), label="features"))
    return {"input_shape": shape, "units": draw(st.integers(1, 8), label="units"),
            "time_major": draw(st.booleans(), label="time_major"),
            "cell_clip": draw(st.sampled_from([0.0, 0.5, 3.0]), label="cell_clip"),
            "cell_scale_power": draw(st.integers(-15, -9), label="cell_scale_power"), **_quant(draw)}


def svdf(draw: Any) -> dict[str, Any]:
    """SVDF (int8 input): batches, features, units, rank, memory and the state type."""
    st = _st()
    return {"input_shape": _vector(draw), "units": draw(st.integers(1, 8), label="units"),
            "rank": draw(st.integers(1, 3), label="rank"), "memory": draw(st.integers(1, 10), label="memory"),
            "state": draw(st.sampled_from(["int16", "int8"]), label="state"), **_quant(draw)}


#: operator type -> function drawing single_op_model keyword arguments.
STRATEGIES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "CONV_2D": conv2d, "DEPTHWISE_CONV_2D": depthwise_conv2d, "FULLY_CONNECTED": fully_connected,
    "AVERAGE_POOL_2D": pool2d, "MAX_POOL_2D": pool2d, "SOFTMAX": softmax, "ADD": _binary, "MUL": _binary,
    "RESHAPE": reshape, "PAD": pad, "CONCATENATION": concatenation, "MEAN": mean, "QUANTIZE": quantize,
    "DEQUANTIZE": unary, "LOGISTIC": unary, "TANH": unary,
    **shape_space.STRATEGIES,
    **ARITH_STRATEGIES,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": lstm, "SVDF": svdf,
}


def _int16(draw_params: Callable[[Any], dict[str, Any]], **fixed: Any) -> Callable[[Any], dict[str, Any]]:
    """The int16x8 variant of an operator's space: int16 input with zero point 0 and an int16-sized scale."""
    def draw(d: Any) -> dict[str, Any]:
        params = draw_params(d)
        for key in ("input_zero_point", "input2_zero_point"):
            params.pop(key, None)
        st = _st()
        scale = d(st.sampled_from([0.0001, 0.0005, 2.0 ** -12]), label="int16_scale")
        params.update({"input_dtype": "int16", "input_scale": scale, **fixed})
        if "input2_scale" in params:
            params["input2_scale"] = d(st.sampled_from([0.0002, 0.0007]), label="int16_scale2")
        return params

    return draw


def _quantize16(source: str, target: str) -> Callable[[Any], dict[str, Any]]:
    def draw(d: Any) -> dict[str, Any]:
        st = _st()
        scales = {"int16": [0.0003, 0.002], "int32": [0.0004, 1e-6]}.get(target, [0.05, 0.3])
        scale = d(st.sampled_from(scales), label="scale")
        return {"input_shape": _vector(d), "input_dtype": source, "output_dtype": target, "scale": scale,
                "input_scale": 0.0004 if source == "int16" else 0.05}

    return draw


# The int16x8 variants (kernel keys, :func:`tvmdevice.ops.kernel_key`) and SUB.
STRATEGIES.update({
    "SUB": _binary,
    "ADD:int16": _int16(_binary), "SUB:int16": _int16(_binary),
    "MUL:int16": _int16(_binary, out_scale=0.05),
    "CONV_2D:int16": _int16(conv2d), "DEPTHWISE_CONV_2D:int16": _int16(depthwise_conv2d),
    "FULLY_CONNECTED:int16": _int16(fully_connected),
    "AVERAGE_POOL_2D:int16": _int16(pool2d), "MAX_POOL_2D:int16": _int16(pool2d),
    "SOFTMAX:int8->int16": lambda d: {**softmax(d), "out_dtype": "int16"}, "SOFTMAX:int16": _int16(softmax),
    "LOGISTIC:int16": _int16(unary), "TANH:int16": _int16(unary),
    **{f"QUANTIZE:{a}->{b}": _quantize16(a, b)
       for a, b in (("float32", "int16"), ("int8", "int16"), ("int16", "int8"), ("int16", "int16"),
                    ("int16", "int32"))},
})


def variants(op_type: str) -> Any:
    """The hypothesis strategy of ``single_op_model`` keyword arguments for ``op_type`` (a kernel key).

    :raises KeyError: for an operator type the kit has no parameter space for.
    """
    draw_params = STRATEGIES[op_type]
    return _st().composite(lambda draw: draw_params(draw))()
