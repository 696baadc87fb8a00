"""Write real int8 TFLite models (flatbuffers with identifier "TFL3").

:class:`ModelBuilder` is a small fluent API; :func:`single_op_model` makes a
one-operator model for tests and :func:`demo_model` the CNN the CLI runs
when no model is given.  Every model loads in TensorFlow Lite Micro and in
:func:`tvmdevice.aot.frontend.load_tflite`.  :class:`ModelSpec` and
:func:`serialize` are the layer underneath: a plain description of tensors,
buffers and operators, and its flatbuffer writer.  :func:`float_twin` writes the
float32 model an int8 one quantizes (to validate against).
"""

from __future__ import annotations

from tvmdevice.aot.builder._flatbuffer import ModelSpec, OperatorSpec, TensorSpec, serialize
from tvmdevice.aot.builder.float_twin import float_twin
from tvmdevice.aot.builder.model import ModelBuilder, TensorRef
from tvmdevice.aot.builder.presets import SINGLE_OP_DEFAULT_SHAPES, demo_model, single_op_model

__all__ = ["ModelBuilder", "TensorRef", "single_op_model", "demo_model", "SINGLE_OP_DEFAULT_SHAPES",
           "ModelSpec", "TensorSpec", "OperatorSpec", "serialize", "float_twin"]
