"""The command-stream check (csrc/ethosu_stream.c) on Vela's own payloads and on hand-made ones."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tvmdevice.aot.builder import single_op_model

from tvmdevice_ethosu import _ethosu
from tvmdevice_ethosu.device import DEVICE_TYPE
from tvmdevice_ethosu.placement import command_name, stream_refusal
from tvmdevice_ethosu.vela_compile import compile_raw


def check(payload: bytes, regions=()):
    return _ethosu.stream_check(np.frombuffer(payload, dtype=np.uint8), regions)


def payload(*commands: int) -> bytes:
    """A COP1 payload as Vela lays it out: CONFIG (3 words), NOPs to align, CMDSTREAM, the commands."""
    words = [0x31504F43, 0x0001_0001, 0, 0]
    while (len(words) + 1) % 4:
        words.append(0x05)
    words.append(0x02 | (len(commands) << 16))
    return struct.pack(f"<{len(words) + len(commands)}I", *words, *commands)


def test_settings_and_stop_are_accepted_and_counted():
    # NPU_SET_IFM_PAD_TOP (cmd0 0x103), NPU_SET_IFM_BASE0 (cmd1 0x000) + payload, NPU_OP_STOP
    code, _, _, _, commands, _, _ = check(payload(0x0001_0103, 0x4000, 0x1234, 0xFFFF_0000))
    assert (code, commands) == (_ethosu.STREAM_OK, 3)


def test_an_operation_the_model_lacks_is_refused_naming_it():
    code, word, ctrl, opcode, _, field, _ = check(payload(0x0001_0103, 0x0000_0001, 0xFFFF_0000))
    assert code == _ethosu.STREAM_UNSUPPORTED
    assert (word, command_name(ctrl, opcode), field) == (9, "NPU_OP_IRQ", None)


def test_a_field_the_model_lacks_is_refused_naming_it():
    # NPU_OP_CONV with the IFM precision left at unsigned 8-bit (0): the model runs signed 8- and 16-bit only
    code, _, ctrl, opcode, _, field, _ = check(payload(0x0000_0105, 0x0000_0002, 0xFFFF_0000))
    assert code == _ethosu.STREAM_UNSUPPORTED
    assert (command_name(ctrl, opcode), field) == ("NPU_OP_CONV", "IFM_PRECISION (not signed 8- or 16-bit)")


def _claiming(length: int, *commands: int) -> bytes:
    """A payload whose CMDSTREAM action claims ``length`` words but holds ``commands``."""
    data = bytearray(payload(*commands))
    data[28:32] = struct.pack("<I", 0x02 | (length << 16))
    return bytes(data)


@pytest.mark.parametrize("data", [
    b"COP2" + payload(0xFFFF_0000)[4:],  # not COP1
    payload(0x4000),                    # a cmd1 without its payload word
    _claiming(5, 0xFFFF_0000),          # a length beyond the payload
    b"COP1",                            # no command stream action
    payload(0xC000),                    # control field 3
    b"",
])
def test_malformed_payloads_are_refused(data):
    assert check(data)[0] == _ethosu.STREAM_MALFORMED


def test_the_well_formed_twin_of_each_malformed_payload_passes():
    assert check(payload(0x4000, 0))[0] == _ethosu.STREAM_OK
    assert check(_claiming(1, 0xFFFF_0000))[0] == _ethosu.STREAM_OK


def _vela(op_type: str, shape, **params):
    compiled, _ = compile_raw(single_op_model(op_type, shape, **params), DEVICE_TYPE.default_options())
    regions = [len(bytes(compiled.read_only.data)), compiled.scratch.size, compiled.scratch_fast.size]
    return bytes(compiled.command_stream), regions


def test_vela_s_stream_for_a_fully_connected_is_accepted():
    data, regions = _vela("FULLY_CONNECTED", (1, 8))
    assert data[:4] == b"COP1"
    assert stream_refusal(data, regions) is None


def test_vela_s_stream_for_an_add_of_equal_input_scales_is_accepted():
    data, regions = _vela("ADD", (1, 8, 8, 4))
    assert stream_refusal(data, regions) is None


def test_vela_s_stream_for_an_add_of_unequal_input_scales_is_accepted():
    data, regions = _vela("ADD", (1, 8, 8, 4), input2_scale=0.2)
    assert stream_refusal(data, regions) is None


def _words(data: bytes) -> list[int]:
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def _cmd1_at(words: list[int], name: str) -> int:
    """The index of the first cmd1 ``name`` in a payload's command stream (which starts at word 8)."""
    i = 8
    while i < len(words):
        ctrl, opcode = words[i] >> 14 & 3, words[i] & 0x3FF
        if ctrl == 1 and command_name(ctrl, opcode) == name:
            return i
        i += 2 if ctrl == 1 else 1
    raise AssertionError(f"{name} not in the stream")


def _tfl_rescale(x: int, scale: int, shift: int, left_shift: int) -> int:
    """``x * scale / 2^shift`` as TFLite's reference kernels compute it for ``x << left_shift`` (the left
    shift folded into ``shift``): SaturatingRoundingDoublingHighMul by ``scale`` (halves up), then
    RoundingDivideByPOT (halves away from zero) by the rest of the shift."""
    high = (x * (1 << left_shift) * scale + (1 << 30)) >> 31
    exponent = shift + left_shift - 31
    mask = (1 << exponent) - 1
    return (high >> exponent) + (1 if (high & mask) > (mask >> 1) + (high < 0) else 0)


@pytest.mark.parametrize("scale, shift", [(0x7FFFFE00, 32), (0x55555555, 33), (0x40000001, 31), (0x4CCCCCCD, 34)])
@pytest.mark.parametrize("dtype, left_shift", [("int8", 20), ("int16", 15)])
def test_the_32_bit_operand_scale_rounds_twice_as_tflite_does_for_its_left_shift(scale, shift, dtype, left_shift):
    # Vela's stream for an ADD of input scales 0.05 and 0.2: IFM (the smaller scale) is operand A, scaled
    # by OPA_SCALE (IFM_PRECISION scale_mode OPA_32).  With OPA_SCALE patched to (scale, shift), IFM2 at its
    # zero point and the unit OFM scale, each output is operand A after its scaling.  TFLite shifts 8-bit
    # operands left by 20 bits, 16-bit ones by 15.
    model = single_op_model("ADD", (1, 4, 4, 16), input_scale=0.05, input2_scale=0.2, input_dtype=dtype)
    compiled, _ = compile_raw(model, DEVICE_TYPE.default_options())
    words = _words(bytes(compiled.command_stream))
    i = _cmd1_at(words, "NPU_SET_OPA_SCALE")
    words[i:i + 2] = [(words[i] & 0xFFFF) | shift << 16, scale]
    i = _cmd1_at(words, "NPU_SET_OFM_SCALE")
    words[i:i + 2] = [words[i] & 0xFFFF, 1]
    ifm, ifm2, ofm = (*compiled.inputs, *compiled.outputs)
    assert (ifm.zero_point, ifm2.zero_point, ofm.zero_point) == ([0], [0], [0])
    values = np.arange(-128, 128).astype(dtype)
    scratch = np.zeros(compiled.scratch.size, np.uint8)
    scratch[ifm.address:ifm.address + values.nbytes] = values.view(np.uint8)
    regions = [np.zeros(16, np.uint8), scratch, np.zeros(16, np.uint8)]
    code, field, *_ = _ethosu.stream_run(np.frombuffer(struct.pack(f"<{len(words)}I", *words), np.uint8), regions)
    assert (code, field) == (_ethosu.STREAM_OK, None)
    got = scratch[ofm.address:ofm.address + values.nbytes].view(dtype).astype(int).tolist()
    # the first rounding of TFLite's multiply is at bit 31 of (x << L) * scale: bit 31 - L of x * scale
    want = [_tfl_rescale(x, scale, shift, left_shift) for x in range(-128, 128)]
    assert got == want
    if scale == 0x7FFFFE00:  # here rounding once, at the shift, differs: x * scale / 2^32 is just below x / 2
        assert [(x * scale + (1 << (shift - 1))) >> shift for x in range(-128, 128)] != want


def test_a_region_too_small_for_the_stream_is_refused():
    data, regions = _vela("FULLY_CONNECTED", (1, 8))
    assert stream_refusal(data, [regions[0], 0, 0]) is not None


def _dma(src_region: int, dst_region: int, src: int, dst: int, length: int) -> bytes:
    # NPU_SET_DMA0_SRC_REGION / _DST_REGION (cmd0), NPU_SET_DMA0_SRC / _DST / _LEN (cmd1), NPU_OP_DMA_START,
    # NPU_OP_DMA_WAIT, NPU_OP_STOP
    return payload(src_region << 16 | 0x130, dst_region << 16 | 0x131, 0x4030, src, 0x4031, dst, 0x4032, length,
                   0x0010, 0x0011, 0xFFFF_0000)


def test_dma_copies_between_regions_and_counts_its_bytes():
    regions = [np.zeros(4, np.uint8), np.arange(32, dtype=np.uint8), np.zeros(16, np.uint8)]
    code, field, commands, operations, macs, dma_bytes = _ethosu.stream_run(
        np.frombuffer(_dma(1, 2, 8, 4, 10), np.uint8), regions)
    assert (code, field, operations, macs, dma_bytes) == (_ethosu.STREAM_OK, None, 2, 0, 10)
    assert regions[2].tolist() == [0] * 4 + list(range(8, 18)) + [0] * 2


def test_a_zero_length_dma_from_an_empty_region_moves_nothing():
    regions = [np.zeros(4, np.uint8), np.zeros(0, np.uint8), np.full(8, 7, np.uint8)]
    code, field, _, operations, _, dma_bytes = _ethosu.stream_run(np.frombuffer(_dma(1, 2, 0, 8, 0), np.uint8), regions)
    assert (code, field, operations, dma_bytes) == (_ethosu.STREAM_OK, None, 2, 0)
    assert regions[2].tolist() == [7] * 8


def test_dma_into_the_read_only_region_or_past_a_region_is_refused():
    code, _, _, _, _, field, _ = check(_dma(1, 0, 0, 0, 4), [16, 16])
    assert (code, field) == (_ethosu.STREAM_UNSUPPORTED, "DMA0_DST_REGION (read-only)")
    code, _, _, _, _, field, _ = check(_dma(1, 2, 8, 0, 16), [16, 16, 16])
    assert (code, field) == (_ethosu.STREAM_UNSUPPORTED, "DMA0 addresses (outside the region)")


# A register setting or an operation, with realistic opcodes: fuzzing the decoder and the operations' checks.
_word = st.one_of(
    st.builds(lambda op, param: param << 16 | op, st.integers(0x100, 0x1FF), st.integers(0, 0xFFFF)),  # cmd0 setting
    st.builds(lambda op: op, st.sampled_from([0x002, 0x003, 0x005, 0x006, 0x010, 0x011, 0x012])),  # operations
    st.builds(lambda op, payload_: [0x4000 | op, payload_], st.integers(0, 0xFF), st.integers(0, 0xFFFFFFFF)),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_word, max_size=60), st.lists(st.integers(0, 300), min_size=3, max_size=4))
def test_random_streams_never_crash_the_model(words, sizes):
    flat = [w for x in words for w in (x if isinstance(x, list) else [x])]
    data = np.frombuffer(payload(*flat, 0xFFFF_0000), np.uint8)
    regions = [np.zeros(n, np.uint8) for n in sizes]
    code = check(bytes(data), sizes)[0]
    assert code in (_ethosu.STREAM_OK, _ethosu.STREAM_UNSUPPORTED, _ethosu.STREAM_MALFORMED)
    assert _ethosu.stream_run(data, regions)[0] == code  # execution checks every operation the same way
