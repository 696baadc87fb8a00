"""Typed target options: what ``-key=value`` attributes a device accepts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import TargetOptionError
from .suggest import did_you_mean

__all__ = ["TargetOption", "OPTION_TYPES"]

#: The value types an option may declare, by name as shown to users.
OPTION_TYPES: dict[type, str] = {int: "int", float: "float", bool: "bool", str: "str"}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class TargetOption:
    """One option a device declares.

    :param name: option key as written in a target string (``sram_kb``).
    :param type: ``int``, ``float``, ``bool`` or ``str``.
    :param default: value used when the target string does not set it.
    :param help: one line shown by ``tvmdevice plugins``.
    :param choices: allowed values, if restricted.
    :param minimum: smallest allowed value for numeric options.
    :param maximum: largest allowed value for numeric options (a limit of the
        device itself, e.g. what its C side can address); checked when the
        target is parsed, so a bad value never reaches the device's hooks.
    """

    name: str
    type: type
    default: Any
    help: str = ""
    choices: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None

    def __post_init__(self) -> None:
        if self.type not in OPTION_TYPES:
            raise TypeError(f"option {self.name!r}: type must be one of int, float, bool, str")
        if not self.name.replace("-", "_").isidentifier():
            raise ValueError(f"option name {self.name!r} is not a valid key")
        if (self.minimum is not None or self.maximum is not None) and self.type not in (int, float):
            raise TypeError(f"option {self.name!r}: only int and float options take a minimum or maximum")
        if self.minimum is not None and self.maximum is not None and self.minimum > self.maximum:
            raise ValueError(f"option {self.name!r}: minimum {self.minimum} exceeds maximum {self.maximum}")

    @property
    def type_name(self) -> str:
        return OPTION_TYPES[self.type]

    @property
    def bounds(self) -> str:
        """The allowed range as shown to users (``"1..65536"``, ``">= 1"``), or ``""``."""
        if self.minimum is not None and self.maximum is not None:
            return f"{self.minimum:g}..{self.maximum:g}"
        if self.minimum is not None:
            return f">= {self.minimum:g}"
        if self.maximum is not None:
            return f"<= {self.maximum:g}"
        return ""

    def convert(self, value: Any, device: str) -> Any:
        """Convert a raw value (a string from a target string, or JSON) to the declared type.

        :raises TargetOptionError: naming the device, the option and the expected type.
        """
        try:
            converted = self._convert(value)
        except (TypeError, ValueError):
            raise TargetOptionError(
                f"device {device!r}: option -{self.name} expects {self.type_name}, got {value!r}"
            ) from None
        if self.choices is not None and converted not in self.choices:
            hint = did_you_mean(converted, self.choices) if isinstance(converted, str) else ""
            raise TargetOptionError(
                f"device {device!r}: option -{self.name}={converted!r} is not one of {list(self.choices)}{hint}"
            )
        if self.minimum is not None and converted < self.minimum:
            raise TargetOptionError(
                f"device {device!r}: option -{self.name}={converted!r} is below its minimum {self.minimum}"
            )
        if self.maximum is not None and converted > self.maximum:
            raise TargetOptionError(
                f"device {device!r}: option -{self.name}={converted!r} exceeds its maximum {self.maximum:g}"
                f" (a limit of the device); use at most {self.maximum:g}"
            )
        return converted

    def _convert(self, value: Any) -> Any:
        if self.type is bool:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise ValueError(value)
        if self.type is int:
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)
            return int(value) if not isinstance(value, str) else int(value.strip(), 0)
        if self.type is float:
            if isinstance(value, bool):
                raise ValueError(value)
            return float(value)
        if not isinstance(value, str):
            raise TypeError(value)
        return value

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "type": self.type_name,
            "default": self.default,
            "help": self.help,
            "choices": list(self.choices) if self.choices is not None else None,
            "minimum": self.minimum,
            "maximum": self.maximum,
        }
