"""numpy arrays as C99 array definitions: the constants and params arrays of an export."""

from __future__ import annotations

import numpy as np

__all__ = ["C_TYPES", "c_type", "c_array"]

#: numpy dtype -> the C type an export declares it as.
C_TYPES = {np.dtype(np.int8): "int8_t", np.dtype(np.uint8): "uint8_t", np.dtype(np.int16): "int16_t",
           np.dtype(np.uint16): "uint16_t", np.dtype(np.int32): "int32_t", np.dtype(np.uint32): "uint32_t",
           np.dtype(np.int64): "int64_t", np.dtype(np.float32): "float", np.dtype(np.bool_): "uint8_t"}

_PER_LINE = 20


def c_type(dtype: "np.dtype | str") -> str:
    """The C element type of ``dtype`` (``ValueError`` for one an export cannot hold)."""
    dt = np.dtype(dtype)
    if dt not in C_TYPES:
        raise ValueError(f"an export has no C type for dtype {dt.name}")
    return C_TYPES[dt]


def _literal(dtype: np.dtype, x: object) -> str:
    if dtype.kind == "f":
        value = np.float32(x)  # type: ignore[arg-type]
        if not np.isfinite(value):
            raise ValueError(f"constant {value} has no C99 literal")
        return str(value) + "f"
    n = int(x)  # type: ignore[call-overload]
    if dtype == np.int32 and n == -(2**31):
        return "INT32_MIN"
    if dtype == np.int64:
        return "INT64_MIN" if n == -(2**63) else f"INT64_C({n})"
    return f"{n}u" if dtype.kind == "u" and dtype.itemsize >= 4 else str(n)


def c_array(name: str, values: np.ndarray, *, qualifiers: str = "const", alignment: int = 16) -> str:
    """``<qualifiers> <type> <name>[N] __attribute__((aligned(A))) = {...};`` for ``values`` (flattened)."""
    flat = np.ascontiguousarray(values).reshape(-1)
    dtype = flat.dtype
    ctype = c_type(dtype)
    items = [_literal(dtype, x) for x in flat.tolist()] or ["0"]
    lines = ",\n".join("  " + ", ".join(items[i:i + _PER_LINE]) for i in range(0, len(items), _PER_LINE))
    return (f"{qualifiers} {ctype} {name}[{max(flat.size, 1)}] __attribute__((aligned({alignment}))) = {{\n"
            f"{lines}\n}};\n")
