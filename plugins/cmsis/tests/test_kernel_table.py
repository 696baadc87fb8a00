"""The kernel table is the one source: the generated headers, the compiled extension
and the device agree with it, and C compilers agree with its struct layouts."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import tvmdevice
from tvmdevice.headers import device_header
from tvmdevice.layout import ILP32, LP64, DataModel, Layout
from tvmdevice.ops import OPERATORS

import tvmdevice_cmsis
from tvmdevice_cmsis import _kernels
from tvmdevice_cmsis.device import DEVICE_TYPE, KERNEL_KINDS, LAYOUT
from tvmdevice_cmsis.headers import HEADERS
from tvmdevice_cmsis.kernel_table import KERNELS, PARAMS_LAYOUTS

CSRC = Path(tvmdevice_cmsis.__file__).resolve().parent / "csrc"


def test_the_extension_was_built_from_this_table():
    assert [_kernels.kernel_name(i) for i in range(_kernels.NUM_KINDS)] == [k.symbol for k in KERNELS]


def test_every_kernel_runs_an_operator_of_the_layer_and_its_prepare_step_resolves():
    # One kernel per kernel key ("ADD", "ADD:int16"...): the int16x8 variants have kernels of their own.
    assert len({k.kind for k in KERNELS}) == len({k.key for k in KERNELS}) == len(KERNELS)
    for k in KERNELS:
        assert k.op_type in OPERATORS
        assert k.key == (f"{k.op_type}:{k.variant}" if k.variant else k.op_type)
        assert k.layout.fields[0].name == "kind"
        assert k.prepare is None or callable(k.prepare_step())


def test_the_device_counts_calls_per_kernel_of_the_table():
    assert KERNEL_KINDS == tuple(k.key for k in KERNELS)
    assert DEVICE_TYPE.operators == frozenset(KERNEL_KINDS)
    assert LAYOUT.field("call_counts").count == (len(KERNELS),)


def test_the_kernel_header_lists_the_table_in_order():
    text = HEADERS["tvmd_cmsis_kernels.h"]()
    for k in KERNELS:
        assert f"{k.enum} = {k.index}," in " ".join(text.split())
        assert f"X({k.kind.upper()}, {k.symbol}, {k.layout.c_type})" in text
        assert f"size_t {k.symbol}_get_buffer_size(const {k.layout.c_type}* params);" in text
    assert f"TVMD_CMSIS_NUM_KINDS = {len(KERNELS)}" in text


def _static_asserts(layouts: tuple[Layout, ...], model: DataModel) -> str:
    lines = []
    for layout in dict.fromkeys(n for x in layouts for n in [*x.for_data_model(model).nested(), x]):
        laid = layout.for_data_model(model)
        t = laid.c_type
        lines.append(f'_Static_assert(sizeof({t}) == {laid.size}, "sizeof {t}");')
        for fo in laid.offsets:
            lines.append(f'_Static_assert(offsetof({t}, {fo.name}) == {fo.offset}, "offsetof {t}.{fo.name}");')
    return "\n".join(lines)


def _compile(cc: str, flags: list[str], tmp_path: Path, model: DataModel) -> None:
    """The generated headers, included through the hand-written public header, compile with
    ``cc`` and agree with the Python layouts for ``model``."""
    for name, render in {**HEADERS, "tvm_device_cmsis_nn.h": lambda: device_header(DEVICE_TYPE)}.items():
        (tmp_path / name).write_text(render())
    src = tmp_path / "check.c"
    src.write_text('#include <stddef.h>\n#include "tvmd_cmsis_nn.h"\n#include "tvm_device_cmsis_nn.h"\n'
                   + _static_asserts((*PARAMS_LAYOUTS, LAYOUT), model) + "\n")
    done = subprocess.run([cc, *flags, "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(tmp_path), "-I", str(CSRC),
                           "-I", tvmdevice.get_include(), "-c", str(src), "-o", str(tmp_path / "check.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler `cc` on PATH")
def test_host_compiler_agrees_with_the_layouts(tmp_path):
    _compile("cc", [], tmp_path, LP64)


def _arm_gcc() -> str:
    cc = shutil.which("arm-none-eabi-gcc")
    if cc is None:
        if os.environ.get("CI") == "true":
            pytest.fail("arm-none-eabi-gcc is not installed; CI must check the ILP32 layouts")
        pytest.skip("arm-none-eabi-gcc is not installed (apt-get install gcc-arm-none-eabi)")
    return cc


def test_cortex_m_compiler_agrees_with_the_layouts(tmp_path):
    _compile(_arm_gcc(), ["-mcpu=cortex-m55", "-mthumb"], tmp_path, ILP32)


def test_the_kernels_compile_for_cortex_m(tmp_path):
    """The C sources a firmware build compiles, against the generated headers, warning-free."""
    cc = _arm_gcc()
    for name, render in {**HEADERS, "tvm_device_cmsis_nn.h": lambda: device_header(DEVICE_TYPE)}.items():
        (tmp_path / name).write_text(render())
    for source in sorted(CSRC.glob("*.c")):
        done = subprocess.run([cc, "-mcpu=cortex-m4", "-mthumb", "-O2", "-std=c99", "-Wall", "-Werror", "-I",
                               str(tmp_path), "-I", str(CSRC), "-I", tvmdevice.get_include(), "-c", str(source),
                               "-o", str(tmp_path / f"{source.stem}.o")], capture_output=True, text=True)
        assert done.returncode == 0, f"{source.name}: {done.stderr}"


#: The files every kernel goes through; adding a kernel must not touch them (README: adding an operator).
GENERIC = ("kernels.py", "runner.py", "plugin.py", "device.py", "headers.py", "_kernels.pyx", "csrc/tvmd_cmsis_nn.h")


@pytest.mark.parametrize("name", GENERIC)
def test_generic_files_name_no_kernel(name):
    text = (Path(tvmdevice_cmsis.__file__).resolve().parent / name).read_text()
    for k in KERNELS:
        for word in (k.symbol, k.enum, k.layout.c_type, k.op_type):
            assert not re.search(rf"\b{word}\b", text), f"{name} names {word}: a new kernel would have to edit it"


def test_the_readme_operator_table_is_the_generated_one():
    from tvmdevice_cmsis.operator_table import BEGIN, END, operator_table

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert f"{BEGIN}\n{operator_table()}{END}\n" in readme, "run python -m tvmdevice_cmsis.operator_table"
    for k in KERNELS:  # every kernel key the device declares has its row
        assert f"| `{k.key}` | `{k.symbol}`" in readme
