"""Each deliberately broken fixture plugin fails the contract it breaks, with a message naming it."""

from __future__ import annotations

import pytest

from tvmdevice.testing.contracts import CheckContext, ContractViolation
from tvmdevice.testing.contracts.lifecycle import lifecycle_machine
from tvmdevice.testing.runner import execute_check, run_suite

#: fixture module -> (the contracts it must fail, the check that must catch it, words of the message)
BROKEN = {
    # Reopening after Close is also what the memory contract's leak check does.
    "broken_lifecycle": ({"lifecycle", "memory"}, "repeatable-cycles", "Open again after Close"),
    "broken_memory": ({"memory"}, "kept-across-deactivate", "reads back wrong after Deactivate"),
    "broken_copies": ({"copies"}, "host-to-device", "from host offset"),
    "broken_attributes": ({"attributes"}, "every-kind", "GetAttr(kMaxThreadsPerBlock)"),
    "broken_kernels": ({"kernels"}, "bit-exact", "differs from the host reference"),
    "broken_layout": ({"layout"}, "header-matches", "sizeof tvm_device_broken_layout_t: C says 24, the Layout "
                                                    "declares 16"),
}
PRIMARY = {"broken_lifecycle": "lifecycle", "broken_memory": "memory", "broken_copies": "copies",
           "broken_attributes": "attributes", "broken_kernels": "kernels", "broken_layout": "layout"}


@pytest.mark.parametrize("module", sorted(BROKEN))
def test_fails_exactly_the_contract_it_breaks(registry_with, examples, module):
    reg, device = registry_with(module)
    expected, check, words = BROKEN[module]
    report = run_suite(device, registry=reg, examples=examples)
    failed = {c.name for c in report.contracts if c.status == "failed"}
    assert not report.passed
    assert failed == expected, report.to_json()
    result = next(r for c in report.contracts for r in c.results if r.check == check)
    assert result.status == "failed"
    assert f"device {device!r} broke the {PRIMARY[module]} contract ({check})" in result.message
    assert words in result.message


@pytest.mark.parametrize("module", sorted(BROKEN))
def test_the_plain_check_raises_a_violation_naming_contract_and_device(registry_with, examples, module):
    reg, device = registry_with(module)
    _, check, _ = BROKEN[module]
    contract = PRIMARY[module]
    with pytest.raises(ContractViolation) as info:
        execute_check(CheckContext(device, reg, examples=examples), contract, check)
    assert info.value.contract == contract and info.value.device == device and info.value.check == check
    assert isinstance(info.value, AssertionError)
    assert contract in str(info.value) and device in str(info.value)


def test_a_crashing_kernel_fails_its_contract_when_isolated(registry_with, examples):
    reg, device = registry_with("broken_crash")
    report = run_suite(device, registry=reg, contracts=["kernels"], examples=examples, isolate=True)
    (result,) = report.contracts[0].results
    assert result.status == "failed"
    assert "broke the kernels contract" in result.message and "died with SIGSEGV" in result.message
    assert "while running ADD(" in result.message


def test_devices_are_released_after_a_violation(registry_with, examples):
    reg, device = registry_with("broken_memory")
    ctx = CheckContext(device, reg, examples=examples)
    with pytest.raises(ContractViolation):
        execute_check(ctx, "memory", "kept-across-deactivate")
    assert ctx._devices == []  # every device the check created was walked back down


def test_lifecycle_machine_runs_outside_pytest(registry, registry_with, examples):
    from hypothesis import settings
    from hypothesis.stateful import run_state_machine_as_test

    quick = settings(max_examples=examples, deadline=None, database=None, derandomize=True)
    run_state_machine_as_test(lifecycle_machine(CheckContext("c", registry, contract="lifecycle")), settings=quick)
    reg, device = registry_with("broken_lifecycle")
    machine = lifecycle_machine(CheckContext(device, reg, contract="lifecycle", check="state-machine"))
    with pytest.raises(ContractViolation, match="broke the lifecycle contract .state-machine.: legal open"):
        run_state_machine_as_test(machine, settings=settings(quick, max_examples=50))

