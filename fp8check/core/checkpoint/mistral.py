"""Mistral-format checkpoints (params.json + consolidated*.safetensors), read as vLLM reads them.

Which format vLLM reads (every release 0.25-0.34): with --config-format / --load-format "auto" (the defaults),
transformers_utils/config.py get_config picks "mistral" when the folder or repo has params.json and a
consolidated*.safetensors file (repo_utils.is_mistral_model_repo), whether or not it also has config.json, and
model_loader/default_loader.py DefaultModelLoader._prepare_weights then loads consolidated*.safetensors only
(consolidated.safetensors.index.json filters them when present).

The config: MistralConfigParser hands params.json to transformers_utils/configs/mistral.py adapt_config_dict, with
config.json's keys (when present) as defaults; `hf_config` below is that function kept to what decides the
layout and the routing. 0.34.0 against 0.33.0 (diff of the file): 0.34 adds the `dsa` branch
(MistralLarge4ForCausalLM, model_type mistral_large_4, _remap_mistral_large_4_args) and BLOCK quantization
(qscheme_weight / qscheme_act "BLOCK" -> weight_block_size [block_size_out, block_size_in]); 0.33 builds a `dsa`
params.json as MistralLarge3ForCausalLM and refuses BLOCK (its assert). The reading here is 0.34's.

The tensor names: each model class renames consolidated names as it loads them (`checkpoint_names`).
"""

from __future__ import annotations

import fnmatch
import math
import re

from fp8check.core.errors import ConfigError


class NotLaidOut(ConfigError):
    """A Mistral-format model fp8check does not read (a streaming audio model), whatever vLLM makes of it."""


MISTRAL_PARAMS = "params.json"
CONSOLIDATED = "consolidated*.safetensors"
CONSOLIDATED_INDEX = "consolidated.safetensors.index.json"
MISTRAL_LARGE_3 = "MistralLarge3ForCausalLM"
MISTRAL_LARGE_4 = "MistralLarge4ForCausalLM"
PIXTRAL = "PixtralForConditionalGeneration"
MIXTRAL = "MixtralForCausalLM"
VOXTRAL = "VoxtralForConditionalGeneration"
MAMBA2 = "Mamba2ForCausalLM"


def is_mistral_format(listing) -> bool:
    """vLLM's "auto" rule: params.json and a consolidated*.safetensors file (config.json or not)."""
    return MISTRAL_PARAMS in listing and any(fnmatch.fnmatch(name, CONSOLIDATED) for name in listing)


def consolidated_files(listing) -> list[str]:
    """The weight files load_format "mistral" reads: consolidated*.safetensors, sorted."""
    return sorted(name for name in listing if fnmatch.fnmatch(name, CONSOLIDATED))


def hf_config(params: dict, defaults: dict | None = None) -> dict:
    """adapt_config_dict (transformers_utils/configs/mistral.py, 0.34.0) on params.json: the config dict vLLM's
    model class reads, in config.json's keys. `defaults`: config.json's keys, filled in where params.json has none.

    Ported: _remap_general_mistral_args, _remap_mistral_sliding_window, _remap_mistral_quantization_args,
    _remap_mistral_mla_args, _remap_moe_args, _remap_mistral_large_4_args (the per-layer lists), the architecture
    choice. Not ported (no effect on the layers or their routing): YaRN / llama-4 scaling (rope_parameters; the
    Mistral-Large-3 assert on llama_4_scaling is kept), the DSpark draft config. Also ported: the Mamba branch
    (Mamba2ForCausalLM), Mixtral's (MixtralForCausalLM, the `moe` block kept as is), _remap_mistral_vision_args
    (Pixtral) and _remap_mistral_audio_args for a bidirectional encoder (Voxtral); a causal one (Voxtral Realtime)
    raises NotLaidOut."""
    where = MISTRAL_PARAMS
    config = dict(params)
    _general(config)
    _sliding_window(config, where)
    if config.get("quantization"):
        _quantization(config, where)
    is_mla = bool(config.get("qk_nope_head_dim"))
    if is_mla and not config.get("moe"):
        # _remap_mistral_mla_args: an MLA model without MoE is one with a single, dense "expert" everywhere.
        config["moe"] = {"num_experts": 1, "first_k_dense_replace": config.get("num_hidden_layers"),
                         "route_every_n": 1, "num_shared_experts": 1,
                         "expert_hidden_dim": config.get("intermediate_size"), "num_experts_per_tok": 1,
                         "routed_scale": 1.0, "num_expert_groups": 1, "num_expert_groups_per_tok": 1}
    moe = config.get("moe") or {}
    is_mistral_large_3 = bool(moe) and (moe.get("num_shared_experts") or 0) > 0
    multimodal = config.get("multimodal") or {}
    is_vision = bool(multimodal.get("vision_encoder_args") or config.get("vision_encoder"))
    encoder = (multimodal.get("whisper_model_args") or {}).get("encoder_args")
    if is_vision and encoder:
        raise ConfigError(f"{where}: Vision and audio are mutually exclusive")
    if encoder and encoder.get("causal"):
        raise NotLaidOut(f"{where}: a Mistral-format streaming audio model (a causal Whisper encoder: vLLM builds "
                         "VoxtralRealtimeGeneration from it), which fp8check does not lay out; point it at an "
                         "HF-format copy (config.json + *.safetensors)")
    if config.get("model_type") == "mamba":
        config["architectures"] = [MAMBA2]
    elif config.get("dsa"):
        if not (is_mla and is_mistral_large_3):  # adapt_config_dict's assert
            raise ConfigError(f"{where}: Mistral DSA requires MLA + MoE.")
        _moe(config)
        _mistral_large_4(config, where)
        config.update(model_type="mistral_large_4", architectures=[MISTRAL_LARGE_4])
    elif is_mistral_large_3:
        _moe(config)
        config.update(model_type="deepseek_v3", architectures=[MISTRAL_LARGE_3])
        scaling = config.get("llama_4_scaling")
        if not isinstance(scaling, dict) or not {"original_max_position_embeddings", "beta"} <= set(scaling):
            raise ConfigError(f"{where}: MistralLarge3 expect llama4 scaling config.")
    elif moe:
        # The `moe` block stays as params.json writes it (no _remap_moe_args): errors_every_release says what
        # mixtral.py makes of that.
        config["architectures"] = [MIXTRAL]
    else:
        config["architectures"] = ["MistralForCausalLM"]
    if is_vision:
        config = _vision(config)
    if encoder:
        config = _audio(config, where)
    for key, value in (defaults or {}).items():
        config.setdefault(key, value)
    return config


def _vision(config: dict) -> dict:
    """_remap_mistral_vision_args: the text model's config becomes text_config (its architecture as chosen above),
    `multimodal` (else `vision_encoder`) the vision_config, under PixtralForConditionalGeneration; the quantization
    config stays at the top."""
    vision = config.pop("multimodal") if config.get("multimodal") else config.pop("vision_encoder")
    if missing := [key for key in VISION_ENCODER_ARGS if not isinstance(vision, dict) or key not in vision]:
        # pixtral.py PixtralForConditionalGeneration.__init__: VisionEncoderArgs(**the vision_config keys it has)
        quoted = [f"'{key}'" for key in missing]
        listed = quoted[0] if len(quoted) == 1 else f"{quoted[0]} and {quoted[1]}" if len(quoted) == 2 else \
            f"{', '.join(quoted[:-1])}, and {quoted[-1]}"
        raise ConfigError(f"VisionEncoderArgs.__init__() missing {len(missing)} required positional "
                          f"argument{'s' if len(missing) > 1 else ''}: {listed}")
    wrapped = {"model_type": "pixtral", "architectures": [PIXTRAL], "text_config": config, "vision_config": vision}
    if config.get("quantization_config"):
        wrapped["quantization_config"] = config["quantization_config"]
    return wrapped


# 0.25.0-0.33.0's transformers_utils/configs/mistral.py, verbatim: its quantization assert, and the llama-4 scaling
# assert of the MistralLarge3ForCausalLM branch, which a params.json with `dsa` takes there.
BLOCK_BEFORE_034 = "AssertionError: Only NO_SCALES and TENSOR (default) are supported for qscheme_act"
LLAMA_4_SCALING_BEFORE_034 = "AssertionError: MistralLarge3 expect llama4 scaling config."
LARGE_4_BEFORE_034 = ("vLLM before 0.34 has no Mistral-Large-4: its Mistral-format reader builds "
                      "MistralLarge3ForCausalLM from a params.json with `dsa`, whose loader has no parameter for "
                      "Mistral-Large-4's tensors (the indexer's, the KV-sharing layers'): the load fails")


def errors_before_034(params: dict) -> tuple[str, ...]:
    """What vLLM 0.25-0.33 refuses in this params.json, which 0.34 reads (BLOCK FP8, Mistral-Large-4); the reader
    is otherwise the same in every release for what fp8check reads (0.34 adds YaRN's apply_scale, DSpark)."""
    quantization = params.get("quantization") or {}
    if quantization.get("qformat_weight") == "fp8_e4m3" and \
            quantization.get("qscheme_act") not in ("NO_SCALES", "TENSOR", None):
        return (BLOCK_BEFORE_034,)
    if not params.get("dsa"):
        return ()
    scaling = params.get("llama_4_scaling")
    if not isinstance(scaling, dict) or not {"original_max_position_embeddings", "beta"} <= set(scaling):
        return (LLAMA_4_SCALING_BEFORE_034,)
    return (LARGE_4_BEFORE_034,)


def _audio(config: dict, where: str) -> dict:
    """_remap_mistral_audio_args (a bidirectional encoder): the text model's config becomes text_config, the Whisper
    encoder's args a WhisperConfig's keys as audio_config, under VoxtralForConditionalGeneration."""
    whisper = config["multimodal"].pop("whisper_model_args")
    try:
        encoder, audio = whisper["encoder_args"], whisper["encoder_args"]["audio_encoding_args"]
        audio_config = {"model_type": "whisper", "num_mel_bins": audio["num_mel_bins"],
                        "downsample_factor": whisper["downsample_args"]["downsample_factor"],
                        "d_model": encoder["dim"], "encoder_layers": encoder["n_layers"],
                        "encoder_ffn_dim": encoder["hidden_dim"], "encoder_attention_heads": encoder["n_heads"],
                        "encoder_head_dim": encoder["head_dim"], "vocab_size": encoder["vocab_size"],
                        "is_encoder_decoder": False, "is_causal": False, "block_pool_size": 1}
    except (KeyError, TypeError) as exc:  # vLLM's KeyError, reading the same keys
        raise ConfigError(f"{where}: multimodal.whisper_model_args lacks {exc}") from None
    wrapped = {"model_type": "voxtral", "architectures": [VOXTRAL], "text_config": config, "audio_config": audio_config}
    if config.get("quantization_config"):
        wrapped["quantization_config"] = config["quantization_config"]
    return wrapped


# pixtral.py VisionEncoderArgs' fields without a default (0.25-0.34).
VISION_ENCODER_ARGS = ("hidden_size", "num_channels", "image_size", "patch_size", "intermediate_size",
                       "num_hidden_layers", "num_attention_heads", "rope_theta", "image_token_id")


# mixtral.py MixtralDecoderLayer reads config.num_local_experts, which the reader never writes for a `moe` block
# without shared experts (it keeps `moe` as is): the build fails unless config.json gives the key (0.25-0.34).
MIXTRAL_NO_EXPERTS = "'PreTrainedConfig' object has no attribute 'num_local_experts'"
# With it the model builds and its loader (AutoWeightsLoader, which meets the consolidated names unchanged: mixtral.py
# maps HF expert names only) finds no child `layers` (the first name in the file's sorted keys), utils.py's message.
MIXTRAL_NAMES = ("There is no module or parameter named 'layers' in MixtralForCausalLM (mixtral.py's "
                 "loader has no mapping from the consolidated names; serve the HF-format files with --config-format "
                 "hf --load-format hf)")


# mamba2.py Mamba2DecoderLayer's reads of the config, in order (MambaMixer2's arguments; `expand` is getattr's
# default for intermediate_size, evaluated whether or not the key is there): params.json gives none of them, so
# Codestral Mamba builds only with a config.json beside it.
MAMBA2_KEYS = ("state_size", "conv_kernel", "expand", "use_conv_bias", "use_bias", "n_groups", "num_heads", "head_dim",
               "layer_norm_epsilon")


def errors_every_release(config: dict) -> tuple[str, ...]:
    """What every release 0.25-0.34 refuses in this Mistral-format checkpoint (`config`: hf_config's): a Mixtral
    (MixtralForCausalLM from a `moe` block without shared experts, its own or a Pixtral's text model) fails to build
    without config.json's num_local_experts, and to load with it; a Mamba without Mamba2Config's keys fails to build."""
    text = config.get("text_config", config)
    architectures = text.get("architectures") or ()
    if MAMBA2 in architectures:
        missing = next((key for key in MAMBA2_KEYS if key not in text), None)
        return (f"'PreTrainedConfig' object has no attribute '{missing}'",) if missing else ()
    if MIXTRAL not in architectures:
        return ()
    return (MIXTRAL_NO_EXPERTS,) if "num_local_experts" not in text else (MIXTRAL_NAMES,)


def _general(config: dict) -> None:
    """_remap_general_mistral_args: Mistral's keys -> HF's, with its defaults."""
    for key, hf_key in (("dim", "hidden_size"), ("norm_eps", "rms_norm_eps"), ("n_kv_heads", "num_key_value_heads"),
                        ("n_layers", "num_hidden_layers"), ("n_heads", "num_attention_heads"),
                        ("hidden_dim", "intermediate_size")):
        if key in config:
            config[hf_key] = config.pop(key)
    max_positions = config.get("max_position_embeddings", 128_000)
    for hf_key, (key, default) in (("model_type", ("model_type", "transformer")),
                                   ("hidden_act", ("activation", "silu")),
                                   ("tie_word_embeddings", ("tied_embeddings", False)),
                                   ("max_seq_len", ("max_seq_len", max_positions)),
                                   ("max_position_embeddings", ("max_position_embeddings", 128_000)),
                                   ("dtype", ("dtype", config.get("dtype")))):
        config[hf_key] = config.pop(key, default)


def _sliding_window(config: dict, where: str) -> None:
    """_remap_mistral_sliding_window: a per-layer list -> layer_types + one window; an int -> all sliding."""
    window = config.get("sliding_window")
    if not window:
        return
    if isinstance(window, list):
        layers = config.get("num_hidden_layers") or 0
        pattern = window * (layers // len(window))
        config["layer_types"] = ["full_attention" if w is None else "sliding_attention" for w in pattern]
        if len(set(window) - {None}) > 1:
            raise ConfigError(f"{where}: sliding_window {window}: one window size at most")
        config["sliding_window"] = next(filter(None, window), None)
    elif isinstance(window, int) and config.get("layer_types") is None:
        config["layer_types"] = ["sliding_attention"] * (config.get("num_hidden_layers") or 0)
    else:
        raise ConfigError(f"{where}: Unsupported sliding_window type: {window}")


def _quantization(config: dict, where: str) -> None:
    """_remap_mistral_quantization_args: Mistral's FP8 args -> an "fp8" quantization_config (per-tensor static,
    dynamic, or 0.34's 128-blocks); a compressed-tensors one passes through."""
    quantization = config.pop("quantization")
    if not isinstance(quantization, dict):
        raise ConfigError(f"{where}: Found unknown quantization='{quantization}' in config")
    if quantization.get("qformat_weight") == "fp8_e4m3":
        act, weight = quantization.get("qscheme_act"), quantization.get("qscheme_weight")
        if act not in ("NO_SCALES", "TENSOR", "BLOCK", None):
            raise ConfigError(f"{where}: Only NO_SCALES, TENSOR (default) and BLOCK are supported for qscheme_act")
        if (act == "BLOCK") != (weight == "BLOCK"):
            raise ConfigError(f"{where}: BLOCK quantization must be used for both weights and activations")
        config["quantization_config"] = {"quant_method": "fp8",
                                         "activation_scheme": "dynamic" if act in ("NO_SCALES", "BLOCK")
                                         else "static"}
        if weight == "BLOCK":
            config["quantization_config"]["weight_block_size"] = [quantization.get("block_size_out"),
                                                                  quantization.get("block_size_in")]
    elif str(quantization.get("quant_method", "")).lower().replace("_", "-") == "compressed-tensors":
        config["quantization_config"] = {**quantization, "quant_method": "compressed-tensors"}
    else:
        raise ConfigError(f"{where}: Found unknown quantization='{quantization}' in config")


_MOE_KEYS = (("route_every_n", "moe_layer_freq"), ("first_k_dense_replace", "first_k_dense_replace"),
             ("num_experts_per_tok", "num_experts_per_tok"), ("num_experts", "n_routed_experts"),
             ("expert_hidden_dim", "moe_intermediate_size"), ("routed_scale", "routed_scaling_factor"),
             ("num_shared_experts", "n_shared_experts"), ("num_expert_groups", "n_group"),
             ("num_expert_groups_per_tok", "topk_group"))


def _moe(config: dict) -> None:
    """_remap_moe_args: the `moe` block's keys -> DeepSeek-V3's; softmax routing, renormalized, no bias."""
    moe = dict(config.get("moe") or {})
    for key, hf_key in _MOE_KEYS:
        if key in moe:
            config[hf_key] = moe.pop(key)
    config.update(topk_method=None, norm_topk_prob=True, scoring_func="softmax")


def _layer_pattern(pattern: list, layers: int) -> list:
    """_expand_layer_pattern: a comma pattern repeated over the layers."""
    return (pattern * math.ceil(layers / len(pattern)))[:layers]


# _DSA_KEY_ALIASES: the converter's unprefixed `dsa` keys -> the prefixed ones of earlier checkpoints.
_DSA_ALIASES = {"topk": "index_topk", "n_heads": "index_n_heads", "head_dim": "index_head_dim",
                "rope_head_dim": "index_rope_head_dim", "nope": "index_nope", "match_nope": "indexer_match_nope",
                "ssmax_scaling": "indexer_ssmax_scaling", "norm_eps": "indexer_norm_eps", "sharing": "index_sharing"}
_DSA_REQUIRED = ("index_topk", "index_n_heads", "index_head_dim", "indexer_norm_eps", "indexer_ssmax_scaling")


def _mistral_large_4(config: dict, where: str) -> None:
    """_remap_mistral_large_4_args (0.34): NoPE layers, KV-sharing sources, the DSA indexer's keys and which layers
    run their own indexer ("full") or reuse the previous one's top-k ("shared"); its asserts as refusals."""
    layers = config.get("num_hidden_layers") or 0
    nope = config.pop("nope", None)
    config["nope_layer_flags"] = _layer_pattern([v == "nope" for v in nope.split(",")], layers) if nope \
        else [False] * layers
    kv_sharing = config.pop("kv_sharing", None) or {}
    source_layers = kv_sharing.get("source_layers_str")
    sources = [int(v) for v in source_layers.split(",")] if source_layers else list(range(layers))
    if set(kv_sharing) - {"source_layers_str"} or len(sources) != layers or any(
            s > i or sources[s] != s or config["nope_layer_flags"][i] != config["nope_layer_flags"][s]
            for i, s in enumerate(sources)):
        raise ConfigError(f"{where}: kv_sharing {kv_sharing}: each layer must share KV with an earlier, non-sharing "
                          "layer of its own NoPE kind")
    config["kv_source_layers"] = sources
    dsa = dict(config.pop("dsa"))
    for key, prefixed in _DSA_ALIASES.items():
        if key in dsa:
            value = dsa.pop(key)
            if dsa.get(prefixed, value) != value:
                raise ConfigError(f"{where}: Conflicting dsa keys: {key}={value!r}, {prefixed}={dsa[prefixed]!r}")
            dsa[prefixed] = value
    if missing := [key for key in _DSA_REQUIRED if key not in dsa]:
        raise ConfigError(f"{where}: dsa lacks {', '.join(missing)}")
    config.update({key: dsa.pop(key) for key in _DSA_REQUIRED})
    if dsa.pop("index_rope_head_dim", None) not in (None, -1, config.get("qk_rope_head_dim")) \
            or dsa.pop("index_nope", False) or not dsa.pop("fp8_indexer", True):
        raise ConfigError(f"{where}: dsa: an indexer RoPE width other than qk_rope_head_dim, index_nope or a "
                          "non-FP8 indexer cache, which vLLM does not support")
    dsa.pop("indexer_match_nope", None)
    config["fp8_kv_cache"] = dsa.pop("fp8_kv_cache", False)
    sharing = dsa.pop("index_sharing", None)
    config["index_sharing"] = _layer_pattern(sharing.split(","), layers) if sharing else ["full"] * layers
    if not set(config["index_sharing"]) <= {"full", "shared"} or config["index_sharing"][:1] not in ([], ["full"]):
        raise ConfigError(f"{where}: dsa index_sharing {sharing!r}: 'full' / 'shared' per layer, layer 0 'full'")
    if dsa:
        raise ConfigError(f"{where}: Unparsed dsa config: {dsa}")


# The consolidated names each model class renames as it loads them (the checkpoint's name -> vLLM's).
# mistral.py MistralForCausalLM.mistral_mapping, applied by maybe_remap_mistral part by part.
_MISTRAL_MAPPING = {
    "layers": "model.layers", "attention": "self_attn", "qscale_act": "input_scale", "qscale_weight": "weight_scale",
    "kv_fake_quantizer.qscale_act": "kv_scale", "q_fake_quantizer.qscale_act": "attn.q_scale",
    "k_fake_quantizer.qscale_act": "k_scale", "v_fake_quantizer.qscale_act": "v_scale", "wq": "q_proj",
    "wk": "k_proj", "wv": "v_proj", "wo": "o_proj", "attention_norm": "input_layernorm", "feed_forward": "mlp",
    "w1": "gate_proj", "w2": "down_proj", "w3": "up_proj", "ffn_norm": "post_attention_layernorm",
    "tok_embeddings": "model.embed_tokens", "output": "lm_head", "norm": "model.norm",
}


def mistral_name(name: str) -> str:
    """mistral.py MistralForCausalLM.maybe_remap_mistral (0.25-0.34), verbatim: each dotted part (or part pair) in
    mistral_mapping is replaced where its replacement is not already in the name."""
    parts = name.split(".")
    for i, part in enumerate(parts):
        pair = f"{part}.{parts[i + 1]}" if i < len(parts) - 1 else None
        if pair in _MISTRAL_MAPPING:
            name = name.replace(pair, _MISTRAL_MAPPING[pair])
        elif part in _MISTRAL_MAPPING and _MISTRAL_MAPPING[part] not in name:
            name = name.replace(part, _MISTRAL_MAPPING[part])
    return name


# mistral_large_3.py MistralLarge3ForCausalLM.hf_to_vllm_mapper (0.25-0.34): anchored patterns, then the suffixes.
_LARGE_3_PATTERNS = [(re.compile(rf"\Alayers\.(\d+)\.{old}\Z"), rf"model.layers.\1.{new}") for old, new in (
    (r"attention_norm\.weight", "input_layernorm.weight"), (r"attention\.wq_a\.(\w+)", r"self_attn.q_a_proj.\2"),
    (r"attention\.q_a_norm\.weight", "self_attn.q_a_layernorm.weight"),
    (r"attention\.wq_b\.(\w+)", r"self_attn.q_b_proj.\2"),
    (r"attention\.wkv_a_with_mqa\.(\w+)", r"self_attn.kv_a_proj_with_mqa.\2"),
    (r"attention\.kv_a_norm\.weight", "self_attn.kv_a_layernorm.weight"),
    (r"attention\.wkv_b\.(\w+)", r"self_attn.kv_b_proj.\2"), (r"attention\.wo\.(\w+)", r"self_attn.o_proj.\2"),
    (r"ffn_norm\.weight", "post_attention_layernorm.weight"), (r"feed_forward\.w1\.(\w+)", r"mlp.gate_proj.\2"),
    (r"feed_forward\.w2\.(\w+)", r"mlp.down_proj.\2"), (r"feed_forward\.w3\.(\w+)", r"mlp.up_proj.\2"),
    (r"gate\.weight", "mlp.gate.weight"), (r"shared_experts\.w1\.(\w+)", r"mlp.shared_experts.gate_proj.\2"),
    (r"shared_experts\.w2\.(\w+)", r"mlp.shared_experts.down_proj.\2"),
    (r"shared_experts\.w3\.(\w+)", r"mlp.shared_experts.up_proj.\2"),
    (r"experts\.(\d+)\.w1\.(\w+)", r"mlp.experts.\2.gate_proj.\3"),
    (r"experts\.(\d+)\.w2\.(\w+)", r"mlp.experts.\2.down_proj.\3"),
    (r"experts\.(\d+)\.w3\.(\w+)", r"mlp.experts.\2.up_proj.\3"))] + [
    (re.compile(r"\Anorm\.weight\Z"), "model.norm.weight"),
    (re.compile(r"\Atok_embeddings\.weight\Z"), "model.embed_tokens.weight"),
    (re.compile(r"\Aoutput\.weight\Z"), "lm_head.weight")]
_LARGE_3_SUFFIXES = ((".qscale_act", ".input_scale"), (".qscale_weight", ".weight_scale"))


def mistral_large_3_name(name: str) -> str:
    """WeightsMapper._map_name with MistralLarge3ForCausalLM's regexes and suffixes (every matching rule, in order).
    The group numbers of the patterns above count the layer index as \\1, as the mapper's do."""
    for pattern, new in _LARGE_3_PATTERNS:
        name = pattern.sub(new, name)
    for old, new in _LARGE_3_SUFFIXES:
        if name.endswith(old):
            name = name[: -len(old)] + new
    return name


# models/mistral/mistral_large4/nvidia/model.py _CHECKPOINT_NAME_MAP (0.34; amd/model.py the same), whole segments.
_LARGE_4_MAP = [(re.compile(pattern), new) for pattern, new in (
    (r"^tok_embeddings(?=\.|$)", "model.embed_tokens"), (r"^norm(?=\.|$)", "model.norm"),
    (r"^output(?=\.|$)", "lm_head"), (r"^layers\.", "model.layers."),
    (r"\.attention_norm(?=\.|$)", ".input_layernorm"), (r"\.ffn_norm(?=\.|$)", ".post_attention_layernorm"),
    (r"\.attention\.indexer\.ssmax_scaling(?=\.|$)", ".self_attn.indexer.ssmax"),
    (r"\.attention\.ssmax_scaling(?=\.|$)", ".self_attn.ssmax"), (r"\.attention\.wq(?=\.|$)", ".self_attn.q_proj"),
    (r"\.attention\.wkv_a_with_mqa(?=\.|$)", ".self_attn.kv_a_proj_with_mqa"),
    (r"\.attention\.kv_a_norm(?=\.|$)", ".self_attn.kv_a_layernorm"),
    (r"\.attention\.wkv_b(?=\.|$)", ".self_attn.kv_b_proj"), (r"\.attention\.wo(?=\.|$)", ".self_attn.o_proj"),
    (r"\.attention\.indexer(?=\.|$)", ".self_attn.indexer"), (r"\.feed_forward(?=\.|$)", ".mlp"),
    (r"\.shared_experts(?=\.|$)", ".mlp.shared_experts"), (r"\.gate(?=\.|$)", ".mlp.gate"),
    (r"\.experts(?=\.|$)", ".mlp.experts"), (r"\.qscale_weight$", ".weight_scale_inv"))]


def mistral_large_4_name(name: str) -> str:
    """_to_vllm_weight_name, then _STACKED_PARAMS' one unfused rename outside the experts (w2 -> down_proj; w1 / w3
    and wk / weights_proj stay shards of gate_up_proj / wk_weights_proj, the layout's packed entries). qscale_act
    has no rename: the model builds no parameter for it."""
    for pattern, new in _LARGE_4_MAP:
        name = pattern.sub(new, name)
    return name if ".mlp.experts." in name else name.replace(".w2.", ".down_proj.")


def mixtral_name(name: str) -> str:
    """A Mistral-format Mixtral's tensor, which vLLM refuses (errors_every_release): its name as stored, the FP8
    scales under the fp8 format's names so that each layer reads as the FP8 layer it is."""
    return next((name[: -len(old)] + new for old, new in _LARGE_3_SUFFIXES if name.endswith(old)), name)


def mamba2_name(name: str) -> str:
    """mamba2.py Mamba2ForCausalLM.hf_to_vllm_mapper (0.25-0.34): `.A_log` -> `.A`; Codestral Mamba's consolidated
    names are mamba_ssm's (transformers' Mamba2 saves the same), which it loads as they are."""
    return name.replace(".A_log", ".A", 1)


CHECKPOINT_NAMES = {"MistralForCausalLM": mistral_name, MISTRAL_LARGE_3: mistral_large_3_name,
                    MISTRAL_LARGE_4: mistral_large_4_name, MIXTRAL: mixtral_name, MAMBA2: mamba2_name}

# pixtral.py PixtralForConditionalGeneration.load_weights (0.25-0.34): the vision encoder's consolidated leaves as
# its hf_to_vllm_mapper renames them (wq / wk / wv then load into qkv_proj, w1 / w3 into gate_up_proj: the layout's
# packed entries; wo -> o_proj and w2 -> down_proj as _vision_encoder_name_remap).
_PIXTRAL_ENCODER = [(re.compile(rf"^(vision_encoder\.transformer\.layers\.\d+\.{block})\.{old}(?=\.|$)"),
                     rf"\1.{new}") for block, old, new in (
    ("attention", "wq", "q_proj"), ("attention", "wk", "k_proj"), ("attention", "wv", "v_proj"),
    ("attention", "wo", "o_proj"), ("feed_forward", "w1", "gate_proj"), ("feed_forward", "w2", "down_proj"),
    ("feed_forward", "w3", "up_proj"))]
# The tensors it loads into its own modules (vision encoder, patch merger, pre-projector norm, adapter); every other
# name loses a "language_model." prefix and goes to the text model's loader.
PIXTRAL_TOWERS = ("vision_encoder", "vision_tower", "patch_merger", "pre_mm_projector_norm",
                  "vision_language_adapter", "multi_modal_projector")


def pixtral_name(name: str, text_rename) -> str:
    """A Pixtral checkpoint's tensor: a tower's under its vLLM name, the text model's as its class loads it, under
    the language_model the wrapper builds it in."""
    if name.startswith(PIXTRAL_TOWERS):
        for pattern, new in _PIXTRAL_ENCODER:
            name = pattern.sub(new, name)
        return name
    return "language_model." + text_rename(name.removeprefix("language_model."))


# voxtral.py VoxtralForConditionalGeneration.load_weights (0.25-0.34): the Whisper encoder's tensors (under
# mm_whisper_embeddings, but its tok_embeddings, the text model's, and audio_language_projection, the adapter's) as
# VoxtralEncoderModel.mistral_remapping renames them (q / k / v then load into qkv_proj, the layout's packed entry),
# under the whisper_encoder it is built in; the adapter's Sequential indices as its w_in / w_out.
_VOXTRAL_ENCODER = [(re.compile(rf"\Amm_whisper_embeddings\.whisper_encoder\.{old}\Z"),
                     rf"whisper_encoder.whisper_encoder.{new}") for old, new in (
    (r"conv_layers\.0\.(?:conv\.)?(weight|bias)", r"conv1.\1"), (r"conv_layers\.1\.(?:conv\.)?(weight|bias)", r"conv2.\1"),
    (r"transformer\.layers\.(\d+)\.attention\.w([qkv])\.(weight|bias)", r"layers.\1.self_attn.\2_proj.\3"),
    (r"transformer\.layers\.(\d+)\.attention\.wo\.(weight|bias)", r"layers.\1.self_attn.out_proj.\2"),
    (r"transformer\.layers\.(\d+)\.attention_norm\.(weight|bias)", r"layers.\1.self_attn_layer_norm.\2"),
    (r"transformer\.layers\.(\d+)\.feed_forward\.w([12])\.(weight|bias)", r"layers.\1.mlp.fc\2.\3"),
    (r"transformer\.layers\.(\d+)\.ffn_norm\.(weight|bias)", r"layers.\1.final_layer_norm.\2"),
    (r"transformer\.norm\.(weight|bias)", r"layer_norm.\1"))] + [
    (re.compile(rf"\Amm_whisper_embeddings\.audio_language_projection\.{index}\.weight\Z"),
     f"audio_language_adapter.{leaf}.weight") for index, leaf in ((0, "w_in"), (2, "w_out"))]


def voxtral_name(name: str, text_rename) -> str:
    """A Voxtral checkpoint's tensor: the encoder's and the adapter's under their vLLM names, the text model's (its
    token embedding under mm_whisper_embeddings too) as its class loads it, under language_model. An encoder tensor
    no rule renames (an FP8 scale: the rules take weight and bias only) keeps its name, which the encoder's loader
    finds no parameter for."""
    for pattern, new in _VOXTRAL_ENCODER:
        if pattern.match(name):
            return pattern.sub(new, name)
    if name.startswith("mm_whisper_embeddings.whisper_encoder."):
        return name
    return "language_model." + text_rename(name.removeprefix("mm_whisper_embeddings."))


def checkpoint_names(architecture: str, names, text_architecture: str | None = None) -> dict[str, str]:
    """Each consolidated name -> the name the model class loads it under (`architecture` as hf_config chose it; a
    Pixtral wrapper's text model is `text_architecture`)."""
    if architecture in (PIXTRAL, VOXTRAL):
        text_rename = CHECKPOINT_NAMES[text_architecture or "MistralForCausalLM"]
        wrapped = pixtral_name if architecture == PIXTRAL else voxtral_name
        return {name: wrapped(name, text_rename) for name in names}
    rename = CHECKPOINT_NAMES[architecture]
    return {name: rename(name) for name in names}
