"""bench/bench_mcu.py's operator programs on a built shape: every cmsis-nn operator of the MobileNetV1 block
runs alone under QEMU on Cortex-M55, bit-exact with the host's kernel, its MACs and instructions counted, and
its row renders in the built-shapes table."""

from __future__ import annotations

import pytest
from bench_scripts import load

from tvmdevice.testing.firmware import require_tools

pytest.importorskip("tvmdevice_cmsis")
pytest.importorskip("rich")
pytestmark = pytest.mark.export


def test_the_mobilenet_block_runs_operator_by_operator_on_m55(tmp_path):
    require_tools("cortex-m55")
    bench_mcu = load("bench_mcu")
    built_models = load("built_models")
    rows = bench_mcu.measure_operators("mobilenet_v1_block", built_models.mobilenet_v1_block(), ("cortex-m55",),
                                       tmp_path)
    assert [(r["type"], r["shape"]) for r in rows] == [
        ("DEPTHWISE_CONV_2D", "48x48x8 -> 48x48x8, 3x3 /1"), ("CONV_2D", "48x48x8 -> 48x48x16, 1x1 /1")]
    assert [r["macs"] for r in rows] == [48 * 48 * 8 * 9, 48 * 48 * 16 * 8]
    assert all(r["bit_exact"] and r["instructions"] > 0 and r["cpu"] == "cortex-m55" for r in rows)
    table = load("mcu_tables").built_operator_table(rows)
    line = f"| mobilenet_v1_block | 1 | CONV_2D | 48x48x8 -> 48x48x16, 1x1 /1 | 294,912 | {rows[1]['instructions']:,} ("
    assert line in table
