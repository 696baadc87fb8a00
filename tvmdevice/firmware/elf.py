"""A minimal reader of ELF files: section headers and the symbol table, with the standard library.

Enough to size a linked image (:mod:`.footprint`) and to find functions by name (the instruction
counter's region markers).  Reads 32- and 64-bit, little- and big-endian files.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from ..errors import InvalidArgumentError

__all__ = ["Section", "Symbol", "ElfFile", "read_elf",
           "SHT_PROGBITS", "SHT_SYMTAB", "SHT_NOBITS", "SHF_WRITE", "SHF_ALLOC", "SHF_EXECINSTR"]

SHT_PROGBITS = 1
SHT_SYMTAB = 2
SHT_NOBITS = 8
SHF_WRITE = 0x1
SHF_ALLOC = 0x2
SHF_EXECINSTR = 0x4


@dataclass(frozen=True)
class Section:
    """One section header."""

    name: str
    type: int
    flags: int
    addr: int
    size: int

    @property
    def allocated(self) -> bool:
        """Occupies memory at run time (code, constants, data, bss)."""
        return bool(self.flags & SHF_ALLOC)


@dataclass(frozen=True)
class Symbol:
    """One symbol table entry (``value`` as stored: Thumb functions have bit 0 set)."""

    name: str
    value: int
    size: int
    type: int


@dataclass(frozen=True)
class ElfFile:
    """The parts of an ELF file this package uses."""

    path: Path
    bits: int
    machine: int
    sections: tuple[Section, ...]
    symbols: tuple[Symbol, ...]

    def symbol(self, name: str) -> Symbol | None:
        """The first symbol called ``name``, or None."""
        for sym in self.symbols:
            if sym.name == name:
                return sym
        return None


def _cstr(table: bytes, offset: int) -> str:
    end = table.find(b"\0", offset)
    return table[offset:end if end >= 0 else len(table)].decode("utf-8", "replace")


def read_elf(path: "str | Path") -> ElfFile:
    """Parse ``path``'s section headers and symbol table."""
    path = Path(path)
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        raise InvalidArgumentError(f"{path} is not an ELF file")
    bits = 32 if data[4] == 1 else 64
    end = "<" if data[5] == 1 else ">"
    if bits == 32:
        machine, = struct.unpack_from(end + "H", data, 18)
        shoff, = struct.unpack_from(end + "I", data, 32)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 46)
        sh_fmt, sym_fmt = end + "IIIIIIIIII", end + "IIIBBH"
    else:
        machine, = struct.unpack_from(end + "H", data, 18)
        shoff, = struct.unpack_from(end + "Q", data, 40)
        shentsize, shnum, shstrndx = struct.unpack_from(end + "HHH", data, 58)
        sh_fmt, sym_fmt = end + "IIQQQQIIQQ", end + "IBBHQQ"

    raw = [struct.unpack_from(sh_fmt, data, shoff + i * shentsize) for i in range(shnum)]
    # (name, type, flags, addr, offset, size, link, info, addralign, entsize)
    shstr = raw[shstrndx]
    names = data[shstr[4]:shstr[4] + shstr[5]]
    sections = tuple(Section(_cstr(names, h[0]), h[1], h[2], h[3], h[5]) for h in raw)

    symbols: list[Symbol] = []
    for h in raw:
        if h[1] != SHT_SYMTAB:
            continue
        strtab = raw[h[6]]
        strings = data[strtab[4]:strtab[4] + strtab[5]]
        entsize = h[9] or struct.calcsize(sym_fmt)
        for off in range(h[4], h[4] + h[5], entsize):
            fields = struct.unpack_from(sym_fmt, data, off)
            if bits == 32:
                name, value, size, info = fields[0], fields[1], fields[2], fields[3]
            else:
                name, info, value, size = fields[0], fields[1], fields[4], fields[5]
            if name:
                symbols.append(Symbol(_cstr(strings, name), value, size, info & 0xF))
    return ElfFile(path, bits, machine, sections, tuple(symbols))
