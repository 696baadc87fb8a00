"""Target strings: tvmc syntax, JSON form, typed options, errors, round trips."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tvmdevice.errors import TargetError, TargetOptionError, UnknownDeviceError
from tvmdevice.target import Target

FIXTURES = Path(__file__).parent.parent / "fixtures" / "plugins"


@pytest.fixture
def reg(registry):
    sys.path.insert(0, str(FIXTURES))
    try:
        registry.register(importlib.import_module("fixture_good"), "toy")
    finally:
        sys.path.pop(0)
    return registry


def test_tvmc_syntax_with_typed_options(reg):
    t = Target.parse('toy -size=0x10 -fast, c -mcpu="cortex m55"', reg)
    assert [e.kind for e in t.entries] == ["toy", "c"]
    assert t.entries[0].attrs == {"size": 16, "fast": True}
    assert t.entries[0].options == {"size": 16, "fast": True}
    assert t.host.attrs == {"mcpu": "cortex m55"}
    assert t.accelerators == t.entries[:1]
    assert str(t) == "toy -size=16 -fast, c -mcpu='cortex m55'"


def test_aliases_resolve_to_canonical_names(reg):
    t = Target.parse("toy-alias, cpu", reg)
    assert str(t) == "toy, c"


@pytest.mark.parametrize("spec", [
    '{"kind": "c", "mcpu": "m4"}',
    '[{"kind": "toy", "size": 3}, {"kind": "c"}]',
    [{"kind": "toy", "size": "3"}, "c"],
])
def test_json_forms(reg, spec):
    t = Target.parse(spec, reg)
    assert t.host.kind == "c"
    assert Target.parse(t.to_json(), reg) == t


@pytest.mark.parametrize("spec, error, words", [
    ("", TargetError, "empty target"),
    ("toy", TargetError, "cannot be a host"),
    ("c, c", TargetError, "appears twice"),
    ("toy, toy-alias, c", TargetError, "appears twice"),
    ("woofles, c", UnknownDeviceError, "this project's plugin tvmdevice-woofles, which is not installed: install it "
                                       "from the tvmdevice source tree, pip install ./plugins/woofles"),
    ("wofles, c", UnknownDeviceError, "did you mean 'woofles'? 'woofles' is provided by this project's plugin"),
    ("TOY, c", UnknownDeviceError, "Device names are exact: did you mean 'toy'?"),
    ("toy_alias, c", UnknownDeviceError, "did you mean 'toy-alias'?"),
    ("c, toy", TargetError, "'c' is a host but is not last. Write the target as 'toy, c'"),
    ("c -mcpu=m55, toy -size=2", TargetError, "Write the target as 'toy -size=2, c -mcpu=m55'"),
    ("toy -sise=2, c", TargetOptionError, "has no option -sise (did you mean '-size'?)"),
    ("toy -Size=2, c", TargetOptionError, "has no option -Size (did you mean '-size'?)"),
    ("toy -colour=red, c", TargetOptionError, "has no option -colour; its options: -size (int), -fast (bool)"),
    ("toy -size=big, c", TargetOptionError, "option -size expects int, got 'big'"),
    ("toy -size, c", TargetOptionError, "expects int; write -size=<value>"),
    ("toy -fast=maybe, c", TargetOptionError, "option -fast expects bool"),
    ("toy -size=1 -size=2, c", TargetOptionError, "given twice"),
    ("toy,, c", TargetError, "empty entry"),
    ('c -mcpu="m55', TargetError, "unterminated"),
    ("-mcpu=m55", TargetError, "start it with a device name"),
    ("c mcpu=m55", TargetError, "expected -key=value"),
    ("{bad json", TargetError, "does not parse"),
    ('[{"size": 1}]', TargetError, "'kind'"),
    (42, TargetError, "not int"),
])
def test_errors_say_what_is_wrong(reg, spec, error, words):
    with pytest.raises(error) as info:
        Target.parse(spec, reg)
    assert words in str(info.value)


_text = st.text(st.characters(codec="ascii", exclude_categories=("Cc",)), max_size=12)


@st.composite
def targets(draw):
    entries = []
    if draw(st.booleans()):
        attrs = {}
        if draw(st.booleans()):
            attrs["size"] = draw(st.integers(-(2**40), 2**40))
        if draw(st.booleans()):
            attrs["fast"] = draw(st.booleans())
        entries.append((draw(st.sampled_from(["toy", "toy-alias"])), attrs))
    host_attrs = {}
    for key in ("mcpu", "march"):
        if draw(st.booleans()):
            host_attrs[key] = draw(_text)
    entries.append((draw(st.sampled_from(["c", "cpu", "llvm"])), host_attrs))
    return entries


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(targets())
def test_round_trip_parse_str_parse(reg, entries):
    as_json = [{"kind": k, **a} for k, a in entries]
    t = Target.parse(as_json, reg)
    again = Target.parse(str(t), reg)
    assert again == t
    assert str(again) == str(t)
    assert Target.parse(t.to_json(), reg) == t


def test_create_devices_in_target_order(reg):
    devices = Target.parse("toy -size=7, c", reg).create_devices(reg)
    assert [d.name for d in devices] == ["toy", "c"]
    assert devices[0].options == {"size": 7, "fast": False}


def test_distribution_qualified_names_choose_between_colliding_plugins(install_fixture_plugin):
    from tvmdevice.errors import DuplicateDeviceError
    from tvmdevice.registry import Registry

    install_fixture_plugin("fixture_good", entry_name="toy", dist="tvmdevice-toy")
    install_fixture_plugin("fixture_rival", entry_name="rival", dist="tvmdevice-rival")
    with pytest.warns(Warning):
        registry = Registry()
        registry.load()
    with pytest.raises(DuplicateDeviceError) as info:
        Target.parse("toy, c", registry)
    assert "tvmdevice-toy" in str(info.value) and "tvmdevice-rival" in str(info.value)
    assert "TVMDEVICE_PLUGINS" in str(info.value)
    t = Target.parse("tvmdevice-rival:toy -colour=blue, c", registry)
    assert t.entries[0].distribution == "tvmdevice-rival" and t.entries[0].attrs == {"colour": "blue"}
    assert str(t) == "tvmdevice-rival:toy -colour=blue, c"
    assert Target.parse(str(t), registry) == t and Target.parse(t.to_json(), registry) == t
    assert Target.parse('[{"kind": "tvmdevice-toy:toy", "size": 2}, "c"]', registry).entries[0].attrs == {"size": 2}
    (toy, host) = Target.parse("tvmdevice-toy:toy, tvmdevice:c", registry).create_devices(registry)
    assert toy.options == {"size": 4, "fast": False} and host.name == "c"
    with pytest.raises(TargetError, match="appears twice"):
        Target.parse("tvmdevice-toy:toy, tvmdevice-rival:toy, c", registry)


def test_a_string_choice_suggests_the_close_values():
    from tvmdevice.options import TargetOption

    option = TargetOption("mode", str, "fast", choices=("fast", "small"))
    with pytest.raises(TargetOptionError, match=r"-mode='smal' is not one of \['fast', 'small'\]; "
                                                r"did you mean 'small'\?"):
        option.convert("smal", "toy")
    with pytest.raises(TargetOptionError) as far:
        option.convert("zzzz", "toy")
    assert "did you mean" not in str(far.value)
