"""``tvmdevice export`` without building: the Model Library Format tree, its metadata and interface,
atomic writes, and the errors of a model or device that cannot be exported."""

from __future__ import annotations

import json

import numpy as np
import pytest
from plugin_fixtures import load_fixture_module

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder, demo_model
from tvmdevice.cli.main import main
from tvmdevice.errors import InvalidArgumentError, NotSupportedError
from tvmdevice.export import load_metadata


def _module(target: str = "c"):
    return tvmdevice.compile(demo_model(), target, name="demo")


def test_export_writes_the_model_library_format_tree(tmp_path):
    module = _module()
    out = module.export(tmp_path / "demo")
    for rel in ("metadata.json", "Makefile", "codegen/host/include/tvmgen_demo.h",
                "codegen/host/include/tvmgen_demo_devices.h", "codegen/host/src/tvmgen_demo.c",
                "codegen/host/src/tvmgen_demo_constants.c", "runtime/include/tvmdevice/c_device_api.h",
                "devices/c/src/conv.c", "devices/c/include/tvmd_c_kernels.h", "platform/cortex-m55.ld",
                "runner/tvmgen_runner.c", "src/demo.tflite"):
        assert (out / rel).is_file(), rel
    assert (out / "src/demo.tflite").read_bytes() == demo_model()


def test_metadata_gives_sizes_io_target_placement_and_calls(tmp_path):
    module = _module()
    meta = load_metadata(module.export(tmp_path / "demo"))
    graph = module.graph
    assert meta["model_name"] == "demo" and meta["prefix"] == "tvmgen_demo"
    assert meta["target"].startswith("c")
    host = module.plan.pools["host"]
    assert meta["memory"]["pools"]["host"]["bytes"] == host.size
    assert meta["memory"]["constants"] == sum(t.nbytes for t in graph.tensors if t.is_constant
                                              and any(t.index in op.inputs for op in graph.operators
                                                      if op.type != "RESHAPE"))
    [inp] = meta["inputs"]
    t = graph.tensors[graph.inputs[0]]
    assert inp["dtype"] == "int8" and inp["shape"] == list(t.shape) and inp["size"] == t.nbytes
    assert inp["scale"] == pytest.approx(float(t.quant.scale[0])) and inp["zero_point"] == int(t.quant.zero_point[0])
    kernels = [c for c in meta["calls"] if "operator" in c]
    assert [c["operator"] for c in kernels] == [p.op_index for p in module.placement.ops if not p.is_view]
    assert all(c["device"] == "c" for c in kernels)
    assert meta["memory"]["buffers"] == [a.to_json() for a in host.allocations()]
    assert {b["tensor"] for b in meta["memory"]["buffers"]} >= set(graph.inputs)
    assert set(meta["build"]["cpus"]) == {"host", "cortex-m55", "cortex-m4", "cortex-m3"}
    for b in meta["build"]["cpus"].values():
        assert all((tmp_path / "demo" / s).is_file() for s in b["sources"])
        assert "-Werror" in b["cflags"] and "-std=c99" in b["cflags"]


def test_interface_header_follows_tvm(tmp_path):
    out = _module().export(tmp_path / "demo")
    header = (out / "codegen/host/include/tvmgen_demo.h").read_text()
    meta = load_metadata(out)
    for io in (*meta["inputs"], *meta["outputs"]):
        assert f"#define TVMGEN_DEMO_{io['name'].upper()}_SIZE {io['size']}" in header
    for text in ("struct tvmgen_demo_inputs {", "struct tvmgen_demo_outputs {",
                 "int32_t tvmgen_demo_open(struct tvmgen_demo_devices* devices);",
                 "int32_t tvmgen_demo_run(struct tvmgen_demo_inputs* inputs, struct tvmgen_demo_outputs* outputs, "
                 "struct tvmgen_demo_devices* devices);",
                 "int32_t tvmgen_demo_close(struct tvmgen_demo_devices* devices);",
                 "const char* tvmgen_demo_last_error(void);"):
        assert text in header
    assert "workspace_pools" not in header
    source = (out / "codegen/host/src/tvmgen_demo.c").read_text()
    assert '.bss.noinit.tvmgen_demo_host_pool' in source
    constants = (out / "codegen/host/src/tvmgen_demo_constants.c").read_text()
    assert "const int8_t tvmgen_demo_constant_" in constants and "static" not in constants


def test_external_pools_are_the_callers(tmp_path):
    out = _module().export(tmp_path / "demo", external_pools=True)
    header = (out / "codegen/host/include/tvmgen_demo.h").read_text()
    assert "struct tvmgen_demo_workspace_pools {\n  void* host_pool;\n};" in header
    assert "struct tvmgen_demo_workspace_pools* workspace_pools, struct tvmgen_demo_devices* devices" in header
    assert "tvmgen_demo_host_pool[" not in (out / "codegen/host/src/tvmgen_demo.c").read_text()
    assert load_metadata(out)["memory"]["pools"]["host"]["external"] is True


def test_an_unrelated_directory_is_never_overwritten(tmp_path):
    dest = tmp_path / "mine"
    dest.mkdir()
    (dest / "notes.txt").write_text("keep me")
    with pytest.raises(InvalidArgumentError, match="not an earlier export"):
        _module().export(dest)
    assert [p.name for p in dest.iterdir()] == ["notes.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


def test_an_earlier_export_is_replaced_whole(tmp_path):
    dest = tmp_path / "demo"
    _module().export(dest)
    (dest / "stale.c").write_text("/* from before */")
    _module().export(dest, name="again")
    assert not (dest / "stale.c").exists()
    assert load_metadata(dest)["model_name"] == "again"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"]


def test_a_failed_export_leaves_nothing_behind(tmp_path, monkeypatch):
    from tvmdevice.export import writer

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(writer, "makefile", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        _module().export(tmp_path / "demo")
    assert list(tmp_path.iterdir()) == []
    # and an earlier export survives a failed one untouched
    monkeypatch.undo()
    _module().export(tmp_path / "demo")
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    monkeypatch.setattr(writer, "makefile", broken)
    with pytest.raises(RuntimeError):
        _module().export(tmp_path / "demo", name="other")
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == before
    assert load_metadata(tmp_path / "demo")["model_name"] == "demo"


def test_a_device_without_c_is_named_with_its_operators(tmp_path, registry):
    registry.register(load_fixture_module("fixture_accel"), "accel")
    module = tvmdevice.compile(demo_model(), "accel, c", registry=registry, name="demo")
    accel = "accel"
    ops = [p for p in module.placement.ops if p.device == accel]
    assert ops, "the fixture accelerator must take an operator for this test"
    with pytest.raises(NotSupportedError) as err:
        module.export(tmp_path / "demo")
    message = str(err.value)
    assert f"device {accel!r} cannot be exported" in message
    assert f"#{ops[0].op_index} {ops[0].op_type}" in message
    assert not (tmp_path / "demo").exists()


def test_export_cli_writes_and_reports(tmp_path, capsys):
    model = tmp_path / "m.tflite"
    model.write_bytes(demo_model())
    assert main(["export", str(model), "-t", "c", "-o", str(tmp_path / "out"), "--name", "kws"]) == 0
    out = capsys.readouterr().out
    assert "exported kws" in out and "tvmdevice run" in out
    assert (tmp_path / "out/codegen/host/include/tvmgen_kws.h").is_file()
    assert main(["export", str(model), "-t", "c", "-o", str(tmp_path / "out2"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["name"] == "m" and summary["memory"]["pools"]["host"]["bytes"] > 0


@pytest.mark.parametrize("argv, message", [
    (["export", "nosuch.tflite", "-o", "x"], "nosuch.tflite"),
    (["run", "--cpu", "cortex-m55"], "--cpu runs an export"),
])
def test_export_cli_errors_are_one_line(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and err[0].startswith("tvmdevice: error:")


def test_run_of_a_directory_that_is_not_an_export(tmp_path, capsys):
    assert main(["run", str(tmp_path), "--cpu", "host"]) == 1
    err = capsys.readouterr().err
    assert "is not an export" in err and "tvmdevice export" in err


def test_unknown_cpu_lists_the_choices(tmp_path, capsys):
    out = _module().export(tmp_path / "demo")
    assert main(["run", str(out), "--cpu", "cortex-m7"]) == 1
    assert "host, cortex-m55, cortex-m4, cortex-m3" in capsys.readouterr().err


def test_params_arrays_are_emitted_once_per_pointer(tmp_path):
    b = ModelBuilder(name="fc", seed=3)
    x = b.input((1, 8))
    b.output(b.fully_connected(x, 4))
    module = tvmdevice.compile(b.build(), "c", name="fc")
    out = module.export(tmp_path / "fc")
    constants = (out / "codegen/host/src/tvmgen_fc_constants.c").read_text()
    assert constants.count("tvmgen_fc_op0_multiplier[") == 1 and ".multiplier = tvmgen_fc_op0_multiplier" in constants
    # per-tensor weights: one multiplier, not one per output channel
    assert "tvmgen_fc_op0_multiplier[1]" in constants
    assert np.isfinite(load_metadata(out)["memory"]["params"])
