"""`fp8check matrix`: where can this checkpoint be served? One read of the headers, then a grid of platform x TP:
loads or not, the kernel(s), the first reason it does not, and the memory fit.

Each cell is inspect's own routing (fp8check.core.routing.inspect) of the same in-memory Checkpoint with another platform
and TP size: the headers are read once, before the first cell. Exit status: 0 when at least one cell loads (there
is somewhere to serve it), 1 when none does.
"""

from __future__ import annotations

from typing import NamedTuple

from fp8check.core.checkpoint.local import Checkpoint
from fp8check.core.model.memory import MemoryFit
from fp8check.core.records import InspectOptions, InspectReport
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import Platform


class Cell(NamedTuple):
    platform: str
    tp: int
    ok: bool
    kernels: tuple[str, ...]          # linear kernels and FusedMoE experts classes the layers route to
    reason: str | None                # the first reason it does not load
    memory: MemoryFit | None


class Matrix(NamedTuple):
    model: str
    vllm: str
    platforms: tuple[str, ...]
    tps: tuple[int, ...]
    cells: tuple[Cell, ...]

    @property
    def ok(self) -> bool:
        return any(cell.ok for cell in self.cells)


def first_reason(report: InspectReport) -> str | None:
    """Model-level gates first (heads, capability, index), then the first failing module (linear, FusedMoE,
    attention), memory last."""
    memory_error = report.memory.error if report.memory else None
    for error in report.errors:
        if error != memory_error:
            return error
    for layer in report.layers + report.moes + report.attention:
        if layer.errors:
            return f"{layer.name}: {layer.errors[0]}"
    return memory_error


def cell(report: InspectReport) -> Cell:
    kernels = sorted({m.kernel for m in report.layers + report.moes if m.kernel})
    return Cell(report.platform.label, report.tp, report.ok, tuple(kernels), first_reason(report), report.memory)


def matrix(ckpt: Checkpoint, options: InspectOptions, platforms: list[Platform], tps: list[int]) -> Matrix:
    cells = tuple(cell(inspect_checkpoint(ckpt, options._replace(platform=platform, tp=tp)))
                  for platform in platforms for tp in tps)
    return Matrix(ckpt.source, options.profile.name, tuple(p.label for p in platforms), tuple(tps), cells)
