"""Rule profiles: one per vLLM minor release 0.25 ... 0.33, each the set of routing changes it contains.

Each rule that changed asks `profile.has(CHANGE)`. A change is an upstream PR number where the PR is known
(#43958 -> v0.24.0, #43645 -> v0.25.0, #47516 -> v0.26.0, #49664 / #49932 / #50787 / #50826 -> v0.28.0), or a
short name where the change was read from the release wheels (`pip download vllm==X --no-deps`, unzipped:
vllm/model_executor/kernels/linear/__init__.py and scaled_mm/*.py) without pinning the PR. Patch releases
(0.25.1, 0.27.1) have the same routing files as their .0 and map to their minor. Releases before 0.25 used
other XPU kernel classes (XPUFP8ScaledMMLinearKernel) whose tables were not read, so no profile claims them;
releases after the newest profile were not read either, so none claims them (`select_profile` refuses both).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from fp8check.core.errors import InputError

# What each change did, for `fp8check rules` and docs/routing.md: upstream PRs ...
PULL_REQUESTS: dict[int, str] = {
    43958: "XPU reports no compute capability; _check_scheme_supported returns True for it (W8A8 FP8 allowed off CUDA)",
    43645: "XPU defaults FP8 to CompressedTensorsW8A16Fp8; --linear-backend xpu|torch opts into W8A8",
    47516: "a platform missing from a kernel table gives 'Failed to find a kernel' instead of KeyError "
           "(every FP8 table has all four platforms, so FP8 routing is unchanged)",
    49664: "Torch _scaled_mm kernels accept XPU ('requires ROCm, CUDA, CPU or XPU.') and join the XPU FP8 table",
    49932: "BlockWiseTorchFP8ScaledMMLinearKernel (torch block-scaled mm) added",
    50787: "XPU: block-quantized weights always use CompressedTensorsW8A8Fp8 (XPUFp8BlockScaledMMKernel)",
    50826: "BlockWiseTorchFP8ScaledMMLinearKernel enabled on XPU",
    47434: "AutoRound / INC block-wise FP8 (quant_method auto-round -> inc, INCFp8LinearScheme)",
    49381: "ModelOpt linear layers use the generic QuantKey-driven ModelOptLinearMethod",
}
# ... and changes read from the release wheels whose PR was not pinned.
WHEEL_CHANGES: dict[str, str] = {
    "cpu-router": "0.30 wheel: on CPU every FusedMoE routes through CPURouter (router_factory.py), whose routing "
                  "method is get_routing_method_type's even for a custom_routing_function (Llama-4: Default)",
    "glm4-moe-gate-linear": "0.31 wheel: glm4_moe.py builds its router as GateLinear (a ReplicatedLinear, "
                            "quant_config=None); a torch nn.Linear before",
    "b12x": "0.28 wheel: B12x block / tensor FP8 kernels join the CUDA tables (SM12x, the vllm[b12x] extra)",
    "rocm-cdna3-wording": "0.27 wheel: ROCmFP8ScaledMMLinearKernel's refusal reads 'requires CDNA3+ (gfx942/gfx950) "
                          "or RDNA4 (gfx12x)' (was 'requires MI3xx or gfx12x')",
    "humming-installed": "0.28 wheel: HummingFP8ScaledMMLinearKernel checks has_humming() ('Humming is not installed')",
    "marlin-late": "0.29 wheel: Marlin's 'VLLM_TEST_FORCE_FP8_MARLIN' gate on cc >= 89 removed; the CUDA FP8 table "
                   "puts Marlin after the Torch kernels and the block table Humming before Triton",
    "torch-fp8-support": "0.29 wheel: the Torch kernels check _supports_torch_fp8_scaled_mm() instead of cc >= 89",
    "cutlass-fp8-check": "0.31 wheel: CutlassFP8ScaledMMLinearKernel checks cutlass_fp8_supported() (sm89+ with "
                         "CUDA >= 12.4); before, any CUDA device passed",
    "cpu-fp8": "0.31 wheel: CPU tables gain CPUFP8W8A8ScaledMMLinearKernel, CPUFp8PerTensorScaledMMLinearKernel "
               "and CPUFp8W8A8BlockScaledMMKernel (the W8A8 ones need native AMX-FP8)",
    "humming-priority": "0.32 wheel: prioritize_humming moves Humming ahead of Marlin on sm90",
    "cpu-fp8-channel": "0.33 wheel: CPUFp8ChannelWiseScaledMMLinearKernel joins the CPU FP8 table",
    # The front door (fp8check.core.formats.frontdoor) and the formats of fp8check.core.formats.
    "xpu-quant-allowlist": "0.27 wheel: XPU gains a supported_quantization list (quark, fbgemm_fp8, modelopt_mxfp8, "
                           "... refused: '<method> quantization is currently not supported in xpu.')",
    "modelopt-min-80": "0.27 wheel: ModelOptFp8Config.get_min_capability() is 80 (was 89)",
    "rocm-inc": "0.28 wheel: ROCm's list gains inc and drops bitsandbytes",
    "xpu-moe-wna16": "0.30 wheel: XPU's list gains moe_wna16",
    "xpu-fp8-per-channel": "0.32 wheel: XPU's list gains fp8_per_channel",
    "quark-per-block": "0.28 wheel: Quark per-block FP8 weights (QuarkW8A8Fp8PerBlock)",
    "pbwo-padding": "0.29 wheel: ModelOpt FP8_PB_WO pads output widths to 128 and runs the kernel's post-load",
    "quark-fp8-keys": "0.30 wheel: Quark's _is_fp8_w8a8 returns the keys (dynamic per-tensor activations keep a "
                      "dynamic key), init_scheme raises RuntimeError below capability 89, and an excluded lm_head "
                      "gets no method (UnquantizedEmbeddingMethod; UnquantizedLinearMethod before)",
    "online-fp8-redirect": "0.31 wheel: --quantization fp8 on an unquantized checkpoint becomes "
                           "OnlineQuantizationConfig(fp8_per_tensor), with a deprecation warning",
    "online-tp-amax": "0.28 wheel: online FP8 reduces each weight's amax over the TP ranks "
                      "(amax_for_tp_weight_quant), so a shard's scale is the unsharded weight's",
    "mxfp8-backend-fallback": "0.28 wheel: a --linear-backend with no MXFP8 kernel falls back to automatic "
                              "selection (0.25-0.27 raise)",
    "mxfp8-trtllm": "0.29 wheel: FlashInferTrtllmMxfp8LinearKernel joins the CUDA MXFP8 table",
    "mxfp8-shape": "0.31 wheel: the MXFP8 FlashInfer / Marlin kernels check the weight shape; FlashInfer CUTLASS "
                   "checks has_flashinfer()",
    "mxfp8-torch": "0.33 wheel: TorchMxFp8LinearKernel joins the CUDA and XPU MXFP8 tables",
    "quark-moe-exclude": "0.26 wheel: an excluded Quark RoutedExperts gets UnquantizedFusedMoEMethod, and an "
                         "excluded child excludes its parent (check_children)",
    "inc-mx-fp": "0.27 wheel: INCConfig accepts data_type mx_fp (its data_type error lists {'int', 'mx_fp'})",
    "inc-bits-5-7": "0.30 wheel: INCConfig.SUPPORTED_BITS gains 5, 6 and 7",
    "nvfp4-per-token": "0.26 wheel: QuantizationMethods gains nvfp4_per_token (online NVFP4 experts)",
    "bitsandbytes-removed": "0.28 wheel: bitsandbytes leaves QuantizationMethods",
    "modelopt-exclude-modules": "0.33 wheel: ModelOpt's config.json branch falls back to exclude_modules when "
                                "ignore is absent",
}


class RuleProfile(NamedTuple):
    name: str
    vllm: str
    includes: frozenset[int]          # PULL_REQUESTS keys
    summary: str
    # Which release's fused-MoE FP8 rules (fp8check.kernels.moe) apply: "0.28" (0.28.0's oracle, create_weights
    # block check) or "0.33" (0.33.0's block refinement, split AITER classes, CPU_W8A8). The PR that brought the
    # refinement between 0.28 and 0.33 was not pinned, so the change is a rule set rather than a PR number.
    moe_rules: str = "0.28"
    changes: frozenset[str] = frozenset()  # WHEEL_CHANGES keys

    def has(self, change: int | str) -> bool:
        return change in (self.changes if isinstance(change, str) else self.includes)


def _release(name: str, base: RuleProfile | None, adds: tuple[int | str, ...], summary: str,
             moe_rules: str = "0.28") -> RuleProfile:
    """A profile is its predecessor plus what the release added."""
    prs = (base.includes if base else frozenset()) | {c for c in adds if isinstance(c, int)}
    changes = (base.changes if base else frozenset()) | {c for c in adds if isinstance(c, str)}
    return RuleProfile(name, name, prs, summary, moe_rules, changes)


_V025 = _release("0.25", None, (43958, 43645), "XPU W8A16 default (#43645); Marlin first in the CUDA FP8 table")
_V026 = _release("0.26", _V025, (47516, "quark-moe-exclude", "nvfp4-per-token"),
                 "before #50787: XPU block FP8 goes to W8A16 and fails to find a kernel")
_V027 = _release("0.27", _V026, ("rocm-cdna3-wording", "xpu-quant-allowlist", "modelopt-min-80", "inc-mx-fp"),
                 "as 0.26 but for one ROCm message; XPU's quantization allow-list")
_V028 = _release("0.28", _V027, (49664, 49932, 50787, 50826, "b12x", "humming-installed", "rocm-inc",
                                 "quark-per-block", "online-tp-amax", "mxfp8-backend-fallback",
                                 "bitsandbytes-removed"),
                 "XPU block FP8 routes to W8A8 / XPUFp8BlockScaledMMKernel; Torch kernels on XPU")
_V029 = _release("0.29", _V028, ("marlin-late", "torch-fp8-support", 47434, "pbwo-padding", "mxfp8-trtllm"),
                 "Marlin's cc >= 89 gate removed: sm89 block FP8 routes to Marlin; AutoRound block FP8")
_V030 = _release("0.30", _V029, (49381, "xpu-moe-wna16", "quark-fp8-keys", "inc-bits-5-7", "cpu-router"),
                 "as 0.29 for FP8 linear layers; ModelOpt's generic method")
_V031 = _release("0.31", _V030, ("cpu-fp8", "cutlass-fp8-check", "online-fp8-redirect", "mxfp8-shape",
                                 "glm4-moe-gate-linear"),
                 "CPU FP8 kernels (AMX-FP8 W8A8, per-tensor, block); Cutlass FP8 refuses below sm89")
_V032 = _release("0.32", _V031, ("humming-priority", "xpu-fp8-per-channel"), "Humming ahead of Marlin on sm90")
_V033 = _release("0.33", _V032, ("cpu-fp8-channel", "modelopt-exclude-modules", "mxfp8-torch"),
                 "CPU channel-wise FP8 kernel; 0.33's FusedMoE rules", moe_rules="0.33")

PROFILES: tuple[RuleProfile, ...] = (_V033, _V032, _V031, _V030, _V029, _V028, _V027, _V026, _V025)
LATEST = PROFILES[0]


def installed_vllm_version() -> str | None:
    """The vLLM installed in this environment, from its distribution metadata (vLLM itself is not imported)."""
    from importlib import metadata  # noqa: PLC0415

    try:
        return metadata.version("vllm")
    except metadata.PackageNotFoundError:
        return None


# A release as vLLM versions it: major.minor, an optional patch, then pre-release, dev, post and local parts
# (0.27.1, v0.26, 0.33.1rc1, 0.34.0.dev12+g0123abc).
_RELEASE = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[._-]?(?:a|b|rc|dev|post)\d*)*(?:\+[a-z0-9._]+)?")
LATEST_NAMES = ("latest", "newest", "main")


def known_releases() -> str:
    """What --vllm accepts, for error messages: latest and every profile, newest first."""
    return ", ".join(("latest",) + tuple(p.name for p in PROFILES))


def select_profile(version: str | None, option: str = "--vllm") -> RuleProfile:
    """`--vllm` accepts 'latest', 'installed' (the vLLM in this environment), a profile name, or a release such
    as 0.27.1 / v0.26 (patches map to the minor). A release fp8check has no profile for, older than the oldest or
    newer than the newest, is an InputError naming the known ones: a newer vLLM may route differently. `option`:
    the flag the errors name (diff's --from and --to)."""
    if version is None or version.strip().lower() in LATEST_NAMES:
        return LATEST
    flag = option
    if version.strip().lower() == "installed":
        installed = installed_vllm_version()
        if installed is None:
            raise InputError(f"{option} installed: vLLM is not installed in this environment (pip show vllm); "
                             f"name a release instead ({known_releases()})")
        flag, version = f"{option} installed (vLLM {installed})", installed
    match = _RELEASE.fullmatch(version.strip().lower())
    if match is None:
        raise InputError(f"{flag} {version!r}: expected latest or a vLLM release such as 0.27.1; fp8check knows "
                         f"{known_releases()} (patch releases map to their minor)")
    release, newest = (int(match[1]), int(match[2])), PROFILES[0]
    if release > _release_of(newest):
        raise InputError(f"{flag} {version}: newer than fp8check's newest rule profile {newest.name}, and a new "
                         f"release may route differently; fp8check knows {known_releases()} (upgrade fp8check, or "
                         f"pass latest to check against {newest.name}'s rules)")
    for profile in PROFILES:
        if release >= _release_of(profile):
            return profile
    raise InputError(f"{flag} {version}: fp8check has no rule profile older than {PROFILES[-1].name}; it knows "
                     f"{known_releases()} (`fp8check rules`)")


def _release_of(profile: RuleProfile) -> tuple[int, int]:
    major, minor = profile.name.split(".")
    return int(major), int(minor)
