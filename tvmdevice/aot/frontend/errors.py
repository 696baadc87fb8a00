"""Errors raised while importing a model file (re-exported from :mod:`tvmdevice.errors`).

Both derive from :class:`tvmdevice.errors.ModelError` (itself a
``ValueError``), so callers can catch "this model cannot be used" in one place
and still tell a broken file from a valid file that asks for something
tvmdevice does not implement.
"""

from __future__ import annotations

from tvmdevice.errors import ModelFormatError, UnsupportedOperatorError

__all__ = ["ModelFormatError", "UnsupportedOperatorError"]
