"""`fp8check matrix` (where can this checkpoint be served: platform x TP) and `fp8check diff` (what changes between
two vLLM rule profiles), both from one read of the headers (fp8check.core.planning)."""

from __future__ import annotations

from typing import Annotated, NoReturn

import typer

from fp8check.api import MATRIX_PLATFORMS, MATRIX_TPS
from fp8check.cli import ci, options, output
from fp8check.cli.options import TableJsonOrMarkdown

MATRIX_EPILOG = ("Exit codes: 0 at least one platform x TP cell loads; 1 none does; 2 bad usage or unreadable input. "
                 "Example: fp8check matrix ./Qwen3-32B-FP8-block -p xpu,h100,mi300x --tp 1,2,4,8")
DIFF_EPILOG = ("Exit codes: 0 no layer that loaded stops loading; 1 one does; 2 bad usage or unreadable input. "
               "Example: fp8check diff ./Qwen3-32B-FP8-block --from 0.27 --to latest -p xpu --tp 2")


def matrix(
    model: options.ModelArg,
    platforms: options.PlatformsOpt = ",".join(MATRIX_PLATFORMS),
    tps: options.TpSizesOpt = ",".join(map(str, MATRIX_TPS)),
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
    fmt: options.TableJsonOrMarkdownOpt = TableJsonOrMarkdown.table,
    output_path: options.OutputOpt = None,
    wide: options.WideOpt = False,
    revision: options.RevisionOpt = None,
    token: options.TokenOpt = None,
) -> None:
    """Where can this checkpoint be served? A grid of platform x TP from one read of the headers."""
    from fp8check.api import matrix as build_matrix
    from fp8check.cli.render.planning import matrix_markdown, matrix_table
    from fp8check.core.report.documents import matrix_document

    with output.errors_reported(model, fmt is TableJsonOrMarkdown.json):
        result = build_matrix(model, platforms=platforms, tp=tps, ep=ep, vllm=vllm, linear_backend=linear_backend,
                              kernel_config=kernel_config, assume=assume, disable_kernel=disable_kernel,
                              quantization=quantization, allow_deprecated_quantization=allow_deprecated_quantization,
                              kv_cache_dtype=kv_cache_dtype, kv_cache_dtype_skip_layers=kv_cache_dtype_skip_layers,
                              attention_backend=attention_backend, moe_backend=moe_backend, revision=revision,
                              token=token)
    _show(result, fmt, output_path, matrix_document, lambda result, console: matrix_table(result, console, wide),
          matrix_markdown)


def diff(
    model: options.ModelArg,
    old: Annotated[str, typer.Option("--from", metavar="RELEASE", help="The vLLM rule profile upgraded from, e.g. "
                                     "0.27.")],
    new: Annotated[str, typer.Option("--to", metavar="RELEASE", help="The rule profile upgraded to.")] = "latest",
    platform: options.PlatformOpt = "auto",
    tp: options.TpOpt = 1,
    ep: options.EpOpt = False,
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
    fmt: options.TableJsonOrMarkdownOpt = TableJsonOrMarkdown.table,
    output_path: options.OutputOpt = None,
    revision: options.RevisionOpt = None,
    token: options.TokenOpt = None,
) -> None:
    """Which layers change scheme, kernel or verdict between two vLLM rule profiles, and the upstream changes why."""
    from fp8check.api import routing_options, target
    from fp8check.cli.render.planning import diff_markdown, diff_table
    from fp8check.core.checkpoint.source import open_checkpoint
    from fp8check.core.planning.diff import diff as build_diff
    from fp8check.core.report.documents import diff_document
    from fp8check.core.targets.profiles import select_profile

    with output.errors_reported(model, fmt is TableJsonOrMarkdown.json):
        before = select_profile(old, "--from")
        opts = routing_options(target(platform or "auto", assume), tp=tp, ep=ep, vllm=new, vllm_option="--to",
                               linear_backend=linear_backend, kernel_config=kernel_config,
                               disable_kernel=disable_kernel, quantization=quantization,
                               allow_deprecated_quantization=allow_deprecated_quantization,
                               kv_cache_dtype=kv_cache_dtype, kv_cache_dtype_skip_layers=kv_cache_dtype_skip_layers,
                               attention_backend=attention_backend, moe_backend=moe_backend)
        ckpt = open_checkpoint(model, revision=revision, token=token)
        result = build_diff(ckpt, opts, before, opts.profile)
    _show(result, fmt, output_path, diff_document, diff_table, diff_markdown)


def _show(result, fmt: TableJsonOrMarkdown, output_path: str | None, document, table, markdown) -> NoReturn:
    """The matrix or diff in --format (--output writes it, Markdown for a table); exit 1 when it fails."""
    output.show(fmt, output_path, document=lambda: document(result), table=lambda console: table(result, console),
                markdown=lambda: markdown(result))
    raise typer.Exit(ci.EXIT_OK if result.ok else ci.EXIT_FAIL)


def register(app: typer.Typer) -> None:
    app.command(epilog=MATRIX_EPILOG)(matrix)
    app.command(epilog=DIFF_EPILOG)(diff)
