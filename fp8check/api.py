"""fp8check's Python API: `inspect`, `load` and `matrix` as functions that return typed reports.

    import fp8check

    report = fp8check.inspect("examples/tiny-qwen3-fp8-block", platform="xpu", tp=2)
    report.ok                                  # True: every layer routes
    [(layer.name, layer.kernel) for layer in report.layers]
    report.to_dict()                           # the document `fp8check inspect --format json` prints

Every keyword is the command line's option of the same name (`--linear-backend` is `linear_backend`) and takes
the same values; `assume` and `kernel_config` also take a dict. An invalid one raises `InputError` with the line
the command line prints before exiting 2. `inspect` and `matrix` read config.json and the safetensors headers only
and never import torch; `load` imports torch (pip install 'fp8check[load]'). The command line parses its options
with the functions here and calls the same ones, so both give the same report for the same arguments.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from fp8check.core import records
from fp8check.core.errors import InputError, printable
from fp8check.core.planning import matrix as planning_matrix
from fp8check.kernels.base import FP8, FP8_BLOCK, W8A16_FP8, RoutingContext

if TYPE_CHECKING:  # annotations only
    from fp8check.core.checkpoint.local import Checkpoint
    from fp8check.core.targets.platforms import Platform

__all__ = ["InputError", "InspectReport", "LoadReport", "Matrix", "inspect", "load", "matrix"]

MATRIX_PLATFORMS = ("xpu", "h100", "a100", "l40s", "mi300x")
MATRIX_TPS = (1, 2, 4, 8)
MAX_TP = 1024
MAX_TOKENS = 1_000_000
MAX_SEED = 2**32 - 1
QUANTIZATION_KEYS = (FP8, FP8_BLOCK, W8A16_FP8, "int8_w8a8", "mixed_precision", "mxfp8", "mxfp4", "mxfp6", "nvfp4_w4a4",
                     "nvfp4_w4a16")
ROUTING_OPTIONS = ("ep", "linear_backend", "kernel_config", "assume", "disable_kernel", "quantization",
                   "allow_deprecated_quantization", "kv_cache_dtype", "kv_cache_dtype_skip_layers", "attention_backend",
                   "moe_backend")


class InspectReport(records.InspectReport):
    """`inspect`'s report (fp8check.core.records.InspectReport): `.ok`, `.layers`, `.moes`, `.errors`, ..."""

    __slots__ = ()

    def to_dict(self) -> dict:
        """The document `fp8check inspect --format json` prints (schema: `fp8check schema`)."""
        from fp8check.core.report.documents import inspect_document

        return inspect_document(self)


class LoadReport(records.LoadReport):
    """`load`'s report (fp8check.core.records.LoadReport): `.ok`, `.inspect` (an InspectReport), `.runs`, ...
    `.layers` are inspect's layers, `.runs` what each selected one did."""

    __slots__ = ()

    @property
    def layers(self):
        return self.inspect.layers

    def to_dict(self) -> dict:
        """The document `fp8check load --format json` prints."""
        from fp8check.core.report.documents import load_document

        return load_document(self)


class Matrix(planning_matrix.Matrix):
    """`matrix`'s grid (fp8check.core.planning.matrix.Matrix): `.ok` (some cell loads), `.cells`, one per
    platform x TP, each with `.platform`, `.tp`, `.ok`, `.kernels`, `.reason` and `.memory`."""

    __slots__ = ()

    def to_dict(self) -> dict:
        """The document `fp8check matrix --format json` prints."""
        from fp8check.core.report.documents import matrix_document

        return matrix_document(self)


# ----------------------------------------------------------------------------------------------- the checks

def inspect(model: str, *, platform: str = "auto", tp: int = 1, vllm: str = "auto", revision: str | None = None,
            token: str | None = None, **options) -> InspectReport:
    """Predict vLLM's scheme and kernel for every linear layer of `model`, from config.json and the safetensors
    headers only (no torch, no weights). A report that fails (`not report.ok`) carries `suggestions`: what would
    load instead.

    :param model: a checkpoint folder (config.json + *.safetensors) or a Hub repo id `org/name[@revision]`.
    :param platform: xpu, cpu, cuda:<cc>, rocm:<gfx>, an alias (h100, mi300x, ...) or auto (this host).
    :param tp: the tensor-parallel size, 1 to 1024.
    :param vllm: the rules: auto (the vLLM installed here, else latest), installed, latest, or a release fp8check
        knows (0.25 ... 0.34; 0.27.1 maps to 0.27). An installed vLLM newer than every profile is a NewerRelease error.
    :param revision: the branch, tag or commit of a repo id.
    :param token: a Hugging Face token for gated or private repos (default: HF_TOKEN, then the saved login).
    :param options: ep, linear_backend, kernel_config, assume, disable_kernel, quantization,
        allow_deprecated_quantization, kv_cache_dtype (vLLM's CacheDType: auto, bfloat16, fp8, fp8_e5m2, ...),
        kv_cache_dtype_skip_layers (layer indices, sliding_window), attention_backend (an AttentionBackendEnum
        name, or auto), moe_backend (vLLM's --moe-backend: auto, triton, deep_gemm, ...), as on the command line.
    :raises InputError: an invalid argument, or a checkpoint that cannot be read.
    """
    return inspect_with_checkpoint(model, platform=platform, tp=tp, vllm=vllm, revision=revision, token=token,
                                   **options)[0]


def inspect_with_checkpoint(model: str, *, platform: str = "auto", tp: int = 1, vllm: str = "auto",
                            revision: str | None = None, token: str | None = None,
                            **options) -> tuple[InspectReport, Checkpoint]:
    """`inspect`, and the Checkpoint it read (the command line shows how a Hub repo's metadata was fetched)."""
    from fp8check.core.checkpoint.source import open_checkpoint
    from fp8check.core.routing.inspect import inspect_checkpoint

    opts = routing_options(target(platform, options.get("assume", ())), tp=tp, vllm=vllm, **_routing_only(options))
    ckpt = open_checkpoint(model, revision=revision, token=token)
    return InspectReport._make(_with_suggestions(inspect_checkpoint(ckpt, opts), ckpt, opts)), ckpt


def load(model: str, *, platform: str | None = None, device: str = "auto", layers: str | None = None,
         tokens: int = 16, seed: int = 0, rank_timeout: float = 600.0, all_experts: bool = False,
         against: str | None = None, tp: int = 1, vllm: str = "auto", revision: str | None = None,
         token: str | None = None, progress: bool = False, **options) -> LoadReport:
    """`inspect`, then every selected layer read from safetensors, its values checked, processed as vLLM
    processes it and run through its kernel's numerics on `device`, against an fp32 product of the same quantized
    operands. Every argument is checked before torch is imported.

    :param platform: the target; default: the platform of `device`.
    :param device: auto (xpu, then cuda, then cpu), cpu, cuda[:i] or xpu[:i].
    :param layers: only the modules whose vLLM name matches this regex (re.search).
    :param tokens: activation rows per layer.
    :param seed: seed of the random activations.
    :param rank_timeout: with tp > 1, the seconds a rank may keep the others waiting.
    :param all_experts: run every FusedMoE expert (default: the first and the last of each layer).
    :param against: the unquantized model this checkpoint was made from (folder or repo id); not with tp > 1.
    :param progress: draw a progress bar on stderr.
    :param options: as `inspect`'s.
    :raises InputError: an invalid argument, an unreadable checkpoint, or torch not installed.
    """
    return load_with_checkpoint(model, platform=platform, device=device, layers=layers, tokens=tokens, seed=seed,
                                rank_timeout=rank_timeout, all_experts=all_experts, against=against, tp=tp,
                                vllm=vllm, revision=revision, token=token, progress=progress, **options)[0]


def load_with_checkpoint(model: str, *, platform: str | None = None, device: str = "auto", layers: str | None = None,
                         tokens: int = 16, seed: int = 0, rank_timeout: float = 600.0, all_experts: bool = False,
                         against: str | None = None, tp: int = 1, vllm: str = "auto", revision: str | None = None,
                         token: str | None = None, progress: bool = False,
                         **options) -> tuple[LoadReport, Checkpoint]:
    """`load`, and the Checkpoint it read."""
    from fp8check.core.checkpoint.source import open_checkpoint, weights_fetcher
    from fp8check.core.targets.platforms import Platform, apply_assumptions, device_syntax

    assume = options.get("assume", ())
    # Everything that needs no torch is checked first: a typo costs no torch import (seconds).
    _bounded("--tokens", tokens, 1, MAX_TOKENS)
    _bounded("--seed", seed, 0, MAX_SEED)
    if isinstance(rank_timeout, bool) or not isinstance(rank_timeout, (int, float)) or not rank_timeout >= 1:
        raise InputError(f"--rank-timeout {rank_timeout!r}: expected at least 1 second")
    if against is not None and tp != 1:
        raise InputError(f"--against compares on one process with whole tensors; run it without --tp {tp} (the "
                         "TP split does not change the values: `load --tp` checks the split, --against the values)")
    if not isinstance(device, str):
        raise InputError(f"--device {device!r}: expected auto, cpu, cuda[:i] or xpu[:i]")
    device_syntax(device)  # whether torch sees that device is checked once torch is imported
    if layers is not None:
        try:
            re.compile(layers)
        except re.error as exc:
            raise InputError(f"--layers {printable(layers)!r} is not a valid regular expression: {exc}") from None
    # Without --platform the target is the device's, known once torch sees it; the assumptions are checked now.
    chosen = target(platform, assume) if platform is not None else apply_assumptions(
        Platform(kind="cpu", capability=None, label="device"), _assume_items(assume))
    opts = routing_options(chosen, tp=tp, vllm=vllm, **_routing_only(options))
    ckpt = open_checkpoint(model, revision=revision, token=token)
    try:
        from fp8check.core.load.driver import device_platform, load_checkpoint, resolve_device
        from fp8check.core.progress import module_progress
    except ModuleNotFoundError as exc:  # torch, safetensors or numpy: `inspect` needs none of them
        raise InputError(f"fp8check load needs {exc.name}, which is not installed: pip install 'fp8check[load]' "
                         "(install torch first, pinned to your accelerator's build, e.g. torch==2.13.0 for the "
                         "CPU)") from None
    torch_device = resolve_device(device)
    if platform is None:
        opts = opts._replace(platform=apply_assumptions(device_platform(torch_device), _assume_items(assume)))
    run = records.LoadOptions(opts, torch_device, layers, tokens, seed, rank_timeout, quiet=not progress,
                              all_experts=all_experts)
    if against is not None:
        from fp8check.core.load.against import Base

        run = run._replace(against=Base.open(against, token=token, quiet=run.quiet))
    fetch = weights_fetcher(model, revision=revision, token=token, quiet=run.quiet)
    with module_progress(run.quiet or tp > 1) as bar:  # under tp > 1, rank 0 draws the bar
        report = load_checkpoint(ckpt, fetch, run, bar)
    inspected = InspectReport._make(_with_suggestions(report.inspect, ckpt, opts))
    return LoadReport._make(report._replace(inspect=inspected)), ckpt


def matrix(model: str, *, platforms: str | Iterable[str] = MATRIX_PLATFORMS, tp: int | str | Iterable[int] = MATRIX_TPS,
           vllm: str = "auto", revision: str | None = None, token: str | None = None, platform=None,
           **options) -> Matrix:
    """Where can `model` be served? inspect's routing for every platform x TP size, from one read of the headers.

    :param platforms: targets as `inspect`'s platform takes them, a list or one comma-separated string
        (`platform=` is the same keyword, as the command line's --platform / -p).
    :param tp: tensor-parallel sizes, a list, one size or a comma-separated string.
    :param options: as `inspect`'s.
    :raises InputError: an invalid argument, or a checkpoint that cannot be read.
    """
    from fp8check.core.checkpoint.source import open_checkpoint
    from fp8check.core.planning.matrix import matrix as build_matrix

    assume = options.get("assume", ())
    targets = [target(p, assume) for p in _items(platforms if platform is None else platform)]
    sizes = [_tp_size(size) for size in _items(tp)]
    if not targets or not sizes:
        raise InputError("--platform and --tp each need at least one value, e.g. --platform xpu,h100 --tp 1,2")
    opts = routing_options(targets[0], vllm=vllm, **_routing_only(options))
    return Matrix._make(build_matrix(open_checkpoint(model, revision=revision, token=token), opts, targets, sizes))


# ------------------------------------------------------------------------------------ arguments -> options

def target(platform: str, assume: Iterable[str] | Mapping[str, object] = ()) -> Platform:
    """--platform (auto: this host, detected without torch) with --assume applied."""
    from fp8check.core.targets.platforms import apply_assumptions, detect_host, parse_platform

    if not isinstance(platform, str):
        raise InputError(f"--platform {platform!r}: expected a string such as xpu, h100 or cuda:90")
    chosen = detect_host() if platform.strip().lower() == "auto" else parse_platform(platform)
    return apply_assumptions(chosen, _assume_items(assume))


def routing_options(platform: Platform, *, tp: int = 1, ep: bool = False, vllm: str = "auto",
                    linear_backend: str = "auto", kernel_config: str | Mapping | None = None,
                    disable_kernel: str | Iterable[str] = (), quantization: str | None = None,
                    allow_deprecated_quantization: bool = False, kv_cache_dtype: str = "auto",
                    kv_cache_dtype_skip_layers: str | Iterable[str] = (), attention_backend: str | None = "auto",
                    moe_backend: str = "auto", vllm_option: str = "--vllm") -> records.InspectOptions:
    """The routing options every check shares, checked, for `platform` (`target`: --platform with --assume
    applied). `vllm_option` is the flag the profile's errors name (diff's --from and --to)."""
    from fp8check.core.formats.kv_cache import check_cache_dtype
    from fp8check.core.targets.profiles import select_profile

    if not isinstance(vllm, str):
        raise InputError(f"{vllm_option} {vllm!r}: name the release as a string, e.g. '0.27' or 'latest'")
    for flag, value in (("--ep", ep), ("--allow-deprecated-quantization", allow_deprecated_quantization)):
        if not isinstance(value, bool):
            raise InputError(f"{flag} {value!r}: expected True or False")
    profile = select_profile(vllm, vllm_option)
    check_cache_dtype(kv_cache_dtype, profile)  # that release's CacheDType values, as its parser takes them
    return records.InspectOptions(
        platform=platform, profile=profile, tp=_bounded("--tp", tp, 1, MAX_TP),
        ep=ep, backend=_backend(linear_backend, kernel_config), disabled_kernels=disabled_kernels(disable_kernel),
        moe_backend=_moe_backend(moe_backend, kernel_config, profile),
        quantization=_quantization(quantization), allow_deprecated_quantization=allow_deprecated_quantization,
        kv_cache_dtype=kv_cache_dtype, kv_cache_dtype_skip_layers=_skip_layers(kv_cache_dtype_skip_layers),
        attention_backend=_attention_backend(attention_backend, RoutingContext(platform, profile)))


def _kernel_config(kernel_config: str | Mapping | None) -> Mapping:
    """vLLM's --kernel-config (JSON text or a dict), with the keys fp8check reads."""
    if not kernel_config:
        return {}
    if isinstance(kernel_config, str):
        try:
            doc = json.loads(kernel_config)
        except ValueError as exc:
            raise InputError(f"--kernel-config is not valid JSON: {exc}") from None
    else:
        doc = kernel_config
    if not isinstance(doc, Mapping) or set(doc) - {"linear_backend", "linear_backend_per_quant", "moe_backend"}:
        raise InputError("--kernel-config takes a JSON object with linear_backend, linear_backend_per_quant and / or "
                         "moe_backend")
    return doc


def _backend(linear_backend: str, kernel_config: str | Mapping | None = None) -> records.LinearBackendOption:
    """--linear-backend plus vLLM's --kernel-config ({"linear_backend_per_quant": {...}}, JSON text or a dict)."""
    default = _backend_name(linear_backend, "--linear-backend")
    per_quant: dict[str, str] = {}
    doc = _kernel_config(kernel_config)
    if doc:
        if "linear_backend" in doc:
            default = _backend_name(doc["linear_backend"], "--kernel-config linear_backend")
        mapping = doc.get("linear_backend_per_quant") or {}
        if not isinstance(mapping, Mapping):
            raise InputError("--kernel-config linear_backend_per_quant must be an object")
        for key, value in mapping.items():
            if key not in QUANTIZATION_KEYS:
                raise InputError(f"--kernel-config: unknown quantization key {key!r} (one of "
                                 f"{', '.join(QUANTIZATION_KEYS)})")
            per_quant[key] = _backend_name(value, f"--kernel-config linear_backend_per_quant.{key}")
    return records.LinearBackendOption(default=default, per_quant=tuple(sorted(per_quant.items())))


def disabled_kernels(names: str | Iterable[str]) -> tuple[str, ...]:
    """--disable-kernel (repeated, or comma-separated as VLLM_DISABLED_KERNELS) plus VLLM_DISABLED_KERNELS. A name
    given here must be one of fp8check's linear kernels; the environment's, which vLLM shares with kernels fp8check
    does not model, are taken as vLLM takes them."""
    from fp8check.core.targets.platforms import disabled_kernels_from_env

    known = linear_kernel_names()
    given = tuple(name.strip() for item in _items(names or ()) for name in str(item).split(",") if name.strip())
    for name in given:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise InputError(f"--disable-kernel {printable(name)!r}: not one of fp8check's linear kernels{hint} "
                             "(`fp8check kernels -p PLATFORM` lists them)")
    return given + disabled_kernels_from_env()


def linear_kernel_names() -> tuple[str, ...]:
    """Every linear kernel class of every table (FP8 and MXFP8), sorted: what --disable-kernel takes."""
    from fp8check.kernels.registry import TABLES

    return tuple(sorted({k.name for table in TABLES.values() for row in table.values() for k in row}))


def _tp_size(value: int | str) -> int:
    """One of matrix's --tp sizes, bounded as --tp is."""
    text = str(value).strip()
    if not re.fullmatch(r"[0-9]+", text) or not 1 <= int(text) <= MAX_TP:
        raise InputError(f"--tp {text!r}: expected comma-separated sizes from 1 to {MAX_TP}, e.g. 1,2,4,8")
    return int(text)


def _items(value: str | int | Iterable) -> list:
    """A comma-separated string, one value, or an iterable of values, as a list."""
    if isinstance(value, str):
        return [item for item in value.split(",") if item.strip()]
    if isinstance(value, int):
        return [value]
    return list(value)


def _bounded(flag: str, value: int, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"{flag} {value!r}: expected a whole number from {low} to {high}")
    return value


def _moe_backend(moe_backend: str, kernel_config: str | Mapping | None, profile) -> str:
    """--moe-backend, else --kernel-config's moe_backend (vLLM's EngineArgs: an explicit --moe-backend overrides
    it), normalized as KernelConfig does and checked against the release's MoEBackend values."""
    from fp8check.kernels.moe import moe_backend_values, normalize_moe_backend

    where, value = "--moe-backend", moe_backend
    if not isinstance(value, str):
        raise InputError(f"--moe-backend {value!r}: expected a string such as triton or deep_gemm")
    if normalize_moe_backend(value) == "auto":
        where, value = "--kernel-config moe_backend", _kernel_config(kernel_config).get("moe_backend", "auto")
        if not isinstance(value, str):
            raise InputError(f"{where} {value!r}: expected a string such as triton or deep_gemm")
    value, values = normalize_moe_backend(value), moe_backend_values(profile)
    if value not in values:
        raise InputError(f"{where}: vLLM {profile.name} takes no MoE backend {value!r} (one of {', '.join(values)})")
    return value


def _backend_name(value: object, where: str) -> str:
    from fp8check.kernels.registry import LINEAR_BACKENDS, normalize_linear_backend

    if not isinstance(value, str) or normalize_linear_backend(value) not in LINEAR_BACKENDS:
        raise InputError(f"{where}: unknown linear backend {value!r} (one of {', '.join(LINEAR_BACKENDS)})")
    return normalize_linear_backend(value)


def _quantization(value: str | None) -> str | None:
    """--quantization: None when not given; an empty value is an error, not 'not given'."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"--quantization {value!r}: expected a method such as fp8 or fp8_per_block (or leave it "
                         "out to use the one the checkpoint declares)")
    return value.strip().lower()


def _skip_layers(values: str | Iterable[str]) -> tuple[str, ...]:
    """--kv-cache-dtype-skip-layers (repeated, comma-separated, or a list): the two things vLLM's Attention matches
    in it, a decoder-layer index (extract_layer_index) and "sliding_window"; anything else would match nothing."""
    given = [str(item).strip() for value in _items(values or ()) for item in str(value).split(",") if item.strip()]
    for value in given:
        if value != "sliding_window" and not re.fullmatch(r"[0-9]+", value):
            raise InputError(f"--kv-cache-dtype-skip-layers {printable(value)!r}: expected decoder-layer indices "
                             "(0, 2, ...) or sliding_window, the only values vLLM's attention layers match")
    return tuple(dict.fromkeys(given))


def _attention_backend(value: str | None, context: RoutingContext) -> str | None:
    """--attention-backend: a name of the release's AttentionBackendEnum in any case, as vLLM's AttentionConfig
    reads it (auto or None: vLLM chooses)."""
    from fp8check.kernels.attention import normalize_attention_backend, unknown_backend_error

    if value is not None and not isinstance(value, str):
        raise InputError(f"--attention-backend {value!r}: expected a backend name such as FLASH_ATTN, or auto")
    name = normalize_attention_backend(value)
    unknown = unknown_backend_error(name, context) if name is not None else None
    if unknown:
        raise InputError(f"--attention-backend {printable(str(value))!r}: {unknown}")
    return name


def _assume_items(assume: Iterable[str] | Mapping[str, object]) -> list[str]:
    """--assume's KEY=VALUE items, from a list of them or a dict (True / False read as yes / no)."""
    if isinstance(assume, Mapping):
        return [f"{key}={'yes' if value is True else 'no' if value is False else value}"
                for key, value in assume.items()]
    return [assume] if isinstance(assume, str) else list(assume)


def _routing_only(options: dict) -> dict:
    """The keyword arguments of inspect, load and matrix that routing_options takes (`assume` goes to `target`);
    an unknown one is a TypeError, as Python raises for any unknown keyword."""
    unknown = sorted(set(options) - set(ROUTING_OPTIONS))
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}; the routing options are "
                        f"{', '.join(ROUTING_OPTIONS)}")
    return {key: value for key, value in options.items() if key != "assume"}


def _with_suggestions(report: records.InspectReport, ckpt: Checkpoint,
                 options: records.InspectOptions) -> records.InspectReport:
    """A failing report with what would work instead, computed by routing the failing layers again."""
    if report.ok:
        return report
    from fp8check.core.planning.suggest import suggest

    return report._replace(suggestions=suggest(report, ckpt, options))
