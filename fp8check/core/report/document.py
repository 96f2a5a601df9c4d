"""Report shapes: the stable JSON document (schema_version 1) and the collapsed rows a table shows."""

from __future__ import annotations

from typing import NamedTuple

from fp8check.core.records import InspectReport, LayerReport
from fp8check.core.planning.memory import to_json as memory_json
from fp8check.core.records import MoEReport
from fp8check.core.model.modules import layer_template
from fp8check.core.routing.warnings import all_warnings

SCHEMA_VERSION = 1


def to_json(report: InspectReport) -> dict:
    """One entry per module, never collapsed; names exactly as vLLM names its classes."""
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "inspect",
        "ok": report.ok,
        "model": report.model,
        "platform": report.platform.label,
        "platform_kind": report.platform.kind,
        "capability": report.platform.capability,
        "tp": report.tp,
        "vllm": report.profile.name,
        "vllm_versions": report.profile.vllm,
        "includes": sorted(report.profile.includes),
        "linear_backend": report.backend.default,
        "linear_backend_per_quant": dict(report.backend.per_quant),
        "assumptions": report.platform.assumptions.relevant(report.platform.kind),
        "quant_method": report.quant_method,
        "errors": list(report.errors),
        "warnings": list(report.warnings),
        "notes": list(report.notes),
        "tp_sizes_ok": list(report.tp_sizes_ok),
        "ep": report.ep,
        "tp_sizes_ok_ep": list(report.tp_sizes_ok_ep),
        "layers": [_layer_json(layer) for layer in report.layers],
        "skipped": [{"prefix": s.prefix, "tensors": len(s.tensors), "weight_dtypes": sorted({t.dtype for t in s.tensors}),
                     "reason": s.reason} for s in report.skipped],
        "moe": [_moe_json(m) for m in report.moes],
        "memory": memory_json(report.memory) if report.memory else None,
        "suggestions": [{"kind": s.kind, "text": s.text, "argv": list(s.options)} for s in report.suggestions],
    }


def _layer_json(layer: LayerReport) -> dict:
    return {
        "name": layer.name,
        "type": layer.layer_type,
        "layout": layer.layout,
        "shards": list(layer.shards),
        "weight_dtype": layer.weight_dtype,
        "shape": list(layer.shape),
        "strategy": layer.strategy,
        "activation": layer.activation,
        "scheme": layer.scheme,
        "kernel": layer.kernel,
        "weight_key": layer.weight_key,
        "activation_key": layer.activation_key,
        "rejected": [{"kernel": r.kernel, "reason": r.reason, "verified": r.verified} for r in layer.rejected],
        "errors": list(layer.errors),
        "warnings": list(layer.warnings),
        "notes": list(layer.notes),
    }


def _moe_json(moe: MoEReport) -> dict:
    """A FusedMoE: the linear fields, plus the experts and how ranks hold them."""
    return {**_layer_json(moe), "backend": moe.backend, "num_experts": moe.num_experts,
            "experts_per_rank": moe.experts_per_rank, "ep": moe.ep, "moe_tp": moe.moe_tp,
            "intermediate_per_rank": moe.intermediate_per_rank, "block": list(moe.block) if moe.block else None}


class Row(NamedTuple):
    """Identical layers across decoder blocks, shown once: 'model.layers.{0..63}.mlp.down_proj'."""

    name: str
    count: int
    layer: LayerReport


def collapse(layers: tuple[LayerReport, ...]) -> list[Row]:
    groups: dict[tuple, list[tuple[int | None, LayerReport]]] = {}
    for layer in layers:
        template, index = layer.template
        key = (template, layer.layer_type, layer.weight_dtype, layer.shape, layer.strategy, layer.activation,
               layer.scheme, layer.kernel, layer.rejected, _strip_names(layer))
        groups.setdefault(key, []).append((index, layer))
    rows = []
    for (template, *_), members in groups.items():
        indices = [i for i, _ in members if i is not None]
        name = template.replace("{i}", "{" + ranges(indices) + "}") if indices and len(members) > 1 else members[0][1].name
        rows.append(Row(name=name, count=len(members), layer=members[0][1]))
    return rows


def _strip_names(layer: LayerReport) -> tuple:
    """Errors differ only by layer index across blocks; compare them with the index removed."""
    template, index = layer.template
    if index is None:
        return layer.errors + layer.warnings
    token = f".{index}."
    return tuple(e.replace(token, ".{i}.") for e in layer.errors + layer.warnings)


def ranges(indices: list[int]) -> str:
    """[0,1,2,3,5,7,8] -> '0..3,5,7..8'."""
    out = []
    ordered = sorted(set(indices))
    start = prev = ordered[0]
    for i in ordered[1:] + [None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.append(str(start) if start == prev else f"{start}..{prev}")
        if i is not None:
            start = prev = i
    return ",".join(out)


def verdict(report: InspectReport) -> str:
    """The one-line answer."""
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


class JUnitCase(NamedTuple):
    name: str
    errors: tuple[str, ...]
    output: str | None = None          # system-out: what routed or ran
    seconds: float | None = None


def junit_document(suite_name: str, classname: str, cases: list[JUnitCase]) -> str:
    """JUnit XML for CI dashboards, one testcase per case; a case with errors fails with the first as message."""
    from xml.etree import ElementTree as ET

    from fp8check.core.errors import printable

    def clean(text: str) -> str:  # XML 1.0 forbids most control characters; keep newlines readable
        return "\n".join(printable(line, 4000) for line in text.split("\n"))

    failures = str(sum(1 for case in cases if case.errors))
    suites = ET.Element("testsuites", name="fp8check", tests=str(len(cases)), failures=failures)
    suite = ET.SubElement(suites, "testsuite", name=clean(suite_name), tests=str(len(cases)), failures=failures)
    for case in cases:
        element = ET.SubElement(suite, "testcase", classname=clean(classname), name=clean(case.name))
        if case.seconds is not None:
            element.set("time", f"{case.seconds:.4f}")
        if case.output is not None:
            ET.SubElement(element, "system-out").text = clean(case.output)
        if case.errors:
            ET.SubElement(element, "failure", message=clean(case.errors[0].replace("\n", " "))).text = clean(
                "\n".join(case.errors))
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode")


def to_junit(report: InspectReport) -> str:
    """One testcase per linear module and FusedMoE layer, plus one for model-level checks."""
    cases = [JUnitCase("model", report.errors)] + [
        JUnitCase(layer.name, layer.errors, f"{layer.scheme} -> {layer.kernel or 'no kernel'}")
        for layer in report.layers + report.moes]
    return junit_document(f"fp8check inspect {report.model} on {report.platform.label}, TP={report.tp}, "
                          f"vLLM {report.profile.vllm}", report.model, cases)


# ----------------------------------------------------------------------------------------------------- load

def load_to_json(report) -> dict:
    """inspect's document (same fields, same meaning) plus what `load` ran: a `load` object per layer, null for
    layers --layers did not select, and the run's device, tokens and totals at the top."""
    doc = to_json(report.inspect)
    runs = {run.name: run for run in report.runs}
    for layer in doc["layers"]:
        run = runs.get(layer["name"])
        layer["load"] = None if run is None else {
            "status": run.status, "numerics": run.numerics, "execution": run.execution, "emulated": run.emulated,
            "tokens": run.tokens, "rel_error": run.rel_error, "bound": run.bound,
            "processing_error": run.processing_error, "quant_error": run.quant_error, "ms": run.ms,
            "bytes_read": run.bytes_read, "errors": list(run.errors), "warnings": list(run.warnings),
            "notes": list(run.notes),
            "ranks": [{"rank": r.rank, "bytes_read": r.bytes_read, "ms": r.ms} for r in run.ranks],
        }
        layer["against"] = None if run is None or run.against is None else run.against.as_json()
    moe_runs = {run.name: run for run in report.moe_runs}
    for entry in doc["moe"]:
        entry["load"] = _moe_load_json(moe_runs[entry["name"]]) if entry["name"] in moe_runs else None
    doc.update(command="load", ok=report.ok, device=report.device, device_platform=report.device_platform,
               tokens=report.tokens, seed=report.seed, layers_regex=report.layers_regex,
               bytes_read=report.bytes_read, seconds=round(report.seconds, 3), load_notes=list(report.notes),
               load_summary=load_summary(report), against=report.against)
    return doc


def _moe_load_json(run) -> dict:
    """A FusedMoE's load object: a linear layer's fields (the worst expert's figures) plus every expert run."""
    return {
        "status": run.status, "numerics": run.numerics, "execution": run.execution, "emulated": run.emulated,
        "tokens": run.tokens, "rel_error": run.rel_error, "bound": run.bound, "processing_error": run.processing_error,
        "quant_error": run.quant_error, "ms": run.ms, "bytes_read": run.bytes_read, "errors": list(run.errors),
        "warnings": list(run.warnings), "notes": list(run.notes),
        "ranks": [{"rank": r.rank, "bytes_read": r.bytes_read, "ms": r.ms} for r in run.ranks],
        "num_experts": run.num_experts, "experts_run": list(run.experts_run), "worst_expert": run.worst_expert,
        "experts": [{"expert": e.expert, "status": e.status, "rank": e.rank, "rel_error": e.rel_error,
                     "w13_error": e.w13_error, "w2_error": e.w2_error, "quant_error": e.quant_error,
                     "processing_error": e.processing_error, "bytes_read": e.bytes_read, "ms": e.ms,
                     "errors": list(e.errors), "warnings": list(e.warnings),
                     "against": None if e.against is None else e.against.as_json()} for e in run.experts],
        "against": None if run.against is None else run.against.as_json(),
    }


def load_summary(report) -> dict[str, int]:
    """Statuses of every linear module and FusedMoE layer load selected."""
    counts = {"ok": 0, "warn": 0, "FAIL": 0, "not run": 0}
    for run in report.runs + report.moe_runs:
        counts[run.status] += 1
    return counts


def load_verdict(report) -> str:
    """The one-line answer of a load run."""
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


class RunRow(NamedTuple):
    """Runs of identical layers across decoder blocks, shown once, with their worst figures."""

    name: str
    runs: list


def collapse_runs(runs) -> list[RunRow]:
    groups: dict[tuple, list] = {}
    for run in runs:
        template, index = layer_template(run.name)
        key = (template, run.kernel, run.numerics, run.execution, run.status,
               tuple(e.replace(f".{index}.", ".{i}.") for e in run.errors + run.warnings) if index is not None else run.name)
        groups.setdefault(key, []).append((index, run))
    rows = []
    for (template, *_), members in groups.items():
        indices = [i for i, _ in members if i is not None]
        name = template.replace("{i}", "{" + ranges(indices) + "}") if indices and len(members) > 1 else members[0][1].name
        rows.append(RunRow(name, [run for _, run in members]))
    return rows


def worst(values) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def load_to_junit(report) -> str:
    """One testcase per selected module (failures carry the reasons), one per FusedMoE layer (its run, or inspect's
    findings when --layers left it out) and one for model-level checks."""
    def ran(run) -> JUnitCase:
        figures = f" rel_error={run.rel_error:.3g} bound={run.bound:.3g}" if run.rel_error is not None else ""
        return JUnitCase(run.name, run.errors, f"{run.kernel or '-'} -> {run.execution or run.status}{figures}",
                         (run.ms or 0) / 1000)

    moe_runs = {run.name: run for run in report.moe_runs}
    cases = ([JUnitCase("model", report.inspect.errors)] + [ran(run) for run in report.runs]
             + [ran(moe_runs[moe.name]) if moe.name in moe_runs else JUnitCase(moe.name, moe.errors)
                for moe in report.inspect.moes])
    return junit_document(f"fp8check load {report.inspect.model} on {report.device}", report.inspect.model, cases)
