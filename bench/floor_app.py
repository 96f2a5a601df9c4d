"""The floor for bench/inspect.py: a typer app with fp8check's commands and options that does nothing."""

import os
import sys

# This file sits next to bench/inspect.py, whose name shadows the stdlib's `inspect` for scripts run from bench/.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

from typing import Annotated, Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True)


@app.command()
def inspect(
    model: Annotated[str, typer.Argument()],
    platform: Annotated[str, typer.Option("--platform", "-p")] = "auto",
    tp: Annotated[int, typer.Option("--tp", min=1)] = 1,
    vllm: Annotated[str, typer.Option("--vllm")] = "latest",
    linear_backend: Annotated[str, typer.Option("--linear-backend")] = "auto",
    kernel_config: Annotated[Optional[str], typer.Option("--kernel-config")] = None,
    assume: Annotated[list[str], typer.Option("--assume")] = [],  # noqa: B006
    disable_kernel: Annotated[list[str], typer.Option("--disable-kernel")] = [],  # noqa: B006
    fmt: Annotated[str, typer.Option("--format", "-f")] = "table",
    output: Annotated[Optional[str], typer.Option("--output", "-o")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v")] = False,
) -> None:
    print("{}")


@app.command()
def rules(fmt: Annotated[str, typer.Option("--format", "-f")] = "table") -> None:
    print("{}")


if __name__ == "__main__":
    app()
