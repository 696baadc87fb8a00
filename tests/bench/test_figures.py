"""The READMEs' figure tables are generated from the benchmarks' saved JSON (bench/figures/), each in the file
it lives in, and the saved memory figures are what bench_memory.py measures today."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
def test_the_table_in_its_file_is_the_saved_json(name):
    home = ROOT / figures.TABLES[name].home
    text = home.read_text()
    assert figures.update(text, (name,)) == text, \
        f"{home.relative_to(ROOT)}'s {name} table differs from bench/figures/{name}.json: " \
        "python bench/figures.py --update"


def test_every_saved_figure_file_has_a_table():
    saved = {p.stem for p in figures.FIGURES_DIR.glob("*.json")}
    assert saved == set(figures.TABLES)


def _copy_homes(tmp_path: Path, monkeypatch) -> None:
    """The figure JSON and every home file copied under ``tmp_path``, which becomes the repository's root."""
    (tmp_path / "figures").mkdir()
    for name in figures.TABLES:
        shutil.copy(figures.figure_file(name), tmp_path / "figures" / f"{name}.json")
    for home in figures.homes():
        target = tmp_path / home.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(home, target)
    monkeypatch.setattr(figures, "FIGURES_DIR", tmp_path / "figures")
    monkeypatch.setattr(figures, "ROOT", tmp_path)


@pytest.mark.parametrize("name, change, shown", [
    ("memory", lambda rows: rows[0].update(ram=rows[0]["ram"] + 1), lambda rows: f"| {rows[0]['ram']:,} |"),
    ("mcu_models", lambda rows: rows[0].update(instructions=rows[0]["instructions"] + 1),
     lambda rows: f"{rows[0]['instructions']:,} ("),
    ("host_speed", lambda rows: rows[0].update(tflm_ms=987.0), lambda rows: "| 987.00 |"),
])
def test_a_changed_figure_is_caught_and_rewritten_in_its_own_file(tmp_path, monkeypatch, name, change, shown):
    _copy_homes(tmp_path, monkeypatch)
    rows = figures.load(name)
    change(rows)
    (tmp_path / "figures" / f"{name}.json").write_text(json.dumps(rows))
    home = tmp_path / figures.TABLES[name].home
    others = [h for h in figures.homes() if h != home]
    before = {h: h.read_text() for h in others}
    assert figures.main(["--check"]) == 1
    assert figures.main(["--check", str(home)]) == 1
    for h in others:
        assert figures.main(["--check", str(h)]) == 0
    assert figures.main(["--update"]) == 0 and figures.main(["--check"]) == 0
    assert shown(rows) in home.read_text()
    assert {h: h.read_text() for h in others} == before


def test_a_file_without_figure_tables_is_refused(tmp_path, capsys):
    other = tmp_path / "NOTES.md"
    other.write_text("# notes\n")
    with pytest.raises(SystemExit):
        figures.main(["--check", str(other)])
    assert "holds no figure table" in capsys.readouterr().err


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
