"""Run conformance checks against one device type and collect a report.

:func:`execute_check` runs one check and raises what it found (the pytest
suite uses it); :func:`run_suite` runs whole contracts, never raising for a
device's failures, and returns a :class:`ConformanceReport` that
``tvmdevice check`` prints as text or JSON.
"""

from __future__ import annotations

import signal
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from ..errors import LeakWarning
from .contracts import CONTRACTS, DEFAULT_EXAMPLES, CheckContext, ContractSkipped, ContractViolation

__all__ = ["CheckResult", "ContractReport", "ConformanceReport", "execute_check", "run_suite", "violation_in",
           "can_isolate"]

PASSED, FAILED, SKIPPED, ERROR = "passed", "failed", "skipped", "error"


@dataclass(frozen=True)
class CheckResult:
    """The outcome of one check.

    :ivar status: ``passed``, ``failed`` (a contract violation), ``skipped``
        (with the reason) or ``error`` (the check itself crashed: a kit bug or
        a device misbehaving in a way the check did not foresee).
    :ivar message: the violation, skip reason or error; for passes, the check's note.
    """

    contract: str
    check: str
    status: str
    message: str
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "status": self.status, "message": self.message,
                "seconds": round(self.seconds, 3)}


@dataclass
class ContractReport:
    """Every check of one contract."""

    name: str
    doc: str
    results: list[CheckResult] = field(default_factory=list)

    @property
    def status(self) -> str:
        """``failed`` if any check failed or crashed, ``skipped`` if all skipped, else ``passed``."""
        statuses = {r.status for r in self.results}
        if statuses & {FAILED, ERROR}:
            return FAILED
        if statuses and statuses <= {SKIPPED}:
            return SKIPPED
        return PASSED

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.results)

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    def to_json(self) -> dict[str, Any]:
        return {"contract": self.name, "status": self.status, "seconds": round(self.seconds, 3),
                "counts": {s: self.count(s) for s in (PASSED, FAILED, SKIPPED, ERROR)},
                "checks": [r.to_json() for r in self.results]}


@dataclass
class ConformanceReport:
    """The suite's verdict on one device type."""

    device: str
    examples: int
    contracts: list[ContractReport] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True when no check failed or crashed (skips do not count against a device)."""
        return all(c.status != FAILED for c in self.contracts)

    @property
    def seconds(self) -> float:
        return sum(c.seconds for c in self.contracts)

    def to_json(self) -> dict[str, Any]:
        return {"device": self.device, "passed": self.passed, "examples": self.examples,
                "seconds": round(self.seconds, 3), "contracts": [c.to_json() for c in self.contracts]}


def violation_in(exc: BaseException) -> ContractViolation | None:
    """The :class:`ContractViolation` ``exc`` is or wraps (hypothesis groups flaky failures)."""
    if isinstance(exc, ContractViolation):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = violation_in(inner)
        if found is not None:
            return found
    return None


def execute_check(ctx: CheckContext, contract: str, check: str) -> str | None:
    """Run one check; return its note, or raise what it found.

    :raises ContractViolation: the device broke the contract.
    :raises ContractSkipped: the check does not apply.
    :raises KeyError: no such contract or check.
    """
    spec = CONTRACTS[contract].check(check)
    ctx.contract, ctx.check = contract, check
    try:
        with warnings.catch_warnings():
            # Leaks a check provokes on purpose are asserted where they happen;
            # cleanup after a violation must not add noise.
            warnings.simplefilter("ignore", LeakWarning)
            return spec.function(ctx)
    except BaseException as exc:
        found = violation_in(exc)
        if found is None or found is exc:
            raise
        raise found from exc
    finally:
        ctx.release_all()


def _with_notes(exc: BaseException) -> str:
    """The message plus what hypothesis attached (the falsifying steps)."""
    notes = [n for n in getattr(exc, "__notes__", ()) if n.strip()]
    return "\n".join([str(exc), *notes])


def _outcome(ctx: CheckContext, contract: str, check: str) -> tuple[str, str]:
    """(status, message) of one check run in this process."""
    try:
        note = execute_check(ctx, contract, check)
        return PASSED, note or ""
    except ContractViolation as exc:
        return FAILED, _with_notes(exc)
    except ContractSkipped as exc:
        return SKIPPED, str(exc)
    except Exception as exc:  # noqa: BLE001 - report, keep checking the other contracts
        where = "".join(traceback.format_exception(exc, limit=-3)).strip()
        return ERROR, f"the check crashed: {type(exc).__name__}: {exc}\n{where}"


def _child(conn: Any, ctx: CheckContext, contract: str, check: str) -> None:
    import faulthandler

    # A crash is reported by the parent with what was running; an inherited
    # faulthandler (pytest enables one) would add a stack dump of the kit.
    faulthandler.disable()
    ctx.progress = lambda what: conn.send(("progress", what))
    conn.send(("result", _outcome(ctx, contract, check)))
    conn.close()


def _signal_name(exitcode: int | None) -> str:
    if exitcode is None or exitcode >= 0:
        return f"exit status {exitcode}"
    try:
        return signal.Signals(-exitcode).name
    except ValueError:
        return f"signal {-exitcode}"


def _outcome_isolated(ctx: CheckContext, contract: str, check: str) -> tuple[str, str]:
    """(status, message) of one check run in a forked child, so a crashing plugin is reported, not fatal.

    A plugin's C code that reads or writes outside its buffers kills the
    process; the child's death becomes a violation of the contract being
    checked, naming what was running at the time.
    """
    import multiprocessing

    mp = multiprocessing.get_context("fork")
    receiver, sender = mp.Pipe(duplex=False)
    proc = mp.Process(target=_child, args=(sender, ctx, contract, check), daemon=True)
    proc.start()
    sender.close()
    doing, outcome = "", None
    while True:
        try:
            kind, payload = receiver.recv()
        except EOFError:
            break
        if kind == "progress":
            doing = payload
        else:
            outcome = payload
    proc.join()
    receiver.close()
    if outcome is not None:
        return outcome
    ctx.contract, ctx.check = contract, check
    where = f" while {doing}" if doing else ""
    try:
        ctx.fail(f"the process died with {_signal_name(proc.exitcode)}{where}; C code must never read or "
                 f"write outside its buffers (validate every bound in Python before entering C)")
    except ContractViolation as exc:
        return FAILED, str(exc)
    raise AssertionError("unreachable")  # pragma: no cover - ctx.fail always raises


def can_isolate() -> bool:
    """Whether checks can run in forked children on this platform."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def run_suite(device: str, *, registry: Any = None, contracts: Iterable[str] | None = None,
              examples: int = DEFAULT_EXAMPLES, options: dict[str, Any] | None = None,
              on_result: Callable[[CheckResult], None] | None = None,
              isolate: bool = False) -> ConformanceReport:
    """Run the chosen contracts (default: all) against ``device``.

    :param registry: where to find the device; default the process-wide one.
    :param examples: hypothesis examples per property.
    :param options: target options for the devices the checks create.
    :param on_result: called after each check (progress output).
    :param isolate: run each check in a forked child process, so that a
        plugin crashing the interpreter fails its contract instead of ending
        the run (ignored where ``fork`` is unavailable).
    :raises UnknownDeviceError: ``device`` is not installed (before anything runs).
    :raises KeyError: an unknown contract name.
    """
    if registry is None:
        from .. import get_registry

        registry = get_registry()
    name = registry.device_type(device).name
    chosen = list(contracts) if contracts else list(CONTRACTS)
    unknown = [c for c in chosen if c not in CONTRACTS]
    if unknown:
        raise KeyError(f"unknown contract(s) {unknown}; contracts: {', '.join(CONTRACTS)}")
    report = ConformanceReport(name, examples)
    for contract_name in chosen:
        contract = CONTRACTS[contract_name]
        section = ContractReport(contract.name, contract.doc)
        report.contracts.append(section)
        for check in contract.checks:
            ctx = CheckContext(name, registry, dict(options or {}), examples)
            start = time.perf_counter()
            if isolate and can_isolate():
                status, message = _outcome_isolated(ctx, contract.name, check.name)
            else:
                status, message = _outcome(ctx, contract.name, check.name)
            result = CheckResult(contract.name, check.name, status, message, time.perf_counter() - start)
            section.results.append(result)
            if on_result is not None:
                on_result(result)
    return report
