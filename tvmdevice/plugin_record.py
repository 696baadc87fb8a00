"""What the registry knows about one plugin, and the objects it is made of.

A plugin is what one entry point (or :meth:`Registry.register <tvmdevice.registry.Registry.register>`)
names -- a module, usually -- together with the :class:`~tvmdevice.plugin.CLifecycle` objects among
its attributes: pluggy registers each of them, and the registry treats them as one plugin (one
record, one owner of its device types).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .device_type import DeviceType
from .plugin_support import CLifecycle

if TYPE_CHECKING:  # pragma: no cover
    from .probe import ProbeResult

__all__ = ["BUILTIN", "PluginRecord", "plugin_parts", "normalize", "dist_name"]

#: The distribution name of the built-in host device's record.
BUILTIN = "tvmdevice (built-in)"


@dataclass
class PluginRecord:
    """What the registry knows about one plugin, loaded or not.

    :ivar name: entry-point (or registration) name.
    :ivar distribution: the distribution that ships it.
    :ivar version: that distribution's version.
    :ivar status: ``"loaded"``, ``"failed"`` or ``"disabled"``.
    :ivar error: why it failed, for ``"failed"``.
    :ivar plugin: the loaded plugin (module or object), which :attr:`parts` starts with.
    """

    name: str
    distribution: str
    version: str
    value: str = ""
    status: str = "loaded"
    error: str = ""
    device_types: list[DeviceType] = field(default_factory=list)
    plugin: Any = None
    probe: "ProbeResult | None" = None
    _parts: tuple[Any, ...] = field(default=(), repr=False, compare=False)

    @property
    def parts(self) -> tuple[Any, ...]:
        """The objects registered with pluggy for this plugin: the plugin, then its :class:`CLifecycle`\\ s."""
        if self.plugin is None:
            return ()
        if not self._parts or self._parts[0] is not self.plugin:
            self._parts = (self.plugin, *plugin_parts(self.plugin))
        return self._parts

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
            "probe": None if self.probe is None else self.probe.to_json(),
        }

    def provides(self, qualifier: str) -> bool:
        """Whether ``qualifier`` names this record's distribution (PEP 503 normalized) or plugin."""
        dist = "tvmdevice" if self.distribution == BUILTIN else self.distribution
        return normalize(qualifier) in (normalize(dist), normalize(self.name))



def plugin_parts(plugin: object) -> tuple[CLifecycle, ...]:
    """The :class:`CLifecycle` objects among a plugin's attributes: registered with it, as part of it."""
    try:
        attrs = vars(plugin)
    except TypeError:  # an object without __dict__
        return ()
    found: list[CLifecycle] = []
    for value in attrs.values():
        if isinstance(value, CLifecycle) and not any(value is f for f in found):
            found.append(value)
    return tuple(found)


def normalize(name: str) -> str:
    """A distribution or plugin name PEP 503 normalized, for comparisons."""
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503


def dist_name(record: PluginRecord) -> str:
    """The distribution to name in a qualified device name (``tvmdevice`` for the built-in host device)."""
    return "tvmdevice" if record.distribution == BUILTIN else record.distribution
