/*
 * LOGISTIC and TANH on int16: TFLM's reference_integer_ops::Logistic and
 * Tanh for int16.  The input is rescaled to 3 * 4096 steps per unit (by
 * 3 << input_left_shift for a power-of-two input scale, else by
 * input_multiplier and a rounding right shift by input_left_shift), and the
 * result interpolated between entries of TFLM's table of sigmoid(i / 24) in
 * unsigned Q0.16 (tanh(x) = 2 sigmoid(2x) - 1 reads the same table at twice
 * the step).  Outputs are Q0.15.
 */
#include "internal.h"

/* TFLM's sigmoid(i / 24) table, Q0.16 (its values, not a rounding of the formula). */
static const uint16_t kSigmoidTable[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149,
    40794, 41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369,
    47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169,
    53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370,
    60565, 60753, 60935, 61110, 61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302,
    62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186, 63279, 63368, 63454, 63536,
    63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786,
    64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079,
    65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234, 65246, 65258,
    65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474,
    65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498,
    65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522,
    65523, 65523, 65524, 65524, 65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528,
    65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530, 65530, 65530, 65531, 65531,
    65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534,
    65534, 65534, 65534, 65535,
};

/* floor(x / 2^n) for n < 32, defined for negative x. */
static inline int32_t floor_shift(int32_t x, int n) { return x >= 0 ? x >> n : -1 - ((-1 - x) >> n); }

/* The input in 3 * 4096 steps per unit: (x * multiplier + round) >> shift. */
static inline int32_t rescale(int32_t x, int32_t multiplier, int32_t left_shift) {
  if (multiplier == 0) { /* power-of-two input scale */
    multiplier = 3 << left_shift;
    left_shift = 0;
  }
  const int32_t round = left_shift > 0 ? (int32_t)1 << (left_shift - 1) : 0;
  return floor_shift(x * multiplier + round, (int)left_shift);
}

/* Interpolated table value at |x| with `bits` fractional bits per entry, scaled by 2^bits. */
static inline uint32_t interpolate(uint32_t abs_x, int bits, uint32_t saturated) {
  const uint32_t uh = abs_x >> bits;
  if (uh >= 255) return saturated;
  const uint32_t ua = kSigmoidTable[uh], ub = kSigmoidTable[uh + 1];
  return (ua << bits) + (abs_x & ((1u << bits) - 1u)) * (ub - ua);
}

int32_t tvmd_c_logistic_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_activation_s16_params_t* p = (const tvmd_c_activation_s16_params_t*)params;
  const int16_t* input = (const int16_t*)buffers[0];
  int16_t* output = (int16_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    const int32_t x = rescale(input[i], p->input_multiplier, p->input_left_shift);
    uint32_t result = interpolate((uint32_t)(x < 0 ? -x : x), 9, 0x7FFFu << 10);
    result = x >= 0 ? result + (1u << 9) : (1u << 25) - result + (1u << 9) - 1u;
    output[i] = (int16_t)(result >> 10);
  }
  return TVMD_OK;
}

int32_t tvmd_c_tanh_s16(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_activation_s16_params_t* p = (const tvmd_c_activation_s16_params_t*)params;
  const int16_t* input = (const int16_t*)buffers[0];
  int16_t* output = (int16_t*)buffers[1];
  (void)resource_handle;
  for (int32_t i = 0; i < p->size; ++i) {
    const int32_t x = rescale(input[i], p->input_multiplier, p->input_left_shift);
    const int32_t r = (int32_t)interpolate((uint32_t)(x < 0 ? -x : x), 8, 0xFFFFu << 8);
    const int32_t result = x >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    output[i] = (int16_t)floor_shift(result, 8);
  }
  return TVMD_OK;
}
