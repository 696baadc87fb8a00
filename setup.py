"""Build the core's extensions; the host kernels' C headers are generated first.

The extensions listed in ``pyproject.toml`` need nothing generated.  The host
device's C reference kernels (``tvmdevice/host/csrc``) compile against
``tvmd_c_params.h`` and ``tvmd_c_kernels.h``, generated here into
``build/generated`` from :mod:`tvmdevice.host.kernel_table`, so the params
structs are written once, in Python.
"""

from __future__ import annotations

import importlib
import sys
import types
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).resolve().parent
CSRC = Path("tvmdevice") / "host" / "csrc"
GENERATED = Path("build") / "generated"


def _write_headers() -> None:
    # The kernel table and the header writer need only the standard library,
    # but tvmdevice/__init__.py imports numpy and pluggy, which an isolated
    # build does not have: import the two modules under an empty package.
    saved = {k: v for k, v in sys.modules.items() if k == "tvmdevice" or k.startswith("tvmdevice.")}
    package = types.ModuleType("tvmdevice")
    package.__path__ = [str(HERE / "tvmdevice")]
    sys.modules["tvmdevice"] = package
    try:
        importlib.import_module("tvmdevice.host.headers").write_headers(HERE / GENERATED)
    finally:
        for name in [k for k in sys.modules if k == "tvmdevice" or k.startswith("tvmdevice.")]:
            del sys.modules[name]
        sys.modules.update(saved)


def _compile_args() -> list[str]:
    if sys.platform == "win32":
        return ["/O2"]
    # -std=c99 keeps the kernels firmware-portable; -fno-wrapv undoes Python's
    # -fwrapv (the kernels never rely on signed wrap-around: they wrap through
    # uint32), which lets the vectorizer see affine indices.
    return ["-O3", "-std=c99", "-fno-wrapv", "-Wall", "-Wextra", "-Wno-unused-function",
            "-Wno-unused-parameter", "-Werror=implicit-function-declaration", "-Werror=int-conversion",
            "-Werror=incompatible-pointer-types"]


_write_headers()
setup(ext_modules=[Extension(
    "tvmdevice.host._kernels",
    sources=[str(Path("tvmdevice") / "host" / "_kernels.pyx"),
             *sorted(str(p.relative_to(HERE)) for p in (HERE / CSRC).glob("*.c"))],
    include_dirs=["tvmdevice/include", str(GENERATED), str(CSRC)],
    extra_compile_args=_compile_args(),
)])
