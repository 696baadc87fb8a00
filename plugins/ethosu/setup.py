"""Build the ethos-u extension with the core's build helper (:mod:`tvmdevice.build`).

The device struct (``tvmdevice_ethosu/device.py``) and the partition
kernel's params struct (``params.py``) are declared once, as tvmdevice
Layouts; the helper generates ``tvm_device_ethos_u.h`` and
``tvmd_ethos_u_params.h`` from them into
the build directory and compiles the portable C sources and the Cython
binding, as one extension, against those headers and the core's headers,
with ``hostc/`` (what only the host defines: the memories an export
generates per model, ``csrc/ethosu_memory.h``).
"""

from pathlib import Path

from setuptools import setup
from tvmdevice.build import extensions, setup_options

HERE = Path(__file__).resolve().parent
setup(ext_modules=extensions(
    {"tvmdevice_ethosu._ethosu": ["tvmdevice_ethosu/_ethosu.pyx", "tvmdevice_ethosu/csrc/*.c",
                                 "tvmdevice_ethosu/hostc/*.c"]},
    declarations="tvmdevice_ethosu.device", params="PARAMS",
    # the host decodes each weight stream once (hostc/ethosu_weight_cache.h); an export decodes per run
    extra_compile_args=["-O3", "-DTVMD_ETHOSU_WEIGHT_CACHE"], root=HERE),
    options=setup_options(HERE))
