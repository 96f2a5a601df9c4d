"""NVIDIA kernels: CUTLASS, FlashInfer, DeepGEMM, Marlin, Humming, B12x (vLLM scaled_mm/*.py)."""

from __future__ import annotations

from fp8check.kernels.base import (
    BLOCK, FP8, FP8_BLOCK, SCALED_MM, WEIGHT_ONLY, BlockScaledKernel, Kernel, RoutingContext, deep_gemm_auto_disabled,
    needs_1x128,
    needs_per_tensor,
)
from fp8check.kernels.quant_keys import KernelConfig


def cutlass_fp8_supported(ctx: RoutingContext) -> bool:
    """cutlass_scaled_mm_supports_fp8: sm90+ with CUDA 12.0, or sm89 with CUDA 12.4."""
    cc = ctx.cc or 0
    return (cc >= 90 and ctx.cuda_at_least("12.0")) or (cc == 89 and ctx.cuda_at_least("12.4"))


def _cutlass_block_fp8_supported(ctx: RoutingContext) -> bool:
    """cutlass_scaled_mm_supports_block_fp8: sm100+ with CUDA 12.8, or sm90 with CUDA 12.0; never sm89."""
    cc = ctx.cc or 0
    return (cc >= 100 and ctx.cuda_at_least("12.8")) or (90 <= cc < 100 and ctx.cuda_at_least("12.0"))


def _deep_gemm_supported(ctx: RoutingContext) -> bool:
    """is_deep_gemm_supported: DeepGEMM present (vendored in every wheel) and CudaPlatform.support_deep_gemm():
    sm90 or the 100 / 120 families (platforms/cuda.py, 0.25.0 ... 0.33.0)."""
    cc = ctx.cc or 0
    return ctx.platform.assumptions.deep_gemm and (cc == 90 or cc // 10 in (10, 12))


def _deep_gemm_shape(cfg: KernelConfig) -> str | None:
    """should_use_deepgemm_for_fp8_linear / should_use_flashinfer_for_blockscale_fp8_gemm: bf16 output,
    N % 64 == 0 and K % 128 == 0 (FlashInfer also needs bf16 input, which vLLM's FP8 linears always have)."""
    if cfg.out_dtype != "bfloat16" or cfg.n % 64 or cfg.k % 128:
        return "The provided metadata is not supported."
    return None


class CutlassFP8ScaledMMLinearKernel(Kernel):
    name = "CutlassFP8ScaledMMLinearKernel"
    numerics = SCALED_MM
    backends = ("cutlass",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        """cutlass.py: 0.25-0.30 check only for CUDA (so below sm89 it wins wherever it comes first); 0.31 adds
        cutlass_fp8_supported()."""
        if ctx.kind != "cuda":
            return "requires CUDA."
        if ctx.profile.has("cutlass-fp8-check") and not cutlass_fp8_supported(ctx):
            return "CUTLASS FP8 kernels not available"
        return None


class CutlassFp8BlockScaledMMKernel(BlockScaledKernel):
    name = "CutlassFp8BlockScaledMMKernel"
    numerics = BLOCK
    backends = ("cutlass",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        """cutlass.py: 0.25-0.33 word the refusal without a space before the capability; 0.34 adds it."""
        if ctx.kind != "cuda" or not _cutlass_block_fp8_supported(ctx):
            space = " " if ctx.profile.has("cutlass-block-wording") else ""
            return f"The device compute capability of{space}{ctx.cc} is not supported."
        return None

    @classmethod
    def can_implement_block(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return needs_1x128(cfg) or _refuse_e8m0(cfg)


class FlashInferFP8ScaledMMLinearKernel(Kernel):
    name = "FlashInferFP8ScaledMMLinearKernel"
    numerics = SCALED_MM
    backends = ("flashinfer_cutlass",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "cuda":
            return "requires CUDA."
        if not ctx.platform.assumptions.flashinfer:
            return "requires FlashInfer to be installed."
        if ctx.cc is not None and ctx.cc < 100:
            return "requires compute capability 100 and above."
        return None

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return needs_per_tensor(cfg)


class DeepGemmFp8BlockScaledMMKernel(BlockScaledKernel):
    name = "DeepGemmFp8BlockScaledMMKernel"
    numerics = BLOCK
    backends = ("deep_gemm",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "cuda":
            return "DeepGEMM is only supported on cuda platform"
        if not _deep_gemm_supported(ctx):
            return "Currently, only Hopper and Blackwell GPUs are supported."
        return None

    @classmethod
    def can_implement_block(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.out_dtype != "bfloat16":
            return "Supports only output dtype of bfloat16"
        wrong = needs_1x128(cfg)
        if wrong is None and deep_gemm_auto_disabled(ctx):
            return f"Should not use deepgemm for model {ctx.model_type}"
        return wrong or _deep_gemm_shape(cfg)


class FlashInferFp8BlockScaledMMKernel(BlockScaledKernel):
    """The FlashInfer half of the dynamic kernel below (scaled_mm/flashinfer.py); in no table by itself."""

    name = "FlashInferFp8BlockScaledMMKernel"

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "cuda":
            return "only cuda devices are supported."
        # is_flashinfer_fp8_blockscale_gemm_supported: VLLM_BLOCKSCALE_FP8_GEMM_FLASHINFER (default 1), flashinfer
        # installed, is_device_capability(90) exactly, and flashinfer.gemm.fp8_blockscale_gemm_sm90 present.
        if not (ctx.platform.assumptions.flashinfer and ctx.cc == 90):
            return "FlashInfer block-scale FP8 GEMM is not available."
        return None

    @classmethod
    def can_implement_block(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return needs_1x128(cfg) or _deep_gemm_shape(cfg)


class FlashInferFp8DeepGEMMDynamicBlockScaledKernel(Kernel):
    """Fp8BlockScaledDynamicMMLinearKernel (BlockScaledMMLinearKernel.py): FlashInfer for small batches, DeepGEMM
    for large; both halves must pass, and each failing half is named in vLLM's combined message."""

    name = "FlashInferFp8DeepGEMMDynamicBlockScaledKernel"
    numerics = BLOCK
    backends = ("flashinfer_cutlass",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        return _both("is not supported", FlashInferFp8BlockScaledMMKernel.is_supported(ctx),
                     DeepGemmFp8BlockScaledMMKernel.is_supported(ctx))

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return _both("cannot implement", FlashInferFp8BlockScaledMMKernel.can_implement(cfg, ctx),
                     DeepGemmFp8BlockScaledMMKernel.can_implement(cfg, ctx))


def _both(verb: str, base: str | None, fallback: str | None) -> str | None:
    if base and fallback:
        return f"base {verb} due to {base}; fallback {verb} due to {fallback}"
    if base:
        return f"base {verb} due to {base}"
    if fallback:
        return f"fallback {verb} due to {fallback}"
    return None


class MarlinFP8ScaledMMLinearKernel(Kernel):
    """Weight-only FP8 through Marlin; also the block list's fallback below Hopper (from 0.29 sm89 lands here)."""

    name = "MarlinFP8ScaledMMLinearKernel"
    numerics = WEIGHT_ONLY
    backends = ("marlin",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "cuda":
            return "requires CUDA."
        if ctx.cc is not None and ctx.cc < 75:
            return "FP8 Marlin requires compute capability 7.5 or higher"
        if ctx.platform.assumptions.batch_invariant:
            return "FP8 Marlin not supported for batch invariant execution."
        if not ctx.profile.has("marlin-late") and (ctx.cc or 0) >= 89:
            # 0.25-0.28 marlin.py; VLLM_TEST_FORCE_FP8_MARLIN (a test switch) is not modelled.
            return "To apply FP8 Marlin on high-capability GPUs, please set VLLM_TEST_FORCE_FP8_MARLIN=1"
        return None


class HummingFP8ScaledMMLinearKernel(Kernel):
    """Weight-only FP8 through the separate humming package."""

    name = "HummingFP8ScaledMMLinearKernel"
    numerics = WEIGHT_ONLY
    backends = ("humming",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        return humming_unsupported(ctx)


def humming_unsupported(ctx: RoutingContext) -> str | None:
    """Every Humming kernel's is_supported (FP8 and MXFP8 alike)."""
    if ctx.kind != "cuda":
        return "Humming only supported on CUDA"
    if ctx.profile.has("humming-installed") and not ctx.platform.assumptions.humming:
        return "Humming is not installed"
    if ctx.cc is not None and ctx.cc < 75:
        return "Humming only supported on SM75+"
    return None


class _B12x(Kernel):
    """B12x kernels target consumer Blackwell (SM12x). Their checks were not read from vLLM's source."""

    verified = False
    backends = ("b12x",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "cuda":
            return "requires CUDA."
        if not 120 <= (ctx.cc or 0) < 130:
            return "requires an SM12x GPU (fp8check inference; not read from vLLM)"
        if not ctx.platform.assumptions.b12x:
            return "requires the b12x package (fp8check assumes it is not installed; --assume b12x=yes)"
        return None


class B12xTensorFP8ScaledMMLinearKernel(_B12x):
    name = "B12xTensorFP8ScaledMMLinearKernel"
    numerics = SCALED_MM
    added_by = {(FP8, "cuda"): "b12x"}


class B12xFp8BlockScaledMMKernel(_B12x, BlockScaledKernel):
    name = "B12xFp8BlockScaledMMKernel"
    numerics = BLOCK
    added_by = {(FP8_BLOCK, "cuda"): "b12x"}


def _refuse_e8m0(cfg: KernelConfig) -> str | None:
    if cfg.weight_key.scale_dtype != "float32":
        return "does not support float8_e8m0fnu block scales (fp8check: per vLLM's kernel-selection test)"
    return None
