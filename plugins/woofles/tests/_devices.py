"""A woofles device as a context manager, for tests that hypothesis runs many times."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def active_device(registry: Any, **options: Any) -> Iterator[Any]:
    """An active woofles device with ``options``, released on exit."""
    device = registry.create_device("woofles", options)
    try:
        device.init()
        device.open()
        device.activate()
        yield device
    finally:
        device.release()
