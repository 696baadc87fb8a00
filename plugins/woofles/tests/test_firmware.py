"""The woofles C device in firmware: its export sources built into a C program for the host and Cortex-M.

The program does what an exported model's generated code does with a
separate-memory device: Init, the generated configure function, Open,
AllocDataSpace, CopyToDevice of the constants and the input, Activate, one
kernel (its params a ``static const`` initializer of the Python prepared
call's ``ParamsStruct``), Deactivate, CopyFromDevice, Close, Destroy; it
checks the power state after every step and writes the output and the
device's counters.  The output must be the Python executor's bytes and the
counters those of the same work on the Python device.

Cortex-M needs arm-none-eabi-gcc, newlib and qemu-system-arm: without them
these tests skip, saying what to install; under ``CI=true`` they fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import tvmdevice
from tvmdevice import firmware
from tvmdevice.aot.builder import ModelBuilder, single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.export import EXPORT_CPUS, DeviceSources
from tvmdevice.ir import ABSENT

import tvmdevice_woofles
from tvmdevice_woofles import export
from tvmdevice_woofles.device import DEVICE_TYPE, SRAM_BASE, PowerState

from _run import prepare, run_operator

CPUS = ["host", "cortex-m55", "cortex-m4", "cortex-m3"]
#: The counters the program writes, in this order (uint64 each).
COUNTERS = ("kernel_calls", "kernel_cycles", "dma_transfers", "dma_bytes", "cycles_run", "cycles_total",
            "sram_size", "peak_bytes_in_use", "power_state")
_C_TYPES = {np.dtype(np.int8): "int8_t", np.dtype(np.int16): "int16_t", np.dtype(np.int32): "int32_t",
            np.dtype(np.int64): "int64_t"}


def _require(cpu: str) -> None:
    the_cpu = firmware.get_cpu(cpu)
    try:
        firmware.find_toolchain(the_cpu)
        if not the_cpu.is_host:
            firmware.find_qemu(the_cpu)
    except firmware.ToolchainMissingError as e:
        if os.environ.get("CI") == "true" and not the_cpu.is_host:
            pytest.fail(f"CI=true and a Cortex-M tool is missing: {e}")
        pytest.skip(f"{e} (needs apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)")


def _array(name: str, values: np.ndarray) -> str:
    flat = np.asarray(values).reshape(-1)
    body = ", ".join(str(int(v)) for v in flat)
    return f"static const {_C_TYPES[flat.dtype]} {name}[{max(flat.size, 1)}] = {{{body}}};\n"


def write_program(graph, call, directory: Path) -> Path:
    """``main.c``: one woofles kernel of ``graph``'s first operator through the C Device API."""
    op = graph.operators[0]
    lines = ['#include <stdint.h>\n#include <stdio.h>\n\n#include "woofles.h"\n#include "woofles_kernels.h"\n'
             '#include "tvmdevice_fw.h"\n\n', f"int32_t {export.CONFIGURE}(tvm_device_woofles_t* device);\n\n"]
    names = {}
    for field in call.params.layout.fields:
        if field.is_pointer and call.params.values[field.name] is not None:
            names[field.name] = f"params_{field.name}"
            lines.append(_array(names[field.name], call.params.values[field.name]))
    lines.append(call.params.c_initializer("params", names))
    tensors = [i for i in (*op.inputs, *op.outputs) if i != ABSENT]
    for i in tensors:
        t = graph.tensor(i)
        if t.is_constant:
            lines.append(_array(f"t{i}", t.data))
    in_t, out_t = graph.tensor(graph.inputs[0]), graph.tensor(op.outputs[0])
    lines.append(f"static int8_t input[{in_t.nbytes}];\nstatic int8_t output[{out_t.nbytes}];\n"
                 "static tvm_device_woofles_t dev;\n\n")
    allocs = "".join(
        f"  if (TVMDeviceWooflesAllocDataSpace(&dev, {graph.tensor(i).nbytes}, 16, &addr[{k}]) != 0) return 30;\n"
        for k, i in enumerate(tensors))
    uploads = "".join(
        f"  if (TVMDeviceWooflesCopyToDevice(&dev, addr[{k}], "
        f"{f't{i}' if graph.tensor(i).is_constant else 'input'}, {graph.tensor(i).nbytes}) != 0) return 31;\n"
        for k, i in enumerate(tensors) if i not in op.outputs)
    slot = {i: k for k, i in enumerate(tensors)}
    buffers = ", ".join("NULL" if i == ABSENT else f"(void*)(uintptr_t)addr[{slot[i]}]"
                        for i in (*op.inputs, *op.outputs))
    counters = ", ".join(f"(uint64_t)dev.{c}" for c in COUNTERS)
    lines.append(
        "#define EXPECT(cond, code) do { if (!(cond)) return (code); } while (0)\n\n"
        "int main(int argc, char** argv) {\n"
        "  if (argc != 4) return 2;\n"
        '  FILE* f = fopen(argv[1], "rb");\n  if (f == NULL) return 3;\n'
        "  if (fread(input, 1, sizeof(input), f) != sizeof(input)) return 3;\n  fclose(f);\n"
        f"  uint64_t addr[{len(tensors)}];\n"
        "  EXPECT(TVMDeviceWooflesOpen(&dev) == TVMD_ERR_INVALID_STATE, 10); /* before Init */\n"
        "  EXPECT(TVMDeviceWooflesInit(&dev) == 0, 11);\n"
        "  EXPECT(TVMDeviceWooflesOpen(&dev) == TVMD_ERR_INVALID_ARGUMENT, 12); /* not configured */\n"
        f"  EXPECT({export.CONFIGURE}(&dev) == 0, 13);\n"
        "  EXPECT(dev.power_state == WOOFLES_POWER_OFF, 14);\n"
        "  EXPECT(dev.sram_base == (uint64_t)(uintptr_t)dev.sram_host && dev.sram_host != NULL, 15);\n"
        "  EXPECT(TVMDeviceWooflesOpen(&dev) == 0 && dev.power_state == WOOFLES_POWER_SLEEP, 16);\n"
        f"{allocs}{uploads}"
        "  EXPECT(TVMDeviceWooflesActivate(&dev) == 0 && dev.power_state == WOOFLES_POWER_ACTIVE, 17);\n"
        f"  void* const buffers[] = {{{buffers}}};\n"
        "  tvmd_fw_region_begin();\n"
        f"  int32_t status = {call.name}(&params, buffers, &dev);\n"
        "  tvmd_fw_region_end();\n"
        "  EXPECT(TVMDeviceWooflesDeactivate(&dev) == 0 && dev.power_state == WOOFLES_POWER_SLEEP, 18);\n"
        "  EXPECT(status == 0, 19);\n"
        f"  EXPECT(TVMDeviceWooflesCopyFromDevice(&dev, output, addr[{slot[op.outputs[0]]}], sizeof(output)) == 0,"
        " 32);\n"
        f"  uint64_t counters[] = {{{counters}}};\n"
        f"  for (int k = {len(tensors) - 1}; k >= 0; --k) EXPECT(TVMDeviceWooflesFreeDataSpace(&dev, addr[k]) == 0,"
        " 33);\n"
        "  EXPECT(TVMDeviceWooflesClose(&dev) == 0 && dev.power_state == WOOFLES_POWER_OFF, 20);\n"
        "  EXPECT(TVMDeviceWooflesAllocDataSpace(&dev, 16, 16, &addr[0]) == TVMD_ERR_INVALID_STATE, 21);\n"
        "  /* The static SRAM stays the device's: Open again powers it up empty. */\n"
        "  EXPECT(TVMDeviceWooflesOpen(&dev) == 0 && dev.sram_host[0] == 0 && dev.bytes_in_use == 0, 23);\n"
        "  EXPECT(TVMDeviceWooflesClose(&dev) == 0, 24);\n"
        "  EXPECT(TVMDeviceWooflesDestroy(&dev) == 0 && dev.magic == 0, 22);\n"
        '  f = fopen(argv[2], "wb");\n  if (f == NULL) return 4;\n'
        "  fwrite(output, 1, sizeof(output), f);\n  fclose(f);\n"
        '  f = fopen(argv[3], "wb");\n  if (f == NULL) return 4;\n'
        "  fwrite(counters, 1, sizeof(counters), f);\n  fclose(f);\n"
        "  return 0;\n}\n")
    path = directory / "main.c"
    path.write_text("".join(lines))
    return path


def build_program(sources: DeviceSources, graph, call, cpu: str, directory: Path) -> firmware.Image:
    """Lay ``sources`` out as the exporter does (src/, include/) and build them with ``main.c``."""
    src, include = directory / "src", directory / "include"
    src.mkdir(parents=True, exist_ok=True)
    include.mkdir(exist_ok=True)
    for path in sources.sources:
        shutil.copy(path, src / path.name)
    for folder in sources.include_dirs:  # private headers beside the sources
        for header in Path(folder).glob("*.h"):
            shutil.copy(header, src / header.name)
    for name, text in sources.headers.items():
        (include / name).write_text(text)
    (src / "woofles_export.c").write_text(sources.code)
    main = write_program(graph, call, directory)
    return firmware.build([*sorted(src.glob("*.c")), main], [include, src, tvmdevice.get_include()], cpu=cpu,
                          out_dir=directory / "build", defines=sources.defines, extra_cflags=sources.cflags)


def conv_model() -> bytes:
    """A per-channel CONV_2D with bias: pointer members in its params, a partial MAC tile at width 3."""
    return single_op_model("CONV_2D", (1, 6, 5, 3), input_scale=0.05, input_zero_point=-4, seed=11, filters=5,
                           kernel=(3, 2), stride=1, padding="SAME", activation="RELU", per_channel=True, bias=True)


_I16 = dict(input_dtype="int16", input_scale=0.0005, seed=11)
_PADS = [[0, 0], [1, 2], [2, 0], [0, 0]]
#: The kernels added with PAD and the 16-bit datapath, each as a one-operator model.
NEW_KERNELS = {
    "pad_s8": lambda: single_op_model("PAD", (1, 4, 3, 5), input_zero_point=-6, paddings=_PADS),
    "padv2_s16": lambda: single_op_model("PADV2", (2, 3, 3, 3), input_dtype="int16", paddings=_PADS, value=-999),
    "conv2d_s16": lambda: single_op_model("CONV_2D", (1, 6, 5, 4), filters=6, kernel=3, groups=2, padding="SAME",
                                          activation="RELU6", **_I16),
    "depthwise_conv2d_s16": lambda: single_op_model("DEPTHWISE_CONV_2D", (1, 6, 6, 3), depth_multiplier=2,
                                                    stride=2, dilation=2, padding="SAME", **_I16),
    "fully_connected_s16": lambda: single_op_model("FULLY_CONNECTED", (2, 20), units=7, per_channel=True, **_I16),
    "avg_pool2d_s16": lambda: single_op_model("AVERAGE_POOL_2D", (1, 7, 7, 3), pool=3, stride=2, padding="SAME",
                                              **_I16),
    "max_pool2d_s16": lambda: single_op_model("MAX_POOL_2D", (1, 6, 5, 4), pool=2, **_I16),
    "add_s16": lambda: _add_s16(),
}


def _add_s16() -> bytes:
    """An int16 ADD broadcasting over 6 dimensions; its second operand a constant (the program feeds one input)."""
    b = ModelBuilder(seed=11)
    x = b.input((2, 3, 1, 2, 3, 2), scale=0.0005, dtype="int16")
    values = np.random.default_rng(11).integers(-32768, 32768, (3, 2, 1, 1, 2))
    b.output(b.add(x, b.constant(values, scale=0.002, dtype="int16")))
    return b.build()
#: (model, CPU) pairs: the int8 convolution on every CPU, the new kernels on the host and Cortex-M55.
FIRMWARE_CASES = [("conv2d_s8", cpu) for cpu in CPUS] + [(k, cpu) for k in NEW_KERNELS for cpu in CPUS[:2]]


def _full_range(graph, seed: int) -> np.ndarray:
    t = graph.tensor(graph.inputs[0])
    info = np.iinfo(t.dtype)
    return np.random.default_rng(seed).integers(info.min, info.max, t.shape, endpoint=True, dtype=t.dtype)


@pytest.mark.parametrize("kernel, cpu", FIRMWARE_CASES)
def test_a_woofles_kernel_runs_in_firmware_bit_exact(registry, make_device, tmp_path, kernel, cpu):
    _require(cpu)
    options = {"mac_width": 3, "sram_kb": 64}
    graph = load_tflite(conv_model() if kernel == "conv2d_s8" else NEW_KERNELS[kernel]())
    x = _full_range(graph, 5)
    device = make_device(**options)
    expected = run_operator(registry, device, graph, [x])
    python = tvmdevice_woofles.counters(device)

    call = prepare(registry, device, graph, graph.operators[0])
    assert call.name == f"tvmd_woofles_{kernel.replace('padv2', 'pad')}"
    sources = registry.export_sources(DEVICE_TYPE, device.options, cpu)
    assert isinstance(sources, DeviceSources)
    image = build_program(sources, graph, call, cpu, tmp_path)
    (tmp_path / "input.bin").write_bytes(x.tobytes())
    result = firmware.run(image, ["input.bin", "output.bin", "counters.bin"], cwd=tmp_path, timeout=120)
    assert result.status == 0

    out = np.frombuffer((tmp_path / "output.bin").read_bytes(), expected.dtype).reshape(expected.shape)
    np.testing.assert_array_equal(out, expected)
    c = dict(zip(COUNTERS, np.frombuffer((tmp_path / "counters.bin").read_bytes(), np.uint64).tolist()))
    # The same cycle model in both: one launch of the same kernel costs the same on every CPU.
    assert c["kernel_calls"] == 1
    assert c["kernel_cycles"] == python["kernel_cycles"] > 0
    uploads = sum(1 for i in graph.operators[0].inputs if i != ABSENT)
    assert c["dma_transfers"] == uploads + 1  # each upload, and the download
    assert c["dma_bytes"] == python["dma_bytes"]
    assert c["cycles_run"] > c["kernel_cycles"]  # the wake-up and the kernel, at least
    assert c["cycles_total"] >= c["cycles_run"] + c["dma_transfers"]
    assert c["sram_size"] == options["sram_kb"] * 1024
    assert c["peak_bytes_in_use"] >= sum(graph.tensor(i).nbytes for i in (*graph.operators[0].inputs,
                                                                          *graph.operators[0].outputs) if i != ABSENT)
    assert c["power_state"] == PowerState.SLEEP  # read before Close
    if not image.cpu.is_host:
        assert result.region_instructions and result.regions == 1
        footprint = firmware.measure(image)
        # The SRAM is a static array in RAM, not zeroed at reset (Open zeroes it).
        assert footprint.sections.get(".noinit", 0) >= options["sram_kb"] * 1024
        assert footprint.ram_bss >= options["sram_kb"] * 1024


def test_export_sources_name_the_device_api():
    for cpu in EXPORT_CPUS:
        s = export.export_sources({o.name: o.default for o in DEVICE_TYPE.options}, cpu)
        assert s is not None and s.lifecycle and s.memory and s.configure == export.CONFIGURE
        assert {p.name for p in s.sources} == {p.name for p in export.C_DIR.glob("*.c")}
        assert {"tvm_device_woofles.h", "tvmd_woofles_params.h"} <= set(s.headers)
        assert export.C_DIR in s.include_dirs and (export.C_DIR / "woofles_kernels.h").is_file()
        assert f"int32_t {export.CONFIGURE}(tvm_device_woofles_t* device) {{" in s.code
    assert export.export_sources({}, "cortex-a53") is None


def test_configure_code_bakes_the_options():
    options = {o.name: o.default for o in DEVICE_TYPE.options} | {"sram_kb": 32, "mac_width": 16}
    code = export.configure_code(options)
    assert "static uint8_t tvmd_woofles_sram[32768]" in code
    assert "config.mac_width = 16u;" in code and "config.clock_mhz = 400u;" in code
    assert export.SRAM_SECTION in code


def test_python_device_configures_through_c(make_device):
    d = make_device("initialized", sram_kb=8, mac_width=5, clock_mhz=100)
    f = d.fields
    assert (int(f["sram_size"][0]), int(f["sram_base"][0]), int(f["mac_width"][0]), int(f["clock_mhz"][0])) == (
        8192, SRAM_BASE, 5, 100)


def test_c_configure_and_copies_refuse_what_the_device_cannot_do(make_device):
    from tvmdevice.errors import Status

    from tvmdevice_woofles import _woofles

    d = make_device("initialized")
    h = d.handle_address
    assert _woofles.configure(h, 0, SRAM_BASE, 1024, 0, 8, 400) == Status.INVALID_ARGUMENT  # no MAC lanes
    assert _woofles.configure(h, 0, SRAM_BASE, 1024, 257, 8, 400) == Status.INVALID_ARGUMENT  # tile too wide
    assert _woofles.configure(h, 0, SRAM_BASE, 1 << 32, 8, 8, 400) == Status.INVALID_ARGUMENT  # 32-bit offsets
    assert _woofles.configure(h, 0, 0, 1024, 8, 8, 400) == Status.INVALID_ARGUMENT  # SRAM at address 0
    buf = np.arange(64, dtype=np.uint8)
    assert _woofles.copy_to_device(h, SRAM_BASE, buf) == Status.INVALID_STATE  # SRAM off
    d.open()
    assert _woofles.configure(h, 0, SRAM_BASE, 1024, 8, 8, 400) == Status.INVALID_STATE  # only before Open
    ptr = d.alloc_data_space(64)
    assert _woofles.copy_to_device(h, ptr, buf) == Status.OK
    back = np.zeros(64, np.uint8)
    assert _woofles.copy_from_device(h, back, ptr) == Status.OK  # in SLEEP: DMA is in the SRAM's domain
    np.testing.assert_array_equal(back, buf)
    size = int(d.fields["sram_size"][0])
    assert _woofles.copy_to_device(h, SRAM_BASE + size - 8, buf) == Status.INVALID_ARGUMENT  # past the window
    np.testing.assert_array_equal(d.download(ptr, np.zeros(64, np.uint8)), buf)  # the Python path sees it


@pytest.mark.slow
def test_wheel_ships_the_c_sources_and_headers(tmp_path):
    pytest.importorskip("wheel")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path), str(root)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("tvmdevice_woofles-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for p in export.C_DIR.iterdir():
        if p.suffix in (".c", ".h"):
            assert f"tvmdevice_woofles/csrc/{p.name}" in names
    assert "tvmdevice_woofles/export.py" in names
