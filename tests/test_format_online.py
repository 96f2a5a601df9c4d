"""Online FP8 (fp8check.core.formats.online): `--quantization fp8 | fp8_per_tensor | fp8_per_block |
fp8_per_channel | mxfp8` on a bf16 checkpoint, routed end to end by inspect across platforms and releases, plus the
format's own answers (keys, MoE methods, refusals) on small records."""

from __future__ import annotations

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import ConfigError
from fp8check.core.formats import online
from fp8check.core.formats.base import KernelRequest
from fp8check.core.formats.registry import FORMATS, parse_quant_config
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.kernels.base import FP8, FP8_BLOCK, RoutingContext
from fp8check.kernels.quant_keys import (
    kFp8Dynamic128Sym, kFp8DynamicTensorSym, kFp8DynamicTokenSym, kFp8Static128BlockSym, kFp8StaticChannelSym,
    kFp8StaticTensorSym,
)
from fp8check.synth import Spec, write_checkpoint

METHODS = ("fp8", "fp8_per_tensor", "fp8_per_block", "fp8_per_channel")
PLATFORMS = ("xpu", "cpu", "cuda:80", "cuda:89", "cuda:90", "cuda:100", "rocm:gfx942")
RELEASES = ("0.28", "0.30", "0.31", "0.33", "0.34")
SCHEME = {"fp8": "Fp8PerTensorOnlineLinearMethod", "fp8_per_tensor": "Fp8PerTensorOnlineLinearMethod",
          "fp8_per_block": "Fp8PerBlockOnlineLinearMethod", "fp8_per_channel": "Fp8PtpcOnlineLinearMethod"}
MOE_SCHEME = {"fp8": "Fp8PerTensorOnlineMoEMethod", "fp8_per_tensor": "Fp8PerTensorOnlineMoEMethod",
              "fp8_per_block": "Fp8PerBlockOnlineMoEMethod", "fp8_per_channel": "Fp8PtpcOnlineMoEMethod"}
XPU_PER_CHANNEL = "fp8_per_channel quantization is currently not supported in xpu."
SMALL_MOE = dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=4, moe_intermediate=128)


@pytest.fixture(scope="module")
def bf16(tmp_path_factory):
    return open_local(write_checkpoint(str(tmp_path_factory.mktemp("bf16")), Spec(quant=None)))


@pytest.fixture(scope="module")
def bf16_moe(tmp_path_factory):
    return open_local(write_checkpoint(str(tmp_path_factory.mktemp("bf16moe")), Spec(quant=None, **SMALL_MOE)))


def _inspect(ckpt, platform: str, release: str, quantization: str, tp: int = 1):
    return inspect_checkpoint(ckpt, InspectOptions(parse_platform(platform), select_profile(release), tp=tp,
                                                   quantization=quantization))


def _ctx(platform: str, release: str = "0.33") -> RoutingContext:
    return RoutingContext(parse_platform(platform), select_profile(release))


def _expected_errors(method: str, platform: str, release: str) -> set[str]:
    """The allow-list: the only model-wide refusal is XPU's list lacking fp8_per_channel before 0.32."""
    if method == "fp8_per_channel" and platform == "xpu" and release in ("0.28", "0.30", "0.31"):
        return {XPU_PER_CHANNEL}
    return set()


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("method", METHODS)
def test_online_linear_routing(bf16, method, platform, release):
    report = _inspect(bf16, platform, release, method)
    # The config class's get_name(): Fp8Config ("fp8") for `fp8` until 0.31, OnlineQuantizationConfig otherwise.
    assert report.quant_method == ("fp8" if method == "fp8" and release in ("0.28", "0.30") else "online")
    assert set(report.errors) == _expected_errors(method, platform, release)
    for layer in report.layers:
        if layer.layer_type == "ParallelLMHead":
            assert layer.scheme == "UnquantizedEmbeddingMethod"
            continue
        assert layer.scheme == SCHEME[method], layer.name
        if method == "fp8_per_channel" and layer.kernel == online.MARLIN:  # PTPC refuses the weight-only Marlin
            assert layer.errors == (online.kernel_error(SCHEME[method], layer.kernel, _ctx(platform, release)),)
        else:
            assert layer.errors == () and layer.kernel is not None, (layer.name, layer.errors)
        assert layer.weight_dtype == "BF16"
    warned = method == "fp8" and release in ("0.31", "0.33", "0.34")
    assert (online.FP8_DEPRECATED in report.warnings) is warned


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_per_tensor_activation_is_per_token_only_where_cutlass_fp8_runs(bf16, platform, release):
    """... and, from 0.34 (`or current_platform.is_xpu()`), on XPU."""
    layer = next(l for l in _inspect(bf16, platform, release, "fp8_per_tensor").layers if "qkv" in l.name)
    cutlass = platform in ("cuda:89", "cuda:90", "cuda:100")
    per_token = cutlass or (platform == "xpu" and select_profile(release).has("xpu-fp8-per-token"))
    assert layer.activation_key == ("kFp8DynamicTokenSym" if per_token else "kFp8DynamicTensorSym")
    assert layer.weight_key == "kFp8StaticTensorSym"


@pytest.mark.parametrize("method", ("fp8_per_tensor", "fp8"))
@pytest.mark.parametrize(("backend", "kernel_033", "kernel_034"), [
    ("auto", "XPUW8A16FP8LinearKernel", "XPUW8A16FP8LinearKernel"),  # first in XPU's FP8 row, any activation key
    ("xpu", "XPUW8A8FP8LinearKernel", "XPUW8A8FP8LinearKernel"),     # takes per-tensor and per-token activations
    ("torch", "PerTensorTorchFP8ScaledMMLinearKernel", "ChannelWiseTorchFP8ScaledMMLinearKernel"),
])
def test_xpu_per_token_activations_from_0_34_and_the_kernel_they_get(bf16, method, backend, kernel_033, kernel_034):
    """Fp8PerTensorOnlineLinearMethod.activation_quant_key on XPU: per tensor in 0.33, per token in 0.34. Under
    --linear-backend torch the per-tensor torch kernel then refuses ("requires per tensor activation and weight
    scales.") and the channel-wise one takes the layer."""
    from fp8check import api

    for release, kernel, key in (("0.33", kernel_033, "kFp8DynamicTensorSym"),
                                 ("0.34", kernel_034, "kFp8DynamicTokenSym")):
        report = api.inspect(bf16.source, platform="xpu", vllm=release, quantization=method, linear_backend=backend)
        qkv = next(layer for layer in report.layers if "qkv" in layer.name)
        assert (qkv.kernel, qkv.activation_key, qkv.errors) == (kernel, key, ()), release
    if kernel_033 != kernel_034:
        assert any(r.kernel == kernel_033 and "requires per tensor activation and weight scales" in r.reason
                   for r in qkv.rejected)


@pytest.mark.parametrize(("platform", "kernel"), [
    ("cuda:90", "CutlassFP8ScaledMMLinearKernel"), ("rocm:gfx942", "RowWiseTorchFP8ScaledMMLinearKernel"),
    ("xpu", "XPUW8A16FP8LinearKernel"),  # weight-only: PTPC's Marlin guard does not cover XPU
])
def test_per_channel_kernels(bf16, platform, kernel):
    layer = next(l for l in _inspect(bf16, platform, "0.33", "fp8_per_channel").layers if "qkv" in l.name)
    assert (layer.kernel, layer.weight_key, layer.activation_key) == (kernel, "kFp8StaticChannelSym",
                                                                      "kFp8DynamicTokenSym")


def test_per_channel_marlin_refusal_message():
    ctx = _ctx("cuda:80")
    assert online.kernel_error("Fp8PtpcOnlineLinearMethod", online.MARLIN, ctx) == (
        "FP8 PTPC online quant requires a kernel that honors per-token activation quantization; MarlinFP8 is "
        "W8A16 weight-only. Requires SM89+ for Cutlass FP8 or ROCm MI3xx for rowwise scaled_mm.")
    assert online.kernel_error("Fp8PerTensorOnlineLinearMethod", online.MARLIN, ctx) is None
    assert online.kernel_error("Fp8PtpcOnlineLinearMethod", "CutlassFP8ScaledMMLinearKernel", ctx) is None
    assert FORMATS["online"].kernel_error is online.kernel_error


def test_per_channel_on_sm80_refuses_marlin_end_to_end(bf16):
    layer = next(l for l in _inspect(bf16, "cuda:80", "0.33", "fp8_per_channel").layers if "qkv" in l.name)
    assert layer.kernel == online.MARLIN
    assert layer.errors == (online.PTPC_MARLIN,)


def test_per_channel_refusal_names_the_kernel_class_from_0_34():
    """0.34: `{type(self.fp8_linear).__name__} is W8A16 weight-only`, for Marlin and Humming alike."""
    ctx = _ctx("cuda:80", "0.34")
    for kernel in (online.MARLIN, online.HUMMING):
        assert online.kernel_error("Fp8PtpcOnlineLinearMethod", kernel, ctx) == (
            f"FP8 PTPC online quant requires a kernel that honors per-token activation quantization; {kernel} is "
            "W8A16 weight-only. Requires SM89+ for Cutlass FP8 or ROCm MI3xx for rowwise scaled_mm.")
        assert online.kernel_error("Fp8PerTensorOnlineLinearMethod", kernel, ctx) is None
    assert online.kernel_error("Fp8PtpcOnlineLinearMethod", "CutlassFP8ScaledMMLinearKernel", ctx) is None
    assert online.kernel_error("Fp8PtpcOnlineLinearMethod", "XPUW8A16FP8LinearKernel", _ctx("xpu", "0.34")) is None
    assert online.kernel_error("Fp8PtpcOnlineLinearMethod", online.HUMMING, _ctx("cuda:80", "0.33")) is None


@pytest.mark.parametrize("release", ("0.33", "0.34"))
def test_per_channel_on_sm80_end_to_end_per_release(bf16, release):
    layer = next(l for l in _inspect(bf16, "cuda:80", release, "fp8_per_channel").layers if "qkv" in l.name)
    assert layer.kernel == online.MARLIN
    assert layer.errors == (online.kernel_error("Fp8PtpcOnlineLinearMethod", online.MARLIN, _ctx("cuda:80", release)),)
    assert ("MarlinFP8ScaledMMLinearKernel is W8A16" in layer.errors[0]) is (release == "0.34")


def test_per_channel_on_humming_loads_weight_only_in_0_33_and_is_refused_in_0_34(bf16):
    """With Humming installed and asked for (--linear-backend humming), 0.33 builds a silently weight-only PTPC
    model; 0.34 raises, naming HummingFP8ScaledMMLinearKernel."""
    from fp8check import api

    def qkv(release):
        report = api.inspect(bf16.source, platform="cuda:80", vllm=release, quantization="fp8_per_channel",
                             linear_backend="humming", assume=("humming=yes",))
        return next(layer for layer in report.layers if "qkv" in layer.name)

    old, new = qkv("0.33"), qkv("0.34")
    assert old.kernel == new.kernel == online.HUMMING
    assert old.errors == ()
    assert new.errors == (online.PTPC_W8A16.format(kernel=online.HUMMING),)


def test_per_block_skips_the_tp_block_shape_validation(bf16):
    """TP 4 shards o_proj's input to 64 < block_k 128: native block fp8 raises validate_fp8_block_shape's error;
    online per-block pads instead, and only the block kernels' own checks decide."""
    report = _inspect(bf16, "cuda:90", "0.33", "fp8_per_block", tp=4)
    o_proj = next(l for l in report.layers if l.name.endswith("o_proj"))
    assert not any("block_k" in e or "block_n" in e for e in o_proj.errors)
    assert o_proj.kernel is not None and o_proj.kernel != "FlashInferFp8DeepGEMMDynamicBlockScaledKernel"


@pytest.mark.parametrize(("method", "keys"), [
    ("fp8", (FP8, kFp8StaticTensorSym, kFp8DynamicTokenSym)),
    ("fp8_per_tensor", (FP8, kFp8StaticTensorSym, kFp8DynamicTokenSym)),
    ("fp8_per_block", (FP8_BLOCK, kFp8Static128BlockSym, kFp8Dynamic128Sym)),
    ("fp8_per_channel", (FP8, kFp8StaticChannelSym, kFp8DynamicTokenSym)),
])
def test_kernel_request_keys(method, keys):
    config = online.parse({"quant_method": method}, "--quantization")
    assignment = online._quantized(config)
    assert assignment.online and not assignment.static_input
    assert assignment.block == ((128, 128) if method == "fp8_per_block" else None)
    assert online.kernel_request(SCHEME[method], assignment, _ctx("cuda:90"), False) == KernelRequest(*keys)


@pytest.mark.parametrize(("release", "config_class", "name"), [
    ("0.25", "Fp8Config", "fp8"), ("0.30", "Fp8Config", "fp8"),
    ("0.31", "OnlineQuantizationConfig", "online"), ("0.33", "OnlineQuantizationConfig", "online"),
])
def test_fp8_config_class_per_release(release, config_class, name):
    config = online.for_release(online.parse({"quant_method": "fp8"}, "--quantization"), select_profile(release))
    assert (config.requested, config.shorthand, config.config_class) == ("fp8", "fp8_per_tensor", config_class)
    assert online.config_name(config) == name
    shorthand = online.for_release(online.parse({"quant_method": "fp8_per_block"}, "--quantization"),
                                   select_profile(release))
    assert (shorthand.config_class, online.config_name(shorthand)) == ("OnlineQuantizationConfig", "online")


def test_checkpoint_declaring_online_is_refused():
    with pytest.raises(ConfigError, match="OnlineQuantizationConfig does not support loading from a checkpoint"):
        parse_quant_config({"quant_method": "online"})


@pytest.mark.parametrize("release", ("0.28", "0.33"))
def test_ptpc_fp8_is_unknown(bf16, release):
    report = _inspect(bf16, "rocm:gfx942", release, "ptpc_fp8")
    assert len(report.errors) == 1
    assert report.errors[0].startswith("Unknown quantization method: ptpc_fp8. Must be one of [")
    assert "'fp8_per_channel'" in report.errors[0]


def test_fp8_on_a_compressed_tensors_checkpoint_is_a_mismatch(tmp_path):
    ckpt = open_local(write_checkpoint(str(tmp_path), Spec(quant="ct-fp8-dynamic")))
    report = _inspect(ckpt, "cuda:90", "0.33", "fp8")
    assert ("Quantization method specified in the model config (compressed-tensors) does not match the "
            "quantization method specified in the `quantization` argument (fp8).") in report.errors


@pytest.mark.parametrize("release", ("0.28", "0.33"))
@pytest.mark.parametrize("method", METHODS)
def test_online_moe_methods(bf16_moe, method, release):
    report = _inspect(bf16_moe, "cuda:90", release, method)
    assert report.moes
    for moe in report.moes:
        assert moe.scheme == MOE_SCHEME[method]
        assert moe.errors == (), moe.errors
        assert moe.kernel is not None


@pytest.mark.parametrize(("method", "keys"), [
    ("fp8", (kFp8StaticTensorSym, kFp8DynamicTensorSym, False)),
    ("fp8_per_block", (kFp8Static128BlockSym, kFp8Dynamic128Sym, False)),
    ("fp8_per_channel", (kFp8StaticChannelSym, kFp8DynamicTokenSym, True)),
])
def test_moe_method_keys(method, keys):
    config = online.parse({"quant_method": method}, "--quantization")
    found = online.moe_method("model.layers.0.mlp.experts", ("gate_proj", "up_proj", "down_proj"), config, "0.33")
    assert found.method == MOE_SCHEME[method]
    assert (found.weight_key, found.activation_key, found.allow_vllm_cutlass) == keys
    assert found.block is None  # per-block rounds sizes up: no create_weights block check, no 0.33 refinement
    assert found.assignment.online


def test_ptpc_moe_refuses_the_backends_without_channel_scales():
    config = online.parse({"quant_method": "fp8_per_channel"}, "--quantization")
    refusals = dict(online.moe_method("experts", ("w1", "w3", "w2"), config, "0.33").backend_errors)
    assert set(refusals) == {"MARLIN", "CPU", "CPU_W8A8", "FLASHINFER_CUTLASS", "FLASHINFER_TRTLLM"}
    assert refusals["MARLIN"] == ("FP8 PTPC online MoE quant is not supported with the MARLIN backend, which does "
                                  "not implement per-output-channel weight scales.")
    per_tensor = online.parse({"quant_method": "fp8_per_tensor"}, "--quantization")
    assert online.moe_method("experts", ("w1", "w3", "w2"), per_tensor, "0.33").backend_errors == ()


def test_format_gates():
    fmt = FORMATS["online"]
    assert fmt is online.FORMAT
    assert fmt.online_methods == ("fp8", "fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "mxfp8")
    assert (fmt.min_capability, fmt.act_dtypes, fmt.validates_block_shape) == (75, ("bfloat16", "float16"), False)
    assert fmt.expected_tensors(online._quantized(online.parse({"quant_method": "fp8"}, "q"))).weight_scale is None


def test_ptpc_moe_on_sm80_refuses_marlin_end_to_end(bf16_moe):
    moe = _inspect(bf16_moe, "cuda:80", "0.33", "fp8_per_channel").moes[0]
    assert moe.backend == "MARLIN"
    assert moe.errors == ("FP8 PTPC online MoE quant is not supported with the MARLIN backend, which does not "
                          "implement per-output-channel weight scales.",)


@pytest.mark.parametrize("platform, kernel", [("xpu", "XPUMxFp8LinearKernel"),
                                              ("cuda:100", "FlashInferCutedslMxfp8LinearKernel"), ("cpu", None)])
def test_online_mxfp8_goes_through_the_mxfp8_table(bf16, platform, kernel):
    """--quantization mxfp8 without a checkpoint config is the online Mxfp8OnlineLinearMethod (a deferred shorthand),
    whose kernel comes from init_mxfp8_linear_kernel: CPU's MXFP8 row is empty."""
    report = _inspect(bf16, platform, "0.33", "mxfp8")
    qkv = next(layer for layer in report.layers if "qkv" in layer.name)
    assert (qkv.scheme, qkv.weight_key, qkv.activation_key) == ("Mxfp8OnlineLinearMethod", "kMxfp8Static",
                                                                 "kMxfp8Dynamic")
    assert not report.errors
    if platform == "cpu":
        assert qkv.kernel is None and qkv.errors == (
            "Failed to find a kernel that can implement the MXFP8 linear layer. Reasons: \n",)
    else:
        assert qkv.kernel == kernel and not qkv.errors


def test_online_mxfp8_needs_whole_groups_of_32_per_rank(tmp_path):
    ckpt = open_local(write_checkpoint(str(tmp_path / "ragged"), Spec(quant=None, hidden=256, intermediate=336)))
    down = next(layer for layer in _inspect(ckpt, "xpu", "0.33", "mxfp8", tp=2).layers if "down_proj" in layer.name)
    assert down.errors == ("MXFP8 requires input_size_per_partition (168) to be divisible by 32.",)


def test_experts_under_a_method_fp8check_does_not_model_are_not_judged_and_the_verdict_says_so(bf16_moe):
    from fp8check.core.report.verdicts import inspect_verdict, not_judged

    report = _inspect(bf16_moe, "cuda:100", "0.33", "mxfp8")
    assert report.ok and {row.scheme for row in not_judged(report)} == {"Mxfp8OnlineMoEMethod"}
    assert f"{len(report.moes)} not judged (Mxfp8OnlineMoEMethod: a method fp8check names but does not model" in \
        inspect_verdict(report)
    assert not not_judged(_inspect(bf16_moe, "cuda:100", "0.33", "fp8_per_block"))
