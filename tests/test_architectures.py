"""Layouts beyond Llama: DeepSeek MLA, Mixtral, and how ignore lists meet fused layers in each config format."""

from __future__ import annotations

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import LATEST, select_profile

# DeepSeek-V3's shapes scaled down, keeping what the TP 8 checks look at: 16 heads, 128-wide nope/v heads,
# 64-wide rope, q_lora_rank and kv_lora_rank multiples of 128, MoE widths that split into 128-blocks at TP 8.
DEEPSEEK = dict(quant="fp8-block", architecture="DeepseekV3ForCausalLM", model_type="deepseek_v3", hidden=1024,
                heads=16, kv_heads=16, head_dim=128, mla=True, q_lora_rank=512, kv_lora_rank=256, qk_rope_head_dim=64,
                intermediate=2048, vocab=1280, data="sparse")


def report(folder, platform="h100", tp=1):
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), LATEST, tp=tp))


def layer(rep, name):
    return next(layer for layer in rep.layers if layer.name == name)


def test_deepseek_mla_without_q_lora_rank_keeps_kv_a_replicated(make_checkpoint):
    # DeepSeek-V2-Lite: no q_lora_rank, so no fused_qkv_a_proj; kv_a_proj_with_mqa is a ReplicatedLinear whose
    # 320 rows (kv_lora_rank + rope) are never split, q_proj a ColumnParallelLinear.
    rep = report(make_checkpoint(**{**DEEPSEEK, "q_lora_rank": None}), tp=8)
    p = "model.layers.0.self_attn"
    kv_a = layer(rep, f"{p}.kv_a_proj_with_mqa")
    assert kv_a.layer_type == "ReplicatedLinear" and kv_a.scheme == "Fp8LinearMethod" and kv_a.kernel
    assert layer(rep, f"{p}.q_proj").layer_type == "ColumnParallelLinear"
    assert not any(layer.name.endswith("fused_qkv_a_proj") for layer in rep.layers)
    assert rep.ok and 8 in rep.tp_sizes_ok


def test_deepseek_mla_with_q_lora_rank_fuses_qkv_a(make_checkpoint):
    rep = report(make_checkpoint(**DEEPSEEK), tp=8)
    fused = layer(rep, "model.layers.0.self_attn.fused_qkv_a_proj")
    assert fused.layer_type == "DeepSeekV2FusedQkvAProjLinear" and fused.layout == "vllm:deepseek_v2.py"
    assert fused.shards == ("model.layers.0.self_attn.q_a_proj", "model.layers.0.self_attn.kv_a_proj_with_mqa")
    assert fused.shape == (512 + 256 + 64, 1024) and fused.kernel
    assert not any(layer.name.endswith(("q_a_proj", "kv_a_proj_with_mqa")) for layer in rep.layers)
    assert rep.ok and not rep.notes  # handled by the table: no "not in fp8check's table" note


@pytest.mark.parametrize("quant,message", [
    ("fp8-block", "Detected some but not all shards of model.layers.0.self_attn.fused_qkv_a_proj are quantized. "
                  "All shards of fused layers to have the same precision."),
    ("ct-fp8-block", "Found different quantization schemes for the shards of "
                     "model.layers.0.self_attn.fused_qkv_a_proj. vLLM requires all to use the same scheme."),
])
def test_mla_pair_with_mixed_quantization_is_refused(make_checkpoint, quant, message):
    rep = report(make_checkpoint(**{**DEEPSEEK, "quant": quant},
                                 ignore=("lm_head", "model.layers.0.self_attn.kv_a_proj_with_mqa")), tp=8)
    assert layer(rep, "model.layers.0.self_attn.fused_qkv_a_proj").errors == (message,)
    assert not rep.ok


def test_deepseek_r1_shape_at_tp8_skips_the_mtp_layer(make_checkpoint):
    # The "done when": dense layer 0, MoE layers with shared experts, one MTP layer with BF16 eh_proj and
    # a vocab-wide shared_head.head. At TP 8 every main-model layer routes; the MTP layer is skipped, not failed.
    folder = make_checkpoint(**DEEPSEEK, layers=3, experts=4, moe_style="deepseek", shared_experts=1,
                             first_k_dense=1, moe_intermediate=1024, mtp_layers=1)
    rep = report(folder, "h200", tp=8)
    assert rep.ok and 8 in rep.tp_sizes_ok and all(layer.kernel or layer.scheme.startswith("Unquantized")
                                                   for layer in rep.layers)
    assert [s.prefix for s in rep.skipped] == ["model.layers.3."]
    skipped = {t.name for t in rep.skipped[0].tensors}
    assert {"model.layers.3.eh_proj.weight", "model.layers.3.shared_head.head.weight"} <= skipped
    assert not any(layer.name.startswith("model.layers.3.") for layer in rep.layers)
    assert layer(rep, "model.layers.0.mlp.gate_up_proj").layer_type == "MergedColumnParallelLinear"  # dense
    assert [m.name for m in rep.moes] == ["model.layers.1.mlp.experts", "model.layers.2.mlp.experts"]
    shared = layer(rep, "model.layers.1.mlp.shared_experts.gate_up_proj")
    assert shared.layer_type == "MergedColumnParallelLinear" and shared.kernel  # an ordinary quantized linear
    router = layer(rep, "model.layers.1.mlp.gate")
    assert router.layer_type == "ReplicatedLinear" and router.scheme == "UnquantizedLinearMethod"


def test_without_the_table_the_mtp_layer_would_be_checked(make_checkpoint):
    # The same checkpoint without num_nextn_predict_layers: the BF16 eh_proj becomes a main-model layer in an
    # fp8 checkpoint that does not ignore it, so it fails, which is what fp8check reported before the table.
    folder = make_checkpoint(**DEEPSEEK, layers=1, mtp_layers=1, mtp_key="unrelated_key")
    rep = report(folder, "h200", tp=8)
    assert not rep.skipped and not rep.ok
    assert any("eh_proj" in e for e in layer(rep, "model.layers.1.eh_proj").errors)


def test_mixtral_router_stays_unquantized(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-block", architecture="MixtralForCausalLM", moe_style="mixtral",
                             experts=2, moe_intermediate=256, head_dim=128, ignore=("lm_head",))
    rep = report(folder, tp=2)
    gate = layer(rep, "model.layers.0.block_sparse_moe.gate")
    assert gate.layer_type == "ReplicatedLinear" and gate.scheme == "UnquantizedLinearMethod" and gate.ok
    assert gate.layout == "vllm:mixtral.py"
    assert [m.name for m in rep.moes][0] == "model.layers.0.block_sparse_moe.experts"
    assert rep.ok


def test_unquantized_layers_still_need_to_divide(make_checkpoint):
    folder = make_checkpoint(quant=None, intermediate=514, heads=4, kv_heads=4, head_dim=64)
    rep = report(folder, tp=4)
    assert layer(rep, "model.layers.0.mlp.gate_up_proj").errors == ("AssertionError: 514 is not divisible by 4",)
    assert not rep.ok and 4 not in rep.tp_sizes_ok


@pytest.mark.parametrize("quant,ignored", [("ct-fp8-block", True), ("fp8-block", True)])
def test_fused_name_in_the_ignore_list(make_checkpoint, quant, ignored):
    # compressed-tensors' should_ignore_layer takes an exact fused name; so does Fp8Config's is_layer_skipped
    # ("Honor that fused-name match first", quant_utils.py in every release 0.25-0.33) before asking q/k/v.
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


QWEN3_MOE = dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=4, moe_intermediate=128,
                 hidden=256, head_dim=128, data="sparse")


@pytest.mark.parametrize("quant", ["fp8-block", "ct-fp8-block", "modelopt-fp8"])
@pytest.mark.parametrize("release", ["0.28", "0.33"])
def test_qwen3_moe_builds_its_router_with_the_quant_config(make_checkpoint, quant, release):
    """qwen3_moe.py passes quant_config to mlp.gate (ReplicatedLinear until 0.30, GateLinear from 0.31): listed in
    the ignore list (as exporters write it) it is unquantized; not listed, vLLM gives it the FP8 method and loads
    the BF16 router into an FP8 parameter, which fp8check names."""
    profile = select_profile(release)
    listed = inspect_checkpoint(open_local(make_checkpoint(quant=quant, **QWEN3_MOE)),
                                InspectOptions(parse_platform("h100"), profile))
    gate = layer(listed, "model.layers.0.mlp.gate")
    assert gate.layer_type == "ReplicatedLinear" and gate.scheme == "UnquantizedLinearMethod" and gate.ok
    assert any("listed in" in note for note in gate.notes)
    missed = inspect_checkpoint(open_local(make_checkpoint(quant=quant, ignore_routers=False, **QWEN3_MOE)),
                                InspectOptions(parse_platform("h100"), profile))
    gate = layer(missed, "model.layers.0.mlp.gate")
    assert gate.scheme != "UnquantizedLinearMethod" and gate.kernel
    assert any(e.startswith("model.layers.0.mlp.gate.weight (model.safetensors) is BF16, but the quantization "
                            "config makes it an FP8 layer") for e in gate.errors)
    assert not missed.ok


@pytest.mark.parametrize("architecture, model_type, router", [
    ("Qwen2MoeForCausalLM", "qwen2_moe", "model.layers.0.mlp.gate"),
    ("MixtralForCausalLM", "mixtral", "model.layers.0.block_sparse_moe.gate"),
    ("DeepseekV3ForCausalLM", "deepseek_v3", "model.layers.0.mlp.gate"),
])
def test_routers_built_with_quant_config_none_stay_unquantized_whatever_the_ignore_list(
        make_checkpoint, architecture, model_type, router):
    moe_style = {"mixtral": "mixtral", "deepseek_v3": "deepseek"}.get(model_type, "qwen")
    folder = make_checkpoint(quant="fp8-block", architecture=architecture, model_type=model_type, experts=4,
                             moe_intermediate=128, hidden=256, head_dim=128, data="sparse", moe_style=moe_style,
                             ignore_routers=False)
    gate = layer(report(folder), router)
    assert gate.scheme == "UnquantizedLinearMethod" and gate.ok
