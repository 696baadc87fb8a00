"""``tvmdevice info``: a model, its placement and memory plan, without running it."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="show a model's inputs, operators, placement, memory and MACs (no run)",
                       description="Compile MODEL for TARGET and print, without opening a device or running: "
                                   "inputs and outputs (dtype, shape, scale, zero point), every operator with "
                                   "its device, kernel, scratch and MACs, the devices that declined it and why, "
                                   "and the memory plan per pool (activations, scratch, constants).")
    p.add_argument("model", help=".tflite file")
    p.add_argument("--target", "-t", help="target string (default: every installed device, host 'c' last)")
    p.add_argument("--strict", action="store_true", help="refuse host fallback for operators accelerators declined")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .common import compile_model, print_json
    from .model_info import format_info, model_info

    module, _ = compile_model(args.model, args.target, strict=args.strict)
    info = model_info(module)
    if args.json:
        print_json(info)
    else:
        print("\n".join(format_info(info)))
    return 0
