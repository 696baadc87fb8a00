# cython: language_level=3, boundscheck=False, wraparound=False
"""Raw host-memory copies for the host device and the framework.

Addresses arrive as Python ints that the framework has already checked lie
inside live buffers; this module only moves bytes.
"""
from libc.stdint cimport uintptr_t
from libc.string cimport memmove


def copy_bytes(size_t dst, size_t src, size_t nbytes):
    """memmove ``nbytes`` from host address ``src`` to ``dst`` (ranges pre-validated)."""
    if nbytes:
        with nogil:
            memmove(<void*><uintptr_t>dst, <const void*><uintptr_t>src, nbytes)
