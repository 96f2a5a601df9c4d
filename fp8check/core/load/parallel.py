"""load --tp / --ep, for linear layers and FusedMoE experts alike: one launcher (the ranks started, a failed rank
as one input error, every rank's result merged into rank 0's run) and one combine rule.

The rule, as gpt-fast's tp.py has it: a parallel style is the weight dimension a rank narrows and the collective
that joins the ranks' outputs. Column-parallel: output rows narrowed, outputs all-gathered; row-parallel: input
columns narrowed, partial sums all-reduced; replicated: nothing. Linear layers are cut by
fp8check.core.model.sharding (its RankReads name their collective); an expert's w1/w3 are column-parallel and its
w2 row-parallel, so its output joins with one all-reduce (the w13 columns and the intermediate ride in the same
sum, a placement: every rank's part is zero outside its own columns). The ranks themselves are ranks.py's.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import torch
import torch.distributed as dist

from fp8check.core.errors import InputError
from fp8check.core.load import ranks
from fp8check.core.records import LayerRun, LoadOptions, RankFigures
from fp8check.core.vocabulary import Status


class RankResult(NamedTuple):
    """One layer as one rank saw it; rank 0's carries the run."""

    figures: RankFigures
    errors: tuple[str, ...]
    run: LayerRun | None = None


def run_parallel(target: Callable, job, options: LoadOptions) -> list:
    """`target(rank, job)` on options.inspect.tp real ranks, their results in rank order; a rank that fails, dies
    or hangs is a one-line input error."""
    tp = options.inspect.tp
    try:
        return ranks.run_ranks(tp, target, job, device=str(options.device), timeout_s=24 * 3600.0,
                               collective_timeout_s=options.rank_timeout_s)
    except ranks.RankFailure as exc:
        raise InputError(f"load --tp {tp}: {exc} (no rank is left running)") from None


def merged(per_rank: list[RankResult]) -> LayerRun:
    """Rank 0's run, with every other rank's own errors, every rank's figures and bytes, and the slowest rank's time
    (the layer's, as the ranks run together; a FusedMoE's rank 0 may hold no expert under --ep)."""
    run = per_rank[0].run
    assert run is not None, "rank 0 reports every module the ranks ran"
    rank_errors = tuple(e for r in per_rank[1:] for e in r.errors if e not in run.errors)
    figures = tuple(r.figures for r in per_rank)
    timed = [f.ms for f in figures if f.ms is not None]
    return run._replace(status=Status.FAIL if rank_errors else run.status, errors=run.errors + rank_errors,
                        ranks=figures, bytes_read=sum(f.bytes_read for f in figures),
                        ms=max(timed) if timed else run.ms)


def any_rank_failed(errors: tuple[str, ...], device: torch.device, group) -> bool:
    """Whether any rank found errors (every rank joins: one all-reduce)."""
    failed = torch.tensor([1 if errors else 0], device=device)
    dist.all_reduce(failed, group=group)
    return bool(int(failed))


def combine(collective: str, part: torch.Tensor, group, every: tuple = (), width: int = 0) -> torch.Tensor:
    """The layer's full output on every rank, joined as the model joins it. all_gather places each rank's columns
    by its RankReads (`every`, one per rank) in `width` output columns."""
    if collective == "none":
        return part
    if collective == "all_reduce":
        # vLLM all-reduces the ranks' outputs in the model dtype; gloo has no bf16 sum, so bf16 partials are summed
        # in fp32 and rounded once, which differs from a bf16 ring sum by at most one rounding.
        total = part.float()
        dist.all_reduce(total, group=group)
        return total.to(part.dtype)
    padded = torch.zeros(part.shape[0], max(r.output_width for r in every), dtype=torch.float32, device=part.device)
    padded[:, :part.shape[1]] = part.float()  # all_gather needs one shape: pad, then place by column spans
    gathered = [torch.empty_like(padded) for _ in every]
    dist.all_gather(gathered, padded, group=group)
    full = torch.zeros(part.shape[0], width, dtype=torch.float32, device=part.device)
    for output, theirs in zip(gathered, every):
        for shard in theirs.shards:
            (r0, r1), (l0, l1) = shard.rank_cols, shard.layer_cols
            full[:, l0:l1] = output[:, r0:r1]
    return full.to(part.dtype)
