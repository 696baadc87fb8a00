"""The C lifecycle binding: a device's lifecycle written in C, as hooks pluggy registers.

A device whose lifecycle is C code (``TVMDevice<Name>Init`` ... ``Destroy``,
each taking its ``tvm_device_<name>_t*``) publishes the six functions as one
``"tvmdevice.lifecycle"`` capsule (``TVMD_LIFECYCLE(Name)`` in
``tvmdevice/lifecycle_abi.h``, ``lifecycle_capsule`` in ``tvmdevice/capsules.pxd``).
Its ``plugin.py`` binds that capsule to the six lifecycle hooks with one
object, which the registry registers with pluggy next to the module::

    from tvmdevice.plugin import CLifecycle

    lifecycle = CLifecycle("tvmdevice_mydev._ext:LIFECYCLE", "mydev")

A plugin that does part of its lifecycle in Python subclasses
:class:`CLifecycle` and overrides those hooks (``@hookimpl`` again); the
executor's run loop reaches the steps left to C without Python
(:func:`c_step`).  Nothing is imported until a device is first initialized, so
discovery (``import tvmdevice``, ``tvmdevice plugins``) never loads the
extension.

Plugin authors import :class:`CLifecycle` from :mod:`tvmdevice.plugin`; this
module also holds what the core's executor needs of it (:func:`c_step`,
:func:`status_error`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Callable, Union

from .binding import plugin_function
from .errors import Status, error_for_status
from .hookspecs import hookimpl
from .lifecycle import Transition
from .names import hook_symbol, validate_device_name

if TYPE_CHECKING:  # pragma: no cover
    from .device import Device

__all__ = ["CLifecycle", "LifecycleSource", "c_step", "status_error"]

#: A lifecycle capsule, a ``"package.module:ATTRIBUTE"`` naming one, or a callable returning one.
LifecycleSource = Union[str, Callable[[], Any], Any]

_BY_HOOK = {t.hook_name: t for t in Transition}


class CLifecycle:
    """The six lifecycle hooks of a device whose lifecycle is written in C, as one object.

    Each hook method calls its ``TVMDevice<Name><Step>`` through the capsule on
    the device struct (``device.handle_address``); a step whose pointer is NULL
    does nothing.  A non-zero status raises the matching
    :class:`~tvmdevice.errors.TVMDeviceError` (``TVMD_ERR_INVALID_STATE`` ->
    ``LifecycleError``, ...) naming the device and the C function.

    The registry registers every ``CLifecycle`` among a plugin module's
    attributes with pluggy, as part of that plugin: the module must then not
    implement the same hooks itself.  Override a hook in a subclass (decorated
    with ``@hookimpl``) to do that step in Python; ``super()`` still reaches C.

    :param source: the ``"tvmdevice.lifecycle"`` capsule; or ``"module:ATTR"``
        (``":ATTR"`` defaults to ``LIFECYCLE``) or a callable returning it, both
        resolved when a device is first initialized (keeps discovery light).
    :param device_name: the device's name, for the C symbols in error messages.
    """

    def __init__(self, source: LifecycleSource, device_name: str) -> None:
        validate_device_name(device_name)
        self.device_name = device_name
        self._source = source
        self._resolved: tuple[Any, Any] | None = None

    def __repr__(self) -> str:
        return f"CLifecycle({self._source!r}, {self.device_name!r})"

    # ------------------------------------------------------------ the table
    def _table(self) -> tuple[Any, Any]:
        """``(caller, capsule)``: the core's compiled caller module and the validated capsule, resolved once."""
        if self._resolved is None:
            # the compiled core module (no stubs: typed as Any); looked up per call, so tests may wrap its call()
            caller: Any = importlib.import_module(f"{__package__}._lifecycle")
            source = self._source
            if isinstance(source, str):
                module, _, attr = source.partition(":")
                source = getattr(importlib.import_module(module), attr or "LIFECYCLE")
            elif callable(source):
                source = source()
            caller.present(source)  # validates name, ABI version and struct size
            self._resolved = (caller, source)
        return self._resolved

    def symbol(self, transition: Transition) -> str:
        """The C function of ``transition``: ``TVMDevice<Name><Step>``."""
        return hook_symbol(self.device_name, transition.c_suffix)

    def call(self, step: str, address: int) -> int | None:
        """Call one C step on the device struct at ``address``, as firmware would; no error is raised.

        :param step: ``"init"``, ``"open"``, ``"activate"``, ``"deactivate"``, ``"close"`` or ``"destroy"``.
        :returns: the C status code (0 = success), or None when the step's pointer is NULL.
        """
        caller, capsule = self._table()
        status: int | None = caller.call(capsule, step, address)
        return status

    def address(self, step: str) -> int:
        """The address of one step's C function (0 when its pointer is NULL)."""
        caller, capsule = self._table()
        return int(caller.address(capsule, step))

    def run(self, transition: Transition, device: "Device") -> None:
        """Call ``transition``'s C function on ``device``'s struct; a non-zero status raises."""
        status = self.call(transition.value, device.handle_address)
        if status:
            raise status_error(status, device.name, self.symbol(transition))

    # ------------------------------------------------------------- the hooks
    @hookimpl
    def tvmdevice_init(self, device: "Device", options: dict[str, Any]) -> None:
        """Calls ``TVMDevice<Name>Init``."""
        self.run(Transition.INIT, device)

    @hookimpl
    def tvmdevice_open(self, device: "Device") -> None:
        """Calls ``TVMDevice<Name>Open``."""
        self.run(Transition.OPEN, device)

    @hookimpl
    def tvmdevice_activate(self, device: "Device") -> None:
        """Calls ``TVMDevice<Name>Activate``."""
        self.run(Transition.ACTIVATE, device)

    @hookimpl
    def tvmdevice_deactivate(self, device: "Device") -> None:
        """Calls ``TVMDevice<Name>Deactivate``."""
        self.run(Transition.DEACTIVATE, device)

    @hookimpl
    def tvmdevice_close(self, device: "Device") -> None:
        """Calls ``TVMDevice<Name>Close``."""
        self.run(Transition.CLOSE, device)

    @hookimpl
    def tvmdevice_destroy(self, device: "Device") -> None:
        """Calls ``TVMDevice<Name>Destroy``."""
        self.run(Transition.DESTROY, device)


def status_error(status: int, device_name: str, symbol: str) -> Exception:
    """The error a non-zero C lifecycle status becomes (``TVMD_ERR_INVALID_STATE`` -> ``LifecycleError``, ...).

    One place for the message, whether the status came back through the hook or through the
    executor's run loop calling the C function directly.
    """
    known = status in Status._value2member_map_
    code = f"TVMD_ERR_{Status(status).name} ({status})" if known else f"status {status}"
    return error_for_status(status, f"device {device_name!r}: {symbol} returned {code}")


def c_step(bound: Callable[..., Any], device: "Device") -> tuple[int, str] | None:
    """``(function address, C symbol)`` when ``bound`` is ``device``'s hook of a :class:`CLifecycle`, else None.

    ``bound`` is what the device's binding resolved (``functools.partial(hook, device)`` outside trace
    mode).  Anything else — a Python lifecycle, a hook a subclass overrides, a traced or wrapped hook —
    gives None: the caller must then go through the hook.  The address is 0 for a step whose pointer is
    NULL (the step does nothing).
    """
    fn = plugin_function(bound, device)
    owner = getattr(fn, "__self__", None)
    if not isinstance(owner, CLifecycle):
        return None
    name = getattr(fn, "__name__", "")
    transition = _BY_HOOK.get(name)
    if transition is None or getattr(fn, "__func__", None) is not getattr(CLifecycle, name):
        return None  # a subclass does this step in Python
    return owner.address(transition.value), owner.symbol(transition)
