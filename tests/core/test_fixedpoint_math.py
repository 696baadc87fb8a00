"""tvmdevice/fixedpoint.h, the fixed-point math every device's C shares, against its definitions.

The C harness (csrc/check_fixedpoint_h.c) recomputes TFLM's 64-bit
MultiplyByQuantizedMultiplier in 128-bit integers for every shift the operator
layer allows ([-31, 14]) and the floor shifts, wraps, saturating sums and
leading-zero count the long way.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import tvmdevice

HERE = Path(__file__).parent


def _run(tmp_path: Path, source: str) -> str:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    exe = tmp_path / "check"
    subprocess.run(["cc", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", tvmdevice.get_include(),
                    str(HERE / "csrc" / source), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
    return out.stdout


def test_fixedpoint_h_matches_its_definitions(tmp_path):
    out = _run(tmp_path, "check_fixedpoint_h.c")
    assert out.strip().endswith("mismatches: 0"), out
    assert int(out.split("checked: ")[1].split()[0]) > 10_000_000


def test_fixedpoint_h_compiles_as_strict_c99_and_cxx(tmp_path):
    # Every device's C includes it: a plugin may build with -pedantic, or include it from C++.
    src = tmp_path / "use.c"
    src.write_text('#include "tvmdevice/fixedpoint.h"\n'
                   "int32_t f(int64_t x) { return tvmd_multiply_by_quantized_multiplier_64(x, 1 << 30, -3)"
                   " + tvmd_logistic_s16((int32_t)x) + tvmd_fp_exp_on_negative_values((int32_t)x, 5); }\n")
    for cmd in (["cc", "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-x", "c"],
                ["c++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-x", "c++"]):
        if shutil.which(cmd[0]) is None:
            continue
        subprocess.run([*cmd, "-I", tvmdevice.get_include(), "-c", str(src), "-o", str(tmp_path / "use.o")],
                       check=True)
