"""Tables of the commands that read no checkpoint: `fp8check kernels` (the registry on one platform), `fp8check env`
(this host) and `fp8check rules` (the vLLM rule profiles)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from fp8check.cli.render_report import folding_table
from fp8check.core.errors import printable
from fp8check.core.planning.kernel_matrix import REPRESENTATIVE_K, REPRESENTATIVE_N, KernelTable
from fp8check.core.targets.envinfo import Probe
from fp8check.core.targets.profiles import PROFILES, PULL_REQUESTS, WHEEL_CHANGES
from fp8check.kernels.base import RoutingContext


def kernels_table(ctx: RoutingContext, tables: list[KernelTable], console: Console) -> None:
    """One grid per quantization key: yes, yes (auto) for what auto selects, or no [n] with reason n below."""
    assumed = ", ".join(f"{k}={'yes' if v is True else 'no' if v is False else v}"
                        for k, v in ctx.platform.assumptions.relevant(ctx.kind).items())
    console.print(f"[bold]platform={escape(ctx.platform.label)}  vllm={ctx.profile.name} ({ctx.profile.vllm})[/bold]"
                  + (f"  [dim]assuming {escape(assumed)}[/dim]" if assumed else "")
                  + (f"  disabled={escape(printable(', '.join(sorted(ctx.disabled)), 500))}" if ctx.disabled else ""))
    reasons: dict[str, int] = {}
    for table in tables:
        grid = Table(title=f"{table.quantization} (vLLM's order)", title_justify="left", header_style="bold")
        grid.add_column("kernel")
        for column in table.columns:
            grid.add_column(f"{column.weight}\n{column.activation}", overflow="fold")
        for row in table.rows:
            cells = []
            for cell in row.cells:
                if cell.ok:
                    cells.append("[green]yes (auto)[/green]" if cell.chosen else "yes")
                else:
                    number = reasons.setdefault(cell.reason or "", len(reasons) + 1)
                    cells.append(f"[red]no[/red] [{number}]")
            grid.add_row(row.kernel + ("" if row.verified else " [dim](inferred)[/dim]"), *cells)
        console.print(grid)
    for reason, number in reasons.items():
        console.print(f"  [{number}] {escape(printable(reason, 2000))}")
    console.print(f"[dim]for one N={REPRESENTATIVE_N}, K={REPRESENTATIVE_K} bfloat16-output layer: shape conditions "
                  "are decided per layer by `fp8check inspect`; (inferred): conditions not read from vLLM's source"
                  "[/dim]")


def env_table(probes: list[Probe], console: Console) -> None:
    grid = folding_table("component", "version", "details")
    for probe in probes:
        details = [f"{key}={_value(value)}" for key, value in probe.details.items() if key != "devices"]
        details += [", ".join(f"{k}={_value(v)}" for k, v in device.items()) for device in probe.details.get("devices", [])]
        if probe.error:
            details.append(f"[yellow]{escape(printable(probe.error, 500))}[/yellow]")
        grid.add_row(probe.name, escape(probe.version or ("-" if probe.found else "not found")),
                     "\n".join(details) or "-")
    console.print(grid)


def _value(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_value(v)}" for k, v in value.items()) + "}"
    return escape(printable(str(value), 500))


def rules_table(console: Console) -> None:
    """Each profile with the PRs it reflects and the changes read from its wheel whose PR was not pinned."""
    grid = Table(header_style="bold")
    for column in ("profile", "vLLM", "upstream PRs reflected", "changes read from the wheels", "summary"):
        grid.add_column(column)
    for p in PROFILES:
        grid.add_row(p.name + (" (latest)" if p is PROFILES[0] else ""), p.vllm,
                     " ".join(f"#{pr}" for pr in PULL_REQUESTS if p.has(pr)),
                     " ".join(c for c in WHEEL_CHANGES if p.has(c)), p.summary)
    console.print(grid)
    for pr, text in PULL_REQUESTS.items():
        console.print(f"[dim]#{pr}: {escape(text)}[/dim]")
    for change, text in WHEEL_CHANGES.items():
        console.print(f"[dim]{escape(change)}: {escape(text)}[/dim]")
