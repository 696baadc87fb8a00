"""Prepare-time quantization math: TFLM's rounding rules, checked against the C twin."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tvmdevice.quantization import (
    activation_range,
    multiply_by_quantized_multiplier,
    quantize_multiplier,
    round_half_away,
)


@pytest.mark.parametrize("x, expected", [(0.5, 1), (-0.5, -1), (1.5, 2), (2.5, 3), (-2.5, -3), (0.49, 0)])
def test_round_half_away_from_zero(x, expected):
    assert round_half_away(x) == expected


def test_quantize_multiplier_ties_round_away_like_tflm():
    # mantissa * 2**31 lands exactly on .5 here: TfLiteRound gives ...825, round() would give ...824.
    assert quantize_multiplier(0.5 + 2**-32) == (1073741825, 0)
    assert quantize_multiplier(0.0) == (0, 0)
    assert quantize_multiplier(1.0) == (1 << 30, 1)
    assert quantize_multiplier(2.0**-40) == (0, 0)


@settings(max_examples=300, deadline=None)
@given(st.floats(1e-9, 100.0, allow_nan=False))
def test_quantize_multiplier_represents_the_real_value(real):
    m, shift = quantize_multiplier(real)
    if m:
        assert (1 << 30) <= m < (1 << 31)
        assert abs(m * 2.0 ** (shift - 31) - real) <= real * 2**-30


def test_activation_range_divides_in_float32_and_rounds_away():
    # 6 / 2.4 in float32 is exactly 2.5: TFLM gives 3.
    assert activation_range("RELU6", 2.4, 0) == (0, 3)
    assert activation_range("RELU", 0.1, -128) == (-128, 127)
    assert activation_range("RELU_N1_TO_1", 0.01, 0) == (-100, 100)
    assert activation_range("NONE", 0.1, 5) == (-128, 127)
    with pytest.raises(ValueError, match="TANH"):
        activation_range("TANH", 0.1, 0)


def _reference_mbqm(x: int, m: int, shift: int) -> int:
    """Scalar double rounding with Python ints (the definition, not the vectorised code)."""
    left, right = max(shift, 0), max(-shift, 0)
    a = ((x << left) + 2**31) % 2**32 - 2**31
    if a == m == -(2**31):
        high = 2**31 - 1
    else:
        ab = a * m
        nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
        n = ab + nudge
        high = abs(n) // 2**31 * (1 if n >= 0 else -1)  # C's truncating division
    mask = (1 << right) - 1
    rem = high & mask
    threshold = (mask >> 1) + (1 if high < 0 else 0)
    return (high >> right) + (1 if rem > threshold else 0)


@settings(max_examples=300, deadline=None)
@given(st.integers(-(2**31), 2**31 - 1), st.integers(1 << 30, (1 << 31) - 1), st.integers(-31, 7))
def test_vectorised_requant_matches_the_scalar_definition(x, m, shift):
    got = int(multiply_by_quantized_multiplier(np.array([x]), m, shift)[0])
    assert got == _reference_mbqm(x, m, shift)


def test_quant_h_matches_the_reference_definition(tmp_path):
    import shutil
    import subprocess
    from pathlib import Path

    import tvmdevice

    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    src = Path(__file__).parent / "csrc" / "check_quant_h.c"
    exe = tmp_path / "check"
    subprocess.run(["cc", "-O2", "-std=c99", "-I", tvmdevice.get_include(), str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "mismatches: 0", out.stdout
