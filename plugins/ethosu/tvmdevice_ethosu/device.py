"""The ethos-u device: its ``tvm_device_ethos_u_t`` layout, constants and target options.

The build (``tvmdevice.build``, from ``setup.py``) loads this module to
generate ``tvm_device_ethos_u.h``, so the struct the C side sees is declared
exactly once.  The target options mirror Vela's command line; the values
they may take are Vela's own (:mod:`tvmdevice_ethosu.vela_names`), read from
the installed Vela, never kept here.
"""

from __future__ import annotations

import enum

from tvmdevice.plugin import DeviceType, Field, Layout, MemoryKind, TargetOption

from . import vela_names
from .params import LAYOUTS as PARAMS
from .vela_operators import VelaOperators

__all__ = ["DEVICE_TYPE", "LAYOUT", "PARAMS", "PowerState", "MAGIC", "TRANSITIONS"]

#: "ETHU": written by Init, cleared by Destroy; the lifecycle refuses a handle without it.
MAGIC = 0x55485445
#: Lifecycle transitions counted in ``transitions[]``, in this order.
TRANSITIONS = ("init", "open", "activate", "deactivate", "close", "destroy")


class PowerState(enum.IntEnum):
    """``power_state`` values (``ETHOSU_POWER_*`` in ``csrc/ethosu.h``)."""

    #: Not powered: after Init and after Close.
    OFF = 0
    #: Powered, clock-gated: after Open and Deactivate; no command stream may run.
    IDLE = 1
    #: Clocked: between Activate and Deactivate; command streams may run.
    ACTIVE = 2


LAYOUT = Layout(
    "tvm_device_ethos_u_t",
    (
        Field("magic", "uint32_t", doc="ETHOSU_MAGIC between Init and Destroy"),
        Field("api_version", "uint32_t", doc="TVMD_DEVICE_API_VERSION the device was built for"),
        Field("power_state", "uint32_t", doc="ETHOSU_POWER_OFF/IDLE/ACTIVE"),
        Field("reserved", "uint32_t", doc="padding"),
        Field("launches", "uint64_t", doc="command streams run (one per partition call)", counter=True),
        Field("commands", "uint64_t", doc="register commands executed", counter=True),
        Field("operations", "uint64_t", doc="kernel and DMA operations started (NPU_OP_*)", counter=True),
        Field("macs", "uint64_t", doc="multiply-accumulates performed", counter=True),
        Field("dma_bytes", "uint64_t", doc="bytes moved by the NPU's DMA", counter=True),
        Field("transitions", "uint64_t", (len(TRANSITIONS),),
              doc="successful Init, Open, Activate, Deactivate, Close, Destroy", counter=True),
    ),
    doc="State of one Ethos-U NPU: power state and counters of the work its command streams did.",
)

DEVICE_TYPE = DeviceType(
    name="ethos-u",
    layout=LAYOUT,
    options=(
        TargetOption("accelerator_config", str, "ethos-u55-128", "Vela's --accelerator-config: NPU and MACs/cycle",
                     choices=vela_names.VelaValues(vela_names.accelerators)),
        TargetOption("system_config", str, vela_names.DEFAULT,
                     "Vela's --system-config: clocks and memory ports (a section of Vela's Arm/vela.ini)",
                     choices=vela_names.VelaValues(vela_names.system_configs)),
        TargetOption("memory_mode", str, vela_names.DEFAULT,
                     "Vela's --memory-mode: where the arena and the cache live (Arm/vela.ini)",
                     choices=vela_names.VelaValues(vela_names.memory_modes)),
        TargetOption("optimise", str, "Performance", "Vela's --optimise strategy",
                     choices=vela_names.VelaValues(vela_names.optimise)),
        TargetOption("tensor_allocator", str, "HillClimb", "Vela's --tensor-allocator",
                     choices=vela_names.VelaValues(vela_names.tensor_allocators)),
        TargetOption("arena_cache_size", int, 0,
                     "Vela's --arena-cache-size in bytes (0: the memory mode's own)", minimum=0),
        TargetOption("allow_mul_scale_difference", bool, False,
                     "run a MUL whose Vela scale rescales some product unlike tflite-micro (not bit-exact)"),
    ),
    memory=MemoryKind.HOST,
    operators=VelaOperators(),
    description="Arm Ethos-U55/U65 microNPU: partitions compiled by Vela into one command stream each",
    compiles_partitions=True,
)
