"""Fuzzing the TFLite frontend with corrupted models.

Whatever the bytes, ``load_tflite`` either returns a graph or raises
ModelFormatError / UnsupportedOperatorError, quickly: never a crash, a hang,
or a raw IndexError/struct.error.  A graph that loads must also run in the
host reference (its operators were validated by the kernels' prepare).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tvmdevice import ops
from tvmdevice.aot.builder import demo_model, single_op_model
from tvmdevice.aot.frontend import ModelFormatError, UnsupportedOperatorError, load_tflite
from tvmdevice.errors import KernelError, Refusal
from tvmdevice.testing.reference import run_graph

FUZZ = settings(max_examples=200, deadline=5000, suppress_health_check=[HealthCheck.too_slow],
                print_blob=True)


@st.composite
def corrupted(draw, model: bytes) -> bytes:
    """Truncate, overwrite bytes, or overwrite aligned 32-bit words (offsets,
    lengths and indices in a flatbuffer are 32-bit)."""
    data = bytearray(model)
    kind = draw(st.sampled_from(["truncate", "bytes", "words", "both"]))
    if kind in ("bytes", "both"):
        for _ in range(draw(st.integers(1, 8))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    if kind in ("words", "both"):
        for _ in range(draw(st.integers(1, 4))):
            pos = draw(st.integers(0, len(data) // 4 - 1)) * 4
            value = draw(st.one_of(st.integers(-(2**31), 2**31 - 1), st.sampled_from(
                [0, 1, -1, 2**31 - 1, -(2**31), len(data), len(data) - 4, 0x7FFF, 0xFFFF])))
            data[pos:pos + 4] = struct.pack("<i", value)
    if kind == "truncate":
        data = data[:draw(st.integers(0, len(data) - 1))]
    return bytes(data)


def _check(data: bytes) -> None:
    try:
        graph = load_tflite(data)
    except (ModelFormatError, UnsupportedOperatorError) as e:
        assert str(e)  # every error says something
        return
    # Loaded: every operator is well formed; each is either refused by the
    # operator layer with a reason naming it, or the graph runs (bounded so a
    # mutated shape cannot make the run itself slow).
    for op in graph.operators:
        try:
            ops.analyze(graph, op)
        except Refusal as e:
            assert str(e).startswith(f"operator #{op.index} {op.type}: ") and e.reason
            return
    if sum(t.nbytes for t in graph.tensors) < (1 << 20):
        inputs = [np.zeros(graph.tensors[i].shape, graph.tensors[i].dtype) for i in graph.inputs]
        try:
            values = run_graph(graph, inputs)
        except KernelError as e:
            # The one data-dependent refusal: a softmax row TFLM would abort on.
            assert "SOFTMAX" in str(e)
            return
        except Refusal as e:
            # The numpy reference's own size limit (e.g. a dilation that pads the image past
            # 16 M cells): declined by name, never a crash.
            assert str(e).startswith("operator #") and "host reference kernel" in str(e)
            return
        assert all(i in values for i in graph.outputs)


_DEMO = demo_model()
_MIXED = single_op_model("CONCATENATION", (1, 2, 3, 2), input_shapes=[(1, 2, 3, 2), (1, 2, 1, 2)], axis=2)


@FUZZ
@given(data=corrupted(_DEMO))
def test_fuzz_builder_model(data):
    _check(data)


@settings(max_examples=60, deadline=5000, suppress_health_check=[HealthCheck.too_slow])
@given(data=corrupted(_MIXED))
def test_fuzz_small_model(data):
    _check(data)


@settings(max_examples=60, deadline=5000, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(min_size=0, max_size=256))
def test_fuzz_random_bytes_with_identifier(data):
    _check(data[:4] + b"TFL3" + data[4:])


def _real_models() -> list[str]:
    d = os.environ.get("TVMDEVICE_MODELS_DIR")
    return sorted(p.name for p in Path(d).glob("*.tflite")) if d and Path(d).is_dir() else []


@pytest.mark.parametrize("name", _real_models() or ["(TVMDEVICE_MODELS_DIR unset)"])
def test_fuzz_real_models(models_dir, name):
    model = (models_dir / name).read_bytes()

    @settings(max_examples=40, deadline=5000, suppress_health_check=[HealthCheck.too_slow], database=None)
    @given(data=corrupted(model))
    def run(data):
        _check(data)

    run()
