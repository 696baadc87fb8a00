"""The host speed benchmark (bench/bench_cmsis.py): one built workload measured, paired with XNNPACK, on every
SIMD level, its target checks, the VNNI gain check and the built networks.  Times are not asserted."""

from __future__ import annotations

import pytest
from bench_scripts import load

pytest.importorskip("tvmdevice_cmsis")
pytest.importorskip("ai_edge_litert.interpreter")
pytest.importorskip("tflite_micro.python.tflite_micro.runtime")


bench = load("bench_cmsis")
built_models = load("built_models")


@pytest.fixture(scope="module")
def measured() -> tuple[dict, list[dict]]:
    from tvmdevice.aot.builder.presets import single_op_model

    data = single_op_model("ADD", input_shape=(1, 4, 5, 3), input2_scale=0.07, seed=2)
    w = bench.Workload("add", "net", data, "ADD [1,4,5,3]")
    return bench.measure(w, rounds=2, min_time=0.001, levels=bench.kernel_paths(), profile_rounds=3)


def test_a_workload_is_paired_with_xnnpack_on_every_level_and_bit_exact(measured):
    from tvmdevice_cmsis import _kernels

    row, _ = measured
    assert row["bit_exact"] is True and row["devices"] == ["cmsis-nn"]
    assert [level["level"] for level in row["levels"]] == bench.kernel_paths()
    assert row["default_level"] == _kernels.max_simd_level()
    for level in row["levels"]:
        assert level["ms"] > 0 and level["xnnpack_over_ours"] > 0
    assert row["xnnpack_ms"] > 0 and row["tflm_ms"] > 0 and row["target"] == bench.XNNPACK_TARGET


def test_each_operator_is_profiled_on_every_level(measured):
    _, ops = measured
    assert [(r["label"], r["device"]) for r in ops] == [("#0 ADD", "cmsis-nn")]
    assert set(ops[0]["us"]) == set(bench.kernel_paths())
    levels = set(bench.kernel_paths())
    expected = {f"{v}/{b}" for v, b in (("avx512vnni", "avx512"), ("avxvnni", "avx2")) if {v, b} <= levels}
    assert set(ops[0]["gains"]) == expected


def _row(name: str, ratio: float, kind: str = "model", **extra) -> dict:
    return {"workload": name, "kind": kind, "ops": ["CONV_2D"], "bit_exact": True, "default_level": "avx2",
            "target": bench.XNNPACK_TARGET if kind != "operator" else None, "tflm_over_ours": 30.0,
            "levels": [{"level": "avx2", "ms": 1.0, "xnnpack_over_ours": ratio},
                       {"level": "portable", "ms": 4.0, "xnnpack_over_ours": 0.25}], **extra}


def test_a_missed_xnnpack_target_at_the_default_level_is_named():
    missed = bench.failures([_row("kws_dscnn_int8", 0.66), _row("resnet8_block", 0.999, kind="net"),
                             _row("micro_speech_int8", 1.0), _row("conv 3x3", 0.5, kind="operator")])
    assert missed == ["kws_dscnn_int8: XNNPACK / tvmdevice 0.66 at avx2 (target: >= 1.0)",
                      "resnet8_block: XNNPACK / tvmdevice 1.00 at avx2 (target: >= 1.0)"]


def test_bit_differences_and_the_tflite_micro_target_are_reported():
    missed = bench.failures([_row("kws_dscnn_int8", 1.2, bit_exact=False, tflm_over_ours=3.0)])
    assert missed == ["kws_dscnn_int8: output differs from tflite-micro",
                      "kws_dscnn_int8: only 3.0x faster than tflite-micro (target: 10x)"]


def test_save_refuses_a_partial_measurement(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--save", "--workload", "add"])
    assert "--save keeps the README's whole tables" in capsys.readouterr().err


def test_every_simd_level_the_cpu_runs_is_measured_highest_first_and_the_portable_c_always():
    from tvmdevice_cmsis import _kernels

    levels = bench.kernel_paths()
    assert levels[0] == _kernels.max_simd_level() and levels[-1] == "portable"
    assert bench.kernel_paths("portable") == ["portable"]
    with pytest.raises(SystemExit, match="lacks the nonesuch"):
        bench.kernel_paths("nonesuch")


def test_workloads_are_chosen_by_name_and_an_unknown_name_is_refused():
    chosen = bench.workloads("ops", ["mobilenet_v1_block", "depthwise 3x3 8ch", "resnet8_block"])
    assert [w.name for w in chosen] == ["resnet8_block", "mobilenet_v1_block", "depthwise 3x3 8ch"]
    assert {w.kind for w in chosen} == {"net", "operator"}
    with pytest.raises(SystemExit, match="no workload named nonesuch"):
        bench.workloads("ops", ["nonesuch"])


def _run_against_tflm(data: bytes, seed: int):
    import numpy as np

    import tvmdevice
    from tvmdevice.testing.oracle import tflm_run

    module = tvmdevice.compile(data, "cmsis-nn, c")
    shape = module.graph.tensor(module.graph.inputs[0]).shape
    x = np.random.default_rng(seed).integers(-128, 128, size=shape).astype(np.int8)
    with module.executor() as ex:
        got = ex.run([x])[0]
    np.testing.assert_array_equal(got, tflm_run(data, [x]).output(0))
    return module


def test_the_resnet_style_model_runs_bit_exact_with_tflite_micro():
    module = _run_against_tflm(built_models.resnet_style(blocks=1), 3)
    ops = [op.type for op in module.graph.operators]
    assert ops.count("CONV_2D") == 3 and "ADD" in ops


def test_the_resnet8_block_has_a_3_channel_stem_and_runs_bit_exact():
    module = _run_against_tflm(built_models.resnet8_block(), 5)
    graph = module.graph
    assert graph.tensor(graph.inputs[0]).shape == (1, 32, 32, 3)
    assert [op.type for op in graph.operators] == ["CONV_2D", "CONV_2D", "CONV_2D", "ADD"]
    stem = graph.operators[0]
    assert graph.tensor(stem.outputs[0]).shape == (1, 32, 32, 16)
    assert graph.operators[3].inputs[0] == stem.outputs[0]  # the skip connection adds the stem's output


def test_the_mobilenet_block_runs_bit_exact_with_tflite_micro():
    module = _run_against_tflm(built_models.mobilenet_v1_block(), 4)
    assert [op.type for op in module.graph.operators] == ["DEPTHWISE_CONV_2D", "CONV_2D"]
    assert module.graph.tensor(module.graph.inputs[0]).shape == (1, 48, 48, 8)


def test_the_mobilenet_v2_stem_runs_on_cmsis_nn():
    import tvmdevice

    module = tvmdevice.compile(built_models.mobilenet_v2_stem(), "cmsis-nn, c")
    assert [op.type for op in module.graph.operators] == ["CONV_2D"]
    assert [p.device for p in module.placement.ops] == ["cmsis-nn"]
