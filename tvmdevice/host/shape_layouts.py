"""Params structs and kernels of the host's shape and data-movement operators.

Merged into :data:`tvmdevice.host.kernel_table.KERNELS` (which owns the
order); light on purpose, like the kernel table: the build imports it.
Every kernel here moves bytes (``itemsize`` per element), so one kernel
serves int8 and int16.
"""

from __future__ import annotations

from ..layout import Field, Layout

__all__ = ["COPY_DIMS", "SHAPE_PAD_DIMS", "CONSTANTS", "SHAPE_KERNELS", "STRIDED_COPY_PARAMS", "SPLIT_PARAMS",
           "JOIN_PARAMS", "PAD_ANY_PARAMS", "GATHER_PARAMS", "RESIZE_PARAMS", "SHAPE_OPERATORS"]

#: Rank of the strided copy loop (TFLM's TRANSPOSE takes 6 dimensions).
COPY_DIMS = 6
#: Rank of the PADV2 / int16 PAD loop (TFLM's PadParams hold 5 dimensions).
SHAPE_PAD_DIMS = 5
#: Macro name -> value, emitted in ``tvmd_c_kernels.h``.
CONSTANTS = {"TVMD_C_COPY_DIMS": COPY_DIMS, "TVMD_C_SHAPE_PAD_DIMS": SHAPE_PAD_DIMS}

_ITEMSIZE = Field("itemsize", "int32_t", doc="bytes per element: 1 (int8) or 2 (int16)")

STRIDED_COPY_PARAMS = Layout("tvmd_c_strided_copy_params_t", (
    Field("num_inputs", "int32_t", doc="the operator's inputs; the output is buffers[num_inputs]"),
    Field("out_shape", "int32_t", (COPY_DIMS,), doc="output shape right-aligned to TVMD_C_COPY_DIMS, 1 before"),
    Field("in_strides", "int32_t", (COPY_DIMS,), doc="input element step per output dimension (0: repeat)"),
    Field("offset", "int32_t", doc="input element of output element 0"),
    _ITEMSIZE,
), doc="TRANSPOSE, SLICE, STRIDED_SLICE, BROADCAST_TO: out[i] = in[offset + sum(i[d] * in_strides[d])].")

SPLIT_PARAMS = Layout("tvmd_c_split_params_t", (
    Field("num_inputs", "int32_t", doc="the operator's inputs; outputs follow them in buffers"),
    Field("input_index", "int32_t", doc="the data input's position among the inputs"),
    Field("outputs_count", "int32_t"),
    Field("outer_size", "int32_t", doc="blocks of the input"),
    Field("copy_bytes", "const int32_t*", doc="[outputs_count] bytes per block of each output"),
), doc="SPLIT, SPLIT_V, UNPACK: each input block is one block per output, in output order.")

JOIN_PARAMS = Layout("tvmd_c_join_params_t", (
    Field("inputs_count", "int32_t"),
    Field("outer_size", "int32_t", doc="blocks of the output"),
    Field("copy_bytes", "const int32_t*", doc="[inputs_count] bytes per block of each input"),
), doc="PACK and int16 CONCATENATION: each output block is one block per input, in input order.")

PAD_ANY_PARAMS = Layout("tvmd_c_pad_any_params_t", (
    Field("num_inputs", "int32_t", doc="2 (PAD) or 3 (PADV2); the output is buffers[num_inputs]"),
    Field("in_shape", "int32_t", (SHAPE_PAD_DIMS,), doc="right-aligned to TVMD_C_SHAPE_PAD_DIMS, 1 before"),
    Field("out_shape", "int32_t", (SHAPE_PAD_DIMS,)),
    Field("before", "int32_t", (SHAPE_PAD_DIMS,), doc="leading padding per dimension"),
    Field("pad_value", "int32_t", doc="the fill value, in the element type"),
    _ITEMSIZE,
), doc="PADV2 (int8, int16) and int16 PAD.")

GATHER_PARAMS = Layout("tvmd_c_gather_params_t", (
    Field("batch_size", "int32_t"), Field("outer_size", "int32_t"), Field("axis_size", "int32_t"),
    Field("coord_size", "int32_t"), Field("inner_size", "int32_t", doc="elements copied per coordinate"),
), doc="GATHER, int8 data, int32 positions (an out-of-range one fails the call, as in TFLM).")

RESIZE_PARAMS = Layout("tvmd_c_resize_params_t", (
    Field("batches", "int32_t"), Field("in_h", "int32_t"), Field("in_w", "int32_t"), Field("channels", "int32_t"),
    Field("out_h", "int32_t"), Field("out_w", "int32_t"), _ITEMSIZE,
    Field("rows", "const int32_t*", doc="nearest: [out_h] input rows; bilinear: [out_h][y0, y1, y in Q10]"),
    Field("cols", "const int32_t*", doc="nearest: [out_w] input columns; bilinear: [out_w][x0, x1, x in Q10]"),
), doc="RESIZE_NEAREST_NEIGHBOR (int8, int16) and RESIZE_BILINEAR (int8), NHWC.")

#: (kernel name, op types, params, source file) of each kernel, in table order.
SHAPE_KERNELS: tuple[tuple[str, tuple[str, ...], Layout, str], ...] = (
    ("strided_copy", ("TRANSPOSE", "SLICE", "STRIDED_SLICE", "BROADCAST_TO"), STRIDED_COPY_PARAMS, "movement.c"),
    ("split", ("SPLIT", "SPLIT_V", "UNPACK"), SPLIT_PARAMS, "movement.c"),
    ("join", ("PACK", "CONCATENATION"), JOIN_PARAMS, "movement.c"),
    ("pad_any", ("PAD", "PADV2"), PAD_ANY_PARAMS, "movement.c"),
    ("gather_s8", ("GATHER",), GATHER_PARAMS, "gather.c"),
    ("resize_nearest", ("RESIZE_NEAREST_NEIGHBOR",), RESIZE_PARAMS, "resize.c"),
    ("resize_bilinear_s8", ("RESIZE_BILINEAR",), RESIZE_PARAMS, "resize.c"),
)

#: Operator types these kernels run (SQUEEZE and EXPAND_DIMS are views; a
#: constant's is copied by the RESHAPE kernel).
SHAPE_OPERATORS: frozenset[str] = frozenset(
    {t for _, types, _, _ in SHAPE_KERNELS for t in types} | {"SQUEEZE", "EXPAND_DIMS"})
