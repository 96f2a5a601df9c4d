"""Memory fit per rank: the weight bytes each tensor-parallel rank holds, read from the headers, against the
device's memory x gpu_memory_utilization, and the KV cache left in tokens.

What vLLM allocates, and where fp8check read it (vLLM 0.33.0 wheel):
- the budget is `ceil(total_memory * gpu_memory_utilization)` (v1/worker/utils.py request_memory); the default
  utilization is 0.92 in every release 0.25-0.33 (config/cache.py `Field(default=0.92)`); from 0.34 it is
  CacheConfig.resolved_gpu_memory_utilization: 1.0 where the extensible KV cache is on (by default on CUDA and
  ROCm: config/vllm.py _resolve_extensible_kv_cache, unless kv_cache_memory_bytes, num_gpu_blocks_override,
  elastic EP or a KV connector that cannot use driver-mapped memory, none of which fp8check takes), else 0.92;
- parameters are created per rank in the model dtype, FP8 weights in one byte, scales in float32 (fp8_utils.py
  create_fp8_scale_parameter; e8m0 scales stay one byte); column/row-parallel layers hold their partition
  (fp8check.core.model.tp), ReplicatedLinear and norms everything, VocabParallelEmbedding / ParallelLMHead the vocabulary
  padded to 64 (pad_vocab_size, at every TP size) and divided by TP; FusedMoE experts are sliced by TP, or held
  whole by their EP rank (determine_expert_map: the first `E % ep` ranks hold one more);
- the KV cache per token per layer is 2 x kv_heads_per_rank x head_dim x the cache dtype's bytes, with
  kv_heads_per_rank = max(1, kv_heads // tp) (config/model.py get_num_kv_heads); MLA caches one latent of
  kv_lora_rank + qk_rope_head_dim per token per layer on every rank (MLAAttentionSpec, num_kv_heads 1). The cache
  dtype is each attention layer's resolved --kv-cache-dtype (AttentionReport.cache_bytes_per_token: one byte per
  element for an FP8 cache, so it holds twice the tokens of a bf16 one); without attention reports, the model dtype;
- sliding-window layers (AttentionReport.kind "sliding window N"): vLLM's hybrid KV cache manager (on by default
  on cuda, rocm, xpu and cpu: support_hybrid_kv_cache, config/vllm.py) gives them their own KV cache groups, and
  a request holds at most `min(window - 1 + max_in_flight_tokens, max_model_len)` of their tokens
  (SlidingWindowSpec.max_admission_blocks_per_request, v1/kv_cache_interface.py), against all of them for the
  full-attention layers; the capacity vLLM logs ("GPU KV cache size: N tokens") is max_model_len x the requests
  of max_model_len that fit (get_kv_cache_capacity, v1/core/kv_cache_utils.py, 0.28.0 / 0.33.0). That depends on
  max_model_len and the scheduler's batch sizes, which fp8check does not take: the token figure counts the sliding
  layers at every token (what vLLM holds when max_model_len is within the window, and with
  --disable-hybrid-kv-cache-manager), and `long_request_tokens` counts the full-attention layers alone (what
  requests far past the window approach); the note says both;
- online --quantization (fp8_per_tensor, fp8_per_block, ...): the online methods create their weights on the meta
  device and quantize each layer as it loads (layers/quantization/online, model_loader/reload/layerwise.py, every
  release 0.25-0.34), so vLLM holds FP8 weights (plus scales) once loaded, and the load-time peak adds one layer's
  bf16 weights (a module's shards, or a FusedMoE's experts);
- "No available memory for the cache blocks" (v1/core/kv_cache_planning.py) when nothing is left, with 0.34's hint
  for the extensible KV cache (_more_kv_cache_memory_hint).

Not modelled (so the KV figure is an upper bound): the activation peak vLLM profiles and subtracts, CUDA graphs,
non-torch allocations, kernels that repack weights after loading, the hybrid KV cache manager's padding layers
and page-size unification. Packed uint8 caches (nvfp4, turboquant, ...) are counted at one byte per element. Scales
and biases of a split layer are counted in proportion to their weight's share (exact when partitions are block
multiples); FusedMoE expert tensors are all divided by TP (the w2 per-channel scales, in fact whole, are a few KB
per expert).
"""

from __future__ import annotations

import math
import os
from itertools import compress, repeat
from typing import NamedTuple

from fp8check.core.checkpoint.local import ModelConfig
from fp8check.core.checkpoint.safetensors_header import FP8_DTYPES, TensorInfo
from fp8check.core.model.modules import EMBEDDINGS, LinearModule, ModelLayout
from fp8check.core.model.tp import VOCAB_PADDING, tp_layout
from fp8check.core.targets.platforms import Platform
from fp8check.core.targets.profiles import RuleProfile

GIB = 1 << 30
# Scales vLLM creates as float32 parameters whatever the checkpoint stores (create_fp8_scale_parameter).
FLOAT32_SUFFIXES = ("weight_scale", "weight_scale_inv", "input_scale", "weight_global_scale", "input_global_scale")
# config/cache.py CacheConfig: DEFAULT_GPU_MEMORY_UTILIZATION (the Field default before 0.34).
DEFAULT_UTILIZATION = 0.92
# v1/core/kv_cache_planning.py (_check_enough_kv_cache_memory and 0.34's _more_kv_cache_memory_hint), verbatim.
NO_CACHE_MEMORY = "No available memory for the cache blocks. {hint} See " \
                  "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details."
UTILIZATION_HINT = ("Try increasing `gpu_memory_utilization` when initializing the engine (this flag also controls "
                    "CPU memory reservation on the CPU backend, despite its name).")
EXTENSIBLE_PART_HINT = ("The KV cache gets what is left after the model and its activations within "
                        "`gpu_memory_utilization`={utilization}; increase it (with the extensible KV cache it "
                        "defaults to 1.0) or decrease `max_model_len` or `max_num_seqs`.")
EXTENSIBLE_ALL_HINT = ("The extensible KV cache already takes all device memory left after the model and its "
                       "activations; decrease `max_model_len` or `max_num_seqs`, or the model needs a device with "
                       "more memory.")
DEFAULT_MEMORY_HINT = "--assume device_memory=80GiB"
# Aliases sold in several memory sizes (platforms.DEVICE_MEMORY_GIB leaves them out): the sizes, nominal GiB from
# the vendors' datasheets, that the hint offers.
SOLD_IN_GIB = {"v100": (16, 32), "a100": (40, 80), "gh200": (96, 144)}


class ModuleBytes(NamedTuple):
    """Identical linear modules (same shapes and parallel style), counted once with their multiplicity."""

    module: LinearModule              # a representative
    copies: int
    split: int                        # bytes of one module that TP divides (weight, block scales, column bias)
    whole: int                        # bytes every rank holds whole (per-tensor scales; row-parallel channel
                                      # scales and bias, which index the output that a row split keeps whole)


class ExpertBytes(NamedTuple):
    num_experts: int
    per_expert: int                   # the largest expert's bytes
    total: int


class WeightFootprint(NamedTuple):
    """What each rank holds, in parts that re-divide cheaply at every TP size (the TP sweep, the matrix)."""

    replicated: int                   # norms, routers, ReplicatedLinear, anything vLLM does not split
    vocab: tuple[tuple[int, int], ...]  # (vocabulary rows, bytes per row) of each vocab-parallel embedding / head
    linears: tuple[ModuleBytes, ...]
    experts: tuple[ExpertBytes, ...]
    kv_bytes_per_token_layer: int     # at TP 1; MLA: the latent, not divided by TP
    kv_heads: int | None              # None for MLA (one latent per rank)
    layers: int
    # Online --quantization: the bf16 bytes of the largest layer quantized at load (0: none), what the load-time
    # peak adds to the FP8 weights (layerwise online processing quantizes each layer before the next loads).
    online_peak: int = 0


class MemoryFit(NamedTuple):
    device_memory: int | None         # bytes; None when the platform's memory is unknown
    utilization: float
    weight_bytes: int                 # what the fullest rank holds
    budget: int | None                # ceil(device_memory * utilization)
    kv_bytes_per_token: int           # per rank
    kv_tokens: int | None
    error: str | None = None
    note: str | None = None
    # Sliding-window models: the tokens that fit when only the full-attention layers cache every token (requests
    # far longer than the window); None without sliding layers or when every layer slides.
    long_request_tokens: int | None = None
    online_peak: int = 0              # WeightFootprint.online_peak: what loading adds for online --quantization

    @property
    def fits(self) -> bool | None:
        return None if self.budget is None else self.error is None

    @property
    def kv_bytes(self) -> int | None:
        return None if self.budget is None else self.budget - self.weight_bytes


def _dtype_bytes(config: ModelConfig) -> int:
    return 4 if (config.dtype or "").lower() in ("float32", "fp32") else 2


def stored_bytes(info: TensorInfo, model_bytes: int) -> int:
    """A tensor's size as vLLM's parameter holds it (not as the checkpoint stores it)."""
    elements = math.prod(info.shape)
    leaf = info.name.rsplit(".", 1)[-1]
    if info.dtype in FP8_DTYPES or info.dtype == "F8_E8M0":
        return elements
    if leaf in FLOAT32_SUFFIXES:
        return elements * 4
    if info.dtype.startswith(("I", "U", "BOOL")):
        return info.end - info.start  # index tensors (g_idx) keep their own dtype
    return elements * model_bytes


def _is_vocab(name: str, info: TensorInfo) -> bool:
    leaf_path = name.rsplit(".", 1)[0]
    return len(info.shape) == 2 and (any(f"{e}." in name for e in EMBEDDINGS) or leaf_path.endswith("lm_head"))


def online_bytes(info: TensorInfo) -> int:
    """A bf16 / fp16 weight as an online FP8 method holds it after loading: one byte an element and at most one
    float32 scale per output row (per-tensor and per-block scales are fewer)."""
    return math.prod(info.shape) + 4 * (info.shape[0] if info.shape else 1)


def weight_footprint(tensors: dict[str, TensorInfo], config: ModelConfig, layout: ModelLayout,
                     online: frozenset[str] = frozenset()) -> WeightFootprint:
    """Sort every loaded tensor into how vLLM splits it; MTP layers (skipped by the main model) are left out.
    `online`: the modules (linear and FusedMoE names) an online --quantization quantizes at load, whose weights
    vLLM holds in FP8 once loaded."""
    model_bytes = _dtype_bytes(config)
    peak = 0

    def held(info: TensorInfo, quantized_online: bool) -> int:
        if quantized_online and info.name.endswith(".weight") and len(info.shape) >= 2:
            return online_bytes(info)
        return stored_bytes(info, model_bytes)

    skipped = {t.name for s in layout.skipped for t in s.tensors}
    claimed = set(skipped)
    groups: dict[tuple, list] = {}
    for module in layout.linears:
        if module.layer_type == "ParallelLMHead":
            continue  # counted with the embeddings below: a VocabParallelEmbedding
        infos = [info for shard in module.shards for info in (shard.weight, *shard.side.values())]
        claimed.update(info.name for info in infos)
        quantized_online = module.name in online
        if quantized_online:  # a module loads all its shards in bf16, then quantizes them
            peak = max(peak, sum(stored_bytes(shard.weight, model_bytes) for shard in module.shards))
        key = (module.layer_type, module.input_size, module.output_sizes, module.heads, module.tp_split,
               module.split_heads, quantized_online)
        if key not in groups:
            row = module.layer_type == "RowParallelLinear"
            split = [i for i in infos if i.numel > 1 and (not row or (len(i.shape) == 2 and i.shape[1] > 1))]
            whole = [i for i in infos if i not in split]
            groups[key] = [module, 0, sum(held(i, quantized_online) for i in split),
                           sum(held(i, quantized_online) for i in whole)]
        groups[key][1] += 1
    experts = []
    for moe in layout.moes:
        # FusedMoE stacks experts of one shape (moe.expert_shapes refuses others): expert 0 stands for all. Its
        # tensors are picked in C: a giant MoE has ~1,500 tensors per FusedMoE.
        expert_0 = compress(moe.tensors, map(str.startswith, moe.tails, repeat("0.")))
        one = sum(held(t, moe.name in online) for t in expert_0)
        if moe.name in online:  # the FusedMoE loads all its experts in bf16, then quantizes them
            peak = max(peak, sum(stored_bytes(t, model_bytes) for t in moe.tensors))
        if one:
            experts.append(ExpertBytes(moe.num_experts, one, one * moe.num_experts))
        else:  # stored fused ([E, ...] tensors): split evenly
            total = sum(held(t, moe.name in online) for t in moe.tensors)
            experts.append(ExpertBytes(moe.num_experts, -(-total // max(moe.num_experts, 1)), total))
    vocab, replicated = [], 0
    for name in layout.non_expert_names:  # a giant MoE's ~90k expert tensors are all in layout.moes
        if name in claimed:
            continue
        info = tensors[name]
        if _is_vocab(name, info):
            vocab.append((info.shape[0], stored_bytes(info, model_bytes) // max(info.shape[0], 1)))
        else:
            replicated += stored_bytes(info, model_bytes)
    layers = config.num_hidden_layers or 0
    modules = tuple(ModuleBytes(*g) for g in groups.values())
    # MLA (DeepSeek): kv_a_proj_with_mqa's output is the cached latent, kv_lora_rank + qk_rope_head_dim.
    latent = next((shard.weight.shape[0] for module in layout.linears for shard in module.shards
                   if shard.name.endswith("kv_a_proj_with_mqa")), None)
    if latent is not None:
        return WeightFootprint(replicated, tuple(vocab), modules, tuple(experts), latent * model_bytes, None, layers,
                               peak)
    heads = config.num_attention_heads or 1
    head_dim = config.head_dim or (config.hidden_size or 0) // heads
    kv_heads = config.num_key_value_heads or heads
    return WeightFootprint(replicated, tuple(vocab), modules, tuple(experts), 2 * head_dim * model_bytes, kv_heads,
                           layers, peak)


def weight_bytes_per_rank(footprint: WeightFootprint, tp: int, ep: bool) -> int:
    """The bytes the fullest rank holds at this TP (with --ep: experts whole, spread over the TP ranks)."""
    total = footprint.replicated
    for rows, row_bytes in footprint.vocab:
        padded = -(-rows // VOCAB_PADDING) * VOCAB_PADDING  # pad_vocab_size, at every TP size
        total += -(-padded // tp) * row_bytes
    for group in footprint.linears:
        module = group.module
        layout = tp_layout(module, module.tp_size(tp))
        full = sum(module.output_sizes) * module.input_size
        held = sum(layout.output_partition_sizes) * layout.input_size_per_partition
        share = 1.0 if layout.error or not full else held / full
        total += group.copies * (math.ceil(group.split * share) + group.whole)
    for moe in footprint.experts:
        if ep:
            total += -(-moe.num_experts // tp) * moe.per_expert
        else:
            total += -(-moe.total // tp)
    return total


def kv_bytes_per_token(footprint: WeightFootprint, tp: int) -> int:
    """In the model dtype, from config.json's heads (what `auto` caches)."""
    per_rank_heads = 1 if footprint.kv_heads is None else max(1, footprint.kv_heads // tp)
    return footprint.layers * per_rank_heads * footprint.kv_bytes_per_token_layer


def fraction(utilization: float) -> str:
    """0.92, 0.5, 1.0: a utilization as the memory line shows it."""
    return f"{utilization:g}" if utilization % 1 else f"{utilization:.1f}"


def gib(value: int) -> str:
    """GiB as vLLM prints memory (MiB below one GiB, so a tiny model does not read 0.0)."""
    return f"{value / GIB:.1f} GiB" if abs(value) >= GIB else f"{value / (1 << 20):.1f} MiB"


class SlidingShare(NamedTuple):
    """The sliding-window attention layers' part of the KV bytes per token (per rank)."""

    layers: int
    attention_layers: int             # every attention layer, sliding or not
    windows: tuple[int, ...]          # the distinct windows, ascending
    bytes_per_token: int              # of the sliding layers (included in fit's kv_per_token)


def sliding_note(sliding: SlidingShare, long_request_tokens: int | None) -> str:
    """What the token figure means for a model with sliding-window layers."""
    windows = "/".join(f"{w:,}" for w in sliding.windows)
    head = (f"{sliding.layers} of {sliding.attention_layers} attention layers use a sliding window ({windows} "
            "tokens), counted here at every token as vLLM holds them when max_model_len is within the window; past "
            "it, vLLM's hybrid KV cache manager keeps only window - 1 + max_in_flight_tokens of their tokens per "
            "request (SlidingWindowSpec)")
    if long_request_tokens is None:
        return head + ", so with every layer sliding a request's cache stops growing at its window"
    return head + f", and requests far longer than the window approach {long_request_tokens:,} tokens"


def extensible_kv_cache(platform: Platform, profile: RuleProfile) -> bool:
    """Whether vLLM turns the extensible KV cache on: from 0.34, by default on CUDA and ROCm."""
    return profile.has("extensible-kv-cache") and platform.kind in ("cuda", "rocm")


def utilization_of(platform: Platform, profile: RuleProfile) -> float:
    """CacheConfig.resolved_gpu_memory_utilization: --assume gpu_memory_utilization, else 1.0 with the
    extensible KV cache, else 0.92."""
    given = platform.assumptions.gpu_memory_utilization
    if given is not None:
        return given
    return 1.0 if extensible_kv_cache(platform, profile) else DEFAULT_UTILIZATION


def no_cache_memory(platform: Platform, profile: RuleProfile) -> str:
    """vLLM's error when the weights leave no room for one cache block, with the hint its release gives."""
    if not extensible_kv_cache(platform, profile):
        hint = UTILIZATION_HINT
    else:
        utilization = utilization_of(platform, profile)
        hint = EXTENSIBLE_PART_HINT.format(utilization=utilization) if utilization < 1.0 else EXTENSIBLE_ALL_HINT
    return NO_CACHE_MEMORY.format(hint=hint)


def memory_hint(platform: Platform) -> str:
    """The --assume to pass where the platform's device memory is unknown, in a size the platform comes in: this
    host's RAM for a CPU, each size of an alias sold in several, else DEFAULT_MEMORY_HINT."""
    alias = platform.label.removeprefix("auto: ").split(" ")[0]
    if platform.kind == "cpu":
        ram = host_memory_gib()
        return (f"--assume device_memory={ram}GiB (this host's RAM; the serving host's if it is another)" if ram
                else "--assume device_memory=<the serving host's RAM, e.g. 256GiB>")
    if alias in SOLD_IN_GIB:
        return "--assume device_memory=" + " or ".join(f"{size}GiB" for size in SOLD_IN_GIB[alias])
    return DEFAULT_MEMORY_HINT


def host_memory_gib() -> int | None:
    """This host's physical memory in whole GiB; None where the OS does not say (no sysconf: Windows)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") >> 30 or None
    except (AttributeError, ValueError, OSError):
        return None


def fit(footprint: WeightFootprint, platform: Platform, profile: RuleProfile, tp: int, ep: bool,
        kv_per_token: int | None = None, sliding: SlidingShare | None = None) -> MemoryFit:
    """Weights per rank against the platform's device memory x the release's gpu_memory_utilization; the KV cache
    left, in tokens of `kv_per_token` bytes per rank (the attention layers' cache_bytes_per_token summed), else of
    the model dtype. `sliding`: the sliding-window layers' share of kv_per_token (the note and
    long_request_tokens)."""
    weights = weight_bytes_per_rank(footprint, tp, ep)
    per_token = kv_bytes_per_token(footprint, tp) if kv_per_token is None else kv_per_token
    utilization = utilization_of(platform, profile)
    memory = platform.assumptions.device_memory
    if memory is None:
        return MemoryFit(None, utilization, weights, None, per_token, None,
                         note=f"device memory of {platform.label.removeprefix('auto: ')} unknown: pass "
                              f"{memory_hint(platform)}")
    budget = math.ceil(memory * utilization)
    left = budget - weights
    peak = footprint.online_peak
    tokens = max(left, 0) // per_token if per_token else None
    online = online_note(footprint)
    if left > 0:
        if sliding is None:
            return MemoryFit(memory, utilization, weights, budget, per_token, tokens, note=online, online_peak=peak)
        full_per_token = per_token - sliding.bytes_per_token
        long_tokens = left // full_per_token if full_per_token > 0 else None
        note = "; ".join(n for n in (sliding_note(sliding, long_tokens), online) if n)
        return MemoryFit(memory, utilization, weights, budget, per_token, tokens, note=note,
                         long_request_tokens=long_tokens, online_peak=peak)
    where = f"TP {tp}" + (" with --ep" if ep else "")
    error = (f"Model weights take {gib(weights)} per rank at {where}, more than the {gib(budget)} vLLM may use "
             f"({fraction(utilization)} x {gib(memory)} of {platform.label} memory); vLLM then raises: "
             + no_cache_memory(platform, profile))
    return MemoryFit(memory, utilization, weights, budget, per_token, 0, error=error, note=online, online_peak=peak)


def online_note(footprint: WeightFootprint) -> str | None:
    """What an online --quantization changes in the figures, or None."""
    if not footprint.online_peak:
        return None
    return ("online quantization: weights counted as vLLM holds them once loaded (FP8, one float32 scale per output "
            "row at most); it loads each layer in bf16 and quantizes it before the next (layerwise online "
            f"processing), so the load-time peak adds at most {gib(footprint.online_peak)} (the largest layer in "
            "bf16, before TP)")


def fits_at(footprint: WeightFootprint, platform: Platform, profile: RuleProfile, tp: int, ep: bool) -> bool:
    """For the TP sweep: unknown memory never excludes a TP size."""
    return fit(footprint, platform, profile, tp, ep).fits is not False


def summary(memory: MemoryFit) -> str:
    """One line for the table and the Markdown."""
    kv_bytes = memory.kv_bytes
    if memory.budget is None or memory.device_memory is None or kv_bytes is None:  # all known where the memory is
        return f"memory: {gib(memory.weight_bytes)} of weights per rank; {memory.note}"
    head = (f"memory: {gib(memory.weight_bytes)} of weights per rank of {gib(memory.budget)} "
            f"({fraction(memory.utilization)} x {gib(memory.device_memory)})")
    if memory.error:
        return head + ": does not fit"
    text = head + f"; KV cache {gib(kv_bytes)} = {memory.kv_tokens:,} tokens at most"
    if memory.long_request_tokens is not None:
        text += f" (sliding-window layers at every token; up to {memory.long_request_tokens:,} past their window)"
    if memory.online_peak:
        text += (f"; weights in FP8 as held once quantized online (loading adds at most "
                 f"{gib(memory.online_peak)}, one bf16 layer)")
    return text

