"""Write synthetic FP8 checkpoints: the one fixture factory of the tests, the benchmark and the bundled example.

Headers are always exact. Tensor data is either real (random bf16 weights quantized with torch per strategy,
scales computed as compressed-tensors / vLLM do) or a sparse hole (`data="sparse"`: a 34 GB-shaped file that
costs no disk, for header-only benchmarks).
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
from dataclasses import dataclass, field, replace
from typing import Any, Callable, NamedTuple

from fp8check.core.model.modules import is_embedding  # the embedding tables exporters keep unquantized

ITEMSIZE = {"F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "BF16": 2, "F16": 2, "F32": 4, "I32": 4, "I64": 8, "U8": 1,
            "I8": 1}

class Quant(NamedTuple):
    """One way a checkpoint stores FP8 linears: the config it writes and the tensors beside each FP8 weight.

    `method` is vLLM's name for the config class it resolves to (FORMATS key); `writes` is the config writer (a
    key of CONFIG_WRITERS); `scale` the weight scale's suffix; `scale_dtype` its dtype; `scale_layout` how its
    shape follows from the weight's [n, k]: "scalar" [], "one" [1], "rows" [n, 1], "vector" [n], "blocks"
    [ceil(n/bn), ceil(k/bk)], "blocks4d" [ceil(n/bn), 1, ceil(k/bk), 1] (ModelOpt FP8_PB_WO), "mx" [n, k/32]
    uint8 E8M0 exponents; `input_layout` the static input scale's shape ("scalar" or "one"); `experts` how routed
    experts are stored when not like the other linears: "int4" (w4afp8: signed INT4 in groups of 128 along K, two
    nibbles an int8 byte [n, k/2], the low nibble first, with a BF16 `weight_scale_inv` [n, k/128])."""

    method: str
    strategy: str                    # weight strategy: "tensor" | "channel" | "block" | "group" (MXFP8, 1 x 32)
    act: tuple[str, bool] | None     # activation: None (weight-only) or (strategy, dynamic)
    writes: str
    scale: str = "weight_scale"
    scale_dtype: str = "BF16"
    scale_layout: str = "one"
    input_layout: str = "one"
    config_file: str = "config.json"  # "hf_quant_config.json": ModelOpt <= 0.29 keeps its config beside it
    experts: str | None = None


_CT = dict(writes="ct")
_F32 = dict(scale_dtype="F32", scale_layout="scalar", input_layout="scalar")
QUANTS = {
    "ct-fp8": Quant("compressed-tensors", "tensor", ("tensor", False), **_CT),
    "ct-fp8-dynamic": Quant("compressed-tensors", "channel", ("token", True), **_CT, scale_layout="rows"),
    "ct-fp8-block": Quant("compressed-tensors", "block", ("group", True), **_CT, scale_layout="blocks"),
    "ct-w8a16-fp8": Quant("compressed-tensors", "channel", None, **_CT, scale_layout="rows"),
    "ct-w8a16-fp8-tensor": Quant("compressed-tensors", "tensor", None, **_CT),
    "ct-w8a16-fp8-block": Quant("compressed-tensors", "block", None, **_CT, scale_layout="blocks"),
    "ct-mxfp8": Quant("compressed-tensors", "group", ("group", True), writes="ct-mxfp8", scale_dtype="U8",
                      scale_layout="mx"),
    # The same with the config's scale_dtype written "uint8" (compressed-tensors reads it as torch.uint8).
    "ct-mxfp8-uint8": Quant("compressed-tensors", "group", ("group", True), writes="ct-mxfp8:uint8", scale_dtype="U8",
                            scale_layout="mx"),
    "fp8-block": Quant("fp8", "block", ("group", True), "fp8", "weight_scale_inv", "F32", "blocks"),
    "fp8-static": Quant("fp8", "tensor", ("tensor", False), "fp8", **_F32),
    "fp8-dynamic": Quant("fp8", "tensor", ("tensor", True), "fp8", **_F32),
    # ModelOpt >= 0.31 writes config.json's quantization_config; <= 0.29 hf_quant_config.json.
    "modelopt-fp8": Quant("modelopt", "tensor", ("tensor", False), "modelopt:FP8", **_F32),
    "modelopt-fp8-legacy": Quant("modelopt", "tensor", ("tensor", False), "modelopt:FP8", **_F32,
                                 config_file="hf_quant_config.json"),
    "modelopt-pcpt": Quant("modelopt", "channel", ("token", True), "modelopt:FP8_PER_CHANNEL_PER_TOKEN",
                           scale_dtype="F32", scale_layout="vector"),
    "modelopt-pbwo": Quant("modelopt", "block", ("group", True), "modelopt:FP8_PB_WO", scale_dtype="F32",
                           scale_layout="blocks4d"),
    "modelopt-mxfp8": Quant("modelopt_mxfp8", "group", ("group", True), "modelopt:MXFP8", scale_dtype="U8",
                            scale_layout="mx"),
    "quark-fp8": Quant("quark", "tensor", ("tensor", False), "quark", **_F32),
    "quark-ptpc": Quant("quark", "channel", ("token", True), "quark", scale_dtype="F32", scale_layout="vector"),
    "quark-fp8-block": Quant("quark", "block", ("group", True), "quark", scale_dtype="F32", scale_layout="blocks"),
    "inc-fp8-block": Quant("inc", "block", ("group", True), "auto-round", "weight_scale_inv", "F32", "blocks"),
    "fbgemm-fp8": Quant("fbgemm_fp8", "channel", ("token", True), "fbgemm", scale_dtype="F32", scale_layout="rows"),
    # vLLM 0.34's w4afp8: dense layers FP8 block like fp8-block, routed experts INT4 group 128.
    "w4afp8": Quant("w4afp8", "block", ("group", True), "w4afp8", "weight_scale_inv", "F32", "blocks", experts="int4"),
}
# Routed-expert projections (vLLM's w4afp8.py _EXPERT): what Quant.experts applies to.
ROUTED_EXPERT = re.compile(r"\.experts\.\d+\.(?:gate_proj|up_proj|down_proj|w1|w2|w3)$")
INT4_GROUP = 128


# The smallest Llama/Qwen3 shapes every TP 2 check accepts with 128 x 128 blocks: head_dim 128 (a rank's K/V rows
# a whole block), intermediate 1024 (512 per rank), 2 KV heads (no replication).
TP2_BLOCK_SHAPE = dict(hidden=512, intermediate=1024, heads=4, kv_heads=2, head_dim=128)


@dataclass
class Spec:
    """A decoder-only model. Defaults are the tiny Llama of shared/formats.md §5."""

    quant: str | None = "ct-fp8-block"
    architecture: str = "LlamaForCausalLM"
    model_type: str = "llama"
    hidden: int = 256
    intermediate: int = 512
    layers: int = 2
    heads: int = 4
    kv_heads: int = 2
    head_dim: int | None = None
    vocab: int = 1000
    block: tuple[int, int] = (128, 128)
    experts: int = 0
    moe_intermediate: int = 128
    ignore: tuple[str, ...] = ("lm_head",)
    ignore_routers: bool = True      # MoE routers (stored BF16) added to the ignore list, as most exporters write it
    dtype: str = "bfloat16"
    shards: int = 1
    data: str = "random"             # "random" | "zeros" | "sparse"
    seed: int = 0
    distribution: str = "normal"     # random weights: "normal" (std 0.02) | "heavy" (trained-like: t(3) + outlier columns)
    input_scale: float = 4.0 / 448   # static input scales: covers load's N(0, 1) activations; 0.5 / 448 clips them
    extra_config: dict = field(default_factory=dict)
    # Model families (fp8check.core.model.layouts); the defaults write the plain Llama above, byte for byte.
    moe_style: str = "qwen"          # how MoE blocks are named: a key of MOE_STYLES
    shared_experts: int = 0          # DeepSeek/GLM n_shared_experts (Qwen2-MoE / Llama-4: one shared expert)
    first_k_dense: int = 0           # DeepSeek/GLM first_k_dense_replace: layers below it keep a dense MLP
    mla: bool = False                # DeepSeek MLA attention instead of q/k/v
    q_lora_rank: int | None = None   # MLA: q_a_proj + q_b_proj when set, q_proj when None
    kv_lora_rank: int = 128
    qk_rope_head_dim: int = 32
    mtp_layers: int = 0              # MTP layers appended after `layers` (BF16 eh_proj, shared_head.head)
    mtp_key: str = "num_nextn_predict_layers"
    text_prefix: str = "model"       # "language_model.model" / "model.language_model" for multimodal checkpoints
    vision: str | None = None        # a key of VISION_TOWERS: writes a one-block vision tower and projector
    vision_hidden: int = 128
    vision_heads: int = 4
    fused_on_disk: bool = False      # Phi-3: qkv_proj and gate_up_proj stored fused
    attention_sinks: bool = False    # gpt-oss: a per-head self_attn.sinks parameter
    tie_embeddings: bool = False     # tie_word_embeddings (Gemma): no lm_head tensor, the head is embed_tokens
    # The token embedding's and the LM head's leaves (under text_prefix; the head under its root): InternLM2's
    # exporter saves them as tok_embeddings and output.
    embedding: str = "embed_tokens"
    head: str = "lm_head"
    # FP8 KV cache scales, under the format's names (KV_SCALE_NAMES) and config signal (compressed-tensors'
    # kv_cache_scheme, ModelOpt's kv_cache_quant_algo / kv_cache_scheme, Quark's kv_cache_group); None writes none.
    kv_cache: str | None = None      # "tensor" (one scalar per layer) | "attn_head" ([kv_heads, 1, 1])
    kv_scale_fused: bool = False     # fp8 / AutoFP8: one deprecated `self_attn.kv_scale` instead of k_scale + v_scale
    kv_missing: tuple[tuple[int, str], ...] = ()  # (layer, "k" | "v"): scales left out of the checkpoint
    kv_scale_shape: tuple[int, ...] | None = None  # every KV scale's stored shape, instead of the strategy's
    kv_scale: float = 0.05           # the scales' value (random data)
    # config.json's sliding_window (None: the key is left out; transformers' config classes default some families:
    # fp8check.core.model.layouts.HF_WINDOWS); the Qwen families also get use_sliding_window true, as their
    # sliding-window configs write it. layer_types / max_window_layers / sliding_window_pattern go in extra_config.
    sliding_window: int | None = None
    # Names and shapes from transformers' own model class of `architecture`, built on the meta device from
    # model_config(spec) and reverted to the names save_pretrained writes (per-expert tensors, not transformers 5's
    # fused in-memory experts): every family transformers knows, named as its exporters save it. The fields above
    # that shape a layer (moe_style, mla, vision, ...) are then unused; extra_config carries the family's keys.
    transformers: bool = False
    # A family whose tensor names no option above writes (a key of HAND_NAMED): its text model's linears, named as
    # its exporter saves them (Step-3's own checkpoints; transformers has no class for it).
    names: str | None = None
    # name -> shape, BF16 (2-D ".weight": a linear, quantized). Without `transformers`, beside the layers the fields
    # above shape (none with layers=0): a family written wholly by hand under its checkpoints' names (Kimi-K3).
    extra_tensors: dict = field(default_factory=dict)
    # True: config.json's top level holds no sizes, only extra_config's text_config / vision_config do (Kimi-K3's
    # KimiK3Config, vLLM transformers_utils/configs/kimi_k3.py, has hidden_size / vocab_size as read-only properties).
    sizes_in_text_config: bool = False
    # Mistral's own format, which vLLM reads with --config-format / --load-format mistral: params.json (the sizes
    # under Mistral's keys, the quantization as MISTRAL_QUANTIZATION writes it, extra_config's keys such as moe /
    # dsa / kv_sharing / llama_4_scaling) and consolidated.safetensors, the tensors under Mistral's names
    # (mistral_name). Hand-named specs only (transformers=False); quant: one of MISTRAL_QUANTIZATION's.
    mistral_format: bool = False

    @property
    def hd(self) -> int:
        return self.head_dim or self.hidden // self.heads


# moe_style -> (block name, router leaf, expert leaves gate/up/down, shared-expert name).
MOE_STYLES = {
    "qwen": ("mlp", "gate", ("gate_proj", "up_proj", "down_proj"), "shared_expert"),        # + shared_expert_gate
    "deepseek": ("mlp", "gate", ("gate_proj", "up_proj", "down_proj"), "shared_experts"),   # also GLM-4.5
    "mixtral": ("block_sparse_moe", "gate", ("w1", "w3", "w2"), None),                       # also MiniMax-M2
    "llama4": ("feed_forward", "router", ("gate_proj", "up_proj", "down_proj"), "shared_expert"),
    "gpt_oss": ("mlp", "router", ("gate_proj", "up_proj", "down_proj"), None),
    "mistral": ("feed_forward", "gate", ("w1", "w3", "w2"), None),  # mistral-inference's MoeLayer (consolidated)
}
# Layer names vLLM builds without a quant config: real checkpoints store them in BF16.
ROUTER_LEAVES = (".mlp.gate", ".block_sparse_moe.gate", ".feed_forward.router", ".mlp.router", ".shared_expert_gate",
                 ".mixer.gate", ".router.proj", ".mlp.gate.wg",
                 ".moe.gate", ".mlp.router.gate",  # Nemotron-H, Gemma-4, Hunyuan, Step-3.5, HY-V3
                 ".mlp.router.classifier",  # LongCat-Flash
                 ".block_sparse_moe.router.layer", ".block_sparse_moe.router",  # Granite MoE (transformers 5: SWA)
                 ".feed_forward.gate",  # LFM2-MoE
                 ".ffn.router.layer")  # DBRX
# Towers vLLM builds with quant_config=None (mllama4.py, step3_vl.py, pixtral.py): the FP8 checkpoints keep them in BF16.
BF16_TOWERS = {"llama4": ("vision_model.", "multi_modal_projector."), "step3": ("vision_model.", "vit_large_projector"),
               "pixtral-mistral": ("vision_encoder.", "patch_merger.", "vision_language_adapter."),  # pixtral.py
               # voxtral.py quantizes the encoder (an FP8 one's scales, which its loader does not rename, fail the
               # load); Mistral's FP8 exports keep the audio tower in BF16
               "voxtral-mistral": ("mm_whisper_embeddings.",)}


def linear_shapes(spec: Spec) -> dict[str, tuple[int, int]]:
    """Checkpoint linear names -> [out, in], in the order HF models save them."""
    if spec.transformers:
        return {name[: -len(".weight")]: (shape[0], shape[1]) for name, shape in transformers_tensors(spec).items()
                if _is_linear_weight(name, shape)}
    shapes: dict[str, tuple[int, int]] = HAND_NAMED[spec.names](spec) if spec.names else {}
    for i in range(0 if spec.names else spec.layers + spec.mtp_layers):
        p = f"{spec.text_prefix}.layers.{i}"
        shapes.update(_attention_shapes(spec, f"{p}.self_attn"))
        if spec.experts and i >= spec.first_k_dense:
            shapes.update(_moe_shapes(spec, p))
        elif spec.fused_on_disk:
            shapes[f"{p}.mlp.gate_up_proj"] = (2 * spec.intermediate, spec.hidden)
            shapes[f"{p}.mlp.down_proj"] = (spec.hidden, spec.intermediate)
        else:
            block = MOE_STYLES[spec.moe_style][0] if spec.experts else "mlp"
            shapes[f"{p}.{block}.gate_proj"] = (spec.intermediate, spec.hidden)
            shapes[f"{p}.{block}.up_proj"] = (spec.intermediate, spec.hidden)
            shapes[f"{p}.{block}.down_proj"] = (spec.hidden, spec.intermediate)
        if i >= spec.layers:  # DeepSeek-V3's MTP block: eh_proj and its own head (left unquantized)
            shapes[f"{p}.eh_proj"] = (spec.hidden, 2 * spec.hidden)
            shapes[f"{p}.shared_head.head"] = (spec.vocab, spec.hidden)
    shapes.update({n[: -len(".weight")]: tuple(s) for n, s in spec.extra_tensors.items() if _is_linear_weight(n, s)})
    if not spec.tie_embeddings:
        shapes[f"language_model.{spec.head}" if spec.text_prefix == "language_model.model" else spec.head] = (
            spec.vocab, spec.hidden)
    if spec.vision:
        shapes.update(VISION_TOWERS[spec.vision](spec))
    shapes.update({name[: -len(".weight")]: shape for name, shape in spec.extra_tensors.items()
                   if _is_linear_weight(name, shape)})
    return shapes


def _is_linear_weight(name: str, shape: tuple[int, ...]) -> bool:
    """A 2-D weight that is no embedding and no norm (Cohere's per-head q_norm / k_norm [heads, head_dim], which the
    exporters, quantizing linears only, keep in BF16)."""
    return (name.endswith(".weight") and len(shape) == 2 and not is_embedding(name)
            and not name[: -len(".weight")].endswith("norm"))


_TRANSFORMERS_CACHE: dict[str, dict[str, tuple[int, ...]]] = {}
class TransformersHost(NamedTuple):
    """A transformers class that holds a family's text model (transformers has no class of its own for it): built
    with the family's config as its text_config (a config with a text_config of its own: as the host's config); the
    names matching `drop` (its other parts) left out, and its text model's `text_root` (when it saves it under one)
    written as `model.`. With `text_config` set, the host is a causal LM built from that function of the family's
    text config (its text_config, or the config itself) as transformers' `text_model_type` config instead; `renames`
    ((regex, replacement), in order) turn its saved names into the family's."""

    architecture: str
    drop: str
    text_root: str | None = None
    text_model_type: str | None = None
    text_config: Callable[[dict], dict] | None = None
    renames: tuple[tuple[str, str], ...] = ()


# DeepSeek's own names (the released V4 checkpoints, which vllm/models/deepseek_v4's mapper reads: layers.N, embed,
# norm, hc_head, head) for transformers' DeepseekV4ForCausalLM's saved model.layers.N / model.embed_tokens / ...
_DEEPSEEK_NAMES = ((r"^model\.embed_tokens\.", "embed."), (r"^model\.", ""))


def _dsv41_host_config(text: dict) -> dict:
    """transformers' DeepseekV4Config for DeepSeek-V4.1's text_config: every layer a sliding one (V4.1's compress_ratios
    0 / 1 / 2 are no V4 layer type; its compressors, indexers and Engram tensors come in the spec's extra_tensors)."""
    fields = {k: v for k, v in text.items() if k not in ("compress_ratios", "model_type")}
    return {**fields, "layer_types": ["sliding_attention"] * text["num_hidden_layers"]}


def _ernie_vl_host_config(flat: dict) -> dict:
    """transformers' Ernie4_5_VLMoeConfig (nested) for ERNIE-4.5-VL's remote-code config.json (model_type
    ernie4_5_moe_vl: flat text keys, moe_num_experts / moe_intermediate_size [text, vision], vision_config's depth /
    embed_dim / num_heads / mlp_ratio): the same layers, MoE from moe_layer_start_index[0] on."""
    layers, start = flat["num_hidden_layers"], min(flat.get("moe_layer_start_index", [1]))
    text_keys = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
                 "head_dim", "vocab_size", "max_position_embeddings", "use_bias", "moe_intermediate_size", "moe_k",
                 "moe_num_shared_experts", "tie_word_embeddings")
    text = {k: flat[k] for k in text_keys if k in flat}
    text.update(moe_num_experts=flat["moe_num_experts"][0],
                mlp_layer_types=["sparse" if i >= start else "dense" for i in range(layers)])
    vision = flat["vision_config"]
    return {"text_config": text, "tie_word_embeddings": flat.get("tie_word_embeddings", False),
            "vision_config": {"depth": vision["depth"], "hidden_size": vision["embed_dim"],
                              "num_heads": vision["num_heads"], "patch_size": vision["patch_size"],
                              "intermediate_size": int(vision["embed_dim"] * vision["mlp_ratio"]),
                              "spatial_merge_size": vision["spatial_merge_size"]}}


_PUZZLE_PATTERN = {"attention": "*", "moe": "E", "mamba": "M", "mlp": "-"}


def _nemotron_h_puzzle_host_config(doc: dict) -> dict:
    """transformers' NemotronHConfig for NVIDIA's remote NemotronHPuzzleConfig (model_type nemotron_h_puzzle): the
    hybrid_override_pattern of its block_configs' types, each block's own keys at the top level (one value a key:
    transformers' class builds every layer of a kind alike)."""
    fields = {k: v for k, v in doc.items() if k not in ("block_configs", "mtp_block_configs", "model_type",
                                                         "architectures")}
    for block in doc["block_configs"]:
        fields.update({k: v for k, v in block.items() if k != "block_type"})
    return {**fields, "hybrid_override_pattern": "".join(_PUZZLE_PATTERN[b["block_type"]]
                                                         for b in doc["block_configs"])}


TRANSFORMERS_HOSTS = {
    # NVIDIA's Nemotron-H Puzzle (remote-code config, model_type nemotron_h_puzzle): Nemotron-H's names
    # (backbone.layers.N.mixer.*), written by transformers' NemotronHForCausalLM.
    "NemotronHPuzzleForCausalLM": TransformersHost("NemotronHForCausalLM", r"(?!)", None, "nemotron_h",
                                                   _nemotron_h_puzzle_host_config),
    # ERNIE-4.5-VL's remote-code config (ernie4_5_moe_vl) is transformers' Ernie4_5_VLMoeForConditionalGeneration's
    # model in another config format; its saved names are Baidu's (the reverted conversion) but for the tower, which
    # Baidu's checkpoints hold at vision_model. (ernie45_vl.py's mapper leaves it there).
    "Ernie4_5_VLMoeForConditionalGeneration": TransformersHost(
        "Ernie4_5_VLMoeForConditionalGeneration", r"(?!)", None, "ernie4_5_vl_moe", _ernie_vl_host_config,
        ((r"^model\.vision_model\.", "vision_model."),)),
    # Step-3.5 (model_type step3p5) is Step3p7ForConditionalGeneration's text model, saved under the same names.
    "Step3p5ForCausalLM": TransformersHost("Step3p7ForConditionalGeneration", r"(vision_model|vit_large_projector)\."),
    # Step-5 (vLLM's own config class, model_type step5; no transformers class) keeps Step-3.5's text model names: q /
    # k / v / g / o_proj, moe.gate, moe.router_bias, moe.{gate,up,down}_proj, share_expert, mlp. Its sparse-indexer
    # tensors (sparse_indexer_q / k / z / w, ssmax_s on the sparse layers) come as Spec.extra_tensors.
    "Step5ForCausalLM": TransformersHost("Step3p7ForConditionalGeneration", r"(vision_model|vit_large_projector)\."),
    # Step-5's vision-language class (vLLM's own Step5VLConfig, model_type step5_vl: text_config a Step5Config,
    # vision_config a PerceptionEncoderConfig) is Step-3.7's model with Step-5's text model, saved under the same names.
    "Step5ForConditionalGeneration": TransformersHost("Step3p7ForConditionalGeneration", r"(?!)"),
    # GLM-5-Next's text model is Glm5NextForConditionalGeneration's model.language_model, its tower model.visual.
    "Glm5NextForCausalLM": TransformersHost("Glm5NextForConditionalGeneration", r"model\.(?!language_model\.)",
                                            r"model\.language_model\."),
    # DeepSeek-V4 with a vision tower (vision_n_layers > 0) and DeepSeek-V4.1: the text model as transformers'
    # DeepseekV4ForCausalLM saves it, under DeepSeek's names; the tower (deepseek_v4_vision_tensors) in extra_tensors.
    "DeepseekV4ForConditionalGeneration": TransformersHost("DeepseekV4ForCausalLM", r"(?!)", None, "deepseek_v4",
                                                           dict, _DEEPSEEK_NAMES),
    "DeepseekV41ForCausalLM": TransformersHost("DeepseekV4ForCausalLM", r"(?!)", None, "deepseek_v4",
                                               _dsv41_host_config, _DEEPSEEK_NAMES),
    # Ling-3.0 VL (vLLM's own config class, model_type bailing_moe_v3_vl): its text_config is transformers'
    # BailingHybridForCausalLM's, saved under the same names (model.layers.N, lm_head); the tower and projector
    # (model.visual., model.linear_proj.) come as Spec.extra_tensors.
    # dots3-note's released config.json (model_type dots3_note, vLLM's Dots3NoteConfig) is flat: the text keys and
    # the swa_* aliases that transformers' Dots3NoteTextConfig reads; its Dots3NoteForCausalLM saves the names vLLM
    # loads (model.layers.N.self_attn.g_proj, indexer.wq_b / wk / weights_proj, mlp.experts.E.gate_proj, ...).
    "Dots3NoteForCausalLM": TransformersHost("Dots3NoteForCausalLM", r"(?!)", None, "dots3_note_text", dict),
    "BailingMoeV3VLForConditionalGeneration": TransformersHost(
        "BailingHybridForCausalLM", r"(?!)", None, "bailing_hybrid",
        lambda text: {k: v for k, v in text.items() if k != "model_type"}),
    # Kimi-VL (vLLM's own KimiVLConfig, model_type kimi_vl): its text_config is transformers' DeepseekV3ForCausalLM's,
    # saved under language_model. (language_model.model.layers.N, language_model.lm_head); MoonViT and the projector
    # come as Spec.extra_tensors (moonvit_tensors).
    "KimiVLForConditionalGeneration": TransformersHost(
        "DeepseekV3ForCausalLM", r"(?!)", None, "deepseek_v3",
        lambda text: {k: v for k, v in text.items() if k != "model_type"}, ((r"^", "language_model."),)),
    # NVIDIA's Nemotron VL (remote-code config, model_type NemotronH_Nano_VL_V2): its llm_config is transformers'
    # NemotronHForCausalLM's, saved under language_model. (language_model.backbone.layers.N, language_model.lm_head);
    # the RADIO tower, the mlp1 projector and an Omni's sound encoder come as Spec.extra_tensors (nemotron_vl_tensors).
    **{arch: TransformersHost("NemotronHForCausalLM", r"(?!)", None, "nemotron_h",
                              lambda doc: {k: v for k, v in doc["llm_config"].items()
                                           if k not in ("model_type", "architectures")},
                              ((r"^", "language_model."),))
       for arch in ("NemotronH_Nano_VL_V2", "NemotronH_Nano_Omni_Reasoning_V3", "NemotronH_Super_Omni_Reasoning_V3",
                    "NemotronH_Omni_Reasoning_V3")},
    # Llama-3.1-Nemotron-Nano-VL (model_type Llama_Nemotron_Nano_VL): its llm_config Llama's, saved under
    # language_model. (language_model.model.layers.N, language_model.lm_head); the towers as above.
    # Gemma-3n's vision-language class: transformers' Gemma3nForConditionalGeneration builds its MobileNetV5 tower
    # through timm, which fp8check does not need; its text model is Gemma3nForCausalLM's, saved under
    # model.language_model. (tied: no lm_head); the towers and embedders come as Spec.extra_tensors
    # (gemma3n_tower_tensors).
    "Gemma3nForConditionalGeneration": TransformersHost(
        "Gemma3nForCausalLM", r"(?!)", None, "gemma3n_text",
        lambda text: {k: v for k, v in text.items() if k != "model_type"}, ((r"^model\.", "model.language_model."),)),
    # Phi-3-vision's remote-code config (phi3_v): its text model is transformers' Phi3ForCausalLM's, saved under the
    # same names (q / k / v and gate / up stored fused); the CLIP tower and projection come as Spec.extra_tensors
    # (phi3v_vision_tensors).
    "Phi3VForCausalLM": TransformersHost(
        "Phi3ForCausalLM", r"(?!)", None, "phi3",
        lambda doc: {k: v for k, v in doc.items() if k not in ("img_processor", "embd_layer")}),
    "Llama_Nemotron_Nano_VL": TransformersHost("LlamaForCausalLM", r"(?!)", None, "llama",
                                               lambda doc: {k: v for k, v in doc["llm_config"].items()
                                                            if k not in ("model_type", "architectures")},
                                               ((r"^", "language_model."),)),
}

# transformers' class of a config.json architecture it spells otherwise (Moonshot's checkpoints name the class
# KimiK25ForConditionalGeneration, transformers 5.24 Kimi_K25ForConditionalGeneration; K-EXAONE's ExaoneMoEForCausalLM
# is ExaoneMoeForCausalLM) or builds with another class (EXAONE-3's model_type exaone: LlamaForCausalLM, whose saved
# names its conversion mapping reverts to transformer.h.N.attn.attention.*), or lacks: MiMo-7B's remote code is
# Qwen2's model with MTP layers (written with model_type qwen2 and the MTP tensors as extra_tensors); TeleChat3's
# checkpoints hold Llama's names (vLLM loads them with llama.py, no mapper; written with model_type llama).
# Intern-S1's remote-code InternS1ForConditionalGeneration is saved under transformers' InternVL names (vLLM serves both
# with interns1.py): written by transformers' InternVLForConditionalGeneration (model_type internvl).
TRANSFORMERS_CLASSES = {"KimiK25ForConditionalGeneration": "Kimi_K25ForConditionalGeneration",
                        "ExaoneMoEForCausalLM": "ExaoneMoeForCausalLM", "ExaoneForCausalLM": "LlamaForCausalLM",
                        "MiMoForCausalLM": "Qwen2ForCausalLM", "TeleChat3ForCausalLM": "LlamaForCausalLM",
                        # MiMo-V2-Pro's remote code: MiMo-V2-Flash's layers, q / k / v saved fused (SAVED_FUSED)
                        "MiMoV2ForCausalLM": "MiMoV2FlashForCausalLM",
                        # MiMo-V2-Omni: MiMo-V2-Flash's text model; its towers go in Spec.extra_tensors
                        "MiMoV2OmniForCausalLM": "MiMoV2FlashForCausalLM",
                        "InternS1ForConditionalGeneration": "InternVLForConditionalGeneration",
                        # registry.py spells LightOnOCR's class otherwise than transformers
                        "LightOnOCRForConditionalGeneration": "LightOnOcrForConditionalGeneration",
                        # LongCat-Flash-Lite: LongCat-Flash's class; its n-gram tables go in Spec.extra_tensors
                        "LongcatFlashNgramForCausalLM": "LongcatFlashForCausalLM",
                        # Ling-3.0: transformers' model type bailing_hybrid
                        "BailingMoeV3ForCausalLM": "BailingHybridForCausalLM",
                        # Sarvam (modeling_auto.py): sarvam_moe is GLM-4-MoE's class, sarvam_mla DeepSeek-V3's
                        "SarvamMoEForCausalLM": "Glm4MoeForCausalLM", "SarvamMLAForCausalLM": "DeepseekV3ForCausalLM",
                        # vLLM's registry serves both MuseGlimmer names with one class; transformers has the VL one
                        "MuseGlimmerForCausalLM": "MuseGlimmerForConditionalGeneration",
                        # vLLM's registry serves Qwen2.5-Omni's early name with the same thinker class
                        "Qwen2_5OmniModel": "Qwen2_5OmniForConditionalGeneration",
                        # Phi-3.5-MoE: vLLM's registry spells transformers' PhimoeForCausalLM PhiMoEForCausalLM
                        "PhiMoEForCausalLM": "PhimoeForCausalLM",
                        # IQuest-Coder, the legacy LLaMAForCausalLM spelling and InternLM3 (transformers' internlm3
                        # maps to LlamaForCausalLM): Llama's class and names
                        "IQuestCoderForCausalLM": "LlamaForCausalLM", "LLaMAForCausalLM": "LlamaForCausalLM",
                        "InternLM3ForCausalLM": "LlamaForCausalLM"}
# Names transformers 5.24's revert_weight_conversion leaves wrong, as (regex, replacement) per model_type: kimi_k25's
# conversion renames "blocks" -> "layers" unanchored, so its reversal turns the text model's layers into blocks, and
# two of its in-memory names are not reverted; Moonshot's checkpoints hold language_model.model.layers.N,
# mm_projector.pre_norm and vision_tower.patch_embed.proj (vLLM's kimi_k25.py loads those).
SAVED_NAMES: dict[str, tuple[tuple[str, ...], ...]] = {
    "kimi_k25": ((r"^language_model\.model\.blocks\.", "language_model.model.layers."),
                 (r"^model\.mm_projector\.", "mm_projector."),
                 (r"^vision_tower\.encoder\.patch_embed\.", "vision_tower.patch_embed.")),
    # kimi_linear's conversion renames every .block_sparse_moe. to .mlp.: reverted, the dense layers' MLP lands under
    # block_sparse_moe, where Moonshot's checkpoints (and vLLM's KimiDecoderLayer) hold it under mlp.
    "kimi_linear": ((r"\.block_sparse_moe\.(gate_proj|up_proj|down_proj)\.", r".mlp.\1."),),
    # hy_v4's conversion renames .linear_gate -> .gate_proj (the attention's output gate) and drops .hc_pre.: reverted,
    # every MLP's gate_proj becomes linear_gate and the hyper-connection weights land under .hc_pre.<layer>.; Tencent's
    # checkpoints (and vLLM's hy_v4 loader) hold mlp[.shared_experts].gate_proj, layers.N.hc_attn_layer.hc_pre.hc_fn
    # and model.hc_head.hc_head_fn.
    "hy_v4": ((r"\.mlp\.(shared_experts\.)?linear_gate\.", r".mlp.\1gate_proj."),
              (r"\.hc_pre\.(hc_attn_layer|hc_mlp_layer)\.", r".\1.hc_pre."),
              (r"^model\.hc_pre\.hc_head\.", "model.hc_head.")),
    # bailing_hybrid's conversion renames every .self_attn.dense. to .self_attn.o_proj. (the MLA output): reverted, the
    # Kimi delta attention layers' o_proj lands under dense too, where inclusionAI's Ling-3.0 checkpoints (and vLLM's
    # bailing_moe_v3.py) hold it as o_proj. A third entry: the rename applies only where the name it gives (re.sub of
    # the same pattern) is in the state: a layer holding b_proj, the KDA layers' own.
    "bailing_hybrid": ((r"(\.attention\.)dense(\.\w+)$", r"\1o_proj\2", r"\1b_proj.weight"),),
    # transformers 5.24 saves a nested SiglipVisionModel without its vision_model. level (CLIPVisionModel's PrefixChange
    # is reverted only at the top level); Cohere's checkpoints (and vLLM's SiglipVisionModel) hold it.
    "cohere2_vision": ((r"^model\.vision_tower\.(?!vision_model\.)", "model.vision_tower.vision_model."),),
    # LFM2-VL's SigLIP-2 tower likewise (LiquidAI's checkpoints and vLLM's lfm2_siglip2.py Siglip2Model hold it).
    "lfm2_vl": ((r"^model\.vision_tower\.(?!vision_model\.)", "model.vision_tower.vision_model."),),
    # The same for LLaVA's CLIP / SigLIP towers and PaliGemma's (the released checkpoints hold
    # vision_tower.vision_model.*, as vLLM's CLIPVisionModel / SiglipVisionModel build them); a Pixtral-HF tower
    # (transformer.*, patch_conv, ln_pre) has no such level.
    **{model_type: ((r"^vision_tower\.(?=(embeddings|encoder|pre_layrnorm|post_layernorm|head)\.)",
                     "vision_tower.vision_model."),)
       for model_type in ("llava", "llava_next", "llava_next_video", "llava_onevision", "paligemma")},
    # Keyed by architecture: Intern-S1's checkpoints hold transformers >= 4.52's names (model.language_model.,
    # model.vision_tower., model.multi_modal_projector., lm_head; interns1.py's hf_to_vllm_mapper reads them), where
    # transformers 5.24's InternVL reverts to the legacy language_model.model. / vision_tower. ones.
    "InternS1ForConditionalGeneration": ((r"^language_model\.model\.", "model.language_model."),
                                         (r"^language_model\.lm_head\.", "lm_head."),
                                         (r"^(vision_tower|multi_modal_projector)\.", r"model.\1.")),
}
# Ling-3.0 VL's text model is bailing_hybrid's, saved alike.
SAVED_NAMES["BailingMoeV3VLForConditionalGeneration"] = SAVED_NAMES["bailing_hybrid"]
# Aya Vision's SigLIP and VIP-LLaVA's CLIP tower, saved with the vision_model. level as LLaVA's (CohereLabs'
# aya-vision, llava-hf's vip-llava checkpoints hold vision_tower.vision_model.*).
SAVED_NAMES.update({model_type: SAVED_NAMES["llava"] for model_type in ("aya_vision", "vipllava")})


def bailing_v3_vision_tensors(vision: dict, text_hidden: int) -> dict[str, tuple[int, ...]]:
    """Ling-3.0 VL's tower and projector (bailing_moe_v3_vl.py, the checkpoint's names) from its vision_config, for a
    spec's extra_tensors: per block Qwen3-VL's attn.qkv (stored fused) / attn.proj / mlp.linear_fc1 / linear_fc2, the
    patch merger's LayerNorm (no linear), and the projector model.linear_proj.0 / .2 over the merged patches."""
    dim, inter = vision["hidden_size"], vision["intermediate_size"]
    merged = dim * vision["spatial_merge_size"] ** 2
    out: dict[str, tuple[int, ...]] = {"model.visual.merger.norm.weight": (dim,)}
    for i in range(vision["depth"]):
        p = f"model.visual.blocks.{i}"
        out.update({f"{p}.attn.qkv.weight": (3 * dim, dim), f"{p}.attn.proj.weight": (dim, dim),
                    f"{p}.mlp.linear_fc1.weight": (inter, dim), f"{p}.mlp.linear_fc2.weight": (dim, inter)})
    out.update({"model.linear_proj.0.weight": (text_hidden, merged), "model.linear_proj.2.weight": (text_hidden,
                                                                                                     text_hidden)})
    return out


def _vit_encoder_layers(root: str, layers: int, width: int, inter: int) -> dict[str, tuple[int, ...]]:
    """A CLIP / SigLIP / Idefics2 vision encoder's layers under `root` as transformers saves them:
    `<root>.encoder.layers.N` self_attn q / k / v / out_proj and mlp fc1 / fc2 with biases, layer_norm1 / 2."""
    out: dict[str, tuple[int, ...]] = {}
    for i in range(layers):
        layer = f"{root}.encoder.layers.{i}"
        for leaf, rows, cols in (("self_attn.q_proj", width, width), ("self_attn.k_proj", width, width),
                                 ("self_attn.v_proj", width, width), ("self_attn.out_proj", width, width),
                                 ("mlp.fc1", inter, width), ("mlp.fc2", width, inter)):
            out.update({f"{layer}.{leaf}.weight": (rows, cols), f"{layer}.{leaf}.bias": (rows,)})
        out.update({f"{layer}.{norm}.{param}": (width,) for norm in ("layer_norm1", "layer_norm2")
                    for param in ("weight", "bias")})
    return out


def phi3v_vision_tensors(hidden: int, layers: int = 24) -> dict[str, tuple[int, ...]]:
    """A Phi-3-vision checkpoint's image embedding (microsoft's remote-code names, which phi3v.py loads) for a spec's
    extra_tensors: CLIP ViT-L/14-336 (1024 wide, 16 heads, 24 layers) under
    model.vision_embed_tokens.img_processor.vision_model. (embeddings, pre / post layer norms, per layer q / k / v /
    out_proj, mlp.fc1 / fc2 with biases), the HD separators glb_GN / sub_GN and img_projection.0 / .2 (over the 2 x 2
    merged features, to the text model's `hidden`)."""
    dim, inter, root = 1024, 4096, "model.vision_embed_tokens"
    vit = f"{root}.img_processor.vision_model"
    out: dict[str, tuple[int, ...]] = {
        f"{vit}.embeddings.class_embedding": (dim,), f"{vit}.embeddings.patch_embedding.weight": (dim, 3, 14, 14),
        f"{vit}.embeddings.position_embedding.weight": (577, dim), f"{vit}.pre_layrnorm.weight": (dim,),
        f"{vit}.pre_layrnorm.bias": (dim,), f"{vit}.post_layernorm.weight": (dim,),
        f"{vit}.post_layernorm.bias": (dim,),
        f"{root}.glb_GN": (1, 1, 4 * dim), f"{root}.sub_GN": (1, 1, 1, 4 * dim),
        f"{root}.img_projection.0.weight": (hidden, 4 * dim), f"{root}.img_projection.0.bias": (hidden,),
        f"{root}.img_projection.2.weight": (hidden, hidden), f"{root}.img_projection.2.bias": (hidden,)}
    out.update(_vit_encoder_layers(vit, layers, dim, inter))
    return out


def whisper_encoder_tensors(root: str, audio: dict) -> dict[str, tuple[int, ...]]:
    """transformers' WhisperEncoder under `root` (Ultravox's audio_tower) from a WhisperConfig's keys, for a spec's
    extra_tensors: the two convolutions, the position table, per layer self_attn q / k / v / out_proj (k_proj without
    a bias), fc1 / fc2 and the two layer norms, and the final layer_norm."""
    width, ffn, bins = audio["d_model"], audio["encoder_ffn_dim"], audio.get("num_mel_bins", 80)
    out: dict[str, tuple[int, ...]] = {
        f"{root}.conv1.weight": (width, bins, 3), f"{root}.conv1.bias": (width,),
        f"{root}.conv2.weight": (width, width, 3), f"{root}.conv2.bias": (width,),
        f"{root}.embed_positions.weight": (audio.get("max_source_positions", 1500), width),
        f"{root}.layer_norm.weight": (width,), f"{root}.layer_norm.bias": (width,)}
    for i in range(audio["encoder_layers"]):
        layer = f"{root}.layers.{i}"
        for leaf in ("q_proj", "k_proj", "v_proj", "out_proj"):
            out[f"{layer}.self_attn.{leaf}.weight"] = (width, width)
            if leaf != "k_proj":
                out[f"{layer}.self_attn.{leaf}.bias"] = (width,)
        out.update({f"{layer}.fc1.weight": (ffn, width), f"{layer}.fc1.bias": (ffn,),
                    f"{layer}.fc2.weight": (width, ffn), f"{layer}.fc2.bias": (width,)})
        for norm in ("self_attn_layer_norm", "final_layer_norm"):
            out.update({f"{layer}.{norm}.weight": (width,), f"{layer}.{norm}.bias": (width,)})
    return out


def qwen3_asr_audio_tensors(root: str, audio: dict) -> dict[str, tuple[int, ...]]:
    """Qwen3-ASR's audio encoder under `root` (thinker.audio_tower. in Qwen's own checkpoints; transformers'
    Qwen3ASREncoder names, its projector's linear_1 / linear_2 as the tower's proj1 / proj2), for a spec's
    extra_tensors: three 2-D convolutions of downsample_hidden_size channels and conv_out, per layer self_attn q / k /
    v / out_proj, fc1 / fc2 and two layer norms, ln_post, proj1 (d_model) and proj2 (output_dim)."""
    width, ffn, conv = audio["d_model"], audio["encoder_ffn_dim"], audio.get("downsample_hidden_size", 480)
    bins = audio.get("num_mel_bins", 128)
    out: dict[str, tuple[int, ...]] = {}
    for i, channels_in in enumerate((1, conv, conv), start=1):
        out.update({f"{root}.conv2d{i}.weight": (conv, channels_in, 3, 3), f"{root}.conv2d{i}.bias": (conv,)})
    out[f"{root}.conv_out.weight"] = (width, conv * (bins // 8))
    for i in range(audio["encoder_layers"]):
        layer = f"{root}.layers.{i}"
        for leaf in ("q_proj", "k_proj", "v_proj", "out_proj"):
            out.update({f"{layer}.self_attn.{leaf}.weight": (width, width), f"{layer}.self_attn.{leaf}.bias": (width,)})
        out.update({f"{layer}.fc1.weight": (ffn, width), f"{layer}.fc1.bias": (ffn,),
                    f"{layer}.fc2.weight": (width, ffn), f"{layer}.fc2.bias": (width,)})
        for norm in ("self_attn_layer_norm", "final_layer_norm"):
            out.update({f"{layer}.{norm}.weight": (width,), f"{layer}.{norm}.bias": (width,)})
    out.update({f"{root}.ln_post.weight": (width,), f"{root}.ln_post.bias": (width,),
                f"{root}.proj1.weight": (width, width), f"{root}.proj1.bias": (width,),
                f"{root}.proj2.weight": (audio["output_dim"], width), f"{root}.proj2.bias": (audio["output_dim"],)})
    return out


def gemma3n_tower_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """A Gemma-3n checkpoint's towers (transformers' names, which gemma3n_mm.py loads) from its config.json, for a
    spec's extra_tensors: the USM audio encoder (model.audio_tower.: the subsampling convolutions and input_proj_linear,
    per conformer block two macaron feed-forwards, the attention's q / k / v / post and relative-position pos_proj, the
    light convolution's linear_start / depthwise conv / linear_end, and their norms), the embedders
    (model.embed_vision. / model.embed_audio.: embedding table, norms, embedding_projection) and the MobileNetV5
    tower's stem and first block (model.vision_tower.timm_model.: convolutions and norms, no linear)."""
    text, audio, vision = config["text_config"], config["audio_config"], config["vision_config"]
    width, channels = audio["hidden_size"], audio.get("sscp_conv_channel_size", [128, 32])
    bins = audio.get("input_feat_size", 128)
    root = "model.audio_tower"
    out: dict[str, tuple[int, ...]] = {
        f"{root}.subsample_conv_projection.conv_0.conv.weight": (channels[0], 1, 3, 3),
        f"{root}.subsample_conv_projection.conv_0.norm.weight": (channels[0],),
        f"{root}.subsample_conv_projection.conv_1.conv.weight": (channels[1], channels[0], 3, 3),
        f"{root}.subsample_conv_projection.conv_1.norm.weight": (channels[1],),
        f"{root}.subsample_conv_projection.input_proj_linear.weight": (width, channels[1] * bins // 4)}
    for i in range(audio["conf_num_hidden_layers"]):
        block = f"{root}.conformer.{i}"
        for ffw in ("ffw_layer_start", "ffw_layer_end"):
            out.update({f"{block}.{ffw}.pre_layer_norm.weight": (width,),
                        f"{block}.{ffw}.ffw_layer_1.weight": (4 * width, width),
                        f"{block}.{ffw}.ffw_layer_2.weight": (width, 4 * width),
                        f"{block}.{ffw}.post_layer_norm.weight": (width,)})
        attn = f"{block}.attention"
        out.update({f"{attn}.pre_attn_norm.weight": (width,), f"{attn}.post_norm.weight": (width,),
                    f"{attn}.attn.per_dim_scale": (width // audio["conf_num_attention_heads"],),
                    f"{attn}.attn.relative_position_embedding.pos_proj.weight": (width, width),
                    **{f"{attn}.attn.{leaf}.weight": (width, width) for leaf in ("q_proj", "k_proj", "v_proj")},
                    f"{attn}.post.weight": (width, width),
                    f"{block}.lconv1d.pre_layer_norm.weight": (width,),
                    f"{block}.lconv1d.linear_start.weight": (2 * width, width),
                    f"{block}.lconv1d.depthwise_conv1d.weight": (width, 1, audio.get("conf_conv_kernel_size", 5)),
                    f"{block}.lconv1d.conv_norm.weight": (width,),
                    f"{block}.lconv1d.linear_end.weight": (width, width), f"{block}.norm.weight": (width,)})
    for tower, tower_config in (("vision", vision), ("audio", audio)):
        embedder, dim = f"model.embed_{tower}", tower_config["hidden_size"]
        out.update({f"{embedder}.embedding.weight": (tower_config["vocab_size"], dim),
                    f"{embedder}.hard_embedding_norm.weight": (dim,), f"{embedder}.soft_embedding_norm.weight": (dim,),
                    f"{embedder}.embedding_projection.weight": (text["hidden_size"], dim)})
    timm = "model.vision_tower.timm_model"
    out.update({f"{timm}.conv_stem.conv.weight": (64, 3, 3, 3), f"{timm}.conv_stem.conv.bias": (64,),
                f"{timm}.conv_stem.bn.weight": (64,), f"{timm}.blocks.0.0.conv_exp.weight": (256, 64, 3, 3),
                f"{timm}.blocks.0.0.bn1.weight": (256,), f"{timm}.blocks.0.0.conv_pwl.weight": (128, 256, 1, 1),
                f"{timm}.blocks.0.0.bn2.weight": (128,)})
    return out


def nemotron_vl_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """A Nemotron VL / Omni checkpoint's towers (NVIDIA's remote-code names, which vLLM's radio.py, parakeet.py and
    nano_nemotron_vl.py load) from its config.json, for a spec's extra_tensors: the RADIO tower
    (vision_config.args.model sized by local.RADIO_VIT_SIZES) under vision_model.radio_model.model: patch_generator
    (embedder, video_embedder where video_temporal_patch_size > 1, pos_embed, cls_token), per block norm1 / attn.qkv
    (stored fused) / attn.proj / norm2 / mlp.fc1 / mlp.fc2, and the input conditioner; mlp1 (RMSNorm, Linear, ReLU^2,
    Linear) over the pixel-shuffled tokens; with a sound_config, the Parakeet encoder (sound_encoder.encoder.:
    transformers' ParakeetEncoder names) and its projection (sound_projection.); with MTP layers in llm_config, the
    vision_final_layernorm (vision_projector.)."""
    from fp8check.core.checkpoint.local import RADIO_VIT_SIZES  # noqa: PLC0415

    vision, text = config["vision_config"], config["llm_config"]
    dim, layers, _, inter = RADIO_VIT_SIZES[vision["args"]["model"]]
    patch, frames = vision.get("patch_size", 16), vision.get("video_temporal_patch_size", 1)
    root = "vision_model.radio_model"
    generator = f"{root}.model.patch_generator"
    out: dict[str, tuple[int, ...]] = {
        f"{generator}.embedder.weight": (dim, 3 * patch * patch), f"{generator}.pos_embed": (1, 128 * 128, dim),
        f"{generator}.cls_token.token": (8, dim), f"{root}.input_conditioner.norm_mean": (3, 1, 1),
        f"{root}.input_conditioner.norm_std": (3, 1, 1)}
    if frames > 1:
        out[f"{generator}.video_embedder.weight"] = (dim, 3 * frames * patch * patch)
    for i in range(layers):
        block = f"{root}.model.blocks.{i}"
        out.update({f"{block}.norm1.weight": (dim,), f"{block}.norm1.bias": (dim,),
                    f"{block}.attn.qkv.weight": (3 * dim, dim), f"{block}.attn.qkv.bias": (3 * dim,),
                    f"{block}.attn.proj.weight": (dim, dim), f"{block}.attn.proj.bias": (dim,),
                    f"{block}.norm2.weight": (dim,), f"{block}.norm2.bias": (dim,),
                    f"{block}.mlp.fc1.weight": (inter, dim), f"{block}.mlp.fc1.bias": (inter,),
                    f"{block}.mlp.fc2.weight": (dim, inter), f"{block}.mlp.fc2.bias": (dim,)})
    shuffled = dim * round(1 / config["downsample_ratio"]) ** 2
    out.update({"mlp1.0.weight": (shuffled,), "mlp1.1.weight": (config["projector_hidden_size"], shuffled),
                "mlp1.3.weight": (text["hidden_size"], config["projector_hidden_size"])})
    if text.get("num_nextn_predict_layers"):
        out.update({f"vision_projector.vision_final_layernorm.{p}": (dim,) for p in ("weight", "bias")})
    sound = config.get("sound_config")
    if sound:
        width, ffn, channels = sound["hidden_size"], sound["intermediate_size"], sound["subsampling_conv_channels"]
        encoder = "sound_encoder.encoder"
        out[f"{encoder}.subsampling.linear.weight"] = (width, channels * (sound["num_mel_bins"] // 8))
        for i in range(sound["num_hidden_layers"]):
            layer = f"{encoder}.layers.{i}"
            out.update({f"{layer}.self_attn.{leaf}.weight": (width, width)
                        for leaf in ("q_proj", "k_proj", "v_proj", "o_proj", "relative_k_proj")})
            for ff in ("feed_forward1", "feed_forward2"):
                out.update({f"{layer}.{ff}.linear1.weight": (ffn, width), f"{layer}.{ff}.linear2.weight": (width, ffn)})
            out.update({f"{layer}.conv.pointwise_conv1.weight": (2 * width, width, 1),
                        f"{layer}.conv.pointwise_conv2.weight": (width, width, 1),
                        f"{layer}.norm_out.weight": (width,)})
        out.update({"sound_projection.norm.weight": (width,),
                    "sound_projection.linear1.weight": (sound["projection_hidden_size"], width),
                    "sound_projection.linear2.weight": (text["hidden_size"], sound["projection_hidden_size"])})
    return out


def deepseek_v4_vision_tensors(hidden: int, vision: dict, image_vectors: tuple[str, ...] = ("start", "end",
                                                                                          "newline", "pad")) -> dict:
    """DeepSeek-V4's vision tower and aligner (vllm/models/deepseek_v4/common/vision.py, whose names are the
    checkpoint's) from config.json's flat vision_* keys, for a spec's extra_tensors: vision.patch_embed.proj, per
    block attn.wqkv (stored fused) / attn.wo / mlp.w1 (gate and up stored fused) / mlp.w2 and the norms,
    aligner.w1 / w2, and the learned image_* vectors (DeepSeek-V4.1 has no image_pad)."""
    dim, inter, patch = vision["vision_dim"], vision["vision_inter_dim"], vision["vision_patch_size"]
    merged = dim * vision["vision_downsample_ratio"] ** 2
    out = {"vision.patch_embed.proj.weight": (dim, 3 * patch * patch), "vision.patch_embed.proj.bias": (dim,),
           "vision.norm.weight": (dim,)}
    for i in range(vision["vision_n_layers"]):
        block = f"vision.blocks.{i}"
        out.update({f"{block}.attn.wqkv.weight": (3 * dim, dim), f"{block}.attn.wqkv.bias": (3 * dim,),
                    f"{block}.attn.wo.weight": (dim, dim), f"{block}.attn.wo.bias": (dim,),
                    f"{block}.mlp.w1.weight": (2 * inter, dim), f"{block}.mlp.w2.weight": (dim, inter),
                    f"{block}.norm1.weight": (dim,), f"{block}.norm2.weight": (dim,)})
    out.update({"aligner.w1.weight": (hidden, merged), "aligner.w1.bias": (hidden,),
                "aligner.w2.weight": (hidden, hidden), "aligner.w2.bias": (hidden,)})
    return {**out, **{f"image_{name}": (hidden,) for name in image_vectors}}


# timm's vit_so400m_patch14_siglip_384, which deepseek_vl2.py builds with timm.create_model whatever vision_config
# says: 27 blocks of width 1152, MLP int(1152 x 3.7362) = 4304, 27 x 27 patches of 14, the latent attention pool.
SIGLIP_SO400M = dict(width=1152, layers=27, mlp=4304, patch=14, positions=729)


def deepseek_vl2_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """A DeepSeek-VL2 checkpoint's tower and projector from its config.json, for a spec's extra_tensors (the names
    deepseek-ai's exporter saves, which deepseek_vl2.py loads as saved): timm's SigLIP-SO400M under vision.
    (SIGLIP_SO400M: patch_embed.proj, pos_embed, per block norm1 / norm2, attn.qkv (stored fused) / attn.proj and
    mlp.fc1 / fc2 with biases, the final norm, attn_pool's latent, q, kv, proj, norm and mlp.fc1 / fc2), then
    MlpProjector's projector.layers.N (downsample_mlp_gelu: a linear over the downsample_ratio-squared features,
    GELU, linears of n_embed x mlp_ratio) and the learned image_newline / view_seperator."""
    w, inter, patch = SIGLIP_SO400M["width"], SIGLIP_SO400M["mlp"], SIGLIP_SO400M["patch"]
    out: dict[str, tuple[int, ...]] = {"vision.patch_embed.proj.weight": (w, 3, patch, patch),
                                       "vision.patch_embed.proj.bias": (w,),
                                       "vision.pos_embed": (1, SIGLIP_SO400M["positions"], w),
                                       "vision.norm.weight": (w,), "vision.norm.bias": (w,)}

    def linear(name: str, rows: int, cols: int) -> None:
        out.update({f"{name}.weight": (rows, cols), f"{name}.bias": (rows,)})

    for i in range(SIGLIP_SO400M["layers"]):
        block = f"vision.blocks.{i}"
        out.update({f"{block}.{norm}.{part}": (w,) for norm in ("norm1", "norm2") for part in ("weight", "bias")})
        linear(f"{block}.attn.qkv", 3 * w, w)
        linear(f"{block}.attn.proj", w, w)
        linear(f"{block}.mlp.fc1", inter, w)
        linear(f"{block}.mlp.fc2", w, inter)
    pool = "vision.attn_pool"
    out.update({f"{pool}.latent": (1, 1, w), f"{pool}.norm.weight": (w,), f"{pool}.norm.bias": (w,)})
    for leaf, rows, cols in (("q", w, w), ("kv", 2 * w, w), ("proj", w, w), ("mlp.fc1", inter, w),
                             ("mlp.fc2", w, inter)):
        linear(f"{pool}.{leaf}", rows, cols)
    projector = config["projector_config"]
    n_embed, wide = projector["n_embed"], projector["n_embed"] * projector["mlp_ratio"]
    widths = [projector["input_dim"] * projector["downsample_ratio"] ** 2] + [wide] * (projector["depth"] - 1)
    for i, cols in enumerate(widths):  # nn.Sequential: the GELUs between the linears take the odd indices
        linear(f"projector.layers.{2 * i}", n_embed if i == len(widths) - 1 else wide, cols)
    return {**out, "image_newline": (n_embed,), "view_seperator": (n_embed,)}


def deepseek_ocr_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """A DeepSeek-OCR checkpoint's towers and projector (deepencoder.py's fixed build_sam_vit_b and CLIP-L / 14, which
    deepseek_ocr.py builds whatever config.json says, and MlpProjector), under the names deepseek-ai's exporter saves,
    for a spec's extra_tensors: model.sam_model (patch_embed.proj, the 64 x 64 position table, 12 blocks of norm1 /
    norm2, attn.qkv (stored fused) / attn.proj with biases and the relative-position tables of a 14-wide window or,
    on the global blocks 2 / 5 / 8 / 11, the whole 64 x 64 grid, mlp.lin1 / lin2; the neck's and net_2 / net_3's
    convolutions), model.vision_model (the embeddings, pre_layrnorm, 24 transformer.layers of self_attn.qkv_proj
    (stored fused) / out_proj, mlp.fc1 / fc2 and two layer norms), model.projector.layers (the linear projector) and
    the learned image_newline / view_seperator."""
    out: dict[str, tuple[int, ...]] = {"model.sam_model.patch_embed.proj.weight": (768, 3, 16, 16),
                                       "model.sam_model.patch_embed.proj.bias": (768,),
                                       "model.sam_model.pos_embed": (1, 64, 64, 768),
                                       "model.sam_model.neck.0.weight": (256, 768, 1, 1),
                                       "model.sam_model.neck.2.weight": (256, 256, 3, 3),
                                       "model.sam_model.net_2.weight": (512, 256, 3, 3),
                                       "model.sam_model.net_3.weight": (1024, 512, 3, 3)}

    def biased(name: str, *shape: int) -> None:
        out.update({f"{name}.weight": shape, f"{name}.bias": (shape[0],)})

    for norm in ("neck.1", "neck.3"):
        biased(f"model.sam_model.{norm}", 256)
    for i in range(12):
        block = f"model.sam_model.blocks.{i}"
        grid = 64 if i in (2, 5, 8, 11) else 14
        out.update({f"{block}.attn.rel_pos_h": (2 * grid - 1, 64), f"{block}.attn.rel_pos_w": (2 * grid - 1, 64)})
        for name, shape in (("norm1", (768,)), ("norm2", (768,)), ("attn.qkv", (3 * 768, 768)),
                            ("attn.proj", (768, 768)), ("mlp.lin1", (4 * 768, 768)), ("mlp.lin2", (768, 4 * 768))):
            biased(f"{block}.{name}", *shape)
    clip = "model.vision_model"
    out.update({f"{clip}.embeddings.class_embedding": (1024,),
                f"{clip}.embeddings.patch_embedding.weight": (1024, 3, 14, 14),
                f"{clip}.embeddings.position_embedding.weight": (257, 1024)})
    biased(f"{clip}.pre_layrnorm", 1024)
    for i in range(24):
        layer = f"{clip}.transformer.layers.{i}"
        for name, shape in (("layer_norm1", (1024,)), ("layer_norm2", (1024,)), ("self_attn.qkv_proj", (3072, 1024)),
                            ("self_attn.out_proj", (1024, 1024)), ("mlp.fc1", (4096, 1024)),
                            ("mlp.fc2", (1024, 4096))):
            biased(f"{layer}.{name}", *shape)
    projector = config["projector_config"]
    biased("model.projector.layers", projector["n_embed"], projector["input_dim"])
    return {**out, "model.image_newline": (projector["n_embed"],), "model.view_seperator": (projector["n_embed"],)}


def deepseek_v41_tensors(text: dict) -> dict:
    """DeepSeek-V4.1's tensors that transformers' DeepseekV4ForCausalLM (its every layer a sliding one:
    _dsv41_host_config) does not write, under DeepSeek's names, for a spec's extra_tensors (vllm/models/deepseek_v41
    attention.py / compressor.py / common/engram.py): a compressor (wkv, and wgate where compress_ratios gives the
    layer a ratio above 1) on each kv_source_layer_ids layer; an indexer (wq_b, weights_proj, and wk where the layer
    is a KV source too) on each index_source_layer_ids layer; an Engram (embed table, wkv) on each
    engram_layer_ids layer."""
    hidden, head_dim, ratios = text["hidden_size"], text["head_dim"], text["compress_ratios"]
    out: dict[str, tuple[int, ...]] = {}
    for layer in text["kv_source_layer_ids"]:
        attn = f"layers.{layer}.attn"
        out.update({f"{attn}.compressor.wkv.weight": (head_dim, hidden), f"{attn}.compressor.norm.weight": (head_dim,)})
        if ratios[layer] > 1:
            out[f"{attn}.compressor.wgate.weight"] = (head_dim, hidden)
    for layer in text["index_source_layer_ids"]:
        attn, heads, index_dim = f"layers.{layer}.attn", text["index_n_heads"], text["index_head_dim"]
        out.update({f"{attn}.indexer.wq_b.weight": (heads * index_dim, text["q_lora_rank"]),
                    f"{attn}.indexer.weights_proj.weight": (heads, hidden)})
        if layer in text["kv_source_layer_ids"]:
            out.update({f"{attn}.indexer.wk.weight": (index_dim, head_dim),
                        f"{attn}.indexer.k_norm.weight": (index_dim,)})
    hash_columns = (text.get("engram_max_ngram_size", 1) - 1) * text.get("engram_n_heads", 0)
    for layer, rows in zip(text.get("engram_layer_ids", ()), text.get("engram_num_embeddings", ())):
        engram, engram_dim = f"layers.{layer}.engram", text["engram_head_dim"]
        out.update({f"{engram}.embed.weight": (rows, engram_dim),
                    f"{engram}.wkv.weight": (hidden * (text["hc_mult"] + 1), hash_columns * engram_dim)})
    return out


# Projections a family's own (remote-code) class holds fused where transformers' class it is written with keeps them
# apart, by architecture: (the parts, in order, the fused leaf). MiMo-V2-Pro's modeling_mimo_v2.py (config
# attention_projection_layout "fused_qkv") saves self_attn.qkv_proj, written with transformers' MiMoV2FlashForCausalLM.
SAVED_FUSED: dict[str, tuple[tuple[str, ...], str]] = {
    "MiMoV2ForCausalLM": (("q_proj", "k_proj", "v_proj"), "qkv_proj"),
}


def _fused_on_save(spec: Spec, state: dict) -> dict:
    """`state` with the parts SAVED_FUSED names stored as one tensor (their rows stacked) under its fused leaf."""
    parts, fused = SAVED_FUSED.get(spec.architecture, ((), ""))
    out = {}
    for name, tensor in state.items():
        match = re.fullmatch(r"(.+)\.(\w+)\.weight", name)
        if not parts or not match or match[2] not in parts:
            out[name] = tensor
        elif match[2] == parts[0]:
            rows = sum(state[f"{match[1]}.{part}.weight"].shape[0] for part in parts)
            out[f"{match[1]}.{fused}.weight"] = tensor.new_empty((rows, *tensor.shape[1:]))
    return out


def _saved_names(spec: Spec, state: dict) -> dict:
    """`state` under the names the family's checkpoints hold (SAVED_NAMES, by architecture, else model_type; a rename
    with a third entry only where that sibling name is in `state`; SAVED_FUSED)."""
    state = _fused_on_save(spec, state)
    renames = SAVED_NAMES.get(spec.architecture) or SAVED_NAMES.get(spec.model_type, ())
    if not renames:
        return state
    out = {}
    for name, tensor in state.items():
        for pattern, replacement, *sibling in renames:
            if not sibling or re.search(pattern, name) and re.sub(pattern, sibling[0], name) in state:
                name = re.sub(pattern, replacement, name)
        out[name] = tensor
    return out


def transformers_tensors(spec: Spec) -> dict[str, tuple[int, ...]]:
    """Every tensor name -> shape of the family's transformers model class (Spec.transformers), plus
    spec.extra_tensors (MTP layers and the like, which transformers' classes do not build). Tied weights are
    written once, as save_pretrained writes them."""
    config = model_config(spec, with_quant=False)
    key = json.dumps([spec.architecture, config], sort_keys=True)
    if key not in _TRANSFORMERS_CACHE:
        import torch  # noqa: PLC0415 - only transformers families need torch and transformers
        import transformers  # noqa: PLC0415
        from transformers.core_model_loading import revert_weight_conversion  # noqa: PLC0415

        fields = {k: v for k, v in config.items() if k not in ("architectures", "model_type")}
        host = TRANSFORMERS_HOSTS.get(spec.architecture)
        model_class = getattr(transformers, host.architecture if host else
                              TRANSFORMERS_CLASSES.get(spec.architecture, spec.architecture))
        if host and host.text_config and host.text_model_type:
            hf_config = transformers.AutoConfig.for_model(host.text_model_type,
                                                          **host.text_config(fields.get("text_config", fields)))
        else:
            hf_config = (model_class.config_class(**fields) if host and "text_config" in fields
                         else model_class.config_class(text_config=fields) if host
                         else transformers.AutoConfig.for_model(spec.model_type, **fields))
        with torch.device("meta"):
            model = model_class._from_config(hf_config)
        state = _saved_names(spec, revert_weight_conversion(model, model.state_dict()))
        if host:
            state = {re.sub(f"^{host.text_root}", "model.", name) if host.text_root else name: t
                     for name, t in state.items() if not re.match(host.drop, name)}
            for pattern, replacement in host.renames:
                state = {re.sub(pattern, replacement, name): t for name, t in state.items()}
        # The text config's tie_word_embeddings (GLM-4V's text config has none: its top-level config's, default False).
        tie = getattr(hf_config.get_text_config(decoder=True), "tie_word_embeddings",
                      getattr(hf_config, "tie_word_embeddings", False))
        tied = set(getattr(model, "all_tied_weights_keys", None) or {}) if tie else set()
        # ... under the names they are saved with (transformers' reverted conversion moves a VL model's lm_head. to
        # language_model.lm_head.: PaliGemma, LLaVA)
        tied |= set(_saved_names(spec, revert_weight_conversion(
            model, {name: t for name, t in model.state_dict().items() if name in tied})))
        _TRANSFORMERS_CACHE[key] = _per_expert({name: tuple(t.shape) for name, t in state.items()
                                                if name not in tied})
    return {**_TRANSFORMERS_CACHE[key], **{n: tuple(s) for n, s in spec.extra_tensors.items()}}


_EXPERT_GATE_UP = re.compile(r".+\.experts\.\d+\.(gate|up)_proj\.weight")


def _per_expert(shapes: dict[str, tuple[int, ...]]) -> dict[str, tuple[int, ...]]:
    """Experts a transformers class keeps as 3-D parameters with no conversion to revert (Gemma-4's
    `experts.gate_up_proj` [E, 2I, H], `experts.down_proj` [E, H, I]) or saves stacked (Step-3.5's
    `moe.{gate,up,down}_proj.weight` [E, out, in]) written per expert, as llm-compressor and the FP8 exporters save
    them (step3p5.py loads `moe.experts.{E}.{gate,up,down}_proj` as "the new format from LLM Compressor"; Granite's
    block_sparse_moe.input_linear / output_linear as granitemoehybrid.py's get_expert_mapping names them).
    An expert without a down_proj is dropped: transformers' LongcatFlashExperts sizes gate_up_proj for its
    zero-computation (identity) experts too, rows its forward never reads and the released checkpoints lack."""
    out: dict[str, tuple[int, ...]] = {}
    for name, shape in shapes.items():
        stacked = re.fullmatch(r"(.+)\.(gate_proj|up_proj|down_proj)\.weight", name)
        if stacked and len(shape) == 3:
            out.update({f"{stacked[1]}.experts.{e}.{stacked[2]}.weight": shape[1:] for e in range(shape[0])})
            continue
        head, _, leaf = name.rpartition(".experts.")
        granite = re.fullmatch(r"(.+\.block_sparse_moe)\.(input_linear|output_linear)\.weight", name)
        if granite:  # Granite's experts saved fused ([E, 2I, H] input_linear, [E, H, I] output_linear)
            head, leaf = granite[1], "gate_up_proj" if granite[2] == "input_linear" else "down_proj"
        if not head or len(shape) != 3 or leaf not in ("gate_up_proj", "down_proj"):
            out[name] = shape
            continue
        experts, rows, cols = shape
        parts = {"gate_proj": rows // 2, "up_proj": rows // 2} if leaf == "gate_up_proj" else {"down_proj": rows}
        for e in range(experts):
            out.update({f"{head}.experts.{e}.{part}.weight": (n, cols) for part, n in parts.items()})
    return {name: shape for name, shape in out.items() if not _EXPERT_GATE_UP.fullmatch(name)
            or re.sub(r"(gate|up)_proj\.weight$", "down_proj.weight", name) in out}


def _attention_shapes(spec: Spec, p: str) -> dict[str, tuple[int, int]]:
    if spec.fused_on_disk:
        return {f"{p}.qkv_proj": ((spec.heads + 2 * spec.kv_heads) * spec.hd, spec.hidden),
                f"{p}.o_proj": (spec.hidden, spec.heads * spec.hd)}
    if not spec.mla:
        return {f"{p}.q_proj": (spec.heads * spec.hd, spec.hidden), f"{p}.k_proj": (spec.kv_heads * spec.hd, spec.hidden),
                f"{p}.v_proj": (spec.kv_heads * spec.hd, spec.hidden), f"{p}.o_proj": (spec.hidden, spec.heads * spec.hd)}
    q_width = spec.heads * (spec.hd + spec.qk_rope_head_dim)  # qk_nope_head_dim = head_dim
    shapes = ({f"{p}.q_a_proj": (spec.q_lora_rank, spec.hidden), f"{p}.q_b_proj": (q_width, spec.q_lora_rank)}
              if spec.q_lora_rank else {f"{p}.q_proj": (q_width, spec.hidden)})
    shapes[f"{p}.kv_a_proj_with_mqa"] = (spec.kv_lora_rank + spec.qk_rope_head_dim, spec.hidden)
    shapes[f"{p}.kv_b_proj"] = (spec.heads * 2 * spec.hd, spec.kv_lora_rank)  # v_head_dim = head_dim
    shapes[f"{p}.o_proj"] = (spec.hidden, spec.heads * spec.hd)
    return shapes


def _moe_shapes(spec: Spec, p: str) -> dict[str, tuple[int, int]]:
    block, router, (gate, up, down), shared = MOE_STYLES[spec.moe_style]
    shapes = {f"{p}.{block}.{router}": (spec.experts, spec.hidden)}
    for e in range(spec.experts):
        shapes[f"{p}.{block}.experts.{e}.{gate}"] = (spec.moe_intermediate, spec.hidden)
        shapes[f"{p}.{block}.experts.{e}.{up}"] = (spec.moe_intermediate, spec.hidden)
        shapes[f"{p}.{block}.experts.{e}.{down}"] = (spec.hidden, spec.moe_intermediate)
    if spec.shared_experts and shared:
        width = spec.moe_intermediate * spec.shared_experts
        shapes[f"{p}.{block}.{shared}.gate_proj"] = (width, spec.hidden)
        shapes[f"{p}.{block}.{shared}.up_proj"] = (width, spec.hidden)
        shapes[f"{p}.{block}.{shared}.down_proj"] = (spec.hidden, width)
        if spec.moe_style == "qwen":
            shapes[f"{p}.{block}.shared_expert_gate"] = (1, spec.hidden)
    return shapes


def _pixtral(spec: Spec) -> dict[str, tuple[int, int]]:
    """Mistral-3: PixtralHFVisionModel block + Mistral3MultiModalProjector (patch merger of 2x2 patches)."""
    v, p = spec.vision_hidden, "vision_tower.transformer.layers.0"
    return {**{f"{p}.attention.{x}_proj": (v, v) for x in "qkvo"}, f"{p}.feed_forward.gate_proj": (2 * v, v),
            f"{p}.feed_forward.up_proj": (2 * v, v), f"{p}.feed_forward.down_proj": (v, 2 * v),
            "multi_modal_projector.patch_merger.merging_layer": (v, 4 * v),
            "multi_modal_projector.linear_1": (spec.hidden, v), "multi_modal_projector.linear_2": (spec.hidden, spec.hidden)}


def _pixtral_mistral(spec: Spec) -> dict[str, tuple[int, int]]:
    """Pixtral in Mistral's format (Mistral-Small-3.1, Magistral: params.json's vision_encoder): one VisionTransformer
    block, the PatchMerger of 2x2 patches and the VisionLanguageAdapter, under names mistral_name turns into the
    consolidated ones (attention.wq, feed_forward.w1, ...)."""
    v, p = spec.vision_hidden, "vision_encoder.transformer.layers.0"
    return {**{f"{p}.attention.{x}_proj": (v, v) for x in "qkvo"}, f"{p}.feed_forward.gate_proj": (2 * v, v),
            f"{p}.feed_forward.up_proj": (2 * v, v), f"{p}.feed_forward.down_proj": (v, 2 * v),
            "patch_merger.merging_layer": (v, 4 * v), "vision_language_adapter.w_in": (spec.hidden, v),
            "vision_language_adapter.w_out": (spec.hidden, spec.hidden)}


def _voxtral_mistral(spec: Spec) -> dict[str, tuple[int, int]]:
    """Voxtral in Mistral's format (params.json's multimodal.whisper_model_args): one Whisper encoder block (fc1 / fc2
    as feed_forward.w1 / w2) and the audio-language projection over 4 downsampled frames, under names mistral_name
    turns into the consolidated ones."""
    v, p = spec.vision_hidden, "mm_whisper_embeddings.whisper_encoder.transformer.layers.0"
    return {**{f"{p}.attention.{x}_proj": (v, v) for x in "qkvo"}, f"{p}.feed_forward.w1": (4 * v, v),
            f"{p}.feed_forward.w2": (v, 4 * v), "mm_whisper_embeddings.audio_language_projection.0": (spec.hidden, 4 * v),
            "mm_whisper_embeddings.audio_language_projection.2": (spec.hidden, spec.hidden)}


def _llama4_vision(spec: Spec) -> dict[str, tuple[int, int]]:
    v, p = spec.vision_hidden, "vision_model.model.layers.0"
    return {**{f"{p}.self_attn.{x}_proj": (v, v) for x in "qkvo"}, f"{p}.mlp.fc1": (2 * v, v), f"{p}.mlp.fc2": (v, 2 * v),
            "vision_model.patch_embedding.linear": (v, 3 * 14 * 14), "vision_model.vision_adapter.mlp.fc1": (v, 4 * v),
            "vision_model.vision_adapter.mlp.fc2": (v, v), "multi_modal_projector.linear_1": (spec.hidden, v)}


def _qwen2_5_vl(spec: Spec) -> dict[str, tuple[int, int]]:
    v, p = spec.vision_hidden, "visual.blocks.0"
    return {f"{p}.attn.qkv": (3 * v, v), f"{p}.attn.proj": (v, v), f"{p}.mlp.gate_proj": (2 * v, v),
            f"{p}.mlp.up_proj": (2 * v, v), f"{p}.mlp.down_proj": (v, 2 * v),
            "visual.merger.mlp.0": (4 * v, 4 * v), "visual.merger.mlp.2": (spec.hidden, 4 * v)}


def _qwen3_vl(spec: Spec) -> dict[str, tuple[int, int]]:
    v, p = spec.vision_hidden, "visual.blocks.0"
    shapes = {f"{p}.attn.qkv": (3 * v, v), f"{p}.attn.proj": (v, v), f"{p}.mlp.linear_fc1": (2 * v, v),
              f"{p}.mlp.linear_fc2": (v, 2 * v)}
    for m in ("visual.merger", "visual.deepstack_merger_list.0"):
        shapes.update({f"{m}.linear_fc1": (4 * v, 4 * v), f"{m}.linear_fc2": (spec.hidden, 4 * v)})
    return shapes


def _siglip(spec: Spec) -> dict[str, tuple[int, int]]:
    """Gemma-3: SigLIP encoder block (its projector is a bare parameter, not a linear)."""
    v, p = spec.vision_hidden, "vision_tower.vision_model.encoder.layers.0"
    return {**{f"{p}.self_attn.{x}_proj": (v, v) for x in "qkv"}, f"{p}.self_attn.out_proj": (v, v),
            f"{p}.mlp.fc1": (2 * v, v), f"{p}.mlp.fc2": (v, 2 * v)}


def _step3_vision(spec: Spec) -> dict[str, tuple[int, int]]:
    """Step-3 (step3_vl.py): one encoder block, its qkv_proj stored fused, and the vit_large_projector over the
    downsampled features (2 x vision_config.output_hidden_size, which the family's config sets to 2 x vision_hidden)."""
    v, p = spec.vision_hidden, "vision_model.transformer.layers.0"
    return {f"{p}.self_attn.qkv_proj": (3 * v, v), f"{p}.self_attn.out_proj": (v, v), f"{p}.mlp.fc1": (2 * v, v),
            f"{p}.mlp.fc2": (v, 2 * v), "vit_large_projector": (spec.hidden, 4 * v)}


def _perception_encoder(spec: Spec) -> dict[str, tuple[int, int]]:
    """StepVL / Step-3.7 (step_vl.py PerceptionEncoder), OpenCLIP's names: the block's attn.in_proj_weight is no
    `.weight` linear (written BF16, as a tensor), out_proj and mlp.c_fc / c_proj are; vit_large_projector takes the
    4 x width downsampled features."""
    v, p = spec.vision_hidden, "vision_model.transformer.resblocks.0"
    return {f"{p}.attn.out_proj": (v, v), f"{p}.mlp.c_fc": (2 * v, v), f"{p}.mlp.c_proj": (v, 2 * v),
            "vit_large_projector": (spec.hidden, 4 * v)}


VISION_TOWERS = {"pixtral": _pixtral, "pixtral-mistral": _pixtral_mistral, "voxtral-mistral": _voxtral_mistral, "llama4": _llama4_vision, "qwen2_5_vl": _qwen2_5_vl, "qwen3_vl": _qwen3_vl,
                 "siglip": _siglip, "step3": _step3_vision, "perception_encoder": _perception_encoder}


def _step3_text(spec: Spec) -> dict[str, tuple[int, int]]:
    """Step-3 (step3_text.py, names as stepfun-ai/step3 saves them): attention q_proj (share_q_dim rows), one KV head
    of k_proj / v_proj, wq (share_q_dim -> heads x head_dim), o_proj; layers below first_k_dense a dense mlp, the
    others a MoE block `moe` (router moe.gate, experts per expert as fp8check reads the stacked moe.gate_proj [E, I, H]
    too) beside the layer's share_expert."""
    share_q = spec.extra_config.get("share_q_dim", spec.hd)
    shapes: dict[str, tuple[int, int]] = {}
    for i in range(spec.layers):
        p = f"{spec.text_prefix}.layers.{i}"
        shapes.update({f"{p}.self_attn.q_proj": (share_q, spec.hidden), f"{p}.self_attn.k_proj": (spec.hd, spec.hidden),
                       f"{p}.self_attn.v_proj": (spec.hd, spec.hidden),
                       f"{p}.self_attn.wq": (spec.heads * spec.hd, share_q),
                       f"{p}.self_attn.o_proj": (spec.hidden, spec.heads * spec.hd)})
        mlp, width = (f"{p}.mlp", spec.intermediate) if i < spec.first_k_dense else (f"{p}.share_expert",
                                                                                    spec.moe_intermediate)
        shapes.update({f"{mlp}.gate_proj": (width, spec.hidden), f"{mlp}.up_proj": (width, spec.hidden),
                       f"{mlp}.down_proj": (spec.hidden, width)})
        if i >= spec.first_k_dense:
            shapes[f"{p}.moe.gate"] = (spec.experts, spec.hidden)
            for e in range(spec.experts):
                shapes.update({f"{p}.moe.experts.{e}.gate_proj": (spec.moe_intermediate, spec.hidden),
                               f"{p}.moe.experts.{e}.up_proj": (spec.moe_intermediate, spec.hidden),
                               f"{p}.moe.experts.{e}.down_proj": (spec.hidden, spec.moe_intermediate)})
    return shapes


def _decilm_text(spec: Spec) -> dict[str, tuple[int, int]]:
    """Nemotron-NAS (DeciLM: Llama-3.x-Nemotron-Super / Ultra; remote code, no transformers class), Llama's names, one
    layer per extra_config["block_configs"] entry: no attention where attention.no_op (else num_attention_heads //
    n_heads_in_group KV heads), no MLP where ffn.no_op (else the width nemotron_nas.py reads: ffn_mult's
    int(2 * ffn_mult * hidden / 3) rounded up to a multiple of 256, or else ffn.intermediate_size)."""
    shapes: dict[str, tuple[int, int]] = {}
    for i, block in enumerate(spec.extra_config["block_configs"][: spec.layers]):
        p, attention, ffn = f"{spec.text_prefix}.layers.{i}", block["attention"], block["ffn"]
        if not attention.get("no_op"):
            kv = spec.heads // attention["n_heads_in_group"]
            shapes.update({f"{p}.self_attn.q_proj": (spec.heads * spec.hd, spec.hidden),
                           f"{p}.self_attn.k_proj": (kv * spec.hd, spec.hidden),
                           f"{p}.self_attn.v_proj": (kv * spec.hd, spec.hidden),
                           f"{p}.self_attn.o_proj": (spec.hidden, spec.heads * spec.hd)})
        if not ffn.get("no_op"):
            width = (-(-int(2 * ffn["ffn_mult"] * spec.hidden / 3) // 256) * 256 if "ffn_mult" in ffn
                     else ffn["intermediate_size"])
            shapes.update({f"{p}.mlp.gate_proj": (width, spec.hidden), f"{p}.mlp.up_proj": (width, spec.hidden),
                           f"{p}.mlp.down_proj": (spec.hidden, width)})
    return shapes


def _fused_decoder(spec: Spec, layers: str, qkv: str, o: str, gate_up: str, down: str) -> dict[str, tuple[int, int]]:
    """A decoder stored with q / k / v fused and gate / up fused: per layer <root>.<layers>.N, `qkv` of
    (heads + 2 x KV heads) x head_dim rows, `o`, `gate_up` of 2 x intermediate rows and `down`."""
    shapes: dict[str, tuple[int, int]] = {}
    for i in range(spec.layers):
        p = f"{spec.text_prefix}.{layers}.{i}"
        shapes.update({f"{p}.{qkv}": ((spec.heads + 2 * spec.kv_heads) * spec.hd, spec.hidden),
                       f"{p}.{o}": (spec.hidden, spec.heads * spec.hd),
                       f"{p}.{gate_up}": (2 * spec.intermediate, spec.hidden),
                       f"{p}.{down}": (spec.hidden, spec.intermediate)})
    return shapes


def _plamo3_text(spec: Spec) -> dict[str, tuple[int, int]]:
    """PLaMo-3 (remote code, no transformers class; plamo3.py loads the names as saved): model.layers.layers.N, the
    attention mixer's fused qkv_proj and o_proj, the MLP's fused gate_up_proj and down_proj."""
    return _fused_decoder(spec, "layers.layers", "mixer.qkv_proj", "mixer.o_proj", "mlp.gate_up_proj", "mlp.down_proj")


def _chatglm_text(spec: Spec) -> dict[str, tuple[int, int]]:
    """ChatGLM-2 / 3 and GLM-4-9B (remote code, vLLM's own ChatGLMConfig; chatglm.py loads the names as saved):
    <root>.encoder.layers.N, the attention's fused query_key_value and dense, the MLP's fused dense_h_to_4h (gate and
    up rows) and dense_4h_to_h; the embedding and output_layer as the Spec names them."""
    return _fused_decoder(spec, "encoder.layers", "self_attention.query_key_value", "self_attention.dense",
                          "mlp.dense_h_to_4h", "mlp.dense_4h_to_h")


def _telechat2_text(spec: Spec) -> dict[str, tuple[int, int]]:
    """TeleChat2 (remote code; telechat2.py's mapper renames the saved names): <root>.h.N, the attention's query and
    key_value (K and V interleaved head by head, one row block each: MHA, as telechat2.py's split reads n_head K / V
    heads) and dense, the MLP's gate_proj / up_proj / down_proj."""
    shapes: dict[str, tuple[int, int]] = {}
    for i in range(spec.layers):
        p = f"{spec.text_prefix}.h.{i}"
        shapes.update({f"{p}.self_attention.query": (spec.heads * spec.hd, spec.hidden),
                       f"{p}.self_attention.key_value": (2 * spec.heads * spec.hd, spec.hidden),
                       f"{p}.self_attention.dense": (spec.hidden, spec.heads * spec.hd),
                       f"{p}.mlp.gate_proj": (spec.intermediate, spec.hidden),
                       f"{p}.mlp.up_proj": (spec.intermediate, spec.hidden),
                       f"{p}.mlp.down_proj": (spec.hidden, spec.intermediate)})
    return shapes


def _domyn_edge_text(spec: Spec) -> dict[str, tuple[int, int]]:
    """Domyn-Edge (remote code; domyn_edge.py loads the names as saved): model.layers.N, the attention's q / k / v /
    o_proj under `attention` at each layer's head_dim (extra_config's per_layer_config overrides, transformers'
    heterogeneous config: {"<layer>": {"head_dim": ...}}; spec.hd elsewhere), the MLP's gate / up / down_proj under
    `feedforward`."""
    per_layer = spec.extra_config.get("per_layer_config", {})
    shapes: dict[str, tuple[int, int]] = {}
    for i in range(spec.layers):
        p, hd = f"{spec.text_prefix}.layers.{i}", per_layer.get(str(i), {}).get("head_dim", spec.hd)
        shapes.update({f"{p}.attention.q_proj": (spec.heads * hd, spec.hidden),
                       f"{p}.attention.k_proj": (spec.kv_heads * hd, spec.hidden),
                       f"{p}.attention.v_proj": (spec.kv_heads * hd, spec.hidden),
                       f"{p}.attention.o_proj": (spec.hidden, spec.heads * hd),
                       f"{p}.feedforward.gate_proj": (spec.intermediate, spec.hidden),
                       f"{p}.feedforward.up_proj": (spec.intermediate, spec.hidden),
                       f"{p}.feedforward.down_proj": (spec.hidden, spec.intermediate)})
    return shapes


HAND_NAMED = {"step3": _step3_text, "decilm": _decilm_text, "plamo3": _plamo3_text, "chatglm": _chatglm_text,
              "telechat2": _telechat2_text, "domyn_edge": _domyn_edge_text}


def kimi_k3_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """A Kimi-K3 / K3.1 checkpoint's linear and convolution weights under Moonshot's names, from its config.json
    (`config`: text_config a KimiLinearConfig, vision_config a KimiK3VisionConfig; transformers has no class for it):
    text layers under language_model.layers. (vLLM's hf_to_vllm_mapper moves them under language_model.model.), KDA
    layers with the full-rank gate, q-LoRA MLA with its output gate (dsa_config's layers: their indexer), a dense
    MLP below first_k_dense_replace and latent MoE above, attention-residual projections, the MTP layers, and a
    one-block MoonViT tower with its projector. For Spec.extra_tensors (layers=0)."""
    text, vision = config["text_config"], config["vision_config"]
    h, kda, heads = text["hidden_size"], text["linear_attn_config"], text["num_attention_heads"]
    proj, head_dim = kda["num_heads"] * kda["head_dim"], kda["head_dim"]
    q_lora, kv = text["q_lora_rank"], text["kv_lora_rank"] + text["qk_rope_head_dim"]
    qk_head, v_head = text["qk_nope_head_dim"] + text["qk_rope_head_dim"], text["v_head_dim"]
    dsa = text.get("dsa_config") or {}
    latent, inter = text.get("routed_expert_hidden_size") or h, text["moe_intermediate_size"]
    out: dict[str, tuple[int, ...]] = {}
    for i in range(text["num_hidden_layers"] + text.get("num_nextn_predict_layers", 0)):
        a, m = f"language_model.layers.{i}.self_attn", f"language_model.layers.{i}.block_sparse_moe"
        if i + 1 in kda["kda_layers"]:
            out.update({f"{a}.{leaf}.weight": (proj, h) for leaf in ("q_proj", "k_proj", "v_proj", "g_proj")})
            out.update({f"{a}.f_a_proj.weight": (head_dim, h), f"{a}.b_proj.weight": (kda["num_heads"], h),
                        f"{a}.f_b_proj.weight": (proj, head_dim), f"{a}.o_proj.weight": (h, proj)})
            out.update({f"{a}.{c}_conv1d.weight": (proj, 1, kda["short_conv_kernel_size"]) for c in "qkv"})
        else:
            out.update({f"{a}.q_a_proj.weight": (q_lora, h), f"{a}.q_b_proj.weight": (heads * qk_head, q_lora),
                        f"{a}.kv_a_proj_with_mqa.weight": (kv, h),
                        f"{a}.kv_b_proj.weight": (heads * (text["qk_nope_head_dim"] + v_head), text["kv_lora_rank"]),
                        f"{a}.g_proj.weight": (heads * v_head, h), f"{a}.o_proj.weight": (h, heads * v_head)})
            if i + 1 in dsa.get("dsa_layers", ()):
                index = dsa["index_head_dim"]
                out.update({f"{a}.indexer.wq_b.weight": (dsa["index_num_heads"] * index, q_lora),
                            f"{a}.indexer.wk.weight": (index, h),
                            f"{a}.indexer.weights_proj.weight": (dsa["index_num_heads"], h)})
        if text.get("attn_res_block_size"):
            out.update({f"language_model.layers.{i}.{res}.weight": (1, h)
                        for res in ("self_attention_res_proj", "mlp_res_proj")})
        if i < text["first_k_dense_replace"]:
            mlp, dense = f"language_model.layers.{i}.mlp", text["intermediate_size"]
            out.update({f"{mlp}.gate_proj.weight": (dense, h), f"{mlp}.up_proj.weight": (dense, h),
                        f"{mlp}.down_proj.weight": (h, dense)})
            continue
        shared = inter * text["num_shared_experts"]
        out.update({f"{m}.gate.weight": (text["num_experts"], h), f"{m}.shared_experts.gate_proj.weight": (shared, h),
                    f"{m}.shared_experts.up_proj.weight": (shared, h),
                    f"{m}.shared_experts.down_proj.weight": (h, shared)})
        if text.get("routed_expert_hidden_size"):
            out.update({f"{m}.routed_expert_down_proj.weight": (latent, h),
                        f"{m}.routed_expert_up_proj.weight": (h, latent)})
        for e in range(text["num_experts"]):
            out.update({f"{m}.experts.{e}.w1.weight": (inter, latent), f"{m}.experts.{e}.w3.weight": (inter, latent),
                        f"{m}.experts.{e}.w2.weight": (latent, inter)})
    if text.get("attn_res_block_size"):
        out["language_model.model.output_attn_res_proj.weight"] = (1, h)
    v, merged = vision["vt_hidden_size"], vision["vt_hidden_size"] * 4  # the 2 x 2 patch merger's width
    block = "vision_tower.encoder.blocks.0"
    qkv = vision.get("qkv_hidden_size", 1536)  # KimiK3VisionConfig's default
    out.update({f"{block}.wqkv.weight": (3 * qkv, v), f"{block}.wo.weight": (v, qkv),
                f"{block}.mlp.fc0.weight": (vision["vt_intermediate_size"], v),
                f"{block}.mlp.fc1.weight": (v, vision["vt_intermediate_size"]),
                "vision_tower.patch_embed.proj.weight": (v, 3, vision["patch_size"], vision["patch_size"]),
                "mm_projector.proj.0.weight": (merged, merged), "mm_projector.proj.2.weight": (h, merged)})
    return out


def alice_ai_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """An AliceAI checkpoint's linear and convolution weights under the names vLLM's alice_ai.py loads, from its
    config.json (transformers has no class for it): per config.layer_types a KDA layer (linear_attn.q / k / v /
    b / f_a / f_b / g_a / g_b / o_proj, q / k / v_conv1d) or gated full attention (self_attn.q_proj twice the heads'
    width, k / v / o_proj), a Qwen-style MoE on every layer (mlp.gate, shared_expert_gate, shared_expert, experts)
    and the attention-residual projections (attn_res_proj from layer 1, mlp_res_proj, model.attnres_final.res_proj).
    For Spec.extra_tensors (layers=0)."""
    h, heads, kv = config["hidden_size"], config["num_attention_heads"], config["num_key_value_heads"]
    head_dim, kda_heads, kda_dim = config["head_dim"], config["linear_num_key_heads"], config["linear_key_head_dim"]
    proj, inter = kda_heads * kda_dim, config["moe_intermediate_size"]
    shared = config["shared_expert_intermediate_size"]
    out: dict[str, tuple[int, ...]] = {"model.attnres_final.res_proj.weight": (1, h)}
    for i, kind in enumerate(config["layer_types"]):
        p = f"model.layers.{i}"
        if kind == "linear_attention":
            a = f"{p}.linear_attn"
            out.update({f"{a}.{leaf}.weight": (proj, h) for leaf in ("q_proj", "k_proj", "v_proj")})
            out.update({f"{a}.b_proj.weight": (kda_heads, h), f"{a}.f_a_proj.weight": (kda_dim, h),
                        f"{a}.g_a_proj.weight": (kda_dim, h), f"{a}.f_b_proj.weight": (proj, kda_dim),
                        f"{a}.g_b_proj.weight": (proj, kda_dim), f"{a}.o_proj.weight": (h, proj)})
            out.update({f"{a}.{c}_conv1d.weight": (proj, 1, config["linear_conv_kernel_dim"]) for c in "qkv"})
        else:
            a = f"{p}.self_attn"
            out.update({f"{a}.q_proj.weight": (2 * heads * head_dim, h), f"{a}.k_proj.weight": (kv * head_dim, h),
                        f"{a}.v_proj.weight": (kv * head_dim, h), f"{a}.o_proj.weight": (h, heads * head_dim)})
        if i:
            out[f"{p}.attn_res_proj.weight"] = (1, h)
        m = f"{p}.mlp"
        out.update({f"{p}.mlp_res_proj.weight": (1, h), f"{m}.gate.weight": (config["num_experts"], h),
                    f"{m}.shared_expert_gate.weight": (1, h)})
        out.update({f"{m}.shared_expert.{leaf}.weight": (shared, h) for leaf in ("gate_proj", "up_proj")})
        out[f"{m}.shared_expert.down_proj.weight"] = (h, shared)
        for e in range(config["num_experts"]):
            out.update({f"{m}.experts.{e}.gate_proj.weight": (inter, h), f"{m}.experts.{e}.up_proj.weight": (inter, h),
                        f"{m}.experts.{e}.down_proj.weight": (h, inter)})
    return out

def k2_horizon_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """A K2-Horizon checkpoint's linear weights under the names vLLM's k2_horizon.py loads, from its config.json
    (neither transformers nor vLLM has a config class for it): per layer the attention (q / k / o_proj and, with
    attention_gate_func, gate_proj; v_proj on dense layers, MoVA's v_router and v_experts.<i> on the sparse ones) and
    a dense MLP (layers in mlp_only_layers or off decoder_sparse_step) or the MoE (mlp.gate, shared_experts, experts).
    For Spec.extra_tensors (layers=0)."""
    h, heads, kv = config["hidden_size"], config["num_attention_heads"], config["num_key_value_heads"]
    head_dim, experts, inter = config["head_dim"], config["num_experts"], config["moe_intermediate_size"]
    out: dict[str, tuple[int, ...]] = {}
    for i in range(config["num_hidden_layers"]):
        a, m = f"model.layers.{i}.self_attn", f"model.layers.{i}.mlp"
        sparse = (i not in config.get("mlp_only_layers", []) and experts > 0
                  and (i + 1) % config["decoder_sparse_step"] == 0)
        out.update({f"{a}.q_proj.weight": (heads * head_dim, h), f"{a}.k_proj.weight": (kv * head_dim, h),
                    f"{a}.o_proj.weight": (h, heads * head_dim)})
        if config.get("attention_gate_func"):
            out[f"{a}.gate_proj.weight"] = (heads * head_dim, h)
        if sparse and config["mova_num_experts"] > 0:
            out[f"{a}.v_router.weight"] = (config["mova_num_experts"], h)
            out.update({f"{a}.v_experts.{e}.weight": (kv * head_dim, h) for e in range(config["mova_num_experts"])})
        else:
            out[f"{a}.v_proj.weight"] = (kv * head_dim, h)
        if not sparse:
            out.update({f"{m}.gate_proj.weight": (config["intermediate_size"], h),
                        f"{m}.up_proj.weight": (config["intermediate_size"], h),
                        f"{m}.down_proj.weight": (h, config["intermediate_size"])})
            continue
        out[f"{m}.gate.weight"] = (experts, h)
        shared = inter * config["num_shared_experts"]
        if shared:
            out.update({f"{m}.shared_experts.{leaf}.weight": (shared, h) for leaf in ("gate_proj", "up_proj")})
            out[f"{m}.shared_experts.down_proj.weight"] = (h, shared)
        for e in range(experts):
            out.update({f"{m}.experts.{e}.gate_proj.weight": (inter, h), f"{m}.experts.{e}.up_proj.weight": (inter, h),
                        f"{m}.experts.{e}.down_proj.weight": (h, inter)})
    return out


def internlm2_tensors(config: dict, root: str = "model") -> dict[str, tuple[int, ...]]:
    """An InternLM2 text model's decoder layers under the hub's remote-code names (transformers has no class for
    internlm2), from its config (config.json, or an InternVL config's llm_config): per layer attention.wqkv (q, k and
    v stored fused, head size hidden_size // heads), attention.wo, feed_forward.w1 / w3 / w2 and the attention_norm /
    ffn_norm weights, under `root`. For Spec.extra_tensors (layers=0; Spec.embedding / head name the rest)."""
    h, heads, inter = config["hidden_size"], config["num_attention_heads"], config["intermediate_size"]
    head_dim, kv = h // heads, config.get("num_key_value_heads") or heads
    out: dict[str, tuple[int, ...]] = {}
    for i in range(config["num_hidden_layers"]):
        p = f"{root}.layers.{i}"
        out.update({f"{p}.attention.wqkv.weight": ((heads + 2 * kv) * head_dim, h),
                    f"{p}.attention.wo.weight": (h, heads * head_dim), f"{p}.feed_forward.w1.weight": (inter, h),
                    f"{p}.feed_forward.w3.weight": (inter, h), f"{p}.feed_forward.w2.weight": (h, inter),
                    f"{p}.attention_norm.weight": (h,), f"{p}.ffn_norm.weight": (h,)})
    return out


def moonvit_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """A Kimi-VL checkpoint's MoonViT tower and projector (moonvit.py MoonVitPretrainedModel and kimi_vl.py
    KimiVLMultiModalProjector, under the names vLLM loads as saved), from its config.json: vision_tower.patch_embed
    (the patch convolution, the learned init_pos_emb_height x width position table), per vision_config layer the
    encoder block's norm0 / norm1, wqkv (stored fused) and wo with biases, mlp.fc0 / fc1; the encoder's
    final_layernorm; then multi_modal_projector's pre_norm and linear_1 / linear_2 over the merge_kernel_size-merged
    features. For Spec.extra_tensors."""
    vision, h = config["vision_config"], config["text_config"]["hidden_size"]
    v, inter, patch = vision["hidden_size"], vision["intermediate_size"], vision["patch_size"]
    e = "vision_tower.patch_embed"
    out: dict[str, tuple[int, ...]] = {f"{e}.proj.weight": (v, 3, patch, patch), f"{e}.proj.bias": (v,),
                                       f"{e}.pos_emb.weight": (vision["init_pos_emb_height"],
                                                               vision["init_pos_emb_width"], v)}
    for i in range(vision["num_hidden_layers"]):
        p = f"vision_tower.encoder.blocks.{i}"
        out.update({f"{p}.norm0.weight": (v,), f"{p}.norm0.bias": (v,), f"{p}.norm1.weight": (v,),
                    f"{p}.norm1.bias": (v,), f"{p}.wqkv.weight": (3 * v, v), f"{p}.wqkv.bias": (3 * v,),
                    f"{p}.wo.weight": (v, v), f"{p}.wo.bias": (v,), f"{p}.mlp.fc0.weight": (inter, v),
                    f"{p}.mlp.fc0.bias": (inter,), f"{p}.mlp.fc1.weight": (v, inter), f"{p}.mlp.fc1.bias": (v,)})
    merged = v * vision["merge_kernel_size"][0] * vision["merge_kernel_size"][1]
    out.update({"vision_tower.encoder.final_layernorm.weight": (v,), "vision_tower.encoder.final_layernorm.bias": (v,),
                "multi_modal_projector.pre_norm.weight": (v,), "multi_modal_projector.pre_norm.bias": (v,),
                "multi_modal_projector.linear_1.weight": (merged, merged),
                "multi_modal_projector.linear_1.bias": (merged,),
                "multi_modal_projector.linear_2.weight": (h, merged), "multi_modal_projector.linear_2.bias": (h,)})
    return out


def intern_vit_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """An InternVL remote-code checkpoint's vision tower and projector (modeling_intern_vit.py's names, which vLLM's
    intern_vit.py loads as saved), from its config.json: vision_model.embeddings (class / position embeddings, the
    patch convolution), per vision_config layer attn.qkv (stored fused, with a bias where qkv_bias), the q / k norms
    where qk_normalization, attn.proj, mlp.fc1 / fc2 (biased), norm1 / norm2 and the layer scales ls1 / ls2; then
    mlp1 (a LayerNorm over the pixel-shuffled features, 1 / downsample_ratio squared vision widths, linears 1 and 3 to
    the text model's width). For Spec.extra_tensors."""
    vision, text = config["vision_config"], config["llm_config"]
    v, inter, patch = vision["hidden_size"], vision["intermediate_size"], vision["patch_size"]
    positions = (vision["image_size"] // patch) ** 2 + 1
    e = "vision_model.embeddings"
    out: dict[str, tuple[int, ...]] = {f"{e}.class_embedding": (1, 1, v), f"{e}.position_embedding": (1, positions, v),
                                       f"{e}.patch_embedding.weight": (v, 3, patch, patch),
                                       f"{e}.patch_embedding.bias": (v,)}
    for i in range(vision["num_hidden_layers"]):
        p = f"vision_model.encoder.layers.{i}"
        out.update({f"{p}.attn.qkv.weight": (3 * v, v), f"{p}.attn.proj.weight": (v, v), f"{p}.attn.proj.bias": (v,),
                    f"{p}.mlp.fc1.weight": (inter, v), f"{p}.mlp.fc1.bias": (inter,), f"{p}.mlp.fc2.weight": (v, inter),
                    f"{p}.mlp.fc2.bias": (v,), f"{p}.norm1.weight": (v,), f"{p}.norm2.weight": (v,),
                    f"{p}.ls1": (v,), f"{p}.ls2": (v,)})
        if vision.get("qkv_bias"):
            out[f"{p}.attn.qkv.bias"] = (3 * v,)
        if vision.get("qk_normalization"):
            out.update({f"{p}.attn.q_norm.weight": (v,), f"{p}.attn.k_norm.weight": (v,)})
        if vision.get("norm_type") == "layer_norm":
            out.update({f"{p}.norm1.bias": (v,), f"{p}.norm2.bias": (v,)})
    shuffled, h = v * int(1 / config["downsample_ratio"]) ** 2, text["hidden_size"]
    out.update({"mlp1.0.weight": (shuffled,), "mlp1.0.bias": (shuffled,), "mlp1.1.weight": (h, shuffled),
                "mlp1.1.bias": (h,), "mlp1.3.weight": (h, h), "mlp1.3.bias": (h,)})
    return out


def minicpmv_vision_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """A MiniCPM-V checkpoint's tower and resampler (openbmb's remote-code names, which vLLM's minicpmv.py loads as
    saved), from its config.json: vpm., transformers' Idefics2 / SigLIP vision transformer (patch and position
    embeddings, per vision_config layer self_attn q / k / v / out_proj and mlp fc1 / fc2 with biases, layer_norm1 / 2,
    post_layernorm), and resampler. (query_num learnable queries, kv_proj from the vision width to hidden_size,
    nn.MultiheadAttention's in_proj_weight / in_proj_bias / out_proj, ln_q / ln_kv / ln_post and the output proj).
    For Spec.extra_tensors."""
    vision, h = config["vision_config"], config["hidden_size"]
    v, inter, patch = vision["hidden_size"], vision["intermediate_size"], vision["patch_size"]
    e = "vpm.embeddings"
    out: dict[str, tuple[int, ...]] = {f"{e}.patch_embedding.weight": (v, 3, patch, patch),
                                       f"{e}.patch_embedding.bias": (v,),
                                       f"{e}.position_embedding.weight": ((vision["image_size"] // patch) ** 2, v),
                                       "vpm.post_layernorm.weight": (v,), "vpm.post_layernorm.bias": (v,)}
    out.update(_vit_encoder_layers("vpm", vision["num_hidden_layers"], v, inter))
    r = "resampler"
    out.update({f"{r}.query": (config["query_num"], h), f"{r}.proj": (h, h), f"{r}.kv_proj.weight": (h, v),
                f"{r}.attn.in_proj_weight": (3 * h, h), f"{r}.attn.in_proj_bias": (3 * h,),
                f"{r}.attn.out_proj.weight": (h, h), f"{r}.attn.out_proj.bias": (h,)})
    out.update({f"{r}.{norm}.{param}": (h,) for norm in ("ln_q", "ln_kv", "ln_post") for param in ("weight", "bias")})
    return out


def minicpmo_audio_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """A MiniCPM-o checkpoint's audio tower and projection (openbmb's names, which vLLM's minicpmo.py loads as saved),
    from its config.json's audio_config (a WhisperConfig) and hidden_size: apm., transformers' Whisper encoder (conv1 /
    conv2, embed_positions, per encoder layer self_attn q / v / out_proj with biases and k_proj without, fc1 / fc2,
    self_attn_layer_norm / final_layer_norm; layer_norm), and audio_projection_layer.linear1 / linear2 from a quarter
    of the encoder's FFN width. For Spec.extra_tensors."""
    audio, h = config["audio_config"], config["hidden_size"]
    d, ffn = audio["d_model"], audio["encoder_ffn_dim"]
    out: dict[str, tuple[int, ...]] = {"apm.conv1.weight": (d, audio["num_mel_bins"], 3), "apm.conv1.bias": (d,),
                                       "apm.conv2.weight": (d, d, 3), "apm.conv2.bias": (d,),
                                       "apm.embed_positions.weight": (audio["max_source_positions"], d),
                                       "apm.layer_norm.weight": (d,), "apm.layer_norm.bias": (d,)}
    for i in range(audio["encoder_layers"]):
        p = f"apm.layers.{i}"
        for leaf, rows, cols, bias in (("self_attn.q_proj", d, d, True), ("self_attn.k_proj", d, d, False),
                                       ("self_attn.v_proj", d, d, True), ("self_attn.out_proj", d, d, True),
                                       ("fc1", ffn, d, True), ("fc2", d, ffn, True)):
            out[f"{p}.{leaf}.weight"] = (rows, cols)
            out.update({f"{p}.{leaf}.bias": (rows,)} if bias else {})
        out.update({f"{p}.{norm}.{param}": (d,) for norm in ("self_attn_layer_norm", "final_layer_norm")
                    for param in ("weight", "bias")})
    out.update({"audio_projection_layer.linear1.weight": (h, ffn // 4), "audio_projection_layer.linear1.bias": (h,),
                "audio_projection_layer.linear2.weight": (h, h), "audio_projection_layer.linear2.bias": (h,)})
    return out


def ovis2_5_vision_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """An Ovis2.5 checkpoint's visual tokenizer and visual embedding (AIDC-AI's remote-code names, which vLLM's
    ovis2_5.py loads as saved), from its config.json: visual_tokenizer.vit.vision_model, a SigLIP-2 NaViT (a patch
    embedding, a linear over flattened patches where vit_config.num_patches > 0, else a convolution; per vit_config
    layer self_attn q / k / v / out_proj and mlp fc1 / fc2 with biases, layer_norm1 / 2; post_layernorm), the head
    (head.0 from hidden_stride squared vision widths to visual_vocab_size - 4, head.1 a LayerNorm) and vte
    (visual_vocab_size x hidden_size). For Spec.extra_tensors."""
    vision, vocab = config["vit_config"], config["visual_vocab_size"]
    v, inter, patch = vision["hidden_size"], vision["intermediate_size"], vision["patch_size"]
    e = "visual_tokenizer.vit.vision_model"
    pixels = vision.get("num_channels", 3) * patch * patch * vision.get("temporal_patch_size", 1)
    out: dict[str, tuple[int, ...]] = {
        f"{e}.embeddings.patch_embedding.weight": (v, pixels) if vision["num_patches"] > 0 else (v, 3, patch, patch),
        f"{e}.embeddings.patch_embedding.bias": (v,), f"{e}.post_layernorm.weight": (v,),
        f"{e}.post_layernorm.bias": (v,)}
    out.update(_vit_encoder_layers(e, vision["num_hidden_layers"], v, inter))
    merged, head = v * vision["hidden_stride"] ** 2, vocab - 4
    out.update({"visual_tokenizer.head.0.weight": (head, merged), "visual_tokenizer.head.1.weight": (head,),
                "visual_tokenizer.head.1.bias": (head,), "vte.weight": (vocab, config["hidden_size"])})
    return out


def ovis_aimv2_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """An Ovis2 checkpoint's visual tokenizer and visual embedding (AIDC-AI's remote-code names, which vLLM's ovis.py
    loads as saved), from its config.json: visual_tokenizer.backbone, an AIMv2 ViT (the patchifier's convolution and
    RMS norm, pos_embed; per backbone_config layer attn.qkv stored fused, attn.proj, mlp fc1 / fc3 / fc2, norm_1 /
    norm_2; trunk.post_trunk_norm), the head (head.0 from hidden_stride squared vision widths to vocab_size - 5,
    head.1 a LayerNorm) and vte (vocab_size x hidden_size). For Spec.extra_tensors."""
    tokenizer = config["visual_tokenizer_config"]
    vision, vocab = tokenizer["backbone_config"], tokenizer["vocab_size"]
    v, inter, patch = vision["hidden_size"], vision["intermediate_size"], vision["patch_size"]
    b = "visual_tokenizer.backbone"
    out: dict[str, tuple[int, ...]] = {
        f"{b}.preprocessor.patchifier.proj.weight": (v, 3, patch, patch),
        f"{b}.preprocessor.patchifier.proj.bias": (v,), f"{b}.preprocessor.patchifier.norm.weight": (v,),
        f"{b}.preprocessor.pos_embed": (1, (vision["image_size"] // patch) ** 2, v),
        f"{b}.trunk.post_trunk_norm.weight": (v,)}
    for i in range(vision["num_hidden_layers"]):
        p = f"{b}.trunk.blocks.{i}"
        out.update({f"{p}.attn.qkv.weight": (3 * v, v), f"{p}.attn.proj.weight": (v, v),
                    f"{p}.mlp.fc1.weight": (inter, v), f"{p}.mlp.fc3.weight": (inter, v),
                    f"{p}.mlp.fc2.weight": (v, inter), f"{p}.norm_1.weight": (v,), f"{p}.norm_2.weight": (v,)})
    head = vocab - 5
    out.update({"visual_tokenizer.head.0.weight": (head, v * tokenizer["hidden_stride"] ** 2),
                "visual_tokenizer.head.1.weight": (head,), "visual_tokenizer.head.1.bias": (head,),
                "vte.weight": (vocab, config["hidden_size"])})
    return out


def phi4mm_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """A Phi-4-multimodal checkpoint's tensors (microsoft's remote-code names, which vLLM's phi4mm.py maps), from its
    config.json, for a spec written wholly by hand (layers 0, tied embeddings): per text layer the LoRA-wrapped
    self_attn.qkv_proj / o_proj and mlp.gate_up_proj / down_proj (`<linear>.base_layer.weight` beside rank-r
    lora_A / lora_B adapters for speech and vision) and the layer norms; under model.embed_tokens_extend.image_embed the
    fixed SigLIP NaViT (27 layers of 1152, 4304 wide, 16 heads, patch 14 over 448: phi4mm.py get_navit_vision_model),
    the HD separators and img_projection.0 / .2; under audio_embed the conformer of audio_processor.config (its
    input convolutions and embed.out, the relative-attention bias table, per block the feed-forwards' net.0.linear /
    net.2, self_attn linear_q / k / v / out, the convolution module) and audio_projection speech / vision .0 / .2."""
    h, inter, heads, kv = (config[k] for k in ("hidden_size", "intermediate_size", "num_attention_heads",
                                                "num_key_value_heads"))
    head_dim, rank = h // heads, 32
    out: dict[str, tuple[int, ...]] = {}
    for i in range(config["num_hidden_layers"]):
        p = f"model.layers.{i}"
        for leaf, rows, cols in (("self_attn.qkv_proj", (heads + 2 * kv) * head_dim, h), ("self_attn.o_proj", h, h),
                                 ("mlp.gate_up_proj", 2 * inter, h), ("mlp.down_proj", h, inter)):
            out[f"{p}.{leaf}.base_layer.weight"] = (rows, cols)
            for adapter in ("speech", "vision"):
                out.update({f"{p}.{leaf}.lora_A.{adapter}.weight": (rank, cols),
                            f"{p}.{leaf}.lora_B.{adapter}.weight": (rows, rank)})
        out.update({f"{p}.input_layernorm.weight": (h,), f"{p}.post_attention_layernorm.weight": (h,)})
    image, v, v_inter = "model.embed_tokens_extend.image_embed", 1152, 4304
    vit = f"{image}.img_processor"
    out.update({f"{vit}.embeddings.patch_embedding.weight": (v, 3, 14, 14),
                f"{vit}.embeddings.patch_embedding.bias": (v,),
                f"{vit}.embeddings.position_embedding.weight": (1024, v), f"{vit}.post_layernorm.weight": (v,),
                f"{vit}.post_layernorm.bias": (v,), f"{image}.glb_GN": (1, 1, v), f"{image}.sub_GN": (1, 1, 1, v),
                f"{image}.img_projection.0.weight": (h, v), f"{image}.img_projection.0.bias": (h,),
                f"{image}.img_projection.2.weight": (h, h), f"{image}.img_projection.2.bias": (h,)})
    out.update(_vit_encoder_layers(vit, 27, v, v_inter))
    audio = config["audio_processor"]["config"]
    a, ffn, channels = audio["attention_dim"], audio["linear_units"], audio["nemo_conv_settings"]["conv_channels"]
    enc = "model.embed_tokens_extend.audio_embed.encoder"
    out.update({f"{enc}.embed.out.weight": (a, channels * (audio["input_size"] // audio["time_reduction"])),
                f"{enc}.embed.out.bias": (a,), f"{enc}.embed.conv.0.weight": (channels, 1, 3, 3),
                f"{enc}.relative_attention_bias_layer.bias_values.weight": (1000, audio["attention_heads"])})
    for i in range(audio["num_blocks"]):
        block = f"{enc}.encoders.{i}"
        for leaf, rows, cols in (("feed_forward_in.net.0.linear", 2 * ffn, a), ("feed_forward_in.net.2", a, ffn),
                                 ("self_attn.linear_q", a, a), ("self_attn.linear_k", a, a),
                                 ("self_attn.linear_v", a, a), ("self_attn.linear_out", a, a),
                                 ("feed_forward_out.net.0.linear", 2 * ffn, a), ("feed_forward_out.net.2", a, ffn)):
            out.update({f"{block}.{leaf}.weight": (rows, cols), f"{block}.{leaf}.bias": (rows,)})
        out.update({f"{block}.conv.glu.ext_pw_conv_1d.weight": (2 * a, a, 1),
                    f"{block}.conv.dw_sep_conv_1d.dw_conv.weight": (a, 1, 3), f"{block}.layer_norm.weight": (a,)})
    projection = "model.embed_tokens_extend.audio_embed.audio_projection"
    for kind in ("speech", "vision"):
        out.update({f"{projection}.{kind}.0.weight": (h, a), f"{projection}.{kind}.0.bias": (h,),
                    f"{projection}.{kind}.2.weight": (h, h), f"{projection}.{kind}.2.bias": (h,)})
    return out


def phi4v_vision_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """A Phi-4 vision checkpoint's tower and projector (the names vLLM's phi4siglip.py maps), from its config.json:
    model.vision_tower.vision_tower.vision_model, a SigLIP-2 (a linear patch embedding over patch x patch x 3 pixels,
    the position table, per vision_config layer self_attn q / k / v / out_proj and mlp fc1 / fc2 with biases,
    layer_norm1 / 2; post_layernorm; the attention-pooling head: probe, attention in_proj / out_proj, layernorm, mlp),
    and model.mm_projector.0 / .2 from mm_hidden_size to hidden_size. For Spec.extra_tensors."""
    vision, h = config["vision_config"], config["hidden_size"]
    v, inter, patch = vision["hidden_size"], vision["intermediate_size"], vision["patch_size"]
    e = "model.vision_tower.vision_tower.vision_model"
    out: dict[str, tuple[int, ...]] = {
        f"{e}.embeddings.patch_embedding.weight": (v, 3 * patch * patch), f"{e}.embeddings.patch_embedding.bias": (v,),
        f"{e}.embeddings.position_embedding.weight": (vision["num_patches"], v), f"{e}.post_layernorm.weight": (v,),
        f"{e}.post_layernorm.bias": (v,), f"{e}.head.probe": (1, 1, v),
        f"{e}.head.attention.in_proj_weight": (3 * v, v),
        f"{e}.head.attention.out_proj.weight": (v, v), f"{e}.head.layernorm.weight": (v,),
        f"{e}.head.mlp.fc1.weight": (inter, v), f"{e}.head.mlp.fc2.weight": (v, inter)}
    out.update(_vit_encoder_layers(e, vision["num_hidden_layers"], v, inter))
    out.update({"model.mm_projector.0.weight": (h, config["mm_hidden_size"]), "model.mm_projector.0.bias": (h,),
                "model.mm_projector.2.weight": (h, h), "model.mm_projector.2.bias": (h,)})
    return out


def bailing_tensors(config: dict) -> dict[str, tuple[int, ...]]:
    """A Ling / Ring checkpoint's tensors under inclusionAI's names, from its config.json (transformers has no class
    for bailing_moe / bailing_moe_v2): model.word_embeddings, per layer attention.query_key_value (q, k, v stored
    fused) and attention.dense, the q / k norms where use_qk_norm, a dense mlp below first_k_dense_replace and else
    the MoE: mlp.gate (with its expert_bias where moe_router_enable_expert_bias), mlp.experts.E.{gate,up,down}_proj
    and the shared experts (moe_shared_expert_intermediate_size, else moe_intermediate_size, x num_shared_experts);
    model.norm and lm_head. With layer_group_size (Ling / Ring 2.5), every layer_group_size-th layer is MLA
    (attention.q_proj or q_a_proj / q_b_proj, kv_a_proj_with_mqa, kv_b_proj, dense) and the others linear attention
    (query_key_value over num_attention_heads for q, k and v alike, g_proj, dense); num_nextn_predict_layers MTP
    layers follow (eh_proj and a layer like the others). For Spec.extra_tensors (layers=0)."""
    h, heads, kv, experts = (config[k] for k in ("hidden_size", "num_attention_heads", "num_key_value_heads",
                                                  "num_experts"))
    head_dim = config.get("head_dim") or h // heads
    inter, dense = config["moe_intermediate_size"], config["intermediate_size"]
    shared = config.get("moe_shared_expert_intermediate_size", inter) * config.get("num_shared_experts", 0)
    out: dict[str, tuple[int, ...]] = {"model.word_embeddings.weight": (config["vocab_size"], h),
                                       "model.norm.weight": (h,), "lm_head.weight": (config["vocab_size"], h)}
    group, layers = config.get("layer_group_size"), config["num_hidden_layers"]
    for i in range(layers + (config.get("num_nextn_predict_layers", 0) if group else 0)):
        p = f"model.layers.{i}"
        out.update({f"{p}.input_layernorm.weight": (h,), f"{p}.post_attention_layernorm.weight": (h,)})
        if i >= layers:
            out.update({f"{p}.eh_proj.weight": (h, 2 * h), f"{p}.enorm.weight": (h,), f"{p}.hnorm.weight": (h,)})
        if group and (i + 1) % group == 0:
            out.update(_bailing_mla(config, f"{p}.attention"))
        else:
            qkv = (3 * heads if group else heads + 2 * kv) * head_dim  # 2.5's linear attention: as many KV heads
            out.update({f"{p}.attention.query_key_value.weight": (qkv, h),
                        f"{p}.attention.dense.weight": (h, heads * head_dim)})
            if group:
                out[f"{p}.attention.g_proj.weight"] = (heads * head_dim, h)
        if config.get("use_qk_norm") and f"{p}.attention.query_key_value.weight" in out:
            out.update({f"{p}.attention.{norm}.weight": (head_dim,) for norm in ("query_layernorm", "key_layernorm")})
        mlps = {f"{p}.mlp": dense} if i < config.get("first_k_dense_replace", 0) else {
            **{f"{p}.mlp.experts.{e}": inter for e in range(experts)}, **({f"{p}.mlp.shared_experts": shared}
                                                                         if shared else {})}
        for mlp, width in mlps.items():
            out.update({f"{mlp}.gate_proj.weight": (width, h), f"{mlp}.up_proj.weight": (width, h),
                        f"{mlp}.down_proj.weight": (h, width)})
        if i >= config.get("first_k_dense_replace", 0):
            out[f"{p}.mlp.gate.weight"] = (experts, h)
            if config.get("moe_router_enable_expert_bias"):
                out[f"{p}.mlp.gate.expert_bias"] = (experts,)
    return out


def inkling_tensors(config: dict, root: str = "model.llm.") -> dict[str, tuple[int, ...]]:
    """An Inkling checkpoint's decoder layers under Thinking Machines' names (what transformers 5.24's
    InklingForConditionalGeneration saves, its conversion reverted: model.llm.layers.N; a text checkpoint's
    model.layers.N with root "model."), from vLLM's text config keys (`config`: vllm/models/inkling/configs.py
    InklingModelConfig's), towers left out; the embedding, final norm and LM head are synth's own (model.embed_tokens,
    model.norm, lm_head: names the model's mapper keeps). Per layer: attn.wq_du / wk_dv / wv_dv / wr_du (the relative
    branch, d_rel per head) / wo_ud, local_layer_ids' layers taking the swa_* heads, per-head q / k norms, K / V and
    residual-stream short convolutions, rel_logits_proj; below dense_mlp_idx a dense MLP stored fused and interleaved
    (mlp.w13_dn) with mlp.w2_md, else the sigmoid router over routed + shared experts (mlp.gate), the routed experts
    one per expert and the shared sink experts stacked (shared_experts.shared_w13_weight [S, 2I, H]). For
    Spec.extra_tensors (layers=0)."""
    h, kernel, d_rel = config["hidden_size"], config.get("sconv_kernel_size", 4), config.get("d_rel", 16)
    inter = config["intermediate_size"]
    dense = config.get("dense_intermediate_size") or inter
    if config.get("moe_intermediate_size") and not config.get("dense_intermediate_size"):
        dense, inter = inter, config["moe_intermediate_size"]  # configs.py: the MoE width moves to intermediate_size
    experts, shared = config.get("n_routed_experts", 0), config.get("n_shared_experts", 0)
    out: dict[str, tuple[int, ...]] = {f"{root}embed_norm.weight": (h,)} if config.get("use_embed_norm") else {}
    local = set(config.get("local_layer_ids") or ())
    for i in range(config["num_hidden_layers"]):
        p = f"{root}layers.{i}"
        swa = "swa_" if i in local else ""
        heads = config.get(f"{swa}num_attention_heads") or config["num_attention_heads"]
        kv = config.get(f"{swa}num_key_value_heads") or config["num_key_value_heads"]
        hd = config.get(f"{swa}head_dim") or config.get("head_dim") or h // config["num_attention_heads"]
        extent = config.get("sliding_window_size", 512) if i in local else config.get("rel_extent", 1024)
        out.update({f"{p}.attn_norm.weight": (h,), f"{p}.mlp_norm.weight": (h,),
                    f"{p}.attn_sconv.weight": (h, 1, kernel), f"{p}.mlp_sconv.weight": (h, 1, kernel),
                    f"{p}.attn.wq_du.weight": (heads * hd, h),
                    f"{p}.attn.wk_dv.weight": (kv * hd, h), f"{p}.attn.wv_dv.weight": (kv * hd, h),
                    f"{p}.attn.wr_du.weight": (heads * d_rel, h), f"{p}.attn.wo_ud.weight": (h, heads * hd),
                    f"{p}.attn.q_norm.weight": (hd,), f"{p}.attn.k_norm.weight": (hd,),
                    f"{p}.attn.k_sconv.weight": (kv * hd, 1, kernel), f"{p}.attn.v_sconv.weight": (kv * hd, 1, kernel),
                    f"{p}.attn.rel_logits_proj.proj": (d_rel, extent)})
        if i < config.get("dense_mlp_idx", 0) or not experts:
            out.update({f"{p}.mlp.w13_dn.weight": (2 * dense, h), f"{p}.mlp.w2_md.weight": (h, dense)})
            if config.get("use_global_scale"):
                out[f"{p}.mlp.global_scale"] = (1,)
            continue
        out[f"{p}.mlp.gate.weight"] = (experts + shared, h)
        if config.get("use_gate_bias"):
            out[f"{p}.mlp.gate.bias"] = (experts,)
        if config.get("use_global_scale"):
            out[f"{p}.mlp.gate.global_scale"] = (1,)
        for e in range(experts):
            out.update({f"{p}.mlp.experts.{e}.gate_proj.weight": (inter, h),
                        f"{p}.mlp.experts.{e}.up_proj.weight": (inter, h),
                        f"{p}.mlp.experts.{e}.down_proj.weight": (h, inter)})
        out.update({f"{p}.mlp.shared_experts.shared_w13_weight": (shared, 2 * inter, h),
                    f"{p}.mlp.shared_experts.shared_w2_weight": (shared, h, inter)})
    return out


def _bailing_mla(config: dict, p: str) -> dict[str, tuple[int, ...]]:
    """A Ling / Ring 2.5 MLA layer's tensors under `p` (its output projection stored as dense)."""
    h, heads, q_lora, kv_lora = (config[k] for k in ("hidden_size", "num_attention_heads", "q_lora_rank",
                                                      "kv_lora_rank"))
    nope, rope, v = config["qk_nope_head_dim"], config["qk_rope_head_dim"], config["v_head_dim"]
    queries = {f"{p}.q_a_proj.weight": (q_lora, h), f"{p}.q_a_layernorm.weight": (q_lora,),
               f"{p}.q_b_proj.weight": (heads * (nope + rope), q_lora)} if q_lora else {
        f"{p}.q_proj.weight": (heads * (nope + rope), h)}
    return {**queries, f"{p}.kv_a_proj_with_mqa.weight": (kv_lora + rope, h), f"{p}.kv_a_layernorm.weight": (kv_lora,),
            f"{p}.kv_b_proj.weight": (heads * (nope + v), kv_lora), f"{p}.dense.weight": (h, heads * v)}


# The vision_config key each family names its head count with.
VISION_HEADS_KEY = {"qwen2_5_vl": "num_heads", "qwen3_vl": "num_heads"}


def _ignored(spec: Spec, name: str) -> bool:
    """Listed in `ignore` by exact name or by a 're:' pattern (re.match), as compressed-tensors matches."""
    return any(re.match(i[3:], name) if i.startswith("re:") else i == name for i in spec.ignore)


def ignore_list(spec: Spec) -> list[str]:
    """What the config's ignore list names: the spec's `ignore`, and every MoE router, which the checkpoint stores
    in BF16 and exporters exclude by name (llm-compressor, Qwen's own FP8 configs, ModelOpt): vLLM builds some
    routers with the model's quant_config (qwen3_moe.py's mlp.gate), so only the list keeps them unquantized."""
    routers = [name for name in linear_shapes(spec) if name.endswith(ROUTER_LEAVES)] \
        if (spec.experts or spec.transformers) and spec.ignore_routers else []
    return list(spec.ignore) + [r for r in routers if not _ignored(spec, r)]


def quantization_config(spec: Spec) -> dict | None:
    """The quantization config the spec's Quant writes (into config.json, or hf_quant_config.json)."""
    if spec.quant is None:
        return None
    quant = QUANTS[spec.quant]
    writer, _, algo = quant.writes.partition(":")
    return CONFIG_WRITERS[writer](spec, quant, algo)


def _fp8_config(spec: Spec, quant: Quant, algo: str) -> dict:
    dynamic = quant.act is not None and quant.act[1]
    cfg: dict[str, Any] = {"quant_method": "fp8", "activation_scheme": "dynamic" if dynamic else "static",
                           "ignored_layers": ignore_list(spec)}
    if quant.strategy == "block":
        cfg["weight_block_size"] = list(spec.block)
    return cfg


def _ct_config(spec: Spec, quant: Quant, algo: str) -> dict:
    weights = {"num_bits": 8, "type": "float", "symmetric": True, "dynamic": False, "strategy": quant.strategy,
               "group_size": None}
    if quant.strategy == "block":
        weights["block_structure"] = list(spec.block)
    inputs = None
    if quant.act:
        inputs = {"num_bits": 8, "type": "float", "symmetric": True, "dynamic": quant.act[1], "strategy": quant.act[0]}
        if quant.act[0] == "group":
            inputs["group_size"] = spec.block[0]
    fmt = "float-quantized" if inputs else "naive-quantized"
    return _ct_document(spec, weights, inputs, fmt)


def _ct_mxfp8_config(spec: Spec, quant: Quant, algo: str) -> dict:
    """compressed-tensors' MXFP8 preset: 1 x 32 groups, uint8 (E8M0) scales, dynamic MX activations; `algo` is the
    scale_dtype spelling when not compressed-tensors' own "torch.uint8"."""
    mx = {"num_bits": 8, "type": "float", "symmetric": True, "strategy": "group", "group_size": 32,
          "scale_dtype": algo or "torch.uint8"}
    return _ct_document(spec, dict(mx, dynamic=False), dict(mx, dynamic=True), "mxfp8-quantized")


def _ct_document(spec: Spec, weights: dict, inputs: dict | None, fmt: str) -> dict:
    return {
        "config_groups": {"group_0": {"format": fmt, "input_activations": inputs, "output_activations": None,
                                      "targets": ["Linear"], "weights": weights}},
        "format": fmt, "ignore": ignore_list(spec), "kv_cache_scheme": _ct_kv_scheme(spec),
        "quant_method": "compressed-tensors",
        "quantization_status": "compressed", "sparsity_config": {}, "transform_config": {}, "version": "0.20.1",
    }


def _ct_kv_scheme(spec: Spec) -> dict | None:
    """llm-compressor's kv_cache_scheme (an FP8 KV cache recipe)."""
    if spec.kv_cache is None:
        return None
    return {"num_bits": 8, "type": "float", "symmetric": True, "dynamic": False, "strategy": spec.kv_cache,
            "group_size": None, "block_structure": None, "observer": "minmax"}


def _modelopt_config(spec: Spec, quant: Quant, algo: str) -> dict:
    """What ModelOpt's export writes (Model-Optimizer convert_hf_quant_config_format): config.json's
    quantization_config since ModelOpt 0.31, the legacy hf_quant_config.json before."""
    producer = {"name": "modelopt", "version": "0.37.0"}
    if quant.config_file == "hf_quant_config.json":
        return {"producer": producer, "quantization": {"quant_algo": algo,
                                                        "kv_cache_quant_algo": "FP8" if spec.kv_cache else None,
                                                        "exclude_modules": ignore_list(spec)}}
    cfg = {"quant_algo": algo, "ignore": ignore_list(spec), "producer": producer, "quant_method": "modelopt"}
    fp8 = {"dynamic": False, "num_bits": 8, "type": "float"}
    if algo == "FP8":
        cfg["config_groups"] = {"group_0": {"input_activations": fp8, "weights": fp8, "targets": ["Linear"]}}
    if spec.kv_cache:
        cfg["kv_cache_scheme"] = fp8
    return cfg


def _quark_config(spec: Spec, quant: Quant, algo: str) -> dict:
    """Quark's JSON export config (quark.torch export), FP8 e4m3 weights and inputs."""
    def fp8(qscheme: str, dynamic: bool, **extra) -> dict:
        return {"dtype": "fp8_e4m3", "qscheme": qscheme, "is_dynamic": dynamic, "symmetric": True,
                "round_method": "half_even", "scale_type": "float", **extra}

    if quant.strategy == "block":
        weight = fp8("per_block", False, block_size=list(spec.block))
        inputs = fp8("per_group", True, group_size=spec.block[1])
    elif quant.strategy == "channel":
        weight, inputs = fp8("per_channel", False, ch_axis=0), fp8("per_channel", True, ch_axis=1)
    else:
        weight, inputs = fp8("per_tensor", False), fp8("per_tensor", False)
    kv_group = ["*k_proj", "*v_proj"] if spec.kv_cache else []
    layer_config = {"weight": weight, "input_tensors": inputs, "output_tensors": fp8("per_tensor", False), "bias": None}
    return {"quant_method": "quark", "quant_mode": "eager_mode", "version": "0.9",
            "export": {"kv_cache_group": kv_group, "pack_method": "reorder", "weight_format": "real_quantized",
                       "min_kv_scale": 0.0, "weight_merge_groups": None},
            "global_quant_config": {"weight": weight, "input_tensors": inputs, "output_tensors": None, "bias": None},
            "layer_quant_config": {group: layer_config for group in kv_group}, "layer_type_quant_config": {},
            "exclude": ignore_list(spec)}


def _auto_round_config(spec: Spec, quant: Quant, algo: str) -> dict:
    """Intel AutoRound's block FP8 export (auto_round:fp8 packing, vLLM's INCConfig)."""
    return {"quant_method": "auto-round", "bits": 8, "group_size": list(spec.block), "data_type": "fp",
            "sym": True, "act_bits": 8, "act_group_size": spec.block[0], "act_data_type": "fp", "act_sym": True,
            "act_dynamic": True, "packing_format": "auto_round:fp8", "autoround_version": "0.9.0",
            "modules_to_not_convert": ignore_list(spec),
            # INCConfig reads per-layer overrides, not modules_to_not_convert: bits 16 keeps a layer unquantized
            "extra_config": {name: {"bits": 16} for name in ignore_list(spec) if not name.startswith("re:")}}


def _fbgemm_config(spec: Spec, quant: Quant, algo: str) -> dict:
    """Meta's FBGEMM FP8 (Llama-3.1-405B-Instruct-FP8): per-channel weights, per-token activations."""
    return {"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0, "modules_to_not_convert": ignore_list(spec)}


def _w4afp8_config(spec: Spec, quant: Quant, algo: str) -> dict:
    """What vLLM's W4AFP8Config.from_config reads: the experts' group size, the dense block, the ignored layers
    (it never reads activation_scheme: always dynamic)."""
    return {"quant_method": "w4afp8", "group_size": INT4_GROUP, "weight_block_size": list(spec.block),
            "ignored_layers": ignore_list(spec)}


CONFIG_WRITERS = {"fp8": _fp8_config, "ct": _ct_config, "ct-mxfp8": _ct_mxfp8_config, "modelopt": _modelopt_config,
                  "quark": _quark_config, "auto-round": _auto_round_config, "fbgemm": _fbgemm_config,
                  "w4afp8": _w4afp8_config}


# The routing keys each family's released configs carry (vLLM's model files read them: layouts.Router).
ROUTER_CONFIGS: dict[str, dict[str, Any]] = {
    "DeepseekV3ForCausalLM": {"scoring_func": "sigmoid", "topk_method": "noaux_tc", "norm_topk_prob": True,
                              "n_group": 1, "topk_group": 1},
    "DeepseekV2ForCausalLM": {"scoring_func": "softmax", "topk_method": "greedy", "norm_topk_prob": False},
    "Qwen2MoeForCausalLM": {"norm_topk_prob": False},
    "Qwen3MoeForCausalLM": {"norm_topk_prob": True},
    "Qwen3VLMoeForConditionalGeneration": {"norm_topk_prob": True},
    "MiniMaxM2ForCausalLM": {"scoring_func": "sigmoid", "use_routing_bias": True},
}


def model_config(spec: Spec, with_quant: bool = True) -> dict:
    if spec.sizes_in_text_config:
        cfg: dict[str, Any] = {"architectures": [spec.architecture], "model_type": spec.model_type, "dtype": spec.dtype}
        quant = quantization_config(spec) if with_quant else None
        if quant and spec.quant and QUANTS[spec.quant].config_file == "config.json":
            cfg["quantization_config"] = quant
        return {**cfg, **spec.extra_config}
    cfg = {
        "architectures": [spec.architecture], "model_type": spec.model_type, "hidden_size": spec.hidden,
        "intermediate_size": spec.intermediate, "num_hidden_layers": spec.layers,
        "num_attention_heads": spec.heads, "num_key_value_heads": spec.kv_heads, "vocab_size": spec.vocab,
        "max_position_embeddings": 512, "tie_word_embeddings": spec.tie_embeddings, "dtype": spec.dtype,
    }
    if spec.head_dim:
        cfg["head_dim"] = spec.head_dim
    if spec.experts:
        cfg.update(num_experts=spec.experts, moe_intermediate_size=spec.moe_intermediate)
    if spec.shared_experts or spec.first_k_dense:
        cfg.update(n_routed_experts=spec.experts, n_shared_experts=spec.shared_experts,
                   first_k_dense_replace=spec.first_k_dense)
    if spec.mla:
        cfg.update(q_lora_rank=spec.q_lora_rank, kv_lora_rank=spec.kv_lora_rank, qk_rope_head_dim=spec.qk_rope_head_dim,
                   qk_nope_head_dim=spec.hd, v_head_dim=spec.hd)
    if spec.experts:
        cfg.update(ROUTER_CONFIGS.get(spec.architecture, {}))
    if spec.mtp_layers:
        cfg[spec.mtp_key] = spec.mtp_layers
    if spec.sliding_window is not None:
        cfg["sliding_window"] = spec.sliding_window
        if spec.model_type.startswith("qwen"):
            cfg["use_sliding_window"] = True
    if spec.vision:
        cfg["vision_config"] = {"hidden_size": spec.vision_hidden,
                                VISION_HEADS_KEY.get(spec.vision, "num_attention_heads"): spec.vision_heads}
    quant = quantization_config(spec) if with_quant else None
    if quant and spec.quant and QUANTS[spec.quant].config_file == "config.json":
        cfg["quantization_config"] = quant
    cfg.update(spec.extra_config)
    return cfg


def tensor_specs(spec: Spec) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Every tensor name -> (dtype, shape) the checkpoint holds."""
    quant = QUANTS[spec.quant] if spec.quant else None
    out: dict[str, tuple[str, tuple[int, ...]]] = {
        f"{spec.text_prefix}.{spec.embedding}.weight": ("BF16", (spec.vocab, spec.hidden))}
    if spec.transformers:
        out = {name: ("BF16", shape) for name, shape in transformers_tensors(spec).items()
               if not _is_linear_weight(name, shape)}
    else:
        out.update({n: ("BF16", tuple(s)) for n, s in spec.extra_tensors.items() if not _is_linear_weight(n, tuple(s))})
    for name, (n, k) in linear_shapes(spec).items():
        mtp_bf16 = name.endswith((".eh_proj", ".shared_head.head"))
        bf16_tower = name.startswith(BF16_TOWERS.get(spec.vision or "", ()))
        ignored = _ignored(spec, name) or name.endswith(ROUTER_LEAVES) or mtp_bf16 or bf16_tower
        if ignored or quant is None:
            out[f"{name}.weight"] = ("BF16", (n, k))
            continue
        if quant.experts == "int4" and ROUTED_EXPERT.search(name):
            out[f"{name}.weight"] = ("I8", (n, math.ceil(k / 2)))
            out[f"{name}.weight_scale_inv"] = ("BF16", (n, math.ceil(k / INT4_GROUP)))
            continue
        out[f"{name}.weight"] = ("F8_E4M3", (n, k))
        out[f"{name}.{quant.scale}"] = (quant.scale_dtype, scale_shape(quant.scale_layout, n, k, spec.block))
        if quant.act and not quant.act[1]:
            out[f"{name}.input_scale"] = (quant.scale_dtype, scale_shape(quant.input_layout, n, k, spec.block))
    if spec.transformers:
        out.update(_flat_expert_specs(spec, quant, out))
        return dict(sorted(out.items()))
    for i in range(spec.layers + spec.mtp_layers):
        out[f"{spec.text_prefix}.layers.{i}.input_layernorm.weight"] = ("BF16", (spec.hidden,))
        out[f"{spec.text_prefix}.layers.{i}.post_attention_layernorm.weight"] = ("BF16", (spec.hidden,))
        if spec.attention_sinks:
            out[f"{spec.text_prefix}.layers.{i}.self_attn.sinks"] = ("BF16", (spec.heads,))
    out.update(kv_scale_specs(spec))
    out.update({n: ("BF16", tuple(s)) for n, s in spec.extra_tensors.items() if not _is_linear_weight(n, s)})
    for i in range(spec.layers, spec.layers + spec.mtp_layers):
        for norm in ("enorm", "hnorm", "shared_head.norm"):
            out[f"{spec.text_prefix}.layers.{i}.{norm}.weight"] = ("BF16", (spec.hidden,))
    out[f"{spec.text_prefix}.norm.weight"] = ("BF16", (spec.hidden,))
    out.update({name: ("BF16", tuple(shape)) for name, shape in spec.extra_tensors.items()
                if not _is_linear_weight(name, shape)})
    return dict(sorted(out.items()))


# The KV scale names each checkpoint format writes under `<...>.layers.<i>.self_attn` ({kv}: "k" or "v"):
# llm-compressor's and AutoFP8's attention-level scales, ModelOpt's on the projections, Quark's output scales.
KV_SCALE_NAMES = {"ct": "{kv}_scale", "modelopt": "{kv}_proj.{kv}_scale", "quark": "{kv}_proj.output_scale"}
KV_SCALE_LEAVES = (".k_scale", ".v_scale", ".kv_scale", ".k_proj.output_scale", ".v_proj.output_scale")


def kv_scale_specs(spec: Spec) -> dict[str, tuple[str, tuple[int, ...]]]:
    """The F32 KV cache scales of every decoder layer (none for MLA: its cache scales are not written here)."""
    if spec.kv_cache is None or spec.mla:
        return {}
    writer = QUANTS[spec.quant].writes.partition(":")[0] if spec.quant else "fp8"
    if spec.kv_scale_shape is not None:
        shape = spec.kv_scale_shape
    elif spec.kv_cache == "attn_head":
        shape = (spec.kv_heads, 1, 1)
    else:
        shape = (1,) if writer == "ct" else ()
    out = {}
    for i in range(spec.layers):
        p = f"{spec.text_prefix}.layers.{i}.self_attn"
        if spec.kv_scale_fused:
            out[f"{p}.kv_scale"] = ("F32", shape)
            continue
        for kv in "kv":
            if (i, kv) not in spec.kv_missing:
                out[f"{p}.{KV_SCALE_NAMES.get(writer, '{kv}_scale').format(kv=kv)}"] = ("F32", shape)
    return out


def scale_shape(layout: str, n: int, k: int, block: tuple[int, int]) -> tuple[int, ...]:
    """A scale's shape for a weight [n, k] (see Quant.scale_layout)."""
    blocks = (math.ceil(n / block[0]), math.ceil(k / block[1]))
    return {"scalar": (), "one": (1,), "rows": (n, 1), "vector": (n,), "blocks": blocks,
            "blocks4d": (blocks[0], 1, blocks[1], 1), "mx": (n, math.ceil(k / 32))}[layout]


def encode_header(entries: dict[str, tuple[str, tuple[int, ...]]], metadata: dict | None = None) -> tuple[bytes, int]:
    """The safetensors header bytes (length prefix included) and the data region's size."""
    header: dict = {"__metadata__": metadata or {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in entries.items():
        nbytes = math.prod(shape) * ITEMSIZE[dtype]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # safetensors pads the header to 8 bytes
    return struct.pack("<Q", len(raw)) + raw, offset


def write_safetensors(path: str, entries: dict[str, tuple[str, tuple[int, ...]]], data: dict[str, bytes] | None,
                      metadata: dict | None = None) -> None:
    """Write a file; with `data=None` the data region is a sparse hole of the right size."""
    head, size = encode_header(entries, metadata)
    with open(path, "wb") as fh:
        fh.write(head)
        if data is None:
            fh.truncate(len(head) + size)
            return
        for name in entries:
            fh.write(data[name])


# DBRX's experts as transformers' DbrxExpertGLU holds them and dbrx.py loads them: bare 2-D parameters [E x I, H].
FLAT_EXPERTS = re.compile(r".+\.ffn\.experts\.mlp\.(?:w1|v1|w2)")


def _flat_expert_specs(spec: Spec, quant, tensors: dict[str, tuple[str, tuple[int, ...]]]
                       ) -> dict[str, tuple[str, tuple[int, ...]]]:
    """The flattened experts among `tensors` quantized: FP8 under their own name, each scale beside it as
    `<name>_<suffix>` (what dbrx.py's load_weights maps to w13_<suffix> / w2_<suffix>)."""
    out: dict[str, tuple[str, tuple[int, ...]]] = {}
    for name, (_, shape) in tensors.items():
        if quant is None or not FLAT_EXPERTS.fullmatch(name) or len(shape) != 2:
            continue
        n, k = shape
        out[name] = ("F8_E4M3", shape)
        out[f"{name}_{quant.scale}"] = (quant.scale_dtype, _flat_expert_scale(spec, quant.scale_layout, n, k))
        if quant.act and not quant.act[1]:
            out[f"{name}_input_scale"] = (quant.scale_dtype, _flat_expert_scale(spec, quant.input_layout, n, k))
    return out


def _flat_expert_scale(spec: Spec, layout: str, n: int, k: int) -> tuple[int, ...]:
    """A flattened expert tensor's scale: a per-tensor one is per expert ([E], DbrxExperts.weight_loader's
    w13_weight_scale[:, 0] / w2_weight_scale), any other over the flattened [E x I, H] weight."""
    if layout in ("scalar", "one"):
        return (spec.extra_config["ffn_config"]["moe_num_experts"],)
    return scale_shape(layout, n, k, spec.block)


def write_checkpoint(folder: str, spec: Spec | None = None, **overrides) -> str:
    """Write config.json and the safetensors file(s) (+ index when sharded) of `spec` into `folder`."""
    spec = replace(spec or Spec(), **overrides)
    os.makedirs(folder, exist_ok=True)
    if spec.mistral_format:
        return write_mistral_checkpoint(folder, spec)
    with open(os.path.join(folder, "config.json"), "w") as fh:
        json.dump(model_config(spec), fh, indent=2)
    if spec.quant and QUANTS[spec.quant].config_file != "config.json":
        with open(os.path.join(folder, QUANTS[spec.quant].config_file), "w") as fh:
            json.dump(quantization_config(spec), fh, indent=2)
    entries = tensor_specs(spec)
    data = None if spec.data == "sparse" else tensor_data(spec, entries)
    names = list(entries)
    if spec.shards == 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), entries, data)
        return folder
    per = math.ceil(len(names) / spec.shards)
    weight_map = {}
    for s in range(spec.shards):
        file = f"model-{s + 1:05d}-of-{spec.shards:05d}.safetensors"
        part = {n: entries[n] for n in names[s * per:(s + 1) * per]}
        write_safetensors(os.path.join(folder, file), part, data and {n: data[n] for n in part})
        weight_map.update({n: file for n in part})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as fh:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, fh, indent=2)
    return folder


# params.json's `quantization` as Mistral's exporter writes it, per synth quant (vLLM's
# transformers_utils/configs/mistral.py _remap_mistral_quantization_args reads it into an "fp8" config; BLOCK from
# vLLM 0.34), and the suffixes of the scales it stores beside each FP8 weight.
MISTRAL_QUANTIZATION = {"fp8-static": {"qformat_weight": "fp8_e4m3", "qscheme_act": "TENSOR"},
                        "fp8-dynamic": {"qformat_weight": "fp8_e4m3", "qscheme_act": "NO_SCALES"},
                        "fp8-block": {"qformat_weight": "fp8_e4m3", "qscheme_weight": "BLOCK", "qscheme_act": "BLOCK"}}
MISTRAL_SCALES = {"weight_scale": "qscale_weight", "weight_scale_inv": "qscale_weight", "input_scale": "qscale_act"}
# HF-style name parts -> Mistral's (the inverse of what vLLM's Mistral loaders rename: fp8check.core.checkpoint.mistral).
_MISTRAL_PARTS = [(r"^model\.embed_tokens\.", "tok_embeddings."), (r"^model\.norm\.", "norm."),
                  (r"^lm_head\.", "output."), (r"^model\.layers\.", "layers."),
                  (r"\.input_layernorm\.", ".attention_norm."), (r"\.post_attention_layernorm\.", ".ffn_norm."),
                  (r"\.self_attn\.", ".attention."), (r"\.q_proj\.", ".wq."), (r"\.k_proj\.", ".wk."),
                  (r"\.v_proj\.", ".wv."), (r"\.o_proj\.", ".wo."), (r"\.q_a_proj\.", ".wq_a."),
                  (r"\.q_b_proj\.", ".wq_b."), (r"\.q_a_layernorm\.", ".q_a_norm."),
                  (r"\.kv_a_proj_with_mqa\.", ".wkv_a_with_mqa."), (r"\.kv_a_layernorm\.", ".kv_a_norm."),
                  (r"\.kv_b_proj\.", ".wkv_b."), (r"\.mlp\.(gate|shared_experts|experts)\.", r".\1."),
                  (r"\.mlp\.", ".feed_forward."), (r"\.gate_proj\.", ".w1."), (r"\.up_proj\.", ".w3."),
                  (r"\.down_proj\.", ".w2.")]


def mistral_name(name: str) -> str:
    """A tensor's name in a consolidated.safetensors (Mistral's) from the HF-style one this module writes."""
    for pattern, new in _MISTRAL_PARTS:
        name = re.sub(pattern, new, name)
    return _mistral_scale_name(name)


def _mistral_scale_name(name: str) -> str:
    """A tensor under its own name, its FP8 scale's suffix as Mistral's exporter writes it."""
    head, _, suffix = name.rpartition(".")
    return f"{head}.{MISTRAL_SCALES[suffix]}" if suffix in MISTRAL_SCALES else name


def mistral_params(spec: Spec) -> dict:
    """params.json: the sizes under Mistral's keys, MLA's and the MoE block's when the spec has them."""
    params: dict[str, Any] = {"dim": spec.hidden, "n_layers": spec.layers, "head_dim": spec.hd, "hidden_dim": spec.intermediate,
              "n_heads": spec.heads, "n_kv_heads": spec.kv_heads, "norm_eps": 1e-05, "vocab_size": spec.vocab,
              "rope_theta": 1000000.0, "tied_embeddings": spec.tie_embeddings, "max_position_embeddings": 512}
    if spec.mla:
        params.update(q_lora_rank=spec.q_lora_rank, kv_lora_rank=spec.kv_lora_rank,
                      qk_rope_head_dim=spec.qk_rope_head_dim, qk_nope_head_dim=spec.hd, v_head_dim=spec.hd)
    if spec.experts:
        params["moe"] = {"num_experts": spec.experts, "num_experts_per_tok": 2,
                         "expert_hidden_dim": spec.moe_intermediate, "num_shared_experts": spec.shared_experts,
                         "first_k_dense_replace": spec.first_k_dense, "route_every_n": 1, "routed_scale": 1.0,
                         "num_expert_groups": 1, "num_expert_groups_per_tok": 1}
    if spec.quant:
        params["quantization"] = dict(MISTRAL_QUANTIZATION[spec.quant])
        if QUANTS[spec.quant].strategy == "block":
            params["quantization"].update(block_size_out=spec.block[0], block_size_in=spec.block[1])
    params.update(spec.extra_config)
    return params


def write_mistral_checkpoint(folder: str, spec: Spec) -> str:
    """params.json + consolidated.safetensors (Spec.mistral_format)."""
    # Codestral Mamba: params.json's model_type mamba, mamba_ssm's tensor names (transformers' Mamba2 saves the same)
    mamba = spec.architecture == "Mamba2ForCausalLM"
    if (spec.transformers and not mamba) or (spec.quant and spec.quant not in MISTRAL_QUANTIZATION):
        raise ValueError(f"a Mistral-format checkpoint is hand-named (Mamba-2: transformers') and stores "
                         f"{sorted(MISTRAL_QUANTIZATION)}")
    params = mistral_params(spec)
    if mamba:
        params["model_type"] = "mamba"
    with open(os.path.join(folder, "params.json"), "w") as fh:
        json.dump(params, fh, indent=2)
    entries = _mistral_large_4_tensors(spec, params) if params.get("dsa") else tensor_specs(spec)
    data = None if spec.data == "sparse" else tensor_data(spec, entries)
    renamed = {(_mistral_scale_name(name) if mamba else mistral_name(name)): name for name in entries}
    write_safetensors(os.path.join(folder, "consolidated.safetensors"), {n: entries[o] for n, o in renamed.items()},
                      data and {n: data[o] for n, o in renamed.items()})
    return folder


def _mistral_large_4_tensors(spec: Spec, params: dict) -> dict[str, tuple[str, tuple[int, ...]]]:
    """A Mistral-Large-4 checkpoint's tensors (params.json with `dsa`, read as vLLM lists its layers: kv_source_layers,
    nope_layer_flags, index_sharing): the DSA indexer (wq_b, wk, weights_proj, k_norm, q_input_norm) on each "full"
    layer; no wkv_a_with_mqa on a layer that shares an earlier layer's KV; a NoPE layer's without the RoPE part."""
    from fp8check.core.checkpoint.mistral import hf_config  # noqa: PLC0415 - the per-layer lists as vLLM expands them

    config = hf_config(params)
    extra = dict(spec.extra_tensors)
    for i, kind in enumerate(config["index_sharing"]):
        if kind == "full":
            p, heads, dim = f"model.layers.{i}.self_attn.indexer", config["index_n_heads"], config["index_head_dim"]
            extra.update({f"{p}.wq_b.weight": (heads * dim, spec.hidden), f"{p}.wk.weight": (dim, spec.hidden),
                          f"{p}.weights_proj.weight": (heads, spec.hidden), f"{p}.k_norm.weight": (dim,),
                          f"{p}.k_norm.bias": (dim,), f"{p}.q_input_norm.weight": (spec.hidden,),
                          f"{p}.q_input_norm.bias": (spec.hidden,)})
    entries = tensor_specs(replace(spec, extra_tensors=extra))
    for i, (source, nope) in enumerate(zip(config["kv_source_layers"], config["nope_layer_flags"])):
        name = f"model.layers.{i}.self_attn.kv_a_proj_with_mqa."
        for tensor in [n for n in entries if n.startswith(name)]:
            if source != i:
                del entries[tensor]
            elif nope and tensor.endswith(".weight"):
                entries[tensor] = (entries[tensor][0], (spec.kv_lora_rank, spec.hidden))
            elif nope and spec.quant and tensor.endswith(QUANTS[spec.quant].scale):
                layout = QUANTS[spec.quant].scale_layout
                entries[tensor] = (entries[tensor][0], scale_shape(layout, spec.kv_lora_rank, spec.hidden, spec.block))
    return entries


def tensor_data(spec: Spec, entries: dict[str, tuple[str, tuple[int, ...]]]) -> dict[str, bytes]:
    """Real bytes: zeros, or random weights quantized per the spec's strategy (needs torch)."""
    if spec.data == "zeros":
        return {n: bytes(math.prod(s) * ITEMSIZE[d]) for n, (d, s) in entries.items()}
    import torch  # noqa: PLC0415 - only real data needs torch

    gen = torch.Generator().manual_seed(spec.seed)
    dtypes = {"BF16": torch.bfloat16, "F32": torch.float32, "F16": torch.float16, "F8_E4M3": torch.float8_e4m3fn,
              "U8": torch.uint8}
    out: dict[str, bytes] = {}
    for name, (dtype, shape) in entries.items():
        if dtype == "I8":  # INT4 experts: the weight and its group scales
            scale_name = f"{name[: -len('.weight')]}.weight_scale_inv"
            packed, scale = quantize_int4(random_weights((shape[0], 2 * shape[1]), gen, spec.distribution))
            out[name] = _bytes(packed)
            out[scale_name] = _bytes(scale.to(dtypes[entries[scale_name][0]]))
            continue
        if dtype != "F8_E4M3":
            if name.endswith("norm.weight"):
                tensor = torch.ones(shape)
            elif spec.kv_cache and name.endswith(KV_SCALE_LEAVES):
                tensor = torch.full(shape, spec.kv_scale)
            elif name.rsplit(".", 1)[-1] in ("weight_scale", "weight_scale_inv", "input_scale"):
                continue  # written with their weight below
            else:
                tensor = random_weights(shape, gen, spec.distribution)
            out[name] = _bytes(tensor.to(dtypes[dtype]))
            continue
        prefix = name[: -len(".weight")]
        weight = random_weights(shape, gen, spec.distribution)
        scale_name = next(f"{prefix}.{s}" for s in ("weight_scale", "weight_scale_inv") if f"{prefix}.{s}" in entries)
        scale_dtype, stored_shape = entries[scale_name]
        if scale_dtype == "U8":  # MX: E8M0 exponent bytes per 1 x 32 group
            q, scale = quantize_mxfp8(weight)
            out[name], out[scale_name] = _bytes(q), _bytes(scale)
            continue
        q, scale = quantize_fp8(weight, _quantization_shape(stored_shape, (shape[0], shape[1])), spec.block)
        out[name] = _bytes(q)
        out[scale_name] = _bytes(scale.reshape(stored_shape).to(dtypes[scale_dtype]))
        if f"{prefix}.input_scale" in entries:
            in_dtype, in_shape = entries[f"{prefix}.input_scale"]
            out[f"{prefix}.input_scale"] = _bytes(torch.full(in_shape, spec.input_scale).to(dtypes[in_dtype]))
    return out


def _quantization_shape(stored: tuple[int, ...], weight: tuple[int, int]) -> tuple[int, ...]:
    """The 2-D scale shape quantize_fp8 computes for a stored one: [n] and [n, 1] are per row; the 4-D
    [bn, 1, bk, 1] of FP8_PB_WO is [bn, bk] blocks; [] and [1] per tensor."""
    if stored == (weight[0],):
        return (weight[0], 1)
    if len(stored) == 4:
        return (stored[0], stored[2])
    return stored


def quantize_mxfp8(weight):
    """MX FP8 (e4m3) in 1 x 32 groups along K as vLLM's mxfp8_e4m3_quantize scales them: the power of two
    2**ceil(log2(amax / 448)), stored as its biased E8M0 byte; K is zero-padded to a multiple of 32."""
    import torch  # noqa: PLC0415

    n, k = weight.shape
    groups = math.ceil(k / 32)
    padded = torch.zeros(n, groups * 32)
    padded[:, :k] = weight
    amax = padded.reshape(n, groups, 32).abs().amax(dim=2).clamp(min=2.0 ** -126)
    fmax = torch.finfo(torch.float8_e4m3fn).max
    exponent = torch.ceil(torch.log2(amax / fmax)).clamp(-127, 127)
    scale = torch.exp2(exponent).repeat_interleave(32, 1)[:, :k]
    q = (weight / scale).clamp(-fmax, fmax).to(torch.float8_e4m3fn)
    return q, (exponent + 127).to(torch.uint8)


def quantize_int4(weight, group: int = INT4_GROUP):
    """Symmetric signed INT4 in 1 x `group` groups along K (scale amax / 7, values in [-8, 7]), packed two a byte
    with the even column in the low nibble: the int8 layout vLLM's w4afp8 loader repacks (XOR 0x88 -> uint4b8, read
    as int32). K is zero-padded to whole groups for the scales."""
    import torch  # noqa: PLC0415

    n, k = weight.shape
    groups = math.ceil(k / group)
    padded = torch.zeros(n, groups * group)
    padded[:, :k] = weight
    scale = padded.reshape(n, groups, group).abs().amax(dim=2).clamp(min=1e-12) / 7
    q = torch.round(weight / scale.repeat_interleave(group, 1)[:, :k]).clamp(-8, 7).to(torch.int16)
    if k % 2:
        q = torch.cat([q, torch.zeros(n, 1, dtype=torch.int16)], dim=1)
    packed = (q[:, 0::2] & 0xF) | ((q[:, 1::2] & 0xF) << 4)
    return packed.to(torch.uint8).view(torch.int8), scale


def quantize_fp8(weight, scale_shape: tuple[int, ...], block: tuple[int, int]):
    """Symmetric e4m3 quantization: per-tensor, per-channel ([n, 1]) or per-block (ceil-div, padded)."""
    import torch  # noqa: PLC0415

    n, k = weight.shape
    fmax = torch.finfo(torch.float8_e4m3fn).max
    if len(scale_shape) == 2 and scale_shape[1] == 1 and scale_shape[0] == n:
        scale = weight.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / fmax
        expanded = scale
    elif len(scale_shape) == 2:
        bn, bk = block
        padded = torch.zeros(scale_shape[0] * bn, scale_shape[1] * bk)
        padded[:n, :k] = weight
        blocks = padded.reshape(scale_shape[0], bn, scale_shape[1], bk).abs().amax(dim=(1, 3))
        scale = blocks.clamp(min=1e-12) / fmax
        expanded = scale.repeat_interleave(bn, 0).repeat_interleave(bk, 1)[:n, :k]
    else:
        scale = (weight.abs().amax().clamp(min=1e-12) / fmax).reshape(())
        expanded = scale
    q = (weight / expanded).clamp(-fmax, fmax).to(torch.float8_e4m3fn)
    return q, scale


def random_weights(shape: tuple[int, ...], gen, distribution: str = "normal"):
    """Weights of std ~0.02. "heavy" imitates trained weights, whose tails and outlier input channels are what
    per-tensor and per-channel scales must cover: Student-t with 3 degrees of freedom, and 1 in 64 columns x8."""
    import torch  # noqa: PLC0415

    normal = torch.randn(shape, generator=gen) * 0.02
    if distribution == "normal":
        return normal
    chi2 = torch.randn((3, *shape), generator=gen).square().sum(0)
    heavy = normal / (chi2 / 3).sqrt() / 3 ** 0.5  # t(3) has variance 3: rescaled to std 0.02
    if len(shape) == 2:
        heavy[:, torch.randperm(shape[1], generator=gen)[: max(1, shape[1] // 64)]] *= 8
    return heavy


def _bytes(tensor) -> bytes:
    import torch  # noqa: PLC0415

    return tensor.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()  # 0-d scales too
