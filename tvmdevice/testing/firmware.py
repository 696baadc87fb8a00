"""Test helper: skip a firmware test when its CPU's tools are missing, naming what to install.

Under ``CI=true`` a missing Cortex-M tool fails the test instead: CI installs
them (``.ci/run``), so a skip there would hide a broken set-up.
"""

from __future__ import annotations

__all__ = ["missing_tools", "require_tools"]


def missing_tools(cpu: str) -> str | None:
    """Why images for ``cpu`` cannot be built and run here (naming what to install), or None when they can."""
    from .. import firmware

    try:
        the_cpu = firmware.get_cpu(cpu)
        firmware.find_toolchain(the_cpu)
        if not the_cpu.is_host:
            firmware.find_qemu(the_cpu)
    except firmware.ToolchainMissingError as e:
        return str(e)
    return None


def require_tools(cpu: str) -> None:
    """Skip the calling test when ``cpu``'s tools are missing; fail instead under ``CI=true`` (Cortex-M)."""
    import pytest

    from .tools import skip_or_fail

    why = missing_tools(cpu)
    if why is None:
        return
    if cpu == "host":
        pytest.skip(why)
    skip_or_fail(why)
