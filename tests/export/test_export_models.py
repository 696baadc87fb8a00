"""Every shared model and every single-operator model of the builder, exported for ``c``,
``cmsis-nn, c`` and ``woofles, cmsis-nn, c``, built and run on the host and on Cortex-M55/M4 under
QEMU: the outputs equal tflite-micro's and the Python executor's, bit for bit.

Marked ``export`` (the tox environment ``export`` runs them; the others deselect them): about a
hundred builds.  Cortex-M runs skip without the ARM tools (naming what to install), except under
``CI=true``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from export_inputs import random_inputs

import tvmdevice
from tvmdevice.aot.builder import SINGLE_OP_DEFAULT_SHAPES, single_op_model
from tvmdevice.aot.compiler import for_firmware
from tvmdevice.export import run_export
from tvmdevice.optable.tflm import BEYOND_TFLM
from tvmdevice.testing.firmware import require_tools
from tvmdevice.testing.oracle import litert_run, tflm_run

pytestmark = pytest.mark.export

TARGETS = ["c", "cmsis-nn, c", "woofles, cmsis-nn, c"]
CPUS = ["host", "cortex-m55", "cortex-m4"]
MODELS = ["hello_world_int8", "micro_speech_int8", "kws_dscnn_int8", "ad_fc_autoencoder_int8"]


def _target_or_skip(target: str) -> None:
    names = set(tvmdevice.get_registry().device_names())
    missing = [d.split()[0] for d in target.split(",") if d.split()[0].strip() not in names]
    if missing:
        pytest.skip(f"device(s) {missing} not installed (pip install ./plugins/<plugin>)")


class _Exports:
    """Each (model, target) exported once, with its references (tflite-micro and the Python executor)."""

    def __init__(self, root: Path) -> None:
        self.root, self.cache = root, {}

    def get(self, key: str, model: bytes, target: str):
        if (key, target) not in self.cache:
            module = tvmdevice.compile(model, target, name=key)
            out = module.export(self.root / f"{key}-{len(self.cache)}")
            inputs = random_inputs(module.graph, seed=3)
            with for_firmware(module).executor() as ex:
                ours = ex.run(inputs)
                if key.upper() in BEYOND_TFLM:  # TFLM has no kernel for it: LiteRT is the oracle
                    expected, oracle = litert_run(model, inputs), "LiteRT"
                else:
                    tflm = tflm_run(model, inputs)
                    expected, oracle = [tflm.output(k) for k in range(len(ours))], "tflite-micro"
                for a, b in zip(ours, expected):
                    np.testing.assert_array_equal(a.reshape(b.shape), b, err_msg=f"Python executor vs {oracle}")
            self.cache[(key, target)] = (out, inputs, ours)
        return self.cache[(key, target)]


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    return _Exports(tmp_path_factory.mktemp("exports"))


def _check(exports, key, model, target, cpu):
    _target_or_skip(target)
    require_tools(cpu)
    out, inputs, expected = exports.get(key, model, target)
    got = run_export(out, cpu, inputs)
    for k, (a, b) in enumerate(zip(expected, got.outputs)):
        np.testing.assert_array_equal(b, a, err_msg=f"output {k} of {key} for {target!r} on {cpu}")
    if cpu != "host":
        assert got.instructions and got.result.stack_used


@pytest.mark.models
@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", MODELS)
def test_shared_models(exports, models_dir, name, target, cpu):
    path = models_dir / f"{name}.tflite"
    if not path.exists():
        pytest.skip(f"{path.name} not in {models_dir}")
    _check(exports, name, path.read_bytes(), target, cpu)


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("op_type", sorted(SINGLE_OP_DEFAULT_SHAPES))
def test_single_op_models(exports, op_type, target, cpu):
    _check(exports, op_type.lower(), single_op_model(op_type, seed=2), target, cpu)


def test_the_matrix_is_not_empty():
    # a collection that skipped everything must not pass for a tested export
    assert TARGETS and CPUS and os.environ.get("TVMDEVICE_MODELS_DIR", "") is not None
