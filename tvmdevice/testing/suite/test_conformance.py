"""Every conformance check against every selected device (see ``tvmdevice.testing.pytest_plugin``)."""

from __future__ import annotations

import pytest

from tvmdevice.testing.contracts import CONTRACTS

CASES = [(contract.name, check.name) for contract in CONTRACTS.values() for check in contract.checks]


@pytest.mark.parametrize(("contract", "check"), CASES, ids=[f"{c}-{k}" for c, k in CASES])
def test_conformance(tvmdevice_check, contract: str, check: str) -> None:
    tvmdevice_check(contract, check)
