"""What ``tvmdevice info`` reports about a compiled model, without running it.

Inputs and outputs (dtype, shape, scale, zero point), each operator with its
tensors, its device, the devices that declined it and why, its kernel and
scratch, and its multiply-accumulates; the memory plan per pool, and every
buffer's pool, offset, size and first and last operator.

MACs count what the arithmetic-heavy operators do per inference: CONV_2D
``out_elements * kh * kw * in_channels``, DEPTHWISE_CONV_2D
``out_elements * kh * kw``, FULLY_CONNECTED ``out_elements * in_depth``,
MUL one per output element.  Other operators count 0 (they move, compare or
add rather than multiply).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .inputs import graph_specs

if TYPE_CHECKING:  # pragma: no cover
    from ..aot.compiler import CompiledModule
    from ..ir import Graph, Operator

__all__ = ["macs", "model_info", "format_info"]


def macs(graph: "Graph", op: "Operator") -> int:
    """Multiply-accumulates ``op`` performs per inference (see the module docstring)."""
    out = graph.tensors[op.outputs[0]]
    out_elements = int(np.prod(out.shape, dtype=np.int64))
    if op.type == "CONV_2D":
        _, kh, kw, cin = graph.tensors[op.inputs[1]].shape
        return out_elements * kh * kw * cin
    if op.type == "DEPTHWISE_CONV_2D":
        _, kh, kw, _ = graph.tensors[op.inputs[1]].shape
        return out_elements * kh * kw
    if op.type == "FULLY_CONNECTED":
        return out_elements * graph.tensors[op.inputs[1]].shape[-1]
    if op.type == "MUL":
        return out_elements
    return 0


def _spec_json(spec: Any) -> dict[str, Any]:
    return {"name": spec.name, "dtype": spec.dtype.name, "shape": list(spec.shape), "scale": spec.scale,
            "zero_point": spec.zero_point}


def model_info(module: "CompiledModule") -> dict[str, Any]:
    """The report as JSON-ready data (``tvmdevice info --json``)."""
    graph, placement = module.graph, module.placement
    ops = []
    for op, p in zip(graph.operators, placement.ops):
        ops.append({
            "index": op.index, "type": op.type,
            "inputs": [list(graph.tensors[i].shape) for i in op.inputs if i >= 0],
            "outputs": [list(graph.tensors[i].shape) for i in op.outputs],
            "device": p.device if p.partition is not None or not p.is_view else None, "view": p.is_alias,
            "folded_into": p.fold.conv if p.is_folded and p.fold is not None else None,
            "partition": p.partition.index if p.partition is not None else None,
            "kernel": p.call.name if p.call is not None else None,
            "scratch_bytes": p.call.scratch_bytes if p.call is not None else 0,
            "declined": [{"device": d, "reason": r} for d, r in p.declined],
            "macs": macs(graph, op),
        })
    return {
        "model": graph.name,
        "target": str(module.target),
        "inputs": [_spec_json(s) for s in graph_specs(graph, graph.inputs)],
        "outputs": [_spec_json(s) for s in graph_specs(graph, graph.outputs)],
        "operators": ops,
        "operators_per_device": dict(placement.summary),
        "partitions": placement.to_json()["partitions"],
        "macs": sum(o["macs"] for o in ops),
        "memory": module.plan.to_json(),
        "buffers": [a.to_json() for a in module.plan.allocations()],
    }


def format_info(info: dict[str, Any]) -> list[str]:
    """The report as text lines."""
    lines = [f"model {info['model']}: {len(info['operators'])} operators, {info['macs']:,} MACs per inference; "
             f"target {info['target']}"]
    for kind in ("inputs", "outputs"):
        for k, t in enumerate(info[kind]):
            q = f", scale {t['scale']:.6g}, zero point {t['zero_point']}" if t["scale"] is not None else ""
            lines.append(f"{kind[:-1]} {k} {t['name']!r}: {t['dtype']} {tuple(t['shape'])}{q}")
    lines.append("operators:")
    width = max((len(o["type"]) for o in info["operators"]), default=0)
    for o in info["operators"]:
        shapes = " x ".join(str(tuple(s)) for s in o["inputs"][:1]) + f" -> {tuple(o['outputs'][0])}"
        where = "view (aliases its input, no kernel)" if o["view"] else f"{o['device']} ({o['kernel']})"
        if o.get("folded_into") is not None:
            where = f"folded into #{o['folded_into']}'s convolution window (no kernel, no padded tensor)"
        elif o.get("partition") is not None:
            where = f"{o['device']}, partition {o['partition']}"
        scratch = f", scratch {o['scratch_bytes']:,} B" if o["scratch_bytes"] else ""
        mac = f"{o['macs']:>12,} MACs" if o["macs"] else f"{'':>17}"
        lines.append(f"  #{o['index']:<3} {o['type']:<{width}} {mac}  {shapes:<36} -> {where}{scratch}")
        for d in o["declined"]:
            lines.append(f"        declined by {d['device']}: {d['reason']}")
    counts = ", ".join(f"{d}: {n}" for d, n in info["operators_per_device"].items())
    lines.append(f"operators per device: {counts}")
    for part in info.get("partitions", []):
        ops = part["ops"]
        lines.append(f"partition {part['index']} on {part['device']}: operators #{ops[0]}-#{ops[-1]} "
                     f"({len(ops)}), one call {part['kernel']}, scratch {part['scratch_bytes']:,} B")
        for key, value in part["details"].items():
            shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else f"{value}"
            lines.append(f"    {key.replace('_', ' ')}: {shown}")
    lines.append("memory per pool:")
    for name, pool in info["memory"].items():
        params = f", kernel params {pool['params']:,} B" if pool.get("params") else ""
        lines.append(f"  {name}: {pool['ram']:,} B RAM = activations {pool['activations']:,} B + scratch "
                     f"{pool['scratch']:,} B (largest call {pool['largest_scratch']:,} B); constants "
                     f"{pool['constants']:,} B{params}")
    return lines
