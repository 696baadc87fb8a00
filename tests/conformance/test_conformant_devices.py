"""The kit against devices that honour every contract: the built-in ``c`` and the kit's sample device."""

from __future__ import annotations

import pytest

from tvmdevice.registry import Registry
from tvmdevice.testing import sample_plugin
from tvmdevice.testing.contracts import CONTRACTS, CheckContext
from tvmdevice.testing.contracts.kernel_space import STRATEGIES
from tvmdevice.testing.contracts.kernels import Tally, _explore, _target
from tvmdevice.testing.runner import execute_check, run_suite

CASES = [(c.name, k.name) for c in CONTRACTS.values() for k in c.checks]


@pytest.mark.parametrize(("contract", "check"), CASES, ids=[f"{c}-{k}" for c, k in CASES])
def test_builtin_c_passes(registry, examples, contract, check):
    ctx = CheckContext("c", registry, examples=examples)
    execute_check(ctx, contract, check)


def test_sample_device_passes_all_but_kernels_which_it_does_not_declare(examples):
    reg = Registry(autoload=False)
    reg.register(sample_plugin, "sample")
    report = run_suite("sample", registry=reg, examples=examples)
    status = {c.name: c.status for c in report.contracts}
    assert report.passed, report.to_json()
    assert status == {**{name: "passed" for name in CONTRACTS}, "kernels": "skipped"}
    kernels = next(c for c in report.contracts if c.name == "kernels")
    assert "declares no operators" in kernels.results[0].message


def test_an_alias_checks_the_canonical_device(registry, examples):
    report = run_suite("cpu", registry=registry, contracts=["attributes"], examples=examples)
    assert report.device == "c" and report.passed


@pytest.mark.parametrize("op_type", sorted(STRATEGIES))
def test_parameter_space_mostly_inside_the_reference(registry, examples, op_type):
    # A space whose draws the host reference refuses would check nothing.
    ctx = CheckContext("c", registry, examples=examples, contract="kernels", check="bit-exact")
    tally, failure = _explore(ctx, _target(ctx), op_type)
    assert failure is None
    assert isinstance(tally, Tally) and tally.declined == 0
    assert tally.ran >= examples // 2, f"{op_type}: only {tally.ran} of {examples} draws ran"


def test_kernel_note_counts_variants(registry):
    ctx = CheckContext("c", registry, examples=3)
    note = execute_check(ctx, "kernels", "bit-exact")
    assert "variants ran bit-exact" in note and "0 declined by the device" in note
    for op in registry.device_type("c").operators:
        assert f"{op} " in note


def test_a_device_too_small_for_the_checks_is_skipped_not_failed(examples):
    reg = Registry(autoload=False)
    reg.register(sample_plugin, "sample")
    report = run_suite("sample", registry=reg, contracts=["memory", "copies"], examples=examples,
                       options={"capacity": "2048"})
    assert report.passed, report.to_json()
    skipped = [r for c in report.contracts for r in c.results if r.status == "skipped"]
    assert skipped and all("on a device with 2048 bytes" in r.message and "64 KiB" in r.message for r in skipped)
    oom = next(r for r in report.contracts[0].results if r.check == "out-of-memory")
    assert oom.status == "passed" and "asked 2049 B" in oom.message
