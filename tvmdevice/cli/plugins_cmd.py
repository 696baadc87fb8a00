"""``tvmdevice plugins``: list device plugins, their devices and status; ``--probe`` re-probes them.

``--ops`` prints the operator table instead (:mod:`tvmdevice.optable`): every
operator and data-type variant against every installed device, as a table,
as ``--json`` or as the README's ``--markdown``.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..probe import ProbeResult


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plugins", help="list installed device plugins and their devices",
                       description="List every tvmdevice plugin found (loaded, failed or disabled) "
                                   "with its device types, memory kind, operators and options.")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")
    p.add_argument("--probe", action="store_true",
                   help="import every plugin again in a separate process with a time limit and remember the "
                        "verdicts (a plugin that crashed, exited or hung is skipped until its version changes "
                        "or it is probed again)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="with --probe: seconds each plugin's import may take (default TVMDEVICE_PROBE_TIMEOUT or 20)")
    p.add_argument("--ops", action="store_true",
                   help="print the operator table: every operator and data-type variant (int8, int16x8, "
                        "float32 -> int16...), which installed device declares it, each device's numeric options")
    p.add_argument("--markdown", action="store_true",
                   help="with --ops: print the table as markdown (the README's operator section)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import warnings

    from .. import get_registry, set_registry
    from ..errors import PluginWarning
    from ..registry import PROJECT_PLUGINS, Registry, _normalize

    registry = get_registry()
    if args.probe:
        registry = Registry(probe="always", probe_timeout=args.timeout)
        set_registry(registry)
    with warnings.catch_warnings():
        # Failures are shown in the listing itself; don't print them twice.
        warnings.simplefilter("ignore", PluginWarning)
        records = registry.records()
        if args.ops:
            return _print_ops(registry, args)
    if args.json:
        listing = [{**r.to_json(), "conflicts": {name: [o.distribution for o in others]
                                                 for name, others in registry.conflicts(r).items()}}
                   for r in records]
        json.dump({"plugins": listing}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True)
    colour = {"loaded": "green", "failed": "red", "disabled": "yellow"}
    for r in records:
        status = f"[{colour.get(r.status, 'white')}]{r.status}[/]"
        console.print(f"[bold]{escape(r.name)}[/] — {escape(r.label)}  {status}")
        if r.error:
            console.print(f"  reason:    {escape(r.error)}")
        if args.probe and r.probe is not None:
            verdict = "ok" if r.probe.safe else r.probe.verdict
            console.print(f"  probe:     {verdict} ({r.probe.seconds:.2f} s){escape(_detail(r.probe))}")
            for line in r.probe.output.splitlines() if not r.probe.safe else ():
                console.print(f"             {escape(line)}")
        for name, others in registry.conflicts(r).items():
            dists = ", ".join(o.distribution for o in others)
            console.print(f"  conflict:  {name!r} is also declared by {escape(dists)}; choose in the target "
                          f"({escape(r.distribution)}:{name}) or with TVMDEVICE_PLUGINS")
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
    console.print(f"{loaded} device type(s) available; {failed} plugin(s) failed.")
    seen = {_normalize(r.distribution) for r in records}
    for device, (dist, folder) in sorted(PROJECT_PLUGINS.items()):
        if _normalize(dist) not in seen:
            console.print(f"Not installed: {device} ({dist}): pip install ./{folder} from the tvmdevice source tree")
    return 0


def _print_ops(registry, args: argparse.Namespace) -> int:
    from ..optable import build
    from ..optable.render import markdown_operators, rich_table

    table = build(registry)
    if args.json:
        json.dump(table.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif args.markdown:
        sys.stdout.write(markdown_operators(table))
    else:
        from rich.console import Console

        Console(highlight=False).print(rich_table(table))
    return 0


def _detail(result: ProbeResult) -> str:
    return f": {result.detail}" if result.detail else ""
