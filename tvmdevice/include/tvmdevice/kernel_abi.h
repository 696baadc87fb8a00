/*
 * The kernel-call ABI: how the executor's run loop calls a device kernel with
 * no Python in between.
 *
 * A plugin publishes each kernel as a tvmd_kernel_t inside a PyCapsule named
 * TVMD_KERNEL_CAPSULE.  The struct starts with abi_version and struct_size so
 * that a consumer built against another version refuses it instead of calling
 * through a wrong layout.  Every call has the same shape:
 *
 *   status = fn(params, buffers, resource_handle)
 *
 *   params           the kernel's own flat, read-only parameter struct,
 *                    prepared once at compile time by the plugin
 *   buffers          data pointers in the order the plugin's prepare step
 *                    declared (inputs, outputs, then scratch); device
 *                    addresses for devices whose memory is not host memory
 *   resource_handle  the device's tvm_device_<name>_t, always last
 */
#ifndef TVMDEVICE_KERNEL_ABI_H_
#define TVMDEVICE_KERNEL_ABI_H_

#include <stdint.h>

#include "tvmdevice/c_device_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TVMD_KERNEL_ABI_VERSION 1u
#define TVMD_KERNEL_CAPSULE "tvmdevice.kernel"
#define TVMD_PARAMS_CAPSULE "tvmdevice.params"

typedef int32_t (*tvmd_kernel_fn)(const void* params, void* const* buffers,
                                  void* resource_handle);

typedef struct {
  uint32_t abi_version; /* TVMD_KERNEL_ABI_VERSION the plugin was built with */
  uint32_t struct_size; /* sizeof(tvmd_kernel_t) the plugin was built with */
  const char* name;     /* symbol-like name, e.g. "tvmd_conv2d_s8" */
  tvmd_kernel_fn fn;
} tvmd_kernel_t;

#define TVMD_KERNEL_INIT(name_, fn_) \
  { TVMD_KERNEL_ABI_VERSION, (uint32_t)sizeof(tvmd_kernel_t), (name_), (fn_) }

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_KERNEL_ABI_H_ */
