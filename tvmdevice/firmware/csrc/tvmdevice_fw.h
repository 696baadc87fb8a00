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

#ifdef __cplusplus
}
#endif

#endif /* TVMDEVICE_FW_H_ */
