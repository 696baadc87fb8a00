"""Errors raised while importing a model file.

Both derive from :class:`tvmdevice.errors.ModelError` (itself a
``ValueError``), so callers can catch "this model cannot be used" in one place
and still tell a broken file from a valid file that asks for something
tvmdevice does not implement.
"""

from __future__ import annotations

from tvmdevice.errors import ModelError, Status

__all__ = ["ModelFormatError", "UnsupportedOperatorError"]


class ModelFormatError(ModelError):
    """The file is not a well-formed model: bad identifier, truncated data,
    out-of-range indices, inconsistent shapes or sizes."""


class UnsupportedOperatorError(ModelError):
    """The file is well formed but uses an operator, option, data type or
    quantization that tvmdevice does not implement.

    The message names the operator index and type and what is unsupported.
    """

    status = Status.NOT_SUPPORTED
