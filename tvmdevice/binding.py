"""Resolve a device's hook implementations once; call them directly afterwards.

pluggy dispatch costs microseconds per call; a bound function costs tens of
nanoseconds.  So each :class:`~tvmdevice.device.Device` gets a
:class:`Binding` at creation: for every hook, the owning plugin's
implementation (or the framework default from :mod:`tvmdevice.defaults`),
with the device already bound as its first argument.

In trace mode the binding instead calls through a pluggy subset hook caller
restricted to that implementation, so observer plugins' hookwrappers (see
:mod:`tvmdevice.tracing`) see every call.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Callable

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from .device import Device

__all__ = ["Binding", "DEVICE_HOOKS", "REQUIRED_DEVICE_HOOKS"]

#: Hooks called per device instance (first argument ``device``).
DEVICE_HOOKS: tuple[str, ...] = (
    "tvmdevice_init", "tvmdevice_destroy", "tvmdevice_open", "tvmdevice_close",
    "tvmdevice_activate", "tvmdevice_deactivate",
    "tvmdevice_set_device", "tvmdevice_get_attr", "tvmdevice_get_target_property",
    "tvmdevice_get_data_size", "tvmdevice_alloc_data_space", "tvmdevice_alloc_data_space_scoped",
    "tvmdevice_free_data_space", "tvmdevice_copy_data_from_to", "tvmdevice_create_stream",
    "tvmdevice_free_stream", "tvmdevice_stream_sync", "tvmdevice_set_stream",
    "tvmdevice_get_current_stream", "tvmdevice_sync_stream_from_to", "tvmdevice_alloc_workspace",
    "tvmdevice_free_workspace", "tvmdevice_supports_device_pointer_arithmetics_on_host",
)

#: Device hooks every device plugin must implement itself (a plugin whose
#: devices all use host memory may leave :data:`tvmdevice.defaults.HOST_MEMORY_HOOKS`
#: to the framework).
REQUIRED_DEVICE_HOOKS: frozenset[str] = frozenset({
    "tvmdevice_init", "tvmdevice_destroy", "tvmdevice_open", "tvmdevice_close",
    "tvmdevice_activate", "tvmdevice_deactivate", "tvmdevice_get_attr",
    "tvmdevice_alloc_data_space", "tvmdevice_free_data_space", "tvmdevice_copy_data_from_to",
})


def find_impl(pm: pluggy.PluginManager, hook_name: str, *plugins: object) -> pluggy.HookImpl | None:
    """The non-wrapper implementation of ``hook_name`` registered by one of ``plugins`` (the objects
    of one plugin: its module and its :class:`~tvmdevice.plugin.CLifecycle`, say)."""
    caller = getattr(pm.hook, hook_name)
    for impl in caller.get_hookimpls():
        if any(impl.plugin is p for p in plugins) and not (impl.hookwrapper or impl.wrapper):
            return impl
    return None


class Binding:
    """The resolved hook implementations of one device instance."""

    def __init__(self, pm: pluggy.PluginManager, owner: tuple[object, ...], owner_name: str, defaults: object,
                 device_plugins: list[object], *, trace: bool = False) -> None:
        self.pm = pm
        self.owner = owner  # the objects the owning plugin registered
        self.owner_name = owner_name
        self.defaults = defaults
        self.device_plugins = device_plugins
        self.trace = trace
        self._hooks: dict[str, Callable[..., Any]] = {}
        self._default_used: set[str] = set()

    def bind(self, device: "Device") -> None:
        for name in DEVICE_HOOKS:
            impl = find_impl(self.pm, name, *self.owner)
            if impl is None:
                impl = find_impl(self.pm, name, self.defaults)
                self._default_used.add(name)
            if impl is None:  # validation at load time makes this unreachable for real plugins
                self._hooks[name] = _missing(self.owner_name, name)
                continue
            self._hooks[name] = (self._traced(name, impl, device) if self.trace
                                 else _direct(self.pm, name, impl, device))

    def hook(self, name: str) -> Callable[..., Any]:
        return self._hooks[name]

    def is_default(self, name: str) -> bool:
        return name in self._default_used

    def _traced(self, name: str, impl: pluggy.HookImpl, device: "Device") -> Callable[..., Any]:
        keep = impl.plugin
        others = [p for p in self.device_plugins + [self.defaults] if p is not keep]
        caller = self.pm.subset_hook_caller(name, remove_plugins=others)
        spec_args = _spec_argnames(self.pm, name)

        def call(*args: Any) -> Any:
            return caller(**dict(zip(spec_args, (device, *args))))

        call.__name__ = name
        return call


def plugin_function(bound: Callable[..., Any], device: "Device") -> Callable[..., Any] | None:
    """The plugin's own implementation behind a bound hook, when the binding calls it directly
    (``partial(fn, device)``); ``None`` when something stands between (tracing, a wrapper, fault
    injection, an implementation taking a subset of the spec's arguments)."""
    if isinstance(bound, functools.partial) and bound.args == (device,) and not bound.keywords:
        return bound.func
    return None


def _spec_argnames(pm: pluggy.PluginManager, name: str) -> tuple[str, ...]:
    spec = getattr(pm.hook, name).spec
    assert spec is not None
    return tuple(spec.argnames)


def _direct(pm: pluggy.PluginManager, name: str, impl: pluggy.HookImpl, device: "Device") -> Callable[..., Any]:
    spec_args = _spec_argnames(pm, name)
    if tuple(impl.argnames) == spec_args:
        return functools.partial(impl.function, device)
    # pluggy lets an implementation take a subset of the spec's arguments;
    # pass exactly those, by name.
    wanted = set(impl.argnames)
    fn = impl.function

    def call(*args: Any) -> Any:
        return fn(**{k: v for k, v in zip(spec_args, (device, *args)) if k in wanted})

    call.__name__ = name
    return call


def _missing(owner: str, name: str) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        from .errors import NotSupportedError

        raise NotSupportedError(f"plugin {owner!r} does not implement {name}")

    return call
