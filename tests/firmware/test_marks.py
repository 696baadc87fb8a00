"""Profiling marks: TVMD_FW_MARK(id) seen by the instruction counter inside the measured region, by id, in
order, with the region's instructions so far; compiled away without TVMD_FW_PROFILE."""

from __future__ import annotations

import pytest
from fw_helpers import ARM_CPUS, PROGRAMS, require_tools

from tvmdevice import firmware
from tvmdevice.firmware.elf import read_elf


def build_marks(cpu: str, out, profile: bool) -> firmware.Image:
    require_tools(cpu)
    return firmware.build([PROGRAMS / "marks.c"], [], cpu, out, defines={"TVMD_FW_PROFILE": 1} if profile else None,
                          name="marks-profile" if profile else "marks")


@pytest.mark.parametrize("cpu", ARM_CPUS)
def test_marks_are_recorded_in_order_inside_the_region(cpu, build_dir, tmp_path):
    image = build_marks(cpu, build_dir, profile=True)
    wide = firmware.run(image, ["100", "x"], cwd=tmp_path)
    assert [i for i, _ in wide.marks] == [0, 1, 0xBEEF, 2, 3]  # a 16-bit id spelled whole
    short = firmware.run(image, ["100"], cwd=tmp_path)
    long = firmware.run(image, ["1000"], cwd=tmp_path)
    for result in (short, long):
        assert [i for i, _ in result.marks] == [0, 1, 2, 3]  # 9 and 7 ran outside the region
        counts = [c for _, c in result.marks]
        assert 0 < counts[0] < counts[1] < counts[2] < counts[3]
        # the marks' own instructions are counted apart: what is outside them plus them is the region
        assert counts[3] < result.region_instructions - result.mark_instructions
        assert 4 * 16 < result.mark_instructions < 4 * 200
    # the loops' share grows with n, ten times the iterations: about ten times the instructions
    loop = [b - a for (_, a), (_, b) in zip(long.marks, long.marks[1:])]
    small = [b - a for (_, a), (_, b) in zip(short.marks, short.marks[1:])]
    assert 9 * small[0] < loop[0] < 11 * small[0]
    # the third loop runs six times as many iterations as the second
    assert 5.5 * loop[1] < loop[2] < 6.5 * loop[1]


@pytest.mark.parametrize("cpu", ARM_CPUS[:1])
def test_marks_compile_away_without_profiling(cpu, build_dir, tmp_path):
    plain = build_marks(cpu, build_dir, profile=False)
    marked = build_marks(cpu, build_dir, profile=True)
    assert read_elf(plain.path).symbol("tvmd_fw_mark") is None
    assert read_elf(marked.path).symbol("tvmd_fw_mark") is not None
    quiet = firmware.run(plain, ["100"], cwd=tmp_path)
    loud = firmware.run(marked, ["100"], cwd=tmp_path)
    assert quiet.marks == () and quiet.mark_instructions == 0
    # outside the marks' own instructions, each costs the profiled region a handful more (the call, its
    # argument, the return from the last bit)
    extra = loud.region_instructions - loud.mark_instructions - quiet.region_instructions
    assert 0 < extra <= 4 * 8
