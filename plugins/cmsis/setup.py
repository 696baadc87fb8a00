"""Build the cmsis-nn kernels: one extension, C99 kernels and their Cython binding.

Every struct C sees is declared once, in Python: the device struct in
``tvmdevice_cmsis/device.py``, the kernel params structs and the kernel table
in ``tvmdevice_cmsis/kernel_table.py``.  ``tvmdevice.build`` writes the device
header and points the compilers at the core's headers and ``.pxd`` files;
``tvmdevice_cmsis.headers`` adds the params and kernel-table headers.  Everything
the build makes goes outside the source tree (``tvmdevice.build.build_dir``).

``TVMDEVICE_CMSIS_SIMD_EMULATION=1`` builds the x86 SIMD paths against SIMDe
(``apt-get install libsimde-dev``) so every SIMD level runs on any x86-64 CPU,
for tests only (:func:`simd_emulation_flags`).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from setuptools import setup
from tvmdevice.build import extensions, generated_dir, load_declarations, setup_options

HERE = Path(__file__).resolve().parent

# -O3 for the vectorizer.  -fno-wrapv undoes Python's -fwrapv: with wrapping
# int32 indices the vectorizer cannot prove addresses affine and leaves loops
# scalar (the kernels never rely on signed wrap-around; they wrap through
# uint32).  -ffp-contract=fast lets the exact float sums use FMA.  No -march:
# wider SIMD comes from run-time dispatch (target_clones, simd_x86.c).
SPEED_FLAGS = [] if sys.platform == "win32" else [
    "-O3", "-fno-wrapv", "-ffp-contract=fast", "-fno-strict-aliasing", "-Werror=int-conversion"]



def simd_emulation_flags() -> list[str]:
    """``TVMDEVICE_CMSIS_SIMD_EMULATION=1``: the x86 SIMD paths compiled against SIMDe (portable C for the
    intrinsics, csrc/simd_x86.h), so every SIMD level runs, slowly, on any x86-64 CPU and tests check the
    levels the CPU lacks.  Such a build goes to its own build directory (objects never mix with a native
    build's).  When SIMDe's headers are missing it fails here, naming the package, under ``CI=true`` (where a
    missing tool is a failure); elsewhere it says so and builds the native paths, and the tests of the levels
    this CPU lacks skip, naming the package."""
    if os.environ.get("TVMDEVICE_CMSIS_SIMD_EMULATION", "").strip() not in ("1", "true", "yes"):
        return []
    dirs = [Path(d) for d in (*os.environ.get("CPATH", "").split(os.pathsep),
                              *os.environ.get("C_INCLUDE_PATH", "").split(os.pathsep),
                              "/usr/local/include", "/usr/include") if d]
    if not any((d / "simde" / "x86" / "avx512.h").is_file() for d in dirs):
        message = ("tvmdevice-cmsis: TVMDEVICE_CMSIS_SIMD_EMULATION=1 needs SIMDe's headers "
                   "(simde/x86/avx512.h): apt-get install libsimde-dev")
        if os.environ.get("CI") == "true":
            raise SystemExit(message)
        print(f"{message}; building the native SIMD paths instead", file=sys.stderr)
        return []
    parent = Path(os.environ.get("TVMDEVICE_BUILD_DIR") or tempfile.gettempdir())
    os.environ["TVMDEVICE_BUILD_DIR"] = str(parent / "simd-emulation")
    # -Wno-psabi: GCC's note on passing SIMDe's 64-byte vector structs by value.
    return ["-DTVMD_CMSIS_SIMD_EMULATION=1", "-Wno-psabi"]


ext_modules = extensions(
    {"tvmdevice_cmsis._kernels": ["tvmdevice_cmsis/_kernels.pyx", "tvmdevice_cmsis/csrc/*.c"]},
    declarations="tvmdevice_cmsis.device", extra_compile_args=SPEED_FLAGS + simd_emulation_flags(), root=HERE)

for name, render in load_declarations("tvmdevice_cmsis.headers", HERE).HEADERS.items():
    path = generated_dir(HERE) / name
    text = render()
    if not path.exists() or path.read_text() != text:  # unchanged: nothing recompiles
        path.write_text(text)

setup(ext_modules=ext_modules, options=setup_options(HERE))
