"""Bit-exact on every intermediate tensor of the real models (TVMDEVICE_MODELS_DIR).

Each supported operator runs alone on the inputs TFLM itself computed (all
tensors preserved), so a difference points at one operator; then the whole
graph runs on the kernels back to back and every tensor is compared.
"""

from __future__ import annotations

import numpy as np
import pytest
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.errors import Refusal
from tvmdevice.ops import analyze
from tvmdevice.testing.oracle import tflm_run

from tvmdevice_cmsis import kernels
from tvmdevice_cmsis.runner import GraphRunner

from conftest import MCPUS, random_inputs, simd_level_params, simd_path, simd_paths

MODELS = ["hello_world_int8", "micro_speech_int8", "kws_dscnn_int8", "ad_fc_autoencoder_int8"]

pytestmark = pytest.mark.models


def load(models_dir, name):
    path = models_dir / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path} is missing")
    data = path.read_bytes()
    return data, load_tflite(data, name=name)


@pytest.mark.parametrize("mcpu", MCPUS, ids=["host-packing", "m-profile"])
@pytest.mark.parametrize("name", MODELS)
def test_every_operator_on_tflm_inputs(models_dir, name, mcpu):
    data, graph = load(models_dir, name)
    checked = 0
    for seed in (0, 1):
        ref = tflm_run(data, random_inputs(graph, seed))
        for op in graph.operators:
            try:
                call = kernels.prepare(graph, op, mcpu=mcpu)
            except Refusal as exc:
                op_data = analyze(graph, op)
                assert op_data is not None and op_data.is_view, f"cmsis-nn refuses {op.type}: {exc}"
                continue
            arrays = [None if i < 0 else (np.array(graph.tensor(i).data, copy=True) if graph.tensor(i).is_constant
                                          else ref.tensor(i, graph.tensor(i).shape).copy()) for i in op.inputs]
            out = graph.tensor(op.outputs[0])
            result = np.zeros(out.shape, out.dtype)
            kernels.run(call, arrays + [result])
            expected = ref.tensor(op.outputs[0], out.shape)
            assert np.array_equal(result, expected), (
                f"operator {op.index} ({op.type}): {np.count_nonzero(result != expected)} values differ")
            checked += 1
    assert checked >= 2


#: (mcpu, SIMD level): each packing on each of its kernel paths; host levels this CPU lacks are skipped.
PATHS = [pytest.param("", p.values[0], id=f"host-packing-{p.id}", marks=p.marks) for p in simd_level_params()] + [
    pytest.param(mcpu, simd, id=f"m-profile-{simd}") for mcpu in MCPUS if mcpu for simd in simd_paths(mcpu)]


@pytest.mark.parametrize("mcpu, simd", PATHS)
@pytest.mark.parametrize("name", MODELS)
def test_whole_graph_every_tensor(models_dir, name, mcpu, simd, cmsis_device):
    data, graph = load(models_dir, name)
    runner = GraphRunner(graph, cmsis_device, mcpu=mcpu)
    try:
        for seed in (0, 1, 2):
            inputs = random_inputs(graph, seed)
            with simd_path(simd):
                runner.run(inputs)
            ref = tflm_run(data, inputs)
            for t in graph.tensors:
                if t.is_constant:
                    continue
                assert np.array_equal(runner.tensor(t.index), ref.tensor(t.index, t.shape)), (
                    f"tensor {t.index} ({t.name}) differs")
    finally:
        runner.close()
