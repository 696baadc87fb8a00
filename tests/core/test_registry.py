"""Discovery through entry points, isolation of broken plugins, allow-lists, duplicates."""

from __future__ import annotations

import json
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
    assert {_record(reg, "toy").status, _record(reg, "toy2").status} == {"failed"}
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
        registry.device_type("ethos-u")
    text = str(info.value)
    assert "'ethos-u'" in text and "Installed devices: c" in text and "pip install tvmdevice-ethos-u" in text


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
    heavy = [m for m in loaded if m.startswith(("numpy", "tflite", "tvmdevice.aot", "tvmdevice.host.kernels"))
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
