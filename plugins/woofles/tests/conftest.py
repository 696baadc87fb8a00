"""Fixtures for the woofles tests: the registry, and devices in each lifecycle state."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tvmdevice.registry import Registry

# `python -m pytest` run from plugins/woofles puts that directory first on
# sys.path, where the source package (no compiled extensions) would shadow the
# installed distribution these tests are about.  Drop it before anything
# imports tvmdevice_woofles.
_PLUGIN_DIR = Path(__file__).resolve().parent.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _PLUGIN_DIR]
assert "tvmdevice_woofles" not in sys.modules, "tvmdevice_woofles was imported from the source tree"


@pytest.fixture(scope="session")
def registry() -> Registry:
    """A registry that discovered the installed plugins (woofles through its entry point)."""
    return Registry()


@pytest.fixture
def make_device(registry: Registry) -> Iterator[Callable[..., Any]]:
    """``make_device(state="active", **options)``: a woofles device walked up to ``state``;
    released at teardown from wherever the test left it."""
    made = []

    def make(state: str = "active", **options: Any):
        device = registry.create_device("woofles", options)
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


@pytest.fixture
def device(make_device: Callable[..., Any]):
    """An active woofles device with default options."""
    return make_device()
