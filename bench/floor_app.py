"""The floor for bench/inspect.py and bench/giants.py: a typer app with fp8check's commands and options.

By default it does nothing (bench/inspect.py). With FLOOR_READ_HEADERS=1 (bench/giants.py) its inspect reads and
json-parses config.json, the index and every shard header of the folder, the least any header-only tool must do,
and prints the counts. With FLOOR_HARD_EXIT=1 it ends as fp8check's console script does (fp8check.cli.app.run_process):
atexit's handlers, then os._exit, skipping the interpreter's teardown (so that a ratio can leave that saving out).
"""

import os
import sys

# This file sits next to bench/inspect.py, whose name shadows the stdlib's `inspect` for scripts run from bench/.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import json
import struct
from typing import Annotated, Optional

import typer


def read_headers(folder: str) -> str:
    """json.loads of config.json, the index and each shard's header (8-byte length + JSON); nothing is checked."""
    with open(os.path.join(folder, "config.json"), "rb") as fh:
        json.loads(fh.read())
    index = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index, "rb") as fh:
            shards = sorted(set(json.loads(fh.read())["weight_map"].values()))
    else:
        shards = ["model.safetensors"]
    tensors = 0
    for shard in shards:
        with open(os.path.join(folder, shard), "rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))
            tensors += len(json.loads(fh.read(n))) - 1  # minus __metadata__
    return json.dumps({"shards": len(shards), "tensors": tensors})


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
    print(read_headers(model) if os.environ.get("FLOOR_READ_HEADERS") == "1" else "{}")


@app.command()
def rules(fmt: Annotated[str, typer.Option("--format", "-f")] = "table") -> None:
    print("{}")


if __name__ == "__main__":
    if os.environ.get("FLOOR_HARD_EXIT") != "1":
        app()
    import atexit

    try:
        app()
    except SystemExit as exc:  # typer's standalone mode always ends in sys.exit
        atexit._run_exitfuncs()
        sys.stdout.flush()
        os._exit(exc.code or 0)
