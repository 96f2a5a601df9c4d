"""`fp8check matrix` (where can this checkpoint be served: platform x TP) and `fp8check diff` (what changes between
two vLLM rule profiles), both from one read of the headers (fp8check.core.planning)."""

from __future__ import annotations

from typing import Annotated, NoReturn

import typer

from fp8check.cli import ci, options, output
from fp8check.cli.options import TableJsonOrMarkdown
from fp8check.core.errors import InputError

MATRIX_EPILOG = ("Exit codes: 0 at least one platform x TP cell loads; 1 none does; 2 bad usage or unreadable input. "
                 "Example: fp8check matrix ./Qwen3-32B-FP8-block --platforms xpu,h100,mi300x --tp 1,2,4,8")
DIFF_EPILOG = ("Exit codes: 0 no layer that loaded stops loading; 1 one does; 2 bad usage or unreadable input. "
               "Example: fp8check diff ./Qwen3-32B-FP8-block --from 0.27 --to latest -p xpu --tp 2")


def matrix(
    model: options.ModelArg,
    platforms: Annotated[str, typer.Option("--platforms", help="Comma-separated targets (aliases, cuda:<cc>, "
                         "rocm:<gfx>, xpu, cpu).")] = "xpu,h100,a100,l40s,mi300x",
    tps: Annotated[str, typer.Option("--tp", help="Comma-separated tensor-parallel sizes.")] = "1,2,4,8",
    ep: options.EpOpt = False,
    vllm: options.VllmOpt = "latest",
    linear_backend: options.LinearBackendOpt = "auto",
    kernel_config: options.KernelConfigOpt = None,
    assume: options.AssumeOpt = [],  # noqa: B006 - typer needs a list
    disable_kernel: options.DisableKernelOpt = [],  # noqa: B006
    quantization: options.QuantizationOpt = None,
    allow_deprecated_quantization: options.AllowDeprecatedOpt = False,
    fmt: options.TableJsonOrMarkdownOpt = TableJsonOrMarkdown.table,
    output_path: options.OutputOpt = None,
    revision: options.RevisionOpt = None,
    token: options.TokenOpt = None,
) -> None:
    """Where can this checkpoint be served? A grid of platform x TP from one read of the headers."""
    from fp8check.cli.render_planning import matrix_markdown, matrix_table
    from fp8check.core.checkpoint.source import open_checkpoint
    from fp8check.core.planning.matrix import matrix as build_matrix
    from fp8check.core.report.documents import matrix_document

    with output.errors_reported(model, fmt is TableJsonOrMarkdown.json):
        targets = [options.platform_option(p, assume) for p in platforms.split(",") if p.strip()]
        sizes = [options.tp_list_item(t) for t in tps.split(",") if t.strip()]
        if not targets or not sizes:
            raise InputError("--platforms and --tp each need at least one value, e.g. --platforms xpu,h100 --tp 1,2")
        opts = options.inspect_options(targets[0], 1, ep, vllm, linear_backend, kernel_config, disable_kernel,
                                       quantization, allow_deprecated_quantization)
        result = build_matrix(open_checkpoint(model, revision=revision, token=token), opts, targets, sizes)
    _show(result, fmt, output_path, matrix_document, matrix_table, matrix_markdown)


def diff(
    model: options.ModelArg,
    old: Annotated[str, typer.Option("--from", help="The vLLM rule profile upgraded from, e.g. 0.27.")],
    new: Annotated[str, typer.Option("--to", help="The rule profile upgraded to.")] = "latest",
    platform: options.PlatformOpt = "auto",
    tp: options.TpOpt = 1,
    ep: options.EpOpt = False,
    linear_backend: options.LinearBackendOpt = "auto",
    kernel_config: options.KernelConfigOpt = None,
    assume: options.AssumeOpt = [],  # noqa: B006 - typer needs a list
    disable_kernel: options.DisableKernelOpt = [],  # noqa: B006
    quantization: options.QuantizationOpt = None,
    allow_deprecated_quantization: options.AllowDeprecatedOpt = False,
    fmt: options.TableJsonOrMarkdownOpt = TableJsonOrMarkdown.table,
    output_path: options.OutputOpt = None,
    revision: options.RevisionOpt = None,
    token: options.TokenOpt = None,
) -> None:
    """Which layers change scheme, kernel or verdict between two vLLM rule profiles, and the upstream changes why."""
    from fp8check.cli.render_planning import diff_markdown, diff_table
    from fp8check.core.checkpoint.source import open_checkpoint
    from fp8check.core.planning.diff import diff as build_diff
    from fp8check.core.report.documents import diff_document
    from fp8check.core.targets.profiles import select_profile

    with output.errors_reported(model, fmt is TableJsonOrMarkdown.json):
        opts = options.inspect_options(options.platform_option(platform, assume), tp, ep, new, linear_backend,
                                       kernel_config, disable_kernel,
                                       quantization, allow_deprecated_quantization)
        ckpt = open_checkpoint(model, revision=revision, token=token)
        result = build_diff(ckpt, opts, select_profile(old), opts.profile)
    _show(result, fmt, output_path, diff_document, diff_table, diff_markdown)


def _show(result, fmt: TableJsonOrMarkdown, output_path: str | None, document, table, markdown) -> NoReturn:
    """The matrix or diff in --format (--output writes it, Markdown for a table); exit 1 when it fails."""
    output.show(fmt, output_path, document=lambda: document(result), table=lambda console: table(result, console),
                markdown=lambda: markdown(result))
    raise typer.Exit(ci.EXIT_OK if result.ok else ci.EXIT_FAIL)


def register(app: typer.Typer) -> None:
    app.command(epilog=MATRIX_EPILOG)(matrix)
    app.command(epilog=DIFF_EPILOG)(diff)
