/*
 * The ethos-u device's C side: the generated tvm_device_ethos_u.h (its struct
 * and lifecycle prototypes) and the constants the lifecycle uses.
 */
#ifndef TVMDEVICE_ETHOSU_H_
#define TVMDEVICE_ETHOSU_H_

#include "tvm_device_ethos_u.h"
#include "tvmdevice/lifecycle_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "ETHU" (tvmdevice_ethosu.device.MAGIC) */
#define ETHOSU_MAGIC 0x55485445u

/* power_state values (tvmdevice_ethosu.device.PowerState) */
enum { ETHOSU_POWER_OFF = 0, ETHOSU_POWER_IDLE = 1, ETHOSU_POWER_ACTIVE = 2 };

/* transitions[] indices (tvmdevice_ethosu.device.TRANSITIONS) */
enum { ETHOSU_T_INIT, ETHOSU_T_OPEN, ETHOSU_T_ACTIVATE, ETHOSU_T_DEACTIVATE, ETHOSU_T_CLOSE, ETHOSU_T_DESTROY };

/* The lifecycle table the Python host and an exported model's code both use. */
extern const tvmd_lifecycle_t tvmd_ethosu_lifecycle;

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_H_ */
