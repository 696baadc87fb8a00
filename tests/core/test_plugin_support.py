"""What the framework provides a plugin author: host-memory hooks and the C lifecycle object."""

from __future__ import annotations

import types

import numpy as np
import pytest

from tvmdevice import DeviceType, Field, Layout, MemoryKind, hookimpl
from tvmdevice.errors import (
    ABIMismatchError,
    DeviceMemoryError,
    LifecycleError,
    PluginValidationError,
    TVMDeviceError,
)
from tvmdevice.memory import host_heap
from tvmdevice.plugin import CLifecycle
from tvmdevice.plugin_support import c_step

LIFECYCLE_LAYOUT = Layout("tvm_device_lcdev_t", (Field("calls", "uint32_t"), Field("last", "uint32_t"),
                                                 Field("fail_step", "uint32_t"), Field("fail_status", "uint32_t")))
INIT, OPEN, ACTIVATE, DEACTIVATE, CLOSE, DESTROY = range(1, 7)  # the steps _fixtures' C lifecycle records


def _plugin(name: str, dtype: DeviceType, lifecycle: CLifecycle | None = None, **hooks) -> types.ModuleType:
    plugin = types.ModuleType(name)
    plugin.tvmdevice_device_types = hookimpl(lambda: [dtype])
    plugin.tvmdevice_get_attr = hookimpl(lambda device, kind: 1 if kind == 0 else None)
    for hook_name, fn in hooks.items():
        setattr(plugin, hook_name, fn)
    if lifecycle is not None:
        plugin.lifecycle = lifecycle  # as a plugin module does: registered with it
    return plugin


def _lifecycle_plugin(source, name: str = "lcdev", memory: MemoryKind = MemoryKind.HOST,
                      lifecycle: type[CLifecycle] = CLifecycle, **hooks) -> types.ModuleType:
    layout = Layout(f"tvm_device_{name}_t", LIFECYCLE_LAYOUT.fields)
    return _plugin(f"{name}_plugin", DeviceType(name, layout, memory=memory), lifecycle(source, name), **hooks)


def _capsule(future_abi: bool = False):
    from tvmdevice.testing import _fixtures

    return _fixtures.c_lifecycle_capsule(future_abi)


# ------------------------------------------------------------ host memory
def test_a_host_memory_device_gets_data_space_copies_and_workspace_from_the_framework(registry):
    registry.register(_lifecycle_plugin(_capsule))
    dev = registry.create_device("lcdev")
    dev.init(); dev.open()
    ptr = dev.alloc_data_space(100, 64)
    assert ptr % 64 == 0 and host_heap(dev).bytes_in_use == 100
    data = np.arange(100, dtype=np.uint8)
    dev.upload(data, ptr)
    assert np.array_equal(dev.download(ptr, np.empty(100, np.uint8)), data)
    scratch = dev.alloc_workspace(32)
    assert host_heap(dev).bytes_in_use == 132
    dev.free_workspace(scratch); dev.free_data_space(ptr)
    assert host_heap(dev).bytes_in_use == 0 and len(host_heap(dev)) == 0
    for hook in ("tvmdevice_alloc_data_space", "tvmdevice_free_data_space", "tvmdevice_copy_data_from_to"):
        assert dev._binding.is_default(hook)
    dev.close(); dev.destroy()


def test_the_default_heap_keeps_the_capacity_the_plugin_gave_it(registry):
    def open_(device):
        host_heap(device, 128)

    registry.register(_plugin("capped", DeviceType("capped", Layout("tvm_device_capped_t", (Field("x", "uint32_t"),))),
                              **{name: hookimpl(fn) for name, fn in {
                                  "tvmdevice_init": lambda device, options: None, "tvmdevice_open": open_,
                                  "tvmdevice_activate": lambda device: None,
                                  "tvmdevice_deactivate": lambda device: None,
                                  "tvmdevice_close": lambda device: None,
                                  "tvmdevice_destroy": lambda device: None}.items()}))
    dev = registry.create_device("capped")
    dev.init(); dev.open()
    dev.alloc_data_space(100)
    with pytest.raises(DeviceMemoryError, match=r"'capped': out of memory: requested 64 B, free 28 B"):
        dev.alloc_data_space(64)
    dev.close(); dev.destroy()


def test_a_separate_memory_device_must_implement_its_memory_hooks(registry):
    with pytest.raises(PluginValidationError) as err:
        registry.register(_lifecycle_plugin(_capsule, "npu", memory=MemoryKind.SEPARATE))
    for hook in ("tvmdevice_alloc_data_space", "tvmdevice_copy_data_from_to", "tvmdevice_free_data_space"):
        assert hook in str(err.value)
    assert "tvmdevice_init" not in str(err.value)


def test_a_host_memory_device_still_needs_its_lifecycle(registry):
    bare = _plugin("bare", DeviceType("bare", Layout("tvm_device_bare_t", (Field("x", "uint32_t"),))))
    with pytest.raises(PluginValidationError, match="tvmdevice_init") as err:
        registry.register(bare)
    assert "alloc_data_space" not in str(err.value)


# ------------------------------------------------------------ C lifecycle
def test_each_lifecycle_hook_calls_its_c_function_on_the_device_struct(registry):
    registry.register(_lifecycle_plugin(_capsule))
    dev = registry.create_device("lcdev")
    f = dev.fields
    seen = []
    for step in (dev.init, dev.open, dev.activate, dev.deactivate, dev.close):
        step()
        seen.append((int(f["calls"][0]), int(f["last"][0])))
    # Open's pointer is NULL (the device needs no Open): skipped, nothing called.
    assert seen == [(1, INIT), (1, INIT), (2, ACTIVATE), (3, DEACTIVATE), (4, CLOSE)]
    f["fail_step"][0], f["fail_status"][0] = DESTROY, 2  # Destroy zeroes the struct: observe it by its status
    with pytest.raises(LifecycleError, match="TVMDeviceLcdevDestroy"):
        dev.destroy()


@pytest.mark.parametrize(("status", "error"), [(2, LifecycleError), (3, DeviceMemoryError), (1, TVMDeviceError)])
def test_a_non_zero_status_raises_its_error_naming_device_and_c_function(registry, status, error):
    registry.register(_lifecycle_plugin(_capsule))
    dev = registry.create_device("lcdev")
    dev.init(); dev.open()
    dev.fields["fail_step"][0], dev.fields["fail_status"][0] = ACTIVATE, status
    with pytest.raises(error, match=rf"device 'lcdev': TVMDeviceLcdevActivate returned TVMD_ERR_\w+ \({status}\)"):
        dev.activate()
    assert dev.faulted
    dev.fields["fail_step"][0] = 0
    dev.release()


def test_an_unknown_status_is_still_an_error(registry):
    registry.register(_lifecycle_plugin(_capsule))
    dev = registry.create_device("lcdev")
    dev.fields["fail_step"][0], dev.fields["fail_status"][0] = INIT, 99
    with pytest.raises(TVMDeviceError, match="TVMDeviceLcdevInit returned status 99.*unknown status code 99"):
        dev.init()


def test_a_lifecycle_built_for_another_abi_is_refused_before_any_call(registry):
    registry.register(_lifecycle_plugin(lambda: _capsule(future_abi=True)))
    dev = registry.create_device("lcdev")
    with pytest.raises(ABIMismatchError, match="lifecycle ABI version 2"):
        dev.init()
    assert int(dev.fields["calls"][0]) == 0


def test_the_source_is_imported_only_when_a_device_is_first_initialized(registry):
    lifecycle = CLifecycle("tvmdevice_no_such_plugin._ext:LIFECYCLE", "ghost")  # nothing imported yet
    layout = Layout("tvm_device_ghost_t", (Field("x", "uint32_t"),))
    registry.register(_plugin("ghost", DeviceType("ghost", layout), lifecycle))
    hooks = sorted(h.name for h in registry.pm.get_hookcallers(lifecycle))
    assert hooks == sorted(f"tvmdevice_{s}" for s in ("init", "open", "activate", "deactivate", "close", "destroy"))
    with pytest.raises(TVMDeviceError, match="tvmdevice_no_such_plugin"):
        registry.create_device("ghost").init()


def test_the_lifecycle_object_is_registered_and_unregistered_with_its_module(registry):
    plugin = _lifecycle_plugin(_capsule)
    registry.register(plugin, "lcdev")
    assert registry.pm.is_registered(plugin.lifecycle)
    registry.unregister("lcdev")
    assert not registry.pm.is_registered(plugin.lifecycle) and not registry.pm.is_registered(plugin)
    registry.register(plugin, "lcdev")  # and can come back
    registry.create_device("lcdev").init()


def test_a_hook_implemented_by_the_module_and_its_lifecycle_is_refused(registry):
    plugin = _lifecycle_plugin(_capsule, tvmdevice_open=hookimpl(lambda device: None))
    with pytest.raises(PluginValidationError, match=r"\['tvmdevice_open'\] both in the module and in its CLifecycle"):
        registry.register(plugin)
    assert not registry.pm.is_registered(plugin) and not registry.pm.is_registered(plugin.lifecycle)


class _PythonOpen(CLifecycle):
    """Open in Python, counting; the other steps stay C."""

    opened = 0

    @hookimpl
    def tvmdevice_open(self, device):
        type(self).opened += 1
        super().tvmdevice_open(device)


def test_a_subclass_does_an_overridden_step_in_python_and_the_rest_in_c(registry):
    registry.register(_lifecycle_plugin(_capsule, lifecycle=_PythonOpen))
    dev = registry.create_device("lcdev")
    dev.init(); dev.open(); dev.activate()
    assert _PythonOpen.opened == 1 and int(dev.fields["last"][0]) == ACTIVATE
    # What the executor's run loop may call without Python: the steps left to C, not the override.
    assert c_step(dev._binding.hook("tvmdevice_open"), dev) is None
    address, symbol = c_step(dev._binding.hook("tvmdevice_activate"), dev)
    assert address != 0 and symbol == "TVMDeviceLcdevActivate"
    dev.deactivate(); dev.close(); dev.destroy()


def test_call_runs_one_c_step_on_a_struct_without_raising():
    from tvmdevice.memory import address_of, aligned_empty

    lifecycle = CLifecycle(_capsule, "lcdev")
    storage = aligned_empty(LIFECYCLE_LAYOUT.size, 64)
    storage[:] = 0
    assert lifecycle.call("open", address_of(storage)) is None  # NULL pointer: nothing called
    assert lifecycle.call("init", address_of(storage)) == 0
    assert lifecycle.address("open") == 0 and lifecycle.address("init") != 0


def test_anything_but_a_lifecycle_capsule_is_refused(registry):
    from tvmdevice.testing import _fixtures

    registry.register(_lifecycle_plugin(_fixtures.increment_kernel))
    with pytest.raises(ABIMismatchError, match="'tvmdevice.lifecycle'.*'tvmdevice.kernel'"):
        registry.create_device("lcdev").init()
