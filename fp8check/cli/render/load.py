"""load's report for people: per layer, the routed kernel's run on each rank (its error against the fp32 reference
and --against, time, memory) and the KV cache scales, as a rich table and as Markdown; and crosscheck's table,
fp8check's route next to the installed vLLM's."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from fp8check.cli.render.tables import (
    Column, Routes, draw, footer_hint, header, kv_cache, md_line, md_row, message_lines, multiline, print_details,
    say, suggestions, verdict_line, vllm_release,
)
from fp8check.core.checkpoint.local import FetchStats
from fp8check.core.errors import printable
from fp8check.core.planning.rows import collapse_attention, collapse_attention_runs, collapse_runs, worst
from fp8check.core.records import InspectReport, LoadReport
from fp8check.core.report.verdicts import failing, load_verdict, not_judged, platform_text
from fp8check.core.vocabulary import Status, layer_template


def _figure(value: float | None, digits: str = ".2e") -> str:
    return "-" if value is None else format(value, digits)


_AGAINST_COLUMNS = ("weight err", "output err")


def _against_cells(report, runs) -> tuple[str, ...]:
    """load --against: the worst weight and output error against BASE over collapsed runs; none without it."""
    if not report.against:
        return ()
    compared = [r.against for r in runs if r.against is not None]
    return (_figure(worst(c.weight_rel_error for c in compared)), _figure(worst(c.output_rel_error for c in compared)))


def _run_status(status: Status, fail_on_warning: bool = False) -> str:
    warn = "[red]warn[/red]" if fail_on_warning else "[yellow]warn[/yellow]"
    return {Status.OK: "[green]ok[/green]", Status.WARN: warn, Status.FAIL: "[red]FAIL[/red]",
            Status.NOT_RUN: "[red]not run[/red]"}[status]


def _milliseconds(runs) -> str:
    """The time the runs took; '-' for modules that were not run. Under --tp the ranks run in step, so a run took
    its slowest rank's time (rank 0 alone may have had no part: an expert another rank owns under --ep)."""
    ran = [r for r in runs if r.status != Status.NOT_RUN]
    return _figure(sum(_run_ms(r) for r in ran), ".1f") if ran else "-"


def _run_ms(run) -> float:
    timed = [figure.ms for figure in run.ranks if figure.ms is not None]
    return max(timed) if timed else run.ms or 0


def _megabytes(runs) -> str:
    """MB read, per rank under --tp ("0.13 | 0.13"): what each rank read of its own slice, measured; '-' for
    modules that were not run."""
    if all(r.status == Status.NOT_RUN for r in runs):
        return "-"
    per_rank: dict[int, int] = {}
    for run in runs:
        for figure in run.ranks:
            per_rank[figure.rank] = per_rank.get(figure.rank, 0) + figure.bytes_read
    if per_rank:
        return " | ".join(f"{per_rank[r] / 1e6:.2f}" for r in sorted(per_rank))
    return f"{sum(r.bytes_read for r in runs) / 1e6:.1f}"


def _run_route(run, layer) -> str:
    """What ran: 'kernel → numerics on the device'; a layer vLLM refuses is named by its scheme, not run."""
    scheme = layer.scheme if layer is not None else "?"
    if run.status == Status.NOT_RUN:
        if layer is not None and layer.errors:
            return ("not run: vLLM refuses it before choosing a scheme" if scheme == "?" else
                    f"{scheme} → not run: vLLM refuses it (errors below)")
        return f"{run.kernel or scheme} → not run"
    return f"{run.kernel or scheme} → {run.execution or 'values not run'}"


def load_table(report: LoadReport, console: Console, verbose: bool, fetch: FetchStats | None = None,
               wide: bool = False, fail_on: str = "error") -> None:
    """inspect's header, the routes (kernel → what ran where), then one row per collapsed module: its errors
    against the bound. `wide`: the scheme, kernel and numerics as columns, in place of the route."""
    fail_on_warning = fail_on == "warning"
    inspected = report.inspect
    extra = (f"; arithmetic on {escape(report.device)}, {report.tokens} tokens, seed {report.seed}"
             + (f", against {escape(printable(report.against))}" if report.against else ""))
    header(console, inspected, verbose, fetch, extra)
    layers = {layer.name: layer for layer in inspected.layers + inspected.moes}
    routes = Routes("kernel → numerics on the device")
    model_level = set(inspected.errors)  # printed once, under the tables
    read = "MB read per rank" if inspected.tp > 1 else "MB read"
    columns = [Column("module", True), Column("rel. error (bound)"), Column("quant. error"),
               *(Column(c) for c in _AGAINST_COLUMNS[:2 if report.against else 0]), Column("ms"), Column(read)]
    if wide:
        columns += [Column("scheme", True), Column("kernel", True), Column("numerics on the device")]
    else:
        columns[1:1] = [Column("route")]
    rows, details = [], []
    for row in collapse_runs(report.runs):
        first, layer = row.runs[0], layers.get(row.runs[0].name)
        rel, bound = worst(r.rel_error for r in row.runs), first.bound
        cells = [escape(printable(row.name)),
                 "-" if rel is None else f"{rel:.2e} ({bound:.1e})", _figure(worst(r.quant_error for r in row.runs)),
                 *_against_cells(report, row.runs),
                 _milliseconds(row.runs), _megabytes(row.runs)]
        if wide:
            cells += [escape(layer.scheme if layer else "?"), escape(first.kernel or "-"),
                      escape(first.execution or "-")]
        else:
            cells[1:1] = [routes.ref(_run_route(first, layer), "linear", len(row.runs))]
        rows.append(cells + [_run_status(first.status, fail_on_warning)])
        lines = message_lines([e for e in first.errors if e.removeprefix("not run: ") not in model_level],
                               first.warnings)
        if verbose:
            lines += [f"[dim]note: {multiline(n)}[/dim]" for r in row.runs for n in r.notes]
        if lines:
            details.append((row.name, lines))
    moe_rows, moe_details = _moe_load_rows(report, routes, layers, fail_on_warning, verbose)
    if routes.counts:  # --wide names scheme, kernel and numerics of the linear modules in columns instead
        routes.draw(console)
        console.print()
    draw(console, columns + [Column("", True)], rows)
    print_details(console, details)
    if moe_rows:
        console.print()
        draw(console, [Column("FusedMoE", True), Column("route"), Column("experts run"),
                       Column("rel. error (bound)"), Column("worst expert"), Column("quant. error"),
                       *(Column(c) for c in _AGAINST_COLUMNS[:2 if report.against else 0]), Column("ms"),
                       Column(read), Column("", True)], moe_rows)
        print_details(console, moe_details)
    kv_rows, kv_details = _kv_rows(report, fail_on_warning, verbose)
    if kv_rows:
        console.print()
        draw(console, [Column("attention", True), Column("KV cache\n(stored as)"), Column("scales\n(k, v)"),
                       Column("K error"), Column("V error"), Column("bound"), Column("", True)], kv_rows)
        print_details(console, kv_details)
    for error in inspected.errors:
        say(console, f"[red]error:[/red] {multiline(error)}")
    ran = {run.name for run in report.moe_runs}
    for moe in inspected.moes:
        for error in moe.errors if moe.name not in ran else ():
            say(console, f"[red]error:[/red] FusedMoE {escape(printable(moe.name))}: {multiline(error)}")
    for name, error in _refused_attention(report):
        say(console, f"[red]error:[/red] attention {escape(printable(name))}: {multiline(error)}")
    for note in report.notes:
        say(console, f"[dim]note: {multiline(printable(note, 500))}[/dim]")
    say(console, f"read {report.bytes_read / 1e6:.1f} MB in {report.seconds:.2f} s")
    verdict_line(console, report.ok and not any(failing(report, fail_on)), load_verdict(report, fail_on),
                 not not_judged(inspected))
    suggestions(console, inspected)
    footer_hint(console, inspected)


def _moe_load_rows(report: LoadReport, routes: Routes, layers: dict, fail_on_warning: bool, verbose: bool):
    """One row per collapsed FusedMoE: its route (experts class → what ran where), experts run, the worst
    expert's error."""
    rows, details = [], []
    for row in collapse_runs(report.moe_runs):
        first = row.runs[0]
        judged = [r for r in row.runs if r.rel_error is not None]
        top = max(judged, key=lambda r: r.rel_error) if judged else None
        rows.append([escape(printable(row.name)), routes.ref(_run_route(first, layers.get(first.name)), "FusedMoE",
                                                              len(row.runs)),
                     f"{len(first.experts_run)}/{first.num_experts}"
                     + (f" ×{len(row.runs)}" if len(row.runs) > 1 else ""),
                     "-" if top is None else f"{top.rel_error:.2e} ({top.bound:.1e})",
                     "-" if top is None else _worst_expert(top, len(row.runs) > 1),
                     _figure(worst(r.quant_error for r in row.runs)), *_against_cells(report, row.runs),
                     _milliseconds(row.runs), _megabytes(row.runs),
                     _run_status(first.status, fail_on_warning)])
        lines = message_lines([e for r in row.runs for e in r.errors], first.warnings)
        if verbose:
            lines += [f"[dim]note: {multiline(n)}[/dim]" for n in first.notes]
        if lines:
            details.append((row.name, lines))
    return rows, details


def _refused_attention(report: LoadReport) -> list[tuple[str, str]]:
    """(collapsed row, error) of the attention layers vLLM would refuse that have no KV cache run of their own."""
    ran = {run.name for run in report.attention_runs}
    return [(row.name, error) for row in collapse_attention(tuple(a for a in report.inspect.attention
                                                                   if a.name not in ran))
            for error in row.layer.errors]


def _scale_range(values) -> str:
    """The scales of a collapsed row: '0.0123', or their range '0.0123..0.0456' (per head, or across layers)."""
    if not values:
        return "-"
    low, high = min(values), max(values)
    return f"{low:.3g}" if low == high else f"{low:.3g}..{high:.3g}"


def _kv_rows(report: LoadReport, fail_on_warning: bool, verbose: bool):
    """One row per collapsed KV cache round trip: the cache dtype, the scales vLLM uses (their range over the
    row), the worst K and V errors against fp32 and their bound."""
    rows, details = [], []
    for row in collapse_attention_runs(report.attention_runs):
        first = row.runs[0]
        k_scales = [value for run in row.runs for value in run.k_scale]
        v_scales = [value for run in row.runs for value in run.v_scale]
        rows.append([escape(printable(row.name)), escape(kv_cache(first)),
                     f"k {_scale_range(k_scales)}\nv {_scale_range(v_scales)}" if k_scales or v_scales else "-",
                     _figure(worst(r.k_error for r in row.runs)), _figure(worst(r.v_error for r in row.runs)),
                     _figure(first.bound, ".1e"), _run_status(first.status, fail_on_warning)])
        lines = message_lines(first.errors, first.warnings)
        if verbose:
            lines += [f"[dim]note: {multiline(n)}[/dim]" for n in first.notes]
        if lines:
            details.append((row.name, lines))
    return rows, details


def _worst_expert(run, collapsed: bool) -> str:
    """'3', or '3 (layer 7)' in a row that collapses several layers."""
    index = layer_template(run.name)[1]
    return f"{run.worst_expert}" + (f" (layer {index})" if collapsed and index is not None else "")


def _md_kernel(run, layer) -> tuple[str, str]:
    """The Markdown's kernel and numerics cells: 'unquantized' only for a layer vLLM leaves unquantized; a layer
    it refuses is named by its scheme."""
    if run.status == Status.NOT_RUN and layer is not None and layer.errors:
        return (run.kernel or ("refused before a scheme" if layer.scheme == "?" else f"{layer.scheme}: refused"),
                "not run")
    return run.kernel or "unquantized", run.execution or "-"


def load_markdown(report: LoadReport, fail_on: str = "error") -> str:
    inspected = report.inspect
    layers = {layer.name: layer for layer in inspected.layers + inspected.moes}
    lines = [f"### fp8check load: {md_line(inspected.model)}", "",
             f"`{platform_text(inspected.platform)}`, TP {inspected.tp}, vLLM {vllm_release(inspected.profile)}, "
             f"arithmetic on `{report.device}`, {report.tokens} tokens, seed {report.seed}", "",
             "| module | kernel | numerics on device | rel. error (bound) | quant. error | "
             + "".join(f"{c} | " for c in _AGAINST_COLUMNS[:2 if report.against else 0]) + "status |",
             "|---|---|---|---|---|" + "---|" * (2 if report.against else 0) + "---|"]
    for row in collapse_runs(report.runs):
        first = row.runs[0]
        rel = worst(r.rel_error for r in row.runs)
        reasons = first.errors or first.warnings
        status = f"{first.status}: {md_line(reasons[0])}" if reasons else first.status
        cells = [f"`{printable(row.name)}`", *_md_kernel(first, layers.get(first.name)),
                 "-" if rel is None else f"{rel:.2e} ({first.bound:.1e})",
                 _figure(worst(r.quant_error for r in row.runs)),
                 *_against_cells(report, row.runs), status]
        lines.append(md_row(cells))
    for row in collapse_runs(report.moe_runs):  # FusedMoE: the worst expert's error, and how many experts ran
        first = row.runs[0]
        rel = worst(r.rel_error for r in row.runs)
        status = first.status if not first.errors else f"{first.status}: {md_line(first.errors[0])}"
        cells = [f"`{printable(row.name)}`", *_md_kernel(first, layers.get(first.name)),
                 "-" if rel is None else f"{rel:.2e} ({first.bound:.1e})",
                 _figure(worst(r.quant_error for r in row.runs)),
                 *_against_cells(report, row.runs), f"{status} ({len(first.experts_run)}/{first.num_experts} experts)"]
        lines.append(md_row(cells))
    lines += _kv_markdown(report)
    lines += [""] + [f"- error: {md_line(e)}" for e in inspected.errors]
    lines += [f"- warning: {md_line(w)}" for w in inspected.warnings]
    lines += [f"**{load_verdict(report, fail_on)}**", ""]
    lines += [f"- suggestion: {md_line(s.text)}" for s in inspected.suggestions]
    lines += [""] if inspected.suggestions else []
    return "\n".join(lines)


def _kv_markdown(report: LoadReport) -> list[str]:
    """load's KV cache round trips as a Markdown table of their own, then the attention layers vLLM would refuse
    that did not run."""
    refused = [f"- error: attention `{printable(name)}`: {md_line(error)}"
               for name, error in _refused_attention(report)]
    if not report.attention_runs:
        return [""] + refused if refused else []
    lines = ["", "| attention | KV cache | k scale | v scale | K error | V error | bound | status |",
             "|---|---|---|---|---|---|---|---|"]
    for row in collapse_attention_runs(report.attention_runs):
        first = row.runs[0]
        reasons = first.errors or first.warnings
        lines.append(md_row([f"`{printable(row.name)}`", kv_cache(first),
                              _scale_range([v for run in row.runs for v in run.k_scale]),
                              _scale_range([v for run in row.runs for v in run.v_scale]),
                              _figure(worst(r.k_error for r in row.runs)), _figure(worst(r.v_error for r in row.runs)),
                              _figure(first.bound, ".1e"),
                              f"{first.status}: {md_line(reasons[0])}" if reasons else first.status]))
    return lines + ([""] + refused if refused else [])


def crosscheck_table(report: InspectReport, mocks: dict, rows: list, stand_in: str | None,
                     console: Console) -> None:
    """fp8check's route next to the installed vLLM's, per layer, and every mock the comparison relied on.
    `stand_in`: the installed release no profile speaks for (the newest profile's rules are fp8check's column)."""
    layers = {layer.name: layer for layer in report.layers}
    grid_rows = []
    for row in rows:
        theirs = row.vllm_error or f"{row.vllm_scheme} / {row.vllm_kernel or '-'}"
        if row.name in layers:
            ours = layers[row.name]
            mine = ours.errors[0] if ours.errors else f"{ours.scheme} / {ours.kernel or '-'}"
        else:  # the front door: the config vLLM builds, or what it raises first
            mine = report.errors[0] if report.errors else f"{report.quant_method} / -"
            theirs = row.vllm_error or f"{row.vllm_scheme} / -"
        grid_rows.append([escape(printable(row.name)), multiline(mine), multiline(theirs),
                          "[green]agree[/green]" if row.agrees else f"[red]differs: {', '.join(row.differs)}[/red]"])
    draw(console, [Column("module", True), Column("fp8check"), Column("vLLM"), Column("")], grid_rows)
    for name, risk in mocks.items():
        say(console, f"[dim]mocked: {escape(name)} — {escape(str(risk))}[/dim]")
    agreed = sum(1 for row in rows if row.agrees)
    if stand_in:
        say(console, f"the vLLM column is vLLM {escape(stand_in)}'s own answer; fp8check's column is "
                     f"{report.profile.name}'s rules standing in (vLLM {escape(stand_in)} is newer than every profile)")
    say(console, f"{agreed} of {len(rows)} rows (the front door, then each layer) agree with the installed vLLM on "
                 f"{escape(platform_text(report.platform))}, TP {report.tp}")
