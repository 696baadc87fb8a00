"""Static memory planning per memory pool, from buffer lifetimes: one plan holds every buffer.

Each pool's plan holds every buffer the schedule uses in that memory: the
activation tensors (views share their source's buffer) and each call's
scratch, alive during its step only — nothing is allocated at run time.

* **Host arena** (``host``): one contiguous block; each buffer gets an offset.
  Greedy by size, largest first, each at the lowest aligned offset that does
  not overlap a buffer alive at the same time (the strategy of TFLite
  Micro's greedy planner), so the arena is comparable with TFLM's.
* **Separate memories** (e.g. ``woofles`` SRAM): the host may not do
  arithmetic on device pointers, so buffers are grouped into *storage
  blocks*: buffers whose lifetimes do not overlap share a block, and each
  block is one AllocDataSpace at executor creation.

Constants are not planned: the host reads the model's weights in place
(flash/rodata on a microcontroller) and separate memories get them preloaded;
each pool reports their size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .schedule import HOST, TENSOR, BufferKey, BufferUse, Schedule

__all__ = ["PoolPlan", "MemoryPlan", "plan_memory", "tensor_key", "ARENA_ALIGNMENT"]

#: Alignment of every buffer in the host arena (SIMD loads like 16).
ARENA_ALIGNMENT = 16


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

    @property
    def scratch_bytes(self) -> int:
        """The RAM scratch adds to the pool beyond the activations."""
        return self.size - self.activation_bytes

    @property
    def buffers(self) -> int:
        return len(self.offsets) or len(self.block_of)

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
    for buf in _order(buffers):
        busy = sorted((off, off + _align(b.nbytes)) for b, off in placed if _overlaps(b, buf))
        offset = 0
        for start, end in busy:
            if offset + buf.nbytes <= start:
                break
            offset = max(offset, end)
        placed.append((buf, offset))
        pool.offsets[buf.key] = offset
        pool.size = max(pool.size, offset + _align(buf.nbytes))
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
    if scratch and memory == HOST and pool.size > activations + _align(largest):
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
    for (_, memory), nbytes in constant_sizes.items():
        pools.setdefault(memory, PoolPlan(memory)).constant_bytes += nbytes
    return MemoryPlan(pools)


def tensor_key(tensor: int, memory: str) -> BufferKey:
    """The plan key of ``tensor``'s buffer in ``memory`` (resolve views with ``Schedule.source`` first)."""
    return (TENSOR, tensor, memory)
