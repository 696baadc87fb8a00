"""The lifecycle state machine and its contracts, including failures inside each hook."""

from __future__ import annotations

import importlib
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from tvmdevice import State
from tvmdevice.errors import LeakWarning, LifecycleError, TVMDeviceError

FIXTURES = Path(__file__).parent.parent / "fixtures" / "plugins"


@pytest.fixture
def flaky(registry):
    sys.path.insert(0, str(FIXTURES))
    try:
        mod = importlib.import_module("fixture_raising")
    finally:
        sys.path.pop(0)
    registry.register(mod, "flaky")
    return registry


def test_full_legal_cycle_twice(registry):
    dev = registry.create_device("c")
    for _ in range(2):
        dev.init(); dev.open(); dev.activate(); dev.deactivate(); dev.activate(); dev.deactivate()
        dev.close(); dev.destroy()
        assert dev.state is State.UNINITIALIZED and not dev.faulted


@pytest.mark.parametrize("steps, bad", [
    ([], "open"), ([], "activate"), ([], "close"), ([], "destroy"), ([], "deactivate"),
    (["init"], "init"), (["init"], "activate"), (["init"], "close"),
    (["init", "open"], "open"), (["init", "open"], "destroy"), (["init", "open"], "deactivate"),
    (["init", "open", "activate"], "close"), (["init", "open", "activate"], "activate"),
    (["init", "open", "activate"], "destroy"),
])
def test_illegal_transitions_are_errors_and_change_nothing(registry, steps, bad):
    dev = registry.create_device("c")
    for s in steps:
        getattr(dev, s)()
    before = dev.state
    with pytest.raises(LifecycleError, match=f"cannot {bad}"):
        getattr(dev, bad)()
    assert dev.state is before and not dev.faulted
    dev.release()
    assert dev.state is State.UNINITIALIZED


@pytest.mark.parametrize("hook", ["init", "open", "activate", "deactivate", "close", "destroy"])
def test_failed_hook_leaves_device_closable_and_nothing_leaked(flaky, hook):
    dev = flaky.create_device("flaky", {"fail": hook})
    path = ["init", "open", "activate", "deactivate", "close", "destroy"]
    ptr = None
    with pytest.raises(TVMDeviceError, match=f"injected failure in {hook}") as info:
        for step in path:
            getattr(dev, step)()
            if step == "open" and hook in ("activate", "deactivate", "close"):
                ptr = dev.alloc_data_space(128)
    assert "flaky" in str(info.value) and f"tvmdevice_{hook}" in str(info.value)
    # A failed Destroy still ends at uninitialized, where there is nothing left to release.
    assert dev.faulted == (hook != "destroy")
    if dev.state in (State.OPENED, State.ACTIVE):
        with pytest.raises(LifecycleError, match="faulted"):
            dev.alloc_data_space(16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dev.release()
    assert dev.state is State.UNINITIALIZED and not dev.faulted
    assert dev.allocations == {}
    assert "heap" not in dev.plugin_state or len(dev.plugin_state["heap"]) == 0
    if ptr is not None and hook != "close":
        assert any(issubclass(w.category, LeakWarning) for w in caught)


def test_close_frees_and_reports_leaks(registry):
    dev = registry.create_device("c")
    dev.init(); dev.open()
    a = dev.alloc_data_space(100)
    w = dev.alloc_workspace(50)
    s = dev.create_stream()
    with pytest.warns(LeakWarning, match="100 B") as rec:
        dev.close()
    assert "1 stream" in str(rec[0].message)
    assert dev.allocations == {} and dev.streams == set()
    assert {getattr(x, "ptr", x) for x in dev.leaked} == {a, w, s}
    assert len(dev.plugin_state["heap"]) == 0
    dev.destroy()


def test_deactivate_keeps_memory(registry):
    dev = registry.create_device("c")
    dev.init(); dev.open(); dev.activate()
    ptr = dev.alloc_data_space(64)
    data = np.arange(64, dtype=np.uint8)
    dev.upload(data, ptr)
    dev.deactivate(); dev.activate()
    out = dev.download(ptr, np.zeros(64, np.uint8))
    assert np.array_equal(out, data)
    dev.deactivate(); dev.free_data_space(ptr); dev.close(); dev.destroy()


def test_struct_is_zeroed_aligned_and_written_by_the_plugin(registry):
    dev = registry.create_device("c")
    assert dev.handle.nbytes == dev.type.layout.size
    assert dev.handle_address % 64 == 0
    assert not dev.handle.any()
    dev.init(); dev.open(); dev.activate()
    layout = dev.type.layout
    active = int.from_bytes(dev.handle[layout.offset_of("active"):][:4].tobytes(), "little")
    assert active == 1
    dev.deactivate()
    assert int.from_bytes(dev.handle[layout.offset_of("active"):][:4].tobytes(), "little") == 0
    dev.release()
