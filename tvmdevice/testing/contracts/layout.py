"""The layout contract: ``tvm_device_<name>_t`` is the same struct in Python and C.

The header the framework emits for the device (:func:`tvmdevice.headers.device_header`)
is compiled with the system C compiler, and ``sizeof``, ``_Alignof`` and the
``offsetof``/size of every member — nested structs included — must equal
what the device's :class:`~tvmdevice.layout.Layout` declares.  The storage
the framework allocates for a device must hold that many bytes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from ... import get_include
from ...headers import device_header
from ...layout import Layout
from ...lifecycle import State
from ...names import c_name
from ._base import Check, CheckContext, Contract

__all__ = ["CONTRACT", "check_header_matches", "check_storage", "measure_layout"]

NAME = "layout"


def _compiler() -> str | None:
    """The C compiler: ``$CC`` if set, else ``cc`` on PATH."""
    cc = os.environ.get("CC", "cc").split()[0]
    return shutil.which(cc)


def _expected(layout: Layout) -> dict[str, int]:
    """What the Python side declares, keyed like the measuring program's output."""
    out: dict[str, int] = {}
    for inner in layout.nested() + [layout]:
        t = inner.c_type
        out[f"sizeof {t}"] = inner.size
        out[f"alignof {t}"] = inner.alignment
        for fo in inner.offsets:
            out[f"offsetof {t}.{fo.name}"] = fo.offset
            out[f"sizeof {t}.{fo.name}"] = fo.size
    return out


def _program(layout: Layout, header: str) -> str:
    lines = []
    for key in _expected(layout):
        what, name = key.split(" ", 1)
        t, _, member = name.partition(".")
        expr = {"sizeof": f"sizeof({t})" if not member else f"sizeof((({t}*)0)->{member})",
                "alignof": f"_Alignof({t})", "offsetof": f"offsetof({t}, {member})"}[what]
        lines.append(f'  printf("{key} %zu\\n", (size_t){expr});')
    return (f'#include <stddef.h>\n#include <stdio.h>\n#include "{header}"\nint main(void) {{\n'
            + "\n".join(lines) + "\n  return 0;\n}\n")


def measure_layout(cc: str, device_type_header: str, layout: Layout, header_name: str,
                   workdir: Path) -> dict[str, int]:
    """Compile a program that includes the header and prints every size and offset; run it.

    :raises subprocess.CalledProcessError: the header (or the program) does not compile.
    """
    (workdir / header_name).write_text(device_type_header)
    (workdir / "measure.c").write_text(_program(layout, header_name))
    exe = workdir / "measure"
    subprocess.run([cc, "-std=c11", "-Wall", "-I", get_include(), "-I", str(workdir), str(workdir / "measure.c"),
                    "-o", str(exe)], check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {k: int(v) for k, v in (line.rsplit(" ", 1) for line in out.splitlines())}


def check_header_matches(ctx: CheckContext) -> str:
    """The emitted header compiles with the system C compiler; sizeof, _Alignof and every offsetof match."""
    cc = _compiler()
    if cc is None:
        ctx.skip("no C compiler: `cc` is not on PATH (install gcc or clang, or set CC) to check the layout")
    dtype = ctx.device_type
    layout = dtype.layout
    header_name = f"tvm_device_{c_name(dtype.name)}.h"
    with tempfile.TemporaryDirectory(prefix="tvmdevice-layout-") as tmp:
        try:
            measured = measure_layout(cc, device_header(dtype), layout, header_name, Path(tmp))
        except subprocess.CalledProcessError as exc:
            ctx.fail(f"the emitted {header_name} does not compile with {cc}: {(exc.stderr or '').strip()[:2000]}")
    expected = _expected(layout)
    wrong = [f"{k}: C says {measured.get(k)}, the Layout declares {v}" for k, v in expected.items()
             if measured.get(k) != v]
    if wrong:
        ctx.fail(f"{len(wrong)} of {len(expected)} sizes/offsets of {layout.c_type} disagree with C: "
                 + "; ".join(wrong[:8]))
    return f"{layout.c_type}: {len(expected)} sizes and offsets match ({layout.size} bytes)"


def check_storage(ctx: CheckContext) -> str:
    """The struct storage the framework allocates holds the declared layout, aligned."""
    dev = ctx.new_device(State.UNINITIALIZED)
    layout = ctx.device_type.layout
    if dev.handle.nbytes < layout.size:
        ctx.fail(f"the framework allocated {dev.handle.nbytes} bytes for {layout.c_type}, "
                 f"which declares {layout.size}")
    if dev.handle_address % max(layout.alignment, 1):
        ctx.fail(f"{layout.c_type} storage at {dev.handle_address:#x} is not {layout.alignment}-aligned")
    return f"{dev.handle.nbytes} bytes at a {layout.alignment}-aligned address"


CONTRACT = Contract(NAME, "the emitted C header compiles and matches the declared layout", (
    Check("header-matches", check_header_matches, check_header_matches.__doc__ or ""),
    Check("storage", check_storage, check_storage.__doc__ or ""),
))
