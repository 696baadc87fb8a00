"""bench/bench_mcu.py's target check: over the TFLM + CMSIS-NN anchor on M55/M4, or over a tighter bound the tests
hold a model to, is a miss naming which; kernel code and bit differences are misses."""

from __future__ import annotations

import pytest
from bench_scripts import load

pytest.importorskip("tvmdevice_cmsis")
pytest.importorskip("rich")


bench_mcu = load("bench_mcu")


def _row(cpu: str, instructions: int, anchor: int | None, **extra) -> dict:
    return {"model": "kws_dscnn_int8", "cpu": cpu, "instructions": instructions, "anchor": anchor, "kernel_code": 1000,
            "bit_exact": True, **extra}


def test_over_the_anchor_or_a_tighter_bound_is_a_miss_naming_which():
    tight = bench_mcu.ratio_bound("kws_dscnn_int8", "cortex-m55")
    assert tight < bench_mcu.PARITY == bench_mcu.ratio_bound("kws_dscnn_int8", "cortex-m4")
    between = int(1_000 * (tight + bench_mcu.PARITY) / 2)
    missed = bench_mcu.missed_targets([_row("cortex-m55", 1_110, 1_000), _row("cortex-m4", 1_000, 1_000),
                                       _row("cortex-m3", 9_000, None), _row("cortex-m4", 1_100, 1_000),
                                       _row("cortex-m55", between, 1_000), _row("cortex-m4", between, 1_000)])
    assert missed == [f"kws_dscnn_int8 on cortex-m55: 1.11× the anchor (goal: at most 1.0×; the tests' bound: at "
                      f"most {tight}×)",
                      "kws_dscnn_int8 on cortex-m4: 1.10× the anchor (goal: at most 1.0×)",
                      f"kws_dscnn_int8 on cortex-m55: {between / 1_000:.2f}× the anchor (the tests' bound: at most "
                      f"{tight}×)"]


def test_kernel_code_and_bit_differences_are_misses():
    missed = bench_mcu.missed_targets([_row("cortex-m55", 500, 1_000, kernel_code=bench_mcu.KERNEL_CODE_LIMIT + 1),
                                       _row("cortex-m4", 500, 1_000, bit_exact=False)])
    assert missed == [f"kws_dscnn_int8: kernel code {bench_mcu.KERNEL_CODE_LIMIT + 1:,} B on M55",
                      "kws_dscnn_int8 on cortex-m4: not bit-exact"]


def test_save_refuses_a_partial_measurement(capsys):
    with pytest.raises(SystemExit):
        bench_mcu.main(["--save", "--no-built"])
    assert "--save keeps the README's whole tables" in capsys.readouterr().err
