"""`fp8check known-issues`: vLLM's known FP8 failures after selection (fp8check.core.routing.known_issues), as a
table (each entry's releases, target, kernel, severity and workaround, then its symptom and links) or JSON."""

from __future__ import annotations

import typer

from fp8check.cli import options, output
from fp8check.cli.options import TableOrJson

EPILOG = "Exit codes: 0 printed. Example: fp8check known-issues --format json"


def known_issues(fmt: options.TableOrJsonOpt = TableOrJson.table) -> None:
    """List vLLM's known FP8 failures after kernel selection: releases, target, kernel, symptom, issue, workaround.

    Each is a crash users reported with a kernel vLLM did choose (DeepGEMM on SM120, CUTLASS FP8 on A100, ...);
    `--format json` carries every field, the issue and fix links included."""
    from fp8check.core.routing.known_issues import KNOWN_ISSUES, document, releases

    if fmt is TableOrJson.json:
        output.print_document({"known_issues": [document(issue) for issue in KNOWN_ISSUES]}, indent=2)
        return
    from rich.markup import escape

    from fp8check.cli.render.tables import Column, draw, say

    console = output.stdout()
    rows = [[issue.id, releases(issue), escape(issue.capability_text), issue.severity] for issue in KNOWN_ISSUES]
    draw(console, [Column("id", True), Column("vLLM releases"), Column("target"), Column("severity")], rows)
    for issue in KNOWN_ISSUES:
        console.print()
        say(console, f"[bold]{issue.id}[/bold]: {escape(issue.title)}")
        say(console, f"kernel: {' '.join(issue.kernels)}", indent=2)
        say(console, f"vLLM: {escape(issue.symptom)}", indent=2)
        say(console, f"issue: {issue.issue}" + (f"  fix: {issue.fix_pr}" if issue.fix_pr else ""), indent=2)
        say(console, f"workaround: {escape(issue.workaround)}", indent=2)


def register(app: typer.Typer) -> None:
    app.command(epilog=EPILOG)(known_issues)
