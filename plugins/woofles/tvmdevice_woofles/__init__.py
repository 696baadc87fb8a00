"""tvmdevice-woofles: the ``woofles`` simulated NPU for tvmdevice.

The plugin itself is :mod:`tvmdevice_woofles.plugin` (entry point group
``tvmdevice``).  Importing this package is cheap: the compiled extensions are
loaded only when a device is used or an operator is prepared.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .device import DEVICE_TYPE, LAYOUT, TRANSITIONS, PowerState

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.device import Device

__version__ = "0.1.0"

__all__ = ["__version__", "DEVICE_TYPE", "counters"]


def counters(device: "Device") -> dict[str, Any]:
    """The woofles device's counters, read from its ``tvm_device_woofles_t``.

    :param device: a woofles :class:`~tvmdevice.device.Device` (any state).
    :returns: a dict with ``cycles_total`` (since Init), ``cycles_run`` (since
        the last Activate), ``cycles_last_call`` (last kernel launch or DMA
        transfer), ``kernel_cycles``, ``dma_cycles``, ``kernel_calls``,
        ``dma_transfers``, ``dma_bytes``, ``bytes_in_use``,
        ``peak_bytes_in_use``, ``power_state`` (name), ``transitions``
        (name -> count), ``cycles_in_state`` and ``ns_in_state`` (power state
        name -> cycles / host ns, the current state's time included), and
        ``estimated_us_total`` / ``estimated_us_run`` (cycles / clock).
    :raises TypeError: for a device that is not a woofles device.
    """
    if device.type.name != DEVICE_TYPE.name:
        raise TypeError(f"counters() reads woofles devices, not {device.type.name!r}")
    from tvmdevice.layout import struct_view

    f = struct_view(LAYOUT, device.handle)
    scalar = {name: int(f[name][0]) for name in (
        "cycles_total", "cycles_run", "cycles_last_call", "kernel_cycles", "dma_cycles", "kernel_calls",
        "dma_transfers", "dma_bytes", "bytes_in_use", "peak_bytes_in_use")}
    power = PowerState(int(f["power_state"][0]))
    ns = [int(v) for v in f["ns_in_state"]]
    since = int(f["state_since_ns"][0])
    if since:
        ns[power] += max(time.monotonic_ns() - since, 0)
    clock_mhz = max(int(f["clock_mhz"][0]), 1)
    return {
        **scalar,
        "power_state": power.name,
        "transitions": {name: int(v) for name, v in zip(TRANSITIONS, f["transitions"])},
        "cycles_in_state": {s.name: int(f["cycles_in_state"][s]) for s in PowerState},
        "ns_in_state": {s.name: ns[s] for s in PowerState},
        "estimated_us_total": scalar["cycles_total"] / clock_mhz,
        "estimated_us_run": scalar["cycles_run"] / clock_mhz,
    }
