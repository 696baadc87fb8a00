"""tvmdevice: a pluggable C Device API for running int8 models on microcontroller accelerators.

Public face of the package.  Importing it is cheap: plugins are discovered on
first use of :func:`registry`, and the AOT layer loads when first touched.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

# first: refuses, in one line, a copy of the package whose C extensions were never built
from . import _built  # noqa: F401
from .attrs import DeviceAttrKind
from .device import Device
from .device_type import PLUGIN_API_VERSION, DeviceType, MemoryKind
from .errors import TVMDeviceError
from .hookspecs import hookimpl, hookspec
from .kernel import PreparedCall
from .layout import Field, Layout
from .lifecycle import State
from .options import TargetOption

if TYPE_CHECKING:  # pragma: no cover
    from .registry import Registry
    from .target import Target

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "Device",
    "DeviceAttrKind",
    "DeviceType",
    "Field",
    "Layout",
    "MemoryKind",
    "PLUGIN_API_VERSION",
    "PreparedCall",
    "State",
    "TVMDeviceError",
    "Target",
    "TargetOption",
    "compile",
    "get_include",
    "hookimpl",
    "hookspec",
    "get_registry",
    "register",
    "set_registry",
]

_registry: "Registry | None" = None


def get_include() -> str:
    """Directory holding the C headers plugins build against (``tvmdevice/*.h``).

    The matching Cython declarations are the ``.pxd`` files of this package:
    ``from tvmdevice.kernel_abi cimport tvmd_kernel_t``.
    """
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "include")


def get_registry() -> "Registry":
    """The process-wide :class:`~tvmdevice.registry.Registry` (created on first use)."""
    global _registry
    if _registry is None:
        from .registry import Registry

        _registry = Registry()
    return _registry


def set_registry(new: "Registry | None" = None) -> "Registry | None":
    """Replace the process-wide registry (tests, or after changing the environment).

    :returns: the previous registry.
    """
    global _registry
    old, _registry = _registry, new
    return old


def register(plugin: object, name: str | None = None) -> Any:
    """Register an in-process plugin with the process-wide registry."""
    return get_registry().register(plugin, name)


def __getattr__(name: str) -> Any:
    # Lazy attributes keep `import tvmdevice` light.
    if name == "Target":
        from .target import Target

        return Target
    if name == "compile":
        from .aot import compile as aot_compile

        return aot_compile
    raise AttributeError(f"module 'tvmdevice' has no attribute {name!r}")
