"""Build the woofles extension with the core's build helper (:mod:`tvmdevice.build`).

The device struct (``tvmdevice_woofles/device.py``) and the kernels' params
structs (``tvmdevice_woofles/params.py``, re-exported there as ``PARAMS``) are
declared once, as tvmdevice Layouts; the helper generates
``tvm_device_woofles.h`` and ``tvmd_woofles_params.h`` from them into the
build directory (``tvmdevice.build.build_dir``, outside the source tree) and
compiles the portable C sources and the Cython binding, as one extension,
against those headers and the core's headers and ``.pxd`` files.
"""

from pathlib import Path

from setuptools import setup
from tvmdevice.build import extensions, setup_options

HERE = Path(__file__).resolve().parent
setup(ext_modules=extensions(
    {"tvmdevice_woofles._woofles": ["tvmdevice_woofles/_woofles.pyx", "tvmdevice_woofles/csrc/*.c"]},
    declarations="tvmdevice_woofles.device", params="PARAMS", extra_compile_args=["-O2"], root=HERE),
    options=setup_options(HERE))
