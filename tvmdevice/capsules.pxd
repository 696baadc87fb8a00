# Capsule helpers for plugins: ``from tvmdevice.capsules cimport params_capsule``
#
# A params capsule carries the address of a kernel's params struct to the
# executor.  The struct's memory belongs to a Python object (the owner); the
# capsule holds a reference to it, so the struct (and every array its pointer
# members point into, when the owner keeps them) lives as long as any capsule
# handed out for it, however the caller drops its own references.
from cpython.pycapsule cimport PyCapsule_GetContext, PyCapsule_New, PyCapsule_SetContext
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF


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
