"""How vLLM builds each model family's linear layers, as data read from its model files.

Every entry below was read from `vllm/model_executor/models/<file>` (or `vllm/models/<package>`) of vLLM 0.33.0 and,
for the families added with 0.34, 0.34.0 (the wheels on PyPI), checked module by module against both by
tests/differential/whole_model.py, and names that file as its `source`; each layer in a report carries the `source`
of the entry that built it
(`layout: "vllm:deepseek_v2.py"`), or `"generic"` for an architecture not in this table. What an entry says:

- `packed`: the class's `packed_modules_mapping` (fused name -> checkpoint shards), which both decides the
  fused layers and what compressed-tensors / fp8 ignore lists are matched against.
- `styles`: dotted name tails -> the vLLM class that builds them, where the leaf name alone would mislead
  (Mistral-3's `multi_modal_projector.linear_2` is a RowParallelLinear). Unlisted layers get the generic
  leaf rules of `fp8check.core.model.modules` (q/k/v -> QKV, gate/up -> merged, o/down/out/proj/fc2 -> row).
- `unquantized`: tails of layers built with `quant_config=None`: MoE routers (`GateLinear`, a
  ReplicatedLinear). A plain `torch.nn.Linear` (no quant method at all) is the style `nn.Linear`.
- `spec_layers`: the config key counting multi-token-prediction layers appended after `num_hidden_layers`;
  their tensors are skipped by the main model's loader (`get_spec_layer_idx_from_weight_name` /
  `skip_spec_layers` in utils.py, MiniMax-M2's `hf_to_vllm_mapper`) and load only into the MTP draft model.
- `towers`: vision towers and projectors, with their own file, heads (from `vision_config`) and styles;
  `quantized=False` where the model passes `quant_config=None` to the tower (Llama-4).
- `mla`: DeepSeek MLA. With `q_lora_rank` set, `fused_qkv_a_proj` (DeepSeekV2FusedQkvAProjLinear, a
  MergedColumnParallelLinear with `disable_tp=True`) over `q_a_proj` + `kv_a_proj_with_mqa`; without it,
  `kv_a_proj_with_mqa` is a ReplicatedLinear. MLA is what vLLM uses unless VLLM_MLA_DISABLE is set
  (`ModelConfig.use_mla`, config/model.py).
- `sliding`: which layers the model file gives a sliding window (`per_layer_sliding_window` from
  `config.layer_types`, gpt-oss's even layers, or none, leaving CacheConfig's model-wide window), read with
  transformers' config-class defaults (`HF_WINDOWS`) by `attention_windows`; `uniform_window_assert`: qwen2.py's
  Qwen2Model refuses a mix of sliding and full layers.

Not modelled: fused shared experts (DeepSeek's shared_experts loaded into the FusedMoE where
`resolve_layer_fused_shared_expert` enables it, e.g. ROCm AITER; here they stay ordinary linears), vision
towers run data-parallel (`--mm-encoder-tp-mode data`). Mistral-format checkpoints (params.json +
consolidated.*) are read by fp8check.core.checkpoint.mistral into the config and names these entries lay out.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from fp8check.core.model.transformers_classes import CLASSES as TRANSFORMERS_CLASSES
from fp8check.core.checkpoint.local import EXPERT_ALIASES
from fp8check.core.formats.shared import ROUTED_EXPERTS
from fp8check.core.model.transformers_classes import TRANSFORMERS, TransformersClass
from fp8check.core.model.transformers_classes import MOE as TRANSFORMERS_MOE
from fp8check.core.model.transformers_classes import TransformersMoE
from fp8check.core.model.vllm_registry import SERVED_BY, serves

if TYPE_CHECKING:  # annotations only
    from fp8check.core.checkpoint.local import ModelConfig, SlidingKeys

GENERIC = "generic"
# packed_modules_mapping of llama.py, mistral.py, qwen2/3(.py, _moe.py), gemma*.py, mixtral.py, llama4.py, ...
LLAMA_PACKED: dict[str, tuple[str, ...]] = {"qkv_proj": ("q_proj", "k_proj", "v_proj"),
                                            "gate_up_proj": ("gate_proj", "up_proj")}
# Arch.quant_prefixes of a model file that builds its ParallelLMHead with no prefix: the head (under whatever name the
# model maps it to) is "" to get_quant_method, which no ignore / exclude entry names.
NO_HEAD_PREFIX = (("regex", r"^(?:.*\.)?lm_head\.weight$", ".weight"),)
# The class name vLLM builds each style with (routers are GateLinear, a ReplicatedLinear subclass).
ROW, COLUMN, REPLICATED, TORCH_LINEAR = "RowParallelLinear", "ColumnParallelLinear", "ReplicatedLinear", "nn.Linear"
FUSED_QKV_A = "DeepSeekV2FusedQkvAProjLinear"
# Qwen4-Exp's qkv_proj with the QSA indexer's index_qk_proj (models/qwen4_exp/nvidia/qsa.py): a
# MergedColumnParallelLinear over QKVParallelLinear's q / k / v sizes (KV heads replicated alike) and the indexer,
# replicated on every rank; laid out as a QKVParallelLinear with a fourth, replicated shard.
QSA_QKV_INDEXER = "Qwen4ExpQSAQKVIndexerLinear"
QKV_CLASSES = frozenset({"QKVParallelLinear", QSA_QKV_INDEXER})


class Tower(NamedTuple):
    """A vision tower or projector: the checkpoint prefixes it lives under, built by its own vLLM file."""

    source: str
    roots: tuple[str, ...]                    # checkpoint name prefixes (transformers < / >= 4.52 naming)
    styles: dict[str, str] = {}
    packed: dict[str, tuple[str, ...]] = LLAMA_PACKED
    unquantized: tuple[str, ...] = ()
    vision_heads: bool = False                # its QKV splits by vision_config's heads, not the text model's
    audio_heads: bool = False                 # its QKV splits by audio_config's encoder_attention_heads
    # True: every linear is built with disable_tp at a TP size that does not divide audio_config's
    # encoder_attention_heads (qwen3_omni_moe_thinker.py Qwen3OmniMoeAudioAttention / EncoderLayer)
    disable_tp_unless_heads_divide: bool = False
    quantized: bool = True                    # False: the model passes quant_config=None to the whole tower
    # gemma4_mm.py _get_tower_quant_config: the tower keeps the quant config for bitsandbytes / torchao /
    # compressed-tensors, and for any other method only when its sizes are multiples of 64 ("vision" / "audio").
    quant_needs_64: str | None = None
    # Quantization methods for which the model passes quant_config=None to the tower (kimi_k25.py
    # _maybe_ignore_quant_config: compressed-tensors); any other method quantizes it.
    unquantized_methods: tuple[str, ...] = ()
    # (checkpoint name part, vLLM's): the model's hf_to_vllm_mapper orig_to_new_substr for the tower's tensors
    # (step_vl.py: OpenCLIP's attn.in_proj_weight -> attn.qkv_proj.weight): its linears are named as vLLM's.
    renames: tuple[tuple[str, str], ...] = ()
    # Name parts under the tower its own loader drops (siglip.py SiglipVisionTransformer built with use_head False:
    # its mapper, skip_prefixes before 0.31, drops the attention-pooling head.*): listed as skipped.
    dropped: tuple[str, ...] = ()
    # Its vLLM prefix, where an Fp8Config (subclasses too) that lists this prefix itself in ignored_layers (the list
    # as the model's mapper left it) makes the model pass quant_config=None to the whole tower
    # (bailing_moe_v3_vl.py BailingMoeV3VisionTransformer / BailingMoeV3VLProjector).
    fp8_ignored_whole: str | None = None
    # Tails of attention linears built with disable_tp at a TP size that does not divide vision_config's heads
    # (intern_vit.py InternParallelAttention: qkv and proj, the tower's MLP split as ever).
    vision_heads_split: tuple[str, ...] = ()
    # Its layer list under each root (`vision_model.encoder.layers`), where the model builds the tower only up to the
    # deepest vision_feature_layer (llava.py init_vision_tower_for_llava / mistral3.py init_vision_tower_for_mistral3:
    # num_hidden_layers_override) and the tower's load_weights drops the layers beyond (clip.py, siglip.py,
    # pixtral.py): those tensors are listed as skipped.
    layers_path: str | None = None
    # The vision layer the model builds the tower up to whatever config.json says, with layers_path (phi4siglip.py: -2,
    # num_hidden_layers_override); None: config.json's vision_feature_layer.
    feature_layer: int | None = None
    # Fused leaves the quant config's lists match by their own name only, never by their shards: the class's
    # packed_modules_mapping keys them under a dotted name (qwen2_5_omni_thinker.py's "attn.qkv": ["attn.q", "attn.k",
    # "attn.v"]), which quant_utils.py is_layer_skipped, looking a layer's last name part up, never meets.
    unexpanded: tuple[str, ...] = ()
    # The default dtype the model builds the tower under, where not the model's (minicpmv.py init_resampler:
    # set_default_torch_dtype(torch.float16)): its FP8 methods' out dtype (Fp8LinearMethod takes
    # torch.get_default_dtype()), which picks the kernel.
    build_dtype: str | None = None
    # The class of a linear that neither `styles` nor a fusion names (None: the leaf-name rules), as Arch.unplanned:
    # the Transformers backend builds every nn.Linear of a tower that no plan or fuser names a ReplicatedLinear.
    unplanned: str | None = None
    # Tails of linears the model builds as torch nn.Linears at TP 1 and, above it, swaps for the class `styles` names,
    # with the quant config (deepseek_vl2.py patch_vit_for_tp: timm's Mlp fc1 / fc2 via replace_linear_class).
    torch_linear_at_tp1: tuple[str, ...] = ()


class MoEBackendRequired(NamedTuple):
    """A model's own runner for quantized experts, which raises while building unless --moe-backend is `backend`
    (Muse-Spark's ROCm MuseSparkQuarkW8A8Fp8FusedMoE, muse_moe_runner.py validate_fp8_deployment): `refusal` under
    any other value, 'auto' included (the value as {moe_backend}, its repr); under `backend`, `runner`."""

    kinds: tuple[str, ...]            # the platforms whose model file builds the runner
    backend: str
    refusal: str
    runner: tuple[str, str, str]      # (method, experts class, Fp8MoeBackend) it builds


class Router(NamedTuple):
    """How a model file builds its FusedMoE's routing: the inputs of fused_moe/config.py's
    get_routing_method_type (scoring_func, renormalize, num_expert_group, an e_score_correction_bias), each fixed
    or read from a config key with the model's default (transformers' config class where the file reads it bare)."""

    scoring: str | tuple[str, str] = "softmax"          # fixed, or (config key, default)
    renormalize: bool | tuple[str, bool] = True
    groups: int | tuple[str, int | None] | None = None    # fixed, or (config key, default) of num_expert_group
    # fixed, or (config key, value that creates the bias[, the config class's value when config.json has none])
    bias: bool | tuple[str, object] | tuple[str, object, object] = False
    # A custom_routing_function's RoutingMethodType; or (config key, default): the config picks the function, whose
    # type (custom_routing_router.py) is get_routing_method_type's with the key's value as scoring_func. Under 0.30+'s
    # CPURouter (cpu-router) neither counts: the type is get_routing_method_type's of `scoring`, FusedMoE's own.
    custom: str | tuple[str, str] | None = None


_SOFTMAX_RENORMALIZED = Router()
_NORM_TOPK = Router(renormalize=("norm_topk_prob", False))  # Qwen2/3-MoE: transformers' default is False
_LLAMA4_ROUTER = Router(renormalize=False, custom="Llama4")  # llama4.py: Llama4MoE.custom_routing_function


# How the model file passes per_layer_sliding_window to Attention (attention_windows).
LAYER_TYPES = "layer_types"    # config.sliding_window where config.layer_types[i] == "sliding_attention"
EVEN_LAYERS = "even layers"    # gpt_oss.py: config.sliding_window if layer_idx % 2 == 0 else None
MODEL_WINDOW = "model"         # not passed: CacheConfig.sliding_window for every layer
HYBRID_PATTERN = "hybrid_layer_pattern"  # mimo_v2.py: config.sliding_window_size where hybrid_layer_pattern[i] == 1
ZAYA_LAYER_TYPES = "hybrid_sliding"  # zaya.py: config.sliding_window where config.layer_types[i] == "hybrid_sliding"
CHUNKED_LAYER_TYPES = "chunked_attention"  # rnj1.py: config.sliding_window where layer_types[i] == "chunked_attention"
LEFT_WINDOWS = "window_sizes"  # domyn_edge.py: config.window_sizes[i][0] + 1 where above 0 (HF's (w, 0): w + 1 keys)


class Arch(NamedTuple):
    """How one vLLM model class builds the text model's linears (see the module docstring)."""

    source: str
    packed: dict[str, tuple[str, ...]] = LLAMA_PACKED
    styles: dict[str, str] = {}
    unquantized: tuple[str, ...] = ()
    spec_layers: str | None = None
    towers: tuple[Tower, ...] = ()
    mla: bool = False
    # False: the class's packed_modules_mapping has no fused_qkv_a_proj (longcat_flash.py: load_weights'
    # stacked_params_mapping alone fuses it), so the quant config's ignore list and targets are matched against the
    # fused name only: an ignore list naming q_a_proj / kv_a_proj_with_mqa leaves it quantized.
    mla_packed: bool = True
    # False: q_a_proj and kv_a_proj_with_mqa stay two ReplicatedLinears with the quant config where q_lora_rank is set
    # (sarvam.py SarvamMLAAttention hands MLAModules fused_qkv_a_proj=None): no fused_qkv_a_proj at all.
    mla_fused_qkv_a: bool = True
    # False: the quant config's packed_modules_mapping stays empty (the class is SupportsQuant without one and its text
    # model's class, which has one, is no SupportsQuant: interfaces.py SupportsQuant._maybe_apply_model_mapping), so
    # the lists are matched against every fused layer's own name (mimo_v2_omni.py MiMoV2OmniForCausalLM).
    quant_packed: bool = True
    # Routers the model file builds WITH the model's quant_config (ReplicatedLinear, GateLinear from 0.31): their
    # quantization is the format's (its ignore list), like any other ReplicatedLinear.
    quantized_routers: tuple[str, ...] = ()
    # False: the attention divides the KV heads by TP without replicating them (gpt_oss.py's
    # `num_key_value_heads // tp_size`), so TP above the KV head count builds 0 KV heads per rank.
    kv_replication: bool = True
    # The error the attention raises where TP does not divide num_key_value_heads ("{heads}", "{kv}", "{tp}" filled;
    # ricursive.py RicursiveAttention: its q / k shards are a MergedColumnParallelLinear, no KV head replicated).
    kv_heads_tp_error: str | None = None
    # The leaf under self_attn, no QKVParallelLinear, whose layer is an Attention of config.json's
    # num_attention_heads / num_key_value_heads / head_dim (ricursive.py's qkg_proj: q, k and the output gate, v a
    # ColumnParallelLinear of its own; zaya.py's o_proj, its q / k / v ReplicatedLinears under ZayaCCA).
    attention_linear: str | None = None
    # True: the Attention takes the model's total heads on every rank, its projections replicated (zaya.py
    # ZayaAttention: Attention(num_attention_heads, ..., num_key_value_heads) whatever the TP size).
    attention_replicated: bool = False
    router: Router = _SOFTMAX_RENORMALIZED
    head_quant_config: bool = True  # False: ParallelLMHead(...) without quant_config (gpt_oss.py): never quantized
    # The FusedMoE activation the model file passes, or (config key, default) where it passes the config's (Kimi-K3's
    # hidden_act). Which experts classes take one other than SiLU is not modelled: such experts are named, not judged.
    moe_activation: str | tuple[str, str] = "silu"
    # The activation of the FusedMoE on layers whose config sets a limit (ModelConfig.limited_moe_layers: Step-3.5's
    # swiglu_limits, "swiglustep"); the others take moe_activation.
    limited_moe_activation: str | None = None
    # True: the model file hands FusedMoE config.swiglu_limit (ModelConfig.swiglu_limit), a clamp on the SwiGLU
    # that not every experts class applies (TrtLlmFp8ExpertsBase.is_supported_config refuses it on some keys);
    # swiglu_limit_default is its config class's value when config.json has none (transformers omits defaults).
    moe_swiglu_limit: bool = False
    swiglu_limit_default: float | None = None
    # True: the model file hands FusedMoE the layer's config.swiglu_limits entry where above 0 (exaone_moe.py
    # ExaoneMoeDecoderLayer), a clamp on those layers only (ModelConfig.limited_moe_layers).
    layer_swiglu_limits: bool = False
    # The MoE block whose experts a checkpoint may store stacked ([E, out, in] gate_proj / up_proj / down_proj under
    # it, Step-3.5's original format): read per expert, as `<block>.experts.<e>.<leaf>` (vLLM's FusedMoE name).
    stacked_experts: str | None = None
    # (block, gate_up leaf, down leaf): experts a checkpoint may store stacked and fused under the MoE block, [E, 2I, H]
    # and [E, H, I] weights with their [E, ...] scales (Granite's block_sparse_moe.input_linear / output_linear, which
    # granitemoehybrid.py's load_weights slices per expert and chunks into w1 / w3): read as per-expert gate / up /
    # down tensors.
    fused_stacked_experts: tuple[str, str, str] | None = None
    # True: each decoder layer's attention runs config.loop_num times over its one qkv_proj, an Attention per loop
    # `self_attn.attn.{k}` (iquest_loopcoder.py LoopCoderAttention): loop 0 with the model's window, the others with
    # config.loop_window_size, each built under the prefix of layer k x num_hidden_layers + i (loop_attention_layers).
    loop_attentions: bool = False
    # True: the model's hf_to_vllm_mapper sits on its inner model (param2moe.py Param2MoEModel, whose load_weights
    # applies it), which configure_quant_config never sees: the loader renames the tensors (hf_to_vllm), the quant
    # config's lists stay as stored.
    mapper_on_inner_model: bool = False
    # (WHEEL_CHANGES key, styles): styles the model file used until the release that brought the change.
    styles_before: tuple[tuple[str, dict[str, str]], ...] = ()
    # (WHEEL_CHANGES key, packed): the packed entries the model file fused until the release that brought the change.
    packed_before: tuple[tuple[str, dict[str, tuple[str, ...]]], ...] = ()
    # (WHEEL_CHANGES key, layout): the release that moved the architecture to another implementation (the
    # Transformers backend), and the layout that implementation builds from then on.
    moved: tuple[str, Arch] | None = None
    # The per_layer_sliding_window the model file hands Attention (attention_windows): LAYER_TYPES, EVEN_LAYERS,
    # HYBRID_PATTERN, ZAYA_LAYER_TYPES, CHUNKED_LAYER_TYPES, LEFT_WINDOWS or MODEL_WINDOW (none: every layer takes
    # CacheConfig.sliding_window).
    sliding: str = LAYER_TYPES
    # qwen2.py Qwen2Model (also Qwen3's, Qwen2.5-VL's and Qwen3-VL's text model) asserts that a mix of layer
    # types has max_window_layers == num_hidden_layers.
    uniform_window_assert: bool = False
    # A checkpoint prefix the model's hf_to_vllm_mapper maps to None ("mtp.": Qwen3-Next / Qwen3.5's MTP block):
    # the main model never loads those tensors; they are listed as skipped.
    spec_prefix: str | None = None
    # Substrings of checkpoint names the mapper maps to None (ERNIE-4.5-MoE's "mtp", a Gemma-4 text model's towers).
    spec_substrings: tuple[str, ...] = ()
    # True: q_proj also holds each head's output gate (attn_output_gate: QKVParallelLinear over 2 x num_heads query
    # heads, Qwen3-Next / Qwen3.5), so the head size comes from config.json's head_dim, not q's width.
    q_gate: bool = False
    # Tails of causal convolutions (a 3-D [channels, 1, kernel] weight) the model builds as a ColumnParallelLinear
    # with quant_config=None (the Mamba / gated-delta-net mixers' conv1d): listed as unquantized linears.
    conv_linears: tuple[str, ...] = ()
    # Tails of 2-D checkpoint tensors stored without a ".weight" suffix that the model file builds as linears (its
    # loader appends ".weight": hy_v4's hyper-connection hc_fn / hc_head_fn, ReplicatedLinear without quant_config).
    bare_linears: tuple[str, ...] = ()
    # Tails of layers other than routers that the model file builds with quant_config=None (GLM-5-Next's MLA, indexer
    # and KDA projections, DeepSeek-V4's indexer weights_proj and compressors): vLLM holds them in BF16; an FP8 weight
    # there fails the load unless `dequantized` names it.
    unquantized_layers: tuple[str, ...] = ()
    # False: the attention layers are built with quant_config=None (GLM-5-Next's Glm5NextMLAAttention), so the
    # format gives them no KV cache method.
    attention_quant_config: bool = True
    # Tails of linears built with disable_tp=True (replicated on every rank, whatever their class).
    disable_tp: tuple[str, ...] = ()
    # Tails of checkpoint shards of unquantized linears that the loader dequantizes to BF16 when stored in FP8
    # (DeepSeek-V3.2's indexer wk: _try_load_fp8_indexer_wk): an FP8 weight there is no error.
    dequantized: tuple[str, ...] = ()
    # DeepSeek sparse attention (DSA): every MLA layer has an indexer and asks the selector for a sparse backend.
    sparse_mla: bool = False
    # With sparse_mla, the config.layer_types entries of the sparse layers (hy_v4's sparse_layer_ids): a layer of
    # another type, or any layer of a config without index_topk, is a dense MLA layer. Empty: every layer is sparse.
    sparse_layer_types: tuple[str, ...] = ()
    # The MLAAttention's path under `<...>.self_attn` where the platform does not make self_attn itself the
    # attention (mla_self_attention): MultiHeadLatentAttentionWrapper's mla_attn.mla_attn, or hy_v4's mla_attn.
    mla_attention: str = "mla_attn.mla_attn"
    # The sink-capable backend the model file binds on its sparse MLA layers when config.learnable_sink (default
    # true) is set and the selector's backend cannot apply sinks, if it validates (hy_v4 attention.py
    # _resolve_sink_backend: HYV4FlashMLASparseBackend, which keeps the name FLASHMLA_SPARSE).
    sink_mla_backend: str | None = None
    # The backend a model file hands its sparse MLA layers' MLAAttention after the selector was asked for it (dots3_note
    # nvidia/model.py Dots3NoteFullAttention rebuilds DeepseekV2MLAAttention's as a Dots3NotePaddedMLAAttention of
    # Dots3NotePaddedSparseBackend): the selector's refusal still stands, its pick does not.
    sparse_mla_backend: str | None = None
    # (path under self_attn, backend) of the MLAAttention of the MLA layers sparse_layer_types leaves dense, built with
    # the backend given (the selector is never asked) and config.json's sliding_window_size (dots3_note's
    # Dots3NoteSlidingAttention: `mla_attn`, Dots3NoteTritonMLABackend, named TRITON_MLA).
    dense_mla_attention: tuple[str, str] | None = None
    # The RuntimeError the model file raises when no sparse MLA backend is valid for a sparse layer, before it asks
    # for one (hy_v4 attention.py HYV4MLAAttention: it refuses to fall back to dense attention).
    sparse_refusal: str | None = None
    # Platform kinds on which the MLA attention module is `<...>.self_attn` itself (the model class registry.py
    # resolves there is another file: deepseek_v32's nvidia / amd model, whose attention *is* the MLAAttention).
    mla_self_attention: frozenset[str] = frozenset()
    # False: that self_attn is the model's own AttentionLayerBase, neither Attention nor MLAAttention (Kimi's
    # nvidia/mla.py MultiHeadLatentAttention), which no format's get_quant_method gives a KV cache method (they test
    # isinstance(layer, Attention) or (Attention, MLAAttention)); deepseek_v32's DeepseekV32Attention is an
    # MLAAttention.
    mla_self_attention_is_mla_attention: bool = True
    # Platform kind -> the profile change from which (None: every release serving the architecture) the model file
    # pads a FusedMoE whose intermediate width a rank holds is below config.min_moe_intermediate_per_partition (256)
    # and then reads the padded w13 off the layer, which FusedMoE's MoERunner does not have (its parameters live on
    # routed_experts): every build at such a TP fails (Kimi's models/kimi_k3/amd/linear.py KimiMoE, ROCm / XPU).
    padded_moe_refusal: dict[str, str | None] = {}
    # False: the experts have up and down projections only (FusedMoE is_act_and_mul=False, a one-shard w13).
    gated_experts: bool = True
    # Tails of one checkpoint tensor vLLM builds as a MergedColumnParallelLinear of that many equal parts (short_conv.py
    # ShortConv's in_proj over [dim] * 3: B, C and x, each split by TP).
    equal_parts: dict[str, int] = {}
    # The tail of a Mamba2 mixer's in_proj: one checkpoint tensor vLLM builds as a MergedColumnParallelLinear over
    # [I, I, G*N, G*N, H] (mamba_mixer2.py; I = heads x head_dim, G = n_groups, N = ssm_state_size, H = heads).
    mamba_in_proj: str | None = None
    # True: a layer with q_proj and k_proj but no v_proj reads V from K (Gemma-4's attention_k_eq_v full-attention
    # layers): QKVParallelLinear loads the shards q, k, k.
    k_eq_v: bool = False
    # True: each attention layer's head size and KV heads are its own (Gemma-4's full-attention layers take
    # global_head_dim and num_global_key_value_heads): read from the layer's q / k widths.
    layer_geometry: bool = False
    # True: q_proj's rows are not num_attention_heads x head_dim (Step-3's load_weights narrows q_proj, share_q_dim
    # rows, and one KV head of k_proj / v_proj into a ReplicatedLinear qkv_proj; wq then widens q to the heads): the
    # attention projections' shapes are the family's own, not checked against the heads.
    own_query_width: bool = False
    # Tails of linears whose widths are not the decoder's (zaya.py ZayaRouter: down_proj gives router_hidden_size,
    # router_mlp.out_proj num_experts + 1): not checked against hidden_size / the heads.
    own_widths: tuple[str, ...] = ()
    # True: the last num_kv_shared_layers decoder layers reuse an earlier layer's KV cache (Gemma-4's E-models): their
    # q_proj is a ColumnParallelLinear of its own, their k_proj / v_proj / k_norm are dropped by the model's mapper,
    # and their Attention holds no cache (kv_sharing_target_layer_name).
    kv_shared_layers: bool = False
    # (checkpoint name part, vLLM's module name part[, a sibling leaf]): modules the model class names otherwise than
    # the checkpoint (Granite's router, Step-3.7's shared expert; with a sibling, only in a module whose parent
    # holds it: Ling-2.5's attention.dense, o_proj on its MLA layers; "re:" a regular expression: IQuest-LoopCoder's
    # gate_projections.i); fp8check reports checkpoint names, the differential suite compares under vLLM's.
    vllm_names: tuple[tuple[str, ...], ...] = ()
    # The class of a linear that neither `styles` nor a fusion names (None: the leaf-name rules): the Transformers
    # backend builds every nn.Linear its tp_plan does not name as a ReplicatedLinear.
    unplanned: str | None = None
    # Checkpoint shards the loader's stacked_params_mapping folds into a layer's qkv_proj after q / k / v where the
    # layer has them, outside packed_modules_mapping: MiniMax-M3's sparse-attention layers build
    # MinimaxM3QKVParallelLinearWithIndexer (linear.py) over [q, k, v, index_q, index_k], index_q sharded like the
    # KV heads and index_k one head replicated on every rank.
    indexer_shards: tuple[str, ...] = ()
    # The backend name of an attention layer whose qkv_proj holds indexer_shards: the layer is `<...>.self_attn`
    # itself (MiniMax-M3's MiniMaxM3SparseAttention, an AttentionLayerBase with its own backend and no KV cache
    # method).
    indexer_backend: str | None = None
    # The WHEEL_CHANGES key from which indexer_shards fold into qkv_proj only when stored like q / k / v (Qwen4-Exp's
    # nvidia/qsa.py from 0.34: fused when the indexer's quant method is q / k / v's, else its own ReplicatedLinear).
    indexer_alike: str | None = None
    # The class of a qkv_proj holding indexer_shards when it is no QKVParallelLinear (QSA_QKV_INDEXER).
    indexer_class: str | None = None
    # Platform kinds whose model class keeps the indexer shards linears of their own (Qwen4-Exp's amd/qsa.py on ROCm:
    # index_qk_proj a ReplicatedLinear); its attention is still the indexer_backend layer.
    indexer_unfused_on: frozenset[str] = frozenset()
    # The backend a model file hands its Attention itself (attn_backend=...: the selector is never asked), by the leaf
    # of the layer's fused QKV or of a linear only that layer's attention holds (the first that matches): Step-5's
    # sparse layers STEP5_DSA, the others FLASH_ATTN (Step5SplitKVFlashAttentionBackend keeps its parent's name) on
    # CUDA; on ROCm 0.34 its sparse layers ROCM_AITER_UNIFIED_ATTN, the others the selector's. The KV cache method
    # stays the format's (none where attention_quant_config is False).
    attention_backends: dict[str, str] = {}
    # (WHEEL_CHANGES key, layout): the release from which vLLM resolves the architecture on ROCm to another
    # implementation (vllm.models.<package>.__init__ picking amd/model.py), and the layout that one builds there.
    rocm_layout: tuple[str, Arch] | None = None
    # vLLM's refusal of a sparse-attention layer whose rank holds other than 4, 8 or 16 query heads per KV group
    # ("{q}", "{heads}", "{tp}" filled; Step-5's _validate_step5_dsa_parallel_geometry, amd/checks.py on ROCm).
    sparse_group_error: str | None = None
    # Tails of layers built with the quant config whose constructor raises unless it resolves to
    # UnquantizedLinearMethod (Step-5's Step5FusedQKVIndexerLinear: "cannot be quantized"): a quantized one is vLLM's
    # refusal of the model (inspect.PLAIN_GEMM_ONLY).
    unquantized_only: tuple[str, ...] = ()
    # The CUDA capabilities a model's sparse-attention layers build on (Step5DSAAttentionBackend
    # .supports_compute_capability); on any other device the model refuses to build (sparse_capability_error).
    sparse_capabilities: tuple[int, ...] = ()
    # True: the language model is init_vllm_registered_model(hf_config=config.text_config) (mistral3.py): vLLM builds
    # the text model of the class text_config resolves to (text_model_architecture); where the table has it, its
    # layout is the text model's, under this entry's towers.
    registered_text_model: bool = False
    # Platform kind ("cuda:120": a CUDA capability family) -> the backend of a model whose decoder layers' `attn` is
    # the model file's own AttentionLayerBase (DeepSeek-V4), whose platform class names its backend itself
    # (backend_cls): vLLM's attention selector is never asked. Empty: vLLM's Attention / MLAAttention.
    own_attention: dict[str, str] = {}
    # Packed entry -> a sibling tail: the entry is not fused in a layer that holds that sibling (Kimi-K3.1's DSA layers
    # build fused_qkv_a_proj and a g_proj of their own, not the dense MLA's fused_qkv_a_g_proj).
    packed_unless: dict[str, str] = {}
    # Fused leaf -> its shards every TP rank holds whole, the rest split (the layer's output_sizes count them x tp,
    # and each rank loads tp_rank 0's slice): Kimi-K3's KimiK3MergedQKVGateLinear latents, its KDA f_a_proj.
    replicated_shards: dict[str, tuple[str, ...]] = {}
    # A tail under an MLA layer's self_attn that marks it a DSA layer (Kimi-K3.1's indexer.wq_b: dsa.py
    # KimiK3DSAAttention): that layer's attention is sparse and its MLAAttention is self_attn.mla_attn.mla_attn.
    sparse_marker: str | None = None
    # True: an "fp8" quantization_config becomes the model's own FP8 config whose FusedMoE method is MXFP4 unless
    # config.json's expert_dtype is "fp8" (DeepSeek-V4: quant_config.py DeepseekV4FP8Config, the default "fp4").
    fp4_experts_by_default: bool = False
    # Tails of packed layers vLLM builds without their last shard where the checkpoint has none (DeepSeek-V4.1's
    # ratio-1 compressors: fused_wkv_wgate over wkv alone, compressor.py's wkv_wgate_sizes).
    last_shard_optional: tuple[str, ...] = ()
    # Tails of tables named like an embedding that are not the token embedding (DeepSeek-V4.1's Engram n-gram table,
    # ParallelEngramEmbedding: hash buckets x engram_head_dim), whose shape is not vocab_size x hidden_size.
    other_tables: tuple[str, ...] = ()
    # The renames of the class's hf_to_vllm_mapper (WeightsMapper.get_rename_mapper, models/utils.py): (kind, old,
    # new), kind regex / substr / prefix / suffix, in the order map_name applies them. vLLM's loader renames the
    # checkpoint's tensors with them, so its module names (what get_quant_method is asked with) are the mapped ones;
    # vllm_module_name. The quant config's layer lists are mapped with them only where its class implements
    # apply_vllm_mapper (model_loader/utils.py configure_quant_config, interfaces.py SupportsQuant): Format.maps_lists.
    hf_to_vllm: tuple[tuple[str, str, str], ...] = ()
    # Renames (as hf_to_vllm's) from vLLM's module name to the prefix the model file hands the layer, where the two
    # differ: what get_quant_method matches the config's lists against. exaone.py builds `self.transformer` with
    # prefix "model" (model.h.N...); exaone_moe.py and qwen3_omni_moe_thinker.py build their ParallelLMHead with no prefix
    # ("": no list names it; NO_HEAD_PREFIX).
    quant_prefixes: tuple[tuple[str, str, str], ...] = ()
    # (vLLM module name part, prefix part): a branch of decoder layer i that the model file builds under the prefix
    # `<root>.{num_hidden_layers + i}.<prefix part>`, so that no two layers' state shares an index (falcon_h1.py
    # FalconH1ParallelHybrid: the SSM branch `mamba.mamba` of model.layers.i under `model.{L + i}.mixer`): what
    # get_quant_method matches the config's lists against there (offset_prefixes).
    offset_prefix: tuple[str, str] | None = None
    # (vLLM module name part, prefix part): parts of decoder layer i that the model file builds under the prefix
    # `{H + i}.<prefix part>`, no root, H the number of config.layer_types' "hybrid" layers (zamba2.py Zamba2Model:
    # prefix = str(len(layer2block_map) + layer_idx) for its mixer `mixer` and its `linear`): offset_prefixes.
    hybrid_offset_prefixes: tuple[tuple[str, str], ...] = ()
    # (adapter list, Attention list): transformer blocks one module serves at several hybrid layers (zamba2.py
    # Zamba2AttentionDecoderLayer, `shared_transformer`, saved once at its first use): its MLP holds one adapter
    # `<adapter list>.{k}` per use k (the layer's index among the hybrid layers), its attention one Attention
    # `self_attn.<Attention list>.{k}` per use over the block's one qkv_proj (routing/attention.py shared_block_layers).
    shared_block_uses: tuple[str, str] | None = None
    # True: Mistral-Large-4's MLA (models/mistral/nvidia/attention.py MistralMLAAttention): the MLAAttention is
    # `self_attn.attn`, its latent cache kv_lora_rank + qk_rope_head_dim wide on NoPE layers too (whose
    # kv_a_proj_with_mqa lacks the RoPE part), and a layer whose config.kv_source_layers entry is another layer
    # builds no kv_a_proj_with_mqa and reads that layer's cache (kv_sharing_target_layer_name).
    mla_kv_sharing: bool = False
    # The gate's tail beside a fused QKV that makes a layer Ling-2.5's linear-attention mixer
    # (layers/mamba/linear/bailing_linear_attn.py BailingMoELinearAttention: its own state, no Attention, so no KV
    # cache; it asserts that TP is at most config.group_norm_size and divides it).
    linear_attention_gate: str | None = None
    # True: a layer whose V head size (its v_proj rows over its KV heads) differs from K's gets the backend the model
    # file hands its Attention, not the selector's (mimo_v2.py MiMoV2Attention: kernels.attention.diff_kv_backend).
    diff_kv: bool = False
    # True: a qkv_proj stored fused, under a config whose attention_projection_layout is "fused_qkv" and whose quant
    # config has a weight_block_size, is pre-sharded in num_key_value_heads chunks of [Q K V] (mimo_v2.py
    # MiMoV2FlashDecoderLayer fused_qkv_chunks): below that TP the layer may be a MergedColumnParallelLinear
    # (modules.at_tp).
    fused_qkv_chunks: bool = False
    # True: the sliding layers have per-head attention sinks when config.json's add_swa_attention_sink_bias is true,
    # the full ones none, whatever the checkpoint holds (mimo_v2.py MiMoV2Attention make_attention_sink).
    swa_sinks: bool = False
    # True: every attention layer has per-head attention sinks whatever the checkpoint holds (Flint's FlintAttention
    # hands Attention make_attention_sink's parameter on each layer): the selector is asked with has_sink.
    sinks_always: bool = False
    # (checkpoint tensor suffix, vLLM's): router weights the model's load_weights renames and transposes (stored
    # [in, out]: ERNIE-4.5-VL's mlp.gate.weight -> text_experts_gate, mlp.gate.weight_1 -> vision_experts_gate).
    transposed_routers: tuple[tuple[str, str], ...] = ()
    # (first, second): the FusedMoEs a MoE layer's stored experts load into, the first half of the expert ids into
    # `first` and the rest, renumbered from 0, into `second` (ERNIE-4.5-VL's text and vision experts).
    split_experts: tuple[str, str] | None = None
    # Tails of 2-D checkpoint weights that are norms or other bare parameters, not linears (commandr.py's per-head
    # q_norm / k_norm, a LayerNorm of shape [heads, head_dim]; Inkling's InklingGate weight, which its forward
    # multiplies itself; MuseGlimmer's vision position table; Qwen2.5-Omni's audio_bos_eos_token and Qwen2-Audio's
    # embed_positions, nn.Embeddings of transformers' audio encoders): listed with the other non-linear weights.
    matrix_norms: tuple[str, ...] = ()
    # (backend, vLLM's assertion text): the model file asserts that each Attention's impl is that backend's, after
    # importing it, and that its KV cache is the model dtype's (Flint's FlintAttention: FlashInferImpl, kv_cache_dtype
    # auto / bfloat16). The backend's module imports FlashInfer, which only vLLM's CUDA wheels require.
    required_backend: tuple[str, str] | None = None
    # The fused leaf of a MergedColumnParallelLinear over [q, k, v, output gate] that feeds the layer's Attention
    # (Beam's qkv_gate_proj, nvidia/attention.py BeamAttention): its first three parts give the attention's heads.
    merged_qkv_gate: str | None = None
    # Tails of 2-D checkpoint weights a module of the model holds as a plain nn.Parameter, not a linear (the
    # Transformers backend's router that its MoE fuser cannot trace, left to route outside the FusedMoE: Kolibri-1's
    # Kolibri1TopKRouter): listed with the other non-linear weights.
    parameter_weights: tuple[str, ...] = ()
    # Added to the window of each layer the model file hands a per_layer_sliding_window (commandr.py CohereAttention:
    # config.sliding_window + 1).
    window_offset: int = 0
    # True: under a block-FP8 Fp8Config (quant_method fp8 with weight_block_size) the model file sets the config's
    # ignored_layers_match_mode to "suffix" (bailing_moe_v3.py _configure_ling_fp8_quant_config): an ignore entry
    # skips every module whose name ends with it at a dot boundary ("b_proj" skips ...self_attn.b_proj, not q_b_proj).
    block_fp8_suffix_ignores: bool = False
    # Packed entry -> its shard that, skipped by a block-FP8 Fp8Config's ignore list, keeps the entry apart: the layer
    # fuses the packed entry's other shards (the next packed entry that holds them) and builds that shard on its own
    # (bailing_moe_v3.py's KDA separate_b_proj: qkv_proj over q / k / v and a ColumnParallelLinear b_proj).
    block_fp8_unfused: dict[str, str] = {}
    # Tails of head-wise gates (one row per attention head) that a block-FP8 Fp8Config leaves quantized and whose rows
    # fit one block row: built with disable_tp above TP 1, each rank slicing its heads (bailing_moe_v3.py
    # BailingMoeV3MLAAttention replicate_g_proj, whose scales cannot split over ranks).
    block_fp8_replicated: tuple[str, ...] = ()
    # The model's own FusedMoE runner, which takes one --moe-backend only on some platforms (MoEBackendRequired).
    moe_backend_required: MoEBackendRequired | None = None
    # True: the model file takes the megakernel --moe-backend values itself (MegaMoE, FlashInfer MoE-EP:
    # config/kernel.py NATIVE_MEGA_MOE_BACKENDS / MEGA_MOE_BACKENDS in models/deepseek_v4 and deepseek_v41's MoE, with
    # refusals of their own; glm5next's DeepGEMM FP8 MegaMoE from 0.34), which fp8check does not model (their FusedMoE
    # are not judged); elsewhere map_fp8_backend refuses them.
    native_mega_moe: bool = False
    # (tails, method class): unquantized linears whose quant method the model file replaces with its own
    # UnquantizedLinearMethod subclass after building them (Muse-Spark's pooler / unpooler: MuseSparkTorchLinearMethod).
    own_linear_method: tuple[tuple[str, ...], str] | None = None
    # (method class, experts class, backend) of the model's own FusedMoE method for unquantized experts, in place of
    # UnquantizedFusedMoEMethod's oracle (Muse-Spark's MuseSparkUnquantizedFusedMoE, pinned to Triton experts).
    own_unquantized_moe: tuple[str, str, str] | None = None
    # Dotted name parts of column-parallel linears (or of a fused layer's shards) that hold config.num_key_value_heads
    # heads and are split as KV heads: above that TP each rank holds one head, replicated (k2_horizon.py
    # K2HorizonMoVAAttention: qk_proj's k part and each v_experts.<i> are kv_size * tp wide, kv_size one head a rank).
    kv_head_parts: tuple[str, ...] = ()
    # Dotted name parts of linears whose weight the model's forward reads itself into a kernel that takes no scale
    # (k2_horizon.py compute_mova_v_sparse stacks v_experts.<i>.weight into fused_mova_impl, use_fp8_w8a8=False): a
    # quantized one is built, but its FP8 weight computes unscaled.
    raw_weight_layers: tuple[str, ...] = ()
    # Name parts of checkpoint tensors the model file builds no parameter for while its load_weights looks every name
    # it does not map up in params_dict unguarded (KeyError): listed as skipped, and the load fails (Kimi-K3.1's DSA
    # indexer under Kimi-K3's ROCm text model, amd/linear.py, which builds every MLA layer dense).
    unloadable: tuple[str, ...] = ()
    # Tails of linears whose 2-D weight the checkpoint stores [in, out] (HF's Conv1D) and whose model file's loader
    # transposes the `.weight` alone (gpt2.py GPT2Model._transpose_conv1d: c_attn, c_proj, c_fc): laid out as vLLM's
    # [out, in]; a scale with more than one element keeps the stored orientation and does not fit vLLM's parameter.
    transposed: tuple[str, ...] = ()
    # (WHEEL_CHANGES key, {field: value}): fields the model file built otherwise until the release that brought the
    # change (the newest first; each older one applied over it).
    fields_before: tuple[tuple[str, dict], ...] = ()
    # vLLM module names the model file appends to an Fp8Config's ignored_layers (subclasses too) while building, "{i}"
    # once per vision_config layer (qianfan_ocr.py _patch_quant_config: the InternViT linears, lm_head and mlp1).
    fp8_ignored_layers: tuple[str, ...] = ()
    # vision_config.model_type -> the tower the model builds under its vision root, by the vision config's class
    # (llava.py init_vision_tower_for_llava: CLIPVisionModel, SiglipVisionModel or PixtralHFVisionModel), ahead of
    # `towers`; another model type builds none of them (vLLM raises "Unsupported vision config").
    vision_towers: dict[str, Tower] = {}
    # (MoE block, its stored gate / up / down leaves, its router's tail under the block): experts a checkpoint stores
    # flattened under `<block>.experts.mlp.` as bare 2-D parameters [E x I, H] (no ".weight"), each expert's down
    # projection transposed, a scale beside each as `<leaf>_<suffix>` (dbrx.py DbrxModel.load_weights appends "_weight"
    # and loads mlp.w1 / v1 into w13, mlp.w2 into w2; DbrxExperts.weight_loader reshapes each to [E, I, H], w2
    # transposed): read per expert as `<block>.experts.<e>.{gate,up,down}_proj`, E the router weight's rows. vLLM
    # refuses expert parallelism for such a model: its expert count is nested (ffn_config), which
    # ModelConfig.get_num_experts does not read, so is_moe is false.
    flat_experts: tuple[str, tuple[str, str, str], str] | None = None
    # True: DeepSeek-style low-rank projections (q_a_proj / q_b_proj, kv_a_proj_with_mqa / kv_b_proj, each its own
    # linear) feed a plain Attention `self_attn.attn` of num_attention_heads heads, as many KV heads, each
    # qk_nope_head_dim + qk_rope_head_dim wide (minicpm3.py MiniCPM3Attention pads V to it): no MLAAttention.
    mla_projections_dense: bool = False
    # The class of the FusedMoE's experts where the model file builds its own RoutedExperts subclass
    # (routed_experts_cls: dbrx.py's DbrxExperts), which a format matching the layer by class name may not meet.
    experts_class: str = ROUTED_EXPERTS
    # Tails of checkpoint shards of a QKVParallelLinear that hold K and V, interleaved head by head, which the model's
    # loader splits into the layer's k and v shards (telechat2.py TeleChat2Model._split_key_value: key_value).
    split_kv: tuple[str, ...] = ()
    # (backend, vLLM's refusal of another, "{backend}" the selector's pick; True: the layers with a window only): the
    # Attention's own check of the backend the selector picked, which the selector is not told about (attention.py
    # 0.33 / 0.34: use_alibi_sqrt needs supports_alibi_sqrt, TRITON_ATTN's alone; a chunk_lookback above -1 asserts
    # TRITON_ATTN).
    backend_only: tuple[str, str, bool] | None = None
    # Packed entry -> the leaf of the attention module it is fused under, and nowhere else (whisper.py's mapper stacks
    # q / k / v into self_attn.qkv_proj and k / v alone into encoder_attn.kv_proj: orig_to_new_stacked).
    packed_parents: dict[str, str] = {}
    # "<module>.<fused leaf>" of an encoder-decoder model's cross-attention K / V (whisper.py WhisperCrossAttention's
    # encoder_attn.kv_proj): each decoder layer's CrossAttention at `<module>.attn`, with the model's KV cache dtype
    # and the format's KV cache method, asks the selector for encoder_decoder attention and nothing else
    # (layers/attention/cross_attention.py: no sinks, window or per-head scales).
    cross_attention: str | None = None

    def for_release(self, profile) -> Arch:
        """This layout as `profile`'s release builds it (None: the newest)."""
        if self.moved is not None and (profile is None or profile.has(self.moved[0])):
            return self.moved[1].for_release(profile)
        styles, packed = dict(self.styles), self.packed
        for change, older in self.styles_before:
            if profile is not None and not profile.has(change):
                styles.update(older)
        for change, older_packed in self.packed_before:
            if profile is not None and not profile.has(change):
                packed = older_packed
        alike = self.indexer_alike if profile is None or self.indexer_alike is None or profile.has(
            self.indexer_alike) else None
        older_fields: dict = {}
        for change, fields in self.fields_before:
            if profile is not None and not profile.has(change):
                older_fields.update(fields)
        return self._replace(styles=styles, packed=packed, indexer_alike=alike, **older_fields)


_QWEN2_MODEL: dict[str, Any] = dict(sliding=MODEL_WINDOW, uniform_window_assert=True)

# hf_to_vllm_mapper renames (Arch.hf_to_vllm) of the vision-language classes, read from each file (0.33 and 0.34 the
# same): transformers >= 4.52 saves the text model as model.language_model.*, vLLM builds it as
# language_model.model.* with its lm_head under language_model.
_VL_TEXT = (("prefix", "model.language_model.", "language_model.model."),
            ("prefix", "lm_head.", "language_model.lm_head."))
# qwen2_5_vl.py Qwen2_5_VLForConditionalGeneration (and a pre-4.52 checkpoint's model.*).
_QWEN25_VL_NAMES = (_VL_TEXT[0], ("prefix", "model.visual.", "visual."), _VL_TEXT[1],
                    ("prefix", "model.", "language_model.model."))
# qwen3_vl.py, qwen3_vl_moe.py, qwen3_5.py's ForConditionalGeneration classes.
_QWEN3_VL_NAMES = (("prefix", "model.visual.", "visual."), _VL_TEXT[1], _VL_TEXT[0])

# Routers built without quant_config, in every release 0.25-0.33: ReplicatedLinear(..., quant_config=None) until
# 0.30, GateLinear(...) from 0.31 (mixtral.py, qwen2_moe.py, deepseek_v2.py, minimax_m2.py, llama4.py, gpt_oss.py;
# glm4_moe.py's is a torch nn.Linear until 0.30); Qwen's shared_expert_gate is ReplicatedLinear(..., quant_config=None).
# qwen3_moe.py (and qwen3_vl_moe.py, which reuses its sparse block) passes quant_config=quant_config to mlp.gate in
# every release: that router is quantized unless the format's ignore list names it.
_QWEN_MOE_ROUTERS = ("mlp.gate", "mlp.shared_expert_gate")
_QWEN3_MOE_ROUTERS: dict[str, Any] = dict(unquantized=("mlp.shared_expert_gate",), quantized_routers=("mlp.gate",))

# pixtral.py PixtralHFVisionModel (Mistral-3's vision_tower): attention.{q,k,v}_proj -> qkv_proj
# (QKVParallelLinear over vision heads), o_proj row, feed_forward gate/up -> gate_up_proj, down_proj row.
_PIXTRAL = Tower("vllm:pixtral.py", ("vision_tower.", "model.vision_tower."), vision_heads=True,
                 layers_path="transformer.layers")
# mistral3.py Mistral3MultiModalProjector: linear_1 ColumnParallelLinear, linear_2 RowParallelLinear;
# its patch_merger.merging_layer is a torch nn.Linear (never quantized).
_MISTRAL3_PROJECTOR = Tower("vllm:mistral3.py", ("multi_modal_projector.", "model.multi_modal_projector."),
                            styles={"linear_1": COLUMN, "linear_2": ROW, "patch_merger.merging_layer": TORCH_LINEAR})
# pixtral.py PixtralForConditionalGeneration (Mistral-format Pixtral: params.json's vision_encoder, read by
# fp8check.core.checkpoint.mistral): VisionTransformer built without quant_config (QKVParallelLinear over vision
# heads, o_proj row, feed_forward gate_up_proj merged / down_proj row), PatchMerger's merging_layer and
# VisionLanguageAdapter's w_in / w_out ReplicatedLinears without quant_config; the text model is the class
# text_config names (init_vllm_registered_model).
_PIXTRAL_ENCODER = Tower("vllm:pixtral.py", ("vision_encoder.",), vision_heads=True, quantized=False)
# Its hf_to_vllm_mapper: an HF-format (Mistral-3 named) checkpoint's prefixes and projector names, and from 0.34
# (profile change pixtral-mistral-regex) the vision encoder's consolidated leaves, which its load_weights renames
# itself in every release.
_PIXTRAL_REGEXES = tuple(("regex", rf"^vision_encoder\.transformer\.layers\.(\d+)\.{block}\.{old}(?=\.|$)",
                          rf"vision_encoder.transformer.layers.\1.{block}.{new}") for block, old, new in (
    ("attention", "wq", "q_proj"), ("attention", "wk", "k_proj"), ("attention", "wv", "v_proj"),
    ("attention", "wo", "o_proj"), ("feed_forward", "w1", "gate_proj"), ("feed_forward", "w2", "down_proj"),
    ("feed_forward", "w3", "up_proj")))
_PIXTRAL_NAMES = (("substr", ".linear_1.", ".w_in."), ("substr", ".linear_2.", ".w_out."),
                  ("prefix", "model.language_model.", "language_model.model."),
                  ("prefix", "model.vision_tower.", "vision_encoder."),
                  ("prefix", "model.multi_modal_projector.", "vision_language_adapter."))
_PIXTRAL_ADAPTER = Tower("vllm:pixtral.py", ("vision_language_adapter.", "patch_merger."), quantized=False,
                         styles={"w_in": REPLICATED, "w_out": REPLICATED, "merging_layer": REPLICATED})
# voxtral.py VoxtralForConditionalGeneration (Mistral-format Voxtral: params.json's multimodal.whisper_model_args, a
# bidirectional encoder): whisper.py's WhisperEncoder built with the model's quant config (vllm_config.with_hf_config
# keeps it): self_attn q / k / v -> qkv_proj (QKVParallelLinear over audio_config's heads, KV heads the same),
# out_proj row, mlp fc1 column / fc2 row; AudioLanguageAdapter's w_in / w_out torch nn.Linears (no quant method).
# Not modelled: the encoder layers' quant prefix (WhisperEncoder hands `<layer>.layers`), which only an ignore list
# of another format would meet.
_VOXTRAL_ENCODER = Tower("vllm:voxtral.py", ("whisper_encoder.",), packed={"qkv_proj": LLAMA_PACKED["qkv_proj"]},
                         audio_heads=True, styles={"out_proj": ROW, "fc1": COLUMN, "fc2": ROW})
_VOXTRAL_ADAPTER = Tower("vllm:voxtral.py", ("audio_language_adapter.",), quantized=False,
                         styles={"w_in": TORCH_LINEAR, "w_out": TORCH_LINEAR})
# mllama4.py: Llama4VisionModel and Llama4MultiModalProjector are built with quant_config=None; vision
# attention q/k/v -> qkv_proj (vision heads), o_proj row, mlp fc1 column / fc2 row, vision_adapter.mlp the
# same, patch_embedding.linear column; projector linear_1 ColumnParallelLinear(gather_output=True).
_LLAMA4_VISION = Tower("vllm:mllama4.py", ("vision_model.", "model.vision_model."), vision_heads=True,
                       quantized=False, styles={"linear": COLUMN})
_LLAMA4_PROJECTOR = Tower("vllm:mllama4.py", ("multi_modal_projector.", "model.multi_modal_projector."),
                          quantized=False, styles={"linear_1": COLUMN})
# qwen2_5_vl.py Qwen2_5_VisionTransformer: blocks.N.attn.qkv is stored fused (packed "qkv": ["qkv"]),
# QKVParallelLinear with total_num_kv_heads = num_heads; attn.proj row; mlp gate/up -> gate_up_proj,
# down_proj row; merger.mlp.0 ColumnParallelLinear, merger.mlp.2 RowParallelLinear.
_QWEN_VL_PACKED = {**LLAMA_PACKED, "qkv": ("qkv",)}
_QWEN25_VISUAL = Tower("vllm:qwen2_5_vl.py", ("visual.", "model.visual."), packed=_QWEN_VL_PACKED,
                       vision_heads=True, styles={"attn.qkv": "QKVParallelLinear", "attn.proj": ROW,
                                                  "mlp.0": COLUMN, "mlp.2": ROW})
# qwen2_vl.py Qwen2VisionTransformer: blocks.N.attn.qkv stored fused and built as a ColumnParallelLinear (no
# QKVParallelLinear: its mapper stacks separate q / k / v into it), attn.proj row; the non-gated QuickGELU mlp.fc1
# ColumnParallelLinear / fc2 RowParallelLinear; merger.mlp.0 ColumnParallelLinear, merger.mlp.2 RowParallelLinear.
_QWEN2_VISUAL = Tower("vllm:qwen2_vl.py", ("visual.", "model.visual."), packed={},
                      styles={"attn.qkv": COLUMN, "attn.proj": ROW, "mlp.fc1": COLUMN, "mlp.fc2": ROW,
                              "mlp.0": COLUMN, "mlp.2": ROW})
# qwen3_vl.py Qwen3_VisionTransformer: the same attention; mlp, merger and deepstack_merger_list.N use
# linear_fc1 ColumnParallelLinear / linear_fc2 RowParallelLinear.
_QWEN3_VISUAL = Tower("vllm:qwen3_vl.py", ("visual.", "model.visual."), packed=_QWEN_VL_PACKED,
                      vision_heads=True, styles={"attn.qkv": "QKVParallelLinear", "attn.proj": ROW,
                                                 "linear_fc1": COLUMN, "linear_fc2": ROW})
# gemma3_mm.py: SiglipVisionModel(config.vision_config, quant_config) (siglip.py): self_attn q/k/v ->
# qkv_proj over vision heads, out_proj row, mlp fc1 column / fc2 row. The projector is a bare nn.Parameter.
_SIGLIP = Tower("vllm:siglip.py", ("vision_tower.", "model.vision_tower."), vision_heads=True)

# mixtral.py, minimax_m2.py: experts are w1/w2/w3 inside FusedMoE; only q/k/v are packed.
_QKV_ONLY = {"qkv_proj": LLAMA_PACKED["qkv_proj"]}
# deepseek_v2.py: scoring_func=getattr(config, "scoring_func", "softmax"), renormalize=config.norm_topk_prob,
# num_expert_group=getattr(config, "n_group", 1), a bias when config.topk_method == "noaux_tc".
_DEEPSEEK_ROUTER = Router(("scoring_func", "softmax"), ("norm_topk_prob", False), ("n_group", 1),
                          ("topk_method", "noaux_tc"))
_DEEPSEEK = Arch("vllm:deepseek_v2.py", unquantized=("mlp.gate",), spec_layers="num_nextn_predict_layers", mla=True,
                 router=_DEEPSEEK_ROUTER, sliding=MODEL_WINDOW)
_DEEPSEEK_V3 = _DEEPSEEK._replace(router=_DEEPSEEK_ROUTER._replace(renormalize=("norm_topk_prob", True)))

# gpt_oss.py's hf_to_vllm_mapper suffixes: the stored experts' tensors onto FusedMoE's parameters.
_GPT_OSS_EXPERT_SUFFIXES = tuple(("suffix", f".{leaf}{end}", f".{param}{to}") for leaf, end, param, to in (
    ("gate_up_proj", "_blocks", "w13", "_weight"), ("down_proj", "_blocks", "w2", "_weight"),
    ("gate_up_proj", "_scales", "w13", "_weight_scale"), ("down_proj", "_scales", "w2", "_weight_scale"),
    ("gate_up_proj", "", "w13", "_weight"), ("down_proj", "", "w2", "_weight"),
    ("gate_up_proj", "_bias", "w13", "_bias"), ("down_proj", "_bias", "w2", "_bias"),
    *((leaf, f".{part}", param, f"_{part}") for leaf, param in (("gate_up_proj", "w13"), ("down_proj", "w2"))
      for part in ("weight", "weight_scale", "bias", "input_scale"))))

ARCHITECTURES: dict[str, Arch] = {
    "LlamaForCausalLM": Arch("vllm:llama.py"),
    # TeleChat3 (dense; registry.py 0.25-0.34: llama.py's LlamaForCausalLM under Llama's names, alike 0.33 / 0.34).
    "TeleChat3ForCausalLM": Arch("vllm:llama.py"),
    # registry.py's other names of llama.py's LlamaForCausalLM (0.25-0.34, alike 0.33 / 0.34), Llama's names: InternLM3
    # (transformers' internlm3), IQuest-Coder, and the legacy LLaMAForCausalLM spelling of early Llama exports.
    "InternLM3ForCausalLM": Arch("vllm:llama.py"),
    "IQuestCoderForCausalLM": Arch("vllm:llama.py"),
    "LLaMAForCausalLM": Arch("vllm:llama.py"),
    # HyperCLOVA X SEED (hyperclovax.py HyperCLOVAXForCausalLM, 0.25-0.34, alike 0.33 / 0.34): Llama's names and
    # fusions with muP multipliers and peri-norms (no linears); its Attention takes no per-layer window.
    "HyperCLOVAXForCausalLM": Arch("vllm:hyperclovax.py", sliding=MODEL_WINDOW),
    "MistralForCausalLM": Arch("vllm:mistral.py"),
    "Llama4ForCausalLM": Arch("vllm:llama4.py", unquantized=("feed_forward.router",), router=_LLAMA4_ROUTER,
                              sliding=MODEL_WINDOW),
    "Llama4ForConditionalGeneration": Arch("vllm:llama4.py", unquantized=("feed_forward.router",),
                                           router=_LLAMA4_ROUTER, sliding=MODEL_WINDOW,
                                           towers=(_LLAMA4_VISION, _LLAMA4_PROJECTOR)),
    "MixtralForCausalLM": Arch("vllm:mixtral.py", packed=_QKV_ONLY, unquantized=("block_sparse_moe.gate",),
                               sliding=MODEL_WINDOW, hf_to_vllm=(("substr", ".gate_proj.", ".w1."),
                                                                 ("substr", ".up_proj.", ".w3."),
                                                                 ("substr", ".down_proj.", ".w2."))),
    # mistral3.py: Pixtral tower and projector, the text model of text_config's class (Mistral-Small-3.x: mistral,
    # Ministral-3: ministral3, Mistral-Large-3 in HF format: deepseek_v3).
    "Mistral3ForConditionalGeneration": Arch("vllm:mistral.py", towers=(_PIXTRAL, _MISTRAL3_PROJECTOR),
                                             registered_text_model=True, hf_to_vllm=(
                                                 _VL_TEXT[0], ("prefix", "model.vision_tower.", "vision_tower."),
                                                 ("prefix", "model.multi_modal_projector.", "multi_modal_projector."),
                                                 _VL_TEXT[1], ("prefix", "model.", "language_model.model."),
                                                 ("suffix", ".activation_scale", ".input_scale"),
                                                 ("suffix", ".weight_scale_inv", ".weight_scale"))),
    "PixtralForConditionalGeneration": Arch("vllm:pixtral.py", towers=(_PIXTRAL_ENCODER, _PIXTRAL_ADAPTER),
                                            registered_text_model=True, hf_to_vllm=(*_PIXTRAL_REGEXES, *_PIXTRAL_NAMES),
                                            fields_before=(("pixtral-mistral-regex", {"hf_to_vllm": _PIXTRAL_NAMES}),)),
    "VoxtralForConditionalGeneration": Arch("vllm:voxtral.py", towers=(_VOXTRAL_ENCODER, _VOXTRAL_ADAPTER),
                                            registered_text_model=True),
    "Qwen2ForCausalLM": Arch("vllm:qwen2.py", **_QWEN2_MODEL),
    "Qwen3ForCausalLM": Arch("vllm:qwen3.py", **_QWEN2_MODEL),
    "Qwen2MoeForCausalLM": Arch("vllm:qwen2_moe.py", unquantized=_QWEN_MOE_ROUTERS, router=_NORM_TOPK,
                                sliding=MODEL_WINDOW),
    "Qwen3MoeForCausalLM": Arch("vllm:qwen3_moe.py", router=_NORM_TOPK, sliding=MODEL_WINDOW, **_QWEN3_MOE_ROUTERS),
    "Qwen2_5_VLForConditionalGeneration": Arch("vllm:qwen2.py", packed=_QWEN_VL_PACKED, towers=(_QWEN25_VISUAL,),
                                               hf_to_vllm=_QWEN25_VL_NAMES, **_QWEN2_MODEL),
    # qwen2_vl.py (0.33 / 0.34 alike): Qwen2's text model (init_vllm_registered_model of Qwen2ForCausalLM) under
    # Qwen2.5-VL's names; see _QWEN2_VISUAL. The class declares no packed_modules_mapping (SupportsLoRA's empty one,
    # handed to the quant config by reference: configure_quant_config), Qwen2ForCausalLM (SupportsQuant) adds its
    # own q / k / v and gate / up entries.
    "Qwen2VLForConditionalGeneration": Arch("vllm:qwen2_vl.py", towers=(_QWEN2_VISUAL,), hf_to_vllm=_QWEN25_VL_NAMES,
                                            **_QWEN2_MODEL),
    # The text models: Qwen2ForCausalLM (qwen2.py); Qwen3LLMForCausalLM (qwen3_vl.py, a Qwen3ForCausalLM);
    # Qwen3MoeLLMForCausalLM (qwen3_vl_moe.py, a Qwen3MoeForCausalLM).
    "Qwen3VLForConditionalGeneration": Arch("vllm:qwen3_vl.py", packed=_QWEN_VL_PACKED, towers=(_QWEN3_VISUAL,),
                                            hf_to_vllm=_QWEN3_VL_NAMES, **_QWEN2_MODEL),
    # Qwen3VLMoeForConditionalGeneration.__init__ replaces its packed_modules_mapping by Qwen3-VL's text and MoE
    # ones: no "qkv" entry (the tower's attn.qkv is matched by its own name, the same answer).
    "Qwen3VLMoeForConditionalGeneration": Arch("vllm:qwen3_vl_moe.py",
                                               towers=(_QWEN3_VISUAL._replace(packed=LLAMA_PACKED),),
                                               router=_NORM_TOPK, sliding=MODEL_WINDOW, hf_to_vllm=_QWEN3_VL_NAMES,
                                               **_QWEN3_MOE_ROUTERS),
    "DeepseekV2ForCausalLM": _DEEPSEEK,
    "DeepseekV3ForCausalLM": _DEEPSEEK_V3,
    "Glm4MoeForCausalLM": Arch("vllm:glm4_moe.py", unquantized=("mlp.gate",), spec_layers="num_nextn_predict_layers",
                               router=Router("sigmoid", ("norm_topk_prob", True), ("n_group", 1), True),
                               sliding=MODEL_WINDOW,
                               styles_before=(("glm4-moe-gate-linear", {"mlp.gate": TORCH_LINEAR}),)),
    "MiniMaxM2ForCausalLM": Arch("vllm:minimax_m2.py", packed=_QKV_ONLY, unquantized=("block_sparse_moe.gate",),
                                 spec_layers="num_mtp_modules", sliding=MODEL_WINDOW,  # attn_window_size unset
                                 router=Router(("scoring_func", "sigmoid"), True, None, ("use_routing_bias", True))),
    "Gemma2ForCausalLM": Arch("vllm:gemma2.py"),
    "Gemma3ForCausalLM": Arch("vllm:gemma3.py"),
    "Gemma3ForConditionalGeneration": Arch("vllm:gemma3.py", towers=(_SIGLIP,), hf_to_vllm=(
        _VL_TEXT[0], ("prefix", "model.vision_tower.", "vision_tower."),
        ("prefix", "model.multi_modal_projector.", "multi_modal_projector."), _VL_TEXT[1])),
    # phi3.py: packed_modules_mapping maps qkv_proj -> [qkv_proj], gate_up_proj -> [gate_up_proj] (stored fused).
    "Phi3ForCausalLM": Arch("vllm:phi3.py", packed={"qkv_proj": ("qkv_proj",), "gate_up_proj": ("gate_up_proj",)}),
    # gpt_oss.py: attention sinks are a per-head nn.Parameter, not a linear; mlp.router is a GateLinear.
    "GptOssForCausalLM": Arch("vllm:gpt_oss.py", packed=_QKV_ONLY, unquantized=("mlp.router",), kv_replication=False,
                              head_quant_config=False, moe_activation="swigluoai", sliding=EVEN_LAYERS,
                              hf_to_vllm=(("substr", ".self_attn.", ".attn."),
                                          ("suffix", ".embed_tokens.weight", ".embedding.weight"),
                                          *_GPT_OSS_EXPERT_SUFFIXES)),
}

# GLM-4-0414 / GLM-Z1 (glm4.py, 0.25-0.34 alike): Llama's q/k/v and gate/up fusions with post-norms; the
# hf_to_vllm_mapper drops the num_nextn_predict_layers MTP layers after num_hidden_layers.
# GLM-4.1V / GLM-4.5V / GLM-4.6V (glm4_1v.py Glm4vForConditionalGeneration / Glm4vMoeForConditionalGeneration,
# 0.25-0.34): the text model is glm4.py's Glm4ForCausalLM (glm4v) or glm4_moe.py's Glm4MoeForCausalLM (glm4v_moe),
# named by model_type, under language_model.; Glm4vVisionTransformer at visual. (hf_to_vllm_mapper: model.visual.),
# built with the quant config: blocks.N.attn.qkv stored fused, a QKVParallelLinear over the vision heads, attn.proj
# row, mlp gate / up -> gate_up_proj, down_proj row; merger.proj a ColumnParallelLinear, merger gate / up ->
# gate_up_proj, down_proj row. Under compressed-tensors vLLM names the tower's attention qkv_proj (its prefix, "to
# align with GLM-4.5V-FP8's quantization config"), which fp8check reports as attn.qkv. Both classes' hf_to_vllm_mapper
# moves lm_head., model.language_model. and model.visual. (_GLM4V_NAMES).
_GLM4_TEXT = Arch("vllm:glm4.py", spec_layers="num_nextn_predict_layers", sliding=MODEL_WINDOW)
_GLM4V_VISUAL = Tower("vllm:glm4_1v.py", ("visual.", "model.visual."), packed={**LLAMA_PACKED, "qkv": ("qkv",)},
                      vision_heads=True, styles={"attn.qkv": "QKVParallelLinear", "attn.proj": ROW,
                                                 "merger.proj": COLUMN})
_GLM4V_NAMES = (_VL_TEXT[1], _VL_TEXT[0], ("prefix", "model.visual.", "visual."))
ARCHITECTURES.update({
    "Glm4ForCausalLM": _GLM4_TEXT,
    "Glm4vForConditionalGeneration": _GLM4_TEXT._replace(source="vllm:glm4_1v.py", towers=(_GLM4V_VISUAL,),
                                                         hf_to_vllm=_GLM4V_NAMES),
    "Glm4vMoeForConditionalGeneration": ARCHITECTURES["Glm4MoeForCausalLM"]._replace(
        source="vllm:glm4_1v.py", towers=(_GLM4V_VISUAL,), hf_to_vllm=_GLM4V_NAMES),
})
# GLM-OCR (glm_ocr.py GlmOcrForConditionalGeneration, a Glm4vForConditionalGeneration; registered 0.33-0.34, 0.34
# changes only the tower's attention forward): GLM-4.1V's text model and names; GlmOcrVisionTransformer replaces the
# tower with GLM-4V's linears (GlmOcrVisionBlock: attn.qkv a QKVParallelLinear over the vision heads, its prefix
# attn.qkv_proj under a quant config as GLM-4V's, attn.proj row, mlp gate / up -> gate_up_proj, down_proj row;
# GlmOcrPatchMerger: proj column, gate_up_proj / down_proj), all with the quant config.
ARCHITECTURES["GlmOcrForConditionalGeneration"] = ARCHITECTURES["Glm4vForConditionalGeneration"]._replace(
    source="vllm:glm_ocr.py", towers=(_GLM4V_VISUAL._replace(source="vllm:glm_ocr.py"),))
# GLM-4.7-Flash (glm4_moe_lite.py Glm4MoeLiteForCausalLM, registered 0.25-0.34; 0.33 -> 0.34 changed only ROCm AITER's
# fused shared experts, per layer from 0.34): DeepSeek-V2's MLA (Glm4MoeLiteMLAAttention is deepseek_v2.py's
# DeepseekV2MLAAttention: q_a_proj + kv_a_proj_with_mqa -> fused_qkv_a_proj where q_lora_rank is set, q_b_proj /
# kv_b_proj column, o_proj row; config/model.py's use_mla lists glm4_moe_lite) and GLM-4.5's MoE (Glm4MoeLite is
# glm4_moe.py's Glm4MoE: the router mlp.gate a torch nn.Linear until 0.30, a GateLinear without quant_config from
# 0.31, sigmoid grouped routing with the e_score_correction_bias, renormalize=config.norm_topk_prob, experts and
# shared_experts with the quant config) on the layers from first_k_dense_replace; load_weights skips the MTP layers
# past num_hidden_layers (get_spec_layer_idx_from_weight_name; Glm4MoeLiteMTP is the draft). packed_modules_mapping:
# gate_up_proj, plus fused_qkv_a_proj (Arch.mla) and qkv_proj only for a config without MLA head dims (use_mha).
ARCHITECTURES["Glm4MoeLiteForCausalLM"] = ARCHITECTURES["Glm4MoeForCausalLM"]._replace(
    source="vllm:glm4_moe_lite.py", mla=True, packed={"gate_up_proj": LLAMA_PACKED["gate_up_proj"]})

# Qwen3-Next (qwen3_next.py) and Qwen3.5 (qwen3_5.py; 0.34 on CUDA vllm/models/qwen3_5/nvidia/model.py, the same
# modules): gated-delta-net layers (linear_attn: in_proj_qkvz and in_proj_ba MergedColumnParallelLinear, conv1d an
# unquantized ColumnParallelLinear, out_proj row) between full-attention layers whose q_proj carries the output gate;
# routers (GateLinear) and shared_expert_gate built with quant_config=None; `mtp.` dropped by hf_to_vllm_mapper.
# Qwen3-Next stores in_proj_qkvz / in_proj_ba fused (one output shard each, GQA-interleaved); Qwen3.5 stores
# in_proj_qkv + in_proj_z and in_proj_b + in_proj_a (output sizes [Kd, Kd, Vd, Vd] and [nv, nv]).
_QWEN3_NEXT_PACKED = {**LLAMA_PACKED, "in_proj_qkvz": ("in_proj_qkvz",), "in_proj_ba": ("in_proj_ba",)}
_QWEN35_PACKED = {**LLAMA_PACKED, "in_proj_qkvz": ("in_proj_qkv", "in_proj_z"),
                  "in_proj_ba": ("in_proj_b", "in_proj_a")}
_GDN: dict[str, Any] = dict(spec_prefix="mtp.", q_gate=True, conv_linears=("linear_attn.conv1d",), sliding=MODEL_WINDOW,
            unquantized=_QWEN_MOE_ROUTERS, router=Router(renormalize=("norm_topk_prob", True)))
# qwen3_5.py's text-only classes read a checkpoint saved from the VL model (model.language_model.* -> model.*).
_QWEN35_TEXT_NAMES = (("prefix", "model.language_model.", "model."),)
ARCHITECTURES.update({
    "Qwen3NextForCausalLM": Arch("vllm:qwen3_next.py", packed=_QWEN3_NEXT_PACKED, head_quant_config=False,
                                 **_GDN),
    "Qwen3_5ForCausalLM": Arch("vllm:qwen3_5.py", packed=_QWEN35_PACKED, hf_to_vllm=_QWEN35_TEXT_NAMES, **_GDN),
    "Qwen3_5MoeForCausalLM": Arch("vllm:qwen3_5.py", packed=_QWEN35_PACKED, hf_to_vllm=_QWEN35_TEXT_NAMES, **_GDN),
    "Qwen3_5ForConditionalGeneration": Arch("vllm:qwen3_5.py", packed={**_QWEN_VL_PACKED, **_QWEN35_PACKED},
                                            towers=(_QWEN3_VISUAL,), hf_to_vllm=_QWEN3_VL_NAMES, **_GDN),
    "Qwen3_5MoeForConditionalGeneration": Arch("vllm:qwen3_5.py", packed={**_QWEN_VL_PACKED, **_QWEN35_PACKED},
                                               towers=(_QWEN3_VISUAL,), hf_to_vllm=_QWEN3_VL_NAMES, **_GDN),
})

# Qwen3-Omni (registry.py 0.25-0.34: Qwen3OmniMoeForConditionalGeneration -> qwen3_omni_moe_thinker.py
# Qwen3OmniMoeThinkerForConditionalGeneration; 0.33 -> 0.34 changed the processor and an audio config default, not
# the modules). vLLM builds the thinker only: its hf_to_vllm_mapper maps thinker.model. / thinker.lm_head. under
# language_model., strips "thinker." from the towers, and maps every talker. and code2wav. tensor to None.
# - Qwen3OmniMoeAudioEncoder (audio_tower), every linear without quant_config: q / k / v -> qkv_proj (its own
#   mapper's orig_to_new_stacked; a QKVParallelLinear over encoder_attention_heads, every head a KV head), out_proj
#   row, fc1 column, fc2 row (all with disable_tp where the heads do not divide TP), conv_out / proj1 / proj2
#   ReplicatedLinear.
# - Qwen3Omni_VisionTransformer (visual), with the quant config: Qwen3-VL's blocks (attn.qkv stored fused, a
#   QKVParallelLinear over the vision heads, attn.proj row, mlp.linear_fc1 column / linear_fc2 row); merger and
#   merger_list.N: mlp.0 ColumnParallelLinear, mlp.2 RowParallelLinear (Qwen2.5-VL's names).
# - Qwen3MoeLLMForCausalLM (a Qwen3MoeForCausalLM over thinker_config.text_config): the router mlp.gate built with
#   the quant config, renormalize=config.norm_topk_prob (Qwen3OmniMoeTextConfig's default true); its ParallelLMHead
#   takes the quant config without a prefix (NO_HEAD_PREFIX): ModelOpt, which quantizes heads, quantizes it whatever its
#   exclude_modules say.
_QWEN3_OMNI_AUDIO = Tower("vllm:qwen3_omni_moe_thinker.py", ("thinker.audio_tower.", "audio_tower."),
                          packed={"qkv_proj": LLAMA_PACKED["qkv_proj"]}, audio_heads=True, quantized=False,
                          disable_tp_unless_heads_divide=True,
                          styles={"out_proj": ROW, "fc1": COLUMN, "fc2": ROW, "conv_out": REPLICATED,
                                  "proj1": REPLICATED, "proj2": REPLICATED})
_QWEN3_OMNI_VISUAL = _QWEN3_VISUAL._replace(source="vllm:qwen3_omni_moe_thinker.py",
                                            roots=("thinker.visual.", "visual."),
                                            styles={**_QWEN3_VISUAL.styles, "mlp.0": COLUMN, "mlp.2": ROW})
ARCHITECTURES["Qwen3OmniMoeForConditionalGeneration"] = ARCHITECTURES["Qwen3MoeForCausalLM"]._replace(
    source="vllm:qwen3_omni_moe_thinker.py", packed=_QWEN_VL_PACKED, towers=(_QWEN3_OMNI_AUDIO, _QWEN3_OMNI_VISUAL),
    router=Router(renormalize=("norm_topk_prob", True)), spec_substrings=("talker.", "code2wav."),
    quant_prefixes=NO_HEAD_PREFIX,
    hf_to_vllm=(("prefix", "thinker.lm_head.", "language_model.lm_head."),
                ("prefix", "thinker.model.", "language_model.model."), ("prefix", "thinker.", ""),
                ("prefix", "model.", "language_model.model."), ("prefix", "lm_head.", "language_model.lm_head.")))

# Qwen3-ASR (qwen3_asr.py Qwen3ASRForConditionalGeneration, registered 0.33 / 0.34; 0.34 reads transformers'
# Qwen3ASRConfig, Qwen's thinker_config format converted by transformers_utils/config.py, 0.33 its own config class;
# the modules alike): Qwen3-Omni's audio encoder (Qwen3OmniMoeAudioEncoder, every linear without quant_config) at
# audio_tower., and Qwen3ForCausalLM over text_config (whatever its model type) under language_model.; the mapper
# takes Qwen's thinker. names and transformers' (model.audio_tower., model.language_model., the projector's
# linear_1 / linear_2 as the tower's proj1 / proj2) and drops talker. / code2wav.
ARCHITECTURES["Qwen3ASRForConditionalGeneration"] = ARCHITECTURES["Qwen3ForCausalLM"]._replace(
    source="vllm:qwen3_asr.py", towers=(_QWEN3_OMNI_AUDIO._replace(
        source="vllm:qwen3_asr.py", roots=("thinker.audio_tower.", "audio_tower.", "model.audio_tower.",
                                           "model.multi_modal_projector."),
        styles={**_QWEN3_OMNI_AUDIO.styles, "multi_modal_projector.linear_1": REPLICATED,
                "multi_modal_projector.linear_2": REPLICATED}),),
    spec_substrings=("talker.", "code2wav."),
    hf_to_vllm=(("prefix", "thinker.lm_head.", "language_model.lm_head."),
                ("prefix", "thinker.model.", "language_model.model."), ("prefix", "thinker.", ""),
                ("prefix", "model.audio_tower.", "audio_tower."),
                ("prefix", "model.language_model.", "language_model.model."),
                ("prefix", "model.multi_modal_projector.linear_1.", "audio_tower.proj1."),
                ("prefix", "model.multi_modal_projector.linear_2.", "audio_tower.proj2.")))
# qwen3_asr_realtime.py Qwen3ASRRealtimeGeneration (0.33 / 0.34 alike): the same class with a streaming front end.
ARCHITECTURES["Qwen3ASRRealtimeGeneration"] = ARCHITECTURES["Qwen3ASRForConditionalGeneration"]

# Qwen2.5-Omni (registry.py 0.25-0.34: Qwen2_5OmniModel and Qwen2_5OmniForConditionalGeneration ->
# qwen2_5_omni_thinker.py Qwen2_5OmniThinkerForConditionalGeneration; 0.33 -> 0.34 changed the processor only). vLLM
# builds the thinker only: its hf_to_vllm_mapper maps thinker.model. / thinker.lm_head. under language_model., strips
# "thinker." from the towers, and maps every talker. and token2wav. tensor to None.
# - transformers' own Qwen2_5OmniAudioEncoder (audio_tower), imported as is: every linear a torch nn.Linear
#   (self_attn q / k / v / out_proj, fc1, fc2, proj), no quant method; audio_bos_eos_token an nn.Embedding.
# - qwen2_5_vl.py's Qwen2_5_VisionTransformer (visual) with the quant config: attn.q / k / v, stored apart
#   (transformers' Qwen2_5OmniVisionAttention), stacked into attn.qkv by its mapper (orig_to_new_stacked), a
#   QKVParallelLinear over the vision heads, matched by the quant config's lists by its own name (Tower.unexpanded:
#   the class's packed entry is "attn.qkv"); attn.proj row, mlp gate / up -> gate_up_proj, down_proj row;
#   merger.mlp.0 column, mlp.2 row.
# - Qwen2ForCausalLM over thinker_config.text_config (init_vllm_registered_model). The class is no SupportsQuant:
#   configure_quant_config hands the quant config its packed_modules_mapping, qkv_proj / gate_up_proj beside the
#   tower's "attn.qkv".
_QWEN25_OMNI_AUDIO = Tower("vllm:qwen2_5_omni_thinker.py", ("thinker.audio_tower.", "audio_tower."), packed={},
                           styles={tail: TORCH_LINEAR for tail in ("q_proj", "k_proj", "v_proj", "out_proj", "fc1",
                                                                   "fc2", "proj")})
_QWEN25_OMNI_VISUAL = _QWEN25_VISUAL._replace(source="vllm:qwen2_5_omni_thinker.py",
                                              roots=("thinker.visual.", "visual."),
                                              packed={**LLAMA_PACKED, "qkv": ("q", "k", "v")}, unexpanded=("qkv",))
_QWEN25_OMNI = Arch("vllm:qwen2_5_omni_thinker.py", towers=(_QWEN25_OMNI_AUDIO, _QWEN25_OMNI_VISUAL),
                    spec_substrings=("talker.", "token2wav."), matrix_norms=("audio_tower.audio_bos_eos_token",),
                    hf_to_vllm=(("prefix", "thinker.lm_head.", "language_model.lm_head."),
                                ("prefix", "thinker.model.", "language_model.model."), ("prefix", "thinker.", "")),
                    **_QWEN2_MODEL)
ARCHITECTURES.update({"Qwen2_5OmniForConditionalGeneration": _QWEN25_OMNI, "Qwen2_5OmniModel": _QWEN25_OMNI})

# Qwen2-Audio (qwen2_audio.py Qwen2AudioForConditionalGeneration, registered 0.25-0.34, the file alike 0.33 -> 0.34):
# transformers' own Qwen2AudioEncoder (audio_tower: self_attn q / k / v / out_proj, fc1, fc2 torch nn.Linears, no quant
# method; embed_positions an nn.Embedding) and the model's Qwen2AudioMultiModalProjector (linear, a torch nn.Linear)
# beside Qwen2ForCausalLM over text_config (init_vllm_registered_model) under language_model. No hf_to_vllm_mapper: the
# checkpoint's names (language_model.model.layers.N, language_model.lm_head) are vLLM's. The class is neither
# SupportsQuant nor SupportsLoRA: the quant config's packed mapping is the language model's (SupportsQuant.__new__).
_QWEN2_AUDIO_LINEARS = ("q_proj", "k_proj", "v_proj", "out_proj", "fc1", "fc2")
ARCHITECTURES["Qwen2AudioForConditionalGeneration"] = Arch(
    "vllm:qwen2_audio.py", towers=(
        Tower("vllm:qwen2_audio.py", ("audio_tower.",), packed={},
              styles={tail: TORCH_LINEAR for tail in _QWEN2_AUDIO_LINEARS}),
        Tower("vllm:qwen2_audio.py", ("multi_modal_projector.",), packed={}, styles={"linear": TORCH_LINEAR})),
    matrix_norms=("audio_tower.embed_positions",), **_QWEN2_MODEL)

# Whisper (whisper.py WhisperForConditionalGeneration, registered 0.25-0.34; 0.33 -> 0.34 moved the k_proj zero bias
# into the mapper's weights_transforms, the modules alike): an encoder-decoder, every linear with the quant config.
# - WhisperEncoder (model.encoder.): self_attn q / k / v -> qkv_proj (QKVParallelLinear over encoder_attention_heads,
#   KV heads the same), out_proj row, fc1 column / fc2 row (the mapper's .fc1. -> .mlp.fc1.); its attention a
#   WhisperEncoderAttention (an MMEncoderAttention: no KV cache).
# - WhisperDecoder (model.decoder.): self_attn the same over decoder_attention_heads, with an Attention; encoder_attn
#   (WhisperCrossAttention) q_proj column, k / v -> kv_proj (MergedColumnParallelLinear), out_proj row and a
#   CrossAttention (Arch.cross_attention); fc1 / fc2 as the encoder's. The mapper stacks .self_attn.q/k/v_proj into
#   qkv_proj and .encoder_attn.k/v_proj into kv_proj only (Arch.packed_parents).
# - proj_out: a ParallelLMHead tied to the decoder's embed_tokens; the mapper drops a stored proj_out. (spec_prefix).
# Each layer is built under `<layer>.layers` (WhisperEncoder / WhisperDecoder's create_layer) and the model under ""
# (WhisperModel's prefix ".encoder" / ".decoder"): get_quant_method sees ".encoder.layers.N.layers.self_attn.qkv_proj",
# which no ignore entry under the checkpoint's (or the mapper's) names matches (quant_prefixes).
_WHISPER_QKV = {"qkv_proj": LLAMA_PACKED["qkv_proj"]}
ARCHITECTURES["WhisperForConditionalGeneration"] = Arch(
    "vllm:whisper.py", packed={**_WHISPER_QKV, "kv_proj": ("k_proj", "v_proj")},
    packed_parents={"qkv_proj": "self_attn", "kv_proj": "encoder_attn"}, cross_attention="encoder_attn.kv_proj",
    towers=(Tower("vllm:whisper.py", ("model.encoder.",), packed=_WHISPER_QKV, audio_heads=True),),
    sliding=MODEL_WINDOW, spec_prefix="proj_out.", other_tables=("embed_positions",),
    hf_to_vllm=(("substr", ".fc1.", ".mlp.fc1."), ("substr", ".fc2.", ".mlp.fc2.")),
    quant_prefixes=(("regex", r"^model\.(encoder|decoder)\.layers\.(\d+)\.", r".\1.layers.\2.layers."),))

# Ultravox (ultravox.py UltravoxModel, registered 0.25-0.34, the file alike 0.33 / 0.34; vLLM's UltravoxConfig): the
# text model init_vllm_registered_model of text_config's class under language_model.; UltravoxWhisperEncoder
# (whisper.py's WhisperEncoder, audio_config's widths, with the quant config) at audio_tower.: q / k / v -> qkv_proj
# over encoder_attention_heads, out_proj row, fc1 column / fc2 row, which the tower's own loader renames mlp.fc1 /
# mlp.fc2 (_WHISPER_ENCODER_MAPPER); UltravoxFeedForwardProjector (num_projector_layers 0, the released configs)
# linear_1 / linear_2 ReplicatedLinears with the quant config. The model's mapper moves a whole Whisper's
# audio_tower.model.encoder. to audio_tower. and drops the rest of it (decoder, proj_out). Not modelled: the tower
# layers' quant prefix (`<layer>.layers`, as Whisper's, which only an ignore list naming them would meet), the
# transformer projector (num_projector_layers > 0), checkpoints that leave the tower or text model to audio_model_id
# / text_model_id (secondary weights from other repositories).
_WHISPER_MLP_NAMES = ((".fc1.", ".mlp.fc1."), (".fc2.", ".mlp.fc2."))
ARCHITECTURES["UltravoxModel"] = Arch(
    "vllm:ultravox.py", registered_text_model=True, towers=(
        Tower("vllm:ultravox.py", ("audio_tower.",), packed=_WHISPER_QKV, audio_heads=True, renames=_WHISPER_MLP_NAMES,
              dropped=("audio_tower.model.decoder.", "audio_tower.proj_out.")),
        Tower("vllm:ultravox.py", ("multi_modal_projector.",), packed={},
              styles={"linear_1": REPLICATED, "linear_2": REPLICATED})),
    hf_to_vllm=(("prefix", "audio_tower.model.encoder.", "audio_tower."),))

# GLM-ASR (glmasr.py GlmAsrForConditionalGeneration, registered 0.33 / 0.34 alike): the text model built as
# LlamaForCausalLM whatever text_config names (init_vllm_registered_model(architectures=["LlamaForCausalLM"])) under
# language_model.; GlmAsrEncoder (audio_tower., with the quant config): self_attn q / k / v -> qkv_proj
# (QKVParallelLinear over audio_config's num_attention_heads), o_proj row, mlp.fc1 column / mlp.fc2 row;
# GlmAsrMultiModalProjector linear_1 column / linear_2 row, with the quant config. The mapper drops
# audio_tower.embed_positions.
ARCHITECTURES["GlmAsrForConditionalGeneration"] = Arch("vllm:glmasr.py", towers=(
    Tower("vllm:glmasr.py", ("audio_tower.",), packed=_WHISPER_QKV, audio_heads=True,
          dropped=("audio_tower.embed_positions",)),
    Tower("vllm:glmasr.py", ("multi_modal_projector.",), packed={}, styles={"linear_2": ROW})))

# AudioFlamingo3 (audioflamingo3.py AudioFlamingo3ForConditionalGeneration, registered 0.33 / 0.34 alike): Qwen2-Audio's
# towers (AudioFlamingo3Encoder is transformers' Qwen2AudioEncoder, every linear a torch nn.Linear; the projector's
# linear_1 / linear_2 torch nn.Linears: no quant method) and the text model built as Qwen2ForCausalLM whatever
# text_config names (init_vllm_registered_model(architectures=["Qwen2ForCausalLM"])).
ARCHITECTURES["AudioFlamingo3ForConditionalGeneration"] = Arch(
    "vllm:audioflamingo3.py", towers=(
        Tower("vllm:audioflamingo3.py", ("audio_tower.",), packed={},
              styles={tail: TORCH_LINEAR for tail in _QWEN2_AUDIO_LINEARS}),
        Tower("vllm:audioflamingo3.py", ("multi_modal_projector.",), packed={},
              styles={"linear_1": TORCH_LINEAR, "linear_2": TORCH_LINEAR})),
    matrix_norms=("audio_tower.embed_positions",), **_QWEN2_MODEL)

# Granite Speech (granite_speech.py GraniteSpeechForConditionalGeneration; granite_speech_plus.py's subclass
# GraniteSpeechPlusForConditionalGeneration builds the same modules, its encoder's forward concatenating more layers;
# both registered 0.33 / 0.34, the files alike): the text model of text_config's class (Granite) under
# language_model.; GraniteSpeechCTCEncoder (encoder.): input_linear a torch nn.Linear, out column / out_mid row with
# the quant config, and conformer blocks built without it (GraniteSpeechConformerBlock takes no quant_config): ff1 /
# ff2 up_proj column / down_proj row, attn to_q / to_kv / to_out torch nn.Linears, rel_pos_emb an nn.Embedding
# (modules.EMBEDDINGS);
# the projector (projector.) a BLIP-2 Q-Former (blip2.py: query / key / value and every dense a torch nn.Linear)
# and its linear, a torch nn.Linear. The mapper moves transformers 5's language_model.model.model. up a level.
_GRANITE_SPEECH = Arch(
    "vllm:granite_speech.py", registered_text_model=True, towers=(
        Tower("vllm:granite_speech.py", ("encoder.layers.",), packed={}, quantized=False,
              styles={leaf: TORCH_LINEAR for leaf in ("attn.to_q", "attn.to_kv", "attn.to_out")}),
        Tower("vllm:granite_speech.py", ("encoder.",), packed={},
              styles={"input_linear": TORCH_LINEAR, "out": COLUMN, "out_mid": ROW}),
        Tower("vllm:granite_speech.py", ("projector.",), packed={},
              styles={leaf: TORCH_LINEAR for leaf in ("query", "key", "value", "dense", "linear")})),
    hf_to_vllm=(("prefix", "language_model.model.model.", "language_model.model."),))
ARCHITECTURES.update({"GraniteSpeechForConditionalGeneration": _GRANITE_SPEECH,
                      "GraniteSpeechPlusForConditionalGeneration": _GRANITE_SPEECH})

# MiDashengLM (midashenglm.py MiDashengLMModel, registered 0.33 / 0.34 alike; vLLM's MiDashengLMConfig): the text
# model built as Qwen2ForCausalLM under decoder.; DashengAudioTransformer (audio_encoder., with the quant config):
# blocks.N.attn.qkv stored fused (a QKVParallelLinear over audio_encoder_config's num_heads, every head a KV head; no
# packed entry names it), attn.proj row, mlp.fc1 column / fc2 row; AudioProjectorSubsample (audio_projector.) net.0
# column / net.2 row, with the quant config.
ARCHITECTURES["MiDashengLMModel"] = Arch("vllm:midashenglm.py", towers=(
    Tower("vllm:midashenglm.py", ("audio_encoder.",), packed={}, audio_heads=True,
          styles={"attn.qkv": "QKVParallelLinear", "attn.proj": ROW}),
    Tower("vllm:midashenglm.py", ("audio_projector.",), packed={}, styles={"net.0": COLUMN, "net.2": ROW})),
    **_QWEN2_MODEL)

# Fun-Audio-Chat (funaudiochat.py FunAudioChatForConditionalGeneration, registered 0.33 / 0.34, the modules alike;
# vLLM's FunAudioChatConfig): the text model built as Qwen3ForCausalLM under language_model.;
# FunAudioChatAudioEncoder (continuous_audio_tower.) without a quant config: self_attn q / k / v -> qkv_proj (its
# own mapper's stacking; a QKVParallelLinear over encoder_attention_heads) and out_proj row, fc1 / fc2 and proj torch
# nn.Linears, audio_bos_eos_token an nn.Embedding; FunAudioChatDiscreteEncoder (audio_tower.) output_matching /
# continual_output_matching torch nn.Linears. The mapper drops audio_invert_tower. (the speech output tower). The class
# declares no packed_modules_mapping and is no SupportsQuant, nor is Qwen3ForCausalLM: the quant config's stays empty
# (quant_packed), so its lists are matched against qkv_proj / gate_up_proj by those names only.
ARCHITECTURES["FunAudioChatForConditionalGeneration"] = Arch(
    "vllm:funaudiochat.py", quant_packed=False, towers=(
        Tower("vllm:funaudiochat.py", ("continuous_audio_tower.",), packed=_WHISPER_QKV, audio_heads=True,
              quantized=False, styles={"fc1": TORCH_LINEAR, "fc2": TORCH_LINEAR, "proj": TORCH_LINEAR}),
        Tower("vllm:funaudiochat.py", ("audio_tower.",), packed={},
              styles={"output_matching": TORCH_LINEAR, "continual_output_matching": TORCH_LINEAR})),
    matrix_norms=("continuous_audio_tower.audio_bos_eos_token",), spec_prefix="audio_invert_tower.",
    **_QWEN2_MODEL)

# Qwen4-Exp (vllm.models.qwen4_exp, registered 0.29-0.34, read from 0.33 / 0.34: __init__.py resolves nvidia/model.py
# on CUDA and CPU, amd/model.py on ROCm, and refuses XPU / TPU on import, IMPORT_REFUSALS). Qwen3.5's gated-delta-net
# layers (in_proj_qkv + in_proj_z -> in_proj_qkvz, in_proj_b + in_proj_a -> in_proj_ba, conv1d unquantized) and
# Qwen3-Next's MoE (GateLinear router and shared_expert_gate without quant_config), with:
# - QSA layers (layer_types full_attention / indexed_attention with indexer_n_heads set; nvidia/qsa.py
#   Qwen4ExpQSAAttention): q (with its output gate) / k / v -> qkv_proj, and on CUDA / CPU the indexer's
#   index_qk_proj (a quantized ReplicatedLinear, replicated on every rank) loaded into it as a fourth shard
#   (Qwen4ExpQSAQKVIndexerLinear; 0.33 always, 0.34 only when quantized like q / k / v); the layer is `self_attn`
#   itself, backend QWEN4_EXP_QSA_TRITON, no KV cache method;
# - hyper-connections (nvidia/hyperconnection.py GatedResidual, quant_config=None): input_mix_weight_down +
#   block_inject_weight -> input_mix_weight_down_block_inject (MergedColumnParallelLinear, disable_tp),
#   input_mix_weight_up and the final hyper_connection_mixer.input_mix_weight_down ReplicatedLinears;
# - PLE layers (ple_layer_ids; ple_layer.py): key_proj + value_proj -> kv_proj (MergedColumnParallelLinear with the
#   quant config, disable_tp), the n-gram embedding tables (ple_embedding.ngram_embedding.shard_N) an embedding;
# - ParallelLMHead without quant_config. load_weights maps every name holding "mtp." (the Qwen4ExpMTP draft),
#   "hashstats_", "token_lookup" and "hyper_connection_mixer.block_inject_weight" to None.
# ROCm's amd/qsa.py keeps index_qk_proj a ReplicatedLinear of its own (indexer_unfused_on). Not modelled: the
# low-latency GEMM method (low_latency_gemm.py) that replaces UnquantizedLinearMethod on SM90 /
# SM100 / SM103 for the released models' BF16 shapes.
_QWEN4_EXP_PACKED = {**_QWEN35_PACKED, "kv_proj": ("key_proj", "value_proj"),
                     "input_mix_weight_down_block_inject": ("input_mix_weight_down", "block_inject_weight")}
_HYPER_CONNECTION = ("input_mix_weight_down_block_inject", "input_mix_weight_up",
                     "hyper_connection_mixer.input_mix_weight_down")
_QWEN4_EXP = Arch(
    "vllm:models/qwen4_exp", packed=_QWEN4_EXP_PACKED, head_quant_config=False, spec_substrings=(
        "mtp.", "hashstats_", "token_lookup", "hyper_connection_mixer.block_inject_weight"),
    q_gate=True, conv_linears=("linear_attn.conv1d",), sliding=MODEL_WINDOW, unquantized=_QWEN_MOE_ROUTERS,
    router=Router(renormalize=("norm_topk_prob", True)), unquantized_layers=_HYPER_CONNECTION,
    disable_tp=("input_mix_weight_down_block_inject", "ple.kv_proj"),
    styles={"input_mix_weight_up": REPLICATED, "hyper_connection_mixer.input_mix_weight_down": REPLICATED,
            "indexer.index_qk_proj": REPLICATED},
    indexer_shards=("indexer.index_qk_proj",), indexer_backend="QWEN4_EXP_QSA_TRITON",
    indexer_alike="qwen4exp-indexer-alike", indexer_class=QSA_QKV_INDEXER, indexer_unfused_on=frozenset({"rocm"}))
ARCHITECTURES.update({
    # nvidia/model.py Qwen4ExpForCausalLM's hf_to_vllm_mapper: a VL checkpoint's model.language_model. -> model.
    "Qwen4ExpForCausalLM": _QWEN4_EXP._replace(hf_to_vllm=(("prefix", "model.language_model.", "model."),)),
    # Qwen3_5ForConditionalGeneration's packed_modules_mapping (the tower's qkv) and hf_to_vllm_mapper, and Qwen3-VL's
    # vision tower, built with the quant config.
    "Qwen4ExpForConditionalGeneration": _QWEN4_EXP._replace(packed={**_QWEN_VL_PACKED, **_QWEN4_EXP_PACKED},
                                                            towers=(_QWEN3_VISUAL,), hf_to_vllm=_QWEN3_VL_NAMES),
})

# DeepSeek-V3.2 and GLM-5 (GlmMoeDsa): vllm.models.deepseek_v32 (0.33 and 0.34) resolves the class per platform:
# nvidia/model.py on CUDA, amd/model.py on ROCm (its attention module is self_attn, the MLAAttention itself),
# deepseek_v2.py's DeepseekV3ForCausalLM / GlmMoeDsaForCausalLM on XPU and CPU; the same linears everywhere.
# DeepSeek-V3's MLA and MoE plus the indexer: wq_b a quantized ReplicatedLinear; wk + weights_proj fused into
# wk_weights_proj (MergedColumnParallelLinear, disable_tp, quant_config=None; an FP8 wk is dequantized at load).
# Not modelled: 0.34's indexer_types / index_topk_freq layers without an indexer (every layer has one by default).
_DSA = _DEEPSEEK_V3._replace(
    source="vllm:models/deepseek_v32", packed={**LLAMA_PACKED, "wk_weights_proj": ("wk", "weights_proj")},
    styles={"indexer.wq_b": REPLICATED, "indexer.wk_weights_proj": "MergedColumnParallelLinear"},
    unquantized=("mlp.gate", "indexer.wk_weights_proj"), disable_tp=("indexer.wk_weights_proj",),
    dequantized=("indexer.wk",), sparse_mla=True, mla_self_attention=frozenset({"cuda", "rocm"}))
ARCHITECTURES.update({"DeepseekV32ForCausalLM": _DSA, "GlmMoeDsaForCausalLM": _DSA})

# dots3-note (Dots3NoteForCausalLM: vllm/models/dots3_note, registry.py 0.28-0.34; read in 0.33 and 0.34, whose
# nvidia/model.py differs in PP buffers and a load check only; the package has nvidia/ files only, imported on every
# platform). nvidia/multimodal.py Dots3NoteForCausalLM: hf_to_vllm_mapper model. / lm_head. / mtp. under
# language_model., vision_encoder. -> visual., audio_encoder. -> audio_tower.; no packed_modules_mapping and no
# SupportsQuant, so the quant config's stays empty (quant_packed); the language model is nvidia/model.py's
# Dots3NoteLanguageModelForCausalLM, DeepseekV32ForCausalLM's shell over Dots3NoteDecoderLayer:
# - layer_types "sliding_attention": Dots3NoteSlidingAttention, a dense MLA of the swa_* sizes (fused_qkv_a_proj,
#   q_b_proj / kv_b_proj columns, o_proj row, all with the quant config), its MLAAttention `self_attn.mla_attn` built
#   with Dots3NoteTritonMLABackend (TRITON_MLA, sliding_window_size); the loader skips an indexer there
#   (_adapt_weights);
# - any other layer: Dots3NoteFullAttention, deepseek_v2.py's DeepseekV2MLAAttention with the DSA indexer on every
#   platform (self_attn.mla_attn.mla_attn), its MLAAttention rebuilt with Dots3NotePaddedSparseBackend after the
#   selector's sparse pick (DOTS3_NOTE_PADDED_MLA_SPARSE);
# - both: g_proj a ReplicatedLinear of one row per head where attention_gate_type / swa_attention_gate_type is
#   "headwise" (the released configs; transformers' Dots3NoteTextAttention builds no other), with the quant config;
# - _adapt_weights dequantizes an FP8 indexer wk and weights_proj to BF16 (0.33 refuses one without its scale);
# - Dots3NoteMoE: DeepseekV2MoE (GateLinear router without quant_config, grouped noaux_tc routing; Dots3NoteConfig
#   defaults n_group / topk_group to 1) with a DeepseekV2MLP shared expert.
# Not modelled: Fp8Config's block-padded dense MLP and shared expert (_padded_mlp_size: the intermediate width rounded
# up to whole blocks per rank; fp8check still refuses one that does not split into blocks), an elementwise gate (a
# ColumnParallelLinear of heads x v_head_dim), the vision / audio towers vLLM builds where config.json has a
# vision_config / audio_config (plain nn.Linear, no quant method: stored BF16). CPU refuses the package on import
# (IMPORT_REFUSALS).
ARCHITECTURES["Dots3NoteForCausalLM"] = _DSA._replace(
    source="vllm:models/dots3_note", styles={**_DSA.styles, "self_attn.g_proj": REPLICATED}, quant_packed=False,
    dequantized=("indexer.wk", "indexer.weights_proj"), mla_self_attention=frozenset(),
    sparse_layer_types=("full_attention", "indexed_attention"), sparse_mla_backend="DOTS3_NOTE_PADDED_MLA_SPARSE",
    dense_mla_attention=("mla_attn", "TRITON_MLA"),
    hf_to_vllm=(("prefix", "model.", "language_model.model."), ("prefix", "lm_head.", "language_model.lm_head."),
                ("prefix", "mtp.", "language_model.mtp."), ("prefix", "vision_encoder.", "visual."),
                ("prefix", "audio_encoder.", "audio_tower.")))

# Mistral's own names for the Mistral-3 text models (registry.py, every release 0.25-0.34): Ministral3ForCausalLM is
# mistral.py's MistralForCausalLM; MistralLarge3ForCausalLM (mistral_large_3.py) is deepseek_v2.py's
# DeepseekV3ForCausalLM with an hf_to_vllm_mapper from the Mistral-format names (layers.N.attention.wq_a, ...,
# .qscale_weight) to DeepSeek's, which leaves HF-format names as they are: DeepSeek-V3's modules, MTP layers skipped
# by DeepseekV2Model.load_weights. vLLM's Mistral-format reader (transformers_utils/configs/mistral.py) writes both
# names from params.json, as fp8check.core.checkpoint.mistral does (with each class's renaming of the names).
ARCHITECTURES.update({
    "Ministral3ForCausalLM": ARCHITECTURES["MistralForCausalLM"],
    "MistralLarge3ForCausalLM": _DEEPSEEK_V3._replace(source="vllm:mistral_large_3.py"),
})

# Mistral-Large-4 (vllm/models/mistral/mistral_large4, 0.34 only: registry.py; nvidia/model.py on CUDA, amd/model.py on
# ROCm, the same modules; XPU and CPU refused on import), built from a Mistral-format checkpoint only (config:
# transformers_utils/configs/mistral.py's `dsa` branch; names: model.py _CHECKPOINT_NAME_MAP, read by
# fp8check.core.checkpoint.mistral). models/mistral/nvidia/attention.py MistralMLAAttention: MLA without q-LoRA
# (q_proj column, quantized), kv_a_proj_with_mqa a ReplicatedLinear and kv_b_proj a ColumnParallelLinear, both with
# quant_config=None, o_proj row; every layer sparse (index_topk), an indexer (nvidia/indexer.py MistralIndexer: wq_b
# a quantized ReplicatedLinear, wk + weights_proj fused into wk_weights_proj, quant_config=None, disable_tp) on
# the "full" layers of index_sharing only; KV-sharing and NoPE layers (Arch.mla_kv_sharing). nvidia/mlp.py MistralMLP
# (w1 + w3 -> gate_up_proj, w2 -> down_proj) for dense layers and shared experts; nvidia/moe.py MistralMoE: gate a
# GateLinear without quant_config, softmax top-k renormalized (norm_topk_prob), no groups, no bias; the LM head a
# ParallelLMHead without quant_config.
_MISTRAL_LARGE_4 = Arch(
    "vllm:models/mistral/mistral_large4",
    packed={"gate_up_proj": ("w1", "w3"), "wk_weights_proj": ("wk", "weights_proj")},
    styles={"indexer.wq_b": REPLICATED, "indexer.wk_weights_proj": "MergedColumnParallelLinear"},
    unquantized=("mlp.gate",), unquantized_layers=("self_attn.kv_a_proj_with_mqa", "self_attn.kv_b_proj",
                                                   "indexer.wk_weights_proj"),
    disable_tp=("indexer.wk_weights_proj",), mla=True, sparse_mla=True, mla_kv_sharing=True, head_quant_config=False,
    router=Router(renormalize=("norm_topk_prob", True)), sliding=MODEL_WINDOW)
ARCHITECTURES["MistralLarge4ForCausalLM"] = _MISTRAL_LARGE_4


# MiniMax-M3 (vllm/models/minimax_m3, 0.30-0.34: nvidia/model.py on CUDA, XPU and CPU, amd/model.py on ROCm, the same
# modules): Gemma-norm attention whose sparse layers (text_config.sparse_attention_config.sparse_attention_freq; 0.34
# reads the same as layer_types "minimax_m3_sparse" from transformers' MiniMaxM3VLTextConfig) fold the lightning
# indexer's index_q_proj / index_k_proj into qkv_proj (MinimaxM3QKVParallelLinearWithIndexer) and are attention
# layers themselves (MiniMaxM3SparseAttention at `self_attn`: backend MINIMAX_M3_SPARSE, common/sparse_attention.py
# MiniMaxM3SparseBackend, which select_main_backend_and_impl_cls returns on every platform, its SM100 MSA subclass
# keeping the name; no quant method); the other layers a plain Attention. Dense layers (moe_layer_freq 0) keep
# mlp.gate_up_proj / down_proj; MoE layers: block_sparse_moe.gate a GateLinear without quant_config, sigmoid routing
# with the e_score_correction_bias, shared_experts merged gate_up_proj, experts w1 / w3 / w2 with SwiGLU-OAI
# (activation "swigluoai_uninterleave": named, not judged). load_weights skips every name holding "mtp." (the MTP
# block loads as MiniMaxM3MTP). The vision tower (common/vision_tower.py MiniMaxVLVisionModel, built with the quant
# config): q/k/v -> qkv_proj over vision heads, out_proj / fc2 / linear_2 row, fc1 / linear_1 column;
# hf_to_vllm_mapper moves multi_modal_projector. and patch_merge_mlp. under vision_tower. and mlp.fc1 / fc2 up a level.
_MINIMAX_M3 = Arch("vllm:models/minimax_m3", unquantized=("block_sparse_moe.gate",), spec_substrings=("mtp.",),
                   router=Router("sigmoid", True, None, True), moe_activation="swigluoai_uninterleave",
                   sliding=MODEL_WINDOW, indexer_shards=("index_q_proj", "index_k_proj"),
                   indexer_backend="MINIMAX_M3_SPARSE", moe_swiglu_limit=True,
                   swiglu_limit_default=7.0)
_MINIMAX_M3_VISION = Tower("vllm:models/minimax_m3", ("vision_tower.", "multi_modal_projector.", "patch_merge_mlp."),
                           styles={"linear_2": ROW}, vision_heads=True)
# nvidia/model.py's mapper (0.33, 0.34); amd/model.py's substrings lack the trailing dot (".mlp.fc1": ".fc1"), which
# renames the same weights.
_MINIMAX_M3_NAMES = (("substr", ".mlp.fc1.", ".fc1."), ("substr", ".mlp.fc2.", ".fc2."),
                     ("prefix", "multi_modal_projector.", "vision_tower.multi_modal_projector."),
                     ("prefix", "patch_merge_mlp.", "vision_tower.patch_merge_mlp."))
ARCHITECTURES.update({"MiniMaxM3SparseForCausalLM": _MINIMAX_M3,
                      "MiniMaxM3SparseForConditionalGeneration": _MINIMAX_M3._replace(
                          towers=(_MINIMAX_M3_VISION,), hf_to_vllm=_MINIMAX_M3_NAMES)})


# GLM-5-Next / GLM-5.3-Flash (vllm/models/glm5next, 0.30-0.34; common/model.py from 0.31, nvidia/model.py in 0.30; the
# same classes on CUDA, ROCm and CPU, XPU refused on import: IMPORT_REFUSALS). Decoder layers by config.layer_types:
# KDA linear attention (common/kda.py Glm5NextLinearAttention, built with vllm_config.quant_config set to None: q, k,
# v, b, f_a, g_a fused into in_proj_qkvbfg_a by load_weights' stacked_params_mapping, f_b_proj / g_b_proj columns,
# o_proj row, the q / k / v short convolutions unquantized ColumnParallelLinears, fused into one conv1d from 0.34) or
# GLM-5's sparse MLA (common/attention.py Glm5NextMLAAttention, quant_config=None: fused_qkv_a_proj, q_b_proj,
# kv_b_proj, o_proj and the indexer's wq_b / wk_weights_proj all BF16; load_weights dequantizes an FP8 q_a_proj,
# kv_a_proj_with_mqa, q_b_proj, o_proj (_try_load_fp8_attn_proj, KDA's o_proj too) and indexer.wk
# (_try_load_fp8_indexer_wk)); its MLAAttention is self_attn.mla_attn.mla_attn on every platform. The MLP and the
# MoE (GateLinear router without quant_config, DeepSeek-V3 grouped sigmoid routing, shared experts) carry the
# quant config; MTP layers past num_hidden_layers are skipped (get_spec_layer_idx_from_weight_name). The
# ForConditionalGeneration class builds the vision tower with quant_config=None (common/multimodal.py).
# Every MoE hands FusedMoE config.swiglu_limit (transformers' Glm5NextTextConfig, read from 0.32: 10.0 when absent;
# 0.30 / 0.31's own class: None, so a config.json without the key differs there).
# Not modelled: 0.34's MegaMoE (--moe-backend in NATIVE_MEGA_MOE_BACKENDS, expert parallel at TP 1) and ROCm
# gfx950's fused shared experts (TP 4 / 8).
_KDA_SHARDS = ("q_proj", "k_proj", "v_proj", "b_proj", "f_a_proj", "g_a_proj")
_KDA_CONVS = ("self_attn.q_conv1d", "self_attn.k_conv1d", "self_attn.v_conv1d")
_GLM5_NEXT_PACKED = {"gate_up_proj": LLAMA_PACKED["gate_up_proj"], "wk_weights_proj": ("wk", "weights_proj"),
                     "in_proj_qkvbfg_a": _KDA_SHARDS}
_GLM5_NEXT = _DSA._replace(
    source="vllm:models/glm5next", packed={**_GLM5_NEXT_PACKED, "conv1d": ("q_conv1d", "k_conv1d", "v_conv1d")},
    packed_before=(("glm5next-fused-conv", _GLM5_NEXT_PACKED),), mla_self_attention=frozenset(),
    native_mega_moe=True, fields_before=(("glm5next-mega-moe", {"native_mega_moe": False}),),
    attention_quant_config=False, moe_swiglu_limit=True, swiglu_limit_default=10.0,
    conv_linears=("self_attn.conv1d", *_KDA_CONVS),
    unquantized_layers=("self_attn.in_proj_qkvbfg_a", "self_attn.f_b_proj", "self_attn.g_b_proj", "self_attn.o_proj",
                        "self_attn.fused_qkv_a_proj", "self_attn.kv_a_proj_with_mqa", "self_attn.q_proj",
                        "self_attn.q_b_proj", "self_attn.kv_b_proj", "indexer.wq_b"),
    dequantized=("indexer.wk", "self_attn.q_a_proj", "self_attn.kv_a_proj_with_mqa", "self_attn.q_b_proj",
                 "self_attn.o_proj"))
# multimodal.py Glm5NextVisionTransformer (quant_config=None): blocks.N.attn.qkv a QKVParallelLinear over the
# vision heads, attn.proj row, mlp gate / up -> gate_up_proj, down_proj row; merger.proj a ColumnParallelLinear,
# merger gate / up -> gate_up_proj, down_proj row.
_GLM5_NEXT_VISUAL = Tower("vllm:models/glm5next", ("model.visual.", "visual."),
                          packed={"gate_up_proj": LLAMA_PACKED["gate_up_proj"]},
                          vision_heads=True, quantized=False,
                          styles={"attn.qkv": "QKVParallelLinear", "attn.proj": ROW, "merger.proj": COLUMN})
ARCHITECTURES.update({"Glm5NextForCausalLM": _GLM5_NEXT,
                      "Glm5NextForConditionalGeneration": _GLM5_NEXT._replace(
                          towers=(_GLM5_NEXT_VISUAL,),
                          hf_to_vllm=(_VL_TEXT[1], _VL_TEXT[0], ("prefix", "model.visual.", "visual.")))})


# DeepSeek-V4 (vllm.models.deepseek_v4, 0.30-0.34; the class resolved per platform: nvidia/, amd/, xpu/, cpu/
# model.py, the same linears; 0.33 -> 0.34 changed loading and ROCm kernels, not the modules). Checkpoints keep
# DeepSeek's own names (layers.N.attn.wq_a, ffn.experts.E.w1, embed, head; hf_to_vllm_mapper adds "model." and maps
# every name holding "mtp." to None). attention.py DeepseekV4Attention: wq_a + wkv fused into fused_wqa_wkv
# (MergedColumnParallelLinear, disable_tp), wq_b column, wo_b RowParallelLinear; DeepseekV4Indexer (compress-ratio-4
# layers): wq_b a quantized ReplicatedLinear, weights_proj a ReplicatedLinear with quant_config=None; compressor.py
# DeepseekCompressor (attn.compressor and attn.indexer.compressor): wkv + wgate fused into fused_wkv_wgate
# (quant_config=None, disable_tp; an FP8 shard's scale has no parameter to load into). nvidia/model.py
# DeepseekV4MoE: gate a GateLinear (no quant_config), shared_experts w1 + w3 -> gate_up_proj, w2 -> down_proj;
# DeepseekV4ForCausalLM: ParallelLMHead without quant_config. Routing: FusedMoE's scoring_func (default
# sqrtsoftplus), renormalize=norm_topk_prob, a bias when topk_method == "noaux_tc", no expert groups.
# wo_a: a ColumnParallelLinear until 0.33, DeepseekV4GroupedWoA (its subclass, common/grouped_wo_a.py) from 0.34,
# which compressed-tensors' class-name target "Linear" no longer matches (find_matched_target): under a "Linear"
# target an FP8 wo_a is then built unquantized.
DSV4_GROUPED_WO_A = "DeepseekV4GroupedWoA"
_DSV4_PACKED: dict[str, tuple[str, ...]] = {"gate_up_proj": ("w1", "w3"), "fused_wqa_wkv": ("wq_a", "wkv"), "fused_wkv_wgate": ("wkv", "wgate")}
_DSV4 = Arch("vllm:models/deepseek_v4", packed=_DSV4_PACKED, native_mega_moe=True,
             styles={"attn.wo_a": DSV4_GROUPED_WO_A, "attn.wo_b": ROW, "indexer.wq_b": REPLICATED,
                     "indexer.weights_proj": REPLICATED, "head": "ParallelLMHead"},
             styles_before=(("dsv4-grouped-wo-a", {"attn.wo_a": COLUMN}),),
             unquantized=("ffn.gate",), unquantized_layers=("indexer.weights_proj", "compressor.fused_wkv_wgate"),
             disable_tp=("attn.fused_wqa_wkv", "compressor.fused_wkv_wgate"), head_quant_config=False,
             spec_substrings=("mtp.",), sliding=MODEL_WINDOW, fp4_experts_by_default=True, moe_swiglu_limit=True,
             swiglu_limit_default=10.0,
             hf_to_vllm=(("regex", r"(\.experts\.\d+\.w[123]\.base_layer)\.scale$", r"\1.weight_scale"),
                         ("regex", r"(\.experts\.\d+\.w[123])\.scale$", r"\1.weight_scale"),
                         ("regex", r"\.scale$", ".weight_scale_inv"),
                         ("substr", ".shared_experts.w2", ".shared_experts.down_proj"),
                         *(("prefix", old, f"model.{old}")
                           for old in ("layers.", "embed.", "norm.", "hc_head", "mtp.")),
                         ("suffix", "head.weight", "lm_head.weight"), ("suffix", "embed.weight", "embed_tokens.weight"),
                         ("suffix", ".ffn.gate.bias", ".ffn.gate.e_score_correction_bias")),
             router=Router(("scoring_func", "sqrtsoftplus"), ("norm_topk_prob", True), None,
                           ("topk_method", "noaux_tc")),
             # The attention class per platform and its backend_cls.get_name(), 0.30-0.34: nvidia/model.py
             # _select_dsv4_attn_cls (no --attention-backend: FlashMLA, FlashInfer's SM120 class on SM12x),
             # amd/rocm.py, cpu/cpu_sparse.py, xpu/xpu_sparse.py.
             own_attention={"cuda": "FLASHMLA_SPARSE_DSV4", "cuda:120": "FLASHINFER_MLA_SPARSE_DSV4",
                            "rocm": "ROCM_FLASHMLA_SPARSE_DSV4", "cpu": "CPU_V4_MLA_SPARSE",
                            "xpu": "XPU_V4_MLA_SPARSE"})
ARCHITECTURES["DeepseekV4ForCausalLM"] = _DSV4
# DeepSeek-V4 with a vision tower (Flash-Vision-Exp; 0.30-0.34): config.json names DeepseekV4ForCausalLM and sets
# vision_n_layers, which vLLM's DeepseekV4ModelArchConfigConvertor (transformers_utils/model_arch_config_convertor.py)
# turns into DeepseekV4ForConditionalGeneration (checkpoint/local.py ARCHITECTURE_REWRITES). common/vl_model.py:
# DeepseekV4ForCausalLM under language_model (its mapper re-rooted there, "mtp." dropped); common/vision.py
# DeepseekV4ViT ("vision.") and DeepseekV4Aligner ("aligner."), every linear with quant_config=None: patch_embed.proj
# ReplicatedLinear, blocks.N attn.wqkv a QKVParallelLinear over vision_n_heads (stored fused), attn.wo row, mlp.w1 a
# MergedColumnParallelLinear (gate and up stored fused) and mlp.w2 row; aligner w1 column, w2 row (all replicated
# under --mm-encoder-tp-mode data, not modelled). On CPU and XPU the package's __init__ resolves the class to
# vl_stub.py, which raises while building (CONSTRUCTION_REFUSALS).
_DSV4_VISION = Tower("vllm:models/deepseek_v4", ("vision.", "aligner."), packed={"wqkv": ("wqkv",)},
                     vision_heads=True, quantized=False,
                     styles={"patch_embed.proj": REPLICATED, "attn.wqkv": "QKVParallelLinear", "attn.wo": ROW,
                             "mlp.w1": "MergedColumnParallelLinear", "mlp.w2": ROW, "aligner.w1": COLUMN,
                             "aligner.w2": ROW})
ARCHITECTURES["DeepseekV4ForConditionalGeneration"] = _DSV4._replace(towers=(_DSV4_VISION,))
# DeepSeek-V4.1 (vllm.models.deepseek_v41, 0.30-0.34; model_type deepseek_v41, whose config class
# transformers_utils/configs/deepseek_v41.py flattens text_config and vision_config onto one config). The registered
# DeepseekV41ForCausalLM is the vision wrapper (nvidia/vl_model.py, amd/vl_model.py on ROCm; no CPU / XPU package):
# DeepSeek-V4's tower and aligner (deepseek_v4/common/vision.py, always built) and DeepseekV41LLMForCausalLM under
# language_model, its mapper re-rooted there ("mtp." dropped). The text model is V4's (attention.py
# DeepseekV4Attention: fused_wqa_wkv replicated, wq_b column, wo_a ColumnParallelLinear until 0.33 and
# DeepseekV4GroupedWoA from 0.34, wo_b row; MoE, head and routing as V4's, no hash-routed layers) with V4.1's sparse
# topology: a compressor (fused_wkv_wgate, unquantized, one shard where compress_ratios gives ratio 1) only on
# kv_source_layer_ids, an indexer (wq_b quantized, weights_proj unquantized) only on index_source_layer_ids, whose
# wk is a ReplicatedLinear with quant_config=None on the layers that are KV sources too ("stored in bf16 with no
# quantization scales"); common/engram.py Engram (engram_layer_ids): wkv a ColumnParallelLinear with the quant
# config, the n-gram table a ParallelEngramEmbedding (not a linear). The attention's backend: nvidia/model.py
# _select_dsv4_attn_cls (FlashMLA, FlashInfer on SM12x), amd/rocm.py.
# Not modelled: SM100's FlashMLA mega attention (FLASHMLA_MEGA_ATTN_DSV41, where the kernel is built and each rank
# holds WV_GROUP_SIZE heads per wo_a group), MXFP8 ([32, 32]) and NVFP4-expert checkpoints, sequence parallel.
_DSV41 = _DSV4._replace(
    source="vllm:models/deepseek_v41", towers=(_DSV4_VISION,),
    styles={**_DSV4.styles, "indexer.wk": REPLICATED},
    unquantized_layers=(*_DSV4.unquantized_layers, "indexer.wk"), last_shard_optional=("compressor.fused_wkv_wgate",),
    other_tables=("engram.embed",),
    own_attention={"cuda": "FLASHMLA_SPARSE_DSV41", "cuda:120": "FLASHINFER_MLA_SPARSE_DSV41",
                   "rocm": "ROCM_FLASHMLA_SPARSE_DSV41"})
ARCHITECTURES["DeepseekV41ForCausalLM"] = _DSV41


# Kimi-K2.5 (kimi_k25.py, kimi_k25_vit.py; 0.30-0.34, the layers alike): the text model is deepseek_v2.py's
# DeepseekV2ForCausalLM over text_config (DeepSeek-V3's config class: norm_topk_prob true by default) under
# language_model; MoonViT3dPretrainedModel (vision_tower.encoder.blocks.N: wqkv a QKVParallelLinear over the vision
# heads, stored fused, wo row, mlp.fc0 column / fc1 row) and KimiK25MultiModalProjector (linear_1 / linear_2
# ReplicatedLinear, the checkpoint's mm_projector.proj.0 / proj.2 by hf_to_vllm_mapper) get the model's quant_config,
# or None when it is a CompressedTensorsConfig (_maybe_ignore_quant_config).
_MOONVIT = Tower("vllm:kimi_k25_vit.py", ("vision_tower.",), packed={"wqkv": ("wqkv",)}, vision_heads=True,
                 styles={"wqkv": "QKVParallelLinear", "wo": ROW, "mlp.fc0": COLUMN, "mlp.fc1": ROW},
                 unquantized_methods=("compressed-tensors",))
_KIMI_K25_PROJECTOR = Tower("vllm:kimi_k25_vit.py", ("mm_projector.",), packed={},
                            styles={"proj.0": REPLICATED, "proj.2": REPLICATED},
                            unquantized_methods=("compressed-tensors",))
# kimi_k25.py's hf_to_vllm_mapper (models/kimi_k3 nvidia/model.py and amd/model.py copy it for Kimi-K3).
_KIMI_K25_NAMES = (("prefix", "language_model.layers.", "language_model.model.layers."),
                   ("prefix", "mm_projector.proj.0", "mm_projector.linear_1"),
                   ("prefix", "mm_projector.proj.2", "mm_projector.linear_2"))
ARCHITECTURES["KimiK25ForConditionalGeneration"] = _DEEPSEEK_V3._replace(
    source="vllm:kimi_k25.py", towers=(_MOONVIT, _KIMI_K25_PROJECTOR), hf_to_vllm=_KIMI_K25_NAMES,
    vllm_names=(("mm_projector.proj.0", "mm_projector.linear_1"), ("mm_projector.proj.2", "mm_projector.linear_2")))


# Kimi-VL (kimi_vl.py KimiVLForConditionalGeneration, registered 0.25-0.34, kimi_vl.py and moonvit.py alike 0.33 ->
# 0.34): deepseek_v2.py's DeepseekV2ForCausalLM over text_config (vLLM's KimiVLConfig reads it as transformers'
# DeepseekV2Config whatever its model_type: norm_topk_prob false by default; MLA, q_lora_rank null in the releases)
# under language_model, the checkpoint's names (no hf_to_vllm_mapper); moonvit.py's MoonVitPretrainedModel
# (vision_tower.encoder.blocks.N: wqkv a QKVParallelLinear over the vision heads, stored fused, wo row, mlp.fc0 column /
# fc1 row) and KimiVLMultiModalProjector (linear_1 / linear_2 ReplicatedLinear), both built without a quant config.
# Neither the class nor DeepseekV2ForCausalLM is SupportsQuant and the class declares no packed_modules_mapping, so the
# quant config's stays empty: its lists are matched against fused_qkv_a_proj / gate_up_proj by their own names
# (Arch.quant_packed).
ARCHITECTURES["KimiVLForConditionalGeneration"] = _DEEPSEEK._replace(
    source="vllm:kimi_vl.py", quant_packed=False, towers=(
        _MOONVIT._replace(source="vllm:moonvit.py", quantized=False, unquantized_methods=()),
        Tower("vllm:kimi_vl.py", ("multi_modal_projector.",), packed={}, quantized=False,
              styles={"linear_1": REPLICATED, "linear_2": REPLICATED})))

# DeepSeek-VL2 (deepseek_vl2.py DeepseekVLV2ForCausalLM, registered 0.25-0.34; 0.34 adds only an eager encoder
# forward): vLLM's DeepseekVLV2Config reads config.json's language_config as transformers' DeepseekV2Config, the text
# model deepseek_v2.py's DeepseekV2ForCausalLM (init_vllm_registered_model) under language_model, the mapper moving
# the checkpoint's language. there. The tower is timm's vit_so400m_patch14_siglip_384 (timm.create_model, whatever
# vision_config says: 27 blocks, synth.SIGLIP_SO400M), all torch nn.Linears at TP 1; above it patch_vit_for_tp swaps
# every timm Mlp's fc1 / fc2 (the blocks' and attn_pool's) for a ColumnParallelLinear / RowParallelLinear with the
# quant config and the prefix of its path inside the timm model (blocks.N.mlp.fc1: no vision.), which the quant
# config's lists are matched against. MlpProjector's layers are torch nn.Linears (layers.0 / layers.2: the released
# configs' depth 2, a GELU between). Neither the class nor DeepseekV2ForCausalLM is SupportsQuant and the class
# declares no packed_modules_mapping (Arch.quant_packed).
_DEEPSEEK_VL2_TOWER = Tower("vllm:deepseek_vl2.py", ("vision.",), packed={}, styles={
    "attn.qkv": TORCH_LINEAR, "attn.proj": TORCH_LINEAR, "attn_pool.q": TORCH_LINEAR, "attn_pool.kv": TORCH_LINEAR,
    "attn_pool.proj": TORCH_LINEAR, "mlp.fc1": COLUMN, "mlp.fc2": ROW}, torch_linear_at_tp1=("mlp.fc1", "mlp.fc2"))
ARCHITECTURES["DeepseekVLV2ForCausalLM"] = _DEEPSEEK._replace(
    source="vllm:deepseek_vl2.py", quant_packed=False, hf_to_vllm=(("prefix", "language.", "language_model."),),
    quant_prefixes=(("prefix", "vision.", ""),), towers=(
        _DEEPSEEK_VL2_TOWER, Tower("vllm:deepseek_vl2.py", ("projector.",), packed={},
                                  styles={"layers.0": TORCH_LINEAR, "layers.2": TORCH_LINEAR})))

# LightOnOCR (lightonocr.py LightOnOCRForConditionalGeneration, a Mistral3ForConditionalGeneration; registered
# 0.25-0.34, the file alike 0.33 / 0.34): transformers' LightOnOcrConfig (text_config Qwen3 in the released models);
# mistral3.py's Pixtral tower (with the quant config, up to the deepest vision_feature_layer) and
# Mistral3MultiModalProjector under the names transformers saves, model.vision_encoder / model.vision_projection,
# which the mapper moves to vision_tower / multi_modal_projector (the text model's as Mistral-3's, no scale-suffix
# renames).
ARCHITECTURES["LightOnOCRForConditionalGeneration"] = ARCHITECTURES["Mistral3ForConditionalGeneration"]._replace(
    source="vllm:lightonocr.py", towers=(_PIXTRAL._replace(roots=("model.vision_encoder.",)),
                                         _MISTRAL3_PROJECTOR._replace(roots=("model.vision_projection.",))),
    hf_to_vllm=(("prefix", "model.vision_encoder.", "vision_tower."),
                ("prefix", "model.vision_projection.", "multi_modal_projector."), _VL_TEXT[1], _VL_TEXT[0]))


# Kimi-Linear (vllm.models.kimi_k3, 0.27-0.34 alike; 0.25 / 0.26's kimi_linear.py is not compared: nvidia/model.py
# KimiLinearModel on CUDA and CPU, amd/linear.py on ROCm and XPU; the same linears): KDA layers
# (linear_attn_config.kda_layers, 1-based; kimi_gdn_linear_attn.py KimiGatedDeltaNetAttention) fuse q / k / v /
# b_proj / f_a_proj into in_proj_qkvgfab (a MergedColumnParallelLinear whose f_a shard is replicated), q / k /
# v_conv1d into conv1d (quant_config=None), f_b_proj and g_b_proj column, g_a_proj replicated, o_proj row; the
# other layers are NoPE MLA (q_proj column, kv_a_proj_with_mqa replicated, kv_b_proj column, o_proj row; on CUDA and
# CPU nvidia/mla.py's MultiHeadLatentAttention is the attention module itself); MoE layers under block_sparse_moe:
# the router a GateLinear without quant_config, sigmoid (moe_router_activation_func) grouped routing with the
# e_score_correction_bias, experts w1 / w2 / w3.
_KIMI_LINEAR_PACKED = {"gate_up_proj": ("gate_proj", "up_proj"),
                       "in_proj_qkvgfab": ("q_proj", "k_proj", "v_proj", "b_proj", "f_a_proj"),
                       "conv1d": ("q_conv1d", "k_conv1d", "v_conv1d")}
ARCHITECTURES["KimiLinearForCausalLM"] = Arch(
    "vllm:models/kimi_k3", packed=_KIMI_LINEAR_PACKED, unquantized=("block_sparse_moe.gate",),
    conv_linears=("self_attn.conv1d", "self_attn.q_conv1d", "self_attn.k_conv1d", "self_attn.v_conv1d"), mla=True,
    sliding=MODEL_WINDOW, mla_self_attention=frozenset({"cuda", "cpu"}), mla_self_attention_is_mla_attention=False,
    padded_moe_refusal={"rocm": None, "xpu": "kimi-xpu-amd-linear"},
    styles={"g_a_proj": REPLICATED, "kv_a_proj_with_mqa": REPLICATED},
    router=Router(("moe_router_activation_func", "sigmoid"), ("moe_renormalize", True), ("num_expert_group", 1), True))


# AliceAI (alice_ai.py AliceAIForCausalLM, registry.py 0.33 / 0.34; 0.34 changed only which layers fuse the shared
# expert into the ROCm AITER experts): config.layer_types picks per layer Kimi's KDA (kimi_gdn_linear_attn.py
# KimiGatedDeltaNetAttention without the full-rank gate, under linear_attn: q / k / v / b_proj / f_a_proj fused into
# in_proj_qkvgfab with f_a replicated, q / k / v_conv1d into an unquantized conv1d, f_b_proj and g_b_proj column,
# g_a_proj replicated, o_proj row) or Qwen3-Next's gated full attention (qwen3_next.py Qwen3NextAttention,
# attn_output_gate forced on); every layer an AliceAISparseMoeBlock (the router a GateLinear and shared_expert_gate a
# ReplicatedLinear, both without quant_config; Qwen2MoeMLP shared_expert; sigmoid routing with the
# e_score_correction_bias, renormalize=norm_topk_prob default True); attention residuals attn_res_proj (layers
# from 1), mlp_res_proj and the model's attnres_final.res_proj, ReplicatedLinear(hidden, 1) without quant_config;
# ParallelLMHead without quant_config; hf_to_vllm_mapper drops `mtp.`.
_ALICE_AI_RES_PROJS = ("attn_res_proj", "mlp_res_proj", "attnres_final.res_proj")
ARCHITECTURES["AliceAIForCausalLM"] = Arch(
    "vllm:alice_ai.py", packed={**LLAMA_PACKED, **_KIMI_LINEAR_PACKED}, head_quant_config=False,
    spec_prefix="mtp.", q_gate=True, sliding=MODEL_WINDOW, unquantized=_QWEN_MOE_ROUTERS,
    conv_linears=("linear_attn.conv1d", "linear_attn.q_conv1d", "linear_attn.k_conv1d", "linear_attn.v_conv1d"),
    styles={"g_a_proj": REPLICATED, **{proj: REPLICATED for proj in _ALICE_AI_RES_PROJS}},
    unquantized_layers=_ALICE_AI_RES_PROJS, replicated_shards={"in_proj_qkvgfab": ("f_a_proj",)},
    router=Router("sigmoid", ("norm_topk_prob", True), None, True))


# K2-Horizon (k2_horizon.py K2HorizonForCausalLM, registry.py 0.30-0.34; 0.33 and 0.34 alike, 0.31 / 0.32 the same
# linears, 0.30's router a ReplicatedLinear with the quant config; no transformers or vLLM config class: vLLM reads
# the keys off config.json). A layer is sparse when it is not in mlp_only_layers, num_experts > 0 and
# (index + 1) % decoder_sparse_step == 0:
# - attention: on a dense layer (or without MoVA: mova_num_experts 0) K2HorizonAttention, q / k / v -> qkv_proj
#   (QKVParallelLinear), o_proj row; on a sparse layer with MoVA K2HorizonMoVAAttention: q / k -> qk_proj, a
#   MergedColumnParallelLinear over [heads x head_dim, kv_size x TP] (kv_size a rank's KV heads, one above the KV head
#   count: load_weights repeats k_proj's heads), v_router a ReplicatedLinear WITH the quant config, v_experts.<i>
#   ColumnParallelLinears of kv_size x TP with the quant config whose weights compute_mova_v_sparse stacks itself into
#   fused_mova_impl (no scale: raw_weight_layers); with attention_gate_func a gate_proj column; the Attention takes
#   config.json's heads (attention_linear qk_proj); no per-layer window;
# - MLP: K2HorizonMLP (gate_up_proj, down_proj) on dense layers; on sparse ones K2HorizonSparseMoeBlock: the router
#   mlp.gate a GateLinear WITH the quant config (quantized_routers; bias moe_gate_bias, the e_score_correction_bias),
#   shared_experts a K2HorizonMLP, FusedMoE experts gate_proj / up_proj / down_proj, scoring router_score_func,
#   renormalize norm_topk_prob;
# - ParallelLMHead with the quant config.
# Not modelled: packed_modules_mapping holds gate_up_proj only when mlp_only_layers is set (an ignore list naming
# gate_proj / up_proj alone then leaves gate_up_proj quantized), which the packed entry here always lists.
ARCHITECTURES["K2HorizonForCausalLM"] = Arch(
    "vllm:k2_horizon.py", packed={**LLAMA_PACKED, "qk_proj": ("q_proj", "k_proj")}, sliding=MODEL_WINDOW,
    quantized_routers=("mlp.gate",), styles={"v_router": REPLICATED, "self_attn.gate_proj": COLUMN},
    attention_linear="qk_proj", kv_head_parts=("self_attn.k_proj", "self_attn.v_experts"),
    raw_weight_layers=("self_attn.v_experts",),
    router=Router(("router_score_func", "softmax"), ("norm_topk_prob", False), None, ("moe_gate_bias", True)))


# Kimi-K3 (KimiK3ForConditionalGeneration, registry.py 0.30-0.34) and Kimi-K3.1 (KimiK31ForConditionalGeneration,
# registered from 0.34 to the same class; model_type kimi_k31 reads as KimiK3Config): vllm.models.kimi_k3's
# nvidia/model.py on CUDA, XPU and CPU, amd/model.py on ROCm. The MoonViT tower and projector of Kimi-K2.5
# (kimi_k25_vit.py, _maybe_ignore_quant_config), and the registry's KimiLinearForCausalLM over text_config
# (init_vllm_registered_model: nvidia/model.py on CUDA and CPU; amd/linear.py on ROCm and XPU, its ROCm layout
# _KIMI_K3_ROCM below, its MLA attention wrapped) whose text layers hf_to_vllm_mapper moves from
# the checkpoint's language_model.layers. to language_model.model.layers.; KimiLinearModel.load_weights skips the MTP
# layers past num_hidden_layers (get_spec_layer_idx_from_weight_name: KimiK3MTP loads them). What the text model adds
# to Kimi-Linear's (0.30-0.34 alike, read in 0.33 / 0.34 and compared there; 0.34 adds the DSA layers):
# - KDA layers with linear_attn_config.use_full_rank_gate (kda.py KimiK3DeltaAttention): q / k / v / g / f_a / b
#   fused into in_proj_qkvgfab (load_weights' stacked_params_mapping: g_proj shard 3, b_proj 5; f_a replicated),
#   f_b_proj column, o_proj row, q / k / v_conv1d into an unquantized conv1d; no g_a_proj / g_b_proj.
# - MLA with q_lora_rank (mla.py MultiHeadLatentAttention, the attention module itself): with mla_use_output_gate
#   q_a_proj / kv_a_proj_with_mqa / g_proj fused into fused_qkv_a_g_proj (layers/linear.py
#   KimiK3MergedQKVGateLinear: latents replicated, gate split over TP), else fused_qkv_a_proj (disable_tp);
#   q_b_proj / kv_b_proj column, o_proj row.
# - DSA layers (0.34, text_config.dsa_config.dsa_layers; dsa.py KimiK3DSAAttention, attention self_attn.mla_attn.
#   mla_attn, sparse): fused_qkv_a_proj (disable_tp) and a g_proj column of their own; the indexer's
#   indexer.wq_b -> dsa_indexer.wq_index (quantized ReplicatedLinear), indexer.wk + weights_proj ->
#   dsa_indexer.wkv_index (MergedColumnParallelLinear, quant_config=None, disable_tp).
# - Latent MoE (KimiMoE, routed_expert_hidden_size): routed_expert_down_proj / routed_expert_up_proj quantized
#   ReplicatedLinears around FusedMoE experts w1 / w2 / w3 of the latent width, activation config.hidden_act
#   ("situ": not judged); the router a GateLinear without quant_config, shared experts a KimiMLP.
# - Attention residuals (attn_res_block_size): self_attention_res_proj, mlp_res_proj and the model's
#   output_attn_res_proj, ReplicatedLinear(hidden, 1, quant_config=None).
_KIMI_K3_PACKED = {"gate_up_proj": ("gate_proj", "up_proj"),
                   "in_proj_qkvgfab": ("q_proj", "k_proj", "v_proj", "g_proj", "f_a_proj", "b_proj"),
                   "conv1d": ("q_conv1d", "k_conv1d", "v_conv1d"),
                   "fused_qkv_a_g_proj": ("q_a_proj", "kv_a_proj_with_mqa", "g_proj"),
                   "wkv_index": ("wk", "weights_proj")}
_KIMI_K3_RES_PROJS = ("self_attention_res_proj", "mlp_res_proj", "output_attn_res_proj")
_KIMI_K3 = Arch(
    "vllm:models/kimi_k3", packed=_KIMI_K3_PACKED, unquantized=("block_sparse_moe.gate",), mla=True,
    conv_linears=("self_attn.conv1d", "self_attn.q_conv1d", "self_attn.k_conv1d", "self_attn.v_conv1d"),
    styles={"fused_qkv_a_g_proj": "KimiK3MergedQKVGateLinear",
            "self_attn.fused_qkv_a_proj": "MergedColumnParallelLinear", "indexer.wq_b": REPLICATED,
            "routed_expert_down_proj": REPLICATED, "routed_expert_up_proj": REPLICATED,
            **{proj: REPLICATED for proj in _KIMI_K3_RES_PROJS}},
    unquantized_layers=("indexer.wkv_index", *_KIMI_K3_RES_PROJS),
    disable_tp=("indexer.wkv_index", "self_attn.fused_qkv_a_proj"),
    packed_unless={"fused_qkv_a_g_proj": "indexer.wq_b"}, sparse_marker="indexer.wq_b",
    replicated_shards={"fused_qkv_a_g_proj": ("q_a_proj", "kv_a_proj_with_mqa"), "in_proj_qkvgfab": ("f_a_proj",)},
    spec_layers="num_nextn_predict_layers", sliding=MODEL_WINDOW, moe_activation=("hidden_act", "silu"),
    mla_self_attention=frozenset({"cuda", "cpu"}), mla_self_attention_is_mla_attention=False,
    padded_moe_refusal={"rocm": None}, towers=(_MOONVIT, _KIMI_K25_PROJECTOR),
    router=ARCHITECTURES["KimiLinearForCausalLM"].router, hf_to_vllm=_KIMI_K25_NAMES,
    vllm_names=(("language_model.layers.", "language_model.model.layers."),
                (".self_attn.indexer.wq_b", ".self_attn.dsa_indexer.wq_index"),
                (".self_attn.indexer.", ".self_attn.dsa_indexer."),
                ("mm_projector.proj.0", "mm_projector.linear_1"), ("mm_projector.proj.2", "mm_projector.linear_2")))
# Kimi-K3 on ROCm from 0.33 (kimi-k3-rocm; vllm.models.kimi_k3's __init__ resolves amd/model.py there, whose text
# model is amd/linear.py's KimiLinearForCausalLM; 0.32's amd/linear.py built q_a_proj / kv_a_proj_with_mqa apart and
# g_proj a column of its own): the same tower, projector and names as nvidia/model.py, and what amd/linear.py builds
# otherwise:
# - no packed_modules_mapping anywhere (amd/model.py is SupportsQuant without one, amd/linear.py no SupportsQuant):
#   the quant config's lists are matched against each fused layer's own name;
# - MLA with q_lora_rank and mla_use_output_gate: q_a_proj / kv_a_proj_with_mqa / g_proj fused into
#   `fused_qkv_a_proj` (KimiK3MergedQKVGateLinear, latents replicated, gate split; load_weights' g_proj shard 2);
#   without the gate a MergedColumnParallelLinear over the two latents (disable_tp), not modelled here;
# - no DSA layers (amd/linear.py has no KimiK3DSAAttention: a Kimi-K3.1 DSA layer builds as a dense MLA layer, and
#   its indexer's tensors have no parameter: load_weights' params_dict[name] fails on them, Arch.unloadable);
# - latent MoE (KimiMoE): routed_expert_down_proj a ReplicatedLinear with the quant config's
#   online_quantization_config (0.34; None in 0.33) -- no quant method for a stored format: "the checkpoint stores
#   this layer in BF16" -- and routed_expert_up_proj with quant_config=None (a ColumnParallelLinear with
#   gather_output where TP > 1 divides hidden_size, shared experts are set and routed_scaling_factor is 1.0, else
#   replicated; the column case is not modelled). Their FP8 scales have no parameter, so load_weights'
#   params_dict[name] fails on them: an FP8 weight there is a load failure.
_KIMI_K3_ROCM_PACKED = {**{fused: parts for fused, parts in _KIMI_K3_PACKED.items()
                           if fused not in ("fused_qkv_a_g_proj", "wkv_index")},
                        "fused_qkv_a_proj": ("q_a_proj", "kv_a_proj_with_mqa", "g_proj")}
_KIMI_K3_ROCM = _KIMI_K3._replace(
    source="vllm:models/kimi_k3/amd", packed=_KIMI_K3_ROCM_PACKED, quant_packed=False,
    styles={**{tail: style for tail, style in _KIMI_K3.styles.items()
               if tail not in ("fused_qkv_a_g_proj", "self_attn.fused_qkv_a_proj", "indexer.wq_b")},
            "self_attn.fused_qkv_a_proj": "KimiK3MergedQKVGateLinear"},
    unquantized_layers=("routed_expert_down_proj", "routed_expert_up_proj", *_KIMI_K3_RES_PROJS),
    disable_tp=(), packed_unless={}, sparse_marker=None, unloadable=(".self_attn.indexer.",),
    replicated_shards={"fused_qkv_a_proj": ("q_a_proj", "kv_a_proj_with_mqa"), "in_proj_qkvgfab": ("f_a_proj",)},
    vllm_names=tuple(pair for pair in _KIMI_K3.vllm_names if "indexer" not in pair[0]))
_KIMI_K3 = _KIMI_K3._replace(rocm_layout=("kimi-k3-rocm", _KIMI_K3_ROCM))
ARCHITECTURES.update({"KimiK3ForConditionalGeneration": _KIMI_K3, "KimiK31ForConditionalGeneration": _KIMI_K3})


class CacheDTypeRule(NamedTuple):
    """One line of a model's verify_and_update_config (model_executor/models/config.py MODELS_CONFIG_MAP) that
    rewrites --kv-cache-dtype before any layer is built."""

    given: str                        # the --kv-cache-dtype it rewrites
    becomes: str
    cuda_family: int | None = None    # only on this CUDA capability family (100: SM10x)
    change: str | None = None         # the WHEEL_CHANGES key of the release that brought it


# DeepseekV32ForCausalLM: bfloat16 -> auto (every release 0.25-0.34); GlmMoeDsaForCausalLM: auto -> fp8_e4m3 on SM10x
# ("Using fp8 kv-cache for GlmMoeDsaForCausalLM on SM10x", from 0.32); Glm5NextForCausalLM / ForConditionalGeneration
# (Glm5NextModelConfig): auto -> fp8 on SM10x where index_topk is set ("Using fp8 KV cache for GLM-5.3-Flash", from
# 0.33; transformers' Glm5NextTextConfig sets index_topk 2048 unless config.json gives another).
_GLM5_NEXT_CACHE = (CacheDTypeRule("auto", "fp8", 100, "glm5next-sm100-fp8-kv"),)
MODEL_CACHE_DTYPE: dict[str, tuple[CacheDTypeRule, ...]] = {
    "DeepseekV32ForCausalLM": (CacheDTypeRule("bfloat16", "auto"),),
    # config.py MistralLarge4ForCausalLM (0.34): an explicit bfloat16 is auto. Not modelled: auto -> fp8_ds_mla (ROCm
    # fp8) when params.json's dsa sets fp8_kv_cache.
    "MistralLarge4ForCausalLM": (CacheDTypeRule("bfloat16", "auto"),),
    "GlmMoeDsaForCausalLM": (CacheDTypeRule("auto", "fp8_e4m3", 100, "glm5-sm100-fp8-kv"),),
    "Glm5NextForCausalLM": _GLM5_NEXT_CACHE,
    "Glm5NextForConditionalGeneration": _GLM5_NEXT_CACHE,
}


def model_cache_dtype(architectures: tuple[str, ...], requested: str, ctx) -> str:
    """--kv-cache-dtype after the model's verify_and_update_config (ModelConfig / VllmConfig read the first listed
    architecture of MODELS_CONFIG_MAP)."""
    for rule in MODEL_CACHE_DTYPE.get(architectures[0] if architectures else "", ()):
        family = rule.cuda_family is None or (ctx.kind == "cuda" and (ctx.cc or 0) // 10 * 10 == rule.cuda_family)
        if rule.given == requested and family and (rule.change is None or ctx.profile.has(rule.change)):
            return rule.becomes
    return requested


# Nemotron-H (nemotron_h.py, 0.25-0.34): one mixer per layer by hybrid_override_pattern — Mamba2 (in_proj merged
# over [I, I, GN, GN, H], conv1d unquantized, out_proj row), attention (mixer.q/k/v_proj -> qkv_proj, its
# Attention `mixer.attn`), a non-gated relu2 MLP (up_proj column, down_proj row) or a MoE (router mixer.gate a
# GateLinear without quant_config, sigmoid + e_score_correction_bias grouped routing, experts up / down only with
# relu2_no_mul, shared_experts, latent projections replicated); `mtp.` dropped by hf_to_vllm_mapper.
ARCHITECTURES["NemotronHForCausalLM"] = Arch(
    "vllm:nemotron_h.py", packed=_QKV_ONLY, spec_prefix="mtp", conv_linears=("mixer.conv1d",),
    unquantized=("mixer.gate",), styles={"mixer.fc1_latent_proj": REPLICATED, "mixer.fc2_latent_proj": REPLICATED},
    router=Router("sigmoid", ("norm_topk_prob", True), ("n_group", 1), True), moe_activation="relu2_no_mul",
    gated_experts=False, mamba_in_proj="mixer.in_proj", sliding=MODEL_WINDOW,
    hf_to_vllm=(("substr", "A_log", "A"), ("substr", "embeddings", "embed_tokens"), ("prefix", "backbone", "model")))
# Nemotron-H Puzzle (registry.py 0.25-0.34: nemotron_h.py's NemotronHForCausalLM; NVIDIA's remote-code config,
# model_type nemotron_h_puzzle): Nemotron-H's layers with each layer's block keys from config.block_configs (the MLP's
# intermediate_size, the MoE's expert count and widths: get_nemotron_h_config_for_layer), which fp8check reads off the
# tensors; the attention and Mamba layers take the top-level keys.
ARCHITECTURES["NemotronHPuzzleForCausalLM"] = ARCHITECTURES["NemotronHForCausalLM"]

# NVIDIA's Nemotron VL (nano_nemotron_vl.py NemotronH_Nano_VL_V2, the class of NemotronH_Nano_VL_V2,
# NemotronH_Nano_Omni_Reasoning_V3, NemotronH_Super_Omni_Reasoning_V3 and NemotronH_Omni_Reasoning_V3; remote-code
# config, llm_config read as text_config): the text model init_vllm_registered_model(hf_config=config.text_config)
# under language_model (Nemotron-H's NemotronHForCausalLM; its packed_modules_mapping), whose own loader applies
# nemotron_h.py's mapper after load_weights strips "language_model." (so "language_model.mtp." is dropped there);
# the class's hf_to_vllm_mapper renames language_model.backbone -> language_model.model. The RADIO tower
# (radio.py RadioModel(config=...), no quant_config: unquantized) is vision_model; mlp1 an nn.Sequential of torch
# nn.Linears (1, 3). radio.py's tree changed in 0.34 (radio-transformers-tree): 0.33 builds RadioInternVisionModel
# under vision_model.model (load_weights: radio_model.model.blocks.N -> model.encoder.layers.N, patch_generator kept),
# intern_vit.py's attention (attn.qkv QKVParallelLinear, attn.proj row) and InternMLP (mlp.fc1 column, mlp.fc2 row);
# 0.34 mirrors transformers' RadioModel (hf_to_vllm_mapper: radio_model.model.blocks -> encoder.layer, .attn. ->
# .attention., patch_generator.embedder -> embeddings.patch_projection, video_embedder -> video_patch_projection). The
# patch embedders are ViTPatchLinear, an nn.Linear. Checkpoints keep NVIDIA's remote-code names
# (vision_model.radio_model.model.blocks.N.attn.qkv, the QKVParallelLinear's one stored tensor: no packed entry, as in
# the class's packed_modules_mapping, Nemotron-H's); the tower's vision heads come from args.model
# (local.RADIO_VIT_SIZES).
_RADIO_STORED = "vision_model.radio_model.model."
_RADIO = Tower("vllm:radio.py", ("vision_model.",), packed={}, vision_heads=True, quantized=False,
               styles={"attention.qkv": "QKVParallelLinear", "attention.proj": ROW, "mlp.fc1": COLUMN, "mlp.fc2": ROW,
                       "embeddings.patch_projection": TORCH_LINEAR,
                       "embeddings.video_patch_projection": TORCH_LINEAR},
               renames=((f"{_RADIO_STORED}blocks.", "vision_model.encoder.layer."), (".attn.", ".attention."),
                        (f"{_RADIO_STORED}patch_generator.embedder", "vision_model.embeddings.patch_projection"),
                        (f"{_RADIO_STORED}patch_generator.video_embedder",
                         "vision_model.embeddings.video_patch_projection")))
_RADIO_INTERN = Tower("vllm:radio.py", ("vision_model.",), packed={}, vision_heads=True,
                      quantized=False, styles={"attn.qkv": "QKVParallelLinear", "attn.proj": ROW, "mlp.fc1": COLUMN,
                                               "mlp.fc2": ROW, "patch_generator.embedder": TORCH_LINEAR,
                                               "patch_generator.video_embedder": TORCH_LINEAR},
                      renames=((f"{_RADIO_STORED}blocks.", "vision_model.model.encoder.layers."),
                               (_RADIO_STORED, "vision_model.model.")))
_NEMOTRON_VL_MLP1 = Tower("vllm:nano_nemotron_vl.py", ("mlp1.",), packed={},
                          styles={"mlp1.1": TORCH_LINEAR, "mlp1.3": TORCH_LINEAR})
# An Omni checkpoint's sound_config builds parakeet.py's ProjectedParakeet (no quant config): transformers'
# ParakeetEncoder as sound_encoder.encoder and ParakeetProjection as sound_encoder.projection (its load_weights reads
# the checkpoint's sound_projection.* there), every linear a torch nn.Linear.
_PARAKEET = Tower("vllm:parakeet.py", ("sound_encoder.", "sound_projection."), packed={},
                  styles={leaf: TORCH_LINEAR for leaf in ("q_proj", "k_proj", "v_proj", "o_proj", "relative_k_proj",
                                                          "linear1", "linear2", "subsampling.linear")},
                  renames=(("sound_projection.", "sound_encoder.projection."),))
_NEMOTRON_NANO_VL = Arch(
    "vllm:nano_nemotron_vl.py", packed=_QKV_ONLY, towers=(_RADIO, _NEMOTRON_VL_MLP1, _PARAKEET),
    registered_text_model=True,
    spec_prefix="language_model.mtp",
    hf_to_vllm=(("prefix", "language_model.backbone", "language_model.model"),),
    fields_before=(("radio-transformers-tree", {"towers": (_RADIO_INTERN, _NEMOTRON_VL_MLP1, _PARAKEET)}),))
ARCHITECTURES.update({arch: _NEMOTRON_NANO_VL for arch in (
    "NemotronH_Nano_VL_V2", "NemotronH_Nano_Omni_Reasoning_V3", "NemotronH_Super_Omni_Reasoning_V3",
    "NemotronH_Omni_Reasoning_V3")})

# Llama-3.1-Nemotron-Nano-VL (nemotron_vl.py LlamaNemotronVLChatModel, registered 0.25-0.34, unchanged 0.33 -> 0.34;
# remote-code config, llm_config read as text_config): the vision model is AutoModel.from_config(config.vision_config,
# trust_remote_code) -- NVIDIA's remote-code RADIOModel (hf_model.py: timm's VisionTransformer under
# radio_model.model, blocks.N.attn.qkv / attn.proj / mlp.fc1 / mlp.fc2 and the patch embedder, all torch nn.Linears;
# no quant config reaches it), mlp1 LayerNorm / Linear / GELU / Linear (torch nn.Linears), and the text model of
# text_config's class (Llama) under language_model, saved as vLLM names it. The class's hf_to_vllm_mapper only drops
# the input conditioner's norm_mean / norm_std (no linear).
_RADIO_REMOTE = Tower("vllm:nemotron_vl.py", ("vision_model.",), packed={},
                      styles={leaf: TORCH_LINEAR for leaf in ("attn.qkv", "attn.proj", "mlp.fc1", "mlp.fc2",
                                                              "patch_generator.embedder",
                                                              "patch_generator.video_embedder")})
ARCHITECTURES["Llama_Nemotron_Nano_VL"] = Arch(
    "vllm:nemotron_vl.py", registered_text_model=True,
    towers=(_RADIO_REMOTE, _NEMOTRON_VL_MLP1._replace(source="vllm:nemotron_vl.py")))

# Granite-4.0-H / Granite-4.0 (granitemoehybrid.py GraniteMoeHybridForCausalLM, registered in every release; 0.33 ->
# 0.34 only a loop variable): a Mamba2 or attention mixer per layer by config.layer_types. The Mamba layer is
# `mamba` = MambaMixer2(prefix=f"{prefix}.mixer") (mamba_mixer2.py: in_proj merged over [I, I, GN, GN, H], conv1d a
# ColumnParallelLinear without quant_config, out_proj row), so the quant config's lists are matched against
# `mixer.*` while the module and the checkpoint say `mamba.*`. Attention q / k / v -> qkv_proj, head size
# hidden_size // heads. Each layer's MoE is granitemoe.py's GraniteMoeMoE: the router `block_sparse_moe.gate` a
# GateLinear without quant_config (load_weights renames router.layer -> gate: vllm_names; no list reaches it), softmax
# top-k renormalized; the experts loaded per expert (get_expert_mapping: block_sparse_moe.experts.E.{gate,up,down}_proj,
# as llm-compressor >= 0.12 writes them) or stacked and fused (input_linear / output_linear weight and weight_scale,
# sliced per expert and chunked into w1 / w3: llm-compressor <= 0.11's to_3d_expert). shared_mlp (granitemoeshared.py
# GraniteMoeSharedMLP): input_linear a MergedColumnParallelLinear over
# two shared_intermediate_size halves stored as one tensor, output_linear row.
_GRANITE_SHARED_MLP = {"shared_mlp.input_linear": "MergedColumnParallelLinear", "shared_mlp.output_linear": ROW}
_GRANITE_ROUTER = (".block_sparse_moe.router.layer", ".block_sparse_moe.gate")
ARCHITECTURES["GraniteMoeHybridForCausalLM"] = Arch(
    "vllm:granitemoehybrid.py", packed={**_QKV_ONLY, "conv1d": ("conv1d",), "in_proj": ("in_proj",),
                                        "input_linear": ("input_linear",)},
    styles=_GRANITE_SHARED_MLP, unquantized=("block_sparse_moe.router.layer",),
    conv_linears=("mamba.conv1d",), mamba_in_proj="mamba.in_proj", sliding=MODEL_WINDOW,
    fused_stacked_experts=("block_sparse_moe", "input_linear", "output_linear"),
    quant_prefixes=(("substr", ".mamba.", ".mixer."),), vllm_names=(_GRANITE_ROUTER,))
# Granite-3.x (granite.py GraniteForCausalLM, registered in every release, unchanged 0.33 -> 0.34): Llama's names and
# fusions; the multipliers add no linear; a sliding window where config.layer_types says sliding_attention
# (granite_layer_attn_params).
ARCHITECTURES["GraniteForCausalLM"] = Arch("vllm:granite.py")
# Granite-3.0 MoE (granitemoe.py GraniteMoeForCausalLM) and PowerMoE / Granite-3.x MoE with a shared MLP
# (granitemoeshared.py GraniteMoeSharedForCausalLM), registered in every release, unchanged 0.33 -> 0.34: only q / k / v
# packed, GraniteMoeAttention's head size hidden_size // heads, the router block_sparse_moe.gate a GateLinear without
# quant_config (GraniteMoeModel's mapper: .router.layer.weight -> .gate.weight; vllm_names), the experts one FusedMoE
# (softmax top-k renormalized; the mapper's moe.input_linear.weight -> moe.experts.gate_up_proj loads experts stored
# stacked and fused, routed_experts.py's fused mapping); the shared MLP as Granite-4.0-H's.
ARCHITECTURES["GraniteMoeForCausalLM"] = Arch(
    "vllm:granitemoe.py", packed=_QKV_ONLY, unquantized=("block_sparse_moe.router.layer",), sliding=LAYER_TYPES,
    fused_stacked_experts=("block_sparse_moe", "input_linear", "output_linear"),
    vllm_names=(_GRANITE_ROUTER,))
ARCHITECTURES["GraniteMoeSharedForCausalLM"] = ARCHITECTURES["GraniteMoeForCausalLM"]._replace(
    source="vllm:granitemoeshared.py", styles=_GRANITE_SHARED_MLP)
# Granite's sliding-window classes (registered 0.29-0.34; registry.py builds GraniteSWAForCausalLM with granite.py's
# GraniteForCausalLM, GraniteMoeSWAForCausalLM with granitemoeshared.py's GraniteMoeSharedForCausalLM): their configs'
# layer_types give the sliding layers config.sliding_window and every layer a per-head sink (granite.py
# granite_layer_attn_params: attention_sinks, default true where layer_types is set; the checkpoints hold
# self_attn.sinks). transformers' GraniteMoeSWA saves the router as block_sparse_moe.router (GraniteMoeModel's mapper:
# .router.weight -> .gate.weight).
_GRANITE_SWA_ROUTER = (".block_sparse_moe.router", ".block_sparse_moe.gate")
ARCHITECTURES["GraniteSWAForCausalLM"] = ARCHITECTURES["GraniteForCausalLM"]
ARCHITECTURES["GraniteMoeSWAForCausalLM"] = ARCHITECTURES["GraniteMoeSharedForCausalLM"]._replace(
    unquantized=("block_sparse_moe.router.layer", "block_sparse_moe.router"),
    vllm_names=(_GRANITE_ROUTER, _GRANITE_SWA_ROUTER))

# LFM2 (lfm2.py Lfm2ForCausalLM, registered 0.30-0.34, 0.33 -> 0.34 unchanged): per config.layer_types an attention
# layer ("full_attention") or a short-convolution one, each with a feed_forward Lfm2MLP (w1 / w3 -> w13 merged, w2
# row). The class's hf_to_vllm_mapper renames the checkpoint's `.conv.` to `.short_conv.` (vLLM's module names, and
# what the quant config's lists are matched against): ShortConv (layers/mamba/short_conv.py, 0.33 / 0.34 alike) builds
# `conv` (prefix conv1d; the stored conv.conv [dim, 1, L_cache]) a ColumnParallelLinear without quant_config, in_proj
# a MergedColumnParallelLinear over [dim] * 3 (B, C, x) from one stored tensor, out_proj row. Lfm2Attention: q / k / v
# -> qkv_proj, out_proj row, head size hidden_size // heads; its Attention is built without the quant config (no KV
# cache method from the format) and without a window.
_SHORT_CONV: dict[str, Any] = dict(conv_linears=("conv.conv",), equal_parts={"conv.in_proj": 3},
                   hf_to_vllm=(("substr", ".conv.", ".short_conv."),))
_LFM2_PACKED = {**_QKV_ONLY, "w13": ("w1", "w3"), "in_proj": ("in_proj",)}
ARCHITECTURES["Lfm2ForCausalLM"] = Arch("vllm:lfm2.py", packed=_LFM2_PACKED, attention_quant_config=False,
                                        sliding=MODEL_WINDOW, **_SHORT_CONV)
# LFM2-MoE (lfm2_moe.py Lfm2MoeForCausalLM, registered 0.30-0.34, 0.33 -> 0.34 unchanged): LFM2's layers; the
# feed_forward below num_dense_layers an Lfm2MoeMlp (w13 / w2), the others Lfm2MoeSparseMoeBlock: the router
# feed_forward.gate a GateLinear WITH the quant config (quantized unless the format's lists name it), the experts one
# FusedMoE loading feed_forward.experts.E.{w1,w2,w3} (ckpt_names), sigmoid scores over one group (use_grouped_topk),
# renormalize=config.norm_topk_prob, an e_score_correction_bias (the stored expert_bias) when config.use_expert_bias
# (both true in Lfm2MoeConfig by default).
ARCHITECTURES["Lfm2MoeForCausalLM"] = Arch(
    "vllm:lfm2_moe.py", packed=_LFM2_PACKED, quantized_routers=("feed_forward.gate",), attention_quant_config=False,
    router=Router("sigmoid", ("norm_topk_prob", True), 1, ("use_expert_bias", True, True)), sliding=MODEL_WINDOW,
    **_SHORT_CONV)
# LFM3 (lfm3.py Lfm3ForCausalLM, registered from 0.34): LFM2's short-convolution layers and MLP (the conv width
# hidden_size), attention layers "full_attention" / "sliding_attention" (config.sliding_window on the latter) with
# q / k / v -> qkv_proj, o_proj row, head_dim from the config, and with use_attention_gate a per-head output gate
# self_attn.gate_proj: a ColumnParallelLinear of num_attention_heads rows WITH the quant config. Its Attention takes
# the quant config (unlike LFM2's).
ARCHITECTURES["Lfm3ForCausalLM"] = Arch("vllm:lfm3.py", packed=_LFM2_PACKED, styles={"self_attn.gate_proj": COLUMN},
                                        **_SHORT_CONV)
# LFM2-VL (lfm2_vl.py Lfm2VLForConditionalGeneration, registered as Lfm2VlForConditionalGeneration 0.25-0.34;
# lfm2_vl.py / lfm2_siglip2.py alike 0.33 -> 0.34): transformers' Lfm2VlConfig; the language model of text_config's
# class (lfm2.py) under language_model, built with the prefix language (maybe_prefix(prefix, "language")), which the
# quant config's lists, mapped to language_model.*, are matched against: a list entry naming a text layer never
# matches. lfm2_siglip2.py's Siglip2Model with the quant config (self_attn q / k / v -> qkv_proj over the vision
# heads, out_proj row, mlp fc1 column / fc2 row), its embeddings.patch_embedding a ReplicatedLinear without one;
# Lfm2VLMultiModalProjector's linear_1 / linear_2 ReplicatedLinears without one. The text model's loader renames the
# stored .conv. to .short_conv. (lfm2.py's own mapper, after the class's: Arch.vllm_names), which the lists, mapped by
# the class's mapper alone, keep: no matter, as no text layer's prefix is matched by them.
_LFM2_VL_ROOT = "model.vision_tower.vision_model."
_LFM2_VL = Arch("vllm:lfm2_vl.py", registered_text_model=True,
                quant_prefixes=(("prefix", "language_model.", "language."),),
                hf_to_vllm=(_VL_TEXT[1], _VL_TEXT[0], ("prefix", "model.vision_tower.", "vision_tower."),
                            ("prefix", "model.multi_modal_projector.", "multi_modal_projector."),
                            *_SHORT_CONV["hf_to_vllm"]), vllm_names=((".conv.", ".short_conv."),), towers=(
    Tower("vllm:lfm2_siglip2.py", (f"{_LFM2_VL_ROOT}embeddings.",), quantized=False,
          styles={"patch_embedding": REPLICATED}),
    Tower("vllm:lfm2_siglip2.py", (_LFM2_VL_ROOT,), vision_heads=True),
    Tower("vllm:lfm2_vl.py", ("model.multi_modal_projector.",), packed={}, quantized=False,
          styles={"linear_1": REPLICATED, "linear_2": REPLICATED})))
ARCHITECTURES["Lfm2VlForConditionalGeneration"] = _LFM2_VL

# Mamba-1 mixers (layers/mamba/mamba_mixer.py MambaMixer, 0.25-0.34; 0.33 -> 0.34 only LoRA's row padding): the mixer
# takes no quant_config at all, so every linear in it is unquantized whatever the format says (an FP8 weight there
# fails the load): in_proj a MergedColumnParallelLinear over [I, I] (x and the gate, one stored tensor), x_proj a
# RowParallelLinear (dt rank + 2 x state), dt_proj a ColumnParallelLinear, out_proj row, conv1d a ColumnParallelLinear
# ([I, 1, kernel] stored). `leaf` is the mixer's attribute in the model file.
def _mamba1_mixer(leaf: str) -> dict[str, Any]:
    return dict(conv_linears=(f"{leaf}.conv1d",), equal_parts={f"{leaf}.in_proj": 2},
                styles={f"{leaf}.in_proj": "MergedColumnParallelLinear", f"{leaf}.x_proj": ROW,
                        f"{leaf}.dt_proj": COLUMN, f"{leaf}.out_proj": ROW},
                unquantized_layers=tuple(f"{leaf}.{p}" for p in ("in_proj", "x_proj", "dt_proj", "out_proj")))


# Falcon-H1 (falcon_h1.py FalconH1ForCausalLM, registered in every release, unchanged 0.33 -> 0.34): every layer a
# FalconH1ParallelHybrid, attention and a Mamba2 mixer side by side, then a feed_forward MLP (gate_up_proj merged,
# down_proj row). The attention branch `self_attn` is built with the layer's own prefix (its qkv_proj, o_proj and
# Attention `attn` are model.layers.i.qkv_proj ... to the quant config's lists), head size config.head_dim or
# hidden_size // heads, the Attention with the quant config and no window. The SSM branch is `mamba`, its
# MambaMixer2 `mamba.mamba` (hf_to_vllm_mapper: "mamba" -> "mamba.mamba"; mamba_mixer2.py: in_proj merged over
# [I, I, GN, GN, H] with the quant config, conv1d unquantized, out_proj row), built under the prefix
# model.{L + i}.mixer (offset_prefix). The LM head is built without quant_config.
ARCHITECTURES["FalconH1ForCausalLM"] = Arch(
    "vllm:falcon_h1.py", conv_linears=("mamba.conv1d",), mamba_in_proj="mamba.in_proj", head_quant_config=False,
    sliding=MODEL_WINDOW, hf_to_vllm=(("substr", "A_log", "A"), ("substr", "mamba", "mamba.mamba")),
    quant_prefixes=(("substr", ".self_attn.", "."),), offset_prefix=("mamba.mamba", "mixer"))
# Mamba / Falcon-Mamba (mamba.py MambaForCausalLM, registered in every release for both names, unchanged 0.33 -> 0.34):
# backbone.layers.i.mixer a MambaMixer (_mamba1_mixer: no quant config), the LM head built without quant_config, the
# token table backbone.embeddings: vLLM quantizes no layer of it, so an FP8 checkpoint is one it loads unscaled.
ARCHITECTURES["MambaForCausalLM"] = Arch("vllm:mamba.py", packed={}, head_quant_config=False, sliding=MODEL_WINDOW,
                                         hf_to_vllm=(("substr", ".A_log", ".A"),), **_mamba1_mixer("mixer"))
ARCHITECTURES["FalconMambaForCausalLM"] = ARCHITECTURES["MambaForCausalLM"]
# Mamba-2 (mamba2.py Mamba2ForCausalLM, registered in every release; 0.33 -> 0.34 only a loop variable; also Codestral
# Mamba from Mistral's params.json, model_type mamba): attention-free, no packed_modules_mapping,
# backbone.layers.i.mixer a MambaMixer2 with the quant config (in_proj merged over [I, I, GN, GN, H], conv1d
# unquantized, out_proj row; the sizes from Mamba2Config's num_heads / head_dim / n_groups / state_size), the LM head
# built without quant_config.
ARCHITECTURES["Mamba2ForCausalLM"] = Arch("vllm:mamba2.py", packed={}, head_quant_config=False, sliding=MODEL_WINDOW,
                                          conv_linears=("mixer.conv1d",), mamba_in_proj="mixer.in_proj",
                                          hf_to_vllm=(("substr", ".A_log", ".A"),))
# OLMo Hybrid (olmo_hybrid.py OlmoHybridForCausalLM, registered in every release, unchanged 0.33 -> 0.34, as its
# layers/mamba/gdn/olmo_gdn_linear_attn.py): per config.layer_types a gated-delta-net layer `linear_attn`
# (OlmoHybridGatedDeltaNetAttention: q / k / v / g -> in_proj_qkvg merged over [K, K, V, V], b_proj and a_proj
# ColumnParallelLinears of num_v_heads rows, all with the quant config; q_conv1d / k_conv1d / v_conv1d loaded into
# one conv1d without quant_config (OlmoHybridModel's mapper stacks them), o_proj row; no Attention) or full attention
# (q / k / v -> qkv_proj, head size hidden_size // heads, its Attention with the quant config and no window), each
# with a gate_up_proj / down_proj MLP. in_proj_qkvg is listed before qkv_proj: a layer holding g_proj fuses four.
ARCHITECTURES["OlmoHybridForCausalLM"] = Arch(
    "vllm:olmo_hybrid.py",
    packed={"in_proj_qkvg": ("q_proj", "k_proj", "v_proj", "g_proj"), **LLAMA_PACKED,
            "conv1d": ("q_conv1d", "k_conv1d", "v_conv1d")},
    styles={"linear_attn.b_proj": COLUMN, "linear_attn.a_proj": COLUMN},
    conv_linears=("linear_attn.conv1d", "linear_attn.q_conv1d", "linear_attn.k_conv1d", "linear_attn.v_conv1d"),
    own_widths=("linear_attn.in_proj_qkvg",), sliding=MODEL_WINDOW)
# Jamba (jamba.py JambaForCausalLM, registered in every release, unchanged 0.33 -> 0.34): per config.layers_block_type
# a Mamba-1 layer (`mamba` = MambaMixer(prefix=f"{prefix}.mixer"), no quant_config: _mamba1_mixer) or an attention
# layer (its q / k / v -> qkv_proj and o_proj sit on the decoder layer itself: hf_to_vllm_mapper drops `.self_attn.`;
# head size hidden_size // heads; Attention `attn` built without quant_config, so no KV cache method, and without a
# window); per config.layers_num_experts a dense feed_forward (llama.py's LlamaMLP: gate_up_proj, down_proj) or
# JambaMoE (the router feed_forward.router a GateLinear without quant_config, the experts one FusedMoE of softmax
# top-k, renormalize=False, intermediate_size wide). The LM head is built without quant_config.
ARCHITECTURES["JambaForCausalLM"] = Arch(
    "vllm:jamba.py", packed={**LLAMA_PACKED, "in_proj": ("in_proj",)}, unquantized=("feed_forward.router",),
    router=Router(renormalize=False), head_quant_config=False, attention_quant_config=False, sliding=MODEL_WINDOW,
    hf_to_vllm=(("substr", ".self_attn.", "."), ("substr", ".A_log", ".A")), **_mamba1_mixer("mamba"))
# IQuest-Coder-V1-Loop (iquest_loopcoder.py IQuestLoopCoderForCausalLM, registered 0.25-0.34; 0.33 -> 0.34 only an
# assertion's wording; remote-code config): Llama's names and fusions, head size hidden_size // heads, every layer run
# config.loop_num times (loop_attentions: an Attention per loop, with the quant config). Loops past the first mix the
# global and local attention by a per-layer gate: gate_projections.i (stored as its bare [heads, head_dim] weight and
# bias, load_weights' gate_projections.i.gate_proj) a ColumnParallelLinear of num_attention_heads rows with the quant
# config (quant_prefixes; the harness's vllm_names). The class declares no packed_modules_mapping (load_weights'
# stacked_params_mapping fuses q / k / v and gate / up): the lists are matched against the fused names (quant_packed).
ARCHITECTURES["IQuestLoopCoderForCausalLM"] = Arch(
    "vllm:iquest_loopcoder.py", sliding=MODEL_WINDOW, loop_attentions=True, quant_packed=False,
    quant_prefixes=(("regex", r"^(.*\.gate_projections\.\d+)\.", r"\1.gate_proj."),),
    vllm_names=((r"re:^(.*\.gate_projections\.\d+)$", r"\1.gate_proj"),))
# Param2-MoE (param2moe.py Param2MoEForCausalLM, registered 0.25-0.34, 0.33 / 0.34 alike; remote-code config, model_type
# param2moe): Ling's checkpoint names, which Param2MoEModel's hf_to_vllm_mapper renames to vLLM's (word_embeddings ->
# embed_tokens, attention.query_key_value -> self_attn.qkv_proj, attention.dense -> self_attn.o_proj, the router's
# expert_bias -> e_score_correction_bias); the mapper is the inner model's (mapper_on_inner_model: the quant config's
# lists are not mapped). q / k / v stored fused: a QKVParallelLinear (packed_modules_mapping "qkv_proj":
# ["query_key_value"]) whose attention asserts that TP divides num_key_value_heads (no KV head replicated), o_proj row,
# its Attention with the quant config; the MLP gate / up -> gate_up_proj (the layers below first_k_dense_replace,
# default 1, and the shared experts); the MoE's router mlp.gate a GateLinear without quant_config, scoring_func
# config.score_function (sigmoid), renormalize=config.norm_topk_prob (true), num_expert_group config.n_group, the bias
# where moe_router_enable_expert_bias (true when absent). Not modelled: a list entry naming the fused layer's shard
# under vLLM's parent (self_attn.query_key_value: quant_utils.py is_layer_skipped's expansion of qkv_proj), which
# fp8check matches as self_attn.qkv_proj.
ARCHITECTURES["Param2MoEForCausalLM"] = Arch(
    "vllm:param2moe.py", packed={"qkv_proj": ("query_key_value",), "gate_up_proj": LLAMA_PACKED["gate_up_proj"]},
    styles={"attention.dense": ROW}, unquantized=("mlp.gate",), sliding=MODEL_WINDOW, mapper_on_inner_model=True,
    router=Router(("score_function", "sigmoid"), ("norm_topk_prob", True), ("n_group", None),
                  ("moe_router_enable_expert_bias", True, True)),
    kv_heads_tp_error="AssertionError: num_key_value_heads ({kv}) must be divisible by tensor-parallel world size "
                      "({tp}).",
    hf_to_vllm=(("substr", "word_embeddings.", "embed_tokens."),
                ("substr", ".attention.query_key_value.", ".self_attn.qkv_proj."),
                ("substr", ".attention.dense.", ".self_attn.o_proj."),
                ("substr", ".attention.query_layernorm.", ".self_attn.q_layernorm."),
                ("substr", ".attention.key_layernorm.", ".self_attn.k_layernorm."),
                ("substr", ".attention.", ".self_attn."),
                ("substr", ".mlp.gate.expert_bias", ".mlp.gate.e_score_correction_bias")))
# openPangu (openpangu.py, registered 0.25-0.34: PanguEmbeddedForCausalLM, PanguUltraMoEForCausalLM,
# PanguProMoEV2ForCausalLM; 0.33 -> 0.34 only a loop variable; remote-code configs). One decoder layer for all three,
# its attention by config.json: MLA where the config has qk_nope_head_dim / qk_rope_head_dim / v_head_dim / kv_lora_rank
# (DeepSeek's: fused_qkv_a_proj over q_a_proj + kv_a_proj_with_mqa with q_lora_rank, a packed entry the class adds then,
# here a MergedColumnParallelLinear with disable_tp, else q_proj column and kv_a_proj_with_mqa replicated; kv_b_proj
# column, o_proj row; the MLAAttention self_attn.mla_attn.mla_attn), else q / k / v -> qkv_proj, o_proj row, its
# Attention with the quant config. The MLP gate / up -> gate_up_proj, down_proj row; from first_k_dense_replace on
# (where config.json has n_routed_experts) a MoE: the router mlp.gate a GateLinear without quant_config, sigmoid scores
# over one group, renormalize=config.norm_topk_prob, an e_score_correction_bias where router_enable_expert_bias;
# shared_experts an MLP. MTP layers (num_nextn_predict_layers after num_hidden_layers) are skipped by its loader. Not
# modelled: the sink attention (config.param_sink_number > 0: OpenPanguSinkAttention, qkv_proj a
# MergedColumnParallelLinear over [q, k, v] with v_channels-wide values, StaticSinkAttention on
# FlashAttentionDiffKVBackend, no KV head replicated) and interleaved_sliding_window (each layer's window by its index),
# which no released openPangu checkpoint sets.
_OPENPANGU = _DEEPSEEK._replace(
    source="vllm:openpangu.py",
    router=Router("sigmoid", ("norm_topk_prob", True), 1, ("router_enable_expert_bias", True)),
    styles={"self_attn.fused_qkv_a_proj": "MergedColumnParallelLinear"}, disable_tp=("self_attn.fused_qkv_a_proj",))
ARCHITECTURES.update(dict.fromkeys(("PanguEmbeddedForCausalLM", "PanguUltraMoEForCausalLM", "PanguProMoEV2ForCausalLM"),
                                   _OPENPANGU))
# Unlimited-OCR-2's text model (unlimited_ocr.py UnlimitedOCR2TextForCausalLM, registered from 0.34; the language model
# UnlimitedOCRForCausalLMConfig._configure_v2 names for an unlimited_ocr2 text config): DeepseekV2ForCausalLM over
# UnlimitedOCR2DecoderLayers: DeepSeek-V2's dense MLP / MoE (deepseek_v2.py: the router mlp.gate unquantized) under
# DASHAttention (layers/dash_attention.py): q / k / v -> qkv_proj (use_mha: qk_nope_head_dim and qk_rope_head_dim 0;
# head size hidden_size // heads) and o_proj built WITHOUT a prefix (quant_prefixes: "" to the quant config, which no
# list names), the DASH router's q_proj / k_proj torch nn.Linears (no quant method), and its Attention without the quant
# config (no KV cache method) on DASHAttentionBackend, a TritonAttentionBackend (TRITON_ATTN: the selector is not asked)
# of one head a rank more than the rank's KV heads. Not modelled: that extra head in the reported geometry; vLLM's OCR
# model itself (UnlimitedOCRForCausalLM) refuses any quantization ("Unlimited-OCR-2 does not support quantized
# weights"), so this layout is the standalone text class's.
ARCHITECTURES["UnlimitedOCR2TextForCausalLM"] = _DEEPSEEK._replace(
    source="vllm:unlimited_ocr.py", mla=False, attention_quant_config=False,
    styles={"dash_router.q_proj": TORCH_LINEAR, "dash_router.k_proj": TORCH_LINEAR},
    own_widths=("dash_router.q_proj", "dash_router.k_proj"), attention_backends={"qkv_proj": "TRITON_ATTN"},
    quant_prefixes=(("regex", r"^(?:.*\.)?self_attn\.(?:q_proj|k_proj|v_proj|o_proj)\.weight$", ".weight"),))
# Zamba2 (zamba2.py Zamba2ForCausalLM, registered 0.25-0.34; 0.33 -> 0.34 only a loop variable): per
# config.layers_block_type a Mamba-2 layer (`mamba` a MambaMixer2 with the quant config: in_proj merged over [I, I, GN,
# GN, H], conv1d unquantized, out_proj row) or a hybrid layer: its `linear` a ReplicatedLinear with the quant config,
# its mamba_decoder.mamba the same MambaMixer2, and shared_transformer one of config.num_mem_blocks
# Zamba2AttentionDecoderLayers the model cycles through (Arch.shared_block_uses): self_attn q / k / v -> qkv_proj (the
# mapper's orig_to_new_stacked; a QKVParallelLinear over attention_hidden_size = 2 x hidden, every head a KV head),
# o_proj row, its Attentions built without the quant config (no KV cache method), per use a Zamba2LoRA (A
# ColumnParallelLinear gathered, B column; the mapper renames the checkpoint's 0 / 1 to A / B) on q / k / v;
# feed_forward gate_up_proj stored fused (merged), down_proj row, gate_up_proj_adapter_list.k per use. The class
# declares no packed_modules_mapping (quant_packed False). The prefixes the quant config's lists see are not the module
# names: the shared blocks are built under Zamba2Model's own prefix (model.qkv_proj, model.o_proj,
# model.linear_q_adapter.A, model.feed_forward.*), each layer's mixer and linear under str(H + i) (H hybrid layers:
# hybrid_offset_prefixes). The LM head takes no quant_config (tied to the embedding). Not modelled: the MLP adapters' B
# is a MergedColumnParallelLinear over [I, I] of one stored tensor, laid out as one column (the same split wherever I /
# TP is whole blocks).
ARCHITECTURES["Zamba2ForCausalLM"] = Arch(
    "vllm:zamba2.py", packed=_QKV_ONLY, quant_packed=False,
    styles={"linear": REPLICATED, "feed_forward.gate_up_proj": "MergedColumnParallelLinear"},
    conv_linears=("mamba.conv1d",), mamba_in_proj="mamba.in_proj", head_quant_config=False, sliding=MODEL_WINDOW,
    attention_quant_config=False, own_widths=("shared_transformer.self_attn.qkv_proj",),
    hf_to_vllm=(("substr", "A_log", "A"), ("substr", "0.weight", "A.weight"), ("substr", "1.weight", "B.weight")),
    quant_prefixes=(("regex", r"^(.*?)\.layers\.\d+\.shared_transformer\.self_attn\.linear_([qkv])_adapter_list\.\d+\.",
                     r"\1.linear_\2_adapter."),
                    ("regex", r"^(.*?)\.layers\.\d+\.shared_transformer\.self_attn\.", r"\1."),
                    ("regex", r"^(.*?)\.layers\.\d+\.shared_transformer\.feed_forward\.", r"\1.feed_forward.")),
    hybrid_offset_prefixes=(("mamba_decoder.mamba", "mixer"), ("mamba", "mixer"), ("linear", "linear")),
    shared_block_uses=("feed_forward.gate_up_proj_adapter_list", "dpa_list"))
# ERNIE-4.5 (ernie45.py: llama.py's LlamaForCausalLM) and ERNIE-4.5-MoE (ernie45_moe.py): the router mlp.gate a
# GateLinear without quant_config, softmax routing with the e_score_correction_bias (mlp.moe_statics), shared
# experts; hf_to_vllm_mapper drops every name holding "mtp" (model.mtp_block.N, mtp_emb_norm, mtp_linear_proj).
ARCHITECTURES.update({
    "Ernie4_5ForCausalLM": Arch("vllm:ernie45.py"),
    "Ernie4_5_MoeForCausalLM": Arch("vllm:ernie45_moe.py", unquantized=("mlp.gate",), spec_substrings=("mtp",),
                                    router=Router(renormalize=True, bias=True), sliding=MODEL_WINDOW),
})

# Gemma-4 (gemma4.py, 0.33 and 0.34): per-layer attention geometry (full-attention layers use global_head_dim and
# num_global_key_value_heads, read here from the q / k widths), attention_k_eq_v layers with q / k only (q, k, k),
# a MoE beside the dense MLP on every MoE layer: router.proj a GateLinear without quant_config, Custom routing
# (softmax, top-k, per-expert scale), gelu_tanh experts at layers.N.experts; per-layer-embedding projections
# ReplicatedLinear, per_layer_model_projection a ColumnParallelLinear; the E-models' KV-shared layers
# (num_kv_shared_layers: q_proj alone, their k / v / k_norm dropped by the model's mapper).
ARCHITECTURES["Gemma4ForCausalLM"] = Arch(
    "vllm:gemma4.py", spec_substrings=("audio_tower.", "embed_audio.", "embed_vision.", "vision_tower."),
    unquantized=("router.proj",), k_eq_v=True, layer_geometry=True, kv_shared_layers=True, moe_activation="gelu_tanh",
    router=Router(custom="Custom"), hf_to_vllm=(("prefix", "model.language_model.", "model."),),
    styles={"router.proj": REPLICATED, "per_layer_input_gate": REPLICATED, "per_layer_projection": REPLICATED,
            "per_layer_model_projection": COLUMN})

# gemma4_mm.py Gemma4ForConditionalGeneration: the text model as Gemma4ForCausalLM (under model.language_model); the
# vision and audio towers are transformers modules whose every nn.Linear becomes a ReplicatedLinear (no fusion;
# Gemma4ClippableLinear's `.linear`), embed_vision / embed_audio's embedding_projection too.
_GEMMA4_TOWERS = (
    Tower("vllm:gemma4_mm.py", ("model.vision_tower.", "vision_tower.", "model.embed_vision.", "embed_vision."),
          packed={}, styles={"linear": REPLICATED, "input_proj": REPLICATED, "embedding_projection": REPLICATED},
          quant_needs_64="vision"),
    Tower("vllm:gemma4_mm.py", ("model.audio_tower.", "audio_tower.", "model.embed_audio.", "embed_audio."),
          packed={}, styles={"linear": REPLICATED, "input_proj": REPLICATED, "embedding_projection": REPLICATED},
          quant_needs_64="audio"),
)
ARCHITECTURES["Gemma4ForConditionalGeneration"] = ARCHITECTURES["Gemma4ForCausalLM"]._replace(
    source="vllm:gemma4_mm.py", towers=_GEMMA4_TOWERS, spec_substrings=(),
    hf_to_vllm=(("prefix", "model.vision_tower", "vision_tower"), ("prefix", "model.embed_vision", "embed_vision"),
                ("prefix", "model.audio_tower.", "audio_tower."), ("prefix", "model.embed_audio.", "embed_audio."),
                *_VL_TEXT, ("prefix", "model", "language_model.model")))
# Methods whose tower layers gemma4_mm.py always quantizes (they handle sizes that are not multiples of 64).
ANY_SIZE_TOWER_METHODS = ("bitsandbytes", "torchao", "compressed-tensors")

# Gemma-3n (gemma3n.py Gemma3nForCausalLM, registered 0.25-0.34; 0.33 -> 0.34 a comment only): every linear with the
# quant config. Per decoder layer: q / k / v -> qkv_proj (the last num_kv_shared_layers: q_proj alone, a
# ColumnParallelLinear, their k / v / k_norm dropped by _kv_sharing_weights_mapper), o_proj row, gate / up ->
# gate_up_proj, down_proj row; AltUp's correction_coefs / prediction_coefs / modality_router ReplicatedLinear, Laurel's
# linear_left column / linear_right row, per_layer_input_gate / per_layer_projection ReplicatedLinear. The self-decoder
# (Gemma3nSelfDecoder) holds embed_tokens, embed_tokens_per_layer (VocabParallelEmbeddings), per_layer_model_projection
# and altup_projections.N (ColumnParallelLinear, gather_output); the text model altup_unembed_projections.N (the same).
# No LM head module: the logits read embed_tokens. Gemma3nTextModel's mapper moves the self-decoder's checkpoint names
# under self_decoder. at load, and its class mapper reaches the quant config's lists (SupportsQuant) only as prefixes of
# bare names, which no list entry under model. / language_model.model. is: get_quant_method is asked with the
# self_decoder. prefix (quant_prefixes), so a list naming model.per_layer_model_projection does not skip it.
_GEMMA3N_SELF_DECODER = ("altup_projections.", "per_layer_model_projection")
_GEMMA3N_ALTUP_INPUTS = range(8)  # altup_num_inputs - 1 projections each (4 in the released configs)
ARCHITECTURES["Gemma3nForCausalLM"] = Arch(
    "vllm:gemma3n.py", spec_substrings=("audio_tower.", "embed_audio.", "embed_vision.", "vision_tower."),
    kv_shared_layers=True, other_tables=("embed_tokens_per_layer",),
    styles={"altup.correction_coefs": REPLICATED, "altup.prediction_coefs": REPLICATED,
            "altup.modality_router": REPLICATED, "laurel.linear_left": COLUMN, "laurel.linear_right": ROW,
            "per_layer_input_gate": REPLICATED, "per_layer_projection": REPLICATED,
            "per_layer_model_projection": COLUMN,
            **{f"{root}.{i}": COLUMN for root in ("altup_projections", "altup_unembed_projections")
               for i in _GEMMA3N_ALTUP_INPUTS}},
    own_widths=("altup.correction_coefs", "altup.prediction_coefs", "altup.modality_router", "laurel.linear_left",
                "laurel.linear_right", "per_layer_input_gate", "per_layer_projection", "per_layer_model_projection"),
    quant_prefixes=tuple(("substr", f".{part}", f".self_decoder.{part}") for part in _GEMMA3N_SELF_DECODER),
    vllm_names=tuple((f".{part}", f".self_decoder.{part}") for part in _GEMMA3N_SELF_DECODER))

# gemma3n_mm.py Gemma3nForConditionalGeneration: the text model as Gemma3nForCausalLM under language_model (its mapper:
# model.language_model. -> language_model.model.); the vision tower AutoModel.from_config(vision_config) -- timm's
# MobileNetV5 through transformers' TimmWrapperModel: convolutions and norms only, no linear -- and the audio tower
# transformers' Gemma3nAudioEncoder (USM conformer), every linear a torch nn.Linear; embed_vision / embed_audio
# (Gemma3nMultimodalEmbedder) a VocabParallelEmbedding and a RowParallelLinear embedding_projection, all built without
# the quant config. The class is no SupportsQuant: configure_quant_config hands the quant config its mapper and its
# packed_modules_mapping (q / k / v, gate / up).
_GEMMA3N_AUDIO = Tower("vllm:gemma3n_mm.py", ("model.audio_tower.", "audio_tower."), packed={}, quantized=False,
                       styles={leaf: TORCH_LINEAR for leaf in (
                           "input_proj_linear", "ffw_layer_1", "ffw_layer_2", "pos_proj", "q_proj", "k_proj", "v_proj",
                           "post", "linear_start", "linear_end")})
_GEMMA3N_EMBEDDERS = Tower("vllm:gemma3n_mm.py", ("model.embed_vision.", "embed_vision.", "model.embed_audio.",
                                                  "embed_audio."), packed={}, quantized=False,
                           styles={"embedding_projection": ROW})
_GEMMA3N_VISION = Tower("vllm:gemma3n_mm.py", ("model.vision_tower.", "vision_tower."), packed={}, quantized=False)
ARCHITECTURES["Gemma3nForConditionalGeneration"] = ARCHITECTURES["Gemma3nForCausalLM"]._replace(
    source="vllm:gemma3n_mm.py", spec_substrings=(), towers=(_GEMMA3N_VISION, _GEMMA3N_AUDIO, _GEMMA3N_EMBEDDERS),
    hf_to_vllm=(("prefix", "model.embed_audio.", "embed_audio."), ("prefix", "model.embed_vision.", "embed_vision."),
                ("prefix", "model.language_model.", "language_model.model."),
                ("prefix", "model.vision_tower.", "vision_tower."), ("prefix", "model.audio_tower.", "audio_tower."),
                ("prefix", "model.multi_modal_projector.", "multi_modal_projector."), _VL_TEXT[1],
                ("prefix", "model", "language_model.model")))

# Phi-3-vision / Phi-3.5-vision (phi3v.py Phi3VForCausalLM, registered 0.25-0.34, 0.33 -> 0.34 alike; model_type
# phi3_v, the hub's remote-code config): the text model is llama.py's LlamaForCausalLM (init_vllm_registered_model,
# prefix "") over Phi-3's checkpoint, qkv_proj and gate_up_proj stored fused (loaded as stored); vision_embed_tokens
# holds clip.py's CLIPVisionModel built from the fixed CLIP_VIT_LARGE_PATCH14_336_CONFIG (16 heads:
# local.FIXED_VISION_HEADS) with the quant config, up to img_processor.layer_idx (-2 when absent, as the released
# configs: 23 of its 24 layers; CLIPVisionTransformer.load_weights drops the layers beyond): self_attn q / k / v ->
# qkv_proj (QKV over the vision heads), out_proj row, mlp fc1 column / fc2 row; img_projection.0 / .2 torch
# nn.Linears. Both classes are SupportsQuant: the lists are mapped by Phi3V's mapper (model. -> language_model.model.,
# lm_head. -> language_model.lm_head., model.vision_embed_tokens. -> vision_embed_tokens.) and the quant config's packed
# mapping is Llama's (q / k / v, gate / up; a list naming the stored qkv_proj itself is then matched by its shards'
# names, not modelled).
_PHI3V_CLIP = Tower("vllm:clip.py", ("model.vision_embed_tokens.",), vision_heads=True,
                    styles={"img_projection.0": TORCH_LINEAR, "img_projection.2": TORCH_LINEAR},
                    dropped=("img_processor.vision_model.encoder.layers.23.",))
ARCHITECTURES["Phi3VForCausalLM"] = ARCHITECTURES["Phi3ForCausalLM"]._replace(
    source="vllm:phi3v.py", towers=(_PHI3V_CLIP,),
    hf_to_vllm=(("prefix", "model.vision_embed_tokens.wte", "embed_tokens"),
                ("prefix", "model.vision_embed_tokens.", "vision_embed_tokens."), _VL_TEXT[1],
                ("prefix", "model.", "language_model.model.")))

# Laguna (laguna.py, 0.33 and 0.34): only q / k / v are packed (gate_proj and up_proj stay two ColumnParallelLinear,
# dense MLP and shared expert alike), g_proj a ColumnParallelLinear, a head count per layer
# (num_attention_heads_per_layer), the router mlp.gate a GateLinear without quant_config, sigmoid routing with the
# e_score_correction_bias (stored under mlp.experts), the shared expert separate.
ARCHITECTURES["LagunaForCausalLM"] = Arch("vllm:laguna.py", packed=_QKV_ONLY, unquantized=("mlp.gate",),
                                          router=Router("sigmoid", True, None, True))

# EXAONE-3.x (exaone.py ExaoneForCausalLM, registered 0.25-0.34, the file unchanged 0.29 -> 0.34): its own names,
# transformer.h.N.attn.attention.{q,k,v}_proj -> qkv_proj, out_proj row, mlp.c_fc_0 / c_fc_1 -> gate_up_proj (its
# packed_modules_mapping), mlp.c_proj row; no per-layer window. ExaoneForCausalLM builds `self.transformer` with
# prefix "model": the quant config's lists are matched against model.h.N..., not the checkpoint's transformer.h.N....
ARCHITECTURES["ExaoneForCausalLM"] = Arch(
    "vllm:exaone.py", packed={"qkv_proj": LLAMA_PACKED["qkv_proj"], "gate_up_proj": ("c_fc_0", "c_fc_1")},
    sliding=MODEL_WINDOW, quant_prefixes=(("prefix", "transformer.", "model."),))
# EXAONE-4.0 (exaone4.py Exaone4ForCausalLM, registered 0.25-0.34, unchanged 0.29 -> 0.34): Llama's names and fusions;
# QK-norm and post-norm add no linear; per_layer_sliding_window from config.layer_types (hybrid 3:1 sliding / global
# in the 32B, every layer global without a window).
ARCHITECTURES["Exaone4ForCausalLM"] = Arch("vllm:exaone4.py")
# EXAONE-MoE / K-EXAONE (exaone_moe.py ExaoneMoeForCausalLM, registered as ExaoneMoeForCausalLM 0.25-0.34 and as
# ExaoneMoEForCausalLM 0.25-0.26 and from 0.32; unchanged 0.32 -> 0.34): EXAONE-4's attention (pre-norm here),
# per-layer windows from layer_types; the layers config.mlp_layer_types names "sparse" hold ExaoneMoe: the router
# mlp.gate a GateLinear without quant_config (a ReplicatedLinear with quant_config=None until 0.30), sigmoid grouped
# top-k (n_group) with e_score_correction_bias (mlp.e_score_correction_bias), renormalized by norm_topk_prob, the shared
# experts (gate / up -> gate_up_proj) beside the FusedMoE; a layer whose swiglu_limits entry is above 0 hands FusedMoE
# that clamp. ExaoneMoeForCausalLM builds its ParallelLMHead with the quant config and no prefix: an ignore list's
# "lm_head" does not reach it (a ModelOpt FP8 config quantizes it). hf_to_vllm_mapper drops "mtp." (the ExaoneMoeMTP
# draft's fc and layers). Not modelled: K-EXAONE 2.0's per-layer window sizes (sliding_windows; the attention backend
# only reads whether a layer slides); 0.28-0.31 reading config.sliding_windows bare (a config without it, as before
# K-EXAONE 2.0, fails there); 0.25-0.27's is_moe_layer file.
ARCHITECTURES["ExaoneMoeForCausalLM"] = Arch(
    "vllm:exaone_moe.py", unquantized=("mlp.gate",), spec_prefix="mtp.", layer_swiglu_limits=True,
    router=Router("sigmoid", ("norm_topk_prob", True), ("n_group", 1), True),
    quant_prefixes=NO_HEAD_PREFIX)
ARCHITECTURES["ExaoneMoEForCausalLM"] = ARCHITECTURES["ExaoneMoeForCausalLM"]

# EXAONE-4.5 (exaone4_5.py Exaone4_5_ForConditionalGeneration, registered 0.25-0.34, unchanged 0.33 -> 0.34): a
# Qwen2.5-VL class (its packed_modules_mapping and hf_to_vllm_mapper, plus "mtp." dropped: the Exaone4_5_MTP draft's)
# whose text model is always Exaone4ForCausalLM (init_vllm_registered_model(architectures=["Exaone4ForCausalLM"]));
# the tower EXAONE4_5_VisionTransformer is Qwen2.5-VL's with grouped KV heads (vision_config.num_key_value_heads: the
# stored attn.qkv is a QKVParallelLinear over them) and Exaone4GatedMLP blocks, built with the quant config.
ARCHITECTURES["Exaone4_5_ForConditionalGeneration"] = Arch(
    "vllm:exaone4_5.py", packed=_QWEN_VL_PACKED, towers=(_QWEN25_VISUAL._replace(source="vllm:exaone4_5.py"),),
    hf_to_vllm=_QWEN25_VL_NAMES, spec_prefix="mtp.")

# Beam (vllm/models/beam, registered 0.33-0.34; nvidia/model.py, attention.py and moe.py unchanged 0.33 -> 0.34, 0.34
# resolving ROCm to amd/model.py, whose linears are the same). nvidia/attention.py BeamAttention: with
# num_key_value_heads >= TP (use_merged_qkv_gate) q / k / v and the output gate are one MergedColumnParallelLinear
# qkv_gate_proj over [q, k, v, gate] (KV heads never replicated there), else qkv_proj + a ColumnParallelLinear
# output_gate_proj; the mapper renames the stored self_attn.gate_proj to output_gate_proj (model.py BeamModel
# hf_to_vllm_mapper, whose renames SupportsQuant applies to the quant config's lists), and packed_modules_mapping
# names both fusions. Per-layer windows from layer_types (vLLM's BeamConfig: every layer sliding, window 4096, when
# config.json has neither). moe.py: dense layers (mlp_layer_types) BeamMLP gate_up_proj / down_proj; the MoE router
# mlp.gate a GateLinear without quant_config, sigmoid routing with e_score_correction_bias (always registered),
# grouped by n_group (None unless config.json sets it), renormalized by norm_topk_prob. Not modelled: TP above the KV
# head count (qkv_proj and output_gate_proj built apart; Beam's 8 KV heads cover TP <= 8).
ARCHITECTURES["BeamForCausalLM"] = Arch(
    "vllm:models/beam",
    packed={"qkv_gate_proj": ("q_proj", "k_proj", "v_proj", "gate_proj"), **LLAMA_PACKED},
    unquantized=("mlp.gate",), router=Router("sigmoid", ("norm_topk_prob", True), ("n_group", 0), True),
    merged_qkv_gate="qkv_gate_proj", hf_to_vllm=(("substr", ".self_attn.gate_proj", ".self_attn.output_gate_proj"),))

# Flint (vllm/models/flint/model.py FlintForCausalLM, registered 0.33-0.34, unchanged 0.33 -> 0.34): Llama's fusions
# (packed_modules_mapping; the mapper only stacks q / k / v and gate / up), per-layer windows from layer_types (vLLM's
# FlintConfig: window 513 unless use_sliding_window is false, every layer full without layer_types), attention sinks on
# every layer; dense layers (mlp_only_layers) FlintMLP gate_up_proj / down_proj; FlintSparseMoeBlock: the router
# mlp.gate a GateLinear with quant_config=None, routing by router_score_function (sigmoid) renormalized by
# norm_topk_prob, no correction bias or groups, the shared_expert a FlintMLP beside the FusedMoE. FlintAttention imports
# vllm.v1.attention.backends.flashinfer (FlashInfer: CUDA wheels only), hands every layer sinks (make_attention_sink;
# sinks_always: a checkpoint without the sinks tensor is still asked with has_sink) and asserts its Attention's impl is
# FlashInferImpl and its KV cache auto / bfloat16: the model builds only where the selector picks FLASHINFER, with a
# BF16 cache. For sink layers that is SM100 (FLASHINFER first: platforms/cuda.py _get_backend_priorities;
# FlashInferBackend.supports_sink: TRT-LLM prefill and decode) and SM120 (FLASH_ATTN first, but FA2 has no sinks:
# fa_utils.py flash_attn_supports_sinks needs FA 3 / 4; FlashInfer's XQA decode serves them); SM90 picks FLASH_ATTN (FA3
# sinks), SM80 / SM89 TRITON_ATTN (FlashInfer: no sinks there).
ARCHITECTURES["FlintForCausalLM"] = Arch(
    "vllm:models/flint", unquantized=("mlp.gate",),
    router=Router(("router_score_function", "sigmoid"), ("norm_topk_prob", True)),
    required_backend=("FLASHINFER", "Flint requires FlashInfer attention"), sinks_always=True)

# Step-3.5 (step3p5.py, registered 0.25-0.34; 0.33's rewrite reads transformers' Step3p7TextConfig and the remote-code
# keys, unchanged in 0.34; step3p5_mtp.py, the draft, changed): q / k / v -> qkv_proj (a head count per layer:
# num_sliding_attention_heads on sliding layers, KV heads num_attention_groups), g_proj a ColumnParallelLinear (one row
# a head), o_proj row; dense mlp and the shared expert gate / up -> gate_up_proj; the MoE block `moe`: the router
# moe.gate a GateLinear without quant_config (fp32), sigmoid routing (moe_router_activation) with router_bias,
# renormalized by norm_expert_weight; experts silu, or "swiglustep" on the layers whose swiglu_limits entry is set.
# hf_to_vllm_mapper moves the layer-level share_expert under moe; the loader skips MTP layers (>= num_hidden_layers).
# Experts load per expert (moe.experts.E.*, llm-compressor's) or stacked (moe.gate_proj.weight [E, out, in] and its
# scales: load_weights' expert_params_mapping slices loaded_weight[expert_id]).
ARCHITECTURES["Step3p5ForCausalLM"] = Arch(
    "vllm:step3p5.py", unquantized=("moe.gate",), spec_layers="num_nextn_predict_layers",
    router=Router(("moe_router_activation", "sigmoid"), ("norm_expert_weight", False), None, True),
    limited_moe_activation="swiglustep", stacked_experts="moe",
    hf_to_vllm=(("substr", ".share_expert.", ".moe.share_expert."),))

# Step-3.7 (step3p7.py Step3p7ForConditionalGeneration, registered 0.30-0.34, the file unchanged 0.33 -> 0.34): the text
# model is the class text_config names (init_vllm_registered_model: Step3p5ForCausalLM, step3p5.py) under
# language_model, the mapper moving the checkpoint's model.* (or model.language_model.*) there. The vision tower is
# step_vl.py's PerceptionEncoder, built with the model's quant_config: OpenCLIP's resblocks.N.attn.in_proj_weight ->
# attn.qkv_proj (QKVParallelLinear over vision_config.heads), attn.out_proj row, mlp.c_fc -> fc1 column, mlp.c_proj ->
# fc2 row (hf_to_vllm_mapper orig_to_new_substr); vit_large_projector a ColumnParallelLinear(gather_output=True) with
# the quant config; the downsampler convolutions are Conv2dLayers.
_OPENCLIP_NAMES = ((".attn.in_proj_weight", ".attn.qkv_proj.weight"), (".attn.in_proj_bias", ".attn.qkv_proj.bias"),
                   (".mlp.c_fc.", ".mlp.fc1."), (".mlp.c_proj.", ".mlp.fc2."))
_PERCEPTION_ENCODER = Tower("vllm:step_vl.py", ("vision_model.", "model.vision_model."), vision_heads=True,
                            styles={"attn.qkv_proj": "QKVParallelLinear"}, renames=_OPENCLIP_NAMES)
_STEP3P7_PROJECTOR = Tower("vllm:step3p7.py", ("vit_large_projector", "model.vit_large_projector"),
                           styles={"vit_large_projector": COLUMN})
# step_vl.py / step3p7.py hf_to_vllm_mapper: OpenCLIP's names (orig_to_new_substr), then the prefixes.
_OPENCLIP_RENAMES = tuple(("substr", old.removesuffix("."), new.removesuffix("."))
                          for old, new in _OPENCLIP_NAMES)
_STEP_VL_TEXT = (("prefix", "model.", "language_model.model."), _VL_TEXT[1])
# StepVL (step_vl.py StepVLForConditionalGeneration, registered 0.30-0.34, the file unchanged 0.33 -> 0.34 but for a
# message: Step3-VL-10B): the same tower and projector, saved at the checkpoint's top level, and the text model of
# text_config's class (Qwen3ForCausalLM) from model.*.
ARCHITECTURES["StepVLForConditionalGeneration"] = Arch(
    "vllm:step_vl.py", towers=(_PERCEPTION_ENCODER._replace(roots=("vision_model.",)),
                               _STEP3P7_PROJECTOR._replace(source="vllm:step_vl.py", roots=("vit_large_projector",))),
    registered_text_model=True, hf_to_vllm=(*_OPENCLIP_RENAMES, *_STEP_VL_TEXT))
# The text model's own load_weights applies Step3p5ForCausalLM's mapper after this one (share_expert ->
# moe.share_expert).
# step3p7.py's hf_to_vllm_mapper (Step-5's VL class's too).
_STEP3P7_NAMES = (*_OPENCLIP_RENAMES, *(("prefix", f"model.{part}", part) for part in (
    "vision_model.", "vit_large_projector.", "vit_large_projector")),
                  ("prefix", "model.language_model.", "language_model.model."),
                  ("prefix", "model.language_model", "language_model.model"), _STEP_VL_TEXT[0], _VL_TEXT[1],
                  ("prefix", "lm_head", "language_model.lm_head"))
ARCHITECTURES["Step3p7ForConditionalGeneration"] = Arch(
    "vllm:step3p7.py", towers=(_PERCEPTION_ENCODER, _STEP3P7_PROJECTOR), registered_text_model=True,
    vllm_names=((".share_expert.", ".moe.share_expert."),), hf_to_vllm=_STEP3P7_NAMES)

# Step-3 (step3_text.py Step3TextForCausalLM, registered 0.30-0.34, the file unchanged 0.33 -> 0.34): one KV head;
# load_weights narrows the checkpoint's q_proj (share_q_dim rows), k_proj and v_proj into qkv_proj, a ReplicatedLinear
# (qkv_params_mapping), then inter_norm and wq (a ColumnParallelLinear, share_q_dim -> heads x head_dim), o_proj row;
# gate_proj / up_proj -> gate_up_proj (stacked_params_mapping) in the dense mlp and the layer's share_expert, both
# with the quant config. The class has no packed_modules_mapping: both fusions are its loader's. Layers in
# moe_layers_enum have a MoE block `moe`: the router moe.gate a GateLinear without quant_config, softmax top-k
# renormalized by norm_expert_weight (Step3TextConfig's default False), and experts the checkpoint stores stacked
# (moe.gate_proj.weight [E, I, H]: expert_params_mapping slices loaded_weight[expert_id]). No per-layer window; the
# Attention is built without quant_config (Step3TextAttention): no KV cache method whatever the format; nor is the
# ParallelLMHead (Step3TextForCausalLM).
ARCHITECTURES["Step3TextForCausalLM"] = Arch(
    "vllm:step3_text.py", styles={"self_attn.qkv_proj": REPLICATED, "self_attn.wq": COLUMN},
    unquantized=("moe.gate",), router=Router(renormalize=("norm_expert_weight", False)), stacked_experts="moe",
    sliding=MODEL_WINDOW, own_query_width=True, attention_quant_config=False, head_quant_config=False)
# Step3VLForConditionalGeneration (step3_vl.py, registered 0.30-0.34; 0.34 only changes the encoder CUDA graph's
# output copy): the text model of text_config's class (Step3TextForCausalLM) under language_model, the mapper moving
# model.* there; the vision tower Step3VisionTransformer is built with quant_config=None (qkv_proj stored fused, a
# QKVParallelLinear over the vision heads, out_proj row, mlp fc1 column / fc2 row) and vit_large_projector is a torch
# nn.Linear: the whole tower stays BF16.
_STEP3_VISION = Tower("vllm:step3_vl.py", ("vision_model.",), vision_heads=True, quantized=False,
                      styles={"self_attn.qkv_proj": "QKVParallelLinear"})
_STEP3_PROJECTOR = Tower("vllm:step3_vl.py", ("vit_large_projector",), styles={"vit_large_projector": TORCH_LINEAR})
ARCHITECTURES["Step3VLForConditionalGeneration"] = Arch("vllm:step3_vl.py", towers=(_STEP3_VISION, _STEP3_PROJECTOR),
                                                        registered_text_model=True, hf_to_vllm=_STEP_VL_TEXT)

# Intern-S1 and transformers-format InternVL (interns1.py InternS1ForConditionalGeneration, registered 0.25-0.34 under
# both names, the modules alike in every release, the file unchanged 0.31 -> 0.34): the text model is the class
# text_config names (init_vllm_registered_model: Qwen3MoeForCausalLM for Intern-S1, Qwen2 / Qwen3 for InternVL3-hf),
# the hf_to_vllm_mapper moving model.language_model. under language_model.model. and lm_head under language_model. The
# InternViT tower (interns1_vit.py InternS1VisionModel) takes the quant config but never hands it on
# (InternS1VisionEncoder is built without it): attention q / k / v and projection_layer are torch nn.Linears, mlp fc1
# a ColumnParallelLinear and fc2 a RowParallelLinear with quant_config=None. InternS1MultiModalProjector's linear_1 /
# linear_2 are nn.Linears.
_INTERNS1_VISION = Tower("vllm:interns1_vit.py", ("model.vision_tower.", "vision_tower."), packed={},
                         quantized=False, styles={"attention.q_proj": TORCH_LINEAR, "attention.k_proj": TORCH_LINEAR,
                                                  "attention.v_proj": TORCH_LINEAR,
                                                  "attention.projection_layer": TORCH_LINEAR,
                                                  "mlp.fc1": COLUMN, "mlp.fc2": ROW})
_INTERNS1_PROJECTOR = Tower("vllm:interns1.py", ("model.multi_modal_projector.", "multi_modal_projector."),
                            packed={}, styles={"linear_1": TORCH_LINEAR, "linear_2": TORCH_LINEAR})
_INTERNS1 = Arch("vllm:interns1.py", towers=(_INTERNS1_VISION, _INTERNS1_PROJECTOR), registered_text_model=True,
                 hf_to_vllm=(_VL_TEXT[1], _VL_TEXT[0], ("prefix", "model.vision_tower.", "vision_tower."),
                             ("prefix", "model.multi_modal_projector.", "multi_modal_projector.")))
ARCHITECTURES.update({"InternS1ForConditionalGeneration": _INTERNS1, "InternVLForConditionalGeneration": _INTERNS1})

# InternVL in its remote-code format (internvl.py InternVLChatModel, h2ovl.py H2OVLChatModel, a subclass building the
# same modules, skyworkr1v.py SkyworkR1VChatModel; registered 0.25-0.34, the three files alike 0.33 -> 0.34): config.json
# nests the text model as llm_config, which vLLM renames text_config (transformers_utils/config.py
# _CONFIG_ATTRS_MAPPING), and the language model is the class it names (init_vllm_registered_model: InternLM2, Qwen2,
# Qwen3, Llama) under language_model, the checkpoint's own names (the mapper only drops training-only prefixes). The
# InternViT tower (intern_vit.py InternVisionModel, vision_model.encoder.layers.N) takes the model's quant config:
# attn.qkv stored fused, a QKVParallelLinear over vision_config's heads, attn.proj row, both built with disable_tp
# where TP does not divide the heads (InternParallelAttention), mlp.fc1 column / fc2 row; its select_layer
# override keeps every layer at the released -1 (not modelled otherwise). The quant config's packed mapping is the
# language model's (the class's own is SupportsLoRA's empty one; InternVisionModel is no SupportsQuant). mlp1 (a
# LayerNorm, then linears 1 and 3) is torch nn.Linears in InternVL / H2OVL, quantized ReplicatedLinears in Skywork-R1V.
_INTERN_VIT = Tower("vllm:intern_vit.py", ("vision_model.",), packed={}, vision_heads=True,
                    styles={"attn.qkv": "QKVParallelLinear", "attn.proj": ROW, "mlp.fc1": COLUMN, "mlp.fc2": ROW},
                    vision_heads_split=("attn.qkv", "attn.proj"))
_INTERNVL_MLP1 = Tower("vllm:internvl.py", ("mlp1.",), packed={}, styles={"1": TORCH_LINEAR, "3": TORCH_LINEAR})
_INTERNVL_CHAT = Arch("vllm:internvl.py", towers=(_INTERN_VIT, _INTERNVL_MLP1), registered_text_model=True)
ARCHITECTURES.update({
    "InternVLChatModel": _INTERNVL_CHAT,
    "H2OVLChatModel": _INTERNVL_CHAT._replace(source="vllm:h2ovl.py"),
    "SkyworkR1VChatModel": _INTERNVL_CHAT._replace(source="vllm:skyworkr1v.py", towers=(
        _INTERN_VIT, _INTERNVL_MLP1._replace(source="vllm:skyworkr1v.py",
                                              styles={"1": REPLICATED, "3": REPLICATED})))})
# Qianfan-OCR (qianfan_ocr.py QianfanOCRForConditionalGeneration, an InternVLChatModel; registered 0.33-0.34, the file
# alike): transformers' QianfanOCRConfig (text_config a Qwen3 one; _add_intern_vit_fields gives the vision config
# InternViT's field names) over InternVL's checkpoint names and modules; _patch_quant_config appends to an Fp8Config's
# ignored_layers (subclasses too; the online FP8 configs' linear weights alike, not modelled) every vision_config
# layer's attn.qkv / attn.proj / mlp.fc1 / mlp.fc2, language_model.lm_head and mlp1.1 / mlp1.3: under it the tower
# and the head are unquantized (an FP8 weight there an error), under compressed-tensors the tower is quantized.
ARCHITECTURES["QianfanOCRForConditionalGeneration"] = _INTERNVL_CHAT._replace(
    source="vllm:qianfan_ocr.py", fp8_ignored_layers=(
        *(f"vision_model.encoder.layers.{{i}}.{leaf}" for leaf in ("attn.qkv", "attn.proj", "mlp.fc1", "mlp.fc2")),
        "language_model.lm_head", "mlp1.1", "mlp1.3"))

# ERNIE-4.5-VL (ernie45_vl.py Ernie4_5_VLMoeForConditionalGeneration over ernie45_vl_moe.py's text model, registered
# 0.25-0.34, the modules alike in every release; 0.34 only moves the resampler out of the encoder CUDA graph's eager
# path). The hub's config is remote code (model_type ernie4_5_moe_vl: flat, moe_num_experts / moe_intermediate_size
# [text, vision]). Text model: Llama's q / k / v and gate / up fusions; a MoE layer (Ernie4_5_VLMoeMoE) builds two
# FusedMoEs, text_experts and vision_experts (softmax top-k renormalized with the e_score_correction_bias, the shared
# experts handed to both), which load_weights fills from the stored mlp.experts.N: N below moe_num_experts[0] text,
# the rest vision (the class asserts both counts equal); their routers text_experts_gate / vision_experts_gate are
# ReplicatedLinears WITH the quant config (fp32), loaded transposed from mlp.gate.weight / mlp.gate.weight_1. The
# hf_to_vllm_mapper only moves model. under language_model.model., so a list naming mlp.gate never reaches them.
# Vision tower Ernie4_5_VisionTransformer with the quant config (blocks.N.attn.qkv stored fused: a QKVParallelLinear
# over the vision heads, attn.proj row, mlp fc1 column / fc2 row; patch_embed.proj a torch nn.Linear); the resampler
# (mapper: model.resampler_model. -> resampler_model., spatial_linear.0 -> spatial_linear1, ...) builds every linear
# as a ColumnParallelLinear with quant_config=getattr(config, "quant_config", None): None, as the HF config has no
# such attribute. Not modelled: a layer inside one modality's MoE range only (its other modality an MLP).
_ERNIE_VL_VISION = Tower("vllm:ernie45_vl.py", ("vision_model.",), vision_heads=True,
                         styles={"attn.qkv": "QKVParallelLinear", "attn.proj": ROW, "patch_embed.proj": TORCH_LINEAR})
_ERNIE_VL_RESAMPLER = Tower("vllm:ernie45_vl.py", ("model.resampler_model.",), quantized=False, styles={
    leaf: COLUMN for leaf in ("spatial_linear.0", "spatial_linear.2", "temporal_linear.0", "temporal_linear.2",
                              "resampler_model.mlp")})
ARCHITECTURES["Ernie4_5_VLMoeForConditionalGeneration"] = Arch(
    "vllm:ernie45_vl.py", towers=(_ERNIE_VL_VISION, _ERNIE_VL_RESAMPLER),
    styles={"mlp.text_experts_gate": REPLICATED, "mlp.vision_experts_gate": REPLICATED},
    quantized_routers=("mlp.text_experts_gate", "mlp.vision_experts_gate"), spec_substrings=("mtp",),
    router=Router(renormalize=True, bias=True), sliding=MODEL_WINDOW,
    transposed_routers=((".mlp.gate.weight", ".mlp.text_experts_gate.weight"),
                        (".mlp.gate.weight_1", ".mlp.vision_experts_gate.weight")),
    split_experts=("text_experts", "vision_experts"),
    hf_to_vllm=(*(("substr", f"{part}_linear.{old}.", f"{part}_{new}.") for part in ("spatial", "temporal")
                  for old, new in (("0", "linear1"), ("2", "linear2"), ("3", "norm"))),
                ("prefix", "lm_head.", "language_model.lm_head."), ("prefix", "model.", "language_model.model."),
                ("prefix", "language_model.model.resampler_model.", "resampler_model.")))

# Step-5 (vllm.models.step5, registered 0.33 and 0.34; Step5MTP is the draft, never a layer here). On CUDA, XPU and CPU
# (and ROCm in 0.33) nvidia/model.py: Step5Attention builds the sparse (DSA) layers -- sparse_config enabled,
# layer_types "full_attention" and no sliding window -- as one Step5FusedQKVIndexerLinear (a QKVParallelLinear) over
# q / k / v, the indexer's sparse_indexer_q / k / z and the per-head gate g_proj (load_weights' _STEP5_WEIGHT_SHARDS),
# which raises unless its quant method is UnquantizedLinearMethod, plus sparse_indexer_w (Step5SparseIndexerIndexTPLinear,
# a ColumnParallelLinear without quant_config), attention backend STEP5_DSA, on SM90 / SM100 / SM103 only; the
# other layers q / k / v -> qkv_proj, g_proj a ColumnParallelLinear, backend FLASH_ATTN
# (Step5SplitKVFlashAttentionBackend). Attention(quant_config=None): no KV cache method. The MoE block `moe` as
# Step-3.5's: moe.gate a GateLinear without quant_config (fp32), sigmoid routing (moe_router_activation) with
# router_bias (use_moe_router_bias must be true), renormalized by norm_expert_weight (Step5Config default true),
# experts silu or "swiglustep" where swiglu_limits is set; share_expert (gate_up_proj / down_proj) moved under moe by
# STEP5_SHARE_EXPERT_MAPPER; MTP layers (>= num_hidden_layers) skipped by skip_spec_layers; the LM head quantized.
# Not modelled: qkvg_proj (a MergedColumnParallelLinear over q / k / v / g_proj, prefix qkv_proj) that a sliding
# layer fuses when all four are unquantized and its KV heads are at least TP; --moe-backend deep_gemm_mega_moe
# (Step5MegaMoE); the loader's refusal of per-expert tensors (only the stacked [E, out, in] format loads).
# From 0.34 ROCm builds amd/model.py (step5-rocm): every layer q / k / v -> qkv_proj and g_proj a ColumnParallelLinear,
# both with the quant config; a sparse layer's Step5SparseIndexer (the mapper moves sparse_indexer_* under
# self_attn.indexer, drops ssmax_s) builds sparse_indexer_q / _w as ColumnParallelLinears and _k / _z as
# ReplicatedLinears, all without quant_config, and hands Attention RocmAiterUnifiedAttentionBackend; Attention gets the
# quant config (a KV cache method); packed_modules_mapping is Llama's; the MoE alike (shared expert inside the
# FusedMoE, still moe.share_expert); tie_word_embeddings refused.
_STEP5_INDEXER = ("self_attn.sparse_indexer_q", "self_attn.sparse_indexer_k", "self_attn.sparse_indexer_z",
                  "self_attn.sparse_indexer_w")
_STEP5_ROCM = ARCHITECTURES["Step3p5ForCausalLM"]._replace(
    source="vllm:models/step5", unquantized_layers=_STEP5_INDEXER,
    styles={"self_attn.sparse_indexer_k": REPLICATED, "self_attn.sparse_indexer_z": REPLICATED},
    router=Router(("moe_router_activation", "sigmoid"), ("norm_expert_weight", True), None, True),
    attention_backends={"sparse_indexer_q": "ROCM_AITER_UNIFIED_ATTN"},
    sparse_group_error=("Step5 sparse attention needs 4, 8 or 16 local query heads per KV group (num_heads={heads}, "
                        "tp_size={tp})."))
_STEP5_PACKED = {"qkv_indexer_proj": ("q_proj", "k_proj", "v_proj", "sparse_indexer_q", "sparse_indexer_k",
                                      "sparse_indexer_z", "g_proj"), **LLAMA_PACKED}
ARCHITECTURES["Step5ForCausalLM"] = ARCHITECTURES["Step3p5ForCausalLM"]._replace(
    source="vllm:models/step5", packed=_STEP5_PACKED, styles={"self_attn.qkv_indexer_proj": "QKVParallelLinear"},
    unquantized_layers=("self_attn.sparse_indexer_w",), unquantized_only=("self_attn.qkv_indexer_proj",),
    attention_quant_config=False,
    router=Router(("moe_router_activation", "sigmoid"), ("norm_expert_weight", True), None, True),
    attention_backends={"qkv_indexer_proj": "STEP5_DSA", "qkv_proj": "FLASH_ATTN"},
    sparse_capabilities=(90, 100, 103), rocm_layout=("step5-rocm", _STEP5_ROCM),
    # nvidia/model.py's hf_to_vllm_mapper: share_expert under moe unless it is there already.
    hf_to_vllm=(("regex", r"(?<!\.moe)\.share_expert\.", ".moe.share_expert."),),
    sparse_group_error=("Step5 DSA kernels require 4, 8, or 16 local query heads per KV group, got {q} (num_heads="
                        "{heads}, tp_size={tp})."))

# Step-5's vision-language class (vllm.models.step5 Step5ForConditionalGeneration, registered 0.33 and 0.34; vLLM's own
# Step5VLConfig, model_type step5_vl, text_config a Step5Config, vision_config a PerceptionEncoderConfig): nvidia/vl.py
# (0.33, 0.34 off ROCm; unchanged) is Step3p7ForConditionalGeneration -- the same PerceptionEncoder tower and
# vit_large_projector, both built with the quant config, the text model of text_config's class (Step5ForCausalLM, its
# MTP layers skipped by its own loader) under language_model -- with Step-5's packed_modules_mapping and step3p7.py's
# mapper | STEP5_SHARE_EXPERT_MAPPER (share_expert -> moe.share_expert, a regex: map_name applies it first; the quant
# config's layer lists are mapped by it too). From 0.34 ROCm builds amd/vl.py: the text model amd/model.py's
# (step5-rocm), its packed_modules_mapping Llama's, the mapper step3p7.py's alone: the text model's own loader moves
# share_expert under moe and a sparse layer's indexer (beside its qkv_proj, only there) under self_attn.indexer
# (Arch.vllm_names), and initialize_model's configure_quant_config (model_loader/utils.py) maps the quant config's layer
# lists by the text class's mapper after the outer one's: share_expert there too, as on CUDA (model_arch keeps this
# entry's renames and towers over the text model's ROCm layout).
ARCHITECTURES["Step5ForConditionalGeneration"] = Arch(
    "vllm:models/step5", towers=(_PERCEPTION_ENCODER, _STEP3P7_PROJECTOR), registered_text_model=True,
    packed=_STEP5_PACKED, hf_to_vllm=(*ARCHITECTURES["Step5ForCausalLM"].hf_to_vllm, *_STEP3P7_NAMES),
    vllm_names=((".share_expert.", ".moe.share_expert."),
                (".self_attn.sparse_indexer_", ".self_attn.indexer.sparse_indexer_", "qkv_proj")))

# Inkling (vllm/models/inkling, 0.26-0.34; 0.33 -> 0.34 changed only mtp.py): __init__.py resolves nvidia/model.py,
# or amd/model.py on ROCm (the same modules; amd/moe.py drops the routed experts' quant config only under a Quark
# exclude list). Checkpoints keep Thinking Machines' names (model.llm.layers.N.attn.wq_du, mlp.w13_dn, ...), which
# _TmlForCausalLMBase.hf_to_vllm_mapper moves to model.layers.N and renames; InklingForConditionalGeneration adds the
# towers' prefixes (the towers, built only where vision_config / audio_config set decoder_dmodel, are torch
# nn.Linear / embeddings: no quant method). attention.py InklingAttention (an AttentionLayerBase of its own,
# get_attn_backend FlashAttentionBackend, no quant method: no KV cache method): wq_du / wk_dv / wv_dv / wr_du fused
# into qkvr, a MergedColumnParallelLinear [q, k, v, r]; wo_ud a RowParallelLinear. mlp.py InklingDenseMLP: the
# interleaved gate / up stored fused (w13_dn -> gate_up_proj) a plain ColumnParallelLinear, w2_md -> down_proj a
# RowParallelLinear. moe.py InklingMoE: InklingGate a bare Parameter (no linear), the routed experts a FusedMoE
# (FusedMoEFactory, sigmoid routing with the bias by a custom_routing_function, renormalize=False, SiLU), the shared
# "sink" experts bare BF16 Parameters (InklingSinkExperts: the exporters exclude every shared_experts). The main
# model drops model.mtp.* (_load_inkling_weights' mapper).
# The mapper's suffixes: the stacked experts' NVFP4 scales (ModelOpt's, compressed-tensors') onto FusedMoE's names.
_INKLING_SCALES = tuple(("suffix", f".{w}_weight.{stored}", f".{w}_{param}") for w in ("w13", "w2")
                        for stored, param in (("scale", "weight_scale"), ("scale2", "weight_scale_2")))
_INKLING_SCALES += tuple(("suffix", f".{w}_weight.{leaf}", f".{w}_{leaf}") for w in ("w13", "w2") for leaf in (
    "input_global_scale", "weight_global_scale", "weight_packed", "weight_scale"))
_INKLING = Arch(
    "vllm:models/inkling", packed={"qkvr": ("wq_du", "wk_dv", "wv_dv", "wr_du"), "w13": ("w1", "w3")},
    styles={"attn.qkvr": "MergedColumnParallelLinear", "attn.wo_ud": ROW, "mlp.w13_dn": COLUMN, "mlp.w2_md": ROW},
    matrix_norms=("mlp.gate",),
    sliding=MODEL_WINDOW, spec_prefix="model.mtp.", router=Router(renormalize=False, custom="Custom"),
    hf_to_vllm=(("substr", ".w13_dn", ".gate_up_proj"), ("substr", ".w2_md", ".down_proj"),
                ("prefix", "model.llm.layers.", "model.layers."),
                ("prefix", "model.llm.embed_norm", "model.embed_norm"),
                ("prefix", "model.llm.embed", "model.embed_tokens"), ("prefix", "model.llm.norm", "model.norm"),
                ("prefix", "model.llm.unembed", "lm_head"), ("prefix", "language_model.layers.", "model.layers."),
                ("prefix", "language_model.lm_head.", "lm_head."), *_INKLING_SCALES),
    own_attention={"cuda": "FLASH_ATTN", "rocm": "FLASH_ATTN", "cpu": "FLASH_ATTN", "xpu": "FLASH_ATTN"})
ARCHITECTURES["InklingForCausalLM"] = _INKLING
ARCHITECTURES["InklingForConditionalGeneration"] = _INKLING._replace(hf_to_vllm=(
    *_INKLING.hf_to_vllm[:-len(_INKLING_SCALES)], ("prefix", "model.audio.", "audio."),
    ("prefix", "model.visual.", "visual.vision_encoder."), *_INKLING_SCALES))

# MuseGlimmer (muse_glimmer.py, 0.28-0.34; 0.33 -> 0.34 changed only its norms): registry.py serves
# MuseGlimmerForCausalLM and MuseGlimmerForConditionalGeneration with the one MuseGlimmerForCausalLM class, which reads
# transformers' MuseGlimmerConfig (text_config, and a vision tower where vision_config is set). MuseGlimmerAttention:
# q / k / v -> qkv_proj, o_proj row, the output gate self_attn.gate_proj -> output_gate_proj (a ColumnParallelLinear
# with the quant config; the mapper renames it, so ignore lists match vLLM's name), Attention with the quant config
# and the layer_types window; MuseGlimmerMLP Llama's; ParallelLMHead with the quant config. The tower
# (MuseGlimmerVisionEncoder, mapper: model.vision_tower.layers.N -> vision_encoder.transformer.N): attn q / k / v ->
# qkv_proj (QKVParallelLinear over the vision heads, no quant_config) and attn.proj -> o_proj (row, no quant_config),
# mlp.fc1 / fc2 and the patch embedding torch nn.Linears, the position table a bare parameter; the vision adapter
# (fc1 / fc2) and vision_projection nn.Linears.
_MUSE_GLIMMER_TOWER = Tower("vllm:muse_glimmer.py", ("model.vision_tower.",), vision_heads=True, quantized=False,
                            styles={"attn.proj": ROW, "mlp.fc1": TORCH_LINEAR, "mlp.fc2": TORCH_LINEAR,
                                    "patch_embedder.patch_embedding": TORCH_LINEAR})
_MUSE_GLIMMER_ADAPTER = Tower("vllm:muse_glimmer.py", ("model.vision_adapter.", "model.vision_projection"),
                              quantized=False, styles={"fc1": TORCH_LINEAR, "fc2": TORCH_LINEAR,
                                                       "vision_projection": TORCH_LINEAR})
_MUSE_GLIMMER = Arch(
    "vllm:muse_glimmer.py", styles={"self_attn.gate_proj": COLUMN},
    towers=(_MUSE_GLIMMER_TOWER, _MUSE_GLIMMER_ADAPTER), matrix_norms=("patch_embedder.position_embedding_table",),
    spec_prefix="model.rotary_emb.",
    hf_to_vllm=(("substr", "model.vision_tower.patch_embedder.position_embedding_table.weight",
                 "model.vision_tower.positional_embedding_vlm"),
                ("substr", "model.vision_tower.layers.", "model.vision_tower.transformer."),
                ("substr", ".norm1.", ".ln_1."), ("substr", ".norm2.", ".ln_2."),
                ("substr", ".attn.proj.", ".attn.o_proj."), ("substr", ".mlp.fc1.", ".mlp.c_fc."),
                ("substr", ".mlp.fc2.", ".mlp.c_proj."),
                ("substr", ".self_attn.gate_proj", ".self_attn.output_gate_proj"),
                ("prefix", "model.language_model.", "model."), ("prefix", "language_model.", "model."),
                ("prefix", "model.vision_tower.patch_embedder.patch_embedding.", "model.vision_tower.conv1_linear."),
                ("prefix", "model.vision_tower.", "vision_encoder."), ("prefix", "vision_tower.", "vision_encoder."),
                ("prefix", "model.vision_encoder.", "vision_encoder."),
                ("prefix", "model.vision_adapter.fc1.", "model.vision_adapter.c_fc."),
                ("prefix", "model.vision_adapter.fc2.", "model.vision_adapter.c_proj."),
                ("prefix", "model.vision_adapter.", "vision_adapter."),
                ("prefix", "model.vision_projection.", "vision_projection."),
                ("prefix", "model.perception_emb_norm.", "perception_emb_norm.")))
ARCHITECTURES["MuseGlimmerForCausalLM"] = _MUSE_GLIMMER
ARCHITECTURES["MuseGlimmerForConditionalGeneration"] = _MUSE_GLIMMER

# Muse-Spark (vllm/models/muse_spark, registered 0.33-0.34; __init__.py resolves amd/model.py + amd/multimodal.py on
# ROCm, nvidia/ on every other platform; 0.34 renamed the text classes and messages from "MuseSpark1x" to "Muse Spark",
# muse-spark-rename). Both text classes refuse, while building, every quant config but their own
# (QUANT_CONFIG_REFUSALS: NVFP4 off ROCm, Quark on ROCm), so the one FP8 layout vLLM builds is ROCm's under Quark,
# laid out here (amd/model.py, common/omni.py, common/vision.py, common/audio.py). MuseSparkAttention: q / k / v and
# the output gate self_attn.gate_proj stacked into qkv_proj (common/layers.py MuseSparkQKVOGateParallelLinear, a
# ColumnParallelLinear over [q, k, v, o_gate] with the quant config, split by head groups: it asserts that TP divides
# the KV heads, no replication), o_proj row, Attention with the quant config and the layer_types window. Dense layers
# (mlp_layer_types "dense") LlamaMLP gate_up_proj / down_proj; MuseSparkMoE: the router mlp.gate a GateLinear
# without quant_config (fp32), the pooling pre_expert_proj / post_expert_proj ReplicatedLinears without quant_config
# (vLLM swaps in its MuseSparkTorchLinearMethod, a plain F.linear), the experts one FusedMoE at moe_hidden_size with
# sigmoid routing over an always-registered expert_bias, whose method (muse_moe_runner.py MuseSparkRoutedExperts) is
# Quark's W8A8 FP8 only behind the Triton MoE backend (--moe-backend triton: moe_backend_required) and BF16 Triton
# experts where Quark's exclude skips them. The towers are built without the quant config: NaViT (q / k / v ->
# qkv_proj over the vision heads, attn.proj row, mlp.fc1 column / fc2 row, the patch embedding a column, the position
# table a parameter), the vision adapter (fc1 column, fc2 row), vision_projection a row, and the audio AutoEncoder
# (patch embedder proj, conv-block fc1 column / fc2 row, proj column; depthwise convolutions, no linears).
_MUSE_SPARK_SOURCE = "vllm:models/muse_spark/amd/model.py"
_MUSE_SPARK_VISION = Tower("vllm:models/muse_spark/common/vision.py", ("model.vision_tower.",), vision_heads=True,
                           quantized=False, styles={"attn.proj": ROW, "mlp.fc1": COLUMN, "mlp.fc2": ROW,
                                                    "patch_embedder.patch_embedding": COLUMN})
_MUSE_SPARK_ADAPTER = Tower("vllm:models/muse_spark/common/omni.py", ("model.vision_adapter.",
                                                                      "model.vision_projection"),
                            quantized=False, styles={"fc1": COLUMN, "fc2": ROW, "vision_projection": ROW})
_MUSE_SPARK_AUDIO = Tower("vllm:models/muse_spark/common/audio.py", ("model.audio_tower.",), quantized=False,
                          styles={"patch_embedder.proj": COLUMN, "mlp.fc1": COLUMN, "mlp.fc2": ROW,
                                  "audio_tower.proj": COLUMN})
_MUSE_SPARK_BACKEND = MoEBackendRequired(("rocm",), "triton",
                                         "Muse Spark FP8 on ROCm requires the Triton MoE backend; got {moe_backend}.",
                                         ("MuseSparkQuarkW8A8Fp8FusedMoE", "MuseSparkTritonExperts", "TRITON"))
ARCHITECTURES["MuseSparkForConditionalGeneration"] = Arch(
    _MUSE_SPARK_SOURCE, packed={**LLAMA_PACKED, "qkv_proj": ("q_proj", "k_proj", "v_proj", "gate_proj")},
    styles={"self_attn.qkv_proj": COLUMN, "mlp.pre_expert_proj": REPLICATED, "mlp.post_expert_proj": REPLICATED},
    merged_qkv_gate="qkv_proj", unquantized=("mlp.gate",),
    unquantized_layers=("mlp.pre_expert_proj", "mlp.post_expert_proj"),
    router=Router("sigmoid", True, None, True),
    towers=(_MUSE_SPARK_VISION, _MUSE_SPARK_ADAPTER, _MUSE_SPARK_AUDIO),
    matrix_norms=("patch_embedder.position_embedding_table",),
    kv_heads_tp_error="AssertionError: KV-head padding is not supported for the fused QKV+O-gate projection: "
                      "total_num_kv_heads={kv}, tp_size={tp}.",
    moe_backend_required=_MUSE_SPARK_BACKEND,
    own_linear_method=(("mlp.pre_expert_proj", "mlp.post_expert_proj"), "MuseSparkTorchLinearMethod"),
    own_unquantized_moe=("MuseSparkUnquantizedFusedMoE", "MuseSparkTritonExperts", "TRITON"),
    fields_before=(("muse-spark-rename", {"moe_backend_required": _MUSE_SPARK_BACKEND._replace(
        refusal=_MUSE_SPARK_BACKEND.refusal.replace("Muse Spark", "MuseSpark1x"))}),),
    hf_to_vllm=tuple(("regex", old, new) for old, new in (
        (r"^model\.language_model\.", "model."),
        (r"^(model\.layers\.\d+)\.input_layernorm\.", r"\1.self_attn.pre_qkv_proj_norm."),
        (r"^(model\.layers\.\d+)\.post_attention_residual_gate\.", r"\1.add_attn."),
        (r"^(model\.layers\.\d+)\.post_feedforward_residual_gate\.", r"\1.add_ffn."),
        (r"^(model\.layers\.\d+)\.pre_feedforward_layernorm\.", r"\1.pre_ffn_norm."),
        (r"^(model\.layers\.\d+)\.post_feedforward_layernorm\.", r"\1.post_ffn_norm."),
        (r"^(model\.layers\.\d+)\.mlp\.experts\.post_expert_norm\.", r"\1.feed_forward.post_expert_norm."),
        (r"^(model\.layers\.\d+)\.mlp\.gate\.e_score_correction_bias$", r"\1.feed_forward.expert_bias"),
        (r"^(model\.layers\.\d+)\.mlp\.gate\.", r"\1.feed_forward.router."),
        (r"^(model\.layers\.\d+)\.mlp\.pre_expert_proj\.", r"\1.feed_forward.pooler."),
        (r"^(model\.layers\.\d+)\.mlp\.post_expert_proj\.", r"\1.feed_forward.unpooler."),
        (r"^(model\.layers\.\d+)\.mlp\.", r"\1.feed_forward."),
        (r"\.experts\.gate_up_proj_input_scale$", ".experts.w13_input_scale"),
        (r"\.experts\.gate_up_proj_weight_scale_2$", ".experts.w13_weight_scale_2"),
        (r"\.experts\.gate_up_proj_weight_scale$", ".experts.w13_weight_scale"),
        (r"\.experts\.down_proj_input_scale$", ".experts.w2_input_scale"),
        (r"\.experts\.down_proj_weight_scale_2$", ".experts.w2_weight_scale_2"),
        (r"\.experts\.down_proj_weight_scale$", ".experts.w2_weight_scale"),
        (r"\.experts\.gate_up_proj$", ".experts.w13_weight"),
        (r"\.experts\.down_proj$", ".experts.w2_weight"),
        (r"^model\.vision_adapter\.fc1\.", "vision_model.adapter.c_fc."),
        (r"^model\.vision_adapter\.fc2\.", "vision_model.adapter.c_proj."),
        (r"^model\.vision_tower\.patch_embedder\.patch_embedding\.", "vision_model.conv1_linear."),
        (r"^model\.vision_tower\.patch_embedder\.position_embedding_table\.weight$",
         "vision_model.positional_embedding_vlm"),
        (r"^model\.vision_tower\.layers\.", "vision_model.encoder.layers."),
        (r"^model\.vision_tower\.", "vision_model."),
        (r"^model\.vision_projection\.", "vision_projection."),
        (r"^(vision_model\.encoder\.layers\.\d+)\.attn\.proj\.", r"\1.attn.out_proj."),
        (r"^(vision_model\.encoder\.layers\.\d+)\.norm1\.", r"\1.ln_1."),
        (r"^(vision_model\.encoder\.layers\.\d+)\.norm2\.", r"\1.ln_2."),
        (r"^(vision_model\.encoder\.layers\.\d+)\.mlp\.fc1\.", r"\1.mlp.c_fc."),
        (r"^(vision_model\.encoder\.layers\.\d+)\.mlp\.fc2\.", r"\1.mlp.c_proj."),
        (r"^model\.audio_tower\.layers\.(\d+)\.conv_blocks\.0\.", r"audio_encoder.stages.\1.1."),
        (r"^model\.audio_tower\.layers\.(\d+)\.conv_blocks\.1\.", r"audio_encoder.stages.\1.2."),
        (r"^(audio_encoder\.stages\.\d+\.\d+)\.conv\.", r"\1.conv.conv."),
        (r"^(audio_encoder\.stages\.\d+\.\d+)\.mlp\.fc1\.", r"\1.linear1."),
        (r"^(audio_encoder\.stages\.\d+\.\d+)\.mlp\.fc2\.", r"\1.linear2."),
        (r"^model\.audio_tower\.layers\.(\d+)\.patch_embedder\.norm\.", r"audio_encoder.stages.\1.0.norm."),
        (r"^model\.audio_tower\.layers\.(\d+)\.patch_embedder\.proj\.", r"audio_encoder.stages.\1.0.linear."),
        (r"^model\.audio_tower\.post_proj_norm\.", "audio_encoder.dual_norm."),
        (r"^model\.audio_tower\.proj\.", "audio_encoder.o_proj."),
        (r"^model\.audio_tower\.norm\.", "audio_encoder.norm."))))

# Hunyuan (HunYuanDenseV1 / HunYuanMoEV1): registry.py serves both through the Transformers backend
# (transformers/causal.py, moe.py), which builds each nn.Linear from the HF model's tp_plan (q / k / v fused by its
# QKVFuser, gate / up by its GLUFuser, o / down row) and every Linear the plan does not name as a ReplicatedLinear
# with the model's quant config: the router mlp.gate.wg. The backend hands the shared expert, built under its
# checkpoint name mlp.shared_mlp (the prefix the quant config's lists are matched against), to the FusedMoE.
_HUNYUAN: dict[str, Any] = dict(styles={"mlp.gate.wg": REPLICATED}, quantized_routers=("mlp.gate.wg",),
                                sliding=MODEL_WINDOW)
ARCHITECTURES.update({
    "HunYuanDenseV1ForCausalLM": Arch("vllm:transformers/causal.py", **_HUNYUAN),
    # The backend's MoEBlockFuser routes Hunyuan's MoE externally: the HF router's top-k as a
    # custom_routing_function (RoutingMethodType Custom).
    "HunYuanMoEV1ForCausalLM": Arch("vllm:transformers/moe.py", router=Router(custom="Custom"), **_HUNYUAN),
})

# HY-V3 (hy_v3.py HYV3ForCausalLM, registered 0.25-0.34, the file alike 0.33 / 0.34): Llama's q / k / v and gate /
# up fusions with per-head q / k norms; layers below first_k_dense_replace a dense mlp, the others HYV3MoEFused: the
# router mlp.gate a GateLinear without quant_config (fp32), which load_weights reads from the checkpoint's
# mlp.router.gate ("router.gate." -> "gate."), the shared expert mlp.shared_mlp (gate / up -> gate_up_proj) handed to
# the FusedMoE, sigmoid routing with the e_score_correction_bias (mlp.expert_bias), renormalize=config.route_norm
# (read bare: a config.json without it fails), use_grouped_topk with num_expert_group=1. load_weights skips MTP layers
# past num_hidden_layers (get_spec_layer_idx_from_weight_name); hy_v3_mtp.py's HYV3MTP is the draft model.
ARCHITECTURES["HYV3ForCausalLM"] = Arch(
    "vllm:hy_v3.py", unquantized=("mlp.router.gate",), spec_layers="num_nextn_predict_layers", sliding=MODEL_WINDOW,
    router=Router("sigmoid", ("route_norm", True), 1, True),
    vllm_names=((".mlp.router.gate", ".mlp.gate"),))

# Arcee Trinity (afmoe.py AfmoeForCausalLM, registered 0.30-0.34, 0.33 -> 0.34 unchanged). AfmoeAttention: q / k / v
# -> qkv_proj, o_proj row, and a gated-attention self_attn.gate_proj (a ColumnParallelLinear of heads x head_dim with
# the quant config, no up_proj beside it: the packed gate_up_proj never takes it), per-layer sliding window from
# config.layer_types. Layers below num_dense_layers a LlamaMLP, the others AfmoeMoE: the router mlp.gate a GateLinear
# without quant_config (fp32), which the hf_to_vllm_mapper reads from the checkpoint's mlp.router.gate; the shared
# experts a LlamaMLP (gate / up -> gate_up_proj) handed to the FusedMoE; use_grouped_topk over config.n_group with
# scoring_func=config.score_func, renormalize=config.route_norm (sigmoid; False otherwise, which with the
# e_score_correction_bias mlp.expert_bias is Unspecified either way), the three read bare (a config.json without them
# fails). The ParallelLMHead is built with the quant config and no prefix (NO_HEAD_PREFIX).
ARCHITECTURES["AfmoeForCausalLM"] = Arch(
    "vllm:afmoe.py", styles={"self_attn.gate_proj": COLUMN}, unquantized=("mlp.router.gate",),
    router=Router(("score_func", "sigmoid"), ("route_norm", True), ("n_group", 1), True),
    quant_prefixes=NO_HEAD_PREFIX, hf_to_vllm=(("suffix", ".router.gate.weight", ".gate.weight"),),
    vllm_names=((".mlp.router.gate", ".mlp.gate"),))
# Ling / Ring v1 (Ling-lite / Ling-plus: BailingMoeForCausalLM) and 2.0 (Ling-mini / flash / 1T, Ring-2.0, their FP8
# releases: BailingMoeV2ForCausalLM, a subclass with nothing of its own): bailing_moe.py, registered 0.25-0.34, its
# modules alike 0.31-0.34 (0.33 -> 0.34 unchanged). BailingAttention: q / k / v stored fused as
# attention.query_key_value (packed_modules_mapping "query_key_value": ["query_key_value"], a QKVParallelLinear over
# num_attention_heads / num_key_value_heads of head_dim), attention.dense a RowParallelLinear; BailingMLP gate / up ->
# gate_up_proj for the layers below first_k_dense_replace and the shared experts; BailingMoE: mlp.gate a GateLinear
# without quant_config (a torch nn.Linear until 0.30), FusedMoE with scoring_func=config.score_function (softmax when
# unset), renormalize=config.norm_topk_prob, num_expert_group=config.n_group, and the gate's expert_bias as
# e_score_correction_bias where moe_router_enable_expert_bias. Its Attention (attention.attn) is built without the
# quant config: no KV cache method whatever the format. The model builds num_hidden_layers layers and skips
# none: a checkpoint holding MTP layers past them fails vLLM's load (AutoWeightsLoader), which is not modelled (the
# released Ling-2.0 configs set num_nextn_predict_layers 0).
_BAILING = Arch(
    "vllm:bailing_moe.py",
    packed={"query_key_value": ("query_key_value",), "gate_up_proj": LLAMA_PACKED["gate_up_proj"]},
    styles={"attention.query_key_value": "QKVParallelLinear", "attention.dense": ROW}, unquantized=("mlp.gate",),
    styles_before=(("bailing-gate-linear", {"mlp.gate": TORCH_LINEAR}),), sliding=MODEL_WINDOW,
    attention_quant_config=False,
    router=Router(("score_function", "softmax"), ("norm_topk_prob", False), ("n_group", None),
                  ("moe_router_enable_expert_bias", True)))
ARCHITECTURES.update({"BailingMoeForCausalLM": _BAILING, "BailingMoeV2ForCausalLM": _BAILING})
# Sarvam-30B (sarvam.py SarvamMoEForCausalLM, registered 0.25-0.34; the file identical in 0.33 and 0.34): a
# BailingMoeForCausalLM whose load_weights only centres the gate's expert_bias, so bailing_moe.py's modules under
# inclusionAI's names (the checkpoints hold them; transformers >= 5.24's sarvam_moe conversion renames them on load).
# The transformers vLLM 0.33 / 0.34 pin (< 5.21 / < 5.23) has no sarvam_moe class: the config is the checkpoint's
# remote code (--trust-remote-code), the keys bailing_moe.py reads taken from config.json as for Ling.
ARCHITECTURES["SarvamMoEForCausalLM"] = _BAILING._replace(source="vllm:sarvam.py")
# Sarvam-105B (sarvam.py SarvamMLAForCausalLM, registered 0.25-0.34; the file identical in 0.33 and 0.34; model type
# sarvam_mla, DeepSeek-V3's names and config). SarvamMLAAttention: q_proj column (q_a_proj replicated, q_b_proj column
# where q_lora_rank is set: never fused, Arch.mla_fused_qkv_a; MultiHeadLatentAttentionWrapper's forward then asserts
# that fused_qkv_a_proj is set, at startup's profile run: not modelled, the released configs have no q_lora_rank),
# kv_a_proj_with_mqa replicated, kv_b_proj column, o_proj row, all with the quant config; its MLAAttention
# self_attn.mla_attn.mla_attn. SarvamMLAMLP gate / up -> gate_up_proj (the model's hf_to_vllm_mapper stacks them) for
# the layers below first_k_dense_replace and the shared experts; SarvamMLAMoE: mlp.gate a GateLinear without
# quant_config, FusedMoE with scoring_func=config.score_function (sigmoid when unset),
# renormalize=config.norm_topk_prob (true when unset), num_expert_group=config.n_group (_remap_config: 1 when unset)
# and the e_score_correction_bias unless moe_router_enable_expert_bias is false. load_weights skips no MTP layer (the
# released configs have none).
ARCHITECTURES["SarvamMLAForCausalLM"] = Arch(
    "vllm:sarvam.py", packed={"gate_up_proj": LLAMA_PACKED["gate_up_proj"]}, unquantized=("mlp.gate",), mla=True,
    mla_fused_qkv_a=False, sliding=MODEL_WINDOW,
    router=Router(("score_function", "sigmoid"), ("norm_topk_prob", True), ("n_group", 1),
                  ("moe_router_enable_expert_bias", True, True)))

# Ricursive (ricursive.py RicursiveForCausalLM, registered 0.34 only; its config vLLM's own RicursiveConfig):
# RicursiveAttention fuses q / k / g (the output gate, where use_gated_attention; stored q_proj, k_proj, g_proj) into
# qkg_proj, a MergedColumnParallelLinear (the hf_to_vllm_mapper stacks them), v_proj a ColumnParallelLinear of its own
# (it may read a value residual), o_proj row, all with the quant config; it raises unless TP divides both head counts
# (no KV head replicated); its Attention self_attn.attn takes config.sliding_window on layer_types' sliding layers.
# RicursiveMLP gate / up -> gate_up_proj, down_proj row; ParallelLMHead with the quant config.
ARCHITECTURES["RicursiveForCausalLM"] = Arch(
    "vllm:ricursive.py", styles={"self_attn.v_proj": COLUMN},
    packed={"qkg_proj": ("q_proj", "k_proj", "g_proj"), "gate_up_proj": LLAMA_PACKED["gate_up_proj"]},
    last_shard_optional=("self_attn.qkg_proj",), attention_linear="qkg_proj",
    kv_heads_tp_error="Ricursive requires num_attention_heads ({heads}) and num_key_value_heads ({kv}) "
                      "to be divisible by the tensor parallel size ({tp}).")

# Ling / Ring 2.5 (Ling-2.5-1T, Ring-2.5-1T: BailingMoeV2_5ForCausalLM, model_type bailing_hybrid):
# bailing_moe_linear.py BailingMoeV25ForCausalLM, registered 0.25-0.34 (0.33 -> 0.34 unchanged, and its linear attention
# layers/mamba/linear/bailing_linear_attn.py). Layer i is MLA where (i + 1) % layer_group_size == 0, else linear
# attention (BailingMoELinearAttention, a LinearAttention mixer with its own state: query_key_value a QKVParallelLinear
# over num_attention_heads for q, k and v alike, g_proj a ColumnParallelLinear, dense row, all with the quant config; it
# asserts TP <= group_norm_size and divides it). BailingMoeV25MLAAttention: with q_lora_rank, q_a_proj +
# kv_a_proj_with_mqa -> fused_qkv_a_proj (disable_tp); without it, q_proj column and kv_a_proj_with_mqa a
# ReplicatedLinear; kv_b_proj column, the output o_proj row; its MLAAttention self_attn.mla_attn.mla_attn with the quant
# config. The MoE is bailing_moe.py's (GateLinear router without quant_config, shared experts) with
# renormalize=norm_topk_prob, True when unset; the LM head carries the quant config. load_weights renames what the
# checkpoint stores: attention. -> self_attn. and, on MLA layers, attention.dense -> self_attn.o_proj (module names the
# quant config's lists are matched against as stored: not modelled, fp8check matches the checkpoint's names); it drops
# model.mtp* and loads nothing into layers past num_hidden_layers (the MTP layers, BailingMoeV25MTPModel's). Not
# modelled: a transformers that knows bailing_hybrid (5.24: Ling-3.0's BailingHybridConfig) sets head_dim to
# qk_rope_head_dim, which the linear attention then takes for its heads; fp8check reads config.json's head_dim.
_BAILING_V25 = Arch(
    "vllm:bailing_moe_linear.py", mla=True, packed={"gate_up_proj": LLAMA_PACKED["gate_up_proj"]},
    styles={"attention.query_key_value": "QKVParallelLinear", "attention.dense": ROW,
            "attention.fused_qkv_a_proj": "MergedColumnParallelLinear"},
    disable_tp=("attention.fused_qkv_a_proj",), unquantized=("mlp.gate",),
    spec_layers="num_nextn_predict_layers", spec_prefix="model.mtp", sliding=MODEL_WINDOW,
    linear_attention_gate="attention.g_proj",
    router=Router(("score_function", "softmax"), ("norm_topk_prob", True), ("n_group", None),
                  ("moe_router_enable_expert_bias", True)),
    vllm_names=((".attention.dense", ".self_attn.o_proj", "kv_b_proj"), (".attention.", ".self_attn.")))
ARCHITECTURES["BailingMoeV2_5ForCausalLM"] = _BAILING_V25

# Ling / Ring 3.0 (BailingMoeV3ForCausalLM, model_type bailing_hybrid: transformers' BailingHybridConfig):
# bailing_moe_v3.py, registered 0.28-0.34, read in 0.33 and 0.34 (0.34 changes the MoE activation, below). Layer i
# is MLA where (i + 1) % layer_group_size == 0 or i is past the last whole group, else Kimi delta attention
# (_is_kda_layer). BailingMoeV3KimiDeltaAttention (a MambaBase mixer: no Attention, no KV cache): q / k / v / b_proj
# fused into qkvb_proj (a MergedColumnParallelLinear), f_proj and g_proj columns, o_proj row, q / k / v_conv1d
# ColumnParallelLinears without quant_config. BailingMoeV3MLAAttention: q_proj column (q_lora_rank unset) or q_a_proj
# + kv_a_proj_with_mqa -> fused_qkv_a_proj (disable_tp; load_weights' stacked mapping only, no
# packed_modules_mapping entry) and q_b_proj column, kv_a_proj_with_mqa replicated, kv_b_proj column, the output gate
# g_proj (gated_attention_proj_granularity_type: a row per head head_wise) column, dense row; the
# MultiHeadLatentAttentionWrapper's MLAAttention self_attn.mla_attn.mla_attn with the quant config. Below
# first_k_dense_replace a dense BailingMoeV3MLP (gate / up -> gate_up_proj); BailingMoeV3MoE: the router mlp.gate a
# GateLinear without quant_config (fp32; until 0.30 BailingMoeV3Gate, a module of its own with no quant method), its
# expert_bias the e_score_correction_bias, sigmoid grouped routing (num_expert_group=config.n_group, renormalize=True)
# and the shared experts. Under a block-FP8 Fp8Config the file sets ignored_layers_match_mode "suffix"
# (_configure_ling_fp8_quant_config: Ling's abbreviated ignore lists), builds a KDA layer's b_proj apart from qkv_proj
# where the list skips it (separate_b_proj: a b shard of num_heads rows cannot split into block rows) and, from 0.33,
# replicates a head-wise MLA g_proj it leaves quantized (replicate_g_proj). expert_swiglu_limit_list's layers get a
# clamped FusedMoE: activation "swiglustep" from 0.34, "silu" with swiglu_limit in 0.33. The mapper renames
# attention. -> self_attn.; load_weights skips layers past num_hidden_layers (the MTP layers, bailing_moe_v3_mtp.py's);
# the LM head carries the quant config. Not modelled: the block-FP8 shared experts padded to whole blocks per rank
# (_get_block_fp8_mlp_padded_intermediate_size: fp8check still refuses a shared expert that does not split into
# blocks), MXFP4 routed experts (quantization_config.routed_experts_quant_method, Fp8Config.store_dtype), and the
# KDA head size: a transformers that knows bailing_hybrid (BailingHybridConfig) sets head_dim to qk_rope_head_dim.
_BAILING_V3 = Arch(
    "vllm:bailing_moe_v3.py", mla=True, mla_packed=False,
    packed={"qkvb_proj": ("q_proj", "k_proj", "v_proj", "b_proj"), "qkv_proj": LLAMA_PACKED["qkv_proj"],
            "gate_up_proj": LLAMA_PACKED["gate_up_proj"]},
    styles={"attention.qkvb_proj": "MergedColumnParallelLinear", "attention.qkv_proj": "MergedColumnParallelLinear",
            "attention.dense": ROW, "attention.fused_qkv_a_proj": "MergedColumnParallelLinear"},
    styles_before=(("bailing-gate-linear", {"mlp.gate": TORCH_LINEAR}),),
    conv_linears=("attention.q_conv1d", "attention.k_conv1d", "attention.v_conv1d"),
    disable_tp=("attention.fused_qkv_a_proj",), unquantized=("mlp.gate",), spec_layers="num_nextn_predict_layers",
    sliding=MODEL_WINDOW, router=Router("sigmoid", True, ("n_group", 8), True),
    layer_swiglu_limits=True, limited_moe_activation="swiglustep",
    block_fp8_suffix_ignores=True, block_fp8_unfused={"qkvb_proj": "b_proj"},
    block_fp8_replicated=("attention.g_proj",),
    fields_before=(("bailing-v3-swiglustep", {"limited_moe_activation": None}),
                   ("bailing-v3-replicated-gate", {"block_fp8_replicated": ()})),
    hf_to_vllm=(("substr", ".attention.", ".self_attn."), ("prefix", "attention.", "self_attn.")))
ARCHITECTURES["BailingMoeV3ForCausalLM"] = _BAILING_V3
# Ling-3.0 VL (bailing_moe_v3_vl.py BailingMoeV3VLForConditionalGeneration, registered 0.30-0.34; 0.30 -> 0.34 changed
# only its processor and LoRA hooks): vLLM's own BailingMoeV3VLConfig (model_type bailing_moe_v3_vl: a bailing_hybrid
# text_config, a qwen3_moe_vit vision_config). The text model is BailingMoeV3ForCausalLM (the entry above) at
# language_model.; the mapper (the text model's | the VL's prefixes) moves model.visual -> visual, model.linear_proj ->
# linear_proj (.0 / .2 -> linear_fc1 / linear_fc2), lm_head -> language_model.lm_head and model. ->
# language_model.model.. The tower, BailingMoeV3VisionTransformer, is qwen3_vl.py's Qwen3_VisionTransformer with the
# quant config (attn.qkv a QKVParallelLinear over the vision heads, stored fused: packed_modules_mapping maps qkv to
# itself; attn.proj row, mlp.linear_fc1 / fc2), its deepstack mergers dropped and its merger a LayerNorm (no linear);
# the projector BailingMoeV3VLProjector a ColumnParallelLinear linear_fc1 and a RowParallelLinear linear_fc2 with the
# quant config. Each is built with quant_config=None under an Fp8Config whose ignored_layers holds its own prefix
# (visual, linear_proj). Not modelled: the tower and projector are built before the text model sets the block-FP8
# Fp8Config's ignored_layers_match_mode to "suffix" (bailing_moe_v3.py _configure_ling_fp8_quant_config), where fp8check
# matches every layer of the list in suffix mode.
_BAILING_V3_VISUAL = _QWEN3_VISUAL._replace(fp8_ignored_whole="visual")
_BAILING_V3_PROJECTOR = Tower("vllm:bailing_moe_v3_vl.py", ("model.linear_proj.", "linear_proj."), packed={},
                              styles={"linear_proj.0": COLUMN, "linear_proj.2": ROW}, fp8_ignored_whole="linear_proj")
ARCHITECTURES["BailingMoeV3VLForConditionalGeneration"] = _BAILING_V3._replace(
    packed={**_BAILING_V3.packed, "qkv": ("qkv",)}, towers=(_BAILING_V3_VISUAL, _BAILING_V3_PROJECTOR), hf_to_vllm=(
        *_BAILING_V3.hf_to_vllm, ("prefix", "model.visual", "visual"), ("prefix", "model.linear_proj", "linear_proj"),
        ("prefix", "linear_proj.0", "linear_proj.linear_fc1"), ("prefix", "linear_proj.2", "linear_proj.linear_fc2"),
        ("prefix", "lm_head", "language_model.lm_head"), ("prefix", "model.", "language_model.model.")))

# LongCat-Flash (longcat_flash.py LongcatFlashForCausalLM, registered 0.25-0.34; the file alike 0.33 / 0.34). Each
# FlashDecoderLayer holds two of deepseek_v2.py's DeepseekV2MLAAttention, `self_attn.0` / `self_attn.1` (q_a_proj +
# kv_a_proj_with_mqa -> fused_qkv_a_proj, q_b_proj / kv_b_proj columns, o_proj row, an MLAAttention each), two dense
# FlashMLPs `mlps.0` / `mlps.1` (gate / up -> gate_up_proj) and LongcatMoe `mlp`: the router mlp.router.classifier a
# GateLinear without quant_config over n_routed_experts + zero_expert_num logits, the FusedMoE over the n_routed_experts
# real experts only (get_expert_mapping), zero_expert_type handing routing to ZeroExpertRouter (router_factory.py:
# RoutingMethodType Unspecified on every platform, CPU included) with renormalize=False and the
# e_score_correction_bias. FlashModel.load_weights skips the MTP block (model.mtp.*), longcat_flash_mtp.py's draft.
# packed_modules_mapping is Llama's: fused_qkv_a_proj is no entry (Arch.mla_packed). Not modelled: load_weights has
# no KV-scale remap (deepseek_v2.py's maybe_remap_kv_scale_name), so a checkpoint's self_attn.N.k_scale fails its
# params_dict lookup (a KeyError) where fp8check warns the scale is not loaded; config.disable_quant_module
# ("self_attn" / "mlps" build those layers with quant_config=None; the released FP8 configs were not read).
_LONGCAT_FLASH = Arch(
    "vllm:longcat_flash.py", unquantized=("mlp.router.classifier",), mla=True, mla_packed=False,
    spec_prefix="model.mtp.", router=Router(renormalize=False, bias=True), sliding=MODEL_WINDOW)
ARCHITECTURES["LongcatFlashForCausalLM"] = _LONGCAT_FLASH
# LongCat-Flash-Lite (longcat_flash_ngram.py LongcatFlashNgramForCausalLM, registered 0.26-0.34; 0.33 refuses it
# without the V2 model runner, which vLLM selects unless VLLM_USE_V2_MODEL_RUNNER=0): FlashModel's layers and head, and
# NgramEmbedding model.ngram_embeddings: the embedders' tables one VocabParallelEmbedding, the post_projs loaded into a
# plain nn.Parameter (oe_projection), no linear (modules.EMBEDDINGS); its hf_to_vllm_mapper maps model.mtp. to None.
ARCHITECTURES["LongcatFlashNgramForCausalLM"] = _LONGCAT_FLASH._replace(source="vllm:longcat_flash_ngram.py")

# HY-V4 (vllm.models.hy_v4, registered 0.29-0.34: nvidia/model.py on CUDA and CPU, amd/model.py on ROCm, the same
# modules; XPU refused on import; 0.33 -> 0.34 changed PP buffers and the FP8 decode padding, not the modules).
# nvidia/attention.py HYV4MLAAttention: q_a_proj + kv_a_proj_with_mqa fused into fused_qkv_a_proj (a
# MergedColumnParallelLinear with disable_tp), q_b_proj / kv_b_proj / linear_gate (gated_mla) columns, o_proj row; its
# MLAAttention is self_attn.mla_attn, sparse on the layers whose layer_types entry is a sparse one (sparse_layer_ids,
# with index_topk set); the sink-capable HYV4FlashMLASparseBackend keeps the name FLASHMLA_SPARSE. Sparse layers that
# compute their own top-k (indexer_types "full") build deepseek_v2.py's lightning indexer: wq_b a quantized
# ReplicatedLinear, wk + weights_proj fused into wk_weights_proj (quant_config=None, disable_tp; an FP8 wk is
# dequantized at load, _try_load_fp8_indexer_wk). nvidia/moe.py: dense mlp and shared_experts gate / up ->
# gate_up_proj; HYV4MoEFused's router mlp.gate a GateLinear without quant_config, sigmoid routing with the
# e_score_correction_bias, renormalize=norm_topk_prob, use_grouped_topk with num_expert_group=1. hc.py: each layer's
# hc_attn_layer / hc_mlp_layer.hc_pre.hc_fn and model.hc_head.hc_head_fn ReplicatedLinear without quant_config
# (enable_ihc, vLLM's HYV4Config default true), stored without ".weight". load_weights drops model.mtp_layers.* and
# the layers past num_hidden_layers (HYV4MTP is the draft).
_HY_V4_INDEXER = {"indexer.wq_b": REPLICATED, "indexer.wk_weights_proj": "MergedColumnParallelLinear"}
_HY_V4_HC = ("hc_pre.hc_fn", "hc_head.hc_head_fn")
ARCHITECTURES["HYV4ForCausalLM"] = Arch(
    "vllm:models/hy_v4",
    moe_swiglu_limit=True, swiglu_limit_default=10.0,  # nvidia/moe.py: getattr(config, "swiglu_limit"), HYV4Config 10.0
    packed={"gate_up_proj": LLAMA_PACKED["gate_up_proj"], "fused_qkv_a_proj": ("q_a_proj", "kv_a_proj_with_mqa"),
            "wk_weights_proj": ("wk", "weights_proj")},
    styles={**_HY_V4_INDEXER, "self_attn.fused_qkv_a_proj": "MergedColumnParallelLinear",
            "self_attn.linear_gate": COLUMN, **{tail: REPLICATED for tail in _HY_V4_HC}},
    unquantized=("mlp.gate",), unquantized_layers=("indexer.wk_weights_proj", *_HY_V4_HC), bare_linears=_HY_V4_HC,
    disable_tp=("indexer.wk_weights_proj", "self_attn.fused_qkv_a_proj"), dequantized=("indexer.wk",),
    mla=True, sparse_mla=True, sparse_layer_types=("sparse_attention", "sparse", "indexed_attention",
                                                   "deepseek_sparse_attention"),
    mla_attention="mla_attn", sink_mla_backend="FLASHMLA_SPARSE",
    sparse_refusal="HYV4 sparse attention was requested, but no valid sparse MLA backend is available for current "
                   "runtime/config. Refusing to fall back to dense attention.",
    spec_layers="num_nextn_predict_layers", spec_prefix="model.mtp_layers.",
    sliding=MODEL_WINDOW, router=Router("sigmoid", ("norm_topk_prob", True), 1, True))

# MiMo-V2-Flash (mimo_v2.py MiMoV2FlashForCausalLM, registered 0.25-0.34; 0.33 -> 0.34 changed only which requested
# backend the DiffKV layers keep). MiMoV2FlashDecoderLayer: a layer whose hybrid_layer_pattern entry is 1 is a sliding
# layer (swa_num_attention_heads, swa_num_key_value_heads, swa_head_dim, swa_v_head_dim; window sliding_window_size;
# sinks with add_swa_attention_sink_bias), the others full attention (num_attention_heads, num_key_value_heads,
# head_dim, v_head_dim; no window: from 0.32 the layer resets cache_config.sliding_window to None); q / k / v ->
# qkv_proj (QKVParallelLinear with v_head_size), o_proj row. V's head size differing from K's, MiMoV2Attention hands
# Attention its backend itself (diff_kv: FLASH_ATTN_DIFFKV where FA3 / FA4 serves, else TRITON_ATTN_DIFFKV). Layers
# whose moe_layer_freq entry is true are MiMoV2MoE: the router mlp.gate a GateLinear without quant_config
# (moe_router_dtype, fp32), no shared experts, sigmoid scoring with the e_score_correction_bias, use_grouped_topk over
# n_group groups, renormalize=norm_topk_prob (read bare; transformers' MiMoV2FlashConfig defaults both); the others a
# dense mlp (gate / up -> gate_up_proj). load_weights skips every name containing "mtp" (model.mtp.layers.*, the
# draft mimo_v2_mtp.py's MiMoV2MTP loads them).
# Its subclass MiMoV2ForCausalLM (MiMo-V2-Pro, registered 0.25-0.34): the same model, packed_modules_mapping
# qkv_proj -> [qkv_proj]: its remote code saves q / k / v fused, each layer's rows from its own heads and head sizes
# (ModelConfig.attention_geometry), pre-sharded in num_key_value_heads chunks of [Q K V] that load_weights regathers
# per rank (_try_load_fp8_qkv_proj / _shard_fp8_qkv_proj: block scales one grid or tiled per chunk; a float8 weight
# without a weight_scale_inv is never loaded: routing/integrity.py). From 0.33 MiMoV2FlashDecoderLayer passes
# fused_qkv_chunks (attention_projection_layout "fused_qkv" and a quant config with weight_block_size) and
# MiMoV2Attention builds a MergedColumnParallelLinear [Q | chunks x (K V pad)] where _fused_qkv_kv_chunk_rows is not 0
# (Arch.fused_qkv_chunks, modules.at_tp).
ARCHITECTURES["MiMoV2FlashForCausalLM"] = Arch(
    "vllm:mimo_v2.py", unquantized=("mlp.gate",), spec_substrings=("mtp",), sliding=HYBRID_PATTERN,
    layer_geometry=True, diff_kv=True, swa_sinks=True,
    router=Router("sigmoid", ("norm_topk_prob", True), ("n_group", 1), True))
ARCHITECTURES["MiMoV2ForCausalLM"] = ARCHITECTURES["MiMoV2FlashForCausalLM"]._replace(
    packed={"qkv_proj": ("qkv_proj",), "gate_up_proj": LLAMA_PACKED["gate_up_proj"]}, fused_qkv_chunks=True)
# MiMo-V2-Omni (mimo_v2_omni.py MiMoV2OmniForCausalLM, registered 0.25-0.34; 0.33 -> 0.34 changed only the vision
# attention's rank under a data-parallel encoder). vLLM's MimoV2ModelArchConfigConvertor builds it for any mimo_v2 /
# mimo_v2_flash config with a vision_config (checkpoint/local.py MODEL_TYPE_REWRITES). MiMo-V2-Flash's model under
# language_model. with the model's quant config (its mapper: model. / model.language_model. -> language_model.model.,
# lm_head. -> language_model.lm_head.; "mtp" names skipped by MiMoV2FlashForCausalLM.load_weights, audio_tokenizer.
# mapped to None from 0.29: its tensors live in a folder of their own), and two towers built without quant_config:
# - MiMoVisionTransformer (visual, model.visual. mapped there): blocks.N.attn.qkv stored fused, a QKVParallelLinear
#   over vision_config's num_heads and num_key_value_heads (qk_channels, kv_channels), attn.proj row; mlp gate / up
#   -> gate_up_proj (its own mapper's orig_to_new_stacked), down_proj row; merger.mlp.0 column, merger.mlp.2 row.
# - mimo_audio.py's MimoAudioEncoder (audio_encoder, speech_embeddings. mapped there): transformers' own Qwen2Model
#   and an nn.Linear projection (AudioProjection's mlp.0 / mlp.2 with projection_layers 2): torch nn.Linear only.
# The class is SupportsQuant without a packed_modules_mapping and MiMoV2FlashForCausalLM no SupportsQuant, so the
# quant config's packed_modules_mapping stays empty: its lists are matched against qkv_proj / gate_up_proj themselves
# (Arch.quant_packed); an ignore list naming q / k / v leaves qkv_proj quantized.
_MIMO_V2_OMNI_VISUAL = Tower("vllm:mimo_v2_omni.py", ("visual.", "model.visual."), packed=_QWEN_VL_PACKED,
                             vision_heads=True, quantized=False,
                             styles={"attn.qkv": "QKVParallelLinear", "attn.proj": ROW, "mlp.0": COLUMN, "mlp.2": ROW})
_MIMO_AUDIO_ENCODER = Tower("vllm:mimo_audio.py", ("audio_encoder.", "speech_embeddings."), packed={}, quantized=False,
                            styles={leaf: TORCH_LINEAR for leaf in ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                                                    "up_proj", "down_proj", "projection",
                                                                    "projection.mlp.0", "projection.mlp.2")})
ARCHITECTURES["MiMoV2OmniForCausalLM"] = ARCHITECTURES["MiMoV2FlashForCausalLM"]._replace(
    source="vllm:mimo_v2_omni.py", towers=(_MIMO_V2_OMNI_VISUAL, _MIMO_AUDIO_ENCODER), quant_packed=False,
    spec_prefix="audio_tokenizer.",
    hf_to_vllm=(("prefix", "speech_embeddings.", "audio_encoder.speech_embeddings."), _VL_TEXT[0],
                ("prefix", "model.visual.", "visual."), _VL_TEXT[1], ("prefix", "model.", "language_model.model.")))
# MiMo-7B (mimo.py MiMoForCausalLM, registered 0.25-0.34, 0.33 / 0.34 alike): qwen2.py's Qwen2Model and head (MiMoModel
# only moves the last residual add); the MTP layers under model.mtp_layers. are dropped (from 0.29 the mapper's prefix
# to None, before AutoWeightsLoader's skip_prefixes; mimo_mtp.py's MiMoMTP is the draft). Its config class
# (configuration_mimo.py, remote code) is Qwen2Config's subclass: HF_WINDOWS["mimo"].
ARCHITECTURES["MiMoForCausalLM"] = Arch("vllm:mimo.py", spec_prefix="model.mtp_layers.", **_QWEN2_MODEL)
# Command-R / Command-R+ (CohereForCausalLM) and Command-R7B / Command-A (Cohere2ForCausalLM): both commandr.py
# CohereForCausalLM (registered 0.25-0.34, 0.33 / 0.34 alike). CohereDecoderLayer runs attention and MLP in parallel
# off one input_layernorm: q / k / v -> qkv_proj, o_proj row, gate / up -> gate_up_proj, down_proj row (Llama's
# fusions). use_qk_norm (Command-R+) adds q_norm / k_norm, LayerNorms of shape [heads, head_dim] (2-D weights, no
# linears). The logits are always embed_tokens' (LogitsProcessor with logit_scale, no ParallelLMHead whatever
# tie_word_embeddings says); hf_to_vllm_mapper maps the "lm_head" prefix to None (a stored lm_head never loads) and
# every name holding "_quantizer." (ModelOpt's quantizer state).
# Cohere2's CohereAttention takes per_layer_sliding_window = config.sliding_window + 1 on the layers whose
# config.layer_types entry is "sliding_attention" (Cohere2Config fills them from sliding_window_pattern, 4).
_COHERE = Arch("vllm:commandr.py", spec_prefix="lm_head", spec_substrings=("_quantizer.",),
               matrix_norms=("q_norm", "k_norm"), window_offset=1)
ARCHITECTURES.update({"CohereForCausalLM": _COHERE, "Cohere2ForCausalLM": _COHERE})
# Command-A+ (cohere2_moe.py Cohere2MoeForCausalLM, registered 0.25-0.34, 0.33 / 0.34 alike). Cohere2MoeAttention:
# q / k / v -> qkv_proj, o_proj row, config.sliding_window + 1 (from 0.29; before, as commandr.py's, the window
# itself, which neither entry models) on the "sliding_attention" layers of config.layer_types (Cohere2MoeConfig fills
# them: first_k_dense_replace dense-prefix layers by prefix_dense_sliding_window_pattern, 1, the rest by
# sliding_window_pattern, 4). config.mlp_layer_types' "dense"
# layers hold a Cohere2MoeMLP (gate / up -> gate_up_proj, down_proj row), the "sparse" ones Cohere2Moe: the router
# mlp.gate a GateLinear (quant_config=None), shared_experts a Cohere2MoeMLP, the FusedMoE routed by
# token_choice_with_bias (sigmoid, top-k, renormalized by norm_topk_prob, default true) when
# config.expert_selection_fn is "sigmoid", else FusedMoE's softmax (custom_routing_router.py: the custom function's
# RoutingMethodType is SigmoidRenorm / Sigmoid, what get_routing_method_type gives sigmoid without a bias). The file
# passes FusedMoE no scoring_func: on CPU (0.30+, router/cpu_router.py CPURouter) the type is softmax's,
# RenormalizeNaive, which CPUExpertsFp8 routes (experts/cpu_moe.py _supports_routing_method). As
# commandr.py, no ParallelLMHead (the logits are embed_tokens') and the mapper drops the "lm_head." prefix (with its
# dot, where commandr.py's drops "lm_head").
ARCHITECTURES["Cohere2MoeForCausalLM"] = Arch(
    "vllm:cohere2_moe.py", unquantized=("mlp.gate",), spec_prefix="lm_head.", window_offset=1,
    router=Router(renormalize=("norm_topk_prob", True), custom=("expert_selection_fn", "softmax")))
# Command-A-Vision (cohere2_vision.py Cohere2VisionForConditionalGeneration, registered 0.25-0.34, 0.33 / 0.34 alike):
# siglip.py's SiglipVisionModel built with the quant config (as Gemma-3's) and use_head False, whose own mapper drops
# the attention-pooling head (vision_model.head.*, which transformers' SiglipVisionTransformer builds and saves unless
# vision_config.vision_use_head is false); Cohere2VisionMultiModalProjector built without quant_config: linear_1 a
# MergedColumnParallelLinear over alignment_intermediate_size // 2 twice (SwiGLU, stored as one tensor), linear_2 row;
# the text model of text_config's class (Cohere2ForCausalLM: commandr.py) under language_model, the mapper moving
# model.language_model. there (a stored top-level lm_head is not mapped: AutoWeightsLoader refuses it, not modelled,
# as tie_word_embeddings, true by default, leaves none).
_COHERE2_VISION_PROJECTOR = Tower("vllm:cohere2_vision.py", ("multi_modal_projector.", "model.multi_modal_projector."),
                                  styles={"linear_1": "MergedColumnParallelLinear", "linear_2": ROW}, quantized=False)
ARCHITECTURES["Cohere2VisionForConditionalGeneration"] = Arch(
    "vllm:cohere2_vision.py", towers=(_SIGLIP._replace(dropped=("vision_tower.vision_model.head.",)),
                                      _COHERE2_VISION_PROJECTOR), registered_text_model=True, hf_to_vllm=(
        ("prefix", "model.vision_tower.", "vision_tower."),
        ("prefix", "model.multi_modal_projector.", "multi_modal_projector."), _VL_TEXT[0]))
# LLaVA (llava.py LlavaForConditionalGeneration, registered 0.25-0.34; llava.py, llava_next.py, llava_onevision.py,
# clip.py alike 0.33 -> 0.34): init_vision_tower_for_llava builds the tower of vision_config's class at vision_tower.
# with the model's quant config, up to the deepest vision_feature_layer (-2 by default: llava-1.5's last CLIP layer is
# never built and its tensors never loaded; Tower.layers_path) and without its post-norm; CLIP (clip.py CLIPVisionModel)
# and SigLIP (siglip.py SiglipVisionModel, use_head False: its mapper drops an attention-pooling head.*) under
# vision_model.encoder.layers.N, self_attn q / k / v -> qkv_proj over the vision heads, out_proj row, mlp fc1 column /
# fc2 row; Pixtral-HF (pixtral.py PixtralHFVisionModel: HF-format Pixtral-12B) as in Mistral-3.
# LlavaMultiModalProjector: linear_1 ColumnParallelLinear, linear_2 RowParallelLinear, both with the quant config. The
# language model is text_config's class (init_vllm_registered_model; Pixtral-12B's text_config, a mistral one without
# architectures, is given MistralForCausalLM) under language_model; the mapper moves transformers >= 4.52's names.
_CLIP = Tower("vllm:clip.py", ("vision_tower.", "model.vision_tower."), vision_heads=True,
              layers_path="vision_model.encoder.layers")
_LLAVA_TOWERS = {"clip_vision_model": _CLIP, "pixtral": _PIXTRAL,
                 "siglip_vision_model": _SIGLIP._replace(dropped=("vision_tower.vision_model.head.",),
                                                         layers_path="vision_model.encoder.layers")}
_LLAVA_ROOTS = ("multi_modal_projector.", "model.multi_modal_projector.")
_LLAVA_NAMES = (_VL_TEXT[0], ("prefix", "model.vision_tower.", "vision_tower."),
                ("prefix", "model.multi_modal_projector.", "multi_modal_projector."), _VL_TEXT[1])
# LLaVA-NeXT's mapper also moves model.image_newline (an nn.Parameter, no linear).
_LLAVA_NEXT_NAMES = (*_LLAVA_NAMES[:3], ("prefix", "model.image_newline", "image_newline"), _VL_TEXT[1])
_LLAVA_PROJECTOR = Tower("vllm:llava.py", _LLAVA_ROOTS, styles={"linear_1": COLUMN, "linear_2": ROW})
_LLAVA = Arch("vllm:llava.py", towers=(_LLAVA_PROJECTOR,), vision_towers=_LLAVA_TOWERS, registered_text_model=True,
              hf_to_vllm=_LLAVA_NAMES)
ARCHITECTURES.update({
    "LlavaForConditionalGeneration": _LLAVA,
    # llava_next.py LlavaNextForConditionalGeneration: LLaVA's tower and projector (linear_1 over the vision hidden
    # size times the feature layers where vision_feature_layer is a list: Granite-Vision) and an image_newline.
    "LlavaNextForConditionalGeneration": _LLAVA._replace(source="vllm:llava_next.py", hf_to_vllm=_LLAVA_NEXT_NAMES),
    # llava_next_video.py LlavaNextVideoForConditionalGeneration: LLaVA's tower; LlavaNextMultiModalProjector's
    # linear_1 / linear_2 are torch nn.Linears (never quantized); the pooler has no weights.
    "LlavaNextVideoForConditionalGeneration": _LLAVA._replace(
        source="vllm:llava_next_video.py", hf_to_vllm=_LLAVA_NEXT_NAMES,
        towers=(Tower("vllm:llava_next_video.py", _LLAVA_ROOTS,
                      styles={"linear_1": TORCH_LINEAR, "linear_2": TORCH_LINEAR}),)),
    # llava_onevision.py LlavaOnevisionForConditionalGeneration (SigLIP, vision_feature_layer -1 by default):
    # LlavaOnevisionMultiModalProjector's linear_1 / linear_2 torch nn.Linears. The class has no packed mapping and is
    # no SupportsQuant; its text model's class (Qwen2ForCausalLM, a SupportsQuant) gives the quant config its own.
    "LlavaOnevisionForConditionalGeneration": _LLAVA._replace(
        source="vllm:llava_onevision.py", hf_to_vllm=_LLAVA_NEXT_NAMES,
        towers=(Tower("vllm:llava_onevision.py", _LLAVA_ROOTS,
                      styles={"linear_1": TORCH_LINEAR, "linear_2": TORCH_LINEAR}),)),
})
# Idefics3 / SmolVLM (idefics3.py Idefics3ForConditionalGeneration, smolvlm.py SmolVLMForConditionalGeneration, its
# subclass building the same modules; registered 0.25-0.34, alike 0.33 -> 0.34), no weights mapper: the tower
# (idefics2_vision_model.py Idefics2VisionTransformer, model.vision_model.encoder.layers.N) with the quant config,
# self_attn q / k / v -> qkv_proj over the vision heads, out_proj row, mlp fc1 column / fc2 row; the connector's
# modality_projection.proj a ReplicatedLinear with the quant config; the text model llama.py's LlamaModel (whatever
# text_config says) at model.text_model, the LM head lm_head with the quant config.
_IDEFICS3 = Arch("vllm:idefics3.py", towers=(
    Tower("vllm:idefics2_vision_model.py", ("model.vision_model.",), vision_heads=True),
    Tower("vllm:idefics3.py", ("model.connector.",), styles={"modality_projection.proj": REPLICATED})))
# PaliGemma / PaliGemma-2 (paligemma.py PaliGemmaForConditionalGeneration, 0.25-0.34; 0.34 changed only its forward):
# SiglipVisionModel (whole, use_head False: the pooling head.* dropped) with the quant config; the projector's linear a
# torch nn.Linear; the language model GemmaForCausalLM where text_config's model_type is gemma, else Gemma2ForCausalLM
# (the file overwrites text_config.architectures: CAUSAL_LM_CLASSES of those two types) under language_model.
_PALIGEMMA = Arch("vllm:paligemma.py", towers=(
    _SIGLIP._replace(dropped=("vision_tower.vision_model.head.",)),
    Tower("vllm:paligemma.py", _LLAVA_ROOTS, styles={"linear": TORCH_LINEAR})), registered_text_model=True,
    hf_to_vllm=_LLAVA_NAMES)
ARCHITECTURES.update({"Idefics3ForConditionalGeneration": _IDEFICS3,
                      "SmolVLMForConditionalGeneration": _IDEFICS3._replace(source="vllm:smolvlm.py"),
                      "PaliGemmaForConditionalGeneration": _PALIGEMMA})
# Nemotron-NAS (nemotron_nas.py DeciLMForCausalLM, registered 0.25-0.34, 0.33 / 0.34 alike: Llama-3.x-Nemotron-Super
# / Ultra; config class remote code, model_type nemotron-nas). One DeciLMDecoderLayer per config.block_configs entry:
# llama.py's attention (q / k / v -> qkv_proj, o_proj row) with num_attention_heads // attention.n_heads_in_group KV
# heads, none where attention.no_op (no Attention, no KV cache: HasNoOps); LlamaMLP (gate / up -> gate_up_proj,
# down_proj row) of the block's own width (ffn_mult or intermediate_size), none where ffn.no_op. The KV heads of each
# layer are read from its k_proj (layer_geometry); the ParallelLMHead is built with the quant config, as Llama's.
ARCHITECTURES["DeciLMForCausalLM"] = Arch("vllm:nemotron_nas.py", layer_geometry=True)
# PLaMo-3 (plamo3.py Plamo3ForCausalLM, registered 0.25-0.34; its linears alike 0.25 -> 0.33): the hub's remote-code
# names, model.layers.layers.N (Plamo3Decoder inside Plamo3Model) .mixer.qkv_proj (QKVParallelLinear) / .mixer.o_proj
# and .mlp.gate_up_proj / .mlp.down_proj, stored fused (packed_modules_mapping maps each to itself); QK-norm and the
# four sandwich norms add no linear; per_layer_sliding_window from config.interleaved_sliding_window (the remote
# Plamo3Config's: every sliding_window_pattern-th layer full, HF_WINDOWS["plamo3"]). Plamo3AttentionMixer builds
# Attention without quant_config (no KV cache method, whatever the format). 0.34 builds the ParallelLMHead with the
# quant config (prefix lm_head); before, without it.
ARCHITECTURES["Plamo3ForCausalLM"] = Arch(
    "vllm:plamo3.py", packed={"qkv_proj": ("qkv_proj",), "gate_up_proj": ("gate_up_proj",)},
    attention_quant_config=False, fields_before=(("plamo3-head-quant", {"head_quant_config": False}),))
# InternLM2 (internlm2.py InternLM2ForCausalLM, registered 0.25-0.34, the file alike 0.33 -> 0.34; config class remote
# code, model_type internlm2): the hub's names, attention.wqkv stored fused (packed wqkv -> [wqkv]; a QKVParallelLinear
# of head size hidden_size // heads, its Attention attention.attn with the quant config), attention.wo row,
# feed_forward.w1 / w3 -> gate_up_proj (the mapper's orig_to_new_stacked, packed gate_up_proj -> [w1, w3]),
# feed_forward.w2 row; the embedding model.tok_embeddings and the ParallelLMHead `output`, with the quant config.
ARCHITECTURES["InternLM2ForCausalLM"] = Arch(
    "vllm:internlm2.py", packed={"wqkv": ("wqkv",), "gate_up_proj": ("w1", "w3")},
    styles={"attention.wqkv": "QKVParallelLinear", "attention.wo": ROW, "feed_forward.w2": ROW,
            "output": "ParallelLMHead"})
# ZAYA1 (zaya.py ZayaForCausalLM, registered 0.34 only): every linear a ReplicatedLinear, none fused: ZayaCCA's
# self_attn.qkv_proj.{q_proj, k_proj, v_proj_current, v_proj_delayed} (a Mamba-state layer whose conv_qk_* are
# nn.Conv1d) and ZayaAttention's o_proj with the quant config; ZayaRouter's mlp.gate.down_proj (hidden_size ->
# router_hidden_size) and router_mlp.{fc1, fc2, out_proj} (-> num_experts + 1) without it (own_widths); the experts one
# FusedMoE (precomputed routing, SiLU). ZayaAttention's Attention self_attn.attn has config.json's heads / head_dim
# (attention_linear: o_proj, the one linear directly under self_attn), undivided at any TP (attention_replicated),
# and config.sliding_window where config.layer_types[i] == "hybrid_sliding".
_ZAYA_ROUTER = tuple(f"mlp.gate.{leaf}" for leaf in ("down_proj", "router_mlp.fc1", "router_mlp.fc2",
                                                      "router_mlp.out_proj"))
_ZAYA_ATTENTION = tuple(f"self_attn.{leaf}" for leaf in (
    "qkv_proj.q_proj", "qkv_proj.k_proj", "qkv_proj.v_proj_current", "qkv_proj.v_proj_delayed", "o_proj"))
ARCHITECTURES["ZayaForCausalLM"] = Arch(
    "vllm:zaya.py", packed={}, styles=dict.fromkeys(_ZAYA_ATTENTION + _ZAYA_ROUTER, REPLICATED),
    unquantized=_ZAYA_ROUTER, own_widths=_ZAYA_ROUTER, attention_linear="o_proj",
    attention_replicated=True, sliding=ZAYA_LAYER_TYPES)

# Phi-3.5-MoE (phimoe.py PhiMoEForCausalLM, registered 0.25-0.34, the file alike 0.33 -> 0.34): Llama's attention (q /
# k / v -> qkv_proj with biases, o_proj row; its Attention takes no per-layer window), every layer a PhiMoE block:
# block_sparse_moe.gate a GateLinear without quant_config, the experts a FusedMoE of the checkpoint's w1 / w3 / w2
# (ckpt_names) with renormalize=False and phimoe_routing_function (sparsemixer top-2), a custom_routing_function
# whose CustomRoutingRouter.routing_method_type is Custom; the ParallelLMHead (bias) built with quant_config=None.
ARCHITECTURES["PhiMoEForCausalLM"] = Arch(
    "vllm:phimoe.py", packed=_QKV_ONLY, unquantized=("block_sparse_moe.gate",),
    router=Router(renormalize=False, custom="Custom"), head_quant_config=False, sliding=MODEL_WINDOW)
# Nemotron-4 / Minitron (nemotron.py NemotronForCausalLM, registered 0.25-0.34, alike 0.33 / 0.34): q / k / v ->
# qkv_proj (packed_modules_mapping holds no gate_up_proj), o_proj row; a non-gated MLP, up_proj a ColumnParallelLinear
# and down_proj row (squared ReLU); its Attention takes no per-layer window; the ParallelLMHead with the quant config.
ARCHITECTURES["NemotronForCausalLM"] = Arch("vllm:nemotron.py", packed=_QKV_ONLY, sliding=MODEL_WINDOW)
# Apertus (apertus.py ApertusForCausalLM, registered 0.25-0.34, alike 0.33 / 0.34): nemotron.py's linears (qkv_proj with
# QK-norm, o_proj row; a non-gated xIELU MLP, up_proj column, down_proj row), the window on the layers
# config.layer_types marks sliding; the ParallelLMHead with the quant config.
ARCHITECTURES["ApertusForCausalLM"] = Arch("vllm:apertus.py", packed=_QKV_ONLY)
# DeepSeek-MoE v1 (deepseek_v2.py DeepseekForCausalLM, a DeepseekV2ForCausalLM; registered 0.25-0.34, alike 0.33 /
# 0.34; config remote code, model_type deepseek): use_mha (config.model_type == "deepseek") builds DeepseekAttention,
# q / k / v -> qkv_proj (packed_modules_mapping gains qkv_proj) and o_proj row, both constructed WITHOUT a prefix: the
# quant config is asked with "" (no ignore / exclude entry names them), its Attention self_attn.attn with the quant
# config and no per-layer window; DeepSeek-V2's MLP / MoE (dense layers below first_k_dense_replace, then mlp.gate an
# unquantized GateLinear, FusedMoE routed as DeepSeek-V2's, shared_experts) and LM head (with the quant config).
ARCHITECTURES["DeepseekForCausalLM"] = _DEEPSEEK._replace(
    packed=LLAMA_PACKED, mla=False,
    quant_prefixes=(("regex", r"^(?:.*\.)?self_attn\.(?:q_proj|k_proj|v_proj|o_proj)\.weight$", ".weight"),))
# DeepSeek-OCR (deepseek_ocr.py DeepseekOCRForCausalLM, registered 0.25-0.34; 0.34 drops only its n-gram logits
# processor): vLLM's DeepseekVLV2Config (language_config as transformers' DeepseekV2Config), whose released text model
# has no MLA (qk_nope_head_dim = qk_rope_head_dim = 0: deepseek_v2.py's use_mha, DeepSeek-MoE v1's attention above)
# under language_model, the mapper moving model.embed_tokens / layers / norm and lm_head there and dropping the
# other names' model.; the towers fixed whatever config.json says (deepencoder.py): build_sam_vit_b's SAM ViT-B
# (sam_model: attn.qkv / attn.proj and mlp.lin1 / lin2 torch nn.Linears) and DeepCLIPVisionTransformer (CLIP-L / 14,
# 24 layers, with the quant config: self_attn.qkv_proj stored fused, a QKVParallelLinear over 16 heads, out_proj row,
# mlp.fc1 column / fc2 row), whose CLIPEncoder sits at vision_model.transformer but is built with the prefix
# vision_model.encoder, which the quant config's lists are matched against; MlpProjector's projector.layers (the
# released projector_type linear) a torch nn.Linear. The class (SupportsLoRA) declares no packed_modules_mapping.
_DEEPSEEK_OCR_NAMES = tuple(("prefix", f"model.{part}.", f"language_model.model.{part}.")
                            for part in ("embed_tokens", "layers", "norm"))
ARCHITECTURES["DeepseekOCRForCausalLM"] = ARCHITECTURES["DeepseekForCausalLM"]._replace(
    source="vllm:deepseek_ocr.py", quant_packed=False,
    hf_to_vllm=(*_DEEPSEEK_OCR_NAMES, ("prefix", "lm_head.", "language_model.lm_head."), ("prefix", "model.", "")),
    quant_prefixes=(*ARCHITECTURES["DeepseekForCausalLM"].quant_prefixes,
                    ("prefix", "vision_model.transformer.", "vision_model.encoder.")),
    towers=(Tower("vllm:deepencoder.py", ("model.sam_model.",), packed={},
                  styles={leaf: TORCH_LINEAR for leaf in ("attn.qkv", "attn.proj", "mlp.lin1", "mlp.lin2")}),
            Tower("vllm:deepencoder.py", ("model.vision_model.",), packed={"qkv_proj": ("qkv_proj",)},
                  vision_heads=True, styles={"self_attn.qkv_proj": "QKVParallelLinear"}),
            Tower("vllm:deepseek_ocr.py", ("model.projector.",), packed={}, styles={"layers": TORCH_LINEAR})))
# ChatGLM-2 / 3 and GLM-4-9B (chatglm.py ChatGLMForCausalLM, registered as ChatGLMModel and
# ChatGLMForConditionalGeneration 0.25-0.34, alike 0.33 / 0.34; vLLM's own ChatGLMConfig, model_type chatglm): the
# checkpoint's names under transformer.encoder.layers.N, self_attention.query_key_value stored fused (packed
# query_key_value -> [query_key_value]; a QKVParallelLinear of kv_channels-wide heads, multi_query_group_num KV heads),
# self_attention.dense row, its Attention self_attention.attn with the quant config and no per-layer window;
# mlp.dense_h_to_4h stored fused (a MergedColumnParallelLinear over [ffn_hidden_size] x 2), mlp.dense_4h_to_h row; the
# ParallelLMHead transformer.output_layer with the quant config. A config with a vision_config is refused (the
# RuntimeError naming GLM4VForCausalLM), not modelled.
_CHATGLM = Arch("vllm:chatglm.py", packed={"query_key_value": ("query_key_value",), "dense_h_to_4h": ("dense_h_to_4h",)},
                styles={"self_attention.query_key_value": "QKVParallelLinear", "self_attention.dense": ROW,
                        "output_layer": "ParallelLMHead"},
                equal_parts={"mlp.dense_h_to_4h": 2}, sliding=MODEL_WINDOW)
ARCHITECTURES.update({"ChatGLMModel": _CHATGLM, "ChatGLMForConditionalGeneration": _CHATGLM})
# MiniCPM / MiniCPM4 (minicpm.py MiniCPMForCausalLM, registered 0.25-0.34, alike 0.33 / 0.34; config remote code,
# model_type minicpm), Solar Pro (solar.py SolarForCausalLM; remote code, model_type solar: bskcn_* skip connections,
# no linears) and Orion (orion.py OrionForCausalLM; remote code, model_type orion): Llama's names and fusions (q / k /
# v -> qkv_proj, gate / up -> gate_up_proj, o_proj / down_proj row; solar.py and orion.py by the hf_to_vllm_mapper's
# orig_to_new_stacked), Attention with the quant config and no per-layer window, the ParallelLMHead with the quant
# config. OrionForCausalLM (no SupportsQuant) declares no packed_modules_mapping: the quant config's stays empty, so its
# lists are matched against the fused names (quant_packed). A MiniCPM config with num_experts builds MiniCPMMoE, whose
# experts are bare nn.Parameters (ws / w2s, no quant method): not modelled (no FP8 release).
ARCHITECTURES.update({"MiniCPMForCausalLM": Arch("vllm:minicpm.py", sliding=MODEL_WINDOW),
                      "SolarForCausalLM": Arch("vllm:solar.py", sliding=MODEL_WINDOW),
                      "OrionForCausalLM": Arch("vllm:orion.py", sliding=MODEL_WINDOW, quant_packed=False)})

# vLLM's Transformers modelling backend (transformers/base.py recursive_replace, utils.py replace_linear_class)
# serves the architectures registry.py lists in _TRANSFORMERS_SUPPORTED_MODELS: each nn.Linear of transformers'
# model becomes the class its config's base_model_tp_plan names (colwise / colwise_gather_output:
# ColumnParallelLinear; rowwise / rowwise_split_input: RowParallelLinear), any Linear the plan does not name a
# ReplicatedLinear, all with the model's quant config; the QKVFuser / GLUFuser fuse q/k/v and gate/up into qkv_proj /
# gate_up_proj and build the projection after them as rowwise, whatever the plan says (fusers/qkv.py, fusers/glu.py:
# StableLM's config has no plan); TransformersMoEForCausalLM (moe.py) builds the experts as a FusedMoE. The plans
# are transformers 5.24's (tests/test_families.py checks the copy against the installed transformers). `moved`: the
# release whose registry moved the architecture from its own model file, which builds the same modules before it.
_FUSED_OUTPUTS = {"self_attn.o_proj": ROW, "mlp.down_proj": ROW}
_PLAN_CLASS = {"colwise": COLUMN, "colwise_gather_output": COLUMN, "rowwise": ROW, "rowwise_split_input": ROW}
_LLAMA_PLAN = {"self_attn.q_proj": "colwise", "self_attn.k_proj": "colwise", "self_attn.v_proj": "colwise",
               "self_attn.o_proj": "rowwise", "mlp.gate_proj": "colwise", "mlp.up_proj": "colwise",
               "mlp.down_proj": "rowwise"}
_GATHERED_ATTENTION = {"self_attn.q_proj": "colwise_gather_output", "self_attn.k_proj": "colwise_gather_output",
                       "self_attn.v_proj": "colwise_gather_output", "self_attn.o_proj": "rowwise_split_input"}
TP_PLANS: dict[str, dict[str, str]] = {
    "ArceeForCausalLM": {k: v for k, v in _LLAMA_PLAN.items() if k != "mlp.gate_proj"},  # relu2 up / down
    "CwmForCausalLM": _LLAMA_PLAN,
    "GlmForCausalLM": {**{k: v for k, v in _LLAMA_PLAN.items() if not k.startswith("mlp.")},
                       "mlp.gate_up_proj": "colwise_gather_output", "mlp.down_proj": "rowwise_split_input"},
    "Jais2ForCausalLM": {k: v for k, v in _LLAMA_PLAN.items() if k != "mlp.gate_proj"},
    "OlmoForCausalLM": _LLAMA_PLAN,
    "Olmo2ForCausalLM": {**_LLAMA_PLAN, **_GATHERED_ATTENTION},
    "Olmo3ForCausalLM": {**_LLAMA_PLAN, **_GATHERED_ATTENTION},
    "PhiForCausalLM": {"self_attn.q_proj": "colwise", "self_attn.k_proj": "colwise", "self_attn.v_proj": "colwise",
                       "self_attn.dense": "rowwise", "mlp.fc1": "colwise", "mlp.fc2": "rowwise"},
    "SeedOssForCausalLM": _LLAMA_PLAN,
    "GemmaForCausalLM": _LLAMA_PLAN,
    "SmolLM3ForCausalLM": _LLAMA_PLAN,
    "StableLmForCausalLM": {},
    "Starcoder2ForCausalLM": {**{k: v for k, v in _LLAMA_PLAN.items() if not k.startswith("mlp.")},
                              "mlp.c_fc": "colwise", "mlp.c_proj": "rowwise"},
    "VaultGemmaForCausalLM": _LLAMA_PLAN,
    "FlexOlmoForCausalLM": _GATHERED_ATTENTION,
    "OlmoeForCausalLM": _GATHERED_ATTENTION,
    "MellumForCausalLM": _LLAMA_PLAN,
    "GPTNeoXForCausalLM": {"attention.query_key_value": "colwise", "attention.dense": "rowwise",
                           "mlp.dense_h_to_4h": "colwise", "mlp.dense_4h_to_h": "rowwise"},
    "GPTBigCodeForCausalLM": {},
    "Kolibri1ForCausalLM": {**{k: v for k, v in _LLAMA_PLAN.items() if not k.startswith("mlp.")},
                            "mlp.shared_experts.gate_proj": "colwise", "mlp.shared_experts.up_proj": "colwise",
                            "mlp.shared_experts.down_proj": "rowwise"},
}


# The classes each backend architecture's linears get: its plan's, and rowwise after the fusers' q/k/v and gate/up.
def _plan_styles(plan: dict[str, str]) -> dict[str, str]:
    return {**_FUSED_OUTPUTS, **{tail: _PLAN_CLASS.get(style, REPLICATED) for tail, style in plan.items()}}


TP_PLAN_STYLES = {arch: _plan_styles(plan) for arch, plan in TP_PLANS.items()}


def _transformers_backend(arch: str, native: Arch | None = None, moved: str | None = None,
                          attention_linear: str | None = None, plan: dict[str, str] | None = None, **moe) -> Arch:
    """The Transformers backend's layout of `arch` (`moe`: the router fields of a TransformersMoEForCausalLM);
    with `native`, the layout of the releases before `moved`; `attention_linear`: the attention's projection stored
    fused that no fuser builds as a QKVParallelLinear (Arch.attention_linear). `plan`: its tp_plan by decoder-layer
    tail (None: TP_PLANS')."""
    styles = TP_PLAN_STYLES[arch] if plan is None else _plan_styles(plan)
    # base.py create_attention_instances: per_layer_sliding_window where config.layer_types marks the layer sliding.
    backend = Arch("vllm:transformers/moe.py" if moe else "vllm:transformers/causal.py", styles=styles,
                   unplanned=REPLICATED, sliding=LAYER_TYPES, attention_linear=attention_linear, **moe)
    return native._replace(moved=(moved, backend)) if native and moved else backend


# OLMoE / FlexOlmo: a softmax router without renormalization, built without quant_config: olmoe.py / flex_olmo.py's
# GateLinear before the move; after it the backend's MoE fuser matches transformers' gate as a top-k router and
# rebuilds it as a GateLinear routed inside FusedMoE (transformers/fusers/moe.py MoEFuser.gate, every release
# 0.29-0.34). A router it cannot match (Hunyuan's mlp.gate.wg) stays transformers' module: external routing.
_OLMOE_ROUTER: dict[str, Any] = dict(unquantized=("mlp.gate",), router=Router(renormalize=False))


_MOVED_032 = "transformers-backend-032"
# glm.py: Llama's model, whose MergedColumnParallelLinear loads GLM's stored gate_up_proj as it is (as Phi-3's).
_GLM_NATIVE = Arch("vllm:glm.py", packed={**_QKV_ONLY, "gate_up_proj": ("gate_up_proj",)})
_PHI_NATIVE = Arch("vllm:phi.py", styles={"self_attn.dense": ROW})  # phi.py PhiAttention.dense: RowParallelLinear
ARCHITECTURES.update({
    "ArceeForCausalLM": _transformers_backend("ArceeForCausalLM", native=Arch("vllm:arcee.py"), moved=_MOVED_032),
    "CwmForCausalLM": _transformers_backend("CwmForCausalLM", native=Arch("vllm:llama.py"), moved=_MOVED_032),
    "GlmForCausalLM": _transformers_backend("GlmForCausalLM", native=_GLM_NATIVE, moved=_MOVED_032),
    "Jais2ForCausalLM": _transformers_backend("Jais2ForCausalLM", native=Arch("vllm:jais2.py"), moved=_MOVED_032),
    "PhiForCausalLM": _transformers_backend("PhiForCausalLM", native=_PHI_NATIVE, moved=_MOVED_032),
    "SeedOssForCausalLM": _transformers_backend("SeedOssForCausalLM", native=Arch("vllm:seed_oss.py"),
                                                moved=_MOVED_032),
    "OlmoForCausalLM": _transformers_backend("OlmoForCausalLM", native=Arch("vllm:olmo.py"),
                                             moved="transformers-backend-026"),
    "Olmo2ForCausalLM": _transformers_backend("Olmo2ForCausalLM", native=Arch("vllm:olmo2.py"),
                                              moved="transformers-backend-026"),
    # olmo3.py (0.26-0.28; 0.25 maps it to olmo2.py's class)
    "Olmo3ForCausalLM": _transformers_backend("Olmo3ForCausalLM", native=Arch("vllm:olmo3.py"),
                                              moved="transformers-backend-029"),
    # flex_olmo.py (0.25-0.28) builds its FusedMoE with quant_config=None, which fp8check does not model: generic.
    "FlexOlmoForCausalLM": _transformers_backend("FlexOlmoForCausalLM", **_OLMOE_ROUTER,
                                                 native=Arch(GENERIC),
                                                 moved="transformers-backend-029"),
    # gemma.py, stablelm.py and olmoe.py until 0.34 deletes them.
    "GemmaForCausalLM": _transformers_backend("GemmaForCausalLM", native=Arch("vllm:gemma.py", sliding=MODEL_WINDOW),
                                              moved="transformers-backend-034"),
    "StableLmForCausalLM": _transformers_backend("StableLmForCausalLM", native=Arch("vllm:stablelm.py"),
                                                 moved="transformers-backend-034"),
    "OlmoeForCausalLM": _transformers_backend("OlmoeForCausalLM", **_OLMOE_ROUTER,
                                              native=Arch("vllm:olmoe.py", **_OLMOE_ROUTER),
                                              moved="transformers-backend-034"),
    "SmolLM3ForCausalLM": _transformers_backend("SmolLM3ForCausalLM"),
    # GPT-NeoX (Pythia): gpt_neox.py until 0.32 moved it (query_key_value a QKVParallelLinear, dense / dense_4h_to_h
    # row, the head embed_out with the quant config); the backend builds query_key_value, stored fused with each
    # head's [q k v] rows together, as its plan's ColumnParallelLinear (a rank's slice is whole heads), its Attention
    # attention.attn taking config.json's heads. Its mapper (base.py _create_hf_to_vllm_mapper) renames embed_out. to
    # lm_head. (transformers' WeightRenaming for gpt_neox) and the base model prefix gpt_neox to model; applied to a
    # quant config's lists too, where a bare "embed_out" entry (no dot) stays as it is and never names lm_head.
    # GPTBigCode's likewise maps transformer to model.
    "GPTNeoXForCausalLM": Arch(
        "vllm:gpt_neox.py", packed={}, styles={"attention.query_key_value": "QKVParallelLinear",
                                               "attention.dense": ROW, "embed_out": "ParallelLMHead"},
        sliding=MODEL_WINDOW, moved=(_MOVED_032, _transformers_backend(
            "GPTNeoXForCausalLM", attention_linear="query_key_value")._replace(
                styles={**TP_PLAN_STYLES["GPTNeoXForCausalLM"], "embed_out": "ParallelLMHead"},
                hf_to_vllm=(("regex", r"^embed_out\.", "lm_head."), ("regex", r"^gpt_neox\.(.+)", r"model.\1"))))),
    # GPTBigCode (StarCoder, SantaCoder): the backend in every release 0.25-0.34. GPTBigCodeConfig has no tp_plan, so
    # the MLP's c_fc / c_proj are ReplicatedLinears; the packed-QKV fuser (transformers/fusers/packed_qkv.py
    # PackedQKVFuser, 0.33 / 0.34 alike) matches multi-query attention's c_attn(x).split((q, kv, kv)) and builds
    # attn.c_attn as a QKVParallelLinear (one KV head: GPTBigCodeConfig's num_key_value_heads under multi_query) and the
    # projection returned after it, attn.c_proj, as rowwise. The position table wpe an nn.Embedding. Not modelled: a
    # multi_query false checkpoint, whose per-head view of c_attn the fuser does not match (all replicated).
    "GPTBigCodeForCausalLM": _transformers_backend("GPTBigCodeForCausalLM")._replace(
        styles={**TP_PLAN_STYLES["GPTBigCodeForCausalLM"], "attn.c_attn": "QKVParallelLinear", "attn.c_proj": ROW},
        other_tables=("wpe",), hf_to_vllm=(("regex", r"^transformer\.(.+)", r"model.\1"),)),
    "Starcoder2ForCausalLM": _transformers_backend("Starcoder2ForCausalLM"),
    "VaultGemmaForCausalLM": _transformers_backend("VaultGemmaForCausalLM"),
})

# Mellum (JetBrains Mellum2; registry.py: mellum.py 0.29-0.31, the Transformers backend's TransformersMoEForCausalLM
# from 0.32, alike 0.33 / 0.34). mellum.py: Qwen3-MoE's model (its MellumConfig a Qwen3MoeConfig: norm_topk_prob
# false unless set) with the window on the layers config.layer_types marks sliding, a dense Qwen3MoeMLP where
# config.mlp_layer_types says "dense", the router mlp.gate a GateLinear with the quant config. The backend
# (transformers' modeling_mellum.py: Qwen3-MoE's attention and router, Laguna's decoder layer): q / k / v and the
# dense gate / up fused, the softmax router rebuilt as an unquantized GateLinear (fusers/moe.py MoEFuser.gate),
# renormalized as transformers' MellumConfig (norm_topk_prob true by default); the MTP block "mtp." dropped
# (MellumPreTrainedModel._keys_to_ignore_on_load_unexpected, which base.py's loader maps to None).
_MELLUM_NATIVE = ARCHITECTURES["Qwen3MoeForCausalLM"]._replace(source="vllm:mellum.py", sliding=LAYER_TYPES)
# Kolibri-1 (Aleph Alpha; registry.py: the Transformers backend's TransformersMoEForCausalLM, 0.33-0.34, alike):
# transformers' modeling_kolibri1.py, every layer a DeepseekV3MoE block of routed experts, a router
# (Kolibri1TopKRouter: weight an nn.Parameter, e_score_correction_bias a buffer) and shared_experts (gate / up
# fused, down row: its tp_plan). The MoE fuser (fusers/moe.py MoEBlockFuser._match_router) cannot trace the router's
# forward (it branches on hidden_states.is_cuda: fx_utils.trace returns the partial graph, no top-k), so the router
# stays transformers' module, no linear, and routes outside the FusedMoE (custom_routing_function, RoutingMethodType
# Custom); the shared expert, built under its checkpoint name, is handed to the FusedMoE.
ARCHITECTURES.update({
    "MellumForCausalLM": _transformers_backend("MellumForCausalLM", native=_MELLUM_NATIVE, moved=_MOVED_032,
                                               unquantized=("mlp.gate",), spec_prefix="mtp.",
                                               router=Router(renormalize=("norm_topk_prob", True))),
    "Kolibri1ForCausalLM": _transformers_backend(
        "Kolibri1ForCausalLM", parameter_weights=("mlp.gate",), router=Router(custom="Custom")),
})

# The registry's older dense families (0.25-0.34, each file alike 0.33 / 0.34).
# opt.py OPTForCausalLM: q / k / v -> qkv_proj (its packed mapping), out_proj / fc2 row, fc1 column; project_in /
# project_out (where word_embed_proj_dim differs from hidden_size: OPT-350M) ReplicatedLinears with the quant config;
# the learned position table embed_positions an embedding (OPTLearnedPositionalEmbedding, no linear); the LM head a
# ParallelLMHead without quant_config (tied to embed_tokens by default); the mapper moves a bare decoder. under model.
ARCHITECTURES["OPTForCausalLM"] = Arch(
    "vllm:opt.py", packed=_QKV_ONLY, styles={"fc1": COLUMN, "fc2": ROW, "self_attn.out_proj": ROW,
                                             "project_in": REPLICATED, "project_out": REPLICATED},
    head_quant_config=False, sliding=MODEL_WINDOW, other_tables=("embed_positions",),
    hf_to_vllm=(("prefix", "decoder.", "model.decoder."),))
# gpt_j.py GPTJForCausalLM: attn q / k / v -> qkv_proj through its mapper's orig_to_new_stacked alone (the class has no
# packed_modules_mapping and is no SupportsQuant: the quant config's lists are matched against qkv_proj itself),
# attn.out_proj / mlp.fc_out row, mlp.fc_in column; the LM head takes the quant config; the mapper drops the
# causal-mask buffers attn.bias / attn.masked_bias that GPT-J-6B's checkpoint holds.
ARCHITECTURES["GPTJForCausalLM"] = Arch(
    "vllm:gpt_j.py", packed=_QKV_ONLY, quant_packed=False, styles={"attn.out_proj": ROW, "mlp.fc_in": COLUMN,
                                                                   "mlp.fc_out": ROW},
    spec_substrings=("attn.bias", "attn.masked_bias"), sliding=MODEL_WINDOW)
# gpt2.py GPT2LMHeadModel: attn.c_attn stored fused, a QKVParallelLinear over n_head (every head a KV head),
# attn.c_proj / mlp.c_proj row, mlp.c_fc column, all three HF Conv1D weights stored [in, out] and transposed on load
# (Arch.transposed); wpe an nn.Embedding; the LM head takes the quant config under the prefix ".lm_head" (f"{prefix}.
# lm_head" with an empty prefix), tied to wte by default; GPT2Model's mapper drops the causal-mask buffers attn.bias /
# attn.masked_bias.
_GPT2_CONV1D = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")
ARCHITECTURES["GPT2LMHeadModel"] = Arch(
    "vllm:gpt2.py", packed={}, styles={"attn.c_attn": "QKVParallelLinear", "attn.c_proj": ROW, "mlp.c_fc": COLUMN,
                                       "mlp.c_proj": ROW},
    transposed=_GPT2_CONV1D, other_tables=("wpe",), spec_substrings=(".attn.bias", ".attn.masked_bias"),
    quant_prefixes=(("regex", r"^lm_head\.weight$", ".lm_head.weight"),), sliding=MODEL_WINDOW)
# bloom.py BloomForCausalLM (SupportsQuant, no packed mapping): self_attention.query_key_value stored fused, a
# QKVParallelLinear over num_attention_heads (every head a KV head; the loader regroups its per-head [q k v] rows),
# self_attention.dense / mlp.dense_4h_to_h row, mlp.dense_h_to_4h column; ALiBi attention; the LM head a
# ParallelLMHead without quant_config, tied to word_embeddings by default.
ARCHITECTURES["BloomForCausalLM"] = Arch(
    "vllm:bloom.py", packed={}, styles={"self_attention.query_key_value": "QKVParallelLinear",
                                        "self_attention.dense": ROW, "mlp.dense_h_to_4h": COLUMN,
                                        "mlp.dense_4h_to_h": ROW},
    head_quant_config=False, sliding=MODEL_WINDOW)
# falcon.py FalconForCausalLM (packed query_key_value: [query_key_value]): self_attention.query_key_value stored fused,
# a QKVParallelLinear whose KV heads are config.num_kv_heads with new_decoder_architecture (Falcon-40B / 180B), one
# with multi_query (Falcon-7B), else num_attention_heads (local.py reads them so), self_attention.dense /
# mlp.dense_4h_to_h row, mlp.dense_h_to_4h column; rotary or ALiBi attention; the LM head takes the quant config
# (tied to word_embeddings unless tie_word_embeddings is false).
ARCHITECTURES["FalconForCausalLM"] = Arch(
    "vllm:falcon.py", packed={"query_key_value": ("query_key_value",)},
    styles={"self_attention.query_key_value": "QKVParallelLinear", "self_attention.dense": ROW,
            "mlp.dense_h_to_4h": COLUMN, "mlp.dense_4h_to_h": ROW}, sliding=MODEL_WINDOW)

# ninth round (fam-texta)
# DBRX (dbrx.py DbrxForCausalLM, registered 0.25-0.34, alike 0.33 / 0.34; transformers' DbrxConfig: d_model, n_heads,
# n_layers, attn_config.kv_n_heads, ffn_config.moe_num_experts / ffn_hidden_size): the checkpoint's names under
# transformer.blocks.N; norm_attn_norm.attn.Wqkv stored fused (a QKVParallelLinear of d_model / n_heads-wide heads; the
# class has no packed_modules_mapping, so the quant config's lists meet Wqkv by its own name), attn.out_proj row, its
# Attention norm_attn_norm.attn.attn with the quant config and no per-layer window; ffn.router.layer a GateLinear
# (no quant config); the experts a FusedMoE (renormalize=True, softmax) over the flattened ffn.experts.mlp.w1 / v1 /
# w2 (flat_experts), handed the prefix `ffn` (FusedMoEFactory(prefix=prefix)); the ParallelLMHead with the quant
# config (tie_word_embeddings refused). Not modelled: DbrxExperts.weight_loader takes a per-expert scale (w13's
# [E, 2], w2's [E]) and no block scales (w1's `param_data = loaded_weight` drops them, v1's shapes do not fit).
ARCHITECTURES["DbrxForCausalLM"] = Arch(
    "vllm:dbrx.py", packed={}, styles={"norm_attn_norm.attn.Wqkv": "QKVParallelLinear",
                                       "norm_attn_norm.attn.out_proj": ROW},
    unquantized=("ffn.router.layer",), sliding=MODEL_WINDOW, flat_experts=("ffn", ("w1", "v1", "w2"), "router.layer"),
    experts_class="DbrxExperts")
# TeleChat2 (telechat2.py TeleChat2ForCausalLM, registered 0.25-0.34, alike 0.33 / 0.34; remote-code config, model_type
# telechat, whose attribute_map telechat2.py sets itself: n_layer, n_head, ffn_hidden_size): llama.py's
# LlamaForCausalLM under its hf_to_vllm_mapper (transformer. -> model., .h. -> .layers., .self_attention. ->
# .self_attn., .dense. -> .o_proj.), self_attention.query with key_value (split into k and v at load, split_kv) ->
# qkv_proj (QKVParallelLinear), dense row, mlp gate_proj / up_proj -> gate_up_proj, down_proj row; Llama's
# packed_modules_mapping (q_proj / k_proj / v_proj: a quant config's lists naming query / key_value are not expanded to
# them; not modelled), the ParallelLMHead with the quant config. Not modelled: the split reads n_head K / V heads (an
# MHA checkpoint) and slices a key_value scale like its weight (head_dim rows per head).
ARCHITECTURES["TeleChat2ForCausalLM"] = Arch(
    "vllm:telechat2.py", packed={"qkv_proj": ("query", "key_value"), "gate_up_proj": LLAMA_PACKED["gate_up_proj"]},
    styles={"self_attention.qkv_proj": "QKVParallelLinear", "self_attention.dense": ROW},
    split_kv=("self_attention.key_value",),
    hf_to_vllm=(("substr", ".h.", ".layers."), ("substr", ".self_attention.", ".self_attn."),
                ("substr", ".word_embeddings.", ".embed_tokens."), ("substr", ".dense.", ".o_proj."),
                ("substr", ".ln_f.", ".norm."), ("prefix", "transformer.", "model.")))
# A.X K1 (AXK1.py AXK1ForCausalLM, registered 0.30-0.34; 0.33 -> 0.34 changed ROCm's fused shared experts only, not
# modelled; transformers' AXK1Config, model_type axk1, an MLA model for ModelConfig.is_deepseek_mla): DeepSeek-V3's
# layout (MLA with fused_qkv_a_proj where q_lora_rank is set, here a plain MergedColumnParallelLinear with disable_tp
# (AXK1MLAAttention), the GateLinear router without quant config, a shared
# expert, MTP layers skipped by get_spec_layer_idx_from_weight_name, the ParallelLMHead with the quant config), its
# FusedMoE routed by getattr(config, "scoring_func", "sigmoid"), renormalize config.norm_topk_prob, num_expert_group
# config.n_group (AXK1Config: 8) and an e_score_correction_bias when getattr(config, "topk_method", "noaux_tc") is
# noaux_tc; the MoE layers are mlp_layer_types' "sparse" ones (the checkpoint's experts).
ARCHITECTURES["AXK1ForCausalLM"] = _DEEPSEEK_V3._replace(
    source="vllm:AXK1.py", router=Router(("scoring_func", "sigmoid"), ("norm_topk_prob", True), ("n_group", 8),
                                         ("topk_method", "noaux_tc", "noaux_tc")),
    styles={"self_attn.fused_qkv_a_proj": "MergedColumnParallelLinear"}, disable_tp=("self_attn.fused_qkv_a_proj",))
# TeleFLM (teleflm.py TeleFLMForCausalLM, registered 0.25-0.34, alike 0.33 / 0.34; remote-code config, model_type
# TeleFLM): llama.py's LlamaForCausalLM with muP logit scaling (use_mup, mup_scale_factor, output_mult: no linears):
# Llama's names, fusions and LM head.
ARCHITECTURES["TeleFLMForCausalLM"] = Arch("vllm:teleflm.py")
# Step-1 (step1.py Step1ForCausalLM, registered 0.25-0.34, alike 0.33 / 0.34; remote-code config, model_type step1):
# Llama's names and fusions (q / k / v -> qkv_proj of hidden_size / num_attention_heads-wide heads, num_attention_groups
# KV heads, else num_key_value_heads, else 1; gate / up -> gate_up_proj; o_proj / down_proj row; by the mapper's
# orig_to_new_stacked), its Attention with the quant config, ALiBi slopes and use_alibi_sqrt (backend_only: refused
# on any backend but TRITON_ATTN), no per-layer window; the ParallelLMHead with the quant config.
ARCHITECTURES["Step1ForCausalLM"] = Arch(
    "vllm:step1.py", sliding=MODEL_WINDOW,
    backend_only=("TRITON_ATTN", "use_alibi_sqrt is not supported by backend {backend}.", False))
# Rnj1 (rnj1.py Rnj1ForCausalLM, registered 0.25-0.34, alike 0.33 / 0.34; transformers' Gemma3TextConfig, model_type
# gemma3_text): Gemma-3's names and fusions (q / k / v -> qkv_proj, gate / up -> gate_up_proj by the mapper's
# orig_to_new_stacked; o_proj / down_proj row), the ParallelLMHead with the quant config; layer_types'
# "chunked_attention" layers take config.sliding_window and chunk_lookback 1, which Attention asserts only TRITON_ATTN
# serves (backend_only), the others full attention.
ARCHITECTURES["Rnj1ForCausalLM"] = Arch(
    "vllm:rnj1.py", sliding=CHUNKED_LAYER_TYPES,
    backend_only=("TRITON_ATTN", "AssertionError: Chunked attention with lookback requires the Triton backend, but got "
                  "{backend}.", True))
# Domyn-Edge (domyn_edge.py DomynEdgeForCausalLM, registered 0.33-0.34, alike 0.33 / 0.34; remote-code config): Qwen2's
# model over DomynEdgeDecoderLayer: `attention` q / k / v -> qkv_proj of the layer's own per_layer_config head_dim
# (layer_geometry), o_proj row, each Attention's window window_sizes[i][0] + 1 where above 0 (LEFT_WINDOWS);
# `feedforward` Qwen2MLP (gate / up -> gate_up_proj, down_proj row); the ParallelLMHead with the quant config unless
# tied.
ARCHITECTURES["DomynEdgeForCausalLM"] = Arch("vllm:domyn_edge.py", layer_geometry=True, sliding=LEFT_WINDOWS)
# MiniCPM3 (minicpm3.py MiniCPM3ForCausalLM, registered 0.25-0.34, alike 0.33 / 0.34; transformers' MiniCPM3Config):
# MiniCPM's decoder (muP scales; mlp gate / up -> gate_up_proj, down_proj row; the ParallelLMHead with the quant
# config) over MiniCPM3Attention: q_a_proj a ReplicatedLinear handed no prefix (the quant config's lists meet ""),
# q_b_proj / kv_b_proj ColumnParallelLinears, kv_a_proj_with_mqa a ReplicatedLinear, o_proj row, all with the quant
# config, and a plain Attention (mla_projections_dense) with no per-layer window. packed_modules_mapping gate_up_proj
# only.
ARCHITECTURES["MiniCPM3ForCausalLM"] = Arch(
    "vllm:minicpm3.py", packed={"gate_up_proj": LLAMA_PACKED["gate_up_proj"]}, mla_projections_dense=True,
    sliding=MODEL_WINDOW, quant_prefixes=(("regex", r"^(?:.*\.)?self_attn\.q_a_proj\.weight$", ".weight"),))
# ninth round (fam-mma)
# MiniCPM-V (minicpmv.py MiniCPMV, registered 0.25-0.34, the file alike 0.33 -> 0.34; model_type minicpmv, the hub's
# remote-code MiniCPMVConfig: the text model's keys flat at the top, vision_config a SiglipVisionConfig).
# MiniCPMV.__new__ builds the class of config.version (none: 2.0 where hidden_size 2304 and query_num 64, else 2.5): 2.5
# / 4.0 LlamaForCausalLM, 2.6 Qwen2ForCausalLM, 4.5 Qwen3ForCausalLM, each under llm. (llm.model.layers.N, llm.lm_head
# with the quant config), Llama's q / k / v and gate / up fusions (the packed_modules_mapping MiniCPMV copies from the
# version's class); the tower vpm. is idefics2_vision_model.py's Idefics2VisionTransformer with the quant config
# (self_attn q / k / v -> qkv_proj over the vision heads, out_proj row, mlp fc1 column / fc2 row), without its last
# layer where drop_vision_last_layer (local.py: the remote class's default true), whose tensors its load_weights drops;
# the resampler (layers/resampler.py BaseResampler: Resampler2_5, 4.5's Resampler4_5), built under float16 as the
# default dtype (Tower.build_dtype), holds kv_proj, a ReplicatedLinear with the quant config, and a torch
# nn.MultiheadAttention (attn.out_proj an nn.Linear, in_proj_weight / query / proj bare parameters). 2.6 / 4.0 / 4.5's
# hf_to_vllm_mapper drops apm., audio* and tts* (none in a vision checkpoint); the quant config's lists are matched
# against the checkpoint's names. Not modelled: 2.0's timm SigLIP tower and MiniCPM text model (vpm.blocks.N, plain
# nn.Linears). A version outside 2.0 / 2.5 / 2.6 / 4.0 / 4.5 is vLLM's ValueError (version_refusal).
_IDEFICS2_VPM = Tower("vllm:idefics2_vision_model.py", ("vpm.",), vision_heads=True, layers_path="encoder.layers")
_MINICPMV_RESAMPLER = Tower("vllm:minicpmv.py", ("resampler.",), packed={}, build_dtype="float16",
                            styles={"kv_proj": REPLICATED, "attn.out_proj": TORCH_LINEAR})
ARCHITECTURES["MiniCPMV"] = Arch("vllm:minicpmv.py", towers=(_IDEFICS2_VPM, _MINICPMV_RESAMPLER), **_QWEN2_MODEL)
# MiniCPM-o (minicpmo.py MiniCPMO, registered 0.25-0.34; 0.33 -> 0.34 changed a loop variable only; model_type minicpmo,
# the remote MiniCPMOConfig): MiniCPMO.__new__ builds 2.6 (Qwen2) or 4.5 (Qwen3; no version: 2.6) as MiniCPM-V's
# class of that version (llm., vpm., resampler) plus the audio tower apm., MiniCPMWhisperEncoder over
# transformers' WhisperAttention (self_attn q / k / v / out_proj) and fc1 / fc2, every one a torch nn.Linear (no quant
# method; embed_positions an nn.Embedding), and audio_projection_layer's linear1 / linear2, torch nn.Linears. Its
# hf_to_vllm_mapper drops every name starting "tts" (the speech generator vLLM does not build).
_MINICPMO_AUDIO = Tower("vllm:minicpmo.py", ("apm.", "audio_projection_layer."), packed={},
                        styles={tail: TORCH_LINEAR for tail in ("q_proj", "k_proj", "v_proj", "out_proj", "fc1", "fc2",
                                                                "linear1", "linear2")})
ARCHITECTURES["MiniCPMO"] = ARCHITECTURES["MiniCPMV"]._replace(
    source="vllm:minicpmo.py", towers=(_IDEFICS2_VPM, _MINICPMV_RESAMPLER, _MINICPMO_AUDIO), spec_prefix="tts",
    matrix_norms=("apm.embed_positions",))

# MiniCPM-V 4.6 (minicpmv4_6.py MiniCPMV4_6ForConditionalGeneration, registered 0.33-0.34; 0.34 changed the image
# processor only; transformers' MiniCPMV4_6Config, model_type minicpmv4_6), and its subclasses MiniCPM-V 4.7
# (minicpmv4_7.py, adding mrope positions only) and MiniCPM-OCR (minicpm_ocr.py, 0.34's processor): qwen3_5.py's
# Qwen3_5ForCausalLM over text_config under language_model. (its gated-delta-net and gated-attention layers, mtp.*
# dropped); vpm., the Idefics2 tower with the quant config, without its last layer where 4.6's drop_vision_last_layer
# (false by default; 4.7 and OCR never); vit_merger., a window-attention block with the quant config (self_attn q / k /
# v -> qkv_proj over the vision heads, stacked by load_weights' _stack_vit_merger_qkv, out_proj row) and its
# downsampling MLP linear_1 / linear_2, torch nn.Linears; merger.mlp.N linear_1 / linear_2, torch nn.Linears. The
# hf_to_vllm_mapper moves transformers' names (model.vision_tower.vit_merger., model.vision_tower., model.merger.,
# model.language_model., lm_head.).
_MINICPMV46_VPM = _IDEFICS2_VPM._replace(roots=("model.vision_tower.", "model.vpm."))
_MINICPMV46_VIT_MERGER = Tower("vllm:minicpmv4_6.py", ("model.vision_tower.vit_merger.", "model.vit_merger."),
                               vision_heads=True, styles={"self_attn.out_proj": ROW, "linear_1": TORCH_LINEAR,
                                                          "linear_2": TORCH_LINEAR})
_MINICPMV46_MERGER = Tower("vllm:minicpmv4_6.py", ("model.merger.",), packed={},
                           styles={"linear_1": TORCH_LINEAR, "linear_2": TORCH_LINEAR})
_MINICPMV46 = ARCHITECTURES["Qwen3_5ForCausalLM"]._replace(
    source="vllm:minicpmv4_6.py", towers=(_MINICPMV46_VIT_MERGER, _MINICPMV46_VPM, _MINICPMV46_MERGER),
    hf_to_vllm=(("prefix", "model.vision_tower.vit_merger.", "vit_merger."), ("prefix", "model.vision_tower.", "vpm."),
                ("prefix", "model.vpm.", "vpm."), ("prefix", "model.vit_merger.", "vit_merger."),
                ("prefix", "model.merger.", "merger."), ("prefix", "model.language_model.", "language_model.model."),
                ("prefix", "lm_head.", "language_model.lm_head.")))
ARCHITECTURES.update({"MiniCPMV4_6ForConditionalGeneration": _MINICPMV46,
                      "MiniCPMV4_7ForConditionalGeneration": _MINICPMV46._replace(source="vllm:minicpmv4_7.py"),
                      "MiniCPMOcrForConditionalGeneration": _MINICPMV46._replace(source="vllm:minicpm_ocr.py")})
# Ovis2.5 / Ovis2.6 (ovis2_5.py Ovis2_5, registered 0.25-0.34 as Ovis2_5, Ovis2_6ForCausalLM and Ovis2_6_MoeForCausalLM,
# the file alike 0.33 -> 0.34; model_type ovis2_5, the hub's remote Ovis2_5Config: llm_config, which vLLM renames
# text_config, and vit_config, a Siglip2NavitConfig): the text model is the class text_config names
# (init_vllm_registered_model: Qwen3, Qwen3-MoE) under llm. (llm.model.layers.N, llm.lm_head), no mapper; the visual
# tokenizer's vit (siglip2navit.py Siglip2NavitModel, with the quant config: self_attn q / k / v -> qkv_proj over the
# vision heads, stacked by its own mapper, out_proj row, mlp fc1 column / fc2 row; a naflex patch_embedding, where
# vit_config.num_patches > 0, a ReplicatedLinear without quant_config) and its head.0, a ReplicatedLinear without
# quant_config; vte, the visual embedding table (an nn.Embedding).
_SIGLIP2_NAVIT = Tower("vllm:siglip2navit.py", ("visual_tokenizer.vit.",), vision_heads=True,
                       styles={"embeddings.patch_embedding": REPLICATED}, unquantized=("embeddings.patch_embedding",))
_OVIS25_HEAD = Tower("vllm:ovis2_5.py", ("visual_tokenizer.head.",), packed={}, quantized=False,
                     styles={"0": REPLICATED})
_OVIS25 = Arch("vllm:ovis2_5.py", towers=(_SIGLIP2_NAVIT, _OVIS25_HEAD), registered_text_model=True,
               matrix_norms=("vte",))
ARCHITECTURES.update({"Ovis2_5": _OVIS25, "Ovis2_6ForCausalLM": _OVIS25, "Ovis2_6_MoeForCausalLM": _OVIS25})
# Ovis / Ovis2 (ovis.py Ovis, registered 0.25-0.34, the file alike 0.33 -> 0.34; model_type ovis, vLLM's own OvisConfig:
# llm_config as text_config, visual_tokenizer_config with its backbone_config): the text model of text_config's class
# under llm., no mapper; the visual tokenizer's backbone with the quant config, by backbone_config's model_type:
# aimv2.py's AIMv2Model (Ovis2: trunk.blocks.N attn.qkv stored fused, a QKVParallelLinear over the vision heads,
# attn.proj row, mlp fc1 / fc3 stacked by its own mapper into fc13, a MergedColumnParallelLinear whose name no packed
# mapping keys, fc2 row; the post_trunk_norm dropped) or siglip.py's SiglipVisionModel (Ovis1.6); head.0 a
# ReplicatedLinear without quant_config; vte an nn.Embedding.
_AIMV2 = Tower("vllm:aimv2.py", ("visual_tokenizer.backbone.trunk.",), packed={"qkv": ("qkv",), "fc13": ("fc1", "fc3")},
               vision_heads=True, styles={"attn.qkv": "QKVParallelLinear", "attn.proj": ROW, "mlp.fc2": ROW},
               unexpanded=("fc13",))
ARCHITECTURES["Ovis"] = _OVIS25._replace(source="vllm:ovis.py", towers=(
    _AIMV2, _SIGLIP._replace(roots=("visual_tokenizer.backbone.vision_model.",)),
    _OVIS25_HEAD._replace(source="vllm:ovis.py")))
# Phi-4-multimodal (phi4mm.py Phi4MMForCausalLM, registered 0.25-0.34; 0.33 -> 0.34 changed a loop variable of the audio
# encoder only; model_type phi4mm, the hub's remote Phi4MMConfig): llama.py's LlamaModel at model. over Phi-3's
# stored-fused qkv_proj / gate_up_proj (the class's packed_modules_mapping maps each to itself), the LM head with the
# quant config (tied to embed_tokens in the released checkpoint). The checkpoint holds every text linear LoRA-wrapped
# (`<linear>.base_layer.weight` beside `lora_A` / `lora_B` adapters): the hf_to_vllm_mapper removes "base_layer." and
# drops every name holding "lora", so vLLM's module is `<linear>` (fp8check reports the checkpoint's
# `<linear>.base_layer`, styled as its linear). The image encoder is idefics2_vision_model.py's
# Idefics2VisionTransformer built from a fixed SigLIP config (get_navit_vision_model: 27 layers of 1152, 16 heads)
# without quant config, up to layer_idx -2 (the released img_processor is null: 26 layers, layer 26's tensors dropped by
# its loader); img_projection.0 / .2 and the conformer audio encoder (phi4mm_audio.py: embed.out, the feed-forwards'
# net.0.linear / net.2, self_attn linear_q / k / v / out) and its audio_projection speech / vision .0 / .2 are torch
# nn.Linears; the audio encoder's relative-attention bias table an nn.Embedding.
_PHI4MM_IMAGE = "model.embed_tokens_extend.image_embed."
_PHI4MM_AUDIO = "model.embed_tokens_extend.audio_embed."
_PHI4MM_VISION = Tower("vllm:idefics2_vision_model.py", (f"{_PHI4MM_IMAGE}img_processor.",), vision_heads=True,
                       quantized=False, dropped=("img_processor.encoder.layers.26.",))
_PHI4MM_PROJECTION = Tower("vllm:phi4mm.py", (_PHI4MM_IMAGE,), packed={},
                           styles={"img_projection.0": TORCH_LINEAR, "img_projection.2": TORCH_LINEAR})
_PHI4MM_AUDIO_LINEARS = ("embed.out", "net.0.linear", "net.2", "linear_q", "linear_k", "linear_v", "linear_out",
                         "audio_projection.speech.0", "audio_projection.speech.2", "audio_projection.vision.0",
                         "audio_projection.vision.2")
_PHI4MM_AUDIO_TOWER = Tower("vllm:phi4mm_audio.py", (_PHI4MM_AUDIO,), packed={},
                            styles={tail: TORCH_LINEAR for tail in _PHI4MM_AUDIO_LINEARS})
ARCHITECTURES["Phi4MMForCausalLM"] = ARCHITECTURES["Phi3ForCausalLM"]._replace(
    source="vllm:phi4mm.py", towers=(_PHI4MM_VISION, _PHI4MM_PROJECTION, _PHI4MM_AUDIO_TOWER),
    styles={"self_attn.qkv_proj.base_layer": "QKVParallelLinear", "self_attn.o_proj.base_layer": ROW,
            "mlp.gate_up_proj.base_layer": "MergedColumnParallelLinear", "mlp.down_proj.base_layer": ROW},
    equal_parts={"mlp.gate_up_proj.base_layer": 2}, spec_substrings=("lora",),
    matrix_norms=("relative_attention_bias_layer.bias_values",),
    hf_to_vllm=(("substr", "base_layer.", ""),
                ("prefix", f"{_PHI4MM_AUDIO}audio_projection.vision.",
                 "embed_tokens_extend.audio_projection_for_vision."),
                ("prefix", f"{_PHI4MM_AUDIO}audio_projection.speech.", "embed_tokens_extend.audio_projection."),
                ("prefix", _PHI4MM_AUDIO, "embed_tokens_extend."), ("prefix", _PHI4MM_IMAGE, "vision_encoder.")))

# Phi-4 vision (phi4siglip.py Phi4ForCausalLMV, registered 0.25-0.34, the file alike 0.33 -> 0.34): phi3.py's
# Phi3ForCausalLM over the flat config (init_vllm_registered_model with architectures ["Phi3ForCausalLM"]) under
# language_model. (the mapper: model. -> language_model.model., lm_head. -> language_model.lm_head.); lfm2_siglip2.py's
# Siglip2Model over vision_config with the quant config at model.vision_tower.vision_tower. (-> vision_tower.):
# self_attn q / k / v -> qkv_proj over the vision heads, out_proj row, mlp fc1 column / fc2 row, the patch embedding a
# ReplicatedLinear without quant config, built up to layer -2 (its loader drops the last layer's tensors, the mapper the
# attention-pooling head), its qkv_proj (stacked by its own mapper) matched by the lists by its own name (the only
# packed mapping reaching the quant config is Phi-3's, qkv_proj -> qkv_proj); model.mm_projector.0 / .2 ->
# multi_modal_projector.linear_1 / linear_2, llava.py's LlavaMultiModalProjector with the quant config (column / row).
_PHI4V_SIGLIP2 = _SIGLIP2_NAVIT._replace(source="vllm:lfm2_siglip2.py", roots=("model.vision_tower.vision_tower.",),
                                         layers_path="vision_model.encoder.layers", feature_layer=-2,
                                         dropped=("vision_model.head.",), unexpanded=("qkv_proj",))
ARCHITECTURES["Phi4ForCausalLMV"] = ARCHITECTURES["Phi3ForCausalLM"]._replace(
    source="vllm:phi4siglip.py",
    towers=(_PHI4V_SIGLIP2, Tower("vllm:phi4siglip.py", ("model.mm_projector.",), packed={},
                                  styles={"0": COLUMN, "2": ROW})),
    hf_to_vllm=(("prefix", "model.vision_tower.vision_tower.", "vision_tower."),
                ("prefix", "model.mm_projector.0.", "multi_modal_projector.linear_1."),
                ("prefix", "model.mm_projector.2.", "multi_modal_projector.linear_2."), _VL_TEXT[1],
                ("prefix", "model.", "language_model.model.")))


# Any other architecture transformers has, which the release does not register: registry.py
# _ModelRegistry.inspect_model_cls / resolve_model_cls hand architectures[0] to _try_resolve_transformers when no
# listed architecture is registered, which builds the Transformers backend when transformers has the class and it is
# backend-compatible, else returns None and the registry refuses the model (_raise_for_unsupported); the backend class
# is config/model.py _get_transformers_backend_cls's, the runner its _SUFFIX_TO_DEFAULTS' (0.33 / 0.34 alike). What
# transformers has is fp8check.core.model.transformers_classes, read from the newest transformers each profile's
# release allows (none for releases before 0.33: their reason stays "not modelled"). A text-only (not nested), dense
# TransformersForCausalLM is laid out as the hand-listed ones above, from its config class's base_model_tp_plan (a
# decoder layer's "layers.*.<tail>" entries by tail), a text-only TransformersMoEForCausalLM from the same plan and its
# generated MoE block (transformers_moe_arch); a multimodal backend class is named, not laid out.
_POOLING_SUFFIX = "Model"                        # _SUFFIX_TO_DEFAULTS: ("Model", ("pooling", "embed")), checked after
_GENERATE_SUFFIXES = ("ChatModel", "LMHeadModel")  # these two ("generate"); the mappings' other names match neither
_CAUSAL_LM = "TransformersForCausalLM"
_MULTIMODAL_CAUSAL_LM = "TransformersMultiModalForCausalLM"


class TransformersBackend(NamedTuple):
    """What vLLM makes of an architecture its release does not register, with the transformers it assumes."""

    version: str                          # transformers' (transformers_classes.TRANSFORMERS)
    found: TransformersClass | None       # None: transformers' causal-LM / image-text-to-text classes lack it
    built: str | None                     # the backend class vLLM builds (None: found is incompatible, refused)


def transformers_backend(architectures: tuple[str, ...], profile, expert_counts: tuple = ()) -> \
        TransformersBackend | None:
    """The Transformers backend's judgement of config.json's first architecture (`expert_counts`: config.json's
    EXPERT_ALIASES, ModelConfig.expert_counts) when `profile`'s release registers none of `architectures`; None
    when it registers one, when config.json names none, or when the profile has no transformers data."""
    version = TRANSFORMERS.get(getattr(profile, "name", ""))
    if version is None or not architectures or any(serves(a, profile) for a in architectures):
        return None
    found = TRANSFORMERS_CLASSES[version].get(architectures[0])
    if found is None or not found.compatible:
        return TransformersBackend(version, found, None)
    # transformers_utils/model_arch_config_convertor.py get_num_experts: the first alias the text config has (its
    # class's default unless config.json gives it), a list's first entry; ModelConfig.is_moe: > 0
    given, defaults = dict(expert_counts), dict(found.experts)
    experts = next((given.get(alias, defaults.get(alias)) for alias in EXPERT_ALIASES
                    if alias in given or alias in defaults), 0)
    experts = experts[0] if isinstance(experts, (list, tuple)) and experts else experts
    moe = isinstance(experts, int) and experts > 0
    pooling = architectures[0].endswith(_POOLING_SUFFIX) and not architectures[0].endswith(_GENERATE_SUFFIXES)
    built = (f"Transformers{'MultiModal' if found.nested else ''}{'MoE' if moe else ''}"
             f"{'EmbeddingModel' if pooling else 'ForCausalLM'}")
    return TransformersBackend(version, found, built)


def transformers_backend_arch(config: ModelConfig, profile) -> Arch | None:
    """The layout of a TransformersForCausalLM the release builds for an architecture it does not register, from
    its generated tp_plan; None for any other judgement (transformers_backend)."""
    backend = transformers_backend(config.architectures, profile, config.expert_counts)
    if backend is None or backend.built != _CAUSAL_LM or backend.found is None or not backend.found.attention:
        return None
    plan = {key.removeprefix("layers.*."): style for key, style in (backend.found.tp_plan or {}).items()}
    return _transformers_backend(config.architectures[0], plan=plan)


# The backend's TransformersMultiModalForCausalLM (transformers/multimodal.py MultiModalMixin over base.py Base,
# 0.33 / 0.34 alike) for a nested class the release does not register: AutoModel.from_config builds transformers'
# model whole (no lm_head: causal.py CausalMixin's ParallelLMHead with the quant config); the text model (its child
# language_model / text_model) is laid out as a TransformersForCausalLM from the text config's tp_plan, its Attention
# layers the modules of each decoder layer dispatching the attention interface (AttentionFuser validates the text
# config's modules only: a tower's attention stays transformers' computation, no vLLM Attention, no KV cache). Every
# nn.Linear outside it becomes what MultiModal.linears records (generated from transformers): the QKVFuser's
# QKVParallelLinear over the module's own head_dim (the tower's heads) and its output rowwise, the GLUFuser's
# MergedColumnParallelLinear and its down projection rowwise, the model tp_plan's style, else a ReplicatedLinear; all
# with the model's quant config. One Tower per child of the model holding them, under the child's name with and
# without the "model." prefix (transformers' legacy names and its 4.52+ ones). The mapper (MultiModal.renames) names
# the modules and, applied to the quant config's lists (SupportsQuant._maybe_apply_model_mapping), leaves an entry
# that is no checkpoint name as it is: a "re:vision_tower.*" is then matched against model.vision_tower.*, no match.
_LINEAR_STYLES = {**_PLAN_CLASS, "replicate": REPLICATED}


def _multimodal_tower(child: str, linears: tuple[tuple[str, str], ...]) -> Tower | None:
    """The Tower of the backend's linears under the model's child `child` (MultiModal.linears), by tail: the path
    after the last layer index, else after the child; longest first (tail_match takes the first that ends a name).
    None where one tail is built two ways, or one fused leaf from two sets of shards (no tail tells them apart)."""
    styles: dict[str, str] = {}
    packed: dict[str, tuple[str, ...]] = {}
    shards: dict[tuple[str, str], dict[str, str]] = {}  # (parent tail, fused leaf) -> shard -> leaf
    for path, built in linears:
        tail = path.rpartition("*.")[2] if "*." in path else path.removeprefix(f"{child}.")
        parent, _, leaf = tail.rpartition(".")
        fused, _, shard = built.partition(".")
        if shard:
            shards.setdefault((parent, fused), {})[shard] = leaf
        elif styles.setdefault(tail, _LINEAR_STYLES.get(built, REPLICATED)) != _LINEAR_STYLES.get(built, REPLICATED):
            return None
    for (parent, fused), parts in shards.items():
        order = ("q", "k", "v") if fused == "qkv_proj" else ("gate", "up")
        if packed.setdefault(fused, tuple(parts[part] for part in order)) != tuple(parts[part] for part in order):
            return None
        styles[f"{parent}.{fused}" if parent else fused] = ("QKVParallelLinear" if fused == "qkv_proj"
                                                            else "MergedColumnParallelLinear")
    styles = dict(sorted(styles.items(), key=lambda item: -len(item[0])))
    return Tower("vllm:transformers/multimodal.py", (f"{child}.", f"model.{child}."), styles=styles, packed=packed,
                 vision_heads=True, unplanned=REPLICATED)


def transformers_multimodal_arch(config: ModelConfig, profile) -> Arch | None:
    """The layout of a TransformersMultiModalForCausalLM the release builds for an architecture it does not register
    (the generated MultiModal); None for any other judgement (transformers_backend)."""
    backend = transformers_backend(config.architectures, profile, config.expert_counts)
    if backend is None or backend.built != _MULTIMODAL_CAUSAL_LM or backend.found is None:
        return None
    multimodal = backend.found.multimodal
    if multimodal is None or not multimodal.attention:
        return None
    plan = {key.removeprefix("layers.*."): style for key, style in (backend.found.tp_plan or {}).items()}
    children = dict.fromkeys(path.partition(".")[0] for path, _ in multimodal.linears)
    towers = [_multimodal_tower(child, tuple(entry for entry in multimodal.linears if entry[0].startswith(f"{child}.")))
              for child in children]
    built = tuple(tower for tower in towers if tower is not None)
    if len(built) != len(towers):
        return None
    return _transformers_backend(config.architectures[0], plan=plan)._replace(
        source="vllm:transformers/multimodal.py", towers=built,
        hf_to_vllm=tuple(("regex", old, new) for old, new in multimodal.renames))
_MOE_CAUSAL_LM = "TransformersMoEForCausalLM"
_TEXT_ONLY = (_CAUSAL_LM, _MOE_CAUSAL_LM)  # the classes whose attention the generator reads


def transformers_moe_arch(config: ModelConfig, profile) -> Arch | None:
    """The layout of a TransformersMoEForCausalLM the release builds for a text-only architecture it does not
    register: its generated tp_plan (as transformers_backend_arch) and its MoE block as transformers/moe.py
    MoEMixin.recursive_replace replaces it (transformers_classes.TransformersMoE, read with the release's own
    MoEBlockFuser); None for any other judgement (transformers_backend)."""
    backend = transformers_backend(config.architectures, profile, config.expert_counts)
    if backend is None or backend.built != _MOE_CAUSAL_LM or backend.found is None or not backend.found.attention:
        return None
    block = TRANSFORMERS_MOE[backend.version].get(config.architectures[0])
    if block is None:
        return None
    plan = {key.removeprefix("layers.*."): style for key, style in (backend.found.tp_plan or {}).items()}
    if block.shared:  # the GLUFuser builds the projection after the shared expert's fused gate / up rowwise
        plan[f"{block.shared}.down_proj"] = "rowwise"
    # An MLA model (base.py: kv_lora_rank): fusers/mla.py MLAFuser builds DeepSeek-V2's projections (q_a_proj and
    # kv_a_proj_with_mqa fused into fused_qkv_a_proj, a MergedColumnParallelLinear with disable_tp; q_b_proj /
    # kv_b_proj colwise, o_proj rowwise; without q-LoRA kv_a_proj_with_mqa replicated and q_proj colwise), whatever the
    # plan says, and base.py the MLAAttention self_attn.attn.
    if not block.mla:
        return _transformers_backend(config.architectures[0], plan=plan, **_moe_block_fields(config.architectures[0],
                                                                                             block))
    plan = {**{tail: style for tail, style in plan.items() if not tail.startswith("self_attn.")}, **_MLA_FUSER_PLAN}
    arch = _transformers_backend(config.architectures[0], plan=plan, mla=True, mla_attention="attn",
                                 disable_tp=("self_attn.fused_qkv_a_proj",),
                                 **_moe_block_fields(config.architectures[0], block))
    return arch._replace(styles={**arch.styles, "self_attn.fused_qkv_a_proj": "MergedColumnParallelLinear"})


_MLA_FUSER_PLAN = {"self_attn.q_b_proj": "colwise", "self_attn.q_proj": "colwise", "self_attn.kv_b_proj": "colwise",
                   "self_attn.kv_a_proj_with_mqa": "replicate", "self_attn.o_proj": "rowwise"}


def _moe_block_fields(architecture: str, block: TransformersMoE) -> dict[str, Any]:
    """The Arch fields of a backend MoE block (moe.py recursive_replace, 0.33 / 0.34 alike): a matched router routes
    inside the FusedMoE as a GateLinear built without quant_config (scoring_func, renormalize, the grouped top-k where
    the config sets n_group and topk_group, its e_score_correction_bias), a shared expert's scalar gate a
    ReplicatedLinear without quant_config; any other router stays transformers' module, handed to the FusedMoE as
    its custom_routing_function (routing method Custom), an nn.Linear of it replaced as any other (Base), a bare
    weight parameter no linear. The activation is SiLU, SwiGLU-OAI for an architecture named gptoss. The checkpoint's
    names are renamed by transformers' WeightRenamings (base.py's hf_to_vllm_mapper; a regex each)."""
    activation = "swigluoai" if "gptoss" in architecture.lower() else "silu"
    renames = tuple(("regex", pattern, replacement) for pattern, replacement in block.renames)
    if block.gate is None:
        return dict(router=Router(custom="Custom"), parameter_weights=block.kept_routers, moe_activation=activation,
                    hf_to_vllm=renames)
    # a matched router has both a scoring function and a renormalization (TransformersMoE)
    renormalize = block.renormalize if block.renormalize is not None else True
    return dict(router=Router(scoring=block.scoring or "softmax", renormalize=renormalize, groups=block.groups,
                              bias=block.bias),
                unquantized=(block.gate,) + ((block.shared_gate,) if block.shared_gate else ()),
                moe_activation=activation, hf_to_vllm=renames)


# Architectures not in the table: the name-based rules fp8check had before the table, which cover
# Llama-like decoders and the router names of the MoE families above. MTP layers declared in the config
# are skipped as every vLLM loader above skips them (an inference for an unknown model).
GENERIC_ARCH = Arch(GENERIC, unquantized=("mlp.gate", "block_sparse_moe.gate", "mlp.shared_expert_gate",
                                          "feed_forward.router", "mlp.router"),
                    spec_layers="num_nextn_predict_layers")


# Model packages that refuse a platform when vLLM's registry imports them (vllm/models/<package>/__init__.py):
# architecture -> (platform kinds, the logged exception, the change that brought the package).
IMPORT_REFUSALS: dict[str, tuple[tuple[str, ...], str, str]] = {
    **{arch: (("xpu",), "NotImplementedError: Qwen4Exp currently supports CUDA and ROCm only", "qwen4exp")
       for arch in ("Qwen4ExpForCausalLM", "Qwen4ExpForConditionalGeneration")},
    "HYV4ForCausalLM": (("xpu",), "NotImplementedError: hy_v4 does not yet support XPU.", "hy-v4"),
    "Glm5NextForCausalLM": (("xpu",), "NotImplementedError: GLM-5.3-Flash does not currently support XPU.",
                            "glm5next"),
    "Glm5NextForConditionalGeneration": (("xpu",), "NotImplementedError: GLM-5.3-Flash does not currently support "
                                                   "XPU.", "glm5next"),
    # models/dots3_note/nvidia/attention.py imports mla/prefill/flash_attn.py, which imports a name fa_utils.py
    # defines on CUDA, XPU and ROCm only.
    "Dots3NoteForCausalLM": (("cpu",), "ImportError: cannot import name 'compile_flash_attn_varlen_func_from_specs' "
                                       "from 'vllm.v1.attention.backends.fa_utils'", "dots3-note"),
    "MistralLarge4ForCausalLM": (("xpu", "cpu"), "NotImplementedError: Mistral Large 4 is only supported on NVIDIA and "
                                                 "AMD GPUs.", "mistral-large-4"),
}
# Model classes a package resolves, on some platforms, to a stub whose __init__ raises: architecture -> (platform
# kinds, vLLM's message, verbatim). vllm/models/deepseek_v4/__init__.py (0.30-0.34): vl_stub.py on CPU and XPU;
# vllm/models/deepseek_v41/__init__.py resolves the NVIDIA classes everywhere but ROCm, whose attention asserts a
# CUDA device capability (deepseek_v4/nvidia/ops/o_proj.py compute_fp8_einsum_recipe).
CONSTRUCTION_REFUSALS: dict[str, tuple[tuple[str, ...], str] | tuple[tuple[str, ...], str, str]] = {
    "DeepseekV4ForConditionalGeneration": (("cpu", "xpu"), "DeepSeek-V4 vision (DeepseekV4ForConditionalGeneration) "
                                           "is not supported on the current platform; use CUDA or ROCm."),
    "DeepseekV41ForCausalLM": (("cpu", "xpu"), "AssertionError: DeepseekV4 attention requires a CUDA device "
                                               "(models/deepseek_v41 has no CPU or XPU implementation)"),
    # models/kimi_k3/__init__.py (0.33, 0.34) builds the text model on XPU with amd/linear.py, whose full-rank-gate
    # KDA layers (amd/kda.py KimiK3DeltaAttention) ask amd/ops/kda_decode.py is_fused_kda_decode_supported, which
    # imports vllm.platforms.rocm: its import-time _get_gcn_arch falls back from amdsmi to torch.cuda, which an XPU
    # build of torch refuses. A third entry: the profile change that brought it.
    **{arch: (("xpu",), "AssertionError: Torch not compiled with CUDA enabled (models/kimi_k3's XPU text model "
                        "builds amd/kda.py's KDA layers, which import vllm.platforms.rocm and query the GPU through "
                        "torch.cuda)", "kimi-xpu-amd-linear")
       for arch in ("KimiK3ForConditionalGeneration", "KimiK31ForConditionalGeneration")},
    # models/qwen4_exp common/ngram_embedding.py (0.33, 0.34): the PLE table is a Qwen4ExpPLEPinnedHostEmbedding
    # under the default EngramConfig(cpu_offload=True), whose UVA view (utils/torch_utils.py
    # get_accelerator_view_from_cpu_tensor) only CUDA, ROCm and XPU give.
    **{arch: (("cpu",), "`get_accelerator_view_from_cpu_tensor` is currently not supported in: cpu")
       for arch in ("Qwen4ExpForCausalLM", "Qwen4ExpForConditionalGeneration")},
}


class QuantConfigRefusal(NamedTuple):
    """A model class that raises while building under any quant config but those it accepts, on some platforms."""

    kinds: tuple[str, ...]      # platform kinds
    accepted: tuple[str, ...]   # get_name() of the quant configs it builds with
    message: str                # vLLM's, verbatim; {name}: the config's get_name()
    # (WHEEL_CHANGES key, the message before that release)
    before: tuple[str, str] | None = None

    def text(self, profile) -> str:
        return self.before[1] if self.before and not profile.has(self.before[0]) else self.message


# Architectures whose classes refuse a quant config while building: models/muse_spark nvidia/model.py and amd/model.py
# MuseSparkForCausalLM.__init__ (0.33 MuseSpark1xForCausalLM), supported_quantization_configs: ModelOptNvFp4Config
# off ROCm, QuarkConfig on ROCm (the Omni class builds the text class with the same vllm_config).
_MUSE_SPARK_NVIDIA = ("only supports NVFP4 (modelopt_fp4) quantized checkpoints; got quantization '{name}'.")
_MUSE_SPARK_AMD = ("on ROCm only supports Quark W8A8 FP8 or OCP-MXFP4 W4A4 quantized checkpoints; got quantization "
                   "'{name}'.")
QUANT_CONFIG_REFUSALS: dict[str, tuple[QuantConfigRefusal, ...]] = {
    "MuseSparkForConditionalGeneration": (
        QuantConfigRefusal(("cuda", "xpu", "cpu"), ("modelopt_fp4",), f"Muse Spark {_MUSE_SPARK_NVIDIA}",
                           ("muse-spark-rename", f"MuseSpark1x {_MUSE_SPARK_NVIDIA}")),
        QuantConfigRefusal(("rocm",), ("quark",), f"Muse Spark {_MUSE_SPARK_AMD}",
                           ("muse-spark-rename", f"MuseSpark1x {_MUSE_SPARK_AMD}"))),
}


def quant_config_refusal(architectures: tuple[str, ...], config_name: str | None, ctx) -> str | None:
    """vLLM's refusal of the quant config (its get_name(); None: unquantized) by the model class the release builds
    (the first listed architecture it registers) on this platform; None: accepted."""
    arch = next((a for a in architectures if serves(a, ctx.profile)), None)
    if config_name is None or arch is None:
        return None
    refusal = next((r for r in QUANT_CONFIG_REFUSALS.get(arch, ()) if ctx.kind in r.kinds), None)
    if refusal is None or config_name in refusal.accepted:
        return None
    return refusal.text(ctx.profile).format(name=config_name)


# registry.py _ModelRegistry.inspect_model_cls / _raise_for_unsupported: what the import failure becomes, verbatim.
INSPECT_FAILED = "Model architectures {archs} failed to be inspected. Please check the logs for more details."


# The versions MiniCPMV.__new__ (minicpmv.py) and MiniCPMO.__new__ (minicpmo.py) build a class for, 0.25-0.34 alike,
# and how many dot-separated parts of config.version each reads (None: all of them).
MINICPM_VERSIONS: dict[str, tuple[tuple[tuple[int, int], ...], int | None]] = {
    "MiniCPMV": (((2, 0), (2, 5), (2, 6), (4, 0), (4, 5)), None), "MiniCPMO": (((2, 6), (4, 5)), 2)}


# Versions of a table entry that its model file builds as another class, which fp8check does not lay out:
# architecture -> (the parsed config.json version, why). minicpmv.py MiniCPMV.__new__ builds 2.0 as MiniCPMV2_0.
UNLAID_VERSIONS: dict[str, dict[tuple[int, ...], str]] = {"MiniCPMV": {(2, 0): (
    "MiniCPM-V 2.0 is MiniCPMV2_0 (minicpmv.py: timm's SigLIP VisionTransformer under vpm., plain nn.Linears, and "
    "MiniCPM's text model), which fp8check does not lay out")}}


def unlaid_variant(config: ModelConfig) -> str | None:
    """Why an entry's layout does not apply to this config (UNLAID_VERSIONS), or None."""
    arch = next((a for a in config.architectures if a in ARCHITECTURES), None)
    if arch not in UNLAID_VERSIONS or config.version is None:
        return None
    try:
        version = tuple(int(part) for part in config.version.split("."))
    except ValueError:
        return None
    return UNLAID_VERSIONS[arch].get(version)


# config/kernel.py validate_flashinfer_moe_ep_model (KernelConfig.set_platform_defaults, 0.29+): the FlashInfer
# MoE-EP --moe-backend values it checks (0.29-0.31 FLASHINFER_MOE_EP_BACKENDS, mega_cutedsl gone from 0.32's values)
# and the architectures that take them (FLASHINFER_MOE_EP_ARCHITECTURES, as the release registers them: DeepSeek-V4.1
# from 0.30).
FLASHINFER_MOE_EP_VALIDATED = ("flashinfer_moe_ep_mega_deep_gemm", "flashinfer_moe_ep_mega_cutedsl")
FLASHINFER_MOE_EP_ARCHITECTURES = ("DeepseekV4ForCausalLM", "DeepSeekV4MTPModel", "DeepseekV41ForCausalLM")


def moe_backend_model_refusal(architectures: tuple[str, ...], ctx) -> str | None:
    """vLLM's refusal, while configuring, of a FlashInfer MoE-EP --moe-backend for a model that has no such path."""
    if ctx.moe_backend not in FLASHINFER_MOE_EP_VALIDATED:
        return None
    known = sorted(a for a in FLASHINFER_MOE_EP_ARCHITECTURES if serves(a, ctx.profile))
    if any(a in known for a in architectures):
        return None
    return (f"moe_backend={ctx.moe_backend!r} is only supported for DeepSeek-V4 models ({known}), but the model is "
            f"{list(architectures)}.")


def version_refusal(config: ModelConfig) -> str | None:
    """The ValueError MiniCPMV / MiniCPMO's __new__ raises, verbatim, for a config.json version it builds no class for
    (a config without one builds 2.0 / 2.5, MiniCPM-o 2.6)."""
    arch = next((a for a in config.architectures if a in ARCHITECTURES), None)
    if arch not in MINICPM_VERSIONS or config.version is None:
        return None
    supported, parts = MINICPM_VERSIONS[arch]
    numbers = config.version.split(".")[:parts]
    bad = next((part for part in numbers if not part.strip().lstrip("+-").isdigit()), None)
    if bad is not None:  # int() refuses a part; MiniCPMO re-raises it as its own ValueError
        return (f"Invalid model version format in config: {config.version}. Expected a dot-separated version string "
                "like '4.5'." if parts else f"invalid literal for int() with base 10: {bad!r}")
    values = tuple(int(part) for part in numbers)
    if values in supported:
        return None
    shown = ", ".join(f"{major}.{minor}" for major, minor in supported)
    return f"Currently, {arch} only supports versions {shown}. Got version: {values}"


def import_refusal(architectures: tuple[str, ...], ctx) -> str | None:
    """vLLM's refusal of a model whose package raises on this platform when imported (None: it imports)."""
    for arch in architectures:
        refusal = IMPORT_REFUSALS.get(arch)
        if refusal and ctx.kind in refusal[0] and ctx.profile.has(refusal[2]):
            return f"{INSPECT_FAILED.format(archs=list(architectures))} (logged before it: {refusal[1]})"
    return None


def construction_refusal(architectures: tuple[str, ...], ctx) -> str | None:
    """vLLM's refusal of a model whose class, on this platform, raises while building (None: built)."""
    refusal = next((CONSTRUCTION_REFUSALS[a] for a in architectures if a in CONSTRUCTION_REFUSALS), None)
    if refusal is None or ctx.kind not in refusal[0] or (len(refusal) > 2 and not ctx.profile.has(refusal[2])):
        return None
    return refusal[1]


# registry.py _PREVIOUSLY_SUPPORTED_MODELS entries that a release with a profile added: architecture -> (the last
# vLLM release that served it, the change that retired it). Entries retired before 0.25 are not listed.
RETIRED: dict[str, tuple[str, str]] = {
    "KeyeForConditionalGeneration": ("0.33.0", "transformers-backend-034"),
    "KeyeVL1_5ForConditionalGeneration": ("0.33.0", "transformers-backend-034"),
}
# registry.py _ModelRegistry._raise_for_unsupported, verbatim.
RETIRED_ERROR = ("Model architecture {arch} was supported in vLLM until v{until}, and is not supported anymore. "
                 "Please use an older version of vLLM if you want to use this model architecture.")


def retired_error(architectures: tuple[str, ...], profile) -> str | None:
    """vLLM's refusal of a checkpoint whose every listed architecture its registry has retired (None: served)."""
    retired = [a for a in architectures if a in RETIRED and profile.has(RETIRED[a][1])]
    if not retired or len(retired) < len(architectures):
        return None
    return RETIRED_ERROR.format(arch=retired[0], until=RETIRED[retired[0]][0])


def arch_for(architectures: tuple[str, ...], profile=None) -> Arch | None:
    """The table entry of the first listed architecture vLLM would pick (one `profile`'s release registers; None:
    any), or None (generic rules)."""
    return next((ARCHITECTURES[a] for a in architectures
                 if a in ARCHITECTURES and (profile is None or serves(a, profile))), None)


# The model files whose MoE block refuses, while building, a TP group larger than its routed experts (with or without
# expert parallelism: `if self.tp_size > config.<key>: raise ValueError(...)`, 0.25-0.34; hunyuan_v1.py had it too
# before its move to the Transformers backend), and the config key each reads (fp8check.core.checkpoint.local
# EXPERT_COUNT_KEYS). The VL / hybrid files build another file's block: qwen3_vl_moe.py and
# qwen3_omni_moe_thinker.py qwen3_moe.py's, qwen3_5.py qwen3_next.py's, mimo_v2_omni.py mimo_v2.py's, ernie45_vl.py
# ernie45_vl_moe.py's (the largest entry of its list of text and vision experts).
TP_ABOVE_EXPERTS = {
    "qwen2_moe.py": "num_experts", "qwen3_moe.py": "num_experts", "qwen3_next.py": "num_experts",
    "qwen3_5.py": "num_experts", "qwen3_vl_moe.py": "num_experts", "qwen3_omni_moe_thinker.py": "num_experts",
    "k2_horizon.py": "num_experts", "laguna.py": "num_experts",
    "exaone_moe.py": "num_experts", "hy_v3.py": "num_experts", "cohere2_moe.py": "num_experts",
    "lfm2_moe.py": "num_experts", "alice_ai.py": "num_experts", "minimax_m2.py": "num_local_experts",
    "mimo_v2.py": "n_routed_experts", "mimo_v2_omni.py": "n_routed_experts", "step3_text.py": "moe_num_experts",
    "step3p5.py": "moe_num_experts", "ernie45_moe.py": "moe_num_experts", "ernie45_vl.py": "moe_num_experts",
}


def experts_tp_error(arch: Arch | None, config: ModelConfig, tp: int) -> str | None:
    """The ValueError of a TP_ABOVE_EXPERTS model file's MoE block when TP exceeds the config's expert count, verbatim
    (the count printed as the model file prints it: ERNIE-4.5-VL's whole list)."""
    key = TP_ABOVE_EXPERTS.get(arch.source.removeprefix("vllm:")) if arch is not None else None
    count = dict(config.expert_counts).get(key) if key else None
    counts = count if isinstance(count, tuple) else (count,)
    if not counts or not all(isinstance(n, int) and not isinstance(n, bool) for n in counts) or tp <= max(counts):
        return None
    shown = list(counts) if isinstance(count, tuple) else count
    return f"Tensor parallel size {tp} is greater than the number of experts {shown}."


# registry.py _ModelRegistry._raise_for_unsupported's refusal of what no table and no Transformers class serves.
NOT_SUPPORTED = "Model architectures {archs} are not supported for now"


def unserved_reason(architectures: tuple[str, ...], profile, expert_counts: tuple = ()) -> str | None:
    """Why a checkpoint none of whose architectures `profile`'s release registers (fp8check.core.model.vllm_registry)
    is not laid out: vLLM refuses it, or builds it through its Transformers backend (registry.py inspect_model_cls
    falls back to _try_resolve_transformers: transformers' own class, or the config's auto_map with
    --trust-remote-code) as a class fp8check names but does not lay out (transformers_backend; `expert_counts`:
    ModelConfig.expert_counts). None when the release registers one of them (or when config.json names none)."""
    if not architectures or any(serves(a, profile) for a in architectures):
        return None
    later = [name for name in SERVED_BY.get(architectures[0], ()) if name != profile.name]
    since = f" (registered by vLLM {', '.join(later)})" if later else ""
    head = f"vLLM {profile.name} registers no {'/'.join(architectures)}{since}"
    refusal = f"'{NOT_SUPPORTED.format(archs=list(architectures))}'"
    backend = transformers_backend(architectures, profile, expert_counts)
    if backend is None:
        return f"{head}: it refuses it ({refusal}) unless its Transformers backend builds it, which is not modelled"
    assumed = f"transformers {backend.version}, the newest vLLM {profile.name} allows,"
    if backend.found is None:
        return (f"{head}: {assumed} has no causal-LM or image-text-to-text class {architectures[0]}, so vLLM refuses "
                f"it ({refusal}) unless the config's auto_map names remote code (--trust-remote-code), not modelled")
    if backend.built is None:
        return (f"{head}: {NOT_SUPPORTED.format(archs=list(architectures))} ({architectures[0]} of {assumed} is not "
                "backend-compatible)")
    if backend.found.nested is None or (backend.built in _TEXT_ONLY and backend.found.attention is None):
        return (f"{head}: its Transformers backend builds {architectures[0]} of {assumed} as {backend.built}, which "
                "fp8check could not read (the class does not build from its config class's defaults): not modelled")
    return (f"{head}: its Transformers backend builds {architectures[0]} of {assumed} as {backend.built}, which is "
            "not laid out")


# transformers/base.py _create_attention_instances (0.33 / 0.34), verbatim: a decoder layer no module of which
# dispatches through the attention interface ("{layer}": its index, with config.layer_types' entry in parentheses).
UNDISPATCHED = ("Layer {layer} does not dispatch through the Transformers attention interface and vLLM has no other "
                "way to handle it.")


def transformers_refusal(config: ModelConfig, profile) -> str | None:
    """vLLM's refusal of a checkpoint its release does not register whose transformers class is not
    backend-compatible, or whose first decoder layer dispatches no attention through the interface
    (TransformersClass.attention; transformers_backend); None: any other judgement."""
    architectures = config.architectures
    backend = transformers_backend(architectures, profile, config.expert_counts)
    if backend is None or backend.found is None:
        return None
    if backend.built is None:
        return (f"{NOT_SUPPORTED.format(archs=list(architectures))} (vLLM {profile.name} registers none of them, and "
                f"{architectures[0]} of transformers {backend.version}, the newest it allows, is not "
                "backend-compatible: is_backend_compatible() and _can_set_attn_implementation() are false)")
    if backend.found.attention == () and backend.built in _TEXT_ONLY:
        layer_types = config.sliding.layer_types
        return UNDISPATCHED.format(layer=f"0 ({layer_types[0]})" if layer_types else "0")
    return _undispatched_moe_layer(config, backend)


def _undispatched_moe_layer(config: ModelConfig, backend: TransformersBackend) -> str | None:
    """base.py _create_attention_instances' refusal of a TransformersMoEForCausalLM's first decoder layer whose
    config.layer_types entry is one whose layers dispatch no attention through the interface in the class's default
    build (TransformersMoE.undispatched: MiniMax's linear_attention layers)."""
    block = TRANSFORMERS_MOE[backend.version].get(config.architectures[0]) if backend.built == _MOE_CAUSAL_LM else None
    layer_types = config.sliding.layer_types or ()
    first = next((i for i, kind in enumerate(layer_types) if block is not None and kind in block.undispatched), None)
    return None if first is None else UNDISPATCHED.format(layer=f"{first} ({layer_types[first]})")


# transformers' MODEL_FOR_CAUSAL_LM_MAPPING_NAMES (5.24) for the text model types of registered_text_model entries.
CAUSAL_LM_CLASSES = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM",
                     "ministral3": "Ministral3ForCausalLM", "deepseek_v3": "DeepseekV3ForCausalLM",
                     "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM", "qwen3_moe": "Qwen3MoeForCausalLM",
                     "cohere2": "Cohere2ForCausalLM", "granite": "GraniteForCausalLM", "gemma": "GemmaForCausalLM",
                     "gemma2": "Gemma2ForCausalLM", "lfm2": "Lfm2ForCausalLM"}


def text_model_architecture(config: ModelConfig) -> str | None:
    """The class vLLM builds a vision-language config's text model with (config/vllm.py VllmConfig.with_hf_config):
    text_config.architectures when given, else transformers' causal-LM class of text_config.model_type."""
    if config.text_architectures:
        return config.text_architectures[0]
    return CAUSAL_LM_CLASSES.get(config.text_model_type)


def model_arch(config: ModelConfig, profile, kind: str = "") -> Arch | None:
    """arch_for(config.architectures, profile) as `profile`'s release builds it (Arch.for_release; None: the newest)
    on the platform `kind` (Arch.rocm_layout; "": the CUDA one), with a registered_text_model entry's text model laid
    out as the table entry of its own class (its towers kept); an unlisted text class keeps the entry's own layout."""
    if unlaid_variant(config):
        return None
    arch = arch_for(config.architectures, profile)
    if arch is None and profile is not None:
        arch = (transformers_backend_arch(config, profile) or transformers_moe_arch(config, profile)
                or transformers_multimodal_arch(config, profile))
    if arch is not None and arch.vision_towers:
        tower = arch.vision_towers.get(config.vision_model_type)
        arch = arch._replace(towers=(tower, *arch.towers) if tower is not None else arch.towers, vision_towers={})
    if arch is not None and arch.registered_text_model:
        text = ARCHITECTURES.get(text_model_architecture(config) or "")
        if text is not None and text.moved is not None:  # the implementation this release builds the class with
            text = text.for_release(profile)
        # the entry's towers as the release builds them, and the names it appends to the quant config's lists; its
        # spec_prefix (the text model's MTP under the entry's prefix) where it names one; its bare parameters beside
        # the text model's (Ovis2.5's vte)
        towers, renames = arch.for_release(profile).towers, arch.hf_to_vllm
        spec_prefix = arch.spec_prefix or (text.spec_prefix if text is not None else None)
        kept: dict[str, Any] = dict(
            towers=towers, hf_to_vllm=renames, spec_prefix=spec_prefix, fp8_ignored_layers=arch.fp8_ignored_layers,
            quant_prefixes=(*(text.quant_prefixes if text is not None else ()), *arch.quant_prefixes),
            matrix_norms=arch.matrix_norms + (text.matrix_norms if text is not None else ()))
        if text is not None and text.rocm_layout:  # the text model's ROCm implementation under the same towers
            text = text._replace(rocm_layout=(text.rocm_layout[0], text.rocm_layout[1]._replace(**kept)))
        arch = text._replace(**kept) if text is not None else arch
    if arch is not None and arch.rocm_layout and kind == "rocm" and (profile is None or profile.has(arch.rocm_layout[0])):
        arch = arch.rocm_layout[1]
    return arch.for_release(profile) if arch is not None else None


def offset_prefixes(arch: Arch, config: ModelConfig) -> tuple[tuple[str, str, str], ...]:
    """Arch.offset_prefix as renames (regex, as quant_prefixes'), one per decoder layer of config.json's
    num_hidden_layers; Arch.hybrid_offset_prefixes one per layer of config.layer_types and part."""
    layer_types = config.sliding.layer_types
    if arch.hybrid_offset_prefixes and layer_types:
        hybrid = layer_types.count("hybrid")
        return tuple(("regex", rf"^.*?\.layers\.{i}\.{re.escape(part)}\.", f"{hybrid + i}.{prefix}.")
                     for i in range(len(layer_types)) for part, prefix in arch.hybrid_offset_prefixes)
    if arch.offset_prefix is None or not config.num_hidden_layers:
        return ()
    part, prefix = arch.offset_prefix
    layers = config.num_hidden_layers
    return tuple(("regex", rf"^(.*?)\.layers\.{i}\.{re.escape(part)}\.", rf"\g<1>.{layers + i}.{prefix}.")
                 for i in range(layers))


def map_vllm_name(name: str, renames: tuple[tuple[str, str, str], ...]) -> str:
    """WeightsMapper.map_name (models/utils.py, 0.25-0.34) over Arch.hf_to_vllm's renames: every regex (re.sub),
    then the first occurrence of each substring, each prefix, each suffix, in turn. Renames only (get_rename_mapper
    drops the None entries), so a name always maps to a name. It is also WeightsMapper.apply_list on one entry of a
    quantization config's layer list."""
    for kind, old, new in renames:
        if kind == "regex":
            name = re.sub(old, new, name)
        elif kind == "substr" and old in name:
            name = name.replace(old, new, 1)
        elif kind == "prefix" and name.startswith(old):
            name = name.replace(old, new, 1)
        elif kind == "suffix" and name.endswith(old):
            name = new.join(name.rsplit(old, 1))
    return name


def vllm_module_name(name: str, renames: tuple[tuple[str, str, str], ...]) -> str:
    """The name vLLM's model gives the module a checkpoint names `name`: the loader maps its tensors' names
    (`<name>.weight`), so a "lm_head." prefix rule renames the module lm_head (a bare "lm_head" list entry is not)."""
    return map_vllm_name(f"{name}.weight", renames).removesuffix(".weight") if renames else name


def sparse_mla_layer(arch: Arch | None, config: ModelConfig, index: int) -> bool:
    """Whether MLA layer `index` is a DeepSeek sparse-attention layer with an indexer (Arch.sparse_mla; with
    Arch.sparse_layer_types only the layers config.layer_types names so, and only when index_topk is set: hy_v4)."""
    if arch is None or not arch.sparse_mla:
        return False
    if not arch.sparse_layer_types:
        return True
    types = config.sliding.layer_types or ()
    return config.index_topk is not None and index < len(types) and types[index] in arch.sparse_layer_types


def tower_for(arch: Arch, name: str) -> Tower | None:
    return next((t for t in arch.towers if name.startswith(t.roots)), None)


def tail_match(name: str, tails) -> str | None:
    """The first `tails` entry that `name` ends with at a dot boundary ('mlp.gate' matches
    'model.layers.3.mlp.gate', not '...mlp.gate_proj')."""
    return next((t for t in tails if name == t or name.endswith("." + t)), None)


# Sliding-window attention. vLLM's Attention takes `per_layer_sliding_window` when the model file passes one,
# else CacheConfig.sliding_window (layers/attention/attention.py, 0.28.0 / 0.33.0), which EngineArgs sets to
# hf_text_config.sliding_window only when config.layer_types is absent or all "sliding_attention" (engine/
# arg_utils.py create_engine_config, 0.27.1-0.33.0; 0.25 / 0.26 test `not is_interleaved(...)`, one distinct layer
# type, which this does not model); a window of 0 is read as none (config/model.py). hf_text_config is the
# transformers config class of the text model_type, whose __post_init__ fills defaults that config.json may lack:
# HF_WINDOWS, read from transformers 5.16.1 and 5.24, alike (vLLM 0.28 needs transformers >= 5.5.3, 0.33
# 5.16.1-5.21).
SLIDING_KIND = "sliding window"   # AttentionReport.kind of a sliding-window layer: "sliding window 4096"
SLIDING = "sliding_attention"


class HFWindow(NamedTuple):
    """What one transformers config class makes of config.json's sliding-window keys."""

    default: int | None = None          # sliding_window when config.json has no such key
    gated: bool = False                 # `sliding_window if use_sliding_window else None` (Qwen2-MoE: else 0)
    gated_default: bool = False         # with gated: use_sliding_window when config.json has none (Flint: true)
    # How __post_init__ fills layer_types when config.json has none: (layer index, keys, window) -> sliding.
    fills: Callable[[int, SlidingKeys, int | None], bool] | None = None
    forced_none: bool = False           # __post_init__ sets sliding_window = None whatever config.json says
    window_layers: int | None = None    # max_window_layers when config.json has none (Qwen)
    last_full: bool = False             # __post_init__ makes the last layer full attention (Gemma-4)
    # __post_init__ fills layer_types with `(i + 1) % sliding_window_pattern` after setting the pattern to 0 for a
    # null window (Exaone4Config, ExaoneMoeConfig; transformers 5.20-5.24): PATTERN_ERRORS without layer_types.
    pattern_modulo: bool = False


def _pattern(keys: SlidingKeys, default: int) -> int:
    """sliding_window_pattern, or `default` where config.json has none (letters are Exaone's alone: _exaone)."""
    return keys.sliding_window_pattern if isinstance(keys.sliding_window_pattern, int) and keys.sliding_window_pattern \
        else default


def _odd_positions(index: int, keys: SlidingKeys, window: int | None) -> bool:
    """Gemma-2, gpt-oss: `"sliding_attention" if bool((i + 1) % 2)`, the even layers."""
    return bool((index + 1) % 2)


def _gemma3(index: int, keys: SlidingKeys, window: int | None) -> bool:
    """Gemma-3: `bool((i + 1) % sliding_window_pattern)`, pattern 6 by default (five sliding, one full)."""
    return bool((index + 1) % _pattern(keys, 6))


def _exaone(index: int, keys: SlidingKeys, window: int | None) -> bool:
    """EXAONE-4 / EXAONE-MoE: `(i + 1) % sliding_window_pattern != 0`, pattern 4 by default (PATTERN_ERRORS: a
    pattern it cannot compute with)."""
    pattern = keys.sliding_window_pattern if keys.sliding_window_pattern is not None else 4
    return isinstance(pattern, int) and (index + 1) % pattern != 0


def _cohere2(index: int, keys: SlidingKeys, window: int | None) -> bool:
    """Cohere2Config: `bool((i + 1) % sliding_window_pattern)`, pattern 4 by default (three sliding, one full)."""
    return bool((index + 1) % _pattern(keys, 4))


def _cohere2_moe(index: int, keys: SlidingKeys, window: int | None) -> bool:
    """Cohere2MoeConfig: the first_k_dense_replace dense-prefix layers by prefix_dense_sliding_window_pattern (1 by
    default: full attention), the others by sliding_window_pattern (4) counted from the first of them."""
    prefix = keys.dense_prefix or 0
    if index < prefix:
        return bool((index + 1) % (keys.dense_prefix_pattern or 1))
    return bool((index - prefix + 1) % _pattern(keys, 4))


def _from_max_window_layers(index: int, keys: SlidingKeys, window: int | None) -> bool:
    """Qwen2 / Qwen3 / Qwen2.5-VL: `sliding_window is not None and i >= max_window_layers`."""
    return window is not None and index >= _window_layers(keys)


def _qwen2_moe(index: int, keys: SlidingKeys, window: int | None) -> bool:
    """Qwen2-MoE: `bool((i + 1) % 2) and i < max_window_layers and use_sliding_window`."""
    return bool((index + 1) % 2) and index < _window_layers(keys) and bool(keys.use_sliding_window)


def _window_layers(keys: SlidingKeys) -> int:
    """max_window_layers, which HFWindow.window_layers fills where config.json has none."""
    assert keys.max_window_layers is not None
    return keys.max_window_layers


_QWEN_WINDOW = HFWindow(4096, gated=True, fills=_from_max_window_layers, window_layers=28)
_QWEN25_VL_WINDOW = HFWindow(4096, gated=True, fills=_from_max_window_layers, window_layers=80)
_GEMMA3_WINDOW = HFWindow(4096, fills=_gemma3)
# Gemma4TextConfig.__post_init__: sliding but every sixth layer, and the last layer full whatever config.json says.
_GEMMA4_WINDOW = HFWindow(512, fills=lambda index, keys, window: bool((index + 1) % 6), last_full=True)
# Exaone4Config / ExaoneMoeConfig: sliding_window 4096 by default, layer_types from sliding_window_pattern.
_EXAONE_WINDOW = HFWindow(4096, fills=_exaone, pattern_modulo=True)
# What that modulo raises while vLLM reads the config: a null window (pattern 0), EXAONE's letters ("LLLG", which its
# configs write only beside layer_types).
PATTERN_ERRORS = ("ZeroDivisionError: integer modulo by zero",
                  "TypeError: unsupported operand type(s) for %: 'int' and 'str'")
HF_WINDOWS: dict[str, HFWindow] = {
    "mistral": HFWindow(4096),                      # MistralConfig: sliding_window = 4096, layer_types kept as given
    "gemma2": HFWindow(4096, fills=_odd_positions),
    "gemma3_text": _GEMMA3_WINDOW,
    "gemma3": _GEMMA3_WINDOW,                       # a flat Gemma-3 config (no text_config)
    "gemma4_text": _GEMMA4_WINDOW,
    "gemma4": _GEMMA4_WINDOW,
    "gpt_oss": HFWindow(128, fills=_odd_positions),
    "qwen2": _QWEN_WINDOW,
    "qwen3": _QWEN_WINDOW,
    # MiniCPM-V's remote MiniCPMVConfig: a Qwen2Config (2.6) / Qwen3Config (4.5) subclass; 2.5 / 4.0's LlamaConfig one
    # reads no window key, which their configs do not write
    "minicpmv": _QWEN_WINDOW,
    "minicpmo": _QWEN_WINDOW,                       # MiniCPM-o's MiniCPMOConfig: Qwen2Config (2.6), Qwen3Config (4.5)
    "mimo": _QWEN_WINDOW,                           # MiMo-7B's remote-code MiMoConfig(Qwen2Config)
    "qwen2_5_vl_text": _QWEN25_VL_WINDOW,
    "qwen2_5_vl": _QWEN25_VL_WINDOW,                # a flat Qwen2.5-VL config
    "qwen2_vl_text": _QWEN25_VL_WINDOW,             # Qwen2VLTextConfig: Qwen2.5-VL's defaults
    "qwen2_vl": _QWEN25_VL_WINDOW,                  # a flat Qwen2-VL config
    # Qwen2_5OmniTextConfig (Qwen2.5-Omni's thinker): 32768, from max_window_layers (28) where use_sliding_window
    "qwen2_5_omni_text": HFWindow(32768, gated=True, fills=_from_max_window_layers, window_layers=28),
    "qwen2_moe": HFWindow(4096, gated=True, fills=_qwen2_moe, window_layers=28),
    "qwen3_moe": HFWindow(4096, gated=True),
    "qwen3_vl_moe_text": HFWindow(forced_none=True),
    "qwen3_vl_moe": HFWindow(forced_none=True),
    "exaone4": _EXAONE_WINDOW,
    "exaone4_5_text": _EXAONE_WINDOW,               # Exaone4_5_Config reads its text_config as exaone4
    "exaone_moe": _EXAONE_WINDOW,
    # vLLM's FlintConfig (its own class): use_sliding_window true by default, every layer full without layer_types
    "flint": HFWindow(513, gated=True, gated_default=True),
    "beam": HFWindow(4096, fills=lambda index, keys, window: True),  # vLLM's BeamConfig (its own class)
    "cohere2": HFWindow(4096, fills=_cohere2),       # Cohere2Config: sliding_window = 4096, pattern 4
    "cohere2_moe": HFWindow(4096, fills=_cohere2_moe),  # Cohere2MoeConfig: sliding_window = 4096
    "afmoe": HFWindow(1024, fills=_cohere2),         # AfmoeConfig: 1024, every global_attn_every_n_layers-th (4) full
    # Lfm3Config: 256; layer 2 of every 4 full attention, layers 4, 8, ... sliding, the rest convolutions
    "lfm3": HFWindow(256, fills=lambda index, keys, window: index % 4 == 0 and index > 0),
    # PLaMo-3's remote Plamo3Config (configuration_plamo3.py): window_size (WINDOW_KEYS), 128 by default; its
    # interleaved_sliding_window / layer_types properties make every sliding_window_pattern-th (8) layer full.
    "plamo3": HFWindow(128, fills=lambda index, keys, window: bool((index + 1) % _pattern(keys, 8))),
}
# qwen2.py Qwen2Model.__init__ (0.28.0 / 0.33.0), verbatim.
MIXED_WINDOWS = ("Sliding window for some but all layers is not supported. This model uses sliding window but "
                 "`max_window_layers` = {} is less than `num_hidden_layers` = {}. Please open an issue to discuss "
                 "this feature.")


class AttentionWindows(NamedTuple):
    windows: tuple[int | None, ...]     # per decoder layer: its sliding window, or None (full attention)
    error: str | None = None            # vLLM's error building the model


def hf_text_config(keys: SlidingKeys, layers: int) -> SlidingKeys:
    """The keys as the transformers config class leaves them on hf_text_config (defaults filled, layer_types
    computed, a window of 0 read as none as config/model.py reads it)."""
    rule = HF_WINDOWS.get(keys.model_type, HFWindow())
    window = keys.sliding_window if keys.sliding_window_given else rule.default
    use_sliding_window = keys.use_sliding_window if keys.use_sliding_window is not None else rule.gated_default
    if rule.forced_none or (rule.gated and not use_sliding_window):
        window = None
    if keys.max_window_layers is None:
        keys = keys._replace(max_window_layers=rule.window_layers)
    layer_types = keys.layer_types
    if layer_types is None and rule.fills is not None:
        layer_types = tuple(SLIDING if rule.fills(i, keys, window) else "full_attention" for i in range(layers))
    if rule.last_full and layer_types:
        layer_types = (*layer_types[:layers - 1], "full_attention", *layer_types[layers:])
    return keys._replace(sliding_window=window or None, layer_types=layer_types)


def attention_windows(config: ModelConfig, arch: Arch | None) -> AttentionWindows:
    """Each decoder layer's sliding window, as vLLM's model file and Attention decide it (see HF_WINDOWS).
    Unlisted architectures follow llama.py (an inference: most Llama-like model files reuse its attention)."""
    layers = config.num_hidden_layers or 0
    given = config.sliding
    if HF_WINDOWS.get(given.model_type, HFWindow()).pattern_modulo and given.layer_types is None and layers:
        if given.sliding_window_given and given.sliding_window is None:
            return AttentionWindows((None,) * layers, PATTERN_ERRORS[0])
        if isinstance(given.sliding_window_pattern, str):
            return AttentionWindows((None,) * layers, PATTERN_ERRORS[1])
    keys = hf_text_config(given, layers)
    window, layer_types = keys.sliding_window, keys.layer_types
    mixed = len(set(layer_types or ())) > 1
    if arch is not None and arch.uniform_window_assert and mixed and keys.max_window_layers != layers:
        return AttentionWindows((None,) * layers, MIXED_WINDOWS.format(keys.max_window_layers, layers))
    if arch is not None and arch.sliding == LEFT_WINDOWS:
        left = config.sliding.left_windows or ()
        return AttentionWindows(tuple(left[i] + 1 if i < len(left) and left[i] > 0 else None for i in range(layers)))
    if arch is not None and arch.sliding == HYBRID_PATTERN:
        pattern, size = config.sliding.hybrid_layer_pattern or (), config.sliding.sliding_window_size
        return AttentionWindows(tuple(size if i < len(pattern) and pattern[i] == 1 else None for i in range(layers)))
    if window is None:
        return AttentionWindows((None,) * layers)
    sliding = arch.sliding if arch is not None else LAYER_TYPES
    arch_offset = arch.window_offset if arch is not None else 0
    model_window = window if layer_types is None or all(t == SLIDING for t in layer_types) else None
    windows = []
    for i in range(layers):
        if sliding == EVEN_LAYERS:
            per_layer = window if i % 2 == 0 else None
        elif sliding == LAYER_TYPES and layer_types is not None:
            per_layer = window + arch_offset if layer_types[i] == SLIDING else None
        elif sliding in (ZAYA_LAYER_TYPES, CHUNKED_LAYER_TYPES) and layer_types is not None:
            per_layer = window if layer_types[i] == sliding else None
        else:
            per_layer = None
        windows.append(per_layer if per_layer is not None else model_window)
    return AttentionWindows(tuple(windows))
