"""``tvmdevice header``: print the generated C header of a device or a target."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("header", help="print a device's tvm_device_<name>.h or a target's devices struct",
                       description="Print the C header generated from a device's layout, or with "
                                   "--target the tvmgen_<model>_devices struct of a target.")
    p.add_argument("device", nargs="?", help="device name (e.g. woofles)")
    p.add_argument("--target", help="target string; prints tvmgen_<model>_devices.h")
    p.add_argument("--model", default="default", help="model name for --target (default: %(default)s)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from .. import get_registry
    from ..headers import device_header, devices_header
    from ..target import Target

    if args.target:
        target = Target.parse(args.target)
        print(devices_header(args.model, [e.device_type for e in target.accelerators]), end="")
        return 0
    if not args.device:
        print("tvmdevice header: name a device or pass --target", flush=True)
        return 2
    print(device_header(get_registry().device_type(args.device)), end="")
    return 0
