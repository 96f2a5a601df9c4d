"""x86 CPU FP8 kernels (scaled_mm/cpu.py). Only CPUFp8BlockScaledMMKernel's checks were read from source;
the W8A8 ones are modelled on it and on vLLM's docs ("dynamic per-token activation quantization")."""

from __future__ import annotations

from fp8check.kernels.base import BlockScaledKernel, Kernel, RoutingContext
from fp8check.kernels.quant_keys import KernelConfig


class _CPUKernel(Kernel):
    """vLLM's x86 FP8 kernels all need the CPU platform with AMX tiles."""

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "cpu":
            return "requires CPU platform."
        if not ctx.platform.assumptions.cpu_amx:
            return "requires AMX tile support (Sapphire Rapids or newer)."
        return None


def _output_dtype(cfg: KernelConfig) -> str | None:
    if cfg.out_dtype not in ("bfloat16", "float32"):
        return "Only bfloat16/float32 output dtype supported."
    return None


class CPUFP8W8A8ScaledMMLinearKernel(_CPUKernel):
    name = "CPUFP8W8A8ScaledMMLinearKernel"
    verified = False

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.activation_key.static or cfg.activation_key.group_shape != (1, -1):
            return "requires dynamic per-token activation quantization (fp8check inference)"
        return _output_dtype(cfg)


class CPUFp8PerTensorScaledMMLinearKernel(_CPUKernel):
    name = "CPUFp8PerTensorScaledMMLinearKernel"
    verified = False

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if not cfg.weight_key.is_per_tensor:
            return "requires per-tensor weight scales (fp8check inference)"
        return _output_dtype(cfg)


class CPUFp8W8A8BlockScaledMMKernel(_CPUKernel, BlockScaledKernel):
    name = "CPUFp8W8A8BlockScaledMMKernel"
    verified = False

    @classmethod
    def can_implement_block(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return CPUFp8BlockScaledMMKernel.can_implement_block(cfg, ctx)


class CPUFp8BlockScaledMMKernel(_CPUKernel, BlockScaledKernel):
    name = "CPUFp8BlockScaledMMKernel"

    @classmethod
    def can_implement_block(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        block_n, block_k = cfg.weight_key.group_shape
        if block_k != 128:
            return f"CPU FP8 kernel requires K-dimension block size of 128, got {block_k}."
        if block_n <= 0 or block_n % 32:
            return f"CPU FP8 kernel requires N-dimension block size to be a positive multiple of 32, got {block_n}."
        if cfg.weight_key.scale_dtype != "float32":
            return "does not support float8_e8m0fnu block scales (fp8check: per vLLM's kernel-selection test)"
        return _output_dtype(cfg)
