"""Building a plugin's C extension: one call from its ``setup.py``.

A plugin declares its device struct (a :class:`~tvmdevice.device_type.DeviceType`)
and its kernel params structs (:class:`~tvmdevice.layout.Layout` s) once, in
Python.  :func:`extensions` generates the C headers from those declarations,
points the C compiler and Cython at the core's headers and ``.pxd`` files and
at the plugin's own, and returns the cythonized extensions::

    # setup.py
    from setuptools import setup

    from tvmdevice.build import extensions

    setup(ext_modules=extensions(
        {"tvmdevice_mydev._ext": ["tvmdevice_mydev/_ext.pyx", "tvmdevice_mydev/csrc/*.c"]},
        declarations="tvmdevice_mydev.device", params="PARAMS"))

The declarations module is loaded without importing the plugin package (whose
``__init__`` may need the extension being built).  Needs setuptools and
Cython: the plugin's ``[build-system] requires``.

A build leaves nothing in the plugin's source tree: the generated headers,
Cython's C, the object files and the egg-info go to :func:`build_dir`, outside
it (pass :func:`setup_options` to ``setup()`` for setuptools' part).  An
editable install still puts the extension module itself next to its sources.
"""

from __future__ import annotations

import glob
import hashlib
import importlib
import os
import sys
import tempfile
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from .device_type import DeviceType
from .layout import Layout
from .names import c_name

if TYPE_CHECKING:  # pragma: no cover
    from setuptools import Extension

__all__ = ["COMPILE_ARGS", "build_dir", "cython_include_path", "extensions", "generate_headers", "generated_dir",
           "load_declarations", "setup_options"]

#: C flags for a plugin's sources: portable C99 (no ``-march``: a wheel runs on any host of its
#: platform), warnings on.  Cython's own output is compiled with them too.
COMPILE_ARGS: tuple[str, ...] = ("-std=c99", "-Wall", "-Wextra", "-Wno-unused-parameter",
                                 "-Werror=implicit-function-declaration", "-Werror=incompatible-pointer-types")


def build_dir(root: str | os.PathLike[str] | None = None) -> Path:
    """Where a build of the project at ``root`` (default: the current directory) puts what it makes:
    ``$TVMDEVICE_BUILD_DIR`` (default: the temporary directory) / ``tvmdevice-build-<name>-<hash of root>``.

    Outside the source tree, and kept between builds so that a rebuild compiles only what changed.
    """
    base = Path(root if root is not None else os.getcwd()).resolve()
    parent = Path(os.environ.get("TVMDEVICE_BUILD_DIR") or tempfile.gettempdir())
    return parent / f"tvmdevice-build-{base.name}-{hashlib.sha256(str(base).encode()).hexdigest()[:12]}"


def generated_dir(root: str | os.PathLike[str] | None = None) -> Path:
    """Where :func:`generate_headers` writes the headers of the project at ``root``."""
    return build_dir(root) / "generated"


def setup_options(root: str | os.PathLike[str] | None = None) -> dict[str, dict[str, str]]:
    """``setup(options=...)`` that sends setuptools' build and egg-info to :func:`build_dir`."""
    out = build_dir(root)
    out.mkdir(parents=True, exist_ok=True)
    return {"build": {"build_base": str(out)}, "egg_info": {"egg_base": str(out)}}


def load_declarations(module: str, root: str | os.PathLike[str] | None = None) -> types.ModuleType:
    """Import ``module`` (e.g. ``"tvmdevice_mydev.device"``) from the source tree at ``root``.

    Its parent packages are stood in for by empty packages, so their
    ``__init__`` (which may import the extension being built) never runs;
    relative imports inside the package still work.  Nothing is left in
    ``sys.modules`` afterwards.

    :param root: the directory holding the plugin's top-level package; defaults to the current
        directory (where pip runs ``setup.py``).
    """
    base = Path(root if root is not None else os.getcwd()).resolve()
    parts = module.split(".")
    top = parts[0]
    owned = [k for k in sys.modules if k == top or k.startswith(top + ".")]
    saved = {k: sys.modules.pop(k) for k in owned}
    try:
        for i in range(1, len(parts)):
            name = ".".join(parts[:i])
            stub = types.ModuleType(name)
            stub.__path__ = [str(base.joinpath(*parts[:i]))]
            stub.__package__ = name
            sys.modules[name] = stub
        return importlib.import_module(module)
    finally:
        for k in [k for k in sys.modules if k == top or k.startswith(top + ".")]:
            del sys.modules[k]
        sys.modules.update(saved)


def _device_types(module: types.ModuleType) -> list[DeviceType]:
    found: list[DeviceType] = []
    for value in vars(module).values():
        if isinstance(value, DeviceType) and value not in found:
            found.append(value)
    if not found:
        raise ValueError(f"{module.__name__} declares no tvmdevice.DeviceType; the device header is "
                         f"generated from it")
    return found


def _layouts(module: types.ModuleType, attr: str) -> list[Layout]:
    value: Any = getattr(module, attr, None)
    layouts = [value] if isinstance(value, Layout) else list(value) if isinstance(value, (list, tuple)) else []
    if not layouts or not all(isinstance(v, Layout) for v in layouts):
        raise ValueError(f"{module.__name__}.{attr} must be a tvmdevice.Layout or a sequence of them "
                         f"(the kernel params structs), got {value!r}")
    return layouts


def _write(path: Path, text: str) -> None:
    # Rewrite only on change, so an incremental build recompiles nothing.
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def generate_headers(declarations: str, *, params: str | None = None, params_header: str | None = None,
                     root: str | os.PathLike[str] | None = None) -> Path:
    """Write the plugin's generated headers into :func:`generated_dir`; returns that directory.

    * ``tvm_device_<name>.h`` for every :class:`DeviceType` in the declarations module
      (:func:`tvmdevice.headers.device_header`: the struct and the ``TVMDevice<Name>*`` prototypes);
    * with ``params``, the name of an attribute of that module holding the kernel params
      :class:`Layout` s: ``params_header`` (default ``tvmd_<name>_params.h``) declaring them
      (:func:`tvmdevice.headers.structs_header`).

    :param declarations: the module declaring them, e.g. ``"tvmdevice_mydev.device"``.
    """
    from . import headers

    base = Path(root if root is not None else os.getcwd()).resolve()
    out = generated_dir(base)
    out.mkdir(parents=True, exist_ok=True)
    module = load_declarations(declarations, base)
    device_types = _device_types(module)
    for dtype in device_types:
        _write(out / f"tvm_device_{c_name(dtype.name)}.h", headers.device_header(dtype))
    if params is not None:
        structs_header = getattr(headers, "structs_header", None)
        if structs_header is None:
            raise RuntimeError("this tvmdevice has no tvmdevice.headers.structs_header; upgrade the core")
        name = params_header or f"tvmd_{c_name(device_types[0].name)}_params.h"
        guard = name.upper().replace(".", "_").replace("-", "_") + "_"
        doc = f"Kernel params structs declared in {declarations}.{params}."
        _write(out / name, structs_header(guard, _layouts(module, params), doc=doc))
    return out


def cython_include_path() -> list[str]:
    """Directories where Cython finds ``tvmdevice/*.pxd``: the core's parent directory.

    That is ``site-packages`` for a regular install and the source checkout for an editable one
    (where the ``.pxd`` files are not on ``sys.path``, so Cython's own search misses them).
    """
    import tvmdevice

    parent = Path(tvmdevice.__file__).resolve().parent.parent
    if not (parent / "tvmdevice" / "kernel_abi.pxd").exists():
        raise RuntimeError(f"tvmdevice's .pxd files are missing next to {tvmdevice.__file__}; reinstall "
                           f"tvmdevice (its wheel ships them)")
    return [str(parent)]


def _expand(sources: Iterable[str], base: Path) -> list[str]:
    out: list[str] = []
    for s in sources:
        if glob.has_magic(s):
            matches = sorted(str(Path(p).relative_to(base)) for p in glob.glob(str(base / s)))
            if not matches:
                raise FileNotFoundError(f"no source matches {s!r} under {base}")
            out += matches
        else:
            out.append(s)
    return out


def extensions(modules: Mapping[str, Sequence[str]], *, declarations: str, params: str | None = None,
               params_header: str | None = None, include_dirs: Sequence[str] = (),
               extra_compile_args: Sequence[str] = (), root: str | os.PathLike[str] | None = None,
               **cythonize_options: Any) -> list["Extension"]:
    """The plugin's cythonized extensions, its headers generated first (:func:`generate_headers`).

    :param modules: extension name -> sources (``.pyx`` and ``.c``, relative to ``root``; glob
        patterns such as ``"pkg/csrc/*.c"`` are expanded).
    :param declarations: the module declaring the DeviceType(s) (and the params Layouts).
    :param params: attribute of that module holding the kernel params Layouts, if any.
    :param params_header: file name of the params header (default ``tvmd_<name>_params.h``).
    :param include_dirs: more C include directories; ``tvmdevice.get_include()``, the generated
        headers' directory and the directory of every C source are always included.
    :param extra_compile_args: appended to :data:`COMPILE_ARGS` (e.g. ``["-O3"]``).
    :param root: the plugin's directory (holding ``setup.py``); defaults to the current directory.
    :param cythonize_options: passed on to ``Cython.Build.cythonize``.
    """
    from Cython.Build import cythonize
    from setuptools import Extension

    import tvmdevice

    base = Path(root if root is not None else os.getcwd()).resolve()
    generated = generate_headers(declarations, params=params, params_header=params_header, root=base)
    args = [] if sys.platform == "win32" else [*COMPILE_ARGS]
    exts = []
    for name, sources in modules.items():
        files = [os.path.relpath(base / f) for f in _expand(sources, base)]
        c_dirs = sorted({str(Path(f).resolve().parent) for f in files if f.endswith(".c")})
        dirs = [tvmdevice.get_include(), str(generated), *c_dirs, *include_dirs]
        exts.append(Extension(name, files, include_dirs=dirs, extra_compile_args=[*args, *extra_compile_args],
                              language="c"))
    directives = {"language_level": "3", **cythonize_options.pop("compiler_directives", {})}
    include_path = [*cython_include_path(), str(base), *cythonize_options.pop("include_path", [])]
    cythonize_options.setdefault("build_dir", str(build_dir(base) / "cython"))  # Cython's C too
    return cythonize(exts, include_path=include_path, compiler_directives=directives, **cythonize_options)
