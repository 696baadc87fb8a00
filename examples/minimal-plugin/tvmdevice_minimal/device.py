"""The declarations C is generated from: the device struct and the ADD params struct."""

from tvmdevice.plugin import DeviceType, Field, Layout

DEVICE_TYPE = DeviceType("minimal", Layout("tvm_device_minimal_t", (Field("active", "uint32_t"),)),
                         operators=frozenset({"ADD"}), description="example C plugin: one int8 ADD kernel")

_SCALARS = ("input1_offset", "input2_offset", "output_offset", "left_shift", "input1_multiplier", "input1_shift",
            "input2_multiplier", "input2_shift", "output_multiplier", "output_shift", "act_min", "act_max")
ADD_PARAMS = Layout("tvmd_minimal_add_t", (
    *(Field(n, "int32_t", (4,)) for n in ("out_dims", "in1_strides", "in2_strides")),
    *(Field(n, "int32_t") for n in ("size", *_SCALARS)),
))
PARAMS = (ADD_PARAMS,)
