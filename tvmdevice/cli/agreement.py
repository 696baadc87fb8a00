"""How far two runs' outputs agree: element differences against a quantized reference, and SNR, cosine
similarity and top-1 agreement of dequantized outputs against a float model (as STM32Cube.AI's
validate reports them)."""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

__all__ = ["difference", "describe", "float_metrics", "summarize_float"]


def difference(ours: Sequence[np.ndarray], theirs: Sequence[Any], scales: Sequence[float | None] | None = None,
               ) -> dict[str, Any]:
    """Whether ``theirs`` equal ``ours`` bit for bit and, when not, by how much.

    :param scales: each output's quantization scale (None: not quantized); with one, the largest
        difference is also given in real units.
    :returns: ``bit_exact``; and when they differ ``differing`` (elements), ``elements`` (all outputs'),
        ``max_abs_diff`` (in the outputs' own units: quantization steps for integers) and, when every
        differing output has a scale, ``max_abs_diff_real``.
    """
    differing = elements = 0
    worst = 0.0
    worst_real: float | None = 0.0
    for k, (a, b) in enumerate(zip(ours, theirs)):
        a = np.asarray(a)
        b = np.asarray(b).reshape(a.shape)
        diff = np.abs(a.astype(np.float64) - b.astype(np.float64))
        elements += diff.size
        n = int(np.count_nonzero(diff))
        differing += n
        if n:
            worst = max(worst, float(diff.max()))
            scale = scales[k] if scales is not None and k < len(scales) else None
            worst_real = None if scale is None or worst_real is None else max(worst_real, float(diff.max()) * scale)
    out: dict[str, Any] = {"bit_exact": differing == 0}
    if differing:
        integers = all(np.asarray(a).dtype.kind in "iu" for a in ours)
        out.update(differing=differing, elements=elements, max_abs_diff=int(worst) if integers else worst)
        if worst_real is not None:
            out["max_abs_diff_real"] = worst_real
    return out


def describe(d: dict[str, Any]) -> str:
    """``difference``'s result in words."""
    if d["bit_exact"]:
        return "outputs bit-exact with ours"
    real = f" ({d['max_abs_diff_real']:.4g} in real units)" if "max_abs_diff_real" in d else ""
    size = d["max_abs_diff"]
    by = f"{size:,} quantization step{'s' if size != 1 else ''}" if isinstance(size, int) else f"{size:.4g}"
    return f"outputs DIFFER from ours: {d['differing']:,} of {d['elements']:,} elements, by at most {by}{real}"


def float_metrics(ours: np.ndarray, ref: np.ndarray) -> dict[str, float | bool]:
    """One output of one sample: squared signal and error sums, dot and norms (for the SNR and cosine over
    a dataset) and whether the best classes agree."""
    a = np.asarray(ours, dtype=np.float64).reshape(-1)
    r = np.asarray(ref, dtype=np.float64).reshape(-1)
    return {"signal": float(np.dot(r, r)), "noise": float(np.dot(a - r, a - r)), "dot": float(np.dot(a, r)),
            "norm_ours": float(np.dot(a, a)), "top1_agree": bool(np.argmax(a) == np.argmax(r))}


def _snr_db(signal: float, noise: float) -> float:
    if noise == 0.0:
        return math.inf
    if signal == 0.0:
        return -math.inf
    return 10.0 * math.log10(signal / noise)


def summarize_float(per_sample: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Per output over every sample: SNR in dB (signal = the float model's outputs, noise = ours minus
    theirs, summed over the samples), cosine similarity (of all samples' values as one vector) and top-1
    agreement (the share of samples whose best class is the float model's)."""
    if not per_sample:
        return []
    out = []
    for k in range(len(per_sample[0])):
        rows = [s[k] for s in per_sample]
        signal = sum(r["signal"] for r in rows)
        noise = sum(r["noise"] for r in rows)
        norms = math.sqrt(signal) * math.sqrt(sum(r["norm_ours"] for r in rows))
        cosine = sum(r["dot"] for r in rows) / norms if norms else (1.0 if noise == 0.0 else 0.0)
        out.append({"output": k, "snr_db": _snr_db(signal, noise), "cosine": cosine,
                    "top1_agreement": sum(r["top1_agree"] for r in rows) / len(rows)})
    return out
