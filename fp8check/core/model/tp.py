"""Tensor-parallel shapes exactly as vLLM's linear layers compute them, validate_fp8_block_shape, and which experts
each expert-parallel rank holds (determine_expert_map)."""

from __future__ import annotations

from typing import NamedTuple

from fp8check.core.formats.base import LAYER
from fp8check.core.model.layouts import QKV_CLASSES
from fp8check.core.model.modules import LinearModule

VOCAB_PADDING = 64  # vocab_parallel_embedding.DEFAULT_VOCAB_PADDING_SIZE


class TPLayout(NamedTuple):
    """Per-rank sizes of one module at one TP size (layers/linear.py), or the assertion vLLM raises."""

    tp: int
    input_size: int
    input_size_per_partition: int
    output_size: int
    output_partition_sizes: tuple[int, ...]
    parallel: str                 # "column" | "row" | "replicated"
    error: str | None = None
    # True: one output partition of sum(output_partition_sizes) (LinearModule.column_when_split above TP 1), which
    # validate_fp8_block_shape checks whole and no merged-layer escape covers.
    one_partition: bool = False


def divide(numerator: int, denominator: int) -> tuple[int, str | None]:
    """vllm.distributed.utils.divide: ensure_divisibility asserts with '{} is not divisible by {}'."""
    if numerator % denominator:
        return 0, f"AssertionError: {numerator} is not divisible by {denominator}"
    return numerator // denominator, None


def tp_layout(module: LinearModule, tp: int) -> TPLayout:
    k, widths = module.input_size, module.output_sizes
    kind = module.layer_type
    if k == 0 or 0 in widths:
        return TPLayout(tp, k, k, sum(widths), widths, "column",
                        f"{LAYER}: a linear weight of shape {[sum(widths), k]} has an empty dimension")
    if kind == "ParallelLMHead":
        # VocabParallelEmbedding pads the vocabulary to a multiple of 64, divide()s the padded size, and hands its
        # quant method's create_weights [num_embeddings_per_partition] (what a quantized LM head's kernel sees).
        padded = -(-widths[0] // VOCAB_PADDING) * VOCAB_PADDING
        per_rank, error = divide(padded, tp)
        return TPLayout(tp, k, k, padded, widths if error else (per_rank,), "column",
                        error and f"{error} (vocabulary {widths[0]} padded to {padded}, split over {tp} ranks)")
    if kind == "ReplicatedLinear" or tp == 1:
        return TPLayout(tp, k, k, sum(widths), widths, "replicated" if kind == "ReplicatedLinear" else "column")
    if kind == "RowParallelLinear":
        k_part, error = divide(k, tp)
        return TPLayout(tp, k, k_part, sum(widths), widths, "row", error)
    if kind in QKV_CLASSES and module.heads:
        num_heads_total, kv_total, head_dim = module.heads
        heads, error = divide(num_heads_total, tp)
        if not error:
            if tp >= kv_total:  # each rank holds one KV head, replicated tp / kv_total times
                _, error = divide(tp, kv_total)
                kv = 1
            else:
                kv, error = divide(kv_total, tp)
        if error:
            return TPLayout(tp, k, k, sum(widths), widths, "column", error)
        parts: tuple[int, ...] = (heads * head_dim, kv * head_dim,
                                  kv * (widths[2] // kv_total if kv_total else head_dim))
        if len(widths) == 5:  # MinimaxM3QKVParallelLinearWithIndexer: index_q as the KV heads, index_k replicated
            parts += (kv * (widths[3] // kv_total), widths[4])
        elif len(widths) == 4:  # Qwen4ExpQSAQKVIndexerLinear: the indexer's index_qk replicated on every rank
            parts += (widths[3],)
        # QKVParallelLinear's output_size is (heads + 2 * kv) * head_dim * tp with the per-rank (replicated) KV
        # heads, so output_size // sum(parts) == tp and validate_fp8_block_shape checks every partition.
        return TPLayout(tp, k, k, sum(parts) * tp, parts, "column")
    split: list[int] = []
    # Parts every rank holds whole (LinearModule.whole_parts): the layer's output_sizes hold them x tp.
    total = sum(widths) + sum(widths[i] for i in module.whole_parts) * (tp - 1)
    kv_heads, kv_parts = module.kv_parts
    for i, width in enumerate(widths):
        part, error = (width, None) if i in module.whole_parts else divide(width, tp)
        if i in kv_parts and tp > kv_heads:  # one KV head a rank, replicated: the part is that head x tp wide
            part, error = width // kv_heads, (None if tp % kv_heads == 0 else "AssertionError")
            total += part * tp - width
        if error:
            return TPLayout(tp, k, k, total, widths, "column", error)
        split.append(part)
    return TPLayout(tp, k, k, total, tuple(split), "column", one_partition=module.column_when_split)


def linear_block_shape_error(layout: TPLayout, block: tuple[int, int], allow_mismatch_escape: bool) -> str | None:
    """validate_fp8_block_shape, with ColumnParallelLinear's allow_fp8_block_shape_mismatch escape.

    The escape exists only for configs with a `weight_block_size` attribute (native fp8, not compressed-
    tensors) and only for merged layers; when it applies it skips the whole validation, K check included.
    """
    block_n, block_k = block
    parts = (sum(layout.output_partition_sizes),) if layout.one_partition else layout.output_partition_sizes
    if allow_mismatch_escape and layout.parallel == "column" and len(parts) > 1 and any(p % block_n for p in parts):
        return None
    tp = layout.tp
    if (tp > 1 and layout.input_size // layout.input_size_per_partition == tp
            and layout.input_size_per_partition % block_k != 0):
        return (f"Weight input_size_per_partition = {layout.input_size_per_partition} is not divisible by weight "
                f"quantization block_k = {block_k}.")
    is_tp_split = tp > 1 and layout.output_size // sum(parts) == tp
    is_merged = len(parts) > 1
    if is_tp_split or is_merged:
        to_check = parts if is_tp_split else parts[:-1]  # merged but not split: the last one may be ragged
        for size in to_check:
            if size % block_n:
                return (f"Weight output_partition_size = {size} is not divisible by weight quantization "
                        f"block_n = {block_n}.")
    return None


def expert_ranges(num_experts: int, ep: int) -> tuple[range, ...]:
    """determine_expert_map (fused_moe/expert_map_manager.py), linear placement: the experts each of the `ep` ranks
    holds, in rank order; the first `num_experts % ep` ranks hold one expert more (ranks past the experts, none)."""
    base, extra = divmod(num_experts, ep)
    bounds = [rank * base + min(rank, extra) for rank in range(ep + 1)]
    return tuple(range(a, b) for a, b in zip(bounds, bounds[1:]))
