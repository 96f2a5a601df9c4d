"""FusedMoE: the MoE quant method, the FP8 expert backend per platform, TP/EP sizes, block checks, expert integrity.

Expected values come from reading vLLM 0.28.0 / 0.33.0 / 0.34.0 (fused_moe/oracle/fp8.py _get_priority_backends and
each experts class's _supports_*; the releases between for the profile change that moved a rule), cited next to each
case; the checkpoints are written by fp8check.synth.
"""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.checkpoint.local import open_local
from fp8check.core.planning.rows import collapse
from fp8check.core.records import InspectOptions
from fp8check.core.report.documents import inspect_document as to_json
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.routing.moe import expert_block_shape_error, experts_per_rank, refine_block
from fp8check.core.targets.platforms import apply_assumptions, parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.moe import MoEConfig, select_backend
from fp8check.kernels.quant_keys import kFp8Dynamic128Sym, kFp8Static128BlockSym, kFp8StaticTensorSym
from fp8check.synth import Spec, model_config, tensor_specs, write_safetensors

# Qwen3-30B-A3B's expert width (moe_intermediate_size 768) with attention that splits cleanly up to TP 8 with
# 128-blocks (8 heads of 128), so only the experts decide whether a TP size loads.
QWEN3_MOE = dict(quant="fp8-block", architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", hidden=1024,
                 heads=8, kv_heads=8, head_dim=128, experts=8, moe_intermediate=768, layers=2, data="sparse")
BLOCK_MSG = "The output_size of gate's and up's weight = 96 is not divisible by weight quantization block_n = 128."
MIXTRAL = dict(quant="ct-fp8-dynamic", architecture="MixtralForCausalLM", model_type="mixtral", moe_style="mixtral",
               experts=8, moe_intermediate=512, layers=2, data="sparse")
DEEPSEEK_V3 = dict(quant="fp8-block", architecture="DeepseekV3ForCausalLM", model_type="deepseek_v3",
                   moe_style="deepseek", experts=16, shared_experts=1, first_k_dense=1, mla=True, q_lora_rank=512,
                   kv_lora_rank=256, qk_rope_head_dim=64, hidden=1024, heads=16, kv_heads=16, head_dim=128,
                   intermediate=2048, moe_intermediate=256, layers=3, data="sparse")


def inspect(folder, platform="h100", tp=1, vllm="0.28", ep=False, assume=()):
    target = apply_assumptions(parse_platform(platform), list(assume))
    return inspect_checkpoint(open_local(folder), InspectOptions(target, select_profile(vllm), tp=tp, ep=ep))


def moe_rows(rep):
    return collapse(rep.moes)


@pytest.mark.parametrize("vllm", ["0.28", "0.33", "0.34"])
@pytest.mark.parametrize("platform, assume, kernel, backend", [
    ("h100", (), "TritonExperts", "TRITON"),                    # sm90 block FP8 under TP moves TRITON first
    ("h100", ("deep_gemm=yes",), "TritonExperts", "TRITON"),    # ... ahead of DEEPGEMM too
    ("a100", (), "MarlinExperts", "MARLIN"),                    # no FP8 on sm80: Triton refuses, Marlin is W8A16
    ("b200", (), "TrtLlmFp8ExpertsMonolithic", "FLASHINFER_TRTLLM"),
    ("mi300x", (), "TritonExperts", "TRITON"),                  # AITER off by default
    ("xpu", (), "XPUExpertsBlockFp8", "XPU"),                   # XPU moved to the front
    ("cpu", (), "CPUExpertsFp8", "CPU"),                        # AMX assumed; 0.33 tries CPU_W8A8 first
])
def test_native_block_fp8_backend_per_platform(make_checkpoint, vllm, platform, assume, kernel, backend):
    rep = inspect(make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 256}), platform, vllm=vllm, assume=assume)
    (row,) = moe_rows(rep)
    moe = row.layer
    assert row.name == "model.layers.{0..1}.mlp.experts" and row.count == 2
    assert (moe.scheme, moe.kernel, moe.backend) == ("Fp8MoEMethod", kernel, backend)
    assert moe.ok and rep.ok
    assert all("does not support the deployment configuration since kernel does not support" in r.reason
               for r in moe.rejected)


@pytest.mark.parametrize("vllm, refusal", [
    ("0.33", "FP8 MoE backend AITER does not support the deployment configuration since kernel does not support "),
    # moe-oracle-wording: MoEKernelOracle.make_log_unsupported (oracle/base.py), also for the backend vLLM must take.
    ("0.34", "Fp8 MoE backend 'AITER' does not support the deployment configuration since kernel does not support "),
])
def test_a_refused_backend_in_the_releases_wording(make_checkpoint, vllm, refusal):
    # AITER forced on (VLLM_ROCM_USE_AITER): the refined [32, 32] block of a 768-wide expert at TP 8 is no key of
    # AITER's, so vLLM raises the last class's refusal instead of trying another backend.
    moe = inspect(make_checkpoint(**QWEN3_MOE), "mi300x", tp=8, vllm=vllm, assume=("aiter=yes",)).moes[0]
    assert [r.kernel for r in moe.rejected] == ["AiterFp8BlockExperts", "AiterFp8TensorExperts",
                                                "AiterFp8ChannelExperts"]
    assert all(r.reason.startswith(refusal) for r in moe.rejected)
    assert moe.errors == (moe.rejected[-1].reason,) and "GroupShape(row=32, col=32)" in moe.errors[0]
    # The rejections logged on the way to a backend that takes the layer are worded alike.
    logged = inspect(make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 256}), "a100", vllm=vllm).moes[0].rejected
    assert logged and all(r.reason.startswith(refusal.split("AITER")[0]) for r in logged)


@pytest.mark.parametrize("vllm, kernel", [("0.28", "AiterExperts"), ("0.33", "AiterFp8BlockExperts")])
def test_aiter_when_enabled_splits_into_classes_in_033(make_checkpoint, vllm, kernel):
    rep = inspect(make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 256}), "mi300x", vllm=vllm, assume=("aiter=yes",))
    assert rep.moes[0].kernel == kernel and rep.moes[0].backend == "AITER"


def test_hopper_block_fp8_prefers_flashinfer_cutlass_under_ep(make_checkpoint):
    rep = inspect(make_checkpoint(**QWEN3_MOE), "h100", tp=2, ep=True)
    moe = rep.moes[0]
    assert (moe.kernel, moe.ep, moe.moe_tp, moe.experts_per_rank) == ("FlashInferExperts", 2, 1, "4")
    assert moe.intermediate_per_rank == 768


@pytest.mark.parametrize("platform", ["h100", "xpu", "mi300x", "a100"])
def test_028_refuses_tp8_of_a_768_wide_expert_and_suggests_ep(make_checkpoint, platform):
    folder = make_checkpoint(**QWEN3_MOE)
    rep = inspect(folder, platform, tp=8)
    moe = rep.moes[0]
    assert moe.errors == (BLOCK_MSG,) and not rep.ok
    assert any("--ep" in note and "1 of the 8 experts" in note for note in moe.notes)
    assert 8 not in rep.tp_sizes_ok and 8 in rep.tp_sizes_ok_ep
    assert 4 not in rep.tp_sizes_ok  # 768 / 4 = 192: not a multiple of 128 either
    with_ep = inspect(folder, platform, tp=8, ep=True)
    assert with_ep.ok and with_ep.moes[0].experts_per_rank == "1" and with_ep.moes[0].ep == 8


@pytest.mark.parametrize("platform, refuses", [
    # The class that would have taken 128x128 blocks and refuses the refined key (mi300x: none reaches it).
    ("h100", "FlashInferExperts"), ("xpu", "XPUExpertsBlockFp8"), ("b200", "TrtLlmFp8ExpertsMonolithic"),
    ("mi300x", None),
])
def test_033_refines_the_block_and_only_triton_takes_it(make_checkpoint, platform, refuses):
    rep = inspect(make_checkpoint(**QWEN3_MOE), platform, tp=8, vllm="0.33")
    moe = rep.moes[0]
    assert moe.ok and moe.kernel == "TritonExperts" and moe.block == (32, 32)  # gcd(128, 128, 96, 1024)
    assert any("refines the block scales from [128, 128] to [32, 32]" in n and n.endswith("TritonExperts")
               for n in moe.notes)
    refused = [r.kernel for r in moe.rejected if "GroupShape(row=32, col=32)" in r.reason]
    assert refuses in refused if refuses else refused == []
    assert 8 in rep.tp_sizes_ok


@pytest.mark.parametrize("vllm", ["0.28", "0.29", "0.32", "0.34"])
def test_the_block_refinement_arrived_in_029(make_checkpoint, vllm):
    # moe-block-refine: refine_fp8_moe_block_shape and TritonExperts' refined keys are in 0.29.0's wheel already.
    moe = inspect(make_checkpoint(**QWEN3_MOE), "h100", tp=8, vllm=vllm).moes[0]
    if vllm == "0.28":
        assert moe.errors == (BLOCK_MSG,) and moe.weight_key == "kFp8Static128BlockSym"
        return
    assert moe.ok and moe.kernel == "TritonExperts" and moe.block == (32, 32)
    assert any(n.startswith(f"vLLM {vllm} refines the block scales from [128, 128] to [32, 32]") for n in moe.notes)


@pytest.mark.parametrize("vllm, kernel", [("0.29", None), ("0.30", "CPUExpertsFp8"), ("0.34", "CPUExpertsFp8")])
def test_cpu_experts_route_deepseek_from_030(vllm, kernel):
    # cpu-moe-deepseek-routing: CPUExpertsFp8._supports_routing_method gains DeepSeekV3 / DeepseekV4 in 0.30.
    ctx = RoutingContext(parse_platform("cpu"), select_profile(vllm))
    choice = select_backend(MoEConfig(16, 1024, 256, 1, 1, routing="DeepSeekV3"), kFp8Static128BlockSym,
                            kFp8Dynamic128Sym, ctx, allow_vllm_cutlass=False)
    assert choice.kernel == kernel
    cpu = [r.reason for r in choice.rejected if r.kernel == "CPUExpertsFp8"]
    assert cpu == ([] if kernel else ["FP8 MoE backend CPU does not support the deployment configuration since "
                                      "kernel does not support routing method 2."])


@pytest.mark.parametrize("vllm, block_kernel", [("0.28", "TrtLlmFp8ExpertsMonolithic"),
                                                 ("0.29", "TritonOrDeepGemmExperts"),
                                                 ("0.30", "TrtLlmFp8ExpertsMonolithic")])
def test_trtllm_experts_take_a_swiglu_clamp_only_on_block_keys_from_030(vllm, block_kernel):
    # trtllm-swiglu-clamp (0.29: MXFP8 only) and trtllm-swiglu-block (0.30: also 128-block FP8 with SiLU); per-tensor
    # keys with a clamp fall to FlashInfer's CUTLASS experts on SM100 from 0.29.
    ctx = RoutingContext(parse_platform("b200"), select_profile(vllm))
    cfg = MoEConfig(16, 1024, 256, 1, 1, routing="DeepSeekV3", swiglu_limit=True)
    block = select_backend(cfg, kFp8Static128BlockSym, kFp8Dynamic128Sym, ctx, allow_vllm_cutlass=False)
    tensor = select_backend(cfg, kFp8StaticTensorSym, kFp8StaticTensorSym, ctx, allow_vllm_cutlass=False)
    assert block.kernel == block_kernel
    assert tensor.kernel == ("TrtLlmFp8ExpertsMonolithic" if vllm == "0.28" else "FlashInferExperts")
    unclamped = select_backend(cfg._replace(swiglu_limit=False), kFp8StaticTensorSym, kFp8StaticTensorSym, ctx,
                               allow_vllm_cutlass=False)
    assert unclamped.kernel == "TrtLlmFp8ExpertsMonolithic"


@pytest.mark.parametrize("vllm, error", [
    ("0.31", None),     # asks for gate_proj / up_proj / down_proj: none is ignored, one scheme
    ("0.32", "All MoE projections need to have same quantization scheme but found multiple"),
])
def test_compressed_tensors_asks_for_the_checkpoints_expert_names_from_032(make_checkpoint, vllm, error):
    # ct-moe-ckpt-leaves: get_moe_method names expert 0's projections as the checkpoint does (Mixtral's w1 / w3 /
    # w2); a config that ignores w2 alone gives them two schemes from 0.32 only.
    folder = make_checkpoint(**MIXTRAL)
    path = os.path.join(folder, "config.json")
    with open(path) as fh:
        config = json.load(fh)
    config["quantization_config"]["ignore"].append("re:.*experts\\.\\d+\\.w2$")
    with open(path, "w") as fh:
        json.dump(config, fh)
    moe = inspect(folder, "h100", vllm=vllm).moes[0]
    assert (moe.errors[0] if moe.errors else None) == error


def test_033_refined_block_on_cpu_finds_no_backend(make_checkpoint):
    moe = inspect(make_checkpoint(**QWEN3_MOE), "cpu", tp=8, vllm="0.33").moes[0]
    assert moe.kernel is None and moe.errors[0].startswith("AssertionError: assert self.experts_cls is not None")


def test_033_does_not_refine_compressed_tensors_blocks(make_checkpoint):
    # Only Fp8MoEMethod calls resolve_fp8_moe_weight_block_shape; CompressedTensorsW8A8Fp8MoEMethod still
    # runs validate_fp8_block_shape_moe with the checkpoint's block.
    rep = inspect(make_checkpoint(**{**QWEN3_MOE, "quant": "ct-fp8-block"}), "h100", tp=8, vllm="0.33")
    assert rep.moes[0].scheme == "CompressedTensorsW8A8Fp8MoEMethod" and rep.moes[0].errors == (BLOCK_MSG,)


@pytest.mark.parametrize("quant, platform, kernel, weight_key, activation_key", [
    # CT per-channel / per-token: FlashInfer CUTLASS takes only static per-tensor; vLLM CUTLASS is allowed for CT.
    ("ct-fp8-dynamic", "h100", "TritonOrCutlassExperts", "kFp8StaticChannelSym", "kFp8DynamicTokenSym"),
    # CT static per-tensor: FlashInfer CUTLASS on sm90+.
    ("ct-fp8", "h100", "FlashInferExperts", "kFp8StaticTensorSym", "kFp8StaticTensorSym"),
    # native dynamic per-tensor: Fp8MoEMethod never allows vLLM CUTLASS, FlashInfer wants static -> Triton.
    ("fp8-dynamic", "h100", "TritonExperts", "kFp8StaticTensorSym", "kFp8DynamicTensorSym"),
    ("fp8-dynamic", "xpu", "XPUExpertsFp8", "kFp8StaticTensorSym", "kFp8DynamicTensorSym"),
    ("ct-fp8-dynamic", "a100", "MarlinExperts", "kFp8StaticChannelSym", "kFp8DynamicTokenSym"),
])
def test_per_tensor_and_channel_schemes(make_checkpoint, quant, platform, kernel, weight_key, activation_key):
    moe = inspect(make_checkpoint(**{**QWEN3_MOE, "quant": quant, "moe_intermediate": 256}), platform).moes[0]
    assert (moe.kernel, moe.weight_key, moe.activation_key) == (kernel, weight_key, activation_key)


@pytest.mark.parametrize("platform, kernel", [("cpu", None), ("xpu", "TritonExperts")])
def test_per_channel_fp8_experts_off_cuda(make_checkpoint, platform, kernel):
    # XPU's own experts take per-tensor or 128x128 blocks only, but TritonExperts runs on XPU too. CPU has
    # nothing: the oracle returns Fp8MoeBackend.NONE off CUDA/ROCm instead of raising; the method asserts later.
    moe = inspect(make_checkpoint(**{**QWEN3_MOE, "quant": "ct-fp8-dynamic", "moe_intermediate": 256}),
                  platform).moes[0]
    assert moe.kernel == kernel
    assert (moe.errors[0] if moe.errors else "").startswith("AssertionError" if kernel is None else "")


@pytest.mark.parametrize("quant, vllm, message", [
    ("ct-w8a16-fp8", "0.28", "('For Fused MoE layers, only format: ', 'pack-quantized ', ' and bits: [4, 8] is "
                             "supported ', 'but got format: pack-quantized  and bits: 8')"),
    ("ct-w8a16-fp8", "0.29", "For Fused MoE layers, only format: pack-quantized and bits: [4, 8] is supported but "
                             "got format: pack-quantized and bits: 8"),  # ct-wna16-moe-wording
    ("ct-w8a16-fp8", "0.33", "For Fused MoE layers, only format: pack-quantized and bits: [4, 8] is supported but "
                             "got format: pack-quantized and bits: 8"),
    ("ct-w8a16-fp8-tensor", "0.28", "Unsupported FusedMoe scheme: num_bits=8 type='float'"),
])
def test_weight_only_fp8_experts_are_refused_verbatim(make_checkpoint, quant, vllm, message):
    moe = inspect(make_checkpoint(**{**QWEN3_MOE, "quant": quant, "moe_intermediate": 256}), vllm=vllm).moes[0]
    assert moe.errors[0].startswith(message)


def test_cuda_without_any_backend_raises_vllms_message(make_checkpoint):
    # sm70 (V100): Triton needs FP8 (sm89+), Marlin sm75+, the rest newer GPUs or ROCm / XPU / CPU.
    moe = inspect(make_checkpoint(**{**QWEN3_MOE, "quant": "ct-fp8", "moe_intermediate": 256}), "cuda:70").moes[0]
    assert moe.errors == ("No FP8 MoE backend supports the deployment configuration.",)


def test_missing_expert_scale_is_named(tmp_path):
    spec = Spec(**{**QWEN3_MOE, "moe_intermediate": 256, "experts": 16})
    entries = tensor_specs(spec)
    missing = "model.layers.1.mlp.experts.13.down_proj.weight_scale_inv"
    del entries[missing]
    (tmp_path / "config.json").write_text(json.dumps(model_config(spec)))
    write_safetensors(os.path.join(tmp_path, "model.safetensors"), entries, None)
    rep = inspect(str(tmp_path))
    bad = [m for m in rep.moes if not m.ok]
    assert [m.name for m in bad] == ["model.layers.1.mlp.experts"]
    assert len(bad[0].errors) == 1 and bad[0].errors[0].startswith(f"{missing} is missing")
    assert not rep.ok


def test_expert_with_a_different_shape_is_named(tmp_path):
    spec = Spec(**{**QWEN3_MOE, "moe_intermediate": 256})
    entries = tensor_specs(spec)
    entries["model.layers.0.mlp.experts.3.up_proj.weight"] = ("F8_E4M3", (384, 1024))
    (tmp_path / "config.json").write_text(json.dumps(model_config(spec)))
    write_safetensors(os.path.join(tmp_path, "model.safetensors"), entries, None)
    errors = inspect(str(tmp_path)).moes[0].errors
    assert any(e.startswith("model.layers.0.mlp.experts.3.up_proj.weight (model.safetensors) has shape [384, 1024]")
               for e in errors)


@pytest.mark.parametrize("vllm, kernel", [("0.28", None), ("0.33", "CPUExpertsFp8")])
def test_deepseek_routing_on_cpu(make_checkpoint, vllm, kernel):
    # CPUExpertsFp8 routes Default / Renormalize / RenormalizeNaive in 0.28; 0.33 adds DeepSeekV3, which
    # glm4_moe.py's router is (sigmoid, a correction bias, n_group groups, norm_topk_prob).
    folder = make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 256, "architecture": "Glm4MoeForCausalLM",
                                "model_type": "glm4_moe"})
    moe = inspect(folder, "cpu", vllm=vllm).moes[0]
    assert moe.kernel == kernel and "routing method DeepSeekV3" in moe.notes[0]
    if kernel is None:
        assert any(r.reason.endswith("kernel does not support routing method 2.") for r in moe.rejected)


@pytest.mark.parametrize("architecture,keys,routing", [
    # deepseek_v2.py reads scoring_func (default softmax), norm_topk_prob, n_group and topk_method from the config.
    ("DeepseekV3ForCausalLM", {}, "DeepSeekV3"),                      # synth writes V3's released keys
    ("DeepseekV3ForCausalLM", {"scoring_func": "softmax"}, "Unspecified"),  # a bias under softmax
    ("DeepseekV3ForCausalLM", {"topk_method": "greedy", "scoring_func": "softmax"}, "RenormalizeNaive"),
    ("DeepseekV2ForCausalLM", {}, "Default"),                         # V2-Lite: softmax, greedy, no renormalize
    ("Qwen3MoeForCausalLM", {"norm_topk_prob": False}, "Default"),
    ("Qwen3MoeForCausalLM", {}, "RenormalizeNaive"),
    ("MixtralForCausalLM", {}, "RenormalizeNaive"),
    ("MiniMaxM2ForCausalLM", {}, "MiniMax2"),                         # sigmoid with a bias, no groups
    ("Llama4ForCausalLM", {}, "Llama4"),                              # llama4.py's custom_routing_function
])
def test_routing_method_is_vllms_from_the_model_file_and_the_config(make_checkpoint, architecture, keys, routing):
    folder = make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 256, "architecture": architecture,
                                "extra_config": keys})
    assert inspect(folder, "h100").moes[0].notes[0].startswith(f"routing method {routing} (")


@pytest.mark.parametrize("vllm,routing,kernel", [("0.29", "Llama4", None), ("0.30", "Default", "CPUExpertsFp8"),
                                                 ("0.33", "Default", "CPUExpertsFp8")])
def test_cpu_router_drops_llama4s_custom_routing_from_030(make_checkpoint, vllm, routing, kernel):
    """From 0.30 every CPU FusedMoE routes through CPURouter: Llama-4's top-1 sigmoid reads as Default
    (softmax, renormalize=False), which CPUExpertsFp8 takes; before, Llama4 routing, which it refuses."""
    folder = make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 256, "architecture": "Llama4ForCausalLM"})
    moe = inspect(folder, "cpu", vllm=vllm).moes[0]
    assert moe.notes[0].startswith(f"routing method {routing} (") and moe.kernel == kernel


def test_mixtral_experts_and_json_fields(make_checkpoint):
    rep = inspect(make_checkpoint(**MIXTRAL), "h100", tp=2)
    doc = to_json(rep)
    (entry, _) = doc["moe"]
    assert entry["name"] == "model.layers.0.block_sparse_moe.experts" and entry["shards"] == ["w1", "w3", "w2"]
    assert entry["num_experts"] == 8 and entry["experts_per_rank"] == "8" and entry["ep"] == 1
    assert entry["shape"] == [8, 1024, 256] and entry["intermediate_per_rank"] == 256
    assert entry["scheme"] == "CompressedTensorsW8A8Fp8MoEMethod" and entry["kernel"] == "TritonOrCutlassExperts"
    assert {"rejected", "errors", "warnings", "notes", "weight_key", "activation_key"} <= set(entry)


def test_deepseek_shaped_experts_start_after_dense_layers(make_checkpoint):
    rep = inspect(make_checkpoint(**DEEPSEEK_V3), "h100", tp=2)
    assert [m.name for m in rep.moes] == ["model.layers.1.mlp.experts", "model.layers.2.mlp.experts"]
    assert all(m.kernel == "TritonExperts" and m.experts_per_rank == "16" for m in rep.moes)
    assert any("DeepSeekV3" in n for n in rep.moes[0].notes)
    shared = [layer for layer in rep.layers if ".shared_experts." in layer.name]
    assert shared and all(layer.scheme == "Fp8LinearMethod" for layer in shared)


@pytest.mark.parametrize("experts, ep, want", [(256, 8, "32"), (60, 8, "7-8"), (8, 8, "1"), (3, 4, "0-1")])
def test_experts_per_rank(experts, ep, want):
    # determine_expert_map, linear placement: the first experts % ep ranks hold one more.
    assert experts_per_rank(experts, ep) == want


@pytest.mark.parametrize("ispp, tp, block, want", [
    (96, 8, (128, 128), BLOCK_MSG),
    (192, 4, (128, 128), "The output_size of gate's and up's weight = 192 is not divisible by weight quantization "
                         "block_n = 128."),
    (256, 2, (128, 96), "The input_size of down's weight = 256 is not divisible by weight quantization block_k = 96."),
    (256, 1, (128, 96), None),  # block_k is only checked when the TP world is larger than 1
    (768, 8, (128, 128), None),  # under EP the shard is whole
])
def test_expert_block_shape_error(ispp, tp, block, want):
    assert expert_block_shape_error(ispp, block, tp) == want


@pytest.mark.parametrize("block, ispp, moe_tp, hidden, want", [
    ((128, 128), 96, 8, 2048, (32, 32)),
    ((128, 128), 384, 4, 7168, None),      # divides: nothing to refine
    ((128, 128), 80, 8, 2048, None),       # gcd 16 < 32: no refinement, the block check fails instead
    ((128, 128), 192, 4, 4096, (64, 64)),
])
def test_refine_block(block, ispp, moe_tp, hidden, want):
    assert refine_block(block, ispp, moe_tp, hidden) == want


@pytest.mark.parametrize("release", ["0.28", "0.31", "0.33", "0.34"])
def test_trtllm_refuses_more_than_2048_experts_in_every_release(release):
    # TrtLlmFp8ExpertsBase.is_supported_config refuses more than 2048 experts in every wheel 0.28 ... 0.34
    # (experts/trtllm_fp8_moe.py); on B200, FlashInfer CUTLASS takes 128x128 blocks on sm90 only and Triton refuses
    # 1024+ padded experts, so the oracle ends on Marlin (W8A16, any FP8 weight key on sm75+).
    # deep_gemm=no: stock wheels vendor DeepGEMM (TritonOrDeepGemmExperts would win); this test is about TRT-LLM.
    ctx = RoutingContext(apply_assumptions(parse_platform("b200"), ["deep_gemm=no"]), select_profile(release))
    choice = select_backend(MoEConfig(4096, 1024, 512, 1, 1), kFp8Static128BlockSym, kFp8Dynamic128Sym, ctx,
                            allow_vllm_cutlass=False)
    assert choice.kernel == "MarlinExperts"
    reasons = [r.reason for r in choice.rejected]
    assert any(r.endswith("supports at most 2048 experts, but got 4096.") for r in reasons)
    assert any(r.endswith("requires fewer than 1024 padded experts.") for r in reasons)


@pytest.mark.parametrize("flags, code", [((), 1), (("--ep",), 0)])
def test_cli_ep_flag(make_checkpoint, flags, code):
    folder = make_checkpoint(**QWEN3_MOE)
    # --vllm 0.28: 0.33's block refinement lets this MoE load at TP 8 even without --ep.
    result = CliRunner().invoke(app, ["inspect", folder, "-p", "h100", "--tp", "8", "-f", "json", "--vllm", "0.28",
                                      *flags])
    doc = json.loads(result.stdout)
    assert result.exit_code == code and doc["ep"] == bool(flags) and 8 in doc["tp_sizes_ok_ep"]
    assert doc["moe"][0]["experts_per_rank"] == ("1" if flags else "8")



@pytest.mark.parametrize("family, platform, method, kernel", [
    # Native 128x128 blocks: Triton first on Hopper under TP, Marlin (W8A16) on Ampere, Triton with AITER off,
    # XPU's block experts on XPU.
    (DEEPSEEK_V3, "h100", "Fp8MoEMethod", "TritonExperts"),
    (DEEPSEEK_V3, "a100", "Fp8MoEMethod", "MarlinExperts"),
    (DEEPSEEK_V3, "mi300x", "Fp8MoEMethod", "TritonExperts"),
    (DEEPSEEK_V3, "xpu", "Fp8MoEMethod", "XPUExpertsBlockFp8"),
    # compressed-tensors per-channel weights / per-token activations: vLLM CUTLASS (CT allows it) on Hopper, Marlin
    # on Ampere, Triton on ROCm and XPU (XPU's own experts take per-tensor or 128x128 blocks only).
    (MIXTRAL, "h100", "CompressedTensorsW8A8Fp8MoEMethod", "TritonOrCutlassExperts"),
    (MIXTRAL, "a100", "CompressedTensorsW8A8Fp8MoEMethod", "MarlinExperts"),
    (MIXTRAL, "mi300x", "CompressedTensorsW8A8Fp8MoEMethod", "TritonExperts"),
    (MIXTRAL, "xpu", "CompressedTensorsW8A8Fp8MoEMethod", "TritonExperts"),
])
def test_families_get_one_row_per_moe_template(make_checkpoint, family, platform, method, kernel):
    rep = inspect(make_checkpoint(**family), platform)
    (row,) = moe_rows(rep)
    assert row.count == 2 and "{" in row.name and row.name.endswith(".experts")
    assert (row.layer.scheme, row.layer.kernel) == (method, kernel) and row.layer.ok


# ---------------------------------------------------------------------------------------------- --moe-backend
# select_fp8_moe_backend's branch for an explicit moe_backend (fused_moe/oracle/fp8.py, alike 0.25 ... 0.34):
# map_fp8_backend, then return_or_raise on the requested backend's classes only; no fallback to another backend.

def inspect_with(folder, platform, tp=1, vllm="0.34", moe_backend="auto", ep=False):
    options = InspectOptions(parse_platform(platform), select_profile(vllm), tp=tp, ep=ep, moe_backend=moe_backend)
    return inspect_checkpoint(open_local(folder), options)


@pytest.mark.parametrize("platform, moe_backend, kernel, backend, error", [
    # sm90 block FP8 under TP: auto takes Triton; DeepGEMM and FlashInfer's CUTLASS experts take it when asked
    ("h100", "deep_gemm", "TritonOrDeepGemmExperts", "DEEPGEMM", None),
    ("h100", "flashinfer_cutlass", "FlashInferExperts", "FLASHINFER_CUTLASS", None),
    ("h100", "marlin", "MarlinExperts", "MARLIN", None),
    # Fp8MoEMethod builds the oracle with allow_vllm_cutlass=False
    ("h100", "cutlass", None, None, "vLLM CUTLASS FP8 MoE backend is disabled for this configuration."),
    # TRT-LLM's FP8 experts are Blackwell's: the requested backend's last class's reason, no other backend tried
    ("h100", "flashinfer_trtllm", None, None, "Fp8 MoE backend 'FLASHINFER_TRTLLM' does not support the deployment "
                                              "configuration since kernel does not support current device cuda"),
    ("mi300x", "aiter", None, None, "Fp8 MoE backend 'AITER' does not support the deployment configuration since "),
    ("b200", "triton", "TritonExperts", "TRITON", None),
])
def test_an_explicit_moe_backend_is_taken_or_refused(make_checkpoint, platform, moe_backend, kernel, backend, error):
    rep = inspect_with(make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 256}), platform, tp=2,
                       moe_backend=moe_backend)
    (row,) = moe_rows(rep)
    moe = row.layer
    assert (moe.kernel, moe.backend) == (kernel, backend)
    assert moe.unjudged is None
    if error:
        assert not moe.ok and moe.errors[0].startswith(error)
    else:
        assert moe.ok and rep.ok


def test_an_explicit_backend_is_worded_as_each_release_words_it(make_checkpoint):
    folder = make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 256})
    old = moe_rows(inspect_with(folder, "h100", tp=2, vllm="0.33", moe_backend="flashinfer_trtllm"))[0].layer
    assert old.errors[0].startswith("FP8 MoE backend FLASHINFER_TRTLLM does not support the deployment configuration "
                                    "since kernel does not support current device")


@pytest.mark.parametrize("vllm, block, per_rank, kernel, error", [
    # 768-wide experts at TP 8: 96 rows per rank. 0.29-0.30 refine to [32, 32] whatever was asked, which DeepGEMM
    # refuses; from 0.31 a requested backend that refuses the refined block has the shard padded to whole blocks.
    ("0.30", (32, 32), 96, None, "FP8 MoE backend DEEPGEMM does not support the deployment configuration since "
                                 "kernel does not support quantization scheme"),
    ("0.33", (128, 128), 128, "TritonOrDeepGemmExperts", None),
    ("0.34", (128, 128), 128, "TritonOrDeepGemmExperts", None),
])
def test_a_requested_backend_pads_the_shard_instead_of_refining(make_checkpoint, vllm, block, per_rank, kernel, error):
    rep = inspect_with(make_checkpoint(**QWEN3_MOE), "h100", tp=8, vllm=vllm, moe_backend="deep_gemm")
    moe = moe_rows(rep)[0].layer
    assert (moe.block, moe.intermediate_per_rank, moe.kernel) == (block, per_rank, kernel)
    if error:
        assert moe.errors[0].startswith(error)
    else:
        assert moe.ok and any("pads each rank's experts to whole 128-blocks (96 -> 128 rows" in n for n in moe.notes)
    # --moe-backend triton takes the refined block: no padding
    refined = moe_rows(inspect_with(make_checkpoint(**QWEN3_MOE), "h100", tp=8, vllm=vllm,
                                    moe_backend="triton"))[0].layer
    assert (refined.block, refined.intermediate_per_rank, refined.kernel) == ((32, 32), 96, "TritonExperts")


def test_padding_refuses_experts_no_block_divides(make_checkpoint):
    # 704-wide experts: 88 rows per rank at TP 8, refined block gcd(128, 88, 1024) = 8 < 32 (none): pad_tp_shard_to_
    # weight_blocks refuses a global width that is no multiple of the block.
    rep = inspect_with(make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 704}), "h100", tp=8,
                       moe_backend="deep_gemm")
    assert moe_rows(rep)[0].layer.errors == ("Block-aligned FP8 TP sharding requires 128-aligned global expert "
                                             "dimensions, pure TP, and no LoRA or expert bias.",)


@pytest.mark.parametrize("spec, moe_backend, why", [
    # unquantized experts: select_unquantized_moe_backend is not modelled under an explicit backend it maps
    (dict(QWEN3_MOE, moe_intermediate=256, quant=None), "triton",
     "--moe-backend triton with UnquantizedFusedMoEMethod: the backend its oracle takes is not modelled"),
])
def test_a_backend_fp8check_does_not_model_is_not_judged(make_checkpoint, spec, moe_backend, why):
    from fp8check.core.report.verdicts import inspect_verdict, not_judged

    rep = inspect_with(make_checkpoint(**spec), "h100", tp=2, moe_backend=moe_backend)
    moe = moe_rows(rep)[0].layer
    assert moe.unjudged.startswith(why) and moe.kernel is None
    assert not_judged(rep) == list(rep.moes)
    assert f"2 FusedMoE not judged ({why}" in inspect_verdict(rep)


@pytest.mark.parametrize("moe_backend", ["emulation", "batched_triton", "triton_unfused", "deep_gemm_mega_moe",
                                         "aiter_mega_moe", "flashinfer_moe_ep_cutedsl"])
def test_fp8_experts_refuse_a_backend_their_oracle_does_not_map(make_checkpoint, moe_backend):
    # map_fp8_backend (oracle/fp8.py), raised while building (the whole-model suite saw it on Qwen3-MoE and
    # DeepSeek-V3 for every value but the megakernel ones)
    rep = inspect_with(make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 256}), "h100", tp=2, moe_backend=moe_backend)
    assert {moe.errors for moe in rep.moes} == {(
        f"moe_backend='{moe_backend}' is not supported for FP8 MoE. Expected one of ['triton', 'deep_gemm', 'cutlass', "
        "'flashinfer_trtllm', 'flashinfer_cutlass', 'marlin', 'humming', 'aiter', 'hpc'].",)}
    assert not rep.tp_sizes_ok and not rep.ok


@pytest.mark.parametrize("vllm, listed", [
    ("0.26", "['triton', 'flashinfer_trtllm', 'flashinfer_cutlass', 'aiter']"),
    ("0.34", "['triton', 'batched_triton', 'flashinfer_trtllm', 'flashinfer_cutlass', 'aiter']"),
])
def test_unquantized_experts_refuse_a_backend_their_oracle_does_not_map(make_checkpoint, vllm, listed):
    # map_unquantized_backend (oracle/unquantized.py), raised by UnquantizedFusedMoEMethod.__init__ at every TP
    rep = inspect_with(make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 256, "quant": None}), "h100", tp=2,
                       vllm=vllm, moe_backend="deep_gemm")
    assert {moe.errors for moe in rep.moes} == {(
        f"moe_backend='deep_gemm' is not supported for unquantized MoE. Expected one of {listed}.",)}
    assert not rep.tp_sizes_ok


@pytest.mark.parametrize("vllm, listed", [
    ("0.29", "['DeepSeekV4MTPModel', 'DeepseekV4ForCausalLM']"),
    ("0.34", "['DeepSeekV4MTPModel', 'DeepseekV41ForCausalLM', 'DeepseekV4ForCausalLM']"),
])
def test_flashinfer_moe_ep_is_refused_for_a_model_without_its_path(make_checkpoint, vllm, listed):
    # config/kernel.py validate_flashinfer_moe_ep_model, while configuring (every TP)
    rep = inspect_with(make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 256}), "h100", tp=2, vllm=vllm,
                       moe_backend="flashinfer_moe_ep_mega_deep_gemm")
    assert ("moe_backend='flashinfer_moe_ep_mega_deep_gemm' is only supported for DeepSeek-V4 models "
            f"({listed}), but the model is ['Qwen3MoeForCausalLM']." in rep.errors) and not rep.tp_sizes_ok


@pytest.mark.parametrize("vllm, value, accepted", [
    ("0.26", "batched_triton", False), ("0.27", "batched_triton", True),
    ("0.31", "flashinfer_moe_ep_mega_cutedsl", True), ("0.32", "flashinfer_moe_ep_mega_cutedsl", False),
    ("0.34", "Deep-GEMM", True),  # KernelConfig lowercases and maps '-' to '_'
    ("0.34", "bogus", False),
])
def test_the_release_decides_which_values_moe_backend_takes(make_checkpoint, vllm, value, accepted):
    from fp8check.api import inspect as api_inspect
    from fp8check.core.errors import InputError

    folder = make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 256})
    if accepted:
        assert api_inspect(folder, platform="h100", vllm=vllm, moe_backend=value).moe_backend == \
            value.lower().replace("-", "_")
    else:
        with pytest.raises(InputError, match=f"vLLM {vllm} takes no MoE backend"):
            api_inspect(folder, platform="h100", vllm=vllm, moe_backend=value)


def test_moe_backend_from_the_flag_or_the_kernel_config(make_checkpoint):
    folder = make_checkpoint(**{**QWEN3_MOE, "moe_intermediate": 256})
    result = CliRunner().invoke(app, ["inspect", folder, "-p", "h100", "--tp", "2", "--vllm", "0.34", "-f", "json",
                                      "--kernel-config", '{"moe_backend": "deep_gemm"}'])
    doc = json.loads(result.stdout)
    assert doc["moe_backend"] == "deep_gemm" and doc["moe"][0]["backend"] == "DEEPGEMM"
    # an explicit --moe-backend overrides the kernel config's, as vLLM's EngineArgs does
    result = CliRunner().invoke(app, ["inspect", folder, "-p", "h100", "--tp", "2", "--vllm", "0.34", "-f", "json",
                                      "--kernel-config", '{"moe_backend": "deep_gemm"}', "--moe-backend", "marlin"])
    assert json.loads(result.stdout)["moe"][0]["backend"] == "MARLIN"
    bad = CliRunner().invoke(app, ["inspect", folder, "-p", "h100", "--moe-backend", "bogus"])
    assert bad.exit_code == 2 and "takes no MoE backend 'bogus'" in bad.output
