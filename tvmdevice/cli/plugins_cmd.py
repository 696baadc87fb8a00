"""``tvmdevice plugins``: list device plugins, their devices and status."""

from __future__ import annotations

import argparse
import json
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plugins", help="list installed device plugins and their devices",
                       description="List every tvmdevice plugin found (loaded, failed or disabled) "
                                   "with its device types, memory kind, operators and options.")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import warnings

    from .. import get_registry
    from ..errors import PluginWarning

    with warnings.catch_warnings():
        # Failures are shown in the listing itself; don't print them twice.
        warnings.simplefilter("ignore", PluginWarning)
        records = get_registry().records()
    if args.json:
        json.dump({"plugins": [r.to_json() for r in records]}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False)
    colour = {"loaded": "green", "failed": "red", "disabled": "yellow"}
    for r in records:
        status = f"[{colour.get(r.status, 'white')}]{r.status}[/]"
        console.print(f"[bold]{escape(r.name)}[/] — {escape(r.label)}  {status}")
        if r.error:
            console.print(f"  reason:    {escape(r.error)}")
        for t in r.device_types:
            host = " (host)" if t.is_host else ""
            aliases = f"  aliases: {', '.join(t.aliases)}" if t.aliases else ""
            console.print(f"  device:    [bold cyan]{t.name}[/]{host}{aliases}")
            if t.description:
                console.print(f"  about:     {escape(t.description)}")
            console.print(f"  memory:    {t.memory.value}; struct {t.layout.c_type} ({t.layout.size} bytes)")
            console.print(f"  operators: {', '.join(sorted(t.operators)) or '-'}")
            for i, o in enumerate(t.options):
                label = "  options:   " if i == 0 else "             "
                bounds = f", {o.bounds}" if o.bounds else ""
                console.print(f"{label}-{o.name} ({o.type_name}, default {o.default!r}{bounds}) {escape(o.help)}")
        console.print()
    loaded = sum(len(r.device_types) for r in records if r.status == "loaded")
    failed = sum(1 for r in records if r.status == "failed")
    console.print(f"{loaded} device type(s) available; {failed} plugin(s) failed. "
                  "More devices: pip install tvmdevice-<name>")
    return 0
