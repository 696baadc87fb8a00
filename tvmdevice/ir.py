"""The model IR: tensors, quantization, operators, graph — the lowest layer.

Frontends (``tvmdevice.aot.frontend``) build it; the operator layer
(``tvmdevice.ops``) validates it and computes op data from it; placement,
planning and the executor read it.  It is deliberately plain data: no behaviour beyond small
derived properties, so every later stage can be checked against it.

Operator ``type`` strings are TFLite builtin operator names (``"CONV_2D"``).
Operator ``options`` use TFLite's schema field names in snake_case, with enums
decoded to strings:

==================  =========================================================
operator            options
==================  =========================================================
CONV_2D             padding ("SAME"/"VALID"), stride_h, stride_w,
                    dilation_h_factor, dilation_w_factor, fused_activation
DEPTHWISE_CONV_2D   as CONV_2D plus depth_multiplier
FULLY_CONNECTED     fused_activation, keep_num_dims
AVERAGE_POOL_2D,    padding, stride_h, stride_w, filter_height, filter_width,
MAX_POOL_2D         fused_activation
SOFTMAX             beta
ADD, SUB, MUL       fused_activation
CONCATENATION       axis, fused_activation
RESHAPE             new_shape (may be absent; the output shape is authoritative)
MEAN                keep_dims (axes come from the second input tensor)
PAD, PADV2          (paddings, and PADV2's constant_values, come from input tensors)
STRIDED_SLICE       begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                    shrink_axis_mask, offset (begin, end, strides are inputs)
SPLIT, SPLIT_V      num_splits (the axis and sizes are inputs; one output per part)
PACK, UNPACK        values_count / num, axis
SQUEEZE             squeeze_dims (empty: every size-1 dimension)
GATHER              axis, batch_dims
RESIZE_BILINEAR,    align_corners, half_pixel_centers
RESIZE_NEAREST_NEIGHBOR
TRANSPOSE, SLICE,
EXPAND_DIMS,
BROADCAST_TO        (none: perm, begin/size, axis, shape are input tensors)
QUANTIZE,
DEQUANTIZE,
LOGISTIC, TANH      (none)
SUM, REDUCE_MAX     keep_dims (axes come from the second input tensor)
LEAKY_RELU          alpha
ARG_MAX, ARG_MIN    output_type ("INT32"; the axis is the second input)
TRANSPOSE_CONV      padding, stride_h, stride_w, fused_activation
BATCH_MATMUL        adj_x, adj_y, asymmetric_quantize_inputs
MAXIMUM, MINIMUM,
SQUARED_DIFFERENCE,
RELU, RELU6,
HARD_SWISH, PRELU,
LOG_SOFTMAX         (none)
==================  =========================================================

``fused_activation`` is one of "NONE", "RELU", "RELU_N1_TO_1", "RELU6".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Quantization", "Tensor", "Operator", "Graph", "ABSENT"]

#: Index used by TFLite for an omitted optional input (e.g. a missing bias).
ABSENT = -1


@dataclass(frozen=True)
class Quantization:
    """Affine quantization: ``real = scale * (q - zero_point)``.

    :param scale: float32 array, one entry per tensor or per channel.
    :param zero_point: int64 array, same length as ``scale``.
    :param axis: the quantized dimension when per-channel.
    """

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int = 0

    @property
    def per_channel(self) -> bool:
        return self.scale.size > 1


@dataclass
class Tensor:
    """One tensor of the graph; ``data`` is set (read-only) for constants.

    ``is_variable`` marks TFLite's variable tensors: operator state (an LSTM's
    hidden and cell state, an SVDF's activation memory) that no operator
    outputs, that operators read and update in place, and that persists from
    one run to the next (see :meth:`tvmdevice.aot.executor.Executor.reset_state`).
    """

    index: int
    name: str
    shape: tuple[int, ...]
    dtype: np.dtype
    quant: Quantization | None = None
    data: np.ndarray | None = None
    is_variable: bool = False

    @property
    def is_constant(self) -> bool:
        return self.data is not None

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize

    @property
    def reset_value(self) -> int:
        """The value a variable tensor holds before the first run and after a reset: TFLM's
        ResetVariableTensors sets every int8 element to the zero point and every other byte to 0."""
        if np.dtype(self.dtype) == np.int8 and self.quant is not None and self.quant.zero_point.size:
            return int(self.quant.zero_point[0])
        return 0


@dataclass
class Operator:
    """One operator: its TFLite type, tensor indices and decoded options."""

    index: int
    type: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class Graph:
    """A single-subgraph model in execution order."""

    name: str
    tensors: list[Tensor]
    operators: list[Operator]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]

    def tensor(self, index: int) -> Tensor:
        return self.tensors[index]

    def op_inputs(self, op: Operator) -> list[Tensor | None]:
        """The operator's input tensors, ``None`` where an optional one is absent."""
        return [None if i == ABSENT else self.tensors[i] for i in op.inputs]

    def op_outputs(self, op: Operator) -> list[Tensor]:
        return [self.tensors[i] for i in op.outputs]
