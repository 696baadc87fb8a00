"""Compile and execute: placement, lifecycle around runs, failures mid-run, strict mode, plan check."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from plugin_fixtures import load_fixture_module

import tvmdevice
from tvmdevice import State
from tvmdevice.aot.builder import ModelBuilder, demo_model
from tvmdevice.aot.placement import VIEW
from tvmdevice.errors import InvalidArgumentError, KernelError, LifecycleError, PlacementError, TVMDeviceError
from tvmdevice.testing.reference import run_graph
from tvmdevice.tracing import Timeline


@pytest.fixture
def accel(registry):
    mod = load_fixture_module("fixture_accel")
    mod.RAN.clear()
    registry.register(mod, "accel")
    return mod


def _model(dilated: bool = False) -> bytes:
    b = ModelBuilder(name="mix", seed=3)
    x = b.input((1, 8, 8, 2), scale=0.05, zero_point=3)
    c = b.conv2d(x, filters=4, kernel=3, dilation=2 if dilated else 1, activation="RELU")
    p = b.max_pool2d(c, pool=2)
    q = b.avg_pool2d(c, pool=2)
    s = b.add(p, q)
    b.output(b.softmax(b.fully_connected(b.reshape(s, (1, -1)), 6)))
    return b.build()


def _inputs(module, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(-128, 128, size=module.graph.tensors[t].shape, dtype=np.int8) for t in module.graph.inputs]


def test_first_device_that_accepts_wins_and_reasons_are_reported(accel, registry):
    module = tvmdevice.compile(_model(), "accel, c", registry=registry)
    devices = [p.device for p in module.placement.ops]
    types = [p.op_type for p in module.placement.ops]
    # RESHAPE is a view: it runs on no device (see test_pipeline.py).
    assert devices == ["accel" if t in ("CONV_2D", "ADD") else VIEW if t == "RESHAPE" else "c" for t in types]
    pool = next(p for p in module.placement.ops if p.op_type == "MAX_POOL_2D")
    assert pool.declined == (("accel", "accel has no MAX_POOL_2D kernel"),)
    text = str(module.placement)
    assert "MAX_POOL_2D" in text and "-> c" in text and "accel has no MAX_POOL_2D kernel" in text
    dilated = tvmdevice.compile(_model(dilated=True), "accel, c", registry=registry)
    conv = next(p for p in dilated.placement.ops if p.op_type == "CONV_2D")
    assert conv.device == "c" and conv.declined == (("accel", "accel cannot dilate"),)


def test_placement_keeps_within_the_device_memory_budget(accel, registry):
    from tvmdevice.aot.placement import aligned_bytes

    b = ModelBuilder(name="two_convs", seed=1)
    x = b.input((1, 8, 8, 4), scale=0.05, zero_point=0)
    b.output(b.conv2d(b.conv2d(x, filters=16, kernel=3), filters=16, kernel=3))
    model = b.build()
    graph = tvmdevice.compile(model, "c", registry=registry).graph
    conv0, conv1 = graph.operators

    def footprint(op, consts):
        acts = sum(aligned_bytes(graph.tensors[t].nbytes) for t in (*op.inputs, *op.outputs)
                   if t >= 0 and not graph.tensors[t].is_constant)
        return consts + acts

    first = sum(aligned_bytes(graph.tensors[t].nbytes) for t in conv0.inputs if t >= 0
                and graph.tensors[t].is_constant)
    capacity = footprint(conv0, first)  # room for the first convolution only
    module = tvmdevice.compile(model, f"accel -capacity={capacity}, c", registry=registry)
    assert [p.device for p in module.placement.ops] == ["accel", "c"]
    reason = module.placement.ops[1].declined[0][1]
    assert "accel memory full" in reason and f"of its {capacity} B" in reason
    roomy = tvmdevice.compile(model, "accel -capacity=1000000, c", registry=registry)
    assert [p.device for p in roomy.placement.ops] == ["accel", "accel"]
    with module.executor() as ex:
        x_in = _inputs(module)
        assert np.array_equal(ex.run(x_in)[0], run_graph(module.graph, x_in)[module.graph.outputs[0]])


def test_strict_refuses_host_fallback(accel, registry):
    with pytest.raises(PlacementError, match=r"strict placement: operator #\d+ MAX_POOL_2D .*accel has no"):
        tvmdevice.compile(_model(), "accel, c", registry=registry, strict=True)
    tvmdevice.compile(_model(), "c", registry=registry, strict=True)  # a host-only target is fine


def test_outputs_match_the_host_reference_and_kernels_get_their_device(accel, registry):
    module = tvmdevice.compile(_model(), "accel, c", registry=registry)
    inputs = _inputs(module)
    expected = run_graph(module.graph, inputs)
    with module.executor() as ex:
        out = ex.run(inputs)
        ex.check_plan()
    assert np.array_equal(out[0], expected[module.graph.outputs[0]])
    ran = {i for i, dev in accel.RAN}
    assert ran == {p.op_index for p in module.placement.ops if p.device == "accel"}
    assert {dev for _, dev in accel.RAN} == {"accel"}


def test_lifecycle_around_runs(accel, registry):
    timeline = Timeline()
    registry.register(timeline, "timeline")
    module = tvmdevice.compile(_model(), "accel, c", registry=registry)
    with module.executor(trace=True) as ex:
        assert [d.state for d in ex.devices] == [State.OPENED, State.OPENED]
        for _ in range(2):
            ex.run(_inputs(module))
            assert [d.state for d in ex.devices] == [State.OPENED, State.OPENED]
    assert [d.state for d in ex.devices] == [State.UNINITIALIZED] * 2
    events = [f"{d}.{t}" for d, t in timeline.lifecycle()]
    assert events == ["accel.init", "accel.open", "c.init", "c.open",
                      "accel.activate", "c.activate", "c.deactivate", "accel.deactivate",
                      "accel.activate", "c.activate", "c.deactivate", "accel.deactivate",
                      "c.close", "c.destroy", "accel.close", "accel.destroy"]


def test_python_kernel_failure_mid_run(accel, registry):
    module = tvmdevice.compile(_model(), "accel -fail_op=3, c", registry=registry)
    add = next(p for p in module.placement.ops if p.op_type == "ADD")
    assert add.op_index == 3 and add.device == "accel"
    ex = module.executor()
    with pytest.raises(TVMDeviceError, match=r"operator #3 ADD on device .accel. raised RuntimeError: "
                                             r"injected kernel failure in operator 3"):
        ex.run(_inputs(module))
    assert [d.state for d in ex.devices] == [State.OPENED, State.OPENED], "devices deactivated after the failure"
    ex.close()
    assert all(d.state is State.UNINITIALIZED and not d.allocations for d in ex.devices)
    with pytest.raises(LifecycleError, match="executor is closed"):
        ex.run(_inputs(module))


def test_c_kernel_failure_names_operator_and_device(registry):
    load_fixture_module("fixture_accel")
    registry.register(load_fixture_module("fixture_c_failing"), "cfail")
    module = tvmdevice.compile(_model(), "cfail, c", registry=registry)
    with module.executor() as ex:
        with pytest.raises(KernelError, match=r"operator #3 ADD on device 'cfail' failed with status 7"):
            ex.run(_inputs(module))
        assert all(d.state is State.OPENED for d in ex.devices)
    assert all(d.state is State.UNINITIALIZED for d in ex.devices)


def test_a_kernel_status_outside_tvmd_status_t_is_a_kernel_error_naming_it(registry):
    load_fixture_module("fixture_accel")
    registry.register(load_fixture_module("fixture_c_failing"), "cfail")
    module = tvmdevice.compile(_model(), "cfail, c", registry=registry)
    with module.executor() as ex:
        step = next(i for i, (label, _) in enumerate(ex.labels) if label.endswith("ADD"))
        err = ex.bound._kernel_failed(step, 99)
    assert type(err) is KernelError
    assert str(err) == ("operator #3 ADD on device 'cfail' failed with status 99 "
                        "(unknown status code 99, not one of tvmd_status_t)")


def test_plan_check_catches_a_wrong_resource_handle(accel, registry):
    module = tvmdevice.compile(_model(), "accel, c", registry=registry)
    with module.executor() as ex:
        ex.check_plan()
        rec = ex.calls[0]
        other = next(d for d in ex.devices if d.name != rec.device)
        ex.calls[0] = type(rec)(rec.op_index, rec.device, rec.kernel, other.handle_address, rec.handle_owner,
                                rec.buffers)
        with pytest.raises(TVMDeviceError, match=f"operator #{rec.op_index} is placed on '{rec.device}'"):
            ex.check_plan()


def test_bad_inputs_are_refused(registry):
    module = tvmdevice.compile(demo_model(), "c", registry=registry)
    with module.executor() as ex:
        with pytest.raises(ValueError, match="takes 1 input"):
            ex.run([])
        with pytest.raises(ValueError, match="must be int8"):
            ex.run([np.zeros((1, 16, 16, 1), np.float32)])
        with pytest.raises(ValueError, match="must have shape"):
            ex.run([np.zeros((1, 15, 16, 1), np.int8)])


def test_open_failure_leaves_nothing_open(registry):
    raising = load_fixture_module("fixture_raising")
    registry.register(raising, "flaky")
    # flaky declares no operators, so the model runs on c; flaky is still opened by the executor.
    module = tvmdevice.compile(demo_model(), "flaky -fail=open, c", registry=registry)
    with pytest.raises(TVMDeviceError, match="injected failure in open"):
        module.executor()


def test_preserve_all_tensors_keeps_intermediates(registry):
    module = tvmdevice.compile(demo_model(), "c", registry=registry, preserve_all_tensors=True)
    inputs = _inputs(module)
    expected = run_graph(module.graph, inputs)
    with module.executor() as ex:
        ex.run(inputs)
        for i, t in enumerate(module.graph.tensors):
            if not t.is_constant:
                assert np.array_equal(ex.tensor(i), expected[i]), t.name


def test_a_teardown_error_never_masks_the_original_error(registry):
    registry.register(load_fixture_module("fixture_raising"), "flaky")
    module = tvmdevice.compile(demo_model(), "flaky -fail=open+destroy, c", registry=registry)
    with pytest.raises(TVMDeviceError, match="injected failure in open") as info:
        module.executor()
    (cleanup,) = info.value.cleanup_errors
    assert "injected failure in destroy" in str(cleanup)
    if sys.version_info >= (3, 11):  # shown under the original's traceback
        assert any("injected failure in destroy" in note for note in info.value.__notes__)


def test_a_deactivate_error_never_masks_a_kernel_failure(accel, registry):
    registry.register(load_fixture_module("fixture_raising"), "flaky")
    module = tvmdevice.compile(_model(), "accel -fail_op=3, flaky -fail=deactivate, c", registry=registry)
    ex = module.executor()
    with pytest.raises(TVMDeviceError, match="injected kernel failure in operator 3") as info:
        ex.run(_inputs(module))
    assert any("injected failure in deactivate" in str(e) for e in info.value.cleanup_errors)
    ex.close()
    assert all(d.state is State.UNINITIALIZED for d in ex.devices)


def test_option_maximum_is_declared_and_checked_at_parse():
    from tvmdevice.errors import TargetOptionError
    from tvmdevice.options import TargetOption

    option = TargetOption("lanes", int, 4, "lanes", minimum=1, maximum=16)
    assert option.convert("16", "dev") == 16 and option.bounds == "1..16"
    with pytest.raises(TargetOptionError, match=r"device 'dev': option -lanes=17 exceeds its maximum 16"):
        option.convert("17", "dev")
    with pytest.raises(TypeError, match="only int and float"):
        TargetOption("name", str, "", maximum=3)
    with pytest.raises(ValueError, match="minimum 5 exceeds maximum 2"):
        TargetOption("n", int, 3, minimum=5, maximum=2)


# ------------------------------------------------------------- run-time input
def _kws_like() -> bytes:
    b = ModelBuilder(name="kws_like", seed=5)
    x = b.input((1, 49, 10, 1), scale=0.05, zero_point=0)
    b.output(b.conv2d(x, filters=2, kernel=3))
    return b.build()


@pytest.mark.parametrize("bad", [None, 3, "x", b"x", {"input": 1}], ids=repr)
def test_inputs_that_are_not_a_list_of_arrays_are_refused(registry, bad):
    module = tvmdevice.compile(demo_model(), "c", registry=registry)
    with module.executor() as ex:
        with pytest.raises(InvalidArgumentError, match=rf"inputs must be a list of arrays, got "
                                                       rf"{type(bad).__name__}; pass a list of 1 numpy array"):
            ex.run(bad)


def test_a_bare_array_is_refused_with_what_to_pass_instead(registry):
    module = tvmdevice.compile(demo_model(), "c", registry=registry)
    x = np.zeros((1, 16, 16, 1), np.int8)
    with module.executor() as ex:
        with pytest.raises(InvalidArgumentError, match=r"got ndarray; .*e\.g\. run\(\[x\]\)"):
            ex.run(x)
        expected = ex.run([x])[0]
        assert np.array_equal(ex.run((x,))[0], expected)  # any sequence of arrays
        assert np.array_equal(ex.run(iter([x]))[0], expected)


@pytest.mark.parametrize("shape", [(1, 10, 49, 1), (1, 49, 10), (49, 10, 1), (490,), (1, 1, 49, 10, 1)])
def test_input_shapes_must_match_exactly(registry, shape):
    module = tvmdevice.compile(_kws_like(), "c", registry=registry)
    name = module.graph.tensors[module.graph.inputs[0]].name
    with module.executor() as ex:
        with pytest.raises(InvalidArgumentError, match=re.escape(f"input 0 ({name!r}) must have shape "
                                                                 f"(1, 49, 10, 1), got {shape}")):
            ex.run([np.zeros(shape, np.int8)])
        x = np.random.default_rng(0).integers(-128, 128, (1, 49, 10, 1), dtype=np.int8)
        assert np.array_equal(ex.run([x])[0], run_graph(module.graph, [x])[module.graph.outputs[0]])


def test_an_input_that_is_not_an_array_is_refused(registry):
    module = tvmdevice.compile(demo_model(), "c", registry=registry)
    with module.executor() as ex:
        with pytest.raises(InvalidArgumentError, match=r"input 0 \('\w+'\) must be int8, got object"):
            ex.run([None])
        with pytest.raises(InvalidArgumentError, match=r"input 0 \('\w+'\) is not an array"):
            ex.run([[[1, 2], [3]]])


def test_nothing_is_accepted_after_close(registry):
    module = tvmdevice.compile(demo_model(), "c", registry=registry)
    ex = module.executor()
    x = np.zeros((1, 16, 16, 1), np.int8)
    ex.close()
    assert ex.closed
    for call in (lambda: ex.set_inputs([x]), lambda: ex.run([x]), ex.invoke, lambda: ex.tensor(0)):
        with pytest.raises(LifecycleError, match="executor is closed; create a new one"):
            call()
