"""The firmware profiler: an export built with its profiling marks, run on a Cortex-M under QEMU, reports
the instructions of each operator and device call of the measured run, which with the runtime outside the
calls and the marks' own add up to the whole run exactly; ``run DIR --profile`` prints them and ``--trace``
writes them as a Perfetto trace.

Cortex-M runs need ``arm-none-eabi-gcc``, newlib and ``qemu-system-arm``: without them they skip, saying
what to install, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from export_inputs import random_inputs

import tvmdevice
from tvmdevice.aot.builder import demo_model
from tvmdevice.aot.schedule import KernelStep
from tvmdevice.cli.main import main
from tvmdevice.export import run_export
from tvmdevice.export.profile import MARKS, RUNTIME
from tvmdevice.testing.firmware import require_tools

pytestmark = pytest.mark.export

MODELS = ["hello_world_int8", "micro_speech_int8", "kws_dscnn_int8", "ad_fc_autoencoder_int8"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    module = tvmdevice.compile(demo_model(), "cmsis-nn, c", name="demo")
    return module, module.export(tmp_path_factory.mktemp("profile") / "demo")


def _kernel_ops(module) -> list[int]:
    return [s.call.index for s in module.schedule.steps if isinstance(s, KernelStep)]


def _check_profile(module, out, cpu: str, inputs, against_plain: bool = True) -> None:
    got = run_export(out, cpu, inputs, profile=True)
    profile = got.profile
    assert profile is not None and profile.total == got.instructions
    lines = profile.lines()
    assert sum(n for _, _, n in lines) == profile.total  # exactly
    assert [c.operator for c in profile.calls if c.operator is not None] == _kernel_ops(module)
    assert all(c.instructions > 0 for c in profile.calls)
    assert profile.runtime > 0 and profile.marks > 0
    assert [what for what, _, _ in lines[-2:]] == [RUNTIME, MARKS]
    if against_plain:
        plain = run_export(out, cpu, inputs)
        for a, b in zip(plain.outputs, got.outputs):
            np.testing.assert_array_equal(a, b)  # the marks change no result
        # outside the marks' own instructions, each costs a handful (its call, its argument, its return)
        assert 0 < profile.total - profile.marks - plain.instructions <= 8 * 2 * len(profile.calls)


@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4"])
def test_demo_profile_sums_to_the_run(demo, cpu):
    require_tools(cpu)
    module, out = demo
    _check_profile(module, out, cpu, random_inputs(module.graph, seed=2))


@pytest.mark.parametrize("name", MODELS)
def test_shared_models_profile_sums_to_the_run(models_dir, tmp_path, name):
    require_tools("cortex-m55")
    module = tvmdevice.compile((models_dir / f"{name}.tflite").read_bytes(), "cmsis-nn, c", name=name)
    out = module.export(tmp_path / name)
    # the lines sum to the run on each; against the unprofiled build on one (a second build and run)
    _check_profile(module, out, "cortex-m55", random_inputs(module.graph, seed=3),
                   against_plain=name == "kws_dscnn_int8")


def test_woofles_calls_are_profiled_per_device(tmp_path):
    if "woofles" not in tvmdevice.get_registry().device_names():
        pytest.skip("the woofles plugin is not installed (pip install ./plugins/woofles)")
    require_tools("cortex-m55")
    module = tvmdevice.compile(demo_model(), "woofles, c", name="demo")
    out = module.export(tmp_path / "demo")
    got = run_export(out, "cortex-m55", random_inputs(module.graph), profile=True)
    profile = got.profile
    labels = [c.label for c in profile.calls]
    assert labels[0] == "Activate" and labels[-1] == "Deactivate"
    assert any(label.startswith("copy tensor") for label in labels)
    per_device = profile.per_device()
    assert set(per_device) == {"woofles", "c"}
    assert sum(per_device.values()) + profile.runtime + profile.marks == profile.total


def test_run_cli_profile_and_trace(demo, tmp_path, capsys):
    require_tools("cortex-m55")
    module, out = demo
    np.save(tmp_path / "x.npy", random_inputs(module.graph)[0])
    trace = tmp_path / "fw.json"
    assert main(["run", str(out), "--cpu", "cortex-m55", "-i", str(tmp_path / "x.npy"), "--profile",
                 "--trace", str(trace)]) == 0
    text = capsys.readouterr().out
    assert "profile of the measured run on cortex-m55" in text and RUNTIME in text
    ops = _kernel_ops(module)
    for op in ops:
        assert f"op{op} {module.graph.operators[op].type}" in text
    events = json.loads(trace.read_text())["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert [e["name"] for e in kernels] == [f"op{op} {module.graph.operators[op].type}" for op in ops]
    run = next(e for e in events if e.get("cat") == "run")
    assert all(run["ts"] <= e["ts"] and e["ts"] + e["dur"] <= run["ts"] + run["dur"] for e in kernels)
    starts = [e["ts"] for e in kernels]
    assert starts == sorted(starts)

    assert main(["run", str(out), "--cpu", "cortex-m55", "-i", str(tmp_path / "x.npy"), "--profile", "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert [o["op_index"] for o in j["operators"]] == ops
    assert {o["unit"] for o in j["operators"]} == {"instructions"}
    assert all(o["device"] == "cmsis-nn" and o["value"] > 0 for o in j["operators"])
    p = j["profile"]
    assert sum(c["instructions"] for c in p["calls"]) + p["runtime"] + p["marks"] == p["total"] == j["instructions"]


def test_profile_on_the_host_is_refused_in_one_line(demo, tmp_path, capsys):
    module, out = demo
    np.save(tmp_path / "x.npy", random_inputs(module.graph)[0])
    for flag in (["--profile"], ["--trace", str(tmp_path / "t.json")]):
        assert main(["run", str(out), "-i", str(tmp_path / "x.npy"), *flag]) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "counts instructions under QEMU" in err[0] and "cortex-m55" in err[0]
    assert not (tmp_path / "t.json").exists()


def test_trace_path_is_checked_before_building(tmp_path, capsys):
    module = tvmdevice.compile(demo_model(), "c", name="demo")
    out = module.export(tmp_path / "demo")
    np.save(tmp_path / "x.npy", random_inputs(module.graph)[0])
    missing = tmp_path / "no" / "such" / "t.json"
    # an output path that cannot be written is a usage error, as for every command
    assert main(["run", str(out), "--cpu", "cortex-m55", "-i", str(tmp_path / "x.npy"), "--trace", str(missing)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(missing) in err[0] and "does not exist" in err[0]
    assert not (out / "build" / "cortex-m55").exists()


def test_bench_export_profile(demo, tmp_path, capsys):
    require_tools("cortex-m55")
    module, out = demo
    np.save(tmp_path / "x.npy", random_inputs(module.graph)[0])
    assert main(["bench", str(out), "--cpu", "cortex-m55", "-i", str(tmp_path / "x.npy"), "--profile"]) == 0
    text = capsys.readouterr().out
    assert "profile of the measured run on cortex-m55" in text
    assert all(f"op{op} " in text for op in _kernel_ops(module))
    assert main(["bench", str(out), "-i", str(tmp_path / "x.npy"), "--profile"]) == 1  # the host: refused
    assert "counts instructions under QEMU" in capsys.readouterr().err
