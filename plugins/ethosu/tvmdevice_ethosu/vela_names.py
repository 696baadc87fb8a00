"""The values Vela's options take, read from the installed Vela (never a copy kept here).

The accelerators are Vela's ``Accelerator`` enum without the Ethos-U85 (whose
register interface and command stream differ: this device is an Ethos-U55/U65);
the system configs and memory modes are the sections of the configuration file
Vela ships (``ethosu/config_files/Arm/vela.ini``) that do not name an U85,
beside Vela's ``internal-default``.  ``ethos-u-vela`` is a build requirement
too: ``setup.py`` loads :mod:`tvmdevice_ethosu.device`, which uses these.
"""

from __future__ import annotations

import configparser
import functools
from pathlib import Path

__all__ = ["DEFAULT", "CONFIG_FILE", "accelerators", "system_configs", "memory_modes", "optimise",
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
