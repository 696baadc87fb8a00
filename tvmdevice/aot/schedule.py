"""The execution schedule: kernel calls in order, with copies where memories differ.

Each tensor lives in the memory of the device that produces it (graph inputs
in host memory).  Host-memory devices (``c``, ``cmsis-nn``) share the host
memory; each separate-memory device (``woofles``) is a memory of its own.
When an operator reads a tensor that is not yet in its device's memory, a
copy (CopyDataFromTo) is inserted right before it; graph outputs are copied
back to host memory at the end.  Copies between two separate memories are
staged through host memory.  A graph output that is a constant tensor needs
no step: like TFLM, which hands back the model's own buffer for it, the run
returns its data (read in place in host memory, listed with the constants).

View operators (RESHAPE and kin) get no step: their output is their input's
buffer (``Schedule.aliases``).  Each call with scratch gets a scratch buffer
in its memory, alive during its own step, so the memory plan holds it too.

Variable tensors (operator state: an LSTM's hidden and cell state, an SVDF's
memory) live in host memory in buffers of their own, alive over the whole
run and beyond (``Schedule.states``): nothing else ever shares their bytes,
so the state one run leaves is the state the next run starts from, as in
TFLM's persistent arena section.  A kernel on a separate-memory device cannot
update them in place, so such a placement is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

from ..device_type import MemoryKind
from ..ir import ABSENT

if TYPE_CHECKING:  # pragma: no cover
    from ..ir import Graph, Operator
    from ..target import Target, TargetEntry
    from .placement import Placement

__all__ = ["HOST", "KernelStep", "CopyStep", "Step", "Schedule", "BufferUse", "BufferKey", "build_schedule",
           "memory_of", "TENSOR", "SCRATCH"]

#: The name of host memory in schedules and memory plans.
HOST = "host"

#: Kinds of buffer in a :data:`BufferKey`.
TENSOR, SCRATCH = "tensor", "scratch"

#: A buffer's key in a memory plan: ``(TENSOR, tensor, memory)`` or ``(SCRATCH, op_index, memory)``.
BufferKey = tuple[str, int, str]


@dataclass(frozen=True)
class KernelStep:
    """Run operator ``op_index`` on target entry ``entry`` (reading and writing in ``memory``).

    :ivar scratch_bytes: the call's scratch, a buffer of the memory plan alive during this step.
    :ivar operator: what the call reads and writes: the graph's operator, or for a partition's call
        (:mod:`tvmdevice.partition`, run at its first operator's index) the partition's operator, whose
        inputs and outputs are the partition's.
    """

    op_index: int
    entry: int
    device: str
    memory: str
    scratch_bytes: int = 0
    operator: "Operator | None" = field(default=None, compare=False, repr=False)

    @property
    def call(self) -> "Operator":
        """The operator whose inputs and outputs are the call's buffers."""
        if self.operator is None:
            raise ValueError(f"kernel step #{self.op_index} was built without its operator")
        return self.operator


@dataclass(frozen=True)
class CopyStep:
    """Copy tensor ``tensor`` from memory ``src`` to memory ``dst``."""

    tensor: int
    src: str
    dst: str


Step = Union[KernelStep, CopyStep]


@dataclass(frozen=True)
class BufferUse:
    """One buffer materialised in one memory, alive over steps ``[first, last]``.

    A tensor's buffer (``scratch_of is None``: ``tensor`` is the tensor, never
    a view output, since views share their source's buffer) or one call's
    scratch (``scratch_of`` is the operator; alive during its step only).
    """

    tensor: int
    memory: str
    nbytes: int
    first: int
    last: int
    scratch_of: int | None = None

    @property
    def key(self) -> BufferKey:
        """The buffer's key in a memory plan."""
        if self.scratch_of is not None:
            return (SCRATCH, self.scratch_of, self.memory)
        return (TENSOR, self.tensor, self.memory)


@dataclass(frozen=True)
class Schedule:
    """Steps in order, every buffer with its lifetime, constants per memory.

    :ivar constants: ``(tensor, memory)`` for each constant a kernel reads in
        that memory: preloaded into separate memories, read in place (the
        model's weights, flash/rodata on a microcontroller) in host memory.
    :ivar aliases: view output tensor -> the tensor whose buffer it shares.
    :ivar states: the variable tensors (operator state kept across runs), each in a host buffer of its own.
    """

    steps: tuple[Step, ...]
    buffers: tuple[BufferUse, ...]
    constants: tuple[tuple[int, str], ...]
    aliases: dict[int, int] = field(default_factory=dict)
    states: tuple[int, ...] = ()

    def source(self, tensor: int) -> int:
        """The tensor whose buffer ``tensor`` uses (itself unless it is a view output)."""
        return self.aliases.get(tensor, tensor)


def memory_of(entry: "TargetEntry") -> str:
    """The memory a target entry computes in."""
    return HOST if entry.device_type.memory is MemoryKind.HOST else entry.kind


def build_schedule(graph: "Graph", target: "Target", placement: "Placement") -> Schedule:
    """Order kernel calls and insert copies; compute each buffer's lifetime (scratch included).

    View operators get no step: their output is their input's buffer.
    """
    steps: list[Step] = []
    alias = placement.aliases
    where: dict[int, list[str]] = {t: [HOST] for t in graph.inputs}
    states = tuple(t.index for t in graph.tensors if t.is_variable)
    where.update({t: [HOST] for t in states})
    constants: list[tuple[int, str]] = []

    def ensure(tensor: int, memory: str) -> None:
        tensor = alias.get(tensor, tensor)
        have = where.get(tensor)
        if have is None:
            raise ValueError(f"tensor #{tensor} is read before any operator writes it")
        if memory in have:
            return
        if tensor in states:
            from ..errors import PlacementError

            raise PlacementError(f"variable tensor #{tensor} (operator state) lives in host memory and is "
                                 f"updated in place; a kernel in {memory!r} memory cannot update it: place its "
                                 "operator on a host-memory device")
        if memory != HOST and HOST not in have:
            steps.append(CopyStep(tensor, have[0], HOST))
            have.append(HOST)
        steps.append(CopyStep(tensor, HOST if HOST in have else have[0], memory))
        have.append(memory)

    for p in placement.ops:
        if p.is_view:
            continue
        op = placement.call_operator(graph, p.op_index)
        entry = target.entries[p.entry]
        mem = memory_of(entry)
        for t in op.inputs:
            if t == ABSENT:
                continue
            if graph.tensors[t].is_constant:
                if (t, mem) not in constants:
                    constants.append((t, mem))
                continue
            ensure(t, mem)
        scratch = p.call.scratch_bytes if p.call is not None else 0
        steps.append(KernelStep(op.index, p.entry, entry.kind, mem, scratch, op))
        for t in op.outputs:
            where[t] = [mem]
    for t in graph.outputs:
        if graph.tensors[alias.get(t, t)].is_constant:
            if (t, HOST) not in constants:
                constants.append((t, HOST))
            continue
        ensure(t, HOST)
    return Schedule(tuple(steps), _lifetimes(graph, steps, alias, states), tuple(constants), dict(alias), states)


def _lifetimes(graph: "Graph", steps: list[Step], alias: dict[int, int],
               states: tuple[int, ...] = ()) -> tuple[BufferUse, ...]:
    first: dict[tuple[int, str], int] = {(t, HOST): -1 for t in (*graph.inputs, *states)}
    last: dict[tuple[int, str], int] = dict(first)
    scratch: list[BufferUse] = []

    def use(key: tuple[int, str], i: int) -> None:
        last[key] = max(last.get(key, i), i)

    for i, step in enumerate(steps):
        if isinstance(step, CopyStep):
            use((step.tensor, step.src), i)
            first.setdefault((step.tensor, step.dst), i)
            last.setdefault((step.tensor, step.dst), i)
            continue
        op = step.call
        for t in op.inputs:
            if t != ABSENT and not graph.tensors[t].is_constant:
                use((alias.get(t, t), step.memory), i)
        for t in op.outputs:
            first.setdefault((t, step.memory), i)
            last.setdefault((t, step.memory), i)
        if step.scratch_bytes:
            scratch.append(BufferUse(ABSENT, step.memory, step.scratch_bytes, i, i, scratch_of=step.op_index))
    end = len(steps)
    for t in graph.outputs:
        if not graph.tensors[alias.get(t, t)].is_constant:
            last[(alias.get(t, t), HOST)] = end
    for t in states:  # alive from before the first step to after the last: no other buffer shares them
        last[(t, HOST)] = end
    tensors = [BufferUse(t, m, graph.tensors[t].nbytes, first[(t, m)], last[(t, m)])
               for (t, m) in sorted(first, key=lambda k: (first[k], k))]
    return tuple(tensors + scratch)
