"""Base classes mirroring vLLM's ScaledMMLinearKernel / BlockScaledMMLinearKernel for routing.

A kernel answers two questions with a reason string (vLLM's own wording) or None:
`is_supported(ctx)` — can it run on this platform at all — and `can_implement(cfg, ctx)` — can it run this
layer. `runtime_error` predicts failures vLLM only hits after selection (weight post-processing, JIT).
"""

from __future__ import annotations

from typing import NamedTuple
from typing import ClassVar

from fp8check.core.routing.platforms import Platform
from fp8check.core.routing.profiles import RuleProfile
from fp8check.kernels.quant_keys import KernelConfig


class RoutingContext(NamedTuple):
    platform: Platform
    profile: RuleProfile
    disabled: frozenset[str] = frozenset()

    @property
    def kind(self) -> str:
        return self.platform.kind

    @property
    def cc(self) -> int | None:
        return self.platform.capability

    def cuda_at_least(self, version: str) -> bool:
        have = tuple(int(p) for p in self.platform.assumptions.cuda_version.split("."))
        return have >= tuple(int(p) for p in version.split("."))


class Kernel:
    """One vLLM kernel class. `name` is vLLM's class name; `verified` is False where the conditions were
    not read from vLLM's source and fp8check states its own inference instead."""

    name: ClassVar[str]
    verified: ClassVar[bool] = True

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
