"""The pytest face: ``pytest --pyargs tvmdevice.testing.suite --tvmdevice-device NAME``."""

from __future__ import annotations

import os
import subprocess
import sys

ONLY_BUILTIN = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}


def run_pytest(*args: str, env: dict[str, str] = ONLY_BUILTIN, cwd: str | None = None) -> subprocess.CompletedProcess:
    # -p no:cacheprovider: leave no .pytest_cache behind in the test's folder.
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], capture_output=True,
                          text=True, env=env, cwd=cwd, timeout=300)


def test_suite_runs_against_the_selected_device(tmp_path):
    proc = run_pytest("--pyargs", "tvmdevice.testing.suite", "--tvmdevice-device", "c", "--tvmdevice-examples", "3",
                      "-q", "-k", "lifecycle or layout", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 passed" in proc.stdout


def test_devices_come_from_the_environment_too(tmp_path):
    env = {**ONLY_BUILTIN, "TVMDEVICE_TEST_DEVICES": "c", "TVMDEVICE_TEST_EXAMPLES": "2"}
    proc = run_pytest("--pyargs", "tvmdevice.testing.suite", "--collect-only", "-q", env=env, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_conformance[c-memory-out-of-memory]" in proc.stdout


def test_target_options_reach_the_suite(tmp_path):
    proc = run_pytest("--pyargs", "tvmdevice.testing.suite", "--tvmdevice-device", "c", "--tvmdevice-option",
                      "workspace_bytes=2048", "-q", "-rs", "-k", "memory", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "on a device with 2048 bytes" in proc.stdout and "skipped" in proc.stdout


def test_an_unknown_device_is_a_usage_error(tmp_path):
    proc = run_pytest("--pyargs", "tvmdevice.testing.suite", "--tvmdevice-device", "no-such-npu", cwd=str(tmp_path))
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "unknown device 'no-such-npu'" in proc.stderr


def test_a_broken_plugin_fails_its_contract_under_pytest(install_fixture_plugin, tmp_path):
    install_fixture_plugin("broken_copies")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site"), "TVMDEVICE_PLUGINS": "broken_copies"}
    proc = run_pytest("--pyargs", "tvmdevice.testing.suite", "--tvmdevice-device", "broken-copies",
                      "--tvmdevice-examples", "5", "-q", "-k", "copies", env=env, cwd=str(tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "failed" in proc.stdout and "passed" in proc.stdout  # stream checks pass, offset checks fail
    assert "ContractViolation: device 'broken-copies' broke the copies contract (host-to-device)" in proc.stdout


def test_the_suite_is_not_collected_by_a_project_run():
    # The project's testpaths never reach the suite: only --pyargs (or its path) selects it.  testpaths apply
    # only to a run started in the checkout's root, so the run is the `pytest` script: `python -m pytest`
    # would put the root on sys.path, where the unbuilt source folder refuses to be imported.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = os.path.join(os.path.dirname(sys.executable), "pytest")
    proc = subprocess.run([script, "-p", "no:cacheprovider", "--collect-only", "-q", "--continue-on-collection-errors"],
                          capture_output=True, text=True, env=ONLY_BUILTIN, cwd=root, timeout=300)
    assert "tests/conformance/test_check_cli.py::" in proc.stdout, proc.stdout[-2000:] + proc.stderr
    assert "tvmdevice/testing/suite" not in proc.stdout and "test_conformance[" not in proc.stdout
