"""Routing table: checkpoint x platform x flags -> scheme, kernel, vLLM's reasons.

In the style of vLLM's CPU-only tests/kernels/quantization/test_fp8_kernel_selection.py, but end to end from a
checkpoint folder: every case writes a tiny checkpoint with the fixture factory and inspects it.
"""

from __future__ import annotations

import json
import os

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import InputError
from fp8check.core.records import InspectOptions, LinearBackendOption
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import apply_assumptions, parse_platform
from fp8check.core.targets.profiles import select_profile

FAILED = "Failed to find a kernel that can implement the ScaledMM linear layer. Reasons: \n"
ORIGINAL_CRASH = FAILED + "XPUW8A16FP8LinearKernel XPUW8A16FP8Linear only support per-channel and per-tensor quantization."


def inspect(folder, platform, vllm="latest", backend="auto", assume=(), per_quant=(), disabled=(), tp=1):
    options = InspectOptions(
        platform=apply_assumptions(parse_platform(platform), list(assume)), profile=select_profile(vllm), tp=tp,
        backend=LinearBackendOption(backend, tuple(per_quant)), disabled_kernels=tuple(disabled),
    )
    return inspect_checkpoint(open_local(folder), options)


def down_proj(report):
    return next(layer for layer in report.layers if layer.name == "model.layers.0.mlp.down_proj")


# (quant, platform, vllm, backend, assume, expected scheme, expected kernel or None, expected error or None)
CASES = [
    # The case that started the project: Qwen3-32B-FP8-block on XPU, before and after vllm#50787.
    ("ct-fp8-block", "xpu", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "XPUFp8BlockScaledMMKernel", None),
    ("ct-fp8-block", "xpu", "0.27", "auto", (), "CompressedTensorsW8A16Fp8", None, ORIGINAL_CRASH),
    ("ct-fp8-block", "xpu", "0.27", "xpu", (), "CompressedTensorsW8A8Fp8", "XPUFp8BlockScaledMMKernel", None),
    ("ct-fp8-block", "xpu", "latest", "torch", (), "CompressedTensorsW8A8Fp8",
     "BlockWiseTorchFP8ScaledMMLinearKernel", None),
    # Per-channel / per-tensor keep the XPU W8A16 default unless --linear-backend xpu|torch.
    ("ct-fp8-dynamic", "xpu", "latest", "auto", (), "CompressedTensorsW8A16Fp8", "XPUW8A16FP8LinearKernel", None),
    ("ct-fp8-dynamic", "xpu", "latest", "xpu", (), "CompressedTensorsW8A8Fp8", "XPUW8A8FP8LinearKernel", None),
    ("ct-fp8-dynamic", "xpu", "latest", "torch", (), "CompressedTensorsW8A8Fp8",
     "ChannelWiseTorchFP8ScaledMMLinearKernel", None),
    # 0.27.1 compressed_tensors.py opts into W8A8 on XPU only for linear_backend == "xpu", and its XPU FP8 table
    # has no Torch kernels: "torch" keeps W8A16, whose list has no torch kernel, so vLLM falls back to auto.
    ("ct-fp8-dynamic", "xpu", "0.27", "torch", (), "CompressedTensorsW8A16Fp8", "XPUW8A16FP8LinearKernel", None),
    ("ct-fp8", "xpu", "latest", "auto", (), "CompressedTensorsW8A16Fp8", "XPUW8A16FP8LinearKernel", None),
    # CUDA by compute capability.
    # Stock installs bring humming-kernels (a Requires-Dist of every wheel 0.25-0.33); the W8A16 list tries it first.
    ("ct-fp8-dynamic", "a100", "latest", "auto", (), "CompressedTensorsW8A16Fp8", "HummingFP8ScaledMMLinearKernel", None),
    ("ct-fp8-dynamic", "a100", "latest", "auto", ("humming=no",), "CompressedTensorsW8A16Fp8",
     "MarlinFP8ScaledMMLinearKernel", None),
    ("ct-fp8-dynamic", "h100", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "CutlassFP8ScaledMMLinearKernel", None),
    ("ct-fp8", "b200", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "FlashInferFP8ScaledMMLinearKernel", None),
    # Stock sm90: FlashInfer's block-scale GEMM (is_device_capability(90) only) + vendored DeepGEMM come first.
    ("ct-fp8-block", "h100", "latest", "auto", (), "CompressedTensorsW8A8Fp8",
     "FlashInferFp8DeepGEMMDynamicBlockScaledKernel", None),
    ("ct-fp8-block", "h100", "latest", "auto", ("flashinfer=no",), "CompressedTensorsW8A8Fp8",
     "DeepGemmFp8BlockScaledMMKernel", None),
    ("ct-fp8-block", "h100", "latest", "auto", ("flashinfer=no", "deep_gemm=no"), "CompressedTensorsW8A8Fp8",
     "CutlassFp8BlockScaledMMKernel", None),
    ("ct-fp8-block", "b200", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "DeepGemmFp8BlockScaledMMKernel", None),
    # 0.27/0.28 marlin.py refuses cc >= 89 without VLLM_TEST_FORCE_FP8_MARLIN: sm89 block FP8 goes to Triton.
    ("ct-fp8-block", "l40s", "0.28", "auto", (), "CompressedTensorsW8A8Fp8", "TritonFp8BlockScaledMMKernel", None),
    ("ct-fp8-block", "l40s", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "MarlinFP8ScaledMMLinearKernel", None),
    ("ct-fp8-block", "h100", "latest", "triton", (), "CompressedTensorsW8A8Fp8", "TritonFp8BlockScaledMMKernel", None),
    ("ct-fp8-block", "a100", "latest", "auto", (), "CompressedTensorsW8A16Fp8", "HummingFP8ScaledMMLinearKernel", None),
    ("ct-fp8-block", "a100", "latest", "auto", ("humming=no",), "CompressedTensorsW8A16Fp8",
     "MarlinFP8ScaledMMLinearKernel", None),
    # 0.28 without Humming: Marlin's cc >= 89 gate leaves W8A16 on sm90 with no kernel at all.
    ("ct-w8a16-fp8", "h100", "0.28", "auto", ("humming=no",), "CompressedTensorsW8A16Fp8", None,
     FAILED + "HummingFP8ScaledMMLinearKernel Humming is not installed.\nMarlinFP8ScaledMMLinearKernel To apply FP8 "
     "Marlin on high-capability GPUs, please set VLLM_TEST_FORCE_FP8_MARLIN=1."),
    ("ct-fp8-block", "v100", "latest", "auto", (), "CompressedTensorsW8A16Fp8", None,
     "Quantization scheme is not supported for the current GPU. Min capability: 75. Current capability: 70."),
    # ROCm: MI300 (fnuz), MI250 (cc 90 passes the >= 89 gates without FP8 hardware), W8A16 has no ROCm kernel.
    ("ct-fp8-block", "mi300x", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "TritonFp8BlockScaledMMKernel", None),
    ("ct-fp8-block", "mi300x", "latest", "auto", ("aiter=yes",), "CompressedTensorsW8A8Fp8",
     "AiterFp8BlockScaledMMKernel", None),
    ("ct-fp8-dynamic", "mi300x", "latest", "auto", (), "CompressedTensorsW8A8Fp8",
     "RowWiseTorchFP8ScaledMMLinearKernel", None),
    ("ct-fp8-dynamic", "mi250x", "0.28", "auto", (), "CompressedTensorsW8A8Fp8",
     "ChannelWiseTorchFP8ScaledMMLinearKernel", None),
    # 0.29+ pytorch.py _rocm_torch_fp8_scaled_mm_supported(): gfx942/gfx950/gfx12x/gfx1250 only, so MI250 has none.
    ("ct-fp8-dynamic", "mi250x", "latest", "auto", (), "CompressedTensorsW8A8Fp8", None,
     FAILED + "AiterHipbMMPerTokenFp8ScaledMMLinearKernel requires setting `VLLM_ROCM_USE_AITER=1`, "
     "`VLLM_ROCM_USE_AITER_LINEAR=1`, and `VLLM_ROCM_USE_AITER_LINEAR_HIPBMM=1`..\n"
     "AiterPreshuffledPerTokenFp8ScaledMMLinearKernel requires setting `VLLM_ROCM_USE_AITER=1` and "
     "`VLLM_ROCM_USE_AITER_LINEAR=1`. `VLLM_ROCM_USE_AITER_LINEAR` default is True..\n"
     "AiterPerTokenFp8ScaledMMLinearKernel requires setting `VLLM_ROCM_USE_AITER=1` and "
     "`VLLM_ROCM_USE_AITER_LINEAR=1`. `VLLM_ROCM_USE_AITER_LINEAR` default is True..\n"
     "ROCmFP8ScaledMMLinearKernel requires CDNA3+ (gfx942/gfx950) or RDNA4 (gfx12x).\n"
     "PerTensorTorchFP8ScaledMMLinearKernel requires a platform with torch FP8 scaled-MM support..\n"
     "RowWiseTorchFP8ScaledMMLinearKernel requires platform with torch FP8 scaled-MM support..\n"
     "ChannelWiseTorchFP8ScaledMMLinearKernel requires a platform with torch FP8 scaled-MM support.."),
    ("ct-w8a16-fp8", "mi300x", "latest", "auto", (), "CompressedTensorsW8A16Fp8", None, FAILED),
    # CPU.
    # 0.33 cpu.py: the W8A8 kernels need native AMX-FP8 (ops.cpu_has_amx_fp8()), off by default.
    ("ct-fp8-dynamic", "cpu", "latest", "auto", (), "CompressedTensorsW8A8Fp8",
     "CPUFp8ChannelWiseScaledMMLinearKernel", None),
    ("ct-fp8-dynamic", "cpu", "latest", "auto", ("cpu_amx_fp8=yes",), "CompressedTensorsW8A8Fp8",
     "CPUFP8W8A8ScaledMMLinearKernel", None),
    ("ct-fp8-dynamic", "cpu", "0.28", "auto", (), "CompressedTensorsW8A8Fp8",
     "ChannelWiseTorchFP8ScaledMMLinearKernel", None),
    ("ct-fp8-dynamic", "cpu", "latest", "auto", ("cpu_amx=no",), "CompressedTensorsW8A8Fp8",
     "ChannelWiseTorchFP8ScaledMMLinearKernel", None),
    ("ct-fp8-block", "cpu", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "CPUFp8BlockScaledMMKernel", None),
    ("ct-fp8-block", "cpu", "latest", "auto", ("cpu_amx_fp8=yes",), "CompressedTensorsW8A8Fp8",
     "CPUFp8W8A8BlockScaledMMKernel", None),
    ("ct-w8a16-fp8", "cpu", "latest", "auto", (), "CompressedTensorsW8A16Fp8", None, FAILED),
    # Native vLLM / HF fp8.
    ("fp8-block", "xpu", "latest", "auto", (), "Fp8LinearMethod", "XPUFp8BlockScaledMMKernel", None),
    ("fp8-dynamic", "xpu", "latest", "auto", (), "Fp8LinearMethod", "XPUW8A16FP8LinearKernel", None),
    ("fp8-dynamic", "xpu", "latest", "xpu", (), "Fp8LinearMethod", "XPUW8A8FP8LinearKernel", None),
    ("fp8-static", "h100", "latest", "auto", (), "Fp8LinearMethod", "CutlassFP8ScaledMMLinearKernel", None),
    ("fp8-dynamic", "a100", "latest", "auto", (), "Fp8LinearMethod", "MarlinFP8ScaledMMLinearKernel", None),
]


@pytest.mark.parametrize("quant,platform,vllm,backend,assume,scheme,kernel,error", CASES,
                         ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[3]}{'-' + '-'.join(c[4]) if c[4] else ''}" for c in CASES])
def test_routing_table(make_checkpoint, quant, platform, vllm, backend, assume, scheme, kernel, error):
    report = inspect(make_checkpoint(quant=quant, head_dim=128), platform, vllm, backend, assume)
    layer = down_proj(report)
    assert (layer.scheme, layer.kernel) == (scheme, kernel)
    if error is None:
        assert layer.errors == () and report.ok
    else:
        assert layer.errors[0] == error if error != FAILED else layer.errors[0] == FAILED
        assert not report.ok
    lm_head = next(layer for layer in report.layers if layer.name == "lm_head")
    assert lm_head.scheme == "UnquantizedEmbeddingMethod" and lm_head.kernel is None  # a VocabParallelEmbedding


@pytest.mark.parametrize("vllm,of_89", [("0.33", "of89"), ("0.34", "of 89")])  # 0.34 mends the missing space
def test_rejections_are_vllms_strings_in_order(make_checkpoint, vllm, of_89):
    report = inspect(make_checkpoint(quant="ct-fp8-block", head_dim=128), "l40s", vllm)
    reasons = [r.reason for r in down_proj(report).rejected]
    assert reasons[1] == "DeepGemmFp8BlockScaledMMKernel Currently, only Hopper and Blackwell GPUs are supported.."
    assert reasons[2] == f"CutlassFp8BlockScaledMMKernel The device compute capability {of_89} is not supported.."
    assert [r.kernel for r in down_proj(report).rejected] == [
        "FlashInferFp8DeepGEMMDynamicBlockScaledKernel", "DeepGemmFp8BlockScaledMMKernel",
        "CutlassFp8BlockScaledMMKernel", "B12xFp8BlockScaledMMKernel"]
    assert not down_proj(report).rejected[3].verified  # B12x's conditions are fp8check's inference, and say so


def test_disabled_kernels_fall_through_with_vllms_reason(make_checkpoint):
    report = inspect(make_checkpoint(quant="ct-fp8-block", head_dim=128), "xpu", disabled=["XPUFp8BlockScaledMMKernel"])
    layer = down_proj(report)
    assert layer.kernel == "TritonFp8BlockScaledMMKernel"
    assert layer.rejected[0].reason == " XPUFp8BlockScaledMMKernel is disabled by environment variable"


def test_backend_without_kernel_falls_back_to_auto_with_warning(make_checkpoint):
    report = inspect(make_checkpoint(quant="ct-fp8-dynamic", head_dim=128), "xpu", vllm="0.27", backend="torch")
    layer = down_proj(report)
    # 0.27's XPU lists have no Torch kernel: vLLM warns and uses the whole W8A16 list.
    assert layer.kernel == "XPUW8A16FP8LinearKernel"
    assert any("--linear-backend=torch has no kernel for this linear layer type" in w for w in layer.warnings)


def test_per_quant_backend_changes_kernel_not_scheme(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-dynamic", head_dim=128)
    report = inspect(folder, "xpu", per_quant=[("fp8_w8a8", "xpu")])
    # Only the global --linear-backend decides W8A8 vs W8A16 on XPU; the W8A16 scheme's list has no "xpu" kernel.
    assert down_proj(report).scheme == "CompressedTensorsW8A16Fp8"
    block = inspect(make_checkpoint(quant="ct-fp8-block", head_dim=128), "xpu", per_quant=[("fp8_block_w8a8", "triton")])
    assert down_proj(block).kernel == "TritonFp8BlockScaledMMKernel"


def test_triton_below_sm89_is_a_predicted_runtime_failure(make_checkpoint):
    report = inspect(make_checkpoint(quant="ct-fp8-block", head_dim=128), "a100", backend="triton")
    layer = down_proj(report)
    # --linear-backend triton filters the W8A16 list to nothing, so Humming (stock) still wins on an A100 ...
    assert layer.kernel == "HummingFP8ScaledMMLinearKernel"
    # ... but forcing the W8A8 scheme's Triton block kernel on sm86 fails at JIT, as in vllm#39610.
    native = inspect(make_checkpoint(quant="fp8-block", head_dim=128), "rtx3090", backend="triton")
    layer = down_proj(native)
    assert layer.kernel == "TritonFp8BlockScaledMMKernel"
    assert "fp8e4nv not supported in this architecture" in layer.errors[0]


def test_global_capability_gate(make_checkpoint):
    report = inspect(make_checkpoint(quant="fp8-dynamic"), "cuda:61")
    assert report.errors[0] == ("The quantization method fp8 is not supported for the current GPU. Minimum "
                                "capability: 75. Current capability: 61.")


def test_fp8_schemes_need_an_activation_format(make_checkpoint):
    # compressed-tensors' "pack-quantized" is not an activation format: vLLM finds no FP8 scheme for it.
    folder = make_checkpoint(quant="ct-fp8-dynamic", head_dim=128)
    config_path = os.path.join(folder, "config.json")
    config = json.load(open(config_path))
    config["quantization_config"]["format"] = "pack-quantized"
    config["quantization_config"]["config_groups"]["group_0"]["format"] = None
    json.dump(config, open(config_path, "w"))
    layer = down_proj(inspect(folder, "h100"))
    assert layer.errors[0].startswith("No compressed-tensors compatible scheme was found for "
                                      "layer_name=model.layers.0.mlp.down_proj, weight_quant=num_bits=8 type='float'")
    assert "format=pack-quantized" in layer.errors[0]


def test_static_input_block_weights_fail_in_the_scheme_constructor_first(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-block")  # head_dim 64: a 64-row KV shard at TP 2 breaks block_n too
    config_path = os.path.join(folder, "config.json")
    config = json.load(open(config_path))
    config["quantization_config"]["config_groups"]["group_0"]["input_activations"] = {
        "num_bits": 8, "type": "float", "strategy": "tensor", "dynamic": False, "symmetric": True}
    json.dump(config, open(config_path, "w"))
    report = inspect(folder, "h100", tp=2)
    qkv = next(layer for layer in report.layers if layer.name == "model.layers.0.self_attn.qkv_proj")
    # CompressedTensorsW8A8Fp8.__init__ asserts before create_weights validates the block shape.
    assert qkv.errors[0].startswith("AssertionError in CompressedTensorsW8A8Fp8")
    assert not any("output_partition_size" in e for e in qkv.errors)


@pytest.mark.parametrize("release,profile", [
    ("0.25.0", "0.25"), ("0.25.1", "0.25"), ("0.26.0", "0.26"), ("0.27.0", "0.27"), ("v0.27.1", "0.27"),
    ("0.28.0", "0.28"), ("0.29.0", "0.29"), ("0.30.0", "0.30"), ("0.31.0", "0.31"), ("0.32.0", "0.32"),
    ("0.33.0", "0.33"), ("0.33.2", "0.33"), ("0.34.0", "0.34"), ("latest", "0.34"),   # 0.35: an error
])
def test_every_release_has_its_profile(release, profile):
    assert select_profile(release).name == profile


def test_profiles_are_deltas_and_every_change_is_described():
    from fp8check.core.targets.profiles import PROFILES, PULL_REQUESTS, WHEEL_CHANGES

    oldest_first = PROFILES[::-1]
    for older, newer in zip(oldest_first, oldest_first[1:]):
        assert older.includes <= newer.includes and older.changes <= newer.changes, (older.name, newer.name)
    assert set().union(*(p.includes for p in PROFILES)) == set(PULL_REQUESTS)
    assert set().union(*(p.changes for p in PROFILES)) == set(WHEEL_CHANGES)
    with pytest.raises(InputError):
        select_profile("0.24.0")


def test_installed_vllm_selects_its_release(monkeypatch):
    from importlib import metadata

    versions = {"vllm": "0.27.1"}

    def version(name):
        if name not in versions:
            raise metadata.PackageNotFoundError(name)
        return versions[name]

    monkeypatch.setattr(metadata, "version", version)
    assert select_profile("installed").name == "0.27"
    versions.clear()
    with pytest.raises(InputError, match="vLLM is not installed"):
        select_profile("installed")


def _row(quantization, platform, vllm, assume=()):
    from fp8check.kernels.base import RoutingContext
    from fp8check.kernels.registry import candidates

    ctx = RoutingContext(apply_assumptions(parse_platform(platform), list(assume)), select_profile(vllm))
    return [k.name for k in candidates(quantization, ctx)]


# Tables read from each wheel's vllm/model_executor/kernels/linear/__init__.py.
@pytest.mark.parametrize("quantization,platform,vllm,expected", [
    ("fp8_w8a8", "h100", "0.27", ["MarlinFP8ScaledMMLinearKernel", "FlashInferFP8ScaledMMLinearKernel",
                                   "CutlassFP8ScaledMMLinearKernel", "PerTensorTorchFP8ScaledMMLinearKernel",
                                   "ChannelWiseTorchFP8ScaledMMLinearKernel", "HummingFP8ScaledMMLinearKernel"]),
    ("fp8_w8a8", "l40s", "0.29", ["FlashInferFP8ScaledMMLinearKernel", "CutlassFP8ScaledMMLinearKernel",
                                   "B12xTensorFP8ScaledMMLinearKernel", "PerTensorTorchFP8ScaledMMLinearKernel",
                                   "ChannelWiseTorchFP8ScaledMMLinearKernel", "MarlinFP8ScaledMMLinearKernel",
                                   "HummingFP8ScaledMMLinearKernel"]),
    # 0.32+ prioritize_humming: Humming directly ahead of Marlin on sm90 only.
    ("fp8_w8a8", "h100", "0.32", ["FlashInferFP8ScaledMMLinearKernel", "CutlassFP8ScaledMMLinearKernel",
                                   "B12xTensorFP8ScaledMMLinearKernel", "PerTensorTorchFP8ScaledMMLinearKernel",
                                   "ChannelWiseTorchFP8ScaledMMLinearKernel", "HummingFP8ScaledMMLinearKernel",
                                   "MarlinFP8ScaledMMLinearKernel"]),
    ("fp8_block_w8a8", "h100", "0.28", ["FlashInferFp8DeepGEMMDynamicBlockScaledKernel",
                                         "DeepGemmFp8BlockScaledMMKernel", "CutlassFp8BlockScaledMMKernel",
                                         "B12xFp8BlockScaledMMKernel", "MarlinFP8ScaledMMLinearKernel",
                                         "TritonFp8BlockScaledMMKernel", "HummingFP8ScaledMMLinearKernel",
                                         "BlockWiseTorchFP8ScaledMMLinearKernel"]),
    ("fp8_block_w8a8", "h100", "0.26", ["FlashInferFp8DeepGEMMDynamicBlockScaledKernel",
                                         "DeepGemmFp8BlockScaledMMKernel", "CutlassFp8BlockScaledMMKernel",
                                         "MarlinFP8ScaledMMLinearKernel", "TritonFp8BlockScaledMMKernel",
                                         "HummingFP8ScaledMMLinearKernel"]),
    ("fp8_w8a8", "cpu", "0.30", ["PerTensorTorchFP8ScaledMMLinearKernel", "ChannelWiseTorchFP8ScaledMMLinearKernel"]),
    ("fp8_w8a8", "cpu", "0.31", ["CPUFP8W8A8ScaledMMLinearKernel", "CPUFp8PerTensorScaledMMLinearKernel",
                                  "PerTensorTorchFP8ScaledMMLinearKernel", "ChannelWiseTorchFP8ScaledMMLinearKernel"]),
    ("fp8_w8a8", "cpu", "0.33", ["CPUFP8W8A8ScaledMMLinearKernel", "CPUFp8PerTensorScaledMMLinearKernel",
                                  "CPUFp8ChannelWiseScaledMMLinearKernel", "PerTensorTorchFP8ScaledMMLinearKernel",
                                  "ChannelWiseTorchFP8ScaledMMLinearKernel"]),
    ("fp8_block_w8a8", "cpu", "0.30", ["CPUFp8BlockScaledMMKernel"]),
    ("fp8_w8a8", "xpu", "0.27", ["XPUW8A16FP8LinearKernel", "XPUW8A8FP8LinearKernel"]),
    ("fp8_block_w8a8", "xpu", "0.27", ["XPUFp8BlockScaledMMKernel", "TritonFp8BlockScaledMMKernel"]),
])
def test_kernel_tables_per_release(quantization, platform, vllm, expected):
    assert _row(quantization, platform, vllm) == expected


@pytest.mark.parametrize("assume,expected", [
    ((), "FlashInferFp8DeepGEMMDynamicBlockScaledKernel"),
    (("flashinfer=no",), "DeepGemmFp8BlockScaledMMKernel"),
])
def test_flashinfer_block_gemm_is_sm90_only(make_checkpoint, assume, expected):
    # utils/flashinfer.py has_flashinfer_fp8_blockscale_gemm: is_device_capability(90); on sm100 the combined
    # kernel names its failing half in vLLM's format.
    folder = make_checkpoint(quant="ct-fp8-block", head_dim=128)
    assert down_proj(inspect(folder, "h100", assume=assume)).kernel == expected
    b200 = down_proj(inspect(folder, "b200"))
    assert b200.kernel == "DeepGemmFp8BlockScaledMMKernel"
    assert b200.rejected[0].reason == ("FlashInferFp8DeepGEMMDynamicBlockScaledKernel base is not supported due to "
                                       "FlashInfer block-scale FP8 GEMM is not available..")


@pytest.mark.parametrize("vllm, assume, error", [
    ("0.34", ("triton_cpu=no",), "vLLM on x86 CPUs requires Triton (triton-cpu)."),  # platforms/cpu.py, 0.34
    ("0.33", ("triton_cpu=no",), None),   # 0.33 only warned ("triton-cpu is expected on x86 CPUs")
    ("0.34", (), None),                   # a stock x86 CPU install brings triton-cpu
])
def test_x86_cpu_without_triton_is_refused_from_034(make_checkpoint, vllm, assume, error):
    report = inspect(make_checkpoint(quant="ct-fp8-block"), "cpu", vllm, assume=assume)
    assert (error in report.errors) if error else not any("Triton" in e for e in report.errors)
    assert (report.tp_sizes_ok == ()) is (error is not None) and report.ok is (error is None)
