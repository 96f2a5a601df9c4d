"""Per-platform ordered kernel tables and the selection loop (vllm/model_executor/kernels/linear/__init__.py)."""

from __future__ import annotations

from typing import NamedTuple

from fp8check.kernels import cpu
from fp8check.kernels import cuda
from fp8check.kernels import pytorch
from fp8check.kernels import rocm
from fp8check.kernels import triton_block
from fp8check.kernels import xpu
from fp8check.kernels.base import Kernel, RoutingContext
from fp8check.kernels.quant_keys import KernelConfig

FP8 = "fp8_w8a8"
FP8_BLOCK = "fp8_block_w8a8"
W8A16_FP8 = "w8a16_fp8"

# vLLM 0.33.0's tables; `candidates` derives each older release's from them (see LATE_KERNELS).
TABLES: dict[str, dict[str, tuple[type[Kernel], ...]]] = {
    FP8: {
        "cuda": (cuda.FlashInferFP8ScaledMMLinearKernel, cuda.CutlassFP8ScaledMMLinearKernel,
                 cuda.B12xTensorFP8ScaledMMLinearKernel, pytorch.PerTensorTorchFP8ScaledMMLinearKernel,
                 pytorch.ChannelWiseTorchFP8ScaledMMLinearKernel, cuda.MarlinFP8ScaledMMLinearKernel,
                 cuda.HummingFP8ScaledMMLinearKernel),
        "rocm": (rocm.AiterHipbMMPerTokenFp8ScaledMMLinearKernel, rocm.AiterPreshuffledPerTokenFp8ScaledMMLinearKernel,
                 rocm.AiterPerTokenFp8ScaledMMLinearKernel, rocm.ROCmFP8ScaledMMLinearKernel,
                 pytorch.PerTensorTorchFP8ScaledMMLinearKernel, pytorch.RowWiseTorchFP8ScaledMMLinearKernel,
                 pytorch.ChannelWiseTorchFP8ScaledMMLinearKernel),
        "cpu": (cpu.CPUFP8W8A8ScaledMMLinearKernel, cpu.CPUFp8PerTensorScaledMMLinearKernel,
                cpu.CPUFp8ChannelWiseScaledMMLinearKernel, pytorch.PerTensorTorchFP8ScaledMMLinearKernel,
                pytorch.ChannelWiseTorchFP8ScaledMMLinearKernel),
        "xpu": (xpu.XPUW8A16FP8LinearKernel, xpu.XPUW8A8FP8LinearKernel,
                pytorch.PerTensorTorchFP8ScaledMMLinearKernel, pytorch.ChannelWiseTorchFP8ScaledMMLinearKernel),
    },
    FP8_BLOCK: {
        "cuda": (cuda.FlashInferFp8DeepGEMMDynamicBlockScaledKernel, cuda.DeepGemmFp8BlockScaledMMKernel,
                 cuda.CutlassFp8BlockScaledMMKernel, cuda.B12xFp8BlockScaledMMKernel, cuda.MarlinFP8ScaledMMLinearKernel,
                 cuda.HummingFP8ScaledMMLinearKernel, triton_block.TritonFp8BlockScaledMMKernel,
                 pytorch.BlockWiseTorchFP8ScaledMMLinearKernel),
        "rocm": (rocm.RDNA4W8A8Fp8BlockScaledMMKernel, rocm.AiterFp8BlockScaledMMKernel,
                 triton_block.TritonFp8BlockScaledMMKernel),
        "cpu": (cpu.CPUFp8W8A8BlockScaledMMKernel, cpu.CPUFp8BlockScaledMMKernel),
        "xpu": (xpu.XPUFp8BlockScaledMMKernel, triton_block.TritonFp8BlockScaledMMKernel,
                pytorch.BlockWiseTorchFP8ScaledMMLinearKernel),
    },
    W8A16_FP8: {
        "cuda": (cuda.HummingFP8ScaledMMLinearKernel, cuda.MarlinFP8ScaledMMLinearKernel),
        "rocm": (),
        "cpu": (),
        "xpu": (xpu.XPUW8A16FP8LinearKernel,),
    },
}

# _LINEAR_BACKEND_KERNEL_MAP, restricted to the FP8 kernels above.
BACKEND_KERNELS: dict[str, frozenset[str]] = {
    "xpu": frozenset({"XPUW8A8FP8LinearKernel", "XPUFp8BlockScaledMMKernel"}),
    "xpu_woq": frozenset({"XPUW8A16FP8LinearKernel"}),
    "torch": frozenset({"PerTensorTorchFP8ScaledMMLinearKernel", "ChannelWiseTorchFP8ScaledMMLinearKernel",
                        "RowWiseTorchFP8ScaledMMLinearKernel", "BlockWiseTorchFP8ScaledMMLinearKernel"}),
    "triton": frozenset({"TritonFp8BlockScaledMMKernel"}),
    "marlin": frozenset({"MarlinFP8ScaledMMLinearKernel"}),
    "cutlass": frozenset({"CutlassFP8ScaledMMLinearKernel", "CutlassFp8BlockScaledMMKernel"}),
    "flashinfer_cutlass": frozenset({"FlashInferFP8ScaledMMLinearKernel", "FlashInferFp8DeepGEMMDynamicBlockScaledKernel"}),
    "deep_gemm": frozenset({"DeepGemmFp8BlockScaledMMKernel"}),
    "aiter": frozenset({"AiterFp8BlockScaledMMKernel", "AiterPerTokenFp8ScaledMMLinearKernel",
                        "AiterPreshuffledPerTokenFp8ScaledMMLinearKernel"}),
    "humming": frozenset({"HummingFP8ScaledMMLinearKernel"}),
    "b12x": frozenset({"B12xFp8BlockScaledMMKernel", "B12xTensorFP8ScaledMMLinearKernel"}),
}
# vllm/config/kernel.py's allowed --linear-backend values.
LINEAR_BACKENDS = ("auto", "cutlass", "flashinfer_cutlass", "flashinfer_cutedsl", "flashinfer_trtllm",
                   "flashinfer_cudnn", "flashinfer_b12x", "b12x", "marlin", "humming", "triton", "deep_gemm", "torch",
                   "aiter", "machete", "fbgemm", "conch", "exllama", "emulation", "xpu", "xpu_woq")


def normalize_backend(value: str) -> str:
    """vLLM lowercases --linear-backend and maps '-' to '_'."""
    return value.strip().lower().replace("-", "_")


class Rejection(NamedTuple):
    kernel: str
    reason: str
    verified: bool = True
    by_platform: bool = False  # refused by is_supported (or disabled), before any condition on the layer


class KernelChoice(NamedTuple):
    """The outcome of one selection: the winner, or vLLM's error; every rejection in vLLM's order."""

    quantization: str
    kernel: str | None
    rejected: tuple[Rejection, ...]
    error: str | None = None
    warnings: tuple[str, ...] = ()
    runtime_error: str | None = None


# Kernels a table gained in a later release: (quantization, platform, kernel) -> the change that added it.
LATE_KERNELS: dict[tuple[str, str, type[Kernel]], int | str] = {
    (FP8_BLOCK, "cuda", pytorch.BlockWiseTorchFP8ScaledMMLinearKernel): 49932,
    (FP8_BLOCK, "rocm", pytorch.BlockWiseTorchFP8ScaledMMLinearKernel): 49932,
    (FP8_BLOCK, "xpu", pytorch.BlockWiseTorchFP8ScaledMMLinearKernel): 50826,
    (FP8, "xpu", pytorch.PerTensorTorchFP8ScaledMMLinearKernel): 49664,
    (FP8, "xpu", pytorch.ChannelWiseTorchFP8ScaledMMLinearKernel): 49664,
    (FP8, "cuda", cuda.B12xTensorFP8ScaledMMLinearKernel): "b12x",
    (FP8_BLOCK, "cuda", cuda.B12xFp8BlockScaledMMKernel): "b12x",
    (FP8, "cpu", cpu.CPUFP8W8A8ScaledMMLinearKernel): "cpu-fp8",
    (FP8, "cpu", cpu.CPUFp8PerTensorScaledMMLinearKernel): "cpu-fp8",
    (FP8_BLOCK, "cpu", cpu.CPUFp8W8A8BlockScaledMMKernel): "cpu-fp8",
    (FP8, "cpu", cpu.CPUFp8ChannelWiseScaledMMLinearKernel): "cpu-fp8-channel",
}


def _in_release(quantization: str, ctx: RoutingContext, kernel: type[Kernel]) -> bool:
    change = LATE_KERNELS.get((quantization, ctx.kind, kernel))
    return change is None or ctx.profile.has(change)


def _move_before(row: tuple[type[Kernel], ...], kernel: type[Kernel], anchor: type[Kernel]) -> tuple[type[Kernel], ...]:
    if kernel not in row or anchor not in row:
        return row
    rest = [k for k in row if k is not kernel]
    rest.insert(rest.index(anchor), kernel)
    return tuple(rest)


def candidates(quantization: str, ctx: RoutingContext) -> tuple[type[Kernel], ...]:
    """The platform's ordered list under this profile: 0.33's table less the kernels the release lacks, in the
    release's order (every FP8 table has a row for all four platforms)."""
    row = tuple(k for k in TABLES[quantization][ctx.kind] if _in_release(quantization, ctx, k))
    if ctx.kind == "cuda" and not ctx.profile.has("marlin-late"):
        # 0.25-0.28: Marlin heads the FP8 table; the block table tries Triton before Humming.
        if quantization == FP8:
            row = _move_before(row, cuda.MarlinFP8ScaledMMLinearKernel, row[0])
        if quantization == FP8_BLOCK:
            row = _move_before(row, triton_block.TritonFp8BlockScaledMMKernel, cuda.HummingFP8ScaledMMLinearKernel)
    if ctx.kind == "cuda" and ctx.profile.has("humming-priority") and ctx.cc == 90:
        # humming/priority.py prioritize_humming: Humming directly ahead of Marlin on sm90.
        row = _move_before(row, cuda.HummingFP8ScaledMMLinearKernel, cuda.MarlinFP8ScaledMMLinearKernel)
    return row


def check_kernel(kernel: type[Kernel], cfg: KernelConfig, ctx: RoutingContext) -> str | None:
    """is_supported_and_can_implement_kernel: vLLM's exact reason formats, leading space and extra '.' included."""
    if kernel.name in ctx.disabled:
        return f" {kernel.name} is disabled by environment variable"
    reason = kernel.is_supported(ctx)
    if reason is None:
        reason = kernel.can_implement(cfg, ctx)
    return None if reason is None else f"{kernel.name} {reason}."


def choose_kernel(quantization: str, cfg: KernelConfig, ctx: RoutingContext, backend: str = "auto") -> KernelChoice:
    """choose_scaled_mm_linear_kernel: filter by --linear-backend, first kernel that passes wins."""
    row = candidates(quantization, ctx)
    warnings: list[str] = []
    if backend != "auto":
        wanted = BACKEND_KERNELS.get(backend, frozenset())
        filtered = tuple(k for k in row if k.name in wanted)
        if filtered:
            row = filtered
        else:
            warnings.append(f"--linear-backend={backend} has no kernel for this linear layer type; "
                            "using automatic selection for that layer type.")
    rejected: list[Rejection] = []
    for kernel in row:
        reason = check_kernel(kernel, cfg, ctx)
        if reason is None:
            return KernelChoice(quantization, kernel.name, tuple(rejected), warnings=tuple(warnings),
                                runtime_error=kernel.runtime_error(cfg, ctx))
        by_platform = kernel.name in ctx.disabled or kernel.is_supported(ctx) is not None
        rejected.append(Rejection(kernel.name, reason, kernel.verified, by_platform))
    error = ("Failed to find a kernel that can implement the ScaledMM linear layer. Reasons: \n"
             + "\n".join(r.reason for r in rejected))
    return KernelChoice(quantization, None, tuple(rejected), error=error, warnings=tuple(warnings))

