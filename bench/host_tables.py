"""The host figure tables of the cmsis-nn plugin's README, rendered from ``bench_cmsis.py --save``'s rows.

* ``host_speed``: one row per workload: XNNPACK (one thread) against tvmdevice on every SIMD level the CPU
  runs, as paired ratios (XNNPACK time / tvmdevice time), and tflite-micro;
* ``host_vnni_gain``: one row per operator of the shared models and the built networks: its time on each
  level (the project's profiler) and each VNNI level's gain over its base level (base time / VNNI time).

No plugin is imported here: the tables render from the JSON alone.
"""

from __future__ import annotations

__all__ = ["ms", "speed_table", "vnni_gain_table"]


def ms(v: float) -> str:
    """A time in ms with about three significant digits."""
    return f"{v:.4f}" if v < 0.01 else f"{v:.3f}" if v < 1 else f"{v:.2f}"


def _levels(rows: list[dict]) -> list[str]:
    return list(dict.fromkeys(level["level"] for r in rows for level in r["levels"]))


def speed_table(rows: list[dict]) -> str:
    """``bench_cmsis.py``'s workload rows as Markdown: a ratio below its target at the default level is bold."""
    levels = _levels(rows)
    default = rows[0]["default_level"]
    head = ["workload", "XNNPACK 1 thread (ms)"]
    for level in levels:
        head += [f"{level}{' (default)' if level == default else ''} (ms)", "XNNPACK / tvmdevice"]
    head += ["tflite-micro (ms)", "tflite-micro / tvmdevice", "bit-exact"]
    lines = [f"CPU: {rows[0]['cpu']}. Full runs (inputs in, invoke, outputs out), one thread; times are medians of the "
             f"thread's CPU time, ratios the median of {rows[0]['rounds']} paired rounds.", "",
             "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 2) + "---|"]
    for r in rows:
        per = {level["level"]: level for level in r["levels"]}
        cells = [r["workload"] if r["kind"] == "model" else f"{r['workload']} ({r['what']})", ms(r["xnnpack_ms"])]
        for level in levels:
            if level not in per:
                cells += ["–", "–"]
                continue
            ratio = f"{per[level]['xnnpack_over_ours']:.2f}"
            missed = level == default and r.get("target") is not None and per[level]["xnnpack_over_ours"] < r["target"]
            cells += [ms(per[level]["ms"]), f"**{ratio}**" if missed else ratio]
        cells += [ms(r["tflm_ms"]), f"{r['tflm_over_ours']:.1f}", "yes" if r["bit_exact"] else "**NO**"]
        lines.append("| " + " | ".join(cells) + " |")
    return "".join(f"{line}\n" for line in lines)


def vnni_gain_table(rows: list[dict]) -> str:
    """Per operator: its time on every level (µs) and each VNNI level's gain; a gain flagged slower is bold."""
    levels = list(dict.fromkeys(level for r in rows for level in r["us"]))
    pairs = list(dict.fromkeys(pair for r in rows for pair in r["gains"]))
    head = ["workload", "operator", *(f"{level} (µs)" for level in levels),
            *(f"{pair.split('/')[0]} gain over {pair.split('/')[1]}" for pair in pairs)]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    for r in rows:
        cells = [r["workload"], r["label"], *(f"{r['us'][level]:.1f}" if level in r["us"] else "–" for level in levels)]
        for pair in pairs:
            gain = f"{r['gains'][pair]:.2f}" if pair in r["gains"] else "–"
            cells.append(f"**{gain}**" if pair in r.get("slower", ()) else gain)
        lines.append("| " + " | ".join(cells) + " |")
    return "".join(f"{line}\n" for line in lines)
