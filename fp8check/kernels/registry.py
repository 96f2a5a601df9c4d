"""Per-platform ordered kernel tables, the side tables built from their classes, and the selection loop
(vllm/model_executor/kernels/linear/__init__.py).

A kernel is its class (fp8check.kernels.base.Kernel: its checks, numerics, --linear-backend values, the change
that added it to a table, whether it is a slow fallback) and its place in a TABLES row. Everything keyed by kernel
elsewhere (BACKEND_KERNELS, KERNEL_NUMERICS, SLOW_FALLBACKS) is derived from the classes the tables hold.
"""

from __future__ import annotations

from typing import NamedTuple

from fp8check.kernels import cpu, cuda, mxfp8, pytorch, rocm, triton_block, xpu
from fp8check.kernels.base import FP8, FP8_BLOCK, W8A16_FP8, Kernel, RoutingContext
from fp8check.kernels.mxfp8 import MXFP8
from fp8check.kernels.quant_keys import KernelConfig

# vLLM 0.33.0's tables; `candidates` derives each older release's from them (each class's `added_by`).
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
    # init_mxfp8_linear_kernel's _POSSIBLE_MXFP8_KERNELS: CPU has no entry (every MXFP8 layer fails there).
    MXFP8: {
        "cuda": (mxfp8.FlashInferCutedslMxfp8LinearKernel, mxfp8.FlashInferCutlassMxfp8LinearKernel,
                 mxfp8.MarlinMxfp8LinearKernel, mxfp8.B12xMxfp8LinearKernel, mxfp8.EmulationMxfp8LinearKernel,
                 mxfp8.HummingMxfp8LinearKernel, mxfp8.FlashInferTrtllmMxfp8LinearKernel,
                 mxfp8.TorchMxFp8LinearKernel),
        "rocm": (mxfp8.RocmDotScaledMxfp8LinearKernel, mxfp8.EmulationMxfp8LinearKernel),
        "cpu": (),
        "xpu": (mxfp8.XPUMxFp8LinearKernel, mxfp8.TorchMxFp8LinearKernel, mxfp8.EmulationMxfp8LinearKernel),
    },
}


class SideTables(NamedTuple):
    """What is looked up by kernel name outside the selection loop, derived from the classes of the tables."""

    backend_kernels: dict[str, frozenset[str]]  # --linear-backend -> its kernels (_LINEAR_BACKEND_KERNEL_MAP)
    numerics: dict[str, str]                     # kernel -> its numerics class (fp8check.kernels.numerics.gemm)
    slow_fallbacks: dict[str, str]               # kernel -> what makes it a slow portable fallback (warnings)


# The order `suggest` tries --linear-backend values in and lists them; a backend missing here follows these, in
# the order the tables first name it.
_BACKEND_ORDER = ("xpu", "xpu_woq", "torch", "triton", "marlin", "cutlass", "flashinfer_cutlass", "deep_gemm", "aiter",
                  "humming", "b12x", "flashinfer_cutedsl", "flashinfer_trtllm", "emulation")


def side_tables(tables: dict[str, dict[str, tuple[type[Kernel], ...]]]) -> SideTables:
    """The side tables of every kernel class the tables hold."""
    kernels = tuple(dict.fromkeys(k for table in tables.values() for row in table.values() for k in row))
    backends = sorted(dict.fromkeys(b for k in kernels for b in k.backends),
                      key=lambda b: _BACKEND_ORDER.index(b) if b in _BACKEND_ORDER else len(_BACKEND_ORDER))
    return SideTables({b: frozenset(k.name for k in kernels if b in k.backends) for b in backends},
                      {k.name: k.numerics for k in kernels},
                      {k.name: k.slow_fallback for k in kernels if k.slow_fallback})


# The FP8 tables' side tables, and MXFP8's apart (its numerics classes are fp8check.kernels.numerics.mxfp8's).
BACKEND_KERNELS, KERNEL_NUMERICS, SLOW_FALLBACKS = side_tables({q: t for q, t in TABLES.items() if q != MXFP8})
MXFP8_SIDE_TABLES = side_tables({MXFP8: TABLES[MXFP8]})


def kernel_numerics(kernel: str) -> str | None:
    """The numerics class of any kernel of the tables, FP8 or MXFP8."""
    return KERNEL_NUMERICS.get(kernel) or MXFP8_SIDE_TABLES.numerics.get(kernel)

# vllm/config/kernel.py's allowed --linear-backend values.
LINEAR_BACKENDS = ("auto", "cutlass", "flashinfer_cutlass", "flashinfer_cutedsl", "flashinfer_trtllm",
                   "flashinfer_cudnn", "flashinfer_b12x", "b12x", "marlin", "humming", "triton", "deep_gemm", "torch",
                   "aiter", "machete", "fbgemm", "conch", "exllama", "emulation", "xpu", "xpu_woq")


def normalize_linear_backend(value: str) -> str:
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


def _in_release(quantization: str, ctx: RoutingContext, kernel: type[Kernel]) -> bool:
    change = kernel.added_by.get((quantization, ctx.kind))
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
        if quantization == MXFP8:
            row = _move_before(row, mxfp8.HummingMxfp8LinearKernel, mxfp8.MarlinMxfp8LinearKernel)
        else:
            row = _move_before(row, cuda.HummingFP8ScaledMMLinearKernel, cuda.MarlinFP8ScaledMMLinearKernel)
    return row


def check_kernel(kernel: type[Kernel], cfg: KernelConfig, ctx: RoutingContext, quantization: str = FP8) -> str | None:
    """is_supported_and_can_implement_kernel: vLLM's exact reason formats, leading space and extra '.' included
    (init_mxfp8_linear_kernel writes its own: "{Name}: {reason}", " {Name} disabled by environment variable")."""
    mx = quantization == MXFP8
    if kernel.name in ctx.disabled:
        return f" {kernel.name} {'disabled' if mx else 'is disabled'} by environment variable"
    reason = kernel.is_supported(ctx)
    if reason is None:
        reason = kernel.can_implement(cfg, ctx)
    if reason is None:
        return None
    return f"{kernel.name}: {reason}" if mx else f"{kernel.name} {reason}."


def choose_kernel(quantization: str, cfg: KernelConfig, ctx: RoutingContext, backend: str = "auto") -> KernelChoice:
    """choose_scaled_mm_linear_kernel: filter by --linear-backend, first kernel that passes wins."""
    row = candidates(quantization, ctx)
    warnings: list[str] = []
    error = mxfp8.backend_error(backend, row, ctx) if quantization == MXFP8 else None
    if error:
        return KernelChoice(quantization, None, (), error=error)
    if backend != "auto":
        filtered = tuple(k for k in row if backend in k.backends)
        if filtered:
            row = filtered
        else:
            warnings.append(f"--linear-backend={backend} has no kernel for this linear layer type; "
                            "using automatic selection for that layer type.")
    rejected: list[Rejection] = []
    for kernel in row:
        reason = check_kernel(kernel, cfg, ctx, quantization)
        if reason is None:
            return KernelChoice(quantization, kernel.name, tuple(rejected), warnings=tuple(warnings),
                                runtime_error=kernel.runtime_error(cfg, ctx))
        by_platform = kernel.name in ctx.disabled or kernel.is_supported(ctx) is not None
        rejected.append(Rejection(kernel.name, reason, kernel.verified, by_platform))
    layer = "MXFP8" if quantization == MXFP8 else "ScaledMM"
    error = (f"Failed to find a kernel that can implement the {layer} linear layer. Reasons: \n"
             + "\n".join(r.reason for r in rejected))
    return KernelChoice(quantization, None, tuple(rejected), error=error, warnings=tuple(warnings))

