"""The conformance contracts, as plain importable checks.

Each module states one contract of the C Device API and exposes its
``CONTRACT`` (a :class:`Contract` of :class:`Check` functions).  A check
takes a :class:`CheckContext` naming the device type under test and raises
:class:`ContractViolation` — an ``AssertionError`` whose message names the
contract and the device — when the device breaks the contract::

    from tvmdevice.testing.contracts import CONTRACTS, CheckContext
    ctx = CheckContext("woofles", tvmdevice.get_registry(), contract="memory", check="alignment")
    CONTRACTS["memory"].check("alignment").function(ctx)

:func:`tvmdevice.testing.runner.run_check` does the bookkeeping (contract
names, releasing devices, timing) for you.
"""

from __future__ import annotations

from . import attributes, copies, kernels, layout, lifecycle, memory
from ._base import DEFAULT_EXAMPLES, Check, CheckContext, Contract, ContractSkipped, ContractViolation

__all__ = ["CONTRACTS", "CONTRACT_NAMES", "Check", "CheckContext", "Contract", "ContractSkipped",
           "ContractViolation", "DEFAULT_EXAMPLES"]

#: Every contract by name, in the order reports list them.
CONTRACTS: dict[str, Contract] = {c.name: c for c in (
    lifecycle.CONTRACT, memory.CONTRACT, copies.CONTRACT, attributes.CONTRACT, kernels.CONTRACT, layout.CONTRACT,
)}

CONTRACT_NAMES: tuple[str, ...] = tuple(CONTRACTS)
