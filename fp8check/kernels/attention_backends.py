"""vLLM's attention backend classes as data (every backend class read in vLLM 0.28.0, 0.33.0 and 0.34.0; what
changed between releases is a profile change, `ctx.profile.has(...)`, each read from the release wheels): one class
per vLLM attention backend, carrying the conditions of `AttentionBackend.validate_configuration`
(vllm/v1/attention/backend.py: head size, model dtype, KV cache dtype, block size, mm-prefix, MLA, sinks, sparse,
per-head quant scales, compute capability, sliding window, batch invariance, then the class's own
`supports_combination`) with vLLM's reason strings (attn-composite's composites TRITON_FLASH_ATTN / TRITON_FLASHINFER
of backends/composite.py combine two of them), and the records a selection reads and answers with. Failures vLLM only
hits after selection (an impl's `__init__`, the CPU metadata builder) are each class's `impl_error`. Each platform's
choice among these classes is fp8check.kernels.attention.

Host facts the classes read (FlashInfer importable, AMX on CPU, AITER on ROCm, VLLM_BATCH_INVARIANT) come from
the platform's `Assumptions`. What fp8check cannot see and assumes instead, each named where it is used:
AVX-512 on a CPU host (`CPU_AVX512`), the model's MLA dimensions beyond the latent size where config.json lacks
them (`MLA_DIMS`), a sparse MLA model carrying `index_topk` (DeepSeek-V3.2's 2048) and a dense one none, Python >=
3.11 (vLLM <= 0.33 prints `AttentionType.DECODER` in its config repr, a `(str, Enum)` member; 0.34's StrEnum prints
`decoder`). Everything here is torch-free.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from fp8check.core.targets.profiles import ATTENTION_READ
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.registry import Rejection

# AttentionBackendEnum (vllm/v1/attention/backends/registry.py): what --attention-backend accepts (upper-cased;
# "auto" means none), 0.34.0.
_ENUM = (
    "FLASH_ATTN", "FLASH_ATTN_DIFFKV", "TRITON_ATTN", "TRITON_ATTN_DIFFKV", "TRITON_FLASH_ATTN", "ROCM_ATTN",
    "ROCM_SEGMENTED_ATTN", "ROCM_AITER_MLA", "ROCM_AITER_TRITON_MLA", "ROCM_AITER_FA", "ROCM_AITER_MLA_SPARSE",
    "XPU_MLA_SPARSE", "TORCH_SDPA", "FLASHINFER", "FLASHINFER_TS", "TRITON_FLASHINFER", "FLASHINFER_MLA",
    "TOKENSPEED_MLA", "FLASHINFER_MLA_SPARSE", "FLASHINFER_MLA_SPARSE_SM120", "FLASHINFER_MLA_SPARSE_SM90",
    "TRITON_MLA", "CUTLASS_MLA", "FLASHMLA", "FLASHMLA_SPARSE", "FLASHMLA_SPARSE_DSV4", "FLASHINFER_MLA_SPARSE_DSV4",
    "ROCM_FLASHMLA_SPARSE_DSV4", "FLASHMLA_SPARSE_DSV41", "FLASHINFER_MLA_SPARSE_DSV41", "ROCM_FLASHMLA_SPARSE_DSV41",
    "FLASHMLA_MEGA_ATTN_DSV41", "B12X", "FLASH_ATTN_MLA", "FLASH_ATTN_MLA_SPARSE", "FLASH_ATTN_MLA_SPARSE_FA4",
    "MINIMAX_M3_SPARSE", "CUTLASS_MSA", "TRITON_MSA", "STEP5_DSA", "KIMI_K3_KV_BALANCED_MLA", "NO_ATTENTION",
    "FLEX_ATTENTION", "HPC_ATTN", "ROCM_AITER_UNIFIED_ATTN", "CPU_ATTN", "CPU_MLA", "AMX_MLA", "TURBOQUANT",
    "ROCM_OCTAVE", "ULTRAQUANT", "CUSTOM",
)
# The profile change that added each member (0.25's enum holds the rest); every release keeps this order.
_ENUM_ADDED_BY = {
    "CUTLASS_MSA": "attention-backends-027", "TRITON_MSA": "attention-backends-027", "CPU_MLA": "cpu-mla",
    "AMX_MLA": "cpu-amx-mla", "TRITON_FLASH_ATTN": "attn-composite", "TRITON_FLASHINFER": "attn-composite",
    "FLASHINFER_MLA_SPARSE_SM90": "flashinfer-mla-sparse-sm90", "FLASHMLA_SPARSE_DSV41": "attention-backends-030",
    "FLASHINFER_MLA_SPARSE_DSV41": "attention-backends-030", "B12X": "attention-backends-030",
    "FLASHMLA_MEGA_ATTN_DSV41": "attention-backends-031", "ROCM_SEGMENTED_ATTN": "attention-backends-032",
    "ULTRAQUANT": "ultraquant", "ROCM_FLASHMLA_SPARSE_DSV41": "attention-backends-033",
    "FLASH_ATTN_MLA_SPARSE_FA4": "flash-attn-mla-sparse-fa4", "STEP5_DSA": "attention-backends-033",
    "ROCM_OCTAVE": "rocm-octave", "FLASHINFER_TS": "attention-backends-034",
    "KIMI_K3_KV_BALANCED_MLA": "attention-backends-034",
}
ATTENTION_BACKEND_NAMES: tuple[str, ...] = _ENUM

# Assumed, not measured: an x86 CPU host has AVX-512 (vLLM asks torch.cpu._is_avx512_supported(); Assumptions has
# no field for it), and an MLA model's dimensions besides the latent size are DeepSeek-V3's where config.json does not
# give all three (FlashInfer MLA, TokenSpeed MLA and FlashMLA sparse check them in supports_combination; otherwise
# AttentionSpec.mla_dims carries config.json's).
CPU_AVX512 = True
MLA_DIMS = {"qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}
SPARSE_INDEX_TOPK = 2048  # DeepSeek-V3.2's index_topk: what a sparse (use_sparse) MLA model carries

UNQUANTIZED_KV = ("auto", "float16", "bfloat16")
# AttentionType values (v1/attention/backend.py): decoder self-attention, and the other kinds a backend may support.
DECODER, ENCODER_DECODER = "decoder", "encoder_decoder"
ALL_ATTN_TYPES = (DECODER, "encoder", "encoder_only", ENCODER_DECODER)


class AttentionSpec(NamedTuple):
    """What the selector sees for one attention layer kind, per rank. MLA: head_size is kv_lora_rank +
    qk_rope_head_dim (576 for DeepSeek-V3), num_kv_heads 1; vLLM's MLA layer passes no sinks or per-head scales to
    the selector, and its sliding window only with mla-sliding-window-kv, so those fields are ignored for it."""

    head_size: int
    num_heads: int
    num_kv_heads: int
    kv_cache_dtype: str                # resolved vLLM CacheDType string: "auto", "bfloat16", "fp8", "fp8_e5m2", ...
    model_dtype: str = "bfloat16"
    use_mla: bool = False
    has_sink: bool = False
    sliding_window: int | None = None
    per_head_scales: bool = False      # compressed-tensors kv_cache_scheme strategy attn_head
    use_sparse: bool = False
    block_size: int | None = None      # None: vLLM's default (the selector sees None unless --block-size is given)
    use_mm_prefix: bool = False        # the model is an mm-prefix LM (ModelConfig.is_mm_prefix_lm): Attention asks
    #                                    for bidirectional attention over image tokens
    index_topk: int | None = None      # a sparse model's config.json index_topk (None: DeepSeek-V3.2's 2048)
    mla_dims: tuple[int, int, int] | None = None  # MLA (qk_nope, qk_rope, v head dims) of config.json (None: MLA_DIMS)
    # AttentionType's value (v1/attention/backend.py): "decoder", or "encoder_decoder" for an encoder-decoder model's
    # cross-attention (layers/attention/cross_attention.py CrossAttention asks the selector with it).
    attn_type: str = DECODER
    # The model is an encoder-decoder (ModelConfig.attn_type "encoder_decoder": hf_config.is_encoder_decoder), which
    # the ROCm selector reads for every layer of it.
    encoder_decoder_model: bool = False


def _mla_dims(cfg: SelectorConfig) -> dict[str, int]:
    """The model's MLA head dimensions: config.json's, else DeepSeek-V3's (MLA_DIMS, assumed)."""
    return MLA_DIMS if cfg.mla_dims is None else dict(zip(MLA_DIMS, cfg.mla_dims))


class AttentionChoice(NamedTuple):
    """The backend vLLM selects, or its error. `rejected`: the backends vLLM found invalid that rank ahead of the
    chosen one (all of them when none is valid), in vLLM's order; `error`: selection's error, or the chosen
    backend's own refusal after selection; `notes`: vLLM's info / warning logs on the way."""

    backend: str | None
    rejected: tuple[Rejection, ...]
    error: str | None
    notes: tuple[str, ...] = ()


def exactly_read(ctx: RoutingContext) -> bool:
    """The releases whose every backend class was read; the others follow them through their profile changes."""
    return ctx.profile.name in ATTENTION_READ


def capability_major(ctx: RoutingContext) -> int:
    return (ctx.cc or 0) // 10


def is_quantized_kv_cache(kv_cache_dtype: str | None, ctx: RoutingContext) -> bool:
    """vLLM's is_quantized_kv_cache: vllm/utils/torch_utils.py's (fp8*, nvfp4*, *per_token_head), or with
    kv-quant-mode v1/kv_cache_interface.py's (get_kv_quant_mode != NONE), which also counts the turboquant_*,
    octave_* and ultraquant_* caches. (0.28-0.32 backends import one or the other; they agree on every FP8 and
    bf16 cache.)"""
    if kv_cache_dtype is None:
        return False
    prefixes = ("fp8", "nvfp4") + (("turboquant_", "octave_", "ultraquant_") if ctx.profile.has("kv-quant-mode")
                                   else ())
    return kv_cache_dtype.startswith(prefixes) or kv_cache_dtype.endswith("per_token_head")


def _batch_invariant(ctx: RoutingContext) -> bool:
    return ctx.platform.assumptions.batch_invariant


# --- FlashAttention's version and FP8 support (vllm/v1/attention/backends/fa_utils.py) --------------------------

def _fa_supported(version: int, ctx: RoutingContext) -> bool:
    """vllm_flash_attn/flash_attn_interface.py: FA2 needs cc >= 8.0, FA3 the sm90 family, FA4 9.x/10.x/11.x (the
    CUDA wheels ship all three)."""
    if version == 2:
        return (ctx.cc or 0) >= 80
    return capability_major(ctx) == 9 if version == 3 else capability_major(ctx) in (9, 10, 11)


def flash_attn_version(ctx: RoutingContext, head_size: int | None = None, head_size_v: int | None = None,
                       has_sinks: bool = False, block_size: int | None = None, fa4_hd256: bool = False,
                       kv_cache_dtype: str | None = None, mm_prefix_lm: bool = False) -> int | None:
    """get_flash_attn_version: 2 on XPU, None on ROCm and where no FA version runs (CUDA below sm80). With
    fa4-hd256, FA4's head-256 kernel falls back to FA2 for sinks, a quantized cache, a block size off 128 and an
    mm-prefix model (`mm_prefix_lm`; _fa4_hd256_fallback_reason)."""
    if ctx.kind == "xpu":
        return 2
    if ctx.kind != "cuda":
        return None
    major = capability_major(ctx)
    version = 3 if major == 9 and _fa_supported(3, ctx) else 4 if major == 10 and _fa_supported(4, ctx) else 2
    if version == 3 and major == 9 and _fa_supported(4, ctx) and head_size is not None and head_size > 256:
        version = 4  # "FA3 does not support head_size={head_size} on SM90: upgrading FlashAttention 3 -> 4"
    if (version == 3 and major == 9 and _fa_supported(4, ctx) and has_sinks and head_size is not None
            and head_size_v is not None and head_size != head_size_v):
        version = 4  # "Diff-KV with sinks: upgrading FlashAttention 3 -> 4"
    if _batch_invariant(ctx) and version == 4:
        version = 2
    if ctx.profile.has("fa4-hd256"):
        hd256 = head_size == 256 and head_size_v in (None, 256) and major in (10, 11)
        if version == 4 and hd256:
            if (not fa4_hd256 or has_sinks or is_quantized_kv_cache(kv_cache_dtype, ctx)
                    or (block_size or 0) % 128 or mm_prefix_lm):
                version = 2
        tmem_fits = (head_size == 256 and head_size_v in (None, 256)) or (head_size == 192 and head_size_v == 128)
        if version == 4 and major >= 10 and head_size is not None and head_size > 128 and not tmem_fits:
            version = 2
    else:
        if version == 4 and major >= 10 and head_size == 256:
            version = 2
        if (version == 4 and major >= 10 and head_size is not None and head_size > 128
                and not (head_size == 192 and head_size_v == 128)):
            version = 2
    return version if _fa_supported(version, ctx) else None


def flash_attn_supports_kv_cache_dtype(kv_cache_dtype: str, ctx: RoutingContext, head_size: int | None = None,
                                       has_sinks: bool = False, block_size: int | None = None,
                                       fa4_hd256: bool = False) -> bool:
    """flash_attn_supports_kv_cache_dtype: never fp8_e5m2; always on XPU; else FA3 on sm90, FA4 on sm100
    (fa4-sm90-d512-fp8-kv: also FA4 on sm90 with head_size 512 or unknown; 0.34 asks the same of head_size_v,
    which is head_size here)."""
    if kv_cache_dtype == "fp8_e5m2":
        return False
    if ctx.kind == "xpu":
        return True
    version = flash_attn_version(ctx, head_size, head_size, has_sinks, block_size, fa4_hd256, kv_cache_dtype)
    sm90 = version == 3 or (ctx.profile.has("fa4-sm90-d512-fp8-kv") and version == 4 and head_size in (None, 512))
    return (sm90 and capability_major(ctx) == 9) or (version == 4 and capability_major(ctx) == 10)


# --- the backend classes ------------------------------------------------------------------------------------------

class SelectorConfig(NamedTuple):
    """AttentionSelectorConfig (vllm/v1/attention/selector.py) as fp8check fills it: decoder attention (or an
    encoder-decoder model's cross-attention), no KV connector, no context parallelism, no adaptive verification."""

    head_size: int
    dtype: str
    kv_cache_dtype: str
    block_size: int | None
    use_mla: bool
    has_sink: bool
    use_sparse: bool
    use_per_head_quant_scales: bool
    has_sliding_window: bool
    use_batch_invariant: bool
    use_mm_prefix: bool = False
    index_topk: int | None = None      # not the selector's: the sparse backends read it from hf_text_config
    num_heads: int | None = None       # not the selector's: query heads per rank (model_config, FA4 sparse MLA)
    mla_dims: tuple[int, int, int] | None = None  # not the selector's: the MLA backends read them from hf_text_config
    attn_type: str = DECODER
    encoder_decoder_model: bool = False  # not the selector's: the ROCm platform reads the model config's


def selector_config(spec: AttentionSpec, ctx: RoutingContext) -> SelectorConfig:
    """What the layer hands get_attn_backend: Attention passes sinks, per-head scales, the sliding window and
    use_mm_prefix (layers/attention/attention.py); MLAAttention (mla_attention.py) passes none of them, but for its
    sliding window from mla-sliding-window-kv."""
    dense = not spec.use_mla
    window = dense or ctx.profile.has("mla-sliding-window-kv")
    return SelectorConfig(spec.head_size, spec.model_dtype, spec.kv_cache_dtype, spec.block_size, spec.use_mla,
                          dense and spec.has_sink, spec.use_sparse, dense and spec.per_head_scales,
                          window and spec.sliding_window is not None, _batch_invariant(ctx),
                          dense and spec.use_mm_prefix, spec.index_topk, spec.num_heads, spec.mla_dims,
                          spec.attn_type, spec.encoder_decoder_model)


def decoder_type(ctx: RoutingContext, attn_type: str = DECODER) -> str:
    """An AttentionType (AttentionType.DECODER unless given) as vLLM's messages format it: a `(str, Enum)` member
    until 0.33, a StrEnum's value from 0.34 (v1/attention/backend.py)."""
    return attn_type if ctx.profile.has("attention-type-strenum") else f"AttentionType.{attn_type.upper()}"


def config_repr(cfg: SelectorConfig, ctx: RoutingContext) -> str:
    """AttentionSelectorConfig.__repr__ of the release (each field after 0.25's with the change that added it)."""
    has = ctx.profile.has
    fields = [("head_size", cfg.head_size), ("dtype", f"torch.{cfg.dtype}"), ("kv_cache_dtype", cfg.kv_cache_dtype),
              ("block_size", cfg.block_size), ("use_mla", cfg.use_mla), ("has_sink", cfg.has_sink),
              ("use_sparse", cfg.use_sparse), ("use_mm_prefix", cfg.use_mm_prefix),
              ("use_per_head_quant_scales", cfg.use_per_head_quant_scales),
              ("attn_type", decoder_type(ctx, cfg.attn_type))]
    if has("attn-sliding-window"):
        fields.append(("has_sliding_window", cfg.has_sliding_window))
    fields += [("use_non_causal", False), ("use_batch_invariant", cfg.use_batch_invariant),
               ("use_kv_connector", False)]
    if has("attn-adaptive-verification"):
        fields.append(("use_adaptive_verification", False))
    if has("attn-selector-pcp"):
        fields.append(("use_pcp", False))
    if has("attn-selector-dcp"):
        fields.append(("use_dcp", False))
    if has("attn-selector-rswa"):
        fields.append(("use_rswa", False))
    return "AttentionSelectorConfig(" + ", ".join(f"{key}={value}" for key, value in fields) + ")"


class Backend:
    """One vLLM AttentionBackend class. `name` is its AttentionBackendEnum name, `source` the vLLM file it is read
    from; the ClassVars are its supported_dtypes / supported_kv_cache_dtypes / get_supported_head_sizes (empty:
    any) / get_supported_kernel_block_sizes (a block size passes when it is a multiple of one) / is_mla /
    is_sparse / supports_sink / supports_sliding_window / supports_batch_invariance / supports_mm_prefix /
    supports_attn_type (`attn_types`: AttentionType values, read in 0.33 and 0.34).
    `library`: the module its file imports at the top, so that the class is unavailable (ImportError) without it.
    `caveat`: fp8check's note, when --attention-backend forces the backend, on what it does that selection does not
    say."""

    name: ClassVar[str]
    source: ClassVar[str]
    dtypes: ClassVar[tuple[str, ...]] = ("float16", "bfloat16")
    kv_cache_dtypes: ClassVar[tuple[str, ...]] = UNQUANTIZED_KV
    head_sizes: ClassVar[tuple[int, ...]] = ()
    block_sizes: ClassVar[tuple[int, ...]] = (1,)
    mla: ClassVar[bool] = False
    sparse: ClassVar[bool] = False
    sink: ClassVar[bool] = False
    sliding_window: ClassVar[bool] = False
    batch_invariant: ClassVar[bool] = False
    mm_prefix: ClassVar[bool] = False
    attn_types: ClassVar[tuple[str, ...]] = (DECODER,)
    library: ClassVar[str | None] = None
    caveat: ClassVar[str | None] = None

    @classmethod
    def supported_kv_cache_dtypes(cls, ctx: RoutingContext) -> tuple[str, ...]:
        return cls.kv_cache_dtypes

    @classmethod
    def supports_head_size(cls, head_size: int, ctx: RoutingContext) -> bool:
        return not cls.head_sizes or head_size in cls.head_sizes

    @classmethod
    def supports_kv_cache_dtype(cls, kv_cache_dtype: str, ctx: RoutingContext) -> bool:
        return kv_cache_dtype in cls.supported_kv_cache_dtypes(ctx)

    @classmethod
    def supports_block_size(cls, block_size: int | None, ctx: RoutingContext) -> bool:
        return block_size is None or any(block_size % base == 0 for base in cls.block_sizes)

    @classmethod
    def supports_sink(cls, ctx: RoutingContext) -> bool:
        return cls.sink

    @classmethod
    def supports_sliding_window(cls, ctx: RoutingContext) -> bool:
        return cls.sliding_window

    @classmethod
    def supports_mm_prefix(cls, ctx: RoutingContext) -> bool:
        return cls.mm_prefix

    @classmethod
    def supports_per_head_quant_scales(cls, ctx: RoutingContext) -> bool:
        return False

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return True

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        return None

    @classmethod
    def unavailable(cls, ctx: RoutingContext) -> str | None:
        """The ImportError vLLM catches while loading the class, as the release words it."""
        if cls.library == "flashinfer" and not ctx.platform.assumptions.flashinfer:
            if ctx.profile.has("attn-import-error-text"):
                return "ModuleNotFoundError: No module named 'flashinfer'"
            return "ImportError"
        return None

    @classmethod
    def invalid_reasons(cls, cfg: SelectorConfig, ctx: RoutingContext) -> list[str]:
        """validate_configuration, reason by reason in vLLM's order (the unavailable class: its ImportError)."""
        missing = cls.unavailable(ctx)
        if missing:
            return [missing]
        reasons = []
        if not cls.supports_head_size(cfg.head_size, ctx):
            reasons.append("head_size not supported")
        if cfg.dtype not in cls.dtypes:
            reasons.append("dtype not supported")
        if not cls.supports_kv_cache_dtype(cfg.kv_cache_dtype, ctx):
            reasons.append("kv_cache_dtype not supported")
        if not cls.supports_block_size(cfg.block_size, ctx):
            reasons.append("block_size not supported")
        if cfg.use_mm_prefix and not cls.supports_mm_prefix(ctx):
            reasons.append("partial multimodal token full attention not supported")
        if cfg.use_mla != cls.mla:
            reasons.append("MLA not supported" if cfg.use_mla else "non-MLA not supported")
        if cfg.has_sink and not cls.supports_sink(ctx):
            reasons.append("attention sinks not supported")
        if cfg.use_sparse != cls.sparse:
            reasons.append("sparse not supported" if cfg.use_sparse else "non-sparse not supported")
        if cfg.use_per_head_quant_scales and not cls.supports_per_head_quant_scales(ctx):
            reasons.append("per-head quant scales not supported")
        if not cls.supports_compute_capability(ctx):
            reasons.append("compute capability not supported")
        if cfg.attn_type not in cls.attn_types:
            reasons.append(f"attention type {decoder_type(ctx, cfg.attn_type)} not supported")
        if cfg.has_sliding_window and not cls.supports_sliding_window(ctx) and ctx.profile.has("attn-sliding-window"):
            reasons.append("sliding window not supported")
        if cfg.use_batch_invariant and not cls.batch_invariant:
            reasons.append("batch invariance not supported")
        combination = cls.supports_combination(cfg, ctx)
        if combination is not None:
            reasons.append(combination)
        return reasons

    @classmethod
    def impl_error(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        """What the backend's impl (or metadata builder) raises once selected."""
        return None


class FlashAttention(Backend):
    name, source = "FLASH_ATTN", "vllm/v1/attention/backends/flash_attn.py (FlashAttentionBackend)"
    kv_cache_dtypes = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3")
    block_sizes = (16,)
    sliding_window = batch_invariant = True
    attn_types = ALL_ATTN_TYPES

    @classmethod
    def supports_head_size(cls, head_size: int, ctx: RoutingContext) -> bool:
        if head_size % 8:
            return False
        if head_size <= 256:
            return True
        # "The XPU SYCL kernels support head sizes up to 512"
        xpu_512 = ctx.kind == "xpu" and ctx.profile.has("xpu-fa-d512")
        return head_size <= 512 and (xpu_512 or (ctx.kind == "cuda" and _fa_supported(4, ctx)))

    @classmethod
    def supports_kv_cache_dtype(cls, kv_cache_dtype: str, ctx: RoutingContext) -> bool:
        """Before fa-fp8-kv: no fp8 listed, fp8 / fp8_e4m3 accepted on XPU or FA3 on sm90 here instead."""
        if not ctx.profile.has("fa-fp8-kv"):
            if kv_cache_dtype in ("fp8", "fp8_e4m3"):
                return ctx.kind == "xpu" or (flash_attn_version(ctx) == 3 and capability_major(ctx) == 9)
            return kv_cache_dtype in UNQUANTIZED_KV
        if kv_cache_dtype not in cls.kv_cache_dtypes:
            return False
        return (not is_quantized_kv_cache(kv_cache_dtype, ctx)
                or flash_attn_supports_kv_cache_dtype(kv_cache_dtype, ctx))

    @classmethod
    def supports_sink(cls, ctx: RoutingContext) -> bool:
        return flash_attn_version(ctx) in (3, 4)

    @classmethod
    def supports_mm_prefix(cls, ctx: RoutingContext) -> bool:
        """is_fa_version_supported(4): the CUDA wheels' FA4 (9.x, 10.x, 11.x); never on XPU or ROCm."""
        return ctx.kind == "cuda" and _fa_supported(4, ctx)

    @classmethod
    def supports_per_head_quant_scales(cls, ctx: RoutingContext) -> bool:
        version = flash_attn_version(ctx)
        return version is not None and version >= 3

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return (ctx.cc or 0) >= 80

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        quantized = is_quantized_kv_cache(cfg.kv_cache_dtype, ctx)
        if ctx.profile.has("fa-fp8-kv-wording") and ctx.cc == 90 and quantized and cfg.head_size == 512:
            if cfg.block_size is not None and cfg.block_size % 64:
                return "SM90 d512 FP8 KV requires a block size divisible by 64"
            if cfg.use_sparse:
                return "SM90 d512 FP8 KV does not support block sparsity"
        if cfg.has_sink and ctx.cc is not None and ctx.cc < 90:
            return "sink not supported on compute capability < 9.0"
        if cfg.use_mm_prefix and quantized and ctx.cc == 90 and ctx.profile.has("sm90-fp8-kv-mm-prefix"):
            return "SM90 FP8 KV with mm_prefix requires Triton"
        if ctx.profile.has("fa-fp8-kv") and quantized and not flash_attn_supports_kv_cache_dtype(
                cfg.kv_cache_dtype, ctx, cfg.head_size, cfg.has_sink, cfg.block_size, fa4_hd256=True):
            if ctx.profile.has("fa-fp8-kv-wording"):
                return "FP8 KV requires FA3 (SM90), equal-d512 FA4 (SM90), or FA4 (SM100)."
            if ctx.profile.has("fa4-sm90-d512-fp8-kv"):
                return "FP8 KV cache requires FA3 on SM90, FA4 with head_size=512 on SM90, or FA4 on SM100"
            return "FP8 KV cache requires FA3 on SM90 or FA4 on SM100"
        # get_flash_attn_version(head_size=..., has_sinks=...) (0.29+: also the block size, supports_fa4_hd256).
        if cfg.use_mm_prefix and flash_attn_version(ctx, cfg.head_size, None, cfg.has_sink, cfg.block_size, True,
                                                    cfg.kv_cache_dtype, mm_prefix_lm=True) != 4:
            return ("mm_prefix (PrefixLM bidirectional attention) requires FlashAttention v4, which does not resolve "
                    "for this head_size")
        return None

    @classmethod
    def impl_error(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        """FlashAttentionImpl.__init__ (fa-fp8-kv): on XPU this is where fp8_e5m2 fails, selection never checks it."""
        if (ctx.profile.has("fa-fp8-kv") and is_quantized_kv_cache(cfg.kv_cache_dtype, ctx)
                and not flash_attn_supports_kv_cache_dtype(cfg.kv_cache_dtype, ctx, cfg.head_size, cfg.has_sink,
                                                           fa4_hd256=True)):
            return f"FlashAttention does not support {cfg.kv_cache_dtype} kv-cache on this device."
        return None


class FlashInfer(Backend):
    name, source = "FLASHINFER", "vllm/v1/attention/backends/flashinfer.py (FlashInferBackend)"
    kv_cache_dtypes = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4", "nvfp4_4over6")
    head_sizes = (64, 128, 256, 512)
    block_sizes = (16, 32, 64)
    sliding_window = True
    library = "flashinfer"

    @classmethod
    def supports_kv_cache_dtype(cls, kv_cache_dtype: str, ctx: RoutingContext) -> bool:
        if kv_cache_dtype.startswith("nvfp4"):
            return capability_major(ctx) == 10 and not _batch_invariant(ctx)
        return super().supports_kv_cache_dtype(kv_cache_dtype, ctx)

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return 80 <= (ctx.cc or 0) <= 121

    @classmethod
    def supports_sink(cls, ctx: RoutingContext) -> bool:
        """TRT-LLM attention: SM100 (prefill and decode); SM12x XQA decode; flashinfer-sm90-sinks: also sm90 XQA
        decode. Both off under batch invariance; NVIDIA's cubin artifactory is assumed reachable."""
        if _batch_invariant(ctx):
            return False
        return capability_major(ctx) in (10, 12) or (ctx.cc == 90 and ctx.profile.has("flashinfer-sm90-sinks"))


class FlashInferTS(Backend):
    """attention-backends-034: FlashInfer's task-scheduled (prims_ts) paged decode, written for DFlash / DSpark
    drafters; in no priority list, so only --attention-backend picks it. flashinfer is imported when the builder
    plans its first batch, not when the class loads."""

    name, source = "FLASHINFER_TS", "vllm/v1/attention/backends/flashinfer_ts.py (FlashInferTSBackend)"
    kv_cache_dtypes = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3")
    head_sizes = (64, 128, 256)
    block_sizes = (16, 32, 64, 128)
    sliding_window = True
    caveat = ("fp8check: FLASHINFER_TS plans uniform decode blocks of at most max_decode_query_len tokens; a wider "
              "batch (every prefill) gets no plan and the layer's output is left unwritten (FlashInferTSMetadataBuilder"
              ".build)")

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return ctx.cc in (100, 103, 107)  # _TS_CAPABILITIES

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        if cfg.use_mla or cfg.use_sparse or cfg.use_mm_prefix:
            return "FLASHINFER_TS supports dense non-MLA attention only"
        if cfg.has_sink:
            return "FLASHINFER_TS does not support attention sinks"
        return None

    @classmethod
    def impl_error(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        """_require_prims_ts's RuntimeError, raised when the metadata builder plans a batch."""
        if not ctx.platform.assumptions.flashinfer:
            return "FLASHINFER_TS needs flashinfer-python>=0.7.1 (flashinfer.attention.prims_ts is missing)."
        return None


class TritonAttention(Backend):
    name, source = "TRITON_ATTN", "vllm/v1/attention/backends/triton_attn.py (TritonAttentionBackend)"
    dtypes = ("float16", "bfloat16", "float32")
    kv_cache_dtypes = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "int4_per_token_head",
                       "int8_per_token_head", "fp8_per_token_head")
    block_sizes = (16,)
    sink = sliding_window = batch_invariant = mm_prefix = True
    attn_types = ALL_ATTN_TYPES

    @classmethod
    def supports_head_size(cls, head_size: int, ctx: RoutingContext) -> bool:
        return head_size >= 32

    @classmethod
    def impl_error(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        return triton_impl_error("Triton attention backend", cfg, ctx)


def triton_impl_error(layer: str, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
    """TritonAttentionImpl.__init__ / TritonMLAImpl.__init__ on CUDA: Triton's fp8e4nv needs SM89, bf16 SM80."""
    if ctx.kind != "cuda" or ctx.cc is None:
        return None
    cap, dev = f"{ctx.cc // 10}.{ctx.cc % 10}", ctx.platform.label
    if cfg.kv_cache_dtype.startswith("fp8") and ctx.cc < 89:
        suggested = "float16" if ctx.cc < 80 else "bfloat16"
        return (f"FP8 KV cache is not supported by the {layer} on {dev} (compute capability {cap}); native FP8 "
                f"(fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype {suggested}.")
    if cfg.kv_cache_dtype == "bfloat16" and ctx.cc < 80:
        by = " by the Triton MLA backend" if cfg.use_mla else ""  # TritonAttentionImpl names no backend here
        return (f"bfloat16 KV cache is not supported{by} on {dev} (compute capability {cap}); bfloat16 requires "
                "SM80+. Re-run with --kv-cache-dtype float16.")
    return None


class FlexAttention(Backend):
    name, source = "FLEX_ATTENTION", "vllm/v1/attention/backends/flex_attention.py (FlexAttentionBackend)"
    dtypes = ("float16", "bfloat16", "float32")
    block_sizes = (16,)
    sliding_window = batch_invariant = mm_prefix = True
    attn_types = (DECODER, "encoder_only")


class CompositeBackend(Backend):
    """create_composite_attention_backend (vllm/v1/attention/backends/composite.py, 0.30+) with
    MMPrefixAttentionRouting: batches with an image mask run `general` (variant 0, the mm-prefix one), causal
    batches `causal`. Head size, dtype, KV cache dtype, compute capability and sliding window must suit both;
    supports_mm_prefix asks the general backend only; sinks, per-head scales and batch invariance are
    AttentionBackend's defaults (no); each backend's supports_combination runs in turn (the causal one without
    mm-prefix), its reason prefixed with that backend's name. `block_sizes` is the composite's kernel block size."""

    general: ClassVar[type[Backend]] = TritonAttention
    causal: ClassVar[type[Backend]]
    composite_head_sizes: ClassVar[tuple[int, ...]] = (256, 512)
    device_major: ClassVar[int | None] = None
    mm_prefix = True

    @classmethod
    def _both(cls) -> tuple[type[Backend], type[Backend]]:
        return cls.general, cls.causal

    @classmethod
    def supported_kv_cache_dtypes(cls, ctx: RoutingContext) -> tuple[str, ...]:
        return tuple(d for d in cls.general.supported_kv_cache_dtypes(ctx) if cls.supports_kv_cache_dtype(d, ctx))

    @classmethod
    def supports_head_size(cls, head_size: int, ctx: RoutingContext) -> bool:
        return head_size in cls.composite_head_sizes and all(b.supports_head_size(head_size, ctx) for b in cls._both())

    @classmethod
    def supports_kv_cache_dtype(cls, kv_cache_dtype: str, ctx: RoutingContext) -> bool:
        return all(b.supports_kv_cache_dtype(kv_cache_dtype, ctx) for b in cls._both())

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return ((cls.device_major is None or capability_major(ctx) == cls.device_major)
                and all(b.supports_compute_capability(ctx) for b in cls._both()))

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        for backend, asked in ((cls.general, cfg), (cls.causal, cfg._replace(use_mm_prefix=False))):
            reason = backend.supports_combination(asked, ctx)
            if reason:
                return f"{backend.name}: {reason}"
        return None

    @classmethod
    def unavailable(cls, ctx: RoutingContext) -> str | None:
        return cls.general.unavailable(ctx) or cls.causal.unavailable(ctx)

    @classmethod
    def impl_error(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        """CompositeAttentionImpl.__init__ builds the general impl, then the causal one."""
        return cls.general.impl_error(cfg, ctx) or cls.causal.impl_error(cfg, ctx)


class _CausalFlashAttention(FlashAttention):
    """triton_flash_attn.py's _FABackend (before triton-flash-attn-fa3: _FA4Backend): FlashAttention on Hopper
    (xpu-triton-flash-attn: any XPU too) that needs FA3 or FA4 (FA4 before triton-flash-attn-fa3)."""

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        if ctx.kind == "xpu" and ctx.profile.has("xpu-triton-flash-attn"):
            return True
        # 0.30-0.32 put the Hopper restriction in the composite's device_major=9 instead: the same outcome.
        return capability_major(ctx) == 9 and super().supports_compute_capability(ctx)

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        reason = super().supports_combination(cfg, ctx)
        if reason is not None or (ctx.kind == "xpu" and ctx.profile.has("xpu-triton-flash-attn")):
            return reason
        version = flash_attn_version(ctx, cfg.head_size, None, cfg.has_sink, cfg.block_size, True, cfg.kv_cache_dtype)
        if not ctx.profile.has("triton-flash-attn-fa3"):
            return None if version == 4 else "causal route requires FlashAttention v4"
        return None if version in (3, 4) else "causal route requires FlashAttention v3 or v4"


class TritonFlashAttention(CompositeBackend):
    name = "TRITON_FLASH_ATTN"
    source = "vllm/v1/attention/backends/triton_flash_attn.py (TritonFlashAttentionBackend)"
    causal = _CausalFlashAttention
    dtypes = ("float16", "bfloat16")
    block_sizes = (16,)   # MultipleOf(16) of both
    sliding_window = True


class TritonFlashInfer(CompositeBackend):
    name = "TRITON_FLASHINFER"
    source = "vllm/v1/attention/backends/triton_flashinfer.py (TritonFlashInferBackend)"
    causal = FlashInfer
    dtypes = ("float16", "bfloat16")
    block_sizes = (64,)   # kernel_block_sizes=(64,)
    device_major = 10
    sliding_window = True


class TurboQuant(Backend):
    name, source = "TURBOQUANT", "vllm/v1/attention/backends/turboquant_attn.py (TurboQuantAttentionBackend)"
    kv_cache_dtypes: ClassVar[tuple[str, ...]] = ("turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc",
                                                  "turboquant_3bit_nc")
    block_sizes = (16, 32, 64, 128)

    @classmethod
    def supports_kv_cache_dtype(cls, kv_cache_dtype: str, ctx: RoutingContext) -> bool:
        return kv_cache_dtype.startswith("turboquant_")


class UltraQuant(TurboQuant):
    name, source = "ULTRAQUANT", "vllm/v1/attention/backends/ultraquant_attn.py (UltraQuantAttentionBackend)"
    dtypes = ("bfloat16",)
    kv_cache_dtypes = ("ultraquant_4bit",)

    @classmethod
    def supports_kv_cache_dtype(cls, kv_cache_dtype: str, ctx: RoutingContext) -> bool:
        return kv_cache_dtype == "ultraquant_4bit"


class RocmAttention(Backend):
    name, source = "ROCM_ATTN", "vllm/v1/attention/backends/rocm_attn.py (RocmAttentionBackend)"
    dtypes: ClassVar[tuple[str, ...]] = ("float16", "bfloat16", "float32")
    kv_cache_dtypes: ClassVar[tuple[str, ...]] = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2")
    head_sizes: ClassVar[tuple[int, ...]] = (32, 64, 80, 96, 128, 160, 192, 224, 256)
    block_sizes = (16,)
    sliding_window = True
    attn_types: ClassVar[tuple[str, ...]] = (DECODER, "encoder", "encoder_only")  # no cross-attention

    @classmethod
    def supports_mm_prefix(cls, ctx: RoutingContext) -> bool:
        """True until rocm-attn-no-mm-prefix: "# Not implemented" (also ROCM_AITER_UNIFIED_ATTN's)."""
        return not ctx.profile.has("rocm-attn-no-mm-prefix")


def _cdna3_or_newer(ctx: RoutingContext) -> bool:
    """get_cdna_version() > 2 (platforms/rocm.py): gfx94x (CDNA3) and gfx95x (CDNA4)."""
    return (ctx.platform.arch or "").startswith(("gfx94", "gfx95"))


class RocmAiterFlashAttention(Backend):
    name, source = "ROCM_AITER_FA", "vllm/v1/attention/backends/rocm_aiter_fa.py (AiterFlashAttentionBackend)"
    kv_cache_dtypes = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2")
    head_sizes = (64, 128, 256)
    block_sizes = (16, 32)
    sink = sliding_window = True

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return _cdna3_or_newer(ctx)


class RocmAiterUnifiedAttention(RocmAttention):
    name = "ROCM_AITER_UNIFIED_ATTN"
    source = "vllm/v1/attention/backends/rocm_aiter_unified_attn.py (RocmAiterUnifiedAttentionBackend)"
    dtypes = ("float16", "bfloat16")
    head_sizes = ()
    sink = True
    attn_types = ALL_ATTN_TYPES

    @classmethod
    def supports_head_size(cls, head_size: int, ctx: RoutingContext) -> bool:
        return head_size >= 32


class RocmOctave(Backend):
    name, source = "ROCM_OCTAVE", "vllm/v1/attention/backends/rocm_octave_attn.py (RocmOctaveAttentionBackend)"
    kv_cache_dtypes = ("octave_k3v4", "octave_k3v3", "octave_k3v3_compact")
    head_sizes = (256,)
    block_sizes = (16,)

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        arch = ctx.platform.arch or ""
        return arch.startswith("gfx94") or arch.startswith("gfx11")  # CDNA3 or RDNA3


class CPUAttention(Backend):
    name, source = "CPU_ATTN", "vllm/v1/attention/backends/cpu_attn.py (CPUAttentionBackend)"
    dtypes = ("float16", "bfloat16", "float32")
    attn_types = ALL_ATTN_TYPES
    kv_cache_dtypes = ("auto", "fp8", "fp8_e4m3", "fp8_e5m2")
    head_sizes = (32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512)
    sliding_window = True

    @classmethod
    def supports_kv_cache_dtype(cls, kv_cache_dtype: str, ctx: RoutingContext) -> bool:
        """cpu-attn-kv-check's override (the FP8 ISA requirement of _get_attn_isa); none before."""
        if kv_cache_dtype in UNQUANTIZED_KV:
            return True
        if kv_cache_dtype not in cls.kv_cache_dtypes:
            return False
        return not ctx.profile.has("cpu-attn-kv-check") or _cpu_fp8_isa(ctx)

    @classmethod
    def impl_error(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        """_get_attn_isa, run by the metadata builder (and 0.28's impl) once CPU_ATTN is chosen."""
        if not is_quantized_kv_cache(cfg.kv_cache_dtype, ctx):
            return None
        if cfg.head_size % 32 and cfg.head_size % 16 == 0:
            return "FP8 KV cache requires head_size divisible by 32 on CPU."
        if not _cpu_fp8_isa(ctx):
            return "FP8 KV cache on CPU requires x86 with AVX-512 or AMX."
        return None


def _cpu_fp8_isa(ctx: RoutingContext) -> bool:
    return ctx.platform.assumptions.cpu_amx or CPU_AVX512


# MLA (vllm/model_executor/layers/attention/mla_attention.py MLACommonBackend and v1/attention/backends/mla/).

class MLABackend(Backend):
    """MLACommonBackend: head sizes 320 and 576 (mla-d512: also 512)."""

    mla = True

    @classmethod
    def supports_head_size(cls, head_size: int, ctx: RoutingContext) -> bool:
        if cls.head_sizes:
            return head_size in cls.head_sizes
        return head_size in ((320, 512, 576) if ctx.profile.has("mla-d512") else (320, 576))


def _flash_attn_supports_mla(ctx: RoutingContext) -> bool:
    return ctx.kind == "xpu" or (ctx.kind == "cuda" and capability_major(ctx) == 9)


class FlashAttnMLA(MLABackend):
    name, source = "FLASH_ATTN_MLA", "vllm/v1/attention/backends/mla/flashattn_mla.py (FlashAttnMLABackend)"
    block_sizes = (16,)
    batch_invariant = True

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return capability_major(ctx) == 9

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        return None if _flash_attn_supports_mla(ctx) else "FlashAttention MLA not supported on this device"


class XPUFlashAttnMLA(FlashAttnMLA):
    """xpu-flash-attn-mla: what XPU tries first for MLA; its name stays FLASH_ATTN_MLA."""

    source = "vllm/v1/attention/backends/mla/flashattn_mla.py (XPUFlashAttnMLABackend)"
    head_sizes = (576,)
    block_sizes = (64,)

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return True


class FlashMLA(MLABackend):
    name, source = "FLASHMLA", "vllm/v1/attention/backends/mla/flashmla.py (FlashMLABackend)"
    kv_cache_dtypes = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3")
    block_sizes = (64,)

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return capability_major(ctx) in (9, 10)

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        """is_flashmla_dense_supported / is_flashmla_sparse_supported (v1/attention/ops/flashmla.py); the CUDA
        wheels build vllm._flashmla_C."""
        if cfg.use_sparse:
            if capability_major(ctx) in (9, 10):
                return None
            return "FlashMLA Sparse is only supported on Hopper and Blackwell DC devices."
        return None if capability_major(ctx) == 9 else "FlashMLA Dense is only supported on Hopper devices."


class FlashInferMLA(MLABackend):
    name, source = "FLASHINFER_MLA", "vllm/v1/attention/backends/mla/flashinfer_mla.py (FlashInferMLABackend)"
    kv_cache_dtypes = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3")
    block_sizes = (32, 64)
    library = "flashinfer"

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return capability_major(ctx) == 10

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        nope = _mla_dims(cfg)["qk_nope_head_dim"]
        if nope not in (64, 128, 192):
            return f"FlashInfer MLA kernel requires qk_nope_head_dim in [64, 128, 192], but got {nope}"
        return None


class CutlassMLA(MLABackend):
    name, source = "CUTLASS_MLA", "vllm/v1/attention/backends/mla/cutlass_mla.py (CutlassMLABackend)"
    kv_cache_dtypes = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3")
    block_sizes = (128,)

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return capability_major(ctx) == 10


class TokenspeedMLA(MLABackend):
    """tokenspeed-mla is a Requires-Dist of every CUDA wheel 0.28 ... 0.34, so the import check passes."""

    name, source = "TOKENSPEED_MLA", "vllm/v1/attention/backends/mla/tokenspeed_mla.py (TokenspeedMLABackend)"
    kv_cache_dtypes = ("fp8", "fp8_e4m3")
    block_sizes = (32, 64)

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return capability_major(ctx) == 10

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        dims = tuple(_mla_dims(cfg).values())
        if dims != (128, 64, 128):
            return ("tokenspeed_mla requires DeepSeek R1 MLA dimensions (qk_nope_head_dim=128, qk_rope_head_dim=64, "
                    f"v_head_dim=128), got ({dims[0]}, {dims[1]}, {dims[2]})")
        return None


class TritonMLA(MLABackend):
    name, source = "TRITON_MLA", "vllm/v1/attention/backends/mla/triton_mla.py (TritonMLABackend)"
    kv_cache_dtypes = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3")
    block_sizes = (16,)
    batch_invariant = True

    @classmethod
    def supports_head_size(cls, head_size: int, ctx: RoutingContext) -> bool:
        return True

    @classmethod
    def supports_sliding_window(cls, ctx: RoutingContext) -> bool:
        """mla-sliding-window-kv: "Decode only (windowed DSpark drafts); prefill raises"."""
        return ctx.profile.has("mla-sliding-window-kv")

    @classmethod
    def impl_error(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        return triton_impl_error("Triton MLA backend", cfg, ctx)


class AiterMLA(MLABackend):
    name, source = "ROCM_AITER_MLA", "vllm/v1/attention/backends/mla/rocm_aiter_mla.py (AiterMLABackend)"
    kv_cache_dtypes = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2")

    @classmethod
    def supports_head_size(cls, head_size: int, ctx: RoutingContext) -> bool:
        return True


class AiterTritonMLA(AiterMLA):
    name, source = "ROCM_AITER_TRITON_MLA", "vllm/v1/attention/backends/mla/aiter_triton_mla.py (AiterTritonMLABackend)"


class CPUMLA(MLABackend):
    name, source = "CPU_MLA", "vllm/v1/attention/backends/mla/cpu_mla.py (CPUMLABackend)"
    dtypes = ("float16", "bfloat16", "float32")
    kv_cache_dtypes = ("auto",)
    head_sizes = (576,)


class AMXMLA(MLABackend):
    name, source = "AMX_MLA", "vllm/v1/attention/backends/mla/amx_mla.py (AMXMLABackend)"
    dtypes = ("bfloat16",)
    head_sizes = (576,)


class KimiK3KvBalancedMLA(MLABackend):
    """attention-backends-034: FP8 MLA decode on the KV-balanced kernel (TokenSpeed MLA's), in no priority list.
    Its dimension check reads the model's kv_lora_rank, here head_size - qk_rope_head_dim."""

    name = "KIMI_K3_KV_BALANCED_MLA"
    source = "vllm/models/kimi_k3/nvidia/kv_balanced_mla/backend.py (KimiK3KvBalancedMLABackend)"
    dtypes = ("bfloat16",)
    kv_cache_dtypes = ("fp8", "fp8_e4m3")
    block_sizes = (32, 64)

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return capability_major(ctx) == 10

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        nope, rope, v = _mla_dims(cfg).values()
        dims = (nope, rope, v, cfg.head_size - rope)
        if dims != (128, 64, 128, 512):
            return ("needs MLA dimensions (qk_nope_head_dim, qk_rope_head_dim, v_head_dim, kv_lora_rank) = "
                    f"(128, 64, 128, 512), got {dims}")
        return None


# Sparse MLA (DeepSeek-V3.2-style, use_sparse): their checks read the model's index_topk, which a sparse model has.

def _index_topk(cfg: SelectorConfig) -> int | None:
    if not cfg.use_sparse:
        return None
    return SPARSE_INDEX_TOPK if cfg.index_topk is None else cfg.index_topk


class FlashAttnMLASparse(Backend):
    name = "FLASH_ATTN_MLA_SPARSE"
    source = "vllm/v1/attention/backends/mla/flashattn_mla_sparse.py (FlashAttnMLASparseBackend)"
    block_sizes = (64,)
    mla = sparse = True

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return capability_major(ctx) == 9

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        if cfg.kv_cache_dtype not in UNQUANTIZED_KV:
            return "FlashAttention MLA Sparse currently supports only FP16/BF16 KV cache"
        if not _flash_attn_supports_mla(ctx):
            return "FlashAttention MLA not supported on this device"
        if _index_topk(cfg) is None:
            return "FlashAttention MLA Sparse requires model with index_topk"
        return None


class FlashMLASparse(Backend):
    name, source = "FLASHMLA_SPARSE", "vllm/v1/attention/backends/mla/flashmla_sparse.py (FlashMLASparseBackend)"
    dtypes = ("bfloat16",)
    block_sizes = (64,)
    mla = sparse = True

    @classmethod
    def supported_kv_cache_dtypes(cls, ctx: RoutingContext) -> tuple[str, ...]:
        listed = ("auto", "bfloat16", "fp8_ds_mla", "fp8")
        return listed + ("nvfp4_ds_mla",) if ctx.profile.has("nvfp4-ds-mla") else listed

    @classmethod
    def supports_head_size(cls, head_size: int, ctx: RoutingContext) -> bool:
        return head_size in ((576, 512) if ctx.profile.has("flashmla-sparse-d512") else (576,))

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return capability_major(ctx) in (9, 10)

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        if cfg.head_size == 512 and ctx.profile.has("flashmla-sparse-d512"):
            fp8_ds_mla = ctx.profile.has("flashmla-sparse-d512-fp8")
            if cfg.kv_cache_dtype in UNQUANTIZED_KV + (("fp8_ds_mla",) if fp8_ds_mla else ()) and capability_major(ctx) == 9:
                if _mla_dims(cfg)["qk_rope_head_dim"] != 0:
                    return "FLASHMLA_SPARSE supports head_size 512 only for rope-free (NoPE) models"
            else:
                caches = "bf16 or fp8_ds_mla" if fp8_ds_mla else "bf16"
                return (f"FLASHMLA_SPARSE supports head_size 512 only with {caches} kv-cache on SM90 (NoPE), "
                        f"got kv_cache_dtype={cfg.kv_cache_dtype}, "
                        f"capability=DeviceCapability(major={capability_major(ctx)}, minor={(ctx.cc or 0) % 10})")
        if cfg.kv_cache_dtype == "nvfp4_ds_mla" and capability_major(ctx) != 10 and ctx.profile.has("nvfp4-ds-mla"):
            return f"FLASHMLA_SPARSE only supports the {cfg.kv_cache_dtype} kv-cache dtype on SM100 (Blackwell)"
        return None


class FlashInferMLASparse(Backend):
    name = "FLASHINFER_MLA_SPARSE"
    source = "vllm/v1/attention/backends/mla/flashinfer_mla_sparse.py (FlashInferMLASparseTRTLLMBackend)"
    kv_cache_dtypes: ClassVar[tuple[str, ...]] = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3")
    head_sizes: ClassVar[tuple[int, ...]] = (512, 576)
    block_sizes = (32,)
    mla = sparse = True

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return capability_major(ctx) == 10

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        if cfg.kv_cache_dtype == "fp8_ds_mla":
            return "FLASHINFER_MLA_SPARSE SM10 does not support fp8_ds_mla kv-cache dtype"
        nope, rope, _ = _mla_dims(cfg).values()
        if rope == 0 and ctx.profile.has("flashinfer-mla-sparse-nope"):
            latent = cfg.head_size  # kv_lora_rank + a rope of 0
            if nope != 256 or latent != 512:
                return ("FlashInfer native no-rope MLA requires qk_nope_head_dim=256 and kv_lora_rank=512, but got "
                        f"qk_nope_head_dim={nope}, kv_lora_rank={latent}")
        elif nope not in (128, 192):
            return f"FlashInfer MLA Sparse kernel requires qk_nope_head_dim in [128, 192], but got {nope}"
        if _index_topk(cfg) is None:
            return "FlashInfer MLA Sparse requires model with index_topk config"
        return None


class FlashInferMLASparseSM90(Backend):
    """flashinfer-mla-sparse-sm90: on the sm90 MLA list; flashinfer >= 0.6.18 (0.33 pins 0.7.2.post1) has the SM90
    MLA API."""

    name = "FLASHINFER_MLA_SPARSE_SM90"
    source = "vllm/v1/attention/backends/mla/flashinfer_mla_sparse_sm90.py (FlashInferMLASparseSM90Backend)"
    dtypes = ("bfloat16",)
    kv_cache_dtypes = ("auto", "bfloat16", "fp8", "fp8_e4m3")
    head_sizes = (512, 576)
    block_sizes = (64,)
    mla = sparse = True

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return capability_major(ctx) == 9

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        if not ctx.platform.assumptions.flashinfer:
            return ("FLASHINFER_MLA_SPARSE_SM90 requires FlashInfer with SM90 MLA support (ckv_scale_arr in "
                    "BatchMLAPagedAttentionWrapper.run, FlashInfer >= 0.6.18)")
        if not cfg.use_sparse:
            return "FLASHINFER_MLA_SPARSE_SM90 requires sparse MLA"
        return None


class FlashAttnMLASparseFA4(FlashInferMLASparse):
    """flash-attn-mla-sparse-fa4: first of the sm100 sparse tail for a bf16 cache at <= 16 heads."""

    name = "FLASH_ATTN_MLA_SPARSE_FA4"
    source = "vllm/v1/attention/backends/mla/flashattn_mla_sparse.py (FlashAttnMLASparseFA4Backend)"
    dtypes = ("bfloat16",)
    kv_cache_dtypes = ("auto", "bfloat16")
    head_sizes = (576,)
    block_sizes = (64,)

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        if not ctx.platform.assumptions.flashinfer:
            return "FA4 sparse MLA runs its prefill batches on FlashInfer's kernel"
        topk = _index_topk(cfg)
        if topk is None or topk % 128:
            return f"FA4 sparse MLA requires index_topk % 128 == 0, got {topk}"
        heads = (8, 16, 32, 64, 128)  # without decode context parallelism (dcp_size 1)
        if cfg.num_heads is not None and cfg.num_heads not in heads:
            return f"FA4 sparse MLA requires {heads} gathered query heads, got num_heads={cfg.num_heads} * dcp_size=1"
        return super().supports_combination(cfg, ctx)


class FlashInferMLASparseSM120(Backend):
    name = "FLASHINFER_MLA_SPARSE_SM120"
    source = "vllm/v1/attention/backends/mla/flashinfer_mla_sparse.py (FlashInferMLASparseSM120Backend)"
    dtypes = ("bfloat16",)
    kv_cache_dtypes = ("auto", "fp8", "fp8_e4m3", "fp8_ds_mla")
    head_sizes = (512, 576)
    block_sizes = (64,)
    mla = sparse = True

    @classmethod
    def supports_compute_capability(cls, ctx: RoutingContext) -> bool:
        return capability_major(ctx) == 12

    @classmethod
    def supports_combination(cls, cfg: SelectorConfig, ctx: RoutingContext) -> str | None:
        if cfg.dtype != "bfloat16":
            return "dtype not supported"
        if cfg.kv_cache_dtype not in ("auto", "fp8", "fp8_e4m3", "fp8_ds_mla"):
            return "kv_cache_dtype not supported"
        if _index_topk(cfg) is None:
            return "FLASHINFER_MLA_SPARSE_SM120 requires a model with index_topk config"
        return None


class RocmAiterMLASparse(Backend):
    name = "ROCM_AITER_MLA_SPARSE"
    source = "vllm/v1/attention/backends/mla/rocm_aiter_mla_sparse.py (ROCMAiterMLASparseBackend)"
    kv_cache_dtypes = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3")
    mla = sparse = True

    @classmethod
    def supports_sink(cls, ctx: RoutingContext) -> bool:
        """on_mi3xx() (platforms/rocm.py: gfx942, gfx950) from rocm-aiter-mla-sparse-sinks."""
        return ctx.profile.has("rocm-aiter-mla-sparse-sinks") and ctx.platform.arch in ("gfx942", "gfx950")


class XPUMLASparse(Backend):
    name, source = "XPU_MLA_SPARSE", "vllm/v1/attention/backends/mla/xpu_mla_sparse.py (XPUMLASparseBackend)"
    head_sizes = (576,)
    mla = sparse = True


BACKENDS: dict[str, type[Backend]] = {cls.name: cls for cls in (
    FlashAttention, FlashInfer, FlashInferTS, TritonAttention, FlexAttention, TritonFlashAttention, TritonFlashInfer,
    TurboQuant, UltraQuant, RocmAttention, RocmAiterFlashAttention, RocmAiterUnifiedAttention, RocmOctave,
    CPUAttention, FlashAttnMLA, FlashMLA, FlashInferMLA, CutlassMLA, TokenspeedMLA, TritonMLA, AiterMLA,
    AiterTritonMLA, CPUMLA, AMXMLA, KimiK3KvBalancedMLA, FlashAttnMLASparse, FlashMLASparse, FlashInferMLASparse,
    FlashInferMLASparseSM90, FlashAttnMLASparseFA4, FlashInferMLASparseSM120, RocmAiterMLASparse, XPUMLASparse)}


def attention_backend_names(ctx: RoutingContext) -> tuple[str, ...]:
    """AttentionBackendEnum of the release, in its order."""
    return tuple(name for name in _ENUM if name not in _ENUM_ADDED_BY or ctx.profile.has(_ENUM_ADDED_BY[name]))
