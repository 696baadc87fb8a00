"""The ethos-u device: its lifecycle's power states and counters, and its Vela-mirroring options."""

from __future__ import annotations

import pytest
from tvmdevice.errors import TargetOptionError
from tvmdevice.plugin import Status
from tvmdevice.target import Target

import tvmdevice_ethosu
from tvmdevice_ethosu import _ethosu
from tvmdevice_ethosu.device import DEVICE_TYPE, LAYOUT


def test_power_state_and_transitions_follow_the_lifecycle(make_device):
    d = make_device("initialized")
    assert tvmdevice_ethosu.counters(d)["power_state"] == "OFF"
    d.open()
    assert tvmdevice_ethosu.counters(d)["power_state"] == "IDLE"
    d.activate()
    assert tvmdevice_ethosu.counters(d)["power_state"] == "ACTIVE"
    d.deactivate()
    d.activate()
    d.deactivate()
    d.close()
    c = tvmdevice_ethosu.counters(d)
    assert c["power_state"] == "OFF"
    assert c["transitions"] == {"init": 1, "open": 1, "activate": 2, "deactivate": 2, "close": 1, "destroy": 0}
    assert (c["launches"], c["commands"], c["operations"], c["macs"], c["dma_bytes"]) == (0, 0, 0, 0, 0)


def test_the_c_lifecycle_refuses_steps_out_of_order():
    import numpy as np

    struct = np.zeros(_ethosu.STRUCT_SIZE, np.uint8)
    handle = struct.ctypes.data
    assert _ethosu.activate(handle) == Status.INVALID_STATE  # never initialized
    assert _ethosu.init(handle) == Status.OK
    assert _ethosu.init(handle) == Status.INVALID_STATE  # twice
    assert _ethosu.activate(handle) == Status.INVALID_STATE  # not opened
    assert _ethosu.open(handle) == Status.OK
    assert _ethosu.close(handle) == Status.OK
    assert _ethosu.deactivate(handle) == Status.INVALID_STATE  # not active
    assert _ethosu.open(handle) == Status.OK
    assert _ethosu.destroy(handle) == Status.INVALID_STATE  # still powered
    assert _ethosu.close(handle) == Status.OK
    assert _ethosu.destroy(handle) == Status.OK
    assert _ethosu.open(handle) == Status.INVALID_STATE  # destroyed


def test_the_struct_is_the_layout():
    assert _ethosu.STRUCT_SIZE == LAYOUT.size


def test_option_values_are_vela_s_own():
    from ethosu.vela.architecture_features import Accelerator

    options = {o.name: o for o in DEVICE_TYPE.options}
    assert set(options["accelerator_config"].choices) == {a.value for a in Accelerator if "u85" not in a.value}
    assert "Ethos_U55_High_End_Embedded" in options["system_config"].choices
    assert "Shared_Sram" in options["memory_mode"].choices
    assert not any("U85" in c for c in options["system_config"].choices)


@pytest.mark.parametrize("target, words", [
    ("ethos-u -accelerator_config=ethos-u55-12, c", r"did you mean .*'ethos-u55-128'"),
    ("ethos-u -system_config=Ethos_U55_High_End, c", r"did you mean .*'Ethos_U55_High_End_Embedded'"),
    ("ethos-u -memory_mode=Shared_Sam, c", r"did you mean .*'Shared_Sram'"),
    ("ethos-u -optimise=size, c", r"did you mean .*'Size'"),
])
def test_bad_values_are_refused_with_did_you_mean(registry, target, words):
    with pytest.raises(TargetOptionError, match=words):
        Target.parse(target, registry)


def test_u85_is_refused(registry):
    with pytest.raises(TargetOptionError, match="ethos-u85-256"):
        Target.parse("ethos-u -accelerator_config=ethos-u85-256, c", registry)
