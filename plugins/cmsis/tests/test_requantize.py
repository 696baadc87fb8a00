"""The kernels' vectorizable requantization equals the core's quant.h, value for value.

``tvmd_cmsis_requantize_s8`` restates tvmd_multiply_by_quantized_multiplier
so the compiler can vectorize it; the restatement relies on multipliers being
non-negative Q31 values and shifts in [-31, 30], which is all the prepare step
produces.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import tvmdevice
from hypothesis import given
from hypothesis import strategies as st

import tvmdevice_cmsis
from tvmdevice_cmsis import _kernels

from conftest import SIMD_PATHS, simd_path

INT32 = st.integers(-(2**31), 2**31 - 1)
EDGES = [-(2**31), -(2**31) + 1, -(2**30), -1, 0, 1, 2**30, 2**31 - 1]


def both(acc, mult, shift, offset=0, lo=-128, hi=127):
    """Each kernel path's result, and quant.h's."""
    acc, mult, shift = (np.asarray(v, dtype=np.int32) for v in (acc, mult, shift))
    ref = np.zeros(acc.size, np.int8)
    _kernels.requantize_reference(acc, mult, shift, offset, lo, hi, ref)
    results = []
    for simd in SIMD_PATHS:
        ours = np.zeros(acc.size, np.int8)
        with simd_path(simd):
            _kernels.requantize(acc, mult, shift, offset, lo, hi, ours)
        results.append(ours)
    return results, ref


@given(st.lists(st.tuples(st.one_of(INT32, st.sampled_from(EDGES)), st.integers(0, 2**31 - 1),
                          st.integers(-31, 30)), min_size=1, max_size=200),
       st.integers(-128, 127))
def test_matches_quant_h(values, offset):
    acc, mult, shift = zip(*values)
    results, ref = both(acc, mult, shift, offset)
    for ours in results:
        assert np.array_equal(ours, ref)


def test_matches_quant_h_on_a_dense_grid():
    # Small accumulators and every shift with typical multipliers: where
    # the ties of both roundings actually occur.
    rng = np.random.default_rng(0)
    acc = np.tile(np.arange(-4096, 4096), 62)
    shift = np.repeat(np.arange(-31, 31), 8192)
    mult = rng.integers(2**30, 2**31, size=acc.size)
    mult[::7] = 2**30  # exactly 0.5: ties on every odd product
    # No clamp: the int8 store keeps the low 8 bits of every result.
    results, ref = both(acc, mult, shift, 0, -(2**31), 2**31 - 1)
    for ours in results:
        assert np.array_equal(ours, ref)


def test_m_profile_requantizations_match_the_portable_ones(tmp_path):
    # requantize_m.h's scalar forms (the DSP / Helium builds' 32-bit and
    # 64-bit requantization) against tvmdevice/quant.h and fixedpoint.h over
    # every shift the operator layer allows: exhaustive accumulators near 0,
    # edge values, ties and dense random operands (csrc/check_requantize_m.c).
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    csrc = Path(tvmdevice_cmsis.__file__).parent / "csrc"
    exe = tmp_path / "check"
    subprocess.run(["cc", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", tvmdevice.get_include(),
                    "-I", str(csrc), str(Path(__file__).parent / "csrc" / "check_requantize_m.c"), "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip().endswith("mismatches: 0"), out.stdout
    assert int(out.stdout.split("checked: ")[1].split()[0]) > 100_000_000
