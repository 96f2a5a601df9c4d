"""What a CI step needs beyond the report: the exit code under --fail-on, and GitHub Actions' step summary."""

from __future__ import annotations

import os
import sys

from fp8check.cli.options import FailOn, Format
from fp8check.core.errors import printable
from fp8check.core.records import LoadReport

EXIT_OK, EXIT_FAIL = 0, 1


def exit_code(report, fail_on: FailOn) -> int:
    """1 when a layer fails; with --fail-on warning also when any warning was raised (fp8check.core.routing.warnings)."""
    from fp8check.core.routing.warnings import all_warnings

    if not report.ok:
        return EXIT_FAIL
    if fail_on is FailOn.warning and all_warnings(report):
        print(f"fp8check: failing on {len(all_warnings(report))} warning(s) (--fail-on warning)", file=sys.stderr)
        return EXIT_FAIL
    return EXIT_OK


def as_judged(report, fmt: Format, fail_on: FailOn):
    """What --format renders: under --fail-on warning a warning fails its JUnit testcase and its table or Markdown
    row, and the verdict reads FAIL, as the exit code does. The JSON keeps `ok` (no error) and the warnings apart:
    a program reads both."""
    if fmt is not Format.json and fail_on is FailOn.warning:
        from fp8check.core.routing.warnings import warnings_as_failures

        return warnings_as_failures(report)
    return report


def append_step_summary(report, fail_on: FailOn) -> None:
    """Under GitHub Actions ($GITHUB_STEP_SUMMARY set) append the Markdown summary, whatever --format printed. An
    unwritable file is one warning line on stderr, never a failed run: the summary is a convenience."""
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    from fp8check.cli import render

    report = as_judged(report, Format.markdown, fail_on)
    text = (render.load_markdown if isinstance(report, LoadReport) else render.markdown)(report)
    try:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(text + ("" if text.endswith("\n") else "\n"))
    except OSError as exc:
        print(f"warning: cannot append the step summary to GITHUB_STEP_SUMMARY={printable(path)}: "
              f"{printable(str(exc.strerror or exc))}", file=sys.stderr)
