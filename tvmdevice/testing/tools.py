"""Test helper: skip a test when a program it needs is missing, naming the Debian package to install.

Under ``CI=true`` the test fails instead: CI installs the packages (``.ci/run``),
so a skip there would hide a broken set-up.
"""

from __future__ import annotations

import os
import shutil

__all__ = ["require_program"]


def require_program(command: str, package: str) -> str:
    """The path of ``command``; skips the calling test when it is missing (fails under ``CI=true``)."""
    import pytest

    path = shutil.which(command)
    if path is not None:
        return path
    why = f"{command!r} not found: install the Debian package {package} (apt-get install {package})"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and a tool is missing: {why}")
    pytest.skip(why)
    raise AssertionError("unreachable")  # pragma: no cover - pytest.skip raises
