"""Exports built and run: on the host and on Cortex-M55/M4 under QEMU the generated C gives the Python
executor's bits for every tensor, reports a failing call by its operator, and fails cleanly.

Cortex-M runs need ``arm-none-eabi-gcc``, newlib and ``qemu-system-arm``: without them they skip,
saying what to install, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest
from export_inputs import random_inputs
from plugin_fixtures import load_fixture_module

import tvmdevice
from tvmdevice import firmware
from tvmdevice.aot.builder import demo_model
from tvmdevice.aot.compiler import for_firmware
from tvmdevice.aot.memory_plan import tensor_key
from tvmdevice.cli.main import main
from tvmdevice.errors import KernelError
from tvmdevice.export import build_export, load_metadata, run_export, run_export_frames
from tvmdevice.firmware import FirmwareTimeoutError
from tvmdevice.testing.firmware import require_tools

CPUS = ["host", "cortex-m55", "cortex-m4"]


@pytest.fixture(scope="module")
def demo_export(tmp_path_factory):
    """The demo CNN for ``c``, every tensor kept (external pools: the runner owns the pool and dumps it)."""
    module = tvmdevice.compile(demo_model(), "c", name="demo", preserve_all_tensors=True)
    out = module.export(tmp_path_factory.mktemp("demo") / "demo", external_pools=True)
    return module, out


@pytest.mark.parametrize("cpu", CPUS)
def test_every_tensor_matches_the_python_executor(demo_export, cpu):
    require_tools(cpu)
    module, out = demo_export
    inputs = random_inputs(module.graph, seed=1)
    firmware_module = for_firmware(module)
    with firmware_module.executor() as ex:
        expected = ex.run(inputs)
        tensors = {t: ex.tensor(t) for t in range(len(module.graph.tensors))
                   if not module.graph.tensors[t].is_constant}
    got = run_export(out, cpu, inputs, read_pool=True)
    for a, b in zip(expected, got.outputs):
        np.testing.assert_array_equal(a, b)
    pool, offsets = got.pool, firmware_module.plan.pools["host"].offsets
    checked = 0
    for t, value in tensors.items():
        key = tensor_key(firmware_module.schedule.source(t), "host")
        if key not in offsets:
            continue
        raw = pool[offsets[key]: offsets[key] + value.nbytes]
        np.testing.assert_array_equal(np.frombuffer(raw, value.dtype).reshape(value.shape), value,
                                      err_msg=f"tensor {t} on {cpu}")
        checked += 1
    assert checked >= len(module.graph.operators)
    if cpu != "host":
        assert got.instructions and got.instructions > 1000
        assert got.result.stack_used and 0 < got.result.stack_used < 8192


def test_a_failing_kernel_is_reported_by_its_operator(tmp_path, registry, capsys):
    require_tools("host")
    load_fixture_module("fixture_accel")
    registry.register(load_fixture_module("fixture_c_failing"), "cfail")
    module = tvmdevice.compile(demo_model(), "cfail, c", registry=registry, name="add")
    [failing] = [p for p in module.placement.ops if p.device == "cfail"]
    out = module.export(tmp_path / "add")
    with pytest.raises(KernelError, match=rf"failed with status 7: tvmd_test_fail \(operator #{failing.op_index} "
                                          rf"ADD on cfail\)"):
        run_export(out, "host", random_inputs(module.graph))
    np.save(tmp_path / "x.npy", random_inputs(module.graph)[0])
    assert main(["run", str(out), "-i", str(tmp_path / "x.npy")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"operator #{failing.op_index} ADD on cfail" in err[0]
    # the runner itself exits with the model's status (TVMD_ERR_KERNEL)
    (tmp_path / "in.bin").write_bytes(random_inputs(module.graph)[0].tobytes())
    result = firmware.run(build_export(out, "host"), ["in.bin", "out.bin", "dev.bin"], cwd=tmp_path, check=False)
    assert result.status == 7 and "tvmd_test_fail" in result.stderr


def test_a_run_past_its_time_limit_is_stopped(demo_export):
    require_tools("cortex-m55")
    module, out = demo_export
    with pytest.raises(FirmwareTimeoutError, match="time limit"):
        run_export(out, "cortex-m55", random_inputs(module.graph), timeout=0.01)


def test_wrong_inputs_are_refused_before_building(demo_export, tmp_path, capsys):
    module, out = demo_export
    x = random_inputs(module.graph)[0]
    np.save(tmp_path / "bad.npy", x.reshape(1, -1))
    assert main(["run", str(out), "-i", str(tmp_path / "bad.npy")]) == 1
    err = capsys.readouterr().err
    assert "must be int8" in err and str(list(x.shape)) in err


@pytest.mark.parametrize("cpu", ["host", "cortex-m55"])
def test_the_makefile_builds_what_tvmdevice_run_builds(demo_export, tmp_path, cpu):
    require_tools(cpu)
    if shutil.which("make") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true and make is missing (.ci/run installs it)")
        pytest.skip("make is not installed (apt-get install make)")
    module, out = demo_export
    copy = tmp_path / "demo"
    shutil.copytree(out, copy, ignore=shutil.ignore_patterns("build"))
    proc = subprocess.run(["make", "-s", f"CPU={cpu}"], cwd=copy, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (copy / "build" / cpu / "runner").is_file()
    assert (copy / "build" / cpu / "libtvmgen_demo.a").is_file()
    if cpu == "host":
        x = random_inputs(module.graph)[0]
        (tmp_path / "in.bin").write_bytes(x.tobytes())
        run = subprocess.run([str(copy / "build/host/runner"), "in.bin", "out.bin", "dev.bin"], cwd=tmp_path)
        assert run.returncode == 0
        with for_firmware(module).executor() as ex:
            expected = ex.run([x])[0]
        assert np.frombuffer((tmp_path / "out.bin").read_bytes(), np.int8).tolist() == expected.reshape(-1).tolist()


def test_run_cli_reports_flash_ram_stack_and_instructions(demo_export, tmp_path, capsys):
    require_tools("cortex-m55")
    import json

    module, out = demo_export
    np.save(tmp_path / "x.npy", random_inputs(module.graph)[0])
    assert main(["run", str(out), "--cpu", "cortex-m55", "-i", str(tmp_path / "x.npy"), "-o", str(tmp_path / "o"),
                 "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["cpu"] == "cortex-m55"
    assert set(j["flash"]) >= {"code", "constants", "total"} and set(j["ram"]) >= {"pools", "stack", "total"}
    assert j["flash"]["constants"] == load_metadata(out)["memory"]["constants"]
    assert j["ram"]["pools"]["host"] == load_metadata(out)["memory"]["pools"]["host"]["bytes"]
    assert j["instructions"] > 0 and j["ram"]["stack"] > 0
    assert np.load(tmp_path / "o" / "output_0.npy").tolist() == j["outputs"][0]


@pytest.mark.parametrize("cpu", ["host", "cortex-m55"])
def test_woofles_in_firmware_counts_its_cycles(tmp_path, cpu):
    if "woofles" not in tvmdevice.get_registry().device_names():
        pytest.skip("the woofles plugin is not installed (pip install ./plugins/woofles)")
    require_tools(cpu)
    module = tvmdevice.compile(demo_model(), "woofles, c", name="demo")
    on_woofles = [p for p in module.placement.ops if p.device == "woofles"]
    assert on_woofles
    out = module.export(tmp_path / "demo")
    inputs = random_inputs(module.graph)
    with for_firmware(module).executor() as ex:
        expected = ex.run(inputs)
    got = run_export(out, cpu, inputs)
    np.testing.assert_array_equal(got.outputs[0], expected[0])
    state = got.devices["woofles"]
    assert state["power_state"] == 1, "SLEEP after Deactivate, before Close"
    # counters are the measured run's alone: not the warm-up's, not open's (constants preloaded by DMA)
    assert state["kernel_calls"] == len(on_woofles)
    assert state["transitions"][2:4] == [1, 1], "one Activate and one Deactivate"
    assert state["cycles_total"] >= state["cycles_run"] > 0 and state["dma_transfers"] > 0
    # further frames run after the measured one change none of its counters
    three = run_export_frames(out, cpu, [inputs] * 3)
    assert three.devices["woofles"]["kernel_calls"] == len(on_woofles)
    assert three.devices["woofles"]["dma_bytes"] == state["dma_bytes"]


@pytest.mark.parametrize("cpu", ["host", "cortex-m55"])
def test_cmsis_counters_are_the_measured_runs(tmp_path, cpu, capsys):
    if "cmsis-nn" not in tvmdevice.get_registry().device_names():
        pytest.skip("the cmsis plugin is not installed (pip install ./plugins/cmsis)")
    require_tools(cpu)
    from tvmdevice.aot.schedule import KernelStep

    module = tvmdevice.compile(demo_model(), "cmsis-nn, c", name="demo")
    kernels = sum(1 for s in module.schedule.steps if isinstance(s, KernelStep) and s.device == "cmsis-nn")
    assert kernels
    out = module.export(tmp_path / "demo")
    x = random_inputs(module.graph)[0]
    np.save(tmp_path / "x.npy", np.stack([x] * 3))  # three samples: the measured run is the first's
    assert main(["run", str(out), "--cpu", cpu, "-i", str(tmp_path / "x.npy"), "--json"]) == 0
    import json

    state = json.loads(capsys.readouterr().out)["devices"]["cmsis-nn"]
    # the measured run's calls alone: not the warm-up's, not the later samples'
    assert state["total_calls"] == kernels == sum(state["call_counts"])
    assert state["macs"] > 0 and state["num_opens"] == 0  # opened before the measured run
    assert state["active"] == 0  # not a counter: as the run left it


def test_a_cpu_without_its_toolchain_says_what_to_install(demo_export, tmp_path, capsys, monkeypatch):
    module, out = demo_export
    monkeypatch.setenv("PATH", str(tmp_path))  # no arm-none-eabi-gcc, no qemu-system-arm
    np.save(tmp_path / "x.npy", random_inputs(module.graph)[0])
    assert main(["run", str(out), "--cpu", "cortex-m4", "-i", str(tmp_path / "x.npy")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cortex-m4 needs arm-none-eabi-gcc" in err[0] and "apt-get install" in err[0]


def test_a_failing_build_is_one_line_with_the_compilers_error(tmp_path, capsys):
    require_tools("host")
    module = tvmdevice.compile(demo_model(), "c", name="demo")
    out = module.export(tmp_path / "demo")
    src = out / "codegen/host/src/tvmgen_demo.c"
    src.write_text(src.read_text().replace("return TVMD_OK;\n}", "return TVMD_OK\n}", 1))
    np.save(tmp_path / "x.npy", random_inputs(module.graph)[0])
    assert main(["run", str(out), "-i", str(tmp_path / "x.npy")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "build of 'runner' for host failed" in err[0] and "tvmgen_demo.c" in err[0]


def test_run_cli_timeout_is_one_line(demo_export, tmp_path, capsys):
    require_tools("cortex-m55")
    module, out = demo_export
    np.save(tmp_path / "x.npy", random_inputs(module.graph)[0])
    assert main(["run", str(out), "--cpu", "cortex-m55", "-i", str(tmp_path / "x.npy"), "--timeout", "0.01"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "time limit" in err[0]


_FAILING_ACTIVATE = """
#include <stdio.h>
#include <string.h>
#include "tvmgen_demo.h"

static uint8_t input[TVMGEN_DEMO_%(IN)s_SIZE], output[TVMGEN_DEMO_%(OUT)s_SIZE];
static tvm_device_woofles_t woofles;
static tvm_device_cmsis_nn_t cmsis;

int main(void) {
  struct tvmgen_demo_devices devices = {.woofles = &woofles, .cmsis_nn = &cmsis};
  struct tvmgen_demo_inputs in = {.%(in)s = input};
  struct tvmgen_demo_outputs out = {.%(out)s = output};
  if (tvmgen_demo_open(&devices) != 0) return 10;
  if (tvmgen_demo_open(&devices) != TVMD_ERR_INVALID_STATE) return 11;   /* opened twice */
  cmsis.api_version = 0;                     /* the second device's Activate will fail */
  int32_t status = tvmgen_demo_run(&in, &out, &devices);
  if (status != TVMD_ERR_INVALID_STATE) return 12;
  if (strstr(tvmgen_demo_last_error(), "TVMDeviceCmsisNnActivate") == NULL) return 13;
  if (woofles.power_state != 1) return 14;   /* the first was deactivated again (SLEEP) */
  if (tvmgen_demo_close(&devices) != 0) return 15;    /* still closable: Close and Destroy both */
  if (woofles.magic != 0 || cmsis.api_version != 0) return 16;
  if (tvmgen_demo_close(&devices) != 0) return 17;    /* closing twice is harmless */
  if (tvmgen_demo_run(&in, &out, &devices) != TVMD_ERR_INVALID_STATE) return 18;   /* not open */
  if (tvmgen_demo_open(NULL) != TVMD_ERR_INVALID_ARGUMENT) return 19;
  puts("ok");
  return 0;
}
"""


@pytest.mark.parametrize("cpu", ["host", "cortex-m55"])
def test_a_failing_lifecycle_call_leaves_every_device_closable(tmp_path, cpu):
    names = set(tvmdevice.get_registry().device_names())
    if not {"woofles", "cmsis-nn"} <= names:
        pytest.skip("needs both plugins (pip install ./plugins/woofles ./plugins/cmsis)")
    require_tools(cpu)
    module = tvmdevice.compile(demo_model(), "woofles, cmsis-nn, c", name="demo")
    assert {p.device for p in module.placement.ops} >= {"woofles", "cmsis-nn"}
    out = module.export(tmp_path / "demo")
    meta = load_metadata(out)
    i, o = meta["inputs"][0]["name"], meta["outputs"][0]["name"]
    main_c = tmp_path / "main.c"
    main_c.write_text(_FAILING_ACTIVATE % {"IN": i.upper(), "OUT": o.upper(), "in": i, "out": o})
    b = meta["build"]["cpus"][cpu]
    image = firmware.build([*(out / s for s in b["sources"]), main_c], [out / d for d in b["include_dirs"]], cpu,
                           tmp_path / "build", b["defines"], name="failing")
    result = firmware.run(image, cwd=tmp_path, check=False)
    assert result.status == 0 and "ok" in result.stdout, (result.status, result.stderr)


def test_the_host_flash_figures_count_the_models_params_once(demo_export):
    """The model's params are its ``_op<k>_`` symbols (not ``_open``), wherever the host linker puts
    them (a params struct with pointers is in ``.data.rel.ro`` in a position-independent executable):
    as many bytes as the generator wrote, and the other constants are never negative."""
    module, out = demo_export
    meta = load_metadata(out)
    got = run_export(out, "host", random_inputs(module.graph, seed=1)).to_json()["flash"]
    assert got["params"] == meta["memory"]["params"]
    assert got["constants"] == meta["memory"]["constants"]
    assert got["other_constants"] >= 0
