"""Bounds-checked reading of a flatbuffer through the generated ``tflite`` readers.

The readers the ``tflite`` package generates trust every offset in the file:
one that points past the end makes ``struct.unpack_from`` fail, a negative
one silently reads from the end of the file (Python slicing), and one past
2**32 trips flatbuffers' own argument check with a TypeError.  Instead of
catching whatever a corrupt file makes them raise, the frontend gives every
table it reads a :class:`CheckedTable` (:func:`checked`): each vtable, field,
indirection, vector and string is checked against the file before it is read,
and anything outside raises :class:`~tvmdevice.errors.ModelFormatError` naming
the table and the offset.  Nested tables the readers return are plain again,
so the reader wraps each one as it gets it.
"""

from __future__ import annotations

from typing import Any, TypeVar

from flatbuffers import encode
from flatbuffers import number_types as N
from flatbuffers.table import Table

from tvmdevice.errors import ModelFormatError

__all__ = ["CheckedTable", "checked"]

T = TypeVar("T")

_UOFFSET = N.UOffsetTFlags.bytewidth  # 4: offsets and vector lengths
_VOFFSET = N.VOffsetTFlags.bytewidth  # 2: vtable entries


class CheckedTable(Table):
    """A flatbuffers ``Table`` whose every read is checked against the buffer."""

    __slots__ = ("label",)

    def __init__(self, buf: Any, pos: int, label: str) -> None:
        self.label = label
        self._span(buf, pos, _UOFFSET, "table")
        super().__init__(buf, pos)
        # The vtable: [vtable size, object size, field offsets...] (uint16 each),
        # at the table's position minus the signed offset stored there.
        vtable = pos - encode.Get(N.SOffsetTFlags.packer_type, buf, pos)
        self._span(buf, vtable, 2 * _VOFFSET, "vtable")
        size = encode.Get(N.VOffsetTFlags.packer_type, buf, vtable)
        if size < 2 * _VOFFSET or size % _VOFFSET:
            self._fail(f"vtable at byte {vtable} declares size {size}")
        self._span(buf, vtable, size, "vtable")

    def _fail(self, what: str) -> None:
        raise ModelFormatError(f"malformed TFLite flatbuffer: {self.label}: {what}")

    def _span(self, buf: Any, start: int, size: int, what: str) -> None:
        if not (0 <= start and start + size <= len(buf)):
            self._fail(f"{what} at byte {start} ({size} bytes) lies outside the {len(buf)}-byte file")

    def _target(self, off: int, what: str) -> int:
        """The position an unsigned offset stored at ``off`` refers to (checked: 4 bytes there)."""
        self._span(self.Bytes, off, _UOFFSET, f"offset to the {what}")
        target = off + encode.Get(N.UOffsetTFlags.packer_type, self.Bytes, off)
        self._span(self.Bytes, target, _UOFFSET, what)
        return target

    # -- the reads the generated code makes --------------------------------
    def Get(self, flags: Any, off: int) -> Any:  # noqa: N802 (flatbuffers' name)
        self._span(self.Bytes, off, flags.bytewidth, "field")
        return super().Get(flags, off)

    def Indirect(self, off: int) -> int:  # noqa: N802
        return self._target(off, "table")

    def String(self, off: int) -> bytes:  # noqa: N802
        start = self._target(off, "string")
        length = encode.Get(N.UOffsetTFlags.packer_type, self.Bytes, start)
        self._span(self.Bytes, start + _UOFFSET, length, "string")
        return bytes(self.Bytes[start + _UOFFSET:start + _UOFFSET + length])

    def VectorLen(self, off: int) -> int:  # noqa: N802
        start = self._target(self.Pos + off, "vector")
        return int(encode.Get(N.UOffsetTFlags.packer_type, self.Bytes, start))

    def Vector(self, off: int) -> int:  # noqa: N802
        return self._target(self.Pos + off, "vector") + _UOFFSET

    def Union(self, t2: Table, off: int) -> None:  # noqa: N802
        t2.Pos = self._target(self.Pos + off, "union table")
        t2.Bytes = self.Bytes

    def GetVectorAsNumpy(self, flags: Any, off: int) -> Any:  # noqa: N802
        start = self.Vector(off)
        length = self.VectorLen(off)
        self._span(self.Bytes, start, length * flags.bytewidth, "vector")
        return encode.GetVectorAsNumpy(N.to_numpy_type(flags), self.Bytes, length, start)


def checked(obj: T, label: str) -> T:
    """``obj`` (a generated reader object, e.g. ``tflite.Tensor``) reading through a :class:`CheckedTable`."""
    tab = obj._tab  # type: ignore[attr-defined]
    obj._tab = CheckedTable(tab.Bytes, tab.Pos, label)  # type: ignore[attr-defined]
    return obj
