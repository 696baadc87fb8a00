"""``tvmdevice`` entry point: argument parsing and sub-command dispatch."""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from .. import __version__
from ..errors import TVMDeviceError

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tvmdevice",
        description="Run int8 TFLite models on microcontroller accelerators through the tvmdevice C Device API.",
    )
    parser.add_argument("--version", action="version", version=f"tvmdevice {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    import importlib

    for name in ("plugins_cmd", "run_cmd", "export_cmd", "check_cmd", "header_cmd"):
        try:
            command = importlib.import_module(f"{__package__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{name}":
                raise  # a real missing dependency must not hide a command silently
            continue
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except TVMDeviceError as exc:
        print(f"tvmdevice: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tvmdevice: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
