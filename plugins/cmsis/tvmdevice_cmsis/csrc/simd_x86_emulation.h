/*
 * The emulated build's completion of SIMDe 0.7.4 (Debian's libsimde-dev):
 * the few AVX-512 intrinsics the kernels use that its native aliases lack or
 * misdeclare, written lane by lane from Intel's definitions.  Included by
 * simd_x86.h only when TVMD_CMSIS_SIMD_EMULATION is set, after SIMDe.
 */
#ifndef TVMD_CMSIS_SIMD_X86_EMULATION_H_
#define TVMD_CMSIS_SIMD_X86_EMULATION_H_

#include <stdint.h>

/* SIMDe declares the mask type, not its native name. */
#ifndef __mmask16
#define __mmask16 simde__mmask16
#endif

/* SIMDe 0.7.4 aliases _mm512_madd_epi16 with the masked form's four
 * arguments. */
#undef _mm512_madd_epi16
#define _mm512_madd_epi16(a, b) simde_mm512_madd_epi16((a), (b))

/* vpsrad: each int32 lane shifted right arithmetically (counts past 31 fill
 * with the sign). */
#ifndef _mm512_srai_epi32
static inline simde__m512i tvmd_emu_mm512_srai_epi32(simde__m512i a, unsigned int count) {
  simde__m512i_private x = simde__m512i_to_private(a), r;
  const unsigned int s = count > 31u ? 31u : count;
  for (int i = 0; i < 16; i++) r.i32[i] = x.i32[i] >> s;
  return simde__m512i_from_private(r);
}
#define _mm512_srai_epi32(a, count) tvmd_emu_mm512_srai_epi32((a), (unsigned int)(count))
#endif

/* vpsravd: each int32 lane shifted right arithmetically by its own count. */
#ifndef _mm512_srav_epi32
static inline simde__m512i tvmd_emu_mm512_srav_epi32(simde__m512i a, simde__m512i count) {
  simde__m512i_private x = simde__m512i_to_private(a), c = simde__m512i_to_private(count), r;
  for (int i = 0; i < 16; i++) {
    const uint32_t s = (uint32_t)c.i32[i];
    r.i32[i] = x.i32[i] >> (s > 31u ? 31u : s);
  }
  return simde__m512i_from_private(r);
}
#define _mm512_srav_epi32(a, count) tvmd_emu_mm512_srav_epi32((a), (count))
#endif

/* vmovdqu32 with a zeroing mask: lanes off the mask are 0 and not read. */
#ifndef _mm512_maskz_loadu_epi32
static inline simde__m512i tvmd_emu_mm512_maskz_loadu_epi32(simde__mmask16 k, const void* p) {
  simde__m512i_private r;
  const int32_t* src = (const int32_t*)p;
  for (int i = 0; i < 16; i++) r.i32[i] = (k >> i) & 1 ? src[i] : 0;
  return simde__m512i_from_private(r);
}
#define _mm512_maskz_loadu_epi32(k, p) tvmd_emu_mm512_maskz_loadu_epi32((k), (p))
#endif

/* vpmovdb to memory with a mask: the low byte of each lane on the mask
 * stored, nothing else written. */
#ifndef _mm512_mask_cvtepi32_storeu_epi8
static inline void tvmd_emu_mm512_mask_cvtepi32_storeu_epi8(void* p, simde__mmask16 k, simde__m512i a) {
  simde__m512i_private x = simde__m512i_to_private(a);
  int8_t* dst = (int8_t*)p;
  for (int i = 0; i < 16; i++) {
    if ((k >> i) & 1) dst[i] = (int8_t)(uint8_t)((uint32_t)x.i32[i] & 0xFFu);
  }
}
#define _mm512_mask_cvtepi32_storeu_epi8(p, k, a) tvmd_emu_mm512_mask_cvtepi32_storeu_epi8((p), (k), (a))
#endif

/* vpmovdb to a register: the low byte of each of the 16 lanes, in order. */
#ifndef _mm512_cvtepi32_epi8
static inline simde__m128i tvmd_emu_mm512_cvtepi32_epi8(simde__m512i a) {
  simde__m512i_private x = simde__m512i_to_private(a);
  simde__m128i_private r;
  for (int i = 0; i < 16; i++) r.i8[i] = (int8_t)(uint8_t)((uint32_t)x.i32[i] & 0xFFu);
  return simde__m128i_from_private(r);
}
#define _mm512_cvtepi32_epi8(a) tvmd_emu_mm512_cvtepi32_epi8((a))
#endif

/* SIMDe names the 8- and 64-bit mask types only as simde__mmask8/64. */
#ifndef __mmask8
#define __mmask8 simde__mmask8
#endif
#ifndef __mmask64
#define __mmask64 simde__mmask64
#endif

/* vpmovsxbd: 16 int8 sign-extended to 16 int32 lanes. */
#ifndef _mm512_cvtepi8_epi32
static inline simde__m512i tvmd_emu_mm512_cvtepi8_epi32(simde__m128i a) {
  simde__m128i_private x = simde__m128i_to_private(a);
  simde__m512i_private r;
  for (int i = 0; i < 16; i++) r.i32[i] = x.i8[i];
  return simde__m512i_from_private(r);
}
#define _mm512_cvtepi8_epi32(a) tvmd_emu_mm512_cvtepi8_epi32((a))
#endif

/* vmovdqu8 with a zeroing mask: bytes off the mask are 0 and not read. */
#ifndef _mm512_maskz_loadu_epi8
static inline simde__m512i tvmd_emu_mm512_maskz_loadu_epi8(simde__mmask64 k, const void* p) {
  simde__m512i_private r;
  const int8_t* src = (const int8_t*)p;
  for (int i = 0; i < 64; i++) r.i8[i] = (k >> i) & 1 ? src[i] : 0;
  return simde__m512i_from_private(r);
}
#define _mm512_maskz_loadu_epi8(k, p) tvmd_emu_mm512_maskz_loadu_epi8((k), (p))
#endif

/* vmovdqu8 to memory with a mask: only the bytes on the mask written. */
#ifndef _mm512_mask_storeu_epi8
static inline void tvmd_emu_mm512_mask_storeu_epi8(void* p, simde__mmask64 k, simde__m512i a) {
  simde__m512i_private x = simde__m512i_to_private(a);
  int8_t* dst = (int8_t*)p;
  for (int i = 0; i < 64; i++) {
    if ((k >> i) & 1) dst[i] = x.i8[i];
  }
}
#define _mm512_mask_storeu_epi8(p, k, a) tvmd_emu_mm512_mask_storeu_epi8((p), (k), (a))
#endif

#endif /* TVMD_CMSIS_SIMD_X86_EMULATION_H_ */
