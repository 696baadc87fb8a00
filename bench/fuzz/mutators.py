"""Structure-aware mutations of a model (:mod:`structure`), one class per family.

Each mutator has a ``name`` (the class the campaign reports and ``--help``
lists), a one-line ``about``, ``applicable(model)`` and ``apply(model, rng,
donor)``, which changes ``model`` in place and returns the :class:`Change`
it made: the field's path (for :func:`structure.resolve`) and a note.  A
mutator changes what it names and nothing else, so that a finding points at
one field.  :data:`MUTATORS` is the registry: the campaign, ``--help`` and the
tests all read it.
"""

from __future__ import annotations

import copy
import random
import struct
from dataclasses import dataclass
from typing import Any

import tflite

from .structure import Model, Operator, option_tables

OPS = tflite.BuiltinOperator
TT = tflite.TensorType

#: Denormal and extreme float32 scales.
FLT_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]
FLT_TRUE_MIN = struct.unpack("<f", b"\x01\x00\x00\x00")[0]
FLT_MIN = struct.unpack("<f", b"\x00\x00\x80\x00")[0]


@dataclass
class Change:
    path: tuple[Any, ...]
    note: str


def _ops(model: Model) -> list[tuple[int, int, Operator]]:
    return [(s, k, op) for s, g in enumerate(model.subgraphs) for k, op in enumerate(g.operators)]


def _tensors(model: Model) -> list[tuple[int, int]]:
    return [(s, i) for s, g in enumerate(model.subgraphs) for i in range(len(g.tensors))]


def _other(rng: random.Random, old: Any, choices: list[Any]) -> Any:
    """A choice that differs from ``old`` (so that the change is real)."""
    rest = [c for c in choices if c != old and not (isinstance(c, float) and c != c and old != old)]
    return rng.choice(rest)


class Mutator:
    name = ""
    about = ""

    def applicable(self, model: Model) -> bool:
        return bool(_ops(model))

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        raise NotImplementedError


class OptionField(Mutator):
    name = "option-field"
    about = "one field of an operator's option table (LSTM clips, kernel type, strides, ...) set to an edge value"

    def applicable(self, model: Model) -> bool:
        return any(op.options is not None and op.options.fields for _, _, op in _ops(model))

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        s, k, op = rng.choice([x for x in _ops(model) if x[2].options is not None and x[2].options.fields])
        assert op.options is not None
        name = rng.choice(sorted(op.options.fields))
        old = op.options.fields[name]
        if isinstance(old, list):
            new: Any = [rng.choice([-1, 0, 1, 2, 3, 7, 1 << 20, 2**31 - 1]) for _ in range(rng.randrange(0, 9))]
            if new == old:
                new = old + [-1]
        elif isinstance(old, bool):
            new = not old
        elif isinstance(old, float):
            new = _other(rng, old, [0.0, -1.0, 1e-30, FLT_TRUE_MIN, 1e9, FLT_MAX, float("nan"), float("inf"),
                                    -float("inf")])
        else:
            new = _other(rng, old, [0, 1, 2, 3, 4, 5, 6, 7, 15, 16, 100, 127])
        op.options.fields[name] = new
        return Change(("subgraphs", s, "operators", k, "options", "fields", name), f"{name}={new!r}")


class OptionUnionType(Mutator):
    name = "option-union-type"
    about = "an operator's option-union type changed to another table's while it still carries its own table"

    def applicable(self, model: Model) -> bool:
        return any(op.options is not None for _, _, op in _ops(model))

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        s, k, op = rng.choice([x for x in _ops(model) if x[2].options is not None])
        kinds = sorted(option_tables())
        op.options_type = _other(rng, op.options_type, kinds[:20] + [rng.choice(kinds), 0, 255])
        return Change(("subgraphs", s, "operators", k, "options_type"), f"type {op.options_type}")


class OpcodeIndex(Mutator):
    name = "opcode-index"
    about = "an operator's opcode_index at the edges: another code, one past the table, 2^32-1"

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        s, k, op = rng.choice(_ops(model))
        n = len(model.operator_codes)
        op.opcode_index = _other(rng, op.opcode_index, [0, n - 1, n, n + 1, 2**31, 2**32 - 1])
        return Change(("subgraphs", s, "operators", k, "opcode_index"), f"opcode_index={op.opcode_index}")


class OpcodeVersion(Mutator):
    name = "opcode-version"
    about = "an OperatorCode's version 0, negative or huge"

    def applicable(self, model: Model) -> bool:
        return bool(model.operator_codes)

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        i = rng.randrange(len(model.operator_codes))
        c = model.operator_codes[i]
        c.version = _other(rng, c.version, [0, -1, 2, 7, 1000, 2**31 - 1, -(2**31)])
        return Change(("operator_codes", i, "version"), f"version={c.version}")


class OpcodeFields(Mutator):
    name = "opcode-fields"
    about = "deprecated_builtin_code and builtin_code disagree (or the 127 placeholder with builtin_code 0)"

    def applicable(self, model: Model) -> bool:
        return bool(model.operator_codes)

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        i = rng.randrange(len(model.operator_codes))
        c = model.operator_codes[i]
        if rng.random() < 0.5:
            c.deprecated_builtin_code = _other(rng, c.deprecated_builtin_code,
                                               [0, 1, 3, 9, 25, 126, 127, -1, -128, rng.randrange(128)])
            return Change(("operator_codes", i, "deprecated_builtin_code"), f"deprecated={c.deprecated_builtin_code}")
        c.builtin_code = _other(rng, c.builtin_code, [0, 3, 9, 44, 127, 128, 161, 210, 1000, -1])
        return Change(("operator_codes", i, "builtin_code"), f"builtin={c.builtin_code}")


class Intermediates(Mutator):
    name = "intermediates"
    about = "an operator's intermediates: out of range, -1, a shaped or constant tensor, added where none are"

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        s, k, op = rng.choice(_ops(model))
        n = len(model.subgraphs[s].tensors)
        old = list(op.intermediates)
        new = list(old)
        r = rng.random()
        if new and r < 0.5:
            new[rng.randrange(len(new))] = rng.choice([-1, n, n + 5, 2**31 - 1, rng.randrange(n)])
        elif new and r < 0.7:
            new.pop(rng.randrange(len(new)))
        else:
            new.append(rng.choice([-1, n, rng.randrange(n)]))
        if new == old:
            new.append(n)
        op.intermediates = new
        return Change(("subgraphs", s, "operators", k, "intermediates"), f"intermediates={new}")


class CyclicOutputs(Mutator):
    name = "cyclic-outputs"
    about = "an operator writing its own input, an earlier operator's input, or another operator's output"

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        s, k, op = rng.choice([x for x in _ops(model) if x[2].outputs and x[2].inputs] or _ops(model))
        g = model.subgraphs[s]
        choices = list(op.inputs)
        for j, other in enumerate(g.operators):
            if j < k:
                choices += other.inputs
            if j != k:
                choices += other.outputs
        choices = [c for c in choices if c >= 0] or [0]
        outs = list(op.outputs) or [0]
        j = rng.randrange(len(outs))
        outs[j] = _other(rng, outs[j], choices + [-1]) if len(set(choices + [-1])) > 1 else -1
        op.outputs = outs
        return Change(("subgraphs", s, "operators", k, "outputs"), f"outputs={outs}")


class GraphOutputs(Mutator):
    name = "graph-outputs"
    about = "graph outputs duplicated, naming a graph input, a constant or an intermediate tensor"

    def applicable(self, model: Model) -> bool:
        return bool(model.subgraphs and model.subgraphs[0].tensors)

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        g = model.subgraphs[0]
        outs = list(g.outputs)
        r = rng.random()
        if outs and r < 0.4:
            outs.append(rng.choice(outs))
        elif g.inputs and r < 0.6:
            outs.append(rng.choice(g.inputs))
        else:
            outs.append(rng.randrange(len(g.tensors)))
        g.outputs = outs
        return Change(("subgraphs", 0, "outputs"), f"outputs={outs}")


def _factorizations(n: int, rank: int, rng: random.Random) -> list[int]:
    """``rank`` positive dims whose product is ``n`` (random prime factors spread over the axes)."""
    dims = [1] * rank
    m, p = n, 2
    while m > 1 and p * p <= m:
        while m % p == 0:
            dims[rng.randrange(rank)] *= p
            m //= p
        p += 1
    if m > 1:
        dims[rng.randrange(rank)] *= m
    return dims


class ShapePermutation(Mutator):
    name = "shape-permutation"
    about = "a tensor's shape permuted or refactored with the same element count, rank 1 to 8"

    def applicable(self, model: Model) -> bool:
        return any(t.shape for g in model.subgraphs for t in g.tensors)

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        s, i = rng.choice([(s, i) for s, i in _tensors(model) if model.subgraphs[s].tensors[i].shape])
        t = model.subgraphs[s].tensors[i]
        old = list(t.shape)
        count = 1
        for d in old:
            count *= max(d, 0)
        new = list(old)
        for _ in range(8):
            if rng.random() < 0.4 and len(old) > 1:
                rng.shuffle(new)
            else:
                new = _factorizations(count, rng.randrange(1, 9), rng) if count else \
                    [0] + [rng.randrange(1, 4) for _ in range(rng.randrange(0, 7))]
            if new != old:
                break
        if new == old:
            new = old + [1]  # one more unit axis: the same count still
        t.shape = new
        return Change(("subgraphs", s, "tensors", i, "shape"), f"shape {old} -> {new}")


def _quantized(model: Model) -> list[tuple[int, int]]:
    return [(s, i) for s, i in _tensors(model) if model.subgraphs[s].tensors[i].quantization is not None
            and model.subgraphs[s].tensors[i].quantization.scale]  # type: ignore[union-attr]


class QuantLengths(Mutator):
    name = "quant-lengths"
    about = "quantization scale and zero-point arrays of mismatched lengths (per-channel or not)"

    def applicable(self, model: Model) -> bool:
        return bool(_quantized(model))

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        s, i = rng.choice(_quantized(model))
        q = model.subgraphs[s].tensors[i].quantization
        assert q is not None
        which = rng.choice(["scale", "zero_point"])
        values = list(getattr(q, which))
        n = len(values)
        new_n = _other(rng, n, [0, 1, 2, 3, n + 1, max(0, n - 1), 2 * n + 1, 64])
        fill = values[0] if values else (0.05 if which == "scale" else 0)
        setattr(q, which, (values + [fill] * new_n)[:new_n])
        return Change(("subgraphs", s, "tensors", i, "quantization", which), f"{which} length {n} -> {new_n}")


class QuantExtremes(Mutator):
    name = "quant-extremes"
    about = "zero points >= 2^32 or -2^63, denormal, FLT_MIN, FLT_MAX, -0.0 or NaN scales"

    def applicable(self, model: Model) -> bool:
        return bool(_quantized(model))

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        s, i = rng.choice(_quantized(model))
        q = model.subgraphs[s].tensors[i].quantization
        assert q is not None
        if rng.random() < 0.5 and q.zero_point:
            j = rng.randrange(len(q.zero_point))
            q.zero_point[j] = _other(rng, q.zero_point[j], [2**32, 2**32 + 1, 2**40, 2**63 - 1, -(2**63), -(2**32),
                                                            2**31, 65536, -32769])
            return Change(("subgraphs", s, "tensors", i, "quantization", "zero_point"), f"zp={q.zero_point[j]}")
        j = rng.randrange(len(q.scale))
        q.scale[j] = _other(rng, q.scale[j], [FLT_TRUE_MIN, 1e-40, FLT_MIN, FLT_MAX, 1e38, -0.0, float("nan"),
                                              -FLT_MAX, 4.66e-10])
        return Change(("subgraphs", s, "tensors", i, "quantization", "scale"), f"scale={q.scale[j]!r}")


class BufferFar(Mutator):
    name = "buffer-far"
    about = "a buffer's offset and size near 2^40 or 2^62 (with or without inline data)"

    def applicable(self, model: Model) -> bool:
        return len(model.buffers) > 1

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        i = rng.randrange(1, len(model.buffers))
        b = model.buffers[i]
        base = rng.choice([1 << 40, 1 << 62, (1 << 64) - 16, (1 << 40) - 1])
        b.offset = min(base + rng.choice([0, 1, 16]), (1 << 64) - 1)  # the field is a uint64
        b.size = rng.choice([len(b.data) or 4, 1 << 40, 1 << 62, 16])
        if rng.random() < 0.5:
            b.data = b""
        return Change(("buffers", i, "offset"), f"offset={b.offset} size={b.size}")


#: Option tables with an enum a mutation targets, and the field.
_ENUM_FIELDS = {"Conv2DOptions": "QuantizedBiasType", "FullyConnectedOptions": "QuantizedBiasType",
                "TransposeConvOptions": "QuantizedBiasType", "AddOptions": "PotScaleInt16",
                "SubOptions": "PotScaleInt16"}


class EnumEdges(Mutator):
    name = "enum-edges"
    about = "quantizedBiasType (CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV) and potScaleInt16 (ADD, SUB) set to edges"

    def applicable(self, model: Model) -> bool:
        return any(op.options is not None and op.options.table in _ENUM_FIELDS for _, _, op in _ops(model))

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        s, k, op = rng.choice([x for x in _ops(model) if x[2].options is not None
                               and x[2].options.table in _ENUM_FIELDS])
        assert op.options is not None
        name = _ENUM_FIELDS[op.options.table]
        old = op.options.fields.get(name)
        if name == "PotScaleInt16":
            new: Any = not old if old is not None else rng.choice([True, False])
        else:
            new = _other(rng, old, [TT.INT32, TT.INT64, TT.INT16, TT.INT8, TT.FLOAT32, 0, 127, -1, -128])
        op.options.fields[name] = new
        return Change(("subgraphs", s, "operators", k, "options", "fields", name), f"{name}={new!r}")


class Splice(Mutator):
    name = "splice"
    about = "an operator of another model (with its tensors, buffers and code) spliced in, fed from this one"

    def applicable(self, model: Model) -> bool:
        return bool(model.subgraphs and model.subgraphs[0].operators)

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        if donor is None or not donor.subgraphs or not donor.subgraphs[0].operators:
            donor = model.copy()
        dg = donor.subgraphs[0]
        g = model.subgraphs[0]
        feeds = [i for i in g.inputs + [o for op in g.operators for o in op.outputs] if 0 <= i < len(g.tensors)]
        kinds = {(tuple(g.tensors[f].shape), g.tensors[f].type) for f in feeds}
        ops = dg.operators
        # Mostly an operator whose first input this model has a tensor like (else most splices are refused
        # for their shapes alone).
        fitting = [op for op in ops if op.inputs and 0 <= op.inputs[0] < len(dg.tensors)
                   and (tuple(dg.tensors[op.inputs[0]].shape), dg.tensors[op.inputs[0]].type) in kinds]
        dop = rng.choice(fitting if fitting and rng.random() < 0.8 else ops)
        remap: dict[int, int] = {}
        for j, ti in enumerate(dop.inputs + dop.outputs + dop.intermediates):
            if ti < 0 or ti >= len(dg.tensors) or ti in remap:
                continue
            t = dg.tensors[ti]
            constant = 0 < t.buffer < len(donor.buffers) and bool(donor.buffers[t.buffer].data)
            if j < len(dop.inputs) and not constant and not t.is_variable and feeds and rng.random() < 0.9:
                # An activation input: a tensor this model computes, of the same shape and type when there is one.
                alike = [f for f in feeds if g.tensors[f].shape == t.shape and g.tensors[f].type == t.type]
                remap[ti] = rng.choice(alike if alike and rng.random() < 0.8 else feeds)
                continue
            t = copy.deepcopy(t)
            if constant:
                model.buffers.append(copy.deepcopy(donor.buffers[t.buffer]))
                t.buffer = len(model.buffers) - 1
            else:
                t.buffer = 0
            g.tensors.append(t)
            remap[ti] = len(g.tensors) - 1
        code = donor.operator_codes[dop.opcode_index] if 0 <= dop.opcode_index < len(donor.operator_codes) else None
        new = copy.deepcopy(dop)
        if code is not None:
            model.operator_codes.append(copy.deepcopy(code))
            new.opcode_index = len(model.operator_codes) - 1
        new.inputs = [remap.get(i, i if i < 0 else -1) for i in dop.inputs]
        new.outputs = [remap.get(i, -1) for i in dop.outputs]
        new.intermediates = [remap.get(i, -1) for i in dop.intermediates]
        g.operators.append(new)
        if new.outputs and new.outputs[0] >= 0:
            g.outputs = list(g.outputs) + [new.outputs[0]]
        return Change(("subgraphs", 0, "operators"), f"spliced op with code {code.builtin_code if code else None}")


class SpliceSubgraph(Mutator):
    name = "splice-subgraph"
    about = "another model's subgraph (with its buffers and codes) added as subgraph 1, or replacing subgraph 0"

    def applicable(self, model: Model) -> bool:
        return bool(model.subgraphs)

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        donor = donor if donor is not None else model.copy()
        g = copy.deepcopy(donor.subgraphs[0])
        base_b, base_c = len(model.buffers), len(model.operator_codes)
        model.buffers += copy.deepcopy(donor.buffers)
        model.operator_codes += copy.deepcopy(donor.operator_codes)
        for t in g.tensors:
            t.buffer += base_b
        for op in g.operators:
            op.opcode_index += base_c
        if rng.random() < 0.5:
            model.subgraphs.append(g)
            return Change(("subgraphs",), f"subgraph {len(model.subgraphs) - 1} from another model")
        model.subgraphs[0] = g
        return Change(("buffers",), "subgraph 0 replaced by another model's")


class TensorTypeInt16(Mutator):
    name = "tensor-type"
    about = "a tensor's type changed (int8 <-> int16, int32/int64 biases, an unknown code)"

    def applicable(self, model: Model) -> bool:
        return bool(_tensors(model))

    def apply(self, model: Model, rng: random.Random, donor: Model | None = None) -> Change:
        s, i = rng.choice(_tensors(model))
        t = model.subgraphs[s].tensors[i]
        t.type = _other(rng, t.type, [TT.INT8, TT.INT16, TT.INT32, TT.INT64, TT.UINT8, TT.FLOAT32, TT.BOOL, 40, 127])
        return Change(("subgraphs", s, "tensors", i, "type"), f"type={t.type}")


#: Every mutator, in the order ``--help`` lists them.
MUTATORS: list[Mutator] = [OptionField(), OptionUnionType(), OpcodeIndex(), OpcodeVersion(), OpcodeFields(),
                           Intermediates(), CyclicOutputs(), GraphOutputs(), ShapePermutation(), QuantLengths(),
                           QuantExtremes(), BufferFar(), EnumEdges(), TensorTypeInt16(), Splice(), SpliceSubgraph()]

BY_NAME = {m.name: m for m in MUTATORS}

