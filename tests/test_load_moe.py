"""load runs FusedMoE experts: w13 -> SiLU-and-mul -> w2 through the numerics of the experts class inspect
selected, against fp32 of the same operands; bad values named per expert; --tp 2 and --tp 2 --ep on real ranks.

Checkpoints are the tiny Qwen3-MoE / Mixtral / DeepSeek-V3 shapes of test_moe.py, with real (random) data."""

from __future__ import annotations

import json
import struct

import pytest
from typer.testing import CliRunner

torch = pytest.importorskip("torch")

from test_load import patch  # noqa: E402
from test_moe import DEEPSEEK_V3, MIXTRAL  # noqa: E402

from fp8check.cli.app import app  # noqa: E402
from fp8check.core.checkpoint.local import open_local  # noqa: E402
from fp8check.core.load.driver import load_checkpoint
from fp8check.core.load.experts import expert_owner  # noqa: E402
from fp8check.core.load.gemm import requantize_moe  # noqa: E402
from fp8check.core.records import InspectOptions, LoadOptions
from fp8check.core.targets.platforms import apply_assumptions, parse_platform  # noqa: E402
from fp8check.core.targets.profiles import select_profile  # noqa: E402
from fp8check.kernels import moe as moe_kernels  # noqa: E402
from fp8check.kernels.numerics import gemm as numerics  # noqa: E402

runner = CliRunner()
# Qwen3-MoE, small: 4 experts of 256 (2 blocks of 128), attention that splits at TP 2 with 128-blocks.
QWEN3_MOE = dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", hidden=512, heads=4, kv_heads=2,
                 head_dim=128, experts=4, moe_intermediate=256, layers=2, data="random")
MIXTRAL_SMALL = {**MIXTRAL, "experts": 4, "moe_intermediate": 256, "data": "random"}
DEEPSEEK_SMALL = {**DEEPSEEK_V3, "experts": 8, "data": "random"}
EXPERTS = r"\.experts$"  # --layers: the FusedMoE layers only (not shared experts, which are linear)


def load(folder, platform="h100", tp=1, ep=False, vllm="latest", layers=None, all_experts=False, assume=()):
    target = apply_assumptions(parse_platform(platform), list(assume))
    options = LoadOptions(InspectOptions(platform=target, profile=select_profile(vllm), tp=tp, ep=ep),
                          torch.device("cpu"), layers=layers, rank_timeout_s=120, all_experts=all_experts)
    return load_checkpoint(open_local(folder), lambda names: folder, options)


def cli_json(folder, *args):
    result = runner.invoke(app, ["load", folder, "-d", "cpu", "-f", "json", *args])
    return result, json.loads(result.stdout)


# (family, quant, platform, the numerics its experts class runs); which class that is, is test_moe's business.
CASES = [
    ("qwen3-moe", QWEN3_MOE, "fp8-block", "h100", numerics.BLOCK),        # TritonExperts, 1x128 groups
    ("qwen3-moe", QWEN3_MOE, "fp8-block", "a100", numerics.WEIGHT_ONLY),  # MarlinExperts (W8A16)
    ("qwen3-moe", QWEN3_MOE, "fp8-block", "xpu", numerics.WEIGHT_ONLY),   # XPUExpertsBlockFp8: bf16 inputs
    ("qwen3-moe", QWEN3_MOE, "fp8-dynamic", "h100", numerics.SCALED_MM),  # Triton, dynamic per-tensor
    ("qwen3-moe", QWEN3_MOE, "ct-fp8-block", "mi300x", numerics.BLOCK),
    ("mixtral", MIXTRAL_SMALL, "ct-fp8-dynamic", "h100", numerics.SCALED_MM),  # per channel / per token
    ("mixtral", MIXTRAL_SMALL, "ct-fp8", "h100", numerics.SCALED_MM),     # static per tensor, w1/w3 requantized
    ("deepseek-v3", DEEPSEEK_SMALL, "fp8-block", "h100", numerics.BLOCK),
]


@pytest.mark.parametrize("family, spec, quant, platform, kind", CASES, ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in CASES])
def test_experts_run_their_backends_numerics_within_the_bound(make_checkpoint, family, spec, quant, platform, kind):
    report = load(make_checkpoint(**{**spec, "quant": quant}), platform, layers=EXPERTS)
    assert report.ok, [run.errors for run in report.moe_runs]
    assert report.runs == () and len(report.moe_runs) == len(report.inspect.moes) == 2
    for run, routed in zip(report.moe_runs, report.inspect.moes):
        assert run.name == routed.name and run.kernel == routed.kernel
        assert run.numerics == numerics.moe_numerics(routed.kernel, routed.block) == kind
        assert run.experts_run == (0, routed.num_experts - 1) and run.num_experts == routed.num_experts
        assert run.worst_expert in run.experts_run and run.bytes_read > 0
        for expert in run.experts:
            # Each GEMM is one fp32-accumulated product rounded once (weight-only: the weight rounded too):
            # measured ~0.43 u (W8A8) and ~0.6 u (weight-only), against a bound of 2 u / 4 u.
            assert expert.rel_error == max(expert.w13_error, expert.w2_error) <= run.bound
            assert expert.rel_error < 0.4 * run.bound
            # The FP8 cost a user sees: activations and the intermediate quantized (W8A8), or weights only.
            assert (0.02 < expert.quant_error < 0.08) if kind != numerics.WEIGHT_ONLY else expert.quant_error < 0.01
        assert run.rel_error == max(e.rel_error for e in run.experts)


def test_per_tensor_w1_w3_scales_are_requantized_to_their_max(make_checkpoint):
    """process_fp8_weight_tensor_strategy_moe: the synthetic w1 and w3 scales differ, so one part of each expert's
    w13 is requantized; what that moved the w13 output by is reported and warned about (as for linear layers)."""
    run = load(make_checkpoint(**{**MIXTRAL_SMALL, "quant": "ct-fp8"}), layers=EXPERTS).moe_runs[0]
    assert run.status == "warn" and run.processing_error > numerics.bound(numerics.SCALED_MM, torch.bfloat16)
    assert all("process_fp8_weight_tensor_strategy_moe" in w for w in run.warnings)
    assert any("requantized it to the expert's max w13 scale" in n for n in run.notes)


@pytest.mark.parametrize("code, want", [
    # scale = max = 2^-20: the float16 product c * 2^-20 lands on float16's subnormal grid of 2^-24, so a value
    # c is kept only when it is a multiple of 2^-4 (an fp32 dequantization would keep every code: no scale changed).
    (0x30, 0x30),   # 0.5 * 2^-20 = 8 * 2^-24: exact
    (0x31, 0x31),   # 0.5625 * 2^-20 = 9 * 2^-24: exact
    (0x19, 0x18),   # 0.0703125 * 2^-20 = 1.125 * 2^-24 -> 1 * 2^-24: 0.0625
    (0x1C, 0x20),   # 0.09375 * 2^-20 = 1.5 * 2^-24 -> 2 * 2^-24 (ties to even): 0.125
    (0x1D, 0x20),   # 0.1015625 * 2^-20 = 1.625 * 2^-24 -> 2 * 2^-24: 0.125
    (0x99, 0x98),   # the sign is kept: -0.0703125 -> -0.0625
    (0x01, 0x00),   # 2^-9 * 2^-20 = 2^-29, below half of 2^-24: flushed to 0
])
def test_requantization_dequantizes_in_float16_as_vllm_does(code, want):
    """per_tensor_dequantize casts the codes to float16 (vLLM 0.33.0 w8a8_utils.py): a product below float16's
    normal range loses bits, even when w1 and w3 already share the max scale (vLLM requantizes both anyway)."""
    codes = torch.tensor([[code]], dtype=torch.uint8).view(torch.float8_e4m3fn)
    scale = torch.tensor(2.0 ** -20)
    assert int(requantize_moe(codes, scale, scale).view(torch.uint8)) == want


def test_every_experts_class_has_numerics():
    names = {cls.name for classes in moe_kernels.BACKENDS.values() for cls in classes}
    assert names <= set(numerics.MOE_EXPERTS_NUMERICS)


# ------------------------------------------------------------------------------------- bad values per expert

NAN_E4M3 = lambda old: old[:7] + b"\x7f" + old[8:]  # noqa: E731
ZERO_F32 = lambda old: struct.pack("<f", 0.0) + old[4:]  # noqa: E731


@pytest.mark.parametrize("tensor, change, message, default_catches", [
    # The last expert runs by default: caught with the tensor named.
    ("model.layers.1.mlp.experts.3.down_proj.weight", NAN_E4M3,
     "model.layers.1.mlp.experts.3.down_proj.weight: 1 of 131072 FP8 bytes encode NaN", True),
    # A middle expert is read only with --all-experts.
    ("model.layers.0.mlp.experts.1.gate_proj.weight", NAN_E4M3,
     "model.layers.0.mlp.experts.1.gate_proj.weight: 1 of 131072 FP8 bytes encode NaN", False),
    ("model.layers.0.mlp.experts.2.up_proj.weight_scale_inv", ZERO_F32,
     "model.layers.0.mlp.experts.2.up_proj.weight_scale_inv: 1 of 8 scales are zero or negative", False),
])
def test_a_bad_value_in_one_expert_is_named(make_checkpoint, tensor, change, message, default_catches):
    folder = make_checkpoint(**{**QWEN3_MOE, "quant": "fp8-block"})
    patch(folder, tensor, change)
    result, doc = cli_json(folder, "-p", "h100", "--layers", EXPERTS, "--all-experts")
    assert result.exit_code == 1
    layer = tensor.split(".experts.")[0] + ".experts"
    entry = next(e["load"] for e in doc["moe"] if e["name"] == layer)
    assert entry["status"] == "FAIL" and any(e.startswith(message) for e in entry["errors"])
    expert = int(tensor.split(".experts.")[1].split(".")[0])
    assert [e["status"] for e in entry["experts"] if e["expert"] == expert] == ["FAIL"]
    assert entry["experts_run"] == [0, 1, 2, 3]
    default, doc = cli_json(folder, "-p", "h100", "--layers", EXPERTS)
    assert (default.exit_code == 1) == default_catches
    assert next(e["load"] for e in doc["moe"] if e["name"] == layer)["experts_run"] == [0, 3]


# ------------------------------------------------------------------------------------------------ --tp, --ep

@pytest.mark.parametrize("ep", [False, True])
def test_two_ranks_agree_with_the_unsharded_expert(make_checkpoint, ep):
    """TP: each rank holds half of every expert's intermediate (w13 rows, w2 columns) and the partial outputs are
    all-reduced; EP: each expert lives whole on the rank determine_expert_map gives it. MI300X: TritonExperts with
    and without EP (an H100 moves to FlashInferExperts under EP, whose intermediate is not quantized as Triton's)."""
    folder = make_checkpoint(**{**QWEN3_MOE, "quant": "fp8-block"})
    single = {run.name: run for run in load(folder, "mi300x", layers=EXPERTS).moe_runs}
    report = load(folder, "mi300x", tp=2, ep=ep, layers=EXPERTS)
    assert {run.kernel for run in report.moe_runs} == {run.kernel for run in single.values()} == {"TritonExperts"}
    assert report.ok, [run.errors for run in report.moe_runs]
    for run in report.moe_runs:
        alone = single[run.name]
        assert [r.rank for r in run.ranks] == [0, 1] and run.bytes_read == sum(r.bytes_read for r in run.ranks)
        for expert, one in zip(run.experts, alone.experts):
            assert expert.rel_error <= run.bound
            assert expert.w13_error == pytest.approx(one.w13_error)  # column placement is exact
            if ep:  # the owner runs the whole expert: the same numbers as one device
                assert expert.w2_error == pytest.approx(one.w2_error)
            else:   # bf16 partial sums, summed in fp32 and rounded once more (as for row-parallel layers)
                assert one.w2_error < expert.w2_error < 0.5 * run.bound
        if ep:  # expert 0 on rank 0, expert 3 on rank 1: each rank reads one expert
            assert [e.rank for e in run.experts] == [0, 1]
            assert run.ranks[0].bytes_read == run.ranks[1].bytes_read == alone.bytes_read // 2
        else:   # each rank reads half of both experts (scales: half of their block rows / columns)
            assert run.ranks[0].bytes_read == run.ranks[1].bytes_read == alone.bytes_read // 2


@pytest.mark.parametrize("experts, ep, owners", [(4, 2, [0, 0, 1, 1]), (5, 2, [0, 0, 0, 1, 1]), (3, 4, [0, 1, 2])])
def test_expert_owner_follows_determine_expert_map(experts, ep, owners):
    assert [expert_owner(e, experts, ep) for e in range(experts)] == owners


def test_tp_refusal_is_not_run_and_033s_refined_block_runs(make_checkpoint):
    """384-wide experts at TP 2: 192 per rank. 0.28 refuses (block_n 128); 0.33 refines the block to [64, 64],
    upsamples the checkpoint's scales and TritonExperts runs with 1x64 activation groups."""
    folder = make_checkpoint(**{**QWEN3_MOE, "quant": "fp8-block", "moe_intermediate": 384})
    refused, doc = cli_json(folder, "-p", "h100", "--tp", "2", "--vllm", "0.28", "--layers", EXPERTS)
    assert refused.exit_code == 1
    entry = doc["moe"][0]["load"]
    assert entry["status"] == "not run" and entry["bytes_read"] == 0 and entry["errors"] == [
        "not run: vLLM would not build this layer: The output_size of gate's and up's weight = 192 is not divisible "
        "by weight quantization block_n = 128."]
    report = load(folder, tp=2, vllm="0.33", layers=EXPERTS)
    assert report.ok, [run.errors for run in report.moe_runs]
    run = report.moe_runs[0]
    assert report.inspect.moes[0].block == (64, 64) and run.kernel == "TritonExperts"
    assert any("refined [64, 64] grid" in n for n in run.notes)
    assert all(e.rel_error <= run.bound for e in run.experts)


def test_cli_table_and_junit_show_one_row_per_moe_layer(make_checkpoint, tmp_path):
    folder = make_checkpoint(**{**MIXTRAL_SMALL, "quant": "ct-fp8-dynamic"})
    result = runner.invoke(app, ["load", folder, "-p", "h100", "-d", "cpu"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "model.layers.{0..1}.block_sparse_moe.experts" in text and "2/4 ×2" in text
    assert "FusedMoE layers, 4 experts) ran and agree" in text
    junit = runner.invoke(app, ["load", folder, "-p", "h100", "-d", "cpu", "-f", "junit"]).stdout
    assert "model.layers.1.block_sparse_moe.experts" in junit and "TritonOrCutlassExperts -&gt; emulated" in junit


@pytest.mark.parametrize("width, block, refine, shard_rows", [
    (256, (128, 128), None, None), (384, (64, 64), (2, 2), None),
    (384, (128, 128), None, 256),  # moe-block-pad: rank 0 holds rows 0..255, rank 1 rows 256..383 (and padding)
])
def test_each_rank_dequantizes_to_its_rows_of_the_whole_expert(make_checkpoint, width, block, refine, shard_rows):
    """read_expert: a rank's w1/w3 rows and w2 columns, with their scales narrowed (and, under 0.33's refined grid,
    upsampled first; under a padded shard, by whole blocks), dequantize to exactly that part of the whole expert
    dequantized with the checkpoint's blocks."""
    from fp8check.core.load.experts import _roles, read_expert
    from fp8check.core.load.gemm import Recipe
    from fp8check.core.load.weights import CheckpointFiles
    from fp8check.core.model.modules import build_layout
    from fp8check.core.routing.moe import expert_shapes

    folder = make_checkpoint(**{**QWEN3_MOE, "quant": "fp8-block", "moe_intermediate": width})
    ckpt = open_local(folder)
    shards = _roles(expert_shapes(build_layout(ckpt.tensors, ckpt.config).moes[0]), 3)
    recipe = Recipe(numerics.BLOCK, "block", block, refine, None, False, 2, 1, shard_rows=shard_rows)
    files = CheckpointFiles(folder)
    whole = [numerics.dequantize(p.weight, p.scale, (128, 128)) for p in read_expert(shards, recipe._replace(
        refine=None, block=(128, 128)), files, 1, 0)]
    for rank in (0, 1):
        parts = read_expert(shards, recipe, files, 2, rank)
        gate, up, down = (numerics.dequantize(p.weight, p.scale, block) for p in parts)
        per = shard_rows or width // 2
        rows = slice(per * rank, min(per * (rank + 1), width))
        assert torch.equal(gate, whole[0][rows]) and torch.equal(up, whole[1][rows])
        assert torch.equal(down, whole[2][:, rows])


def test_a_padded_shard_runs_on_the_ranks_vllm_gives_its_blocks(make_checkpoint):
    """--moe-backend deep_gemm on 384-wide experts at TP 2 (0.34): DeepGEMM refuses the refined [64, 64] block, so
    vLLM pads each rank to 256 rows (pad_tp_shard_to_weight_blocks): rank 0 loads two blocks, rank 1 one."""
    folder = make_checkpoint(**{**QWEN3_MOE, "quant": "fp8-block", "moe_intermediate": 384})
    target = parse_platform("h100")
    routing = InspectOptions(platform=target, profile=select_profile("0.34"), tp=2, moe_backend="deep_gemm")
    options = LoadOptions(routing, torch.device("cpu"), layers=EXPERTS, rank_timeout_s=120)
    report = load_checkpoint(open_local(folder), lambda names: folder, options)
    assert report.ok, [run.errors for run in report.moe_runs]
    moe = report.inspect.moes[0]
    assert (moe.block, moe.intermediate_per_rank, moe.kernel) == ((128, 128), 256, "TritonOrDeepGemmExperts")
    run = report.moe_runs[0]
    assert run.ranks[0].bytes_read == 2 * run.ranks[1].bytes_read
    assert all(e.rel_error <= run.bound for e in run.experts)
