"""The real plugins pass every contract when they are installed (skipped cleanly otherwise).

Each contract runs with every check in a forked child, so a plugin whose C
code crashes fails its contract here instead of ending the test session.
"""

from __future__ import annotations

import pytest

from tvmdevice.registry import Registry
from tvmdevice.testing.contracts import CONTRACT_NAMES
from tvmdevice.testing.runner import can_isolate, run_suite

PLUGIN_DEVICES = {"woofles": "tvmdevice-woofles", "cmsis-nn": "tvmdevice-cmsis"}


@pytest.fixture(scope="module")
def installed() -> Registry:
    """A registry with the entry-point plugins of this environment (honours TVMDEVICE_PLUGINS)."""
    return Registry()


@pytest.mark.parametrize("contract", CONTRACT_NAMES)
@pytest.mark.parametrize("device", sorted(PLUGIN_DEVICES))
def test_installed_plugin_passes(installed, examples, device, contract):
    if device not in installed.device_names():
        pytest.skip(f"{device} is not installed (pip install ./plugins/... for {PLUGIN_DEVICES[device]})")
    report = run_suite(device, registry=installed, contracts=[contract], examples=examples,
                       isolate=can_isolate())
    (section,) = report.contracts
    problems = [f"{r.check}: {r.status}: {r.message}" for r in section.results if r.status in ("failed", "error")]
    assert not problems, "\n".join(problems)
