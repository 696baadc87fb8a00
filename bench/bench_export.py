"""Exported models on the host and on Cortex-M55/M4 under QEMU: bit-exactness, flash, RAM, stack, instructions.

Each shared model is exported for each target (``tvmdevice export``), built and run on each CPU
(``tvmdevice run DIR --cpu``), and its outputs compared with tflite-micro's.  Figures are measured
on the linked image: flash code, the model's constants and its operators' params; RAM as the
planned pools (host RAM, and device memory apart) and the stack's high-water mark; instructions
of one warm run, counted under QEMU (deterministic).  Beside them: TFLM's arena and the model's size.
With ``ethos-u``, each row also holds the NPU's work in the run (launches, commands, MACs, DMA bytes: the
functional model's counters), Vela's cycle estimate and SRAM figure per partition, and the memories the
device keeps outside the pools (``metadata.json``'s ``devices[].memories``: Vela's fast scratch, the
functional model's memory), in ``--json``; the table's "device memory" column adds them up.

    TVMDEVICE_MODELS_DIR=../shared/models python bench/bench_export.py [--cpus host,cortex-m55,cortex-m4] \
        [--targets "ethos-u, cmsis-nn, c"] [--json] [--save]

``--save`` writes ``bench/figures/export.json``, from which ``bench/figures.py`` writes the README's table;
with ``--targets`` it replaces only those targets' rows there.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import figures
import numpy as np
from bench_memory import MODELS, models_folder, tflm_arena
from rich.progress import Progress

import tvmdevice
from tvmdevice.errors import TVMDeviceError
from tvmdevice.export import run_export
from tvmdevice.testing.oracle import tflm_run

TARGETS = ("c", "cmsis-nn, c", "woofles, cmsis-nn, c", "ethos-u, cmsis-nn, c")
CPUS = ("host", "cortex-m55", "cortex-m4")


def measure(path: Path, target: str, cpus: tuple[str, ...], work: Path) -> list[dict]:
    """One row per CPU for ``path`` exported for ``target``."""
    model = path.read_bytes()
    module = tvmdevice.compile(model, target, name=path.stem)
    out = module.export(work / f"{path.stem}-{target.replace(', ', '_').replace(' ', '')}")
    rng = np.random.default_rng(0)
    inputs = [rng.integers(-128, 128, size=module.graph.tensors[t].shape, dtype=np.int8) for t in module.graph.inputs]
    ref = tflm_run(model, inputs)
    constants = sum(t.nbytes for t in module.graph.tensors if t.is_constant)
    vela = [c.details for c in module.prepared.values() if c.details and "vela_npu_cycles" in c.details]
    meta = json.loads((out / "metadata.json").read_text())
    memories = {m["name"]: m["bytes"] for d in meta["devices"] for m in d.get("memories", [])}
    rows = []
    for cpu in cpus:
        run = run_export(out, cpu, inputs)
        j = run.to_json()
        exact = all(np.array_equal(o, ref.output(k).reshape(o.shape)) for k, o in enumerate(run.outputs))
        rows.append({"model": path.stem, "target": target, "cpu": cpu, "bit_exact": exact,
                     "model_bytes": len(model), "model_constants": constants, "tflm_arena": tflm_arena(path),
                     **{k: j[k] for k in ("flash", "ram", "instructions")}})
        if "ethos-u" in run.devices:  # the NPU's work in the run, and Vela's estimate per partition
            npu = run.devices["ethos-u"]
            rows[-1]["npu"] = {**{k: npu[k] for k in ("launches", "commands", "macs", "dma_bytes")},
                               "vela_npu_cycles": [d["vela_npu_cycles"] for d in vela],
                               "vela_sram_bytes": [d["vela_sram_bytes"] for d in vela]}
        if memories:
            rows[-1]["device_memories"] = memories
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpus", default=",".join(CPUS), help="comma-separated CPUs (default: %(default)s)")
    parser.add_argument("--targets", default=None,
                        help=f"targets to measure, separated by ';' (default: all of {'; '.join(TARGETS)})")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a Markdown table")
    parser.add_argument("--save", action="store_true",
                        help="also save the rows as bench/figures/export.json, the README's table (bench/figures.py)")
    args = parser.parse_args(argv)
    folder = models_folder()
    if folder is None:
        return 1
    cpus = tuple(c.strip() for c in args.cpus.split(",") if c.strip())
    rows: list[dict] = []
    targets = TARGETS if args.targets is None else tuple(t.strip() for t in args.targets.split(";") if t.strip())
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        parser.error(f"--targets: unknown {', '.join(map(repr, unknown))} (known: {'; '.join(TARGETS)})")
    jobs = [(name, t) for name in MODELS for t in targets]
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp, Progress(transient=True) as progress:
        task = progress.add_task("export, build, run", total=len(jobs))
        for name, target in jobs:
            try:
                rows += measure(folder / f"{name}.tflite", target, cpus, Path(tmp))
            except TVMDeviceError as exc:
                progress.console.print(f"{name} on {target!r}: {exc}", style="red")
            progress.advance(task)
    if args.save:
        if args.targets is not None:  # the other targets' saved rows stay, in the table's order
            kept = [r for r in figures.load("export") if r["target"] not in targets]
            rows = sorted(kept + rows, key=lambda r: (MODELS.index(r["model"]), TARGETS.index(r["target"]),
                                                      CPUS.index(r["cpu"]) if r["cpu"] in CPUS else len(CPUS)))
        print(f"saved {figures.save('export', rows)}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    sys.stdout.write(figures.export_table(rows))
    return 0 if all(r["bit_exact"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
