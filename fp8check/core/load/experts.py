"""load for FusedMoE layers: a few experts of every MoE layer vLLM would build (all with --all-experts), each read
on its own, checked, processed as vLLM's FP8 MoE method processes it, and run as w13 -> SiLU-and-mul -> w2 through
the numerics of the experts class inspect selected, against fp32.

Sources, vLLM 0.33.0 (0.28.0 identical where cited): quantization/fp8.py Fp8MoEMethod and compressed_tensors/
compressed_tensors_moe/compressed_tensors_moe_w8a8_fp8.py process_weights_after_loading (per-tensor w13: the max
of the w1 and w3 scales, both parts requantized to it by process_fp8_weight_tensor_strategy_moe, which dequantizes
in float16 with per_tensor_dequantize; static input scales: one max over every expert, amax_for_moe_activation_quant);
fused_moe/routed_experts.py _load_w13 / _load_w2 (a TP rank narrows w1/w3 rows and w2 columns at
rank * (size // tp), scales the same way, per-channel w2 scales and per-tensor scales whole) and the upsampling of
block scales to 0.33's refined grid before narrowing; fused_moe/utils.py moe_kernel_quantize_input (activations:
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

import time
from typing import NamedTuple

import torch
import torch.nn.functional as F

from fp8check.core.load.driver import Plan, _sync, activations, execution_label, relative_error
from fp8check.core.model.modules import MoEModule, Shard
from fp8check.core.routing.moe import ExpertShapes, expert_shapes, select_method
from fp8check.core.model.sharding import TensorRead
from fp8check.core.load.weights import SCALE_SUFFIXES, CheckpointFiles, ShardTensors, value_errors
from fp8check.kernels.numerics import gemm as numerics
from fp8check.kernels.numerics.fp8_math import scaled_fp8_quant
from fp8check.kernels.numerics.gemm import LinearWeights
from fp8check.kernels.quant_keys import (
    QuantKey, kFp8DynamicTensorSym, kFp8DynamicTokenSym, kFp8StaticChannelSym, kFp8StaticTensorSym,
)
from fp8check.core.records import ExpertRun, LoadOptions, MoEReport, MoERun

ROLES = ("gate", "up", "down")        # w1, w3, w2


class ExpertPlan(NamedTuple):
    """How every expert of one FusedMoE runs (the same for each of its experts)."""

    numerics: str                      # numerics.BLOCK | SCALED_MM | WEIGHT_ONLY | UNQUANTIZED
    strategy: str | None               # "tensor" | "channel" | "block" | None (unquantized)
    block: tuple[int, int] | None      # the block the experts kernel sees (0.33 may refine the checkpoint's)
    refine: tuple[int, int] | None     # checkpoint block // refined block: how far vLLM upsamples the scales
    activation: QuantKey | None        # a1 and a2 quantization; None: they stay in the model dtype
    fused_silu_quant: bool             # silu_and_mul_per_block_quant: the intermediate is quantized from fp32
    moe_tp: int
    ep: int



class MoEJob(NamedTuple):
    """One FusedMoE to run (pickled to every rank under --tp)."""

    name: str
    kernel: str | None                 # the experts class inspect selected
    plan: ExpertPlan
    experts: tuple[tuple[int, tuple[Shard, Shard, Shard]], ...]   # (expert id, (gate, up, down)) in run order
    input_scales: tuple[tuple[TensorRead, ...], tuple[TensorRead, ...]]  # every expert's w1/w3, w2 input_scale
    hidden: int
    intermediate: int
    num_experts: int


# ------------------------------------------------------------------------------------------------ planning

def plan_moe(report: MoEReport, method_strategy: str | None, static_input: bool) -> ExpertPlan:
    """The numerics of the experts class inspect selected, and how its scheme quantizes activations."""
    kind = numerics.moe_numerics(report.kernel, report.block if method_strategy == "block" else None) \
        if report.kernel else numerics.UNQUANTIZED
    activation = None
    if kind in (numerics.BLOCK, numerics.SCALED_MM):
        if method_strategy == "block":
            activation = QuantKey(False, (1, report.block[1]))
        elif method_strategy == "channel":
            activation = kFp8DynamicTokenSym
        else:
            activation = kFp8StaticTensorSym if static_input else kFp8DynamicTensorSym
    return ExpertPlan(kind, method_strategy, report.block, None, activation,
                      report.kernel == "TritonExperts" and report.block == (128, 128),
                      report.moe_tp, report.ep)


def moe_jobs(moes: tuple[MoEModule, ...], reports: dict[str, MoEReport], quant, rules: str, all_experts: bool
             ) -> tuple[list[MoEJob], dict[str, MoERun]]:
    """A job per FusedMoE vLLM would build; a `not run` MoERun for the others, with vLLM's reason. Experts run:
    every one with `all_experts`, else the first and the last (under --ep: on the first and the last rank)."""
    jobs, refused = [], {}
    for moe in moes:
        report = reports[moe.name]
        shapes = expert_shapes(moe)
        base = MoERun(moe.name, report.kernel, None, None, False, 0, "not run", num_experts=report.num_experts)
        if report.errors:
            refused[moe.name] = base._replace(errors=(f"not run: vLLM would not build this layer: {report.errors[0]}",))
            continue
        if shapes.fused or (report.kernel is None and report.scheme != "UnquantizedFusedMoEMethod"):
            refused[moe.name] = base._replace(errors=(f"not run: fp8check does not run {report.scheme} experts "
                                                      f"({'stored fused' if shapes.fused else 'not FP8 e4m3'})",))
            continue
        method = select_method(moe, shapes, quant, rules)
        strategy = None if method.method == "UnquantizedFusedMoEMethod" else (
            "block" if method.block else "channel" if method.weight_key == kFp8StaticChannelSym else "tensor")
        plan = plan_moe(report, strategy, method.activation_key == kFp8StaticTensorSym)
        if plan.block and method.block and plan.block != method.block:
            plan = plan._replace(refine=(method.block[0] // plan.block[0], method.block[1] // plan.block[1]))
        ids = sorted(shapes.experts)
        chosen = ids if all_experts else sorted({ids[0], ids[-1]})
        experts = tuple((e, _roles(shapes, e)) for e in chosen)
        jobs.append(MoEJob(moe.name, report.kernel, plan, experts, _input_scales(shapes), shapes.hidden,
                           shapes.intermediate, len(ids)))
    return jobs, refused


def _roles(shapes: ExpertShapes, expert: int) -> tuple[Shard, Shard, Shard]:
    leaves = shapes.experts[expert]
    return tuple(leaves[shapes.leaves.get(role, default)] for role, default in
                 zip(ROLES, ("gate_proj", "up_proj", "down_proj")))


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
    """determine_expert_map, linear placement: the first num_experts % ep ranks hold one expert more."""
    base, extra = divmod(num_experts, ep)
    cut = extra * (base + 1)
    return expert // (base + 1) if expert < cut else extra + (expert - cut) // base


# --------------------------------------------------------------------------------------------- reading

def _narrow(size: int, tp: int, rank: int) -> tuple[int, int]:
    """_load_w13 / _load_w2: rank * (size // tp), at most size // tp long."""
    per = size // tp
    start = per * rank
    return start, min(start + per, size)


def read_expert(shards: tuple[Shard, Shard, Shard], plan: ExpertPlan, files: CheckpointFiles, tp: int, rank: int
                ) -> tuple[ShardTensors, ShardTensors, ShardTensors]:
    """One expert's gate, up and down as TP rank `rank` of `tp` loads them (tp 1: whole)."""
    out = []
    for role, shard in zip(ROLES, shards):
        dim = 1 if role == "down" else 0
        span = _narrow(shard.weight.shape[dim], tp, rank) if tp > 1 else None
        weight = files.read(TensorRead(shard.weight, **({"cols" if dim else "rows": span} if span else {})))
        scale_suffix = next((s for s in SCALE_SUFFIXES if s in shard.side), None)
        scale = _read_scale(shard.side[scale_suffix], role, plan, files, tp, rank) if scale_suffix else None
        input_scale = files.read(TensorRead(shard.side["input_scale"])) if "input_scale" in shard.side else None
        out.append(ShardTensors(shard.name, weight, scale, input_scale, scale_suffix=scale_suffix or "weight_scale"))
    return tuple(out)


def _read_scale(info, role: str, plan: ExpertPlan, files: CheckpointFiles, tp: int, rank: int) -> torch.Tensor:
    """A scale as the rank's parameter holds it: per-tensor scales and a per-channel w2 scale ([hidden, 1]) whole;
    block and channel scales narrowed like the weight (only the rank's slice is read), except under 0.33's refined
    grid, where vLLM upsamples the whole scale first (repeat_interleave, lossless), then narrows."""
    if len(info.shape) != 2 or tp == 1 and not plan.refine or role == "down" and plan.strategy == "channel":
        return files.read(TensorRead(info))
    dim = 1 if role == "down" else 0
    if not plan.refine:
        span = _narrow(info.shape[dim], tp, rank)
        return files.read(TensorRead(info, **({"cols" if dim else "rows": span})))
    scale = files.read(TensorRead(info)).repeat_interleave(plan.refine[0], 0).repeat_interleave(plan.refine[1], 1)
    start, stop = _narrow(scale.shape[dim], tp, rank)
    return scale[:, start:stop] if dim else scale[start:stop]


# ------------------------------------------------------------------------------------------ processing

class ExpertWeights(NamedTuple):
    w13: LinearWeights
    w2: LinearWeights
    w13_checkpoint: LinearWeights | None   # the checkpoint's own codes and per-row scales, when requantized
    notes: tuple[str, ...]


def process(gate: ShardTensors, up: ShardTensors, down: ShardTensors, plan: ExpertPlan,
            input_scales: tuple[torch.Tensor | None, torch.Tensor | None]) -> ExpertWeights:
    """w13 = [w1 | w3] as vLLM stacks it, then process_weights_after_loading's changes to the numbers."""
    weight = torch.cat([gate.weight, up.weight])
    a1, a2 = input_scales
    if plan.strategy is None:
        return ExpertWeights(LinearWeights(weight, None, None, None), LinearWeights(down.weight, None, None, None),
                             None, ())
    block = plan.block if plan.strategy == "block" else None
    w2 = LinearWeights(down.weight, down.scale.float().reshape(()) if plan.strategy == "tensor" else down.scale.float(),
                       block, a2)
    if plan.strategy != "tensor":
        return ExpertWeights(LinearWeights(weight, torch.cat([gate.scale.float(), up.scale.float()]), block, a1), w2,
                             None, ())
    scales = [s.scale.float().reshape(()) for s in (gate, up)]
    top = torch.stack(scales).max()
    # vLLM 0.33.0 quantization/utils/fp8_utils.py:1556-1565 (process_fp8_weight_tensor_strategy_moe) requantizes
    # both w1 and w3 of every expert, equal scales or not: per_tensor_dequantize (codes to float16, times the
    # scale) then ops.scaled_fp8_quant(dq, max). The float16 round trip can move codes even at the max scale.
    parts, notes = [], []
    for shard, scale in zip((gate, up), scales):
        requantized = requantize_moe(shard.weight, scale, top)
        changed = int((requantized.view(torch.uint8) != shard.weight.view(torch.uint8)).sum())
        if changed:
            notes.append(f"{shard.name}: process_fp8_weight_tensor_strategy_moe requantized it to the expert's "
                         f"max w13 scale through float16 ({float(scale):.4g} -> {float(top):.4g}): {changed} of "
                         f"{shard.weight.numel()} FP8 codes changed")
        parts.append(requantized)
    rows = torch.cat([s.expand(p.weight.shape[0]) for s, p in zip(scales, (gate, up))]).reshape(-1, 1)
    return ExpertWeights(LinearWeights(torch.cat(parts), top, None, a1), w2, LinearWeights(weight, rows, None, None),
                         tuple(notes))


def requantize_moe(weight: torch.Tensor, scale: torch.Tensor, top: torch.Tensor) -> torch.Tensor:
    """per_tensor_dequantize (codes to float16, times the scale: a float16 product) then scaled_fp8_quant(dq, max)."""
    dequantized = weight.to(torch.float16) * scale
    return scaled_fp8_quant(dequantized, scale=top)[0].to(weight.dtype)


def layer_input_scales(job: MoEJob, files: CheckpointFiles) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """amax_for_moe_activation_quant: the max over every expert's input scale, once for w13 and once for w2."""
    out = []
    for reads in job.input_scales:
        out.append(torch.stack([files.read(r).float().reshape(()) for r in reads]).max() if reads else None)
    return out[0], out[1]


# ---------------------------------------------------------------------------------------------- numerics

class ExpertOutputs(NamedTuple):
    """One rank's part of one expert, placed in the full expert's columns so ranks can be summed."""

    w13_out: torch.Tensor              # [M, 2I] fp32 (this rank's gate and up columns, zeros elsewhere)
    intermediate: torch.Tensor         # [M, I] fp32: the intermediate as w2 sees it (dequantized when quantized)
    output: torch.Tensor               # [M, H] this rank's partial sum, in the model dtype
    execution: numerics.Execution
    ms: float
    references: tuple | None = None    # (w13 reference, w2 reference, all-fp32 expert), when they rode along


def _quantize(x: torch.Tensor, plan: ExpertPlan, input_scale: torch.Tensor | None):
    """moe_kernel_quantize_input: (codes, scales, the fp32 values the GEMM sees)."""
    if plan.activation is None:
        return None, None, x.float()
    x_q, x_s = numerics.quantize_activation(x, plan.activation, input_scale)
    return x_q, x_s, numerics.dequantize_activation(x_q, x_s)


def run_expert(plan: ExpertPlan, weights: ExpertWeights, x: torch.Tensor, device: torch.device, intermediate: int,
               gate_cols: tuple[int, int], with_references: bool = False) -> ExpertOutputs:
    """w13 -> SiLU-and-mul -> (quantize) -> w2 on `device`, for this rank's columns `gate_cols` of the intermediate.
    `with_references` (the whole expert): where the numerics are an fp32 loop over the codes anyway (block
    emulation), judge_expert's reference rows ride along in the same passes, as load.run_kernel does."""
    x = x.to(device)
    w13, w2 = _on(weights.w13, device), _on(weights.w2, device)
    _sync(device)
    start = time.perf_counter()
    x_q, x_s, x_ref = _quantize(x, plan, w13.input_scale)
    m = x.shape[0]
    ride = with_references and weights.w13_checkpoint is None
    first = numerics.run(plan.numerics, w13, x, x_q, x_s, also=torch.cat([x_ref, x.float()]) if ride else None)
    h = first.output
    half = h.shape[1] // 2
    act = F.silu(h[:, :half].float()) * h[:, half:].float()   # silu_and_mul computes in fp32
    if not plan.fused_silu_quant or plan.activation is None:
        act = act.to(x.dtype)                                  # ... and writes the model dtype
    i_q, i_s, i_ref = _quantize(act, plan, w2.input_scale)
    rows = None
    if first.also is not None:  # [the w13 reference | the all-fp32 w13], then the latter's SiLU-and-mul
        exact = first.also[m:]
        rows = torch.cat([i_ref, F.silu(exact[:, :half]) * exact[:, half:]])
    second = numerics.run(plan.numerics, w2, act.to(x.dtype), i_q, i_s, also=rows)
    references = None if second.also is None else (first.also[:m], second.also[:m], second.also[m:])
    _sync(device)
    ms = (time.perf_counter() - start) * 1000
    a, b = gate_cols
    w13_out = torch.zeros(m, 2 * intermediate, dtype=torch.float32, device=device)
    w13_out[:, a:b] = h[:, :half].float()
    w13_out[:, intermediate + a:intermediate + b] = h[:, half:].float()
    full = torch.zeros(m, intermediate, dtype=torch.float32, device=device)
    full[:, a:b] = i_ref
    emulation = first.emulation or second.emulation
    return ExpertOutputs(w13_out, full, second.output, first._replace(emulation=emulation, also=None), ms, references)


class Judged(NamedTuple):
    w13_error: float
    w2_error: float
    quant_error: float
    processing_error: float | None
    errors: tuple[str, ...]
    warnings: tuple[str, ...]


def judge_expert(name: str, plan: ExpertPlan, weights: ExpertWeights, x: torch.Tensor, joined: ExpertOutputs,
                 out_dtype: torch.dtype) -> Judged:
    """Each GEMM against fp32 of the same operands: w13 against the same quantized activations, w2 against the
    intermediate exactly as the kernel quantized it. Both within the numerics' bound (2u block / scaled-mm, 4u
    weight-only: one GEMM each, as for linear layers). The quantization error, for information, compares the
    output with an all-fp32 expert (model-dtype activations, an unquantized intermediate, the checkpoint's weights)."""
    device = joined.output.device
    x = x.to(device)
    w13, w2 = _on(weights.w13, device), _on(weights.w2, device)
    original = _on(weights.w13_checkpoint, device) if weights.w13_checkpoint is not None else None
    _, _, x_ref = _quantize(x, plan, w13.input_scale)
    if joined.references is not None:
        ref13, ref2, exact = joined.references
    else:
        ref13, ref2 = _product(plan, x_ref, w13), _product(plan, joined.intermediate, w2)
        h = _product(plan, x.float(), original if original is not None else w13)
        half = h.shape[1] // 2
        exact = _product(plan, F.silu(h[:, :half]) * h[:, half:], w2)
    errors, warnings = [], []
    nonfinite = int((~torch.isfinite(joined.output.float())).sum())
    if nonfinite:
        errors.append(f"{name}: {nonfinite} of {joined.output.numel()} outputs are NaN or infinite")
    limit = numerics.bound(plan.numerics, out_dtype)
    w13_error = relative_error(joined.w13_out, ref13)
    w2_error = relative_error(joined.output, ref2)
    for label, rel in (("w13 (gate/up)", w13_error), ("w2 (down)", w2_error)):
        if not rel <= limit:
            errors.append(f"{name}: {label} output differs from the fp32 reference by {rel:.3g} (relative Frobenius), "
                          f"above the {limit:.3g} bound of {plan.numerics} numerics with {str(out_dtype)[6:]} output")
    processing = None
    if original is not None:
        processing = relative_error(ref13, _product(plan, x_ref, original))
        if processing > limit:
            warnings.append(f"{name}: vLLM requantizes w1 and w3 to their max scale (process_fp8_weight_tensor_"
                            f"strategy_moe), which moves the w13 output by {processing:.3g} against the checkpoint's "
                            "own scales; export w1 and w3 of each expert with one shared scale to avoid it")
    quant = relative_error(joined.output, exact)
    return Judged(w13_error, w2_error, quant, processing, tuple(errors), tuple(warnings))


def _on(w: LinearWeights, device: torch.device) -> LinearWeights:
    return LinearWeights(*(t.to(device) if isinstance(t, torch.Tensor) else t for t in w))


def _product(plan: ExpertPlan, x: torch.Tensor, w: LinearWeights) -> torch.Tensor:
    """x @ (dequantized w)^T in fp32, without materializing the dequantized weight (numerics.scaled_product)."""
    if plan.numerics == numerics.UNQUANTIZED:
        return x @ w.weight.float().t()
    return numerics.scaled_product(x, numerics.to_float(w.weight), w.scale, w.block)


# ---------------------------------------------------------------------------------------------- one device

def load_moes_single(jobs: list[MoEJob], folder: str, options: LoadOptions, platform_kind: str,
                     out_dtype: torch.dtype) -> list[MoERun]:
    """Every job's experts on options.device, one expert in memory at a time."""
    runs = []
    files = CheckpointFiles(folder)
    for job in jobs:
        before = files.bytes_read
        scales = layer_input_scales(job, files)
        x = activations(job.name, job.hidden, options.tokens, options.seed, out_dtype)
        experts, execution = [], None
        for expert, shards in job.experts:
            start = files.bytes_read
            parts = read_expert(shards, job.plan, files, 1, 0)
            read = files.bytes_read - start
            problems = value_errors(parts)
            if problems:
                experts.append(ExpertRun(expert, "FAIL", bytes_read=read, errors=tuple(problems)))
                continue
            weights = process(*parts, job.plan, scales)
            outputs = run_expert(job.plan, weights, x, options.device, job.intermediate, (0, job.intermediate),
                                 with_references=True)
            execution = outputs.execution
            run = _expert_run(expert, job, weights, x, outputs, out_dtype, read, outputs.ms)
            if options.against is not None:  # the codes and scales as stored, before process changed them
                run = _with_against(run, options.against.compare_expert(
                    job.name, expert, parts, job.plan.block if job.plan.strategy == "block" else None, x,
                    outputs.output, numerics.bound(job.plan.numerics, out_dtype)))
            del parts
            experts.append(run)
            files.release()
        runs.append(summarize(job, experts, execution, options.device, platform_kind, options.tokens, out_dtype,
                              files.bytes_read - before))
        files.release()
    return runs


def _with_against(run: ExpertRun, comparison) -> ExpertRun:
    return run._replace(against=comparison, status="FAIL" if comparison.errors else run.status,
                        errors=run.errors + comparison.errors)


def _expert_run(expert: int, job: MoEJob, weights: ExpertWeights, x: torch.Tensor, joined: ExpertOutputs,
                out_dtype: torch.dtype, bytes_read: int, ms: float | None, rank: int | None = None) -> ExpertRun:
    judged = judge_expert(f"{job.name}.{expert}", job.plan, weights, x, joined, out_dtype)
    status = "FAIL" if judged.errors else "warn" if judged.warnings else "ok"
    return ExpertRun(expert, status, rank, max(judged.w13_error, judged.w2_error), judged.w13_error, judged.w2_error,
                     judged.quant_error, judged.processing_error, bytes_read, ms, judged.errors, judged.warnings,
                     weights.notes)


def summarize(job: MoEJob, experts: list[ExpertRun], execution: numerics.Execution | None, device: torch.device,
              platform_kind: str, tokens: int, out_dtype: torch.dtype, bytes_read: int, ranks: tuple = ()) -> MoERun:
    """One row per FusedMoE: experts run / total, the worst expert's error and which it is, every expert's errors."""
    label, emulated = (None, False)
    if execution is not None:
        label, emulated = execution_label(Plan(job.plan.numerics, None, None, None), execution, device, platform_kind)
    judged = [e for e in experts if e.rel_error is not None]
    worst = max(judged, key=lambda e: e.rel_error) if judged else None
    statuses = {e.status for e in experts}
    status = "FAIL" if "FAIL" in statuses else "warn" if "warn" in statuses else "ok"
    selection = "every expert" if len(experts) == job.num_experts else \
        f"{len(experts)} of {job.num_experts} experts (the first and the last; --all-experts runs every one)"
    notes = (f"ran {selection}, each on the same {tokens} activation rows (routing is not modelled)",)
    if job.plan.refine:
        notes += (f"block scales upsampled to vLLM 0.33's refined {list(job.plan.block)} grid; activations quantized "
                  f"in 1x{job.plan.block[1]} groups",)
    notes += tuple(n for e in experts for n in e.notes)
    compared = [e.against for e in experts if e.against is not None]
    if compared:
        from fp8check.core.load.against import worst_expert

        against = worst_expert(compared)
        notes += (f"--against: {len(compared)} expert(s) compared with BASE, worst expert {against.expert}",)
    else:
        against = None
    present = [e.quant_error for e in judged]
    processing = [e.processing_error for e in judged if e.processing_error is not None]
    return MoERun(job.name, job.kernel, job.plan.numerics, label, emulated, tokens, status, job.num_experts,
                  tuple(e.expert for e in experts), worst.expert if worst else None, tuple(experts), bytes_read,
                  worst.rel_error if worst else None, numerics.bound(job.plan.numerics, out_dtype),
                  max(processing) if processing else None, max(present) if present else None,
                  sum(e.ms or 0 for e in experts) if judged else None,
                  tuple(err for e in experts for err in e.errors), tuple(w for e in experts for w in e.warnings),
                  notes, ranks, against)


# ---------------------------------------------------------------------------------------------- --tp / --ep

class MoERankJob(NamedTuple):
    folder: str
    jobs: tuple[MoEJob, ...]
    platform_kind: str
    tokens: int
    seed: int
    out_dtype: torch.dtype


def load_moes_parallel(jobs: list[MoEJob], folder: str, options: LoadOptions, platform_kind: str,
                       out_dtype: torch.dtype) -> list[MoERun]:
    """Every job on options.inspect.tp real ranks: TP slices each expert's intermediate (w13 rows, w2 columns,
    partial sums all-reduced); EP gives each expert whole to the rank that owns it. Rank 0 judges against the
    unsharded expert."""
    from fp8check.core.errors import InputError
    from fp8check.core.load.ranks import RankFailure, run_ranks

    tp = options.inspect.tp
    job = MoERankJob(folder, tuple(jobs), platform_kind, options.tokens, options.seed, out_dtype)
    try:
        results = run_ranks(tp, run_moe_rank, job, device=str(options.device), timeout_s=24 * 3600.0,
                            collective_timeout_s=options.rank_timeout_s)
    except RankFailure as exc:
        raise InputError(f"load --tp {tp}: {exc} (no rank is left running)") from None
    runs = []
    for i, moe in enumerate(jobs):
        per_rank = [result[i] for result in results]
        run = per_rank[0][0]
        rank_errors = tuple(e for _, figures, errors in per_rank[1:] for e in errors if e not in run.errors)
        figures = tuple(f for _, f, _ in per_rank)
        runs.append(run._replace(status="FAIL" if rank_errors else run.status, errors=run.errors + rank_errors,
                                 ranks=figures, bytes_read=sum(f.bytes_read for f in figures)))
    return runs


def run_moe_rank(rank, job: MoERankJob) -> list[tuple[MoERun | None, object, tuple[str, ...]]]:
    """One rank: every FusedMoE, every selected expert, in step with the others."""
    import torch.distributed as dist

    from fp8check.core.records import RankFigures

    device = torch.device(rank.device)
    files, reference_files = CheckpointFiles(job.folder), CheckpointFiles(job.folder)
    out = []
    for moe in job.jobs:
        plan, before = moe.plan, files.bytes_read
        scales = layer_input_scales(moe, reference_files)
        x = activations(moe.name, moe.hidden, job.tokens, job.seed, job.out_dtype)
        experts, execution, rank_errors, ms = [], None, [], 0.0
        for expert, shards in moe.experts:
            owner = expert_owner(expert, moe.num_experts, plan.ep) if plan.ep > 1 else None
            mine = owner is None or owner == rank.rank
            tp, r = (plan.moe_tp, rank.rank) if plan.ep == 1 else (1, 0)
            cols = _narrow(moe.intermediate, tp, r) if tp > 1 else (0, moe.intermediate)
            errors, outputs = (), None
            if mine:
                start = files.bytes_read
                parts = read_expert(shards, plan, files, tp, r)
                read = files.bytes_read - start
                errors = tuple(f"rank {rank.rank}: {e}" for e in value_errors(parts))
                if not errors:
                    outputs = run_expert(plan, process(*parts, plan, scales), x, device, moe.intermediate, cols)
                    execution, ms = outputs.execution, ms + outputs.ms
                del parts
            joined = _join(outputs, x, moe, device, job.out_dtype, rank)
            failed = torch.tensor([1 if errors else 0], device=device)
            dist.all_reduce(failed, group=rank.group)
            rank_errors += errors
            if rank.rank != 0:
                continue
            if int(failed) or errors:
                experts.append(ExpertRun(expert, "FAIL", owner, bytes_read=read if mine else 0, errors=errors))
                continue
            whole = process(*read_expert(shards, plan, reference_files, 1, 0), plan, scales)
            experts.append(_expert_run(expert, moe, whole, x, joined, job.out_dtype, 0, None, owner))
            files.release()
            reference_files.release()
        figures = RankFigures(rank.rank, files.bytes_read - before, ms if execution is not None else None)
        run = summarize(moe, experts, execution, device, job.platform_kind, job.tokens, job.out_dtype, 0) \
            if rank.rank == 0 else None
        out.append((run, figures, tuple(rank_errors)))
        files.release()
        reference_files.release()
    return out


def _join(outputs: ExpertOutputs | None, x: torch.Tensor, moe: MoEJob, device: torch.device, out_dtype: torch.dtype,
          rank) -> ExpertOutputs:
    """Sum every rank's part over the process group (one all-reduce): the w13 columns and intermediates are
    disjoint, so their sum is a placement; the outputs are partial sums (TP) or one rank's whole output (EP).
    gloo has no bf16 sum: partials are summed in fp32 and rounded once, as load_tp does for row-parallel layers."""
    import torch.distributed as dist

    m, i, h = x.shape[0], moe.intermediate, moe.hidden
    packed = torch.zeros(m, 2 * i + i + h, dtype=torch.float32, device=device)
    if outputs is not None:
        packed[:, :2 * i] = outputs.w13_out
        packed[:, 2 * i:3 * i] = outputs.intermediate
        packed[:, 3 * i:] = outputs.output.float()
    dist.all_reduce(packed, group=rank.group)
    execution = outputs.execution if outputs is not None else numerics.Execution(None, "", False)
    return ExpertOutputs(packed[:, :2 * i], packed[:, 2 * i:3 * i], packed[:, 3 * i:].to(out_dtype), execution,
                         outputs.ms if outputs is not None else 0.0)


# --------------------------------------------------------------------------------------------------- driver

def load_moes(names: list[str], jobs: list[MoEJob], refused: dict[str, MoERun], model_errors: tuple[str, ...],
              folder: str, options: LoadOptions, platform_kind: str, out_dtype: torch.dtype) -> list[MoERun]:
    """Every FusedMoE named, in order: run (on one device, or on --tp ranks), or `not run` with vLLM's reason (its
    own, or a model-level refusal such as the attention heads' TP split, which stops vLLM before any layer)."""
    if model_errors:
        jobs, refused = [], {name: MoERun(name, None, None, None, False, options.tokens, "not run",
                                          errors=tuple(f"not run: {e}" for e in model_errors)) for name in names}
    if options.inspect.tp > 1 and jobs:
        ran = load_moes_parallel(jobs, folder, options, platform_kind, out_dtype)
    else:
        ran = load_moes_single(jobs, folder, options, platform_kind, out_dtype)
    done = {run.name: run for run in ran}
    return [done.get(name) or refused[name]._replace(tokens=options.tokens) for name in names]
