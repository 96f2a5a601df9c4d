"""Tensor parallelism as vLLM's linear layers split it, and validate_fp8_block_shape with both exemptions."""

from __future__ import annotations

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.model.modules import LinearModule
from fp8check.core.model.tp import linear_block_shape_error, tp_layout
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import LATEST

BLOCK = (128, 128)


def module(layer_type, k, widths, heads=None):
    return LinearModule(name="m", layer_type=layer_type, shards=(), input_size=k, output_sizes=tuple(widths), heads=heads)


# Qwen3-32B: hidden 5120, intermediate 25600, 64 heads / 8 KV heads, head_dim 128 (shared/vllm-routing.md §8).
QKV = module("QKVParallelLinear", 5120, (8192, 1024, 1024), heads=(64, 8, 128))
GATE_UP = module("MergedColumnParallelLinear", 5120, (25600, 25600))
DOWN = module("RowParallelLinear", 25600, (5120,))


@pytest.mark.parametrize("tp", [1, 2, 4, 8])
def test_qwen3_32b_block_shapes_pass_up_to_tp8(tp):
    for m in (QKV, GATE_UP, DOWN):
        layout = tp_layout(m, tp)
        assert layout.error is None
        assert linear_block_shape_error(layout, BLOCK, allow_mismatch_escape=False) is None


def test_qwen3_32b_tp16_merged_partition_message():
    layout = tp_layout(GATE_UP, 16)
    assert layout.output_partition_sizes == (1600, 1600)
    assert linear_block_shape_error(layout, BLOCK, False) == (
        "Weight output_partition_size = 1600 is not divisible by weight quantization block_n = 128.")


def test_row_parallel_block_k_message():
    layout = tp_layout(DOWN, 16)
    assert layout.input_size_per_partition == 1600
    assert linear_block_shape_error(layout, BLOCK, False) == (
        "Weight input_size_per_partition = 1600 is not divisible by weight quantization block_k = 128.")


def test_sub_block_shard_of_vllm_52997():
    # Qwen3.6-35B-A3B-FP8 at TP8 on H100: a 512-wide row-parallel input split 8 ways.
    layout = tp_layout(module("RowParallelLinear", 512, (2048,)), 8)
    assert linear_block_shape_error(layout, BLOCK, False) == (
        "Weight input_size_per_partition = 64 is not divisible by weight quantization block_k = 128.")


def test_merged_not_split_exempts_the_last_partition():
    ragged_v = module("QKVParallelLinear", 256, (256, 128, 64), heads=(4, 2, 64))  # v_head_dim 32: v rows 64
    assert linear_block_shape_error(tp_layout(ragged_v, 1), BLOCK, False) is None
    ragged_k = module("QKVParallelLinear", 256, (256, 64, 64), heads=(4, 1, 64))
    assert "output_partition_size = 64" in linear_block_shape_error(tp_layout(ragged_k, 1), BLOCK, False)


def test_native_fp8_merged_escape_skips_everything_but_compressed_tensors_has_none():
    gate_up = module("MergedColumnParallelLinear", 320, (320, 320))
    layout = tp_layout(gate_up, 2)  # partitions [160, 160], and K = 320 is ragged too
    assert linear_block_shape_error(layout, BLOCK, allow_mismatch_escape=True) is None
    assert linear_block_shape_error(layout, BLOCK, allow_mismatch_escape=False) == (
        "Weight output_partition_size = 160 is not divisible by weight quantization block_n = 128.")


def test_kv_heads_are_replicated_when_tp_exceeds_them():
    layout = tp_layout(QKV, 16)
    assert layout.output_partition_sizes == (512, 128, 128)  # 4 query heads, 1 replicated KV head per rank
    odd = module("QKVParallelLinear", 768, (768, 384, 384), heads=(6, 3, 128))
    assert tp_layout(odd, 2).error == "AssertionError: 3 is not divisible by 2"
    assert tp_layout(odd, 6).error is None
    assert tp_layout(module("MergedColumnParallelLinear", 96, (96, 96)), 5).error == "AssertionError: 96 is not divisible by 5"


def test_tp_sweep_and_head_message(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-block", heads=4, kv_heads=2, head_dim=128)
    report = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), LATEST, tp=3))
    assert "Total number of attention heads (4) must be divisible by tensor parallel size (3)." in report.errors
    assert report.tp_sizes_ok == (1, 2, 4)
    small_heads = make_checkpoint(quant="ct-fp8-block")  # head_dim 64: a 64-row KV shard at TP 2
    report = inspect_checkpoint(open_local(small_heads), InspectOptions(parse_platform("h100"), LATEST, tp=2))
    qkv = next(layer for layer in report.layers if layer.name.endswith("0.self_attn.qkv_proj"))
    assert qkv.errors == ("Weight output_partition_size = 64 is not divisible by weight quantization block_n = 128.",)
    assert report.tp_sizes_ok == (1,)


def test_lm_head_split_divides_the_padded_vocabulary(make_checkpoint):
    """VocabParallelEmbedding: vocab 1000 pads to 1024, which 3 ranks cannot split (divide() asserts)."""
    from fp8check.core.checkpoint.local import open_local
    from fp8check.core.model.modules import build_layout
    from fp8check.core.model.tp import tp_layout

    ckpt = open_local(make_checkpoint(quant="ct-fp8-block", vocab=1000))
    head = next(m for m in build_layout(ckpt.tensors, ckpt.config).linears if m.name == "lm_head")
    assert tp_layout(head, 2).error is None and tp_layout(head, 8).error is None
    assert tp_layout(head, 3).error == ("AssertionError: 1024 is not divisible by 3 (vocabulary 1000 padded to 1024, "
                                        "split over 3 ranks)")
