"""A partition: consecutive operators that one device compiles and runs as one call.

A device that declares ``compiles_partitions`` (an NPU whose compiler takes
a whole subgraph, like Arm's Vela for Ethos-U) is not offered operators one
by one.  Placement groups the operators, in execution order, that pass its
``tvmdevice_check_operator`` into maximal runs — view operators between two
of them join the run — and offers each run as a :class:`Partition` to its
``tvmdevice_prepare_partition``, which returns **one** prepared call.  A run
in execution order is always a valid subgraph: any path between two of its
operators passes only through operators between them.

The tensors that only the partition's operators produce and read live inside
the device's compiled call (its scratch): the memory plan holds only the
partition's inputs and outputs, and its scratch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover - the IR imports numpy: tvmdevice.plugin must stay light
    from .ir import Graph, Operator

__all__ = ["Partition", "PARTITION_TYPE", "make_partition"]

#: The ``type`` of the operator that stands for a partition's one call in the schedule.
PARTITION_TYPE = "PARTITION"


@dataclass(frozen=True)
class Partition:
    """Consecutive operators one device runs as one call.

    :ivar index: the partition's number in the model (0, 1, ... in execution order, over all devices).
    :ivar ops: its operators in execution order (view operators between them included).
    :ivar inputs: the non-constant tensors its operators read that no operator of the partition
        writes, in order of first read: the call's first buffers.
    :ivar outputs: the tensors its operators write that an operator outside it reads or that are
        model outputs, in order of writing: the call's next buffers.
    """

    index: int
    ops: tuple["Operator", ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]

    @property
    def first(self) -> int:
        """Index of its first operator: where its call runs in the schedule."""
        return self.ops[0].index

    @property
    def op_indices(self) -> tuple[int, ...]:
        return tuple(op.index for op in self.ops)

    @property
    def internal(self) -> tuple[int, ...]:
        """The tensors only its operators write and read: never materialised outside the call."""
        written = {t for op in self.ops for t in op.outputs}
        return tuple(sorted(written - set(self.outputs)))

    @property
    def operator(self) -> "Operator":
        """The operator that stands for the call in the schedule: the partition's inputs and outputs."""
        from .ir import Operator

        return Operator(self.first, PARTITION_TYPE, self.inputs, self.outputs,
                        {"partition": self.index, "ops": list(self.op_indices)})

    def describe(self) -> str:
        ops = self.op_indices
        span = f"#{ops[0]}" if len(ops) == 1 else f"#{ops[0]}-#{ops[-1]}"
        return f"partition {self.index} ({len(ops)} operator{'s' if len(ops) != 1 else ''}, {span})"


def make_partition(graph: "Graph", index: int, ops: Sequence["Operator"]) -> Partition:
    """The :class:`Partition` of ``ops`` (consecutive in execution order) in ``graph``."""
    from .ir import ABSENT

    members = {op.index for op in ops}
    written: set[int] = set()
    inputs: list[int] = []
    for op in ops:
        for t in op.inputs:
            if t == ABSENT or t in written or t in inputs or graph.tensors[t].is_constant:
                continue
            inputs.append(t)
        written.update(op.outputs)
    outside = {t for op in graph.operators if op.index not in members for t in op.inputs}
    outside.update(graph.outputs)
    outputs = [t for op in ops for t in op.outputs if t in outside]
    return Partition(index, tuple(ops), tuple(inputs), tuple(dict.fromkeys(outputs)))
