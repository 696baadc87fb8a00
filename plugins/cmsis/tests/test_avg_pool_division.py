"""The AVX2 AVERAGE_POOL_2D divides in float32 (simd_x86_pooling.c): for every window of at most 256 taps and
every sum its int8 taps can reach, truncating the float32 quotient gives TFLM's integer rounding division."""

from __future__ import annotations

import numpy as np


def test_float32_division_is_tflm_rounding_for_every_reachable_sum():
    for count in range(1, 257):
        half = count // 2
        s = np.arange(-128 * count, 127 * count + 1, dtype=np.int64)
        n = s + np.sign(s) * half  # the kernel: half signed as the sum (0 for a zero sum)
        ours = np.trunc(n.astype(np.float32) / np.float32(count)).astype(np.int64)
        tflm = np.where(s > 0, s + half, s - half)  # TFLM: (s + half) / count if s > 0 else (s - half) / count
        tflm = np.sign(tflm) * (np.abs(tflm) // count)  # C's division truncates toward zero
        assert np.array_equal(ours, tflm), f"{count} taps"
