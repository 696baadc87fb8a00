"""PAD and PADV2 on the woofles window loader: the height and width borders of an [N, H, W, C] tile.

The window loader is the unit that feeds the MAC array a convolution's input
window: taps outside the image read as the border value (for a convolution,
the input zero point, which then contributes nothing).  A PAD is that loader
writing the bordered tile back to SRAM, so it pads what the loader pads, the
two spatial dimensions: a tensor of rank up to 4 is seen as [N, H, W, C]
(leading 1s), and padding its batch or channel dimension is refused.
"""

from __future__ import annotations

from typing import Any

from tvmdevice.errors import Refusal
from tvmdevice.ir import Operator
from tvmdevice.ops import PadData
from tvmdevice.params import ParamsStruct

from ..params import PAD_PARAMS
from .limits import check_int16

__all__ = ["pack", "LOADER_RANK"]

#: Dimensions the window loader addresses: [N, H, W, C].
LOADER_RANK = 4
_DIMS = ("batch", "height", "width", "channel")


def pack(data: PadData, options: dict[str, Any], op: Operator) -> tuple[str, ParamsStruct]:
    """The kernel name and its ``tvmd_woofles_pad_params_t``.

    :raises Refusal: a rank beyond the loader's 4 dimensions, padding on the batch or channel
        dimension, or int16 tensors without the 16-bit datapath.
    """
    rank = len(data.in_shape)
    if rank > LOADER_RANK:
        raise Refusal(f"rank {rank} exceeds the window loader's {LOADER_RANK} dimensions ([N, H, W, C])")
    lead = LOADER_RANK - rank
    shape = (1,) * lead + data.in_shape
    out_shape = (1,) * lead + data.out_shape
    pads = ((0, 0),) * lead + data.paddings
    for d in (0, 3):
        if pads[d] != (0, 0):
            raise Refusal(f"padding on the {_DIMS[d]} dimension (input dimension {d - lead}); the window loader "
                          f"fills the height and width borders only")
    if data.itemsize == 2:
        check_int16(options, "int16 tensors")
    params = ParamsStruct(PAD_PARAMS, data, batches=shape[0], in_h=shape[1], in_w=shape[2], channels=shape[3],
                          out_h=out_shape[1], out_w=out_shape[2], pad_top=pads[1][0], pad_left=pads[2][0],
                          num_inputs=len(op.inputs))
    return f"tvmd_woofles_pad_s{8 * data.itemsize}", params

