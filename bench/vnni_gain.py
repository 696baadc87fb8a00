"""The VNNI gain per operator: each VNNI level's time against its base level's, and the check that no VNNI
level is slower than its base on any operator beyond the noise margin.

The level a CPU runs by default is its highest; a VNNI level adds the int8 dot-product GEMM to its base level
and must never cost an operator time.  The gain of an operator is base time / VNNI time, the median over
interleaved rounds of the executor's profiled run (:func:`interleaved.profiled_steps`): 1.0 or more means the
VNNI level is as fast or faster.
"""

from __future__ import annotations

import statistics

__all__ = ["DEVICE", "FLOOR_US", "MARGIN", "VNNI_BASE", "gain_rows", "mark_slower"]

#: Each VNNI level -> the level it adds the VNNI GEMM to.
VNNI_BASE = {"avx512vnni": "avx512", "avxvnni": "avx2"}
#: The device whose kernels the SIMD level chooses: the other devices' steps are reported, never checked.
DEVICE = "cmsis-nn"
#: The noise margin: a VNNI level is slower on an operator when it takes more than (1 + MARGIN) x the base
#: level's time and more than FLOOR_US µs longer (a step's timer costs tens of ns, below that it is noise).
MARGIN = 0.10
FLOOR_US = 0.2


def gain_rows(workload: str, shared: bool, per: dict[str, list[dict[int, int]]],
              labels: list[tuple[str, str]]) -> list[dict]:
    """One row per step of ``workload``: its median µs on each level of ``per`` and, for each VNNI level
    measured with its base, the gain (median over rounds of base ns / VNNI ns)."""
    pairs = [(vnni, base) for vnni, base in VNNI_BASE.items() if vnni in per and base in per]
    rows = []
    for step, (label, device) in enumerate(labels):
        us = {level: round(statistics.median(r[step] for r in rounds) / 1e3, 3) for level, rounds in per.items()}
        gains = {f"{vnni}/{base}": round(statistics.median(b[step] / max(v[step], 1)
                                                           for v, b in zip(per[vnni], per[base])), 3)
                 for vnni, base in pairs}
        rows.append({"workload": workload, "shared": shared, "step": step, "label": label, "device": device,
                     "us": us, "gains": gains})
    return rows


def mark_slower(rows: list[dict], margin: float = MARGIN, floor_us: float = FLOOR_US) -> list[str]:
    """Set each row's ``slower`` (the VNNI pairs where the VNNI level is slower than its base beyond the
    margin, on the SIMD device's steps) and return one message per such operator of a shared model."""
    missed = []
    for r in rows:
        r["slower"] = []
        if r["device"] != DEVICE:
            continue
        for pair, gain in r["gains"].items():
            vnni, base = pair.split("/")
            if gain < 1 / (1 + margin) and r["us"][vnni] - r["us"][base] > floor_us:
                r["slower"].append(pair)
                if r["shared"]:
                    missed.append(f"{r['workload']} {r['label']}: {vnni} {r['us'][vnni]:.1f} µs against {base} "
                                  f"{r['us'][base]:.1f} µs (gain {gain:.2f}; margin {margin:.0%})")
    return missed
