"""The C of an exported model: the interface header, the constants and the run function.

What :func:`generate` writes follows TVM's AOT executor interface
(``tvmgen_<model>.h``: size macros, ``struct tvmgen_<model>_inputs`` and
``_outputs`` with a ``void*`` per tensor, ``struct tvmgen_<model>_devices``
with a pointer per device that has a C Device API, ``_workspace_pools`` when
the caller provides the pools) with the seed's lifecycle contract:

* ``tvmgen_<model>_open(devices)``: Init (+ the device's configure function)
  and Open each device; separate memories get their blocks
  (AllocDataSpace) and constants copied in;
* ``tvmgen_<model>_run(inputs, outputs[, pools], devices)``: the inputs
  copied into the plan, Activate each device, every step of the schedule
  (kernels with their device's handle last, copies between memories),
  Deactivate each device (also after a failure), the outputs copied out;
* ``tvmgen_<model>_close(devices)``: every block freed, Close and Destroy.

Every status is checked and the first failing one returned; after any
failure each device stays closable, and ``tvmgen_<model>_last_error()`` names
the failed call from the export's table of calls (``metadata.json`` has the
same table).  Constants and params are ``const`` data (flash on a
microcontroller); the host pool is a static aligned array in ``.bss.noinit``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._abi import kernel_info
from ..aot.memory_plan import tensor_key
from ..aot.schedule import HOST, SCRATCH, CopyStep, KernelStep
from ..headers import model_c_name
from ..ir import ABSENT
from ..kernel import is_c_kernel
from ..params import ParamsStruct
from .carrays import c_array, c_type
from .devices import ExportDevice

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule

__all__ = ["GeneratedModel", "Io", "generate", "POOL_ALIGNMENT"]

#: Alignment of the host pool and of every constant (the plan's buffers are 16-aligned offsets into it).
POOL_ALIGNMENT = 16
#: Alignment asked of a separate memory's AllocDataSpace (as the Python executor binds).
DEVICE_ALIGNMENT = 64


@dataclass(frozen=True)
class Io:
    """One model input or output as the interface names it."""

    member: str
    tensor: int
    dtype: str
    shape: tuple[int, ...]
    nbytes: int
    scale: float | None
    zero_point: int | None

    def macro(self, prefix: str) -> str:
        return f"{prefix.upper()}_{self.member.upper()}_SIZE"


@dataclass
class GeneratedModel:
    """The generated files (relative path -> text) and what metadata.json says about them."""

    name: str
    prefix: str
    files: dict[str, str] = field(default_factory=dict)
    inputs: list[Io] = field(default_factory=list)
    outputs: list[Io] = field(default_factory=list)
    #: what each numbered call is, for tvmgen_<model>_last_error() and metadata.json
    calls: list[dict] = field(default_factory=list)
    constant_bytes: int = 0
    params_bytes: int = 0
    pool_bytes: dict[str, int] = field(default_factory=dict)


def _identifier(text: str, fallback: str) -> str:
    ident = re.sub(r"[^0-9A-Za-z_]+", "_", text).strip("_").lower()
    if not ident or ident[0].isdigit():
        ident = f"{fallback}_{ident}" if ident else fallback
    return ident


def _io(module: "CompiledModule", tensors: tuple[int, ...], kind: str) -> list[Io]:
    seen: set[str] = set()
    found = []
    for k, t in enumerate(tensors):
        tensor = module.graph.tensors[t]
        member = _identifier(tensor.name, f"{kind}{k}")
        if member in seen:
            member = f"{member}_{k}"
        seen.add(member)
        q = tensor.quant
        scale = float(q.scale.reshape(-1)[0]) if q is not None and q.scale.size == 1 else None
        zp = int(q.zero_point.reshape(-1)[0]) if q is not None and q.zero_point.size == 1 else None
        found.append(Io(member, t, np.dtype(tensor.dtype).name, tuple(int(d) for d in tensor.shape), tensor.nbytes,
                        scale, zp))
    return found


class _Writer:
    """Builds the two C files of one export."""

    def __init__(self, module: "CompiledModule", name: str, devices: list[ExportDevice], external_pools: bool):
        self.module, self.graph, self.devices = module, module.graph, devices
        self.external_pools = external_pools
        self.name = name
        self.m = model_c_name(name)
        self.p = f"tvmgen_{self.m}"
        self.by_name = {d.name: d for d in devices}
        self.host_pool = module.plan.pools[HOST]
        self.out = GeneratedModel(name, self.p)
        self.out.inputs = _io(module, module.graph.inputs, "input")
        self.out.outputs = _io(module, module.graph.outputs, "output")
        self.constants: list[str] = []        # definitions in the constants file
        self.externs: list[str] = []          # their declarations for the run file
        self.constant_names: dict[int, str] = {}

    # ------------------------------------------------------------------ naming
    def call(self, what: str, **info: object) -> int:
        self.out.calls.append({"call": what, **info})
        return len(self.out.calls) - 1

    def constant(self, tensor: int) -> str:
        name = self.constant_names.get(tensor)
        if name is None:
            t = self.graph.tensors[tensor]
            data = np.ascontiguousarray(t.data)
            name = self.constant_names[tensor] = f"{self.p}_constant_{tensor}"
            self.constants.append(f"/* tensor {tensor} {t.name!r}: {data.dtype.name} {list(t.shape)} */\n"
                                  + c_array(name, data, alignment=POOL_ALIGNMENT))
            self.externs.append(f"extern const {c_type(data.dtype)} {name}[{max(data.size, 1)}];")
            self.out.constant_bytes += data.nbytes
        return name

    def params(self, op_index: int, params: ParamsStruct) -> str:
        name = f"{self.p}_op{op_index}_params"
        arrays: dict[str, str] = {}
        for path, array in params.pointer_arrays().items():
            arr_name = f"{self.p}_op{op_index}_{_identifier(path, 'array')}"
            arrays[path] = arr_name
            self.constants.append(c_array(arr_name, np.asarray(array), alignment=POOL_ALIGNMENT))
            self.out.params_bytes += np.asarray(array).nbytes
        self.constants.append(params.c_initializer(name, arrays, storage="const"))
        self.externs.append(f"extern const {params.layout.c_type} {name};")
        self.out.params_bytes += params.layout.size
        return name

    # ------------------------------------------------------------- buffers
    def device_address(self, device: ExportDevice, slot: int) -> str:
        return f"{self.p}_{device.c_name}_addr[{slot}]"

    def buffer(self, tensor: int, memory: str) -> str:
        """A kernel buffer expression for ``tensor`` read or written in ``memory``."""
        if tensor == ABSENT:
            return "NULL"
        t = self.graph.tensors[tensor]
        if t.is_constant:
            if memory == HOST:
                return f"(void*){self.constant(tensor)}"
            return f"(void*)(uintptr_t){self.device_address(self.by_name[memory], self.slots[memory][tensor])}"
        return self.planned(tensor_key(self.module.schedule.source(tensor), memory))

    def planned(self, key: tuple) -> str:
        memory = key[2]
        if memory == HOST:
            return f"(void*)(pool + {self.host_pool.offsets[key]})"
        block = self.module.plan.pools[memory].block_of[key]
        return f"(void*)(uintptr_t){self.device_address(self.by_name[memory], block)}"

    def host_pointer(self, tensor: int) -> str:
        key = tensor_key(self.module.schedule.source(tensor), HOST)
        return f"(pool + {self.host_pool.offsets[key]})"

    # ------------------------------------------------------------ sections
    def plan_device_memory(self) -> None:
        """Slots of each separate memory: its blocks first, then one per preloaded constant."""
        self.slots: dict[str, dict[int, int]] = {}
        self.slot_count: dict[str, int] = {}
        for d in self.devices:
            if not d.separate:
                continue
            pool = self.module.plan.pools.get(d.name)
            blocks = len(pool.blocks) if pool is not None else 0
            consts = [t for t, mem in self.module.schedule.constants if mem == d.name]
            self.slots[d.name] = {t: blocks + i for i, t in enumerate(consts)}
            self.slot_count[d.name] = blocks + len(consts)

    def open_function(self) -> str:
        p, lines = self.p, []
        for k, d in enumerate(self.devices):
            if not d.has_struct:
                continue
            dev = f"devices->{d.c_name}"
            steps = [("Init", d.symbol("Init"))]
            if d.configure:
                steps.append(("configure", d.configure))
            steps.append(("Open", d.symbol("Open")))
            for what, fn in steps:
                call = self.call(fn, device=d.name)
                lines.append(f"  status = {fn}({dev});\n  if (status != TVMD_OK) return {p}_fail_open({call}, status, "
                             f"devices);\n")
                if what == "Init":
                    lines.append(f"  {p}_stage[{k}] = 1;\n")
            lines.append(f"  {p}_stage[{k}] = 2;\n")
            if d.separate:
                pool = self.module.plan.pools.get(d.name)
                for b, size in enumerate(pool.blocks if pool is not None else []):
                    call = self.call(d.symbol("AllocDataSpace"), device=d.name, block=b, bytes=size)
                    lines.append(self._alloc(d, b, size, call))
                for tensor, slot in self.slots[d.name].items():
                    t = self.graph.tensors[tensor]
                    call = self.call(d.symbol("AllocDataSpace"), device=d.name, constant=tensor, bytes=t.nbytes)
                    lines.append(self._alloc(d, slot, t.nbytes, call))
                    call = self.call(d.symbol("CopyToDevice"), device=d.name, constant=tensor, bytes=t.nbytes)
                    lines.append(f"  status = {d.symbol('CopyToDevice')}({dev}, {self.device_address(d, slot)}, "
                                 f"{self.constant(tensor)}, {t.nbytes}u);\n"
                                 f"  if (status != TVMD_OK) return {p}_fail_open({call}, status, devices);\n")
        return "".join(lines)

    def _alloc(self, d: ExportDevice, slot: int, size: int, call: int) -> str:
        p, dev = self.p, f"devices->{d.c_name}"
        return (f"  status = {d.symbol('AllocDataSpace')}({dev}, {max(size, 1)}u, {DEVICE_ALIGNMENT}u, "
                f"&{self.device_address(d, slot)});\n"
                f"  if (status != TVMD_OK) return {p}_fail_open({call}, status, devices);\n"
                f"  {p}_{d.c_name}_live[{slot}] = 1;\n")

    def run_steps(self) -> str:
        p, lines = self.p, []
        for step in self.module.schedule.steps:
            if isinstance(step, KernelStep):
                lines.append(self._kernel(step))
            else:
                lines.append(self._copy(step))
        return "".join(lines).replace("@FAIL@", f"{p}_fail_run")

    def _kernel(self, step: KernelStep) -> str:
        op = self.graph.operators[step.op_index]
        call = self.module.prepared[op.index]
        device = self.by_name[step.device]
        if not is_c_kernel(call.kernel) or not (call.params is None or isinstance(call.params, ParamsStruct)):
            from ..errors import NotSupportedError

            raise NotSupportedError(f"operator #{op.index} {op.type} on device {step.device!r} runs a Python kernel "
                                    f"({call.name}), which has no C to export; use a device with C kernels for it")
        symbol = kernel_info(call.kernel)[0]
        params = "NULL" if call.params is None else "&" + self.params(op.index, call.params)
        buffers = [self.buffer(t, step.memory) for t in op.inputs]
        buffers += [self.buffer(t, step.memory) for t in op.outputs]
        if step.scratch_bytes:
            buffers.append(self.planned((SCRATCH, op.index, step.memory)))
        handle = f"devices->{device.c_name}" if device.has_struct else "NULL"
        index = self.call(symbol, operator=op.index, type=op.type, device=step.device)
        self.kernels.add(symbol)
        listed = ",\n        ".join(buffers)
        return (f"  {{ /* operator #{op.index} {op.type} on {step.device} */\n"
                f"    void* const buffers[] = {{\n        {listed}}};\n"
                f"    status = {symbol}({params}, buffers, {handle});\n"
                f"    if (status != TVMD_OK) return @FAIL@({index}, status, devices);\n  }}\n")

    def _copy(self, step: CopyStep) -> str:
        t = self.graph.tensors[step.tensor]
        to_device = step.dst != HOST
        device = self.by_name[step.dst if to_device else step.src]
        addr = self.planned(tensor_key(self.module.schedule.source(step.tensor), device.name))
        addr = addr.replace("(void*)(uintptr_t)", "")
        host = self.host_pointer(step.tensor)
        dev = f"devices->{device.c_name}"
        if to_device:
            fn, args = device.symbol("CopyToDevice"), f"{dev}, {addr}, {host}, {t.nbytes}u"
        else:
            fn, args = device.symbol("CopyFromDevice"), f"{dev}, {host}, {addr}, {t.nbytes}u"
        index = self.call(fn, tensor=step.tensor, src=step.src, dst=step.dst, bytes=t.nbytes)
        return (f"  /* tensor {step.tensor} {step.src} -> {step.dst} */\n"
                f"  status = {fn}({args});\n"
                f"  if (status != TVMD_OK) return @FAIL@({index}, status, devices);\n")

    # --------------------------------------------------------------- files
    def header(self) -> str:
        p, P = self.p, self.p.upper()
        macros = "\n".join(f"#define {io.macro(p)} {io.nbytes}" for io in (*self.out.inputs, *self.out.outputs))
        pool_macro = f"#define {P}_HOST_POOL_SIZE {max(self.host_pool.size, 1)}\n"
        pool_macro += f"#define {P}_HOST_POOL_ALIGNMENT {POOL_ALIGNMENT}\n"

        def members(ios: list[Io]) -> str:
            return "\n".join(f"  void* {io.member}; /* {io.dtype} {list(io.shape)} */" for io in ios)

        pools = ""
        run_args = f"struct {p}_inputs* inputs, struct {p}_outputs* outputs, struct {p}_devices* devices"
        if self.external_pools:
            pools = (f"/* The caller's memory pools ({P}_HOST_POOL_SIZE bytes, aligned to "
                     f"{P}_HOST_POOL_ALIGNMENT). */\nstruct {p}_workspace_pools {{\n  void* host_pool;\n}};\n\n")
            run_args = (f"struct {p}_inputs* inputs, struct {p}_outputs* outputs, "
                        f"struct {p}_workspace_pools* workspace_pools, struct {p}_devices* devices")
        return f"""/* Generated by tvmdevice: the interface of model {self.name!r}. Do not edit. */
#ifndef {P}_H_
#define {P}_H_

#include <stdint.h>

#include "{p}_devices.h"

#ifdef __cplusplus
extern "C" {{
#endif

/* Bytes of each input and output. */
{macros}
/* Bytes of the planned host pool (activations and scratch). */
{pool_macro}
/* One pointer per model input: the caller's data, copied in by run. */
struct {p}_inputs {{
{members(self.out.inputs)}
}};

/* One pointer per model output: written by run. */
struct {p}_outputs {{
{members(self.out.outputs)}
}};

{pools}/* Init and Open each device; separate memories get their blocks and constants.
 * Returns TVMD_OK or the first failing status (nothing is left open then). */
int32_t {p}_open(struct {p}_devices* devices);

/* Run the model once: Activate each device, every operator, Deactivate each
 * device (also after a failure).  Returns TVMD_OK or the first failing status. */
int32_t {p}_run({run_args});

/* Free every block, Close and Destroy each device.  Safe after any failure and
 * when nothing is open; returns TVMD_OK or the first failing status. */
int32_t {p}_close(struct {p}_devices* devices);

{self._reset_prototype()}/* After a call returned non-zero: the call that failed, e.g.
 * "tvmd_c_conv2d_s8 (operator #3 CONV_2D on c)"; NULL after a success. */
const char* {p}_last_error(void);

#ifdef __cplusplus
}}
#endif
#endif /* {P}_H_ */
"""

    def source(self) -> str:
        p = self.p
        self.kernels: set[str] = set()
        self.plan_device_memory()
        opening = self.open_function()
        steps = self.run_steps()
        for io in self.out.outputs:
            if self.graph.tensors[self.module.schedule.source(io.tensor)].is_constant:
                self.constant(self.module.schedule.source(io.tensor))
        structs = [d for d in self.devices if d.has_struct]
        n = len(self.devices)
        includes = sorted({h for d in self.devices for h in d.headers})
        protos = "\n".join(f"int32_t {s}(const void* params, void* const* buffers, void* resource_handle);"
                           for s in sorted(self.kernels))
        memory_protos = "".join(
            f"int32_t {d.symbol('AllocDataSpace')}({d.struct}* device, uint64_t nbytes, uint64_t alignment, "
            f"uint64_t* out_addr);\n"
            f"int32_t {d.symbol('FreeDataSpace')}({d.struct}* device, uint64_t addr);\n"
            f"int32_t {d.symbol('CopyToDevice')}({d.struct}* device, uint64_t dst, const void* src, uint64_t nbytes);\n"
            f"int32_t {d.symbol('CopyFromDevice')}({d.struct}* device, void* dst, uint64_t src, uint64_t nbytes);\n"
            for d in self.devices if d.separate)
        configure_protos = "".join(f"int32_t {d.configure}({d.struct}* device);\n" for d in structs if d.configure)
        slots = "".join(f"static uint64_t {p}_{d.c_name}_addr[{max(self.slot_count[d.name], 1)}];\n"
                        f"static uint8_t {p}_{d.c_name}_live[{max(self.slot_count[d.name], 1)}];\n"
                        for d in self.devices if d.separate)

        pool_decl, pool_init = self._pool()
        inputs = "".join(f"  if (inputs->{io.member} == NULL) return {p}_fail_run(-2, TVMD_ERR_INVALID_ARGUMENT, "
                         f"devices);\n" for io in self.out.inputs)
        inputs += "".join(f"  memcpy({self.host_pointer(io.tensor)}, inputs->{io.member}, {io.macro(p)});\n"
                          for io in self.out.inputs)
        outputs = "".join(f"  if (outputs->{io.member} == NULL) return {p}_fail_run(-2, TVMD_ERR_INVALID_ARGUMENT, "
                          f"devices);\n" for io in self.out.outputs)
        copies_out = "".join(f"  memcpy(outputs->{io.member}, {self._output_source(io)}, {io.macro(p)});\n"
                             for io in self.out.outputs)
        activate = "".join(
            f"  status = {d.symbol('Activate')}(devices->{d.c_name});\n"
            f"  if (status != TVMD_OK) return {p}_fail_run({self.call(d.symbol('Activate'), device=d.name)}, "
            f"status, devices);\n  {p}_active[{k}] = 1;\n"
            for k, d in enumerate(self.devices) if d.has_struct)
        deactivate_calls = {k: self.call(d.symbol("Deactivate"), device=d.name)
                            for k, d in enumerate(self.devices) if d.has_struct}
        close_calls = {k: (self.call(d.symbol("Close"), device=d.name), self.call(d.symbol("Destroy"), device=d.name))
                       for k, d in enumerate(self.devices) if d.has_struct}
        free_calls = {d.name: self.call(d.symbol("FreeDataSpace"), device=d.name) for d in self.devices if d.separate}
        calls = ",\n".join(f'  "{_describe(c)}"' for c in self.out.calls) or '  "(no calls)"'
        deactivate = "".join(
            f"  if ({p}_active[{k}]) {{\n    {p}_active[{k}] = 0;\n"
            f"    {p}_keep(&status, {d.symbol('Deactivate')}(devices->{d.c_name}), {deactivate_calls[k]});\n  }}\n"
            for k, d in reversed(list(enumerate(self.devices))) if d.has_struct)
        teardown = ""
        for k, d in reversed(list(enumerate(self.devices))):
            if not d.has_struct:
                continue
            dev = f"devices->{d.c_name}"
            if d.separate:
                teardown += (f"  for (uint32_t i = 0; i < sizeof({p}_{d.c_name}_live); ++i) {{\n"
                             f"    if ({p}_{d.c_name}_live[i]) {{\n      {p}_{d.c_name}_live[i] = 0;\n"
                             f"      {p}_keep(&status, {d.symbol('FreeDataSpace')}({dev}, "
                             f"{p}_{d.c_name}_addr[i]), {free_calls[d.name]});\n    }}\n  }}\n")
            close, destroy = close_calls[k]
            teardown += (f"  if ({p}_stage[{k}] == 2) {p}_keep(&status, {d.symbol('Close')}({dev}), {close});\n"
                         f"  if ({p}_stage[{k}] >= 1) {p}_keep(&status, {d.symbol('Destroy')}({dev}), {destroy});\n"
                         f"  {p}_stage[{k}] = 0;\n")
        state = keep = ""
        if structs:
            state = (f"/* Per device (target order): 0 uninitialised, 1 initialised, 2 open; active between "
                     f"Activate and Deactivate. */\nstatic uint8_t {p}_stage[{n}];\nstatic uint8_t {p}_active[{n}];\n")
            keep = (f"/* Keep the first failing status (and its call); later steps of a teardown still run. */\n"
                    f"static void {p}_keep(int32_t* status, int32_t result, int32_t call) {{\n"
                    f"  if (result != TVMD_OK && *status == TVMD_OK) {{\n    *status = result;\n"
                    f"    {p}_failed = call;\n  }}\n}}\n")
        if slots:
            slots = "/* Separate memories: each block's and each preloaded constant's device address. */\n" + slots
        checks = "".join(f"  if (devices->{d.c_name} == NULL) return {p}_fail_open(-2, TVMD_ERR_INVALID_ARGUMENT, "
                         f"devices);\n" for d in structs)
        device_includes = "".join(f'#include "{h}"\n' for h in includes)
        return f"""/* Generated by tvmdevice: the run function and plan of model {self.name!r}. Do not edit.
 * Target: {self.module.target}
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tvmdevice/c_device_api.h"
{device_includes}#include "{p}.h"
#include "{p}_constants.h"

/* Kernels: the tvmdevice kernel ABI, the device handle last. */
{protos}
{memory_protos}{configure_protos}
{pool_decl}
/* What each numbered call is: tvmgen_{self.m}_last_error() reads it. */
static const char* const {p}_calls[] = {{
{calls}
}};

{state}{slots}static int32_t {p}_failed = -1;
static const char* {p}_invalid = "invalid argument or state (tvmgen_{self.m}_open/run/close)";

const char* {p}_last_error(void) {{
  if ({p}_failed == -1) return NULL;
  if ({p}_failed < 0) return {p}_invalid;
  return {p}_calls[{p}_failed];
}}

{keep}
static int32_t {p}_teardown(struct {p}_devices* devices) {{
  int32_t status = TVMD_OK;
  (void)devices;
{teardown}  return status;
}}

static int32_t {p}_fail_open(int32_t call, int32_t status, struct {p}_devices* devices) {{
  {p}_failed = call;
  if (call >= 0) (void){p}_teardown(devices); /* the open's status is the one to report */
  {p}_failed = call;
  return status;
}}

static int32_t {p}_deactivate(int32_t status, struct {p}_devices* devices) {{
  (void)devices;
{deactivate}  return status;
}}

static int32_t {p}_fail_run(int32_t call, int32_t status, struct {p}_devices* devices) {{
  {p}_failed = call;
  return {p}_deactivate(status, devices);
}}

static uint8_t {p}_opened;
{self._state_flag()}
int32_t {p}_open(struct {p}_devices* devices) {{
  int32_t status = TVMD_OK;
  {p}_failed = -1;
  if ({p}_opened) return {p}_fail_open(-2, TVMD_ERR_INVALID_STATE, devices);
  if (devices == NULL) return {p}_fail_open(-2, TVMD_ERR_INVALID_ARGUMENT, devices);
{checks}{opening}  {p}_opened = 1;
{self._state_pending()}  (void)status;
  return TVMD_OK;
}}

int32_t {p}_run({self._run_params()}) {{
  int32_t status = TVMD_OK;
  {p}_failed = -1;
  if (!{p}_opened) return {p}_fail_run(-2, TVMD_ERR_INVALID_STATE, devices);
  if (inputs == NULL || outputs == NULL || devices == NULL) return {p}_fail_run(-2, TVMD_ERR_INVALID_ARGUMENT, devices);
{pool_init}{inputs}{outputs}{self._state_init()}{activate}{steps}  status = {p}_deactivate(TVMD_OK, devices);
  if (status != TVMD_OK) return status;
{copies_out}  return TVMD_OK;
}}

{self._reset_function()}int32_t {p}_close(struct {p}_devices* devices) {{
  {p}_failed = -1;
  if (!{p}_opened) return TVMD_OK;
  if (devices == NULL) return {p}_fail_open(-2, TVMD_ERR_INVALID_ARGUMENT, devices);
  {p}_opened = 0;
  return {p}_teardown(devices);
}}
"""

    # ------------------------------------------------ operator state (variable tensors)
    def _reset_prototype(self) -> str:
        if not self.module.schedule.states:
            return ""
        return (f"/* Reset the operator state (TFLite variable tensors: LSTM, SVDF) before the next run, as TFLM's\n"
                f" * ResetVariableTensors does; open does it too.  State persists from one run to the next. */\n"
                f"int32_t {self.p}_reset(void);\n\n")

    def _state_flag(self) -> str:
        if not self.module.schedule.states:
            return ""
        return f"static uint8_t {self.p}_state_pending; /* 1: the next run starts from the reset state */\n"

    def _state_pending(self) -> str:
        return f"  {self.p}_state_pending = 1;\n" if self.module.schedule.states else ""

    def _state_init(self) -> str:
        """Run's first lines: the state's reset values, written into the pool when a reset is pending."""
        states = self.module.schedule.states
        if not states:
            return ""
        fills = "".join(f"    memset({self.host_pointer(t)}, {self.graph.tensors[t].reset_value & 0xFF}, "
                        f"{self.graph.tensors[t].nbytes}u); /* tensor {t} */\n" for t in states)
        return f"  if ({self.p}_state_pending) {{\n{fills}    {self.p}_state_pending = 0;\n  }}\n"

    def _reset_function(self) -> str:
        if not self.module.schedule.states:
            return ""
        p = self.p
        return (f"/* The state lives in the host pool (the caller's, with external pools): the next run writes its\n"
                f" * reset values there. */\nint32_t {p}_reset(void) {{\n  {p}_state_pending = 1;\n"
                f"  return TVMD_OK;\n}}\n\n")

    def _run_params(self) -> str:
        p = self.p
        pools = f"struct {p}_workspace_pools* workspace_pools, " if self.external_pools else ""
        return f"struct {p}_inputs* inputs, struct {p}_outputs* outputs, {pools}struct {p}_devices* devices"

    def _pool(self) -> tuple[str, str]:
        p, P = self.p, self.p.upper()
        if self.external_pools:
            init = (f"  if (workspace_pools == NULL || workspace_pools->host_pool == NULL ||\n"
                    f"      ((uintptr_t)workspace_pools->host_pool % {P}_HOST_POOL_ALIGNMENT) != 0)\n"
                    f"    return {p}_fail_run(-2, TVMD_ERR_INVALID_ARGUMENT, devices);\n"
                    f"  uint8_t* const pool = (uint8_t*)workspace_pools->host_pool;\n")
            return "", init
        decl = (f"/* The host pool: activations and scratch, planned statically (no zeroing needed). */\n"
                f"static uint8_t {p}_host_pool[{P}_HOST_POOL_SIZE]\n"
                f"    __attribute__((aligned({POOL_ALIGNMENT}), section(\".bss.noinit.{p}_host_pool\")));\n")
        return decl, f"  uint8_t* const pool = {p}_host_pool;\n"

    def _output_source(self, io: Io) -> str:
        source = self.module.schedule.source(io.tensor)
        if self.graph.tensors[source].is_constant:
            return self.constant(source)
        return self.host_pointer(io.tensor)

    def constants_file(self) -> str:
        p = self.p
        includes = sorted({h for d in self.devices for h in d.headers})
        device_includes = "".join(f'#include "{h}"\n' for h in includes)
        body = "\n".join(self.constants)
        return (f"/* Generated by tvmdevice: constants and operator params of model {self.name!r}. Do not edit.\n"
                f" * Constants: {self.out.constant_bytes:,} bytes; params: {self.out.params_bytes:,} bytes. */\n"
                f"#include <stddef.h>\n#include <stdint.h>\n\n{device_includes}#include \"{p}_constants.h\"\n\n"
                f"{body}")

    def constants_header(self) -> str:
        P = self.p.upper()
        includes = sorted({h for d in self.devices for h in d.headers})
        device_includes = "".join(f'#include "{h}"\n' for h in includes)
        return (f"/* Generated by tvmdevice: declarations of {self.p}_constants.c. Do not edit. */\n"
                f"#ifndef {P}_CONSTANTS_H_\n#define {P}_CONSTANTS_H_\n\n#include <stdint.h>\n\n{device_includes}\n"
                + "\n".join(self.externs) + f"\n\n#endif /* {P}_CONSTANTS_H_ */\n")


def _describe(call: dict) -> str:
    what = call["call"]
    if "operator" in call:
        text = f"{what} (operator #{call['operator']} {call['type']} on {call['device']})"
    elif "tensor" in call:
        text = f"{what} (tensor {call['tensor']} {call['src']} -> {call['dst']}, {call['bytes']} bytes)"
    elif "constant" in call:
        text = f"{what} (constant tensor {call['constant']}, {call['bytes']} bytes)"
    elif "block" in call:
        text = f"{what} (block {call['block']}, {call['bytes']} bytes)"
    else:
        text = f"{what} ({call.get('device', '')})"
    return text.replace("\\", "\\\\").replace('"', '\\"')


def generate(module: "CompiledModule", name: str, devices: list[ExportDevice], *,
             external_pools: bool = False) -> GeneratedModel:
    """The C of ``module`` exported as model ``name``: files keyed by their path in the export."""
    from ..headers import devices_header

    w = _Writer(module, name, devices, external_pools)
    source = w.source()  # first: it names the constants and the calls
    out = w.out
    inc, src = "codegen/host/include", "codegen/host/src"
    out.files[f"{inc}/{w.p}.h"] = w.header()
    out.files[f"{inc}/{w.p}_devices.h"] = devices_header(
        name, [module.target.entries[d.entry].device_type for d in devices if d.has_struct])
    out.files[f"{src}/{w.p}_constants.h"] = w.constants_header()
    out.files[f"{src}/{w.p}_constants.c"] = w.constants_file()
    out.files[f"{src}/{w.p}.c"] = source
    out.pool_bytes = {HOST: module.plan.pools[HOST].size,
                      **{mem: pool.size for mem, pool in module.plan.pools.items() if mem != HOST}}
    return out
