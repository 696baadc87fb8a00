"""Fixtures of the firmware platform tests: a private cache, the dense layer's header, a shared build folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fw_helpers import DenseLayer


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory):
    """Build artefacts and the QEMU plugin go to a folder of this test session."""
    old = os.environ.get("TVMDEVICE_CACHE_DIR")
    os.environ["TVMDEVICE_CACHE_DIR"] = str(tmp_path_factory.mktemp("fw-cache"))
    yield
    if old is None:
        os.environ.pop("TVMDEVICE_CACHE_DIR", None)
    else:
        os.environ["TVMDEVICE_CACHE_DIR"] = old


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
