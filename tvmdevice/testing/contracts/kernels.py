"""The kernels contract: every declared operator is bit-exact with the host reference.

For each operator type the device declares, single-operator models are
generated across the operator's parameter space (:mod:`.kernel_space`).
Variants the device declines (its ``check_operator`` pre-filter gives a
reason, or its ``prepare_operator`` raises :class:`~tvmdevice.errors.Refusal`)
are counted, not failed; every accepted variant is compiled for
``"<device>, c"`` in strict mode, must be placed on the device, runs through
the executor on seeded random inputs, and every output must equal
:func:`tvmdevice.testing.reference.run_graph` exactly.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import ModelError, Refusal, TVMDeviceError
from ...target import Target
from ._base import Check, CheckContext, Contract
from .kernel_space import STRATEGIES, variants

__all__ = ["CONTRACT", "check_bit_exact", "run_variant", "Tally"]

NAME = "kernels"


class _Mismatch(AssertionError):
    """One variant's failure; hypothesis shrinks it before it becomes a violation."""


@dataclass
class Tally:
    """What happened to the variants of one operator type."""

    ran: int = 0
    declined: int = 0
    outside_reference: int = 0
    reasons: Counter = field(default_factory=Counter)


def _target(ctx: CheckContext) -> Target:
    """``"<device>, c"`` (or the device alone when it is a host) with the context's options."""
    entries: list[dict[str, Any]] = [{"kind": ctx.name, **ctx.options}]
    if not ctx.device_type.is_host:
        entries.append({"kind": "c"})
    return Target.parse(entries, ctx.registry)


def _inputs(graph: Any, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for t in graph.inputs:
        tensor = graph.tensors[t]
        if np.dtype(tensor.dtype) == np.float32:
            out.append(rng.normal(0.0, 4.0, size=tensor.shape).astype(np.float32))
        else:
            info = np.iinfo(tensor.dtype)
            out.append(rng.integers(info.min, info.max, size=tensor.shape, endpoint=True, dtype=tensor.dtype))
    return out


def _describe(op_type: str, params: dict[str, Any]) -> str:
    return f"{op_type}(" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ")"


def run_variant(ctx: CheckContext, target: Target, op_type: str, params: dict[str, Any], tally: Tally,
                seed: int = 0) -> None:
    """Build, place, compile and run one single-operator model; compare it with the reference.

    Updates ``tally``; raises ``AssertionError`` (with the variant spelled
    out) on any difference or device error.
    """
    from ...aot import compile as aot_compile
    from ...aot.builder import single_op_model
    from ...aot.frontend import load_tflite
    from ..reference import run_graph

    what = _describe(op_type, params)
    try:
        # op_type is a kernel key: "ADD:int16" builds an ADD (its parameters make it int16).
        base = op_type.split(":")[0]
        graph = load_tflite(single_op_model(base, seed=seed, **params), name=base.lower())
        inputs = _inputs(graph, seed)
        reference = run_graph(graph, inputs)
    except (ModelError, ValueError, Refusal):
        # The host reference (TFLM's semantics) refuses this combination:
        # there is nothing to be bit-exact with.
        tally.outside_reference += 1
        return
    op = graph.operators[0]
    entry = target.entries[0]
    from ...ops import analyze

    try:
        reason = ctx.registry.check_operator(entry.device_type, entry.options, graph, op, analyze(graph, op))
    except TVMDeviceError as exc:
        raise _Mismatch(f"{what}: check_operator raised {type(exc).__name__}: {exc}") from exc
    if reason is None and not entry.device_type.compiles_partitions:
        # check_operator is only a pre-filter: prepare decides, on the op data (a device that
        # compiles partitions decides in check_operator: its partitions are prepared whole).
        try:
            ctx.registry.prepare_operator(entry.device_type, entry.options, graph, op, analyze(graph, op))
        except Refusal as refusal:
            reason = refusal.reason
        except TVMDeviceError as exc:
            raise _Mismatch(f"{what}: prepare_operator raised {type(exc).__name__}: {exc}") from exc
    if reason is not None:
        tally.declined += 1
        tally.reasons[str(reason)] += 1
        return
    try:
        module = aot_compile(graph, target, strict=True, registry=ctx.registry)
    except TVMDeviceError as exc:
        raise _Mismatch(f"{what}: accepted by the device, but compiling it failed: "
                        f"{type(exc).__name__}: {exc}") from exc
    placed = module.placement.ops[0]
    # A view (RESHAPE...) runs on no device: its output aliases its input, still compared below.
    if placed.device != ctx.name and not placed.is_view:
        raise _Mismatch(f"{what}: accepted by the device but placed on {placed.device!r}")
    ctx.doing(f"running {what}")
    try:
        with module.executor() as ex:
            outputs = ex.run(inputs)
            # The call must have carried this device's own handle (resource_handle).
            ex.check_plan()
    except TVMDeviceError as exc:
        raise _Mismatch(f"{what}: running it failed: {type(exc).__name__}: {exc}") from exc
    for k, (got, t) in enumerate(zip(outputs, graph.outputs)):
        want = reference[t]
        if got.shape != want.shape or got.dtype != want.dtype:
            raise _Mismatch(f"{what}: output {k} is {got.dtype}{list(got.shape)}, the reference "
                            f"{want.dtype}{list(want.shape)}")
        bad = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
        if bad.size:
            i = int(bad[0])
            idx = tuple(int(v) for v in np.unravel_index(i, want.shape))
            raise _Mismatch(f"{what}: output {k} differs from the host reference in {bad.size} of {want.size} "
                            f"values; first at {list(idx)}: device {got.reshape(-1)[i].item()!r}, reference "
                            f"{want.reshape(-1)[i].item()!r}")
    tally.ran += 1


def _explore(ctx: CheckContext, target: Target, op_type: str) -> tuple[Tally, str | None]:
    """Run ``ctx.examples`` variants of ``op_type``; the shrunk failure, if any."""
    from hypothesis import given

    tally = Tally()

    @ctx.settings()
    @given(variants(op_type))
    def prop(params: dict[str, Any]) -> None:
        run_variant(ctx, target, op_type, params, tally)

    try:
        prop()
    except Exception as exc:
        # Several distinct failures arrive as a group; report the first mismatch.
        mismatch = _first_mismatch(exc)
        if mismatch is None:
            raise
        return tally, str(mismatch)
    return tally, None


def _first_mismatch(exc: BaseException) -> _Mismatch | None:
    if isinstance(exc, _Mismatch):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _first_mismatch(inner)
        if found is not None:
            return found
    return None


def check_bit_exact(ctx: CheckContext) -> str:
    """Every declared operator matches the host reference bit for bit across its parameter space."""
    declared = sorted(ctx.device_type.operators)
    if not declared:
        ctx.skip(f"device {ctx.name!r} declares no operators")
    checkable = [op for op in declared if op in STRATEGIES]
    unchecked = [op for op in declared if op not in STRATEGIES]
    if not checkable:
        ctx.skip(f"no host reference for any declared operator ({', '.join(declared)})")
    target = _target(ctx)
    failures: list[str] = []
    tallies: dict[str, Tally] = {}
    for op_type in checkable:
        tally, failure = _explore(ctx, target, op_type)
        tallies[op_type] = tally
        if failure:
            failures.append(failure)
        elif tally.ran == 0 and tally.declined:
            common = "; ".join(f"{r!r} x{n}" for r, n in tally.reasons.most_common(2))
            failures.append(f"{op_type} is declared but all {tally.declined} generated variants were declined "
                            f"(e.g. {common}); declare only operators the device runs")
    if failures:
        ctx.fail(f"{len(failures)} of {len(checkable)} operator(s) failed: " + " | ".join(failures))
    ran = sum(t.ran for t in tallies.values())
    declined = sum(t.declined for t in tallies.values())
    outside = sum(t.outside_reference for t in tallies.values())
    per_op = ", ".join(f"{op} {t.ran}/{t.ran + t.declined}" for op, t in tallies.items())
    note = (f"{ran} variants ran bit-exact, {declined} declined by the device, {outside} outside the reference; "
            f"ran/accepted-or-declined per operator: {per_op}")
    if unchecked:
        note += f"; not checked (no host reference): {', '.join(unchecked)}"
    return note


CONTRACT = Contract(NAME, "declared operators bit-exact with the host reference across their parameters", (
    Check("bit-exact", check_bit_exact, check_bit_exact.__doc__ or ""),
))
