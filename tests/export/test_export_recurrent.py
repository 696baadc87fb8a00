"""LSTM and SVDF through the C export: bit-exact with tflite-micro on the host and on Cortex-M55.

A model with state (TFLite variable tensors) gives, for n inputs run in order, TFLM's frames
1 .. n: ``tvmdevice run DIR`` runs every sample in one process, one run per sample, from the state
open leaves.  The runner's warm-up (a run of the first frame before the measured one) must leave no
trace: the generated ``tvmgen_<model>_reset`` puts the state back after it.  A small program checks
that a run after a reset repeats the first run.
"""

from __future__ import annotations

import numpy as np
import pytest
from export_inputs import random_inputs

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.cli import main
from tvmdevice.export import load_metadata, run_export

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


def _tflm_frames(model: bytes, frames: list[list[np.ndarray]]) -> list[np.ndarray]:
    """TFLM's output 0 for each frame, one interpreter invoked once per frame."""
    interp = runtime.Interpreter.from_bytes(model, arena_size=1 << 20)
    out = []
    for inputs in frames:
        for k, x in enumerate(inputs):
            interp.set_input(x, k)
        interp.invoke()
        out.append(interp.get_output(0).copy())
    return out


def _frames(module, n: int) -> list[list[np.ndarray]]:
    return [random_inputs(module.graph, seed=3 + i) for i in range(n)]


MODELS = pytest.mark.parametrize("make", [_lstm, lambda: _lstm(int16=True), _svdf], ids=["lstm-s8", "lstm-s16", "svdf"])


@pytest.mark.parametrize("cpu", ["host", pytest.param("cortex-m55", marks=pytest.mark.export)])
@MODELS
def test_run_on_an_export_gives_tflms_frames_in_order(tmp_path, cpu, make):
    """``tvmdevice run DIR`` on three inputs: TFLM's frames 1, 2, 3 and the Python executor's."""
    model = make()
    module = tvmdevice.compile(model, "c")
    out = module.export(tmp_path / "export")
    frames = _frames(module, 3)
    want = _tflm_frames(model, frames)
    assert not np.array_equal(want[0], want[1]), "the state must change the frames (else the test is blind)"
    with module.executor() as ex:  # the Python executor agrees, frame for frame
        for inputs, expected in zip(frames, want):
            np.testing.assert_array_equal(ex.run(inputs)[0].reshape(expected.shape), expected)
    np.save(tmp_path / "x.npy", np.stack([f[0] for f in frames]))  # a leading batch axis: three samples
    assert main(["run", str(out), "--cpu", cpu, "-i", str(tmp_path / "x.npy"), "-o", str(tmp_path / "o")]) == 0
    got = np.load(tmp_path / "o" / "output_0.npy")
    assert got.shape[0] == 3
    for i, expected in enumerate(want):
        np.testing.assert_array_equal(got[i].reshape(expected.shape), expected, err_msg=f"frame {i + 1} on {cpu}")


@MODELS
def test_one_run_starts_from_the_reset_state_and_frames_carry_it(tmp_path, make):
    """``run_export``: TFLM's first frame (the warm-up left no trace); ``run_export_frames``: each
    frame's outputs in order, and the first frame's run is the measured one."""
    from tvmdevice.export import run_export_frames

    model = make()
    module = tvmdevice.compile(model, "c")
    out = module.export(tmp_path / "export")
    assert load_metadata(out)["stateful"] is True
    frames = _frames(module, 3)
    want = _tflm_frames(model, frames)
    np.testing.assert_array_equal(run_export(out, "host", frames[1]).outputs[0], _tflm_frames(model, [frames[1]])[0])
    got = run_export_frames(out, "host", frames)
    assert len(got.frames) == 3
    for i, expected in enumerate(want):
        np.testing.assert_array_equal(got.frames[i][0], expected, err_msg=f"frame {i + 1}")
    np.testing.assert_array_equal(got.outputs[0], want[-1])


def test_the_reset_function_starts_the_sequence_again(tmp_path):
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
