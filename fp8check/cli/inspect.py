"""`fp8check inspect`: the routing of every layer from config.json and the safetensors headers, with the
suggestions computed for a failure. Never imports torch."""

from __future__ import annotations

import typer

from fp8check.cli import ci, options, output
from fp8check.cli.options import OutputFormat

EPILOG = ("Exit codes: 0 every layer routes and checks pass; 1 some layer would fail (or, under --fail-on, a module "
          "not judged or a warning); 2 bad usage or unreadable input. "
          "Examples: fp8check inspect ./Qwen3-32B-FP8-block -p xpu --tp 2 ; "
          "fp8check inspect ./model -p h100 --vllm 0.27 --format json ; "
          "fp8check inspect ./model -p a100 --kv-cache-dtype fp8 --verbose")


def inspect(
    model: options.ModelArg,
    platform: options.PlatformOpt = "auto",
    tp: options.TpOpt = 1,
    ep: options.EpOpt = False,
    vllm: options.VllmOpt = "auto",
    linear_backend: options.LinearBackendOpt = "auto",
    kernel_config: options.KernelConfigOpt = None,
    assume: options.AssumeOpt = [],  # noqa: B006 - typer needs a list
    disable_kernel: options.DisableKernelOpt = [],  # noqa: B006
    quantization: options.QuantizationOpt = None,
    allow_deprecated_quantization: options.AllowDeprecatedOpt = False,
    kv_cache_dtype: options.KvCacheDtypeOpt = "auto",
    kv_cache_dtype_skip_layers: options.KvCacheSkipLayersOpt = [],  # noqa: B006 - typer needs a list
    attention_backend: options.AttentionBackendOpt = "auto",
    moe_backend: options.MoeBackendOpt = "auto",
    fmt: options.OutputFormatOpt = OutputFormat.table,
    output_path: options.OutputOpt = None,
    fail_on: options.FailOnOpt = options.FailOn.error,
    verbose: options.VerboseOpt = False,
    wide: options.WideOpt = False,
    revision: options.RevisionOpt = None,
    token: options.TokenOpt = None,
) -> None:
    """Predict vLLM's kernel for every linear layer and the KV cache and backend of every attention layer."""
    from fp8check.api import inspect_with_checkpoint
    from fp8check.core.targets.profiles import NewerRelease

    as_json, newer = fmt is OutputFormat.json, None
    with output.errors_reported(model, as_json):
        try:
            report, ckpt = inspect_with_checkpoint(
                model, platform=platform or "auto", tp=tp, ep=ep, vllm=vllm, linear_backend=linear_backend,
                kernel_config=kernel_config, assume=assume, disable_kernel=disable_kernel, quantization=quantization,
                allow_deprecated_quantization=allow_deprecated_quantization, kv_cache_dtype=kv_cache_dtype,
                kv_cache_dtype_skip_layers=kv_cache_dtype_skip_layers, attention_backend=attention_backend,
                moe_backend=moe_backend, revision=revision, token=token)
        except NewerRelease as exc:  # the installed vLLM is newer than every profile: its own code answers
            newer = exc
    if newer is not None:
        from fp8check.cli.load import installed_vllm_answer, show_crosscheck

        with output.errors_reported(model, as_json):
            result = installed_vllm_answer(
                newer, model, as_json, platform=platform or "auto", tp=tp, linear_backend=linear_backend,
                kernel_config=kernel_config, assume=assume, disable_kernel=disable_kernel, quantization=quantization,
                allow_deprecated_quantization=allow_deprecated_quantization, revision=revision, token=token)
        show_crosscheck(model, result, as_json)
        raise typer.Exit(ci.EXIT_FAIL if any(row.vllm_error for row in result.rows) else ci.EXIT_OK)
    output.unmatched_skip_layers(report, kv_cache_dtype_skip_layers)
    output.finish_report(report, fmt, fail_on, verbose, ckpt.fetch, output_path, wide=wide)


def register(app: typer.Typer) -> None:
    app.command(epilog=EPILOG)(inspect)
