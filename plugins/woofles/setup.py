"""Build the woofles extension.

The device struct and the kernels' params structs are declared once, as
tvmdevice Layouts in ``tvmdevice_woofles/device.py`` and
``tvmdevice_woofles/params.py``; this script writes ``tvm_device_woofles.h``
and ``woofles_params.h`` from them into the build tree, then compiles the
portable C sources and the Cython binding, as one extension, against those
headers and the core's headers and ``.pxd`` files (``tvmdevice.get_include()``;
the ``.pxd`` files come from the installed core).
"""

from __future__ import annotations

import importlib.util
import os
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = os.path.join(HERE, "tvmdevice_woofles")
CSRC = os.path.join("tvmdevice_woofles", "csrc")
GENERATED = os.path.join("build", "generated")


def _load(name: str):
    # Load a pure-Python declaration module by path: importing the package
    # would need the extension this script is about to build.
    spec = importlib.util.spec_from_file_location(f"_woofles_{name}_for_build", os.path.join(PKG, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _write(file_name: str, text: str) -> None:
    out_dir = os.path.join(HERE, GENERATED)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, file_name)
    # Rewrite only on change, so incremental builds do not recompile everything.
    old = open(path).read() if os.path.exists(path) else None
    if old != text:
        with open(path, "w") as f:
            f.write(text)


def write_headers() -> str:
    """Generate the device and params headers into the build tree; return its directory."""
    from tvmdevice.headers import device_header, structs_header

    _write("tvm_device_woofles.h", device_header(_load("device").DEVICE_TYPE))
    params = _load("params")
    _write(params.HEADER, structs_header("TVMD_WOOFLES_PARAMS_H_", params.LAYOUTS,
                                         doc="Parameter structs of the woofles kernels."))
    return GENERATED


def extensions() -> list[Extension]:
    import tvmdevice

    include_dirs = [tvmdevice.get_include(), write_headers(), CSRC]
    # One extension: the kernels drain the DMA queues and charge cycles
    # through the same device services the lifecycle hooks use.
    sources = sorted(os.path.join(CSRC, f) for f in os.listdir(os.path.join(HERE, CSRC)) if f.endswith(".c"))
    # Portable C99: no -march flags, so a wheel runs on any host of its platform.
    args = ["-O2", "-std=c99"] if os.name != "nt" else []
    exts = [Extension("tvmdevice_woofles._woofles", ["tvmdevice_woofles/_woofles.pyx", *sources],
                      include_dirs=include_dirs, extra_compile_args=args)]
    return cythonize(exts, include_path=[HERE], compiler_directives={"language_level": "3"})


setup(ext_modules=extensions())
