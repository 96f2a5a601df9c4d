"""The options every command shares, defined once, and how their strings become core option objects.

Each failure is an InputError: exit 2, one line. The Annotated aliases carry flag names and help; commands give
the defaults in their signatures.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Annotated, Optional

import typer

from fp8check.core.errors import InputError
from fp8check.core.records import Backend
from fp8check.core.targets.platforms import (
    Platform, apply_assumptions, detect_host, disabled_kernels_from_env, parse_platform,
)
from fp8check.kernels.registry import FP8, FP8_BLOCK, LINEAR_BACKENDS, W8A16_FP8, normalize_backend

QUANTIZATION_KEYS = (FP8, FP8_BLOCK, W8A16_FP8, "int8_w8a8", "mixed_precision", "mxfp8", "mxfp4", "mxfp6",
                     "nvfp4_w4a4", "nvfp4_w4a16")


def platform_option(text: str, assumptions: list[str]) -> Platform:
    platform = detect_host() if text.strip().lower() == "auto" else parse_platform(text)
    return apply_assumptions(platform, assumptions)


def _backend_name(value: object, where: str) -> str:
    if not isinstance(value, str) or normalize_backend(value) not in LINEAR_BACKENDS:
        raise InputError(f"{where}: unknown linear backend {value!r} (one of {', '.join(LINEAR_BACKENDS)})")
    return normalize_backend(value)


def backend_option(linear_backend: str, kernel_config: str | None) -> Backend:
    """--linear-backend plus vLLM's --kernel-config JSON ({"linear_backend_per_quant": {...}})."""
    default = _backend_name(linear_backend, "--linear-backend")
    per_quant: dict[str, str] = {}
    if kernel_config:
        try:
            doc = json.loads(kernel_config)
        except ValueError as exc:
            raise InputError(f"--kernel-config is not valid JSON: {exc}") from None
        if not isinstance(doc, dict) or set(doc) - {"linear_backend", "linear_backend_per_quant"}:
            raise InputError("--kernel-config takes a JSON object with linear_backend and/or linear_backend_per_quant")
        if "linear_backend" in doc:
            default = _backend_name(doc["linear_backend"], "--kernel-config linear_backend")
        mapping = doc.get("linear_backend_per_quant") or {}
        if not isinstance(mapping, dict):
            raise InputError("--kernel-config linear_backend_per_quant must be an object")
        for key, value in mapping.items():
            if key not in QUANTIZATION_KEYS:
                raise InputError(f"--kernel-config: unknown quantization key {key!r} (one of {', '.join(QUANTIZATION_KEYS)})")
            per_quant[key] = _backend_name(value, f"--kernel-config linear_backend_per_quant.{key}")
    return Backend(default=default, per_quant=tuple(sorted(per_quant.items())))


def disabled_option(names: list[str]) -> tuple[str, ...]:
    return tuple(names) + disabled_kernels_from_env()


class Format(str, Enum):
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
    error = "error"
    warning = "warning"


ModelArg = Annotated[str, typer.Argument(
    help="Checkpoint folder (config.json + *.safetensors), or a Hugging Face repo id org/name\\[@revision] "
         "(HF_HUB_OFFLINE=1 reads the local cache).")]
PlatformOpt = Annotated[Optional[str], typer.Option(
    "--platform", "-p", help="Target: xpu, cpu, cuda:<cc> (cuda:90), rocm:<gfx> (rocm:gfx942), an alias (h100, a100, "
    "l40s, b200, mi300x, arc-b580, ...) or auto (this host, detected without torch).")]
TpOpt = Annotated[int, typer.Option("--tp", min=1, max=1024, help="Tensor-parallel size to check.")]
EpOpt = Annotated[bool, typer.Option("--ep", help="As vLLM's --enable-expert-parallel: FusedMoE experts are split "
                                     "whole across the TP ranks instead of sliced.")]
VllmOpt = Annotated[str, typer.Option("--vllm", help="vLLM rule profile: latest, or a version such as 0.27.1 "
                                      "(see `fp8check rules`).")]
LinearBackendOpt = Annotated[str, typer.Option("--linear-backend", help="As vLLM's --linear-backend: auto, xpu, "
                                               "torch, cutlass, marlin, triton, deep_gemm, ...")]
KernelConfigOpt = Annotated[Optional[str], typer.Option(
    "--kernel-config", help="As vLLM's --kernel-config JSON, e.g. "
    "'{\"linear_backend_per_quant\": {\"fp8_block_w8a8\": \"triton\"}}'.")]
AssumeOpt = Annotated[list[str], typer.Option(
    "--assume", help="Override an assumption about the serving environment, KEY=VALUE: deep_gemm=yes, "
    "flashinfer=no, humming=yes, aiter=yes, cpu_amx=no, cuda_version=12.8, ... (shown with --verbose); "
    "device_memory=80GiB, gpu_memory_utilization=0.9 (the memory fit).")]
DisableKernelOpt = Annotated[list[str], typer.Option(
    "--disable-kernel", help="Kernel class to treat as disabled, like VLLM_DISABLED_KERNELS (which is also read "
    "from the environment).")]
FormatOpt = Annotated[Format, typer.Option(
    "--format", "-f", help="table (default), json (one object, schema_version 1), markdown (a CI summary) or junit "
    "(JUnit XML, one testcase per module).")]
TableJsonOrMarkdownOpt = Annotated[TableJsonOrMarkdown, typer.Option("--format", "-f",
                                                                     help="table, json or markdown.")]
TableOrJsonOpt = Annotated[TableOrJson, typer.Option("--format", "-f", help="table or json.")]
FailOnOpt = Annotated[FailOn, typer.Option(
    "--fail-on", help="Exit 1 on errors only (error, default) or on any warning too (warning); the warnings are "
    "listed in the README's 'CI and planning' section.")]
OutputOpt = Annotated[Optional[str], typer.Option("--output", "-o", help="Also write the report (in --format; "
                                                  "Markdown for table) to this file.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Show every rejected kernel with vLLM's reason, "
                                          "warnings, notes and assumptions.")]
QuantizationOpt = Annotated[Optional[str], typer.Option(
    "--quantization", "-q", help="As vLLM's --quantization. On an unquantized (bf16) checkpoint: the online method "
    "vLLM quantizes it with at load (fp8, fp8_per_tensor, fp8_per_block, fp8_per_channel, mxfp8); on a quantized "
    "one it must be the method vLLM detects (else vLLM's mismatch error).")]
AllowDeprecatedOpt = Annotated[bool, typer.Option(
    "--allow-deprecated-quantization", help="As vLLM's flag: let a deprecated method (fbgemm_fp8) past vLLM's "
    "deprecation gate.")]
RevisionOpt = Annotated[Optional[str], typer.Option("--revision", help="Branch, tag or commit of a Hub repo id "
                                                    "(same as org/name@REV).")]
TokenOpt = Annotated[Optional[str], typer.Option(
    "--token", help="Hugging Face token for gated or private repos (default: HF_TOKEN, then the saved login). Sent "
    "only to the Hub; never printed.")]


def inspect_options(platform: Platform, tp: int, ep: bool, vllm: str, linear_backend: str, kernel_config: str | None,
                    disable_kernel: list[str], quantization: str | None = None, allow_deprecated: bool = False):
    """The routing half every command shares (fp8check.core.routing.inspect.InspectOptions)."""
    from fp8check.core.records import InspectOptions
    from fp8check.core.targets.profiles import select_profile

    return InspectOptions(platform=platform, profile=select_profile(vllm), tp=tp, ep=ep,
                          backend=backend_option(linear_backend, kernel_config),
                          disabled_kernels=disabled_option(disable_kernel),
                          quantization=quantization.strip().lower() if quantization else None,
                          allow_deprecated_quantization=allow_deprecated)


def tp_list_item(text: str) -> int:
    """One size of matrix's comma-separated --tp, bounded as --tp is."""
    if not text.strip().isdigit() or not 1 <= int(text) <= 1024:
        raise InputError(f"--tp {text.strip()!r}: expected comma-separated sizes from 1 to 1024, e.g. 1,2,4,8")
    return int(text)
