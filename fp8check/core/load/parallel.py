"""load --tp N: N real torch.distributed ranks, each reading only its slice and running it, combined as vLLM does.

The parent plans (inspect already refused what vLLM would refuse), then every rank, for each module: reads its
slice (fp8check.core.model.sharding cuts it as vLLM's weight loaders do), checks the slice's values, processes it as
vLLM processes each rank's weights, runs the routed kernel's numerics on its shard, and joins the other ranks over
the process group the way the model does — all-gather of output columns for column-parallel layers, all-reduce of
partial sums for row-parallel ones. Rank 0 also reads the whole module and compares the joined output with the
unsharded fp32 reference (those reference bytes are counted apart: the rank's own bytes are only its slice).
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from fp8check.core.checkpoint.local import Checkpoint
from fp8check.core.errors import InputError
from fp8check.core.load.driver import (
    Outcome,
    Plan,
    activations,
    execution_label,
    fuse,
    judge,
    not_run,
    plan_for,
    prepare,
    references,
    run_kernel,
)
from fp8check.core.records import LayerRun, LoadOptions
from fp8check.core.records import LayerReport
from fp8check.core.model.modules import LinearModule
from fp8check.core.progress import module_progress
from fp8check.core.load.ranks import RankContext, RankFailure, run_ranks
from fp8check.core.model.sharding import RankReads, ShardingError, rank_reads
from fp8check.core.model.tp import tp_layout
from fp8check.core.load.weights import CheckpointFiles, read_rank_shards, read_shards, value_errors
from fp8check.kernels.base import RoutingContext
from fp8check.core.records import RankFigures



class RankJob(NamedTuple):
    """What every rank gets (pickled once per rank by spawn)."""

    folder: str
    modules: tuple[LinearModule, ...]
    plans: tuple[Plan | None, ...]
    reads: tuple[tuple[RankReads, ...] | None, ...]   # per module, every rank's reads
    platform_kind: str
    tokens: int
    seed: int
    out_dtype: torch.dtype
    quiet: bool


class ModuleResult(NamedTuple):
    """One module as one rank saw it; rank 0's carries the verdict."""

    figures: RankFigures
    errors: tuple[str, ...]
    run: LayerRun | None = None


def load_tensor_parallel(ckpt: Checkpoint, folder: str, modules: list[LinearModule],
                         layers: dict[str, LayerReport], ctx: RoutingContext, options: LoadOptions,
                         out_dtype: torch.dtype) -> list[LayerRun]:
    """Run the modules on options.inspect.tp ranks; a rank that fails, dies or hangs is a one-line input error."""
    tp = options.inspect.tp
    plans, reads, refused = [], [], {}
    for module in modules:  # every rank's reads are planned before any process starts
        plan = plan_for(module, layers[module.name], ckpt, ctx)
        try:
            every = plan and tuple(rank_reads(module, tp_layout(module, tp), r, plan.block) for r in range(tp))
        except ShardingError as exc:
            plan, every, refused[module.name] = None, None, f"not run: vLLM would fail loading it: {exc}"
        plans.append(plan)
        reads.append(every)
    device = str(options.device)
    job = RankJob(folder, tuple(modules), tuple(plans), tuple(reads), ctx.platform.kind, options.tokens, options.seed,
                  out_dtype, options.quiet)
    try:
        results = run_ranks(tp, run_rank, job, device=device, timeout_s=24 * 3600.0,
                            collective_timeout_s=options.rank_timeout_s)
    except RankFailure as exc:
        raise InputError(f"load --tp {tp}: {exc} (no rank is left running)") from None
    runs = []
    for i, module in enumerate(modules):
        if plans[i] is None:
            run = not_run(module, layers[module.name], options)
            runs.append(run._replace(errors=(refused[module.name],)) if module.name in refused else run)
            continue
        per_rank = [result[i] for result in results]
        run = per_rank[0].run
        rank_errors = tuple(e for r in per_rank[1:] for e in r.errors if e not in run.errors)
        status = "FAIL" if rank_errors else run.status
        runs.append(run._replace(kernel=layers[module.name].kernel, status=status, errors=run.errors + rank_errors,
                                 ranks=tuple(r.figures for r in per_rank),
                                 bytes_read=sum(r.figures.bytes_read for r in per_rank)))
    return runs


def run_rank(rank: RankContext, job: RankJob) -> list[ModuleResult | None]:
    """One rank: every module in order, in step with the others (every rank joins every collective)."""
    device = torch.device(rank.device)
    files = CheckpointFiles(job.folder)
    reference_files = CheckpointFiles(job.folder)
    results: list[ModuleResult | None] = []
    show = rank.rank == 0 and not job.quiet
    with module_progress(not show) as progress:
        for i, (module, plan, every) in enumerate(zip(job.modules, job.plans, job.reads)):
            if progress:
                progress(module.name, i, len(job.modules), files.bytes_read)
            results.append(None if plan is None else _run_module(rank, module, plan, every, job, device, files,
                                                                  reference_files))
            files.release()
            reference_files.release()
    return results


def _run_module(rank: RankContext, module: LinearModule, plan: Plan, every: tuple[RankReads, ...], job: RankJob,
                device: torch.device, files: CheckpointFiles, reference_files: CheckpointFiles) -> ModuleResult:
    import torch.distributed as dist

    reads = every[rank.rank]
    before = files.bytes_read
    shards = read_rank_shards(reads, files)
    bytes_read = files.bytes_read - before
    errors = tuple(f"rank {rank.rank}: {e}" for e in value_errors(shards))
    x = activations(module.name, module.input_size, job.tokens, job.seed, job.out_dtype)
    execution, ms = None, None
    if errors:  # every rank must join the same collectives: a rank with bad values joins with zeros
        partial = torch.zeros(x.shape[0], reads.output_width, dtype=job.out_dtype, device=device)
    else:
        fused = fuse(shards, plan)
        operands = prepare(plan, fused, x[:, reads.input_cols[0]:reads.input_cols[1]], device)
        # vLLM adds a row-parallel layer's bias on rank 0 only, before the all-reduce.
        execution, ms = run_kernel(plan, fused, operands, add_bias=reads.combine != "all_reduce" or reads.adds_bias)
        partial = execution.output
        del fused, operands
    del shards
    joined = _join(partial, every, module, rank, device)
    failed = torch.tensor([1 if errors else 0], device=device)
    dist.all_reduce(failed, group=rank.group)
    figures = RankFigures(rank.rank, bytes_read, ms)
    if rank.rank != 0:
        return ModuleResult(figures, errors)
    if int(failed) or errors:
        return ModuleResult(figures, errors, LayerRun(name=module.name, kernel=None, numerics=plan.numerics,
                                                      execution=None, emulated=False, tokens=job.tokens,
                                                      status="FAIL", errors=errors))
    whole = fuse(read_shards(module, reference_files), plan)
    splits = tuple(r.input_cols for r in every) if reads.combine == "all_reduce" else None
    reference, checkpoint, unquantized = references(plan, whole, prepare(plan, whole, x, device, splits))
    verdict = judge(module.name, plan, Outcome(joined, reference, checkpoint, unquantized, execution, ms),
                    job.out_dtype)
    label, emulated = execution_label(plan, execution, device, job.platform_kind)
    run = LayerRun(name=module.name, kernel=None, numerics=plan.numerics, execution=label, emulated=emulated,
                   tokens=job.tokens, status=verdict.status, rel_error=verdict.rel_error, bound=verdict.bound,
                   processing_error=verdict.processing_error, quant_error=verdict.quant_error, ms=ms,
                   errors=verdict.errors, warnings=verdict.warnings, notes=whole.notes + reads.notes)
    return ModuleResult(figures, errors, run)


def _join(partial: torch.Tensor, every: tuple[RankReads, ...], module: LinearModule, rank: RankContext,
          device: torch.device) -> torch.Tensor:
    """The layer's full output on every rank, combined as the model combines it."""
    import torch.distributed as dist

    combine = every[0].combine
    if combine == "none":
        return partial
    if combine == "all_reduce":
        # vLLM all-reduces the ranks' outputs in the model dtype; gloo has no bf16 sum, so the bf16 partials are
        # summed in fp32 and rounded once, which differs from a bf16 ring sum by at most one rounding.
        total = partial.float()
        dist.all_reduce(total, group=rank.group)
        return total.to(partial.dtype)
    width = max(r.output_width for r in every)  # all_gather needs one shape: pad, then place by column spans
    padded = torch.zeros(partial.shape[0], width, dtype=torch.float32, device=device)
    padded[:, :partial.shape[1]] = partial.float()
    gathered = [torch.empty_like(padded) for _ in every]
    dist.all_gather(gathered, padded, group=rank.group)
    full = torch.zeros(partial.shape[0], sum(module.output_sizes), dtype=torch.float32, device=device)
    for output, theirs in zip(gathered, every):
        for shard in theirs.shards:
            (r0, r1), (l0, l1) = shard.rank_cols, shard.layer_cols
            full[:, l0:l1] = output[:, r0:r1]
    return full.to(partial.dtype)
