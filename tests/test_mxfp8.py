"""MXFP8: the init_mxfp8_linear_kernel table per platform and release, the formats' routes (modelopt_mxfp8, the
MiniMax `mxfp8` tag, compressed-tensors' CompressedTensorsW8A8Mxfp8) and the MX numerics."""

from __future__ import annotations

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.formats import mxfp8 as fmt
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.kernels import registry
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.mxfp8 import MXFP8
from fp8check.kernels.quant_keys import KernelConfig, kMxfp8Dynamic, kMxfp8Static
from fp8check.synth import write_checkpoint

CFG = KernelConfig(kMxfp8Static, kMxfp8Dynamic, "bfloat16", "float8_e4m3fn", 4096, 4096)
CHECKPOINT_KERNELS = {  # the synth ct-mxfp8 checkpoint's layers: (platform, release) -> kernel
    **{("xpu", r): "XPUMxFp8LinearKernel" for r in ("0.25", "0.28", "0.33")},
    **{("cuda:80", r): "MarlinMxfp8LinearKernel" for r in ("0.25", "0.28", "0.33")},
    ("cuda:90", "0.25"): "MarlinMxfp8LinearKernel", ("cuda:90", "0.28"): "MarlinMxfp8LinearKernel",
    ("cuda:90", "0.33"): "HummingMxfp8LinearKernel",
    **{("cuda:100", r): "FlashInferCutedslMxfp8LinearKernel" for r in ("0.25", "0.28", "0.33")},
    **{("rocm:gfx942", r): "EmulationMxfp8LinearKernel" for r in ("0.25", "0.28", "0.33")},
    **{("rocm:gfx950", r): "RocmDotScaledMxfp8LinearKernel" for r in ("0.25", "0.28", "0.33")},
}
EXPECTED = {  # (platform, release) -> kernel
    ("cuda:80", "0.25"): "MarlinMxfp8LinearKernel",
    ("cuda:90", "0.33"): "HummingMxfp8LinearKernel",  # prioritize_humming (0.32+)
    ("cuda:90", "0.28"): "MarlinMxfp8LinearKernel", ("cuda:100", "0.25"): "FlashInferCutedslMxfp8LinearKernel",
    ("rocm:gfx942", "0.33"): "EmulationMxfp8LinearKernel", ("rocm:gfx950", "0.28"): "RocmDotScaledMxfp8LinearKernel",
    ("xpu", "0.25"): "XPUMxFp8LinearKernel",
}


def ctx(platform: str, release: str, disabled=()) -> RoutingContext:
    return RoutingContext(parse_platform(platform), select_profile(release), frozenset(disabled))


@pytest.mark.parametrize(("platform", "release"), list(EXPECTED))
def test_table_winner(platform, release):
    assert registry.choose_kernel(MXFP8, CFG, ctx(platform, release)).kernel == EXPECTED[platform, release]


@pytest.mark.parametrize("release", ["0.25", "0.28", "0.33"])
def test_cpu_has_no_mxfp8_kernel(release):
    choice = registry.choose_kernel(MXFP8, CFG, ctx("cpu", release))
    assert choice.error == "Failed to find a kernel that can implement the MXFP8 linear layer. Reasons: \n"


def test_reason_formats_and_release_rows():
    choice = registry.choose_kernel(MXFP8, CFG, ctx("xpu", "0.33", ("XPUMxFp8LinearKernel",)))
    assert choice.kernel == "TorchMxFp8LinearKernel"
    assert choice.rejected[0].reason == " XPUMxFp8LinearKernel disabled by environment variable"
    assert registry.choose_kernel(MXFP8, CFG, ctx("xpu", "0.28", ("XPUMxFp8LinearKernel",))).kernel == \
        "EmulationMxfp8LinearKernel"
    rejected = registry.choose_kernel(MXFP8, CFG, ctx("cuda:80", "0.33")).rejected
    assert rejected[0].reason == "FlashInferCutedslMxfp8LinearKernel: requires sm_100/sm_103 (Blackwell)"
    small = CFG._replace(n=64)
    assert registry.choose_kernel(MXFP8, small, ctx("cuda:100", "0.33")).rejected[0].reason == \
        "FlashInferCutedslMxfp8LinearKernel: mm_mxfp8 requires N >= 128, got N=64."
    assert registry.choose_kernel(MXFP8, small, ctx("cuda:100", "0.25")).kernel == "FlashInferCutedslMxfp8LinearKernel"
    assert registry.choose_kernel(MXFP8, CFG, ctx("cuda:90", "0.33"), "torch").kernel == "TorchMxFp8LinearKernel"
    assert registry.choose_kernel(MXFP8, CFG, ctx("cuda:90", "0.25"), "xpu").error == \
        "--linear-backend=xpu was requested but no 'xpu' kernel exists for MXFP8 layers."


def test_minimax_rewrite_and_legacy_fields():
    config = fmt.parse({"quant_method": "mxfp8", "ignored_layers": ["lm_head"]}, "q")
    assert config.exclude_modules == ("lm_head",)
    legacy = {"quant_method": "modelopt", "quantization": {"quant_algo": "MXFP8", "kv_cache_quant_algo": None}}
    missing = r"requires the following fields in hf_quant_config.json: \['exclude_modules'\]"
    with pytest.raises(Exception, match=missing):
        fmt.parse(legacy, "q")
    assert fmt.override({"quant_method": "modelopt", "quant_algo": "mxfp8"}, None) == "modelopt_mxfp8"
    assert fmt.override({"quant_method": "mxfp8"}, None) is None


@pytest.mark.parametrize("platform", ["xpu", "cpu", "cuda:80", "cuda:90", "cuda:100", "rocm:gfx942", "rocm:gfx950"])
@pytest.mark.parametrize("release", ["0.25", "0.28", "0.33"])
def test_ct_mxfp8_checkpoint(platform, release, tmp_path):
    """The kernel of every MXFP8 layer of the synth checkpoint (0.28 / 0.33: as the differential suite measured
    vLLM choosing them; CPU's MXFP8 row is empty)."""
    folder = write_checkpoint(str(tmp_path / "ckpt"), quant="ct-mxfp8", data="sparse")
    report = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), select_profile(release)))
    quantized = [layer for layer in report.layers if layer.scheme == "CompressedTensorsW8A8Mxfp8"]
    assert quantized
    if platform == "cpu":
        assert all(layer.errors == ("Failed to find a kernel that can implement the MXFP8 linear layer. Reasons: \n",)
                   for layer in quantized)
    else:
        assert {layer.kernel for layer in quantized} == {CHECKPOINT_KERNELS[platform, release]}


def test_mx_numerics_against_a_straightforward_reference():
    torch = pytest.importorskip("torch")
    from fp8check.kernels.numerics import mxfp8 as mx

    x = torch.tensor([[0.5] * 31 + [900.0] + [1e-3] * 32])
    values, scales = mx.mx_quantize(x)
    assert scales.tolist() == [[129, 109]]  # ceil(log2(900/448)) = ceil(1.006) = 2; ceil(log2(1e-3/448)) = -18
    assert mx.decode_e8m0(torch.tensor([127, 128], dtype=torch.uint8)).tolist() == [1.0, 2.0]
    back = mx.mx_dequantize(values, scales)
    assert torch.allclose(back, x, rtol=0.07)
    w_values, w_scales = mx.mx_quantize(torch.eye(64))
    assert torch.allclose(mx.mx_linear(x, w_values, w_scales, mx.MX_WEIGHT_ONLY), x)
    assert torch.allclose(mx.mx_linear(x, w_values, w_scales, mx.MX_W8A8), back)


@pytest.mark.parametrize("release, refused", [("0.26", False), ("0.27", True), ("0.33", True)])
def test_modelopt_mxfp8_refused_on_xpu_from_027_while_minimax_mxfp8_is_accepted(tmp_path, release, refused):
    """Both resolve to ModelOptMxFp8Config, but XPU's allow-list checks the settled name: modelopt_mxfp8 is not in
    it, mxfp8 is."""
    modelopt_ckpt = write_checkpoint(str(tmp_path / "modelopt"), quant="modelopt-mxfp8", data="sparse")
    minimax = write_checkpoint(str(tmp_path / "minimax"), quant="modelopt-mxfp8", data="sparse", extra_config={
        "quantization_config": {"quant_method": "mxfp8", "ignored_layers": ["lm_head"]}})
    options = InspectOptions(parse_platform("xpu"), select_profile(release))
    first = inspect_checkpoint(open_local(modelopt_ckpt), options)
    assert first.errors == (("modelopt_mxfp8 quantization is currently not supported in xpu.",) if refused else ())
    second = inspect_checkpoint(open_local(minimax), options)
    assert second.errors == () and second.quant_method == "modelopt_mxfp8"
    assert all(layer.kernel == "XPUMxFp8LinearKernel" for layer in second.layers if layer.weight_key)


# --- compressed-tensors MXFP8 with `"scale_dtype": "uint8"` ------------------------------------------------------
# compressed-tensors' TorchDtype (utils/type.py; 0.17.0, which every vLLM release 0.25-0.34 pins, parses it as 0.20
# does) strips a "torch." prefix and looks the rest up on torch, so "uint8" is torch.uint8 and vLLM's _is_mxfp8
# (`quant_args.scale_dtype == torch.uint8`, every release) accepts it: the same scheme and kernel as "torch.uint8".


@pytest.mark.parametrize("platform", ["xpu", "cpu", "cuda:80", "cuda:90", "cuda:100", "rocm:gfx942", "rocm:gfx950"])
@pytest.mark.parametrize("release", ["0.25", "0.28", "0.33", "0.34"])
def test_ct_mxfp8_scale_dtype_uint8_routes_as_torch_uint8(platform, release, tmp_path):
    options = InspectOptions(parse_platform(platform), select_profile(release))
    reports = [inspect_checkpoint(open_local(write_checkpoint(str(tmp_path / quant), quant=quant, data="sparse")),
                                  options) for quant in ("ct-mxfp8", "ct-mxfp8-uint8")]
    rows = [[(layer.name, layer.scheme, layer.kernel, layer.weight_key, layer.activation_key, layer.errors,
              layer.warnings) for layer in report.layers] for report in reports]
    assert rows[0] == rows[1]
    assert reports[0].errors == reports[1].errors and reports[0].ok == reports[1].ok
    assert {layer.scheme for layer in reports[1].layers if layer.layer_type != "ParallelLMHead"} == {
        "CompressedTensorsW8A8Mxfp8"}


def test_the_synth_config_really_spells_it_uint8():
    from fp8check.synth import Spec, quantization_config

    groups = quantization_config(Spec(quant="ct-mxfp8-uint8"))["config_groups"]["group_0"]
    assert groups["weights"]["scale_dtype"] == groups["input_activations"]["scale_dtype"] == "uint8"


@pytest.mark.parametrize("spelling", ["uint8", "torch.uint8", "float8_e8m0fnu", "torch.float8_e8m0fnu", "half",
                                      "float", "torch.bfloat16", "UINT8", "torch.UINT8", " torch.uint8", "e8m0",
                                      "torch.", 8])
def test_scale_dtype_parses_as_compressed_tensors_does(spelling):
    """The dtype fp8check reads is the one compressed-tensors validates to (shown as str(dtype)), and what it
    refuses fp8check refuses (one line)."""
    ct = pytest.importorskip("compressed_tensors.quantization")
    from fp8check.core.errors import ConfigError
    from fp8check.core.formats.registry import parse_quant_config

    args = {"num_bits": 8, "type": "float", "symmetric": True, "strategy": "group", "group_size": 32,
            "scale_dtype": spelling}
    try:
        theirs = str(ct.QuantizationArgs.model_validate(args).scale_dtype)
    except Exception:  # noqa: BLE001 - pydantic's ValidationError
        theirs = None
    raw = {"quant_method": "compressed-tensors", "format": "mxfp8-quantized",
           "config_groups": {"group_0": {"targets": ["Linear"], "weights": args}}}
    try:
        ours = parse_quant_config(raw).groups[0].weights.scale_dtype
    except ConfigError as exc:
        assert "\n" not in str(exc)
        ours = None
    assert ours == theirs


def test_an_mx_checkpoint_with_e8m0_scale_dtype_is_not_mxfp8_in_vllm(tmp_path):
    """Only uint8 makes _is_mxfp8 true: torch.float8_e8m0fnu (the scales' real type) leaves the layer without a
    scheme, and vLLM's error prints the dtype as compressed-tensors parsed it."""
    from fp8check.synth import Spec, quantization_config

    config = quantization_config(Spec(quant="ct-mxfp8"))
    for args in ("weights", "input_activations"):
        config["config_groups"]["group_0"][args]["scale_dtype"] = "float8_e8m0fnu"
    folder = write_checkpoint(str(tmp_path / "e8m0"), quant="ct-mxfp8", data="sparse",
                              extra_config={"quantization_config": config})
    report = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("cuda:100"), select_profile("0.34")))
    q = next(layer for layer in report.layers if layer.name == "model.layers.0.self_attn.qkv_proj")
    assert q.errors[0].startswith("No compressed-tensors compatible scheme was found for layer_name="
                                  "model.layers.0.self_attn.qkv_proj")
    assert "scale_dtype=torch.float8_e8m0fnu" in q.errors[0]
