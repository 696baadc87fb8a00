/*
 * SOFTMAX, int8 -> int8 along the last axis: TFLM's
 * reference_ops::Softmax<int8_t, int8_t>, gemmlowp's fixed-point path
 * (CMSIS-NN's arm_softmax_s8 computes the same values).
 *
 * Per row: differences to the row maximum are rescaled to Q5.26
 * (input_multiplier, input_left_shift), exponentiated with gemmlowp's
 * exp_on_negative_values, summed in Q12.19, and each exponential is
 * multiplied by the reciprocal of the sum and shifted down to 8 bits.
 * Entries further than diff_min below the maximum output -128.  The
 * int8 -> int16 kernel (softmax_s16.c) shares the rows with a 16-bit
 * output (tvmd_cmsis_softmax_gemmlowp).
 *
 * gemmlowp's int32 additions wrap; they are done in uint32 here so the
 * wrap-around is defined C.
 *
 * Helium (MVE, mprofile.h) computes a row four entries at a time (the last
 * step tail-predicated), the maximum sixteen at a time: every gemmlowp step
 * has its lane-wise twin with the same bits - SaturatingRoundingDoublingHighMul
 * is VQRDMULH (mprofile.h), RoundingDivideByPOT a rounding VRSHR after
 * subtracting 1 from negative lanes (as tvmd_cmsis_requantize_mve),
 * SaturatingRoundingMultiplyByPOT the saturating VQSHL, the wrapping
 * additions VADD / VSUB, and each conditional a predicated select.  The
 * sum of exponentials wraps as the plain path's, in any order.  DSP and
 * plain C run the scalar loops below, DSP taking the maximum four entries per
 * word (SSUB8 / SEL); the exponentials (gemmlowp's 32-bit fixed point, twice
 * per entry) are most of the cost and have no cheaper DSP form: the DSP
 * extension has no 32 x 32-bit SIMD multiply.  On x86-64 the vector levels
 * memoize the exponentials per distance below the row maximum
 * (softmax_rows_memoized) when a call has more than 256 entries, computing
 * the tables 8 distances at a time (simd_x86_softmax.c); the portable
 * level, and shorter calls, run the plain loops.
 */
#include "internal.h"
#include "mprofile.h"

#define SCALED_DIFF_INTEGER_BITS 5
#define ACCUMULATION_INTEGER_BITS 12


/* x / 2^exponent, rounded; exponents of 32 or more (possible only for rows
 * of 512+ near-maximal entries) give the mathematically rounded 0 instead of
 * an undefined shift. */
static inline int32_t rdpot(int32_t x, int exponent) {
  if (exponent >= 32) return 0;
  return tvmd_rounding_divide_by_pot(x, exponent);
}

/* gemmlowp's exp_on_negative_values for Q5.26 input (tvmdevice/fixedpoint.h). */
static inline int32_t exp_on_negative_values(int32_t a) {
  return tvmd_fp_exp_on_negative_values(a, SCALED_DIFF_INTEGER_BITS);
}

#if TVMD_CMSIS_MVE
/* rdpot on four lanes, 0 < exponent < 32: halves away from zero. */
#define TVMD_RDPOT_N(x, e) vrshrq_n_s32(vqaddq_s32((x), vshrq_n_s32((x), 31)), (e))

static inline int32x4_t rdpot_mve(int32x4_t x, int exponent) {
  if (exponent >= 32) return vdupq_n_s32(0);
  return vrshlq_s32(vqaddq_s32(x, vshrq_n_s32(x, 31)), vdupq_n_s32(-exponent));
}

static inline int32x4_t exp_interval_mve(int32x4_t a) {
  const int32_t constant_term = 1895147668, constant_1_over_3 = 715827883;
  const int32x4_t x = vaddq_n_s32(a, 1 << 28);
  const int32x4_t x2 = vqrdmulhq_s32(x, x);
  const int32x4_t x3 = vqrdmulhq_s32(x2, x);
  const int32x4_t x4 = vqrdmulhq_s32(x2, x2);
  const int32x4_t x4_over_4 = TVMD_RDPOT_N(x4, 2);
  const int32x4_t inner = vaddq_s32(vqrdmulhq_n_s32(vaddq_s32(x4_over_4, x3), constant_1_over_3), x2);
  const int32x4_t poly = TVMD_RDPOT_N(inner, 1);
  return vaddq_n_s32(vqrdmulhq_n_s32(vaddq_s32(x, poly), constant_term), constant_term);
}

static inline int32x4_t exp_on_negative_values_mve(int32x4_t a) {
  const int fractional_bits = 31 - SCALED_DIFF_INTEGER_BITS;
  const int32_t one_quarter = (int32_t)1 << (fractional_bits - 2);
  const int32x4_t a_mod = vsubq_n_s32(vandq_s32(a, vdupq_n_s32(one_quarter - 1)), one_quarter);
  int32x4_t result = exp_interval_mve(vqshlq_n_s32(a_mod, SCALED_DIFF_INTEGER_BITS));
  const int32x4_t remainder = vsubq_s32(a_mod, a);
  static const int32_t multipliers[7] = {1672461947, 1302514674, 790015084, 290630308,
                                         39332535,   720401,     242};
  for (int k = -2; k <= 4; k++) {
    /* The bit moved to the sign: a plain AND-and-compare trips GCC 12's combiner (an ICE). */
    const mve_pred16_t bit = vcmpltq_n_s32(vshlq_r_s32(remainder, 31 - (fractional_bits + k)), 0);
    result = vpselq_s32(vqrdmulhq_n_s32(result, multipliers[k + 2]), result, bit);
  }
  return vpselq_s32(vdupq_n_s32(INT32_MAX), result, vcmpeqq_n_s32(a, 0));
}

/* The entries of x (lanes under t) minus the maximum, rescaled to Q5.26; *in is set where diff >= diff_min. */
static inline int32x4_t scaled_mve(const tvmd_cmsis_softmax_params_t* p, const int8_t* x, int32_t max_in_row,
                                   mve_pred16_t t, mve_pred16_t* in) {
  const int32x4_t diff = vsubq_n_s32(vldrbq_z_s32(x, t), max_in_row);
  *in = (mve_pred16_t)(vcmpgeq_n_s32(diff, p->diff_min) & t);
  return vqrdmulhq_n_s32(vshlq_r_s32(diff, p->input_left_shift), p->input_multiplier);
}
#endif

#if TVMD_CMSIS_DSP && !TVMD_CMSIS_MVE
/* The row's maximum four entries per word (SSUB8 / SEL), then the word's four bytes and the tail. */
static int32_t max_dsp(const int8_t* x, int32_t depth) {
  uint32_t max4 = 0x80808080u; /* -128 in every byte */
  int32_t c = 0;
  for (; c + 4 <= depth; c += 4) max4 = tvmd_cmsis_max_s8x4(max4, tvmd_cmsis_read_s8x4(x + c));
  int32_t m = INT8_MIN;
  for (int k = 0; k < 32; k += 8) m = tvmd_cmsis_max(m, (int8_t)(uint8_t)(max4 >> k));
  for (; c < depth; c++) m = tvmd_cmsis_max(m, x[c]);
  return m;
}
#endif

/* GetReciprocal(sum_of_exps, 12): 1 / sum as a Q0.31 mantissa (returned)
 * and the exponent of the final rounding shift to out_bits. */
static inline int32_t reciprocal(int32_t sum_of_exps, int out_bits, int* exponent) {
  int num_bits_over_unit;
  const int32_t scale = tvmd_fp_get_reciprocal(sum_of_exps, ACCUMULATION_INTEGER_BITS, &num_bits_over_unit);
  *exponent = num_bits_over_unit + 31 - out_bits;
  return scale;
}

/* An entry's output: its exponential (Q0.31) times the reciprocal of the
 * row's sum, rounded to out_bits, offset to out_min and clamped. */
static inline int32_t output_value(int32_t exp, int32_t shifted_scale, int exponent, int32_t out_min,
                                   int32_t out_max) {
  const int32_t unsat = rdpot(tvmd_fp_mul(shifted_scale, exp), exponent);
  return tvmd_cmsis_min(tvmd_cmsis_max(unsat + out_min, out_min), out_max);
}

/* output[i] = v as int16 or int8. */
static inline void store_value(void* output, size_t i, int out_bits, int32_t v) {
  if (out_bits == 16) {
    ((int16_t*)output)[i] = (int16_t)v;
  } else {
    ((int8_t*)output)[i] = (int8_t)v;
  }
}

#if TVMD_CMSIS_X86
/* The host's vector levels (AVX2 and up): the same gemmlowp arithmetic,
 * memoized.  An entry's exponential depends only on its distance d below
 * its row's maximum (0..255 for int8) and the params, so each distance any
 * row reaches is exponentiated once per call (0 where -d < diff_min: an
 * excluded entry adds 0 and outputs out_min, as an exponential of 0 does);
 * a row whose distances are fewer than its entries maps them through a
 * table of its outputs. */
static void softmax_rows_memoized(const tvmd_cmsis_softmax_params_t* p, const int8_t* input, void* output,
                                  int out_bits) {
  const int32_t depth = p->depth;
  const int32_t out_min = out_bits == 16 ? INT16_MIN : INT8_MIN;
  const int32_t out_max = out_bits == 16 ? INT16_MAX : INT8_MAX;
  int32_t span = 0; /* the largest distance below a row's maximum */
  for (int32_t r = 0; r < p->rows; r++) {
    int32_t lo, hi;
    tvmd_cmsis_softmax_row_range_avx2(input + (size_t)r * (size_t)depth, depth, &lo, &hi);
    span = tvmd_cmsis_max(span, hi - lo);
  }
  int32_t exps[256], terms[256], outs[256];
  tvmd_cmsis_softmax_exps_avx2(p, span, exps, terms);
  for (int32_t r = 0; r < p->rows; r++) {
    const int8_t* x = input + (size_t)r * (size_t)depth;
    int32_t lo, max_in_row;
    tvmd_cmsis_softmax_row_range_avx2(x, depth, &lo, &max_in_row);
    int32_t sum_of_exps = 0; /* Q12.19, wrapping */
    for (int32_t c = 0; c < depth; c++) sum_of_exps = tvmd_add_wrap_i32(sum_of_exps, terms[max_in_row - x[c]]);
    int exponent;
    const int32_t shifted_scale = reciprocal(sum_of_exps, out_bits, &exponent);
    const int32_t row_span = max_in_row - lo;
    const int tabled = row_span < depth;
    if (tabled) tvmd_cmsis_softmax_outputs_avx2(exps, row_span + 1, shifted_scale, exponent, out_min, out_max, outs);
    for (int32_t c = 0; c < depth; c++) {
      const int32_t d = max_in_row - x[c];
      const int32_t v = tabled ? outs[d] : output_value(exps[d], shifted_scale, exponent, out_min, out_max);
      store_value(output, (size_t)r * (size_t)depth + (size_t)c, out_bits, v);
    }
  }
}
#endif

size_t tvmd_cmsis_softmax_s8_get_buffer_size(const tvmd_cmsis_softmax_params_t* p) {
  (void)p;
  return 0;
}

/* Softmax rows of int8 input into int8 (out_bits 8) or int16 (16) output:
 * the result shifted down to out_bits and offset by the type's minimum. */
void tvmd_cmsis_softmax_gemmlowp(const tvmd_cmsis_softmax_params_t* p, const int8_t* input, void* output,
                                 int out_bits) {
#if TVMD_CMSIS_X86
  /* Memoized only when the call has more entries than the 256 distances
   * it may exponentiate: a short one (micro_speech's 4, kws's 12) took
   * 1.2-2.1 us memoized against 0.13-0.15 us in the plain loop. */
  if (tvmd_cmsis_simd_level() >= TVMD_CMSIS_LEVEL_AVX2 && (int64_t)p->rows * (int64_t)p->depth > 256) {
    softmax_rows_memoized(p, input, output, out_bits);
    return;
  }
#endif
  const int32_t depth = p->depth;
  const int32_t out_min = out_bits == 16 ? INT16_MIN : INT8_MIN;
  const int32_t out_max = out_bits == 16 ? INT16_MAX : INT8_MAX;
  for (int32_t r = 0; r < p->rows; r++) {
    const int8_t* x = input + (size_t)r * (size_t)depth;
#if TVMD_CMSIS_MVE
    const int8x16_t lowest = vdupq_n_s8(INT8_MIN);
    int8x16_t max16 = lowest;
    for (int32_t c = 0; c < depth; c += 16) {
      const mve_pred16_t t = vctp8q((uint32_t)(depth - c));
      max16 = vmaxq_s8(max16, vpselq_s8(vldrbq_z_s8(x + c, t), lowest, t));
    }
    const int32_t max_in_row = vmaxvq_s8(INT8_MIN, max16);
    int32_t sum_of_exps = 0; /* Q12.19, wrapping */
    for (int32_t c = 0; c < depth; c += 4) {
      mve_pred16_t in;
      const int32x4_t scaled = scaled_mve(p, x + c, max_in_row, vctp32q((uint32_t)(depth - c)), &in);
      if (in == 0) continue; /* every lane further than diff_min below the maximum */
      sum_of_exps = vaddvaq_p_s32(sum_of_exps,
                                  TVMD_RDPOT_N(exp_on_negative_values_mve(scaled), ACCUMULATION_INTEGER_BITS), in);
    }
#else
#if TVMD_CMSIS_DSP
    const int32_t max_in_row = max_dsp(x, depth);
#else
    int32_t max_in_row = INT8_MIN;
    for (int32_t c = 0; c < depth; c++) max_in_row = tvmd_cmsis_max(max_in_row, x[c]);
#endif
    int32_t sum_of_exps = 0; /* Q12.19 */
    for (int32_t c = 0; c < depth; c++) {
      const int32_t diff = x[c] - max_in_row;
      if (diff >= p->diff_min) {
        const int32_t scaled = tvmd_fp_mul((int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
        sum_of_exps = tvmd_add_wrap_i32(sum_of_exps, rdpot(exp_on_negative_values(scaled), ACCUMULATION_INTEGER_BITS));
      }
    }
#endif
    int exponent;
    const int32_t shifted_scale = reciprocal(sum_of_exps, out_bits, &exponent);
#if TVMD_CMSIS_MVE
    for (int32_t c = 0; c < depth; c += 4) {
      const mve_pred16_t t = vctp32q((uint32_t)(depth - c));
      mve_pred16_t in;
      const int32x4_t scaled = scaled_mve(p, x + c, max_in_row, t, &in);
      int32x4_t v = vdupq_n_s32(out_min);
      if (in != 0) {
        const int32x4_t e = exp_on_negative_values_mve(scaled);
        const int32x4_t unsat = rdpot_mve(vqrdmulhq_n_s32(e, shifted_scale), exponent);
        const int32x4_t u = vminq_s32(vmaxq_s32(vaddq_n_s32(unsat, out_min), v), vdupq_n_s32(out_max));
        v = vpselq_s32(u, v, in);
      }
      if (out_bits == 16) vstrhq_p_s32((int16_t*)output + (size_t)r * (size_t)depth + (size_t)c, v, t);
      else vstrbq_p_s32((int8_t*)output + (size_t)r * (size_t)depth + (size_t)c, v, t);
    }
#else
    for (int32_t c = 0; c < depth; c++) {
      const int32_t diff = x[c] - max_in_row;
      int32_t v = out_min;
      if (diff >= p->diff_min) {
        const int32_t scaled = tvmd_fp_mul((int32_t)((uint32_t)diff << p->input_left_shift), p->input_multiplier);
        v = output_value(exp_on_negative_values(scaled), shifted_scale, exponent, out_min, out_max);
      }
      store_value(output, (size_t)r * (size_t)depth + (size_t)c, out_bits, v);
    }
#endif
  }
}

int32_t tvmd_cmsis_softmax_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_softmax_params_t* p = (const tvmd_cmsis_softmax_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_SOFTMAX || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int8_t* input = (const int8_t*)buffers[0];
  int8_t* output = (int8_t*)buffers[1];
  if (input == NULL || output == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  const int32_t status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_SOFTMAX, 0);
  if (status != TVMD_OK) return status;
  tvmd_cmsis_softmax_gemmlowp(p, input, output, 8);
  return TVMD_OK;
}
