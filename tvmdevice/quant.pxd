# Cython view of tvmdevice/quant.h (TFLM double-rounding requantization).
from libc.stdint cimport int32_t

cdef extern from "tvmdevice/quant.h" nogil:
    int32_t tvmd_sat_rounding_doubling_high_mul(int32_t a, int32_t b)
    int32_t tvmd_rounding_divide_by_pot(int32_t x, int exponent)
    int32_t tvmd_multiply_by_quantized_multiplier(int32_t x, int32_t multiplier, int shift)
    int32_t tvmd_clamp_i32(int32_t x, int32_t lo, int32_t hi)
