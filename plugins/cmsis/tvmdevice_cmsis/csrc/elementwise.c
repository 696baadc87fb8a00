/*
 * ADD and MUL, int8, with broadcasting: TFLM's reference_integer_ops
 * AddFunc / MulElementwise, element by element (CMSIS-NN's
 * arm_elementwise_add_s8 / _mul_s8 compute the same values).
 *
 * Broadcasting walks the output in row-major order with per-input element
 * strides that are 0 along broadcast dimensions (computed and checked at
 * prepare time); equal shapes and scalar operands arrive collapsed to one
 * dimension, so they run as a single flat loop.
 *
 * On a Cortex-M (mprofile.h) the walk goes a run of the innermost dimension
 * at a time, and an operand broadcast along it (a scalar, a per-channel
 * vector) is scaled once per run instead of once per element:
 *  - Helium (MVE): four elements per step, int8 loaded widened to int32
 *    lanes, the reference's requantizations as tvmd_cmsis_requantize_mve
 *    (proven equal in mprofile.h), the last step tail-predicated;
 *  - DSP: the requantizations as tvmd_cmsis_requantize_1 (one SMLAL), MUL
 *    four elements per word pair (SXTAB16 adds the offsets to two values at
 *    once, SMLABB / SMLATT multiply them);
 *  - plain C (Cortex-M0/M3, the host): element by element, below.
 */
#include "broadcast.h"
#include "mprofile.h"

size_t tvmd_cmsis_add_s8_get_buffer_size(const tvmd_cmsis_elementwise_params_t* p) {
  (void)p;
  return 0;
}

size_t tvmd_cmsis_mul_s8_get_buffer_size(const tvmd_cmsis_elementwise_params_t* p) {
  (void)p;
  return 0;
}

static inline int8_t clamp_s8(int32_t v, const tvmd_cmsis_elementwise_params_t* p) {
  return (int8_t)tvmd_cmsis_min(tvmd_cmsis_max(v, p->act_min), p->act_max);
}

static inline int8_t add_one(int8_t x, int8_t y, const tvmd_cmsis_elementwise_params_t* p) {
  const int32_t a = (int32_t)((uint32_t)(x + p->input1_offset) << p->left_shift);
  const int32_t b = (int32_t)((uint32_t)(y + p->input2_offset) << p->left_shift);
  const int32_t sa = tvmd_multiply_by_quantized_multiplier(a, p->input1_multiplier, p->input1_shift);
  const int32_t sb = tvmd_multiply_by_quantized_multiplier(b, p->input2_multiplier, p->input2_shift);
  const int32_t raw = tvmd_multiply_by_quantized_multiplier(tvmd_cmsis_wrap_add(sa, sb), p->output_multiplier,
                                                            p->output_shift);
  return clamp_s8(raw + p->output_offset, p);
}

static inline int8_t mul_one(int8_t x, int8_t y, const tvmd_cmsis_elementwise_params_t* p) {
  const int32_t product = (x + p->input1_offset) * (y + p->input2_offset);
  const int32_t raw = tvmd_multiply_by_quantized_multiplier(product, p->output_multiplier, p->output_shift);
  return clamp_s8(raw + p->output_offset, p);
}

/* ------------------------------------------------------------ M-profile */
#if TVMD_CMSIS_MVE
/* One input of ADD on four lanes: offset, the left shift, its own rescale. */
TVMD_CMSIS_INLINE int32x4_t add_scale_mve(int32x4_t x, int32_t offset, int32_t left_shift, int32x4_t m,
                                           int32x4_t shift) {
  return tvmd_cmsis_requantize_mve(vshlq_r_s32(vaddq_n_s32(x, offset), left_shift), m, shift);
}

/* The output of four lanes: rescaled, offset, clamped; int8 lanes stored under t. */
TVMD_CMSIS_INLINE void store_mve(int8_t* out, int32x4_t raw, int32x4_t m, int32x4_t shift,
                                 const tvmd_cmsis_elementwise_params_t* p, mve_pred16_t t) {
  int32x4_t v = vaddq_n_s32(tvmd_cmsis_requantize_mve(raw, m, shift), p->output_offset);
  v = vminq_s32(vmaxq_s32(v, vdupq_n_s32(p->act_min)), vdupq_n_s32(p->act_max));
  vstrbq_p_s32(out, v, t);
}

/* A run of ADD; a_runs / b_runs are constants at each call (1: the input
 * advances, 0: its one value is broadcast), so each case is its own loop. */
TVMD_CMSIS_INLINE void add_run_mve(const int8_t* a, const int8_t* b, int8_t* out, int32_t n,
                                   const tvmd_cmsis_elementwise_params_t* p, int a_runs, int b_runs) {
  const int32x4_t m1 = vdupq_n_s32(p->input1_multiplier), sh1 = vdupq_n_s32(p->input1_shift);
  const int32x4_t m2 = vdupq_n_s32(p->input2_multiplier), sh2 = vdupq_n_s32(p->input2_shift);
  const int32x4_t mo = vdupq_n_s32(p->output_multiplier), sho = vdupq_n_s32(p->output_shift);
  const int32_t o1 = p->input1_offset, o2 = p->input2_offset, left = p->left_shift;
  const int32x4_t ca = add_scale_mve(vdupq_n_s32(a[0]), o1, left, m1, sh1);
  const int32x4_t cb = add_scale_mve(vdupq_n_s32(b[0]), o2, left, m2, sh2);
  for (int32_t i = 0; i < n; i += 4) {
    const mve_pred16_t t = vctp32q((uint32_t)(n - i));
    const int32x4_t xa = a_runs ? add_scale_mve(vldrbq_z_s32(a + i, t), o1, left, m1, sh1) : ca;
    const int32x4_t xb = b_runs ? add_scale_mve(vldrbq_z_s32(b + i, t), o2, left, m2, sh2) : cb;
    store_mve(out + i, vaddq_s32(xa, xb), mo, sho, p, t); /* the sum wraps, as the reference's */
  }
}

/* A run of MUL (a_runs / b_runs as for ADD). */
TVMD_CMSIS_INLINE void mul_run_mve(const int8_t* a, const int8_t* b, int8_t* out, int32_t n,
                                   const tvmd_cmsis_elementwise_params_t* p, int a_runs, int b_runs) {
  const int32x4_t mo = vdupq_n_s32(p->output_multiplier), sho = vdupq_n_s32(p->output_shift);
  const int32_t o1 = p->input1_offset, o2 = p->input2_offset;
  const int32x4_t ca = vdupq_n_s32(a[0] + o1), cb = vdupq_n_s32(b[0] + o2);
  for (int32_t i = 0; i < n; i += 4) {
    const mve_pred16_t t = vctp32q((uint32_t)(n - i));
    const int32x4_t xa = a_runs ? vaddq_n_s32(vldrbq_z_s32(a + i, t), o1) : ca;
    const int32x4_t xb = b_runs ? vaddq_n_s32(vldrbq_z_s32(b + i, t), o2) : cb;
    store_mve(out + i, vmulq_s32(xa, xb), mo, sho, p, t); /* |product| <= 255 * 255: exact */
  }
}

#define TVMD_EW_RUN(name, run)                                                                             \
  static void name(const int8_t* a, int32_t sa, const int8_t* b, int32_t sb, int8_t* out, int32_t n,     \
                   const tvmd_cmsis_elementwise_params_t* p) {                                             \
    if (sa == 1 && sb == 1) run(a, b, out, n, p, 1, 1);                                                    \
    else if (sa == 1 && sb == 0) run(a, b, out, n, p, 1, 0);                                               \
    else if (sa == 0 && sb == 1) run(a, b, out, n, p, 0, 1);                                               \
    else run(a, b, out, n, p, 0, 0);                                                                       \
  }
TVMD_EW_RUN(add_row, add_run_mve)
TVMD_EW_RUN(mul_row, mul_run_mve)
#undef TVMD_EW_RUN

#elif TVMD_CMSIS_DSP
/* One input of ADD: offset, the left shift, its own rescale. */
static inline int32_t add_scale_1(int32_t x, int32_t offset, int32_t left_shift, int32_t m, int32_t shift) {
  return tvmd_cmsis_requantize_1((int32_t)((uint32_t)(x + offset) << left_shift), m, shift);
}

/* The output of one element: rescaled (tvmd_cmsis_out_1: no bias), offset, clamped. */
static inline int8_t out_1(int32_t raw, const tvmd_cmsis_elementwise_params_t* p) {
  return tvmd_cmsis_out_1(raw, NULL, 0, p->output_multiplier, p->output_shift, p->output_offset, p->act_min,
                          p->act_max);
}

/* A run of ADD (steps 0 or 1): an input broadcast along it is scaled once. */
static void add_row(const int8_t* a, int32_t sa, const int8_t* b, int32_t sb, int8_t* out, int32_t n,
                    const tvmd_cmsis_elementwise_params_t* p) {
  const int32_t o1 = p->input1_offset, m1 = p->input1_multiplier, sh1 = p->input1_shift;
  const int32_t o2 = p->input2_offset, m2 = p->input2_multiplier, sh2 = p->input2_shift, left = p->left_shift;
  const int32_t ca = add_scale_1(a[0], o1, left, m1, sh1), cb = add_scale_1(b[0], o2, left, m2, sh2);
  for (int32_t i = 0; i < n; i++) {
    const int32_t xa = sa ? add_scale_1(a[i], o1, left, m1, sh1) : ca;
    const int32_t xb = sb ? add_scale_1(b[i], o2, left, m2, sh2) : cb;
    out[i] = out_1(tvmd_cmsis_wrap_add(xa, xb), p);
  }
}

/* A run of MUL: four elements per pair of words when both inputs advance
 * (the offsets added to two int8 values at once by SXTAB16, exact in int16
 * lanes as |x + offset| <= 255), else one at a time. */
static void mul_row(const int8_t* a, int32_t sa, const int8_t* b, int32_t sb, int8_t* out, int32_t n,
                    const tvmd_cmsis_elementwise_params_t* p) {
  const int32_t o1 = p->input1_offset, o2 = p->input2_offset;
  int32_t i = 0;
  if (sa == 1 && sb == 1) {
    const uint32_t o1x2 = ((uint32_t)(uint16_t)o1 << 16) | (uint16_t)o1; /* o1 in both halves */
    const uint32_t o2x2 = ((uint32_t)(uint16_t)o2 << 16) | (uint16_t)o2;
    for (; i + 4 <= n; i += 4) {
      const uint32_t wa = tvmd_cmsis_read_s8x4(a + i), wb = tvmd_cmsis_read_s8x4(b + i);
      const uint32_t a02 = __sxtab16(o1x2, wa), a13 = __sxtab16(o1x2, wa >> 8);
      const uint32_t b02 = __sxtab16(o2x2, wb), b13 = __sxtab16(o2x2, wb >> 8);
      out[i] = out_1(__smlabb(a02, b02, 0), p);
      out[i + 1] = out_1(__smlabb(a13, b13, 0), p);
      out[i + 2] = out_1(__smlatt(a02, b02, 0), p);
      out[i + 3] = out_1(__smlatt(a13, b13, 0), p);
    }
  }
  const int32_t ca = a[0] + o1, cb = b[0] + o2;
  for (; i < n; i++) out[i] = out_1((sa ? a[i] + o1 : ca) * (sb ? b[i] + o2 : cb), p);
}
#endif

static int32_t start(const tvmd_cmsis_elementwise_params_t* p, uint32_t kind, void* const* buffers,
                     void* resource_handle) {
  if (p == NULL || p->kind != kind || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (buffers[0] == NULL || buffers[1] == NULL || buffers[2] == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (p->ndim < 1 || p->ndim > TVMD_CMSIS_MAX_DIMS) return TVMD_ERR_INVALID_ARGUMENT;
  return tvmd_cmsis_enter(resource_handle, kind, 0);
}

int32_t tvmd_cmsis_add_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_elementwise_params_t* p = (const tvmd_cmsis_elementwise_params_t*)params;
  const int32_t status = start(p, TVMD_CMSIS_KIND_ADD, buffers, resource_handle);
  if (status != TVMD_OK) return status;
  const int8_t* in1 = (const int8_t*)buffers[0];
  const int8_t* in2 = (const int8_t*)buffers[1];
  int8_t* out = (int8_t*)buffers[2];
#if TVMD_CMSIS_X86
  if (tvmd_cmsis_simd_level() >= TVMD_CMSIS_LEVEL_AVX2 && tvmd_cmsis_elementwise_s8_avx2(p, 1, in1, in2, out)) {
    return TVMD_OK;
  }
#endif
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
  TVMD_CMSIS_BROADCAST_ROWS(add_row);
#else
  TVMD_CMSIS_BROADCAST_LOOP(add_one);
#endif
  return TVMD_OK;
}

int32_t tvmd_cmsis_mul_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_elementwise_params_t* p = (const tvmd_cmsis_elementwise_params_t*)params;
  const int32_t status = start(p, TVMD_CMSIS_KIND_MUL, buffers, resource_handle);
  if (status != TVMD_OK) return status;
  const int8_t* in1 = (const int8_t*)buffers[0];
  const int8_t* in2 = (const int8_t*)buffers[1];
  int8_t* out = (int8_t*)buffers[2];
#if TVMD_CMSIS_X86
  if (tvmd_cmsis_simd_level() >= TVMD_CMSIS_LEVEL_AVX2 && tvmd_cmsis_elementwise_s8_avx2(p, 0, in1, in2, out)) {
    return TVMD_OK;
  }
#endif
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
  TVMD_CMSIS_BROADCAST_ROWS(mul_row);
#else
  TVMD_CMSIS_BROADCAST_LOOP(mul_one);
#endif
  return TVMD_OK;
}
