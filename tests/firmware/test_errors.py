"""Each way a firmware build or run goes wrong gives one clear line, and leaves nothing behind."""

from __future__ import annotations

import time

import pytest
from fw_helpers import PROGRAMS, processes_running, require_tools

from tvmdevice import firmware
from tvmdevice.errors import InvalidArgumentError, TVMDeviceError
from tvmdevice.firmware import toolchain


def one_line(error: BaseException) -> str:
    text = str(error)
    assert text and "\n" not in text, repr(text)
    return text


@pytest.mark.parametrize("cpu", ["host", "cortex-m3", "cortex-m55"])
def test_run_past_its_time_limit_is_killed(cpu, build_dir):
    require_tools(cpu)
    image = firmware.build([PROGRAMS / "spin.c"], [], cpu, build_dir, name="spin")
    start = time.monotonic()
    with pytest.raises(firmware.FirmwareTimeoutError) as info:
        firmware.run(image, timeout=1.0)
    assert time.monotonic() - start < 10
    message = one_line(info.value)
    assert "time limit" in message and "killed" in message and "spin" in message
    assert isinstance(info.value, TVMDeviceError)
    assert processes_running(image.path) == []


@pytest.mark.parametrize("cpu", ["host", "cortex-m4"])
def test_failing_build_names_the_first_error(cpu, tmp_path):
    require_tools(cpu)
    with pytest.raises(firmware.FirmwareBuildError) as info:
        firmware.build([PROGRAMS / "broken.c"], [], cpu, tmp_path, name="broken")
    message = one_line(info.value)
    assert "broken.c:2" in message and "undeclared_variable" in message and cpu in message
    assert "error" in info.value.log
    assert not list(tmp_path.glob("broken-*.elf")) and not (tmp_path / "broken-host").exists()
    assert not list(tmp_path.glob(".*.tmp"))


def test_warnings_are_errors(tmp_path):
    require_tools("host")
    (tmp_path / "warn.c").write_text("int main(void) { int unused; return 0; }\n")
    with pytest.raises(firmware.FirmwareBuildError, match="unused"):
        firmware.build([tmp_path / "warn.c"], [], "host", tmp_path / "out")


def test_missing_arm_toolchain_names_the_packages(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no compiler, no emulator
    with pytest.raises(firmware.ToolchainMissingError) as info:
        firmware.build([PROGRAMS / "spin.c"], [], "cortex-m55", tmp_path)
    message = one_line(info.value)
    assert "cortex-m55" in message and "arm-none-eabi-gcc" in message
    assert "apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm" in message
    assert info.value.packages == firmware.ARM_PACKAGES


def test_missing_newlib_names_the_packages(monkeypatch, tmp_path):
    require_tools("cortex-m4")
    monkeypatch.setattr(toolchain, "_has_newlib", lambda cc: False)
    with pytest.raises(firmware.ToolchainMissingError, match="newlib .* apt-get install gcc-arm-none-eabi"):
        firmware.build([PROGRAMS / "spin.c"], [], "cortex-m4", tmp_path)


def test_missing_qemu_names_the_packages(monkeypatch, build_dir, tmp_path):
    require_tools("cortex-m3")
    image = firmware.build([PROGRAMS / "spin.c"], [], "cortex-m3", build_dir, name="spin")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(firmware.ToolchainMissingError) as info:
        firmware.run(image)
    assert "qemu-system-arm" in one_line(info.value) and "apt-get install" in str(info.value)


@pytest.mark.parametrize("cpu", ["host", "cortex-m55"])
def test_non_zero_status(cpu, dense_headers, build_dir, tmp_path):
    require_tools(cpu)
    image = firmware.build([PROGRAMS / "dense.c"], [dense_headers], cpu, build_dir, name="dense")
    with pytest.raises(firmware.FirmwareRunError) as info:
        firmware.run(image, ["missing.bin", "out.bin"], cwd=tmp_path)
    assert "exited with status 3" in one_line(info.value)
    assert info.value.result is not None and "cannot open missing.bin" in info.value.result.stderr
    result = firmware.run(image, ["missing.bin", "out.bin"], cwd=tmp_path, check=False)
    assert result.status == 3 and result.fault is None
    usage = firmware.run(image, [], cwd=tmp_path, check=False)
    assert usage.status == 2 and "usage: dense INPUT OUTPUT" in usage.stderr


@pytest.mark.parametrize("cpu", ["cortex-m3", "cortex-m4", "cortex-m55"])
def test_cpu_fault_is_reported(cpu, build_dir):
    require_tools(cpu)
    image = firmware.build([PROGRAMS / "fault.c"], [], cpu, build_dir, name="fault")
    with pytest.raises(firmware.FirmwareRunError) as info:
        firmware.run(image, timeout=30)
    message = one_line(info.value)
    assert "CPU fault: HardFault at pc=0x" in message
    assert info.value.result is not None and "tvmdevice-fw" not in info.value.result.stderr


def test_bad_arguments():
    with pytest.raises(InvalidArgumentError, match="unknown CPU 'cortex-m7'.*cortex-m55"):
        firmware.get_cpu("cortex-m7")
    with pytest.raises(InvalidArgumentError, match="at least one source"):
        firmware.build([], cpu="host", out_dir="unused")


def test_qemu_arguments_cannot_hold_spaces(build_dir):
    require_tools("cortex-m3")
    image = firmware.build([PROGRAMS / "spin.c"], [], "cortex-m3", build_dir, name="spin")
    with pytest.raises(InvalidArgumentError, match="white space"):
        firmware.run(image, ["two words"])


def test_stack_overflow_faults_on_cortex_m55(tmp_path):
    """The start-up code sets MSPLIM: a stack overflow stops the run instead of overwriting RAM."""
    require_tools("cortex-m55")
    (tmp_path / "deep.c").write_text(
        "#include <stdio.h>\n"
        "static int depth(int n) { volatile char pad[256]; pad[n % 256] = (char)n;\n"
        "  return n == 0 ? 0 : depth(n - 1) + pad[n % 256]; }\n"
        "int main(int argc, char **argv) { (void)argv; printf(\"%d\\n\", depth(argc * 1000)); return 0; }\n")
    image = firmware.build([tmp_path / "deep.c"], [], "cortex-m55", tmp_path, name="deep", stack_size=4096)
    with pytest.raises(firmware.FirmwareRunError, match="CPU fault"):
        firmware.run(image, timeout=30)
