"""The whole generated interface header and run function of a small model, pinned as text (as TVM's
interface_c_test.cc pins its interface): any change to what a firmware engineer reads shows up here.

The expected text is checked in under ``tests/export/golden/``.  After a deliberate change to the
generated C, regenerate it and review the diff before committing::

    TVMDEVICE_UPDATE_GOLDEN=1 python -m pytest tests/export/test_export_golden.py

(the test then writes the files and fails, so that a regeneration is never mistaken for a pass).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import tvmdevice
from tvmdevice.aot.builder import demo_model

GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("TVMDEVICE_UPDATE_GOLDEN") == "1"


def run_function(source: str) -> str:
    """``tvmgen_demo_run``'s definition: from its signature to its closing brace."""
    m = re.search(r"^int32_t tvmgen_demo_run\(.*?^}\n", source, flags=re.M | re.S)
    assert m is not None, "no run function in the generated source"
    return m.group(0)


@pytest.fixture(scope="module")
def demo_export(tmp_path_factory):
    module = tvmdevice.compile(demo_model(), "c", name="demo", mcpu="cortex-m55")
    return module.export(tmp_path_factory.mktemp("golden") / "demo")


@pytest.mark.parametrize("golden, extract", [
    ("tvmgen_demo.h", lambda out: (out / "codegen/host/include/tvmgen_demo.h").read_text()),
    ("tvmgen_demo_run.c", lambda out: run_function((out / "codegen/host/src/tvmgen_demo.c").read_text())),
])
def test_generated_text_is_pinned(demo_export, golden, extract):
    got = extract(demo_export)
    path = GOLDEN / golden
    if UPDATE:
        path.write_text(got)
        pytest.fail(f"regenerated {path}: review its diff, then run again without TVMDEVICE_UPDATE_GOLDEN")
    assert got == path.read_text(), (f"the generated {golden} differs from {path}; if the change is meant, "
                                     "regenerate it (see this module's doc)")
