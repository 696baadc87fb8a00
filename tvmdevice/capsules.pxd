# The capsules a plugin's Cython module publishes, one call each:
#
#     from tvmdevice.capsules cimport kernel_capsule, lifecycle_capsule
#     cdef extern from "my_device.h":
#         const tvmd_kernel_t my_add_kernel          # TVMD_KERNEL_INIT(...)
#         const tvmd_lifecycle_t my_lifecycle        # TVMD_LIFECYCLE(MyDevice)
#     LIFECYCLE = lifecycle_capsule(&my_lifecycle)
#     KERNELS = {"ADD": kernel_capsule(&my_add_kernel)}
#
# The structs are static C data, so the capsules need no owner; the framework
# validates the name, abi_version and struct_size before calling anything.
from cpython.pycapsule cimport PyCapsule_New

from tvmdevice.kernel_abi cimport TVMD_KERNEL_CAPSULE, tvmd_kernel_t
from tvmdevice.lifecycle_abi cimport TVMD_LIFECYCLE_CAPSULE, tvmd_lifecycle_t


cdef inline object kernel_capsule(const tvmd_kernel_t* kernel):
    """A ``"tvmdevice.kernel"`` capsule of a static ``tvmd_kernel_t`` (``PreparedCall.kernel``)."""
    if kernel == NULL:
        raise ValueError("kernel_capsule: NULL tvmd_kernel_t")
    return PyCapsule_New(<void*>kernel, TVMD_KERNEL_CAPSULE, NULL)


cdef inline object lifecycle_capsule(const tvmd_lifecycle_t* lifecycle):
    """A ``"tvmdevice.lifecycle"`` capsule of a static ``tvmd_lifecycle_t`` (for ``c_lifecycle``)."""
    if lifecycle == NULL:
        raise ValueError("lifecycle_capsule: NULL tvmd_lifecycle_t")
    return PyCapsule_New(<void*>lifecycle, TVMD_LIFECYCLE_CAPSULE, NULL)
