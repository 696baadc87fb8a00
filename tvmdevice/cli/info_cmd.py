"""``tvmdevice info``: a model, its placement and memory plan, without running it."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule
    from ..report.timings import TimingsFile


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="show a model's inputs, operators, placement, memory and MACs (no run)",
                       description="Compile MODEL for TARGET and print, without opening a device or running: "
                                   "inputs and outputs (dtype, shape, scale, zero point), every operator with "
                                   "its device, kernel, scratch and MACs, the devices that declined it and why, "
                                   "and the memory plan per pool (activations, scratch, constants) with every "
                                   "buffer's offset, size and first and last operator. --plot draws the memory plan "
                                   "and the placement (and with --timings the cost of each operator) as "
                                   "SVG, PNG or a one-file HTML report.")
    p.add_argument("model", help=".tflite file")
    p.add_argument("--target", "-t", help="target string (default: every installed device, host 'c' last)")
    p.add_argument("--strict", action="store_true", help="refuse host fallback for operators accelerators declined")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--plot", metavar="FILE",
                   help="draw the memory plan per pool (TFLM's arena beside it) and the placement into FILE: .svg, "
                        ".png or .html (one file, no network); needs pip install 'tvmdevice[plot]'")
    p.add_argument("--timings", metavar="FILE",
                   help="with --plot: per-operator costs to draw as bars: a JSON list of {op_index, op_type, "
                        "device, value, unit}, a firmware profile's --json, or bench --json on the same target "
                        "(see docs/pictures.md)")
    p.set_defaults(func=run)


def _usage_error(message: str) -> int:
    print(f"tvmdevice: error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from ..errors import InvalidArgumentError
    from .common import compile_model, print_json
    from .model_info import format_info, model_info

    timings = None
    if args.timings and not args.plot:
        return _usage_error("--timings draws per-operator bars: it needs --plot FILE")
    if args.plot:
        from ..report import check_plot_path
        from ..report.timings import load_timings

        try:
            check_plot_path(args.plot)
            timings = load_timings(args.timings) if args.timings else None
        except InvalidArgumentError as e:
            return _usage_error(str(e))
    module, _ = compile_model(args.model, args.target, strict=args.strict)
    info = model_info(module)
    if args.plot:
        _plot(args, module, timings)
    if args.json:
        print_json(info)
    else:
        print("\n".join(format_info(info)))
    return 0


def _plot(args: argparse.Namespace, module: "CompiledModule", timings: "TimingsFile | None") -> None:
    from ..report import read_timings, write_plot
    from ..report.tflm_arena import measure_tflm_arena

    costs = read_timings(args.timings, module, timings) if timings is not None else None
    print("measuring TFLM's arena (tflite-micro, in a child process) ...", file=sys.stderr, flush=True)
    arena = measure_tflm_arena(module.source_model)
    path = write_plot(args.plot, module, costs=costs, arena=arena)
    print(f"wrote {path} (memory plan, placement" + (", per-operator cost" if costs else "") + ")", file=sys.stderr)
