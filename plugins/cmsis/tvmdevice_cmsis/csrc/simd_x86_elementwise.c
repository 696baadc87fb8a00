/*
 * x86-64 AVX2 versions of the int8 elementwise kernels: ADD, SUB and MUL (16
 * elements per step, the requantizations on 8 int32 lanes each) and
 * MAXIMUM/MINIMUM (32 bytes per step), over runs whose operands are
 * contiguous or one value repeated (broadcast).  Beside the portable C of
 * elementwise.c and minmax.c, chosen at run time (tvmd_cmsis_simd_level) so
 * one build runs on any x86-64; firmware builds compile none of it.  Values
 * are identical to the portable path's; tests run both over every input pair.
 */
#include "broadcast.h" /* the walk of the runs */

#if TVMD_CMSIS_X86

#include <string.h>

#include "simd_x86.h" /* the intrinsics, native or emulated */

#define AVX2 TVMD_X86_TARGET("avx2")
#define AVX2_INLINE static inline __attribute__((always_inline)) TVMD_X86_TARGET("avx2")

/* tvmd_multiply_by_quantized_multiplier on 8 lanes with one multiplier and
 * shift (simd_x86.c's requantize8 with the per-lane vectors broadcast). */
AVX2_INLINE __m256i requantize8(__m256i x, __m256i multiplier, __m256i left, __m256i right, __m256i mask,
                                __m256i half_mask) {
  const __m256i a = _mm256_sllv_epi32(x, left);
  const __m256i nudge = _mm256_set1_epi64x((int64_t)1 << 30);
  const __m256i even = _mm256_add_epi64(_mm256_mul_epi32(a, multiplier), nudge);
  const __m256i odd = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), multiplier), nudge);
  const __m256i high = _mm256_blend_epi32(_mm256_srli_epi64(even, 31), _mm256_slli_epi64(odd, 1), 0xAA);
  const __m256i remainder = _mm256_and_si256(high, mask);
  const __m256i threshold = _mm256_sub_epi32(half_mask, _mm256_srai_epi32(high, 31));
  return _mm256_sub_epi32(_mm256_srav_epi32(high, right), _mm256_cmpgt_epi32(remainder, threshold));
}

/* One multiplier and shift, prepared once per call. */
typedef struct {
  __m256i multiplier, left, right, mask, half_mask;
} quant8_t;

AVX2_INLINE quant8_t quant8(int32_t multiplier, int32_t shift) {
  quant8_t q;
  const int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const uint32_t mask = right >= 32 ? 0xFFFFFFFFu : (uint32_t)((1ull << right) - 1u);
  q.multiplier = _mm256_set1_epi32(multiplier);
  q.left = _mm256_set1_epi32(left);
  q.right = _mm256_set1_epi32(right);
  q.mask = _mm256_set1_epi32((int32_t)mask);
  q.half_mask = _mm256_set1_epi32((int32_t)(mask >> 1));
  return q;
}

AVX2_INLINE __m256i apply(__m256i x, const quant8_t* q) {
  return requantize8(x, q->multiplier, q->left, q->right, q->mask, q->half_mask);
}

/* 16 int32 lanes saturated to int8, in order. */
AVX2_INLINE __m128i narrow16(__m256i y0, __m256i y1) {
  const __m256i w = _mm256_permute4x64_epi64(_mm256_packs_epi32(y0, y1), 0xD8);
  return _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
}

/* 16 int8 of one operand as two vectors of 8 int32: contiguous (stride 1) or
 * one value repeated (stride 0). */
AVX2_INLINE void widen16(const int8_t* x, int32_t stride, __m256i* lo, __m256i* hi) {
  if (stride == 0) {
    *lo = *hi = _mm256_set1_epi32(x[0]);
  } else {
    const __m128i v = _mm_loadu_si128((const __m128i*)(const void*)x);
    *lo = _mm256_cvtepi8_epi32(v);
    *hi = _mm256_cvtepi8_epi32(_mm_srli_si128(v, 8));
  }
}

/* ADD's input scaling MBQM(a << 20, m, s) for |a| <= 255 (an int8 plus its
 * offset), m >= 2^11 and -31 <= s <= 0 (TFLM's smaller-than-one factors),
 * in 32-bit lanes without the 64-bit product.  With w = a * m + 2^10, the
 * doubling high multiply is floor((a * 2^20 * m + 2^30) / 2^31) =
 * floor(w / 2^11), and rounding that by 2^r (r = -s; halves away from zero)
 * is floor((v + 2^(r-1) - [v < 0]) / 2^r), where v < 0 exactly when a < 0
 * (|a * m| >= 2^11 > 2^10 for a != 0).  Splitting m = mh * 2^11 + ml
 * (ml < 2^11) and nesting the floors:
 *   result = (a * mh + 2^(r-1) + ((a * ml + 2^10 - [a < 0] * 2^11) >> 11)) >> r
 * (the 2^(r-1) and [a < 0] terms only when r > 0), every term within int32
 * (|a * mh| < 2^28, |a * ml| < 2^19).  a * ml - [a < 0] * 2^11 is one
 * vpmaddwd: the int32 lane a read as two int16 is (a, a < 0 ? -1 : 0), times
 * the pair (ml, 2^11). */
typedef struct {
  __m256i mh, ml_sign, half, c10; /* ml_sign: the int16 pair (ml, 2^11 when r > 0, else 0) */
  __m128i right;
} scale20_t;

AVX2_INLINE scale20_t scale20(int32_t multiplier, int32_t shift) {
  scale20_t f;
  const int32_t r = -shift;
  f.mh = _mm256_set1_epi32(multiplier >> 11);
  f.ml_sign = _mm256_set1_epi32((multiplier & 2047) | (r > 0 ? 2048 << 16 : 0));
  f.half = _mm256_set1_epi32(r > 0 ? (int32_t)((uint32_t)1 << (r - 1)) : 0);
  f.c10 = _mm256_set1_epi32(1024);
  f.right = _mm_cvtsi32_si128(r);
  return f;
}

AVX2_INLINE __m256i apply20(__m256i a, const scale20_t* f) {
  const __m256i low = _mm256_add_epi32(_mm256_madd_epi16(a, f->ml_sign), f->c10);
  const __m256i sum = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(a, f->mh), f->half),
                                       _mm256_srai_epi32(low, 11));
  return _mm256_sra_epi32(sum, f->right);
}

/* Whether scale20 computes MBQM(a << left_shift, multiplier, shift). */
static inline int scale20_exact(int32_t left_shift, int32_t multiplier, int32_t shift) {
  return left_shift == 20 && multiplier >= 2048 && shift <= 0 && shift >= -31;
}

/* How an ADD/SUB input (an int8 plus its offset, |a| <= 255) is scaled:
 * MBQM(a << ls, 2^30, 0) with 1 <= ls <= 20 (the larger input scale of
 * TFLM's ADD: a factor of exactly 1/2) is a << (ls - 1), exactly (a << ls is
 * even and within int32, so (a * 2^ls * 2^30 + 2^30) / 2^31 rounds down to
 * a * 2^(ls-1)); otherwise scale20 when exact (TFLM's other factors), else
 * (AVX2 only: the AVX-512 path leaves such parameters to it) the general
 * requantization. */
#define TVMD_EW_SCALE_HALF 0
#define TVMD_EW_SCALE_20 1
#define TVMD_EW_SCALE_NONE 2

static inline int input_scaling(int32_t left_shift, int32_t multiplier, int32_t shift) {
  if (multiplier == (1 << 30) && shift == 0 && left_shift >= 1 && left_shift <= 20) return TVMD_EW_SCALE_HALF;
  return scale20_exact(left_shift, multiplier, shift) ? TVMD_EW_SCALE_20 : TVMD_EW_SCALE_NONE;
}

typedef struct {
  quant8_t q1, q2, qo;
  scale20_t f1, f2; /* the input scalings when fast */
  __m256i off1, off2, out_off;
  __m128i lo, hi; /* the activation's bounds, int8 (clamped after the saturating narrowing) */
  __m128i left_shift, half_shift; /* half_shift: left_shift - 1 */
  int op;           /* TVMD_CMSIS_EW_* */
  int mode1, mode2; /* TVMD_EW_SCALE_* */
} elementwise8_t;

AVX2_INLINE __m256i scale_input8(const elementwise8_t* e, __m256i u, int mode, const scale20_t* f, const quant8_t* q) {
  if (mode == TVMD_EW_SCALE_HALF) return _mm256_sll_epi32(u, e->half_shift);
  if (mode == TVMD_EW_SCALE_20) return apply20(u, f);
  return apply(_mm256_sll_epi32(u, e->left_shift), q);
}

AVX2_INLINE __m128i step16(const elementwise8_t* e, const int8_t* x, int32_t s1, const int8_t* y, int32_t s2) {
  __m256i a[2], b[2], r[2];
  widen16(x, s1, &a[0], &a[1]);
  widen16(y, s2, &b[0], &b[1]);
  for (int h = 0; h < 2; h++) {
    const __m256i u = _mm256_add_epi32(a[h], e->off1), v = _mm256_add_epi32(b[h], e->off2);
    __m256i raw;
    if (e->op != TVMD_CMSIS_EW_MUL) {
      /* ADD and SUB: both scaled, summed or subtracted (wrapping as int32). */
      const __m256i su = scale_input8(e, u, e->mode1, &e->f1, &e->q1);
      const __m256i sv = scale_input8(e, v, e->mode2, &e->f2, &e->q2);
      raw = apply(e->op == TVMD_CMSIS_EW_SUB ? _mm256_sub_epi32(su, sv) : _mm256_add_epi32(su, sv), &e->qo);
    } else {
      raw = apply(_mm256_mullo_epi32(u, v), &e->qo);
    }
    r[h] = _mm256_add_epi32(raw, e->out_off);
  }
  return _mm_min_epi8(_mm_max_epi8(narrow16(r[0], r[1]), e->lo), e->hi);
}

/* One row of n outputs; the last partial step through zero-filled copies. */
AVX2_INLINE void row(const elementwise8_t* e, const int8_t* x, int32_t s1, const int8_t* y, int32_t s2, int32_t n,
                     int8_t* out) {
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm_storeu_si128((__m128i*)(void*)(out + i), step16(e, x + (size_t)i * (size_t)s1, s1, y + (size_t)i * (size_t)s2, s2));
  }
  if (i < n) {
    const size_t left = (size_t)(n - i);
    int8_t tx[16] = {0}, ty[16] = {0}, to[16];
    memcpy(tx, x + (size_t)i * (size_t)s1, s1 ? left : 1);
    memcpy(ty, y + (size_t)i * (size_t)s2, s2 ? left : 1);
    _mm_storeu_si128((__m128i*)(void*)to, step16(e, tx, s1, ty, s2));
    memcpy(out + i, to, left);
  }
}

AVX2 int tvmd_cmsis_elementwise_s8_avx2(const tvmd_cmsis_elementwise_params_t* p, int op, const int8_t* in1,
                                        const int8_t* in2, int8_t* out) {
  const int32_t last = p->ndim - 1;
  const int32_t inner = p->out_shape[last];
  const int32_t s1 = p->in1_strides[last], s2 = p->in2_strides[last];
  if ((s1 != 0 && s1 != 1) || (s2 != 0 && s2 != 1)) return 0;
  elementwise8_t e;
  e.op = op;
  e.q1 = quant8(p->input1_multiplier, p->input1_shift);
  e.q2 = quant8(p->input2_multiplier, p->input2_shift);
  e.qo = quant8(p->output_multiplier, p->output_shift);
  e.off1 = _mm256_set1_epi32(p->input1_offset);
  e.off2 = _mm256_set1_epi32(p->input2_offset);
  e.out_off = _mm256_set1_epi32(p->output_offset);
  e.lo = _mm_set1_epi8((int8_t)p->act_min);
  e.hi = _mm_set1_epi8((int8_t)p->act_max);
  e.left_shift = _mm_cvtsi32_si128(p->left_shift);
  e.half_shift = _mm_cvtsi32_si128(p->left_shift - 1);
  e.mode1 = input_scaling(p->left_shift, p->input1_multiplier, p->input1_shift);
  e.mode2 = input_scaling(p->left_shift, p->input2_multiplier, p->input2_shift);
  e.f1 = scale20(p->input1_multiplier, p->input1_shift);
  e.f2 = scale20(p->input2_multiplier, p->input2_shift);
  /* The outer dimensions walked as broadcast.h's odometer does. */
  int32_t index[TVMD_CMSIS_MAX_DIMS] = {0};
  size_t o1 = 0, o2 = 0;
  for (size_t base = 0; base < (size_t)p->size; base += (size_t)inner) {
    row(&e, in1 + o1, s1, in2 + o2, s2, inner, out + base);
    for (int32_t d = last - 1; d >= 0; d--) {
      o1 += (size_t)p->in1_strides[d];
      o2 += (size_t)p->in2_strides[d];
      if (++index[d] < p->out_shape[d]) break;
      o1 -= (size_t)p->in1_strides[d] * (size_t)p->out_shape[d];
      o2 -= (size_t)p->in2_strides[d] * (size_t)p->out_shape[d];
      index[d] = 0;
    }
  }
  return 1;
}

/* ------------------------------------------------------------- AVX-512 */
#define AVX512 TVMD_X86_TARGET("avx512f,avx512bw")
#define AVX512_INLINE static inline __attribute__((always_inline)) TVMD_X86_TARGET("avx512f,avx512bw")

/* tvmd_multiply_by_quantized_multiplier(x, m, s) on 16 lanes for 0 <= m and
 * s >= -31, through 64-bit products and one shift.  With a = x << left,
 * P = a * m and r the rounding shift (r = -s when s <= 0, else 0), the
 * doubling high multiply is h = floor((P + 2^30) / 2^31), and rounding it by
 * 2^r (halves away from zero) is floor((h + 2^(r-1) - [h < 0]) / 2^r);
 * nesting the floors, the result is
 *   floor((P + 2^30 + 2^(30+r) - [h < 0] * 2^31) / 2^(31+r))    (r > 0)
 * and h itself when r = 0.  For r > 0, [h < 0] may be taken as [P < 0]: they
 * differ only for -2^30 <= P < 0 (h = 0), where both numerators lie in
 * [0, 2^(31+r)) and the result is 0 either way.  The numerator T is in
 * (-2^63, 2^63) (|P| < 2^62), so T + 2^63 is its unsigned image and a logical
 * shift gives floor(T / 2^(31+r)) + 2^(32-r): the low 32 bits are the
 * result once 2^(32-r) (0 when r = 0) is subtracted.  An odd lane's result
 * goes to the high half of its 64-bit lane: when r > 0 by shifting 32 bits
 * less.  A constant c added to every x before the multiply can be left out
 * of x: P grows by c * m, added to the bias, and P < 0 becomes P < -c * m
 * (the threshold; quant16_offset). */
typedef struct {
  __m512i multiplier;
  __m512i threshold; /* P below it counts as negative: 0, or -c * m (64-bit lanes) */
  __m512i bias; /* 2^30 + 2^(30+r) (r > 0) + 2^63, plus c * m, in 64-bit lanes */
  __m512i neg;  /* 2^31 when r > 0, else 0, in 64-bit lanes */
  __m512i fix;  /* 2^(32-r) mod 2^32, in 32-bit lanes */
  __m128i left, right, right_odd; /* right_odd: 31 + r - 32, when r > 0 */
  int shifted, rounded;             /* left > 0; r > 0 */
} quant16_t;

/* Whether quant16 computes this multiplier and shift. */
static inline int quant16_exact(int32_t multiplier, int32_t shift) {
  return multiplier >= 0 && shift >= -31;
}

AVX512_INLINE quant16_t quant16(int32_t multiplier, int32_t shift) {
  quant16_t q;
  const int32_t left = shift > 0 ? shift : 0, r = shift > 0 ? 0 : -shift;
  const uint64_t bias = ((uint64_t)1 << 30) + (r > 0 ? (uint64_t)1 << (30 + r) : 0) + ((uint64_t)1 << 63);
  q.multiplier = _mm512_set1_epi32(multiplier);
  q.threshold = _mm512_setzero_si512();
  q.bias = _mm512_set1_epi64((int64_t)bias);
  q.neg = _mm512_set1_epi64(r > 0 ? (int64_t)1 << 31 : 0);
  q.fix = _mm512_set1_epi32(r > 0 ? (int32_t)(uint32_t)((uint64_t)1 << (32 - r)) : 0);
  q.left = _mm_cvtsi32_si128(left);
  q.right = _mm_cvtsi32_si128(31 + r);
  q.right_odd = _mm_cvtsi32_si128(r > 0 ? r - 1 : 0);
  q.shifted = left > 0;
  q.rounded = r > 0;
  return q;
}

/* q for inputs x - c: the results of x (shift <= 0 only, |c * m| < 2^62). */
AVX512_INLINE void quant16_offset(quant16_t* q, int64_t c, int32_t multiplier) {
  const int64_t cm = c * (int64_t)multiplier;
  q->threshold = _mm512_set1_epi64(-cm);
  q->bias = _mm512_add_epi64(q->bias, _mm512_set1_epi64(cm));
}

/* T + 2^63 for the even 32-bit lanes of a, in 64-bit lanes. */
AVX512_INLINE __m512i quant16_numerator(__m512i a, const quant16_t* q) {
  const __m512i p = _mm512_mul_epi32(a, q->multiplier);
  const __mmask8 negative = _mm512_cmpgt_epi64_mask(q->threshold, p);
  const __m512i t = _mm512_add_epi64(p, q->bias);
  return _mm512_mask_sub_epi64(t, negative, t, q->neg);
}

/* The results plus 2^(32-r) (q->fix, which the caller subtracts: folded
 * into the output offset). */
AVX512_INLINE __m512i apply16_unfixed(__m512i x, const quant16_t* q) {
  const __m512i a = q->shifted ? _mm512_sll_epi32(x, q->left) : x;
  const __m512i even = _mm512_srl_epi64(quant16_numerator(a, q), q->right);
  const __m512i t_odd = quant16_numerator(_mm512_srli_epi64(a, 32), q);
  const __m512i odd = q->rounded ? _mm512_srl_epi64(t_odd, q->right_odd)
                                 : _mm512_slli_epi64(_mm512_srl_epi64(t_odd, q->right), 32);
  return _mm512_mask_blend_epi32((__mmask16)0xAAAA, even, odd);
}

/* scale20 on 16 lanes (the identity above apply20). */
typedef struct {
  __m512i mh, ml_sign, half, c10; /* c10: 2^10, plus half * 2^11 when folded */
  uint32_t right;
  int half_apart; /* half added on its own (r > 19: half * 2^11 would leave int32) */
} scale20x16_t;

AVX512_INLINE scale20x16_t scale20x16(int32_t multiplier, int32_t shift) {
  scale20x16_t f;
  const int32_t r = -shift;
  f.mh = _mm512_set1_epi32(multiplier >> 11);
  f.ml_sign = _mm512_set1_epi32((multiplier & 2047) | (r > 0 ? 2048 << 16 : 0));
  const int32_t half = r > 0 && r <= 31 ? (int32_t)((uint32_t)1 << (r - 1)) : 0;
  f.half_apart = r > 19;
  f.half = _mm512_set1_epi32(half);
  f.c10 = _mm512_set1_epi32(f.half_apart ? 1024 : 1024 + (int32_t)((uint32_t)half << 11));
  f.right = (uint32_t)r;
  return f;
}

AVX512_INLINE __m512i apply20x16(__m512i a, const scale20x16_t* f) {
  /* floor((low + half * 2^11) / 2^11) = floor(low / 2^11) + half: the half
   * rides in low unless that would leave int32 (|a * ml| < 2^19). */
  const __m512i low = _mm512_add_epi32(_mm512_madd_epi16(a, f->ml_sign), f->c10);
  const __m512i high = f->half_apart ? _mm512_add_epi32(_mm512_mullo_epi32(a, f->mh), f->half)
                                     : _mm512_mullo_epi32(a, f->mh);
  return _mm512_srai_epi32(_mm512_add_epi32(high, _mm512_srai_epi32(low, 11)), f->right);
}

typedef struct {
  quant16_t qo;
  scale20x16_t f1, f2;
  __m512i off1, off2;
  __m512i lo, hi; /* the activation's bounds, int8 (clamped after the saturating narrowing) */
  __m512i out_off; /* the output offset minus qo's fix */
  __m128i half_shift; /* left_shift - 1, for TVMD_EW_SCALE_HALF */
  int mode1, mode2; /* TVMD_EW_SCALE_* */
  int op;           /* TVMD_CMSIS_EW_* */
} elementwise16_t;

AVX512_INLINE __m512i scale_input16(const elementwise16_t* e, __m512i u, int mode, const scale20x16_t* f) {
  return mode == TVMD_EW_SCALE_HALF ? _mm512_sll_epi32(u, e->half_shift) : apply20x16(u, f);
}

/* 16 int8 of an operand as int32 lanes: contiguous (stride 1) or its first
 * value repeated (stride 0, c: that value in every lane). */
AVX512_INLINE __m512i widen16x(const int8_t* x, int32_t stride, __m512i c) {
  return stride ? _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i*)(const void*)x)) : c;
}

/* 16 outputs (int32 lanes, offset, not yet clamped) from 16 values of each
 * operand.  An ADD/SUB input scaled by a shift alone is shifted without its
 * offset: the offset's share, (offset << (left_shift - 1)) added or
 * subtracted, is folded into qo (quant16_offset). */
AVX512_INLINE __m512i lanes16(const elementwise16_t* e, __m512i x, __m512i y) {
  __m512i raw;
  if (e->op == TVMD_CMSIS_EW_MUL) {
    raw = apply16_unfixed(_mm512_mullo_epi32(_mm512_add_epi32(x, e->off1), _mm512_add_epi32(y, e->off2)), &e->qo);
  } else {
    const __m512i u = e->mode1 == TVMD_EW_SCALE_HALF ? x : _mm512_add_epi32(x, e->off1);
    const __m512i v = e->mode2 == TVMD_EW_SCALE_HALF ? y : _mm512_add_epi32(y, e->off2);
    const __m512i su = scale_input16(e, u, e->mode1, &e->f1);
    const __m512i sv = scale_input16(e, v, e->mode2, &e->f2);
    raw = apply16_unfixed(e->op == TVMD_CMSIS_EW_SUB ? _mm512_sub_epi32(su, sv) : _mm512_add_epi32(su, sv), &e->qo);
  }
  return _mm512_add_epi32(raw, e->out_off);
}

/* 64 outputs from x and y (steps s1, s2; cx, cy their first values as
 * int32 lanes), in order. */
AVX512_INLINE __m512i step64(const elementwise16_t* e, const int8_t* x, int32_t s1, __m512i cx, const int8_t* y,
                             int32_t s2, __m512i cy) {
  const __m512i r0 = lanes16(e, widen16x(x, s1, cx), widen16x(y, s2, cy));
  const __m512i r1 = lanes16(e, widen16x(x + 16, s1, cx), widen16x(y + 16, s2, cy));
  const __m512i r2 = lanes16(e, widen16x(x + 32, s1, cx), widen16x(y + 32, s2, cy));
  const __m512i r3 = lanes16(e, widen16x(x + 48, s1, cx), widen16x(y + 48, s2, cy));
  /* The packs saturate to int8 (then the activation's clamp, as int8) and interleave 4-byte groups per
   * 128-bit lane; the permutation puts them back in order. */
  const __m512i w = _mm512_packs_epi16(_mm512_packs_epi32(r0, r1), _mm512_packs_epi32(r2, r3));
  const __m512i clamped = _mm512_min_epi8(_mm512_max_epi8(w, e->lo), e->hi);
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), clamped);
}

/* One run of n outputs, 64 a step; the last partial step reads the
 * contiguous operands through a masked load (the bytes past the run read as
 * 0, into a local copy) and writes through a masked store. */
AVX512_INLINE void row64(const elementwise16_t* e, const int8_t* x, int32_t s1, const int8_t* y, int32_t s2,
                         int32_t n, int8_t* out) {
  const __m512i cx = _mm512_set1_epi32(x[0]), cy = _mm512_set1_epi32(y[0]);
  int32_t i = 0;
  for (; i + 64 <= n; i += 64) {
    _mm512_storeu_si512((void*)(out + i), step64(e, x + (size_t)i * (size_t)s1, s1, cx, y + (size_t)i * (size_t)s2,
                                                 s2, cy));
  }
  if (i < n) {
    const __mmask64 k = ((__mmask64)1 << (n - i)) - 1;
    int8_t tx[64], ty[64];
    if (s1) _mm512_storeu_si512((void*)tx, _mm512_maskz_loadu_epi8(k, x + i));
    if (s2) _mm512_storeu_si512((void*)ty, _mm512_maskz_loadu_epi8(k, y + i));
    _mm512_mask_storeu_epi8(out + i, k, step64(e, tx, s1, cx, ty, s2, cy));
  }
}

#define TVMD_EW_ROW64(x, sx, y, sy, o, n, params) row64(&e, (x), (sx), (y), (sy), (n), (o))

AVX512 int tvmd_cmsis_elementwise_s8_avx512(const tvmd_cmsis_elementwise_params_t* p, int op, const int8_t* in1,
                                            const int8_t* in2, int8_t* out) {
  const int32_t innermost = p->ndim - 1;
  const int32_t t1 = p->in1_strides[innermost], t2 = p->in2_strides[innermost];
  if ((t1 != 0 && t1 != 1) || (t2 != 0 && t2 != 1)) return 0;
  if (!quant16_exact(p->output_multiplier, p->output_shift)) return 0;
  elementwise16_t e;
  e.op = op;
  e.mode1 = input_scaling(p->left_shift, p->input1_multiplier, p->input1_shift);
  e.mode2 = input_scaling(p->left_shift, p->input2_multiplier, p->input2_shift);
  if (op != TVMD_CMSIS_EW_MUL && (e.mode1 == TVMD_EW_SCALE_NONE || e.mode2 == TVMD_EW_SCALE_NONE)) return 0;
  e.f1 = scale20x16(p->input1_multiplier, p->input1_shift);
  e.f2 = scale20x16(p->input2_multiplier, p->input2_shift);
  e.qo = quant16(p->output_multiplier, p->output_shift);
  if (op != TVMD_CMSIS_EW_MUL && p->output_shift <= 0) {
    const int64_t c1 = e.mode1 == TVMD_EW_SCALE_HALF ? (int64_t)p->input1_offset * ((int64_t)1 << (p->left_shift - 1)) : 0;
    const int64_t c2 = e.mode2 == TVMD_EW_SCALE_HALF ? (int64_t)p->input2_offset * ((int64_t)1 << (p->left_shift - 1)) : 0;
    quant16_offset(&e.qo, c1 + (op == TVMD_CMSIS_EW_SUB ? -c2 : c2), p->output_multiplier);
  } else if (op != TVMD_CMSIS_EW_MUL && (e.mode1 == TVMD_EW_SCALE_HALF || e.mode2 == TVMD_EW_SCALE_HALF)) {
    return 0; /* a left-shifting output scale: the offsets cannot be folded (leave it to AVX2) */
  }
  e.off1 = _mm512_set1_epi32(p->input1_offset);
  e.off2 = _mm512_set1_epi32(p->input2_offset);
  e.out_off = _mm512_sub_epi32(_mm512_set1_epi32(p->output_offset), e.qo.fix);
  e.lo = _mm512_set1_epi8((int8_t)p->act_min);
  e.hi = _mm512_set1_epi8((int8_t)p->act_max);
  e.half_shift = _mm_cvtsi32_si128(p->left_shift - 1);
  TVMD_CMSIS_BROADCAST_ROWS(TVMD_EW_ROW64);
  return 1;
}

AVX2_INLINE __m256i minmax32(__m256i x, __m256i y, int is_max) {
  return is_max ? _mm256_max_epi8(x, y) : _mm256_min_epi8(x, y);
}

AVX2_INLINE __m128i minmax16(__m128i x, __m128i y, int is_max) {
  return is_max ? _mm_max_epi8(x, y) : _mm_min_epi8(x, y);
}

/* 32 (or 16) outputs from index i; an operand of step 0 is its value
 * repeated (ca, cb). */
AVX2_INLINE void minmax_step32(const int8_t* a, int32_t sa, __m256i ca, const int8_t* b, int32_t sb, __m256i cb,
                               int32_t i, int is_max, int8_t* out) {
  const __m256i x = sa ? _mm256_loadu_si256((const __m256i*)(const void*)(a + i)) : ca;
  const __m256i y = sb ? _mm256_loadu_si256((const __m256i*)(const void*)(b + i)) : cb;
  _mm256_storeu_si256((__m256i*)(void*)(out + i), minmax32(x, y, is_max));
}

AVX2_INLINE void minmax_step16(const int8_t* a, int32_t sa, __m256i ca, const int8_t* b, int32_t sb, __m256i cb,
                               int32_t i, int is_max, int8_t* out) {
  const __m128i x = sa ? _mm_loadu_si128((const __m128i*)(const void*)(a + i)) : _mm256_castsi256_si128(ca);
  const __m128i y = sb ? _mm_loadu_si128((const __m128i*)(const void*)(b + i)) : _mm256_castsi256_si128(cb);
  _mm_storeu_si128((__m128i*)(void*)(out + i), minmax16(x, y, is_max));
}

/* The last partial step is a whole step ending at n, overlapping the one
 * before: it rewrites those outputs with the same values (also when out
 * is an input: max(max(x, y), y) = max(x, y)). */
AVX2_INLINE void minmax_run(const int8_t* a, int32_t sa, const int8_t* b, int32_t sb, int32_t n, int is_max,
                            int8_t* out) {
  if (n <= 0) return;
  const __m256i ca = _mm256_set1_epi8(a[0]), cb = _mm256_set1_epi8(b[0]);
  int32_t i = 0;
  if (n >= 32) {
    for (; i + 32 <= n; i += 32) minmax_step32(a, sa, ca, b, sb, cb, i, is_max, out);
    if (i < n) minmax_step32(a, sa, ca, b, sb, cb, n - 32, is_max, out);
  } else if (n >= 16) {
    minmax_step16(a, sa, ca, b, sb, cb, 0, is_max, out);
    if (n > 16) minmax_step16(a, sa, ca, b, sb, cb, n - 16, is_max, out);
  } else {
    for (; i < n; i++) {
      const int8_t x = a[i * sa], y = b[i * sb];
      out[i] = is_max ? (x > y ? x : y) : (x < y ? x : y);
    }
  }
}

/* Rows of runs: row r reads a + r * a_row and b + r * b_row (a row step of
 * 0 repeats an operand's run) and writes out + r * n; the runs as above. */
AVX2 void tvmd_cmsis_minmax_rows_s8_avx2(const int8_t* a, int32_t sa, size_t a_row, const int8_t* b, int32_t sb,
                                         size_t b_row, int32_t n, int32_t rows, int is_max, int8_t* out) {
  for (int32_t r = 0; r < rows; r++) {
    minmax_run(a + (size_t)r * a_row, sa, b + (size_t)r * b_row, sb, n, is_max, out + (size_t)r * (size_t)n);
  }
}

#endif /* TVMD_CMSIS_X86 */
