/*
 * FULLY_CONNECTED for the M-profile packing (-mcpu=cortex-m*): the operands
 * as CMSIS-NN's arm_fully_connected_s8 takes them, no scratch.  The int8
 * weights [out_ch, accum_depth] are read in place from the weights buffer
 * (buffers[1]) and the weights offset (per-tensor weights with a zero point)
 * is added as they are read, as TFLM's reference FullyConnected does.
 * Integer arithmetic only; the int32 sums cannot overflow (bounded at
 * prepare).
 */
#include "internal.h"

size_t tvmd_cmsis_fully_connected_m_s8_get_buffer_size(const tvmd_cmsis_fully_connected_m_params_t* p) {
  (void)p;
  return 0;
}

int32_t tvmd_cmsis_fully_connected_m_s8(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_fully_connected_m_params_t* p = (const tvmd_cmsis_fully_connected_m_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_FULLY_CONNECTED_M) return TVMD_ERR_INVALID_ARGUMENT;
  tvmd_cmsis_weighted_io_t io;
  const int32_t status = tvmd_cmsis_weighted_enter(buffers, p->num_inputs, 0, resource_handle,
                                                   TVMD_CMSIS_KIND_FULLY_CONNECTED, p->macs, &io);
  if (status != TVMD_OK) return status;
  if (io.filter == NULL) return TVMD_ERR_INVALID_ARGUMENT;

  const int32_t depth = p->accum_depth, qstep = p->per_channel ? 1 : 0;
  const int32_t in_offset = p->q.input_offset, w_offset = p->filter_offset;
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* x = io.input + (size_t)b * (size_t)depth;
    int8_t* out = io.output + (size_t)b * (size_t)p->out_ch;
    for (int32_t oc = 0; oc < p->out_ch; oc++) {
      const int8_t* w = io.filter + (size_t)oc * (size_t)depth;
      int32_t acc = 0;
      for (int32_t i = 0; i < depth; i++) acc += ((int32_t)x[i] + in_offset) * ((int32_t)w[i] + w_offset);
      out[oc] = tvmd_cmsis_output_s8(acc, io.bias, oc, p->multiplier[oc * qstep], p->shift[oc * qstep], &p->q);
    }
  }
  return TVMD_OK;
}
