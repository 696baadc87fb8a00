"""Placement by Vela's own rules, and the partition's compilation.

An operator passes the device's check when Vela, compiling it alone with the
device's options, places it on the NPU (its supported-operator checks decide;
their reason is the refusal's) and the functional model implements every
command and field of the command stream Vela made for it (``csrc/``: the first
command or field it does not implement is named).  Consecutive operators that
pass form a partition, which Vela compiles once, into one command stream that
the same check decides again; the partition becomes one call of the partition
kernel (``csrc/ethosu_kernel.c``), with Vela's estimate in its details.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any

from tvmdevice.plugin import Refusal

from .accumulator_width import accumulator_refusal
from .element_check import PER_ELEMENT, element_refusal
from .mul_scale import mul_scale_refusal
from .relu_scale import relu_scale_refusal
from .submodel import NotExpressible, write_model
from .vela_compile import VelaError, clock_hz, compile_raw

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator
    from tvmdevice.kernel import PreparedCall
    from tvmdevice.partition import Partition

__all__ = ["check_operator", "prepare_partition", "vela_figures", "command_name", "stream_check", "stream_refusal"]

_REASON = re.compile(r"^Reason:\s*(.+)$", re.MULTILINE)


def _vela_reason(error: VelaError) -> str:
    reasons = list(dict.fromkeys(_REASON.findall(error.log)))
    return "; ".join(reasons) if reasons else str(error).removeprefix("Compilation failed: ").strip()


def command_name(ctrl: int, opcode: int) -> str:
    """The name Vela's register definitions give a command word's (control, opcode), or a driver action's."""
    from ethosu.vela.ethos_u55_regs import ethos_u55_regs as regs

    if ctrl == 0xFFFFFFFF:
        return f"driver action {opcode:#x}"
    table = regs.cmd0 if ctrl == 0 else regs.cmd1
    try:
        return str(table(opcode).name)
    except ValueError:
        return f"unknown cmd{ctrl} opcode {opcode:#x}"


def _regions(compiled: Any) -> list[int]:
    """The sizes of the regions Vela's raw output addresses: 0 read-only, 1 scratch, 2 fast scratch."""
    return [len(bytes(compiled.read_only.data)), int(compiled.scratch.size), int(compiled.scratch_fast.size)]


def stream_check(payload: bytes, regions: list[int]) -> tuple[str | None, int]:
    """Why the functional model cannot run this driver payload (None when it can), and the decoded
    weights its working memory must hold."""
    import numpy as np

    from . import _ethosu

    code, word, ctrl, opcode, _, field, slots = _ethosu.stream_check(np.frombuffer(payload, dtype=np.uint8),
                                                                      regions)
    if code == _ethosu.STREAM_OK:
        return None, int(slots)
    if code == _ethosu.STREAM_MALFORMED:
        return f"Vela's command stream is malformed at word {word}", 0
    what = command_name(ctrl, opcode) + (f" with this {field}" if field else "")
    return f"the functional model does not implement {what} (command stream word {word})", 0


def stream_refusal(payload: bytes, regions: list[int] | None = None) -> str | None:
    """Why the functional model cannot run this driver payload, or None when it can."""
    return stream_check(payload, regions or [])[0]


def vela_figures(compiled: Any, options: dict[str, Any]) -> dict[str, Any]:
    """Vela's estimates for a compiled model: NPU cycles, time at the system config's clock, SRAM, flash, MACs."""
    perf = compiled.perf_report
    memories = perf.memories
    hz = clock_hz(options)

    def peak(name: str) -> int:
        return int(memories[name].peakUsage) if name in memories else 0

    return {
        "vela_npu_cycles": int(perf.npuCycles),
        "vela_time_us": round(int(perf.npuCycles) / hz * 1e6, 3),
        "vela_clock_mhz": round(hz / 1e6, 3),
        "vela_sram_bytes": peak("Sram"),
        "vela_flash_bytes": peak("OffChipFlash"),
        "vela_macs": int(perf.macCount),
        "vela_npu_operations": int(perf.npuOps),
    }


def _key(options: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(options.items()))


#: Verdicts by (the operator's model's digest, options): placement asks once per operator and device,
#: but the same operator recurs across compilations (tests, the CLI's info then run).
_VERDICTS: dict[tuple[bytes, tuple[tuple[str, Any], ...]], str | None] = {}
_MAX_VERDICTS = 1024


def _verdict(model: bytes, key: tuple[tuple[str, Any], ...]) -> str | None:
    cache_key = (hashlib.sha256(model).digest(), key)
    if cache_key in _VERDICTS:
        return _VERDICTS[cache_key]
    try:
        compiled, _ = compile_raw(model, dict(key))
    except VelaError as e:
        verdict: str | None = f"Vela leaves it to the CPU: {_vela_reason(e)}"
    else:
        verdict = stream_check(bytes(compiled.command_stream), _regions(compiled))[0]
    if len(_VERDICTS) >= _MAX_VERDICTS:
        _VERDICTS.clear()
    _VERDICTS[cache_key] = verdict
    return verdict


def _crashes_vela(op: "Operator") -> str | None:
    """What of ``op`` Vela's compiler core, which runs in this process, dies on (None: nothing known).

    Measured with Vela 5.2.0: a PADV2 without its constant-values input (TFLite pads with the zero
    point then) ends the process with SIGSEGV inside ``regor_compile``.
    """
    if op.type == "PADV2" and (len(op.inputs) < 3 or op.inputs[2] < 0):
        return "Vela 5.2.0 crashes on a PADV2 without its constant-values input"
    return None


def check_operator(options: dict[str, Any], graph: "Graph", op: "Operator") -> str | None:
    """None when Vela places ``op`` on the NPU and the functional model runs its stream; else the reason."""
    inputs = [t for t in op.inputs if t >= 0 and not graph.tensors[t].is_constant]
    differs = None if options.get("allow_mul_scale_difference") else mul_scale_refusal(graph, op)
    if differs is not None:
        return differs
    differs = relu_scale_refusal(graph, op)
    if differs is not None:
        return differs
    differs = accumulator_refusal(graph, op)
    if differs is not None:
        return differs
    broadcast = _broadcast_rank_refusal(graph, op)
    if broadcast is not None:
        return broadcast
    crashes = _crashes_vela(op)
    if crashes is not None:
        return f"cannot be handed to Vela: {crashes}"
    try:
        model = write_model(graph, [op], inputs, op.outputs)
    except NotExpressible as e:
        return f"cannot be handed to Vela: {e}"
    verdict = _verdict(model, _key(options))
    if verdict is None and op.type in PER_ELEMENT:
        return _element_verdict(options, graph, op, model)
    return verdict


#: The highest rank Vela's 4-D feature maps hold a broadcast of as TFLite defines it.
_BROADCAST_RANK = 4


def _broadcast_rank_refusal(graph: "Graph", op: "Operator") -> str | None:
    """Why an operator broadcasting across more than four dimensions stays off the NPU, or None.

    Vela takes such an operator and lowers its feature maps to four dimensions, and the broadcast it
    makes of them is not TFLite's: measured, SUB of (2, 3, 4, 2, 3) and (3, 1, 1, 3) differs from
    tflite-micro in 96 of 144 values (48 of 72 with a leading 1), while the same shapes merged to
    four dimensions by hand, and rank-5 operands of equal shapes, run bit-exact.
    """
    shapes = [tuple(graph.tensors[t].shape) for t in op.inputs if t >= 0]
    if len({s for s in shapes if s}) <= 1 or max((len(s) for s in shapes), default=0) <= _BROADCAST_RANK:
        return None
    listed = " and ".join(str(list(s)) for s in shapes)
    return (f"a broadcast of {listed} across more than {_BROADCAST_RANK} dimensions: Vela's 4-D lowering of it "
            "differs from TFLite's broadcast")


def _element_verdict(options: dict[str, Any], graph: "Graph", op: "Operator", model: bytes) -> str | None:
    """:func:`element_refusal`, once per operator model and options."""
    cache_key = (hashlib.sha256(b"every input" + model).digest(), _key(options))
    if cache_key not in _VERDICTS:
        if len(_VERDICTS) >= _MAX_VERDICTS:
            _VERDICTS.clear()
        _VERDICTS[cache_key] = element_refusal(options, graph, op)
    return _VERDICTS[cache_key]


def prepare_partition(options: dict[str, Any], graph: "Graph", partition: "Partition") -> "PreparedCall":
    """Compile the partition with Vela into one command stream: one call of the partition kernel.

    :raises Refusal: Vela's reason, or the first command or field the functional model does not implement.
    """
    import numpy as np
    from tvmdevice.plugin import ParamsStruct, PreparedCall

    from . import _ethosu
    from .params import MAX_IO, PARTITION_PARAMS

    try:
        model = write_model(graph, partition.ops, partition.inputs, partition.outputs)
    except NotExpressible as e:
        raise Refusal(f"cannot be handed to Vela: {e}") from None
    try:
        compiled, _ = compile_raw(model, options)
    except VelaError as e:
        raise Refusal(f"Vela refused the partition: {_vela_reason(e)}") from None
    payload = bytes(compiled.command_stream)
    read_only = bytes(compiled.read_only.data)
    why, slots = stream_check(payload, _regions(compiled))
    figures = vela_figures(compiled, options)
    if why is not None:
        shown = ", ".join(f"{k.removeprefix('vela_')}={v}" for k, v in figures.items())
        raise Refusal(f"{why} (Vela's estimate: {shown})")
    io = [*compiled.inputs, *compiled.outputs]
    tensors = [graph.tensors[t] for t in (*partition.inputs, *partition.outputs)]
    if len(io) != len(tensors) or len(io) > MAX_IO:
        raise Refusal(f"Vela's raw output has {len(io)} inputs and outputs, the partition {len(tensors)} "
                      f"(at most {MAX_IO})")
    for place, tensor in zip(io, tensors):
        if int(place.size) != tensor.nbytes or int(place.region) not in (1, 2):
            raise Refusal(f"Vela places tensor {tensor.name!r} ({tensor.nbytes} B) as {place.size} B in region "
                          f"{place.region}")
    slots += slots % 2  # the decoder's workspace after the weights stays 4-byte aligned
    # the plan holds Vela's scratch only; its fast scratch and the functional model's own memory live
    # outside it (csrc/ethosu_memory.h), reported beside it
    scratch = int(compiled.scratch.size)
    fast = int(compiled.scratch_fast.size)
    pad = [0] * (MAX_IO - len(io))
    params = ParamsStruct(
        PARTITION_PARAMS,
        command_stream=np.frombuffer(payload, np.uint8).copy(), command_stream_size=len(payload),
        num_inputs=len(compiled.inputs), num_outputs=len(compiled.outputs),
        read_only=np.frombuffer(read_only or b"\0", np.uint8).copy(), read_only_size=len(read_only),
        scratch_size=scratch, fast_scratch_size=fast, weight_slots=slots,
        io_region=[int(p.region) for p in io] + pad, io_offset=[int(p.address) for p in io] + pad,
        io_size=[int(p.size) for p in io] + pad)
    details = {**figures, "command_stream_bytes": len(payload), "read_only_bytes": len(read_only),
               "vela_scratch_bytes": scratch, "vela_fast_scratch_bytes": fast,
               "npu_model_bytes": int(_ethosu.work_bytes(slots))}
    # the inputs and outputs Vela placed in its arena (region 1) are planned there: the NPU addresses them
    # in place, and the kernel copies only those the plan could not place (csrc/ethosu_kernel.c)
    in_arena = {k: int(place.address) for k, place in enumerate(io) if int(place.region) == 1}
    return PreparedCall(f"tvmd_ethosu_partition{partition.index}", _ethosu.PARTITION_KERNEL, params, scratch,
                        details=details, in_scratch=in_arena)
