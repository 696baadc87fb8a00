"""Host speed of ``cmsis-nn, c`` against LiteRT + XNNPACK (one thread), on every SIMD level, in one process.

Every workload runs, in this one process, on the same random inputs, as full runs (inputs in, invoke, outputs
out) by:

  (a) tvmdevice: ``tvmdevice.compile(model, "cmsis-nn, c")``'s executor, once per cmsis-nn SIMD level the CPU
      runs (``_kernels.simd_levels()``, forced with ``set_simd_level``: the AVX-512 VNNI, AVX-VNNI, AVX-512
      and AVX2 levels it has, and the portable C always; never an emulated build);
  (b) ai-edge-litert with XNNPACK, one thread, paired with (a): every round times each level and XNNPACK
      back to back, and the ratio XNNPACK time / tvmdevice time is the median of the rounds' ratios
      (>= 1.0: tvmdevice is as fast or faster), so that a loaded machine moves both alike; times are the
      calling thread's CPU time (``interleaved.CLOCK``), so a process waiting for the CPU is not timed;
  (c) tflite-micro (PyPI, reference kernels), the bit-exact reference: every level's outputs are compared
      with its bit for bit.

Then each operator's time on every level (the executor's profiled run, levels interleaved round by round)
gives each VNNI level's gain over its base level (avx512vnni over avx512, avxvnni over avx2) per operator.

The workloads are the models of TVMDEVICE_MODELS_DIR (default ../shared/models relative to the repository
root), the built networks of ``built_models.py`` (a ResNet-style model, a ResNet-8 block with its 3-channel
stem, a MobileNetV1 block with an 8-channel 48x48 depthwise, a MobileNetV2 224x224 stem) and one model per
operator class.

Targets checked (the exit status is 1 and each miss is printed when one is missed): XNNPACK / tvmdevice >=
1.0 at the default level on every shared model and built network; tflite-micro / tvmdevice >= 10 on the
convolutional shared models; no VNNI level slower than its base level on an operator of a shared model
beyond the noise margin (``vnni_gain.py``); every output bit-exact.

    python bench/bench_cmsis.py [--rounds 15] [--min-time 0.02] [--profile-rounds 101] [--only models|ops]
                                [--workload NAME] [--simd-level avx2] [--vnni-margin 0.1] [--json out.json]
                                [--save]

``--save`` writes bench/figures/host_speed.json and host_vnni_gain.json, which ``bench/figures.py --update``
renders into plugins/cmsis/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import figures
import numpy as np
from built_models import BUILT
from host_tables import speed_table, vnni_gain_table
from interleaved import calls_per_sample, paired, profiled_steps, seconds_per_call
from vnni_gain import FLOOR_US, MARGIN, gain_rows, mark_slower

ROOT = Path(__file__).resolve().parent.parent
CONVOLUTIONAL = ("CONV_2D", "DEPTHWISE_CONV_2D")
#: The target on the shared models and the built networks: XNNPACK time / tvmdevice time at least this.
XNNPACK_TARGET = 1.0
#: The target on the convolutional shared models: tflite-micro time / tvmdevice time at least this.
TFLM_TARGET = 10.0
#: The SIMD features that decide which host kernel path runs (as /proc/cpuinfo names them).
SIMD_FLAGS = ("sse4_2", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni")


def models_dir() -> Path:
    return Path(os.environ.get("TVMDEVICE_MODELS_DIR", ROOT.parent / "shared" / "models"))


def cpu_description() -> str:
    """The CPU's model name and the SIMD features among :data:`SIMD_FLAGS` it has."""
    name, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                name = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    have = [f for f in SIMD_FLAGS if f in flags]
    lacks = [f for f in SIMD_FLAGS if f not in flags]
    return f"{name}; has {', '.join(have) or 'none of them'}; lacks {', '.join(lacks) or 'none'}"


# ------------------------------------------------------------------ workloads
@dataclass(frozen=True)
class Workload:
    name: str
    kind: str  # "model" (a shared model) or "operator" (one operator class) or "net" (a built network)
    data: bytes
    what: str


def _operator_workloads() -> list[Workload]:
    from tvmdevice.aot.builder.presets import single_op_model

    specs = [
        ("conv 3x3", "CONV_2D", dict(input_shape=(1, 32, 32, 32), filters=32, kernel=3, padding="SAME",
                                     per_channel=True, activation="RELU"), "[1,32,32,32] -> 32, SAME"),
        ("conv 1x1", "CONV_2D", dict(input_shape=(1, 24, 24, 64), filters=64, kernel=1, per_channel=True),
         "[1,24,24,64] -> 64"),
        ("depthwise 3x3", "DEPTHWISE_CONV_2D", dict(input_shape=(1, 48, 48, 32), kernel=3, padding="SAME",
                                                    per_channel=True), "[1,48,48,32], stride 1"),
        ("depthwise 3x3 8ch", "DEPTHWISE_CONV_2D", dict(input_shape=(1, 48, 48, 8), kernel=3, padding="SAME",
                                                        per_channel=True), "[1,48,48,8], stride 1"),
        ("depthwise 3x3 /2", "DEPTHWISE_CONV_2D", dict(input_shape=(1, 48, 48, 64), kernel=3, stride=2,
                                                       padding="SAME", per_channel=True), "[1,48,48,64], stride 2"),
        ("fully connected", "FULLY_CONNECTED", dict(input_shape=(1, 1024), units=256), "[1,1024] -> 256"),
        ("add", "ADD", dict(input_shape=(1, 32, 32, 32), input2_scale=0.07, input2_zero_point=3),
         "[1,32,32,32] + same shape"),
        ("sub", "SUB", dict(input_shape=(1, 32, 32, 32), input2_scale=0.07, input2_zero_point=3),
         "[1,32,32,32] - same shape"),
        ("mul", "MUL", dict(input_shape=(1, 32, 32, 32), input2_scale=0.07), "[1,32,32,32] x same shape"),
        ("maximum", "MAXIMUM", dict(input_shape=(1, 32, 32, 32)), "[1,32,32,32]"),
        ("maximum broadcast", "MAXIMUM", dict(input_shape=(1, 32, 32, 32), input2_shape=(1, 1, 1, 32)),
         "[1,32,32,32] vs [1,1,1,32]"),
        ("average pool", "AVERAGE_POOL_2D", dict(input_shape=(1, 32, 32, 32), pool=2, stride=2), "2x2 /2"),
        ("max pool", "MAX_POOL_2D", dict(input_shape=(1, 32, 32, 32), pool=2, stride=2), "2x2 /2"),
        ("softmax", "SOFTMAX", dict(input_shape=(1, 1000), input_scale=0.1), "[1,1000]"),
    ]
    return [Workload(name, "operator", single_op_model(op, seed=1, **params), f"{op} {what}")
            for name, op, params, what in specs]


def workloads(only: str | None, names: list[str] | None = None) -> list[Workload]:
    out: list[Workload] = []
    if only in (None, "models"):
        paths = sorted(models_dir().glob("*.tflite"))
        if not paths and only == "models":
            raise SystemExit(f"no .tflite models in {models_dir()} (set TVMDEVICE_MODELS_DIR)")
        out += [Workload(p.stem, "model", p.read_bytes(), "shared model") for p in paths]
    if only in (None, "ops"):
        out += [Workload(name, "net", built.build(), built.what) for name, built in BUILT.items()]
        out += _operator_workloads()
    if names:
        unknown = sorted(set(names) - {w.name for w in out})
        if unknown:
            raise SystemExit(f"no workload named {', '.join(unknown)} (known: {', '.join(w.name for w in out)})")
        out = [w for w in out if w.name in names]
    return out


# ------------------------------------------------------------------ measuring
def _inputs(graph) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    arrays = []
    for i in graph.inputs:
        t = graph.tensor(i)
        info = np.iinfo(t.dtype)
        arrays.append(rng.integers(info.min, info.max + 1, size=t.shape, dtype=np.int64).astype(t.dtype))
    return arrays


def kernel_paths(only: str | None = None) -> list[str]:
    """The cmsis-nn host SIMD levels to measure: every level this CPU runs, highest first (or just ``only``)."""
    from tvmdevice_cmsis import _kernels

    if _kernels.simd_emulated():
        raise SystemExit("tvmdevice-cmsis was built with TVMDEVICE_CMSIS_SIMD_EMULATION=1: its SIMD levels are "
                         "emulated in portable C, and their times are not speed figures; measure a native build")
    levels = list(_kernels.simd_levels())
    if only is not None:
        if only not in levels:
            raise SystemExit(f"this CPU lacks the {only} SIMD level (it runs {', '.join(levels)})")
        return [only]
    return list(reversed(levels))


def _litert_run(data: bytes, inputs: list[np.ndarray]):
    """LiteRT with XNNPACK on one thread, as a full run: the inputs set, invoke, the outputs read."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    litert = Interpreter(model_content=data, num_threads=1, experimental_op_resolver_type=OpResolverType.AUTO)
    litert.allocate_tensors()
    ins = [d["index"] for d in litert.get_input_details()]
    outs = [d["index"] for d in litert.get_output_details()]

    def run() -> list[np.ndarray]:
        for index, x in zip(ins, inputs):
            litert.set_tensor(index, x)
        litert.invoke()
        return [litert.get_tensor(index) for index in outs]
    return run


def measure(w: Workload, rounds: int, min_time: float, levels: list[str],
            profile_rounds: int) -> tuple[dict, list[dict]]:
    """``w`` timed on each of ``levels`` against XNNPACK and tflite-micro; its row, and its operators' rows."""
    from tvmdevice_cmsis import _kernels

    import tvmdevice
    from tvmdevice.aot.frontend import load_tflite
    from tvmdevice.testing.oracle import tflm_interpreter

    graph = load_tflite(w.data, name=w.name)
    inputs = _inputs(graph)
    micro = tflm_interpreter(w.data)  # an arena that fits the model's tensors

    def tflm_run() -> list[np.ndarray]:
        for k, x in enumerate(inputs):
            micro.set_input(x, k)
        micro.invoke()
        return [micro.get_output(k) for k in range(len(graph.outputs))]

    reference = tflm_run()
    number = calls_per_sample(tflm_run, min_time)
    tflm_s = statistics.median(seconds_per_call(tflm_run, number) for _ in range(3))

    module = tvmdevice.compile(graph, "cmsis-nn, c")
    exact = True
    try:
        with module.executor() as ex:
            for level in levels:
                _kernels.set_simd_level(level)
                outs = ex.run(inputs)
                exact = exact and all(np.array_equal(o, r.reshape(o.shape)) for o, r in zip(outs, reference))
            timed = paired(levels, _kernels.set_simd_level, lambda: ex.run(inputs), _litert_run(w.data, inputs),
                           rounds, min_time)
            per, labels = profiled_steps(levels, _kernels.set_simd_level, ex, profile_rounds) \
                if profile_rounds and w.kind != "operator" else ({}, [])
    finally:
        _kernels.set_simd(True)

    default = _kernels.max_simd_level() if _kernels.max_simd_level() in levels else levels[0]
    xnnpack_s = statistics.median(t["reference_s"] for t in timed.values())
    row = {"workload": w.name, "kind": w.kind, "what": w.what, "ops": sorted({op.type for op in graph.operators}),
           "devices": sorted({p.device for p in module.placement.ops}), "cpu": cpu_description(),
           "rounds": rounds, "default_level": default,
           "target": XNNPACK_TARGET if w.kind in ("model", "net") else None,
           "levels": [{"level": level, "ms": _round(t["ours_s"] * 1e3), "xnnpack_over_ours": round(t["ratio"], 3)}
                      for level, t in timed.items()],
           "xnnpack_ms": _round(xnnpack_s * 1e3), "tflm_ms": _round(tflm_s * 1e3),
           "tflm_over_ours": round(tflm_s / timed[default]["ours_s"], 2), "bit_exact": exact}
    return row, gain_rows(w.name, w.kind == "model", per, labels) if per else []


def _round(v: float) -> float:
    """``v`` to four significant digits (the saved figures change only where a measurement does)."""
    return float(f"{v:.4g}")


def failures(rows: list[dict]) -> list[str]:
    """The targets ``rows`` miss, one message each: bit differences, XNNPACK and tflite-micro ratios."""
    missed = []
    for r in rows:
        if not r["bit_exact"]:
            missed.append(f"{r['workload']}: output differs from tflite-micro")
        default = next(level for level in r["levels"] if level["level"] == r["default_level"])
        if r["target"] is not None and default["xnnpack_over_ours"] < r["target"]:
            missed.append(f"{r['workload']}: XNNPACK / tvmdevice {default['xnnpack_over_ours']:.2f} at "
                          f"{r['default_level']} (target: >= {r['target']})")
        if r["kind"] == "model" and any(o in CONVOLUTIONAL for o in r["ops"]) and r["tflm_over_ours"] < TFLM_TARGET:
            missed.append(f"{r['workload']}: only {r['tflm_over_ours']:.1f}x faster than tflite-micro "
                          f"(target: {TFLM_TARGET:.0f}x)")
    return missed


def main(argv: list[str] | None = None) -> int:
    from tvmdevice_cmsis import _kernels

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15, help="paired rounds per level (median ratio reported)")
    parser.add_argument("--min-time", type=float, default=0.02, help="seconds of CPU time per sample")
    parser.add_argument("--profile-rounds", type=int, default=101,
                        help="profiled rounds per level for the per-operator times (0: none)")
    parser.add_argument("--only", choices=("models", "ops"), help="only the shared models, or only the built ones")
    parser.add_argument("--simd-level", choices=_kernels.SIMD_LEVELS,
                        help="measure tvmdevice on this cmsis-nn SIMD level only (default: every level the CPU runs)")
    parser.add_argument("--workload", action="append", metavar="NAME",
                        help="measure only this workload (repeatable; a model's file stem or a built one's name)")
    parser.add_argument("--vnni-margin", type=float, default=MARGIN,
                        help=f"a VNNI level slower than its base by more than this fraction (and {FLOOR_US} µs) "
                             "on an operator of a shared model is a miss (default: %(default)s)")
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--save", action="store_true",
                        help="write bench/figures/host_speed.json and host_vnni_gain.json (every workload, level)")
    args = parser.parse_args(argv)
    if args.save and (args.only or args.workload or args.simd_level):
        parser.error("--save keeps the README's whole tables: measure every workload on every level "
                     "(no --only, --workload or --simd-level)")
    if args.rounds < 1 or args.min_time <= 0 or args.profile_rounds < 0:
        parser.error("--rounds must be at least 1, --min-time above 0 and --profile-rounds at least 0")

    levels = kernel_paths(args.simd_level)
    print(f"CPU: {cpu_description()}; cmsis-nn SIMD levels measured: {', '.join(levels)}", flush=True)
    rows, op_rows = [], []
    todo = workloads(args.only, args.workload)
    for k, w in enumerate(todo, 1):
        print(f"[{k}/{len(todo)}] {w.name}", file=sys.stderr, flush=True)
        row, ops = measure(w, args.rounds, args.min_time, levels, args.profile_rounds)
        rows.append(row)
        op_rows += ops
    missed = failures(rows) + mark_slower(op_rows, args.vnni_margin)
    print(speed_table(rows))
    if any(r["gains"] for r in op_rows):
        print(vnni_gain_table(op_rows))
    for m in missed:
        print(f"TARGET MISSED: {m}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "operators": op_rows, "failures": missed}, indent=1))
    if args.save:
        print(f"saved {figures.save('host_speed', rows)} and {figures.save('host_vnni_gain', op_rows)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
