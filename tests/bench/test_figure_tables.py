"""The speed tables render from rows alone (bench/host_tables.py, bench/mcu_tables.py): what each cell shows,
a missed target or a slower VNNI level in bold, and a CPU a row lacks as a dash."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


host_tables = _load("host_tables")
mcu_tables = _load("mcu_tables")


def _speed_row(name: str, kind: str, ratios: dict[str, float], target: float | None = 1.0) -> dict:
    return {"workload": name, "kind": kind, "what": "a shape", "cpu": "Some CPU; has avx2", "rounds": 5,
            "default_level": "avx2",
            "target": target, "levels": [{"level": k, "ms": 0.5, "xnnpack_over_ours": v} for k, v in ratios.items()],
            "xnnpack_ms": 0.4, "tflm_ms": 12.0, "tflm_over_ours": 24.0, "bit_exact": True}


def test_the_speed_table_pairs_each_level_with_its_ratio_and_bolds_a_missed_default():
    table = host_tables.speed_table([
        _speed_row("kws_dscnn_int8", "model", {"avx2": 0.8, "portable": 0.2}),
        _speed_row("resnet8_block", "net", {"avx2": 1.25, "portable": 0.1}),
        _speed_row("conv 3x3", "operator", {"avx2": 0.5}, target=None),
    ])
    lines = table.splitlines()
    assert lines[0] == ("CPU: Some CPU; has avx2. Full runs (inputs in, invoke, outputs out), one thread; times are "
                        "medians of the thread's CPU time, ratios the median of 5 paired rounds.")
    assert lines[2] == ("| workload | XNNPACK 1 thread (ms) | avx2 (default) (ms) | XNNPACK / tvmdevice | "
                        "portable (ms) | XNNPACK / tvmdevice | tflite-micro (ms) | tflite-micro / tvmdevice | "
                        "bit-exact |")
    assert lines[4] == "| kws_dscnn_int8 | 0.400 | 0.500 | **0.80** | 0.500 | 0.20 | 12.00 | 24.0 | yes |"
    assert lines[5] == "| resnet8_block (a shape) | 0.400 | 0.500 | 1.25 | 0.500 | 0.10 | 12.00 | 24.0 | yes |"
    assert lines[6] == "| conv 3x3 (a shape) | 0.400 | 0.500 | 0.50 | – | – | 12.00 | 24.0 | yes |"


def test_the_vnni_table_shows_each_pair_and_bolds_a_slower_level():
    rows = [{"workload": "kws", "label": "#0 CONV_2D", "us": {"avx512vnni": 14.4, "avx512": 12.1},
             "gains": {"avx512vnni/avx512": 0.86}, "slower": ["avx512vnni/avx512"]},
            {"workload": "kws", "label": "#2 CONV_2D", "us": {"avx512vnni": 8.1, "avx512": 11.6},
             "gains": {"avx512vnni/avx512": 1.42}, "slower": []}]
    lines = host_tables.vnni_gain_table(rows).splitlines()
    assert lines[0] == "| workload | operator | avx512vnni (µs) | avx512 (µs) | avx512vnni gain over avx512 |"
    assert lines[2:] == ["| kws | #0 CONV_2D | 14.4 | 12.1 | **0.86** |", "| kws | #2 CONV_2D | 8.1 | 11.6 | 1.42 |"]


def test_the_built_operator_table_has_one_line_per_operator_and_a_dash_for_a_missing_cpu():
    base = {"model": "resnet8_block", "operator": 0, "type": "CONV_2D", "shape": "32x32x3 -> 32x32x16, 3x3 /1",
            "macs": 442_368, "bit_exact": True}
    rows = [{**base, "cpu": "cortex-m55", "instructions": 724_863},
            {**base, "cpu": "cortex-m4", "instructions": 2_088_642},
            {**base, "operator": 3, "type": "ADD", "shape": "32x32x16 -> 32x32x16", "macs": 0, "cpu": "cortex-m55",
             "instructions": 237_751, "bit_exact": False}]
    lines = mcu_tables.built_operator_table(rows).splitlines()
    assert lines[0].endswith("| cortex-m55 instr (MACs/instr) | cortex-m4 instr (MACs/instr) | bit-exact |")
    assert lines[2] == ("| resnet8_block | 0 | CONV_2D | 32x32x3 -> 32x32x16, 3x3 /1 | 442,368 | 724,863 (0.61) | "
                        "2,088,642 (0.21) | yes |")
    assert lines[3] == "| resnet8_block | 3 | ADD | 32x32x16 -> 32x32x16 | 0 | 237,751 | – | **NO** |"


def test_the_operator_classes_sum_their_operators():
    rows = [{"class": "CONV_2D", "cpu": "cortex-m4", "macs": 100, "instructions": 400, "bit_exact": True},
            {"class": "CONV_2D", "cpu": "cortex-m4", "macs": 300, "instructions": 400, "bit_exact": True}]
    assert mcu_tables.operator_class_table(rows).splitlines()[2] == "| CONV_2D | 400 | 800 (0.50) | yes |"


def test_a_model_over_the_anchor_is_bold():
    base = {"model": "kws_dscnn_int8", "bit_exact": True, "kernel_code": 14_212, "flash": {"code": 1, "constants": 2,
            "params": 3}, "ram_pools": {"host": 16_256}, "arena": 27_360}
    rows = [{**base, "cpu": "cortex-m55", "instructions": 2_006_721, "anchor": 1_814_035},
            {**base, "cpu": "cortex-m4", "instructions": 7_417_874, "anchor": 7_698_242},
            {**base, "cpu": "cortex-m3", "instructions": 11_408_115, "anchor": None}]
    line = mcu_tables.model_table(rows).splitlines()[2]
    assert line.startswith("| kws_dscnn | 2,006,721 (**1.11×**) | 7,417,874 (0.96×) | 11,408,115 | yes | 14,212 |")
