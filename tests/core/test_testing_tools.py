"""A test whose tool is missing skips naming the package, and fails instead under CI=true."""

from __future__ import annotations

import pytest

from tvmdevice.testing.firmware import require_tools
from tvmdevice.testing.tools import require_program


def test_a_missing_program_skips_naming_its_package(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="install the Debian package no-such-pkg"):
        require_program("no-such-program-tvmdevice", "no-such-pkg")


def test_a_missing_program_fails_under_ci(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true and a tool is missing: 'no-such-program-tvmdevice'"):
        require_program("no-such-program-tvmdevice", "no-such-pkg")


def test_a_present_program_is_found():
    assert require_program("sh", "dash").endswith("sh")


def test_firmware_tools_missing_fail_under_ci_for_cortex_m_only(monkeypatch):
    import tvmdevice.testing.firmware as fw

    monkeypatch.setattr(fw, "missing_tools", lambda cpu: f"no tools for {cpu}")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no tools for cortex-m55"):
        require_tools("cortex-m55")
    with pytest.raises(pytest.skip.Exception, match="no tools for host"):
        require_tools("host")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="no tools for cortex-m4"):
        require_tools("cortex-m4")
