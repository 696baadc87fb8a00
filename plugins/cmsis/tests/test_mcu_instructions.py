"""cmsis-nn on the microcontroller against TFLM + CMSIS-NN, as assertions.

Each shared model is compiled with its weights packed for the CPU
(``cmsis-nn -mcpu=<cpu>, c``), exported, built and run under QEMU: the
outputs must equal tflite-micro's on Cortex-M55 (Helium path), M4 (DSP path)
and M3 (plain C), and one warm inference's executed instructions (QEMU counts
them deterministically) must stay within the bound (``ratio_bound``: at or
under the TFLM + CMSIS-NN anchor, tighter where the kernels are well under
it) on M55 and M4 (:mod:`tvmdevice_cmsis.mcu_anchor`, the same
figures ``bench/bench_mcu.py`` reports against).  The planned RAM stays within
TFLM's arena.  Skipped without ``TVMDEVICE_MODELS_DIR`` or the ARM tools.
"""

from __future__ import annotations

import numpy as np
import pytest
import tvmdevice
from tvmdevice.export import run_export
from tvmdevice.testing.firmware import require_tools
from tvmdevice.testing.oracle import tflm_run

from tvmdevice_cmsis.mcu_anchor import ANCHOR, ratio_bound

pytestmark = pytest.mark.models

CPUS = ("cortex-m55", "cortex-m4", "cortex-m3")


@pytest.mark.parametrize("cpu", CPUS)
@pytest.mark.parametrize("model", list(ANCHOR))
def test_model_on_the_mcu_is_bit_exact_and_within_the_anchor_bound(tmp_path, models_dir, model, cpu):
    require_tools(cpu)
    path = models_dir / f"{model}.tflite"
    if not path.is_file():
        pytest.skip(f"{path} is missing")
    data = path.read_bytes()
    module = tvmdevice.compile(data, f"cmsis-nn -mcpu={cpu}, c", name=model)
    out = module.export(tmp_path / "export")
    rng = np.random.default_rng(0)
    inputs = [rng.integers(-128, 128, size=module.graph.tensors[t].shape, dtype=np.int8)
              for t in module.graph.inputs]
    ref = tflm_run(data, inputs)
    run = run_export(out, cpu, inputs)
    for k, got in enumerate(run.outputs):
        np.testing.assert_array_equal(got, ref.output(k).reshape(got.shape), err_msg=f"{model} output {k} on {cpu}")
    report = run.to_json()
    anchor = ANCHOR[model]
    assert sum(report["ram"]["pools"].values()) <= anchor["arena"], f"{model}: pools above TFLM's arena"
    if cpu in anchor:
        ratio = ratio_bound(model, cpu)
        assert report["instructions"] <= ratio * anchor[cpu], (
            f"{model} on {cpu}: {report['instructions']:,} instructions, "
            f"{report['instructions'] / anchor[cpu]:.2f}x TFLM + CMSIS-NN ({anchor[cpu]:,}); bound {ratio}x")
