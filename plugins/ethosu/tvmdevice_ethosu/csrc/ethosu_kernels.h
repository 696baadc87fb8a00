/* The kernels the ethos-u device publishes (one: a partition's command stream). */
#ifndef TVMDEVICE_ETHOSU_KERNELS_H_
#define TVMDEVICE_ETHOSU_KERNELS_H_

#include "tvmdevice/kernel_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const tvmd_kernel_t tvmd_ethosu_partition_kernel;

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_ETHOSU_KERNELS_H_ */
