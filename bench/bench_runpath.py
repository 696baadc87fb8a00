"""Per-run overhead: tvmdevice's executor vs tflite-micro vs LiteRT, in one process, as ratios.

For each model in TVMDEVICE_MODELS_DIR (default ../shared/models relative to the
repository root), compiled for ``cmsis-nn, c``, on the same random int8 input:

* **full run** — inputs in, outputs out, as an application does it:
  tvmdevice ``ex.run([x])`` (new output arrays) and ``ex.run([x], out=[y])``
  (into the caller's arrays); tflite-micro ``set_input`` + ``invoke`` +
  ``get_output``; LiteRT ``set_tensor`` + ``invoke`` + ``get_tensor``, with
  XNNPACK on one thread and with the builtin kernels (no delegate);
* **invoke only** — the same without the inputs and outputs;
* **batch** — ``ex.run_batch`` over a stacked batch, per sample, in order and
  on two workers, against a Python loop of ``ex.run``.

The machine may be shared and loaded: every candidate is timed in short
interleaved rounds and the median of the rounds is kept, and the figures that
matter are the ratios, measured side by side in this one process.  The CPU's
SIMD features are printed first (the kernels pick their path at run time).
tvmdevice's output is checked bit for bit against tflite-micro's (LiteRT's
XNNPACK is not bit-exact with TFLM and is not compared).

Target: hello_world's full run at most tflite-micro's (ratio <= 1).

    python bench/bench_runpath.py [--rounds 21] [--round-time 0.02] [--batch 512] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

#: The /proc/cpuinfo flags that say which SIMD paths a kernel can take on x86.
SIMD_FLAGS = ("sse4_1", "sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
              "avx_vnni", "avx512_bf16")


def models_dir() -> Path:
    return Path(os.environ.get("TVMDEVICE_MODELS_DIR", ROOT.parent / "shared" / "models"))


def simd_features() -> str:
    """The CPU model and which of :data:`SIMD_FLAGS` it has (Linux; ``unknown`` elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    flags: set[str] = set()
    model = "unknown CPU"
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags" and not flags:
            flags = set(value.split())
        elif key.strip() == "model name" and model == "unknown CPU":
            model = value.strip()
    present = [f for f in SIMD_FLAGS if f in flags]
    absent = [f for f in SIMD_FLAGS if f not in flags]
    return f"{model}; SIMD: {' '.join(present) or 'none'}; absent: {' '.join(absent) or 'none'}"


def interleaved(candidates: dict[str, Callable[[], Any]], rounds: int, round_time: float) -> dict[str, float]:
    """Median seconds per call of each candidate, timed in alternating short rounds."""
    numbers = {}
    for name, fn in candidates.items():
        fn()  # warm-up
        n, start = 0, time.perf_counter()
        while time.perf_counter() - start < round_time:
            fn()
            n += 1
        numbers[name] = max(n, 1)
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(rounds):
        for name, fn in candidates.items():
            n = numbers[name]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            samples[name].append((time.perf_counter() - t0) / n)
    return {name: statistics.median(s) for name, s in samples.items()}


def litert_interpreter(data: bytes, xnnpack: bool) -> Any:
    """A LiteRT interpreter on one thread, with XNNPACK or with the builtin kernels only; None if absent."""
    try:
        from ai_edge_litert.interpreter import Interpreter, OpResolverType
    except ImportError:
        return None
    resolver = OpResolverType.AUTO if xnnpack else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES
    interp = Interpreter(model_content=data, num_threads=1, experimental_op_resolver_type=resolver)
    interp.allocate_tensors()
    return interp


def bench_model(path: Path, rounds: int, round_time: float, batch: int) -> dict[str, Any]:
    from tflite_micro.python.tflite_micro import runtime

    import tvmdevice
    from tvmdevice.aot.frontend import load_tflite

    data = path.read_bytes()
    graph = load_tflite(data, name=path.stem)
    rng = np.random.default_rng(0)
    inputs = [rng.integers(-128, 128, size=graph.tensor(i).shape, dtype=np.int64).astype(graph.tensor(i).dtype)
              for i in graph.inputs]
    module = tvmdevice.compile(graph, "cmsis-nn, c")
    row: dict[str, Any] = {"model": path.stem}
    with module.executor() as ex:
        ours = ex.run(inputs)
        outs = [np.empty_like(o) for o in ours]
        row["runs_in_c"] = ex.runs_in_c

        micro = runtime.Interpreter.from_bytes(data)
        n_out = len(graph.outputs)

        def tflm_full() -> None:
            for k, x in enumerate(inputs):
                micro.set_input(x, k)
            micro.invoke()
            for k in range(n_out):
                micro.get_output(k)

        tflm_full()
        reference = [micro.get_output(k) for k in range(n_out)]
        row["bit_exact_vs_tflm"] = all(np.array_equal(a, b.reshape(a.shape)) for a, b in zip(ours, reference))

        full: dict[str, Callable[[], Any]] = {
            "tvmdevice": lambda: ex.run(inputs),
            "tvmdevice out=": lambda: ex.run(inputs, out=outs),
            "tflite-micro": tflm_full,
        }
        invoke: dict[str, Callable[[], Any]] = {"tvmdevice": ex.invoke, "tflite-micro": micro.invoke}
        for label, xnnpack in (("litert xnnpack", True), ("litert builtin", False)):
            interp = litert_interpreter(data, xnnpack)
            if interp is None:
                continue
            in_idx = [d["index"] for d in interp.get_input_details()]
            out_idx = [d["index"] for d in interp.get_output_details()]

            def litert_full(interp: Any = interp, in_idx: list[int] = in_idx, out_idx: list[int] = out_idx) -> None:
                for i, x in zip(in_idx, inputs):
                    interp.set_tensor(i, x)
                interp.invoke()
                for i in out_idx:
                    interp.get_tensor(i)

            full[label] = litert_full
            invoke[label] = interp.invoke
        row["full_s"] = interleaved(full, rounds, round_time)
        row["invoke_s"] = interleaved(invoke, rounds, round_time)

        stacked = [np.stack([x] * batch) for x in inputs]
        batch_out = ex.run_batch(stacked)
        row["batch_bit_exact"] = all(np.array_equal(b[i], o) for b, o in zip(batch_out, ours) for i in (0, batch - 1))

        def loop() -> None:
            for i in range(batch):
                ex.run([x[i] for x in stacked])

        per_batch = interleaved({"run loop": loop, "run_batch": lambda: ex.run_batch(stacked),
                                 "run_batch workers=2": lambda: ex.run_batch(stacked, workers=2)},
                                max(3, rounds // 4), round_time)
        row["batch_s_per_sample"] = {k: v / batch for k, v in per_batch.items()}
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=21, help="interleaved rounds per measurement (median kept)")
    parser.add_argument("--round-time", type=float, default=0.02, help="seconds per candidate per round")
    parser.add_argument("--batch", type=int, default=512, help="samples per run_batch")
    parser.add_argument("--models", nargs="*", help="model stems to run (default: every .tflite)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()

    directory = models_dir()
    paths = sorted(p for p in directory.glob("*.tflite") if not args.models or p.stem in args.models)
    if not paths:
        print(f"no .tflite models in {directory} (set TVMDEVICE_MODELS_DIR)", file=sys.stderr)
        return 2
    print(f"CPU: {simd_features()}")
    rows = [bench_model(p, args.rounds, args.round_time, args.batch) for p in paths]

    for what, key in (("full run (inputs in, outputs out)", "full_s"), ("invoke only", "invoke_s")):
        names = list(dict.fromkeys(n for r in rows for n in r[key]))
        print(f"\n{what}: microseconds, and ratio to tflite-micro's (lower is faster)")
        print(f"{'model':<24}" + "".join(f"{n:>26}" for n in names))
        for r in rows:
            base = r[key]["tflite-micro"]
            cells = "".join(f"{r[key][n] * 1e6:>15.2f} ({r[key][n] / base:>6.3f}x)" if n in r[key] else f"{'-':>26}"
                            for n in names)
            print(f"{r['model']:<24}{cells}")
    print("\nbatch: microseconds per sample, and ratio to a Python loop of ex.run")
    for r in rows:
        b = r["batch_s_per_sample"]
        base = b["run loop"]
        print(f"{r['model']:<24}" + "".join(f"{k:>20}: {v * 1e6:8.2f} ({v / base:5.3f}x)" for k, v in b.items()))

    failures = []
    for r in rows:
        if not (r["bit_exact_vs_tflm"] and r["batch_bit_exact"]):
            failures.append(f"{r['model']}: output differs from tflite-micro")
        if r["model"].startswith("hello_world") and r["full_s"]["tvmdevice"] > r["full_s"]["tflite-micro"]:
            ratio = r["full_s"]["tvmdevice"] / r["full_s"]["tflite-micro"]
            failures.append(f"{r['model']}: full run {ratio:.2f}x tflite-micro's (target <= 1)")
    for f in failures:
        print(f"TARGET MISSED: {f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"cpu": simd_features(), "rows": rows, "failures": failures}, indent=2))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
