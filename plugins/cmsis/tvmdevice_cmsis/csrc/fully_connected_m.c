/*
 * FULLY_CONNECTED for the M-profile packing (-mcpu=cortex-m*): the operands
 * as CMSIS-NN's arm_fully_connected_s8 takes them, no scratch.  The int8
 * weights [out_ch, accum_depth] are read in place from the weights buffer
 * (buffers[1]).  Two output channels at a time share every input load
 * (mprofile.h's tvmd_cmsis_dot_s8_1x2; the DSP path's four-row blocks here):
 *
 *  - Helium (MVE): sixteen int8 products per VMLADAVA; the input offset
 *    enters as input_offset * sum(weights row), the sum taken by VADDVA in
 *    the same loop (as CMSIS-NN's arm_nn_vec_mat_mult_t_s8 does); four
 *    channels requantized as one vector.
 *  - DSP: four rows at a time (then pairs); the input widened with its
 *    offset by SXTAB16 once per four values for all of them, each weights
 *    word unpacked by SXTB16, two products per SMLAD.
 *  - plain C, and any CPU when the weights have a zero point (per-tensor
 *    weights offset, which TFLite's int8 weights never carry): the offsets
 *    added to each operand as TFLM's reference FullyConnected does.
 *
 * Integer arithmetic only; the int32 sums cannot overflow (bounded at
 * prepare), so every path gives the same bits.
 */
#include "mprofile.h"

size_t tvmd_cmsis_fully_connected_m_s8_get_buffer_size(const tvmd_cmsis_fully_connected_m_params_t* p) {
  (void)p;
  return 0;
}

#if TVMD_CMSIS_DSP && !TVMD_CMSIS_MVE
/* s[r] = sum((x[i] + in_offset) * w_r[i]) for the four rows at w, w + depth,
 * ...: each word of input widened once (SXTAB16) for four rows' SMLADs.  Two
 * row pointers (rows 0 and 2) with the row length as a register offset for
 * rows 1 and 3, and a down-count, so the loop needs no stack. */
TVMD_CMSIS_KEEP_ORDER static void dot_1x4(const int8_t* x, const int8_t* w, int32_t depth, int32_t in_offset,
                                          int32_t s[4]) {
  const uint32_t offsets = ((uint32_t)in_offset & 0xFFFFu) | ((uint32_t)in_offset << 16);
  const size_t d = (size_t)depth;
  const int8_t* wa = w;
  const int8_t* wb = w + 2 * d;
  int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int32_t n = depth >> 2; n > 0; n--) {
    const uint32_t xw = tvmd_cmsis_read_s8x4(x);
    const uint32_t x02 = __sxtab16(offsets, xw), x13 = tvmd_cmsis_sxtab16_ror8(offsets, xw);
    uint32_t v = tvmd_cmsis_read_s8x4(wa + d);
    s1 = __smlad(x02, __sxtb16(v), s1);
    s1 = __smlad(x13, tvmd_cmsis_sxtb16_ror8(v), s1);
    v = tvmd_cmsis_read_s8x4(wa);
    s0 = __smlad(x02, __sxtb16(v), s0);
    s0 = __smlad(x13, tvmd_cmsis_sxtb16_ror8(v), s0);
    v = tvmd_cmsis_read_s8x4(wb + d);
    s3 = __smlad(x02, __sxtb16(v), s3);
    s3 = __smlad(x13, tvmd_cmsis_sxtb16_ror8(v), s3);
    v = tvmd_cmsis_read_s8x4(wb);
    s2 = __smlad(x02, __sxtb16(v), s2);
    s2 = __smlad(x13, tvmd_cmsis_sxtb16_ror8(v), s2);
    x += 4;
    wa += 4;
    wb += 4;
  }
  for (int32_t n = depth & 3; n > 0; n--) {
    const int32_t v = (int32_t)*x++ + in_offset;
    s0 += v * (int32_t)wa[0];
    s1 += v * (int32_t)wa[d];
    s2 += v * (int32_t)wb[0];
    s3 += v * (int32_t)wb[d];
    wa++;
    wb++;
  }
  s[0] = s0;
  s[1] = s1;
  s[2] = s2;
  s[3] = s3;
}
#endif

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
  /* Read once: the int8 stores below could alias the params for the compiler. */
  const int32_t* multiplier = p->multiplier;
  const int8_t* shift = p->shift;
  const tvmd_cmsis_quant_t q = p->q;
  for (int32_t b = 0; b < p->batches; b++) {
    const int8_t* x = io.input + (size_t)b * (size_t)depth;
    int8_t* out = io.output + (size_t)b * (size_t)p->out_ch;
    if (w_offset != 0) {
      for (int32_t oc = 0; oc < p->out_ch; oc++) {
        const int8_t* w = io.filter + (size_t)oc * (size_t)depth;
        int32_t acc = 0;
        for (int32_t i = 0; i < depth; i++) acc += ((int32_t)x[i] + in_offset) * ((int32_t)w[i] + w_offset);
        out[oc] = tvmd_cmsis_output_s8(acc, io.bias, oc, p->multiplier[oc * qstep], p->shift[oc * qstep], &p->q);
      }
      continue;
    }
#if TVMD_CMSIS_MVE
    /* Four channels at a time (two pairs), requantized as one vector; a last
     * partial block repeats its first row and stores only its live lanes. */
    for (int32_t oc = 0; oc < p->out_ch; oc += 4) {
      const int32_t n = p->out_ch - oc < 4 ? p->out_ch - oc : 4;
      const int8_t* w = io.filter + (size_t)oc * (size_t)depth;
      int32_t s[4];
      tvmd_cmsis_dot_s8_1x2(x, w, n > 1 ? w + depth : w, depth, in_offset, s);
      if (n > 2) {
        tvmd_cmsis_dot_s8_1x2(x, w + 2 * (size_t)depth, n > 3 ? w + 3 * (size_t)depth : w, depth, in_offset, s + 2);
      }
      const mve_pred16_t live = vctp32q((uint32_t)n);
      int32x4_t v = vldrwq_s32(s);
      if (io.bias != NULL) v = vaddq_s32(v, vldrwq_z_s32(io.bias + oc, live)); /* wraps, as the reference */
      const int32x4_t m = qstep ? vldrwq_z_s32(multiplier + oc, live) : vdupq_n_s32(multiplier[0]);
      const int32x4_t sh = qstep ? vldrbq_z_s32(shift + oc, live) : vdupq_n_s32(shift[0]);
      vstrbq_p_s32(out + oc, tvmd_cmsis_clamp_mve(tvmd_cmsis_requantize_mve(v, m, sh), &q), live);
    }
#else
    int32_t oc0 = 0;
#if TVMD_CMSIS_DSP
    const int int8_range = q.act_min == INT8_MIN && q.act_max == INT8_MAX;
    /* DSP: four rows per pass while four remain, then pairs. */
    for (; oc0 + 4 <= p->out_ch; oc0 += 4) {
      int32_t s[4];
      dot_1x4(x, io.filter + (size_t)oc0 * (size_t)depth, depth, in_offset, s);
      if (int8_range) {
        for (int32_t j = 0; j < 4; j++) {
          const int32_t oc = oc0 + j;
          out[oc] = tvmd_cmsis_clamp_s8(
              tvmd_cmsis_out_value(s[j], io.bias, oc, multiplier[oc * qstep], shift[oc * qstep], q.output_offset));
        }
        continue;
      }
      for (int32_t j = 0; j < 4; j++) {
        const int32_t oc = oc0 + j;
        out[oc] = tvmd_cmsis_out_1(s[j], io.bias, oc, multiplier[oc * qstep], shift[oc * qstep], q.output_offset,
                                   q.act_min, q.act_max);
      }
    }
#endif
    for (int32_t oc = oc0; oc < p->out_ch; oc += 2) {
      /* A lone last channel pairs with itself; its copy is not stored. */
      const int32_t oc1 = oc + 1 < p->out_ch ? oc + 1 : oc;
      int32_t s[2];
      tvmd_cmsis_dot_s8_1x2(x, io.filter + (size_t)oc * (size_t)depth, io.filter + (size_t)oc1 * (size_t)depth, depth,
                            in_offset, s);
      out[oc] = tvmd_cmsis_out_1(s[0], io.bias, oc, multiplier[oc * qstep], shift[oc * qstep], q.output_offset,
                                 q.act_min, q.act_max);
      out[oc1] = tvmd_cmsis_out_1(s[1], io.bias, oc1, multiplier[oc1 * qstep], shift[oc1 * qstep], q.output_offset,
                                  q.act_min, q.act_max);
    }
#endif
  }
  return TVMD_OK;
}
