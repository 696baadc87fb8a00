"""Compile-time hooks, called on the plugin that owns a device type, through one helper.

At compile and export time the core asks one plugin -- the owner of the device
type an operator is placed on -- a question: does it accept the operator, how
much memory may a model use, how is the operator prepared, which sources does
an export compile.  :func:`call_owner` is the one way to ask: it finds the
owner's implementation (or the framework default of :mod:`tvmdevice.defaults`),
passes the arguments the implementation takes, and turns any exception the
plugin raises that is not already a :class:`~tvmdevice.errors.TVMDeviceError`
into one naming the plugin, its distribution, the device and the hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

from .binding import find_impl
from .errors import NotSupportedError, TVMDeviceError

if TYPE_CHECKING:  # pragma: no cover
    from .device_type import DeviceType
    from .registry import PluginRecord

__all__ = ["call_owner"]


def call_owner(pm: pluggy.PluginManager, defaults: object, record: "PluginRecord", hook: str,
               dtype: "DeviceType", context: str = "", **kwargs: Any) -> Any:
    """Call ``hook`` on the plugin ``record`` (which owns ``dtype``), or the framework's default.

    :param context: what the call was about, for the error message (``"for cpu 'host'"``).
    :param kwargs: every argument of the hookspec; the implementation gets those it names.
    :raises NotSupportedError: neither the plugin nor the framework implements ``hook``.
    :raises TVMDeviceError: the plugin raised; a ``TVMDeviceError`` of its own (a
        :class:`~tvmdevice.errors.Refusal`, ...) passes unchanged, anything else is wrapped
        with the plugin, distribution, device and hook named (the original is its ``__cause__``).
    """
    impl = find_impl(pm, hook, *record.parts) or find_impl(pm, hook, defaults)
    if impl is None:
        raise NotSupportedError(f"plugin {record.name!r} ({record.label}) does not implement {hook}")
    try:
        return impl.function(**{k: kwargs[k] for k in impl.argnames})
    except TVMDeviceError:
        raise
    except Exception as exc:
        about = f" {context}" if context else ""
        raise TVMDeviceError(f"plugin {record.name!r} ({record.label}), device {dtype.name!r}: {hook} raised"
                             f"{about}: {type(exc).__name__}: {exc}") from exc
