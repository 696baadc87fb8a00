"""Every compile-time hook of a device's owner is called one way: a plugin's exception is wrapped alike."""

from __future__ import annotations

import types

import pytest

from tvmdevice import DeviceType, Field, Layout, hookimpl
from tvmdevice.aot.builder import single_op_model
from tvmdevice.aot.frontend import load_tflite
from tvmdevice.errors import NotSupportedError, Refusal, TVMDeviceError

LAYOUT = Layout("tvm_device_grumpy_t", (Field("x", "uint32_t"),))
DTYPE = DeviceType("grumpy", LAYOUT, operators=frozenset({"RELU"}))


def _grumpy(**hooks) -> types.ModuleType:
    """A host-memory device whose compile-time hooks are ``hooks``; lifecycle does nothing."""
    plugin = types.ModuleType("grumpy_plugin")
    plugin.tvmdevice_device_types = hookimpl(lambda: [DTYPE])
    plugin.tvmdevice_get_attr = hookimpl(lambda device, kind: None)
    for step in ("open", "activate", "deactivate", "close", "destroy"):
        setattr(plugin, f"tvmdevice_{step}", hookimpl(lambda device: None))
    plugin.tvmdevice_init = hookimpl(lambda device, options: None)
    plugin.tvmdevice_prepare_operator = hookimpl(lambda op: None)
    for name, fn in hooks.items():
        setattr(plugin, name, hookimpl(fn))
    return plugin


def _boom(*args, **kwargs):
    raise KeyError("the plugin's own bug")


def _relu():
    graph = load_tflite(single_op_model("RELU"))
    return graph, graph.operators[0]


ASKS = {
    "tvmdevice_memory_capacity": lambda reg, graph, op: reg.memory_capacity(DTYPE, {}),
    "tvmdevice_workspace_capacity": lambda reg, graph, op: reg.workspace_capacity(DTYPE, {}),
    "tvmdevice_check_operator": lambda reg, graph, op: reg.check_operator(DTYPE, {}, graph, op),
    "tvmdevice_prepare_operator": lambda reg, graph, op: reg.prepare_operator(DTYPE, {}, graph, op),
    "tvmdevice_prepare_copy": lambda reg, graph, op: reg.prepare_copy(DTYPE, {}, 16, True),
    "tvmdevice_export_sources": lambda reg, graph, op: reg.export_sources(DTYPE, {}, "host"),
}


@pytest.mark.parametrize("hook", sorted(ASKS))
def test_a_plugin_raising_in_a_compile_hook_gives_the_wrapped_error(registry, hook):
    registry.register(_grumpy(**{hook: _boom}), "grumpy", distribution="tvmdevice-grumpy", version="0.7")
    graph, op = _relu()
    with pytest.raises(TVMDeviceError) as err:
        ASKS[hook](registry, graph, op)
    assert type(err.value) is TVMDeviceError
    message = str(err.value)
    assert message.startswith(f"plugin 'grumpy' (tvmdevice-grumpy 0.7), device 'grumpy': {hook} raised")
    assert message.endswith("KeyError: \"the plugin's own bug\"")
    assert isinstance(err.value.__cause__, KeyError)


def test_the_capacity_hooks_name_no_operator_and_the_operator_hooks_do(registry):
    registry.register(_grumpy(tvmdevice_memory_capacity=_boom, tvmdevice_prepare_operator=_boom), "grumpy")
    graph, op = _relu()
    with pytest.raises(TVMDeviceError, match=r"tvmdevice_memory_capacity raised: KeyError"):
        registry.memory_capacity(DTYPE, {})
    with pytest.raises(TVMDeviceError, match=r"tvmdevice_prepare_operator raised for operator #0 RELU: KeyError"):
        registry.prepare_operator(DTYPE, {}, graph, op)


def test_the_plugins_own_tvmdevice_errors_pass_unchanged(registry):
    def refuse(op):
        raise Refusal("not today")

    registry.register(_grumpy(tvmdevice_prepare_operator=refuse), "grumpy")
    graph, op = _relu()
    with pytest.raises(Refusal, match="^not today$"):
        registry.prepare_operator(DTYPE, {}, graph, op)


def test_answers_pass_through_and_capacities_are_ints(registry):
    registry.register(_grumpy(tvmdevice_memory_capacity=lambda: "4096", tvmdevice_check_operator=lambda: "no"),
                      "grumpy")
    graph, op = _relu()
    assert registry.memory_capacity(DTYPE, {}) == 4096
    assert registry.workspace_capacity(DTYPE, {}) is None  # the framework's default: no limit
    assert registry.check_operator(DTYPE, {}, graph, op) == "no"


def test_a_hook_nobody_implements_is_not_supported(registry):
    from tvmdevice.owner_calls import call_owner

    registry.register(_grumpy(), "grumpy")
    record = registry.plugin_for("grumpy")
    no_defaults = types.ModuleType("no_defaults")
    with pytest.raises(NotSupportedError, match=r"plugin 'grumpy' \(.*\) does not implement tvmdevice_prepare_copy"):
        call_owner(registry.pm, no_defaults, record, "tvmdevice_prepare_copy", DTYPE, options={}, nbytes=1,
                   to_device=True)
