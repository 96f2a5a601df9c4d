"""JUnit XML of `inspect` and `load --format junit`, for CI dashboards: one testcase per module, one per kind of
attention layer (the table's collapsed row), one for the model-level checks; a case fails with its first error as
the message. A module fp8check does not judge (verdicts.not_judged_reason) is skipped with the reason, unless
--fail-on not-judged made the reason its failure (fp8check.cli.ci.as_judged)."""

from __future__ import annotations

from typing import NamedTuple
from xml.etree import ElementTree as ET

from fp8check.core.errors import printable
from fp8check.core.formats.frontdoor import readable
from fp8check.core.planning.rows import collapse_attention, collapse_attention_runs
from fp8check.core.records import InspectReport, LoadReport
from fp8check.core.report.verdicts import not_judged_reason


class JUnitCase(NamedTuple):
    name: str
    errors: tuple[str, ...]
    output: str | None = None          # system-out: what routed or ran
    seconds: float | None = None
    skipped: str | None = None         # why fp8check does not judge it; shown only when it has no error


def junit_document(suite_name: str, classname: str, cases: list[JUnitCase]) -> str:
    def clean(text: str) -> str:  # XML 1.0 forbids most control characters; keep newlines readable
        return "\n".join(printable(line, 4000) for line in text.split("\n"))

    failures = str(sum(1 for case in cases if case.errors))
    skipped = str(sum(1 for case in cases if case.skipped and not case.errors))
    suites = ET.Element("testsuites", name="fp8check", tests=str(len(cases)), failures=failures, skipped=skipped)
    suite = ET.SubElement(suites, "testsuite", name=clean(suite_name), tests=str(len(cases)), failures=failures,
                          skipped=skipped)
    for case in cases:
        element = ET.SubElement(suite, "testcase", classname=clean(classname), name=clean(case.name))
        if case.seconds is not None:
            element.set("time", f"{case.seconds:.4f}")
        if case.skipped and not case.errors:
            ET.SubElement(element, "skipped", message=clean(f"not judged: {case.skipped}"))
        if case.output is not None:
            ET.SubElement(element, "system-out").text = clean(case.output)
        if case.errors:  # a printed tuple read out (frontdoor.readable), as the table and Markdown show it
            errors = [readable(error) for error in case.errors]
            ET.SubElement(element, "failure", message=clean(errors[0].replace("\n", " "))).text = clean(
                "\n".join(errors))
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode")


def attention_cases(report: InspectReport) -> list[JUnitCase]:
    """One testcase per collapsed attention row ('model.layers.{0..63}.self_attn.attn'): its KV cache and backend."""
    return [JUnitCase(row.name, row.layer.errors, f"{row.count} layer(s): KV cache {row.layer.kv_cache_dtype} "
                      f"({row.layer.cache_dtype}), {row.layer.kv_method or 'no KV cache method'} -> "
                      f"{row.layer.backend or 'no backend'}") for row in collapse_attention(report.attention)]


def inspect_junit(report: InspectReport) -> str:
    """One testcase per linear module and FusedMoE layer, one per kind of attention layer, plus one for
    model-level checks."""
    cases = [JUnitCase("model", report.errors)] + [
        JUnitCase(layer.name, layer.errors, _route(layer), skipped=not_judged_reason(layer, report))
        for layer in report.layers + report.moes] + attention_cases(report)
    return junit_document(f"fp8check inspect {_target(report)}", report.model, cases)


def _target(report: InspectReport) -> str:
    return f"{report.model} on {report.platform.label}, TP={report.tp}, vLLM {report.profile.vllm}"


def _route(layer) -> str:
    """'scheme -> kernel'; a layer vLLM leaves unquantized has no FP8 kernel to choose, which is not a failure."""
    if layer.kernel:
        return f"{layer.scheme} -> {layer.kernel}"
    if layer.errors:
        return f"{layer.scheme} -> no kernel"
    return layer.scheme + (" (unquantized: no FP8 kernel)" if layer.scheme.startswith("Unquantized") else "")


def load_junit(report: LoadReport) -> str:
    """One testcase per selected module (failures carry the reasons), one per FusedMoE layer (its run, or inspect's
    findings when --layers left it out), one per kind of attention layer (its KV cache round trips, or inspect's
    findings when none ran) and one for model-level checks."""
    inspected = report.inspect
    reasons = {row.name: not_judged_reason(row, inspected) for row in inspected.layers + inspected.moes}

    def ran(run) -> JUnitCase:
        figures = f" rel_error={run.rel_error:.3g} bound={run.bound:.3g}" if run.rel_error is not None else ""
        kernel = f"{run.kernel} -> " if run.kernel else ""  # an unquantized layer: what ran says it
        return JUnitCase(run.name, run.errors, f"{kernel}{run.execution or run.status}{figures}",
                         (run.ms or 0) / 1000, reasons.get(run.name))

    moe_runs = {run.name: run for run in report.moe_runs}
    cases = ([JUnitCase("model", inspected.errors)] + [ran(run) for run in report.runs]
             + [ran(moe_runs[moe.name]) if moe.name in moe_runs
                else JUnitCase(moe.name, moe.errors, skipped=reasons[moe.name]) for moe in inspected.moes]
             + (_kv_cases(report) if report.attention_runs else attention_cases(report.inspect)))
    return junit_document(f"fp8check load {_target(inspected)}, run on {report.device}", inspected.model, cases)


def _kv_cases(report: LoadReport) -> list[JUnitCase]:
    """One testcase per collapsed row of KV cache round trips: every run's errors, the worst K and V errors."""
    cases = []
    for row in collapse_attention_runs(report.attention_runs):
        first = row.runs[0]
        errors = tuple(dict.fromkeys(e for run in row.runs for e in run.errors))
        judged = [run for run in row.runs if run.k_error is not None and run.v_error is not None]
        figures = (f" k_error={max(r.k_error for r in judged):.3g} v_error={max(r.v_error for r in judged):.3g}"
                   f" bound={first.bound:.3g}" if judged and first.bound is not None else "")
        cases.append(JUnitCase(row.name, errors, f"{len(row.runs)} layer(s): KV cache {first.kv_cache_dtype} "
                               f"({first.cache_dtype}) -> {first.status}{figures}"))
    return cases
