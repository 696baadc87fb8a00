# cython: language_level=3, boundscheck=False, wraparound=False
"""The executor's run loop: pre-bound C kernel calls with no Python in between.

Each step is either a C kernel call — function pointer, params pointer,
buffer-pointer array and resource handle, all resolved when the executor is
created — or a Python callable (host reference kernels, copies).  Running a
stretch of C steps costs a few nanoseconds per step.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int32_t, uintptr_t
from libc.stdlib cimport free, malloc

from tvmdevice.kernel_abi cimport tvmd_kernel_fn, tvmd_kernel_t

from tvmdevice._abi import kernel_info, params_address


cdef struct CStep:
    tvmd_kernel_fn fn
    const void* params
    void** buffers
    void* handle


cdef class RunLoop:
    """An ordered list of steps, run with :meth:`run`.

    :param on_error: ``on_error(step_index, status)`` -> exception to raise when a
        C kernel returns a non-zero status.
    """

    cdef CStep* steps
    cdef Py_ssize_t n, capacity
    cdef list python_steps
    cdef list keepalive
    cdef object on_error

    def __cinit__(self, Py_ssize_t capacity, on_error):
        self.capacity = max(capacity, 1)
        self.steps = <CStep*>malloc(self.capacity * sizeof(CStep))
        if self.steps == NULL:
            raise MemoryError()
        self.n = 0
        self.python_steps = []
        self.keepalive = []
        self.on_error = on_error

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.steps != NULL:
            for i in range(self.n):
                if self.steps[i].buffers != NULL:
                    free(self.steps[i].buffers)
            free(self.steps)

    def __len__(self):
        return self.n

    cdef Py_ssize_t _slot(self) except -1:
        if self.n >= self.capacity:
            raise IndexError("run loop is full")
        self.n += 1
        return self.n - 1

    def add_kernel(self, capsule, params, buffers, size_t resource_handle):
        """Append a C kernel call (the capsule is validated against the ABI first).

        :param buffers: addresses (ints) or ``None`` for an absent input.
        """
        kernel_info(capsule)  # raises ABIMismatchError for a foreign or mismatched kernel
        cdef tvmd_kernel_t* k = <tvmd_kernel_t*>PyCapsule_GetPointer(capsule, b"tvmdevice.kernel")
        cdef size_t p = params_address(params)
        cdef Py_ssize_t nbuf = len(buffers), j
        cdef void** ptrs = <void**>malloc(max(nbuf, 1) * sizeof(void*))
        if ptrs == NULL:
            raise MemoryError()
        for j in range(nbuf):
            ptrs[j] = NULL if buffers[j] is None else <void*><uintptr_t>int(buffers[j])
        cdef Py_ssize_t i = self._slot()
        self.steps[i].fn = k.fn
        self.steps[i].params = <const void*>p
        self.steps[i].buffers = ptrs
        self.steps[i].handle = <void*>resource_handle
        self.python_steps.append(None)
        self.keepalive.append((capsule, params))

    def add_python(self, fn):
        """Append a Python step: ``fn()`` is called with no arguments."""
        cdef Py_ssize_t i = self._slot()
        self.steps[i].fn = NULL
        self.steps[i].params = NULL
        self.steps[i].buffers = NULL
        self.steps[i].handle = NULL
        self.python_steps.append(fn)

    cpdef run(self, Py_ssize_t start=0, Py_ssize_t stop=-1):
        """Run steps ``[start, stop)`` (all by default); raises on the first failure."""
        cdef Py_ssize_t i
        cdef int32_t status
        cdef CStep* s
        if stop < 0 or stop > self.n:
            stop = self.n
        for i in range(start, stop):
            s = &self.steps[i]
            if s.fn != NULL:
                status = s.fn(s.params, s.buffers, s.handle)
                if status != 0:
                    raise self.on_error(i, status)
            else:
                self.python_steps[i]()
