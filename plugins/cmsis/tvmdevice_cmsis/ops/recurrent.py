"""SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM: cmsis-nn's scratch, state and kernel sums.

The op data is the core's :class:`~tvmdevice.ops.svdf.SvdfData` (TFLM's
PrepareSvdf: the two rescales, the state type and zero point).  CMSIS-NN has
one kernel per state type (arm_svdf_s8 for int8, arm_svdf_state_s16_s8 for
int16); here one C kernel takes both, told by ``state_bits``.  The int32 sums
wrap in uint32 as TFLM's do, in any order, so no bound is needed; the
scratch (int32 filter and unit sums, CMSIS-NN's ``ctx`` and ``scratch_output``
buffers) is the kernel's size query.

One semantic difference, TFLM wins: arm_svdf_s8 takes no state zero point (its
int8 state is symmetric); TFLM's reference subtracts it, so the kernel does.

The LSTM op data is :class:`~tvmdevice.ops.lstm.LstmData` (TFLM's integer
LSTM).  As CMSIS-NN's arm_lstm_unidirectional_s8 does (TFLM's cmsis_nn port
computes them at prepare), the int8 gates' zero-point terms are folded into
"kernel sums": ``bias + input offset * sum(weight row)`` for each gate's input
part and ``hidden offset * sum(weight row)`` for its recurrent part, so the C
loops are plain dot products.  TFLM sums ``(x + offset) * w + bias`` in int32;
the folded sum is the same integer modulo 2**32 (the C wraps in uint32), so
the values are TFLM's.  int16 activations have zero points 0: nothing to fold,
the int64 biases are read in place.  Scratch: TFLM's four int16 gate buffers.
"""

from __future__ import annotations

import numpy as np
from tvmdevice.ir import Graph, Operator
from tvmdevice.ops.lstm import BIASES, INPUT_WEIGHTS, RECURRENT_WEIGHTS, LstmData
from tvmdevice.ops.svdf import SvdfData

from . import _common as c

__all__ = ["prepare_svdf", "prepare_lstm"]


def prepare_svdf(graph: Graph, op: Operator, data: SvdfData) -> c.KernelPlan:
    """Nothing to pack: the weights and the state are read (and the state written) in place."""
    return c.KernelPlan({"has_bias": int(data.has_bias)})


def _wrap32(x: np.ndarray) -> np.ndarray:
    return ((x.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32)


def prepare_lstm(graph: Graph, op: Operator, data: LstmData) -> c.KernelPlan:
    """The int8 gates' kernel sums (see the module docstring); the int16 LSTM reads its biases in place."""
    if data.activation_bits != 8:
        return c.KernelPlan({"kernel_sums": np.zeros(1, dtype=np.int32)})
    sums = np.zeros((2, len(INPUT_WEIGHTS), data.n_state), dtype=np.int64)
    for k, (wi, wr, bi) in enumerate(zip(INPUT_WEIGHTS, RECURRENT_WEIGHTS, BIASES)):
        w_in = c.constant(graph.tensor(op.inputs[wi]), "input weights").astype(np.int64)
        w_rec = c.constant(graph.tensor(op.inputs[wr]), "recurrent weights").astype(np.int64)
        bias = (c.constant(graph.tensor(op.inputs[bi]), "bias").astype(np.int64).reshape(-1) if op.inputs[bi] >= 0
                else np.zeros(data.n_state, dtype=np.int64))
        sums[0, k] = bias + data.input_offset * w_in.reshape(data.n_state, -1).sum(axis=1)
        sums[1, k] = data.hidden_offset * w_rec.reshape(data.n_state, -1).sum(axis=1)
    return c.KernelPlan({"kernel_sums": _wrap32(sums).reshape(-1)})
