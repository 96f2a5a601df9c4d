"""The MXFP8 linear kernels (vllm/model_executor/kernels/linear/mxfp8/*.py) and what init_mxfp8_linear_kernel
(kernels/linear/__init__.py, _POSSIBLE_MXFP8_KERNELS) selects among them.

MXFP8 has its own table: FP8 E4M3 weights with one E8M0 (uint8) scale per 1 x 32 group, activations quantized
to MXFP8 inside the kernel (kMxfp8Dynamic) or not at all (weight-only kernels). Its kernels see only the rank's
weight shape (Mxfp8LinearLayerConfig.weight_shape, from 0.31 on checked by FlashInfer and Marlin); the keys are
fixed. The selection's reason format differs from the FP8 tables' ("{Name}: {reason}", " {Name} disabled by
environment variable"): fp8check.kernels.registry.check_kernel applies it for MXFP8.

Releases (read from every wheel 0.25.0 ... 0.33.0): B12x joined the CUDA row in 0.28, FlashInfer TRT-LLM in 0.29,
Torch (torch._scaled_mm with MX scales) on CUDA and XPU in 0.33; the shape checks of FlashInfer CUTLASS / CuTe-DSL
and Marlin and FlashInfer CUTLASS's `has_flashinfer()` arrived in 0.31, Humming's `has_humming()` in 0.28 (the
constants below name each change's rule-profile key).
"""

from __future__ import annotations

from fp8check.kernels.base import Kernel, RoutingContext
from fp8check.kernels.cuda import humming_unsupported
from fp8check.kernels.quant_keys import KernelConfig

MXFP8 = "mxfp8"            # the quantization of init_mxfp8_linear_kernel (_get_linear_backend(quantization="mxfp8"))
MXFP8_BLOCK_SIZE = 32

# The numerics classes (fp8check.kernels.numerics.mxfp8 runs each).
MX_WEIGHT_ONLY = "mxfp8-weight-only"  # MXFP8 weight dequantized to the activation dtype; activations not quantized
MX_W8A8 = "mxfp8-w8a8"                # activations MX-quantized in 1 x 32 groups; fp32 accumulation of both

# Release changes (RuleProfile.has keys):
B12X_ADDED = "b12x"                   # 0.28: B12xMxfp8LinearKernel (the same release's B12x FP8 kernels)
TRTLLM_ADDED = "mxfp8-trtllm"         # 0.29: FlashInferTrtllmMxfp8LinearKernel
SHAPE_CHECKS = "mxfp8-shape"          # 0.31: weight_shape checks, has_flashinfer()
TORCH_ADDED = "mxfp8-torch"           # 0.33: TorchMxFp8LinearKernel
BACKEND_FALLBACK = "mxfp8-backend-fallback"  # 0.28: a --linear-backend without MXFP8 kernels falls back
#                                             (0.25-0.27 raise)


def _family(ctx: RoutingContext, major: int) -> bool:
    """is_device_capability_family: sm_100 and sm_103 are family 100, sm_120 / sm_121 family 120."""
    return ctx.kind == "cuda" and (ctx.cc or 0) // 10 == major // 10


def _mm_mxfp8_shape(cfg: KernelConfig) -> str | None:
    """flashinfer.py _check_mm_mxfp8_shape (0.31+)."""
    if cfg.k < 128:
        return f"mm_mxfp8 requires K >= 128, got K={cfg.k}."
    if cfg.k % MXFP8_BLOCK_SIZE:
        return f"mm_mxfp8 requires K to be divisible by {MXFP8_BLOCK_SIZE}, got K={cfg.k}."
    if cfg.n < 128:
        return f"mm_mxfp8 requires N >= 128, got N={cfg.n}."
    return None


class FlashInferCutedslMxfp8LinearKernel(Kernel):
    name = "FlashInferCutedslMxfp8LinearKernel"
    numerics = MX_W8A8
    backends = ("flashinfer_cutedsl",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if not _family(ctx, 100):
            return "requires sm_100/sm_103 (Blackwell)"
        if not ctx.platform.assumptions.flashinfer:  # has_flashinfer_cutedsl: the CuTe-DSL ships with flashinfer
            return "requires FlashInfer CuTe-DSL module"
        return None

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return _mm_mxfp8_shape(cfg) if ctx.profile.has(SHAPE_CHECKS) else None


class FlashInferCutlassMxfp8LinearKernel(Kernel):
    name = "FlashInferCutlassMxfp8LinearKernel"
    numerics = MX_W8A8
    backends = ("flashinfer_cutlass",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "cuda" or (ctx.cc or 0) < 100:
            return "requires >=sm_100 (Blackwell)"
        if ctx.profile.has(SHAPE_CHECKS) and not ctx.platform.assumptions.flashinfer:
            return "requires FlashInfer"
        return None

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if not ctx.profile.has(SHAPE_CHECKS):
            return None
        reason = _mm_mxfp8_shape(cfg)
        if reason is None and _family(ctx, 120) and cfg.n % 32:
            reason = f"mm_mxfp8 on SM12x requires N to be divisible by 32, got N={cfg.n}."
        return reason


class MarlinMxfp8LinearKernel(Kernel):
    """W8A16: is_fp8_marlin_supported() is has_device_capability(75), which only CUDA and ROCm report."""

    name = "MarlinMxfp8LinearKernel"
    numerics = MX_WEIGHT_ONLY
    backends = ("marlin",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        return None if ctx.cc is not None and ctx.cc >= 75 else "Marlin FP8 not available"

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if not ctx.profile.has(SHAPE_CHECKS):
            return None
        if cfg.n <= 0 or cfg.k <= 0:
            return f"Marlin MXFP8 requires positive N and K, got N={cfg.n}, K={cfg.k}."
        if cfg.k % MXFP8_BLOCK_SIZE:
            return f"Marlin MXFP8 requires K to be divisible by {MXFP8_BLOCK_SIZE}, got K={cfg.k}."
        return None


class B12xMxfp8LinearKernel(Kernel):
    """Its GEMM (b12x.gemm.mxfp8_linear) was not read; W8A8 MX numerics are fp8check's inference."""

    name = "B12xMxfp8LinearKernel"
    numerics = MX_W8A8
    backends = ("b12x",)
    added_by = {(MXFP8, "cuda"): B12X_ADDED}

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "cuda":
            return "b12x MXFP8 kernels are only available on CUDA"
        if not _family(ctx, 120):
            return "b12x MXFP8 kernels require a Blackwell 12x device"
        if not ctx.platform.assumptions.b12x:
            return "Install the B12X backend with `pip install vllm[b12x]`"
        return None


class EmulationMxfp8LinearKernel(Kernel):
    """Dequantizes the weight to bf16 once at load (VLLM_MXFP8_EMULATION_DEQUANT_AT_LOAD) and runs F.linear."""

    name = "EmulationMxfp8LinearKernel"
    numerics = MX_WEIGHT_ONLY
    backends = ("emulation",)
    slow_fallback = "MXFP8 emulation (weights dequantized to bf16, a plain linear)"


class HummingMxfp8LinearKernel(Kernel):
    name = "HummingMxfp8LinearKernel"
    numerics = MX_W8A8  # input_schema kMxfp8Dynamic (0.33); 0.25's prepare_humming_layer was not traced
    backends = ("humming",)

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        return humming_unsupported(ctx)


class FlashInferTrtllmMxfp8LinearKernel(Kernel):
    name = "FlashInferTrtllmMxfp8LinearKernel"
    numerics = MX_W8A8
    backends = ("flashinfer_trtllm",)
    added_by = {(MXFP8, "cuda"): TRTLLM_ADDED}

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if not _family(ctx, 100):
            return "requires SM100-family GPU"
        if not ctx.platform.assumptions.flashinfer:
            return "requires FlashInfer"
        return None

    @classmethod
    def runtime_error(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.k % 256:  # process_weights_after_loading
            return f"FlashInfer TRTLLM MXFP8 requires K to be divisible by 256, got K={cfg.k}."
        return None


class TorchMxFp8LinearKernel(Kernel):
    name = "TorchMxFp8LinearKernel"
    numerics = MX_W8A8
    backends = ("torch",)
    added_by = {(MXFP8, "cuda"): TORCH_ADDED, (MXFP8, "xpu"): TORCH_ADDED}

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind == "xpu" or (ctx.kind == "cuda" and (ctx.cc or 0) >= 90):
            return None
        return "requires XPU or CUDA (>=sm_90) for native torch._scaled_mm"


class RocmDotScaledMxfp8LinearKernel(Kernel):
    """tl.dot_scaled on CDNA4; K not a multiple of 128 is dequantized to bf16 at load and runs a plain linear."""

    name = "RocmDotScaledMxfp8LinearKernel"
    numerics = MX_W8A8

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        if ctx.kind != "rocm":
            return "not ROCm"
        if not any(gfx in (ctx.platform.arch or "") for gfx in ("gfx95", "gfx1250")):  # supports_mx()
            return "native MX requires CDNA4 (gfx95x)"
        return None


class XPUMxFp8LinearKernel(Kernel):
    name = "XPUMxFp8LinearKernel"
    numerics = MX_W8A8

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        return None if ctx.kind == "xpu" else "XPUMxFp8 only support on XPU"


def backend_error(backend: str, row: tuple[type[Kernel], ...], ctx: RoutingContext) -> str | None:
    """0.25-0.27: a --linear-backend with no MXFP8 kernel in the platform's row raises instead of falling back."""
    if backend == "auto" or ctx.profile.has(BACKEND_FALLBACK) or any(backend in k.backends for k in row):
        return None
    return f"--linear-backend={backend} was requested but no '{backend}' kernel exists for MXFP8 layers."
