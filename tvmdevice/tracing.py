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
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    name = getattr(value, "name", None)
    return name if isinstance(name, str) else type(value).__name__


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
        """Record a span that is not a hook call (kernels, copies from the executor)."""
        self.extra.append({"name": name, "cat": category, "ph": "X", "ts": start_ns / 1000,
                           "dur": duration_ns / 1000, "pid": 1, "tid": 1, "args": args})

    def chrome_trace(self) -> dict[str, Any]:
        """The timeline as a Chrome/Perfetto ``traceEvents`` document."""
        events = [
            {"name": e.hook.removeprefix("tvmdevice_"), "cat": e.category, "ph": "X",
             "ts": e.start_ns / 1000, "dur": e.duration_ns / 1000, "pid": 1, "tid": e.device,
             "args": {**e.args, **({"error": e.error} if e.error else {})}}
            for e in self.events
        ]
        return {"traceEvents": events + self.extra, "displayTimeUnit": "ns"}

    def write_chrome_trace(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.chrome_trace(), fh)


for _hook, _wrapper in _build_wrappers().items():
    setattr(Timeline, _hook, _wrapper)
del _hook, _wrapper
