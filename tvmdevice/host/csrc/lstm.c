/*
 * UNIDIRECTIONAL_SEQUENCE_LSTM, integer: TFLM's EvalLstm (lstm_eval.h) for
 * int8 activations with int32 biases (lstm_s8) and int16 activations with
 * int64 biases (lstm_s16); int8 weights and an int16 cell state in both.
 *
 * Each time step (all batches at once when time major, one batch row at a
 * time otherwise) computes the forget, input and cell gates as
 * activation(FC(input) + FC(hidden)) in Q3.12, updates the cell state, then
 * the output gate and the hidden state, and copies the hidden state into the
 * output.  The scratch holds TFLM's four int16 buffers of batches x state.
 * Buffers: the 24 operator inputs (absent ones NULL), the output, the scratch.
 */
#include <string.h>

#include "internal.h"

enum { kInputGate = 0, kForgetGate = 1, kCellGate = 2, kOutputGate = 3 };
enum { kHiddenState = 18, kCellState = 19, kOutput = 24, kScratch = 25, kNumGates = 4 };

/* TFLM's MulElementwise of two Q0.15 values: offsets 0 in, requantized, offset and clamped out. */
static inline int32_t mul_q15(int32_t a, int32_t b, int32_t multiplier, int32_t shift, int32_t offset, int32_t lo,
                              int32_t hi) {
  return tvmd_clamp_i32(tvmd_multiply_by_quantized_multiplier(a * b, multiplier, (int)shift) + offset, lo, hi);
}

typedef struct {
  const tvmd_c_lstm_params_t* p;
  void* const* buffers;
  int bits;       /* 8 or 16: the activation type */
  int32_t rows;   /* rows per step: batches when time major, else 1 */
  int16_t* buf[4];
} lstm_run_t;

static const void* element(const void* base, int bits, size_t index) {
  return (const uint8_t*)base + index * (size_t)(bits / 8);
}

/* One fully connected part of a gate: rows x depth activations by the
 * [n_state, depth] weights, plus the bias, into Q3.12 (saturated). */
static void fully_connected(const lstm_run_t* r, const void* x, int32_t depth, int32_t x_offset, const int8_t* w,
                            const void* bias, int32_t multiplier, int32_t shift, int16_t* out) {
  const int32_t n = r->p->n_state;
  for (int32_t row = 0; row < r->rows; ++row) {
    for (int32_t o = 0; o < n; ++o) {
      const int8_t* wo = w + (size_t)o * (size_t)depth;
      int32_t y;
      if (r->bits == 8) {
        const int8_t* xr = (const int8_t*)x + (size_t)row * (size_t)depth;
        uint32_t acc = 0;
        for (int32_t d = 0; d < depth; ++d) acc += (uint32_t)(((int32_t)xr[d] + x_offset) * (int32_t)wo[d]);
        if (bias != NULL) acc += (uint32_t)((const int32_t*)bias)[o];
        y = tvmd_multiply_by_quantized_multiplier(tvmd_wrap_i32(acc), multiplier, (int)shift);
      } else {
        const int16_t* xr = (const int16_t*)x + (size_t)row * (size_t)depth;
        int64_t acc = 0;
        for (int32_t d = 0; d < depth; ++d) acc += (int64_t)((int32_t)xr[d] * (int32_t)wo[d]);
        if (bias != NULL) acc += ((const int64_t*)bias)[o];
        y = tvmd_multiply_by_quantized_multiplier_64(acc, multiplier, shift);
      }
      out[(size_t)row * (size_t)n + (size_t)o] = tvmd_sat_i16(y);
    }
  }
}

/* gate = activation(FC(input) + FC(hidden)); the cell gate is tanh, the others sigmoid. */
static void gate(const lstm_run_t* r, int k, const void* x, const void* h, int16_t* out) {
  const tvmd_c_lstm_params_t* p = r->p;
  int16_t* recurrent = r->buf[3];
  const size_t count = (size_t)r->rows * (size_t)p->n_state;
  fully_connected(r, x, p->n_input, p->input_offset, (const int8_t*)r->buffers[1 + k], r->buffers[12 + k],
                  p->gate_input_multiplier[k], p->gate_input_shift[k], out);
  fully_connected(r, h, p->n_state, p->hidden_offset, (const int8_t*)r->buffers[5 + k], NULL,
                  p->gate_recurrent_multiplier[k], p->gate_recurrent_shift[k], recurrent);
  for (size_t i = 0; i < count; ++i) {
    const int16_t sum = tvmd_sat_i16((int32_t)out[i] + (int32_t)recurrent[i]);
    out[i] = k == kCellGate ? tvmd_tanh_s16(3 * sum) : tvmd_logistic_s16(3 * sum);
  }
}

static void step(const lstm_run_t* r, const void* x, void* h, int16_t* cell, void* out) {
  const tvmd_c_lstm_params_t* p = r->p;
  const size_t count = (size_t)r->rows * (size_t)p->n_state;
  int16_t* forget = r->buf[0];
  int16_t* input = r->buf[1];
  int16_t* cell_gate = r->buf[2];
  gate(r, kForgetGate, x, h, forget);
  gate(r, kInputGate, x, h, input);
  gate(r, kCellGate, x, h, cell_gate);
  for (size_t i = 0; i < count; ++i) {
    const int32_t kept = mul_q15(forget[i], cell[i], p->forget_multiplier, p->forget_shift, 0, INT16_MIN,
                                        INT16_MAX);
    const int32_t added = mul_q15(input[i], cell_gate[i], p->input_multiplier, p->input_shift, 0,
                                         INT16_MIN, INT16_MAX);
    int16_t c = tvmd_sat_i16(kept + added);
    if (p->cell_clip_enabled) c = (int16_t)tvmd_clamp_i32(c, -p->cell_clip, p->cell_clip);
    cell[i] = c;
  }
  int16_t* output_gate = r->buf[1]; /* the input gate is spent */
  gate(r, kOutputGate, x, h, output_gate);
  for (size_t i = 0; i < count; ++i) {
    const int16_t t = tvmd_tanh_s16(tvmd_rescale_s16(cell[i], p->cell_tanh_multiplier, p->cell_tanh_shift));
    const int32_t v = mul_q15(t, output_gate[i], p->output_multiplier, p->output_shift,
                                     p->hidden_zero_point, p->hidden_min, p->hidden_max);
    if (r->bits == 8) {
      ((int8_t*)h)[i] = (int8_t)v;
    } else {
      ((int16_t*)h)[i] = (int16_t)v;
    }
  }
  memcpy(out, h, count * (size_t)(r->bits / 8));
}

static int32_t lstm(const void* params, void* const* buffers, int bits) {
  const tvmd_c_lstm_params_t* p = (const tvmd_c_lstm_params_t*)params;
  lstm_run_t r;
  r.p = p;
  r.buffers = buffers;
  r.bits = bits;
  r.rows = p->time_major ? p->batches : 1;
  const size_t block = (size_t)p->batches * (size_t)p->n_state;
  for (int k = 0; k < kNumGates; ++k) r.buf[k] = (int16_t*)buffers[kScratch] + (size_t)k * block;
  void* hidden = buffers[kHiddenState];
  int16_t* cell = (int16_t*)buffers[kCellState];
  void* output = buffers[kOutput];
  const size_t in_step = (size_t)r.rows * (size_t)p->n_input;
  const size_t state_step = (size_t)r.rows * (size_t)p->n_state;
  if (p->time_major) {
    for (int32_t t = 0; t < p->time_steps; ++t) {
      step(&r, element(buffers[0], bits, (size_t)t * in_step), hidden, cell,
           (void*)element(output, bits, (size_t)t * state_step));
    }
    return TVMD_OK;
  }
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t t = 0; t < p->time_steps; ++t) {
      const size_t at = (size_t)b * (size_t)p->time_steps + (size_t)t;
      step(&r, element(buffers[0], bits, at * in_step), (void*)element(hidden, bits, (size_t)b * state_step),
           cell + (size_t)b * state_step, (void*)element(output, bits, at * state_step));
    }
  }
  return TVMD_OK;
}

int32_t tvmd_c_lstm_s8(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  return lstm(params, buffers, 8);
}

int32_t tvmd_c_lstm_s16(const void* params, void* const* buffers, void* resource_handle) {
  (void)resource_handle;
  return lstm(params, buffers, 16);
}
