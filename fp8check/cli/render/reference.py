"""Tables of the commands that read no checkpoint: `fp8check kernels` (the registry on one platform), `fp8check env`
(this host) and `fp8check rules` (the vLLM rule profiles)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from fp8check.cli.render.tables import Column, draw, say, vllm_release, yes_no
from fp8check.core.errors import printable
from fp8check.core.planning.kernel_matrix import REPRESENTATIVE_K, REPRESENTATIVE_N, KernelTable
from fp8check.core.targets.envinfo import Probe
from fp8check.core.targets.profiles import PROFILES, PULL_REQUESTS, WHEEL_CHANGES
from fp8check.kernels.base import RoutingContext


def kernels_table(ctx: RoutingContext, tables: list[KernelTable], console: Console) -> None:
    """One grid per quantization key: yes (auto) for what auto selects, yes, or no [n] with reason n below."""
    assumed = ", ".join(f"{k}={yes_no(v)}" for k, v in ctx.platform.assumptions.relevant(ctx.kind).items())
    say(console, f"[bold]{escape(ctx.platform.label)}, vLLM {escape(vllm_release(ctx.profile))}[/bold]"
                 + (f"  [dim]assuming {escape(assumed)}[/dim]" if assumed else "")
                 + (f"  disabled={escape(printable(', '.join(sorted(ctx.disabled)), 500))}" if ctx.disabled else ""))
    reasons: dict[str, int] = {}
    for table in tables:
        rows = []
        for row in table.rows:
            cells = []
            for cell in row.cells:
                if cell.ok:
                    cells.append("[green]yes (auto)[/green]" if cell.chosen else "yes")
                else:
                    number = reasons.setdefault(cell.reason or "", len(reasons) + 1)
                    cells.append(f"[red]no[/red] {escape(f'[{number}]')}")
            rows.append([row.kernel + ("" if row.verified else " [dim](inferred)[/dim]"), *cells])
        console.print()
        say(console, f"[bold]{escape(table.quantization)}[/bold] (vLLM's order)")
        draw(console, [Column("kernel", True), *(Column(f"{c.weight} / {c.activation}") for c in table.columns)],
             rows)
    for reason, number in reasons.items():
        say(console, f"{escape(f'[{number}]')} {escape(printable(reason, 2000))}", 2)
    say(console, f"[dim]for one N={REPRESENTATIVE_N}, K={REPRESENTATIVE_K} bfloat16-output layer: shape conditions "
                 "are decided per layer by `fp8check inspect`; (inferred): conditions not read from vLLM's source"
                 "[/dim]")


def env_table(probes: list[Probe], console: Console) -> None:
    rows = []
    for probe in probes:
        details = [f"{key}={_value(value)}" for key, value in probe.details.items() if key != "devices"]
        details += [", ".join(f"{k}={_value(v)}" for k, v in device.items())
                    for device in probe.details.get("devices", [])]
        if probe.error:
            details.append(f"[yellow]{escape(printable(probe.error, 500))}[/yellow]")
        rows.append([probe.name, escape(probe.version or ("-" if probe.found else "not found")),
                     "\n".join(details) or "-"])
    draw(console, [Column("component", True), Column("version", True), Column("details")], rows)


def _value(value) -> str:
    """A probed value as every other command prints it: yes / no, '-' for none."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_value(v)}" for k, v in value.items()) + "}"
    return escape(printable(yes_no(value), 500))


def rules_table(console: Console) -> None:
    """Each profile with what its release added to the one before it (a profile is its predecessor plus these):
    the upstream PRs it reflects and the changes read from its wheel whose PR was not pinned. `--format json`
    lists each profile's whole set."""
    rows = []
    for index, profile in enumerate(PROFILES):
        before = PROFILES[index + 1] if index + 1 < len(PROFILES) else None
        rows.append([profile.name + (" (latest)" if index == 0 else ""), profile.vllm,
                     " ".join(f"#{pr}" for pr in _added(profile, before, PULL_REQUESTS)) or "-",
                     " ".join(_added(profile, before, WHEEL_CHANGES)) or "-", escape(profile.summary)])
    draw(console, [Column("profile", True), Column("vLLM", True), Column("upstream PRs added"),
                   Column("changes added (read from the wheels)"), Column("summary")], rows)
    say(console, "[dim]each release has every PR and change of the releases below it, plus those it added[/dim]")
    for pr, text in PULL_REQUESTS.items():
        say(console, f"[dim]#{pr}: {escape(text)}[/dim]")
    for change, text in WHEEL_CHANGES.items():
        say(console, f"[dim]{escape(change)}: {escape(text)}[/dim]")


def _added(profile, before, changes) -> list:
    """The changes `profile` has that the release before it (None: none before) did not."""
    return [change for change in changes if profile.has(change) and not (before and before.has(change))]
