"""A local checkpoint folder: config.json + safetensors headers (+ index), validated, no tensor data read."""

from __future__ import annotations

import gc
import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable, NamedTuple, TypeGuard

from fp8check.core.checkpoint.mistral import (
    CONSOLIDATED_INDEX, MISTRAL_PARAMS, NotLaidOut, checkpoint_names, consolidated_files, errors_before_034,
    errors_every_release, hf_config, is_mistral_format,
)
from fp8check.core.checkpoint.safetensors_header import SafetensorsHeader, TensorInfo, open_regular, read_header
from fp8check.core.errors import CheckpointFileError, ConfigError, InputError, is_printable, printable, shown
from fp8check.core.formats.base import QuantConfig
from fp8check.core.formats.frontdoor import HF_QUANT_CONFIG
from fp8check.core.formats.registry import parse_quant_config

INDEX_FILE = "model.safetensors.index.json"
SINGLE_FILE = "model.safetensors"
MAX_JSON_BYTES = 50_000_000  # config.json and the index are KBs; refuse anything absurd before parsing it
# transformers_utils/config.py CONFIG_FIELD_ALIASES["num_experts"] (0.33 / 0.34 alike), in getattr_iter's order (the
# generated fp8check.core.model.transformers_classes is written from this one).
EXPERT_ALIASES = ("num_experts", "moe_num_experts", "n_routed_experts", "num_local_experts")
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")
ROUTER_KEYS = ("scoring_func", "norm_topk_prob", "n_group", "topk_method", "use_routing_bias",
               "moe_router_activation", "norm_expert_weight",  # these two: Step-3.5's
               "hidden_act",  # Kimi-K3: nvidia/model.py KimiMoE hands FusedMoE activation=config.hidden_act
               "route_norm",  # HY-V3's
               "score_function", "moe_router_enable_expert_bias",  # Ling / Ring's (bailing_moe*.py)
               "router_enable_expert_bias",  # openPangu's (openpangu.py)
               "expert_selection_fn",  # Cohere2-MoE's
               "router_score_function",  # Flint's (models/flint/model.py)
               "min_moe_intermediate_per_partition",  # Kimi's amd/linear.py KimiMoE (Arch.padded_moe_refusal)
               "score_func",  # Arcee Trinity's (afmoe.py)
               "use_expert_bias",  # LFM2-MoE's (lfm2_moe.py)
               "router_score_func", "moe_gate_bias")  # K2-Horizon's (k2_horizon.py)


class SlidingKeys(NamedTuple):
    """The text config's keys that decide which attention layers use a sliding window, as config.json stores them
    (None: absent). What transformers' config class and vLLM's model file make of them is
    fp8check.core.model.layouts.attention_windows."""

    model_type: str = ""                         # the text config's: the transformers config class vLLM reads
    sliding_window: int | None = None
    sliding_window_given: bool = False           # the key is in config.json (null included): no class default
    layer_types: tuple[str, ...] | None = None   # "sliding_attention" / "full_attention" / ... per layer
    use_sliding_window: bool | None = None       # Qwen: the window applies only when true
    max_window_layers: int | None = None         # Qwen: the layer index where sliding starts
    # Gemma-3 / EXAONE-4 (AfmoeConfig's global_attn_every_n_layers): every pattern-th layer is full attention;
    # EXAONE-4's configs write it as letters ("LLLG")
    sliding_window_pattern: int | str | None = None
    hybrid_layer_pattern: tuple[int, ...] | None = None  # MiMo-V2: 1 on the sliding layers, 0 on the full ones
    sliding_window_size: int | None = None       # MiMo-V2: the sliding layers' window
    # Cohere2-MoE: first_k_dense_replace (the dense-prefix layers) and their prefix_dense_sliding_window_pattern
    dense_prefix: int | None = None
    dense_prefix_pattern: int | None = None
    # Domyn-Edge: window_sizes' left windows, one a layer (its HF (w, 0) pairs; 0: full attention)
    left_windows: tuple[int, ...] | None = None


class ModelConfig(NamedTuple):
    """The parts of config.json that decide how vLLM builds the linear layers."""

    architectures: tuple[str, ...]
    model_type: str
    dtype: str | None
    hidden_size: int | None
    num_attention_heads: int | None
    num_key_value_heads: int | None
    head_dim: int | None
    num_hidden_layers: int | None
    quantization_config: QuantConfig | None
    raw_quantization_config: dict | None = None
    # What the per-architecture layouts (fp8check.core.model.layouts) read; all optional.
    q_lora_rank: int | None = None          # DeepSeek MLA: set -> vLLM fuses q_a_proj + kv_a_proj_with_mqa
    num_nextn_predict_layers: int = 0       # DeepSeek / GLM MTP layers appended after num_hidden_layers
    num_mtp_modules: int = 0                # MiniMax-M2's name for the same
    first_k_dense_replace: int | None = None  # DeepSeek / GLM: layers below it are dense, the rest MoE
    index_topk: int | None = None      # DeepSeek sparse attention: the indexer's top-k (sparse backends check it)
    o_groups: int | None = None        # DeepSeek-V4: the attention output's groups, split over TP
    learnable_sink: bool | None = None  # HY-V4: per-head attention sinks (absent: vLLM's HYV4Config default, true)
    swa_sinks: bool = False            # MiMo-V2: add_swa_attention_sink_bias, per-head sinks on the sliding layers
    # MLA (qk_nope_head_dim, qk_rope_head_dim, v_head_dim) when config.json gives all three (MLA backends check them)
    mla_dims: tuple[int, int, int] | None = None
    vocab_size: int | None = None
    num_kv_shared_layers: int = 0      # Gemma-4: the last N layers reuse an earlier layer's KV cache
    # IQuest-LoopCoder (iquest_loopcoder.py): every layer runs loop_num times (default 2), each loop past the first with
    # an Attention of its own over a window of loop_window_size (default 64)
    loop_num: int = 2
    loop_window_size: int = 64
    intermediate_size: int | None = None  # the dense MLP's width (None when absent or per layer, a list)
    # Mamba2 mixers (Nemotron-H): (mamba_num_heads, mamba_head_dim, n_groups, ssm_state_size), None when absent
    mamba: tuple[int, int, int, int] | None = None
    # Gated-delta-net mixers (Qwen3-Next / Qwen3.5): (key_dim, value_dim) = linear_num_key_heads x
    # linear_key_head_dim, linear_num_value_heads x linear_value_head_dim; None when absent
    gated_delta_net: tuple[int, int] | None = None
    heads_per_layer: tuple[int, ...] | None = None  # Laguna: num_attention_heads_per_layer; Step-3.5's sliding layers
    # Step-3.5: the MoE layers whose swiglu_limits entry is set (step3p5.py FusedMoEBlock: activation "swiglustep");
    # Ling-3.0's expert_swiglu_limit_list (bailing_moe_v3.py _get_layer_swiglu_limit: an entry of 0 or null is none)
    limited_moe_layers: tuple[int, ...] = ()
    # config.json's swiglu_limit (GLM-5-Next, MiniMax-M3, DeepSeek-V4: the clamp their model files hand FusedMoE when
    # the layout says so, Arch.moe_swiglu_limit); None when absent or null (then the config class's default).
    swiglu_limit: float | None = None
    # DeepSeek-V4.1's Engram: its hash heads, (engram_max_ngram_size - 1) x engram_n_heads (deepseek_v41/common/
    # engram.py EngramLayout.n_hash_cols), sharded over TP; None without engram_layer_ids.
    engram_hash_heads: int | None = None
    group_norm_size: int | None = None      # Ling / Ring 2.5's linear-attention group norm (Arch.group_norm_tp)
    vision_heads: int | None = None         # vision_config: attention heads of the vision tower
    vision_kv_heads: int | None = None      # vision_config.num_key_value_heads (EXAONE-4.5's GQA tower); None: MHA
    vision_hidden_size: int | None = None   # vision_config: hidden size of the vision tower
    vision_intermediate_size: int | None = None
    vision_model_type: str = ""             # vision_config.model_type (which tower class a Llava model builds)
    # vision_config.num_hidden_layers, its config class's default where absent (VISION_LAYERS); None: neither known
    vision_layers: int | None = None
    # vision_feature_layer (an int or a list), its config class's default where absent (VISION_FEATURE_LAYERS); ():
    # neither given nor known
    vision_feature_layers: tuple[int, ...] = ()
    audio_hidden_size: int | None = None    # audio_config (Gemma-4)
    audio_heads: int | None = None          # audio_config's encoder_attention_heads (Qwen3-Omni's audio tower)
    # The FusedMoE routing (and Kimi-K3's activation) keys model files read (ROUTER_KEYS), as stored.
    router_keys: tuple[tuple[str, object], ...] = ()
    # The num_experts aliases vLLM reads (transformers_classes.EXPERT_ALIASES), as stored (a list as a tuple: ERNIE-4.5-VL's
    # text and vision experts): which Transformers backend class an architecture the release does not register gets
    # (layouts.transformers_backend), and the count a MoE model file refuses a larger TP than (layouts.TP_ABOVE_EXPERTS).
    expert_counts: tuple[tuple[str, object], ...] = ()
    sliding: SlidingKeys = SlidingKeys()
    # A vision-language config's text_config: its own architectures, else its model_type (what vLLM resolves the
    # language model's class from, config/vllm.py VllmConfig.with_hf_config); () without a text_config.
    text_architectures: tuple[str, ...] = ()
    text_model_type: str = ""
    expert_dtype: str | None = None   # DeepSeek-V4: "fp8" or "fp4" (the default vLLM reads when absent)
    # The width routed experts take and give where it is not hidden_size (None: hidden_size), and the config key that
    # holds it: Kimi-K3's latent MoE routed_expert_hidden_size, Muse-Spark's pooled MoE moe_hidden_size.
    moe_hidden_size: int | None = None
    moe_hidden_key: str | None = None
    # The token embedding's (and a tied LM head's) width where it is not hidden_size: OPT's word_embed_proj_dim
    # (opt.py: embed_tokens and lm_head at that width, project_in / project_out between it and hidden_size).
    embedding_size: int | None = None
    kv_lora_rank: int | None = None   # MLA: the latent's width (without the RoPE part)
    # Mistral-Large-4 (params.json's kv_sharing, as vLLM's Mistral reader lists it): each layer's KV-cache source
    # layer, itself unless it reuses an earlier layer's latent cache; () when absent.
    kv_source_layers: tuple[int, ...] = ()
    # MiMo-V2: each layer's (heads, KV heads, head size, V head size), the sliding layers (hybrid_layer_pattern 1)
    # from the swa_* keys (mimo_v2.py MiMoV2FlashDecoderLayer; V's head size the K one where absent); None unless
    # config.json gives hybrid_layer_pattern and both head counts.
    attention_geometry: tuple[tuple[int, int, int, int], ...] | None = None
    # MiMo-V2-Pro: config.json's attention_projection_layout is "fused_qkv" (mimo_v2.py MiMoV2FlashDecoderLayer).
    fused_qkv_layout: bool = False
    # config.json's version as str() shows it ("2.6"): the class MiniCPM-V / MiniCPM-o build (layouts.version_refusal)
    version: str | None = None
    # A Mistral-format checkpoint's params.json as vLLM 0.25-0.33 refuse it (fp8check.core.checkpoint.mistral:
    # BLOCK FP8, Mistral-Large-4); the config above is 0.34's reading.
    errors_before_034: tuple[str, ...] = ()
    # What every release refuses in it (errors_every_release: a Mixtral, which mixtral.py cannot build or load).
    mistral_errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class FetchStats:
    """Where a Hub checkpoint's metadata came from and what reading it cost (`--verbose` prints it)."""

    repo_id: str
    revision: str                     # as asked: branch, tag or commit ("main" by default)
    commit: str                       # the commit every file was read at
    endpoint: str                     # Hub URL, or the cache folder when offline
    requests: int = 0                 # HTTP requests sent, retries included (0 when read from the cache)
    bytes_read: int = 0               # response body bytes received
    stages: int = 0                   # sequential round-trip stages (requests in one stage run in parallel)
    seconds: float = 0.0
    header_bytes: int = 0             # sum over shards of 8 + header length: the least any reader must fetch
    file_bytes: int = 0               # sum of the shard files' sizes
    offline: bool = False             # read from the local Hugging Face cache, no network


@dataclass(frozen=True)
class Checkpoint:
    """What inspect needs: the config and every tensor's header entry, with index problems found on the way."""

    source: str
    config: ModelConfig
    tensors: dict[str, TensorInfo] = field(repr=False)
    files: tuple[str, ...]
    integrity_errors: tuple[str, ...] = ()
    fetch: FetchStats | None = field(default=None, compare=False)  # how a Hub repo's metadata was read


# Architectures vLLM's config convertor rewrites when config.json sets a key to a positive integer: (listed
# architectures) -> (key, the architecture vLLM builds). DeepseekV4ModelArchConfigConvertor
# (transformers_utils/model_arch_config_convertor.py, 0.30-0.34): DeepSeek-V4-Flash-Vision-Exp ships the text model's
# architecture with vision_n_layers > 0.
ARCHITECTURE_REWRITES = {("DeepseekV4ForCausalLM",): ("vision_n_layers", "DeepseekV4ForConditionalGeneration")}
# Model types whose config convertor builds another architecture, whatever config.json lists, when a key holds a
# non-empty value: model_type -> (key, the architecture vLLM builds). MimoV2ModelArchConfigConvertor (the same file,
# 0.25-0.34) builds MiMo-V2-Omni for any mimo_v2 / mimo_v2_flash config with a vision_config.
MODEL_TYPE_REWRITES = {model_type: ("vision_config", "MiMoV2OmniForCausalLM")
                       for model_type in ("mimo_v2", "mimo_v2_flash")}
# transformers' vision_feature_layer default per config class (model_type; LlavaConfig, LlavaNextConfig,
# LlavaNextVideoConfig -2, LlavaOnevisionConfig and Mistral3Config -1; 5.16-5.25 alike), and num_hidden_layers per
# vision config class (CLIPVisionConfig, SiglipVisionConfig 12, PixtralVisionConfig 24): what vLLM's
# init_vision_tower_for_llava / init_vision_tower_for_mistral3 read where config.json has no such key.
VISION_FEATURE_LAYERS = {"llava": -2, "llava_next": -2, "llava_next_video": -2, "llava_onevision": -1, "mistral3": -1}
VISION_LAYERS = {"clip_vision_model": 12, "siglip_vision_model": 12, "pixtral": 24}
# drop_vision_last_layer (minicpmv.py init_vision_module, minicpmv4_6.py: encoder.layers[:-1] when true) per model type,
# its config class's default: the tower built up to its next-to-last layer, as a vision_feature_layer of -2. MiniCPM-V /
# MiniCPM-o's remote configs default it true, transformers' MiniCPMV4_6Config false (4.7 and OCR never drop it).
DROPS_LAST_VISION_LAYER = {"minicpmv": True, "minicpmo": True, "minicpmv4_6": False}


# Config classes that hold a standard key under a name of their own (their attribute_map, or an __init__ that stores
# one key as another), which the model file reads through the standard name: model_type -> {standard key: config.json
# key, or a function of config.json giving its value}. EXAONE-3's ExaoneConfig (num_layers); vLLM's ChatGLMConfig
# (transformers_utils/configs/chatglm.py: num_layers, padded_vocab_size; chatglm.py's KV heads are
# multi_query_group_num where multi_query_attention, else the heads; its MLP ffn_hidden_size wide).
CONFIG_KEY_ALIASES: dict[str, dict[str, str | Callable[[dict], object]]] = {
    "exaone": {"num_hidden_layers": "num_layers"},
    # GPT-2 / GPT-J / GPTBigCode / BLOOM: their config classes' attribute_map (n_embd, n_head, n_layer); BLOOM's and
    # Falcon's legacy n_embed kwarg (BloomConfig / FalconConfig.__init__).
    **dict.fromkeys(("gpt2", "gptj", "gpt_bigcode"),
                    {"hidden_size": "n_embd", "num_attention_heads": "n_head", "num_hidden_layers": "n_layer"}),
    "bloom": {"hidden_size": "n_embed", "num_attention_heads": "n_head", "num_hidden_layers": "n_layer"},
    # Falcon's RW-era configs: vLLM's RWConfig attribute_map (transformers_utils/configs/falcon.py: n_layer, n_head,
    # n_head_kv).
    "falcon": {"hidden_size": "n_embed", "num_attention_heads": "n_head", "num_hidden_layers": "n_layer",
               "num_kv_heads": "n_head_kv"},
    # Whisper: the decoder is the text model fp8check lays out (whisper.py WhisperDecoder reads d_model,
    # decoder_attention_heads, decoder_layers, decoder_ffn_dim; WhisperConfig's attribute_map names the encoder's).
    "whisper": {"hidden_size": "d_model", "num_attention_heads": "decoder_attention_heads",
                "num_key_value_heads": "decoder_attention_heads", "num_hidden_layers": "decoder_layers",
                "intermediate_size": "decoder_ffn_dim"},
    "chatglm": {"num_hidden_layers": "num_layers", "vocab_size": "padded_vocab_size",
                "intermediate_size": "ffn_hidden_size",
                "num_key_value_heads": lambda doc: doc.get("multi_query_group_num", 1)
                if doc.get("multi_query_attention") else doc.get("num_attention_heads")},
    # Zamba2Config: attribute_map layer_types -> layers_block_type, head_dim -> attention_head_dim (__post_init__:
    # 2 x hidden_size // num_attention_heads, the shared attention running over the doubled hidden state).
    "zamba2": {"layer_types": "layers_block_type",
               "head_dim": lambda doc: doc.get("attention_head_dim") or (
                   2 * doc["hidden_size"] // doc["num_attention_heads"]
                   if isinstance(doc.get("hidden_size"), int) and isinstance(doc.get("num_attention_heads"), int)
                   and doc["num_attention_heads"] else None)},
    # ninth round (fam-texta): TeleChat2's remote Telechat2Config attribute_map (telechat2.py sets the same).
    "telechat": {"num_hidden_layers": "n_layer", "num_attention_heads": "n_head",
                 "intermediate_size": "ffn_hidden_size"},
    # Step-1's remote config: its KV heads num_attention_groups (step1.py reads it before num_key_value_heads).
    "step1": {"num_key_value_heads": "num_attention_groups"},
    # transformers' DbrxConfig attribute_map (d_model, n_heads, n_layers) and vLLM's
    # DbrxModelArchConfigConvertor (KV heads attn_config.kv_n_heads). Its expert count stays nested (ffn_config), where
    # get_num_experts does not look: vLLM's ModelConfig.is_moe is false for DBRX.
    "dbrx": {"hidden_size": "d_model", "num_attention_heads": "n_heads", "num_hidden_layers": "n_layers",
             "num_key_value_heads": lambda doc: (doc.get("attn_config") or {}).get("kv_n_heads")},
}


def _aliased(sizes: dict, model_type: object) -> dict:
    """`sizes` with the standard keys its config class reads under other names (CONFIG_KEY_ALIASES) filled in."""
    aliases = CONFIG_KEY_ALIASES.get(model_type) if isinstance(model_type, str) else None
    if not aliases:
        return sizes
    filled = {key: source(sizes) if callable(source) else sizes.get(source) for key, source in aliases.items()
              if key not in sizes}
    return {**sizes, **{key: value for key, value in filled.items() if value is not None}}


# Model types whose vision tower the model file builds from a fixed config, whatever config.json holds: its heads
# (phi3v.py CLIP_VIT_LARGE_PATCH14_336_CONFIG, 0.25-0.34: 16 heads of 64; phi4mm.py get_navit_vision_model's SigLIP:
# 16 heads of 72; DeepSeek-VL2's timm SigLIP-SO400M and DeepSeek-OCR's CLIP-L / 14, deepencoder.py, both 16 heads under
# model_type deepseek_vl_v2).
FIXED_VISION_HEADS = {"phi3_v": 16, "phi4mm": 16, "deepseek_vl_v2": 16}


def parse_model_config(doc: object, where: str = "config.json", hf_quant_config: object = None) -> ModelConfig:
    """config.json (`doc`), with ModelOpt's legacy hf_quant_config.json standing in for its quantization_config
    when config.json has none (vLLM's transformers_utils/config.py)."""
    if not isinstance(doc, dict):
        raise ConfigError(f"{where} must be a JSON object, got {type(doc).__name__}")
    # Qwen3-Omni nests the thinker's text, vision and audio configs in thinker_config (vLLM builds the thinker only;
    # transformers' Qwen3OmniMoeConfig.get_text_config, which vLLM's hf_text_config is, returns its text_config).
    thinker = doc.get("thinker_config")
    multimodal = thinker if isinstance(thinker, dict) else doc
    # NVIDIA's Nemotron VL configs and InternVL's (internvl_chat, h2ovl_chat, skywork_chat), both remote code, nest
    # the text model as llm_config, which vLLM renames text_config (transformers_utils/config.py
    # _CONFIG_ATTRS_MAPPING, where text_config is absent); DeepSeek-VL2's / DeepSeek-OCR's as language_config, which
    # vLLM's DeepseekVLV2Config reads into text_config (transformers_utils/configs/deepseek_vl2.py).
    text = multimodal.get("text_config", multimodal.get("llm_config", multimodal.get("language_config")))
    # Multimodal configs keep the decoder's sizes in text_config; quantization_config stays at the top.
    sizes = _aliased(text if isinstance(text, dict) and "hidden_size" in text else doc, doc.get("model_type"))

    def opt_int(key: str, section: dict | None = None, minimum: int = 1) -> int | None:
        value = (sizes if section is None else section).get(key)
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            kind = "a positive" if minimum else "a non-negative"
            raise ConfigError(f"{where}: {key} must be {kind} integer, got {shown(value)}")
        return value

    # Kimi-K3's routed_expert_hidden_size (nvidia/model.py KimiMoE), Muse-Spark's moe_hidden_size (amd/model.py
    # MuseSparkMoE: the experts run between its pre_expert_proj / post_expert_proj pooling linears).
    moe_hidden_key = next((k for k in ("routed_expert_hidden_size", "moe_hidden_size") if sizes.get(k) is not None),
                          None)
    archs = doc.get("architectures") or []
    # Both are printed in notes: control characters (terminal escapes) in them are refused, not echoed.
    if not isinstance(archs, list) or not all(isinstance(a, str) and is_printable(a) for a in archs):
        raise ConfigError(f"{where}: architectures must be a list of printable strings, got {shown(archs)}")
    rewrite = ARCHITECTURE_REWRITES.get(tuple(archs))
    if rewrite and _positive_int(doc.get(rewrite[0])):
        archs = [rewrite[1]]
    model_type = doc.get("model_type", "")
    if not isinstance(model_type, str) or not is_printable(model_type):
        raise ConfigError(f"{where}: model_type must be a printable string, got {shown(model_type)}")
    type_rewrite = MODEL_TYPE_REWRITES.get(model_type)
    if type_rewrite and doc.get(type_rewrite[0]):
        archs = [type_rewrite[1]]
    # transformers 5 writes "dtype", older versions "torch_dtype".
    dtype = doc.get("dtype", doc.get("torch_dtype", sizes.get("dtype", sizes.get("torch_dtype"))))
    if dtype is not None and not isinstance(dtype, str):
        raise ConfigError(f"{where}: dtype must be a string such as 'bfloat16', got {shown(dtype)}")
    raw_quant = doc.get("quantization_config", doc.get("compression_config"))
    quant_where = f"{where}: quantization_config"
    if raw_quant is None and hf_quant_config is not None:
        raw_quant, quant_where = hf_quant_config, HF_QUANT_CONFIG
    heads = opt_int("num_attention_heads")
    # MiniMax-M3 names its dense MLP's width dense_intermediate_size (intermediate_size is the experts'), Cohere2-MoE
    # prefix_dense_intermediate_size (cohere2_moe.py Cohere2MoeMLP: intermediate_size where it is null or absent).
    dense = ("dense_intermediate_size" if "dense_intermediate_size" in sizes else "prefix_dense_intermediate_size"
             if _positive_int(sizes.get("prefix_dense_intermediate_size")) else "intermediate_size")
    vision_doc = _vision_config(multimodal)
    vision: dict = {**_radio_sizes(vision_doc), **vision_doc} if isinstance(vision_doc, dict) else {}
    vision_type = vision["model_type"] if isinstance(vision.get("model_type"), str) else ""
    # (MiDashengLM nests its Dasheng encoder's as audio_encoder_config)
    audio_doc = multimodal.get("audio_config", multimodal.get("audio_encoder_config"))
    audio = audio_doc if isinstance(audio_doc, dict) else {}
    return ModelConfig(
        architectures=tuple(archs),
        model_type=model_type,
        dtype=dtype,
        hidden_size=opt_int("hidden_size"),
        num_attention_heads=heads,
        # Step-3 / Step-3.5 name the KV heads num_attention_groups (step3_text.py, step3p5.py read that key).
        num_key_value_heads=_multi_query_kv_heads(sizes, model_type, opt_int) or opt_int("num_key_value_heads")
        or opt_int("num_attention_groups") or heads,
        head_dim=opt_int("head_dim", minimum=0) or None,  # 0: none given (GLM-5-Next's MLA config writes it)
        num_hidden_layers=opt_int("num_hidden_layers"),
        quantization_config=parse_quant_config(raw_quant, quant_where),
        raw_quantization_config=raw_quant if isinstance(raw_quant, dict) else None,
        q_lora_rank=opt_int("q_lora_rank"),
        num_nextn_predict_layers=opt_int("num_nextn_predict_layers", minimum=0) or 0,
        num_mtp_modules=opt_int("num_mtp_modules", minimum=0) or 0,
        first_k_dense_replace=opt_int("first_k_dense_replace", minimum=0),
        moe_hidden_size=opt_int(moe_hidden_key) if moe_hidden_key else None,
        moe_hidden_key=moe_hidden_key,
        embedding_size=opt_int("word_embed_proj_dim") if model_type == "opt" else None,
        # Kimi-K3.1 nests it in dsa_config (vLLM's KimiLinearConfig copies dsa_config.index_topk up to index_topk).
        index_topk=opt_int("index_topk") or (opt_int("index_topk", sizes["dsa_config"])
                                             if isinstance(sizes.get("dsa_config"), dict) else None),
        o_groups=opt_int("o_groups"),
        learnable_sink=sizes["learnable_sink"] if isinstance(sizes.get("learnable_sink"), bool) else None,
        swa_sinks=sizes.get("add_swa_attention_sink_bias") is True,
        mla_dims=_mla_dims(opt_int),
        vocab_size=opt_int("vocab_size"),
        num_kv_shared_layers=opt_int("num_kv_shared_layers", minimum=0) or 0,
        loop_num=opt_int("loop_num", minimum=1) or 2, loop_window_size=opt_int("loop_window_size", minimum=1) or 64,
        intermediate_size=sizes.get(dense) if _positive_int(sizes.get(dense)) else None,
        mamba=_mamba_sizes(opt_int, sizes, model_type),
        gated_delta_net=_gated_delta_net_sizes(opt_int),
        heads_per_layer=_int_list(sizes, "num_attention_heads_per_layer", where) or _sliding_heads(sizes, heads),
        limited_moe_layers=tuple(i for i, limit in enumerate(
            sizes.get("swiglu_limits") or sizes.get("expert_swiglu_limit_list") or ()) if limit),
        swiglu_limit=_number(sizes, "swiglu_limit", where),
        engram_hash_heads=((opt_int("engram_max_ngram_size") or 1) - 1) * (opt_int("engram_n_heads") or 0)
        if sizes.get("engram_layer_ids") else None,
        group_norm_size=opt_int("group_norm_size"),
        # Llama-4 / Pixtral / SigLIP call it num_attention_heads, Qwen2.5-VL / Qwen3-VL num_heads, Step's
        # PerceptionEncoder (step_vl.py) heads, Kimi-K3's KimiK3VisionConfig (vLLM transformers_utils/configs/
        # kimi_k3.py) vt_num_attention_heads; DeepSeek-V4's vision keys are flat (vision_n_heads).
        vision_heads=(opt_int("num_attention_heads", vision) or opt_int("num_heads", vision) or opt_int("heads", vision)
                      or opt_int("vt_num_attention_heads", vision) or opt_int("vision_n_heads", doc)
                      or FIXED_VISION_HEADS.get(model_type)),
        vision_kv_heads=opt_int("num_key_value_heads", vision),
        vision_hidden_size=opt_int("hidden_size", vision),
        vision_intermediate_size=opt_int("intermediate_size", vision),
        vision_model_type=vision_type,
        vision_layers=opt_int("num_hidden_layers", vision) or VISION_LAYERS.get(vision_type),
        vision_feature_layers=_feature_layers(multimodal, model_type, where),
        audio_hidden_size=opt_int("hidden_size", audio),
        # (an encoder-decoder's own encoder_attention_heads where no audio_config nests them: Whisper; GLM-ASR's
        # GlmAsrEncoderConfig calls them num_attention_heads, MiDashengLM's DashengConfig num_heads)
        audio_heads=(opt_int("encoder_attention_heads", audio if audio else doc)
                     or opt_int("num_attention_heads", audio) or opt_int("num_heads", audio)),
        router_keys=tuple((key, sizes[key]) for key in ROUTER_KEYS if isinstance(sizes.get(key), (str, bool, int))),
        expert_counts=tuple((key, tuple(sizes[key]) if isinstance(sizes[key], list) else sizes[key])
                            for key in EXPERT_ALIASES if key in sizes),
        sliding=_sliding_keys(sizes, model_type, opt_int, where),
        **_text_model(text if isinstance(text, dict) else None, where),
        expert_dtype=_expert_dtype(sizes, model_type, raw_quant),
        kv_lora_rank=opt_int("kv_lora_rank"),
        kv_source_layers=_int_list(sizes, "kv_source_layers", where, minimum=0) or (),
        attention_geometry=_attention_geometry(sizes, opt_int, where),
        fused_qkv_layout=sizes.get("attention_projection_layout") == "fused_qkv",
        version=_version(doc.get("version")) or _minicpmv_default_version(doc),
    )




# A RADIO vision_config (NVIDIA's remote-code RADIOConfig) names its ViT in args.model; vLLM's RadioConfig sizes the
# tower from it: (hidden_size, num_hidden_layers, num_attention_heads, intermediate_size), VIT_TIMM_DIM_BY_NAME of
# vllm/transformers_utils/configs/radio.py (0.25-0.34).
RADIO_VIT_SIZES = {"vit_small_patch16_224": (384, 12, 6, 1536), "vit_base_patch16_224": (768, 12, 12, 3072),
                   "vit_large_patch16_224": (1024, 24, 16, 4096), "vit_huge_patch16_224": (1280, 32, 16, 5120),
                   "vit_so400m_patch16_224": (1152, 27, 16, 4304)}


def _radio_sizes(vision: dict) -> dict:
    """The sizes vLLM's RadioConfig gives a RADIO vision_config's args.model (RADIO_VIT_SIZES), {} for another."""
    args = vision.get("args")
    model = args.get("model") if isinstance(args, dict) else None
    sizes = RADIO_VIT_SIZES.get(model) if isinstance(model, str) else None
    return dict(zip(("hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size"), sizes)) \
        if sizes else {}


def _attention_geometry(sizes: dict, opt_int: Callable[..., int | None],
                        where: str) -> tuple[tuple[int, int, int, int], ...] | None:
    """MiMo-V2's per-layer attention geometry (ModelConfig.attention_geometry): mimo_v2.py MiMoV2FlashDecoderLayer
    builds a layer whose hybrid_layer_pattern entry is 1 with swa_num_attention_heads, swa_num_key_value_heads,
    swa_head_dim, swa_v_head_dim, the others with num_attention_heads, num_key_value_heads, head_dim, v_head_dim."""
    pattern = _int_list(sizes, "hybrid_layer_pattern", where, minimum=0)
    if not pattern:
        return None
    heads, kv_heads, head_dim = (opt_int(key) for key in ("num_attention_heads", "num_key_value_heads", "head_dim"))
    swa_heads, swa_kv_heads, swa_head_dim = (opt_int(f"swa_{key}")
                                             for key in ("num_attention_heads", "num_key_value_heads", "head_dim"))
    if not (heads and kv_heads and head_dim and swa_heads and swa_kv_heads and swa_head_dim):
        return None
    full = (heads, kv_heads, head_dim, opt_int("v_head_dim") or head_dim)
    sliding = (swa_heads, swa_kv_heads, swa_head_dim, opt_int("swa_v_head_dim") or swa_head_dim)
    return tuple(sliding if kind == 1 else full for kind in pattern)


def _expert_dtype(sizes: dict, model_type: str, raw_quant: object) -> str | None:
    """config.json's expert_dtype (DeepSeek-V4), or, for DeepSeek-V4.1, its quantization_config's, which its config
    class copies when the config has none (transformers_utils/configs/deepseek_v41.py, 0.30-0.34)."""
    value = sizes.get("expert_dtype")
    if value is None and model_type == "deepseek_v41" and isinstance(raw_quant, dict):
        value = raw_quant.get("expert_dtype")
    return value if isinstance(value, str) and is_printable(value) else None


def _minicpmv_default_version(doc: dict) -> str | None:
    """minicpmv.py get_version_by_config for a config without a version: 2.0 where hidden_size is 2304 and query_num
    64 (the old MiniCPM-V 2 configs), else 2.5 (None here: the entries' default)."""
    if doc.get("model_type") == "minicpmv" and doc.get("hidden_size") == 2304 and doc.get("query_num") == 64:
        return "2.0"
    return None


def _version(value: object) -> str | None:
    """config.json's version as the model file's str(config.version) reads it (a JSON number or string), printable."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)) or not is_printable(str(value)):
        return None
    return str(value)


def _vision_config(doc: dict) -> object:
    """The vision tower's config: vision_config, or where a family nests it otherwise, Ovis2.5's vit_config and
    Ovis's visual_tokenizer_config.backbone_config (vLLM's OvisConfig)."""
    tokenizer = doc.get("visual_tokenizer_config")
    backbone = tokenizer.get("backbone_config") if isinstance(tokenizer, dict) else None
    return doc.get("vision_config", doc.get("vit_config", backbone))


def _text_model(text: dict | None, where: str) -> dict:
    """text_config's architectures and model_type (ModelConfig.text_architectures / text_model_type), checked."""
    if text is None:
        return {}
    archs, model_type = text.get("architectures") or [], text.get("model_type", "")
    if not isinstance(archs, list) or not all(isinstance(a, str) and is_printable(a) for a in archs):
        raise ConfigError(f"{where}: text_config.architectures must be a list of printable strings, got {shown(archs)}")
    if not isinstance(model_type, str) or not is_printable(model_type):
        raise ConfigError(f"{where}: text_config.model_type must be a printable string, got {shown(model_type)}")
    return dict(text_architectures=tuple(archs), text_model_type=model_type)


def _feature_layers(doc: dict, model_type: str, where: str) -> tuple[int, ...]:
    """vision_feature_layer as a tuple (one index, or the list LLaVA-NeXT's Granite-Vision configs give), the config
    class's default where absent (VISION_FEATURE_LAYERS); MiniCPM's drop_vision_last_layer (DROPS_LAST_VISION_LAYER)."""
    if model_type in DROPS_LAST_VISION_LAYER:
        return (-2,) if doc.get("drop_vision_last_layer", DROPS_LAST_VISION_LAYER[model_type]) else (-1,)
    value = doc.get("vision_feature_layer", VISION_FEATURE_LAYERS.get(model_type))
    if value is None:
        return ()
    values = value if isinstance(value, list) else [value]
    if not values or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        raise ConfigError(f"{where}: vision_feature_layer must be an integer or a list of integers, got {shown(value)}")
    return tuple(values)


def _mla_dims(opt_int) -> tuple[int, int, int] | None:
    """(qk_nope_head_dim, qk_rope_head_dim, v_head_dim), or None unless all three are given (a rope of 0: NoPE) or
    when both QK dims are 0 (deepseek_v2.py's use_mha, plain attention: DeepSeek-OCR's and Unlimited-OCR-2's text
    configs)."""
    if opt_int("qk_nope_head_dim", minimum=0) == 0 and opt_int("qk_rope_head_dim", minimum=0) == 0:
        return None
    nope, rope, v = opt_int("qk_nope_head_dim"), opt_int("qk_rope_head_dim", minimum=0), opt_int("v_head_dim")
    return None if nope is None or rope is None or v is None else (nope, rope, v)


def _positive_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _int_list(sizes: dict, key: str, where: str, minimum: int = 1) -> tuple[int, ...] | None:
    """A list of integers >= minimum (positive by default) from the text config, or None when absent."""
    value = sizes.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= minimum
                                              for v in value):
        kind = "positive integers" if minimum == 1 else f"integers >= {minimum}"
        raise ConfigError(f"{where}: {key} must be a list of {kind}, got {shown(value)}")
    return tuple(value)


def _number(sizes: dict, key: str, where: str) -> float | None:
    """A number from the text config, or None when absent or null."""
    value = sizes.get(key)
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
        raise ConfigError(f"{where}: {key} must be a number or null, got {shown(value)}")
    return float(value)


def _multi_query_kv_heads(sizes: dict, model_type: str, opt_int: Callable[..., int | None]) -> int | None:
    """The KV heads of the families that derive them from flags: falcon.py FalconAttention takes config.num_kv_heads
    with new_decoder_architecture (Falcon-40B / 180B; FalconConfig defaults it to the heads), one KV head with
    multi_query (FalconConfig's default true: Falcon-7B), else every head; GPTBigCodeConfig sets num_key_value_heads to
    one under multi_query (its default true: StarCoder), which the Transformers backend's Attention takes. None: the
    config's keys (num_key_value_heads, ...) decide."""
    if model_type == "falcon":
        if sizes.get("new_decoder_architecture") is True:
            return opt_int("num_kv_heads") or opt_int("num_attention_heads")
        return 1 if sizes.get("multi_query", True) is not False else opt_int("num_attention_heads")
    if model_type == "gpt_bigcode":
        return 1 if sizes.get("multi_query", True) is not False else opt_int("num_attention_heads")
    return None


def _sliding_heads(sizes: dict, heads: int | None) -> tuple[int, ...] | None:
    """Step-3.5's heads per layer: num_sliding_attention_heads (remote-code configs: attention_other_setting's
    num_attention_heads) on its sliding_attention layers, num_attention_heads on the others (step3p5.py
    _get_num_attention_heads, transformers' Step3p7TextConfig); Step-5's swa_num_attention_heads first
    (models/step5/nvidia/model.py Step5Attention overrides the others with it); MiMo-V2's swa_num_attention_heads on
    the layers its hybrid_layer_pattern marks 1 where no layer_types is given; None without any of them."""
    other = sizes.get("attention_other_setting")
    legacy = other.get("num_attention_heads") if isinstance(other, dict) and \
        other.get("attention_type") == "sliding_attention" else None
    sliding_heads = sizes.get("swa_num_attention_heads") or sizes.get("num_sliding_attention_heads") or legacy
    layer_types, pattern = sizes.get("layer_types"), sizes.get("hybrid_layer_pattern")
    if not _positive_int(sliding_heads) or not heads:
        return None
    if isinstance(layer_types, list):
        return tuple(sliding_heads if kind == "sliding_attention" else heads for kind in layer_types)
    if isinstance(pattern, list):  # MiMo-V2 (mimo_v2.py is_compressed_softmax_layer: its 1 layers are the sliding ones)
        return tuple(sliding_heads if kind == 1 else heads for kind in pattern)
    return None


def _mamba_sizes(opt_int: Callable[..., int | None], sizes_doc: dict,
                 model_type: str) -> tuple[int, int, int, int] | None:
    """MambaMixer2's sizes from the text config, or None when it has no Mamba heads: Nemotron-H's keys, Mamba-2's
    (mamba2.py: num_heads, head_dim, n_groups, state_size; transformers' Mamba2Config defaults 128, 64, 8, 128;
    Codestral Mamba's params.json, model_type mamba, gives all four, a Mamba-1 config.json none), else
    Granite-4.0-H's and Falcon-H1's (granitemoehybrid.py, falcon_h1.py: mamba_n_heads, mamba_d_head, mamba_n_groups,
    mamba_d_state; their config classes default groups 1, state 256, and a head size of mamba_expand (2) x
    hidden_size / heads), Zamba2's (n_mamba_heads, mamba_ngroups, mamba_d_state)."""
    sizes = tuple(opt_int(key) for key in ("mamba_num_heads", "mamba_head_dim", "n_groups", "ssm_state_size"))
    if all(sizes):
        return sizes  # type: ignore[return-value]
    if model_type == "mamba2":
        return (opt_int("num_heads") or 128, opt_int("head_dim") or 64, opt_int("n_groups") or 8,
                opt_int("state_size") or 128)
    if model_type == "mamba":
        mamba2 = tuple(opt_int(key) for key in ("num_heads", "head_dim", "n_groups", "state_size"))
        return mamba2 if all(mamba2) else None  # type: ignore[return-value]
    if model_type == "zamba2":  # zamba2.py: n_mamba_heads of mamba_expand x hidden / heads (Zamba2Config's defaults)
        mamba_heads, hidden_size = opt_int("n_mamba_heads") or 8, opt_int("hidden_size")
        return (mamba_heads, (opt_int("mamba_expand") or 2) * hidden_size // mamba_heads,
                opt_int("mamba_ngroups") or 1, opt_int("mamba_d_state") or 64) if hidden_size else None
    heads, hidden = opt_int("mamba_n_heads"), opt_int("hidden_size")
    if not heads or not hidden:
        return None
    head_dim = opt_int("mamba_d_head") if sizes_doc.get("mamba_d_head") != "auto" else None
    head_dim = head_dim or (opt_int("mamba_expand") or 2) * hidden // heads
    return heads, head_dim, opt_int("mamba_n_groups") or 1, opt_int("mamba_d_state") or 256


def _gated_delta_net_sizes(opt_int: Callable[..., int | None]) -> tuple[int, int] | None:
    """The gated-delta-net's key and value widths from the text config, or None when it has none."""
    sizes = [opt_int(key) for key in ("linear_num_key_heads", "linear_key_head_dim", "linear_num_value_heads",
                                      "linear_value_head_dim")]
    if not all(sizes):
        return None
    k_heads, k_dim, v_heads, v_dim = sizes
    return k_heads * k_dim, v_heads * v_dim  # type: ignore[operator]


def _sliding_keys(sizes: dict, model_type: str, opt_int: Callable[..., int | None], where: str) -> SlidingKeys:
    """The sliding-window keys of the text config (`sizes`), type-checked."""
    layer_types = sizes.get("layer_types")
    if layer_types is not None:
        if not isinstance(layer_types, list) or not all(isinstance(t, str) and is_printable(t) for t in layer_types):
            raise ConfigError(f"{where}: layer_types must be a list of printable strings, got {shown(layer_types)}")
        layers = sizes.get("num_hidden_layers")
        if isinstance(layers, int) and len(layer_types) < layers:
            raise ConfigError(f"{where}: layer_types lists {len(layer_types)} layers, fewer than num_hidden_layers "
                              f"({layers})")
        layer_types = tuple(layer_types)
    use = sizes.get("use_sliding_window")
    if use is not None and not isinstance(use, bool):
        raise ConfigError(f"{where}: use_sliding_window must be true or false, got {shown(use)}")
    text_type = sizes.get("model_type")  # a multimodal config's text_config names its own config class
    config_type = text_type if isinstance(text_type, str) else model_type
    return SlidingKeys(
        model_type=config_type,
        **_window(sizes, config_type, opt_int),
        layer_types=layer_types, use_sliding_window=use,
        max_window_layers=opt_int("max_window_layers", minimum=0),
        sliding_window_pattern=_window_pattern(sizes, config_type, opt_int, where),
        hybrid_layer_pattern=_int_list(sizes, "hybrid_layer_pattern", where, minimum=0),
        sliding_window_size=opt_int("sliding_window_size", minimum=0),
        dense_prefix=opt_int("first_k_dense_replace", minimum=0) if config_type == "cohere2_moe" else None,
        dense_prefix_pattern=opt_int("prefix_dense_sliding_window_pattern", minimum=1),
        left_windows=_left_windows(sizes, where),
    )


def _left_windows(sizes: dict, where: str) -> tuple[int, ...] | None:
    """window_sizes' first entries ([left, right] a layer, integers >= 0), or None when absent."""
    value = sizes.get("window_sizes")
    if value is None:
        return None
    if not isinstance(value, list) or not all(
            isinstance(pair, list) and pair and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                                    for v in pair) for pair in value):
        raise ConfigError(f"{where}: window_sizes must be a list of [left, right] integer pairs, got {shown(value)}")
    return tuple(pair[0] for pair in value)


# Config classes whose sliding_window_pattern may be letters (Exaone4Config / ExaoneMoeConfig: `str | int`, "LLLG": L a
# local (sliding) layer, G a global one, written beside layer_types; EXAONE-4.5's text_config "exaone4_5_text" is read
# as exaone4). What vLLM makes of them is fp8check.core.model.layouts.attention_windows.
LETTER_PATTERNS = frozenset({"exaone4", "exaone4_5_text", "exaone_moe"})
# Config classes that name the pattern otherwise (AfmoeConfig: every global_attn_every_n_layers-th layer full).
PATTERN_KEYS = {"afmoe": "global_attn_every_n_layers"}


# Config classes that read the window under another key: PLaMo-3's remote Plamo3Config (configuration_plamo3.py)
# takes window_size, which a legacy sliding_window overrides (an integer, or a list whose windows are all one).
WINDOW_KEYS = {"plamo3": "window_size"}


def _window(sizes: dict, model_type: str, opt_int: Callable[..., int | None]) -> dict:
    """SlidingKeys' sliding_window and sliding_window_given, read under the config class's key."""
    key = WINDOW_KEYS.get(model_type)
    if key is None:
        return {"sliding_window": opt_int("sliding_window", minimum=0),
                "sliding_window_given": "sliding_window" in sizes}
    legacy = sizes.get("sliding_window")
    windows = {w for w in legacy if w is not None} if isinstance(legacy, list) else set()
    if len(windows) == 1 and all(isinstance(w, int) and not isinstance(w, bool) and w >= 0 for w in windows):
        return {"sliding_window": windows.pop(), "sliding_window_given": True}
    if isinstance(legacy, int) and not isinstance(legacy, bool):
        return {"sliding_window": opt_int("sliding_window", minimum=0), "sliding_window_given": True}
    return {"sliding_window": opt_int(key, minimum=0), "sliding_window_given": key in sizes}


def _window_pattern(sizes: dict, model_type: str, opt_int: Callable[..., int | None], where: str) -> int | str | None:
    """sliding_window_pattern: a positive integer, or letters where the config class takes them."""
    key = PATTERN_KEYS.get(model_type, "sliding_window_pattern")
    pattern = sizes.get(key)
    if isinstance(pattern, str) and model_type in LETTER_PATTERNS:
        if not pattern or set(pattern) - {"L", "G"}:
            raise ConfigError(f"{where}: sliding_window_pattern must be a positive integer or letters L / G, got "
                              f"{shown(pattern)}")
        return pattern
    return opt_int(key)


def load_json(path: str, name: str) -> object:
    try:
        fh, _ = open_regular(path, name)  # a FIFO named config.json would block a plain open() forever
        with fh:
            data = fh.read(MAX_JSON_BYTES + 1)  # parse_json refuses anything longer
    except FileNotFoundError:
        raise CheckpointFileError(name, "not found") from None
    except OSError as exc:
        raise CheckpointFileError(name, f"cannot read: {exc.strerror or exc}") from None
    return parse_json(data, name)


def parse_json(data: bytes, name: str) -> object:
    """JSON metadata (config.json, the index) from bytes, read locally or fetched from the Hub."""
    if len(data) > MAX_JSON_BYTES:
        raise CheckpointFileError(name, f"{len(data)} bytes is too large for a JSON metadata file")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CheckpointFileError(name, f"not valid JSON: {printable(str(exc), 160)}") from None


def parse_index(doc: object, name: str = INDEX_FILE) -> dict[str, str]:
    """weight_map of an index file: tensor name -> shard file, each a plain relative path."""
    if not isinstance(doc, dict) or not isinstance(doc.get("weight_map"), dict):
        raise CheckpointFileError(name, "must be a JSON object with a 'weight_map' object")
    weight_map = doc["weight_map"]
    if not weight_map:
        raise CheckpointFileError(name, "weight_map is empty: the index lists no tensors")
    try:
        shards = set(weight_map.values())
    except TypeError:  # a list or an object: no file name
        shards = None
    if shards is not None and set(map(type, shards)) != {str}:  # JSON has no str subclass
        shards = None
    for shard in shards or ():  # each distinct file once; the tensor naming it is looked up only for a message
        problem = path_problem(shard)
        if problem:
            raise CheckpointFileError(name, f"a weight_map entry ({_first_key(weight_map, shard)}) = "
                                      f"{printable(shard)!r} {problem}")
    if shards is None or "" in shards:
        for tensor, shard in weight_map.items():
            if not isinstance(shard, str) or not shard:
                raise CheckpointFileError(name, f"weight_map[{printable(tensor)!r}] must be a file name, got {shown(shard)}")
    return weight_map


def _first_key(weight_map: dict, shard: str) -> str:
    return printable(next(k for k, v in weight_map.items() if v == shard))


def path_problem(rel: str) -> str | None:
    """Why a relative path from a checkpoint may not be read, or None: absolute paths and any '..' component
    could point outside the model; control characters would be echoed into reports."""
    parts = rel.replace("\\", "/").split("/")
    if rel.startswith(("/", "\\")) or (len(rel) > 1 and rel[1] == ":") or ".." in parts or "\x00" in rel:
        return "points outside the model folder; refusing to read it"
    if not is_printable(rel):
        return "holds control or invisible characters; refusing it"
    return None


def check_relative_path(rel: str, name: str, what: str) -> None:
    """Refuse absolute paths and any '..' component: an index must never point outside the model."""
    problem = path_problem(rel)
    if problem:
        raise CheckpointFileError(name, f"{what} = {printable(rel)!r} {problem}")


def cross_check_index(weight_map: dict[str, str], headers: list[SafetensorsHeader], index_name: str) -> list[str]:
    """Index and shards must agree both ways: a stale index can hide a missing scale (vllm#57108).

    They agree exactly when the index maps every tensor of every shard to that shard (so no tensor is in two
    shards) and lists no more tensors than the shards hold: one lookup per tensor, column-wise. Only a
    disagreement is then looked for tensor by tensor, to name it."""
    if sum(len(h.tensors) for h in headers) == len(weight_map) and all(
            list(map(weight_map.get, h.tensors)) == [h.file] * len(h.tensors) for h in headers):
        return []
    errors = []
    by_file = {h.file: h for h in headers}
    for tensor, shard in weight_map.items():
        if tensor not in by_file[shard].tensors:
            errors.append(f"{index_name} lists tensor {printable(tensor)!r} in {shard}, but {shard} does not contain it")
    for header in headers:
        for tensor in header.tensors:
            listed = weight_map.get(tensor)
            if listed != header.file:
                where = f"lists it in {listed}" if listed else "does not list it"
                errors.append(f"{header.file} holds tensor {printable(tensor)!r} but {index_name} {where}")
    return errors


def merge_headers(headers: list[SafetensorsHeader]) -> dict[str, TensorInfo]:
    """Every shard's tensors in one map; a name in two shards is refused (the first repeat, in shard order)."""
    tensors: dict[str, TensorInfo] = {}
    for header in headers:
        tensors.update(header.tensors)
    if len(tensors) == sum(len(h.tensors) for h in headers):
        return tensors
    tensors = {}
    for header in headers:
        for name, info in header.tensors.items():
            if name in tensors:
                raise CheckpointFileError(header.file, f"tensor {printable(name)!r} also appears in {tensors[name].file}")
            tensors[name] = info
    return tensors


def mistral_format_error(where: str, listing) -> InputError | None:
    """The refusal of a folder with params.json but neither config.json nor consolidated*.safetensors, which no
    format of vLLM's reads (get_config: "Could not detect config format"); None when the listing is not one."""
    if "config.json" in listing or MISTRAL_PARAMS not in listing or is_mistral_format(listing):
        return None
    return InputError(f"{where}: {MISTRAL_PARAMS} without consolidated*.safetensors (a Mistral-format checkpoint "
                      "needs both) and no config.json: neither format vLLM reads")


def rename_tensors(tensors: dict[str, TensorInfo], names: dict[str, str], where: str) -> dict[str, TensorInfo]:
    """The tensors under the names the model class loads them as (`names`: checkpoint name -> vLLM's); two
    checkpoint names that land on one are refused, as the second would overwrite the first on load."""
    renamed: dict[str, TensorInfo] = {}
    for name, info in tensors.items():
        new = names[name]
        if new in renamed:
            raise CheckpointFileError(where, f"tensors {printable(renamed[new].name)!r} and {printable(name)!r} both "
                                             f"load as {printable(new)!r}")
        renamed[new] = info._replace(name=new)
    return renamed


def safetensors_files(folder: str, listing: list[str]) -> tuple[str | None, list[str]]:
    """Choose which files to read from a folder listing: (index file or None, shard files)."""
    names = set(listing)
    if INDEX_FILE in names:
        return INDEX_FILE, []
    if SINGLE_FILE in names:
        return None, [SINGLE_FILE]
    shards = sorted(n for n in names if n.endswith(".safetensors") and not n.startswith("consolidated"))
    if not shards:
        shards = sorted(n for n in names if n.endswith(".safetensors"))
    if shards:
        return None, shards
    pickles = sorted(n for n in names if n.endswith(PICKLE_SUFFIXES))
    if pickles:
        raise InputError(
            f"{folder}: only pickle checkpoints found ({', '.join(pickles[:3])}); fp8check reads safetensors only "
            "and never unpickles (unpickling runs arbitrary code). Convert the model to safetensors first."
        )
    raise InputError(f"{folder}: no safetensors files found (expected {SINGLE_FILE} or {INDEX_FILE})")


def index_shards(weight_map: dict[str, str]) -> list[str]:
    """The shard files an index refers to, in the order they are read."""
    return sorted(set(weight_map.values()))


def assemble_checkpoint(source: str, config: ModelConfig, headers: list[SafetensorsHeader],
                        weight_map: dict[str, str] | None = None, index_name: str | None = None,
                        fetch: FetchStats | None = None) -> Checkpoint:
    """The one place a Checkpoint is built, whether the headers came from a folder or from the Hub."""
    errors = cross_check_index(weight_map, headers, index_name or INDEX_FILE) if weight_map is not None else []
    return Checkpoint(
        source=source, config=config, tensors=merge_headers(headers), files=tuple(h.file for h in headers),
        integrity_errors=tuple(errors), fetch=fetch,
    )


@contextmanager
def paused_gc():
    """Pause Python's cycle collector while a giant checkpoint's ~100k header entries are built and routed.

    They hold no reference cycles, yet each collection would walk all of them again (a third of inspect's time
    on a DeepSeek-V3-sized checkpoint). On exit, freeze + unfreeze moves every survivor straight to the oldest
    generation, so nothing walks them at once either; the collector then runs as before.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()


@paused_gc()
def open_local(folder: str, allowed_root: str | None = None, source: str | None = None) -> Checkpoint:
    """Read config.json, the index (if any) and every shard header of a local folder.

    `allowed_root` is where resolved files may live (default: the folder itself); the Hugging Face cache
    passes the repo's cache folder because its snapshot files are symlinks into ../../blobs. `source`
    (default: the folder) is the name reports show.
    """
    if not os.path.isdir(folder):
        raise InputError(f"{folder}: not a folder")
    root = os.path.realpath(allowed_root or folder)
    real_folder = root if allowed_root is None else os.path.realpath(folder)
    listing = os.listdir(folder)
    if is_mistral_format(listing):
        try:
            return _open_mistral(folder, listing, root, real_folder, source)
        except NotLaidOut:
            # Beside config.json, the HF-format files are read: what `vllm serve --config-format hf --load-format hf`
            # reads (vLLM's default is the Mistral format, which fp8check does not lay out for such a model).
            if "config.json" not in listing:
                raise
    if refusal := mistral_format_error(folder, listing):
        raise refusal
    hf_quant = None  # ModelOpt <= 0.29 keeps its quantization config beside config.json
    if HF_QUANT_CONFIG in listing:
        hf_quant = load_json(_inside(folder, HF_QUANT_CONFIG, root, real_folder), HF_QUANT_CONFIG)
    config = parse_model_config(load_json(_inside(folder, "config.json", root, real_folder), "config.json"),
                                hf_quant_config=hf_quant)
    index_name, shard_names = safetensors_files(folder, listing)
    weight_map = None
    if index_name:
        weight_map = parse_index(load_json(_inside(folder, index_name, root, real_folder), index_name), index_name)
        shard_names = index_shards(weight_map)
    headers = [read_header(_inside(folder, name, root, real_folder), name) for name in shard_names]
    if not any(h.tensors for h in headers):  # else the report would read "OK: 0 linear modules"
        raise CheckpointFileError(", ".join(shard_names), "holds no tensors at all")
    return assemble_checkpoint(source or folder, config, headers, weight_map, index_name)


def mistral_config(params: object, config_json: object = None) -> ModelConfig:
    """A Mistral-format checkpoint's config (fp8check.core.checkpoint.mistral): params.json adapted as vLLM 0.34
    adapts it, config.json's keys (when there is one) as defaults, and what vLLM 0.25-0.33 (or every release)
    refuse in it."""
    defaults = {} if config_json is None else config_json
    if not isinstance(params, dict) or not isinstance(defaults, dict):
        raise ConfigError(f"{MISTRAL_PARAMS} and config.json must be JSON objects")
    adapted = hf_config(params, defaults)
    return parse_model_config(adapted, MISTRAL_PARAMS)._replace(errors_before_034=errors_before_034(params),
                                                                mistral_errors=errors_every_release(adapted))


def vllm_named(checkpoint: Checkpoint) -> Checkpoint:
    """A Mistral-format checkpoint's tensors under the names its model class loads them as."""
    config = checkpoint.config
    names = checkpoint_names(config.architectures[0], checkpoint.tensors,
                             config.text_architectures[0] if config.text_architectures else None)
    return replace(checkpoint, tensors=rename_tensors(checkpoint.tensors, names, ", ".join(checkpoint.files)))


def _open_mistral(folder: str, listing: list[str], root: str, real_folder: str, source: str | None) -> Checkpoint:
    """A Mistral-format folder as vLLM reads it: mistral_config, then consolidated*.safetensors (those
    consolidated.safetensors.index.json lists, when present: weight_utils.filter_duplicate_safetensors_files),
    each tensor under the name the model class loads it as."""
    config_json = load_json(_inside(folder, "config.json", root, real_folder), "config.json") \
        if "config.json" in listing else None
    config = mistral_config(load_json(_inside(folder, MISTRAL_PARAMS, root, real_folder), MISTRAL_PARAMS), config_json)
    shard_names, weight_map, index_name = consolidated_files(listing), None, None
    if CONSOLIDATED_INDEX in listing:
        index_name = CONSOLIDATED_INDEX
        weight_map = parse_index(load_json(_inside(folder, index_name, root, real_folder), index_name), index_name)
        shard_names = [name for name in shard_names if name in set(weight_map.values())]
    headers = [read_header(_inside(folder, name, root, real_folder), name) for name in shard_names]
    if not any(h.tensors for h in headers):
        raise CheckpointFileError(", ".join(shard_names), "holds no tensors at all")
    return vllm_named(assemble_checkpoint(source or folder, config, headers, weight_map, index_name))


def _inside(folder: str, rel: str, root: str, real_folder: str) -> str:
    """Resolve `rel` under `folder` (whose realpath is `real_folder`), refusing paths (or symlinks) that land
    outside `root`. A plain file name that is no symlink resolves with one lstat (a giant checkpoint has ~160)."""
    check_relative_path(rel, rel, "path")
    path = os.path.join(folder, rel)
    if "/" not in rel and rel not in ("", ".") and not os.path.islink(path):
        real = os.path.join(real_folder, rel)
    else:
        real = os.path.realpath(path)
    if os.path.commonpath([real, root]) != root:
        raise CheckpointFileError(rel, f"resolves to {printable(real)!r}, outside the model folder; refusing to read it")
    if not os.path.exists(real):
        raise CheckpointFileError(rel, f"not found in the model folder {printable(folder)}")
    return real


def activation_dtype(config) -> str:
    """vLLM's activations and outputs are in the model dtype: float16 when config.json says so, else bfloat16."""
    return "float16" if (config.dtype or "").lower() in ("float16", "fp16", "half") else "bfloat16"
