"""Group checkpoint tensors into the modules vLLM builds: fused QKV / gate-up, parallel styles, FusedMoE.

vLLM does not see `q_proj`, `k_proj`, `v_proj`; it sees one QKVParallelLinear `qkv_proj` whose shards are
loaded from them (packed_modules_mapping). Routing and TP checks are about those fused modules.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from fp8check.core.checkpoint import ModelConfig
from fp8check.core.safetensors_header import TensorInfo

# packed_modules_mapping of Llama, Mistral, Qwen2/3 and most decoder-only models in vLLM.
PACKED_MODULES: dict[str, tuple[str, ...]] = {
    "qkv_proj": ("q_proj", "k_proj", "v_proj"),
    "gate_up_proj": ("gate_proj", "up_proj"),
}
# Leaf names vLLM builds as RowParallelLinear (input split across ranks, all-reduce after).
ROW_PARALLEL = frozenset({"o_proj", "down_proj", "out_proj", "dense_4h_to_h", "fc2", "wo", "w2", "c_proj", "proj"})
KNOWN_ARCHITECTURES = frozenset({
    "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM", "Qwen2MoeForCausalLM",
    "Qwen3MoeForCausalLM", "MixtralForCausalLM", "GemmaForCausalLM", "Gemma2ForCausalLM", "Phi3ForCausalLM",
})
EMBEDDINGS = ("embed_tokens", "wte", "word_embeddings", "tok_embeddings", "embed_in", "embeddings")
# Tensors that belong to a linear module besides its weight.
SIDE_TENSORS = ("weight_scale", "weight_scale_inv", "input_scale", "weight_zero_point", "input_zero_point",
                "weight_global_scale", "input_global_scale", "output_scale", "weight_g_idx", "bias")
# DeepSeek MLA's low-rank input projections are ReplicatedLinear in vLLM (never split), but quantized.
REPLICATED = frozenset({"q_a_proj", "kv_a_proj_with_mqa"})
# Stands for the module's name in messages computed once per module shape (inspect fills it in per module).
LAYER = "\x00layer\x00"
_EXPERT = re.compile(r"^(?P<moe>.+\.experts)\.(?:\d+\.)?[^.]+(?:\.[^.]+)?$")
_LAYER_INDEX = re.compile(r"\.(\d+)\.")


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

    @property
    def leaf(self) -> str:
        return self.name.rsplit(".", 1)[-1]


class MoEModule(NamedTuple):
    """All expert tensors of one decoder layer: vLLM loads them into a single FusedMoE."""

    name: str
    num_experts: int
    tensors: tuple[TensorInfo, ...]


class ModelLayout(NamedTuple):
    linears: tuple[LinearModule, ...]
    moes: tuple[MoEModule, ...]
    orphans: tuple[TensorInfo, ...]     # side tensors (scales) with no weight to belong to
    notes: tuple[str, ...] = ()


def build_layout(tensors: dict[str, TensorInfo], config: ModelConfig) -> ModelLayout:
    notes = []
    if config.architectures and not KNOWN_ARCHITECTURES.intersection(config.architectures):
        notes.append(f"architecture {'/'.join(config.architectures)} is not in fp8check's table; parallel styles "
                     "are inferred from layer names (q/k/v -> QKV, gate/up -> merged, o/down/out -> row)")
    experts: dict[str, list[TensorInfo]] = {}
    weights: dict[str, Shard] = {}
    side: list[TensorInfo] = []
    for name, info in tensors.items():
        moe = _EXPERT.match(name)
        if moe:
            experts.setdefault(moe.group("moe"), []).append(info)
        elif name.endswith(".weight") and len(info.shape) == 2 and not _is_embedding(name):
            weights[name[: -len(".weight")]] = Shard(name=name[: -len(".weight")], weight=info, side={})
        elif name.rsplit(".", 1)[-1] in SIDE_TENSORS:
            side.append(info)
    orphans = []
    for info in side:
        prefix, suffix = info.name.rsplit(".", 1)
        shard = weights.get(prefix)
        if shard is None:
            orphans.append(info)
        else:
            shard.side[suffix] = info
    linears = _fuse(weights, config)
    moes = tuple(
        MoEModule(name=name, num_experts=len({_expert_id(t.name, name) for t in infos}), tensors=tuple(infos))
        for name, infos in sorted(experts.items(), key=lambda item: _natural_key(item[0]))
    )
    return ModelLayout(linears=linears, moes=moes, orphans=tuple(orphans), notes=tuple(notes))


def _fuse(weights: dict[str, Shard], config: ModelConfig) -> tuple[LinearModule, ...]:
    modules: list[LinearModule] = []
    used: set[str] = set()
    for prefix in sorted(weights, key=_natural_key):
        if prefix in used:
            continue
        parent, _, leaf = prefix.rpartition(".")
        fused = next(((f, parts) for f, parts in PACKED_MODULES.items() if leaf in parts), None)
        if fused:
            fused_leaf, parts = fused
            names = [f"{parent}.{p}" if parent else p for p in parts]
            if all(n in weights for n in names):
                used.update(names)
                shards = tuple(weights[n] for n in names)
                modules.append(_module(f"{parent}.{fused_leaf}" if parent else fused_leaf, shards, config))
                continue
        used.add(prefix)
        modules.append(_module(prefix, (weights[prefix],), config))
    return tuple(modules)


def _module(name: str, shards: tuple[Shard, ...], config: ModelConfig) -> LinearModule:
    leaf = name.rsplit(".", 1)[-1]
    k = shards[0].weight.shape[1]
    widths = tuple(s.weight.shape[0] for s in shards)
    if leaf == "lm_head":
        return LinearModule(name, "ParallelLMHead", shards, k, widths)
    if leaf == "qkv_proj":
        heads = _heads(config, widths)
        if len(shards) == 1 and heads:  # a checkpoint that stores qkv_proj already fused (Phi-3)
            num_heads, num_kv, head_dim = heads
            widths = (num_heads * head_dim, num_kv * head_dim, num_kv * head_dim)
        return LinearModule(name, "QKVParallelLinear", shards, k, widths, heads)
    if leaf == "gate_up_proj":
        if len(shards) == 1 and widths[0] % 2 == 0:
            widths = (widths[0] // 2, widths[0] // 2)
        return LinearModule(name, "MergedColumnParallelLinear", shards, k, widths)
    if is_router(name) or leaf in REPLICATED:
        return LinearModule(name, "ReplicatedLinear", shards, k, widths)
    if leaf in ROW_PARALLEL:
        return LinearModule(name, "RowParallelLinear", shards, k, widths)
    return LinearModule(name, "ColumnParallelLinear", shards, k, widths)


def is_router(name: str) -> bool:
    """An MoE router gate (Qwen/DeepSeek `mlp.gate`, Mixtral `block_sparse_moe.gate`, Qwen2-MoE
    `shared_expert_gate`): vLLM builds these with quant_config=None, whatever the checkpoint's config says."""
    parent, _, leaf = name.rpartition(".")
    if leaf == "shared_expert_gate":
        return True
    return leaf == "gate" and parent.rsplit(".", 1)[-1] in ("mlp", "block_sparse_moe")


def _heads(config: ModelConfig, widths: tuple[int, ...]) -> tuple[int, int, int] | None:
    """(heads, kv_heads, head_dim) from config.json, head_dim checked against the q shard's rows."""
    heads, kv = config.num_attention_heads, config.num_key_value_heads
    if not heads or not kv:
        return None
    head_dim = config.head_dim
    if len(widths) == 3:
        if widths[0] % heads:
            return None
        head_dim = widths[0] // heads
    elif head_dim is None and config.hidden_size:
        head_dim = config.hidden_size // heads
    if not head_dim:
        return None
    return heads, kv, head_dim


def _is_embedding(name: str) -> bool:
    return any(f"{e}." in f"{name}" for e in EMBEDDINGS)


def _expert_id(name: str, moe: str) -> str:
    rest = name[len(moe) + 1:]
    head = rest.split(".", 1)[0]
    return head if head.isdigit() else "fused"


def _natural_key(name: str) -> list:
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def layer_template(name: str) -> tuple[str, int | None]:
    """'model.layers.17.mlp.down_proj' -> ('model.layers.{i}.mlp.down_proj', 17), for collapsing rows."""
    match = _LAYER_INDEX.search(name)
    if not match:
        return name, None
    return name[: match.start()] + ".{i}." + name[match.end():], int(match.group(1))
