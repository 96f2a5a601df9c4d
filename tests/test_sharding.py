"""Each rank's reads, cut from real tensors, must rebuild the layer exactly as vLLM's weight loaders lay it out.

The expectation is independent of fp8check/core/model/sharding.py: every checkpoint tensor is dequantized whole with
its own scale (block scales expanded over the tensor's own block grid), shards concatenated in vLLM's order. A rank
passes when its reads, dequantized with only the scale slices it read, equal the rows (column-parallel) or
columns (row-parallel) of that full weight its plan claims, and the ranks together cover all of it.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import replace

import pytest
import torch
from safetensors import safe_open

from fp8check.core.checkpoint.local import open_local
from fp8check.core.checkpoint.safetensors_header import TensorInfo
from fp8check.core.model.modules import LinearModule, Shard, build_layout
from fp8check.core.model.sharding import ShardingError, TensorRead, rank_reads
from fp8check.core.model.tp import linear_block_shape_error, tp_layout
from fp8check.synth import Spec, quantize_fp8, write_checkpoint

BLOCK = (128, 128)
STRATEGIES = {"tensor": "ct-fp8", "channel": "ct-fp8-dynamic", "block": "ct-fp8-block", "native-block": "fp8-block"}
# Legal at tp 1, 2, 4 with 128x128 blocks. "ragged": hidden 576 = 4.5 blocks, so o_proj / down_proj have a half
# block of output rows and qkv / gate_up a half block of input columns; one KV head (replicated at tp 2 and 4).
GEOMETRIES = {
    "aligned": Spec(hidden=512, intermediate=1024, heads=4, kv_heads=2, head_dim=128, vocab=1000, layers=1),
    "ragged": Spec(hidden=576, intermediate=1024, heads=4, kv_heads=1, head_dim=128, vocab=1000, layers=1),
}
TORCH_DTYPES = {torch.float8_e4m3fn: "F8_E4M3", torch.bfloat16: "BF16", torch.float32: "F32"}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """(strategy, geometry) -> (modules, tensors), each checkpoint written once by the one factory."""
    cache = {}

    def get(strategy: str, geometry: str, **overrides):
        key = (strategy, geometry, tuple(sorted(overrides.items())))
        if key not in cache:
            folder = str(tmp_path_factory.mktemp("shard"))
            write_checkpoint(folder, replace(GEOMETRIES[geometry], quant=STRATEGIES[strategy], **overrides))
            ckpt = open_local(folder)
            with safe_open(os.path.join(folder, "model.safetensors"), framework="pt") as fh:
                tensors = {name: fh.get_tensor(name) for name in fh.keys()}
            cache[key] = (build_layout(ckpt.tensors, ckpt.config), ckpt, tensors, folder)
        return cache[key]

    return get


# ----------------------------------------------------------------------------------- the independent expectation

def scale_of(shard: Shard) -> TensorInfo | None:
    return next((shard.side[s] for s in ("weight_scale", "weight_scale_inv") if s in shard.side), None)


def dequant(weight: torch.Tensor, scale: torch.Tensor | None, block) -> torch.Tensor:
    w = weight.float()
    if scale is None:
        return w
    s = scale.float()
    if block and s.ndim == 2:
        s = s.repeat_interleave(block[0], 0).repeat_interleave(block[1], 1)[: w.shape[0], : w.shape[1]]
    elif s.ndim < 2:
        s = s.reshape(())
    return w * s


def full_weight(module, tensors, block) -> torch.Tensor:
    """The layer's weight as vLLM concatenates it unsharded, each shard dequantized whole."""
    parts = []
    for shard in module.shards:
        scale = scale_of(shard)
        parts.append(dequant(tensors[shard.weight.name], tensors[scale.name] if scale else None, block))
    return torch.cat(parts)


def cut(tensors, read: TensorRead) -> torch.Tensor:
    tensor = tensors[read.tensor.name]
    return tensor[read.slices] if read.slices else tensor


def rank_weight(plan, tensors, block) -> torch.Tensor:
    """The rank's dequantized weight from its reads only: block scales are concatenated into one parameter (as
    vLLM's BlockQuantScaleParameter holds them), per-tensor scales stay one per part."""
    weights = [cut(tensors, s.weight) for s in plan.shards]
    scales = [next((cut(tensors, r) for k, r in s.side.items() if k.startswith("weight_scale")), None)
              for s in plan.shards]
    if block and scales[0] is not None and scales[0].ndim == 2:
        local = dequant(torch.cat(weights), torch.cat(scales), block)
    else:
        local = torch.cat([dequant(w, s, block) for w, s in zip(weights, scales)])
    padding = sum(s.padding for s in plan.shards)
    return torch.cat([local, torch.zeros(padding, local.shape[1])])


def check_module(module, tensors, tp, block):
    layout = tp_layout(module, tp)
    assert layout.error is None and (block is None or linear_block_shape_error(layout, block, False) is None)
    full = full_weight(module, tensors, block)
    covered = torch.zeros(full.shape, dtype=torch.bool)
    for rank in range(tp):
        plan = rank_reads(module, layout, rank, block)
        assert plan.notes == ()
        local = rank_weight(plan, tensors, block)
        assert local.shape[0] == plan.output_width
        cols = slice(*plan.input_cols)
        if plan.combine == "all_reduce":
            assert plan.adds_bias == (rank == 0)
            assert torch.equal(local, full[:, cols]), f"{module.name} rank {rank}"
            covered[:, cols] = True
        else:
            replicated = module.layer_type == "ReplicatedLinear" or not module.tp_split
            assert plan.combine == ("none" if replicated else "all_gather")
            assert plan.input_cols == (0, full.shape[1])
            for shard in plan.shards:
                mine, theirs = slice(*shard.rank_cols), slice(*shard.layer_cols)
                assert torch.equal(local[mine], full[theirs]), f"{module.name} rank {rank} part {shard.part}"
                covered[theirs] = True
            real = sum(s.rank_cols[1] - s.rank_cols[0] for s in plan.shards)
            assert not local[real:].any()  # LM head vocabulary padding is zero-filled
        read_bytes = sum(cut(tensors, r).numel() * cut(tensors, r).element_size() for r in plan.reads)
        assert plan.bytes == read_bytes
    assert covered.all(), f"{module.name}: ranks do not cover the layer at tp {tp}"


def block_of(module, strategy):
    quantized = module.shards[0].weight.dtype == "F8_E4M3"
    return BLOCK if quantized and strategy.endswith("block") else None


# ------------------------------------------------------------------------------------------------------- tests

@pytest.mark.parametrize("tp", [1, 2, 4])
@pytest.mark.parametrize("geometry", list(GEOMETRIES))
@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_every_layer_type_reassembles_from_rank_slices(checkpoints, strategy, geometry, tp):
    layout, _, tensors, _ = checkpoints(strategy, geometry)
    types = {m.layer_type for m in layout.linears}
    assert types == {"QKVParallelLinear", "MergedColumnParallelLinear", "RowParallelLinear", "ParallelLMHead"}
    for module in layout.linears:
        check_module(module, tensors, tp, block_of(module, strategy))


@pytest.mark.parametrize("tp", [1, 2, 4])
@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_fused_on_disk_qkv_and_gate_up(checkpoints, strategy, tp):
    """Phi-3 stores qkv_proj / gate_up_proj fused: vLLM splits each part out first (for a block scale at
    ceil-div offsets), then takes the rank's slice of it."""
    layout, ckpt, tensors, _ = checkpoints(strategy, "ragged")
    block = BLOCK if strategy.endswith("block") else None
    infos, fused = dict(ckpt.tensors), dict(tensors)
    prefix = "model.layers.0"
    for name, parts in (("self_attn.qkv_proj", ("q", "k", "v")), ("mlp.gate_up_proj", ("gate", "up"))):
        module = next(m for m in layout.linears if m.name == f"{prefix}.{name}")
        weight = full_weight(module, tensors, block)
        scale_name = scale_of(module.shards[0]).name.rsplit(".", 1)[1]
        old = scale_of(module.shards[0]).shape
        shape = (math.ceil(weight.shape[0] / BLOCK[0]), math.ceil(weight.shape[1] / BLOCK[1])) if block else (
            (weight.shape[0], 1) if len(old) == 2 else old)
        q, scale = quantize_fp8(weight, shape, BLOCK)
        for key, value in ((f"{prefix}.{name}.weight", q), (f"{prefix}.{name}.{scale_name}", scale.reshape(shape))):
            fused[key] = value
            infos[key] = TensorInfo(key, TORCH_DTYPES[value.dtype], tuple(value.shape), 0, 0, "memory")
        for part in parts:
            for key in [k for k in infos if k.startswith(f"{prefix}.{name.split('.')[0]}.{part}_proj.")]:
                del infos[key]
    modules = {m.name: m for m in build_layout(infos, ckpt.config).linears}
    for name in ("self_attn.qkv_proj", "mlp.gate_up_proj"):
        module = modules[f"{prefix}.{name}"]
        assert len(module.shards) == 1 and len(module.output_sizes) > 1
        check_module(module, fused, tp, block)


def test_plain_column_and_replicated_layers(checkpoints):
    layout, _, tensors, _ = checkpoints("block", "aligned")
    qkv = next(m for m in layout.linears if m.layer_type == "QKVParallelLinear")
    q_only = qkv._replace(layer_type="ColumnParallelLinear", shards=qkv.shards[:1], output_sizes=qkv.output_sizes[:1],
                          heads=None)
    for tp in (1, 2, 4):
        check_module(q_only, tensors, tp, BLOCK)
    for replicated in (qkv._replace(layer_type="ReplicatedLinear"), qkv._replace(tp_split=False)):
        for rank in range(4):
            plan = rank_reads(replicated, tp_layout(replicated, 4), rank, BLOCK)
            assert plan.combine == "none" and {r.rows for r in plan.reads} == {None}
        check_module(replicated, tensors, 4, BLOCK)


@pytest.mark.parametrize("kv_heads, tp, sources", [(2, 4, [0, 0, 1, 1]), (1, 2, [0, 0]), (1, 4, [0, 0, 0, 0]),
                                                   (2, 2, [0, 1])])
def test_kv_heads_replicated_when_tp_exceeds_them(checkpoints, kv_heads, tp, sources):
    layout, _, _, _ = checkpoints("block", "aligned", kv_heads=kv_heads)
    qkv = next(m for m in layout.linears if m.layer_type == "QKVParallelLinear")
    plans = [rank_reads(qkv, tp_layout(qkv, tp), rank, BLOCK) for rank in range(tp)]
    for rank, (plan, source) in enumerate(zip(plans, sources)):
        q, k, v = plan.shards
        assert q.weight.rows == (rank * 512 // tp, (rank + 1) * 512 // tp)
        assert k.weight.rows == v.weight.rows == (source * 128, (source + 1) * 128)
        assert k.side["weight_scale"].rows == (source, source + 1)
    # each KV head is read by tp // kv_heads replicas (once when tp <= kv_heads)
    kv_bytes = sum(t.weight.bytes for p in plans for t in p.shards[1:])
    assert kv_bytes == max(1, tp // kv_heads) * sum(s.weight.end - s.weight.start for s in qkv.shards[1:])


def test_rank_reads_through_safetensors_get_slice(checkpoints):
    """The plan's index is what `safe_open(...).get_slice` takes, and the bytes it reports are the bytes read."""
    layout, _, tensors, folder = checkpoints("native-block", "ragged")
    with safe_open(os.path.join(folder, "model.safetensors"), framework="pt") as fh:
        for module in layout.linears:
            plan = rank_reads(module, tp_layout(module, 2), 1, block_of(module, "native-block"))
            read_bytes = 0
            for read in plan.reads:
                part = fh.get_slice(read.tensor.name)[read.slices] if read.slices else fh.get_tensor(read.tensor.name)
                assert torch.equal(part, cut(tensors, read))
                read_bytes += part.numel() * part.element_size()
            assert read_bytes == plan.bytes < sum(r.tensor.end - r.tensor.start for r in plan.reads)


def test_native_fp8_block_mismatch_escape(checkpoints):
    """allow_fp8_block_shape_mismatch skips validation for merged native-fp8 layers; vLLM then either narrows
    past the block scale parameter or applies scales of the wrong blocks. Both are reported, not hidden."""
    layout, _, tensors, _ = checkpoints("native-block", "aligned", intermediate=200)
    gate_up = next(m for m in layout.linears if m.layer_type == "MergedColumnParallelLinear")
    for tp in (1, 2):
        layout_tp = tp_layout(gate_up, tp)
        assert linear_block_shape_error(layout_tp, BLOCK, allow_mismatch_escape=True) is None
        plans = [rank_reads(gate_up, layout_tp, rank, BLOCK) for rank in range(tp)]
        assert any(p.notes for p in plans)
        full = full_weight(gate_up, tensors, BLOCK)
        for plan in plans:
            local = rank_weight(plan, tensors, BLOCK)
            for shard in plan.shards:
                # exactly the rows a note counts dequantize differently from the checkpoint
                differ = (local[slice(*shard.rank_cols)] != full[slice(*shard.layer_cols)]).any(dim=1).sum()
                flagged = sum(int(re.search(r"\((\d+) rows\)", note).group(1)) for note in shard.notes)
                assert int(differ) == flagged, (tp, plan.rank, shard.part, shard.notes)
    layout, _, _, _ = checkpoints("native-block", "aligned", intermediate=320)
    gate_up = next(m for m in layout.linears if m.layer_type == "MergedColumnParallelLinear")
    with pytest.raises(ShardingError, match=r"start \(3\) \+ length \(3\) exceeds dimension size \(5\)"):
        rank_reads(gate_up, tp_layout(gate_up, 1), 0, BLOCK)


def test_refusals(checkpoints):
    layout, _, _, _ = checkpoints("block", "aligned", ignore=())
    by_type = {m.layer_type: m for m in layout.linears}
    with pytest.raises(ShardingError, match="AssertionError: 4 is not divisible by 3"):
        rank_reads(by_type["QKVParallelLinear"], tp_layout(by_type["QKVParallelLinear"], 3), 0, BLOCK)
    lm_head = by_type["ParallelLMHead"]
    with pytest.raises(ShardingError, match="1024 is not divisible by 3"):  # the padded vocabulary
        rank_reads(lm_head, tp_layout(lm_head, 3), 0, None)
    with pytest.raises(ShardingError, match="VocabParallelEmbedding.weight_loader"):  # a block-quantized LM head
        rank_reads(lm_head, tp_layout(lm_head, 2), 0, BLOCK)
    with pytest.raises(ValueError, match="rank 2 is outside"):
        rank_reads(lm_head, tp_layout(lm_head, 2), 2, None)


def test_bias_follows_the_weight_rows_and_is_added_once_on_row_parallel(checkpoints):
    layout, _, _, _ = checkpoints("channel", "aligned")
    by_type = {m.layer_type: m for m in layout.linears}
    for kind, expected in (("MergedColumnParallelLinear", lambda w: w.rows), ("RowParallelLinear", lambda w: None)):
        module = by_type[kind]
        shards = tuple(s._replace(side={**s.side, "bias": TensorInfo(f"{s.name}.bias", "BF16", s.weight.shape[:1],
                                                                     0, 0, "memory")}) for s in module.shards)
        module = module._replace(shards=shards)
        for rank in range(2):
            plan = rank_reads(module, tp_layout(module, 2), rank, None)
            assert [s.side["bias"].rows for s in plan.shards] == [expected(s.weight) for s in plan.shards]
            assert [s.side["weight_scale"].rows for s in plan.shards] == (
                [s.weight.rows for s in plan.shards] if kind.startswith("Merged") else [None])


def info(name, shape, dtype="F8_E4M3"):
    return TensorInfo(name, dtype, shape, 0, 0, "memory")


def test_ragged_parts_take_vllms_ceil_division_offsets():
    """Where a part is not a whole number of blocks (only reachable past validation), the cuts are vLLM's own:
    adjust_block_scale_shard ceil-divides the offset and the size separately, so parts can overlap or shift."""
    # Phi-3-style fused qkv, 3 heads of 64 and 1 KV head, 128-row blocks: the scale's 3 rows are split by
    # _load_fused_module_from_checkpoint at ceil(0/128)=0, ceil(192/128)=2, ceil(256/128)=2.
    qkv = LinearModule("qkv_proj", "QKVParallelLinear", (Shard("qkv_proj", info("qkv_proj.weight", (320, 256)), {
        "weight_scale_inv": info("qkv_proj.weight_scale_inv", (3, 2), "F32")}),), 256, (192, 64, 64), (3, 1, 64))
    plan = rank_reads(qkv, tp_layout(qkv, 1), 0, BLOCK)
    assert [s.weight.rows for s in plan.shards] == [(0, 192), (192, 256), (256, 320)]
    assert [s.side["weight_scale_inv"].rows for s in plan.shards] == [(0, 2), (2, 3), (2, 3)]
    # k's own scale row lands on parameter row 2 and v overwrites it, yet k's rows 192..255 use row 1 (from q's
    # read), which is their block of the fused scale: the result is right, so nothing is flagged
    assert plan.notes == ()
    # A row-parallel input split of 255 columns: the parameter has ceil(255/128) = 2 block columns, rank 1
    # narrows the scale at 1 * 2.
    down = LinearModule("down_proj", "RowParallelLinear", (Shard("down_proj", info("down_proj.weight", (256, 510)), {
        "weight_scale": info("down_proj.weight_scale", (2, 4), "BF16")}),), 510, (256,))
    plan = rank_reads(down, tp_layout(down, 2), 1, BLOCK)
    assert plan.input_cols == plan.shards[0].weight.cols == (255, 510)
    assert plan.shards[0].side["weight_scale"].cols == (2, 4) and plan.notes
    wide = down._replace(input_size=640, shards=(Shard("down_proj", info("down_proj.weight", (256, 640)), {
        "weight_scale": info("down_proj.weight_scale", (2, 5), "BF16")}),))
    with pytest.raises(ShardingError, match=r"start \(3\) \+ length \(3\) exceeds dimension size \(5\)"):
        rank_reads(wide, tp_layout(wide, 2), 1, BLOCK)
