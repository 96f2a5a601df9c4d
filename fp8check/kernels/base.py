"""Base classes mirroring vLLM's ScaledMMLinearKernel / BlockScaledMMLinearKernel for routing, and the names
every kernel class is described by: the quantization tables it sits in and the numerics classes.

A kernel answers two questions with a reason string (vLLM's own wording) or None:
`is_supported(ctx)` — can it run on this platform at all — and `can_implement(cfg, ctx)` — can it run this
layer. `runtime_error` predicts failures vLLM only hits after selection (weight post-processing, JIT). Each
class also carries what the registry's side tables are built from (`fp8check.kernels.registry`): its numerics
class, the --linear-backend values that select it, the change that added it to a table, and whether it is a slow
portable fallback. Everything here is torch-free: the inspect path never imports torch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, NamedTuple

from fp8check.core.targets.platforms import Platform
from fp8check.core.targets.profiles import RuleProfile
from fp8check.kernels.quant_keys import KernelConfig

# vLLM's linear kernel tables, one per quantization (_POSSIBLE_FP8_KERNELS, _POSSIBLE_FP8_BLOCK_KERNELS, and the
# W8A16 FP8 list).
FP8 = "fp8_w8a8"
FP8_BLOCK = "fp8_block_w8a8"
W8A16_FP8 = "w8a16_fp8"

# The numerics classes (fp8check.kernels.numerics.gemm runs each): what a kernel does to the numbers.
WEIGHT_ONLY = "weight-only"   # FP8 weight dequantized into the activation dtype; activations never quantized
SCALED_MM = "scaled-mm"       # one scaled GEMM over per-tensor / per-token activations, per-tensor / channel weights
BLOCK = "block"               # 1 x bk token-group activations, bn x bk weight blocks, fp32 accumulation per K block
UNQUANTIZED = "unquantized"   # no FP8 kernel: the model-dtype matmul of an unquantized layer
MOE_W8A8 = "w8a8"             # a FusedMoE experts class that quantizes activations (BLOCK or SCALED_MM by weights)


class RoutingContext(NamedTuple):
    platform: Platform
    profile: RuleProfile
    disabled: frozenset[str] = frozenset()
    model_type: str = ""   # hf_text_config.model_type (a vision-language config's text_config's): per-model switches
    moe_backend: str = "auto"  # --moe-backend (KernelConfig.moe_backend, normalized)

    @classmethod
    def of(cls, options, model_type: str = "") -> RoutingContext:
        """The context of an InspectOptions (its platform, profile, --disable-kernel and --moe-backend) for a
        model_type."""
        return cls(options.platform, options.profile, frozenset(options.disabled_kernels), model_type,
                   options.moe_backend)

    @property
    def kind(self) -> str:
        return self.platform.kind

    @property
    def cc(self) -> int | None:
        return self.platform.capability

    def cuda_at_least(self, version: str) -> bool:
        have = tuple(int(p) for p in self.platform.assumptions.cuda_version.split("."))
        return have >= tuple(int(p) for p in version.split("."))


# utils/deep_gemm.py _DEEPGEMM_BLACKWELL_EXCLUDED_MODEL_TYPES (every release 0.25 ... 0.34): hf_text_config.model_type
# -> the capability families on which vLLM turns DeepGEMM off (accuracy). 0.33 adds kolibri1 on 120 (latency).
DEEPGEMM_EXCLUDED = {"qwen3_5_text": (100, 120), "qwen3_5_moe_text": (100, 120)}
DEEPGEMM_EXCLUDED_033 = {"kolibri1": (120,)}


def deep_gemm_auto_disabled(ctx: RoutingContext) -> bool:
    """should_auto_disable_deep_gemm: the model type is excluded on this CUDA capability family."""
    excluded = {**DEEPGEMM_EXCLUDED, **(DEEPGEMM_EXCLUDED_033 if ctx.profile.has("deepgemm-moe-exclusion") else {})}
    return ctx.kind == "cuda" and (ctx.cc or 0) // 10 * 10 in excluded.get(ctx.model_type, ())  # 103 is family 100


class Kernel:
    """One vLLM kernel class. `name` is vLLM's class name; `verified` is False where the conditions were
    not read from vLLM's source and fp8check states its own inference instead.

    A class in the registry's TABLES also sets `numerics` (WEIGHT_ONLY, SCALED_MM or BLOCK), and where it applies
    `backends` (the --linear-backend values whose _LINEAR_BACKEND_KERNEL_MAP entry holds it), `added_by` (for a
    table that gained it after 0.25: (quantization, platform) -> the change, a `RuleProfile.has` key) and
    `slow_fallback` (what makes it a slow portable fallback, for the slow-fallback warning)."""

    name: ClassVar[str]
    verified: ClassVar[bool] = True
    numerics: ClassVar[str]
    backends: ClassVar[tuple[str, ...]] = ()
    added_by: ClassVar[Mapping[tuple[str, str], int | str]] = {}
    slow_fallback: ClassVar[str | None] = None

    @classmethod
    def is_supported(cls, ctx: RoutingContext) -> str | None:
        return None

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return None

    @classmethod
    def runtime_error(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return None


class BlockScaledKernel(Kernel):
    """Fp8BlockScaledMMLinearKernel: every block kernel first refuses static activations."""

    @classmethod
    def can_implement(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        if cfg.activation_key.static:
            return "Only dynamic per token group activation quantization is supported."
        return cls.can_implement_block(cfg, ctx)

    @classmethod
    def can_implement_block(cls, cfg: KernelConfig, ctx: RoutingContext) -> str | None:
        return None


def needs_1x128(cfg: KernelConfig) -> str | None:
    """The DeepSeek-style activation grouping several block kernels insist on."""
    if cfg.activation_key.group_shape != (1, 128):
        return "Supports only dynamic per token group activation quantization with group_shape=(1,128)."
    return None


def needs_per_tensor(cfg: KernelConfig) -> str | None:
    """The check of every kernel that only runs per-tensor x per-tensor scaled mm."""
    if not (cfg.activation_key.is_per_tensor and cfg.weight_key.is_per_tensor):
        return "requires per tensor activation and weight scales."
    return None


def is_cdna3_or_rdna4(ctx: RoutingContext) -> bool:
    """MI3xx (gfx94x/gfx95x) or gfx12x: the ROCm parts with FP8 matrix cores."""
    return (ctx.platform.arch or "").startswith(("gfx94", "gfx95", "gfx12"))
