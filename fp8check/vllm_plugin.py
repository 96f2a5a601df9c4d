"""fp8check as a vLLM general plugin (`pip install 'fp8check[vllm]'`, entry point `fp8check` in the group
`vllm.general_plugins`): every layer's verdict in vLLM's log once the engine config is built, before any engine
process is spawned or any weight is downloaded.

vLLM calls `register()` in its front process while it parses arguments (EngineArgs.__post_init__ / add_cli_args),
and again in the engine-core and every worker process (vllm/plugins/__init__.py). In the front process it wraps
`EngineArgs.create_engine_config`, through which `vllm serve`, headless and multi-API-server runs and `LLM(...)`
all build their VllmConfig; once the original returns, `check` maps that config to fp8check's inputs (the platform
as vLLM's `current_platform` sees it, TP / EP, `--quantization`, the KV cache dtype, the linear / attention
backends, the model, revision and token, the installed release) and logs fp8check's report through vLLM's logger.

FP8CHECK_VLLM: warn (default: log, never block), strict (exit 1 before the engine starts when a layer fails), off.
FP8CHECK_VLLM_FORMAT: table (default) or json (the report's JSON document, one line). Nothing here may break vLLM:
an exception of fp8check's own is one log line and vLLM goes on. The import and `register()` import neither typer,
rich nor torch; the check imports fp8check's inspect path and, to draw the table, rich.
"""

from __future__ import annotations

import logging
import os
import sys

MODE_ENV, FORMAT_ENV = "FP8CHECK_VLLM", "FP8CHECK_VLLM_FORMAT"
MODES = ("warn", "strict", "off")
FORMATS = ("table", "json")
# multiprocessing names of vLLM's engine-core (EngineCore, EngineCore_DP<i>) and worker (VllmWorker-<rank>)
# processes: they load the plugins too, and never build an engine config.
CHILD_PROCESSES = ("EngineCore", "VllmWorker")
ARG_UTILS = "vllm.engine.arg_utils"
WRAPPED = "__fp8check_wrapped__"
TABLE_WIDTH = 120

# A child of vLLM's "vllm" logger, so that vLLM's handler, format and VLLM_LOGGING_LEVEL apply to it.
logger = logging.getLogger("vllm.fp8check")


def register() -> None:
    """vLLM's `vllm.general_plugins` entry point: wrap EngineArgs.create_engine_config once, in the front process
    only. Idempotent; never raises."""
    try:
        import multiprocessing

        if multiprocessing.current_process().name.startswith(CHILD_PROCESSES) or mode() == "off":
            return
        arg_utils = sys.modules.get(ARG_UTILS)
        if arg_utils is None:  # the plugins were loaded by another path than EngineArgs (ModelRegistry)
            import importlib

            arg_utils = importlib.import_module(ARG_UTILS)
        engine_args = arg_utils.EngineArgs
        if not getattr(engine_args.create_engine_config, WRAPPED, False):
            engine_args.create_engine_config = wrap(engine_args.create_engine_config)
    except Exception as exc:  # noqa: BLE001 - a plugin's exception would stop vLLM
        logger.warning("fp8check: plugin not registered (%s: %s); vLLM goes on without it", type(exc).__name__, exc)


def wrap(original):
    """`original` (EngineArgs.create_engine_config, whatever its signature), then `check` on what it returns."""
    import functools

    @functools.wraps(original)
    def create_engine_config(self, *args, **kwargs):
        config = original(self, *args, **kwargs)
        check(config, self)
        return config

    setattr(create_engine_config, WRAPPED, True)
    return create_engine_config


def mode() -> str:
    value = os.environ.get(MODE_ENV, "warn").strip().lower() or "warn"
    if value not in MODES:
        logger.warning("fp8check: %s=%r is not one of %s; using warn", MODE_ENV, value, ", ".join(MODES))
        return "warn"
    return value


def check(config, engine_args=None) -> None:
    """Log fp8check's verdict on `config` (a VllmConfig) built from `engine_args` (the EngineArgs, for the flags as
    typed); under strict, a failing layer is SystemExit(1). Any other exception is one log line."""
    chosen = mode()
    if chosen == "off":
        return
    try:
        failed, text = verdict(config, engine_args)
    except Exception as exc:  # noqa: BLE001 - fp8check's failure is never vLLM's
        logger.warning("fp8check: no verdict (%s: %s); vLLM goes on", type(exc).__name__, one_line(exc))
        return
    if not failed:
        logger.info("fp8check:\n%s", text)
        return
    if chosen == "strict":
        logger.error("fp8check: a layer would fail to load; stopping before the engine starts (%s=strict)\n%s",
                     MODE_ENV, text)
        raise SystemExit(1)
    logger.warning("fp8check: a layer would fail to load (%s=warn: vLLM goes on)\n%s", MODE_ENV, text)


def verdict(config, engine_args=None) -> tuple[bool, str]:
    """(whether a layer fails, the report as text): fp8check's inspect with the installed release's rules, or,
    for a release newer than every profile, the installed vLLM's own routing (crosscheck)."""
    from fp8check.api import inspect_with_checkpoint
    from fp8check.core.targets.profiles import NewerRelease

    options = inputs(config, engine_args)
    as_json = output_format() == "json"
    try:
        report, ckpt = inspect_with_checkpoint(**options)
    except NewerRelease as exc:
        return newer_release_verdict(exc, options, as_json)
    if as_json:
        import json

        return not report.ok, json.dumps(report.to_dict())
    from fp8check.cli import render

    text = rendered(lambda console: render.table(report, console, False, ckpt.fetch, False, "error"))
    return not report.ok, text


def newer_release_verdict(exc, options: dict, as_json: bool) -> tuple[bool, str]:
    """The installed vLLM is newer than fp8check's profiles: its own code answers (fp8check crosscheck, linear
    layers only, on this host's platform), as `fp8check inspect` does."""
    from fp8check.cli.load import run_crosscheck

    routing = {key: options[key] for key in ("tp", "linear_backend", "kernel_config", "quantization",
                                             "allow_deprecated_quantization")}
    result = run_crosscheck(options["model"], "auto", revision=options["revision"], token=options["token"],
                            quiet=True, assume=[], disable_kernel=[], **routing)
    failed = any(row.vllm_error for row in result.rows)
    if as_json:
        import json

        from fp8check.core.report.documents import crosscheck_document

        return failed, json.dumps(crosscheck_document(options["model"], *result))
    from fp8check.cli.render.load import crosscheck_table

    text = rendered(lambda console: crosscheck_table(*result, console))
    return failed, "\n".join([f"note: {exc}; answered with vLLM {exc.version}'s own routing code (linear layers)",
                              text])


def output_format() -> str:
    value = os.environ.get(FORMAT_ENV, "table").strip().lower() or "table"
    return value if value in FORMATS else "table"


def rendered(draw) -> str:
    """What `draw(console)` prints, as plain text: no terminal, no colour, TABLE_WIDTH columns."""
    import io

    from rich.console import Console

    buffer = io.StringIO()
    draw(Console(file=buffer, width=TABLE_WIDTH, color_system=None, force_terminal=False, highlight=False,
                 emoji=False))
    return buffer.getvalue().rstrip("\n")


def inputs(config, engine_args=None) -> dict:
    """fp8check.api.inspect_with_checkpoint's keywords for a VllmConfig.
    `--quantization` is the flag as typed (EngineArgs; the config holds the method vLLM settled on, which fp8check
    derives itself); every other value is the config's."""
    model_config, parallel, cache = config.model_config, config.parallel_config, config.cache_config
    kernel = getattr(config, "kernel_config", None)
    attention = getattr(config, "attention_config", None)
    platform, assume = vllm_platform()
    options = {
        "model": str(model_config.model),
        "revision": getattr(model_config, "revision", None),
        "token": _token(getattr(model_config, "hf_token", None)),
        "platform": platform,
        "assume": assume,
        "tp": int(parallel.tensor_parallel_size),
        "ep": bool(getattr(parallel, "enable_expert_parallel", False)),
        "vllm": "auto",
        "quantization": getattr(engine_args, "quantization", None),
        "allow_deprecated_quantization": bool(getattr(model_config, "allow_deprecated_quantization", False)),
        "kv_cache_dtype": str(getattr(cache, "cache_dtype", None) or "auto"),
        "kv_cache_dtype_skip_layers": [str(v) for v in getattr(cache, "kv_cache_dtype_skip_layers", None) or ()],
        "linear_backend": str(getattr(kernel, "linear_backend", None) or "auto"),
        "kernel_config": None,
        "attention_backend": _enum_name(getattr(attention, "backend", None)) or "auto",
        "moe_backend": str(getattr(kernel, "moe_backend", None) or "auto"),
    }
    per_quant = getattr(kernel, "linear_backend_per_quant", None)
    if per_quant:
        options["kernel_config"] = {"linear_backend_per_quant": {k: str(v) for k, v in dict(per_quant).items()}}
    return options


def vllm_platform() -> tuple[str, dict]:
    """fp8check's --platform and --assume for vLLM's current_platform: the CUDA capability it reports (NVML where
    vLLM uses it, no CUDA context), the ROCm gfx arch vLLM read at import, xpu, or cpu with AMX as vLLM's CPU
    kernels ask torch for it."""
    from vllm.platforms import current_platform

    if current_platform.is_cuda():
        capability = current_platform.get_device_capability()
        return f"cuda:{capability.major}{capability.minor}", {}
    if current_platform.is_rocm():
        from vllm.platforms import rocm

        return f"rocm:{rocm._GCN_ARCH.split(':')[0]}", {}
    if current_platform.is_xpu():
        return "xpu", {}
    if current_platform.is_cpu():
        import torch

        probe = getattr(torch.cpu, "_is_amx_tile_supported", None)
        return "cpu", {"cpu_amx": bool(probe())} if probe is not None else {}
    raise ValueError(f"vLLM's platform {type(current_platform).__name__} is not one fp8check models")


def one_line(exc: BaseException, limit: int = 500) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[:limit] + "..."


def _token(value) -> str | None:
    """vLLM's hf_token: a token, True (the saved login, fp8check's default too) or None."""
    return value if isinstance(value, str) and value else None


def _enum_name(value) -> str | None:
    return None if value is None else str(getattr(value, "name", value))
