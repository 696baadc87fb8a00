"""Kernel params structs filled by member name from a :class:`~tvmdevice.layout.Layout`.

A plugin declares each kernel's params struct once, as a ``Layout``; the C
header comes from it (:func:`tvmdevice.headers.structs_header`) and prepare
fills it from the operator's op data plus the plugin's own extras::

    params = ParamsStruct(CONV_PARAMS, op_data, kind=KIND_CONV, weights=packed, ldw=16)
    PreparedCall(kernel=..., params=params, ...)

Every member must be given (a missing one is an error naming it, never a
silent zero) and every value is checked against its C type, so a member added
to the layout and forgotten in prepare fails at compile time, not at run time.
The executor passes ``params.capsule`` (a ``"tvmdevice.params"`` capsule that
keeps the struct and the arrays its pointers point into alive) to the kernel,
and a firmware export prints :meth:`ParamsStruct.c_initializer`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from .layout import HOST, Field, Layout, numpy_code, pointee

__all__ = ["ParamsStruct"]

#: Alignment of the struct storage: enough for any member on any data model.
_STORAGE_ALIGNMENT = 16

_INT_LIMITS_MIN = {"INT8_MIN": -(2**7), "INT16_MIN": -(2**15), "INT32_MIN": -(2**31), "INT64_MIN": -(2**63)}


class ParamsStruct:
    """One kernel params struct in host memory, filled by member name.

    :param layout: the struct's declaration (laid out here for the host).
    :param values: a mapping or a dataclass instance (e.g. the operator's
        :class:`~tvmdevice.ops.OpData`) read by member name; keys or attributes
        that are not members are ignored.
    :param extras: members given by keyword; they take precedence over ``values``
        and must name members of ``layout``.

    Member values by C type:

    * scalar: an ``int`` (``bool`` counts as 0/1) within the C type's range, or a
      finite ``float`` for ``float``/``double``;
    * array (``Field.count``): a sequence or array of exactly that shape;
    * nested :class:`Layout`: a mapping or dataclass, filled the same way
      (an array of structs: a sequence of those);
    * pointer: a C-contiguous, aligned numpy array whose dtype is the pointee's
      (any dtype for ``void*``; writeable unless the pointee is ``const``), or
      ``None`` for ``NULL``.  The struct keeps the array alive.

    :raises ValueError: a member is missing (all missing members are named), or
        a value is out of range or of the wrong shape.
    :raises TypeError: a value has the wrong type or dtype.
    """

    __slots__ = ("_layout", "_values", "_storage", "_arrays", "__weakref__")

    def __init__(self, layout: Layout, values: Any = None, /, **extras: Any) -> None:
        from .memory import aligned_empty

        if not isinstance(layout, Layout):
            raise TypeError(f"ParamsStruct needs a tvmdevice.Layout, got {type(layout).__name__}")
        self._layout = layout.for_data_model(HOST)
        self._arrays: list[np.ndarray] = []
        unknown = sorted(set(extras) - {f.name for f in self._layout.fields})
        if unknown:
            raise ValueError(f"{self._layout.c_type} has no member{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(unknown)}; its members are {', '.join(f.name for f in layout.fields)}")
        resolved = _resolve(self._layout, values, extras, self._layout.c_type)
        self._storage = aligned_empty(self._layout.size, max(_STORAGE_ALIGNMENT, self._layout.alignment))
        _write(self._layout, resolved, self._storage, 0, self._arrays)
        self._values = _freeze(resolved)

    @property
    def layout(self) -> Layout:
        """The struct's declaration, laid out for the host."""
        return self._layout

    @property
    def values(self) -> Mapping[str, Any]:
        """Member -> value, read-only: ints and floats, tuples for arrays, mappings
        for nested structs, the numpy array (or ``None``) for pointers."""
        return self._values

    @property
    def address(self) -> int:
        """Host address of the struct (stable for the object's life)."""
        from .memory import address_of

        return address_of(self._storage)

    @property
    def nbytes(self) -> int:
        """``sizeof`` the struct on the host."""
        return self._layout.size

    @property
    def footprint(self) -> int:
        """Bytes a firmware image keeps for this call: the struct and every array it points into, once each."""
        seen = {id(a): a.nbytes for a in self._arrays}
        return self.nbytes + sum(seen.values())

    @property
    def capsule(self) -> Any:
        """A ``"tvmdevice.params"`` PyCapsule of the struct that keeps this object (and its arrays) alive.

        A new capsule on each access: caching it here would make a reference
        cycle through the capsule, which the garbage collector cannot see.
        """
        from ._abi import owned_params_capsule

        return owned_params_capsule(self.address, self)

    def tobytes(self) -> bytes:
        """The struct's bytes as the host's C compiler lays them out."""
        return self._storage.tobytes()

    def pointer_arrays(self) -> dict[str, np.ndarray]:
        """Every non-NULL pointer member's array, keyed by its path as :meth:`c_initializer` names it."""
        found: dict[str, np.ndarray] = {}
        _find_arrays(self._layout, self._values, "", found)
        return found

    def c_initializer(self, name: str, array_names: Mapping[str, str] | None = None, *,
                      storage: str = "static const") -> str:
        """``static const <c_type> <name> = { .member = ..., };``: this struct as C source.

        :param name: the C identifier to define.
        :param array_names: for each non-NULL pointer member, the C expression it
            points to (e.g. the name of a ``static const`` array the caller
            emits), keyed by member name; members of nested structs are keyed by
            their path (``"q.table"``, ``"items[1].table"``).
        :param storage: the qualifiers before the type (``"const"`` for external linkage).
        :raises ValueError: ``name`` is not a C identifier, or a non-NULL pointer
            member has no entry in ``array_names``.
        """
        if not name.isidentifier():
            raise ValueError(f"{name!r} is not a C identifier")
        body = _c_struct(self._layout, self._values, array_names or {}, "", 0)
        return f"{storage} {self._layout.c_type} {name} = {body};\n"

    def __repr__(self) -> str:
        return f"ParamsStruct({self._layout.c_type}, {dict(self._values)!r})"


# ---------------------------------------------------------------- filling


def _lookup(values: Any, where: str) -> Any:
    """A member getter over a mapping or dataclass instance."""
    if values is None:
        return lambda name: _MISSING
    if isinstance(values, Mapping):
        return lambda name: values.get(name, _MISSING)
    if dataclasses.is_dataclass(values) and not isinstance(values, type):
        return lambda name: getattr(values, name, _MISSING)
    raise TypeError(f"{where}: values must be a mapping or a dataclass instance, got {type(values).__name__}")


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING: Any = _Missing()


def _resolve(layout: Layout, values: Any, extras: Mapping[str, Any], where: str) -> dict[str, Any]:
    """Member -> normalized value for every member of ``layout``; checks types and ranges."""
    get = _lookup(values, where)
    raw = {}
    for f in layout.fields:
        v = extras[f.name] if f.name in extras else get(f.name)
        raw[f.name] = v
    missing = [n for n, v in raw.items() if v is _MISSING]
    if missing:
        raise ValueError(f"{where}: no value for member{'s' if len(missing) > 1 else ''} "
                         f"{', '.join(missing)}; every member must be given (from the values or as a keyword)")
    return {f.name: _normalize(f, raw[f.name], f"{where}.{f.name}") for f in layout.fields}


def _normalize(f: Field, value: Any, where: str) -> Any:
    if f.is_pointer:
        if f.count:
            raise TypeError(f"{where}: arrays of pointers are not supported in params structs")
        return _pointer(f.c_type, value, where)
    if not f.count:
        return _element(f, value, where)
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise TypeError(f"{where}: expected a sequence of shape {f.count}, got {type(value).__name__}")
    return _array(f, value, f.count, where)


def _array(f: Field, value: Any, shape: tuple[int, ...], where: str) -> tuple[Any, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)) or len(value) != shape[0]:
        got = len(value) if isinstance(value, (Sequence, np.ndarray)) else type(value).__name__
        raise ValueError(f"{where}: expected {shape[0]} elements (member shape {f.count}), got {got}")
    if len(shape) > 1:
        return tuple(_array(f, v, shape[1:], f"{where}[{i}]") for i, v in enumerate(value))
    return tuple(_element(f, v, f"{where}[{i}]") for i, v in enumerate(value))


def _element(f: Field, value: Any, where: str) -> Any:
    if isinstance(f.ctype, Layout):
        return _resolve(f.ctype, value, {}, where)
    return _scalar(f.ctype, value, where)


def _scalar(ctype: str, value: Any, where: str) -> int | float:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if ctype in ("float", "double"):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{where}: {ctype} member needs a number, got {type(value).__name__}")
        x = float(value)
        limit = float(np.finfo(np.float32 if ctype == "float" else np.float64).max)
        if not math.isfinite(x) or abs(x) > limit:
            raise ValueError(f"{where}: {value!r} is not a finite {ctype}")
        return float(np.float32(x)) if ctype == "float" else x
    if not isinstance(value, (int, np.integer, np.bool_)):
        raise TypeError(f"{where}: {ctype} member needs an integer, got {type(value).__name__} {value!r}")
    n = int(value)
    info = np.iinfo(numpy_code(ctype))
    if not info.min <= n <= info.max:
        raise ValueError(f"{where}: {n} is out of range for {ctype} [{info.min}, {info.max}]")
    return n


def _pointer(ctype: str, value: Any, where: str) -> np.ndarray | None:
    if value is None:
        return None
    target = pointee(ctype) or ""
    if target.endswith("*"):
        raise TypeError(f"{where}: a {ctype} member can only be NULL (None) in a params struct")
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{where}: {ctype} member needs a numpy array or None, got {type(value).__name__}")
    if target not in ("void", "char"):
        want = np.dtype(numpy_code(target))
        if value.dtype != want:
            raise TypeError(f"{where}: {ctype} member needs a {want} array, got {value.dtype}; "
                            f"convert it with np.ascontiguousarray(a, np.{want})")
    elif target == "char" and value.dtype not in (np.dtype(np.int8), np.dtype(np.uint8)):
        raise TypeError(f"{where}: {ctype} member needs an int8 or uint8 array, got {value.dtype}")
    if not (value.flags.c_contiguous and value.flags.aligned):
        raise ValueError(f"{where}: {ctype} member needs a C-contiguous, aligned array; "
                         "pass np.ascontiguousarray(a)")
    if not ctype.startswith("const ") and not value.flags.writeable:
        raise ValueError(f"{where}: {ctype} is not const, so the kernel may write through it, "
                         "but the array is read-only; pass a writeable array or declare the member const")
    return value


# ---------------------------------------------------------------- writing


def _write(layout: Layout, values: Mapping[str, Any], storage: np.ndarray, base: int,
           arrays: list[np.ndarray]) -> None:
    from .memory import address_of

    for f, fo in zip(layout.fields, layout.offsets):
        v = values[f.name]
        at = base + fo.offset
        if isinstance(f.ctype, Layout):
            size = f.ctype.size
            for i, item in enumerate(_flat(v) if f.count else [v]):
                _write(f.ctype, item, storage, at + i * size, arrays)
            continue
        code = numpy_code(f.ctype, layout.data_model)
        view = storage[at:at + fo.size].view(code)
        if f.is_pointer:
            if v is not None:
                arrays.append(v)
            view[0] = 0 if v is None else address_of(v)
        else:
            view[:] = _flat(v) if f.count else [v]


def _flat(v: Any) -> list[Any]:
    if isinstance(v, tuple):
        return [x for item in v for x in _flat(item)] if v and isinstance(v[0], tuple) else list(v)
    return [v]


def _freeze(v: Any) -> Any:
    if isinstance(v, dict):
        return MappingProxyType({k: _freeze(x) for k, x in v.items()})
    if isinstance(v, tuple):
        return tuple(_freeze(x) for x in v)
    return v


# ---------------------------------------------------------------- C source


def _find_arrays(layout: Layout, values: Mapping[str, Any], prefix: str, found: dict[str, np.ndarray]) -> None:
    for f in layout.fields:
        v, path = values[f.name], prefix + f.name
        if f.is_pointer:
            if v is not None:
                found[path] = v
        elif isinstance(f.ctype, Layout):
            items = _flat(v) if f.count else [v]
            for i, item in enumerate(items):
                at = f"{path}[{i}]" if f.count else path
                _find_arrays(f.ctype, item, at + ".", found)


def _c_struct(layout: Layout, values: Mapping[str, Any], array_names: Mapping[str, str], prefix: str,
              depth: int) -> str:
    if not layout.fields:
        return "{ 0 }"
    pad = "  " * (depth + 1)
    lines = [f"{pad}.{f.name} = {_c_value(f, values[f.name], array_names, prefix + f.name, depth + 1)},"
             for f in layout.fields]
    return "{\n" + "\n".join(lines) + "\n" + "  " * depth + "}"


def _c_value(f: Field, v: Any, array_names: Mapping[str, str], path: str, depth: int) -> str:
    if f.is_pointer:
        if v is None:
            return "NULL"
        if path not in array_names:
            raise ValueError(f"pointer member {path!r} is not NULL: give the C name of the array it points to "
                             f"in array_names[{path!r}]")
        return array_names[path]

    def element(x: Any, at: str) -> str:
        if isinstance(f.ctype, Layout):
            return _c_struct(f.ctype, x, array_names, at + ".", depth)
        return _c_scalar(str(f.ctype), x)

    def array(x: Any, at: str) -> str:
        if isinstance(x, tuple):
            return "{ " + ", ".join(array(item, f"{at}[{i}]") for i, item in enumerate(x)) + " }"
        return element(x, at)

    return array(v, path) if f.count else element(v, path)


def _c_scalar(ctype: str, x: int | float) -> str:
    if ctype == "double":
        return repr(float(x))
    if ctype == "float":
        return str(np.float32(x)) + "f"  # the shortest decimal that reads back as this float
    n = int(x)
    if ctype.startswith("int"):
        bits = ctype[3:-2]
        if n == _INT_LIMITS_MIN.get(f"INT{bits}_MIN"):
            return f"INT{bits}_MIN"  # -2147483648 is not an int constant in C
        return f"INT64_C({n})" if bits == "64" else str(n)
    if ctype == "uint64_t":
        return f"UINT64_C({n})"
    return f"{n}u"
