"""The format registry (fp8check.core.formats): every stage asks a checkpoint's format through FORMATS, so a new
quant_method is one Format and one registration. A throwaway format registered in a temporary registry is routed
end to end by inspect (parse, capability gate, assignment, scheme, kernel keys, integrity, FusedMoE method);
the real formats answer the same questions uniformly (the strategy and block load reads)."""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import InputError
from fp8check.core.formats import compressed_tensors, fp8, frontdoor
from fp8check.core.formats.base import Assignment, ExpectedTensors, Format, KernelRequest, MoEMethod, WeightScale
from fp8check.core.formats.registry import FORMATS, assign, parse_quant_config
from fp8check.core.formats.shared import pattern_list
from fp8check.core.model.modules import build_layout
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import PROFILES, WHEEL_CHANGES, select_profile
from fp8check.kernels.base import FP8, RoutingContext
from fp8check.kernels.quant_keys import kFp8StaticTensorSym
from fp8check.synth import QUANTS, Spec, ignore_list, quantization_config

TOY = "toy-fp8"
TOY_LINEAR = "ToyFp8LinearMethod"
TOY_MOE = "ToyFp8MoEMethod"
SMALL_MOE = dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=4, moe_intermediate=128)


class ToyConfig(NamedTuple):
    ignore: tuple[str, ...]
    method: str = TOY


def _toy_assign(module, config: ToyConfig) -> Assignment:
    if module.unquantized:
        return Assignment(None, reason=module.unquantized)
    if module.layer_type == "ParallelLMHead" or module.name in config.ignore:
        return Assignment(None, reason="ignored by the toy format")
    return Assignment(TOY, strategy="tensor", static_input=True)


# Per-tensor FP8 weights with static per-tensor activations, on sm89 and later.
TOY_FORMAT = Format(
    name=TOY, min_capability=89,
    parse=lambda raw, where: ToyConfig(ignore=pattern_list(raw.get("ignore") or [], f"{where}.ignore")),
    assign=_toy_assign,
    describe=lambda assignment: ("tensor", "static tensor"),
    linear_scheme=lambda assignment, ctx, linear_backend: (TOY_LINEAR, None),
    fp8_schemes=frozenset({TOY_LINEAR}),
    kernel_request=lambda scheme, assignment, ctx, e8m0: KernelRequest(FP8, kFp8StaticTensorSym, kFp8StaticTensorSym),
    expected_tensors=lambda assignment: ExpectedTensors(WeightScale("weight_scale", "tensor"), static_input=True),
    moe_method=lambda name, leaves, config, rules: MoEMethod(
        TOY_MOE, kFp8StaticTensorSym, kFp8StaticTensorSym, None, "tensor", "static tensor",
        assignment=Assignment(TOY, strategy="tensor", static_input=True)),
)


def _inspect(folder: str, platform: str = "h100", release: str = "0.33", **options):
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), select_profile(release),
                                                                 **options))


def _toy_checkpoint(make_checkpoint, quant: str = "fp8-static", **spec) -> str:
    """Per-tensor FP8 tensors (weight_scale, input_scale with `fp8-static`) under a toy quantization_config that
    ignores lm_head and the MoE routers (stored BF16), as exporters list them."""
    return make_checkpoint(quant=quant, data="sparse", extra_config={
        "quantization_config": {"quant_method": TOY, "ignore": ignore_list(Spec(quant=quant, **spec))}}, **spec)


@pytest.fixture
def toy_registered(monkeypatch):
    monkeypatch.setitem(FORMATS, TOY, TOY_FORMAT)  # the one registration


def test_an_unregistered_quant_method_vllm_knows_is_out_of_scope(make_checkpoint):
    folder = make_checkpoint(quant="fp8-static", data="sparse", extra_config={
        "quantization_config": {"quant_method": "GPTQ", "bits": 4}})
    with pytest.raises(InputError) as caught:
        _inspect(folder)
    assert str(caught.value) == (f"{folder}: quantization method 'gptq' is out of fp8check's scope; it checks the "
                                 f"FP8 formats vLLM serves: {', '.join(sorted(FORMATS))}")


def test_a_quant_method_vllm_does_not_know_is_vllms_unknown_method_error(make_checkpoint):
    report = _inspect(_toy_checkpoint(make_checkpoint))
    assert not report.ok and report.quant_method is None
    assert report.errors[0].startswith("Unknown quantization method: toy-fp8. Must be one of ['awq', 'auto_awq', ")


def test_inspect_routes_a_registered_format_end_to_end(make_checkpoint, toy_registered):
    report = _inspect(_toy_checkpoint(make_checkpoint, **SMALL_MOE))
    assert report.ok, report.errors + tuple(e for layer in report.layers + report.moes for e in layer.errors)
    assert report.quant_method == TOY
    quantized = [layer for layer in report.layers if layer.scheme == TOY_LINEAR]
    assert quantized and all(layer.kernel and layer.strategy_text == "tensor" and layer.activation == "static tensor"
                             and layer.weight_key == kFp8StaticTensorSym.name for layer in quantized)
    assert {layer.scheme for layer in report.layers if layer not in quantized} == {
        "UnquantizedLinearMethod", "UnquantizedEmbeddingMethod"}  # the routers; lm_head, ignored
    assert report.moes and all(moe.scheme == TOY_MOE and moe.kernel for moe in report.moes)


def test_a_registered_format_gates_capability_and_names_its_tensors(make_checkpoint, toy_registered):
    old_gpu = _inspect(_toy_checkpoint(make_checkpoint), platform="a100")
    assert ("The quantization method toy-fp8 is not supported for the current GPU. Minimum capability: 89. "
            "Current capability: 80.") in old_gpu.errors
    no_input_scales = _inspect(_toy_checkpoint(make_checkpoint, quant="fp8-dynamic"))
    q_proj = next(layer for layer in no_input_scales.layers if layer.name == "model.layers.0.self_attn.qkv_proj")
    assert "model.layers.0.self_attn.q_proj.input_scale is missing: static FP8 activations need a per-tensor input " \
           "scale" in q_proj.errors


@pytest.mark.parametrize("name, quant_format", [("compressed-tensors", compressed_tensors.FORMAT), ("fp8", fp8.FORMAT)])
def test_the_registry_holds_the_real_formats_under_their_quant_method(name, quant_format):
    assert FORMATS[name] is quant_format and quant_format.name == name


@pytest.mark.parametrize("quant", sorted(QUANTS))
def test_real_formats_assign_strategy_and_block_uniformly(make_checkpoint, quant):
    """Whatever the format, an assignment says the weight strategy and block (load's numerics read only these)
    and the layer lands on one of that format's FP8 schemes."""
    method, strategy = QUANTS[quant].method, QUANTS[quant].strategy
    folder = make_checkpoint(quant=quant, data="sparse")
    ckpt = open_local(folder)
    config = ckpt.config.quantization_config
    assert config == parse_quant_config(quantization_config(Spec(quant=quant))) and config.method == method
    layout = build_layout(ckpt.tensors, ckpt.config)
    assignments = [assign(module, config) for module in layout.linears if module.layer_type != "ParallelLMHead"]
    assert assignments and {a.method for a in assignments} == {method}
    assert {(a.strategy, a.block) for a in assignments} == {(strategy, (128, 128) if strategy == "block" else None)}
    report = _inspect(folder, release=_first_release_with(method))
    assert {layer.scheme for layer in report.layers if layer.layer_type != "ParallelLMHead"} <= \
        FORMATS[method].fp8_schemes


def _first_release_with(method: str) -> str:
    """0.33, or the oldest profile whose vLLM has the method (w4afp8: 0.34)."""
    if FORMATS[method].known_at(select_profile("0.33")):
        return "0.33"
    return next(p.name for p in reversed(PROFILES) if FORMATS[method].known_at(p))


@pytest.mark.parametrize("quant", ["fp8-block", "fbgemm-fp8", "modelopt-fp8"])
def test_is_layer_skipped_lets_a_listed_fused_name_win(make_checkpoint, quant):
    """is_layer_skipped (0.25-0.33) honours a fused name (self_attn.qkv_proj) listed as such before judging the
    checkpoint's q / k / v shards, which are then all skipped; one shard listed alone is vLLM's mixed-shards error."""
    fused = "model.layers.0.self_attn.qkv_proj"
    report = _inspect(make_checkpoint(quant=quant, data="sparse", ignore=("lm_head", fused)))
    qkv = next(layer for layer in report.layers if layer.name == fused)
    assert qkv.scheme == "UnquantizedLinearMethod" and not any("shards" in e for e in qkv.errors)
    partial = _inspect(make_checkpoint(quant=quant, data="sparse",
                                       ignore=("lm_head", "model.layers.0.self_attn.q_proj")))
    qkv = next(layer for layer in partial.layers if layer.name == fused)
    assert qkv.errors[0] == (f"Detected some but not all shards of {fused} are quantized. All shards of fused "
                             "layers to have the same precision.")


# --- a method a release adds (Format.added_by) ------------------------------------------------------------------


def test_a_format_a_release_adds_is_vllms_unknown_method_before_it(make_checkpoint, monkeypatch):
    """Before the change that adds it, vLLM has no such config class: the unknown-method error, and no layer built
    with it (the layers as stored); from that release on it routes."""
    monkeypatch.setitem(FORMATS, TOY, dataclasses.replace(TOY_FORMAT, added_by="w4afp8"))
    folder = _toy_checkpoint(make_checkpoint)
    before = _inspect(folder, release="0.33")
    assert before.errors[0].startswith("Unknown quantization method: toy-fp8. Must be one of ['awq', 'auto_awq', ")
    assert before.quant_method is None and not any(layer.scheme == TOY_LINEAR for layer in before.layers)
    after = _inspect(folder, release="0.34")
    assert after.ok and after.quant_method == TOY and any(layer.scheme == TOY_LINEAR for layer in after.layers)


# --- 0.34: native fp8 on XPU quantizes dynamic activations per token ---------------------------------------------


@pytest.mark.parametrize(("backend", "kernel_033", "kernel_034"), [
    ("auto", "XPUW8A16FP8LinearKernel", "XPUW8A16FP8LinearKernel"),
    ("xpu", "XPUW8A8FP8LinearKernel", "XPUW8A8FP8LinearKernel"),
    ("torch", "PerTensorTorchFP8ScaledMMLinearKernel", "ChannelWiseTorchFP8ScaledMMLinearKernel"),
])
def test_native_fp8_dynamic_activations_are_per_token_on_xpu_from_0_34(make_checkpoint, backend, kernel_033,
                                                                        kernel_034):
    """Fp8LinearMethod.__init__: `elif cutlass_fp8_supported() or current_platform.is_xpu()` (0.34)."""
    from fp8check.core.records import LinearBackendOption

    assert "xpu-fp8-per-token" in WHEEL_CHANGES and fp8.XPU_PER_TOKEN == "xpu-fp8-per-token"
    folder = make_checkpoint(quant="fp8-dynamic", data="sparse")
    for release, kernel, key in (("0.33", kernel_033, "kFp8DynamicTensorSym"),
                                 ("0.34", kernel_034, "kFp8DynamicTokenSym")):
        report = _inspect(folder, "xpu", release, backend=LinearBackendOption(backend))
        quantized = [layer for layer in report.layers if layer.scheme == "Fp8LinearMethod"]
        assert quantized and {(layer.kernel, layer.weight_key, layer.activation_key, layer.errors)
                              for layer in quantized} == {(kernel, "kFp8StaticTensorSym", key, ())}, release


@pytest.mark.parametrize("quant", ["fp8-static", "fp8-block"])
@pytest.mark.parametrize("platform", ["xpu", "cpu", "cuda:80", "rocm:gfx942"])
def test_static_and_block_activation_keys_do_not_change_in_0_34(make_checkpoint, quant, platform):
    folder = make_checkpoint(quant=quant, data="sparse")
    keys = [{(layer.scheme, layer.kernel, layer.weight_key, layer.activation_key) for layer in
             _inspect(folder, platform, release).layers} for release in ("0.33", "0.34")]
    assert keys[0] == keys[1]


@pytest.mark.parametrize("platform", ["cpu", "cuda:80", "rocm:gfx942"])
def test_dynamic_per_tensor_stays_per_tensor_off_cutlass_and_xpu(make_checkpoint, platform):
    folder = make_checkpoint(quant="fp8-dynamic", data="sparse")
    report = _inspect(folder, platform, "0.34")
    assert {layer.activation_key for layer in report.layers if layer.scheme == "Fp8LinearMethod"} == {
        "kFp8DynamicTensorSym"}


# --- 0.34's front door: QuantizationMethods, DEPRECATED, the ROCm list -------------------------------------------


def _ctx(platform: str, release: str) -> RoutingContext:
    return RoutingContext(parse_platform(platform), select_profile(release))


def test_0_34_quantization_methods_and_deprecated():
    old, new = (frontdoor.quantization_methods(_ctx("cpu", r)) for r in ("0.33", "0.34"))
    assert "fp_quant" in old and "fp_quant" not in new
    assert new[-2:] == ("lut_b_moe", "mxfp4_hadamard32") and len(new) == len(old) + 2
    assert [m for m in new if m not in ("w4afp8", "lut_b_moe", "mxfp4_hadamard32")] == \
        [m for m in old if m != "fp_quant"]  # nothing else moved
    assert frontdoor.deprecated(_ctx("cpu", "0.33")) == ("fbgemm_fp8", "fp_quant")
    assert frontdoor.deprecated(_ctx("cpu", "0.34")) == ("fbgemm_fp8",)


def test_0_34_rocm_allow_list_gains_mxfp4_hadamard32_only():
    old, new = (set(frontdoor.allow_list(_ctx("rocm:gfx942", r))) for r in ("0.33", "0.34"))
    assert new - old == {"mxfp4_hadamard32"} and old <= new
    assert frontdoor.allow_list(_ctx("xpu", "0.34")) == frontdoor.allow_list(_ctx("xpu", "0.33"))


def test_fp_quant_is_deprecated_until_0_33_and_unknown_in_0_34(make_checkpoint):
    folder = make_checkpoint(quant="fp8-static", data="sparse", extra_config={
        "quantization_config": {"quant_method": "fp_quant", "forward_dtype": "mxfp4"}})
    deprecated = _inspect(folder, release="0.33")
    assert deprecated.errors[0] == str(("The quantization method %s is deprecated and will be removed in future "
                                        "versions of vLLM. To bypass, set `--allow-deprecated-quantization`.",
                                        "fp_quant"))
    with pytest.raises(InputError, match="quantization method 'fp_quant' is out of fp8check's scope"):
        _inspect(folder, release="0.33", allow_deprecated_quantization=True)
    unknown = _inspect(folder, release="0.34", allow_deprecated_quantization=True)
    methods = frontdoor.quantization_methods(_ctx("h100", "0.34"))
    assert unknown.errors[0] == f"Unknown quantization method: fp_quant. Must be one of {list(methods)}."
