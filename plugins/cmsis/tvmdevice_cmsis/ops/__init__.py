"""cmsis-nn's own part of preparing an operator: params struct layouts, limits and weight packing.

The TFLM op data comes from the core's operator layer (:mod:`tvmdevice.ops`);
each module here declares its kernels' params structs
(:class:`~tvmdevice.layout.Layout`) and a ``prepare`` step that adds what is
cmsis-nn's alone (rearranged weights, block sizes, the bounds of its C loops).
:data:`tvmdevice_cmsis.kernel_table.KERNELS` ties them to the kernels.

Pure Python (numpy and the core only): the build imports these modules to
generate the C headers.
"""
