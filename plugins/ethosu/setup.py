"""Build the ethos-u extension with the core's build helper (:mod:`tvmdevice.build`).

The device struct (``tvmdevice_ethosu/device.py``) is declared once, as a
tvmdevice Layout; the helper generates ``tvm_device_ethos_u.h`` from it into
the build directory and compiles the portable C sources and the Cython
binding, as one extension, against that header and the core's headers.
"""

from pathlib import Path

from setuptools import setup
from tvmdevice.build import extensions, setup_options

HERE = Path(__file__).resolve().parent
setup(ext_modules=extensions(
    {"tvmdevice_ethosu._ethosu": ["tvmdevice_ethosu/_ethosu.pyx", "tvmdevice_ethosu/csrc/*.c"]},
    declarations="tvmdevice_ethosu.device", extra_compile_args=["-O2"], root=HERE),
    options=setup_options(HERE))
