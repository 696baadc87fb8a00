"""Target strings: which devices a model may use, in placement priority order.

tvmc syntax::

    "woofles -sram_kb=256, cmsis-nn, c -mcpu=cortex-m55"

Comma-separated entries; order is placement priority; the last entry is the
host and must be a host device.  Each entry is a device name (or alias)
followed by ``-key=value`` attributes or ``-flag`` booleans, typed by the
options the device declares.  Values may be quoted (``-mcpu="cortex m55"``).
The JSON form is accepted too: one object ``{"kind": "c", "mcpu": "..."}`` or
a list of them.

When two installed distributions declare the same device name, prefix the
name with the distribution that should provide it (PEP 503 names compare
normalized; a plugin's entry-point name works too)::

    "tvmdevice-cmsis:cmsis-nn, c"
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .device_type import DeviceType
from .errors import TargetError, TargetOptionError

if TYPE_CHECKING:  # pragma: no cover
    from .device import Device
    from .registry import Registry

__all__ = ["Target", "TargetEntry"]


@dataclass(frozen=True)
class TargetEntry:
    """One device of a target.

    :ivar device_type: the resolved :class:`DeviceType`.
    :ivar attrs: the options the target string set explicitly, typed.
    :ivar distribution: the distribution the target string chose the device
        from (``"tvmdevice-cmsis:cmsis-nn"``), or None when it named the device alone.
    """

    device_type: DeviceType
    attrs: dict[str, Any] = field(default_factory=dict)
    distribution: str | None = None

    @property
    def kind(self) -> str:
        return self.device_type.name

    @property
    def qualified_kind(self) -> str:
        """The name as the registry resolves it: ``"dist:name"`` when a distribution was chosen."""
        return f"{self.distribution}:{self.kind}" if self.distribution else self.kind

    @property
    def options(self) -> dict[str, Any]:
        """All options: declared defaults overridden by ``attrs``."""
        return {**self.device_type.default_options(), **self.attrs}

    def __str__(self) -> str:
        parts = [self.qualified_kind]
        for key, value in self.attrs.items():
            if value is True:
                parts.append(f"-{key}")
            else:
                parts.append(f"-{key}={_format_value(value)}")
        return " ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.qualified_kind, **self.attrs}


@dataclass(frozen=True)
class Target:
    """A parsed, validated target: devices in priority order, host last."""

    entries: tuple[TargetEntry, ...]

    @classmethod
    def parse(cls, spec: "str | dict | list | Target", registry: "Registry | None" = None) -> "Target":
        """Parse a tvmc-style string, its JSON form, or already-decoded JSON.

        :raises TargetError: empty target, duplicate device, or a last entry
            that is not a host device.
        :raises UnknownDeviceError: a device no installed plugin provides.
        :raises TargetOptionError: an unknown option or a value of the wrong type.
        """
        if isinstance(spec, Target):
            return spec
        if registry is None:
            from . import get_registry

            registry = get_registry()
        raw = _split(spec)
        if not raw:
            raise TargetError("empty target; name at least the host device, e.g. 'c'")
        entries = tuple(_make_entry(kind, attrs, registry) for kind, attrs in raw)
        seen: set[str] = set()
        for e in entries:
            if e.kind in seen:
                raise TargetError(f"device {e.kind!r} appears twice in target {spec!r}")
            seen.add(e.kind)
        host = entries[-1]
        if not host.device_type.is_host:
            raise TargetError(_host_message(entries, registry))
        return cls(entries)

    @property
    def host(self) -> TargetEntry:
        return self.entries[-1]

    @property
    def accelerators(self) -> tuple[TargetEntry, ...]:
        return self.entries[:-1]

    def __str__(self) -> str:
        return ", ".join(str(e) for e in self.entries)

    def to_json(self) -> list[dict[str, Any]]:
        return [e.to_json() for e in self.entries]

    def create_devices(self, registry: "Registry | None" = None, *, trace: bool | None = None) -> list["Device"]:
        """One uninitialized :class:`Device` per entry, in target order."""
        if registry is None:
            from . import get_registry

            registry = get_registry()
        return [registry.create_device(e.qualified_kind, e.attrs, trace=trace) for e in self.entries]


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    text = str(value)
    if text == "" or any(c in text for c in " \t\n,'\"=\\#") or text.startswith("-"):
        # POSIX single quotes (shlex.quote leaves commas bare, and commas separate entries).
        return "'" + text.replace("'", "'\"'\"'") + "'"
    return text


def _split(spec: "str | dict | list") -> list[tuple[str, list[tuple[str, Any]]]]:
    if isinstance(spec, str):
        text = spec.strip()
        if text.startswith(("{", "[")):
            try:
                return _split(json.loads(text))
            except json.JSONDecodeError as exc:
                raise TargetError(f"target looks like JSON but does not parse: {exc}") from None
        if not text:
            return []
        return [_parse_entry(chunk) for chunk in _split_commas(text)]
    if isinstance(spec, dict):
        spec = [spec]
    if isinstance(spec, list):
        out = []
        for item in spec:
            if isinstance(item, str):
                out.extend(_split(item))
                continue
            if not isinstance(item, dict) or not isinstance(item.get("kind"), str):
                raise TargetError(f"each JSON target entry must be an object with a 'kind' string, got {item!r}")
            out.append((item["kind"], [(k, v) for k, v in item.items() if k != "kind"]))
        return out
    raise TargetError(f"a target is a string, a JSON object or a list, not {type(spec).__name__}")


def _split_commas(text: str) -> list[str]:
    chunks, current, quote, escape = [], [], "", False
    for ch in text:
        if escape:
            current.append(ch)
            escape = False
        elif ch == "\\" and quote != "'":
            current.append(ch)
            escape = True
        elif quote:
            current.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            current.append(ch)
            quote = ch
        elif ch == ",":
            chunks.append("".join(current))
            current = []
        else:
            current.append(ch)
    if quote:
        raise TargetError(f"unterminated {quote} quote in target {text!r}")
    chunks.append("".join(current))
    for chunk in chunks:
        if not chunk.strip():
            raise TargetError(f"empty entry in target {text!r} (two commas in a row, or a trailing comma)")
    return chunks


def _parse_entry(chunk: str) -> tuple[str, list[tuple[str, Any]]]:
    try:
        tokens = shlex.split(chunk, posix=True)
    except ValueError as exc:
        raise TargetError(f"cannot parse target entry {chunk.strip()!r}: {exc}") from None
    kind, attrs = tokens[0], []
    if kind.startswith("-"):
        raise TargetError(f"target entry {chunk.strip()!r} starts with an option; start it with a device name")
    for tok in tokens[1:]:
        if not tok.startswith("-") or tok in ("-", "--"):
            raise TargetError(f"in target entry {chunk.strip()!r}: expected -key=value or -flag, got {tok!r}")
        body = tok.lstrip("-")
        key, sep, value = body.partition("=")
        attrs.append((key, value if sep else True))
    return kind, attrs


def _make_entry(kind: str, attrs: list[tuple[str, Any]], registry: "Registry") -> TargetEntry:
    dtype, _ = registry.resolve(kind)
    qualifier, _, _ = kind.rpartition(":")
    typed: dict[str, Any] = {}
    for key, value in attrs:
        opt = dtype.option(key)
        if opt is None:
            from .suggest import close_matches

            close = close_matches(key, [o.name for o in dtype.options])
            hint = f" (did you mean {' or '.join(repr('-' + c) for c in close)}?)" if close else ""
            known = ", ".join(f"-{o.name} ({o.type_name})" for o in dtype.options) or "none"
            raise TargetOptionError(f"device {dtype.name!r} has no option -{key}{hint}; its options: {known}")
        if value is True and opt.type is not bool:
            raise TargetOptionError(f"device {dtype.name!r}: option -{key} expects {opt.type_name}; "
                                    f"write -{key}=<value>")
        if key in typed:
            raise TargetOptionError(f"device {dtype.name!r}: option -{key} given twice")
        typed[key] = opt.convert(value, dtype.name)
    return TargetEntry(dtype, typed, qualifier.strip() or None)


def _host_message(entries: tuple[TargetEntry, ...], registry: "Registry") -> str:
    """Why the target has no host last, and the target that fixes it (each device once)."""
    last = entries[-1].kind
    placed = [e for e in entries if e.device_type.is_host]
    hosts = sorted(t.name for t in registry.device_types() if t.is_host)
    host = str(placed[0]) if placed else ("c" if "c" in hosts else hosts[0])
    fixed = ", ".join([str(e) for e in entries if not e.device_type.is_host] + [host])
    where = (f"{placed[0].kind!r} is a host but is not last" if placed
             else f"{last!r} cannot be a host (host devices: {', '.join(hosts)})")
    return f"the last device of a target is its host; {where}. Write the target as '{fixed}'"
