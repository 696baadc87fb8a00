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
from tvmdevice.aot.ir import Graph, Operator, Tensor
from tvmdevice.errors import Refusal
from tvmdevice.ops import OPERATORS

from ..kernel_table import GEMM_COLS, GEMV_COLS, GEMV_DEPTH, GEMV_PANEL, NB

__all__ = [
    "BufferSpec", "KernelPlan", "MAX_ABS_INPUT", "call_buffers", "check_extent", "constant", "check_accumulator",
    "padded", "pair_interleaved", "panels_s8", "channel_quant",
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


def panels_s8(rows: np.ndarray) -> np.ndarray:
    """``[n, k]`` weights that fit int8 in the batch-1 GEMM's layout: int8 panels, flat, zero padded.

    Columns padded to ``GEMV_COLS``, depth to ``GEMV_DEPTH`` (``kq`` quads).
    Panel ``p`` holds columns ``[GEMV_PANEL * p, GEMV_PANEL * (p + 1))`` (the
    last one fewer) from offset ``GEMV_PANEL * p * kq * GEMV_DEPTH`` as
    ``[kq][columns][GEMV_DEPTH]``: one step of the dot products reads the next
    ``GEMV_DEPTH`` weights of every column of the panel, contiguous, and
    multiplies them with ``GEMV_DEPTH`` input values broadcast, so each int32
    lane accumulates one column (no horizontal sums).
    """
    n, k = rows.shape
    cols, depth = padded(n, GEMV_COLS), padded(k, GEMV_DEPTH)
    full = np.zeros((cols, depth), dtype=np.int8)
    full[:n, :k] = rows
    panels = [full[j:j + GEMV_PANEL].reshape(-1, depth // GEMV_DEPTH, GEMV_DEPTH).transpose(1, 0, 2).reshape(-1)
              for j in range(0, cols, GEMV_PANEL)]
    return np.concatenate(panels) if panels else full.reshape(-1)


def channel_quant(multiplier: np.ndarray, shift: np.ndarray) -> dict[str, Any]:
    """The M-profile packing's requantization members: one multiplier and shift
    when every channel has the same (per-tensor quantization), else one per channel."""
    multiplier = np.ascontiguousarray(multiplier, dtype=np.int32)
    shift = np.ascontiguousarray(shift, dtype=np.int8)  # -31..30 (tvmdevice.ops checks)
    if multiplier.size and np.all(multiplier == multiplier[0]) and np.all(shift == shift[0]):
        return {"per_channel": 0, "multiplier": multiplier[:1].copy(), "shift": shift[:1].copy()}
    return {"per_channel": 1, "multiplier": multiplier, "shift": shift}
