"""`fp8check inspect`: the routing of every layer from config.json and the safetensors headers, with the
suggestions computed for a failure. Never imports torch."""

from __future__ import annotations

import typer

from fp8check.cli import options, output
from fp8check.cli.options import Format

EPILOG = ("Exit codes: 0 every layer routes and checks pass; 1 some layer would fail; 2 bad usage or unreadable input. "
          "Examples: fp8check inspect ./Qwen3-32B-FP8-block -p xpu --tp 2 ; "
          "fp8check inspect ./model -p h100 --vllm 0.27 --format json")


def inspect(
    model: options.ModelArg,
    platform: options.PlatformOpt = "auto",
    tp: options.TpOpt = 1,
    ep: options.EpOpt = False,
    vllm: options.VllmOpt = "latest",
    linear_backend: options.LinearBackendOpt = "auto",
    kernel_config: options.KernelConfigOpt = None,
    assume: options.AssumeOpt = [],  # noqa: B006 - typer needs a list
    disable_kernel: options.DisableKernelOpt = [],  # noqa: B006
    quantization: options.QuantizationOpt = None,
    allow_deprecated_quantization: options.AllowDeprecatedOpt = False,
    fmt: options.FormatOpt = Format.table,
    output_path: options.OutputOpt = None,
    fail_on: options.FailOnOpt = options.FailOn.error,
    verbose: options.VerboseOpt = False,
    revision: options.RevisionOpt = None,
    token: options.TokenOpt = None,
) -> None:
    """Predict vLLM's scheme and kernel for every linear layer, from config.json and safetensors headers only."""
    from fp8check.core.checkpoint.source import open_checkpoint
    from fp8check.core.routing.inspect import inspect_checkpoint

    with output.errors_reported(model, fmt is Format.json):
        opts = options.inspect_options(options.platform_option(platform, assume), tp, ep, vllm, linear_backend,
                                       kernel_config, disable_kernel,
                                       quantization, allow_deprecated_quantization)
        ckpt = open_checkpoint(model, revision=revision, token=token)
        report = inspect_checkpoint(ckpt, opts)
        if not report.ok:  # what would work instead, computed by routing the failing layers again
            from fp8check.core.planning.suggest import suggest

            report = report._replace(suggestions=suggest(report, ckpt, opts))
    output.finish_report(report, fmt, fail_on, verbose, ckpt.fetch, output_path)


def register(app: typer.Typer) -> None:
    app.command(epilog=EPILOG)(inspect)
