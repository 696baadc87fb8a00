"""The operator table (``tvmdevice plugins --ops``, README's operator sections): generated from each
installed device's declared kernel keys and the operator layer's signatures; TFLM's builtins each run
or have a reason."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import tvmdevice
from tvmdevice import ops
from tvmdevice.cli.main import main
from tvmdevice.device_type import DeviceType
from tvmdevice.layout import Field, Layout
from tvmdevice.optable import build, dtype_label
from tvmdevice.optable.render import SECTIONS, markdown_operators, update
from tvmdevice.optable.tflm import BEYOND_TFLM, REASONS, TFLM_BUILTINS, unsupported
from tvmdevice.registry import PROJECT_PLUGINS

README = Path(__file__).resolve().parents[2] / "README.md"


def _fake_registry(*types: DeviceType) -> SimpleNamespace:
    record = SimpleNamespace(status="loaded", distribution="tvmdevice-fake", device_types=list(types))
    return SimpleNamespace(records=lambda: [record])


def _device(name: str, operators: set[str], **kw) -> DeviceType:
    layout = Layout(f"tvm_device_{name}_t", (Field("x", "uint32_t"),))
    return DeviceType(name=name, layout=layout, operators=frozenset(operators), **kw)


def test_every_declared_kernel_key_is_a_row_marked_for_exactly_its_devices():
    table = build()
    types = tvmdevice.get_registry().device_types()
    by_key = {r.key: r for r in table.rows}
    assert len(by_key) == len(table.rows)
    assert {c.name for c in table.columns} == {t.name for t in types}
    for t in types:
        for key in t.operators:
            assert t.name in by_key[key].devices, (t.name, key)
    for r in table.rows:
        assert set(r.devices) == {t.name for t in types if r.key in t.operators}, r
    # every operator of the layer has its base row, claimed or not
    assert set(ops.OPERATORS) <= set(by_key)


def test_a_plugin_declaring_a_new_variant_appears_without_editing_the_table():
    npu = _device("npu", {"ADD", "PAD:int16", "CONV_2D:int16", "MY_OWN_OP"},
                  options=(tvmdevice.TargetOption("max_kernel", int, 7, "largest filter side", minimum=1),
                           tvmdevice.TargetOption("mode", str, "fast", "not a limit")))
    table = build(_fake_registry(npu))
    rows = {r.key: r for r in table.rows}
    assert rows["PAD:int16"].devices == ("npu",) and rows["PAD:int16"].dtypes == "int16"
    assert rows["CONV_2D:int16"].dtypes == "int16x8"
    assert rows["MY_OWN_OP"].dtypes == "(the device's own)" and rows["MY_OWN_OP"].devices == ("npu",)
    # with a PAD:int16 variant declared, the base PAD row covers int8 only
    assert rows["PAD"].dtypes == "int8" and rows["PAD"].devices == ()
    assert table.columns[0].options == ("-max_kernel=7",)


@pytest.mark.parametrize("op_type, variant, variants, label", [
    ("ADD", "", {"int16"}, "int8"),
    ("ADD", "int16", {"int16"}, "int16"),
    ("CONV_2D", "int16", {"int16"}, "int16x8"),
    ("FULLY_CONNECTED", "int16", {"int16"}, "int16x8"),
    ("QUANTIZE", "", {"float32->int16", "int8->int16", "int16->int8", "int16->int16", "int16->int32"},
     "int8, float32 → int8"),
    ("QUANTIZE", "float32->int16", {"float32->int16"}, "float32 → int16"),
    ("DEQUANTIZE", "", set(), "int8 → float32"),
    ("SOFTMAX", "int8->int16", {"int16", "int8->int16"}, "int8 → int16"),
    ("SOFTMAX", "", {"int16", "int8->int16"}, "int8"),
    ("TRANSPOSE", "", set(), "int8, int16"),
    ("ARG_MAX", "", set(), "int8"),  # an index output is not a data type of the row
])
def test_dtype_labels_come_from_the_signature(op_type, variant, variants, label):
    assert dtype_label(op_type, variant, variants) == label


def test_cli_ops_table_json_and_markdown(capsys):
    table = build()
    assert main(["plugins", "--ops", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == table.to_json()
    assert main(["plugins", "--ops", "--markdown"]) == 0
    assert capsys.readouterr().out == markdown_operators(table)
    assert main(["plugins", "--ops"]) == 0
    out = capsys.readouterr().out
    for c in table.columns:
        assert c.name in out
    assert "int16x8" in out and "CONV_2D" in out and "float32" in out


def test_readme_operator_table_is_generated():
    installed = set(tvmdevice.get_registry().device_names())
    missing = [f"pip install ./{folder}" for device, (_, folder) in sorted(PROJECT_PLUGINS.items())
               if device not in installed]
    if missing:
        pytest.skip(f"the README's table lists every project plugin: {'; '.join(missing)}")
    text = README.read_text()
    assert update(text, ("operators",)) == text, \
        "README.md's operator table is stale: run python -m tvmdevice.optable --update README.md"


def test_readme_tflm_unsupported_list_is_generated():
    text = README.read_text()
    assert update(text, ("tflm-unsupported",)) == text, \
        "README.md's TFLM list is stale: run python -m tvmdevice.optable --update README.md"
    for op, reason in unsupported():
        assert f"| {op} | {reason} |" in text


def test_update_refuses_text_without_markers():
    with pytest.raises(ValueError, match="optable:operators"):
        update("# no markers\n", ("operators",))
    assert set(SECTIONS) == {"operators", "tflm-unsupported"}


# -- TFLM's builtins ----------------------------------------------------------------------

def test_every_tflm_builtin_is_run_or_has_a_reason():
    runs = set(ops.OPERATORS)
    assert TFLM_BUILTINS <= runs | set(REASONS), sorted(TFLM_BUILTINS - runs - set(REASONS))
    assert not set(REASONS) & runs, f"reasons kept for operators that run: {sorted(set(REASONS) & runs)}"
    assert set(REASONS) <= TFLM_BUILTINS
    assert all(REASONS.values())
    assert [op for op, _ in unsupported()] == sorted(TFLM_BUILTINS - runs)


def test_every_operator_beyond_tflm_names_its_oracle():
    assert set(BEYOND_TFLM) == set(ops.OPERATORS) - TFLM_BUILTINS
    rows = {r.key: r for r in build().rows}
    for op, note in BEYOND_TFLM.items():
        assert rows[op].note == note and "LiteRT" in note


def test_tflm_builtins_match_the_installed_tflite_micro():
    """The list is TFLM's: the builtin registrations compiled into the tflite-micro package the oracle runs."""
    tflm = pytest.importorskip("tflite_micro")
    import tflite

    libs = list(Path(tflm.__file__).parent.glob("python/tflite_micro/_runtime*.so"))
    if not libs:
        pytest.skip("tflite-micro's runtime library is not where this test looks")
    registered = {m.decode() for lib in libs for m in re.findall(rb"Register_([A-Z0-9_]+?)Ev", lib.read_bytes())}
    builtins = {k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_") and isinstance(v, int)}
    assert TFLM_BUILTINS == registered & builtins
    assert np.int64(len(TFLM_BUILTINS)) >= 90  # "about 100": a broken scan finds few


def _claims() -> list[tuple[str, str, str]]:
    """(operator, device, data type) for every mark of the table a plugin device makes on an int8/int16 row."""
    claims = []
    for row in build().rows:
        if "→" in row.dtypes:
            continue
        for device in row.devices:
            if device != "c":
                claims += [(row.op_type, device, d.strip()) for d in row.dtypes.split(",")
                           if d.strip() in ("int8", "int16", "int16x8")]
    return claims


#: Builder arguments that keep a single-operator model inside every device's declared limits
#: (woofles' window loader pads height and width only).
_WITHIN_LIMITS = {"PAD": {"paddings": [[0, 0], [1, 1], [2, 1], [0, 0]]},
                  "PADV2": {"paddings": [[0, 0], [1, 1], [2, 1], [0, 0]], "value": 3}}


@pytest.mark.parametrize("op_type, device, dtype", _claims())
def test_every_mark_of_the_table_is_a_device_that_runs_that_data_type(op_type, device, dtype):
    from tvmdevice.aot.builder.presets import single_op_model

    model = single_op_model(op_type, input_dtype="int8" if dtype == "int8" else "int16",
                            **_WITHIN_LIMITS.get(op_type, {}))
    module = tvmdevice.compile(model, f"{device}, c")
    placed = module.placement.ops
    assert [p.device for p in placed] == [device] * len(placed), [dict(p.declined) for p in placed]
