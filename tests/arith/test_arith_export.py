"""The arithmetic and activation operators through the C export: the chained models of :mod:`arith_models` exported for
each target, built and run on the host and on Cortex-M55 (QEMU), equal to tflite-micro and the
Python executor bit for bit.  Marked ``export``."""

from __future__ import annotations

import numpy as np
import pytest
from arith_models import CHAINS

import tvmdevice
from tvmdevice.aot.compiler import for_firmware
from tvmdevice.export import run_export
from tvmdevice.testing.firmware import require_tools
from tvmdevice.testing.oracle import tflm_run

pytestmark = pytest.mark.export

TARGETS = ["c", "cmsis-nn, c", "cmsis-nn -mcpu=cortex-m55, c", "woofles, cmsis-nn, c"]
CPUS = ["host", "cortex-m55"]


@pytest.fixture(scope="session", autouse=True)
def private_cache(private_firmware_cache):
    """Builds go to this session's own cache."""


def _inputs(graph, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=graph.tensors[t].shape, dtype=np.int8) for t in graph.inputs]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    cache: dict = {}

    def get(name: str, target: str):
        if (name, target) not in cache:
            names = set(tvmdevice.get_registry().device_names())
            if any(d.split()[0] not in names for d in target.split(",")):
                pytest.skip(f"{target!r} needs a device that is not installed")
            model = CHAINS[name]()
            module = tvmdevice.compile(model, target, name=f"arith_{name}")
            out = module.export(tmp_path_factory.mktemp(f"{name}-{len(cache)}"))
            inputs = _inputs(module.graph, 4)
            with for_firmware(module).executor() as ex:
                ours = ex.run(inputs)
            ref = tflm_run(model, inputs)
            for k, a in enumerate(ours):
                np.testing.assert_array_equal(a, ref.output(k).reshape(a.shape), err_msg=f"{name} output {k}")
            cache[(name, target)] = (out, inputs, ours, module)
        return cache[(name, target)]

    return get


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(CHAINS))
def test_exported_chain_runs_bit_exact(exported, name, target, cpu):
    require_tools(cpu)
    out, inputs, expected, _ = exported(name, target)
    got = run_export(out, cpu, inputs)
    for k, (a, b) in enumerate(zip(expected, got.outputs)):
        np.testing.assert_array_equal(b.reshape(a.shape), a, err_msg=f"output {k} of {name} for {target!r} on {cpu}")


@pytest.mark.parametrize("target", ["cmsis-nn, c", "woofles, cmsis-nn, c"])
def test_accelerators_run_their_operators_in_the_export(exported, target):
    _, _, _, module = exported("matmul", target)
    placed = {p.op_type: p.device for p in module.placement.ops}
    assert placed["TRANSPOSE_CONV"] == target.split(",")[0].split()[0]
    assert placed["BATCH_MATMUL"] == "cmsis-nn"
