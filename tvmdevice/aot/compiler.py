"""``tvmdevice.compile``: model + target -> :class:`CompiledModule`.

The pipeline: import (frontend) -> placement by target order -> schedule
(copies where memories differ) -> static memory plan -> prepare every
operator on its device (the TFLM "Prepare" step, once).  The module is pure
data; :meth:`CompiledModule.executor` opens devices and runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from ..device_type import MemoryKind
from ..errors import NotSupportedError, PlacementError, Refusal
from ..kernel import PreparedCall, is_c_kernel
from ..target import Target
from .ir import Graph
from .memory_plan import MemoryPlan, plan_memory
from .placement import Placement, aligned_bytes, place
from .schedule import Schedule, build_schedule

if TYPE_CHECKING:  # pragma: no cover
    from ..registry import Registry
    from .executor import Executor

__all__ = ["CompiledModule", "compile", "default_target"]

ModelLike = Union[str, Path, bytes, Graph]


@dataclass
class CompiledModule:
    """A model compiled for a target: placement, schedule, memory plan, prepared calls."""

    graph: Graph
    target: Target
    placement: Placement
    schedule: Schedule
    plan: MemoryPlan
    prepared: dict[int, PreparedCall]
    registry: "Registry"
    preserve_all_tensors: bool = False

    def executor(self, *, trace: bool | None = None, timeline: Any = None) -> "Executor":
        """Create an executor: opens every device and preloads constants.

        Use it as a context manager so that devices are closed afterwards.
        """
        from .executor import Executor

        return Executor(self, trace=trace, timeline=timeline)

    def report(self) -> str:
        """Placement and memory per pool, as printed by ``tvmdevice run``."""
        return f"{self.placement}\nmemory:\n{self.plan.report()}"

    def devices_header(self) -> str:
        """The ``tvmgen_<model>_devices`` struct for this module's target."""
        from ..headers import devices_header

        return devices_header(self.graph.name, [e.device_type for e in self.target.accelerators])


def default_target(registry: "Registry") -> Target:
    """Every installed device, separate-memory accelerators first, then host-memory ones, the host ``c`` last."""
    types = registry.device_types()
    accels = [t for t in types if not t.is_host]
    accels.sort(key=lambda t: (t.memory is not MemoryKind.SEPARATE, t.name))
    return Target.parse(", ".join([t.name for t in accels] + ["c"]), registry)


def _load(model: ModelLike, name: str | None) -> Graph:
    if isinstance(model, Graph):
        return model
    from .frontend import load_model, load_tflite

    if isinstance(model, (bytes, bytearray, memoryview)):
        return load_tflite(bytes(model), name=name or "default")
    return load_model(model, name=name)


def compile(model: ModelLike, target: "str | Target | None" = None, *, strict: bool = False,
            registry: "Registry | None" = None, name: str | None = None,
            preserve_all_tensors: bool = False) -> CompiledModule:
    """Compile ``model`` for ``target``.

    :param model: a ``.tflite`` path, the model's bytes, or an imported :class:`Graph`.
    :param target: a target string (``"woofles, cmsis-nn, c"``); default: every
        installed device (see :func:`default_target`).
    :param strict: refuse host fallback for operators an accelerator declined.
    :param preserve_all_tensors: give every tensor its own memory so that all
        intermediate tensors can be read after a run (for bit-exactness checks).
    :raises ModelError: the model cannot be imported.
    :raises TargetError: the target is invalid.
    :raises PlacementError: an operator no device accepts.
    """
    if registry is None:
        from .. import get_registry

        registry = get_registry()
    graph = _load(model, name)
    op_data = _analyze(graph)
    tgt = default_target(registry) if target is None else Target.parse(target, registry)
    placement = place(graph, tgt, registry, strict=strict)
    schedule = build_schedule(graph, tgt, placement)
    if preserve_all_tensors:
        schedule = _preserving(schedule)
    constants = {(t, m): graph.tensors[t].nbytes for t, m in schedule.constants}
    plan = plan_memory(schedule, constants)
    _check_capacity(graph, tgt, registry, plan, schedule)
    prepared: dict[int, PreparedCall] = {}
    for op in graph.operators:
        entry = tgt.entries[placement.ops[op.index].entry]
        call = registry.prepare_operator(entry.device_type, entry.options, graph, op, op_data[op.index])
        if not isinstance(call, PreparedCall):
            raise NotSupportedError(f"device {entry.kind!r} returned {type(call).__name__} from "
                                    f"prepare_operator for operator #{op.index} {op.type}, not a PreparedCall")
        if entry.device_type.memory is MemoryKind.SEPARATE and not is_c_kernel(call.kernel):
            raise NotSupportedError(f"device {entry.kind!r}: operator #{op.index} {op.type} has a Python kernel, "
                                    f"but the device's memory is not host-visible; it must provide a C kernel")
        prepared[op.index] = call
    return CompiledModule(graph, tgt, placement, schedule, plan, prepared, registry, preserve_all_tensors)


def _analyze(graph: Graph) -> dict[int, Any]:
    """Each operator's op data (:func:`tvmdevice.ops.analyze`), computed once and shared by every device."""
    from .. import ops

    data = {}
    for op in graph.operators:
        try:
            data[op.index] = ops.analyze(graph, op)
        except Refusal as r:
            raise PlacementError(f"{r.with_context(op=op)}; no device can run it, as TFLM's int8 kernels do not "
                                 f"support this: change or re-quantize the model") from r
    return data


def _check_capacity(graph: Graph, target: Target, registry: "Registry", plan: MemoryPlan,
                    schedule: Schedule) -> None:
    """Refuse, at compile time, a plan that cannot fit a device's declared memory."""
    for entry in target.entries:
        pool = plan.pools.get(entry.kind)
        capacity = registry.memory_capacity(entry.device_type, entry.options)
        if pool is None or capacity is None:
            continue
        need = sum(aligned_bytes(b) for b in pool.blocks) + sum(
            aligned_bytes(graph.tensors[t].nbytes) for t, m in schedule.constants if m == entry.kind)
        if need > capacity:
            raise PlacementError(
                f"the memory plan needs {need} B of {entry.kind!r} memory ({pool.size} B of activations, "
                f"{pool.constant_bytes} B of constants) but the device has {capacity} B; give it more memory "
                f"(its target options) or move it later in the target")


def _preserving(schedule: Schedule) -> Schedule:
    """The same schedule with every buffer alive until the end (no memory reuse)."""
    from dataclasses import replace

    end = len(schedule.steps)
    return replace(schedule, buffers=tuple(replace(b, last=end) for b in schedule.buffers))

