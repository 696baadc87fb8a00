"""The platform's pieces on their own: CPUs and memory maps, linker script, ELF reader, QEMU command line."""

from __future__ import annotations

import pytest
from fw_helpers import PROGRAMS, require_tools

from tvmdevice import firmware
from tvmdevice.errors import InvalidArgumentError
from tvmdevice.firmware.elf import read_elf
from tvmdevice.firmware.linker import linker_script
from tvmdevice.firmware.run import qemu_command


def test_cpus_and_machines():
    assert set(firmware.CPUS) == {"host", "cortex-m55", "cortex-m4", "cortex-m3"}
    m55, m4, m3 = (firmware.get_cpu(c) for c in ("cortex-m55", "cortex-m4", "cortex-m3"))
    assert firmware.get_cpu("host").is_host and firmware.get_cpu(m55) is m55
    assert (m55.machine.name, m4.machine.name, m3.machine.name) == ("mps3-an547", "mps2-an386", "mps2-an385")
    assert "-mcpu=cortex-m55" in m55.cflags and "-mfloat-abi=hard" in m55.cflags
    assert "-mfpu=fpv4-sp-d16" in m4.cflags and "-mfloat-abi=soft" in m3.cflags
    assert m55.machine.flash.origin == 0 and m55.machine.flash.length == 512 * 1024  # ITCM
    assert m55.machine.ram.origin == 0x2000_0000 and m55.machine.ram.length == 512 * 1024  # DTCM
    for cpu in (m4, m3):
        assert (cpu.machine.flash.origin, cpu.machine.ram.origin) == (0, 0x2000_0000)
        assert cpu.machine.flash.length == cpu.machine.ram.length == 4 * 1024 * 1024
    assert 0x2000_0010 in m4.machine.ram and 0x2040_0000 not in m4.machine.ram


def test_linker_script_has_the_memory_map():
    script = linker_script(firmware.get_cpu("cortex-m55"), stack_size=4096)
    assert "ORIGIN = 0x00000000, LENGTH = 0x80000" in script
    assert "ORIGIN = 0x20000000, LENGTH = 0x80000" in script
    assert "__stack_size__ = 0x1000;" in script and "$" not in script
    with pytest.raises(InvalidArgumentError, match="stack_size"):
        linker_script(firmware.get_cpu("cortex-m3"), stack_size=100)
    with pytest.raises(InvalidArgumentError):
        linker_script(firmware.get_cpu("host"))


def test_stack_size_is_the_builds(dense_headers, tmp_path):
    require_tools("cortex-m3")
    image = firmware.build([PROGRAMS / "dense.c"], [dense_headers], "cortex-m3", tmp_path, name="dense",
                           stack_size=8192)
    elf = read_elf(image.path)
    top, limit = elf.symbol("__stack_top__"), elf.symbol("__stack_limit__")
    assert top is not None and limit is not None and top.value - limit.value == 8192
    assert top.value == 0x2000_0000 + 4 * 1024 * 1024
    assert firmware.measure(image).stack == 8192


def test_elf_reader_on_both_word_sizes(dense_headers, build_dir):
    require_tools("host")
    host = read_elf(firmware.build([PROGRAMS / "dense.c"], [dense_headers], "host", build_dir, name="dense").path)
    assert host.bits == 64 and host.symbol("main") is not None
    require_tools("cortex-m4")
    arm = read_elf(firmware.build([PROGRAMS / "dense.c"], [dense_headers], "cortex-m4", build_dir,
                                  name="dense").path)
    assert arm.bits == 32 and arm.machine == 40  # EM_ARM
    vectors = next(s for s in arm.sections if s.name == ".vectors")
    assert vectors.addr == 0 and vectors.size == 16 * 4
    main = arm.symbol("main")
    assert main is not None and main.value & 1  # Thumb
    with pytest.raises(InvalidArgumentError, match="not an ELF"):
        read_elf(PROGRAMS / "dense.c")


def test_qemu_command_line(build_dir):
    require_tools("cortex-m55")
    image = firmware.build([PROGRAMS / "spin.c"], [], "cortex-m55", build_dir, name="spin")
    cmd = qemu_command(image, ["a,b", "c"], plugin="p.so,out=x")
    assert cmd[1:3] == ["-M", "mps3-an547"]
    assert "-nographic" in cmd and cmd[cmd.index("-kernel") + 1] == str(image.path)
    assert cmd[cmd.index("-semihosting-config") + 1] == "enable=on,target=native,arg=spin,arg=a,,b,arg=c"
    assert cmd[cmd.index("-plugin") + 1] == "p.so,out=x"


def test_platform_header_is_on_the_include_path():
    assert (firmware.get_include() + "/tvmdevice_fw.h").endswith("csrc/tvmdevice_fw.h")
    flags = firmware.compiler_flags(firmware.get_cpu("cortex-m4"))
    assert {"-std=c99", "-Wall", "-Wextra", "-Werror", "-mthumb"} <= set(flags)


def _objects(cpu: str) -> set[str]:
    from tvmdevice.firmware.platform import cache_dir

    folder = cache_dir() / "objects" / cpu
    return {p.name for p in folder.glob("*.o")} if folder.is_dir() else set()


def test_a_program_differing_in_one_file_recompiles_that_file_only(tmp_path):
    require_tools("host")
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "lib.c").write_text("#include \"lib.h\"\nint twice(int x) { return 2 * x; }\n")
    for k in (1, 2):  # two programs on one library, each with the library's header in its own folder
        (tmp_path / f"p{k}").mkdir()
        (tmp_path / f"p{k}" / "lib.h").write_text("int twice(int x);\n")
        (tmp_path / f"p{k}" / "main.c").write_text(
            f"#include \"lib.h\"\nint main(void) {{ return twice({k}) - {2 * k}; }}\n")
    before = _objects("host")
    first = firmware.build([tmp_path / "p1" / "main.c", lib / "lib.c"], [tmp_path / "p1"], "host", tmp_path / "b1")
    after_first = _objects("host")
    second = firmware.build([tmp_path / "p2" / "main.c", lib / "lib.c"], [tmp_path / "p2"], "host", tmp_path / "b2")
    added = _objects("host") - after_first
    assert len(after_first - before) >= 2 and len(added) == 1 and next(iter(added)).startswith("main-")
    assert firmware.run(first).status == 0 and firmware.run(second).status == 0
    # a header in an include folder changes: every source that could include it recompiles
    (tmp_path / "p2" / "lib.h").write_text("int twice(int x);\n#define UNUSED_MARK 1\n")
    firmware.build([tmp_path / "p2" / "main.c", lib / "lib.c"], [tmp_path / "p2"], "host", tmp_path / "b2")
    assert {"main", "lib"} <= {n.split("-")[0] for n in _objects("host") - after_first - added}
