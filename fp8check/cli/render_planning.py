"""Tables and Markdown of the planning views, `fp8check matrix` and `fp8check diff` (fp8check.core.planning.matrix
/ .diff); their JSON is fp8check.core.report.documents'."""

from __future__ import annotations

from rich.markup import escape

from fp8check.cli.render_report import folding_table, md_line
from fp8check.core.errors import printable
from fp8check.core.model import memory
from fp8check.core.planning import diff, matrix
from fp8check.core.report.documents import change_document
from fp8check.core.report.verdicts import diff_verdict, matrix_verdict


def matrix_markdown(result: matrix.Matrix) -> str:
    lines = [f"### fp8check matrix: {_first_line(result.model)}", "",
             "| platform | TP | loads | kernel(s) | memory per rank (weights / budget) | first reason it does not |",
             "|---|---|---|---|---|---|"]
    for c in result.cells:
        cells = [c.platform, str(c.tp), "yes" if c.ok else "no", ", ".join(c.kernels) or "-", _memory_text(c.memory),
                 _first_line(c.reason) or "-"]
        lines.append("| " + " | ".join(x.replace("|", "\\|") for x in cells) + " |")
    lines += ["", f"**{matrix_verdict(result)}**", ""]
    return "\n".join(lines)


def matrix_table(result: matrix.Matrix, console) -> None:
    """One row per platform x TP."""
    grid = folding_table("platform", "TP", "loads", "kernel(s)", "memory per rank", "first reason it does not")
    for c in result.cells:
        grid.add_row(escape(c.platform), str(c.tp), "[green]yes[/green]" if c.ok else "[red]no[/red]",
                     escape(", ".join(c.kernels) or "-"), escape(_memory_text(c.memory)),
                     escape(_first_line(c.reason)) or "-")
    console.print(f"[bold]{escape(printable(result.model))}[/bold]  vllm={result.vllm}")
    console.print(grid)
    console.print(("[green]" if result.ok else "[red]") + escape(matrix_verdict(result))
                  + ("[/green]" if result.ok else "[/red]"))


def _memory_text(fit: memory.MemoryFit | None) -> str:
    if fit is None or fit.budget is None:
        return "?" if fit is None else f"{memory.gib(fit.weight_bytes)} / ?"
    return f"{memory.gib(fit.weight_bytes)} / {memory.gib(fit.budget)}" + ("" if fit.fits else " (does not fit)")


def _first_line(text: str | None) -> str:
    return "" if text is None else printable(" ".join(text.split("\n")), 300)


def diff_markdown(report: diff.DiffReport) -> str:
    lines = [f"### fp8check diff: {md_line(report.model)}", "", diff_verdict(report), "",
             "| module | changes | vLLM " + report.old.name + " | vLLM " + report.new.name + " | responsible |",
             "|---|---|---|---|---|"]
    for c in report.changes:
        cells = [f"`{printable(c.name)}`", ", ".join(c.what), md_line(c.before.text()), md_line(c.after.text()),
                 ", ".join(diff.describe(x, report.new) for x in c.changes)]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    before, after = (", ".join(map(str, s)) or "none" for s in report.tp_sizes_ok)
    lines += ["", f"TP sizes that load: {before} ({report.old.name}) -> {after} ({report.new.name})", ""]
    if report.model_errors[0] != report.model_errors[1]:
        lines += [f"- model-level errors with vLLM {profile.name}: {md_line('; '.join(errors)) if errors else 'none'}"
                  for profile, errors in zip((report.old, report.new), report.model_errors)] + [""]
    return "\n".join(lines)


def diff_table(report: diff.DiffReport, console) -> None:
    """Changed modules, the changes responsible explained under the table."""
    grid = folding_table("module", "changes", f"vLLM {report.old.name}", f"vLLM {report.new.name}", "responsible")
    for c in report.changes:
        after = escape(md_line(c.after.text()))
        grid.add_row(escape(printable(c.name)), ", ".join(c.what), escape(md_line(c.before.text())),
                     f"[red]{after}[/red]" if c.stops_loading else after,
                     escape(", ".join(diff.describe(x, report.new) for x in c.changes)))
    console.print(grid)
    for change in sorted({x for c in report.changes for x in c.changes}, key=str):
        entry = change_document(change)
        console.print(f"[dim]{escape(entry['change'])}: {escape(entry['what'])}[/dim]")
    before, after = (", ".join(map(str, s)) or "none" for s in report.tp_sizes_ok)
    console.print(f"TP sizes 1..16 that load: {before} ({report.old.name}) -> {after} ({report.new.name})")
    if report.model_errors[0] != report.model_errors[1]:
        for profile, errors in zip((report.old, report.new), report.model_errors):
            console.print(f"model-level errors with vLLM {profile.name}: "
                          + (escape(md_line("; ".join(errors))) if errors else "none"))
    console.print(("[red]" if not report.ok else "[green]") + escape(diff_verdict(report))
                  + ("[/red]" if not report.ok else "[/green]"))
