"""Intel XPU kernels (vllm/model_executor/kernels/linear/scaled_mm/xpu.py)."""

from __future__ import annotations

from fp8check.kernels.base import BLOCK, SCALED_MM, WEIGHT_ONLY, BlockScaledKernel, Kernel, RoutingContext
from fp8check.kernels.quant_keys import (
    KernelConfig, kFp8DynamicTensorSym, kFp8DynamicTokenSym, kFp8StaticChannelSym, kFp8StaticTensorSym,
    kFp8StaticTokenSym,
)

FP8_DTYPES = ("float8_e4m3fn", "float8_e5m2")
_WEIGHT_KEYS = (kFp8StaticChannelSym, kFp8StaticTensorSym)
_ACTIVATION_KEYS = (kFp8DynamicTensorSym, kFp8DynamicTokenSym, kFp8StaticTensorSym, kFp8StaticTokenSym)


class XPUW8A16FP8LinearKernel(Kernel):
    """Weight-only FP8 on XPU. It checks no activation key, so it also takes W8A8 configs (run weight-only)."""

    name = "XPUW8A16FP8LinearKernel"
    numerics = WEIGHT_ONLY
    backends = ("xpu_woq",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        return None if ctx.kind == "xpu" else "XPUW8A16FP8Linear only support on XPU"

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.weight_key not in _WEIGHT_KEYS:
            return "XPUW8A16FP8Linear only support per-channel and per-tensor quantization"
        if cfg.weight_dtype not in FP8_DTYPES:
            return "XPUW8A16FP8Linear only support FP8 weight dtype"
        return None


class XPUW8A8FP8LinearKernel(Kernel):
    name = "XPUW8A8FP8LinearKernel"
    numerics = SCALED_MM
    backends = ("xpu",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        return None if ctx.kind == "xpu" else "XPUW8A8FP8Linear only support on XPU"

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.weight_key not in _WEIGHT_KEYS:
            return "XPUW8A8FP8Linear only support per-channel and per-tensor quantization"
        if cfg.activation_key not in _ACTIVATION_KEYS:
            return "XPUW8A8FP8Linear only support per-tensor and per-token activation quantization"
        if cfg.weight_dtype not in FP8_DTYPES:
            return "XPUW8A8FP8Linear only support FP8 weight dtype"
        return None


class XPUFp8BlockScaledMMKernel(BlockScaledKernel):
    """oneDNN block-scaled GEMM. Any block size passes selection; ragged shapes fail after loading."""

    name = "XPUFp8BlockScaledMMKernel"
    numerics = BLOCK
    backends = ("xpu",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        return None if ctx.kind == "xpu" else "XPUFp8BlockScaledMM only support on XPU"

    @classmethod
    def runtime_error(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        block_n, block_k = cfg.weight_key.group_shape
        if cfg.n % block_n:
            from math import gcd

            group = gcd(cfg.n, block_n)
            if group % 16:
                return (f"XPU block-scaled FP8: N ({cfg.n}) yields group width {group}, but oneDNN only supports "
                        "multiples of 16; this weight shape is unsupported.")
        if cfg.k % block_k:
            return (f"XPU block-scaled FP8 requires K ({cfg.k}) to be a multiple of the weight block size "
                    f"({block_k}); ragged-K weights are unsupported.")
        return None
