/*
 * UNIDIRECTIONAL_SEQUENCE_LSTM (CMSIS-NN's arm_lstm_unidirectional_s8 /
 * _s16; TFLM's integer EvalLstm gives the values the tests check): int8
 * activations with int32 biases or int16 activations with int64 biases, int8
 * weights, an int16 cell state.
 *
 * Each time step (all batches at once when time major, one batch row at a
 * time otherwise): the forget, input and cell gates as
 * activation(FC(input) + FC(hidden)) in Q3.12 (sigmoid, or tanh for the cell
 * gate; Q0.15 out), the cell state update (clipped when cell_clip > 0), the
 * output gate, the hidden state tanh(cell) * output gate, copied to the
 * output.  The int8 fully connected parts start from the prepared kernel sums
 * (bias and zero-point terms folded, wrapping in uint32 like TFLM's int32
 * sums); the int16 ones sum in int64 onto the int64 bias and requantize with
 * the 64-bit rounding (s16.h).  Their dot products, two weights rows at a
 * time, are mprofile.h's (Helium, DSP or plain C).  The hidden and cell state buffers are the
 * model's variable tensors, updated in place.
 *
 * Buffers: the 24 operator inputs (absent ones NULL), the output, scratch
 * (four int16 gate buffers of batches x n_state).
 *
 * The sigmoid and tanh (TFLM's int16 table, interpolated) are
 * tvmdevice/fixedpoint.h's, shared with the host device's LSTM.
 */
#include <string.h>

#include "mprofile.h"
#include "s16.h"

enum { kInputGate = 0, kForgetGate = 1, kCellGate = 2, kOutputGate = 3, kGates = 4 };
enum { kHidden = 18, kCell = 19, kOutput = 24, kScratch = 25 };

/* a * b requantized, offset added, clamped (TFLM's MulElementwise with zero input offsets). */
static inline int32_t mul_q15(int32_t a, int32_t b, int32_t multiplier, int32_t shift, int32_t offset, int32_t lo,
                              int32_t hi) {
  return tvmd_cmsis_min(tvmd_cmsis_max(tvmd_multiply_by_quantized_multiplier(a * b, multiplier, shift) + offset, lo),
                        hi);
}

typedef struct {
  const tvmd_cmsis_lstm_params_t* p;
  void* const* buffers;
  int32_t rows; /* rows per step: batches when time major, else 1 */
  int16_t* gate[kGates];
} lstm_t;

/* rows x depth activations by the [n_state, depth] weights onto the constant
 * terms (int8: kernel sums; int16: int64 bias or NULL) into Q3.12, saturated. */
static void fc(const lstm_t* s, const void* x, int32_t depth, const int8_t* w, const int32_t* sums,
               const int64_t* bias64, int32_t multiplier, int32_t shift, int16_t* out) {
  const int32_t n = s->p->n_state;
  for (int32_t row = 0; row < s->rows; ++row) {
    int16_t* y = out + (size_t)row * (size_t)n;
    for (int32_t o = 0; o < n; o += 2) {
      /* Two weights rows per pass (mprofile.h's dot products); a lone last
       * row pairs with itself and its copy is not stored. */
      const int32_t o1 = o + 1 < n ? o + 1 : o;
      const int8_t *w0 = w + (size_t)o * (size_t)depth, *w1 = w + (size_t)o1 * (size_t)depth;
      if (s->p->activation_bits == 8) {
        int32_t dot[2];
        tvmd_cmsis_dot_s8_1x2((const int8_t*)x + (size_t)row * (size_t)depth, w0, w1, depth, 0, dot);
        const int32_t acc0 = tvmd_cmsis_wrap_add(sums[o], dot[0]), acc1 = tvmd_cmsis_wrap_add(sums[o1], dot[1]);
        y[o] = tvmd_sat_i16(tvmd_multiply_by_quantized_multiplier(acc0, multiplier, shift));
        y[o1] = tvmd_sat_i16(tvmd_multiply_by_quantized_multiplier(acc1, multiplier, shift));
      } else {
        int64_t dot[2]; /* depth products below 2^22: exact */
        tvmd_cmsis_dot_s16_1x2((const int16_t*)x + (size_t)row * (size_t)depth, w0, w1, depth, dot);
        const uint64_t acc0 = (uint64_t)dot[0] + (bias64 != NULL ? (uint64_t)bias64[o] : 0u);
        const uint64_t acc1 = (uint64_t)dot[1] + (bias64 != NULL ? (uint64_t)bias64[o1] : 0u);
        y[o] = tvmd_sat_i16(tvmd_cmsis_requantize_s64(tvmd_wrap_i64(acc0), multiplier, shift));
        y[o1] = tvmd_sat_i16(tvmd_cmsis_requantize_s64(tvmd_wrap_i64(acc1), multiplier, shift));
      }
    }
  }
}

/* gate k = activation(FC(input) + FC(hidden)) into out; `partial` holds the recurrent part. */
static void gate(const lstm_t* s, int k, const void* x, const void* h, int16_t* out, int16_t* partial) {
  const tvmd_cmsis_lstm_params_t* p = s->p;
  const size_t n = (size_t)p->n_state, count = (size_t)s->rows * n;
  const int wide = p->activation_bits == 16;
  fc(s, x, p->n_input, (const int8_t*)s->buffers[1 + k], wide ? NULL : p->kernel_sums + (size_t)k * n,
     wide ? (const int64_t*)s->buffers[12 + k] : NULL, p->gate_input_multiplier[k], p->gate_input_shift[k], out);
  fc(s, h, p->n_state, (const int8_t*)s->buffers[5 + k], wide ? NULL : p->kernel_sums + (size_t)(kGates + k) * n,
     NULL, p->gate_recurrent_multiplier[k], p->gate_recurrent_shift[k], partial);
  for (size_t i = 0; i < count; ++i) {
    const int16_t sum = tvmd_sat_i16((int32_t)out[i] + (int32_t)partial[i]);
    out[i] = k == kCellGate ? tvmd_tanh_s16(3 * sum) : tvmd_logistic_s16(3 * sum);
  }
}

static void step(const lstm_t* s, const void* x, void* h, int16_t* cell, void* out) {
  const tvmd_cmsis_lstm_params_t* p = s->p;
  const size_t count = (size_t)s->rows * (size_t)p->n_state;
  int16_t* forget = s->gate[0];
  int16_t* input = s->gate[1];
  int16_t* cell_gate = s->gate[2];
  int16_t* partial = s->gate[3];
  gate(s, kForgetGate, x, h, forget, partial);
  gate(s, kInputGate, x, h, input, partial);
  gate(s, kCellGate, x, h, cell_gate, partial);
  for (size_t i = 0; i < count; ++i) {
    const int32_t kept = mul_q15(forget[i], cell[i], p->forget_multiplier, p->forget_shift, 0, INT16_MIN, INT16_MAX);
    const int32_t added = mul_q15(input[i], cell_gate[i], p->input_multiplier, p->input_shift, 0, INT16_MIN,
                                  INT16_MAX);
    int32_t c = tvmd_sat_i16(kept + added);
    if (p->cell_clip_enabled) c = tvmd_cmsis_min(tvmd_cmsis_max(c, -p->cell_clip), p->cell_clip);
    cell[i] = (int16_t)c;
  }
  int16_t* output_gate = input; /* the input gate is spent */
  gate(s, kOutputGate, x, h, output_gate, partial);
  for (size_t i = 0; i < count; ++i) {
    const int16_t t = tvmd_tanh_s16(tvmd_rescale_s16(cell[i], p->cell_tanh_multiplier, p->cell_tanh_shift));
    const int32_t v = mul_q15(t, output_gate[i], p->output_multiplier, p->output_shift, p->hidden_zero_point,
                              p->hidden_min, p->hidden_max);
    if (p->activation_bits == 8) {
      ((int8_t*)h)[i] = (int8_t)v;
    } else {
      ((int16_t*)h)[i] = (int16_t)v;
    }
  }
  memcpy(out, h, count * (size_t)(p->activation_bits / 8));
}

static inline void* at(void* base, int32_t bits, size_t index) { return (uint8_t*)base + index * (size_t)(bits / 8); }

size_t tvmd_cmsis_lstm_unidirectional_get_buffer_size(const tvmd_cmsis_lstm_params_t* p) {
  return (size_t)kGates * (size_t)p->batches * (size_t)p->n_state * sizeof(int16_t);
}

int32_t tvmd_cmsis_lstm_unidirectional(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_cmsis_lstm_params_t* p = (const tvmd_cmsis_lstm_params_t*)params;
  if (p == NULL || p->kind != TVMD_CMSIS_KIND_LSTM_UNIDIRECTIONAL || buffers == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  if (p->activation_bits != 8 && p->activation_bits != 16) return TVMD_ERR_INVALID_ARGUMENT;
  if (buffers[0] == NULL || buffers[kHidden] == NULL || buffers[kCell] == NULL || buffers[kOutput] == NULL ||
      buffers[kScratch] == NULL || (p->activation_bits == 8 && p->kernel_sums == NULL)) {
    return TVMD_ERR_INVALID_ARGUMENT;
  }
  for (int k = 0; k < kGates; ++k) {
    if (buffers[1 + k] == NULL || buffers[5 + k] == NULL) return TVMD_ERR_INVALID_ARGUMENT;
  }
  const uint64_t macs = (uint64_t)kGates * (uint64_t)p->batches * (uint64_t)p->time_steps * (uint64_t)p->n_state *
                        (uint64_t)(p->n_input + p->n_state);
  const int32_t status = tvmd_cmsis_enter(resource_handle, TVMD_CMSIS_KIND_LSTM_UNIDIRECTIONAL, macs);
  if (status != TVMD_OK) return status;
  lstm_t s;
  s.p = p;
  s.buffers = buffers;
  s.rows = p->time_major ? p->batches : 1;
  const size_t block = (size_t)p->batches * (size_t)p->n_state;
  for (int k = 0; k < kGates; ++k) s.gate[k] = (int16_t*)buffers[kScratch] + (size_t)k * block;
  const int32_t bits = p->activation_bits;
  int16_t* cell = (int16_t*)buffers[kCell];
  const size_t in_step = (size_t)s.rows * (size_t)p->n_input, state_step = (size_t)s.rows * (size_t)p->n_state;
  if (p->time_major) {
    for (int32_t t = 0; t < p->time_steps; ++t) {
      step(&s, at(buffers[0], bits, (size_t)t * in_step), buffers[kHidden], cell,
           at(buffers[kOutput], bits, (size_t)t * state_step));
    }
    return TVMD_OK;
  }
  for (int32_t b = 0; b < p->batches; ++b) {
    for (int32_t t = 0; t < p->time_steps; ++t) {
      const size_t i = (size_t)b * (size_t)p->time_steps + (size_t)t;
      step(&s, at(buffers[0], bits, i * in_step), at(buffers[kHidden], bits, (size_t)b * state_step),
           cell + (size_t)b * state_step, at(buffers[kOutput], bits, i * state_step));
    }
  }
  return TVMD_OK;
}
