"""cmsis-nn kernels vs tflite-micro vs LiteRT/XNNPACK on the real models, in one run.

For each model in TVMDEVICE_MODELS_DIR (default ../shared/models relative to
the repository root) it times, on the same random int8 input:

  (a) the cmsis-nn kernels: every operator prepared once, all tensors in
      preallocated buffers, the kernels called back to back from C
      (``tvmdevice_cmsis.runner.GraphRunner``), on an active cmsis-nn device;
  (b) tflite-micro (PyPI, reference kernels): ``invoke()``;
  (c) ai-edge-litert with XNNPACK and one thread: ``invoke()``;

prints the median latencies and the ratios, and checks that (a) equals (b)
bit for bit on the output (it is not compared with (c): XNNPACK is not
bit-exact with TFLM).  Targets (issue 4): (a) at least 10x faster than (b) on
every convolutional model, and within 2x of (c) on kws_dscnn_int8.

    python bench/bench_cmsis.py [--repeat 15] [--min-time 0.2] [--json out.json] [--simd-level portable]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CONVOLUTIONAL = ("CONV_2D", "DEPTHWISE_CONV_2D")


def models_dir() -> Path:
    return Path(os.environ.get("TVMDEVICE_MODELS_DIR", ROOT.parent / "shared" / "models"))


def median_seconds(fn, repeat: int, min_time: float) -> float:
    """Median over ``repeat`` samples of the per-call time; each sample lasts about ``min_time``."""
    fn()  # warm-up
    number, start = 0, time.perf_counter()
    while time.perf_counter() - start < min_time:
        fn()
        number += 1
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples)


def bench_model(path: Path, repeat: int, min_time: float) -> dict:
    from ai_edge_litert.interpreter import Interpreter
    from tflite_micro.python.tflite_micro import runtime
    from tvmdevice_cmsis.runner import GraphRunner

    import tvmdevice
    from tvmdevice.aot.frontend import load_tflite

    data = path.read_bytes()
    graph = load_tflite(data, name=path.stem)
    rng = np.random.default_rng(0)
    inputs = [rng.integers(-128, 128, size=graph.tensor(i).shape, dtype=np.int64).astype(np.int8)
              for i in graph.inputs]

    device = tvmdevice.get_registry().create_device("cmsis-nn")
    device.init()
    device.open()
    runner = GraphRunner(graph, device)
    device.activate()
    try:
        ours = runner.run(inputs)[0]
        t_cmsis = median_seconds(runner.invoke, repeat, min_time)
    finally:
        device.deactivate()
        runner.close()
        device.close()
        device.destroy()

    # The whole stack: placement, memory plan, activate/deactivate around
    # every run, kernels through the core's run loop (RESHAPE on the host).
    module = tvmdevice.compile(graph, "cmsis-nn, c")
    with module.executor() as ex:
        through_executor = ex.run(inputs)[0]
        t_executor = median_seconds(ex.invoke, repeat, min_time)

    micro = runtime.Interpreter.from_bytes(data)
    for k, x in enumerate(inputs):
        micro.set_input(x, k)
    micro.invoke()
    reference = micro.get_output(0)
    t_tflm = median_seconds(micro.invoke, repeat, min_time)

    litert = Interpreter(model_content=data, num_threads=1)
    litert.allocate_tensors()
    for detail, x in zip(litert.get_input_details(), inputs):
        litert.set_tensor(detail["index"], x)
    t_litert = median_seconds(litert.invoke, repeat, min_time)

    ops = sorted({op.type for op in graph.operators})
    return {
        "model": path.stem,
        "ops": ops,
        "convolutional": any(o in CONVOLUTIONAL for o in ops),
        "bit_exact_vs_tflm": bool(np.array_equal(ours, reference.reshape(ours.shape))
                                  and np.array_equal(through_executor, reference.reshape(ours.shape))),
        "cmsis_ms": t_cmsis * 1e3,
        "executor_ms": t_executor * 1e3,
        "tflm_ms": t_tflm * 1e3,
        "litert_xnnpack_ms": t_litert * 1e3,
        "speedup_vs_tflm": t_tflm / t_cmsis,
        "ratio_vs_litert": t_cmsis / t_litert,
        "executor_speedup_vs_tflm": t_tflm / t_executor,
        "executor_ratio_vs_litert": t_executor / t_litert,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15, help="samples per measurement (median reported)")
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per sample")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument("--simd-level", choices=("portable", "avx2", "avx512"),
                        help="force the cmsis-nn kernels onto this SIMD level (default: the CPU's highest)")
    args = parser.parse_args()
    from tvmdevice_cmsis import _kernels

    if args.simd_level:
        _kernels.set_simd_level(args.simd_level)
    print(f"cmsis-nn SIMD level: {args.simd_level or _kernels.max_simd_level()} (CPU's highest: "
          f"{_kernels.max_simd_level()})")

    directory = models_dir()
    paths = sorted(directory.glob("*.tflite"))
    if not paths:
        print(f"no .tflite models in {directory} (set TVMDEVICE_MODELS_DIR)", file=sys.stderr)
        return 2
    rows = [bench_model(p, args.repeat, args.min_time) for p in paths]

    header = (f"{'model':<24} {'cmsis-nn':>10} {'executor':>10} {'tflm':>10} {'litert':>10} {'vs tflm':>9} "
              f"{'vs litert':>10} {'exec vs tflm':>13} {'exec vs litert':>15}  bit-exact")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['model']:<24} {r['cmsis_ms']:>8.4f}ms {r['executor_ms']:>8.4f}ms {r['tflm_ms']:>8.4f}ms "
              f"{r['litert_xnnpack_ms']:>8.4f}ms {r['speedup_vs_tflm']:>8.1f}x {r['ratio_vs_litert']:>9.2f}x "
              f"{r['executor_speedup_vs_tflm']:>12.1f}x {r['executor_ratio_vs_litert']:>14.2f}x  "
              f"{r['bit_exact_vs_tflm']}")
    print("\ncmsis-nn = the kernels back to back (tvmdevice_cmsis.runner); executor = tvmdevice.compile(model, "
          "'cmsis-nn, c') with Activate/Deactivate around each run.\nvs tflm = tflite-micro time / ours (higher is "
          "better); vs litert = ours / LiteRT-XNNPACK time (lower is better)")

    failures = []
    for r in rows:
        if not r["bit_exact_vs_tflm"]:
            failures.append(f"{r['model']}: output differs from tflite-micro")
        if r["convolutional"] and r["speedup_vs_tflm"] < 10:
            failures.append(f"{r['model']}: only {r['speedup_vs_tflm']:.1f}x faster than tflite-micro (target 10x)")
        if r["model"] == "kws_dscnn_int8" and r["ratio_vs_litert"] > 2:
            failures.append(f"{r['model']}: {r['ratio_vs_litert']:.2f}x LiteRT/XNNPACK time (target <= 2x)")
    for f in failures:
        print(f"TARGET MISSED: {f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "failures": failures}, indent=2))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
