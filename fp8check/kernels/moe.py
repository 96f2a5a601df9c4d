"""FP8 fused-MoE expert backends and vLLM's selection oracle, as data (vLLM 0.28.0, 0.33.0 and 0.34.0; what changed
between releases is a profile change, `ctx.profile.has(...)`, each read from the release wheels).

Two layers, like the linear registry: one class per vLLM experts class with the checks of
`FusedMoEExperts.is_supported_config` (vllm/model_executor/layers/fused_moe/modular_kernel.py: current device,
quant scheme, routing method, router logits dtype, activation format, then the class's own extra checks), and
`select_fp8_moe_backend` (fused_moe/oracle/fp8.py) walking the ordered backend list. Checks that cannot fail for
the configurations fp8check builds (gated SiLU experts, TP/EP without DP all-to-all, no LoRA, no EPLB, no batch
invariance) are not modelled. vLLM logs a rejection as "FP8 MoE backend X does not support the deployment
configuration since kernel does not support ..." (moe-oracle-wording: "Fp8 MoE backend 'X' does not support ...",
MoEKernelOracle.make_log_unsupported in oracle/base.py); that text is each rejection's reason here.

An experts class carries its checks and its numerics; BACKENDS registers it under its Fp8MoeBackend, in vLLM's
order, and the class names the profile change that added it (`added_by`) or retired it (`removed_by`) where a
release did. MOE_EXPERTS_NUMERICS is derived from the registered classes.
"""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from fp8check.kernels.base import MOE_W8A8, WEIGHT_ONLY, RoutingContext, deep_gemm_auto_disabled
from fp8check.kernels.quant_keys import (
    PER_CHANNEL, PER_TENSOR, PER_TOKEN, QuantKey, kFp8Dynamic128Sym, kFp8DynamicTensorSym, kFp8DynamicTokenSym,
    kFp8Static128BlockSym, kFp8StaticChannelSym, kFp8StaticTensorSym,
)
from fp8check.kernels.registry import Rejection

# RoutingMethodType (fused_moe/config.py) is an IntEnum: vLLM prints it as its number.
ROUTING = {"Default": 0, "Renormalize": 1, "DeepSeekV3": 2, "Llama4": 3, "RenormalizeNaive": 4, "TopK": 5,
           "SigmoidRenorm": 6, "MiniMax2": 7, "Sigmoid": 8, "Unspecified": 9, "DeepseekV4": 100, "Custom": 101}
STANDARD = "('standard',)"            # FusedMoEActivationFormat.Standard.value, as vLLM formats it
BATCHED = "('batched_experts',)"
NO_BACKEND = "No FP8 MoE backend supports the deployment configuration."


class MoEConfig(NamedTuple):
    """What FusedMoEConfig / FusedMoEParallelConfig carry into selection, for one rank."""

    num_experts: int                  # global experts
    hidden: int
    intermediate: int                 # the checkpoint's full moe_intermediate_size
    tp: int                           # MoE tensor-parallel size (1 under EP)
    ep: int                           # expert-parallel size (1 without --ep)
    routing: str = "RenormalizeNaive"  # RoutingMethodType name
    in_dtype: str = "bfloat16"        # model dtype: FusedMoEConfig.in_dtype and router_logits_dtype
    swiglu_limit: bool = False        # FusedMoEConfig.swiglu_limit is set (the model file's clamp)


def key_text(key: QuantKey | None, ctx: RoutingContext) -> str:
    """str(QuantKey) in vLLM (quant_utils.py): 'QuantKey(f8e4m3fn,scale(f32,static,per_tensor),symmetric)'."""
    if key is None:
        return "None"
    shape = {PER_TENSOR: "per_tensor", PER_TOKEN: "per_token", PER_CHANNEL: "per_channel"}.get(
        key.group_shape, f"GroupShape(row={key.group_shape[0]}, col={key.group_shape[1]})")
    fp8 = "f8e4m3fnuz" if ctx.platform.fp8_fnuz else "f8e4m3fn"
    scale = "f8e8m0fnu" if key.scale_dtype == "float8_e8m0fnu" else "f32"
    return f"QuantKey({fp8},scale({scale},{'static' if key.static else 'dynamic'},{shape}),symmetric)"


def _family(ctx: RoutingContext, major: int) -> bool:
    return ctx.kind == "cuda" and ctx.cc is not None and ctx.cc // 10 == major


def _cuda_at(ctx: RoutingContext, cc: int) -> bool:
    return ctx.kind == "cuda" and ctx.cc == cc


def _cuda_min(ctx: RoutingContext, cc: int) -> bool:
    return ctx.kind == "cuda" and ctx.cc is not None and ctx.cc >= cc


def supports_fp8(ctx: RoutingContext) -> bool:
    """current_platform.supports_fp8(): CUDA sm89+, ROCm CDNA or RDNA4, XPU; not CPU."""
    if ctx.kind == "cuda":
        return _cuda_min(ctx, 89)
    if ctx.kind == "rocm":
        return (ctx.platform.arch or "").startswith(("gfx9", "gfx12"))
    return ctx.kind == "xpu"


def deep_gemm_supported(ctx: RoutingContext) -> bool:
    """is_deep_gemm_supported(): VLLM_USE_DEEP_GEMM (default 1), deep_gemm installed, Hopper or Blackwell."""
    return ctx.platform.assumptions.deep_gemm and (_cuda_at(ctx, 90) or _family(ctx, 10))


TRITON_W_A = ((kFp8Static128BlockSym, kFp8Dynamic128Sym), (kFp8StaticChannelSym, kFp8DynamicTokenSym),
              (kFp8StaticTensorSym, kFp8DynamicTokenSym), (kFp8StaticTensorSym, kFp8StaticTensorSym),
              (kFp8StaticTensorSym, kFp8DynamicTensorSym))


class Experts:
    """One vLLM FusedMoEExperts class. `verified` is False where fp8check infers a condition. `numerics` is how
    it treats activations: MOE_W8A8 classes quantize them (fused_moe/utils.py moe_kernel_quantize_input) and run
    BLOCK or SCALED_MM by the weights' strategy; WEIGHT_ONLY classes take the model-dtype hidden states.
    `parts` are the classes a FallbackExperts runs between (none for a single kernel). `added_by` / `removed_by`:
    the profile changes that brought the class into its backend's list and took it out (None: every release)."""

    name: ClassVar[str]
    verified: ClassVar[bool] = True
    fmt: ClassVar[str] = STANDARD
    numerics: ClassVar[str]
    parts: ClassVar[tuple[type[Experts], ...]] = ()
    added_by: ClassVar[str | None] = None
    removed_by: ClassVar[str | None] = None

    @classmethod
    def listed(cls, ctx: RoutingContext) -> bool:
        """Whether the release's backend_to_kernel_cls lists the class."""
        return ((cls.added_by is None or ctx.profile.has(cls.added_by))
                and (cls.removed_by is None or not ctx.profile.has(cls.removed_by)))

    @classmethod
    def device(cls, ctx: RoutingContext) -> bool:
        return True

    @classmethod
    def quant(cls, w: QuantKey, a: QuantKey | None, ctx: RoutingContext) -> bool:
        return False

    @classmethod
    def routing(cls, cfg: MoEConfig, w: QuantKey, a: QuantKey | None, ctx: RoutingContext) -> bool:
        return True

    @classmethod
    def router_dtype(cls, cfg: MoEConfig) -> bool:
        return True

    @classmethod
    def extra(cls, cfg: MoEConfig, w: QuantKey, a: QuantKey | None, ctx: RoutingContext) -> str | None:
        return None

    @classmethod
    def unsupported(cls, cfg: MoEConfig, w: QuantKey, a: QuantKey | None, ctx: RoutingContext) -> str | None:
        """FusedMoEExperts.is_supported_config: None, or vLLM's 'kernel does not support ...' reason."""
        if not cls.device(ctx):
            return f"kernel does not support current device {ctx.kind}"
        if not cls.quant(w, a, ctx):
            return f"kernel does not support quantization scheme {key_text(w, ctx)}x{key_text(a, ctx)}"
        if not cls.routing(cfg, w, a, ctx):
            return f"kernel does not support routing method {ROUTING[cfg.routing]}"
        if not cls.router_dtype(cfg):
            return f"kernel does not support router logits dtype torch.{cfg.in_dtype}"
        if cls.fmt != STANDARD:
            return f"kernel does not support {STANDARD} activation format"
        return cls.extra(cfg, w, a, ctx)


class TritonExperts(Experts):
    """experts/triton_moe.py. With moe-block-refine it also takes any static float32 block ≥ 2x2 with 1x128
    activations (refined blocks); on CUDA/ROCm moe_align_block_size needs fewer than 1024 padded experts."""

    name = "TritonExperts"
    numerics = MOE_W8A8

    @classmethod
    def device(cls, ctx):
        return ctx.kind in ("cuda", "rocm", "xpu")

    @classmethod
    def quant(cls, w, a, ctx):
        if not supports_fp8(ctx):
            return False
        if ctx.profile.has("moe-block-refine") and a == kFp8Dynamic128Sym and w.static \
                and w.scale_dtype == "float32" and w.group_shape[0] > 1 and w.group_shape[1] > 1:
            return True
        return (w, a) in TRITON_W_A

    @classmethod
    def extra(cls, cfg, w, a, ctx):
        if ctx.kind in ("cuda", "rocm") and (cfg.num_experts + 31) // 32 * 32 >= 1024:
            return "kernel's moe_align_block_size requires fewer than 1024 padded experts"
        return None


class DeepGemmExperts(Experts):
    """experts/deep_gemm_moe.py (inside TritonOrDeepGemmExperts): 128x128 blocks, DeepGEMM installed."""

    name = "DeepGemmExperts"
    numerics = MOE_W8A8

    @classmethod
    def device(cls, ctx):
        return deep_gemm_supported(ctx)

    @classmethod
    def quant(cls, w, a, ctx):
        return (w, a) == (kFp8Static128BlockSym, kFp8Dynamic128Sym)


class _FallbackExperts(Experts):
    """fused_moe/fallback.py FallbackExperts: an experts class and its fallback (`parts`); the device and the
    quant scheme must suit both."""

    @classmethod
    def device(cls, ctx):
        return all(part.device(ctx) for part in cls.parts)

    @classmethod
    def quant(cls, w, a, ctx):
        return all(part.quant(w, a, ctx) for part in cls.parts)


class TritonOrDeepGemmExperts(_FallbackExperts):
    """experts/triton_deep_gemm_moe.py: DeepGEMM with Triton fallback, both must accept."""

    name = "TritonOrDeepGemmExperts"
    numerics = MOE_W8A8
    parts = (DeepGemmExperts, TritonExperts)


class CutlassExpertsFp8(Experts):
    """experts/cutlass_moe.py. cutlass_group_gemm_supported() asks the compiled ops; fp8check infers sm90 and
    the sm100 family (the CUTLASS grouped-GEMM builds), not read from the C++ side."""

    name = "CutlassExpertsFp8"
    verified = False
    numerics = MOE_W8A8

    @classmethod
    def device(cls, ctx):
        return _cuda_at(ctx, 90) or _family(ctx, 10)

    @classmethod
    def quant(cls, w, a, ctx):
        return (w, a) in ((kFp8StaticChannelSym, kFp8DynamicTokenSym), (kFp8StaticTensorSym, kFp8DynamicTensorSym),
                          (kFp8StaticTensorSym, kFp8StaticTensorSym))


class TritonOrCutlassExperts(_FallbackExperts):
    """experts/triton_cutlass_moe.py: CUTLASS with Triton fallback, both must accept. Only compressed-tensors
    allows it (allow_vllm_cutlass=True)."""

    name = "TritonOrCutlassExperts"
    verified = False
    numerics = MOE_W8A8
    parts = (CutlassExpertsFp8, TritonExperts)


class CutlassBatchedExpertsFp8(CutlassExpertsFp8):
    name = "CutlassBatchedExpertsFp8"
    fmt = BATCHED


class FlashInferExperts(Experts):
    """experts/flashinfer_cutlass_moe.py: sm90 / sm100 / sm120 families with FlashInfer; 128x128 blocks on
    sm90 only, per-tensor static on sm90+."""

    name = "FlashInferExperts"
    numerics = MOE_W8A8

    @classmethod
    def device(cls, ctx):
        return ctx.platform.assumptions.flashinfer and (_cuda_at(ctx, 90) or _family(ctx, 10) or _family(ctx, 12))

    @classmethod
    def quant(cls, w, a, ctx):
        if (w, a) == (kFp8StaticTensorSym, kFp8StaticTensorSym):
            return _cuda_min(ctx, 90)
        return (w, a) == (kFp8Static128BlockSym, kFp8Dynamic128Sym) and _cuda_at(ctx, 90)


class TrtLlmFp8ExpertsMonolithic(Experts):
    """experts/trtllm_fp8_moe.py: Blackwell (sm100 family) with FlashInfer's TRT-LLM MoE; at most 2048 experts
    (TrtLlmFp8ExpertsBase.is_supported_config, every release 0.28 ... 0.34); router logits in bfloat16 or
    float32."""

    name = "TrtLlmFp8ExpertsMonolithic"
    numerics = MOE_W8A8
    schemes: ClassVar[tuple] = ((kFp8Static128BlockSym, kFp8Dynamic128Sym), (kFp8StaticTensorSym, kFp8StaticTensorSym))

    @classmethod
    def device(cls, ctx):
        return ctx.platform.assumptions.flashinfer and _family(ctx, 10)

    @classmethod
    def quant(cls, w, a, ctx):
        return (w, a) in cls.schemes

    @classmethod
    def routing(cls, cfg, w, a, ctx):
        allowed = {"DeepSeekV3", "Renormalize", "RenormalizeNaive", "SigmoidRenorm", "Sigmoid", "MiniMax2"}
        if w == kFp8StaticTensorSym:
            allowed.add("Llama4")
        return cfg.routing in allowed

    @classmethod
    def router_dtype(cls, cfg):
        return cfg.in_dtype in ("bfloat16", "float32")

    @classmethod
    def extra(cls, cfg, w, a, ctx):
        # SwiGLU clamp (trtllm-swiglu-clamp): MXFP8 only; 0.30 on also 128-block keys with SiLU, the activation
        # every judged FusedMoE has (trtllm-swiglu-block).
        if cfg.swiglu_limit and ctx.profile.has("trtllm-swiglu-clamp"):
            if not ctx.profile.has("trtllm-swiglu-block"):
                return "the TRTLLM FP8 kernels apply the SwiGLU alpha/beta/clamp parameters only for MXFP8 weights"
            if (w, a) != (kFp8Static128BlockSym, kFp8Dynamic128Sym):
                return ("the TRTLLM FP8 kernels apply the SwiGLU alpha/beta/clamp parameters only for block-scaled "
                        f"weights with a SwiGLU activation, but got {key_text(w, ctx)} and MoEActivation.SILU")
        if cfg.num_experts > 2048:
            return f"FlashInfer TRTLLM routing supports at most 2048 experts, but got {cfg.num_experts}"
        return None


class TrtLlmFp8ExpertsModular(TrtLlmFp8ExpertsMonolithic):
    name = "TrtLlmFp8ExpertsModular"
    schemes = ((kFp8Static128BlockSym, kFp8Dynamic128Sym),)

    @classmethod
    def routing(cls, cfg, w, a, ctx):
        return True

    @classmethod
    def router_dtype(cls, cfg):
        return True


class MarlinExperts(Experts):
    """experts/marlin_moe.py: weight-only (W8A16) on CUDA sm75+; any FP8 weight key, activations ignored."""

    name = "MarlinExperts"
    numerics = WEIGHT_ONLY

    @classmethod
    def device(cls, ctx):
        return _cuda_min(ctx, 75)

    @classmethod
    def quant(cls, w, a, ctx):
        return w in (kFp8Static128BlockSym, kFp8StaticChannelSym, kFp8StaticTensorSym)


class HummingExperts(Experts):
    """experts/fused_humming_moe.py: needs the separate humming package (CUDA sm75+). Its FP8 key list was not
    read; fp8check assumes the three FP8 weight keys when humming is installed. Weight-only (W8A16)."""

    name = "HummingGroupedExperts"
    verified = False
    numerics = WEIGHT_ONLY

    @classmethod
    def device(cls, ctx):
        return ctx.platform.assumptions.humming and _cuda_min(ctx, 75)

    @classmethod
    def quant(cls, w, a, ctx):
        return w in (kFp8Static128BlockSym, kFp8StaticChannelSym, kFp8StaticTensorSym)


class BatchedHummingGroupedExperts(HummingExperts):
    name = "BatchedHummingGroupedExperts"
    fmt = BATCHED


class HummingIndexedExperts(HummingExperts):
    name = "HummingIndexedExperts"


class BatchedDeepGemmExperts(DeepGemmExperts):
    name = "BatchedDeepGemmExperts"
    fmt = BATCHED


class BatchedTritonExperts(Experts):
    """experts/fused_batched_moe.py: the Triton list on sm89+ / CDNA3+ / RDNA4, batched format only."""

    name = "BatchedTritonExperts"
    fmt = BATCHED
    numerics = MOE_W8A8

    @classmethod
    def device(cls, ctx):
        return ctx.kind in ("cuda", "rocm", "xpu")

    @classmethod
    def quant(cls, w, a, ctx):
        arch = ctx.platform.arch or ""
        fp8 = _cuda_min(ctx, 89) or (ctx.kind == "rocm" and arch.startswith(("gfx94", "gfx95", "gfx12")))
        return fp8 and (w, a) in TRITON_W_A


class AiterExperts(Experts):
    """experts/rocm_aiter_moe.py: runs only when AITER fused MoE is enabled (VLLM_ROCM_USE_AITER=1); its
    is_supported_config appends how to enable it to every rejection. aiter-moe-split splits it in three."""

    name = "AiterExperts"
    numerics = MOE_W8A8
    removed_by: ClassVar[str | None] = "aiter-moe-split"
    schemes: ClassVar[tuple] = ((kFp8Static128BlockSym, kFp8Dynamic128Sym), (kFp8StaticTensorSym, kFp8StaticTensorSym),
                                (kFp8StaticTensorSym, kFp8DynamicTensorSym), (kFp8StaticChannelSym, kFp8DynamicTokenSym))

    @classmethod
    def device(cls, ctx):
        return ctx.kind == "rocm" and ctx.platform.assumptions.aiter

    @classmethod
    def quant(cls, w, a, ctx):
        return (w, a) in cls.schemes

    @classmethod
    def unsupported(cls, cfg, w, a, ctx):
        reason = super().unsupported(cfg, w, a, ctx)
        if reason and not ctx.platform.assumptions.aiter:
            reason += (". AITER MoE is not enabled — set VLLM_ROCM_USE_AITER=1 and VLLM_ROCM_USE_AITER_MOE=1 "
                       "to enable it")
        return reason


class AiterFp8BlockExperts(AiterExperts):
    name = "AiterFp8BlockExperts"
    schemes = ((kFp8Static128BlockSym, kFp8Dynamic128Sym),)
    added_by, removed_by = "aiter-moe-split", None


class AiterFp8TensorExperts(AiterExperts):
    name = "AiterFp8TensorExperts"
    schemes = ((kFp8StaticTensorSym, kFp8StaticTensorSym), (kFp8StaticTensorSym, kFp8DynamicTensorSym))
    added_by, removed_by = "aiter-moe-split", None


class AiterFp8ChannelExperts(AiterExperts):
    name = "AiterFp8ChannelExperts"
    schemes = ((kFp8StaticChannelSym, kFp8DynamicTokenSym),)
    added_by, removed_by = "aiter-moe-split", None


class XPUExpertsFp8(Experts):
    """experts/xpu_moe.py: per-tensor FP8 weights with dynamic per-tensor (or no) activation quantization.
    XPUExperts sets expects_unquantized_inputs and hands bf16 to XpuFusedMoe, whose arithmetic inside is not in
    vLLM's source: weight-only is fp8check's inference there."""

    name = "XPUExpertsFp8"
    numerics = WEIGHT_ONLY

    @classmethod
    def device(cls, ctx):
        return ctx.kind == "xpu"

    @classmethod
    def quant(cls, w, a, ctx):
        return (w, a) in ((kFp8StaticTensorSym, None), (kFp8StaticTensorSym, kFp8DynamicTensorSym))


class XPUExpertsMxFp8(XPUExpertsFp8):
    """MXFP8 only (kMxfp8Static): never an FP8 e4m3 checkpoint's key."""

    name = "XPUExpertsMxFp8"

    @classmethod
    def quant(cls, w, a, ctx):
        return False


class XPUExpertsBlockFp8(XPUExpertsFp8):
    name = "XPUExpertsBlockFp8"

    @classmethod
    def quant(cls, w, a, ctx):
        return (w, a) == (kFp8Static128BlockSym, kFp8Dynamic128Sym)


class CPUExpertsFp8(Experts):
    """experts/cpu_moe.py: W8A16 ("CPU FP8 W8A16 block-quantized") with 128x128 blocks on x86 with AMX tiles;
    routes Default / Renormalize / RenormalizeNaive, and DeepSeekV3 / DeepseekV4 from cpu-moe-deepseek-routing."""

    name = "CPUExpertsFp8"
    numerics = WEIGHT_ONLY
    routes: ClassVar[frozenset] = frozenset({"Default", "Renormalize", "RenormalizeNaive"})
    deepseek_routes: ClassVar[frozenset] = frozenset({"DeepSeekV3", "DeepseekV4"})

    @classmethod
    def device(cls, ctx):
        return ctx.kind == "cpu" and ctx.platform.assumptions.cpu_amx

    @classmethod
    def quant(cls, w, a, ctx):
        return (w, a) == (kFp8Static128BlockSym, kFp8Dynamic128Sym)

    @classmethod
    def routing(cls, cfg, w, a, ctx):
        return cfg.routing in cls.routes or (cfg.routing in cls.deepseek_routes
                                             and ctx.profile.has("cpu-moe-deepseek-routing"))


class CPUExpertsFp8W8A8(CPUExpertsFp8):
    """cpu-moe-w8a8: W8A8 on CPUs with AMX-FP8 (cpu_has_amx_fp8). fp8check has no AMX-FP8 assumption and takes it
    as absent (an inference: AMX tiles, which `cpu_amx` describes, do not imply the FP8 extension)."""

    name = "CPUExpertsFp8W8A8"
    verified = False
    numerics = MOE_W8A8
    added_by = "cpu-moe-w8a8"

    @classmethod
    def device(cls, ctx):
        return False


class HPCExperts(Experts):
    """fused_moe/hpc_moe.py: Hopper only, with the separate `hpc` package, which fp8check takes as absent."""

    name = "HPCExperts"
    numerics = MOE_W8A8

    @classmethod
    def device(cls, ctx):
        return False


# Fp8MoeBackend -> backend_to_kernel_cls, in _AVAILABLE_BACKENDS' order before platform reordering: every class any
# release lists (Experts.listed says which a release does). From 0.32 the list also goes through
# prioritize_humming, which fp8check does not model (humming is off by default).
BACKENDS: dict[str, tuple[type[Experts], ...]] = {
    "AITER": (AiterExperts, AiterFp8BlockExperts, AiterFp8TensorExperts, AiterFp8ChannelExperts),
    "FLASHINFER_TRTLLM": (TrtLlmFp8ExpertsMonolithic, TrtLlmFp8ExpertsModular),
    "FLASHINFER_CUTLASS": (FlashInferExperts,),
    "DEEPGEMM": (TritonOrDeepGemmExperts,),
    "VLLM_CUTLASS": (TritonOrCutlassExperts,),
    "TRITON": (TritonExperts,),
    "MARLIN": (MarlinExperts,),
    "HUMMING": (BatchedHummingGroupedExperts, HummingExperts, HummingIndexedExperts),
    "BATCHED_DEEPGEMM": (BatchedDeepGemmExperts,),
    "BATCHED_VLLM_CUTLASS": (CutlassBatchedExpertsFp8,),
    "BATCHED_TRITON": (BatchedTritonExperts,),
    "XPU": (XPUExpertsFp8, XPUExpertsMxFp8, XPUExpertsBlockFp8),
    "CPU_W8A8": (CPUExpertsFp8W8A8,),
    "CPU": (CPUExpertsFp8,),
    "HPC": (HPCExperts,),
}


def backends_at(ctx: RoutingContext) -> dict[str, tuple[type[Experts], ...]]:
    """The release's Fp8MoeBackend list: each backend with the classes it lists, the backends with none left out."""
    listed = {backend: tuple(e for e in row if e.listed(ctx)) for backend, row in BACKENDS.items()}
    return {backend: row for backend, row in listed.items() if row}


def experts_numerics(backends: dict[str, tuple[type[Experts], ...]]) -> dict[str, str]:
    """Every experts class the backends register, and the parts a fallback class runs, by name -> numerics."""
    return {cls.name: cls.numerics for row in backends.values() for experts in row
            for cls in (experts, *experts.parts)}


# Experts classes a model file subclasses for its own runner (never the oracle's choice), by the class whose numerics
# they run: muse_spark/amd/muse_moe_runner.py MuseSparkTritonExperts(_RouteOutputHandoff, TritonExperts).
MODEL_EXPERTS: dict[str, type[Experts]] = {"MuseSparkTritonExperts": TritonExperts}
MOE_EXPERTS_NUMERICS = {**experts_numerics(BACKENDS), **{name: base.numerics for name, base in MODEL_EXPERTS.items()}}


class MoEChoice(NamedTuple):
    backend: str | None               # Fp8MoeBackend value, e.g. "TRITON"
    kernel: str | None                # experts class
    rejected: tuple[Rejection, ...]
    error: str | None = None


def priority(cfg: MoEConfig, w: QuantKey, a: QuantKey | None, ctx: RoutingContext) -> list[str]:
    """_get_priority_backends: Hopper block FP8 prefers Triton under TP and FlashInfer CUTLASS under EP; XPU and
    CPU move their own backend first (cpu-moe-w8a8: CPU_W8A8 ahead of CPU). The DeepEP-v2 rule needs DP, never
    here."""
    order = list(backends_at(ctx))

    def front(name: str) -> None:
        order.insert(0, order.pop(order.index(name)))

    if _cuda_at(ctx, 90) and (w, a) == (kFp8Static128BlockSym, kFp8Dynamic128Sym):
        front("FLASHINFER_CUTLASS" if cfg.ep > 1 else "TRITON")
    if ctx.kind == "xpu":
        front("XPU")
    if ctx.kind == "cpu":
        front("CPU")
        if "CPU_W8A8" in order:
            front("CPU_W8A8")
    return order


def rejection(backend: str, reason: str, ctx: RoutingContext) -> str:
    """How the oracle words a backend it refuses (the message it logs, or raises for a backend it must take)."""
    if ctx.profile.has("moe-oracle-wording"):
        return f"Fp8 MoE backend '{backend}' does not support the deployment configuration since {reason}."
    return f"FP8 MoE backend {backend} does not support the deployment configuration since {reason}."


# config/kernel.py MoEBackend: the --moe-backend values 0.25's KernelConfig takes, and what each later change added
# and removed (KernelConfig._normalize_moe_backend lowercases a value and maps '-' to '_').
MOE_BACKEND_VALUES = ("auto", "triton", "deep_gemm", "deep_gemm_mega_moe", "cutlass", "flashinfer_trtllm",
                      "flashinfer_cutlass", "flashinfer_cutedsl", "flashinfer_b12x", "marlin", "humming",
                      "triton_unfused", "aiter", "flydsl", "hpc", "emulation")
MOE_BACKEND_CHANGES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "moe-backend-batched-triton": (("batched_triton",), ()),
    "moe-backend-029": (("b12x", "flashinfer_moe_ep_mega_deep_gemm", "flashinfer_moe_ep_mega_cutedsl"), ()),
    "moe-backend-030": (("aiter_triton_mxfp4_bf16", "rdna3"), ()),
    "moe-backend-032": (("flashinfer_moe_ep_cutedsl", "aiter_mega_moe"), ("flashinfer_moe_ep_mega_cutedsl",)),
    "moe-backend-033": (("aiter_triton_mxfp4_mxfp4",), ()),
}
# fused_moe/oracle/fp8.py map_fp8_backend (alike 0.25 ... 0.34): the --moe-backend values the FP8 oracle takes, in its
# order; any other value is refused there, in the method's constructor (fp8_backend_refusal), except the megakernel
# values (MEGA_MOE_VALUES) in the model files that take them (DeepSeek-V4 / V4.1, 0.34's GLM-5-Next:
# Arch.native_mega_moe; not modelled); KernelConfig refuses some of them first (layouts.moe_backend_model_refusal).
# aiter_mega_moe reaches the FP8 oracle everywhere (measured: DeepSeek-V4 and GLM-5-Next refuse it too).
FP8_MOE_BACKENDS = {"triton": "TRITON", "deep_gemm": "DEEPGEMM", "cutlass": "VLLM_CUTLASS",
                    "flashinfer_trtllm": "FLASHINFER_TRTLLM", "flashinfer_cutlass": "FLASHINFER_CUTLASS",
                    "marlin": "MARLIN", "humming": "HUMMING", "aiter": "AITER", "hpc": "HPC"}
CUTLASS_DISABLED = "vLLM CUTLASS FP8 MoE backend is disabled for this configuration."
MEGA_MOE_VALUES = ("deep_gemm_mega_moe", "flashinfer_moe_ep_mega_deep_gemm", "flashinfer_moe_ep_mega_cutedsl",
                   "flashinfer_moe_ep_cutedsl")
# fused_moe/oracle/unquantized.py map_unquantized_backend: the values UnquantizedFusedMoEMethod's oracle takes
# (batched_triton from the change that added it to MoEBackend), in its order.
UNQUANTIZED_MOE_BACKENDS = ("triton", "batched_triton", "flashinfer_trtllm", "flashinfer_cutlass", "aiter")


def moe_backend_values(profile) -> tuple[str, ...]:
    """The --moe-backend values `profile`'s release takes."""
    values = list(MOE_BACKEND_VALUES)
    for change, (added, removed) in MOE_BACKEND_CHANGES.items():
        if profile.has(change):
            values = [v for v in values if v not in removed] + list(added)
    return tuple(values)


def normalize_moe_backend(value: str) -> str:
    """KernelConfig._normalize_moe_backend."""
    return value.lower().replace("-", "_")


def requested_backend(cfg: MoEConfig, w: QuantKey, a: QuantKey | None, ctx: RoutingContext,
                      allow_vllm_cutlass: bool) -> MoEChoice:
    """select_fp8_moe_backend's branch for an explicit --moe-backend (one of FP8_MOE_BACKENDS): the requested
    backend's first experts class that supports the configuration, or the oracle's return_or_raise error with the
    last class's reason. The batched activation format (DP all-to-all) that swaps in the BATCHED_* backends is never
    built here. VLLM_USE_DEEP_GEMM, DeepGEMM's per-model exclusion and VLLM_ROCM_USE_AITER are not consulted."""
    backend = FP8_MOE_BACKENDS[ctx.moe_backend]
    if backend == "VLLM_CUTLASS" and not allow_vllm_cutlass:
        return MoEChoice(None, None, (), CUTLASS_DISABLED)
    rejected: list[Rejection] = []
    for experts in backends_at(ctx).get(backend, ()):
        reason = experts.unsupported(cfg, w, a, ctx)
        if reason is None:
            return MoEChoice(backend, experts.name, tuple(rejected))
        rejected.append(Rejection(experts.name, rejection(backend, reason, ctx), experts.verified))
    return MoEChoice(None, None, tuple(rejected), rejected[-1].reason if rejected else None)


def unquantized_backend_refusal(ctx: RoutingContext) -> str | None:
    """map_unquantized_backend's refusal of an explicit --moe-backend (UnquantizedFusedMoEMethod.__init__), or None."""
    values = [v for v in UNQUANTIZED_MOE_BACKENDS
              if v != "batched_triton" or ctx.profile.has("moe-backend-batched-triton")]
    if ctx.moe_backend == "auto" or ctx.moe_backend in values:
        return None
    return f"moe_backend='{ctx.moe_backend}' is not supported for unquantized MoE. Expected one of {values}."


def fp8_backend_refusal(ctx: RoutingContext, native_mega: bool) -> str | None:
    """map_fp8_backend's refusal of an explicit --moe-backend it does not map (none for a megakernel value where the
    model takes it itself: `native_mega`, Arch.native_mega_moe)."""
    if ctx.moe_backend == "auto" or ctx.moe_backend in FP8_MOE_BACKENDS or (
            native_mega and ctx.moe_backend in MEGA_MOE_VALUES):
        return None
    return (f"moe_backend='{ctx.moe_backend}' is not supported for FP8 MoE. Expected one of "
            f"{list(FP8_MOE_BACKENDS)}.")


def requested_unmodelled(ctx: RoutingContext, native_mega: bool) -> str | None:
    """Why fp8check cannot judge the FP8 experts under ctx's --moe-backend (None: auto, refused, or modelled)."""
    if ctx.moe_backend == "auto" or fp8_backend_refusal(ctx, native_mega):
        return None
    backend = FP8_MOE_BACKENDS.get(ctx.moe_backend)
    if backend is None:
        return (f"--moe-backend {ctx.moe_backend} is not modelled: the model's own megakernel path (MegaMoE, "
                "FlashInfer MoE-EP)")
    if backend not in backends_at(ctx):
        return f"--moe-backend {ctx.moe_backend}: fp8check models no {backend} experts class of vLLM {ctx.profile.name}"
    return None


def backend_takes_block(block: tuple[int, int], a: QuantKey | None, ctx: RoutingContext) -> bool:
    """resolve_fp8_moe_weight_block_shape's can_refine: a class of the requested backend whose
    _supports_quant_scheme takes the refined block key with the method's activation key."""
    key = QuantKey(True, block)
    return any(experts.quant(key, a, ctx) for experts in backends_at(ctx).get(FP8_MOE_BACKENDS[ctx.moe_backend], ()))


def select_backend(cfg: MoEConfig, w: QuantKey, a: QuantKey | None, ctx: RoutingContext,
                   allow_vllm_cutlass: bool) -> MoEChoice:
    """select_fp8_moe_backend: an explicit --moe-backend first (requested_backend); else moe_backend='auto' with no
    VLLM_* override except VLLM_ROCM_USE_AITER, which `--assume aiter=yes` stands for: vLLM then takes AITER or
    raises, without trying the others."""
    if ctx.moe_backend != "auto":
        return requested_backend(cfg, w, a, ctx, allow_vllm_cutlass)
    listed = backends_at(ctx)
    order = priority(cfg, w, a, ctx)
    if ctx.kind == "rocm" and ctx.platform.assumptions.aiter:
        order = ["AITER"]
    if not allow_vllm_cutlass:
        order = [b for b in order if b not in ("VLLM_CUTLASS", "BATCHED_VLLM_CUTLASS")]
    if ctx.profile.has("deepgemm-moe-exclusion") and deep_gemm_auto_disabled(ctx):
        order = [b for b in order if b not in ("DEEPGEMM", "BATCHED_DEEPGEMM")]
    rejected: list[Rejection] = []
    for backend in order:
        for experts in listed[backend]:
            reason = experts.unsupported(cfg, w, a, ctx)
            if reason is None:
                return MoEChoice(backend, experts.name, tuple(rejected))
            rejected.append(Rejection(experts.name, rejection(backend, reason, ctx), experts.verified))
        if order == ["AITER"]:
            return MoEChoice(None, None, tuple(rejected), rejected[-1].reason)
    if ctx.kind in ("cuda", "rocm"):
        return MoEChoice(None, None, tuple(rejected), NO_BACKEND)
    # XPU / CPU: the oracle returns Fp8MoeBackend.NONE; the method asserts after loading the weights.
    return MoEChoice("NONE", None, tuple(rejected),
                     "AssertionError: assert self.experts_cls is not None (process_weights_after_loading: "
                     f"select_fp8_moe_backend returned Fp8MoeBackend.NONE on {ctx.kind})")


def refined_block_accepted(block: tuple[int, int], ctx: RoutingContext) -> tuple[str, ...]:
    """Experts classes whose _supports_quant_scheme takes the refined block key (only Triton-based ones)."""
    key = QuantKey(True, block)
    names = []
    for row in backends_at(ctx).values():
        for experts in row:
            if experts.quant(key, kFp8Dynamic128Sym, ctx) and experts.name not in names:
                names.append(experts.name)
    return tuple(names)
