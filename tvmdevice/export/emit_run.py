"""``tvmgen_<model>_run``: the inputs copied into the plan, Activate each device, every step of the
schedule (kernels with their device's handle last, copies between memories), Deactivate each device
(also after a failure), the outputs copied out.  One ``emit_*`` function per part."""

from __future__ import annotations

from ..aot.memory_plan import tensor_key
from ..aot.schedule import HOST, SCRATCH, CopyStep, KernelStep
from ..errors import NotSupportedError
from ..ir import ABSENT
from ..kernel import is_c_kernel
from ..params import ParamsStruct
from .emit_constants import ConstantTable
from .emit_header import run_parameters
from .model import POOL_ALIGNMENT, Context, Io

__all__ = ["emit_steps", "emit_pool", "emit_run", "emit_state"]


def _kernel_symbol(ctx: Context, step: KernelStep) -> str:
    from .._abi import kernel_info

    op = step.call
    call = ctx.module.prepared[op.index]
    if not is_c_kernel(call.kernel) or not (call.params is None or isinstance(call.params, ParamsStruct)):
        raise NotSupportedError(f"operator #{op.index} {op.type} on device {step.device!r} runs a Python kernel "
                                f"({call.name}), which has no C to export; use a device with C kernels for it")
    return kernel_info(call.kernel)[0]


def emit_kernel(ctx: Context, constants: ConstantTable, step: KernelStep) -> str:
    """One kernel call: its buffers (inputs, outputs, scratch), its params, its device's handle."""
    op = step.call
    call = ctx.module.prepared[op.index]
    device = ctx.by_name[step.device]
    symbol = _kernel_symbol(ctx, step)
    params = "NULL" if call.params is None else "&" + constants.params(op.index, call.params)

    def buffer(t: int) -> str:
        is_constant = t != ABSENT and ctx.graph.tensors[t].is_constant and step.memory == HOST
        return ctx.buffer(t, step.memory, constants.constant(t) if is_constant else None)

    buffers = [buffer(t) for t in (*op.inputs, *op.outputs)]
    if step.scratch_bytes:
        buffers.append(ctx.planned((SCRATCH, op.index, step.memory)))
    handle = f"devices->{device.c_name}" if device.has_struct else "NULL"
    named = ctx.call(symbol, f"op{op.index}_{op.type}", operator=op.index, type=op.type, device=step.device)
    ctx.kernels.add(symbol)
    listed = ",\n        ".join(buffers)
    invoke = named.marked(f"    status = {symbol}({params}, buffers, {handle});\n", "    ")
    return (f"  {{ /* #{op.index} {op.type} on {step.device} */\n"
            f"    void* const buffers[] = {{\n        {listed}}};\n"
            f"{invoke}"
            f"    if (status != TVMD_OK) return {ctx.p}_fail_run({named.name}, status, devices);\n  }}\n")


def emit_copy(ctx: Context, step: CopyStep) -> str:
    """One copy between the host pool and a separate memory (the device's Copy{To,From}Device)."""
    t = ctx.graph.tensors[step.tensor]
    to_device = step.dst != HOST
    device = ctx.by_name[step.dst if to_device else step.src]
    addr = ctx.planned(tensor_key(ctx.module.schedule.source(step.tensor), device.name))
    addr = addr.replace("(void*)(uintptr_t)", "")
    host = ctx.host_pointer(step.tensor)
    dev = f"devices->{device.c_name}"
    if to_device:
        fn, args = device.symbol("CopyToDevice"), f"{dev}, {addr}, {host}, {t.nbytes}u"
        label = f"copy_t{step.tensor}_to_{device.c_name}"
    else:
        fn, args = device.symbol("CopyFromDevice"), f"{dev}, {host}, {addr}, {t.nbytes}u"
        label = f"copy_t{step.tensor}_from_{device.c_name}"
    named = ctx.call(fn, label, tensor=step.tensor, src=step.src, dst=step.dst, bytes=t.nbytes)
    return (f"  /* tensor {step.tensor} {step.src} -> {step.dst} */\n"
            + named.marked(f"  status = {fn}({args});\n") +
            f"  if (status != TVMD_OK) return {ctx.p}_fail_run({named.name}, status, devices);\n")


def emit_steps(ctx: Context, constants: ConstantTable) -> str:
    """Every step of the schedule, in order."""
    return "".join(emit_kernel(ctx, constants, s) if isinstance(s, KernelStep) else emit_copy(ctx, s)
                   for s in ctx.module.schedule.steps)


def emit_pool(ctx: Context) -> tuple[str, str]:
    """The host pool: its static definition (none with external pools) and run's ``pool`` pointer."""
    p, P = ctx.p, ctx.p.upper()
    if ctx.external_pools:
        init = (f"  if (workspace_pools == NULL || workspace_pools->host_pool == NULL ||\n"
                f"      ((uintptr_t)workspace_pools->host_pool % {P}_HOST_POOL_ALIGNMENT) != 0)\n"
                f"    return {p}_fail_run({P}_CALL_INVALID, TVMD_ERR_INVALID_ARGUMENT, devices);\n"
                f"  uint8_t* const pool = (uint8_t*)workspace_pools->host_pool;\n")
        return "", init
    decl = (f"/* The host pool: activations and scratch, planned statically (no zeroing needed). */\n"
            f"static uint8_t {p}_host_pool[{P}_HOST_POOL_SIZE]\n"
            f"    __attribute__((aligned({POOL_ALIGNMENT}), section(\".bss.noinit.{p}_host_pool\")));\n")
    return decl, f"  uint8_t* const pool = {p}_host_pool;\n"


def emit_state(ctx: Context) -> tuple[str, str, str, str]:
    """The operator state (TFLite variable tensors): its flag, open's line, run's first lines, the reset
    function; all empty for a model without state."""
    states, p = ctx.module.schedule.states, ctx.p
    if not states:
        return "", "", "", ""
    flag = f"static uint8_t {p}_state_pending; /* 1: the next run starts from the reset state */\n"
    fills = "".join(f"    memset({ctx.host_pointer(t)}, {ctx.graph.tensors[t].reset_value & 0xFF}, "
                    f"{ctx.graph.tensors[t].nbytes}u); /* tensor {t} */\n" for t in states)
    init = f"  if ({p}_state_pending) {{\n{fills}    {p}_state_pending = 0;\n  }}\n"
    reset = (f"/* The state lives in the host pool (the caller's, with external pools): the next run writes its\n"
             f" * reset values there. */\nint32_t {p}_reset(void) {{\n  {p}_state_pending = 1;\n"
             f"  return TVMD_OK;\n}}\n\n")
    return flag, f"  {p}_state_pending = 1;\n", init, reset


def _output_source(ctx: Context, constants: ConstantTable, io: Io) -> str:
    source = ctx.module.schedule.source(io.tensor)
    if ctx.graph.tensors[source].is_constant:
        return constants.constant(source)
    return ctx.host_pointer(io.tensor)


def emit_run(ctx: Context, constants: ConstantTable, *, pool_init: str, state_init: str, activate: str,
             steps: str) -> str:
    """``tvmgen_<model>_run``."""
    p, P = ctx.p, ctx.p.upper()
    invalid = f"{p}_fail_run({P}_CALL_INVALID, TVMD_ERR_INVALID_ARGUMENT, devices)"
    inputs = "".join(f"  if (inputs->{io.member} == NULL) return {invalid};\n" for io in ctx.out.inputs)
    inputs += "".join(f"  memcpy({ctx.host_pointer(io.tensor)}, inputs->{io.member}, {io.macro(p)});\n"
                      for io in ctx.out.inputs)
    outputs = "".join(f"  if (outputs->{io.member} == NULL) return {invalid};\n" for io in ctx.out.outputs)
    copies_out = "".join(f"  memcpy(outputs->{io.member}, {_output_source(ctx, constants, io)}, {io.macro(p)});\n"
                         for io in ctx.out.outputs)
    return (f"int32_t {p}_run({run_parameters(ctx)}) {{\n  int32_t status = TVMD_OK;\n  {p}_failed = {P}_CALL_NONE;\n"
            f"  if (!{p}_opened) return {p}_fail_run({P}_CALL_INVALID, TVMD_ERR_INVALID_STATE, devices);\n"
            f"  if (inputs == NULL || outputs == NULL || devices == NULL) return {invalid};\n"
            f"{pool_init}{inputs}{outputs}{state_init}{activate}{steps}"
            f"  status = {p}_deactivate(TVMD_OK, devices);\n  if (status != TVMD_OK) return status;\n"
            f"{copies_out}  return TVMD_OK;\n}}\n")
