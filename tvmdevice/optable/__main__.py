"""``python -m tvmdevice.optable``: print the README's generated operator sections, or rewrite them.

``--markdown`` prints both sections; ``--update README.md`` rewrites them in
place between their markers (run it with every project plugin installed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tvmdevice.optable.render import SECTIONS, update


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tvmdevice.optable", description=__doc__)
    p.add_argument("--markdown", action="store_true", help="print the generated sections as markdown (default)")
    p.add_argument("--update", metavar="FILE", type=Path, help="rewrite the sections between their markers in FILE")
    args = p.parse_args(argv)
    if args.update is not None:
        args.update.write_text(update(args.update.read_text()))
        return 0
    for name, generate in SECTIONS.items():
        sys.stdout.write(f"<!-- optable:{name} -->\n{generate()}<!-- /optable:{name} -->\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
