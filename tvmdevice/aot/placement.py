"""Placement: which device of a target runs which operator, and why.

Each operator goes to the first device of the target (in target order) that
accepts it — operator type *and* parameters, as its plugin's
``tvmdevice_check_operator`` decides, and room in its memory, as its
``tvmdevice_memory_capacity`` budget allows — the host last.  The result is a
first-class, printable :class:`Placement` that records every refusal, so a
user can see why an operator fell back to the host.  ``strict=True`` refuses
host fallback for any operator an accelerator could not take.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import PlacementError

if TYPE_CHECKING:  # pragma: no cover
    from ..registry import Registry
    from ..target import Target
    from .ir import Graph

__all__ = ["OpPlacement", "Placement", "place"]


@dataclass(frozen=True)
class OpPlacement:
    """Where one operator runs.

    :ivar op_index: the operator's index in the graph.
    :ivar op_type: its TFLite type.
    :ivar device: the chosen device name.
    :ivar entry: index of that device in the target.
    :ivar declined: ``(device, reason)`` for each earlier device that refused.
    """

    op_index: int
    op_type: str
    device: str
    entry: int
    declined: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Placement:
    """The placement of every operator of a graph on a target."""

    target: "Target"
    ops: tuple[OpPlacement, ...]
    strict: bool = False
    summary: dict[str, int] = field(default_factory=dict)

    def device_of(self, op_index: int) -> str:
        return self.ops[op_index].device

    def on(self, device: str) -> list[OpPlacement]:
        return [p for p in self.ops if p.device == device]

    def __str__(self) -> str:
        lines = [f"placement on target '{self.target}':"]
        width = max((len(p.op_type) for p in self.ops), default=0)
        for p in self.ops:
            why = "; ".join(f"{d}: {r}" for d, r in p.declined)
            lines.append(f"  #{p.op_index:<3} {p.op_type:<{width}}  -> {p.device}" + (f"   ({why})" if why else ""))
        counts = ", ".join(f"{d}: {n}" for d, n in self.summary.items())
        lines.append(f"  operators per device: {counts}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "target": str(self.target),
            "strict": self.strict,
            "ops": [{"index": p.op_index, "type": p.op_type, "device": p.device,
                     "declined": [{"device": d, "reason": r} for d, r in p.declined]} for p in self.ops],
            "summary": dict(self.summary),
        }


#: Granule in which device memory is budgeted (the alignment of every device block).
BLOCK_ALIGNMENT = 64


def aligned_bytes(nbytes: int) -> int:
    """``nbytes`` rounded up to :data:`BLOCK_ALIGNMENT` (what one device block occupies)."""
    return -(-max(nbytes, 1) // BLOCK_ALIGNMENT) * BLOCK_ALIGNMENT


class _Budget:
    """What placement has put in one capacity-limited device memory so far."""

    def __init__(self, name: str, capacity: int) -> None:
        self.name, self.capacity = name, capacity
        self.constants: set[int] = set()
        self.constant_bytes = 0
        self.peak_activations = 0

    def refusal(self, graph: "Graph", op) -> tuple[str | None, list[int], int]:
        """A reason the operator does not fit (or None), its new constants and its activation bytes."""
        new = [t for t in dict.fromkeys(op.inputs) if t >= 0 and graph.tensors[t].is_constant
               and t not in self.constants]
        constant_bytes = self.constant_bytes + sum(aligned_bytes(graph.tensors[t].nbytes) for t in new)
        activations = sum(aligned_bytes(graph.tensors[t].nbytes) for t in (*op.inputs, *op.outputs)
                          if t >= 0 and not graph.tensors[t].is_constant)
        need = constant_bytes + max(self.peak_activations, activations)
        if need > self.capacity:
            return (f"{self.name} memory full: {need} B needed of its {self.capacity} B "
                    f"({self.constant_bytes} B of constants already placed)"), new, activations
        return None, new, activations

    def take(self, graph: "Graph", new: list[int], activations: int) -> None:
        self.constants.update(new)
        self.constant_bytes += sum(aligned_bytes(graph.tensors[t].nbytes) for t in new)
        self.peak_activations = max(self.peak_activations, activations)


def place(graph: "Graph", target: "Target", registry: "Registry", *, strict: bool = False) -> Placement:
    """Place each operator of ``graph`` on the first device of ``target`` that accepts it.

    :param strict: refuse host fallback: an operator that no accelerator of
        the target accepts is an error (a target with only a host is allowed).
    :raises PlacementError: no device accepts an operator, or strict mode
        refused host fallback; the message names the operator and every
        device's reason.
    """
    ops: list[OpPlacement] = []
    last = len(target.entries) - 1
    budgets: dict[int, _Budget] = {}
    for i, entry in enumerate(target.entries):
        capacity = registry.memory_capacity(entry.device_type, entry.options)
        if capacity is not None:
            budgets[i] = _Budget(entry.kind, capacity)
    for op in graph.operators:
        declined: list[tuple[str, str]] = []
        chosen = None
        for i, entry in enumerate(target.entries):
            reason = registry.check_operator(entry.device_type, entry.options, graph, op)
            if reason is None and i in budgets:
                reason, new, activations = budgets[i].refusal(graph, op)
                if reason is None:
                    budgets[i].take(graph, new, activations)
            if reason is None:
                chosen = i
                break
            declined.append((entry.kind, reason))
        if chosen is None:
            why = "; ".join(f"{d}: {r}" for d, r in declined)
            raise PlacementError(f"operator #{op.index} {op.type}: no device of target '{target}' can run it ({why})")
        if strict and chosen == last and last > 0:
            why = "; ".join(f"{d}: {r}" for d, r in declined)
            raise PlacementError(f"strict placement: operator #{op.index} {op.type} would fall back to the host "
                                 f"{target.entries[last].kind!r} ({why})")
        ops.append(OpPlacement(op.index, op.type, target.entries[chosen].kind, chosen, tuple(declined)))
    summary: dict[str, int] = {}
    for entry in target.entries:
        n = sum(1 for p in ops if p.device == entry.kind)
        if n:
            summary[entry.kind] = n
    return Placement(target, tuple(ops), strict, summary)
