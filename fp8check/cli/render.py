"""Rendering an InspectReport for people: a rich table and Markdown (JSON is core.report.to_json)."""

from __future__ import annotations

import json

from rich.console import Console
from rich.filesize import decimal
from rich.markup import escape
from rich.table import Table

from fp8check.core.checkpoint import FetchStats
from fp8check.core.errors import printable
from fp8check.core.inspect import InspectReport
from fp8check.core.profiles import PROFILES, PULL_REQUESTS
from fp8check.core.report import collapse, verdict


def _multiline(text: str) -> str:
    """vLLM's messages carry real newlines ('Reasons: \\n...'); keep them, escape everything else."""
    return "\n    ".join(escape(printable(line, 2000)) for line in text.split("\n"))


def _md(text: str) -> str:
    """One Markdown line: newlines folded, control characters escaped."""
    return " ".join(printable(line, 2000) for line in text.split("\n"))


def _status(layer) -> str:
    if layer.errors:
        return "[red]FAIL[/red]"
    if layer.warnings:
        return "[yellow]warn[/yellow]"
    return "[green]ok[/green]"


def fetch_line(fetch: FetchStats) -> str:
    """How a Hub repo's metadata was read: requests, bytes, round trips (or the cache, offline)."""
    where = f"{fetch.repo_id} revision {fetch.revision} = commit {fetch.commit[:12]}"
    if fetch.offline:
        return f"read {where} from the cache {fetch.endpoint} (HF_HUB_OFFLINE): no network, {fetch.seconds:.2f} s"
    return (f"fetched {where} from {fetch.endpoint}: {fetch.requests} requests, {decimal(fetch.bytes_read)} read in "
            f"{fetch.stages} round-trip stages, {fetch.seconds:.2f} s (shard headers {decimal(fetch.header_bytes)} "
            f"of {decimal(fetch.file_bytes)} of files)")


def table(report: InspectReport, console: Console, verbose: bool, fetch: FetchStats | None = None) -> None:
    console.print(f"[bold]{escape(printable(report.model))}[/bold]  quant={report.quant_method or 'none'}  "
                  f"platform={escape(report.platform.label)}  tp={report.tp}  vllm={report.profile.name} "
                  f"({report.profile.vllm})  linear-backend={report.backend.default}"
                  + "".join(f"  {quant}={backend}" for quant, backend in report.backend.per_quant))
    assumptions = report.platform.assumptions
    shown = assumptions.describe() if verbose else assumptions.relevant(report.platform.kind)
    if shown:
        assumed = ", ".join(f"{k}={'yes' if v is True else 'no' if v is False else v}" for k, v in shown.items())
        console.print(f"[dim]assuming {assumed} (change with --assume KEY=VALUE)[/dim]")
    if verbose and fetch is not None:
        console.print(f"[dim]{escape(printable(fetch_line(fetch), 1000))}[/dim]")
    grid = Table(show_lines=False, header_style="bold")
    for column in ("module", "type", "weight", "strategy", "activation", "scheme", "kernel", ""):
        grid.add_column(column, overflow="fold")
    details = []
    for row in collapse(report.layers):
        layer = row.layer
        weight = f"{layer.weight_dtype} {list(layer.shape)}"
        grid.add_row(escape(printable(row.name)), layer.layer_type, weight, layer.strategy or "-",
                     layer.activation or "-", layer.scheme, layer.kernel or "-", _status(layer))
        lines = [f"[red]error:[/red] {_multiline(e)}" for e in layer.errors]
        if verbose:
            lines += [f"rejected {_multiline(r.reason)}" + ("" if r.verified else " [dim](fp8check inference)[/dim]")
                      for r in layer.rejected]
            lines += [f"[yellow]warning:[/yellow] {escape(printable(w, 2000))}" for w in layer.warnings]
            lines += [f"[dim]note: {escape(n)}[/dim]" for n in layer.notes]
        if lines:
            details.append((row.name, lines))
    console.print(grid)
    for name, lines in details:
        console.print(f"[bold]{escape(printable(name))}[/bold]")
        for line in lines:
            console.print(f"  {line}")
    for moe in report.moes:
        console.print(f"[yellow]FusedMoE[/yellow] {escape(printable(moe.name))}: {moe.num_experts} experts "
                      f"({', '.join(moe.weight_dtypes)}) — {moe.note}")
    for error in report.errors:
        console.print(f"[red]error:[/red] {_multiline(error)}")
    for note in report.notes:
        console.print(f"[dim]note: {_multiline(note)}[/dim]")
    sizes = ", ".join(map(str, report.tp_sizes_ok)) or "none"
    console.print(f"TP sizes 1..16 that would load: {sizes}")
    console.print(("[green]" if report.ok else "[red]") + escape(verdict(report)) + ("[/green]" if report.ok else "[/red]"))


def markdown(report: InspectReport) -> str:
    lines = [f"### fp8check: {_md(report.model)}", "",
             f"platform `{report.platform.label}`, TP {report.tp}, vLLM rules {report.profile.name} "
             f"({report.profile.vllm}), linear backend `{report.backend.default}`", "",
             "| module | type | weight | strategy | scheme | kernel | status |", "|---|---|---|---|---|---|---|"]
    for row in collapse(report.layers):
        layer = row.layer
        status = "FAIL: " + _md(layer.errors[0]) if layer.errors else "ok"
        cells = [f"`{printable(row.name)}`", layer.layer_type, f"{layer.weight_dtype} {list(layer.shape)}",
                 layer.strategy or "-", layer.scheme, layer.kernel or "-", status]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines += [""] + [f"- error: {_md(e)}" for e in report.errors]
    lines += [f"TP sizes that would load: {', '.join(map(str, report.tp_sizes_ok)) or 'none'}", "",
              f"**{verdict(report)}**", ""]
    return "\n".join(lines)


def rules_json() -> str:
    return json.dumps({"profiles": [
        {"name": p.name, "vllm": p.vllm, "includes": sorted(p.includes), "summary": p.summary,
         "latest": p is PROFILES[0]}
        for p in PROFILES], "pull_requests": {str(k): v for k, v in PULL_REQUESTS.items()}}, indent=2)


def rules_table(console: Console) -> None:
    grid = Table(header_style="bold")
    for column in ("profile", "vLLM", "upstream PRs reflected", "summary"):
        grid.add_column(column)
    for p in PROFILES:
        grid.add_row(p.name + (" (latest)" if p is PROFILES[0] else ""), p.vllm,
                     " ".join(f"#{pr}" for pr in PULL_REQUESTS if p.has(pr)), p.summary)
    console.print(grid)
    for pr, text in PULL_REQUESTS.items():
        console.print(f"[dim]#{pr}: {escape(text)}[/dim]")
