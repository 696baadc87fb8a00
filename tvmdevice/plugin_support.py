"""What the framework does for a plugin written in C: its lifecycle hooks.

A device whose lifecycle is C code (``TVMDevice<Name>Init`` ... ``Destroy``,
each taking its ``tvm_device_<name>_t*``) publishes the six functions as one
``"tvmdevice.lifecycle"`` capsule (``TVMD_LIFECYCLE(Name)`` in
``tvmdevice/lifecycle_abi.h``, ``lifecycle_capsule`` in ``tvmdevice/capsules.pxd``),
and its ``plugin.py`` gets the six lifecycle hooks from one call::

    from tvmdevice.plugin_support import c_lifecycle

    globals().update(c_lifecycle("tvmdevice_mydev._ext:LIFECYCLE", "mydev"))

Nothing is imported until a device is first initialized, so discovery
(``import tvmdevice``, ``tvmdevice plugins``) never loads the extension.
"""

from __future__ import annotations

import functools
import importlib
from typing import TYPE_CHECKING, Any, Callable, Union

from .errors import Status, error_for_status
from .hookspecs import hookimpl
from .lifecycle import Transition
from .names import hook_symbol, validate_device_name

if TYPE_CHECKING:  # pragma: no cover
    from .device import Device

__all__ = ["LifecycleSource", "c_lifecycle", "c_step", "status_error"]

#: A lifecycle capsule, a ``"package.module:ATTRIBUTE"`` naming one, or a callable returning one.
LifecycleSource = Union[str, Callable[[], Any], Any]


class _Capsule:
    """Resolves the source once, on first use."""

    def __init__(self, source: LifecycleSource) -> None:
        self._source = source
        self._resolved: tuple[Any, Any] | None = None

    def get(self) -> tuple[Any, Any]:
        """``(extension, capsule)``: the core's caller module and the validated capsule."""
        if self._resolved is None:
            # the compiled core module (no stubs: typed as Any)
            _lifecycle: Any = importlib.import_module(f"{__package__}._lifecycle")
            source = self._source
            if isinstance(source, str):
                module, _, attr = source.partition(":")
                source = getattr(importlib.import_module(module), attr or "LIFECYCLE")
            elif callable(source):
                source = source()
            _lifecycle.present(source)  # validates name, ABI version and struct size
            self._resolved = (_lifecycle, source)
        return self._resolved


def c_lifecycle(source: LifecycleSource, device_name: str) -> dict[str, Callable[..., None]]:
    """The six lifecycle hookimpls of a device whose lifecycle is written in C.

    Each hook calls its ``TVMDevice<Name><Step>`` through the capsule on the
    device struct (``device.handle_address``); a step whose pointer is NULL
    does nothing.  A non-zero status raises the matching
    :class:`~tvmdevice.errors.TVMDeviceError` (``TVMD_ERR_INVALID_STATE`` ->
    ``LifecycleError``, ...) naming the device and the C function.

    :param source: the ``"tvmdevice.lifecycle"`` capsule; or ``"module:ATTR"``
        (``":ATTR"`` defaults to ``LIFECYCLE``) or a callable returning it, both
        resolved when a device is first initialized (keeps discovery light).
    :param device_name: the device's name, for the C symbol in error messages.
    :returns: ``{"tvmdevice_init": ..., ..., "tvmdevice_destroy": ...}``, hookimpls
        ready for the plugin module's namespace (``globals().update(...)``).
    """
    validate_device_name(device_name)
    capsule = _Capsule(source)
    return {t.hook_name: _hook(capsule, device_name, t) for t in Transition}


def _hook(capsule: _Capsule, device_name: str, transition: Transition) -> Callable[..., None]:
    step = transition.value
    symbol = hook_symbol(device_name, transition.c_suffix)

    def run(device: "Device") -> None:
        ext, cap = capsule.get()
        status = ext.call(cap, step, device.handle_address)
        if status:
            raise status_error(status, device.name, symbol)

    fn: Callable[..., None] = run
    if transition is Transition.INIT:
        def init(device: "Device", options: dict[str, Any]) -> None:
            run(device)

        fn = init
    fn.__name__ = fn.__qualname__ = transition.hook_name
    fn.__doc__ = f"{transition.hook_name}: calls {symbol} (from the plugin's lifecycle capsule)."
    fn._tvmdevice_c_step = (capsule, step, symbol)  # type: ignore[attr-defined] # read by c_step()
    return hookimpl(fn)


def status_error(status: int, device_name: str, symbol: str) -> Exception:
    """The error a non-zero C lifecycle status becomes (``TVMD_ERR_INVALID_STATE`` -> ``LifecycleError``, ...).

    One place for the message, whether the status came back through the hook or through the
    executor's run loop calling the C function directly.
    """
    known = status in Status._value2member_map_
    code = f"TVMD_ERR_{Status(status).name} ({status})" if known else f"status {status}"
    return error_for_status(status, f"device {device_name!r}: {symbol} returned {code}")


def c_step(bound: Callable[..., Any], device: "Device") -> tuple[int, str] | None:
    """``(function address, C symbol)`` when ``bound`` is ``device``'s hook made by :func:`c_lifecycle`, else None.

    ``bound`` is what the device's binding resolved (``functools.partial(hook, device)`` outside trace
    mode).  Anything else — a Python lifecycle, a traced or wrapped hook — gives None: the caller must
    then go through the hook.  The address is 0 for a step whose pointer is NULL (the step does nothing).
    """
    if not (isinstance(bound, functools.partial) and bound.args == (device,) and not bound.keywords):
        return None
    tag = getattr(bound.func, "_tvmdevice_c_step", None)
    if tag is None:
        return None
    capsule, step, symbol = tag
    ext, cap = capsule.get()
    return ext.address(cap, step), symbol
