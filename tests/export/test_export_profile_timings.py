"""A firmware profile's ``--json`` is a timings file for ``info --plot --timings``: one cost per kernel call.

Cortex-M runs need ``arm-none-eabi-gcc``, newlib and ``qemu-system-arm``: without them they skip, saying
what to install, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import json

import pytest

import tvmdevice
from tvmdevice.aot.builder import demo_model
from tvmdevice.aot.schedule import KernelStep
from tvmdevice.cli.main import main
from tvmdevice.report import read_timings
from tvmdevice.testing.firmware import require_tools

pytestmark = pytest.mark.export


def test_run_profile_json_reads_as_per_operator_instructions(tmp_path, capsys):
    require_tools("cortex-m55")
    module = tvmdevice.compile(demo_model(), "c", name="demo")
    out = module.export(tmp_path / "demo")
    assert main(["run", str(out), "--cpu", "cortex-m55", "--profile", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(run))
    costs = read_timings(str(path), module)
    kernels = [s for s in module.schedule.steps if isinstance(s, KernelStep)]
    assert [(c.op_index, c.op_type, c.device, c.unit) for c in costs] == [
        (s.op_index, s.call.type, s.device, "instructions") for s in kernels]
    calls = {c["label"]: c["instructions"] for c in run["profile"]["calls"]}
    assert [c.value for c in costs] == [calls[f"op{s.op_index} {s.call.type}"] for s in kernels]
