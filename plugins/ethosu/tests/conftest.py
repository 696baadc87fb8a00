"""Fixtures for the ethos-u tests: the registry, and devices in each lifecycle state."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tvmdevice.registry import Registry

# `python -m pytest` run from plugins/ethosu puts that directory first on
# sys.path, where the source package (no compiled extension) would shadow the
# installed distribution these tests are about.  Drop it before anything
# imports tvmdevice_ethosu.
_PLUGIN_DIR = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _PLUGIN_DIR]
assert "tvmdevice_ethosu" not in sys.modules, "tvmdevice_ethosu was imported from the source tree"


@pytest.fixture(scope="session")
def registry() -> Registry:
    """A registry that discovered the installed plugins (ethos-u through its entry point)."""
    return Registry()


@pytest.fixture
def make_device(registry: Registry) -> Iterator[Callable[..., Any]]:
    """``make_device(state="active", **options)``: an ethos-u device walked up to ``state``."""
    made = []

    def make(state: str = "active", **options: Any):
        device = registry.create_device("ethos-u", options)
        made.append(device)
        steps = {"uninitialized": [], "initialized": [device.init], "opened": [device.init, device.open],
                 "active": [device.init, device.open, device.activate]}[state]
        for step in steps:
            step()
        return device

    yield make
    for device in made:
        try:
            device.release()
        except Exception:  # noqa: BLE001 - a test may have left a device faulted on purpose
            pass


@pytest.fixture(scope="session")
def models_dir() -> Path:
    """TVMDEVICE_MODELS_DIR (the shared real models); the test skips when it is unset."""
    path = os.environ.get("TVMDEVICE_MODELS_DIR")
    if not path:
        pytest.skip("TVMDEVICE_MODELS_DIR is not set (the real models' directory)")
    return Path(path)
