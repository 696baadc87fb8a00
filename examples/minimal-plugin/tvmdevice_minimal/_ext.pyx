from tvmdevice.capsules cimport kernel_capsule, lifecycle_capsule, tvmd_kernel_t, tvmd_lifecycle_t

cdef extern from *:  # defined in csrc/minimal.c
    "extern const tvmd_lifecycle_t minimal_lifecycle; extern const tvmd_kernel_t minimal_add_kernel;"
    const tvmd_lifecycle_t minimal_lifecycle
    const tvmd_kernel_t minimal_add_kernel

LIFECYCLE = lifecycle_capsule(&minimal_lifecycle)
ADD_KERNEL = kernel_capsule(&minimal_add_kernel)
