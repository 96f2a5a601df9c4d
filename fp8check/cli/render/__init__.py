"""The reports for people, as rich tables and Markdown (their JSON and JUnit are fp8check.core.report's): one module
per command family (inspect; load and crosscheck; planning; reference) over `tables`, what they share. `table` and
`markdown` draw an inspect or a load report, whichever command made it."""

from __future__ import annotations

from rich.console import Console

from fp8check.cli.render.inspect import inspect_markdown, inspect_table
from fp8check.cli.render.load import load_markdown, load_table
from fp8check.core.checkpoint.local import FetchStats
from fp8check.core.records import InspectReport, LoadReport


def table(report: InspectReport | LoadReport, console: Console, verbose: bool, fetch: FetchStats | None = None,
          wide: bool = False, fail_on: str = "error") -> None:
    """The table of an inspect or a load report; `fail_on`: --fail-on, whose warnings and modules not judged fail
    the run under warning / not-judged (shown as they are, and the verdict says so)."""
    (load_table if isinstance(report, LoadReport) else inspect_table)(report, console, verbose, fetch, wide, fail_on)


def markdown(report: InspectReport | LoadReport, fail_on: str = "error") -> str:
    """The Markdown of an inspect or a load report: --format markdown, --output of a table, the step summary."""
    return (load_markdown if isinstance(report, LoadReport) else inspect_markdown)(report, fail_on)
