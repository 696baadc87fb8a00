/* A kernel that reads every member of tvmd_pt_params_t (declared in the
 * header generated from the test's Layout) and reports what it saw: integers
 * into buffers[0] (int64_t), reals into buffers[1] (double).  If Python and
 * the C compiler disagree on any offset, the values come out wrong. */
#include "tvmdevice/kernel_abi.h"
#include "params_test.h"

static int32_t read_params(const void* params, void* const* buffers, void* resource_handle) {
  const tvmd_pt_params_t* p = (const tvmd_pt_params_t*)params;
  int64_t* ints = (int64_t*)buffers[0];
  double* reals = (double*)buffers[1];
  int64_t sum = 0;
  int n = 0, i, j;
  (void)resource_handle;
  ints[n++] = p->kind;
  ints[n++] = p->count;
  ints[n++] = p->q.input_offset;
  ints[n++] = p->q.output_offset;
  ints[n++] = (int64_t)p->macs;
  ints[n++] = p->small;
  ints[n++] = p->big;
  for (i = 0; i < 4; i++) ints[n++] = p->shape[i];
  for (i = 0; i < 2; i++)
    for (j = 0; j < 3; j++) ints[n++] = p->grid[i][j];
  ints[n++] = (int64_t)p->bytes;
  for (i = 0; i < p->count; i++) sum += p->weights[i];
  ints[n++] = sum;
  ints[n++] = p->multiplier[p->count - 1];
  ints[n++] = p->absent == NULL;
  for (i = 0; i < 2; i++) {
    ints[n++] = p->qs[i].input_offset;
    ints[n++] = p->qs[i].output_offset;
  }
  for (i = 0; i < p->count; i++) p->scratch[i] = 2 * p->weights[i];
  reals[0] = p->scale;
  reals[1] = p->ratio;
  return 0;
}

const tvmd_kernel_t tvmd_pt_read_params = TVMD_KERNEL_INIT("tvmd_pt_read_params", read_params);
