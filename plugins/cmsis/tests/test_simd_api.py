"""The SIMD level controls of the host kernels (``_kernels``): a set of levels the CPU runs, one default."""

from __future__ import annotations

import pytest

from tvmdevice_cmsis import _kernels


def test_the_levels_are_a_set_the_cpu_runs_with_the_portable_c_always_and_the_highest_by_default():
    levels = _kernels.simd_levels()
    assert levels[0] == "portable" and set(levels) <= set(_kernels.SIMD_LEVELS)
    assert list(levels) == [name for name in _kernels.SIMD_LEVELS if name in levels]
    assert _kernels.max_simd_level() == levels[-1]
    if _kernels.simd_emulated():
        assert levels == _kernels.SIMD_LEVELS


def test_every_level_the_cpu_runs_can_be_forced():
    try:
        for name in _kernels.simd_levels():
            _kernels.set_simd_level(name)
    finally:
        assert _kernels.set_simd(True) == (_kernels.max_simd_level() != "portable")


def test_a_level_the_cpu_lacks_or_an_unknown_one_is_refused_naming_the_fix():
    with pytest.raises(ValueError, match="unknown SIMD level 'sse9'"):
        _kernels.set_simd_level("sse9")
    missing = [name for name in _kernels.SIMD_LEVELS if name not in _kernels.simd_levels()]
    if not missing:
        pytest.skip("this build runs every level (emulated, or a CPU with all of them)")
    with pytest.raises(ValueError, match="libsimde-dev"):
        _kernels.set_simd_level(missing[0])
