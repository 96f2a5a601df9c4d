"""fp8check command line.

Usage:
    fp8check inspect ./Qwen3-32B-FP8-block --platform xpu --tp 2
    fp8check load ./Qwen3-32B-FP8-block --platform xpu --tp 2
    fp8check crosscheck ./Qwen3-32B-FP8-block --tp 2        (with vLLM installed)
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
from fp8check.cli import ci, options
from fp8check.cli.options import Format
from fp8check.core.errors import InputError, printable
from fp8check.core.records import LoadReport

app = typer.Typer(
    help="Will this FP8 checkpoint load on this hardware, through which vLLM kernel for every layer?",
    no_args_is_help=True, add_completion=False, rich_markup_mode="rich",
)
EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2


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
    model: options.ModelArg,
    platform: options.PlatformOpt = "auto",
    tp: options.TpOpt = 1,
    ep: options.EpOpt = False,
    vllm: options.VllmOpt = "latest",
    linear_backend: options.LinearBackendOpt = "auto",
    kernel_config: options.KernelConfigOpt = None,
    assume: options.AssumeOpt = [],  # noqa: B006 - typer needs a list
    disable_kernel: options.DisableKernelOpt = [],  # noqa: B006
    fmt: options.FormatOpt = Format.table,
    output: options.OutputOpt = None,
    fail_on: options.FailOnOpt = options.FailOn.error,
    verbose: options.VerboseOpt = False,
    revision: options.RevisionOpt = None,
    token: options.TokenOpt = None,
) -> None:
    """Predict vLLM's scheme and kernel for every linear layer, from config.json and safetensors headers only."""
    from fp8check.core.routing.inspect import inspect_checkpoint
    from fp8check.core.checkpoint.source import open_checkpoint

    try:
        opts = options.inspect_options(options.platform_option(platform, assume), tp, ep, vllm, linear_backend,
                                       kernel_config, disable_kernel)
        ckpt = open_checkpoint(model, revision=revision, token=token)
        report = inspect_checkpoint(ckpt, opts)
        if not report.ok:  # what would work instead, computed by routing the failing layers again
            from fp8check.core.planning.suggest import suggest

            report = report._replace(suggestions=suggest(report, ckpt, opts))
    except InputError as exc:
        _fail_input(str(exc), fmt, model)
    except Exception as exc:  # a bug: still one line, and still one JSON object for --format json
        _internal_error(exc, fmt, model)
    text = _render(ci.as_judged(report, fmt, fail_on), fmt, verbose, ckpt)
    if output:
        _write_output(output, text)
    ci.append_step_summary(report, fail_on)
    raise typer.Exit(ci.exit_code(report, fail_on))


def _render(report, fmt: Format, verbose: bool, ckpt) -> str:
    """Print an inspect or load report in --format and return the text --output writes (Markdown for table)."""
    is_load = isinstance(report, LoadReport)
    if fmt is Format.json:  # the CI path: no rich import
        import json

        from fp8check.core.report import document as documents

        text = json.dumps((documents.load_to_json if is_load else documents.to_json)(report))  # compact: C encoder
    elif fmt is Format.junit:
        from fp8check.core.report import document as documents

        text = (documents.load_to_junit if is_load else documents.to_junit)(report)
    else:
        from fp8check.cli import render

        markdown = render.load_markdown if is_load else render.markdown
        if fmt is Format.table:
            (render.load_table if is_load else render.table)(report, _stdout(), verbose, fetch=ckpt.fetch)
            return markdown(report)
        text = markdown(report)
    print(text)
    return text


def quiet_for(fmt: Format) -> bool:
    """Progress bars only for people: not for machine formats, nor when stdout is not a terminal."""
    return fmt in (Format.json, Format.junit) or not sys.stdout.isatty()


def _internal_error(exc: Exception, fmt: Format, model: str) -> None:
    if os.environ.get("FP8CHECK_DEBUG"):
        raise exc
    _fail_input(f"internal error: {type(exc).__name__}: {exc} (set FP8CHECK_DEBUG=1 for the traceback; "
                "please report it)", fmt, model)


def _write_output(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text + ("" if text.endswith("\n") else "\n"))
    except OSError as exc:
        _stderr().print(f"[red]error:[/red] cannot write {_safe(path)}: {_safe(str(exc.strerror or exc))}")
        raise typer.Exit(EXIT_INPUT) from None


@app.command(help="Stream every layer, check its values, run it through the routed kernel's numerics on a device, "
                  "and compare with an fp32 reference.\n\n`load` runs `inspect` first (the same report): a layer vLLM "
                  "would refuse is reported with vLLM's message and not run. Every other layer is read from "
                  "safetensors one module at a time; its FP8 bytes and scales are checked; its weights are processed "
                  "as vLLM processes them (fused shards, requantize_with_max_scale); and it runs on --device through "
                  "the numerics of the kernel it routes to (weight-only, scaled-mm, block, unquantized). It passes "
                  "when it agrees with an fp32 product of the same quantized operands within the bound of its "
                  "numerics and output dtype.",
             epilog="Exit codes: 0 every selected layer ran and agrees with its fp32 reference; 1 a layer fails "
                    "(vLLM would refuse it, a NaN byte, a zero or infinite scale, an output off its reference); 2 bad "
                    "usage or unreadable input. Examples: fp8check load ./Qwen3-32B-FP8-block -p xpu ; "
                    "fp8check load org/name --layers 'layers\\.0\\.' --device cuda --format json")
def load(
    model: options.ModelArg,
    platform: options.PlatformOpt = None,
    device: Annotated[str, typer.Option("--device", "-d", help="Where the arithmetic runs: auto (xpu, then cuda, then "
                      "cpu), cpu, cuda[:i], xpu[:i]. --platform defaults to this device's platform; when they differ "
                      "every row says 'emulated on <device>'.")] = "auto",
    layers: Annotated[Optional[str], typer.Option("--layers", help="Only the modules whose vLLM name matches this "
                      "regex (re.search), e.g. 'layers\\.0\\.' or 'qkv_proj'; a Hub repo downloads only the shards "
                      "they need.")] = None,
    tokens: Annotated[int, typer.Option("--tokens", min=1, max=1_000_000, help="Activation rows M per layer. 16 "
                      "(decode-sized) costs about as much as reading the weights; a prefill-sized M such as 4096 "
                      "costs ~2*M*N*K flops per layer (on 2 CPU cores ~0.5 s for a 4096x4096 layer).")] = 16,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the random activations (same per module on every "
                    "run).")] = 0,
    rank_timeout: Annotated[float, typer.Option("--rank-timeout", min=1, help="With --tp: seconds any rank may "
                            "keep the others waiting (rendezvous or one module's collective) before every rank is "
                            "stopped and the report names it.")] = 600.0,
    all_experts: Annotated[bool, typer.Option("--all-experts", help="FusedMoE layers: run every expert (default: the "
                           "first and the last of each layer, so a bad value in another expert goes unseen).")] = False,
    against: Annotated[Optional[str], typer.Option("--against", metavar="BASE", help="The unquantized model this "
                       "checkpoint was made from (a folder or a Hub repo id, org/name@rev too): every module's "
                       "dequantized weight and output are compared with BASE's, and BASE requantized with the stored "
                       "scales must give back the stored FP8 codes. Not with --tp.")] = None,
    tp: options.TpOpt = 1,
    ep: options.EpOpt = False,
    vllm: options.VllmOpt = "latest",
    linear_backend: options.LinearBackendOpt = "auto",
    kernel_config: options.KernelConfigOpt = None,
    assume: options.AssumeOpt = [],  # noqa: B006 - typer needs a list
    disable_kernel: options.DisableKernelOpt = [],  # noqa: B006
    fmt: options.FormatOpt = Format.table,
    output: options.OutputOpt = None,
    fail_on: options.FailOnOpt = options.FailOn.error,
    verbose: options.VerboseOpt = False,
    revision: options.RevisionOpt = None,
    token: options.TokenOpt = None,
) -> None:
    """Stream every layer, check its values, run it through the routed kernel's numerics, compare with fp32."""
    try:
        from fp8check.core.load.driver import device_platform, load_checkpoint, resolve_device
        from fp8check.core.records import LoadOptions
    except ModuleNotFoundError as exc:  # torch, safetensors or numpy: `inspect` needs none of them
        _fail_input(f"fp8check load needs {exc.name}, which is not installed: pip install 'fp8check[load]' (install "
                    "torch first, pinned to your accelerator's build, e.g. torch==2.13.0 for the CPU)", fmt, model)
    from fp8check.core.checkpoint.source import open_checkpoint, weights_fetcher

    try:
        torch_device = resolve_device(device)
        target = (options.platform_option(platform, assume) if platform is not None
                  else options.apply_assumptions(device_platform(torch_device), assume))
        opts = LoadOptions(options.inspect_options(target, tp, ep, vllm, linear_backend, kernel_config, disable_kernel),
                           torch_device, layers, tokens, seed, rank_timeout, quiet=quiet_for(fmt),
                           all_experts=all_experts)
        ckpt = open_checkpoint(model, revision=revision, token=token)
        fetch = weights_fetcher(model, revision=revision, token=token, quiet=opts.quiet)
        if against is not None:
            from fp8check.core.load.against import Base

            opts = opts._replace(against=Base.open(against, token=token, quiet=opts.quiet))
        from fp8check.core.progress import module_progress

        with module_progress(opts.quiet or tp > 1) as progress:  # under --tp, rank 0 draws the bar
            report = load_checkpoint(ckpt, fetch, opts, progress)
        if not report.inspect.ok:  # a routing / memory / integrity failure: the same suggestions as inspect
            from fp8check.core.planning.suggest import suggest

            report = report._replace(inspect=report.inspect._replace(
                suggestions=suggest(report.inspect, ckpt, opts.inspect)))
    except InputError as exc:
        _fail_input(str(exc), fmt, model)
    except Exception as exc:  # a bug: still one line, and still one JSON object for --format json
        _internal_error(exc, fmt, model)
    if os.environ.get("RANK", "0") != "0" and "LOCAL_RANK" in os.environ:  # under torchrun: rank 0 reports
        raise typer.Exit(EXIT_OK if report.ok else EXIT_FAIL)
    text = _render(ci.as_judged(report, fmt, fail_on), fmt, verbose, ckpt)
    if output:
        _write_output(output, text)
    ci.append_step_summary(report, fail_on)
    raise typer.Exit(ci.exit_code(report, fail_on))


@app.command(help="Run the installed vLLM's own scheme and kernel selection for every linear layer (real layer "
                  "classes on the meta device: no GPU memory, no weights) and report, layer by layer, whether fp8check "
                  "agrees. On this host's platform (--platform auto) nothing is mocked; for another --platform the "
                  "platform and vLLM's compiled parts are mocked, and every mock is listed.",
             epilog="Exit codes: 0 every layer agrees; 1 a layer differs; 2 bad usage, vLLM not installed, or "
                    "unreadable input. Example: fp8check crosscheck ./Qwen3-32B-FP8-block --tp 2")
def crosscheck(
    model: options.ModelArg,
    platform: options.PlatformOpt = "auto",
    tp: options.TpOpt = 1,
    linear_backend: options.LinearBackendOpt = "auto",
    kernel_config: options.KernelConfigOpt = None,
    assume: options.AssumeOpt = [],  # noqa: B006 - typer needs a list
    disable_kernel: options.DisableKernelOpt = [],  # noqa: B006
    fmt: Annotated[RulesFormat, typer.Option("--format", "-f", help="table or json.")] = RulesFormat.table,
) -> None:
    """Compare fp8check's routing with the installed vLLM's own, layer by layer."""
    import importlib.util
    import json

    from fp8check.core.routing import crosscheck as cross
    from fp8check.core.checkpoint.local import load_json
    from fp8check.core.routing.inspect import inspect_checkpoint
    from fp8check.core.checkpoint.source import open_checkpoint

    try:
        if importlib.util.find_spec("vllm") is None:
            raise InputError("crosscheck runs the installed vLLM's own routing code, and vLLM is not installed in "
                             "this environment: pip install vllm==<version> (fp8check's rules: --vllm on inspect)")
        if not os.path.isdir(model):
            raise InputError(f"{model}: crosscheck takes a local checkpoint folder (download it first: hf download)")
        opts = options.inspect_options(options.platform_option(platform, assume), tp, False, "installed",
                                       linear_backend, kernel_config, disable_kernel)
        report = inspect_checkpoint(open_checkpoint(model), opts)
        config = load_json(os.path.join(model, "config.json"), "config.json")
        config = config.get("text_config", config) | {"quantization_config": config.get("quantization_config")}
        mocks, rows = cross.crosscheck(report, config, host=platform.strip().lower() == "auto")
    except InputError as exc:
        _fail_input(str(exc), Format.json if fmt is RulesFormat.json else Format.table, model)
    except Exception as exc:  # noqa: BLE001 - vLLM's own import or run failed: one line, not a traceback
        _internal_error(exc, Format.json if fmt is RulesFormat.json else Format.table, model)
    agree = all(row.agrees for row in rows)
    if fmt is RulesFormat.json:
        print(json.dumps({"ok": agree, "model": model, "platform": report.platform.label, "tp": tp, "mocks": mocks,
                          "layers": [row._asdict() for row in rows]}))
    else:
        from fp8check.cli import render

        render.crosscheck_table(report, mocks, rows, _stdout())
    raise typer.Exit(EXIT_OK if agree else EXIT_FAIL)


class PlanFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


def _plan_command(build, to_json, table, markdown, model: str, fmt: PlanFormat, output: str | None) -> None:
    """Build a matrix or diff (fp8check.core.planning.matrix / .diff) and print it in --format; --output writes it (Markdown
    for table). Bad input is one line and exit 2, with one JSON object on stdout for --format json."""
    import json

    json_fmt = Format.json if fmt is PlanFormat.json else Format.table
    try:
        result = build()
    except InputError as exc:
        _fail_input(str(exc), json_fmt, model)
    except Exception as exc:  # a bug: still one line, and still one JSON object for --format json
        _internal_error(exc, json_fmt, model)
    if fmt is PlanFormat.table:
        table(result, _stdout())
        text = markdown(result)
    else:
        text = json.dumps(to_json(result)) if fmt is PlanFormat.json else markdown(result)
        print(text)
    if output:
        _write_output(output, text)
    raise typer.Exit(EXIT_OK if result.ok else EXIT_FAIL)


@app.command(epilog="Exit codes: 0 at least one platform x TP cell loads; 1 none does; 2 bad usage or unreadable "
                    "input. Example: fp8check matrix ./Qwen3-32B-FP8-block --platforms xpu,h100,mi300x --tp 1,2,4,8")
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
    fmt: Annotated[PlanFormat, typer.Option("--format", "-f", help="table, json or markdown.")] = PlanFormat.table,
    output: options.OutputOpt = None,
    revision: options.RevisionOpt = None,
    token: options.TokenOpt = None,
) -> None:
    """Where can this checkpoint be served? A grid of platform x TP from one read of the headers."""
    from fp8check.cli.render_plan import matrix_markdown, matrix_table
    from fp8check.core.planning import matrix as planning
    from fp8check.core.checkpoint.source import open_checkpoint

    def build():
        targets = [options.platform_option(p, assume) for p in platforms.split(",") if p.strip()]
        sizes = [options.tp_list_item(t) for t in tps.split(",") if t.strip()]
        if not targets or not sizes:
            raise InputError("--platforms and --tp each need at least one value, e.g. --platforms xpu,h100 --tp 1,2")
        opts = options.inspect_options(targets[0], 1, ep, vllm, linear_backend, kernel_config, disable_kernel)
        return planning.matrix(open_checkpoint(model, revision=revision, token=token), opts, targets, sizes)

    _plan_command(build, planning.to_json, matrix_table, matrix_markdown, model, fmt, output)


@app.command(epilog="Exit codes: 0 no layer that loaded stops loading; 1 one does; 2 bad usage or unreadable input. "
                    "Example: fp8check diff ./Qwen3-32B-FP8-block --from 0.27 --to latest -p xpu --tp 2")
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
    fmt: Annotated[PlanFormat, typer.Option("--format", "-f", help="table, json or markdown.")] = PlanFormat.table,
    output: options.OutputOpt = None,
    revision: options.RevisionOpt = None,
    token: options.TokenOpt = None,
) -> None:
    """Which layers change scheme, kernel or verdict between two vLLM rule profiles, and the upstream changes why."""
    from fp8check.cli.render_plan import diff_markdown, diff_table
    from fp8check.core.planning import diff as planning
    from fp8check.core.routing.profiles import select_profile
    from fp8check.core.checkpoint.source import open_checkpoint

    def build():
        opts = options.inspect_options(options.platform_option(platform, assume), tp, ep, new, linear_backend,
                                       kernel_config, disable_kernel)
        ckpt = open_checkpoint(model, revision=revision, token=token)
        return planning.diff(ckpt, opts, select_profile(old), opts.profile)

    _plan_command(build, planning.to_json, diff_table, diff_markdown, model, fmt, output)


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


@app.command()
def schema() -> None:
    """Print the JSON Schema (draft 2020-12) of `inspect` and `load --format json`, for validating reports in CI."""
    from fp8check.schema import schema_text

    print(schema_text(), end="")


@app.command(epilog="Exit codes: 0 printed; 2 bad usage (an unknown platform or release). Example: "
                    "fp8check kernels -p h100 --vllm 0.28 --format json")
def kernels(
    platform: options.PlatformOpt = "auto",
    vllm: options.VllmOpt = "latest",
    assume: options.AssumeOpt = [],  # noqa: B006 - typer needs a list
    disable_kernel: options.DisableKernelOpt = [],  # noqa: B006
    fmt: Annotated[RulesFormat, typer.Option("--format", "-f", help="table or json.")] = RulesFormat.table,
) -> None:
    """The linear kernel registry of a platform as a matrix: kernel x weight strategy x activation scheme, with
    each kernel's own reason for every no."""
    from fp8check.core.planning.kernel_matrix import kernel_matrix, matrix_json
    from fp8check.kernels.base import RoutingContext

    try:
        opts = options.inspect_options(options.platform_option(platform, assume), 1, False, vllm, "auto", None,
                                       disable_kernel)
    except InputError as exc:
        _fail_input(str(exc), Format.json if fmt is RulesFormat.json else Format.table, "")
    ctx = RoutingContext(opts.platform, opts.profile, frozenset(opts.disabled_kernels))
    tables = kernel_matrix(ctx)
    if fmt is RulesFormat.json:
        import json

        print(json.dumps(matrix_json(ctx, tables)))
    else:
        from fp8check.cli.render_host import kernels_table

        kernels_table(ctx, tables, _stdout())


@app.command()
def env(
    fmt: Annotated[RulesFormat, typer.Option("--format", "-f", help="table or json.")] = RulesFormat.table,
) -> None:
    """What this host has: torch and its devices, Triton, IPEX, vLLM and its matching rule profile, and the platform
    --platform auto detects. Always exits 0: a missing package is part of the answer."""
    from fp8check.core.routing.envinfo import environment, environment_json

    probes = environment()
    if fmt is RulesFormat.json:
        import json

        print(json.dumps(environment_json(probes)))
    else:
        from fp8check.cli.render_host import env_table

        env_table(probes, _stdout())


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
