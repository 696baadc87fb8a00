"""The values Vela's options take, read from the installed Vela (never a copy kept here).

The accelerators are Vela's ``Accelerator`` enum without the Ethos-U85 (whose
register interface and command stream differ: this device is an Ethos-U55/U65);
the system configs and memory modes are the sections of the configuration file
Vela ships (``ethosu/config_files/Arm/vela.ini``) that do not name an U85,
beside Vela's ``internal-default``.  ``ethos-u-vela`` is a build requirement
too: ``setup.py`` loads :mod:`tvmdevice_ethosu.device`, which uses these.

Vela's modules import numpy: listing the installed devices must not, so the
device's options hold :class:`VelaValues`, which read Vela on first use.
"""

from __future__ import annotations

import configparser
import functools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import overload

__all__ = ["DEFAULT", "CONFIG_FILE", "VelaValues", "accelerators", "system_configs", "memory_modes", "optimise",
           "tensor_allocators"]

#: Vela's name for "no section of a configuration file" (ArchitectureFeatures.DEFAULT_CONFIG).
DEFAULT = "internal-default"


def _is_u85(name: str) -> bool:
    return "u85" in name.lower()


def _vela_dir() -> Path:
    import ethosu.vela

    return Path(ethosu.vela.__file__).resolve().parent.parent


#: The configuration file Vela ships, whose sections the options name.
CONFIG_FILE = "Arm/vela.ini"


def config_path() -> Path:
    return _vela_dir() / "config_files" / CONFIG_FILE


@functools.cache
def _sections() -> tuple[str, ...]:
    parser = configparser.ConfigParser()
    parser.read(config_path())
    return tuple(parser.sections())


def _named(prefix: str) -> tuple[str, ...]:
    return (DEFAULT, *(s[len(prefix):] for s in _sections() if s.startswith(prefix) and not _is_u85(s)))


def accelerators() -> tuple[str, ...]:
    from ethosu.vela.architecture_features import Accelerator

    return tuple(a.value for a in Accelerator if not _is_u85(a.value))


def system_configs() -> tuple[str, ...]:
    return _named("System_Config.")


def memory_modes() -> tuple[str, ...]:
    return _named("Memory_Mode.")


def optimise() -> tuple[str, ...]:
    import ethosu.vela.npu_performance  # noqa: F401 - first: Vela's scheduler imports it circularly
    from ethosu.vela.scheduler import OptimizationStrategy

    return tuple(s.name for s in OptimizationStrategy)


def tensor_allocators() -> tuple[str, ...]:
    from ethosu.vela.nn_graph import TensorAllocator

    return tuple(str(a) for a in TensorAllocator)


class VelaValues(Sequence[str]):
    """The values of one of Vela's options, read from the installed Vela when first used."""

    def __init__(self, read: Callable[[], tuple[str, ...]]) -> None:
        self._read = read
        self._values: tuple[str, ...] | None = None

    @property
    def values(self) -> tuple[str, ...]:
        if self._values is None:
            self._values = self._read()
        return self._values

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self.values[index]

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __contains__(self, value: object) -> bool:
        return value in self.values

    def __repr__(self) -> str:
        return repr(self.values)
