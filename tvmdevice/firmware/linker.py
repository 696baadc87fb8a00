"""The linker script of a Cortex-M image: ``csrc/cortexm.ld`` with the machine's memory map filled in."""

from __future__ import annotations

from string import Template

from ..errors import InvalidArgumentError
from .cpus import Cpu
from .platform import PLATFORM_DIR

__all__ = ["DEFAULT_STACK_SIZE", "linker_script"]

#: Bytes reserved for the stack at the top of RAM unless a build asks for another size.
DEFAULT_STACK_SIZE = 32 * 1024


def linker_script(cpu: Cpu, stack_size: int = DEFAULT_STACK_SIZE) -> str:
    """The text of ``cpu``'s linker script, with ``stack_size`` bytes of stack at the top of RAM."""
    machine = cpu.machine
    if machine is None:
        raise InvalidArgumentError("the host CPU links with its system's default linker script")
    if stack_size <= 0 or stack_size % 8 or stack_size >= machine.ram.length:
        raise InvalidArgumentError(
            f"stack_size={stack_size}: expected a positive multiple of 8 below the RAM size "
            f"({machine.ram.length} bytes on {machine.name})")
    template = Template((PLATFORM_DIR / "cortexm.ld").read_text())
    return template.substitute(
        flash_origin=f"0x{machine.flash.origin:08x}", flash_length=f"0x{machine.flash.length:x}",
        ram_origin=f"0x{machine.ram.origin:08x}", ram_length=f"0x{machine.ram.length:x}",
        stack_size=f"0x{stack_size:x}")
