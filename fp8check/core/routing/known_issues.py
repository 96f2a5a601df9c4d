"""vLLM's known FP8 failures after selection: the table of failures users hit with a kernel vLLM did choose, read
from vLLM's tracker (issue 35 part 2), and `matching(report)`, which finds the ones a routed `InspectReport` meets.

Selection can agree with vLLM and the model still not serve: the kernel vLLM picked crashes while processing the
weights or on its first forward (DeepGEMM on SM120, CUTLASS FP8 on Ampere, Triton's fp8e4nv below SM89, ...). Each
`KnownIssue` is one such failure: where it happens (platform kind, capability range, the kernel / experts class /
attention backend the routed layer carries, the architectures and KV cache dtypes it needs), the releases that have
it (`introduced` <= release < `fixed`, full vLLM versions, evaluated by `profiles.in_range`: no rule here compares
release numbers), vLLM's symptom verbatim, the issue and the fixing PR where one is known, and the workaround.
Each entry is tested on a synthetic checkpoint (tests/test_known_issues.py); `fp8check known-issues` lists them.

Left out (no entry): FP8 Marlin's `size_n = 5472 is not divisible by tile_n_size = 64` (GLM-4.5V at TP 4 on
sm86, https://github.com/zai-org/GLM-V/issues/178, vLLM 0.10.2): every wheel 0.25.0 ... 0.34.0 pads Marlin's
rank-local N / K to a thread tile (marlin_padded_nk: #45295 dense, #45703 MoE), so no release fp8check knows has it.
Torch-free.
"""

from __future__ import annotations

from typing import NamedTuple

from fp8check.core.records import InspectReport
from fp8check.core.targets.profiles import in_range

VLLM = "https://github.com/vllm-project/vllm"
LINEAR, MOE, ATTENTION = "linear", "moe", "attention"


class KnownIssue(NamedTuple):
    id: str                               # short slug
    title: str
    introduced: str | None                # first vLLM release with the failure; None: every profile (0.25 on)
    fixed: str | None                     # first release with the fix; None: no release fp8check knows has it
    platform: str                         # Platform.kind
    capability: tuple[int, int]           # [low, high) on Platform.capability (major * 10 + minor; 30 the lowest)
    capability_text: str                  # the same, as people say it
    applies_to: tuple[str, ...]           # LINEAR / MOE (the experts class) / ATTENTION (the backend)
    kernels: tuple[str, ...]              # the routed class (or attention backend) names it concerns
    condition: str                        # the rest of the condition, in words
    symptom: str                          # what vLLM prints, verbatim from the report
    issue: str                            # the GitHub issue
    fix_pr: str | None                    # the PR that fixed it; None: none known
    fix_note: str                         # how `fixed` was established, or why there is none
    workaround: str                       # for the user: the flag, variable or release
    suggestion: str                       # for fp8check: the option that models the workaround
    severity: str                         # "fail" (reproducible) | "warn" (reported on some hosts only)
    architectures: tuple[str, ...] = ()   # config.json architectures it needs; () any
    kv_cache_dtypes: tuple[str, ...] = ()  # attention: the --kv-cache-dtype values (resolved) it needs; () any
    introduced_note: str = ""             # what brought it, where known


KNOWN_ISSUES: tuple[KnownIssue, ...] = (
    KnownIssue(
        id="deepgemm-sm120-sf-layout",
        title="Block FP8 through DeepGEMM on SM120 (RTX 50xx / RTX PRO 6000): 'Unknown SF transformation'",
        introduced=None, fixed=None,
        platform="cuda", capability=(120, 130), capability_text="sm12x (RTX 50xx, RTX PRO 6000, GB10)",
        applies_to=(LINEAR,), kernels=("DeepGemmFp8BlockScaledMMKernel",),
        condition="a block-quantized FP8 linear layer routed to DeepGEMM (vLLM turns DeepGEMM off by itself only "
                  "for the model types should_auto_disable_deep_gemm names); fails in process_weights_after_loading",
        symptom="RuntimeError: Assertion error (/workspace/.deps/deepgemm-src/csrc/apis/layout.hpp:60): "
                "Unknown SF transformation",
        issue=f"{VLLM}/issues/51884",
        fix_pr=None,
        fix_note="open in vLLM 0.26.1rc1 (#51884) and v0.24.0 (#47436); the DeepGEMM side is "
                 "deepseek-ai/DeepGEMM#403 (open). Every wheel 0.25.0 ... 0.34.0 keeps SM120 in support_deep_gemm",
        workaround="VLLM_USE_DEEP_GEMM=0",
        suggestion="--assume deep_gemm=no (VLLM_USE_DEEP_GEMM=0): fp8check then routes the layer to the next kernel",
        severity="fail",
        introduced_note=f"{VLLM}/pull/43477 routed the SM120 FP8 path through DeepGEMM (before 0.25)",
    ),
    KnownIssue(
        id="cutlass-fp8-sm80",
        title="CutlassFP8ScaledMMLinearKernel chosen below SM89 (A100) crashes: the SM80 dispatch is INT8-only",
        introduced="0.29.0", fixed="0.31.0",
        platform="cuda", capability=(30, 89), capability_text="below sm89 (A100, A10, RTX 30xx)",
        applies_to=(LINEAR,), kernels=("CutlassFP8ScaledMMLinearKernel",),
        condition="a per-tensor / per-channel FP8 W8A8 linear layer (ModelOpt FP8, whose minimum capability is 80) "
                  "routed to CUTLASS: 0.29 moved Marlin behind it and Cutlass checked only for CUDA",
        symptom="RuntimeError: cutlass_scaled_mm_sm80_epilogue, .../scaled_mm_c2x.cu:89",
        issue=f"{VLLM}/issues/55008",
        fix_pr=f"{VLLM}/pull/55884",
        fix_note="#55884 makes CutlassFP8ScaledMMLinearKernel.is_supported ask cutlass_fp8_supported(); the 0.31.0 "
                 "wheel is the first with that check (0.29.0 and 0.30.0 lack it)",
        workaround="--linear-backend marlin, or vLLM 0.31.0 or newer",
        suggestion="--linear-backend marlin (or --vllm 0.31)",
        severity="fail",
        introduced_note="0.29.0 reordered the CUDA FP8 kernel list (Marlin after the Torch / CUTLASS kernels) and "
                        "dropped Marlin's own cc >= 89 refusal",
    ),
    KnownIssue(
        id="triton-fp8e4nv-pre-ada",
        title="Triton FP8 block / MoE kernels below SM89: Triton has no fp8e4nv on Ampere",
        introduced=None, fixed=None,
        platform="cuda", capability=(30, 89), capability_text="below sm89 (A100, A6000, RTX 30xx)",
        applies_to=(LINEAR, MOE),
        kernels=("TritonFp8BlockScaledMMKernel", "TritonExperts", "TritonOrDeepGemmExperts", "TritonOrCutlassExperts",
                 "BatchedTritonExperts"),
        condition="an FP8 W8A8 layer on a Triton kernel (a forced --linear-backend triton / --moe-backend triton, "
                  "or a model path that selects Triton without a capability check); fails compiling the kernel",
        symptom="ValueError(\"type fp8e4nv not supported in this architecture. The supported fp8 dtypes are "
                "('fp8e4b15', 'fp8e5')\")",
        issue=f"{VLLM}/issues/54318",
        fix_pr=None,
        fix_note="open (#54318: the Triton fused-MoE kernel is selected without a capability check); the same error "
                 "on the block linear kernel: #15336",
        workaround="--linear-backend marlin / --moe-backend marlin (Marlin's weight-only FP8 runs on SM80)",
        suggestion="--linear-backend marlin (vLLM: --moe-backend marlin for FusedMoE)",
        severity="fail",
    ),
    KnownIssue(
        id="deepgemm-minimax-m2-sm90",
        title="MiniMax-M2.x block FP8 through DeepGEMM on SM90: illegal memory access (GH200, 0.25.1 / 0.26.0)",
        introduced="0.25.0", fixed=None,
        platform="cuda", capability=(90, 91), capability_text="sm90 (reported on GH200)",
        applies_to=(LINEAR,),
        kernels=("DeepGemmFp8BlockScaledMMKernel", "FlashInferFp8DeepGEMMDynamicBlockScaledKernel"),
        condition="MiniMaxM2ForCausalLM (MiniMax-M2.7, TP 2, FP8 KV cache) with block FP8 linear layers on "
                  "DeepGEMM's fp8_gemm_nt; v0.24.0 worked. Reported on GH200 only, which fp8check cannot tell "
                  "from H100 / H200 (all sm90): a warning",
        symptom="RuntimeError: CUDA driver error (.../deepgemm-src/.../runtime_utils.hpp:144): 700 "
                "(CUDA_ERROR_ILLEGAL_ADDRESS, an illegal memory access was encountered)",
        issue=f"{VLLM}/issues/49158",
        fix_pr=None,
        fix_note=f"open; {VLLM}/pull/49183 (turn DeepGEMM off on GH200) is open and was not accepted as the fix",
        workaround="VLLM_USE_DEEP_GEMM=0 (or vLLM 0.24.0, which the report says worked)",
        suggestion="--assume deep_gemm=no (VLLM_USE_DEEP_GEMM=0)",
        severity="warn",
        architectures=("MiniMaxM2ForCausalLM",),
        introduced_note="a regression between v0.24.0 and v0.25.1 (#49158)",
    ),
    KnownIssue(
        id="mla-sparse-sm90-uint8-kv",
        title="FLASHINFER_MLA_SPARSE_SM90 with an FP8 KV cache: plan() is handed the uint8 storage dtype",
        introduced="0.30.0", fixed="0.32.0",
        platform="cuda", capability=(90, 100), capability_text="sm9x (H100, H200, H20)",
        applies_to=(ATTENTION,), kernels=("FLASHINFER_MLA_SPARSE_SM90",),
        condition="sparse MLA (GLM-5.3-Flash's rope-free head 512 selects it; --attention-backend for others) with "
                  "--kv-cache-dtype fp8 / fp8_e4m3: vLLM stores the cache as uint8 and FlashInferMLASparseSM90Builder "
                  "planned with that dtype; engine start-up fails",
        symptom="ValueError: MLA kv_data_type torch.uint8 is not supported",
        issue=f"{VLLM}/issues/55221",
        fix_pr=None,
        fix_note="fixing PR not identified; the 0.32.0 wheel is the first whose builder plans float8_e4m3fn for a "
                 "uint8 cache ('fp8 KV cache is stored as uint8; plan() needs the logical dtype'), 0.30.0 and "
                 "0.31.0 pass kv_cache_spec.dtype",
        workaround="--kv-cache-dtype auto (a bf16 cache), or vLLM 0.32.0 or newer",
        suggestion="--kv-cache-dtype auto (or --vllm 0.32)",
        severity="fail",
        kv_cache_dtypes=("fp8", "fp8_e4m3"),
        introduced_note="0.30.0 added FLASHINFER_MLA_SPARSE_SM90",
    ),
)
BY_ID = {issue.id: issue for issue in KNOWN_ISSUES}


def _on_target(issue: KnownIssue, report: InspectReport) -> bool:
    platform = report.platform
    low, high = issue.capability
    return (platform.kind == issue.platform and platform.capability is not None and low <= platform.capability < high
            and in_range(report.profile, issue.introduced, issue.fixed)
            and (not issue.architectures or bool(set(issue.architectures) & set(report.architectures))))


def _layers(issue: KnownIssue, report: InspectReport) -> tuple[str, ...]:
    """The layers of `report` the issue's kernels carry: FP8 linear layers, FusedMoE experts, attention layers."""
    names: list[str] = []
    if LINEAR in issue.applies_to:
        names += [layer.name for layer in report.layers
                  if layer.kernel in issue.kernels and layer.weight_dtype.startswith("F8")]
    if MOE in issue.applies_to:
        names += [moe.name for moe in report.moes if moe.kernel in issue.kernels]
    if ATTENTION in issue.applies_to:
        names += [attn.name for attn in report.attention if attn.backend in issue.kernels
                  and (not issue.kv_cache_dtypes or attn.kv_cache_dtype in issue.kv_cache_dtypes)]
    return tuple(names)


def matching(report: InspectReport) -> list[tuple[KnownIssue, tuple[str, ...]]]:
    """Every known issue the routed `report` meets, with the layer (module) names it concerns, in table order."""
    found = []
    for issue in KNOWN_ISSUES:
        if _on_target(issue, report) and (names := _layers(issue, report)):
            found.append((issue, names))
    return found


def releases(issue: KnownIssue) -> str:
    """The release range in words: 'every release', '0.29.0 until 0.31.0', 'from 0.25.0 (not fixed)'."""
    if issue.introduced is None:
        return "every release" + (f" before {issue.fixed}" if issue.fixed else " (not fixed)")
    return f"{issue.introduced} until {issue.fixed}" if issue.fixed else f"from {issue.introduced} (not fixed)"


def message(issue: KnownIssue, names: tuple[str, ...]) -> str:
    """The finding as one line: what fails, vLLM's symptom and the link (an error, or a warning for 'warn')."""
    layers = f"{len(names)} layers ({names[0]}, ...)" if len(names) > 1 else names[0]
    return (f"known vLLM failure {issue.id}: {issue.title}; {layers}: vLLM fails with {issue.symptom} "
            f"({issue.issue})")


def document(issue: KnownIssue) -> dict:
    """The entry as `fp8check known-issues --format json` prints it (every field, the links included)."""
    entry = issue._asdict()
    entry["capability"] = list(issue.capability)
    entry["releases"] = releases(issue)
    return entry
