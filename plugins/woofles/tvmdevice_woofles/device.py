"""The woofles device: its ``tvm_device_woofles_t`` layout, constants and target options.

Pure Python (imports only :mod:`tvmdevice`): the build (``tvmdevice.build``,
from ``setup.py``) loads this module to generate ``tvm_device_woofles.h``, and
the kernels' params header from :data:`PARAMS`, so every struct the C side
sees is declared exactly once.  The C code derives every capacity (allocation
table, streams, DMA ring depth) from the array sizes in the generated header,
never from its own copies.
"""

from __future__ import annotations

import enum
from typing import Any

from tvmdevice.device_type import DeviceType, MemoryKind
from tvmdevice.layout import Field, Layout
from tvmdevice.options import TargetOption

from .params import LAYOUTS as KERNEL_PARAMS

__all__ = [
    "DEVICE_TYPE", "LAYOUT", "STREAM_LAYOUT", "DESC_LAYOUT", "OPERATORS", "PowerState", "DmaFlag",
    "MAGIC", "SRAM_BASE", "SRAM_HOST_ALIGNMENT", "MAX_BLOCKS", "MAX_STREAMS", "QUEUE_DEPTH",
    "MAX_MAC_WIDTH", "MAX_SRAM_KB", "TRANSITIONS", "PARAMS", "CONFIG_LAYOUT", "config_values",
]

#: "WOOF": written by Init, cleared by Destroy; kernels refuse a handle without it.
MAGIC = 0x464F4F57
#: Device address of the first SRAM byte, as the NPU's bus map places it.
SRAM_BASE = 0x2000_0000
#: Alignment of the host memory that backs the SRAM, so that a device address
#: aligned to N <= this is backed by a host address aligned to N.
SRAM_HOST_ALIGNMENT = 4096
#: Live allocations the allocator can track (the table lives in the struct).
MAX_BLOCKS = 128
#: Streams, including the default stream 0.
MAX_STREAMS = 8
#: Pending DMA descriptors per stream (a ring in the struct).
QUEUE_DEPTH = 16
#: Largest MAC array the kernels' on-stack accumulator tile holds.
MAX_MAC_WIDTH = 256
#: Largest SRAM the simulator backs with host memory (offsets are 32-bit).
MAX_SRAM_KB = 65536
#: Lifecycle transitions counted in ``transitions[]``, in this order.
TRANSITIONS = ("init", "open", "activate", "deactivate", "close", "destroy")

#: Kernel keys (:func:`tvmdevice.ops.kernel_key`) of the operators the NPU accelerates: the int8
#: operators, and the int16 variants its 16-bit datapath runs (``-int16``).  PAD's key covers int8 and
#: int16 tensors alike.  The parameter limits are in :mod:`tvmdevice_woofles.ops`.
OPERATORS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D",
                       "MAX_POOL_2D", "ADD", "MAXIMUM", "MINIMUM", "TRANSPOSE_CONV", "PAD", "PADV2",
                       "CONV_2D:int16", "DEPTHWISE_CONV_2D:int16", "FULLY_CONNECTED:int16",
                       "AVERAGE_POOL_2D:int16", "MAX_POOL_2D:int16", "ADD:int16"})


class PowerState(enum.IntEnum):
    """``power_state`` values (``WOOFLES_POWER_*`` in ``csrc/woofles.h``)."""

    #: SRAM unpowered: after Init and after Close.
    OFF = 0
    #: SRAM retained, compute clock-gated, DMA available: after Open and Deactivate.
    SLEEP = 1
    #: Compute awake: between Activate and Deactivate; kernels may run.
    ACTIVE = 2


class DmaFlag(enum.IntFlag):
    """Descriptor ``flags`` (``WOOFLES_DMA_*`` in ``csrc/woofles.h``)."""

    #: ``src`` is a host address (a bounce buffer), not a device address.
    SRC_HOST = 1
    #: ``dst`` is a host address, not a device address.
    DST_HOST = 2
    #: The descriptor is a wait on another stream, not a transfer.
    WAIT = 4


DESC_LAYOUT = Layout(
    "tvmd_woofles_dma_desc_t",
    (
        Field("src", "uint64_t", doc="source address (device, or host with WOOFLES_DMA_SRC_HOST)"),
        Field("dst", "uint64_t", doc="destination address (device, or host with WOOFLES_DMA_DST_HOST)"),
        Field("nbytes", "uint64_t", doc="bytes to move"),
        Field("wait_seq", "uint64_t", doc="WAIT: sequence number wait_stream must have completed"),
        Field("flags", "uint32_t", doc="WOOFLES_DMA_* bits"),
        Field("wait_stream", "uint32_t", doc="WAIT: the stream slot waited for"),
    ),
    doc="One pending DMA descriptor: a transfer, or a wait on another stream.",
)

STREAM_LAYOUT = Layout(
    "tvmd_woofles_stream_t",
    (
        Field("in_use", "uint32_t", doc="1 for the default stream after Open and for created streams"),
        Field("head", "uint32_t", doc="ring index of the oldest pending descriptor"),
        Field("count", "uint32_t", doc="pending descriptors"),
        Field("reserved", "uint32_t", doc="padding"),
        Field("enqueued", "uint64_t", doc="descriptors ever enqueued (sequence numbers start at 1)"),
        Field("completed", "uint64_t", doc="descriptors ever retired; enqueued - completed == count"),
        Field("ring", DESC_LAYOUT, (QUEUE_DEPTH,), doc="pending descriptors, FIFO"),
    ),
    doc="A DMA stream: a FIFO of descriptors retired in order.",
)

LAYOUT = Layout(
    "tvm_device_woofles_t",
    (
        Field("magic", "uint32_t", doc="WOOFLES_MAGIC between Init and Destroy"),
        Field("api_version", "uint32_t", doc="TVMD_DEVICE_API_VERSION the device was built for"),
        Field("power_state", "uint32_t", doc="WOOFLES_POWER_OFF/SLEEP/ACTIVE"),
        Field("mac_width", "uint32_t", doc="MAC lanes per cycle (-mac_width)"),
        Field("dma_bytes_per_cycle", "uint32_t", doc="DMA bandwidth (-dma_bytes_per_cycle)"),
        Field("clock_mhz", "uint32_t", doc="core clock (-clock_mhz), for time estimates"),
        Field("sram_size", "uint64_t", doc="SRAM bytes (-sram_kb * 1024)"),
        Field("sram_base", "uint64_t", doc="device address of the first SRAM byte"),
        Field("sram_host", "uint8_t*",
              doc="memory backing the SRAM: set by Configure (firmware) or by the host before Open"),
        Field("num_blocks", "uint32_t", doc="live allocations in block_offset/block_size"),
        Field("reserved0", "uint32_t", doc="padding"),
        Field("block_offset", "uint32_t", (MAX_BLOCKS,), doc="SRAM offsets of live allocations, ascending"),
        Field("block_size", "uint32_t", (MAX_BLOCKS,), doc="sizes of live allocations"),
        Field("bytes_in_use", "uint64_t", doc="SRAM bytes allocated"),
        Field("peak_bytes_in_use", "uint64_t", doc="high-water mark of bytes_in_use since Open"),
        Field("current_stream", "uint64_t", doc="stream set by SetStream (0 = default)"),
        Field("streams", STREAM_LAYOUT, (MAX_STREAMS,), doc="DMA streams; slot == stream handle"),
        Field("cycles_total", "uint64_t", doc="estimated cycles since Init: kernels + DMA + wake-ups", counter=True),
        Field("cycles_run", "uint64_t", doc="estimated cycles since the last Activate"),
        Field("cycles_last_call", "uint64_t", doc="cycles of the last kernel launch or DMA transfer"),
        Field("kernel_cycles", "uint64_t", doc="cycles spent in kernels since Init", counter=True),
        Field("dma_cycles", "uint64_t", doc="cycles spent in DMA transfers since Init", counter=True),
        Field("kernel_calls", "uint64_t", doc="kernel launches that ran", counter=True),
        Field("dma_transfers", "uint64_t", doc="DMA transfers retired", counter=True),
        Field("dma_bytes", "uint64_t", doc="bytes moved by DMA", counter=True),
        Field("transitions", "uint64_t", (len(TRANSITIONS),),
              doc="successful Init, Open, Activate, Deactivate, Close, Destroy", counter=True),
        Field("cycles_in_state", "uint64_t", (len(PowerState),), doc="cycles consumed in each power state",
              counter=True),
        Field("ns_in_state", "uint64_t", (len(PowerState),), doc="host wall-clock ns spent in each power state"),
        Field("state_since_ns", "uint64_t", doc="host monotonic ns when power_state was last entered"),
    ),
    doc="State of one woofles NPU: SRAM window, allocator, power, DMA streams and cycle counters.",
)

CONFIG_LAYOUT = Layout(
    "tvmd_woofles_config_t",
    (
        Field("sram_host", "uint8_t*",
              doc="memory backing the SRAM for the device's lifetime (firmware: a static array), "
                  "or NULL when the host hands it over before each Open"),
        Field("sram_base", "uint64_t",
              doc="device address of the first SRAM byte (firmware: the array's own address)"),
        Field("sram_size", "uint64_t", doc="SRAM bytes (-sram_kb * 1024)"),
        Field("mac_width", "uint32_t", doc="MAC lanes per cycle (-mac_width)"),
        Field("dma_bytes_per_cycle", "uint32_t", doc="DMA bandwidth (-dma_bytes_per_cycle)"),
        Field("clock_mhz", "uint32_t", doc="core clock (-clock_mhz)"),
        Field("reserved", "uint32_t", doc="padding"),
    ),
    doc="What the target options decide about a woofles NPU: TVMDeviceWooflesConfigure's argument.",
)

#: The structs of ``tvmd_woofles_params.h``: the kernels' params and the configuration.
PARAMS = (*KERNEL_PARAMS, CONFIG_LAYOUT)


def config_values(options: dict[str, Any]) -> dict[str, int]:
    """The members of ``tvmd_woofles_config_t`` the target options decide (all but the SRAM's place).

    One mapping for both users: the Python init hook passes it to
    ``TVMDeviceWooflesConfigure`` and the export bakes it into its generated
    configure function.
    """
    return {
        "sram_size": int(options["sram_kb"]) * 1024,
        "mac_width": int(options["mac_width"]),
        "dma_bytes_per_cycle": int(options["dma_bytes_per_cycle"]),
        "clock_mhz": int(options["clock_mhz"]),
    }


DEVICE_TYPE = DeviceType(
    name="woofles",
    layout=LAYOUT,
    options=(
        TargetOption("sram_kb", int, 256, "on-chip SRAM in KiB", minimum=1, maximum=MAX_SRAM_KB),
        TargetOption("mac_width", int, 64, "MAC lanes per cycle", minimum=1, maximum=MAX_MAC_WIDTH),
        TargetOption("dma_bytes_per_cycle", int, 8, "DMA bandwidth in bytes per cycle", minimum=1),
        TargetOption("clock_mhz", int, 400, "core clock in MHz (time estimates, kMaxClockRate)", minimum=1),
        TargetOption("max_channels", int, 1024, "largest channel count an operator may have", minimum=1),
        TargetOption("max_kernel", int, 16, "largest filter or pooling window side", minimum=1),
        TargetOption("max_dilation", int, 2, "largest convolution dilation factor", minimum=1),
        TargetOption("max_pad", int, 16, "largest border the window loader adds on one side of a convolution's "
                     "input (its own padding plus a PAD folded into it)", minimum=0),
        TargetOption("int16", bool, True, "16-bit activation datapath: int16 lanes (at half rate) and int16x8 MACs"),
        TargetOption("acc_bits", int, 64, "MAC accumulator width in bits (32 or 64): int16x8 layers TFLM "
                     "accumulates in int64 (an int64 bias) need 64", choices=(32, 64)),
    ),
    memory=MemoryKind.SEPARATE,
    operators=OPERATORS,
    description="simulated NPU: own SRAM, DMA streams, power states, cycle estimates",
    # The window loader pads a convolution's input with any border (up to -max_pad): a PAD feeding a
    # convolution is folded into it (tvmdevice.aot.fold), the pair runs as one convolution call.
    folds_pad=True,
)
