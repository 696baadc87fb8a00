"""Power states driven by the lifecycle, enforced by the device itself, and SRAM persistence."""

from __future__ import annotations

import numpy as np
import pytest
from tvmdevice.errors import LifecycleError, Status, TVMDeviceError
from tvmdevice.lifecycle import State

import tvmdevice_woofles
from tvmdevice_woofles import _woofles


def power(device) -> str:
    return tvmdevice_woofles.counters(device)["power_state"]


def test_power_state_follows_the_lifecycle(make_device):
    d = make_device("initialized")
    assert power(d) == "OFF"
    d.open()
    assert power(d) == "SLEEP"
    d.activate()
    assert power(d) == "ACTIVE"
    d.deactivate()
    assert power(d) == "SLEEP"
    d.activate()
    d.deactivate()
    d.close()
    assert power(d) == "OFF"
    t = tvmdevice_woofles.counters(d)["transitions"]
    assert t == {"init": 1, "open": 1, "activate": 2, "deactivate": 2, "close": 1, "destroy": 0}


def test_sram_contents_survive_deactivate_activate(device):
    data = np.random.default_rng(1).integers(-128, 128, 4096, dtype=np.int8)
    ptr = device.alloc_data_space(data.nbytes)
    device.upload(data, ptr)
    device.stream_sync(0)
    device.deactivate()
    assert power(device) == "SLEEP"
    device.activate()
    out = np.zeros_like(data)
    np.testing.assert_array_equal(device.download(ptr, out), data)


def test_dma_works_while_asleep_and_data_is_there_after_wake(make_device):
    d = make_device("opened")  # constants are preloaded before the first Activate
    data = np.arange(256, dtype=np.uint8)
    ptr = d.alloc_data_space(256)
    d.upload(data, ptr)
    d.activate()
    np.testing.assert_array_equal(d.download(ptr, np.zeros_like(data)), data)


def test_wake_up_is_charged_to_the_run(device):
    c = tvmdevice_woofles.counters(device)
    assert c["cycles_run"] == _woofles.WAKE_CYCLES
    assert c["cycles_in_state"]["ACTIVE"] == _woofles.WAKE_CYCLES
    device.deactivate()
    device.activate()
    c = tvmdevice_woofles.counters(device)
    assert c["cycles_run"] == _woofles.WAKE_CYCLES
    assert c["cycles_total"] == 2 * _woofles.WAKE_CYCLES


def test_time_in_power_states_accumulates(make_device):
    d = make_device("opened")
    before = tvmdevice_woofles.counters(d)["ns_in_state"]["SLEEP"]
    d.activate()
    d.deactivate()
    after = tvmdevice_woofles.counters(d)["ns_in_state"]
    assert after["SLEEP"] > before
    assert after["ACTIVE"] > 0


def test_the_device_enforces_its_own_state_machine(make_device):
    """Illegal transitions straight into C, past the framework's checks."""
    d = make_device("initialized")
    h = d.handle_address
    assert _woofles.activate(h) == Status.INVALID_STATE  # compute cannot wake with SRAM off
    assert _woofles.init(h) == Status.INVALID_STATE  # already initialized
    d.open()
    assert _woofles.open(h) == Status.INVALID_STATE
    assert _woofles.destroy(h) == Status.INVALID_STATE  # Destroy only after Close
    assert _woofles.deactivate(h) == Status.INVALID_STATE
    d.activate()
    assert _woofles.close(h) == Status.INVALID_STATE  # Close only from SLEEP
    assert _woofles.destroy(h) == Status.INVALID_STATE
    assert power(d) == "ACTIVE"  # refusals change nothing


def test_destroy_only_after_close(make_device):
    d = make_device("opened")
    with pytest.raises(LifecycleError):
        d.destroy()
    d.close()
    h = d.handle_address
    # The device's own check, past the framework: Destroy works once after Close.
    assert _woofles.destroy(h) == Status.OK
    assert _woofles.destroy(h) == Status.INVALID_STATE
    assert _woofles.init(h) == Status.OK  # back to initialized for the framework's Destroy
    d.destroy()
    assert d.state is State.UNINITIALIZED


def test_close_releases_the_sram(make_device):
    d = make_device("opened")
    ptr = d.alloc_data_space(1000)
    d.upload(np.ones(1000, np.int8), ptr)
    d.free_data_space(ptr)
    d.close()
    assert "sram" not in d.plugin_state
    assert tvmdevice_woofles.counters(d)["bytes_in_use"] == 0
    status, _ = _woofles.alloc(d.handle_address, 16, 16)
    assert status == Status.INVALID_STATE  # the allocator is off with the SRAM
    with pytest.raises(LifecycleError):
        d.alloc_data_space(16)


def test_reopen_starts_from_an_empty_sram(make_device):
    d = make_device("opened")
    first = d.alloc_data_space(1000)
    d.upload(np.full(1000, 7, np.int8), first)
    d.free_data_space(first)
    d.close()
    d.open()
    ptr = d.alloc_data_space(1000)
    assert ptr == first  # first fit in an empty SRAM
    np.testing.assert_array_equal(d.download(ptr, np.ones(1000, np.int8)), np.zeros(1000, np.int8))


def test_failed_open_still_closes_and_destroys(make_device, monkeypatch):
    import tvmdevice_woofles.plugin as plugin

    d = make_device("initialized")

    def no_memory(*args, **kwargs):
        raise MemoryError("host out of memory")

    monkeypatch.setattr(plugin, "aligned_empty", no_memory)
    with pytest.raises(TVMDeviceError):
        d.open()
    assert d.faulted and power(d) == "OFF"
    d.close()
    d.destroy()
    assert d.state is State.UNINITIALIZED


@pytest.mark.parametrize("option, value", [("mac_width", 257), ("sram_kb", 65537)])
def test_init_refuses_options_beyond_the_hardware(make_device, option, value):
    # The bound is the option's declared maximum: refused before Init is ever reached.
    with pytest.raises(TVMDeviceError, match=option):
        make_device("uninitialized", **{option: value})

