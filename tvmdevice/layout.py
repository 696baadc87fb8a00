"""Struct layouts: one Python declaration of a C struct, laid out for any data model.

A plugin declares each struct the C side sees once, as a :class:`Layout`: its
``tvm_device_<name>_t`` device struct and its kernels' params structs.  From
that declaration the framework computes ``sizeof``/``_Alignof``/``offsetof``
with the C rules (natural alignment) of a :class:`DataModel`, allocates the
device struct (host model), fills params structs (:mod:`tvmdevice.params`) and
emits the C header (:mod:`tvmdevice.headers`), so the struct is written in
exactly one place.

A layout is computed for one data model: by default the host's (:data:`HOST`,
:data:`LP64` on x86-64 and aarch64 Linux).  ``layout.for_data_model(ILP32)``
is the same declaration as a Cortex-M compiler lays it out, e.g. for firmware
export: a pointer after an ``int32_t`` sits at offset 44 there and 48 on the host.
"""

from __future__ import annotations

import struct as _struct
from dataclasses import dataclass, field
from typing import Any, Union

__all__ = ["DataModel", "LP64", "ILP32", "HOST", "PRIMITIVES", "Field", "Layout", "FieldOffset",
           "pointee", "struct_view"]

#: Fixed-size C scalar types a field may use, with their size in bytes (the
#: same on every data model; ``size_t``/``uintptr_t``/pointers depend on it).
_FIXED_SIZES: dict[str, int] = {
    "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
    "int64_t": 8, "uint64_t": 8, "float": 4, "double": 8,
}


@dataclass(frozen=True)
class DataModel:
    """Sizes and alignments a C compiler gives the types a layout may use.

    Only what differs between the ABIs tvmdevice targets is a parameter; the
    other fixed-width types are naturally aligned everywhere.

    :param name: ``"LP64"``, ``"ILP32"``, or a description of another ABI.
    :param pointer_size: ``sizeof(void*)`` (also its alignment).
    :param size_t_size: ``sizeof(size_t)`` and ``sizeof(uintptr_t)`` (also their alignment).
    :param int64_alignment: ``_Alignof(int64_t)`` (and ``uint64_t``) inside a struct.
    :param double_alignment: ``_Alignof(double)`` inside a struct.
    """

    name: str
    pointer_size: int
    size_t_size: int
    int64_alignment: int = 8
    double_alignment: int = 8

    def size_align(self, ctype: str) -> tuple[int, int]:
        """``(sizeof, _Alignof)`` of a scalar C type or pointer on this data model.

        :raises KeyError: ``ctype`` is neither a primitive nor a pointer.
        """
        if ctype.endswith("*"):
            return self.pointer_size, self.pointer_size
        if ctype in ("size_t", "uintptr_t"):
            return self.size_t_size, self.size_t_size
        size = _FIXED_SIZES[ctype]
        if ctype in ("int64_t", "uint64_t"):
            return size, self.int64_alignment
        if ctype == "double":
            return size, self.double_alignment
        return size, size

    def primitives(self) -> dict[str, tuple[int, int]]:
        """Every primitive (and ``void*``) with its ``(sizeof, _Alignof)`` on this model."""
        return {t: self.size_align(t) for t in (*_FIXED_SIZES, "size_t", "uintptr_t", "void*")}


#: x86-64 and aarch64 Linux/macOS hosts.
LP64 = DataModel("LP64", pointer_size=8, size_t_size=8)
#: Arm AAPCS (Cortex-M, ``arm-none-eabi-gcc``): 4-byte pointers and ``size_t``,
#: 8-byte-aligned ``int64_t`` and ``double``.
ILP32 = DataModel("ILP32", pointer_size=4, size_t_size=4)


def _host_model() -> DataModel:
    # The struct module's native mode uses the C compiler's in-struct alignment.
    measured = DataModel("host", pointer_size=_struct.calcsize("P"), size_t_size=_struct.calcsize("N"),
                         int64_alignment=_struct.calcsize("@bq") - 8, double_alignment=_struct.calcsize("@bd") - 8)
    for known in (LP64, ILP32):
        if (known.pointer_size, known.size_t_size, known.int64_alignment, known.double_alignment) == (
                measured.pointer_size, measured.size_t_size, measured.int64_alignment, measured.double_alignment):
            return known
    return measured


#: The data model of the running interpreter: what the framework allocates
#: device structs and fills params structs with.
HOST: DataModel = _host_model()

#: C scalar types a field may use: name -> (size, alignment) on the host.
PRIMITIVES: dict[str, tuple[int, int]] = HOST.primitives()


def pointee(ctype: str) -> str | None:
    """What a pointer type points to, without ``const`` (``"const int16_t*"`` -> ``"int16_t"``).

    ``None`` when ``ctype`` is not a pointer; a pointer to pointer gives e.g. ``"uint8_t*"``.
    """
    if not ctype.endswith("*"):
        return None
    base = ctype[:-1].strip()
    return base[len("const "):].strip() if base.startswith("const ") else base


def _valid_pointer(ctype: str) -> bool:
    target = pointee(ctype)
    while target is not None and target.endswith("*"):
        target = pointee(target)
    return target is not None and (target in _FIXED_SIZES or target in ("size_t", "uintptr_t", "void", "char"))


@dataclass(frozen=True)
class Field:
    """One struct member.

    :param name: C identifier.
    :param ctype: a key of :data:`PRIMITIVES`, a pointer spelled ``"<type>*"`` or
        ``"const <type>*"`` (e.g. ``"const int16_t*"``), or a nested :class:`Layout`.
    :param count: array dimensions, ``()`` for a scalar, e.g. ``(4,)`` or ``(2, 3)``.
    :param doc: one line describing the member; emitted as a C comment.
    :param counter: the member only counts up (calls, cycles, bytes since Init): what one run did is
        its increase over the run (``tvmdevice run DIR --json`` reports that for an export).
    """

    name: str
    ctype: Union[str, "Layout"]
    count: tuple[int, ...] = ()
    doc: str = ""
    counter: bool = False

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"field name {self.name!r} is not a C identifier")
        if isinstance(self.ctype, str):
            if self.ctype not in PRIMITIVES and not _valid_pointer(self.ctype):
                raise ValueError(
                    f"field {self.name!r}: unknown C type {self.ctype!r}; use one of "
                    f"{sorted(PRIMITIVES)}, a pointer '<type>*' or 'const <type>*', or a nested Layout"
                )
        elif not isinstance(self.ctype, Layout):
            raise TypeError(f"field {self.name!r}: ctype must be a C type name or a Layout, "
                            f"got {type(self.ctype).__name__}")
        if any((not isinstance(n, int)) or n <= 0 for n in self.count):
            raise ValueError(f"field {self.name!r}: array dimensions must be positive ints, got {self.count}")

    @property
    def elements(self) -> int:
        """Array elements (1 for a scalar)."""
        n = 1
        for d in self.count:
            n *= d
        return n

    @property
    def is_pointer(self) -> bool:
        return isinstance(self.ctype, str) and self.ctype.endswith("*")

    def element_size_align(self, model: DataModel | None = None) -> tuple[int, int]:
        """``(sizeof, _Alignof)`` of one element on ``model`` (default: the host)."""
        model = HOST if model is None else model
        if isinstance(self.ctype, Layout):
            inner = self.ctype.for_data_model(model)
            return inner.size, inner.alignment
        return model.size_align(self.ctype)

    @property
    def c_type(self) -> str:
        """The member's C type as spelled in the header."""
        return self.ctype.c_type if isinstance(self.ctype, Layout) else self.ctype


@dataclass(frozen=True)
class FieldOffset:
    """Where a member lives: byte offset and total byte size."""

    name: str
    offset: int
    size: int


@dataclass(frozen=True)
class Layout:
    """A C struct: ordered fields, laid out with natural alignment for one data model.

    :param c_type: the struct's C type name, e.g. ``tvm_device_woofles_t``.
    :param fields: members in declaration order.
    :param doc: a sentence describing the struct; emitted as a comment.
    :param data_model: whose sizes and alignments :attr:`size`, :attr:`alignment`
        and :attr:`offsets` use (default :data:`HOST`).  Nested layouts are laid
        out for the same model.
    """

    c_type: str
    fields: tuple[Field, ...]
    doc: str = ""
    data_model: DataModel = HOST
    _offsets: tuple[FieldOffset, ...] = field(init=False, repr=False, compare=False)
    _size: int = field(init=False, repr=False, compare=False)
    _alignment: int = field(init=False, repr=False, compare=False)
    _variants: dict = field(init=False, repr=False, compare=False, default_factory=dict)

    def __post_init__(self) -> None:
        if not self.c_type.isidentifier():
            raise ValueError(f"struct type name {self.c_type!r} is not a C identifier")
        fields = tuple(self.fields)
        names = [f.name for f in fields]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"layout {self.c_type}: duplicate field names {dupes}")
        # Nested structs take this layout's data model, so the whole tree agrees.
        fields = tuple(
            Field(f.name, f.ctype.for_data_model(self.data_model), f.count, f.doc)
            if isinstance(f.ctype, Layout) and f.ctype.data_model != self.data_model else f
            for f in fields)
        object.__setattr__(self, "fields", fields)
        offset, alignment, offsets = 0, 1, []
        for f in fields:
            size, align = f.element_size_align(self.data_model)
            offset = _round_up(offset, align)
            offsets.append(FieldOffset(f.name, offset, size * f.elements))
            offset += size * f.elements
            alignment = max(alignment, align)
        object.__setattr__(self, "_offsets", tuple(offsets))
        object.__setattr__(self, "_alignment", alignment)
        # An empty struct is not legal C99; the header gives it one uint8_t member.
        object.__setattr__(self, "_size", _round_up(max(offset, 1), alignment))

    def for_data_model(self, model: DataModel) -> "Layout":
        """The same declaration laid out for ``model`` (nested layouts too)."""
        if model == self.data_model:
            return self
        if model not in self._variants:
            self._variants[model] = Layout(self.c_type, self.fields, self.doc, model)
        return self._variants[model]

    @property
    def size(self) -> int:
        """``sizeof`` the struct on :attr:`data_model`."""
        return self._size

    @property
    def alignment(self) -> int:
        """``_Alignof`` the struct on :attr:`data_model`."""
        return self._alignment

    @property
    def offsets(self) -> tuple[FieldOffset, ...]:
        """Each member's offset and byte size on :attr:`data_model`, in declaration order."""
        return self._offsets

    def offset_of(self, name: str) -> int:
        """``offsetof(c_type, name)`` on :attr:`data_model`; raises ``KeyError`` for an unknown member."""
        for fo in self._offsets:
            if fo.name == name:
                return fo.offset
        raise KeyError(f"{self.c_type} has no member {name!r}")

    def field(self, name: str) -> Field:
        """The member called ``name``; raises ``KeyError`` for an unknown member."""
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

    def to_json(self) -> dict[str, Any]:
        return {
            "c_type": self.c_type,
            "data_model": self.data_model.name,
            "size": self.size,
            "alignment": self.alignment,
            "fields": [
                {"name": f.name, "ctype": f.c_type, "count": list(f.count), "offset": o.offset, "size": o.size}
                for f, o in zip(self.fields, self._offsets)
            ],
        }


def _round_up(n: int, align: int) -> int:
    return (n + align - 1) // align * align


def numpy_code(ctype: str, model: DataModel | None = None) -> str:
    """The numpy dtype code of a scalar C type or pointer on ``model`` (default: the host), e.g. ``"<i4"``.

    Pointers are unsigned integers of the pointer's size.
    """
    model = HOST if model is None else model
    size, _ = model.size_align(ctype)
    if ctype in ("float", "double"):
        kind = "f"
    elif ctype.endswith("*") or ctype.startswith("u") or ctype == "size_t":
        kind = "u"
    else:
        kind = "i"
    return f"{kind}{size}"


def struct_view(layout: Layout, buffer: Any) -> dict[str, Any]:
    """numpy views of each scalar or array member of ``layout`` inside ``buffer``.

    ``buffer`` holds the struct as laid out for ``layout.data_model`` (the host
    for device structs).  Pointers appear as unsigned integers of the pointer
    size; nested structs are omitted (view them with their own layout at
    ``offset_of``).  Writes through the views change the struct the C side sees.
    """
    import numpy as np

    raw = np.frombuffer(buffer, dtype=np.uint8, count=layout.size)
    views = {}
    for f, fo in zip(layout.fields, layout.offsets):
        if isinstance(f.ctype, Layout):
            continue
        code = numpy_code(f.ctype, layout.data_model)
        shape = f.count or (1,)
        views[f.name] = raw[fo.offset : fo.offset + fo.size].view(code).reshape(shape)
    return views
