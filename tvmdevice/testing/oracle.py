"""TensorFlow Lite Micro as the oracle: run a model, read back every tensor.

``tflite-micro`` (PyPI) is a test dependency, imported on first use.  For an
operator TFLM registers no kernel for (RELU_N1_TO_1) the oracle is LiteRT
(``ai-edge-litert``, its builtin kernels without delegates): :func:`litert_run`.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["TFLMRun", "litert_run", "tflm_interpreter", "tflm_run"]


def _arena_size(model: bytes) -> int:
    # TFLM's Python default arena (10x the model size) is too small for tiny
    # generated models, and the interpreter crashes instead of failing then.
    return max(1 << 20, 16 * len(model))


def tflm_interpreter(model: bytes, arena_size: int | None = None):
    """TFLM's interpreter on ``model``, built as a device would build it.

    ``Interpreter.from_bytes`` first walks the model in Python to count
    resource variables (a helper of the Python wrapper, not part of TFLM); on
    a malformed file that walk raises struct/Type/Value errors before TFLM
    sees the bytes.  Then the C++ wrapper is built directly with no resource
    variables, so the refusal (or crash) observed is TFLM's own.

    :raises RuntimeError: when TFLM refuses the model.
    """
    from tflite_micro.python.tflite_micro import runtime

    model = bytes(model)
    arena = arena_size if arena_size is not None else _arena_size(model)
    try:
        runtime.count_resource_variables(model)
    except Exception:  # noqa: BLE001 - the Python helper cannot read the file; TFLM may still
        interp = runtime.Interpreter.__new__(runtime.Interpreter)
        interp._interpreter = runtime._runtime.InterpreterWrapper(
            model, [], arena, 0, runtime._ENUM_TRANSLATOR[runtime.InterpreterConfig.kAllocationRecording], 0)
        return interp
    return runtime.Interpreter.from_bytes(model, arena_size=arena)


class TFLMRun:
    """One TFLM inference with every tensor preserved."""

    def __init__(self, interpreter) -> None:
        self._it = interpreter

    def output(self, k: int) -> np.ndarray:
        return self._it.get_output(k)

    def tensor(self, index: int, shape: Sequence[int] | None = None) -> np.ndarray:
        data = np.asarray(self._it.GetTensor(index, 0)["tensor_data"])
        return data.reshape(shape) if shape is not None else data


def tflm_run(model: bytes, inputs: Sequence[np.ndarray]) -> TFLMRun:
    """Run ``model`` once in TFLM's reference kernels with ``inputs``; all tensors kept."""
    from tflite_micro.python.tflite_micro import runtime

    it = runtime.Interpreter.from_bytes(bytes(model), arena_size=_arena_size(bytes(model)),
                                        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
    for i, x in enumerate(inputs):
        it.set_input(x, i)
    it.invoke()
    return TFLMRun(it)


def litert_run(model: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run ``model`` once in LiteRT's builtin kernels (no XNNPACK delegate) with ``inputs``; its outputs."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_content=bytes(model),
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    for detail, x in zip(it.get_input_details(), inputs):
        it.set_tensor(detail["index"], x)
    it.invoke()
    return [it.get_tensor(d["index"]) for d in it.get_output_details()]
