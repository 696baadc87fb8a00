"""``tvmdevice eval``: a whole dataset, accuracy and bit-exact agreement, on one process, N workers or Ray."""

from __future__ import annotations

import argparse
import csv
import json
import math
import time
from pathlib import Path
from typing import Any

from .classes import positive_int
from .common import check_model_path, is_export, print_json

#: The exit status of an interrupted evaluation (128 + SIGINT, as a shell reports it).
INTERRUPTED_STATUS = 130

#: ``--reference`` values naming a float model start with it.
PREFIX = "float:"

#: What state each sample of a model with operator state (LSTM, SVDF) starts from, as the summary says it.
STATE_SEQUENCE = ("the samples are one sequence, in order: sample 0 starts from the reset state, each next "
                  "one from the state the sample before left")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "eval", help="run a dataset: accuracy, bit-exact agreement with tflite-micro, a per-sample report",
        description="Run every sample of --data through MODEL on TARGET, with a progress bar, and report top-1 "
                    "(and top-k) accuracy when labels are given and, with --reference tflite-micro, whether each "
                    "sample's outputs equal tflite-micro's bit for bit. Samples: a directory of .npy files (one "
                    "sample each, in sorted file-name order) or a .npz with the inputs stacked in 'x' and labels "
                    "in 'y'. --workers N runs chunks in N local processes; --engine ray runs them as Ray tasks "
                    "(ray.init(): RAY_ADDRESS or a local instance); results are the same, in the same order. "
                    "MODEL may be an export directory: each sample then runs under --cpu (QEMU for Cortex-M). "
                    "A model with state (LSTM, SVDF) takes the samples as one sequence, in order, in one chunk: "
                    "sample 0 from the reset state, each next one from the state the one before left.")
    p.add_argument("model", help=".tflite file or export directory")
    p.add_argument("--target", "-t", help="target string (default: every installed device, host 'c' last)")
    p.add_argument("--data", required=True, metavar="DIR|FILE.npz", help="the dataset")
    p.add_argument("--labels", metavar="L",
                   help="integer class per sample, in sample order: a .npy, or a text file with one integer a "
                        "line (a CSV's last column); default: the .npz's 'y'")
    p.add_argument("--reference", action="append", type=parse_reference, default=[],
                   metavar="tflite-micro|float:MODEL_FLOAT.tflite",
                   help="tflite-micro: check each sample bit for bit against it; float:FILE: run the float model "
                        "FILE (LiteRT) on the dequantized inputs and report per output the SNR, cosine similarity "
                        "and top-1 agreement of the dequantized outputs (both may be given)")
    p.add_argument("--top-k", type=positive_int, default=None, metavar="K",
                   help="also report top-K accuracy, K from 1 to the number of classes (default: 5, or the number "
                        "of classes when fewer; no top-K accuracy when K is the number of classes)")
    p.add_argument("--quantize", action="store_true", help="quantize float samples with the input's scale and "
                                                           "zero point")
    p.add_argument("--reshape", action="store_true", help="reinterpret samples of the right size but another shape")
    p.add_argument("--workers", type=int, default=1, metavar="N", help="local worker processes (default: 1)")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="local processes (default) or Ray tasks (pip install 'tvmdevice[ray]')")
    p.add_argument("--cpu", metavar="CPU", help="for an export: host, cortex-m55, cortex-m4 or cortex-m3")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                   help="for an export: the most one sample's run may take (default: %(default)s)")
    p.add_argument("--report", metavar="FILE",
                   help="per-sample report: .csv, or .jsonl for JSON lines (default: <model>-eval.csv)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def _top(args: argparse.Namespace, out_specs: list[Any]) -> tuple[int, int]:
    """``--top-k`` (checked, or the default capped) and the number of classes."""
    from .classes import DEFAULT_EVAL_TOP_K, check_top_k, class_count

    classes = class_count(out_specs[0].shape)
    k = check_top_k(args.top_k, classes) or min(DEFAULT_EVAL_TOP_K, classes)
    return k, classes


def parse_reference(text: str) -> str:
    """An argparse ``type`` for ``--reference``: ``tflite-micro`` or ``float:PATH``."""
    if text == "tflite-micro" or (text.startswith(PREFIX) and len(text) > len(PREFIX)):
        return text
    raise argparse.ArgumentTypeError(f"{text!r}: choose tflite-micro or float:MODEL_FLOAT.tflite")


def _split_references(values: list[str]) -> tuple[str | None, str | None]:
    """``--reference`` values as (the quantized reference, the float model's path), each at most once."""
    from ..errors import InvalidArgumentError

    quantized = [v for v in values if not v.startswith(PREFIX)]
    floats = [v[len(PREFIX):] for v in values if v.startswith(PREFIX)]
    if len(quantized) > 1 or len(floats) > 1:
        raise InvalidArgumentError("--reference: give tflite-micro and float:FILE at most once each")
    return (quantized[0] if quantized else None), (floats[0] if floats else None)


def _with_float(job: Any, path: str | None, in_specs: list[Any], out_specs: list[Any]) -> Any:
    """``job`` comparing with the float model at ``path`` (checked against the model's inputs and outputs)."""
    import dataclasses

    from .float_reference import read_float_model

    if path is None:
        return job
    return dataclasses.replace(job, float_model=read_float_model(path, in_specs, out_specs),
                               input_specs=tuple(in_specs), output_specs=tuple(out_specs))


def _job(args: argparse.Namespace) -> tuple[Any, list[Any], int]:
    """The job, the input specs and the number of classes, for a model file or an export."""
    from ..errors import InvalidArgumentError
    from .evaluate import EvalJob
    from .inputs import export_specs, graph_specs

    if is_export(args.model):
        from ..export.run import load_metadata
        from .export_cmd import check_cpu

        if args.target:
            raise InvalidArgumentError("--target does not apply to an export (its target is fixed); export again")
        meta = load_metadata(args.model)
        k, classes = _top(args, export_specs(meta["outputs"]))
        model = Path(args.model) / meta["model"] if meta.get("model") else None
        if args.reference and model is None:
            raise InvalidArgumentError("--reference needs the .tflite kept in the export (src/); export again")
        job = EvalJob(model.read_bytes() if model else b"", meta["model_name"], export_dir=str(Path(args.model)),
                      cpu=check_cpu(args.cpu), timeout=args.timeout, reference=args.reference, top=k,
                      stateful=bool(meta.get("stateful")))
        job = _with_float(job, args.float_reference, export_specs(meta["inputs"]), export_specs(meta["outputs"]))
        return job, export_specs(meta["inputs"]), classes
    if args.cpu:
        raise InvalidArgumentError("--cpu evaluates an export: export the model first (tvmdevice export MODEL -t "
                                   "TARGET -o DIR), then tvmdevice eval DIR --cpu ...")
    import tvmdevice

    path = check_model_path(args.model)
    module = tvmdevice.compile(path, args.target, name=path.stem)  # errors surface here, before any worker starts
    k, classes = _top(args, graph_specs(module.graph, module.graph.outputs))
    job = EvalJob(path.read_bytes(), path.stem, target=str(module.target), reference=args.reference, top=k,
                  stateful=bool(module.schedule.states))
    in_specs = graph_specs(module.graph, module.graph.inputs)
    job = _with_float(job, args.float_reference, in_specs, graph_specs(module.graph, module.graph.outputs))
    return job, in_specs, classes


def _rows(results: list[Any], names: list[str], labels: Any, k: int, classes: int) -> list[dict[str, Any]]:
    from .agreement import summarize_float

    rows = []
    for r in results:
        row: dict[str, Any] = {"index": r.index, "name": names[r.index], "top1": r.top[0],
                               f"top{k}": " ".join(map(str, r.top[:k])), "score": r.scores[0]}
        if labels is not None:
            label = int(labels[r.index])
            row.update(label=label, correct=r.top[0] == label)
            if 1 < k < classes:
                row[f"correct_top{k}"] = label in r.top[:k]
        row["bit_exact"] = r.bit_exact
        for o, m in enumerate(r.float_metrics or []):
            one = summarize_float([[m]])[0]
            row.update({f"float_snr_db_{o}": _json_number(one["snr_db"]), f"float_cosine_{o}": one["cosine"],
                        f"float_top1_agree_{o}": m["top1_agree"]})
        if r.instructions is not None:
            row["instructions"] = r.instructions
        row["outputs_sha256"] = r.outputs_sha256
        rows.append(row)
    return rows


def _write_report(path: str, rows: list[dict[str, Any]]) -> None:
    from ..errors import InvalidArgumentError

    try:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            if path.endswith((".jsonl", ".json")):
                fh.writelines(json.dumps(row) + "\n" for row in rows)
            elif rows:  # an interrupted run may have finished none
                writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
    except OSError as exc:
        raise InvalidArgumentError(f"cannot write the report {path!r}: {exc.strerror or exc}") from None


def summarize(rows: list[dict[str, Any]], k: int) -> dict[str, Any]:
    """Accuracy (with labels) and bit-exact agreement (with a reference) over the report's rows."""
    n = len(rows)
    out: dict[str, Any] = {"samples": n}
    if rows and "label" in rows[0]:
        out["top1_accuracy"] = sum(r["correct"] for r in rows) / n
        if f"correct_top{k}" in rows[0]:
            out[f"top{k}_accuracy"] = sum(r[f"correct_top{k}"] for r in rows) / n
    checked = [r for r in rows if r["bit_exact"] is not None]
    if checked:
        exact = sum(1 for r in checked if r["bit_exact"])
        out["bit_exact"] = {"agree": exact, "checked": len(checked),
                            "differ": [r["name"] for r in checked if not r["bit_exact"]]}
    return out


def _float_summary(results: list[Any], path: str) -> dict[str, Any]:
    """Per output over every sample: SNR (dB; "inf" when equal), cosine similarity, top-1 agreement."""
    from .agreement import summarize_float

    outputs = summarize_float([r.float_metrics for r in results])
    for o in outputs:
        o["snr_db"] = _json_number(o["snr_db"])
    return {"model": path, "outputs": outputs}


def _json_number(value: float) -> float | str:
    """``value``, or "inf" / "-inf" (JSON has no infinity; an SNR is infinite when the outputs are equal)."""
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from .classes import check_labels
    from .evaluate import EvalInterrupted, evaluate
    from .inputs import load_dataset, read_labels
    from .output_paths import check_output_file

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    args.reference, args.float_reference = _split_references(args.reference)
    check_output_file(args.report, "--report")  # before any work: a bad path is found now, not after the run
    job, specs, classes = _job(args)
    report = args.report or f"{job.name}-eval.csv"
    check_output_file(report, "--report")
    data = load_dataset(args.data, specs, quantize_floats=args.quantize, reshape=args.reshape)
    labels = read_labels(args.labels, len(data)) if args.labels else data.labels
    if labels is not None:
        check_labels(labels, classes, repr(str(args.labels or args.data)))
    k = job.top
    start = time.perf_counter()
    with Progress(TextColumn("eval"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=console,
                  transient=True) as progress:
        task = progress.add_task("eval", total=len(data))
        try:
            results = evaluate(job, data.inputs, workers=args.workers, engine=args.engine,
                               progress=lambda n: progress.advance(task, n))
            interrupted = False
        except EvalInterrupted as stop:  # Ctrl-C: the samples finished so far still make a report
            results, interrupted = stop.results, True
    seconds = time.perf_counter() - start
    rows = _rows(results, data.names, labels, k, classes)
    _write_report(report, rows)
    summary = {"model": job.name, "target": job.target if job.export_dir is None else f"export on {job.cpu}",
               "engine": args.engine, "workers": args.workers, "seconds": seconds, **summarize(rows, k),
               "report": report}
    if interrupted:
        summary.update(interrupted=True, samples_total=len(data))
    if job.float_model is not None:
        summary["float"] = _float_summary(results, args.float_reference)
    if job.stateful:
        summary["state"] = STATE_SEQUENCE
    status = INTERRUPTED_STATUS if interrupted else 0
    if args.json:
        print_json(summary)
        return status
    print(f"eval {job.name} on {summary['target']}: {len(rows)} samples in {seconds:.1f} s "
          f"({args.engine}, {args.workers} worker(s))")
    if interrupted:
        print(f"  INTERRUPTED (Ctrl-C): {len(rows)} of {len(data)} samples finished; the figures and the report "
              f"are theirs")
    if "top1_accuracy" in summary:
        topk = f", top-{k} {summary[f'top{k}_accuracy']:.2%}" if f"top{k}_accuracy" in summary else ""
        print(f"  accuracy: top-1 {summary['top1_accuracy']:.2%}{topk}")
    else:
        print("  accuracy: no labels (--labels, or 'y' in the .npz)")
    if "bit_exact" in summary:
        b = summary["bit_exact"]
        differ = f"; differ: {', '.join(b['differ'][:10])}" if b["differ"] else ""
        print(f"  bit-exact with {args.reference}: {b['agree']} of {b['checked']} samples{differ}")
    if "float" in summary:
        print(f"  against the float model {summary['float']['model']} (dequantized outputs):")
        for o in summary["float"]["outputs"]:
            print(f"    output {o['output']}: SNR {float(o['snr_db']):.1f} dB, cosine {o['cosine']:.5f}, "
                  f"top-1 agreement {o['top1_agreement']:.2%}")
    if "state" in summary:
        print(f"  state: {summary['state']}")
    print(f"  per-sample report: {report}")
    return status
