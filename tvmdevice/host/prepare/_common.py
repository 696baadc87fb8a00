"""What every host prepare step shares: the plan it returns and the right-aligned C shapes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["KernelPlan", "right_aligned"]


@dataclass(frozen=True)
class KernelPlan:
    """What a prepare step adds to an operator's op data.

    :param values: params struct members the op data does not hold, by
        member name; they take precedence over the op data's fields of the
        same name.
    :param kernel: the kernel that runs the operator when it is not the one
        whose step this is (a later kernel of
        :data:`~tvmdevice.host.kernel_table.KERNELS` listing the same kernel
        key), else ``None``.
    :param scratch_bytes: scratch the kernel needs beyond its operands (TFLM's
        scratch buffers, planned with the rest of memory).
    """

    values: dict[str, Any] = field(default_factory=dict)
    kernel: str | None = None
    scratch_bytes: int = 0


def right_aligned(values: tuple[int, ...], rank: int, fill: int) -> tuple[int, ...]:
    """``values`` padded in front with ``fill`` to ``rank`` entries (the C loops' fixed rank)."""
    return (fill,) * (rank - len(values)) + tuple(values)
