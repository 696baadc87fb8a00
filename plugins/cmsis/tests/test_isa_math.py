"""The instruction-set forms of the shared fixed-point math equal the portable ones, on the CPUs that run them.

``csrc/check_isa_math.c`` is built like an export's firmware (the hook's
sources, its include folder and the core's headers) for each CPU and run:
under QEMU on Cortex-M55 it checks the Helium lanes (requantization,
softmax's exponential and rounding shifts), on Cortex-M4 the DSP build's
scalar forms, on Cortex-M3 and the host the plain ones, each against
tvmdevice/quant.h and tvmdevice/fixedpoint.h over the shifts and
multipliers the operator layer allows.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_export_firmware import _contribution, _layout, _require
from tvmdevice import firmware


@pytest.mark.parametrize("cpu, mve, dsp", [("cortex-m55", 1, 1), ("cortex-m4", 0, 1), ("cortex-m3", 0, 0),
                                           ("host", 0, 0)])
def test_isa_forms_match_the_portable_math(tmp_path, cpu, mve, dsp):
    _require(cpu)
    srcs, includes = _layout(tmp_path, _contribution(cpu))
    # softmax.c is included by the check (its Helium exponential is static).
    srcs = [s for s in srcs if Path(s).name != "softmax.c"]
    check = Path(__file__).parent / "csrc" / "check_isa_math.c"
    image = firmware.build([check, *srcs], includes, cpu, tmp_path / "build", name=f"isa-math-{cpu}")
    result = firmware.run(image, [], cwd=tmp_path, timeout=600)
    assert result.status == 0, f"status {result.status}: {result.stdout}{result.stderr}"
    lines = dict(line.split(": ", 1) for line in result.stdout.strip().splitlines() if ": " in line)
    assert (int(lines["mve"]), int(lines["dsp"])) == (mve, dsp), result.stdout
    assert int(lines["mismatches"]) == 0 and int(lines["checked"]) > 2_000_000, result.stdout
