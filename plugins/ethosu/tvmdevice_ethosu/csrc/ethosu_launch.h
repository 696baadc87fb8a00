/*
 * The one function through which the partition kernel starts the NPU, with
 * the shape of Arm's driver call (ethosu_invoke_v3 in ethos-u-core-driver):
 * the device, the driver payload Vela wrote (COP1 header, command stream),
 * the table of region base addresses and their sizes, and a user argument.
 * Here it runs the functional model (the same C the host extension runs);
 * a board replaces ethosu_launch.c with a call of Arm's driver.
 */
#ifndef TVMDEVICE_ETHOSU_LAUNCH_H_
#define TVMDEVICE_ETHOSU_LAUNCH_H_

#include <stddef.h>
#include <stdint.h>

#include "tvm_device_ethos_u.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the functional model needs to know of the partition, passed as the user argument: the int16
 * values of its own memory the stream's largest operation uses (tvmd_ethosu_npu_model_memory). */
typedef struct tvmd_ethosu_work {
  uint32_t weight_slots;
} tvmd_ethosu_work_t;

/* Run one command stream to its end.  Region r starts at base_addrs[r] and
 * spans base_addr_sizes[r] bytes.  Returns TVMD_OK, or a TVMD_ERR_* status. */
int32_t tvmd_ethosu_launch(tvm_device_ethos_u_t* dev, const void* cms, size_t cms_size, uint64_t* base_addrs,
                           size_t* base_addr_sizes, int num_base_addr, void* user_arg);

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_LAUNCH_H_ */
