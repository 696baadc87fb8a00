"""One colour per device, the same in every picture, in target order."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..aot.placement import FOLDED, VIEW

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.placement import OpPlacement
    from ..target import Target

__all__ = ["device_colours", "operator_colour", "NO_KERNEL"]

#: Matplotlib's ten qualitative colours ("tab10"), hex, for the devices in target order.
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
            "#bcbd22", "#17becf")

#: The colour of an operator that runs no kernel of its own (a view, a folded PAD).
NO_KERNEL = "#d9d9d9"


def device_colours(target: "Target") -> dict[str, str]:
    """Each device of ``target`` -> its colour (target order: the first device gets the first colour)."""
    kinds = list(dict.fromkeys(e.kind for e in target.entries))
    return {kind: _PALETTE[i % len(_PALETTE)] for i, kind in enumerate(kinds)} | {VIEW: NO_KERNEL,
                                                                                  FOLDED: NO_KERNEL}


def operator_colour(colours: dict[str, str], p: "OpPlacement") -> str:
    """The colour of ``p``'s node: its device's, or :data:`NO_KERNEL` for a view or a folded PAD."""
    if p.is_alias or p.is_folded:
        return NO_KERNEL
    return colours.get(p.device, NO_KERNEL)
