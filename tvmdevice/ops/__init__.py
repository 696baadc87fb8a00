"""The operator layer: each operator's TFLM-exact op data, computed once and shared by every device."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OpData"]


@dataclass(frozen=True)
class OpData:
    """What TFLM's Prepare computes for one operator; devices add only their packing and limits.

    :ivar op_index: the operator's index in the graph.
    :ivar op_type: its TFLite type.
    """

    op_index: int
    op_type: str

    @property
    def is_view(self) -> bool:
        """Whether the operator's output aliases its input (RESHAPE and kin): no kernel runs."""
        return False
