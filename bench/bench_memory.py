"""RAM and constants of the compiled plans, per model and target, beside TFLM's arena.

RAM is what a firmware engineer counts: every pool's activations plus the
scratch its kernels use (both planned statically); constants are the model's
weights the kernels read (flash on host-memory devices, preloaded device
memory on separate-memory ones); params are the kernels' parameter structs and
the packed weights they point into (flash).  TFLM's arena is measured by tflite-micro
(:func:`tvmdevice.report.tflm_arena.measure_tflm_arena`, as ``info --plot`` draws it).

    TVMDEVICE_MODELS_DIR=../shared/models python bench/bench_memory.py [--json] [--save]

``--save`` writes ``bench/figures/memory.json``, from which ``bench/figures.py`` writes the README's table.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
from pathlib import Path

import figures

import tvmdevice
from tvmdevice.errors import TVMDeviceError
from tvmdevice.report.tflm_arena import measure_tflm_arena

#: The shared models the figure tables show, in their order.
MODELS = ("hello_world_int8", "micro_speech_int8", "kws_dscnn_int8", "ad_fc_autoencoder_int8")


@functools.cache
def tflm_arena(model: Path) -> int | None:
    """TFLM's arena for ``model`` in bytes, measured by tflite-micro (once per model), or None."""
    return measure_tflm_arena(model.read_bytes()).total


TARGETS = ("c", "cmsis-nn, c", "woofles, cmsis-nn, c")


def models_folder() -> Path | None:
    """``TVMDEVICE_MODELS_DIR``, or None after saying on stderr that it must be set."""
    folder = os.environ.get("TVMDEVICE_MODELS_DIR")
    if not folder:
        print("set TVMDEVICE_MODELS_DIR to the folder of the shared .tflite models", file=sys.stderr)
        return None
    return Path(folder)


def measure(model: Path, target: str) -> dict:
    """Per-pool RAM (activations + scratch) and constants of ``model`` compiled for ``target``."""
    module = tvmdevice.compile(model, target=target)
    pools = module.plan.to_json()
    return {
        "model": model.stem, "target": target,
        "ram": sum(p["activations"] + p["scratch"] for p in pools.values()),
        "pools": {name: {k: p[k] for k in ("activations", "scratch", "constants", "params")}
                  for name, p in pools.items()},
        "tflm_arena": tflm_arena(model),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a Markdown table")
    parser.add_argument("--save", action="store_true",
                        help="also save the rows as bench/figures/memory.json, the README's table (bench/figures.py)")
    args = parser.parse_args(argv)
    folder = models_folder()
    if folder is None:
        return 1
    rows = []
    for name in MODELS:
        path = folder / f"{name}.tflite"
        for target in TARGETS:
            try:
                rows.append(measure(path, target))
            except TVMDeviceError as exc:  # a plugin of the target is not installed
                print(f"{name} on {target!r}: {exc}", file=sys.stderr)
    if args.save:
        print(f"saved {figures.save('memory', rows)}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    sys.stdout.write(figures.memory_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
