"""The VNNI gain per operator (bench/vnni_gain.py) on synthetic timings: the gain is base time / VNNI time per
round, and a VNNI level slower than its base beyond the noise margin is flagged on the SIMD device's steps."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
_spec = importlib.util.spec_from_file_location("vnni_gain", BENCH / "vnni_gain.py")
vnni_gain = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = vnni_gain
_spec.loader.exec_module(vnni_gain)


def _rows(vnni_ns: list[int], base_ns: list[int], device: str = "cmsis-nn", shared: bool = True) -> list[dict]:
    per = {"avx512vnni": [{0: v} for v in vnni_ns], "avx512": [{0: b} for b in base_ns],
           "avx2": [{0: b} for b in base_ns]}
    return vnni_gain.gain_rows("kws_dscnn_int8", shared, per, [("#0 CONV_2D", device)])


def test_the_gain_is_the_median_of_paired_rounds():
    # round by round 2.0, 0.5 (a burst of load on the VNNI sample), 2.0: the median of the pairs is 2.0
    (row,) = _rows([10_000, 40_000, 10_000], [20_000, 20_000, 20_000])
    assert row["gains"] == {"avx512vnni/avx512": 2.0}  # avxvnni is not measured: no avxvnni/avx2 pair
    assert row["us"] == {"avx512vnni": 10.0, "avx512": 20.0, "avx2": 20.0}


def test_a_vnni_level_slower_beyond_the_margin_is_a_miss():
    rows = _rows([14_000] * 3, [11_800] * 3)
    missed = vnni_gain.mark_slower(rows)
    assert rows[0]["slower"] == ["avx512vnni/avx512"]
    assert missed == ["kws_dscnn_int8 #0 CONV_2D: avx512vnni 14.0 µs against avx512 11.8 µs (gain 0.84; margin 10%)"]


@pytest.mark.parametrize("vnni, base, flagged", [
    (10_800, 10_000, False),  # 8% slower: within the 10% margin
    (300, 200, False),  # 50% slower but 0.1 µs: below the floor
    (1_300, 1_000, True),  # 30% slower and 0.3 µs: above the floor
])
def test_the_margin_and_the_floor(vnni, base, flagged):
    rows = _rows([vnni] * 3, [base] * 3)
    missed = vnni_gain.mark_slower(rows)
    assert bool(missed) is flagged and bool(rows[0]["slower"]) is flagged


def test_other_devices_and_built_networks_are_reported_not_missed():
    on_c = _rows([20_000] * 3, [10_000] * 3, device="c")
    assert vnni_gain.mark_slower(on_c) == [] and on_c[0]["slower"] == []
    built = _rows([20_000] * 3, [10_000] * 3, shared=False)
    assert vnni_gain.mark_slower(built) == [] and built[0]["slower"] == ["avx512vnni/avx512"]


def test_a_wider_margin_accepts_what_the_default_flags():
    rows = _rows([14_000] * 3, [11_800] * 3)
    assert vnni_gain.mark_slower(rows, margin=0.25) == []
