"""The shape and data-movement operators exported as C and run on the host and on Cortex-M55 (QEMU):
int8 and int16 chains of every one of them, equal to tflite-micro and the Python executor bit for
bit.  (Each operator's single-op model is also in :mod:`test_export_models`' matrix.)"""

from __future__ import annotations

import numpy as np
import pytest
from export_inputs import random_inputs

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.aot.compiler import for_firmware
from tvmdevice.export import run_export
from tvmdevice.testing.firmware import require_tools
from tvmdevice.testing.oracle import tflm_run

pytestmark = pytest.mark.export


def int8_chain() -> bytes:
    b = ModelBuilder(seed=8)
    x = b.input((1, 6, 5, 4), 0.05, -2)
    t = b.transpose(x, [0, 3, 1, 2])                                        # [1, 4, 6, 5]
    s = b.strided_slice(t, [0, 3, 0, -1], [1, 0, 6, 0], [1, -1, 2, -2])     # [1, 3, 3, 2]
    parts = b.split_v(b.slice(t, [0, 0, 1, 0], [1, -1, 3, -1]), [1, -1], 1)  # [1,1,3,5], [1,3,3,5]
    u = b.unpack(parts[1], axis=1)                                          # 3 x [1, 3, 5]
    p = b.pack([u[2], u[0]], axis=3)                                        # [1, 3, 5, 2]
    g = b.gather(b.squeeze(p, [0]), [4, 0, 2], axis=1)                      # [3, 3, 2]
    r = b.resize_bilinear(b.expand_dims(g, 0), (5, 4), half_pixel_centers=True)
    n = b.resize_nearest(r, (7, 9), align_corners=True)
    wide = b.slice(b.broadcast_to(s, (2, 3, 3, 2)), [1, 0, 0, 0], [1, 3, 3, 2])  # [1, 3, 3, 2]
    padded = b.slice(b.padv2(s, [[0, 0], [1, 0], [0, 2], [0, 0]], -5), [0, 1, 0, 0], [1, 3, 3, 2])
    c = b.concatenation([padded, wide], axis=2)                             # [1, 3, 6, 2]
    for y in (c, n, *b.split(parts[0], 5, axis=3)):
        b.output(y)
    return b.build()


def int16_chain() -> bytes:
    b = ModelBuilder(seed=9)
    x = b.input((1, 4, 6, 3), 0.001, 0, dtype="int16")
    t = b.transpose(x, [0, 2, 1, 3])                                        # [1, 6, 4, 3]
    halves = b.split(t, 2, axis=1)                                          # 2 x [1, 3, 4, 3]
    p = b.pack(halves, axis=0)                                              # [2, 1, 3, 4, 3]
    q = b.squeeze(b.strided_slice(b.squeeze(p, [1]), [0, 0, 0, 0], [2, 3, 4, 3], [1, 2, 1, 1]))  # [2, 2, 4, 3]
    shifted = b.slice(b.pad(q, [[0, 0], [0, 0], [1, 1], [0, 0]]), [0, 0, 0, 0], [2, 2, 4, 3])
    c = b.concatenation([q, shifted], axis=-1)                              # [2, 2, 4, 6]
    r = b.resize_nearest(c, (3, 5), half_pixel_centers=True)
    for y in (r, *b.unpack(b.padv2(q, [[0, 0], [1, 0], [0, 0], [0, 1]], 1234), axis=-1),
              b.split_v(b.expand_dims(x, 1), [2, -1], -2)[1]):
        b.output(y)
    return b.build()


MODELS = {"shape-int8": int8_chain, "shape-int16": int16_chain}
CPUS = ["host", "cortex-m55"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    cache: dict = {}

    def get(name: str):
        if name not in cache:
            model = MODELS[name]()
            module = tvmdevice.compile(model, "c", name=name.replace("-", "_"))
            out = module.export(tmp_path_factory.mktemp(name))
            inputs = random_inputs(module.graph, seed=4)
            with for_firmware(module).executor() as ex:
                ours = ex.run(inputs)
            ref = tflm_run(model, inputs)
            for k, got in enumerate(ours):
                np.testing.assert_array_equal(got, ref.output(k).reshape(got.shape), err_msg=f"{name} output {k}")
            cache[name] = (out, inputs, ours)
        return cache[name]

    return get


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_shape_chains_export_and_run_bit_exact(exported, name, cpu):
    require_tools(cpu)
    out, inputs, expected = exported(name)
    run = run_export(out, cpu, inputs)
    assert len(run.outputs) == len(expected) > 3
    for k, (want, got) in enumerate(zip(expected, run.outputs)):
        np.testing.assert_array_equal(got.reshape(want.shape), want, err_msg=f"output {k} of {name} on {cpu}")
