"""What a CI step reads beyond the report: the exit codes, the exit code under --fail-on, and which report the
formats show under it (a warning judged as a failure). Printing is fp8check.cli.output's."""

from __future__ import annotations

from fp8check.cli.options import FailOn, Format

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2


def failing_warnings(report, fail_on: FailOn) -> int:
    """How many warnings fail a report that has no error: all of them under --fail-on warning, none otherwise
    (fp8check.core.routing.warnings)."""
    from fp8check.core.routing.warnings import all_warnings

    return len(all_warnings(report)) if report.ok and fail_on is FailOn.warning else 0


def exit_code(report, fail_on: FailOn) -> int:
    """1 when a layer fails; with --fail-on warning also when any warning was raised."""
    return EXIT_FAIL if not report.ok or failing_warnings(report, fail_on) else EXIT_OK


def as_judged(report, fmt: Format, fail_on: FailOn):
    """The report JUnit renders: under --fail-on warning a warning fails its testcase, as the exit code does. The
    table and Markdown show the report as it is (a warning stays a warning; the verdict says why the exit is 1)
    and the JSON keeps `ok` (no error) and the warnings apart: a program reads both."""
    if fmt is not Format.json and fail_on is FailOn.warning:
        from fp8check.core.routing.warnings import warnings_as_failures

        return warnings_as_failures(report)
    return report
