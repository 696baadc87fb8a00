"""The fixture plugins of ``tests/fixtures/plugins``, imported as plain modules (no distribution).

Tests register them into a fresh registry themselves; ``install_fixture_plugin``
(``tests/conftest.py``) installs one as a real distribution instead.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

FIXTURE_PLUGINS = Path(__file__).parent / "fixtures" / "plugins"


def load_fixture_module(name: str) -> ModuleType:
    """Import ``tests/fixtures/plugins/<name>.py`` as a module."""
    sys.path.insert(0, str(FIXTURE_PLUGINS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)
