"""Verdicts on a case: findings from both engines' results, and what explains a known divergence."""

from __future__ import annotations

from typing import Any

import numpy as np


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
                if tflm_class != "load:no-kernel":  # the wheel lacks the kernel: no verdict on the file
                    findings.append(f"tflm-refuses:{t}")
                continue
            if not same_outputs(r["outputs"], treply["outputs"]):
                findings.append(f"mismatch:{t}")
                continue
            # The repeated-runs leg: frames 2..n of a stateful model, each as frame 1 is compared.
            ours, theirs = r.get("frames", [])[1:], treply.get("frames", [])[1:]
            if len(ours) != len(theirs) or not all(same_outputs(a, b) for a, b in zip(ours, theirs)):
                findings.append(f"stateful-mismatch:{t}")
        else:
            classes[t] = r["class"]
            if r["class"].startswith(("raw-exception", "empty-message", "memory-error")):
                findings.append(f"{r['class']}:{t}")
    export = reply.get("export")
    if export is not None and not export["ok"]:
        findings.append(f"{export['class']}:c")
    return findings, classes, tflm_class


def same_outputs(ours: list[np.ndarray], theirs: list[np.ndarray]) -> bool:
    """Bit-identical outputs: the same count, and each the same type, size and values."""
    return len(ours) == len(theirs) and all(
        a.dtype == b.dtype and a.size == b.size and np.array_equal(a.reshape(-1), b.reshape(-1))
        for a, b in zip(ours, theirs))


#: Below this output scale a float QUANTIZE overflows int32 for inputs of magnitude ~2 or more.
_TINY_QUANTIZE_SCALE = 1e-9


#: The rank from which tflite-micro's kernels give wrong outputs (a recorded finding, LiteRT as the second reference).
_TFLM_WRONG_RANK = 8


#: TFLM's int8 LOGISTIC/TANH input rescale: ``input_scale * 2**(31 - 4)``, then ``frexp``.
_ACTIVATION_INPUT_BITS = 27


def _activation_radius_undefined(tensor: Any) -> str | None:
    """Why an int8 LOGISTIC's or TANH's input quantization makes TFLM's Prepare undefined, or None: its
    ``CalculateInputRadius`` shifts ``1LL`` left by the frexp exponent of ``scale * 2**27``, undefined
    from 63 (``1LL << 63`` overflows; from 64 x86 takes the count mod 64, so the radius is wrong)."""
    import math

    import tflite

    q = tensor.Quantization()
    if tensor.Type() != tflite.TensorType.INT8 or q is None or not q.ScaleLength():
        return None
    scale = float(q.Scale(0))
    if not math.isfinite(scale) or scale <= 0:
        return None
    exponent = math.frexp(scale * float(1 << _ACTIVATION_INPUT_BITS))[1]
    if exponent < 63:
        return None
    return (f"input scale {scale:g} gives input_left_shift {exponent}: TFLM's CalculateInputRadius shifts 1LL "
            "by it, undefined behaviour (tests/fixtures/fuzz/logistic_input_scale_huge.tflite; LiteRT agrees "
            "with tvmdevice)")


def tflm_undefined(data: bytes) -> str | None:
    """Why TFLM's output on ``data`` is undefined (see the module doc), or None."""
    import tflite

    try:
        m = tflite.Model.GetRootAsModel(data, 0)
        g = m.Subgraphs(0)
        inputs = {g.Operators(k).Inputs(j) for k in range(g.OperatorsLength())
                  for j in range(g.Operators(k).InputsLength())}
        outputs = {g.Operators(k).Outputs(j) for k in range(g.OperatorsLength())
                   for j in range(g.Operators(k).OutputsLength())}
        for t in range(g.TensorsLength()):
            tensor = g.Tensors(t)
            b = m.Buffers(tensor.Buffer()) if 0 < tensor.Buffer() < m.BuffersLength() else None
            if t in inputs and b is not None and b.Offset() > 1 and b.Size() and not b.DataLength():
                return f"tensor {t} is stored after the flatbuffer (Buffer.offset): tflite-micro does not read it"
            if tensor.ShapeLength() >= _TFLM_WRONG_RANK and (t in inputs or t in outputs):
                return (f"tensor {t} has rank {tensor.ShapeLength()}: tflite-micro's kernels give wrong values at "
                        "rank 8 (tests/fixtures/fuzz/fully_connected_output_rank8.tflite; LiteRT agrees with "
                        "tvmdevice)")
        for k in range(g.OperatorsLength()):
            op = g.Operators(k)
            code = m.OperatorCodes(op.OpcodeIndex())
            builtin = max(code.BuiltinCode(), code.DeprecatedBuiltinCode())
            if not op.InputsLength() or not op.OutputsLength():
                continue
            if builtin in (tflite.BuiltinOperator.LOGISTIC, tflite.BuiltinOperator.TANH):
                why = _activation_radius_undefined(g.Tensors(op.Inputs(0)))
                if why:
                    name = "LOGISTIC" if builtin == tflite.BuiltinOperator.LOGISTIC else "TANH"
                    return f"operator #{k} {name}: {why}"
                continue
            if builtin != tflite.BuiltinOperator.QUANTIZE:
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
