"""The weight shapes vLLM's model creates from config.json, against the checkpoint's.

vLLM builds every parameter from config.json's dimensions, then its weight loaders copy the checkpoint tensor in
(`assert param_data.shape == loaded_weight.shape`, layers/linear.py and vocab_parallel_embedding.py): a checkpoint
whose tensors do not have those shapes fails to load, whatever kernel was chosen. This module checks the dimensions
every laid-out family shares, on the text model of an architecture fp8check lays out (layouts.ARCHITECTURES; a
generic layout is not judged anyway):

- `hidden_size`: the input of every projection a decoder block starts with (q / k / v, gate / up, MLA's q_a /
  kv_a, the gated-delta-net's and Mamba's in_proj), the output of the ones it ends with (o_proj, down_proj,
  out_proj), and both embeddings' width;
- `num_attention_heads` x head size: q_proj's rows; `num_key_value_heads` x head size: k_proj's and v_proj's (the
  head size is `head_dim`, or hidden_size / num_attention_heads), where the family has one geometry for every layer;
- `vocab_size`: the token embedding's and the LM head's rows;
- gated experts: gate / up take hidden_size (a latent MoE's routed_expert_hidden_size), down gives it.

- `intermediate_size`: the dense MLP's `mlp.gate_proj` / `mlp.up_proj` rows and `mlp.down_proj` columns (Llama's
  naming; a family with per-layer geometry excepted).

Not checked here: the experts' and shared experts' intermediate sizes (families size them from different keys),
MLA's ranks, vision towers, and layers a family lays out by its own rules (per-layer geometry, a gated query,
Step-3's narrowed q_proj).
"""

from __future__ import annotations

from typing import NamedTuple

from fp8check.core.checkpoint.local import ModelConfig
from fp8check.core.model.layouts import Arch, tail_match, tower_for
from fp8check.core.model.modules import EMBEDDING_SET, LinearModule, ModelLayout, MoEModule, Shard

# Leaves whose input is the residual stream (hidden_size) and leaves whose output is.
TAKES_HIDDEN = frozenset({"q_proj", "k_proj", "v_proj", "gate_proj", "up_proj", "w1", "w3", "q_a_proj",
                          "kv_a_proj_with_mqa", "in_proj", "in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a",
                          "in_proj_qkvz", "in_proj_ba"})
GIVES_HIDDEN = frozenset({"o_proj", "down_proj", "w2", "out_proj"})
# The loader's check (layers/linear.py weight_loader / weight_loader_v2, vocab_parallel_embedding.py), verbatim.
LOADER_ASSERT = "assert param_data.shape == loaded_weight.shape"


class Expected(NamedTuple):
    dim: int                          # 0: rows (output), 1: columns (input)
    size: int
    key: str                          # the config.json key (or product) it comes from


def shape_errors(layout: ModelLayout, config: ModelConfig, arch: Arch | None) -> dict[str, list[str]]:
    """Module name -> vLLM's load failure for each checkpoint tensor whose shape is not the one the model creates
    from config.json (empty when every checked dimension agrees)."""
    if arch is None or not config.hidden_size:
        return {}
    errors: dict[str, list[str]] = {}
    for module in layout.linears:
        if tower_for(arch, module.name) is None and tail_match(module.name, arch.own_widths) is None:
            for shard in module.shards:
                errors.setdefault(module.name, []).extend(_check(shard.weight, _expected(shard.name, module, config,
                                                                                          arch)))
                if tail_match(shard.name, arch.split_kv):
                    errors[module.name].extend(_split_kv_errors(shard, config, arch))
    for moe in layout.moes:
        if arch.gated_experts:
            errors.setdefault(moe.name, []).extend(_experts(moe, config))
    return {name: found for name, found in errors.items() if found}


def embedding_errors(tensors: dict, layout: ModelLayout, config: ModelConfig, arch: Arch | None) -> list[str]:
    """The token embedding's shape against vocab_size x hidden_size (VocabParallelEmbedding's loader); expert tensors
    (layout.moes) are never embeddings, so only the others are read."""
    if arch is None or not config.hidden_size:
        return []
    found = []
    # tensors the loader drops are never loaded (Qwen2.5-Omni's talker.model.embed_tokens)
    dropped = {info.name for skipped in layout.skipped for info in skipped.tensors}
    for name in layout.non_expert_names:
        info = tensors[name]
        parts = name.split(".")
        if (len(info.shape) == 2 and parts[-1] == "weight" and parts[-2] in EMBEDDING_SET and name not in dropped
                and tower_for(arch, name) is None and not name.startswith(("mtp.", "model.mtp"))
                and tail_match(name.removesuffix(".weight"), arch.other_tables) is None):
            wanted = [Expected(1, config.embedding_size, "word_embed_proj_dim") if config.embedding_size
                      else Expected(1, config.hidden_size, "hidden_size")]
            if config.vocab_size:
                wanted.append(Expected(0, config.vocab_size, "vocab_size"))
            found += _check(info, wanted)
    return found


def _expected(shard: str, module: LinearModule, config: ModelConfig, arch: Arch) -> list[Expected]:
    leaf = shard.rsplit(".", 1)[-1]
    hidden = config.hidden_size
    wanted: list[Expected] = []
    if hidden is None:  # config.json names no hidden_size: nothing to hold the shapes to
        return wanted
    if leaf == "lm_head":
        wanted.append(Expected(1, config.embedding_size, "word_embed_proj_dim") if config.embedding_size
                      else Expected(1, hidden, "hidden_size"))
        if config.vocab_size:
            wanted.append(Expected(0, config.vocab_size, "vocab_size"))
        return wanted
    if leaf in TAKES_HIDDEN:
        wanted.append(Expected(1, hidden, "hidden_size"))
    if leaf in GIVES_HIDDEN:
        wanted.append(Expected(0, hidden, "hidden_size"))
    mlp = shard.rsplit(".", 2)[-2] == "mlp" if shard.count(".") >= 2 else False
    if mlp and config.intermediate_size and not arch.layer_geometry:
        if leaf in ("gate_proj", "up_proj"):
            wanted.append(Expected(0, config.intermediate_size, "intermediate_size"))
        elif leaf == "down_proj":
            wanted.append(Expected(1, config.intermediate_size, "intermediate_size"))
    heads, kv = config.num_attention_heads, config.num_key_value_heads
    uniform = not (arch.mla or arch.mla_projections_dense or arch.q_gate or arch.layer_geometry or arch.own_query_width
                   or config.heads_per_layer)
    if uniform and heads and kv and leaf in ("q_proj", "k_proj", "v_proj", "o_proj"):
        head_dim = config.head_dim or hidden // heads
        across = (f"num_attention_heads x head_dim = {heads} x {head_dim}" if config.head_dim
                  else f"num_attention_heads x (hidden_size / num_attention_heads) = {heads} x {head_dim}")
        if leaf == "q_proj":
            wanted.append(Expected(0, heads * head_dim, across))
        elif leaf == "o_proj":
            wanted.append(Expected(1, heads * head_dim, across))
        else:
            wanted.append(Expected(0, kv * head_dim, f"num_key_value_heads x head_dim = {kv} x {head_dim}"))
    return wanted


def _experts(moe: MoEModule, config: ModelConfig) -> list[str]:
    """Expert 0's gate / up takes hidden_size and its down gives it (routing.moe.expert_shapes holds every other
    expert to expert 0's shapes); one message per projection."""
    found: dict[str, str] = {}
    # Kimi-K3's latent MoE (nvidia/model.py KimiMoE) and Muse-Spark's pooled one (amd/model.py MuseSparkMoE):
    # FusedMoE's hidden_size is the config's moe_hidden_key.
    width, key = ((config.moe_hidden_size, config.moe_hidden_key) if config.moe_hidden_size and config.moe_hidden_key
                  else (config.hidden_size, "hidden_size"))
    for info, tail in zip(moe.tensors, moe.tails):
        parts = tail.split(".")
        if width is None or len(parts) != 3 or parts[0] != "0" or parts[2] != "weight" or len(info.shape) != 2:
            continue
        leaf = parts[1]
        wanted = ([Expected(1, width, key)] if leaf in ("gate_proj", "up_proj", "w1", "w3")
                  else [Expected(0, width, key)] if leaf in ("down_proj", "w2") else [])
        errors = _check(info, wanted)
        if errors:
            found[leaf] = errors[0]
    return list(found.values())


# Integer weights pack several values a byte or word (w4afp8's INT4 experts: [n, k / 2] int8): not element shapes.
PACKED_DTYPES = ("I8", "U8", "I32", "I64")


def _split_kv_errors(shard: Shard, config: ModelConfig, arch: Arch) -> list[str]:
    """Arch.split_kv: the loader splits every tensor whose name holds the shard's (telechat2.py _split_key_value:
    `self_attn.key_value`), its side tensors too, by taking head_dim rows of K then of V for each of n_head heads:
    a scale is no [2 x heads x head_dim, ...] tensor, so its slices do not give K's and V's scales."""
    heads = config.num_attention_heads
    return [f"{info.name} ({info.file}) is sliced like its weight by {arch.source[5:]}'s key_value split "
            f"(head_dim rows of K then of V for each of {heads} heads, a tensor of shape {list(info.shape)}): its K "
            "and V parts are not K's and V's scales, and the load fails"
            for suffix, info in sorted(shard.side.items()) if suffix != "bias"]


def _check(info, wanted: list[Expected]) -> list[str]:
    shape = list(info.shape)
    if info.dtype in PACKED_DTYPES:
        return []
    bad = [w for w in wanted if len(shape) == 2 and shape[w.dim] != w.size]
    if not bad:
        return []
    sizes = " and ".join(f"{w.size} {'rows' if w.dim == 0 else 'columns'} from config.json's {w.key}" for w in bad)
    transposed = all(shape[::-1][w.dim] == w.size for w in wanted)
    return [f"{info.name} ({info.file}) has shape {shape}, but vLLM creates it with {sizes}: its weight loader fails "
            f"({LOADER_ASSERT})" + (" (the tensor looks transposed)" if transposed else "")]
