"""``tvmdevice export``: a model compiled for a target, written as C (TVM's Model Library Format);
and ``tvmdevice run DIR --cpu``: such an export built and run on the host or a Cortex-M under QEMU."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from ..export.sources import EXPORT_CPUS
from ..firmware.cpus import BOARDS, board_cpu
from ..firmware.linker import CONSTANTS_REGIONS

if TYPE_CHECKING:  # pragma: no cover
    from ..export.profile import FirmwareProfile


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export", help="write a model compiled for a target as C for firmware (Model Library Format)",
        description="Compile MODEL for TARGET and write it into DIR as C: tvmgen_<name>.h with open/run/close, "
                    "the plan (static pools, constants and params in flash), each device's portable C, "
                    "metadata.json, a Makefile and a runner for the host and Cortex-M55/M4/M3. "
                    "Then: tvmdevice run DIR --cpu cortex-m55 -i X.npy")
    p.add_argument("model", help=".tflite file")
    p.add_argument("--target", "-t", help="target string, e.g. 'cmsis-nn, c' (default: every installed device)")
    p.add_argument("--output", "-o", required=True, metavar="DIR",
                   help="the export directory (new, empty, or an earlier export, which is replaced)")
    p.add_argument("--name", help="model name in C symbols, tvmgen_<name>_run (default: the file's stem)")
    p.add_argument("--external-pools", action="store_true",
                   help="the caller provides the host pool (struct tvmgen_<name>_workspace_pools)")
    p.add_argument("--mcpu", default=None, metavar="CPU",
                   help="the CPU devices with an -mcpu option pack their weights for when the target leaves it "
                        "empty (default: the --board's CPU, else cortex-m55)")
    p.add_argument("--board", metavar="BOARD",
                   help=f"check the plan against a board's memories before writing ({', '.join(BOARDS)}): flash for "
                        "the constants and params, RAM for the pools, inputs, outputs and stack; over: one line "
                        "saying what and by how much, exit status 2")
    p.add_argument("--flash-kb", type=float, metavar="N",
                   help="check the plan against N KiB of flash (replaces the board's)")
    p.add_argument("--ram-kb", type=float, metavar="N",
                   help="check the plan against N KiB of RAM (replaces the board's)")
    p.add_argument("--constants-region", choices=CONSTANTS_REGIONS, default="flash",
                   help="where the Cortex-M images keep the model's constants: flash with the code (default), or "
                        "external: the board's larger memory (mps3-an547: its 8 MiB QSPI flash; the MPS2 boards "
                        "have none and keep them in their 4 MiB flash)")
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    p.set_defaults(func=export)


def export(args: argparse.Namespace) -> int:
    from rich.console import Console

    from .. import compile as tvm_compile
    from ..export.fit import ModelDoesNotFitError, budget
    from ..export.run import load_metadata
    from ..export.sources import DEFAULT_MCPU
    from ..export.writer import export as write_export

    console = Console(stderr=args.json, highlight=False, soft_wrap=True)
    from .common import check_model_path
    from .output_paths import check_output_dir

    path = check_model_path(args.model)
    check_output_dir(args.output, "-o")
    name = args.name or path.stem
    fits = budget(args.board, args.flash_kb, args.ram_kb)  # an unknown board is refused here, first
    board = board_cpu(args.board).name if args.board else None
    mcpu = args.mcpu or board or DEFAULT_MCPU
    module = tvm_compile(path, args.target, name=name, mcpu=mcpu)  # every choice made here: export only reads
    try:
        with console.status(f"exporting {name} for {module.target}"):
            out = write_export(module, args.output, name=name, external_pools=args.external_pools, mcpu=mcpu,
                               constants_region=args.constants_region, budget=fits)
    except ModelDoesNotFitError as exc:
        print(f"tvmdevice: error: {exc}", file=sys.stderr)
        return 2
    meta = load_metadata(out)
    if args.json:
        json.dump({"directory": str(out), "name": meta["model_name"], "target": meta["target"],
                   "memory": meta["memory"]}, sys.stdout)
        sys.stdout.write("\n")
        return 0
    mem = meta["memory"]
    pools = ", ".join(f"{m} {p['bytes']:,} B" for m, p in mem["pools"].items())
    console.print(f"exported [bold]{name}[/] for {meta['target']} into {out}")
    where = " (external memory)" if args.constants_region == "external" else ""
    console.print(f"  pools: {pools}; constants {mem['constants']:,} B{where}; params {mem['params']:,} B")
    if fits is not None:
        console.print(f"  fits {fits.label} (before code: the link of `tvmdevice run` checks the rest)")
    cpu = board or "cortex-m55"
    console.print(f"  next: tvmdevice run {out} --cpu {cpu}   (or: make -C {out} CPU={cpu})")
    return 0


def run_exported(args: argparse.Namespace, console: Any) -> int:
    """``tvmdevice run DIR``: build the export for ``--cpu`` and run it on the inputs."""
    from ..errors import InvalidArgumentError
    from ..export.run import load_metadata, run_export_frames
    from .classes import check_top_k, class_count
    from .common import output_rows, print_json, samples_from_args, save_outputs
    from .inputs import export_specs
    from .run_cmd import outputs_json, print_outputs

    meta = load_metadata(args.model)
    cpu = check_cpu(args.cpu)
    if getattr(args, "target", None):
        raise InvalidArgumentError(f"--target does not apply to an export (its target is fixed: "
                                   f"{meta['target']}); export again to change it")
    profile = bool(args.profile or args.trace)
    if profile:
        check_profile_cpu(cpu, "--trace" if args.trace and not args.profile else "--profile")
    if args.trace:
        check_writable(args.trace, "--trace")
    out_specs = export_specs(meta["outputs"])
    check_top_k(args.top_k, class_count(out_specs[0].shape))
    samples = samples_from_args(args, export_specs(meta["inputs"]))
    # one process runs every sample in order, one frame each: a model with state carries it from
    # sample to sample as the Python executor and TFLM do (the first from the state open leaves)
    with console.status(f"building and running {meta['model_name']} on {cpu}"):
        last = run_export_frames(args.model, cpu, samples.inputs, timeout=args.timeout * len(samples.inputs),
                                 profile=profile)
    if args.trace and last.profile is not None:
        last.profile.write_chrome_trace(args.trace)
    outputs = [output_rows(frame, out_specs, dequantize=args.dequantize) for frame in last.frames]
    if args.output:
        save_outputs(args.output, outputs, samples.names)
    if args.json:
        extra = {}
        if last.profile is not None:
            extra = {"profile": last.profile.to_json(), "operators": last.profile.operators()}
        partitions = meta.get("placement", {}).get("partitions", [])
        if partitions:  # what each partition's compiler estimated (Vela's NPU cycles...), beside the run's counters
            extra["partitions"] = [{k: part[k] for k in ("index", "device", "ops", "details")} for part in partitions]
        memories = device_memories(meta)
        if memories:
            extra["device_memories"] = memories
        print_json({"model": meta["model_name"], "target": meta["target"], **last.to_json(),
                    **outputs_json(outputs, samples.names, args.top_k), **extra})
        return 0
    j = last.to_json()
    console.print(f"[bold]export[/] {meta['model_name']} ({meta['target']}) on [bold]{cpu}[/]")
    f, r = j["flash"], j["ram"]
    console.print(f"  flash: code {f['code']:,} B, constants {f['constants']:,} B, params {f['params']:,} B, "
                  f"total {f['total']:,} B")
    stack = "n/a on the host" if r["stack"] is None else f"{r['stack']:,} B"
    console.print(f"  RAM: pools {', '.join(f'{m} {b:,} B' for m, b in r['pools'].items())}; static {r['static']:,} B; "
                  f"stack {stack}")
    for device, found in device_memories(meta).items():
        shown = ", ".join(f"{m['name']} {m['bytes']:,} B ({m['section']})" for m in found)
        console.print(f"  {device} memory outside the pools: {shown}")
    if j["instructions"] is not None:
        console.print(f"  instructions per run: {j['instructions']:,}" + (" (profiled build)" if profile else ""))
    if last.profile is not None and args.profile:
        print_profile(console, last.profile)
    print_outputs(console, outputs, samples.names, out_specs, args.top_k)
    if args.trace:
        console.print(f"trace written to {args.trace} (1 us = 1 instruction)")
    return 0


def device_memories(meta: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The buffers each device's C defines outside the planned pools (``StaticMemory``), by device name."""
    return {d["name"]: d["memories"] for d in meta.get("devices", []) if d.get("memories")}


def print_profile(console: Any, profile: "FirmwareProfile") -> None:
    """The measured run's instructions per call, the runtime and the marks (summing to the total), and
    per device."""
    total = max(profile.total, 1)
    console.print(f"profile of the measured run on {profile.cpu} (instructions):")
    for what, device, n in profile.lines():
        console.print(f"  {what:<40} {device:<12} {n:>14,} {100 * n / total:6.2f}%")
    console.print(f"  {'total':<40} {'':<12} {profile.total:>14,}")
    per_device = ", ".join(f"{d} {n:,}" for d, n in profile.per_device().items())
    console.print(f"  per device: {per_device}")


def check_profile_cpu(cpu: str, flag: str) -> None:
    """``--profile``/``--trace`` on an export count instructions under QEMU: a Cortex-M CPU only."""
    from ..errors import InvalidArgumentError

    if cpu == "host":
        arm = ", ".join(c for c in EXPORT_CPUS if c != "host")
        raise InvalidArgumentError(f"{flag} on an export counts instructions under QEMU: add --cpu with one of {arm}")


def check_writable(path: str, flag: str) -> None:
    """Refuse an output path that cannot be written, before any work starts."""
    import os
    from pathlib import Path

    from ..errors import InvalidArgumentError

    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise InvalidArgumentError(f"{flag} {path!r} is a folder: give a file name")
    if not folder.is_dir():
        raise InvalidArgumentError(f"{flag} {path!r}: the folder {str(folder)!r} does not exist")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise InvalidArgumentError(f"{flag} {path!r} cannot be written (permission denied)")


def check_cpu(cpu: str | None) -> str:
    """``--cpu`` checked against the CPUs exports build for (default ``host``), with a did-you-mean."""
    from ..errors import InvalidArgumentError
    from ..suggest import did_you_mean

    cpu = cpu or "host"
    if cpu not in EXPORT_CPUS:
        raise InvalidArgumentError(f"unknown --cpu {cpu!r}{did_you_mean(cpu, EXPORT_CPUS)}; choose one of "
                                   f"{', '.join(EXPORT_CPUS)}")
    return cpu
