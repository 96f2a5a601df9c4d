"""The Triton block-scaled FP8 GEMM (scaled_mm/triton.py): the portable fallback of the block lists."""

from __future__ import annotations

from fp8check.kernels.base import BLOCK, BlockScaledKernel, RoutingContext
from fp8check.kernels.quant_keys import KernelConfig


class TritonFp8BlockScaledMMKernel(BlockScaledKernel):
    """vLLM's generic w8a8_triton_block_scaled_mm, listed after the vendor block kernels (DeepGEMM, CUTLASS,
    FlashInfer, AITER, oneDNN) in every block table that has them."""

    name = "TritonFp8BlockScaledMMKernel"
    numerics = BLOCK
    backends = ("triton",)
    slow_fallback = "the portable Triton block GEMM"

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind not in ("cuda", "rocm", "xpu"):
            return "only CUDA-alike and XPU devices are supported."
        return None

    @classmethod
    def can_implement_block(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if ctx.kind == "cuda" and cfg.weight_key.scale_dtype != "float32":
            return "does not support float8_e8m0fnu block scales on CUDA (fp8check: per vLLM's kernel-selection test)"
        return None

    @classmethod
    def runtime_error(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        # No capability check at selection; Triton's JIT refuses fp8e4nv below sm89 (vllm#39610, #17581).
        if ctx.kind == "cuda" and ctx.cc is not None and ctx.cc < 89:
            return ("type fp8e4nv not supported in this architecture. The supported fp8 dtypes are "
                    "('fp8e4b15', 'fp8e5')")
        return None
