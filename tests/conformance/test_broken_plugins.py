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



# ------------------------------------------------- plugins whose import takes the process down
def _discover(**kwargs):
    import warnings

    from tvmdevice.errors import PluginWarning
    from tvmdevice.registry import Registry

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg = Registry(**kwargs)
        reg.load()
    return reg, [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]


def _record(reg, name):
    return next(r for r in reg.records() if r.name == name)


CRASHERS = {
    "fixture_segfault": ("crashed", "died with SIGSEGV"),
    "fixture_abort": ("crashed", "died with SIGABRT"),
    "fixture_hang": ("hung", "did not finish within 3 s"),
    "fixture_os_exit": ("exited", "ended the process with exit status 7"),
    # A SIGINT the plugin sends itself would be taken for the user's Ctrl-C in-process; the probe sees it.
    "fixture_ctrl_c": ("crashed", "died with SIGINT"),
}


@pytest.mark.parametrize("module", sorted(CRASHERS))
def test_a_plugin_that_takes_its_process_down_is_probed_and_skipped(install_fixture_plugin, monkeypatch, module):
    import sys

    monkeypatch.setenv("TVMDEVICE_PROBE_TIMEOUT", "3")
    install_fixture_plugin("fixture_good", entry_name="toy")
    install_fixture_plugin(module, dist="tvmdevice-crasher", version="1.0")
    reg, warned = _discover()
    verdict, words = CRASHERS[module]
    rec = _record(reg, module)
    assert rec.status == "failed" and rec.probe.verdict == verdict
    assert f"skipped without importing it: importing '{module}' in a probe process {words}" in rec.error
    assert "until tvmdevice-crasher's version changes; to probe it again: tvmdevice plugins --probe" in rec.error
    assert any("tvmdevice-crasher 1.0" in w and words in w for w in warned)
    assert module not in sys.modules, "the host never imported it"
    assert reg.device_type("toy").name == "toy" and _record(reg, "toy").probe.safe
    if verdict == "crashed" and module != "fixture_ctrl_c":
        assert "Fatal Python error" in rec.probe.output and f"{module}.py" in rec.probe.output


def test_a_verdict_is_remembered_per_version_and_probing_runs_once(install_fixture_plugin, monkeypatch, tmp_path):
    import json

    import tvmdevice.probe as probe

    install_fixture_plugin("fixture_good", entry_name="toy", dist="tvmdevice-toy", version="1.0")
    install_fixture_plugin("fixture_segfault", entry_name="seg", dist="tvmdevice-seg", version="1.0")
    monkeypatch.setattr(probe, "_memory", {})  # as in a new process: only the cache file knows anything
    _discover()
    entries = json.loads((tmp_path / "cache" / "plugin-probes.json").read_text())["entries"]
    assert sorted(e["result"]["verdict"] for k, e in entries.items() if k.startswith(("tvmdevice-seg==",
                                                                                      "tvmdevice-toy=="))) \
        == ["crashed", "ok"]
    assert any(k.startswith("tvmdevice-seg==1.0 seg=fixture_segfault @") for k in entries)

    def no_probe(*args, **kwargs):
        raise AssertionError("a remembered version must not be probed again")

    monkeypatch.setattr(probe, "probe", no_probe)
    monkeypatch.setattr(probe, "_memory", {})  # read back from the file, as a new process would
    reg, _ = _discover()
    assert _record(reg, "seg").status == "failed" and "died with SIGSEGV" in _record(reg, "seg").error
    assert _record(reg, "toy").status == "loaded"
    monkeypatch.undo()

    # A new version (the crash fixed) is probed on first use, and then it loads.
    monkeypatch.setenv("TVMDEVICE_CACHE_DIR", str(tmp_path / "cache"))
    site = tmp_path / "site"
    (site / "fixture_segfault.py").write_text((site / "fixture_good.py").read_text().replace("toy", "seg"))
    (site / "tvmdevice_seg-1.0.dist-info").rename(site / "tvmdevice_seg-1.1.dist-info")
    (site / "tvmdevice_seg-1.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: tvmdevice-seg\n"
                                                                   "Version: 1.1\n")
    monkeypatch.syspath_prepend(str(site))
    reg, _ = _discover()
    assert _record(reg, "seg").status == "loaded", _record(reg, "seg").error
    assert _record(reg, "seg").version == "1.1"
    assert reg.device_type("seg").name == "seg"
    entries = json.loads((tmp_path / "cache" / "plugin-probes.json").read_text())["entries"]
    assert not any("tvmdevice-seg==1.0" in k for k in entries), "the old version's verdict is dropped"


def test_cli_probe_re_probes_and_reports(install_fixture_plugin, tmp_path):
    import json
    import os
    import subprocess
    import sys

    install_fixture_plugin("fixture_good", entry_name="toy", dist="tvmdevice-toy")
    install_fixture_plugin("fixture_abort", entry_name="ab", dist="tvmdevice-ab")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    cli = [sys.executable, "-m", "tvmdevice", "plugins"]
    data = json.loads(subprocess.run(cli + ["--json"], capture_output=True, text=True, env=env, check=True).stdout)
    by_name = {p["name"]: p for p in data["plugins"]}
    assert by_name["ab"]["status"] == "failed" and by_name["ab"]["probe"]["verdict"] == "crashed"
    assert by_name["toy"]["status"] == "loaded" and by_name["toy"]["probe"]["verdict"] == "ok"
    # Fixed in place, same version: remembered as crashing until re-probed.
    (tmp_path / "site" / "fixture_abort.py").write_text('"""fixed"""\n')
    again = json.loads(subprocess.run(cli + ["--json"], capture_output=True, text=True, env=env,
                                      check=True).stdout)
    assert {p["name"]: p["status"] for p in again["plugins"]}["ab"] == "failed"
    text = subprocess.run(cli + ["--probe", "--timeout", "30"], capture_output=True, text=True, env=env,
                          check=True).stdout
    assert "probe:     ok" in text and "died with SIGABRT" not in text
    fresh = json.loads(subprocess.run(cli + ["--json"], capture_output=True, text=True, env=env,
                                      check=True).stdout)
    assert {p["name"]: p["status"] for p in fresh["plugins"]}["ab"] == "loaded"


def test_probe_timeout_zero_turns_automatic_probing_off(install_fixture_plugin, monkeypatch):
    import tvmdevice.probe as probe

    def no_probe(*args, **kwargs):
        raise AssertionError("TVMDEVICE_PROBE_TIMEOUT=0 must not probe")

    monkeypatch.setattr(probe, "probe", no_probe)
    monkeypatch.setattr(probe, "_memory", {})
    monkeypatch.setenv("TVMDEVICE_PROBE_TIMEOUT", "0")
    install_fixture_plugin("fixture_sys_exit")
    reg, _ = _discover()
    rec = _record(reg, "fixture_sys_exit")
    assert rec.probe is None and "called sys.exit(3)" in rec.error, "imported directly, and still contained"
