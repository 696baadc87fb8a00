"""Build the core's extensions; the host kernels' C headers are generated first.

Every extension is declared here (setuptools' ``[tool.setuptools.ext-modules]``
is experimental and warns on every build).  The host device's C reference
kernels (``tvmdevice/host/csrc``) compile against ``tvmd_c_params.h`` and
``tvmd_c_kernels.h``, generated here from :mod:`tvmdevice.host.kernel_table`,
so the params structs are written once, in Python.

A build leaves nothing in the source tree: Cython's C, the generated headers,
object files and the egg-info go to one directory outside it,
``$TVMDEVICE_BUILD_DIR`` (default: the temporary directory) ``/tvmdevice-build-<name>-<hash of this folder>``
(kept between builds, so a rebuild compiles only what changed).  An editable
install still puts the extension modules themselves next to their sources.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import tempfile
import types
from pathlib import Path

from setuptools import Extension, setup

HERE = Path(__file__).resolve().parent
CSRC = Path("tvmdevice") / "host" / "csrc"
# The same place tvmdevice.build.build_dir gives a plugin (that module cannot be imported before the core is built).
BUILD = Path(os.environ.get("TVMDEVICE_BUILD_DIR") or tempfile.gettempdir()) / \
    f"tvmdevice-build-{HERE.name}-{hashlib.sha256(str(HERE).encode()).hexdigest()[:12]}"
GENERATED = BUILD / "generated"
INCLUDE = ["tvmdevice/include"]


def _write_headers() -> None:
    # The kernel table and the header writer need only the standard library,
    # but tvmdevice/__init__.py imports numpy and pluggy, which an isolated
    # build does not have: import the two modules under an empty package.
    saved = {k: v for k, v in sys.modules.items() if k == "tvmdevice" or k.startswith("tvmdevice.")}
    package = types.ModuleType("tvmdevice")
    package.__path__ = [str(HERE / "tvmdevice")]
    sys.modules["tvmdevice"] = package
    try:
        importlib.import_module("tvmdevice.host.headers").write_headers(GENERATED)
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


def _extensions() -> list[Extension]:
    from Cython.Build import cythonize

    def ext(name: str, *sources: str, include_dirs: list[str] = INCLUDE, **kw: object) -> Extension:
        return Extension(name, sources=list(sources), include_dirs=include_dirs, **kw)  # type: ignore[arg-type]

    extensions = [
        ext("tvmdevice._hostmem", "tvmdevice/_hostmem.pyx", include_dirs=[]),
        ext("tvmdevice._abi", "tvmdevice/_abi.pyx"),
        ext("tvmdevice._lifecycle", "tvmdevice/_lifecycle.pyx"),
        ext("tvmdevice.aot._runloop", "tvmdevice/aot/_runloop.pyx"),
        ext("tvmdevice.testing._fixtures", "tvmdevice/testing/_fixtures.pyx"),
        ext("tvmdevice.host._kernels", str(Path("tvmdevice") / "host" / "_kernels.pyx"),
            *sorted(str(p.relative_to(HERE)) for p in (HERE / CSRC).glob("*.c")),
            include_dirs=[*INCLUDE, str(GENERATED), str(CSRC)], extra_compile_args=_compile_args()),
    ]
    # Cython's C goes to the build directory, not next to the .pyx.
    return cythonize(extensions, build_dir=str(BUILD / "cython"), quiet=True, language_level=3)


_write_headers()
setup(
    ext_modules=_extensions(),
    options={"build": {"build_base": str(BUILD)}, "egg_info": {"egg_base": str(BUILD)}},
)
