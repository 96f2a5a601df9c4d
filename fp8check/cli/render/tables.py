"""What every human-facing report shares (inspect, load, crosscheck, planning, reference): name-safe rich tables,
messages wrapped under their first word, vLLM's text made readable, the header naming model, target and release, the
numbered routes, and the Markdown row.

No name is ever split across lines: module, class and platform names sit in columns that do not wrap, every other
column wraps at spaces, and a table whose names cannot fit the terminal is drawn as one block per row instead
(`draw`); a shape or a block prints as '512×256', which has no space to wrap at. No line ends in a space
(`_print`): rich's padding to the console width stays out of logs."""

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
from fp8check.core.records import InspectReport
from fp8check.core.report.verdicts import detected, platform_text


# How a rejection fp8check did not read from vLLM's source is tagged (some reasons carry it themselves).
INFERENCE = "fp8check inference"


# The example platforms to pass instead of `--platform auto` on a host without an accelerator.
OTHER_TARGETS = "-p xpu, -p h100, -p mi300x"


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


def multiline(text: str) -> str:
    """vLLM's messages carry real newlines ('Reasons: \\n...'); keep them, escape everything else (a printed tuple
    is read out: frontdoor.readable)."""
    return "\n  ".join(escape(sentence(printable(line, 2000))) for line in readable(text).split("\n"))


def md_line(text: str) -> str:
    """One Markdown line: newlines folded, control characters escaped, a printed tuple read out."""
    return " ".join(sentence(printable(line, 2000)) for line in readable(text).split("\n"))


def print_details(console: Console, details: list[tuple[str, list[str]]]) -> None:
    """Under a table: the rows' errors, warnings and notes, indented; rows that carry the same lines (a refusal of
    every shape alike) are named together and their lines printed once."""
    grouped: dict[tuple[str, ...], list[str]] = {}
    for name, lines in details:
        grouped.setdefault(tuple(lines), []).append(name)
    for lines, names in grouped.items():
        say(console, f"[bold]{escape(', '.join(printable(name) for name in names))}[/bold]")
        for line in lines:
            say(console, line, 2)


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


def header(console: Console, report: InspectReport, verbose: bool, fetch: FetchStats | None, extra: str = "") -> None:
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


def footer_hint(console: Console, report: InspectReport) -> None:
    """On a CPU host: how to check the GPU meant instead, with the model as it was given."""
    if _cpu_host(report.platform):
        model = shlex.quote(printable(report.model, 500))
        say(console, f"[dim]checked for this CPU host; to check the target you mean: {OTHER_TARGETS} (any other "
                     f"target: fp8check matrix {escape(model)})[/dim]")


class Routes:
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


def kv_cache(layer) -> str:
    """The KV cache dtype as resolved, and what the cache holds when that says more: 'fp8_e4m3 → float8_e4m3fn'."""
    if layer.cache_dtype == layer.kv_cache_dtype:
        return layer.kv_cache_dtype
    return f"{layer.kv_cache_dtype} → {layer.cache_dtype}"


def suggestions(console: Console, report: InspectReport) -> None:
    for suggestion in report.suggestions:
        say(console, f"[cyan]suggestion:[/cyan] {escape(sentence(printable(suggestion.text, 2000)))}", 2)


def md_row(cells) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def message_lines(errors, warnings) -> list[str]:
    """A row's detail lines: its errors, then its warnings."""
    return ([f"[red]error:[/red] {multiline(e)}" for e in errors]
            + [f"[yellow]warning:[/yellow] {multiline(w)}" for w in warnings])
