"""The cmsis-nn kernel table and params structs: everything C sees, declared once.

Each :class:`Kernel` ties a TFLite operator to its C kernel
``tvmd_cmsis_<kind>_s8``, the params struct that kernel takes (a
:class:`~tvmdevice.layout.Layout`, filled by member name from the operator's
op data) and the prepare step in :mod:`tvmdevice_cmsis.ops` that adds
cmsis-nn's limits and packing.  The order of :data:`KERNELS` is the ABI: an
entry's position is its ``TVMD_CMSIS_KIND_*`` value, the ``kind`` tag of its
params struct and its slot in the device's ``call_counts``.

Two weight packings (:data:`PACKINGS`), chosen by the ``-mcpu`` target option
(:func:`packing_for`): ``host`` (``-mcpu`` empty: the host running tvmdevice;
int16 pair-interleaved GEMM weights padded to vector width, int16 tap-pair
interleaved depthwise weights) and ``m-profile`` (``-mcpu=cortex-m*``: what CMSIS-NN itself takes: the
int8 filter read in place from the kernel's filter buffer, nothing padded or
copied, integer arithmetic only, one multiplier and shift for per-tensor
quantization, CMSIS-NN's small scratch).  :data:`KERNELS` holds each
operator's ``host`` kernel (the kernels without weights serve both packings);
:data:`M_PROFILE_KERNELS` the ``m-profile`` variants of the weighted ones,
whose ``TVMD_CMSIS_KIND_*`` tags follow :data:`KERNELS`' and which count
their calls in their operator's ``call_counts`` slot.

Everything else is derived from here: the generated headers
(:mod:`tvmdevice_cmsis.headers`: the structs, the kernel enum and
prototypes, the ``TVMD_CMSIS_KERNELS`` X-macro list from which the extension
builds its ``tvmd_kernel_t`` table), the device's operator set and the
generic struct fill of :func:`tvmdevice_cmsis.kernels.prepare`.

Light on purpose (the core's layout module only): the build imports it to
generate the headers and plugin discovery imports it through the device type.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tvmdevice.layout import Field, Layout

from .params_s16 import (
    CONV_S16_PARAMS,
    FULLY_CONNECTED_S16_PARAMS,
    LSTM_PARAMS,
    SOFTMAX_S16_PARAMS,
    SVDF_PARAMS,
    TRANSPOSE_PARAMS,
)

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator

    from .ops._common import KernelPlan

__all__ = ["Kernel", "KERNELS", "M_PROFILE_KERNELS", "ALL_KERNELS", "KERNEL_BY_OP", "KERNEL_BY_KIND",
           "PARAMS_LAYOUTS", "QUANT", "NB", "GEMM_COLS", "GEMV_COLS", "GEMV_DEPTH", "GEMV_PANEL", "MAX_DIMS",
           "PAD_DIMS", "HOST_PACKING", "M_PROFILE_PACKING", "PACKINGS", "M_PROFILE_CPUS", "MCPU_CHOICES", "packing_for",
           "kernel_for"]

# ------------------------------------------------- constants C shares
#: Output-channel block of the depthwise loops; depthwise taps are padded to it (``TVMD_CMSIS_NB``).
NB = 16
#: GEMM output columns are padded to a multiple of this: one AVX-512 vector of int32 (``TVMD_CMSIS_GEMM_COLS``).
GEMM_COLS = 16
#: The batch-1 FULLY_CONNECTED weight panels (``weights_s8``): columns padded to a multiple of
#: ``GEMV_COLS`` (one AVX2 vector of int32), ``GEMV_DEPTH`` consecutive depth values of a column side
#: by side (one int32 lane), at most ``GEMV_PANEL`` columns a panel (``TVMD_CMSIS_GEMV_*``).
GEMV_COLS = 8
GEMV_DEPTH = 4
GEMV_PANEL = 64
#: Highest tensor rank of the ADD/MUL broadcast loop (``TVMD_CMSIS_MAX_DIMS``).
MAX_DIMS = 6

# ----------------------------------------------------------- packings
#: ``-mcpu`` empty: packed for the host running tvmdevice (vector-width GEMM tiles, tap-pair depthwise weights).
HOST_PACKING = "host"
#: ``-mcpu=cortex-m*``: CMSIS-NN's own operands (int8 filter in place, integer only, no padding).
M_PROFILE_PACKING = "m-profile"
PACKINGS: tuple[str, ...] = (HOST_PACKING, M_PROFILE_PACKING)
#: The Cortex-M CPUs ``-mcpu`` accepts (TVM's cmsis-nn target took the same names).
M_PROFILE_CPUS: tuple[str, ...] = ("cortex-m0", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7",
                                   "cortex-m33", "cortex-m55", "cortex-m85")
#: Every value of the ``-mcpu`` option: empty (the host) or a Cortex-M.
MCPU_CHOICES: tuple[str, ...] = ("", *M_PROFILE_CPUS)


def packing_for(mcpu: str) -> str:
    """The weight packing for a ``-mcpu`` value (``""``: the host).

    :raises ValueError: ``mcpu`` is not one of :data:`MCPU_CHOICES` (the
        target parser rejects it first, listing them).
    """
    if mcpu == "":
        return HOST_PACKING
    if mcpu in M_PROFILE_CPUS:
        return M_PROFILE_PACKING
    raise ValueError(f"cmsis-nn: unknown -mcpu={mcpu!r}; use one of {', '.join(M_PROFILE_CPUS)} or leave it empty "
                     f"for the host")


# ---------------------------------------------------- params structs
def _int32(*names: str) -> tuple[Field, ...]:
    return tuple(Field(name, "int32_t") for name in names)


def _kind(enum: str) -> Field:
    return Field("kind", "uint32_t", doc=enum)


#: What every weighted kernel requantizes with (filled from the op data by name).
QUANT = Layout("tvmd_cmsis_quant_t", (
    Field("input_offset", "int32_t", doc="-input zero point"),
    Field("output_offset", "int32_t", doc="output zero point"),
    Field("act_min", "int32_t", doc="fused activation clamp, int8 range"),
    Field("act_max", "int32_t"),
), doc="Quantities every weighted cmsis-nn kernel shares.")

_NUM_INPUTS = Field("num_inputs", "int32_t", doc="2 (no bias slot) or 3 (bias slot, NULL when absent)")
_GEOMETRY = _int32("batches", "in_h", "in_w", "in_ch", "out_h", "out_w", "out_ch")
_WINDOW = _int32("stride_h", "stride_w", "dilation_h", "dilation_w", "pad_h", "pad_w")
_REQUANT = (Field("q", QUANT), Field("macs", "uint64_t", doc="multiply-accumulates of one call"))
_CHANNEL_QUANT = (Field("multiplier", "const int32_t*", doc="[out_ch]; equal entries when per-tensor"),
                  Field("shift", "const int32_t*", doc="[out_ch]"))

#: The int8 VNNI GEMM's operands (ops/_common.py: vnni_packing), packed beside the int16 ones only when the
#: host has a VNNI level or the build is emulated; NULL otherwise (the kernel then runs the int16 GEMM).
_VNNI = (
    Field("weights_vnni", "const int8_t*", doc="[groups][k4][ldw][4], k4 = (k + 3) / 4 (CONV_2D: see "
          "vnni_segment_quads): four reduction steps of a column side by side (one vpdpbusd), zero padded; NULL "
          "when not packed"),
    Field("vnni_correction", "const int32_t*", doc="[groups][ldw]: (input_offset - 128) x the column's weight sum, "
          "the sums' start (the GEMM multiplies input + 128); FULLY_CONNECTED with weights_s8: the same for the "
          "batch-1 GEMV's panels, [out_ch rounded up to TVMD_CMSIS_GEMV_COLS], without weights_vnni; NULL when "
          "not packed"),
)

CONV_PARAMS = Layout("tvmd_cmsis_conv_params_t", (
    _kind("TVMD_CMSIS_KIND_CONV"), _NUM_INPUTS, *_GEOMETRY, *_int32("filter_h", "filter_w", "filter_in_ch", "groups"),
    *_WINDOW,
    Field("k", "int32_t", doc="filter_h * filter_w * filter_in_ch"),
    Field("k_pairs", "int32_t", doc="(k + 1) / 2: im2col rows hold 2 * k_pairs values"),
    Field("ldw", "int32_t", doc="out_ch / groups rounded up to TVMD_CMSIS_GEMM_COLS"),
    *_REQUANT,
    Field("weights", "const int16_t*", doc="[groups][k_pairs][ldw][2]: pair-interleaved, zero padded"),
    *_CHANNEL_QUANT,
    *_VNNI,
    Field("vnni_segment_quads", "int32_t", doc="0: weights_vnni's k4 is (k + 3) / 4 (im2col rows); else each "
          "filter row's filter_w * filter_in_ch steps padded to this many quads, k4 = filter_h x it (the rows are "
          "read in place from the bordered image)"),
), doc="CONV_2D, NHWC input, OHWI filter (grouped when filter_in_ch < in_ch).")

DEPTHWISE_PARAMS = Layout("tvmd_cmsis_depthwise_conv_params_t", (
    _kind("TVMD_CMSIS_KIND_DEPTHWISE_CONV"), _NUM_INPUTS, *_GEOMETRY,
    *_int32("depth_multiplier", "filter_h", "filter_w"),
    *_WINDOW,
    Field("cp", "int32_t", doc="out_ch rounded up to TVMD_CMSIS_NB"),
    *_REQUANT,
    Field("weights", "const int16_t*", doc="[tap pairs][cp][2]: taps 2p and 2p + 1 side by side, zero padded"),
    *_CHANNEL_QUANT,
), doc="DEPTHWISE_CONV_2D, NHWC input, [1, KH, KW, in_ch * depth_multiplier] filter.")

FULLY_CONNECTED_PARAMS = Layout("tvmd_cmsis_fully_connected_params_t", (
    _kind("TVMD_CMSIS_KIND_FULLY_CONNECTED"), _NUM_INPUTS, *_int32("batches", "accum_depth", "out_ch"),
    Field("k_pairs", "int32_t", doc="(accum_depth + 1) / 2"),
    Field("ldw", "int32_t", doc="out_ch rounded up to TVMD_CMSIS_GEMM_COLS"),
    *_REQUANT,
    Field("weights", "const int16_t*", doc="[k_pairs][ldw][2]: weight + weights offset, pair-interleaved, zero "
          "padded; NULL when weights_s8 is set"),
    Field("depth_s8", "int32_t", doc="accum_depth rounded up to TVMD_CMSIS_GEMV_DEPTH with weights_s8, else 0"),
    Field("weights_s8", "const int8_t*", doc="batch 1 with every weight + weights offset in [-127, 127]: int8 "
          "panels of TVMD_CMSIS_GEMV_PANEL columns (the last one narrower), each [depth_s8 / 4][columns][4], "
          "columns padded to TVMD_CMSIS_GEMV_COLS, zero padded; else NULL"),
    Field("offset_sums", "const int32_t*", doc="with weights_s8, [out_ch rounded up to TVMD_CMSIS_GEMV_COLS]: "
          "input_offset times the column's weight sum, the input offset's share of every sum (the kernel "
          "multiplies the raw input), zero padded; else NULL"),
    *_CHANNEL_QUANT,
    *_VNNI,
), doc="FULLY_CONNECTED, [batches, accum_depth] x [out_ch, accum_depth]^T.")

_M_QUANT = (
    Field("per_channel", "int32_t", doc="1: multiplier and shift hold out_ch entries; 0: one entry for every channel"),
    *_REQUANT,
    Field("multiplier", "const int32_t*", doc="[out_ch], or [1] when per_channel is 0"),
    Field("shift", "const int8_t*", doc="[out_ch], or [1] when per_channel is 0 (-31..30: int8 saves flash)"),
)

CONV_M_PARAMS = Layout("tvmd_cmsis_conv_m_params_t", (
    _kind("TVMD_CMSIS_KIND_CONV_M"), _NUM_INPUTS, *_GEOMETRY, *_int32("filter_h", "filter_w", "filter_in_ch", "groups"),
    *_WINDOW,
    Field("k", "int32_t", doc="filter_h * filter_w * filter_in_ch: one im2col column"),
    *_M_QUANT,
), doc="CONV_2D, M-profile packing: the OHWI int8 filter read from the filter buffer; scratch two int16 columns.")

DEPTHWISE_M_PARAMS = Layout("tvmd_cmsis_depthwise_conv_m_params_t", (
    _kind("TVMD_CMSIS_KIND_DEPTHWISE_CONV_M"), _NUM_INPUTS, *_GEOMETRY,
    *_int32("depth_multiplier", "filter_h", "filter_w"), *_WINDOW, *_M_QUANT,
), doc="DEPTHWISE_CONV_2D, M-profile packing: the [1, KH, KW, out_ch] int8 filter read in place; no scratch.")

FULLY_CONNECTED_M_PARAMS = Layout("tvmd_cmsis_fully_connected_m_params_t", (
    _kind("TVMD_CMSIS_KIND_FULLY_CONNECTED_M"), _NUM_INPUTS, *_int32("batches", "accum_depth", "out_ch"),
    Field("filter_offset", "int32_t", doc="-weights zero point (0 when per-channel)"),
    *_M_QUANT,
), doc="FULLY_CONNECTED, M-profile packing: the [out_ch, accum_depth] int8 weights read in place; no scratch.")

POOL_PARAMS = Layout("tvmd_cmsis_pool_params_t", (
    _kind("TVMD_CMSIS_KIND_AVG_POOL or TVMD_CMSIS_KIND_MAX_POOL"),
    *_int32("batches", "in_h", "in_w", "channels", "out_h", "out_w", "filter_h", "filter_w", "stride_h", "stride_w",
            "pad_h", "pad_w", "act_min", "act_max"),
), doc="AVERAGE_POOL_2D and MAX_POOL_2D (kind tells which).")

SOFTMAX_PARAMS = Layout("tvmd_cmsis_softmax_params_t", (
    _kind("TVMD_CMSIS_KIND_SOFTMAX"), *_int32("rows", "depth", "input_multiplier", "input_left_shift", "diff_min"),
), doc="SOFTMAX of int8 along the last axis (TFLM's gemmlowp path): int8 output, or int16 for int8->int16.")

ELEMENTWISE_PARAMS = Layout("tvmd_cmsis_elementwise_params_t", (
    _kind("TVMD_CMSIS_KIND_ADD, TVMD_CMSIS_KIND_SUB or TVMD_CMSIS_KIND_MUL"),
    Field("ndim", "int32_t", doc="dimensions the loop walks (<= TVMD_CMSIS_MAX_DIMS)"),
    Field("size", "int32_t", doc="output elements"),
    Field("out_shape", "int32_t", (MAX_DIMS,), doc="output shape, 1 past ndim"),
    Field("in1_strides", "int32_t", (MAX_DIMS,), doc="element strides, 0 along a broadcast dimension"),
    Field("in2_strides", "int32_t", (MAX_DIMS,)),
    *_int32("input1_offset", "input2_offset", "output_offset"),
    Field("left_shift", "int32_t", doc="ADD and SUB: 20 for int8"),
    *_int32("input1_multiplier", "input1_shift", "input2_multiplier", "input2_shift", "output_multiplier",
            "output_shift", "act_min", "act_max"),
), doc="ADD, SUB and MUL with broadcasting; shapes right-aligned to ndim dimensions.")

#: Rank of CMSIS-NN's arm_pad_s8 (cmsis_nn_dims: N, H, W, C).
PAD_DIMS = 4

PAD_PARAMS = Layout("tvmd_cmsis_pad_params_t", (
    _kind("TVMD_CMSIS_KIND_PAD or TVMD_CMSIS_KIND_PADV2"),
    Field("num_inputs", "int32_t", doc="2 (PAD) or 3 (PADV2); the output is buffers[num_inputs]"),
    Field("in_shape", "int32_t", (PAD_DIMS,), doc="input N, H, W, C (right-aligned, 1 before)"),
    Field("before", "int32_t", (PAD_DIMS,), doc="padding before each dimension (arm_pad_s8's pre_pad)"),
    Field("after", "int32_t", (PAD_DIMS,), doc="padding after each dimension (post_pad)"),
    Field("pad_value", "int32_t", doc="the fill: PADV2's constant_values, else the output zero point"),
    Field("itemsize", "int32_t", doc="bytes per value: 1 (int8) or 2 (int16)"),
), doc="PAD and PADV2, int8 and int16, up to 4 dimensions (CMSIS-NN's arm_pad_s8, and its int16 twin).")


MINMAX_PARAMS = Layout("tvmd_cmsis_minmax_params_t", (
    _kind("TVMD_CMSIS_KIND_MAXIMUM or TVMD_CMSIS_KIND_MINIMUM"),
    Field("size", "int32_t", doc="output elements"),
    Field("dims", "int32_t", (4,), doc="output shape [n, h, w, c] (rank <= 4, 1 before), arm_maximum_s8's dims"),
    Field("in1_dims", "int32_t", (4,), doc="input1 shape right-aligned to 4 (a 1 broadcasts)"),
    Field("in2_dims", "int32_t", (4,), doc="input2 shape right-aligned to 4"),
), doc="MAXIMUM and MINIMUM, int8 raw values (arm_maximum_s8 / arm_minimum_s8), broadcasting over 4 dimensions.")

TRANSPOSE_CONV_PARAMS = Layout("tvmd_cmsis_transpose_conv_params_t", (
    _kind("TVMD_CMSIS_KIND_TRANSPOSE_CONV"),
    Field("num_inputs", "int32_t", doc="3 (no bias slot) or 4 (bias slot, NULL when absent)"),
    *_GEOMETRY, *_int32("filter_h", "filter_w", "stride_h", "stride_w", "pad_h", "pad_w"),
    *_REQUANT, *_CHANNEL_QUANT,
), doc="TRANSPOSE_CONV (arm_transpose_conv_s8): OHWI int8 filter read in place, an int32 scratch image.")

BATCH_MATMUL_PARAMS = Layout("tvmd_cmsis_batch_matmul_params_t", (
    _kind("TVMD_CMSIS_KIND_BATCH_MATMUL"),
    Field("out_batch", "int32_t", (3,), doc="output batch dimensions right-aligned to 3"),
    Field("lhs_batch_strides", "int32_t", (3,), doc="elements per batch step, 0 along a broadcast dimension"),
    Field("rhs_batch_strides", "int32_t", (3,)),
    *_int32("rows", "cols", "depth", "adj_x", "adj_y", "lhs_offset", "rhs_offset", "output_offset",
            "output_multiplier", "output_shift"),
    Field("macs", "uint64_t", doc="multiply-accumulates of one call"),
), doc="BATCH_MATMUL (arm_batch_matmul_s8): int8 operands read in place, zero points folded into row/column sums.")


# ------------------------------------------------------------ kernels
@dataclass(frozen=True)
class Kernel:
    """One cmsis-nn kernel family.

    :param kind: the kernel's short name; the C kernel is ``tvmd_cmsis_<kind><suffix>``.
    :param op_type: the TFLite operator it runs.
    :param layout: its params struct.
    :param prepare: ``"<module>.<function>"`` in :mod:`tvmdevice_cmsis.ops`:
        ``function(graph, op, op_data) -> KernelPlan`` adds cmsis-nn's limits
        and packing to the op data (imported on first use, so this table
        stays light); ``None`` when the op data fills the struct alone.
    :param packing: the packing it takes (:data:`PACKINGS`), ``None`` when it
        takes the operands as they are (serves both).
    :param variant: the op data variant it runs (:attr:`tvmdevice.ops.OpData.variant`:
        ``"int16"``, ``"int8->int16"``), ``""`` for the operator's int8 form.
    :param suffix: the C name's ending after the kind: ``"_s8"`` for the int8
        kernels; ``""`` where the kind names its types (``conv_s16``).
    """

    kind: str
    op_type: str
    layout: Layout
    prepare: str | None = None
    packing: str | None = HOST_PACKING
    variant: str = ""
    suffix: str = "_s8"

    @property
    def key(self) -> str:
        """The kernel key it runs (:func:`tvmdevice.ops.kernel_key`): ``"ADD"``, ``"ADD:int16"``..."""
        return f"{self.op_type}:{self.variant}" if self.variant else self.op_type

    @property
    def symbol(self) -> str:
        """The C kernel, ``tvmd_cmsis_<kind><suffix>``."""
        return f"tvmd_cmsis_{self.kind}{self.suffix}"

    @property
    def enum(self) -> str:
        """Its ``tvmd_cmsis_kind_t`` constant."""
        return f"TVMD_CMSIS_KIND_{self.kind.upper()}"

    @property
    def index(self) -> int:
        """Its position in :data:`ALL_KERNELS`: its enum value and params ``kind`` tag."""
        return ALL_KERNELS.index(self)

    @property
    def slot(self) -> int:
        """Its ``call_counts`` slot: the index of its kernel key's kernel in :data:`KERNELS`."""
        return KERNEL_BY_OP[self.key].index

    def prepare_step(self) -> "Callable[[Graph, Operator, Any], KernelPlan] | None":
        """The prepare function named by :attr:`prepare`."""
        if self.prepare is None:
            return None
        module, function = self.prepare.rsplit(".", 1)
        return getattr(importlib.import_module(f"{__package__}.ops.{module}"), function)


KERNELS: tuple[Kernel, ...] = (
    Kernel("conv", "CONV_2D", CONV_PARAMS, "conv.prepare_conv"),
    Kernel("depthwise_conv", "DEPTHWISE_CONV_2D", DEPTHWISE_PARAMS, "conv.prepare_depthwise"),
    Kernel("fully_connected", "FULLY_CONNECTED", FULLY_CONNECTED_PARAMS, "fully_connected.prepare"),
    Kernel("avg_pool", "AVERAGE_POOL_2D", POOL_PARAMS, "pooling.prepare", packing=None),
    Kernel("max_pool", "MAX_POOL_2D", POOL_PARAMS, "pooling.prepare", packing=None),
    Kernel("softmax", "SOFTMAX", SOFTMAX_PARAMS, packing=None),
    Kernel("add", "ADD", ELEMENTWISE_PARAMS, "elementwise.prepare", packing=None),
    Kernel("mul", "MUL", ELEMENTWISE_PARAMS, "elementwise.prepare", packing=None),
    Kernel("pad", "PAD", PAD_PARAMS, "pad.prepare", packing=None, suffix=""),
    Kernel("padv2", "PADV2", PAD_PARAMS, "pad.prepare", packing=None, suffix=""),
    # arithmetic (ops/arith.py): operands read in place, so one kernel serves both packings
    Kernel("maximum", "MAXIMUM", MINMAX_PARAMS, "arith.prepare_minmax", packing=None),
    Kernel("minimum", "MINIMUM", MINMAX_PARAMS, "arith.prepare_minmax", packing=None),
    Kernel("transpose_conv", "TRANSPOSE_CONV", TRANSPOSE_CONV_PARAMS, "arith.prepare_transpose_conv", packing=None),
    Kernel("batch_matmul", "BATCH_MATMUL", BATCH_MATMUL_PARAMS, "arith.prepare_batch_matmul", packing=None),
    # CMSIS-NN's int16x8 kernels (ops/int16.py), the operands read in place
    *(Kernel(kind, op_type, layout, prepare, packing=None, variant=variant, suffix="") for kind, op_type, layout,
      prepare, variant in (
        ("conv_s16", "CONV_2D", CONV_S16_PARAMS, "int16.prepare_conv", "int16"),
        ("depthwise_conv_s16", "DEPTHWISE_CONV_2D", CONV_S16_PARAMS, "int16.prepare_conv", "int16"),
        ("fully_connected_s16", "FULLY_CONNECTED", FULLY_CONNECTED_S16_PARAMS, "int16.prepare_fully_connected",
         "int16"),
        ("add_s16", "ADD", ELEMENTWISE_PARAMS, "elementwise.prepare", "int16"),
        ("mul_s16", "MUL", ELEMENTWISE_PARAMS, "elementwise.prepare", "int16"),
        ("avg_pool_s16", "AVERAGE_POOL_2D", POOL_PARAMS, "pooling.prepare", "int16"),
        ("max_pool_s16", "MAX_POOL_2D", POOL_PARAMS, "pooling.prepare", "int16"),
        ("softmax_s8_s16", "SOFTMAX", SOFTMAX_PARAMS, None, "int8->int16"),
        ("softmax_s16", "SOFTMAX", SOFTMAX_S16_PARAMS, None, "int16"),
    )),
    Kernel("transpose", "TRANSPOSE", TRANSPOSE_PARAMS, "movement.prepare_transpose", packing=None, suffix=""),
    Kernel("svdf", "SVDF", SVDF_PARAMS, "recurrent.prepare_svdf", packing=None),
    Kernel("lstm_unidirectional", "UNIDIRECTIONAL_SEQUENCE_LSTM", LSTM_PARAMS, "recurrent.prepare_lstm",
           packing=None, suffix=""),
    # SUB int8, ADD's requantized walk with input 2 subtracted (CMSIS-NN has no SUB)
    Kernel("sub", "SUB", ELEMENTWISE_PARAMS, "elementwise.prepare", packing=None),
)
#: The ``m-profile`` variants of the weighted kernels (tags after :data:`KERNELS`').
M_PROFILE_KERNELS: tuple[Kernel, ...] = (
    Kernel("conv_m", "CONV_2D", CONV_M_PARAMS, "conv.prepare_conv_m", M_PROFILE_PACKING),
    Kernel("depthwise_conv_m", "DEPTHWISE_CONV_2D", DEPTHWISE_M_PARAMS, "conv.prepare_depthwise_m",
           M_PROFILE_PACKING),
    Kernel("fully_connected_m", "FULLY_CONNECTED", FULLY_CONNECTED_M_PARAMS, "fully_connected.prepare_m",
           M_PROFILE_PACKING),
)

#: Every compiled kernel, in tag order: the extension's kernel table.
ALL_KERNELS: tuple[Kernel, ...] = KERNELS + M_PROFILE_KERNELS

#: Kernel key (``"ADD"``, ``"ADD:int16"``) -> its kernel in :data:`KERNELS` (its ``call_counts`` slot).
KERNEL_BY_OP: dict[str, Kernel] = {k.key: k for k in KERNELS}
#: Kernel name -> kernel, every packing.
KERNEL_BY_KIND: dict[str, Kernel] = {k.kind: k for k in ALL_KERNELS}
_M_PROFILE_BY_OP: dict[str, Kernel] = {k.key: k for k in M_PROFILE_KERNELS}
#: Each params struct once, in table order (the generated header declares them, nested ones first).
PARAMS_LAYOUTS: tuple[Layout, ...] = tuple(dict.fromkeys(k.layout for k in ALL_KERNELS))


def kernel_for(key: str, packing: str) -> Kernel | None:
    """The kernel that runs kernel key ``key`` (:func:`tvmdevice.ops.kernel_key`; an int8
    operator's key is its type) with ``packing``, ``None`` when there is none."""
    if packing == M_PROFILE_PACKING and key in _M_PROFILE_BY_OP:
        return _M_PROFILE_BY_OP[key]
    return KERNEL_BY_OP.get(key)
