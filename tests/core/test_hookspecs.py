"""The hookspec module is the specification: every hook documented the same way, docs generated from it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from tvmdevice import docgen, hookspecs
from tvmdevice.binding import DEVICE_HOOKS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "device-api.md"

#: Every function of TVM's C++ DeviceAPI, by the hook that carries it.
TVM_DEVICE_API = {
    "SetDevice": "tvmdevice_set_device", "GetAttr": "tvmdevice_get_attr",
    "GetTargetProperty": "tvmdevice_get_target_property", "GetDataSize": "tvmdevice_get_data_size",
    "AllocDataSpace": "tvmdevice_alloc_data_space", "AllocDataSpace(scoped)": "tvmdevice_alloc_data_space_scoped",
    "FreeDataSpace": "tvmdevice_free_data_space", "CopyDataFromTo": "tvmdevice_copy_data_from_to",
    "CreateStream": "tvmdevice_create_stream", "FreeStream": "tvmdevice_free_stream",
    "StreamSync": "tvmdevice_stream_sync", "SetStream": "tvmdevice_set_stream",
    "GetCurrentStream": "tvmdevice_get_current_stream", "SyncStreamFromTo": "tvmdevice_sync_stream_from_to",
    "AllocWorkspace": "tvmdevice_alloc_workspace", "FreeWorkspace": "tvmdevice_free_workspace",
    "SupportsDevicePointerArithmeticsOnHost": "tvmdevice_supports_device_pointer_arithmetics_on_host",
}


def test_every_tvm_device_api_function_and_lifecycle_hook_exists():
    names = set(docgen.hook_names())
    assert set(TVM_DEVICE_API.values()) <= names
    for t in ("init", "destroy", "open", "close", "activate", "deactivate"):
        assert f"tvmdevice_{t}" in names
    assert set(DEVICE_HOOKS) <= names


@pytest.mark.parametrize("hook", docgen.hook_names())
def test_docstring_skeleton(hook):
    fn = getattr(hookspecs, hook)
    doc = inspect.getdoc(fn)
    assert doc, hook
    first = doc.splitlines()[0]
    assert first.endswith(".") and len(first) < 100, "one sentence of role first"
    for param in inspect.signature(fn).parameters:
        assert f":param {param}:" in doc, f"{hook}: :param {param}: missing"
    assert ":returns:" in doc
    firstresult = fn.tvmdevice_spec["firstresult"]
    assert (("``firstresult``: " in doc) if firstresult else ("Not ``firstresult``" in doc)), \
        f"{hook}: firstresult must be stated in prose, and match the marker"
    assert "\nC: " in doc
    assert ("\nRequired" in doc) != ("\nOptional" in doc), f"{hook}: say Required or Optional (once)"


def test_lifecycle_c_prototypes_follow_tvm_naming():
    for t in ("Init", "Destroy", "Open", "Close", "Activate", "Deactivate"):
        assert docgen.c_prototype(f"tvmdevice_{t.lower()}") == \
            f"``int32_t TVMDevice<Name>{t}(tvm_device_<name>_t* device)``"


def test_docs_page_is_generated_from_the_hookspecs():
    expected = docgen.render()
    assert DOCS.read_text() == expected, \
        "docs/device-api.md is stale: run python -m tvmdevice.docgen > docs/device-api.md"
    for hook in docgen.hook_names():
        assert f"### `{hook}(" in expected
        assert docgen._markdown(docgen.c_prototype(hook)) in expected
