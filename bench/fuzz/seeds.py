"""The models a campaign mutates: the shared real models, builder-made single-operator
and demo models, and stateful (LSTM, SVDF) and int16 builder models."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any


def builder_specs() -> list[tuple[str, Any]]:
    """``(name, ModelSpec)`` for every single-op preset and a few demo models.

    The presets build their ModelBuilder inside; a subclass that records the
    spec at ``build()`` is substituted so the fuzzer can mutate the spec.
    """
    from tvmdevice.aot.builder import model as model_mod
    from tvmdevice.aot.builder import presets

    captured: list[Any] = []

    class Capturing(model_mod.ModelBuilder):
        def build(self) -> bytes:
            captured.append(copy.deepcopy(self.spec))
            return super().build()

    original = presets.ModelBuilder
    presets.ModelBuilder = Capturing  # type: ignore[misc]
    specs: list[tuple[str, Any]] = []
    try:
        for op_type in sorted(presets.SINGLE_OP_DEFAULT_SHAPES):
            variants: list[dict[str, Any]] = [{}]
            if op_type in ("CONV_2D", "DEPTHWISE_CONV_2D"):
                variants += [dict(per_channel=True), dict(stride=2, padding="VALID")]
            if op_type == "FULLY_CONNECTED":
                variants += [dict(units=3, activation="RELU")]
            if op_type in ("ADD", "MUL"):
                variants += [dict(input2_shape=(1, 1, 1, 3), input2_scale=0.07, input2_zero_point=5)]
            for k, params in enumerate(variants):
                captured.clear()
                try:
                    presets.single_op_model(op_type, seed=k, **params)
                except (TypeError, ValueError):
                    continue
                specs.append((f"{op_type.lower()}-{k}", captured[-1]))
        for seed in (0, 1):
            captured.clear()
            presets.demo_model(seed=seed)
            specs.append((f"demo-{seed}", captured[-1]))
    finally:
        presets.ModelBuilder = original  # type: ignore[misc]
    return specs


def shared_models() -> list[tuple[str, bytes]]:
    root = Path(os.environ.get("TVMDEVICE_MODELS_DIR", "/work/shared/models"))
    if not root.is_dir():
        return []
    return [(p.stem, p.read_bytes()) for p in sorted(root.glob("*.tflite"))]


def stateful_and_int16_models() -> list[tuple[str, bytes]]:
    """Builder models with operator state (LSTM int8 and int16, SVDF with int8 and int16 state) and a
    multi-operator int16 model: seeds the real models lack."""
    from tvmdevice.aot.builder import ModelBuilder

    out: list[tuple[str, bytes]] = []
    for int16 in (False, True):
        b = ModelBuilder("lstm", seed=4)
        x = b.input((2, 3, 6), scale=1 / 4096, dtype="int16") if int16 else b.input((2, 3, 6), scale=0.03,
                                                                                       zero_point=5)
        b.output(b.lstm(x, 5, cell_clip=2.0))
        out.append((f"lstm-{'s16' if int16 else 's8'}", b.build()))
    out.append(("lstm-s8-intermediates", with_converter_intermediates(out[0][1])))
    for state in ("int16", "int8"):
        b = ModelBuilder("svdf", seed=4)
        b.output(b.svdf(b.input((2, 10), scale=0.04, zero_point=-3), 4, rank=2, memory=6, state=state))
        out.append((f"svdf-{state}", b.build()))
    b = ModelBuilder("int16", seed=5)
    x = b.input((1, 12), scale=1 / 2048, dtype="int16")
    y = b.fully_connected(x, 8, activation="RELU")
    b.output(b.add(b.fully_connected(y, 4), b.fully_connected(y, 4)))
    out.append(("fc-add-s16", b.build()))
    return out


def with_converter_intermediates(lstm: bytes) -> bytes:
    """``lstm`` with the five zero-sized int8 intermediates the TFLite converter lists on an LSTM."""
    from .structure import Quantization, Tensor, read, write

    model = read(lstm)
    g = model.subgraphs[0]
    first = len(g.tensors)
    g.tensors += [Tensor(f"intermediate_{k}", [0], 9, 0, Quantization([0.007], [0])) for k in range(5)]
    g.operators[0].intermediates = list(range(first, first + 5))
    return write(model)
