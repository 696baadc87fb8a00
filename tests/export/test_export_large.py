"""A model the size of MobileNetV2 (about 3.5 MB of constants: four large FULLY_CONNECTED layers built with
the project's model builder) on cortex-m55: too large for the AN547's 512 KiB ITCM, refused by the fit
check, and run from the board's QSPI flash bit for bit as the Python executor runs it.

Marked ``export``; Cortex-M runs skip without the ARM tools (naming what to install), except under
``CI=true``.
"""

from __future__ import annotations

import numpy as np
import pytest

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.aot.compiler import for_firmware
from tvmdevice.export import run_export
from tvmdevice.export.fit import ModelDoesNotFitError, budget
from tvmdevice.firmware import BOARDS
from tvmdevice.testing.firmware import require_tools

pytestmark = pytest.mark.export


def large_model() -> bytes:
    """1280 -> 1024 -> 1280 -> 768 -> 10, int8: 3,616,000 weight bytes."""
    b = ModelBuilder(name="large", seed=5)
    h = b.input((1, 1280), scale=0.05, zero_point=0)
    for units in (1024, 1280, 768):
        h = b.fully_connected(h, units, activation="RELU", out_scale=0.05, out_zero_point=-128)
    b.output(b.fully_connected(h, 10, out_scale=0.1, out_zero_point=0))
    return b.build()


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    return tvmdevice.compile(large_model(), "cmsis-nn, c", name="large"), tmp_path_factory.mktemp("large")


def test_the_fit_check_refuses_it_in_flash(large):
    module, root = large
    with pytest.raises(ModelDoesNotFitError) as info:
        module.export(root / "in-flash", budget=budget("mps3-an547"))
    message = str(info.value)
    assert "does not fit mps3-an547: flash needs at least" in message and "of 524,288 B: over by" in message
    assert "--constants-region external" in message
    assert not (root / "in-flash").exists()


def test_it_runs_from_external_flash_bit_exact(large):
    require_tools("cortex-m55")
    module, root = large
    out = module.export(root / "external", constants_region="external", budget=budget("mps3-an547"))
    x = np.random.default_rng(1).integers(-128, 128, (1, 1280), dtype=np.int8)
    with for_firmware(module).executor() as ex:
        expected = ex.run([x])
    got = run_export(out, "cortex-m55", [x])
    np.testing.assert_array_equal(got.outputs[0], expected[0])
    qspi = BOARDS["mps3-an547"].external
    assert got.footprint.external_constants >= 3_616_000 > qspi.length // 4
    assert got.footprint.flash < BOARDS["mps3-an547"].flash.length
    assert got.to_json()["flash"]["external"] == got.footprint.external_constants


def test_a_link_over_the_itcm_names_the_region_and_keeps_the_log(tmp_path, capsys):
    require_tools("cortex-m55")
    from tvmdevice.cli.main import main

    b = ModelBuilder(name="over", seed=6)  # 640 KiB of weights: over the 512 KiB ITCM, a quick build
    b.output(b.fully_connected(b.input((1, 1024), scale=0.05), 640, out_scale=0.1))
    module = tvmdevice.compile(b.build(), "c", name="over")
    out = module.export(tmp_path / "over")  # no budget: the constants stay in the ITCM's region
    assert main(["run", str(out), "--cpu", "cortex-m55"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "the image does not fit mps3-an547: region FLASH (itcm, 524,288 B) overflowed by" in err[0]
    log = out / "build" / "cortex-m55" / "runner-cortex-m55.log"
    assert str(log) in err[0] and "overflowed by" in log.read_text()
