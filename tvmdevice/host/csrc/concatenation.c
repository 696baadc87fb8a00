/*
 * CONCATENATION, int8: TFLM's reference_ops::Concatenation.  The output is
 * outer_size blocks; each block is the inputs' blocks of copy_sizes[i] bytes,
 * in input order.  Values are moved, not rescaled (inputs and output share
 * their quantization).  buffers: the inputs_count inputs, then the output.
 */
#include <string.h>

#include "internal.h"

int32_t tvmd_c_concatenation_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_c_concatenation_params_t* p = (const tvmd_c_concatenation_params_t*)params;
  int8_t* out = (int8_t*)buffers[p->inputs_count];
  (void)resource_handle;
  for (int32_t k = 0; k < p->outer_size; ++k) {
    for (int32_t i = 0; i < p->inputs_count; ++i) {
      const size_t n = (size_t)p->copy_sizes[i];
      memcpy(out, (const int8_t*)buffers[i] + (size_t)k * n, n);
      out += n;
    }
  }
  return TVMD_OK;
}
