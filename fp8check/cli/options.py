"""The options every command shares, defined once: each alias carries its flag names and help, and means the
same on every command that takes it; commands give the defaults in their signatures. Their strings become core
options through fp8check.api (routing_options, target), as the Python API's arguments do: an invalid one is an
InputError, exit 2, one line.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Optional

import typer


class OutputFormat(str, Enum):
    """--format of inspect and load: the report as a table, JSON, Markdown or JUnit."""

    table = "table"
    json = "json"
    markdown = "markdown"
    junit = "junit"


class TableJsonOrMarkdown(str, Enum):
    """--format of matrix and diff."""

    table = "table"
    json = "json"
    markdown = "markdown"


class TableOrJson(str, Enum):
    """--format of crosscheck, kernels, env and rules."""

    table = "table"
    json = "json"


class FailOn(str, Enum):
    """--fail-on, each value stricter than the one before (fp8check.core.report.verdicts.FAIL_ON)."""

    error = "error"
    not_judged = "not-judged"
    warning = "warning"


def _starting(values, incomplete: str) -> list[str]:
    return [value for value in dict.fromkeys(values) if value.startswith(incomplete)]


def complete_platform(incomplete: str) -> list[str]:
    """Shell completion of --platform: auto, xpu, cpu, the cuda:<cc> / rocm:<gfx> targets and the aliases of
    fp8check's platform table. A comma-separated list (matrix) completes its last item."""
    from fp8check.core.targets.platforms import ALIASES, ROCM_CAPABILITY

    done, _, last = incomplete.rpartition(",")
    targets = ("auto", "xpu", "cpu", *sorted({t for t in ALIASES.values() if ":" in t}),
               *(f"rocm:{gfx}" for gfx in ROCM_CAPABILITY), *sorted(ALIASES))
    return [done + "," * bool(done) + target for target in _starting(targets, last)]


def complete_vllm(incomplete: str) -> list[str]:
    """--vllm: auto, installed, latest and every rule profile (`fp8check rules`)."""
    from fp8check.core.targets.profiles import PROFILES

    return _starting(("auto", "installed", "latest", *(profile.name for profile in PROFILES)), incomplete)


def complete_kv_cache_dtype(incomplete: str) -> list[str]:
    """--kv-cache-dtype: the CacheDType values of every release fp8check has a profile for."""
    from fp8check.core.formats.kv_cache import CACHE_DTYPES

    return _starting((value for value, _ in CACHE_DTYPES), incomplete)


def complete_quantization(incomplete: str) -> list[str]:
    """--quantization: the online methods, then the methods of the checkpoint formats fp8check routes."""
    from fp8check.core.formats.online import ONLINE_METHODS
    from fp8check.core.formats.registry import FORMATS

    return _starting((*ONLINE_METHODS, *FORMATS), incomplete)


ModelArg = Annotated[str, typer.Argument(
    metavar="MODEL", show_default=False, help="Checkpoint folder (config.json + *.safetensors, or Mistral's "
    "params.json + consolidated*.safetensors), or a Hugging Face repo id org/name\\[@revision] (HF_HUB_OFFLINE=1 reads "
    "the local cache).")]
PlatformOpt = Annotated[Optional[str], typer.Option(
    "--platform", "-p", autocompletion=complete_platform, help="Target: xpu, cpu, cuda:<cc> (cuda:90), rocm:<gfx> "
    "(rocm:gfx942), an alias (h100, a100, l40s, b200, mi300x, arc-b580, ...) or auto (this host, detected without "
    "torch).")]
PlatformsOpt = Annotated[str, typer.Option(
    "--platform", "--platforms", "-p", metavar="TARGETS", autocompletion=complete_platform,
    help="Comma-separated targets, each as inspect's --platform takes it (aliases, cuda:<cc>, rocm:<gfx>, xpu, "
    "cpu).")]
TpOpt = Annotated[int, typer.Option("--tp", min=1, max=1024, help="Tensor-parallel size to check.")]
TpSizesOpt = Annotated[str, typer.Option("--tp", metavar="SIZES", help="Comma-separated tensor-parallel sizes, "
                                         "each from 1 to 1024.")]
EpOpt = Annotated[bool, typer.Option("--ep", help="As vLLM's --enable-expert-parallel: FusedMoE experts are split "
                                     "whole across the TP ranks instead of sliced.")]
VllmOpt = Annotated[str, typer.Option(
    "--vllm", metavar="RELEASE", autocompletion=complete_vllm, help="vLLM release whose rules apply: auto (the vLLM "
    "installed here, else latest), installed, latest, or a release fp8check has a profile for (`fp8check rules` "
    "lists them; a patch such as 0.27.1 maps to its minor, an unknown release is refused). An installed vLLM newer "
    "than every profile answers inspect with its own code (crosscheck).")]
LinearBackendOpt = Annotated[str, typer.Option("--linear-backend", help="As vLLM's --linear-backend: auto, xpu, "
                                               "torch, cutlass, marlin, triton, deep_gemm, ...")]
MoeBackendOpt = Annotated[str, typer.Option(
    "--moe-backend", metavar="BACKEND", help="As vLLM's --moe-backend: auto, triton, deep_gemm, cutlass, "
    "flashinfer_trtllm, flashinfer_cutlass, marlin, humming, aiter, hpc (the FP8 experts oracle's; vLLM raises when "
    "the requested backend refuses the layer), or another value of the release (its FusedMoE are then named, not "
    "judged).")]
KernelConfigOpt = Annotated[Optional[str], typer.Option(
    "--kernel-config", help="As vLLM's --kernel-config JSON, e.g. "
    "'{\"linear_backend_per_quant\": {\"fp8_block_w8a8\": \"triton\"}}' (its moe_backend too).")]
AssumeOpt = Annotated[list[str], typer.Option(
    "--assume", metavar="KEY=VALUE", help="Override an assumption about the serving environment: deep_gemm=yes, "
    "flashinfer=no, humming=yes, aiter=yes, cpu_amx=no, triton_cpu=no, cuda_version=12.8, ... (shown with "
    "--verbose); device_memory=80GiB, gpu_memory_utilization=0.9 (the memory fit).")]
DisableKernelOpt = Annotated[list[str], typer.Option(
    "--disable-kernel", metavar="KERNEL", help="Linear kernel class to treat as disabled (repeat it, or separate "
    "names with commas), like VLLM_DISABLED_KERNELS, which is also read from the environment; `fp8check kernels` "
    "lists the classes.")]
KvCacheDtypeOpt = Annotated[str, typer.Option(
    "--kv-cache-dtype", metavar="DTYPE", autocompletion=complete_kv_cache_dtype, help="As vLLM's --kv-cache-dtype "
    "(its CacheDType values): auto (default) is fp8_e4m3 for a compressed-tensors kv_cache_scheme or a ModelOpt "
    "kv_cache_quant_algo, else the model dtype; bfloat16, float16; fp8 (= fp8_e4m3: float8_e4m3fn, float8_e4m3fnuz "
    "on MI300 / gfx94x); fp8_e5m2; fp8_inc, nvfp4, ...")]
KvCacheSkipLayersOpt = Annotated[list[str], typer.Option(
    "--kv-cache-dtype-skip-layers", metavar="LAYERS", help="As vLLM's --kv-cache-dtype-skip-layers: attention "
    "layers that keep the model dtype whatever --kv-cache-dtype says, by decoder-layer index (0, 2, ...) or "
    "sliding_window (repeat it, or separate values with commas).")]
AttentionBackendOpt = Annotated[str, typer.Option(
    "--attention-backend", metavar="BACKEND", help="As vLLM's --attention-backend: an AttentionBackendEnum name "
    "(FLASH_ATTN, FLASHINFER, TRITON_ATTN, FLEX_ATTENTION, ROCM_ATTN, ROCM_AITER_FA, CPU_ATTN, FLASHMLA, "
    "CUTLASS_MLA, TRITON_MLA, ...; any case) or auto: the first valid backend of vLLM's priority list for the "
    "platform.")]
OutputFormatOpt = Annotated[OutputFormat, typer.Option(
    "--format", "-f", help="table (default), json (one object, schema_version 1), markdown (a CI summary) or junit "
    "(JUnit XML, one testcase per module and per kind of attention layer).")]
TableJsonOrMarkdownOpt = Annotated[TableJsonOrMarkdown, typer.Option("--format", "-f",
                                                                     help="table, json or markdown.")]
TableOrJsonOpt = Annotated[TableOrJson, typer.Option("--format", "-f", help="table or json.")]
FailOnOpt = Annotated[FailOn, typer.Option(
    "--fail-on", help="Exit 1 on errors only (error); also on any module not judged (not-judged: laid out by "
    "guess for an architecture not in fp8check's table, or a method fp8check names but does not model); also on any "
    "warning (warning, the strictest). Each warning starts with its code: slow-fallback (a portable fallback "
    "kernel where another --linear-backend has a native one), kv-replicated (TP above the KV heads), "
    "unverified-kernel (a kernel condition fp8check inferred), quant-error (load: static input scales that clip or "
    "waste the FP8 range).")]
OutputOpt = Annotated[Optional[str], typer.Option("--output", "-o", help="Also write the report (in --format; "
                                                  "Markdown for table) to this file.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Show every rejected kernel with vLLM's reason, "
                                          "warnings, notes and assumptions.")]
WideOpt = Annotated[bool, typer.Option("--wide", help="Show every column (parallel type, activation key); the "
                                       "default fits 100 columns.")]
QuantizationOpt = Annotated[Optional[str], typer.Option(
    "--quantization", "-q", autocompletion=complete_quantization, help="As vLLM's --quantization. On an "
    "unquantized (bf16) checkpoint: the online method vLLM quantizes it with at load (fp8, fp8_per_tensor, "
    "fp8_per_block, fp8_per_channel, mxfp8); on a quantized one it must be the method vLLM detects (else vLLM's "
    "mismatch error).")]
AllowDeprecatedOpt = Annotated[bool, typer.Option(
    "--allow-deprecated-quantization", help="As vLLM's flag: let a deprecated method (fbgemm_fp8) past vLLM's "
    "deprecation gate.")]
RevisionOpt = Annotated[Optional[str], typer.Option("--revision", help="Branch, tag or commit of a Hub repo id "
                                                    "(same as org/name@REV).")]
TokenOpt = Annotated[Optional[str], typer.Option(
    "--token", help="Hugging Face token for gated or private repos (default: HF_TOKEN, then the saved login). Sent "
    "only to the Hub; never printed.")]

