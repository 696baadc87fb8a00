"""The public plugin module: what it offers, and that plugins and examples use nothing private."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import tvmdevice.plugin

ROOT = Path(__file__).resolve().parents[2]
#: Where third-party-style plugin code lives: the project's plugins (packages and tests) and the examples.
PLUGIN_TREES = ("plugins", "examples")
#: A module path with a private segment: tvmdevice._abi, tvmdevice.aot._runloop, tvmdevice.aot.builder._common ...
PRIVATE = re.compile(r"^tvmdevice(\.\w+)*\._\w*")
#: Python and Cython imports, for the .pyx files ast cannot read.
CYTHON_IMPORT = re.compile(r"^\s*(?:from\s+(\S+)\s+c?import|c?import\s+(\S+))", re.M)


def private_imports(path: Path, root: Path = ROOT) -> list[str]:
    """``"file:line module"`` for each import of a private tvmdevice module in ``path``."""
    text = path.read_text(encoding="utf-8")
    found: list[tuple[int, str]] = []
    if path.suffix == ".py":
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found += [(node.lineno, node.module)]
                found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
            elif isinstance(node, ast.Import):
                found += [(node.lineno, a.name) for a in node.names]
    else:
        for m in CYTHON_IMPORT.finditer(text):
            found.append((text.count("\n", 0, m.start()) + 1, m.group(1) or m.group(2)))
    # importlib.import_module("tvmdevice._x") and the like
    found += [(text.count("\n", 0, m.start()) + 1, m.group(1))
              for m in re.finditer(r"""import_module\(\s*["'](tvmdevice[\w.]*)["']""", text)]
    rel = path.relative_to(root)
    return sorted({f"{rel}:{line} {module}" for line, module in found if PRIVATE.match(module)})


def plugin_sources() -> list[Path]:
    return sorted(p for tree in PLUGIN_TREES for pattern in ("*.py", "*.pyx", "*.pxd")
                  for p in (ROOT / tree).rglob(pattern) if "build" not in p.relative_to(ROOT).parts)


def test_no_plugin_or_example_imports_a_private_core_module():
    sources = plugin_sources()
    assert len(sources) > 20, f"found only {len(sources)} sources under {PLUGIN_TREES}: is ROOT {ROOT} right?"
    offenders = [hit for path in sources for hit in private_imports(path)]
    assert not offenders, "import these from tvmdevice.plugin (or another public module):\n" + "\n".join(offenders)


@pytest.mark.parametrize("line", [
    "from tvmdevice._abi import invoke_kernel",
    "from tvmdevice.aot._runloop import RunLoop",
    "import tvmdevice._lifecycle",
    "from tvmdevice.aot.builder._common import TT",
    "from tvmdevice import _abi",
    "x = importlib.import_module('tvmdevice._lifecycle')",
])
def test_the_scan_finds_each_form_of_private_import(tmp_path, line):
    path = tmp_path / "plugin.py"
    path.write_text(f"{line}\n", encoding="utf-8")
    assert private_imports(path, tmp_path), line


def test_the_scan_reads_cython_imports(tmp_path):
    path = tmp_path / "_ext.pyx"
    path.write_text("from tvmdevice.capsules cimport kernel_capsule\nfrom tvmdevice._abi import kernel_info\n",
                    encoding="utf-8")
    assert private_imports(path, tmp_path) == ["_ext.pyx:2 tvmdevice._abi"]


def test_the_scan_lets_public_modules_through(tmp_path):
    path = tmp_path / "plugin.py"
    path.write_text("from tvmdevice.plugin import CLifecycle\nfrom tvmdevice import hookimpl\n"
                    "import tvmdevice.aot.builder\nfrom tvmdevice_cmsis import _kernels\n", encoding="utf-8")
    assert private_imports(path, tmp_path) == []


def test_every_public_name_exists_and_is_documented():
    names = tvmdevice.plugin.__all__
    assert len(names) == len(set(names))
    for name in names:
        obj = getattr(tvmdevice.plugin, name)
        if callable(obj) and getattr(obj, "__module__", "").startswith("tvmdevice"):
            assert (obj.__doc__ or "").strip(), f"tvmdevice.plugin.{name} has no docstring"
        assert f"`{name}`" in tvmdevice.plugin.__doc__ or f":data:`{name}`" in tvmdevice.plugin.__doc__, \
            f"the module docstring does not list {name}"


def test_it_has_what_the_plugins_import_from_the_core():
    # The kernel ABI, the C lifecycle, the run loop and the build helpers: what cmsis-nn, woofles and the
    # example took from private modules or several others before.
    for name in ("invoke_kernel", "params_address", "kernel_info", "CLifecycle", "RunLoop", "hookimpl",
                 "extensions", "setup_options", "generate_headers", "ParamsStruct", "Layout", "Field"):
        assert name in tvmdevice.plugin.__all__, name


def test_importing_it_is_as_light_as_discovery_must_be():
    """Every plugin.py imports it at discovery: numpy, the AOT package and the core's compiled modules load
    only when one of the names that need them is first used."""
    import subprocess
    import sys

    # a compiled module is one whose file is an extension (tvmdevice._built, the import check, is Python)
    code = ("import sys, importlib.machinery as im, tvmdevice.plugin as p; "
            "compiled = lambda m: str(getattr(sys.modules[m], '__file__', '')).endswith(tuple(im.EXTENSION_SUFFIXES)); "
            "before = sorted(m for m in sys.modules if m.startswith(('numpy', 'tvmdevice.aot')) "
            "or (m.startswith('tvmdevice._') and compiled(m))); p.RunLoop, p.ParamsStruct, p.invoke_kernel; "
            "print(before, 'tvmdevice.aot._runloop' in sys.modules and 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT.parent)
    assert out.stdout.split() == ["[]", "True"], out.stdout
