"""``tvmdevice run``: compile a model for a target and run it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


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
                   help="for an export: the most one run may take before it is stopped (default: %(default)s)")
    p.add_argument("--cpu", metavar="CPU",
                   help="for an export: host (default), cortex-m55 (QEMU mps3-an547), cortex-m4 (mps2-an386) or "
                        "cortex-m3 (mps2-an385)")
    p.add_argument("--target", "-t", help="target string, e.g. 'woofles -sram_kb=256, cmsis-nn, c'")
    p.add_argument("--input", "-i", action="append", default=[], metavar="X.npy",
                   help="input .npy per model input; a stacked .npy (leading batch axis) or a directory of .npy "
                        "files runs many samples (default: seeded random inputs)")
    p.add_argument("--output", "-o", metavar="DIR", help="write outputs as output_<k>.npy (stacked per sample)")
    p.add_argument("--profile", action="store_true", help="print per-operator device and time")
    p.add_argument("--trace", metavar="OUT.json", help="write a Chrome/Perfetto trace of lifecycle, copies, kernels")
    p.add_argument("--strict", action="store_true", help="refuse host fallback for operators accelerators declined")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    p.set_defaults(func=run)


def _load_inputs(args: argparse.Namespace, specs: list[Any]) -> list[list[Any]]:
    """Samples: a list of per-sample input lists (``specs``: objects with ``shape`` and ``dtype``)."""
    import numpy as np

    from ..errors import InvalidArgumentError

    if not args.input:
        rng = np.random.default_rng(args.seed)
        sample = []
        for t in specs:
            if np.dtype(t.dtype).kind == "f":
                sample.append(rng.standard_normal(t.shape).astype(t.dtype))
            else:
                info = np.iinfo(t.dtype)
                sample.append(rng.integers(info.min, info.max + 1, size=t.shape, dtype=t.dtype))
        return [sample]
    if len(args.input) == 1 and Path(args.input[0]).is_dir():
        if len(specs) != 1:
            raise InvalidArgumentError("a directory of inputs needs a model with exactly one input")
        files = sorted(Path(args.input[0]).glob("*.npy"))
        if not files:
            raise InvalidArgumentError(f"no .npy files in {args.input[0]}")
        return [[np.load(f)] for f in files]
    if len(args.input) != len(specs):
        raise InvalidArgumentError(f"the model has {len(specs)} input(s); got {len(args.input)} --input")
    arrays = [np.load(p) for p in args.input]
    first = arrays[0]
    if first.ndim == len(specs[0].shape) + 1 and tuple(first.shape[1:]) == tuple(specs[0].shape):
        n = first.shape[0]
        if any(a.shape[0] != n for a in arrays):
            raise InvalidArgumentError("stacked inputs must all have the same number of samples")
        return [[a[i] for a in arrays] for i in range(n)]
    return [arrays]


def save_outputs(directory: str, outputs: list[list[Any]]) -> None:
    """``output_<k>.npy`` per model output in ``directory`` (stacked when there are several samples)."""
    import numpy as np

    out_dir = Path(directory)
    out_dir.mkdir(parents=True, exist_ok=True)
    for k in range(len(outputs[0])):
        stacked = np.stack([o[k] for o in outputs]) if len(outputs) > 1 else outputs[0][k]
        np.save(out_dir / f"output_{k}.npy", stacked)


def run(args: argparse.Namespace) -> int:
    import numpy as np
    from rich.console import Console
    from rich.progress import Progress

    from .. import compile as tvm_compile
    from .. import get_registry

    console = Console(stderr=args.json, highlight=False)
    if args.model and Path(args.model).is_dir():
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
    if args.model:
        model: Any = args.model
        name = Path(args.model).stem
    else:
        from ..aot.builder import demo_model

        model, name = demo_model(), "demo"
    module = tvm_compile(model, args.target, strict=args.strict, registry=registry, name=name)
    samples = _load_inputs(args, [module.graph.tensors[t] for t in module.graph.inputs])
    if not args.json:
        console.print(f"[bold]model[/] {name}: {len(module.graph.operators)} operators; "
                      f"[bold]target[/] {module.target}")
        console.print(str(module.placement))
        console.print("memory:\n" + module.plan.report())
    outputs: list[list[Any]] = []
    with module.executor(trace=bool(args.trace), timeline=timeline) as ex:
        if len(samples) > 1:
            with Progress(console=console, transient=True) as progress:
                task = progress.add_task("running", total=len(samples))
                for sample in samples:
                    outputs.append(ex.run(sample, profile=args.profile))
                    progress.advance(task)
        else:
            outputs.append(ex.run(samples[0], profile=args.profile))
        timings = list(getattr(ex, "timings", []))
    if timeline is not None:
        timeline.write_chrome_trace(args.trace)
        registry.unregister("tvmdevice-run-trace")
    if args.output:
        save_outputs(args.output, outputs)
    if args.json:
        json.dump({"model": name, "target": str(module.target), "placement": module.placement.to_json(),
                   "memory": module.plan.to_json(), "samples": len(outputs),
                   "outputs": [o.tolist() for o in outputs[-1]],
                   "profile": [{"step": t.label, "device": t.device, "us": t.ns / 1000} for t in timings]},
                  sys.stdout)
        sys.stdout.write("\n")
        return 0
    if args.profile and timings:
        console.print("profile (last sample):")
        for t in timings:
            console.print(f"  {t.label:<34} {t.device:<10} {t.ns / 1000:10.1f} us")
        console.print(f"  {'total':<34} {'':<10} {sum(t.ns for t in timings) / 1000:10.1f} us")
    for k, value in enumerate(outputs[-1]):
        label = f"output {k}" + (f" (sample {len(outputs) - 1})" if len(outputs) > 1 else "")
        console.print(f"{label}: shape {tuple(value.shape)} {value.dtype}: {np.array2string(value, threshold=32)}")
    if args.trace:
        console.print(f"trace written to {args.trace}")
    return 0
