"""What an image occupies, counted as a firmware engineer counts it: from the linked ELF's sections.

* flash: code (vector table, ``.text``, unwind tables, init arrays), constants (``.rodata``) and the
  initial values of ``.data`` (copied to RAM at reset);
* RAM: ``.data``, ``.bss`` and ``.noinit`` (statically planned buffers); the stack apart, as reserved by
  the linker script (its high-water mark is measured by a run: :attr:`RunResult.stack_used`).

On the host the same classification is made from section flags (there is no flash); it is a rough
guide only, the figures that matter are the Cortex-M ones.  Constants there are ``.rodata`` and
``.data.rel.ro``: a position-independent executable puts ``const`` data holding pointers (a params
struct pointing at its weights) in the latter, relocated at load and then read-only, where a
Cortex-M image has it in ``.rodata``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .build import Image
from .elf import SHF_EXECINSTR, SHF_WRITE, SHT_NOBITS, Section, read_elf

__all__ = ["Footprint", "measure"]


@dataclass(frozen=True)
class Footprint:
    """Bytes of flash and RAM an image needs."""

    flash_code: int
    flash_constants: int
    #: initial values of ``.data``, stored in flash and copied to RAM at reset
    flash_data: int
    #: ``.data`` in RAM
    ram_data: int
    #: ``.bss`` and ``.noinit`` (zeroed or uninitialised RAM)
    ram_bss: int
    #: the stack reserved at the top of RAM (None on the host)
    stack: int | None
    #: every allocated section's size, by name
    sections: dict[str, int] = field(default_factory=dict)
    #: constants in the machine's external memory (an export's, placed there), not in flash
    external_constants: int = 0

    @property
    def flash(self) -> int:
        """All of flash: code, constants and ``.data`` initialisers."""
        return self.flash_code + self.flash_constants + self.flash_data

    @property
    def ram(self) -> int:
        """Static RAM: ``.data`` + ``.bss`` + ``.noinit``, the stack apart."""
        return self.ram_data + self.ram_bss


def _is_constants(section: Section) -> bool:
    return any(section.name == name or section.name.startswith(name + ".")
               for name in (".rodata", ".data.rel.ro", ".model_constants"))


def measure(image: Image) -> Footprint:
    """The footprint of ``image`` from its ELF section headers."""
    elf = read_elf(image.path)
    machine = image.cpu.machine
    code = constants = flash_data = ram_data = ram_bss = external = 0
    sizes: dict[str, int] = {}
    for s in elf.sections:
        if not s.allocated or s.size == 0:
            continue
        sizes[s.name] = sizes.get(s.name, 0) + s.size
        if s.type == SHT_NOBITS:
            ram_bss += s.size
        elif machine is not None and machine.external is not None and s.addr in machine.external:
            external += s.size
        elif _is_constants(s):
            constants += s.size
        elif machine is not None:
            if s.addr in machine.ram:
                ram_data += s.size
                flash_data += s.size
            else:
                code += s.size
        elif s.flags & SHF_WRITE and not s.flags & SHF_EXECINSTR:
            ram_data += s.size
        else:
            code += s.size
    return Footprint(code, constants, flash_data, ram_data, ram_bss, image.stack_size, sizes, external)
