"""Refuse, at import, a copy of the package whose C extensions were never built.

Python run from the repository root finds the source folder before any
installed copy; without this check it would import and fail much later, on
the first C call, with an unrelated ``No module named 'tvmdevice._abi'``.
Importing this module runs the check (``tvmdevice/__init__.py`` imports it
first).
"""

from __future__ import annotations

import os
from importlib.machinery import EXTENSION_SUFFIXES


def require_built_extensions() -> None:
    """Raise a one-line :class:`ImportError` saying what to do when ``_abi`` is not built beside this file."""
    here = os.path.dirname(os.path.abspath(__file__))
    if any(os.path.exists(os.path.join(here, "_abi" + suffix)) for suffix in EXTENSION_SUFFIXES):
        return
    root = os.path.dirname(here)
    if os.path.exists(os.path.join(root, "setup.py")):
        raise ImportError(
            f"tvmdevice is being imported from its source checkout ({root}), whose C extensions are not built: "
            "install it (`pip install .`) and run Python from another directory, or build it in place "
            "(`pip install -e .`)"
        )
    raise ImportError(f"tvmdevice at {here} is missing its C extensions (_abi): reinstall it (`pip install tvmdevice`)")


require_built_extensions()
