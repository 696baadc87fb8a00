"""LSTM and SVDF through the C export: bit-exact with tflite-micro on the host and on Cortex-M55.

The export's runner runs the model twice on the same inputs (a warm-up and
the measured run), so its output is the second step of a sequence: the state
the first run left must be carried, in the host pool, exactly as TFLM carries
it.  The generated ``tvmgen_<model>_reset`` puts the state back: a small
program checks that a run after a reset repeats the first run.
"""

from __future__ import annotations

import numpy as np
import pytest
from export_inputs import random_inputs

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.export import run_export

runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")


def _lstm(int16: bool = False) -> bytes:
    b = ModelBuilder("lstm", seed=4)
    x = b.input((2, 3, 6), scale=1 / 4096, dtype="int16") if int16 else b.input((2, 3, 6), scale=0.03, zero_point=5)
    b.output(b.lstm(x, 5, cell_clip=2.0))
    return b.build()


def _svdf() -> bytes:
    b = ModelBuilder("svdf", seed=4)
    x = b.input((2, 10), scale=0.04, zero_point=-3)
    b.output(b.svdf(x, 4, rank=2, memory=6))
    return b.build()


def _tflm_second_run(model: bytes, inputs: list[np.ndarray]) -> np.ndarray:
    interp = runtime.Interpreter.from_bytes(model, arena_size=1 << 20)
    for _ in range(2):
        for k, x in enumerate(inputs):
            interp.set_input(x, k)
        interp.invoke()
    return interp.get_output(0)


@pytest.mark.parametrize("cpu", ["host", "cortex-m55"])
@pytest.mark.parametrize("make", [_lstm, lambda: _lstm(int16=True), _svdf], ids=["lstm-s8", "lstm-s16", "svdf"])
def test_recurrent_exports_carry_state_like_tflm(tmp_path, cpu, make):
    model = make()
    module = tvmdevice.compile(model, "c")
    out = module.export(tmp_path / "export")
    inputs = random_inputs(module.graph, seed=3)
    got = run_export(out, cpu, inputs)
    want = _tflm_second_run(model, inputs)
    np.testing.assert_array_equal(got.outputs[0], want)
    with module.executor() as ex:  # the Python executor agrees, run for run
        ex.run(inputs)
        np.testing.assert_array_equal(ex.run(inputs)[0], want)


def test_the_reset_function_starts_the_sequence_again(tmp_path):
    from tvmdevice.export import load_metadata
    from tvmdevice.firmware import build, run

    model = _lstm()
    module = tvmdevice.compile(model, "c", name="lstm")
    out = module.export(tmp_path / "export")
    header = (out / "codegen/host/include/tvmgen_lstm.h").read_text()
    assert "int32_t tvmgen_lstm_reset(void);" in header
    meta = load_metadata(out)
    b = meta["build"]["cpus"]["host"]
    x, y = meta["inputs"][0]["name"], meta["outputs"][0]["name"]
    (tmp_path / "main.c").write_text("""
#include <stdio.h>
#include <string.h>
#include "tvmgen_lstm.h"
static int8_t in[TVMGEN_LSTM_X_SIZE], a[TVMGEN_LSTM_Y_SIZE], b[TVMGEN_LSTM_Y_SIZE];
int main(void) {
  struct tvmgen_lstm_devices devices = {0};
  struct tvmgen_lstm_inputs inputs = {.X = in};
  struct tvmgen_lstm_outputs first = {.Y = a}, again = {.Y = b};
  for (unsigned i = 0; i < sizeof(in); ++i) in[i] = (int8_t)(i * 37u);
  if (tvmgen_lstm_open(&devices) != 0) return 1;
  if (tvmgen_lstm_run(&inputs, &first, &devices) != 0) return 2;
  if (tvmgen_lstm_run(&inputs, &again, &devices) != 0) return 3;
  if (memcmp(a, b, sizeof(a)) == 0) return 4; /* the state carried changes the second run */
  if (tvmgen_lstm_reset() != 0) return 5;
  if (tvmgen_lstm_run(&inputs, &again, &devices) != 0) return 6;
  if (memcmp(a, b, sizeof(a)) != 0) return 7; /* after a reset: the first run again */
  return tvmgen_lstm_close(&devices) == 0 ? 0 : 8;
}
""".replace("_X_", f"_{x.upper()}_").replace("_Y_", f"_{y.upper()}_").replace(".X ", f".{x} ")
        .replace(".Y ", f".{y} "))
    sources = [out / s for s in b["sources"]] + [tmp_path / "main.c"]
    image = build(sources, [out / d for d in b["include_dirs"]], "host", tmp_path / "build", b["defines"],
                  name="reset")
    result = run(image, [], cwd=tmp_path, timeout=60, check=False)
    assert result.status == 0, (result.status, result.stderr)
