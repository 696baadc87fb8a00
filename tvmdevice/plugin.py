"""Everything a plugin author needs from the core, in one public module.

A device plugin (see ``docs/writing-a-plugin.md``) imports from here, never
from the core's private modules (``tvmdevice._*``, ``tvmdevice.aot._*``), whose
names may change between releases:

* **hooks** -- :data:`hookimpl`, the marker of hook implementations;
* **declarations** -- :class:`DeviceType`, :class:`MemoryKind`,
  :class:`TargetOption`, :class:`Field`, :class:`Layout` (and the data models
  :data:`LP64`, :data:`ILP32`), :func:`struct_view`;
* **a C lifecycle** -- :class:`CLifecycle`, the six lifecycle hooks bound to a
  ``"tvmdevice.lifecycle"`` capsule, one object the registry registers with
  pluggy next to the plugin module::

      lifecycle = CLifecycle("tvmdevice_mydev._ext:LIFECYCLE", DEVICE_TYPE.name)

  (:data:`LifecycleSource`: the capsule, ``"module:ATTR"`` naming it, or a
  callable returning it);
* **kernels** -- :class:`PreparedCall` and :class:`ParamsStruct` (what
  ``tvmdevice_prepare_operator`` returns), :class:`Partition` (what a device
  that compiles partitions is given by ``tvmdevice_prepare_partition``), and
  the kernel ABI at the C
  boundary: :func:`kernel_info`, :func:`params_address`,
  :func:`invoke_kernel` (one call from Python), :func:`owned_params_capsule`
  (the Python face of ``params_capsule``; the Cython capsule makers are
  ``cimport``\\ ed from ``tvmdevice/capsules.pxd``), and :class:`RunLoop`
  (pre-bound C kernel calls back to back, for a plugin's own whole-graph
  runner);
* **memory and status** -- :func:`address_of`, :func:`aligned_empty`,
  :class:`DeviceAttrKind`, :class:`Status`, :func:`error_for_status`,
  :func:`status_error`, :class:`Refusal`;
* **building** -- the ``setup.py`` helpers of :mod:`tvmdevice.build`:
  :func:`extensions`, :func:`setup_options`, :func:`generate_headers`,
  :func:`generated_dir`, :func:`load_declarations`,
  :func:`cython_include_path`.

The IR (:mod:`tvmdevice.ir`), operator data (:mod:`tvmdevice.ops`) and errors
(:mod:`tvmdevice.errors`) are public modules of their own.

Importing this module is as light as discovery must be (``tvmdevice
plugins`` imports every plugin's ``plugin.py``): what needs numpy, the AOT
package or the core's compiled modules -- :class:`ParamsStruct`,
:class:`RunLoop` and the kernel ABI helpers -- is imported on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .attrs import DeviceAttrKind
from .build import (
    cython_include_path,
    extensions,
    generate_headers,
    generated_dir,
    load_declarations,
    setup_options,
)
from .device_type import DeviceType, MemoryKind
from .errors import Refusal, Status, error_for_status
from .hookspecs import hookimpl
from .kernel import PreparedCall
from .layout import ILP32, LP64, Field, Layout, struct_view
from .memory import address_of, aligned_empty
from .options import TargetOption
from .partition import Partition
from .plugin_support import CLifecycle, LifecycleSource, status_error

if TYPE_CHECKING:  # pragma: no cover - imported on first use, see __getattr__
    from ._abi import invoke_kernel, kernel_info, owned_params_capsule, params_address
    from .aot._runloop import RunLoop
    from .params import ParamsStruct

__all__ = [
    # hooks and declarations
    "hookimpl", "DeviceType", "MemoryKind", "TargetOption", "Field", "Layout", "LP64", "ILP32", "struct_view",
    # a C lifecycle
    "CLifecycle", "LifecycleSource",
    # kernels
    "PreparedCall", "Partition", "ParamsStruct", "kernel_info", "params_address", "invoke_kernel",
    "owned_params_capsule", "RunLoop",
    # memory and status
    "address_of", "aligned_empty", "DeviceAttrKind", "Status", "error_for_status", "status_error", "Refusal",
    # building
    "extensions", "setup_options", "generate_headers", "generated_dir", "load_declarations", "cython_include_path",
]

#: The names imported on first use, and the module each comes from.
_LAZY = {
    "ParamsStruct": ".params", "RunLoop": ".aot._runloop", "invoke_kernel": "._abi", "kernel_info": "._abi",
    "params_address": "._abi", "owned_params_capsule": "._abi",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __package__), name)
    globals()[name] = value  # once
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
