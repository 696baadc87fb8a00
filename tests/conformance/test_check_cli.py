"""``tvmdevice check`` as a user runs it (subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tvmdevice.cli import check_cmd
from tvmdevice.testing.contracts import CONTRACT_NAMES

ONLY_BUILTIN = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}


def cli(*args: str, env: dict[str, str] = ONLY_BUILTIN) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tvmdevice", "check", *args], capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.fixture
def installed_env(install_fixture_plugin, tmp_path):
    """``installed_env(module)``: env in which only that fixture plugin (and ``c``) is installed."""

    def make(module: str) -> dict[str, str]:
        install_fixture_plugin(module)
        site = str(tmp_path / "site")
        return {**os.environ, "PYTHONPATH": os.pathsep.join([site, os.environ.get("PYTHONPATH", "")]),
                "TVMDEVICE_PLUGINS": module}

    return make


def test_cli_lists_the_kits_contracts():
    assert check_cmd.CONTRACT_NAMES == CONTRACT_NAMES


def test_builtin_device_passes_with_a_readable_report():
    proc = cli("c", "--examples", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert out.startswith("tvmdevice check c: 3 example(s) per property")
    for name in CONTRACT_NAMES:
        assert f"\n{name}\n" in out
    assert "PASS  memory/kept-across-deactivate" in out and "variants ran bit-exact" in out
    assert "FAIL" not in out
    assert out.rstrip().splitlines()[-1].startswith("c: PASSED — 6 of 6 contract(s) passed")


def test_json_report_and_contract_selection():
    proc = cli("c", "--json", "--contract", "attributes", "--contract", "layout")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["device"] == "c" and report["passed"] is True
    assert [c["contract"] for c in report["contracts"]] == ["attributes", "layout"]
    layout = report["contracts"][1]
    assert layout["counts"] == {"passed": 2, "failed": 0, "skipped": 0, "error": 0}
    assert all(isinstance(c["seconds"], float) for c in layout["checks"])


def test_unknown_device_is_the_registrys_error_without_traceback():
    proc = cli("no-such-npu")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "unknown device 'no-such-npu'" in proc.stderr and "Installed devices: c" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_contract_is_a_usage_error():
    proc = cli("c", "--contract", "speed")
    assert proc.returncode == 2 and "invalid choice: 'speed'" in proc.stderr


@pytest.mark.parametrize(("module", "device", "contract"), [
    ("broken_memory", "broken-memory", "memory"),
    ("broken_copies", "broken-copies", "copies"),
    ("broken_layout", "broken-layout", "layout"),
])
def test_broken_plugin_fails_naming_the_contract(installed_env, module, device, contract):
    proc = cli(device, "--examples", "5", env=installed_env(module))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"device '{device}' broke the {contract} contract" in proc.stdout
    assert f"{device}: FAILED ({contract})" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_crashing_plugin_is_reported_not_fatal(installed_env):
    proc = cli("broken-crash", "--contract", "kernels", "--contract", "layout", "--examples", "3",
               env=installed_env("broken_crash"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL  kernels/bit-exact" in proc.stdout and "died with SIGSEGV while running ADD(" in proc.stdout
    assert "PASS  layout/header-matches" in proc.stdout  # the run went on after the crash


def test_target_options_reach_the_devices():
    proc = cli("c", "-o", "workspace_bytes=100000", "--contract", "memory")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("tvmdevice check c -workspace_bytes=100000:")
    assert "asked 100001 B" in proc.stdout  # the cap became the device's kTotalGlobalMemory


@pytest.mark.parametrize(("option", "words"), [("bogus=1", "has no option -bogus"),
                                               ("workspace_bytes", "must be KEY=VALUE")])
def test_bad_options_are_errors_before_anything_runs(option, words):
    proc = cli("c", "-o", option)
    assert proc.returncode == 1 and proc.stdout == ""
    assert words in proc.stderr and "Traceback" not in proc.stderr
