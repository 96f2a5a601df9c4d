"""What a CI step reads beyond the report: the exit codes, the exit code under --fail-on, and which report the
formats show under it (a warning or a module not judged taken as a failure). Printing is fp8check.cli.output's."""

from __future__ import annotations

from fp8check.cli.options import FailOn, OutputFormat

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2


def failing(report, fail_on: FailOn) -> tuple[int, int]:
    """(warnings, modules not judged) that fail a report with no error under --fail-on: none under error, the
    modules not judged under not-judged, both under warning (fp8check.core.report.verdicts.failing)."""
    from fp8check.core.report.verdicts import failing as counted

    return counted(report, fail_on.value)


def exit_code(report, fail_on: FailOn) -> int:
    """1 when a layer fails; with --fail-on not-judged also when a module is not judged, with warning also when any
    warning was raised."""
    return EXIT_FAIL if not report.ok or any(failing(report, fail_on)) else EXIT_OK


def as_judged(report, fmt: OutputFormat, fail_on: FailOn):
    """The report JUnit renders: under --fail-on not-judged a module not judged fails its testcase, under warning
    a warning does too, as the exit code does. The table and Markdown show the report as it is (a warning stays a
    warning; the verdict says why the exit is 1) and the JSON keeps `ok` (no error), the warnings and `judged`
    apart: a program reads each."""
    if fmt is OutputFormat.json or fail_on is FailOn.error:
        return report
    from fp8check.core.report.verdicts import not_judged_as_failures

    judged = not_judged_as_failures(report)
    if fail_on is FailOn.warning:
        from fp8check.core.routing.warnings import warnings_as_failures

        return warnings_as_failures(judged)
    return judged
