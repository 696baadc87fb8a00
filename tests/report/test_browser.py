"""The HTML report opens in a browser: headless Chromium renders it to a PNG that is not blank."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from test_pictures import _model

import tvmdevice
from tvmdevice.report import write_plot
from tvmdevice.report.colours import device_colours
from tvmdevice.testing.tools import require_program


@pytest.mark.chromium
def test_headless_chromium_renders_the_report(registry, tmp_path):
    from matplotlib.image import imread

    chromium = require_program("chromium", "chromium")
    module = tvmdevice.compile(_model(), "c", registry=registry)
    page = write_plot(str(tmp_path / "report.html"), module)
    shot = tmp_path / "shot.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1000,1400", f"--screenshot={shot}",
                    page.as_uri()], capture_output=True, timeout=120, check=True)
    pixels = imread(shot)[..., :3]
    assert pixels.shape[:2] == (1400, 1000)
    white = np.all(pixels > 0.97, axis=-1)
    assert white.mean() < 0.97, "the page rendered blank"
    node = np.array([int(device_colours(module.target)["c"][i:i + 2], 16) / 255 for i in (1, 3, 5)])
    assert np.any(np.all(np.abs(pixels - node) < 0.02, axis=-1)), "no operator node in the host's colour"
