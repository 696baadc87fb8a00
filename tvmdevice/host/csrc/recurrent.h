/*
 * The int16 arithmetic of TFLM's integer LSTM and SVDF (lstm.c, svdf.c):
 * the 64-bit requantization of int16 x int8 accumulators, and the int16
 * sigmoid and tanh of reference_integer_ops (a 256-entry table of
 * sigmoid(i / 24) in unsigned Q0.16, interpolated).  Right shifts of negative
 * values are floor divisions, written so that C99's implementation-defined
 * signed shift never matters.
 */
#ifndef TVMD_C_RECURRENT_H_
#define TVMD_C_RECURRENT_H_

#include "internal.h"

/* TFLM's sigmoid_table_uint16 (the values of the oracle's own build). */
static const uint16_t tvmd_c_sigmoid_table[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535
};

static inline int64_t tvmd_c_floor_shr64(int64_t x, int shift) {
  return x >= 0 ? x >> shift : -((-(x + 1)) >> shift) - 1;
}

static inline int32_t tvmd_c_floor_shr32(int32_t x, int shift) {
  return (int32_t)tvmd_c_floor_shr64((int64_t)x, shift);
}

static inline int16_t tvmd_c_sat16(int32_t x) {
  return (int16_t)tvmd_clamp_i32(x, INT16_MIN, INT16_MAX);
}

/* MultiplyByQuantizedMultiplier(int64_t, ...): the multiplier rounded to 16
 * bits, one rounding shift; the int64 result truncated to int32 like C++'s
 * conversion.  Shifts are in [-31, 7] (checked at prepare). */
static inline int32_t tvmd_c_requantize_64(int64_t x, int32_t multiplier, int32_t shift) {
  const int64_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
  const int total = 15 - (int)shift;
  const int64_t y = tvmd_c_floor_shr64(x * reduced + ((int64_t)1 << (total - 1)), total);
  return tvmd_c_wrap((uint32_t)(uint64_t)y);
}

/* The table at a / 2^frac_bits (a >= 0), scaled by 2^frac_bits; saturated past its end. */
static inline uint32_t tvmd_c_sigmoid_lookup(uint32_t a, int frac_bits, uint32_t saturated) {
  const uint32_t index = a >> frac_bits;
  if (index >= 255u) return saturated;
  const uint32_t lo = tvmd_c_sigmoid_table[index];
  const uint32_t hi = tvmd_c_sigmoid_table[index + 1u];
  return (lo << frac_bits) + (a & ((1u << frac_bits) - 1u)) * (hi - lo);
}

/* reference_integer_ops::Logistic on int16 Q3.12 with multiplier 0 and shift
 * 0 (so x * 3): Q0.15 out. */
static inline int16_t tvmd_c_sigmoid_q15(int32_t x) {
  const int32_t v = x * 3;
  uint32_t r = tvmd_c_sigmoid_lookup((uint32_t)(v < 0 ? -v : v), 9, 0x7FFFu << 10);
  r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
  return (int16_t)(int32_t)(r >> 10); /* in [0, 32767] */
}

/* reference_integer_ops::Tanh on int16, the input rescaled by
 * (x * multiplier + round) >> shift first: Q0.15 out. */
static inline int16_t tvmd_c_tanh_q15(int32_t x, int32_t multiplier, int32_t shift) {
  const int32_t rounding = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
  const int32_t v = tvmd_c_floor_shr32(x * multiplier + rounding, (int)shift);
  const int32_t r = (int32_t)tvmd_c_sigmoid_lookup((uint32_t)(v < 0 ? -v : v), 8, 0xFFFFu << 8);
  const int32_t t = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
  return (int16_t)tvmd_c_floor_shr32(t, 8); /* in [-32767, 32767] */
}

/* MulElementwise: offsets 0 in, requantized, offset and clamped out. */
static inline int32_t tvmd_c_mul_q15(int32_t a, int32_t b, int32_t multiplier, int32_t shift, int32_t offset,
                                     int32_t lo, int32_t hi) {
  return tvmd_clamp_i32(tvmd_multiply_by_quantized_multiplier(a * b, multiplier, (int)shift) + offset, lo, hi);
}

#endif /* TVMD_C_RECURRENT_H_ */
