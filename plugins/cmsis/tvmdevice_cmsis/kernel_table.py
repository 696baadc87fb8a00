"""The cmsis-nn kernel table: every kernel, written once.

Each entry ties a TFLite operator to its C kernel ``tvmd_cmsis_<kind>_s8``,
the params struct that kernel takes (a :class:`~tvmdevice.layout.Layout`)
and the prepare step that adds cmsis-nn's limits and packing to the
operator's op data.  The order is the ABI: an entry's
position is its ``TVMD_CMSIS_KIND_*`` value, the ``kind`` tag of its params
struct and its slot in the device's ``call_counts``.  Everything else is
derived from this table: the generated ``tvmd_cmsis_kernels.h`` (enum,
prototypes and the ``TVMD_CMSIS_KERNELS`` X-macro list that builds the
extension's ``tvmd_kernel_t`` table), the device's operator set and the
generic struct fill in :mod:`tvmdevice_cmsis.kernels`.

Pure Python: the build imports it to generate the headers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from tvmdevice.aot.ir import Graph, Operator
from tvmdevice.layout import Layout

from .ops import conv, elementwise, fully_connected, pooling, softmax
from .ops._common import KernelPlan

__all__ = ["Kernel", "KERNELS", "KERNEL_BY_OP", "KERNEL_BY_KIND", "PARAMS_LAYOUTS"]


@dataclass(frozen=True)
class Kernel:
    """One cmsis-nn kernel family.

    :param kind: the family's short name; the C kernel is ``tvmd_cmsis_<kind>_s8``.
    :param op_type: the TFLite operator it runs.
    :param layout: its params struct, filled by member name from the
        operator's op data and the prepare step's values.
    :param prepare: ``prepare(graph, op, op_data) -> KernelPlan``: cmsis-nn's
        limits and packing on top of the op data; none when the op data
        fills the struct alone.
    """

    kind: str
    op_type: str
    layout: Layout
    prepare: Callable[[Graph, Operator, Any], KernelPlan] | None = None

    @property
    def symbol(self) -> str:
        """The C kernel, ``tvmd_cmsis_<kind>_s8``."""
        return f"tvmd_cmsis_{self.kind}_s8"

    @property
    def enum(self) -> str:
        """Its ``tvmd_cmsis_kind_t`` constant."""
        return f"TVMD_CMSIS_KIND_{self.kind.upper()}"

    @property
    def index(self) -> int:
        """Its position in :data:`KERNELS`: the enum value and ``call_counts`` slot."""
        return KERNELS.index(self)


KERNELS: tuple[Kernel, ...] = (
    Kernel("conv", "CONV_2D", conv.CONV_PARAMS, conv.prepare_conv),
    Kernel("depthwise_conv", "DEPTHWISE_CONV_2D", conv.DEPTHWISE_PARAMS, conv.prepare_depthwise),
    Kernel("fully_connected", "FULLY_CONNECTED", fully_connected.PARAMS, fully_connected.prepare),
    Kernel("avg_pool", "AVERAGE_POOL_2D", pooling.PARAMS, pooling.prepare),
    Kernel("max_pool", "MAX_POOL_2D", pooling.PARAMS, pooling.prepare),
    Kernel("softmax", "SOFTMAX", softmax.PARAMS),
    Kernel("add", "ADD", elementwise.PARAMS, elementwise.prepare),
    Kernel("mul", "MUL", elementwise.PARAMS, elementwise.prepare),
)

#: TFLite operator -> its kernel.
KERNEL_BY_OP: dict[str, Kernel] = {k.op_type: k for k in KERNELS}
#: Family name -> kernel.
KERNEL_BY_KIND: dict[str, Kernel] = {k.kind: k for k in KERNELS}
#: Each params struct once, in table order (the generated header declares them).
PARAMS_LAYOUTS: tuple[Layout, ...] = tuple(dict.fromkeys(k.layout for k in KERNELS))
