"""AMD Quark FP8 (quant_method quark, vLLM QuarkConfig): parse, matching, schemes, keys, the capability gate per
release, tensors and MoE, through inspect_checkpoint on synth checkpoints and on the format's functions."""

from __future__ import annotations

import copy

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import ConfigError
from fp8check.core.formats import quark
from fp8check.core.formats.shared import ExpertsProbe
from fp8check.core.model.modules import Shard
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.kernels.quant_keys import (
    kFp8Dynamic128Sym, kFp8DynamicTensorSym, kFp8DynamicTokenSym, kFp8Static128BlockSym, kFp8StaticChannelSym,
    kFp8StaticTensorSym,
)
from fp8check.synth import QUANTS, Spec, quantization_config, write_checkpoint

PLATFORMS = ("xpu", "cpu", "cuda:80", "cuda:89", "cuda:90", "cuda:100", "rocm:gfx942")
RELEASES = ("0.25", "0.28", "0.30", "0.33")
STRATEGIES = {"quark-fp8": ("QuarkW8A8Fp8", "kFp8StaticTensorSym", "kFp8StaticTensorSym"),
              "quark-ptpc": ("QuarkW8A8Fp8", "kFp8StaticChannelSym", "kFp8DynamicTokenSym"),
              "quark-fp8-block": ("QuarkW8A8Fp8PerBlock", "kFp8Static128BlockSym", "kFp8Dynamic128Sym")}
CAP_ERROR = "Quantization scheme is not supported for the current GPU. Min capability: 89. Current capability: 80."


def _report(tmp_path, quant: str, platform: str, release: str, **spec):
    folder = write_checkpoint(str(tmp_path / "ckpt"), Spec(quant=quant, **spec))
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), select_profile(release)))


def _layer(report, leaf: str):
    return next(layer for layer in report.layers if layer.name.endswith(leaf))


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("quant", list(STRATEGIES))
def test_scheme_kernel_and_gates(tmp_path, quant, platform, release):
    report = _report(tmp_path, quant, platform, release)
    layer = _layer(report, "self_attn.qkv_proj")
    scheme, weight_key, act_key = STRATEGIES[quant]
    keys = release in ("0.30", "0.33")
    cc = parse_platform(platform).capability
    no_scheme = layer.errors and layer.errors[0].startswith("No quark compatible scheme was found. Weight config: {")
    xpu_refused = platform == "xpu" and release != "0.25"
    assert ("quark quantization is currently not supported in xpu." in report.errors) == xpu_refused
    if quant == "quark-fp8-block" and release == "0.25":
        assert no_scheme  # no per-block scheme before 0.28
    elif not keys and (cc is None or cc < 89):
        assert no_scheme and layer.scheme == "?"  # <= 0.29: the FP8 branch falls through, CPU / XPU included
    elif keys and cc is not None and cc < 89:
        assert layer.scheme == scheme and layer.errors == (CAP_ERROR,)
    else:
        assert layer.scheme == scheme and (layer.weight_key, layer.activation_key) == (weight_key, act_key)
        assert layer.kernel is not None
        # 0.28 / 0.29's per-block scheme registers weight_scale_inv; Quark exports (and synth) write weight_scale
        inv_missing = [e for e in layer.errors if "weight_scale_inv is missing" in e]
        assert bool(inv_missing) == (quant == "quark-fp8-block" and release == "0.28")
    # The excluded lm_head: UnquantizedLinearMethod until 0.30's rewrite of get_quant_method, then no method.
    assert _layer(report, "lm_head").scheme == ("UnquantizedLinearMethod" if not keys and not xpu_refused
                                                else "UnquantizedEmbeddingMethod")


def _config(quant: str = "quark-fp8", **changes) -> dict:
    cfg = copy.deepcopy(quantization_config(Spec(quant=quant)))
    cfg.update(changes)
    return cfg


def _parsed(release: str = "0.33", **changes) -> quark.QuarkConfig:
    return quark.for_release(quark.parse(_config(**changes), "q"), select_profile(release))


def _module(name: str, shards: tuple[str, ...] = (), layer_type: str = "RowParallelLinear"):
    return ExpertsProbe(name, layer_type, tuple(Shard(s, None, {}) for s in shards), bool(shards))


QKV = ("m.layers.0.self_attn.q_proj", "m.layers.0.self_attn.k_proj", "m.layers.0.self_attn.v_proj")


def test_parse_errors():
    with pytest.raises(ConfigError, match="^q: The export key should be included in the configurations of Quark "
                                          "quantized model$"):
        quark.parse({"quant_method": "quark"}, "q")
    export = {"kv_cache_group": ["*k_proj", "*v_proj"]}
    with pytest.raises(ConfigError, match="no kv_cache quantization settings were found in the quantization"):
        quark.parse(_config(export=export), "q")
    fp8 = {"dtype": "fp8_e4m3", "qscheme": "per_tensor", "is_dynamic": False}
    layers = {"*k_proj": {"output_tensors": fp8}, "*v_proj": {"output_tensors": {**fp8, "qscheme": "per_channel"}}}
    with pytest.raises(ConfigError, match="the quantization method for the kv_cache layer in the config is different"):
        quark.parse(_config(export=export, layer_quant_config=layers), "q")
    with pytest.raises(ConfigError, match="The kv_cache quantization configuration is empty."):
        quark.parse(_config(export=export, layer_quant_config={"*k_proj": {"output_tensors": None}}), "q")
    layers = {name: {"output_tensors": fp8} for name in ("*k_proj", "*v_proj", "*q_proj")}
    parsed = quark.parse(_config(export=export, layer_quant_config=layers), "q")
    assert parsed.kv_cache_config == fp8 and all(c["output_tensors"] is None for c in parsed.layer_configs.values())
    assert layers["*k_proj"]["output_tensors"] == fp8  # the checkpoint's dict is not mutated


def test_layer_matching_and_fused_shards():
    int8 = {"weight": {"dtype": "int8", "qscheme": "per_channel"}, "input_tensors": None}
    config = _parsed(layer_quant_config={"m.layers.0.self_attn.o_proj.extra": int8, "*down_proj": int8})
    # a key without '*' matches when the layer name is a substring of it; with '*', fnmatch
    assert quark.assign(_module("m.layers.0.self_attn.o_proj"), config).scheme == quark.NON_FP8_SCHEME
    assert quark.assign(_module("m.layers.3.mlp.down_proj"), config).scheme == quark.NON_FP8_SCHEME
    assert quark.assign(_module("m.layers.0.self_attn.o_pro"), config).scheme == quark.NON_FP8_SCHEME
    assert quark.assign(_module("m.layers.1.self_attn.o_proj"), config).scheme == quark.W8A8_FP8
    # layer_type_quant_config is looked up by class object in vLLM: a class-name key never matches
    config = _parsed(layer_type_quant_config={"RowParallelLinear": int8})
    assert quark.assign(_module("m.layers.0.self_attn.o_proj"), config).scheme == quark.W8A8_FP8
    mixed = quark.assign(_module("m.layers.0.self_attn.qkv_proj", QKV, "QKVParallelLinear"),
                         _parsed(layer_quant_config={"*k_proj": int8}))
    assert mixed.error == ("Found a different quantization configuration for ['q_proj', 'k_proj', 'v_proj'] in "
                           "m.layers.0.self_attn.qkv_proj. vLLM requires all to use the same scheme.")


@pytest.mark.parametrize("release", ["0.28", "0.33"])
def test_exclude(release):
    qkv = _module("m.layers.0.self_attn.qkv_proj", QKV, "QKVParallelLinear")
    down = _parsed(release, exclude=["re:.*down_proj"])
    assert quark.assign(_module("m.layers.0.mlp.down_proj"), down).method is None
    assert quark.assign(_module("m.layers.0.mlp.down"), down).method == "quark"
    assert quark.assign(qkv, _parsed(release, exclude=["re:.*[qkv]_proj"])).method is None
    mixed = quark.assign(qkv, _parsed(release, exclude=["m.layers.0.self_attn.k_proj"])).error
    if release == "0.33":
        assert mixed == ("Found different quantization schemes for the shards of m.layers.0.self_attn.qkv_proj. "
                         "vLLM requires all to use the same scheme.")
        assert quark.assign(qkv, _parsed(release, exclude=["m.layers.0.self_attn.qkv_proj"])).method is None
    else:
        assert mixed == ("Found a different quantization schemes for ['q_proj', 'k_proj', 'v_proj'] in "
                         "m.layers.0.self_attn.qkv_proj. vLLM requires all to use the same scheme.")
        assert quark.assign(qkv, _parsed(release, exclude=["m.layers.0.self_attn.qkv_proj"])).method == "quark"


def _global(weight: dict, inputs: dict | None, **extra) -> dict:
    return {"global_quant_config": {"weight": weight, "input_tensors": inputs, **extra}}


W_TENSOR = {"dtype": "fp8_e4m3", "qscheme": "per_tensor", "is_dynamic": False, "symmetric": True}
A_DYN_TENSOR = {"dtype": "fp8_e4m3", "qscheme": "per_tensor", "is_dynamic": True, "symmetric": True}


@pytest.mark.parametrize("release,act", [("0.28", kFp8StaticTensorSym), ("0.33", kFp8DynamicTensorSym)])
def test_dynamic_per_tensor_activation_key(release, act):
    config = _parsed(release, **_global(W_TENSOR, A_DYN_TENSOR))
    a = quark.assign(_module("m.o_proj"), config)
    ctx = _ctx(release)
    assert quark.kernel_request(a.scheme, a, ctx, False)[1:3] == (kFp8StaticTensorSym, act)
    assert quark.expected_tensors(a).static_input is False


def _ctx(release: str, platform: str = "cuda:90"):
    from fp8check.kernels.base import RoutingContext
    return RoutingContext(parse_platform(platform), select_profile(release), frozenset())


def test_refusals():
    out = quark.assign(_module("m.o_proj"), _parsed(**_global(W_TENSOR, W_TENSOR, bias={"dtype": "fp8_e4m3"})))
    assert out.error == quark.OUTPUT_OR_BIAS
    no_block = {**W_TENSOR, "qscheme": "per_block"}
    group = {**A_DYN_TENSOR, "qscheme": "per_group", "group_size": 128}
    assert quark.assign(_module("m.o_proj"), _parsed("0.33", **_global(no_block, group))).error == (
        "Quark W8A8 FP8 per-block weight quantization requires `block_size` in the weight quantization config.")
    assert quark.assign(_module("m.o_proj"), _parsed("0.28", **_global(no_block, group))).error == (
        f"No quark compatible scheme was found. Weight config: {no_block}, Input config: {group}")
    static_channel = {**W_TENSOR, "qscheme": "per_channel"}
    assert quark.assign(_module("m.o_proj"), _parsed(**_global(W_TENSOR, static_channel))).error == (
        f"No quark compatible scheme was found. Weight config: {W_TENSOR}, Input config: {static_channel}")


def test_tensors(tmp_path):
    block = quark.assign(_module("m.o_proj"), _parsed("0.33", **_config("quark-fp8-block")))
    scale = quark.expected_tensors(block).weight_scale
    assert (scale.suffix, scale.stray, scale.block) == ("weight_scale", "weight_scale_inv", (128, 128))
    channel = quark.expected_tensors(quark.assign(_module("m.o_proj"), _parsed(**_config("quark-ptpc"))))
    assert channel.weight_scale.strategy == "channel" and not channel.static_input
    tensor = quark.expected_tensors(quark.assign(_module("m.o_proj"), _parsed()))
    assert tensor.weight_scale.strategy == "tensor" and tensor.static_input
    assert QUANTS["quark-ptpc"].scale_layout == "vector"  # [N] scales: inspect finds no integrity error
    assert not _layer(_report(tmp_path, "quark-ptpc", "cuda:90", "0.33"), "o_proj").errors


MOE = "m.layers.0.mlp.experts"
LEAVES = ("gate_proj", "up_proj", "down_proj")


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("quant", list(STRATEGIES))
def test_moe_method(quant, release):
    method = quark.moe_method(MOE, LEAVES, _parsed(release, **_config(quant)), "0.33")
    keys = release in ("0.30", "0.33")
    if quant == "quark-fp8":
        assert (method.method, method.weight_key, method.activation_key) == (
            quark.FP8_MOE, kFp8StaticTensorSym, kFp8StaticTensorSym)
    elif quant == "quark-ptpc":
        assert (method.weight_key, method.activation_key) == (kFp8StaticChannelSym, kFp8DynamicTokenSym)
    elif release == "0.25":
        assert method.error == "Unsupported FusedMoe scheme"
    elif not keys:
        assert method.error == ("For FP8 Fused MoE layers, only per-tensor and per-channel scales for weights and "
                                "activations are supported. Found per_block, per_group")
    else:
        assert (method.weight_key, method.activation_key, method.block) == (
            kFp8Static128BlockSym, kFp8Dynamic128Sym, (128, 128))


def test_moe_refusals_and_exclude():
    channel_static = _global({**W_TENSOR, "qscheme": "per_channel"}, W_TENSOR)
    assert quark.moe_method(MOE, LEAVES, _parsed("0.33", **channel_static), "0.33").error == (
        "For FP8 Fused MoE layers, only per-tensor, per-channel and per-block scales for weights and activations "
        "are supported. Found per_channel, per_tensor")
    token = {**A_DYN_TENSOR, "qscheme": "per_channel"}
    assert quark.moe_method(MOE, LEAVES, _parsed("0.28", **_global(W_TENSOR, token)), "0.28").error == (
        "For FP8 Fused MoE layers, only per-tensor and per-channel scales for weights and activations are "
        "supported. Found per_tensor, per_channel")
    e8m0 = _config("quark-fp8-block")
    e8m0["global_quant_config"]["weight"]["scale_type"] = "float8_e8m0fnu"
    assert quark.moe_method(MOE, LEAVES, _parsed("0.33", **e8m0), "0.33").error == (
        "Unsupported weight quant key: QuantKey(f8e4m3fn,scale(f8e8m0fnu,static,GroupShape(row=128, col=128)),"
        "symmetric)")
    child = _parsed(exclude=[f"{MOE}.3.down_proj"])
    assert quark.moe_method(MOE, LEAVES, child, "0.33").method == "UnquantizedFusedMoEMethod"
    assert quark.moe_method(MOE, LEAVES, _parsed(exclude=["re:.*experts.3"]), "0.33").method == quark.FP8_MOE


@pytest.mark.parametrize("release", ["0.28", "0.33"])
def test_moe_checkpoint(tmp_path, release):
    report = _report(tmp_path, "quark-ptpc", "cuda:90", release, experts=4, model_type="qwen3_moe",
                     architecture="Qwen3MoeForCausalLM")
    assert report.moes and all(m.scheme == quark.FP8_MOE and m.weight_key == "kFp8StaticChannelSym"
                               for m in report.moes)
