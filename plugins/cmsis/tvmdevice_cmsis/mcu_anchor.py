"""What cmsis-nn on the microcontroller is measured against: the TFLM + CMSIS-NN anchor.

TFLM (main) + CMSIS-NN (main), ``arm-none-eabi-gcc`` 12.2 ``-O2``, one warm
inference of each shared model under QEMU (``mps3-an547`` Cortex-M55 with
Helium, ``mps2-an386`` Cortex-M4 with the DSP extension), executed guest
instructions; and TFLM's arena on M55 with CMSIS-NN.  The one copy of these
figures: ``bench/bench_mcu.py`` and the instruction-count tests read them here.
"""

from __future__ import annotations

__all__ = ["ANCHOR", "TARGET_RATIO", "TIGHTER_RATIO", "ratio_bound", "KERNEL_CODE_LIMIT"]

#: Model (file stem) -> CPU -> instructions of one warm inference; ``"arena"``: TFLM's arena in bytes.
ANCHOR: dict[str, dict[str, int]] = {
    "hello_world_int8": {"cortex-m55": 2_234, "cortex-m4": 3_621, "arena": 1_312},
    "micro_speech_int8": {"cortex-m55": 1_008_293, "cortex-m4": 1_495_456, "arena": 7_824},
    "kws_dscnn_int8": {"cortex-m55": 1_814_035, "cortex-m4": 7_698_242, "arena": 27_360},
    "ad_fc_autoencoder_int8": {"cortex-m55": 150_294, "cortex-m4": 583_225, "arena": 9_712},
}
#: Instructions per inference within this factor of the anchor on M55 and M4 (the target): at or under it.
TARGET_RATIO = 1.0
#: Model (file stem) -> CPU -> a bound below the target where the kernels are well under it, so a
#: regression there shows (kws_dscnn on M55 runs at 0.80x).
TIGHTER_RATIO: dict[str, dict[str, float]] = {"kws_dscnn_int8": {"cortex-m55": 0.85}}


def ratio_bound(model: str, cpu: str) -> float:
    """The factor of the anchor ``model``'s instructions on ``cpu`` must stay within."""
    return TIGHTER_RATIO.get(model, {}).get(cpu, TARGET_RATIO)


#: Kernel code (the cmsis-nn kernels and the generated run function) on M55 at most this many bytes.
KERNEL_CODE_LIMIT = 32 * 1024
