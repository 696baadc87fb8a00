"""The cmsis-nn C in firmware: what ``tvmdevice_export_sources`` hands an export, built and run.

The hook's sources, include folder, generated headers and ``configure``
code are built with :func:`tvmdevice.firmware.build` into a tiny program
that does what a generated ``tvmgen_<model>_open/run/close`` does: Init,
configure, Open, Activate, one kernel call (params from the Python prepared
call's :meth:`~tvmdevice.params.ParamsStruct.c_initializer`, the M-profile
packing; buffers in the kernel ABI order), Deactivate, Close, Destroy; its
output bytes must equal the Python executor's.  Runs on the host and under
QEMU on Cortex-M55 (Helium path), M4 (DSP path) and M3 (plain C); without ``arm-none-eabi-gcc`` / ``qemu-system-arm``
those skip saying what to install, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import tvmdevice
from tvmdevice import firmware
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.export import EXPORT_CPUS, DeviceSources
from tvmdevice.testing.oracle import tflm_run

from tvmdevice_cmsis import kernels
from tvmdevice_cmsis.device import DEVICE_TYPE
from tvmdevice_cmsis.export import CONFIGURE, configured_fields
from tvmdevice_cmsis.standalone import call_data

from conftest import op_arrays, random_inputs, single

OPTIONS = {"scratch_kb": 64, "mcpu": "cortex-m55"}


def _require(cpu: str, run: bool = True) -> None:
    the_cpu = firmware.get_cpu(cpu)
    try:
        firmware.find_toolchain(the_cpu)
        if run and not the_cpu.is_host:
            firmware.find_qemu(the_cpu)
    except firmware.ToolchainMissingError as e:
        if os.environ.get("CI") == "true" and not the_cpu.is_host:
            pytest.fail(f"CI=true and a Cortex-M tool is missing: {e}")
        pytest.skip(f"{e} (needs apt-get install {' '.join(firmware.ARM_PACKAGES)})")


def _contribution(cpu: str) -> DeviceSources:
    registry = tvmdevice.get_registry()
    result = registry.export_sources(registry.device_type(DEVICE_TYPE.name), OPTIONS, cpu)
    assert isinstance(result, DeviceSources)
    return result


def _layout(tmp_path: Path, sources: DeviceSources) -> tuple[list[Path], list[Path]]:
    """What the exporter does with a contribution: generated headers into include/, code into src/."""
    include = tmp_path / "include"
    include.mkdir()
    for name, text in sources.headers.items():
        (include / name).write_text(text)
    code = tmp_path / "cmsis_nn_export.c"
    code.write_text(sources.code)
    return [*sources.sources, code], [include, *sources.include_dirs, Path(tvmdevice.get_include())]


# ------------------------------------------------------------------ the hook
@pytest.mark.parametrize("cpu", EXPORT_CPUS)
def test_the_hook_contributes_every_c_file_and_generated_header(cpu):
    sources = _contribution(cpu)
    names = {p.name for p in sources.sources}
    assert {"device.c", "conv_m.c", "depthwise_conv_m.c", "fully_connected_m.c", "simd_x86.c"} <= names
    assert all(p.is_file() and p.suffix == ".c" for p in sources.sources)
    assert {"tvm_device_cmsis_nn.h", "tvmd_cmsis_kernels.h", "tvmd_cmsis_params.h"} <= set(sources.headers)
    assert all((d / "tvmd_cmsis_nn.h").is_file() for d in sources.include_dirs)
    assert sources.lifecycle and not sources.memory
    assert sources.configure == CONFIGURE and f"int32_t {CONFIGURE}(tvm_device_cmsis_nn_t* device)" in sources.code


def test_configure_writes_what_the_python_init_hook_writes():
    device = tvmdevice.get_registry().create_device("cmsis-nn", OPTIONS)
    device.init()
    try:
        for name, value in configured_fields(OPTIONS).items():
            assert int(device.fields[name][0]) == value
            assert f"device->{name} = {value}u;" in _contribution("host").code
    finally:
        device.release()


@pytest.mark.parametrize("cpu", EXPORT_CPUS)
def test_every_source_compiles_warning_free_with_the_firmware_flags(tmp_path, cpu):
    _require(cpu, run=False)
    the_cpu = firmware.get_cpu(cpu)
    cc = firmware.find_toolchain(the_cpu).cc
    srcs, includes = _layout(tmp_path, _contribution(cpu))
    for src in srcs:
        obj = tmp_path / f"{src.stem}.o"
        done = subprocess.run([cc, *firmware.compiler_flags(the_cpu), *(f"-I{d}" for d in includes), "-c", str(src),
                               "-o", str(obj)], capture_output=True, text=True)
        assert done.returncode == 0 and not done.stderr, f"{src.name} for {cpu}:\n{done.stderr}"
    if not the_cpu.is_host:
        # The x86 SIMD file defines nothing off x86-64.
        nm = subprocess.run([cc.replace("gcc", "nm"), "--defined-only", str(tmp_path / "simd_x86.o")],
                            capture_output=True, text=True, check=True)
        assert nm.stdout.strip() == "", nm.stdout


# ------------------------------------------------------- one kernel in firmware
def _program(call, arrays: list, symbol: str, writable: tuple[int, ...] = ()) -> str:
    """main(): the generated open/run/close sequence around one kernel call; argv[1] gets the output."""
    lines = ["#include <stdio.h>\n#include <stdint.h>\n\n",
             '#include "tvm_device_cmsis_nn.h"\n#include "tvmd_cmsis_nn.h"\n#include "tvmdevice_fw.h"\n\n',
             f"int32_t {CONFIGURE}(tvm_device_cmsis_nn_t* device);\n\n"]
    data, buffers = call_data(call, arrays, writable)
    lines.append(data)
    out = len(arrays) - 1
    lines.append(
        "\nint main(int argc, char** argv) {\n"
        "  static tvm_device_cmsis_nn_t dev;\n"
        "  if (argc != 2) return 2;\n"
        f"  if (TVMDeviceCmsisNnInit(&dev) != 0 || {CONFIGURE}(&dev) != 0) return 3;\n"
        "  if (TVMDeviceCmsisNnOpen(&dev) != 0) return 3;\n"
        "  if (TVMDeviceCmsisNnActivate(&dev) != 0) return 4;\n"
        f"  void* const buffers[] = {{{', '.join(buffers)}}};\n"
        "  tvmd_fw_region_begin();\n"
        f"  const int32_t status = {symbol}(&params, buffers, (void*)&dev);\n"
        "  tvmd_fw_region_end();\n"
        "  if (TVMDeviceCmsisNnDeactivate(&dev) != 0) return 5;\n"
        "  if (status != 0) return 10 + (int)status;\n"
        f"  if (dev.total_calls != 1 || dev.scratch_capacity != {configured_fields(OPTIONS)['scratch_capacity']}u) "
        "return 6;\n"
        '  FILE* f = fopen(argv[1], "wb");\n  if (f == NULL) return 7;\n'
        f"  if (fwrite(b{out}, 1, sizeof(b{out}), f) != sizeof(b{out})) return 8;\n  fclose(f);\n"
        "  if (TVMDeviceCmsisNnClose(&dev) != 0 || TVMDeviceCmsisNnDestroy(&dev) != 0) return 9;\n"
        "  return 0;\n}\n")
    return "".join(lines)


OPERATORS = {
    "conv": ("CONV_2D", dict(input_shape=(1, 7, 6, 3), filters=5, kernel=3, padding="SAME", per_channel=True,
                             activation="RELU", input_zero_point=-9)),
    "depthwise": ("DEPTHWISE_CONV_2D", dict(input_shape=(1, 6, 5, 4), kernel=3, depth_multiplier=2, stride=2,
                                            per_channel=True, padding="SAME")),
    "fully_connected": ("FULLY_CONNECTED", dict(input_shape=(2, 30), units=9, per_channel=False)),
    # Shapes that reach every block and tail of the M-profile ISA paths (MVE: 4 pixels, 16-value
    # steps, 8 depthwise channels, 4 dense channels; DSP: 2 x 2 blocks, 4-value steps, 4 channels).
    "pointwise": ("CONV_2D", dict(input_shape=(1, 5, 6, 20), filters=7, kernel=1, per_channel=True,
                                  input_zero_point=5)),
    "conv_strided": ("CONV_2D", dict(input_shape=(1, 9, 7, 3), filters=6, kernel=3, stride=2, padding="SAME",
                                     input_zero_point=-20, activation="RELU6")),
    # MVE: rows of 37 values (two 16-value steps and a tail of 5), a last block of 1 pixel, 9 channels
    # (two 4-channel groups and one).
    "pointwise_steps_and_tail": ("CONV_2D", dict(input_shape=(1, 5, 2, 37), filters=9, kernel=1, per_channel=False,
                                                 input_zero_point=-7)),
    # MVE: rows of 5 values (the tail alone), 70 channels (past one run of 64 whose offset and bias terms are
    # taken together), a last block of 2 pixels.
    "pointwise_many_channels": ("CONV_2D", dict(input_shape=(1, 4, 5, 5), filters=70, kernel=1, per_channel=True,
                                                input_zero_point=12)),
    # Two groups and dilation: the rows built tap by tap.
    "conv_groups_dilated": ("CONV_2D", dict(input_shape=(1, 9, 8, 6), filters=4, kernel=3, groups=2, dilation=2,
                                            padding="SAME", per_channel=True, input_zero_point=3)),
    "depthwise_dm1": ("DEPTHWISE_CONV_2D", dict(input_shape=(1, 6, 5, 13), kernel=3, depth_multiplier=1,
                                                per_channel=True, padding="SAME", input_zero_point=7)),
    # MVE: blocks of 16 depthwise channels (int16 lanes, even/odd products), then an 8-channel tail.
    "depthwise_dm1_wide": ("DEPTHWISE_CONV_2D", dict(input_shape=(1, 7, 6, 37), kernel=3, depth_multiplier=1,
                                                     stride=2, per_channel=True, padding="SAME",
                                                     input_zero_point=-11)),
    "depthwise_dm1_per_tensor": ("DEPTHWISE_CONV_2D", dict(input_shape=(1, 5, 4, 32), kernel=3, depth_multiplier=1,
                                                           per_channel=False, padding="SAME", input_zero_point=4,
                                                           activation="RELU6")),
    "depthwise_one_channel": ("DEPTHWISE_CONV_2D", dict(input_shape=(1, 9, 8, 1), kernel=3, depth_multiplier=10,
                                                        stride=2, per_channel=True, input_zero_point=-3)),
    "fully_connected_per_channel": ("FULLY_CONNECTED", dict(input_shape=(1, 37), units=7, per_channel=True,
                                                            input_zero_point=11)),
}


@pytest.mark.parametrize("operator", list(OPERATORS))
@pytest.mark.parametrize("cpu", ["host", "cortex-m55", "cortex-m4", "cortex-m3"])
def test_one_kernel_in_firmware_gives_the_python_executor_s_bytes(tmp_path, cpu, operator):
    _require(cpu)
    op_type, params = OPERATORS[operator]
    _, graph = single(op_type, **params)
    call = kernels.prepare(graph, graph.operators[0], mcpu=OPTIONS["mcpu"])
    assert call.name.endswith("_m_s8")  # the M-profile packing
    arrays = op_arrays(graph, random_inputs(graph, 3))
    kernels.run(call, arrays)
    expected = arrays[-1].tobytes()
    firmware_arrays = [*arrays[:-1], np.zeros_like(arrays[-1])]

    srcs, includes = _layout(tmp_path, _contribution(cpu))
    main = tmp_path / "main.c"
    main.write_text(_program(call, firmware_arrays, call.name))
    image = firmware.build([main, *srcs], includes, cpu, tmp_path / "build", name=f"cmsis-{operator}")
    result = firmware.run(image, ["out.bin"], cwd=tmp_path, timeout=120)
    assert result.status == 0, f"status {result.status}: {result.stderr}"
    got = (tmp_path / "out.bin").read_bytes()
    assert got == expected, f"{operator} on {cpu}: {sum(a != b for a, b in zip(got, expected))} bytes differ"


# The int16x8 kernels and TRANSPOSE: one kernel serves every packing.
I16 = {"input_dtype": "int16", "input_scale": 0.0005}
INT16_AND_TRANSPOSE_OPERATORS = {
    "conv_s16": ("CONV_2D", dict(I16, input_shape=(1, 7, 6, 4), filters=6, kernel=3, groups=2, padding="SAME",
                                 activation="RELU")),
    "depthwise_conv_s16": ("DEPTHWISE_CONV_2D", dict(I16, input_shape=(1, 6, 5, 3), kernel=3, depth_multiplier=2,
                                                     stride=2, dilation=1, padding="SAME")),
    "fully_connected_s16": ("FULLY_CONNECTED", dict(I16, input_shape=(2, 30), units=9, per_channel=True)),
    "add_s16": ("ADD", dict(I16, input_shape=(1, 3, 4, 5), input2_shape=(1, 1, 4, 1), input2_scale=0.001)),
    "mul_s16": ("MUL", dict(I16, input_shape=(1, 3, 4, 5), input2_shape=(1, 3, 1, 5), input2_scale=0.001,
                            out_scale=0.01)),
    "avg_pool_s16": ("AVERAGE_POOL_2D", dict(I16, input_shape=(1, 7, 7, 3), pool=3, stride=2, padding="SAME")),
    "max_pool_s16": ("MAX_POOL_2D", dict(I16, input_shape=(1, 7, 7, 3), pool=3, stride=2, padding="SAME")),
    "softmax_s8_s16": ("SOFTMAX", dict(input_shape=(2, 40), input_scale=0.1, out_dtype="int16")),
    "softmax_s16": ("SOFTMAX", dict(I16, input_shape=(3, 50))),
    "transpose": ("TRANSPOSE", dict(input_shape=(2, 3, 4, 5))),
}


@pytest.mark.parametrize("operator", list(INT16_AND_TRANSPOSE_OPERATORS))
@pytest.mark.parametrize("cpu", ["host", "cortex-m55", "cortex-m4", "cortex-m3"])
def test_int16_or_transpose_kernel_in_firmware_gives_the_python_executor_s_bytes(tmp_path, cpu, operator):
    _require(cpu)
    op_type, params = INT16_AND_TRANSPOSE_OPERATORS[operator]
    _, graph = single(op_type, **params)
    call = kernels.prepare(graph, graph.operators[0], mcpu=OPTIONS["mcpu"])
    assert call.name == f"tvmd_cmsis_{operator}"
    arrays = op_arrays(graph, random_inputs(graph, 3))
    kernels.run(call, arrays)
    expected = arrays[-1].tobytes()
    firmware_arrays = [*arrays[:-1], np.zeros_like(arrays[-1])]

    srcs, includes = _layout(tmp_path, _contribution(cpu))
    main = tmp_path / "main.c"
    main.write_text(_program(call, firmware_arrays, call.name))
    image = firmware.build([main, *srcs], includes, cpu, tmp_path / "build", name=f"cmsis-{operator}")
    result = firmware.run(image, ["out.bin"], cwd=tmp_path, timeout=120)
    assert result.status == 0, f"status {result.status}: {result.stderr}"
    got = (tmp_path / "out.bin").read_bytes()
    assert got == expected, f"{operator} on {cpu}: {sum(a != b for a, b in zip(got, expected))} bytes differ"


def _run_one_kernel(tmp_path: Path, cpu: str, call, arrays: list, name: str,
                    writable: tuple[int, ...] = ()) -> tuple[bytes, firmware.RunResult]:
    """The kernel call built into firmware for ``cpu`` and run: its output bytes and the run
    (``region_instructions`` counts the kernel call alone under QEMU); ``writable`` as call_data's."""
    firmware_arrays = [*arrays[:-1], np.zeros_like(arrays[-1])]
    srcs, includes = _layout(tmp_path, _contribution(cpu))
    main = tmp_path / "main.c"
    main.write_text(_program(call, firmware_arrays, call.name, writable))
    image = firmware.build([main, *srcs], includes, cpu, tmp_path / "build", name=f"cmsis-{name}")
    result = firmware.run(image, ["out.bin"], cwd=tmp_path, timeout=120)
    assert result.status == 0, f"status {result.status}: {result.stderr}"
    return (tmp_path / "out.bin").read_bytes(), result


def _extreme_inputs(graph, seed: int) -> list[np.ndarray]:
    """random_inputs with the type's extremes at the start of every input (int16: -32768, 32767)."""
    inputs = random_inputs(graph, seed)
    for x in inputs:
        info = np.iinfo(x.dtype)
        flat = x.reshape(-1)
        flat[: min(4, flat.size)] = [info.min, info.max, info.min, info.max][: min(4, flat.size)]
    return inputs


# The int16x8 (and further) families with M-profile paths (MVE, DSP, plain C): shapes that reach
# every vector body and tail (MVE: 8 int16 lanes; DSP: 4 values per step, 2 rows per pass),
# per-channel and per-tensor quantization, activation clamps, int16 extremes.
MPROFILE_DOT_OPERATORS = {
    # depth 37 = 4 MVE steps + 5 tail lanes, 9 DSP steps + 1; 7 channels = 3 pairs + a lone one
    "fully_connected_s16_tails": ("FULLY_CONNECTED", dict(I16, input_shape=(2, 37), units=7, per_channel=True,
                                                          activation="RELU")),
    "fully_connected_s16_per_tensor": ("FULLY_CONNECTED", dict(I16, input_shape=(1, 64), units=10,
                                                               per_channel=False, activation="RELU6")),
    "fully_connected_s16_short": ("FULLY_CONNECTED", dict(I16, input_shape=(3, 3), units=1, per_channel=True)),
    # k = 3 * 3 * 5 = 45 (5 MVE steps + 5 lanes; 11 DSP steps + 1), 7 channels, padding zeros in the column
    "conv_s16_tails": ("CONV_2D", dict(I16, input_shape=(1, 6, 5, 5), filters=7, kernel=3, padding="SAME",
                                       per_channel=True, activation="RELU")),
    # two groups, dilation and stride: columns built tap by tap
    "conv_s16_groups": ("CONV_2D", dict(I16, input_shape=(1, 9, 8, 6), filters=4, kernel=3, groups=2, stride=2,
                                        padding="SAME", activation="RELU6")),
    "conv_s16_dilated": ("CONV_2D", dict(I16, input_shape=(1, 9, 8, 3), filters=5, kernel=3, dilation=2,
                                         padding="VALID", per_channel=False)),
    "conv_s16_pointwise": ("CONV_2D", dict(I16, input_shape=(1, 4, 3, 17), filters=9, kernel=1, per_channel=True)),
    # 11 channels: two 4-channel blocks and a 3-channel tail
    "depthwise_s16_tails": ("DEPTHWISE_CONV_2D", dict(I16, input_shape=(1, 7, 6, 11), kernel=3, depth_multiplier=1,
                                                      stride=2, padding="SAME", per_channel=True, activation="RELU")),
    "depthwise_s16_per_tensor": ("DEPTHWISE_CONV_2D", dict(I16, input_shape=(1, 5, 5, 8), kernel=3,
                                                           depth_multiplier=1, dilation=2, padding="SAME",
                                                           per_channel=False, activation="RELU6")),
    # a dilated 5x5 window wider than the image: clipped on both sides of both axes; 5 channels (4 + 1)
    "depthwise_s16_clipped": ("DEPTHWISE_CONV_2D", dict(I16, input_shape=(1, 6, 7, 5), kernel=5, depth_multiplier=1,
                                                        dilation=2, padding="SAME", per_channel=True)),
    # depth multiplier 2: the int64 loop on every CPU
    "depthwise_s16_dm2": ("DEPTHWISE_CONV_2D", dict(I16, input_shape=(1, 5, 4, 3), kernel=3, depth_multiplier=2,
                                                    padding="SAME", per_channel=True)),
    # BATCH_MATMUL: depth 37 (16-value MVE steps and a tail, 4-value DSP steps and a tail), 7 columns
    # (pairs and a lone one; four-column blocks and a tail of three), both zero points non-zero
    "batch_matmul_adj_y": ("BATCH_MATMUL", dict(input_shape=(2, 3, 37), input2_shape=(2, 7, 37), adj_y=True,
                                                input_zero_point=-7, input2_zero_point=5)),
    "batch_matmul_rows": ("BATCH_MATMUL", dict(input_shape=(1, 5, 37), input2_shape=(1, 37, 7),
                                               input_zero_point=9, input2_zero_point=-3)),
    "batch_matmul_adj_x": ("BATCH_MATMUL", dict(input_shape=(3, 6), input2_shape=(3, 5), adj_x=True)),
    "batch_matmul_adj_both": ("BATCH_MATMUL", dict(input_shape=(6, 4), input2_shape=(5, 6), adj_x=True, adj_y=True)),
    # TRANSPOSE_CONV: 19 input channels (a 16-value MVE step and a tail), 5 output channels
    "transpose_conv_tails": ("TRANSPOSE_CONV", dict(input_shape=(1, 4, 3, 19), filters=5, kernel=3, stride=2,
                                                    input_zero_point=-6)),
    "transpose_conv_per_tensor": ("TRANSPOSE_CONV", dict(input_shape=(1, 3, 4, 8), filters=4, kernel=(2, 3),
                                                         stride=(1, 2), per_channel=False, input_zero_point=3)),
}


def _recurrent(maker: str, *args, **kwargs) -> Callable[[], bytes]:
    def make() -> bytes:
        import test_recurrent  # its model makers (importing it needs tflite-micro's runtime, as the oracle does)

        return getattr(test_recurrent, maker)(*args, **kwargs)
    return make


# SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM: their feature / gate dot products over 37 and 19 inputs (16-value
# MVE steps and tails; 4-value DSP steps and tails) for an odd number of rows (pairs and a lone one).
MPROFILE_RECURRENT = {
    "svdf_int16_state": _recurrent("svdf_model", 2, 37, 5, 1, 6, "int16", 3, zero_point=7),
    "svdf_int8_state": _recurrent("svdf_model", 1, 37, 3, 2, 4, "int8", 4, zero_point=-9, state_zero_point=5),
    "lstm_int8": _recurrent("lstm_model", (2, 3, 19), 7, time_major=False, int16=False, cell_clip=1.5, seed=1,
                            zero_point=-5, cell_scale_power=-12),
    "lstm_int16": _recurrent("lstm_model", (3, 2, 19), 7, time_major=True, int16=True, cell_clip=0.0, seed=2,
                             zero_point=0, cell_scale_power=-11),
}


@pytest.mark.parametrize("operator", [*MPROFILE_DOT_OPERATORS, *MPROFILE_RECURRENT])
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4", "cortex-m3"])
def test_m_profile_dot_product_paths_give_tflite_micro_s_bytes(tmp_path, cpu, operator):
    """Helium on M55, DSP on M4, plain C on M3: the Python executor's bytes, which are TFLM's (one run
    from the variable tensors' reset values)."""
    _require(cpu)
    if operator in MPROFILE_RECURRENT:
        model = MPROFILE_RECURRENT[operator]()
        graph = load_tflite(model)
    else:
        op_type, params = MPROFILE_DOT_OPERATORS[operator]
        model, graph = single(op_type, **params)
    call = kernels.prepare(graph, graph.operators[0], mcpu=OPTIONS["mcpu"])
    inputs = _extreme_inputs(graph, 5)
    arrays = op_arrays(graph, inputs)
    variables = tuple(k for k, i in enumerate(graph.operators[0].inputs) if i >= 0 and graph.tensor(i).is_variable)
    for k in variables:
        t = graph.tensor(graph.operators[0].inputs[k])
        arrays[k] = np.full(t.shape, t.reset_value, dtype=t.dtype)
    start = [a.copy() if a is not None else None for a in arrays]  # the kernel updates the state in place
    kernels.run(call, arrays)
    oracle = tflm_run(model, inputs).output(0)
    assert np.array_equal(arrays[-1], oracle.reshape(arrays[-1].shape)), f"{operator}: host differs from TFLM"
    got, _ = _run_one_kernel(tmp_path, cpu, call, start, operator, variables)
    expected = arrays[-1].tobytes()
    assert got == expected, f"{operator} on {cpu}: {sum(a != b for a, b in zip(got, expected))} bytes differ"


# The families whose M-profile paths sit beside the portable C (mprofile.h): shapes that reach
# the vector body and the tails (Helium: 4 int32 / 16 int8 lanes per step; DSP: 4 values per word),
# broadcasts along and across the innermost dimension, activation clamps.
Z = {"input_zero_point": -5, "input2_zero_point": 9}
MPROFILE_OPERATORS = {
    "add_flat": ("ADD", dict(Z, input_shape=(1, 4, 5, 7), input2_shape=(1, 4, 5, 7), input2_scale=0.07,
                             activation="RELU")),
    "add_broadcast": ("ADD", dict(Z, input_shape=(1, 3, 4, 7), input2_shape=(1, 1, 4, 1), input2_scale=0.05,
                                  activation="RELU6")),
    "add_channel": ("ADD", dict(input_shape=(2, 3, 11), input2_shape=(11,), input2_scale=0.03, input_zero_point=11)),
    # SUB has no ISA path (the plain loop on every M-profile CPU): its firmware bits checked all the same.
    "sub_flat": ("SUB", dict(Z, input_shape=(2, 37), input2_shape=(2, 37), input2_scale=0.07, activation="RELU")),
    "sub_broadcast": ("SUB", dict(Z, input_shape=(1, 3, 4, 7), input2_shape=(1, 1, 4, 1), input2_scale=0.05,
                                  activation="RELU6")),
    "mul_flat": ("MUL", dict(Z, input_shape=(2, 71), input2_shape=(2, 71), out_scale=0.5)),
    "mul_broadcast": ("MUL", dict(Z, input_shape=(1, 3, 4, 7), input2_shape=(1, 3, 1, 7), input2_scale=0.01,
                                  out_scale=0.02, activation="RELU")),
    "mul_scalar": ("MUL", dict(input_shape=(1, 5, 7), input2_shape=(1, 1, 1), input2_scale=0.01, out_scale=0.03,
                               activation="RELU6")),
    # 21 channels: one full 16-lane group and a tail (MVE), five words and a tail (DSP); SAME clips windows.
    "max_pool": ("MAX_POOL_2D", dict(input_shape=(1, 9, 8, 21), pool=3, stride=2, padding="SAME",
                                     activation="RELU6", input_zero_point=-3)),
    "avg_pool": ("AVERAGE_POOL_2D", dict(input_shape=(1, 9, 8, 21), pool=3, stride=2, padding="SAME",
                                         activation="RELU", input_zero_point=4)),
    # 289 taps: past the DSP path's int16 sums, the plain loop on M4.
    "avg_pool_289_taps": ("AVERAGE_POOL_2D", dict(input_shape=(1, 17, 17, 6), pool=17, stride=1, padding="VALID")),
    "maximum_flat": ("MAXIMUM", dict(input_shape=(1, 4, 5, 7), input2_shape=(1, 4, 5, 7))),
    "minimum_broadcast": ("MINIMUM", dict(input_shape=(1, 3, 4, 19), input2_shape=(1, 3, 1, 19))),
    "maximum_broadcast_channel": ("MAXIMUM", dict(input_shape=(2, 3, 4, 21), input2_shape=(1, 3, 4, 1))),
    # Runs of 2 (element by element), 13 contiguous (one copy), 37 and 21 strided (MVE gathers and tails).
    "transpose_reverse": ("TRANSPOSE", dict(input_shape=(2, 3, 5, 11))),
    "transpose_contiguous_runs": ("TRANSPOSE", dict(input_shape=(2, 7, 5, 13), perm=[0, 2, 1, 3])),
    "transpose_strided_runs": ("TRANSPOSE", dict(input_shape=(3, 37), perm=[1, 0])),
    "transpose_s16_strided_runs": ("TRANSPOSE", dict(input_shape=(2, 3, 21, 5), perm=[0, 1, 3, 2],
                                                     input_dtype="int16", input_scale=0.0005)),
    # Rows of 41 and 39 (4-lane tails); a scale of 1.0 leaves most entries past diff_min (whole steps skipped);
    # 600 entries: a sum far above one; int8 -> int16 shares the rows.
    "softmax": ("SOFTMAX", dict(input_shape=(2, 41), input_scale=0.1)),
    "softmax_past_diff_min": ("SOFTMAX", dict(input_shape=(3, 13), input_scale=1.0)),
    "softmax_600": ("SOFTMAX", dict(input_shape=(1, 600), input_scale=0.02)),
    "softmax_s8_s16": ("SOFTMAX", dict(input_shape=(2, 39), input_scale=0.1, out_dtype="int16")),
}


# The int16 families with M-profile paths (Helium: 4 int32 lanes or 8 int16 lanes per step; DSP: 2 values
# per word), run on inputs that start with -32768, 32767: runs of odd length (tails), broadcasts along and
# across the innermost dimension, clamps by the activation and by the int16 range.
S16 = {"input_dtype": "int16", "input_scale": 0.0005, "input2_scale": 0.0007}
MPROFILE_S16_OPERATORS = {
    "add_s16_flat": ("ADD", dict(S16, input_shape=(2, 3, 23), input2_shape=(2, 3, 23), activation="RELU")),
    "add_s16_broadcast": ("ADD", dict(S16, input_shape=(1, 3, 4, 7), input2_shape=(1, 1, 4, 1), out_scale=0.0004)),
    "add_s16_channel": ("ADD", dict(S16, input_shape=(2, 3, 11), input2_shape=(11,), activation="RELU6",
                                    out_scale=0.0003)),
    "mul_s16_flat": ("MUL", dict(S16, input_shape=(2, 71), input2_shape=(2, 71), out_scale=0.004)),
    "mul_s16_broadcast": ("MUL", dict(S16, input_shape=(1, 3, 4, 7), input2_shape=(1, 3, 1, 7), out_scale=0.01,
                                      activation="RELU")),
    "mul_s16_scalar": ("MUL", dict(S16, input_shape=(1, 5, 7), input2_shape=(1, 1, 1), out_scale=0.002)),
    # 21 channels: two 8-lane groups and a tail of 5 (MVE), five 4-channel steps and one (DSP); SAME clips.
    "max_pool_s16_same": ("MAX_POOL_2D", dict(I16, input_shape=(1, 9, 8, 21), pool=3, stride=2, padding="SAME",
                                              activation="RELU6")),
    "avg_pool_s16_same": ("AVERAGE_POOL_2D", dict(I16, input_shape=(1, 9, 8, 21), pool=3, stride=2,
                                                  padding="SAME", activation="RELU")),
    "avg_pool_s16_narrow": ("AVERAGE_POOL_2D", dict(I16, input_shape=(2, 5, 6, 3), pool=(2, 4), stride=1,
                                                    padding="SAME")),
    "max_pool_s16_narrow": ("MAX_POOL_2D", dict(I16, input_shape=(2, 5, 6, 6), pool=(3, 2), stride=(1, 2),
                                                padding="SAME")),
    # Rows of 41 (8-lane maximum and 4-lane steps with tails); a wide scale (most differences past the
    # table's -10, clamped); 300 near-equal entries (a large sum, a small reciprocal).
    "softmax_s16_tails": ("SOFTMAX", dict(I16, input_shape=(2, 41))),
    "softmax_s16_wide": ("SOFTMAX", dict(I16, input_shape=(3, 13), input_scale=0.01)),
    "softmax_s16_long": ("SOFTMAX", dict(I16, input_shape=(1, 300), input_scale=0.0001)),
}


@pytest.mark.parametrize("operator", [*MPROFILE_OPERATORS, *MPROFILE_S16_OPERATORS])
@pytest.mark.parametrize("cpu", ["cortex-m55", "cortex-m4", "cortex-m3"])
def test_m_profile_path_in_firmware_gives_tflite_micro_s_bytes(tmp_path, cpu, operator):
    """Helium on M55, DSP on M4, plain C on M3: each equals tflite-micro's output, byte for byte."""
    _require(cpu)
    s16 = operator in MPROFILE_S16_OPERATORS
    op_type, params = (MPROFILE_S16_OPERATORS if s16 else MPROFILE_OPERATORS)[operator]
    model, graph = single(op_type, **params)
    call = kernels.prepare(graph, graph.operators[0], mcpu=OPTIONS["mcpu"])
    inputs = _extreme_inputs(graph, 3) if s16 else random_inputs(graph, 3)
    expected = tflm_run(model, inputs).output(0).tobytes()
    got, _ = _run_one_kernel(tmp_path, cpu, call, op_arrays(graph, inputs), operator)
    assert got == expected, f"{operator} on {cpu}: {sum(a != b for a, b in zip(got, expected))} bytes differ"
