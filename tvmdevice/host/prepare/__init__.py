"""The host device's own part of preparing an operator, one module per operator family.

The op data is TFLM's Prepare, computed once by the core's operator layer
(:mod:`tvmdevice.ops`), and the params structs are declared in
:mod:`tvmdevice.host.kernel_table`, whose entries name the step here that
prepares them (``"<module>.<function>"``).  Each step adds only what the C
loops need in their own form (shapes right-aligned to a fixed rank, arrays
padded to their C length, block sizes in bytes) and the host's limits, and
returns a :class:`~tvmdevice.host.prepare._common.KernelPlan`.

* :mod:`~tvmdevice.host.prepare.windowed`: convolutions, pooling, fully connected;
* :mod:`~tvmdevice.host.prepare.elementwise`: ADD/SUB/MUL, the broadcasting binary operators, QUANTIZE;
* :mod:`~tvmdevice.host.prepare.reduce`: MEAN, SUM, REDUCE_MAX;
* :mod:`~tvmdevice.host.prepare.movement`: the shape and data-movement operators;
* :mod:`~tvmdevice.host.prepare.recurrent`: LSTM and SVDF.
"""
