"""The firmware platform's errors: each one line that says what failed and what to do.

All derive from :class:`FirmwareError`, itself a :class:`tvmdevice.errors.TVMDeviceError`, so a caller
catching the project's root error catches these too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import Status, TVMDeviceError

if TYPE_CHECKING:  # pragma: no cover
    from .run import RunResult

__all__ = [
    "FirmwareError",
    "ToolchainMissingError",
    "FirmwareBuildError",
    "FirmwareTimeoutError",
    "FirmwareRunError",
]


class FirmwareError(TVMDeviceError):
    """Root of the errors raised while building, running or measuring a firmware image."""


class ToolchainMissingError(FirmwareError):
    """A tool a CPU needs (compiler, C library, emulator) is not installed; the message names the package."""

    status = Status.NOT_SUPPORTED

    def __init__(self, message: str, packages: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        #: the Debian packages that provide the missing tool
        self.packages = packages


class FirmwareBuildError(FirmwareError):
    """The compiler or linker failed; the message holds its first error, :attr:`log` all of its output."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        #: the compiler's whole diagnostic output
        self.log = log


class FirmwareTimeoutError(FirmwareError):
    """A run went past its time limit; the process was killed."""


class FirmwareRunError(FirmwareError):
    """A run ended with a non-zero status, a CPU fault, or an emulator that could not start."""

    status = Status.KERNEL

    def __init__(self, message: str, result: "RunResult | None" = None) -> None:
        super().__init__(message)
        #: what the run produced (stdout, stderr, status), when it got that far
        self.result = result
