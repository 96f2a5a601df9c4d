"""Mistral-format checkpoints (params.json + consolidated.safetensors), read as vLLM reads them: the config
(transformers_utils/configs/mistral.py adapt_config_dict), the tensor names each model class renames, and what vLLM
before 0.34 refuses."""

from __future__ import annotations

import json

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.checkpoint.mistral import (
    BLOCK_BEFORE_034, LARGE_4_BEFORE_034, LLAMA_4_SCALING_BEFORE_034, hf_config, mistral_large_3_name,
    mistral_large_4_name, mistral_name,
)
from fp8check.core.errors import ConfigError, InputError
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import LATEST, select_profile
from fp8check.synth import Spec, write_checkpoint

LLAMA_4_SCALING = {"llama_4_scaling": {"original_max_position_embeddings": 8192, "beta": 0.1}}
MLA = dict(mla=True, head_dim=128, kv_lora_rank=512, qk_rope_head_dim=64, moe_style="deepseek", experts=4,
           shared_experts=1, first_k_dense=1, hidden=512, heads=4, kv_heads=4, moe_intermediate=256)
# Mistral-Large-4: layer 2 shares layer 1's KV cache (both NoPE), indexers on layers 0, 1 and 3, MoE from layer 1;
# the layers vLLM builds with quant_config=None stored BF16.
LARGE_4 = dict(MLA, layers=4, ignore=("lm_head", r"re:.*\.kv_a_proj_with_mqa$", r"re:.*\.kv_b_proj$",
                                      r"re:.*\.indexer\.(wk|weights_proj)$"),
               extra_config={"nope": "rope,nope,nope,rope", "kv_sharing": {"source_layers_str": "0,1,1,3"},
                             "dsa": {"topk": 2048, "n_heads": 4, "head_dim": 128, "norm_eps": 1e-6,
                                     "ssmax_scaling": False, "sharing": "full,full,shared,full"}})
LARGE_3 = dict(MLA, q_lora_rank=256, extra_config=LLAMA_4_SCALING)


def write(tmp_path, name="ckpt", **spec):
    return write_checkpoint(str(tmp_path / name), Spec(mistral_format=True, data="sparse", **spec))


def inspect(folder, profile=LATEST, platform="h100", tp=1):
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), profile, tp=tp))


@pytest.mark.parametrize("spec,quant,architecture,expected", [
    (dict(hidden=512, heads=4, kv_heads=2, head_dim=128, intermediate=1024), "fp8-static", "MistralForCausalLM",
     {"model.layers.0.self_attn.qkv_proj": "QKVParallelLinear", "model.layers.0.mlp.gate_up_proj":
      "MergedColumnParallelLinear", "model.layers.1.mlp.down_proj": "RowParallelLinear"}),
    (LARGE_3, "fp8-dynamic", "MistralLarge3ForCausalLM",
     {"model.layers.0.self_attn.fused_qkv_a_proj": "DeepSeekV2FusedQkvAProjLinear",
      "model.layers.1.mlp.shared_experts.gate_up_proj": "MergedColumnParallelLinear",
      "model.layers.1.mlp.gate": "ReplicatedLinear"}),
    (LARGE_4, "fp8-block", "MistralLarge4ForCausalLM",
     {"model.layers.0.self_attn.q_proj": "ColumnParallelLinear", "model.layers.0.mlp.gate_up_proj":
      "MergedColumnParallelLinear", "model.layers.0.mlp.down_proj": "RowParallelLinear",
      "model.layers.3.self_attn.indexer.wq_b": "ReplicatedLinear",
      "model.layers.3.self_attn.indexer.wk_weights_proj": "MergedColumnParallelLinear",
      "model.layers.1.mlp.shared_experts.down_proj": "RowParallelLinear"}),
], ids=["ministral", "mistral-large-3", "mistral-large-4"])
def test_a_mistral_format_checkpoint_is_read_as_vllm_reads_it(tmp_path, spec, quant, architecture, expected):
    """params.json becomes the config vLLM's Mistral reader writes; the consolidated names come out under the
    modules vLLM builds, with the FP8 method of params.json's quantization and no error."""
    folder = write(tmp_path, quant=quant, **spec)
    checkpoint = open_local(folder)
    assert checkpoint.config.architectures == (architecture,)
    assert checkpoint.config.quantization_config.method == "fp8"
    rep = inspect(folder, tp=2)
    assert rep.ok, [e for layer in rep.layers for e in layer.errors] + list(rep.errors)
    by_name = {layer.name: layer for layer in rep.layers}
    assert {name: by_name[name].layer_type for name in expected} == expected
    assert "generic" not in {layer.layout for layer in rep.layers}
    assert {layer.scheme for layer in rep.layers if layer.weight_dtype == "F8_E4M3"} == {"Fp8LinearMethod"}
    assert all(m.scheme == "Fp8MoEMethod" for m in rep.moes)


def test_mistral_large_4_kv_sharing_nope_and_indexer_layers(tmp_path):
    """The layer sharing KV builds no kv_a_proj_with_mqa and its attention (`self_attn.attn`) has no cache of its
    own; a NoPE layer keeps the 576-wide latent cache; the "shared" indexer layer has no indexer; the projections
    vLLM builds with quant_config=None, the router and the LM head are unquantized."""
    rep = inspect(write(tmp_path, quant="fp8-block", **LARGE_4))
    names = {layer.name: layer for layer in rep.layers}
    assert "model.layers.2.self_attn.kv_a_proj_with_mqa" not in names
    assert "model.layers.2.self_attn.indexer.wq_b" not in names and "model.layers.1.self_attn.indexer.wq_b" in names
    assert {a.name: a.cache_bytes_per_token == 0 for a in rep.attention} == {
        f"model.layers.{i}.self_attn.attn": i == 2 for i in range(4)}
    unquantized = {name for name, layer in names.items() if layer.scheme.startswith("Unquantized")}
    assert {"lm_head", "model.layers.1.mlp.gate", "model.layers.1.self_attn.kv_a_proj_with_mqa",
            "model.layers.2.self_attn.kv_b_proj", "model.layers.0.self_attn.indexer.wk_weights_proj"} <= unquantized


def test_consolidated_names_are_renamed_as_each_model_class_loads_them():
    """mistral.py maybe_remap_mistral (part by part), mistral_large_3.py's anchored mapper and Mistral-Large-4's
    _CHECKPOINT_NAME_MAP (w2 -> down_proj outside the experts; block scales under weight_scale_inv)."""
    assert mistral_name("layers.3.attention.wk.qscale_weight") == "model.layers.3.self_attn.k_proj.weight_scale"
    assert mistral_name("layers.0.feed_forward.w2.qscale_act") == "model.layers.0.mlp.down_proj.input_scale"
    assert mistral_name("output.weight") == "lm_head.weight"
    assert mistral_name("norm.weight") == "model.norm.weight"
    assert mistral_large_3_name("layers.1.experts.7.w3.qscale_weight") == \
        "model.layers.1.mlp.experts.7.up_proj.weight_scale"
    assert mistral_large_3_name("layers.0.attention.wkv_a_with_mqa.weight") == \
        "model.layers.0.self_attn.kv_a_proj_with_mqa.weight"
    # An indexer's name is none of the mapper's patterns: it stays as the checkpoint has it.
    assert mistral_large_3_name("layers.0.attention.indexer.wq_b.weight") == "layers.0.attention.indexer.wq_b.weight"
    assert mistral_large_4_name("layers.1.feed_forward.w2.qscale_weight") == \
        "model.layers.1.mlp.down_proj.weight_scale_inv"
    assert mistral_large_4_name("layers.1.experts.3.w2.weight") == "model.layers.1.mlp.experts.3.w2.weight"
    assert mistral_large_4_name("layers.1.shared_experts.w1.weight") == "model.layers.1.mlp.shared_experts.w1.weight"
    assert mistral_large_4_name("layers.1.gate.weight") == "model.layers.1.mlp.gate.weight"


@pytest.mark.parametrize("quantization,expected", [
    ({"qformat_weight": "fp8_e4m3", "qscheme_act": "TENSOR"}, {"quant_method": "fp8", "activation_scheme": "static"}),
    ({"qformat_weight": "fp8_e4m3"}, {"quant_method": "fp8", "activation_scheme": "static"}),
    ({"qformat_weight": "fp8_e4m3", "qscheme_act": "NO_SCALES"},
     {"quant_method": "fp8", "activation_scheme": "dynamic"}),
    ({"qformat_weight": "fp8_e4m3", "qscheme_act": "BLOCK", "qscheme_weight": "BLOCK", "block_size_out": 128,
      "block_size_in": 128},
     {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}),
])
def test_params_quantization_becomes_an_fp8_config(quantization, expected):
    config = hf_config({"dim": 512, "n_layers": 2, "n_heads": 4, "quantization": quantization})
    assert config["quantization_config"] == expected
    assert config["architectures"] == ["MistralForCausalLM"] and config["hidden_size"] == 512


def test_params_keys_become_the_hf_config():
    """Sizes, the sliding-window list (layer_types + one window), MLA without MoE (Mistral-Large-3's class, one
    dense "expert" on every layer) and the DeepSeek routing keys of the MoE block."""
    config = hf_config({"dim": 512, "n_layers": 4, "n_heads": 4, "n_kv_heads": 2, "hidden_dim": 1024,
                        "sliding_window": [None, 4096]})
    assert (config["num_hidden_layers"], config["num_key_value_heads"], config["intermediate_size"]) == (4, 2, 1024)
    assert config["layer_types"] == ["full_attention", "sliding_attention"] * 2 and config["sliding_window"] == 4096
    assert config["model_type"] == "transformer"
    mla = hf_config({"dim": 512, "n_layers": 2, "n_heads": 4, "hidden_dim": 1024, "qk_nope_head_dim": 128,
                     "kv_lora_rank": 512, **LLAMA_4_SCALING})
    assert mla["architectures"] == ["MistralLarge3ForCausalLM"] and mla["model_type"] == "deepseek_v3"
    assert (mla["n_routed_experts"], mla["first_k_dense_replace"], mla["moe_intermediate_size"]) == (1, 2, 1024)
    assert (mla["scoring_func"], mla["norm_topk_prob"], mla["topk_method"]) == ("softmax", True, None)


@pytest.mark.parametrize("params,match", [
    ({"multimodal": {"whisper_model_args": {"encoder_args": {"causal": True}}}}, "streaming audio"),
    ({"vision_encoder": {"hidden_size": 1024}}, "VisionEncoderArgs.__init__\\(\\) missing 8 required positional"),
    ({"vision_encoder": {"hidden_size": 1024}, "multimodal": {"whisper_model_args": {"encoder_args": {"dim": 8}}}},
     "mutually exclusive"),
    ({"moe": {"num_experts": 8, "num_shared_experts": 1}}, "llama4 scaling"),
    ({"quantization": {"qformat_weight": "fp8_e4m3", "qscheme_act": "BLOCK"}}, "BLOCK quantization must be used"),
    ({"quantization": {"qformat_weight": "int4"}}, "unknown quantization"),
])
def test_params_vllm_refuses_or_fp8check_does_not_lay_out(params, match):
    with pytest.raises(ConfigError, match=match):
        hf_config({"dim": 512, "n_layers": 2, "n_heads": 4, **params})


def test_params_json_and_consolidated_files_win_over_config_json(tmp_path):
    """vLLM's "auto" formats pick Mistral's whenever params.json and consolidated*.safetensors are there, even
    beside config.json (transformers_utils/config.py get_config, default_loader.py): their config and names."""
    folder = write(tmp_path, quant="fp8-static", hidden=512, heads=4, kv_heads=2, head_dim=128)
    with open(f"{folder}/config.json", "w") as fh:
        json.dump({"architectures": ["LlamaForCausalLM"], "model_type": "llama", "rope_theta": 1.0}, fh)
    checkpoint = open_local(folder)
    assert checkpoint.config.architectures == ("MistralForCausalLM",)
    assert "model.layers.0.self_attn.q_proj.weight" in checkpoint.tensors


def test_params_json_without_consolidated_files_or_config_json_is_refused(tmp_path):
    """params.json alone is neither format vLLM reads (no consolidated*.safetensors, no config.json)."""
    (tmp_path / "params.json").write_text('{"dim": 512}')
    header = b'{"layers.0.attention.wq.weight":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}}'
    (tmp_path / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + bytes(8))
    with pytest.raises(InputError, match="params.json without consolidated"):
        open_local(str(tmp_path))


@pytest.mark.parametrize("spec,quant,error", [
    (dict(hidden=512, heads=4, kv_heads=2, head_dim=128), "fp8-block", BLOCK_BEFORE_034),
    (LARGE_4, "fp8-static", LLAMA_4_SCALING_BEFORE_034),
    (dict(LARGE_4, extra_config={**LARGE_4["extra_config"], **LLAMA_4_SCALING}), "fp8-dynamic", LARGE_4_BEFORE_034),
], ids=["block", "large-4-no-llama-4-scaling", "large-4"])
def test_what_vllm_before_034_refuses_in_params_json(tmp_path, spec, quant, error):
    """0.33's reader refuses BLOCK FP8 and builds MistralLarge3ForCausalLM from a `dsa` params.json (whose
    llama-4 scaling assert comes first); 0.34 reads both."""
    folder = write(tmp_path, quant=quant, **spec)
    assert error in inspect(folder, select_profile("0.33")).errors
    assert error not in inspect(folder).errors


@pytest.mark.parametrize("platform", ["cpu", "xpu"])
def test_mistral_large_4_is_refused_on_import_off_nvidia_and_amd(tmp_path, platform):
    rep = inspect(write(tmp_path, quant="fp8-block", **LARGE_4), platform=platform)
    assert any("Mistral Large 4 is only supported on NVIDIA and AMD GPUs." in e for e in rep.errors)


def test_a_streaming_voxtral_params_json_falls_back_to_the_hf_files_beside_it(tmp_path):
    """A Mistral-format model fp8check does not lay out (Voxtral Realtime: a causal Whisper encoder) is read through
    the config.json + *.safetensors beside it (`--config-format hf --load-format hf`); alone, it is refused."""
    folder = write(tmp_path, quant="fp8-static", hidden=512, heads=4, kv_heads=2, head_dim=128,
                   extra_config={"multimodal": {"whisper_model_args": {"encoder_args": {"causal": True}}}})
    with pytest.raises(ConfigError, match="streaming audio"):
        open_local(folder)
    write_checkpoint(folder, Spec(quant="fp8-static", data="sparse", hidden=512, heads=4, kv_heads=2, head_dim=128))
    checkpoint = open_local(folder)
    assert checkpoint.config.architectures == ("LlamaForCausalLM",) and checkpoint.files == ("model.safetensors",)
