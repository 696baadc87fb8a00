"""Which of a device's C files an export builds for a CPU: those the model's calls reach.

A device's ``tvmdevice_export_sources`` hook names all of its C (the files its
host extension compiles).  A model uses a few of its kernels, and a CPU one of
its instruction-set paths, so each CPU's build lists only the sources whose
definitions the generated code reaches, and the export keeps only those
sources and the headers they include.  Done here once, for every device:

1. Each source is run through the CPU's own preprocessor with the flags,
   defines and include folders of the export's build (one compiler call per
   device and CPU).  Code for other instruction sets is gone from its output
   (``#if TVMD_CMSIS_X86`` off x86-64, ``#if TVMD_CMSIS_MVE`` off Helium), and
   its line markers name every header the source includes, transitively.
2. :func:`scan` reads the preprocessed text: the non-static functions and
   variables a file defines, and the identifiers its function bodies and
   initializers use (prototypes and type declarations use nothing).
3. :func:`reachable`: starting from the identifiers the generated C uses,
   every file that defines a used identifier is taken, and what it uses is
   used in turn.  A file is taken whole, so everything it refers to links.

Nothing depends on how the C is split into files or which headers exist.
When the preprocessor cannot run (no compiler for the CPU) or a used symbol
is defined nowhere, the CPU's build keeps every source, as a build without
this selection would.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CFile", "scan", "reachable", "select_sources", "Selection", "ship_used_sources"]

_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\S")
_LINEMARKER = re.compile(r'^#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"((?:\s+\d+)*)\s*$')
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
#: Keywords that take parentheses without being a declarator's function.
_NOT_A_NAME = frozenset({"__attribute__", "__attribute", "__asm__", "__asm", "asm", "__declspec", "__typeof__",
                         "typeof", "_Alignas", "__extension__", "sizeof", "_Static_assert"})
_KEYWORDS = frozenset({"static", "extern", "typedef", "struct", "union", "enum", "const", "volatile", "inline",
                       "__inline", "__inline__", "restrict", "__restrict", "register", "void", "char", "short",
                       "int", "long", "float", "double", "signed", "unsigned", "_Bool", "return", "if", "else",
                       "for", "while", "do", "switch", "case", "default", "break", "continue", "goto", "sizeof",
                       *_NOT_A_NAME})


@dataclass(frozen=True)
class CFile:
    """What one C source defines and uses, and the files it includes.

    :ivar defines: its non-static functions and variables (what other files can link to).
    :ivar uses: every identifier its function bodies and initializers name.
    :ivar includes: every file it includes, transitively, as the preprocessor named it.
    """

    defines: frozenset[str]
    uses: frozenset[str]
    includes: frozenset[str] = frozenset()


def _tokens(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    return _TOKEN.findall(_STRING.sub(" 0 ", _COMMENT.sub(" ", "\n".join(lines))))


def _declared_name(decl: list[str]) -> str | None:
    """The name a top-level declaration (tokens before its ``{``, ``=`` or ``;``) declares."""
    for k, tok in enumerate(decl):
        if tok == "(" and k > 0 and decl[k - 1].isidentifier() and decl[k - 1] not in _KEYWORDS:
            return decl[k - 1]  # a function
    head = decl[: decl.index("[")] if "[" in decl else decl  # an object (a function pointer's name too)
    names = [t for t in head if t.isidentifier() and t not in _KEYWORDS]
    return names[-1] if names else None


def _paren_free(decl: list[str]) -> list[str]:
    """``decl`` without ``__attribute__((...))``-like groups."""
    out: list[str] = []
    depth, k = 0, 0
    while k < len(decl):
        tok = decl[k]
        if tok in _NOT_A_NAME and k + 1 < len(decl) and decl[k + 1] == "(":
            depth, k = 1, k + 2
            while k < len(decl) and depth:
                depth += {"(": 1, ")": -1}.get(decl[k], 0)
                k += 1
            continue
        out.append(tok)
        k += 1
    return out


def scan(text: str) -> CFile:
    """What C ``text`` (preprocessed or not: directives are skipped) defines and uses."""
    defines: set[str] = set()
    uses: set[str] = set()
    decl: list[str] = []
    depth = 0
    body = False  # inside a function body or an initializer: identifiers are uses
    function = False  # inside a function body

    def define(tokens: list[str]) -> None:
        clean = _paren_free(tokens)
        if not clean or {"static", "extern", "typedef"} & set(clean):
            return
        if clean[0] in ("struct", "union", "enum") and len([t for t in clean if t.isidentifier()]) <= 2 \
                and "(" not in clean:
            return  # a type, no object
        name = _declared_name(clean)
        if name:
            defines.add(name)

    for tok in _tokens(text):
        if depth:
            if tok == "{":
                depth += 1
            elif tok == "}":
                depth -= 1
                if depth == 0 and function:  # the end of a function
                    decl, body, function = [], False, False
            elif body and tok.isidentifier():
                uses.add(tok)
            continue
        if tok == "{":
            depth = 1
            clean = _paren_free(decl)
            if "=" in clean:
                body = True  # a braced initializer
            elif "(" in clean:
                define(decl)
                body = function = True
            continue
        if tok == ";":
            clean = _paren_free(decl)
            if "=" in clean:
                define(decl[: decl.index("=")])
                uses.update(t for t in decl[decl.index("=") + 1:] if t.isidentifier())
            elif clean and "(" not in clean:
                define(decl)  # a tentative definition (or a type, which defines nothing)
            decl, body = [], False
            continue
        decl.append(tok)
    return CFile(frozenset(defines), frozenset(uses - _KEYWORDS))


def reachable(files: Mapping[str, CFile], roots: Iterable[str]) -> tuple[list[str], set[str]]:
    """The files (in ``files``' order) whose definitions ``roots`` reach, and the used symbols no file defines."""
    definer: dict[str, str] = {}
    for path, f in files.items():
        for name in f.defines:
            definer.setdefault(name, path)
    chosen: set[str] = set()
    seen: set[str] = set()
    wanted = set(roots)
    todo = list(wanted)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        where = definer.get(name)
        if where is not None and where not in chosen:
            chosen.add(where)
            todo.extend(files[where].uses)
    return [p for p in files if p in chosen], {n for n in wanted if n not in definer}


def _split(output: str, sources: list[str]) -> dict[str, tuple[str, set[str]]]:
    """The preprocessor's output for several sources, per source: its text (without what system
    headers, outside the export, declare) and the files it included."""
    wanted = set(sources)
    parts: dict[str, tuple[list[str], set[str]]] = {}
    current: str | None = None
    ours = True  # the lines come from a file of the export (a relative path)
    for line in output.splitlines():
        m = _LINEMARKER.match(line)
        if m is None:
            if current is not None and ours:
                parts[current][0].append(line)
            continue
        name, flags = m.group(2), m.group(3).split()
        ours = not name.startswith(("/", "<"))
        if name in wanted and not flags and name not in parts:
            current = name
            parts[current] = ([], set())
        elif current is not None and "1" in flags:
            parts[current][1].add(name)
    return {s: ("\n".join(text), included) for s, (text, included) in parts.items()}


_CACHE: dict[str, dict[str, CFile] | None] = {}


def preprocess_and_scan(root: Path, cc: str, flags: list[str], sources: list[str],
                        inputs: Iterable[Path] = ()) -> dict[str, CFile] | None:
    """Each of ``sources`` (paths relative to ``root``) preprocessed by ``cc`` with ``flags`` and scanned;
    ``None`` when the preprocessor cannot run.  Remembered per command and the contents of the files
    under ``inputs`` (the folders the sources can include from; default: all of ``root``)."""
    digest = hashlib.sha256("\0".join([cc, *flags, *sources]).encode())
    for folder in list(inputs) or [root]:
        for path in sorted(p for p in Path(folder).rglob("*") if p.is_file()):
            digest.update(str(path).encode() + b"\0" + path.read_bytes())
    key = digest.hexdigest()
    if key not in _CACHE:
        _CACHE[key] = _run(root, cc, flags, sources)
    return _CACHE[key]


def _run(root: Path, cc: str, flags: list[str], sources: list[str]) -> dict[str, CFile] | None:
    try:
        done = subprocess.run([cc, *flags, "-E", *sources], cwd=root, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    parts = _split(done.stdout, sources)
    if set(parts) != set(sources):
        return None
    found = {}
    for source in sources:
        text, included = parts[source]
        f = scan(text)
        found[source] = CFile(f.defines, f.uses, frozenset(included))
    return found


@dataclass(frozen=True)
class Selection:
    """One device's sources for one CPU: the ones to build and the files they include.

    :ivar sources: the sources to build (all of them when the selection could not be made).
    :ivar includes: the files those sources include (relative to the export when inside it).
    :ivar complete: ``False`` when every source was kept (no preprocessor, or a symbol defined nowhere).
    """

    sources: list[str]
    includes: set[str]
    complete: bool


def select_sources(root: Path, cc: str, flags: list[str], sources: list[str], roots: Iterable[str],
                   required: Iterable[str] = (), inputs: Iterable[Path] = ()) -> Selection:
    """The sources among ``sources`` that ``roots`` reach when built with ``cc`` and ``flags`` in ``root``.

    :param roots: the identifiers the code around these sources uses (the generated C, the runner).
    :param required: the symbols these sources must define (the device's calls): when one is defined
        nowhere, the scan missed something and every source is kept.
    """
    files = preprocess_and_scan(root, cc, flags, sources, inputs)
    if files is None:
        return Selection(list(sources), set(), False)
    chosen, undefined = reachable(files, {*roots, *required})
    if undefined & set(required):
        return Selection(list(sources), set(), False)
    includes = set().union(*(files[s].includes for s in chosen)) if chosen else set()
    return Selection(chosen, includes, True)


def _flags(build: Mapping) -> list[str]:
    """The compile flags of one CPU's build in an export (as its Makefile passes them)."""
    return [*build["cflags"], *(f"-I{d}" for d in build["include_dirs"]),
            *(f"-D{n}" if v is None else f"-D{n}={v}" for n, v in build["defines"].items())]


def ship_used_sources(root: Path, device_dirs: Mapping[str, str], calls: Iterable[Mapping],
                      generated: Iterable[str], cpus: Mapping[str, dict]) -> dict[str, dict[str, Selection]]:
    """Narrow an export in ``root`` to the device C its model uses: each CPU's build lists only the
    device sources the generated C reaches there, and the files no CPU builds or includes are removed
    from each device's ``src`` folder.

    :param device_dirs: device name -> its folder in the export (``devices/<c_name>``).
    :param calls: the export's table of calls (what each device must define: its kernels, its lifecycle).
    :param generated: the texts of the generated C around the devices (model, runner).
    :param cpus: CPU -> its build (``metadata.json``'s ``build.cpus``), whose ``sources`` are rewritten.
    :returns: device -> CPU -> its :class:`Selection`.
    """
    calls = list(calls)
    roots = set().union(*(scan(text).uses for text in generated))
    runtime = [root / d for d in next(iter(cpus.values()))["include_dirs"] if d.startswith("runtime")]
    found: dict[str, dict[str, Selection]] = {}
    for device, folder in device_dirs.items():
        required = {c["call"] for c in calls if device in (c.get("device"), c.get("src"), c.get("dst"))}
        found[device] = {}
        for cpu, build in cpus.items():
            mine = [s for s in build["sources"] if s.startswith(folder + "/")]
            if not mine:
                continue
            chosen = select_sources(root, build["cc"], _flags(build), mine, roots, required,
                                    inputs=[root / folder, *runtime])
            found[device][cpu] = chosen
            build["sources"] = [s for s in build["sources"] if not s.startswith(folder + "/") or s in chosen.sources]
        if all(sel.complete for sel in found[device].values()):
            keep = {os.path.normpath(f) for sel in found[device].values() for f in (*sel.sources, *sel.includes)}
            for path in sorted((root / folder / "src").rglob("*")):
                if path.is_file() and str(path.relative_to(root)) not in keep:
                    path.unlink()
    return found
