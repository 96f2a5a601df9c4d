"""The reports of inspect, load and crosscheck for people: rich tables and Markdown (their JSON and JUnit are
fp8check.core.report's), and the text helpers the other renderers share.

No name is ever split across lines: module, class and platform names sit in columns that do not wrap, every other
column wraps at spaces, and a table whose names cannot fit the terminal is drawn as one block per row instead
(`draw`); a shape or a block prints as '512×256', which has no space to wrap at. The default layout leads with
the routes (scheme -> kernel, how many layers take each) so that the per-module table names each route by its
number; `wide` names the scheme and kernel in columns of their own instead, with the rarely needed columns. No line
ends in a space (`_print`): rich's padding to the console width stays out of logs."""

from __future__ import annotations

import re
import shlex
from typing import NamedTuple, Sequence

from rich import box
from rich.console import Console
from rich.filesize import decimal
from rich.markup import escape
from rich.measure import Measurement
from rich.padding import Padding
from rich.segment import Segment, SegmentLines
from rich.table import Table
from rich.text import Text

from fp8check.core.checkpoint.local import FetchStats
from fp8check.core.errors import printable
from fp8check.core.formats.frontdoor import readable
from fp8check.core.model.memory import summary as memory_summary
from fp8check.core.model.modules import layer_template
from fp8check.core.planning.rows import (
    collapse, collapse_attention, collapse_attention_runs, collapse_runs, without_index, worst,
)
from fp8check.core.records import InspectReport, LoadReport
from fp8check.core.report.verdicts import detected, failing, inspect_verdict, load_verdict, not_judged, platform_text

# How a rejection fp8check did not read from vLLM's source is tagged (some reasons carry it themselves).
INFERENCE = "fp8check inference"
# The example platforms to pass instead of `--platform auto` on a host without an accelerator.
OTHER_TARGETS = "-p xpu, -p h100, -p mi300x"


def table(report: InspectReport | LoadReport, console: Console, verbose: bool, fetch: FetchStats | None = None,
          wide: bool = False, fail_on: str = "error") -> None:
    """The table of an inspect or a load report; `fail_on`: --fail-on, whose warnings and modules not judged fail
    the run under warning / not-judged (shown as they are, and the verdict says so)."""
    (load_table if isinstance(report, LoadReport) else inspect_table)(report, console, verbose, fetch, wide, fail_on)


def markdown(report: InspectReport | LoadReport, fail_on: str = "error") -> str:
    """The Markdown of an inspect or a load report: --format markdown, --output of a table, the step summary."""
    return (load_markdown if isinstance(report, LoadReport) else inspect_markdown)(report, fail_on)


# ------------------------------------------------------------------------------------------- name-safe tables

class Column(NamedTuple):
    header: str
    name: bool = False                # module, class or platform names: never wrapped, never cut


def draw(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> None:
    """Rows of rich-markup cells as a table whose name columns keep every name on one line (the other columns
    wrap at spaces), sized here so that rich never has to cut one; when even that does not fit the console, two
    lines per row: its first cell, then the others (`_blocks`)."""
    widths = _fitting_widths(console, columns, rows)
    if widths is None:
        _blocks(console, columns, rows)
        return
    spaced = any("\n" in cell or _widest(console, cell) > width for row in rows for cell, width in zip(row, widths))
    grid = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0), header_style="bold",
                 show_lines=spaced)  # rows of several lines are told apart by a blank line
    for column, width in zip(columns, widths):
        grid.add_column(column.header, width=width, no_wrap=column.name)
    for row in rows:
        grid.add_row(*row)
    _print(console, grid)


def _widest(console: Console, cell: str) -> int:
    return Measurement.get(console, console.options, Text.from_markup(cell)).maximum


def _fitting_widths(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> list[int] | None:
    """Each column's width: its widest line, header included, when all fit; else name columns whole, every other
    column its longest word (its header wrapping first), and the room left to the columns nearest to their widest
    cell first (the long prose wraps, the short figures do not); None when the names and longest words alone do
    not fit."""
    spans = []
    for index, column in enumerate(columns):
        header = Measurement.get(console, console.options, Text.from_markup(column.header))
        least = max(1, header.maximum if column.name else header.minimum)  # a name column wraps nothing
        most = 1
        for cell in (row[index] for row in rows):
            measured = Measurement.get(console, console.options, Text.from_markup(cell))
            least = max(least, measured.maximum if column.name else measured.minimum)
            most = max(most, measured.maximum)
        spans.append((least, max(least, most), max(least, most, header.maximum)))
    room = console.width - 2 * (len(columns) - 1)
    if sum(whole for *_, whole in spans) <= room:
        return [whole for *_, whole in spans]
    slack = room - sum(least for least, *_ in spans)
    if slack < 0:
        return None
    widths = [least for least, *_ in spans]
    for index in sorted(range(len(spans)), key=lambda i: spans[i][1] - spans[i][0]):  # the nearest to whole first
        grant = min(spans[index][1] - spans[index][0], slack)
        widths[index] += grant
        slack -= grant
    return widths


def _blocks(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> None:
    """A table too wide for its names: the headers once, then each row as its first cell on a line of its own and
    the other cells on the next, in the headers' order."""
    def joined(cells: Sequence[str]) -> str:
        return "  ·  ".join(" / ".join(cell.split("\n")) for cell in cells)

    say(console, f"[bold]{escape(columns[0].header)}[/bold]")
    headers = [escape(column.header.replace("\n", " / ") or "verdict") for column in columns[1:]]
    say(console, f"[dim]{joined(headers)}[/dim]", 2)
    for row in rows:
        say(console, f"[bold]{row[0]}[/bold]")
        say(console, joined(row[1:]), 2)


def say(console: Console, markup: str, indent: int = 0) -> None:
    """One message, wrapped at spaces with its continuation lines indented under its first word."""
    _print(console, Padding(Text.from_markup(markup), (0, 0, 0, indent), expand=False))


def _print(console: Console, renderable) -> None:
    """A renderable with no line ending in spaces: rich pads table cells and wrapped lines to their width, which
    a log, a diff or `grep ' $'` would see."""
    lines = console.render_lines(renderable, console.options, pad=False)
    console.print(SegmentLines([_rstripped(line) for line in lines], new_lines=True))


def _rstripped(line: list[Segment]) -> list[Segment]:
    while line and not line[-1].control and not line[-1].text.rstrip():
        line = line[:-1]
    if line and not line[-1].control:
        last = line[-1]
        line = line[:-1] + [Segment(last.text.rstrip(), last.style)]
    return line


def sentence(text: str) -> str:
    """vLLM's reasons end in a period and vLLM's own join adds another ('(Sapphire Rapids or newer)..'); for
    people, one. The JSON keeps vLLM's text as it is."""
    return re.sub(r"(?<!\.)\.\.(?=\s|$)", ".", text)


def _multiline(text: str) -> str:
    """vLLM's messages carry real newlines ('Reasons: \\n...'); keep them, escape everything else (a printed tuple
    is read out: frontdoor.readable)."""
    return "\n  ".join(escape(sentence(printable(line, 2000))) for line in readable(text).split("\n"))


def _rejected(rejection, named: bool = True) -> str:
    """A rejected kernel's --verbose line: its reason with runs of spaces folded (vLLM's source continues some
    strings across lines: 'ROCm platform                 with aiter'), tagged once as fp8check's inference
    where fp8check did not read it from vLLM (some reasons say so themselves)."""
    reason = re.sub(r"[ \t]{2,}", " ", rejection.reason.strip())
    tag = "" if rejection.verified or INFERENCE in reason else f" [dim]({INFERENCE})[/dim]"
    return "rejected " + (f"{escape(rejection.kernel)}: " if named else "") + _multiline(reason) + tag


def md_line(text: str) -> str:
    """One Markdown line: newlines folded, control characters escaped, a printed tuple read out."""
    return " ".join(sentence(printable(line, 2000)) for line in readable(text).split("\n"))


def _print_details(console: Console, details: list[tuple[str, list[str]]]) -> None:
    """Under a table: the rows' errors, warnings and notes, indented; rows that carry the same lines (a refusal of
    every shape alike) are named together and their lines printed once."""
    grouped: dict[tuple[str, ...], list[str]] = {}
    for name, lines in details:
        grouped.setdefault(tuple(lines), []).append(name)
    for lines, names in grouped.items():
        say(console, f"[bold]{escape(', '.join(printable(name) for name in names))}[/bold]")
        for line in lines:
            say(console, line, 2)


def _status(layer, fail_on_warning: bool = False) -> str:
    if layer.errors:
        return "[red]FAIL[/red]"
    if layer.warnings:
        return "[red]warn[/red]" if fail_on_warning else "[yellow]warn[/yellow]"
    return "[green]ok[/green]"


def verdict_line(console: Console, ok: bool, text: str, judged: bool = True) -> None:
    """A command's one-line verdict: green when it passes, yellow when it passes with modules not judged, red when
    it fails."""
    colour = "red" if not ok else "green" if judged else "yellow"
    say(console, f"[{colour}]{escape(text)}[/{colour}]")


def yes_no(value) -> str:
    """An assumption or a probed value as every table prints it: yes / no, '-' for unknown."""
    return "yes" if value is True else "no" if value is False else "-" if value is None else str(value)


def vllm_release(profile) -> str:
    """'0.33', or '0.34.1 installed (rules 0.34)' for the vLLM installed here (--vllm auto or installed)."""
    return profile.vllm if profile.vllm == profile.name else f"{profile.vllm} installed (rules {profile.name})"


def _cpu_host(platform) -> bool:
    """--platform auto (or load's default, its --device) on a host without an accelerator."""
    return platform.kind == "cpu" and detected(platform) is not None


def _assumptions(platform) -> str:
    shown = platform.assumptions.relevant(platform.kind)  # CUDA switches mean nothing on a ROCm target
    return ", ".join(f"{key}={yes_no(value)}" for key, value in shown.items())


def fetch_line(fetch: FetchStats) -> str:
    """How a Hub repo's metadata was read: requests, bytes, round trips (or the cache, offline)."""
    where = f"{fetch.repo_id} revision {fetch.revision} = commit {fetch.commit[:12]}"
    if fetch.offline:
        return f"read {where} from the cache {fetch.endpoint} (HF_HUB_OFFLINE): no network, {fetch.seconds:.2f} s"
    return (f"fetched {where} from {fetch.endpoint}: {fetch.requests} requests, {decimal(fetch.bytes_read)} read in "
            f"{fetch.stages} round-trip stages, {fetch.seconds:.2f} s (shard headers {decimal(fetch.header_bytes)} "
            f"of {decimal(fetch.file_bytes)} of files)")


def _header(console: Console, report: InspectReport, verbose: bool, fetch: FetchStats | None, extra: str = "") -> None:
    """The model, then what it is checked for: quantization, target, TP, vLLM release, linear backend."""
    backend = report.backend.default + "".join(f", {quant}={name}" for quant, name in report.backend.per_quant)
    say(console, f"[bold]{escape(printable(report.model))}[/bold]")
    say(console, f"{escape(report.quant_method or 'no quantization_config')} on "
                 f"{escape(platform_text(report.platform))}, TP {report.tp}{' --ep' if report.ep else ''}, vLLM "
                 f"{vllm_release(report.profile)}, linear backend {escape(backend)}{extra}", 2)
    assumed = _assumptions(report.platform)
    if assumed:
        say(console, f"[dim]assuming {escape(assumed)} (change with --assume KEY=VALUE)[/dim]", 2)
    if _cpu_host(report.platform):
        say(console, "[yellow]auto is this host, which has no accelerator: the routes below are those of vLLM's "
                     "CPU build[/yellow] (the targets to pass instead are named at the end)", 2)
    if verbose and fetch is not None:
        say(console, f"[dim]{escape(printable(fetch_line(fetch), 1000))}[/dim]", 2)


def _footer_hint(console: Console, report: InspectReport) -> None:
    """On a CPU host: how to check the GPU meant instead, with the model as it was given."""
    if _cpu_host(report.platform):
        model = shlex.quote(printable(report.model, 500))
        say(console, f"[dim]checked for this CPU host; to check the target you mean: {OTHER_TARGETS} (any other "
                     f"target: fp8check matrix {escape(model)})[/dim]")


# ----------------------------------------------------------------------------------------------------- inspect

def _route(layer) -> str:
    """What vLLM builds for a layer: 'scheme → kernel', the scheme alone when it has no FP8 kernel, or where it
    refuses."""
    if layer.scheme == "?":
        return "refused before vLLM chooses a scheme (errors below)"
    text = layer.scheme + (f" → {layer.kernel}" if layer.kernel else "")
    return text + (" → refused (errors below)" if layer.errors and not layer.kernel else
                   ", refused (errors below)" if layer.errors else "")


class _Routes:
    """The routes of a report, numbered in order of appearance: '[1]' in a table, the route itself above it."""

    def __init__(self, header: str = "scheme → kernel") -> None:
        self.header = header
        self.counts: dict[str, dict[str, int]] = {}

    def ref(self, route: str, kind: str, count: int) -> str:
        per_kind = self.counts.setdefault(route, {})
        per_kind[kind] = per_kind.get(kind, 0) + count
        return escape(f"[{list(self.counts).index(route) + 1}]")

    def draw(self, console: Console) -> None:
        rows = [[escape(f"[{number}]"), ", ".join(f"{n} {kind}" for kind, n in kinds.items()), escape(route)]
                for number, (route, kinds) in enumerate(self.counts.items(), 1)]
        draw(console, [Column("route"), Column("takes", True), Column(self.header)], rows)


def dims(values) -> str:
    """A shape or a block with no space to wrap at: '512×256' (the JSON keeps the list)."""
    return "×".join(map(str, values))


def _weight(layer) -> str:
    """'BF16 512×256': a table may wrap the dtype from the shape, never the shape itself."""
    return f"{layer.weight_dtype} {dims(layer.shape)}"


def _unbroken(text: str) -> str:
    """A strategy as a table prints it: its block '[128, 128]' as '128×128', which never wraps."""
    return re.sub(r"\[(\d+(?:, \d+)*)\]", lambda found: dims(found.group(1).split(", ")), text)


def _quantized(layer) -> str:
    """Strategy and activation in one cell, one a line: 'block 128×128', 'dynamic group 128'."""
    if not layer.strategy:
        return "-"
    return _unbroken(layer.strategy) + "\n" + (layer.activation or "weight-only")


def inspect_table(report: InspectReport, console: Console, verbose: bool, fetch: FetchStats | None = None,
                  wide: bool = False, fail_on: str = "error") -> None:
    """The header, the routes, one row per collapsed module (and FusedMoE), the messages under them, the
    memory and TP lines, the verdict and the suggestions. `wide`: the parallel type, scheme, kernel and the
    kernel request's keys as columns, in place of the routes and their numbers."""
    fail_on_warning = fail_on == "warning"
    _header(console, report, verbose, fetch)
    routes = _Routes()
    columns = [Column("module", True), Column("weight"), Column("strategy\nactivation")]
    if wide:
        columns[1:1] = [Column("type", True)]
        columns += [Column("scheme", True), Column("kernel", True), Column("weight key", True),
                    Column("activation key", True)]
    else:
        columns.append(Column("route"))
    rows, details = [], []
    for row in collapse(report.layers):
        layer = row.layer
        cells = [escape(printable(row.name)), _weight(layer), escape(_quantized(layer))]
        if wide:
            cells[1:1] = [layer.layer_type]
            cells += [escape(layer.scheme), escape(layer.kernel or "-"), layer.weight_key or "-",
                      layer.activation_key or "-"]
        else:
            cells.append(routes.ref(_route(layer), "linear", row.count))
        rows.append(cells + [_status(layer, fail_on_warning)])
        lines = _message_lines(layer.errors, layer.warnings)
        if verbose:
            lines += [_rejected(r, named=False) for r in layer.rejected]  # vLLM's reason names the kernel
            lines += [f"[dim]note: {escape(n)}[/dim]" for n in layer.notes]
        if lines:
            details.append((row.name, lines))
    moe_rows, moe_details = _moe_rows(report, routes, verbose, wide, fail_on_warning)
    attention_rows, attention_details = _attention_rows(report, routes, verbose, wide, fail_on_warning)
    if routes.counts:  # --wide names scheme and kernel in columns instead
        routes.draw(console)
        console.print()
    draw(console, columns + [Column("")], rows)
    _print_details(console, details)
    for skipped in report.skipped:
        say(console, f"[dim]skipped {escape(printable(skipped.prefix))}* ({len(skipped.tensors)} tensors): "
                     f"{escape(skipped.reason)}[/dim]")
    if moe_rows:
        console.print()
        # strategy / activation: two short lines, kept whole as names are.
        moe_columns = [Column("FusedMoE", True), Column("experts"), Column("w13"), Column("strategy\nactivation", True),
                       Column("per rank")]
        moe_columns += ([Column("method", True), Column("experts class", True), Column("backend", True)] if wide
                        else [Column("route")])
        draw(console, moe_columns + [Column("")], moe_rows)
        _print_details(console, moe_details)
    if attention_rows:
        console.print()
        attention_columns = [Column("attention", True), Column("kind"), Column("heads\nq/kv×size"),
                             Column("KV cache\n(stored as)"), Column("scales")]
        attention_columns += ([Column("KV method", True), Column("backend", True)] if wide else [Column("route")])
        draw(console, attention_columns + [Column("")], attention_rows)
        _print_details(console, attention_details)
    _model_messages(console, report)
    _tp_lines(console, report)
    verdict_line(console, report.ok and not any(failing(report, fail_on)), inspect_verdict(report, fail_on),
                 not not_judged(report))
    _suggestions(console, report)
    _footer_hint(console, report)


def _moe_rows(report: InspectReport, routes: _Routes, verbose: bool, wide: bool, fail_on_warning: bool):
    """One row per FusedMoE template: experts, w13, per-rank sizes, and its route (method → experts class;
    `wide`: the method, experts class and backend as columns)."""
    rows, details = [], []
    for row in collapse(report.moes):
        moe = row.layer
        # One fact per line (the column is narrow): experts, the intermediate width and the block each rank holds.
        per_rank = f"{moe.experts_per_rank} experts" + (f" (EP {moe.ep})" if moe.ep > 1 else "")
        if moe.intermediate_per_rank is not None:
            per_rank += f"\nI={moe.intermediate_per_rank}" + (f"\nblock {dims(moe.block)}" if moe.block else "")
        cells = [escape(printable(row.name)), str(moe.num_experts), _weight(moe), escape(_quantized(moe)),
                 escape(per_rank)]
        cells += ([escape(moe.scheme), escape(moe.kernel or "-"), escape(moe.backend or "-")] if wide
                  else [routes.ref(_route(moe), "FusedMoE", row.count)])
        rows.append(cells + [_status(moe, fail_on_warning)])
        lines = [f"[red]error:[/red] {_multiline(e)}" for e in moe.errors]
        lines += [f"[dim]note: {_multiline(n)}[/dim]" for n in moe.notes]
        lines += [f"[yellow]warning:[/yellow] {_multiline(w)}" for w in moe.warnings]
        if verbose:
            lines += [_rejected(r) for r in moe.rejected]
        if lines:
            details.append((row.name, lines))
    return rows, details


def kv_cache(layer) -> str:
    """The KV cache dtype as resolved, and what the cache holds when that says more: 'fp8_e4m3 → float8_e4m3fn'."""
    if layer.cache_dtype == layer.kv_cache_dtype:
        return layer.kv_cache_dtype
    return f"{layer.kv_cache_dtype} → {layer.cache_dtype}"


def _attention_route(layer) -> str:
    """What vLLM builds for an attention layer: 'KV cache method → backend', the backend alone without a method, or
    where selection fails."""
    method = f"{layer.kv_method} → " if layer.kv_method else ""
    if layer.backend is None:
        return method + ("refused (errors below)" if layer.errors else "no attention backend")
    return method + layer.backend + (", refused (errors below)" if layer.errors else "")


def _attention_rows(report: InspectReport, routes: _Routes, verbose: bool, wide: bool, fail_on_warning: bool):
    """One row per kind of attention layer: its heads, KV cache, scales and route (KV method → backend; `wide`:
    both as columns). Rejected backends, with vLLM's reasons, under it with --verbose, as linear kernels are."""
    rows, details = [], []
    for row in collapse_attention(report.attention):
        layer = row.layer
        cells = [escape(printable(row.name)), escape(layer.kind),
                 f"{layer.num_heads}/{layer.num_kv_heads}×{layer.head_size}", escape(kv_cache(layer)),
                 escape(layer.scale_strategy or "-")]
        cells += ([escape(layer.kv_method or "-"), escape(layer.backend or "-")] if wide
                  else [routes.ref(_attention_route(layer), "attention", row.count)])
        rows.append(cells + [_status(layer, fail_on_warning)])
        lines = _message_lines(layer.errors, layer.warnings)
        if verbose:
            if layer.scales:  # a collapsed row's as templates: 'model.layers.{i}.self_attn.k_scale'
                index = layer_template(layer.name)[1] if row.count > 1 else None
                names = ", ".join(printable(without_index(name, index)) for name in layer.scales)
                lines.append(f"[dim]scales: {escape(names)}[/dim]")
            lines += [_rejected(r) for r in layer.rejected]
            lines += [f"[dim]note: {_multiline(n)}[/dim]" for n in layer.notes]
        if lines:
            details.append((row.name, lines))
    return rows, details


def _model_messages(console: Console, report: InspectReport) -> None:
    for error in report.errors:
        say(console, f"[red]error:[/red] {_multiline(error)}")
    for warning in report.warnings:
        say(console, f"[yellow]warning:[/yellow] {_multiline(warning)}")
    for note in report.notes:
        say(console, f"[dim]note: {_multiline(note)}[/dim]")


def memory_line(report: InspectReport) -> str:
    """The memory fit, and the dtype the KV cache holds, which its token capacity is counted in."""
    text = memory_summary(report.memory)
    if report.attention and report.memory.kv_tokens is not None:
        text += f", cached as {', '.join(dict.fromkeys(layer.cache_dtype for layer in report.attention))}"
    return text


def _tp_lines(console: Console, report: InspectReport) -> None:
    """Memory, then the TP sizes the sweep found loading; when this TP is among them and the report still
    fails, its errors are not about TP, and the line says they must be fixed first."""
    if report.memory:
        say(console, escape(memory_line(report)))
    unless = "" if report.ok or report.tp not in report.tp_sizes_ok else " once the errors above are fixed"
    say(console, f"TP sizes 1..16 that would load{unless}: {', '.join(map(str, report.tp_sizes_ok)) or 'none'}")
    if report.moes:
        say(console, f"TP sizes 1..16 that would load with --ep (expert parallel){unless}: "
                     f"{', '.join(map(str, report.tp_sizes_ok_ep)) or 'none'}")


def _suggestions(console: Console, report: InspectReport) -> None:
    for suggestion in report.suggestions:
        say(console, f"[cyan]suggestion:[/cyan] {escape(sentence(printable(suggestion.text, 2000)))}", 2)


def inspect_markdown(report: InspectReport, fail_on: str = "error") -> str:
    lines = [f"### fp8check: {md_line(report.model)}", "",
             f"`{report.quant_method or 'no quantization_config'}` on `{platform_text(report.platform)}`, "
             f"TP {report.tp}, vLLM {vllm_release(report.profile)}, linear backend `{report.backend.default}`", "",
             "| module | type | weight | strategy | scheme | kernel | status |", "|---|---|---|---|---|---|---|"]
    for row in collapse(report.layers + report.moes):
        layer = row.layer
        status = ("FAIL: " + md_line(layer.errors[0]) if layer.errors else
                  "warn: " + md_line(layer.warnings[0]) if layer.warnings else "ok")
        cells = [f"`{printable(row.name)}`", layer.layer_type, _weight(layer),
                 layer.strategy or "-", layer.scheme, layer.kernel or "-", status]
        lines.append(_md_row(cells))
    lines += _attention_markdown(report)
    lines += [""] + [f"- error: {md_line(e)}" for e in report.errors]
    lines += [f"- warning: {md_line(w)}" for w in report.warnings]
    unless = "" if report.ok or report.tp not in report.tp_sizes_ok else " once the errors above are fixed"
    lines.append(f"TP sizes that would load{unless}: {', '.join(map(str, report.tp_sizes_ok)) or 'none'}")
    if report.moes:
        lines.append(f"TP sizes that would load with --ep{unless}: "
                     f"{', '.join(map(str, report.tp_sizes_ok_ep)) or 'none'}")
    lines += [md_line(memory_line(report))] if report.memory else []
    lines += ["", f"**{inspect_verdict(report, fail_on)}**", ""]
    lines += [f"- suggestion: {md_line(s.text)}" for s in report.suggestions] + ([""] if report.suggestions else [])
    return "\n".join(lines)


def _md_status(entry) -> str:
    reasons = entry.errors or entry.warnings
    return f"{'FAIL' if entry.errors else 'warn'}: {md_line(reasons[0])}" if reasons else "ok"


def _md_row(cells) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _attention_markdown(report: InspectReport) -> list[str]:
    """inspect's attention rows as a Markdown table of their own (none without attention layers)."""
    if not report.attention:
        return []
    lines = ["", "| attention | kind | heads q/kv×size | KV cache | KV method | scales | backend | status |",
             "|---|---|---|---|---|---|---|---|"]
    for row in collapse_attention(report.attention):
        layer = row.layer
        lines.append(_md_row([f"`{printable(row.name)}`", layer.kind,
                              f"{layer.num_heads}/{layer.num_kv_heads}×{layer.head_size}", kv_cache(layer),
                              layer.kv_method or "-", layer.scale_strategy or "-", layer.backend or "-",
                              _md_status(layer)]))
    return lines


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


def _run_status(status: str, fail_on_warning: bool = False) -> str:
    warn = "[red]warn[/red]" if fail_on_warning else "[yellow]warn[/yellow]"
    return {"ok": "[green]ok[/green]", "warn": warn, "FAIL": "[red]FAIL[/red]"}.get(status, "[red]not run[/red]")


def _milliseconds(runs) -> str:
    """The time the runs took; '-' for modules that were not run. Under --tp the ranks run in step, so a run took
    its slowest rank's time (rank 0 alone may have had no part: an expert another rank owns under --ep)."""
    ran = [r for r in runs if r.status != "not run"]
    return _figure(sum(_run_ms(r) for r in ran), ".1f") if ran else "-"


def _run_ms(run) -> float:
    timed = [figure.ms for figure in run.ranks if figure.ms is not None]
    return max(timed) if timed else run.ms or 0


def _megabytes(runs) -> str:
    """MB read, per rank under --tp ("0.13 | 0.13"): what each rank read of its own slice, measured; '-' for
    modules that were not run."""
    if all(r.status == "not run" for r in runs):
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
    if run.status == "not run":
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
    _header(console, inspected, verbose, fetch, extra)
    layers = {layer.name: layer for layer in inspected.layers + inspected.moes}
    routes = _Routes("kernel → numerics on the device")
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
        lines = _message_lines([e for e in first.errors if e.removeprefix("not run: ") not in model_level],
                               first.warnings)
        if verbose:
            lines += [f"[dim]note: {_multiline(n)}[/dim]" for r in row.runs for n in r.notes]
        if lines:
            details.append((row.name, lines))
    moe_rows, moe_details = _moe_load_rows(report, routes, layers, fail_on_warning, verbose)
    if routes.counts:  # --wide names scheme, kernel and numerics of the linear modules in columns instead
        routes.draw(console)
        console.print()
    draw(console, columns + [Column("", True)], rows)
    _print_details(console, details)
    if moe_rows:
        console.print()
        draw(console, [Column("FusedMoE", True), Column("route"), Column("experts run"),
                       Column("rel. error (bound)"), Column("worst expert"), Column("quant. error"),
                       *(Column(c) for c in _AGAINST_COLUMNS[:2 if report.against else 0]), Column("ms"),
                       Column(read), Column("", True)], moe_rows)
        _print_details(console, moe_details)
    kv_rows, kv_details = _kv_rows(report, fail_on_warning, verbose)
    if kv_rows:
        console.print()
        draw(console, [Column("attention", True), Column("KV cache\n(stored as)"), Column("scales\n(k, v)"),
                       Column("K error"), Column("V error"), Column("bound"), Column("", True)], kv_rows)
        _print_details(console, kv_details)
    for error in inspected.errors:
        say(console, f"[red]error:[/red] {_multiline(error)}")
    ran = {run.name for run in report.moe_runs}
    for moe in inspected.moes:
        for error in moe.errors if moe.name not in ran else ():
            say(console, f"[red]error:[/red] FusedMoE {escape(printable(moe.name))}: {_multiline(error)}")
    for name, error in _refused_attention(report):
        say(console, f"[red]error:[/red] attention {escape(printable(name))}: {_multiline(error)}")
    for note in report.notes:
        say(console, f"[dim]note: {_multiline(printable(note, 500))}[/dim]")
    say(console, f"read {report.bytes_read / 1e6:.1f} MB in {report.seconds:.2f} s")
    verdict_line(console, report.ok and not any(failing(report, fail_on)), load_verdict(report, fail_on),
                 not not_judged(inspected))
    _suggestions(console, inspected)
    _footer_hint(console, inspected)


def _moe_load_rows(report: LoadReport, routes: _Routes, layers: dict, fail_on_warning: bool, verbose: bool):
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
        lines = _message_lines([e for r in row.runs for e in r.errors], first.warnings)
        if verbose:
            lines += [f"[dim]note: {_multiline(n)}[/dim]" for n in first.notes]
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
        lines = _message_lines(first.errors, first.warnings)
        if verbose:
            lines += [f"[dim]note: {_multiline(n)}[/dim]" for n in first.notes]
        if lines:
            details.append((row.name, lines))
    return rows, details


def _message_lines(errors, warnings) -> list[str]:
    """A row's detail lines: its errors, then its warnings."""
    return ([f"[red]error:[/red] {_multiline(e)}" for e in errors]
            + [f"[yellow]warning:[/yellow] {_multiline(w)}" for w in warnings])


def _worst_expert(run, collapsed: bool) -> str:
    """'3', or '3 (layer 7)' in a row that collapses several layers."""
    index = layer_template(run.name)[1]
    return f"{run.worst_expert}" + (f" (layer {index})" if collapsed and index is not None else "")


def _md_kernel(run, layer) -> tuple[str, str]:
    """The Markdown's kernel and numerics cells: 'unquantized' only for a layer vLLM leaves unquantized; a layer
    it refuses is named by its scheme."""
    if run.status == "not run" and layer is not None and layer.errors:
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
        lines.append(_md_row(cells))
    for row in collapse_runs(report.moe_runs):  # FusedMoE: the worst expert's error, and how many experts ran
        first = row.runs[0]
        rel = worst(r.rel_error for r in row.runs)
        status = first.status if not first.errors else f"{first.status}: {md_line(first.errors[0])}"
        cells = [f"`{printable(row.name)}`", *_md_kernel(first, layers.get(first.name)),
                 "-" if rel is None else f"{rel:.2e} ({first.bound:.1e})",
                 _figure(worst(r.quant_error for r in row.runs)),
                 *_against_cells(report, row.runs), f"{status} ({len(first.experts_run)}/{first.num_experts} experts)"]
        lines.append(_md_row(cells))
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
        lines.append(_md_row([f"`{printable(row.name)}`", kv_cache(first),
                              _scale_range([v for run in row.runs for v in run.k_scale]),
                              _scale_range([v for run in row.runs for v in run.v_scale]),
                              _figure(worst(r.k_error for r in row.runs)), _figure(worst(r.v_error for r in row.runs)),
                              _figure(first.bound, ".1e"),
                              f"{first.status}: {md_line(reasons[0])}" if reasons else first.status]))
    return lines + ([""] + refused if refused else [])


def crosscheck_table(report: InspectReport, mocks: dict, rows: list, stand_in: str | None, console: Console) -> None:
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
        grid_rows.append([escape(printable(row.name)), _multiline(mine), _multiline(theirs),
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
