"""One error hierarchy, rooted at :class:`TVMDeviceError`.

Every class carries the C status code (``tvmd_status_t`` in
``include/tvmdevice/c_device_api.h``) it maps to, so an error raised by a
Python hook and a non-zero status returned by a C function mean the same
thing.  Messages name the plugin, device and operator involved and say what
to do next.
"""

from __future__ import annotations

import enum

__all__ = [
    "Status",
    "TVMDeviceError",
    "LifecycleError",
    "DeviceMemoryError",
    "InvalidArgumentError",
    "NotSupportedError",
    "ABIMismatchError",
    "KernelError",
    "PluginError",
    "PluginLoadError",
    "PluginValidationError",
    "IncompatiblePluginError",
    "DuplicateDeviceError",
    "TargetError",
    "UnknownDeviceError",
    "TargetOptionError",
    "ModelError",
    "PlacementError",
    "error_for_status",
    "LeakWarning",
    "PluginWarning",
]


class Status(enum.IntEnum):
    """The C status codes, as in ``tvmd_status_t``."""

    OK = 0
    GENERIC = 1
    INVALID_STATE = 2
    OUT_OF_MEMORY = 3
    INVALID_ARGUMENT = 4
    NOT_SUPPORTED = 5
    ABI_MISMATCH = 6
    KERNEL = 7
    PLUGIN = 8


class TVMDeviceError(Exception):
    """Root of every error tvmdevice raises on purpose."""

    status: Status = Status.GENERIC


class LifecycleError(TVMDeviceError):
    """An illegal lifecycle transition (e.g. Activate before Open)."""

    status = Status.INVALID_STATE


class DeviceMemoryError(TVMDeviceError):
    """Device memory exhausted, or a pointer that the device does not own."""

    status = Status.OUT_OF_MEMORY


class InvalidArgumentError(TVMDeviceError, ValueError):
    """A bad size, alignment, offset, pointer or option value."""

    status = Status.INVALID_ARGUMENT


class NotSupportedError(TVMDeviceError):
    """The device does not implement this operation or attribute."""

    status = Status.NOT_SUPPORTED


class ABIMismatchError(TVMDeviceError):
    """A C struct or kernel was built against another ABI version or size."""

    status = Status.ABI_MISMATCH


class KernelError(TVMDeviceError):
    """A kernel returned a non-zero status or raised while running."""

    status = Status.KERNEL


class PluginError(TVMDeviceError):
    """Base of the errors about device plugins."""

    status = Status.PLUGIN


class PluginLoadError(PluginError):
    """A plugin's entry point could not be imported or loaded."""


class PluginValidationError(PluginError):
    """A plugin does not satisfy the hookspecs or declared invalid device types."""


class IncompatiblePluginError(PluginValidationError):
    """A plugin was written for a plugin API version this core does not support."""


class DuplicateDeviceError(PluginError):
    """Two plugins declare the same device name or alias."""


class TargetError(TVMDeviceError, ValueError):
    """A target string that cannot be parsed or does not make sense."""

    status = Status.INVALID_ARGUMENT


class UnknownDeviceError(TargetError):
    """A target names a device no installed plugin provides."""


class TargetOptionError(TargetError):
    """An unknown target option, or a value of the wrong type."""


class ModelError(TVMDeviceError, ValueError):
    """A model file that cannot be imported (malformed or unsupported)."""

    status = Status.INVALID_ARGUMENT


class PlacementError(TVMDeviceError):
    """An operator no device of the target can run (or strict mode refused the host)."""

    status = Status.NOT_SUPPORTED


class LeakWarning(ResourceWarning):
    """Device memory, workspace or streams still allocated at Close (the framework freed them)."""


class PluginWarning(UserWarning):
    """A plugin was skipped because it failed to load or validate."""


_BY_STATUS: dict[Status, type[TVMDeviceError]] = {
    Status.GENERIC: TVMDeviceError,
    Status.INVALID_STATE: LifecycleError,
    Status.OUT_OF_MEMORY: DeviceMemoryError,
    Status.INVALID_ARGUMENT: InvalidArgumentError,
    Status.NOT_SUPPORTED: NotSupportedError,
    Status.ABI_MISMATCH: ABIMismatchError,
    Status.KERNEL: KernelError,
    Status.PLUGIN: PluginError,
}


def error_for_status(status: int, message: str) -> TVMDeviceError:
    """The exception for a non-zero C status code (unknown codes map to the root class)."""
    try:
        cls = _BY_STATUS[Status(status)]
    except ValueError:
        cls = TVMDeviceError
        message = f"{message} (unknown status code {status})"
    return cls(message)
