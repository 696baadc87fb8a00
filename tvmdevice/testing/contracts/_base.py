"""The pieces every contract check is built from.

A *contract* (``memory``, ``copies``, ...) is a list of *checks*; a check is
a plain function ``check(ctx) -> str | None`` that exercises one device type
through the checked Device API and either returns (passed, optionally with
a one-line note such as "41 variants ran, 7 declined"), raises
:class:`ContractViolation` (failed) or raises :class:`ContractSkipped` (not
applicable to this device, with the reason).  Checks never depend on pytest,
so the same functions back the pytest suite and ``tvmdevice check``.
"""

from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, NoReturn

from ...attrs import DeviceAttrKind
from ...errors import DeviceMemoryError, TVMDeviceError
from ...lifecycle import State

if TYPE_CHECKING:  # pragma: no cover
    from ...device import Device
    from ...device_type import DeviceType
    from ...registry import Registry

__all__ = ["ContractViolation", "ContractSkipped", "CheckContext", "Check", "Contract", "DEFAULT_EXAMPLES",
           "MIN_DEVICE_MEMORY"]

#: Hypothesis examples per property when the caller does not say.
DEFAULT_EXAMPLES = 20

#: Device memory the checks may use at once (the largest is ~10 KiB, plus alignment padding).  A device
#: with less that runs out is skipped with the reason, not failed: the checks cannot be done on it.
MIN_DEVICE_MEMORY = 64 * 1024


class ContractViolation(AssertionError):
    """A device broke a contract of the Device API.

    An :class:`AssertionError`, so pytest reports it as a plain test failure.

    :param contract: the contract broken (``"memory"``, ``"kernels"``, ...).
    :param message: what went wrong; names the contract and the device.
    :ivar device: the device type's name, when known.
    :ivar check: the check that found it, when known.
    """

    def __init__(self, contract: str, message: str, *, device: str | None = None,
                 check: str | None = None) -> None:
        super().__init__(message)
        self.contract = contract
        self.message = message
        self.device = device
        self.check = check

    def __str__(self) -> str:
        return self.message


class ContractSkipped(Exception):
    """A check does not apply here (no C compiler, no operators declared...); the reason says why."""


@dataclass
class CheckContext:
    """Everything a check needs: the device under test and how hard to try.

    :param device_name: the device type to check (a name or alias).
    :param registry: where that device type is registered.
    :param options: target options for every device the check creates.
    :param examples: hypothesis examples per property (more finds more, slower).
    :param contract: the contract being run (set by the runner).
    :param check: the check being run (set by the runner).
    :param progress: told what the check is about to do (the runner uses it to
        say what was running when a plugin crashed the process).
    """

    device_name: str
    registry: "Registry"
    options: dict[str, Any] = field(default_factory=dict)
    examples: int = DEFAULT_EXAMPLES
    contract: str = ""
    check: str = ""
    progress: Callable[[str], None] | None = None
    _devices: list["Device"] = field(default_factory=list, repr=False)

    @property
    def device_type(self) -> "DeviceType":
        """The :class:`DeviceType` under test."""
        return self.registry.device_type(self.device_name)

    @property
    def name(self) -> str:
        """The device type's canonical name (aliases resolved)."""
        return self.device_type.name

    def doing(self, what: str) -> None:
        """Record what the check does next (reported if the device crashes the process)."""
        if self.progress is not None:
            self.progress(what)

    # ---------------------------------------------------------------- failing
    def fail(self, detail: str) -> NoReturn:
        """Raise :class:`ContractViolation` for the current contract and check."""
        raise ContractViolation(
            self.contract, f"device {self.name!r} broke the {self.contract} contract ({self.check}): {detail}",
            device=self.name, check=self.check)

    def skip(self, reason: str) -> NoReturn:
        """Raise :class:`ContractSkipped` with ``reason``."""
        raise ContractSkipped(reason)

    @contextlib.contextmanager
    def calling(self, what: str) -> Iterator[None]:
        """Turn a device error inside the block into a violation saying which call failed.

        Only :class:`~tvmdevice.errors.TVMDeviceError` is converted (the framework
        wraps whatever a plugin raises into one); anything else is a bug in the
        check itself and propagates unchanged.
        """
        try:
            yield
        except ContractViolation:
            raise
        except TVMDeviceError as exc:
            total = self._total_memory() if isinstance(exc, DeviceMemoryError) else None
            if total is not None and total < MIN_DEVICE_MEMORY:
                self.skip(f"{what} ran out of memory on a device with {total} bytes "
                          f"(kTotalGlobalMemory); the {self.contract} checks need {MIN_DEVICE_MEMORY // 1024} KiB "
                          f"- give the device more memory through its options")
            self.fail(f"{what} raised {type(exc).__name__}: {exc}")

    def _total_memory(self) -> int | None:
        """kTotalGlobalMemory of a live device of this context, if it answers with an int."""
        for dev in self._devices:
            if dev.state is not State.UNINITIALIZED and not dev.faulted:
                try:
                    total = dev.get_attr(DeviceAttrKind.kTotalGlobalMemory)
                except TVMDeviceError:
                    return None
                return total if isinstance(total, int) and not isinstance(total, bool) else None
        return None

    # ---------------------------------------------------------------- devices
    def new_device(self, state: State = State.OPENED) -> "Device":
        """A fresh device of the type under test, driven up to ``state``.

        The context releases it in :meth:`release_all`, so checks need not
        clean up after a violation.
        """
        dev = self.registry.create_device(self.device_name, self.options)
        self._devices.append(dev)
        steps = [(State.INITIALIZED, dev.init, "Init"), (State.OPENED, dev.open, "Open"),
                 (State.ACTIVE, dev.activate, "Activate")]
        order = [State.UNINITIALIZED, State.INITIALIZED, State.OPENED, State.ACTIVE]
        for target, step, label in steps:
            if order.index(target) > order.index(state):
                break
            with self.calling(f"{label} of a fresh device"):
                step()
        return dev

    def forget(self, dev: "Device") -> None:
        """Stop tracking ``dev`` (the check released it itself)."""
        if dev in self._devices:
            self._devices.remove(dev)

    def release_all(self) -> None:
        """Walk every device this context created back down, quietly.

        Runs after a check, passed or failed; errors here would only hide
        the check's own result, so they are swallowed.
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for dev in reversed(self._devices):
                with contextlib.suppress(Exception):
                    dev.release()
        self._devices.clear()

    # ------------------------------------------------------------- hypothesis
    def settings(self, **overrides: Any) -> Any:
        """Hypothesis settings for checks: ``examples`` examples, no deadline, reproducible.

        No example database: ``tvmdevice check`` must not litter the
        working directory, and derandomized runs replay the same examples.
        """
        from hypothesis import HealthCheck, Phase, settings

        # Device calls are slow next to hypothesis' expectations, and kernel
        # models are big; neither is a problem of the device under test.
        quiet = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
        # The explain phase adds coverage notes that mean nothing to a plugin author.
        phases = tuple(p for p in Phase if p is not Phase.explain)
        base: dict[str, Any] = dict(max_examples=max(1, self.examples), deadline=None, database=None,
                                    derandomize=True, suppress_health_check=quiet, print_blob=False,
                                    phases=phases)
        base.update(overrides)
        return settings(**base)


@dataclass(frozen=True)
class Check:
    """One check of a contract.

    :param name: short id, unique within its contract (``"alignment"``).
    :param function: ``function(ctx) -> str | None``; see the module docstring.
    :param doc: one line saying what is checked.
    """

    name: str
    function: Callable[[CheckContext], "str | None"]
    doc: str


@dataclass(frozen=True)
class Contract:
    """A named group of checks (one row of the ``tvmdevice check`` report)."""

    name: str
    doc: str
    checks: tuple[Check, ...]

    def check(self, name: str) -> Check:
        """The check called ``name``; raises ``KeyError`` naming the known ones."""
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"contract {self.name!r} has no check {name!r}; checks: "
                       f"{', '.join(c.name for c in self.checks)}")
