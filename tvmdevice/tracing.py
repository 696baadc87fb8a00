"""Trace mode and the built-in timeline observer.

Devices created with ``trace=True`` (or with ``TVMDEVICE_TRACE=1``) route
every lifecycle and Device API call through pluggy, so that observer plugins'
wrappers see each call.  :class:`Timeline` is such an observer: it records
each call with its device, arguments, duration and outcome, and writes a
Chrome/Perfetto trace.

Usage::

    timeline = Timeline()
    registry.register(timeline, "timeline")
    dev = registry.create_device("c", trace=True)
    ...
    timeline.write_chrome_trace("trace.json")
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from .binding import DEVICE_HOOKS
from .hookspecs import hookimpl

__all__ = ["Timeline", "TraceEvent"]

LIFECYCLE_HOOKS = frozenset({"tvmdevice_init", "tvmdevice_destroy", "tvmdevice_open", "tvmdevice_close",
                             "tvmdevice_activate", "tvmdevice_deactivate"})


@dataclass
class TraceEvent:
    """One observed call."""

    hook: str
    device: str
    start_ns: int
    duration_ns: int
    args: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    category: str = "device_api"


def _summarise(value: Any) -> Any:
    """``value`` as JSON the trace viewer shows: numbers, strings, lists and objects keep their values;
    a device, device type or other named object becomes its name; anything else its ``repr``."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _summarise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_summarise(v) for v in value]
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item) and getattr(value, "shape", None) == ():
        return _summarise(item())
    name = getattr(value, "name", None)
    if isinstance(name, str):
        return name
    return repr(value)


def _make_wrapper(hook: str):
    def wrapper(self: "Timeline", **kwargs: Any):
        start = time.perf_counter_ns()
        error = ""
        try:
            return (yield)
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            device = kwargs.get("device")
            self.events.append(TraceEvent(
                hook=hook, device=getattr(device, "name", "?"), start_ns=start,
                duration_ns=time.perf_counter_ns() - start,
                args={k: _summarise(v) for k, v in kwargs.items() if k != "device"},
                error=error, category="lifecycle" if hook in LIFECYCLE_HOOKS else "device_api"))

    return wrapper


def _build_wrappers() -> dict[str, Any]:
    """One new-style wrapper per device hook, with the spec's exact argument names."""
    import inspect

    from . import hookspecs

    out = {}
    for hook in DEVICE_HOOKS:
        params = list(inspect.signature(getattr(hookspecs, hook)).parameters)
        body = _make_wrapper(hook)
        # pluggy reads argument names from the signature, so give each wrapper
        # the spec's parameters explicitly.
        src = (f"def {hook}(self, {', '.join(params)}):\n"
               f"    return (yield from _body(self, {', '.join(f'{p}={p}' for p in params)}))\n")
        ns: dict[str, Any] = {"_body": body}
        exec(src, ns)  # noqa: S102 - generated from our own hookspec names only
        out[hook] = hookimpl(wrapper=True)(ns[hook])
    return out


class Timeline:
    """Observer plugin recording lifecycle transitions and Device API calls."""

    def __init__(self) -> None:
        self.events: list[TraceEvent] = []
        self.extra: list[dict[str, Any]] = []

    def lifecycle(self) -> list[tuple[str, str]]:
        """``(device, transition)`` pairs in call order."""
        return [(e.device, e.hook.removeprefix("tvmdevice_")) for e in self.events if e.category == "lifecycle"]

    def add_span(self, name: str, category: str, start_ns: int, duration_ns: int, **args: Any) -> None:
        """Record a span that is not a hook call (kernels, copies from the executor).

        A span with a ``device`` argument goes on that device's ``kernels`` track, others on the
        executor's.
        """
        self.extra.append({"name": name, "cat": category, "start_ns": start_ns, "duration_ns": duration_ns,
                           "args": {k: _summarise(v) for k, v in args.items()}})

    def chrome_trace(self) -> dict[str, Any]:
        """The timeline as a Chrome/Perfetto ``traceEvents`` document.

        Perfetto's JSON importer keys tracks by numeric ids (a string ``tid`` falls back to the pid, merging
        tracks), so ids are numbers, named by metadata events: one process per device (``pid`` 1 is the
        executor), a ``Device API`` thread for lifecycle and calls without a stream, one thread per stream
        the calls name, and a ``kernels`` thread for the executor's kernel and copy spans.  Complete
        (``X``) events are sorted by start on each track, the enclosing event first.
        """
        tracks = _Tracks()
        events: list[dict[str, Any]] = []
        for e in self.events:
            stream = e.args.get("stream")
            thread = f"stream {stream}" if isinstance(stream, int) else "Device API"
            pid, tid = tracks.of(e.device, thread)
            events.append({"name": e.hook.removeprefix("tvmdevice_"), "cat": e.category, "ph": "X",
                           "ts": e.start_ns / 1000, "dur": e.duration_ns / 1000, "pid": pid, "tid": tid,
                           "args": {**e.args, **({"error": e.error} if e.error else {})}})
        for x in self.extra:
            device = x["args"].get("device")
            pid, tid = tracks.of(device if isinstance(device, str) else None, "kernels")
            events.append({"name": x["name"], "cat": x["cat"], "ph": "X", "ts": x["start_ns"] / 1000,
                           "dur": x["duration_ns"] / 1000, "pid": pid, "tid": tid, "args": x["args"]})
        events.sort(key=lambda ev: (ev["pid"], ev["tid"], ev["ts"], -float(ev["dur"])))
        return {"traceEvents": tracks.metadata() + events, "displayTimeUnit": "ns"}

    def write_chrome_trace(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.chrome_trace(), fh)


class _Tracks:
    """Numeric (pid, tid) per (device, thread), in order of first use, and their name metadata."""

    EXECUTOR = "executor"

    def __init__(self) -> None:
        self.pids: dict[str, int] = {self.EXECUTOR: 1}
        self.tids: dict[tuple[int, str], int] = {}

    def of(self, device: str | None, thread: str) -> tuple[int, int]:
        pid = self.pids.setdefault(device or self.EXECUTOR, len(self.pids) + 1)
        tid = self.tids.setdefault((pid, thread), len([k for k in self.tids if k[0] == pid]) + 1)
        return pid, tid

    def metadata(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for name, pid in self.pids.items():
            label = "tvmdevice executor" if name == self.EXECUTOR else f"device {name}"
            out.append({"name": "process_name", "cat": "__metadata", "ph": "M", "pid": pid, "tid": 0,
                        "args": {"name": label}})
            out.append({"name": "process_sort_index", "cat": "__metadata", "ph": "M", "pid": pid, "tid": 0,
                        "args": {"sort_index": pid}})
        for (pid, thread), tid in self.tids.items():
            out.append({"name": "thread_name", "cat": "__metadata", "ph": "M", "pid": pid, "tid": tid,
                        "args": {"name": thread}})
        return out


for _hook, _wrapper in _build_wrappers().items():
    setattr(Timeline, _hook, _wrapper)
del _hook, _wrapper
