"""Placement: which device of a target runs which operator, prepared once, and why.

The first stage of the compile pipeline, in TFLM's AllocateTensors order:
each operator is analysed once by the operator layer
(:func:`tvmdevice.ops.analyze`, shared by every device), then offered to the
devices of the target in order, the host last.  A device takes it when

1. its ``tvmdevice_check_operator`` pre-filter passes (cheap: by default the
   operator type is one it declares),
2. its ``tvmdevice_prepare_operator`` returns a prepared call instead of
   refusing (any ``NotSupportedError``, e.g. ``Refusal``, is a refusal), and
3. the call fits the device's limits — its scratch within
   ``tvmdevice_workspace_capacity`` and everything it keeps in device memory
   within ``tvmdevice_memory_capacity``.

This is the only place capacity is judged: the memory plan that follows
always fits.  Every refusal is recorded (device and reason), and the prepared
call the accepting device returned is kept, so prepare runs once per operator
on the device that runs it.

View operators (RESHAPE, SQUEEZE, EXPAND_DIMS) run on no device: their
output aliases their input in the memory plan.  They are reported as views,
never a cause of ``strict`` failure.

A PAD feeding a convolution is folded into it here, once
(:mod:`tvmdevice.aot.fold`): when the convolution is offered to a device that
declares ``folds_pad``, the folded convolution (reading the PAD's input) is
offered first.  If the device takes it, the PAD runs no kernel (its placement
says into which operator it was folded) and its output becomes an alias of
its input that only the folded convolution reads; if it refuses, its reason
is recorded and the plain convolution is offered as usual.

A device that ``compiles_partitions`` (:mod:`tvmdevice.partition`) is not
prepared per operator: the consecutive operators that pass its check (and the
view operators between them) wait in a run until an operator it does not
take, then the run is offered whole to its ``tvmdevice_prepare_partition``.
The partition's one call runs at its first operator's place in the schedule;
its other operators run no kernel of their own.  If it refuses, its reason is
recorded for each operator, and they are offered one by one to the devices
after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

from ..device_type import MemoryKind
from ..errors import NotSupportedError, PlacementError, Refusal
from ..kernel import PreparedCall, is_c_kernel
from ..partition import Partition, make_partition
from .fold import PadFold, candidate, folded_op_data, folded_operator, readers

if TYPE_CHECKING:  # pragma: no cover
    from ..ir import Graph, Operator
    from ..registry import Registry
    from ..target import Target, TargetEntry

__all__ = ["OpPlacement", "Placement", "place", "aligned_bytes", "is_view", "VIEW", "FOLDED", "VIEW_TYPES",
           "BLOCK_ALIGNMENT"]

#: The ``device`` of a view operator's placement: it runs on no device.
VIEW = "(view)"

#: The ``device`` of a PAD folded into the convolution it feeds: it runs on no device of its own.
FOLDED = "(folded)"

#: Operator types whose output is their input reinterpreted, for an operator
#: the operator layer does not know (otherwise its ``OpData.is_view`` says).
VIEW_TYPES = frozenset({"RESHAPE", "SQUEEZE", "EXPAND_DIMS"})

#: Granule in which device memory is budgeted (the alignment of every device block).
BLOCK_ALIGNMENT = 64


def aligned_bytes(nbytes: int) -> int:
    """``nbytes`` rounded up to :data:`BLOCK_ALIGNMENT` (what one device block occupies)."""
    return -(-max(nbytes, 1) // BLOCK_ALIGNMENT) * BLOCK_ALIGNMENT


@dataclass(frozen=True)
class OpPlacement:
    """Where one operator runs.

    :ivar op_index: the operator's index in the graph.
    :ivar op_type: its TFLite type.
    :ivar device: the chosen device name (:data:`VIEW` for a view operator, :data:`FOLDED` for a folded PAD).
    :ivar entry: index of that device in the target (``-1`` for a view or a folded PAD).
    :ivar declined: ``(device, reason)`` for each earlier device that refused (a convolution: also each
        device that refused the folded form, as ``(device, "fold of PAD #k: reason")``).
    :ivar call: the prepared call of the accepting device (``None`` for a view or a folded PAD).
    :ivar op_data: the operator layer's op data (``None`` when it does not know the type); a folded
        convolution's is the folded form its device prepared.
    :ivar fold: a folded PAD's, and the convolution it is folded into's, :class:`~tvmdevice.aot.fold.PadFold`.
    :ivar partition: the :class:`~tvmdevice.partition.Partition` the operator belongs to; only its first
        operator has the ``call`` and an ``entry`` (the others run no kernel of their own: ``entry`` -1).
    """

    op_index: int
    op_type: str
    device: str
    entry: int
    declined: tuple[tuple[str, str], ...] = ()
    call: PreparedCall | None = field(default=None, compare=False, repr=False)
    op_data: Any = field(default=None, compare=False, repr=False)
    fold: PadFold | None = None
    partition: Partition | None = None

    @property
    def is_view(self) -> bool:
        """Whether the operator runs no kernel of its own: a view (its output aliases its input), a
        PAD folded into its convolution (:attr:`is_folded`), or an operator of a partition whose call
        runs at the partition's first operator (:attr:`in_partition`)."""
        return self.entry < 0

    @property
    def in_partition(self) -> bool:
        """Whether the operator is part of a partition's call, not the first one (which holds the call)."""
        return self.partition is not None and self.entry < 0

    @property
    def is_alias(self) -> bool:
        """Whether the operator is a view whose output aliases its input (not folded, not in a partition)."""
        return self.entry < 0 and self.fold is None and self.partition is None

    @property
    def is_folded(self) -> bool:
        """Whether the operator is a PAD folded into the convolution it feeds (no kernel, no output buffer)."""
        return self.fold is not None and self.fold.pad == self.op_index


@dataclass(frozen=True)
class Placement:
    """The placement of every operator of a graph on a target.

    :ivar aliases: view output tensor -> the tensor whose memory it shares
        (never itself a view output); a folded PAD's output -> its input, read only by the folded convolution.
    """

    target: "Target"
    ops: tuple[OpPlacement, ...]
    strict: bool = False
    summary: dict[str, int] = field(default_factory=dict)
    aliases: dict[int, int] = field(default_factory=dict)

    @property
    def folds(self) -> tuple[PadFold, ...]:
        """Every PAD folded into a convolution, in graph order."""
        return tuple(p.fold for p in self.ops if p.is_folded and p.fold is not None)

    @property
    def partitions(self) -> tuple[Partition, ...]:
        """Every partition, in execution order."""
        return tuple(p.partition for p in self.ops if p.partition is not None and p.entry >= 0)

    def call_operator(self, graph: "Graph", op_index: int) -> "Operator":
        """What the call at operator ``op_index`` reads and writes: the operator, or its partition's operator."""
        p = self.ops[op_index]
        return p.partition.operator if p.partition is not None else graph.operators[op_index]

    def __str__(self) -> str:
        lines = [f"placement on target '{self.target}':"]
        width = max((len(p.op_type) for p in self.ops), default=0)
        for p in self.ops:
            if p.is_folded and p.fold is not None:
                conv = self.ops[p.fold.conv]
                lines.append(f"  #{p.op_index:<3} {p.op_type:<{width}}  -> folded into #{conv.op_index} "
                             f"{conv.op_type}'s window on {conv.device} ({p.fold.describe()}; no kernel, "
                             f"no padded tensor)")
                continue
            if p.is_alias:
                lines.append(f"  #{p.op_index:<3} {p.op_type:<{width}}  -> view (aliases its input, no kernel)")
                continue
            why = "; ".join(f"{d}: {r}" for d, r in p.declined)
            folded = f" with PAD #{p.fold.pad} folded in" if p.fold is not None else ""
            if p.partition is not None:
                folded += f", {p.partition.describe()}"
            lines.append(f"  #{p.op_index:<3} {p.op_type:<{width}}  -> {p.device}{folded}"
                         + (f"   ({why})" if why else ""))
        counts = ", ".join(f"{d}: {n}" for d, n in self.summary.items())
        views = sum(1 for p in self.ops if p.is_alias)
        folds = len(self.folds)
        parts = len(self.partitions)
        lines.append(f"  operators per device: {counts}" + (f"; views: {views}" if views else "")
                     + (f"; PADs folded into convolutions: {folds}" if folds else "")
                     + (f"; partitions: {parts}" if parts else ""))
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "target": str(self.target),
            "strict": self.strict,
            "ops": [{"index": p.op_index, "type": p.op_type,
                     "device": p.device if p.partition is not None or not p.is_view else None,
                     "view": p.is_alias, "kernel": p.call.name if p.call is not None else None,
                     "scratch_bytes": p.call.scratch_bytes if p.call is not None else 0,
                     "declined": [{"device": d, "reason": r} for d, r in p.declined],
                     **({"fold": _fold_json(p.fold)} if p.fold is not None else {}),
                     **({"partition": p.partition.index} if p.partition is not None else {})} for p in self.ops],
            "summary": dict(self.summary),
            "views": sum(1 for p in self.ops if p.is_alias),
            "folds": len(self.folds),
            "partitions": [_partition_json(self, part) for part in self.partitions],
        }


def _partition_json(placement: Placement, part: Partition) -> dict:
    p = placement.ops[part.first]
    call = p.call
    return {"index": part.index, "device": p.device, "ops": list(part.op_indices), "inputs": list(part.inputs),
            "outputs": list(part.outputs), "kernel": call.name if call is not None else None,
            "scratch_bytes": call.scratch_bytes if call is not None else 0,
            "details": dict(call.details) if call is not None else {}}


def _fold_json(fold: PadFold) -> dict:
    return {"pad": fold.pad, "conv": fold.conv, "top": fold.top, "bottom": fold.bottom, "left": fold.left,
            "right": fold.right}


def is_view(graph: "Graph", op: "Operator", op_data: Any) -> bool:
    """Whether ``op`` can alias its output to its input (a view of a non-constant tensor)."""
    view = op_data.is_view if op_data is not None else op.type in VIEW_TYPES
    if not view or not op.inputs or len(op.outputs) != 1 or op.inputs[0] < 0:
        return False
    src, dst = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    return not src.is_constant and src.nbytes == dst.nbytes and src.dtype == dst.dtype


class _Budget:
    """What placement has put in one capacity-limited device memory so far.

    Every buffer the device holds is counted as if all were alive at once —
    constants, each activation tensor, each call's scratch — so whatever
    the memory planner does afterwards, the plan fits.
    """

    def __init__(self, name: str, capacity: int) -> None:
        self.name, self.capacity = name, capacity
        self.held: set[int] = set()
        self.constant_bytes = self.activation_bytes = self.scratch_bytes = 0

    def refusal(self, graph: "Graph", op: "Operator", aliases: dict[int, int],
                scratch: int) -> tuple[str | None, list[int]]:
        """A reason the operator does not fit (or None), and the tensors it would add."""
        tensors = (aliases.get(t, t) for t in (*op.inputs, *op.outputs) if t >= 0)
        new = [t for t in dict.fromkeys(tensors) if t not in self.held]
        held = self.constant_bytes + self.activation_bytes + self.scratch_bytes
        need = held + sum(aligned_bytes(graph.tensors[t].nbytes) for t in new) + \
            (aligned_bytes(scratch) if scratch else 0)
        if need > self.capacity:
            return (f"{self.name} memory full: {need} B needed of its {self.capacity} B "
                    f"({self.constant_bytes} B of constants, {self.activation_bytes} B of activations and "
                    f"{self.scratch_bytes} B of scratch already placed); give it more memory (its target options) "
                    f"or accept the fallback"), new
        return None, new

    def take(self, graph: "Graph", new: list[int], scratch: int) -> None:
        for t in new:
            self.held.add(t)
            nbytes = aligned_bytes(graph.tensors[t].nbytes)
            if graph.tensors[t].is_constant:
                self.constant_bytes += nbytes
            else:
                self.activation_bytes += nbytes
        if scratch:
            self.scratch_bytes += aligned_bytes(scratch)

    def release(self, graph: "Graph", tensor: int) -> None:
        """Give back an activation tensor no kernel of the device reads or writes any more (a folded PAD's output)."""
        if tensor in self.held:
            self.held.discard(tensor)
            self.activation_bytes -= aligned_bytes(graph.tensors[tensor].nbytes)


class _Slot:
    """One device of the target as placement sees it: its limits and what it has taken."""

    def __init__(self, index: int, entry: "TargetEntry", registry: "Registry") -> None:
        self.index, self.entry, self.registry = index, entry, registry
        capacity = registry.memory_capacity(entry.device_type, entry.options)
        self.budget = _Budget(entry.kind, capacity) if capacity is not None else None
        self.workspace = registry.workspace_capacity(entry.device_type, entry.options)

    @property
    def partitions(self) -> bool:
        """Whether the device compiles partitions rather than single operators."""
        return self.entry.device_type.compiles_partitions

    def check(self, graph: "Graph", op: "Operator", op_data: Any) -> str | None:
        """The device's cheap pre-filter: None, or its reason for refusing ``op``."""
        entry = self.entry
        return self.registry.check_operator(entry.device_type, entry.options, graph, op, op_data)

    def offer(self, graph: "Graph", op: "Operator", op_data: Any, aliases: dict[int, int]) -> PreparedCall | str:
        """The prepared call when this device takes ``op``, otherwise its reason for refusing."""
        entry = self.entry
        reason = self.check(graph, op, op_data)
        if reason is not None:
            return reason
        if self.budget is not None:  # before prepare: no point preparing what cannot fit anyway
            reason, _ = self.budget.refusal(graph, op, aliases, 0)
            if reason is not None:
                return reason
        try:
            call = self.registry.prepare_operator(entry.device_type, entry.options, graph, op, op_data)
        except NotSupportedError as exc:
            return str(getattr(exc, "reason", None) or exc)
        _check_call(call, entry, op)
        return self._fits(graph, op, call, aliases)

    def offer_partition(self, graph: "Graph", part: Partition, aliases: dict[int, int]) -> PreparedCall | str:
        """The one prepared call when this device takes the partition, otherwise its reason for refusing."""
        entry, op = self.entry, part.operator
        if self.budget is not None:
            reason, _ = self.budget.refusal(graph, op, aliases, 0)
            if reason is not None:
                return reason
        try:
            call = self.registry.prepare_partition(entry.device_type, entry.options, graph, part)
        except NotSupportedError as exc:
            return str(getattr(exc, "reason", None) or exc)
        _check_call(call, entry, op)
        return self._fits(graph, op, call, aliases)

    def _fits(self, graph: "Graph", op: "Operator", call: PreparedCall, aliases: dict[int, int]) -> PreparedCall | str:
        """``call`` once the device's limits are checked (and its memory taken), or the reason it does not fit."""
        entry = self.entry
        if self.workspace is not None and call.scratch_bytes > self.workspace:
            return (f"the call needs {call.scratch_bytes} B of scratch, more than the {self.workspace} B "
                    f"{entry.kind} allows one call (its workspace capacity); raise that limit in its target options "
                    f"or accept the fallback")
        if self.budget is not None:
            reason, new = self.budget.refusal(graph, op, aliases, call.scratch_bytes)
            if reason is not None:
                return reason
            self.budget.take(graph, new, call.scratch_bytes)
        return call


def _check_call(call: Any, entry: "TargetEntry", op: "Operator") -> None:
    """A prepared call the executor can run: a plugin bug otherwise, not a refusal."""
    if not isinstance(call, PreparedCall):
        raise NotSupportedError(f"device {entry.kind!r} returned {type(call).__name__} from prepare_operator for "
                                f"operator #{op.index} {op.type}, not a PreparedCall; fix the plugin")
    if entry.device_type.memory is MemoryKind.SEPARATE and not is_c_kernel(call.kernel):
        raise NotSupportedError(f"device {entry.kind!r}: operator #{op.index} {op.type} has a Python kernel, "
                                f"but the device's memory is not host-visible; it must provide a C kernel")


def place(graph: "Graph", target: "Target", registry: "Registry", *, strict: bool = False,
          fold: bool = True, partition: bool = True) -> Placement:
    """Place and prepare each operator of ``graph`` on the first device of ``target`` that takes it.

    :param strict: refuse host fallback: an operator that no accelerator of
        the target takes is an error (a target with only a host is allowed;
        views and folded PADs never count).
    :param fold: fold a PAD into the convolution it feeds where a device takes it
        (:mod:`tvmdevice.aot.fold`); off when every tensor must stay readable.
    :param partition: group the operators a ``compiles_partitions`` device takes into runs as long as
        they go; off (every tensor must stay readable), each is a partition of its own.
    :raises PlacementError: the operator layer refuses an operator, no device
        takes one, or strict mode refused host fallback; the message names
        the operator(s) and every device's reason.
    """
    state = _Placing(graph, target, registry, fold, partition)
    for op in graph.operators:
        state.place(op)
    state.close_run()
    ops = state.done()
    offenders = [p for p in ops if strict and p.entry == len(state.slots) - 1 and p.entry > 0]
    if offenders:
        raise PlacementError(_strict_message(offenders, target, len(state.aliases)))
    summary: dict[str, int] = {}
    for entry in target.entries:
        n = sum(1 for p in ops if p.device == entry.kind)
        if n:
            summary[entry.kind] = n
    return Placement(target, tuple(ops), strict, summary, state.aliases)


@dataclass
class _Run:
    """Operators a partitioning device has accepted, waiting for the run to end."""

    slot: _Slot
    members: list[tuple["Operator", Any, tuple[tuple[str, str], ...]]] = field(default_factory=list)
    views: list[tuple["Operator", Any]] = field(default_factory=list)  # views after the last member so far


class _Placing:
    """The placement pass: one operator at a time, in execution order."""

    def __init__(self, graph: "Graph", target: "Target", registry: "Registry", fold: bool, partition: bool) -> None:
        self.graph, self.target, self.fold, self.partition = graph, target, fold, partition
        self.slots = [_Slot(i, entry, registry) for i, entry in enumerate(target.entries)]
        self.ops: list[OpPlacement | None] = [None] * len(graph.operators)
        self.aliases: dict[int, int] = {}
        self.users = readers(graph) if fold else {}
        self.producer: dict[int, int] = {}
        self.run: _Run | None = None
        self.count = 0  # partitions made

    def done(self) -> list[OpPlacement]:
        missing = [i for i, p in enumerate(self.ops) if p is None]
        if missing:  # pragma: no cover - every operator is placed by close_run at the latest
            raise RuntimeError(f"operators {missing} were never placed")
        return [p for p in self.ops if p is not None]

    def place(self, op: "Operator") -> None:
        graph = self.graph
        op_data = _analyze(graph, op)
        if is_view(graph, op, op_data):
            if self.run is not None:
                self.run.views.append((op, op_data))
            else:
                self._view(op, op_data)
            return
        if self.run is not None and (not self.partition or self.run.slot.check(graph, op, op_data) is not None):
            self.close_run()
        for t in op.outputs:
            self.producer[t] = op.index
        pad = self.producer.get(op.inputs[0]) if self.fold and op.inputs else None
        placed = None if pad is None else self.ops[pad]
        folding = None if placed is None or placed.partition is not None else \
            candidate(graph, self.users, graph.operators[placed.op_index], placed.op_data, op, op_data)
        declined: list[tuple[str, str]] = []
        for slot in self.slots:
            if slot.partitions:
                reason = slot.check(graph, op, op_data)
                if reason is not None:
                    declined.append((slot.entry.kind, reason))
                    continue
                if self.run is not None and self.run.slot is not slot:
                    self.close_run()
                if self.run is None:
                    self.run = _Run(slot)
                run = self.run
                run.members += [(v, d, ()) for v, d in run.views]  # views between two members join them
                run.views.clear()
                run.members.append((op, op_data, tuple(declined)))
                return
            if folding is not None and slot.entry.device_type.folds_pad:
                chosen = _offer_folded(slot, graph, op, op_data, folding, self.aliases, declined)
                if chosen is not None:
                    self.close_run()
                    _fold(self.ops, self.slots, graph, folding, chosen, self.aliases)
                    self.ops[op.index] = chosen
                    return
            outcome = slot.offer(graph, op, op_data, self.aliases)
            if isinstance(outcome, str):
                declined.append((slot.entry.kind, outcome))
                continue
            self.close_run()  # an earlier device took it: the run before it ends here
            self.ops[op.index] = OpPlacement(op.index, op.type, slot.entry.kind, slot.index, tuple(declined),
                                             outcome, op_data)
            return
        _no_device(op, declined, self.target)

    def close_run(self) -> None:
        """Offer the waiting run to its device as one partition; its operators go one by one if refused."""
        run, self.run = self.run, None
        if run is None:
            return
        graph, slot = self.graph, run.slot
        members = [op for op, _, _ in run.members]
        part = make_partition(graph, self.count, members)
        outcome = slot.offer_partition(graph, part, self.aliases)
        if isinstance(outcome, PreparedCall):
            self.count += 1
            for k, (op, op_data, declined) in enumerate(run.members):
                self.ops[op.index] = OpPlacement(op.index, op.type, slot.entry.kind, slot.index if k == 0 else -1,
                                                 declined, outcome if k == 0 else None, op_data, partition=part)
        else:
            reason = f"{part.describe()}: {outcome}"
            for op, op_data, declined in run.members:
                if is_view(graph, op, op_data):
                    self._view(op, op_data)
                    continue
                tried = [*declined, (slot.entry.kind, reason)]
                self.ops[op.index] = self._offer_after(slot, op, op_data, tried)
        for op, op_data in run.views:  # views after the run's last operator are views as usual
            self._view(op, op_data)

    def _offer_after(self, after: _Slot, op: "Operator", op_data: Any,
                     declined: list[tuple[str, str]]) -> OpPlacement:
        """``op`` offered to the devices after ``after`` (a partition refused it), one operator at a time."""
        for slot in self.slots[after.index + 1:]:
            if slot.partitions:
                declined.append((slot.entry.kind, "operators a partition refused go to single-operator devices"))
                continue
            outcome = slot.offer(self.graph, op, op_data, self.aliases)
            if isinstance(outcome, str):
                declined.append((slot.entry.kind, outcome))
                continue
            return OpPlacement(op.index, op.type, slot.entry.kind, slot.index, tuple(declined), outcome, op_data)
        _no_device(op, declined, self.target)

    def _view(self, op: "Operator", op_data: Any) -> None:
        self.aliases[op.outputs[0]] = self.aliases.get(op.inputs[0], op.inputs[0])
        self.ops[op.index] = OpPlacement(op.index, op.type, VIEW, -1, op_data=op_data)


def _no_device(op: "Operator", declined: list[tuple[str, str]], target: "Target") -> NoReturn:
    why = "; ".join(f"{d}: {r}" for d, r in declined)
    raise PlacementError(f"operator #{op.index} {op.type}: no device of target '{target}' can run it "
                         f"({why}); add a device that implements it to the target")


def _offer_folded(slot: _Slot, graph: "Graph", op: "Operator", op_data: Any, fold: PadFold,
                  aliases: dict[int, int], declined: list[tuple[str, str]]) -> OpPlacement | None:
    """``op`` with ``fold``'s PAD folded in, if ``slot``'s device takes it; its refusal joins ``declined``."""
    data = folded_op_data(op_data, fold)
    outcome = slot.offer(graph, folded_operator(op, fold), data, aliases)
    if isinstance(outcome, str):
        declined.append((slot.entry.kind, f"fold of {graph.operators[fold.pad].type} #{fold.pad}: {outcome}"))
        return None
    return OpPlacement(op.index, op.type, slot.entry.kind, slot.index, tuple(declined), outcome, data, fold)


def _fold(ops: list[OpPlacement | None], slots: list[_Slot], graph: "Graph", fold: PadFold, conv: OpPlacement,
          aliases: dict[int, int]) -> None:
    """Make the PAD ``fold`` names a folded placement: no kernel, its output an alias only ``conv`` reads."""
    pad = ops[fold.pad]
    assert pad is not None, "a PAD that folds was placed before the operator it folds into"
    if pad.entry >= 0:  # its device prepared it and budgeted its output, which is never materialised now
        budget = slots[pad.entry].budget
        if budget is not None:
            budget.release(graph, fold.padded)
    ops[fold.pad] = OpPlacement(pad.op_index, pad.op_type, FOLDED, -1, pad.declined, None, pad.op_data, fold)
    aliases[fold.padded] = aliases.get(fold.source, fold.source)


def _analyze(graph: "Graph", op: "Operator") -> Any:
    from ..ops import analyze

    try:
        return analyze(graph, op)
    except Refusal as exc:  # TFLM itself does not run it: no device is asked
        raise PlacementError(f"{exc.with_context(op=op)}; no device is asked, since TFLite Micro's int8 kernels "
                             f"do not support it either: change or re-quantize the model") from exc


def _strict_message(offenders: list[OpPlacement], target: "Target", views: int) -> str:
    host = target.entries[-1].kind
    lines = []
    for p in offenders:
        why = "; ".join(f"{d}: {r}" for d, r in p.declined)
        lines.append(f"strict placement: operator #{p.op_index} {p.op_type} would fall back to the host "
                     f"{host!r} ({why})")
    lines.append(f"{len(offenders)} operator(s) would run on the host. Put a device that runs them in the target, "
                 f"raise the limits named above (target options), or compile without strict mode "
                 f"(--strict) to let the host run them.")
    if views:
        lines.append(f"({views} view operator(s) alias their input and need no device: not counted.)")
    return "\n".join(lines)
