"""Fixtures of the firmware platform tests: a private cache, the dense layer's header, a shared build folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from fw_helpers import DenseLayer


@pytest.fixture(scope="session", autouse=True)
def private_cache(private_firmware_cache):
    """Every test here builds into this session's own cache (tests/conftest.py)."""


@pytest.fixture(scope="session")
def dense_layer() -> DenseLayer:
    return DenseLayer(rows=32, cols=64)


@pytest.fixture(scope="session")
def dense_headers(tmp_path_factory, dense_layer) -> Path:
    """The folder holding the session's dense_weights.h."""
    return dense_layer.write_header(tmp_path_factory.mktemp("dense-headers"))


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory) -> Path:
    """One build folder for the session: images built by one test are reused (cached) by the next."""
    return tmp_path_factory.mktemp("fw-build")
