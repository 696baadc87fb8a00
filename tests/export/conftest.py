"""Fixtures of the export tests: a private build cache."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def private_cache(private_firmware_cache):
    """Every test here builds into this session's own cache (tests/conftest.py)."""
