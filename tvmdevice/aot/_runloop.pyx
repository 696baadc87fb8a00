# cython: language_level=3, boundscheck=False, wraparound=False
"""The executor's run loop: pre-bound C kernel calls with no Python in between.

Each step is either a C kernel call — function pointer, params pointer,
buffer-pointer array and resource handle, all resolved when the executor is
created — or a Python callable (host reference kernels, copies).  Running a
stretch of C steps costs a few nanoseconds per step.

When every step is C and every device the steps use has its lifecycle in C
(:class:`tvmdevice.plugin.CLifecycle`), :meth:`RunLoop.cycle` runs a
whole run — Activate each device, every step, Deactivate in reverse — in C,
optionally with the GIL released; on the first non-zero status it stops and
says where, and the executor turns that into the device's state and the error
the hook would have raised.
"""
from cpython.buffer cimport PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.exc cimport PyErr_CheckSignals
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.pythread cimport (NOWAIT_LOCK, PyThread_acquire_lock, PyThread_allocate_lock, PyThread_free_lock,
                               PyThread_release_lock, PyThread_type_lock)
from libc.stdint cimport int32_t, uintptr_t
from libc.stdlib cimport free, malloc
from libc.string cimport memmove

from tvmdevice.kernel_abi cimport tvmd_kernel_fn, tvmd_kernel_t
from tvmdevice.lifecycle_abi cimport tvmd_lifecycle_fn

from tvmdevice._abi import kernel_info, params_address


cdef extern from "pythread.h":
    ctypedef enum PyLockStatus:
        PY_LOCK_FAILURE, PY_LOCK_ACQUIRED, PY_LOCK_INTR
    PyLockStatus PyThread_acquire_lock_timed(PyThread_type_lock, long long microseconds, int intr_flag) nogil


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
    cdef char** in_data  # the arena views' first bytes: the arena never moves, the views are kept
    cdef Py_ssize_t* in_nbytes
    cdef char** out_data
    cdef Py_ssize_t* out_nbytes
    cdef bint direct  # every view is a C-contiguous block: run_batch may memcpy them all

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
        self.in_data = <char**>malloc(max(self.n_in, 1) * sizeof(char*))
        self.in_nbytes = <Py_ssize_t*>malloc(max(self.n_in, 1) * sizeof(Py_ssize_t))
        self.out_data = <char**>malloc(max(self.n_out, 1) * sizeof(char*))
        self.out_nbytes = <Py_ssize_t*>malloc(max(self.n_out, 1) * sizeof(Py_ssize_t))
        if self.in_data == NULL or self.in_nbytes == NULL or self.out_data == NULL or self.out_nbytes == NULL:
            raise MemoryError()
        cdef Py_ssize_t k
        # A view that is not a C-contiguous block (never the case for the arena's; a constant output's
        # data might be) gets NULL: whatever would memcpy it declines, and numpy does the copy.
        self.direct = True
        for k in range(self.n_in):
            view = self.in_views[k]
            direct = view.flags.c_contiguous and view.flags.writeable
            self.in_data[k] = <char*><uintptr_t>view.__array_interface__["data"][0] if direct else NULL
            self.in_nbytes[k] = view.nbytes
            self.direct = self.direct and direct
        for k in range(self.n_out):
            view = self.out_views[k]
            direct = view.flags.c_contiguous
            self.out_data[k] = <char*><uintptr_t>view.__array_interface__["data"][0] if direct else NULL
            self.out_nbytes[k] = view.nbytes
            self.direct = self.direct and direct

    def __dealloc__(self):
        free(self.in_data)
        free(self.in_nbytes)
        free(self.out_data)
        free(self.out_nbytes)

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
        cdef Py_buffer b
        for k in range(self.n_in):
            if self.in_data[k] == NULL:
                return False
            try:
                PyObject_GetBuffer(inputs[k], &b, PyBUF_C_CONTIGUOUS)
            except (BufferError, ValueError, TypeError):
                return False  # not C-contiguous: the caller copies with numpy (nothing half-done matters)
            if b.len == self.in_nbytes[k]:
                memmove(self.in_data[k], b.buf, <size_t>b.len)
            PyBuffer_Release(&b)
            if b.len != self.in_nbytes[k]:
                return False
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


cdef class RunMutex:
    """A non-reentrant lock, as :class:`threading.Lock` (``acquire(blocking=True)``, ``release``, ``locked``,
    ``with``), that :class:`CRun` also takes from C without a Python call.  A blocking ``acquire`` waits
    with the GIL released and stays interruptible (Ctrl-C is checked every 20 ms)."""

    cdef PyThread_type_lock _lock
    cdef bint _held

    def __cinit__(self):
        self._lock = PyThread_allocate_lock()
        if self._lock == NULL:
            raise MemoryError()
        self._held = False

    def __dealloc__(self):
        if self._lock != NULL:
            if self._held:
                PyThread_release_lock(self._lock)
            PyThread_free_lock(self._lock)

    cdef inline bint try_take(self) noexcept:
        if PyThread_acquire_lock(self._lock, NOWAIT_LOCK):
            self._held = True
            return True
        return False

    cdef inline void give(self) noexcept:
        self._held = False
        PyThread_release_lock(self._lock)

    def acquire(self, bint blocking=True):
        """Take the lock; with ``blocking`` False, only if free.  True when taken."""
        cdef PyLockStatus got
        if self.try_take():
            return True
        if not blocking:
            return False
        while True:
            with nogil:
                got = PyThread_acquire_lock_timed(self._lock, 20000, 0)
            if got == PY_LOCK_ACQUIRED:
                self._held = True
                return True
            PyErr_CheckSignals()

    def release(self):
        """Release the lock (a RuntimeError when it is not held, as threading.Lock)."""
        if not self._held:
            raise RuntimeError("release unlocked lock")
        self.give()

    def locked(self):
        """True while the lock is held."""
        return self._held

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


cdef class CRun:
    """A whole run in one call: inputs in (:class:`Ports`), :meth:`RunLoop.cycle`, outputs out.

    For an executor whose run :meth:`RunLoop.cycle` can do.  :meth:`run` first checks, without
    changing anything, that the inputs (and ``out``) fit and that every device is in ``ready`` state
    and not faulted — the lifecycle state machine validated once per run — and returns None when
    not: the executor then takes its Python path, which explains what is wrong.
    """

    cdef Ports ports
    cdef RunLoop loop
    cdef tuple devices
    cdef object ready
    cdef public bint release_gil
    cdef RunMutex _mutex  # the executor's lock (run_locked, invoke_locked)
    cdef bint _retired

    def __cinit__(self, Ports ports, RunLoop loop, devices, ready, bint release_gil=False, RunMutex lock=None):
        self.ports, self.loop, self.devices, self.ready = ports, loop, tuple(devices), ready
        self.release_gil = release_gil
        self._mutex = lock
        self._retired = False

    def retire(self):
        """Refuse every later :meth:`run_locked` and :meth:`invoke_locked` (they decline): called by the
        executor's ``close`` with the lock held, before anything is freed."""
        self._retired = True

    cpdef object run_locked(self, inputs, out=None):
        """:meth:`run` holding the executor's lock (given at creation), taken without waiting.

        :returns: the outputs (a list; the lock released); None when nothing was done (the lock is busy,
            this run is retired or :meth:`run` declined; the lock released); ``(phase, index, status)`` when
            the cycle stopped on a failure — **the lock still held**: the caller turns that into the
            devices' state and the error, then releases it.
        """
        if self._mutex is None or not self._mutex.try_take():
            return None
        done = None
        try:
            if not self._retired:
                done = self.run(inputs, out)
        except BaseException:
            self._mutex.give()
            raise
        if type(done) is not tuple:
            self._mutex.give()
        return done

    cpdef object invoke_locked(self):
        """:meth:`invoke` holding the executor's lock, taken without waiting: None (done; released), False
        (nothing done: the lock busy, retired or a device not ready; released), or where it stopped (the
        lock **still held**, as :meth:`run_locked`)."""
        if self._mutex is None or not self._mutex.try_take():
            return False
        answer = False
        try:
            if not self._retired:
                answer = self.invoke()
        except BaseException:
            self._mutex.give()
            raise
        if type(answer) is not tuple:
            self._mutex.give()
        return answer

    cpdef bint ready_to_run(self):
        """Every device in the ``ready`` state and not faulted (the state machine's check, once per run)."""
        for dev in self.devices:
            if dev.state is not self.ready or dev.faulted:
                return False
        return True

    cpdef object invoke(self):
        """:meth:`RunLoop.cycle` on the inputs in place; False when a device is not ready (nothing done)."""
        if not self.ready_to_run():
            return False
        return self.loop.cycle(self.release_gil)

    def run_batch(self, stacked, out, Py_ssize_t start, Py_ssize_t stop):
        """Samples ``[start, stop)`` of a batch, every one in C, the GIL released for the whole stretch when
        :attr:`release_gil`.  ``stacked[k]`` is input ``k`` as one C-contiguous ``(N, *shape)`` array and
        ``out[k]`` output ``k`` as a writable one (shapes and dtypes checked by the caller).

        :returns: None when every sample ran; ``(phase, index, status, sample)`` when one stopped (the
            samples before it are done); False when a device is not ready or an array is not a
            C-contiguous buffer of ``N`` samples (nothing done).
        """
        if not self.ready_to_run() or not self.ports.direct:
            return False
        cdef Ports ports = self.ports
        cdef Py_ssize_t n_in = ports.n_in, n_out = ports.n_out, k, i, where = 0
        cdef int32_t status = 0
        cdef int phase = 0
        cdef Py_buffer* bufs = <Py_buffer*>malloc(max(n_in + n_out, 1) * sizeof(Py_buffer))
        if bufs == NULL:
            raise MemoryError()
        cdef Py_ssize_t got = 0, per
        cdef int flags
        cdef bint fits = True
        try:
            for k in range(n_in + n_out):
                flags = PyBUF_C_CONTIGUOUS if k < n_in else PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE
                try:
                    PyObject_GetBuffer(stacked[k] if k < n_in else out[k - n_in], &bufs[k], flags)
                except (BufferError, ValueError, TypeError):
                    fits = False
                    break
                got += 1
                per = ports.in_nbytes[k] if k < n_in else ports.out_nbytes[k - n_in]
                if bufs[k].len < stop * per:
                    fits = False
                    break
            if not fits:
                return False
            if self.release_gil:
                with nogil:
                    phase = self._batch(bufs, start, stop, &i, &where, &status)
            else:
                phase = self._batch(bufs, start, stop, &i, &where, &status)
        finally:
            for k in range(got):
                PyBuffer_Release(&bufs[k])
            free(bufs)
        if phase == 0:
            return None
        return (phase, where, status, i)

    cdef int _batch(self, Py_buffer* bufs, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t* sample,
                    Py_ssize_t* where, int32_t* status) noexcept nogil:
        cdef Py_ssize_t i, k
        cdef Py_ssize_t n_in = self.ports.n_in, n_out = self.ports.n_out
        cdef char** in_data = self.ports.in_data
        cdef char** out_data = self.ports.out_data
        cdef Py_ssize_t* in_nbytes = self.ports.in_nbytes
        cdef Py_ssize_t* out_nbytes = self.ports.out_nbytes
        cdef int phase
        for i in range(start, stop):
            sample[0] = i
            for k in range(n_in):
                memmove(in_data[k], <char*>bufs[k].buf + i * in_nbytes[k], <size_t>in_nbytes[k])
            phase = self.loop._cycle(where, status)
            if phase != 0:
                return phase
            for k in range(n_out):
                memmove(<char*>bufs[n_in + k].buf + i * out_nbytes[k], out_data[k], <size_t>out_nbytes[k])
        return 0

    cpdef object run(self, inputs, out=None):
        """The outputs (a new list, or ``out``'s arrays in a list); ``(phase, index, status)`` when the cycle
        stopped on a failure (see :meth:`RunLoop.cycle`; the inputs were loaded); None when nothing was done."""
        if out is not None and not self.ports.fits_out(out):
            return None
        if not self.ready_to_run():
            return None
        if not self.ports.load(inputs):
            return None
        failed = self.loop.cycle(self.release_gil)
        if failed is not None:
            return failed
        if out is None:
            return self.ports.outputs()
        self.ports.store(out)  # cannot fail: fits_out checked writable C-contiguous arrays
        return list(out)
