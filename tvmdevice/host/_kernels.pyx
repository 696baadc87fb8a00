# cython: language_level=3
"""The host device's C reference kernels as ``"tvmdevice.kernel"`` capsules.

The kernel table is built from the generated ``TVMD_C_KERNELS`` list
(:mod:`tvmdevice.host.kernel_table`), so its order is
:data:`~tvmdevice.host.kernel_table.KERNELS`' order.  The params capsules come
from :class:`tvmdevice.params.ParamsStruct`.
"""
from tvmdevice.capsules cimport kernel_capsule as capsule_of
from tvmdevice.kernel_abi cimport tvmd_kernel_t

cdef extern from *:
    """
    #include "tvmdevice/kernel_abi.h"
    #include "tvmd_c_kernels.h"
    #define TVMD_C_TABLE_ENTRY(fn, params_type) TVMD_KERNEL_INIT(#fn, fn),
    static const tvmd_kernel_t tvmd_c_kernel_table[] = {TVMD_C_KERNELS(TVMD_C_TABLE_ENTRY)};
    #define TVMD_C_NUM_KERNELS ((int)(sizeof(tvmd_c_kernel_table) / sizeof(tvmd_c_kernel_table[0])))
    """
    const tvmd_kernel_t tvmd_c_kernel_table[]
    int TVMD_C_NUM_KERNELS

#: Kernels in the table.
NUM_KERNELS = TVMD_C_NUM_KERNELS


def kernel_capsule(int index):
    """The ``"tvmdevice.kernel"`` capsule of entry ``index`` of the kernel table."""
    if not 0 <= index < TVMD_C_NUM_KERNELS:
        raise IndexError(f"the host kernel table has {TVMD_C_NUM_KERNELS} entries, not {index + 1}")
    return capsule_of(&tvmd_c_kernel_table[index])
