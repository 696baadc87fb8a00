/*
 * Helpers shared by the cmsis-nn kernel files; not part of the public header.
 */
#ifndef TVMD_CMSIS_INTERNAL_H_
#define TVMD_CMSIS_INTERNAL_H_

#include <stddef.h>
#include <stdint.h>

#include "tvm_device_cmsis_nn.h" /* generated from tvmdevice_cmsis/device.py */
#include "tvmd_cmsis_nn.h"
#include "tvmdevice/fixedpoint.h"
#include "tvmdevice/quant.h"

/* Wider SIMD through runtime dispatch: GCC compiles the function for each
 * listed target and picks one when the library loads, so a build made on one
 * x86-64 machine runs on any x86-64 (never -march=native).  Elsewhere the
 * plain C99 body is compiled once for the baseline target. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TVMD_CMSIS_SIMD __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define TVMD_CMSIS_SIMD
#endif

/* Helpers of a SIMD kernel are forced inline so they are compiled for each
 * of its targets instead of being called in their baseline version. */
#if defined(__GNUC__)
#define TVMD_CMSIS_INLINE static inline __attribute__((always_inline))
#else
#define TVMD_CMSIS_INLINE static inline
#endif

/* SIMD levels of the host kernels: the portable C, and the x86-64 paths of
 * simd_x86*.c, each chosen at run time.  A CPU has a set of them, not a
 * chain (a Zen 4 has AVX-512 VNNI but not AVX-VNNI); by default the kernels
 * use the highest number the CPU has.  A VNNI level is its base level (AVX2,
 * AVX-512) plus the int8 VNNI GEMM of CONV_2D and FULLY_CONNECTED
 * (simd_x86_vnni.c), the batch-1 FULLY_CONNECTED panels on vpdpbusd
 * (simd_x86_gemv_vnni.c) and, on AVX-512 VNNI, the 3x3 depthwise's vpdpwssd
 * (simd_x86_depthwise_rows.c): every other kernel runs its base level's path. */
#define TVMD_CMSIS_LEVEL_PORTABLE 0
#define TVMD_CMSIS_LEVEL_AVX2 1
#define TVMD_CMSIS_LEVEL_AVX512 2
#define TVMD_CMSIS_LEVEL_AVXVNNI 3    /* AVX2 + AVX-VNNI (256-bit VEX vpdpbusd) */
#define TVMD_CMSIS_LEVEL_AVX512VNNI 4 /* AVX-512 F/BW/VL + AVX-512 VNNI */
#define TVMD_CMSIS_NUM_LEVELS 5

/* Set (-DTVMD_CMSIS_SIMD_EMULATION=1, setup.py) when the x86 SIMD files are
 * compiled against SIMDe instead of the compiler's intrinsics (simd_x86.h):
 * every level is then available on any x86-64 CPU. */
#ifndef TVMD_CMSIS_SIMD_EMULATION
#define TVMD_CMSIS_SIMD_EMULATION 0
#endif

/* Filters with more taps than this run the portable depthwise loop (the
 * vector loop keeps one pointer per tap on the stack). */
#define TVMD_CMSIS_DW_MAX_TAPS 256

/* Where the int8 VNNI GEMM reads its rows (unsigned bytes u = x + 128): the
 * 4 bytes of row r's quad t of segment g are at
 * base + r * row_stride + g * seg_stride + 4 * t (t < seg_quads), the
 * weights' quad index running on across segments.  im2col rows and
 * FULLY_CONNECTED's rows are one segment of all quads; a convolution read in
 * place from its bordered image has one segment per filter row, padded to
 * whole quads with zero weights (the bytes read past a filter row's taps add
 * nothing).  flip: the bytes are int8 x, turned into u (x ^ 0x80) as they
 * are broadcast. */
typedef struct {
  const uint8_t* base;
  size_t row_stride, seg_stride;
  int32_t segments, seg_quads;
  int flip;
} tvmd_cmsis_vnni_rows_t;

/* The x86-64 paths (simd_x86.c), chosen at run time. */
#if defined(__x86_64__) && defined(__GNUC__)
#define TVMD_CMSIS_X86 1
/* The levels this CPU runs: bit L set for level L (every level when emulated). */
int tvmd_cmsis_cpu_levels(void);
void tvmd_cmsis_gemm_s16_avx512(const int16_t* a, int32_t lda, int32_t m, int32_t k_pairs, const int16_t* w,
                                int32_t ldw, int32_t* acc);
void tvmd_cmsis_requantize_avx512(const int32_t* acc, const int32_t* bias, const int32_t* multiplier,
                                  const int32_t* shift, int32_t n, const tvmd_cmsis_quant_t* q, int8_t* out);
void tvmd_cmsis_gemm_s16_avx2(const int16_t* a, int32_t lda, int32_t m, int32_t k_pairs, const int16_t* w,
                              int32_t ldw, int32_t* acc);
void tvmd_cmsis_requantize_avx2(const int32_t* acc, const int32_t* bias, const int32_t* multiplier,
                                const int32_t* shift, int32_t n, const tvmd_cmsis_quant_t* q, int8_t* out);
void tvmd_cmsis_gemm_s8_avx2(const int16_t* a, int32_t lda, int32_t m, int32_t k_pairs, const int16_t* w,
                             int32_t ldw, int32_t n, const int32_t* bias, const int32_t* multiplier,
                             const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo);
/* tvmd_cmsis_gemm_vnni_s8 on AVX-512 VNNI and on AVX-VNNI (simd_x86_vnni.c). */
void tvmd_cmsis_gemm_vnni_avx512(const tvmd_cmsis_vnni_rows_t* a, int32_t m, const int8_t* w, int32_t ldw,
                                 int32_t n, const int32_t* corr, const int32_t* bias, const int32_t* multiplier,
                                 const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo);
/* CONV_2D's GEMM read in place from the bordered int16 image (conv.c) on
 * AVX2: each output pixel's filter rows are contiguous spans of that image,
 * so no im2col rows are copied.  For groups 1, dilation_w 1 and an even
 * filter_w * in_ch. */
void tvmd_cmsis_conv_image_s8_avx2(const tvmd_cmsis_conv_params_t* p, const int16_t* image, int32_t pw,
                                   int32_t out_rows, const int32_t* bias, int8_t* out_image);
void tvmd_cmsis_gemm_vnni_avx2(const tvmd_cmsis_vnni_rows_t* a, int32_t m, const int8_t* w, int32_t ldw,
                               int32_t n, const int32_t* corr, const int32_t* bias, const int32_t* multiplier,
                               const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo);
/* tvmd_cmsis_gemv_s8 on AVX-512 VNNI and on AVX-VNNI (simd_x86_gemv_vnni.c):
 * the same panels read with vpdpbusd on u = x + 128, each column's sum
 * started at corr, (input_offset - 128) x its weight sum. */
void tvmd_cmsis_gemv_vnni_avx512(const int8_t* x, int32_t depth, const int8_t* w, int32_t n, const int32_t* corr,
                                 const int32_t* bias, const int32_t* multiplier, const int32_t* shift,
                                 const tvmd_cmsis_quant_t* q, int8_t* out);
void tvmd_cmsis_gemv_vnni_avx2(const int8_t* x, int32_t depth, const int8_t* w, int32_t n, const int32_t* corr,
                               const int32_t* bias, const int32_t* multiplier, const int32_t* shift,
                               const tvmd_cmsis_quant_t* q, int8_t* out);
/* tvmd_cmsis_gemv_s8 on AVX2: the sums requantized in registers. */
void tvmd_cmsis_gemv_s8_avx2(const int8_t* x, int32_t depth, const int8_t* w, int32_t n, const int32_t* offset_sums,
                             const int32_t* bias, const int32_t* multiplier, const int32_t* shift,
                             const tvmd_cmsis_quant_t* q, int8_t* out);
/* The int8 elementwise operation of tvmd_cmsis_elementwise_s8_avx2. */
#define TVMD_CMSIS_EW_ADD 0
#define TVMD_CMSIS_EW_SUB 1
#define TVMD_CMSIS_EW_MUL 2
/* int8 ADD, SUB or MUL (op, a TVMD_CMSIS_EW_*) over p's broadcast walk when
 * its innermost strides are 0 or 1 (returns 1), else nothing (returns 0). */
int tvmd_cmsis_elementwise_s8_avx2(const tvmd_cmsis_elementwise_params_t* p, int op, const int8_t* in1,
                                   const int8_t* in2, int8_t* out);
/* The same on AVX-512 (64 values a step); also 0 for a shift below -31. */
int tvmd_cmsis_elementwise_s8_avx512(const tvmd_cmsis_elementwise_params_t* p, int op, const int8_t* in1,
                                     const int8_t* in2, int8_t* out);
/* rows runs of n outputs: row r's out[i] (out + r * n) is the max (is_max)
 * or min of a[r * a_row + i * sa] and b[r * b_row + i * sb]; the steps sa, sb
 * are 1 (contiguous) or 0 (one value repeated). */
void tvmd_cmsis_minmax_rows_s8_avx2(const int8_t* a, int32_t sa, size_t a_row, const int8_t* b, int32_t sb,
                                    size_t b_row, int32_t n, int32_t rows, int is_max, int8_t* out);
/* SOFTMAX's memoized tables on AVX2 (simd_x86_softmax.c): for each distance
 * d <= span below a row's maximum (written in steps of 8, up to 256 entries)
 * its exponential (exps) and that rounded to Q12.19 (terms), 0 past diff_min;
 * and for count distances each one's output for one row (outs). */
void tvmd_cmsis_softmax_exps_avx2(const tvmd_cmsis_softmax_params_t* p, int32_t span, int32_t* exps,
                                  int32_t* terms);
/* The smallest (*lo) and largest (*hi) of x[0..depth). */
void tvmd_cmsis_softmax_row_range_avx2(const int8_t* x, int32_t depth, int32_t* lo, int32_t* hi);
void tvmd_cmsis_softmax_outputs_avx2(const int32_t* exps, int32_t count, int32_t shifted_scale, int exponent,
                                     int32_t out_min, int32_t out_max, int32_t* outs);
/* MAX_POOL_2D and AVERAGE_POOL_2D, int8, on AVX2 (simd_x86_pooling.c); the
 * average only for windows of at most 256 taps (its int16 sums). */
int32_t tvmd_cmsis_max_pool_s8_avx2(const tvmd_cmsis_pool_params_t* p, const int8_t* input, int8_t* output);
int32_t tvmd_cmsis_avg_pool_s8_avx2(const tvmd_cmsis_pool_params_t* p, const int8_t* input, int8_t* output);
/* One batch image of DEPTHWISE_CONV_2D with depth multiplier 1 and at most
 * TVMD_CMSIS_DW_MAX_TAPS taps (integer, as depthwise_conv.c), on AVX2 or
 * AVX-512 (simd_x86_depthwise.c). */
void tvmd_cmsis_depthwise_avx2(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* input,
                               const int32_t* bias, int8_t* output);
void tvmd_cmsis_depthwise_avx512(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* input,
                                 const int32_t* bias, int8_t* output);
/* The scratch of the AVX-512 depthwise on widened pair rows
 * (simd_x86_depthwise_rows.c): 0 where it does not run (a depth multiplier
 * other than 1, more than TVMD_CMSIS_DW_MAX_TAPS taps, a ring of rows over
 * TVMD_CMSIS_CONV_BAND_BYTES), then simd_x86_depthwise.c's path runs. */
size_t tvmd_cmsis_depthwise_rows_bytes(const tvmd_cmsis_depthwise_conv_params_t* p);
void tvmd_cmsis_depthwise_rows_avx512(const tvmd_cmsis_depthwise_conv_params_t* p, const int8_t* input,
                                      const int32_t* bias, int8_t* output, void* scratch, int vnni);
#else
#define TVMD_CMSIS_X86 0
#endif

/* The SIMD level the kernels use, as its base level (PORTABLE, AVX2 or
 * AVX512: a VNNI level answers its base): the CPU's highest, detected once;
 * tests force each level the CPU has with tvmd_cmsis_set_simd_level. */
int tvmd_cmsis_simd_level(void);

/* TVMD_CMSIS_LEVEL_AVXVNNI or _AVX512VNNI when the kernels use a VNNI level,
 * else 0: whether CONV_2D and FULLY_CONNECTED run the int8 VNNI GEMM. */
int tvmd_cmsis_vnni_level(void);

/* Start of every kernel: a NULL resource_handle means "no device" (the
 * kernel used standalone, as firmware may call CMSIS-NN directly); a device
 * must be active, and the call is counted. */
static inline int32_t tvmd_cmsis_enter(void* resource_handle, uint32_t kind, uint64_t macs) {
  tvm_device_cmsis_nn_t* dev = (tvm_device_cmsis_nn_t*)resource_handle;
  if (dev == NULL) return TVMD_OK;
  if (!dev->active) return TVMD_ERR_INVALID_STATE;
  dev->call_counts[kind] += 1;
  dev->total_calls += 1;
  dev->macs += macs;
  return TVMD_OK;
}

/* Buffers of a weighted kernel (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED):
 * input, filter, optional bias, output, scratch. */
typedef struct {
  const int8_t* input;
  const int8_t* filter; /* the model's int8 filter (the M-profile packing reads it) */
  const int32_t* bias;  /* NULL when the operator has none */
  int8_t* output;
  void* scratch; /* NULL when the kernel takes no scratch */
} tvmd_cmsis_weighted_io_t;

/* The shared start of a weighted kernel: unpack the buffers in the kernel
 * ABI's order (a scratch slot only when with_scratch), then enter the device
 * (tvmd_cmsis_enter; slot is the operator's call_counts slot). */
static inline int32_t tvmd_cmsis_weighted_enter(void* const* buffers, int32_t num_inputs, int with_scratch,
                                                void* resource_handle, uint32_t slot, uint64_t macs,
                                                tvmd_cmsis_weighted_io_t* io) {
  if (buffers == NULL || (num_inputs != 2 && num_inputs != 3)) return TVMD_ERR_INVALID_ARGUMENT;
  io->input = (const int8_t*)buffers[0];
  io->filter = (const int8_t*)buffers[1];
  io->bias = num_inputs == 3 ? (const int32_t*)buffers[2] : NULL;
  io->output = (int8_t*)buffers[num_inputs];
  io->scratch = with_scratch ? buffers[num_inputs + 1] : NULL;
  if (io->input == NULL || io->output == NULL || (with_scratch && io->scratch == NULL)) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  return tvmd_cmsis_enter(resource_handle, slot, macs);
}

/* int32 addition that wraps like the reference's (which overflows silently)
 * without signed-overflow undefined behaviour. */
static inline int32_t tvmd_cmsis_wrap_add(int32_t a, int32_t b) {
  return (int32_t)((uint32_t)a + (uint32_t)b);
}

static inline int32_t tvmd_cmsis_min(int32_t a, int32_t b) { return a < b ? a : b; }
static inline int32_t tvmd_cmsis_max(int32_t a, int32_t b) { return a > b ? a : b; }

/* One int32 accumulator to int8 as TFLM's reference kernels do: the bias
 * added (wrapping like the reference's int32 addition), multiplied by the
 * quantized multiplier, the output offset added, clamped. */
static inline int8_t tvmd_cmsis_output_s8(int32_t acc, const int32_t* bias, int32_t channel, int32_t multiplier,
                                          int32_t shift, const tvmd_cmsis_quant_t* q) {
  if (bias != NULL) acc = tvmd_cmsis_wrap_add(acc, bias[channel]);
  int32_t v = tvmd_multiply_by_quantized_multiplier(acc, multiplier, shift) + q->output_offset;
  v = v < q->act_min ? q->act_min : v;
  v = v > q->act_max ? q->act_max : v;
  return (int8_t)v;
}

/* tvmd_cmsis_requantize_s8 with an optional per-channel int32 bias added
 * (wrapping, as the reference's int32 addition) first; bias may be NULL. */
void tvmd_cmsis_requantize_bias_s8(const int32_t* acc, const int32_t* bias, const int32_t* multiplier,
                                   const int32_t* shift, int32_t n, const tvmd_cmsis_quant_t* q,
                                   int8_t* out);

/* acc[r * ldw + j] = sum_{i < 2 * k_pairs} a[r * lda + i] * W[i][j] for r < m,
 * j < ldw.  Rows of a hold at least 2 * k_pairs int16 values; the weights are
 * stored pair-interleaved, w[(p * ldw + j) * 2 + q] = W[2p + q][j], and ldw is
 * a multiple of TVMD_CMSIS_GEMM_COLS.  Operands have magnitude <= 255 and the
 * caller guarantees the int32 sums cannot overflow (checked at prepare). */
void tvmd_cmsis_gemm_s16(const int16_t* a, int32_t lda, int32_t m, int32_t k_pairs, const int16_t* w,
                         int32_t ldw, int32_t* acc);

/* The GEMM with its sums requantized to int8: out[r * ldo + j] for r < m,
 * j < n (n <= ldw) is row r's column j plus bias[j] (bias may be NULL),
 * requantized with multiplier[j] and shift[j].  acc holds m * ldw int32 for
 * the paths that store the sums first; the AVX2 path requantizes them in
 * registers and writes int8 directly. */
void tvmd_cmsis_gemm_s8(const int16_t* a, int32_t lda, int32_t m, int32_t k_pairs, const int16_t* w, int32_t ldw,
                        int32_t n, const int32_t* bias, const int32_t* multiplier, const int32_t* shift,
                        const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo, int32_t* acc);

/* One row (batch 1) with int8 weights in panels (gemv.c): out[j], j < n,
 * is sum_{k < depth} x[k] * W[j][k] + offset_sums[j] plus bias[j] (bias may
 * be NULL), requantized.  w holds W, every entry in [-127, 127], as
 * ops/_common.py's panels_s8 packs it; offset_sums is zero padded to n
 * rounded up to TVMD_CMSIS_GEMV_COLS; x holds exactly depth values; acc
 * holds n int32 for the paths that store the sums first.  vnni_corr (NULL
 * when not packed) is the VNNI levels' start of each column's sum,
 * (input_offset - 128) x its weight sum, padded as offset_sums. */
void tvmd_cmsis_gemv_s8(const int8_t* x, int32_t depth, const int8_t* w, int32_t n, const int32_t* offset_sums,
                        const int32_t* vnni_corr, const int32_t* bias, const int32_t* multiplier, const int32_t* shift,
                        const tvmd_cmsis_quant_t* q, int8_t* out, int32_t* acc);

/* The int8 VNNI GEMM on the VNNI level in use (tvmd_cmsis_vnni_level must
 * be non-zero): out[r * ldo + j], r < m, j < n, is corr[j] plus the sum over
 * row r's quads (a, tvmd_cmsis_vnni_rows_t) of u * W, plus bias[j] (bias may
 * be NULL), requantized.  w holds the quad-interleaved int8 weights
 * w[(s * ldw + j) * 4 + t] = W[4s + t][j] (ldw a multiple of
 * TVMD_CMSIS_GEMM_COLS, zero padded), corr ldw int32 (see simd_x86_vnni.c). */
void tvmd_cmsis_gemm_vnni_s8(const tvmd_cmsis_vnni_rows_t* a, int32_t m, const int8_t* w, int32_t ldw, int32_t n,
                             const int32_t* corr, const int32_t* bias, const int32_t* multiplier,
                             const int32_t* shift, const tvmd_cmsis_quant_t* q, int8_t* out, int32_t ldo);

/* CONV_2D on the VNNI GEMM (gemm_vnni.c): p->weights_vnni is set and a VNNI
 * level in use.  image_scratch and rows_scratch are the int16 path's image
 * and im2col regions; the bordered image is pw pixels wide and built band
 * output rows at a time (0 and 0: pointwise, no image). */
void tvmd_cmsis_conv_vnni(const tvmd_cmsis_conv_params_t* p, const int8_t* input, const int32_t* bias,
                          int8_t* output, void* image_scratch, void* rows_scratch, int32_t band, int32_t pw);

/* The largest bordered image CONV_2D keeps whole (conv.c); a larger one is
 * built a band of output rows at a time. */
#define TVMD_CMSIS_CONV_BAND_BYTES ((size_t)64 * 1024)

/* Rows of the bordered image that `rows` consecutive output rows of a
 * CONV_2D read, from row oy0 * stride_h of the first. */
static inline int32_t tvmd_cmsis_conv_band_in_rows(const tvmd_cmsis_conv_params_t* p, int32_t rows) {
  return (rows - 1) * p->stride_h + (p->filter_h - 1) * p->dilation_h + 1;
}

/* FULLY_CONNECTED with batch rows on the VNNI GEMM (p->weights_vnni set, a
 * VNNI level in use; fully_connected_vnni.c); rows_scratch is the int16
 * path's rows region. */
void tvmd_cmsis_fully_connected_vnni(const tvmd_cmsis_fully_connected_params_t* p, const int8_t* input,
                                     const int32_t* bias, int8_t* output, void* rows_scratch);

/* SOFTMAX rows, int8 input, gemmlowp's fixed-point path (softmax.c): int8
 * output (out_bits 8, offset -128) or int16 output (16, offset -32768). */
void tvmd_cmsis_softmax_gemmlowp(const tvmd_cmsis_softmax_params_t* p, const int8_t* input, void* output,
                                 int out_bits);

#endif /* TVMD_CMSIS_INTERNAL_H_ */
