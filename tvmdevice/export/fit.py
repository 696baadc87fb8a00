"""Will an exported model fit the chip?  Its plan against a board's memories, before anything is built.

The plan knows exactly what the model needs beside its code: flash for its constant tensors and its
operators' params, RAM for the host pool (yours with external pools, still in RAM), the memories devices
define themselves (:class:`~tvmdevice.export.StaticMemory`: an NPU's fast scratch, a functional model's
working memory; the built-in boards link them in RAM), the runner's input and output buffers and the stack
the firmware reserves (:data:`tvmdevice.firmware.DEFAULT_STACK_SIZE`).
The code is known only once linked, so the flash check is a floor: a plan over it cannot fit, and the
link of ``tvmdevice run DIR --cpu ...`` reports an overflow the code adds (its region and bytes).
Constants placed in external memory (``constants_region="external"``) count against that memory.

A :class:`Budget` is a board of :data:`tvmdevice.firmware.BOARDS` (its memories as the linker
scripts know them) or flash/RAM sizes given by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidArgumentError
from ..firmware.cpus import BOARDS, Machine
from ..firmware.linker import DEFAULT_STACK_SIZE

__all__ = ["Budget", "Needs", "ModelDoesNotFitError", "budget"]


class ModelDoesNotFitError(InvalidArgumentError):
    """The plan needs more flash, RAM or external memory than the board has (the message says which and
    by how much)."""


@dataclass(frozen=True)
class Needs:
    """What an export needs beside its code, in bytes."""

    constants: int
    params: int
    host_pool: int
    io: int
    stack: int = DEFAULT_STACK_SIZE
    #: the constants go to the board's external memory
    external_constants: bool = False
    #: the memories the devices define outside the plan, (name, bytes) each
    device_memories: tuple[tuple[str, int], ...] = ()

    def flash(self, external: bool) -> int:
        """Flash for the params, and for the constants unless they go to external memory."""
        return self.params + (0 if external else self.constants)

    @property
    def device_memory(self) -> int:
        return sum(size for _, size in self.device_memories)

    @property
    def ram(self) -> int:
        return self.host_pool + self.device_memory + self.io + self.stack


@dataclass(frozen=True)
class Budget:
    """The memories a model must fit: flash, RAM and, on some boards, external memory for constants."""

    #: what the budget is, e.g. ``mps3-an547`` or ``--flash-kb 256 --ram-kb 64``
    label: str
    flash: int | None
    ram: int | None
    #: the board's external memory for constants (name, bytes), if it has one
    external: tuple[str, int] | None = None

    def problems(self, needs: Needs) -> list[str]:
        """Each memory the plan overflows, with what it needs, what there is and by how much."""
        found = []
        # a board without external memory keeps the constants in flash, as its linker script does
        external = needs.external_constants and self.external is not None
        flash = needs.flash(external)
        if self.flash is not None and flash > self.flash:
            parts = f"params {needs.params:,} B" if external else \
                f"constants {needs.constants:,} B + params {needs.params:,} B"
            hint = ""
            if not external and self.external is not None and needs.constants <= self.external[1]:
                hint = f"; --constants-region external puts the constants in {self.external[0]} " \
                       f"({self.external[1]:,} B)"
            found.append(f"flash needs at least {flash:,} B ({parts}; the code comes on top) of "
                         f"{self.flash:,} B: over by {flash - self.flash:,} B{hint}")
        if external and self.external is not None:
            if needs.constants > self.external[1]:
                found.append(f"{self.external[0]} needs {needs.constants:,} B of constants of {self.external[1]:,} B: "
                             f"over by {needs.constants - self.external[1]:,} B")
        if self.ram is not None and needs.ram > self.ram:
            devices = "".join(f" + {name} {size:,} B" for name, size in needs.device_memories if size)
            found.append(f"RAM needs {needs.ram:,} B (host pool {needs.host_pool:,} B{devices} + inputs and "
                         f"outputs {needs.io:,} B + stack {needs.stack:,} B) of {self.ram:,} B: over by "
                         f"{needs.ram - self.ram:,} B")
        return found

    def check(self, needs: Needs) -> None:
        """Raise :class:`ModelDoesNotFitError` (one line) when the plan overflows a memory."""
        problems = self.problems(needs)
        if problems:
            raise ModelDoesNotFitError(f"the model does not fit {self.label}: " + "; ".join(problems))


def _kb(value: float | None, flag: str) -> int | None:
    if value is None:
        return None
    if not value > 0:
        raise InvalidArgumentError(f"{flag} must be a positive number of KiB, got {value:g}")
    return int(value * 1024)


def budget(board: str | None = None, flash_kb: float | None = None, ram_kb: float | None = None) -> Budget | None:
    """The budget of ``board`` (a name of :data:`BOARDS`), its flash or RAM replaced by ``flash_kb`` /
    ``ram_kb`` when given; None when nothing is given."""
    flash, ram = _kb(flash_kb, "--flash-kb"), _kb(ram_kb, "--ram-kb")
    machine: Machine | None = None
    if board is not None:
        machine = BOARDS.get(board)
        if machine is None:
            from ..suggest import did_you_mean

            raise InvalidArgumentError(f"unknown --board {board!r}{did_you_mean(board, list(BOARDS))}; choose one "
                                       f"of {', '.join(BOARDS)}")
    if machine is None and flash is None and ram is None:
        return None
    sizes = " ".join(f"--{what}-kb {value / 1024:g}" for what, value in (("flash", flash), ("ram", ram))
                     if value is not None)
    label = " ".join(x for x in (machine.name if machine else "", sizes) if x)
    return Budget(
        label,
        flash if flash is not None else (machine.flash.length if machine else None),
        ram if ram is not None else (machine.ram.length if machine else None),
        (machine.external.name, machine.external.length) if machine and machine.external else None)
