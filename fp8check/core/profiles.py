"""Rule profiles: which upstream vLLM PRs a release line contains.

vLLM's FP8 routing changed several times in 2026; each rule that changed asks `profile.has(PR)`. Release
mapping (from vLLM's release notes and PR merge dates; see README): #43958 -> v0.24.0, #43645 -> v0.25.0,
#47516 -> v0.26.0, #49664 / #49932 / #50787 / #50826 -> v0.28.0 (#49664 merged at the v0.27 cut-off and is
counted in v0.28.0). Releases before 0.25 used other XPU kernel classes (XPUFP8ScaledMMLinearKernel) whose
tables were not read, so no profile claims them.
"""

from __future__ import annotations

from typing import NamedTuple

from fp8check.core.errors import InputError

# What each PR changed, for `fp8check rules` and the README.
PULL_REQUESTS: dict[int, str] = {
    43958: "XPU reports no compute capability; _check_scheme_supported returns True for it (W8A8 FP8 allowed off CUDA)",
    43645: "XPU defaults FP8 to CompressedTensorsW8A16Fp8; --linear-backend xpu|torch opts into W8A8",
    47516: "a platform missing from a kernel table gives 'Failed to find a kernel' instead of KeyError "
           "(every FP8 table has all four platforms, so FP8 routing is unchanged)",
    49664: "Torch _scaled_mm kernels accept XPU ('requires ROCm, CUDA, CPU or XPU.')",
    49932: "BlockWiseTorchFP8ScaledMMLinearKernel (torch block-scaled mm) added",
    50787: "XPU: block-quantized weights always use CompressedTensorsW8A8Fp8 (XPUFp8BlockScaledMMKernel)",
    50826: "BlockWiseTorchFP8ScaledMMLinearKernel enabled on XPU",
}


class RuleProfile(NamedTuple):
    name: str
    vllm: str
    includes: frozenset[int]
    summary: str

    def has(self, pr: int) -> bool:
        return pr in self.includes


PROFILES: tuple[RuleProfile, ...] = (
    RuleProfile("0.28", "0.28+", frozenset({43958, 43645, 47516, 49664, 49932, 50787, 50826}),
                "newest rules: XPU block FP8 routes to W8A8 / XPUFp8BlockScaledMMKernel"),
    RuleProfile("0.26", "0.26-0.27", frozenset({43958, 43645, 47516}),
                "before #50787: XPU block FP8 goes to W8A16 and fails to find a kernel"),
    RuleProfile("0.25", "0.25", frozenset({43958, 43645}),
                "XPU W8A16 default (#43645); FP8 routing as 0.26-0.27"),
)
LATEST = PROFILES[0]


def select_profile(version: str | None) -> RuleProfile:
    """`--vllm` accepts 'latest', a profile name, or a release such as 0.27.1 / v0.26."""
    if version is None or version.lower() in ("latest", "newest", "main"):
        return LATEST
    text = version.lower().removeprefix("v")
    parts = text.split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        raise InputError(f"--vllm {version!r}: expected 'latest' or a version such as 0.27.1") from None
    if (major, minor) >= (0, 28):
        return LATEST
    for profile in PROFILES:
        if (major, minor) >= tuple(int(p) for p in profile.name.split(".")):
            return profile
    oldest = PROFILES[-1].name
    raise InputError(f"--vllm {version}: fp8check has no rule profile older than {oldest} (run 'fp8check rules')")
