"""torch._scaled_mm kernels (vllm/model_executor/kernels/linear/scaled_mm/pytorch.py)."""

from __future__ import annotations

from fp8check.kernels.base import (
    BLOCK, FP8, FP8_BLOCK, SCALED_MM, BlockScaledKernel, Kernel, RoutingContext, is_cdna3_or_rdna4, needs_per_tensor,
)
from fp8check.kernels.quant_keys import KernelConfig


def torch_fp8_scaled_mm_supported(ctx: RoutingContext) -> bool:
    """0.29+ _supports_torch_fp8_scaled_mm(): CPU and XPU yes; CUDA supports_fp8() (cc >= 89); ROCm
    _rocm_torch_fp8_scaled_mm_supported(): gfx942, gfx950, gfx12x or gfx1250."""
    if ctx.kind in ("cpu", "xpu"):
        return True
    if ctx.kind == "rocm":
        return (ctx.platform.arch or "").startswith(("gfx942", "gfx950", "gfx12"))
    return (ctx.cc or 0) >= 89


class _TorchScaledMM(Kernel):
    """The torch._scaled_mm kernels of the FP8 tables."""

    numerics = SCALED_MM
    backends = ("torch",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.profile.has("torch-fp8-support"):
            if not torch_fp8_scaled_mm_supported(ctx):
                return "requires a platform with torch FP8 scaled-MM support."
            return None
        if ctx.profile.has(49664):
            if ctx.kind not in ("cuda", "rocm", "cpu", "xpu"):
                return "requires ROCm, CUDA, CPU or XPU."
        elif ctx.kind not in ("cuda", "rocm", "cpu"):
            return "requires ROCm, CUDA or CPU."
        if ctx.cc is not None and ctx.cc < 89:
            return "requires compute capability 89 and above."
        return None


class PerTensorTorchFP8ScaledMMLinearKernel(_TorchScaledMM):
    name = "PerTensorTorchFP8ScaledMMLinearKernel"
    added_by = {(FP8, "xpu"): 49664}

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return needs_per_tensor(cfg)


class ChannelWiseTorchFP8ScaledMMLinearKernel(_TorchScaledMM):
    """vLLM keeps it as a portable fallback: "Use unfused DQ due to limitations with scaled_mm" — an fp32
    torch._scaled_mm with unit scales, then the scales applied in a second elementwise pass."""

    name = "ChannelWiseTorchFP8ScaledMMLinearKernel"
    added_by = {(FP8, "xpu"): 49664}
    slow_fallback = "torch._scaled_mm with the scales applied unfused, in fp32"

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.activation_key.is_per_tensor and cfg.weight_key.is_per_tensor:
            return "cannot be used with per tensor activation and weight scales."
        return None


class RowWiseTorchFP8ScaledMMLinearKernel(_TorchScaledMM):
    name = "RowWiseTorchFP8ScaledMMLinearKernel"

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "rocm":
            return "requires ROCm."
        if ctx.profile.has("torch-fp8-support"):
            return None if torch_fp8_scaled_mm_supported(ctx) else "requires platform with torch FP8 scaled-MM support."
        if not is_cdna3_or_rdna4(ctx):
            return "requires CDNA3+ or RDNA4"
        if ctx.cc is not None and ctx.cc < 94:
            return "requires compute capability 94 and above."
        return None

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.out_dtype != "bfloat16":
            return "supports BFloat16 output data type only."
        if cfg.activation_key.is_per_tensor or cfg.weight_key.is_per_tensor:
            return "cannot be used with per tensor activation and weight scales."
        return None


class BlockWiseTorchFP8ScaledMMLinearKernel(BlockScaledKernel):
    """torch block-scaled mm (PR #49932), XPU from PR #50826; DeepSeek-style 1x128 / 128x128 only."""

    name = "BlockWiseTorchFP8ScaledMMLinearKernel"
    numerics = BLOCK
    backends = ("torch",)
    # The ROCm block row does not list it, so its ROCm entry has no effect (kept from the hand-written table).
    added_by = {(FP8_BLOCK, "cuda"): 49932, (FP8_BLOCK, "rocm"): 49932, (FP8_BLOCK, "xpu"): 50826}

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.profile.has(50826):
            if ctx.kind not in ("cuda", "rocm", "xpu"):
                return "requires CUDA, ROCm or XPU."
        elif ctx.kind not in ("cuda", "rocm"):
            return "requires CUDA or ROCm."
        if ctx.kind == "cuda" and ctx.cc != 90:
            return "DeepSeek-style (1x128, 128x128) block scaling on CUDA requires compute capability 90 (Hopper)."
        return None

    @classmethod
    def can_implement_block(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.activation_key.group_shape != (1, 128):
            return "requires 1x128 activation quantization."
        if cfg.weight_key.group_shape != (128, 128):
            return "requires 128x128 block weight quantization."
        if cfg.weight_key.scale_dtype != "float32":
            return "does not support float8_e8m0fnu block scales (fp8check: per vLLM's kernel-selection test)"
        return None
