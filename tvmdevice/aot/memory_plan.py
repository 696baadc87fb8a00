"""Static memory planning per memory pool, from buffer lifetimes.

* **Host arena** (``host``): one contiguous block; each buffer gets an offset.
  Greedy by size, largest first, each at the lowest aligned offset that does
  not overlap a buffer alive at the same time (the strategy of TFLite
  Micro's greedy planner), so the arena is comparable with TFLM's.
* **Separate memories** (e.g. ``woofles`` SRAM): the host may not do
  arithmetic on device pointers, so buffers are grouped into *storage
  blocks*: buffers whose lifetimes do not overlap share a block, and each
  block is one AllocDataSpace at executor creation.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .schedule import HOST, BufferUse, Schedule

__all__ = ["PoolPlan", "MemoryPlan", "plan_memory", "ARENA_ALIGNMENT"]

#: Alignment of every buffer in the host arena (SIMD loads like 16).
ARENA_ALIGNMENT = 16


@dataclass
class PoolPlan:
    """The plan of one memory.

    :ivar memory: ``"host"`` or a separate device's name.
    :ivar size: bytes the pool needs (arena size, or the sum of block sizes).
    :ivar offsets: host arena only: ``(tensor, memory)`` -> byte offset.
    :ivar blocks: separate memories only: block sizes.
    :ivar block_of: separate memories only: ``(tensor, memory)`` -> block index.
    :ivar constant_bytes: bytes of constants preloaded into this memory.
    """

    memory: str
    size: int = 0
    offsets: dict[tuple[int, str], int] = field(default_factory=dict)
    blocks: list[int] = field(default_factory=list)
    block_of: dict[tuple[int, str], int] = field(default_factory=dict)
    constant_bytes: int = 0


@dataclass
class MemoryPlan:
    pools: dict[str, PoolPlan]

    def report(self) -> str:
        lines = []
        for name, pool in self.pools.items():
            if name == HOST:
                lines.append(f"  host arena: {pool.size} B ({len(pool.offsets)} buffers)")
            else:
                lines.append(f"  {name} memory: {pool.size} B in {len(pool.blocks)} blocks + "
                             f"{pool.constant_bytes} B constants")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {name: {"size": p.size, "buffers": len(p.offsets) or len(p.block_of), "blocks": len(p.blocks),
                       "constant_bytes": p.constant_bytes} for name, p in self.pools.items()}


def _overlaps(a: BufferUse, b: BufferUse) -> bool:
    return not (a.last < b.first or b.last < a.first)


def _align(n: int, a: int = ARENA_ALIGNMENT) -> int:
    return (n + a - 1) // a * a


def _plan_arena(buffers: list[BufferUse]) -> PoolPlan:
    pool = PoolPlan(HOST)
    placed: list[tuple[BufferUse, int]] = []
    for buf in sorted(buffers, key=lambda b: (-b.nbytes, b.first, b.tensor)):
        busy = sorted((off, off + _align(b.nbytes)) for b, off in placed if _overlaps(b, buf))
        offset = 0
        for start, end in busy:
            if offset + buf.nbytes <= start:
                break
            offset = max(offset, end)
        placed.append((buf, offset))
        pool.offsets[(buf.tensor, buf.memory)] = offset
        pool.size = max(pool.size, offset + _align(buf.nbytes))
    return pool


def _plan_blocks(memory: str, buffers: list[BufferUse]) -> PoolPlan:
    pool = PoolPlan(memory)
    members: list[list[BufferUse]] = []
    for buf in sorted(buffers, key=lambda b: (-b.nbytes, b.first, b.tensor)):
        for i, occupants in enumerate(members):
            if pool.blocks[i] >= buf.nbytes and not any(_overlaps(o, buf) for o in occupants):
                occupants.append(buf)
                pool.block_of[(buf.tensor, buf.memory)] = i
                break
        else:
            members.append([buf])
            pool.blocks.append(buf.nbytes)
            pool.block_of[(buf.tensor, buf.memory)] = len(pool.blocks) - 1
    pool.size = sum(pool.blocks)
    return pool


def plan_memory(schedule: Schedule, constant_sizes: dict[tuple[int, str], int]) -> MemoryPlan:
    """Plan every memory the schedule uses.

    :param constant_sizes: ``(tensor, memory)`` -> bytes, for constants preloaded
        into separate memories.
    """
    by_memory: dict[str, list[BufferUse]] = {}
    for b in schedule.buffers:
        by_memory.setdefault(b.memory, []).append(b)
    pools: dict[str, PoolPlan] = {HOST: _plan_arena(by_memory.pop(HOST, []))}
    for memory, buffers in by_memory.items():
        pools[memory] = _plan_blocks(memory, buffers)
    for (_, memory), nbytes in constant_sizes.items():
        pools.setdefault(memory, PoolPlan(memory)).constant_bytes += nbytes
    return MemoryPlan(pools)
