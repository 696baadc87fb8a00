"""``tvmgen_<model>.c``: the run function and plan of an exported model, put together from the
``emit_*`` pieces (:mod:`.emit_lifecycle`, :mod:`.emit_run`).

Every status is checked and the first failing one returned; ``tvmgen_<model>_last_error()`` names
the failed call from the table of calls, indexed by the calls' symbolic names
(``TVMGEN_<MODEL>_CALL_OP3_DEPTHWISE_CONV_2D``); ``metadata.json`` has the same table.
"""

from __future__ import annotations

from .emit_constants import ConstantTable
from .emit_lifecycle import Teardown, emit_activate, emit_close, emit_deactivate, emit_open, emit_open_steps
from .emit_run import emit_pool, emit_run, emit_state, emit_steps
from .model import Context

__all__ = ["emit_model_source", "describe", "PROFILE_MARKS"]

#: The profiling marks around each call of run (:meth:`.model.Call.marked`): the firmware profiler's
#: with ``TVMD_FW_PROFILE`` (``tvmdevice run DIR --cpu cortex-m55 --profile``), nothing otherwise.
PROFILE_MARKS = ("/* Profiling marks around each call of run: the firmware profiler's when built with TVMD_FW_PROFILE\n"
                 " * (tvmdevice run DIR --cpu ... --profile), nothing otherwise. */\n"
                 "#ifdef TVMD_FW_PROFILE\n#include \"tvmdevice_fw.h\"\n#endif\n"
                 "#ifndef TVMD_FW_MARK\n#define TVMD_FW_MARK(id) ((void)0)\n#endif\n")


def describe(call: dict) -> str:
    """What a numbered call is, as ``last_error`` says it (a C string literal's contents)."""
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


def emit_prototypes(ctx: Context) -> str:
    """The kernels', the separate memories' and the configure functions' prototypes."""
    kernels = "".join(f"int32_t {s}(const void* params, void* const* buffers, void* resource_handle);\n"
                      for s in sorted(ctx.kernels))
    memory = "".join(
        f"int32_t {d.symbol('AllocDataSpace')}({d.struct}* device, uint64_t nbytes, uint64_t alignment, "
        f"uint64_t* out_addr);\n"
        f"int32_t {d.symbol('FreeDataSpace')}({d.struct}* device, uint64_t addr);\n"
        f"int32_t {d.symbol('CopyToDevice')}({d.struct}* device, uint64_t dst, const void* src, uint64_t nbytes);\n"
        f"int32_t {d.symbol('CopyFromDevice')}({d.struct}* device, void* dst, uint64_t src, uint64_t nbytes);\n"
        for d in ctx.devices if d.separate)
    configure = "".join(f"int32_t {d.configure}({d.struct}* device);\n" for d in ctx.structs if d.configure)
    return f"/* Kernels: the tvmdevice kernel ABI, the device handle last. */\n{kernels}{memory}{configure}"


def emit_calls(ctx: Context) -> str:
    """The calls' symbolic names and the table ``last_error`` reads."""
    p, P = ctx.p, ctx.p.upper()
    names = "".join(f"  {name} = {k},\n" for k, name in enumerate(ctx.call_names))
    table = "".join(f'  [{name}] = "{describe(c)}",\n' for name, c in zip(ctx.call_names, ctx.out.calls))
    table = table or '  "(no calls)",\n'
    return (f"/* The numbered calls: {p}_last_error() names the failed one. */\nenum {{\n"
            f"  {P}_CALL_INVALID = -2, /* an invalid argument or state */\n"
            f"  {P}_CALL_NONE = -1, /* no call failed */\n{names}  {P}_NUM_CALLS = {len(ctx.out.calls)}\n}};\n\n"
            f"static const char* const {p}_calls[{max(len(ctx.out.calls), 1)}] = {{\n"
            f"{table}}};\n")


def emit_errors(ctx: Context) -> str:
    """``last_error``, the first-failure keeper and the failure paths of open and run."""
    p, P = ctx.p, ctx.p.upper()
    keep = ""
    if ctx.structs:
        keep = (f"/* Keep the first failing status (and its call); later steps of a teardown still run. */\n"
                f"static void {p}_keep(int32_t* status, int32_t result, int32_t call) {{\n"
                f"  if (result != TVMD_OK && *status == TVMD_OK) {{\n    *status = result;\n"
                f"    {p}_failed = call;\n  }}\n}}\n\n")
    return (f"static int32_t {p}_failed = {P}_CALL_NONE;\n"
            f"static const char* {p}_invalid = \"invalid argument or state ({p}_open/run/close)\";\n\n"
            f"const char* {p}_last_error(void) {{\n  if ({p}_failed == {P}_CALL_NONE) return NULL;\n"
            f"  if ({p}_failed < 0) return {p}_invalid;\n  return {p}_calls[{p}_failed];\n}}\n\n{keep}")


def emit_device_state(ctx: Context) -> str:
    """Each device's stage and active flag, each separate memory's slots and which are live."""
    p, n, text = ctx.p, len(ctx.devices), ""
    if ctx.structs:
        text = (f"/* Per device (target order): 0 uninitialised, 1 initialised, 2 open; active between "
                f"Activate and Deactivate. */\nstatic uint8_t {p}_stage[{n}];\nstatic uint8_t {p}_active[{n}];\n")
    slots = "".join(f"static uint64_t {p}_{d.c_name}_addr[{max(ctx.slots(d).slots, 1)}];\n"
                    f"static uint8_t {p}_{d.c_name}_live[{max(ctx.slots(d).slots, 1)}];\n"
                    for d in ctx.devices if d.separate)
    if slots:
        text += "/* Separate memories: each block's and each preloaded constant's device address. */\n" + slots
    return text


def emit_fail_open(ctx: Context) -> str:
    """Open's failure path: what it opened is torn down, its own status reported."""
    p = ctx.p
    return (f"static int32_t {p}_fail_open(int32_t call, int32_t status, struct {p}_devices* devices) {{\n"
            f"  {p}_failed = call;\n"
            f"  if (call >= 0) (void){p}_teardown(devices); /* the open's status is the one to report */\n"
            f"  {p}_failed = call;\n  return status;\n}}\n")


def emit_fail_run(ctx: Context) -> str:
    """Run's failure path: every active device is deactivated."""
    p = ctx.p
    return (f"static int32_t {p}_fail_run(int32_t call, int32_t status, struct {p}_devices* devices) {{\n"
            f"  {p}_failed = call;\n  return {p}_deactivate(status, devices);\n}}\n")


def emit_model_source(ctx: Context, constants: ConstantTable) -> str:
    """The whole ``tvmgen_<model>.c`` (numbering the calls and naming the constants as it goes)."""
    p = ctx.p
    open_steps = emit_open_steps(ctx, constants)
    steps = emit_steps(ctx, constants)
    pool_decl, pool_init = emit_pool(ctx)
    flag, pending, state_init, reset = emit_state(ctx)
    run = emit_run(ctx, constants, pool_init=pool_init, state_init=state_init, activate=emit_activate(ctx),
                   steps=steps)
    deactivate = emit_deactivate(ctx)
    teardown = Teardown(ctx).emit()
    includes = "".join(f'#include "{h}"\n' for h in sorted({h for d in ctx.devices for h in d.headers}))
    return (f"/* Generated by tvmdevice: the run function and plan of model {ctx.name!r}. Do not edit.\n"
            f" * Target: {ctx.module.target}\n */\n"
            "#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n"
            f"#include \"tvmdevice/c_device_api.h\"\n{includes}#include \"{p}.h\"\n#include \"{p}_constants.h\"\n\n"
            f"{PROFILE_MARKS}\n"
            f"{emit_prototypes(ctx)}\n{pool_decl}\n{emit_calls(ctx)}\n{emit_device_state(ctx)}"
            f"{emit_errors(ctx)}{teardown}\n{emit_fail_open(ctx)}\n{deactivate}\n{emit_fail_run(ctx)}\n"
            f"static uint8_t {p}_opened;\n{flag}\n{emit_open(ctx, open_steps, pending)}\n{run}\n"
            f"{reset}{emit_close(ctx)}")
