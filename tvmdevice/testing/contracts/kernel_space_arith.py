"""The kernels contract's parameter space for the arithmetic and activation operators (merged into
:data:`tvmdevice.testing.contracts.kernel_space.STRATEGIES`).

Each function draws :func:`tvmdevice.aot.builder.single_op_model` keyword
arguments; draws outside what a device accepts are counted as declined.
"""

from __future__ import annotations

from typing import Any, Callable

__all__ = ["ARITH_STRATEGIES"]

_SCALES = [0.0078125, 0.05, 0.3]
_ZERO_POINTS = [0, -128, -17, 5, 127]


def _st() -> Any:
    from hypothesis import strategies as st

    return st


def _quant(draw: Any, prefix: str = "input") -> dict[str, Any]:
    st = _st()
    return {f"{prefix}_scale": draw(st.sampled_from(_SCALES), label=f"{prefix}_scale"),
            f"{prefix}_zero_point": draw(st.sampled_from(_ZERO_POINTS), label=f"{prefix}_zero_point")}


def _out(draw: Any) -> dict[str, Any]:
    st = _st()
    return {"out_scale": draw(st.sampled_from(_SCALES), label="out_scale"),
            "out_zero_point": draw(st.sampled_from([-128, -3, 0, 60]), label="out_zero_point")}


def _nhwc(draw: Any) -> tuple[int, int, int, int]:
    st = _st()
    return (draw(st.integers(1, 2), label="n"), *(draw(st.integers(1, 5), label=k) for k in ("h", "w", "c")))


def _vector(draw: Any) -> tuple[int, int]:
    st = _st()
    return draw(st.integers(1, 3), label="rows"), draw(st.integers(1, 40), label="cols")


def broadcast(draw: Any) -> dict[str, Any]:
    """MAXIMUM, MINIMUM, SQUARED_DIFFERENCE: equal shapes or a broadcasting pattern, either side."""
    st = _st()
    n, h, w, c = _nhwc(draw)
    full = (n, h, w, c)
    other = draw(st.sampled_from([full, (1, 1, 1, c), (n, h, 1, 1), (1,), (1, h, w, 1), (c,), (w, c)]),
                 label="broadcast_shape")
    first, second = (other, full) if draw(st.booleans(), label="swap") else (full, other)
    return {"input_shape": first, "input2_shape": second, **_quant(draw, "input2"), **_quant(draw)}


def rescaling_unary(draw: Any) -> dict[str, Any]:
    """RELU, RELU_N1_TO_1, HARD_SWISH: a 2-D input, its quantization and the output's."""
    return {"input_shape": _vector(draw), **_quant(draw), **_out(draw)}


def leaky_relu(draw: Any) -> dict[str, Any]:
    st = _st()
    return {**rescaling_unary(draw), "alpha": draw(st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.5, -0.3]), label="alpha")}


def plain_unary(draw: Any) -> dict[str, Any]:
    """RELU6, LOG_SOFTMAX: the output quantization is the kernel's."""
    return {"input_shape": _vector(draw), **_quant(draw)}


def prelu(draw: Any) -> dict[str, Any]:
    st = _st()
    shape = _nhwc(draw)
    alpha = draw(st.sampled_from([shape[-1:], shape[1:], (1, 1, shape[-1]), shape]), label="alpha_shape")
    return {"input_shape": shape, "alpha_shape": alpha,
            "alpha_scale": draw(st.sampled_from([0.002, 0.01, 0.1]), label="alpha_scale"),
            "alpha_zero_point": draw(st.sampled_from([0, -50, 20]), label="alpha_zero_point"),
            **_quant(draw), **_out(draw)}


def arg_min_max(draw: Any) -> dict[str, Any]:
    st = _st()
    return {"input_shape": _nhwc(draw), "axis": draw(st.integers(-4, 3), label="axis"), **_quant(draw)}


def reduce_sum(draw: Any) -> dict[str, Any]:
    st = _st()
    return {"input_shape": _nhwc(draw), "axes": draw(st.sampled_from([[1, 2], [3], [0, 3], [-1], [2, -3]]),
                                                      label="axes"),
            "keep_dims": draw(st.booleans(), label="keep_dims"), **_quant(draw), **_out(draw)}


def reduce_max(draw: Any) -> dict[str, Any]:
    st = _st()
    return {"input_shape": _nhwc(draw), "axes": draw(st.sampled_from([[1, 2], [3], [0, 1, 2], [-1], [0, 1, 2, 3]]),
                                                      label="axes"),
            "keep_dims": draw(st.booleans(), label="keep_dims"), **_quant(draw)}


def transpose_conv(draw: Any) -> dict[str, Any]:
    st = _st()
    kh, kw = draw(st.integers(1, 4), label="kh"), draw(st.integers(1, 4), label="kw")
    return {"input_shape": (1, *(draw(st.integers(1, 5), label=k) for k in ("h", "w", "c"))),
            "filters": draw(st.integers(1, 6), label="filters"), "kernel": (kh, kw),
            "stride": (draw(st.integers(1, 3), label="sh"), draw(st.integers(1, 3), label="sw")),
            "padding": draw(st.sampled_from(["SAME", "VALID"]), label="padding"),
            "activation": draw(st.sampled_from(["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]), label="activation"),
            "per_channel": draw(st.booleans(), label="per_channel"), "bias": draw(st.booleans(), label="bias"),
            **_quant(draw)}


def batch_matmul(draw: Any) -> dict[str, Any]:
    st = _st()
    rows, cols, depth = (draw(st.integers(1, 6), label=k) for k in ("rows", "cols", "depth"))
    batch = draw(st.sampled_from([(), (2,), (1, 3), (2, 3)]), label="batch")
    rhs_batch = draw(st.sampled_from([batch, batch[1:], tuple(1 for _ in batch)]), label="rhs_batch")
    adj_x, adj_y = draw(st.booleans(), label="adj_x"), draw(st.booleans(), label="adj_y")
    return {"input_shape": (*batch, *((depth, rows) if adj_x else (rows, depth))),
            "input2_shape": (*rhs_batch, *((cols, depth) if adj_y else (depth, cols))),
            "adj_x": adj_x, "adj_y": adj_y, **_quant(draw, "input2"), **_quant(draw)}


#: operator type -> function drawing single_op_model keyword arguments.
ARITH_STRATEGIES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "MAXIMUM": broadcast, "MINIMUM": broadcast, "SQUARED_DIFFERENCE": broadcast, "RELU": rescaling_unary,
    "RELU_N1_TO_1": rescaling_unary,
    "HARD_SWISH": rescaling_unary, "LEAKY_RELU": leaky_relu, "RELU6": plain_unary, "LOG_SOFTMAX": plain_unary,
    "PRELU": prelu, "ARG_MAX": arg_min_max, "ARG_MIN": arg_min_max, "SUM": reduce_sum, "REDUCE_MAX": reduce_max,
    "TRANSPOSE_CONV": transpose_conv, "BATCH_MATMUL": batch_matmul,
}
