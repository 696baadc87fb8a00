"""The Chrome/Perfetto trace obeys the trace-event format rules Perfetto's JSON importer relies on.

Perfetto keys tracks by numeric pid/tid (a string tid falls back to the pid, so every device's track would
merge into one), names them from ``process_name``/``thread_name`` metadata, needs ``B``/``E`` pairs to match
and complete events to nest on a track, and reads ``args`` as the values shown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict

import numpy as np

from tvmdevice.registry import Registry
from tvmdevice.tracing import Timeline


def check_trace_format(doc: dict) -> None:
    """Assert the rules; the function a test of any trace can call."""
    events = doc["traceEvents"]
    named_processes = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    named_threads = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    tracks: dict[tuple[int, int], list[dict]] = defaultdict(list)
    for e in events:
        assert type(e["pid"]) is int and type(e["tid"]) is int, e
        assert e["ph"] in {"X", "B", "E", "M", "i", "I", "C"}, e
        if e["ph"] == "M":
            assert isinstance(e["args"]["name" if e["name"].endswith("_name") else "sort_index"], (str, int))
            continue
        assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0
        assert e["pid"] in named_processes and (e["pid"], e["tid"]) in named_threads, e
        tracks[(e["pid"], e["tid"])].append(e)
        for value in e.get("args", {}).values():  # real values, not a type's name
            assert value not in ("dict", "list", "tuple", "Device", "ndarray"), e
    for key, track in tracks.items():
        assert [e["ts"] for e in track] == sorted(e["ts"] for e in track), f"track {key} is not monotonic"
        open_b: list[str] = []
        ends: list[float] = []  # ends of the complete events enclosing the current one
        for e in track:
            if e["ph"] == "B":
                open_b.append(e["name"])
            elif e["ph"] == "E":
                assert open_b, f"unmatched E on track {key}"
                open_b.pop()
            elif e["ph"] == "X":
                assert e["dur"] >= 0
                while ends and ends[-1] <= e["ts"]:
                    ends.pop()
                assert not ends or e["ts"] + e["dur"] <= ends[-1] + 1e-3, f"overlapping X events on {key}: {e}"
                ends.append(e["ts"] + e["dur"])
        assert not open_b, f"unmatched B on track {key}: {open_b}"


def test_device_api_trace_has_numeric_tracks_per_device_and_stream():
    registry = Registry(autoload=False)
    timeline = Timeline()
    registry.register(timeline, "timeline")
    dev = registry.create_device("c", {"workspace_bytes": 4096}, trace=True)
    dev.init(); dev.open(); dev.activate()
    ptr = dev.alloc_data_space(16)
    dev.upload(np.ones(16, np.uint8), ptr)
    s = dev.create_stream(); dev.set_stream(s); dev.stream_sync(s); dev.free_stream(s)
    dev.free_data_space(ptr)
    dev.deactivate(); dev.close(); dev.destroy()
    doc = timeline.chrome_trace()
    check_trace_format(doc)
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert "Device API" in names.values() and f"stream {s}" in names.values()
    processes = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert "device c" in processes
    init = next(e for e in doc["traceEvents"] if e["name"] == "init")
    assert init["args"]["options"]["workspace_bytes"] == 4096 and isinstance(init["args"]["options"], dict)
    sync = next(e for e in doc["traceEvents"] if e["name"] == "stream_sync")
    assert names[(sync["pid"], sync["tid"])] == f"stream {s}"


def test_run_trace_of_a_model_obeys_the_format(tmp_path):
    out = tmp_path / "trace.json"
    env = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}
    proc = subprocess.run([sys.executable, "-m", "tvmdevice", "run", "--trace", str(out)], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    check_trace_format(doc)
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    lifecycle = [e for e in doc["traceEvents"] if e.get("cat") == "lifecycle"]
    assert kernels and lifecycle
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "thread_name"}
    assert {threads[(k["pid"], k["tid"])] for k in kernels} == {"kernels"}
    assert all(isinstance(e["tid"], int) for e in doc["traceEvents"])
