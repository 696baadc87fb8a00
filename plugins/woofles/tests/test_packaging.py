"""The distribution: entry point, generated header vs the Layout, C/Python constants, import hygiene."""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import tvmdevice
from tvmdevice.build import generate_headers
from tvmdevice.layout import ILP32, LP64, Layout

from tvmdevice_woofles import _woofles, params
from tvmdevice_woofles.device import (
    DEVICE_TYPE,
    LAYOUT,
    MAGIC,
    MAX_MAC_WIDTH,
    TRANSITIONS,
    DmaFlag,
    PowerState,
)

PACKAGE = Path(importlib.resources.files("tvmdevice_woofles"))


def test_entry_point_and_registry(registry):
    eps = {ep.name: ep for ep in importlib.metadata.entry_points(group="tvmdevice")}
    assert eps["woofles"].value == "tvmdevice_woofles.plugin"
    record = registry.plugin_for("woofles")
    assert record.status == "loaded"
    assert record.distribution == "tvmdevice-woofles"
    assert record.version == importlib.metadata.version("tvmdevice-woofles")
    assert registry.device_type("woofles") is DEVICE_TYPE


PARAMS_HEADER = "tvmd_woofles_params.h"  # the name csrc/woofles_kernels.h includes


def _write_generated_headers(directory: Path) -> None:
    """The headers the build generates (``tvmdevice.build``), from the installed declaration modules."""
    root = directory / "src"
    (root / "tvmdevice_woofles").mkdir(parents=True)
    for name in ("device.py", "params.py"):
        shutil.copy(PACKAGE / name, root / "tvmdevice_woofles" / name)
    generated = generate_headers("tvmdevice_woofles.device", params="PARAMS", root=root)
    for header in generated.glob("*.h"):
        shutil.copy(header, directory / header.name)
    assert (directory / PARAMS_HEADER).exists()


def _cc() -> str:
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("no C compiler")
    return cc


def _offset_program(layouts: list[Layout]) -> str:
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "tvm_device_woofles.h"',
             f'#include "{PARAMS_HEADER}"', "int main(void) {"]
    for layout in layouts:
        lines.append(f'  printf("{layout.c_type} sizeof %zu\\n", sizeof({layout.c_type}));')
        for f in layout.fields:
            lines.append(f'  printf("{layout.c_type} {f.name} %zu\\n", offsetof({layout.c_type}, {f.name}));')
    lines += ["  return 0;", "}"]
    return "\n".join(lines)


def test_generated_header_compiles_and_matches_layout(tmp_path):
    _write_generated_headers(tmp_path)
    layouts = LAYOUT.nested() + [LAYOUT, *params.LAYOUTS]
    (tmp_path / "main.c").write_text(_offset_program(layouts))
    exe = tmp_path / "offsets"
    subprocess.run([_cc(), "-std=c99", "-Wall", "-Werror", "-I", tvmdevice.get_include(), "-I", str(tmp_path),
                    str(tmp_path / "main.c"), "-o", str(exe)], check=True, capture_output=True)
    seen = {}
    for line in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.splitlines():
        ctype, member, value = line.split()
        seen[(ctype, member)] = int(value)
    for layout in layouts:
        assert seen[(layout.c_type, "sizeof")] == layout.size
        for fo in layout.offsets:
            assert seen[(layout.c_type, fo.name)] == fo.offset, (layout.c_type, fo.name)


def test_params_structs_match_ilp32_on_cortex_m(tmp_path):
    """The params structs as arm-none-eabi-gcc lays them out for Cortex-M are what ``ILP32`` predicts.

    (The device struct's ILP32 layout is checked by the core, for every installed device:
    ``tests/core/test_layout_data_models.py``.)
    """
    cc = shutil.which("arm-none-eabi-gcc")
    if cc is None:
        if os.environ.get("CI") == "true":
            pytest.fail("arm-none-eabi-gcc is not installed; CI must check the ILP32 layouts "
                        "(apt-get install gcc-arm-none-eabi)")
        pytest.skip("arm-none-eabi-gcc is not installed: apt-get install gcc-arm-none-eabi to check ILP32 layouts")
    _write_generated_headers(tmp_path)
    asserts = []
    for layout in (x.for_data_model(ILP32) for x in params.LAYOUTS):
        t = layout.c_type
        asserts.append(f'_Static_assert(sizeof({t}) == {layout.size}, "sizeof {t}");')
        asserts += [f'_Static_assert(offsetof({t}, {fo.name}) == {fo.offset}, "offsetof {t}.{fo.name}");'
                    for fo in layout.offsets]
    anchor = "int tvmd_woofles_anchor(void);\nint tvmd_woofles_anchor(void) { return 0; }\n"
    (tmp_path / "check.c").write_text(f'#include <stddef.h>\n#include "{PARAMS_HEADER}"\n' + "\n".join(asserts)
                                      + "\n" + anchor)
    done = subprocess.run([cc, "-mcpu=cortex-m55", "-mthumb", "-std=c11", "-Wall", "-Wextra", "-Werror",
                           "-I", str(tmp_path), "-c", str(tmp_path / "check.c"), "-o", str(tmp_path / "check.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # The pointer members make the structs differ between the models.
    conv = params.CONV_PARAMS
    assert conv.for_data_model(LP64).size == conv.for_data_model(ILP32).size + 8


def test_extension_was_built_against_this_layout():
    from tvmdevice_woofles.device import STREAM_LAYOUT

    assert _woofles.STRUCT_SIZE == LAYOUT.size
    assert _woofles.STREAM_STRUCT_SIZE == STREAM_LAYOUT.size


def test_c_constants_match_python():
    assert _woofles.MAGIC == MAGIC
    assert (_woofles.POWER_OFF, _woofles.POWER_SLEEP, _woofles.POWER_ACTIVE) == tuple(PowerState)
    assert (_woofles.DMA_SRC_HOST, _woofles.DMA_DST_HOST, _woofles.DMA_WAIT) == tuple(DmaFlag)
    assert _woofles.MAX_MAC_WIDTH == MAX_MAC_WIDTH
    assert len(TRANSITIONS) == LAYOUT.field("transitions").count[0]


def test_c_sources_are_strict_portable_c99(tmp_path):
    """Every C file compiles alone as pedantic C99 with warnings as errors (a firmware build)."""
    _write_generated_headers(tmp_path)
    csrc = PACKAGE / "csrc"
    sources = sorted(csrc.glob("*.c"))
    assert {p.name for p in sources} >= {"woofles_device.c", "woofles_alloc.c", "woofles_dma.c", "woofles_conv.c",
                                          "woofles_fc.c", "woofles_pool.c", "woofles_add.c"}
    for src in sources:
        subprocess.run([_cc(), "-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror", "-O2", "-c",
                        "-I", tvmdevice.get_include(), "-I", str(tmp_path), "-I", str(csrc), str(src),
                        "-o", str(tmp_path / (src.stem + ".o"))], check=True, capture_output=True, text=True)


def test_kernels_do_not_allocate_and_use_core_quant():
    for src in (PACKAGE / "csrc").glob("*.c"):
        text = src.read_text()
        assert not re.search(r"\b(malloc|calloc|realloc|free)\s*\(", text), src.name
    tile = (PACKAGE / "csrc" / "woofles_tile.h").read_text()
    assert '#include "tvmdevice/quant.h"' in tile
    assert "tvmd_sat_rounding_doubling_high_mul" not in tile  # used through quant.h, not re-implemented


def test_no_ctypes_anywhere():
    for path in list(PACKAGE.rglob("*.py")) + list(PACKAGE.rglob("*.pyx")):
        assert "ctypes" not in path.read_text(), path


def test_plugin_import_is_light():
    code = ("import sys, tvmdevice_woofles.plugin; "
            "print(sorted(m for m in sys.modules if m.startswith('tvmdevice_woofles._')))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"
