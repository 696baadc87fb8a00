"""pytest plugin (entry point ``pytest11``): options and fixtures for tvmdevice tests."""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tvmdevice")
    group.addoption("--tvmdevice-device", action="append", default=[], metavar="NAME",
                    help="device type(s) the tvmdevice conformance suite runs against "
                         "(default: TVMDEVICE_TEST_DEVICES, else every installed device)")


def selected_devices(config: pytest.Config) -> list[str] | None:
    """Device names chosen with --tvmdevice-device or TVMDEVICE_TEST_DEVICES; None means all."""
    names = list(config.getoption("--tvmdevice-device") or [])
    if not names and os.environ.get("TVMDEVICE_TEST_DEVICES", "").strip():
        names = [n.strip() for n in os.environ["TVMDEVICE_TEST_DEVICES"].split(",") if n.strip()]
    return names or None
