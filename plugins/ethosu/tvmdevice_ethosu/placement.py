"""Placement by Vela's own rules, and the partition's compilation.

An operator passes the device's check when Vela, compiling it alone with the
device's options, places it on the NPU (its supported-operator checks decide;
their reason is the refusal's).  Consecutive operators that pass form a
partition, which Vela compiles once, into one command stream; the partition is
accepted only when the functional model implements every command of that
stream (``csrc/ethosu_stream.c``); otherwise it is refused naming the first
command it does not implement, with Vela's estimate for the partition, and its
operators go to the next device.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from tvmdevice.plugin import Refusal

from .submodel import NotExpressible, write_model
from .vela_compile import VelaError, clock_hz, compile_raw

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.ir import Graph, Operator
    from tvmdevice.kernel import PreparedCall
    from tvmdevice.partition import Partition

__all__ = ["check_operator", "prepare_partition", "vela_figures", "command_name", "stream_refusal"]

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


def stream_refusal(payload: bytes) -> str | None:
    """Why the functional model cannot run this driver payload, or None when it can."""
    import numpy as np

    from . import _ethosu

    code, word, ctrl, opcode, _ = _ethosu.stream_check(np.frombuffer(payload, dtype=np.uint8))
    if code == _ethosu.STREAM_OK:
        return None
    if code == _ethosu.STREAM_MALFORMED:
        return f"Vela's command stream is malformed at word {word}"
    return f"the functional model does not implement {command_name(ctrl, opcode)} (command stream word {word})"


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


@functools.lru_cache(maxsize=512)
def _verdict(model: bytes, key: tuple[tuple[str, Any], ...]) -> str | None:
    try:
        compile_raw(model, dict(key))
    except VelaError as e:
        return f"Vela leaves it to the CPU: {_vela_reason(e)}"
    return None


def check_operator(options: dict[str, Any], graph: "Graph", op: "Operator") -> str | None:
    """None when Vela places ``op`` on the NPU; else the reason (Vela's)."""
    inputs = [t for t in op.inputs if t >= 0 and not graph.tensors[t].is_constant]
    try:
        model = write_model(graph, [op], inputs, op.outputs)
    except NotExpressible as e:
        return f"cannot be handed to Vela: {e}"
    return _verdict(model, _key(options))


def prepare_partition(options: dict[str, Any], graph: "Graph", partition: "Partition") -> "PreparedCall":
    """Compile the partition with Vela into one command stream; refuse what the functional model cannot run."""
    try:
        model = write_model(graph, partition.ops, partition.inputs, partition.outputs)
    except NotExpressible as e:
        raise Refusal(f"cannot be handed to Vela: {e}") from None
    try:
        compiled, _ = compile_raw(model, options)
    except VelaError as e:
        raise Refusal(f"Vela refused the partition: {_vela_reason(e)}") from None
    why = stream_refusal(bytes(compiled.command_stream))
    figures = vela_figures(compiled, options)
    shown = ", ".join(f"{k.removeprefix('vela_')}={v}" for k, v in figures.items())
    raise Refusal(f"{why or 'the functional model runs no command stream yet'} (Vela's estimate: {shown})")
