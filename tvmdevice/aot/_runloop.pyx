# cython: language_level=3, boundscheck=False, wraparound=False
"""The executor's run loop: pre-bound C kernel calls with no Python in between.

Each step is either a C kernel call — function pointer, params pointer,
buffer-pointer array and resource handle, all resolved when the executor is
created — or a Python callable (host reference kernels, copies).  Running a
stretch of C steps costs a few nanoseconds per step.

When every step is C and every device the steps use has its lifecycle in C
(:func:`tvmdevice.plugin_support.c_lifecycle`), :meth:`RunLoop.cycle` runs a
whole run — Activate each device, every step, Deactivate in reverse — in C,
optionally with the GIL released; on the first non-zero status it stops and
says where, and the executor turns that into the device's state and the error
the hook would have raised.
"""
from cpython.buffer cimport PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int32_t, uintptr_t
from libc.stdlib cimport free, malloc
from libc.string cimport memmove

from tvmdevice.kernel_abi cimport tvmd_kernel_fn, tvmd_kernel_t
from tvmdevice.lifecycle_abi cimport tvmd_lifecycle_fn

from tvmdevice._abi import kernel_info, params_address


cdef struct CStep:
    tvmd_kernel_fn fn
    const void* params
    void** buffers
    void* handle


cdef struct CDevice:
    tvmd_lifecycle_fn activate
    tvmd_lifecycle_fn deactivate
    void* device


cdef enum:
    C_ACTIVATE_FAILED = 1
    C_STEP_FAILED = 2
    C_DEACTIVATE_FAILED = 3

#: Where :meth:`RunLoop.cycle` stopped: ``(phase, index, status)`` with ``phase`` one of these.
ACTIVATE_FAILED, STEP_FAILED, DEACTIVATE_FAILED = C_ACTIVATE_FAILED, C_STEP_FAILED, C_DEACTIVATE_FAILED


cdef class RunLoop:
    """An ordered list of steps, run with :meth:`run`.

    :param on_error: ``on_error(step_index, status)`` -> exception to raise when a
        C kernel returns a non-zero status.
    """

    cdef CStep* steps
    cdef CDevice* devices
    cdef Py_ssize_t n, capacity, ndevices
    cdef Py_ssize_t python_count
    cdef list python_steps
    cdef list keepalive
    cdef object on_error

    def __cinit__(self, Py_ssize_t capacity, on_error):
        self.capacity = max(capacity, 1)
        self.steps = <CStep*>malloc(self.capacity * sizeof(CStep))
        if self.steps == NULL:
            raise MemoryError()
        self.n = 0
        self.devices = NULL
        self.ndevices = 0
        self.python_count = 0
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
        if self.devices != NULL:
            free(self.devices)

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
        self.python_count += 1

    @property
    def pure_c(self):
        """True when every step is a C kernel call (no Python step): :meth:`cycle` may run."""
        return self.python_count == 0

    def set_devices(self, devices):
        """The devices :meth:`cycle` activates, in order: ``(activate, deactivate, struct)`` addresses each.

        A function address of 0 is a step that does nothing (a NULL pointer in the lifecycle capsule).
        """
        cdef Py_ssize_t count = len(devices), d
        cdef CDevice* table = <CDevice*>malloc(max(count, 1) * sizeof(CDevice))
        if table == NULL:
            raise MemoryError()
        for d in range(count):
            activate, deactivate, device = devices[d]
            if not device:
                free(table)
                raise ValueError("NULL device struct")
            table[d].activate = <tvmd_lifecycle_fn><uintptr_t>activate
            table[d].deactivate = <tvmd_lifecycle_fn><uintptr_t>deactivate
            table[d].device = <void*><uintptr_t>device
        if self.devices != NULL:
            free(self.devices)
        self.devices, self.ndevices = table, count

    cdef int _cycle(self, Py_ssize_t* where, int32_t* status) noexcept nogil:
        cdef Py_ssize_t d, i
        cdef int32_t st
        cdef CStep* s
        for d in range(self.ndevices):
            if self.devices[d].activate != NULL:
                st = self.devices[d].activate(self.devices[d].device)
                if st != 0:
                    where[0], status[0] = d, st
                    return C_ACTIVATE_FAILED
        for i in range(self.n):
            s = &self.steps[i]
            st = s.fn(s.params, s.buffers, s.handle)
            if st != 0:
                where[0], status[0] = i, st
                return C_STEP_FAILED
        for d in range(self.ndevices - 1, -1, -1):
            if self.devices[d].deactivate != NULL:
                st = self.devices[d].deactivate(self.devices[d].device)
                if st != 0:
                    where[0], status[0] = d, st
                    return C_DEACTIVATE_FAILED
        return 0

    cpdef object cycle(self, bint release_gil=False):
        """One whole run in C: Activate every device (:meth:`set_devices`), run every step, Deactivate them
        in reverse.  Needs :attr:`pure_c`.

        Stops at the first non-zero status and returns ``(phase, index, status)``: ``ACTIVATE_FAILED`` at
        device ``index`` (the devices before it are active), ``STEP_FAILED`` at step ``index`` (every
        device is active), ``DEACTIVATE_FAILED`` at device ``index`` (the devices before it are still
        active, those after it deactivated).  Returns None when everything succeeded.

        :param release_gil: run without the GIL (the C steps touch no Python object), so other threads
            run meanwhile; costs a GIL hand-over, worth it only when the run is long.
        """
        cdef Py_ssize_t where = 0
        cdef int32_t status = 0
        cdef int phase
        if self.python_count:
            raise RuntimeError("cycle() runs C steps only; this loop has Python steps")
        if release_gil:
            with nogil:
                phase = self._cycle(&where, &status)
        else:
            phase = self._cycle(&where, &status)
        if phase == 0:
            return None
        return (phase, where, status)

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


cdef class Ports:
    """A model's inputs and outputs in the arena: a run's data in and out by ``memcpy``.

    Made once per executor from the arena views of the inputs and outputs.  Each method first checks
    the caller's arrays against the cached shapes and dtypes — exact type ``numpy.ndarray``, C-contiguous,
    equal shape tuple and dtype — and returns False without touching anything when one does not pass:
    the caller then takes the slow path, which explains what is wrong (or copies a strided array).
    """

    cdef tuple in_views, in_shapes, in_dtypes, out_views, out_shapes, out_dtypes
    cdef object ndarray
    cdef Py_ssize_t n_in, n_out

    def __cinit__(self, in_views, out_views):
        import numpy

        self.ndarray = numpy.ndarray
        self.in_views = tuple(in_views)
        self.in_shapes = tuple(v.shape for v in self.in_views)
        self.in_dtypes = tuple(v.dtype for v in self.in_views)
        self.out_views = tuple(out_views)
        self.out_shapes = tuple(v.shape for v in self.out_views)
        self.out_dtypes = tuple(v.dtype for v in self.out_views)
        self.n_in, self.n_out = len(self.in_views), len(self.out_views)

    cdef bint _fits(self, arr, shape, dtype):
        if type(arr) is not self.ndarray:
            return False
        if arr.shape != shape:
            return False
        d = arr.dtype
        return d is dtype or d == dtype

    cpdef bint load(self, inputs) except -1:
        """Copy ``inputs`` (a list or tuple of arrays) into the arena; False (nothing copied) if one does not fit."""
        cdef Py_ssize_t k
        if (type(inputs) is not list and type(inputs) is not tuple) or len(inputs) != self.n_in:
            return False
        for k in range(self.n_in):
            if not self._fits(inputs[k], self.in_shapes[k], self.in_dtypes[k]):
                return False
        for k in range(self.n_in):
            if not _copy(self.in_views[k], inputs[k]):
                return False  # not C-contiguous: the caller copies with numpy (nothing half-done matters)
        return True

    cpdef bint fits_out(self, out) except -1:
        """Whether ``out`` (a list or tuple) has one array per output, of its exact shape and dtype, writable
        and C-contiguous (then :meth:`store` cannot fail)."""
        cdef Py_ssize_t k
        if (type(out) is not list and type(out) is not tuple) or len(out) != self.n_out:
            return False
        cdef Py_buffer b
        for k in range(self.n_out):
            arr = out[k]
            if not self._fits(arr, self.out_shapes[k], self.out_dtypes[k]):
                return False
            try:
                PyObject_GetBuffer(arr, &b, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS)
            except (BufferError, ValueError, TypeError):
                return False  # read-only or strided: the caller's slow path says which, or copies
            PyBuffer_Release(&b)
        return True

    cpdef bint store(self, out) except -1:
        """Copy the outputs into ``out`` (checked by :meth:`fits_out`); False if one array is not C-contiguous
        or not writable (nothing promised then: the caller copies with numpy)."""
        cdef Py_ssize_t k
        for k in range(self.n_out):
            if not _copy(out[k], self.out_views[k]):
                return False
        return True

    cpdef list outputs(self):
        """New arrays holding the outputs."""
        cdef Py_ssize_t k
        return [self.out_views[k].copy() for k in range(self.n_out)]


cdef bint _copy(dst, src) except -1:
    """memcpy ``src`` into ``dst`` (same byte size, checked by the caller); False when either is not a
    C-contiguous buffer or ``dst`` is not writable."""
    cdef Py_buffer d, s
    try:
        PyObject_GetBuffer(dst, &d, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS)
    except (BufferError, ValueError, TypeError):
        return False
    try:
        PyObject_GetBuffer(src, &s, PyBUF_C_CONTIGUOUS)
    except (BufferError, ValueError, TypeError):
        PyBuffer_Release(&d)
        return False
    cdef bint same = d.len == s.len
    if same:
        memmove(d.buf, s.buf, <size_t>s.len)  # memmove: an out array may be the arena's own view
    PyBuffer_Release(&s)
    PyBuffer_Release(&d)
    return same
