# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Cython bindings of the cmsis-nn C kernels and device lifecycle.

* ``kernel_capsule(kind)``: the ``"tvmdevice.kernel"`` capsule of a kernel
  family, pointing at a static ``tvmd_kernel_t``.
* ``make_params(spec)``: the params object for a validated
  :class:`tvmdevice_cmsis.ops.KernelSpec`; its ``capsule`` attribute is the
  ``"tvmdevice.params"`` capsule of the kernel's flat C struct, and the
  capsule keeps the object (and the weight arrays the struct points into)
  alive.
* ``Sequence``: a list of prepared calls run back to back from C, with no
  Python between kernels.
* ``device_*``: the ``TVMDeviceCmsisNn<Hook>`` lifecycle functions.

Nothing here validates shapes: ``tvmdevice_cmsis.ops`` did that before a
spec reaches ``make_params``.
"""
from cpython.pycapsule cimport PyCapsule_GetContext, PyCapsule_New, PyCapsule_SetContext
from cpython.ref cimport Py_DECREF, Py_INCREF
from libc.stdint cimport int8_t, int16_t, int32_t, uint32_t, uint64_t, uintptr_t

from tvmdevice.kernel_abi cimport TVMD_PARAMS_CAPSULE, tvmd_kernel_t

cdef extern from "tvmd_cmsis_nn.h" nogil:
    enum: TVMD_CMSIS_MAX_DIMS
    enum: TVMD_CMSIS_API_VERSION
    ctypedef struct tvmd_cmsis_quant_t:
        int32_t input_offset, output_offset, act_min, act_max
    ctypedef struct tvmd_cmsis_conv_params_t:
        uint32_t kind
        int32_t num_inputs
        int32_t batches, in_h, in_w, in_ch, out_h, out_w, out_ch
        int32_t filter_h, filter_w, filter_in_ch, groups
        int32_t stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w
        int32_t k, k_pairs, ldw
        tvmd_cmsis_quant_t q
        uint64_t macs
        const int16_t* weights
        const int32_t* multiplier
        const int32_t* shift
    ctypedef struct tvmd_cmsis_depthwise_conv_params_t:
        uint32_t kind
        int32_t num_inputs
        int32_t batches, in_h, in_w, in_ch, out_h, out_w, out_ch, depth_multiplier
        int32_t filter_h, filter_w
        int32_t stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w
        int32_t cp
        tvmd_cmsis_quant_t q
        uint64_t macs
        const float* weights
        const int32_t* multiplier
        const int32_t* shift
    ctypedef struct tvmd_cmsis_fully_connected_params_t:
        uint32_t kind
        int32_t num_inputs
        int32_t batches, accum_depth, out_ch, k_pairs, ldw
        tvmd_cmsis_quant_t q
        uint64_t macs
        const int16_t* weights
        const int32_t* multiplier
        const int32_t* shift
    ctypedef struct tvmd_cmsis_pool_params_t:
        uint32_t kind
        int32_t batches, in_h, in_w, channels, out_h, out_w
        int32_t filter_h, filter_w, stride_h, stride_w, pad_h, pad_w
        int32_t act_min, act_max
    ctypedef struct tvmd_cmsis_softmax_params_t:
        uint32_t kind
        int32_t rows, depth, input_multiplier, input_left_shift, diff_min
    ctypedef struct tvmd_cmsis_elementwise_params_t:
        uint32_t kind
        int32_t ndim, size
        int32_t out_shape[6]
        int32_t in1_strides[6]
        int32_t in2_strides[6]
        int32_t input1_offset, input2_offset, output_offset, left_shift
        int32_t input1_multiplier, input1_shift, input2_multiplier, input2_shift
        int32_t output_multiplier, output_shift, act_min, act_max

    size_t tvmd_cmsis_conv_s8_get_buffer_size(const tvmd_cmsis_conv_params_t* p)
    size_t tvmd_cmsis_depthwise_conv_s8_get_buffer_size(const tvmd_cmsis_depthwise_conv_params_t* p)
    size_t tvmd_cmsis_fully_connected_s8_get_buffer_size(const tvmd_cmsis_fully_connected_params_t* p)
    size_t tvmd_cmsis_avg_pool_s8_get_buffer_size(const tvmd_cmsis_pool_params_t* p)
    size_t tvmd_cmsis_max_pool_s8_get_buffer_size(const tvmd_cmsis_pool_params_t* p)
    size_t tvmd_cmsis_softmax_s8_get_buffer_size(const tvmd_cmsis_softmax_params_t* p)
    size_t tvmd_cmsis_add_s8_get_buffer_size(const tvmd_cmsis_elementwise_params_t* p)
    size_t tvmd_cmsis_mul_s8_get_buffer_size(const tvmd_cmsis_elementwise_params_t* p)
    int tvmd_cmsis_set_simd(int enabled)
    void tvmd_cmsis_requantize_s8(const int32_t* acc, const int32_t* multiplier, const int32_t* shift,
                                  int32_t n, const tvmd_cmsis_quant_t* q, int8_t* out)

cdef extern from "tvm_device_cmsis_nn.h" nogil:
    ctypedef struct tvm_device_cmsis_nn_t:
        pass
    int32_t TVMDeviceCmsisNnInit(tvm_device_cmsis_nn_t* device)
    int32_t TVMDeviceCmsisNnOpen(tvm_device_cmsis_nn_t* device)
    int32_t TVMDeviceCmsisNnActivate(tvm_device_cmsis_nn_t* device)
    int32_t TVMDeviceCmsisNnDeactivate(tvm_device_cmsis_nn_t* device)
    int32_t TVMDeviceCmsisNnClose(tvm_device_cmsis_nn_t* device)
    int32_t TVMDeviceCmsisNnDestroy(tvm_device_cmsis_nn_t* device)

cdef extern from "tvmdevice/quant.h" nogil:
    int32_t tvmd_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int shift)

# The kernel table: one static tvmd_kernel_t per family, in KERNEL_KINDS order.
cdef extern from *:
    """
    #include "tvmdevice/kernel_abi.h"
    #include "tvmd_cmsis_nn.h"
    static const tvmd_kernel_t tvmd_cmsis_kernel_table[TVMD_CMSIS_NUM_KINDS] = {
        TVMD_KERNEL_INIT("tvmd_cmsis_conv_s8", tvmd_cmsis_conv_s8),
        TVMD_KERNEL_INIT("tvmd_cmsis_depthwise_conv_s8", tvmd_cmsis_depthwise_conv_s8),
        TVMD_KERNEL_INIT("tvmd_cmsis_fully_connected_s8", tvmd_cmsis_fully_connected_s8),
        TVMD_KERNEL_INIT("tvmd_cmsis_avg_pool_s8", tvmd_cmsis_avg_pool_s8),
        TVMD_KERNEL_INIT("tvmd_cmsis_max_pool_s8", tvmd_cmsis_max_pool_s8),
        TVMD_KERNEL_INIT("tvmd_cmsis_softmax_s8", tvmd_cmsis_softmax_s8),
        TVMD_KERNEL_INIT("tvmd_cmsis_add_s8", tvmd_cmsis_add_s8),
        TVMD_KERNEL_INIT("tvmd_cmsis_mul_s8", tvmd_cmsis_mul_s8),
    };
    """
    const tvmd_kernel_t tvmd_cmsis_kernel_table[8]
    enum: TVMD_CMSIS_NUM_KINDS

#: Kernel family name -> index in the kernel table (and in ``call_counts``).
KINDS = {"conv": 0, "depthwise_conv": 1, "fully_connected": 2, "avg_pool": 3, "max_pool": 4,
         "softmax": 5, "add": 6, "mul": 7}
API_VERSION = TVMD_CMSIS_API_VERSION


def kernel_capsule(str kind):
    """The ``"tvmdevice.kernel"`` capsule of kernel family ``kind`` (a key of :data:`KINDS`)."""
    cdef int index = KINDS[kind]
    return PyCapsule_New(<void*>&tvmd_cmsis_kernel_table[index], b"tvmdevice.kernel", NULL)


# ----------------------------------------------------------------- params
cdef void _release_owner(object capsule) noexcept:
    owner = PyCapsule_GetContext(capsule)
    if owner != NULL:
        Py_DECREF(<object>owner)


cdef object _capsule_for(object owner, void* struct_ptr):
    # The capsule holds a reference to its owner: the struct and the arrays
    # it points into live as long as any capsule handed out does.
    cap = PyCapsule_New(struct_ptr, TVMD_PARAMS_CAPSULE, _release_owner)
    Py_INCREF(owner)
    PyCapsule_SetContext(cap, <void*>owner)
    return cap


cdef class Params:
    """Prepared parameters of one kernel call.

    :ivar kind: the kernel family (a key of :data:`KINDS`).
    :ivar name: the kernel's C symbol.
    :ivar buffers: the :class:`~tvmdevice_cmsis.ops.BufferSpec` of each
        buffer, in call order (inputs, outputs; scratch is not listed).
    :ivar scratch_bytes: the kernel's scratch size query.
    :ivar arrays: the numpy arrays the C struct points into.
    """

    cdef readonly str kind
    cdef readonly str name
    cdef readonly tuple buffers
    cdef readonly size_t scratch_bytes
    cdef readonly dict arrays
    cdef readonly dict fields

    cdef void* _struct(self) except NULL:
        raise NotImplementedError("Params is abstract")

    @property
    def capsule(self):
        """A ``"tvmdevice.params"`` capsule pointing at the C parameter struct."""
        return _capsule_for(self, self._struct())

    @property
    def address(self):
        """Address of the C parameter struct (valid while this object lives)."""
        return <uintptr_t>self._struct()

    def __repr__(self):
        return f"<{type(self).__name__} {self.name} scratch={self.scratch_bytes}>"


cdef void _set_quant(tvmd_cmsis_quant_t* q, dict f):
    q.input_offset = f.get("input_offset", 0)
    q.output_offset = f["output_offset"]
    q.act_min = f["act_min"]
    q.act_max = f["act_max"]


cdef class ConvParams(Params):
    cdef tvmd_cmsis_conv_params_t c

    cdef void* _struct(self) except NULL:
        return &self.c

    def __init__(self, spec):
        cdef dict f = spec.fields
        cdef const int16_t[:, ::1] w = spec.arrays["weights"]
        cdef const int32_t[::1] m = spec.arrays["multiplier"]
        cdef const int32_t[::1] s = spec.arrays["shift"]
        self.c.kind = KINDS["conv"]
        self.c.num_inputs = f["num_inputs"]
        self.c.batches, self.c.in_h, self.c.in_w, self.c.in_ch = f["batches"], f["in_h"], f["in_w"], f["in_ch"]
        self.c.out_h, self.c.out_w, self.c.out_ch = f["out_h"], f["out_w"], f["out_ch"]
        self.c.filter_h, self.c.filter_w = f["filter_h"], f["filter_w"]
        self.c.filter_in_ch, self.c.groups = f["filter_in_ch"], f["groups"]
        self.c.stride_h, self.c.stride_w = f["stride_h"], f["stride_w"]
        self.c.dilation_h, self.c.dilation_w = f["dilation_h"], f["dilation_w"]
        self.c.pad_h, self.c.pad_w = f["pad_h"], f["pad_w"]
        self.c.k, self.c.k_pairs, self.c.ldw = f["k"], f["k_pairs"], f["ldw"]
        _set_quant(&self.c.q, f)
        self.c.macs = f["macs"]
        self.c.weights = &w[0, 0]
        self.c.multiplier = &m[0]
        self.c.shift = &s[0]
        _finish(self, spec, tvmd_cmsis_conv_s8_get_buffer_size(&self.c))


cdef class DepthwiseConvParams(Params):
    cdef tvmd_cmsis_depthwise_conv_params_t c

    cdef void* _struct(self) except NULL:
        return &self.c

    def __init__(self, spec):
        cdef dict f = spec.fields
        cdef const float[:, ::1] w = spec.arrays["weights"]
        cdef const int32_t[::1] m = spec.arrays["multiplier"]
        cdef const int32_t[::1] s = spec.arrays["shift"]
        self.c.kind = KINDS["depthwise_conv"]
        self.c.num_inputs = f["num_inputs"]
        self.c.batches, self.c.in_h, self.c.in_w, self.c.in_ch = f["batches"], f["in_h"], f["in_w"], f["in_ch"]
        self.c.out_h, self.c.out_w, self.c.out_ch = f["out_h"], f["out_w"], f["out_ch"]
        self.c.depth_multiplier = f["depth_multiplier"]
        self.c.filter_h, self.c.filter_w = f["filter_h"], f["filter_w"]
        self.c.stride_h, self.c.stride_w = f["stride_h"], f["stride_w"]
        self.c.dilation_h, self.c.dilation_w = f["dilation_h"], f["dilation_w"]
        self.c.pad_h, self.c.pad_w = f["pad_h"], f["pad_w"]
        self.c.cp = f["cp"]
        _set_quant(&self.c.q, f)
        self.c.macs = f["macs"]
        self.c.weights = &w[0, 0]
        self.c.multiplier = &m[0]
        self.c.shift = &s[0]
        _finish(self, spec, tvmd_cmsis_depthwise_conv_s8_get_buffer_size(&self.c))


cdef class FullyConnectedParams(Params):
    cdef tvmd_cmsis_fully_connected_params_t c

    cdef void* _struct(self) except NULL:
        return &self.c

    def __init__(self, spec):
        cdef dict f = spec.fields
        cdef const int16_t[:, ::1] w = spec.arrays["weights"]
        cdef const int32_t[::1] m = spec.arrays["multiplier"]
        cdef const int32_t[::1] s = spec.arrays["shift"]
        self.c.kind = KINDS["fully_connected"]
        self.c.num_inputs = f["num_inputs"]
        self.c.batches, self.c.accum_depth = f["batches"], f["accum_depth"]
        self.c.out_ch, self.c.k_pairs, self.c.ldw = f["out_ch"], f["k_pairs"], f["ldw"]
        _set_quant(&self.c.q, f)
        self.c.macs = f["macs"]
        self.c.weights = &w[0, 0]
        self.c.multiplier = &m[0]
        self.c.shift = &s[0]
        _finish(self, spec, tvmd_cmsis_fully_connected_s8_get_buffer_size(&self.c))


cdef class PoolParams(Params):
    cdef tvmd_cmsis_pool_params_t c

    cdef void* _struct(self) except NULL:
        return &self.c

    def __init__(self, spec):
        cdef dict f = spec.fields
        self.c.kind = KINDS[spec.kind]
        self.c.batches, self.c.in_h, self.c.in_w = f["batches"], f["in_h"], f["in_w"]
        self.c.channels, self.c.out_h, self.c.out_w = f["channels"], f["out_h"], f["out_w"]
        self.c.filter_h, self.c.filter_w = f["filter_h"], f["filter_w"]
        self.c.stride_h, self.c.stride_w = f["stride_h"], f["stride_w"]
        self.c.pad_h, self.c.pad_w = f["pad_h"], f["pad_w"]
        self.c.act_min, self.c.act_max = f["act_min"], f["act_max"]
        if spec.kind == "avg_pool":
            size = tvmd_cmsis_avg_pool_s8_get_buffer_size(&self.c)
        else:
            size = tvmd_cmsis_max_pool_s8_get_buffer_size(&self.c)
        _finish(self, spec, size)


cdef class SoftmaxParams(Params):
    cdef tvmd_cmsis_softmax_params_t c

    cdef void* _struct(self) except NULL:
        return &self.c

    def __init__(self, spec):
        cdef dict f = spec.fields
        self.c.kind = KINDS["softmax"]
        self.c.rows, self.c.depth = f["rows"], f["depth"]
        self.c.input_multiplier, self.c.input_left_shift = f["input_multiplier"], f["input_left_shift"]
        self.c.diff_min = f["diff_min"]
        _finish(self, spec, tvmd_cmsis_softmax_s8_get_buffer_size(&self.c))


cdef class ElementwiseParams(Params):
    cdef tvmd_cmsis_elementwise_params_t c

    cdef void* _struct(self) except NULL:
        return &self.c

    def __init__(self, spec):
        cdef dict f = spec.fields
        cdef int d
        self.c.kind = KINDS[spec.kind]
        self.c.ndim, self.c.size = f["ndim"], f["size"]
        for d in range(TVMD_CMSIS_MAX_DIMS):
            self.c.out_shape[d] = f["out_shape"][d] if d < self.c.ndim else 1
            self.c.in1_strides[d] = f["in1_strides"][d] if d < self.c.ndim else 0
            self.c.in2_strides[d] = f["in2_strides"][d] if d < self.c.ndim else 0
        self.c.input1_offset, self.c.input2_offset = f["input1_offset"], f["input2_offset"]
        self.c.output_offset, self.c.left_shift = f["output_offset"], f.get("left_shift", 0)
        self.c.input1_multiplier, self.c.input1_shift = f.get("input1_multiplier", 0), f.get("input1_shift", 0)
        self.c.input2_multiplier, self.c.input2_shift = f.get("input2_multiplier", 0), f.get("input2_shift", 0)
        self.c.output_multiplier, self.c.output_shift = f["output_multiplier"], f["output_shift"]
        self.c.act_min, self.c.act_max = f["act_min"], f["act_max"]
        if spec.kind == "add":
            size = tvmd_cmsis_add_s8_get_buffer_size(&self.c)
        else:
            size = tvmd_cmsis_mul_s8_get_buffer_size(&self.c)
        _finish(self, spec, size)


cdef _finish(Params self, spec, size_t scratch_bytes):
    self.kind = spec.kind
    self.name = spec.name
    self.buffers = tuple(spec.buffers)
    self.arrays = dict(spec.arrays)
    self.fields = dict(spec.fields)
    self.scratch_bytes = scratch_bytes


_PARAM_CLASSES = {"conv": ConvParams, "depthwise_conv": DepthwiseConvParams,
                  "fully_connected": FullyConnectedParams, "avg_pool": PoolParams, "max_pool": PoolParams,
                  "softmax": SoftmaxParams, "add": ElementwiseParams, "mul": ElementwiseParams}


def make_params(spec):
    """The :class:`Params` object of a validated kernel spec."""
    return _PARAM_CLASSES[spec.kind](spec)


# --------------------------------------------------------------- sequence
# -------------------------------------------------------------- lifecycle
cdef tvm_device_cmsis_nn_t* _device(size_t address) except NULL:
    if address == 0:
        raise ValueError("NULL device struct")
    return <tvm_device_cmsis_nn_t*>address


def device_init(size_t address):
    """``TVMDeviceCmsisNnInit`` on the struct at ``address``; returns the status."""
    return TVMDeviceCmsisNnInit(_device(address))


def device_open(size_t address):
    """``TVMDeviceCmsisNnOpen``; returns the status."""
    return TVMDeviceCmsisNnOpen(_device(address))


def device_activate(size_t address):
    """``TVMDeviceCmsisNnActivate``; returns the status."""
    return TVMDeviceCmsisNnActivate(_device(address))


def device_deactivate(size_t address):
    """``TVMDeviceCmsisNnDeactivate``; returns the status."""
    return TVMDeviceCmsisNnDeactivate(_device(address))


def device_close(size_t address):
    """``TVMDeviceCmsisNnClose``; returns the status."""
    return TVMDeviceCmsisNnClose(_device(address))


def device_destroy(size_t address):
    """``TVMDeviceCmsisNnDestroy``; returns the status."""
    return TVMDeviceCmsisNnDestroy(_device(address))


#: The lifecycle functions by step name, for the plugin's hooks.
DEVICE_STEPS = {"init": device_init, "open": device_open, "activate": device_activate,
                "deactivate": device_deactivate, "close": device_close, "destroy": device_destroy}


# ----------------------------------------------------------------- testing
def set_simd(bint enabled):
    """Use the CPU's accelerated kernel path (default) or force the portable C one.

    Both compute identical values; tests run each.  Returns whether the
    accelerated path is in use afterwards (False on CPUs without it).
    """
    return bool(tvmd_cmsis_set_simd(1 if enabled else 0))


cdef _check_requantize_args(const int32_t[::1] acc, const int32_t[::1] multiplier,
                            const int32_t[::1] shift, int8_t[::1] out):
    cdef Py_ssize_t i, n = acc.shape[0]
    if multiplier.shape[0] != n or shift.shape[0] != n or out.shape[0] != n:
        raise ValueError("requantize: all arrays must have the same length")
    for i in range(n):
        # The prepare step never produces other shifts; C shifts outside
        # this range would be undefined.
        if shift[i] < -31 or shift[i] > 30:
            raise ValueError(f"requantize: shift {shift[i]} is outside [-31, 30]")


def requantize(const int32_t[::1] acc, const int32_t[::1] multiplier, const int32_t[::1] shift,
               int32_t output_offset, int32_t act_min, int32_t act_max, int8_t[::1] out):
    """The kernels' vectorized requantization (``tvmd_cmsis_requantize_s8``) over arrays."""
    cdef tvmd_cmsis_quant_t q
    q.input_offset = 0
    q.output_offset = output_offset
    q.act_min = act_min
    q.act_max = act_max
    n = acc.shape[0]
    _check_requantize_args(acc, multiplier, shift, out)
    if n:
        tvmd_cmsis_requantize_s8(&acc[0], &multiplier[0], &shift[0], <int32_t>n, &q, &out[0])


def requantize_reference(const int32_t[::1] acc, const int32_t[::1] multiplier, const int32_t[::1] shift,
                         int32_t output_offset, int32_t act_min, int32_t act_max, int8_t[::1] out):
    """The same through ``tvmd_multiply_by_quantized_multiplier`` of the core's quant.h."""
    cdef Py_ssize_t i, n = acc.shape[0]
    cdef int32_t v
    _check_requantize_args(acc, multiplier, shift, out)
    for i in range(n):
        v = tvmd_multiply_by_quantized_multiplier(acc[i], multiplier[i], shift[i]) + output_offset
        out[i] = <int8_t>(act_min if v < act_min else (act_max if v > act_max else v))
