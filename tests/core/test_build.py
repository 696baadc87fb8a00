"""tvmdevice.build: what a plugin's setup.py gets from one call."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import tvmdevice
from tvmdevice import build

DEVICE_PY = '''
from tvmdevice import DeviceType, Field, Layout
from .limits import MAX  # relative imports inside the package work

DEVICE_TYPE = DeviceType("gizmo-x", Layout("tvm_device_gizmo_x_t", (Field("active", "uint32_t"),)))
PARAMS = (Layout("tvmd_gizmo_scale_t", (Field("factor", "int32_t"), Field("dims", "int32_t", (MAX,)))),)
'''


@pytest.fixture
def plugin_tree(tmp_path: Path) -> Path:
    pkg = tmp_path / "tvmdevice_gizmo"
    pkg.mkdir()
    # The package's __init__ needs the extension being built: loading the declarations must not run it.
    (pkg / "__init__.py").write_text("from ._ext import SOMETHING  # built by setup.py\n")
    (pkg / "limits.py").write_text("MAX = 4\n")
    (pkg / "device.py").write_text(DEVICE_PY)
    (pkg / "_ext.pyx").write_text("X = 1\n")
    (tmp_path / "csrc").mkdir()
    (tmp_path / "csrc" / "a.c").write_text("int gizmo_a;\n")
    (tmp_path / "csrc" / "b.c").write_text("int gizmo_b;\n")
    return tmp_path


def test_declarations_load_without_the_package_and_leave_no_trace(plugin_tree):
    before = set(sys.modules)
    module = build.load_declarations("tvmdevice_gizmo.device", plugin_tree)
    assert module.DEVICE_TYPE.name == "gizmo-x"
    assert not {m for m in set(sys.modules) - before if m.startswith("tvmdevice_gizmo")}


def test_headers_are_generated_from_the_declarations(plugin_tree):
    out = build.generate_headers("tvmdevice_gizmo.device", params="PARAMS", root=plugin_tree)
    assert out == build.generated_dir(plugin_tree) and not out.is_relative_to(plugin_tree)
    device_h = (out / "tvm_device_gizmo_x.h").read_text()
    assert "} tvm_device_gizmo_x_t;" in device_h and "int32_t TVMDeviceGizmoXInit(tvm_device_gizmo_x_t* device);" \
        in device_h
    params_h = (out / "tvmd_gizmo_x_params.h").read_text()
    assert "int32_t dims[4];" in params_h and "} tvmd_gizmo_scale_t;" in params_h
    stamp = (out / "tvm_device_gizmo_x.h").stat().st_mtime_ns
    build.generate_headers("tvmdevice_gizmo.device", params="PARAMS", root=plugin_tree)
    assert (out / "tvm_device_gizmo_x.h").stat().st_mtime_ns == stamp  # unchanged: not rewritten


def test_a_params_attribute_that_is_not_layouts_is_an_error(plugin_tree):
    with pytest.raises(ValueError, match="DEVICE_TYPE must be a tvmdevice.Layout or a sequence"):
        build.generate_headers("tvmdevice_gizmo.device", params="DEVICE_TYPE", root=plugin_tree)


def test_declarations_without_a_device_type_are_an_error(plugin_tree):
    with pytest.raises(ValueError, match="declares no tvmdevice.DeviceType"):
        build.generate_headers("tvmdevice_gizmo.limits", root=plugin_tree)


def test_cython_finds_the_core_pxd_files_for_this_install():
    (path,) = build.cython_include_path()
    assert (Path(path) / "tvmdevice" / "kernel_abi.pxd").is_file()
    assert Path(path) == Path(tvmdevice.__file__).resolve().parent.parent


def test_extensions_carry_includes_flags_and_expanded_sources(plugin_tree, monkeypatch):
    pytest.importorskip("Cython")
    monkeypatch.chdir(plugin_tree)
    (ext,) = build.extensions({"tvmdevice_gizmo._ext": ["tvmdevice_gizmo/_ext.pyx", "csrc/*.c"]},
                              declarations="tvmdevice_gizmo.device", params="PARAMS")
    assert ext.name == "tvmdevice_gizmo._ext"
    assert ext.sources[1:] == ["csrc/a.c", "csrc/b.c"]
    assert Path(ext.sources[0]).name == "_ext.c" and Path(ext.sources[0]).is_relative_to(build.build_dir(plugin_tree))
    assert ext.include_dirs[:3] == [tvmdevice.get_include(), str(build.generated_dir(plugin_tree)),
                                    str(plugin_tree / "csrc")]
    assert sorted(p.name for p in plugin_tree.rglob("*") if p.is_file() and "__pycache__" not in p.parts) == sorted(
        ["__init__.py", "device.py", "limits.py", "_ext.pyx", "a.c", "b.c"]), "nothing written into the source tree"
    if sys.platform != "win32":
        assert {"-std=c99", "-Wall", "-Wextra"} <= set(ext.extra_compile_args)


def test_a_source_pattern_matching_nothing_is_an_error(plugin_tree, monkeypatch):
    pytest.importorskip("Cython")
    monkeypatch.chdir(plugin_tree)
    with pytest.raises(FileNotFoundError, match="src/\\*.c"):
        build.extensions({"tvmdevice_gizmo._ext": ["tvmdevice_gizmo/_ext.pyx", "src/*.c"]},
                         declarations="tvmdevice_gizmo.device")
