/*
 * tvmdevice firmware platform: what a program built by tvmdevice.firmware.build() may use.
 *
 * The same program builds for the host (system cc) and for Cortex-M under QEMU
 * (arm-none-eabi-gcc, newlib with semihosting file I/O): it uses standard C99
 * I/O (fopen/fread/fwrite), main's argc/argv and its exit status, nothing else.
 *
 * Measured regions: the instructions a run executes between
 * tvmd_fw_region_begin() and tvmd_fw_region_end() are counted apart from the
 * whole run's (start-up, stack painting and file I/O included), so a runner
 * can report what one inference costs.  On the host both are no-ops.
 *
 * Profiling marks: TVMD_FW_MARK(id) tells the instruction counter that point
 * number id (0 .. TVMD_FW_MAX_MARKS - 1) was reached, and when, inside a
 * measured region.  A build without TVMD_FW_PROFILE, or for the host,
 * compiles every mark away; with it, a mark is a call of tvmd_fw_mark, which
 * spells the id to the counter by calling a function for each of its bits.
 * The counter leaves the instructions inside tvmd_fw_mark out of the marks'
 * times and counts them apart.
 */
#ifndef TVMDEVICE_FW_H_
#define TVMDEVICE_FW_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Start of a measured region (regions may repeat; they must not nest). */
void tvmd_fw_region_begin(void);

/* End of the measured region opened by the last tvmd_fw_region_begin(). */
void tvmd_fw_region_end(void);

/* The most marks a program may number (16-bit ids). */
#define TVMD_FW_MAX_MARKS 65536u

#if defined(TVMD_FW_PROFILE) && defined(__arm__)
void tvmd_fw_mark(unsigned int id);
#define TVMD_FW_MARK(id) tvmd_fw_mark(id)
#else
#define TVMD_FW_MARK(id) ((void)0)
#endif

#ifdef __cplusplus
}
#endif

#endif /* TVMDEVICE_FW_H_ */
