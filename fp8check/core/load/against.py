"""load --against BASE: is the quantized checkpoint still the model it was made from?

`load` alone compares a layer with a reference built from the same checkpoint, so a block scale stored transposed,
scales swapped between two layers or a layer taken from another revision all pass it. BASE — the unquantized model
the checkpoint was made from — can tell. Per vLLM module (fused as vLLM fuses it, one module of each at a time),
and per FusedMoE expert that load runs (its gate, up and down as stored, its w13 -> SiLU-and-mul -> w2 output):

- the dequantized weight (code x stored scale) against BASE's: relative Frobenius error, cosine, the worst block
  (block strategy) or row (otherwise) and where it is;
- the routed kernel's output on the same activations against BASE's fp32 output (the error a user sees);
- the exact test: round-to-nearest quantization is a function of BASE and the stored scale, so requantizing BASE
  with the stored scale must give back the stored codes. Three arithmetics are accepted, each read from its
  source: division in the weight's dtype (compressed-tensors 0.20.1, `_quantize`: `x / scale` on bf16 tensors),
  fp32 division, and fp32 multiplication by the reciprocal (vLLM 0.33.0 `QuantFP8.forward_native`,
  quantization/input_quant_fp8.py). A code none of them gives is counted as *far* when it is more than one code
  step away, and as *drift* (+1 or -1 in magnitude, summed with its sign) when it is one step away: rounding noise
  of an unforeseen arithmetic cancels in that sum, a wrong scale moves every code the same way (a scale off by a
  ratio r moves codes by 8*log2(r) steps on average: e4m3 has 8 codes per power of two).

Thresholds, measured with `python bench/against.py` (docs/commands.md, "`fp8check load MODEL --against BASE`"):
checkpoints written by compressed-tensors from random and heavy-tailed BASE weights, every strategy, have no far
code and no drift at all, and weight errors of 2.2-2.7 %. The drift allowance covers the scale's own rounding: a
tool that quantizes with an fp32 scale and stores it in bf16 (relative rounding <= 2^-9) drifts by at most
8*log2(1 + 2^-9) = 2.25 % of codes (0.83 % at worst where the bench simulates such a tool; no real one was run). """

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import torch
import torch.nn.functional as F

from fp8check.core.checkpoint.local import Checkpoint
from fp8check.core.errors import InputError, printable
from fp8check.core.load.gemm import as_matrix
from fp8check.core.load.weights import CheckpointFiles, ShardTensors, read_shards
from fp8check.core.model.modules import LinearModule, ModelLayout, Shard, build_layout
from fp8check.core.model.sharding import TensorRead
from fp8check.core.records import OUTPUT_LIMIT, WEIGHT_LIMIT, Comparison, Worst
from fp8check.core.routing.moe import expert_shapes
from fp8check.core.vocabulary import Status

FAR_LIMIT = 0.001           # codes more than one step from requantized BASE: measured 0 of 28.3 M
DRIFT_LIMIT = 0.03          # net one-step drift: measured 0; the bf16 scale's own rounding allows <= 2.25 %
UNQUANTIZED_LIMIT = 2 ** -8  # an unquantized layer is BASE's weight, at most rounded once into bf16
GROUP_MIN_CODES = 4096      # a block or row judged on its own (fewer codes: too few for a fraction to mean much)
_CHUNK_ELEMENTS = 1 << 22   # elements compared at a time: a few 16 MB fp32 copies, whatever the module's size
_FP8 = (torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.float8_e5m2, torch.float8_e5m2fnuz)


def failed(errors: list[str]) -> Comparison:
    return Comparison(Status.FAIL, tuple(errors), None, None, None, None)


class Base:
    """BASE as `load` reads it: its header-only Checkpoint and, once bound to the modules `load` runs, their
    tensors fetched (a Hub repo downloads only their shards) and read one module at a time."""

    def __init__(self, label: str, ckpt: Checkpoint, fetch: Callable[[set[str]], str]):
        self.label = label
        self.ckpt = ckpt
        self.fetch = fetch
        self.modules: dict[str, LinearModule] = {}
        self.files: CheckpointFiles | None = None
        self.unmatched: tuple[str, ...] = ()

    @classmethod
    def open(cls, label: str, token: str | None = None, quiet: bool = False) -> "Base":
        """BASE's header-only Checkpoint and weights fetcher; an error opening it says it is about BASE."""
        from fp8check.core.checkpoint.source import open_checkpoint, weights_fetcher

        try:
            return cls(label, open_checkpoint(label, token=token), weights_fetcher(label, token=token, quiet=quiet))
        except InputError as exc:
            raise InputError(f"--against {printable(label)}: {exc}") from None

    def bind(self, ckpt: Checkpoint, chosen: list[LinearModule], tp: int,
             experts: tuple[tuple[Shard, ...], ...] = (), layout: ModelLayout | None = None) -> None:
        """Refuse a BASE that cannot be the source of `ckpt`, then fetch what the chosen modules and the FusedMoE
        experts load runs (`experts`: each one's gate, up, down) need. `layout`: ckpt's (built here when not given)."""
        assert tp == 1, "fp8check.api refuses --against with --tp before loading"
        check_base(ckpt, self.ckpt, self.label)
        here = layout or build_layout(ckpt.tensors, ckpt.config)
        theirs = build_layout(self.ckpt.tensors, self.ckpt.config)
        check_experts(here, theirs, self.label)
        if not chosen and not experts:
            raise InputError(f"--against {printable(self.label)}: no module to compare (--layers selects no linear "
                             "module and no FusedMoE expert load runs); widen --layers")
        self.modules = {m.name: m for m in theirs.linears}
        names = {name for m in here.linears for name in (m.name, *(s.name for s in m.shards))}
        self.unmatched = tuple(sorted(n for n in self.modules if n not in names))
        wanted = {t.name for m in chosen if m.name in self.modules
                  for s in self.modules[m.name].shards for t in (s.weight, *s.side.values())}
        wanted |= {s.weight.name for shards in experts for s in shards if s.weight.name in self.ckpt.tensors}
        self.files = self._about_base(lambda: CheckpointFiles(self.fetch(wanted)))

    @property
    def bound(self) -> CheckpointFiles:
        """BASE's files, which bind() fetched (compare runs after it)."""
        assert self.files is not None, "Base.bind() fetches BASE's files before any compare"
        return self.files

    def _about_base(self, call):
        """Errors reading BASE name it: `--against BASE: config.json: not found`, not the checkpoint's words."""
        try:
            return call()
        except InputError as exc:
            raise InputError(f"--against {printable(self.label)}: {exc}") from None

    def compare(self, module: LinearModule, shards: tuple[ShardTensors, ...], block: tuple[int, int] | None,
                x: torch.Tensor, output: torch.Tensor, output_bound: float) -> Comparison:
        """`shards`: the module's checkpoint tensors as read; `output`: the routed kernel's output on `x`."""
        mine = self.modules.get(module.name)
        if mine is None:
            absent = [s.weight.name for s in module.shards if s.weight.name not in self.ckpt.tensors]
            what = f"has no tensor {absent[0]}" if absent else "does not build this module from the same tensors"
            return failed([f"{module.name}: BASE {what} (--against BASE must be the model this checkpoint was "
                           "quantized from)"])
        problems = _structure(module, mine)
        if problems:
            return failed(problems)
        base = self._about_base(lambda: read_shards(mine, self.bound))
        self.bound.release()
        weight = _weights(shards, base, block)
        base_out = _product(x, base)
        out_error = _relative(output.to("cpu").double(), base_out.double())
        quantized = weight.codes_total is not None
        out_limit = OUTPUT_LIMIT if quantized else output_bound
        errors = _judge(module.name, weight, out_error, out_limit)
        return Comparison(Status.FAIL if errors else Status.OK, tuple(errors), weight.rel_error, weight.cosine,
                          weight.worst, out_error, weight.codes_total, weight.codes_far, weight.codes_drift,
                          WEIGHT_LIMIT if quantized else UNQUANTIZED_LIMIT, out_limit)

    def compare_expert(self, name: str, expert: int, parts: tuple[ShardTensors, ...], block: tuple[int, int] | None,
                       x: torch.Tensor, output: torch.Tensor, output_bound: float) -> Comparison:
        """One FusedMoE expert as read (gate, up, down with their stored scales; `block`: the scale grid as read):
        each tensor against BASE's, as for a linear module, and the expert's output on `x` against BASE's
        w1/w3 -> SiLU-and-mul -> w2 in fp32 on the same rows (the error a user sees)."""
        label = f"{name} expert {expert}"
        infos = [self.ckpt.tensors.get(f"{p.name}.weight") for p in parts]
        for part, info in zip(parts, infos):
            if info is None:
                return failed([f"{label}: BASE has no tensor {part.name}.weight (--against BASE must be the model "
                               "this checkpoint was quantized from)"])._replace(expert=expert)
            if tuple(info.shape) != tuple(part.weight.shape):
                return failed([f"{part.name}.weight is {list(part.weight.shape)} here but {list(info.shape)} in "
                               "BASE"])._replace(expert=expert)
        base = tuple(ShardTensors(p.name, self._about_base(lambda i=i: self.bound.read(TensorRead(i))), None, None)
                     for p, i in zip(parts, infos))
        self.bound.release()
        quantized = any(p.weight.dtype in _FP8 for p in parts)
        weight = _weights(parts, base, block if quantized else None)
        gate, up, down = (b.weight.float() for b in base)
        xf = x.to("cpu").float()
        base_out = (F.silu(xf @ gate.t()) * (xf @ up.t())) @ down.t()
        out_error = _relative(output.to("cpu").double(), base_out.double())
        out_limit = OUTPUT_LIMIT if quantized else output_bound
        errors = _judge(label, weight, out_error, out_limit)
        return Comparison(Status.FAIL if errors else Status.OK, tuple(errors), weight.rel_error, weight.cosine,
                          weight.worst, out_error, weight.codes_total, weight.codes_far, weight.codes_drift,
                          WEIGHT_LIMIT if quantized else UNQUANTIZED_LIMIT, out_limit, expert)

    def summary(self) -> str:
        read = self.files.bytes_read / 1e6 if self.files else 0.0
        text = f"--against {self.label}: read {read:.1f} MB of BASE"
        if self.unmatched:
            text += (f"; {len(self.unmatched)} BASE module(s) have no counterpart here (e.g. "
                     f"{', '.join(self.unmatched[:3])})")
        return text


def worst_expert(comparisons: list[Comparison]) -> Comparison | None:
    """A FusedMoE's figures against BASE: the worst expert's (failed first, then by weight error), named, with every
    expert's errors and the codes of every expert compared summed."""
    if not comparisons:
        return None
    top = max(comparisons, key=lambda c: (bool(c.errors), c.weight_rel_error or 0.0, c.output_rel_error or 0.0))
    errors = tuple(e for c in comparisons for e in c.errors)

    def total(field: str) -> int | None:
        values = [getattr(c, field) for c in comparisons if getattr(c, field) is not None]
        return sum(values) if values else None

    return top._replace(verdict=Status.FAIL if errors else Status.OK, errors=errors, codes_total=total("codes_total"),
                        codes_mismatched=total("codes_mismatched"), codes_drift=total("codes_drift"))


# ------------------------------------------------------------------------------------------- model checks

def check_base(ckpt: Checkpoint, base: Checkpoint, label: str) -> None:
    """One line (exit 2) when BASE cannot be the unquantized source of `ckpt`: quantized, or another model (its
    config; check_experts compares the FusedMoE layers)."""
    where = f"--against {printable(label)}"
    if base.config.quantization_config is not None or base.config.raw_quantization_config:
        method = (base.config.raw_quantization_config or {}).get("quant_method", "quantized")
        raise InputError(f"{where}: BASE is quantized ({printable(str(method))}); --against needs the unquantized "
                         "model this checkpoint was made from (BF16/FP16/FP32 weights)")
    fp8 = next((t for t in base.tensors.values() if t.dtype.startswith("F8_")), None)
    if fp8 is not None:
        raise InputError(f"{where}: BASE tensor {printable(fp8.name)} is {fp8.dtype}; --against needs the unquantized "
                         "model this checkpoint was made from (BF16/FP16/FP32 weights)")
    for field in ("architectures", "model_type", "hidden_size", "num_hidden_layers", "num_attention_heads",
                  "num_key_value_heads", "head_dim"):
        a, b = _config_value(ckpt.config, field), _config_value(base.config, field)
        if a != b:
            raise InputError(f"{where}: BASE is a different model ({field} {_shown(b)}, here {_shown(a)}); BASE must "
                             "be the unquantized model this checkpoint was made from")


def check_experts(layout: ModelLayout, base: ModelLayout, label: str) -> None:
    """One line (exit 2) when BASE's FusedMoE layers have other expert counts or sizes than the checkpoint's."""
    for field, a, b in zip(("num_experts (n_routed_experts)", "moe_intermediate_size"), _moe_sizes(layout),
                           _moe_sizes(base)):
        if a != b:
            raise InputError(f"--against {printable(label)}: BASE is a different model ({field} {_shown(b)}, here "
                             f"{_shown(a)}); BASE must be the unquantized model this checkpoint was made from")


def _moe_sizes(layout: ModelLayout) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Routed experts and their intermediate size per FusedMoE layer, as the MoE layout reads them from the
    tensors (what vLLM builds from num_experts / n_routed_experts / num_local_experts and moe_intermediate_size;
    fp8check's ModelConfig keeps none of these fields)."""
    shapes = [expert_shapes(m) for m in layout.moes]
    return tuple(len(s.experts) for s in shapes), tuple(s.intermediate for s in shapes)


def _shown(value) -> str:
    if isinstance(value, tuple) and len(set(value)) == 1:
        value = value[0]
    return printable("/".join(map(str, value)) if isinstance(value, tuple) else str(value))


def _config_value(config, field: str):
    """head_dim as models use it: written by transformers, else hidden_size / num_attention_heads."""
    if field == "head_dim" and config.head_dim is None and config.hidden_size and config.num_attention_heads:
        return config.hidden_size // config.num_attention_heads
    return getattr(config, field)


def _structure(module: LinearModule, base: LinearModule) -> list[str]:
    """Shard names and shapes must agree: a mismatch is a structural mistake, not rounding."""
    names, base_names = [s.name for s in module.shards], [s.name for s in base.shards]
    if names != base_names:
        missing = [n for n in names if n not in base_names] or names
        return [f"{module.name}: BASE has no tensor {missing[0]}.weight (this module fuses {', '.join(names)}; "
                f"BASE's fuses {', '.join(base_names)})"]
    return [f"{s.weight.name} is {list(s.weight.shape)} here but {list(b.weight.shape)} in BASE"
            for s, b in zip(module.shards, base.shards) if tuple(s.weight.shape) != tuple(b.weight.shape)]


# -------------------------------------------------------------------------------------------- the figures

class WeightFigures(NamedTuple):
    rel_error: float
    cosine: float
    worst: Worst | None
    codes_total: int | None
    codes_far: int | None
    codes_drift: int | None
    worst_far: tuple[Worst, int] | None    # the judged group (>= GROUP_MIN_CODES codes) with most far codes
    worst_drift: tuple[Worst, int] | None  # ... with the largest |drift|, and that drift
    tensors: tuple[tuple[str, int, int, int], ...] = ()  # per checkpoint tensor: (name, codes, far, drift)


class _Sums:
    """Running totals over a module's row chunks, and per-group figures for the worst block or row."""

    def __init__(self):
        self.err = self.ref = self.mine = self.dot = 0.0
        self.codes = self.far = self.drift = 0
        self.groups: list[tuple[Worst, int, int]] = []  # (group, far, drift) of judged groups and the worst


def _weights(shards: tuple[ShardTensors, ...], base: tuple[ShardTensors, ...], block: tuple[int, int] | None) -> WeightFigures:
    sums = _Sums()
    quantized = any(s.weight.dtype in _FP8 for s in shards)
    tensors: list[tuple[str, int, int, int]] = []
    for shard, reference in zip(shards, base):
        before = (sums.codes, sums.far, sums.drift)
        step = _chunk_rows(shard.weight.shape[1], block[0] if block and quantized else 1)
        for start in range(0, shard.weight.shape[0], step):
            rows = slice(start, start + step)
            _chunk(sums, f"{shard.name}.weight", shard, reference.weight[rows], rows, block if quantized else None)
        counts = [now - then for now, then in zip((sums.codes, sums.far, sums.drift), before)]
        tensors.append((f"{shard.name}.weight", counts[0], counts[1], counts[2]))
    rel = math.sqrt(sums.err / sums.ref) if sums.ref else math.sqrt(sums.err)
    cosine = sums.dot / math.sqrt(sums.ref * sums.mine) if sums.ref and sums.mine else 0.0
    ranked = sorted(sums.groups, key=lambda g: (g[0].codes_differing / max(g[0].codes, 1), g[0].rel_error))
    judged = [g for g in sums.groups if g[0].codes >= GROUP_MIN_CODES]
    far = max(judged, key=lambda g: g[1], default=None)
    drift = max(judged, key=lambda g: abs(g[2]), default=None)
    return WeightFigures(rel, cosine, ranked[-1][0] if ranked else None, sums.codes if quantized else None,
                         sums.far if quantized else None, sums.drift if quantized else None,
                         (far[0], far[1]) if far and far[1] else None,
                         (drift[0], drift[2]) if drift and drift[2] else None, tuple(tensors))


def _chunk(sums: _Sums, tensor: str, shard: ShardTensors, reference: torch.Tensor, rows: slice,
           block: tuple[int, int] | None) -> None:
    """One row chunk of one shard: its errors against BASE and, when quantized, its codes against BASE's."""
    weight = shard.weight[rows]
    n, k = weight.shape
    base = reference.float()
    if weight.dtype in _FP8:
        assert shard.scale is not None  # read_shards reads an FP8 weight with its scale
        scale = _expand(shard.scale, rows, n, k, shard.weight.shape[0], block)
        mine = weight.float() * scale
        codes: tuple[torch.Tensor, torch.Tensor] | None = code_differences(weight, reference, scale)
    else:
        mine, codes = weight.float(), None
    grid = block or (1, k)   # blocks, or rows as 1 x K groups
    err_g, ref_g = _group_sum((mine - base).square(), grid), _group_sum(base.square(), grid)
    sums.err += float(err_g.sum())
    sums.ref += float(ref_g.sum())
    sums.mine += float(mine.square().sum(dtype=torch.float64))
    sums.dot += float((mine * base).sum(dtype=torch.float64))
    count_g = _group_counts(n, k, grid)
    if codes is not None:
        far, drift = codes
        sums.codes += n * k
        sums.far += int(far.sum())
        sums.drift += int(drift.sum())
        far_g, drift_g = _group_sum(far.float(), grid).long(), _group_sum(drift.float(), grid).long()
        bad_g = far_g + _group_sum((drift != 0).float(), grid).long()
    else:
        far_g = drift_g = bad_g = torch.zeros_like(count_g)
    rel_g = (err_g / ref_g.clamp(min=1e-30)).sqrt()
    # Keep the chunk's worst group by both orders (codes, then error) and its judged groups' extremes.
    score = bad_g / count_g if bool(bad_g.any()) else rel_g
    keep = {int(torch.argmax(score)), int(torch.argmax(far_g)), int(torch.argmax(drift_g.abs()))}
    for flat in keep:
        gi, gj = divmod(flat, err_g.shape[1])
        r0 = rows.start + gi * grid[0]
        c0 = gj * grid[1]
        group = Worst(tensor, "block" if block else "row", (r0 // grid[0], gj) if block else (r0,),
                      (r0, min(r0 + grid[0], rows.start + n)), (c0, min(c0 + grid[1], k)), float(rel_g[gi, gj]),
                      int(count_g[gi, gj]) if codes is not None else 0, int(bad_g[gi, gj]))
        sums.groups.append((group, int(far_g[gi, gj]), int(drift_g[gi, gj])))


def _chunk_rows(k: int, multiple: int = 1) -> int:
    """Rows per chunk: about _CHUNK_ELEMENTS, whole blocks (a multiple of the block height)."""
    return max(multiple, _CHUNK_ELEMENTS // k // multiple * multiple)


def _expand(scale: torch.Tensor, rows: slice, n: int, k: int, total_rows: int, block: tuple[int, int] | None
            ) -> torch.Tensor:
    """The stored scale of every element of rows [rows.start, +n): per tensor, per channel, per block, per group
    (in the kernels' 2-D fp32 form, gemm.as_matrix: 1-D channel, 4-D block and E8M0 group scales included)."""
    s = as_matrix(scale)
    if s.numel() == 1:
        return s.reshape(1, 1)
    if block is not None:
        bn, bk = block
        part = s[rows.start // bn: -(-(rows.start + n) // bn)]
        return part.repeat_interleave(bn, 0)[:n].repeat_interleave(bk, 1)[:, :k]
    s = s.reshape(total_rows, -1)[rows]
    return s if s.shape[1] == 1 else s.repeat_interleave(k // s.shape[1], 1)  # per channel, or K/G-wide groups


def ordinals(codes: torch.Tensor) -> torch.Tensor:
    """FP8 codes as signed positions on the number line (sign-magnitude bytes: magnitudes are ordered)."""
    raw = codes.contiguous().view(torch.uint8).to(torch.int16)
    magnitude = raw & 0x7F
    return torch.where(raw >= 0x80, -magnitude, magnitude)


def requantized(base: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype) -> list[torch.Tensor]:
    """BASE quantized with `scale` by every accepted arithmetic (see the module docstring), saturating."""
    top = torch.finfo(dtype).max
    wide = base.float()
    ways = [wide / scale, wide * scale.reciprocal()]
    if base.dtype != torch.float32:
        ways.append((base / scale.to(base.dtype)).float())
    return [w.clamp(-top, top).to(dtype) for w in ways]


def code_differences(codes: torch.Tensor, base: torch.Tensor, scale: torch.Tensor
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    """Per element: far (more than one step from every requantization) and drift (+1 / -1 in magnitude when one
    step from the nearest and given by none, else 0)."""
    stored = ordinals(codes)
    nearest: torch.Tensor | None = None
    drift = torch.zeros_like(stored)
    for requant in (ordinals(q) for q in requantized(base, scale, codes.dtype)):
        gap = (stored - requant).abs()
        nearest = gap if nearest is None else torch.minimum(nearest, gap)
        direction = torch.sign(stored.abs() - requant.abs())  # the first arithmetic one step away gives it
        drift = torch.where((drift == 0) & (gap == 1), direction, drift)
    assert nearest is not None  # requantized() gives at least one arithmetic
    return nearest > 1, torch.where(nearest == 1, drift, torch.zeros_like(drift))


def _group_sum(t: torch.Tensor, grid: tuple[int, int]) -> torch.Tensor:
    """Sums over [bn, bk] groups (ragged edges padded with zeros): [ceil(N/bn), ceil(K/bk)], in fp64."""
    bn, bk = grid
    n, k = t.shape
    if n % bn or k % bk:
        t = torch.nn.functional.pad(t, (0, -k % bk, 0, -n % bn))
    return t.reshape(-(-n // bn), bn, -(-k // bk), bk).sum(dim=(1, 3), dtype=torch.float64)


def _group_counts(n: int, k: int, grid: tuple[int, int]) -> torch.Tensor:
    """Elements per [bn, bk] group, the ragged edges' included."""
    def sizes(total: int, size: int) -> torch.Tensor:
        out = torch.full((-(-total // size),), size, dtype=torch.long)
        out[-1] = total - size * (len(out) - 1)
        return out

    return sizes(n, grid[0])[:, None] * sizes(k, grid[1])[None, :]


def _product(x: torch.Tensor, base: tuple[ShardTensors, ...]) -> torch.Tensor:
    """BASE's output in fp32 on the same activations, bias included, in row chunks (an LM head is large)."""
    xf = x.to("cpu").float()
    outs = []
    for shard in base:
        step = _chunk_rows(shard.weight.shape[1])
        part = torch.cat([xf @ shard.weight[i:i + step].float().t()
                          for i in range(0, shard.weight.shape[0], step)], dim=1)
        outs.append(part + shard.bias.float() if shard.bias is not None else part)
    return torch.cat(outs, dim=1)


def _relative(a: torch.Tensor, b: torch.Tensor) -> float:
    norm = float(torch.linalg.vector_norm(b))
    diff = float(torch.linalg.vector_norm(a - b))
    return diff / norm if norm else diff


# -------------------------------------------------------------------------------------------- the verdict

def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.3g} %" if whole else "0 %"


def _judge(name: str, w: WeightFigures, out_error: float, out_limit: float) -> list[str]:
    """Evidence first: the exact code counts of every checkpoint tensor (a per-tensor scale's whole group) and of
    the worst block or row big enough to judge alone; then the aggregate errors (weak on their own)."""
    errors = []
    scopes = [(tensor, codes, far, drift) for tensor, codes, far, drift in w.tensors if codes]
    if w.worst_far:
        scopes.append((w.worst_far[0].where(), w.worst_far[0].codes, w.worst_far[1], 0))
    if w.worst_drift:
        scopes.append((w.worst_drift[0].where(), w.worst_drift[0].codes, 0, w.worst_drift[1]))
    far = next((s for s in scopes if s[2] > FAR_LIMIT * s[1]), None)
    if far is not None:
        where, codes, count, _ = far
        errors.append(f"{name}: {count:,} of {codes:,} codes of {where} differ from BASE requantized with the stored "
                      f"scale by more than one step (threshold {FAR_LIMIT:.1%}): not BASE's weights quantized with "
                      "this scale")
    drift = next((s for s in scopes if abs(s[3]) > DRIFT_LIMIT * s[1]), None)
    if drift is not None:
        where, codes, _, count = drift
        errors.append(f"{name}: {abs(count):,} of {codes:,} codes of {where} ({_percent(abs(count), codes)}, net) "
                      f"are one step {'larger' if count > 0 else 'smaller'} than BASE requantized with the stored "
                      f"scale gives (threshold {DRIFT_LIMIT:.0%}): the stored scale is not the one these codes were "
                      "made with (swapped, transposed, from another revision?)")
    limit = WEIGHT_LIMIT if w.codes_total is not None else UNQUANTIZED_LIMIT
    if not w.rel_error <= limit:
        why = "FP8 rounding allows (2^-4)" if w.codes_total is not None else "one rounding into bf16 allows (2^-8)"
        errors.append(f"{name}: weight differs from BASE by {w.rel_error:.3g} (relative Frobenius, cosine "
                      f"{w.cosine:.4f}), above the {limit:.3g} {why}")
    if not out_error <= out_limit:
        errors.append(f"{name}: output differs from BASE's by {out_error:.3g} (relative Frobenius, same activations), "
                      f"above {out_limit:.3g}")
    return errors
