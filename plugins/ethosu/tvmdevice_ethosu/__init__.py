"""tvmdevice-ethosu: the ``ethos-u`` device (Arm Ethos-U55/U65 through Vela) for tvmdevice.

The plugin itself is :mod:`tvmdevice_ethosu.plugin` (entry point group
``tvmdevice``).  The compiled extension loads only when a device is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .device import DEVICE_TYPE, LAYOUT, TRANSITIONS, PowerState

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.device import Device

__version__ = "0.1.0"

__all__ = ["__version__", "DEVICE_TYPE", "counters"]


def counters(device: "Device") -> dict[str, Any]:
    """The ethos-u device's counters, read from its ``tvm_device_ethos_u_t``.

    :param device: an ethos-u :class:`~tvmdevice.device.Device` (any state).
    :returns: ``power_state`` (name), ``launches``, ``commands``, ``operations``,
        ``macs``, ``dma_bytes`` (since the last Open) and ``transitions``
        (name -> count).
    :raises TypeError: for a device that is not an ethos-u device.
    """
    if device.type.name != DEVICE_TYPE.name:
        raise TypeError(f"counters() reads ethos-u devices, not {device.type.name!r}")
    from tvmdevice.plugin import struct_view

    f = struct_view(LAYOUT, device.handle)
    return {
        "power_state": PowerState(int(f["power_state"][0])).name,
        **{name: int(f[name][0]) for name in ("launches", "commands", "operations", "macs", "dma_bytes")},
        "transitions": {name: int(v) for name, v in zip(TRANSITIONS, f["transitions"])},
    }
