"""Crash-isolated probing: import a plugin in a child process before the host does.

An exception at import is contained in-process (see :mod:`tvmdevice.registry`),
but a plugin whose import segfaults, aborts, calls ``os._exit`` or never returns
would take the host down with it.  So before the registry imports an entry
point it has no verdict for, it imports and registers it in a separate Python
process with a time limit (several plugins are probed in parallel).  The
verdict is remembered per distribution name, version and install location in
``plugin-probes.json`` under the cache directory; a probe runs once per
installed version, never on every import, so discovery of known-good plugins
stays as fast as before.  A plugin whose probe crashed, exited or hung stays
skipped until its version changes (or its distribution is reinstalled);
``tvmdevice plugins --probe`` probes every plugin again and replaces the
remembered verdicts.

Environment:

``TVMDEVICE_CACHE_DIR``
    Where the verdicts are kept; default: the user cache directory
    (``$XDG_CACHE_HOME/tvmdevice``, ``~/.cache/tvmdevice``,
    ``~/Library/Caches/tvmdevice``, ``%LOCALAPPDATA%\\tvmdevice\\Cache``).
``TVMDEVICE_PROBE_TIMEOUT``
    Seconds a probe may take before the plugin counts as hung (default 20);
    ``0`` turns automatic probing off (remembered verdicts still apply).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

__all__ = ["Candidate", "ProbeResult", "cache_path", "default_timeout", "probe", "remembered", "remember"]

DEFAULT_TIMEOUT = 20.0
_MARKER = "TVMDEVICE-PROBE:"
_FORMAT = 1
#: Verdicts seen in this process, for when the cache file cannot be written.
_memory: dict[str, dict[str, Any]] = {}


@dataclass(frozen=True)
class Candidate:
    """One entry point to probe, with what identifies its installed version.

    :ivar stamp: modification time of the distribution's metadata folder, so a
        reinstall of the same version counts as a change.
    """

    name: str
    value: str
    group: str
    distribution: str
    version: str
    location: str = ""
    stamp: int = 0

    @classmethod
    def of(cls, ep: Any) -> "Candidate":
        """The candidate for an installed entry point (``importlib.metadata.EntryPoint``)."""
        dist = getattr(ep, "dist", None)
        if dist is None:
            return cls(ep.name, ep.value, ep.group, "<unknown distribution>", "")
        location = getattr(dist, "_path", None)  # the .dist-info folder (PathDistribution)
        try:
            stamp = os.stat(location).st_mtime_ns if location is not None else 0
        except OSError:
            stamp = 0
        meta = dist.metadata  # parsed once (dist.name and dist.version would parse it again each)
        return cls(ep.name, ep.value, ep.group, meta["Name"] or "<unnamed distribution>", meta["Version"] or "",
                   str(location or ""), stamp)

    @property
    def key(self) -> str:
        return f"{self.distribution}=={self.version} {self.name}={self.value} @{self.location}"


@dataclass(frozen=True)
class ProbeResult:
    """What importing one plugin in a child process did.

    :ivar verdict: ``"ok"`` (the import returned to Python, successfully or
        with an error the host contains), ``"crashed"`` (killed by a signal),
        ``"exited"`` (the process ended during import) or ``"hung"``.
    :ivar detail: how it crashed, or the contained error for ``"ok"``.
    :ivar output: the end of the child's stderr (a faulthandler traceback).
    """

    verdict: str
    detail: str = ""
    seconds: float = 0.0
    probed_at: str = ""
    output: str = ""

    @property
    def safe(self) -> bool:
        return self.verdict == "ok"

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "detail": self.detail, "seconds": round(self.seconds, 3),
                "probed_at": self.probed_at, "output": self.output}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ProbeResult":
        return cls(str(data["verdict"]), str(data.get("detail", "")), float(data.get("seconds", 0.0)),
                   str(data.get("probed_at", "")), str(data.get("output", "")))


def cache_path() -> Path:
    """The file holding remembered verdicts (``TVMDEVICE_CACHE_DIR`` overrides the folder)."""
    override = os.environ.get("TVMDEVICE_CACHE_DIR", "").strip()
    if override:
        base = Path(override)
    elif sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "tvmdevice" / "Cache"
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches" / "tvmdevice"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tvmdevice"
    return base / "plugin-probes.json"


def default_timeout() -> float:
    """``TVMDEVICE_PROBE_TIMEOUT`` in seconds (0: no automatic probing)."""
    text = os.environ.get("TVMDEVICE_PROBE_TIMEOUT", "").strip()
    try:
        return max(0.0, float(text)) if text else DEFAULT_TIMEOUT
    except ValueError:
        return DEFAULT_TIMEOUT


def _read() -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(cache_path().read_text())
    except (OSError, ValueError):
        return {}
    entries = data.get("entries") if isinstance(data, dict) and data.get("format") == _FORMAT else None
    return entries if isinstance(entries, dict) else {}


def remembered(candidates: Iterable[Candidate]) -> dict[Candidate, ProbeResult]:
    """The remembered verdicts for those candidates whose installed version was probed."""
    entries = {**_read(), **_memory} if candidates else {}
    out: dict[Candidate, ProbeResult] = {}
    for c in candidates:
        entry = entries.get(c.key)
        if isinstance(entry, dict) and entry.get("stamp") == c.stamp:
            try:
                out[c] = ProbeResult.from_json(entry["result"])
            except (KeyError, TypeError, ValueError):
                continue
    return out


def remember(results: dict[Candidate, ProbeResult]) -> None:
    """Store verdicts; entries whose distribution is no longer installed there are dropped."""
    fresh = {c.key: {"stamp": c.stamp, "result": r.to_json()} for c, r in results.items()}
    _memory.update(fresh)
    entries = {k: v for k, v in _read().items() if _still_installed(k)}
    entries.update(fresh)
    path = cache_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps({"format": _FORMAT, "entries": entries}, indent=1, sort_keys=True))
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old or the new file
    except OSError:
        pass  # an unwritable cache only costs a probe per process (kept in _memory meanwhile)


def _still_installed(key: str) -> bool:
    location = key.rpartition(" @")[2]
    return not location or os.path.exists(location)


# ----------------------------------------------------------------- probing
_CHILD = ("import json, sys; r = json.load(sys.stdin); sys.path[:] = r['path']; "
          "import tvmdevice.probe as p; p._child(r)")


def probe(candidates: Iterable[Candidate], timeout: float | None = None) -> dict[Candidate, ProbeResult]:
    """Import and register each candidate in its own child process, all at once.

    :param timeout: seconds each may take (default :func:`default_timeout`,
        or :data:`DEFAULT_TIMEOUT` when that is 0).
    :returns: a verdict per candidate; nothing is remembered (see :func:`remember`).
    """
    import subprocess
    import tempfile

    limit = timeout or default_timeout() or DEFAULT_TIMEOUT
    running = []
    try:
        for c in candidates:
            request = {"path": sys.path, "name": c.name, "value": c.value, "group": c.group}
            stdin = tempfile.TemporaryFile("w+")
            json.dump(request, stdin)
            stdin.seek(0)
            out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
            env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
            proc = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=stdin, stdout=out, stderr=err, env=env,
                                    text=True, start_new_session=(os.name == "posix"))
            stdin.close()
            running.append((c, proc, out, err, time.monotonic()))
        results = {}
        deadline = time.monotonic() + limit
        for c, proc, out, err, started in running:
            try:
                rc: int | None = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _kill(proc)
                rc = None  # killed by us: a hang, not a crash
            results[c] = _verdict(c, rc, _tail(out), _tail(err), time.monotonic() - started, limit)
        return results
    finally:
        for _, proc, out, err, _ in running:
            if proc.poll() is None:
                _kill(proc)
            out.close()
            err.close()


def _kill(proc: Any) -> None:
    import signal

    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)  # the plugin may have started processes of its own
        else:
            proc.kill()
    except OSError:
        pass
    proc.wait()


def _tail(f: Any, limit: int = 20000) -> str:
    f.seek(0)
    return f.read()[-limit:]


def _verdict(c: Candidate, rc: int | None, out: str, err: str, seconds: float, limit: float) -> ProbeResult:
    import signal

    when = time.strftime("%Y-%m-%d %H:%M:%S")
    what = f"importing {c.value!r} in a probe process"
    lines = err.strip().splitlines()
    fatal = [i for i, line in enumerate(lines) if line.startswith("Fatal Python error")]
    # faulthandler prints the innermost frame (the plugin's line) first.
    tail = "\n".join(lines[fatal[-1]:fatal[-1] + 6] if fatal else lines[-8:])
    answers = [line[len(_MARKER):] for line in out.splitlines() if line.startswith(_MARKER)]
    if rc is None:
        return ProbeResult("hung", f"{what} did not finish within {limit:g} s", seconds, when, tail)
    if answers:
        answer = json.loads(answers[-1])
        return ProbeResult("ok", answer.get("error", ""), seconds, when)
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return ProbeResult("crashed", f"{what} died with {name}", seconds, when, tail)
    return ProbeResult("exited", f"{what} ended the process with exit status {rc}", seconds, when, tail)


def _child(request: dict[str, Any]) -> None:
    """In the probe process: discover exactly one entry point, as the host would, and report."""
    import warnings
    from importlib import metadata

    from .registry import Registry

    ep = metadata.EntryPoint(request["name"], request["value"], request["group"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        records = Registry(entry_points=[ep], allow=[ep.name], autoload=True, probe="never").records()
    record = next(r for r in records if r.name == ep.name)
    sys.stdout.write(_MARKER + json.dumps({"status": record.status, "error": record.error}) + "\n")
    sys.stdout.flush()
    os._exit(0)  # do not wait for threads or atexit handlers the plugin left behind
