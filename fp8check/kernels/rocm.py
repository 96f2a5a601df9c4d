"""AMD ROCm kernels (scaled_mm/rocm.py, aiter.py)."""

from __future__ import annotations

from fp8check.kernels.base import (
    BLOCK, SCALED_MM, BlockScaledKernel, Kernel, RoutingContext, is_cdna3_or_rdna4, needs_1x128, needs_per_tensor,
)
from fp8check.kernels.quant_keys import KernelConfig

_AITER_ENV = ("requires setting `VLLM_ROCM_USE_AITER=1` and `VLLM_ROCM_USE_AITER_LINEAR=1`. "
              "`VLLM_ROCM_USE_AITER_LINEAR` default is True.")


class _AiterPerToken(Kernel):
    """The aiter per-token GEMMs: AITER switched on, per-token activations x per-channel weights."""

    numerics = SCALED_MM

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "rocm":
            return "requires ROCm."
        if not ctx.platform.assumptions.aiter:
            return _AITER_ENV
        return None

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.activation_key.group_shape != (1, -1) or cfg.weight_key.group_shape != (-1, 1):
            return "requires per token activation scales and per channel weight scales."
        return None


class AiterHipbMMPerTokenFp8ScaledMMLinearKernel(_AiterPerToken):
    """aiter.py (0.25.0-0.33.0): also needs VLLM_ROCM_USE_AITER_LINEAR_HIPBMM (default off, not an fp8check
    assumption), so it never wins; its can_implement is modelled on its Aiter siblings."""

    name = "AiterHipbMMPerTokenFp8ScaledMMLinearKernel"  # --linear-backend aiter does not select it

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "rocm":
            return "requires ROCm."
        return ("requires setting `VLLM_ROCM_USE_AITER=1`, `VLLM_ROCM_USE_AITER_LINEAR=1`, "
                "and `VLLM_ROCM_USE_AITER_LINEAR_HIPBMM=1`.")


class AiterPreshuffledPerTokenFp8ScaledMMLinearKernel(_AiterPerToken):
    name = "AiterPreshuffledPerTokenFp8ScaledMMLinearKernel"
    backends = ("aiter",)

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.out_dtype != "bfloat16":
            return "requires bfloat16 output dtype."
        reason = super().can_implement(cfg, ctx)
        if reason:
            return reason
        if cfg.n % 16 or cfg.k % 16:
            return f"requires N and K dimensions divisible by 16, received N={cfg.n} and K={cfg.k}."
        return None


class AiterPerTokenFp8ScaledMMLinearKernel(_AiterPerToken):
    name = "AiterPerTokenFp8ScaledMMLinearKernel"
    backends = ("aiter",)


class ROCmFP8ScaledMMLinearKernel(Kernel):
    name = "ROCmFP8ScaledMMLinearKernel"
    numerics = SCALED_MM

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "rocm":
            return "requires ROCm."
        if not is_cdna3_or_rdna4(ctx):
            # Reworded in 0.27 (rocm.py), same condition.
            return ("requires CDNA3+ (gfx942/gfx950) or RDNA4 (gfx12x)" if ctx.profile.has("rocm-cdna3-wording")
                    else "requires MI3xx or gfx12x")
        if not ctx.platform.assumptions.rocm_skinny_gemm:
            return "requires VLLM_ROCM_USE_SKINNY_GEMM to be enabled."
        return None

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return needs_per_tensor(cfg)


class RDNA4W8A8Fp8BlockScaledMMKernel(BlockScaledKernel):
    """Gated on VLLM_ROCM_USE_HIP_W8A8 and gfx1201; the wording of its reasons is fp8check's."""

    name = "RDNA4W8A8Fp8BlockScaledMMKernel"
    verified = False
    numerics = BLOCK

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "rocm" or ctx.platform.arch != "gfx1201":
            return "requires ROCm on gfx1201 (RDNA4)"
        if not ctx.platform.assumptions.rocm_hip_w8a8:
            return "requires VLLM_ROCM_USE_HIP_W8A8=1"
        return None


class AiterFp8BlockScaledMMKernel(BlockScaledKernel):
    name = "AiterFp8BlockScaledMMKernel"
    numerics = BLOCK
    backends = ("aiter",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "rocm" or not ctx.platform.assumptions.aiter:
            # The source string continues a line with a backslash, so its indentation is part of the text.
            return "Only supported on ROCm platform                 with aiter package installed."
        return None

    @classmethod
    def can_implement_block(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return needs_1x128(cfg)
