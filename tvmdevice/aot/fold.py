"""Folding a PAD into the convolution it feeds: the pad becomes the convolution's window padding.

A converter writes explicit padding as ``PAD -> CONV_2D(VALID)`` (PyTorch
exports, asymmetric pads).  A device whose convolution kernels take any
window padding (``DeviceType.folds_pad``: an NPU's window loader) can run the
pair as one call that reads the PAD's *input*: no padded tensor, no PAD pass.

The fold is exact only when what TFLM computes is unchanged.  TFLM's
reference convolutions (``reference/integer_ops/conv.h``,
``depthwise_conv.h``) skip a tap outside the image and add
``filter * (input + input_offset)`` for one inside it, with ``input_offset``
the negated input zero point (int16x8: no offset, zero point 0).  A tap on
a border the PAD wrote holds the pad value ``v``, so it adds
``filter * (v - zero_point)``: nothing exactly when ``v`` is the convolution's
input zero point — what PAD writes (int16: 0), and PADV2 when its constant
is that value.  The border taps can then be skipped as padding taps are, so
the convolution on the PAD's input with the borders added to its own leading
padding (the trailing ones follow from the unchanged output size) gives the
same bits.  Candidates are further limited to what keeps the plan's
structure: the borders on height and width only; the PAD output read by that
convolution alone, as its input, and not a graph output (nobody may see the
padded tensor, which is never materialised); the PAD input a computed tensor
(not a constant, not operator state); and a session that does not preserve
every tensor.

Placement (:func:`tvmdevice.aot.placement.place`) decides each fold once, on
the device that takes the convolution; the schedule, the memory plan, the
executor and the C export all follow the placement (the PAD output is an
alias of the PAD input that only the folded convolution reads), so nothing
is renumbered and every consumer of the plan sees the same fold.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..ir import Graph, Operator
from ..ops import ConvData, PadData

__all__ = ["PadFold", "CONV_TYPES", "readers", "candidate", "folded_operator", "folded_op_data"]

#: Consumers a PAD may fold into.
CONV_TYPES = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D"})


@dataclass(frozen=True)
class PadFold:
    """One PAD folded (or to be folded) into the convolution reading its output.

    :ivar pad: the PAD (or PADV2) operator's index.
    :ivar conv: the convolution's index.
    :ivar source: the PAD's input tensor: what the folded convolution reads.
    :ivar padded: the PAD's output tensor: never materialised once folded.
    :ivar top: rows the PAD adds above the image (``bottom``, ``left``, ``right`` likewise).
    """

    pad: int
    conv: int
    source: int
    padded: int
    top: int
    bottom: int
    left: int
    right: int

    def describe(self) -> str:
        """The borders, as the placement report prints them."""
        return f"top {self.top}, bottom {self.bottom}, left {self.left}, right {self.right}"


def readers(graph: Graph) -> dict[int, list[tuple[int, int]]]:
    """Tensor -> every ``(operator index, input slot)`` reading it."""
    found: dict[int, list[tuple[int, int]]] = {}
    for op in graph.operators:
        for slot, t in enumerate(op.inputs):
            if t >= 0:
                found.setdefault(t, []).append((op.index, slot))
    return found


def candidate(graph: Graph, users: dict[int, list[tuple[int, int]]], pad: Operator, pad_data: Any,
              conv: Operator, conv_data: Any) -> PadFold | None:
    """The fold of ``pad`` into ``conv`` when it is exact (see the module's conditions), else ``None``.

    :param users: :func:`readers` of the graph.
    :param pad_data: the PAD's op data; ``conv_data`` the convolution's (either ``None`` when absent).
    """
    if pad.type not in ("PAD", "PADV2") or conv.type not in CONV_TYPES or not isinstance(pad_data, PadData) \
            or not isinstance(conv_data, ConvData) or len(pad.outputs) != 1 or len(pad_data.paddings) != 4:
        return None
    if pad_data.paddings[0] != (0, 0) or pad_data.paddings[3] != (0, 0):
        return None  # batch or channel borders: no window pads them
    source, padded = pad.inputs[0], pad.outputs[0]
    src = graph.tensors[source]
    if src.is_constant or src.is_variable or padded in graph.outputs:
        return None
    if users.get(padded, []) != [(conv.index, 0)]:
        return None  # someone else reads the padded tensor, or the convolution reads it twice
    if pad_data.pad_value != -conv_data.input_offset:
        return None  # each border tap would add filter * (value - zero point)
    (top, bottom), (left, right) = pad_data.paddings[1], pad_data.paddings[2]
    return PadFold(pad.index, conv.index, source, padded, top, bottom, left, right)


def folded_operator(conv: Operator, fold: PadFold) -> Operator:
    """The convolution as a device prepares it folded: reading the PAD's input."""
    return dataclasses.replace(conv, inputs=(fold.source, *conv.inputs[1:]))


def folded_op_data(data: ConvData, fold: PadFold) -> ConvData:
    """The convolution's op data on the unpadded input: the borders join its leading padding.

    The output size, and so the trailing padding it implies, is unchanged.
    """
    return dataclasses.replace(data, in_h=data.in_h - fold.top - fold.bottom, in_w=data.in_w - fold.left - fold.right,
                               pad_h=data.pad_h + fold.top, pad_w=data.pad_w + fold.left)
