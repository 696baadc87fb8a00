"""One error hierarchy, rooted at :class:`TVMDeviceError`.

Every class carries the C status code (``tvmd_status_t`` in
``include/tvmdevice/c_device_api.h``) it maps to, so an error raised by a
Python hook and a non-zero status returned by a C function mean the same
thing.  Messages name the plugin, device and operator involved and say what
to do next.
"""

from __future__ import annotations

import copy
import enum
from typing import Any, Sequence

__all__ = [
    "Status",
    "TVMDeviceError",
    "LifecycleError",
    "DeviceMemoryError",
    "InvalidArgumentError",
    "TensorUnavailableError",
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
    "ModelFormatError",
    "UnsupportedOperatorError",
    "Refusal",
    "PlacementError",
    "TeardownError",
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


class TensorUnavailableError(TVMDeviceError, KeyError):
    """A tensor an executor cannot show: out of range, or never held in any memory (folded away, or
    read and written by no operator).  A :class:`KeyError` too, for code that looked tensors up as keys."""

    status = Status.INVALID_ARGUMENT

    def __str__(self) -> str:
        # KeyError's own str() quotes its argument as a key; this is a sentence
        return str(self.args[0]) if self.args else ""


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


class ModelFormatError(ModelError, InvalidArgumentError):
    """The model is not well formed: bad identifier, truncated data, out-of-range
    indices, inconsistent shapes or sizes, or an operator whose operands or
    options contradict each other (an invalid argument to whatever reads it)."""


class UnsupportedOperatorError(ModelError):
    """The file is well formed but uses an operator, option, data type or
    quantization that tvmdevice does not implement.

    The message names the operator index and type and what is unsupported.
    """

    status = Status.NOT_SUPPORTED


class Refusal(NotSupportedError):
    """An operator's parameters are outside what a kernel supports; the reason says what.

    Raised by :func:`tvmdevice.ops.analyze` for parameters no TFLM int8 kernel
    accepts, and by a device's ``tvmdevice_prepare_operator`` for its own
    limits; placement records it and tries the next device.

    :param reason: what is unsupported, without the operator or device.
    :param op: the operator (anything with ``index`` and ``type``, or
        ``op_index`` and ``op_type``), if known.
    :param device: the device's name, if known.
    """

    def __init__(self, reason: str, *, op: Any = None, device: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.op_index: int | None = None
        self.op_type: str | None = None
        self.device = device
        if op is not None:
            self.op_index = int(getattr(op, "index", getattr(op, "op_index", -1)))
            self.op_type = str(getattr(op, "type", getattr(op, "op_type", "?")))

    def __str__(self) -> str:
        parts = []
        if self.op_index is not None:
            parts.append(f"operator #{self.op_index} {self.op_type}")
        if self.device is not None:
            parts.append(f"on {self.device!r}" if parts else f"device {self.device!r}")
        return f"{' '.join(parts)}: {self.reason}" if parts else self.reason

    def with_context(self, *, op: Any = None, device: str | None = None) -> "Refusal":
        """A copy with the operator and/or device set (the others kept)."""
        other = copy.copy(self)
        if op is not None:
            other.op_index = int(getattr(op, "index", getattr(op, "op_index", -1)))
            other.op_type = str(getattr(op, "type", getattr(op, "op_type", "?")))
        if device is not None:
            other.device = device
        return other


class PlacementError(TVMDeviceError):
    """An operator no device of the target can run (or strict mode refused the host)."""

    status = Status.NOT_SUPPORTED


class TeardownError(TVMDeviceError):
    """Several steps of a teardown failed; every step still ran.

    Closing an executor or releasing a device runs each free and each
    lifecycle step even after an earlier one failed, then raises what went
    wrong together: one error as itself, several as a ``TeardownError``
    (Python 3.10 has no ``ExceptionGroup``).  The first error is also the
    ``__cause__``, and its status is this error's status.

    :param what: what was being torn down (``"closing the executor"``).
    :param errors: the errors, in the order they occurred (at least one).
    :ivar errors: the same, as a tuple.
    """

    def __init__(self, what: str, errors: Sequence[BaseException]) -> None:
        if not errors:
            raise ValueError("TeardownError needs at least one error")
        self.errors: tuple[BaseException, ...] = tuple(errors)
        first = self.errors[0]
        self.status = first.status if isinstance(first, TVMDeviceError) else Status.GENERIC
        listed = "\n".join(f"  {k}. {type(e).__name__}: {e}" for k, e in enumerate(self.errors, 1))
        super().__init__(f"{what}: {len(self.errors)} steps failed (every other step still ran):\n{listed}")
        self.__cause__ = first


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
    """The exception for a non-zero C status code.

    A code outside ``tvmd_status_t`` (a plugin's own, or garbage) is never an
    error of its own: it maps to :class:`TVMDeviceError` and the message
    names the code, so every plugin that reports C statuses through this
    function handles unknown codes the same way.  So does 0 (``TVMD_OK``)
    reported as a failure.
    """
    try:
        cls: type[TVMDeviceError] | None = _BY_STATUS.get(Status(status))
    except (ValueError, TypeError):
        cls = None
    if cls is None:
        code = "0 (TVMD_OK) reported as a failure" if status == 0 else \
            f"unknown status code {status!r}, not one of tvmd_status_t"
        return TVMDeviceError(f"{message} ({code})" if message else code)
    return cls(message)
