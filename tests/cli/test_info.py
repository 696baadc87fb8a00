"""``tvmdevice info``: the model, its placement with reasons, memory per pool and MACs, without running."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.cli.model_info import macs, model_info
from tvmdevice.registry import Registry

ENV = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}


def cli(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "tvmdevice", *args], capture_output=True, text=True, env=ENV)
    assert proc.returncode == 0, proc.stderr
    return proc


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    b = ModelBuilder(seed=3)
    x = b.input((1, 8, 8, 2), scale=0.1, zero_point=-3)
    y = b.conv2d(x, 4, 3, padding="SAME")          # 8*8*4 outputs * 3*3*2 taps
    y = b.depthwise_conv2d(y, 3, padding="VALID")  # 6*6*4 outputs * 3*3 taps
    y = b.reshape(y, (1, 144))
    b.output(b.fully_connected(y, 5))              # 5 outputs * 144
    path = tmp_path_factory.mktemp("info") / "small.tflite"
    path.write_bytes(b.build())
    return path


def test_macs_per_operator_follow_the_shapes(model):
    module = tvmdevice.compile(model, "c", registry=Registry(autoload=False))
    counts = [macs(module.graph, op) for op in module.graph.operators]
    assert counts == [8 * 8 * 4 * 3 * 3 * 2, 6 * 6 * 4 * 3 * 3, 0, 5 * 144]


def test_info_json_has_io_quantization_placement_memory_and_macs(model):
    info = json.loads(cli("info", str(model), "--json").stdout)
    assert info["inputs"] == [{"name": info["inputs"][0]["name"], "dtype": "int8", "shape": [1, 8, 8, 2],
                               "scale": pytest.approx(0.1), "zero_point": -3}]
    assert [o["type"] for o in info["operators"]] == ["CONV_2D", "DEPTHWISE_CONV_2D", "RESHAPE", "FULLY_CONNECTED"]
    assert [o["device"] for o in info["operators"]] == ["c", "c", None, "c"]
    assert info["operators"][2]["view"] is True
    assert info["macs"] == sum(o["macs"] for o in info["operators"]) == 4608 + 1296 + 720
    pool = info["memory"]["host"]
    assert pool["ram"] == pool["activations"] + pool["scratch"] and pool["constants"] > 0
    module = tvmdevice.compile(model, "c", registry=Registry(autoload=False))
    assert info == json.loads(json.dumps(model_info(module)))


def test_info_json_gives_every_buffer_its_pool_offset_size_and_lifetime(model):
    info = json.loads(cli("info", str(model), "--json").stdout)
    module = tvmdevice.compile(model, "c", registry=Registry(autoload=False))
    pool = module.plan.pools["host"]
    assert len(info["buffers"]) == len(module.schedule.buffers) == len(pool.offsets)
    by_tensor = {b["tensor"]: b for b in info["buffers"]}
    for use in module.schedule.buffers:
        b = by_tensor[use.tensor]
        assert (b["pool"], b["kind"], b["offset"], b["size"]) == ("host", "tensor", pool.offsets[use.key], use.nbytes)
    conv_out = module.graph.operators[0].outputs[0]
    assert (by_tensor[conv_out]["first_op"], by_tensor[conv_out]["last_op"]) == (0, 1)
    # the RESHAPE (#2) is a view: its input's buffer lives on until the FULLY_CONNECTED (#3) reads the view
    dw_out = module.graph.operators[1].outputs[0]
    assert (by_tensor[dw_out]["first_op"], by_tensor[dw_out]["last_op"]) == (1, 3)
    assert module.graph.operators[2].outputs[0] not in by_tensor


def test_info_text_names_declined_devices_and_their_reasons(model):
    reg = Registry(autoload=False)
    module = tvmdevice.compile(model, "c", registry=reg)
    info = model_info(module)
    info["operators"][0]["declined"] = [{"device": "npu", "reason": "no CONV_2D kernel"}]
    from tvmdevice.cli.model_info import format_info

    text = "\n".join(format_info(info))
    assert "declined by npu: no CONV_2D kernel" in text
    assert "scale 0.1, zero point -3" in text and "MACs per inference" in text and "host:" in text


def test_info_runs_nothing(model):
    out = cli("info", str(model)).stdout
    assert "CONV_2D" in out and "memory per pool" in out and "output 0" in out
    assert "shape (1, 5) int8:" not in out  # no outputs: nothing ran
