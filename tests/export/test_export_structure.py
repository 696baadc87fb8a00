"""How an export is layered and what it ships: it only reads a compiled module (no call back into the
compiler), reads binding's device slots, and ships only the device C the model reaches on each CPU."""

from __future__ import annotations

import ast
import importlib.util
import json
from pathlib import Path

import pytest

import tvmdevice
import tvmdevice.export
from tvmdevice.aot.bind import device_storage
from tvmdevice.aot.builder import demo_model
from tvmdevice.errors import InvalidArgumentError
from tvmdevice.export import EXPORT_CPUS, export
from tvmdevice.export.select import CFile, reachable, scan, select_sources


def _imports(path: Path, package: str) -> list[tuple[str, list[str], int]]:
    """Every import of ``path`` that runs (not under ``if TYPE_CHECKING``): (module, names, line)."""
    tree = ast.parse(path.read_text())
    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
               and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(a.name, [], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) \
                if node.level else node.module or ""
            found.append((base, [a.name for a in node.names], node.lineno))
    return found


def test_export_imports_nothing_from_the_compiler():
    """Export reads a compiled module: no import of tvmdevice.aot.compiler (nor of tvmdevice.compile)
    runs in tvmdevice.export, so the compiler -> export -> compiler circle cannot come back."""
    folder = Path(tvmdevice.export.__file__).parent
    found = []
    for path in sorted(folder.glob("*.py")):
        for module, names, line in _imports(path, "tvmdevice.export"):
            if module == "tvmdevice.aot.compiler" or (module in ("tvmdevice", "tvmdevice.aot") and
                                                       {"compile", "compiler"} & set(names)):
                found.append(f"{path.name}:{line} imports {module} {names}")
    assert not found, found


def test_export_reads_a_module_compiled_for_the_cpu(tmp_path):
    host = tvmdevice.compile(demo_model(), "c", name="demo")
    with pytest.raises(InvalidArgumentError, match=r"leaves -mcpu empty on c.*mcpu='cortex-m55'"):
        export(host, tmp_path / "a")
    m4 = tvmdevice.compile(demo_model(), "c", name="demo", mcpu="cortex-m4")
    with pytest.raises(InvalidArgumentError, match="compiled for c -mcpu=cortex-m4, not for cortex-m55"):
        export(m4, tmp_path / "b", mcpu="cortex-m55")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    meta = json.loads((export(m4, tmp_path / "c") / "metadata.json").read_text())
    assert meta["mcpu"] == "cortex-m4" and "-mcpu=cortex-m4" in meta["target"]


def test_module_export_compiles_for_the_cpu_first(tmp_path):
    module = tvmdevice.compile(demo_model(), "c", name="demo")
    meta = json.loads((module.export(tmp_path / "d", mcpu="cortex-m4") / "metadata.json").read_text())
    assert meta["mcpu"] == "cortex-m4" and "-mcpu=cortex-m4" in meta["target"]
    assert "mcpu" not in str(module.target)  # the module itself is left as it was


def test_device_storage_is_blocks_then_preloaded_constants():
    if "woofles" not in tvmdevice.get_registry().device_names():
        pytest.skip("the woofles plugin (a separate memory) is not installed")
    module = tvmdevice.compile(demo_model(), "woofles, c", name="demo", mcpu="cortex-m55")
    storage = device_storage(module)["woofles"]
    assert storage.blocks == tuple(module.plan.pools["woofles"].blocks)
    assert storage.constants == tuple(t for t, m in module.schedule.constants if m == "woofles")
    assert storage.slots == len(storage.blocks) + len(storage.constants)
    if storage.constants:
        assert storage.constant_slot(storage.constants[0]) == len(storage.blocks)


# ------------------------------------------------------------------------------------ source selection
_C = """
#include "x.h"
static int helper(int v) { return used_by_helper(v); }
int32_t kernel_a(const void* p, void* const* b, void* h) { return helper(1) + shared_fn(); }
int32_t proto_only(int x);
const int8_t table[4] = { 1, 2, 3, 4 };
static const int8_t private_table[2] = { 0, 1 };
int8_t scratch[16];
typedef struct { int a; } thing_t;
struct forward;
void (*const hooks[1])(void) = { hook_fn };
__attribute__((noinline)) int32_t attributed(void) { return 0; }
"""


def test_scan_finds_definitions_and_uses():
    f = scan(_C)
    assert f.defines == {"kernel_a", "table", "scratch", "hooks", "attributed"}
    assert {"helper", "used_by_helper", "shared_fn", "hook_fn"} <= f.uses
    assert "proto_only" not in f.uses and "thing_t" not in f.defines


def test_reachable_follows_uses_across_files():
    files = {"a.c": CFile(frozenset({"kernel_a"}), frozenset({"shared_fn"})),
             "b.c": CFile(frozenset({"shared_fn"}), frozenset({"leaf"})),
             "c.c": CFile(frozenset({"leaf"}), frozenset()),
             "d.c": CFile(frozenset({"kernel_d"}), frozenset({"leaf"}))}
    chosen, undefined = reachable(files, {"kernel_a", "memcpy"})
    assert chosen == ["a.c", "b.c", "c.c"] and undefined == {"memcpy"}


def test_without_a_preprocessor_every_source_is_kept(tmp_path):
    (tmp_path / "a.c").write_text("int f(void) { return 0; }\n")
    (tmp_path / "b.c").write_text("int g(void) { return 0; }\n")
    chosen = select_sources(tmp_path, str(tmp_path / "no-such-cc"), [], ["a.c", "b.c"], {"f"}, {"f"})
    assert chosen.sources == ["a.c", "b.c"] and not chosen.complete
    chosen = select_sources(tmp_path, "cc", [], ["a.c", "b.c"], {"f"}, {"f"})
    assert chosen.sources == ["a.c"] and chosen.complete
    chosen = select_sources(tmp_path, "cc", [], ["a.c", "b.c"], {"f"}, {"f", "missing"})
    assert chosen.sources == ["a.c", "b.c"] and not chosen.complete  # a call defined nowhere: keep all


def _device_sources(meta: dict, device: str, cpu: str) -> list[str]:
    return [Path(s).name for s in meta["build"]["cpus"][cpu]["sources"] if s.startswith(f"devices/{device}/")]


def test_an_export_ships_only_the_kernels_the_model_uses(tmp_path):
    module = tvmdevice.compile(demo_model(), "c", name="demo", mcpu="cortex-m55")
    out = module.export(tmp_path / "demo")
    meta = json.loads((out / "metadata.json").read_text())
    shipped = {p.name for p in (out / "devices/c/src").iterdir()}
    assert {"conv.c", "pooling.c", "softmax.c"} <= shipped
    assert not {"lstm.c", "svdf.c", "gather.c", "resize.c"} & shipped  # no such operator in the model
    for cpu in EXPORT_CPUS:
        assert set(_device_sources(meta, "c", cpu)) <= shipped
        assert all((out / s).is_file() for s in meta["build"]["cpus"][cpu]["sources"])


def test_a_cortex_m_export_builds_no_x86_simd(tmp_path):
    if "cmsis-nn" not in tvmdevice.get_registry().device_names():
        pytest.skip("the cmsis-nn plugin is not installed")
    module = tvmdevice.compile(demo_model(), "cmsis-nn, c", name="demo", mcpu="cortex-m55")
    out = module.export(tmp_path / "demo")
    meta = json.loads((out / "metadata.json").read_text())
    for cpu in ("cortex-m55", "cortex-m4", "cortex-m3"):
        sources = _device_sources(meta, "cmsis_nn", cpu)
        assert "device.c" in sources and not [s for s in sources if "x86" in s], (cpu, sources)
    assert "lstm.c" not in {p.name for p in (out / "devices/cmsis_nn/src").iterdir()}
    constants = (out / "codegen/host/src/tvmgen_demo_constants.c").read_text()
    assert ".kind = TVMD_CMSIS_KIND_" in constants and not any(
        line.strip().startswith(".kind = ") and line.strip()[8].isdigit() for line in constants.splitlines())
