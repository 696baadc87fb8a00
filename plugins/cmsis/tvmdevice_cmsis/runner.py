"""A minimal sequential runner: a whole graph on the cmsis-nn kernels.

Every tensor gets one preallocated numpy buffer, every operator one prepared
call, and the core's run loop (:class:`tvmdevice.plugin.RunLoop`) calls
the kernels back to back through their C function pointers, with no Python in
between.  It is
what benchmarks and whole-model tests need; the framework's AOT executor
(placement, memory planning, several devices) is the general tool.

View operators (RESHAPE and kin, ``OpData.is_view``) need no kernel: the
output buffer is a view of the input buffer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from tvmdevice.errors import InvalidArgumentError, NotSupportedError, error_for_status
from tvmdevice.memory import aligned_empty
from tvmdevice.ops import analyze
from tvmdevice.plugin import RunLoop

from .kernels import SCRATCH_ALIGNMENT, check_buffers, check_device, prepare

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.device import Device
    from tvmdevice.ir import Graph

__all__ = ["GraphRunner"]


class GraphRunner:
    """Run ``graph`` on the cmsis-nn kernels.

    :param graph: the model.
    :param device: an *opened* cmsis-nn device: its struct is every call's
        ``resource_handle`` and its workspace holds the scratch; activate it
        around :meth:`run`.  ``None`` runs the kernels standalone.
    :param mcpu: the ``-mcpu`` the weights are packed for (``""``: the host;
        see :func:`tvmdevice_cmsis.kernels.prepare`).
    :raises NotSupportedError: an operator the kernels cannot run.
    """

    def __init__(self, graph: "Graph", device: "Device | None" = None, mcpu: str = "") -> None:
        self.graph = graph
        self.device = device
        handle = check_device(device)
        self.buffers: dict[int, np.ndarray] = {}
        for t in graph.tensors:
            if t.data is not None:
                # A private aligned copy: constants may be unaligned views of the model file.
                self.buffers[t.index] = np.array(t.data, copy=True).reshape(t.shape)
        self.calls = []
        steps = []
        for op in graph.operators:
            data = analyze(graph, op)
            if data is not None and data.is_view:
                self._alias(op)
                continue
            for i in op.inputs + op.outputs:
                if i >= 0 and i not in self.buffers:
                    t = graph.tensor(i)
                    self.buffers[i] = np.zeros(t.shape, dtype=t.dtype)
            call = prepare(graph, op, data, mcpu=mcpu)
            arrays = [None if i < 0 else self.buffers[i] for i in op.inputs + op.outputs]
            steps.append((call, check_buffers(call, arrays)))
            self.calls.append(call)
        need = max((call.scratch_bytes for call in self.calls), default=0)
        self._workspace = None
        if need and device is not None:
            self._workspace = device.alloc_workspace(need)
            scratch_address = self._workspace
        else:
            # Operators run one after another, so they share one scratch block.
            self._scratch = aligned_empty(max(need, 1), SCRATCH_ALIGNMENT)
            scratch_address = int(self._scratch.__array_interface__["data"][0])
        self.sequence = RunLoop(len(steps), self._failed)
        for call, addresses in steps:
            scratch = [scratch_address] if call.scratch_bytes else []
            self.sequence.add_kernel(call.kernel, call.params, addresses + scratch, handle or 0)

    def _failed(self, step: int, status: int) -> Exception:
        return error_for_status(status, f"cmsis-nn kernel {self.calls[step].name} (step {step}) returned "
                                        f"status {status}")

    def _alias(self, op) -> None:
        src, dst = self.graph.tensor(op.inputs[0]), self.graph.tensor(op.outputs[0])
        if op.outputs[0] in self.buffers or src.nbytes != dst.nbytes or src.dtype != dst.dtype:
            raise NotSupportedError(f"cmsis-nn runner: operator {op.index} ({op.type}) cannot be a view")
        if op.inputs[0] not in self.buffers:
            self.buffers[op.inputs[0]] = np.zeros(src.shape, dtype=src.dtype)
        self.buffers[op.outputs[0]] = self.buffers[op.inputs[0]].reshape(dst.shape)

    def set_inputs(self, inputs: Sequence[np.ndarray]) -> None:
        """Copy the graph's inputs into their buffers (shape and dtype checked)."""
        if len(inputs) != len(self.graph.inputs):
            raise InvalidArgumentError(f"expected {len(self.graph.inputs)} inputs, got {len(inputs)}")
        for index, value in zip(self.graph.inputs, inputs):
            buf = self.buffers[index]
            value = np.asarray(value)
            if value.dtype != buf.dtype or value.size != buf.size:
                raise InvalidArgumentError(f"input tensor {index} needs {buf.size} {buf.dtype} values, got "
                                           f"{value.size} {value.dtype}")
            buf[...] = value.reshape(buf.shape)

    def invoke(self) -> None:
        """Run every kernel once on the current buffers."""
        self.sequence.run()

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Set the inputs, run, and return copies of the graph's outputs."""
        self.set_inputs(inputs)
        self.invoke()
        return [self.buffers[i].copy() for i in self.graph.outputs]

    def tensor(self, index: int) -> np.ndarray:
        """The buffer of tensor ``index`` (a live view: it changes on the next run)."""
        return self.buffers[index]

    def close(self) -> None:
        """Return the workspace to the device (call before closing the device)."""
        if self._workspace is not None and self.device is not None:
            self.device.free_workspace(self._workspace)
            self._workspace = None
