"""Plugin discovery, validation and the device-type registry.

Plugins are found through the ``tvmdevice`` entry-point group, lazily: nothing
is imported until the first question about devices.  Each plugin is loaded,
registered with pluggy (which checks its hook implementations against
:mod:`tvmdevice.hookspecs`), asked for its device types, and validated.  A
plugin that fails any step is *isolated*: reported with a
:class:`~tvmdevice.errors.PluginWarning` naming its distribution, version and
the real error, and skipped.  It never breaks ``import tvmdevice``, the CLI or
other plugins.

Environment:

``TVMDEVICE_DISABLE_PLUGIN_AUTOLOAD``
    When set (to anything but ``0``/empty), entry points are not loaded; only
    the built-in host device and plugins passed to :meth:`Registry.register`.
``TVMDEVICE_PLUGINS``
    Comma-separated allow-list of entry-point or distribution names; other
    entry points are listed as ``disabled`` and not imported.
``TVMDEVICE_TRACE``
    When set, devices are created in trace mode (see :mod:`tvmdevice.tracing`).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Iterable

import pluggy

from . import defaults as _defaults
from . import hookspecs
from .binding import REQUIRED_DEVICE_HOOKS, Binding, find_impl
from .device import Device
from .device_type import SUPPORTED_PLUGIN_API_VERSIONS, DeviceType, MemoryKind
from .errors import (
    DuplicateDeviceError,
    IncompatiblePluginError,
    PluginError,
    PluginLoadError,
    PluginValidationError,
    PluginWarning,
    TVMDeviceError,
    UnknownDeviceError,
)

__all__ = ["PluginRecord", "Registry", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "tvmdevice"
BUILTIN = "tvmdevice (built-in)"


@dataclass
class PluginRecord:
    """What the registry knows about one plugin, loaded or not.

    :ivar name: entry-point (or registration) name.
    :ivar distribution: the distribution that ships it.
    :ivar version: that distribution's version.
    :ivar status: ``"loaded"``, ``"failed"`` or ``"disabled"``.
    :ivar error: why it failed, for ``"failed"``.
    """

    name: str
    distribution: str
    version: str
    value: str = ""
    status: str = "loaded"
    error: str = ""
    device_types: list[DeviceType] = field(default_factory=list)
    plugin: Any = None

    @property
    def label(self) -> str:
        return f"{self.distribution} {self.version}".strip()

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "entry_point": self.value,
            "status": self.status,
            "error": self.error,
            "device_types": [t.to_json() for t in self.device_types],
        }


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip() not in ("", "0", "false", "no")


class Registry:
    """The device types known to this process and the plugins behind them.

    :param autoload: load entry-point plugins; defaults to ``not
        TVMDEVICE_DISABLE_PLUGIN_AUTOLOAD``.
    :param allow: allow-list of plugin or distribution names; defaults to
        ``TVMDEVICE_PLUGINS`` (unset means all).
    :param entry_points: the entry points to consider (tests pass their own);
        defaults to the installed ``tvmdevice`` group.
    """

    def __init__(self, *, autoload: bool | None = None, allow: Iterable[str] | None = None,
                 entry_points: Iterable[metadata.EntryPoint] | None = None) -> None:
        self.autoload = (not _env_flag("TVMDEVICE_DISABLE_PLUGIN_AUTOLOAD")) if autoload is None else autoload
        if allow is None and os.environ.get("TVMDEVICE_PLUGINS", "").strip():
            allow = os.environ["TVMDEVICE_PLUGINS"].split(",")
        self.allow = None if allow is None else {a.strip() for a in allow if a.strip()}
        self._entry_points = entry_points
        self.pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.pm.register(_defaults, name="tvmdevice.defaults")
        self._records: list[PluginRecord] = []
        self._types: dict[str, tuple[DeviceType, PluginRecord]] = {}
        self._duplicates: dict[str, DuplicateDeviceError] = {}
        self._loaded = False
        from .host import plugin as host_plugin

        self._add(host_plugin, "c", BUILTIN, _core_version(), value="tvmdevice.host.plugin", strict=True)

    # ---------------------------------------------------------------- loading
    def load(self) -> None:
        """Discover entry-point plugins (once); safe to call repeatedly."""
        if self._loaded:
            return
        self._loaded = True
        if not self.autoload:
            return
        eps = self._entry_points
        if eps is None:
            eps = metadata.entry_points(group=ENTRY_POINT_GROUP)
        for ep in sorted(eps, key=lambda e: e.name):
            dist_name, version = _dist_of(ep)
            if self.allow is not None and ep.name not in self.allow and dist_name not in self.allow:
                self._records.append(PluginRecord(ep.name, dist_name, version, ep.value, status="disabled",
                                                  error="not in TVMDEVICE_PLUGINS"))
                continue
            try:
                plugin = ep.load()
            except Exception as exc:  # noqa: BLE001 - isolate any import failure
                self._fail(PluginRecord(ep.name, dist_name, version, ep.value),
                           PluginLoadError(f"import of {ep.value!r} failed: {type(exc).__name__}: {exc}"))
                continue
            self._add(plugin, ep.name, dist_name, version, value=ep.value, strict=False)

    def register(self, plugin: object, name: str | None = None, *, distribution: str = "<in-process>",
                 version: str = "") -> PluginRecord:
        """Register an in-process plugin object or module; errors are raised, not warned.

        :raises PluginValidationError: the plugin does not satisfy the hookspecs.
        :raises DuplicateDeviceError: one of its device names is taken.
        """
        self.load()
        name = name or getattr(plugin, "__name__", None) or type(plugin).__name__
        record = self._add(plugin, name, distribution, version, value=repr(plugin), strict=True)
        return record

    def unregister(self, name: str) -> None:
        """Remove a plugin registered under ``name`` and its device types."""
        for record in list(self._records):
            if record.name == name and record.status == "loaded":
                self._drop(record)
                self._records.remove(record)
                return
        raise KeyError(f"no loaded plugin named {name!r}")

    def _add(self, plugin: object, name: str, dist: str, version: str, *, value: str,
             strict: bool) -> PluginRecord:
        record = PluginRecord(name, dist, version, value, plugin=plugin)
        try:
            self._validate_and_register(record)
        except PluginError as exc:
            if strict:
                raise
            self._fail(record, exc)
            return record
        self._records.append(record)
        return record

    def _validate_and_register(self, record: PluginRecord) -> None:
        plugin = record.plugin
        if self.pm.is_registered(plugin):
            raise PluginValidationError(f"plugin {record.name!r} ({record.label}) is already registered")
        try:
            self.pm.register(plugin, name=f"{record.name}@{id(plugin):x}")
        except pluggy.PluginValidationError as exc:
            raise PluginValidationError(f"plugin {record.name!r} ({record.label}) violates the hookspecs: "
                                        f"{exc}") from None
        except ValueError as exc:
            raise PluginValidationError(f"plugin {record.name!r} ({record.label}): {exc}") from None
        try:
            unknown = [h.name for h in (self.pm.get_hookcallers(plugin) or []) if not h.has_spec()]
            if unknown:
                raise PluginValidationError(
                    f"plugin {record.name!r} ({record.label}) implements unknown hooks {sorted(unknown)}; "
                    f"see tvmdevice.hookspecs for the specification")
            record.device_types = self._device_types_of(record)
            self._check_names(record)
        except BaseException:
            self.pm.unregister(plugin)
            raise
        for dtype in record.device_types:
            for n in dtype.names:
                self._types[n] = (dtype, record)

    def _device_types_of(self, record: PluginRecord) -> list[DeviceType]:
        plugin, label = record.plugin, f"plugin {record.name!r} ({record.label})"
        impl = find_impl(self.pm, "tvmdevice_device_types", plugin)
        if impl is None:
            return []  # an observer plugin (hookwrappers only)
        try:
            answer: Any = impl.function()
            types = list(answer or [])
        except Exception as exc:  # noqa: BLE001
            raise PluginValidationError(f"{label}: tvmdevice_device_types raised {type(exc).__name__}: {exc}") \
                from None
        for t in types:
            if not isinstance(t, DeviceType):
                raise PluginValidationError(f"{label}: tvmdevice_device_types returned {t!r}, "
                                            f"not a tvmdevice.DeviceType")
            if t.api_version not in SUPPORTED_PLUGIN_API_VERSIONS:
                raise IncompatiblePluginError(
                    f"{label}: device {t.name!r} was written for plugin API version {t.api_version}; this "
                    f"tvmdevice {_core_version()} supports versions {sorted(SUPPORTED_PLUGIN_API_VERSIONS)}. "
                    f"Install a matching version of {record.distribution}.")
        if types:
            required = REQUIRED_DEVICE_HOOKS
            if all(t.memory is MemoryKind.HOST for t in types):
                required = required - _defaults.HOST_MEMORY_HOOKS  # the framework provides them
            missing = sorted(h for h in required if find_impl(self.pm, h, plugin) is None)
            if any(t.operators for t in types) and find_impl(self.pm, "tvmdevice_prepare_operator", plugin) is None:
                missing.append("tvmdevice_prepare_operator")
            if missing:
                raise PluginValidationError(f"{label} declares devices but does not implement the required "
                                            f"hooks {missing}")
        return types

    def _check_names(self, record: PluginRecord) -> None:
        seen: dict[str, str] = {}
        for t in record.device_types:
            for n in t.names:
                if n in seen:
                    raise DuplicateDeviceError(f"plugin {record.name!r} ({record.label}) declares device name "
                                               f"{n!r} twice")
                seen[n] = t.name
                if n in self._types:
                    other = self._types[n][1]
                    err = DuplicateDeviceError(
                        f"device name {n!r} is declared by both {other.label} (plugin {other.name!r}) and "
                        f"{record.label} (plugin {record.name!r}); uninstall one of them or restrict "
                        f"TVMDEVICE_PLUGINS")
                    if other.distribution != BUILTIN:
                        # Neither wins: entry points load in arbitrary order.
                        self._duplicates[n] = err
                        self._drop(other)
                        other.status, other.error = "failed", str(err)
                        warnings.warn(str(err), PluginWarning, stacklevel=4)
                    raise err

    def _drop(self, record: PluginRecord) -> None:
        for t in record.device_types:
            for n in t.names:
                if self._types.get(n, (None, None))[1] is record:
                    del self._types[n]
        if record.plugin is not None and self.pm.is_registered(record.plugin):
            self.pm.unregister(record.plugin)

    def _fail(self, record: PluginRecord, exc: TVMDeviceError) -> None:
        record.status, record.error = "failed", str(exc)
        record.device_types = record.device_types or []
        self._records.append(record)
        warnings.warn(f"tvmdevice plugin {record.name!r} from {record.label} was skipped: {exc}",
                      PluginWarning, stacklevel=3)

    # ---------------------------------------------------------------- queries
    def records(self) -> list[PluginRecord]:
        """Every plugin seen: loaded, failed and disabled."""
        self.load()
        return list(self._records)

    def device_types(self) -> list[DeviceType]:
        """Every available device type, each once."""
        self.load()
        out: list[DeviceType] = []
        for t, _ in self._types.values():
            if t not in out:
                out.append(t)
        return out

    def device_names(self) -> list[str]:
        return sorted(t.name for t in self.device_types())

    def device_type(self, name: str) -> DeviceType:
        """The device type called ``name`` (or one of its aliases).

        :raises UnknownDeviceError: listing installed names and how to install more.
        :raises DuplicateDeviceError: two plugins claim the name.
        """
        return self._lookup(name)[0]

    def plugin_for(self, name: str) -> PluginRecord:
        return self._lookup(name)[1]

    def _lookup(self, name: str) -> tuple[DeviceType, PluginRecord]:
        self.load()
        if name in self._types:
            return self._types[name]
        if name in self._duplicates:
            raise self._duplicates[name]
        installed = ", ".join(self.device_names()) or "none"
        failed = [r for r in self._records if r.status == "failed"]
        hint = f"; {len(failed)} plugin(s) failed to load, see `tvmdevice plugins`" if failed else ""
        raise UnknownDeviceError(f"unknown device {name!r}. Installed devices: {installed}. "
                                 f"To add it: pip install tvmdevice-{name}{hint}")

    # ---------------------------------------------------------------- devices
    def create_device(self, name: str, options: dict[str, Any] | None = None, *,
                      trace: bool | None = None, device_id: int = 0) -> Device:
        """A new, uninitialized :class:`Device` of type ``name``.

        :param options: target options; converted to their declared types,
            defaults filled in.
        :param trace: route every call through pluggy so observers see it;
            defaults to ``TVMDEVICE_TRACE``.
        """
        dtype, record = self._lookup(name)
        typed = dtype.default_options()
        from .errors import TargetOptionError

        for key, value in (options or {}).items():
            opt = dtype.option(key)
            if opt is None:
                known = ", ".join(f"-{o.name}" for o in dtype.options) or "none"
                raise TargetOptionError(f"device {dtype.name!r} has no option -{key}; its options: {known}")
            typed[key] = opt.convert(value, dtype.name)
        if trace is None:
            trace = _env_flag("TVMDEVICE_TRACE")
        binding = Binding(self.pm, record.plugin, record.name, _defaults, self._device_plugins(), trace=trace)
        return Device(dtype, typed, binding, device_id=device_id)

    def _device_plugins(self) -> list[object]:
        return [r.plugin for r in self._records if r.status == "loaded" and r.device_types]

    # ----------------------------------------------------------- compile time
    def check_operator(self, dtype: DeviceType, options: dict[str, Any], graph: Any, op: Any,
                       op_data: Any = None) -> str | None:
        """Ask the owner of ``dtype`` whether it accepts ``op`` (None) or why not."""
        return self._compile_hook("tvmdevice_check_operator", dtype, options, graph, op, op_data)

    def memory_capacity(self, dtype: DeviceType, options: dict[str, Any]) -> int | None:
        """Bytes a compiled model may use on a device of ``dtype`` (None: no limit)."""
        return self._capacity_hook("tvmdevice_memory_capacity", dtype, options)

    def workspace_capacity(self, dtype: DeviceType, options: dict[str, Any]) -> int | None:
        """The largest scratch one call may have on a device of ``dtype`` (None: no limit)."""
        return self._capacity_hook("tvmdevice_workspace_capacity", dtype, options)

    def _capacity_hook(self, hook: str, dtype: DeviceType, options: dict[str, Any]) -> int | None:
        record = self.plugin_for(dtype.name)
        impl = find_impl(self.pm, hook, record.plugin) or find_impl(self.pm, hook, _defaults)
        assert impl is not None  # the defaults plugin always has one
        kwargs = {"device_type": dtype, "options": options}
        value: Any = impl.function(**{k: kwargs[k] for k in impl.argnames})
        return None if value is None else int(value)

    def prepare_operator(self, dtype: DeviceType, options: dict[str, Any], graph: Any, op: Any,
                         op_data: Any = None) -> Any:
        """Ask the owner of ``dtype`` to prepare ``op``; returns a PreparedCall."""
        return self._compile_hook("tvmdevice_prepare_operator", dtype, options, graph, op, op_data)

    def _compile_hook(self, hook: str, dtype: DeviceType, options: dict[str, Any], graph: Any, op: Any,
                      op_data: Any) -> Any:
        record = self.plugin_for(dtype.name)
        impl = find_impl(self.pm, hook, record.plugin) or find_impl(self.pm, hook, _defaults)
        if impl is None:
            from .errors import NotSupportedError

            raise NotSupportedError(f"plugin {record.name!r} does not implement {hook}")
        kwargs = {"device_type": dtype, "options": options, "graph": graph, "op": op, "op_data": op_data}
        try:
            return impl.function(**{k: kwargs[k] for k in impl.argnames})
        except TVMDeviceError:
            raise
        except Exception as exc:
            raise TVMDeviceError(f"plugin {record.name!r}, device {dtype.name!r}: {hook} raised for operator "
                                 f"#{getattr(op, 'index', '?')} {getattr(op, 'type', '?')}: "
                                 f"{type(exc).__name__}: {exc}") from exc


def _dist_of(ep: metadata.EntryPoint) -> tuple[str, str]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "<unknown distribution>", ""
    return dist.metadata["Name"] or dist.name, dist.version or ""


def _core_version() -> str:
    from . import __version__

    return __version__
