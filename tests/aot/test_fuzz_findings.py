"""Regression cases found by the differential fuzzer (``bench/fuzz_differential.py``).

Each file in ``tests/fixtures/fuzz`` is a model where tvmdevice once ran
what tflite-micro refuses, or gave different outputs; ``findings.json``
says what tvmdevice must now raise and what tflite-micro does with it.
"""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tvmdevice
from tvmdevice import errors

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "fuzz"
FINDINGS = {k: v for k, v in json.loads((FIXTURES / "findings.json").read_text()).items() if not k.startswith("_")}


def test_every_fixture_file_has_an_entry():
    assert sorted(p.name for p in FIXTURES.glob("*.tflite")) == sorted(FINDINGS)


@pytest.mark.parametrize("name", sorted(n for n, f in FINDINGS.items() if "error" in f))
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


#: The inputs of the files tvmdevice runs where tflite-micro is wrong (their entries' "input").
_SPREAD_16 = (np.arange(16) * 29 % 256 - 128).astype(np.int8).reshape(1, 16)
WRONG_IN_TFLM_INPUTS = {"fully_connected_output_rank8.tflite": _SPREAD_16,
                        "logistic_input_scale_huge.tflite": _SPREAD_16}


def test_every_file_tvmdevice_runs_is_one_where_tflite_micro_is_wrong():
    assert sorted(n for n, f in FINDINGS.items() if "error" not in f) == sorted(WRONG_IN_TFLM_INPUTS)
    assert all(FINDINGS[n]["tflm"] == "wrong" for n in WRONG_IN_TFLM_INPUTS)


@pytest.mark.parametrize("name", sorted(WRONG_IN_TFLM_INPUTS))
def test_where_tflite_micro_is_wrong_tvmdevice_gives_litert_s_outputs(name):
    """The second reference: LiteRT's builtin kernels agree with tvmdevice; tflite-micro does not."""
    pytest.importorskip("ai_edge_litert", reason="pip install ai-edge-litert for the second reference")
    from tvmdevice.testing.oracle import litert_run

    model, x = (FIXTURES / name).read_bytes(), WRONG_IN_TFLM_INPUTS[name]
    with tvmdevice.compile(model, target="c").executor() as ex:
        ours = np.asarray(ex.run([x])[0])
    np.testing.assert_array_equal(ours.reshape(-1), litert_run(model, [x])[0].reshape(-1))
    if importlib.util.find_spec("tflite_micro") is not None:
        from tvmdevice.testing.oracle import tflm_interpreter

        interp = tflm_interpreter(model)
        interp.set_input(x, 0)
        interp.invoke()
        assert not np.array_equal(interp.get_output(0).reshape(-1), ours.reshape(-1)), "TFLM is right now"


def _tflm_in_a_child(model: bytes, tmp_path: Path) -> subprocess.CompletedProcess[bytes]:
    """tflite-micro loading ``model`` in a child process (some files kill the process that loads them)."""
    path = tmp_path / "model.tflite"
    path.write_bytes(model)
    program = ("import sys; from tvmdevice.testing.oracle import tflm_interpreter; "
               "tflm_interpreter(open(sys.argv[1], 'rb').read())")
    return subprocess.run([sys.executable, "-c", program, str(path)], capture_output=True, timeout=120)


@pytest.mark.parametrize("name", sorted(n for n, f in FINDINGS.items() if f["tflm"] == "crashes"))
def test_tflite_micro_crashes_on_it(name, tmp_path):
    """Recorded as 'crashes': tflite-micro's process dies on the file."""
    pytest.importorskip("tflite_micro", reason="pip install tflite-micro to compare with TFLM")
    child = _tflm_in_a_child((FIXTURES / name).read_bytes(), tmp_path)
    assert child.returncode < 0, f"tflite-micro exited with {child.returncode}: {child.stderr.decode()[-500:]}"


def _activation_model(op_type: str, activation: str, out_scale: float, dtype: str = "int8",
                      in_scale: float = 0.05) -> bytes:
    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder(seed=1)
    x = b.input((1, 4, 4, 2), scale=in_scale, dtype=dtype)
    if op_type == "CONV_2D":
        y = b.conv2d(x, 3, kernel=3, activation=activation, out_scale=out_scale, out_zero_point=0)
    elif op_type == "ADD":
        y = b.add(x, x, activation=activation, out_scale=out_scale)
    else:
        y = b.max_pool2d(x, 2, activation=activation)
    b.output(y)
    return b.build()


@pytest.mark.parametrize("op_type", ["CONV_2D", "ADD"])
@pytest.mark.parametrize("activation", ["RELU6", "RELU_N1_TO_1"])
@pytest.mark.parametrize("dtype", ["int8", "int16"])
def test_a_fused_activation_bound_past_int32_is_refused_as_tflite_micro_does(op_type, activation, dtype, tmp_path):
    # CONV_2D: bounds of 6e11 and 1e11 steps; ADD needs tiny input scales too, or its rescale check refuses first
    scales = {"CONV_2D": (1e-9, 1e-11), "ADD": (1e-12, 1e-15)}[op_type]
    model = _activation_model(op_type, activation, scales[1], dtype, in_scale=scales[0])
    with pytest.raises(errors.PlacementError, match=f"puts the {activation} bound .* outside int32"):
        tvmdevice.compile(model, target="c")
    if importlib.util.find_spec("tflite_micro") is not None:
        # tflite-micro refuses it (CONV_2D raises) or aborts (ADD): it never runs
        child = _tflm_in_a_child(model, tmp_path)
        assert child.returncode != 0
        assert child.returncode < 0 or b"RuntimeError" in child.stderr


def _assert_runs_as_tflite_micro(model: bytes, x: np.ndarray, check: Any = None) -> None:
    """Run ``model`` on ``x`` (c, every tensor kept), compare with tflite-micro, then ``check(executor)``."""
    pytest.importorskip("tflite_micro", reason="pip install tflite-micro to compare with TFLM")
    from tvmdevice.testing.oracle import tflm_run

    with tvmdevice.compile(model, target="c", preserve_all_tensors=True).executor() as ex:
        np.testing.assert_array_equal(ex.run([x])[0], tflm_run(model, [x]).output(0))
        if check is not None:
            check(ex)


def test_relu_with_the_same_tiny_scale_still_runs_as_tflite_micro_does():
    """RELU quantizes only 0.0, which fits whatever the scale: TFLM runs it, and so do we, bit-exact."""
    _assert_runs_as_tflite_micro(_activation_model("CONV_2D", "RELU", 4.66e-10),
                                 np.arange(-16, 16, dtype=np.int8).reshape(1, 4, 4, 2))


def test_a_convolution_bias_given_as_absent_still_runs_as_tflite_micro_does():
    """CONV_2D (unlike DEPTHWISE_CONV_2D) treats a -1 bias as no bias in tflite-micro: keep running it."""
    import dataclasses

    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder(seed=1)
    x = b.input((1, 4, 4, 2), scale=0.05)
    b.output(b.conv2d(x, 3, kernel=3, bias=False))
    op = b.spec.operators[-1]
    b.spec.operators[-1] = dataclasses.replace(op, inputs=tuple(op.inputs) + (-1,))
    _assert_runs_as_tflite_micro(b.build(), np.arange(-16, 16, dtype=np.int8).reshape(1, 4, 4, 2))


def test_zero_sized_lstm_intermediates_run_bit_exact_with_tflite_micro():
    """The converter's LSTM lists intermediates; zero-sized ones are what TFLM accepts, and so do we."""
    import dataclasses

    from tvmdevice.aot.builder import ModelBuilder
    from tvmdevice.aot.builder._common import TT

    b = ModelBuilder(seed=3)
    x = b.input((1, 3, 4), scale=1 / 128)
    b.output(b.lstm(x, 5))
    op = b.spec.operators[-1]
    intermediates = tuple(b._tensor((0,), TT.INT8, 0.007, 0).index for _ in range(5))
    b.spec.operators[-1] = dataclasses.replace(op, intermediates=intermediates)

    def intermediates_hold_nothing(ex: Any) -> None:
        assert all(ex.tensor(t).size == 0 for t in intermediates)

    _assert_runs_as_tflite_micro(b.build(), (np.arange(12) * 17 % 256 - 128).astype(np.int8).reshape(1, 3, 4),
                                 intermediates_hold_nothing)


def _fuzz_inputs(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """The fuzzer's own inputs for case ``seed`` (bench/fuzz_differential.py's ``input_arrays``)."""
    import sys

    script = Path(__file__).resolve().parents[2] / "bench" / "fuzz_differential.py"
    spec = importlib.util.spec_from_file_location("fuzz_differential", script)
    fuzz = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, fuzz)  # its dataclasses look their module up
    spec.loader.exec_module(fuzz)
    return fuzz.input_arrays([(shape, "|i1")], seed)[0]


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
