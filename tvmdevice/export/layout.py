"""Where each file of an export goes (TVM's Model Library Format, plus devices and a runner).

::

    DIR/
      metadata.json                          sizes, io, target, placement, the table of calls, the build
      Makefile                               make [CPU=host|cortex-m55|cortex-m4|cortex-m3]
      codegen/host/include/tvmgen_<m>.h      the interface (+ tvmgen_<m>_devices.h)
      codegen/host/src/tvmgen_<m>.c          open, run, close, the host pool
      codegen/host/src/tvmgen_<m>_constants.c  constants and operator params (flash)
      runtime/include/tvmdevice/*.h          the C Device API headers
      devices/<device>/src/                  the device's portable C (and its private headers)
      devices/<device>/include/              its generated headers (tvm_device_<device>.h, params)
      platform/                              start-up, system calls and linker scripts for QEMU's machines
      runner/tvmgen_runner.c                 a main: files in, run, files out
      src/<m>.tflite                         the source model
"""

from __future__ import annotations

__all__ = ["METADATA", "MAKEFILE", "CODEGEN_INCLUDE", "CODEGEN_SRC", "RUNTIME_INCLUDE", "PLATFORM", "device_dir",
           "FORMAT_VERSION"]

#: The version of this layout written into metadata.json.
FORMAT_VERSION = 1
METADATA = "metadata.json"
MAKEFILE = "Makefile"
CODEGEN_INCLUDE = "codegen/host/include"
CODEGEN_SRC = "codegen/host/src"
RUNTIME_INCLUDE = "runtime/include"
PLATFORM = "platform"


def device_dir(c_name: str) -> str:
    """``devices/<c_name>``."""
    return f"devices/{c_name}"
