"""The reports of inspect, load and crosscheck for people: rich tables and Markdown (their JSON and JUnit are
fp8check.core.report's), and the text helpers the other renderers share."""

from __future__ import annotations

from rich.console import Console
from rich.filesize import decimal
from rich.markup import escape
from rich.table import Table

from fp8check.core.checkpoint.local import FetchStats
from fp8check.core.errors import printable
from fp8check.core.model.memory import summary as memory_summary
from fp8check.core.model.modules import layer_template
from fp8check.core.planning.rows import collapse, collapse_runs, worst
from fp8check.core.records import InspectReport, LoadReport
from fp8check.core.report.verdicts import inspect_verdict, load_verdict


def table(report: InspectReport | LoadReport, console: Console, verbose: bool, fetch: FetchStats | None = None) -> None:
    """The table of an inspect or a load report."""
    (load_table if isinstance(report, LoadReport) else inspect_table)(report, console, verbose, fetch)


def markdown(report: InspectReport | LoadReport) -> str:
    """The Markdown of an inspect or a load report: --format markdown, --output of a table, the step summary."""
    return (load_markdown if isinstance(report, LoadReport) else inspect_markdown)(report)


def folding_table(*columns: str) -> Table:
    """A table with a bold header whose long cells fold rather than get cut."""
    grid = Table(header_style="bold")
    for column in columns:
        grid.add_column(column, overflow="fold")
    return grid


def _multiline(text: str) -> str:
    """vLLM's messages carry real newlines ('Reasons: \\n...'); keep them, escape everything else."""
    return "\n    ".join(escape(printable(line, 2000)) for line in text.split("\n"))


def md_line(text: str) -> str:
    """One Markdown line: newlines folded, control characters escaped."""
    return " ".join(printable(line, 2000) for line in text.split("\n"))


def _print_details(console: Console, details: list[tuple[str, list[str]]]) -> None:
    """Under a table: each row's name, then its errors, warnings and notes, indented."""
    for name, lines in details:
        console.print(f"[bold]{escape(printable(name))}[/bold]")
        for line in lines:
            console.print(f"  {line}")


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


def inspect_table(report: InspectReport, console: Console, verbose: bool, fetch: FetchStats | None = None) -> None:
    console.print(f"[bold]{escape(printable(report.model))}[/bold]  quant={report.quant_method or 'none'}  "
                  f"platform={escape(report.platform.label)}  tp={report.tp}  vllm={report.profile.name} "
                  f"({report.profile.vllm})  linear-backend={report.backend.default}"
                  + "".join(f"  {quant}={backend}" for quant, backend in report.backend.per_quant))
    assumptions = report.platform.assumptions
    shown = assumptions.relevant(report.platform.kind)  # CUDA switches mean nothing on a ROCm target
    if shown:
        assumed = ", ".join(f"{k}={'yes' if v is True else 'no' if v is False else v}" for k, v in shown.items())
        console.print(f"[dim]assuming {assumed} (change with --assume KEY=VALUE)[/dim]")
    if verbose and fetch is not None:
        console.print(f"[dim]{escape(printable(fetch_line(fetch), 1000))}[/dim]")
    grid = folding_table("module", "type", "weight", "strategy", "activation", "scheme", "kernel", "")
    details = []
    for row in collapse(report.layers):
        layer = row.layer
        weight = f"{layer.weight_dtype} {list(layer.shape)}"
        grid.add_row(escape(printable(row.name)), layer.layer_type, weight, layer.strategy or "-",
                     layer.activation or "-", layer.scheme, layer.kernel or "-", _status(layer))
        lines = [f"[red]error:[/red] {_multiline(e)}" for e in layer.errors]
        lines += [f"[yellow]warning:[/yellow] {escape(printable(w, 2000))}" for w in layer.warnings]  # --fail-on
        if verbose:
            lines += [f"rejected {_multiline(r.reason)}" + ("" if r.verified else " [dim](fp8check inference)[/dim]")
                      for r in layer.rejected]
            lines += [f"[dim]note: {escape(n)}[/dim]" for n in layer.notes]
        if lines:
            details.append((row.name, lines))
    console.print(grid)
    _print_details(console, details)
    for skipped in report.skipped:
        console.print(f"[dim]skipped {escape(printable(skipped.prefix))}* ({len(skipped.tensors)} tensors): "
                      f"{escape(skipped.reason)}[/dim]")
    if report.moes:
        _moe_table(report, console, verbose)
    for error in report.errors:
        console.print(f"[red]error:[/red] {_multiline(error)}")
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {_multiline(warning)}")
    for note in report.notes:
        console.print(f"[dim]note: {_multiline(note)}[/dim]")
    if report.memory:
        console.print(escape(memory_summary(report.memory)))
    sizes = ", ".join(map(str, report.tp_sizes_ok)) or "none"
    console.print(f"TP sizes 1..16 that would load: {sizes}")
    if report.moes:
        console.print(f"TP sizes 1..16 that would load with --ep (expert parallel): "
                      f"{', '.join(map(str, report.tp_sizes_ok_ep)) or 'none'}")
    console.print(("[green]" if report.ok else "[red]") + escape(inspect_verdict(report)) + ("[/green]" if report.ok else "[/red]"))
    for suggestion in report.suggestions:
        console.print(f"  [cyan]suggestion:[/cyan] {escape(printable(suggestion.text, 2000))}")


def _moe_table(report: InspectReport, console: Console, verbose: bool) -> None:
    """One row per FusedMoE template: experts, method, the experts class the oracle picked, per-rank sizes."""
    grid = folding_table("FusedMoE", "experts", "w13", "strategy", "method", "backend", "per rank", "")
    details = []
    for row in collapse(report.moes):
        moe = row.layer
        per_rank = f"{moe.experts_per_rank} experts" + (f" (EP {moe.ep})" if moe.ep > 1 else "")
        if moe.intermediate_per_rank is not None:
            per_rank += f", I={moe.intermediate_per_rank}" + (f" block {list(moe.block)}" if moe.block else "")
        grid.add_row(escape(printable(row.name)), str(moe.num_experts), f"{moe.weight_dtype} {list(moe.shape)}",
                     moe.strategy or "-", moe.scheme, moe.kernel or "-", per_rank, _status(moe))
        lines = [f"[red]error:[/red] {_multiline(e)}" for e in moe.errors]
        lines += [f"[dim]note: {escape(printable(n, 2000))}[/dim]" for n in moe.notes]
        lines += [f"[yellow]warning:[/yellow] {escape(printable(w, 2000))}" for w in moe.warnings]  # --fail-on
        if verbose:
            lines += [f"rejected {r.kernel}: {_multiline(r.reason)}"
                      + ("" if r.verified else " [dim](fp8check inference)[/dim]") for r in moe.rejected]
        if lines:
            details.append((row.name, lines))
    console.print(grid)
    _print_details(console, details)


def inspect_markdown(report: InspectReport) -> str:
    lines = [f"### fp8check: {md_line(report.model)}", "",
             f"platform `{report.platform.label}`, TP {report.tp}, vLLM rules {report.profile.name} "
             f"({report.profile.vllm}), linear backend `{report.backend.default}`", "",
             "| module | type | weight | strategy | scheme | kernel | status |", "|---|---|---|---|---|---|---|"]
    for row in collapse(report.layers + report.moes):
        layer = row.layer
        status = ("FAIL: " + md_line(layer.errors[0]) if layer.errors else
                  "warn: " + md_line(layer.warnings[0]) if layer.warnings else "ok")
        cells = [f"`{printable(row.name)}`", layer.layer_type, f"{layer.weight_dtype} {list(layer.shape)}",
                 layer.strategy or "-", layer.scheme, layer.kernel or "-", status]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines += [""] + [f"- error: {md_line(e)}" for e in report.errors] + [f"- warning: {md_line(w)}" for w in report.warnings]
    lines.append(f"TP sizes that would load: {', '.join(map(str, report.tp_sizes_ok)) or 'none'}")
    if report.moes:
        lines.append(f"TP sizes that would load with --ep: {', '.join(map(str, report.tp_sizes_ok_ep)) or 'none'}")
    lines += [md_line(memory_summary(report.memory))] if report.memory else []
    lines += ["", f"**{inspect_verdict(report)}**", ""]
    lines += [f"- suggestion: {md_line(s.text)}" for s in report.suggestions] + ([""] if report.suggestions else [])
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------- load

def _figure(value: float | None, digits: str = ".2e") -> str:
    return "-" if value is None else format(value, digits)


_AGAINST_COLUMNS = ("weight err", "output err")


def _against_cells(report, runs) -> tuple[str, ...]:
    """load --against: the worst weight and output error against BASE over collapsed runs; none without it."""
    if not report.against:
        return ()
    compared = [r.against for r in runs if r.against is not None]
    return (_figure(worst(c.weight_rel_error for c in compared)), _figure(worst(c.output_rel_error for c in compared)))


def _run_status(status: str) -> str:
    return {"ok": "[green]ok[/green]", "warn": "[yellow]warn[/yellow]", "FAIL": "[red]FAIL[/red]"}.get(
        status, "[red]not run[/red]")


def _megabytes(runs) -> str:
    """MB read, per rank under --tp ("0.13 | 0.13"): what each rank read of its own slice, measured."""
    per_rank: dict[int, int] = {}
    for run in runs:
        for figure in run.ranks:
            per_rank[figure.rank] = per_rank.get(figure.rank, 0) + figure.bytes_read
    if per_rank:
        return " | ".join(f"{per_rank[r] / 1e6:.2f}" for r in sorted(per_rank))
    return f"{sum(r.bytes_read for r in runs) / 1e6:.1f}"


def load_table(report: LoadReport, console: Console, verbose: bool, fetch: FetchStats | None = None) -> None:
    """inspect's header, then one row per collapsed module: kernel -> what ran where, errors against the bound."""
    inspected = report.inspect
    console.print(f"[bold]{escape(printable(inspected.model))}[/bold]  quant={inspected.quant_method or 'none'}  "
                  f"platform={escape(inspected.platform.label)}  tp={inspected.tp}  vllm={inspected.profile.name}  "
                  f"device={report.device} ({escape(report.device_platform)})  tokens={report.tokens}  "
                  f"seed={report.seed}" + (f"  against={escape(printable(report.against))}" if report.against else ""))
    if verbose and fetch is not None:
        console.print(f"[dim]{escape(printable(fetch_line(fetch), 1000))}[/dim]")
    read = "MB read (rank 0 | 1 | …)" if inspected.tp > 1 else "MB read"
    grid = folding_table("module", "kernel → numerics on device", "rel. error (bound)", "quant. error",
                          *_AGAINST_COLUMNS[:2 if report.against else 0], "ms", read, "")
    details = []
    for row in collapse_runs(report.runs):
        first = row.runs[0]
        rel, bound = worst(r.rel_error for r in row.runs), first.bound
        execution = first.execution or ("-" if first.status == "not run" else "values not run")
        grid.add_row(escape(printable(row.name)), escape(f"{first.kernel or 'unquantized'} → {execution}"),
                     "-" if rel is None else f"{rel:.2e} ({bound:.1e})", _figure(worst(r.quant_error for r in row.runs)),
                     *_against_cells(report, row.runs),
                     _figure(sum(r.ms or 0 for r in row.runs), ".1f"), _megabytes(row.runs), _run_status(first.status))
        lines = [f"[red]error:[/red] {_multiline(e)}" for e in first.errors]
        lines += [f"[yellow]warning:[/yellow] {_multiline(w)}" for w in first.warnings]
        if verbose:
            lines += [f"[dim]note: {escape(printable(n, 2000))}[/dim]" for r in row.runs for n in r.notes]
        if lines:
            details.append((row.name, lines))
    console.print(grid)
    _print_details(console, details)
    if report.moe_runs:
        _moe_load_table(report, console, verbose)
    for error in inspected.errors:
        console.print(f"[red]error:[/red] {_multiline(error)}")
    ran = {run.name for run in report.moe_runs}
    for moe in inspected.moes:
        for error in moe.errors if moe.name not in ran else ():
            console.print(f"[red]error:[/red] FusedMoE {escape(printable(moe.name))}: {_multiline(error)}")
    for note in report.notes:
        console.print(f"[dim]note: {escape(printable(note, 500))}[/dim]")
    console.print(f"read {report.bytes_read / 1e6:.1f} MB in {report.seconds:.2f} s")
    console.print(("[green]" if report.ok else "[red]") + escape(load_verdict(report)) + ("[/green]" if report.ok else "[/red]"))
    for suggestion in inspected.suggestions:
        console.print(f"  [cyan]suggestion:[/cyan] {escape(printable(suggestion.text, 2000))}")


def _moe_load_table(report, console: Console, verbose: bool) -> None:
    """One row per collapsed FusedMoE: experts class -> what ran where, experts run, the worst expert's error."""
    read = "MB read (rank 0 | 1 | …)" if report.inspect.tp > 1 else "MB read"
    grid = folding_table("FusedMoE", "experts class → numerics on device", "experts run", "rel. error (bound)",
                          "worst expert", "quant. error", *_AGAINST_COLUMNS[:2 if report.against else 0], "ms", read, "")
    details = []
    for row in collapse_runs(report.moe_runs):
        first = row.runs[0]
        judged = [r for r in row.runs if r.rel_error is not None]
        top = max(judged, key=lambda r: r.rel_error) if judged else None
        grid.add_row(escape(printable(row.name)), escape(f"{first.kernel or 'unquantized'} → {first.execution or '-'}"),
                     f"{len(first.experts_run)}/{first.num_experts}" + (f" ×{len(row.runs)}" if len(row.runs) > 1 else ""),
                     "-" if top is None else f"{top.rel_error:.2e} ({top.bound:.1e})",
                     "-" if top is None else _worst_expert(top, len(row.runs) > 1),
                     _figure(worst(r.quant_error for r in row.runs)), *_against_cells(report, row.runs),
                     _figure(sum(r.ms or 0 for r in row.runs), ".1f"), _megabytes(row.runs), _run_status(first.status))
        lines = [f"[red]error:[/red] {_multiline(e)}" for r in row.runs for e in r.errors]
        lines += [f"[yellow]warning:[/yellow] {_multiline(w)}" for w in first.warnings]
        if verbose:
            lines += [f"[dim]note: {escape(printable(n, 2000))}[/dim]" for n in first.notes]
        if lines:
            details.append((row.name, lines))
    console.print(grid)
    _print_details(console, details)


def _worst_expert(run, collapsed: bool) -> str:
    """'3', or '3 (layer 7)' in a row that collapses several layers."""
    index = layer_template(run.name)[1]
    return f"{run.worst_expert}" + (f" (layer {index})" if collapsed and index is not None else "")


def load_markdown(report: LoadReport) -> str:
    inspected = report.inspect
    lines = [f"### fp8check load: {md_line(inspected.model)}", "",
             f"platform `{inspected.platform.label}`, TP {inspected.tp}, vLLM rules {inspected.profile.name}, "
             f"arithmetic on `{report.device}`, {report.tokens} tokens, seed {report.seed}", "",
             "| module | kernel | numerics on device | rel. error (bound) | quant. error | "
             + "".join(f"{c} | " for c in _AGAINST_COLUMNS[:2 if report.against else 0]) + "status |",
             "|---|---|---|---|---|" + "---|" * (2 if report.against else 0) + "---|"]
    for row in collapse_runs(report.runs):
        first = row.runs[0]
        rel = worst(r.rel_error for r in row.runs)
        reasons = first.errors or first.warnings
        status = f"{first.status}: {md_line(reasons[0])}" if reasons else first.status
        cells = [f"`{printable(row.name)}`", first.kernel or "unquantized", first.execution or "-",
                 "-" if rel is None else f"{rel:.2e} ({first.bound:.1e})", _figure(worst(r.quant_error for r in row.runs)),
                 *_against_cells(report, row.runs), status]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    for row in collapse_runs(report.moe_runs):  # FusedMoE: the worst expert's error, and how many experts ran
        first = row.runs[0]
        rel = worst(r.rel_error for r in row.runs)
        status = first.status if not first.errors else f"{first.status}: {md_line(first.errors[0])}"
        cells = [f"`{printable(row.name)}`", first.kernel or "unquantized", first.execution or "-",
                 "-" if rel is None else f"{rel:.2e} ({first.bound:.1e})", _figure(worst(r.quant_error for r in row.runs)),
                 *_against_cells(report, row.runs), f"{status} ({len(first.experts_run)}/{first.num_experts} experts)"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines += [""] + [f"- error: {md_line(e)}" for e in inspected.errors] + [f"- warning: {md_line(w)}" for w in inspected.warnings]
    lines += [f"**{load_verdict(report)}**", ""]
    lines += [f"- suggestion: {md_line(s.text)}" for s in inspected.suggestions] + ([""] if inspected.suggestions else [])
    return "\n".join(lines)


def crosscheck_table(report: InspectReport, mocks: dict, rows: list, console: Console) -> None:
    """fp8check's route next to the installed vLLM's, per layer, and every mock the comparison relied on."""
    layers = {layer.name: layer for layer in report.layers}
    grid = folding_table("module", "fp8check", "vLLM", "")
    for row in rows:
        theirs = row.vllm_error or f"{row.vllm_scheme} / {row.vllm_kernel or '-'}"
        if row.name in layers:
            ours = layers[row.name]
            mine = ours.errors[0] if ours.errors else f"{ours.scheme} / {ours.kernel or '-'}"
        else:  # the front door: the config vLLM builds, or what it raises first
            mine = report.errors[0] if report.errors else f"{report.quant_method} / -"
            theirs = row.vllm_error or f"{row.vllm_scheme} / -"
        grid.add_row(escape(printable(row.name)), _multiline(mine), _multiline(theirs),
                     "[green]agree[/green]" if row.agrees else f"[red]differs: {', '.join(row.differs)}[/red]")
    console.print(grid)
    for name, risk in mocks.items():
        console.print(f"[dim]mocked: {escape(name)} — {escape(str(risk))}[/dim]")
    agreed = sum(1 for row in rows if row.agrees)
    console.print(f"{agreed} of {len(rows)} rows (the front door, then each layer) agree with the installed vLLM on "
                  f"{escape(report.platform.label)}, "
                  f"TP={report.tp}")
