"""Where a model's constants go and what an image too large for its board says: a 1 MiB constant table
overflows the AN547's 512 KiB ITCM (ld's region and bytes named, the whole log left beside the build)
and runs from its QSPI flash when placed there."""

from __future__ import annotations

import pytest
from fw_helpers import PROGRAMS, require_tools

from tvmdevice import firmware
from tvmdevice.firmware import BOARDS, FirmwareBuildError
from tvmdevice.firmware.linker import linker_script

BIG = PROGRAMS / "big_constants.c"


def test_overflowing_flash_names_the_region_and_bytes(tmp_path):
    require_tools("cortex-m55")
    with pytest.raises(FirmwareBuildError) as info:
        firmware.build([BIG], [], "cortex-m55", tmp_path, name="big")
    message = str(info.value)
    assert "region FLASH (itcm, 524,288 B) overflowed by" in message and "\n" not in message
    over = int(message.split("overflowed by ")[1].split(" bytes")[0].replace(",", ""))
    assert 1024 * 1024 - 512 * 1024 < over < 1024 * 1024 - 512 * 1024 + 64 * 1024  # the table less the ITCM, + code
    log = tmp_path / "big-cortex-m55.log"
    assert log.is_file() and "overflowed by" in log.read_text() and str(log) in message
    assert not (tmp_path / "big-cortex-m55.elf").exists()


def test_constants_in_external_flash_run(tmp_path):
    require_tools("cortex-m55")
    image = firmware.build([BIG], [], "cortex-m55", tmp_path, name="big", constants="external")
    result = firmware.run(image, cwd=tmp_path)
    qspi = BOARDS["mps3-an547"].external
    assert result.stdout.startswith(f"sum={sum((i * 7 + 3) % 256 for i in range(256))} bad=0 at=0x")
    assert int(result.stdout.split("at=")[1], 16) == qspi.origin
    footprint = firmware.measure(image)
    assert footprint.external_constants >= 1024 * 1024 and footprint.flash < 64 * 1024
    assert not (tmp_path / "big-cortex-m55.log").exists()


def test_boards_are_the_machines_and_their_scripts_say_so():
    for name, machine in BOARDS.items():
        cpu = next(c for c in firmware.CPUS.values() if c.machine is machine)
        assert cpu.machine.name == name
        script = linker_script(cpu, constants="external")
        assert f"ORIGIN = 0x{machine.flash.origin:08x}, LENGTH = 0x{machine.flash.length:x}" in script
        if machine.external is None:  # no larger memory: the constants stay with the code
            assert "EXTERNAL (r)" not in script and "} > FLASH" in script
        else:
            assert f"ORIGIN = 0x{machine.external.origin:08x}, LENGTH = 0x{machine.external.length:x}" in script
            assert "} > EXTERNAL" in script
        assert "} > EXTERNAL" not in linker_script(cpu)
