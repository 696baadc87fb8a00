"""SRAM allocation: device addresses, alignment, first fit, out-of-memory reporting, refused frees."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tvmdevice.attrs import DeviceAttrKind
from tvmdevice.device_type import MemoryKind
from tvmdevice.errors import DeviceMemoryError, LeakWarning, Status
from tvmdevice.memory import address_of

import tvmdevice_woofles
from tvmdevice_woofles import _woofles
from tvmdevice_woofles.device import MAX_BLOCKS, SRAM_BASE


def sram_window(device) -> tuple[int, int]:
    return SRAM_BASE, SRAM_BASE + device.options["sram_kb"] * 1024


def test_addresses_are_device_addresses_not_host_pointers(device):
    assert device.memory is MemoryKind.SEPARATE
    assert device.supports_device_pointer_arithmetics_on_host() is False
    lo, hi = sram_window(device)
    backing = device.plugin_state["sram"]
    host_lo = address_of(backing)
    for n in (1, 100, 4096):
        ptr = device.alloc_data_space(n)
        assert lo <= ptr and ptr + n <= hi
        assert not host_lo <= ptr < host_lo + backing.nbytes


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3000), st.sampled_from([1, 2, 4, 16, 64, 256, 4096])),
                min_size=1, max_size=30))
def test_alignment_honoured_and_blocks_disjoint(registry, requests):
    d = registry.create_device("woofles", {"sram_kb": 128})
    d.init()
    d.open()
    try:
        blocks = []
        for nbytes, alignment in requests:
            ptr = d.alloc_data_space(nbytes, alignment)
            assert ptr % alignment == 0
            blocks.append((ptr, max(nbytes, 1)))
        blocks.sort()
        for (a, na), (b, _) in zip(blocks, blocks[1:]):
            assert a + na <= b, "overlapping blocks"
        lo, hi = sram_window(d)
        assert lo <= blocks[0][0] and blocks[-1][0] + blocks[-1][1] <= hi
        assert tvmdevice_woofles.counters(d)["bytes_in_use"] == sum(n for _, n in blocks)
        for ptr, _ in blocks:
            d.free_data_space(ptr)
        assert tvmdevice_woofles.counters(d)["bytes_in_use"] == 0
    finally:
        d.release()


def test_zero_byte_allocations_are_unique(device):
    ptrs = {device.alloc_data_space(0, 1) for _ in range(5)}
    assert len(ptrs) == 5


def test_first_fit_reuses_the_lowest_gap(device):
    a = device.alloc_data_space(1024, 64)
    b = device.alloc_data_space(1024, 64)
    c = device.alloc_data_space(1024, 64)
    device.free_data_space(b)
    assert device.alloc_data_space(512, 64) == b  # fits in b's gap, before anything after c
    assert device.alloc_data_space(1024, 64) > c
    device.free_data_space(a)


def test_out_of_memory_reports_requested_free_and_largest_block(make_device):
    d = make_device(sram_kb=4)  # 4096 bytes
    blocks = [d.alloc_data_space(512, 1) for _ in range(8)]  # fills the SRAM exactly
    d.free_data_space(blocks[1])
    d.free_data_space(blocks[2])  # one 1024-byte gap
    d.free_data_space(blocks[5])  # one 512-byte gap
    with pytest.raises(DeviceMemoryError) as err:
        d.alloc_data_space(1500, 1)
    numbers = {k: int(v) for k, v in re.findall(r"(requested|free|largest free block) (\d+) B", str(err.value))}
    assert numbers == {"requested": 1500, "free": 1536, "largest free block": 1024}
    assert d.get_attr(DeviceAttrKind.kAvailableGlobalMemory) == 1536
    assert d.alloc_data_space(1024, 1) == blocks[1]  # the largest block really is there


def test_allocation_table_full_is_reported(make_device):
    d = make_device()
    for _ in range(MAX_BLOCKS):
        d.alloc_data_space(1, 1)
    with pytest.raises(DeviceMemoryError, match="allocation table is full"):
        d.alloc_data_space(1, 1)


def test_alignment_larger_than_sram_is_refused(make_device):
    d = make_device(sram_kb=1)
    with pytest.raises(Exception, match="alignment"):
        d.alloc_data_space(16, 4096)


def test_double_free_and_foreign_pointers_are_refused(device):
    ptr = device.alloc_data_space(64)
    live = device.alloc_data_space(64)
    device.free_data_space(ptr)
    with pytest.raises(DeviceMemoryError, match="double free or foreign pointer"):
        device.free_data_space(ptr)
    host = np.zeros(64, np.uint8)
    for foreign in (address_of(host), SRAM_BASE + 12345, live + 8):
        with pytest.raises(DeviceMemoryError, match="double free or foreign pointer"):
            device.free_data_space(foreign)
    device.free_data_space(live)  # the refusals left the live block alone


def test_the_device_itself_refuses_unknown_blocks(device):
    ptr = device.alloc_data_space(64, 64)
    h = device.handle_address
    assert _woofles.free(h, ptr + 1) == Status.INVALID_ARGUMENT  # not the start of a block
    assert _woofles.free(h, 0x1000) == Status.INVALID_ARGUMENT  # outside the SRAM window
    assert _woofles.free(h, ptr) == Status.OK
    assert _woofles.free(h, ptr) == Status.INVALID_ARGUMENT  # double free, past the framework


def test_close_frees_leftovers_with_a_warning(make_device):
    d = make_device("opened")
    d.alloc_data_space(1000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d.close()
    assert any(issubclass(w.category, LeakWarning) for w in caught)
    assert tvmdevice_woofles.counters(d)["bytes_in_use"] == 0


def test_peak_bytes_in_use(device):
    a = device.alloc_data_space(3000, 1)
    device.free_data_space(a)
    device.alloc_data_space(100, 1)
    c = tvmdevice_woofles.counters(device)
    assert (c["bytes_in_use"], c["peak_bytes_in_use"]) == (100, 3000)


def test_scoped_allocation_global_only(device):
    from tvmdevice.errors import NotSupportedError

    ptr = device.alloc_data_space_scoped((4, 8), "int8")
    lo, hi = sram_window(device)
    assert lo <= ptr < hi
    with pytest.raises(NotSupportedError):
        device.alloc_data_space_scoped((4, 8), "int8", "texture")
    data = np.arange(32, dtype=np.int8).reshape(4, 8)
    device.upload(data, ptr)
    np.testing.assert_array_equal(device.download(ptr, np.zeros_like(data)), data)
