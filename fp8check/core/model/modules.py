"""Group checkpoint tensors into the modules vLLM builds: fused QKV / gate-up, parallel styles, FusedMoE.

vLLM does not see `q_proj`, `k_proj`, `v_proj`; it sees one QKVParallelLinear `qkv_proj` whose shards are
loaded from them (packed_modules_mapping). Routing and TP checks are about those fused modules. What each
architecture builds (fused layers, styles, unquantized routers and towers, skipped MTP layers) comes from the
per-architecture table in fp8check.core.model.layouts; the leaf-name rules here fill in what it leaves unsaid.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from fp8check.core.checkpoint.local import ModelConfig
from fp8check.core.checkpoint.safetensors_header import TensorInfo
from fp8check.core.formats.fp8 import FP8_CONFIG_METHODS, block_fp8_config, block_fp8_skips
from fp8check.core.formats.shared import ROUTED_EXPERTS
from fp8check.core.model.layouts import (
    ANY_SIZE_TOWER_METHODS, COLUMN, FUSED_QKV_A, GENERIC, GENERIC_ARCH, LLAMA_PACKED, QKV_CLASSES, REPLICATED, ROW,
    TORCH_LINEAR, Arch, Tower, map_vllm_name, model_arch, offset_prefixes, sparse_mla_layer, tail_match, tower_for,
    transformers_backend,
    unserved_reason, vllm_module_name,
)
from fp8check.core.vocabulary import layer_template

# Leaf names the generic rules build as RowParallelLinear (input split across ranks, all-reduce after).
ROW_PARALLEL = frozenset({"o_proj", "down_proj", "out_proj", "dense_4h_to_h", "fc2", "wo", "w2", "c_proj", "proj"})
EMBEDDINGS = ("embed_tokens", "wte", "word_embeddings", "tok_embeddings", "embed_in", "embeddings", "embed",
              "pos_embed",                # Qwen3-VL / Qwen3.5 vision towers: a learned position table
              "embed_tokens_per_layer",   # Gemma-4's per-layer embeddings (VocabParallelEmbedding)
              "ngram_embedding",          # Qwen4-Exp's PLE n-gram tables (ple_embedding.ngram_embedding.shard_N)
              "ngram_embeddings",         # LongCat-Flash-Lite's NgramEmbedding: embedders' tables, post_projs
              "speech_embeddings",        # MiMo-V2-Omni's audio codebook tables (mimo_audio.py nn.Embedding)
              "embed_positions",          # OPT's learned position table (opt.py OPTLearnedPositionalEmbedding)
              "wpe",                      # GPT-2's / GPTBigCode's position table (gpt2.py nn.Embedding)
              "embedding",                # Gemma-3n's embed_vision / embed_audio tables (VocabParallelEmbedding)
              "rel_pos_emb")              # Granite Speech's conformer relative positions (granite_speech.py)
EMBEDDING_SET = frozenset(EMBEDDINGS)
# Tensors that belong to a linear module besides its weight.
SIDE_TENSORS = ("weight_scale", "weight_scale_inv", "input_scale", "weight_zero_point", "input_zero_point",
                "weight_global_scale", "input_global_scale", "output_scale", "weight_g_idx", "bias")
# DeepSeek MLA's low-rank input projections are ReplicatedLinear in vLLM (never split), but quantized.
REPLICATED_LEAVES = frozenset({"q_a_proj", "kv_a_proj_with_mqa"})
# deepseek_v2.py DeepseekV2ForCausalLM: packed_modules_mapping gains this entry when q_lora_rank is set.
MLA_FUSED = ("fused_qkv_a_proj", ("q_a_proj", "kv_a_proj_with_mqa"))
LLAMA_QKV = LLAMA_PACKED["qkv_proj"]
# Tensors some exporters store under '.experts.' that are no expert's: Laguna's experts.e_score_correction_bias (the
# router's), transformers' Muse-Spark experts.post_expert_norm.weight (the norm MuseSparkMoE applies to every expert's
# output: amd/model.py maps it to feed_forward.post_expert_norm).
NOT_EXPERT_TAILS = frozenset({"e_score_correction_bias", "post_expert_norm.weight"})
_EXPERT_TAIL = re.compile(r"(?:\d+\.)?[^.]+(?:\.[^.]+)?")  # what follows '<FusedMoE name>.' in an expert tensor's name


class Shard(NamedTuple):
    """One checkpoint linear (e.g. ...q_proj) and its side tensors keyed by suffix (weight_scale, ...)."""

    name: str
    weight: TensorInfo
    side: dict[str, TensorInfo]


class LinearModule(NamedTuple):
    """A linear layer as vLLM builds it. `output_sizes` are the logical fused widths (q, k, v or gate, up)."""

    name: str
    layer_type: str           # vLLM class: QKVParallelLinear, MergedColumnParallelLinear, ...
    shards: tuple[Shard, ...]
    input_size: int
    output_sizes: tuple[int, ...]
    heads: tuple[int, int, int] | None = None  # (num_heads, num_kv_heads, head_dim) for QKV
    layout: str = "generic"   # where the layout came from: "vllm:<model file>" or "generic"
    fused: bool = False       # the name is a packed_modules_mapping key: ignore/targets also ask its shards
    unquantized: str | None = None  # why vLLM builds it without a quant method (router, tower), if it does
    tp_split: bool = True     # False: built with disable_tp (DeepSeek's fused_qkv_a_proj), or a torch nn.Linear
    # A head count: built with disable_tp at a TP size that does not divide it (Tower.disable_tp_unless_heads_divide,
    # Tower.vision_heads_split)
    split_heads: int | None = None
    dequantized: tuple[str, ...] = ()  # shards vLLM's loader dequantizes to BF16 when stored in FP8
    whole_parts: tuple[int, ...] = ()  # fused parts every TP rank holds whole (Arch.replicated_shards)
    # (its name, its shards' names) in vLLM's model where the model's hf_to_vllm_mapper renames them (Arch.hf_to_vllm):
    # what get_quant_method matches the quant config's lists against (formats.registry.assign); None: the
    # checkpoint's names.
    vllm_names: tuple[str, tuple[str, ...]] | None = None
    # True: above TP 1 vLLM builds it as a plain ColumnParallelLinear over its parts, whole_parts replicated
    # (mamba_mixer2.py MambaMixer2 where TP does not divide n_groups, i.e. one group: in_proj over
    # [I, I, N x TP, N x TP, H], each rank one output partition of that / TP).
    column_when_split: bool = False
    # MiMo-V2-Pro's fused qkv_proj (Arch.fused_qkv_chunks): the chunks of [Q K V] it is stored pre-sharded in
    # (config.num_key_value_heads; at_tp, integrity's per-chunk scale rows); 0 for every other module.
    qkv_chunks: int = 0
    # (config.num_key_value_heads, the parts holding those heads) of a column layer that splits them as KV heads, one a
    # rank replicated above that TP (Arch.kv_head_parts); (0, ()) for every other module.
    kv_parts: tuple[int, tuple[int, ...]] = (0, ())
    # True: its weights are stored [in, out] and the model's loader transposes the weight alone (Arch.transposed); the
    # shards' weight shapes here are vLLM's [out, in].
    transposed: bool = False
    # The dtype its quant method takes as its out dtype where not the model's (Tower.build_dtype); None: the model's.
    out_dtype: str | None = None
    # True: a torch nn.Linear at TP 1, the class and quant method laid out here above it (Tower.torch_linear_at_tp1).
    torch_linear_at_tp1: bool = False

    @property
    def leaf(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    def tp_size(self, tp: int) -> int:
        """The TP size vLLM splits the module over at `tp`: 1 where it is built with disable_tp."""
        return tp if self.tp_split and not (self.split_heads and self.split_heads % tp) else 1


class MoEModule(NamedTuple):
    """All expert tensors of one decoder layer: vLLM loads them into a single FusedMoE."""

    name: str
    num_experts: int
    tensors: tuple[TensorInfo, ...]
    tails: tuple[str, ...]    # each tensor's name after '<name>.' ('113.down_proj.weight'), cut once here
    layout: str = "generic"
    gated: bool = True        # False: up and down projections only (is_act_and_mul=False)
    vllm_name: str | None = None  # its name in vLLM's model where the hf_to_vllm_mapper renames it (Arch.hf_to_vllm)
    layer_class: str = ROUTED_EXPERTS  # the experts' class (Arch.experts_class)


class SkippedLayer(NamedTuple):
    """Checkpoint tensors the main model's loader drops (an MTP / next-n layer): reported, never checked."""

    prefix: str               # "model.layers.61."
    tensors: tuple[TensorInfo, ...]
    reason: str


class ModelLayout(NamedTuple):
    linears: tuple[LinearModule, ...]
    moes: tuple[MoEModule, ...]
    orphans: tuple[TensorInfo, ...]     # side tensors (scales) with no weight to belong to
    non_expert_names: tuple[str, ...]   # every tensor name outside `moes`, in checkpoint order
    notes: tuple[str, ...] = ()
    skipped: tuple[SkippedLayer, ...] = ()


def build_layout(tensors: dict[str, TensorInfo], config: ModelConfig, profile=None, kind: str = "") -> ModelLayout:
    """The modules vLLM builds for this checkpoint, as `profile`'s release (a RuleProfile; None: the newest)
    builds them on the platform `kind` (model_arch; "": the model class of CUDA)."""
    notes = []
    arch = model_arch(config, profile, kind)
    if arch is not None and kind in arch.indexer_unfused_on:
        arch = arch._replace(indexer_shards=())
    if arch is None or arch.source == GENERIC:  # GENERIC: a release whose model file the table does not lay out
        arch = GENERIC_ARCH
        unserved = unserved_reason(config.architectures, profile, config.expert_counts) if profile is not None else None
        if config.architectures:
            why = unserved or f"architecture {'/'.join(config.architectures)} is not in fp8check's table"
            notes.append(f"{why}; parallel styles are inferred from layer names (q/k/v -> QKV, gate/up -> merged, "
                         "o/down/out -> row); each layer's layout reads 'generic'")
    elif profile is not None and (backend := transformers_backend(config.architectures, profile,
                                                                  config.expert_counts)) is not None:
        notes.append(f"vLLM {profile.name} registers no {'/'.join(config.architectures)}: its Transformers backend "
                     f"builds {config.architectures[0]} of transformers {backend.version} (the newest vLLM "
                     f"{profile.name} allows) as {backend.built}, laid out from its base_model_tp_plan")
    skip_prefixes = (_spec_layer_prefixes(arch, config) + _kv_shared_drops(arch, config) + _dense_indexers(arch, config)
                     + _unbuilt_tower_layers(arch, config))
    if arch.stacked_experts:
        tensors = _unstack_experts(tensors, arch.stacked_experts,
                                   {leaf: (leaf,) for leaf in ("gate_proj", "up_proj", "down_proj")})
    if arch.fused_stacked_experts:
        block, gate_up, down = arch.fused_stacked_experts
        tensors = _unstack_experts(tensors, block, {gate_up: ("gate_proj", "up_proj"), down: ("down_proj",)})
    if arch.flat_experts:
        tensors = _unflatten_experts(tensors, *arch.flat_experts)
    stored_names: dict[str, str] = {}  # a tower tensor's vLLM name -> its checkpoint name (Tower.renames)
    if any(tower.renames for tower in arch.towers):
        tensors, stored_names = _tower_names(tensors, arch)
    if arch.transposed_routers:
        tensors, renamed = _transposed_routers(tensors, arch.transposed_routers)
        stored_names.update(renamed)
    skipped: dict[str, list[TensorInfo]] = {}
    # The part of a name before its last '.experts.' -> that FusedMoE's (tensors, their tails), or () when names
    # under it are not experts' (skipped as MTP, or not what _expert_id's regex matches); decided once per part.
    groups: dict[str, tuple[list[TensorInfo], list[str]] | tuple[()]] = {}
    expert_ids: dict[str, str] = {}  # what follows '.experts.' -> its expert id, "" when not an expert's
    weights: dict[str, Shard] = {}
    other_weights: set[str] = set()  # prefixes of weights that are no linear's (norms, convolutions, embeddings)
    side: list[tuple[str, TensorInfo]] = []
    others: list[str] = []
    for name, info in tensors.items():
        head, experts_dot, tail = name.rpartition(".experts.")
        if experts_dot:
            group = groups.get(head)
            if group is None:
                group = groups[head] = _expert_group(head, skip_prefixes, arch.spec_substrings)
            if group:
                expert = expert_ids.get(tail)
                if expert is None:
                    expert = expert_ids[tail] = _expert_id(tail) or ""
                if expert:
                    group[0].append(info)
                    group[1].append(tail)
                    continue
        others.append(stored_names.get(name, name))
        dropped = next((d for d in arch.spec_substrings + arch.unloadable if d in name), None) or next(
            (d for tower in arch.towers for d in tower.dropped if d in name), None)
        if skip_prefixes and name.startswith(skip_prefixes):
            spec = next(p for p in skip_prefixes if name.startswith(p))
            skipped.setdefault(spec, []).append(info)
        elif dropped:
            skipped.setdefault(dropped, []).append(info)
        elif len(info.shape) == 2 and tail_match(name, arch.bare_linears):
            weights[name] = Shard(name=name, weight=info, side={})
        elif name.endswith(".weight") and (len(info.shape) == 2 and (not is_embedding(name)
                                                                      or _tower_styled_linear(arch, name))
                                           and not tail_match(name[: -len(".weight")],
                                                              arch.matrix_norms + arch.parameter_weights)
                                           or len(info.shape) == 3
                                           and tail_match(name[: -len(".weight")], arch.conv_linears)):
            base = name[: -len(".weight")]
            if len(info.shape) == 2 and tail_match(base, arch.transposed):  # laid out as vLLM's [out, in]
                info = info._replace(shape=(info.shape[1], info.shape[0]))
            weights[base] = Shard(name=base, weight=info, side={})
        elif name.endswith(".weight"):
            other_weights.add(name[: -len(".weight")])
        elif name.rsplit(".", 1)[-1] in SIDE_TENSORS:
            side.append((name, info))
    experts = {f"{head}.experts": group for head, group in groups.items() if group and group[0]}
    if arch.split_experts:
        experts = _split_experts(experts, expert_ids, arch.split_experts)
    orphans = []
    for name, info in side:
        prefix, _, suffix = name.rpartition(".")  # a bare "weight_scale" belongs to no weight: an orphan
        shard = weights.get(prefix)
        if shard is None:
            if not (suffix == "bias" and prefix in other_weights):  # a norm's or a convolution's bias is its own
                orphans.append(info)
        else:
            shard.side[suffix] = info
    renames = arch.hf_to_vllm + arch.quant_prefixes + offset_prefixes(arch, config)
    linears = tuple(_with_vllm_names(m, renames) for m in _fuse(weights, config, arch))
    moes = tuple(  # experts counted over distinct tails: ~1,500 per FusedMoE, not one set.add per tensor
        MoEModule(name=name, num_experts=len(set(map(expert_ids.__getitem__, set(tails)))), tensors=tuple(infos),
                  tails=tuple(tails), layout=arch.source, gated=arch.gated_experts,
                  vllm_name=_renamed(name, arch.hf_to_vllm), layer_class=arch.experts_class)
        for name, (infos, tails) in sorted(experts.items(), key=lambda item: _natural_key(item[0]))
    )
    return ModelLayout(linears=linears, moes=moes, orphans=tuple(orphans), non_expert_names=tuple(others),
                       notes=tuple(notes), skipped=tuple(SkippedLayer(p, tuple(infos), _skip_reason(arch, config, p))
                                                         for p, infos in skipped.items()))


def _tower_styled_linear(arch: Arch, name: str) -> bool:
    """A tower weight its styles name a linear, though named like an embedding (radio.py 0.34's patch embedder
    embeddings.patch_projection, a ViTPatchLinear; lfm2_siglip2.py's embeddings.patch_embedding and siglip2navit.py's
    naflex one, ReplicatedLinears)."""
    tower = tower_for(arch, name)
    return tower is not None and tail_match(name[: -len(".weight")], tower.styles) is not None


def _renamed(name: str, renames: tuple[tuple[str, str, str], ...]) -> str | None:
    """vLLM's name for a module the checkpoint names `name`, where the model's mapper renames it; else None."""
    vllm_name = vllm_module_name(name, renames)
    return vllm_name if vllm_name != name else None


def _with_vllm_names(module: LinearModule, renames: tuple[tuple[str, str, str], ...]) -> LinearModule:
    if not renames:
        return module
    names = (vllm_module_name(module.name, renames), tuple(vllm_module_name(s.name, renames) for s in module.shards))
    unchanged = names == (module.name, tuple(s.name for s in module.shards))
    return module if unchanged else module._replace(vllm_names=names)


def _skip_reason(arch: Arch, config: ModelConfig, prefix: str) -> str:
    if prefix in _kv_shared_drops(arch, config):
        return (f"a KV-shared layer's {prefix.rstrip('.').rsplit('.', 1)[-1]} (num_kv_shared_layers = "
                f"{config.num_kv_shared_layers}): the layer reuses an earlier layer's KV cache and {arch.source[5:]} "
                "drops it")
    if prefix in _unbuilt_tower_layers(arch, config):
        tower = tower_for(arch, prefix)
        feature_layers = [tower.feature_layer] if tower is not None and tower.feature_layer is not None else list(
            config.vision_feature_layers)
        return (f"a vision layer past the deepest vision_feature_layer ({feature_layers} of "
                f"{config.vision_layers}): the model builds the tower up to it and the tower's loader drops the layers "
                "beyond, so vLLM never loads it")
    if prefix in _dense_indexers(arch, config):
        return (f"the indexer of a dense MLA layer (its layer_types entry is no sparse one): {arch.source[5:]} builds "
                "no indexer there and its loader skips these tensors")
    tower = next((tower for tower in arch.towers if prefix in tower.dropped), None)
    if tower is not None:
        return (f"{tower.source[5:]} builds the tower without it and drops every name holding '{prefix}': vLLM never "
                "loads it")
    if prefix in arch.unloadable:
        return (f"{arch.source[5:]} builds no module for names holding '{prefix}' and its load_weights looks them up "
                "in params_dict unguarded: the load fails (KeyError)")
    if prefix in arch.spec_substrings:
        return (f"{arch.source[5:]}'s hf_to_vllm_mapper drops every name holding '{prefix}' (an MTP block, a tower "
                "or a speech generator this model class does not build): vLLM's main model never loads it")
    if prefix == arch.spec_prefix and "mtp" not in prefix:
        return (f"{arch.source[5:]}'s hf_to_vllm_mapper drops '{prefix}...' (a part this model class does not build): "
                "vLLM's main model never loads it")
    if prefix == arch.spec_prefix:
        return (f"MTP block: {arch.source[5:]}'s hf_to_vllm_mapper drops '{prefix}...', so vLLM's main model never "
                "loads it; it loads only as the speculative-decoding draft model")
    count = getattr(config, arch.spec_layers) if arch.spec_layers else None
    reason = (f"MTP layer ({arch.spec_layers} = {count}): vLLM's main model skips it "
              "(get_spec_layer_idx_from_weight_name); it loads only as the speculative-decoding draft model")
    return reason + ("; inferred: the architecture is not in fp8check's table" if arch is GENERIC_ARCH else "")


def _dense_indexers(arch: Arch, config: ModelConfig) -> tuple[str, ...]:
    """The indexers of the layers Arch.sparse_layer_types leaves dense: hy_v4's HYV4MLAAttention builds no indexer
    there and its loader skips their tensors (_should_skip_missing_param: a name holding '.indexer.')."""
    if not arch.sparse_layer_types:
        return ()
    return tuple(f"model.layers.{i}.self_attn.indexer." for i in range(config.num_hidden_layers or 0)
                 if not sparse_mla_layer(arch, config, i))


def _unbuilt_tower_layers(arch: Arch, config: ModelConfig) -> tuple[str, ...]:
    """The layers of a tower with Tower.layers_path past the deepest vision_feature_layer: llava.py / mistral3.py
    _get_num_hidden_layers builds max(get_layer_index(i, vision layers)) of them (utils.py get_layer_index: a
    negative index counts from the end, num_hidden_layers + i + 1) and clip.py / siglip.py / pixtral.py's load_weights
    drop the names of the layers beyond; a tower built up to a fixed layer (Tower.feature_layer) alike."""
    total = config.vision_layers
    if total is None:
        return ()
    unbuilt = []
    for tower in arch.towers:
        feature_layers = (tower.feature_layer,) if tower.feature_layer is not None else config.vision_feature_layers
        if not tower.layers_path or not feature_layers:
            continue
        built = max(i if i >= 0 else total + i + 1 for i in feature_layers)
        unbuilt += [f"{root}{tower.layers_path}.{i}." for root in tower.roots for i in range(built, total)]
    return tuple(unbuilt)


def _kv_shared_drops(arch: Arch, config: ModelConfig) -> tuple[str, ...]:
    """The k / v projections and k_norm of the layers that share an earlier layer's KV cache (Arch.kv_shared_layers):
    gemma4.py's weights mapper maps them to None, whether or not the checkpoint ships them."""
    layers = config.num_hidden_layers or 0
    if not (arch.kv_shared_layers and config.num_kv_shared_layers and layers):
        return ()
    return tuple(f"{root}layers.{i}.self_attn.{leaf}." for i in range(layers - config.num_kv_shared_layers, layers)
                 for root in ("model.", "model.language_model.") for leaf in ("k_proj", "v_proj", "k_norm"))


def _spec_layer_prefixes(arch: Arch, config: ModelConfig) -> tuple[str, ...]:
    """utils.py get_spec_layer_idx_from_weight_name: layers num_hidden_layers .. + n - 1, in the three
    namings it accepts (MiniMax-M2 maps 'layers.{i}.' below 'model.' to None: the same tensors), under
    'language_model.' (Kimi-K3's checkpoint names; the name test is a substring test, whatever the prefix), and under
    'language_model.model.', whose 'language_model.' the wrapping model's AutoWeightsLoader strips before its text
    model's loader asks (kimi_k25.py: DeepseekV2ForCausalLM under language_model)."""
    count = getattr(config, arch.spec_layers) if arch.spec_layers else 0
    base = config.num_hidden_layers
    prefixes = (arch.spec_prefix,) if arch.spec_prefix else ()
    if not count or base is None:
        return prefixes
    return prefixes + tuple(f"{root}layers.{base + i}." for i in range(count)
                            for root in ("model.", "", "model.language_model.", "language_model.model.",
                                         "language_model."))  # Kimi-K3's, before its hf_to_vllm_mapper


def _packed(arch: Arch, tower: Tower | None, config: ModelConfig) -> dict[str, tuple[str, ...]]:
    if tower is not None:
        return tower.packed
    if arch.mla and arch.mla_fused_qkv_a and config.q_lora_rank:
        # an entry of the layout's own under that name wins (Kimi-K3's ROCm fused_qkv_a_proj holds the gate too)
        return {**arch.packed, MLA_FUSED[0]: arch.packed.get(MLA_FUSED[0], MLA_FUSED[1])}
    return arch.packed


def _fuse(weights: dict[str, Shard], config: ModelConfig, arch: Arch) -> tuple[LinearModule, ...]:
    modules: list[LinearModule] = []
    # Indexer projections beside a whole q / k / v (Arch.indexer_shards) are shards of that layer's qkv_proj.
    used: set[str] = {prefix for prefix in weights if tower_for(arch, prefix) is None
                      and (parent := _indexer_parent(prefix, arch)) is not None
                      and _folds_indexer(parent, weights, arch)}
    for prefix in sorted(weights, key=_natural_key):
        if prefix in used:
            continue
        parent, _, leaf = prefix.rpartition(".")
        tower = tower_for(arch, prefix)
        packed = _packed(arch, tower, config)
        # A shard may belong to several packed entries (DeepSeek-V4's wkv: fused_wqa_wkv beside wq_a,
        # fused_wkv_wgate beside wgate): the first whose shards the same parent holds.
        fused = next(((f, names) for f, parts in packed.items() if leaf in parts
                      for names in [_shard_names(parent, parts, weights, arch, tower, f)]
                      if all(n in weights for n in names)
                      and not _fusion_refused(f, parent, weights, arch, tower, config)),
                     None)
        if fused:
            fused_leaf, names = fused
            used.update(names)
            shards = tuple(weights[n] for n in names)
            name = f"{parent}.{fused_leaf}" if parent else fused_leaf
            # fused: a packed_modules_mapping key (not LongCat-Flash's fused_qkv_a_proj, Arch.mla_packed)
            mapped = tower is not None or arch.mla_packed or fused_leaf != MLA_FUSED[0]
            modules.append(_module(name, shards, config, arch, tower, fused=mapped))
            continue
        used.add(prefix)
        # A layer stored fused on disk (Phi-3's qkv_proj) is still a packed_modules_mapping key.
        modules.append(_module(prefix, (weights[prefix],), config, arch, tower, fused=leaf in packed))
    return tuple(modules)


def _fusion_refused(fused: str, parent: str, weights: dict[str, Shard], arch: Arch, tower: Tower | None,
                    config: ModelConfig) -> bool:
    """The layer holds the sibling that keeps `fused` apart there (Arch.packed_unless), is not the module `fused` is
    limited to (Arch.packed_parents), or a block-FP8 Fp8Config skips the shard that keeps it apart
    (Arch.block_fp8_unfused)."""
    if tower is not None:
        return False
    sibling, shard = arch.packed_unless.get(fused), arch.block_fp8_unfused.get(fused)
    home = arch.packed_parents.get(fused)
    return (home is not None and parent.rpartition(".")[2] != home
            or sibling is not None and f"{parent}.{sibling}" in weights
            or shard is not None and bool(_block_fp8_skipped(config, arch, f"{parent}.{shard}")))


def _block_fp8_skipped(config: ModelConfig, arch: Arch, name: str) -> bool | None:
    """None where the checkpoint's quantization_config is no block-FP8 Fp8Config; else whether its ignore list,
    mapped by the model's hf_to_vllm_mapper, skips vLLM's module of the checkpoint's `name` in suffix mode
    (bailing_moe_v3.py _is_fp8_module_excluded)."""
    quant = block_fp8_config(config.quantization_config)
    if quant is None:
        return None
    mapped = quant._replace(ignored_layers=tuple(map_vllm_name(p, arch.hf_to_vllm) for p in quant.ignored_layers))
    return block_fp8_skips(mapped, vllm_module_name(name, arch.hf_to_vllm))


def _block_fp8_replicated(name: str, rows: int, config: ModelConfig, arch: Arch) -> bool:
    """Arch.block_fp8_replicated: a head-wise gate (a row per attention head) within one block row of a block-FP8
    Fp8Config that does not skip it (a rank's heads then never fill a block row either)."""
    if not tail_match(name, arch.block_fp8_replicated):
        return False
    quant = block_fp8_config(config.quantization_config)
    block = quant.weight_block_size if quant else None
    return (block is not None and rows == config.num_attention_heads and rows <= block[0]
            and not _block_fp8_skipped(config, arch, name))


def _shard_names(parent: str, parts: tuple[str, ...], weights: dict[str, Shard], arch: Arch,
                 tower: Tower | None, fused_leaf: str) -> list[str]:
    """The checkpoint names of a packed entry's shards under `parent`."""
    names = [f"{parent}.{p}" if parent else p for p in parts]
    optional = tail_match(f"{parent}.{fused_leaf}", arch.last_shard_optional) is not None
    if tower is None and optional and names[-1] not in weights:
        names = names[:-1]
    if arch.k_eq_v and tower is None and parts == LLAMA_QKV and names[2] not in weights:
        names = names[:2]  # V read from K: the QKV's shards are q, k, k
    if tower is None and parts == LLAMA_QKV and _folds_indexer(parent, weights, arch):
        # MiniMax-M3's sparse layers, Qwen4-Exp's QSA: the indexer's projections load into the same qkv_proj
        names += [n for n in (f"{parent}.{p}" if parent else p for p in arch.indexer_shards) if n in weights]
    return names


def _indexer_parent(prefix: str, arch: Arch) -> str | None:
    """The attention module an indexer shard (Arch.indexer_shards, a dotted tail) belongs to, or None."""
    shard = tail_match(prefix, arch.indexer_shards)
    return prefix[: -len(shard) - 1] if shard and prefix != shard else None


def _folds_indexer(parent: str, weights: dict[str, Shard], arch: Arch) -> bool:
    """Whether the indexer shards under `parent` load into its qkv_proj: q / k / v all there, and (Arch.indexer_alike,
    Qwen4-Exp from 0.34) every indexer shard stored as q is (both FP8 or both not: the same quant method)."""
    qkv = [weights.get(f"{parent}.{p}" if parent else p) for p in LLAMA_QKV]
    q = qkv[0]
    if not arch.indexer_shards or q is None or None in qkv:
        return False
    indexer = [weights[n] for n in (f"{parent}.{p}" if parent else p for p in arch.indexer_shards) if n in weights]
    return arch.indexer_alike is None or all(_stored_fp8(s) == _stored_fp8(q) for s in indexer)


def _stored_fp8(shard: Shard) -> bool:
    return shard.weight.dtype.startswith("F8")


def _module(name: str, shards: tuple[Shard, ...], config: ModelConfig, arch: Arch, tower: Tower | None,
            fused: bool) -> LinearModule:
    rules = tower or arch
    leaf = name.rsplit(".", 1)[-1]
    k = shards[0].weight.shape[-1]  # a conv1d's [channels, 1, kernel]: the kernel is its input size
    widths = tuple(s.weight.shape[0] for s in shards)
    unquantized_router = tail_match(name, rules.unquantized) is not None
    router = unquantized_router or (tower is None and tail_match(name, arch.quantized_routers) is not None)
    unquantized = None
    method = config.quantization_config.method if config.quantization_config is not None else None
    if tower is not None and (not tower.quantized or method in tower.unquantized_methods):
        unquantized = ("vLLM builds this tower with quant_config=None"
                       + (f" for a {method} checkpoint" if tower.quantized else "") + f" ({tower.source[5:]})")
    elif tower is not None and _tower_ignored_whole(tower, config, arch):
        unquantized = (f"vLLM builds {tower.fp8_ignored_whole} with quant_config=None: the Fp8Config's ignored_layers "
                       "lists it whole")
    elif tower is not None and tower.quant_needs_64:
        unquantized = _tower_sizes_refused(tower, config)
    elif unquantized_router:
        unquantized = "vLLM builds the MoE router with quant_config=None"
    elif tower is None and tail_match(name, arch.unquantized_layers):
        unquantized = f"vLLM builds it with quant_config=None ({arch.source[5:]})"
    dequantized = tuple(s.name for s in shards if tower is None and tail_match(s.name, arch.dequantized))
    if dequantized:
        unquantized = (f"vLLM builds it with quant_config=None ({arch.source[5:]}); an FP8 "
                       f"{dequantized[0].rsplit('.', 1)[-1]} is dequantized to BF16 at load")
    style = tail_match(name, rules.styles)
    if style:
        layer_type = rules.styles[style]
    elif rules.unplanned and not fused and leaf != "lm_head":
        layer_type = rules.unplanned
    else:
        layer_type = _generic_style(leaf, fused, router)
    mamba = config.mamba if tower is None and arch.mamba_in_proj and tail_match(name, (arch.mamba_in_proj,)) else None
    one_group = False
    if mamba:
        mamba_heads, mamba_head_dim, groups, state = mamba
        sizes = (mamba_heads * mamba_head_dim, mamba_heads * mamba_head_dim, groups * state, groups * state,
                 mamba_heads)
        if sum(sizes) == widths[0]:
            layer_type, widths = "MergedColumnParallelLinear", sizes
            one_group = groups == 1
    if tower is None and leaf == "in_proj_qkvz" and len(shards) == 2 and config.gated_delta_net:
        key_dim, value_dim = config.gated_delta_net  # Qwen3.5: output sizes [Kd, Kd, Vd, Vd] (create_qkvz_proj)
        if widths[0] == 2 * key_dim + value_dim:
            widths = (key_dim, key_dim, value_dim, widths[1])
    if layer_type == TORCH_LINEAR:
        unquantized = f"vLLM builds it as a torch nn.Linear ({rules.source[5:]}), which has no quant method"
    elif tower is None and tail_match(name, arch.conv_linears):
        layer_type = COLUMN
        unquantized = (f"vLLM builds the causal convolution as a ColumnParallelLinear with quant_config=None "
                       f"({arch.source[5:]})")
    elif layer_type == "ParallelLMHead" and tower is None and not arch.head_quant_config:
        unquantized = f"vLLM builds the LM head with quant_config=None ({arch.source[5:]})"
    heads: tuple[int, int, int] | None = None
    qkv_chunks = 0
    if layer_type == "QKVParallelLinear" and len(shards) == 2 and tower is None and \
            tail_match(shards[1].name, arch.split_kv):  # K and V stored in one shard, half its rows each
        widths = (widths[0], widths[1] // 2, widths[1] // 2)
    elif layer_type == "QKVParallelLinear" and len(shards) == 2:  # k_eq_v: V loads from K
        widths = (*widths, widths[1])
    if layer_type == "QKVParallelLinear" and tower is None and arch.indexer_class and len(shards) > 3:
        layer_type = arch.indexer_class
    if layer_type in QKV_CLASSES:
        if tower is not None and (tower.vision_heads or tower.audio_heads):
            heads = (_tower_heads(config.audio_heads, None, widths) if tower.audio_heads
                     else _tower_heads(config.vision_heads, config.vision_kv_heads, widths))
        else:
            heads = _heads(_layer_config(config, name), widths[:3], gated=arch.q_gate, per_layer=arch.layer_geometry)
        geometry = _layer_geometry(config, name, widths) if tower is None and len(shards) == 1 else None
        if geometry:  # MiMo-V2-Pro's qkv_proj, stored fused: the layer's own heads and V head size
            num_heads, num_kv, head_dim, v_head_dim = geometry
            heads, widths = geometry[:3], (num_heads * head_dim, num_kv * head_dim, num_kv * v_head_dim)
            qkv_chunks = (config.num_key_value_heads or 0) if arch.fused_qkv_chunks else 0
        elif len(shards) == 1 and heads:  # stored already fused (Phi-3 qkv_proj, Qwen-VL visual attn.qkv)
            num_heads, num_kv, head_dim = heads
            widths = (num_heads * head_dim, num_kv * head_dim, num_kv * head_dim)
    elif tower is None and leaf == arch.merged_qkv_gate and len(shards) == 4:  # [q, k, v, gate]: Beam's attention
        heads = _heads(_layer_config(config, name), widths[:3])
    elif layer_type == "MergedColumnParallelLinear" and len(shards) == 1 and leaf in ("gate_up_proj", "input_linear") \
            and widths[0] % 2 == 0:  # gate and up stored fused (Phi-3; Granite's shared_mlp.input_linear,
        # granitemoeshared.py GraniteMoeSharedMLP output_sizes [S, S]); other single-shard merges keep one width
        widths = (widths[0] // 2, widths[0] // 2)
    parts = arch.equal_parts.get(tail_match(name, arch.equal_parts) or "", 0) if tower is None else 0
    if layer_type == "MergedColumnParallelLinear" and len(shards) == 1 and parts and widths[0] % parts == 0:
        widths = (widths[0] // parts,) * parts
    replicated = tower is None and (tail_match(name, arch.disable_tp) is not None
                                    or _block_fp8_replicated(name, widths[0], config, arch))
    whole = arch.replicated_shards.get(leaf, ()) if tower is None and fused else ()
    # The quant config's lists ask a fused layer's shards only where its packed_modules_mapping holds the layer's
    # (Arch.quant_packed), and never for a tower's Tower.unexpanded leaf.
    listed_by_shards = fused and (leaf not in tower.unexpanded if tower is not None else arch.quant_packed)
    return LinearModule(name, layer_type, shards, k, widths, heads, layout=(tower or arch).source,
                        fused=listed_by_shards,
                        unquantized=unquantized,
                        tp_split=layer_type not in (FUSED_QKV_A, TORCH_LINEAR) and not replicated,
                        split_heads=_split_heads(name, config, tower),
                        dequantized=dequantized,
                        whole_parts=(2, 3) if one_group else
                        tuple(i for i, s in enumerate(shards) if s.name.rsplit(".", 1)[-1] in whole),
                        column_when_split=one_group, qkv_chunks=qkv_chunks,
                        kv_parts=_kv_parts(shards, config, arch) if tower is None else (0, ()),
                        transposed=tower is None and tail_match(name, arch.transposed) is not None,
                        out_dtype=tower.build_dtype if tower is not None else None,
                        torch_linear_at_tp1=tower is not None
                        and tail_match(name, tower.torch_linear_at_tp1) is not None)


def _kv_parts(shards: tuple[Shard, ...], config: ModelConfig, arch: Arch) -> tuple[int, tuple[int, ...]]:
    """LinearModule.kv_parts: the shards named by Arch.kv_head_parts (a dotted part of their name)."""
    parts = tuple(i for i, s in enumerate(shards) if any(f".{p}." in f".{s.name}." for p in arch.kv_head_parts))
    return (config.num_key_value_heads or 0, parts) if parts and config.num_key_value_heads else (0, ())


def _split_heads(name: str, config: ModelConfig, tower: Tower | None) -> int | None:
    """The head count whose indivisibility by TP makes vLLM build the module with disable_tp, or None
    (Tower.disable_tp_unless_heads_divide: audio_config's heads; Tower.vision_heads_split: vision_config's)."""
    if tower is None:
        return None
    if tower.disable_tp_unless_heads_divide:
        return config.audio_heads
    return config.vision_heads if tail_match(name, tower.vision_heads_split) else None


def _layer_geometry(config: ModelConfig, name: str, widths: tuple[int, ...]) -> tuple[int, int, int, int] | None:
    """The layer's (heads, KV heads, head size, V head size) of ModelConfig.attention_geometry where its one fused
    width is their Q + K + V rows, else None."""
    index = layer_template(name)[1]
    if config.attention_geometry is None or index is None or index >= len(config.attention_geometry):
        return None
    heads, kv_heads, head_dim, v_head_dim = config.attention_geometry[index]
    return config.attention_geometry[index] if widths[0] == heads * head_dim + kv_heads * (head_dim + v_head_dim) \
        else None


def at_tp(module: LinearModule, tp: int, config: ModelConfig, profile, block: int = 128) -> LinearModule:
    """The module as TP `tp` builds it where that differs from its layout: a torch nn.Linear at TP 1
    (LinearModule.torch_linear_at_tp1); MiMo-V2-Pro's fused qkv_proj
    (LinearModule.qkv_chunks) under a config.json whose attention_projection_layout is "fused_qkv" and a quant
    config with a weight_block_size (mimo_v2.py MiMoV2FlashDecoderLayer's fused_qkv_chunks), a
    MergedColumnParallelLinear [Q | chunks x (K V pad)] where _fused_qkv_kv_chunk_rows is not 0: each rank owns
    several chunks (TP below their count and dividing it), the heads split evenly over them, whole-block Q rows per
    chunk, and a chunk's K or V rows not (its K and V rows, kept together, are zero-padded to whole 128-row blocks:
    `block` is the function's default, not the quant config's). From 0.33 (`profile`'s change mimo-v2-kv-chunks)."""
    if module.torch_linear_at_tp1 and tp == 1:
        return module._replace(layer_type=TORCH_LINEAR, tp_split=False, unquantized=(
            f"vLLM builds it as a torch nn.Linear at TP 1 ({module.layout[5:]}: swapped for a {module.layer_type} "
            "with the quant config above it), which has no quant method"))
    chunks = module.qkv_chunks
    if not chunks or module.heads is None or chunks <= tp or chunks % tp or not config.fused_qkv_layout or \
            not getattr(config.quantization_config, "weight_block_size", None) or not profile.has("mimo-v2-kv-chunks"):
        return module
    heads, kv_heads, head_dim = module.heads
    if heads % chunks or kv_heads % chunks:
        return module
    q_rows, k_rows = heads // chunks * head_dim, module.output_sizes[1] // chunks
    v_rows = module.output_sizes[2] // chunks
    if q_rows % block or (k_rows % block == 0 and v_rows % block == 0):
        return module
    kv_rows = -(-(k_rows + v_rows) // block) * block
    return module._replace(layer_type="MergedColumnParallelLinear", output_sizes=(heads * head_dim, chunks * kv_rows),
                           heads=None)


def _tower_ignored_whole(tower: Tower, config: ModelConfig, arch: Arch) -> bool:
    """Tower.fp8_ignored_whole: an Fp8Config whose ignored_layers, mapped by the model's hf_to_vllm_mapper, holds the
    tower's own prefix."""
    quant = config.quantization_config
    if tower.fp8_ignored_whole is None or getattr(quant, "method", None) not in FP8_CONFIG_METHODS:
        return False
    listed: tuple[str, ...] = getattr(quant, "ignored_layers", ())  # NativeFp8Config's, W4AFp8Config's
    return tower.fp8_ignored_whole in (map_vllm_name(p, arch.hf_to_vllm) for p in listed)


def _tower_sizes_refused(tower: Tower, config: ModelConfig) -> str | None:
    """Why a size-gated tower (Tower.quant_needs_64) is built without the quant config, or None."""
    method = config.quantization_config.method if config.quantization_config is not None else None
    if method is None or method in ANY_SIZE_TOWER_METHODS:
        return None
    sizes = ((config.vision_hidden_size, config.vision_intermediate_size) if tower.quant_needs_64 == "vision"
             else (config.audio_hidden_size,))
    if all(size is None or size % 64 == 0 for size in sizes):
        return None
    return (f"vLLM builds the {tower.quant_needs_64} tower with quant_config=None: its sizes "
            f"{', '.join(str(s) for s in sizes if s is not None)} are not all multiples of 64 ({tower.source[5:]} "
            "_get_tower_quant_config)")


def _generic_style(leaf: str, fused: bool, router: bool) -> str:
    """The leaf-name rules: what most vLLM model files build for these names."""
    if leaf == "lm_head":
        return "ParallelLMHead"
    if fused and leaf in ("qkv_proj", "qkv"):
        return "QKVParallelLinear"
    if fused and leaf == "gate_up_proj":
        return "MergedColumnParallelLinear"
    if leaf == MLA_FUSED[0]:  # a packed_modules_mapping key or not (Arch.mla_packed)
        return FUSED_QKV_A
    if fused:  # any other packed_modules_mapping key: in_proj_qkvz, in_proj_ba, ...
        return "MergedColumnParallelLinear"
    if router or leaf in REPLICATED_LEAVES:
        return REPLICATED
    return ROW if leaf in ROW_PARALLEL else COLUMN


def _layer_config(config: ModelConfig, name: str) -> ModelConfig:
    """The config as one decoder layer sees it: its own head count where the model lists one per layer."""
    index = layer_template(name)[1]
    if config.heads_per_layer is None or index is None or index >= len(config.heads_per_layer):
        return config
    return config._replace(num_attention_heads=config.heads_per_layer[index])


def _tower_heads(heads: int | None, kv_heads: int | None, widths: tuple[int, ...]) -> tuple[int, int, int] | None:
    """A tower's attention (vision, audio): every head is a KV head (total_num_kv_heads = num_heads) unless the
    tower's config names fewer (EXAONE-4.5's EXAONE4_5_VisionAttention: num_key_value_heads), head_dim from the
    weight."""
    kv_heads = kv_heads or heads
    if not heads or not kv_heads:
        return None
    q_width = widths[0] if len(widths) == 3 else widths[0] * heads // (heads + 2 * kv_heads)
    if q_width % heads or (len(widths) == 1 and q_width * (heads + 2 * kv_heads) != widths[0] * heads):
        return None
    return heads, kv_heads, q_width // heads


def _heads(config: ModelConfig, widths: tuple[int, ...], gated: bool = False,
           per_layer: bool = False) -> tuple[int, int, int] | None:
    """(heads, kv_heads, head_dim) from config.json, head_dim checked against the q shard's rows. `gated`: q_proj
    also holds the output gate, and vLLM's QKVParallelLinear counts 2 x num_heads query heads. `per_layer`: the
    layer's KV heads are its k width over its head size (a model with per-layer geometry)."""
    heads, kv = config.num_attention_heads, config.num_key_value_heads
    if not heads or not kv:
        return None
    if gated:
        heads *= 2
    head_dim = config.head_dim
    if len(widths) == 3:
        if widths[0] % heads:
            return None
        head_dim = widths[0] // heads
    elif head_dim is None and config.hidden_size:
        head_dim = config.hidden_size // heads
    if not head_dim:
        return None
    if per_layer and len(widths) == 3 and widths[1] % head_dim == 0:
        kv = widths[1] // head_dim
    return heads, kv, head_dim


def is_embedding(name: str) -> bool:
    """A module named as an embedding table at any depth ('model.embed_tokens.weight', DeepSeek-V4's 'embed.weight')."""
    return not EMBEDDING_SET.isdisjoint(name.split(".")[:-1])


def _unstack_experts(tensors: dict[str, TensorInfo], block: str, parts: dict[str, tuple[str, ...]]
                     ) -> dict[str, TensorInfo]:
    """Experts stored stacked under the MoE block `block`, `<...>.<block>.<leaf>.weight` [E, out, in] with their
    scales, as the per-expert tensors the model's loader slices them into (loaded_weight[expert_id]): `parts` maps
    each stacked leaf to the leaves its expert slice is cut into along its rows (Step-3.5's "old packed 3D format":
    gate_proj -> gate_proj; Granite's granitemoehybrid.py: input_linear -> gate_proj, up_proj by chunk(2)), each
    `<...>.<block>.experts.<e>.<part>.<suffix>` its bytes of the stored tensor. A side tensor with no expert axis (a
    scale of one entry) serves every expert whole; a per-expert scale with no rows serves each of its parts."""
    stacked = re.compile(rf"(.+\.{re.escape(block)})\.({'|'.join(map(re.escape, parts))})\.([^.]+)")
    experts = {match.group(1, 2): info.shape[0] for name, info in tensors.items()
               if (match := stacked.fullmatch(name)) and match[3] == "weight" and len(info.shape) == 3}
    if not experts:
        return tensors
    out: dict[str, TensorInfo] = {}
    for name, info in tensors.items():
        match = stacked.fullmatch(name)
        count = experts.get(match.group(1, 2)) if match else None
        if match is None or count is None:
            out[name] = info
            continue
        head, leaf, suffix = match.groups()
        pieces = parts[leaf]
        sliced = bool(info.shape) and info.shape[0] == count
        step = (info.end - info.start) // count if sliced else 0
        rest = info.shape[1:] if sliced or info.shape[:1] == (1,) else info.shape
        split = sliced and bool(rest)  # rows to cut into the parts
        shape = (rest[0] // len(pieces), *rest[1:]) if split else rest
        for e in range(count):
            for i, piece in enumerate(pieces):
                start = info.start + e * step + (i * step // len(pieces) if split else 0)
                end = (start + (step // len(pieces) if split else step)) if sliced else info.end
                out[f"{head}.experts.{e}.{piece}.{suffix}"] = info._replace(
                    name=f"{head}.experts.{e}.{piece}.{suffix}", shape=shape, start=start, end=end)
    return out


def _unflatten_experts(tensors: dict[str, TensorInfo], block: str, leaves: tuple[str, str, str], router: str
                       ) -> dict[str, TensorInfo]:
    """Experts stored flattened (Arch.flat_experts: `<...>.<block>.experts.mlp.<leaf>` [E x I, H], a scale beside
    each as `<leaf>_<suffix>`) as the per-expert tensors `<...>.<block>.experts.<e>.{gate,up,down}_proj.<suffix>` the
    model's loader reshapes them into: expert e's rows of each, the down projection's [I, H] read as [H, I] (its
    bytes stay the stored, transposed ones). E is the rows of the block's `<router>.weight`; a tensor without one,
    or whose rows do not split into E experts, is left as stored."""
    roles = dict(zip(leaves, ("gate_proj", "up_proj", "down_proj")))
    stored = re.compile(rf"(.+\.{re.escape(block)})\.experts\.mlp\.({'|'.join(map(re.escape, leaves))})"
                        rf"(?:_({'|'.join(SIDE_TENSORS)}))?")
    out: dict[str, TensorInfo] = {}
    for name, info in tensors.items():
        match = stored.fullmatch(name)
        gate = tensors.get(f"{match[1]}.{router}.weight") if match else None
        count = gate.shape[0] if gate is not None and gate.shape else 0
        if match is None or not count or not info.shape or info.shape[0] % count:
            out[name] = info
            continue
        head, leaf, suffix = match.groups()
        step = (info.end - info.start) // count
        shape = (info.shape[0] // count, *info.shape[1:])
        if roles[leaf] == "down_proj" and len(shape) == 2:
            shape = (shape[1], shape[0])
        for e in range(count):
            expert_name = f"{head}.experts.{e}.{roles[leaf]}.{suffix or 'weight'}"
            out[expert_name] = info._replace(name=expert_name, shape=shape, start=info.start + e * step,
                                             end=info.start + (e + 1) * step)
    return out


def _tower_names(tensors: dict[str, TensorInfo], arch: Arch) -> tuple[dict[str, TensorInfo], dict[str, str]]:
    """The tensors of towers with Tower.renames keyed by the names the model's hf_to_vllm_mapper gives them (each
    TensorInfo keeps the stored name it is read by), and the renamed ones' stored names."""
    out, stored = {}, {}
    for name, info in tensors.items():
        tower = tower_for(arch, name)
        for ours, theirs in tower.renames if tower is not None else ():
            name = name.replace(ours, theirs)
        out[name] = info
        if name != info.name:
            stored[name] = info.name
    return out, stored


def _transposed_routers(tensors: dict[str, TensorInfo],
                        renames: tuple[tuple[str, str], ...]) -> tuple[dict[str, TensorInfo], dict[str, str]]:
    """The tensors with each router weight of Arch.transposed_routers under vLLM's name and in its [out, in] shape
    (the loader transposes it; the TensorInfo keeps the stored name it is read by), and those names' stored ones."""
    out, stored = {}, {}
    for name, info in tensors.items():
        rename = next((r for r in renames if name.endswith(r[0])), None)
        if rename is not None and len(info.shape) == 2:
            name = name[: -len(rename[0])] + rename[1]
            info = info._replace(shape=tuple(reversed(info.shape)))
            stored[name] = info.name
        out[name] = info
    return out, stored


def _split_experts(experts: dict[str, tuple[list[TensorInfo], list[str]]], expert_ids: dict[str, str],
                   names: tuple[str, str]) -> dict[str, tuple[list[TensorInfo], list[str]]]:
    """Each layer's stored experts as Arch.split_experts loads them: ids below half the layer's count into
    `<layer>.<names[0]>`, the others, renumbered from 0, into `<layer>.<names[1]>` (expert_ids learns the new tails)."""
    out: dict[str, tuple[list[TensorInfo], list[str]]] = {}
    for name, (infos, tails) in experts.items():
        half = len({expert_ids[t] for t in tails}) // 2
        for info, tail in zip(infos, tails):
            expert = expert_ids[tail]
            second = expert.isdigit() and int(expert) >= half
            group = out.setdefault(f"{name.removesuffix('.experts')}.{names[second]}", ([], []))
            if second:
                renumbered = str(int(expert) - half)
                tail = renumbered + tail[len(expert):]
                expert_ids[tail] = renumbered
            group[0].append(info)
            group[1].append(tail)
    return out


def _expert_group(head: str, skip_prefixes: tuple[str, ...],
                  dropped: tuple[str, ...] = ()) -> tuple[list[TensorInfo], list[str]] | tuple[()]:
    """A new FusedMoE group for names '<head>.experts.<tail>', or () when they are not experts': skipped (an MTP
    prefix is a prefix of every such name exactly when it is one of '<head>.experts.', as no prefix holds
    'experts'; a `dropped` substring in the head), or a head the regex in _expert_id cannot match (empty, or holding a
    newline)."""
    if not head or "\n" in head or f"{head}.experts.".startswith(skip_prefixes) or any(d in head for d in dropped):
        return ()
    return [], []


def _expert_id(tail: str) -> str | None:
    r"""The expert a tensor belongs to, from what follows the last '.experts.' in its name ('113' for
    '113.down_proj.weight', 'fused' for 'gate_up_proj'), or None when that is not an expert tensor's tail.

    With the name's part before it non-empty and free of newlines, this is exactly whether the name matches
    r'^(?P<moe>.+\.experts)\.(?:\d+\.)?[^.]+(?:\.[^.]+)?$' (the regex is greedy, so its `moe` group ends at the
    last '.experts.'; an earlier one leaves a longer tail, which never matches when the last one's does not).
    """
    if _EXPERT_TAIL.fullmatch(tail) is None or tail in NOT_EXPERT_TAILS:
        return None
    head = tail.split(".", 1)[0]
    return head if head.isdigit() else "fused"


def _natural_key(name: str) -> list:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]
