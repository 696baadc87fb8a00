"""TVM's naming convention for device symbols.

A device is named by its TVM target kind or external compiler name; C symbols
derive from it: ``cmsis-nn`` -> member ``cmsis_nn``, type
``tvm_device_cmsis_nn_t``, hooks ``TVMDeviceCmsisNnOpen``.
"""

from __future__ import annotations

import re

__all__ = ["validate_device_name", "c_name", "camel_name", "struct_type", "hook_symbol"]

_NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")


def validate_device_name(name: str) -> str:
    """Return ``name`` if it is a valid device name, else raise ``ValueError``.

    Valid names are lower-case words of letters and digits joined by ``-`` or
    ``_`` (``woofles``, ``cmsis-nn``), so that every derived C symbol is legal.
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"invalid device name {name!r}: use lower-case letters and digits, words joined by '-' or '_'"
        )
    return name


def c_name(name: str) -> str:
    """``cmsis-nn`` -> ``cmsis_nn`` (struct member and file name part)."""
    return validate_device_name(name).replace("-", "_")


def camel_name(name: str) -> str:
    """``cmsis-nn`` -> ``CmsisNn`` (hook symbol part)."""
    return "".join(part.capitalize() for part in c_name(name).split("_"))


def struct_type(name: str) -> str:
    """``cmsis-nn`` -> ``tvm_device_cmsis_nn_t``."""
    return f"tvm_device_{c_name(name)}_t"


def hook_symbol(name: str, hook: str) -> str:
    """``("cmsis-nn", "Open")`` -> ``TVMDeviceCmsisNnOpen``."""
    return f"TVMDevice{camel_name(name)}{hook}"
