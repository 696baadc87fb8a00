"""Placement: the int16x8 variants and TRANSPOSE go to cmsis-nn now (not to the host device `c`),
each counted in its own ``call_counts`` slot; what cmsis-nn has no kernel for still falls back."""

from __future__ import annotations

import numpy as np
import pytest
import tvmdevice
from tvmdevice.aot.builder import ModelBuilder, single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.layout import struct_view

from tvmdevice_cmsis.device import DEVICE_TYPE, KERNEL_KINDS, LAYOUT

from conftest import random_inputs, run_cmsis

I16 = {"input_dtype": "int16", "input_scale": 0.0005}

# (kernel key, operator, builder parameters)
CASES = [
    ("CONV_2D:int16", "CONV_2D", dict(I16, filters=4)),
    ("DEPTHWISE_CONV_2D:int16", "DEPTHWISE_CONV_2D", dict(I16)),
    ("FULLY_CONNECTED:int16", "FULLY_CONNECTED", dict(I16, units=5)),
    ("ADD:int16", "ADD", dict(I16, input2_scale=0.0007)),
    ("MUL:int16", "MUL", dict(I16, input2_scale=0.001, out_scale=0.01)),
    ("AVERAGE_POOL_2D:int16", "AVERAGE_POOL_2D", dict(I16)),
    ("MAX_POOL_2D:int16", "MAX_POOL_2D", dict(I16)),
    ("SOFTMAX:int8->int16", "SOFTMAX", dict(input_shape=(2, 10), input_scale=0.1, out_dtype="int16")),
    ("SOFTMAX:int16", "SOFTMAX", dict(I16, input_shape=(2, 10))),
    ("TRANSPOSE", "TRANSPOSE", dict()),
]


@pytest.mark.parametrize("key, op_type, params", CASES, ids=[c[0] for c in CASES])
def test_the_variant_is_placed_on_cmsis_nn_and_runs_there(key, op_type, params):
    assert key in DEVICE_TYPE.operators
    model = single_op_model(op_type, **params)
    module = tvmdevice.compile(model, "cmsis-nn, c")
    (placed,) = [p for p in module.placement.ops if not p.is_view]
    assert (placed.op_type, placed.device) == (op_type, "cmsis-nn")
    assert placed.declined == ()


@pytest.mark.parametrize("key, op_type, params", CASES, ids=[c[0] for c in CASES])
def test_each_variant_counts_its_calls_in_its_own_slot(cmsis_device, key, op_type, params):
    graph = load_tflite(single_op_model(op_type, **params))
    run_cmsis(graph, random_inputs(graph, 0), device=cmsis_device)
    counts = np.asarray(struct_view(LAYOUT, cmsis_device.handle)["call_counts"]).copy()
    assert counts[KERNEL_KINDS.index(key)] == 1
    assert counts.sum() == 1


def test_a_five_dimensional_transpose_falls_back_to_c_with_the_reason():
    b = ModelBuilder(seed=0)
    b.output(b.transpose(b.input((2, 1, 3, 2, 2)), (4, 0, 3, 1, 2)))
    module = tvmdevice.compile(b.build(), "cmsis-nn, c")
    (placed,) = [p for p in module.placement.ops if not p.is_view]
    assert placed.device == "c"
    assert placed.declined == (("cmsis-nn", "cmsis-nn transposes up to 4 dimensions (arm_transpose_s8), the input "
                                            "has 5"),)


def test_an_int16_variant_cmsis_nn_has_no_kernel_for_still_falls_back():
    module = tvmdevice.compile(single_op_model("LOGISTIC", **I16, input_shape=(1, 16)), "cmsis-nn, c")
    (placed,) = [p for p in module.placement.ops if not p.is_view]
    assert placed.device == "c"
    assert placed.declined == (("cmsis-nn", "cmsis-nn has no int16 LOGISTIC kernel"),)
