"""The cmsis-nn device through the framework: discovery, lifecycle, struct, memory, attributes."""

from __future__ import annotations

import numpy as np
import pytest
import tvmdevice
from tvmdevice.attrs import DeviceAttrKind
from tvmdevice.errors import DeviceMemoryError, LifecycleError
from tvmdevice.layout import struct_view
from tvmdevice.lifecycle import State

from tvmdevice_cmsis.device import API_VERSION, DEVICE_TYPE, KERNEL_KINDS, LAYOUT

from conftest import random_inputs, run_cmsis, single


def fields(device):
    return {k: v.copy() for k, v in struct_view(LAYOUT, device.handle).items()}


def test_discovered_through_the_entry_point_with_its_alias():
    registry = tvmdevice.get_registry()
    assert registry.device_type("cmsis-nn") is registry.device_type("cmsis")
    assert registry.device_type("cmsis").layout == LAYOUT
    record = registry.plugin_for("cmsis")
    assert record.distribution == "tvmdevice-cmsis"
    assert record.status == "loaded"


def test_lifecycle_drives_the_struct():
    device = tvmdevice.get_registry().create_device("cmsis", {"scratch_kb": 8})
    device.init()
    f = fields(device)
    assert f["api_version"][0] == API_VERSION and f["scratch_capacity"][0] == 8 * 1024 and f["active"][0] == 0
    device.open()
    assert fields(device)["num_opens"][0] == 1
    device.activate()
    assert fields(device)["active"][0] == 1
    device.deactivate()
    assert fields(device)["active"][0] == 0
    device.activate()
    device.deactivate()
    device.close()
    device.open()
    assert fields(device)["num_opens"][0] == 2
    device.close()
    device.destroy()
    assert device.state is State.UNINITIALIZED
    assert not np.any(device.handle)  # Destroy zeroes the struct


def test_illegal_transition_is_refused():
    device = tvmdevice.get_registry().create_device("cmsis-nn")
    device.init()
    with pytest.raises(LifecycleError):
        device.activate()
    device.release()


def test_kernels_count_calls_and_macs(cmsis_device):
    _, graph = single("CONV_2D", input_shape=(1, 5, 5, 3), filters=4, kernel=(3, 3), padding="VALID")
    run_cmsis(graph, random_inputs(graph, 0), device=cmsis_device)
    run_cmsis(graph, random_inputs(graph, 1), device=cmsis_device)
    f = fields(cmsis_device)
    assert f["call_counts"][KERNEL_KINDS.index("CONV_2D")] == 2
    assert f["total_calls"][0] == 2
    assert f["macs"][0] == 2 * (3 * 3 * 4) * (3 * 3 * 3)
    # The scratch came from the device's workspace and went back to it.
    assert f["scratch_in_use"][0] == 0 and not cmsis_device.allocations


@pytest.mark.parametrize("state", ["initialized", "opened"])
def test_kernels_refuse_to_run_on_an_inactive_device(state):
    device = tvmdevice.get_registry().create_device("cmsis-nn")
    device.init()
    if state == "opened":
        device.open()
    _, graph = single("SOFTMAX")
    with pytest.raises(LifecycleError):
        run_cmsis(graph, random_inputs(graph, 0), device=device)
    assert fields(device)["total_calls"][0] == 0
    device.release()


def test_attributes(cmsis_device):
    assert cmsis_device.get_attr(DeviceAttrKind.kExist) == 1
    assert cmsis_device.get_attr(DeviceAttrKind.kDeviceName) == "cmsis-nn"
    assert cmsis_device.get_attr(DeviceAttrKind.kApiVersion) == API_VERSION
    assert cmsis_device.get_attr(DeviceAttrKind.kMultiProcessorCount) == 1
    assert cmsis_device.get_attr(DeviceAttrKind.kTotalGlobalMemory) > 0
    for kind in (DeviceAttrKind.kWarpSize, DeviceAttrKind.kMaxThreadsPerBlock, DeviceAttrKind.kGcnArch):
        assert cmsis_device.get_attr(kind) is None


def test_data_space_and_copies(cmsis_device):
    data = np.arange(100, dtype=np.int8)
    ptr = cmsis_device.alloc_data_space(100, 64, "int8")
    assert ptr % 64 == 0
    cmsis_device.upload(data, ptr)
    back = np.zeros(60, dtype=np.int8)
    cmsis_device.download(ptr, back, offset=40)
    assert np.array_equal(back, data[40:])
    cmsis_device.free_data_space(ptr)


def test_workspace_is_capped_by_scratch_kb():
    device = tvmdevice.get_registry().create_device("cmsis-nn", {"scratch_kb": 1})
    device.init()
    device.open()
    first = device.alloc_workspace(600)
    assert fields(device)["scratch"][0] == first and fields(device)["scratch_bytes"][0] == 600
    with pytest.raises(DeviceMemoryError, match="scratch_kb"):
        device.alloc_workspace(600)
    second = device.alloc_workspace(424)
    device.free_workspace(second)
    assert fields(device)["scratch"][0] == first  # stack order: the block below is current again
    device.free_workspace(first)
    assert fields(device)["scratch_in_use"][0] == 0 and fields(device)["scratch"][0] == 0
    device.release()


def test_device_type_declares_its_operators_and_options():
    assert DEVICE_TYPE.operators == frozenset(KERNEL_KINDS)
    assert DEVICE_TYPE.option("scratch_kb").default > 0
    assert not DEVICE_TYPE.is_host


def test_c_lifecycle_refuses_an_uninitialized_struct():
    """TVMDeviceCmsisNn* (what firmware calls) reject a struct Init never saw."""
    from tvmdevice.memory import address_of, aligned_empty
    from tvmdevice.plugin import CLifecycle

    from tvmdevice_cmsis._kernels import LIFECYCLE

    call = CLifecycle(LIFECYCLE, DEVICE_TYPE.name).call
    storage = aligned_empty(LAYOUT.size, 64)
    address = address_of(storage)
    assert call("open", address) == 2  # TVMD_ERR_INVALID_STATE
    assert call("activate", address) == 2
    assert call("init", address) == 0
    assert call("open", address) == 0 and call("activate", address) == 0
    assert struct_view(LAYOUT, storage)["active"][0] == 1
    assert call("destroy", address) == 0 and not storage.any()
