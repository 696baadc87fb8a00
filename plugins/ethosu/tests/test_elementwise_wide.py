"""32-bit elementwise operations and REDUCE_SUM (csrc/ethosu_elementwise_wide.c, ethosu_pool.c) on
hand-made command streams: the values Vela's SOFTMAX does not meet (CLZ of 0, negative shifts,
saturation), the NHCWB16 layout of 32-bit elements, and the refusals."""

from __future__ import annotations

import numpy as np
import pytest
from test_stream import payload

from tvmdevice_ethosu import _ethosu

MUL, ADD, SUB, MAX, CLZ, SHR, SHL = 0, 1, 2, 4, 7, 8, 9
TFL, NATURAL = 0, 2
S32 = 1 | 2 << 2  # IFM/IFM2_PRECISION: signed, 32-bit, NHWC
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def cmd0(opcode: int, param: int) -> int:
    return (param & 0xFFFF) << 16 | opcode


def cmd1(opcode: int, value: int, param: int = 0) -> list[int]:
    return [0x4000 | param << 16 | opcode, value & 0xFFFFFFFF]


def fmap(depth: int, *, ofm: bool = False, ifm2: bool = False, base: int = 0, bricks: bool = False) -> list[int]:
    """The registers of a 1x1x``depth`` 32-bit feature map: IFM in region 1, IFM2 in region 1, OFM in region 2."""
    stride_c, stride_x = (64, 64) if bricks else (4, 4 * depth)
    fmt = 1 << 6 if bricks else 0
    if ofm:
        return [cmd0(0x11F, 2), cmd0(0x111, 0), cmd0(0x112, 0), cmd0(0x113, depth - 1), cmd0(0x11A, 0), cmd0(0x11B, 0),
                cmd0(0x118, 0), *cmd1(0x10, base), *cmd1(0x14, stride_x), *cmd1(0x15, stride_x * 2),
                *cmd1(0x16, stride_c)]  # OFM_PRECISION (with the format) is the caller's
    if ifm2:
        return [cmd0(0x18F, 1), cmd0(0x18B, 0), cmd0(0x18A, 0), cmd0(0x185, S32 | fmt), cmd0(0x189, 0), cmd0(0x180, 0),
                *cmd1(0x80, base), *cmd1(0x84, stride_x), *cmd1(0x85, stride_x), *cmd1(0x86, stride_c)]
    return [cmd0(0x10F, 1), cmd0(0x10B, 0), cmd0(0x10A, 0), cmd0(0x104, depth - 1), cmd0(0x105, S32 | fmt),
            cmd0(0x109, 0), cmd0(0x107, 0), *cmd1(0x00, base), *cmd1(0x04, stride_x), *cmd1(0x05, stride_x),
            *cmd1(0x06, stride_c)]


def run(op: int, mode: int, a, b=None, *, scale=(1, 0), global_scale=True, round_mode=TFL, ofm_bricks=False,
        extra=(), out_depth=None):
    """Run one operation on int32 ``a`` (and ``b``); the OFM's int32 values, or the refused field."""
    a = np.asarray(a, np.int32)
    depth = a.size
    out_depth = depth if out_depth is None else out_depth
    words = [*fmap(depth), *fmap(out_depth, ofm=True, bricks=ofm_bricks),
             cmd0(0x114, 1 | 2 << 1 | int(ofm_bricks) << 6 | int(global_scale) << 8 | round_mode << 14),
             cmd0(0x125, 0), cmd0(0x126, 0x8000), cmd0(0x127, 0x7FFF), cmd0(0x120, 0), cmd0(0x121, 0), cmd0(0x122, 0),
             cmd0(0x100, 0), cmd0(0x101, 0), cmd0(0x102, 0), cmd0(0x103, 0),
             *cmd1(0x24, scale[0], scale[1]), *cmd1(0x25, 1), *cmd1(0x26, 1)]
    region1 = a.view(np.uint8)
    if b is not None:
        words += fmap(depth, ifm2=True, base=4 * depth)
        region1 = np.concatenate([a, np.asarray(b, np.int32)]).view(np.uint8)
    words += [*extra, op | mode << 16, 0xFFFF_0000]
    out = np.zeros(128 if ofm_bricks else 4 * out_depth, np.uint8)
    code, field, *_ = _ethosu.stream_run(np.frombuffer(payload(*words), np.uint8),
                                         [np.zeros(16, np.uint8), region1.copy(), out])
    if code != _ethosu.STREAM_OK:
        return field
    return out.view(np.int32)


def test_clz_counts_the_leading_zero_bits_of_32():
    values = [0, 1, -1, INT32_MAX, 0x0001_0000, INT32_MIN, 255]
    assert run(0x006, CLZ, values, global_scale=False).tolist() == [32, 31, 0, 1, 15, 0, 24]


def test_shr_rounds_half_up_by_the_last_bit_shifted_out():
    a = [-5, -6, 5, 6, -7, 7, INT32_MIN, INT32_MAX, 100]
    b = [1, 1, 1, 1, 2, 2, 31, 31, 0]
    got = run(0x006, SHR, a, b, global_scale=False, round_mode=NATURAL).tolist()
    assert got == [(x + (1 << s - 1 if s else 0)) >> s for x, s in zip(a, b)] == [-2, -3, 3, 3, -2, 2, -1, 1, 100]


def test_shl_shifts_in_32_bits():
    got = run(0x006, SHL, [1, 3, -1, 0x4000_0000, 5], [31, 2, 4, 1, 0], global_scale=False).tolist()
    assert got == [INT32_MIN, 12, -16, INT32_MIN, 5]


@pytest.mark.parametrize("multiplier", [0x4000_0000, 1, 0x7FFF_FFFF])
def test_a_32_bit_mul_is_rounded_by_the_shift_alone(multiplier):
    a = [2**30, -(2**30), 12345678, -12345678, 3, -3, INT32_MIN]
    b = [2**30, 2**30, 87654321, 87654321, 2**30, 2**30, INT32_MIN]
    want = [min((x * y + 2**30) >> 31, INT32_MAX) for x, y in zip(a, b)]
    assert run(0x006, MUL, a, b, scale=(multiplier, 31)).tolist() == want


@pytest.mark.parametrize("round_mode", [TFL, NATURAL])
def test_a_32_bit_mul_above_a_shift_of_31_rounds_twice_in_the_tfl_mode(round_mode):
    # the last two products, 2^39 - 256 and -2^39, round apart: TFL 1 and -1, NATURAL 0 and 0
    a = [2**20 + 3, -(2**20 + 3), 2**31 - 1, -(2**31), 2**31 - 1, -(2**31)]
    b = [2**29 + 12345, 2**29 + 12345, 2**31 - 1, 2**31 - 1, 256, 256]
    shift = 40

    def rescale(v):  # ethosu_apply_scale with the multiplier 1
        r = 1 << shift - 1
        if round_mode == TFL:
            r += 1 << 30 if v >= 0 else -(1 << 30)
        return (v + r) >> shift

    got = run(0x006, MUL, a, b, scale=(0x7654_3210, shift), round_mode=round_mode).tolist()
    assert got == [rescale(x * y) for x, y in zip(a, b)]
    assert got[-2:] == ([1, -1] if round_mode == TFL else [0, 0])


def test_32_bit_results_saturate():
    assert run(0x006, MUL, [2**30, -(2**30)], [4, 4]).tolist() == [INT32_MAX, INT32_MIN]
    assert run(0x006, ADD, [INT32_MAX, INT32_MIN, 5], [1, -1, -7]).tolist() == [INT32_MAX, INT32_MIN, -2]
    assert run(0x006, SUB, [INT32_MIN, 9], [1, 10]).tolist() == [INT32_MIN, -1]


def test_32_bit_elements_in_bricks_of_16_channels():
    a = np.arange(20, dtype=np.int32) * 1000 - 7
    out = run(0x006, ADD, a, np.full(20, 7), ofm_bricks=True)
    # channel c at (c div 16) * stride_c + (c mod 16) * 4 bytes: bricks of 64 bytes
    assert out[:16].tolist() == (a[:16] + 7).tolist() and out[16:20].tolist() == (a[16:] + 7).tolist()
    assert not out[20:].any()


def test_reduce_sum_adds_every_channel_into_one():
    a = [INT32_MAX // 4, 12, -3, 2**29, 7]
    assert run(0x005, 2, a, global_scale=True, round_mode=NATURAL, out_depth=1).tolist() == [sum(a)]
    assert run(0x005, 2, [INT32_MAX, 1], round_mode=NATURAL, out_depth=1).tolist() == [INT32_MAX]


@pytest.mark.parametrize("op, mode, kwargs, field", [
    (0x006, MAX, {}, "elementwise mode (LRELU, ABS, MIN or MAX) with a 16- or 32-bit feature map"),
    (0x006, SHR, {"global_scale": False, "round_mode": TFL}, "OFM_PRECISION round_mode (SHR not NATURAL)"),
    (0x006, CLZ, {"global_scale": True}, "OFM_PRECISION scale_mode (CLZ/SHL/SHR with a global scale)"),
    (0x006, MUL, {"scale": (1, 63)}, "OFM_SCALE (overflows 64 bits)"),
    (0x005, 2, {"out_depth": 1, "extra": [cmd0(0x10A, 1), cmd0(0x120, 1)]},  # IFM 2 wide, a 1x2 kernel
     "KERNEL_HEIGHT_M1/KERNEL_WIDTH_M1 (REDUCE_SUM over a window)"),
    (0x005, 2, {"out_depth": 2}, "OFM_DEPTH_M1 (REDUCE_SUM to more than one channel)"),
    (0x005, 2, {"out_depth": 1, "scale": (3, 1)}, "OFM_SCALE (REDUCE_SUM with a scale)"),
    (0x005, 2, {"out_depth": 1, "extra": [cmd0(0x100, 1)]},  # IFM_PAD_TOP
     "IFM_PAD (padding with REDUCE_SUM or a 16- or 32-bit feature map)"),
])
def test_what_the_model_does_not_implement_is_refused_naming_the_field(op, mode, kwargs, field):
    b = [1, 2, 3] if op == 0x006 and mode != CLZ else None
    assert run(op, mode, [1, 2, 3], b, **kwargs) == field


def test_a_16_bit_mul_whose_rescale_could_overflow_64_bits_is_refused():
    s16 = 1 | 1 << 2  # IFM/IFM2_PRECISION: signed 16-bit
    as_16_bit = [cmd0(0x105, s16), cmd0(0x185, s16), cmd0(0x114, 1 | 1 << 1 | 1 << 8)]
    far = [cmd0(0x109, 0x8000), cmd0(0x189, 0x8000)]  # zero points -32768: operands up to 65535
    # the int32 inputs' bytes read as 16-bit elements: IFM (1, 0), IFM2 (3, 0); products times 2^30 >> 30
    ran = run(0x006, MUL, [1, 2], [3, 4], scale=(0x4000_0000, 30), extra=as_16_bit)
    assert ran.view(np.int16)[:2].tolist() == [3, 0]
    assert run(0x006, MUL, [1, 2], [3, 4], scale=(0xFFFF_FFFF, 40), extra=as_16_bit + far) == \
        "OFM_SCALE (overflows 64 bits)"


def test_an_8_bit_mul_whose_rescale_could_overflow_64_bits_is_refused():
    # the 8-bit operation shares the wide one's bound: operands less far zero points, times the OFM scale
    as_8_bit = [cmd0(0x105, 1), cmd0(0x185, 1), cmd0(0x114, 1 | 1 << 8)]  # signed 8-bit IFM, IFM2 and OFM
    far = [cmd0(0x109, 0x8000), cmd0(0x189, 0x8000)]  # zero points -32768: operands up to 32895
    # the int32 inputs' bytes read as 8-bit elements: IFM (1, 0), IFM2 (3, 0); products times 2^30 >> 30
    ran = run(0x006, MUL, [1, 2], [3, 4], scale=(0x4000_0000, 30), extra=as_8_bit)
    assert ran.view(np.int8)[:2].tolist() == [3, 0]
    assert run(0x006, MUL, [1, 2], [3, 4], scale=(0xFFFF_FFFF, 63), extra=as_8_bit + far) == \
        "OFM_SCALE (overflows 64 bits)"
