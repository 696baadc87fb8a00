"""The operators the device can claim (tvmdevice_ethosu.vela_operators): Vela's own names, kept where the
functional model runs Vela's stream, read only when first used."""

from __future__ import annotations

import numpy as np
import tflite
from tvmdevice.aot.builder import single_op_model
from tvmdevice.testing.reference import run_graph

from tvmdevice_ethosu.vela_operators import VelaOperators, vela_operator_names


def test_vela_s_names_are_tflite_builtins():
    names = vela_operator_names()
    assert set(names) <= set(vars(tflite.BuiltinOperator))
    assert {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ARG_MAX", "SOFTMAX"} <= set(names)  # ARGMAX in Vela


def test_the_claims_are_read_when_first_used():
    claims = VelaOperators()
    assert "not read yet" in repr(claims)
    assert "CONV_2D" in claims and "not read yet" not in repr(claims)
    assert claims == claims and claims != VelaOperators()  # compared by identity: declaring it reads nothing


def _runs_bit_exact(registry, model: bytes) -> bool:
    """Placed on ethos-u, and equal to the host reference (TFLM's semantics; TFLM has no RELU_N1_TO_1)."""
    from tvmdevice.aot.compiler import compile

    module = compile(model, "ethos-u, c", registry=registry)
    if [p.device for p in module.placement.ops] != ["ethos-u"] * len(module.placement.ops):
        return False
    rng = np.random.default_rng(0)
    xs = [rng.integers(-128, 128, size=module.graph.tensors[i].shape).astype(module.graph.tensors[i].dtype)
          for i in module.graph.inputs]
    with module.executor() as ex:
        ys = ex.run(xs)
    want = run_graph(module.graph, xs)
    return all(np.array_equal(y, want[t]) for y, t in zip(ys, module.graph.outputs))


def test_every_claim_is_a_vela_operator_whose_default_model_runs_bit_exact(registry):
    claims = VelaOperators()
    names = set(vela_operator_names())
    assert {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D", "MUL", "SOFTMAX"} <= set(claims)
    # the edges a claim must also run: ADD broadcasts across five dimensions, which stays off the NPU,
    # and an int16 pool over padding, which the functional model refuses
    assert not {"ADD", "SUB", "AVERAGE_POOL_2D:int16", "MAX_POOL_2D:int16"} & set(claims)
    assert not {"RESHAPE", "EXPAND_DIMS", "SQUEEZE"} & set(claims)  # views run no kernel
    assert "QUANTIZE" not in claims  # its key covers float32 input, which Vela leaves to the CPU
    for key in claims:
        op_type, _, variant = key.partition(":")
        assert op_type in names, key
        params = {"input_dtype": "int16"} if variant == "int16" else {}
        assert _runs_bit_exact(registry, single_op_model(op_type, **params)), key
