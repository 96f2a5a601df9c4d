"""AutoRound / INC block FP8 (fp8check.core.formats.inc) through inspect_checkpoint: the auto-round -> inc
override, 0.25-0.28's construction refusals, 0.29+'s asserts, extra_config / block scope, Fp8LinearMethod's block
keys and kernels, the MoE refusal."""

from __future__ import annotations

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import ConfigError
from fp8check.core.formats import inc
from fp8check.core.formats.registry import parse_quant_config
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.synth import Spec, quantization_config, write_checkpoint

PLATFORMS = ("xpu", "cpu", "cuda:80", "cuda:89", "cuda:90", "cuda:100", "rocm:gfx942")
RELEASES = ("0.25", "0.28", "0.29", "0.33")


def _inspect(tmp_path, platform="cuda:90", release="0.33", **spec):
    folder = write_checkpoint(str(tmp_path / "m"), Spec(quant="inc-fp8-block", **spec))
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), select_profile(release),
                                                                 quantization=None))


def _layer(report, suffix):
    return next(layer for layer in report.layers if layer.name.endswith(suffix))


def _config(**changes):
    cfg = quantization_config(Spec(quant="inc-fp8-block"))
    cfg.update(changes)
    return {k: v for k, v in cfg.items() if v is not None}


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("release", RELEASES)
def test_platforms_and_releases(tmp_path, platform, release):
    report = _inspect(tmp_path, platform, release)
    assert report.quant_method == "inc"
    qkv = _layer(report, "qkv_proj")
    assert qkv.scheme == inc.INC_FP8
    assert (qkv.weight_key, qkv.activation_key) == ("kFp8Static128BlockSym", "kFp8Dynamic128Sym")
    if platform == "rocm:gfx942" and release == "0.25":
        assert report.errors == ("inc quantization is currently not supported in rocm.",)
    elif release == "0.25":
        assert report.errors == ("Unsupported data_type: fp, currently only support  {'int'}.",)
    elif release == "0.28":
        assert report.errors == ("Unsupported data_type: fp, currently only support {'int', 'mx_fp'}.",)
    else:
        assert report.errors == () and report.ok and qkv.kernel


@pytest.mark.parametrize("field,value,expected", [
    ("act_bits", 16, 8), ("act_group_size", 64, 128), ("act_data_type", "int", "fp"), ("act_sym", False, True),
    ("act_dynamic", False, True), ("activation_scheme", "static", "dynamic"), ("fmt", "e5m2", "e4m3"),
])
def test_act_fields_assert(tmp_path, field, value, expected):
    report = _inspect(tmp_path, extra_config={"quantization_config": _config(**{field: value})})
    assert report.errors == (f"AssertionError: INC block-wise FP8 only supports {field}={expected!r}, but found "
                             f"{field}={value!r}.",)


@pytest.mark.parametrize("changes,error", [
    (dict(group_size=[128]), "INC block-wise FP8 requires group_size to be a 2-D integer sequence, but found [128]."),
    (dict(sym=False), "AssertionError: INC block-wise FP8 only supports symmetric weights."),
    (dict(packing_format="auto_round:auto_gptq"), "AssertionError: INC block-wise FP8 only supports "
     "packing_format='auto_round:fp8', but found 'auto_round:auto_gptq'."),
    (dict(packing_format="gguf"), "Unsupported packing_format: gguf, currently only support {'auto_round:auto_gptq', "
     "'auto_round:auto_awq', 'auto_round:fp8', 'auto_round:llm_compressor'}."),
    (dict(bits=6), "Unsupported weight_bits: 6, currently only support {2, 3, 4, 8}."),
])
def test_construction_errors_029(tmp_path, changes, error):
    report = _inspect(tmp_path, release="0.29", extra_config={"quantization_config": _config(**changes)})
    assert report.errors == (error,)


def test_packing_format_defaults_and_sym_required_before_029(tmp_path):
    cfg = _config(packing_format=None, sym=None)
    assert _inspect(tmp_path, extra_config={"quantization_config": cfg}).ok
    assert _inspect(tmp_path, release="0.28", extra_config={"quantization_config": cfg}).errors == (
        "Cannot find any of ['sym'] in the model's quantization config.",)


def test_parse_requires_bits_and_group_size():
    with pytest.raises(ConfigError, match=r"Cannot find any of \['bits'\]"):
        parse_quant_config(_config(bits=None))
    assert parse_quant_config(_config()).method == "inc"
    assert inc.override({"quant_method": "auto-round"}, None) == "inc"
    assert inc.override({"quant_method": "fp8"}, None) is None


def test_extra_config_and_block_scope(tmp_path):
    extra = {"model.layers.0.self_attn.o_proj": {"bits": 16}, "mlp.down_proj": {"bits": 16}}
    report = _inspect(tmp_path, extra_config={"quantization_config": _config(extra_config=extra)})
    assert _layer(report, "layers.0.self_attn.o_proj").scheme == "UnquantizedLinearMethod"
    assert _layer(report, "layers.1.mlp.down_proj").scheme == "UnquantizedLinearMethod"
    assert _layer(report, "layers.1.self_attn.o_proj").scheme == inc.INC_FP8
    scoped = _inspect(tmp_path, extra_config={"quantization_config": _config(block_name_to_quantize="model.layers.1")})
    assert _layer(scoped, "layers.0.mlp.gate_up_proj").scheme == "UnquantizedLinearMethod"
    assert _layer(scoped, "layers.1.mlp.gate_up_proj").scheme == inc.INC_FP8


def test_mixed_fused_shards(tmp_path):
    extra = {"model.layers.0.self_attn.q_proj": {"bits": 16}}
    report = _inspect(tmp_path, extra_config={"quantization_config": _config(extra_config=extra)})
    qkv = _layer(report, "layers.0.self_attn.qkv_proj")
    assert qkv.errors and qkv.errors[0].startswith("Fused module 'model.layers.0.self_attn.qkv_proj' requires "
                                                   "consistent quant config for")


def test_moe_refused(tmp_path):
    report = _inspect(tmp_path, architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=4)
    assert report.moes and all(m.errors for m in report.moes)
    assert report.moes[0].errors[0] == (
        "INCFp8Scheme does not support MoE layers. Layer config: INCLayerConfig(bits=8, group_size=(128, 128), "
        "sym=True, packing_format='auto_round:fp8', backend='auto', data_type='fp', quantized=True)")


def test_no_block_mismatch_escape():
    assert not inc.FORMAT.block_mismatch_escape and inc.FORMAT.validates_block_shape
    assert inc.FORMAT.min_capability == 60 and not inc.FORMAT.scheme_min_capability


def test_an_unquantized_lm_head_gets_unquantized_linear_method(tmp_path):
    """INCConfig.get_quant_method returns UnquantizedLinearMethod for a skipped LinearBase or ParallelLMHead (the
    whole-model comparison with vLLM's built class found fp8check saying UnquantizedEmbeddingMethod)."""
    report = _inspect(tmp_path)
    assert next(layer for layer in report.layers if layer.name == "lm_head").scheme == "UnquantizedLinearMethod"
