"""x86 CPU FP8 kernels (vllm/model_executor/kernels/linear/scaled_mm/cpu.py, read in vLLM 0.31.0 and 0.33.0).

0.25-0.30 have only CPUFp8BlockScaledMMKernel (W8A16 block, AMX). 0.31 adds the W8A8 kernels, which need native
AMX-FP8 (ops.cpu_has_amx_fp8(), Diamond Rapids) and the per-tensor W8A16 one; 0.33 adds the channel-wise one.
"""

from __future__ import annotations

from fp8check.kernels.base import BLOCK, FP8, FP8_BLOCK, SCALED_MM, BlockScaledKernel, Kernel, RoutingContext
from fp8check.kernels.quant_keys import KernelConfig


class _CPUKernel(Kernel):
    """Every CPU FP8 kernel needs the CPU platform with AMX tiles and the fp8_scaled_mm_cpu op (present in the
    CPU build: fp8check does not model a build without it)."""

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "cpu":
            return "requires CPU platform."
        if not ctx.platform.assumptions.cpu_amx:
            return "requires AMX tile support (Sapphire Rapids or newer)."
        return None


class _AmxFp8Kernel(_CPUKernel):
    amx_fp8_reason = ""

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        reason = super().is_supported(ctx)
        if reason is None and not ctx.platform.assumptions.cpu_amx_fp8:
            return cls.amx_fp8_reason
        return reason


def _n_multiple_of_32(cfg: KernelConfig) -> str | None:
    """The AMX tinygemm / float8_linear_prepack_cpu kernels tile N in chunks of 32."""
    if cfg.n % 32:
        return f"requires weight output dim (N={cfg.n}) to be a multiple of 32."
    return None


def _bf16_or_fp32_output(cfg: KernelConfig) -> str | None:
    if cfg.out_dtype not in ("bfloat16", "float32"):
        return "Only bfloat16/float32 output dtype supported."
    return None


def _block_shape(cfg: KernelConfig, what: str) -> str | None:
    block_n, block_k = cfg.weight_key.group_shape
    if block_k != 128:
        return f"{what} requires K-dimension block size of 128, got {block_k}."
    if block_n <= 0 or block_n % 32:
        return f"{what} requires N-dimension block size to be a positive multiple of 32, got {block_n}."
    return None


class CPUFP8W8A8ScaledMMLinearKernel(_AmxFp8Kernel):
    name = "CPUFP8W8A8ScaledMMLinearKernel"
    numerics = SCALED_MM
    added_by = {(FP8, "cpu"): "cpu-fp8"}
    amx_fp8_reason = ("requires native AMX-FP8 hardware (Diamond Rapids); falls back to the Torch FP8 kernels "
                      "otherwise.")

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.out_dtype not in ("bfloat16", "float16", "float32"):
            return "Only bfloat16/float16/float32 output dtype supported."
        block_n, block_k = cfg.weight_key.group_shape
        if block_n > 0 and block_k > 0:
            return "Block-quantized weights not handled by FP8 W8A8 kernel."
        return _n_multiple_of_32(cfg)


class CPUFp8PerTensorScaledMMLinearKernel(_CPUKernel):
    name = "CPUFp8PerTensorScaledMMLinearKernel"
    numerics = SCALED_MM
    added_by = {(FP8, "cpu"): "cpu-fp8"}

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if not cfg.weight_key.is_per_tensor:
            return "requires a per-tensor weight scale."
        if not cfg.activation_key.is_per_tensor:
            return "requires a per-tensor activation scale."
        return _bf16_or_fp32_output(cfg) or _n_multiple_of_32(cfg)


class CPUFp8ChannelWiseScaledMMLinearKernel(_CPUKernel):
    name = "CPUFp8ChannelWiseScaledMMLinearKernel"
    numerics = SCALED_MM
    added_by = {(FP8, "cpu"): "cpu-fp8-channel"}

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.weight_key.group_shape != (-1, 1):
            return "requires a per-channel weight scale."
        if cfg.out_dtype != "bfloat16":
            return "Only bfloat16 output dtype supported."
        return _n_multiple_of_32(cfg)


class CPUFp8W8A8BlockScaledMMKernel(_AmxFp8Kernel, BlockScaledKernel):
    name = "CPUFp8W8A8BlockScaledMMKernel"
    numerics = BLOCK
    added_by = {(FP8_BLOCK, "cpu"): "cpu-fp8"}
    amx_fp8_reason = "requires native AMX-FP8 hardware; falls back to CPUFp8BlockScaledMMKernel (W8A16) otherwise."

    @classmethod
    def can_implement_block(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return (_block_shape(cfg, "CPU FP8 W8A8 block kernel") or _bf16_or_fp32_output(cfg)
                or _n_multiple_of_32(cfg))


class CPUFp8BlockScaledMMKernel(_CPUKernel, BlockScaledKernel):
    name = "CPUFp8BlockScaledMMKernel"
    numerics = BLOCK

    @classmethod
    def can_implement_block(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        reason = _block_shape(cfg, "CPU FP8 kernel")
        if reason:
            return reason
        if cfg.weight_key.scale_dtype != "float32":
            return "does not support float8_e8m0fnu block scales (fp8check: per vLLM's kernel-selection test)"
        return _bf16_or_fp32_output(cfg)
