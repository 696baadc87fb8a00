"""Fixtures for testing the conformance kit: registries holding one fixture plugin each."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Callable

import pytest

from tvmdevice.registry import Registry

FIXTURE_PLUGINS = Path(__file__).parent.parent / "fixtures" / "plugins"

#: Few examples: enough to find every planted bug, quick enough for the whole folder in well under 2 minutes.
EXAMPLES = 8


@pytest.fixture
def examples() -> int:
    """Hypothesis examples per property for these tests."""
    return EXAMPLES


def load_fixture_module(name: str):
    """Import ``tests/fixtures/plugins/<name>.py`` as a module."""
    sys.path.insert(0, str(FIXTURE_PLUGINS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


@pytest.fixture
def registry_with() -> Callable[[str], tuple[Registry, str]]:
    """``registry_with(module)`` -> (a fresh registry holding that fixture plugin, its device name)."""

    def make(module: str) -> tuple[Registry, str]:
        mod = load_fixture_module(module)
        reg = Registry(autoload=False)
        reg.register(mod, module)
        return reg, mod.DEVICE_TYPE.name

    return make
