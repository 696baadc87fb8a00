"""Teardown cannot leak: every free and every lifecycle step runs whatever fails before it.

The sweeps inject a fault at the k-th call of every hook an executor's life
makes (create, run twice, close, close again), for Python plugins and for the
cmsis-nn device's C lifecycle, and check that every device ends destroyed
with nothing tracked, that the error says what failed, and that results
obtained before the fault are bit-exact.
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import signal
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest
from fault_injection import assert_released, device_scenario, executor_scenario, inject

import tvmdevice
from tvmdevice import State
from tvmdevice.aot.builder import demo_model
from tvmdevice.binding import DEVICE_HOOKS
from tvmdevice.errors import (
    DeviceMemoryError,
    InvalidArgumentError,
    LeakWarning,
    LifecycleError,
    Status,
    TeardownError,
    TVMDeviceError,
    error_for_status,
)
from tvmdevice.lifecycle import Transition
from tvmdevice.registry import Registry
from tvmdevice.teardown import Steps

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "plugins"
FREE_HOOKS = ("tvmdevice_free_data_space", "tvmdevice_free_workspace", "tvmdevice_free_stream")


def _fixture(name: str):
    sys.path.insert(0, str(FIXTURES))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


@pytest.fixture
def accel(registry):
    registry.register(_fixture("fixture_accel"), "accel")
    return registry


@pytest.fixture
def flaky(registry):
    registry.register(_fixture("fixture_raising"), "flaky")
    return registry


def _opened(registry, name="c", options=None):
    dev = registry.create_device(name, options or {})
    dev.init()
    dev.open()
    return dev


# ------------------------------------------------------------------ devices
def test_a_block_stays_tracked_until_its_free_succeeds(registry):
    dev = _opened(registry)
    ptr = dev.alloc_data_space(96)
    with inject("tvmdevice_free_data_space", 1):
        with pytest.raises(TVMDeviceError, match=r"device 'c': tvmdevice_free_data_space raised RuntimeError"):
            dev.free_data_space(ptr)
    assert ptr in dev.allocations, "a failed free must not lose the block"
    with pytest.warns(LeakWarning, match=rf"data 96 B at {ptr:#x} still allocated; freed by the framework"):
        dev.close()
    assert dev.allocations == {} and len(dev.plugin_state["heap"]) == 0
    dev.destroy()


def test_close_force_releases_what_cannot_be_freed_and_says_so(registry):
    dev = _opened(registry)
    data, ws = dev.alloc_data_space(32), dev.alloc_workspace(16)
    stream = dev.create_stream()
    with inject("tvmdevice_free_data_space", 1, persistent=True), \
            inject("tvmdevice_free_workspace", 1, persistent=True), \
            inject("tvmdevice_free_stream", 1, persistent=True), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dev.close()
    messages = [str(w.message) for w in caught if issubclass(w.category, LeakWarning)]
    assert "still allocated; freed by the framework" in messages[0] and "1 stream(s)" in messages[0]
    for what in (f"data block {data:#x}", f"workspace block {ws:#x}", f"stream {stream}"):
        assert any(f"freeing leaked {what} failed" in m and "plugin 'c'" in m for m in messages), what
    assert dev.state is State.INITIALIZED and dev.allocations == {} and dev.streams == set()
    dev.destroy()


def test_close_runs_its_hook_even_when_freeing_a_leftover_is_interrupted(registry):
    dev = _opened(registry)
    dev.alloc_data_space(8)
    dev.alloc_data_space(8)
    with inject("tvmdevice_free_data_space", 1, error="interrupt") as plan:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LeakWarning)
            with pytest.raises(KeyboardInterrupt):
                dev.close()
    assert plan.calls["tvmdevice_free_data_space"] == 2, "the second leftover was still freed"
    assert plan.calls["tvmdevice_close"] == 1 and dev.state is State.INITIALIZED
    assert dev.allocations == {}
    dev.destroy()


def test_release_finishes_after_an_interrupt_in_a_hook(flaky):
    dev = flaky.create_device("flaky")
    dev.init(); dev.open(); dev.activate()
    with inject("tvmdevice_deactivate", 1, error="interrupt"), pytest.raises(KeyboardInterrupt):
        dev.release()
    assert dev.state is State.UNINITIALIZED and not dev.faulted


def test_release_raises_every_failure_together_the_first_as_cause(flaky):
    dev = flaky.create_device("flaky", {"fail": "deactivate+close+destroy"})
    dev.init(); dev.open(); dev.activate()
    with pytest.raises(TeardownError, match="releasing device 'flaky': 3 steps failed") as info:
        dev.release()
    hooks = [str(e) for e in info.value.errors]
    assert [h.split(": ")[1].split(" ")[0] for h in hooks] == \
        ["tvmdevice_deactivate", "tvmdevice_close", "tvmdevice_destroy"]
    assert info.value.__cause__ is info.value.errors[0]
    assert info.value.status is Status.GENERIC
    assert dev.state is State.UNINITIALIZED and not dev.faulted


def test_a_memory_error_in_a_lifecycle_hook_is_a_device_memory_error(registry):
    dev = registry.create_device("c")
    with inject("tvmdevice_init", 1, error="memory"), \
            pytest.raises(DeviceMemoryError, match=r"plugin .*, device 'c': tvmdevice_init ran out of host memory"):
        dev.init()
    assert dev.faulted
    dev.release()
    assert dev.state is State.UNINITIALIZED


def test_get_current_stream_errors_name_plugin_device_and_hook(registry):
    with inject("tvmdevice_get_current_stream", 1):
        dev = _opened(registry)
        with pytest.raises(TVMDeviceError,
                           match=r"plugin .*, device 'c': tvmdevice_get_current_stream raised RuntimeError"):
            dev.get_current_stream()
        assert dev.get_current_stream() == 0
    dev.release()


@pytest.mark.parametrize("code", [99, -1, 2**31 - 1, 0])
def test_unknown_status_codes_map_to_the_root_error_naming_the_code(code):
    err = error_for_status(code, "woofles: launch failed")
    assert type(err) is TVMDeviceError
    assert str(err).startswith("woofles: launch failed (")
    assert str(code) in str(err)
    assert str(error_for_status(99, "")) == "unknown status code 99, not one of tvmd_status_t"


def test_known_status_codes_keep_their_class():
    assert isinstance(error_for_status(Status.OUT_OF_MEMORY, "x"), DeviceMemoryError)
    assert isinstance(error_for_status(int(Status.INVALID_ARGUMENT), "x"), InvalidArgumentError)
    assert isinstance(error_for_status(int(Status.INVALID_STATE), "x"), LifecycleError)


def test_steps_raise_one_error_as_itself_and_interrupts_first():
    steps = Steps("tearing down")
    steps.run(_raise, ValueError("only"))
    with pytest.raises(ValueError, match="only"):
        steps.raise_errors()
    steps.run(_raise, DeviceMemoryError("first"))
    steps.run(_raise, KeyboardInterrupt())
    steps.run(_raise, ValueError("third"))
    with pytest.raises(KeyboardInterrupt) as info:
        steps.raise_errors()
    assert [str(e) for e in info.value.cleanup_errors] == ["first", "third"]
    steps.run(_raise, DeviceMemoryError("a"))
    steps.run(_raise, TeardownError("inner", [ValueError("b"), ValueError("c")]))
    with pytest.raises(TeardownError) as group:
        steps.raise_errors()
    assert [str(e) for e in group.value.errors] == ["a", "b", "c"]
    assert group.value.status is Status.OUT_OF_MEMORY


def _raise(exc):
    raise exc


# ----------------------------------------------------------------- executors
def test_close_runs_every_free_after_one_fails_and_is_idempotent(accel):
    module = tvmdevice.compile(demo_model(), "accel, c", registry=accel)
    ex = module.executor()
    blocks = {d.name: dict(d.allocations) for d in ex.devices}
    ex.devices[0].alloc_data_space(64)  # a second block on accel
    with inject("tvmdevice_free_data_space", 1) as plan, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(TVMDeviceError, match="tvmdevice_free_data_space raised RuntimeError"):
            ex.close()
    assert plan.calls["tvmdevice_free_data_space"] >= 2 + sum(map(len, blocks.values()))
    assert any(issubclass(w.category, LeakWarning) for w in caught)
    assert_released(ex.devices)
    ex.close()  # nothing left: nothing raised
    with pytest.raises(LifecycleError, match="executor is closed"):
        ex.set_inputs([np.zeros((1, 16, 16, 1), np.int8)])


def test_several_teardown_failures_are_raised_together(flaky):
    module = tvmdevice.compile(demo_model(), "flaky -fail=close+destroy, c", registry=flaky)
    ex = module.executor()
    with inject("tvmdevice_destroy", 1):  # c, torn down first (reverse target order)
        with pytest.raises(TeardownError, match="closing the executor: 3 steps failed") as info:
            ex.close()
    messages = [str(e) for e in info.value.errors]
    assert "device 'c': tvmdevice_destroy raised RuntimeError: injected fault" in messages[0]
    assert "injected failure in close" in messages[1] and "injected failure in destroy" in messages[2]
    assert info.value.__cause__ is info.value.errors[0]
    assert_released(ex.devices)


def test_leaving_a_with_block_on_an_error_never_masks_it_with_a_close_error(flaky):
    module = tvmdevice.compile(demo_model(), "flaky -fail=close, c", registry=flaky)
    with pytest.raises(ValueError, match="the body failed") as info:
        with module.executor() as ex:
            raise ValueError("the body failed")
    (cleanup,) = info.value.cleanup_errors
    assert "injected failure in close" in str(cleanup)
    assert_released(ex.devices)


def test_ctrl_c_during_close_finishes_the_teardown_then_interrupts(flaky):
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT has a custom handler in this process")
    module = tvmdevice.compile(demo_model(), "flaky, c", registry=flaky)
    ex = module.executor()
    finished: list[str] = []
    flaky_close = ex.devices[0]._binding._hooks["tvmdevice_close"]

    def close_pressing_ctrl_c(*args):
        signal.raise_signal(signal.SIGINT)  # as if the user pressed Ctrl-C right now
        flaky_close(*args)
        finished.append("flaky close")

    ex.devices[0]._binding._hooks["tvmdevice_close"] = close_pressing_ctrl_c
    with pytest.raises(KeyboardInterrupt):
        ex.close()
    assert finished == ["flaky close"], "the interrupt waited for the hook"
    assert_released(ex.devices)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_ctrl_c_interrupts_at_once(flaky):
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        pytest.skip("SIGINT has a custom handler in this process")
    module = tvmdevice.compile(demo_model(), "flaky, c", registry=flaky)
    ex = module.executor()
    reached: list[str] = []

    def hanging_close(*args):
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)  # the second press: the user insists
        reached.append("after")

    ex.devices[0]._binding._hooks["tvmdevice_close"] = hanging_close
    with pytest.raises(KeyboardInterrupt):
        ex.close()
    assert reached == []
    # The interrupted hook left the device faulted, on its way down: the rest still ran.
    assert_released(ex.devices)


# ------------------------------------------------------------------ the sweeps
#: Sweep targets: the fixture accel (a Python plugin, in-process) and the real plugins when installed.
TARGETS = ["accel, c", "woofles, c", "cmsis-nn, c", "woofles, cmsis-nn, c"]


def _registry_for(target: str, registry: Registry) -> Registry:
    if target == "accel, c":
        registry.register(_fixture("fixture_accel"), "accel")
        return registry
    installed = Registry()
    missing = [name for name in target.split(", ")[:-1] if name not in installed.device_names()]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (pip install ./plugins/...)")
    return installed


#: (error, after): what the k-th call does — fail before the plugin's code runs, or after it ran.
MODES = [("runtime", False), ("runtime", True), ("memory", False), ("interrupt", False)]


@pytest.mark.parametrize("error, after", MODES, ids=[f"{e}-{'after' if a else 'before'}" for e, a in MODES])
@pytest.mark.parametrize("target", TARGETS)
def test_fault_at_every_call_of_every_hook_leaks_nothing(registry, target, error, after):
    module = tvmdevice.compile(demo_model(), target, registry=_registry_for(target, registry))
    inputs = [np.random.default_rng(1).integers(-128, 128, (1, 16, 16, 1), dtype=np.int8)]
    with inject() as census:
        clean = executor_scenario(module, inputs)
    assert not clean.raised and not clean.leak_warnings
    assert_released(census.devices)
    expected = clean.outputs[0]
    problems = []
    for hook, count in sorted(census.calls.items()):
        for k in range(1, count + 1):
            with inject(hook, k, error, after) as plan:
                outcome = executor_scenario(module, inputs)
            case = f"{hook} call {k} ({error}, {'after' if after else 'before'})"
            try:
                assert plan.fired
                assert_released(plan.devices)
                _check_reported(outcome, hook, error)
                if hook in FREE_HOOKS:
                    assert outcome.leak_warnings, "the block whose free failed is reported at Close"
                for out in outcome.outputs:
                    assert all(np.array_equal(a, b) for a, b in zip(out, expected)), "wrong result"
            except AssertionError as exc:
                problems.append(f"{case}: {exc}")
    cases = sum(census.calls.values())
    assert not problems, f"{len(problems)} of {cases} cases:\n" + "\n".join(problems[:20])


#: Devices for the Device API sweep: the host, a fixture Python plugin, the real plugins when installed.
DEVICES = ["c", "toy", "woofles", "cmsis-nn"]


@pytest.mark.parametrize("error, after", MODES, ids=[f"{e}-{'after' if a else 'before'}" for e, a in MODES])
@pytest.mark.parametrize("name", DEVICES)
def test_fault_at_every_device_api_call_leaks_nothing(registry, name, error, after):
    if name == "toy":
        registry.register(_fixture("fixture_good"), "toy")
    elif name != "c":
        registry = _registry_for(f"{name}, c", registry)
    with inject() as census:
        clean = device_scenario(registry.create_device(name))
    assert not clean.raised and not clean.leak_warnings
    assert_released(census.devices)
    expected = np.arange(256, dtype=np.uint8)
    assert np.array_equal(clean.outputs[0][0], expected)
    problems = []
    for hook, count in sorted(census.calls.items()):
        for k in range(1, count + 1):
            with inject(hook, k, error, after) as plan:
                outcome = device_scenario(registry.create_device(name))
            try:
                assert plan.fired
                assert_released(plan.devices)
                _check_reported(outcome, hook, error)
                if hook in ("tvmdevice_free_data_space", "tvmdevice_free_workspace"):
                    assert outcome.leak_warnings, "the block whose free failed is reported at Close"
                assert all(np.array_equal(out[0], expected) for out in outcome.outputs), "wrong copy"
            except AssertionError as exc:
                problems.append(f"{hook} call {k} ({error}, {'after' if after else 'before'}): {exc}")
    # Every hook of the Device API is called (the shaped alloc reaches its hook only where a plugin has one).
    assert set(DEVICE_HOOKS) - set(census.calls) <= {"tvmdevice_alloc_data_space_scoped"}, sorted(census.calls)
    assert not problems, f"{len(problems)} of {sum(census.calls.values())} cases:\n" + "\n".join(problems[:20])


def _check_reported(outcome, hook: str, error: str) -> None:
    """The fault surfaced, as the right error, naming the hook."""
    assert outcome.raised, "the fault was swallowed"
    if error == "interrupt":
        assert any(isinstance(e, KeyboardInterrupt) for e in outcome.raised), outcome.raised
        return
    assert all(isinstance(e, TVMDeviceError) for e in outcome.raised), f"raw exception: {outcome.raised!r}"
    ours = [e for e in outcome.errors() if f"injected fault in {hook}" in str(e) and not isinstance(e, TeardownError)]
    assert ours, f"no error names the fault: {outcome.raised!r}"
    assert all(hook in str(e) and "device '" in str(e) and "plugin '" in str(e) for e in ours), ours
    if error == "memory":
        assert all(isinstance(e, DeviceMemoryError) for e in ours), ours


# ----------------------------------------------------- the C plugin's lifecycle
C_STATUSES = [int(Status.GENERIC), int(Status.OUT_OF_MEMORY), 99]
C_STEPS = [t.value for t in Transition]


@contextmanager
def c_status_at(step: str, k: int, status: int, after: bool) -> Iterator[list[int]]:
    """Make the ``k``-th call of cmsis-nn's C ``TVMDeviceCmsisNn<Step>`` return ``status``.

    The C functions cannot fail on demand, so the call into them is wrapped
    where Python makes it: the core's lifecycle-capsule caller
    (``tvmdevice._lifecycle.call``) where the plugin publishes a capsule, else
    the plugin's own step table (``DEVICE_STEPS``).  With ``after`` the C
    function runs first.  Yields the number of calls of ``step`` seen so far.
    """
    calls = [0]

    def fail_kth(real: Callable[[], int]) -> int:
        calls[0] += 1
        if calls[0] != k:
            return real()
        if after:
            real()
        return status

    if importlib.util.find_spec("tvmdevice._lifecycle") is not None:
        caller = importlib.import_module("tvmdevice._lifecycle")
        real_call = caller.call

        def call(capsule: Any, name: str, handle: int) -> int:
            if name != step:
                return real_call(capsule, name, handle)
            return fail_kth(lambda: real_call(capsule, name, handle))

        caller.call = call
        try:
            yield calls
        finally:
            caller.call = real_call
        return
    table = importlib.import_module("tvmdevice_cmsis._kernels").DEVICE_STEPS
    real_step = table[step]
    table[step] = lambda handle: fail_kth(lambda: real_step(handle))
    try:
        yield calls
    finally:
        table[step] = real_step


@pytest.mark.parametrize("after", [False, True], ids=["before", "after"])
@pytest.mark.parametrize("status", C_STATUSES, ids=["generic", "out-of-memory", "unknown-99"])
def test_c_lifecycle_status_at_every_call_leaks_nothing(status, after):
    """cmsis-nn's C lifecycle returns ``status`` at the k-th call of every step (see :func:`c_status_at`)."""
    installed = Registry()
    if "cmsis-nn" not in installed.device_names():
        pytest.skip("cmsis-nn not installed (pip install ./plugins/cmsis)")
    module = tvmdevice.compile(demo_model(), "cmsis-nn, c", registry=installed)
    inputs = [np.random.default_rng(2).integers(-128, 128, (1, 16, 16, 1), dtype=np.int8)]
    expected = executor_scenario(module, inputs).outputs[0]
    problems = []
    tried = {step: 0 for step in C_STEPS}
    for step in C_STEPS:
        for k in itertools.count(1):
            with c_status_at(step, k, status, after) as calls, inject() as plan:
                outcome = executor_scenario(module, inputs)
            if calls[0] < k:
                break  # every call of this step was tried
            tried[step] += 1
            try:
                assert_released(plan.devices)
                assert outcome.raised and all(isinstance(e, TVMDeviceError) for e in outcome.raised), outcome.raised
                ours = [e for e in outcome.errors() if f"TVMDeviceCmsisNn{step.capitalize()} returned" in str(e)
                        and not isinstance(e, TeardownError)]
                assert ours, outcome.raised
                if status == Status.OUT_OF_MEMORY:
                    assert all(isinstance(e, DeviceMemoryError) for e in ours)
                if status == 99:
                    assert all("unknown status code 99" in str(e) for e in ours)
                for out in outcome.outputs:
                    assert all(np.array_equal(a, b) for a, b in zip(out, expected))
            except AssertionError as exc:
                problems.append(f"{step} call {k}: {exc}")
    assert all(tried.values()), f"a C lifecycle step was never reached through the wrapped call: {tried}"
    assert not problems, "\n".join(problems)


def test_close_releases_what_the_framework_heap_handed_out_to_a_failed_alloc(registry):
    """accel's memory is the framework's host heap: a block allocated by a call that then
    failed is never tracked, and Close releases it and says so."""
    registry.register(_fixture("fixture_accel"), "accel")  # host memory from the framework's defaults
    dev = _opened(registry, "accel")
    assert dev._binding.is_default("tvmdevice_alloc_data_space")
    with inject("tvmdevice_alloc_data_space", 1, after=True), pytest.raises(TVMDeviceError, match="injected"):
        dev.alloc_data_space(40)
    assert dev.allocations == {} and len(dev.plugin_state["heap"]) == 1
    with pytest.warns(LeakWarning, match=r"1 host block\(s\), 40 B, handed out by an allocation that then failed"):
        dev.close()
    assert len(dev.plugin_state["heap"]) == 0
    dev.destroy()
