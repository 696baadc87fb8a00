"""A device that compiles partitions: consecutive operators grouped, one call each, fallback one by one."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Set

import numpy as np
import pytest
from plugin_fixtures import load_fixture_module

import tvmdevice
from tvmdevice.aot.builder import ModelBuilder
from tvmdevice.aot.memory_plan import tensor_key
from tvmdevice.aot.schedule import HOST, SCRATCH, KernelStep
from tvmdevice.errors import TensorUnavailableError
from tvmdevice.layout import Field, Layout
from tvmdevice.partition import PARTITION_TYPE
from tvmdevice.testing.reference import run_graph


@pytest.fixture
def fuser(registry):
    mod = load_fixture_module("fixture_fuser")
    mod.PARTITIONS.clear()
    mod.IN_SCRATCH.clear()
    registry.register(mod, "fuser")
    return mod


def _model() -> bytes:
    """conv, conv, add, RESHAPE (a view), max pool... : #0 #1 #2 fuse, #3 max pool breaks the run."""
    b = ModelBuilder(name="fusable", seed=5)
    x = b.input((1, 8, 8, 3), scale=0.05, zero_point=2)
    c1 = b.conv2d(x, filters=4, kernel=3, activation="RELU")
    c2 = b.conv2d(c1, filters=4, kernel=1)
    s = b.add(c1, c2)
    p = b.max_pool2d(s, pool=2)
    c3 = b.conv2d(p, filters=4, kernel=1)
    r = b.reshape(c3, (1, 4, 4, 4))
    b.output(b.add(r, r))
    return b.build()


def _check_bit_exact(module) -> None:
    rng = np.random.default_rng(1)
    inputs = [rng.integers(-128, 128, size=module.graph.tensors[t].shape, dtype=np.int8)
              for t in module.graph.inputs]
    expected = run_graph(module.graph, inputs)
    with module.executor() as ex:
        out = ex.run(inputs)
        ex.check_plan()
    assert np.array_equal(out[0], expected[module.graph.outputs[0]])


def test_consecutive_accepted_operators_become_one_call(fuser, registry):
    module = tvmdevice.compile(_model(), "fuser, c", registry=registry)
    pl = module.placement
    types = [op.type for op in module.graph.operators]
    assert types == ["CONV_2D", "CONV_2D", "ADD", "MAX_POOL_2D", "CONV_2D", "RESHAPE", "ADD"]
    parts = pl.partitions
    assert [p.op_indices for p in parts] == [(0, 1, 2), (4, 5, 6)]  # the view between two members joins
    assert [p.device for p in pl.ops] == ["fuser"] * 3 + ["c"] + ["fuser"] * 3
    assert pl.summary == {"fuser": 6, "c": 1}
    g = module.graph
    first, second = parts
    assert first.inputs == (g.inputs[0],) and first.outputs == (g.operators[2].outputs[0],)
    assert set(first.internal) == {g.operators[0].outputs[0], g.operators[1].outputs[0]}
    assert second.outputs == (g.outputs[0],)
    steps = [s for s in module.schedule.steps if isinstance(s, KernelStep)]
    assert [(s.op_index, s.call.type) for s in steps] == [(0, PARTITION_TYPE), (3, "MAX_POOL_2D"), (4, PARTITION_TYPE)]
    assert sorted(module.prepared) == [0, 3, 4]
    report = str(pl)
    assert "partition 0 (3 operators, #0-#2)" in report and "partitions: 2" in report
    j = pl.to_json()
    assert [o.get("partition") for o in j["ops"]] == [0, 0, 0, None, 1, 1, 1]
    assert j["partitions"][0]["details"] == {"operators": 3} and j["partitions"][1]["ops"] == [4, 5, 6]
    assert not any(o["view"] for o in j["ops"])  # the RESHAPE runs inside partition 1
    _check_bit_exact(module)


def test_a_partitions_inner_tensors_are_not_materialised(fuser, registry):
    module = tvmdevice.compile(_model(), "fuser, c", registry=registry)
    inner = module.graph.operators[0].outputs[0]
    with module.executor() as ex:
        ex.run([np.zeros(module.graph.tensors[module.graph.inputs[0]].shape, np.int8)])
        with pytest.raises(TensorUnavailableError, match="inside partition 0"):
            ex.tensor(inner)


def test_preserving_every_tensor_makes_each_operator_a_partition(fuser, registry):
    module = tvmdevice.compile(_model(), "fuser, c", registry=registry, preserve_all_tensors=True)
    assert [p.op_indices for p in module.placement.partitions] == [(0,), (1,), (2,), (4,), (6,)]
    assert module.placement.ops[5].is_alias  # the view between two single-operator partitions aliases
    _check_bit_exact(module)


def test_a_refused_partition_goes_one_by_one_to_the_next_device(fuser, registry):
    module = tvmdevice.compile(_model(), "fuser -refuse=1, c", registry=registry)
    pl = module.placement
    assert not pl.partitions and len(fuser.PARTITIONS) == 2
    assert [p.device for p in pl.ops] == ["c", "c", "c", "c", "c", "(view)", "c"]
    assert pl.ops[0].declined == (("fuser", "partition 0 (3 operators, #0-#2): fuser was told to refuse"),)
    assert pl.ops[3].declined == (("fuser", "fuser does not compile MAX_POOL_2D"),)
    _check_bit_exact(module)


def test_a_run_ends_where_the_device_declines(fuser, registry):
    module = tvmdevice.compile(_model(), "fuser -ops=CONV_2D, c", registry=registry)
    assert [p.op_indices for p in module.placement.partitions] == [(0, 1), (4,)]
    assert module.placement.ops[5].is_alias  # a view after a run's last member stays a view
    _check_bit_exact(module)


def test_strict_mode_counts_partition_members_as_placed(fuser, registry):
    module = tvmdevice.compile(_model(), "fuser -ops=CONV_2D+ADD+MAX_POOL_2D, c", registry=registry, strict=True)
    assert [p.op_indices for p in module.placement.partitions] == [tuple(range(7))]
    _check_bit_exact(module)


def test_a_call_addresses_its_inputs_and_outputs_inside_its_scratch(fuser, registry):
    module = tvmdevice.compile(_model(), "fuser -in_scratch=1, c", registry=registry)
    pool = module.plan.pools[HOST]
    uses = {u.key: u for u in pool.uses}
    for part in module.placement.partitions:
        call = module.prepared[part.first]
        scratch = (SCRATCH, part.first, HOST)
        for k, t in enumerate((*part.inputs, *part.outputs)):
            key = tensor_key(module.schedule.source(t), HOST)
            assert pool.offsets[key] == pool.offsets[scratch] + call.in_scratch[k]
            # the scratch is alive whenever the tensor is: nothing else is planned over it
            assert uses[scratch].first <= uses[key].first and uses[key].last <= uses[scratch].last
    _check_bit_exact(module)
    assert fuser.IN_SCRATCH == [[True, True], [True, True]]
    # the same model without: the tensors have buffers of their own, the partitions copy nothing less
    plain = tvmdevice.compile(_model(), "fuser, c", registry=registry)
    assert all(u.inside is None for u in plain.plan.pools[HOST].uses)


def test_tensors_inside_a_scratch_share_bytes_only_while_the_call_runs(fuser, registry):
    # an input the call consumes and an output it produces may share bytes (the output written over the
    # input, as Vela plans them); an input still read after the call may not: that output keeps its own
    b = ModelBuilder(name="reuse", seed=3)
    x = b.input((1, 6, 6, 4), scale=0.05, zero_point=1)
    y = b.conv2d(x, filters=4, kernel=1)
    b.output(b.conv2d(b.add(x, y), filters=4, kernel=1))
    module = tvmdevice.compile(b.build(), "fuser -ops=CONV_2D -in_scratch=2, c", registry=registry)
    first, second = module.placement.partitions
    inside = {u.tensor: u.inside for u in module.plan.pools[HOST].uses if u.scratch_of is None}
    assert inside[first.inputs[0]] == first.first and inside[first.outputs[0]] is None  # x is read by ADD
    assert inside[second.inputs[0]] == inside[second.outputs[0]] == second.first  # consumed, produced
    _check_bit_exact(module)
    assert fuser.IN_SCRATCH == [[True, False], [True, True]]


class _LazyClaims(Set):
    """Kernel keys read on first use, counting the reads (a partition compiler's claims)."""

    def __init__(self, keys: frozenset[str]) -> None:
        self._all, self.reads = keys, 0

    def _keys(self) -> frozenset[str]:
        self.reads += 1
        return self._all

    def __contains__(self, key: object) -> bool:
        return key in self._keys()

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._keys()))

    def __len__(self) -> int:
        return len(self._keys())

    __eq__ = object.__eq__
    __hash__ = object.__hash__


def test_a_partition_compiler_claims_operators_lazily_without_prepare_operator(registry, monkeypatch):
    from tvmdevice.optable import build
    from tvmdevice.testing.contracts import CheckContext
    from tvmdevice.testing.runner import execute_check

    claims = _LazyClaims(frozenset({"CONV_2D", "ADD"}))
    mod = load_fixture_module("fixture_fuser")
    layout = Layout("tvm_device_lazyfuser_t", (Field("active", "uint32_t"),))
    monkeypatch.setattr(mod, "DEVICE_TYPE", dataclasses.replace(mod.DEVICE_TYPE, name="lazyfuser", layout=layout,
                                                                operators=claims))
    registry.register(mod, "lazyfuser")  # no tvmdevice_prepare_operator: a partition compiler needs none
    assert registry.device_type("lazyfuser").operators is claims and claims.reads == 0  # discovery read nothing
    rows = {r.key: r.devices for r in build(registry).rows}
    assert "lazyfuser" in rows["CONV_2D"] and "lazyfuser" in rows["ADD"] and "lazyfuser" not in rows["MUL"]
    assert claims.reads > 0
    # the kernels contract asks the partition compiler's own check (its partitions are prepared whole)
    note = execute_check(CheckContext("lazyfuser", registry, examples=3), "kernels", "bit-exact")
    assert note is not None and "ADD " in note and "CONV_2D " in note
