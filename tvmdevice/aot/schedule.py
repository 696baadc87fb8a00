"""The execution schedule: kernel calls in order, with copies where memories differ.

Each tensor lives in the memory of the device that produces it (graph inputs
in host memory).  Host-memory devices (``c``, ``cmsis-nn``) share the host
memory; each separate-memory device (``woofles``) is a memory of its own.
When an operator reads a tensor that is not yet in its device's memory, a
copy (CopyDataFromTo) is inserted right before it; graph outputs are copied
back to host memory at the end.  Copies between two separate memories are
staged through host memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from ..device_type import MemoryKind
from .ir import ABSENT

if TYPE_CHECKING:  # pragma: no cover
    from ..target import Target, TargetEntry
    from .ir import Graph
    from .placement import Placement

__all__ = ["HOST", "KernelStep", "CopyStep", "Step", "Schedule", "BufferUse", "build_schedule", "memory_of"]

#: The name of host memory in schedules and memory plans.
HOST = "host"


@dataclass(frozen=True)
class KernelStep:
    """Run operator ``op_index`` on target entry ``entry`` (reading and writing in ``memory``)."""

    op_index: int
    entry: int
    device: str
    memory: str


@dataclass(frozen=True)
class CopyStep:
    """Copy tensor ``tensor`` from memory ``src`` to memory ``dst``."""

    tensor: int
    src: str
    dst: str


Step = Union[KernelStep, CopyStep]


@dataclass(frozen=True)
class BufferUse:
    """One tensor materialised in one memory, alive over steps ``[first, last]``."""

    tensor: int
    memory: str
    nbytes: int
    first: int
    last: int


@dataclass(frozen=True)
class Schedule:
    steps: tuple[Step, ...]
    buffers: tuple[BufferUse, ...]
    #: constant tensors each separate memory needs preloaded: (tensor, memory)
    constants: tuple[tuple[int, str], ...]

    def buffer(self, tensor: int, memory: str) -> BufferUse:
        for b in self.buffers:
            if b.tensor == tensor and b.memory == memory:
                return b
        raise KeyError((tensor, memory))

    @property
    def copies(self) -> list[CopyStep]:
        return [s for s in self.steps if isinstance(s, CopyStep)]


def memory_of(entry: "TargetEntry") -> str:
    """The memory a target entry computes in."""
    return HOST if entry.device_type.memory is MemoryKind.HOST else entry.kind


def build_schedule(graph: "Graph", target: "Target", placement: "Placement") -> Schedule:
    """Order kernel calls and insert copies; compute each buffer's lifetime."""
    steps: list[Step] = []
    where: dict[int, list[str]] = {t: [HOST] for t in graph.inputs}
    constants: list[tuple[int, str]] = []

    def ensure(tensor: int, memory: str) -> None:
        have = where.get(tensor)
        if have is None:
            raise ValueError(f"tensor #{tensor} is read before any operator writes it")
        if memory in have:
            return
        if memory != HOST and HOST not in have:
            steps.append(CopyStep(tensor, have[0], HOST))
            have.append(HOST)
        steps.append(CopyStep(tensor, HOST if HOST in have else have[0], memory))
        have.append(memory)

    for op in graph.operators:
        p = placement.ops[op.index]
        entry = target.entries[p.entry]
        mem = memory_of(entry)
        for t in op.inputs:
            if t == ABSENT:
                continue
            if graph.tensors[t].is_constant:
                if mem != HOST and (t, mem) not in constants:
                    constants.append((t, mem))
                continue
            ensure(t, mem)
        steps.append(KernelStep(op.index, p.entry, entry.kind, mem))
        for t in op.outputs:
            where[t] = [mem]
    for t in graph.outputs:
        ensure(t, HOST)
    return Schedule(tuple(steps), _lifetimes(graph, steps), tuple(constants))


def _lifetimes(graph: "Graph", steps: list[Step]) -> tuple[BufferUse, ...]:
    first: dict[tuple[int, str], int] = {(t, HOST): -1 for t in graph.inputs}
    last: dict[tuple[int, str], int] = dict(first)

    def use(key: tuple[int, str], i: int) -> None:
        last[key] = max(last.get(key, i), i)

    for i, step in enumerate(steps):
        if isinstance(step, CopyStep):
            use((step.tensor, step.src), i)
            first.setdefault((step.tensor, step.dst), i)
            last.setdefault((step.tensor, step.dst), i)
            continue
        op = graph.operators[step.op_index]
        for t in op.inputs:
            if t != ABSENT and not graph.tensors[t].is_constant:
                use((t, step.memory), i)
        for t in op.outputs:
            first.setdefault((t, step.memory), i)
            last.setdefault((t, step.memory), i)
    end = len(steps)
    for t in graph.outputs:
        last[(t, HOST)] = end
    return tuple(BufferUse(t, m, graph.tensors[t].nbytes, first[(t, m)], last[(t, m)])
                 for (t, m) in sorted(first, key=lambda k: (first[k], k)))
