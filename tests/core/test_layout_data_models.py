"""Layouts for each data model agree with real compilers: the host ``cc`` (LP64) and
``arm-none-eabi-gcc`` for Cortex-M (ILP32), checked by ``_Static_assert`` at compile time."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess

import numpy as np
import pytest

import tvmdevice
from tvmdevice.headers import structs_header
from tvmdevice.layout import HOST, ILP32, LP64, DataModel, Field, Layout, struct_view
from tvmdevice.params import ParamsStruct

PRIMITIVE_TYPES = ("int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t",
                   "float", "double", "size_t", "uintptr_t")

INNER = Layout("tvmd_dm_inner_t", (Field("tag", "uint8_t"), Field("wide", "int64_t"), Field("ptr", "void*")),
               doc="a struct with 8-byte alignment on both models")
SMALL = Layout("tvmd_dm_small_t", (Field("a", "uint16_t"), Field("b", "uint8_t", (3,))))

LAYOUTS = [
    # one struct per primitive, each after a char so its alignment shows
    *(Layout(f"tvmd_dm_{t}_t", (Field("pad", "uint8_t"), Field("value", t), Field("tail", "uint8_t")))
      for t in PRIMITIVE_TYPES),
    Layout("tvmd_dm_pointers_t", (
        Field("pad", "uint8_t"), Field("bytes", "uint8_t*"), Field("words", "const int16_t*"),
        Field("any", "void*"), Field("cany", "const void*"), Field("name", "const char*"),
        Field("sizes", "size_t*"), Field("table", "uint8_t**"), Field("tail", "uint16_t"))),
    Layout("tvmd_dm_int64_after_int32_t", (Field("n", "int32_t"), Field("big", "int64_t"), Field("m", "int32_t"))),
    Layout("tvmd_dm_double_after_int32_t", (Field("n", "int32_t"), Field("x", "double"))),
    # woofles' case: a pointer after an odd number of int32s (48 on LP64, 44 on ILP32 there)
    Layout("tvmd_dm_pointer_after_int32_t", (
        Field("words", "uint32_t", (3,)), Field("p", "uint8_t*"), Field("after", "uint32_t"), Field("sz", "size_t"))),
    Layout("tvmd_dm_nested_t", (
        Field("c", "uint8_t"), Field("inner", INNER), Field("small", SMALL), Field("smalls", SMALL, (3,)),
        Field("inners", INNER, (2,)), Field("tail", "uint8_t"))),
    Layout("tvmd_dm_arrays_t", (
        Field("c", "int8_t", (3,)), Field("m", "int32_t", (2, 3)), Field("p", "int16_t*"),
        Field("d", "double", (2,)), Field("s", "size_t", (5,)))),
]


def _installed_device_layouts() -> list[Layout]:
    return [t.layout for t in tvmdevice.get_registry().device_types()]


ALL_LAYOUTS = LAYOUTS + _installed_device_layouts()


def _static_asserts(layouts: list[Layout], model: DataModel) -> str:
    """C that fails to compile unless the compiler agrees with every size, alignment and offset."""
    lines = []
    seen: list[Layout] = []
    for layout in layouts:
        for inner in layout.for_data_model(model).nested() + [layout.for_data_model(model)]:
            if inner in seen:
                continue
            seen.append(inner)
            t = inner.c_type
            lines.append(f'_Static_assert(sizeof({t}) == {inner.size}, "sizeof {t}");')
            lines.append(f'_Static_assert(_Alignof({t}) == {inner.alignment}, "_Alignof {t}");')
            for fo in inner.offsets:
                lines.append(f'_Static_assert(offsetof({t}, {fo.name}) == {fo.offset}, "offsetof {t}.{fo.name}");')
                lines.append(f'_Static_assert(sizeof((({t}*)0)->{fo.name}) == {fo.size}, "sizeof {t}.{fo.name}");')
    return "\n".join(lines)


def _compile(cc: list[str], tmp_path, layouts: list[Layout], model: DataModel) -> None:
    (tmp_path / "structs.h").write_text(structs_header("TVMD_DM_STRUCTS_H_", layouts, doc="layout test structs"))
    src = tmp_path / "check.c"
    src.write_text('#include <stddef.h>\n#include "structs.h"\n' + _static_asserts(layouts, model) + "\n"
                   "int tvmd_dm_anchor(void);\nint tvmd_dm_anchor(void) { return 0; }\n")
    done = subprocess.run([*cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(tmp_path), "-c", str(src),
                           "-o", str(tmp_path / "check.o")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _arm_gcc() -> str:
    cc = shutil.which("arm-none-eabi-gcc")
    if cc is None:
        if os.environ.get("CI") == "true":
            pytest.fail("arm-none-eabi-gcc is not installed; CI must check the ILP32 layouts "
                        "(apt-get install gcc-arm-none-eabi)")
        pytest.skip("arm-none-eabi-gcc is not installed: apt-get install gcc-arm-none-eabi to check ILP32 layouts")
    return cc


# ---------------------------------------------------------------- against compilers


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler `cc` on PATH")
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64", "aarch64", "arm64"),
                    reason="the host is not an LP64 machine")
def test_host_compiler_agrees_with_lp64(tmp_path):
    assert HOST == LP64
    _compile(["cc"], tmp_path, ALL_LAYOUTS, LP64)


def test_cortex_m_compiler_agrees_with_ilp32(tmp_path):
    cc = _arm_gcc()
    _compile([cc, "-mcpu=cortex-m55", "-mthumb"], tmp_path, ALL_LAYOUTS, ILP32)


def test_static_asserts_catch_a_wrong_layout(tmp_path):
    """The check is real: the same program with an LP64 expectation fails on Cortex-M."""
    cc = _arm_gcc()
    layout = LAYOUTS[PRIMITIVE_TYPES.index("size_t")]
    with pytest.raises(AssertionError, match="sizeof tvmd_dm_size_t_t"):
        _compile([cc, "-mcpu=cortex-m55", "-mthumb"], tmp_path, [layout], LP64)


def test_params_initializer_compiles_for_cortex_m(tmp_path):
    """A params struct printed as C (from the host) compiles warning-free for the target."""
    cc = _arm_gcc()
    layout = Layout("tvmd_dm_params_t", (
        Field("n", "int32_t"), Field("w", "const int16_t*"), Field("sz", "size_t"), Field("big", "int64_t"),
        Field("lo", "int32_t"), Field("inner", SMALL), Field("x", "float"), Field("none", "const int32_t*")))
    p = ParamsStruct(layout, n=3, w=np.arange(3, dtype=np.int16), sz=2**32 - 1, big=-(2**63), lo=-(2**31),
                     inner={"a": 65535, "b": [1, 2, 3]}, x=-0.25, none=None)
    (tmp_path / "structs.h").write_text(structs_header("TVMD_DM_PARAMS_H_", [layout]))
    (tmp_path / "p.c").write_text('#include "structs.h"\nstatic const int16_t w_data[3] = {0, 1, 2};\n'
                                  + p.c_initializer("tvmd_dm_params", {"w": "w_data"})
                                  + "const void* tvmd_dm_use(void);\n"
                                  "const void* tvmd_dm_use(void) { return &tvmd_dm_params; }\n")
    done = subprocess.run([cc, "-mcpu=cortex-m55", "-mthumb", "-std=c99", "-Wall", "-Wextra", "-Werror",
                           "-I", str(tmp_path), "-c", str(tmp_path / "p.c"), "-o", str(tmp_path / "p.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- the models themselves


def test_data_models_state_the_abis():
    assert LP64.size_align("void*") == (8, 8) and LP64.size_align("size_t") == (8, 8)
    assert ILP32.size_align("const int16_t*") == (4, 4) and ILP32.size_align("uintptr_t") == (4, 4)
    # AAPCS aligns 64-bit scalars to 8 even with 4-byte pointers
    assert ILP32.size_align("int64_t") == (8, 8) and ILP32.size_align("double") == (8, 8)
    for model in (LP64, ILP32):
        assert model.size_align("int16_t") == (2, 2) and model.size_align("float") == (4, 4)


def test_pointer_after_int32_differs_between_models():
    layout = Layout("t", (Field("words", "uint32_t", (3,)), Field("p", "uint8_t*"), Field("after", "uint32_t")))
    assert layout.data_model == HOST
    lp64, ilp32 = layout.for_data_model(LP64), layout.for_data_model(ILP32)
    assert (lp64.offset_of("p"), lp64.offset_of("after"), lp64.size, lp64.alignment) == (16, 24, 32, 8)
    assert (ilp32.offset_of("p"), ilp32.offset_of("after"), ilp32.size, ilp32.alignment) == (12, 16, 20, 4)


def test_int64_after_int32_is_padded_on_both_models():
    layout = Layout("t", (Field("n", "int32_t"), Field("big", "int64_t")))
    for model in (LP64, ILP32):
        assert layout.for_data_model(model).offset_of("big") == 8
        assert layout.for_data_model(model).size == 16


def test_woofles_device_struct_on_both_models():
    woofles = pytest.importorskip("tvmdevice_woofles.device")
    assert woofles.LAYOUT.for_data_model(LP64).offset_of("num_blocks") == 48
    assert woofles.LAYOUT.for_data_model(ILP32).offset_of("num_blocks") == 44


def test_nested_layouts_follow_the_outer_model():
    outer = Layout("o", (Field("c", "uint8_t"), Field("inner", INNER)), data_model=ILP32)
    inner = outer.field("inner").ctype
    assert isinstance(inner, Layout) and inner.data_model == ILP32
    assert (inner.size, inner.offset_of("ptr")) == (24, 16)
    assert (outer.offset_of("inner"), outer.size) == (8, 32)
    assert outer.nested() == [INNER.for_data_model(ILP32)]
    assert outer.for_data_model(LP64).field("inner").ctype == INNER.for_data_model(LP64)


def test_for_data_model_is_the_same_declaration():
    layout = LAYOUTS[-2]
    ilp32 = layout.for_data_model(ILP32)
    assert ilp32.for_data_model(ILP32) is ilp32
    assert layout.for_data_model(ILP32) is ilp32
    assert ilp32.for_data_model(HOST) == layout
    assert [f.name for f in ilp32.fields] == [f.name for f in layout.fields]
    assert ilp32 != layout and ilp32.to_json()["data_model"] == "ILP32"


def test_struct_view_reads_a_buffer_of_the_layouts_model():
    layout = Layout("t", (Field("n", "int32_t"), Field("p", "uint8_t*"), Field("s", "size_t", (2,))))
    ilp32 = layout.for_data_model(ILP32)
    buf = np.arange(ilp32.size, dtype=np.uint8)
    views = struct_view(ilp32, buf)
    assert views["p"].dtype == np.uint32 and views["s"].shape == (2,)
    assert int(views["p"][0]) == int.from_bytes(bytes(range(4, 8)), "little")
    assert struct_view(layout, np.zeros(layout.size, np.uint8))["p"].dtype == np.dtype(f"u{HOST.pointer_size}")


@pytest.mark.parametrize("ctype", ["const int16_t*", "const void*", "uint8_t**", "const size_t*"])
def test_const_and_multi_level_pointers_are_members(ctype):
    assert Field("p", ctype).is_pointer


@pytest.mark.parametrize("ctype", ["const long*", "int*", "const", "struct x*"])
def test_unknown_pointee_is_refused(ctype):
    with pytest.raises(ValueError, match="unknown C type"):
        Field("p", ctype)
