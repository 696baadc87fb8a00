"""The minimal C plugin of docs/writing-a-plugin.md (examples/minimal-plugin), built as its author would.

It is built into a wheel against this tvmdevice, installed into a private
directory, and then, in fresh processes that see it through ``PYTHONPATH``,
it must pass ``tvmdevice check`` and run ADD models bit-exact with TFLite
Micro (TFLM's own interpreter) on the device.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "minimal-plugin"


def _run(args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=900)
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> dict[str, str]:
    """The environment of a process that has tvmdevice-minimal installed (a wheel, not the source)."""
    for build_dep in ("Cython", "setuptools", "wheel"):
        pytest.importorskip(build_dep, reason=f"building a plugin needs {build_dep} (tox installs it)")
    tmp = tmp_path_factory.mktemp("minimal")
    src = tmp / "src"
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "*.so", "_ext.c"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    _run([*pip, "wheel", "--no-build-isolation", "--no-deps", "-w", str(tmp / "wheels"), str(src)], cwd=tmp)
    (wheel,) = (tmp / "wheels").glob("tvmdevice_minimal-*.whl")
    _run([*pip, "install", "--no-deps", "--target", str(tmp / "site"), str(wheel)])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(tmp / "site"), env.get("PYTHONPATH")) if p)
    env.pop("TVMDEVICE_DISABLE_PLUGIN_AUTOLOAD", None)
    env.pop("TVMDEVICE_PLUGINS", None)
    return env


@pytest.mark.slow
def test_it_is_discovered_from_its_entry_point(installed):
    out = _run([sys.executable, "-m", "tvmdevice", "plugins"], env=installed)
    assert "minimal" in out and "0 plugin(s) failed" in out


@pytest.mark.slow
def test_it_passes_the_conformance_suite(installed):
    out = _run([sys.executable, "-m", "tvmdevice", "check", "minimal"], env=installed)
    assert "kernels" in out and "lifecycle" in out


RUN_MODELS = textwrap.dedent("""
    import numpy as np
    import tvmdevice
    from tvmdevice.aot.builder import single_op_model
    from tvmdevice.testing.oracle import tflm_run

    for shapes in [((1, 4, 5, 3), (1, 4, 5, 3)), ((1, 4, 5, 3), (1, 1, 5, 1)), ((2, 3), (3,))]:
        model = single_op_model("ADD", input_shape=shapes[0], input2_shape=shapes[1], input2_scale=0.11,
                                input2_zero_point=-7, activation="RELU6")
        module = tvmdevice.compile(model, "minimal, c", strict=True)
        assert [p.device for p in module.placement.ops] == ["minimal"], module.placement
        rng = np.random.default_rng(1)
        inputs = [rng.integers(-128, 128, size=s, dtype=np.int8) for s in shapes]
        with module.executor() as ex:
            assert ex.runs_in_c  # its CLifecycle's Activate/Deactivate are reached without Python
            got = ex.run(inputs)[0]
        want = tflm_run(model, inputs).output(0)
        assert got.dtype == want.dtype and np.array_equal(got, want), (shapes, got, want)
    print("bit-exact")
""")


@pytest.mark.slow
def test_it_runs_add_models_bit_exact_with_tflm(installed):
    pytest.importorskip("tflite_micro")
    assert "bit-exact" in _run([sys.executable, "-c", RUN_MODELS], env=installed)


@pytest.mark.slow
def test_its_c_lifecycle_runs_on_the_device_struct(installed):
    script = textwrap.dedent("""
        import tvmdevice
        from tvmdevice.errors import LifecycleError
        dev = tvmdevice.get_registry().create_device("minimal")
        dev.init(); dev.open(); dev.activate()
        assert int(dev.fields["active"][0]) == 1  # written by TVMDeviceMinimalActivate, in C
        dev.deactivate(); dev.close(); dev.destroy()
        print("ok")
    """)
    assert "ok" in _run([sys.executable, "-c", script], env=installed)


def test_it_stays_minimal():
    files = [f for f in EXAMPLE.rglob("*") if f.is_file() and "build" not in f.relative_to(EXAMPLE).parts
             and f.suffix in (".py", ".pyx", ".c", ".h", ".toml", ".md")
             and not (f.suffix == ".c" and f.with_suffix(".pyx").exists())]
    lines = {str(f.relative_to(EXAMPLE)): len(f.read_text().splitlines()) for f in files}
    assert sum(lines.values()) <= 120, lines


def test_the_guide_quotes_its_files_verbatim():
    guide = (ROOT / "docs" / "writing-a-plugin.md").read_text()
    quoted = re.findall(r"^`(examples/minimal-plugin/[^`]+)`(?: \(excerpt\))?:\n\n```\w*\n(.*?)^```", guide,
                        re.MULTILINE | re.DOTALL)
    assert {path for path, _ in quoted} >= {"examples/minimal-plugin/" + f for f in (
        "pyproject.toml", "setup.py", "csrc/minimal.c", "tvmdevice_minimal/device.py",
        "tvmdevice_minimal/_ext.pyx", "tvmdevice_minimal/plugin.py")}
    for path, text in quoted:
        assert text in (ROOT / path).read_text(), f"docs/writing-a-plugin.md quotes {path} as it no longer is"
