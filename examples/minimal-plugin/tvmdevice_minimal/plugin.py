"""The hooks: C lifecycle, default host memory, one ADD kernel fed by the core's op data."""

from tvmdevice.plugin import CLifecycle, DeviceAttrKind, PreparedCall, hookimpl

from .device import ADD_PARAMS, DEVICE_TYPE

#: The six lifecycle hooks: the C functions of the extension's table, registered with this module.
lifecycle = CLifecycle("tvmdevice_minimal._ext:LIFECYCLE", DEVICE_TYPE.name)


@hookimpl
def tvmdevice_device_types():
    return [DEVICE_TYPE]


@hookimpl
def tvmdevice_get_attr(device, kind):
    return 1 if kind == DeviceAttrKind.kExist else None


@hookimpl
def tvmdevice_prepare_operator(op_data):
    from tvmdevice.plugin import ParamsStruct

    from ._ext import ADD_KERNEL

    out_dims, in1_strides, in2_strides = op_data.broadcast_strides(4)
    params = ParamsStruct(ADD_PARAMS, op_data, out_dims=out_dims, in1_strides=in1_strides,
                          in2_strides=in2_strides)
    return PreparedCall("minimal_add_s8", ADD_KERNEL, params)
