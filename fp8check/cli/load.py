"""`fp8check load` (every layer streamed and run through its kernel's numerics, against fp32) and `fp8check
crosscheck` (fp8check's routing against the installed vLLM's own). torch and vLLM are imported only when these run."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, NamedTuple, Optional

import typer

from fp8check.cli import ci, options, output
from fp8check.cli.options import OutputFormat, TableOrJson
from fp8check.core.errors import InputError

if TYPE_CHECKING:  # annotations only (crosscheck imports vLLM's code lazily)
    from fp8check.core.records import InspectReport
    from fp8check.core.routing.crosscheck import LayerAgreement
    from fp8check.core.targets.profiles import NewerRelease

LOAD_HELP = ("Stream every layer, check its values, run it through the routed kernel's numerics on a device, and "
             "compare with an fp32 reference.\n\n`load` runs `inspect` first (the same report): a layer vLLM would "
             "refuse is reported with vLLM's message and not run. Every other layer is read from safetensors one "
             "module at a time; its FP8 bytes and scales are checked; its weights are processed as vLLM processes "
             "them (fused shards, requantize_with_max_scale); and it runs on --device through the numerics of the "
             "kernel it routes to (weight-only, scaled-mm, block, unquantized). It passes when it agrees with an fp32 "
             "product of the same quantized operands within the bound of its numerics and output dtype.")
LOAD_EPILOG = ("Exit codes: 0 every selected layer ran and agrees with its fp32 reference; 1 a layer fails (vLLM would "
               "refuse it, a NaN byte, a zero or infinite scale, an output off its reference; or, under --fail-on, a "
               "module not judged or a warning); 2 bad usage or "
               "unreadable input. Examples: fp8check load ./Qwen3-32B-FP8-block -p xpu ; "
               "fp8check load org/name --layers 'layers\\.0\\.' --device cuda --format json")
CROSSCHECK_HELP = ("Compare fp8check's routing with the installed vLLM's own, layer by layer.\n\n"
                   "vLLM's real layer classes are built on the meta device (no GPU memory, no weights) with its own "
                   "scheme and kernel selection. On this host's platform (--platform auto) nothing is mocked; for "
                   "another --platform the platform and vLLM's compiled parts are mocked, and every mock is listed. "
                   "A Hub repo id downloads only its *.json files (vLLM's config code reads nothing else); an "
                   "installed vLLM newer than every fp8check profile is compared with the newest profile's rules, "
                   "and said so.")
CROSSCHECK_EPILOG = ("Exit codes: 0 every layer agrees; 1 a layer differs; 2 bad usage, vLLM not installed, or "
                     "unreadable input. Examples: fp8check crosscheck ./Qwen3-32B-FP8-block --tp 2 ; "
                     "fp8check crosscheck org/name -p h100 --format json")


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
    fmt: options.OutputFormatOpt = OutputFormat.table,
    output_path: options.OutputOpt = None,
    fail_on: options.FailOnOpt = options.FailOn.error,
    verbose: options.VerboseOpt = False,
    wide: options.WideOpt = False,
    revision: options.RevisionOpt = None,
    token: options.TokenOpt = None,
) -> None:
    """Stream every layer, check its values, run it through the routed kernel's numerics, compare with fp32."""
    from fp8check.api import load_with_checkpoint
    from fp8check.core.load.ranks import reuse_freed_memory

    reuse_freed_memory()  # this process is the CLI's: its allocator is ours to tune

    with output.errors_reported(model, fmt is OutputFormat.json):  # every argument is checked before torch is imported
        report, ckpt = load_with_checkpoint(
            model, platform=platform, device=device, layers=layers, tokens=tokens, seed=seed,
            rank_timeout=rank_timeout, all_experts=all_experts, against=against, tp=tp, ep=ep, vllm=vllm,
            linear_backend=linear_backend, kernel_config=kernel_config, assume=assume, disable_kernel=disable_kernel,
            quantization=quantization, allow_deprecated_quantization=allow_deprecated_quantization,
            kv_cache_dtype=kv_cache_dtype, kv_cache_dtype_skip_layers=kv_cache_dtype_skip_layers,
            attention_backend=attention_backend, moe_backend=moe_backend, revision=revision, token=token,
            progress=not output.quiet(fmt))
    if os.environ.get("RANK", "0") != "0" and "LOCAL_RANK" in os.environ:  # under torchrun: rank 0 reports
        raise typer.Exit(ci.EXIT_OK if report.ok else ci.EXIT_FAIL)
    output.unmatched_skip_layers(report, kv_cache_dtype_skip_layers)
    output.finish_report(report, fmt, fail_on, verbose, ckpt.fetch, output_path, wide=wide)


def crosscheck(
    model: options.ModelArg,
    platform: options.PlatformOpt = "auto",
    tp: options.TpOpt = 1,
    linear_backend: options.LinearBackendOpt = "auto",
    kernel_config: options.KernelConfigOpt = None,
    assume: options.AssumeOpt = [],  # noqa: B006 - typer needs a list
    disable_kernel: options.DisableKernelOpt = [],  # noqa: B006
    quantization: options.QuantizationOpt = None,
    allow_deprecated_quantization: options.AllowDeprecatedOpt = False,
    fmt: options.TableOrJsonOpt = TableOrJson.table,
    revision: options.RevisionOpt = None,
    token: options.TokenOpt = None,
) -> None:
    """Compare fp8check's routing with the installed vLLM's own, layer by layer."""
    as_json = fmt is TableOrJson.json
    with output.errors_reported(model, as_json):  # vLLM's own import or run failing included
        result = run_crosscheck(model, platform or "auto", tp=tp, linear_backend=linear_backend, kernel_config=kernel_config,
                                assume=assume, disable_kernel=disable_kernel, quantization=quantization,
                                allow_deprecated_quantization=allow_deprecated_quantization, revision=revision,
                                token=token, quiet=as_json)
    show_crosscheck(model, result, as_json)
    raise typer.Exit(ci.EXIT_OK if all(row.agrees for row in result.rows) else ci.EXIT_FAIL)


class CrosscheckResult(NamedTuple):
    report: InspectReport  # fp8check's
    mocks: dict           # what the vLLM side stood in for, with its risk
    rows: list[LayerAgreement]  # the front door, then each layer
    stand_in: str | None  # the installed vLLM release no profile speaks for (newest profile's rules on our side)


def run_crosscheck(model: str, platform: str, *, revision: str | None = None, token: str | None = None,
                   quiet: bool = False, **routing) -> CrosscheckResult:
    """The installed vLLM's own selection for every linear layer of MODEL (a folder, or a Hub repo id: only its
    *.json files are downloaded for vLLM and its headers read for fp8check), beside fp8check's with the installed
    release's profile, or the newest profile standing in for a newer vLLM."""
    import importlib.util

    from fp8check.api import routing_options, target
    from fp8check.core.checkpoint.local import load_json
    from fp8check.core.checkpoint.source import open_checkpoint
    from fp8check.core.routing import crosscheck as cross
    from fp8check.core.routing.inspect import inspect_checkpoint
    from fp8check.core.targets.profiles import NewerRelease

    if importlib.util.find_spec("vllm") is None:
        raise InputError("crosscheck runs the installed vLLM's own routing code, and vLLM is not installed "
                         "in this environment: pip install vllm==<version> (fp8check's rules: --vllm on "
                         "inspect)")
    chosen = target(platform, routing.pop("assume"))
    try:
        opts, stand_in = routing_options(chosen, vllm="installed", **routing), None
    except NewerRelease as exc:
        opts, stand_in = routing_options(chosen, vllm="latest", **routing), exc.version
    ckpt = open_checkpoint(model, revision, token)
    if os.path.isdir(model):
        folder = model
    else:
        from fp8check.core.checkpoint.hub import download_json

        folder = download_json(model, revision, token, quiet)
    report = inspect_checkpoint(ckpt, opts)
    config = load_json(os.path.join(folder, "config.json"), "config.json")
    assert isinstance(config, dict)  # open_checkpoint refused any other config.json
    # A vision-language config's text model (InternVL's remote-code configs name it llm_config: local.py's reading).
    text = config.get("text_config", config.get("llm_config"))
    config = text if isinstance(text, dict) else config
    checkpoint = {"folder": folder, "quantization": opts.quantization,
                  "allow_deprecated": opts.allow_deprecated_quantization}
    mocks, rows = cross.crosscheck(report, config, platform.strip().lower() == "auto", checkpoint,
                                   report.front_door_errors[0] if report.front_door_errors else None)
    return CrosscheckResult(report, mocks, rows, stand_in)


def show_crosscheck(model: str, result: CrosscheckResult, as_json: bool) -> None:
    if as_json:
        from fp8check.core.report.documents import crosscheck_document

        output.print_document(crosscheck_document(model, *result))
    else:
        from fp8check.cli.render.load import crosscheck_table

        crosscheck_table(*result, output.stdout())


def installed_vllm_answer(exc: NewerRelease, model: str, as_json: bool, **crosscheck_options) -> CrosscheckResult:
    """`inspect` when the installed vLLM is newer than every rule profile (exc, a NewerRelease): vLLM's own code
    answers (crosscheck), said in one line. Where vLLM cannot be imported, the one-line refusal (exc)."""
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        raise exc
    output.stderr().print(f"note: {output.safe(str(exc))}; answering with vLLM {exc.version}'s own routing code "
                          "(fp8check crosscheck: linear layers only)")
    return run_crosscheck(model, quiet=as_json, **crosscheck_options)


def register(app: typer.Typer) -> None:
    app.command(help=LOAD_HELP, epilog=LOAD_EPILOG)(load)
    app.command(help=CROSSCHECK_HELP, epilog=CROSSCHECK_EPILOG)(crosscheck)
