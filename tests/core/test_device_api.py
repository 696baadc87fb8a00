"""The checked Device API on the host device: memory, copies, streams, attributes."""

from __future__ import annotations

import numpy as np
import pytest

from tvmdevice import DeviceAttrKind
from tvmdevice.errors import DeviceMemoryError, InvalidArgumentError, LifecycleError, NotSupportedError


@pytest.fixture
def dev(registry):
    d = registry.create_device("c")
    d.init(); d.open(); d.activate()
    yield d
    d.release()


def test_alloc_needs_an_open_device(registry):
    d = registry.create_device("c")
    d.init()
    with pytest.raises(LifecycleError, match="AllocDataSpace needs the device 'opened' or 'active'"):
        d.alloc_data_space(8)
    d.destroy()


@pytest.mark.parametrize("alignment", [1, 2, 16, 64, 256, 4096])
def test_alignment_is_honoured(dev, alignment):
    ptr = dev.alloc_data_space(33, alignment)
    assert ptr % alignment == 0
    dev.free_data_space(ptr)


@pytest.mark.parametrize("alignment", [0, 3, -8, 48])
def test_bad_alignment_is_refused(dev, alignment):
    with pytest.raises(InvalidArgumentError, match="power of two"):
        dev.alloc_data_space(8, alignment)


def test_double_free_and_foreign_pointers_are_refused(dev):
    ptr = dev.alloc_data_space(16)
    dev.free_data_space(ptr)
    with pytest.raises(DeviceMemoryError, match="double free or foreign pointer"):
        dev.free_data_space(ptr)
    with pytest.raises(DeviceMemoryError, match="not a live allocation"):
        dev.free_data_space(12345)
    ws = dev.alloc_workspace(16)
    with pytest.raises(DeviceMemoryError, match="workspace allocation"):
        dev.free_data_space(ws)
    dev.free_workspace(ws)


def test_zero_byte_allocations_are_unique(dev):
    a, b = dev.alloc_data_space(0), dev.alloc_data_space(0)
    assert a != b
    dev.free_data_space(a); dev.free_data_space(b)


def test_scoped_alloc_and_data_size(dev):
    assert dev.get_data_size((2, 3, 4), "int8") == 24
    assert dev.get_data_size((2, 3), "int32") == 24
    ptr = dev.alloc_data_space_scoped((4, 4), "float32")
    assert dev.allocations[ptr].nbytes == 64
    with pytest.raises(NotSupportedError, match="texture"):
        dev.alloc_data_space_scoped((4, 4), "float32", "global.texture")
    dev.free_data_space(ptr)


def test_copies_with_offsets_every_direction(dev):
    a = dev.alloc_data_space(64)
    b = dev.alloc_data_space(64)
    src = np.arange(64, dtype=np.uint8)
    dev.copy_data_from_to(src, 8, a, 16, 32, None, dev)           # host -> device
    dev.copy_data_from_to(a, 16, b, 0, 32, dev, dev)              # device -> device
    out = np.zeros(40, np.uint8)
    dev.copy_data_from_to(b, 0, out, 4, 32, dev, None)            # device -> host
    dev.stream_sync(0)
    assert np.array_equal(out[4:36], src[8:40])
    assert not out[:4].any() and not out[36:].any()


@pytest.mark.parametrize("src_off, dst_off, n", [(0, 0, 65), (60, 0, 8), (0, 57, 8), (-1, 0, 1)])
def test_out_of_range_copies_are_refused_before_the_plugin(dev, src_off, dst_off, n):
    a = dev.alloc_data_space(64)
    b = dev.alloc_data_space(64)
    with pytest.raises(InvalidArgumentError):
        dev.copy_data_from_to(a, src_off, b, dst_off, n, dev, dev)


def test_copy_into_read_only_array_is_refused(dev):
    a = dev.alloc_data_space(8)
    ro = np.zeros(8, np.uint8)
    ro.flags.writeable = False
    with pytest.raises(InvalidArgumentError, match="read-only"):
        dev.copy_data_from_to(a, 0, ro, 0, 8, dev, None)


def test_streams(dev):
    s1, s2 = dev.create_stream(), dev.create_stream()
    assert s1 != s2 and 0 not in (s1, s2)
    assert dev.get_current_stream() == 0
    dev.set_stream(s2)
    assert dev.get_current_stream() == s2
    dev.sync_stream_from_to(s1, s2)
    dev.stream_sync(s1)
    dev.free_stream(s2)
    assert dev.get_current_stream() == 0
    with pytest.raises(InvalidArgumentError, match="unknown stream"):
        dev.free_stream(s2)
    with pytest.raises(InvalidArgumentError, match="unknown stream"):
        dev.set_stream(999)
    dev.free_stream(s1)


def test_every_attribute_answers_or_says_not_applicable(dev):
    answers = {k: dev.get_attr(k) for k in DeviceAttrKind}
    assert answers[DeviceAttrKind.kExist] == 1
    assert answers[DeviceAttrKind.kDeviceName] == "c"
    assert answers[DeviceAttrKind.kApiVersion] == 1
    assert answers[DeviceAttrKind.kTotalGlobalMemory] > 0
    assert answers[DeviceAttrKind.kWarpSize] is None
    with pytest.raises(InvalidArgumentError):
        dev.get_attr(17)


def test_workspace_cap_reports_free_and_largest(registry):
    d = registry.create_device("c", {"workspace_bytes": 1000})
    d.init(); d.open()
    d.alloc_data_space(600)
    with pytest.raises(DeviceMemoryError, match=r"requested 500 B, free 400 B, largest free block 400 B"):
        d.alloc_data_space(500)
    assert d.get_attr(DeviceAttrKind.kAvailableGlobalMemory) == 400
    d.release()


def test_target_property_and_pointer_arithmetic(dev):
    assert dev.get_target_property("mcpu") == ""
    assert dev.get_target_property("nonexistent") is None
    assert dev.supports_device_pointer_arithmetics_on_host() is True
