"""Regression cases found by the differential fuzzer (``bench/fuzz_differential.py``).

Each file in ``tests/fixtures/fuzz`` is a model where tvmdevice once ran
what tflite-micro refuses, or gave different outputs; ``findings.json``
says what tvmdevice must now raise and what tflite-micro does with it.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

import tvmdevice
from tvmdevice import errors

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "fuzz"
FINDINGS = {k: v for k, v in json.loads((FIXTURES / "findings.json").read_text()).items() if not k.startswith("_")}


def test_every_fixture_file_has_an_entry():
    assert sorted(p.name for p in FIXTURES.glob("*.tflite")) == sorted(FINDINGS)


@pytest.mark.parametrize("name", sorted(FINDINGS))
def test_tvmdevice_refuses_what_the_fuzzer_found(name):
    finding = FINDINGS[name]
    with pytest.raises(getattr(errors, finding["error"]), match=finding["match"]):
        tvmdevice.compile((FIXTURES / name).read_bytes(), target="c")


@pytest.mark.parametrize("name", sorted(n for n, f in FINDINGS.items() if f["tflm"] == "refuses"))
def test_tflite_micro_refuses_it_too(name):
    pytest.importorskip("tflite_micro", reason="pip install tflite-micro to compare with TFLM")
    from tvmdevice.testing.oracle import tflm_interpreter

    with pytest.raises(RuntimeError):
        tflm_interpreter((FIXTURES / name).read_bytes())


def _fuzz_inputs(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """The fuzzer's own inputs for case ``seed`` (bench/fuzz_differential.py's ``_input_arrays``)."""
    import sys

    script = Path(__file__).resolve().parents[2] / "bench" / "fuzz_differential.py"
    spec = importlib.util.spec_from_file_location("fuzz_differential", script)
    fuzz = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, fuzz)  # its dataclasses look their module up
    spec.loader.exec_module(fuzz)
    return fuzz._input_arrays([(shape, "|i1")], seed)[0]


def test_fully_connected_multiplier_rounds_as_tflite_micro(models_dir):
    """ad_fc_autoencoder on the fuzzer's case-1992 input: the last FULLY_CONNECTED's output 365
    is -21.499 before rounding.  The float32 scale product gave a multiplier whose double rounding
    made it -22; tflite-micro (and the double product) give -21."""
    pytest.importorskip("tflite_micro", reason="pip install tflite-micro to compare with TFLM")
    from tvmdevice.testing.oracle import tflm_run

    model = (models_dir / "ad_fc_autoencoder_int8.tflite").read_bytes()
    x = _fuzz_inputs((1, 640), 1992)
    expected = tflm_run(model, [x]).output(0)
    assert expected.reshape(-1)[365] == -21
    with tvmdevice.compile(model, target="c").executor() as ex:
        got = ex.run([x])[0]
    np.testing.assert_array_equal(got, expected)


# Scales and accumulator of that output: -88337 * 0.02479089 * 0.019556683 / 0.36449847 + 96 = -21.499.
SCALES = (0.02479089, 0.019556683, 0.36449847)
ACC, EXPECTED = -88337, -21


def _crafted(op_type: str) -> tuple[bytes, np.ndarray]:
    """A one-operator model and input whose single output accumulates exactly ``ACC``."""
    from tvmdevice.aot.builder import ModelBuilder

    s_in, s_w, s_out = SCALES
    b = ModelBuilder(seed=1)
    if op_type == "FULLY_CONNECTED":  # weight 0, bias ACC
        x = b.input((1, 1), scale=s_in, zero_point=-128)
        y = b.fully_connected(x, 1, weight_scale=s_w, out_scale=s_out, out_zero_point=96)
        op = b.spec.operators[0]
        b.spec.buffers[b.spec.tensors[op.inputs[1]].buffer] = np.zeros(1, np.int8).tobytes()
        b.spec.buffers[b.spec.tensors[op.inputs[2]].buffer] = np.array([ACC], "<i4").tobytes()
        inputs = np.zeros((1, 1), np.int8)
    else:  # BATCH_MATMUL: (127+128)*-127 * 2 + (57+128)*-127 + (-56+128)*-1 = ACC
        x = b.input((1, 1, 4), scale=s_in, zero_point=-128)
        w = b.constant(np.array([-127, -127, -127, -1]).reshape(1, 4, 1), scale=s_w)
        y = b.batch_matmul(x, w, out_scale=s_out, out_zero_point=96)
        inputs = np.array([127, 127, 57, -56], np.int8).reshape(1, 1, 4)
    b.output(y)
    return b.build(), inputs


@pytest.mark.parametrize("op_type", ["FULLY_CONNECTED", "BATCH_MATMUL"])
def test_scale_product_is_rounded_as_tflite_micro(op_type):
    """TFLite's GetQuantizedConvolutionMultipler source multiplies the scales in float32, which
    gives multiplier 1462485078 and, after double rounding, -22; the tflite-micro we are bit-exact
    with gives -21, as the double product's 1462485049 does."""
    from tvmdevice import ops
    from tvmdevice.aot.frontend import load_tflite

    model, x = _crafted(op_type)
    graph = load_tflite(model)
    data = ops.analyze(graph, graph.operators[0])
    mantissa, exponent = math.frexp(float(np.float32(SCALES[0])) * float(np.float32(SCALES[1]))
                                    / float(np.float32(SCALES[2])))
    mult, shift = (data.multiplier, data.shift) if op_type == "FULLY_CONNECTED" else \
        (data.output_multiplier, data.output_shift)
    assert (int(np.ravel(mult)[0]), int(np.ravel(shift)[0])) == (1462485049, exponent)
    assert round(mantissa * (1 << 31)) == 1462485049
    with tvmdevice.compile(model, target="c").executor() as ex:
        assert int(ex.run([x])[0].reshape(-1)[0]) == EXPECTED
    if importlib.util.find_spec("tflite_micro") is not None:
        from tvmdevice.testing.oracle import tflm_run

        assert int(tflm_run(model, [x]).output(0).reshape(-1)[0]) == EXPECTED
