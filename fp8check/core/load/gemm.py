"""The core `load` runs every GEMM through, for linear layers and FusedMoE experts alike: how a GEMM runs (Recipe),
vLLM's processing of the shards fused into one weight (fuse), the routed kernel's numerics timed on the device
(run), and the verdict against the fp32 reference of the same operands (judge).

A linear layer is one GEMM; an expert is two (w13, then w2 after SiLU-and-mul). torch: `load` only.
"""

from __future__ import annotations

import time
import zlib
from typing import Callable, NamedTuple

import torch

from fp8check.core.load.weights import ShardTensors, float_problems
from fp8check.core.vocabulary import Status, Strategy
from fp8check.kernels.numerics import gemm as numerics
from fp8check.kernels.numerics.fp8_math import scaled_fp8_quant
from fp8check.kernels.numerics.gemm import LinearWeights
from fp8check.kernels.numerics.mxfp8 import decode_e8m0, mx_quantize
from fp8check.kernels.quant_keys import QuantKey


class Recipe(NamedTuple):
    """How a GEMM runs: the numerics class of the kernel inspect routed it to, and what that kernel's scheme
    quantizes how. One per linear layer; one per FusedMoE, the same for each of its experts' two GEMMs."""

    numerics: str                      # numerics.BLOCK | SCALED_MM | WEIGHT_ONLY | UNQUANTIZED
    strategy: Strategy | None          # the weight's: TENSOR | CHANNEL | BLOCK | GROUP (MXFP8); None: unquantized
    block: tuple[int, int] | None      # the block the kernel sees (0.29+ may refine an expert's checkpoint block)
    refine: tuple[int, int] | None = None  # experts: checkpoint block // refined block (how far vLLM upsamples)
    activation: QuantKey | None = None     # None: activations stay in the model dtype (weight-only, unquantized)
    fused_silu_quant: bool = False     # experts: silu_and_mul_per_block_quant, the intermediate quantized from fp32
    moe_tp: int = 1                    # experts: the FusedMoE's own TP size (a linear layer's split is its RankReads)
    ep: int = 1                        # experts: the expert-parallel size
    # experts: vLLM's block-aligned padded TP shard (an explicit --moe-backend, moe-block-pad): each rank's rows of
    # the intermediate, rank r's from r * shard_rows (the last ranks may hold none); None: the even split
    shard_rows: int | None = None
    # Online quantization (--quantization on an unquantized checkpoint): None (the checkpoint is FP8), "rank"
    # (vLLM <= 0.27: each TP rank quantizes its own slice) or "global" (0.28+: amax_for_tp_weight_quant reduces
    # the amax over the ranks, so every rank's scale is the unsharded weight's).
    online: str | None = None


# --------------------------------------------------------------------------------------- weight processing

class Fused(NamedTuple):
    weights: LinearWeights             # what the kernel holds after vLLM's processing
    checkpoint: LinearWeights | None   # the checkpoint's own codes and per-row scales, when processing requantized
    notes: tuple[str, ...]
    bias: torch.Tensor | None = None   # in the model dtype, as vLLM's weight loader stores it


class Requantization(NamedTuple):
    """How vLLM brings per-tensor FP8 shards fused into one weight to their largest scale."""

    redo: Callable                     # (shards, scales, top) -> (codes per shard, notes), or None: kept as stored
    warning: str                       # .format(name=, moved=), when that moved the output beyond the bound


def fuse(shards: tuple[ShardTensors, ...], recipe: Recipe, input_scale: torch.Tensor | None,
         requantization: Requantization, reduce_amax: Callable[[torch.Tensor], torch.Tensor] | None = None) -> Fused:
    """Shards concatenated as vLLM's weight loaders do, then processed as its process_weights_after_loading does.

    Per-tensor FP8 shards go to their largest scale as `requantization` says: that can change the numbers, so the
    checkpoint's own codes are kept beside the processed ones (each shard's scale spread over its rows) and the
    difference is reported. Block and channel scales are concatenated as stored. `input_scale`: the static
    activation scale the kernel uses (None: dynamic).
    """
    # a shard stored without a bias contributes zeros to the fused one (whisper.py's _create_fake_bias_for_k_proj)
    given = next((s.bias for s in shards if s.bias is not None), None)
    bias = _cat([s.bias if s.bias is not None else torch.zeros(s.weight.shape[0], dtype=given.dtype)
                 for s in shards]) if given is not None else None
    weight = _cat([_as_linear(s.weight) for s in shards])
    if recipe.strategy is None:
        return Fused(LinearWeights(weight, None, None, None), None, (), bias)
    if recipe.online:
        return Fused(quantize_online(weight, recipe, reduce_amax), None, (), bias)
    if recipe.strategy != Strategy.TENSOR:
        block = recipe.block if recipe.strategy in (Strategy.BLOCK, Strategy.GROUP) else None
        return Fused(LinearWeights(weight, _cat([as_matrix(_weight_scale(s)) for s in shards]), block, input_scale),
                     None, (), bias)
    scales = [_weight_scale(s).float().reshape(()) for s in shards]
    top = torch.stack(scales).max()
    redone = requantization.redo(shards, scales, top)
    if redone is None:
        return Fused(LinearWeights(weight, top, None, input_scale), None, (), bias)
    parts, notes = redone
    rows = torch.cat([scale.expand(s.weight.shape[0]) for s, scale in zip(shards, scales)]).reshape(-1, 1)
    return Fused(LinearWeights(torch.cat(parts), top, None, input_scale), LinearWeights(weight, rows, None, None),
                 tuple(notes), bias)


def quantize_online(weight: torch.Tensor, recipe: Recipe,
                    reduce_amax: Callable[[torch.Tensor], torch.Tensor] | None = None) -> LinearWeights:
    """vLLM's online FP8 methods at process_weights_after_loading (quantization/online/fp8.py, mxfp8.py), on the
    weight as loaded (the fused bf16 weight, or this rank's slice of it): per tensor, scale = amax / 448 and the
    weight divided by it (scaled_fp8_quant with that scale); per channel, one such scale per output row, clamped
    below at 1 / (448 * 512) (_fp8_channel_scale); per block, per_block_cast_to_fp8 (128 x 128, amax clamped at
    1e-4, no TP reduction); MXFP8, vLLM's MX quantization of each 1 x 32 group. `reduce_amax`: the TP all-reduce
    (max) of amax_for_tp_weight_quant / amax_for_moe_weight_quant, where the weight is sharded along a dimension
    the amax reduces over; None on one device."""
    fp8 = torch.float8_e4m3fn
    fmax = torch.finfo(fp8).max
    w = weight.float()
    if recipe.strategy == Strategy.GROUP:  # Mxfp8OnlineLinearMethod: mxfp8_e4m3_quantize of the weight, 1 x 32 groups
        codes, exponents = mx_quantize(w)
        return LinearWeights(codes, decode_e8m0(exponents), recipe.block, None)
    if recipe.strategy == Strategy.BLOCK and recipe.block:
        bn, bk = recipe.block
        n, k = w.shape
        padded = torch.zeros(-(-n // bn) * bn, -(-k // bk) * bk, device=w.device)
        padded[:n, :k] = w
        view = padded.view(padded.shape[0] // bn, bn, padded.shape[1] // bk, bk)
        scale = view.abs().amax(dim=(1, 3), keepdim=True).clamp(1e-4) / fmax
        codes = (view * (1.0 / scale)).to(fp8).view_as(padded)[:n, :k].contiguous()
        return LinearWeights(codes, scale.view(view.shape[0], view.shape[2]), recipe.block, None)
    per_channel = recipe.strategy == Strategy.CHANNEL
    amax = w.abs().amax(dim=1, keepdim=True) if per_channel else w.abs().amax().reshape(1)
    if reduce_amax is not None:
        amax = reduce_amax(amax)
    scale = amax / fmax
    scale = scale.clamp_min(1.0 / (fmax * 512)) if per_channel else scale.reshape(())
    return LinearWeights((w / scale).clamp(-fmax, fmax).to(fp8), scale, None, None)


def online_mode(profile) -> str:
    """Recipe.online for an online method under this rule profile: whether vLLM reduces the amax over TP ranks."""
    return "global" if profile.has("online-tp-amax") else "rank"


def max_all_reduce(group) -> Callable[[torch.Tensor], torch.Tensor]:
    """amax_for_tp_weight_quant / amax_for_moe_weight_quant on one rank: the all-reduce (max) over `group`."""
    def reduce(amax: torch.Tensor) -> torch.Tensor:
        import torch.distributed as dist

        dist.all_reduce(amax, op=dist.ReduceOp.MAX, group=group)
        return amax

    return reduce


def as_matrix(scale: torch.Tensor) -> torch.Tensor:
    """A channel, block or group scale as the fp32 2-D matrix the kernels use: ModelOpt / Quark's 1-D per-channel
    [N] becomes [N, 1] (process_fp8_weight_channel_strategy), ModelOpt FP8_PB_WO's 4-D [N/128, 1, K/128, 1] is
    squeezed, MXFP8's uint8 E8M0 exponents [N, K/32] become their powers of two 2**(e - 127)."""
    scale = decode_e8m0(scale) if scale.dtype == torch.uint8 else scale.float()
    if scale.dim() == 1:
        return scale.reshape(-1, 1)
    if scale.dim() == 4:
        return scale.reshape(scale.shape[0], scale.shape[2])
    return scale


def shards_input_scale(shards: tuple[ShardTensors, ...]) -> torch.Tensor | None:
    """Static input scales of fused shards reduce to their max (`input_scale.max()`)."""
    scales = [s.input_scale.float().reshape(()) for s in shards if s.input_scale is not None]
    return torch.stack(scales).max() if scales else None


def _as_linear(weight: torch.Tensor) -> torch.Tensor:
    """A convolution's stored [C, 1, K] kernel as the [C, K] weight of the ColumnParallelLinear vLLM builds for it
    (mamba_mixer2.py / short_conv.py: conv1d.weight.data.unsqueeze(1) is only the view its kernels take)."""
    return weight.squeeze(1) if weight.dim() == 3 and weight.shape[1] == 1 else weight


def _cat(tensors: list[torch.Tensor]) -> torch.Tensor:
    """torch.cat without the copy of a single tensor (most modules are one shard; the LM head is the largest)."""
    return tensors[0] if len(tensors) == 1 else torch.cat(tensors)


def _with_max_scale(shards: tuple[ShardTensors, ...], scales: list[torch.Tensor], top: torch.Tensor):
    """requantize_with_max_scale (quantization/utils/w8a8_utils.py): nothing when every scale is the max, else the
    shards below it per_tensor_dequantize'd then scaled_fp8_quant(weight_dq, max_w_scale), in fp32."""
    if all(bool(scale == top) for scale in scales):
        return None
    parts, notes = [], []
    for shard, scale in zip(shards, scales):
        if bool(scale != top):
            finfo = torch.finfo(shard.weight.dtype)
            requantized = (shard.weight.float() * scale / top).clamp(finfo.min, finfo.max).to(shard.weight.dtype)
            notes.append(_max_scale_note(shard, scale, top, requantized))
            parts.append(requantized)
        else:
            parts.append(shard.weight)
    return parts, notes


def _max_scale_note(shard: ShardTensors, scale: torch.Tensor, top: torch.Tensor, requantized: torch.Tensor) -> str:
    changed = int((requantized.view(torch.uint8) != shard.weight.view(torch.uint8)).sum())
    before = shard.weight.float() * scale
    worst = float((requantized.float() * top - before).abs().max())
    peak = float(before.abs().max()) or 1.0
    return (f"{shard.name}: requantize_with_max_scale (scale {float(scale):.4g} -> {float(top):.4g}, "
            f"{float(top / scale):.2f}x) changed {changed} of {shard.weight.numel()} FP8 codes; worst element change "
            f"{worst:.3g} ({100 * worst / peak:.2f}% of the shard's largest weight)")


def requantize_moe(weight: torch.Tensor, scale: torch.Tensor, top: torch.Tensor) -> torch.Tensor:
    """per_tensor_dequantize (codes to float16, times the scale: a float16 product) then scaled_fp8_quant(dq, max)."""
    dequantized = weight.to(torch.float16) * scale
    return scaled_fp8_quant(dequantized, scale=top)[0].to(weight.dtype)


def _moe_max_scale(shards: tuple[ShardTensors, ...], scales: list[torch.Tensor], top: torch.Tensor):
    """vLLM 0.33.0 quantization/utils/fp8_utils.py:1556-1565 (process_fp8_weight_tensor_strategy_moe) requantizes
    both w1 and w3 of every expert, equal scales or not: per_tensor_dequantize (codes to float16, times the scale)
    then ops.scaled_fp8_quant(dq, max). The float16 round trip can move codes even at the max scale."""
    parts, notes = [], []
    for shard, scale in zip(shards, scales):
        requantized = requantize_moe(shard.weight, scale, top)
        changed = int((requantized.view(torch.uint8) != shard.weight.view(torch.uint8)).sum())
        if changed:
            notes.append(f"{shard.name}: process_fp8_weight_tensor_strategy_moe requantized it to the expert's "
                         f"max w13 scale through float16 ({float(scale):.4g} -> {float(top):.4g}): {changed} of "
                         f"{shard.weight.numel()} FP8 codes changed")
        parts.append(requantized)
    return parts, notes


MAX_SCALE = Requantization(
    _with_max_scale, "{name}: vLLM requantizes this fused per-tensor layer to its largest shard scale "
    "(requantize_with_max_scale), which moves the output by {moved:.3g} against the checkpoint's own scales; export "
    "the fused shards with one shared scale to avoid it")
MOE_MAX_SCALE = Requantization(
    _moe_max_scale, "{name}: vLLM requantizes w1 and w3 to their max scale (process_fp8_weight_tensor_strategy_moe), "
    "which moves the w13 output by {moved:.3g} against the checkpoint's own scales; export w1 and w3 of each expert "
    "with one shared scale to avoid it")


# --------------------------------------------------------------------------------------------- execution

def activations(name: str, k: int, tokens: int, seed: int, dtype: torch.dtype) -> torch.Tensor:
    """The same M x K activations for a layer on every run and every rank (seeded by --seed and the name)."""
    generator = torch.Generator().manual_seed(seed * 1_000_003 + zlib.crc32(name.encode()))
    return torch.randn(tokens, k, generator=generator).to(dtype)


def quantize(x: torch.Tensor, recipe: Recipe, input_scale: torch.Tensor | None):
    """The activations as the kernel's scheme quantizes them: (codes, scales, the fp32 values the GEMM sees)."""
    if recipe.activation is None:
        return None, None, x.float()
    x_q, x_s = numerics.quantize_activation(x, recipe.activation, input_scale)
    return x_q, x_s, numerics.dequantize_activation(x_q, x_s)


def on_device(w: LinearWeights, device: torch.device) -> LinearWeights:
    return LinearWeights(w.weight.to(device), None if w.scale is None else w.scale.to(device), w.block,
                         None if w.input_scale is None else w.input_scale.to(device))


def _weight_scale(shard: ShardTensors) -> torch.Tensor:
    """A quantized shard's weight scale (weights.value_errors refuses a quantized shard without one first)."""
    if shard.scale is None:
        raise ValueError(f"{shard.name}: a quantized weight read without its scale")
    return shard.scale


def run_recipe(recipe: Recipe, w: LinearWeights, x: torch.Tensor, x_q: torch.Tensor | None, x_s: torch.Tensor | None,
               also: torch.Tensor | None = None) -> numerics.Execution:
    """The routed kernel's numerics (numerics.run: `also` rows that ride along an fp32 emulation's pass over the
    weight)."""
    return numerics.run(recipe.numerics, w, x, x_q, x_s, also)


def product(recipe: Recipe, x: torch.Tensor, w: LinearWeights) -> torch.Tensor:
    """x @ (dequantized w)^T in fp32, without materializing the dequantized weight (numerics.fp32_products)."""
    if recipe.numerics == numerics.UNQUANTIZED:
        return numerics.fp32_products(x, w.weight, None, None)
    return numerics.fp32_products(x, w.weight, w.scale, w.block)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "xpu":
        torch.xpu.synchronize(device)


def clock(device: torch.device) -> float:
    """perf_counter once the device has finished its queued work (a kernel's time, not its launch's)."""
    sync(device)
    return time.perf_counter()


def device_kind(device: torch.device) -> str:
    if device.type == "cuda":
        return "rocm" if torch.version.hip else "cuda"
    return device.type


def execution_label(recipe: Recipe, execution: numerics.Execution, device: torch.device, platform_kind: str
                    ) -> tuple[str, bool]:
    """'torch._scaled_mm rowwise on cpu', or 'emulated on cpu (block numerics: fp32 per-K-block GEMM)' when the
    arithmetic stood in for a device GEMM or ran on a different platform than the one routed for."""
    where = str(device)
    emulated = execution.emulation or device_kind(device) != platform_kind
    if emulated:
        return f"emulated on {where} ({recipe.numerics} numerics: {execution.how})", True
    return f"{execution.how} on {where}", False


# ----------------------------------------------------------------------------------------------- verdicts

def relative_error(output: torch.Tensor, reference: torch.Tensor) -> float:
    """||out - ref||_F / ||ref||_F in fp64 (0 when both are zero)."""
    diff = torch.linalg.vector_norm((output.double() - reference.double()))
    norm = torch.linalg.vector_norm(reference.double())
    return float(diff / norm) if float(norm) else float(diff)


class Verdict(NamedTuple):
    status: Status                     # ok | warn | FAIL
    errors: tuple[str, ...]
    warnings: tuple[str, ...]
    rel_error: float                   # the worst GEMM's, against the fp32 reference of its own operands
    gemm_errors: tuple[float, ...]     # each GEMM's (a linear layer: one; an expert: w13, w2)
    bound: float
    processing_error: float | None     # what vLLM's weight processing moved the output by, when measured
    quant_error: float                 # vs model-dtype activations and the checkpoint's weights (information)


def judge(name: str, recipe: Recipe, out_dtype: torch.dtype, output: torch.Tensor,
          gemms: tuple[tuple[str, torch.Tensor, torch.Tensor], ...], processing: float | None,
          requantization: Requantization, quant_error: float) -> Verdict:
    """`output` must be finite; each of `gemms` ((label, output, fp32 reference); label "" for a layer's only
    GEMM) within the numerics' bound; a `processing` error above the bound is a warning."""
    errors, warnings = [], []
    nonfinite = float_problems(output)[0]
    if nonfinite:
        errors.append(f"{name}: {nonfinite} of {output.numel()} outputs are NaN or infinite")
    limit = numerics.bound(recipe.numerics, out_dtype)
    rels = tuple(relative_error(out, reference) for _, out, reference in gemms)
    for (label, _, _), rel in zip(gemms, rels):
        if not rel <= limit:
            what = f"{label} output" if label else "output"
            errors.append(f"{name}: {what} differs from the fp32 reference by {rel:.3g} (relative Frobenius), above "
                          f"the {limit:.3g} bound of {recipe.numerics} numerics with {str(out_dtype)[6:]} output")
    if processing is not None and processing > limit:
        warnings.append(requantization.warning.format(name=name, moved=processing))
    status = Status.FAIL if errors else Status.WARN if warnings else Status.OK
    return Verdict(status, tuple(errors), tuple(warnings), max(rels), rels, limit, processing, quant_error)
