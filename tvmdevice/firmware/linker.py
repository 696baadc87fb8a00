"""The linker script of a Cortex-M image: ``csrc/cortexm.ld`` with the machine's memory map filled in.

An exported model's constant tensors go to ``flash`` with the code (the default) or, with
``constants="external"``, to the machine's larger memory (:attr:`.cpus.Machine.external`, e.g. the
MPS3 AN547's QSPI flash); a machine without one keeps them in flash, which is then large enough
(the MPS2 boards' 4 MiB).
"""

from __future__ import annotations

from string import Template

from ..errors import InvalidArgumentError
from .cpus import Cpu, MemoryRegion
from .platform import PLATFORM_DIR

__all__ = ["DEFAULT_STACK_SIZE", "CONSTANTS_REGIONS", "linker_script", "constants_region"]

#: Where an export's constants can go: with the code, or in the machine's larger memory.
CONSTANTS_REGIONS = ("flash", "external")

#: Bytes reserved for the stack at the top of RAM unless a build asks for another size.
DEFAULT_STACK_SIZE = 32 * 1024


def constants_region(cpu: Cpu, constants: str = "flash") -> MemoryRegion | None:
    """The memory ``cpu``'s image puts an export's constants in for ``constants`` (None on the host)."""
    if constants not in CONSTANTS_REGIONS:
        raise InvalidArgumentError(f"constants={constants!r}: expected one of {', '.join(CONSTANTS_REGIONS)}")
    machine = cpu.machine
    if machine is None:
        return None
    return machine.external if constants == "external" and machine.external is not None else machine.flash


def linker_script(cpu: Cpu, stack_size: int = DEFAULT_STACK_SIZE, constants: str = "flash") -> str:
    """The text of ``cpu``'s linker script, with ``stack_size`` bytes of stack at the top of RAM and an
    export's constants in ``constants`` (``flash`` or ``external``)."""
    region = constants_region(cpu, constants)
    machine = cpu.machine
    if machine is None:
        raise InvalidArgumentError("the host CPU links with its system's default linker script")
    if stack_size <= 0 or stack_size % 8 or stack_size >= machine.ram.length:
        raise InvalidArgumentError(
            f"stack_size={stack_size}: expected a positive multiple of 8 below the RAM size "
            f"({machine.ram.length} bytes on {machine.name})")
    template = Template((PLATFORM_DIR / "cortexm.ld").read_text())
    external = machine.external
    return template.substitute(
        flash_origin=f"0x{machine.flash.origin:08x}", flash_length=f"0x{machine.flash.length:x}",
        ram_origin=f"0x{machine.ram.origin:08x}", ram_length=f"0x{machine.ram.length:x}",
        external_memory="" if external is None else
        f"  EXTERNAL (r) : ORIGIN = 0x{external.origin:08x}, LENGTH = 0x{external.length:x}\n",
        constants_region="FLASH" if region is machine.flash else "EXTERNAL",
        stack_size=f"0x{stack_size:x}")
