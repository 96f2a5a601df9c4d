"""fp8check command line.

Usage:
    fp8check inspect ./Qwen3-32B-FP8-block --platform xpu --tp 2
    fp8check inspect ./model --platform h100 --format json
    fp8check rules
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from typing import Annotated, Optional

import typer

from fp8check import __version__
from fp8check.core.errors import InputError, printable

app = typer.Typer(
    help="Will this FP8 checkpoint load on this hardware, through which vLLM kernel for every layer?",
    no_args_is_help=True, add_completion=False, rich_markup_mode="rich",
)
EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2


class Format(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"
    junit = "junit"


class RulesFormat(str, Enum):
    table = "table"
    json = "json"


def _stdout():
    """Wide when piped or captured (CI logs), the terminal's width otherwise. rich is imported only to render."""
    from rich.console import Console

    return Console(highlight=False, width=None if sys.stdout.isatty() else 200)


def _stderr():
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def _safe(text: str, limit: int = 200) -> str:
    """Untrusted text (file and tensor names) for rich: control characters escaped, [markup] inert."""
    from rich.markup import escape

    return escape(printable(text, limit))


def _fail_input(message: str, fmt: Format, model: str) -> None:
    """Exit 2 with one line on stderr; JSON callers still get exactly one JSON object on stdout."""
    _stderr().print(f"[red]error:[/red] {_safe(message, 4000)}")
    if fmt is Format.json:
        import json

        print(json.dumps({"schema_version": 1, "ok": False, "model": model, "errors": [message], "layers": []}))
    raise typer.Exit(EXIT_INPUT)


@app.command(epilog="Exit codes: 0 every layer routes and checks pass; 1 some layer would fail; 2 bad usage or "
                    "unreadable input. Examples: fp8check inspect ./Qwen3-32B-FP8-block -p xpu --tp 2 ; "
                    "fp8check inspect ./model -p h100 --vllm 0.27 --format json")
def inspect(
    model: Annotated[str, typer.Argument(help="Checkpoint folder (config.json + *.safetensors), or a Hugging Face "
                     "repo id org/name[@revision] (headers only; HF_HUB_OFFLINE=1 reads the local cache).")],
    platform: Annotated[str, typer.Option("--platform", "-p", help="Target: xpu, cpu, cuda:<cc> (cuda:90), "
                        "rocm:<gfx> (rocm:gfx942), an alias (h100, a100, l40s, b200, mi300x, arc-b580, ...) or auto "
                        "(this host, detected without torch).")] = "auto",
    tp: Annotated[int, typer.Option("--tp", min=1, max=1024, help="Tensor-parallel size to check.")] = 1,
    vllm: Annotated[str, typer.Option("--vllm", help="vLLM rule profile: latest, or a version such as 0.27.1 "
                    "(see `fp8check rules`).")] = "latest",
    linear_backend: Annotated[str, typer.Option("--linear-backend", help="As vLLM's --linear-backend: auto, xpu, "
                              "torch, cutlass, marlin, triton, deep_gemm, ...")] = "auto",
    kernel_config: Annotated[Optional[str], typer.Option("--kernel-config", help="As vLLM's --kernel-config JSON, "
                             "e.g. '{\"linear_backend_per_quant\": {\"fp8_block_w8a8\": \"triton\"}}'.")] = None,
    assume: Annotated[list[str], typer.Option("--assume", help="Override an assumption about the serving "
                      "environment, KEY=VALUE: deep_gemm=yes, flashinfer=no, humming=yes, aiter=yes, cpu_amx=no, "
                      "cuda_version=12.8, ... (shown with --verbose).")] = [],  # noqa: B006 - typer needs a list
    disable_kernel: Annotated[list[str], typer.Option("--disable-kernel", help="Kernel class to treat as disabled, "
                              "like VLLM_DISABLED_KERNELS (which is also read from the environment).")] = [],  # noqa: B006
    fmt: Annotated[Format, typer.Option("--format", "-f", help="table (default), json (one object, schema_version 1), "
                   "markdown (a CI summary) or junit (JUnit XML, one testcase per module).")] = Format.table,
    output: Annotated[Optional[str], typer.Option("--output", "-o", help="Also write the report (in --format) to "
                      "this file.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show every rejected kernel with vLLM's reason, "
                       "warnings, notes and assumptions.")] = False,
    revision: Annotated[Optional[str], typer.Option("--revision", help="Branch, tag or commit of a Hub repo id "
                        "(same as org/name@REV).")] = None,
    token: Annotated[Optional[str], typer.Option("--token", help="Hugging Face token for gated or private repos "
                     "(default: HF_TOKEN, then the saved login). Sent only to the Hub; never printed.")] = None,
) -> None:
    """Predict vLLM's scheme and kernel for every linear layer, from config.json and safetensors headers only."""
    from fp8check.cli import options
    from fp8check.core.inspect import InspectOptions, inspect_checkpoint
    from fp8check.core.profiles import select_profile
    from fp8check.core.source import open_checkpoint

    try:
        opts = InspectOptions(
            platform=options.platform_option(platform, assume), profile=select_profile(vllm), tp=tp,
            backend=options.backend_option(linear_backend, kernel_config),
            disabled_kernels=options.disabled_option(disable_kernel),
        )
        ckpt = open_checkpoint(model, revision=revision, token=token)
        report = inspect_checkpoint(ckpt, opts)
    except InputError as exc:
        _fail_input(str(exc), fmt, model)
    except Exception as exc:  # a bug: still one line, and still one JSON object for --format json
        if os.environ.get("FP8CHECK_DEBUG"):
            raise
        _fail_input(f"internal error: {type(exc).__name__}: {exc} (set FP8CHECK_DEBUG=1 for the traceback; "
                    "please report it)", fmt, model)
    if fmt is Format.json:  # the CI path: no rich import
        import json

        from fp8check.core.report import to_json

        text = json.dumps(to_json(report))  # compact: json's C encoder (indent= would use the Python one)
        print(text)
    elif fmt is Format.junit:
        from fp8check.core.report import to_junit

        text = to_junit(report)
        print(text)
    else:
        from fp8check.cli import render

        if fmt is Format.markdown:
            text = render.markdown(report)
            print(text)
        else:
            render.table(report, _stdout(), verbose, fetch=ckpt.fetch)
            text = render.markdown(report)
    if output:
        _write_output(output, text)
    raise typer.Exit(EXIT_OK if report.ok else EXIT_FAIL)


def _write_output(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text + ("" if text.endswith("\n") else "\n"))
    except OSError as exc:
        _stderr().print(f"[red]error:[/red] cannot write {_safe(path)}: {_safe(str(exc.strerror or exc))}")
        raise typer.Exit(EXIT_INPUT) from None


@app.command()
def rules(
    fmt: Annotated[RulesFormat, typer.Option("--format", "-f", help="table or json.")] = RulesFormat.table,
) -> None:
    """List the vLLM rule profiles (select one with --vllm) and the upstream PRs each reflects."""
    from fp8check.cli import render

    if fmt is RulesFormat.json:
        print(render.rules_json())
    else:
        render.rules_table(_stdout())


def _version(value: bool) -> None:
    if value:
        print(f"fp8check {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                       help="Print the version and exit.")] = False,
) -> None:
    """Will this FP8 checkpoint load on this hardware, through which vLLM kernel for every layer?"""


def main() -> None:
    """Entry point: known errors were already turned into exit 2; anything else is a bug, shown in one line."""
    try:
        app(prog_name="fp8check")
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - last line of defence: no traceback for users
        if os.environ.get("FP8CHECK_DEBUG"):
            raise
        _stderr().print(f"[red]internal error:[/red] {type(exc).__name__}: {_safe(str(exc), 500)} "
                        "(set FP8CHECK_DEBUG=1 for the traceback; please report it)")
        sys.exit(EXIT_INPUT)
