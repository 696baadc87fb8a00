/*
 * ADD, SUB and MUL, int8, with broadcasting: TFLM's reference_integer_ops
 * AddFunc / MulElementwise and reference_ops SubElementwise, element by
 * element (CMSIS-NN's arm_elementwise_add_s8 / _mul_s8 compute the same
 * values; CMSIS-NN has no SUB).  SUB is ADD's requantized walk with the
 * scaled input 2 subtracted instead of added (not ADD with a negated input 2
 * multiplier: the rounding of the doubling high multiply is not symmetric).
 *
 * Broadcasting walks the output in row-major order with per-input element
 * strides that are 0 along broadcast dimensions (computed and checked at
 * prepare time); equal shapes and scalar operands arrive collapsed to one
 * dimension, so they run as a single flat loop.
 *
 * On a Cortex-M (mprofile.h) the walk goes a run of the innermost dimension
 * at a time, and an operand broadcast along it (a scalar, a per-channel
 * vector) is scaled once per run instead of once per element: the Helium
 * and DSP runs in elementwise_m.h, shared with the int16 kernels; plain C
 * (Cortex-M0/M3, the host, and SUB everywhere) element by element, below.
 * On x86-64 the AVX-512 runs (64 values a step) or AVX2 runs (16) of
 * simd_x86_elementwise.c take broadcasts whose innermost strides are 0 or 1
 * (all that prepare produces).
 */
#include "broadcast.h"
#include "elementwise_m.h"

size_t tvmd_cmsis_add_s8_get_buffer_size(const tvmd_cmsis_elementwise_params_t* p) {
  (void)p;
  return 0;
}

size_t tvmd_cmsis_sub_s8_get_buffer_size(const tvmd_cmsis_elementwise_params_t* p) {
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

/* ADD (negate 0) or SUB (negate 1): both inputs offset, shifted left and
 * scaled, summed or subtracted (wrapping like the reference's int32
 * arithmetic), the result scaled to the output. */
static inline int8_t add_sub_one(int8_t x, int8_t y, const tvmd_cmsis_elementwise_params_t* p, int negate) {
  const int32_t a = (int32_t)((uint32_t)(x + p->input1_offset) << p->left_shift);
  const int32_t b = (int32_t)((uint32_t)(y + p->input2_offset) << p->left_shift);
  const int32_t sa = tvmd_multiply_by_quantized_multiplier(a, p->input1_multiplier, p->input1_shift);
  const int32_t sb = tvmd_multiply_by_quantized_multiplier(b, p->input2_multiplier, p->input2_shift);
  const int32_t sum = negate ? (int32_t)((uint32_t)sa - (uint32_t)sb) : tvmd_cmsis_wrap_add(sa, sb);
  const int32_t raw = tvmd_multiply_by_quantized_multiplier(sum, p->output_multiplier, p->output_shift);
  return clamp_s8(raw + p->output_offset, p);
}

static inline int8_t add_one(int8_t x, int8_t y, const tvmd_cmsis_elementwise_params_t* p) {
  return add_sub_one(x, y, p, 0);
}

static inline int8_t sub_one(int8_t x, int8_t y, const tvmd_cmsis_elementwise_params_t* p) {
  return add_sub_one(x, y, p, 1);
}

static inline int8_t mul_one(int8_t x, int8_t y, const tvmd_cmsis_elementwise_params_t* p) {
  const int32_t product = (x + p->input1_offset) * (y + p->input2_offset);
  const int32_t raw = tvmd_multiply_by_quantized_multiplier(product, p->output_multiplier, p->output_shift);
  return clamp_s8(raw + p->output_offset, p);
}

/* ------------------------------------------------------------ M-profile */
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
TVMD_CMSIS_EW_ROWS(1) /* add_row, mul_row: elementwise_m.h */
#endif

#if TVMD_CMSIS_X86
/* The widest x86 path the level runs that takes p (1), else 0. */
static int elementwise_x86(const tvmd_cmsis_elementwise_params_t* p, int op, const int8_t* in1, const int8_t* in2,
                           int8_t* out) {
  const int level = tvmd_cmsis_simd_level();
  if (level >= TVMD_CMSIS_LEVEL_AVX512 && tvmd_cmsis_elementwise_s8_avx512(p, op, in1, in2, out)) return 1;
  return level >= TVMD_CMSIS_LEVEL_AVX2 && tvmd_cmsis_elementwise_s8_avx2(p, op, in1, in2, out);
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
  if (elementwise_x86(p, TVMD_CMSIS_EW_ADD, in1, in2, out)) return TVMD_OK;
#endif
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
  TVMD_CMSIS_BROADCAST_ROWS(add_row);
#else
  TVMD_CMSIS_BROADCAST_LOOP(add_one);
#endif
  return TVMD_OK;
}

int32_t tvmd_cmsis_sub_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_elementwise_params_t* p = (const tvmd_cmsis_elementwise_params_t*)params;
  const int32_t status = start(p, TVMD_CMSIS_KIND_SUB, buffers, resource_handle);
  if (status != TVMD_OK) return status;
  const int8_t* in1 = (const int8_t*)buffers[0];
  const int8_t* in2 = (const int8_t*)buffers[1];
  int8_t* out = (int8_t*)buffers[2];
#if TVMD_CMSIS_X86
  if (elementwise_x86(p, TVMD_CMSIS_EW_SUB, in1, in2, out)) return TVMD_OK;
#endif
  TVMD_CMSIS_BROADCAST_LOOP(sub_one);
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
  if (elementwise_x86(p, TVMD_CMSIS_EW_MUL, in1, in2, out)) return TVMD_OK;
#endif
#if TVMD_CMSIS_MVE || TVMD_CMSIS_DSP
  TVMD_CMSIS_BROADCAST_ROWS(mul_row);
#else
  TVMD_CMSIS_BROADCAST_LOOP(mul_one);
#endif
  return TVMD_OK;
}
