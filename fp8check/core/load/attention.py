"""KV cache in `load`: one attention layer's K and V scales processed as vLLM processes them after loading, their
values checked, and a random K and V written to the FP8 cache and read back, against fp32 (torch: `load` only).

Scale processing (vllm/model_executor/layers/quantization/kv_cache.py and compressed_tensors/compressed_tensors.py,
read in 0.28.0 and 0.33.0 and the same in every release 0.25.0 ... 0.33.0, apart from two non-default switches:
--calculate-kv-scales up to 0.27, pre-processed weights from 0.30):
- `BaseKVCacheMethod` (Fp8KVCacheMethod, ModelOptKVCacheMethod, QuarkKVCacheMethod): k/v/q/prob scales are scalar
  parameters initialised to -1.0, and a non-scalar tensor fails loading ("KV-cache scale expects a scalar weight,
  got shape ..."). With a quantized cache: k > 0 and v > 0 are used (x2 on float8_e4m3fnuz platforms); k < 0 and
  v < 0 (absent, or negative in the checkpoint) become 1.0; otherwise vLLM asserts k > 0 (an AssertionError when k
  is absent, zero, negative or NaN) and writes both with k (`max(k, v)`, which keeps k when v is absent, zero,
  negative or NaN: the fused `kv_scale` path). A q or prob scale that is not > 0 becomes 1.0.
- `CompressedTensorsKVCacheMethod`: the scales are used as stored, 1.0 where absent, never doubled on fnuz; with
  `strategy: attn_head` one per KV head (the checkpoint's `[heads, 1, 1]` flattened, each rank taking its heads),
  and the backends that read the scalar `_k_scale_float` get the max over heads. No value is checked.
- No KV method (an FP8 cache asked of a format without one): the 1.0 defaults of `set_default_quant_scales`.

The round trip: per layer, K and V `[tokens, kv heads, head_size]` drawn in the model dtype, seeded by --seed and
the layer name, written through the scales the cache write uses (fp8check.kernels.numerics.kv_cache) and read back.
Their magnitude is what the checkpoint's scale was calibrated for: every calibration tool computes a KV scale as
amax / 448 (float8_e4m3fn), so each head's values reach `scale x 448`; where the checkpoint has no valid scale they
are unit-variance (the scale of normalized activations). A cache that saturates the calibrated range (a
compressed-tensors scale on float8_e4m3fnuz, a head written with another head's scale, V written with K's) or a
scale that zeroes or poisons the cache moves the read-back beyond one unit roundoff of the cache format: FAIL.

Status: FAIL for a scale that is zero, negative, non-finite or mis-shaped (named, with what vLLM does with it) and
for a read-back beyond the bound; warn when a scale the layer's method loads is absent; "not run" when inspect found
that vLLM would not build the layer, or for a quantized cache fp8check does not emulate (per-token-head, NVFP4,
fp8_ds_mla, fp8_inc). A cache in the model dtype (bfloat16, float16) stores K and V as computed: nothing is
quantized, so the run is "ok" with a note rather than "not run", which would fail the load of every unquantized
cache; the scales' shapes are still checked (vLLM loads them, and a wrong shape fails loading), their values only
warned about (vLLM does not use them).
"""

from __future__ import annotations

import zlib
from typing import Mapping, NamedTuple

import torch

from fp8check.core.load.gemm import relative_error
from fp8check.core.records import AttentionReport, AttentionRun
from fp8check.core.targets.platforms import Platform
from fp8check.core.vocabulary import Status, Strategy
from fp8check.kernels.numerics.kv_cache import FP8_CACHE_DTYPES, CacheWrite, unit_roundoff, write_and_read

CT_METHOD = "CompressedTensorsKVCacheMethod"
CALIBRATION_MAX = 448.0                # torch.finfo(torch.float8_e4m3fn).max: what exporters divide amax by
MODEL_DTYPES = ("bfloat16", "float16", "float32")  # a cache in one of these is stored as computed
EMULATED_KV_DTYPES = ("fp8", "fp8_e4m3", "fp8_e5m2")  # vLLM's per-tensor FP8 cache (KVQuantMode.FP8_PER_TENSOR)
# Backends whose cache write reads something else than the per-head scale tensor: the CPU backend passes the
# scalar `_k_scale_float` (CT: the max over heads); the Triton writers `tl.load` the tensor's first element.
SCALAR_WRITERS = {"CPU_ATTN": "max", "TRITON_ATTN": "first", "ROCM_ATTN": "first"}
BASE_ONE_WARNING = ("Using KV cache scaling factor 1.0 for fp8_e4m3. If this is unintended, verify that k/v_scale "
                    "scaling factors are properly set in the checkpoint.")
BASE_Q_WARNING = ("Checkpoint does not provide a q scaling factor. Setting it to k_scale. This only matters for FP8 "
                  "Attention backends (flash-attn or flashinfer).")
ROLES = ("k", "v", "q", "prob")


class Scale(NamedTuple):
    """One checkpoint scale the layer loads: its tensor name and, when the checkpoint has it, its values."""

    name: str
    shape: tuple[int, ...] = ()
    values: torch.Tensor | None = None  # fp32, flattened; None: not in the checkpoint


class Processed(NamedTuple):
    """The k and v scales the cache write uses after process_weights_after_loading, or why loading fails."""

    k: torch.Tensor | None             # fp32 [1] or [heads]; None: vLLM fails loading (or nothing is quantized)
    v: torch.Tensor | None
    errors: tuple[str, ...] = ()       # loading fails (vLLM's own exception)
    problems: tuple[str, ...] = ()     # values a checkpoint must not hold, each with what vLLM does with it
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def scale_role(name: str) -> str | None:
    """Which of the layer's scales a checkpoint tensor is, under every format's names (fp8-formats.md §9.2): k, v,
    q, prob, or None (a zero point, or an unrelated tensor)."""
    parts = name.split(".")
    leaf = parts[-1]
    if leaf in ("k_scale", "v_scale", "q_scale", "prob_scale"):
        return leaf.removesuffix("_scale")
    if leaf == "kv_scale":             # the deprecated fused scale: vLLM remaps it to k_scale
        return "k"
    if leaf == "prob_output_scale":    # Quark
        return "prob"
    parent = parts[-2] if len(parts) > 1 else ""
    if leaf == "output_scale" and parent in ("k_proj", "v_proj", "q_proj"):  # Quark
        return parent[0]
    if leaf == "scale" and parent in ("k_cache", "v_cache", "q"):  # HY-V3
        return parent[0]
    return None


def run_attention(report: AttentionReport, scales: Mapping[str, torch.Tensor], platform: Platform,
                  device: torch.device, tokens: int, seed: int, *, model_dtype: torch.dtype = torch.bfloat16,
                  tp: int = 1) -> AttentionRun:
    """One attention layer's KV cache check; every failure becomes the run's status, never an exception.

    `scales`: checkpoint tensor name -> tensor, for `report.scales` (a name missing from it is absent).
    `model_dtype`: the dtype K and V are computed in. `tp`: the tensor-parallel size `report` was built for (its
    head counts are per rank): per-head scales are checked against the checkpoint's head count, and the round trip
    covers rank 0's heads."""
    run = AttentionRun(name=report.name, kv_cache_dtype=report.kv_cache_dtype, cache_dtype=report.cache_dtype,
                       status=Status.NOT_RUN)
    if report.errors:
        return run._replace(errors=(f"not run: vLLM would not build this layer: {report.errors[0]}",))
    loaded = _loaded(report, scales)
    held = [scales[name] for name in set(report.scales) if name in scales]
    run = run._replace(bytes_read=sum(t.numel() * t.element_size() for t in held))
    # What the cache physically holds decides what there is to check: the model dtype (nothing to round-trip), a
    # per-tensor FP8 cache (emulated below), or another quantized layout (not emulated).
    quantized = report.cache_dtype not in MODEL_DTYPES
    if quantized and report.kv_cache_dtype not in EMULATED_KV_DTYPES:
        return run._replace(errors=(f"not run: fp8check does not emulate vLLM's {report.kv_cache_dtype} KV cache "
                                    f"write",))
    processed = _process(report, loaded, platform, tp, quantized)
    if not quantized:
        note = (f"{report.name}: the KV cache holds {report.cache_dtype}: K and V are stored as computed, no scale "
                f"is used, nothing to round-trip")
        status = Status.FAIL if processed.errors else Status.WARN if processed.problems else Status.OK
        return run._replace(status=status, errors=processed.errors, warnings=processed.problems, notes=(note,))
    if processed.errors:
        return run._replace(status=Status.FAIL, errors=processed.errors + processed.problems,
                            warnings=processed.warnings, notes=processed.notes)
    return _round_trip(run, report, loaded, processed, platform, device, tokens, seed, model_dtype)


# ----------------------------------------------------------------------------------------------- loading

def _loaded(report: AttentionReport, scales: Mapping[str, torch.Tensor]) -> dict[str, Scale]:
    """role -> Scale for each scale the layer's method loads, by the vLLM parameter inspect says each tensor loads
    into (`report.scale_params`), else by the tensor's name; a role the checkpoint lacks gets vLLM's parameter name
    (`<layer>.k_scale`, ...) and no values."""
    loaded = {role: Scale(f"{report.name}.{role}_scale") for role in ROLES}
    pairs: list[tuple[str | None, str]]
    if report.scale_params:
        pairs = [(param.rsplit(".", 1)[-1].removesuffix("_scale"), name) for param, name in report.scale_params]
    else:
        pairs = [(scale_role(name), name) for name in report.scales]
    for role, name in pairs:
        tensor = scales.get(name)
        if role is None or role not in loaded or loaded[role].values is not None:
            continue
        loaded[role] = Scale(name) if tensor is None else Scale(name, tuple(tensor.shape),
                                                                 tensor.detach().float().reshape(-1).cpu())
    return loaded


def _process(report: AttentionReport, loaded: dict[str, Scale], platform: Platform, tp: int, quantized: bool
             ) -> Processed:
    if report.kv_method is None:
        one = torch.ones(1)
        return Processed(one, one, notes=(f"{report.name}: no KV cache method: vLLM writes K and V with its default "
                                          f"scale 1.0 (set_default_quant_scales)",))
    if report.kv_method == CT_METHOD:
        return _ct_process(report, loaded, platform, tp, quantized)
    return _base_process(report, loaded, platform, quantized)


def _invalid(values: torch.Tensor) -> bool:
    return bool((~torch.isfinite(values) | (values <= 0)).any())


def _shown(values: torch.Tensor) -> str:
    bad = values[~torch.isfinite(values) | (values <= 0)]
    return f"{float(bad[0]):g}" if values.numel() == 1 else f"{bad.numel()} of {values.numel()} heads, e.g. " \
        f"{float(bad[0]):g}"


def _base_process(report: AttentionReport, loaded: dict[str, Scale], platform: Platform, quantized: bool
                  ) -> Processed:
    """BaseKVCacheMethod.process_weights_after_loading (kv_cache.py), branch for branch."""
    errors = [f"{s.name}: vLLM fails loading it: KV-cache scale expects a scalar weight, got shape {s.shape} "
              f"(BaseKVCacheMethod loads one scale per tensor; per-head scales are compressed-tensors' attn_head)"
              for s in loaded.values() if s.values is not None and s.values.numel() != 1]
    if errors:
        return Processed(None, None, errors=tuple(errors))
    raw = {role: None if s.values is None else float(s.values[0]) for role, s in loaded.items()}
    k = -1.0 if raw["k"] is None else raw["k"]
    v = -1.0 if raw["v"] is None else raw["v"]
    doubled = 2.0 if platform.fp8_fnuz else 1.0
    fused = loaded["k"].name.endswith("kv_scale")
    warnings, notes = [], []
    used = _base_scales(k, v, doubled) if quantized else None
    if quantized and used is None:
        errors.append(f"{report.name}: vLLM fails loading the layer: BaseKVCacheMethod.process_weights_after_loading "
                      f"asserts k_scale > 0 when v_scale is set (AssertionError); {loaded['k'].name} is "
                      + ("not in the checkpoint" if raw["k"] is None else f"{k:g}"))
    elif used and k > 0 and not v > 0:
        if fused:
            notes.append(f"{loaded['k'].name}: the deprecated fused kv_scale: vLLM writes K and V with it")
        elif raw["v"] is None:
            warnings.append(f"{loaded['v'].name}: not in the checkpoint; BaseKVCacheMethod writes V with k_scale "
                            f"{k * doubled:g} (max(k_scale, v_scale))")
    if quantized and raw["k"] is None and raw["v"] is None:
        warnings.append(f"{loaded['k'].name}, {loaded['v'].name}: not in the checkpoint")
    if used == (1.0, 1.0) and "e5m2" not in report.kv_cache_dtype:
        warnings.append(f"{report.name}: vLLM warns: {BASE_ONE_WARNING}")
    if quantized and not (raw["q"] is not None and raw["q"] > 0):
        notes.append(f"{report.name}: vLLM logs: {BASE_Q_WARNING} (then uses 1.0)")
    if used and doubled == 2.0 and k > 0:
        notes.append(f"{report.name}: vLLM doubles the checkpoint's scales on float8_e4m3fnuz (is_fp8_fnuz)")
    problems = _base_problems(loaded, k, v, used, quantized)
    k_used, v_used = (None, None) if used is None else (torch.tensor([used[0]]), torch.tensor([used[1]]))
    return Processed(k_used, v_used, tuple(errors), tuple(problems), tuple(warnings), tuple(notes))


def _base_scales(k: float, v: float, doubled: float) -> tuple[float, float] | None:
    """The branches of process_weights_after_loading for a quantized cache (-1.0: not in the checkpoint): the k and
    v scales it sets, or None where it asserts k_scale > 0."""
    if k > 0 and v > 0:
        return k * doubled, v * doubled
    if k < 0 and v < 0:
        return 1.0, 1.0
    if not k > 0:
        return None
    return k * doubled, k * doubled  # max(k_scale, v_scale) keeps k: v is not > 0 here


def _base_problems(loaded: dict[str, Scale], k: float, v: float, used: tuple[float, float] | None, quantized: bool
                   ) -> list[str]:
    """Each invalid value the checkpoint holds, with what BaseKVCacheMethod does with it."""
    problems = []
    for role, scale in loaded.items():
        if scale.values is None or not _invalid(scale.values):
            continue
        value = float(scale.values[0])
        if not quantized:
            fate = "ignores it: the KV cache is not quantized"
        elif role in ("q", "prob"):
            fate = f"uses 1.0 for the {role} scale instead (it only takes a value > 0)"
        elif used is None:
            fate = "fails loading the layer (see the assert)"
        elif k < 0 and v < 0:
            fate = "takes a negative value for 'not in the checkpoint' (its -1.0 placeholder) and writes K and V " \
                   "with 1.0"
        elif value == float("inf"):
            fate = f"writes {role.upper()} with it: x / inf = 0, every cached value is 0"
        else:
            fate = f"ignores it and writes V with k_scale {used[0]:g} (max(k_scale, v_scale))"
        problems.append(f"{scale.name}: {value:g} (a KV cache scale must be finite and > 0; vLLM {fate})")
    return problems


def _ct_process(report: AttentionReport, loaded: dict[str, Scale], platform: Platform, tp: int, quantized: bool
                ) -> Processed:
    """CompressedTensorsKVCacheMethod: create_weights' ones, the loaders' shape rules, the scales as stored."""
    per_head = report.scale_strategy == Strategy.ATTN_HEAD
    heads = report.num_kv_heads
    errors: list[str] = []
    problems: list[str] = []
    warnings: list[str] = []
    notes: list[str] = []
    used = {"k": torch.ones(heads if per_head else 1), "v": torch.ones(heads if per_head else 1)}
    for role in ("k", "v", "q"):
        scale = loaded[role]
        if scale.values is None:
            if role == "q" or not quantized:
                continue
            if report.scale_strategy is None:  # no k / v scale at all: inspect says whether the scheme wants them
                notes.append(f"{scale.name}: not in the checkpoint; CompressedTensorsKVCacheMethod writes with its "
                             f"1.0 placeholder")
            else:
                warnings.append(f"{scale.name}: not in the checkpoint; CompressedTensorsKVCacheMethod keeps its 1.0 "
                                f"placeholder, without a warning")
            continue
        values, shape_message = _ct_load(scale, scale.values, role, per_head, heads, report.num_heads, tp)
        if shape_message:
            (errors if values is None else warnings).append(shape_message)
        if values is None:
            continue
        used[role] = values
        if _invalid(values):
            fate = _ct_fate(values) if quantized else "ignores it: the KV cache is not quantized"
            problems.append(f"{scale.name}: {_shown(values)} (a KV cache scale must be finite and > 0; vLLM {fate})")
    if quantized and platform.fp8_fnuz and any(loaded[role].values is not None for role in ("k", "v")):
        notes.append(f"{report.name}: CompressedTensorsKVCacheMethod uses the checkpoint's scales as stored on "
                     f"float8_e4m3fnuz (BaseKVCacheMethod doubles them): a scale calibrated against 448 covers only "
                     f"scale x 240 there")
    if per_head and report.backend in SCALAR_WRITERS:
        first = SCALAR_WRITERS[report.backend] == "first"
        notes.append(f"{report.name}: {report.backend} writes the cache with "
                     + ("tl.load(k_scale): head 0's scale for every head" if first else
                        "the scalar _k_scale_float / _v_scale_float: CT's max over heads"))
        for role in ("k", "v"):
            used[role] = used[role][:1] if first else used[role].max().reshape(1)
    return Processed(used["k"], used["v"], tuple(errors), tuple(problems), tuple(warnings), tuple(notes))


def _ct_load(scale: Scale, values: torch.Tensor, role: str, per_head: bool, heads: int, num_heads: int, tp: int
             ) -> tuple[torch.Tensor | None, str | None]:
    """(rank 0's values as vLLM's loader stores them, or None when loading fails; a message about the shape).
    `values`: the scale's, as stored."""
    stored = n = values.numel()
    if not per_head:  # default_weight_loader into a [1] parameter
        if n == 1:
            return values, None
        return None, (f"{scale.name}: vLLM fails loading it: Attempted to load weight (torch.Size({list(scale.shape)}))"
                      f" into parameter (torch.Size([1])) (kv_cache_scheme strategy tensor: one scale per tensor)")
    total = heads * tp
    group = max(num_heads // heads, 1)
    if role == "q" and group > 1:  # _tp_aware_loader: the max over each KV head's group of query heads
        if n % group:
            return None, (f"{scale.name}: vLLM fails loading it: {n} q scales cannot be grouped by {group} query "
                          f"heads per KV head (_tp_aware_loader's view(-1, {group}); it expects {num_heads * tp})")
        values = values.view(-1, group).amax(dim=1)
        n = values.numel()
    if n == 1:
        expected = f"{num_heads * tp} (one per query head)" if role == "q" else f"{total} (one per KV head)"
        return values.expand(heads), (f"{scale.name}: {stored} where kv_cache_scheme strategy "
                                      f"attn_head expects {expected}; vLLM's loader copies "
                                      f"{'their max' if stored > 1 else 'it'} to every KV head")
    if n == total or heads == 1 and tp > 1 and tp % n == 0:  # heads split over the ranks, or replicated
        return values[:heads], None
    if n > total:
        return None, (f"{scale.name}: {n} scales where kv_cache_scheme strategy attn_head expects {total} (one per "
                      f"KV head); vLLM's loader silently keeps the first {heads} on rank 0")
    return None, (f"{scale.name}: vLLM fails loading it: {n} scales where kv_cache_scheme strategy attn_head expects "
                  f"{total} (one per KV head); _tp_aware_loader's copy_ cannot broadcast them")


def _ct_fate(values: torch.Tensor) -> str:
    if bool(torch.isnan(values).any()):
        return "uses it as stored: x / NaN is NaN, every cached value of that head is NaN"
    if bool((values == 0).any()):
        return "uses it as stored: x / 0 saturates every code (0 / 0 is NaN) and the read multiplies by 0"
    if bool(torch.isinf(values).any()):
        return "uses it as stored: x / inf = 0, every cached value of that head is 0"
    return ("uses it as stored: the cache holds negated codes that the read negates back, so the values survive, "
            "but no calibration tool writes a negative scale: re-export it")


# -------------------------------------------------------------------------------------------- round trip

def _round_trip(run: AttentionRun, report: AttentionReport, loaded: dict[str, Scale], processed: Processed,
                platform: Platform, device: torch.device, tokens: int, seed: int, model_dtype: torch.dtype
                ) -> AttentionRun:
    dtype = getattr(torch, report.cache_dtype, None)
    if dtype not in FP8_CACHE_DTYPES:
        return run._replace(errors=(f"not run: fp8check does not emulate a {report.cache_dtype} KV cache",))
    mla = "MLA" in report.kind
    k_used, v_used = processed.k, None if mla else processed.v
    if k_used is None or not mla and v_used is None:  # _process loads both where it reports no error
        return run._replace(errors=("not run: vLLM loads no k / v scale here",))
    heads = k_used.numel() if k_used.numel() > 1 else report.num_kv_heads
    bound = unit_roundoff(dtype)
    errors, notes = list(processed.problems), list(processed.notes)
    figures, drawn = {}, []
    for role, used in (("k", k_used), ("v", v_used)):
        if used is None:
            continue
        x = _draw(report, role, loaded[role], heads, tokens, seed, model_dtype).to(device)
        written = write_and_read(x, used.to(device), dtype, reciprocal=platform.kind == "cpu")
        error = relative_error(written.read_back, x.float())
        figures[role] = error
        drawn.append(f"{role.upper()} reaches {float(x.float().abs().max()):.4g}")
        if not error <= bound:
            errors.append(_bound_error(report, role, error, bound, written, x, used, dtype))
    status = Status.FAIL if errors else Status.WARN if processed.warnings else Status.OK
    notes.append(f"{report.name}: {tokens} tokens x {heads} KV heads x {report.head_size} drawn in "
                 f"{str(model_dtype).removeprefix('torch.')} at the range each checkpoint scale was calibrated for "
                 f"(scale x 448; unit variance without one): {', '.join(drawn)}")
    if mla:
        notes.append(f"{report.name}: MLA caches one latent (kv_c and k_pe), written with k_scale "
                     f"(concat_and_cache_mla)")
    return run._replace(status=status, k_scale=tuple(k_used.tolist()),
                        v_scale=() if v_used is None else tuple(v_used.tolist()), k_error=figures.get("k"),
                        v_error=figures.get("v"), bound=bound, errors=tuple(errors),
                        warnings=processed.warnings, notes=tuple(notes))


def _draw(report: AttentionReport, role: str, scale: Scale | None, heads: int, tokens: int, seed: int,
          model_dtype: torch.dtype) -> torch.Tensor:
    """[tokens, heads, head_size] in the model dtype: each head reaches the amax its checkpoint scale was calibrated
    for (scale x 448; rank 0's heads of a per-head scale), or is unit-variance where the checkpoint has no valid
    scale for it."""
    generator = torch.Generator().manual_seed(seed * 1_000_003 + zlib.crc32(f"{report.name}.{role}".encode()))
    z = torch.randn(tokens, heads, report.head_size, generator=generator)
    values = None if scale is None else scale.values
    if values is None or 1 < values.numel() < heads:
        return z.to(model_dtype)
    per_head = values.expand(heads) if values.numel() == 1 else values[:heads]
    valid = torch.isfinite(per_head) & (per_head > 0)
    amax = (per_head * CALIBRATION_MAX).clamp(max=torch.finfo(model_dtype).max / 2)
    factor = torch.where(valid, amax / z.abs().amax(dim=(0, 2)), torch.ones(heads))
    return (z * factor.reshape(1, -1, 1)).to(model_dtype)


def _bound_error(report: AttentionReport, role: str, error: float, bound: float, written: CacheWrite,
                 x: torch.Tensor, used: torch.Tensor, dtype: torch.dtype) -> str:
    finfo = torch.finfo(dtype)
    name = str(dtype).removeprefix("torch.")
    count = x.numel()
    why = []
    if written.nonfinite:
        why.append(f"{written.nonfinite} of {count} values read back are NaN or infinite")
    if written.saturated:
        smallest = float(used.min())
        why.append(f"{written.saturated} of {count} values saturated at ±{finfo.max:g}: the scale vLLM writes with "
                   f"({smallest:g}) covers |x| <= {smallest * finfo.max:.4g}, the values reach "
                   f"{float(x.float().abs().max()):.4g}")
    if written.subnormal:
        why.append(f"{written.subnormal} of {count} fell below {finfo.tiny:g} (subnormal) after the division")
    what = "K" if role == "k" else "V"
    return (f"{report.name}: {what} read back from the {name} cache differs from the original by {error:.3g} "
            f"(relative Frobenius), above the {bound:.3g} bound (one unit roundoff of {name})"
            + (f": {'; '.join(why)}" if why else ""))
