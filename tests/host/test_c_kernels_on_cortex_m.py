"""The ``c`` device's C kernels compiled into firmware: the same bits on the host and on Cortex-M.

A model compiled for ``c`` becomes a C99 program (:mod:`c_program`) that
calls the very C files the host extension runs; it is built with
:func:`tvmdevice.firmware.build` for the host and for Cortex-M55/M4 (QEMU) and
every operator output must equal the Python executor's.  Cortex-M runs need
``arm-none-eabi-gcc``, newlib and ``qemu-system-arm``: without them they skip
saying what to install, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from c_program import write_program

import tvmdevice
from tvmdevice import firmware
from tvmdevice.aot.builder import ModelBuilder, demo_model
from tvmdevice.host import plugin
from tvmdevice.host.headers import write_headers
from tvmdevice.host.kernel_table import KERNELS
from tvmdevice.testing.firmware import require_tools

CSRC = Path(plugin.__file__).parent / "csrc"
CPUS = ["host", "cortex-m55", "cortex-m4"]


def every_kernel_model() -> bytes:
    """One small model that calls every kernel of the table at least once."""
    b = ModelBuilder(seed=21)
    f = b.input((1, 6, 6, 2), dtype="float32")
    x = b.quantize(f, 0.05, -3)                                    # quantize_f32_s8
    x = b.quantize(x, 0.04, 5)                                     # requantize_s8
    c = b.conv2d(x, 4, kernel=3, padding="SAME", activation="RELU", per_channel=True)
    d = b.depthwise_conv2d(c, kernel=3, depth_multiplier=2, padding="SAME")
    a = b.avg_pool2d(d, pool=2, stride=2)
    m = b.max_pool2d(d, pool=2, stride=2)
    s = b.add(a, m)
    p = b.pad(b.mul(s, m), [[0, 0], [1, 0], [0, 1], [0, 0]])
    logistic = b.logistic(p)
    k = b.tanh(b.concatenation([logistic, logistic], axis=-1))  # CONCATENATION needs equal quantization
    halves = b.split(b.transpose(k, [0, 3, 1, 2]), 2, axis=1)    # strided_copy, split
    g = b.gather(b.pack(halves, 0), [1, 0], axis=0)               # join, gather_s8
    b.output(b.padv2(g, [[0, 0]] * 4 + [[1, 0]], 9))             # pad_any
    b.output(b.resize_bilinear(b.resize_nearest(k, (5, 7)), (3, 3)))  # resize_nearest, resize_bilinear_s8
    mean = b.mean(k, axes=[1, 2], keep_dims=False, out_scale=0.03, out_zero_point=1)
    const = b.reshape(b.constant(np.arange(16, dtype=np.int8).reshape(4, 4) - 8, scale=0.03, zero_point=1),
                      (1, 16))
    y = b.fully_connected(b.add(mean, const), 5, activation="RELU")
    b.output(b.dequantize(b.softmax(y)))
    # The int16x8 kernels and SUB.
    q = b.quantize(f, 0.002, 0, dtype="int16")                     # quantize_f32_s16
    q = b.quantize(q, 0.0011, 0, dtype="int16")                    # requantize_s16_s16
    c16 = b.conv2d(q, 4, kernel=3)                                 # conv2d_s16
    d16 = b.depthwise_conv2d(c16, kernel=3)                        # depthwise_conv2d_s16
    s16 = b.sub(b.add(c16, d16), d16)                              # add_s16, sub_s16
    m16 = b.mul(s16, s16, out_scale=float(s16.scale) ** 2 * 32768)  # mul_s16
    p16 = b.max_pool2d(b.avg_pool2d(m16, 2, stride=1), 2)          # avg_pool2d_s16, max_pool2d_s16
    fc16 = b.fully_connected(p16, 6, out_scale=0.0004)             # fully_connected_s16
    b.output(b.softmax(b.tanh(b.logistic(fc16))))                  # logistic_s16, tanh_s16, softmax_s16
    b.output(b.quantize(fc16, 0.05, 0))                            # requantize_s16_s8
    b.output(b.quantize(fc16, 1e-6, -7, dtype="int32"))             # requantize_s16_s32
    b.output(b.quantize(x, 0.0004, 0, dtype="int16"))              # requantize_s8_s16
    b.output(b.softmax(b.sub(x, b.quantize(x, 0.03, 2)), out_dtype="int16"))  # sub_s8, softmax_s8_s16
    _issue_12_kernels(b, x)
    seq = b.input((2, 3, 4), scale=0.03, zero_point=-4)
    b.output(b.lstm(seq, 3, out_zero_point=2))                     # lstm_s8
    b.output(b.lstm(b.input((3, 2, 4), scale=1 / 4096, dtype="int16"), 3, time_major=True))  # lstm_s16
    frame = b.input((2, 6), scale=0.04, zero_point=3)
    b.output(b.svdf(frame, 3, rank=2, memory=4))                   # svdf_s8_s16
    b.output(b.svdf(frame, 2, memory=3, state="int8", state_zero_point=-5))  # svdf_s8_s8
    return b.build()


def _issue_12_kernels(b: ModelBuilder, x) -> None:
    """The arithmetic, activation and reduction kernels, as extra outputs."""
    r = b.relu(b.minimum(b.maximum(x, b.relu6(x)), x), out_scale=0.04, out_zero_point=-128)
    r = b.prelu(b.hard_swish(b.leaky_relu(r, alpha=0.3), out_scale=0.04, out_zero_point=-20))
    r = b.squared_difference(r, x, out_scale=0.01, out_zero_point=-128)
    b.output(b.sum(r, axes=[1, 2]))
    b.output(b.reduce_max(r, axes=[3]))
    b.output(b.arg_max(r))
    b.output(b.arg_min(r, axis=1))
    b.output(b.log_softmax(r))
    t = b.transpose_conv(r, 3, kernel=2, stride=2, out_scale=0.05)
    b.output(b.batch_matmul(t, b.constant(np.arange(12, dtype=np.int8).reshape(3, 4) - 6, scale=0.02)))


BUILT = {"every-kernel": every_kernel_model, "demo": demo_model}
#: The shared real models (TVMDEVICE_MODELS_DIR) that fit every CPU's memory.
REAL = ["hello_world_int8.tflite", "micro_speech_int8.tflite", "kws_dscnn_int8.tflite",
        "ad_fc_autoencoder_int8.tflite"]


def _model(name: str) -> bytes:
    if name in BUILT:
        return BUILT[name]()
    folder = os.environ.get("TVMDEVICE_MODELS_DIR")
    if not folder or not (Path(folder) / name).is_file():
        pytest.skip(f"{name} is not in TVMDEVICE_MODELS_DIR ({folder or 'unset'})")
    return (Path(folder) / name).read_bytes()


def _executor_outputs(module, inputs: list[np.ndarray]) -> bytes:
    with module.executor() as ex:
        ex.run(inputs)
        return b"".join(ex.tensor(t).tobytes() for op in module.graph.operators for t in op.outputs)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """``program(name)`` -> (folder with model.c, headers and input.bin, the executor's outputs, the module)."""
    built: dict = {}

    def make(name: str):
        if name not in built:
            work = tmp_path_factory.mktemp("c-program")
            module = tvmdevice.compile(_model(name), "c", preserve_all_tensors=True)
            rng = np.random.default_rng(5)
            inputs = []
            for t in module.graph.inputs:
                tensor = module.graph.tensors[t]
                floats = tensor.dtype == np.float32
                inputs.append(rng.normal(0.0, 3.0, tensor.shape).astype(np.float32) if floats
                              else rng.integers(-128, 128, tensor.shape).astype(tensor.dtype))
            (work / "input.bin").write_bytes(b"".join(x.tobytes() for x in inputs))
            write_program(module, work)
            write_headers(work / "generated")
            built[name] = (work, _executor_outputs(module, inputs), module)
        return built[name]

    return make


def test_the_every_kernel_model_calls_every_kernel(program):
    module = program("every-kernel")[2]
    assert {p.call.name for p in module.placement.ops if not p.is_view} == {k.name for k in KERNELS}


@pytest.mark.parametrize("name", [*BUILT, *REAL])
@pytest.mark.parametrize("cpu", CPUS)
def test_the_c_kernels_give_the_executors_bits_on_every_cpu(program, tmp_path, cpu, name):
    require_tools(cpu)
    work, expected, _ = program(name)
    image = firmware.build([work / "model.c", *sorted(CSRC.glob("*.c"))],
                           [work / "generated", tvmdevice.get_include(), CSRC], cpu, tmp_path, name="model")
    result = firmware.run(image, ["input.bin", f"out-{cpu}.bin"], cwd=work, timeout=120)
    assert result.status == 0, result.stderr
    got = (work / f"out-{cpu}.bin").read_bytes()
    assert len(got) == len(expected)
    assert got == expected, f"{name} on {cpu}: {sum(a != b for a, b in zip(got, expected))} bytes differ"
