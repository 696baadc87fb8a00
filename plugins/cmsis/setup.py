"""Build the cmsis-nn kernels: generate the headers, compile C99 + Cython.

The device struct, the params structs and the kernel table are declared once,
in Python (``tvmdevice_cmsis/device.py``, ``tvmdevice_cmsis/kernel_table.py``);
``tvmdevice_cmsis.headers`` turns them into C headers in the build directory
and the kernels compile against those and the core's headers
(``tvmdevice.get_include()``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from Cython.Build import cythonize
from setuptools import Extension, setup

import tvmdevice

HERE = Path(__file__).resolve().parent
CSRC = HERE / "tvmdevice_cmsis" / "csrc"
GENERATED = HERE / "build" / "generated"


def _write_headers() -> None:
    # The declarations are pure Python; the package imports without the
    # extension this script is about to build.
    sys.path.insert(0, str(HERE))
    try:
        from tvmdevice_cmsis.headers import HEADERS
    finally:
        sys.path.remove(str(HERE))
    GENERATED.mkdir(parents=True, exist_ok=True)
    for name, render in HEADERS.items():
        target, text = GENERATED / name, render()
        if not target.exists() or target.read_text() != text:
            target.write_text(text)


def _compile_args() -> list[str]:
    if sys.platform == "win32":
        return ["/O2"]
    # -O3 for the vectorizer; -std=c99 keeps the kernels firmware-portable.
    # -fno-wrapv undoes Python's -fwrapv: with wrapping int32 indices the
    # vectorizer cannot prove addresses affine and leaves loops scalar (the
    # kernels never rely on signed wrap-around; they wrap through uint32).
    # -ffp-contract=fast lets the exact float sums use FMA.  No -march:
    # wider SIMD comes from run-time dispatch (target_clones, simd_x86.c).
    return ["-O3", "-std=c99", "-fno-wrapv", "-ffp-contract=fast", "-fno-strict-aliasing", "-Wall",
            "-Wno-unused-function", "-Werror=implicit-function-declaration", "-Werror=int-conversion",
            "-Werror=incompatible-pointer-types"]


_write_headers()
sources = ["tvmdevice_cmsis/_kernels.pyx"] + sorted(
    str(p.relative_to(HERE)) for p in CSRC.glob("*.c")
)
extension = Extension(
    "tvmdevice_cmsis._kernels",
    sources=sources,
    include_dirs=[tvmdevice.get_include(), str(GENERATED), str(CSRC)],
    extra_compile_args=_compile_args(),
    language="c",
)

setup(
    ext_modules=cythonize(
        [extension],
        include_path=[os.path.dirname(os.path.dirname(tvmdevice.__file__))],
        compiler_directives={"language_level": "3"},
    ),
)
