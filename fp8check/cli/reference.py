"""The commands that read no checkpoint: `fp8check rules` (the vLLM rule profiles), `schema` (the JSON Schema of
the reports), `kernels` (a platform's kernel registry as a matrix) and `env` (what this host has)."""

from __future__ import annotations

import typer

from fp8check.cli import options, output
from fp8check.cli.options import TableOrJson

KERNELS_EPILOG = ("Exit codes: 0 printed; 2 bad usage (an unknown platform or release). Example: "
                  "fp8check kernels -p h100 --vllm 0.28 --format json")


def rules(fmt: options.TableOrJsonOpt = TableOrJson.table) -> None:
    """List the vLLM rule profiles (select one with --vllm) and the upstream PRs each reflects."""
    if fmt is TableOrJson.json:
        from fp8check.core.report.documents import rules_document

        output.print_document(rules_document(), indent=2)
    else:
        from fp8check.cli.render.reference import rules_table

        rules_table(output.stdout())


def schema() -> None:
    """Print the JSON Schema (draft 2020-12) of `inspect` and `load --format json`, for validating reports in CI."""
    from fp8check.schema import schema_text

    print(schema_text(), end="")


def kernels(
    platform: options.PlatformOpt = "auto",
    vllm: options.VllmOpt = "latest",
    assume: options.AssumeOpt = [],  # noqa: B006 - typer needs a list
    disable_kernel: options.DisableKernelOpt = [],  # noqa: B006
    fmt: options.TableOrJsonOpt = TableOrJson.table,
) -> None:
    """A platform's linear kernel registry as a matrix, with each kernel's own reason for every no.

    Rows are the kernel classes, columns the weight strategy x activation scheme of each quantization."""
    from fp8check.api import routing_options, target
    from fp8check.core.planning.kernel_matrix import kernel_matrix
    from fp8check.kernels.base import RoutingContext

    with output.errors_reported("", fmt is TableOrJson.json):
        opts = routing_options(target(platform, assume), vllm=vllm, disable_kernel=disable_kernel)
    ctx = RoutingContext.of(opts)
    tables = kernel_matrix(ctx)
    if fmt is TableOrJson.json:
        from fp8check.core.report.documents import kernels_document

        output.print_document(kernels_document(ctx, tables))
    else:
        from fp8check.cli.render.reference import kernels_table

        kernels_table(ctx, tables, output.stdout())


def env(fmt: options.TableOrJsonOpt = TableOrJson.table) -> None:
    """What this host has: torch and its devices, Triton, IPEX, vLLM, and the platform --platform auto detects.

    With vLLM, the rule profile matching it. Always exits 0: a missing package is part of the answer."""
    from fp8check.core.targets.envinfo import environment

    probes = environment()
    if fmt is TableOrJson.json:
        from fp8check.core.report.documents import environment_document

        output.print_document(environment_document(probes))
    else:
        from fp8check.cli.render.reference import env_table

        env_table(probes, output.stdout())


def register(app: typer.Typer) -> None:
    app.command()(rules)
    app.command()(schema)
    app.command(epilog=KERNELS_EPILOG)(kernels)
    app.command()(env)
