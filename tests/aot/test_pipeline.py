"""The one-way compile pipeline: place and prepare once -> schedule -> one plan with scratch -> bind -> run."""

from __future__ import annotations

import numpy as np
import pytest
from plugin_fixtures import load_fixture_module

import tvmdevice
from tvmdevice import ops as ops_layer
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.aot.memory_plan import tensor_key
from tvmdevice.aot.placement import VIEW, aligned_bytes
from tvmdevice.aot.schedule import HOST, SCRATCH, KernelStep
from tvmdevice.device import Device
from tvmdevice.errors import NotSupportedError, PlacementError, Refusal
from tvmdevice.testing.reference import run_graph


@pytest.fixture
def picky(registry):
    mod = load_fixture_module("fixture_picky")
    mod.PREPARED.clear()
    registry.register(mod, "picky")
    return mod


@pytest.fixture
def accel(registry):
    mod = load_fixture_module("fixture_accel")
    registry.register(mod, "accel")
    return mod


def _model() -> bytes:
    """conv, max pool, avg pool, add, RESHAPE (a view), fully connected, softmax."""
    b = ModelBuilder(name="mix", seed=3)
    x = b.input((1, 8, 8, 2), scale=0.05, zero_point=3)
    c = b.conv2d(x, filters=4, kernel=3, activation="RELU")
    s = b.add(b.max_pool2d(c, pool=2), b.avg_pool2d(c, pool=2))
    b.output(b.softmax(b.fully_connected(b.reshape(s, (1, -1)), 6)))
    return b.build()


def _inputs(module, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=module.graph.tensors[t].shape, dtype=np.int8) for t in module.graph.inputs]


def _run_matches_reference(module) -> None:
    inputs = _inputs(module)
    expected = run_graph(module.graph, inputs)
    with module.executor() as ex:
        out = ex.run(inputs)
        ex.check_plan()
    assert np.array_equal(out[0], expected[module.graph.outputs[0]])


# ------------------------------------------------------------- place and prepare once
def test_prepare_runs_once_per_operator_on_the_accepting_device(picky, registry, monkeypatch):
    asked: list[tuple[int, str]] = []
    prepare = registry.prepare_operator

    def counting(dtype, options, graph, op, op_data=None):
        asked.append((op.index, dtype.name))
        return prepare(dtype, options, graph, op, op_data)

    monkeypatch.setattr(registry, "prepare_operator", counting)
    module = tvmdevice.compile(_model(), "picky, c", registry=registry)
    kernels = [p for p in module.placement.ops if not p.is_view]
    assert sorted(asked) == sorted((p.op_index, p.device) for p in kernels), "one prepare per operator"
    assert [i for i, _, _ in picky.PREPARED] == [p.op_index for p in kernels]
    for p in kernels:  # the module runs the very call placement accepted
        assert module.prepared[p.op_index] is p.call and p.call.name == f"picky_{p.op_type.lower()}"
    _run_matches_reference(module)


def test_op_data_is_computed_once_and_given_to_both_hooks(picky, registry, monkeypatch):
    analysed: list[int] = []
    checked: list[object] = []

    real = ops_layer.analyze

    def analyze(graph, op):
        analysed.append(op.index)
        return real(graph, op)

    check = registry.check_operator

    def recording(dtype, options, graph, op, op_data=None):
        checked.append(op_data)
        return check(dtype, options, graph, op, op_data)

    monkeypatch.setattr(ops_layer, "analyze", analyze)
    monkeypatch.setattr(registry, "check_operator", recording)
    module = tvmdevice.compile(_model(), "picky -refuse=ADD, c", registry=registry)
    assert analysed == [op.index for op in module.graph.operators]
    data = {p.op_index: p.op_data for p in module.placement.ops}
    assert all(isinstance(d, ops_layer.OpData) and d.op_index == i for i, d in data.items())
    assert [p.is_view for p in module.placement.ops] == [d.is_view for d in data.values()]
    assert all(d is data[i] for i, _, d in picky.PREPARED), "prepare gets placement's op data"
    add = next(op.index for op in module.graph.operators if op.type == "ADD")
    assert sum(1 for d in checked if d is data[add]) == 2, "picky and c were both given the same op data"


def test_operator_layer_refusal_asks_no_device(picky, registry, monkeypatch):
    real = ops_layer.analyze

    def analyze(graph, op):
        if op.type == "ADD":
            raise Refusal("input scales TFLM refuses")
        return real(graph, op)

    monkeypatch.setattr(ops_layer, "analyze", analyze)
    with pytest.raises(PlacementError, match=r"operator #\d+ ADD: input scales TFLM refuses; no device is asked"):
        tvmdevice.compile(_model(), "picky, c", registry=registry)
    assert "ADD" not in [t for _, t, _ in picky.PREPARED]


def test_prepare_refusal_falls_back_with_operator_and_device(picky, registry):
    # picky relies on the default check_operator: the refusal comes from prepare.
    module = tvmdevice.compile(_model(), "picky -refuse='ADD,SOFTMAX', c", registry=registry)
    by_type = {p.op_type: p for p in module.placement.ops}
    for refused in ("ADD", "SOFTMAX"):
        p = by_type[refused]
        assert p.device == "c" and p.declined == (("picky", f"picky refuses {refused} at prepare"),)
        assert f"#{p.op_index:<3} {refused}" in module.report()
    assert by_type["CONV_2D"].device == "picky"
    text = module.report()
    assert "-> c   (picky: picky refuses ADD at prepare)" in text
    _run_matches_reference(module)


def test_a_refusal_by_every_device_names_each_reason(picky, registry, monkeypatch):
    from tvmdevice.host import plugin as host_plugin

    host = next(i for i in registry.pm.hook.tvmdevice_prepare_operator.get_hookimpls() if i.plugin is host_plugin)
    original = host.function

    def refusing(device_type, options, graph, op, op_data):
        if op.type == "ADD":
            raise NotSupportedError("c refuses ADD for this test")
        return original(device_type, options, graph, op, op_data)

    monkeypatch.setattr(host, "function", refusing)
    with pytest.raises(PlacementError, match=r"operator #\d+ ADD: no device of target .* \(picky: picky refuses "
                                             r"ADD at prepare; c: c refuses ADD for this test\)"):
        tvmdevice.compile(_model(), "picky -refuse=ADD, c", registry=registry)


# -------------------------------------------------------------------- scratch in the plan
def test_scratch_is_a_buffer_of_the_plan_and_no_workspace_is_allocated(picky, registry, monkeypatch):
    def no_workspace(self, nbytes, type_hint=None):
        raise AssertionError(f"AllocWorkspace({nbytes}) called on {self.name}: scratch must come from the plan")

    monkeypatch.setattr(Device, "alloc_workspace", no_workspace)
    module = tvmdevice.compile(_model(), "picky -scratch=200, c", registry=registry)
    pool = module.plan.pools[HOST]
    steps = [s for s in module.schedule.steps if isinstance(s, KernelStep)]
    on_picky = [s for s in steps if s.device == "picky"]
    assert on_picky and all(s.scratch_bytes == 200 for s in on_picky)
    scratch = [b for b in module.schedule.buffers if b.scratch_of is not None]
    assert sorted(b.scratch_of for b in scratch) == sorted(s.op_index for s in on_picky)
    for b in scratch:  # alive during its own step only, in its device's pool
        assert b.memory == HOST and b.first == b.last and b.key in pool.offsets
    assert pool.size == pool.activation_bytes + pool.scratch_bytes and pool.largest_scratch == 200
    alone = tvmdevice.compile(_model(), "picky, c", registry=registry).plan.pools[HOST]
    assert pool.activation_bytes == alone.size and pool.size >= alone.size
    with module.executor() as ex:
        for rec in ex.calls:
            if rec.device == "picky":
                key = (SCRATCH, rec.op_index, HOST)
                assert rec.buffers[-1] == ex.bound.arena.ctypes.data + pool.offsets[key]
        assert not any(a.kind == "workspace" for d in ex.devices for a in d.allocations.values())
    # The kernels scribble over their scratch: outputs still exact means no live tensor shares it.
    _run_matches_reference(module)


def test_scratch_beyond_the_workspace_capacity_falls_back(picky, registry):
    module = tvmdevice.compile(_model(), "picky -scratch=1000 -workspace=512, c", registry=registry)
    for p in module.placement.ops:
        if not p.is_view:
            assert p.device == "c"
            (device, reason), = p.declined
            assert device == "picky" and "1000 B of scratch" in reason and "512 B" in reason
    assert not any(b.scratch_of is not None for b in module.schedule.buffers)
    within = tvmdevice.compile(_model(), "picky -scratch=512 -workspace=512, c", registry=registry)
    assert within.placement.summary == {"picky": 6}


def test_scratch_counts_in_the_device_memory_budget(picky, registry):
    b = ModelBuilder(name="conv", seed=1)
    b.output(b.conv2d(b.input((1, 8, 8, 4), scale=0.05, zero_point=0), filters=8, kernel=3))
    model = b.build()
    graph = tvmdevice.compile(model, "c", registry=registry).graph
    footprint = sum(aligned_bytes(graph.tensors[t].nbytes) for t in (*graph.operators[0].inputs, graph.outputs[0]))
    fits = tvmdevice.compile(model, f"picky -capacity={footprint}, c", registry=registry)
    assert fits.placement.ops[0].device == "picky"
    module = tvmdevice.compile(model, f"picky -capacity={footprint} -scratch=64, c", registry=registry)
    (device, reason), = module.placement.ops[0].declined
    assert device == "picky" and "picky memory full" in reason and f"{footprint + 64} B needed of its {footprint} B" \
        in reason


# ------------------------------------------------------------------------------- views
def test_views_alias_their_input_with_no_step(picky, registry):
    module = tvmdevice.compile(_model(), "c", registry=registry)
    graph = module.graph
    reshape = next(op for op in graph.operators if op.type == "RESHAPE")
    p = module.placement.ops[reshape.index]
    assert p.is_view and p.device == VIEW and p.call is None and reshape.index not in module.prepared
    assert reshape.index not in [s.op_index for s in module.schedule.steps if isinstance(s, KernelStep)]
    src, out = reshape.inputs[0], reshape.outputs[0]
    assert module.schedule.source(out) == src
    assert tensor_key(out, HOST) not in module.plan.pools[HOST].offsets
    assert "view (aliases its input, no kernel)" in str(module.placement)
    with module.executor() as ex:
        assert ex.bound.address(out, HOST) == ex.bound.address(src, HOST)
        assert len(ex.labels) == len(graph.operators) - 1
    _run_matches_reference(module)


def test_views_never_fail_strict_mode(picky, registry):
    module = tvmdevice.compile(_model(), "picky, c", registry=registry, strict=True)
    assert module.placement.summary == {"picky": 6}
    assert module.placement.to_json()["views"] == 1
    _run_matches_reference(module)


def test_strict_names_every_offender_and_what_to_do(accel, registry):
    with pytest.raises(PlacementError) as info:
        tvmdevice.compile(_model(), "accel, c", registry=registry, strict=True)
    text = str(info.value)
    for op_type in ("MAX_POOL_2D", "AVERAGE_POOL_2D", "FULLY_CONNECTED", "SOFTMAX"):
        assert f"{op_type} would fall back to the host 'c' (accel: accel has no {op_type} kernel)" in text
    assert "RESHAPE" not in text and "CONV_2D" not in text
    assert "4 operator(s) would run on the host" in text and "without strict mode" in text
    assert "1 view operator(s) alias their input and need no device" in text


# -------------------------------------------------------------------------- the report
def test_memory_report_gives_activations_scratch_and_constants(picky, registry):
    module = tvmdevice.compile(_model(), "picky -scratch=64, c", registry=registry)
    pool = module.plan.pools[HOST]
    read = {t for p, op in zip(module.placement.ops, module.graph.operators) if not p.is_view for t in op.inputs
            if t >= 0 and module.graph.tensors[t].is_constant}
    weights = sum(module.graph.tensors[t].nbytes for t in read)
    assert weights and pool.constant_bytes == weights, "host constants are the weights the kernels read"
    entry = module.plan.to_json()[HOST]
    assert entry["ram"] == entry["activations"] + entry["scratch"] == pool.size
    assert entry["constants"] == weights and entry["constants_in"] == "flash"
    text = module.report()
    assert f"{pool.size:,} B RAM = {pool.activation_bytes:,} B activations + {pool.scratch_bytes:,} B scratch" in text
    assert f"constants {weights:,} B" in text
    assert module.to_json()["memory"] == module.plan.to_json()


def test_memory_report_counts_the_kernels_packed_params_in_flash():
    pytest.importorskip("tvmdevice_cmsis", reason="needs the cmsis-nn plugin (pip install ./plugins/cmsis)")
    module = tvmdevice.compile(_model(), "cmsis-nn, c")
    calls = [c for c in module.prepared.values() if c.name.startswith("tvmd_cmsis")]
    assert calls, "the model's operators run on cmsis-nn"
    footprint = sum(c.params.footprint for c in calls)
    pool = module.plan.pools[HOST]
    assert footprint > 0 and pool.params_bytes == footprint
    assert module.plan.to_json()[HOST]["params"] == footprint
    assert f"kernel params {footprint:,} B" in module.report()
    host = tvmdevice.compile(_model(), "c")
    assert host.plan.pools[HOST].params_bytes == sum(c.params.footprint for c in host.prepared.values()) > 0
