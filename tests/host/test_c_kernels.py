"""The ``c`` device's C reference kernels: the kernel table, the device's calls, and the C itself.

Bit-exactness of every kernel against TFLM and the numpy oracle is checked by
the ``c-device`` runs of :mod:`test_reference_kernels` (single-op models
across each operator's parameters, the real models, every tensor).  Here: the
table the extension publishes, what the device prepares, its refusals and
kernel errors, and the C sources as firmware compiles them — warning-free
for the host and for Cortex-M, with the generated params structs laid out as
:class:`~tvmdevice.layout.Layout` predicts for each data model.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import tvmdevice
from tvmdevice import _abi, firmware, ops
from tvmdevice.aot.builder import ModelBuilder, demo_model, single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.errors import KernelError, Refusal
from tvmdevice.host import _kernels, calls, plugin
from tvmdevice.host.headers import write_headers
from tvmdevice.host.kernel_table import KERNELS, PARAMS_LAYOUTS
from tvmdevice.kernel import is_c_kernel
from tvmdevice.layout import ILP32, LP64, Layout
from tvmdevice.params import ParamsStruct
from tvmdevice.testing import reference as kernels

CSRC = Path(plugin.__file__).parent / "csrc"
STRICT = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2")


# -- the kernel table and the device's calls ----------------------------------------------

def test_the_extension_publishes_every_kernel_of_the_table_in_order():
    assert _kernels.NUM_KERNELS == len(KERNELS)
    for index, kernel in enumerate(KERNELS):
        assert _abi.kernel_info(_kernels.kernel_capsule(index))[0] == kernel.symbol
    with pytest.raises(IndexError, match=f"has {len(KERNELS)} entries"):
        _kernels.kernel_capsule(len(KERNELS))


def test_every_operator_of_the_device_has_a_c_kernel_and_a_numpy_oracle():
    assert plugin.OPERATORS == calls.OPERATORS == kernels.SUPPORTED
    assert calls.OPERATORS == {t for k in KERNELS for t in k.op_types}
    assert {k.source for k in KERNELS} == {p.name for p in CSRC.glob("*.c")}


def test_the_device_runs_c_kernels_only():
    module = tvmdevice.compile(demo_model(), "c")
    placed = [p for p in module.placement.ops if not p.is_view]
    assert placed and all(p.device == "c" and is_c_kernel(p.call.kernel) for p in placed)
    assert all(isinstance(p.call.params, ParamsStruct) and p.call.scratch_bytes == 0 for p in placed)


def test_params_are_the_op_data_in_the_kernels_struct():
    graph = load_tflite(single_op_model("CONV_2D", (1, 6, 6, 3), filters=4, per_channel=True))
    op = graph.operators[0]
    data = ops.analyze(graph, op)
    params = calls.prepare(graph, op, data).params
    assert params.layout.c_type == "tvmd_c_conv_params_t"
    for name in ("batches", "in_h", "out_ch", "stride_h", "pad_w", "input_offset", "act_max", "groups"):
        assert params.values[name] == getattr(data, name)
    np.testing.assert_array_equal(params.values["multiplier"], data.multiplier)


def test_unknown_operators_are_refused_naming_the_device():
    graph = load_tflite(single_op_model("ADD"))
    bogus = dataclasses.replace(graph.operators[0], type="EMBEDDING_LOOKUP")
    with pytest.raises(Refusal, match=r"EMBEDDING_LOOKUP on 'c': no host kernel for EMBEDDING_LOOKUP; "
                                      r"the host implements ADD"):
        calls.prepare(graph, bogus)


def test_an_average_pool_window_in_the_padding_is_refused():
    # TFLM's AveragePool fails at Eval on such a window; the device refuses it at prepare.
    graph = load_tflite(single_op_model("AVERAGE_POOL_2D", (1, 4, 4, 2), pool=2, stride=2))
    op = graph.operators[0]
    outside = dataclasses.replace(ops.analyze(graph, op), pad_w=3)
    with pytest.raises(Refusal, match=r"AVERAGE_POOL_2D on 'c': a pooling window lies entirely in the padding"):
        calls.prepare(graph, op, outside)
    calls.prepare(graph, op, dataclasses.replace(outside, average=False))  # a max pool has no such limit


@pytest.mark.parametrize("op_type, change", [("CONV_2D", {"dilation_w": 2**30}),
                                             ("DEPTHWISE_CONV_2D", {"stride_h": 2**31 - 1}),
                                             ("MAX_POOL_2D", {"pad_w": 2**31 - 8})])
def test_window_coordinates_past_int32_are_refused_before_c(op_type, change):
    graph = load_tflite(single_op_model(op_type, (1, 5, 5, 2)))
    op = graph.operators[0]
    hostile = dataclasses.replace(ops.analyze(graph, op), **change)
    with pytest.raises(Refusal, match=rf"{op_type} on 'c': window coordinates up to \d+ exceed the C kernel's int32"):
        calls.prepare(graph, op, hostile)
    calls.prepare(graph, op)  # the model's own geometry is fine


def test_softmax_sum_overflow_is_a_kernel_error_on_the_device():
    # 600 equal logits: TFLM aborts; the C kernel returns an error status.
    module = tvmdevice.compile(single_op_model("SOFTMAX", (1, 600), 0.1, 0), "c")
    with module.executor() as ex:
        with pytest.raises(KernelError, match=r"operator #0 SOFTMAX on device 'c' failed with status 7"):
            ex.run([np.zeros((1, 600), np.int8)])


def test_reshape_of_a_constant_runs_the_copy_kernel(compare_with_tflm):
    # A view of a constant cannot alias it: the reshape is a kernel call.
    b = ModelBuilder(seed=3)
    x = b.input((1, 12), scale=0.03, zero_point=2)
    k = b.reshape(b.constant(np.arange(-6, 6, dtype=np.int8).reshape(3, 4), scale=0.03, zero_point=2), (1, 12))
    b.output(b.add(x, k))
    model = b.build()
    module = tvmdevice.compile(model, "c")
    assert [p.call.name for p in module.placement.ops] == ["reshape", "add_s8"]
    mismatches, n_tensors, _ = compare_with_tflm(model, 1)
    assert n_tensors == 2 and not mismatches, mismatches


# -- the C sources as firmware compiles them ------------------------------------------------

def _compiler(cpu: str) -> list[str]:
    """The C compiler driver and flags for ``cpu``; skips (fails under CI=true) when it is missing."""
    the_cpu = firmware.get_cpu(cpu)
    try:
        toolchain = firmware.find_toolchain(the_cpu)
    except firmware.ToolchainMissingError as e:
        if os.environ.get("CI") == "true" and not the_cpu.is_host:
            pytest.fail(f"CI=true and the Cortex-M compiler is missing: {e}")
        pytest.skip(f"{e} (needs apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)")
    return [toolchain.cc, *the_cpu.cflags]


def _includes(generated: Path) -> list[str]:
    return [f"-I{tvmdevice.get_include()}", f"-I{generated}", f"-I{CSRC}"]


CPUS = ["host", "cortex-m55", "cortex-m4", "cortex-m3"]


@pytest.mark.parametrize("cpu", CPUS)
def test_every_kernel_source_compiles_warning_free(tmp_path, cpu):
    cc = _compiler(cpu)
    generated = write_headers(tmp_path / "generated")
    sources = sorted(CSRC.glob("*.c"))
    assert sources
    for src in sources:
        out = subprocess.run([*cc, *STRICT, *_includes(generated), "-c", str(src), "-o", str(tmp_path / "k.o")],
                             capture_output=True, text=True)
        assert out.returncode == 0 and not out.stderr, f"{src.name} for {cpu}:\n{out.stderr}"


def _layout_asserts(layout: Layout) -> str:
    # C99 has no _Static_assert: a negative array size fails the compile.
    checks = [f"sizeof({layout.c_type}) == {layout.size}"]
    checks += [f"offsetof({layout.c_type}, {f.name}) == {o.offset}" for f, o in zip(layout.fields, layout.offsets)]
    return "".join(f"typedef char check_{layout.c_type}_{k}[({c}) ? 1 : -1];\n" for k, c in enumerate(checks))


@pytest.mark.parametrize("cpu, model", [("host", LP64), ("cortex-m55", ILP32)])
def test_params_structs_are_laid_out_as_the_layouts_say(tmp_path, cpu, model):
    # The Python fill (LP64 host) and a firmware export's initializers (ILP32)
    # rely on these offsets.
    cc = _compiler(cpu)
    generated = write_headers(tmp_path / "generated")
    src = tmp_path / "layouts.c"
    src.write_text('#include <stddef.h>\n#include "tvmd_c_kernels.h"\n'
                   + "".join(_layout_asserts(layout.for_data_model(model)) for layout in PARAMS_LAYOUTS))
    out = subprocess.run([*cc, *STRICT, "-Wno-unused-local-typedefs", *_includes(generated), "-c", str(src),
                          "-o", str(tmp_path / "layouts.o")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
