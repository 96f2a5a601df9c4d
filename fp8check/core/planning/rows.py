"""Collapsed rows: identical layers (linear, FusedMoE, attention) and their load runs across decoder blocks shown
once, as 'model.layers.{0..63}.mlp.down_proj', and the worst figure of such a row.

A planning view like the others: `diff` names its changed rows with it and `suggest` re-routes one layer per row;
the tables, Markdown and the CLI show the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, NamedTuple, Protocol, Sequence, TypeVar

from fp8check.core.records import AttentionReport, AttentionRun, LayerReport, MoEReport
from fp8check.core.vocabulary import layer_template

Shown = TypeVar("Shown")                                                # what a Row shows
Layer = TypeVar("Layer", LayerReport, MoEReport, LayerReport | MoEReport)  # what collapse() groups


class Named(Protocol):
    """A report record: a layer, a MoE, an attention layer or their load runs."""

    @property
    def name(self) -> str: ...


@dataclass(frozen=True)
class Row(Generic[Shown]):
    """Identical layers across decoder blocks, shown once: 'model.layers.{0..63}.mlp.down_proj'."""

    name: str
    count: int
    layer: Shown    # the first of them


def collapse(layers: Sequence[Layer]) -> list[Row[Layer]]:
    """Linear layers or FusedMoEs alike across decoder blocks (type, weight, route, the same messages) as one row
    each."""
    groups: dict[tuple, list[tuple[int | None, Layer]]] = {}
    for layer in layers:
        template, index = layer.template
        key = (template, layer.layer_type, layer.weight_dtype, layer.shape, layer.strategy_text, layer.activation,
               layer.scheme, layer.kernel, layer.rejected, tuple(without_index(e, index)
                                                                 for e in layer.errors + layer.warnings))
        groups.setdefault(key, []).append((index, layer))
    return [Row(collapsed_name(template, members), len(members), members[0][1])
            for (template, *_), members in groups.items()]


def collapse_attention(layers: Sequence[AttentionReport]) -> list[Row[AttentionReport]]:
    """Attention layers alike across decoder blocks (kind, shape, KV cache, method, scale names, backend, the same
    messages) as one row each: 'model.layers.{0..63}.self_attn.attn'."""
    groups: dict[tuple, list[tuple[int | None, AttentionReport]]] = {}
    for layer in layers:
        template, index = layer_template(layer.name)
        key = (template, layer.kind, layer.head_size, layer.num_heads, layer.num_kv_heads, layer.kv_cache_dtype,
               layer.cache_dtype, layer.kv_method, layer.scale_strategy, layer.backend, layer.rejected,
               tuple(without_index(text, index) for text in layer.scales + layer.errors + layer.warnings))
        groups.setdefault(key, []).append((index, layer))
    return [Row(collapsed_name(template, members), len(members), members[0][1])
            for (template, *_), members in groups.items()]


def without_index(text: str, index: int | None) -> str:
    """Messages differ only by the decoder-block index across blocks: the text with it removed, to compare."""
    return text if index is None else text.replace(f".{index}.", ".{i}.")


def collapsed_name(template: str, members: Sequence[tuple[int | None, str | Named]]) -> str:
    """The template with its members' block indices ('model.layers.{0..3,5}.mlp'), or the one member's own name.
    `members` are (block index, layer or run or name) pairs."""
    indices = [i for i, _ in members if i is not None]
    if indices and len(members) > 1:
        return template.replace("{i}", "{" + ranges(indices) + "}")
    only = members[0][1]
    return only if isinstance(only, str) else only.name


def ranges(indices: list[int]) -> str:
    """[0,1,2,3,5,7,8] -> '0..3,5,7..8'."""
    out = []
    ordered = sorted(set(indices))
    start = prev = ordered[0]
    for i in ordered[1:] + [None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.append(str(start) if start == prev else f"{start}..{prev}")
        if i is not None:
            start = prev = i
    return ",".join(out)


class RunRow(NamedTuple):
    """Runs of identical layers across decoder blocks, shown once, with their worst figures."""

    name: str
    runs: list


def collapse_runs(runs) -> list[RunRow]:
    groups: dict[tuple, list] = {}
    for run in runs:
        template, index = layer_template(run.name)
        key = (template, run.kernel, run.numerics, run.execution, run.status,
               tuple(without_index(e, index) for e in run.errors + run.warnings) if index is not None else run.name)
        groups.setdefault(key, []).append((index, run))
    return [RunRow(collapsed_name(template, members), [run for _, run in members])
            for (template, *_), members in groups.items()]


def collapse_attention_runs(runs: tuple[AttentionRun, ...]) -> list[RunRow]:
    """load's KV cache round trips of alike attention layers across decoder blocks, as one row each."""
    groups: dict[tuple, list] = {}
    for run in runs:
        template, index = layer_template(run.name)
        key = (template, run.kv_cache_dtype, run.cache_dtype, run.status,
               tuple(without_index(e, index) for e in run.errors + run.warnings) if index is not None else run.name)
        groups.setdefault(key, []).append((index, run))
    return [RunRow(collapsed_name(template, members), [run for _, run in members])
            for (template, *_), members in groups.items()]


def worst(values) -> float | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None
