"""The README's figure tables, generated from the benchmarks' committed results.

Each benchmark that feeds the README saves its rows as JSON in ``bench/figures/`` (``--save``); this
module renders them as the Markdown tables the README holds between ``<!-- figures:NAME -->`` and
``<!-- /figures:NAME -->``, so a figure is never typed by hand:

* ``memory``: ``bench/bench_memory.py --save`` -> ``bench/figures/memory.json`` (README.md);
* ``export``: ``bench/bench_export.py --save`` -> ``bench/figures/export.json`` (needs QEMU; README.md);
* ``host_speed``, ``host_vnni_gain``: ``bench/bench_cmsis.py --save`` (plugins/cmsis/README.md);
* ``mcu_models``, ``mcu_operator_classes``, ``mcu_built_operators``: ``bench/bench_mcu.py --save`` (needs
  QEMU; plugins/cmsis/README.md).

    python bench/figures.py --update        # rewrite every table in its file from the JSON
    python bench/figures.py --check         # exit 1 when a file's tables and the JSON disagree
    python bench/figures.py --check README.md   # only the tables of this file

A test (``tests/bench/test_figures.py``) runs the check.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable, NamedTuple

from host_tables import speed_table, vnni_gain_table
from mcu_tables import built_operator_table, model_table, operator_class_table

from tvmdevice.marked_sections import replace_section

#: The repository's root; a table's home is relative to it.
ROOT = Path(__file__).resolve().parent.parent
#: Where each benchmark saves its rows.
FIGURES_DIR = Path(__file__).resolve().parent / "figures"


def figure_file(name: str) -> Path:
    """The JSON file of the figure table ``name``."""
    return FIGURES_DIR / f"{name}.json"


def save(name: str, rows: list[dict]) -> Path:
    """Write ``rows`` as the figure table ``name``'s JSON; return the file."""
    path = figure_file(name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, indent=1) + "\n")
    return path


def _memory_row(r: dict) -> str:
    parts = []
    for name, p in r["pools"].items():
        extra = [f"{p[k]:,} {label}" for k, label in (("constants", "const"), ("params", "params")) if p[k]]
        parts.append(f"{name} {p['activations']:,}+{p['scratch']:,}" + (f" (+{', +'.join(extra)})" if extra else ""))
    arena = f"{r['tflm_arena']:,}" if r["tflm_arena"] else "?"
    return f"| {r['model']} | `{r['target']}` | {r['ram']:,} | {arena} | {'; '.join(parts)} |"


def memory_table(rows: list[dict]) -> str:
    """``bench_memory.py``'s rows as a Markdown table (lines ending in a newline)."""
    lines = ["| model | target | RAM (B) | TFLM arena (B) | per pool: activations+scratch (constants, params) |",
             "|---|---|---:|---:|---|", *map(_memory_row, rows)]
    return "".join(f"{line}\n" for line in lines)


def _export_row(r: dict) -> str:
    f, ram = r["flash"], r["ram"]
    host = ram["pools"].get("host", 0)
    # a device's own memory: its pools, and what its C keeps outside them (an NPU's fast scratch and
    # functional model: metadata.json's devices[].memories)
    device = sum(v for k, v in ram["pools"].items() if k != "host") + sum(r.get("device_memories", {}).values())
    stack = f"{ram['stack']:,}" if ram["stack"] is not None else "–"
    instr = f"{r['instructions']:,}" if r["instructions"] is not None else "–"
    ratio = f["constants"] / r["model_constants"] if r["model_constants"] else 0
    return (f"| {r['model']} | `{r['target']}` | {r['cpu']} | {'yes' if r['bit_exact'] else '**NO**'} | "
            f"{f['code']:,} | {f['constants']:,} ({ratio:.2f}×) | {f['params']:,} | {host:,} | "
            f"{device:,} | {stack} | {instr} | {r['tflm_arena']:,} | {r['model_bytes']:,} |")


def export_table(rows: list[dict]) -> str:
    """``bench_export.py``'s rows as a Markdown table (lines ending in a newline)."""
    lines = ["| model | target | CPU | bit-exact | flash code (B) | constants (B, × model's) | params (B) | "
             "RAM: host pool (B) | device memory (B) | stack (B) | instructions / run | TFLM arena (B) | model (B) |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|", *map(_export_row, rows)]
    return "".join(f"{line}\n" for line in lines)


class Table(NamedTuple):
    """A figure table: how its rows render, and the Markdown file (from the repository's root) it lives in."""

    render: Callable[[list[dict]], str]
    home: str


_PLUGIN_README = "plugins/cmsis/README.md"
#: Figure table name -> its renderer and its file.
TABLES: dict[str, Table] = {
    "memory": Table(memory_table, "README.md"),
    "export": Table(export_table, "README.md"),
    "host_speed": Table(speed_table, _PLUGIN_README),
    "host_vnni_gain": Table(vnni_gain_table, _PLUGIN_README),
    "mcu_models": Table(model_table, _PLUGIN_README),
    "mcu_operator_classes": Table(operator_class_table, _PLUGIN_README),
    "mcu_built_operators": Table(built_operator_table, _PLUGIN_README),
}


def homes() -> list[Path]:
    """Every file that holds a figure table."""
    return [ROOT / home for home in dict.fromkeys(t.home for t in TABLES.values())]


def tables_in(path: Path) -> tuple[str, ...]:
    """The figure tables whose home is ``path``."""
    return tuple(name for name, t in TABLES.items() if (ROOT / t.home).resolve() == path.resolve())


def load(name: str) -> list[dict]:
    """The saved rows of the figure table ``name``."""
    return json.loads(figure_file(name).read_text())


def update(text: str, names: tuple[str, ...]) -> str:
    """``text`` with the figure tables ``names`` rewritten between their markers from the saved JSON.

    :raises ValueError: a table's markers are missing.
    """
    for name in names:
        text = replace_section(text, "figures", name, TABLES[name].render(load(name)))
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--update", action="store_true", help="rewrite the figure tables from the JSON")
    action.add_argument("--check", action="store_true", help="exit 1 when a file's tables differ from the JSON")
    parser.add_argument("files", nargs="*", type=Path, metavar="FILE.md",
                        help="only the tables of these files (default: every file that holds one)")
    args = parser.parse_args(argv)
    stale = 0
    for path in args.files or homes():
        names = tables_in(path)
        if not names:
            parser.error(f"{path} holds no figure table (they live in {', '.join(str(h) for h in homes())})")
        text = path.read_text()
        new = update(text, names)
        if new == text:
            continue
        if args.check:
            print(f"{path}: the figure tables differ from {FIGURES_DIR}/*.json: python bench/figures.py --update "
                  f"{path}", file=sys.stderr)
            stale += 1
        else:
            path.write_text(new)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
