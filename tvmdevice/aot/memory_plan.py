"""Static memory planning per memory pool, from buffer lifetimes: one plan holds every buffer.

Each pool's plan holds every buffer the schedule uses in that memory: the
activation tensors (views share their source's buffer) and each call's
scratch, alive during its step only — nothing is allocated at run time.

* **Host arena** (``host``): one contiguous block; each buffer gets an offset.
  Greedy by size, largest first, each at the lowest aligned offset that does
  not overlap a buffer alive at the same time (the strategy of TFLite
  Micro's greedy planner), so the arena is comparable with TFLM's.  A tensor
  a call's device asked to address inside its scratch
  (``PreparedCall.in_scratch``) is placed there instead, the scratch alive
  over its lifetime (:mod:`tvmdevice.aot.schedule`).
* **Separate memories** (e.g. ``woofles`` SRAM): the host may not do
  arithmetic on device pointers, so buffers are grouped into *storage
  blocks*: buffers whose lifetimes do not overlap share a block, and each
  block is one AllocDataSpace at executor creation.

Every buffer's place is listed by :meth:`PoolPlan.allocations` (pool, offset,
size, first and last operator): what ``tvmdevice info --json``, an export's
``metadata.json`` and the memory-plan picture all read.

Constants are not planned: the host reads the model's weights in place
(flash/rodata on a microcontroller) and separate memories get them preloaded;
each pool reports their size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .schedule import HOST, SCRATCH, TENSOR, BufferKey, BufferUse, KernelStep, Schedule, Step

__all__ = ["Allocation", "PoolPlan", "MemoryPlan", "plan_memory", "tensor_key", "ARENA_ALIGNMENT"]

#: Alignment of every buffer in the host arena (SIMD loads like 16).
ARENA_ALIGNMENT = 16


@dataclass(frozen=True)
class Allocation:
    """Where one buffer of a pool lives and when.

    :ivar pool: the memory (``"host"`` or a separate device's name).
    :ivar kind: ``"tensor"`` (an activation tensor's buffer, shared by the views of it) or ``"scratch"``
        (one call's scratch).
    :ivar tensor: the tensor (``None`` for scratch).
    :ivar operator: for scratch, the operator whose call uses it (``None`` for a tensor).
    :ivar offset: byte offset in the pool: in the host arena, the planned offset; in a separate memory,
        the offset of its storage block when the pool's blocks are laid end to end (each is one
        AllocDataSpace on the device).
    :ivar size: the buffer's bytes.
    :ivar first_op: the first operator during which the buffer is alive (a graph input: the first operator).
    :ivar last_op: the last one (a graph output or a state: the last operator).
    :ivar block: separate memories only: the storage block's index.
    """

    pool: str
    kind: str
    tensor: int | None
    operator: int | None
    offset: int
    size: int
    first_op: int
    last_op: int
    block: int | None = None

    def to_json(self) -> dict:
        return {"pool": self.pool, "kind": self.kind, "tensor": self.tensor, "operator": self.operator,
                "offset": self.offset, "size": self.size, "first_op": self.first_op, "last_op": self.last_op,
                "block": self.block}


@dataclass
class PoolPlan:
    """The plan of one memory.

    :ivar memory: ``"host"`` or a separate device's name.
    :ivar size: bytes of RAM the pool's buffers need (activations and scratch
        planned together: the arena size, or the sum of block sizes).
    :ivar activation_bytes: what the activation tensors alone need, planned
        the same way (at most ``size``).
    :ivar largest_scratch: the largest scratch of one call in this pool.
    :ivar offsets: host arena only: buffer key -> byte offset.
    :ivar blocks: separate memories only: block sizes.
    :ivar block_of: separate memories only: buffer key -> block index.
    :ivar constant_bytes: bytes of constants read in this memory (host: the
        model's weights, read in place; separate memories: preloaded).
    :ivar params_bytes: host only: the prepared calls' parameters — each
        params struct and the packed arrays it points into (weights a device
        rearranged, per-channel multipliers) — which a firmware image keeps in
        flash beside the constants.
    :ivar uses: every buffer planned in the pool, with its lifetime in schedule steps.
    :ivar step_operators: the operator of each schedule step (a copy: the operator it is made for).
    """

    memory: str
    size: int = 0
    activation_bytes: int = 0
    largest_scratch: int = 0
    offsets: dict[BufferKey, int] = field(default_factory=dict)
    blocks: list[int] = field(default_factory=list)
    block_of: dict[BufferKey, int] = field(default_factory=dict)
    constant_bytes: int = 0
    params_bytes: int = 0
    uses: list[BufferUse] = field(default_factory=list)
    step_operators: tuple[int, ...] = ()

    @property
    def scratch_bytes(self) -> int:
        """The RAM scratch adds to the pool beyond the activations."""
        return self.size - self.activation_bytes

    @property
    def buffers(self) -> int:
        return len(self.offsets) or len(self.block_of)

    def allocations(self) -> list[Allocation]:
        """Every buffer of the pool: its offset, size and first and last operator, by offset then lifetime."""
        starts = [sum(self.blocks[:i]) for i in range(len(self.blocks))]
        steps = self.step_operators
        out = []
        for use in self.uses:
            block = self.block_of.get(use.key)
            offset = self.offsets[use.key] if self.memory == HOST else starts[block] if block is not None else 0
            kind, index, _ = use.key
            out.append(Allocation(
                self.memory, kind, index if kind == TENSOR else None, index if kind == SCRATCH else None, offset,
                use.nbytes, _operator_at(steps, use.first), _operator_at(steps, use.last), block))
        return sorted(out, key=lambda a: (a.offset, a.first_op, a.last_op, a.kind, a.tensor or 0, a.operator or 0))

    def describe(self) -> str:
        """One line: RAM as activations + scratch, and the constants."""
        where = "host arena" if self.memory == HOST else f"{self.memory} memory"
        layout = f"{self.buffers} buffers" if self.memory == HOST else f"{len(self.blocks)} blocks"
        constants = ("model weights read in place (flash/rodata)" if self.memory == HOST
                     else "preloaded into its memory")
        return (f"  {where}: {self.size:,} B RAM = {self.activation_bytes:,} B activations + {self.scratch_bytes:,} B "
                f"scratch (largest call {self.largest_scratch:,} B), {layout}; constants {self.constant_bytes:,} B, "
                f"{constants}" + (f"; kernel params {self.params_bytes:,} B (structs and packed weights)"
                                  if self.params_bytes else ""))

    def to_json(self) -> dict:
        return {"ram": self.size, "activations": self.activation_bytes, "scratch": self.scratch_bytes,
                "largest_scratch": self.largest_scratch, "constants": self.constant_bytes,
                "params": self.params_bytes,
                "constants_in": "flash" if self.memory == HOST else "device memory",
                "size": self.size, "constant_bytes": self.constant_bytes,
                "buffers": self.buffers, "blocks": len(self.blocks)}


@dataclass
class MemoryPlan:
    """Every pool's plan, by memory name (``host`` first)."""

    pools: dict[str, PoolPlan]

    def report(self) -> str:
        return "\n".join(pool.describe() for pool in self.pools.values())

    def to_json(self) -> dict:
        return {name: p.to_json() for name, p in self.pools.items()}

    def allocations(self) -> list[Allocation]:
        """Every buffer of every pool (:meth:`PoolPlan.allocations`), pool by pool."""
        return [a for pool in self.pools.values() for a in pool.allocations()]


def _operator_at(step_operators: tuple[int, ...], step: int) -> int:
    """The operator of ``step``; before the first step (a graph input) the first, after the last the last."""
    if not step_operators:
        return 0
    return step_operators[min(max(step, 0), len(step_operators) - 1)]


def _step_operators(steps: tuple[Step, ...]) -> tuple[int, ...]:
    """Each step's operator: a kernel step's own; a copy's, the kernel step it precedes (after the last
    kernel step, the last one's)."""
    out: list[int | None] = [None] * len(steps)
    following: int | None = None
    for i in range(len(steps) - 1, -1, -1):
        step = steps[i]
        if isinstance(step, KernelStep):
            following = step.op_index
        out[i] = following
    last = 0
    for i, op in enumerate(out):
        if op is None:
            out[i] = last
        else:
            last = op
    return tuple(op if op is not None else 0 for op in out)


def _overlaps(a: BufferUse, b: BufferUse) -> bool:
    return not (a.last < b.first or b.last < a.first)


def _align(n: int, a: int = ARENA_ALIGNMENT) -> int:
    return (n + a - 1) // a * a


def _order(buffers: list[BufferUse]) -> list[BufferUse]:
    return sorted(buffers, key=lambda b: (-b.nbytes, b.first, b.scratch_of is not None, b.tensor,
                                          b.scratch_of or 0))


def _plan_arena(buffers: list[BufferUse]) -> PoolPlan:
    pool = PoolPlan(HOST)
    placed: list[tuple[BufferUse, int]] = []
    scratch_ops = {b.scratch_of for b in buffers if b.scratch_of is not None}
    inside = [b for b in buffers if b.inside in scratch_ops]
    for buf in _order([b for b in buffers if b.inside not in scratch_ops]):
        busy = sorted((off, off + _align(b.nbytes)) for b, off in placed if _overlaps(b, buf))
        offset = 0
        for start, end in busy:
            if offset + buf.nbytes <= start:
                break
            offset = max(offset, end)
        placed.append((buf, offset))
        pool.offsets[buf.key] = offset
        pool.size = max(pool.size, offset + _align(buf.nbytes))
    for buf in inside:  # at its place in the call's scratch, which is alive over its lifetime
        assert buf.inside is not None
        pool.offsets[buf.key] = pool.offsets[(SCRATCH, buf.inside, HOST)] + buf.inside_offset
    return pool


def _plan_blocks(memory: str, buffers: list[BufferUse]) -> PoolPlan:
    pool = PoolPlan(memory)
    members: list[list[BufferUse]] = []
    for buf in _order(buffers):
        for i, occupants in enumerate(members):
            if pool.blocks[i] >= buf.nbytes and not any(_overlaps(o, buf) for o in occupants):
                occupants.append(buf)
                pool.block_of[buf.key] = i
                break
        else:
            members.append([buf])
            pool.blocks.append(buf.nbytes)
            pool.block_of[buf.key] = len(pool.blocks) - 1
    pool.size = sum(pool.blocks)
    return pool


def _plan_pool(memory: str, buffers: list[BufferUse]) -> PoolPlan:
    plan = _plan_arena if memory == HOST else lambda bufs: _plan_blocks(memory, bufs)
    pool = plan(buffers)
    tensors_only = [b for b in buffers if b.scratch_of is None]
    scratch = [b for b in buffers if b.scratch_of is not None]
    activations = plan(tensors_only).size if scratch else pool.size
    largest = max((b.nbytes for b in scratch), default=0)
    inside = any(b.inside is not None for b in tensors_only)
    if scratch and memory == HOST and not inside and pool.size > activations + _align(largest):
        # Greedy placement is not optimal: scratch stacked on top of the
        # activation arena (every call's scratch at one offset, one call at a
        # time) is a valid plan too; keep the smaller.
        pool = plan(tensors_only)
        for b in scratch:
            pool.offsets[b.key] = activations
        pool.size = activations + _align(largest)
    pool.activation_bytes = min(activations, pool.size)
    pool.largest_scratch = largest
    return pool


def plan_memory(schedule: Schedule, constant_sizes: dict[tuple[int, str], int]) -> MemoryPlan:
    """Plan every memory the schedule uses.

    :param constant_sizes: ``(tensor, memory)`` -> bytes, for each constant
        read in that memory (reported per pool, not planned).
    """
    by_memory: dict[str, list[BufferUse]] = {HOST: []}
    for b in schedule.buffers:
        by_memory.setdefault(b.memory, []).append(b)
    pools = {memory: _plan_pool(memory, buffers) for memory, buffers in by_memory.items()}
    step_operators = _step_operators(schedule.steps)
    for memory, pool in pools.items():
        pool.uses = by_memory[memory]
        pool.step_operators = step_operators
    for (_, memory), nbytes in constant_sizes.items():
        pools.setdefault(memory, PoolPlan(memory, step_operators=step_operators)).constant_bytes += nbytes
    return MemoryPlan(pools)


def tensor_key(tensor: int, memory: str) -> BufferKey:
    """The plan key of ``tensor``'s buffer in ``memory`` (resolve views with ``Schedule.source`` first)."""
    return (TENSOR, tensor, memory)
