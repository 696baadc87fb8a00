/* The kernels the ethos-u device publishes (one: a partition's command stream). */
#ifndef TVMDEVICE_ETHOSU_KERNELS_H_
#define TVMDEVICE_ETHOSU_KERNELS_H_

#include "tvmdevice/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Run one partition: buffers are its inputs, its outputs, then its scratch (Vela's region 1, when
 * Vela needs one); resource_handle is the tvm_device_ethos_u_t*. */
int32_t tvmd_ethosu_partition(const void* params, void* const* buffers, void* resource_handle);

extern const tvmd_kernel_t tvmd_ethosu_partition_kernel;

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_KERNELS_H_ */
