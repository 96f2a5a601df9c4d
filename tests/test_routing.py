"""Routing table: checkpoint x platform x flags -> scheme, kernel, vLLM's reasons.

In the style of vLLM's CPU-only tests/kernels/quantization/test_fp8_kernel_selection.py, but end to end from a
checkpoint folder: every case writes a tiny checkpoint with the fixture factory and inspects it.
"""

from __future__ import annotations

import json
import os

import pytest

from fp8check.core.checkpoint import open_local
from fp8check.core.inspect import InspectOptions, inspect_checkpoint
from fp8check.core.platforms import apply_assumptions, parse_platform
from fp8check.core.profiles import select_profile
from fp8check.core.routing import Backend

FAILED = "Failed to find a kernel that can implement the ScaledMM linear layer. Reasons: \n"
ORIGINAL_CRASH = FAILED + "XPUW8A16FP8LinearKernel XPUW8A16FP8Linear only support per-channel and per-tensor quantization."


def inspect(folder, platform, vllm="latest", backend="auto", assume=(), per_quant=(), disabled=(), tp=1):
    options = InspectOptions(
        platform=apply_assumptions(parse_platform(platform), list(assume)), profile=select_profile(vllm), tp=tp,
        backend=Backend(backend, tuple(per_quant)), disabled_kernels=tuple(disabled),
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
    ("ct-fp8-dynamic", "xpu", "0.27", "torch", (), "CompressedTensorsW8A8Fp8", None,
     FAILED + "PerTensorTorchFP8ScaledMMLinearKernel requires ROCm, CUDA or CPU..\n"
     "ChannelWiseTorchFP8ScaledMMLinearKernel requires ROCm, CUDA or CPU.."),
    ("ct-fp8", "xpu", "latest", "auto", (), "CompressedTensorsW8A16Fp8", "XPUW8A16FP8LinearKernel", None),
    # CUDA by compute capability.
    ("ct-fp8-dynamic", "a100", "latest", "auto", (), "CompressedTensorsW8A16Fp8", "MarlinFP8ScaledMMLinearKernel", None),
    ("ct-fp8-dynamic", "h100", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "CutlassFP8ScaledMMLinearKernel", None),
    ("ct-fp8", "b200", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "FlashInferFP8ScaledMMLinearKernel", None),
    ("ct-fp8-block", "h100", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "CutlassFp8BlockScaledMMKernel", None),
    ("ct-fp8-block", "h100", "latest", "auto", ("deep_gemm=yes",), "CompressedTensorsW8A8Fp8",
     "DeepGemmFp8BlockScaledMMKernel", None),
    ("ct-fp8-block", "b200", "latest", "auto", ("deep_gemm=yes",), "CompressedTensorsW8A8Fp8",
     "FlashInferFp8DeepGEMMDynamicBlockScaledKernel", None),
    ("ct-fp8-block", "l40s", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "MarlinFP8ScaledMMLinearKernel", None),
    ("ct-fp8-block", "h100", "latest", "triton", (), "CompressedTensorsW8A8Fp8", "TritonFp8BlockScaledMMKernel", None),
    ("ct-fp8-block", "a100", "latest", "auto", (), "CompressedTensorsW8A16Fp8", "MarlinFP8ScaledMMLinearKernel", None),
    ("ct-fp8-block", "a100", "latest", "auto", ("humming=yes",), "CompressedTensorsW8A16Fp8",
     "HummingFP8ScaledMMLinearKernel", None),
    ("ct-fp8-block", "v100", "latest", "auto", (), "CompressedTensorsW8A16Fp8", None,
     "Quantization scheme is not supported for the current GPU. Min capability: 75. Current capability: 70."),
    # ROCm: MI300 (fnuz), MI250 (cc 90 passes the >= 89 gates without FP8 hardware), W8A16 has no ROCm kernel.
    ("ct-fp8-block", "mi300x", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "TritonFp8BlockScaledMMKernel", None),
    ("ct-fp8-block", "mi300x", "latest", "auto", ("aiter=yes",), "CompressedTensorsW8A8Fp8",
     "AiterFp8BlockScaledMMKernel", None),
    ("ct-fp8-dynamic", "mi300x", "latest", "auto", (), "CompressedTensorsW8A8Fp8",
     "RowWiseTorchFP8ScaledMMLinearKernel", None),
    ("ct-fp8-dynamic", "mi250x", "latest", "auto", (), "CompressedTensorsW8A8Fp8",
     "ChannelWiseTorchFP8ScaledMMLinearKernel", None),
    ("ct-w8a16-fp8", "mi300x", "latest", "auto", (), "CompressedTensorsW8A16Fp8", None, FAILED),
    # CPU.
    ("ct-fp8-dynamic", "cpu", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "CPUFP8W8A8ScaledMMLinearKernel", None),
    ("ct-fp8-dynamic", "cpu", "latest", "auto", ("cpu_amx=no",), "CompressedTensorsW8A8Fp8",
     "ChannelWiseTorchFP8ScaledMMLinearKernel", None),
    ("ct-fp8-block", "cpu", "latest", "auto", (), "CompressedTensorsW8A8Fp8", "CPUFp8W8A8BlockScaledMMKernel", None),
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
    assert lm_head.scheme == "UnquantizedLinearMethod" and lm_head.kernel is None


def test_rejections_are_vllms_strings_in_order(make_checkpoint):
    report = inspect(make_checkpoint(quant="ct-fp8-block", head_dim=128), "l40s")
    reasons = [r.reason for r in down_proj(report).rejected]
    assert reasons[1] == "DeepGemmFp8BlockScaledMMKernel Currently, only Hopper and Blackwell GPUs are supported.."
    assert reasons[2] == "CutlassFp8BlockScaledMMKernel The device compute capability of89 is not supported.."
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
    report = inspect(make_checkpoint(quant="ct-fp8-block", head_dim=128), "xpu", vllm="0.27", backend="torch")
    layer = down_proj(report)
    # 0.27 has no BlockWiseTorch kernel: vLLM warns and uses the whole XPU block list.
    assert layer.kernel == "XPUFp8BlockScaledMMKernel"
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
    # --linear-backend triton filters the W8A16 list to nothing, so Marlin still wins on an A100 ...
    assert layer.kernel == "MarlinFP8ScaledMMLinearKernel"
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
