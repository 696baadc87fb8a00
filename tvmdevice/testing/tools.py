"""Test helpers: skip a test whose tool is missing, saying what to install; under ``CI=true``, fail it.

CI installs the Debian packages the tests need (``.ci/run``), so a skip there
would hide a broken set-up: :func:`skip_or_fail` is the one place that decides.
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

__all__ = ["require_program", "skip_or_fail"]


def skip_or_fail(why: str) -> NoReturn:
    """Skip the calling test because of ``why`` (naming what to install); fail it instead under ``CI=true``."""
    import pytest

    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and a tool is missing: {why}")
    pytest.skip(why)
    raise AssertionError("pytest.skip returned")  # pragma: no cover - for type checkers without pytest


def require_program(command: str, package: str) -> str:
    """The path of ``command``; without it, :func:`skip_or_fail` naming the Debian ``package``."""
    path = shutil.which(command)
    if path is None:
        skip_or_fail(f"{command!r} not found: install the Debian package {package} (apt-get install {package})")
    return path
