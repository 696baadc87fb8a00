"""The lifecycle contract: Init/Open/Activate/Deactivate/Close/Destroy.

::

    uninitialized --init--> initialized --open--> opened --activate--> active
          ^                      |   ^                 ^                  |
          +------destroy---------+   +------close------+<---deactivate----+

Legal transitions succeed and move the device to their target state; illegal
ones raise :class:`~tvmdevice.errors.LifecycleError` and change nothing;
memory can be allocated only while opened or active; Close frees whatever
the application left (with a :class:`~tvmdevice.errors.LeakWarning`) and a
device can always be walked back down to uninitialized.

The stateful check is a hypothesis :class:`RuleBasedStateMachine`; build it
with :func:`lifecycle_machine` and run it anywhere with
``hypothesis.stateful.run_state_machine_as_test``.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, TypeVar

from ...errors import LeakWarning, LifecycleError, TVMDeviceError
from ...lifecycle import TRANSITIONS, State, Transition
from ._base import Check, CheckContext, Contract

__all__ = ["CONTRACT", "lifecycle_machine", "check_state_machine", "check_repeatable_cycles"]

NAME = "lifecycle"
_HOLDING = (State.OPENED, State.ACTIVE)
_F = TypeVar("_F", bound=Callable[..., Any])


def _marks_broken(fn: _F) -> _F:
    """Remember that a step failed, so teardown does not bury the first violation under a second."""
    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except BaseException:
            self.broken = True
            raise
    return wrapper  # type: ignore[return-value]


def lifecycle_machine(ctx: CheckContext) -> type:
    """A :class:`~hypothesis.stateful.RuleBasedStateMachine` class for the device in ``ctx``.

    Each example creates a fresh device, drives it through random legal and
    illegal transitions with allocations and frees in between, compares the
    framework's state with a model after every step, and walks the device
    down at teardown, checking nothing is left allocated.
    """
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

    class DeviceLifecycle(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.dev = ctx.registry.create_device(ctx.device_name, ctx.options)
            self.model = State.UNINITIALIZED
            self.live: list[int] = []
            self.broken = False

        @rule(transition=st.sampled_from(list(Transition)))
        @_marks_broken
        def step(self, transition: Transition) -> None:
            source, target = TRANSITIONS[transition]
            if self.model is source:
                self._legal(transition, target)
            else:
                self._illegal(transition)

        def _legal(self, transition: Transition, target: State) -> None:
            leaving_allocations = transition is Transition.CLOSE and bool(self.live)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", LeakWarning)
                with ctx.calling(f"legal {transition.value} from {self.model.value!r}"):
                    getattr(self.dev, transition.value)()
            if self.dev.state is not target:
                ctx.fail(f"legal {transition.value} from {self.model.value!r} left the device "
                         f"{self.dev.state.value!r}, expected {target.value!r}")
            if transition is Transition.CLOSE:
                warned = any(issubclass(w.category, LeakWarning) for w in caught)
                if self.dev.allocations:
                    ctx.fail(f"Close left {len(self.dev.allocations)} allocation(s) in the framework's table")
                if leaving_allocations and not warned:
                    ctx.fail("Close with allocations still live did not report them as a LeakWarning")
                if not leaving_allocations and warned:
                    ctx.fail(f"Close reported a leak although everything was freed: {caught[0].message}")
                self.live.clear()
            self.model = target

        def _illegal(self, transition: Transition) -> None:
            try:
                getattr(self.dev, transition.value)()
            except LifecycleError:
                pass
            except TVMDeviceError as exc:
                ctx.fail(f"illegal {transition.value} in state {self.model.value!r} raised "
                         f"{type(exc).__name__} ({exc}); expected LifecycleError")
            else:
                ctx.fail(f"illegal {transition.value} in state {self.model.value!r} was accepted")
            if self.dev.state is not self.model or self.dev.faulted:
                ctx.fail(f"illegal {transition.value} in state {self.model.value!r} changed the device to "
                         f"{self.dev!r}; a refused transition must change nothing")

        @precondition(lambda self: self.model in _HOLDING)
        @rule(nbytes=st.integers(0, 4096), alignment=st.sampled_from([1, 4, 16, 64, 256]))
        @_marks_broken
        def allocate(self, nbytes: int, alignment: int) -> None:
            with ctx.calling(f"AllocDataSpace({nbytes}, alignment={alignment}) while {self.model.value}"):
                self.live.append(self.dev.alloc_data_space(nbytes, alignment))

        @precondition(lambda self: bool(self.live))
        @rule(data=st.data())
        @_marks_broken
        def free(self, data: Any) -> None:
            ptr = data.draw(st.sampled_from(self.live), label="ptr")
            with ctx.calling(f"FreeDataSpace of a live allocation while {self.model.value}"):
                self.dev.free_data_space(ptr)
            self.live.remove(ptr)

        @precondition(lambda self: self.model not in _HOLDING)
        @rule()
        @_marks_broken
        def allocate_without_memory(self) -> None:
            try:
                ptr = self.dev.alloc_data_space(16)
            except LifecycleError:
                return
            except TVMDeviceError as exc:
                ctx.fail(f"AllocDataSpace while {self.model.value} raised {type(exc).__name__} ({exc}); "
                         f"expected LifecycleError")
            ctx.fail(f"AllocDataSpace while {self.model.value} returned {ptr:#x}; memory exists only "
                     f"between Open and Close")

        @invariant()
        @_marks_broken
        def agrees_with_model(self) -> None:
            if self.dev.state is not self.model:
                ctx.fail(f"device is {self.dev.state.value!r}, expected {self.model.value!r}")
            if self.dev.faulted:
                ctx.fail("device is faulted although no hook was expected to fail")
            if set(self.dev.allocations) != set(self.live):
                ctx.fail(f"the framework tracks {len(self.dev.allocations)} allocation(s), the application "
                         f"holds {len(self.live)}")

        def teardown(self) -> None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LeakWarning)
                if self.broken:
                    try:
                        self.dev.release()
                    except Exception:  # noqa: BLE001 - the step's violation is the news
                        pass
                    return
                with ctx.calling(f"walking the device down from {self.dev.state.value!r}"):
                    self.dev.release()
            if self.dev.state is not State.UNINITIALIZED or self.dev.allocations or self.dev.streams:
                ctx.fail(f"after walking down, the device is {self.dev!r} with "
                         f"{len(self.dev.allocations)} allocation(s) and {len(self.dev.streams)} stream(s)")

    DeviceLifecycle.__name__ = DeviceLifecycle.__qualname__ = f"Lifecycle_{ctx.name.replace('-', '_')}"
    return DeviceLifecycle


def check_state_machine(ctx: CheckContext) -> str:
    """Random legal and illegal transition sequences with allocations in between."""
    from hypothesis.stateful import run_state_machine_as_test

    steps = 30
    run_state_machine_as_test(lifecycle_machine(ctx), settings=ctx.settings(stateful_step_count=steps))
    return f"{ctx.examples} sequence(s) of up to {steps} steps"


def check_repeatable_cycles(ctx: CheckContext) -> str:
    """Every transition works again: Open/Close and Activate/Deactivate repeat, Init follows Destroy."""
    dev = ctx.new_device(State.UNINITIALIZED)
    calls = 0
    for cycle in range(2):
        for label, fn in (("Init", dev.init), ("Open", dev.open)):
            with ctx.calling(f"{label} in full cycle {cycle + 1}"):
                fn()
            calls += 1
        for reopen in range(3):
            for label, fn in (("Activate", dev.activate), ("Deactivate", dev.deactivate)) * 2:
                with ctx.calling(f"{label} (cycle {cycle + 1}, open {reopen + 1})"):
                    fn()
                calls += 1
            with ctx.calling(f"Close (cycle {cycle + 1}, open {reopen + 1})"):
                dev.close()
            if reopen < 2:
                with ctx.calling(f"Open again after Close (cycle {cycle + 1}, open {reopen + 2})"):
                    dev.open()
            calls += 2
        with ctx.calling(f"Destroy in full cycle {cycle + 1}"):
            dev.destroy()
        calls += 1
        if dev.state is not State.UNINITIALIZED or dev.faulted:
            ctx.fail(f"after a full cycle the device is {dev!r}")
    ctx.forget(dev)
    return f"{calls} transitions"


CONTRACT = Contract(NAME, "Init/Open/Activate/Deactivate/Close/Destroy in legal and illegal orders", (
    Check("state-machine", check_state_machine, check_state_machine.__doc__ or ""),
    Check("repeatable-cycles", check_repeatable_cycles, check_repeatable_cycles.__doc__ or ""),
))
