"""ADD and MUL with broadcasting: validation and parameters (TFLM's Prepare).

ADD (CalculateOpDataAdd, int8): both inputs are shifted left by 20 bits,
scaled by ``scale_i / (2 * max_scale)`` and summed; the sum is scaled by
``2 * max_scale / (2**20 * output_scale)``; all three factors must lie in
(0, 1).  MUL: the product of the offset inputs is scaled by
``scale_1 * scale_2 / output_scale``.

Shapes broadcast numpy-style (TFLM's rules), up to 6 dimensions for ADD and
4 for MUL where broadcasting is needed.  Equal shapes and scalar operands are
collapsed to one flat dimension for the C loop.
"""

from __future__ import annotations

import numpy as np

from tvmdevice.aot.ir import Graph, Operator

from . import _common as c

__all__ = ["analyze_elementwise"]

_LEFT_SHIFT = 20  # int8 (15 is int16's)
_MAX_BROADCAST_RANK = {"ADD": 6, "MUL": 4}


def _strides(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> list[int]:
    """Element strides of ``shape`` right-aligned to ``out_shape``, 0 where broadcast."""
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    strides, step = [0] * len(out_shape), 1
    for d in range(len(out_shape) - 1, -1, -1):
        strides[d] = step if padded[d] != 1 or out_shape[d] == 1 else 0
        step *= padded[d]
    return strides


def _layout(op: Operator, s1: tuple[int, ...], s2: tuple[int, ...]) -> dict:
    try:
        out_shape = tuple(int(d) for d in np.broadcast_shapes(s1, s2))
    except ValueError:
        raise c.invalid(op, f"input shapes {list(s1)} and {list(s2)} do not broadcast") from None
    size = c.count(out_shape)
    n1, n2 = c.count(s1), c.count(s2)
    if s1 == s2 or (n1 in (1, size) and n2 in (1, size)):
        # Same layout or a scalar operand: one flat loop.
        return {"out_shape_full": out_shape, "ndim": 1, "size": size, "out_shape": [size],
                "in1_strides": [1 if n1 == size else 0], "in2_strides": [1 if n2 == size else 0]}
    if len(out_shape) > _MAX_BROADCAST_RANK[op.type]:
        raise c.unsupported(op, f"broadcasting is limited to {_MAX_BROADCAST_RANK[op.type]} dimensions")
    return {"out_shape_full": out_shape, "ndim": len(out_shape), "size": size, "out_shape": list(out_shape),
            "in1_strides": _strides(s1, out_shape), "in2_strides": _strides(s2, out_shape)}


def _smaller_than_one(op: Operator, real: float, what: str) -> tuple[int, int]:
    # QuantizeMultiplierSmallerThanOneExp: TFLM aborts outside (0, 1).
    if not 0.0 < real < 1.0:
        raise c.unsupported(op, f"{what} rescale factor {real} must lie in (0, 1) for TFLM's int8 ADD")
    mult, shift = c.multipliers(op, [real])
    return int(mult[0]), int(shift[0])


def analyze_elementwise(graph: Graph, op: Operator) -> c.KernelSpec:
    """Validate an ADD or MUL operator and compute its kernel spec."""
    ins, out = c.io(graph, op, 2, 2)
    in1, in2 = ins
    layout = _layout(op, tuple(int(d) for d in in1.shape), tuple(int(d) for d in in2.shape))
    c.check_output_shape(op, out, layout.pop("out_shape_full"))
    s1, z1 = c.int8_quant(op, in1, "input1")
    s2, z2 = c.int8_quant(op, in2, "input2")
    so, zo = c.int8_quant(op, out, "output")
    act_min, act_max = c.activation_range(op, op.options.get("fused_activation", "NONE"), so, zo)
    fields = dict(layout, input1_offset=-z1, input2_offset=-z2, output_offset=zo, act_min=act_min,
                  act_max=act_max)
    if op.type == "ADD":
        twice_max = 2.0 * max(s1, s2)
        m1, sh1 = _smaller_than_one(op, s1 / twice_max, "input1")
        m2, sh2 = _smaller_than_one(op, s2 / twice_max, "input2")
        mo, sho = _smaller_than_one(op, twice_max / ((1 << _LEFT_SHIFT) * so), "output")
        fields.update(left_shift=_LEFT_SHIFT, input1_multiplier=m1, input1_shift=sh1, input2_multiplier=m2,
                      input2_shift=sh2, output_multiplier=mo, output_shift=sho)
    else:
        mult, shift = c.multipliers(op, [s1 * s2 / so])
        fields.update(output_multiplier=int(mult[0]), output_shift=int(shift[0]))
    kind = "add" if op.type == "ADD" else "mul"
    return c.KernelSpec(kind=kind, name=f"tvmd_cmsis_{kind}_s8", fields=fields,
                        buffers=(c.buffer("input1", in1), c.buffer("input2", in2),
                                 c.buffer("output", out, output=True)))
