"""Output paths are checked before any work: a bad --report, --trace or -o is one line and exit 2, and
nothing runs (no model compiled, no dataset read)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tvmdevice.aot.builder import demo_model

ENV = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tvmdevice", *args], capture_output=True, text=True, env=ENV)


def usage_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tvmdevice: error: "), proc.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def place(tmp_path):
    (tmp_path / "demo.tflite").write_bytes(demo_model())
    (tmp_path / "a_dir").mkdir()
    (tmp_path / "a_file").write_text("x")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    yield tmp_path
    locked.chmod(0o700)


def _bad(place, kind: str) -> tuple[str, str]:
    """A path of ``kind`` and a word its error must contain."""
    return {"missing": (str(place / "nosuch" / "out.x"), "does not exist"),
            "directory": (str(place / "a_dir"), "is a directory"),
            "unwritable": (str(place / "locked" / "out.x"), "not writable")}[kind]


@pytest.mark.parametrize("kind", ["missing", "directory", "unwritable"])
def test_eval_report_is_checked_before_the_dataset_is_read(place, kind):
    if kind == "unwritable" and os.geteuid() == 0:
        pytest.skip("root writes into a read-only directory")
    path, word = _bad(place, kind)
    # the dataset does not exist: had the work started, that would be the error
    usage_error(cli("eval", str(place / "demo.tflite"), "-t", "c", "--data", str(place / "nosuch.npz"),
                    "--report", path), "--report", path, word)


@pytest.mark.parametrize("kind", ["missing", "directory", "unwritable"])
def test_run_trace_is_checked_before_the_model_runs(place, kind):
    if kind == "unwritable" and os.geteuid() == 0:
        pytest.skip("root writes into a read-only directory")
    path, word = _bad(place, kind)
    usage_error(cli("run", str(place / "nosuch.tflite"), "--trace", path), "--trace", path, word)


def test_run_and_export_output_directory_is_checked_first(place):
    a_file = str(place / "a_file")
    usage_error(cli("run", str(place / "nosuch.tflite"), "-o", a_file), "-o", a_file, "is a file")
    usage_error(cli("export", str(place / "demo.tflite"), "-t", "c", "-o", str(place / "a_file" / "sub")),
                "-o", "is a file")
    if os.geteuid() != 0:
        usage_error(cli("run", str(place / "nosuch.tflite"), "-o", str(place / "locked" / "new")), "not writable")


def test_run_creates_a_missing_output_directory(place):
    out = place / "new" / "deeper"
    proc = cli("run", str(place / "demo.tflite"), "-t", "c", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert (out / "output_0.npy").is_file()


def test_an_export_write_error_names_the_users_directory(place, monkeypatch):
    """A failure while the export is written (disk full, here simulated) names the user's directory,
    not the temporary one beside it, and leaves neither behind."""
    import tvmdevice
    from tvmdevice.errors import InvalidArgumentError
    from tvmdevice.export import writer
    from tvmdevice.registry import Registry

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device", str(place / ".out.tmp123" / "x.c"))

    module = tvmdevice.compile(demo_model(), "c", registry=Registry(autoload=False))
    monkeypatch.setattr(writer, "_write", full)
    dest = place / "out"
    with pytest.raises(InvalidArgumentError) as err:
        module.export(dest)
    assert str(dest) in str(err.value) and "No space left on device" in str(err.value)
    assert ".out." not in str(err.value)
    assert sorted(p.name for p in place.iterdir() if p.name.startswith(".out")) == []
    assert not dest.exists()
