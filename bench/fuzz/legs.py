"""The legs a case runs, each in a crash-isolated worker (:mod:`workers`).

* the **tvmdevice leg** (:func:`tvm_case`): the file read once, compiled and run
  by the Python executor on every target;
* the **tflm leg** (:func:`tflm_case`): tflite-micro on the same inputs;
* the **repeated-runs leg**: a model with operator state (LSTM, SVDF, any
  variable tensor) runs ``frames`` inputs in order without a reset in both
  engines, and frames 2..n are compared as frame 1 is;
* the **export leg** (:func:`export_leg`, on a sample of the files the ``c``
  target runs): ``tvmdevice export`` and ``tvmdevice run DIR --cpu host`` on the
  same frames, compared with the Python executor bit for bit.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from .verdicts import same_outputs

#: The target whose Python results the export leg compares with (the export is made for it).
EXPORT_TARGET = "c"

#: Legs listed by ``--help`` (name: what it compares).
LEGS = {
    "tvmdevice": "the Python executor on every target (tvmdevice's own rules: no crash, hang or raw exception)",
    "tflm": "tflite-micro on the same inputs: bit-identical outputs, or a refusal where TFLM refuses",
    "repeated-runs": "a stateful model's frames 1..n without a reset against TFLM's frames 1..n",
    "export": "a sample of accepted files exported (tvmdevice export) and run with tvmdevice run DIR --cpu host, "
              "against the Python executor",
}


def input_arrays(shapes: list[tuple[tuple[int, ...], str]], seed: int) -> list[np.ndarray]:
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


def frame_inputs(shapes: list[tuple[tuple[int, ...], str]], seed: int, frames: int) -> list[list[np.ndarray]]:
    """Inputs of frames 1..n: frame 1's are those of a one-frame case with ``seed``."""
    return [input_arrays(shapes, seed if k == 0 else seed * 7919 + k) for k in range(frames)]


def tvm_case(data: bytes, targets: list[str], seed: int, frames: int = 1, export: bool = False) -> dict[str, Any]:
    """Every target's outputs (frame 1, and for a stateful model frames 1..``frames``); with
    ``export``, the export leg's verdict under ``"export"``."""
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
            stateful = any(t.is_variable for t in graph.tensors)
            result["stateful"] = stateful
            n = frames if stateful else 1
            stage = "run"
            with compiled.executor() as ex:
                outs = [[np.array(o) for o in ex.run(x)] for x in frame_inputs(shapes, seed, n)]
            result["targets"][target] = {"ok": True, "outputs": outs[0], "frames": outs}
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
    ours = result["targets"].get(EXPORT_TARGET)
    if export and ours is not None and ours["ok"]:
        result["export"] = export_leg(data, result["shapes"], seed, len(ours["frames"]), ours["frames"])
    return result


def export_leg(data: bytes, shapes: list[tuple[tuple[int, ...], str]], seed: int, frames: int,
               expected: list[list[np.ndarray]]) -> dict[str, Any]:
    """``tvmdevice export`` of ``data`` for ``c`` and ``tvmdevice run DIR --cpu host`` on the same
    frames (one sample each, in order), compared with ``expected`` (the Python executor's frames):
    ``{"ok": True}``, or ``{"ok": False, "class": "export-mismatch" | "export-error", "message"}``."""
    from tvmdevice.cli import main

    inputs = frame_inputs(shapes, seed, frames)
    with tempfile.TemporaryDirectory(prefix="fuzz-export-") as tmp:
        root = Path(tmp)
        (root / "case.tflite").write_bytes(data)
        try:
            rc = main(["export", str(root / "case.tflite"), "-t", EXPORT_TARGET, "-o", str(root / "export")])
            if rc != 0:
                return {"ok": False, "class": "export-error", "message": f"tvmdevice export exited {rc}"}
            args = ["run", str(root / "export"), "--cpu", "host", "-o", str(root / "out")]
            for k in range(len(shapes)):
                np.save(root / f"x{k}.npy", np.stack([f[k] for f in inputs]))  # a leading axis: the frames
                args += ["-i", str(root / f"x{k}.npy")]
            rc = main(args)
            if rc != 0:
                return {"ok": False, "class": "export-error", "message": f"tvmdevice run DIR exited {rc}"}
            # One sample is saved as the output itself, several stacked on a leading axis.
            saved = [np.load(root / "out" / f"output_{j}.npy") for j in range(len(expected[0]))]
            got = [saved] if frames == 1 else [[y[i] for y in saved] for i in range(frames)]
        except SystemExit as e:
            return {"ok": False, "class": "export-error", "message": f"SystemExit {e.code}"}
        except Exception as e:  # noqa: BLE001 - any failure of a file the Python executor ran is a finding
            return {"ok": False, "class": "export-error",
                    "message": "".join(traceback.format_exception(e))[-1500:]}
    for i, (g, want) in enumerate(zip(got, expected)):
        if not same_outputs([np.asarray(x) for x in g], want):
            return {"ok": False, "class": "export-mismatch", "message": f"frame {i + 1} differs"}
    return {"ok": True}


def tflm_arena(data: bytes, tensor_bytes: int | None, mem_mb: int) -> int:
    """TFLM's arena for a case: 16x the file (at least 1 MiB), or room for every tensor tvmdevice
    read from it twice over when that is more (so that a big but valid model is not refused for
    our arena), within a quarter of the worker's memory limit."""
    arena = max(1 << 20, 16 * len(data), 2 * (tensor_bytes or 0) + (256 << 10))
    return min(arena, (mem_mb << 20) // 4) if mem_mb > 0 else arena


#: What TFLM prints when its op resolver has no kernel for an operator (the wheel registers a subset).
_MISSING_KERNEL = re.compile(r"Didn't find op for builtin opcode '?[A-Z0-9_]+'?")


@contextlib.contextmanager
def captured_stderr() -> Iterator[Any]:
    """File descriptor 2 (where TFLM's C code reports) captured into a file readable after the block's
    body; restored on exit."""
    with tempfile.TemporaryFile(mode="w+", errors="replace") as log:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)
        try:
            yield _Rewound(log)
        finally:
            os.dup2(saved, 2)
            os.close(saved)


class _Rewound:
    def __init__(self, f: Any) -> None:
        self.f = f

    def read(self) -> str:
        self.f.flush()
        self.f.seek(0)
        return str(self.f.read())


def tflm_case(data: bytes, shapes: list[tuple[tuple[int, ...], str]] | None, seed: int,
              arena: int | None = None, frames: int = 1) -> dict[str, Any]:
    """TFLM's outputs for frame 1 (``"outputs"``) and frames 1..``frames`` in order (``"frames"``)."""
    from tvmdevice.testing.oracle import tflm_interpreter

    stage = "load"
    try:
        with captured_stderr() as log:
            try:
                interp = tflm_interpreter(data, arena_size=arena or tflm_arena(data, None, 0))
            except Exception as e:
                missing = _MISSING_KERNEL.search(log.read())
                if missing:  # the wheel's resolver lacks the operator: not a verdict on this file
                    return {"ok": False, "class": "load:no-kernel", "message": f"{missing.group(0)}: {e}"[:300]}
                raise
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
        got = []
        for inputs in frame_inputs(shapes, seed, frames):
            stage = "input"
            for k, x in enumerate(inputs):
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
            got.append(outs)
        return {"ok": True, "outputs": got[0], "frames": got}
    except Exception as e:  # noqa: BLE001 - any TFLM refusal is data
        return {"ok": False, "class": f"{stage}:{type(e).__name__}", "message": str(e)[:300]}
