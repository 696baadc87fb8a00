# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""Cython bindings of the cmsis-nn C kernels and device lifecycle.

* ``kernel_capsule(index)`` / ``kernel_name(index)``: the ``"tvmdevice.kernel"``
  capsule of kernel ``index`` (its position in
  :data:`tvmdevice_cmsis.kernel_table.ALL_KERNELS`) and its C name.
* ``scratch_bytes(index, address)``: the kernel's scratch size query,
  ``tvmd_cmsis_<kind>_s8_get_buffer_size``, on a filled params struct.
* ``LIFECYCLE``: the ``TVMDeviceCmsisNn<Hook>`` lifecycle functions, as one capsule.

The kernel table is built from the generated ``TVMD_CMSIS_KERNELS`` list and
the params structs are filled by :class:`tvmdevice.params.ParamsStruct`:
nothing here names a kernel or a struct member.
"""
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int8_t, int32_t, uintptr_t

from tvmdevice.capsules cimport kernel_capsule as _kernel_capsule, lifecycle_capsule
from tvmdevice.kernel_abi cimport tvmd_kernel_t
from tvmdevice.lifecycle_abi cimport tvmd_lifecycle_t

cdef extern from "tvmd_cmsis_nn.h" nogil:
    enum: TVMD_CMSIS_NUM_KINDS
    enum: TVMD_CMSIS_NUM_KERNELS
    ctypedef struct tvmd_cmsis_quant_t:
        pass
    int tvmd_cmsis_set_simd(int enabled)
    int tvmd_cmsis_set_simd_level(int level)
    int tvmd_cmsis_max_simd_level()
    int tvmd_cmsis_simd_levels()
    int tvmd_cmsis_simd_emulated()
    void tvmd_cmsis_requantize_s8(const int32_t* acc, const int32_t* multiplier, const int32_t* shift,
                                  int32_t n, const tvmd_cmsis_quant_t* q, int8_t* out)

cdef extern from "tvmdevice/quant.h" nogil:
    int32_t tvmd_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int shift)

# One tvmd_kernel_t and one scratch size query per kernel, in kind order,
# expanded from the generated TVMD_CMSIS_KERNELS list; the lifecycle table.
cdef extern from *:
    """
    #include "tvmdevice/kernel_abi.h"
    #include "tvmdevice/lifecycle_abi.h"
    #include "tvm_device_cmsis_nn.h"
    #include "tvmd_cmsis_nn.h"

    static const tvmd_lifecycle_t tvmd_cmsis_lifecycle = TVMD_LIFECYCLE(CmsisNn);

    #define TVMD_CMSIS_KERNEL_ENTRY(KIND, fn, params_t) TVMD_KERNEL_INIT(#fn, fn),
    static const tvmd_kernel_t tvmd_cmsis_kernel_table[TVMD_CMSIS_NUM_KERNELS] = {
        TVMD_CMSIS_KERNELS(TVMD_CMSIS_KERNEL_ENTRY)
    };

    typedef size_t (*tvmd_cmsis_scratch_fn)(const void* params);
    #define TVMD_CMSIS_SCRATCH_QUERY(KIND, fn, params_t) \\
        static size_t fn##_scratch(const void* params) { return fn##_get_buffer_size((const params_t*)params); }
    TVMD_CMSIS_KERNELS(TVMD_CMSIS_SCRATCH_QUERY)
    #define TVMD_CMSIS_SCRATCH_ENTRY(KIND, fn, params_t) fn##_scratch,
    static const tvmd_cmsis_scratch_fn tvmd_cmsis_scratch_table[TVMD_CMSIS_NUM_KERNELS] = {
        TVMD_CMSIS_KERNELS(TVMD_CMSIS_SCRATCH_ENTRY)
    };
    """
    const tvmd_lifecycle_t tvmd_cmsis_lifecycle
    ctypedef size_t (*tvmd_cmsis_scratch_fn)(const void* params)
    const tvmd_kernel_t* tvmd_cmsis_kernel_table
    const tvmd_cmsis_scratch_fn* tvmd_cmsis_scratch_table

#: Number of operator kernels (``call_counts`` slots) this build has (``TVMD_CMSIS_NUM_KINDS``).
NUM_KINDS = TVMD_CMSIS_NUM_KINDS
#: Number of kernels this build has, packing variants included (``TVMD_CMSIS_NUM_KERNELS``).
NUM_KERNELS = TVMD_CMSIS_NUM_KERNELS


cdef int _index(int index) except -1:
    if not 0 <= index < TVMD_CMSIS_NUM_KERNELS:
        raise IndexError(f"cmsis-nn has {TVMD_CMSIS_NUM_KERNELS} kernels, no kernel {index}")
    return index


def kernel_capsule(int index):
    """The ``"tvmdevice.kernel"`` capsule of kernel ``index``."""
    return _kernel_capsule(&tvmd_cmsis_kernel_table[_index(index)])


def kernel_name(int index):
    """The C name of kernel ``index`` (``tvmd_cmsis_<kind>_s8``)."""
    return tvmd_cmsis_kernel_table[_index(index)].name.decode()


def scratch_bytes(int index, uintptr_t address):
    """Kernel ``index``'s scratch size query on the params struct at ``address``
    (the struct must be of that kernel's params type and stay alive during the call)."""
    if address == 0:
        raise ValueError("NULL params struct")
    return tvmd_cmsis_scratch_table[_index(index)](<const void*>address)


# -------------------------------------------------------------- lifecycle
#: The ``"tvmdevice.lifecycle"`` capsule of ``TVMDeviceCmsisNn{Init,...,Destroy}``
#: (``tvmdevice.plugin.CLifecycle`` makes the lifecycle hooks of it).
LIFECYCLE = lifecycle_capsule(&tvmd_cmsis_lifecycle)


# ----------------------------------------------------------------- testing
def set_simd(bint enabled):
    """Use the CPU's accelerated kernel path (default) or force the portable C one.

    Both compute identical values; tests run each.  Returns whether the
    accelerated path is in use afterwards (False on CPUs without it).
    """
    return bool(tvmd_cmsis_set_simd(1 if enabled else 0))


#: The host kernels' SIMD levels, by number (``tvmd_cmsis_set_simd_level``): the portable C, AVX2,
#: AVX-512 (F/BW), AVX2 + AVX-VNNI and AVX-512 + AVX-512 VNNI (the VNNI levels add the int8 VNNI GEMM
#: of the convolutions and dense layers to their base level's kernels).
SIMD_LEVELS = ("portable", "avx2", "avx512", "avxvnni", "avx512vnni")

#: What to do to run a level this CPU lacks (test skips and errors say it).
EMULATION_HINT = "install libsimde-dev and build with TVMDEVICE_CMSIS_SIMD_EMULATION=1"


def simd_levels():
    """The SIMD levels this CPU runs, in :data:`SIMD_LEVELS` order ("portable" always; all of them when
    :func:`simd_emulated`).  A set, not a chain: a Zen 4 has avx512vnni but not avxvnni."""
    cdef int bits = tvmd_cmsis_simd_levels()
    return tuple(name for i, name in enumerate(SIMD_LEVELS) if bits & (1 << i))


def simd_emulated():
    """Whether this build emulates the x86 SIMD intrinsics (SIMDe, ``TVMDEVICE_CMSIS_SIMD_EMULATION=1``):
    then every level runs on any x86-64 CPU, bit-exact and slow (never a speed figure)."""
    return bool(tvmd_cmsis_simd_emulated())


def max_simd_level():
    """The name of the level the kernels use by default: the highest of :func:`simd_levels`."""
    return SIMD_LEVELS[tvmd_cmsis_max_simd_level()]


def set_simd_level(str name):
    """Force the kernels onto one SIMD level (a name in :data:`SIMD_LEVELS`).

    All levels compute identical values; tests run each level the CPU has.
    ``set_simd(True)`` returns to :func:`max_simd_level`.

    :raises ValueError: ``name`` is not a level, or this CPU lacks it.
    """
    if name not in SIMD_LEVELS:
        raise ValueError(f"cmsis-nn: unknown SIMD level {name!r}; use one of {', '.join(SIMD_LEVELS)}")
    if tvmd_cmsis_set_simd_level(SIMD_LEVELS.index(name)) < 0:
        raise ValueError(f"cmsis-nn: this CPU lacks the {name} SIMD level (it runs {', '.join(simd_levels())}; "
                         f"{EMULATION_HINT} to run every level emulated)")


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
    from tvmdevice.params import ParamsStruct

    from tvmdevice_cmsis.kernel_table import QUANT

    q = ParamsStruct(QUANT, {"input_offset": 0, "output_offset": output_offset, "act_min": act_min,
                             "act_max": act_max})
    cdef const tvmd_cmsis_quant_t* qp = <const tvmd_cmsis_quant_t*>PyCapsule_GetPointer(q.capsule,
                                                                                        b"tvmdevice.params")
    n = acc.shape[0]
    _check_requantize_args(acc, multiplier, shift, out)
    if n:
        tvmd_cmsis_requantize_s8(&acc[0], &multiplier[0], &shift[0], <int32_t>n, qp, &out[0])


def requantize_reference(const int32_t[::1] acc, const int32_t[::1] multiplier, const int32_t[::1] shift,
                         int32_t output_offset, int32_t act_min, int32_t act_max, int8_t[::1] out):
    """The same through ``tvmd_multiply_by_quantized_multiplier`` of the core's quant.h."""
    cdef Py_ssize_t i, n = acc.shape[0]
    cdef int32_t v
    _check_requantize_args(acc, multiplier, shift, out)
    for i in range(n):
        v = tvmd_multiply_by_quantized_multiplier(acc[i], multiplier[i], shift[i]) + output_offset
        out[i] = <int8_t>(act_min if v < act_min else (act_max if v > act_max else v))
