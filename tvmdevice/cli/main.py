"""``tvmdevice`` entry point: argument parsing, sub-command dispatch, and the one error exit.

Whatever a user can give — a missing file, a directory, a bad array, a
closed pipe — ends in one line on stderr and exit status 1 (2 for an output
path that cannot be written, found before any work starts), never a
traceback.  A traceback is still available for a real bug:
``TVMDEVICE_DEBUG=1`` re-raises.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from ..errors import TVMDeviceError

__all__ = ["main", "build_parser", "COMMANDS"]

#: The sub-command modules, in ``--help`` order.
COMMANDS = ("plugins_cmd", "info_cmd", "run_cmd", "bench_cmd", "eval_cmd", "export_cmd", "check_cmd",
            "header_cmd")


class _Version(argparse.Action):
    """``--version``: the core's version and every installed plugin distribution's (read lazily)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the core's version and each installed plugin's, then exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: object, values: object,
                 option_string: str | None = None) -> None:
        from .versions import version_lines

        print("\n".join(version_lines()))
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tvmdevice",
        description="Run int8 TFLite models on microcontroller accelerators through the tvmdevice C Device API.",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    import importlib

    for name in COMMANDS:
        try:
            command = importlib.import_module(f"{__package__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__package__}.{name}":
                raise  # a real missing dependency must not hide a command silently
            continue
        command.add_parser(sub)
    return parser


def _error(message: str) -> int:
    print(f"tvmdevice: error: {message}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from .output_paths import EXIT_STATUS, OutputPathError

    try:
        return int(args.func(args) or 0)
    except OutputPathError as exc:
        _error(str(exc))
        return EXIT_STATUS
    except TVMDeviceError as exc:
        return _error(str(exc))
    except KeyboardInterrupt:
        print("tvmdevice: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`tvmdevice plugins --json | head`): not an error of ours.  Point
        # stdout at /dev/null so that the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except OSError as exc:
        where = f" {exc.filename!r}" if exc.filename else ""
        return _error(f"{exc.strerror or exc}{where}")
    except Exception as exc:  # noqa: BLE001 - no traceback reaches a user; TVMDEVICE_DEBUG=1 shows it
        if os.environ.get("TVMDEVICE_DEBUG", "").strip() not in ("", "0"):
            raise
        return _error(f"internal error, please report it: {type(exc).__name__}: {exc} "
                      f"(TVMDEVICE_DEBUG=1 shows the traceback)")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
