"""Tables and Markdown of the planning views, `fp8check matrix` and `fp8check diff` (fp8check.core.planning.matrix
/ .diff); their JSON is fp8check.core.report.documents'."""

from __future__ import annotations

from rich.markup import escape

from fp8check.cli.render.tables import Column, draw, md_line, say, verdict_line
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
    unknown = _unknown_memory(result)
    lines += ["", f"**{matrix_verdict(result)}**", ""] + ([_unknown_memory_note(unknown), ""] if unknown else [])
    return "\n".join(lines)


def matrix_table(result: matrix.Matrix, console, wide: bool = False) -> None:
    """One row per platform x TP: the kernel(s) a loading cell routes to (one name a line), or `no [n]` with its
    first reason numbered under the table (`wide`: in a column of its own)."""
    reasons: dict[str, int] = {}
    rows = []
    for c in result.cells:
        if c.ok:
            loads = "[green]" + escape("\n".join(c.kernels) or "yes") + "[/green]"
        elif wide:
            loads = "[red]no[/red]"
        else:
            loads = f"[red]no[/red] {escape(f'[{reasons.setdefault(_first_line(c.reason), len(reasons) + 1)}]')}"
        rows.append([escape(c.platform), str(c.tp), loads, escape(_memory_text(c.memory))]
                    + ([escape(_first_line(c.reason)) or "-"] if wide else []))
    say(console, f"[bold]{escape(printable(result.model))}[/bold]")
    say(console, f"where it loads with vLLM {escape(result.vllm)}: every platform x TP cell (memory per rank: "
                 "weights / vLLM's budget)", 2)
    draw(console, [Column("platform", True), Column("TP"), Column("loads with", True),
                   Column("memory per rank"), *([Column("first reason it does not")] if wide else [])], rows)
    for reason, number in reasons.items():
        say(console, f"{escape(f'[{number}]')} {escape(reason or 'refused')}", 2)
    unknown = _unknown_memory(result)
    if unknown:
        say(console, f"[dim]{escape(_unknown_memory_note(unknown))}[/dim]", 2)
    verdict_line(console, result.ok, matrix_verdict(result))


def _unknown_memory(result: matrix.Matrix) -> list[str]:
    """The platforms whose cells read 'weights / ?': a device memory fp8check does not know."""
    return list(dict.fromkeys(c.platform for c in result.cells if c.memory is not None and c.memory.budget is None))


def _unknown_memory_note(platforms: list[str]) -> str:
    return (f"? : the device memory of {', '.join(platforms)} is unknown, so the budget is too; pass "
            f"{memory.DEFAULT_MEMORY_HINT} (the size of yours) to check the fit")


def _memory_text(fit: memory.MemoryFit | None) -> str:
    if fit is None or fit.budget is None:
        return "?" if fit is None else f"{memory.gib(fit.weight_bytes)} / ?"
    return f"{memory.gib(fit.weight_bytes)} / {memory.gib(fit.budget)}" + ("" if fit.fits else " (does not fit)")


def _first_line(text: str | None) -> str:
    """A reason on one line: every run of whitespace (newlines, vLLM's double spaces) one space."""
    return "" if text is None else md_line(printable(" ".join(text.split()), 300))


def diff_markdown(report: diff.DiffReport) -> str:
    lines = [f"### fp8check diff: {md_line(report.model)}", "", diff_verdict(report), "",
             "| module | changes | vLLM " + report.old.name + " | vLLM " + report.new.name + " | responsible |",
             "|---|---|---|---|---|"]
    for c in report.changes:
        cells = [f"`{printable(c.name)}`", ", ".join(c.what), md_line(c.before.text()), md_line(c.after.text()),
                 ", ".join(diff.describe(x) for x in c.changes)]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    before, after = (", ".join(map(str, s)) or "none" for s in report.tp_sizes_ok)
    lines += ["", f"TP sizes that load: {before} ({report.old.name}) -> {after} ({report.new.name})", ""]
    if report.model_errors[0] != report.model_errors[1]:
        lines += [f"- model-level errors with vLLM {profile.name}: {md_line('; '.join(errors)) if errors else 'none'}"
                  for profile, errors in zip((report.old, report.new), report.model_errors)] + [""]
    return "\n".join(lines)


def diff_table(report: diff.DiffReport, console) -> None:
    """One block per kind of change: the modules it moves, their route with each release, and the changes
    responsible (explained under the blocks)."""
    say(console, f"[bold]{escape(printable(report.model))}[/bold]")
    say(console, f"vLLM {escape(report.old.name)} -> {escape(report.new.name)} on {escape(report.platform)}, TP "
                 f"{report.tp}" + (" --ep" if report.ep else ""), 2)
    groups: dict[tuple, list] = {}
    for c in report.changes:
        key = (c.what, c.before.text(), c.after.text(), c.stops_loading,
               ", ".join(diff.describe(x) for x in c.changes))
        groups.setdefault(key, []).append(c)
    for (what, before, after, stops, responsible), changes in groups.items():
        count = sum(c.count for c in changes)
        console.print()
        say(console, f"[bold]{count} module(s): {escape(', '.join(what))} change[/bold]"
                     + (f" ({escape(responsible)})" if responsible else ""))
        for c in changes:
            say(console, escape(printable(c.name)), 2)
        pairs = [(report.old.name, escape(md_line(before))),
                 (report.new.name, f"[red]{escape(md_line(after))}[/red]" if stops else escape(md_line(after)))]
        draw(console, [Column("  vLLM", True), Column("route")], [[f"  {escape(name)}", text] for name, text in pairs])
    console.print()
    for change in sorted({x for c in report.changes for x in c.changes}, key=str):
        entry = change_document(change)
        say(console, f"[dim]{escape(entry['change'])}: {escape(entry['what'])}[/dim]")
    before, after = (", ".join(map(str, s)) or "none" for s in report.tp_sizes_ok)
    say(console, f"TP sizes 1..16 that load: {before} ({report.old.name}) -> {after} ({report.new.name})")
    if report.model_errors[0] != report.model_errors[1]:
        for profile, errors in zip((report.old, report.new), report.model_errors):
            say(console, f"model-level errors with vLLM {profile.name}: "
                         + (escape(md_line("; ".join(errors))) if errors else "none"))
    verdict_line(console, report.ok, diff_verdict(report))
