"""fp8check's command line: builds the typer app and registers every command family's commands; `main` is the
console script (pyproject.toml: fp8check.cli.app:main) and `python -m fp8check`.

Usage:
    fp8check inspect ./Qwen3-32B-FP8-block --platform xpu --tp 2
    fp8check load ./Qwen3-32B-FP8-block --platform xpu --tp 2
    fp8check crosscheck ./Qwen3-32B-FP8-block --tp 2        (with vLLM installed)
    fp8check inspect ./model --platform h100 --format json
    fp8check rules
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from fp8check import __version__
from fp8check.cli import inspect, load, output, planning, reference

app = typer.Typer(
    help="Will this FP8 checkpoint load on this hardware, through which vLLM kernel for every layer?",
    no_args_is_help=True, add_completion=False, rich_markup_mode="rich",
)
for family in (inspect, load, planning, reference):  # the order `fp8check --help` lists them in
    family.register(app)


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
        output.crashed(exc)
