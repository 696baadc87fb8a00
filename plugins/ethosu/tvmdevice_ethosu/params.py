"""The partition kernel's parameter struct, declared once (the build generates ``tvmd_ethos_u_params.h``)."""

from __future__ import annotations

from tvmdevice.plugin import Field, Layout

__all__ = ["MAX_IO", "PARTITION_PARAMS", "LAYOUTS"]

#: Inputs plus outputs a partition may have (Vela's raw output lists each with its region and offset).
MAX_IO = 16

PARTITION_PARAMS = Layout(
    "tvmd_ethos_u_partition_params_t",
    (
        Field("command_stream", "const uint8_t*", doc="Vela's driver payload (COP1 header, command stream)"),
        Field("command_stream_size", "uint32_t", doc="its bytes"),
        Field("num_inputs", "uint32_t", doc="the call's first buffers"),
        Field("read_only", "const uint8_t*", doc="region 0: Vela's weights and bias/scale records"),
        Field("read_only_size", "uint32_t", doc="its bytes"),
        Field("num_outputs", "uint32_t", doc="the call's next buffers"),
        Field("scratch_size", "uint32_t", doc="region 1 (Vela's scratch arena): the scratch buffer"),
        Field("fast_scratch_size", "uint32_t", doc="region 2 (Vela's fast scratch): tvmd_ethosu_fast_scratch's"),
        Field("weight_slots", "uint32_t", doc="int16 values of the functional model's own memory it uses"),
        Field("io_region", "uint32_t", (MAX_IO,), doc="each input's, then each output's region (1 or 2)"),
        Field("io_offset", "uint32_t", (MAX_IO,), doc="its offset in that region"),
        Field("io_size", "uint32_t", (MAX_IO,), doc="its bytes"),
    ),
    doc="One partition as Vela compiled it.  Buffers: inputs, outputs, scratch.",
)

#: Every params struct, in the order the generated header declares them.
LAYOUTS = (PARTITION_PARAMS,)
