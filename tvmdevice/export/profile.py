"""What each call of an exported model's run costs on a Cortex-M: instructions between profiling marks.

An export built with ``TVMD_FW_PROFILE`` marks each call of ``tvmgen_<model>_run`` (each Activate,
kernel, copy and Deactivate, :meth:`.model.Call.marked`): mark ``2k`` before call ``k`` of
``metadata.json``'s table of calls, ``2k + 1`` after it.  The project's QEMU plugin records the marks
of the measured run (:attr:`tvmdevice.firmware.RunResult.marks`) and the instructions inside the marks
themselves apart, so that the lines of a :class:`FirmwareProfile` (each call, the runtime outside the
calls, the marks) add up to the measured run's instructions exactly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError
from ..firmware.errors import FirmwareError
from ..firmware.run import RunResult

__all__ = ["CallCost", "FirmwareProfile", "profile_from_run", "RUNTIME", "MARKS"]

#: The line of the instructions run outside every call (the run function's own code).
RUNTIME = "runtime (outside calls)"
#: The line of the instructions inside the profiling marks (absent from an unprofiled build).
MARKS = "profiling marks"


@dataclass(frozen=True)
class CallCost:
    """One call of the run: what it is and the instructions from its mark before to its mark after."""

    #: index in metadata.json's ``calls``
    call: int
    #: the C function called
    function: str
    #: e.g. ``op3 CONV_2D``, ``copy tensor 5 host -> woofles``, ``Activate``
    label: str
    #: the device it ran on or for (``""`` when none)
    device: str
    #: instructions executed from the call's start to its end
    instructions: int
    #: instructions of the measured run (outside marks) before it began
    start: int
    #: the operator's index for a kernel call, else None
    operator: int | None = None
    #: the operator's type for a kernel call, else None
    op_type: str | None = None


@dataclass(frozen=True)
class FirmwareProfile:
    """The measured run of an export, call by call, on one CPU."""

    cpu: str
    calls: tuple[CallCost, ...]
    #: every instruction of the measured run (as counted in the profiled build)
    total: int
    #: instructions inside the profiling marks
    marks: int

    @property
    def runtime(self) -> int:
        """Instructions outside every call and mark: the run function's own."""
        return self.total - self.marks - sum(c.instructions for c in self.calls)

    def lines(self) -> list[tuple[str, str, int]]:
        """(what, device, instructions) for each call, then the runtime and the marks: they sum to :attr:`total`."""
        return [*((c.label, c.device, c.instructions) for c in self.calls), (RUNTIME, "", self.runtime),
                (MARKS, "", self.marks)]

    def per_device(self) -> dict[str, int]:
        """Instructions in each device's calls (kernels, copies, lifecycle), in order of first call."""
        out: dict[str, int] = {}
        for c in self.calls:
            out[c.device or "(none)"] = out.get(c.device or "(none)", 0) + c.instructions
        return out

    def operators(self) -> list[dict[str, Any]]:
        """The kernel calls as ``{op_index, op_type, device, value, unit}`` (for ``--json``'s ``operators``)."""
        return [{"op_index": c.operator, "op_type": c.op_type, "device": c.device, "value": c.instructions,
                 "unit": "instructions"} for c in self.calls if c.operator is not None]

    def to_json(self) -> dict[str, Any]:
        return {
            "cpu": self.cpu, "total": self.total, "runtime": self.runtime, "marks": self.marks,
            "calls": [{"call": c.call, "function": c.function, "label": c.label, "device": c.device,
                       "instructions": c.instructions, "start": c.start} for c in self.calls],
            "devices": self.per_device(),
        }

    def chrome_trace(self) -> dict[str, Any]:
        """A Chrome/Perfetto trace of the measured run with instructions as time (1 us = 1 instruction):
        one track per device, the run itself on the first."""
        tracks: dict[str, int] = {"run": 1}
        for c in self.calls:
            tracks.setdefault(c.device or "(none)", len(tracks) + 1)
        events: list[dict[str, Any]] = [
            {"name": "process_name", "ph": "M", "pid": 1, "tid": 0,
             "args": {"name": f"firmware on {self.cpu} (1 us = 1 instruction)"}}]
        events += [{"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": name}}
                   for name, tid in tracks.items()]
        events.append({"name": "run", "cat": "run", "ph": "X", "pid": 1, "tid": 1, "ts": 0,
                       "dur": self.total - self.marks,
                       "args": {"instructions": self.total, "runtime": self.runtime, "marks": self.marks}})
        for c in self.calls:
            cat = "kernel" if c.operator is not None else "copy" if c.label.startswith("copy") else "lifecycle"
            events.append({"name": c.label, "cat": cat, "ph": "X", "pid": 1, "tid": tracks[c.device or "(none)"],
                           "ts": c.start, "dur": c.instructions,
                           "args": {"instructions": c.instructions, "function": c.function, "call": c.call}})
        return {"traceEvents": events, "displayTimeUnit": "ns",
                "otherData": {"unit": "instructions", "cpu": self.cpu}}

    def write_chrome_trace(self, path: "str | Path") -> None:
        """Write :meth:`chrome_trace` to ``path`` (``InvalidArgumentError`` when it cannot be written)."""
        try:
            Path(path).write_text(json.dumps(self.chrome_trace()))
        except OSError as exc:
            raise InvalidArgumentError(f"cannot write the trace {str(path)!r}: {exc.strerror or exc}") from None


#: The lifecycle steps a call of run can be (Activate, Deactivate), named as the C Device API names them.
_LIFECYCLE = ("Deactivate", "Activate")


def _describe(call: dict[str, Any]) -> tuple[str, str, int | None, str | None]:
    """(label, device, operator, type) of one entry of metadata.json's calls."""
    if "operator" in call:
        return f"op{call['operator']} {call['type']}", call["device"], call["operator"], call["type"]
    if "tensor" in call:
        device = call["dst"] if call["src"] == "host" else call["src"]
        return f"copy tensor {call['tensor']} {call['src']} -> {call['dst']}", device, None, None
    symbol = str(call["call"])
    step = next((s for s in _LIFECYCLE if symbol.endswith(s)), symbol)
    return step, call.get("device", ""), None, None


def profile_from_run(calls: Sequence[dict[str, Any]], result: RunResult, cpu: str) -> FirmwareProfile:
    """The measured run of ``result`` call by call (``calls``: metadata.json's table).

    A run without calls (a model of views only) has no marks: its profile is the runtime alone.

    :raises FirmwareError: the run was not counted (the host), or its marks do not pair up as the
        generated run places them (each call's before-mark directly followed by its after-mark).
    """
    if result.region_instructions is None:
        raise FirmwareError(f"the run on {cpu} counted no instructions: profiling needs a Cortex-M under QEMU")
    marks = result.marks
    if len(marks) % 2:
        raise FirmwareError(f"the profiled run on {cpu} recorded an odd number of marks ({len(marks)})")
    costs = []
    for (before, start), (after, end) in zip(marks[::2], marks[1::2]):
        k = before // 2
        if before % 2 or after != before + 1 or k >= len(calls):
            raise FirmwareError(f"the profiled run on {cpu} recorded marks {before}, {after} where a call's "
                                "pair (2k, 2k + 1) was expected")
        label, device, operator, op_type = _describe(calls[k])
        costs.append(CallCost(k, str(calls[k]["call"]), label, device, end - start, start, operator, op_type))
    return FirmwareProfile(cpu, tuple(costs), result.region_instructions, result.mark_instructions)
