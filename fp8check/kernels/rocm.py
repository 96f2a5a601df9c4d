"""AMD ROCm kernels (scaled_mm/rocm.py, aiter.py)."""

from __future__ import annotations

from fp8check.kernels.base import BlockScaledKernel, Kernel, RoutingContext, needs_1x128
from fp8check.kernels.quant_keys import KernelConfig

_AITER_ENV = ("requires setting `VLLM_ROCM_USE_AITER=1` and `VLLM_ROCM_USE_AITER_LINEAR=1`. "
              "`VLLM_ROCM_USE_AITER_LINEAR` default is True.")


def _aiter_reason(ctx: RoutingContext) -> str | None:
    if ctx.kind != "rocm":
        return "requires ROCm."
    if not ctx.platform.assumptions.aiter:
        return _AITER_ENV
    return None


def _per_token_channel(cfg: KernelConfig) -> str | None:
    if cfg.activation_key.group_shape != (1, -1) or cfg.weight_key.group_shape != (-1, 1):
        return "requires per token activation scales and per channel weight scales."
    return None


class AiterHipbMMPerTokenFp8ScaledMMLinearKernel(Kernel):
    """Conditions not extracted from vLLM; modelled on its Aiter siblings."""

    name = "AiterHipbMMPerTokenFp8ScaledMMLinearKernel"
    verified = False

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        return _aiter_reason(ctx)

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return _per_token_channel(cfg)


class AiterPreshuffledPerTokenFp8ScaledMMLinearKernel(Kernel):
    name = "AiterPreshuffledPerTokenFp8ScaledMMLinearKernel"

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        return _aiter_reason(ctx)

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.out_dtype != "bfloat16":
            return "requires bfloat16 output dtype."
        reason = _per_token_channel(cfg)
        if reason:
            return reason
        if cfg.n % 16 or cfg.k % 16:
            return f"requires N and K dimensions divisible by 16, received N={cfg.n} and K={cfg.k}."
        return None


class AiterPerTokenFp8ScaledMMLinearKernel(Kernel):
    name = "AiterPerTokenFp8ScaledMMLinearKernel"

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        return _aiter_reason(ctx)

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return _per_token_channel(cfg)


class ROCmFP8ScaledMMLinearKernel(Kernel):
    name = "ROCmFP8ScaledMMLinearKernel"

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "rocm":
            return "requires ROCm."
        arch = ctx.platform.arch or ""
        if not (arch.startswith(("gfx94", "gfx95")) or arch.startswith("gfx12")):
            return "requires MI3xx or gfx12x"
        if not ctx.platform.assumptions.rocm_skinny_gemm:
            return "requires VLLM_ROCM_USE_SKINNY_GEMM to be enabled."
        return None

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if not (cfg.activation_key.is_per_tensor and cfg.weight_key.is_per_tensor):
            return "requires per tensor activation and weight scales."
        return None


class RDNA4W8A8Fp8BlockScaledMMKernel(BlockScaledKernel):
    """Gated on VLLM_ROCM_USE_HIP_W8A8 and gfx1201; the wording of its reasons is fp8check's."""

    name = "RDNA4W8A8Fp8BlockScaledMMKernel"
    verified = False

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "rocm" or ctx.platform.arch != "gfx1201":
            return "requires ROCm on gfx1201 (RDNA4)"
        if not ctx.platform.assumptions.rocm_hip_w8a8:
            return "requires VLLM_ROCM_USE_HIP_W8A8=1"
        return None


class AiterFp8BlockScaledMMKernel(BlockScaledKernel):
    name = "AiterFp8BlockScaledMMKernel"

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "rocm" or not ctx.platform.assumptions.aiter:
            # The source string continues a line with a backslash, so its indentation is part of the text.
            return "Only supported on ROCm platform                 with aiter package installed."
        return None

    @classmethod
    def can_implement_block(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return needs_1x128(cfg)
