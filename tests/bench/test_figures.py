"""The README's memory and export tables are generated from the benchmarks' saved JSON (bench/figures/), and
the saved memory figures are what bench_memory.py measures today."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _load(name: str):
    sys.path.insert(0, str(ROOT / "bench"))  # the benchmarks import each other as scripts do
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "bench"))


figures = _load("figures")


@pytest.mark.parametrize("name", sorted(figures.TABLES))
def test_the_readme_table_is_the_saved_json(name):
    text = README.read_text()
    assert figures.update(text, (name,)) == text, \
        f"README.md's {name} table differs from bench/figures/{name}.json: python bench/figures.py --update README.md"


def test_a_changed_figure_is_caught(tmp_path, monkeypatch):
    for name in figures.TABLES:
        (tmp_path / f"{name}.json").write_text(figures.figure_file(name).read_text())
    rows = figures.load("memory")
    rows[0]["ram"] += 1
    (tmp_path / "memory.json").write_text(json.dumps(rows))
    monkeypatch.setattr(figures, "FIGURES_DIR", tmp_path)
    text = README.read_text()
    assert figures.update(text, ("memory",)) != text
    readme = tmp_path / "README.md"
    readme.write_text(text)
    assert figures.main(["--check", str(readme)]) == 1
    assert figures.main(["--update", str(readme)]) == 0 and figures.main(["--check", str(readme)]) == 0
    assert f"| {rows[0]['ram']:,} |" in readme.read_text()


def test_update_refuses_text_without_markers():
    with pytest.raises(ValueError, match="figures:memory"):
        figures.update("# no markers\n", ("memory",))


def test_the_saved_memory_figures_are_measured_today():
    """Every row of bench/figures/memory.json whose target's devices are installed is what bench_memory.py
    measures now: a plan change without a new --save fails here."""
    if not os.environ.get("TVMDEVICE_MODELS_DIR"):
        pytest.skip("set TVMDEVICE_MODELS_DIR to the shared models")
    import tvmdevice

    bench_memory = _load("bench_memory")
    installed = set(tvmdevice.get_registry().device_names())
    folder = Path(os.environ["TVMDEVICE_MODELS_DIR"])
    checked = 0
    for row in figures.load("memory"):
        if not {d.strip() for d in row["target"].split(",")} <= installed:
            continue
        assert bench_memory.measure(folder / f"{row['model']}.tflite", row["target"]) == row, row["model"]
        checked += 1
    if not checked:
        pytest.skip("no saved row's target is installed")
