from setuptools import setup

from tvmdevice.plugin import extensions

setup(ext_modules=extensions({"tvmdevice_minimal._ext": ["tvmdevice_minimal/_ext.pyx", "csrc/*.c"]},
                             declarations="tvmdevice_minimal.device", params="PARAMS"))
