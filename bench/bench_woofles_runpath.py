"""woofles-first vs ``cmsis-nn, c``: the full run (inputs in, outputs out), in one process, as ratios.

For each model in TVMDEVICE_MODELS_DIR, compiled for ``woofles, cmsis-nn, c`` (woofles first: the
operators it runs go to the simulated NPU, with host<->SRAM copies around them) and for
``cmsis-nn, c``, on the same random input, timed in interleaved rounds (median kept):

* **woofles** — the run path as it is: copy steps and Activate/Deactivate in C (the run loop calls
  the plugin's ``tvmdevice_prepare_copy`` kernels and its C lifecycle), so a plan whose every step is
  C runs in one C call;
* **woofles, copies via hooks** — the same plan with each copy step going through the Device API in
  Python (CopyDataFromTo + StreamSync), as every copy did before ``tvmdevice_prepare_copy``: the
  executor's binder is given no C copy call;
* **cmsis-nn, c** — the host kernels alone.

Outputs are checked equal between the three.  Target: woofles-first <= 5x cmsis-nn, c.

    python bench/bench_woofles_runpath.py [--rounds 15] [--round-time 0.02] [--models kws_dscnn_int8 ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_runpath import interleaved, models_dir  # noqa: E402


def _input(module: Any) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(np.iinfo(t.dtype).min, np.iinfo(t.dtype).max, size=t.shape, endpoint=True, dtype=t.dtype)
            for t in (module.graph.tensors[i] for i in module.graph.inputs)]


def bench_model(path: Path, rounds: int, round_time: float) -> dict[str, Any]:
    import tvmdevice

    data = path.read_bytes()
    woofles = tvmdevice.compile(data, "woofles, cmsis-nn, c", name=path.stem)
    host = tvmdevice.compile(data, "cmsis-nn, c", name=path.stem)
    inputs = _input(host)
    with mock.patch.object(type(woofles.registry), "prepare_copy", lambda *a, **k: None):
        hooks_ex = woofles.executor()
    with woofles.executor() as ex, hooks_ex, host.executor() as hex_:
        ref = hex_.run(inputs)
        for e in (ex, hooks_ex):
            for a, b in zip(e.run(inputs), ref):
                np.testing.assert_array_equal(a, b)
        times = interleaved({"woofles": lambda: ex.run(inputs),
                             "woofles, copies via hooks": lambda: hooks_ex.run(inputs),
                             "cmsis-nn, c": lambda: hex_.run(inputs)}, rounds, round_time)
        copies = sum(1 for s in woofles.schedule.steps if not hasattr(s, "op_index"))
        on_npu = woofles.placement.summary.get("woofles", 0)
        return {"model": path.stem, "copies": copies, "npu_ops": on_npu, "runs_in_c": ex.runs_in_c, **times}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--round-time", type=float, default=0.02)
    parser.add_argument("--models", nargs="*")
    args = parser.parse_args()
    paths = sorted(models_dir().glob("*.tflite"))
    if args.models:
        paths = [p for p in paths if p.stem in args.models]
    print("| model | NPU ops | copy steps | runs in C | woofles µs | via hooks µs | cmsis-nn, c µs | "
          "woofles / cmsis-nn | via hooks / cmsis-nn |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for path in paths:
        r = bench_model(path, args.rounds, args.round_time)
        w, h, c = r["woofles"] * 1e6, r["woofles, copies via hooks"] * 1e6, r["cmsis-nn, c"] * 1e6
        print(f"| {r['model']} | {r['npu_ops']} | {r['copies']} | {r['runs_in_c']} | {w:.1f} | {h:.1f} | {c:.1f} | "
              f"{w / c:.2f}x | {h / c:.2f}x |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
