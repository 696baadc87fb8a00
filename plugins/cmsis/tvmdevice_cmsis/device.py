"""The ``cmsis-nn`` device type: its ``tvm_device_cmsis_nn_t`` layout and options.

Pure Python (the core and the kernel table): the build imports it to generate
``tvm_device_cmsis_nn.h`` before anything is compiled, and the plugin hooks
import it when the plugin is listed.
"""

from __future__ import annotations

from tvmdevice import DeviceType, Field, Layout, MemoryKind, TargetOption

from .kernel_table import KERNELS, MCPU_CHOICES

__all__ = ["API_VERSION", "KERNEL_KINDS", "OPERATORS", "LAYOUT", "DEVICE_TYPE", "DEFAULT_SCRATCH_KB"]

#: Version of this device's struct and kernel contract (``api_version`` member).
API_VERSION = 1

#: The kernel key (:func:`tvmdevice.ops.kernel_key`: the operator, or
#: ``"<operator>:<variant>"`` for an int16x8 one) of each kernel family, in the order of the ``call_counts``
#: array (the kernel table's order, ``TVMD_CMSIS_KIND_*``).
KERNEL_KINDS: tuple[str, ...] = tuple(k.key for k in KERNELS)

#: Kernel keys the device has kernels for (prepare decides per operator).
OPERATORS = frozenset(KERNEL_KINDS)

#: Default limit on one kernel call's scratch, in KiB (placement declines calls that need more).
DEFAULT_SCRATCH_KB = 256

LAYOUT = Layout(
    "tvm_device_cmsis_nn_t",
    (
        Field("api_version", "uint32_t", doc="API_VERSION of the plugin that initialized the device"),
        Field("active", "uint32_t", doc="1 between Activate and Deactivate; kernels refuse to run otherwise"),
        Field("scratch", "void*", doc="the most recent live workspace block (NULL when none)"),
        Field("scratch_bytes", "uint64_t", doc="size of that block"),
        Field("scratch_in_use", "uint64_t", doc="bytes of workspace currently allocated"),
        Field("scratch_capacity", "uint64_t", doc="-scratch_kb in bytes: the workspace cap"),
        Field("call_counts", "uint64_t", (len(KERNEL_KINDS),), doc="kernel calls per family (KERNEL_KINDS order)",
              counter=True),
        Field("total_calls", "uint64_t", doc="kernel calls since Init", counter=True),
        Field("macs", "uint64_t", doc="multiply-accumulates performed by convolutions and fully connected",
              counter=True),
        Field("num_opens", "uint32_t", doc="times the device was opened", counter=True),
    ),
    doc="State of a cmsis-nn device: int8 and int16x8 CMSIS-NN/TFLM kernels on host memory.",
)

DEVICE_TYPE = DeviceType(
    name="cmsis-nn",
    aliases=("cmsis",),
    layout=LAYOUT,
    options=(
        TargetOption("scratch_kb", int, DEFAULT_SCRATCH_KB,
                     "largest scratch one kernel call may use, in KiB (larger ones go to the next device); "
                     "0 = no limit", minimum=0),
        TargetOption("mcpu", str, "", "CPU the weights are packed for: empty = the host running tvmdevice "
                     "(vector-width GEMM tiles); a Cortex-M (e.g. cortex-m55) = CMSIS-NN's own operands "
                     "(int8 filters read in place, integer only, small scratch)", choices=MCPU_CHOICES),
    ),
    memory=MemoryKind.HOST,
    operators=OPERATORS,
    is_host=False,
    description="int8 and int16x8 kernels with CMSIS-NN / TFLite Micro semantics in portable C99",
)
