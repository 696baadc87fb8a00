"""Exporting a compiled model as C: TVM's Model Library Format for firmware."""

from .sources import EXPORT_CPUS, DeviceSources

__all__ = ["DeviceSources", "EXPORT_CPUS"]
