# cython: language_level=3
"""C kernels for testing the kernel-call ABI and the executor's run loop.

``increment`` adds one to each int8 of its input (wrapping), writing its
output: the smallest real kernel, used by the dispatch-overhead benchmark and
the run-loop tests.  ``kernel_capsule`` can also build deliberately broken
kernel structs (wrong ABI version or size) to check they are refused.
``c_lifecycle_capsule`` is a C lifecycle for the lifecycle binder's tests.
"""
from cpython.pycapsule cimport PyCapsule_New
from libc.stdint cimport int8_t, int32_t, uint32_t

from tvmdevice.capsules cimport lifecycle_capsule
from tvmdevice.kernel_abi cimport TVMD_KERNEL_ABI_VERSION, tvmd_kernel_t
from tvmdevice.lifecycle_abi cimport TVMD_LIFECYCLE_ABI_VERSION, tvmd_lifecycle_t


ctypedef struct increment_params_t:
    int32_t size


cdef int32_t _increment(const void* params, void* const* buffers, void* resource_handle) noexcept nogil:
    cdef const increment_params_t* p = <const increment_params_t*>params
    cdef const int8_t* src = <const int8_t*>buffers[0]
    cdef int8_t* dst = <int8_t*>buffers[1]
    cdef int32_t i
    if p == NULL or src == NULL or dst == NULL:
        return 4  # TVMD_ERR_INVALID_ARGUMENT
    for i in range(p.size):
        dst[i] = <int8_t>(<int>src[i] + 1)
    return 0


cdef int32_t _fail(const void* params, void* const* buffers, void* resource_handle) noexcept nogil:
    return 7  # TVMD_ERR_KERNEL


cdef tvmd_kernel_t INCREMENT = [TVMD_KERNEL_ABI_VERSION, sizeof(tvmd_kernel_t), b"tvmd_test_increment_s8",
                                _increment]
cdef tvmd_kernel_t FAIL = [TVMD_KERNEL_ABI_VERSION, sizeof(tvmd_kernel_t), b"tvmd_test_fail", _fail]


def increment_kernel():
    """The ``increment`` kernel as a ``"tvmdevice.kernel"`` capsule."""
    return PyCapsule_New(&INCREMENT, b"tvmdevice.kernel", NULL)


def failing_kernel():
    """A kernel that always returns TVMD_ERR_KERNEL."""
    return PyCapsule_New(&FAIL, b"tvmdevice.kernel", NULL)


cdef class IncrementParams:
    """Params of ``increment``: the element count."""
    cdef increment_params_t p

    def __init__(self, int size):
        if size < 0:
            raise ValueError("size must be >= 0")
        self.p.size = size

    @property
    def capsule(self):
        return PyCapsule_New(&self.p, b"tvmdevice.params", NULL)


cdef class BrokenKernel:
    """A kernel struct with a chosen ABI version and struct size (to test refusal)."""
    cdef tvmd_kernel_t k

    def __init__(self, uint32_t abi_version, uint32_t struct_size):
        self.k.abi_version = abi_version
        self.k.struct_size = struct_size
        self.k.name = b"broken"
        self.k.fn = _increment

    @property
    def capsule(self):
        return PyCapsule_New(&self.k, b"tvmdevice.kernel", NULL)


# A C lifecycle for the tests of tvmdevice.plugin.CLifecycle.
# Its device struct is four uint32: calls, last step (1 init .. 6 destroy),
# the step to fail (0 none) and the status that step returns.
ctypedef struct lifecycle_device_t:
    uint32_t calls
    uint32_t last
    uint32_t fail_step
    uint32_t fail_status


cdef inline int32_t _step(void* device, uint32_t step) noexcept nogil:
    cdef lifecycle_device_t* d = <lifecycle_device_t*>device
    d.calls += 1
    d.last = step
    return <int32_t>d.fail_status if d.fail_step == step else 0


cdef int32_t _init(void* d) noexcept nogil:
    return _step(d, 1)


cdef int32_t _activate(void* d) noexcept nogil:
    return _step(d, 3)


cdef int32_t _deactivate(void* d) noexcept nogil:
    return _step(d, 4)


cdef int32_t _close(void* d) noexcept nogil:
    return _step(d, 5)


cdef int32_t _destroy(void* d) noexcept nogil:
    return _step(d, 6)


# Open is NULL: nothing to do there, so the binder skips it.
cdef tvmd_lifecycle_t LIFECYCLE = [TVMD_LIFECYCLE_ABI_VERSION, sizeof(tvmd_lifecycle_t), _init, NULL, _activate,
                                   _deactivate, _close, _destroy]
cdef tvmd_lifecycle_t FUTURE_LIFECYCLE = [TVMD_LIFECYCLE_ABI_VERSION + 1, sizeof(tvmd_lifecycle_t), _init, NULL,
                                          _activate, _deactivate, _close, _destroy]


def c_lifecycle_capsule(bint future_abi=False):
    """The test lifecycle as a ``"tvmdevice.lifecycle"`` capsule (``future_abi``: a newer ABI version)."""
    return lifecycle_capsule(&FUTURE_LIFECYCLE if future_abi else &LIFECYCLE)
