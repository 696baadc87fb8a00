"""A campaign: cases shared among worker slots, findings recorded and summarized."""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from .cases import FAMILIES, CaseSource, ReplaySource
from .legs import LEGS, tflm_arena
from .minimize import minimize
from .mutators import MUTATORS
from .verdicts import hints, judge, tflm_undefined
from .workers import Worker

DEFAULT_TARGETS = ["c", "cmsis-nn, c", "woofles, c"]


@dataclasses.dataclass
class Campaign:
    args: argparse.Namespace
    targets: list[str]
    source: CaseSource | ReplaySource
    out: Path
    done: int = 0
    next_case: int = 0
    tvm_hist: dict[str, Counter] = dataclasses.field(default_factory=lambda: defaultdict(Counter))
    tflm_hist: Counter = dataclasses.field(default_factory=Counter)
    findings: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    finding_counts: Counter = dataclasses.field(default_factory=Counter)
    both_accept: int = 0
    #: Saved findings by class and file features (see :func:`hints`).
    signatures: Counter = dataclasses.field(default_factory=Counter)
    #: Cases TFLM crashed or hung on that tvmdevice ran (no comparison possible).
    tflm_crash_tvm_runs: int = 0
    #: Cases the export leg ran, and cases by mutation family (``structure:<mutator>``, ``schema``, ``bytes``).
    exported: int = 0
    families: Counter = dataclasses.field(default_factory=Counter)
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    #: set by Ctrl-C or SIGTERM: no new case starts, the summary is still written
    stop: threading.Event = dataclasses.field(default_factory=threading.Event)

    def take(self) -> int | None:
        with self.lock:
            if self.next_case >= self.args.cases or self.stop.is_set():
                return None
            self.next_case += 1
            return self.next_case - 1

    def run_case(self, tvm_w: Worker, tflm_w: Worker, data: bytes, case_seed: int
                 ) -> tuple[tuple[str, Any], tuple[str, Any]]:
        export = bool(self.args.export_every) and isinstance(self.source, CaseSource) and \
            self.source.exported(case_seed)
        tvm = tvm_w.call(dict(data=data, targets=self.targets, seed=case_seed, frames=self.args.frames,
                              export=export), self.args.time_limit * (4 if export else 1))
        ok = tvm[0] == "ok"
        shapes = tvm[1].get("shapes") if ok else None
        tensor_bytes = tvm[1].get("tensor_bytes") if ok else None
        frames = self.args.frames if ok and tvm[1].get("stateful") else 1
        if ok and "export" in tvm[1]:
            with self.lock:
                self.exported += 1
        arena = tflm_arena(data, tensor_bytes, self.args.mem_limit)
        tflm = tflm_w.call(dict(data=data, shapes=shapes, seed=case_seed, arena=arena, frames=frames),
                           self.args.time_limit)
        return tvm, tflm

    def slot(self, k: int, ctx: Any) -> None:
        tvm_w = Worker("tvm", self.args.mem_limit, ctx)
        tflm_w = Worker("tflm", self.args.mem_limit, ctx)
        try:
            while (i := self.take()) is not None:
                with self.lock:
                    data, how = self.source.case(i)
                    seed = self.source.input_seed(i)
                tvm, tflm = self.run_case(tvm_w, tflm_w, data, seed)
                findings, classes, tflm_class = judge(tvm, tflm, self.targets)
                if any(f.startswith(("mismatch", "tflm-refuses")) for f in findings):
                    why = tflm_undefined(data)
                    # Weights TFLM does not read can also make it refuse the file (a constant operand
                    # it finds empty): the same cause, not a disagreement.
                    explained = ("mismatch", "stateful-mismatch", "tflm-refuses") if why and "Buffer.offset" in why \
                        else ("mismatch", "stateful-mismatch") if why else ()
                    if explained and any(f.startswith(explained) for f in findings):
                        findings = [f for f in findings if not f.startswith(explained)]
                        tflm_class = "tflm-undefined"
                if findings and self.args.minimize and all(
                        f.startswith(("tflm-refuses", "mismatch", "stateful-mismatch", "raw-exception"))
                        for f in findings):
                    data = self.minimized(tvm_w, tflm_w, data, seed, {f.split(":")[0] for f in findings})
                self.record(i, data, how, findings, classes, tflm_class, tvm, tflm)
        finally:
            tvm_w.close()
            tflm_w.close()

    def minimized(self, tvm_w: Worker, tflm_w: Worker, data: bytes, case_seed: int, kinds: set[str]) -> bytes:
        def still(candidate: bytes) -> bool:
            got, _, _ = judge(*self.run_case(tvm_w, tflm_w, candidate, case_seed), self.targets)
            return bool(kinds & {f.split(":")[0] for f in got})

        return minimize(data, still, self.args.minimize)

    def record(self, i: int, data: bytes, how: str, findings: list[str], classes: dict[str, str],
               tflm_class: str, tvm: tuple[str, Any], tflm: tuple[str, Any]) -> None:
        with self.lock:
            self.done += 1
            for family in family_of(how):
                self.families[family] += 1
            for t, c in classes.items():
                self.tvm_hist[t][c] += 1
            self.tflm_hist[tflm_class] += 1
            if tflm_class == "ok" and any(c == "ok" for c in classes.values()):
                self.both_accept += 1
            if tflm_class.startswith("tflm-"):
                findings = findings + [tflm_class]  # saved for the record, not a disagreement
                if any(c == "ok" for c in classes.values()):
                    self.tflm_crash_tvm_runs += 1
            by_kind: dict[str, list[str]] = defaultdict(list)
            for f in findings:
                by_kind[f.split(":")[0]].append(f)
            for kind, group in by_kind.items():
                f = "; ".join(group)
                self.finding_counts[kind] += 1
                if self.finding_counts[kind] > self.args.keep:
                    continue  # counted, not saved
                digest = hashlib.sha1(data).hexdigest()[:10]
                path = self.out / kind / f"case{i:07d}-{digest}.tflite"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                signature = f"{kind} [{', '.join(hints(data)) or 'no hint'}]"
                self.signatures[signature] += 1
                note = {"case": i, "finding": f, "hints": signature, "mutation": how, "classes": classes,
                        "tflm": tflm_class,
                        "tvm_messages": {t: r.get("message") for t, r in (tvm[1] or {}).get("targets", {}).items()}
                        if tvm[0] == "ok" else tvm, "tflm_message": tflm[1].get("message")
                        if tflm[0] == "ok" else tflm}
                path.with_suffix(".json").write_text(json.dumps(note, indent=1, default=str))
                if len(self.findings) < 2000:
                    self.findings.append({"finding": f, "file": str(path), "mutation": how})


def family_of(how: str) -> list[str]:
    """The mutation families a case's description names: ``structure:<mutator>`` for each structure
    step, else ``schema`` or ``bytes`` (``replay`` for a replayed file)."""
    rest = how.split(" ", 1)[-1]
    if rest.startswith("structure:"):
        return sorted({"structure:" + step.split("(")[0] for step in rest[len("structure:"):].split("),") if step})
    for family in ("schema", "bytes", "replay", "structure"):
        if rest.startswith(family) or how.startswith(family):
            return [family]
    return ["other"]


def help_epilog() -> str:
    """``--help``'s list of mutation families, structure mutators and legs, from their registries."""
    lines = ["mutation families (share of cases): " + ", ".join(f"{k} {v:.0%}" for k, v in FAMILIES.items()),
             "structure mutators:"]
    lines += [f"  {m.name:<20} {m.about}" for m in MUTATORS]
    lines.append("legs:")
    lines += [f"  {name:<20} {about}" for name, about in LEGS.items()]
    lines.append("finding classes: crash, hang, raw-exception, empty-message, memory-error, mismatch, tflm-refuses, "
                 "stateful-mismatch, export-mismatch, export-error (recorded, not disagreements: tflm-crash, "
                 "tflm-hang, tflm-undefined)")
    return "\n".join(lines)


def installed_targets(requested: list[str]) -> list[str]:
    import tvmdevice

    ok = []
    for t in requested:
        try:
            tvmdevice.compile(_probe_model(), target=t)
            ok.append(t)
        except Exception as e:  # noqa: BLE001 - a target not installed is skipped
            print(f"skipping target {t!r}: {type(e).__name__}: {e}", file=sys.stderr)
    return ok


def _probe_model() -> bytes:
    from tvmdevice.aot.builder import single_op_model

    return single_op_model("ADD")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(sys.modules[__package__].__doc__ or "").split("\n\n")[0],
                                 epilog=help_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--targets", default=";".join(DEFAULT_TARGETS),
                    help="targets separated by ';' (default: %(default)s; uninstalled ones are skipped)")
    ap.add_argument("--time-limit", type=float, default=20.0, help="seconds per case per engine")
    ap.add_argument("--mem-limit", type=int, default=2048, help="MB of address space per worker")
    ap.add_argument("--out", type=Path, default=Path("fuzz-out"))
    ap.add_argument("--keep", type=int, default=300, metavar="N", help="case files saved per finding class")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON (also written to OUT)")
    ap.add_argument("--minimize", type=float, default=0.0, metavar="SEC",
                    help="greedy byte-removal budget per disagreement (0: off)")
    ap.add_argument("--replay", type=Path, nargs="+", metavar="FILE",
                    help="run these case files instead of generated cases (triage, regression)")
    ap.add_argument("--frames", type=int, default=3, metavar="N",
                    help="repeated-runs leg: frames a stateful model runs in order in both engines "
                         "(default: %(default)s)")
    ap.add_argument("--export-every", type=int, default=50, metavar="K",
                    help="export leg: 1 in K cases the c target runs is exported and run natively (0: off; "
                         "default: %(default)s)")
    args = ap.parse_args(argv)
    if args.frames < 1 or args.export_every < 0:
        ap.error("--frames must be at least 1 and --export-every at least 0")
    if args.replay:
        args.cases = len(args.replay)

    targets = installed_targets([t.strip() for t in args.targets.split(";") if t.strip()])
    if not targets:
        print("no target installed", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    source = ReplaySource(args.replay) if args.replay else CaseSource(args.seed, args.export_every)
    campaign = Campaign(args, targets, source, args.out)
    # Workers are forked from a server that imported the engines once, so a
    # worker replaced after a crash is ready in milliseconds.
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["numpy", "tvmdevice", "tflite_micro.python.tflite_micro.runtime"])
    start = time.monotonic()
    threads = [threading.Thread(target=campaign.slot, args=(k, ctx), daemon=True) for k in range(args.workers)]
    for th in threads:
        th.start()
    def stop(*_: Any) -> None:
        # no output here: a handler writing to stderr while the main thread is inside a write to it raises
        # "reentrant call" and the campaign would end without its summary; _progress says it is stopping
        campaign.stop.set()

    # SIGINT too: a shell that starts the campaign in the background (`&`) has it ignored otherwise.
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    _progress(campaign, threads, start)
    elapsed = time.monotonic() - start
    summary = {
        "cases": campaign.done, "complete": campaign.done == args.cases, "seconds": round(elapsed, 1),
        "cases_per_s": round(campaign.done / elapsed, 2),
        "workers": args.workers, "seed": args.seed, "targets": targets, "both_accept": campaign.both_accept,
        "tflm_crash_while_tvmdevice_runs": campaign.tflm_crash_tvm_runs, "exported": campaign.exported,
        "frames": args.frames, "export_every": args.export_every, "mutations": dict(campaign.families.most_common()),
        "tvmdevice_classes": {t: dict(c.most_common()) for t, c in campaign.tvm_hist.items()},
        "tflm_classes": dict(campaign.tflm_hist.most_common()),
        "findings": dict(campaign.finding_counts),
        "saved_by_signature": dict(campaign.signatures.most_common()), "finding_files": campaign.findings[:200],
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        _print_summary(summary)
    bad = {k for k in campaign.finding_counts if not k.startswith(("tflm-crash", "tflm-hang", "tflm-undefined"))}
    return 1 if bad else 0


def _progress(campaign: Campaign, threads: list[threading.Thread], start: float) -> None:
    def line() -> str:
        rate = campaign.done / max(1e-9, time.monotonic() - start)
        found = ", ".join(f"{k}={v}" for k, v in sorted(campaign.finding_counts.items())) or "none"
        return f"{campaign.done}/{campaign.args.cases} cases, {rate:.1f}/s, findings: {found}"

    try:
        from rich.progress import Progress
    except ImportError:
        Progress = None  # noqa: N806
    if Progress is not None and sys.stderr.isatty():
        with Progress(transient=False) as bar:
            task = bar.add_task("fuzz", total=campaign.args.cases)
            while any(th.is_alive() for th in threads):
                time.sleep(0.5)
                stopping = " (stopping: finishing the cases in flight)" if campaign.stop.is_set() else ""
                bar.update(task, completed=campaign.done, description=line() + stopping)
        return
    last = 0.0
    announced = False
    while any(th.is_alive() for th in threads):
        time.sleep(0.5)
        if campaign.stop.is_set() and not announced:
            print("stopping: finishing the cases in flight", file=sys.stderr, flush=True)
            announced = True
        if time.monotonic() - last > 10:
            print(line(), file=sys.stderr, flush=True)
            last = time.monotonic()
    print(line(), file=sys.stderr, flush=True)


def _print_summary(s: dict[str, Any]) -> None:
    print(f"cases: {s['cases']} in {s['seconds']} s ({s['cases_per_s']} cases/s), both accept: {s['both_accept']}")
    for t, hist in s["tvmdevice_classes"].items():
        print(f"tvmdevice {t!r}: " + ", ".join(f"{k}={v}" for k, v in hist.items()))
    print("tflite-micro: " + ", ".join(f"{k}={v}" for k, v in s["tflm_classes"].items()))
    print("findings: " + (", ".join(f"{k}={v}" for k, v in s["findings"].items()) or "none"))


if __name__ == "__main__":
    sys.exit(main())
