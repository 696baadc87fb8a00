"""Schema-aware mutation of a builder ``ModelSpec`` (tensor, operator and model fields)."""

from __future__ import annotations

import copy
import random
from typing import Any


def _mutate_tensor(spec: Any, rng: random.Random) -> str:
    import tflite

    i = rng.randrange(len(spec.tensors))
    t = spec.tensors[i]
    field = rng.choice(["shape", "shape", "type", "scale", "zero_point", "buffer", "qdim", "noquant"])
    if field == "shape":
        shape = list(t.shape)
        choice = rng.random()
        if shape and choice < 0.5:
            shape[rng.randrange(len(shape))] = rng.choice([0, 1, 2, 3, 5, 16, -1, 1 << 16, 1 << 30])
        elif choice < 0.7:
            shape = shape[1:]
        elif choice < 0.85:
            shape = [1] + shape
        else:
            shape = [rng.randrange(1, 6) for _ in range(rng.randrange(0, 7))]
        t.shape = tuple(shape)
    elif field == "type":
        t.type = rng.choice([tflite.TensorType.INT8, tflite.TensorType.UINT8, tflite.TensorType.INT16,
                             tflite.TensorType.INT32, tflite.TensorType.INT64, tflite.TensorType.FLOAT32,
                             tflite.TensorType.BOOL, rng.randrange(0, 40)])
    elif field == "scale":
        value = rng.choice([0.0, -1.0, 1e-30, 1e-12, 1e-6, 1.0, 1e6, 1e30, float("inf"), float("nan"),
                            rng.uniform(1e-4, 1.0)])
        if t.scales and rng.random() < 0.5:
            scales = list(t.scales)
            scales[rng.randrange(len(scales))] = value
            t.scales = scales
        else:
            t.scales = [value] * rng.choice([1, 1, 2, 3, 4, 8])
            if t.zero_points is None or len(t.zero_points) != len(t.scales):
                t.zero_points = [0] * len(t.scales)
    elif field == "zero_point":
        value = rng.choice([-129, -128, -1, 0, 1, 127, 128, 1000, 2**31 - 1, rng.randrange(-300, 300)])
        n = len(t.zero_points) if t.zero_points else 1
        zps = list(t.zero_points) if t.zero_points else [0]
        zps[rng.randrange(n)] = value
        t.zero_points = zps
    elif field == "buffer":
        t.buffer = rng.choice([0, 0, rng.randrange(len(spec.buffers)), len(spec.buffers), -1 & 0xFFFF])
    elif field == "qdim":
        t.quantized_dimension = rng.choice([-1, 0, 1, 2, 3, 4, 100])
    else:
        t.scales = None
        t.zero_points = None
    return f"tensor{i}.{field}"


def _mutate_operator(spec: Any, rng: random.Random) -> str:
    import tflite

    k = rng.randrange(len(spec.operators))
    op = spec.operators[k]
    ops = tflite.BuiltinOperator
    field = rng.choice(["options", "options", "options", "code", "deprecated", "inputs", "outputs"])
    if field == "options" and op.options:
        table, fields = op.options
        fields = dict(fields)
        if fields and rng.random() < 0.85:
            name = rng.choice(sorted(fields))
            old = fields[name]
            if isinstance(old, list):
                fields[name] = [rng.choice([-1, 0, 1, 2, 3, 5, 1 << 20]) for _ in range(rng.randrange(0, 5))]
            elif isinstance(old, bool):
                fields[name] = not old
            elif isinstance(old, float):
                fields[name] = rng.choice([0.0, -1.0, 1e-9, 1e9, float("nan"), float("inf")])
            else:
                fields[name] = rng.choice([-1, 0, 1, 2, 3, 4, 5, 6, 7, 100, 127, 255])
        else:
            fields.clear()
        op.options = (table, fields)
        return f"op{k}.options"
    if field in ("code", "options"):
        op.code = rng.choice([ops.CONV_2D, ops.DEPTHWISE_CONV_2D, ops.FULLY_CONNECTED, ops.AVERAGE_POOL_2D,
                              ops.MAX_POOL_2D, ops.SOFTMAX, ops.ADD, ops.MUL, ops.RESHAPE, ops.PAD, ops.MEAN,
                              ops.QUANTIZE, ops.DEQUANTIZE, ops.CONCATENATION, ops.LOGISTIC, ops.TANH,
                              ops.SUB, ops.RELU, rng.randrange(0, 210)])
        return f"op{k}.code={op.code}"
    if field == "deprecated":
        op.deprecated_code = rng.choice([0, 1, 3, 17, 127, rng.randrange(0, 128)])
        return f"op{k}.deprecated_code={op.deprecated_code}"
    operands = list(op.inputs if field == "inputs" else op.outputs)
    choice = rng.random()
    if operands and choice < 0.6:
        operands[rng.randrange(len(operands))] = rng.choice([-1, 0, len(spec.tensors) - 1, len(spec.tensors),
                                                             rng.randrange(len(spec.tensors))])
    elif operands and choice < 0.8:
        operands.pop(rng.randrange(len(operands)))
    else:
        operands.append(rng.choice([-1, rng.randrange(len(spec.tensors))]))
    if field == "inputs":
        op.inputs = tuple(operands)
    else:
        op.outputs = tuple(operands)
    return f"op{k}.{field}"


def _mutate_model(spec: Any, rng: random.Random) -> str:
    field = rng.choice(["buffer_data", "buffer_offset", "legacy", "external", "io", "version", "subgraphs"])
    if field == "buffer_data" and len(spec.buffers) > 1:
        i = rng.randrange(1, len(spec.buffers))
        data = bytearray(spec.buffers[i])
        if data and rng.random() < 0.5:
            del data[rng.randrange(len(data)):]
        else:
            data += bytes(rng.randrange(256) for _ in range(rng.choice([1, 4, 16])))
        spec.buffers[i] = bytes(data)
    elif field == "buffer_offset" and len(spec.buffers) > 1:
        i = rng.randrange(1, len(spec.buffers))
        spec.buffer_offset_fields[i] = (rng.choice([1, 8, 16, 64]), rng.choice([0, 4, len(spec.buffers[i])]))
    elif field == "legacy":
        spec.legacy_opcodes = not spec.legacy_opcodes
    elif field == "external":
        spec.external_buffers = not spec.external_buffers
    elif field == "io":
        target = spec.inputs if rng.random() < 0.5 else spec.outputs
        if target and rng.random() < 0.5:
            target[rng.randrange(len(target))] = rng.randrange(len(spec.tensors) + 1)
        else:
            target.append(rng.randrange(len(spec.tensors)))
    elif field == "version":
        spec.version = rng.choice([0, 1, 2, 4])
    else:
        spec.extra_subgraphs = 1
    return f"model.{field}"


def mutate_spec(spec: Any, rng: random.Random) -> tuple[bytes, str]:
    from tvmdevice.aot.builder._flatbuffer import serialize

    spec = copy.deepcopy(spec)
    steps = []
    for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
        r = rng.random()
        if r < 0.5:
            steps.append(_mutate_tensor(spec, rng))
        elif r < 0.85:
            steps.append(_mutate_operator(spec, rng))
        else:
            steps.append(_mutate_model(spec, rng))
    return serialize(spec), "schema:" + (",".join(steps) or "valid")
