# cython: language_level=3, boundscheck=False, wraparound=False
"""woofles kernels for the executor: ``"tvmdevice.kernel"`` capsules and params objects.

Each params class owns one C parameter struct (and the per-channel tables it
points to) built from a validated plan (``tvmdevice_woofles.ops``); its
``capsule`` is a ``"tvmdevice.params"`` capsule for the kernel ABI that keeps
the params object alive for as long as the capsule lives.
"""
from cpython.pycapsule cimport PyCapsule_GetContext, PyCapsule_New, PyCapsule_SetContext
from cpython.ref cimport Py_INCREF, Py_XDECREF, PyObject
from libc.stdint cimport int32_t

import numpy as np

from tvmdevice.kernel_abi cimport TVMD_KERNEL_CAPSULE, TVMD_PARAMS_CAPSULE, tvmd_kernel_t
from tvmdevice_woofles._woofles cimport *

KERNEL_NAMES = (
    "tvmd_woofles_conv2d_s8", "tvmd_woofles_depthwise_conv2d_s8", "tvmd_woofles_fully_connected_s8",
    "tvmd_woofles_avg_pool2d_s8", "tvmd_woofles_max_pool2d_s8", "tvmd_woofles_add_s8",
)


cdef const tvmd_kernel_t* _kernel(str name) except NULL:
    if name == "tvmd_woofles_conv2d_s8":
        return &tvmd_woofles_conv2d_s8_kernel
    if name == "tvmd_woofles_depthwise_conv2d_s8":
        return &tvmd_woofles_depthwise_conv2d_s8_kernel
    if name == "tvmd_woofles_fully_connected_s8":
        return &tvmd_woofles_fully_connected_s8_kernel
    if name == "tvmd_woofles_avg_pool2d_s8":
        return &tvmd_woofles_avg_pool2d_s8_kernel
    if name == "tvmd_woofles_max_pool2d_s8":
        return &tvmd_woofles_max_pool2d_s8_kernel
    if name == "tvmd_woofles_add_s8":
        return &tvmd_woofles_add_s8_kernel
    raise KeyError(f"no woofles kernel named {name!r}; known: {', '.join(KERNEL_NAMES)}")


def kernel_capsule(str name):
    """The ``"tvmdevice.kernel"`` capsule of a kernel, by its C name."""
    # The tvmd_kernel_t is a static const in the extension: no destructor.
    return PyCapsule_New(<void*>_kernel(name), TVMD_KERNEL_CAPSULE, NULL)


cdef void _release_owner(object capsule) noexcept:
    Py_XDECREF(<PyObject*>PyCapsule_GetContext(capsule))


cdef object _params_capsule(object owner, void* params):
    capsule = PyCapsule_New(params, TVMD_PARAMS_CAPSULE, _release_owner)
    PyCapsule_SetContext(capsule, <void*>owner)
    Py_INCREF(owner)  # released by _release_owner when the capsule dies
    return capsule


cdef int32_t[::1] _table(values, Py_ssize_t n, str what) except *:
    table = np.ascontiguousarray(values, dtype=np.int32)
    if table.ndim != 1 or table.shape[0] != n:
        raise ValueError(f"{what} table has shape {table.shape}, expected ({n},)")
    return table


cdef class ConvParams:
    """``tvmd_woofles_conv_params_t`` for CONV_2D / DEPTHWISE_CONV_2D, from an ``ops.conv.ConvPlan``."""

    cdef tvmd_woofles_conv_params_t c
    cdef int32_t[::1] _multiplier
    cdef int32_t[::1] _shift
    cdef readonly str kernel_name
    cdef readonly object plan

    def __cinit__(self, plan):
        self.plan = plan
        self.kernel_name = "tvmd_woofles_depthwise_conv2d_s8" if plan.depthwise else "tvmd_woofles_conv2d_s8"
        self._multiplier = _table(plan.multiplier, plan.out_ch, "multiplier")
        self._shift = _table(plan.shift, plan.out_ch, "shift")
        c = &self.c
        c.batches, c.in_h, c.in_w, c.in_ch = plan.batches, plan.in_h, plan.in_w, plan.in_ch
        c.out_h, c.out_w, c.out_ch = plan.out_h, plan.out_w, plan.out_ch
        c.kernel_h, c.kernel_w = plan.kernel_h, plan.kernel_w
        c.filter_in_ch, c.depth_multiplier = plan.filter_in_ch, plan.depth_multiplier
        c.stride_h, c.stride_w = plan.stride_h, plan.stride_w
        c.dilation_h, c.dilation_w = plan.dilation_h, plan.dilation_w
        c.pad_h, c.pad_w = plan.pad_h, plan.pad_w
        c.input_offset, c.output_offset = plan.input_offset, plan.output_offset
        c.act_min, c.act_max = plan.act_min, plan.act_max
        c.num_inputs = plan.num_inputs
        c.multiplier = &self._multiplier[0]
        c.shift = &self._shift[0]

    @property
    def capsule(self):
        return _params_capsule(self, &self.c)


cdef class FullyConnectedParams:
    """``tvmd_woofles_fc_params_t`` from an ``ops.fully_connected.FullyConnectedPlan``."""

    cdef tvmd_woofles_fc_params_t c
    cdef int32_t[::1] _multiplier
    cdef int32_t[::1] _shift
    cdef readonly str kernel_name
    cdef readonly object plan

    def __cinit__(self, plan):
        self.plan = plan
        self.kernel_name = "tvmd_woofles_fully_connected_s8"
        self._multiplier = _table(plan.multiplier, plan.out_ch, "multiplier")
        self._shift = _table(plan.shift, plan.out_ch, "shift")
        c = &self.c
        c.batches, c.accum_depth, c.out_ch = plan.batches, plan.accum_depth, plan.out_ch
        c.input_offset, c.filter_offset, c.output_offset = plan.input_offset, plan.filter_offset, plan.output_offset
        c.act_min, c.act_max = plan.act_min, plan.act_max
        c.num_inputs = plan.num_inputs
        c.multiplier = &self._multiplier[0]
        c.shift = &self._shift[0]

    @property
    def capsule(self):
        return _params_capsule(self, &self.c)


cdef class PoolParams:
    """``tvmd_woofles_pool_params_t`` from an ``ops.pooling.PoolPlan``."""

    cdef tvmd_woofles_pool_params_t c
    cdef readonly str kernel_name
    cdef readonly object plan

    def __cinit__(self, plan):
        self.plan = plan
        self.kernel_name = "tvmd_woofles_avg_pool2d_s8" if plan.average else "tvmd_woofles_max_pool2d_s8"
        c = &self.c
        c.batches, c.in_h, c.in_w, c.channels = plan.batches, plan.in_h, plan.in_w, plan.channels
        c.out_h, c.out_w = plan.out_h, plan.out_w
        c.kernel_h, c.kernel_w = plan.kernel_h, plan.kernel_w
        c.stride_h, c.stride_w = plan.stride_h, plan.stride_w
        c.pad_h, c.pad_w = plan.pad_h, plan.pad_w
        c.act_min, c.act_max = plan.act_min, plan.act_max

    @property
    def capsule(self):
        return _params_capsule(self, &self.c)


cdef class AddParams:
    """``tvmd_woofles_add_params_t`` from an ``ops.add.AddPlan``."""

    cdef tvmd_woofles_add_params_t c
    cdef readonly str kernel_name
    cdef readonly object plan

    def __cinit__(self, plan):
        cdef int d
        self.plan = plan
        self.kernel_name = "tvmd_woofles_add_s8"
        c = &self.c
        for d in range(4):
            c.out_shape[d] = plan.out_shape[d]
            c.in1_strides[d] = plan.in1_strides[d]
            c.in2_strides[d] = plan.in2_strides[d]
        c.in1_size, c.in2_size = plan.in1_size, plan.in2_size
        c.input1_offset, c.input2_offset, c.output_offset = plan.input1_offset, plan.input2_offset, plan.output_offset
        c.left_shift = plan.left_shift
        c.input1_multiplier, c.input1_shift = plan.input1_multiplier, plan.input1_shift
        c.input2_multiplier, c.input2_shift = plan.input2_multiplier, plan.input2_shift
        c.output_multiplier, c.output_shift = plan.output_multiplier, plan.output_shift
        c.act_min, c.act_max = plan.act_min, plan.act_max

    @property
    def capsule(self):
        return _params_capsule(self, &self.c)


_PARAMS = {
    "CONV_2D": ConvParams,
    "DEPTHWISE_CONV_2D": ConvParams,
    "FULLY_CONNECTED": FullyConnectedParams,
    "AVERAGE_POOL_2D": PoolParams,
    "MAX_POOL_2D": PoolParams,
    "ADD": AddParams,
}


def params_for(str op_type, plan):
    """The params object for a validated plan of an ``op_type`` operator."""
    return _PARAMS[op_type](plan)
