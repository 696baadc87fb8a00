"""What every cmsis-nn prepare step shares: its limits, its weight layouts, its buffer specs.

The TFLM op data (offsets, multipliers, activation range, padding, broadcast
strides) comes from the core's operator layer (:mod:`tvmdevice.ops`); what is
here is cmsis-nn's own: the bounds its C loops rely on (int32 indices and
accumulators), the rearranged weight layouts, and the description of the
buffers a call takes.  A limit the kernels cannot meet is a
:class:`~tvmdevice.errors.Refusal`: placement then tries the next device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tvmdevice.errors import Refusal
from tvmdevice.ir import Graph, Operator, Tensor
from tvmdevice.ops import OPERATORS

from ..kernel_table import GEMM_COLS, GEMV_COLS, GEMV_DEPTH, GEMV_PANEL, NB

__all__ = [
    "BufferSpec", "KernelPlan", "MAX_ABS_INPUT", "call_buffers", "check_extent", "constant", "check_accumulator",
    "padded", "pair_interleaved", "quad_interleaved", "offset_column_sums", "panels_s8", "channel_quant",
    "vnni_packing", "vnni_plan",
]

INT32_MAX = 2**31 - 1
#: |int8 value - int8 zero point| <= 255: the largest input operand of a dot product.
MAX_ABS_INPUT = 255


@dataclass(frozen=True)
class BufferSpec:
    """What one kernel buffer must be: element count and dtype (shape for messages).

    :param role: the operand's name (``"input"``, ``"filter"``, ``"bias"``, ``"output"``...).
    :param tensor: graph tensor index, ``-1`` for an absent optional input.
    :param shape: the tensor's shape.
    :param dtype: numpy dtype name.
    :param absent: the optional input is absent; pass ``None``.
    :param output: the kernel writes it.
    """

    role: str
    tensor: int
    shape: tuple[int, ...]
    dtype: str
    absent: bool = False
    output: bool = False

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass(frozen=True)
class KernelPlan:
    """What an operator's prepare step adds to its op data: cmsis-nn's packing.

    :param values: params struct members the op data does not hold, by
        member name (packed weights, block sizes...); they take precedence
        over the op data's fields of the same name.
    :param kind: the kernel family that runs the operator when it is not the
        operator's own (a DEPTHWISE_CONV_2D with one input channel runs as a
        CONV_2D), else ``None``.
    """

    values: dict[str, Any] = field(default_factory=dict)
    kind: str | None = None


def call_buffers(graph: Graph, op: Operator) -> tuple[BufferSpec, ...]:
    """The call's buffers: the operator's inputs in order (named as its signature names them), then its output."""
    roles = [operand.name for operand in OPERATORS[op.type].signature.roles(len(op.inputs))]
    specs = []
    for role, index in zip(roles, op.inputs):
        if index < 0:
            specs.append(BufferSpec(role, -1, (), "int32", absent=True))
        else:
            specs.append(_spec(role, graph.tensor(index)))
    return (*specs, _spec("output", graph.tensor(op.outputs[0]), output=True))


def _spec(role: str, t: Tensor, output: bool = False) -> BufferSpec:
    return BufferSpec(role, t.index, tuple(int(d) for d in t.shape), np.dtype(t.dtype).name, output=output)


def check_extent(image: int, out: int, stride: int, filt: int, dilation: int = 1) -> None:
    """Refuse geometry whose input coordinates would overflow the kernels' int32 arithmetic."""
    reach = (out - 1) * stride + (filt - 1) * dilation + 1
    if reach + image > INT32_MAX:
        raise Refusal(f"window reach {reach} over an image of {image} overflows int32 coordinates")


def constant(t: Tensor, role: str) -> np.ndarray:
    """The data of a constant tensor: the kernels rearrange weights at compile time."""
    if t.data is None:
        raise Refusal(f"{role} tensor {t.index} is not constant; cmsis-nn needs constant weights")
    return np.asarray(t.data).reshape(tuple(int(d) for d in t.shape))


def check_accumulator(abs_weight_sums: np.ndarray, max_abs_input: int = MAX_ABS_INPUT) -> None:
    """Refuse weights whose dot products could overflow the int32 accumulator.

    ``max_abs_input * sum(|w|)`` bounds every partial sum, in any order, so
    the C kernels (which sum in a different order than TFLM) never overflow
    where TFLM does not.
    """
    worst = int(np.max(abs_weight_sums, initial=0)) * max_abs_input
    if worst > INT32_MAX:
        raise Refusal(f"dot products up to {worst} could overflow the int32 accumulator")


def padded(n: int, block: int = NB) -> int:
    """``n`` rounded up to a multiple of ``block``."""
    return (n + block - 1) // block * block


def pair_interleaved(rows: np.ndarray) -> np.ndarray:
    """``[n, k]`` integer weights in the GEMM's layout: int16 ``[k_pairs, 2 * ldw]``.

    Element ``[p, 2 * j + q]`` is ``rows[j, 2 * p + q]``: two consecutive
    reduction steps of output column ``j`` side by side (what one 2 x 16-bit
    multiply-add consumes), zero where ``j >= n`` or ``2 * p + q >= k``.
    """
    n, k = rows.shape
    ldw = padded(n, GEMM_COLS)
    out = np.zeros(((k + 1) // 2, ldw, 2), dtype=np.int16)
    full = np.zeros((2 * out.shape[0], ldw), dtype=np.int16)
    full[:k, :n] = rows.T
    out[:, :, 0] = full[0::2]
    out[:, :, 1] = full[1::2]
    return out.reshape(out.shape[0], 2 * ldw)


def quad_interleaved(rows: np.ndarray, cols: int) -> np.ndarray:
    """``[n, k]`` int8 weights as int8 ``[ceil(k / 4), cols, 4]``: element ``[q, j, t]`` is ``rows[j, 4 * q + t]``,
    zero where ``j >= n`` or ``4 * q + t >= k`` -- four reduction steps of each output column side by side,
    what one 4 x 8-bit multiply-add (vpmaddubsw pairs, vpdpbusd) consumes against four broadcast inputs."""
    n, k = rows.shape
    kq = (k + GEMV_DEPTH - 1) // GEMV_DEPTH
    full = np.zeros((cols, kq * GEMV_DEPTH), dtype=np.int8)
    full[:n, :k] = rows
    return np.ascontiguousarray(full.reshape(cols, kq, GEMV_DEPTH).transpose(1, 0, 2))


def offset_column_sums(rows: np.ndarray, offset: int, cols: int) -> np.ndarray:
    """int32 ``[cols]``: ``offset * sum_k rows[j, k]`` for each output column ``j < n``, 0 past it -- the share
    of a constant ``offset`` added to every input, which a kernel on raw int8 inputs adds once per column:
    ``sum (x + offset) * w = sum x * w + offset * sum w``.  Exact in int32 for ``|offset| <= 255``:
    :func:`check_accumulator` bounds ``255 * sum |w|``."""
    sums = np.zeros(cols, dtype=np.int64)
    sums[:rows.shape[0]] = int(offset) * rows.astype(np.int64).sum(axis=1)
    return sums.astype(np.int32)


def panels_s8(rows: np.ndarray) -> np.ndarray:
    """``[n, k]`` weights that fit int8 in the batch-1 GEMM's layout: int8 panels, flat, zero padded.

    Columns padded to ``GEMV_COLS``, depth to ``GEMV_DEPTH`` (``kq`` quads).
    Panel ``p`` holds columns ``[GEMV_PANEL * p, GEMV_PANEL * (p + 1))`` (the
    last one fewer) from offset ``GEMV_PANEL * p * kq * GEMV_DEPTH``, each
    :func:`quad_interleaved`: one step of the dot products reads the next
    ``GEMV_DEPTH`` weights of every column of the panel, contiguous, and
    multiplies them with ``GEMV_DEPTH`` input values broadcast, so each int32
    lane accumulates one column (no horizontal sums).
    """
    n = rows.shape[0]
    cols = padded(n, GEMV_COLS)
    full = np.zeros((cols, rows.shape[1]), dtype=np.int8)
    full[:n] = rows
    return np.concatenate([quad_interleaved(full[j:j + GEMV_PANEL], min(GEMV_PANEL, cols - j)).reshape(-1)
                           for j in range(0, max(cols, 1), GEMV_PANEL)])


def vnni_packing() -> bool:
    """Whether the int8 VNNI GEMM's operands are worth packing: the host runs a VNNI SIMD level, or the build
    emulates every level (``TVMDEVICE_CMSIS_SIMD_EMULATION``).  Elsewhere they would be dead bytes."""
    from .. import _kernels

    return _kernels.simd_emulated() or any(level.endswith("vnni") for level in _kernels.simd_levels())


def vnni_plan(rows: np.ndarray, input_offset: int, groups: int = 1) -> dict[str, Any]:
    """The VNNI GEMM's params members for ``[groups * n, k]`` weights (int8 values): ``weights_vnni`` and
    ``vnni_correction``, both ``None`` when :func:`vnni_packing` says no or a weight does not fit int8.

    ``weights_vnni`` is int8 ``[groups, k4, ldw, 4]`` (``k4 = ceil(k / 4)``): element ``[g, q, j, t]`` is
    ``rows[g * n + j, 4 * q + t]``, zero where ``j >= n`` or ``4 * q + t >= k``: the four reduction steps
    one vpdpbusd multiplies with four input bytes.  vpdpbusd takes unsigned inputs, so the kernels
    multiply ``u = x + 128`` (``x ^ 0x80``) and start each column's sums at
    ``vnni_correction[g, j] = (input_offset - 128) * sum_k rows[g * n + j, k]``: then
    ``correction + sum u * w = sum (x + input_offset) * w``, the reference's sum.  Extra bytes, beside
    the int16 weights: ``groups * ldw * (4 * k4 + 4)``, about half the int16 weights' bytes.
    """
    none: dict[str, Any] = {"weights_vnni": None, "vnni_correction": None}
    if not vnni_packing() or rows.size == 0 or rows.min() < -128 or rows.max() > 127:
        return none
    total, k = rows.shape
    n = total // groups
    ldw = padded(n, GEMM_COLS)
    per_group = [rows[g * n:(g + 1) * n] for g in range(groups)]
    weights = np.concatenate([quad_interleaved(r, ldw) for r in per_group])
    correction = np.concatenate([offset_column_sums(r, int(input_offset) - 128, ldw) for r in per_group])
    return {"weights_vnni": weights.reshape(-1, 4 * ldw), "vnni_correction": correction.reshape(groups, ldw)}


def channel_quant(multiplier: np.ndarray, shift: np.ndarray) -> dict[str, Any]:
    """The M-profile packing's requantization members: one multiplier and shift
    when every channel has the same (per-tensor quantization), else one per channel."""
    multiplier = np.ascontiguousarray(multiplier, dtype=np.int32)
    shift = np.ascontiguousarray(shift, dtype=np.int8)  # -31..30 (tvmdevice.ops checks)
    if multiplier.size and np.all(multiplier == multiplier[0]) and np.all(shift == shift[0]):
        return {"per_channel": 0, "multiplier": multiplier[:1].copy(), "shift": shift[:1].copy()}
    return {"per_channel": 1, "multiplier": multiplier, "shift": shift}
