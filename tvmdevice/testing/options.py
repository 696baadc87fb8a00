"""Target options given on a command line as ``KEY=VALUE`` (``tvmdevice check -o``, ``--tvmdevice-option``)."""

from __future__ import annotations

from typing import Iterable

from ..errors import TargetOptionError

__all__ = ["parse_options"]


def parse_options(pairs: Iterable[str]) -> dict[str, str]:
    """``["sram_kb=64", ...]`` -> ``{"sram_kb": "64"}``; the device converts values to their declared types.

    A leading ``-`` on the key is accepted, as in a target string (``-sram_kb=64``).

    :raises TargetOptionError: an item without ``=`` or without a key.
    """
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().lstrip("-")
        if not sep or not key:
            raise TargetOptionError(f"option {pair!r} must be KEY=VALUE, e.g. sram_kb=64")
        options[key] = value.strip()
    return options
