"""Each attention layer vLLM builds, as `inspect` reports it: its KV cache dtype, the KV cache method the format
gives it, the checkpoint scales it loads (renamed as vLLM's loader renames them, checked for presence and shape),
and the attention backend the platform selects for it (fp8check.kernels.attention).

The layers are found in the model layout: one per decoder layer's QKVParallelLinear (`<...>.self_attn.attn`) or,
for DeepSeek MLA, per kv_a_proj_with_mqa / fused_qkv_a_proj (`<...>.self_attn.mla_attn.mla_attn`, the
MLAAttention inside MultiHeadLatentAttentionWrapper, layers/mla.py); vision towers build MMEncoderAttention, which
has no KV cache, and MTP layers belong to the draft model. Per rank: heads // TP query heads, max(1, kv // TP) KV
heads (replicated beyond their number; gpt_oss.py does not replicate, which inspect's model errors already
refuse), MLA one latent of kv_lora_rank + qk_rope_head_dim. A `self_attn.sinks` tensor (gpt-oss) makes the layer
ask for a backend with sink support. A dense layer's sliding window is the one its model file and Attention give
it (fp8check.core.model.layouts.attention_windows), handed to the backend selector and shown in its kind
("sliding window 4096"); MLAAttention has none. Every Attention of an mm-prefix model (`mm_prefix_lm`) asks for
mm-prefix support (Attention.use_mm_prefix = model_config.is_mm_prefix_lm, layers/attention/attention.py).

What vLLM does with the scales (quantization/kv_cache.py BaseKVCacheMethod, compressed_tensors.py
CompressedTensorsKVCacheMethod, 0.28.0 / 0.33.0), and what this module says about each case:
- a scale missing everywhere: BaseKVCacheMethod keeps its -1.0 sentinels and uses 1.0 with its warning (verbatim);
  CompressedTensorsKVCacheMethod keeps its placeholder ones silently (named here when a kv_cache_scheme is set);
- a scale other layers have but this one lacks is named: only k_scale -> V is written with k_scale (max(k, v) of
  the sentinel), only v_scale -> process_weights_after_loading's `assert layer.k_scale > 0.0` fails (an error);
- shapes: KVCacheScaleParameter takes one element ("KV-cache scale expects a scalar weight, got shape ..."), CT's
  placeholder [1] the same through default_weight_loader, CT attn_head one per KV head ([heads, 1, 1] flattened);
- values (finite, > 0) are `load`'s to check: inspect reads headers only.

kv_cache_dtype_skip_layers (layers/attention/attention.py, 0.25-0.33): Attention keeps "auto" for a layer whose
index (extract_layer_index of its prefix) is listed, or that has a sliding window when "sliding_window" is listed;
MLAAttention (mla_attention.py) checks the index only.
"""

from __future__ import annotations

import math
import re
from itertools import compress, repeat
from typing import TYPE_CHECKING, Callable, NamedTuple

from fp8check.core.formats.kv_cache import (
    AUTO, BASE_PROCESSING, CT_METHOD, E5M2_REFUSED, FALLBACK_ONE, KV_SCALE_DEPRECATED, NO_Q_SCALE, NOT_LOADED,
    NOT_SCALAR, KVConfig, ScaleName, e5m2_refused, element_bytes, kv_config, remap, resolve, scale_suffixes,
    stored_dtype,
)
from fp8check.core.formats.registry import FORMATS
from fp8check.core.model.layouts import (
    GENERIC_ARCH, QKV_CLASSES, SLIDING_KIND, attention_windows, model_arch, model_cache_dtype, sparse_mla_layer,
    tail_match, tower_for, vllm_module_name,
)
from fp8check.core.model.memory import SlidingShare
from fp8check.core.records import AttentionReport
from fp8check.core.vocabulary import Strategy, layer_template
from fp8check.kernels.attention import diff_kv_backend, select_attention_backend, sink_capable_backend
from fp8check.kernels.attention_backends import (
    DECODER, ENCODER_DECODER, AttentionChoice, AttentionSpec, is_quantized_kv_cache,
)

if TYPE_CHECKING:  # annotations only
    from fp8check.core.checkpoint.local import Checkpoint
    from fp8check.core.model.modules import ModelLayout
    from fp8check.core.records import InspectOptions
    from fp8check.kernels.base import RoutingContext

# A decoder layer's fused QKV under the module holding its Attention (Nemotron-H: mixer.qkv_proj; Step-5's sparse
# layers: qkv_indexer_proj; Ling / Ring's bailing_moe.py: attention.query_key_value, its Attention attention.attn).
# Beam's qkv_gate_proj (Arch.merged_qkv_gate) is a MergedColumnParallelLinear with the attention's heads.
# EXAONE-3 (exaone.py) names the attention transformer.h.N.attn.attention, its Attention under it as .attn; InternLM2
# (internlm2.py) attention.wqkv, its Attention attention.attn; ChatGLM (chatglm.py) self_attention.query_key_value, its
# Attention self_attention.attn. GPT-J's attn.qkv_proj, GPT-2's attn.c_attn, BLOOM's and Falcon's
# self_attention.query_key_value (gpt_j.py, gpt2.py, bloom.py, falcon.py): the Attention beside it, .attn. DBRX
# (dbrx.py) transformer.blocks.N.norm_attn_norm.attn.Wqkv, its Attention beside it.
_DENSE = re.compile(r"^(.*\.(?:layers|h|blocks)\.(\d+)\.(?:self_attn|self_attention|mixer|attention|attn\.attention|"
                    r"norm_attn_norm\.attn|attn))\."
                    r"(qkv_proj|qkv_indexer_proj|query_key_value|qkv_gate_proj|wqkv|c_attn|Wqkv)$")
# The leaf a PEFT LoRA wrapper saves its wrapped linear under.
LORA_BASE = ".base_layer"
# Any linear of a decoder layer's attention module (self_attn; the Transformers backend's GPT-NeoX attention, GPTBigCode
# attn).
_SELF_ATTN = re.compile(r"^(.*\.(?:layers|h)\.(\d+)\.(?:self_attn|attention|attn))\.([^.]+)$")
# A shared transformer block's fused QKV (zamba2.py: model.layers.N.shared_transformer.self_attn.qkv_proj).
_SHARED_QKV = re.compile(r"^(.*\.layers\.\d+\.shared_transformer)\.self_attn\.qkv_proj$")
_Q_ONLY = re.compile(r"^(.*\.layers\.(\d+)\.self_attn)\.q_proj$")  # a KV-shared layer's query projection
# Ling / Ring 2.5's MLA is `attention`; LongCat-Flash's FlashDecoderLayer (longcat_flash.py) holds two MLA attentions,
# self_attn.0 and self_attn.1.
_MLA = re.compile(r"^(.*\.layers\.(\d+)\.(?:self_attn(?:\.\d+)?|attention))\."
                  r"(?:fused_qkv_a_proj|fused_qkv_a_g_proj|kv_a_proj_with_mqa)$")
# DeepSeek-V4's attention (models/deepseek_v4/attention.py DeepseekV4Attention): the parent of its fused_wqa_wkv, whose
# second shard (wkv) is the head; its checkpoint names have no "model." root.
_OWN = re.compile(r"^((?:.*\.)?layers\.(\d+)\.attn)\.fused_wqa_wkv$")
# What importing vllm.v1.attention.backends.flashinfer raises where FlashInfer is not installed: vLLM's CPU, ROCm and
# XPU builds (only the CUDA wheels require flashinfer-python): Arch.required_backend's model files import it.
NO_FLASHINFER = "No module named 'flashinfer'"  # ModuleNotFoundError
# Inkling's attention (models/inkling/nvidia/attention.py InklingAttention, an AttentionLayerBase with its own
# FlashAttention backend and cache_config's KV cache dtype): the parent of its qkvr ([q, k, v, r] fused).
_OWN_QKVR = re.compile(r"^((?:.*\.)?layers\.(\d+)\.attn)\.qkvr$")
# DeepseekV4Attention's KV cache (_resolve_dsv4_kv_cache_dtype, 0.30-0.34): DeepSeek's fp8_ds_mla block format, a
# 576-byte slot per token (attention.py), for "auto" and any FP8 --kv-cache-dtype; anything else is refused.
FP8_DS_MLA = "fp8_ds_mla"
FP8_DS_MLA_BYTES = 576
_LAYER_INDEX = re.compile(r"\.layers\.\d+\.")
KV_PARAMS = ("k_scale", "v_scale")
# ModelArchConfigConvertorBase.is_mm_prefix_lm's MM_PREFIX_LM_MODELS (transformers_utils/
# model_arch_config_convertor.py, 0.33.0; 0.25-0.28 also list "umm", a model fp8check has no layout for).
MM_PREFIX_LM_MODELS = ("bagel", "gemma3", "molmo2", "moondream3", "paligemma")
FLOAT_DTYPES = ("F32", "F16", "BF16", "F64")
SKIP_SLIDING = "sliding_window"


class AttentionLayer(NamedTuple):
    """One Attention / MLAAttention module, with the totals its checkpoint gives (per-rank counts are derived)."""

    name: str                         # vLLM's module name
    prefix: str                       # the checkpoint's "<...>.layers.<i>.self_attn"
    layer_index: int                  # the decoder layer's
    head_size: int
    num_heads: int
    num_kv_heads: int                 # MLA: 1 (the latent)
    mla: bool
    sinks: bool
    sliding_window: int | None = None  # None: full attention (MLA: always)
    sparse: bool = False              # DeepSeek sparse attention: an MLA layer with an indexer
    shared: bool = False              # reuses an earlier layer's KV cache (Gemma-4's KV-shared layers): no cache
    # The backend of a layer that is the model file's own attention (Arch.own_attention: DeepSeek-V4's;
    # Arch.indexer_backend: MiniMax-M3's sparse layers), with no KV cache method; None: the platform's selector picks.
    own_backend: str | None = None
    ds_mla_cache: bool = False        # DeepSeek-V4's own attention: DeepSeek's fp8_ds_mla cache (_ds_mla_report)
    # The backend the model file hands this Attention (Arch.attention_backends): the selector is not asked, the KV
    # cache method is the format's.
    given_backend: str | None = None
    # V's head size where it differs from K's and the model file picks the layer's backend for it (Arch.diff_kv).
    head_size_v: int | None = None
    # The model's own AttentionLayerBase, neither Attention nor MLAAttention (Arch.mla_self_attention_is_mla_attention
    # False): the selector picks its backend, no format gives it a KV cache method.
    no_kv_method: bool = False
    replicated: bool = False          # built with the model's total heads on every rank (Arch.attention_replicated)
    cross: bool = False               # an encoder-decoder model's CrossAttention (Arch.cross_attention)


def own_attention_backend(arch, platform_kind: str, cc: int | None) -> str | None:
    """The backend of the model's own attention layer on this platform (Arch.own_attention), or None."""
    if arch is None or not arch.own_attention:
        return None
    family = f"{platform_kind}:{(cc or 0) // 10 * 10}"
    return arch.own_attention.get(family, arch.own_attention.get(platform_kind))


def attention_layers(ckpt: Checkpoint, layout: ModelLayout, platform_kind: str = "",
                     cc: int | None = None, profile=None) -> tuple[AttentionLayer, ...]:
    """Every attention layer of the main model, in layer order, named as the model class vLLM resolves on
    `platform_kind` (CUDA capability `cc`) names it."""
    arch = model_arch(ckpt.config, profile, platform_kind)
    windows = attention_windows(ckpt.config, arch).windows
    names = {module.name for module in layout.linears}
    layers = []
    own_backend = own_attention_backend(arch, platform_kind, cc)
    for module in layout.linears:
        if arch is not None and tower_for(arch, module.name):
            continue
        cross = _cross_attention(module, arch, ckpt.config)
        if cross is not None:
            layers.append(cross)
            continue
        own = _OWN.match(module.name) if own_backend else None
        qkvr = _OWN_QKVR.match(module.name) if own_backend else None
        if qkvr and ckpt.config.head_dim:
            index, head_dim = int(qkvr.group(2)), ckpt.config.head_dim
            layers.append(AttentionLayer(qkvr.group(1), qkvr.group(1), index, head_dim,
                                         module.output_sizes[0] // head_dim, module.output_sizes[1] // head_dim, False,
                                         False, windows[index] if index < len(windows) else None,
                                         own_backend=own_backend))
            continue
        if own:
            layers.append(AttentionLayer(own.group(1), own.group(1), int(own.group(2)), module.output_sizes[1],
                                         ckpt.config.num_attention_heads or 1, 1, True, False, sparse=True,
                                         own_backend=own_backend, ds_mla_cache=True))
            continue
        # Step-3's replicated qkv_proj (Arch.own_query_width): Attention(num_attention_heads, head_dim, 1 KV head).
        config_heads, config_head_dim = ckpt.config.num_attention_heads, ckpt.config.head_dim
        narrowed = ((config_heads, 1, config_head_dim) if arch is not None and arch.own_query_width and config_heads
                    and config_head_dim else None)
        qkv = module.layer_type in QKV_CLASSES or arch is not None and module.leaf == arch.merged_qkv_gate
        geometry = narrowed or (module.heads if qkv else None)
        # a LoRA-wrapped QKV (Phi-4-multimodal's `qkv_proj.base_layer`, which its mapper names qkv_proj) is the linear
        dense = _DENSE.match(module.name.removesuffix(LORA_BASE)) if geometry else None
        # A fused q / k linear of another class (Arch.attention_linear): the Attention takes config.json's geometry.
        if not dense and arch is not None and arch.attention_linear is not None:
            merged, config_kv_heads = _SELF_ATTN.match(module.name), ckpt.config.num_key_value_heads
            # no head_dim in config.json (GPT-NeoX): hidden_size / num_attention_heads, as the config class derives it
            size = config_head_dim or (ckpt.config.hidden_size // config_heads
                                       if config_heads and ckpt.config.hidden_size else None)
            if merged and merged.group(3) == arch.attention_linear and config_heads and config_kv_heads and size:
                dense, geometry = merged, (config_heads, config_kv_heads, size)
        mla = None if dense else _MLA.match(module.name)
        if dense and arch is not None and arch.linear_attention_gate and \
                f"{dense.group(1).rpartition('.')[0]}.{arch.linear_attention_gate}" in names:
            continue  # a linear-attention mixer (Ling-2.5's): no Attention
        if dense and geometry:
            heads, kv_heads, head_dim = geometry
            if arch is not None and arch.q_gate:  # the QKV's query heads include the output gate's
                heads //= 2
            prefix, index = dense.group(1), int(dense.group(2))
            # A layer with the indexer (in its qkv_proj or, Arch.indexer_unfused_on, beside it) is the backend's.
            own_backend = arch.indexer_backend if arch is not None and any(
                f"{prefix}.{shard}.weight" in ckpt.tensors for shard in arch.indexer_shards) else None
            given = next((backend for leaf, backend in arch.attention_backends.items()
                          if leaf == dense.group(3) or f"{prefix}.{leaf}" in names), None) if arch else None
            window = windows[index] if index < len(windows) else None
            # MiMo-V2 (Arch.swa_sinks): sinks on the sliding layers as config.json asks, whatever the checkpoint holds
            # Flint (Arch.sinks_always): sinks on every layer, whatever the checkpoint holds
            sinks = (window is not None and ckpt.config.swa_sinks if arch is not None and arch.swa_sinks
                     else (arch is not None and arch.sinks_always) or f"{prefix}.sinks" in ckpt.tensors)
            head_size_v = (module.output_sizes[2] // kv_heads if arch is not None and arch.diff_kv
                           and len(module.output_sizes) > 2 and kv_heads else None)
            layer = AttentionLayer(prefix if own_backend else f"{prefix}.attn", prefix, index, head_dim, heads,
                                   kv_heads, False, sinks, window, own_backend=own_backend, given_backend=given,
                                   head_size_v=head_size_v if head_size_v != head_dim else None,
                                   replicated=arch is not None and arch.attention_replicated)
            layers += loop_attention_layers(layer, ckpt.config) if arch is not None and arch.loop_attentions \
                else [layer]
        elif mla and arch is not None and arch.mla_projections_dense:
            # each head's query (q_b_proj's rows over the heads) is qk_nope_head_dim + qk_rope_head_dim wide
            prefix, index, heads = mla.group(1), int(mla.group(2)), ckpt.config.num_attention_heads or 1
            query = next((m.output_sizes[0] for m in layout.linears if m.name == f"{prefix}.q_b_proj"), None)
            if query is not None:
                layers.append(AttentionLayer(f"{prefix}.attn", prefix, index, query // heads, heads, heads, False,
                                             False, windows[index] if index < len(windows) else None))
        elif mla:
            # a fused front-end's second part is kv_a_proj_with_mqa: the latent plus the rope dims
            latent = module.output_sizes[1 if len(module.output_sizes) > 1 else 0]
            prefix, index = mla.group(1), int(mla.group(2))
            # Kimi-K3.1's DSA layers (Arch.sparse_marker): KimiK3DSAAttention wraps its MLAAttention
            marked = arch is not None and arch.sparse_marker is not None and \
                f"{prefix}.{arch.sparse_marker}.weight" in ckpt.tensors
            itself = arch is not None and platform_kind in arch.mla_self_attention and not marked
            rules = arch or GENERIC_ARCH
            name = prefix if itself else f"{prefix}.{rules.mla_attention}"
            if arch is not None and arch.mla_kv_sharing:
                name, latent = f"{prefix}.attn", _mistral_latent(ckpt.config, latent)
            sparse = marked or sparse_mla_layer(arch, ckpt.config, index)
            # A dense MLA layer of a model that hands it its backend and window (Arch.dense_mla_attention: dots3-note's
            # sliding layers, swa_num_attention_heads heads: ModelConfig.heads_per_layer).
            given, window, heads = None, None, ckpt.config.num_attention_heads or 1
            if arch is not None and arch.dense_mla_attention and not sparse:
                path, given = arch.dense_mla_attention
                name, window = f"{prefix}.{path}", ckpt.config.sliding.sliding_window_size
                per_layer = ckpt.config.heads_per_layer or ()
                heads = per_layer[index] if index < len(per_layer) else heads
            layers.append(AttentionLayer(name, prefix, index, latent, heads, 1, True, False, window, sparse=sparse,
                                         given_backend=given,
                                         no_kv_method=itself and not rules.mla_self_attention_is_mla_attention))
    if arch is not None and arch.shared_block_uses:
        layers += shared_block_layers(layout, arch.shared_block_uses, windows)
    if arch is not None and arch.mla_kv_sharing:
        layers += _mla_kv_shared(layers, ckpt.config.kv_source_layers)
    if arch is not None and arch.kv_shared_layers and ckpt.config.num_kv_shared_layers:
        layers += _kv_shared(layout, layers, windows, ckpt.config.num_hidden_layers or 0,
                             ckpt.config.num_kv_shared_layers)
    return tuple(sorted(layers, key=lambda layer: layer.layer_index))


def loop_attention_layers(layer: AttentionLayer, config) -> list[AttentionLayer]:
    """IQuest-LoopCoder's Attentions of one decoder layer (Arch.loop_attentions): `attn.{k}` per loop k, built under
    the prefix of layer k x num_hidden_layers + i (the index vLLM reads off it), loop 0 with the layer's window, the
    others with config.loop_window_size (iquest_loopcoder.py LoopCoderAttention: a CacheConfig of that window)."""
    total = config.num_hidden_layers or 0
    return [layer._replace(name=f"{layer.name}.{loop}", layer_index=loop * total + layer.layer_index,
                           sliding_window=layer.sliding_window if loop == 0 else config.loop_window_size)
            for loop in range(config.loop_num)]


def shared_block_layers(layout: ModelLayout, uses: tuple[str, str], windows: tuple) -> list[AttentionLayer]:
    """The Attentions of Zamba2's shared transformer blocks (Arch.shared_block_uses): one per use k of a block,
    `<block>.self_attn.<Attention list>.{k}`, all of its qkv_proj's geometry. Attention k of block b (b the block's
    first use, of M blocks over H uses) is built under the prefix model.attn.{j}, j counting on from
    b * (H + M - 1) // M (zamba2.py Zamba2Attention): the layer index vLLM reads off that prefix."""
    adapters, attentions = uses
    blocks: dict[str, tuple[int, int, int]] = {}
    for module in layout.linears:
        if (match := _SHARED_QKV.match(module.name)) and module.heads:
            blocks[match.group(1)] = module.heads
    block_uses = {block: sorted({int(match.group(1)) for module in layout.linears if (match := re.fullmatch(
        rf"{re.escape(block)}\.{re.escape(adapters)}\.(\d+)\.[^.]+", module.name))}) for block in blocks}
    total = sum(len(found) for found in block_uses.values())
    out = []
    for block, (heads, kv_heads, head_dim) in blocks.items():
        for position, use in enumerate(block_uses[block]):
            index = block_uses[block][0] * (total + len(blocks) - 1) // len(blocks) + position
            out.append(AttentionLayer(f"{block}.self_attn.{attentions}.{use}", f"{block}.self_attn", index, head_dim,
                                      heads, kv_heads, False, False, windows[index] if index < len(windows) else None))
    return out
def _cross_attention(module, arch, config) -> AttentionLayer | None:
    """The CrossAttention beside a decoder layer's cross-attention K / V (Arch.cross_attention: whisper.py's
    encoder_attn.kv_proj, [K, V] of the decoder's heads, every head a KV head), or None."""
    if arch is None or arch.cross_attention is None or tail_match(module.name, (arch.cross_attention,)) is None:
        return None
    index, heads = layer_template(module.name)[1], config.num_attention_heads
    if index is None or not heads or module.output_sizes[0] % heads:
        return None
    prefix = module.name[: -len(module.leaf) - 1]
    return AttentionLayer(f"{prefix}.attn", prefix, index, module.output_sizes[0] // heads, heads, heads, False, False,
                          cross=True)


def _mistral_latent(config, latent: int) -> int:
    """Mistral-Large-4's latent cache: kv_lora_rank + qk_rope_head_dim on every layer (a NoPE layer's zero RoPE key
    included), else the projection's width."""
    if config.kv_lora_rank and config.mla_dims:
        return config.kv_lora_rank + config.mla_dims[1]
    return latent


def _mla_kv_shared(layers: list[AttentionLayer], sources: tuple[int, ...]) -> list[AttentionLayer]:
    """Mistral-Large-4's KV-sharing layers (Arch.mla_kv_sharing): a layer whose source is another one has no
    kv_a_proj_with_mqa; its MLAAttention `self_attn.attn` has the source's geometry and no cache of its own."""
    owners = {layer.layer_index: layer for layer in layers}
    out = []
    for index, source in enumerate(sources):
        if source != index and source in owners and index not in owners:
            prefix = owners[source].prefix.replace(f".layers.{source}.", f".layers.{index}.")
            out.append(owners[source]._replace(name=f"{prefix}.attn", prefix=prefix, layer_index=index, shared=True))
    return out


def _kv_shared(layout: ModelLayout, layers: list[AttentionLayer], windows: tuple, total: int,
               shared: int) -> list[AttentionLayer]:
    """Gemma-4's KV-shared layers (gemma4.py: the last num_kv_shared_layers): each reads the cache of the last
    earlier layer of its kind (sliding or full), so it has that layer's geometry and no cache of its own."""
    out = []
    for module in layout.linears:
        match = _Q_ONLY.match(module.name)
        if match is None or int(match.group(2)) < total - shared:
            continue
        index = int(match.group(2))
        window = windows[index] if index < len(windows) else None
        target = next((layer for layer in reversed(layers)
                       if layer.layer_index < total - shared and layer.sliding_window == window), None)
        if target is not None:
            out.append(target._replace(name=f"{match.group(1)}.attn", prefix=match.group(1), layer_index=index,
                                       shared=True))
    return out


def mm_prefix_lm(ckpt: Checkpoint) -> bool:
    """ModelConfig.is_mm_prefix_lm as a default `vllm serve` decides it: the config's model_type is in
    MM_PREFIX_LM_MODELS and the architecture takes multimodal inputs (fp8check: a layout with a vision tower; a
    text-only class such as Gemma3ForCausalLM has is_multimodal_model False, and vLLM then passes
    supports_multimodal=False). Not modelled: an explicit `is_mm_prefix_lm` key in config.json (ModelConfig does
    not carry it), --language-model-only / all-zero --limit-mm-per-prompt (inspect has no such option), the
    Gemma-4 and DeepSeek-V4 convertors' own rules (no layout)."""
    arch = model_arch(ckpt.config, None)  # towers: the same in every release
    return ckpt.config.model_type in MM_PREFIX_LM_MODELS and arch is not None and bool(arch.towers)


def _params(method: str | None, name: str) -> frozenset[str]:
    """The scale parameters the KV method registers on the layer (none without a method: set_default_quant_scales
    registers buffers, which the loader's params_dict does not hold)."""
    if method is None:
        return frozenset()
    leaves = ("k_scale", "v_scale", "q_scale") + (() if method == CT_METHOD else ("prob_scale",))
    return frozenset(f"{name}.{leaf}" for leaf in leaves)


def _scales_by_layer(layout: ModelLayout, layers: tuple[AttentionLayer, ...], kv: KVConfig) -> dict[str, list[str]]:
    """Checkpoint scale tensors grouped by the attention prefix they sit under (one pass over the names outside
    the FusedMoE experts: a DeepSeek-V3 checkpoint's ~89,000 expert tensors are no attention layer's)."""
    prefixes = {layer.prefix for layer in layers}
    grouped: dict[str, list[str]] = {}
    # Only names under a `.self_attn.` are grouped; that substring test runs in C, the suffix test over what is left.
    every = layout.non_expert_names
    names = list(compress(every, map(str.__contains__, every, repeat(".self_attn."))))
    for name in compress(names, map(str.endswith, names, repeat(scale_suffixes(kv.quark_names)))):
        head, sep, rest = name.partition(".self_attn.")
        prefix = head + ".self_attn"
        if prefix not in prefixes:  # one of a layer's several attentions (LongCat-Flash's self_attn.0 / .1)
            prefix += "." + rest.partition(".")[0]
        if sep and prefix in prefixes:
            grouped.setdefault(prefix, []).append(name)
    return grouped


def _same_place(example: str, layer: AttentionLayer) -> str:
    """The name `example` (another layer's tensor) would have in this layer."""
    return _LAYER_INDEX.sub(f".layers.{layer.layer_index}.", example, count=1)


class _Loaded(NamedTuple):
    scales: dict[str, ScaleName]      # param leaf -> the checkpoint tensor it loads from
    warnings: list[str]
    errors: list[str]


def _load(layer: AttentionLayer, names: list[str], method: str | None, kv: KVConfig, ckpt: Checkpoint,
          mla_model: bool) -> _Loaded:
    """The scales this layer loads, their shape checks, and the names vLLM's loader drops."""
    params = _params(method, layer.name)
    loaded: dict[str, ScaleName] = {}
    warnings: list[str] = []
    errors: list[str] = []
    for name in sorted(names):
        scale = remap(name, kv.quark_names, mla_model, params)
        if scale is None:
            continue
        if scale.target not in params:
            kind = "kv_scale" if scale.fused else name.rsplit(".", 1)[1]
            warnings.append(NOT_LOADED.format(kind=kind, name=name, target=scale.target))
            continue
        if scale.fused:
            warnings.append(KV_SCALE_DEPRECATED)
        loaded[scale.param] = scale
        info = ckpt.tensors[name]
        errors += _shape_errors(scale, tuple(info.shape), method, kv, layer)
        if info.dtype not in FLOAT_DTYPES:
            warnings.append(f"{name}: stored as {info.dtype}; vLLM copies it into a float32 scale parameter")
    return _Loaded(loaded, warnings, errors)


def _shape_errors(scale: ScaleName, shape: tuple[int, ...], method: str | None, kv: KVConfig,
                  layer: AttentionLayer) -> list[str]:
    numel = math.prod(shape)
    if method != CT_METHOD:  # KVCacheScaleParameter.weight_loader
        return [] if numel == 1 else [f"{scale.tensor}: " + NOT_SCALAR.format(shape=shape)]
    if kv.strategy == Strategy.ATTN_HEAD:  # _tp_aware_loader: flattened, one per KV head (q: per query head)
        want = layer.num_heads if scale.param == "q_scale" else layer.num_kv_heads
        if numel == want:
            return []
        return [f"{scale.tensor}: shape {list(shape)}: the attn_head kv_cache_scheme loads one {scale.param} per "
                f"{'query' if scale.param == 'q_scale' else 'KV'} head ({want}, stored [{want}, 1, 1])"]
    if numel == 1:
        return []
    size = ", ".join(map(str, shape))
    return [f"{scale.tensor}: Attempted to load weight (torch.Size([{size}])) into parameter (torch.Size([1]))"]


def _missing(layer: AttentionLayer, loaded: dict[str, ScaleName], method: str, kv_dtype: str, quantized: bool,
             elsewhere: dict[str, ScaleName], kv: KVConfig) -> tuple[list[str], list[str], list[str]]:
    """(errors, warnings, notes) for the scales this layer lacks, naming the tensor other layers have."""
    errors: list[str] = []
    warnings: list[str] = []
    notes: list[str] = []
    if not quantized:
        if loaded:
            notes.append("k/v scales are loaded but unused: the KV cache is not quantized (scales forced to 1.0)")
        return errors, warnings, notes
    if kv_dtype.endswith("per_token_head"):  # BaseKVCacheMethod: scales computed per (token, head) at cache write
        if loaded:
            notes.append(f"k/v scales are loaded but unused: {kv_dtype} computes its scales at cache write")
        return errors, warnings, notes
    absent = [p for p in KV_PARAMS if p not in loaded]
    fused = "k_scale" in loaded and loaded["k_scale"].fused
    named = [f"{p} ({_same_place(elsewhere[p].tensor, layer)}, which other layers have)"
             for p in absent if p in elsewhere and not (fused and p == "v_scale")]
    if method == CT_METHOD:
        if named:
            warnings.append(f"{layer.name}: no {' or '.join(named)} in the checkpoint: CompressedTensorsKVCacheMethod "
                            "keeps its placeholder 1.0")
        elif absent and kv.scheme is not None and not elsewhere:
            warnings.append(f"{layer.name}: the kv_cache_scheme declares FP8 KV scales but the checkpoint has no "
                            "k_scale / v_scale: CompressedTensorsKVCacheMethod keeps its placeholder 1.0")
        return errors, warnings, notes
    if "q_scale" not in loaded:
        notes.append(NO_Q_SCALE)
    if not absent or fused:
        if fused:
            notes.append(f"{loaded['k_scale'].tensor} loads into k_scale; v_scale duplicates it")
        return errors, warnings, notes
    if len(absent) == 2:
        prefix = f"{layer.name}: no {' or '.join(named)} in the checkpoint: " if named else ""
        warnings.append(prefix + FALLBACK_ONE)
    elif absent == ["v_scale"]:
        what = named[0] if named else "v_scale"
        warnings.append(f"{layer.name}: no {what} in the checkpoint: {method} writes V with k_scale "
                        "(max(k_scale, v_scale) of the unset -1.0)")
    else:
        what = named[0] if named else "k_scale"
        errors.append(f"{layer.name}: no {what} in the checkpoint, only v_scale: {method}."
                      "process_weights_after_loading fails `assert layer.k_scale > 0.0`")
    return errors, warnings, notes


def _skipped(layer: AttentionLayer, skip_layers: tuple[str, ...]) -> bool:
    """kv_cache_dtype_skip_layers: the layer index (extract_layer_index of the prefix), or "sliding_window" for a
    layer with one (Attention only: MLAAttention checks the index alone)."""
    return str(layer.layer_index) in skip_layers or (layer.sliding_window is not None and SKIP_SLIDING in skip_layers)


def attention_inspector(ckpt: Checkpoint, layout: ModelLayout, quant: object, options: InspectOptions,
                        ctx: RoutingContext, model_dtype: str) -> Callable[[int], tuple[AttentionReport, ...]]:
    """The attention layers' reports at a TP size (inspect's TP and its sweep): what does not depend on TP (the
    layers, their KV methods, the scales they load) is read once; identical layers share one backend selection."""
    layers = attention_layers(ckpt, layout, ctx.kind, ctx.cc, ctx.profile)
    use_mm_prefix = mm_prefix_lm(ckpt)
    quant_format = FORMATS.get(getattr(quant, "method", ""))  # None: unquantized, or a config out of scope
    kv = kv_config(quant_format.kv_cache if quant_format else None, quant, ckpt.config.raw_quantization_config)
    mla_model = any(layer.mla for layer in layers)
    grouped = _scales_by_layer(layout, layers, kv)
    arch = model_arch(ckpt.config, ctx.profile, ctx.kind)
    window_error = attention_windows(ckpt.config, arch).error
    # A layer that is the model's own attention, or one built without the quant config, has no KV cache method;
    # the others ask under vLLM's module name (the model's hf_to_vllm_mapper renames).
    no_method = arch is not None and not arch.attention_quant_config
    renames = arch.hf_to_vllm if arch is not None else ()
    methods = {layer.name: None if layer.own_backend or layer.no_kv_method or no_method
               else kv.method_for(vllm_module_name(layer.name, renames), layer.mla) for layer in layers}
    loads = {layer.name: _load(layer, grouped.get(layer.prefix, []), methods[layer.name], kv, ckpt, mla_model)
             for layer in layers}
    elsewhere: dict[str, ScaleName] = {}
    for load in loads.values():
        for param, scale in load.scales.items():
            elsewhere.setdefault(param, scale)
    choices: dict[AttentionSpec, AttentionChoice] = {}

    def reports_at(tp: int) -> tuple[AttentionReport, ...]:
        return tuple(_report(layer, methods[layer.name], loads[layer.name], tp) for layer in layers)

    requested = model_cache_dtype(ckpt.config.architectures, options.kv_cache_dtype, ctx)
    sink_backend = arch.sink_mla_backend if arch is not None and ckpt.config.learnable_sink is not False else None
    encoder_decoder = arch is not None and arch.cross_attention is not None  # its config class's is_encoder_decoder

    def _report(layer: AttentionLayer, method: str | None, load: _Loaded, tp: int) -> AttentionReport:
        if layer.ds_mla_cache:
            return _ds_mla_report(layer, requested, tp)
        kv_dtype = resolve(requested, kv, layer.mla, _skipped(layer, options.kv_cache_dtype_skip_layers))
        stored = stored_dtype(kv_dtype, model_dtype, options.platform.fp8_dtype)
        split = 1 if layer.replicated else tp
        heads = max(1, layer.num_heads // split)
        kv_heads = 1 if layer.mla else max(1, layer.num_kv_heads // split)
        # CrossAttention asks with the head size, dtypes and its attention type alone
        spec = AttentionSpec(head_size=layer.head_size, num_heads=heads, num_kv_heads=kv_heads,
                             kv_cache_dtype=kv_dtype, model_dtype=model_dtype, use_mla=layer.mla,
                             has_sink=layer.sinks, sliding_window=layer.sliding_window,
                             per_head_scales=kv.strategy == Strategy.ATTN_HEAD and method is not None
                             and not layer.cross,
                             use_mm_prefix=use_mm_prefix and not layer.mla and not layer.cross,
                             use_sparse=layer.sparse, index_topk=ckpt.config.index_topk if layer.sparse else None,
                             mla_dims=ckpt.config.mla_dims if layer.mla else None,
                             attn_type=ENCODER_DECODER if layer.cross else DECODER,
                             encoder_decoder_model=encoder_decoder)
        if layer.own_backend or layer.given_backend:
            choice = AttentionChoice(layer.own_backend or layer.given_backend, (), None)
        elif layer.head_size_v is not None:
            choice = diff_kv_backend(spec, layer.head_size_v, ctx, options.attention_backend)
        else:
            if spec not in choices:
                choices[spec] = select_attention_backend(spec, ctx, options.attention_backend)
            choice = choices[spec]
            if layer.sparse and choice.backend is None and arch is not None and arch.sparse_refusal:
                choice = choice._replace(error=arch.sparse_refusal)
            elif layer.sparse and sink_backend is not None:
                choice = sink_capable_backend(choice, spec, ctx, sink_backend)
            elif layer.sparse and arch is not None and arch.sparse_mla_backend and choice.backend is not None:
                choice = choice._replace(backend=arch.sparse_mla_backend)
        errors = ([window_error] if window_error else []) + ([choice.error] if choice.error else [])
        if arch is not None and arch.required_backend and not choice.error:
            errors += _required_backend_errors(arch.required_backend, choice.backend, kv_dtype, ctx.kind)
        if arch is not None and arch.backend_only and not choice.error and choice.backend != arch.backend_only[0] \
                and (layer.sliding_window is not None or not arch.backend_only[2]):
            errors.append(arch.backend_only[1].format(backend=choice.backend))
        warnings = list(kv.warnings) + load.warnings
        notes = list(choice.notes)
        quantized = is_quantized_kv_cache(kv_dtype, ctx)
        if method is not None:
            errors += list(kv.errors)
            if e5m2_refused(kv_dtype, method, kv):
                errors.append(E5M2_REFUSED)
            errors += load.errors
            more_errors, more_warnings, more_notes = _missing(layer, load.scales, method, kv_dtype, quantized,
                                                              elsewhere, kv)
            errors += more_errors
            warnings += more_warnings
            notes += more_notes
            if method in BASE_PROCESSING and options.platform.fp8_fnuz and quantized and load.scales:
                notes.append("float8_e4m3fnuz: BaseKVCacheMethod doubles the checkpoint's k/v scales")
        elif quantized:
            notes.append("no KV cache method for this layer: its k/v scales stay 1.0 (set_default_quant_scales)")
        scales = sorted(load.scales.items())
        strategy = None
        if any(p in load.scales for p in KV_PARAMS):
            strategy = (kv.strategy or Strategy.TENSOR) if method == CT_METHOD else Strategy.TENSOR
        return AttentionReport(
            name=layer.name, kind=_kind(layer), head_size=layer.head_size, num_heads=heads, num_kv_heads=kv_heads,
            kv_cache_dtype=model_dtype if kv_dtype == AUTO else kv_dtype, cache_dtype=stored, kv_method=method,
            scale_strategy=strategy, scales=tuple(scale.tensor for _, scale in scales), backend=choice.backend,
            rejected=choice.rejected, errors=tuple(dict.fromkeys(errors)), warnings=tuple(dict.fromkeys(warnings)),
            notes=tuple(dict.fromkeys(notes)), scale_params=tuple((param, scale.tensor) for param, scale in scales),
            cache_bytes_per_token=0 if layer.shared else
            (1 if layer.mla else 2) * kv_heads * layer.head_size * element_bytes(stored),
            sliding_window=layer.sliding_window,
        )

    return reports_at


def _required_backend_errors(required: tuple[str, str], backend: str | None, kv_dtype: str, kind: str) -> list[str]:
    """The model file's checks of an Attention it built (Arch.required_backend): the backend's module imported
    (FlashInfer, on CUDA only), its impl that backend's, its KV cache the model dtype's (a bare assert)."""
    backend_name, message = required
    if backend_name == "FLASHINFER" and kind != "cuda":
        return [NO_FLASHINFER]
    if backend != backend_name:
        return [f"AssertionError: {message}"]
    return [] if kv_dtype in (AUTO, "bfloat16") else [
        f"AssertionError: the model file asserts a KV cache dtype of auto / bfloat16, got {kv_dtype}"]


def _ds_mla_report(layer: AttentionLayer, requested: str, tp: int) -> AttentionReport:
    """A DeepseekV4Attention layer: its platform class's backend, its fp8_ds_mla KV cache (or vLLM's refusal)."""
    errors: tuple[str, ...] = ()
    if requested != AUTO and not requested.startswith("fp8"):
        errors = (f"ValueError: DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got {requested}. Please "
                  "set `--kv-cache-dtype fp8` or select a backend that supports bfloat16 KV cache.",)
    notes = (f"the model's own attention layer ({layer.own_backend}, chosen by its model file, not vLLM's attention "
             "selector), with its sliding-window, compressor and indexer caches; only the main fp8_ds_mla cache is "
             "counted",)
    return AttentionReport(
        name=layer.name, kind="MLA", head_size=layer.head_size, num_heads=max(1, layer.num_heads // tp),
        num_kv_heads=1, kv_cache_dtype=requested if errors else FP8_DS_MLA, cache_dtype="uint8", kv_method=None,
        scale_strategy=None, scales=(), backend=layer.own_backend, rejected=(), errors=errors, warnings=(),
        notes=notes, cache_bytes_per_token=FP8_DS_MLA_BYTES)


def sliding_share(reports: tuple[AttentionReport, ...]) -> SlidingShare | None:
    """The sliding-window layers' part of the reports' KV bytes per token, for the memory fit (None: no such layer)."""
    sliding = [(report.sliding_window, report) for report in reports if report.sliding_window is not None]
    if not sliding:
        return None
    return SlidingShare(len(sliding), len(reports), tuple(sorted({window for window, _ in sliding})),
                        sum(report.cache_bytes_per_token for _, report in sliding))


def _kind(layer: AttentionLayer) -> str:
    """What rows collapse on: "MLA", "cross-attention", "full", "sliding window 4096", with ", sinks" for gpt-oss's
    layers."""
    if layer.mla:
        return "MLA"
    if layer.cross:
        return "cross-attention"
    kind = "full" if layer.sliding_window is None else f"{SLIDING_KIND} {layer.sliding_window}"
    return f"{kind}, sinks" if layer.sinks else kind
