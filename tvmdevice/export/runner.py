"""The runner of an export: a ``main`` that reads the inputs from files, runs, writes the outputs.

``runner/tvmgen_runner.c`` is generated for the model (it knows the number and
size of each input and output) and built with the model for any CPU of the
export.  Under QEMU its files are the host's through semihosting.

Usage: ``runner IN_0 .. IN_n OUT_0 .. OUT_m DEVICES [POOL]``.  Each input file holds
``F >= 1`` frames: ``F`` times the input's bytes, the same ``F`` for every input.  The
model is opened and runs frame 0 once untimed (a warm-up); a model with operator state
(TFLite variable tensors) is then reset (``tvmgen_<model>_reset``), so that the warm-up
leaves no trace.  Frame 0 then runs again, the measured region of
:mod:`tvmdevice.firmware`, from the state open leaves, and frames 1 .. F-1 follow in
order, each from the state the one before left: the outputs are those of the sequence
of frames given, as TFLM's interpreter invoked once per frame gives them.  Each output
file gets its ``F`` frames; ``DEVICES`` every device struct's bytes right before the
measured run, then every one right after it, each time in ``tvmgen_<model>_devices``
order (so that a counter's increase over the measured run can be told); with external pools (the
runner owns the host pool then) the pool's bytes after the last run go to ``POOL`` when
it is given, so that tests can read every tensor.  Exit status: 0 success; the model's
failing ``tvmd_status_t`` itself (1..63; the failed call is printed); 64 usage, 65 an
input file problem, 66 an output file problem.
"""

from __future__ import annotations

from .codegen import GeneratedModel, Io
from .devices import ExportDevice

__all__ = ["runner_source", "RUNNER", "EXIT_CODES", "EXIT_USAGE", "EXIT_INPUT", "EXIT_OUTPUT"]

#: Where the runner is in an export.
RUNNER = "runner/tvmgen_runner.c"

#: The runner's exit statuses besides 0 (success) and the model's own failing status (1..63).
EXIT_USAGE, EXIT_INPUT, EXIT_OUTPUT = 64, 65, 66
EXIT_CODES = {EXIT_USAGE: "usage", EXIT_INPUT: "an input file problem", EXIT_OUTPUT: "an output file problem"}


def _buffer(kind: str, k: int, io: Io, p: str) -> str:
    return f"static uint8_t {kind}_{k}[{io.macro(p)}] __attribute__((aligned(16)));\n"


def runner_source(model: GeneratedModel, devices: list[ExportDevice], external_pools: bool) -> str:
    """The text of ``runner/tvmgen_runner.c`` for ``model``."""
    p, nin, nout = model.prefix, len(model.inputs), len(model.outputs)
    structs = [d for d in devices if d.has_struct]
    buffers = "".join(_buffer("input", k, io, p) for k, io in enumerate(model.inputs))
    buffers += "".join(_buffer("output", k, io, p) for k, io in enumerate(model.outputs))
    buffers += "".join(f"static {d.struct} device_{d.c_name};\n" for d in structs)
    if external_pools:
        buffers += (f"static uint8_t host_pool[{p.upper()}_HOST_POOL_SIZE] "
                    f"__attribute__((aligned({p.upper()}_HOST_POOL_ALIGNMENT)));\n")
    data = ", ".join(f"input_{k}" for k in range(nin)) or "0"
    sizes = ", ".join(f"sizeof(input_{k})" for k in range(nin)) or "0"
    buffers += f"static void* const input_data[{max(nin, 1)}] = {{{data}}};\n"
    buffers += f"static const size_t input_size[{max(nin, 1)}] = {{{sizes}}};\n"
    buffers += f"static FILE* input_file[{max(nin, 1)}];\n"
    members = ", ".join(f".{d.c_name} = &device_{d.c_name}" for d in structs) or "0"
    ins = ", ".join(f".{io.member} = input_{k}" for k, io in enumerate(model.inputs))
    outs = ", ".join(f".{io.member} = output_{k}" for k, io in enumerate(model.outputs))
    opens = "".join(f"  input_file[{k}] = open_file(argv[{1 + k}], \"rb\");\n"
                    f"  if (input_file[{k}] == NULL) return {EXIT_INPUT};\n" for k in range(nin))
    opens += "".join(f"  FILE* out_{k} = open_file(argv[{1 + nin + k}], \"wb\");\n"
                     f"  if (out_{k} == NULL) return {EXIT_OUTPUT};\n" for k in range(nout))
    writes = "".join(f"    if (fwrite(output_{k}, 1, sizeof(output_{k}), out_{k}) != sizeof(output_{k})) "
                     f"written = 0;\n" for k in range(nout))
    closes = "".join(f"  if (fclose(out_{k}) != 0) written = 0;\n" for k in range(nout))
    # the device structs right before and right after the measured run, straight to the file (no copies)
    dump = "".join(f"    if (ok && fwrite(&device_{d.c_name}, 1, sizeof(device_{d.c_name}), f) != "
                   f"sizeof(device_{d.c_name})) ok = 0;\n" for d in structs)
    pools = "&pools, " if external_pools else ""
    extra_arg = f" && argc != {3 + nin + nout}" if external_pools else ""
    pool_dump = (f"  if (argc == {3 + nin + nout} && write_file(argv[{2 + nin + nout}], host_pool, sizeof(host_pool)) "
                 f"!= 0) return {EXIT_OUTPUT};\n" if external_pools else "")
    pool_decl = f"  struct {p}_workspace_pools pools = {{.host_pool = host_pool}};\n" if external_pools else ""
    reset = (f"  /* the warm-up moved the operator state on: the measured run starts from the reset state,\n"
             f"   * as the first run after open does */\n"
             f"  if (status == 0) status = {p}_reset();\n" if model.stateful else "")
    write_file = ("""
static int write_file(const char* path, const void* data, size_t n) {
  FILE* f = fopen(path, "wb");
  if (f == NULL || fwrite(data, 1, n, f) != n) {
    fprintf(stderr, "cannot write output file %s\\n", path);
    if (f != NULL) fclose(f);
    return 1;
  }
  return fclose(f) == 0 ? 0 : 1;
}
""" if external_pools else "")
    return f"""/* Generated by tvmdevice: a runner for model {model.name!r}. Do not edit.
 * usage: runner IN_0..IN_{nin - 1} OUT_0..OUT_{nout - 1} DEVICES
 * Each input file holds n >= 1 frames (n times the input's bytes, the same n for every input); the
 * model runs them in order, as one sequence from the state open leaves, and each output file gets
 * the n frames of its output. Before them, a warm-up run of frame 0 (the model's state, if it has
 * any, reset after it); frame 0's run is the measured region.
 * Exit status: 0 success, the model's failing status (1..63), {EXIT_USAGE} usage, {EXIT_INPUT} input file,
 * {EXIT_OUTPUT} output file. */
#include <stdint.h>
#include <stdio.h>

#include "{p}.h"
#include "tvmdevice_fw.h"

{buffers}
static FILE* open_file(const char* path, const char* mode) {{
  FILE* f = fopen(path, mode);
  if (f == NULL) fprintf(stderr, "cannot open %s file %s\\n", mode[0] == 'r' ? "input" : "output", path);
  return f;
}}

/* The next frame of every input: 1 read, 0 every file at its end, -1 a file ends inside a frame or
 * before the others. */
static int read_frame(char** paths) {{
  static int frames = 0;
  int ended = 0;
  if ({nin} == 0) return frames++ == 0; /* a model without inputs: one frame */
  for (int k = 0; k < {nin}; ++k) {{
    size_t got = fread(input_data[k], 1, input_size[k], input_file[k]);
    if (got == 0 && feof(input_file[k])) {{
      ++ended;
    }} else if (got != input_size[k]) {{
      fprintf(stderr, "input file %s must hold a whole number of frames of %u bytes\\n", paths[k],
              (unsigned)input_size[k]);
      return -1;
    }}
  }}
  if (ended == 0) return 1;
  if (ended == {nin}) return 0;
  fprintf(stderr, "the input files must hold the same number of frames\\n");
  return -1;
}}
{write_file}
/* Report a failing status; the exit status is the status itself (1..63). */
static int failed(const char* what, int32_t status) {{
  const char* call = {p}_last_error();
  fprintf(stderr, "%s failed with status %d: %s\\n", what, (int)status, call != NULL ? call : "?");
  return status > 0 && status < {EXIT_USAGE} ? (int)status : 1;
}}

int main(int argc, char** argv) {{
  if (argc != {2 + nin + nout}{extra_arg}) {{
    fprintf(stderr, "usage: %s IN x{nin} OUT x{nout} DEVICES\\n", argc > 0 ? argv[0] : "runner");
    return {EXIT_USAGE};
  }}
{opens}  if (read_frame(argv + 1) != 1) {{
    fprintf(stderr, "the input files must hold at least one frame\\n");
    return {EXIT_INPUT};
  }}
  struct {p}_devices devices = {{{members}}};
  struct {p}_inputs inputs = {{{ins}}};
  struct {p}_outputs outputs = {{{outs}}};
{pool_decl}  int32_t status = {p}_open(&devices);
  if (status != 0) return failed("{p}_open", status);
  status = {p}_run(&inputs, &outputs, {pools}&devices); /* warm-up */
{reset}  /* the device structs before and after the measured run (counters), written as they are then */
  FILE* f = fopen(argv[{1 + nin + nout}], "wb");
  int ok = f != NULL;
  if (status == 0) {{
{dump}    tvmd_fw_region_begin();
    status = {p}_run(&inputs, &outputs, {pools}&devices);
    tvmd_fw_region_end();
{dump}  }}
  if (f != NULL && fclose(f) != 0) ok = 0;
  int written = 1, more = 0;
  while (status == 0) {{ /* frame 0 ran: write each frame's outputs, run the next */
{writes}    more = read_frame(argv + 1);
    if (more != 1) break;
    status = {p}_run(&inputs, &outputs, {pools}&devices);
  }}
  if (status != 0) {{
    int code = failed("{p}_run", status);
    (void){p}_close(&devices);
    return code;
  }}
  status = {p}_close(&devices);
  if (status != 0) return failed("{p}_close", status);
{closes}  if (more < 0) return {EXIT_INPUT};
  if (!ok || !written) {{
    fprintf(stderr, "cannot write the output files\\n");
    return {EXIT_OUTPUT};
  }}
{pool_dump}  return 0;
}}
"""
