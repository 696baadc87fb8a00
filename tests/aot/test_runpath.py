"""The executor's run path: cached input/output checks, the run done in C, ``run(out=)`` and ``run_batch``.

A device whose lifecycle is C (the ``_fixtures`` C lifecycle, which can be told to fail a step) and whose
only kernel is a C kernel (``x + 1`` on int8, claimed for RELU) makes the whole run happen in
:meth:`RunLoop.cycle`; its failures must come out as the hooks' would, with the state machine right.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

import tvmdevice
from tvmdevice import DeviceType, Field, Layout, PreparedCall, State, hookimpl
from tvmdevice.aot.builder import ModelBuilder, demo_model
from tvmdevice.device import Device
from tvmdevice.errors import InvalidArgumentError, KernelError, LifecycleError, Status, TVMDeviceError
from tvmdevice.plugin import CLifecycle
from tvmdevice.registry import Registry
from tvmdevice.testing.reference import run_graph

INIT, OPEN, ACTIVATE, DEACTIVATE, CLOSE, DESTROY = range(1, 7)  # the steps _fixtures' C lifecycle records
SIZE = 16


def _c_plugin(kernels: dict) -> types.ModuleType:
    """Device ``lcrun``: the fixtures' C lifecycle, RELU as the C kernel ``kernels["relu"]`` (increment or fail)."""
    from tvmdevice.testing import _fixtures

    layout = Layout("tvm_device_lcrun_t", (Field("calls", "uint32_t"), Field("last", "uint32_t"),
                                           Field("fail_step", "uint32_t"), Field("fail_status", "uint32_t")))
    plugin = types.ModuleType("lcrun_plugin")
    plugin.tvmdevice_device_types = hookimpl(lambda: [DeviceType("lcrun", layout, operators=frozenset({"RELU"}))])
    plugin.tvmdevice_get_attr = hookimpl(lambda device, kind: 1 if kind == 0 else None)

    def prepare(device_type, options, graph, op):
        kernel = _fixtures.failing_kernel() if kernels["relu"] == "fail" else _fixtures.increment_kernel()
        return PreparedCall("tvmd_test_" + kernels["relu"], kernel, _fixtures.IncrementParams(SIZE), 0)

    plugin.tvmdevice_prepare_operator = hookimpl(prepare)
    plugin.lifecycle = CLifecycle(_fixtures.c_lifecycle_capsule, "lcrun")
    return plugin


@pytest.fixture
def lcrun(registry):
    """``(module, kernels)``: a one-RELU model compiled for ``lcrun, c``; set ``kernels["relu"] = "fail"``
    before creating an executor to get the failing kernel."""
    kernels = {"relu": "increment"}
    registry.register(_c_plugin(kernels), "lcrun")
    b = ModelBuilder(name="one_relu", seed=1)
    b.output(b.relu(b.input((1, SIZE))))
    return (lambda: tvmdevice.compile(b.build(), "lcrun, c", registry=registry)), kernels


def assert_released(devices) -> None:
    """Every device destroyed, not faulted, nothing tracked."""
    for dev in devices:
        assert dev.state is State.UNINITIALIZED and not dev.faulted, dev
        assert dev.allocations == {} and dev.streams == set(), dev


def _x(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(-128, 127, (1, SIZE), dtype=np.int8)


# ------------------------------------------------------------- the C run
def test_a_run_on_c_lifecycle_devices_is_done_in_c_and_the_idle_host_is_not_cycled(lcrun):
    compile_, _ = lcrun
    with compile_().executor() as ex:
        assert ex.runs_in_c
        dev, host = ex.devices
        for seed in range(3):
            x = _x(seed)
            (y,) = ex.run([x])
            assert np.array_equal(y, x + 1)
        # Init, then Activate + Deactivate per run, all counted by the C functions themselves.
        assert dev.fields["calls"][0] == 1 + 3 * 2 and dev.fields["last"][0] == DEACTIVATE
        assert dev.state is State.OPENED and not dev.faulted and host.state is State.OPENED


def test_the_python_path_does_not_cycle_the_idle_host_either(lcrun, monkeypatch):
    compile_, _ = lcrun
    activated = []
    real = Device.activate
    monkeypatch.setattr(Device, "activate", lambda self: (activated.append(self.name), real(self))[1])
    with compile_().executor(trace=True) as ex:  # trace mode: every call through the hooks
        assert not ex.runs_in_c
        assert np.array_equal(ex.run([_x()])[0], _x() + 1)
    assert activated == ["lcrun"], "the host device, which runs nothing, is not activated"


def test_wrapped_hooks_take_the_python_path(lcrun):
    compile_, _ = lcrun
    with compile_().executor() as ex:
        dev = ex.devices[0]
        calls = []
        hooks = dev._binding._hooks
    # A hook wrapped before the executor is made (fault injection, a profiler) is called, not bypassed.
    real_hook = type(dev._binding).hook
    try:
        type(dev._binding).hook = lambda b, name: (lambda *a: (calls.append(name), real_hook(b, name)(*a))[1])
        with compile_().executor() as ex:
            assert not ex.runs_in_c
            ex.run([_x()])
    finally:
        type(dev._binding).hook = real_hook
    assert "tvmdevice_activate" in calls and "tvmdevice_deactivate" in calls and hooks


def _fail(dev, step: int, status: int) -> None:
    dev.fields["fail_step"][0] = step
    dev.fields["fail_status"][0] = status


def _python_path_error(compile_, step: int, status: int) -> BaseException:
    """What the same failure raises through the hooks (trace mode calls every hook)."""
    ex = compile_().executor(trace=True)
    assert not ex.runs_in_c
    _fail(ex.devices[0], step, status)
    try:
        ex.run([_x()])
    except TVMDeviceError as exc:
        return exc
    finally:
        _fail(ex.devices[0], 0, 0)
        ex.close()
    raise AssertionError("the Python path did not fail")


def test_a_failed_c_activate_faults_the_device_and_raises_what_the_hook_raises(lcrun):
    compile_, _ = lcrun
    ex = compile_().executor()
    dev = ex.devices[0]
    _fail(dev, ACTIVATE, int(Status.INVALID_STATE))
    with pytest.raises(LifecycleError, match=r"device 'lcrun': TVMDeviceLcrunActivate returned "
                                             r"TVMD_ERR_INVALID_STATE \(2\)") as info:
        ex.run([_x()])
    assert str(info.value) == str(_python_path_error(compile_, ACTIVATE, int(Status.INVALID_STATE)))
    assert dev.state is State.ACTIVE and dev.faulted
    _fail(dev, 0, 0)
    with pytest.raises(LifecycleError, match="cannot activate in state 'active'"):
        ex.run([_x()])
    ex.close()
    assert_released(ex.devices)
    assert dev.fields["last"][0] == 0  # destroyed: the struct is zeroed


def test_a_failed_c_kernel_deactivates_every_device_and_names_the_operator(lcrun):
    compile_, kernels = lcrun
    kernels["relu"] = "fail"
    with compile_().executor() as ex:
        assert ex.runs_in_c
        dev = ex.devices[0]
        with pytest.raises(KernelError, match=r"operator #0 RELU on device 'lcrun' failed with status 7"):
            ex.run([_x()])
        assert dev.state is State.OPENED and not dev.faulted and dev.fields["last"][0] == DEACTIVATE
        with pytest.raises(KernelError):  # the executor stays usable
            ex.run([_x()])
    assert_released(ex.devices)


def test_a_failed_c_deactivate_faults_the_device_and_later_runs_are_refused(lcrun):
    compile_, _ = lcrun
    ex = compile_().executor()
    dev = ex.devices[0]
    _fail(dev, DEACTIVATE, 99)
    with pytest.raises(TVMDeviceError, match=r"TVMDeviceLcrunDeactivate returned status 99") as info:
        ex.run([_x()])
    assert "unknown status code 99" in str(info.value)
    assert str(info.value) == str(_python_path_error(compile_, DEACTIVATE, 99))
    assert dev.state is State.OPENED and dev.faulted
    _fail(dev, 0, 0)
    with pytest.raises(LifecycleError, match="faulted"):
        ex.run([_x()])
    ex.close()
    assert_released(ex.devices)


# --------------------------------------------------- inputs and outputs
def _module(registry, target: str = "cmsis-nn, c"):
    if target == "c":
        return tvmdevice.compile(demo_model(), "c", registry=registry)
    installed = Registry()
    if "cmsis-nn" not in installed.device_names():
        pytest.skip("cmsis-nn not installed (pip install ./plugins/cmsis)")
    return tvmdevice.compile(demo_model(), target, registry=installed)


def _demo_input(module, seed: int = 0) -> np.ndarray:
    (t,) = module.graph.inputs
    return np.random.default_rng(seed).integers(-128, 128, module.graph.tensors[t].shape, dtype=np.int8)


@pytest.mark.parametrize("target", ["c", "cmsis-nn, c"])
def test_out_receives_the_outputs_and_is_returned(registry, target):
    module = _module(registry, target)
    x = _demo_input(module)
    expected = run_graph(module.graph, [x])[module.graph.outputs[0]]
    with module.executor() as ex:
        assert ex.runs_in_c is (target == "cmsis-nn, c")
        out = np.full(expected.shape, 99, expected.dtype)
        result = ex.run([x], out=[out])
        assert result[0] is out and np.array_equal(out, expected)
        # A strided (not C-contiguous) out of the right shape is filled too, by numpy.
        wide = np.zeros((*expected.shape[:-1], 2 * expected.shape[-1]), expected.dtype)
        (strided,) = ex.run([x], out=[wide[..., ::2]])
        assert np.array_equal(strided, expected) and np.array_equal(wide[..., ::2], expected)
        # A strided input is accepted and copied by numpy.
        wide_in = np.repeat(x, 2, axis=-1)
        assert np.array_equal(ex.run([wide_in[..., ::2]])[0], expected)


def test_a_bad_out_is_refused_before_the_run_naming_the_output(registry):
    module = _module(registry, "c")
    x = _demo_input(module)
    with module.executor() as ex:
        (y,) = ex.run([x])
        flat = np.empty(y.size, y.dtype)  # the right number of elements, the wrong shape
        with pytest.raises(InvalidArgumentError, match=rf"out\[0\] .* must have shape {re_shape(y.shape)}, got"):
            ex.run([x], out=[flat])
        with pytest.raises(InvalidArgumentError, match=r"out\[0\] .* must be int8, got int16"):
            ex.run([x], out=[np.empty(y.shape, np.int16)])
        frozen = np.empty_like(y)
        frozen.flags.writeable = False
        with pytest.raises(InvalidArgumentError, match=r"out\[0\] .* is read-only"):
            ex.run([x], out=[frozen])
        with pytest.raises(InvalidArgumentError, match=r"has 1 output\(s\), out has 2"):
            ex.run([x], out=[np.empty_like(y), np.empty_like(y)])
        with pytest.raises(InvalidArgumentError, match="out must be a list of arrays, got ndarray"):
            ex.run([x], out=np.empty_like(y))


def re_shape(shape: tuple) -> str:
    return str(shape).replace("(", r"\(").replace(")", r"\)")


def test_inputs_of_the_right_size_and_the_wrong_shape_are_refused(registry):
    module = _module(registry, "c")
    x = _demo_input(module)
    with module.executor() as ex:
        with pytest.raises(InvalidArgumentError, match="must have shape"):
            ex.run([x.reshape(-1)])
        with pytest.raises(InvalidArgumentError, match="must have shape"):
            ex.run([x.reshape(x.shape[0], x.shape[1] * x.shape[2], 1, x.shape[3])])  # same rank and size
        with pytest.raises(InvalidArgumentError, match="must be int8, got uint8"):
            ex.run([x.view(np.uint8)])


# ---------------------------------------------------------------- batch
@pytest.mark.parametrize("target", ["c", "cmsis-nn, c"])
@pytest.mark.parametrize("workers", [None, 1, 2, 3])
def test_run_batch_equals_one_run_per_sample(registry, target, workers):
    module = _module(registry, target)
    xs = np.stack([_demo_input(module, seed) for seed in range(7)])
    with module.executor() as ex:
        expected = np.stack([ex.run([x])[0] for x in xs])
        (got,) = ex.run_batch([xs], workers=workers)
        assert got.shape == expected.shape and np.array_equal(got, expected)
        out = np.zeros_like(expected)
        assert ex.run_batch([xs], workers=workers, out=[out])[0] is out and np.array_equal(out, expected)
    assert_released(ex.devices)


def test_run_batch_refuses_what_is_not_a_stacked_batch(registry):
    module = _module(registry, "c")
    x = _demo_input(module)
    with module.executor() as ex:
        with pytest.raises(InvalidArgumentError, match=r"stacked input 0 must be int8 of shape \(N, \*"):
            ex.run_batch([x])  # one sample, not a stack of them
        with pytest.raises(InvalidArgumentError, match="run_batch takes 1 stacked input"):
            ex.run_batch(np.stack([x, x]))
        with pytest.raises(InvalidArgumentError, match="workers must be None or an int >= 1"):
            ex.run_batch([np.stack([x, x])], workers=0)
        y = ex.run([x])[0]
        with pytest.raises(InvalidArgumentError, match=r"out\[0\] must be a writable int8 array of shape"):
            ex.run_batch([np.stack([x, x])], out=[np.empty((3, *y.shape), np.int8)])


def test_run_batch_with_workers_refuses_a_model_with_state(registry):
    b = ModelBuilder(name="stateful", seed=2)
    b.output(b.svdf(b.input((1, 8)), units=4, rank=1, memory=4))
    module = tvmdevice.compile(b.build(), "c", registry=registry)
    xs = np.zeros((3, 1, 8), np.int8)
    with module.executor() as ex:
        with pytest.raises(InvalidArgumentError, match="operator state"):
            ex.run_batch([xs], workers=2)
        ex.run_batch([xs])  # in order: fine


def test_run_batch_worker_executors_are_closed_with_the_executor(registry):
    module = _module(registry)
    xs = np.stack([_demo_input(module, seed) for seed in range(4)])
    ex = module.executor()
    ex.run_batch([xs], workers=2)
    (worker,) = ex._batch.workers
    ex.close()
    assert worker.closed
    assert_released(ex.devices + worker.devices)
    with pytest.raises(LifecycleError, match="executor is closed"):
        ex.run_batch([xs])
