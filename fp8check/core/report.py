"""Report shapes: the stable JSON document (schema_version 1) and the collapsed rows a table shows."""

from __future__ import annotations

from typing import NamedTuple

from fp8check.core.inspect import InspectReport, LayerReport

SCHEMA_VERSION = 1


def to_json(report: InspectReport) -> dict:
    """One entry per module, never collapsed; names exactly as vLLM names its classes."""
    return {
        "schema_version": SCHEMA_VERSION,
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
        "assumptions": report.platform.assumptions.describe(),
        "quant_method": report.quant_method,
        "errors": list(report.errors),
        "notes": list(report.notes),
        "tp_sizes_ok": list(report.tp_sizes_ok),
        "layers": [_layer_json(layer) for layer in report.layers],
        "moe": [{"name": m.name, "num_experts": m.num_experts, "weight_dtypes": list(m.weight_dtypes), "note": m.note}
                for m in report.moes],
    }


def _layer_json(layer: LayerReport) -> dict:
    return {
        "name": layer.name,
        "type": layer.layer_type,
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
            text += f"; {len(report.moes)} FusedMoE modules not checked"
        return text
    parts = []
    if bad:
        parts.append(f"{len(bad)} of {len(report.layers)} linear modules fail")
    if report.errors:
        parts.append(f"{len(report.errors)} model-level error(s)")
    return f"FAIL: {' and '.join(parts)} on {where}"


def to_junit(report: InspectReport) -> str:
    """JUnit XML for CI dashboards: one testcase per linear module, plus one for model-level checks."""
    from xml.etree import ElementTree as ET

    from fp8check.core.errors import printable

    def clean(text: str) -> str:  # XML 1.0 forbids most control characters; keep newlines readable
        return "\n".join(printable(line, 4000) for line in text.split("\n"))

    cases = [("model", report.errors)] + [(layer.name, layer.errors) for layer in report.layers]
    failures = sum(1 for _, errors in cases if errors)
    suite_name = f"fp8check inspect {report.model} on {report.platform.label}, TP={report.tp}, vLLM {report.profile.vllm}"
    suites = ET.Element("testsuites", name="fp8check", tests=str(len(cases)), failures=str(failures))
    suite = ET.SubElement(suites, "testsuite", name=clean(suite_name), tests=str(len(cases)), failures=str(failures))
    layers_by_name = {layer.name: layer for layer in report.layers}
    for name, errors in cases:
        case = ET.SubElement(suite, "testcase", classname=clean(report.model), name=clean(name))
        layer = layers_by_name.get(name)
        if layer is not None:
            ET.SubElement(case, "system-out").text = clean(f"{layer.scheme} -> {layer.kernel or 'no kernel'}")
        if errors:
            ET.SubElement(case, "failure", message=clean(errors[0].replace("\n", " "))).text = clean("\n".join(errors))
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode")
