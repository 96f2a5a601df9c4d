"""JUnit XML of `inspect` and `load --format junit`, for CI dashboards: one testcase per module, one for the
model-level checks; a case fails with its first error as the message."""

from __future__ import annotations

from typing import NamedTuple
from xml.etree import ElementTree as ET

from fp8check.core.errors import printable
from fp8check.core.records import InspectReport, LoadReport


class JUnitCase(NamedTuple):
    name: str
    errors: tuple[str, ...]
    output: str | None = None          # system-out: what routed or ran
    seconds: float | None = None


def junit_document(suite_name: str, classname: str, cases: list[JUnitCase]) -> str:
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


def inspect_junit(report: InspectReport) -> str:
    """One testcase per linear module and FusedMoE layer, plus one for model-level checks."""
    cases = [JUnitCase("model", report.errors)] + [
        JUnitCase(layer.name, layer.errors, f"{layer.scheme} -> {layer.kernel or 'no kernel'}")
        for layer in report.layers + report.moes]
    return junit_document(f"fp8check inspect {report.model} on {report.platform.label}, TP={report.tp}, "
                          f"vLLM {report.profile.vllm}", report.model, cases)


def load_junit(report: LoadReport) -> str:
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
