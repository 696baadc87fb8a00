"""``tvmdevice check NAME``: run the conformance suite against one installed device."""

from __future__ import annotations

import argparse
import json
import sys

#: The contracts, in report order (kept equal to tvmdevice.testing.contracts.CONTRACT_NAMES by a
#: test; spelt out so that building the CLI parser does not import the kit and numpy).
CONTRACT_NAMES = ("lifecycle", "memory", "copies", "attributes", "kernels", "layout")

_MARK = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP", "error": "ERROR"}


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="check that an installed device honours every Device API contract",
                       description="Run the tvmdevice conformance suite against one installed device type: "
                                   "lifecycle, memory, copies and streams, attributes, kernels (bit-exact with "
                                   "the host reference) and struct layout.  Exit status 0 only if every check "
                                   "passed (skipped checks do not fail).")
    p.add_argument("device", metavar="NAME", help="installed device type (see `tvmdevice plugins`)")
    p.add_argument("--contract", action="append", choices=CONTRACT_NAMES, metavar="C",
                   help=f"run only this contract (repeatable): {', '.join(CONTRACT_NAMES)}; default all")
    p.add_argument("--examples", type=int, default=None, metavar="N",
                   help="hypothesis examples per property (default 20; more finds more, slower)")
    p.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a target option for every device the checks create, as in a target string "
                        "(e.g. -o sram_kb=64); repeatable")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-isolate", dest="isolate", action="store_false",
                   help="run checks in this process instead of one forked child per check (a plugin that "
                        "crashes then ends the run instead of failing its contract)")
    p.set_defaults(func=run)


def _line(result) -> str:
    head = f"  {_MARK[result.status]:<5} {result.contract}/{result.check}"
    text = f"{head:<48} {result.seconds:7.2f} s"
    message = result.message.strip()
    if not message:
        return text
    if result.status == "passed":
        return f"{text}  {message}"
    body = "\n".join(f"          {line}" for line in message.splitlines())
    return f"{text}\n{body}"


def _summary(report) -> str:
    counts: dict[str, int] = {}
    for c in report.contracts:
        for r in c.results:
            counts[r.status] = counts.get(r.status, 0) + 1
    checks = ", ".join(f"{n} {s}" for s, n in counts.items())
    bad = [c.name for c in report.contracts if c.status == "failed"]
    verdict = "PASSED" if report.passed else f"FAILED ({', '.join(bad)})"
    ok = sum(1 for c in report.contracts if c.status == "passed")
    return (f"{report.device}: {verdict} — {ok} of {len(report.contracts)} contract(s) passed; "
            f"checks: {checks}; {report.seconds:.1f} s")


def run(args: argparse.Namespace) -> int:
    import importlib.util

    if importlib.util.find_spec("hypothesis") is None:
        print("tvmdevice: error: `tvmdevice check` generates its test cases with hypothesis, which is not "
              "installed: pip install hypothesis", file=sys.stderr)
        return 1
    from .. import get_registry
    from ..testing.contracts import DEFAULT_EXAMPLES
    from ..testing.options import parse_options
    from ..testing.runner import run_suite

    # An unknown name or a bad option is reported (exit 1) before any output.
    registry = get_registry()
    name = registry.device_type(args.device).name
    options = parse_options(args.option)
    registry.create_device(name, options)

    examples = DEFAULT_EXAMPLES if args.examples is None else args.examples
    if examples < 1:
        print("tvmdevice: error: --examples must be at least 1", file=sys.stderr)
        return 2
    if args.json:
        report = run_suite(name, contracts=args.contract, examples=examples, options=options,
                           isolate=args.isolate)
        json.dump(report.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0 if report.passed else 1
    shown = "".join(f" -{k}={v}" for k, v in options.items())
    print(f"tvmdevice check {name}{shown}: {examples} example(s) per property", flush=True)
    current: list[str] = []

    def progress(result) -> None:
        if not current or current[-1] != result.contract:
            current.append(result.contract)
            print(f"{result.contract}", flush=True)
        print(_line(result), flush=True)

    report = run_suite(name, contracts=args.contract, examples=examples, options=options,
                       on_result=progress, isolate=args.isolate)
    print(_summary(report))
    return 0 if report.passed else 1
