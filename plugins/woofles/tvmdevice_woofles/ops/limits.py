"""The woofles NPU's own limits: its declared target options and its SRAM.

Everything TFLM's Prepare decides (data types, quantization, multipliers,
activation range, padding, int32 indexing) is the operator layer's
(:func:`tvmdevice.ops.analyze`); what is left here is what this NPU adds.
Each check raises :class:`~tvmdevice.errors.Refusal` naming the limit and the
option that raises it, so placement reports it and tries the next device.
"""

from __future__ import annotations

from typing import Any

from tvmdevice.errors import Refusal
from tvmdevice.ir import ABSENT, Graph, Operator

__all__ = ["ALLOC_ALIGNMENT", "check_limit", "check_fits_sram", "check_int16", "check_accumulator", "HALF_RATE"]

#: Alignment the executor allocates tensors with; used to estimate SRAM need.
ALLOC_ALIGNMENT = 64


def check_limit(value: int, options: dict[str, Any], option: str, what: str) -> None:
    """Refuse ``value`` above the limit the target option ``-<option>`` declares."""
    limit = int(options[option])
    if value > limit:
        raise Refusal(f"{what} {value} exceeds the NPU limit -{option}={limit}")


#: int16 elements move through the 16-bit datapath at half the int8 rate (the cycle model's factor,
#: ``WOOFLES_INT16_RATE`` in ``csrc/woofles_tile.h``).
HALF_RATE = 2


def check_int16(options: dict[str, Any], what: str) -> None:
    """Refuse int16 ``what`` on a device declared without the 16-bit datapath (``-int16=0``)."""
    if not options["int16"]:
        raise Refusal(f"{what} need the 16-bit datapath, which this NPU is declared without (-int16=0)")


def check_accumulator(bias_bits: int, options: dict[str, Any]) -> None:
    """Refuse an int16x8 layer accumulating in ``bias_bits`` wider than the MAC accumulators (``-acc_bits``)."""
    acc = int(options["acc_bits"])
    if bias_bits > acc:
        raise Refusal(f"it accumulates in {bias_bits} bits (TFLM's int16x8 rule for its bias), beyond the NPU's "
                      f"{acc}-bit accumulators (-acc_bits={acc})")


def check_fits_sram(graph: Graph, op: Operator, options: dict[str, Any]) -> None:
    """Refuse an operator whose own tensors cannot all be resident in SRAM at once."""
    need = 0
    for i in (*op.inputs, *op.outputs):
        if i != ABSENT:
            need += -(-graph.tensor(i).nbytes // ALLOC_ALIGNMENT) * ALLOC_ALIGNMENT
    sram = int(options["sram_kb"]) * 1024
    if need > sram:
        raise Refusal(f"its tensors need {need} B of SRAM, the device has {sram} B (-sram_kb)")
