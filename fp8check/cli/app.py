"""fp8check's command line: builds the typer app from the command families (one module of fp8check.cli each, which
registers its commands); `run` is the process (fp8check.cli.entry: the console script and `python -m
fp8check`), `main` the command line itself. A command line that names a command builds only that command's family
(`app_for`): the other families' modules are not imported and their options not built. `app`, every family, is
built when first asked for (tests, documentation).

Usage:
    fp8check inspect ./Qwen3-32B-FP8-block --platform xpu --tp 2
    fp8check load ./Qwen3-32B-FP8-block --platform xpu --tp 2
    fp8check crosscheck ./Qwen3-32B-FP8-block --tp 2        (with vLLM installed)
    fp8check inspect ./model --platform h100 --format json
    fp8check rules
    fp8check known-issues --format json
    fp8check --install-completion                           (bash, zsh, fish or PowerShell)
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
from typing import Annotated, NoReturn

import typer
from typer.core import TyperCommand, TyperGroup

from fp8check.cli import output
from fp8check.version import __version__

# Value names in --help, by parameter; each option's help says what it takes.
METAVARS = {"platform": "TARGET", "platforms": "TARGETS", "device": "DEVICE", "layers": "REGEX", "tokens": "N",
            "seed": "N", "rank_timeout": "SECONDS", "tp": "N", "tps": "SIZES", "linear_backend": "BACKEND",
            "kernel_config": "JSON", "quantization": "METHOD", "fmt": "FORMAT", "output_path": "PATH",
            "fail_on": "WHEN", "revision": "REV", "token": "TOKEN"}


class _Help:
    """--help as a person reads it: a flag shows no value type (typer would print `--ep <bool>`), and an argument
    its metavar in the usage line (MODEL, not `{model}`)."""

    def get_params(self, ctx):
        params = super().get_params(ctx)  # type: ignore[misc]  # a mixin: click's Command is beside it in the MRO
        for param in params:
            if param.metavar is not None or param.param_type_name != "option":
                continue
            # A short value name keeps --help's columns narrow enough for every flag and its help to fit 80
            # columns (typer would print `<int range> [1<=x<=1024]`, `<table|json|markdown|junit>`).
            param.metavar = "" if getattr(param, "is_flag", False) else METAVARS.get(param.name, param.name.upper())
        return params

    def collect_usage_pieces(self, ctx) -> list[str]:
        metavar = getattr(self, "options_metavar", None)  # click's Command sets it; typer's stubs do not say so
        pieces = [metavar] if metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                name = param.metavar or param.name.upper()
                pieces.append(name if param.required else f"[{name}]")
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces


class Command(_Help, TyperCommand):
    """Every fp8check command. Its work starts with the cycle collector running (see fp8check.cli.entry)."""

    def invoke(self, ctx):
        if _startup["collector_paused"]:
            _startup["collector_paused"] = False
            gc.freeze()  # the modules and objects startup built: no later collection walks them
            gc.enable()
        return super().invoke(ctx)


# Set by run(collector_paused=True): the entry paused the cycle collector, and the command's invoke resumes it.
_startup = {"collector_paused": False}


class Group(_Help, TyperGroup):
    """`fp8check` itself. A usage error (an unknown option, a value out of range) is one line on stderr and exit 2,
    as every other bad input is, not typer's framed panel."""

    def collect_usage_pieces(self, ctx) -> list[str]:
        return [*super().collect_usage_pieces(ctx), self.subcommand_metavar]

    def main(self, args=None, prog_name=None, complete_var=None,  # type: ignore[override]  # click's overloads
             standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except KeyboardInterrupt:  # Ctrl-C: one line, the shell's 128 + SIGINT, no traceback
            output.stderr().print("fp8check: interrupted")
            sys.exit(130)
        except typer.Abort as exc:
            if isinstance(exc.__context__, KeyboardInterrupt):
                output.stderr().print("fp8check: interrupted")
                sys.exit(130)
            sys.exit(1)
        except typer.TyperException as exc:  # typer's click errors: UsageError (exit 2) and its kin
            code = getattr(exc, "exit_code", 1)
            ctx = getattr(exc, "ctx", None)
            hint = f" (see {ctx.command_path} --help)" if code == 2 and ctx is not None else ""
            message = output.usage_message(exc)
            if message:  # `fp8check` alone printed its help and has nothing to add
                output.stderr().print(f"[red]error:[/red] {output.safe(message, 4000)}{hint}")
            sys.exit(code)
        sys.exit(code or 0)


# Each command family's module (fp8check.cli.<family>) and the commands its register() adds, in the order
# `fp8check --help` lists them (tests/test_cli.py checks the names against what each module registers).
FAMILIES: dict[str, tuple[str, ...]] = {
    "inspect": ("inspect",),
    "load": ("load", "crosscheck"),
    "planning": ("matrix", "diff"),
    "reference": ("rules", "schema", "kernels", "env"),
    "known_issues": ("known-issues",),
}


def build_app(families: tuple[str, ...] = tuple(FAMILIES)) -> typer.Typer:
    """The typer app with these families' commands (importing their modules) under fp8check's group."""
    app = typer.Typer(
        cls=Group, help="Will this FP8 checkpoint load on this hardware, through which vLLM kernel for every layer?",
        no_args_is_help=True, rich_markup_mode="rich",
    )
    app.callback()(_main)
    for family in families:
        importlib.import_module(f"fp8check.cli.{family}").register(app)
    for command in app.registered_commands:
        command.cls = Command
    return app


def app_for(args: list[str]) -> typer.Typer:
    """The app a command line needs: only the family of the command it starts with; every family for anything else
    (`--help`, `--version`, no command, a typo, shell completion)."""
    family = next((f for f, commands in FAMILIES.items() if args and args[0] in commands), None)
    return build_app((family,) if family else tuple(FAMILIES))


def __getattr__(name: str):
    if name == "app":  # every family, built once when first asked for
        app = globals()["app"] = build_app()
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "app"})


def _version(value: bool) -> None:
    if value:
        print(f"fp8check {__version__}")
        raise typer.Exit()


def _main(
    version: Annotated[bool, typer.Option("--version", "-V", callback=_version, is_eager=True,
                       help="Print the version and exit.")] = False,
) -> None:
    """Will this FP8 checkpoint load on this hardware, through which vLLM kernel for every layer?"""


def main() -> None:
    """Entry point: known errors were already turned into exit 2; anything else is a bug, shown in one line. A
    reader that closes stdout early (`| head`) changes nothing: the exit code stays the verdict."""
    sys.stdout = stdout = _ReaderSafeStdout(sys.stdout)
    try:
        app_for(sys.argv[1:])(prog_name="fp8check")
    except SystemExit:
        stdout.flush()  # now, not at interpreter exit, where a closed pipe would print a traceback-like warning
        raise
    except Exception as exc:  # noqa: BLE001 - last line of defence: no traceback for users
        if os.environ.get("FP8CHECK_DEBUG"):
            raise
        output.crashed(exc)


def run_process(collector_paused: bool = False) -> NoReturn:
    """The process (fp8check.cli.entry): `main`, then the process ends at once, with main's exit code, once
    atexit's handlers have run and the output is flushed. What os._exit skips is only the interpreter's own
    teardown, which changes nothing a run wrote: after `load` it takes ~0.5 s (torch's modules and objects, freed
    one by one), after a giant checkpoint's `inspect` tens of ms (its ~100k header records). `collector_paused`:
    the entry paused the cycle collector; the command resumes it as its work starts."""
    _startup["collector_paused"] = collector_paused
    try:
        main()
        code = 0
    except SystemExit as exc:  # as sys.exit ends: None is 0, an int is the code, anything else is printed, 1
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)


class _ReaderSafeStdout:
    """stdout whose reader may go away (`fp8check inspect -f json | head -c 10`). A write or flush into a closed
    pipe raises BrokenPipeError, which typer turns into exit 1, the code for "a layer would fail". Here the rest
    of the output goes to devnull instead (stdout's descriptor is pointed there, as
    https://docs.python.org/3/library/signal.html#note-on-sigpipe recommends) and the command ends as it would
    have, with its own exit code."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._to_devnull()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_devnull()
            self._stream.flush()  # what was buffered, into devnull

    def _to_devnull(self) -> None:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)

    def __getattr__(self, name: str):  # isatty, fileno, encoding, ... as the real stdout
        return getattr(self._stream, name)
