"""Exporting a compiled model as C for firmware: TVM's Model Library Format.

:func:`export` writes the directory (``tvmdevice export``, ``module.export``);
:func:`run_export` builds it for a CPU and runs it (``tvmdevice run DIR --cpu``), :func:`run_export_frames`
on a sequence of frames;
:class:`DeviceSources` is what a device plugin contributes to it.
"""

from .run import ExportRun, build_export, is_export, load_metadata, run_export, run_export_frames
from .sources import DEFAULT_MCPU, EXPORT_CPUS, DeviceSources, StaticMemory
from .writer import compiled_mcpu, export

__all__ = ["DEFAULT_MCPU", "DeviceSources", "EXPORT_CPUS", "StaticMemory", "ExportRun", "build_export",
           "compiled_mcpu", "export", "is_export", "load_metadata", "run_export", "run_export_frames"]
