"""The device lifecycle of an exported model: open, activate, deactivate, teardown and close.

``tvmgen_<model>_open`` Inits (+ the device's configure function) and Opens each device with a C
struct; a separate memory then gets its blocks and preloaded constants, in the slots binding gives
them (:func:`tvmdevice.aot.bind.device_storage`).  Every failing status returns through a named call
(``<PREFIX>_CALL_<WHAT>``), and after any failure each device stays closable.
"""

from __future__ import annotations

from .devices import ExportDevice
from .emit_constants import ConstantTable
from .model import DEVICE_ALIGNMENT, Call, Context

__all__ = ["emit_open_steps", "emit_activate", "emit_deactivate", "emit_open", "emit_close",
           "Teardown"]


def _check(ctx: Context, call: Call, fail: str = "fail_open") -> str:
    return f"  if (status != TVMD_OK) return {ctx.p}_{fail}({call.name}, status, devices);\n"


def _alloc(ctx: Context, d: ExportDevice, slot: int, size: int, call: Call) -> str:
    return (f"  status = {d.symbol('AllocDataSpace')}(devices->{d.c_name}, {max(size, 1)}u, {DEVICE_ALIGNMENT}u, "
            f"&{ctx.device_address(d, slot)});\n{_check(ctx, call)}"
            f"  {ctx.p}_{d.c_name}_live[{slot}] = 1;\n")


def _device_memory(ctx: Context, constants: ConstantTable, d: ExportDevice) -> str:
    """A separate memory's blocks and preloaded constants, in binding's slots."""
    storage, dev, lines = ctx.slots(d), f"devices->{d.c_name}", []
    upper = d.c_name.upper()
    for b, size in enumerate(storage.blocks):
        call = ctx.call(d.symbol("AllocDataSpace"), f"{upper}_ALLOC_BLOCK{b}", device=d.name, block=b, bytes=size)
        lines.append(_alloc(ctx, d, b, size, call))
    for tensor in storage.constants:
        slot, nbytes = storage.constant_slot(tensor), ctx.graph.tensors[tensor].nbytes
        call = ctx.call(d.symbol("AllocDataSpace"), f"{upper}_ALLOC_CONSTANT{tensor}", device=d.name,
                        constant=tensor, bytes=nbytes)
        lines.append(_alloc(ctx, d, slot, nbytes, call))
        call = ctx.call(d.symbol("CopyToDevice"), f"{upper}_COPY_CONSTANT{tensor}", device=d.name,
                        constant=tensor, bytes=nbytes)
        lines.append(f"  status = {d.symbol('CopyToDevice')}({dev}, {ctx.device_address(d, slot)}, "
                     f"{constants.constant(tensor)}, {nbytes}u);\n{_check(ctx, call)}")
    return "".join(lines)


def emit_open_steps(ctx: Context, constants: ConstantTable) -> str:
    """Open's body after its checks: each device Init, configured, Opened, its memory set up."""
    lines = []
    for k, d in enumerate(ctx.devices):
        if not d.has_struct:
            continue
        upper = d.c_name.upper()
        steps = [("Init", d.symbol("Init")), *([("Configure", d.configure)] if d.configure else []),
                 ("Open", d.symbol("Open"))]
        for what, fn in steps:
            call = ctx.call(fn, f"{upper}_{what}", device=d.name)
            lines.append(f"  status = {fn}(devices->{d.c_name});\n{_check(ctx, call)}")
            if what == "Init":
                lines.append(f"  {ctx.p}_stage[{k}] = 1;\n")
        lines.append(f"  {ctx.p}_stage[{k}] = 2;\n")
        if d.separate:
            lines.append(_device_memory(ctx, constants, d))
    return "".join(lines)


def emit_activate(ctx: Context) -> str:
    """Run's Activate of each device (marked active, so that a failure deactivates it)."""
    lines = []
    for k, d in enumerate(ctx.devices):
        if d.has_struct:
            call = ctx.call(d.symbol("Activate"), f"{d.c_name}_Activate", device=d.name)
            lines.append(call.marked(f"  status = {d.symbol('Activate')}(devices->{d.c_name});\n")
                         + f"{_check(ctx, call, 'fail_run')}  {ctx.p}_active[{k}] = 1;\n")
    return "".join(lines)


def emit_deactivate(ctx: Context) -> str:
    """``tvmgen_<model>_deactivate``: every active device Deactivated, the first failure kept."""
    p, lines = ctx.p, []
    calls = {k: ctx.call(d.symbol("Deactivate"), f"{d.c_name}_Deactivate", device=d.name)
             for k, d in enumerate(ctx.devices) if d.has_struct}
    for k, d in reversed(list(enumerate(ctx.devices))):
        if d.has_struct:
            keep = f"    {p}_keep(&status, {d.symbol('Deactivate')}(devices->{d.c_name}), {calls[k].name});\n"
            lines.append(f"  if ({p}_active[{k}]) {{\n    {p}_active[{k}] = 0;\n{calls[k].marked(keep, '    ')}"
                         f"  }}\n")
    body = "".join(lines) or "  (void)devices; /* no device has a lifecycle */\n"
    return (f"static int32_t {p}_deactivate(int32_t status, struct {p}_devices* devices) {{\n"
            f"{body}  return status;\n}}\n")


class Teardown:
    """``tvmgen_<model>_teardown``: every block freed, each device Closed and Destroyed (its calls are
    numbered when made, after run's)."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.close = {k: (ctx.call(d.symbol("Close"), f"{d.c_name}_Close", device=d.name),
                          ctx.call(d.symbol("Destroy"), f"{d.c_name}_Destroy", device=d.name))
                      for k, d in enumerate(ctx.devices) if d.has_struct}
        self.free = {d.name: ctx.call(d.symbol("FreeDataSpace"), f"{d.c_name}_FreeDataSpace", device=d.name)
                     for d in ctx.devices if d.separate}

    def _device(self, k: int, d: ExportDevice) -> str:
        p, dev, text = self.ctx.p, f"devices->{d.c_name}", ""
        if d.separate:
            live = f"{p}_{d.c_name}_live"
            text += (f"  for (uint32_t i = 0; i < sizeof({live}); ++i) {{\n    if ({live}[i]) {{\n"
                     f"      {live}[i] = 0;\n      {p}_keep(&status, {d.symbol('FreeDataSpace')}({dev}, "
                     f"{p}_{d.c_name}_addr[i]), {self.free[d.name].name});\n    }}\n  }}\n")
        close, destroy = self.close[k]
        return text + (f"  if ({p}_stage[{k}] == 2) {p}_keep(&status, {d.symbol('Close')}({dev}), {close.name});\n"
                       f"  if ({p}_stage[{k}] >= 1) {p}_keep(&status, {d.symbol('Destroy')}({dev}), "
                       f"{destroy.name});\n  {p}_stage[{k}] = 0;\n")

    def emit(self) -> str:
        p = self.ctx.p
        body = "".join(self._device(k, d) for k, d in reversed(list(enumerate(self.ctx.devices))) if d.has_struct)
        body = body or "  (void)devices; /* no device has a lifecycle */\n"
        return (f"static int32_t {p}_teardown(struct {p}_devices* devices) {{\n"
                f"  int32_t status = TVMD_OK;\n{body}  return status;\n}}\n")


def emit_open(ctx: Context, steps: str, state_pending: str) -> str:
    """``tvmgen_<model>_open``."""
    p, P = ctx.p, ctx.p.upper()
    checks = "".join(f"  if (devices->{d.c_name} == NULL) return {p}_fail_open({P}_CALL_INVALID, "
                     f"TVMD_ERR_INVALID_ARGUMENT, devices);\n" for d in ctx.structs)
    status = "  int32_t status = TVMD_OK;\n" if steps else ""
    return (f"int32_t {p}_open(struct {p}_devices* devices) {{\n{status}  {p}_failed = {P}_CALL_NONE;\n"
            f"  if ({p}_opened) return {p}_fail_open({P}_CALL_INVALID, TVMD_ERR_INVALID_STATE, devices);\n"
            f"  if (devices == NULL) return {p}_fail_open({P}_CALL_INVALID, TVMD_ERR_INVALID_ARGUMENT, devices);\n"
            f"{checks}{steps}  {p}_opened = 1;\n{state_pending}  return TVMD_OK;\n}}\n")


def emit_close(ctx: Context) -> str:
    """``tvmgen_<model>_close``."""
    p, P = ctx.p, ctx.p.upper()
    return (f"int32_t {p}_close(struct {p}_devices* devices) {{\n  {p}_failed = {P}_CALL_NONE;\n"
            f"  if (!{p}_opened) return TVMD_OK;\n"
            f"  if (devices == NULL) return {p}_fail_open({P}_CALL_INVALID, TVMD_ERR_INVALID_ARGUMENT, devices);\n"
            f"  {p}_opened = 0;\n  return {p}_teardown(devices);\n}}\n")
