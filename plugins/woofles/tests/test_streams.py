"""DMA copies on streams: asynchronous until StreamSync, ordered per stream, SyncStreamFromTo."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tvmdevice.device import HOST_MEMORY
from tvmdevice.errors import DeviceMemoryError

import tvmdevice_woofles
from tvmdevice_woofles import _woofles
from tvmdevice_woofles.device import MAX_STREAMS, QUEUE_DEPTH

N = 256


def enqueue_download(device, ptr, out, stream=None):
    """A device -> host copy without the StreamSync that Device.download adds."""
    device.copy_data_from_to(ptr, 0, out, 0, out.nbytes, device, HOST_MEMORY, None, stream)


def enqueue_copy(device, src, dst, nbytes, stream=None):
    device.copy_data_from_to(src, 0, dst, 0, nbytes, device, device, None, stream)


def pattern(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, N, dtype=np.uint8)


def test_download_is_not_visible_before_stream_sync(device):
    ptr = device.alloc_data_space(N)
    device.upload(pattern(1), ptr)
    out = np.zeros(N, np.uint8)
    enqueue_download(device, ptr, out)
    assert not out.any(), "the copy landed before StreamSync"
    device.stream_sync(0)
    np.testing.assert_array_equal(out, pattern(1))


def test_upload_captures_host_data_at_enqueue(device):
    ptr = device.alloc_data_space(N)
    src = pattern(2)
    device.upload(src, ptr)
    src[:] = 0  # reusing the host buffer right away is safe
    np.testing.assert_array_equal(device.download(ptr, np.zeros(N, np.uint8)), pattern(2))


def test_transfers_on_one_stream_retire_in_order(device):
    a, b = device.alloc_data_space(N), device.alloc_data_space(N)
    device.upload(pattern(3), a)
    enqueue_copy(device, a, b, N)  # reads what the upload before it wrote
    device.upload(pattern(4), a)  # and is not disturbed by the upload after it
    np.testing.assert_array_equal(device.download(b, np.zeros(N, np.uint8)), pattern(3))
    np.testing.assert_array_equal(device.download(a, np.zeros(N, np.uint8)), pattern(4))


def test_streams_are_independent_without_sync_stream_from_to(device):
    a, b = device.alloc_data_space(N), device.alloc_data_space(N)
    s1, s2 = device.create_stream(), device.create_stream()
    device.upload(pattern(5), a, stream=s1)
    enqueue_copy(device, a, b, N, stream=s2)
    device.stream_sync(s2)  # runs s2 only: the copy reads a before s1's upload
    np.testing.assert_array_equal(device.download(b, np.ones(N, np.uint8)), np.zeros(N, np.uint8))
    device.stream_sync(s1)
    np.testing.assert_array_equal(device.download(a, np.zeros(N, np.uint8)), pattern(5))


def test_sync_stream_from_to_orders_dst_after_src(device):
    a, b = device.alloc_data_space(N), device.alloc_data_space(N)
    s1, s2 = device.create_stream(), device.create_stream()
    device.upload(pattern(6), a, stream=s1)
    device.sync_stream_from_to(s1, s2)
    enqueue_copy(device, a, b, N, stream=s2)
    device.upload(pattern(7), a, stream=s1)  # queued on s1 after the event: not waited for
    device.stream_sync(s2)
    np.testing.assert_array_equal(device.download(b, np.zeros(N, np.uint8)), pattern(6))
    h = device.handle_address
    assert _woofles.stream_completed(h, s1) == 1  # exactly the work before the event


def test_current_stream_is_used_when_none_is_given(device):
    s = device.create_stream()
    device.set_stream(s)
    assert device.get_current_stream() == s
    ptr = device.alloc_data_space(N)
    device.upload(pattern(8), ptr)  # stream=None: the current stream
    out = np.zeros(N, np.uint8)
    enqueue_download(device, ptr, out)
    device.stream_sync(0)
    assert not out.any()  # the default stream had nothing queued
    device.stream_sync(s)
    np.testing.assert_array_equal(out, pattern(8))
    device.set_stream(0)
    assert device.get_current_stream() == 0


def test_free_stream_finishes_its_work_first(device):
    s = device.create_stream()
    ptr = device.alloc_data_space(N)
    device.upload(pattern(9), ptr, stream=s)
    out = np.zeros(N, np.uint8)
    enqueue_download(device, ptr, out, stream=s)
    device.free_stream(s)
    np.testing.assert_array_equal(out, pattern(9))


def test_stream_handles_are_unique_nonzero_and_limited(device):
    streams = [device.create_stream() for _ in range(MAX_STREAMS - 1)]
    assert 0 not in streams and len(set(streams)) == len(streams)
    with pytest.raises(DeviceMemoryError, match="streams"):
        device.create_stream()
    device.free_stream(streams[0])
    assert device.create_stream() == streams[0]


def test_a_full_queue_retires_its_oldest_transfer(device):
    ptrs = [device.alloc_data_space(16) for _ in range(QUEUE_DEPTH + 4)]
    for k, ptr in enumerate(ptrs):
        device.upload(np.full(16, k, np.uint8), ptr)
    assert _woofles.stream_completed(device.handle_address, 0) == 4  # the host blocked on 4 transfers
    device.stream_sync(0)
    for k, ptr in enumerate(ptrs):
        np.testing.assert_array_equal(device.download(ptr, np.zeros(16, np.uint8)), np.full(16, k, np.uint8))


def test_close_drains_pending_downloads(make_device):
    d = make_device("opened")
    ptr = d.alloc_data_space(N)
    d.upload(pattern(10), ptr)
    out = np.zeros(N, np.uint8)
    enqueue_download(d, ptr, out)
    d.free_data_space(ptr)
    d.close()  # the SRAM stays powered until the queue is empty
    np.testing.assert_array_equal(out, pattern(10))


def test_overlapping_sram_to_sram_copy(device):
    ptr = device.alloc_data_space(2 * N)
    data = np.arange(2 * N, dtype=np.uint16).astype(np.uint8)
    device.upload(data, ptr)
    device.copy_data_from_to(ptr, 0, ptr, 10, N, device, device)
    expected = data.copy()
    expected[10:10 + N] = data[:N]
    np.testing.assert_array_equal(device.download(ptr, np.zeros(2 * N, np.uint8)), expected)


@settings(max_examples=25, deadline=None)
@given(nbytes=st.integers(1, 5000), bpc=st.integers(1, 64), offset=st.integers(0, 100))
def test_dma_cycles_follow_the_bandwidth(registry, nbytes, bpc, offset):
    d = registry.create_device("woofles", {"dma_bytes_per_cycle": bpc})
    d.init()
    d.open()
    try:
        ptr = d.alloc_data_space(nbytes + offset)
        before = tvmdevice_woofles.counters(d)
        d.upload(np.ones(nbytes, np.uint8), ptr, offset)
        d.stream_sync(0)
        after = tvmdevice_woofles.counters(d)
        expected = math.ceil(nbytes / bpc) + _woofles.DMA_SETUP_CYCLES
        assert after["cycles_last_call"] == expected
        assert after["dma_cycles"] - before["dma_cycles"] == expected
        assert after["dma_bytes"] - before["dma_bytes"] == nbytes
        assert after["cycles_in_state"]["SLEEP"] - before["cycles_in_state"]["SLEEP"] == expected
    finally:
        d.release()


def test_download_on_the_current_stream_is_synchronised(device):
    s = device.create_stream()
    ptr = device.alloc_data_space(N)
    device.upload(pattern(11), ptr, stream=s)
    device.set_stream(s)
    np.testing.assert_array_equal(device.download(ptr, np.zeros(N, np.uint8)), pattern(11))
