"""tvmdevice-cmsis: the ``cmsis-nn`` device for tvmdevice.

int8 and int16x8 kernels (and SVDF, LSTM, TRANSPOSE) with CMSIS-NN / TensorFlow Lite Micro reference semantics, in
portable C99 with Cython bindings.  The plugin registers itself through the
``tvmdevice`` entry-point group; use it through a target string
(``"cmsis-nn, c"``) or directly:

* :mod:`tvmdevice_cmsis.kernels` -- prepare an operator of a graph and run it
  on numpy arrays, or run a whole graph's operators back to back from C;
* :mod:`tvmdevice_cmsis.device` -- the device type and its struct layout.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
