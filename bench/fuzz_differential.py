"""Differential fuzzer: tvmdevice against tflite-micro on mutated model files.

Not a CI test: a tool for long campaigns.  Each case is a model
file made from a seed model (the shared models in ``$TVMDEVICE_MODELS_DIR``
and models made by ``tvmdevice.aot.builder``) by a byte-level mutation
(flip / overwrite / insert / truncate, weighted toward the flatbuffer's
tables) or a schema-aware one (a tensor's shape, type, quantization or buffer
index, an operator's options, code or operands, changed in the builder's
``ModelSpec`` before serializing).  The case runs in two crash-isolated
worker processes, one for tvmdevice (every installed target) and one for
tflite-micro, each with a memory limit (``RLIMIT_AS``) and a time limit; a
worker that dies or overruns is recorded and replaced.

Rules checked:

* tvmdevice never crashes, hangs or raises anything but a
  ``tvmdevice.errors`` type with a message (class ``crash``, ``hang``,
  ``raw-exception``, ``empty-message``);
* when both engines run a file, the outputs are bit-identical on every
  target (``mismatch``);
* when TFLM refuses a file (load, allocate or invoke raises) and tvmdevice
  runs it, ``tflm-refuses``; a TFLM crash or hang is recorded as
  ``tflm-crash`` / ``tflm-hang`` (documented TFLM crashes, not disagreements);
* a mismatch on a file whose TFLM result is undefined is ``tflm-undefined``
  (documented, not a disagreement; :func:`tflm_undefined` says why):
  constants stored after the flatbuffer (``Buffer.offset``), which the
  tflite-micro interpreter does not read, so those weights are uninitialized
  arena memory there, or missing where an operand must be constant, so that
  TFLM refuses the file (tvmdevice and LiteRT read them); and a float QUANTIZE
  whose output scale is so small that ``x / scale`` overflows int32 for the
  inputs, where TFLM's float-to-int conversion is undefined behaviour (tvmdevice
  saturates).

A campaign stopped early (Ctrl-C or SIGTERM) finishes the cases in flight and
writes its summary (``"complete": false``).

Usage::

    python bench/fuzz_differential.py --cases 3000 --workers 2 --seed 1 --out fuzz-out --json

Each finding's file is written to ``--out`` (``<class>/<case>.tflite``, with
a ``.txt`` note); ``--minimize`` shrinks disagreements by greedy byte removal.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import hashlib
import json
import multiprocessing as mp
import os
import random
import signal
import sys
import threading
import time
import traceback
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable

import numpy as np

DEFAULT_TARGETS = ["c", "cmsis-nn, c", "woofles, c"]

# -- seeds -------------------------------------------------------------------


def _builder_specs() -> list[tuple[str, Any]]:
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


def _shared_models() -> list[tuple[str, bytes]]:
    root = Path(os.environ.get("TVMDEVICE_MODELS_DIR", "/work/shared/models"))
    if not root.is_dir():
        return []
    return [(p.stem, p.read_bytes()) for p in sorted(root.glob("*.tflite"))]


def _table_ranges(model: bytes) -> list[tuple[int, int]]:
    """Byte ranges of the flatbuffer's tables (tensors, operators, codes,
    quantization, buffers' headers) found through the ``tflite`` readers."""
    import tflite

    ranges: list[tuple[int, int]] = []
    try:
        m = tflite.Model.GetRootAsModel(model, 0)
        ranges.append((m._tab.Pos - 8, m._tab.Pos + 40))
        for i in range(m.OperatorCodesLength()):
            pos = m.OperatorCodes(i)._tab.Pos
            ranges.append((pos - 16, pos + 16))
        for s in range(m.SubgraphsLength()):
            g = m.Subgraphs(s)
            ranges.append((g._tab.Pos - 8, g._tab.Pos + 32))
            for i in range(g.TensorsLength()):
                t = g.Tensors(i)
                ranges.append((t._tab.Pos - 16, t._tab.Pos + 32))
                if t.ShapeLength():
                    start = t._tab.Vector(t._tab.Offset(4))
                    ranges.append((start - 4, start + 4 * t.ShapeLength()))
                q = t.Quantization()
                if q is not None:
                    ranges.append((q._tab.Pos - 16, q._tab.Pos + 32))
            for i in range(g.OperatorsLength()):
                op = g.Operators(i)
                ranges.append((op._tab.Pos - 16, op._tab.Pos + 40))
        for i in range(m.BuffersLength()):
            pos = m.Buffers(i)._tab.Pos
            ranges.append((pos - 8, pos + 16))
    except Exception:  # noqa: BLE001 - a seed the reader cannot walk just gets uniform mutation
        pass
    n = len(model)
    return [(max(0, a), min(n, b)) for a, b in ranges if min(n, b) > max(0, a)]


# -- mutations ---------------------------------------------------------------

_INTERESTING32 = [0, 1, 2, 3, 4, 7, 8, 16, 127, 128, 255, 256, 0x7FFF, 0xFFFF, 0x7FFFFFFF, -1, -2, -128,
                  -(2**31), 2**31 - 1]


def _pick_pos(rng: random.Random, n: int, ranges: list[tuple[int, int]]) -> int:
    if ranges and rng.random() < 0.8:
        a, b = rng.choice(ranges)
        pos = rng.randrange(a, b)
        if pos < n:  # earlier steps of this case may have shortened the file
            return pos
    return rng.randrange(n)


def mutate_bytes(model: bytes, rng: random.Random, ranges: list[tuple[int, int]]) -> tuple[bytes, str]:
    data = bytearray(model)
    steps = []
    for _ in range(rng.choice([1, 1, 1, 2, 3, 5])):
        if not data:
            break
        kind = rng.choice(["flip", "byte", "word", "word", "insert", "delete", "truncate"])
        pos = _pick_pos(rng, len(data), ranges)
        if kind == "flip":
            data[pos] ^= 1 << rng.randrange(8)
        elif kind == "byte":
            data[pos] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)])
        elif kind == "word":
            pos -= pos % 4
            value = rng.choice(_INTERESTING32 + [rng.randrange(-(2**31), 2**31), len(data), len(data) - 4])
            data[pos:pos + 4] = (value & 0xFFFFFFFF).to_bytes(4, "little")
        elif kind == "insert":
            data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.choice([1, 4, 8])))
        elif kind == "delete":
            del data[pos:pos + rng.choice([1, 4, 8])]
        elif kind == "truncate" and rng.random() < 0.3:
            del data[pos:]
        steps.append(f"{kind}@{pos}")
    return bytes(data), "bytes:" + ",".join(steps)


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


class CaseSource:
    """Deterministic case ``i`` of a campaign with seed ``seed``."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.specs = _builder_specs()
        from tvmdevice.aot.builder._flatbuffer import serialize

        self.shared = _shared_models()
        self.files = self.shared + [(name, serialize(spec)) for name, spec in self.specs]
        self.ranges = {name: _table_ranges(data) for name, data in self.files}

    def input_seed(self, i: int) -> int:
        """The seed of case ``i``'s random inputs: its number."""
        return i

    def case(self, i: int) -> tuple[bytes, str]:
        rng = random.Random(f"{self.seed}:{i}")
        if rng.random() < 0.5 and self.specs:
            name, spec = rng.choice(self.specs)
            try:
                data, how = mutate_spec(spec, rng)
            except Exception as e:  # noqa: BLE001 - the builder refused the mutated spec
                data, how = serialize_fallback(spec), f"schema-unserializable({type(e).__name__})"
        else:
            # Half the byte-level cases start from a real model (there are few).
            name, data = rng.choice(self.shared if self.shared and rng.random() < 0.5 else self.files)
            data, how = mutate_bytes(data, rng, self.ranges[name])
            if rng.random() < 0.1:
                data, how2 = mutate_bytes(data, rng, [])
                how += ";" + how2
        return data, f"{name} {how}"


class ReplaySource:
    """Case files given on the command line (``--replay``), in order."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths = paths

    def case(self, i: int) -> tuple[bytes, str]:
        return self.paths[i].read_bytes(), f"replay {self.paths[i]}"

    def input_seed(self, i: int) -> int:
        """The inputs' seed: the campaign's case number from the finding's ``.json`` note, so that
        a replay feeds the inputs the finding was made with (else ``i``)."""
        note = self.paths[i].with_suffix(".json")
        try:
            return int(json.loads(note.read_text())["case"])
        except (OSError, ValueError, KeyError, TypeError):
            return i


def serialize_fallback(spec: Any) -> bytes:
    from tvmdevice.aot.builder._flatbuffer import serialize

    return serialize(spec)


# -- workers -----------------------------------------------------------------


def _limit_memory(mem_mb: int) -> None:
    if mem_mb > 0:
        import resource

        limit = mem_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _input_arrays(shapes: list[tuple[tuple[int, ...], str]], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype in shapes:
        dt = np.dtype(dtype)
        if dt.kind == "f":
            out.append(rng.normal(0, 2, shape).astype(dt))
        else:
            info = np.iinfo(dt)
            lo, hi = max(info.min, -128), min(info.max, 127)
            out.append(rng.integers(lo, hi + 1, shape).astype(dt))
    return out


def _tvm_case(data: bytes, targets: list[str], seed: int) -> dict[str, Any]:
    import tvmdevice
    from tvmdevice import errors
    from tvmdevice.aot.frontend import load_tflite

    result: dict[str, Any] = {"targets": {}}
    graph: Any = None
    for target in targets:
        stage = "compile"
        try:
            if graph is None:  # read once: the file is the same for every target
                graph = load_tflite(data, name="default")
                result["tensor_bytes"] = sum(t.nbytes for t in graph.tensors)
            compiled = tvmdevice.compile(graph, target=target)
            shapes = [(tuple(graph.tensors[i].shape), np.dtype(graph.tensors[i].dtype).str) for i in graph.inputs]
            result["shapes"] = shapes
            inputs = _input_arrays(shapes, seed)
            stage = "run"
            with compiled.executor() as ex:
                outs = ex.run(inputs)
            result["targets"][target] = {"ok": True, "outputs": [np.asarray(o) for o in outs]}
        except errors.TVMDeviceError as e:
            cls = f"{stage}:{type(e).__name__}"
            if not str(e).strip():
                cls = "empty-message:" + type(e).__name__
            result["targets"][target] = {"ok": False, "class": cls, "message": str(e)[:300]}
        except MemoryError as e:
            # Under RLIMIT_AS: the model asked for more memory than the limit
            # before any check bounded it (a campaign needs such a bound).
            result["targets"][target] = {"ok": False, "class": f"memory-error:{stage}",
                                         "message": "".join(traceback.format_exception(e))[-1500:]}
        except Exception as e:  # noqa: BLE001 - a raw exception is a finding
            result["targets"][target] = {"ok": False, "class": f"raw-exception:{type(e).__name__}",
                                         "message": "".join(traceback.format_exception(e))[-1500:]}
    return result


def tflm_arena(data: bytes, tensor_bytes: int | None, mem_mb: int) -> int:
    """TFLM's arena for a case: 16x the file (at least 1 MiB), or room for every tensor tvmdevice
    read from it twice over when that is more (so that a big but valid model is not refused for
    our arena), within a quarter of the worker's memory limit."""
    arena = max(1 << 20, 16 * len(data), 2 * (tensor_bytes or 0) + (256 << 10))
    return min(arena, (mem_mb << 20) // 4) if mem_mb > 0 else arena


def _tflm_case(data: bytes, shapes: list[tuple[tuple[int, ...], str]] | None, seed: int,
               arena: int | None = None) -> dict[str, Any]:
    from tvmdevice.testing.oracle import tflm_interpreter

    stage = "load"
    try:
        interp = tflm_interpreter(data, arena_size=arena or tflm_arena(data, None, 0))
        stage = "input"
        if shapes is None:
            shapes = []
            k = 0
            while True:
                try:
                    d = interp.get_input_details(k)
                except Exception:  # noqa: BLE001 - past the last input
                    break
                shapes.append((tuple(int(s) for s in d["shape"]), np.dtype(d["dtype"]).str))
                k += 1
        for k, x in enumerate(_input_arrays(shapes, seed)):
            interp.set_input(x, k)
        stage = "invoke"
        interp.invoke()
        stage = "output"
        outs = []
        k = 0
        while True:
            try:
                interp.get_output_details(k)
            except Exception:  # noqa: BLE001 - past the last output
                break
            outs.append(np.array(interp.get_output(k)))
            k += 1
        return {"ok": True, "outputs": outs}
    except Exception as e:  # noqa: BLE001 - any TFLM refusal is data
        return {"ok": False, "class": f"{stage}:{type(e).__name__}", "message": str(e)[:300]}


def _worker_main(conn: Any, kind: str, mem_mb: int, quiet: bool) -> None:
    _limit_memory(mem_mb)
    if quiet:  # TFLM and the C kernels print to fd 1/2 from C; keep the console for the progress line
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    os.environ.setdefault("TVMDEVICE_NO_PROGRESS", "1")
    import warnings

    warnings.simplefilter("ignore")
    if kind == "tvm":
        import tvmdevice  # noqa: F401 - import once, before the first case
    else:
        from tflite_micro.python.tflite_micro import runtime  # noqa: F401
    conn.send("ready")
    while True:
        msg = conn.recv()
        if msg is None:
            return
        if kind == "tvm":
            data, targets, seed = msg
            conn.send(_tvm_case(data, targets, seed))
        else:
            data, shapes, seed, arena = msg
            conn.send(_tflm_case(data, shapes, seed, arena))


class Worker:
    """One crash-isolated subprocess; restarted after a crash or a hang."""

    def __init__(self, kind: str, mem_mb: int, ctx: Any, quiet: bool = True) -> None:
        self.kind, self.mem_mb, self.ctx, self.quiet = kind, mem_mb, ctx, quiet
        self.proc: Any = None
        self.conn: Any = None
        self.restarts = 0

    def _start(self) -> None:
        parent, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker_main, args=(child, self.kind, self.mem_mb, self.quiet),
                                       daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        if not self.conn.poll(120):
            raise RuntimeError(f"{self.kind} worker did not start")
        self.conn.recv()

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.join(5)
            self.conn.close()
        self.proc = None
        self.restarts += 1

    def call(self, msg: Any, timeout: float) -> tuple[str, Any]:
        """``("ok", reply)``, ``("crash", exitcode)`` or ``("hang", None)``."""
        if self.proc is None or not self.proc.is_alive():
            self._start()
        try:
            self.conn.send(msg)
            if self.conn.poll(timeout):
                return "ok", self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(2)  # the pipe closed: the worker is dying, let it finish
        alive = self.proc.is_alive()
        code = self.proc.exitcode
        self.kill()
        return ("hang", None) if alive else ("crash", code)

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.proc.join(2)
            if self.proc.is_alive():
                self.proc.kill()


# -- comparison --------------------------------------------------------------


def judge(tvm: tuple[str, Any], tflm: tuple[str, Any], targets: list[str]) -> tuple[list[str], dict[str, str],
                                                                                   str]:
    """``(findings, per-engine classes, tflm class)`` for one case."""
    findings: list[str] = []
    classes: dict[str, str] = {}
    status, reply = tvm
    if status != "ok":
        for t in targets:
            classes[t] = status
        findings.append(f"{status}:tvmdevice({reply})")
        reply = {"targets": {}}
    tstatus, treply = tflm
    if tstatus != "ok":
        tflm_class = f"tflm-{status}"
        tflm_class = f"tflm-{tstatus}"
        tflm_ok = False
    else:
        tflm_ok = treply["ok"]
        tflm_class = "ok" if tflm_ok else treply["class"]
    for t, r in reply["targets"].items():
        if r["ok"]:
            classes[t] = "ok"
            if tstatus != "ok":
                continue  # a TFLM crash or hang: documented TFLM behaviour, no comparison possible
            if not tflm_ok:
                findings.append(f"tflm-refuses:{t}")
                continue
            ours, theirs = r["outputs"], treply["outputs"]
            if len(ours) != len(theirs) or any(
                    a.dtype != b.dtype or a.size != b.size or not np.array_equal(a.reshape(-1), b.reshape(-1))
                    for a, b in zip(ours, theirs)):
                findings.append(f"mismatch:{t}")
        else:
            classes[t] = r["class"]
            if r["class"].startswith(("raw-exception", "empty-message", "memory-error")):
                findings.append(f"{r['class']}:{t}")
    return findings, classes, tflm_class


#: Below this output scale a float QUANTIZE overflows int32 for inputs of magnitude ~2 or more.
_TINY_QUANTIZE_SCALE = 1e-9


def tflm_undefined(data: bytes) -> str | None:
    """Why TFLM's output on ``data`` is undefined (see the module doc), or None."""
    import tflite

    try:
        m = tflite.Model.GetRootAsModel(data, 0)
        g = m.Subgraphs(0)
        inputs = {g.Operators(k).Inputs(j) for k in range(g.OperatorsLength())
                  for j in range(g.Operators(k).InputsLength())}
        for t in range(g.TensorsLength()):
            tensor = g.Tensors(t)
            b = m.Buffers(tensor.Buffer()) if 0 < tensor.Buffer() < m.BuffersLength() else None
            if t in inputs and b is not None and b.Offset() > 1 and b.Size() and not b.DataLength():
                return f"tensor {t} is stored after the flatbuffer (Buffer.offset): tflite-micro does not read it"
        for k in range(g.OperatorsLength()):
            op = g.Operators(k)
            code = m.OperatorCodes(op.OpcodeIndex())
            builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
            if builtin != tflite.BuiltinOperator.QUANTIZE or not op.InputsLength() or not op.OutputsLength():
                continue
            src, dst = g.Tensors(op.Inputs(0)), g.Tensors(op.Outputs(0))
            q = dst.Quantization()
            if src.Type() == tflite.TensorType.FLOAT32 and q is not None and q.ScaleLength() and \
                    0 < q.Scale(0) < _TINY_QUANTIZE_SCALE:
                return (f"operator #{k} QUANTIZE float32 with output scale {q.Scale(0):g}: x / scale overflows "
                        "int32, undefined behaviour in TFLM's conversion")
    except Exception:  # noqa: BLE001 - unreadable here: no explanation
        return None
    return None


def hints(data: bytes) -> list[str]:
    """Features of a file that explain known divergences, for triage:
    constants stored after the flatbuffer (``Buffer.offset``, which TFLM does
    not read), buffers with both inline data and an offset, operator codes
    whose two code fields disagree, more than one subgraph."""
    import flatbuffers
    import tflite

    found: list[str] = []
    try:
        m = tflite.Model.GetRootAsModel(data, 0)
        for i in range(m.BuffersLength()):
            b = m.Buffers(i)
            if b.Offset() > 1 and b.Size():
                found.append("buffer-offset+data" if b.DataLength() else "buffer-offset")
        for i in range(m.OperatorCodesLength()):
            # Raw fields: the reader's BuiltinCode() answers the deprecated
            # code when it is set, hiding a disagreement.
            tab = m.OperatorCodes(i)._tab
            o_dep, o_code = tab.Offset(4), tab.Offset(10)
            dep = tab.Get(flatbuffers.number_types.Int8Flags, tab.Pos + o_dep) if o_dep else 0
            code = tab.Get(flatbuffers.number_types.Int32Flags, tab.Pos + o_code) if o_code else 0
            if code and dep != min(code, 127):
                found.append("opcode-fields-disagree")
        if m.SubgraphsLength() > 1:
            found.append("subgraphs>1")
    except Exception:  # noqa: BLE001 - unreadable: no hint
        found.append("unreadable")
    return sorted(set(found))


# -- minimization ------------------------------------------------------------


def minimize(data: bytes, still_fails: Callable[[bytes], bool], budget: float) -> bytes:
    """Greedy reduction while the finding remains: first zero chunks in place
    (halving in size; the length and so every flatbuffer offset stays valid),
    then drop chunks, which mostly trims data the offsets no longer reach."""
    deadline = time.monotonic() + budget
    for remove in (False, True):
        chunk = max(1, len(data) // 4)
        while chunk >= 1 and time.monotonic() < deadline:
            i, changed = 0, False
            while i < len(data) and time.monotonic() < deadline:
                piece = data[i:i + chunk]
                if not remove and not any(piece):
                    i += chunk
                    continue
                candidate = data[:i] + (b"" if remove else bytes(len(piece))) + data[i + chunk:]
                if candidate and still_fails(candidate):
                    data, changed = candidate, True
                    if not remove:
                        i += chunk
                else:
                    i += chunk
            if not changed:
                chunk //= 2
    return data


# -- campaign ----------------------------------------------------------------


@dataclasses.dataclass
class Campaign:
    args: argparse.Namespace
    targets: list[str]
    source: CaseSource | ReplaySource
    out: Path
    done: int = 0
    next_case: int = 0
    tvm_hist: dict[str, Counter] = dataclasses.field(default_factory=lambda: defaultdict(Counter))
    tflm_hist: Counter = dataclasses.field(default_factory=Counter)
    findings: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    finding_counts: Counter = dataclasses.field(default_factory=Counter)
    both_accept: int = 0
    #: Saved findings by class and file features (see :func:`hints`).
    signatures: Counter = dataclasses.field(default_factory=Counter)
    #: Cases TFLM crashed or hung on that tvmdevice ran (no comparison possible).
    tflm_crash_tvm_runs: int = 0
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    #: set by Ctrl-C or SIGTERM: no new case starts, the summary is still written
    stop: threading.Event = dataclasses.field(default_factory=threading.Event)

    def take(self) -> int | None:
        with self.lock:
            if self.next_case >= self.args.cases or self.stop.is_set():
                return None
            self.next_case += 1
            return self.next_case - 1

    def run_case(self, tvm_w: Worker, tflm_w: Worker, data: bytes, case_seed: int
                 ) -> tuple[tuple[str, Any], tuple[str, Any]]:
        tvm = tvm_w.call((data, self.targets, case_seed), self.args.time_limit)
        shapes = tvm[1].get("shapes") if tvm[0] == "ok" else None
        tensor_bytes = tvm[1].get("tensor_bytes") if tvm[0] == "ok" else None
        arena = tflm_arena(data, tensor_bytes, self.args.mem_limit)
        tflm = tflm_w.call((data, shapes, case_seed, arena), self.args.time_limit)
        return tvm, tflm

    def slot(self, k: int, ctx: Any) -> None:
        tvm_w = Worker("tvm", self.args.mem_limit, ctx)
        tflm_w = Worker("tflm", self.args.mem_limit, ctx)
        try:
            while (i := self.take()) is not None:
                with self.lock:
                    data, how = self.source.case(i)
                    seed = self.source.input_seed(i)
                tvm, tflm = self.run_case(tvm_w, tflm_w, data, seed)
                findings, classes, tflm_class = judge(tvm, tflm, self.targets)
                if any(f.startswith(("mismatch", "tflm-refuses")) for f in findings):
                    why = tflm_undefined(data)
                    # Weights TFLM does not read can also make it refuse the file (a constant operand
                    # it finds empty): the same cause, not a disagreement.
                    explained = ("mismatch", "tflm-refuses") if why and "Buffer.offset" in why else \
                        ("mismatch",) if why else ()
                    if explained and any(f.startswith(explained) for f in findings):
                        findings = [f for f in findings if not f.startswith(explained)]
                        tflm_class = "tflm-undefined"
                if findings and self.args.minimize and all(
                        f.startswith(("tflm-refuses", "mismatch", "raw-exception")) for f in findings):
                    data = self.minimized(tvm_w, tflm_w, data, seed, {f.split(":")[0] for f in findings})
                self.record(i, data, how, findings, classes, tflm_class, tvm, tflm)
        finally:
            tvm_w.close()
            tflm_w.close()

    def minimized(self, tvm_w: Worker, tflm_w: Worker, data: bytes, case_seed: int, kinds: set[str]) -> bytes:
        def still(candidate: bytes) -> bool:
            got, _, _ = judge(*self.run_case(tvm_w, tflm_w, candidate, case_seed), self.targets)
            return bool(kinds & {f.split(":")[0] for f in got})

        return minimize(data, still, self.args.minimize)

    def record(self, i: int, data: bytes, how: str, findings: list[str], classes: dict[str, str],
               tflm_class: str, tvm: tuple[str, Any], tflm: tuple[str, Any]) -> None:
        with self.lock:
            self.done += 1
            for t, c in classes.items():
                self.tvm_hist[t][c] += 1
            self.tflm_hist[tflm_class] += 1
            if tflm_class == "ok" and any(c == "ok" for c in classes.values()):
                self.both_accept += 1
            if tflm_class.startswith("tflm-"):
                findings = findings + [tflm_class]  # saved for the record, not a disagreement
                if any(c == "ok" for c in classes.values()):
                    self.tflm_crash_tvm_runs += 1
            by_kind: dict[str, list[str]] = defaultdict(list)
            for f in findings:
                by_kind[f.split(":")[0]].append(f)
            for kind, group in by_kind.items():
                f = "; ".join(group)
                self.finding_counts[kind] += 1
                if self.finding_counts[kind] > self.args.keep:
                    continue  # counted, not saved
                digest = hashlib.sha1(data).hexdigest()[:10]
                path = self.out / kind / f"case{i:07d}-{digest}.tflite"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                signature = f"{kind} [{', '.join(hints(data)) or 'no hint'}]"
                self.signatures[signature] += 1
                note = {"case": i, "finding": f, "hints": signature, "mutation": how, "classes": classes,
                        "tflm": tflm_class,
                        "tvm_messages": {t: r.get("message") for t, r in (tvm[1] or {}).get("targets", {}).items()}
                        if tvm[0] == "ok" else tvm, "tflm_message": tflm[1].get("message")
                        if tflm[0] == "ok" else tflm}
                path.with_suffix(".json").write_text(json.dumps(note, indent=1, default=str))
                if len(self.findings) < 2000:
                    self.findings.append({"finding": f, "file": str(path), "mutation": how})


def installed_targets(requested: list[str]) -> list[str]:
    import tvmdevice

    ok = []
    for t in requested:
        try:
            tvmdevice.compile(_probe_model(), target=t)
            ok.append(t)
        except Exception as e:  # noqa: BLE001 - a target not installed is skipped
            print(f"skipping target {t!r}: {type(e).__name__}: {e}", file=sys.stderr)
    return ok


def _probe_model() -> bytes:
    from tvmdevice.aot.builder import single_op_model

    return single_op_model("ADD")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--targets", default=";".join(DEFAULT_TARGETS),
                    help="targets separated by ';' (default: %(default)s; uninstalled ones are skipped)")
    ap.add_argument("--time-limit", type=float, default=20.0, help="seconds per case per engine")
    ap.add_argument("--mem-limit", type=int, default=2048, help="MB of address space per worker")
    ap.add_argument("--out", type=Path, default=Path("fuzz-out"))
    ap.add_argument("--keep", type=int, default=300, metavar="N", help="case files saved per finding class")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON (also written to OUT)")
    ap.add_argument("--minimize", type=float, default=0.0, metavar="SEC",
                    help="greedy byte-removal budget per disagreement (0: off)")
    ap.add_argument("--replay", type=Path, nargs="+", metavar="FILE",
                    help="run these case files instead of generated cases (triage, regression)")
    args = ap.parse_args(argv)
    if args.replay:
        args.cases = len(args.replay)

    targets = installed_targets([t.strip() for t in args.targets.split(";") if t.strip()])
    if not targets:
        print("no target installed", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    source = ReplaySource(args.replay) if args.replay else CaseSource(args.seed)
    campaign = Campaign(args, targets, source, args.out)
    # Workers are forked from a server that imported the engines once, so a
    # worker replaced after a crash is ready in milliseconds.
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["numpy", "tvmdevice", "tflite_micro.python.tflite_micro.runtime"])
    start = time.monotonic()
    threads = [threading.Thread(target=campaign.slot, args=(k, ctx), daemon=True) for k in range(args.workers)]
    for th in threads:
        th.start()
    signal.signal(signal.SIGTERM, lambda *_: campaign.stop.set())
    try:
        _progress(campaign, threads, start)
    except KeyboardInterrupt:
        campaign.stop.set()
        print("stopping: finishing the cases in flight", file=sys.stderr, flush=True)
        _progress(campaign, threads, start)
    elapsed = time.monotonic() - start
    summary = {
        "cases": campaign.done, "complete": campaign.done == args.cases, "seconds": round(elapsed, 1),
        "cases_per_s": round(campaign.done / elapsed, 2),
        "workers": args.workers, "seed": args.seed, "targets": targets, "both_accept": campaign.both_accept,
        "tflm_crash_while_tvmdevice_runs": campaign.tflm_crash_tvm_runs,
        "tvmdevice_classes": {t: dict(c.most_common()) for t, c in campaign.tvm_hist.items()},
        "tflm_classes": dict(campaign.tflm_hist.most_common()),
        "findings": dict(campaign.finding_counts),
        "saved_by_signature": dict(campaign.signatures.most_common()), "finding_files": campaign.findings[:200],
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        _print_summary(summary)
    bad = {k for k in campaign.finding_counts if not k.startswith(("tflm-crash", "tflm-hang", "tflm-undefined"))}
    return 1 if bad else 0


def _progress(campaign: Campaign, threads: list[threading.Thread], start: float) -> None:
    def line() -> str:
        rate = campaign.done / max(1e-9, time.monotonic() - start)
        found = ", ".join(f"{k}={v}" for k, v in sorted(campaign.finding_counts.items())) or "none"
        return f"{campaign.done}/{campaign.args.cases} cases, {rate:.1f}/s, findings: {found}"

    try:
        from rich.progress import Progress
    except ImportError:
        Progress = None  # noqa: N806
    if Progress is not None and sys.stderr.isatty():
        with Progress(transient=False) as bar:
            task = bar.add_task("fuzz", total=campaign.args.cases)
            while any(th.is_alive() for th in threads):
                time.sleep(0.5)
                bar.update(task, completed=campaign.done, description=line())
        return
    last = 0.0
    while any(th.is_alive() for th in threads):
        time.sleep(0.5)
        if time.monotonic() - last > 10:
            print(line(), file=sys.stderr, flush=True)
            last = time.monotonic()
    print(line(), file=sys.stderr, flush=True)


def _print_summary(s: dict[str, Any]) -> None:
    print(f"cases: {s['cases']} in {s['seconds']} s ({s['cases_per_s']} cases/s), both accept: {s['both_accept']}")
    for t, hist in s["tvmdevice_classes"].items():
        print(f"tvmdevice {t!r}: " + ", ".join(f"{k}={v}" for k, v in hist.items()))
    print("tflite-micro: " + ", ".join(f"{k}={v}" for k, v in s["tflm_classes"].items()))
    print("findings: " + (", ".join(f"{k}={v}" for k, v in s["findings"].items()) or "none"))


if __name__ == "__main__":
    sys.exit(main())
