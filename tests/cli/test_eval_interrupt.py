"""Ctrl-C during ``eval --workers 2``: the command stops within about a second, writes the report of the
samples finished so far, says it was interrupted and exits 130."""

from __future__ import annotations

import csv
import json
import os
import pty
import re
import signal
import subprocess
import sys
import time

import numpy as np

from tvmdevice.aot.builder import ModelBuilder

ENV = {**os.environ, "TVMDEVICE_PLUGINS": "none-installed"}
N = 400


def _slow_model() -> bytes:
    """About 10 ms a sample on the host's C kernels: a run of N samples lasts seconds, a chunk about one."""
    b = ModelBuilder("slow", seed=1)
    x = b.input((1, 32, 32, 4), scale=0.05)
    y = b.conv2d(b.conv2d(x, 32, kernel=3), 32, kernel=3)
    b.output(b.fully_connected(b.reshape(b.avg_pool2d(y, 32), (1, -1)), 10))
    return b.build()


def test_ctrl_c_stops_two_workers_at_once_and_keeps_the_finished_samples(tmp_path):
    import tvmdevice
    from tvmdevice.registry import Registry

    model = _slow_model()
    (tmp_path / "slow.tflite").write_bytes(model)
    x = np.random.default_rng(0).integers(-128, 128, size=(N, 1, 32, 32, 4), dtype=np.int8)
    np.savez(tmp_path / "data.npz", x=x, y=np.arange(N) % 10)
    report = tmp_path / "r.csv"
    main, child = pty.openpty()  # stderr a terminal: the progress bar tells when a chunk has finished
    proc = subprocess.Popen([sys.executable, "-m", "tvmdevice", "eval", str(tmp_path / "slow.tflite"), "-t", "c",
                             "--data", str(tmp_path / "data.npz"), "--workers", "2", "--report", str(report),
                             "--json"], stdout=subprocess.PIPE, stderr=child, env=ENV, start_new_session=True)
    os.close(child)
    drawn, deadline = b"", time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            drawn += os.read(main, 4096)
        except OSError:
            break
        done = [int(m) for m in re.findall(rb"(\d+)/" + str(N).encode(), drawn)]
        if done and max(done) > 0:
            break
    assert done and 0 < max(done) < N, drawn[-300:]
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
    sent = time.monotonic()
    out, _ = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    os.close(main)
    assert proc.returncode == 130, out
    assert took < 2.0, f"{took:.1f} s from Ctrl-C to exit"
    summary = json.loads(out)
    assert summary["interrupted"] is True and summary["samples_total"] == N
    rows = list(csv.DictReader(report.open()))
    assert len(rows) == summary["samples"] and 0 < len(rows) < N
    # the rows kept are real results: each one's best class is the executor's on that sample
    module = tvmdevice.compile(model, "c", registry=Registry(autoload=False))
    with module.executor() as ex:
        for row in rows[:3]:
            i = int(row["index"])
            assert int(row["top1"]) == int(np.argmax(ex.run([x[i]])[0])), row
