"""``tvmdevice run``: compile a model for a target and run it."""

from __future__ import annotations

import argparse
from typing import Any

from .common import (
    add_input_args,
    add_output_args,
    compile_model,
    is_export,
    output_rows,
    print_json,
    samples_from_args,
    save_outputs,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run", help="run an int8 TFLite model on the devices of a target",
        description="Compile MODEL for TARGET (placement, memory plan), open the devices, run the inputs and "
                    "print the placement, memory per pool and outputs. Without MODEL, runs the built-in int8 "
                    "demo CNN. Without --target, uses every installed device, accelerators first, host 'c' last. "
                    "When MODEL is a directory written by `tvmdevice export`, builds its C (cached) and runs it "
                    "natively (--cpu host) or under qemu-system-arm (--cpu cortex-m55|cortex-m4|cortex-m3).")
    p.add_argument("model", nargs="?", help=".tflite file or export directory (default: the built-in demo model)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="for an export: the most one sample's run may take before it is stopped (default: %(default)s)")
    p.add_argument("--cpu", metavar="CPU",
                   help="for an export: host (default), cortex-m55 (QEMU mps3-an547), cortex-m4 (mps2-an386) or "
                        "cortex-m3 (mps2-an385)")
    p.add_argument("--target", "-t", help="target string, e.g. 'woofles -sram_kb=256, cmsis-nn, c'")
    add_input_args(p)
    p.add_argument("--output", "-o", metavar="DIR",
                   help="write outputs as output_<k>.npy (row i = sample i when there are several) and the "
                        "sample names, one a line, as samples.txt")
    add_output_args(p)
    p.add_argument("--profile", action="store_true",
                   help="print per-operator device and time; for an export on a Cortex-M --cpu, the instructions "
                        "of each operator and device call of the measured run, summing to the whole run")
    p.add_argument("--trace", metavar="OUT.json",
                   help="write a Chrome/Perfetto trace of lifecycle, copies, kernels; for an export on a Cortex-M "
                        "--cpu, of the measured firmware run with instructions as time")
    p.add_argument("--strict", action="store_true", help="refuse host fallback for operators accelerators declined")
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    p.set_defaults(func=run)


def print_outputs(console: Any, outputs: list[list[Any]], names: list[str], specs: list[Any], top: int) -> None:
    """The last sample's outputs, and with ``top`` the best classes of every sample."""
    import numpy as np

    from .inputs import top_k

    last = outputs[-1]
    for k, value in enumerate(last):
        label = f"output {k}" + (f" (sample {len(outputs) - 1}: {names[-1]})" if len(outputs) > 1 else "")
        console.print(f"{label}: shape {tuple(value.shape)} {value.dtype}: {np.array2string(value, threshold=32)}")
    if top:
        for name, sample in zip(names, outputs):
            best = ", ".join(f"{c} ({s:.4g})" for c, s in top_k(sample[0], top))
            console.print(f"top-{top} {name}: {best}")


def outputs_json(outputs: list[list[Any]], names: list[str], top: int) -> dict[str, Any]:
    from .inputs import top_k

    out: dict[str, Any] = {"samples": len(outputs), "names": names, "outputs": [o.tolist() for o in outputs[-1]]}
    if top:
        out["top_k"] = [[{"class": c, "score": s} for c, s in top_k(sample[0], top)] for sample in outputs]
    return out


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import Progress

    from .. import get_registry
    from .classes import check_top_k, class_count
    from .inputs import graph_specs
    from .output_paths import check_output_dir, check_output_file

    check_output_dir(args.output, "-o")  # before any work: a bad path is found now, not after the run
    check_output_file(args.trace, "--trace")
    console = Console(stderr=args.json, highlight=False, soft_wrap=True)
    if is_export(args.model):
        from .export_cmd import run_exported

        return run_exported(args, console)
    if args.cpu:
        from ..errors import InvalidArgumentError

        raise InvalidArgumentError("--cpu runs an export: export the model first "
                                   "(tvmdevice export MODEL -t TARGET -o DIR), then tvmdevice run DIR --cpu ...")
    registry = get_registry()
    timeline = None
    if args.trace:
        from ..tracing import Timeline

        timeline = Timeline()
        registry.register(timeline, "tvmdevice-run-trace")
    module, name = compile_model(args.model, args.target, strict=args.strict, registry=registry)
    graph = module.graph
    in_specs, out_specs = graph_specs(graph, graph.inputs), graph_specs(graph, graph.outputs)
    check_top_k(args.top_k, class_count(out_specs[0].shape))
    samples = samples_from_args(args, in_specs)
    if not args.json:
        console.print(f"[bold]model[/] {name}: {len(graph.operators)} operators; [bold]target[/] {module.target}")
        console.print(str(module.placement))
        console.print("memory:\n" + module.plan.report())
    outputs: list[list[Any]] = []
    with module.executor(trace=bool(args.trace), timeline=timeline) as ex:
        if len(samples) > 1:
            with Progress(console=console, transient=True) as progress:
                task = progress.add_task("running", total=len(samples))
                for sample in samples.inputs:
                    outputs.append(ex.run(sample, profile=args.profile))
                    progress.advance(task)
        else:
            outputs.append(ex.run(samples.inputs[0], profile=args.profile))
        timings = list(getattr(ex, "timings", []))
    if timeline is not None:
        try:
            timeline.write_chrome_trace(args.trace)
        except OSError as exc:
            from ..errors import InvalidArgumentError

            raise InvalidArgumentError(f"cannot write the trace {args.trace!r}: {exc}") from None
        registry.unregister("tvmdevice-run-trace")
    outputs = [output_rows(o, out_specs, dequantize=args.dequantize) for o in outputs]
    if args.output:
        save_outputs(args.output, outputs, samples.names)
    if args.json:
        print_json({"model": name, "target": str(module.target), "placement": module.placement.to_json(),
                    "memory": module.plan.to_json(), **outputs_json(outputs, samples.names, args.top_k),
                    "profile": [{"step": t.label, "device": t.device, "us": t.ns / 1000} for t in timings]})
        return 0
    if args.profile and timings:
        console.print("profile (last sample):")
        for t in timings:
            console.print(f"  {t.label:<34} {t.device:<10} {t.ns / 1000:10.1f} us")
        console.print(f"  {'total':<34} {'':<10} {sum(t.ns for t in timings) / 1000:10.1f} us")
    print_outputs(console, outputs, samples.names, out_specs, args.top_k)
    if args.trace:
        console.print(f"trace written to {args.trace}")
    return 0
