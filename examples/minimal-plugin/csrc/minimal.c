/* The minimal device: its lifecycle and an int8 ADD (TFLM's reference AddFunc), in C99. */
#include "tvmdevice/kernel_abi.h"
#include "tvmdevice/lifecycle_abi.h"
#include "tvm_device_minimal.h"
#include "tvmd_minimal_params.h"
#include "tvmdevice/quant.h"

int32_t TVMDeviceMinimalInit(tvm_device_minimal_t* d) { d->active = 0; return TVMD_OK; }
int32_t TVMDeviceMinimalOpen(tvm_device_minimal_t* d) { (void)d; return TVMD_OK; }
int32_t TVMDeviceMinimalActivate(tvm_device_minimal_t* d) { d->active = 1; return TVMD_OK; }
int32_t TVMDeviceMinimalDeactivate(tvm_device_minimal_t* d) { d->active = 0; return TVMD_OK; }
int32_t TVMDeviceMinimalClose(tvm_device_minimal_t* d) { (void)d; return TVMD_OK; }
int32_t TVMDeviceMinimalDestroy(tvm_device_minimal_t* d) { (void)d; return TVMD_OK; }
const tvmd_lifecycle_t minimal_lifecycle = TVMD_LIFECYCLE(Minimal);

static int32_t scaled(int8_t x, int32_t offset, int32_t left_shift, int32_t multiplier, int32_t shift) {
  return tvmd_multiply_by_quantized_multiplier((int32_t)((uint32_t)(x + offset) << left_shift), multiplier, shift);
}

static int32_t add_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_minimal_add_t* p = params;
  const int8_t *in1 = buffers[0], *in2 = buffers[1];
  int8_t* out = buffers[2];
  if (!((tvm_device_minimal_t*)resource_handle)->active) return TVMD_ERR_INVALID_STATE;
  for (int32_t n = 0; n < p->size; n++) {
    int32_t rest = n, i = 0, j = 0; /* output element n -> input offsets (stride 0: broadcast) */
    for (int d = 3; d >= 0; rest /= p->out_dims[d--]) {
      i += rest % p->out_dims[d] * p->in1_strides[d];
      j += rest % p->out_dims[d] * p->in2_strides[d];
    }
    const int32_t sum = scaled(in1[i], p->input1_offset, p->left_shift, p->input1_multiplier, p->input1_shift) +
                        scaled(in2[j], p->input2_offset, p->left_shift, p->input2_multiplier, p->input2_shift);
    const int32_t raw = tvmd_multiply_by_quantized_multiplier(sum, p->output_multiplier, p->output_shift);
    out[n] = (int8_t)tvmd_clamp_i32(raw + p->output_offset, p->act_min, p->act_max);
  }
  return TVMD_OK;
}
const tvmd_kernel_t minimal_add_kernel = TVMD_KERNEL_INIT("minimal_add_s8", add_s8);
