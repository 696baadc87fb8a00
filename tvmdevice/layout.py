"""Device struct layouts: the Python description of ``tvm_device_<name>_t``.

A plugin declares its device's state struct once, as a :class:`Layout`; the
framework computes ``sizeof``/``offsetof`` with the C rules of the host ABI
(natural alignment, LP64), allocates zeroed aligned storage of that size for
each device instance, and emits the C header from the same declaration
(:mod:`tvmdevice.headers`).  Plugins generate their C header from the layout
at build time, so the struct is written in exactly one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

__all__ = ["PRIMITIVES", "Field", "Layout", "FieldOffset"]

#: C scalar types a field may use: name -> (size, alignment) on LP64 hosts.
PRIMITIVES: dict[str, tuple[int, int]] = {
    "int8_t": (1, 1),
    "uint8_t": (1, 1),
    "int16_t": (2, 2),
    "uint16_t": (2, 2),
    "int32_t": (4, 4),
    "uint32_t": (4, 4),
    "int64_t": (8, 8),
    "uint64_t": (8, 8),
    "float": (4, 4),
    "double": (8, 8),
    "size_t": (8, 8),
    "uintptr_t": (8, 8),
    "void*": (8, 8),
}


@dataclass(frozen=True)
class Field:
    """One struct member.

    :param name: C identifier.
    :param ctype: a key of :data:`PRIMITIVES`, a pointer spelled ``"<type>*"``
        (e.g. ``"uint8_t*"``), or a nested :class:`Layout`.
    :param count: array dimensions, ``()`` for a scalar, e.g. ``(4,)`` or ``(2, 3)``.
    :param doc: one line describing the member; emitted as a C comment.
    """

    name: str
    ctype: Union[str, "Layout"]
    count: tuple[int, ...] = ()
    doc: str = ""

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"field name {self.name!r} is not a C identifier")
        if isinstance(self.ctype, str):
            if self.ctype not in PRIMITIVES and not self._is_pointer(self.ctype):
                raise ValueError(
                    f"field {self.name!r}: unknown C type {self.ctype!r}; use one of "
                    f"{sorted(PRIMITIVES)}, a pointer '<type>*', or a nested Layout"
                )
        if any((not isinstance(n, int)) or n <= 0 for n in self.count):
            raise ValueError(f"field {self.name!r}: array dimensions must be positive ints, got {self.count}")

    @staticmethod
    def _is_pointer(ctype: str) -> bool:
        base = ctype.rstrip("*").strip()
        return ctype.endswith("*") and (base in PRIMITIVES or base in ("void", "char", "const char"))

    @property
    def elements(self) -> int:
        n = 1
        for d in self.count:
            n *= d
        return n

    def element_size_align(self) -> tuple[int, int]:
        if isinstance(self.ctype, Layout):
            return self.ctype.size, self.ctype.alignment
        if self.ctype.endswith("*"):
            return PRIMITIVES["void*"]
        return PRIMITIVES[self.ctype]

    @property
    def c_type(self) -> str:
        return self.ctype.c_type if isinstance(self.ctype, Layout) else self.ctype


@dataclass(frozen=True)
class FieldOffset:
    """Where a member lives: byte offset and total byte size."""

    name: str
    offset: int
    size: int


@dataclass(frozen=True)
class Layout:
    """A C struct: ordered fields, laid out with natural alignment.

    :param c_type: the struct's C type name, e.g. ``tvm_device_woofles_t``.
    :param fields: members in declaration order.
    :param doc: a sentence describing the struct; emitted as a comment.
    """

    c_type: str
    fields: tuple[Field, ...]
    doc: str = ""
    _offsets: tuple[FieldOffset, ...] = field(init=False, repr=False, compare=False)
    _size: int = field(init=False, repr=False, compare=False)
    _alignment: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.c_type.isidentifier():
            raise ValueError(f"struct type name {self.c_type!r} is not a C identifier")
        names = [f.name for f in self.fields]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"layout {self.c_type}: duplicate field names {dupes}")
        offset, alignment, offsets = 0, 1, []
        for f in self.fields:
            size, align = f.element_size_align()
            offset = _round_up(offset, align)
            offsets.append(FieldOffset(f.name, offset, size * f.elements))
            offset += size * f.elements
            alignment = max(alignment, align)
        object.__setattr__(self, "_offsets", tuple(offsets))
        object.__setattr__(self, "_alignment", alignment)
        # An empty struct is not legal C99; it still occupies one aligned slot.
        object.__setattr__(self, "_size", _round_up(max(offset, 1), alignment))

    @property
    def size(self) -> int:
        """``sizeof`` the struct."""
        return self._size

    @property
    def alignment(self) -> int:
        """``_Alignof`` the struct."""
        return self._alignment

    @property
    def offsets(self) -> tuple[FieldOffset, ...]:
        return self._offsets

    def offset_of(self, name: str) -> int:
        """``offsetof(c_type, name)``; raises ``KeyError`` for an unknown member."""
        for fo in self._offsets:
            if fo.name == name:
                return fo.offset
        raise KeyError(f"{self.c_type} has no member {name!r}")

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.c_type} has no member {name!r}")

    def nested(self) -> list["Layout"]:
        """Nested struct layouts, innermost first, each once."""
        out: list[Layout] = []
        for f in self.fields:
            if isinstance(f.ctype, Layout):
                for inner in f.ctype.nested() + [f.ctype]:
                    if inner not in out:
                        out.append(inner)
        return out

    def to_json(self) -> dict:
        return {
            "c_type": self.c_type,
            "size": self.size,
            "alignment": self.alignment,
            "fields": [
                {"name": f.name, "ctype": f.c_type, "count": list(f.count), "offset": o.offset, "size": o.size}
                for f, o in zip(self.fields, self._offsets)
            ],
        }


def _round_up(n: int, align: int) -> int:
    return (n + align - 1) // align * align


_NUMPY_TYPES = {
    "int8_t": "i1", "uint8_t": "u1", "int16_t": "i2", "uint16_t": "u2", "int32_t": "i4",
    "uint32_t": "u4", "int64_t": "i8", "uint64_t": "u8", "float": "f4", "double": "f8",
    "size_t": "u8", "uintptr_t": "u8",
}


def struct_view(layout: Layout, buffer) -> dict:
    """numpy views of each scalar or array member of ``layout`` inside ``buffer``.

    Pointers appear as ``uint64``; nested structs are omitted (view them with
    their own layout at ``offset_of``).  Writes through the views change the
    struct the C side sees.
    """
    import numpy as np

    raw = np.frombuffer(buffer, dtype=np.uint8, count=layout.size)
    views = {}
    for f, fo in zip(layout.fields, layout.offsets):
        if isinstance(f.ctype, Layout):
            continue
        code = "u8" if f.ctype.endswith("*") else _NUMPY_TYPES[f.ctype]
        shape = f.count or (1,)
        views[f.name] = raw[fo.offset : fo.offset + fo.size].view(code).reshape(shape)
    return views
