"""``tvmdevice bench``: repeated runs with latency statistics, per-operator shares, and reference comparison."""

from __future__ import annotations

import argparse
import time
from typing import Any

from .common import add_input_args, compile_model, is_export, print_json, samples_from_args


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench", help="time repeated runs: latency statistics, per-operator shares, --compare with tflite-micro",
        description="Compile MODEL for TARGET, run it --warmup times, then time --runs runs (devices activated, "
                    "kernels, deactivated: what Executor.run costs without copying inputs in): mean, median, p90, "
                    "p99, std (the median is the headline: one cold run does not sway it); then each step's share "
                    "of a run from profiled runs. Progress goes to stderr when it is a terminal. --compare runs "
                    "tflite-micro (and LiteRT when installed) in this process on the same inputs: their latency, "
                    "the ratio of medians, whether their outputs agree bit for bit with ours and, when not, by "
                    "how much; a reference that rejects the model is reported unavailable, with its reason. For "
                    "an export (MODEL a directory written by `tvmdevice export`) with --cpu "
                    "cortex-m55|cortex-m4|cortex-m3: the instructions per run under QEMU and the wall time of each "
                    "whole run (QEMU start included).")
    p.add_argument("model", help=".tflite file or export directory")
    p.add_argument("--target", "-t", help="target string (default: every installed device, host 'c' last)")
    p.add_argument("--runs", type=int, default=None, metavar="N",
                   help="timed runs (default: 200; 1 for an export)")
    p.add_argument("--warmup", type=int, default=None, metavar="K",
                   help="untimed runs first (default: 10; 0 for an export)")
    p.add_argument("--compare", action="store_true",
                   help="also run tflite-micro (and LiteRT when installed) on the same inputs: ratios and "
                        "bit-exact agreement")
    p.add_argument("--cpu", metavar="CPU", help="for an export: host, cortex-m55, cortex-m4 or cortex-m3")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="for an export: the most one run may take (default: %(default)s)")
    p.add_argument("--profile", action="store_true",
                   help="for an export on a Cortex-M --cpu: also the instructions of each operator and device "
                        "call of one run (a build with profiling marks), summing to that run's (a .tflite bench "
                        "always shows each step's share)")
    add_input_args(p)
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=run)


def _counts(args: argparse.Namespace, export: bool) -> tuple[int, int]:
    from ..errors import InvalidArgumentError

    runs = args.runs if args.runs is not None else (1 if export else 200)
    warmup = args.warmup if args.warmup is not None else (0 if export else 10)
    if runs < 1 or warmup < 0:
        raise InvalidArgumentError(f"--runs must be at least 1 and --warmup at least 0 (got {runs}, {warmup})")
    return runs, warmup


def _step_shares(ex: Any, runs: int, tick: Any = None) -> list[dict[str, Any]]:
    """Each step's mean time and share of the profiled total, over ``runs`` profiled runs."""
    totals: dict[int, list[Any]] = {}
    for _ in range(runs):
        ex.invoke(profile=True)
        for t in ex.timings:
            entry = totals.setdefault(t.step, [t.label, t.device, 0])
            entry[2] += t.ns
        if tick:
            tick()
    whole = sum(e[2] for e in totals.values()) or 1
    return [{"step": step, "label": label, "device": device, "mean_us": ns / runs / 1000, "share": ns / whole}
            for step, (label, device, ns) in sorted(totals.items())]


def _compare(model: bytes, sample: list[Any], ours: list[Any], runs: int, warmup: int, median_us: float | None,
             scales: list[float | None] | None = None, progress: Any = None) -> list[dict[str, Any]]:
    """tflite-micro (always) and LiteRT (when installed) on ``sample``: latency, ratio of medians, agreement
    with ``ours`` (how large a difference is, with each output's ``scales``). A reference that rejects the
    model is reported unavailable with its reason; the rest of the comparison is kept."""
    from .agreement import difference
    from .references import LABELS, REFERENCES, ReferenceUnavailableError, available, open_reference
    from .stats import LatencyStats

    out = []
    for name in REFERENCES:
        if name != "tflite-micro" and not available(name):
            out.append({"reference": name, "installed": False})
            continue
        try:
            ref = open_reference(name, model, len(ours))
            theirs = ref.run(sample)
        except ReferenceUnavailableError as exc:
            out.append({"reference": name, "installed": True, "available": False, "reason": str(exc)})
            continue
        entry: dict[str, Any] = {"reference": name, "installed": True, "available": True,
                                 **difference(ours, theirs, scales)}
        if median_us is not None:
            tick = progress.phase(f"timing {LABELS[name]}", runs + warmup) if progress else None
            stats = LatencyStats.of(ref.time_runs(runs, warmup, tick))
            entry.update(latency=stats.to_json(), speedup=stats.median_us / median_us)
        out.append(entry)
    return out


def run(args: argparse.Namespace) -> int:
    if is_export(args.model):
        return _bench_export(args)
    if args.cpu:
        from ..errors import InvalidArgumentError

        raise InvalidArgumentError(f"--cpu benches an export, and {args.model!r} is not an export: export the model "
                                   f"first (tvmdevice export MODEL -t TARGET -o DIR), then bench DIR --cpu ...")
    from .. import get_registry
    from .bench_progress import BenchProgress
    from .inputs import graph_specs
    from .stats import LatencyStats

    module, name = compile_model(args.model, args.target, registry=get_registry())
    runs, warmup = _counts(args, export=False)
    graph = module.graph
    samples = samples_from_args(args, graph_specs(graph, graph.inputs))
    sample = samples.inputs[0]
    profiled = min(runs, 50)
    with BenchProgress() as progress, module.executor() as ex:
        ours = ex.run(sample)
        tick = progress.phase("warm-up and timed runs", warmup + runs)
        for _ in range(warmup):
            ex.invoke()
            tick()
        ns = []
        for _ in range(runs):
            start = time.perf_counter_ns()
            ex.invoke()
            ns.append(time.perf_counter_ns() - start)
            tick()
        shares = _step_shares(ex, profiled, progress.phase("profiled runs", profiled))
        stats = LatencyStats.of(ns)
        compare = None
        if args.compare:
            if module.source_model is None:
                from ..errors import InvalidArgumentError

                raise InvalidArgumentError("--compare needs a .tflite file (the built-in demo has none on disk)")
            scales = [s.scale for s in graph_specs(graph, graph.outputs)]
            compare = _compare(module.source_model, sample, ours, runs, warmup, stats.median_us, scales, progress)
    result: dict[str, Any] = {"model": name, "target": str(module.target), "input": samples.names[0],
                              "warmup": warmup, "latency": stats.to_json(), "steps": shares}
    if compare is not None:
        result["compare"] = compare
    if args.json:
        print_json(result)
        return 0
    print(f"bench {name} on {module.target}: input {samples.names[0]}, {warmup} warm-up run(s)")
    print(f"  latency: {stats.line()}")
    print("  per step (share of a profiled run):")
    for s in shares:  # the label names the operator (#index TYPE) or the copy
        print(f"    {s['label']:<38} {s['device']:<10} {s['mean_us']:10.1f} us {s['share']:7.1%}")
    _print_compare(result.get("compare", []))
    return 0


def _print_compare(rows: list[dict[str, Any]]) -> None:
    from .agreement import describe
    from .references import LABELS

    for c in rows:
        label = LABELS.get(c["reference"], c["reference"])
        if not c["installed"]:
            print(f"  {label}: not installed (pip install 'tvmdevice[bench]')")
            continue
        if not c.get("available", True):
            print(f"  {label}: unavailable ({c['reason']})")
            continue
        agree = describe(c)
        if "latency" in c:
            lat = c["latency"]
            print(f"  {label}: median {lat['median_us']:,.1f} us (mean {lat['mean_us']:,.1f}); "
                  f"ours is {c['speedup']:.2f}x its speed (medians); {agree}")
        else:
            print(f"  {label}: {agree}")


def _bench_export(args: argparse.Namespace) -> int:
    from ..errors import InvalidArgumentError
    from ..export.run import load_metadata, run_export
    from .export_cmd import check_cpu, check_profile_cpu, print_profile
    from .inputs import export_specs
    from .stats import LatencyStats

    if args.target:
        raise InvalidArgumentError("--target does not apply to an export (its target is fixed); export again")
    meta = load_metadata(args.model)
    cpu = check_cpu(args.cpu)
    if args.profile:
        check_profile_cpu(cpu, "--profile")
    runs, warmup = _counts(args, export=True)
    samples = samples_from_args(args, export_specs(meta["inputs"]))
    sample = samples.inputs[0]
    first = run_export(args.model, cpu, sample, timeout=args.timeout)  # builds (cached) outside the timing
    for _ in range(warmup):
        run_export(args.model, cpu, sample, timeout=args.timeout)
    ns, results = [], []
    for _ in range(runs):
        start = time.perf_counter_ns()
        results.append(run_export(args.model, cpu, sample, timeout=args.timeout))
        ns.append(time.perf_counter_ns() - start)
    instructions = sorted({r.instructions for r in results}, key=lambda v: -1 if v is None else v)
    stats = LatencyStats.of(ns)
    result: dict[str, Any] = {"model": meta["model_name"], "target": meta["target"], "cpu": cpu,
                              "input": samples.names[0], "instructions_per_run": instructions[-1],
                              "instructions_vary": len(instructions) > 1, "process_latency": stats.to_json(),
                              **{k: v for k, v in first.to_json().items() if k in ("flash", "ram")}}
    if args.compare:
        model = meta.get("model")
        if not model:
            raise InvalidArgumentError("--compare needs the .tflite kept in the export (src/); export again")
        from pathlib import Path

        result["compare"] = _compare((Path(args.model) / model).read_bytes(), sample, first.outputs, runs, 0, None)
    profile = run_export(args.model, cpu, sample, timeout=args.timeout, profile=True).profile if args.profile else None
    if profile is not None:
        result.update(profile=profile.to_json(), operators=profile.operators())
    if args.json:
        print_json(result)
        return 0
    where = "instructions per run (QEMU)" if result["instructions_per_run"] is not None else "instructions: n/a on"
    count = f"{result['instructions_per_run']:,}" if result["instructions_per_run"] is not None else "the host"
    print(f"bench export {meta['model_name']} ({meta['target']}) on {cpu}: input {samples.names[0]}")
    print(f"  {where}: {count}")
    print(f"  wall time per whole run, process start included: {stats.line()}")
    print(f"  flash {result['flash']['total']:,} B; RAM {result['ram']['total']:,} B (stack included)")
    _print_compare(result.get("compare", []))
    if profile is not None:
        from rich.console import Console

        print_profile(Console(highlight=False, soft_wrap=True), profile)
    return 0
