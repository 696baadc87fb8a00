"""Discovery through entry points, isolation of broken plugins, allow-lists, duplicates."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings

import pytest

from tvmdevice.errors import (
    DuplicateDeviceError,
    PluginValidationError,
    PluginWarning,
    UnknownDeviceError,
)
from tvmdevice.registry import Registry


def _load(**kwargs) -> tuple[Registry, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg = Registry(**kwargs)
        reg.load()
    return reg, [w for w in caught if issubclass(w.category, PluginWarning)]


def _record(reg: Registry, name: str):
    return next(r for r in reg.records() if r.name == name)


def test_good_plugin_is_discovered_with_its_distribution(install_fixture_plugin):
    install_fixture_plugin("fixture_good", entry_name="toy", dist="tvmdevice-toy", version="1.2.3")
    reg, warned = _load()
    assert not warned
    rec = _record(reg, "toy")
    assert (rec.status, rec.distribution, rec.version) == ("loaded", "tvmdevice-toy", "1.2.3")
    assert reg.device_type("toy-alias").name == "toy"
    assert set(reg.device_names()) >= {"c", "toy"}


def test_import_failure_is_reported_and_skipped(install_fixture_plugin):
    install_fixture_plugin("fixture_good", entry_name="toy")
    install_fixture_plugin("fixture_import_error", dist="tvmdevice-broken", version="0.3")
    reg, warned = _load()
    rec = _record(reg, "fixture_import_error")
    assert rec.status == "failed"
    assert "ModuleNotFoundError" in rec.error and "tvmdevice_fixture_missing_extension" in rec.error
    assert len(warned) == 1
    message = str(warned[0].message)
    assert "tvmdevice-broken 0.3" in message and "ModuleNotFoundError" in message
    # The other plugins still work.
    assert reg.device_type("toy").name == "toy"


@pytest.mark.parametrize("module, expected", [
    ("fixture_bad_hookspec", "power_level"),
    ("fixture_unknown_hook", "tvmdevice_activte"),
    ("fixture_missing_hooks", "tvmdevice_alloc_data_space"),
])
def test_hookspec_violations_are_refused(install_fixture_plugin, module, expected):
    install_fixture_plugin(module)
    reg, warned = _load()
    rec = _record(reg, module)
    assert rec.status == "failed"
    assert expected in rec.error
    assert any(expected in str(w.message) for w in warned)
    assert not reg.pm.is_registered(rec.plugin) if rec.plugin is not None else True


def test_incompatible_api_version_names_supported_versions(install_fixture_plugin):
    install_fixture_plugin("fixture_future_api", dist="tvmdevice-future", version="9.0")
    reg, _ = _load()
    rec = _record(reg, "fixture_future_api")
    assert rec.status == "failed"
    assert "plugin API version 99" in rec.error and "supports versions [1]" in rec.error
    with pytest.raises(UnknownDeviceError):
        reg.device_type("future")


def test_duplicate_device_names_name_both_distributions(install_fixture_plugin):
    install_fixture_plugin("fixture_good", entry_name="toy", dist="tvmdevice-toy")
    install_fixture_plugin("fixture_duplicate", entry_name="toy2", dist="tvmdevice-toy-clone")
    reg, warned = _load()
    with pytest.raises(DuplicateDeviceError) as info:
        reg.device_type("toy")
    assert "tvmdevice-toy " in str(info.value) and "tvmdevice-toy-clone" in str(info.value)
    # A collision used to mark both plugins failed, removing the device the user asked for.
    # Both stay loaded; the name is ambiguous until the user chooses (test_name_collisions_*).
    assert {_record(reg, "toy").status, _record(reg, "toy2").status} == {"loaded"}
    assert "TVMDEVICE_PLUGINS=" in str(info.value) and "'tvmdevice-toy-clone:toy'" in str(info.value)
    assert warned


def test_allow_list_and_autoload_switch(install_fixture_plugin, monkeypatch):
    install_fixture_plugin("fixture_good", entry_name="toy", dist="tvmdevice-toy")
    install_fixture_plugin("fixture_import_error")
    monkeypatch.setenv("TVMDEVICE_PLUGINS", "tvmdevice-toy")
    reg, warned = _load()
    assert not warned, "a plugin outside the allow-list must not even be imported"
    assert _record(reg, "fixture_import_error").status == "disabled"
    assert reg.device_type("toy")
    monkeypatch.delenv("TVMDEVICE_PLUGINS")
    monkeypatch.setenv("TVMDEVICE_DISABLE_PLUGIN_AUTOLOAD", "1")
    reg, warned = _load()
    assert reg.device_names() == ["c"] and not warned


def test_explicit_register_raises_instead_of_warning(registry):
    import importlib
    import sys as _sys
    from pathlib import Path

    _sys.path.insert(0, str(Path(__file__).parent.parent / "fixtures" / "plugins"))
    try:
        good = importlib.import_module("fixture_good")
        bad = importlib.import_module("fixture_bad_hookspec")
    finally:
        _sys.path.pop(0)
    registry.register(good, "toy")
    assert registry.device_type("toy").name == "toy"
    with pytest.raises(PluginValidationError, match="power_level"):
        registry.register(bad, "bad")
    with pytest.raises(PluginValidationError, match="already registered"):
        registry.register(good, "toy-again")
    registry.unregister("toy")
    with pytest.raises(UnknownDeviceError):
        registry.device_type("toy")


def test_unknown_device_lists_installed_and_how_to_install(registry):
    with pytest.raises(UnknownDeviceError) as info:
        registry.device_type("hexagon")
    text = str(info.value)
    assert "'hexagon'" in text and "Installed devices: c" in text
    # No install hint built from the name the user typed (dependency confusion): only the project's own plugins.
    assert "pip install" not in text and "tvmdevice-hexagon" not in text
    assert "No plugin of this project provides 'hexagon'" in text


def _modules_after(code: str) -> list[str]:
    code += "; import sys; print(sorted(m for m in sys.modules if m.startswith(('tvmdevice', 'tflite', 'rich', "
    code += "'numpy'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return eval(out)  # noqa: S307 - our own subprocess's repr of a list of strings


def test_import_is_lazy_and_cheap():
    loaded = _modules_after("import tvmdevice")
    assert "tvmdevice.registry" not in loaded, "import tvmdevice must not run discovery"
    assert not any(m.startswith(("tvmdevice_", "tflite", "rich", "tvmdevice.aot", "numpy")) for m in loaded)


def test_discovery_does_not_import_heavy_modules():
    # Holds for every installed plugin too: listing devices must not load
    # numpy, kernels or compiled extensions.
    loaded = _modules_after("import tvmdevice; tvmdevice.get_registry().device_types()")
    heavy = [m for m in loaded if m.startswith(("numpy", "tflite", "tvmdevice.aot", "tvmdevice.testing.reference"))
             or (m.startswith("tvmdevice_") and m.rsplit(".", 1)[-1].startswith("_"))]
    assert heavy == []


def test_cli_plugins_json_lists_failed_plugins(install_fixture_plugin, tmp_path):
    install_fixture_plugin("fixture_good", entry_name="toy", dist="tvmdevice-toy")
    install_fixture_plugin("fixture_import_error", dist="tvmdevice-broken")
    site = str(tmp_path / "site")
    env = {**__import__("os").environ, "PYTHONPATH": site}
    out = subprocess.run([sys.executable, "-m", "tvmdevice", "plugins", "--json"], capture_output=True,
                         text=True, env=env, check=True)
    data = json.loads(out.stdout)
    by_name = {p["name"]: p for p in data["plugins"]}
    assert by_name["toy"]["status"] == "loaded"
    assert by_name["toy"]["device_types"][0]["options"][0]["name"] == "size"
    assert by_name["fixture_import_error"]["status"] == "failed"
    text = subprocess.run([sys.executable, "-m", "tvmdevice", "plugins"], capture_output=True, text=True,
                          env=env, check=True).stdout
    assert "toy" in text and "failed" in text and "tvmdevice-broken" in text


# ------------------------------------------------------------------ isolation beyond Exception
def test_sys_exit_at_import_is_a_load_failure_naming_the_distribution(install_fixture_plugin):
    install_fixture_plugin("fixture_good", entry_name="toy")
    install_fixture_plugin("fixture_sys_exit", dist="tvmdevice-quitter", version="2.0")
    reg, warned = _load()
    rec = _record(reg, "fixture_sys_exit")
    assert rec.status == "failed" and "called sys.exit(3)" in rec.error
    assert any("tvmdevice-quitter 2.0" in str(w.message) and "sys.exit(3)" in str(w.message) for w in warned)
    assert rec.probe is not None and rec.probe.safe, "sys.exit is contained in-process, so the probe lets it through"
    assert reg.device_type("toy").name == "toy"


def test_keyboard_interrupt_raised_by_the_plugin_is_contained(install_fixture_plugin):
    install_fixture_plugin("fixture_good", entry_name="toy")
    install_fixture_plugin("fixture_keyboard_interrupt", dist="tvmdevice-kbi")
    reg, warned = _load(probe="never")
    rec = _record(reg, "fixture_keyboard_interrupt")
    assert rec.status == "failed"
    assert "raised KeyboardInterrupt, and no Ctrl-C was pressed" in rec.error
    assert any("tvmdevice-kbi" in str(w.message) for w in warned)
    assert reg.device_type("toy").name == "toy"


def test_keyboard_interrupt_in_another_thread_is_the_plugins(install_fixture_plugin):
    import threading

    install_fixture_plugin("fixture_keyboard_interrupt")
    out = {}
    thread = threading.Thread(target=lambda: out.update(reg=_load(probe="never")[0]))
    thread.start()
    thread.join()
    assert _record(out["reg"], "fixture_keyboard_interrupt").status == "failed"


def test_a_real_ctrl_c_during_discovery_is_honoured_and_rolled_back(install_fixture_plugin):
    install_fixture_plugin("fixture_good", entry_name="toy")
    install_fixture_plugin("fixture_ctrl_c", entry_name="zz_ctrl_c")  # sorted after toy: toy loads first
    reg = Registry(probe="never")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PluginWarning)
        with pytest.raises(KeyboardInterrupt):
            reg.load()
    assert [r.name for r in reg._records] == ["c"], "nothing of the interrupted discovery is kept"
    with pytest.raises(KeyboardInterrupt):  # the next question discovers afresh (and Ctrl-C comes again)
        reg.device_names()
    assert [r.name for r in reg._records] == ["c"]
    import signal

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, "the SIGINT handler is restored"


def _colliding(install_fixture_plugin, **kwargs):
    install_fixture_plugin("fixture_good", entry_name="toy", dist="tvmdevice-toy", version="1.0")
    install_fixture_plugin("fixture_rival", entry_name="rival", dist="tvmdevice-rival", version="2.0")
    return _load(**kwargs)


def test_name_collisions_name_both_distributions_and_both_ways_to_choose(install_fixture_plugin):
    reg, warned = _colliding(install_fixture_plugin)
    assert {_record(reg, "toy").status, _record(reg, "rival").status} == {"loaded"}
    with pytest.raises(DuplicateDeviceError) as info:
        reg.device_type("toy")
    text = str(info.value)
    assert "tvmdevice-toy 1.0 (plugin 'toy')" in text and "tvmdevice-rival 2.0 (plugin 'rival')" in text
    assert "'tvmdevice-rival:toy' or 'tvmdevice-toy:toy'" in text, "way 1: a qualified name in the target"
    # way 2: the allow-list keeps one of the two and every other installed plugin (none in the core-only env)
    allow = re.search(r"with the allow-list TVMDEVICE_PLUGINS \(e\.g\. TVMDEVICE_PLUGINS="
                      r"tvmdevice-rival((?:,[\w.-]+)*) keeps tvmdevice-rival and the other plugins\)", text)
    assert allow, "way 2"
    assert "tvmdevice-toy" not in allow.group(1).split(","), "the allow-list leaves the other owner out"
    assert any("'toy' is declared by both" in str(w.message) for w in warned), "said at discovery too"
    # Names only one of them declares keep working.
    assert reg.device_type("toy-alias") is not reg.device_type("rival")
    assert reg.plugin_for("rival").distribution == "tvmdevice-rival"
    assert list(reg.conflicts(_record(reg, "toy"))) == ["toy"]


def test_name_collisions_the_chosen_distribution_works(install_fixture_plugin):
    reg, _ = _colliding(install_fixture_plugin)
    mine = reg.device_type("tvmdevice-rival:toy")
    assert mine.option("colour") is not None and mine is reg.device_type("rival")
    assert reg.device_type("TVMDevice_Toy:toy").option("size") is not None, "PEP 503 normalized"
    device = reg.create_device("tvmdevice-rival:toy", {"colour": "blue"})
    device.init()
    assert device.get_attr(0) == 2, "the rival's own hooks run"
    device.release()
    with pytest.raises(UnknownDeviceError, match="'tvmdevice-rival:toy', 'tvmdevice-toy:toy'"):
        reg.device_type("tvmdevice-other:toy")


def test_name_collisions_the_allow_list_chooses(install_fixture_plugin, monkeypatch):
    install_fixture_plugin("fixture_good", entry_name="toy", dist="tvmdevice-toy")
    install_fixture_plugin("fixture_rival", entry_name="rival", dist="tvmdevice-rival")
    monkeypatch.setenv("TVMDEVICE_PLUGINS", "tvmdevice_rival")  # normalized like pip
    reg, warned = _load()
    assert not warned
    assert reg.device_type("toy").option("colour") is not None
    assert _record(reg, "toy").status == "disabled"


def test_a_plugin_cannot_take_the_builtin_host_name(registry):
    from tvmdevice import DeviceType, Field, Layout, hookimpl

    class Squatter:
        @hookimpl
        def tvmdevice_device_types(self):
            return [DeviceType("squat", Layout("tvm_device_squat_t", (Field("x", "uint32_t"),)),
                               aliases=("c",))]

    with pytest.raises((DuplicateDeviceError, PluginValidationError)):
        registry.register(Squatter(), "squat")
    assert registry.device_type("c").is_host
