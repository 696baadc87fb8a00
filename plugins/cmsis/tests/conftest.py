"""Shared helpers: build single-operator models, run them on the cmsis-nn
kernels, on TensorFlow Lite Micro (the oracle) and on the host reference."""
# ruff: noqa: E402  (sys.path is fixed before the plugin is imported)

from __future__ import annotations

import os
import sys
from pathlib import Path

# `python -m pytest` from the plugin's root puts that directory first on
# sys.path, where the source package (without its compiled extension) would
# shadow the installed distribution these tests are for.
_ROOT = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or os.curdir).resolve() != _ROOT]
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import tvmdevice
from hypothesis import HealthCheck, settings
from tvmdevice.aot.builder import single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.ir import Graph
from tvmdevice.testing.oracle import tflm_run
from tvmdevice.testing.reference import run_graph

from tvmdevice_cmsis import _kernels, kernels

# Each example builds a model and runs three implementations: keep the
# per-test budget small so the whole suite stays well under three minutes.
settings.register_profile("cmsis", max_examples=int(os.environ.get("CMSIS_TEST_EXAMPLES", "150")), deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                          derandomize=True, database=None)
settings.load_profile("cmsis")


def random_inputs(graph: Graph, seed: int) -> list[np.ndarray]:
    """Uniform values over the whole range of each graph input's type (int8 or int16)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in graph.inputs:
        t = graph.tensor(i)
        info = np.iinfo(np.dtype(t.dtype))
        out.append(rng.integers(info.min, info.max + 1, size=t.shape, dtype=np.int64).astype(t.dtype))
    return out


def op_arrays(graph: Graph, inputs: Sequence[np.ndarray]) -> list[np.ndarray | None]:
    """The buffers of the graph's single operator: inputs in operator order, then a zeroed output."""
    op = graph.operators[0]
    values = dict(zip(graph.inputs, inputs))
    arrays: list[np.ndarray | None] = []
    for i in op.inputs:
        if i < 0:
            arrays.append(None)
        elif i in values:
            arrays.append(np.ascontiguousarray(values[i]))
        else:
            arrays.append(np.array(graph.tensor(i).data, copy=True))
    out = graph.tensor(op.outputs[0])
    return arrays + [np.zeros(out.shape, dtype=out.dtype)]


def run_cmsis(graph: Graph, inputs: Sequence[np.ndarray], device: Any = None, mcpu: str = "") -> np.ndarray:
    """The single operator of ``graph`` on the cmsis-nn kernels, packed for ``mcpu``."""
    call = kernels.prepare(graph, graph.operators[0], mcpu=mcpu)
    arrays = op_arrays(graph, inputs)
    kernels.run(call, arrays, device=device)
    return arrays[-1]


#: The host kernels' SIMD levels, highest first.
ALL_SIMD_LEVELS = tuple(reversed(_kernels.SIMD_LEVELS))

#: The SIMD levels this CPU runs (a set, not a chain), highest first: every bit-exact check runs each.
SIMD_PATHS = tuple(reversed(_kernels.simd_levels()))

#: Every level must run: this environment asked for the emulated build (tox's simd-emulated) under CI, where
#: a level skipped for want of SIMDe would hide that the build was not emulated.
REQUIRE_EVERY_LEVEL = (os.environ.get("CI") == "true"
                       and os.environ.get("TVMDEVICE_CMSIS_SIMD_EMULATION", "") == "1")

#: The packings every bit-exact test runs (``-mcpu``): the host's, and the M-profile one (cortex-m55).
MCPUS = ("", "cortex-m55")


def simd_paths(mcpu: str) -> tuple[str, ...]:
    """The SIMD levels of a packing: the M-profile kernels are portable C only."""
    return SIMD_PATHS if mcpu == "" else ("portable",)


def simd_level_params(levels: Sequence[str] = ALL_SIMD_LEVELS) -> list[Any]:
    """``levels`` as pytest parameters, each skipped (saying why and how to run it) when this CPU lacks it,
    or failed instead under :data:`REQUIRE_EVERY_LEVEL`."""
    params = []
    for level in levels:
        reason = (f"this CPU lacks the {level} SIMD level (it runs {', '.join(_kernels.simd_levels())}): "
                  f"{_kernels.EMULATION_HINT}")
        # Required, a missing level fails: forcing it raises ValueError naming the level and the fix.
        missing = level not in SIMD_PATHS and not REQUIRE_EVERY_LEVEL
        params.append(pytest.param(level, id=level, marks=pytest.mark.skipif(missing, reason=reason)))
    return params


class simd_path:
    """Context manager: run the kernels on one SIMD level (a name of ``_kernels.SIMD_LEVELS``)."""

    def __init__(self, level: str) -> None:
        self.level = level

    def __enter__(self) -> str:
        _kernels.set_simd_level(self.level)
        return self.level

    def __exit__(self, *exc: object) -> None:
        _kernels.set_simd(True)


def assert_bit_exact(model: bytes, seeds: Sequence[int] = (0, 1), mcpu: str = "",
                     levels: Sequence[str] | None = None) -> None:
    """On every kernel path of ``mcpu``'s packing (or the SIMD ``levels`` given), the cmsis-nn output
    equals TFLM's and the host reference's, value for value."""
    graph = load_tflite(model)
    out_index = graph.operators[0].outputs[0]
    for seed in seeds:
        inputs = random_inputs(graph, seed)
        oracle = tflm_run(model, inputs).output(0)
        host = run_graph(graph, inputs)[out_index]
        for simd in simd_paths(mcpu) if levels is None else levels:
            with simd_path(simd):
                ours = run_cmsis(graph, inputs, mcpu=mcpu)
            path = f"{simd} path, -mcpu={mcpu!r}"
            diff = np.flatnonzero(ours != oracle.reshape(ours.shape))
            assert diff.size == 0, (f"{path}: {diff.size} of {ours.size} values differ from TFLM; first at "
                                    f"{diff[0]}: {ours.reshape(-1)[diff[0]]} vs {oracle.reshape(-1)[diff[0]]}")
            assert np.array_equal(ours, host.reshape(ours.shape)), f"{path}: differs from the host reference"


def single(op_type: str, **params: Any) -> tuple[bytes, Graph]:
    """A one-operator model and its graph."""
    model = single_op_model(op_type, **params)
    return model, load_tflite(model)


@pytest.fixture
def cmsis_device():
    """An active cmsis-nn device from the installed plugin; released afterwards."""
    device = tvmdevice.get_registry().create_device("cmsis-nn")
    device.init()
    device.open()
    device.activate()
    yield device
    device.release()


@pytest.fixture
def models_dir() -> Path:
    """The real models folder (``TVMDEVICE_MODELS_DIR``); skips when unset."""
    value = os.environ.get("TVMDEVICE_MODELS_DIR", "").strip()
    if not value:
        pytest.skip("TVMDEVICE_MODELS_DIR is not set")
    path = Path(value)
    if not path.is_dir():
        pytest.skip(f"TVMDEVICE_MODELS_DIR={value} is not a directory")
    return path
