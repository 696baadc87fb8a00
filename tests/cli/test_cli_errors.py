"""Every problem a user can cause ends in one line on stderr, exit 1,, and says what to do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tvmdevice.registry import PROJECT_PLUGINS

ENV = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}  # only the built-in host device
DEMO_SHAPE = (1, 16, 16, 1)  # the built-in demo model's input


def cli(*args: str, env=ENV, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tvmdevice", *args], capture_output=True, text=True, env=env,
                          cwd=cwd)


def one_line_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tvmdevice: error: "), proc.stderr
    for w in words:
        assert w in lines[0]
    return lines[0]


@pytest.fixture
def files(tmp_path) -> Path:
    np.save(tmp_path / "transposed.npy", np.zeros((1, 16, 1, 16), np.int8))
    np.save(tmp_path / "no_batch.npy", np.zeros((16, 16, 1), np.int8))
    np.save(tmp_path / "float.npy", np.zeros(DEMO_SHAPE, np.float32))
    np.save(tmp_path / "object.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    np.save(tmp_path / "wide.npy", np.full(DEMO_SHAPE, 300, np.int16))
    (tmp_path / "notes.txt").write_text("not an array")
    (tmp_path / "fake.npy").write_bytes(b"not numpy at all")
    (tmp_path / "empty").mkdir()
    return tmp_path


@pytest.mark.parametrize("name, words", [
    ("transposed.npy", ["has shape (1, 16, 1, 16)", "must be int8 [1, 16, 16, 1]: exactly (1, 16, 16, 1)",
                        "--reshape"]),
    ("no_batch.npy", ["has shape (16, 16, 1)", "must be int8 [1, 16, 16, 1]: exactly (1, 16, 16, 1)"]),
    ("float.npy", ["is float32", "int8", "--quantize"]),
    ("object.npy", ["pickled"]),
    ("wide.npy", ["outside int8's range"]),
    ("notes.txt", ["is not a .npy file"]),
    ("fake.npy", ["is not a valid .npy file"]),
    ("nosuch.npy", ["does not exist"]),
    ("empty", ["no .npy files in directory"]),
])
def test_input_file_problems(files, name, words):
    one_line_error(cli("run", "-i", str(files / name)), str(files / name) if name != "empty" else "empty", *words)


def test_same_size_other_shape_runs_only_with_reshape(files):
    proc = cli("run", "-i", str(files / "transposed.npy"), "--reshape", "--json")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("args, words", [
    (["run", "nosuch.tflite"], ["model file 'nosuch.tflite' does not exist"]),
    (["info", "nosuch.tflite"], ["does not exist"]),
    (["bench", "nosuch.tflite"], ["does not exist"]),
    (["export", "nosuch.tflite", "-o", "out"], ["does not exist"]),
    (["run", "."], ["is not an export", "metadata.json"]),
    (["info", "."], ["is a directory"]),
    (["run", "notes.py"], ["is not a model file", "int8-quantized TFLite"]),
])
def test_model_file_problems(tmp_path, args, words):
    # In a folder of its own: run from the source tree, `python -m tvmdevice` would import the
    # uncompiled sources instead of the installed package.
    (tmp_path / "notes.py").write_text("print('not a model')\n")
    one_line_error(cli(*args, cwd=tmp_path), *words)


def test_float_model_says_it_must_be_int8_quantized(tmp_path):
    from tvmdevice.aot.builder import ModelBuilder

    b = ModelBuilder()
    b.output(b.softmax(b.input((1, 8), dtype="float32")))
    (tmp_path / "float.tflite").write_bytes(b.build())
    one_line_error(cli("run", str(tmp_path / "float.tflite")), "FLOAT32", "int8-quantized",
                   "full-integer quantization")


@pytest.mark.parametrize("target, words", [
    ("wofles, c", ["did you mean 'woofles'?", "pip install ./plugins/woofles"]),
    ("WOOFLES, c", ["pip install ./plugins/woofles"]),
    ("cmsis_nn, c", ["did you mean 'cmsis-nn'?", "pip install ./plugins/cmsis"]),
    ("C", ["Device names are exact: did you mean 'c'?"]),
    ("c -mpcu=cortex-m55", ["has no option -mpcu (did you mean '-mcpu'?)"]),
    ("ethos_u, c", ["did you mean 'ethos-u'?", "pip install ./plugins/ethosu"]),
    ("hexagon, c", ["No plugin of this project provides 'hexagon'"]),
])
def test_target_problems_suggest_and_never_invent_a_package(target, words):
    env = {**os.environ, "TVMDEVICE_DISABLE_PLUGIN_AUTOLOAD": "1"}
    line = one_line_error(cli("run", "-t", target, env=env), *words)
    assert "c, woofles, c" not in line
    for bad in ("tvmdevice-wofles", "tvmdevice-WOOFLES", "tvmdevice-cmsis_nn", "tvmdevice-ethos-u", "tvmdevice-ethos_u",
                "tvmdevice-hexagon", "tvmdevice-C"):
        assert bad not in line


def test_the_allow_list_is_named_when_it_hides_an_installed_plugin():
    from tvmdevice.registry import Registry

    if "woofles" not in Registry(probe="never").device_names():
        pytest.skip("needs tvmdevice-woofles installed (pip install ./plugins/woofles)")
    line = one_line_error(cli("run", "-t", "woofles, c", env={**os.environ, "TVMDEVICE_PLUGINS": "wooflse"}),
                          "installed but excluded by the allow-list TVMDEVICE_PLUGINS=wooflse",
                          "'wooflse' matches no installed plugin")
    assert "pip install" not in line


def test_install_hints_name_only_the_projects_own_distributions():
    root = Path(__file__).parents[2]
    for device, (dist, folder) in PROJECT_PLUGINS.items():
        text = (root / folder / "pyproject.toml").read_text()
        assert f'name = "{dist}"' in text
        assert f"\n{device} = " in text.split("[project.entry-points.tvmdevice]")[1]


def test_a_closed_pipe_is_not_a_traceback():
    proc = subprocess.run(f"{sys.executable} -m tvmdevice plugins --json | head -c 1", shell=True,
                          capture_output=True, text=True, env=ENV)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr
    big = subprocess.run(f"{sys.executable} -m tvmdevice header c | head -n 1", shell=True, capture_output=True,
                         text=True, env=ENV)
    assert "Traceback" not in big.stderr


def test_text_output_is_not_wrapped_off_a_terminal():
    out = cli("run").stdout
    assert any(len(line) > 100 for line in out.splitlines()), "long lines must stay whole when piped"
