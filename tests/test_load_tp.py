"""load --tp N: real gloo ranks on the CPU, each reading only its slice, joined as the model joins them, against
the unsharded fp32 reference; TP refusals with vLLM's messages before any rank starts."""

from __future__ import annotations

import json
import time

import pytest
from typer.testing import CliRunner

torch = pytest.importorskip("torch")
psutil = pytest.importorskip("psutil")

from test_load import by_name, load, patch  # noqa: E402

from fp8check.cli.app import app  # noqa: E402
from fp8check.kernels.numerics import gemm as numerics  # noqa: E402
from fp8check.synth import TP2_BLOCK_SHAPE  # noqa: E402

runner = CliRunner()
TP_SHAPE = {**TP2_BLOCK_SHAPE, "data": "random"}


def rank_processes():
    """Child processes left behind."""
    return psutil.Process().children(recursive=True)


def load_json(folder, *args):
    result = runner.invoke(app, ["load", folder, "-d", "cpu", "--format", "json", *args])
    return result, json.loads(result.stdout) if result.stdout.strip() else None


def layer(doc, name):
    return next(entry for entry in doc["layers"] if entry["name"] == name)


@pytest.mark.parametrize("quant, platform", [("ct-fp8-block", "xpu"), ("fp8-block", "h100"), ("ct-fp8-dynamic", "h100"),
                                             ("ct-fp8", "h100"), ("ct-w8a16-fp8", "xpu")])
def test_two_ranks_agree_with_the_unsharded_reference(make_checkpoint, quant, platform):
    folder = make_checkpoint(quant=quant, **TP_SHAPE)
    result, doc = load_json(folder, "-p", platform, "--tp", "2")
    assert result.exit_code == 0, result.output
    for entry in doc["layers"]:
        run = entry["load"]
        assert run["status"] in ("ok", "warn") and run["rel_error"] <= run["bound"], (entry["name"], run)
        assert [r["rank"] for r in run["ranks"]] == [0, 1]
        assert run["bytes_read"] == sum(r["bytes_read"] for r in run["ranks"])
    # Each rank reads only its slice: half of a split weight (scales too), the whole of nothing.
    single = {e["name"]: e["load"]["bytes_read"] for e in load_json(folder, "-p", platform)[1]["layers"]}
    for name in ("model.layers.0.mlp.gate_up_proj", "model.layers.0.mlp.down_proj", "model.layers.0.self_attn.o_proj"):
        ranks = layer(doc, name)["load"]["ranks"]
        assert ranks[0]["bytes_read"] == ranks[1]["bytes_read"]
        assert abs(ranks[0]["bytes_read"] - single[name] / 2) <= 0.01 * single[name], name


def test_kv_heads_replicated_when_tp_exceeds_them(make_checkpoint):
    """4 ranks, 2 KV heads: each KV head is read by two ranks (tp_rank // num_kv_head_replicas)."""
    folder = make_checkpoint(quant="ct-fp8-block", **TP_SHAPE)
    result, doc = load_json(folder, "-p", "xpu", "--tp", "4", "--layers", r"layers\.0\.self_attn")
    assert result.exit_code == 0, result.output
    qkv = layer(doc, "model.layers.0.self_attn.qkv_proj")["load"]
    assert qkv["status"] == "ok" and len(qkv["ranks"]) == 4
    # Every rank reads one q head (128 rows) and one k and one v head (128 rows each) of 512 inputs, plus scales.
    per_rank = {r["bytes_read"] for r in qkv["ranks"]}
    assert len(per_rank) == 1 and 3 * 128 * 512 < per_rank.pop() < 3 * 128 * 512 * 1.01
    assert sum(r["bytes_read"] for r in qkv["ranks"]) > layer(load_json(folder, "-p", "xpu")[1],
                                                              "model.layers.0.self_attn.qkv_proj")["load"]["bytes_read"]


def test_a_split_vllm_refuses_is_not_run_with_its_message(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-block", hidden=512, intermediate=128, heads=4, kv_heads=2, head_dim=128,
                             data="random")
    result, doc = load_json(folder, "-p", "xpu", "--tp", "2")
    assert result.exit_code == 1
    gate_up = layer(doc, "model.layers.0.mlp.gate_up_proj")["load"]
    assert gate_up["status"] == "not run" and gate_up["ranks"] == []
    assert ("Weight output_partition_size = 64 is not divisible by weight quantization block_n = 128."
            in gate_up["errors"][0])
    down = layer(doc, "model.layers.0.mlp.down_proj")["load"]
    assert "Weight input_size_per_partition = 64 is not divisible by weight quantization block_k = 128." in down["errors"][0]
    assert layer(doc, "model.layers.0.self_attn.o_proj")["load"]["status"] == "ok"  # the rest still run


def test_heads_that_do_not_divide_refuse_before_any_rank_starts(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-block", **TP_SHAPE)
    start = time.perf_counter()
    result, doc = load_json(folder, "-p", "xpu", "--tp", "3")
    assert result.exit_code == 1 and time.perf_counter() - start < 5
    message = "Total number of attention heads (4) must be divisible by tensor parallel size (3)."
    assert all(entry["load"]["status"] == "not run" and message in entry["load"]["errors"][0] for entry in doc["layers"])
    assert not rank_processes()


def test_a_nan_in_one_ranks_slice_is_named_with_its_rank(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-dynamic", **TP_SHAPE)
    # The last row of up_proj belongs to rank 1's half of the merged gate_up_proj.
    patch(folder, "model.layers.1.mlp.up_proj.weight", lambda old: old[:-1] + b"\xff")
    result, doc = load_json(folder, "-p", "h100", "--tp", "2")
    assert result.exit_code == 1
    gate_up = layer(doc, "model.layers.1.mlp.gate_up_proj")["load"]
    assert gate_up["status"] == "FAIL"
    assert gate_up["errors"] == ["rank 1: model.layers.1.mlp.up_proj.weight: 1 of 262144 FP8 bytes encode NaN "
                                 "(torch.float8_e4m3fn); re-export this tensor"]
    assert layer(doc, "model.layers.0.mlp.gate_up_proj")["load"]["status"] == "ok"
    assert not rank_processes()


def test_sharded_errors_match_single_device_figures(make_checkpoint):
    """Column-parallel outputs are gathered exactly; row-parallel partial sums round once more (bf16 partials)."""
    folder = make_checkpoint(quant="ct-fp8-block", **TP_SHAPE)
    tp2 = by_name(load(folder, "xpu", tp=2))
    tp1 = by_name(load(folder, "xpu"))
    assert tp2["model.layers.0.mlp.gate_up_proj"].rel_error == pytest.approx(tp1["model.layers.0.mlp.gate_up_proj"].rel_error)
    assert tp2["model.layers.0.mlp.down_proj"].rel_error < numerics.bound(numerics.BLOCK, torch.bfloat16)


def test_under_torchrun_each_process_is_one_rank_and_rank_0_reports(make_checkpoint):
    import subprocess
    import sys

    folder = make_checkpoint(quant="ct-fp8-block", **TP_SHAPE)
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
                           "-m", "fp8check", "load", folder, "-p", "xpu", "--tp", "2", "-d", "cpu", "--format",
                           "json", "--layers", r"layers\.0\.mlp"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(proc.stdout)  # exactly one document: rank 1 printed nothing
    runs = [entry["load"] for entry in doc["layers"] if entry["load"]]
    assert len(runs) == 2 and all(len(run["ranks"]) == 2 and run["status"] == "ok" for run in runs)


@pytest.mark.parametrize("quant", ["ct-fp8-dynamic", "ct-fp8-block"])
def test_a_layer_fused_on_disk_gives_each_rank_its_part_of_every_shard(make_checkpoint, quant):
    """Phi-3 stores qkv_proj and gate_up_proj fused: a rank reads three (two) row ranges of one tensor."""
    folder = make_checkpoint(quant=quant, architecture="Phi3ForCausalLM", model_type="phi3", fused_on_disk=True,
                             **TP_SHAPE)
    result, doc = load_json(folder, "-p", "h100", "--tp", "2", "--layers", r"layers\.0\.")
    assert result.exit_code == 0, result.output
    for name in ("model.layers.0.self_attn.qkv_proj", "model.layers.0.mlp.gate_up_proj"):
        run = layer(doc, name)["load"]
        assert run["status"] == "ok" and run["rel_error"] <= run["bound"], (name, run)
