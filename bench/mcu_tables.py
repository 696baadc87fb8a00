"""The Cortex-M figure tables of the cmsis-nn plugin's README, rendered from ``bench_mcu.py --save``'s rows.

* ``mcu_models``: one row per shared model and CPU (instructions of one warm inference, the TFLM + CMSIS-NN
  anchor, flash, RAM);
* ``mcu_operator_classes``: one row per cmsis-nn operator of the shared models and CPU, run alone; the
  table sums them by operator class;
* ``mcu_built_operators``: the same rows for the built shapes (one line per operator).

No plugin is imported here: the tables render from the JSON alone.
"""

from __future__ import annotations

from collections import defaultdict

__all__ = ["PARITY", "cpus_of", "model_table", "operator_class_table", "built_operator_table"]

#: The goal on M55 and M4: at most this many times the TFLM + CMSIS-NN anchor's instructions (above it: bold).
PARITY = 1.0


def cpus_of(rows: list[dict]) -> list[str]:
    """The CPUs of ``rows`` in the order they first appear."""
    return list(dict.fromkeys(r["cpu"] for r in rows))


def _lines(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


def model_table(rows: list[dict]) -> str:
    """Instructions per model and CPU (× the anchor where there is one), bit-exactness, flash and RAM."""
    cpus = cpus_of(rows)
    lines = ["| model | " + " | ".join(f"{c} instr (× anchor)" for c in cpus)
             + " | bit-exact | kernel code M55 (B) | flash code (B) | constants + params (B) "
             "| RAM pools / TFLM arena (B) |",
             "|---|" + "---:|" * len(cpus) + "---|---:|---:|---:|---:|"]
    by_model: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in rows:
        by_model[r["model"]][r["cpu"]] = r
    for model, per in by_model.items():
        cells = []
        for c in cpus:
            r = per.get(c)
            if r is None:
                cells.append("–")
                continue
            ratio = ""
            if r["anchor"]:
                times = r["instructions"] / r["anchor"]
                ratio = f" (**{times:.2f}×**)" if times > PARITY else f" ({times:.2f}×)"
            cells.append(f"{r['instructions']:,}{ratio}")
        first = per.get("cortex-m55") or next(iter(per.values()))
        exact = "yes" if all(r["bit_exact"] for r in per.values()) else "**NO**"
        m55 = per.get("cortex-m55")
        kcode = f"{m55['kernel_code']:,}" if m55 else "–"
        f = first["flash"]
        ram = sum(first["ram_pools"].values())
        arena = f"{first['arena']:,}" if first["arena"] else "–"
        lines.append(f"| {model.removesuffix('_int8')} | " + " | ".join(cells) + f" | {exact} | {kcode} | "
                     f"{f['code']:,} | {f['constants']:,} + {f['params']:,} | {ram:,} / {arena} |")
    return _lines(lines)


def _per_instruction(macs: int, instructions: int) -> str:
    if not instructions:
        return "–"
    return f"{instructions:,} ({macs / instructions:.2f})" if macs else f"{instructions:,}"


def operator_class_table(rows: list[dict]) -> str:
    """The operators of ``rows`` summed by class: MACs, and per CPU instructions (MACs per instruction)."""
    cpus = cpus_of(rows)
    lines = ["| operator class | MACs | " + " | ".join(f"{c} instr (MACs/instr)" for c in cpus) + " | bit-exact |",
             "|---|---:|" + "---:|" * len(cpus) + "---|"]
    sums: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    exact: dict[str, bool] = defaultdict(lambda: True)
    for r in rows:
        s = sums[r["class"]][r["cpu"]]
        s[0] += r["macs"]
        s[1] += r["instructions"]
        exact[r["class"]] &= r["bit_exact"]
    for cls, per in sorted(sums.items()):
        macs = next(iter(per.values()))[0]
        cells = [_per_instruction(*per.get(c, (0, 0))) for c in cpus]
        lines.append(f"| {cls} | {macs:,} | " + " | ".join(cells) + f" | {'yes' if exact[cls] else '**NO**'} |")
    return _lines(lines)


def built_operator_table(rows: list[dict]) -> str:
    """One line per operator of the built models: its shape, MACs, and per CPU instructions (MACs/instr)."""
    cpus = cpus_of(rows)
    lines = ["| model | # | operator | shape | MACs | " + " | ".join(f"{c} instr (MACs/instr)" for c in cpus)
             + " | bit-exact |",
             "|---|---:|---|---|---:|" + "---:|" * len(cpus) + "---|"]
    by_op: dict[tuple[str, int], dict[str, dict]] = defaultdict(dict)
    for r in rows:
        by_op[(r["model"], r["operator"])][r["cpu"]] = r
    for (model, index), per in by_op.items():
        first = next(iter(per.values()))
        cells = [_per_instruction(per[c]["macs"], per[c]["instructions"]) if c in per else "–" for c in cpus]
        exact = "yes" if all(r["bit_exact"] for r in per.values()) else "**NO**"
        lines.append(f"| {model} | {index} | {first['type']} | {first['shape']} | {first['macs']:,} | "
                     + " | ".join(cells) + f" | {exact} |")
    return _lines(lines)
