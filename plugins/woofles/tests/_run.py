"""Run one operator of a graph on a woofles device, the way an executor does.

Every tensor gets its own SRAM block from AllocDataSpace; constants and
inputs go in by CopyDataFromTo (host -> SRAM, no StreamSync: the kernel
launch waits for queued DMA); the kernel gets device addresses; the output
comes back through ``Device.download``.  :func:`tflm_run` is the oracle:
the same model in TensorFlow Lite Micro.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from tvmdevice.errors import error_for_status
from tvmdevice.ir import ABSENT, Graph, Operator
from tvmdevice.ops import analyze
from tvmdevice.plugin import invoke_kernel


def prepare(registry: Any, device: Any, graph: Graph, op: Operator) -> Any:
    """The woofles PreparedCall for ``op`` (through the registry, with its op data, as the compiler asks)."""
    return registry.prepare_operator(device.type, device.options, graph, op, analyze(graph, op))


def run_operator(registry: Any, device: Any, graph: Graph, inputs: Sequence[np.ndarray],
                 op_index: int = 0) -> np.ndarray:
    """Run ``graph.operators[op_index]`` with the graph inputs ``inputs``; return its output."""
    op = graph.operators[op_index]
    call = prepare(registry, device, graph, op)
    feeds = dict(zip(graph.inputs, inputs))
    used = [i for i in (*op.inputs, *op.outputs) if i != ABSENT]
    addrs = {}
    try:
        for i in used:
            t = graph.tensor(i)
            addrs[i] = device.alloc_data_space(t.nbytes, 64, np.dtype(t.dtype).name)
            value = t.data if t.is_constant else feeds.get(i)
            if value is not None:
                device.upload(np.ascontiguousarray(value, dtype=t.dtype), addrs[i])
        buffers = [None if i == ABSENT else addrs[i] for i in op.inputs] + [addrs[i] for i in op.outputs]
        status = invoke_kernel(call.kernel, call.params, buffers, device.handle_address)
        if status:
            raise error_for_status(status, f"woofles kernel {call.name} returned {status}")
        out_t = graph.tensor(op.outputs[0])
        out = np.empty(out_t.shape, dtype=out_t.dtype)
        return device.download(addrs[op.outputs[0]], out)
    finally:
        for addr in addrs.values():
            device.free_data_space(addr)


def tflm_run(model: bytes, inputs: list[np.ndarray]) -> np.ndarray:
    """The model's first output as TensorFlow Lite Micro computes it."""
    runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")
    interp = runtime.Interpreter.from_bytes(model, arena_size=max(1 << 20, 16 * len(model)))
    for k, x in enumerate(inputs):
        interp.set_input(x, k)
    interp.invoke()
    return interp.get_output(0)
