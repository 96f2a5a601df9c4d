"""vLLM's attention backend selection as data: each platform's `get_attn_backend_cls` (vllm/platforms/{cuda,rocm,
xpu,cpu}.py) with its ordered priority list (`_get_backend_priorities`), its validation loop (`get_valid_backends`)
or its direct choice (XPU, CPU), and its errors verbatim, over the backend classes of
fp8check.kernels.attention_backends; and what a model file hands its attention itself (DiffKV, sink-capable
backends). Everything here is torch-free.
"""

from __future__ import annotations

from fp8check.kernels.attention_backends import (
    AiterMLA, AiterTritonMLA, AttentionChoice, AttentionSpec, BACKENDS, Backend, CPUAttention, CPUMLA, CutlassMLA,
    FlashAttention, FlashAttnMLA, FlashAttnMLASparse, FlashAttnMLASparseFA4, FlashInfer, FlashInferMLA,
    FlashInferMLASparse, FlashInferMLASparseSM120, FlashInferMLASparseSM90, FlashMLA, FlashMLASparse,
    FlexAttention, RocmAiterFlashAttention, RocmAiterMLASparse, RocmAiterUnifiedAttention, RocmAttention,
    RocmOctave, SelectorConfig, TokenspeedMLA, TritonAttention, TritonFlashAttention, TritonFlashInfer, TritonMLA,
    TurboQuant, UNQUANTIZED_KV, UltraQuant, XPUFlashAttnMLA, attention_backend_names, capability_major,
    config_repr, decoder_type, exactly_read, flash_attn_version, is_quantized_kv_cache, selector_config,
    triton_impl_error,
)
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.registry import Rejection

# --- the platforms ------------------------------------------------------------------------------------------------

def cuda_priorities(cfg: SelectorConfig, num_heads: int, ctx: RoutingContext) -> tuple[type[Backend], ...]:
    """platforms/cuda.py _get_backend_priorities (no non-causal layers). attn-composite: an mm-prefix layer puts
    TRITON_FLASHINFER first on sm10x, TRITON_FLASH_ATTN first on sm9x."""
    has, major = ctx.profile.has, capability_major(ctx)
    if not cfg.use_mla:
        composite = cfg.use_mm_prefix and has("attn-composite")
        if major == 10:
            return ((TritonFlashInfer,) if composite else ()) + (
                FlashInfer, FlashAttention, TritonAttention, FlexAttention, TurboQuant)
        return ((TritonFlashAttention,) if composite and major == 9 else ()) + (
            FlashAttention, FlashInfer, TritonAttention, FlexAttention, TurboQuant)
    if major == 10:
        if is_quantized_kv_cache(cfg.kv_cache_dtype, ctx):
            sparse: tuple[type[Backend], ...] = (FlashInferMLASparse, FlashMLASparse)
        elif num_heads <= 16:
            sparse = ((FlashAttnMLASparseFA4,) if has("flash-attn-mla-sparse-fa4") else ()) + (FlashInferMLASparse,
                                                                                             FlashMLASparse)
        else:
            sparse = (FlashMLASparse, FlashInferMLASparse)
        return (FlashInferMLA, TokenspeedMLA, CutlassMLA, FlashAttnMLA, FlashMLA, TritonMLA) + sparse
    if major == 12:
        return TritonMLA, FlashInferMLASparseSM120
    tail: tuple[type[Backend], ...] = (FlashAttnMLASparse, FlashMLASparse)
    if has("flashinfer-mla-sparse-sm90"):
        tail = (FlashInferMLASparseSM90,) + tail if cfg.head_size == 512 else tail + (FlashInferMLASparseSM90,)
    return (FlashAttnMLA, FlashMLA, FlashInferMLA, TritonMLA) + tail


def rocm_priorities(cfg: SelectorConfig, ctx: RoutingContext) -> tuple[type[Backend], ...]:
    """platforms/rocm.py _get_backend_priorities: AITER's classes join when it is on (assumption `aiter`); for an
    encoder-decoder model get_valid_backends drops ROCM_ATTN from every layer's row (its KV layout does not match
    the encoder backends', 0.33 / 0.34)."""
    aiter = ctx.platform.assumptions.aiter
    if cfg.use_sparse:
        return (RocmAiterMLASparse,)
    if cfg.use_mla:
        return (AiterMLA, TritonMLA, AiterTritonMLA) if aiter else (TritonMLA,)
    row: tuple[type[Backend], ...] = () if cfg.encoder_decoder_model else (RocmAttention,)
    if aiter:
        row += (RocmAiterFlashAttention, RocmAiterUnifiedAttention)
    row += (TritonAttention, TurboQuant)
    if ctx.profile.has("rocm-octave"):
        row += (RocmOctave,)
    if ctx.profile.has("ultraquant"):
        row += (UltraQuant,)
    return row


def _enum(name: str) -> str:
    """How vLLM prints an AttentionBackendEnum member with %s or in an f-string."""
    return f"AttentionBackendEnum.{name}"


def _rejections(invalid: dict[str, list[str]], ctx: RoutingContext) -> tuple[Rejection, ...]:
    verified = exactly_read(ctx)
    return tuple(Rejection(name, ", ".join(reasons), verified) for name, reasons in invalid.items())


def _validated(cfg: SelectorConfig, num_heads: int, ctx: RoutingContext, requested: str | None) -> AttentionChoice:
    """CUDA and ROCm: get_attn_backend_cls, checking the requested backend alone or walking the priority list."""
    rocm = ctx.kind == "rocm"
    config = config_repr(cfg, ctx)
    if requested is not None:
        backend = BACKENDS.get(requested)
        if backend is None:
            return AttentionChoice(requested, (), None,
                                   (f"fp8check does not model {requested}'s conditions; vLLM validates it here",))
        reasons = backend.invalid_reasons(cfg, ctx)
        if reasons:
            # attn-import-error-text words an ImportError "[ModuleNotFoundError: ...]"; before it: ['ImportError'].
            shown = f"[{reasons[0]}]" if reasons[0].startswith("ModuleNotFoundError") else str(reasons)
            return AttentionChoice(None, _rejections({requested: reasons}, ctx),
                                   f"Selected backend {_enum(requested)} is not valid for this configuration. "
                                   f"Reason: {shown}")
        note = (f"Using {requested} backend (selected via --attention-backend)." if rocm
                else f"Using {_enum(requested)} backend.")
        return AttentionChoice(requested, (), backend.impl_error(cfg, ctx),
                               (note,) + ((backend.caveat,) if backend.caveat else ()))
    row = rocm_priorities(cfg, ctx) if rocm else cuda_priorities(cfg, num_heads, ctx)
    invalid: dict[str, list[str]] = {}
    valid: list[type[Backend]] = []
    for backend in row:
        reasons = backend.invalid_reasons(cfg, ctx)
        if reasons:
            invalid[backend.name] = reasons
        else:
            valid.append(backend)
    reasons_text = "{" + ", ".join(f"{name}: [{', '.join(r)}]" for name, r in invalid.items()) + "}"
    if not valid:
        hint = ""
        if rocm and ctx.profile.has("rocm-kv-dtype-hint"):
            supported = sorted({dtype for name, r in invalid.items() if any("kv_cache_dtype" in x for x in r)
                                for dtype in BACKENDS[name].supported_kv_cache_dtypes(ctx)})
            hint = f" Supported kv_cache_dtype values: {', '.join(supported)}." if supported else ""
        return AttentionChoice(None, _rejections(invalid, ctx),
                               f"No valid attention backend found for {ctx.kind} with {config}. "
                               f"Reasons: {reasons_text}.{hint}")
    chosen = valid[0]
    ahead = {name: r for name, r in invalid.items() if row.index(BACKENDS[name]) < row.index(chosen)}
    potential = "[" + ", ".join(f"'{b.name}'" for b in valid) + "]"
    notes = []
    if cfg.block_size is not None and not rocm:
        excluded = [name for name, r in ahead.items() if r == ["block_size not supported"]]
        if excluded:
            notes.append(f"--block-size {cfg.block_size} precluded higher-priority backend(s) {', '.join(excluded)}. "
                         f"Using {chosen.name} instead, which may result in reduced performance. Consider removing "
                         "--block-size to auto-select the optimal block size.")
    if rocm and invalid:
        notes.append(f"Found incompatible backend(s) [{', '.join(invalid)}] with {decoder_type(ctx, cfg.attn_type)}. "
                     f"Overriding with {chosen.name} out of potential backends: {potential}.")
    elif rocm:
        notes.append(f"Using {chosen.name} backend out of potential backends: {potential}.")
    else:
        notes.append(f"Using {chosen.name} attention backend out of potential backends: {potential}.")
    return AttentionChoice(chosen.name, _rejections(ahead, ctx), chosen.impl_error(cfg, ctx), tuple(notes))


def _xpu(cfg: SelectorConfig, ctx: RoutingContext, requested: str | None) -> AttentionChoice:
    """platforms/xpu.py get_attn_backend_cls: no validation loop; FLASH_ATTN unless asked otherwise."""
    if cfg.kv_cache_dtype.startswith("turboquant_"):
        return AttentionChoice("TURBOQUANT", (), None, ("Using TurboQuant attention backend.",))
    if cfg.use_sparse:
        return AttentionChoice("XPU_MLA_SPARSE", (), None, ("Using XPU MLA Sparse backend.",))
    if cfg.use_mla:
        if not ctx.profile.has("xpu-flash-attn-mla") or requested == "TRITON_MLA":
            return _xpu_triton_mla(cfg, ctx, ("Using Triton MLA backend on V1 engine.",))
        if requested not in (None, "FLASH_ATTN_MLA"):
            return AttentionChoice(None, (), "Invalid attention backend for xpu, with use_mla: True")
        reasons = XPUFlashAttnMLA.invalid_reasons(cfg, ctx)
        if not reasons:
            return AttentionChoice("FLASH_ATTN_MLA", (), None, ("Using Flash Attention MLA backend on XPU.",))
        rejected = _rejections({"FLASH_ATTN_MLA": reasons}, ctx)
        if requested == "FLASH_ATTN_MLA":
            return AttentionChoice(None, rejected,
                                   f"FlashAttnMLA on XPU is not valid for this configuration: {reasons}")
        fallback = (f"FlashAttnMLA on XPU is not valid for this configuration ({tuple(reasons)}); falling back to "
                    "Triton MLA backend.")
        return _xpu_triton_mla(cfg, ctx, (fallback,), rejected)
    if requested == "TRITON_ATTN":
        return AttentionChoice("TRITON_ATTN", (), None, ("Using Triton backend.",))
    if cfg.use_batch_invariant and ctx.profile.has("xpu-batch-invariant"):
        if requested == "FLASH_ATTN":
            return AttentionChoice("FLASH_ATTN", (), FlashAttention.impl_error(cfg, ctx), (
                "Using Flash Attention on XPU with batch invariance enabled because it was explicitly requested. "
                "This backend has not been validated for batch invariance on XPU and may produce non-deterministic "
                "results across batch sizes.",))
        return AttentionChoice("TRITON_ATTN", (), None, (
            "VLLM_BATCH_INVARIANT is enabled. Using Triton Attention backend on XPU, which implements "
            "batch-invariant kernels.",))
    if cfg.use_mm_prefix:
        return _xpu_mm_prefix(cfg, ctx, requested)
    if cfg.dtype == "float32":
        return AttentionChoice("TRITON_ATTN", (), None, (
            "Flash Attention on XPU does not support float32 dtype. Falling back to Triton Attention backend.",))
    if requested not in (None, "FLASH_ATTN"):
        return AttentionChoice(None, (), "Invalid attention backend for xpu, with use_mla: False")
    return AttentionChoice("FLASH_ATTN", (), FlashAttention.impl_error(cfg, ctx), ("Using Flash Attention backend.",))


def _xpu_mm_prefix(cfg: SelectorConfig, ctx: RoutingContext, requested: str | None) -> AttentionChoice:
    """XPU's use_mm_prefix branch: FLASH_ATTN only when asked for (xpu-mm-prefix-flash-attn; its warning), the
    Triton / FlashAttention composite for the head sizes it takes (xpu-triton-flash-attn), else TRITON_ATTN (any
    other requested backend too)."""
    if requested == "FLASH_ATTN" and ctx.profile.has("xpu-mm-prefix-flash-attn"):
        return AttentionChoice("FLASH_ATTN", (), FlashAttention.impl_error(cfg, ctx), (
            "Using Flash Attention on XPU for a multimodal prefix-LM model because it was explicitly requested. The "
            "prefix-LM bidirectional mask cannot be applied, so image/video inputs will produce incorrect results; "
            "only use this for text-only workloads.",))
    if ctx.profile.has("xpu-triton-flash-attn") and requested in (None, "TRITON_FLASH_ATTN") and cfg.dtype != "float32":
        if TritonFlashAttention.supports_head_size(cfg.head_size, ctx):
            return AttentionChoice("TRITON_FLASH_ATTN", (), TritonFlashAttention.impl_error(cfg, ctx), (
                "Using the Triton/FlashAttention composite backend on XPU: batches with multimodal prefix masks run "
                "Triton Attention, causal batches run Flash Attention.",))
        if requested == "TRITON_FLASH_ATTN":
            return AttentionChoice(None, (), f"TRITON_FLASH_ATTN on XPU supports head sizes "
                                             f"{list(TritonFlashAttention.composite_head_sizes)}, got {cfg.head_size}.")
    return AttentionChoice("TRITON_ATTN", (), None, (
        "Flash Attention on XPU does not support multimodal prefix-LM attention. Falling back to Triton Attention "
        "backend.",))


def _xpu_triton_mla(cfg: SelectorConfig, ctx: RoutingContext, notes: tuple[str, ...],
                    rejected: tuple[Rejection, ...] = ()) -> AttentionChoice:
    """XPU returns TRITON_MLA without validating it: a dtype outside its list is fp8check's note, not vLLM's."""
    if not TritonMLA.supports_kv_cache_dtype(cfg.kv_cache_dtype, ctx):
        notes += (f"fp8check: TRITON_MLA's supported_kv_cache_dtypes has no {cfg.kv_cache_dtype}, and XPU's selector "
                  "does not check it; what fails later was not traced",)
    return AttentionChoice("TRITON_MLA", rejected, None, notes)


def _cpu(cfg: SelectorConfig, ctx: RoutingContext, requested: str | None) -> AttentionChoice:
    """platforms/cpu.py get_attn_backend_cls: CPU_ATTN, or CPU_MLA (cpu-mla) / AMX_MLA (cpu-amx-mla, on an AMX
    host)."""
    has = ctx.profile.has
    cannot = (f"Cannot use {_enum(requested)} backend on CPU.",) if requested else ()
    if cfg.use_mla and not has("cpu-mla"):  # logged for any backend but CPU_ATTN, then refused (sparse is MLA too)
        return AttentionChoice(None, (), "MLA is not supported on CPU.", cannot if requested != "CPU_ATTN" else ())
    if cfg.use_sparse:
        return AttentionChoice(None, (), "Sparse Attention is not supported on CPU.")
    if cfg.use_mla:
        if has("cpu-attn-kv-check") and cfg.kv_cache_dtype not in UNQUANTIZED_KV:
            return AttentionChoice(None, (), f"--kv-cache-dtype {cfg.kv_cache_dtype} is not supported by MLA "
                                             "attention on CPU.")
        amx = ctx.platform.assumptions.cpu_amx and has("cpu-amx-mla")
        if amx and requested != "CPU_MLA":
            return AttentionChoice("AMX_MLA", (), None, (cannot if requested != "AMX_MLA" else ())
                                   + ("Using AMX_MLA backend.",))
        notes: tuple[str, ...] = cannot if requested not in ("CPU_MLA", "AMX_MLA") else ()
        if has("cpu-amx-mla"):
            notes += ("Using CPU_MLA backend.",)
        if not CPUMLA.supports_kv_cache_dtype(cfg.kv_cache_dtype, ctx):
            notes += (f"fp8check: CPU_MLA's supported_kv_cache_dtypes is ['auto'] and this release's CPU selector "
                      f"does not check {cfg.kv_cache_dtype}; what fails later was not traced",)
        return AttentionChoice("CPU_MLA", (), None, notes)
    notes = cannot if requested != "CPU_ATTN" else ()
    if has("cpu-attn-kv-check") and not CPUAttention.supports_kv_cache_dtype(cfg.kv_cache_dtype, ctx):
        return AttentionChoice(None, (), f"--kv-cache-dtype {cfg.kv_cache_dtype} is not supported by the CPU "
                                         "attention backend on this host.", notes)
    return AttentionChoice("CPU_ATTN", (), CPUAttention.impl_error(cfg, ctx), notes)


def normalize_attention_backend(value: str | None) -> str | None:
    """AttentionConfig.validate_backend_before: 'auto' (any case) is None, anything else upper-cased."""
    if value is None or value.strip().lower() == "auto":
        return None
    return value.strip().upper()


def unknown_backend_error(name: str, ctx: RoutingContext) -> str | None:
    """AttentionBackendEnum[name]'s ValueError (_AttentionBackendEnumMeta.__getitem__), None for a known name."""
    names = attention_backend_names(ctx)
    if name in names:
        return None
    return f"Unknown attention backend: '{name}'. Valid options are: {', '.join(names)}"


def sink_capable_backend(choice: AttentionChoice, spec: AttentionSpec, ctx: RoutingContext,
                         sink_backend: str) -> AttentionChoice:
    """A layer with attention sinks that its model file hands its own sink-capable subclass of `sink_backend` (hy_v4
    attention.py _resolve_sink_backend): the selector's choice when it supports sinks, else `sink_backend` when it
    validates the layer's configuration, else the selector's choice with the sink disabled (vLLM's warning)."""
    chosen = BACKENDS.get(choice.backend or "")
    if chosen is None or chosen.supports_sink(ctx):
        return choice
    cfg = selector_config(spec, ctx)
    reasons = BACKENDS[sink_backend].invalid_reasons(cfg, ctx)
    if reasons:
        return choice._replace(notes=choice.notes + (
            f"the learnable sink is unavailable: the selected backend {choice.backend} cannot apply sinks and the "
            f"sink-capable {sink_backend} path is invalid here ({', '.join(reasons)}); the sink bias is disabled",))
    return AttentionChoice(sink_backend, choice.rejected, BACKENDS[sink_backend].impl_error(cfg, ctx), choice.notes + (
        f"learnable sink enabled: using the sink-capable {sink_backend} impl instead of {choice.backend}, which "
        "cannot apply sinks",))


# The backends mimo_v2.py MiMoV2Attention hands a layer whose V head size differs from K's.
DIFF_KV_BACKENDS = ("FLASH_ATTN_DIFFKV", "TRITON_ATTN_DIFFKV")


def diff_kv_backend(spec: AttentionSpec, head_size_v: int, ctx: RoutingContext,
                    requested: str | None = None) -> AttentionChoice:
    """The backend mimo_v2.py MiMoV2Attention (0.25-0.34) hands its Attention when V's head size differs from K's,
    on every platform, the selector never asked: the requested --attention-backend where it serves that geometry
    (diffkv-head-size-v: its supports_head_size_v, which FLASH_ATTN_DIFFKV, TRITON_ATTN_DIFFKV and, for a V no wider
    than K, ROCM_AITER_UNIFIED_ATTN give; before: a name ending _DIFFKV), else FLASH_ATTN_DIFFKV where
    FlashAttentionDiffKVBackend.is_supported_on_current_device (get_flash_attn_version 3 or 4 for these head sizes and
    sinks: CUDA SM90 / SM100), else TRITON_ATTN_DIFFKV. The impl's refusals: FlashAttentionImpl's FP8 KV cache check
    at K's head size, then (diffkv-head-size-v) FlashAttentionDiffKVImpl's at V's; TritonAttentionImpl's, then
    TritonAttentionDiffKVImpl's quantized caches other than fp8 / fp8_e4m3."""
    name = normalize_attention_backend(requested)
    notes: tuple[str, ...] = ()
    if name is not None:
        error = unknown_backend_error(name, ctx)
        if error:
            return AttentionChoice(None, (), error)
        if ctx.profile.has("diffkv-head-size-v"):
            serves = name in DIFF_KV_BACKENDS or (name == "ROCM_AITER_UNIFIED_ATTN" and head_size_v <= spec.head_size)
            if not serves:
                notes = (f"{name} cannot serve head_size_v={head_size_v} != head_size={spec.head_size}; using the "
                         "DiffKV auto-pick instead.",)
        else:
            serves = name.endswith("_DIFFKV")
        if serves:
            return AttentionChoice(name, (), None)
    cfg = selector_config(spec, ctx)
    if flash_attn_version(ctx, spec.head_size, head_size_v, cfg.has_sink) in (3, 4):
        error = FlashAttention.impl_error(cfg, ctx)
        if (error is None and ctx.profile.has("diffkv-head-size-v") and is_quantized_kv_cache(spec.kv_cache_dtype, ctx)
                and not _diff_kv_fp8_cache(spec.kv_cache_dtype, spec.head_size, head_size_v, cfg.has_sink, ctx)):
            error = "Unsupported FP8 Diff-KV configuration; use an unquantized KV cache."
        return AttentionChoice("FLASH_ATTN_DIFFKV", (), error, notes)
    error = triton_impl_error("Triton attention backend", cfg, ctx)
    if error is None and is_quantized_kv_cache(spec.kv_cache_dtype, ctx) and spec.kv_cache_dtype not in (
            "fp8", "fp8_e4m3"):
        error = ("TritonAttentionDiffKVBackend supports only fp8/fp8_e4m3 quantized KV cache (got "
                 f"kv_cache_dtype='{spec.kv_cache_dtype}').")
    return AttentionChoice("TRITON_ATTN_DIFFKV", (), error, notes)


def _diff_kv_fp8_cache(kv_cache_dtype: str, head_size: int, head_size_v: int, has_sinks: bool,
                       ctx: RoutingContext) -> bool:
    """flash_attn_supports_kv_cache_dtype as FlashAttentionDiffKVImpl asks it (0.34 fa_utils.py): V's head size too,
    so FA4 on SM90 serves an FP8 cache only at head sizes 512 / 512."""
    if kv_cache_dtype == "fp8_e5m2":
        return False
    version = flash_attn_version(ctx, head_size, head_size_v, has_sinks)
    sm90 = version == 3 or (version == 4 and head_size == 512 and head_size_v == 512)
    return (sm90 and capability_major(ctx) == 9) or (version == 4 and capability_major(ctx) == 10)


def select_attention_backend(spec: AttentionSpec, ctx: RoutingContext, requested: str | None = None) -> AttentionChoice:
    """get_attn_backend for one attention layer kind: the backend vLLM picks on ctx's platform and release (or
    --attention-backend `requested`), every rejection, vLLM's error and its logs on the way."""
    name = normalize_attention_backend(requested)
    if name is not None:
        error = unknown_backend_error(name, ctx)
        if error:
            return AttentionChoice(None, (), error)
    if (spec.use_mla and spec.sliding_window is not None and spec.kv_cache_dtype in ("fp8_ds_mla", "nvfp4_ds_mla")
            and ctx.profile.has("mla-sliding-window-kv")):  # MLAAttention.__init__, before it asks for a backend
        return AttentionChoice(None, (), f"Sliding-window MLA does not support kv_cache_dtype={spec.kv_cache_dtype}.")
    cfg = selector_config(spec, ctx)
    if ctx.kind == "xpu":
        return _xpu(cfg, ctx, name)
    if ctx.kind == "cpu":
        return _cpu(cfg, ctx, name)
    return _validated(cfg, spec.num_heads, ctx, name)
