"""Will it fit?  ``tvmdevice export --board/--flash-kb/--ram-kb`` checks the plan against the chip before
writing anything: one line saying which memory is over and by how much, exit status 2."""

from __future__ import annotations

import json

import pytest

from tvmdevice.aot.builder import demo_model
from tvmdevice.cli.main import main
from tvmdevice.export.fit import Budget, ModelDoesNotFitError, Needs, budget
from tvmdevice.firmware import BOARDS, DEFAULT_STACK_SIZE


@pytest.fixture
def demo_file(tmp_path):
    path = tmp_path / "demo.tflite"
    path.write_bytes(demo_model())
    return path


def test_a_plan_over_the_flash_and_ram_given_is_refused_in_one_line(demo_file, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["export", str(demo_file), "-t", "c", "-o", str(out), "--flash-kb", "4", "--ram-kb", "16"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    line = err[0]
    assert "does not fit --flash-kb 4 --ram-kb 16" in line
    # the demo's constants and params are 5,965 B: 1,869 B over 4 KiB; its RAM is the pool, io and the stack
    flash = int(line.split("flash needs at least ")[1].split(" B")[0].replace(",", ""))
    assert f"over by {flash - 4096:,} B" in line
    ram = int(line.split("RAM needs ")[1].split(" B")[0].replace(",", ""))
    assert ram > DEFAULT_STACK_SIZE and f"over by {ram - 16384:,} B" in line
    assert not out.exists()  # checked before anything is written


def test_a_plan_that_fits_is_written(demo_file, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["export", str(demo_file), "-t", "c", "-o", str(out), "--board", "mps3-an547"]) == 0
    assert "fits mps3-an547" in capsys.readouterr().out
    assert (out / "metadata.json").is_file()


@pytest.mark.parametrize("board, cpu", [("mps2-an386", "cortex-m4"), ("mps2-an385", "cortex-m3"),
                                       ("mps3-an547", "cortex-m55")])
def test_a_board_compiles_for_its_cpu_unless_mcpu_says_otherwise(demo_file, tmp_path, capsys, board, cpu):
    out = tmp_path / "out"
    assert main(["export", str(demo_file), "-t", "c", "-o", str(out), "--board", board]) == 0
    assert json.loads((out / "metadata.json").read_text())["mcpu"] == cpu
    assert f"--cpu {cpu}" in capsys.readouterr().out
    assert main(["export", str(demo_file), "-t", "c", "-o", str(out), "--board", board, "--mcpu", "cortex-m55"]) == 0
    assert json.loads((out / "metadata.json").read_text())["mcpu"] == "cortex-m55"


def test_only_the_memory_over_is_named(demo_file, tmp_path, capsys):
    assert main(["export", str(demo_file), "-t", "c", "-o", str(tmp_path / "o"), "--board", "mps2-an386",
                 "--ram-kb", "32"]) == 2
    line = capsys.readouterr().err.strip()
    assert "does not fit mps2-an386 --ram-kb 32: RAM needs" in line and "flash" not in line


def test_bad_board_and_sizes_are_refused(demo_file, tmp_path, capsys):
    assert main(["export", str(demo_file), "-o", str(tmp_path / "o"), "--board", "mps3-an574"]) == 1
    err = capsys.readouterr().err.strip()
    assert "unknown --board 'mps3-an574'" in err and "mps3-an547" in err
    assert main(["export", str(demo_file), "-o", str(tmp_path / "o"), "--flash-kb", "0"]) == 1
    assert "--flash-kb must be a positive number" in capsys.readouterr().err


def test_boards_bring_their_memories():
    for name, machine in BOARDS.items():
        b = budget(name)
        assert b.flash == machine.flash.length and b.ram == machine.ram.length
        assert (b.external is None) == (machine.external is None)
    assert budget() is None
    assert budget("mps3-an547", flash_kb=64).flash == 64 * 1024


def test_constants_in_external_memory_count_there():
    an547 = budget("mps3-an547")
    big = Needs(constants=3_600_000, params=20_000, host_pool=100_000, io=2_000)
    problems = an547.problems(big)
    assert len(problems) == 1 and "--constants-region external puts the constants in qspi" in problems[0]
    assert an547.problems(Needs(3_600_000, 20_000, 100_000, 2_000, external_constants=True)) == []
    huge = Needs(9_000_000, 20_000, 100_000, 2_000, external_constants=True)
    with pytest.raises(ModelDoesNotFitError, match="qspi needs 9,000,000 B of constants of 8,388,608 B"):
        an547.check(huge)
    # a board without external memory keeps them in flash, as its linker script does
    an386 = budget("mps2-an386")
    assert an386.problems(Needs(3_600_000, 20_000, 100_000, 2_000, external_constants=True)) == []
    assert "over by" in Budget("tiny", 1024, None).problems(Needs(2048, 0, 0, 0, external_constants=True))[0]


def test_the_memories_devices_define_count_in_ram_and_are_named():
    needs = Needs(0, 0, 1_000, 100, stack=1_000,
                  device_memories=(("npu_fast_scratch", 2_000), ("npu_model", 11_520), ("unused", 0)))
    assert needs.ram == 1_000 + 2_000 + 11_520 + 100 + 1_000
    (line,) = Budget("small", None, 10_000).problems(needs)
    assert "RAM needs 15,620 B (host pool 1,000 B + npu_fast_scratch 2,000 B + npu_model 11,520 B + inputs" in line
    assert "unused" not in line and "over by 5,620 B" in line
    assert Budget("exact", None, needs.ram).problems(needs) == []
