"""inspect's report for people: the rich table and its Markdown. The default layout leads with the routes (scheme
-> kernel, how many layers take each) so that the per-module table names each route by its number; `wide` names
the scheme and kernel in columns of their own instead, with the rarely needed columns."""

from __future__ import annotations

import re

from rich.console import Console
from rich.markup import escape

from fp8check.cli.render.tables import (
    INFERENCE, Column, Routes, draw, footer_hint, header, kv_cache, md_line, md_row, message_lines, multiline,
    print_details, say, suggestions, verdict_line, vllm_release,
)
from fp8check.core.checkpoint.local import FetchStats
from fp8check.core.errors import printable
from fp8check.core.model.memory import MemoryFit
from fp8check.core.model.memory import summary as memory_summary
from fp8check.core.planning.rows import collapse, collapse_attention, without_index
from fp8check.core.records import InspectReport
from fp8check.core.report.verdicts import failing, inspect_verdict, not_judged, platform_text
from fp8check.core.vocabulary import layer_template


def _rejected(rejection, named: bool = True) -> str:
    """A rejected kernel's --verbose line: its reason with runs of spaces folded (vLLM's source continues some
    strings across lines: 'ROCm platform                 with aiter'), tagged once as fp8check's inference
    where fp8check did not read it from vLLM (some reasons say so themselves)."""
    reason = re.sub(r"[ \t]{2,}", " ", rejection.reason.strip())
    tag = "" if rejection.verified or INFERENCE in reason else f" [dim]({INFERENCE})[/dim]"
    return "rejected " + (f"{escape(rejection.kernel)}: " if named else "") + multiline(reason) + tag


def _status(layer, fail_on_warning: bool = False) -> str:
    if layer.errors:
        return "[red]FAIL[/red]"
    if layer.warnings:
        return "[red]warn[/red]" if fail_on_warning else "[yellow]warn[/yellow]"
    return "[green]ok[/green]"


def _route(layer) -> str:
    """What vLLM builds for a layer: 'scheme → kernel', the scheme alone when it has no FP8 kernel, or where it
    refuses."""
    if layer.scheme == "?":
        return "refused before vLLM chooses a scheme (errors below)"
    text = layer.scheme + (f" → {layer.kernel}" if layer.kernel else "")
    return text + (" → refused (errors below)" if layer.errors and not layer.kernel else
                   ", refused (errors below)" if layer.errors else "")


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
    if not layer.strategy_text:
        return "-"
    return _unbroken(layer.strategy_text) + "\n" + (layer.activation or "weight-only")


def inspect_table(report: InspectReport, console: Console, verbose: bool, fetch: FetchStats | None = None,
                  wide: bool = False, fail_on: str = "error") -> None:
    """The header, the routes, one row per collapsed module (and FusedMoE), the messages under them, the
    memory and TP lines, the verdict and the suggestions. `wide`: the parallel type, scheme, kernel and the
    kernel request's keys as columns, in place of the routes and their numbers."""
    fail_on_warning = fail_on == "warning"
    header(console, report, verbose, fetch)
    routes = Routes()
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
        lines = message_lines(layer.errors, layer.warnings)
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
    print_details(console, details)
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
        print_details(console, moe_details)
    if attention_rows:
        console.print()
        attention_columns = [Column("attention", True), Column("kind"), Column("heads\nq/kv×size"),
                             Column("KV cache\n(stored as)"), Column("scales")]
        attention_columns += ([Column("KV method", True), Column("backend", True)] if wide else [Column("route")])
        draw(console, attention_columns + [Column("")], attention_rows)
        print_details(console, attention_details)
    _model_messages(console, report)
    _tp_lines(console, report)
    verdict_line(console, report.ok and not any(failing(report, fail_on)), inspect_verdict(report, fail_on),
                 not not_judged(report))
    suggestions(console, report)
    footer_hint(console, report)


def _moe_rows(report: InspectReport, routes: Routes, verbose: bool, wide: bool, fail_on_warning: bool):
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
        lines = [f"[red]error:[/red] {multiline(e)}" for e in moe.errors]
        lines += [f"[dim]note: {multiline(n)}[/dim]" for n in moe.notes]
        lines += [f"[yellow]warning:[/yellow] {multiline(w)}" for w in moe.warnings]
        if verbose:
            lines += [_rejected(r) for r in moe.rejected]
        if lines:
            details.append((row.name, lines))
    return rows, details


def _attention_route(layer) -> str:
    """What vLLM builds for an attention layer: 'KV cache method → backend', the backend alone without a method, or
    where selection fails."""
    method = f"{layer.kv_method} → " if layer.kv_method else ""
    if layer.backend is None:
        return method + ("refused (errors below)" if layer.errors else "no attention backend")
    return method + layer.backend + (", refused (errors below)" if layer.errors else "")


def _attention_rows(report: InspectReport, routes: Routes, verbose: bool, wide: bool, fail_on_warning: bool):
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
        lines = message_lines(layer.errors, layer.warnings)
        if verbose:
            if layer.scales:  # a collapsed row's as templates: 'model.layers.{i}.self_attn.k_scale'
                index = layer_template(layer.name)[1] if row.count > 1 else None
                names = ", ".join(printable(without_index(name, index)) for name in layer.scales)
                lines.append(f"[dim]scales: {escape(names)}[/dim]")
            lines += [_rejected(r) for r in layer.rejected]
            lines += [f"[dim]note: {multiline(n)}[/dim]" for n in layer.notes]
        if lines:
            details.append((row.name, lines))
    return rows, details


def _model_messages(console: Console, report: InspectReport) -> None:
    for error in report.errors:
        say(console, f"[red]error:[/red] {multiline(error)}")
    for warning in report.warnings:
        say(console, f"[yellow]warning:[/yellow] {multiline(warning)}")
    for note in report.notes:
        say(console, f"[dim]note: {multiline(note)}[/dim]")


def memory_line(report: InspectReport, memory: MemoryFit) -> str:
    """The memory fit (the report's), and the dtype the KV cache holds, which its token capacity is counted in."""
    text = memory_summary(memory)
    if report.attention and memory.kv_tokens is not None:
        text += f", cached as {', '.join(dict.fromkeys(layer.cache_dtype for layer in report.attention))}"
    return text


def _tp_lines(console: Console, report: InspectReport) -> None:
    """Memory, then the TP sizes the sweep found loading; when this TP is among them and the report still
    fails, its errors are not about TP, and the line says they must be fixed first."""
    if report.memory:
        say(console, escape(memory_line(report, report.memory)))
    unless = "" if report.ok or report.tp not in report.tp_sizes_ok else " once the errors above are fixed"
    say(console, f"TP sizes 1..16 that would load{unless}: {', '.join(map(str, report.tp_sizes_ok)) or 'none'}")
    if report.moes:
        say(console, f"TP sizes 1..16 that would load with --ep (expert parallel){unless}: "
                     f"{', '.join(map(str, report.tp_sizes_ok_ep)) or 'none'}")


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
                 layer.strategy_text or "-", layer.scheme, layer.kernel or "-", status]
        lines.append(md_row(cells))
    lines += _attention_markdown(report)
    lines += [""] + [f"- error: {md_line(e)}" for e in report.errors]
    lines += [f"- warning: {md_line(w)}" for w in report.warnings]
    unless = "" if report.ok or report.tp not in report.tp_sizes_ok else " once the errors above are fixed"
    lines.append(f"TP sizes that would load{unless}: {', '.join(map(str, report.tp_sizes_ok)) or 'none'}")
    if report.moes:
        lines.append(f"TP sizes that would load with --ep{unless}: "
                     f"{', '.join(map(str, report.tp_sizes_ok_ep)) or 'none'}")
    lines += [md_line(memory_line(report, report.memory))] if report.memory else []
    lines += ["", f"**{inspect_verdict(report, fail_on)}**", ""]
    lines += [f"- suggestion: {md_line(s.text)}" for s in report.suggestions] + ([""] if report.suggestions else [])
    return "\n".join(lines)


def _md_status(entry) -> str:
    reasons = entry.errors or entry.warnings
    return f"{'FAIL' if entry.errors else 'warn'}: {md_line(reasons[0])}" if reasons else "ok"


def _attention_markdown(report: InspectReport) -> list[str]:
    """inspect's attention rows as a Markdown table of their own (none without attention layers)."""
    if not report.attention:
        return []
    lines = ["", "| attention | kind | heads q/kv×size | KV cache | KV method | scales | backend | status |",
             "|---|---|---|---|---|---|---|---|"]
    for row in collapse_attention(report.attention):
        layer = row.layer
        lines.append(md_row([f"`{printable(row.name)}`", layer.kind,
                              f"{layer.num_heads}/{layer.num_kv_heads}×{layer.head_size}", kv_cache(layer),
                              layer.kv_method or "-", layer.scale_strategy or "-", layer.backend or "-",
                              _md_status(layer)]))
    return lines
