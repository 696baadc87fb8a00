"""Hot path resolved once per device; trace mode routes through pluggy so observers see every call."""

from __future__ import annotations

import functools
import json

import numpy as np
import pluggy

from tvmdevice.host import plugin as host_plugin
from tvmdevice.tracing import Timeline


def test_default_path_calls_the_implementation_directly(registry, monkeypatch):
    dev = registry.create_device("c", trace=False)
    hook = dev._binding.hook("tvmdevice_alloc_data_space")
    assert isinstance(hook, functools.partial) and hook.func is host_plugin.tvmdevice_alloc_data_space
    calls = []
    original = pluggy.HookCaller.__call__

    def spy(self, *args, **kwargs):
        calls.append(self.name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(pluggy.HookCaller, "__call__", spy)
    dev.init(); dev.open(); ptr = dev.alloc_data_space(8); dev.free_data_space(ptr); dev.close(); dev.destroy()
    assert calls == [], "no pluggy dispatch in the default path"


def test_trace_mode_shows_every_call_to_observers(registry, tmp_path):
    timeline = Timeline()
    registry.register(timeline, "timeline")
    dev = registry.create_device("c", trace=True)
    dev.init(); dev.open(); dev.activate()
    ptr = dev.alloc_data_space(16)
    dev.upload(np.ones(16, np.uint8), ptr)
    s = dev.create_stream(); dev.set_stream(s); dev.free_stream(s)
    dev.free_data_space(ptr)
    dev.deactivate(); dev.close(); dev.destroy()
    assert timeline.lifecycle() == [("c", t) for t in ("init", "open", "activate", "deactivate", "close",
                                                        "destroy")]
    hooks = [e.hook for e in timeline.events]
    for h in ("tvmdevice_alloc_data_space", "tvmdevice_copy_data_from_to", "tvmdevice_create_stream",
              "tvmdevice_set_stream", "tvmdevice_free_stream", "tvmdevice_free_data_space"):
        assert h in hooks
    alloc = next(e for e in timeline.events if e.hook == "tvmdevice_alloc_data_space")
    assert alloc.args["nbytes"] == 16 and alloc.device == "c"
    out = tmp_path / "trace.json"
    timeline.write_chrome_trace(str(out))
    data = json.loads(out.read_text())
    assert {e["name"] for e in data["traceEvents"]} >= {"init", "alloc_data_space", "destroy"}


def test_trace_records_errors_and_still_raises(registry):
    timeline = Timeline()
    registry.register(timeline, "timeline")
    dev = registry.create_device("c", {"workspace_bytes": 10}, trace=True)
    dev.init(); dev.open()
    try:
        dev.alloc_data_space(100)
    except Exception:
        pass
    failed = [e for e in timeline.events if e.error]
    assert failed and "DeviceMemoryError" in failed[0].error
    dev.release()


def test_trace_does_not_call_other_plugins_implementations(registry):
    import importlib
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent.parent / "fixtures" / "plugins"))
    try:
        registry.register(importlib.import_module("fixture_good"), "toy")
    finally:
        sys.path.pop(0)
    toy = registry.create_device("toy", trace=True)
    toy.init(); toy.open()
    ptr = toy.alloc_data_space(8)
    assert ptr in toy.plugin_state["heap"]._blocks
    host = registry.create_device("c", trace=True)
    host.init(); host.open()
    hptr = host.alloc_data_space(8)
    assert hptr not in toy.plugin_state["heap"]._blocks
    toy.release(); host.release()
