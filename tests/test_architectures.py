"""Layouts beyond Llama: DeepSeek MLA, Mixtral, and how ignore lists meet fused layers in each config format."""

from __future__ import annotations

import json
import math
import os

import pytest

from fp8check.core.checkpoint import open_local
from fp8check.core.inspect import InspectOptions, inspect_checkpoint
from fp8check.core.platforms import parse_platform
from fp8check.core.profiles import LATEST
from fp8check.synth import Spec, quantization_config, write_safetensors

BLOCK = [128, 128]


def write(folder, config: dict, linears: dict[str, tuple[int, int]], quant: str, unquantized=()) -> str:
    """A checkpoint with the given linear layers (block FP8 unless listed as unquantized) and config."""
    os.makedirs(folder, exist_ok=True)
    entries = {}
    for name, (n, k) in linears.items():
        if name in unquantized:
            entries[f"{name}.weight"] = ("BF16", (n, k))
            continue
        entries[f"{name}.weight"] = ("F8_E4M3", (n, k))
        scale = "weight_scale_inv" if quant == "fp8-block" else "weight_scale"
        entries[f"{name}.{scale}"] = ("F32", (math.ceil(n / 128), math.ceil(k / 128)))
    write_safetensors(os.path.join(folder, "model.safetensors"), entries, None)
    config = {**config, "quantization_config": quantization_config(Spec(quant=quant, ignore=tuple(unquantized)))}
    with open(os.path.join(folder, "config.json"), "w") as fh:
        json.dump(config, fh)
    return folder


def report(folder, platform="h100", tp=1):
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), LATEST, tp=tp))


def layer(rep, name):
    return next(layer for layer in rep.layers if layer.name == name)


def test_deepseek_mla_low_rank_projections_are_replicated_and_quantized(tmp_path):
    # DeepSeek-V3 layer 0 (MLA): q_a / kv_a_with_mqa are ReplicatedLinear in vLLM; 576 rows never split.
    p = "model.layers.0.self_attn"
    linears = {f"{p}.q_a_proj": (1536, 7168), f"{p}.kv_a_proj_with_mqa": (576, 7168), f"{p}.q_b_proj": (24576, 1536),
               f"{p}.kv_b_proj": (32768, 512), f"{p}.o_proj": (7168, 16384), "model.layers.0.mlp.gate_proj": (18432, 7168),
               "model.layers.0.mlp.up_proj": (18432, 7168), "model.layers.0.mlp.down_proj": (7168, 18432),
               "lm_head": (129280, 7168)}
    config = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
              "num_attention_heads": 128, "num_key_value_heads": 128, "dtype": "bfloat16"}
    rep = report(write(str(tmp_path), config, linears, "fp8-block", unquantized=("lm_head",)), tp=8)
    kv_a = layer(rep, f"{p}.kv_a_proj_with_mqa")
    assert kv_a.layer_type == "ReplicatedLinear" and kv_a.scheme == "Fp8LinearMethod" and kv_a.kernel
    assert rep.ok and 8 in rep.tp_sizes_ok


def test_mixtral_router_stays_unquantized(tmp_path):
    linears = {"model.layers.0.block_sparse_moe.gate": (8, 4096), "model.layers.0.self_attn.o_proj": (4096, 4096)}
    for e in range(2):
        for w, shape in (("w1", (14336, 4096)), ("w2", (4096, 14336)), ("w3", (14336, 4096))):
            linears[f"model.layers.0.block_sparse_moe.experts.{e}.{w}"] = shape
    config = {"architectures": ["MixtralForCausalLM"], "hidden_size": 4096, "num_attention_heads": 32,
              "num_key_value_heads": 8}
    rep = report(write(str(tmp_path), config, linears, "ct-fp8-block",
                       unquantized=("model.layers.0.block_sparse_moe.gate",)), tp=2)
    gate = layer(rep, "model.layers.0.block_sparse_moe.gate")
    assert gate.layer_type == "ReplicatedLinear" and gate.scheme == "UnquantizedLinearMethod" and gate.ok
    assert [m.name for m in rep.moes] == ["model.layers.0.block_sparse_moe.experts"]
    assert rep.ok


def test_unquantized_layers_still_need_to_divide(make_checkpoint):
    folder = make_checkpoint(quant=None, intermediate=514, heads=4, kv_heads=4, head_dim=64)
    rep = report(folder, tp=4)
    assert layer(rep, "model.layers.0.mlp.gate_up_proj").errors == ("AssertionError: 514 is not divisible by 4",)
    assert not rep.ok and 4 not in rep.tp_sizes_ok


@pytest.mark.parametrize("quant,ignored", [("ct-fp8-block", True), ("fp8-block", False)])
def test_fused_name_in_the_ignore_list(make_checkpoint, quant, ignored):
    # compressed-tensors' should_ignore_layer takes an exact fused name; Fp8Config's is_layer_skipped only asks
    # the shards (q/k/v), so listing "qkv_proj" there ignores nothing.
    fused = "model.layers.0.self_attn.qkv_proj"
    folder = make_checkpoint(quant=quant, head_dim=128, ignore=("lm_head", fused))
    qkv = layer(report(folder), fused)
    assert (qkv.scheme == "UnquantizedLinearMethod") is ignored


def test_xpu_ragged_shapes_fail_after_loading(make_checkpoint):
    # gate_up's K = hidden = 320 is not a multiple of the 128 block: vLLM's XPU post-load assert.
    rep = report(make_checkpoint(quant="ct-fp8-block", hidden=320, heads=5, kv_heads=5, head_dim=64,
                                 intermediate=640), "xpu")
    gate_up = layer(rep, "model.layers.0.mlp.gate_up_proj")
    assert gate_up.kernel == "XPUFp8BlockScaledMMKernel"
    assert gate_up.errors == ("XPU block-scaled FP8 requires K (320) to be a multiple of the weight block size (128); "
                           "ragged-K weights are unsupported.",)
    # A row-parallel down_proj with N = hidden = 264: gcd(264, 128) = 8, below oneDNN's multiple of 16.
    narrow = report(make_checkpoint(quant="ct-fp8-block", hidden=264, heads=4, kv_heads=4, head_dim=66,
                                    intermediate=256), "xpu")
    assert layer(narrow, "model.layers.0.mlp.down_proj").errors[0].startswith(
        "XPU block-scaled FP8: N (264) yields group width 8, but oneDNN only supports multiples of 16")
