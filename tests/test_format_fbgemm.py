"""FBGEMM FP8 (fp8check.core.formats.fbgemm) through inspect_checkpoint: the deprecation and XPU allow-list
refusals, the two required keys, modules_to_not_convert, the (DynamicToken, StaticToken) keys, Marlin's warning
below sm89, unquantized experts."""

from __future__ import annotations

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import ConfigError
from fp8check.core.formats import fbgemm
from fp8check.core.formats.registry import parse_quant_config
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.synth import Spec, quantization_config, write_checkpoint

PLATFORMS = ("xpu", "cpu", "cuda:80", "cuda:89", "cuda:90", "cuda:100", "rocm:gfx942")
RELEASES = ("0.25", "0.28", "0.29", "0.33")
DEPRECATED = ("('The quantization method %s is deprecated and will be removed in future versions of vLLM. To "
              "bypass, set `--allow-deprecated-quantization`.', 'fbgemm_fp8')")


def _inspect(tmp_path, platform="cuda:90", release="0.33", allow=True, **spec):
    folder = write_checkpoint(str(tmp_path / "m"), Spec(quant="fbgemm-fp8", **spec))
    options = InspectOptions(parse_platform(platform), select_profile(release), quantization=None,
                             allow_deprecated_quantization=allow)
    return inspect_checkpoint(open_local(folder), options)


def _layer(report, suffix):
    return next(layer for layer in report.layers if layer.name.endswith(suffix))


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("allow", (True, False))
def test_front_door(tmp_path, platform, release, allow):
    report = _inspect(tmp_path, platform, release, allow)
    xpu_refused = platform == "xpu" and release != "0.25"
    if xpu_refused:
        assert report.errors == ("fbgemm_fp8 quantization is currently not supported in xpu.",)
    elif not allow:
        assert report.errors == (DEPRECATED,)
    else:
        # Below SM89, 0.29 and 0.30 route to Cutlass, whose SM80 dispatch crashes: a known vLLM failure.
        known = platform == "cuda:80" and release in ("0.29", "0.30")
        expected = ["known vLLM failure cutlass-fp8-sm80"] if known else []
        assert [e.partition(":")[0] for e in report.errors] == expected
        assert report.warnings[0] == ("The quantization method fbgemm_fp8 is deprecated and will be removed in "
                                      "future versions of vLLM.")
        assert (fbgemm.MARLIN_WARNING in report.warnings) == (platform in ("xpu", "cpu", "cuda:80"))
    qkv = _layer(report, "qkv_proj")
    assert qkv.scheme == fbgemm.FBGEMM_METHOD
    assert (qkv.weight_key, qkv.activation_key) == ("kFp8StaticTokenSym", "kFp8DynamicTokenSym")
    assert _layer(report, "lm_head").scheme == "UnquantizedEmbeddingMethod"


@pytest.mark.parametrize("platform,kernel", [
    ("cuda:90", "CutlassFP8ScaledMMLinearKernel"), ("cuda:100", "CutlassFP8ScaledMMLinearKernel"),
    ("cuda:80", "MarlinFP8ScaledMMLinearKernel"), ("rocm:gfx942", "RowWiseTorchFP8ScaledMMLinearKernel"),
])
def test_kernels(tmp_path, platform, kernel):
    report = _inspect(tmp_path, platform)
    qkv = _layer(report, "qkv_proj")
    assert qkv.kernel == kernel
    if platform == "cuda:80":  # use_marlin repacks the weight before Marlin's own post-load repacks it again
        assert not report.ok and qkv.errors[0].startswith("AssertionError after loading: FBGEMMFp8LinearMethod."
                                                          "process_weights_after_loading repacks the weight for "
                                                          "Marlin (use_marlin: sm80 is below sm89)")
    else:
        assert report.ok


@pytest.mark.parametrize("platform", ["cpu", "cuda:86"])
def test_use_marlin_fails_after_loading_wherever_it_holds(tmp_path, platform):
    qkv = _layer(_inspect(tmp_path, platform), "qkv_proj")
    assert qkv.kernel and qkv.errors and "repacks the weight for Marlin" in qkv.errors[0]


def test_xpu_025_finds_no_kernel(tmp_path):
    qkv = _layer(_inspect(tmp_path, "xpu", "0.25"), "qkv_proj")
    assert qkv.kernel is None and qkv.errors[0].startswith("Failed to find a kernel")


@pytest.mark.parametrize("missing", ("modules_to_not_convert", "activation_scale_ub"))
def test_required_keys(missing):
    cfg = quantization_config(Spec(quant="fbgemm-fp8"))
    del cfg[missing]
    with pytest.raises(ConfigError, match=rf"Cannot find any of \['{missing}'\] in the model's quantization config"):
        parse_quant_config(cfg)


def test_modules_to_not_convert(tmp_path):
    cfg = quantization_config(Spec(quant="fbgemm-fp8"))
    cfg["modules_to_not_convert"] = ["model.layers.0.mlp.down_proj", "model.layers.1.self_attn.q_proj"]
    report = _inspect(tmp_path, extra_config={"quantization_config": cfg})
    assert _layer(report, "layers.0.mlp.down_proj").scheme == "UnquantizedLinearMethod"
    assert _layer(report, "layers.1.mlp.down_proj").scheme == fbgemm.FBGEMM_METHOD
    assert _layer(report, "layers.1.self_attn.qkv_proj").errors[0].startswith("Detected some but not all shards")


def test_experts_unquantized(tmp_path):
    report = _inspect(tmp_path, architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=4)
    assert report.moes and all(m.scheme == "UnquantizedFusedMoEMethod" for m in report.moes)


def test_capability_gate(tmp_path):
    report = _inspect(tmp_path, "cuda:75")
    assert report.errors == ("The quantization method fbgemm_fp8 is not supported for the current GPU. Minimum "
                             "capability: 80. Current capability: 75.",)
