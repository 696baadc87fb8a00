/*
 * What every x86-64 SIMD file of the kernels includes (simd_x86*.c): the
 * intrinsics and the function attribute that compiles a function for an ISA
 * extension (TVMD_X86_TARGET), in one of two builds.
 *
 * Native (the default): <immintrin.h>, and TVMD_X86_TARGET is GCC's
 * target("...") attribute, so each path is compiled for its extension and
 * chosen at run time from the CPU's features (tvmd_cmsis_cpu_levels).
 *
 * Emulated (TVMD_CMSIS_SIMD_EMULATION, set by building the plugin with
 * TVMDEVICE_CMSIS_SIMD_EMULATION=1): the same intrinsics from SIMDe (Debian's
 * libsimde-dev), which implements them in portable C, and no target
 * attributes: every level is available on any x86-64 CPU and runs the very C
 * the native build compiles, so the tests check the AVX-512 and VNNI paths
 * bit for bit on CPUs that lack them.  Emulated runs say nothing about speed.
 */
#ifndef TVMD_CMSIS_SIMD_X86_H_
#define TVMD_CMSIS_SIMD_X86_H_

#if TVMD_CMSIS_SIMD_EMULATION
#if defined(__has_include)
#if !__has_include(<simde/x86/avx512.h>)
#error "TVMDEVICE_CMSIS_SIMD_EMULATION needs SIMDe's headers: apt-get install libsimde-dev"
#endif
#endif
#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>

#include "simd_x86_emulation.h" /* what SIMDe 0.7.4's aliases lack */
/* AVX-VNNI's vpdpbusd has the semantics of the AVX-512 VL form, which SIMDe
 * implements under that name only. */
#define _mm256_dpbusd_avx_epi32 _mm256_dpbusd_epi32
#define TVMD_X86_TARGET(features)
#else
#include <immintrin.h>
#define TVMD_X86_TARGET(features) __attribute__((target(features)))
#endif

#endif /* TVMD_CMSIS_SIMD_X86_H_ */
