# cython: language_level=3
"""Validation of the kernel-call ABI at the C boundary.

A kernel reaches the executor as a ``PyCapsule`` named ``"tvmdevice.kernel"``
holding a ``tvmd_kernel_t``.  Before any pointer in it is called, the
capsule's name, ``abi_version`` and ``struct_size`` are checked here: a plugin
built against another ABI is refused with an error, never called.
"""
from cpython.pycapsule cimport PyCapsule_CheckExact, PyCapsule_GetName, PyCapsule_GetPointer
from libc.stdint cimport uintptr_t
from libc.stdlib cimport free, malloc

from tvmdevice.capsules cimport params_capsule
from tvmdevice.kernel_abi cimport TVMD_KERNEL_ABI_VERSION, tvmd_kernel_t

KERNEL_CAPSULE = "tvmdevice.kernel"
PARAMS_CAPSULE = "tvmdevice.params"
ABI_VERSION = TVMD_KERNEL_ABI_VERSION
KERNEL_STRUCT_SIZE = sizeof(tvmd_kernel_t)


def _capsule_name(obj):
    cdef const char* name
    if not PyCapsule_CheckExact(obj):
        return None
    name = PyCapsule_GetName(obj)
    return None if name == NULL else name.decode()


def kernel_info(capsule):
    """Validate a kernel capsule; return ``(name, fn_address, struct_address)``.

    :raises ABIMismatchError: wrong capsule name, ABI version or struct size.
    """
    from tvmdevice.errors import ABIMismatchError

    name = _capsule_name(capsule)
    if name != KERNEL_CAPSULE:
        raise ABIMismatchError(f"expected a PyCapsule named {KERNEL_CAPSULE!r}, got "
                               f"{type(capsule).__name__} named {name!r}")
    cdef tvmd_kernel_t* k = <tvmd_kernel_t*>PyCapsule_GetPointer(capsule, b"tvmdevice.kernel")
    if k == NULL:
        raise ABIMismatchError("kernel capsule holds a NULL pointer")
    if k.abi_version != TVMD_KERNEL_ABI_VERSION:
        raise ABIMismatchError(
            f"kernel built against kernel ABI version {k.abi_version}, this tvmdevice speaks version "
            f"{TVMD_KERNEL_ABI_VERSION}; rebuild the plugin against this tvmdevice (pip install --force-reinstall)")
    if k.struct_size < sizeof(tvmd_kernel_t):
        raise ABIMismatchError(
            f"kernel struct is {k.struct_size} bytes, expected at least {sizeof(tvmd_kernel_t)}; "
            f"rebuild the plugin against this tvmdevice")
    if k.fn == NULL:
        raise ABIMismatchError("kernel capsule has a NULL function pointer")
    kname = k.name.decode() if k.name != NULL else "<unnamed>"
    return kname, <uintptr_t>k.fn, <uintptr_t>k


def params_address(params):
    """Address of a prepared parameter struct: ``params.capsule`` named ``"tvmdevice.params"``; 0 for None."""
    from tvmdevice.errors import ABIMismatchError

    if params is None:
        return 0
    capsule = getattr(params, "capsule", params)
    name = _capsule_name(capsule)
    if name != PARAMS_CAPSULE:
        raise ABIMismatchError(f"kernel params must expose a PyCapsule named {PARAMS_CAPSULE!r}, got {name!r}")
    return <uintptr_t>PyCapsule_GetPointer(capsule, b"tvmdevice.params")


def owned_params_capsule(uintptr_t address, owner):
    """A ``"tvmdevice.params"`` capsule of the struct at ``address`` that keeps ``owner`` alive.

    The Python face of ``params_capsule`` in ``tvmdevice/capsules.pxd``.

    :param address: the params struct's address (non-zero), in memory ``owner`` keeps alive.
    :param owner: the object the capsule references until the capsule is destroyed.
    """
    return params_capsule(<const void*>address, owner)


def invoke_kernel(capsule, params, buffers, size_t resource_handle):
    """Call one C kernel once, from Python: the kernel's Python callable form.

    :param capsule: a ``"tvmdevice.kernel"`` capsule (validated first).
    :param params: the prepared params object (``.capsule``) or ``None``.
    :param buffers: data pointers in the kernel's buffer order: ints (addresses)
        or ``None`` for an absent optional input.  Callers holding numpy arrays
        pass ``tvmdevice.memory.address_of(array)`` and keep the arrays alive.
    :param resource_handle: address of the device struct (0 for none).
    :returns: the kernel's status code (0 = success).
    """
    kernel_info(capsule)  # validates name, ABI version and struct size
    cdef size_t p = params_address(params)
    cdef Py_ssize_t n = len(buffers), i
    cdef void** ptrs = <void**>malloc(max(n, 1) * sizeof(void*))
    if ptrs == NULL:
        raise MemoryError()
    cdef tvmd_kernel_t* k = <tvmd_kernel_t*>PyCapsule_GetPointer(capsule, b"tvmdevice.kernel")
    cdef int status
    try:
        for i in range(n):
            ptrs[i] = NULL if buffers[i] is None else <void*><uintptr_t>int(buffers[i])
        with nogil:
            status = k.fn(<const void*>p, ptrs, <void*>resource_handle)
    finally:
        free(ptrs)
    return status
