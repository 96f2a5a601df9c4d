"""Which part of each checkpoint tensor a tensor-parallel rank loads, cut exactly as vLLM's weight loaders cut it.

Plain offsets from header shapes (no torch), so a rank's reads can be planned, printed and tested before any
process starts, and a rank then reads only those bytes (`safe_open(...).get_slice(name)[read.slices]`).

Mirrors vLLM 0.28.0 and 0.33.0, whose loaders are identical here:
- model_executor/layers/linear.py: ColumnParallelLinear / RowParallelLinear.weight_loader_v2,
  MergedColumnParallelLinear.weight_loader_v2 and _load_fused_module_from_checkpoint,
  QKVParallelLinear.weight_loader_v2 and _load_fused_module_from_checkpoint, adjust_block_scale_shard,
  ReplicatedLinear.weight_loader (Fp8LinearMethod and CompressedTensorsLinearMethod are in
  WEIGHT_LOADER_V2_SUPPORTED, so FP8 weights and scales take the v2 path; a bias keeps the v1 `weight_loader`,
  which cuts the same rows as the weight);
- model_executor/parameter.py: _ColumnvLLMParameter.load_column_parallel_weight / load_merged_column_weight /
  load_qkv_weight, RowvLLMParameter.load_row_parallel_weight, PerTensorScaleParameter (never split);
  ChannelQuantScaleParameter is column-only, so a row-parallel layer loads its `[N, 1]` scale whole;
- quantization/utils/fp8_utils.py create_fp8_scale_parameter: a block scale parameter has
  `[ceil(sum(parts)/bn), ceil(K_rank/bk)]` rows and columns;
- vocab_parallel_embedding.py: ParallelLMHead pads the vocabulary to a multiple of 64 and splits the padded
  size; a rank loads rows [min(r*per, V), min((r+1)*per, V)) and zero-fills the rest (`weight_loader`);
  LogitsProcessor gathers the ranks' logits and keeps the first V columns.

Callers validate the TP split first (`tp.tp_layout`, `tp.linear_block_shape_error`, inspect's messages). What is left
here is what vLLM does with a split it accepted: a `torch.narrow` past the end, or the LM head's assertion on a
block scale (ShardingError, with vLLM's or torch's message), or block scales that do not belong to the rows they
are applied to (a note on the ShardRead; reachable only under native fp8's `allow_fp8_block_shape_mismatch`,
which skips validation). Side tensors other than scales and bias are refused: fp8check does not model them.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from fp8check.core.checkpoint.safetensors_header import DTYPE_BITS, TensorInfo
from fp8check.core.formats.base import LAYER
from fp8check.core.model.layouts import QKV_CLASSES, QSA_QKV_INDEXER
from fp8check.core.model.modules import LinearModule, Shard
from fp8check.core.model.tp import VOCAB_PADDING, TPLayout, divide

Span = tuple[int, int]  # half-open [start, stop)


class ParallelStyle(NamedTuple):
    """One TP rule for every layer (gpt-fast tp.py's): the weight dimension a rank narrows and how the ranks'
    outputs join. Linear modules (rank_reads) and FusedMoE experts (load.experts) both slice by it."""

    dim: int                           # 0: output rows (column-parallel), 1: input columns (row-parallel)
    collective: str                    # "all_gather" | "all_reduce"


PARALLEL_STYLES = {"column": ParallelStyle(0, "all_gather"), "row": ParallelStyle(1, "all_reduce")}
COLUMN_STYLE, ROW_STYLE = PARALLEL_STYLES["column"], PARALLEL_STYLES["row"]


def rank_span(size: int, tp: int, rank: int) -> Span:
    """A dimension as vLLM narrows it for a rank: rank * (size // tp), at most size // tp long."""
    per = size // tp
    start = per * rank
    return start, min(start + per, size)

WEIGHT_SCALES = ("weight_scale", "weight_scale_inv")


class ShardingError(Exception):
    """vLLM would fail while loading this rank's slice (the message is the one it would raise)."""


class TensorRead(NamedTuple):
    """The part of one checkpoint tensor a rank reads: `rows` of dim 0, `cols` of its input dim (1, or 2 for
    ModelOpt FP8_PB_WO's 4-D [n/128, 1, k/128, 1] block scale); None is all of it."""

    tensor: TensorInfo
    rows: Span | None = None
    cols: Span | None = None

    @property
    def _spans(self) -> list[Span | None]:
        spans: list[Span | None] = [None] * len(self.tensor.shape)
        if spans:
            spans[0] = self.rows
        if self.cols is not None:
            spans[_input_dim(self.tensor)] = self.cols
        return spans

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(size if span is None else span[1] - span[0]
                     for size, span in zip(self.tensor.shape, self._spans))

    @property
    def bytes(self) -> int:
        return math.prod(self.shape) * DTYPE_BITS[self.tensor.dtype] // 8

    @property
    def slices(self) -> tuple[slice, ...]:
        """For `get_slice(name)[index]`; empty for a 0-d tensor (read it whole)."""
        return tuple(slice(*span) if span else slice(None) for span in self._spans)


def _input_dim(info: TensorInfo) -> int:
    """The dimension a scale's input blocks run along: BlockQuantScaleParameter's input_dim (2 for 4-D scales)."""
    return 2 if len(info.shape) == 4 else 1


class ShardRead(NamedTuple):
    """One fused part (q, k or v; gate or up; or the whole weight) as one rank loads it.

    `rank_cols` are the columns of the rank's output this part fills; the rank's output is its parts
    concatenated in vLLM's order, e.g. [q_r | k_r | v_r]. `layer_cols` are the columns of the full layer's output
    (the checkpoint shards concatenated, [q | k | v]) that they are; None for a row-parallel partial sum. KV
    replicas carry the same `layer_cols` on several ranks. An LM head rank's `padding` output columns follow its
    real ones: zeros from the padded vocabulary, which vLLM drops after gathering.
    """

    part: int
    weight: TensorRead
    side: dict[str, TensorRead]       # weight_scale / weight_scale_inv / input_scale / bias, as vLLM cuts them
    rank_cols: Span
    layer_cols: Span | None
    padding: int = 0                  # zero rows vLLM appends after this weight (LM head vocabulary padding)
    notes: tuple[str, ...] = ()


class RankReads(NamedTuple):
    """Everything one rank loads for one module, and how its output joins the other ranks'.

    combine: "all_gather" (column-parallel: each rank holds some output columns), "all_reduce" (row-parallel:
    each rank holds a partial sum over its input columns `input_cols`; only rank 0 adds the bias, `adds_bias`)
    or "none" (replicated: every rank computes the whole output).
    """

    rank: int
    tp: int
    combine: str
    input_cols: Span
    output_width: int
    adds_bias: bool
    shards: tuple[ShardRead, ...]

    @property
    def reads(self) -> tuple[TensorRead, ...]:
        """Distinct reads in load order (a fused-on-disk per-tensor scale serves every part but is read once)."""
        out: list[TensorRead] = []
        for shard in self.shards:
            for read in (shard.weight, *shard.side.values()):
                if read not in out:
                    out.append(read)
        return tuple(out)

    @property
    def bytes(self) -> int:
        return sum(read.bytes for read in self.reads)

    @property
    def notes(self) -> tuple[str, ...]:
        return tuple(note for shard in self.shards for note in shard.notes)


class _Part(NamedTuple):
    """One fused part's geometry: where it sits in its checkpoint tensor and which per-rank slice to take."""

    position: int         # the part's place among its module's fused parts
    shard: Shard
    disk_offset: int      # first row of the part in the tensor (non-zero only when fused on disk)
    disk_rows: int        # rows of the whole part in the checkpoint
    scale_span: Span | None  # the part's rows in a block scale fused on disk (ceil-div offsets); None: all
    rank_rows: int        # rows one rank holds
    source: int           # which rank-sized slice this rank loads (its rank, or rank // KV replicas)
    rank_offset: int      # first row of the part in the rank's weight
    layer_offset: int     # first row of the part in the full fused weight


def rank_reads(module: LinearModule, layout: TPLayout, rank: int, block: tuple[int, int] | None) -> RankReads:
    """What `rank` of `layout.tp` loads for `module`; `block` is (block_n, block_k) for block-quantized weights,
    None for every other module (unquantized ones included)."""
    if not 0 <= rank < layout.tp:
        raise ValueError(f"rank {rank} is outside tensor-parallel size {layout.tp}")
    if module.layer_type == "ReplicatedLinear" or module.tp_size(layout.tp) != layout.tp:
        return _replicated(module, layout.tp, rank)
    if layout.error:
        raise ShardingError(layout.error.replace(LAYER, module.name))
    if module.layer_type == "ParallelLMHead":
        return _lm_head(module, layout.tp, rank, block)
    if module.layer_type == "RowParallelLinear":
        return _row(module, layout, rank, block)
    return _column(module, layout, rank, block)


def _replicated(module: LinearModule, tp: int, rank: int) -> RankReads:
    """ReplicatedLinear.weight_loader copies every tensor whole; so do a torch nn.Linear and a merged layer built
    with disable_tp (tp_rank 0 of tp_size 1: DeepSeek's fused_qkv_a_proj), one part per checkpoint tensor."""
    shards, offset = [], 0
    for i, shard in enumerate(module.shards):
        rows = shard.weight.shape[0]
        shards.append(ShardRead(i, TensorRead(shard.weight), {s: TensorRead(t) for s, t in shard.side.items()},
                                (offset, offset + rows), (offset, offset + rows)))
        offset += rows
    return RankReads(rank, tp, "none", (0, module.input_size), offset, True, tuple(shards))


def _row(module: LinearModule, layout: TPLayout, rank: int, block: tuple[int, int] | None) -> RankReads:
    """RowParallelLinear: the weight's input columns are split; every scale but a block scale is loaded whole."""
    if len(module.shards) != 1:
        raise ShardingError(f"{module.name}: a RowParallelLinear is built from one checkpoint tensor, "
                            f"got {len(module.shards)}")
    shard = module.shards[0]
    k_rank = layout.input_size_per_partition
    cols = _narrow(shard.weight, ROW_STYLE.dim, rank * k_rank, k_rank)
    side, notes = {}, []
    for suffix, info in shard.side.items():
        if block and _side_kind(module, shard, suffix, info, block) == "block":
            size = -(-k_rank // block[1])  # the parameter's columns: ceil(input_size_per_partition / block_k)
            scale_cols = _narrow(info, _input_dim(info), rank * size, size)
            side[suffix] = TensorRead(info, cols=scale_cols)
            if cols[0] % block[1] or scale_cols[0] != cols[0] // block[1]:
                notes.append(_misaligned(info, scale_cols, cols, block[1], rank))
        else:
            side[suffix] = TensorRead(info)  # per-tensor, per-channel [N, 1] / [N], input_scale and bias: whole
    n = module.output_sizes[0]
    read = ShardRead(0, TensorRead(shard.weight, cols=cols), side, (0, n), None, notes=tuple(notes))
    return RankReads(rank, layout.tp, ROW_STYLE.collective, cols, n, rank == 0, (read,))


def _column(module: LinearModule, layout: TPLayout, rank: int, block: tuple[int, int] | None) -> RankReads:
    """Column-parallel layers: every fused part is split separately along its output rows."""
    parts = _parts(module, layout, rank, block)
    # The rank's BlockQuantScaleParameter: which (scale tensor, row) each of its rows holds once every part is
    # loaded (a later part overwrites an overlapping earlier one, as copy_ does).
    param: list[tuple[str, int] | None] = [None] * (-(-sum(p.rank_rows for p in parts) // block[0]) if block else 0)
    cuts = []
    for part in parts:
        rows = _narrow_part(part.shard.weight, part.disk_offset, part.disk_rows, part.source, part.rank_rows)
        side = {}
        for suffix, info in part.shard.side.items():
            kind = _side_kind(module, part.shard, suffix, info, block)
            if block and kind == "block":
                side[suffix] = _block_scale_rows(info, part, param, block[0])
            elif kind == "rows":
                side[suffix] = TensorRead(info, rows=rows)  # per-channel [N, 1] / [N] scale, bias: the weight's rows
            else:
                side[suffix] = TensorRead(info)  # per-tensor scales (one per part) and input_scale: whole
        cuts.append((part, rows, side))
    shards = []
    for part, rows, side in cuts:
        scale = next((side[s].tensor for s in WEIGHT_SCALES if s in side), None)
        notes = _wrong_scale_rows(scale, part, rows, param, block[0], rank) if block and scale else ()
        shards.append(ShardRead(
            part.position, TensorRead(part.shard.weight, rows=rows), side,
            (part.rank_offset, part.rank_offset + part.rank_rows),
            (part.layer_offset + part.source * part.rank_rows,
             part.layer_offset + (part.source + 1) * part.rank_rows), notes=notes))
    width = sum(p.rank_rows for p in parts)
    return RankReads(rank, layout.tp, COLUMN_STYLE.collective, (0, module.input_size), width, True, tuple(shards))


def _parts(module: LinearModule, layout: TPLayout, rank: int, block: tuple[int, int] | None) -> list[_Part]:
    """The fused parts of a column-parallel module, from separate checkpoint tensors or one fused on disk."""
    sizes, per_rank = module.output_sizes, layout.output_partition_sizes
    fused_on_disk = len(module.shards) == 1 and len(sizes) > 1
    if not fused_on_disk and len(module.shards) != len(sizes):
        raise ShardingError(f"{module.name}: {len(module.shards)} checkpoint tensors for {len(sizes)} fused parts")
    replicas = 1
    if module.layer_type in QKV_CLASSES and module.heads and layout.tp >= module.heads[1]:
        replicas = layout.tp // module.heads[1]  # QKVParallelLinear.num_kv_head_replicas
    parts, offset = [], 0
    scale_offsets = _fused_scale_offsets(module, block) if fused_on_disk and block else None
    whole = module.whole_parts  # loaded from tp_rank 0's slice: the whole checkpoint part
    for i, (size, rows) in enumerate(zip(sizes, per_rank)):
        shard = module.shards[0 if fused_on_disk else i]
        scale_span = scale_offsets[i] if scale_offsets else None
        # load_qkv_weight narrows k and v at tp_rank // num_kv_head_replicas; q and merged parts at tp_rank
        source = rank // replicas if module.layer_type in QKV_CLASSES and i > 0 else rank
        kv_heads, kv_parts = module.kv_parts
        if i in kv_parts and layout.tp > kv_heads:  # K2-Horizon's MoVA K / value experts: the rank's KV head
            source = rank // (layout.tp // kv_heads)
        if i in whole:
            source = 0
        if module.layer_type == QSA_QKV_INDEXER and i == 3:
            source = 0  # Qwen4ExpQSAQKVIndexerLinear._load_shard: the indexer's shard loads whole on every rank
        parts.append(_Part(i, shard, offset if fused_on_disk else 0, size, scale_span, rows, source,
                           sum(per_rank[:i]), sum(sizes[:i])))
        offset += size
    return parts


def _fused_scale_offsets(module: LinearModule, block: tuple[int, int]) -> list[Span]:
    """Rows of each part in a block scale fused on disk (Phi-3), as _load_fused_module_from_checkpoint splits it:
    QKV converts each weight offset with adjust_block_scale_shard (ceil(offset / bn)); Merged accumulates the
    converted sizes (ceil(size / bn)). Both agree unless a part is ragged."""
    bn, spans, offset = block[0], [], 0
    for i, size in enumerate(module.output_sizes):
        rows = -(-size // bn)
        start = -(-sum(module.output_sizes[:i]) // bn) if module.layer_type in QKV_CLASSES else offset
        spans.append((start, start + rows))
        offset += rows
    return spans


def _block_scale_rows(info: TensorInfo, part: _Part, param: list, bn: int) -> TensorRead:
    """A block scale part as load_merged_column_weight / load_qkv_weight cut it: adjust_block_scale_shard turns
    the part's rank offset and size into block rows (ceil-div each), the parameter is narrowed there, and the
    loaded scale at source * ceil(rank_rows / bn). Records what lands in `param`."""
    size, param_start = -(-part.rank_rows // bn), -(-part.rank_offset // bn)
    if param_start + size > len(param):
        raise ShardingError(f"{info.name}: RuntimeError: start ({param_start}) + length ({size}) exceeds dimension "
                            f"size ({len(param)}).")
    start, stop = part.scale_span or (0, info.shape[0])
    rows = _narrow_part(info, start, stop - start, part.source, size)
    param[param_start: param_start + size] = [(info.name, row) for row in range(*rows)]
    return TensorRead(info, rows=rows)


def _wrong_scale_rows(scale: TensorInfo, part: _Part, rows: Span, param: list, bn: int,
                      rank: int) -> tuple[str, ...]:
    """The part's weight rows whose block (row // bn of their own tensor) is not the scale row the kernel will
    find for them in the parameter (local row // bn). Empty whenever the parts are whole blocks."""
    wrong: list[Span] = []
    first = part.rank_offset
    for block_row in range(first // bn, -(-(first + part.rank_rows) // bn)):
        lo, hi = max(first, block_row * bn), min(first + part.rank_rows, (block_row + 1) * bn)
        weight_lo, weight_hi = rows[0] + lo - first, rows[0] + hi - first  # checkpoint rows using this param row
        name, scale_row = param[block_row] or ("", -1)
        right_lo, right_hi = max(scale_row * bn, weight_lo), min(scale_row * bn + bn, weight_hi)
        if name != scale.name or right_lo >= right_hi:
            wrong.append((weight_lo, weight_hi))
        else:
            wrong += [span for span in ((weight_lo, right_lo), (right_hi, weight_hi)) if span[0] < span[1]]
    if not wrong:
        return ()
    return (f"{scale.name}: rank {rank} scales weight rows {wrong[0][0]}..{wrong[-1][1] - 1} "
            f"({sum(hi - lo for lo, hi in wrong)} rows) of {part.shard.weight.name} with the wrong blocks: vLLM "
            "loads block scales at ceil-div offsets that do not line up with these rows (only reachable where "
            "validate_fp8_block_shape was skipped: allow_fp8_block_shape_mismatch)",)


def _lm_head(module: LinearModule, tp: int, rank: int, block: tuple[int, int] | None) -> RankReads:
    """ParallelLMHead (VocabParallelEmbedding): pad the vocabulary to a multiple of 64, give each rank
    padded / tp rows, load the real ones and zero-fill the rest. We model a plain vocabulary (no LoRA extras)."""
    shard = module.shards[0]
    vocab = shard.weight.shape[0]
    padded = -(-vocab // VOCAB_PADDING) * VOCAB_PADDING
    per, error = divide(padded, tp)
    if error:
        raise ShardingError(f"{module.name}: {error} (vocabulary {vocab} padded to {padded})")
    start, stop = min(rank * per, vocab), min((rank + 1) * per, vocab)
    side = {}
    for suffix, info in shard.side.items():
        kind = _side_kind(module, shard, suffix, info, block)
        if kind == "block":
            # weight_loader asserts loaded_weight.shape[output_dim] == org_vocab_size before narrowing
            raise ShardingError(f"{info.name}: AssertionError (a block scale has {info.shape[0]} rows, "
                                f"VocabParallelEmbedding.weight_loader expects the vocabulary, {vocab})")
        side[suffix] = TensorRead(info, rows=(start, stop)) if kind == "rows" else TensorRead(info)
    read = ShardRead(0, TensorRead(shard.weight, rows=(start, stop)), side, (0, stop - start), (start, stop),
                     padding=per - (stop - start))
    return RankReads(rank, tp, COLUMN_STYLE.collective, (0, module.input_size), per, True, (read,))


def _narrow(info: TensorInfo, dim: int, start: int, length: int) -> Span:
    """torch.narrow's bounds check, with its message."""
    size = info.shape[dim]
    if start + length > size:
        raise ShardingError(f"{info.name}: RuntimeError: start ({start}) + length ({length}) exceeds dimension "
                            f"size ({size}).")
    return start, start + length


def _narrow_part(info: TensorInfo, part_start: int, part_rows: int, source: int, rows: int) -> Span:
    """Narrow to the part (a no-op for a separate tensor), then to the rank's slice of it, both bounds-checked."""
    _narrow(info, 0, part_start, part_rows)
    if source * rows + rows > part_rows:
        raise ShardingError(f"{info.name}: RuntimeError: start ({source * rows}) + length ({rows}) exceeds "
                            f"dimension size ({part_rows}).")
    return part_start + source * rows, part_start + (source + 1) * rows


def _side_kind(module: LinearModule, shard: Shard, suffix: str, info: TensorInfo, block: tuple[int, int] | None
               ) -> str:
    """Which vLLM parameter a side tensor loads into: "block" (BlockQuantScaleParameter, 2-D or ModelOpt's 4-D),
    "rows" (a bias or a ChannelQuantScaleParameter, [N, 1] or ModelOpt / Quark's 1-D [N], cut like the weight's
    output rows) or "whole" (PerTensorScaleParameter)."""
    if suffix in WEIGHT_SCALES and len(info.shape) in (2, 4):
        return "block" if block else "rows"
    if suffix in WEIGHT_SCALES and len(info.shape) == 1 and info.shape[0] == shard.weight.shape[0] > 1:
        return "rows"
    if suffix == "bias":
        return "rows"
    if suffix in WEIGHT_SCALES or suffix == "input_scale":
        return "whole"
    if suffix == "output_scale" and len(info.shape) <= 1 and math.prod(info.shape) == 1:
        # Quark's q/k/v_proj.output_scale: the KV cache's scale (QuarkConfig.get_cache_scale_mapper remaps it to
        # attn.k_scale / v_scale / q_scale), a scalar every rank loads whole; the linear never reads it.
        return "whole"
    raise ShardingError(f"{module.name}.{suffix}: fp8check does not model how vLLM shards this tensor")


def _misaligned(info: TensorInfo, got: Span, weight: Span, block: int, rank: int) -> str:
    want = (weight[0] // block, -(-weight[1] // block))
    return (f"{info.name}: rank {rank} loads scale columns {got[0]}..{got[1] - 1} for weight columns "
            f"{weight[0]}..{weight[1] - 1}, whose blocks are {want[0]}..{want[1] - 1}: the wrong scales "
            "(validate_fp8_block_shape refuses this split)")
