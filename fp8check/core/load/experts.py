"""load for FusedMoE layers: a few experts of every MoE layer vLLM would build (all with --all-experts), each read
on its own, checked, processed as vLLM's FP8 MoE method processes it, and run as w13 -> SiLU-and-mul -> w2 through
the numerics of the experts class inspect selected, against fp32.

Sources, vLLM 0.33.0 (0.28.0 identical where cited): quantization/fp8.py Fp8MoEMethod and compressed_tensors/
compressed_tensors_moe/compressed_tensors_moe_w8a8_fp8.py process_weights_after_loading (per-tensor w13: the max
of the w1 and w3 scales, both parts requantized to it by process_fp8_weight_tensor_strategy_moe, which dequantizes
in float16 with per_tensor_dequantize; static input scales: one max over every expert, amax_for_moe_activation_quant);
fused_moe/routed_experts.py _load_w13 / _load_w2 (a TP rank narrows w1/w3 rows and w2 columns at
rank * (size // tp), scales the same way, per-channel w2 scales and per-tensor scales whole) and the upsampling of
block scales to the refined grid before narrowing; fused_moe/utils.py moe_kernel_quantize_input (activations:
1 x block_k token groups for block weights, per token for per-channel weights, else per tensor, static or dynamic;
the same for the intermediate before w2); experts/triton_moe.py (SiLU-and-mul fused with the 1x128 group
quantization for [128, 128] blocks: the intermediate is quantized without a bf16 rounding in between; for every
other experts class fp8check rounds the intermediate to the model dtype first, as Triton's unfused path does: an
inference for DeepGEMM, CUTLASS, FlashInfer, TRT-LLM and AITER, whose kernels are not in vLLM's Python source).

Not modelled, on purpose: routing. Every selected expert gets the same activations (the layer's seeded --tokens
rows), not the tokens a router would send it, so a per-tensor dynamic scale of the intermediate is taken over that
expert's rows (vLLM takes it over every routed row of the batch). One expert is held at a time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import torch
import torch.nn.functional as F

from fp8check.core.formats.base import UNQUANTIZED_MOE
from fp8check.core.formats.shared import ROUTED_EXPERTS
from fp8check.core.load import gemm
from fp8check.core.load.against import worst_expert
from fp8check.core.load.gemm import MAX_SCALE, MOE_MAX_SCALE, Fused, Recipe
from fp8check.core.load.parallel import RankResult, any_rank_failed, combine, merged, run_parallel
from fp8check.core.load.weights import CheckpointFiles, ShardTensors, value_errors
from fp8check.core.model.modules import MoEModule, Shard
from fp8check.core.model.sharding import COLUMN_STYLE, ROW_STYLE, WEIGHT_SCALES, TensorRead, rank_span
from fp8check.core.model.tp import expert_ranges
from fp8check.core.records import ExpertRun, LayerRun, LoadOptions, MoEReport, RankFigures
from fp8check.core.routing.moe import DEFAULT_LEAVES, ExpertShapes, expert_shapes
from fp8check.core.vocabulary import Status, Strategy
from fp8check.kernels.numerics import gemm as numerics
from fp8check.kernels.quant_keys import QuantKey, kFp8DynamicTensorSym, kFp8DynamicTokenSym, kFp8StaticTensorSym

if TYPE_CHECKING:  # annotations only
    from fp8check.core.targets.profiles import RuleProfile

# w1, w3 (gate, up) are column-parallel, w2 (down) row-parallel: how a rank narrows each, and how outputs join.
EXPERT_STYLES = {"gate": COLUMN_STYLE, "up": COLUMN_STYLE, "down": ROW_STYLE}  # FusedMoE w13 column, w2 row


class MoEJob(NamedTuple):
    """One FusedMoE to run (pickled to every rank under --tp)."""

    name: str
    kernel: str | None                 # the experts class inspect selected
    recipe: Recipe
    experts: tuple[tuple[int, tuple[Shard, Shard, Shard]], ...]   # (expert id, (gate, up, down)) in run order
    input_scales: tuple[tuple[TensorRead, ...], tuple[TensorRead, ...]]  # every expert's w1/w3, w2 input_scale
    hidden: int
    intermediate: int
    num_experts: int


# ------------------------------------------------------------------------------------------------- recipes

def expert_recipe(report: MoEReport, method_strategy: Strategy | None, static_input: bool) -> Recipe:
    """The recipe of the experts class inspect selected: its numerics, and how its scheme quantizes activations."""
    kind = numerics.moe_numerics(report.kernel, report.block if method_strategy == Strategy.BLOCK else None) \
        if report.kernel and method_strategy is not None else numerics.UNQUANTIZED
    activation = None
    if kind in (numerics.BLOCK, numerics.SCALED_MM):
        if method_strategy == Strategy.BLOCK and report.block:
            activation = QuantKey(False, (1, report.block[1]))
        elif method_strategy == Strategy.CHANNEL:
            activation = kFp8DynamicTokenSym
        else:
            activation = kFp8StaticTensorSym if static_input else kFp8DynamicTensorSym
    return Recipe(kind, method_strategy, report.block, None, activation,
                  report.kernel == "TritonExperts" and report.block == (128, 128), report.moe_tp, report.ep)


def moe_jobs(moes: tuple[MoEModule, ...], reports: dict[str, MoEReport], profile: RuleProfile,
             all_experts: bool) -> tuple[list[MoEJob], dict[str, LayerRun]]:
    """A job per FusedMoE vLLM would build; a `not run` LayerRun for the others, with vLLM's reason. Experts run:
    every one with `all_experts`, else the first and the last (under --ep: on the first and the last rank). An
    online method's experts are quantized at load as its process_weights_after_loading does (per expert: one w13
    scale over w1 and w3, one w2 scale; the amax reduced over the MoE's TP ranks from 0.28)."""
    jobs, refused = [], {}
    for moe in moes:
        report = reports[moe.name]
        shapes = expert_shapes(moe)
        base = LayerRun(name=moe.name, kernel=report.kernel, numerics=None, execution=None, emulated=False, tokens=0,
                        status=Status.NOT_RUN, num_experts=report.num_experts)
        if report.errors:
            refused[moe.name] = base._replace(errors=(f"not run: vLLM would not build this layer: {report.errors[0]}",))
            continue
        if report.unjudged:
            refused[moe.name] = base._replace(errors=(f"not run: not judged: {report.unjudged}",))
            continue
        if moe.layer_class != ROUTED_EXPERTS:  # the model's own experts class loads them (Arch.experts_class)
            refused[moe.name] = base._replace(errors=(
                f"not run: {moe.layer_class}'s own weight loader (experts stored flattened, the down projection "
                "transposed) is not emulated",))
            continue
        method = report.quant_method  # the method inspect routed the experts with (None: stored fused)
        unquantized = method is not None and method.method == UNQUANTIZED_MOE
        if method is None or (report.kernel is None and not unquantized) or not (unquantized or method.assignment):
            refused[moe.name] = base._replace(errors=(f"not run: fp8check does not run {report.scheme} experts "
                                                      f"({'stored fused' if shapes.fused else 'not FP8 e4m3'})",))
            continue
        strategy = None if unquantized or method.assignment is None else method.assignment.strategy
        recipe = expert_recipe(report, strategy, method.activation_key == kFp8StaticTensorSym)
        if method.assignment is not None and method.assignment.online:
            recipe = recipe._replace(online=gemm.online_mode(profile))
        if report.moe_tp > 1 and report.intermediate_per_rank and \
                report.intermediate_per_rank * report.moe_tp != shapes.intermediate:  # moe-block-pad
            recipe = recipe._replace(shard_rows=report.intermediate_per_rank)
        if recipe.block and method.block and recipe.block != method.block:
            recipe = recipe._replace(refine=(method.block[0] // recipe.block[0], method.block[1] // recipe.block[1]))
        ids = sorted(shapes.experts)
        chosen = ids if all_experts else sorted({ids[0], ids[-1]})
        experts = tuple((e, _roles(shapes, e)) for e in chosen)
        jobs.append(MoEJob(moe.name, report.kernel, recipe, experts, _input_scales(shapes), shapes.hidden,
                           shapes.intermediate, len(ids)))
    return jobs, refused


def _roles(shapes: ExpertShapes, expert: int) -> tuple[Shard, Shard, Shard]:
    leaves = shapes.experts[expert]
    gate, up, down = (leaves[shapes.leaves.get(role, default)] for role, default in DEFAULT_LEAVES)
    return gate, up, down


def _input_scales(shapes: ExpertShapes) -> tuple[tuple[TensorRead, ...], tuple[TensorRead, ...]]:
    """Every expert's static input scales (scalars): vLLM reduces them to one max per layer."""
    w13, w2 = [], []
    for e in sorted(shapes.experts):
        gate, up, down = _roles(shapes, e)
        w13 += [TensorRead(s.side["input_scale"]) for s in (gate, up) if "input_scale" in s.side]
        if "input_scale" in down.side:
            w2.append(TensorRead(down.side["input_scale"]))
    return tuple(w13), tuple(w2)


def tensor_names(job: MoEJob) -> set[str]:
    """What the selected experts need from the checkpoint (a Hub repo downloads only their shards)."""
    names = {r.tensor.name for reads in job.input_scales for r in reads}
    for _, shards in job.experts:
        names |= {t.name for s in shards for t in (s.weight, *s.side.values())}
    return names


def expert_owner(expert: int, num_experts: int, ep: int) -> int:
    """The expert-parallel rank that holds `expert` (determine_expert_map: model.tp.expert_ranges)."""
    return next(rank for rank, held in enumerate(expert_ranges(num_experts, ep)) if expert in held)


# --------------------------------------------------------------------------------------------- reading

def expert_span(size: int, tp: int, rank: int, per: int | None) -> tuple[int, int]:
    """The intermediate dimension's slice a rank loads: rank_span, or with `per` vLLM's block-aligned padded TP
    shard (routed_experts.py _load_model_weight_or_group_weight_scale under tp_shard_with_padding: `per` rows from
    rank * per, clipped to the checkpoint's; the rest of the rank's parameter is zero weights, unit scales)."""
    if per is None:
        return rank_span(size, tp, rank)
    start = min(per * rank, size)
    return start, min(start + per, size)


def read_expert(shards: tuple[Shard, Shard, Shard], recipe: Recipe, files: CheckpointFiles, tp: int, rank: int
                ) -> tuple[ShardTensors, ShardTensors, ShardTensors]:
    """One expert's gate, up and down as TP rank `rank` of `tp` loads them (tp 1: whole)."""
    out = []
    for (role, style), shard in zip(EXPERT_STYLES.items(), shards):
        span = expert_span(shard.weight.shape[style.dim], tp, rank, recipe.shard_rows) if tp > 1 else None
        weight = files.read(TensorRead(shard.weight, **({"cols" if style.dim else "rows": span} if span else {})))
        scale_suffix = next((s for s in WEIGHT_SCALES if s in shard.side), None)
        scale = _read_scale(shard.side[scale_suffix], role, recipe, files, tp, rank) if scale_suffix else None
        input_scale = files.read(TensorRead(shard.side["input_scale"])) if "input_scale" in shard.side else None
        out.append(ShardTensors(shard.name, weight, scale, input_scale, scale_suffix=scale_suffix or "weight_scale"))
    gate, up, down = out
    return gate, up, down


def _read_scale(info, role: str, recipe: Recipe, files: CheckpointFiles, tp: int, rank: int) -> torch.Tensor:
    """A scale as the rank's parameter holds it: per-tensor scales and a per-channel w2 scale ([hidden, 1] or
    Quark's 1-D [hidden]) whole; block and channel scales narrowed like the weight (only the rank's slice is read),
    except under a refined grid (moe-block-refine), where vLLM upsamples the whole scale first (repeat_interleave,
    lossless), then narrows."""
    per_channel_rows = len(info.shape) == 1 and info.shape[0] > 1
    if tp == 1 and not recipe.refine or role == "down" and recipe.strategy == Strategy.CHANNEL:
        return files.read(TensorRead(info))
    if per_channel_rows:
        return files.read(TensorRead(info, rows=rank_span(info.shape[0], tp, rank)))
    if len(info.shape) != 2:
        return files.read(TensorRead(info))
    dim = EXPERT_STYLES[role].dim
    if not recipe.refine:
        blocks = recipe.shard_rows // recipe.block[0] if recipe.shard_rows and recipe.block else None
        span = expert_span(info.shape[dim], tp, rank, blocks)
        return files.read(TensorRead(info, **({"cols" if dim else "rows": span})))
    scale = files.read(TensorRead(info)).repeat_interleave(recipe.refine[0], 0).repeat_interleave(recipe.refine[1], 1)
    start, stop = rank_span(scale.shape[dim], tp, rank)
    return scale[:, start:stop] if dim else scale[start:stop]


def layer_input_scales(job: MoEJob, files: CheckpointFiles) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """amax_for_moe_activation_quant: the max over every expert's input scale, once for w13 and once for w2."""
    out = []
    for reads in job.input_scales:
        out.append(torch.stack([files.read(r).float().reshape(()) for r in reads]).max() if reads else None)
    return out[0], out[1]


class ExpertWeights(NamedTuple):
    w13: Fused                         # [w1 | w3] as vLLM stacks them, processed
    w2: Fused


def process(gate: ShardTensors, up: ShardTensors, down: ShardTensors, recipe: Recipe,
            input_scales: tuple[torch.Tensor | None, torch.Tensor | None], reduce_amax=None) -> ExpertWeights:
    """w13 = [w1 | w3] as vLLM stacks it, then process_weights_after_loading's changes to the numbers (w2 alone
    is never requantized: MAX_SCALE keeps one shard as stored). `reduce_amax`: an online method's amax
    reduction over the MoE's TP ranks (amax_for_moe_weight_quant)."""
    a1, a2 = input_scales
    # Per-channel w13 rows are whole on every rank: Fp8PtpcOnlineMoEMethod reduces only w2's amax.
    w13_reduce = None if recipe.strategy == Strategy.CHANNEL else reduce_amax
    return ExpertWeights(gemm.fuse((gate, up), recipe, a1, MOE_MAX_SCALE, w13_reduce),
                         gemm.fuse((down,), recipe, a2, MAX_SCALE, reduce_amax))


def _moe_amax_reduction(recipe: Recipe, tp: int, group):
    """amax_for_moe_weight_quant on a rank that holds a TP slice of an expert (0.28+, online methods): an
    all-reduce (max) over the MoE's TP ranks; none under EP, where each rank holds whole experts."""
    if recipe.online != "global" or tp == 1:
        return None
    return gemm.max_all_reduce(group)


# ---------------------------------------------------------------------------------------------- numerics

class ExpertOutputs(NamedTuple):
    """One rank's part of one expert, placed in the full expert's columns so ranks can be summed."""

    w13_out: torch.Tensor              # [M, 2I] fp32 (this rank's gate and up columns, zeros elsewhere)
    intermediate: torch.Tensor         # [M, I] fp32: the intermediate as w2 sees it (dequantized when quantized)
    output: torch.Tensor               # [M, H] this rank's partial sum, in the model dtype
    execution: numerics.Execution
    ms: float
    references: tuple | None = None    # (w13 reference, w2 reference, all-fp32 expert), when they rode along


def run_expert(recipe: Recipe, weights: ExpertWeights, x: torch.Tensor, device: torch.device, intermediate: int,
               gate_cols: tuple[int, int], with_references: bool = False) -> ExpertOutputs:
    """w13 -> SiLU-and-mul -> (quantize) -> w2 on `device`, for this rank's columns `gate_cols` of the intermediate.
    `with_references` (the whole expert): where the numerics are an fp32 loop over the codes anyway (block
    emulation), judge_expert's reference rows ride along in the same passes, as linear.run_kernel does."""
    x = x.to(device)
    w13, w2 = gemm.on_device(weights.w13.weights, device), gemm.on_device(weights.w2.weights, device)
    start = gemm.clock(device)
    x_q, x_s, _ = gemm.quantize(x, recipe, w13.input_scale)
    m = x.shape[0]
    ride = with_references and weights.w13.checkpoint is None
    # An fp32 emulation's unrounded output is the reference of its own operands (Execution.exact); the all-fp32
    # expert's rows ride along: the model-dtype activations through w13, then their SiLU-and-mul through w2.
    first = gemm.run_recipe(recipe, w13, x, x_q, x_s, also=x.float() if ride else None)
    h = first.output
    half = h.shape[1] // 2
    act = F.silu(h[:, :half].float()) * h[:, half:].float()   # silu_and_mul computes in fp32
    if not recipe.fused_silu_quant or recipe.activation is None:
        act = act.to(x.dtype)                                  # ... and writes the model dtype
    i_q, i_s, i_ref = gemm.quantize(act, recipe, w2.input_scale)
    rows = None
    if first.also is not None and first.exact is not None:
        rows = F.silu(first.also[:, :half]) * first.also[:, half:]
    second = gemm.run_recipe(recipe, w2, act.to(x.dtype), i_q, i_s, also=rows)
    references = (None if second.also is None or second.exact is None else
                  (first.exact, second.exact, second.also))
    ms = (gemm.clock(device) - start) * 1000
    a, b = gate_cols
    w13_out = torch.zeros(m, 2 * intermediate, dtype=torch.float32, device=device)
    w13_out[:, a:b] = h[:, :half].float()
    w13_out[:, intermediate + a:intermediate + b] = h[:, half:].float()
    full = torch.zeros(m, intermediate, dtype=torch.float32, device=device)
    full[:, a:b] = i_ref
    emulation = first.emulation or second.emulation
    return ExpertOutputs(w13_out, full, second.output, first._replace(emulation=emulation, also=None), ms, references)


def judge_expert(name: str, recipe: Recipe, weights: ExpertWeights, x: torch.Tensor, joined: ExpertOutputs,
                 out_dtype: torch.dtype) -> gemm.Verdict:
    """Each GEMM against fp32 of the same operands: w13 against the same quantized activations, w2 against the
    intermediate exactly as the kernel quantized it. Both within the numerics' bound (2u block / scaled-mm, 4u
    weight-only: one GEMM each, as for linear layers). The quantization error, for information, compares the
    output with an all-fp32 expert (model-dtype activations, an unquantized intermediate, the checkpoint's weights)."""
    device = joined.output.device
    x = x.to(device)
    w13, w2 = gemm.on_device(weights.w13.weights, device), gemm.on_device(weights.w2.weights, device)
    original = weights.w13.checkpoint
    original = gemm.on_device(original, device) if original is not None else None
    _, _, x_ref = gemm.quantize(x, recipe, w13.input_scale)
    if joined.references is not None:
        ref13, ref2, exact = joined.references
    else:
        ref13, ref2 = gemm.product(recipe, x_ref, w13), gemm.product(recipe, joined.intermediate, w2)
        h = gemm.product(recipe, x.float(), original if original is not None else w13)
        half = h.shape[1] // 2
        exact = gemm.product(recipe, F.silu(h[:, :half]) * h[:, half:], w2)
    processing = None
    if original is not None:
        processing = gemm.relative_error(ref13, gemm.product(recipe, x_ref, original))
    return gemm.judge(name, recipe, out_dtype, joined.output,
                      (("w13 (gate/up)", joined.w13_out, ref13), ("w2 (down)", joined.output, ref2)),
                      processing, MOE_MAX_SCALE, gemm.relative_error(joined.output, exact))


def _expert_run(expert: int, job: MoEJob, weights: ExpertWeights, x: torch.Tensor, joined: ExpertOutputs,
                out_dtype: torch.dtype, bytes_read: int, ms: float | None, rank: int | None = None) -> ExpertRun:
    v = judge_expert(f"{job.name}.{expert}", job.recipe, weights, x, joined, out_dtype)
    w13_error, w2_error = v.gemm_errors
    return ExpertRun(expert, v.status, rank, v.rel_error, w13_error, w2_error, v.quant_error, v.processing_error,
                     bytes_read, ms, v.errors, v.warnings, weights.w13.notes)


def summarize(job: MoEJob, experts: list[ExpertRun], execution: numerics.Execution | None, device: torch.device,
              platform_kind: str, tokens: int, out_dtype: torch.dtype, bytes_read: int) -> LayerRun:
    """One row per FusedMoE: experts run / total, the worst expert's error and which it is, every expert's errors."""
    label, emulated = (None, False)
    if execution is not None:
        label, emulated = gemm.execution_label(job.recipe, execution, device, platform_kind)
    judged = [e for e in experts if e.rel_error is not None]
    worst = max(judged, key=lambda e: e.rel_error or 0.0) if judged else None
    statuses = {e.status for e in experts}
    status = Status.FAIL if Status.FAIL in statuses else Status.WARN if Status.WARN in statuses else Status.OK
    selection = "every expert" if len(experts) == job.num_experts else \
        f"{len(experts)} of {job.num_experts} experts (the first and the last; --all-experts runs every one)"
    notes: tuple[str, ...] = (f"ran {selection}, each on the same {tokens} activation rows (routing is not modelled)",)
    if job.recipe.refine and job.recipe.block:
        notes += (f"block scales upsampled to vLLM's refined {list(job.recipe.block)} grid; activations "
                  f"quantized in 1x{job.recipe.block[1]} groups",)
    notes += tuple(n for e in experts for n in e.notes)
    compared = [e.against for e in experts if e.against is not None]
    against = worst_expert(compared)
    if against is not None:
        notes += (f"--against: {len(compared)} expert(s) compared with BASE, worst expert {against.expert}",)
    present = [e.quant_error for e in judged if e.quant_error is not None]
    processing = [e.processing_error for e in judged if e.processing_error is not None]
    return LayerRun(
        name=job.name, kernel=job.kernel, numerics=job.recipe.numerics, execution=label, emulated=emulated,
        tokens=tokens, status=status, bytes_read=bytes_read, rel_error=worst.rel_error if worst else None,
        bound=numerics.bound(job.recipe.numerics, out_dtype), processing_error=max(processing) if processing else None,
        quant_error=max(present) if present else None, ms=sum(e.ms or 0 for e in experts) if judged else None,
        errors=tuple(err for e in experts for err in e.errors), warnings=tuple(w for e in experts for w in e.warnings),
        notes=notes, against=against, num_experts=job.num_experts, experts_run=tuple(e.expert for e in experts),
        worst_expert=worst.expert if worst else None, experts=tuple(experts))


# ---------------------------------------------------------------------------------------------- one device

def load_moes_single(jobs: list[MoEJob], folder: str, options: LoadOptions, platform_kind: str,
                     out_dtype: torch.dtype) -> list[LayerRun]:
    """Every job's experts on options.device, one expert in memory at a time."""
    runs = []
    files = CheckpointFiles(folder)
    for job in jobs:
        before = files.bytes_read
        scales = layer_input_scales(job, files)
        x = gemm.activations(job.name, job.hidden, options.tokens, options.seed, out_dtype)
        experts, execution = [], None
        for expert, shards in job.experts:
            start = files.bytes_read
            parts = read_expert(shards, job.recipe, files, 1, 0)
            read = files.bytes_read - start
            problems = value_errors(parts)
            if problems:
                experts.append(ExpertRun(expert, Status.FAIL, bytes_read=read, errors=tuple(problems)))
                continue
            weights = process(*parts, job.recipe, scales)
            outputs = run_expert(job.recipe, weights, x, options.device, job.intermediate, (0, job.intermediate),
                                 with_references=True)
            execution = outputs.execution
            run = _expert_run(expert, job, weights, x, outputs, out_dtype, read, outputs.ms)
            if options.against is not None:  # the codes and scales as stored, before process changed them
                comparison = options.against.compare_expert(
                    job.name, expert, parts, job.recipe.block if job.recipe.strategy == Strategy.BLOCK else None, x,
                    outputs.output, numerics.bound(job.recipe.numerics, out_dtype))
                run = run._replace(against=comparison, status=Status.FAIL if comparison.errors else run.status,
                                   errors=run.errors + comparison.errors)
            del parts
            experts.append(run)
            files.release()
        runs.append(summarize(job, experts, execution, options.device, platform_kind, options.tokens, out_dtype,
                              files.bytes_read - before))
        files.release()
    return runs


# ---------------------------------------------------------------------------------------------- --tp / --ep

class MoERankJob(NamedTuple):
    folder: str
    jobs: tuple[MoEJob, ...]
    platform_kind: str
    tokens: int
    seed: int
    out_dtype: torch.dtype


def run_moe_rank(rank, job: MoERankJob) -> list[RankResult]:
    """One rank: every FusedMoE, every selected expert, in step with the others. TP slices each expert's
    intermediate (w13 rows, w2 columns, partial sums all-reduced); EP gives each expert whole to the rank that
    owns it. Rank 0 judges against the unsharded expert. Each expert's files are released after it, on every rank
    (CheckpointFiles holds one expert at a time)."""
    device = torch.device(rank.device)
    files, reference_files = CheckpointFiles(job.folder), CheckpointFiles(job.folder)
    out = []
    for moe in job.jobs:
        before = files.bytes_read
        scales = layer_input_scales(moe, reference_files)
        x = gemm.activations(moe.name, moe.hidden, job.tokens, job.seed, job.out_dtype)
        experts: list[ExpertRun] = []
        execution: numerics.Execution | None = None
        rank_errors: list[str] = []
        ms = 0.0
        for expert, shards in moe.experts:
            run, errors, outputs = _rank_expert(rank, moe, expert, shards, scales, x, job.out_dtype, device, files,
                                                reference_files)
            files.release()
            reference_files.release()
            if outputs is not None:
                execution, ms = outputs.execution, ms + outputs.ms
            rank_errors += errors
            if run is not None:
                experts.append(run)
        figures = RankFigures(rank.rank, files.bytes_read - before, ms if execution is not None else None)
        layer_run = summarize(moe, experts, execution, device, job.platform_kind, job.tokens, job.out_dtype, 0) \
            if rank.rank == 0 else None
        out.append(RankResult(figures, tuple(rank_errors), layer_run))
        files.release()
        reference_files.release()
    return out


def _rank_expert(rank, moe: MoEJob, expert: int, shards: tuple[Shard, Shard, Shard], scales, x: torch.Tensor,
                 out_dtype: torch.dtype, device: torch.device, files: CheckpointFiles,
                 reference_files: CheckpointFiles) -> tuple[ExpertRun | None, tuple[str, ...], ExpertOutputs | None]:
    """One expert on one rank: (rank 0's ExpertRun, this rank's errors, its part's outputs when it ran one)."""
    recipe = moe.recipe
    owner = expert_owner(expert, moe.num_experts, recipe.ep) if recipe.ep > 1 else None
    mine = owner is None or owner == rank.rank
    tp, r = (recipe.moe_tp, rank.rank) if recipe.ep == 1 else (1, 0)
    cols = expert_span(moe.intermediate, tp, r, recipe.shard_rows) if tp > 1 else (0, moe.intermediate)
    mine = mine and cols[0] < cols[1]  # a padded shard past the checkpoint's rows holds only zeros
    errors: tuple[str, ...] = ()
    outputs, read = None, 0
    if mine:
        start = files.bytes_read
        parts = read_expert(shards, recipe, files, tp, r)
        read = files.bytes_read - start
        errors = tuple(f"rank {rank.rank}: {e}" for e in value_errors(parts))
        if not errors:
            reduce = _moe_amax_reduction(recipe, tp, rank.group)
            outputs = run_expert(recipe, process(*parts, recipe, scales, reduce), x, device, moe.intermediate, cols)
        del parts
    joined = _join(outputs, x, moe, device, out_dtype, rank.group)
    failed = any_rank_failed(errors, device, rank.group)
    if rank.rank != 0:
        return None, errors, outputs
    if failed:
        return ExpertRun(expert, Status.FAIL, owner, bytes_read=read, errors=errors), errors, outputs
    whole = process(*read_expert(shards, recipe, reference_files, 1, 0), recipe, scales)
    return _expert_run(expert, moe, whole, x, joined, out_dtype, 0, None, owner), errors, outputs


def _join(outputs: ExpertOutputs | None, x: torch.Tensor, moe: MoEJob, device: torch.device, out_dtype: torch.dtype,
          group) -> ExpertOutputs:
    """Every rank's part summed over the process group in one all-reduce (w2 is row-parallel): the w13 columns and
    intermediates are disjoint, so their sum is a placement; the outputs are partial sums (TP) or one rank's whole
    output (EP). A rank without a part joins with zeros."""
    m, i, h = x.shape[0], moe.intermediate, moe.hidden
    packed = torch.zeros(m, 2 * i + i + h, dtype=torch.float32, device=device)
    if outputs is not None:
        packed[:, :2 * i] = outputs.w13_out
        packed[:, 2 * i:3 * i] = outputs.intermediate
        packed[:, 3 * i:] = outputs.output.float()
    packed = combine(EXPERT_STYLES["down"].collective, packed, group)
    execution = outputs.execution if outputs is not None else numerics.Execution(torch.empty(0), "", False)
    return ExpertOutputs(packed[:, :2 * i], packed[:, 2 * i:3 * i], packed[:, 3 * i:].to(out_dtype), execution,
                         outputs.ms if outputs is not None else 0.0)


# --------------------------------------------------------------------------------------------------- driver

def load_moes(names: list[str], jobs: list[MoEJob], refused: dict[str, LayerRun], model_errors: tuple[str, ...],
              folder: str, options: LoadOptions, platform_kind: str, out_dtype: torch.dtype) -> list[LayerRun]:
    """Every FusedMoE named, in order: run (on one device, or on --tp ranks), or `not run` with vLLM's reason (its
    own, or a model-level refusal such as the attention heads' TP split, which stops vLLM before any layer)."""
    if model_errors:
        jobs, refused = [], {name: LayerRun(name=name, kernel=None, numerics=None, execution=None, emulated=False,
                                            tokens=options.tokens, status=Status.NOT_RUN,
                                            errors=tuple(f"not run: {e}" for e in model_errors)) for name in names}
    if options.inspect.tp > 1 and jobs:
        job = MoERankJob(folder, tuple(jobs), platform_kind, options.tokens, options.seed, out_dtype)
        results = run_parallel(run_moe_rank, job, options)
        ran = [merged([result[i] for result in results]) for i in range(len(jobs))]
    else:
        ran = load_moes_single(jobs, folder, options, platform_kind, out_dtype)
    done = {run.name: run for run in ran}
    return [done.get(name) or refused[name]._replace(tokens=options.tokens) for name in names]
