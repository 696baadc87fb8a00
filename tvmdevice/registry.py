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
``TVMDEVICE_CACHE_DIR``, ``TVMDEVICE_PROBE_TIMEOUT``
    Where probe verdicts are remembered, and how long a probe may take
    (see :mod:`tvmdevice.probe`).

Isolation goes as far as a plugin can reach:

* any exception at import or registration, ``SystemExit`` (``sys.exit()``)
  and a ``KeyboardInterrupt`` that the plugin *raised itself* are reported as a
  load failure naming the distribution; the host keeps running.  A real Ctrl-C
  (a ``SIGINT`` delivered while discovery runs, seen by a handler installed
  for the duration) is the user's and is honoured: discovery is rolled back and
  the ``KeyboardInterrupt`` propagates; the next question starts it afresh.
* a crash, abort, ``os._exit`` or hang cannot be contained in-process, so a
  plugin is first imported in a probe process (:mod:`tvmdevice.probe`) once
  per installed version; one that crashed there is skipped, never imported.
* two distributions declaring the same device name (or alias) both stay
  loaded; the name is ambiguous, and asking for it unqualified is an error that
  names both distributions and the two ways to choose: a distribution-qualified
  name in the target string (``"tvmdevice-cmsis:cmsis-nn, c"``) or an
  allow-list (``TVMDEVICE_PLUGINS``).  Their other names keep working.
``TVMDEVICE_TRACE``
    When set, devices are created in trace mode (see :mod:`tvmdevice.tracing`).

A plugin is the entry point's module and the :class:`~tvmdevice.plugin.CLifecycle`
objects among its attributes, all registered with pluggy as one
:class:`~tvmdevice.plugin_record.PluginRecord`.  The compile-time questions to the
plugin owning a device type (prepare an operator, memory capacity, export
sources, ...) all go through :func:`tvmdevice.owner_calls.call_owner`.
"""

from __future__ import annotations

import os
import warnings
from importlib import metadata
from typing import Any, Iterable, Literal, Sequence

import pluggy

from . import defaults as _defaults
from . import hookspecs
from . import probe as _probe
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
from .interrupts import SigintWatch
from .owner_calls import call_owner
from .plugin_record import BUILTIN, PluginRecord
from .plugin_record import dist_name as _dist_name
from .plugin_record import normalize as _normalize

__all__ = ["PluginRecord", "Registry", "ENTRY_POINT_GROUP", "PROJECT_PLUGINS"]

ENTRY_POINT_GROUP = "tvmdevice"

#: This project's own plugin distributions, by the device each provides: the distribution and its
#: folder in the source tree.  The only names an install hint may give (a test checks it against
#: ``plugins/*/pyproject.toml``).
PROJECT_PLUGINS: dict[str, tuple[str, str]] = {
    "cmsis-nn": ("tvmdevice-cmsis", "plugins/cmsis"),
    "ethos-u": ("tvmdevice-ethosu", "plugins/ethosu"),
    "woofles": ("tvmdevice-woofles", "plugins/woofles"),
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
    :param probe: ``"auto"`` imports an entry point in a probe process first
        when no verdict is remembered for its installed version; ``"always"``
        probes every one again (``tvmdevice plugins --probe``); ``"never"``
        imports directly (the probe process itself).
    :param probe_timeout: seconds a probe may take (default
        ``TVMDEVICE_PROBE_TIMEOUT``, see :mod:`tvmdevice.probe`).
    """

    def __init__(self, *, autoload: bool | None = None, allow: Iterable[str] | None = None,
                 entry_points: Iterable[metadata.EntryPoint] | None = None,
                 probe: Literal["auto", "always", "never"] = "auto", probe_timeout: float | None = None) -> None:
        self.autoload = (not _env_flag("TVMDEVICE_DISABLE_PLUGIN_AUTOLOAD")) if autoload is None else autoload
        if allow is None and os.environ.get("TVMDEVICE_PLUGINS", "").strip():
            allow = os.environ["TVMDEVICE_PLUGINS"].split(",")
        self.allow = None if allow is None else {a.strip() for a in allow if a.strip()}
        self.probe_mode = probe
        self.probe_timeout = probe_timeout
        self._entry_points = entry_points
        self.pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.pm.register(_defaults, name="tvmdevice.defaults")
        self._records: list[PluginRecord] = []
        # name -> every (type, owner) that declares it; more than one means ambiguous.
        self._types: dict[str, list[tuple[DeviceType, PluginRecord]]] = {}
        self._loaded = False
        from .host import plugin as host_plugin

        self._add(host_plugin, "c", BUILTIN, _core_version(), value="tvmdevice.host.plugin", strict=True)

    # ---------------------------------------------------------------- loading
    def load(self) -> None:
        """Discover entry-point plugins (once); safe to call repeatedly.

        :raises KeyboardInterrupt: the user pressed Ctrl-C meanwhile; nothing
            of this discovery is kept, the next call starts again.
        """
        if self._loaded:
            return
        self._loaded = True
        if not self.autoload:
            return
        eps = self._entry_points
        if eps is None:
            eps = metadata.entry_points(group=ENTRY_POINT_GROUP)
        kept = len(self._records)
        try:
            with SigintWatch() as watch:
                self._discover(sorted(eps, key=lambda e: e.name), watch)
        except KeyboardInterrupt:
            for record in self._records[kept:]:
                self._drop(record)
            del self._records[kept:]
            self._loaded = False
            raise
        self._warn_ambiguous()

    def _discover(self, eps: list[metadata.EntryPoint], watch: SigintWatch) -> None:
        wanted: list[tuple[metadata.EntryPoint, _probe.Candidate]] = []
        for ep in eps:
            candidate = _probe.Candidate.of(ep)
            dist_name, version = candidate.distribution, candidate.version
            if self.allow is not None and not self._allowed(ep.name, dist_name):
                self._records.append(PluginRecord(ep.name, dist_name, version, ep.value, status="disabled",
                                                  error="not in TVMDEVICE_PLUGINS"))
                continue
            wanted.append((ep, candidate))
        verdicts = self._probe_verdicts([c for _, c in wanted])
        for ep, candidate in wanted:
            record = PluginRecord(ep.name, candidate.distribution, candidate.version, ep.value,
                                  probe=verdicts.get(candidate))
            if record.probe is not None and not record.probe.safe:
                self._fail(record, PluginLoadError(
                    f"skipped without importing it: {record.probe.detail} (probed {record.probe.probed_at}). "
                    f"It stays skipped until {record.distribution}'s version changes; to probe it again: "
                    f"tvmdevice plugins --probe"))
                continue
            try:
                plugin = ep.load()
            except KeyboardInterrupt:
                if watch.user_interrupt():
                    raise
                self._fail(record, PluginLoadError(f"import of {ep.value!r} raised KeyboardInterrupt, and no "
                                                   f"Ctrl-C was pressed: the plugin raised it itself"))
                continue
            except SystemExit as exc:
                self._fail(record, PluginLoadError(f"import of {ep.value!r} called sys.exit({exc.code!r})"))
                continue
            except BaseException as exc:  # noqa: BLE001 - isolate any import failure
                self._fail(record, PluginLoadError(f"import of {ep.value!r} failed: {type(exc).__name__}: {exc}"))
                continue
            record.plugin = plugin
            self._add_record(record, strict=False, watch=watch)

    def _allowed(self, name: str, dist_name: str) -> bool:
        assert self.allow is not None
        wanted = {_normalize(a) for a in self.allow}
        return name in self.allow or _normalize(dist_name) in wanted

    def _probe_verdicts(self, candidates: list[_probe.Candidate]) -> dict[_probe.Candidate, _probe.ProbeResult]:
        if self.probe_mode == "never" or not candidates or not _can_probe():
            return {}
        if self.probe_mode == "always":
            fresh = _probe.probe(candidates, self.probe_timeout)
            _probe.remember(fresh)
            return fresh
        known = _probe.remembered(candidates)
        unknown = [c for c in candidates if c not in known]
        if unknown and _probe.default_timeout() > 0:
            fresh = _probe.probe(unknown, self.probe_timeout)
            _probe.remember(fresh)
            known.update(fresh)
        return known

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
        return self._add_record(PluginRecord(name, dist, version, value, plugin=plugin), strict=strict)

    def _add_record(self, record: PluginRecord, *, strict: bool,
                    watch: SigintWatch | None = None) -> PluginRecord:
        try:
            self._validate_and_register(record, strict=strict)
        except PluginError as exc:
            if strict:
                raise
            self._fail(record, exc)
            return record
        except KeyboardInterrupt:
            if strict or watch is None or watch.user_interrupt():
                raise
            self._fail(record, PluginLoadError(f"plugin {record.name!r} ({record.label}) raised "
                                               f"KeyboardInterrupt while registering, and no Ctrl-C was pressed"))
            return record
        except SystemExit as exc:
            if strict:
                raise
            self._fail(record, PluginLoadError(f"plugin {record.name!r} ({record.label}) called "
                                               f"sys.exit({exc.code!r}) while registering"))
            return record
        self._records.append(record)
        return record

    def _validate_and_register(self, record: PluginRecord, *, strict: bool) -> None:
        label = f"plugin {record.name!r} ({record.label})"
        parts = record.parts
        if any(self.pm.is_registered(part) for part in parts):
            raise PluginValidationError(f"{label} is already registered")
        registered: list[object] = []
        try:
            for part in parts:
                try:
                    self.pm.register(part, name=f"{record.name}@{id(part):x}")
                except pluggy.PluginValidationError as exc:
                    raise PluginValidationError(f"{label} violates the hookspecs: {exc}") from None
                except ValueError as exc:
                    raise PluginValidationError(f"{label}: {exc}") from None
                registered.append(part)
            hooks = [h for part in parts for h in (self.pm.get_hookcallers(part) or [])]
            unknown = sorted({h.name for h in hooks if not h.has_spec()})
            if unknown:
                raise PluginValidationError(f"{label} implements unknown hooks {unknown}; "
                                            f"see tvmdevice.hookspecs for the specification")
            twice = sorted({h.name for h in hooks if hooks.count(h) > 1})
            if twice:
                raise PluginValidationError(f"{label} implements {twice} both in the module and in its "
                                            f"CLifecycle; keep one (override the hook in a CLifecycle subclass)")
            record.device_types = self._device_types_of(record)
            self._check_names(record, strict=strict)
        except BaseException:
            for part in registered:
                self.pm.unregister(part)
            raise
        for dtype in record.device_types:
            for n in dtype.names:
                self._types.setdefault(n, []).append((dtype, record))

    def _device_types_of(self, record: PluginRecord) -> list[DeviceType]:
        parts, label = record.parts, f"plugin {record.name!r} ({record.label})"
        impl = find_impl(self.pm, "tvmdevice_device_types", *parts)
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
            missing = sorted(h for h in required if find_impl(self.pm, h, *parts) is None)
            # a device that compiles partitions claims its operators through tvmdevice_prepare_partition
            # (and its claims may be read lazily: not here)
            if any(not t.compiles_partitions and t.operators for t in types) and \
                    find_impl(self.pm, "tvmdevice_prepare_operator", *parts) is None:
                missing.append("tvmdevice_prepare_operator")
            if any(t.compiles_partitions for t in types) and \
                    find_impl(self.pm, "tvmdevice_prepare_partition", *parts) is None:
                missing.append("tvmdevice_prepare_partition")
            if missing:
                raise PluginValidationError(f"{label} declares devices but does not implement the required "
                                            f"hooks {missing}")
        return types

    def _check_names(self, record: PluginRecord, *, strict: bool) -> None:
        seen: dict[str, str] = {}
        for t in record.device_types:
            for n in t.names:
                if n in seen:
                    raise DuplicateDeviceError(f"plugin {record.name!r} ({record.label}) declares device name "
                                               f"{n!r} twice")
                seen[n] = t.name
                owners = [r for _, r in self._types.get(n, [])]
                builtin = [r for r in owners if r.distribution == BUILTIN]
                if builtin:
                    raise DuplicateDeviceError(f"plugin {record.name!r} ({record.label}) declares device name "
                                               f"{n!r}, which is the built-in host device's; rename it")
                if owners and strict:
                    other = owners[0]
                    raise DuplicateDeviceError(
                        f"device name {n!r} is declared by both {other.label} (plugin {other.name!r}) and "
                        f"{record.label} (plugin {record.name!r}); unregister one of them")
                # Entry-point plugins: both stay; the name becomes ambiguous (see _ambiguous).

    def _warn_ambiguous(self) -> None:
        for name, claims in sorted(self._types.items()):
            if len(claims) > 1:
                warnings.warn(str(self._ambiguous(name, claims)), PluginWarning, stacklevel=4)

    def _ambiguous(self, name: str, claims: list[tuple[DeviceType, PluginRecord]]) -> DuplicateDeviceError:
        owners = sorted((r for _, r in claims), key=_dist_name)
        both = " and ".join(f"{r.label} (plugin {r.name!r})" for r in owners)
        qualified = " or ".join(f"'{_dist_name(r)}:{name}'" for r in owners)
        others = sorted({_dist_name(r) for r in self._records if r.status == "loaded" and r.device_types
                         and r.distribution != BUILTIN and r not in owners})
        allow = ",".join([_dist_name(owners[0]), *others])
        return DuplicateDeviceError(
            f"device name {name!r} is declared by both {both}. Choose one: name the distribution in the target "
            f"string ({qualified}, e.g. \"{_dist_name(owners[0])}:{name}, c\"), or load only one of them with "
            f"the allow-list TVMDEVICE_PLUGINS (e.g. TVMDEVICE_PLUGINS={allow} keeps "
            f"{_dist_name(owners[0])} and the other plugins); or uninstall the other")

    def _drop(self, record: PluginRecord) -> None:
        for t in record.device_types:
            for n in t.names:
                claims = [c for c in self._types.get(n, []) if c[1] is not record]
                if claims:
                    self._types[n] = claims
                else:
                    self._types.pop(n, None)
        for part in record.parts:
            if self.pm.is_registered(part):
                self.pm.unregister(part)

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
        for claims in self._types.values():
            for t, _ in claims:
                if t not in out:
                    out.append(t)
        return out

    def device_names(self) -> list[str]:
        return sorted({t.name for t in self.device_types()})

    def conflicts(self, record: PluginRecord) -> dict[str, list[PluginRecord]]:
        """The names of ``record``'s devices that other plugins declare too, and those plugins."""
        self.load()
        out = {}
        for t in record.device_types:
            for n in t.names:
                others = [r for _, r in self._types.get(n, []) if r is not record]
                if others and any(r is record for _, r in self._types.get(n, [])):
                    out[n] = others
        return out

    def device_type(self, name: str) -> DeviceType:
        """The device type called ``name`` (or one of its aliases).

        ``name`` may be qualified by the distribution (or plugin) that provides
        it, ``"tvmdevice-cmsis:cmsis-nn"``, to choose between plugins that
        declare the same name.

        :raises UnknownDeviceError: listing installed names and how to install more.
        :raises DuplicateDeviceError: two plugins declare the name and it is not
            qualified; the message names both and how to choose.
        """
        return self._lookup(name)[0]

    def plugin_for(self, name: str) -> PluginRecord:
        """The loaded plugin providing the device ``name`` (qualified or not, as :meth:`device_type`)."""
        return self._lookup(name)[1]

    def resolve(self, name: str) -> tuple[DeviceType, PluginRecord]:
        """Both answers at once: the device type called ``name`` and its plugin."""
        return self._lookup(name)

    def _lookup(self, name: str) -> tuple[DeviceType, PluginRecord]:
        self.load()
        qualifier, sep, bare = name.rpartition(":")
        claims = self._types.get(bare, [])
        if sep:
            chosen = [c for c in claims if c[1].provides(qualifier)]
            if len(chosen) == 1:
                return chosen[0]
            if chosen:  # one distribution with two plugins declaring it: qualify by plugin name
                raise self._ambiguous(bare, chosen)
            providers = ", ".join(sorted(f"'{_dist_name(r)}:{bare}'" for _, r in claims))
            if providers:
                raise UnknownDeviceError(f"no installed distribution {qualifier!r} provides device {bare!r}; "
                                         f"it is provided as {providers}")
        elif len(claims) == 1:
            return claims[0]
        elif claims:
            raise self._ambiguous(bare, claims)
        raise UnknownDeviceError(self._unknown_message(name, bare))

    def _unknown_message(self, name: str, bare: str) -> str:
        """Why ``bare`` is no installed device, and the real way to get it.

        An install hint names only a distribution of this project (:data:`PROJECT_PLUGINS`), never one
        built from what the user typed: a made-up name on a public index is how dependency confusion starts.
        """
        from .suggest import close_matches, fold, folded_match

        names = sorted(self._types)
        text = f"unknown device {name!r}. Installed devices: {', '.join(self.device_names()) or 'none'}"
        same = folded_match(bare, names)
        if same is not None:
            return f"{text}. Device names are exact: did you mean {same!r}?"
        project = folded_match(bare, PROJECT_PLUGINS) or next(iter(close_matches(bare, PROJECT_PLUGINS, 1)), None)
        excluded = [r for r in self._records if r.status == "disabled"
                    and (project is not None and _normalize(r.distribution) == _normalize(PROJECT_PLUGINS[project][0])
                         or fold(r.name) == fold(bare))]
        if excluded:
            r = excluded[0]
            allow = os.environ.get("TVMDEVICE_PLUGINS", ",".join(sorted(self.allow or ())))
            wanted = [a for a in sorted(self.allow or ()) if not any(x.provides(a) for x in self._records)]
            typo = f" ({', '.join(repr(a) for a in wanted)} matches no installed plugin)" if wanted else ""
            device = f"Did you mean {project!r}? It" if project and project != bare else f"Device {bare!r}"
            return (f"{text}. {device} is provided by {r.label} (plugin {r.name!r}), which is installed but "
                    f"excluded by the allow-list TVMDEVICE_PLUGINS={allow}{typo}: add {r.name} to it, or unset it")
        failed = [r for r in self._records if r.status == "failed"]
        hint = f"; {len(failed)} plugin(s) failed to load, see `tvmdevice plugins`" if failed else ""
        close = close_matches(bare, names)
        if close:
            return f"{text}; did you mean {' or '.join(repr(c) for c in close)}?{hint}"
        if not self.autoload:
            hint += "; plugins are not loaded at all: TVMDEVICE_DISABLE_PLUGIN_AUTOLOAD is set"
        if project is not None:
            dist, folder = PROJECT_PLUGINS[project]
            mean = "" if project == bare else f"did you mean {project!r}? "
            return (f"{text}. {mean}{project!r} is provided by this project's plugin {dist}, which is not "
                    f"installed: install it from the tvmdevice source tree, pip install ./{folder}{hint}")
        return (f"{text}. No plugin of this project provides {bare!r}; `tvmdevice plugins` lists what is "
                f"installed, docs/writing-a-plugin.md shows how to write one{hint}")

    def _owner(self, dtype: DeviceType) -> PluginRecord:
        """The plugin that declared this very device type object."""
        owners = []
        for claims in self._types.values():
            for t, r in claims:
                if t is dtype and r not in owners:
                    owners.append(r)
        if len(owners) == 1:
            return owners[0]
        if not owners:
            return self.plugin_for(dtype.name)
        raise DuplicateDeviceError(
            f"device type {dtype.name!r} is the same object in {' and '.join(r.label for r in owners)} (one "
            f"re-exports the other's), so they cannot be told apart; load only one of them with TVMDEVICE_PLUGINS")

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
        binding = Binding(self.pm, record.parts, record.name, _defaults, self._device_plugins(), trace=trace)
        return Device(dtype, typed, binding, device_id=device_id)

    def _device_plugins(self) -> list[object]:
        return [part for r in self._records if r.status == "loaded" and r.device_types for part in r.parts]

    # ----------------------------------------------------------- compile time
    # Each asks the plugin that owns ``dtype`` through tvmdevice.owner_calls.call_owner, which wraps
    # whatever the plugin raises the same way.
    def _ask(self, hook: str, dtype: DeviceType, context: str = "", **kwargs: Any) -> Any:
        return call_owner(self.pm, _defaults, self._owner(dtype), hook, dtype, context, device_type=dtype, **kwargs)

    def check_operator(self, dtype: DeviceType, options: dict[str, Any], graph: Any, op: Any,
                       op_data: Any = None) -> str | None:
        """Ask the owner of ``dtype`` whether it accepts ``op`` (None) or why not."""
        return self._ask("tvmdevice_check_operator", dtype, _operator(op), options=options, graph=graph, op=op,
                         op_data=op_data)

    def memory_capacity(self, dtype: DeviceType, options: dict[str, Any]) -> int | None:
        """Bytes a compiled model may use on a device of ``dtype`` (None: no limit)."""
        value = self._ask("tvmdevice_memory_capacity", dtype, options=options)
        return None if value is None else int(value)

    def workspace_capacity(self, dtype: DeviceType, options: dict[str, Any]) -> int | None:
        """The largest scratch one call may have on a device of ``dtype`` (None: no limit)."""
        value = self._ask("tvmdevice_workspace_capacity", dtype, options=options)
        return None if value is None else int(value)

    def export_sources(self, dtype: DeviceType, options: dict[str, Any], cpu: str, calls: Sequence[Any] = ()) -> Any:
        """The owner of ``dtype``'s :class:`~tvmdevice.export.DeviceSources` for ``cpu`` (None: it does not export),
        given the model's prepared ``calls`` on that device."""
        return self._ask("tvmdevice_export_sources", dtype, f"for cpu {cpu!r}", options=options, cpu=cpu,
                         calls=tuple(calls))

    def prepare_operator(self, dtype: DeviceType, options: dict[str, Any], graph: Any, op: Any,
                         op_data: Any = None) -> Any:
        """Ask the owner of ``dtype`` to prepare ``op``; returns a PreparedCall."""
        return self._ask("tvmdevice_prepare_operator", dtype, _operator(op), options=options, graph=graph, op=op,
                         op_data=op_data)

    def prepare_partition(self, dtype: DeviceType, options: dict[str, Any], graph: Any, partition: Any) -> Any:
        """Ask the owner of ``dtype`` to compile ``partition`` into one call; returns a PreparedCall."""
        return self._ask("tvmdevice_prepare_partition", dtype, f"for {partition.describe()}", options=options,
                         graph=graph, partition=partition)

    def prepare_copy(self, dtype: DeviceType, options: dict[str, Any], nbytes: int, to_device: bool) -> Any:
        """The owner of ``dtype``'s C copy call for a run's copy of ``nbytes`` (None: copy through the Device API)."""
        return self._ask("tvmdevice_prepare_copy", dtype, f"for a copy of {nbytes} B", options=options,
                         nbytes=nbytes, to_device=to_device)


def _operator(op: Any) -> str:
    return f"for operator #{getattr(op, 'index', '?')} {getattr(op, 'type', '?')}"


def _can_probe() -> bool:
    import sys

    return bool(sys.executable)


def _core_version() -> str:
    from . import __version__

    return __version__
