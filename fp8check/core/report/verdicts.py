"""The one-line answer of every command that judges a checkpoint: inspect, load (with its status counts), matrix
and diff. Tables, Markdown and the JSON documents all print these same lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fp8check.core.records import InspectReport, LoadReport
from fp8check.core.routing.warnings import all_warnings

if TYPE_CHECKING:  # annotations only
    from fp8check.core.planning.diff import DiffReport
    from fp8check.core.planning.matrix import Matrix


def not_judged(report: InspectReport) -> list:
    """Layers and FusedMoE layers vLLM quantizes with a method fp8check does not model (no kernel, no error)."""
    return [row for row in report.layers + report.moes
            if row.ok and row.kernel is None and not row.scheme.startswith("Unquantized")]


def inspect_verdict(report: InspectReport) -> str:
    bad = [layer for layer in report.layers if not layer.ok]
    where = f"{report.platform.label}, TP={report.tp}, vLLM {report.profile.vllm}"
    if report.ok:
        quantized = sum(1 for layer in report.layers if layer.kernel)
        kernels = sorted({layer.kernel for layer in report.layers if layer.kernel})
        text = f"OK: {len(report.layers)} linear modules route on {where}"
        if kernels:
            text += f" ({quantized} FP8 via {', '.join(kernels)})"
        if report.moes:
            backends = sorted({m.kernel for m in report.moes if m.kernel})
            text += f"; {len(report.moes)} FusedMoE" + (f" via {', '.join(backends)}" if backends else "")
        unjudged = not_judged(report)
        if unjudged:
            text += (f"; {len(unjudged)} not judged ({', '.join(sorted({r.scheme for r in unjudged}))}: a method "
                     "fp8check names but does not model, see the notes)")
        warned = len(all_warnings(report))
        return text + (f"; {warned} warning(s) (--fail-on warning fails on them)" if warned else "")
    parts = []
    if bad:
        parts.append(f"{len(bad)} of {len(report.layers)} linear modules fail")
    bad_moes = [m for m in report.moes if not m.ok]
    if bad_moes:
        parts.append(f"{len(bad_moes)} of {len(report.moes)} FusedMoE fail")
    if report.errors:
        parts.append(f"{len(report.errors)} model-level error(s)")
    return f"FAIL: {' and '.join(parts)} on {where}"


def load_summary(report: LoadReport) -> dict[str, int]:
    """Statuses of every linear module and FusedMoE layer load selected."""
    counts = {"ok": 0, "warn": 0, "FAIL": 0, "not run": 0}
    for run in report.runs + report.moe_runs:
        counts[run.status] += 1
    return counts


def load_verdict(report: LoadReport) -> str:
    counts = load_summary(report)
    where = (f"{report.inspect.platform.label}, TP={report.inspect.tp}, vLLM {report.inspect.profile.vllm}, "
             f"arithmetic on {report.device}")
    emulated = sum(1 for run in report.runs + report.moe_runs if run.emulated)
    said = f"; {emulated} emulated" if emulated else ""
    experts = sum(len(run.experts_run) for run in report.moe_runs)
    moes = f" (of them {len(report.moe_runs)} FusedMoE layers, {experts} experts)" if report.moe_runs else ""
    if report.ok:
        warned = f", {counts['warn']} with warnings" if counts["warn"] else ""
        return (f"OK: {counts['ok'] + counts['warn']} modules{moes} ran and agree with their fp32 reference{warned} "
                f"({where}{said})")
    ran = {run.name for run in report.moe_runs}
    bad_moes = sum(1 for moe in report.inspect.moes if not moe.ok and moe.name not in ran)
    parts = [f"{counts['FAIL']} failed" if counts["FAIL"] else "", f"{counts['not run']} not run" if counts["not run"] else "",
             f"{len(report.inspect.errors)} model-level error(s)" if report.inspect.errors else "",
             f"{bad_moes} FusedMoE layer(s) vLLM would refuse" if bad_moes else ""]
    total = len(report.runs) + len(report.moe_runs)
    return f"FAIL: {', '.join(p for p in parts if p)} of {total} modules{moes} ({where}{said})"


def matrix_verdict(result: Matrix) -> str:
    loads = [c for c in result.cells if c.ok]
    where = ", ".join(f"{c.platform} TP {c.tp}" for c in loads)
    if loads:
        return f"OK: {len(loads)} of {len(result.cells)} platform x TP cells load (vLLM {result.vllm}): {where}"
    return f"FAIL: none of {len(result.cells)} platform x TP cells loads (vLLM {result.vllm})"


def diff_verdict(report: DiffReport) -> str:
    stops = sum(c.count for c in report.changes if c.stops_loading)
    starts = sum(c.count for c in report.changes if not c.before.loads and c.after.loads)
    moved = sum(c.count for c in report.changes)
    where = f"{report.platform}, TP={report.tp}" + (" --ep" if report.ep else "")
    text = (f"vLLM {report.old.name} -> {report.new.name} on {where}: {moved} module(s) change, "
            f"{report.unchanged} unchanged; {starts} start loading, {stops} stop loading")
    before, after = report.model_errors
    if after and not before:
        text += f"; the model stops loading ({after[0]})"
    elif before and not after:
        text += "; the model starts loading"
    return ("OK: " if report.ok else "FAIL: ") + text
