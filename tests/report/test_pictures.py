"""The pictures: every buffer drawn at its offset and lifetime, every operator in its device's colour,
partitions framed, costs as bars, one HTML file with no network, and the --plot checks made first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from plugin_fixtures import load_fixture_module
from svg_helpers import bbox, fill, groups, linear

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.errors import InvalidArgumentError
from tvmdevice.report import OperatorCost, read_timings, write_plot
from tvmdevice.report.colours import NO_KERNEL, device_colours
from tvmdevice.report.memory_figure import HALF_WIDTH, buffer_id
from tvmdevice.report.tflm_arena import TFLMArena, measure_tflm_arena

# tvmdevice.report imports matplotlib only when it draws
pytest.importorskip("matplotlib", reason="the pictures need matplotlib: pip install 'tvmdevice[plot]'")

ENV = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}


def _model() -> bytes:
    """conv -> conv -> ADD of both (a tensor alive across an operator) -> RESHAPE (a view) -> FC."""
    b = ModelBuilder(name="pictured", seed=4)
    x = b.input((1, 6, 6, 3), 0.05, 0)
    y = b.conv2d(x, filters=4, kernel=3, padding="SAME")
    z = b.conv2d(y, filters=4, kernel=1)
    s = b.add(y, z)
    b.output(b.fully_connected(b.reshape(s, (1, 144)), 5))
    return b.build()


@pytest.fixture
def picky(registry):
    registry.register(load_fixture_module("fixture_picky"), "picky")
    return registry


@pytest.fixture
def module(picky):
    """Convolutions and the FC on picky (64 B of scratch per call), the ADD it refuses on c, a view."""
    return tvmdevice.compile(_model(), "picky -scratch=64 -refuse=ADD, c", registry=picky)


def _svg(module, tmp_path, **kw) -> ET.Element:
    path = write_plot(str(tmp_path / "plan.svg"), module, **kw)
    return ET.parse(path).getroot()


def test_every_buffer_is_drawn_at_its_offset_and_lifetime(module, tmp_path):
    root = _svg(module, tmp_path)
    allocs = module.plan.allocations()
    drawn = groups(root, "buffer-")
    assert set(drawn) == {buffer_id(a) for a in allocs}
    assert {a.kind for a in allocs} == {"tensor", "scratch"}
    xs, ys = [], []
    for a in allocs:
        g = drawn[buffer_id(a)]
        assert (int(g.get("data-offset")), int(g.get("data-size"))) == (a.offset, a.size)
        assert (int(g.get("data-first-op")), int(g.get("data-last-op"))) == (a.first_op, a.last_op)
        x0, x1, y_top, y_bottom = bbox(g)
        xs += [(a.first_op - HALF_WIDTH, x0), (a.last_op + HALF_WIDTH, x1)]
        ys += [(a.offset, y_bottom), (a.offset + a.size, y_top)]
    x_scale, _ = linear(xs)
    y_scale, _ = linear(ys)
    assert x_scale > 0 and y_scale < 0  # operators left to right, offsets upwards
    peak = groups(root, "peak-host")["peak-host"]
    assert int(peak.get("data-bytes")) == module.plan.pools["host"].size


def test_scratch_and_a_tensor_alive_across_operators_are_told_apart(module, tmp_path):
    root = _svg(module, tmp_path)
    drawn = groups(root, "buffer-")
    scratch = [g for g in drawn.values() if g.get("data-kind") == "scratch"]
    assert scratch and all(g.get("data-first-op") == g.get("data-last-op") == g.get("data-operator")
                           for g in scratch)
    tensors = {fill(g) for g in drawn.values() if g.get("data-kind") == "tensor"}
    assert all(fill(g).startswith("url(#") for g in scratch)  # hatched
    assert len(tensors) == 1 and tensors.pop().startswith("#")
    conv0_out = module.graph.operators[0].outputs[0]
    alive = drawn[f"buffer-host-tensor-{conv0_out}"]
    assert (alive.get("data-first-op"), alive.get("data-last-op")) == ("0", "2")  # read again by the ADD
    for g in scratch:
        assert f"scratch of #{g.get('data-operator')}" in g.find("{http://www.w3.org/2000/svg}title").text


def test_every_operator_is_coloured_by_its_device_with_the_reasons_others_declined(module, tmp_path):
    root = _svg(module, tmp_path)
    colours = device_colours(module.target)
    nodes = groups(root, "op-")
    assert set(nodes) == {f"op-{i}" for i in range(len(module.graph.operators))}
    for p in module.placement.ops:
        node = nodes[f"op-{p.op_index}"]
        expected = NO_KERNEL if p.is_alias else colours[p.device]
        assert fill(node) == expected.lower(), p
        assert node.get("data-device") == ("" if p.is_alias else p.device)
    assert colours["picky"] != colours["c"]
    add = next(p for p in module.placement.ops if p.op_type == "ADD")
    assert add.device == "c"
    title = nodes[f"op-{add.op_index}"].find("{http://www.w3.org/2000/svg}title").text
    assert "declined by picky" in title and add.declined[0][1] in title
    edges = groups(root, "edge-")
    conv0_out = module.graph.operators[0].outputs[0]
    assert f"edge-{conv0_out}-0-1" in edges and f"edge-{conv0_out}-0-2" in edges  # the skip to the ADD


def test_partitions_are_framed_and_their_calls_timed(registry, tmp_path):
    registry.register(load_fixture_module("fixture_fuser"), "fuser")
    module = tvmdevice.compile(_model(), "fuser, c", registry=registry)
    parts = module.placement.partitions
    assert parts
    # a firmware profile times a partition's one call at its first operator, as type PARTITION
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"operators": [
        {"op_index": p.first, "op_type": "PARTITION", "device": "fuser", "value": 7, "unit": "instructions"}
        for p in parts]}))
    costs = read_timings(str(path), module)
    assert [c.op_index for c in costs] == [p.first for p in parts]
    path.write_text(json.dumps([{"op_index": 1, "op_type": "PARTITION", "device": "fuser", "value": 7,
                                 "unit": "instructions"}]))
    with pytest.raises(InvalidArgumentError, match="is CONV_2D, not PARTITION"):
        read_timings(str(path), module)  # #1 is inside a partition, not its first operator
    root = _svg(module, tmp_path, costs=costs)
    bars = groups(root, "cost-")
    assert len(bars) == len(parts)
    first = parts[0]
    assert bars["cost-0"].find("{http://www.w3.org/2000/svg}title").text.startswith(
        f"partition {first.index} (#{min(first.op_indices)}-#{max(first.op_indices)}) on fuser")
    frames = groups(root, "partition-")
    assert set(frames) == {f"partition-{p.index}" for p in parts}
    for p in parts:
        frame = frames[f"partition-{p.index}"]
        assert (int(frame.get("data-first")), int(frame.get("data-last"))) == (min(p.op_indices), max(p.op_indices))
        assert frame.get("data-device") == "fuser"


def _costs(module) -> list[OperatorCost]:
    return [OperatorCost(p.op_index, p.op_type, p.device, 10.0 * (p.op_index + 1), "instructions")
            for p in module.placement.ops if not p.is_view]


def test_costs_are_bars_as_long_as_their_values_in_their_devices_colour(module, tmp_path):
    costs = _costs(module)
    root = _svg(module, tmp_path, costs=costs)
    bars = groups(root, "cost-")
    assert set(bars) == {f"cost-{k}" for k in range(len(costs))}
    colours = device_colours(module.target)
    widths = []
    for k, c in enumerate(costs):
        bar = bars[f"cost-{k}"]
        assert int(bar.get("data-op-index")) == c.op_index and float(bar.get("data-value")) == c.value
        assert fill(bar) == colours[c.device]
        x0, x1, _, _ = bbox(bar)
        widths += [(0.0, x0), (c.value, x1)]
    linear(widths)


def test_timings_are_checked_against_the_model(module, tmp_path):
    path = tmp_path / "t.json"
    rows = [{"op_index": c.op_index, "op_type": c.op_type, "device": c.device, "value": c.value, "unit": c.unit}
            for c in _costs(module)]
    path.write_text(json.dumps({"operators": rows}))
    assert read_timings(str(path), module) == _costs(module)
    for bad, words in [({**rows[0], "op_type": "SOFTMAX"}, "CONV_2D, not SOFTMAX"),
                       ({**rows[0], "op_index": 99}, "not in model"),
                       ({**rows[0], "value": -1}, "number >= 0"),
                       ({**rows[0], "unit": "us"}, "mixes units")]:
        path.write_text(json.dumps([bad, *rows[1:]]))
        with pytest.raises(InvalidArgumentError, match=words):
            read_timings(str(path), module)


def test_the_html_report_is_one_file_with_every_picture_inline_and_no_network(module, tmp_path):
    page = write_plot(str(tmp_path / "r.html"), module, costs=_costs(module)).read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 3
    for word in ("http://", "https://", "<script", "<link", "src=", "<img"):
        assert word not in page, word
    for a in module.plan.allocations():
        assert f'id="{buffer_id(a)}"' in page
    assert all(f'id="op-{i}"' in page for i in range(len(module.graph.operators)))
    ids = [el for el in page.split('id="')[1:]]
    assert len(ids) == len(set(i.split('"')[0] for i in ids)), "an id is used twice in the page"


def test_png_is_an_image(module, tmp_path):
    data = write_plot(str(tmp_path / "p.png"), module).read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000


def test_tflm_arena_is_drawn_beside_the_host_pool(module, tmp_path):
    root = _svg(module, tmp_path, arena=TFLMArena(total=4321, head=1234))
    line = groups(root, "tflm-arena")["tflm-arena"]
    assert int(line.get("data-bytes")) == 4321
    assert int(groups(root, "tflm-arena-head")["tflm-arena-head"].get("data-bytes")) == 1234
    assert "TFLM arena 4,321 B" in ET.tostring(root, encoding="unicode")
    root = _svg(module, tmp_path, arena=TFLMArena(unavailable="tflite-micro is not installed"))
    assert not groups(root, "tflm-arena")  # neither line
    assert "TFLM arena unavailable: tflite-micro is not installed" in ET.tostring(root, encoding="unicode")


def test_tflm_arena_is_measured_in_a_child_process_that_may_fail():
    pytest.importorskip("tflite_micro", reason="pip install tflite-micro to measure TFLM's arena")
    arena = measure_tflm_arena(_model())
    assert arena.total is not None and arena.head is not None and 0 < arena.head < arena.total
    refused = measure_tflm_arena(b"TFL3 not a model at all" * 4)
    assert refused.total is None and "tflite-micro refused the model" in refused.unavailable


def test_tflm_arena_is_measured_from_a_source_checkout_too(tmp_path, monkeypatch):
    """``python -c`` puts the working directory first on sys.path: a checkout's uncompiled ``tvmdevice``
    there must not be what the child imports."""
    pytest.importorskip("tflite_micro", reason="pip install tflite-micro to measure TFLM's arena")
    (tmp_path / "tvmdevice").mkdir()
    (tmp_path / "tvmdevice" / "__init__.py").write_text("raise ImportError('the uncompiled checkout')\n")
    monkeypatch.chdir(tmp_path)
    assert measure_tflm_arena(_model()).total is not None


@pytest.mark.models
def test_tflm_arena_of_a_shared_model_is_the_recorded_one(models_dir):
    pytest.importorskip("tflite_micro", reason="pip install tflite-micro to measure TFLM's arena")
    path = models_dir / "kws_dscnn_int8.tflite"
    if not path.exists():
        pytest.skip(f"{path.name} not in {models_dir}")
    assert measure_tflm_arena(path.read_bytes()).total == 24272  # shared/models/README.md


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tvmdevice", *args], capture_output=True, text=True, env=ENV)


@pytest.fixture
def model_file(tmp_path):
    path = tmp_path / "pictured.tflite"
    path.write_bytes(_model())
    return path


def test_info_plot_writes_each_format(model_file, tmp_path):
    from tvmdevice.cli.model_info import model_info
    from tvmdevice.registry import Registry

    for suffix in ("svg", "png", "html"):
        out = tmp_path / f"info.{suffix}"
        proc = _cli("info", str(model_file), "--plot", str(out), "--json")
        assert proc.returncode == 0, proc.stderr
        assert out.stat().st_size > 1000 and f"wrote {out}" in proc.stderr
    module = tvmdevice.compile(model_file, "c", registry=Registry(autoload=False))
    assert json.loads(proc.stdout) == json.loads(json.dumps(model_info(module)))  # the report is unchanged
    root = ET.parse(tmp_path / "info.svg").getroot()
    assert len(groups(root, "op-")) == 5


def test_info_plot_draws_the_timings_file(model_file, tmp_path):
    rows = [{"op_index": 0, "op_type": "CONV_2D", "device": "c", "value": 5, "unit": "us"},
            {"op_index": 4, "op_type": "FULLY_CONNECTED", "device": "c", "value": 2.5, "unit": "us"}]
    (tmp_path / "t.json").write_text(json.dumps(rows))
    proc = _cli("info", str(model_file), "--plot", str(tmp_path / "c.svg"), "--timings", str(tmp_path / "t.json"))
    assert proc.returncode == 0, proc.stderr
    assert len(groups(ET.parse(tmp_path / "c.svg").getroot(), "cost-")) == 2
    rows[1]["op_type"] = "SOFTMAX"
    (tmp_path / "t.json").write_text(json.dumps(rows))
    proc = _cli("info", str(model_file), "--plot", str(tmp_path / "d.svg"), "--timings", str(tmp_path / "t.json"))
    assert proc.returncode == 1 and len(proc.stderr.strip().splitlines()) == 1 and "not SOFTMAX" in proc.stderr
    assert not (tmp_path / "d.svg").exists()


@pytest.mark.parametrize("plot, words", [("out.jpg", "must end in .svg, .png, .html"),
                                         ("missing-folder/out.svg", "does not exist"),
                                         (".", "must end in"),
                                         ("a-file/out.svg", "'a-file' is not a directory"),
                                         ("a-folder.svg", "is a directory")])
def test_a_bad_plot_path_is_one_line_exit_2_before_any_work(tmp_path, plot, words):
    (tmp_path / "a-file").write_text("")
    (tmp_path / "a-folder.svg").mkdir()
    # the model does not exist either: the --plot check comes first, before the model is read
    proc = subprocess.run([sys.executable, "-m", "tvmdevice", "info", "no-such-model.tflite", "--plot", plot],
                          capture_output=True, text=True, env=ENV, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tvmdevice: error: --plot") and words in lines[0]


def test_an_unwritable_plot_folder_and_timings_without_plot_are_refused(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes everywhere")
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    proc = _cli("info", "no-such-model.tflite", "--plot", str(locked / "out.svg"))
    assert proc.returncode == 2 and "is not writable" in proc.stderr


def test_timings_need_plot_and_an_existing_file(tmp_path):
    proc = _cli("info", "no-such-model.tflite", "--timings", "t.json")
    assert proc.returncode == 2 and "needs --plot" in proc.stderr
    proc = _cli("info", "no-such-model.tflite", "--plot", str(tmp_path / "x.svg"), "--timings", "nope.json")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "--timings 'nope.json' does not exist" in proc.stderr


def test_bench_json_steps_are_read_as_operator_costs(picky, model_file, tmp_path, capsys):
    from tvmdevice.cli.main import main

    assert main(["bench", str(model_file), "-t", "c", "--runs", "2", "--warmup", "0", "--json"]) == 0
    bench = json.loads(capsys.readouterr().out)
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(bench))
    module = tvmdevice.compile(model_file, "c", registry=picky)
    costs = read_timings(str(path), module)
    kernels = [p for p in module.placement.ops if not p.is_view]
    assert [(c.op_index, c.op_type, c.device, c.unit) for c in costs] == [
        (p.op_index, p.op_type, "c", "us") for p in kernels]
    assert [c.value for c in costs] == [s["mean_us"] for s in bench["steps"]]
    other = tvmdevice.compile(model_file, "picky, c", registry=picky)  # the convolutions ran on c in the bench
    with pytest.raises(InvalidArgumentError, match="ran on 'c', but on 'picky'"):
        read_timings(str(path), other)
