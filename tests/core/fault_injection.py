"""Fault injection for the teardown tests: the k-th call of one device hook fails.

:func:`inject` wraps every hook a device calls through its
:class:`~tvmdevice.binding.Binding` (lifecycle, memory, copies, streams — the
same path for every plugin), counts the calls per hook over all devices, and
makes the k-th call of the chosen hook raise.  With ``after=True`` the
plugin's implementation runs first (the hook did its work, then reported a
failure), otherwise it never runs.  It also records every device created,
so a test can check that each one ends destroyed with nothing tracked —
even when the executor that created them never came to exist.
"""

from __future__ import annotations

import warnings
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from tvmdevice import State
from tvmdevice.binding import Binding
from tvmdevice.errors import LeakWarning, TeardownError

#: What an injected fault raises, by name.
ERRORS: dict[str, Callable[[str], BaseException]] = {
    "runtime": lambda what: RuntimeError(f"injected fault in {what}"),
    "memory": lambda what: MemoryError(f"injected fault in {what}"),
    "interrupt": lambda what: KeyboardInterrupt(f"injected fault in {what}"),
}


@dataclass
class Injection:
    """Which call fails, and what the run saw."""

    hook: str | None = None
    k: int = 0
    error: str = "runtime"
    after: bool = False
    persistent: bool = False
    calls: Counter = field(default_factory=Counter)
    devices: list = field(default_factory=list)
    fired: bool = False

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            self.calls[name] += 1
            n = self.calls[name]
            if name != self.hook or not (n == self.k or (self.persistent and n > self.k)):
                return fn(*args)
            self.fired = True
            if self.after:
                fn(*args)
            raise ERRORS[self.error](f"{name} (call {self.k})")

        return call


@contextmanager
def inject(hook: str | None = None, k: int = 0, error: str = "runtime", after: bool = False,
           persistent: bool = False) -> Iterator[Injection]:
    """Count every hook call; fail the ``k``-th call of ``hook`` (no fault when ``hook`` is None).

    :param error: a key of :data:`ERRORS`.
    :param after: run the plugin's implementation, then fail.
    :param persistent: fail every call from the ``k``-th on (a hook that is broken for good).
    """
    plan = Injection(hook, k, error, after, persistent)
    original_hook, original_bind = Binding.hook, Binding.bind

    def hook_(binding: Binding, name: str) -> Callable[..., Any]:
        return plan.wrap(name, original_hook(binding, name))

    def bind(binding: Binding, device: Any) -> None:
        plan.devices.append(device)
        original_bind(binding, device)

    Binding.hook, Binding.bind = hook_, bind  # type: ignore[method-assign]
    try:
        yield plan
    finally:
        Binding.hook, Binding.bind = original_hook, original_bind  # type: ignore[method-assign]


@dataclass
class Outcome:
    """What one run of :func:`executor_scenario` raised, warned and returned."""

    raised: list[BaseException]
    leak_warnings: list[str]
    outputs: list[list[Any]]

    def errors(self) -> list[BaseException]:
        """Every error, flattened: raised ones, the errors of a TeardownError, attached cleanup errors."""
        seen: list[BaseException] = []

        def visit(exc: BaseException) -> None:
            if any(exc is s for s in seen):
                return
            seen.append(exc)
            for inner in getattr(exc, "errors", ()) if isinstance(exc, TeardownError) else ():
                visit(inner)
            for inner in getattr(exc, "cleanup_errors", ()):
                visit(inner)

        for exc in self.raised:
            visit(exc)
        return seen


def executor_scenario(module: Any, inputs: list[Any], runs: int = 2) -> Outcome:
    """Create an executor, run it ``runs`` times, close it, close it again; record what happened.

    The second close must be a no-op whatever the first one raised.
    """
    raised: list[BaseException] = []
    outputs: list[list[Any]] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ex = None
        try:
            ex = module.executor()
            for _ in range(runs):
                outputs.append(ex.run(inputs))
        except BaseException as exc:  # noqa: BLE001 - recorded for the test to judge
            raised.append(exc)
        if ex is not None:
            try:
                ex.close()
            except BaseException as exc:  # noqa: BLE001
                raised.append(exc)
            ex.close()  # idempotent: nothing left to do, nothing raised
    leaks = [str(w.message) for w in caught if issubclass(w.category, LeakWarning)]
    return Outcome(raised, leaks, outputs)


def assert_released(devices: list[Any]) -> None:
    """Every device destroyed, not faulted, with no tracked block or stream and an empty plugin heap."""
    assert devices, "no device was created"
    for dev in devices:
        assert dev.state is State.UNINITIALIZED, f"{dev!r} was left {dev.state.value}"
        assert not dev.faulted, f"{dev!r} is still faulted"
        assert dev.allocations == {}, f"{dev!r} still tracks {list(dev.allocations.values())}"
        assert dev.streams == set(), f"{dev!r} still tracks streams {dev.streams}"
        heap = dev.plugin_state.get("heap")
        assert heap is None or len(heap) == 0, f"{dev!r}: the plugin's heap still holds {len(heap)} block(s)"


def device_scenario(device: Any) -> Outcome:
    """The whole Device API once on ``device`` — lifecycle, data space, workspace, streams, copies,
    attributes — then :meth:`~tvmdevice.device.Device.release` (twice) whatever happened."""
    import numpy as np

    from tvmdevice.attrs import DeviceAttrKind

    raised: list[BaseException] = []
    outputs: list[list[Any]] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            device.init()
            device.open()
            device.activate()
            device.set_device()
            device.get_attr(DeviceAttrKind.kExist)
            device.get_target_property("mcpu")
            device.supports_device_pointer_arithmetics_on_host()
            shaped = device.alloc_data_space_scoped((4, 4), "int8")
            device.free_data_space(shaped)
            data = device.alloc_data_space(256)
            scratch = device.alloc_workspace(64)
            stream = device.create_stream()
            device.set_stream(stream)
            device.upload(np.arange(256, dtype=np.uint8), data, stream=stream)
            outputs.append([device.download(data, np.zeros(256, np.uint8), stream=stream)])
            device.sync_stream_from_to(stream, 0)
            device.stream_sync(0)
            device.get_current_stream()
            device.set_stream(0)
            device.free_stream(stream)
            device.free_workspace(scratch)
            device.free_data_space(data)
            device.deactivate()
            device.close()
            device.destroy()
        except BaseException as exc:  # noqa: BLE001 - recorded for the test to judge
            raised.append(exc)
        try:
            device.release()
        except BaseException as exc:  # noqa: BLE001
            raised.append(exc)
        device.release()  # nothing left: nothing raised
    leaks = [str(w.message) for w in caught if issubclass(w.category, LeakWarning)]
    return Outcome(raised, leaks, outputs)
