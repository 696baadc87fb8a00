"""Fixtures for testing the conformance kit: registries holding one fixture plugin each."""

from __future__ import annotations

from typing import Callable

import pytest
from plugin_fixtures import load_fixture_module

from tvmdevice.registry import Registry

#: Few examples: enough to find every planted bug, quick enough for the whole folder in well under 2 minutes.
EXAMPLES = 8


@pytest.fixture
def examples() -> int:
    """Hypothesis examples per property for these tests."""
    return EXAMPLES




@pytest.fixture
def registry_with() -> Callable[[str], tuple[Registry, str]]:
    """``registry_with(module)`` -> (a fresh registry holding that fixture plugin, its device name)."""

    def make(module: str) -> tuple[Registry, str]:
        mod = load_fixture_module(module)
        reg = Registry(autoload=False)
        reg.register(mod, module)
        return reg, mod.DEVICE_TYPE.name

    return make
