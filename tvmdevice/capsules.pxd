# Capsule helpers for plugins: the capsules a plugin's Cython module publishes, one call each.
#
#     from tvmdevice.capsules cimport kernel_capsule, lifecycle_capsule, params_capsule
#     cdef extern from "my_device.h":
#         const tvmd_kernel_t my_add_kernel          # TVMD_KERNEL_INIT(...)
#         const tvmd_lifecycle_t my_lifecycle        # TVMD_LIFECYCLE(MyDevice)
#     LIFECYCLE = lifecycle_capsule(&my_lifecycle)
#     ADD_KERNEL = kernel_capsule(&my_add_kernel)
#
# Kernel and lifecycle structs are static C data, so their capsules need no
# owner; the framework validates name, abi_version and struct_size before
# calling anything.
#
# A params capsule carries the address of a kernel's params struct to the
# executor.  The struct's memory belongs to a Python object (the owner); the
# capsule holds a reference to it, so the struct (and every array its pointer
# members point into, when the owner keeps them) lives as long as any capsule
# handed out for it, however the caller drops its own references.
from cpython.pycapsule cimport PyCapsule_GetContext, PyCapsule_New, PyCapsule_SetContext
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF

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


cdef inline void _tvmd_release_owner(object capsule) noexcept:
    Py_XDECREF(<PyObject*>PyCapsule_GetContext(capsule))


cdef inline object params_capsule(const void* params, object owner):
    """A ``"tvmdevice.params"`` capsule of ``params`` that keeps ``owner`` alive."""
    if params == NULL:
        raise ValueError("a params capsule needs a non-NULL struct address")
    capsule = PyCapsule_New(<void*>params, b"tvmdevice.params", _tvmd_release_owner)
    Py_INCREF(owner)
    PyCapsule_SetContext(capsule, <void*>owner)
    return capsule
