# cython: language_level=3
"""Calls a plugin's C lifecycle functions through its ``"tvmdevice.lifecycle"`` capsule.

The capsule holds a ``tvmd_lifecycle_t`` (``tvmdevice/lifecycle_abi.h``).  Its
name, ``abi_version`` and ``struct_size`` are checked before any pointer in
it is called: a plugin built against another ABI is refused, never called.
"""
from cpython.pycapsule cimport PyCapsule_CheckExact, PyCapsule_GetName, PyCapsule_GetPointer
from libc.stdint cimport int32_t, uintptr_t
from libc.string cimport strcmp

from tvmdevice.lifecycle_abi cimport (
    TVMD_LIFECYCLE_ABI_VERSION,
    TVMD_LIFECYCLE_CAPSULE,
    tvmd_lifecycle_fn,
    tvmd_lifecycle_t,
)

LIFECYCLE_CAPSULE = "tvmdevice.lifecycle"
ABI_VERSION = TVMD_LIFECYCLE_ABI_VERSION
#: The struct's function pointers, in order (``Transition`` values).
STEPS = ("init", "open", "activate", "deactivate", "close", "destroy")


cdef const tvmd_lifecycle_t* _table(capsule) except NULL:
    from tvmdevice.errors import ABIMismatchError

    cdef const char* name = NULL
    if PyCapsule_CheckExact(capsule):
        name = PyCapsule_GetName(capsule)
    if name == NULL or strcmp(name, TVMD_LIFECYCLE_CAPSULE) != 0:
        got = None if name == NULL else name.decode()
        raise ABIMismatchError(f"expected a PyCapsule named {LIFECYCLE_CAPSULE!r}, got "
                               f"{type(capsule).__name__} named {got!r}")
    cdef const tvmd_lifecycle_t* table = <const tvmd_lifecycle_t*>PyCapsule_GetPointer(capsule, name)
    if table == NULL:
        raise ABIMismatchError("lifecycle capsule holds a NULL pointer")
    if table.abi_version != TVMD_LIFECYCLE_ABI_VERSION:
        raise ABIMismatchError(
            f"lifecycle built against lifecycle ABI version {table.abi_version}, this tvmdevice speaks version "
            f"{TVMD_LIFECYCLE_ABI_VERSION}; rebuild the plugin against this tvmdevice")
    if table.struct_size < sizeof(tvmd_lifecycle_t):
        raise ABIMismatchError(f"lifecycle struct is {table.struct_size} bytes, expected at least "
                               f"{sizeof(tvmd_lifecycle_t)}; rebuild the plugin against this tvmdevice")
    return table


cdef tvmd_lifecycle_fn _step(const tvmd_lifecycle_t* table, str step) except? NULL:
    if step == "init":
        return table.init
    if step == "open":
        return table.open
    if step == "activate":
        return table.activate
    if step == "deactivate":
        return table.deactivate
    if step == "close":
        return table.close
    if step == "destroy":
        return table.destroy
    raise ValueError(f"unknown lifecycle step {step!r}; one of {', '.join(STEPS)}")


def present(capsule):
    """Validate a lifecycle capsule; the steps whose function pointer is not NULL, in :data:`STEPS` order.

    :raises ABIMismatchError: wrong capsule name, ABI version or struct size.
    """
    cdef const tvmd_lifecycle_t* table = _table(capsule)
    return tuple(step for step in STEPS if _step(table, step) != NULL)


def call(capsule, str step, uintptr_t device):
    """Call one step on the device struct at address ``device``.

    :param step: one of :data:`STEPS`.
    :returns: the C status code (0 = success), or ``None`` when the step's pointer is NULL.
    :raises ABIMismatchError: the capsule is not a valid lifecycle capsule.
    """
    cdef tvmd_lifecycle_fn fn = _step(_table(capsule), step)
    cdef int32_t status
    if fn == NULL:
        return None
    if device == 0:
        raise ValueError("NULL device struct")
    with nogil:
        status = fn(<void*>device)
    return status


def address(capsule, str step):
    """The address of one step's C function (0 when its pointer is NULL), for a caller that calls it itself.

    :raises ABIMismatchError: the capsule is not a valid lifecycle capsule.
    """
    return <uintptr_t>_step(_table(capsule), step)
