"""bench/bench_mcu.py's target check: over the TFLM + CMSIS-NN anchor on M55/M4 is a miss, saying when it is
over the tests' bound too; kernel code and bit differences are misses."""

from __future__ import annotations

import pytest
from bench_scripts import load

pytest.importorskip("tvmdevice_cmsis")
pytest.importorskip("rich")


bench_mcu = load("bench_mcu")


def _row(cpu: str, instructions: int, anchor: int | None, **extra) -> dict:
    return {"model": "kws_dscnn_int8", "cpu": cpu, "instructions": instructions, "anchor": anchor, "kernel_code": 1000,
            "bit_exact": True, **extra}


def test_over_the_anchor_is_a_miss_and_over_the_bound_says_so():
    bound = bench_mcu.TARGET_RATIO
    missed = bench_mcu.missed_targets([_row("cortex-m55", 1_110, 1_000), _row("cortex-m4", 1_000, 1_000),
                                       _row("cortex-m3", 9_000, None), _row("cortex-m4", int(1_000 * (bound + 0.1)),
                                                                            1_000)])
    assert missed == ["kws_dscnn_int8 on cortex-m55: 1.11× the anchor (goal: at most 1.0×)",
                      f"kws_dscnn_int8 on cortex-m4: {bound + 0.1:.2f}× the anchor (goal: at most 1.0×; over the "
                      f"tests' bound, {bound}×)"]


def test_kernel_code_and_bit_differences_are_misses():
    missed = bench_mcu.missed_targets([_row("cortex-m55", 900, 1_000, kernel_code=bench_mcu.KERNEL_CODE_LIMIT + 1),
                                       _row("cortex-m4", 900, 1_000, bit_exact=False)])
    assert missed == [f"kws_dscnn_int8: kernel code {bench_mcu.KERNEL_CODE_LIMIT + 1:,} B on M55",
                      "kws_dscnn_int8 on cortex-m4: not bit-exact"]


def test_save_refuses_a_partial_measurement(capsys):
    with pytest.raises(SystemExit):
        bench_mcu.main(["--save", "--no-built"])
    assert "--save keeps the README's whole tables" in capsys.readouterr().err
