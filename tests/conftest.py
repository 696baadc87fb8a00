"""Shared fixtures: a fresh registry per test, fixture plugin distributions, the models folder."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
from pathlib import Path

import pytest

import tvmdevice
from tvmdevice.registry import Registry

FIXTURE_PLUGINS = Path(__file__).parent / "fixtures" / "plugins"


@pytest.fixture(autouse=True)
def ctrl_c_reaches_python():
    """Ctrl-C tests need SIGINT to raise KeyboardInterrupt, as in a terminal.  A process started in the
    background of a non-interactive shell inherits SIGINT *ignored* (and so would its probe children), so
    there the test gets Python's own handler for its duration; any other handler is left alone."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.fixture(scope="session")
def private_firmware_cache(tmp_path_factory):
    """Firmware build artefacts and the QEMU plugin go to a folder of this test session
    (``TVMDEVICE_CACHE_DIR``); the firmware and export tests use it for every test."""
    old = os.environ.get("TVMDEVICE_CACHE_DIR")
    os.environ["TVMDEVICE_CACHE_DIR"] = str(tmp_path_factory.mktemp("fw-cache"))
    yield
    if old is None:
        os.environ.pop("TVMDEVICE_CACHE_DIR", None)
    else:
        os.environ["TVMDEVICE_CACHE_DIR"] = old


@pytest.fixture
def registry() -> Registry:
    """A registry with only the built-in host device (no entry points)."""
    reg = Registry(autoload=False)
    old = tvmdevice.set_registry(reg)
    yield reg
    tvmdevice.set_registry(old)


@pytest.fixture
def install_fixture_plugin(tmp_path, monkeypatch):
    """Install a fixture plugin module from tests/fixtures/plugins as a real distribution.

    Writes ``<dist>-<version>.dist-info`` with METADATA and entry_points.txt
    next to a copy of the module, on ``sys.path``: discovery then sees it as
    it would see a pip-installed plugin.
    """
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("TVMDEVICE_CACHE_DIR", str(tmp_path / "cache"))  # probe verdicts stay in the test

    def install(module: str, entry_name: str | None = None, dist: str | None = None,
                version: str = "0.0.1") -> str:
        dist = dist or f"tvmdevice-fixture-{module.replace('_', '-')}"
        src = FIXTURE_PLUGINS / f"{module}.py"
        (site / f"{module}.py").write_text(src.read_text())
        info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(
            textwrap.dedent(f"""\
            [tvmdevice]
            {entry_name or module} = {module}
            """))
        sys.modules.pop(module, None)
        return dist

    yield install


@pytest.fixture
def models_dir() -> Path:
    """The real models folder (``TVMDEVICE_MODELS_DIR``); skips when unset."""
    path = os.environ.get("TVMDEVICE_MODELS_DIR")
    if not path:
        pytest.skip("TVMDEVICE_MODELS_DIR is not set")
    p = Path(path)
    if not p.is_dir():
        pytest.skip(f"TVMDEVICE_MODELS_DIR={path} is not a directory")
    return p
