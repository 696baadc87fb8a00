"""GetAttr for every DeviceAttrKind, and target properties."""

from __future__ import annotations

import pytest
from tvmdevice.attrs import DeviceAttrKind as K

APPLICABLE = {K.kExist, K.kDeviceName, K.kMaxClockRate, K.kMultiProcessorCount, K.kApiVersion,
              K.kTotalGlobalMemory, K.kAvailableGlobalMemory}


@pytest.mark.parametrize("kind", list(K))
def test_every_attribute_kind(make_device, kind):
    d = make_device(sram_kb=64, clock_mhz=250, mac_width=32)
    d.alloc_data_space(1000, 1)
    expected = {
        K.kExist: 1,
        K.kDeviceName: "woofles",
        K.kMaxClockRate: 250_000,  # kHz
        K.kMultiProcessorCount: 32,
        K.kApiVersion: 1,
        K.kTotalGlobalMemory: 64 * 1024,
        K.kAvailableGlobalMemory: 64 * 1024 - 1000,
    }
    value = d.get_attr(kind)
    if kind in APPLICABLE:
        assert value == expected[kind]
    else:
        assert value is None  # not applicable, as TVM leaves the value unset


def test_exist_is_zero_before_init_and_available_memory_when_closed(make_device):
    d = make_device("uninitialized")
    assert d.get_attr(K.kExist) == 0
    d.init()
    assert d.get_attr(K.kExist) == 1
    assert d.get_attr(K.kAvailableGlobalMemory) == 256 * 1024  # all of it, at the next Open


def test_target_properties_are_the_options(make_device):
    d = make_device("initialized", sram_kb=128)
    assert d.get_target_property("sram_kb") == 128
    assert d.get_target_property("mac_width") == 64
    assert d.get_target_property("no_such_property") is None
