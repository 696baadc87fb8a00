"""cmsis-nn on the microcontroller: instructions, MACs per instruction, flash and RAM, beside TFLM + CMSIS-NN.

Each shared model is compiled for ``cmsis-nn -mcpu=<cpu>, c`` (weights packed for that CPU), exported,
built and run under QEMU on Cortex-M55 (Helium), M4 (DSP) and M3 (plain C): one warm inference's
executed instructions, bit-exactness against tflite-micro, flash (code, the kernels' and run function's
code, constants + params) and RAM (the planned pools).  Then every cmsis-nn operator of the models runs
alone in a small program (the generated run function's sequence: Activate, the kernel, Deactivate) with
the kernel call as the measured region: its instructions, its MACs per instruction by operator class,
and its output against the host's plain C kernel.  The anchor is TFLM + CMSIS-NN (``mcu_anchor.py``).
The built shapes of ``built_models.py`` (the ResNet-8 block with its 3-channel stem, the MobileNetV1 block,
the MobileNetV2 224 stem) run operator by operator the same way on Cortex-M55 and M4 (no anchor: MACs per
instruction, one line per operator).

    TVMDEVICE_MODELS_DIR=../shared/models python bench/bench_mcu.py [--cpus cortex-m55,cortex-m4,cortex-m3]
        [--no-operators] [--no-built] [--json] [--save]

``--save`` writes bench/figures/mcu_models.json, mcu_operator_classes.json and mcu_built_operators.json,
which ``bench/figures.py --update`` renders into plugins/cmsis/README.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import figures
import numpy as np
from bench_memory import models_folder
from built_models import BUILT
from mcu_tables import PARITY, built_operator_table, model_table, operator_class_table
from rich.progress import Progress
from tvmdevice_cmsis.mcu_anchor import ANCHOR, KERNEL_CODE_LIMIT, ratio_bound
from tvmdevice_cmsis.standalone import call_data

import tvmdevice
from tvmdevice import firmware
from tvmdevice.export import run_export
from tvmdevice.export.run import build_export
from tvmdevice.testing.oracle import tflm_run

CPUS = ("cortex-m55", "cortex-m4", "cortex-m3")
#: The CPUs the built shapes' operators run on.
BUILT_CPUS = ("cortex-m55", "cortex-m4")
#: The built shapes measured operator by operator (names in ``built_models.BUILT``).
BUILT_SHAPES = ("resnet8_block", "mobilenet_v1_block", "mobilenet_v2_stem")
# ANCHOR, ratio_bound, KERNEL_CODE_LIMIT: the anchor's figures, kept once in tvmdevice_cmsis.mcu_anchor.


def target_for(cpu: str) -> str:
    """The target that packs cmsis-nn's weights for ``cpu``."""
    return f"cmsis-nn -mcpu={cpu}, c"


# ------------------------------------------------------------------ kernel code
def kernel_code(elf: Path, export: Path) -> int:
    """Bytes of ``.text`` of functions defined in the export's device and codegen sources (debug line info).

    Matched by the source's file name, not its folder: firmware objects are cached across folders, so an
    object's debug info may name the folder it was first compiled in (another export, a test's)."""
    nm = subprocess.run(["arm-none-eabi-nm", "-S", "-l", "--defined-only", str(elf)], capture_output=True,
                        text=True, check=True).stdout
    names = {p.name for root in ("devices", "codegen") for p in (export / root).rglob("*") if p.suffix in (".c", ".h")}
    total = 0
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) < 5 or parts[2].lower() != "t":
            continue
        where = parts[4].rsplit(":", 1)[0]
        if Path(where).name in names:
            total += int(parts[1], 16)
    return total


# ---------------------------------------------------------------- whole models
def measure_model(path: Path, cpus: tuple[str, ...], work: Path) -> list[dict]:
    """One row per CPU: ``path`` exported with its weights packed for that CPU, run under QEMU."""
    model = path.read_bytes()
    rows = []
    for cpu in cpus:
        module = tvmdevice.compile(model, target_for(cpu), name=path.stem)
        out = module.export(work / f"{path.stem}-{cpu}")
        rng = np.random.default_rng(0)
        inputs = [rng.integers(-128, 128, size=module.graph.tensors[t].shape, dtype=np.int8)
                  for t in module.graph.inputs]
        ref = tflm_run(model, inputs)
        run = run_export(out, cpu, inputs)
        j = run.to_json()
        exact = all(np.array_equal(o, ref.output(k).reshape(o.shape)) for k, o in enumerate(run.outputs))
        constants = sum(t.nbytes for t in module.graph.tensors if t.is_constant)
        rows.append({"model": path.stem, "cpu": cpu, "bit_exact": exact, "instructions": j["instructions"],
                     "anchor": ANCHOR.get(path.stem, {}).get(cpu), "flash": j["flash"], "ram_pools": j["ram"]["pools"],
                     "kernel_code": kernel_code(build_export(out, cpu).path, out), "model_constants": constants,
                     "arena": ANCHOR.get(path.stem, {}).get("arena")})
    return rows


# ----------------------------------------------------------- single operators
def op_class(op_type: str, params: dict) -> str:
    """The operator class MACs per instruction are reported by."""
    if op_type == "CONV_2D":
        pointwise = params["filter_h"] == params["filter_w"] == 1 and params["stride_h"] == params["stride_w"] == 1
        return "CONV_2D 1x1" if pointwise and params["pad_h"] == params["pad_w"] == 0 else "CONV_2D"
    return op_type


def operator_program(call, arrays: list) -> str:
    """main(): Init, Open, Activate, the kernel between the region markers, Deactivate; argv[1] gets the output."""
    lines = ['#include <stdio.h>\n#include <stdint.h>\n\n#include "tvmdevice_fw.h"\n',
             '#include "tvm_device_cmsis_nn.h"\n#include "tvmd_cmsis_nn.h"\n\n']
    data, buffers = call_data(call, arrays)
    lines.append(data)
    out = len(arrays) - 1
    lines.append(
        "\nint main(int argc, char** argv) {\n"
        "  static tvm_device_cmsis_nn_t dev;\n"
        "  if (argc != 2) return 2;\n"
        "  if (TVMDeviceCmsisNnInit(&dev) != 0 || TVMDeviceCmsisNnOpen(&dev) != 0) return 3;\n"
        f"  void* const buffers[] = {{{', '.join(buffers)}}};\n"
        "  int32_t status = 0;\n"
        "  for (int warm = 0; warm < 2; warm++) {\n"
        "    if (TVMDeviceCmsisNnActivate(&dev) != 0) return 4;\n"
        "    if (warm) tvmd_fw_region_begin();\n"
        f"    status = {call.name}(&params, buffers, (void*)&dev);\n"
        "    if (warm) tvmd_fw_region_end();\n"
        "    if (TVMDeviceCmsisNnDeactivate(&dev) != 0) return 5;\n"
        "    if (status != 0) return 10 + (int)status;\n"
        "  }\n"
        '  FILE* f = fopen(argv[1], "wb");\n  if (f == NULL) return 7;\n'
        f"  if (fwrite(b{out}, 1, sizeof(b{out}), f) != sizeof(b{out})) return 8;\n  fclose(f);\n"
        "  return TVMDeviceCmsisNnClose(&dev) != 0 || TVMDeviceCmsisNnDestroy(&dev) != 0 ? 9 : 0;\n}\n")
    return "".join(lines)


def _device_sources(cpu: str, work: Path) -> tuple[list[Path], list[Path]]:
    from tvmdevice_cmsis.export import export_sources

    contribution = export_sources({}, cpu)
    include = work / f"include-{cpu}"
    include.mkdir(exist_ok=True)
    for name, text in contribution.headers.items():
        (include / name).write_text(text)
    return list(contribution.sources), [include, *contribution.include_dirs, Path(tvmdevice.get_include()),
                                        Path(firmware.get_include())]


def shape_of(graph, op, values: dict) -> str:
    """An operator's first input and output shapes, and its window and stride when it has one."""
    def dims(t: int) -> str:
        return "x".join(str(d) for d in graph.tensors[t].shape[1:])

    window = (f", {values['filter_h']}x{values['filter_w']} /{values['stride_h']}"
              if "filter_h" in values and "stride_h" in values else "")
    return f"{dims(op.inputs[0])} -> {dims(op.outputs[0])}{window}"


def measure_operators(name: str, model: bytes, cpus: tuple[str, ...], work: Path) -> list[dict]:
    """One row per cmsis-nn operator of ``model`` and CPU: its instructions alone, its MACs, bit-exactness."""
    from tvmdevice_cmsis import kernels

    rows = []
    for cpu in cpus:
        module = tvmdevice.compile(model, target_for(cpu), name=name)
        sources, includes = _device_sources(cpu, work)
        rng = np.random.default_rng(1)
        for op in module.graph.operators:
            call = module.prepared.get(op.index)
            if call is None or not call.name.startswith("tvmd_cmsis_"):
                continue
            arrays = []
            for spec in call.params.buffers:
                if spec.absent:
                    arrays.append(None)
                elif spec.output:
                    arrays.append(np.zeros(spec.shape, dtype=spec.dtype))
                else:
                    t = module.graph.tensors[spec.tensor]
                    arrays.append(np.array(t.data, copy=True).reshape(spec.shape) if t.is_constant else
                                  rng.integers(-128, 128, size=spec.shape).astype(spec.dtype))
            host = [None if a is None else a.copy() for a in arrays]
            kernels.run(call, host)
            folder = work / f"{name}-{cpu}-op{op.index}"
            folder.mkdir()
            (folder / "main.c").write_text(operator_program(call, arrays))
            image = firmware.build([folder / "main.c", *sources], includes, cpu, folder / "build", name="op")
            result = firmware.run(image, ["out.bin"], cwd=folder, timeout=300)
            exact = (folder / "out.bin").read_bytes() == host[-1].tobytes()
            values = call.params.values
            rows.append({"model": name, "cpu": cpu, "operator": op.index, "type": op.type,
                         "shape": shape_of(module.graph, op, values),
                         "class": op_class(op.type, values), "kernel": call.name, "macs": int(values.get("macs", 0)),
                         "instructions": result.region_instructions // max(result.regions, 1),
                         "bit_exact": exact})
    return rows


# ---------------------------------------------------------------------- checks
def missed_targets(rows: list[dict]) -> list[str]:
    """What misses the targets: instructions over PARITY × the anchor on M55/M4, or over a tighter bound the
    tests hold the model to on that CPU (``ratio_bound``), kernel code over 32 KB, a bit difference."""
    missed = []
    for r in rows:
        times = r["instructions"] / r["anchor"] if r["anchor"] else 0.0
        bound = ratio_bound(r["model"], r["cpu"])
        over = ([f"goal: at most {PARITY}×"] if times > PARITY else []) + \
            ([f"the tests' bound: at most {bound}×"] if bound < PARITY and times > bound else [])
        if over:
            missed.append(f"{r['model']} on {r['cpu']}: {times:.2f}× the anchor ({'; '.join(over)})")
        if r["cpu"] == "cortex-m55" and r["kernel_code"] > KERNEL_CODE_LIMIT:
            missed.append(f"{r['model']}: kernel code {r['kernel_code']:,} B on M55")
        if not r["bit_exact"]:
            missed.append(f"{r['model']} on {r['cpu']}: not bit-exact")
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpus", default=",".join(CPUS), help="comma-separated CPUs (default: %(default)s)")
    parser.add_argument("--models", default=",".join(ANCHOR), help="comma-separated models (default: all shared)")
    parser.add_argument("--no-operators", action="store_true", help="skip the per-operator programs")
    parser.add_argument("--no-built", action="store_true",
                        help=f"skip the built shapes ({', '.join(BUILT_SHAPES)}) on {', '.join(BUILT_CPUS)}")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown tables")
    parser.add_argument("--save", action="store_true", help="write the README's Cortex-M figures to bench/figures/")
    args = parser.parse_args(argv)
    cpus = tuple(c.strip() for c in args.cpus.split(",") if c.strip())
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    if args.save and (args.no_operators or args.no_built or cpus != CPUS or names != list(ANCHOR)):
        parser.error("--save keeps the README's whole tables: run every model, CPU, operator and built shape "
                     "(no --cpus, --models, --no-operators or --no-built)")
    folder = models_folder()
    if folder is None:
        return 1
    built_cpus = () if args.no_built or args.no_operators else tuple(c for c in cpus if c in BUILT_CPUS)
    models, operators, built = [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-mcu-") as tmp, Progress(transient=True) as progress:
        steps = len(names) * (1 if args.no_operators else 2) + (len(BUILT_SHAPES) if built_cpus else 0)
        task = progress.add_task("export, build, run", total=steps)
        for name in names:
            path = folder / f"{name}.tflite"
            models += measure_model(path, cpus, Path(tmp))
            progress.advance(task)
            if not args.no_operators:
                operators += measure_operators(name, path.read_bytes(), cpus, Path(tmp))
                progress.advance(task)
        for name in BUILT_SHAPES if built_cpus else ():
            built += measure_operators(name, BUILT[name].build(), built_cpus, Path(tmp))
            progress.advance(task)
    if args.json:
        print(json.dumps({"models": models, "operators": operators, "built": built}, indent=1))
    else:
        print(model_table(models))
        for rows, table in ((operators, operator_class_table), (built, built_operator_table)):
            if rows:
                print(table(rows))
    if args.save:
        for name, rows in (("mcu_models", models), ("mcu_operator_classes", operators), ("mcu_built_operators", built)):
            print(f"saved {figures.save(name, rows)}", file=sys.stderr)
    missed = missed_targets(models) + [f"{r['model']} operator #{r['operator']} on {r['cpu']}: not bit-exact"
                                       for r in operators + built if not r["bit_exact"]]
    for m in missed:
        print(f"missed: {m}", file=sys.stderr)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
