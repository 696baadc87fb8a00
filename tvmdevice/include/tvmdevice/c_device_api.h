/*
 * tvmdevice C Device API: the types, error codes and attribute kinds shared by
 * the host framework, every device plugin and firmware that links generated
 * code.  Plain C99; no allocation, no I/O.
 */
#ifndef TVMDEVICE_C_DEVICE_API_H_
#define TVMDEVICE_C_DEVICE_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the Device API contract implemented by this header. */
#define TVMD_DEVICE_API_VERSION 1

/* Error codes returned by every TVMDevice<Name><Hook> function and kernel.
 * 0 is success; the Python side maps each non-zero code to one exception
 * class in tvmdevice.errors. */
typedef enum {
  TVMD_OK = 0,
  TVMD_ERR_GENERIC = 1,           /* unspecified failure */
  TVMD_ERR_INVALID_STATE = 2,     /* illegal lifecycle transition */
  TVMD_ERR_OUT_OF_MEMORY = 3,     /* device memory exhausted */
  TVMD_ERR_INVALID_ARGUMENT = 4,  /* bad pointer, size, alignment, option */
  TVMD_ERR_NOT_SUPPORTED = 5,     /* operation or attribute not applicable */
  TVMD_ERR_ABI_MISMATCH = 6,      /* struct or kernel ABI version/size mismatch */
  TVMD_ERR_KERNEL = 7,            /* a kernel reported failure */
  TVMD_ERR_PLUGIN = 8             /* a plugin failed to load or validate */
} tvmd_status_t;

/* TVM's DeviceAttrKind, same numbering. */
typedef enum {
  TVMD_ATTR_EXIST = 0,
  TVMD_ATTR_MAX_THREADS_PER_BLOCK = 1,
  TVMD_ATTR_WARP_SIZE = 2,
  TVMD_ATTR_MAX_SHARED_MEMORY_PER_BLOCK = 3,
  TVMD_ATTR_COMPUTE_VERSION = 4,
  TVMD_ATTR_DEVICE_NAME = 5,
  TVMD_ATTR_MAX_CLOCK_RATE = 6,
  TVMD_ATTR_MULTI_PROCESSOR_COUNT = 7,
  TVMD_ATTR_MAX_THREAD_DIMENSIONS = 8,
  TVMD_ATTR_MAX_REGISTERS_PER_BLOCK = 9,
  TVMD_ATTR_GCN_ARCH = 10,
  TVMD_ATTR_API_VERSION = 11,
  TVMD_ATTR_DRIVER_VERSION = 12,
  TVMD_ATTR_L2_CACHE_SIZE_BYTES = 13,
  TVMD_ATTR_TOTAL_GLOBAL_MEMORY = 14,
  TVMD_ATTR_AVAILABLE_GLOBAL_MEMORY = 15,
  TVMD_ATTR_IMAGE_PITCH_ALIGNMENT = 16
} tvmd_attr_kind_t;

/* DLPack-compatible element type description. */
typedef struct {
  uint8_t code;   /* 0 int, 1 uint, 2 float */
  uint8_t bits;
  uint16_t lanes;
} tvmd_dtype_t;

/* Opaque stream handle; NULL is the device's default stream. */
typedef void* tvmd_stream_t;

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_C_DEVICE_API_H_ */
