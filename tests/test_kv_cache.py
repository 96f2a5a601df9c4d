"""The KV cache inspect predicts per attention layer: --kv-cache-dtype and `auto` per format and release, the
stored dtype per platform, the KV cache method, vLLM's refusals and scheme checks, and the checkpoint's scales
(named when one layer lacks one, shape-checked, the deprecated fused kv_scale)."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace

import pytest

import fp8check
from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import InputError
from fp8check.core.formats import online
from fp8check.core.formats.registry import ALL_FORMATS
from fp8check.core.formats.kv_cache import (
    E5M2_REFUSED, FALLBACK_ONE, KV_SCALE_DEPRECATED, KVConfig, cache_dtypes, check_cache_dtype, remap,
)
from fp8check.core.records import InspectOptions
from fp8check.core.routing import attention as routing_attention
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import PROFILES

PROFILE = {p.vllm: p for p in PROFILES}
RELEASES = ("0.28", "0.33")
MLA = dict(architecture="DeepseekV3ForCausalLM", model_type="deepseek_v3", mla=True, q_lora_rank=128)
# What each format's scale names are in the checkpoint (layer 1's v scale).
V_SCALE_OF_LAYER_1 = {"ct-fp8": "model.layers.1.self_attn.v_scale", "fp8-static": "model.layers.1.self_attn.v_scale",
                      "modelopt-fp8": "model.layers.1.self_attn.v_proj.v_scale",
                      "quark-fp8": "model.layers.1.self_attn.v_proj.output_scale"}
METHOD = {"ct-fp8": "CompressedTensorsKVCacheMethod", "fp8-static": "Fp8KVCacheMethod",
          "modelopt-fp8": "ModelOptKVCacheMethod", "quark-fp8": "QuarkKVCacheMethod"}


def inspect(folder: str, release: str = "0.33", platform: str = "cuda:9.0", **options):
    opts = InspectOptions(parse_platform(platform), PROFILE[release], **options)
    return inspect_checkpoint(open_local(folder), opts)


def edit_quant_config(folder: str, edit) -> str:
    path = os.path.join(folder, "config.json")
    with open(path) as fh:
        config = json.load(fh)
    edit(config["quantization_config"])
    with open(path, "w") as fh:
        json.dump(config, fh)
    return folder


@pytest.mark.parametrize("release, value, valid", [
    ("0.33", "fp8_e4m3", True), ("0.28", "nvfp4_4over6", True), ("0.28", "octave_k3v4", False),
    ("0.33", "octave_k3v4", True), ("0.33", "fp8_e4m4", False), ("0.28", "float32", False),
    ("0.34", "octave_k3v3_compact", True), ("0.34", "float32", False),
])
def test_kv_cache_dtype_values_are_the_releases(release, value, valid):
    assert (value in cache_dtypes(PROFILE[release])) is valid
    if valid:
        check_cache_dtype(value, PROFILE[release])
        return
    with pytest.raises(InputError) as err:
        check_cache_dtype(value, PROFILE[release])
    assert "\n" not in str(err.value) and "fp8_e5m2" in str(err.value) and repr(value) in str(err.value)
    assert f"is not a vLLM {release} cache dtype" in str(err.value)


# config/cache.py's CacheDType Literal, read from each wheel (0.26 / 0.27 are 0.25's, 0.29 is 0.28's, 0.31 is
# 0.30's); 0.34.0 keeps 0.33.0's 22 values.
_CACHE_025 = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla", "turboquant_k8v4",
              "turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc", "int4_per_token_head",
              "int8_per_token_head", "fp8_per_token_head", "nvfp4")
_CACHE_030 = _CACHE_025[:8] + ("nvfp4_ds_mla",) + _CACHE_025[8:] + ("nvfp4_4over6",)
_CACHE_032 = _CACHE_030[:13] + ("ultraquant_4bit",) + _CACHE_030[13:]
_CACHE_033 = _CACHE_032[:13] + ("octave_k3v4", "octave_k3v3", "octave_k3v3_compact") + _CACHE_032[13:]


@pytest.mark.parametrize("release, values", [
    ("0.25", _CACHE_025), ("0.27", _CACHE_025), ("0.28", _CACHE_025 + ("nvfp4_4over6",)), ("0.30", _CACHE_030),
    ("0.31", _CACHE_030), ("0.32", _CACHE_032), ("0.33", _CACHE_033), ("0.34", _CACHE_033),
])
def test_cache_dtypes_are_each_wheels_cache_dtype_literal(release, values):
    assert cache_dtypes(PROFILE[release]) == values


def test_inspect_refuses_an_unknown_kv_cache_dtype_before_reading_layers(make_checkpoint):
    """The options are checked once, as they are built (api.routing_options), before any header is read."""
    with pytest.raises(InputError, match="--kv-cache-dtype 'fp9'"):
        fp8check.inspect(make_checkpoint(), platform="h100", vllm="0.33", kv_cache_dtype="fp9")


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("quant, kv_cache, dtype, method", [
    ("ct-fp8", "tensor", "fp8", "CompressedTensorsKVCacheMethod"),       # kv_cache_scheme: Attention switches auto
    ("ct-fp8", None, "bfloat16", "CompressedTensorsKVCacheMethod"),     # every Attention gets the method
    ("modelopt-fp8", "tensor", "fp8_e4m3", "ModelOptKVCacheMethod"),      # arg_utils: kv_cache_scheme
    ("modelopt-fp8-legacy", "tensor", "fp8_e4m3", "ModelOptKVCacheMethod"),  # arg_utils: kv_cache_quant_algo
    ("modelopt-fp8", None, "bfloat16", "ModelOptKVCacheMethod"),
    ("quark-fp8", "tensor", "bfloat16", "QuarkKVCacheMethod"),           # Quark never switches auto
    ("fp8-static", "tensor", "bfloat16", "Fp8KVCacheMethod"),
    ("inc-fp8-block", None, "bfloat16", None),
    (None, None, "bfloat16", None),
])
def test_auto_resolves_per_format(make_checkpoint, release, quant, kv_cache, dtype, method):
    report = inspect(make_checkpoint(quant=quant, kv_cache=kv_cache), release)
    assert [a.name for a in report.attention] == ["model.layers.0.self_attn.attn", "model.layers.1.self_attn.attn"]
    assert {(a.kv_cache_dtype, a.kv_method) for a in report.attention} == {(dtype, method)}
    assert {a.cache_dtype for a in report.attention} == {"float8_e4m3fn" if dtype.startswith("fp8") else "bfloat16"}


def test_an_explicit_kv_cache_dtype_wins_over_the_checkpoints_scheme(make_checkpoint):
    report = inspect(make_checkpoint(quant="ct-fp8", kv_cache="tensor"), kv_cache_dtype="bfloat16")
    assert {(a.kv_cache_dtype, a.cache_dtype) for a in report.attention} == {("bfloat16", "bfloat16")}


def test_float16_models_cache_in_float16_under_auto(make_checkpoint):
    report = inspect(make_checkpoint(quant="ct-fp8", dtype="float16"))
    assert {a.cache_dtype for a in report.attention} == {"float16"}


@pytest.mark.parametrize("platform, value, stored", [
    ("cuda:9.0", "fp8", "float8_e4m3fn"), ("rocm:gfx942", "fp8", "float8_e4m3fnuz"),
    ("rocm:gfx942", "fp8_e4m3", "float8_e4m3fnuz"), ("rocm:gfx950", "fp8", "float8_e4m3fn"),
    ("xpu", "fp8_e4m3", "float8_e4m3fn"), ("cuda:8.0", "fp8_e5m2", "float8_e5m2"),
    ("rocm:gfx942", "fp8_e5m2", "float8_e5m2"), ("cpu", "bfloat16", "bfloat16"),
])
def test_stored_dtype_follows_the_platform(make_checkpoint, platform, value, stored):
    report = inspect(make_checkpoint(quant="ct-fp8-block"), platform=platform, kv_cache_dtype=value)
    assert {a.cache_dtype for a in report.attention} == {stored}


def test_fnuz_platforms_note_the_doubled_scales(make_checkpoint):
    folder = make_checkpoint(quant="fp8-static", kv_cache="tensor")
    notes = inspect(folder, platform="rocm:gfx942", kv_cache_dtype="fp8").attention[0].notes
    assert any("doubles" in n for n in notes)
    assert not any("doubles" in n for n in inspect(folder, kv_cache_dtype="fp8").attention[0].notes)


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("quant, spec, refused", [
    ("fp8-static", {}, True), ("fp8-block", {}, True), ("modelopt-fp8", {}, True), ("quark-fp8", {}, True),
    ("ct-fp8", {"kv_cache": "tensor"}, True),
    ("ct-fp8", {}, False),              # no kv_cache_scheme: weight-only CT checkpoints keep fp8_e5m2
    ("inc-fp8-block", {}, False), (None, {}, False),
    ("fp8-block", MLA, False),          # Fp8Config gives MLAAttention no KV method
    ("modelopt-fp8", MLA, True),        # ModelOpt gives it ModelOptKVCacheMethod
])
def test_e5m2_is_refused_exactly_for_fp8_kv_methods(make_checkpoint, release, quant, spec, refused):
    report = inspect(make_checkpoint(quant=quant, **spec), release, kv_cache_dtype="fp8_e5m2", platform="cuda:8.0")
    assert all((E5M2_REFUSED in a.errors) is refused for a in report.attention)
    if refused:
        assert not report.ok and report.tp_sizes_ok == ()


@pytest.mark.parametrize("release, refused", [("0.28", True), ("0.33", False)])
def test_online_fp8_refuses_e5m2_while_it_builds_fp8config(make_checkpoint, release, refused):
    report = inspect(make_checkpoint(quant=None), release, quantization="fp8", kv_cache_dtype="fp8_e5m2",
                     platform="cuda:8.0")
    assert {a.kv_method for a in report.attention} == {"Fp8KVCacheMethod" if refused else None}
    assert all((E5M2_REFUSED in a.errors) is refused for a in report.attention)


@pytest.mark.parametrize("quant", sorted(V_SCALE_OF_LAYER_1))
def test_a_layer_missing_the_v_scale_the_others_have_is_named(make_checkpoint, quant):
    report = inspect(make_checkpoint(quant=quant, kv_cache="tensor", kv_missing=((1, "v"),)), kv_cache_dtype="fp8")
    first, second = report.attention
    assert first.kv_method == second.kv_method == METHOD[quant]
    assert not any(V_SCALE_OF_LAYER_1[quant] in w for w in first.warnings)
    assert any(V_SCALE_OF_LAYER_1[quant] in w and second.name in w for w in second.warnings)
    assert dict(second.scale_params).keys() == {"k_scale"} and dict(first.scale_params).keys() == {"k_scale", "v_scale"}


@pytest.mark.parametrize("quant", ["fp8-static", "modelopt-fp8", "quark-fp8"])
def test_a_v_scale_without_its_k_scale_fails_base_kv_cache_methods_assertion(make_checkpoint, quant):
    report = inspect(make_checkpoint(quant=quant, kv_cache="tensor", kv_missing=((0, "k"),)), kv_cache_dtype="fp8")
    assert any("assert layer.k_scale > 0.0" in e for e in report.attention[0].errors)
    assert report.attention[1].ok and not report.ok


@pytest.mark.parametrize("quant, expect_warning", [("fp8-static", True), ("modelopt-fp8", True), ("ct-fp8", False)])
def test_no_scales_at_all_gives_vllms_fallback_warning(make_checkpoint, quant, expect_warning):
    report = inspect(make_checkpoint(quant=quant), kv_cache_dtype="fp8")
    assert all((FALLBACK_ONE in a.warnings) is expect_warning for a in report.attention)
    assert all(a.scale_strategy is None and a.scales == () for a in report.attention)


@pytest.mark.parametrize("quant, kv_cache, shape, message", [
    ("fp8-static", "attn_head", None, "KV-cache scale expects a scalar weight, got shape (2, 1, 1)"),
    ("modelopt-fp8", "tensor", (2,), "KV-cache scale expects a scalar weight, got shape (2,)"),
    ("ct-fp8", "attn_head", (3, 1, 1), "the attn_head kv_cache_scheme loads one k_scale per KV head (2"),
    ("ct-fp8", "tensor", (2,), "Attempted to load weight (torch.Size([2])) into parameter (torch.Size([1]))"),
])
def test_mis_shaped_scales_are_named(make_checkpoint, quant, kv_cache, shape, message):
    report = inspect(make_checkpoint(quant=quant, kv_cache=kv_cache, kv_scale_shape=shape))
    errors = report.attention[1].errors
    assert any(e.startswith("model.layers.1.self_attn.") and message in e for e in errors), errors


def test_per_head_ct_scales_load_and_ask_for_per_head_backends(make_checkpoint, monkeypatch):
    specs = []
    real = routing_attention.select_attention_backend
    monkeypatch.setattr(routing_attention, "select_attention_backend", lambda spec, *a: specs.append(spec) or real(spec, *a))
    report = inspect(make_checkpoint(quant="ct-fp8", kv_cache="attn_head"))
    assert {a.scale_strategy for a in report.attention} == {"attn_head"}
    assert not any(a.errors for a in report.attention if a.backend)  # the shapes are right
    assert specs and all(s.per_head_scales and s.kv_cache_dtype == "fp8" for s in specs)


def test_the_fused_kv_scale_loads_into_k_with_its_deprecation_warning(make_checkpoint):
    report = inspect(make_checkpoint(quant="fp8-static", kv_cache="tensor", kv_scale_fused=True), kv_cache_dtype="fp8")
    for layer in report.attention:
        assert KV_SCALE_DEPRECATED in layer.warnings and FALLBACK_ONE not in layer.warnings
        assert layer.scale_params == (("k_scale", layer.name.replace(".attn", ".kv_scale")),)
        assert layer.scale_strategy == "tensor"


def test_scales_a_format_without_kv_method_has_are_not_loaded(make_checkpoint):
    report = inspect(make_checkpoint(quant="inc-fp8-block", kv_cache="tensor"))
    layer = report.attention[0]
    assert layer.kv_method is None and layer.scales == ()
    assert ("Found k_scale in the checkpoint (e.g. model.layers.0.self_attn.k_scale), but not found the expected name "
            "in the model (e.g. model.layers.0.self_attn.attn.k_scale). k_scale is not loaded.") in layer.warnings


@pytest.mark.parametrize("scheme, message", [
    ({"num_bits": 4}, "Currently supported kv cache quantization is num_bits=8, type=float, however received "
                      "num_bits=4, type=float"),
    ({"strategy": "channel"}, "Invalid strategy for compressed-tensors KV cache. Expected strategies: "
                              "(<QuantizationStrategy.TENSOR: 'tensor'>, <QuantizationStrategy.ATTN_HEAD: "
                              "'attn_head'>), found strategy: channel"),
    ({"symmetric": False}, "Only support symmetric scaling factor for compressed-tensors KV cache. However found "
                           "symmetric: False"),
])
def test_ct_kv_cache_scheme_is_validated_as_vllm_does(make_checkpoint, scheme, message):
    folder = edit_quant_config(make_checkpoint(quant="ct-fp8", kv_cache="tensor"),
                               lambda q: q["kv_cache_scheme"].update(scheme))
    report = inspect(folder)
    assert all(message in a.errors for a in report.attention) and not report.ok


def test_quark_kv_cache_config_is_validated_as_vllm_does(make_checkpoint):
    def per_channel(q):
        for group in q["layer_quant_config"].values():
            group["output_tensors"]["qscheme"] = "per_channel"

    report = inspect(edit_quant_config(make_checkpoint(quant="quark-fp8", kv_cache="tensor"), per_channel))
    assert ("Only support per-tensor scaling factor for quark KV cache. Expected qscheme: per_tensor, found qscheme: "
            "per_channel") in report.attention[0].errors


def test_modelopt_unknown_kv_algo_falls_back_to_auto_with_vllms_warning(make_checkpoint):
    folder = edit_quant_config(make_checkpoint(quant="modelopt-fp8", kv_cache="tensor"),
                               lambda q: q.update(kv_cache_scheme={"num_bits": 8, "type": "int", "dynamic": False}))
    layer = inspect(folder).attention[0]
    assert layer.kv_cache_dtype == "bfloat16"
    assert any(w.startswith("WARNING: Unknown kv_cache_quant_algo '{'num_bits': 8") for w in layer.warnings)


def test_skip_layers_keep_their_layer_on_auto(make_checkpoint):
    report = inspect(make_checkpoint(quant="ct-fp8", kv_cache="tensor"), kv_cache_dtype_skip_layers=("1",))
    assert [(a.kv_cache_dtype, a.cache_dtype) for a in report.attention] == [("fp8", "float8_e4m3fn"),
                                                                            ("bfloat16", "bfloat16")]


@pytest.mark.parametrize("tp, heads, kv_heads", [(1, 4, 2), (2, 2, 1), (4, 1, 1)])
def test_attention_shape_per_rank(make_checkpoint, tp, heads, kv_heads):
    report = inspect(make_checkpoint(quant="ct-fp8"), tp=tp, kv_cache_dtype="fp8")
    assert {(a.head_size, a.num_heads, a.num_kv_heads, a.cache_bytes_per_token) for a in report.attention} == {
        (64, heads, kv_heads, 2 * kv_heads * 64)}


def test_mla_layers_are_mla_attention_with_the_latent_as_head(make_checkpoint, monkeypatch):
    specs = []
    real = routing_attention.select_attention_backend
    monkeypatch.setattr(routing_attention, "select_attention_backend", lambda spec, *a: specs.append(spec) or real(spec, *a))
    report = inspect(make_checkpoint(quant="fp8-block", data="sparse", kv_lora_rank=128, qk_rope_head_dim=32, **MLA))
    assert [a.name for a in report.attention] == [f"model.layers.{i}.self_attn.mla_attn.mla_attn" for i in (0, 1)]
    assert {(a.kind, a.head_size, a.num_kv_heads, a.kv_method) for a in report.attention} == {("MLA", 160, 1, None)}
    assert specs and all(s.use_mla and s.head_size == 160 and s.kv_cache_dtype == "auto" for s in specs)


def test_gpt_oss_sinks_reach_the_backend_selection(make_checkpoint, monkeypatch):
    specs = []
    real = routing_attention.select_attention_backend
    monkeypatch.setattr(routing_attention, "select_attention_backend", lambda spec, *a: specs.append(spec) or real(spec, *a))
    report = inspect(make_checkpoint(quant="fp8-block", architecture="GptOssForCausalLM", model_type="gpt_oss",
                                     attention_sinks=True, data="sparse"))
    # GptOssConfig's default sliding_window 128 on the even layers (gpt_oss.py): tests/test_kv_sliding.py
    assert [a.kind for a in report.attention] == ["sliding window 128, sinks", "full, sinks"]
    assert all(s.has_sink for s in specs)


def test_vision_towers_have_no_kv_cache(make_checkpoint):
    report = inspect(make_checkpoint(quant="ct-fp8", architecture="Mistral3ForConditionalGeneration",
                                     model_type="mistral3", vision="pixtral", text_prefix="language_model.model"))
    assert [a.name for a in report.attention] == [f"language_model.model.layers.{i}.self_attn.attn" for i in (0, 1)]


@pytest.mark.parametrize("name, quark, mla, target", [
    ("model.layers.3.self_attn.k_scale", False, False, "model.layers.3.self_attn.attn.k_scale"),
    ("model.layers.3.self_attn.k_proj.k_scale", False, False, "model.layers.3.self_attn.attn.k_scale"),
    ("model.layers.3.self_attn.k_proj.k_scale", False, True, "model.layers.3.self_attn.mla_attn.mla_attn.k_scale"),
    ("model.layers.3.self_attn.qkv_proj.v_scale", False, False, "model.layers.3.self_attn.attn.v_scale"),
    ("model.layers.3.self_attn.kv_scale", False, False, "model.layers.3.self_attn.attn.k_scale"),
    ("model.layers.3.self_attn.v_proj.output_scale", True, False, "model.layers.3.self_attn.attn.v_scale"),
    ("model.layers.3.self_attn.prob_output_scale", True, False, "model.layers.3.self_attn.attn.prob_scale"),
    ("model.layers.3.self_attn.v_proj.output_scale", False, False, None),
    ("model.layers.3.self_attn.k_cache.scale", False, False, "model.layers.3.self_attn.attn.k_scale"),
])
def test_scale_names_are_remapped_as_vllms_loader_does(name, quark, mla, target):
    scale = remap(name, quark, mla, frozenset())
    assert (scale.target if scale else None) == target


def test_per_token_head_caches_ignore_the_checkpoint_scales(make_checkpoint):
    layer = inspect(make_checkpoint(quant="fp8-static", kv_cache="tensor"),
                    kv_cache_dtype="fp8_per_token_head").attention[0]
    assert FALLBACK_ONE not in layer.warnings and any("computes its scales at cache write" in n for n in layer.notes)


@pytest.mark.parametrize("release", RELEASES)
def test_quark_excluded_attention_has_no_kv_method(make_checkpoint, release):
    folder = make_checkpoint(quant="quark-fp8", kv_cache="tensor", ignore=("lm_head", "re:.*layers\\.1\\.self_attn.*"))
    methods = [a.kv_method for a in inspect(folder, release, kv_cache_dtype="fp8_e5m2", platform="cuda:8.0").attention]
    assert methods == ["QuarkKVCacheMethod", None]


# get_quant_method for an Attention / an MLAAttention layer, read per config class in 0.33 / 0.34 (quantization/*.py):
# the table a format's Format.kv_cache hook must agree with; a new format must be added here.
KV_METHODS_READ = {
    "compressed-tensors": ("CompressedTensorsKVCacheMethod", None),  # isinstance(layer, Attention)
    "fp8": ("Fp8KVCacheMethod", None), "w4afp8": ("Fp8KVCacheMethod", None),  # Fp8Config: Attention
    # ModelOptQuantConfigBase: isinstance(layer, (Attention, MLAAttention))
    "modelopt": ("ModelOptKVCacheMethod", "ModelOptKVCacheMethod"),
    "modelopt_mxfp8": ("ModelOptKVCacheMethod", "ModelOptKVCacheMethod"),
    "quark": ("QuarkKVCacheMethod", None),  # QuarkConfig: Attention, unless `exclude` names it
    "fbgemm_fp8": (None, None), "inc": (None, None), "online": (None, None),  # none for attention
}


@pytest.mark.parametrize("quant_format", ALL_FORMATS, ids=lambda f: f.name)
def test_every_format_declares_the_kv_cache_method_vllm_gives_attention(quant_format):
    """Each format's Format.kv_cache hook (nothing else names a format) gives Attention and MLAAttention the method
    vLLM's get_quant_method does: a format that forgets its KV method fails here. The config stands in with the
    fields the hooks read (Quark's kv_cache_config and exclude, online's config class)."""
    config = SimpleNamespace(kv_cache_config=None, exclude=(), config_class=online.ONLINE_CONFIG)
    given = quant_format.kv_cache(config, {}) if quant_format.kv_cache else KVConfig()
    assert (given.method, given.mla_method) == KV_METHODS_READ[quant_format.name]
    assert set(KV_METHODS_READ) == {f.name for f in ALL_FORMATS}


def test_online_fp8_before_031_is_fp8config_with_its_kv_method():
    """`--quantization fp8` builds Fp8Config before 0.31 (online.for_release): its Attention gets Fp8KVCacheMethod."""
    config = SimpleNamespace(config_class=online.FP8_CONFIG)
    assert online.FORMAT.kv_cache(config, {}) == KVConfig("Fp8KVCacheMethod")
