"""Device attribute kinds, numbered as TVM's ``DeviceAttrKind``."""

from __future__ import annotations

import enum

__all__ = ["DeviceAttrKind"]


class DeviceAttrKind(enum.IntEnum):
    """What ``GetAttr`` can be asked; values match TVM and ``tvmd_attr_kind_t``."""

    kExist = 0
    kMaxThreadsPerBlock = 1
    kWarpSize = 2
    kMaxSharedMemoryPerBlock = 3
    kComputeVersion = 4
    kDeviceName = 5
    kMaxClockRate = 6
    kMultiProcessorCount = 7
    kMaxThreadDimensions = 8
    kMaxRegistersPerBlock = 9
    kGcnArch = 10
    kApiVersion = 11
    kDriverVersion = 12
    kL2CacheSizeBytes = 13
    kTotalGlobalMemory = 14
    kAvailableGlobalMemory = 15
    kImagePitchAlignment = 16
