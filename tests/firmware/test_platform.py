"""The firmware platform end to end: one C program built and run on the host and each Cortex-M, same bytes."""

from __future__ import annotations

import numpy as np
import pytest
from fw_helpers import ALL_CPUS, ARM_CPUS, PROGRAMS, DenseLayer, require_tools

from tvmdevice import firmware
from tvmdevice.firmware.elf import read_elf

SAMPLES = 5


@pytest.fixture(scope="module")
def dense_input(dense_layer, tmp_path_factory):
    """A folder with input.bin: SAMPLES int8 samples of the dense layer's width."""
    work = tmp_path_factory.mktemp("dense-work")
    x = np.random.default_rng(11).integers(-128, 128, size=(SAMPLES, dense_layer.cols), dtype=np.int8)
    (work / "input.bin").write_bytes(x.tobytes())
    return work, x


def build_dense(cpu: str, headers, build_dir, **kwargs) -> firmware.Image:
    require_tools(cpu)
    return firmware.build([PROGRAMS / "dense.c"], [headers], cpu, build_dir, name="dense", **kwargs)


@pytest.mark.parametrize("cpu", ALL_CPUS)
def test_dense_matches_numpy_on_every_cpu(cpu, dense_layer, dense_headers, build_dir, dense_input):
    work, x = dense_input
    image = build_dense(cpu, dense_headers, build_dir)
    out = f"out-{cpu}.bin"
    result = firmware.run(image, ["input.bin", out], cwd=work, timeout=60)
    assert result.status == 0
    assert result.stdout.startswith(f"dense: {SAMPLES} samples, checksum ")
    assert result.stderr == ""
    got = np.frombuffer((work / out).read_bytes(), np.int8).reshape(SAMPLES, dense_layer.rows)
    np.testing.assert_array_equal(got, dense_layer.reference(x))


def test_outputs_identical_on_all_four_cpus(dense_headers, build_dir, dense_input):
    work, _ = dense_input
    outputs = {}
    for cpu in ALL_CPUS:
        image = build_dense(cpu, dense_headers, build_dir)
        result = firmware.run(image, ["input.bin", f"same-{cpu}.bin"], cwd=work, timeout=60)
        outputs[cpu] = ((work / f"same-{cpu}.bin").read_bytes(), result.stdout)
    assert len(set(outputs.values())) == 1, outputs


@pytest.mark.parametrize("cpu", ARM_CPUS)
def test_instruction_counts_are_deterministic_and_plausible(cpu, dense_layer, dense_headers, build_dir,
                                                            dense_input):
    work, _ = dense_input
    image = build_dense(cpu, dense_headers, build_dir)
    first = firmware.run(image, ["input.bin", "count-a.bin"], cwd=work)
    second = firmware.run(image, ["input.bin", "count-b.bin"], cwd=work)
    assert first.instructions == second.instructions
    assert first.region_instructions == second.region_instructions
    assert first.regions == second.regions == SAMPLES
    macs = SAMPLES * dense_layer.rows * dense_layer.cols
    # MVE does 16 int8 multiply-accumulates per instruction; a scalar loop needs a few per MAC.
    assert macs // 16 < first.region_instructions < 20 * macs
    # The whole run adds start-up (stack painting), stdio and semihosting file I/O to the regions.
    assert first.region_instructions < first.instructions < 5_000_000


def test_instructions_scale_with_the_work(dense_headers, build_dir, dense_input, dense_layer, tmp_path):
    require_tools("cortex-m4")
    work, x = dense_input
    (tmp_path / "one.bin").write_bytes(x[:1].tobytes())
    image = build_dense("cortex-m4", dense_headers, build_dir)
    one = firmware.run(image, ["one.bin", "o.bin"], cwd=tmp_path)
    many = firmware.run(image, ["input.bin", "o.bin"], cwd=work)
    assert one.regions == 1
    # Every sample runs the same instructions: the regions add up exactly.
    assert many.region_instructions == SAMPLES * one.region_instructions


def test_host_runs_have_no_instruction_count(dense_headers, build_dir, dense_input):
    work, _ = dense_input
    result = firmware.run(build_dense("host", dense_headers, build_dir), ["input.bin", "h.bin"], cwd=work)
    assert result.instructions is None and result.region_instructions is None and result.stack_used is None


@pytest.mark.parametrize("cpu", ARM_CPUS)
def test_stack_high_water_mark(cpu, dense_headers, build_dir, dense_input):
    work, _ = dense_input
    image = build_dense(cpu, dense_headers, build_dir)
    result = firmware.run(image, ["input.bin", "stack.bin"], cwd=work)
    assert image.stack_size == firmware.DEFAULT_STACK_SIZE
    assert result.stack_used is not None
    assert 64 < result.stack_used < image.stack_size
    assert "tvmdevice-fw" not in result.stderr + result.stdout


@pytest.mark.parametrize("cpu", ALL_CPUS)
def test_footprint(cpu, dense_layer, dense_headers, build_dir):
    image = build_dense(cpu, dense_headers, build_dir)
    fp = firmware.measure(image)
    weights = dense_layer.rows * dense_layer.cols + 4 * dense_layer.rows
    assert fp.flash_code > 0 and fp.ram_bss > 0
    assert fp.flash_constants >= weights
    assert fp.ram >= 8 * (dense_layer.rows + dense_layer.cols)  # the static input and output buffers
    symbol = read_elf(image.path).symbol("dense_weights")
    assert symbol is not None and symbol.size == dense_layer.rows * dense_layer.cols
    rodata = next(s for s in read_elf(image.path).sections if s.name == ".rodata")
    assert rodata.addr <= symbol.value < rodata.addr + rodata.size
    if cpu != "host":
        assert fp.stack == firmware.DEFAULT_STACK_SIZE
        assert fp.flash == fp.flash_code + fp.flash_constants + fp.flash_data
        assert fp.ram_data == fp.flash_data > 0


@pytest.mark.parametrize("cpu", ARM_CPUS)
def test_constants_follow_the_const_array(cpu, tmp_path):
    """Twice the rows: .rodata grows by exactly the extra weights and biases."""
    small = firmware.measure(build_dense(cpu, DenseLayer(16, 64).write_header(tmp_path / "s"), tmp_path / "s"))
    large = firmware.measure(build_dense(cpu, DenseLayer(32, 64).write_header(tmp_path / "l"), tmp_path / "l"))
    assert large.flash_constants - small.flash_constants == 16 * 64 + 16 * 4
    assert large.ram == small.ram + 8 * 16  # the output buffer: 8 samples of 16 more rows


def test_build_is_cached_until_an_input_changes(dense_headers, tmp_path):
    require_tools("cortex-m3")
    first = build_dense("cortex-m3", dense_headers, tmp_path)
    again = build_dense("cortex-m3", dense_headers, tmp_path)
    assert not first.cached and again.cached and again.key == first.key
    other = build_dense("cortex-m3", dense_headers, tmp_path, defines={"UNUSED_FLAG": 1})
    assert not other.cached and other.key != first.key
    # Same file names, other header contents: the key covers the headers of the include folders.
    changed = DenseLayer(32, 64, seed=99).write_header(tmp_path / "changed")
    rebuilt = build_dense("cortex-m3", changed, tmp_path)
    assert not rebuilt.cached and rebuilt.key not in (first.key, other.key)


def test_region_markers_exist_on_every_image(dense_headers, build_dir):
    for cpu in ALL_CPUS:
        elf = read_elf(build_dense(cpu, dense_headers, build_dir).path)
        begin, end = elf.symbol("tvmd_fw_region_begin"), elf.symbol("tvmd_fw_region_end")
        assert begin is not None and end is not None and begin.value != end.value
