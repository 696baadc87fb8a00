"""``tvmdevice.compile``: model + target -> :class:`CompiledModule`.

The pipeline runs one way, in TFLite Micro's AllocateTensors order: import
(frontend) -> place *and prepare* each operator once (placement, the one place
capacity is judged) -> schedule (copies where memories differ) -> one static
memory plan per pool holding every buffer, scratch included.  The module is
pure data; :meth:`CompiledModule.executor` binds it to opened devices and runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from ..device_type import MemoryKind
from ..ir import Graph
from ..kernel import PreparedCall
from ..target import Target
from .memory_plan import MemoryPlan, plan_memory
from .placement import Placement, place
from .schedule import HOST, Schedule, build_schedule

if TYPE_CHECKING:  # pragma: no cover
    from ..export.fit import Budget
    from ..registry import Registry
    from .executor import Executor

__all__ = ["CompiledModule", "compile", "default_target", "for_firmware", "with_mcpu"]

ModelLike = Union[str, Path, bytes, Graph]


@dataclass
class CompiledModule:
    """A model compiled for a target: placement, schedule, memory plan, prepared calls.

    :ivar prepared: operator index -> the prepared call placement kept (views have none).
    """

    graph: Graph
    target: Target
    placement: Placement
    schedule: Schedule
    plan: MemoryPlan
    prepared: dict[int, PreparedCall]
    registry: "Registry"
    preserve_all_tensors: bool = False
    #: the ``.tflite`` bytes the module was compiled from (None for a Graph)
    source_model: bytes | None = None

    def executor(self, *, trace: bool | None = None, timeline: Any = None) -> "Executor":
        """Create an executor: opens every device and preloads constants.

        Use it as a context manager so that devices are closed afterwards.
        """
        from .executor import Executor

        return Executor(self, trace=trace, timeline=timeline)

    def export(self, directory: "str | Path", *, name: str | None = None, external_pools: bool = False,
               mcpu: str | None = None, constants_region: str = "flash", budget: "Budget | None" = None) -> Path:
        """Write this module as C for firmware into ``directory`` (TVM's Model Library Format).

        The same as ``tvmdevice export``; see :func:`tvmdevice.export.export`.  Devices with an
        ``mcpu`` option the target leaves empty are prepared for ``mcpu`` (default ``cortex-m55``)
        first: the module is compiled again with it (:func:`for_firmware`), and the export reads that.
        """
        from ..export.sources import DEFAULT_MCPU
        from ..export.writer import export

        firmware = for_firmware(self, mcpu or DEFAULT_MCPU)
        return export(firmware, directory, name=name or self.graph.name, external_pools=external_pools,
                      mcpu=mcpu, source_model=self.source_model, constants_region=constants_region,
                      budget=budget)

    def report(self) -> str:
        """Placement and memory per pool (activations + scratch + constants), as printed by ``tvmdevice run``."""
        return f"{self.placement}\nmemory:\n{self.plan.report()}"

    def to_json(self) -> dict:
        """Placement and memory per pool as JSON (``tvmdevice run --json``)."""
        return {"target": str(self.target), "placement": self.placement.to_json(), "memory": self.plan.to_json()}

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


def with_mcpu(target: Target, mcpu: str | None) -> Target:
    """``target`` with ``-mcpu=<mcpu>`` on every device that declares that option and leaves it empty
    (``target`` itself when none does, or ``mcpu`` is empty)."""
    if not mcpu:
        return target
    parts, changed = [], False
    for entry in target.entries:
        attrs = dict(entry.attrs)
        if "mcpu" in {o.name for o in entry.device_type.options} and not entry.options.get("mcpu"):
            attrs["mcpu"] = mcpu
            changed = True
        parts.append(type(entry)(entry.device_type, attrs, entry.distribution))
    return Target(tuple(parts)) if changed else target


def for_firmware(module: CompiledModule, mcpu: str | None = None) -> CompiledModule:
    """``module`` prepared for a microcontroller: compiled again with ``-mcpu=<mcpu>`` (default
    :data:`~tvmdevice.export.DEFAULT_MCPU`) on every device that declares that option and leaves it empty
    (their weights are packed for the CPU, not the host); ``module`` itself when there is none."""
    if mcpu is None:
        from ..export.sources import DEFAULT_MCPU

        mcpu = DEFAULT_MCPU
    target = with_mcpu(module.target, mcpu)
    if target is module.target:
        return module
    firmware = compile(module.graph, str(target), registry=module.registry,
                       preserve_all_tensors=module.preserve_all_tensors)
    firmware.source_model = module.source_model
    return firmware


def _load(model: ModelLike, name: str | None, max_tensor_bytes: int | None) -> Graph:
    if isinstance(model, Graph):
        return model
    from .frontend import load_model, load_tflite

    if isinstance(model, (bytes, bytearray, memoryview)):
        return load_tflite(bytes(model), name=name or "default", max_tensor_bytes=max_tensor_bytes)
    return load_model(model, name=name, max_tensor_bytes=max_tensor_bytes)


def compile(model: ModelLike, target: "str | Target | None" = None, *, strict: bool = False,
            registry: "Registry | None" = None, name: str | None = None,
            preserve_all_tensors: bool = False, max_tensor_bytes: int | None = None,
            mcpu: str | None = None) -> CompiledModule:
    """Compile ``model`` for ``target``.

    :param model: a ``.tflite`` path, the model's bytes, or an imported :class:`Graph`.
    :param target: a target string (``"woofles, cmsis-nn, c"``); default: every
        installed device (see :func:`default_target`).
    :param strict: refuse host fallback for operators an accelerator declined
        (the error names every such operator).
    :param preserve_all_tensors: give every tensor its own memory so that all
        intermediate tensors can be read after a run (for bit-exactness checks).  It also keeps every
        PAD a PAD of its own (no fold into a convolution: :mod:`tvmdevice.aot.fold`), and makes every
        operator a device compiles in partitions a partition of its own (:mod:`tvmdevice.partition`).
    :param max_tensor_bytes: the most bytes the model's tensors may declare in
        total (default ``$TVMDEVICE_MAX_TENSOR_BYTES``, else 16 MiB); a file
        asking for more is refused when it is read, before anything is allocated.
    :param mcpu: the CPU firmware will run on: every device that declares an ``mcpu`` target option and
        leaves it empty gets this one (what ``tvmdevice export --mcpu`` passes); default: the host.
    :raises ModelError: the model cannot be imported.
    :raises TargetError: the target is invalid.
    :raises PlacementError: an operator no device accepts, or (strict) any that would fall back to the host.
    """
    if registry is None:
        from .. import get_registry

        registry = get_registry()
    graph = _load(model, name, max_tensor_bytes)
    tgt = with_mcpu(default_target(registry) if target is None else Target.parse(target, registry), mcpu)
    placement = place(graph, tgt, registry, strict=strict, fold=not preserve_all_tensors,
                      partition=not preserve_all_tensors)
    schedule = build_schedule(graph, tgt, placement)
    if preserve_all_tensors:
        schedule = _preserving(schedule)
    constants = {(t, m): graph.tensors[t].nbytes for t, m in schedule.constants}
    plan = plan_memory(schedule, constants)
    prepared = {p.op_index: p.call for p in placement.ops if p.call is not None}
    plan.pools[HOST].params_bytes = sum(_params_footprint(call.params) for call in prepared.values())
    source = None
    if isinstance(model, (bytes, bytearray, memoryview)):
        source = bytes(model)
    elif isinstance(model, (str, Path)) and Path(model).is_file():
        source = Path(model).read_bytes()
    return CompiledModule(graph, tgt, placement, schedule, plan, prepared, registry, preserve_all_tensors, source)


def _params_footprint(params: Any) -> int:
    """Flash bytes of one call's C params (0 for a Python kernel's, which never reach firmware)."""
    from ..params import ParamsStruct

    return params.footprint if isinstance(params, ParamsStruct) else 0


def _preserving(schedule: Schedule) -> Schedule:
    """The same schedule with every buffer alive until the end (no memory reuse)."""
    from dataclasses import replace

    end = len(schedule.steps)
    # every tensor in a buffer of its own: none inside a call's scratch
    return replace(schedule, buffers=tuple(b if b.scratch_of is not None else replace(b, last=end, inside=None)
                                           for b in schedule.buffers))

