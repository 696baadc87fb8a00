"""The shared models exported with ``ethos-u, cmsis-nn, c``: Vela's command streams in flash, its scratch
in the planned pool with the partition's inputs and outputs at Vela's places in it, its fast scratch and
the functional model's memory in sections of their own, the functional model behind the launch function;
built and run on the host and on Cortex-M55 under QEMU, bit for bit as tflite-micro and the Python
executor run them, in the RAM Vela reports.

Marked ``export``.  Skips without the ethos-u plugin (``pip install ./plugins/ethosu``) and without
TVMDEVICE_MODELS_DIR; Cortex-M runs skip without the ARM tools, except under ``CI=true``.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from export_inputs import random_inputs

import tvmdevice
from tvmdevice.aot.compiler import for_firmware
from tvmdevice.aot.schedule import HOST
from tvmdevice.cli.main import main
from tvmdevice.export import run_export
from tvmdevice.export.fit import budget
from tvmdevice.firmware import DEFAULT_STACK_SIZE
from tvmdevice.firmware.elf import read_elf
from tvmdevice.testing.firmware import require_tools
from tvmdevice.testing.oracle import tflm_run

pytestmark = [pytest.mark.export, pytest.mark.models]

TARGET = "ethos-u, cmsis-nn, c"
CPUS = ["host", "cortex-m55", "cortex-m4"]
MODELS = ["hello_world_int8", "kws_dscnn_int8", "ad_fc_autoencoder_int8", "micro_speech_int8"]


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    pytest.importorskip("tvmdevice_ethosu", reason="the ethos-u plugin is not installed (pip install ./plugins/ethosu)")
    cache = {}

    def get(models_dir, name: str):
        if name not in cache:
            path = models_dir / f"{name}.tflite"
            if not path.exists():
                pytest.skip(f"{path.name} not in {models_dir}")
            model = path.read_bytes()
            module = tvmdevice.compile(model, TARGET, name=name)
            out = module.export(tmp_path_factory.mktemp(name) / name)
            inputs = random_inputs(module.graph, seed=5)
            tflm = tflm_run(model, inputs)
            expected = [tflm.output(k) for k in range(len(module.graph.outputs))]
            with for_firmware(module).executor() as ex:
                for a, b in zip(ex.run(inputs), expected):
                    np.testing.assert_array_equal(a.reshape(b.shape), b, err_msg="Python executor vs tflite-micro")
            cache[name] = (module, out, inputs, expected)
        return cache[name]

    return get


@pytest.mark.parametrize("name", MODELS)
def test_partitions_are_exported_as_npu_calls(exports, models_dir, name):
    module, out, _, _ = exports(models_dir, name)
    partitions = [c for c in module.prepared.values() if c.name.startswith("tvmd_ethosu_partition")]
    assert partitions, "no operator was placed on ethos-u"
    run_c = (out / "codegen" / "host" / "src" / f"tvmgen_{name}.c").read_text()
    constants = (out / "codegen" / "host" / "src" / f"tvmgen_{name}_constants.c").read_text()
    assert run_c.count("tvmd_ethosu_partition(") >= len(partitions)
    assert "devices->ethos_u" in run_c
    # the command stream and Vela's read-only data: const, 16-byte-aligned arrays
    for member in ("command_stream", "read_only"):
        assert f"const uint8_t tvmgen_{name}_op" in constants
        assert f"_{member}[" in constants and "aligned(16)" in constants
    shipped = {p.name for p in (out / "devices" / "ethos_u" / "src").glob("*.c")}
    assert {"ethosu_kernel.c", "ethosu_launch.c", "ethosu_device.c", "ethosu_stream.c"} <= shipped


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("name", MODELS)
def test_the_export_equals_tflm(exports, models_dir, name, cpu):
    require_tools(cpu)
    module, out, inputs, expected = exports(models_dir, name)
    got = run_export(out, cpu, inputs)
    for k, (value, ref) in enumerate(zip(got.outputs, expected)):
        np.testing.assert_array_equal(value.reshape(ref.shape), ref, err_msg=f"{name} on {cpu}: output {k}")
    npu = got.devices["ethos-u"]
    calls = sum(1 for c in module.prepared.values() if c.name.startswith("tvmd_ethosu_partition"))
    assert npu["launches"] == calls and npu["commands"] > 0 and npu["macs"] > 0
    if cpu != "host":
        assert got.instructions and got.result.stack_used


#: A board's launch in the driver's shape that leaves the NPU's work out: what remains is the runtime's own
#: instructions (copies in and out, lifecycle, the region tables, the CPU's operators).
_BOARD_LAUNCH = """#include "ethosu.h"
#include "ethosu_launch.h"
int32_t tvmd_ethosu_launch(tvm_device_ethos_u_t* dev, const void* cms, size_t cms_size, uint64_t* base_addrs,
                           size_t* base_addr_sizes, int num_base_addr, void* user_arg) {
  (void)cms; (void)cms_size; (void)base_addrs; (void)base_addr_sizes; (void)num_base_addr; (void)user_arg;
  dev->launches += 1;
  return TVMD_OK;
}
"""


def test_a_board_launch_replaces_one_file_and_the_runtime_stays_small(exports, models_dir, tmp_path):
    # kws_dscnn_int8 on cortex-m55: at most 5,000 instructions per inference outside the NPU's launches
    require_tools("cortex-m55")
    module, out, inputs, _ = exports(models_dir, "kws_dscnn_int8")
    board = tmp_path / "board"
    shutil.copytree(out, board, ignore=shutil.ignore_patterns("build"))
    (board / "devices" / "ethos_u" / "src" / "ethosu_launch.c").write_text(_BOARD_LAUNCH)
    got = run_export(board, "cortex-m55", inputs)
    calls = sum(1 for c in module.prepared.values() if c.name.startswith("tvmd_ethosu_partition"))
    assert got.devices["ethos-u"]["launches"] == calls and got.devices["ethos-u"]["macs"] == 0
    assert 0 < got.instructions <= 5_000, got.instructions
    # the functional model's memory is linked with the functional model only: a board does not keep it
    model_bytes = max(c.details["npu_model_bytes"] for c in module.prepared.values()
                      if c.name.startswith("tvmd_ethosu_partition"))
    functional = run_export(out, "cortex-m55", inputs)
    memory = read_elf(out / "build" / "cortex-m55" / "runner-cortex-m55.elf").symbol("tvmd_ethosu_npu_model")
    assert memory is not None and memory.size == model_bytes
    assert read_elf(board / "build" / "cortex-m55" / "runner-cortex-m55.elf").symbol("tvmd_ethosu_npu_model") is None
    assert functional.to_json()["ram"]["static"] - got.to_json()["ram"]["static"] >= model_bytes


def _npu_partitions(meta: dict) -> list[dict]:
    return [p for p in meta["placement"]["partitions"] if p["device"] == "ethos-u"]


@pytest.mark.parametrize("name", MODELS)
def test_ram_is_within_a_tenth_of_the_sram_vela_reports(exports, models_dir, name):
    # RAM = the host pool (Vela's scratch, the partition's inputs and outputs inside it, the CPU's tensors)
    # + Vela's fast scratch, against the SRAM Vela reports for the same model and config
    module, out, _, _ = exports(models_dir, name)
    meta = json.loads((out / "metadata.json").read_text())
    vela = sum(p["details"]["vela_sram_bytes"] for p in _npu_partitions(meta))
    (device,) = [d for d in meta["devices"] if d["name"] == "ethos-u"]
    memories = {m["name"]: m for m in device["memories"]}
    fast = memories["npu_fast_scratch"]["bytes"] if "npu_fast_scratch" in memories else 0
    ram = meta["memory"]["pools"][HOST]["bytes"] + fast
    assert ram <= 1.1 * vela, f"{name}: RAM {ram} B against Vela's SRAM {vela} B"
    # the functional model's own memory is reported beside the pools, never in them
    model = max(p["details"]["npu_model_bytes"] for p in _npu_partitions(meta))
    assert memories["npu_model"] == {"name": "npu_model", "section": ".bss.tvmd_npu_model", "bytes": model,
                                     "doc": memories["npu_model"]["doc"]} and model > 0
    # the inputs and outputs Vela placed in its arena are the plan's tensors there: nothing is duplicated
    pool = module.plan.pools[HOST]
    for part in module.placement.partitions:
        call = module.prepared[part.first]
        for k, t in enumerate((*part.inputs, *part.outputs)):
            if k in call.in_scratch:
                use = next(u for u in pool.uses if u.tensor == module.schedule.source(t) and u.scratch_of is None)
                assert use.inside == part.first and use.inside_offset == call.in_scratch[k]


#: Vela's fast scratch exists where its memory mode puts the arena in slower memory than the cache
#: (Dedicated_Sram: the arena in DRAM, the fast scratch in SRAM).
_FAST_TARGET = "ethos-u -system_config=Ethos_U65_High_End -memory_mode=Dedicated_Sram, cmsis-nn, c"


@pytest.mark.parametrize("cpu", ["host", "cortex-m55"])
def test_velas_fast_scratch_is_a_section_of_its_own(models_dir, tmp_path, cpu):
    require_tools(cpu)
    pytest.importorskip("tvmdevice_ethosu", reason="the ethos-u plugin is not installed (pip install ./plugins/ethosu)")
    path = models_dir / "kws_dscnn_int8.tflite"
    if not path.exists():
        pytest.skip(f"{path.name} not in {models_dir}")
    model = path.read_bytes()
    module = tvmdevice.compile(model, _FAST_TARGET, name="kws_fast")
    out = module.export(tmp_path / "kws_fast")
    meta = json.loads((out / "metadata.json").read_text())
    (part,) = _npu_partitions(meta)
    fast = part["details"]["vela_fast_scratch_bytes"]
    (device,) = [d for d in meta["devices"] if d["name"] == "ethos-u"]
    (memory,) = [m for m in device["memories"] if m["name"] == "npu_fast_scratch"]
    assert fast > 0 and memory["bytes"] == fast and memory["section"] == ".bss.tvmd_npu_fast"
    code = (out / "devices" / "ethos_u" / "src" / "ethos_u_export.c").read_text()
    assert f'tvmd_ethosu_fast[{fast}] TVMD_ETHOSU_SECTION(".bss.tvmd_npu_fast")' in code
    assert meta["memory"]["pools"][HOST]["bytes"] + fast <= 1.1 * part["details"]["vela_sram_bytes"]
    inputs = random_inputs(module.graph, seed=5)
    tflm = tflm_run(model, inputs)
    got = run_export(out, cpu, inputs)
    np.testing.assert_array_equal(got.outputs[0].reshape(tflm.output(0).shape), tflm.output(0))
    if cpu != "host":
        symbol = read_elf(out / "build" / cpu / f"runner-{cpu}.elf").symbol("tvmd_ethosu_fast")
        assert symbol is not None and symbol.size == fast


def test_the_fit_check_counts_the_npu_memories(exports, models_dir, tmp_path):
    module, out, inputs, outputs = exports(models_dir, "kws_dscnn_int8")
    meta = json.loads((out / "metadata.json").read_text())
    (device,) = [d for d in meta["devices"] if d["name"] == "ethos-u"]
    npu = sum(m["bytes"] for m in device["memories"])
    assert npu > 0
    # RAM for the pool, the inputs and outputs and the stack, but not for the NPU's own memories
    plan_only = meta["memory"]["pools"][HOST]["bytes"] + sum(a.nbytes for a in (*inputs, *outputs)) \
        + DEFAULT_STACK_SIZE + 16
    with pytest.raises(tvmdevice.errors.InvalidArgumentError, match="npu_model") as refused:
        module.export(tmp_path / "small", budget=budget(ram_kb=plan_only / 1024))
    assert "does not fit --ram-kb" in str(refused.value) and not (tmp_path / "small").exists()
    module.export(tmp_path / "enough", budget=budget(ram_kb=(plan_only + npu) / 1024))


def test_run_json_reports_the_npu_counters_and_vela_estimates(exports, models_dir, tmp_path, capsys):
    module, out, inputs, _ = exports(models_dir, "hello_world_int8")
    np.save(tmp_path / "x.npy", inputs[0])
    assert main(["run", str(out), "--cpu", "host", "-i", str(tmp_path / "x.npy"), "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["devices"]["ethos-u"]["launches"] == 1 and j["devices"]["ethos-u"]["macs"] > 0
    (part,) = j["partitions"]
    on_npu = [o.op_index for o in module.placement.ops if o.device == "ethos-u"]
    assert part["device"] == "ethos-u" and part["ops"] == on_npu
    assert part["details"]["vela_npu_cycles"] > 0
    (memory,) = j["device_memories"]["ethos-u"]
    assert memory["name"] == "npu_model" and memory["bytes"] == part["details"]["npu_model_bytes"]
    assert main(["run", str(out), "--cpu", "host", "-i", str(tmp_path / "x.npy")]) == 0
    shown = f"ethos-u memory outside the pools: npu_model {memory['bytes']:,} B (.bss.tvmd_npu_model)"
    assert shown in capsys.readouterr().out
