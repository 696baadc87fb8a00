"""Importing a copy of the package whose C extensions were never built fails at once, in one line.

Python started in the repository root imports the source folder, not the installed package; the
error must say so and what to do, instead of a ``No module named 'tvmdevice._abi'`` from deep inside
the first C call.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import tvmdevice


def _import_from(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "import tvmdevice"], cwd=folder, capture_output=True, text=True,
                          timeout=60)


def _unbuilt_copy(root: Path) -> Path:
    """The package's ``__init__.py`` and its import check in ``root/tvmdevice``: no extension module beside them."""
    package = root / "tvmdevice"
    package.mkdir()
    shutil.copy(Path(tvmdevice.__file__), package / "__init__.py")
    shutil.copy(Path(tvmdevice.__file__).with_name("_built.py"), package / "_built.py")
    return package


def test_an_unbuilt_source_checkout_is_refused_naming_the_fix(tmp_path: Path) -> None:
    _unbuilt_copy(tmp_path)
    (tmp_path / "setup.py").write_text("")
    result = _import_from(tmp_path)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: tvmdevice is being imported from its source checkout")
    assert str(tmp_path) in last and "pip install ." in last and "another directory" in last
    assert "_abi'" not in result.stderr  # not the late, unrelated error


def test_an_installed_copy_missing_its_extensions_says_reinstall(tmp_path: Path) -> None:
    _unbuilt_copy(tmp_path)
    result = _import_from(tmp_path)
    assert result.returncode != 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: tvmdevice at ") and "missing its C extensions" in last
    assert "reinstall" in last


def test_the_installed_package_imports() -> None:
    # the same check passes where the extensions are built (this test process imported it already)
    result = subprocess.run([sys.executable, "-c", "import tvmdevice, tvmdevice._abi"], capture_output=True,
                            text=True, timeout=60, cwd=Path(tvmdevice.__file__).parents[1])
    assert result.returncode == 0, result.stderr
