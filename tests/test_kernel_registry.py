"""The kernel registry built from its classes: each linear kernel class and each FusedMoE experts class carries its
numerics (and a linear kernel its --linear-backend values, the change that added it to a table, whether it is a
slow fallback); the side tables are derived from the classes.

The recipes of docs/architecture.md, *add a kernel* and *add an MoE backend*: a throwaway class and one
registration (a TABLES row, a BACKENDS entry), and routing and the derived tables see it. And the derived tables
are value-identical to the hand-written side tables they replaced (written out below as they were).
"""

from __future__ import annotations

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import LATEST, select_profile
from fp8check.kernels import base, cpu, cuda, moe, mxfp8, pytorch, registry
from fp8check.kernels.base import FP8, FP8_BLOCK, SCALED_MM, WEIGHT_ONLY, Kernel, RoutingContext
from fp8check.kernels.mxfp8 import MXFP8
from fp8check.kernels.quant_keys import (
    KernelConfig, kFp8Dynamic128Sym, kFp8DynamicTokenSym, kFp8Static128BlockSym, kFp8StaticChannelSym,
)
from fp8check.synth import write_checkpoint

# ---------------------------------------------------------------- the side tables as they were written by hand

W, S, B, M = "weight-only", "scaled-mm", "block", "w8a8"
OLD_BACKEND_KERNELS = {  # registry.BACKEND_KERNELS; its key order is the order `suggest` tries backends in
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
OLD_LATE_KERNELS = {  # registry.LATE_KERNELS: (quantization, platform, kernel) -> the change that added it
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
    # The MXFP8 table (issue 18), read from the 0.25-0.33 wheels.
    (MXFP8, "cuda", mxfp8.B12xMxfp8LinearKernel): "b12x",
    (MXFP8, "cuda", mxfp8.FlashInferTrtllmMxfp8LinearKernel): "mxfp8-trtllm",
    (MXFP8, "cuda", mxfp8.TorchMxFp8LinearKernel): "mxfp8-torch",
    (MXFP8, "xpu", mxfp8.TorchMxFp8LinearKernel): "mxfp8-torch",
}
OLD_KERNEL_NUMERICS = {  # numerics.KERNEL_NUMERICS
    "XPUW8A16FP8LinearKernel": W, "MarlinFP8ScaledMMLinearKernel": W, "HummingFP8ScaledMMLinearKernel": W,
    "CutlassFP8ScaledMMLinearKernel": S, "FlashInferFP8ScaledMMLinearKernel": S,
    "B12xTensorFP8ScaledMMLinearKernel": S, "PerTensorTorchFP8ScaledMMLinearKernel": S,
    "ChannelWiseTorchFP8ScaledMMLinearKernel": S, "RowWiseTorchFP8ScaledMMLinearKernel": S,
    "XPUW8A8FP8LinearKernel": S, "ROCmFP8ScaledMMLinearKernel": S,
    "AiterHipbMMPerTokenFp8ScaledMMLinearKernel": S, "AiterPreshuffledPerTokenFp8ScaledMMLinearKernel": S,
    "AiterPerTokenFp8ScaledMMLinearKernel": S, "CPUFP8W8A8ScaledMMLinearKernel": S,
    "CPUFp8PerTensorScaledMMLinearKernel": S, "CPUFp8ChannelWiseScaledMMLinearKernel": S,
    "FlashInferFp8DeepGEMMDynamicBlockScaledKernel": B, "DeepGemmFp8BlockScaledMMKernel": B,
    "CutlassFp8BlockScaledMMKernel": B, "B12xFp8BlockScaledMMKernel": B, "TritonFp8BlockScaledMMKernel": B,
    "BlockWiseTorchFP8ScaledMMLinearKernel": B, "RDNA4W8A8Fp8BlockScaledMMKernel": B,
    "AiterFp8BlockScaledMMKernel": B, "CPUFp8W8A8BlockScaledMMKernel": B, "CPUFp8BlockScaledMMKernel": B,
    "XPUFp8BlockScaledMMKernel": B,
}
OLD_SLOW_FALLBACKS = {  # warnings.SLOW_FALLBACKS; the slow-fallback rule's text names them in this order
    "ChannelWiseTorchFP8ScaledMMLinearKernel": "torch._scaled_mm with the scales applied unfused, in fp32",
    "TritonFp8BlockScaledMMKernel": "the portable Triton block GEMM",
}
OLD_MOE_EXPERTS_NUMERICS = {  # numerics.MOE_EXPERTS_NUMERICS
    "TritonExperts": M, "DeepGemmExperts": M, "TritonOrDeepGemmExperts": M,
    "CutlassExpertsFp8": M, "TritonOrCutlassExperts": M, "CutlassBatchedExpertsFp8": M,
    "FlashInferExperts": M, "TrtLlmFp8ExpertsMonolithic": M, "TrtLlmFp8ExpertsModular": M,
    "BatchedDeepGemmExperts": M, "BatchedTritonExperts": M, "AiterExperts": M,
    "AiterFp8BlockExperts": M, "AiterFp8TensorExperts": M, "AiterFp8ChannelExperts": M,
    "CPUExpertsFp8W8A8": M, "HPCExperts": M,
    "MarlinExperts": W, "HummingGroupedExperts": W, "BatchedHummingGroupedExperts": W,
    "HummingIndexedExperts": W, "CPUExpertsFp8": W, "XPUExpertsFp8": W,
    "XPUExpertsMxFp8": W, "XPUExpertsBlockFp8": W,
}
_ORDER_028 = ("AITER", "FLASHINFER_TRTLLM", "FLASHINFER_CUTLASS", "DEEPGEMM", "VLLM_CUTLASS", "TRITON", "MARLIN",
              "HUMMING", "BATCHED_DEEPGEMM", "BATCHED_VLLM_CUTLASS", "BATCHED_TRITON", "XPU", "CPU", "HPC")
_ORDER_031 = _ORDER_028[:12] + ("CPU_W8A8", "CPU", "HPC")
OLD_MOE_ORDER = {"0.28": _ORDER_028, "0.30": _ORDER_028, "0.31": _ORDER_031, "0.33": _ORDER_031}  # cpu-moe-w8a8
OLD_AITER = {"0.28": ("AiterExperts",), "0.32": ("AiterExperts",),  # aiter-moe-split
             "0.33": ("AiterFp8BlockExperts", "AiterFp8TensorExperts", "AiterFp8ChannelExperts")}


def table_memberships(tables):
    return {(q, platform, k) for q, table in tables.items() for platform, row in table.items() for k in row}


def test_derived_linear_tables_equal_the_hand_written_ones():
    assert registry.BACKEND_KERNELS == OLD_BACKEND_KERNELS
    assert list(registry.BACKEND_KERNELS) == list(OLD_BACKEND_KERNELS)
    assert registry.KERNEL_NUMERICS == OLD_KERNEL_NUMERICS
    assert list(registry.SLOW_FALLBACKS.items()) == list(OLD_SLOW_FALLBACKS.items())
    # The release each table gained a kernel in, from the classes' `added_by`. One entry names a row that does not
    # hold its class (the ROCm block row has no BlockWise kernel): it had no effect before and has none now.
    added = {(q, platform, k): change for k in {k for _, _, k in table_memberships(registry.TABLES)}
             for (q, platform), change in k.added_by.items()}
    assert added == OLD_LATE_KERNELS
    assert set(added) - table_memberships(registry.TABLES) == {
        (FP8_BLOCK, "rocm", pytorch.BlockWiseTorchFP8ScaledMMLinearKernel)}
    assert set(registry.BACKEND_KERNELS) <= set(registry.LINEAR_BACKENDS)


def test_derived_moe_tables_equal_the_hand_written_ones():
    # plus the experts classes model files subclass for their own runners, by their base class (moe.MODEL_EXPERTS)
    assert moe.MOE_EXPERTS_NUMERICS == {**OLD_MOE_EXPERTS_NUMERICS, "MuseSparkTritonExperts": M}
    at = {release: moe.backends_at(RoutingContext(parse_platform("cpu"), select_profile(release)))
          for release in {*OLD_MOE_ORDER, *OLD_AITER}}
    assert {release: tuple(at[release]) for release in OLD_MOE_ORDER} == OLD_MOE_ORDER
    assert {release: tuple(e.name for e in at[release]["AITER"]) for release in OLD_AITER} == OLD_AITER


def test_numerics_names_are_the_old_strings_where_load_reads_them():
    assert (base.WEIGHT_ONLY, base.SCALED_MM, base.BLOCK, base.UNQUANTIZED, base.MOE_W8A8) == (
        "weight-only", "scaled-mm", "block", "unquantized", "w8a8")
    gemm = pytest.importorskip("fp8check.kernels.numerics.gemm")
    assert (gemm.WEIGHT_ONLY, gemm.SCALED_MM, gemm.BLOCK, gemm.UNQUANTIZED) == (W, S, B, "unquantized")
    assert gemm.MOE_EXPERTS_NUMERICS is moe.MOE_EXPERTS_NUMERICS


# --------------------------------------------------------------------------------- recipe: add a linear kernel

class ThrowawayFP8Kernel(Kernel):
    """A kernel no vLLM has: any FP8 layer on CUDA, in releases with the change 'throwaway-change'."""

    name = "ThrowawayFP8ScaledMMLinearKernel"
    numerics = SCALED_MM
    backends = ("machete",)  # a --linear-backend value that selects no FP8 kernel today
    added_by = {(FP8, "cuda"): "throwaway-change"}
    slow_fallback = "a throwaway fallback"

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        return None if ctx.kind == "cuda" else "requires CUDA."


WITH_CHANGE = LATEST._replace(changes=LATEST.changes | {"throwaway-change"})
CHANNEL = KernelConfig(kFp8StaticChannelSym, kFp8DynamicTokenSym, "bfloat16", "float8_e4m3fn", 4096, 4096)


@pytest.fixture
def throwaway_kernel(monkeypatch):
    """The one registration: the class at the head of the CUDA FP8 row."""
    before = registry.side_tables(registry.TABLES)
    monkeypatch.setitem(registry.TABLES[FP8], "cuda", (ThrowawayFP8Kernel, *registry.TABLES[FP8]["cuda"]))
    return before


def test_recipe_add_a_kernel_routes(throwaway_kernel):
    h100 = parse_platform("h100")
    assert registry.choose_kernel(FP8, CHANNEL, RoutingContext(h100, WITH_CHANGE)).kernel == ThrowawayFP8Kernel.name
    # The release: a profile without the change has no such kernel in its table.
    assert ThrowawayFP8Kernel not in registry.candidates(FP8, RoutingContext(h100, LATEST))
    assert registry.choose_kernel(FP8, CHANNEL, RoutingContext(h100, LATEST)).kernel == "CutlassFP8ScaledMMLinearKernel"
    # The backend: --linear-backend machete selects it alone (no FP8 kernel answered to it before); cutlass not.
    ctx = RoutingContext(h100, WITH_CHANGE)
    chosen = registry.choose_kernel(FP8, CHANNEL, ctx, backend="machete")
    assert (chosen.kernel, chosen.rejected, chosen.warnings) == (ThrowawayFP8Kernel.name, (), ())
    assert registry.choose_kernel(FP8, CHANNEL, ctx, backend="cutlass").kernel == "CutlassFP8ScaledMMLinearKernel"


def test_recipe_add_a_kernel_inspect(throwaway_kernel, tmp_path):
    folder = write_checkpoint(str(tmp_path / "ckpt"), quant="ct-fp8-dynamic", data="sparse")
    report = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), WITH_CHANGE))
    assert {layer.kernel for layer in report.layers if layer.strategy_text} == {ThrowawayFP8Kernel.name}


def test_recipe_add_a_kernel_side_tables(throwaway_kernel):
    after = registry.side_tables(registry.TABLES)
    name = ThrowawayFP8Kernel.name
    assert after.numerics == {**throwaway_kernel.numerics, name: SCALED_MM}
    assert after.slow_fallbacks == {**throwaway_kernel.slow_fallbacks, name: "a throwaway fallback"}
    # A backend the order does not list yet comes after the others.
    assert after.backend_kernels == {**throwaway_kernel.backend_kernels, "machete": frozenset({name})}
    assert list(after.backend_kernels)[-1] == "machete"


# ---------------------------------------------------------------------------------- recipe: add an MoE backend

class ThrowawayExperts(moe.Experts):
    """An experts class no vLLM has: block FP8 anywhere, weight-only, brought by a 0.33 change."""

    name = "ThrowawayExperts"
    numerics = WEIGHT_ONLY
    added_by = "aiter-moe-split"

    @classmethod
    def quant(cls, w, a, ctx):
        return (w, a) == (kFp8Static128BlockSym, kFp8Dynamic128Sym)


@pytest.fixture
def throwaway_backend(monkeypatch):
    """The one registration: a backend at the head of the list."""
    monkeypatch.setattr(moe, "BACKENDS", {"THROWAWAY": (ThrowawayExperts,), **moe.BACKENDS})


def test_recipe_add_an_moe_backend(throwaway_backend, tmp_path):
    ctx = RoutingContext(parse_platform("b200"), LATEST)
    cfg = moe.MoEConfig(num_experts=8, hidden=1024, intermediate=768, tp=1, ep=1)
    choice = moe.select_backend(cfg, kFp8Static128BlockSym, kFp8Dynamic128Sym, ctx, allow_vllm_cutlass=False)
    assert (choice.backend, choice.kernel, choice.rejected) == ("THROWAWAY", "ThrowawayExperts", ())
    before = moe.select_backend(cfg, kFp8Static128BlockSym, kFp8Dynamic128Sym, ctx._replace(profile=select_profile(
        "0.28")), allow_vllm_cutlass=False)
    assert before.kernel == "TrtLlmFp8ExpertsMonolithic"  # 0.28 has not its added_by
    assert moe.experts_numerics(moe.BACKENDS) == {**OLD_MOE_EXPERTS_NUMERICS, "ThrowawayExperts": WEIGHT_ONLY}

    folder = write_checkpoint(str(tmp_path / "ckpt"), quant="fp8-block", architecture="Qwen3MoeForCausalLM",
                              model_type="qwen3_moe", hidden=1024, heads=8, kv_heads=8, head_dim=128, experts=8,
                              moe_intermediate=768, layers=2, data="sparse")
    report = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("b200"), LATEST))
    assert report.moes and {m.kernel for m in report.moes} == {"ThrowawayExperts"}
