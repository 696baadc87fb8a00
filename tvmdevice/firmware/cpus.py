"""The CPUs a firmware image is built for, with their compiler flags and emulated machine.

Each Cortex-M CPU runs on one QEMU machine; the memory map below is what QEMU 7.2 models for it
(hw/arm/mps2.c for the MPS2 boards, hw/arm/mps2-tz.c and the SSE-300 for the MPS3 AN547, checked
against ``info mtree`` of qemu-system-arm 7.2):

=============  ============  =====================================  =====================================
CPU            machine       flash (code, constants)                RAM (data, bss, heap, stack)
=============  ============  =====================================  =====================================
cortex-m55     mps3-an547    ITCM 0x00000000, 512 KiB               DTCM 0x20000000, 512 KiB
cortex-m4      mps2-an386    ZBT SSRAM1 0x00000000, 4 MiB           ZBT SSRAM2/3 0x20000000, 4 MiB
cortex-m3      mps2-an385    ZBT SSRAM1 0x00000000, 4 MiB           ZBT SSRAM2/3 0x20000000, 4 MiB
=============  ============  =====================================  =====================================

The AN547 also has an 8 MiB QSPI flash at 0x28000000 (a ROM in QEMU's ``info mtree``), its
:attr:`Machine.external` memory: an export's constants go there when asked
(``tvmdevice export --constants-region external``), for models whose weights do not fit in the ITCM.
:data:`BOARDS` names every machine; ``tvmdevice export --board`` checks a plan against its memories.

The AN547 boots Secure with its vector table at 0x00000000 (``init-svtor``); the MPS2 boards load the
initial SP and reset vector from address 0.  All are "flash" only by convention: QEMU models them as
RAM, and the image is loaded there by ``-kernel``.  Program output does not use the boards' CMSDK
UARTs (AN385/AN386 UART0 at 0x40004000, AN547 UART0 at 0x49303000 Non-secure / 0x59303000 Secure) but
Arm semihosting: stdio and files go to the host through QEMU (``-semihosting-config target=native``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InvalidArgumentError

__all__ = ["MemoryRegion", "Machine", "Cpu", "CPUS", "BOARDS", "get_cpu", "board_cpu"]


@dataclass(frozen=True)
class MemoryRegion:
    """A contiguous range of the machine's address space."""

    name: str
    origin: int
    length: int

    @property
    def end(self) -> int:
        """The first address past the region."""
        return self.origin + self.length

    def __contains__(self, address: object) -> bool:
        return isinstance(address, int) and self.origin <= address < self.end


@dataclass(frozen=True)
class Machine:
    """A QEMU board model: its name for ``-M``, where code goes and where data goes."""

    name: str
    description: str
    flash: MemoryRegion
    ram: MemoryRegion
    uart0: int
    #: a larger read-only memory an export's constants can go to (external flash), if the board has one
    external: MemoryRegion | None = None

    def regions(self) -> dict[str, MemoryRegion]:
        """The machine's memories by the linker script's names (FLASH, RAM, EXTERNAL)."""
        found = {"FLASH": self.flash, "RAM": self.ram}
        if self.external is not None:
            found["EXTERNAL"] = self.external
        return found


@dataclass(frozen=True)
class Cpu:
    """A CPU a firmware image targets: the toolchain and flags to build it, the machine to run it.

    ``machine`` is ``None`` for the host, which builds with the system C compiler and runs natively.
    """

    name: str
    cflags: tuple[str, ...]
    machine: Machine | None
    has_fpu: bool

    @property
    def is_host(self) -> bool:
        """True for the host CPU (native build and run, no emulator)."""
        return self.machine is None


_MPS2_FLASH = MemoryRegion("ssram1", 0x0000_0000, 4 * 1024 * 1024)
_MPS2_RAM = MemoryRegion("ssram23", 0x2000_0000, 4 * 1024 * 1024)

MPS3_AN547 = Machine(
    "mps3-an547", "Arm MPS3 with AN547 (Corstone-300, SSE-300) for Cortex-M55",
    flash=MemoryRegion("itcm", 0x0000_0000, 512 * 1024),
    ram=MemoryRegion("dtcm", 0x2000_0000, 512 * 1024),
    uart0=0x5930_3000,
    external=MemoryRegion("qspi", 0x2800_0000, 8 * 1024 * 1024),
)
MPS2_AN386 = Machine("mps2-an386", "Arm MPS2 with AN386 for Cortex-M4", _MPS2_FLASH, _MPS2_RAM, 0x4000_4000)
MPS2_AN385 = Machine("mps2-an385", "Arm MPS2 with AN385 for Cortex-M3", _MPS2_FLASH, _MPS2_RAM, 0x4000_4000)

#: Every board (QEMU machine) by name, with its memories: what ``tvmdevice export --board`` checks against.
BOARDS: dict[str, Machine] = {m.name: m for m in (MPS3_AN547, MPS2_AN386, MPS2_AN385)}

#: Every CPU by name.  Cortex-M55: the FPU and MVE come with ``-mcpu`` (GCC's ``-mfpu=auto``).
CPUS: dict[str, Cpu] = {
    "host": Cpu("host", (), None, has_fpu=True),
    "cortex-m55": Cpu("cortex-m55", ("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"), MPS3_AN547, has_fpu=True),
    "cortex-m4": Cpu("cortex-m4", ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"),
                     MPS2_AN386, has_fpu=True),
    "cortex-m3": Cpu("cortex-m3", ("-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"), MPS2_AN385, has_fpu=False),
}


def get_cpu(cpu: "str | Cpu") -> Cpu:
    """The :class:`Cpu` named ``cpu`` (a :class:`Cpu` is returned as is); unknown names list the known ones."""
    if isinstance(cpu, Cpu):
        return cpu
    try:
        return CPUS[cpu]
    except KeyError:
        raise InvalidArgumentError(f"unknown CPU {cpu!r}: expected one of {', '.join(CPUS)}") from None


def board_cpu(board: str) -> Cpu:
    """The CPU a board (one of :data:`BOARDS`) carries: what an export checked against it is built for."""
    found = next((c for c in CPUS.values() if c.machine is not None and c.machine.name == board), None)
    if found is None:
        raise InvalidArgumentError(f"unknown board {board!r}: expected one of {', '.join(BOARDS)}")
    return found
