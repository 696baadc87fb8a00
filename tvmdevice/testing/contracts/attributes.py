"""The attributes contract: GetAttr answers every ``DeviceAttrKind``.

For every kind, in every state from initialized to active, GetAttr returns
an int or a str, or ``None`` for "not applicable" — it never raises.
``kExist`` is 1 once the device is initialized; memory sizes are
non-negative and the available memory never exceeds the total.
"""

from __future__ import annotations

from typing import Any

from ...attrs import DeviceAttrKind
from ...lifecycle import State
from ._base import Check, CheckContext, Contract

__all__ = ["CONTRACT", "check_every_kind", "check_exist", "check_memory_sizes"]

NAME = "attributes"
_STATES = (State.INITIALIZED, State.OPENED, State.ACTIVE)


def _answers(ctx: CheckContext, state: State, kinds: Any = DeviceAttrKind) -> dict[DeviceAttrKind, Any]:
    """GetAttr of each of ``kinds`` on a fresh device driven to ``state``."""
    dev = ctx.new_device(state)
    out = {}
    for kind in kinds:
        with ctx.calling(f"GetAttr({kind.name}) while {state.value}"):
            out[kind] = dev.get_attr(kind)
    return out


def check_every_kind(ctx: CheckContext) -> str:
    """Every DeviceAttrKind gets an int, a str or None (not applicable), in every state; never an exception."""
    answered: set[str] = set()
    for state in _STATES:
        for kind, value in _answers(ctx, state).items():
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, str)):
                ctx.fail(f"GetAttr({kind.name}) while {state.value} returned {value!r} "
                         f"({type(value).__name__}); answers are int, str, or None for not applicable")
            answered.add(kind.name)
    return f"{len(answered)} of {len(DeviceAttrKind)} kinds answered: {', '.join(sorted(answered)) or 'none'}"


def check_exist(ctx: CheckContext) -> str:
    """kExist is 1 whenever the device is initialized, opened or active."""
    for state in _STATES:
        value = _answers(ctx, state, [DeviceAttrKind.kExist])[DeviceAttrKind.kExist]
        if value != 1:
            ctx.fail(f"GetAttr(kExist) while {state.value} is {value!r}; an initialized device exists (1)")
    return "1 in every state"


def check_memory_sizes(ctx: CheckContext) -> str:
    """kTotalGlobalMemory and kAvailableGlobalMemory, when answered, are sizes with available <= total."""
    answers = _answers(ctx, State.OPENED, [DeviceAttrKind.kTotalGlobalMemory, DeviceAttrKind.kAvailableGlobalMemory])
    total = answers[DeviceAttrKind.kTotalGlobalMemory]
    available = answers[DeviceAttrKind.kAvailableGlobalMemory]
    for kind, value in ((DeviceAttrKind.kTotalGlobalMemory, total),
                        (DeviceAttrKind.kAvailableGlobalMemory, available)):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            ctx.fail(f"GetAttr({kind.name}) is {value!r}; a memory size is a non-negative int")
    if isinstance(total, int) and isinstance(available, int) and available > total:
        ctx.fail(f"kAvailableGlobalMemory ({available}) exceeds kTotalGlobalMemory ({total})")
    return f"total {total!r}, available {available!r}"


CONTRACT = Contract(NAME, "GetAttr answers or says not-applicable for every DeviceAttrKind", (
    Check("every-kind", check_every_kind, check_every_kind.__doc__ or ""),
    Check("exist", check_exist, check_exist.__doc__ or ""),
    Check("memory-sizes", check_memory_sizes, check_memory_sizes.__doc__ or ""),
))
