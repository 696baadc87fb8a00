"""The host speed benchmark (bench/bench_cmsis.py): one built workload measured end to end on every
kernel path, its table, its README writing and its target checks.  Times are not asserted."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("tvmdevice_cmsis")
pytest.importorskip("ai_edge_litert.interpreter")
pytest.importorskip("tflite_micro.python.tflite_micro.runtime")

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "bench_cmsis.py"
_spec = importlib.util.spec_from_file_location("bench_cmsis", SCRIPT)
bench = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = bench  # its dataclasses look their module up
_spec.loader.exec_module(bench)


@pytest.fixture(scope="module")
def row() -> dict:
    from tvmdevice.aot.builder.presets import single_op_model

    data = single_op_model("ADD", input_shape=(1, 4, 5, 3), input2_scale=0.07, seed=2)
    return bench.measure(bench.Workload("add", "operator", data, "ADD [1,4,5,3]"), repeat=1, min_time=0.0)


def test_a_workload_is_measured_on_every_kernel_path_and_bit_exact(row):
    assert row["bit_exact"] is True
    assert row["devices"] == ["cmsis-nn"]
    for path in bench.kernel_paths():
        assert row[f"{path}_invoke_ms"] > 0 and row[f"{path}_run_ms"] > 0
    for key in ("tflm_ms", "litert_xnnpack_ms", "litert_builtin_ms"):
        assert row[key] > 0
    assert row["ours_over_xnnpack"] == pytest.approx(row[f"{row['path']}_invoke_ms"] / row["litert_xnnpack_ms"])


def test_the_table_names_the_cpu_and_every_workload(row):
    cpu = bench.cpu_description()
    assert "avx2" in cpu or "none of them" in cpu or "lacks" in cpu
    table = bench.markdown([row], cpu)
    assert table.startswith(f"CPU: {cpu}.")
    assert "| add (ADD [1,4,5,3]) |" in table and table.rstrip().endswith("| yes |")


def test_the_readme_table_is_replaced_between_its_markers(tmp_path, row):
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{bench.README_BEGIN}\nold\n{bench.README_END}\n\n## after\n")
    bench.write_readme(readme, "new table\n")
    assert readme.read_text() == f"# x\n\n{bench.README_BEGIN}\nnew table\n{bench.README_END}\n\n## after\n"
    readme.write_text("no markers")
    with pytest.raises(SystemExit, match="markers"):
        bench.write_readme(readme, "t")


def test_missed_targets_and_bit_differences_are_reported(row):
    slow = {**row, "workload": "kws_dscnn_int8", "kind": "model", "ops": ["CONV_2D"], "tflm_over_ours": 3.0,
            "ours_over_xnnpack": 1.5}
    wrong = {**row, "bit_exact": False}
    missed = bench.failures([row, slow, wrong])
    assert any("kws_dscnn_int8: only 3.0x faster than tflite-micro" in m for m in missed)
    assert any("kws_dscnn_int8: 1.50x LiteRT/XNNPACK" in m and "<= 1.0x" in m for m in missed)
    assert any("differs from tflite-micro" in m for m in missed)
    assert bench.failures([row]) == []


def test_the_resnet_style_model_runs_bit_exact_with_tflite_micro():
    import numpy as np

    import tvmdevice
    from tvmdevice.testing.oracle import tflm_run

    data = bench.resnet_style(blocks=1)
    module = tvmdevice.compile(data, "cmsis-nn, c")
    ops = [op.type for op in module.graph.operators]
    assert ops.count("CONV_2D") == 3 and "ADD" in ops
    x = np.random.default_rng(3).integers(-128, 128, size=(1, 32, 32, 16)).astype(np.int8)
    with module.executor() as ex:
        got = ex.run([x])[0]
    np.testing.assert_array_equal(got, tflm_run(data, [x]).output(0))


def test_every_simd_level_the_cpu_runs_is_measured_highest_first_and_the_portable_c_always():
    from tvmdevice_cmsis import _kernels

    levels = bench.kernel_paths()
    assert levels[0] == _kernels.max_simd_level() and levels[-1] == "portable"
    assert bench.kernel_paths("portable") == ["portable"]
    with pytest.raises(SystemExit, match="lacks the nonesuch"):
        bench.kernel_paths("nonesuch")


def test_the_mobilenet_block_runs_bit_exact_with_tflite_micro():
    import numpy as np

    import tvmdevice
    from tvmdevice.testing.oracle import tflm_run

    data = bench.mobilenet_v1_block()
    module = tvmdevice.compile(data, "cmsis-nn, c")
    assert [op.type for op in module.graph.operators] == ["DEPTHWISE_CONV_2D", "CONV_2D"]
    assert module.graph.tensor(module.graph.inputs[0]).shape == (1, 48, 48, 8)
    x = np.random.default_rng(4).integers(-128, 128, size=(1, 48, 48, 8)).astype(np.int8)
    with module.executor() as ex:
        got = ex.run([x])[0]
    np.testing.assert_array_equal(got, tflm_run(data, [x]).output(0))


def test_workloads_are_chosen_by_name_and_an_unknown_name_is_refused():
    chosen = bench.workloads("ops", ["mobilenet_v1_block", "depthwise 3x3 8ch", "mobilenet_v2_stem"])
    assert [w.name for w in chosen] == ["mobilenet_v1_block", "mobilenet_v2_stem", "depthwise 3x3 8ch"]
    with pytest.raises(SystemExit, match="no workload named nonesuch"):
        bench.workloads("ops", ["nonesuch"])


def test_the_mobilenet_v2_stem_runs_on_cmsis_nn():
    import tvmdevice

    module = tvmdevice.compile(bench.mobilenet_v2_stem(), "cmsis-nn, c")
    assert [op.type for op in module.graph.operators] == ["CONV_2D"]
    assert [p.device for p in module.placement.ops] == ["cmsis-nn"]
