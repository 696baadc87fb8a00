"""Layouts become C structs: the emitted headers compile and match sizeof/offsetof."""

from __future__ import annotations

import shutil
import subprocess

import pytest

import tvmdevice
from tvmdevice import DeviceType, Field, Layout
from tvmdevice.headers import device_header, devices_header
from tvmdevice.names import c_name, camel_name, hook_symbol, struct_type

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")

INNER = Layout("tvmd_fixture_inner_t", (Field("a", "uint8_t"), Field("b", "int64_t"), Field("c", "uint16_t", (3,))))
TRICKY = DeviceType("cmsis-nn-x", Layout("tvm_device_cmsis_nn_x_t", (
    Field("flag", "uint8_t", doc="one byte"),
    Field("counter", "uint64_t"),
    Field("half", "int16_t"),
    Field("matrix", "int32_t", (2, 3)),
    Field("ratio", "double"),
    Field("name", "const char*"),
    Field("buf", "uint8_t*"),
    Field("inner", INNER),
    Field("inners", INNER, (2,)),
    Field("tail", "int8_t"),
)))


def _measure(tmp_path, header: str, layout: Layout, extra_headers: dict[str, str] | None = None) -> dict[str, int]:
    for name, text in (extra_headers or {}).items():
        (tmp_path / name).write_text(text)
    (tmp_path / "dev.h").write_text(header)
    lines = [f'printf("sizeof %zu\\n", sizeof({layout.c_type}));',
             f'printf("alignof %zu\\n", _Alignof({layout.c_type}));']
    lines += [f'printf("{f.name} %zu\\n", offsetof({layout.c_type}, {f.name}));' for f in layout.fields]
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include <stddef.h>\n#include "dev.h"\nint main(void) {\n  '
        + "\n  ".join(lines) + "\n  return 0;\n}\n")
    exe = tmp_path / "measure"
    subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-I", tvmdevice.get_include(), "-I", str(tmp_path),
                    str(tmp_path / "main.c"), "-o", str(exe)], check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


@pytest.mark.parametrize("dtype_name", ["c", "tricky"])
def test_header_compiles_and_matches_layout(tmp_path, registry, dtype_name):
    dtype = registry.device_type("c") if dtype_name == "c" else TRICKY
    measured = _measure(tmp_path, device_header(dtype), dtype.layout)
    assert measured["sizeof"] == dtype.layout.size
    assert measured["alignof"] == dtype.layout.alignment
    for fo in dtype.layout.offsets:
        assert measured[fo.name] == fo.offset, fo.name


def test_header_declares_the_six_lifecycle_prototypes():
    text = device_header(TRICKY)
    for hook in ("Init", "Open", "Activate", "Deactivate", "Close", "Destroy"):
        assert f"int32_t TVMDeviceCmsisNnX{hook}(tvm_device_cmsis_nn_x_t* device);" in text


def test_tvm_naming_convention():
    assert c_name("cmsis-nn") == "cmsis_nn"
    assert camel_name("cmsis-nn") == "CmsisNn"
    assert struct_type("cmsis-nn") == "tvm_device_cmsis_nn_t"
    assert hook_symbol("cmsis-nn", "Open") == "TVMDeviceCmsisNnOpen"
    with pytest.raises(ValueError):
        c_name("Bad Name")


def test_devices_struct_for_a_target_compiles(tmp_path):
    toy = DeviceType("woofles", Layout("tvm_device_woofles_t", (Field("sram", "uint8_t*"),)))
    headers = {"tvm_device_woofles.h": device_header(toy), "tvm_device_cmsis_nn_x.h": device_header(TRICKY)}
    text = devices_header("kws-dscnn", [toy, TRICKY])
    assert "struct tvmgen_kws_dscnn_devices {" in text
    assert "tvm_device_woofles_t* woofles;" in text and "tvm_device_cmsis_nn_x_t* cmsis_nn_x;" in text
    for name, body in headers.items():
        (tmp_path / name).write_text(body)
    (tmp_path / "main.c").write_text(text + "\nint main(void) { struct tvmgen_kws_dscnn_devices d = {0}; "
                                            "return d.woofles != 0; }\n")
    subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-I", tvmdevice.get_include(), "-I", str(tmp_path),
                    str(tmp_path / "main.c"), "-o", str(tmp_path / "m")], check=True, capture_output=True)


@pytest.mark.parametrize("bad", [
    lambda: Field("1x", "int32_t"),
    lambda: Field("x", "long double"),
    lambda: Field("x", "int32_t", (0,)),
    lambda: Layout("t", (Field("x", "int8_t"), Field("x", "int8_t"))),
    lambda: DeviceType("woofles", Layout("tvm_device_other_t", ())),
])
def test_invalid_layouts_are_refused(bad):
    with pytest.raises((ValueError, TypeError)):
        bad()
