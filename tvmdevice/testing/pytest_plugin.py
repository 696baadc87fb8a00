"""pytest plugin (entry point ``pytest11``): options and fixtures for tvmdevice tests.

Loaded by every pytest run in an environment where tvmdevice is installed,
so importing it must stay cheap: everything heavy is imported inside the
fixtures.

Run the conformance suite against installed devices::

    pytest --pyargs tvmdevice.testing.suite --tvmdevice-device woofles
    TVMDEVICE_TEST_DEVICES=woofles,cmsis-nn pytest --pyargs tvmdevice.testing.suite

Any test that takes the ``tvmdevice_device_name`` fixture is parametrized
by the selected devices (default: every installed device).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Iterator

import pytest

if TYPE_CHECKING:  # pragma: no cover
    from tvmdevice.device import Device
    from tvmdevice.registry import Registry

#: Environment variables that choose devices and effort without command-line options.
DEVICES_ENV = "TVMDEVICE_TEST_DEVICES"
EXAMPLES_ENV = "TVMDEVICE_TEST_EXAMPLES"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tvmdevice")
    group.addoption("--tvmdevice-device", action="append", default=[], metavar="NAME",
                    help="device type(s) the tvmdevice conformance suite runs against "
                         f"(default: {DEVICES_ENV}, else every installed device)")
    group.addoption("--tvmdevice-option", action="append", default=[], metavar="KEY=VALUE",
                    help="target option for every device the conformance suite creates (e.g. sram_kb=64)")
    group.addoption("--tvmdevice-examples", type=int, default=None, metavar="N",
                    help=f"hypothesis examples per conformance property (default: {EXAMPLES_ENV}, else 20)")


def selected_devices(config: pytest.Config) -> list[str] | None:
    """Device names chosen with --tvmdevice-device or TVMDEVICE_TEST_DEVICES; None means all."""
    names = list(config.getoption("--tvmdevice-device") or [])
    if not names and os.environ.get(DEVICES_ENV, "").strip():
        names = [n.strip() for n in os.environ[DEVICES_ENV].split(",") if n.strip()]
    return names or None


def selected_examples(config: pytest.Config) -> int:
    """Hypothesis examples per property: --tvmdevice-examples, TVMDEVICE_TEST_EXAMPLES, else the kit's default."""
    value = config.getoption("--tvmdevice-examples")
    if value is None and os.environ.get(EXAMPLES_ENV, "").strip():
        try:
            value = int(os.environ[EXAMPLES_ENV])
        except ValueError:
            raise pytest.UsageError(f"{EXAMPLES_ENV}={os.environ[EXAMPLES_ENV]!r} is not an integer") from None
    if value is None:
        from tvmdevice.testing.contracts._base import DEFAULT_EXAMPLES

        value = DEFAULT_EXAMPLES
    if value < 1:
        raise pytest.UsageError(f"the number of conformance examples must be at least 1, got {value}")
    return value


def selected_options(config: pytest.Config) -> dict[str, str]:
    """Target options from --tvmdevice-option KEY=VALUE (converted to their types by the device)."""
    from tvmdevice.errors import TargetOptionError
    from tvmdevice.testing.options import parse_options

    try:
        return parse_options(list(config.getoption("--tvmdevice-option") or []))
    except TargetOptionError as exc:
        raise pytest.UsageError(f"--tvmdevice-option: {exc}") from None


def pytest_configure(config: pytest.Config) -> None:
    names = selected_devices(config)
    if not names:
        return  # nothing chosen: nothing to check, and no plugin discovery for unrelated runs
    import tvmdevice
    from tvmdevice.errors import TVMDeviceError

    registry = tvmdevice.get_registry()
    for name in names:
        try:
            registry.device_type(name)
        except TVMDeviceError as exc:
            # A typo must not turn into a silently empty (or skipped) run.
            raise pytest.UsageError(f"--tvmdevice-device / {DEVICES_ENV}: {exc}") from None


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "tvmdevice_device_name" not in metafunc.fixturenames:
        return
    names = selected_devices(metafunc.config)
    if names is None:
        import tvmdevice

        names = tvmdevice.get_registry().device_names()
    metafunc.parametrize("tvmdevice_device_name", names, ids=names)


@pytest.fixture
def tvmdevice_registry() -> "Registry":
    """The process-wide device registry (``tvmdevice.get_registry()``)."""
    import tvmdevice

    return tvmdevice.get_registry()


@pytest.fixture
def tvmdevice_examples(request: pytest.FixtureRequest) -> int:
    """Hypothesis examples per conformance property, as selected on the command line."""
    return selected_examples(request.config)


@pytest.fixture
def tvmdevice_options(request: pytest.FixtureRequest) -> dict[str, str]:
    """Target options chosen with --tvmdevice-option."""
    return selected_options(request.config)


@pytest.fixture
def tvmdevice_device(tvmdevice_device_name: str, tvmdevice_registry: "Registry",
                     tvmdevice_options: dict[str, str]) -> Iterator["Device"]:
    """A fresh, uninitialized device of the selected type; walked back down after the test."""
    dev = tvmdevice_registry.create_device(tvmdevice_device_name, tvmdevice_options)
    yield dev
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dev.release()


@pytest.fixture
def tvmdevice_check(tvmdevice_device_name: str, tvmdevice_registry: "Registry", tvmdevice_examples: int,
                    tvmdevice_options: dict[str, str]) -> Callable[[str, str], Any]:
    """``tvmdevice_check(contract, check)``: run one conformance check on the selected device.

    Returns the check's note; a violation fails the test with its message,
    an inapplicable check skips it with the reason.
    """
    from tvmdevice.testing.contracts import CheckContext, ContractSkipped
    from tvmdevice.testing.runner import execute_check

    def run(contract: str, check: str) -> Any:
        ctx = CheckContext(tvmdevice_device_name, tvmdevice_registry, dict(tvmdevice_options),
                           examples=tvmdevice_examples)
        try:
            return execute_check(ctx, contract, check)
        except ContractSkipped as exc:
            pytest.skip(str(exc))

    return run
