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
from typing import TYPE_CHECKING, Any, Union

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
    :ivar in_scratch: ``(tensor, offset)`` for each of the call's tensors its device asked to be placed
        inside the scratch (``PreparedCall.in_scratch``; views resolved to their source).
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
    in_scratch: tuple[tuple[int, int], ...] = ()

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
    scratch (``scratch_of`` is the operator; alive during its step, and over the lifetimes of the
    tensors placed inside it).  A tensor placed inside a call's scratch (``inside`` is that operator) is
    planned at the scratch's offset plus ``inside_offset``.
    """

    tensor: int
    memory: str
    nbytes: int
    first: int
    last: int
    scratch_of: int | None = None
    inside: int | None = None
    inside_offset: int = 0

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
        inside = _in_scratch(graph, op, p.call, alias, states) if scratch and mem == HOST else ()
        steps.append(KernelStep(op.index, p.entry, entry.kind, mem, scratch, op, inside))
        for t in op.outputs:
            where[t] = [mem]
    for t in graph.outputs:
        if graph.tensors[alias.get(t, t)].is_constant:
            if (t, HOST) not in constants:
                constants.append((t, HOST))
            continue
        ensure(t, HOST)
    return Schedule(tuple(steps), _lifetimes(graph, steps, alias, states), tuple(constants), dict(alias), states)


def _in_scratch(graph: "Graph", op: "Operator", call: Any, alias: dict[int, int],
                states: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """The call's tensors its device asked to be placed inside its scratch, as ``(tensor, offset)``:
    within the scratch, not constants or states, and not overlapping one another while alive."""
    buffers = [*op.inputs, *op.outputs]
    found: list[tuple[int, int]] = []
    for position, offset in sorted(getattr(call, "in_scratch", {}).items()):
        if not 0 <= position < len(buffers) or buffers[position] == ABSENT:
            continue
        t = alias.get(buffers[position], buffers[position])
        nbytes = graph.tensors[t].nbytes
        if graph.tensors[t].is_constant or t in states or offset < 0 or offset + nbytes > call.scratch_bytes:
            continue
        if any(u == t for u, _ in found):
            continue
        found.append((t, offset))
    return tuple(found)


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
    # tensors inside a call's scratch: each placed by the first call that asks, the scratch kept alive
    # over their lifetimes.  Two of them may share bytes when both are alive together only during the
    # call itself (an input it consumes, an output it produces: the device's compiler planned that);
    # one that would share bytes with another alive at any other step keeps a buffer of its own.
    inside: dict[tuple[int, str], tuple[int, int]] = {}

    def clash(a: tuple[int, str], b: tuple[int, str], i: int) -> bool:
        lo, hi = max(first[a], first[b]), min(last[a], last[b])
        return lo <= hi and not lo == hi == i

    for i, step in enumerate(steps):
        if not isinstance(step, KernelStep) or not step.in_scratch:
            continue
        placed: list[tuple[int, int, int]] = []  # tensor, start, end within the scratch
        for t, offset in step.in_scratch:
            key = (t, step.memory)
            if key in inside or key not in first:
                continue
            end = offset + graph.tensors[t].nbytes
            if any(o_start < end and offset < o_end and clash(key, (u, step.memory), i)
                   for u, o_start, o_end in placed):
                continue
            placed.append((t, offset, end))
            inside[key] = (step.op_index, offset)
        for n, b in enumerate(scratch):
            if b.scratch_of == step.op_index and b.first == i:
                lo = min([i, *(first[(t, step.memory)] for t, _, _ in placed)])
                hi = max([i, *(last[(t, step.memory)] for t, _, _ in placed)])
                scratch[n] = BufferUse(ABSENT, step.memory, b.nbytes, lo, hi, scratch_of=step.op_index)
    tensors = [BufferUse(t, m, graph.tensors[t].nbytes, first[(t, m)], last[(t, m)],
                         inside=inside[(t, m)][0] if (t, m) in inside else None,
                         inside_offset=inside[(t, m)][1] if (t, m) in inside else 0)
               for (t, m) in sorted(first, key=lambda k: (first[k], k))]
    return tuple(tensors + scratch)
