"""The per-call profile read from a run's marks: pairs of marks per call, lines that add up to the run,
marks that do not pair up refused (no QEMU needed: the marks are given)."""

from __future__ import annotations

import pytest

from tvmdevice.export.profile import MARKS, RUNTIME, profile_from_run
from tvmdevice.firmware import RunResult
from tvmdevice.firmware.errors import FirmwareError

CALLS = [
    {"call": "TVMDeviceWooflesActivate", "device": "woofles"},
    {"call": "TVMDeviceWooflesCopyToDevice", "tensor": 3, "src": "host", "dst": "woofles", "bytes": 64},
    {"call": "tvmd_woofles_conv", "operator": 0, "type": "CONV_2D", "device": "woofles"},
    {"call": "tvmd_c_softmax_s8", "operator": 2, "type": "SOFTMAX", "device": "c"},
    {"call": "TVMDeviceWooflesDeactivate", "device": "woofles"},
]


def result(marks, total=10_000, inside=500) -> RunResult:
    return RunResult(0, "", "", total + 50_000, total, 1, tuple(marks), inside, 100, None, 0.1, ("qemu",))


def test_lines_add_up_to_the_run():
    marks = [(0, 10), (1, 30), (2, 40), (3, 140), (4, 150), (5, 5150), (6, 5160), (7, 6160), (8, 6170), (9, 6190)]
    profile = profile_from_run(CALLS, result(marks), "cortex-m55")
    assert [c.label for c in profile.calls] == ["Activate", "copy tensor 3 host -> woofles", "op0 CONV_2D",
                                                "op2 SOFTMAX", "Deactivate"]
    assert [c.instructions for c in profile.calls] == [20, 100, 5000, 1000, 20]
    assert profile.runtime == 10_000 - 500 - 6140
    lines = profile.lines()
    assert lines[-2:] == [(RUNTIME, "", profile.runtime), (MARKS, "", 500)]
    assert sum(n for _, _, n in lines) == 10_000
    assert profile.per_device() == {"woofles": 5140, "c": 1000}
    assert profile.operators() == [
        {"op_index": 0, "op_type": "CONV_2D", "device": "woofles", "value": 5000, "unit": "instructions"},
        {"op_index": 2, "op_type": "SOFTMAX", "device": "c", "value": 1000, "unit": "instructions"}]
    trace = profile.chrome_trace()["traceEvents"]
    spans = [e for e in trace if e["ph"] == "X" and e["cat"] != "run"]
    assert [(e["ts"], e["dur"]) for e in spans] == [(10, 20), (40, 100), (150, 5000), (5160, 1000), (6170, 20)]


@pytest.mark.parametrize("marks", [
    [(0, 10), (2, 30)],              # an after-mark of another call
    [(1, 10), (2, 30)],              # starts with an after-mark
    [(0, 10), (1, 20), (2, 30)],     # a call without its end
    [(20, 10), (21, 30)],            # a call the table does not have
])
def test_marks_that_do_not_pair_up_are_refused(marks):
    with pytest.raises(FirmwareError):
        profile_from_run(CALLS, result(marks), "cortex-m55")


def test_a_run_without_calls_is_all_runtime():
    profile = profile_from_run([], result([], total=300, inside=0), "cortex-m4")
    assert profile.calls == () and profile.runtime == 300


def test_an_uncounted_run_is_refused():
    host = RunResult(0, "", "", None, None, 0, (), 0, None, None, 0.1, ("runner",))
    with pytest.raises(FirmwareError, match="counted no instructions"):
        profile_from_run(CALLS, host, "host")
