"""A C99 program that runs a model compiled for ``c`` with the device's own C kernels, for firmware tests.

:func:`write_program` writes ``model.c``: every constant and the kernels'
params structs as ``static const`` data (the params through
:meth:`~tvmdevice.params.ParamsStruct.c_initializer`, so the data model of the
target compiler lays them out), one static buffer per computed tensor (a view
shares its source's), and a ``main`` that reads the graph inputs from a file,
calls each kernel in schedule order with its buffers (scratch last, operator state
starting at its reset value) and a NULL device handle
(the ``c`` device's kernels do not use it) and writes every operator output,
in operator order, to another file.  Built with :func:`tvmdevice.firmware.build`
it runs on the host and under QEMU on Cortex-M.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tvmdevice.host.kernel_table import KERNEL_BY_NAME
from tvmdevice.ir import ABSENT

_C_TYPES = {np.dtype(np.int8): "int8_t", np.dtype(np.int16): "int16_t", np.dtype(np.int32): "int32_t",
            np.dtype(np.int64): "int64_t", np.dtype(np.float32): "float"}


def _literal(value: object) -> str:
    if isinstance(value, (float, np.floating)):
        return repr(float(value)) + "f"
    v = int(value)  # type: ignore[call-overload]
    return "(-2147483647 - 1)" if v == -(2**31) else str(v)


def _array(name: str, values: np.ndarray, const: bool, initialized: bool = False) -> str:
    ctype = _C_TYPES[np.dtype(values.dtype)]
    flat = values.reshape(-1)
    body = ",".join(_literal(v) for v in flat) if const or initialized else ""
    qualifier = "static const" if const else "static"
    init = f" = {{{body}}}" if const or initialized else ""
    return f"{qualifier} {ctype} {name}[{max(flat.size, 1)}]{init};\n"


def write_program(module, directory: Path) -> Path:
    """Write ``model.c`` for ``module`` (compiled for target ``c``) into ``directory``; return its path."""
    graph, lines, calls = module.graph, ["#include <stdint.h>\n#include <stdio.h>\n\n",
                                         '#include "tvmd_c_kernels.h"\n#include "tvmdevice_fw.h"\n\n'], []
    aliases = dict(module.schedule.aliases)
    used = {i for p in module.placement.ops if not p.is_view for i in graph.operators[p.op_index].inputs}
    for t in graph.tensors:
        if t.is_constant:
            if t.index not in used:
                continue  # e.g. the shape tensor of a view
            lines.append(_array(f"t{t.index}", np.asarray(t.data), const=True))
        elif t.is_variable:  # operator state starts at TFLM's reset value
            lines.append(_array(f"t{t.index}", np.full(t.shape, t.reset_value, t.dtype), const=False,
                                initialized=True))
        elif t.index not in aliases:
            lines.append(_array(f"t{t.index}", np.zeros(t.shape, t.dtype), const=False))

    def buffer(index: int) -> str:
        if index == ABSENT:
            return "NULL"
        return f"(void*)t{aliases.get(index, index)}"

    for p in module.placement.ops:
        if p.is_view:
            continue
        op, params = graph.operators[p.op_index], p.call.params
        names = {}
        for field in params.layout.fields:
            if field.is_pointer and params.values[field.name] is not None:
                names[field.name] = f"p{op.index}_{field.name}"
                lines.append(_array(names[field.name], np.asarray(params.values[field.name]), const=True))
        lines.append(params.c_initializer(f"p{op.index}", names))
        symbol = KERNEL_BY_NAME[p.call.name].symbol
        buffers = ", ".join(buffer(i) for i in (*op.inputs, *op.outputs))
        if p.call.scratch_bytes:  # the call's scratch, last
            lines.append(f"static int64_t s{op.index}[{(p.call.scratch_bytes + 7) // 8}];\n")
            buffers += f", (void*)s{op.index}"
        calls.append(f"  {{\n    void* const b[] = {{{buffers}}};\n"
                     f"    if ({symbol}(&p{op.index}, b, NULL) != 0) return 10 + {op.index};\n  }}\n")
    reads = "".join(f"  if (fread(t{i}, 1, sizeof(t{i}), in) != sizeof(t{i})) return 3;\n" for i in graph.inputs)
    writes = "".join(f"  fwrite(t{aliases.get(t, t)}, 1, sizeof(t{aliases.get(t, t)}), out);\n"
                     for op in graph.operators for t in op.outputs)
    lines.append(
        "\nint main(int argc, char** argv) {\n"
        "  if (argc != 3) return 2;\n"
        '  FILE* in = fopen(argv[1], "rb");\n  if (in == NULL) return 3;\n'
        f"{reads}  fclose(in);\n"
        "  tvmd_fw_region_begin();\n"
        f"{''.join(calls)}"
        "  tvmd_fw_region_end();\n"
        '  FILE* out = fopen(argv[2], "wb");\n  if (out == NULL) return 4;\n'
        f"{writes}  fclose(out);\n  return 0;\n}}\n")
    path = directory / "model.c"
    path.write_text("".join(lines))
    return path
