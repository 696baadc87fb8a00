"""The picture tests need matplotlib (the ``plot`` extra): they skip without it, saying so."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib", reason="the pictures need matplotlib: pip install 'tvmdevice[plot]'")
