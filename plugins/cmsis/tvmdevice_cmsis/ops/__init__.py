"""cmsis-nn's own part of preparing an operator: its limits and weight packing.

The TFLM op data comes from the core's operator layer (:mod:`tvmdevice.ops`)
and the params structs are declared in :mod:`tvmdevice_cmsis.kernel_table`;
each ``prepare`` step here adds only what is cmsis-nn's (rearranged weights,
block sizes, the bounds of its C loops) and returns a
:class:`~tvmdevice_cmsis.ops._common.KernelPlan`.
"""
