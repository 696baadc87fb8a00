/*
 * The lifecycle ABI: how a plugin hands its C lifecycle functions to the
 * framework.
 *
 * A device written in C implements the six transitions of the Device API as
 *
 *   int32_t TVMDevice<Name>{Init,Open,Activate,Deactivate,Close,Destroy}(
 *       tvm_device_<name>_t* device);
 *
 * and publishes them as one tvmd_lifecycle_t inside a PyCapsule named
 * TVMD_LIFECYCLE_CAPSULE (tvmdevice/capsules.pxd: lifecycle_capsule).
 * tvmdevice.plugin.CLifecycle turns that capsule into the six
 * lifecycle hooks.  The struct starts with abi_version and struct_size so that
 * a plugin built against another version is refused, never called.  A NULL
 * function pointer means the device has nothing to do in that transition.
 */
#ifndef TVMDEVICE_LIFECYCLE_ABI_H_
#define TVMDEVICE_LIFECYCLE_ABI_H_

#include <stdint.h>

#include "tvmdevice/c_device_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TVMD_LIFECYCLE_ABI_VERSION 1u
#define TVMD_LIFECYCLE_CAPSULE "tvmdevice.lifecycle"

/* One transition; `device` is the device's tvm_device_<name>_t. */
typedef int32_t (*tvmd_lifecycle_fn)(void* device);

typedef struct {
  uint32_t abi_version; /* TVMD_LIFECYCLE_ABI_VERSION the plugin was built with */
  uint32_t struct_size; /* sizeof(tvmd_lifecycle_t) the plugin was built with */
  tvmd_lifecycle_fn init;
  tvmd_lifecycle_fn open;
  tvmd_lifecycle_fn activate;
  tvmd_lifecycle_fn deactivate;
  tvmd_lifecycle_fn close;
  tvmd_lifecycle_fn destroy;
} tvmd_lifecycle_t;

/* The six functions TVMDevice<Name><Step>, each taking its own
 * tvm_device_<name>_t*.  Every supported ABI passes all object pointers
 * alike, so each is called through the void* form (GCC's
 * -Wcast-function-type accepts pointer-for-pointer parameters). */
#define TVMD_LIFECYCLE(Name)                                                       \
  {                                                                                \
    TVMD_LIFECYCLE_ABI_VERSION, (uint32_t)sizeof(tvmd_lifecycle_t),                \
        (tvmd_lifecycle_fn)TVMDevice##Name##Init, (tvmd_lifecycle_fn)TVMDevice##Name##Open, \
        (tvmd_lifecycle_fn)TVMDevice##Name##Activate,                              \
        (tvmd_lifecycle_fn)TVMDevice##Name##Deactivate,                            \
        (tvmd_lifecycle_fn)TVMDevice##Name##Close, (tvmd_lifecycle_fn)TVMDevice##Name##Destroy \
  }

#ifdef __cplusplus
}
#endif
#endif /* TVMDEVICE_LIFECYCLE_ABI_H_ */
