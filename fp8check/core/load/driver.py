"""load: inspect first, then every selected module streamed, checked, run through its kernel's numerics and judged.

inspect -> (per module) read its tensors -> value checks -> vLLM's weight processing -> the routed kernel's
numerics on the device -> an fp32 reference of the same processed weights and the *same* quantized activations
(and, beside it, the checkpoint's own weights and the unquantized activations, for information) -> verdict. One
module is held at a time. This module owns the run as a whole (the --device, the selection, the report); the
layers run in linear.py, the FusedMoE experts in experts.py, both through gemm.py, and each attention layer's KV
cache in attention.py. torch is imported here, so only `load` imports this module.
"""

from __future__ import annotations

import re
import time
from typing import Callable, NamedTuple

import torch

from fp8check.core.checkpoint.local import Checkpoint, activation_dtype
from fp8check.core.errors import InputError, printable
from fp8check.core.load.experts import MoEJob, load_moes, moe_jobs, tensor_names
from fp8check.core.load.attention import run_attention
from fp8check.core.load.linear import layer_numerics, layer_recipe, not_run, run_layer, run_layers_parallel
from fp8check.core.load.weights import CheckpointFiles, module_reads
from fp8check.core.model.modules import LinearModule, ModelLayout, MoEModule, build_layout
from fp8check.core.model.sharding import TensorRead
from fp8check.core.records import AttentionReport, AttentionRun, InspectReport, LayerRun, LoadOptions, LoadReport
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.routing.warnings import with_load_warnings
from fp8check.core.targets.platforms import Assumptions, Platform, _host_has_amx, device_syntax, parse_platform
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.numerics import gemm as numerics

OUT_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}
ProgressCallback = Callable[[str, int, int, int], None]   # (module name, modules done, total, bytes read so far)


# --------------------------------------------------------------------------------------------------- devices

def resolve_device(text: str) -> torch.device:
    """--device: auto (xpu, then cuda, then cpu), cpu, cuda[:i], xpu[:i]; refused when torch cannot see it."""
    text = text.strip().lower()
    syntax = device_syntax(text)
    if syntax is None:
        if torch.xpu.is_available():
            return torch.device("xpu", 0)
        if torch.cuda.is_available():
            return torch.device("cuda", 0)
        return torch.device("cpu")
    kind, index = syntax
    if kind == "cpu":
        return torch.device("cpu")
    backend = torch.cuda if kind == "cuda" else torch.xpu
    count = backend.device_count() if backend.is_available() else 0
    if index >= count:
        seen = f"{count} {kind} device(s)" if count else f"no {kind} device"
        raise InputError(f"--device {text}: torch {torch.__version__} sees {seen}; use --device cpu (the "
                         f"arithmetic is then emulated on the CPU, --platform still routes for the target)")
    return torch.device(kind, index)


def device_platform(device: torch.device) -> Platform:
    """The platform a device is, for `--platform` defaulting to where the arithmetic runs."""
    if device.type == "xpu":
        return Platform(kind="xpu", capability=None, label="device: xpu")
    if device.type == "cuda":
        if torch.version.hip:
            arch = torch.cuda.get_device_properties(device).gcnArchName.split(":")[0]
            return parse_platform(f"rocm:{arch}")._replace(label=f"device: rocm:{arch}")
        major, minor = torch.cuda.get_device_capability(device)
        return parse_platform(f"cuda:{major * 10 + minor}")._replace(label=f"device: cuda:{major * 10 + minor}")
    return Platform(kind="cpu", capability=None, label="device: cpu", assumptions=Assumptions(cpu_amx=_host_has_amx()))


# ----------------------------------------------------------------------------------------------- selection

class Selection(NamedTuple):
    """What one `load` runs: the linear modules, the FusedMoE layers and the attention layers --layers selects."""

    linears: list[LinearModule]
    moes: list[MoEModule]              # run (a job) or refused (a `not run` LayerRun with vLLM's reason)
    moe_jobs: list[MoEJob]
    moe_refused: dict[str, LayerRun]
    attention: list[AttentionReport]   # their KV caches (fp8check.core.load.attention)


def selected_modules(report: InspectReport, modules: dict[str, LinearModule], layers: str | None) -> list[LinearModule]:
    if layers is None:
        return [modules[layer.name] for layer in report.layers]
    pattern = re.compile(layers)  # api.load_with_checkpoint refused an invalid one with the options
    chosen = [modules[layer.name] for layer in report.layers if pattern.search(layer.name)]
    if not chosen and not any(pattern.search(other.name) for other in report.moes + report.attention):
        raise InputError(f"--layers '{printable(layers)}' matches none of the {len(report.layers)} modules vLLM builds "
                         f"(e.g. {report.layers[0].name if report.layers else 'none'})")
    return chosen


def select(report: InspectReport, layout: ModelLayout, options: LoadOptions) -> Selection:
    chosen = selected_modules(report, {m.name: m for m in layout.linears}, options.layers)
    moes = [m for m in layout.moes if options.layers is None or re.search(options.layers, m.name)]
    jobs, refused = moe_jobs(tuple(moes), {m.name: m for m in report.moes}, options.inspect.profile,
                             options.all_experts)
    attention = [a for a in report.attention if options.layers is None or re.search(options.layers, a.name)]
    return Selection(chosen, moes, jobs, refused, attention)


def needed_tensors(selection: Selection) -> set[str]:
    """Every tensor the selection reads (a Hub repo downloads only their shards)."""
    return ({t.name for m in selection.linears for s in m.shards for t in (s.weight, *s.side.values())}
            | {name for job in selection.moe_jobs for name in tensor_names(job)}
            | {name for a in selection.attention for name in a.scales})


# -------------------------------------------------------------------------------------------------- driver

def load_checkpoint(ckpt: Checkpoint, fetch: Callable[[set[str]], str], options: LoadOptions,
                    progress: ProgressCallback | None = None) -> LoadReport:
    """inspect, then every selected module through its numerics on options.device. `fetch` maps the tensor names
    the selected modules need to the folder holding their shards (a Hub repo downloads only those)."""
    started = time.perf_counter()
    layout = build_layout(ckpt.tensors, ckpt.config, options.inspect.profile, options.inspect.platform.kind)
    report = inspect_checkpoint(ckpt, options.inspect, layout)
    selection = select(report, layout, options)
    if options.against is not None:  # --against BASE: a BASE that cannot be the source is refused before any run
        experts = tuple(shards for job in selection.moe_jobs for _, shards in job.experts)
        options.against.bind(ckpt, selection.linears, options.inspect.tp, experts, layout)
    folder = fetch(needed_tensors(selection))
    out_dtype = OUT_DTYPES[activation_dtype(ckpt.config)]
    notes = _numerics_notes(report, selection, options)
    runs = run_linears(report, selection, folder, options, out_dtype, progress)
    moe_runs = load_moes([m.name for m in selection.moes], selection.moe_jobs, selection.moe_refused, report.errors,
                         folder, options, options.inspect.platform.kind, out_dtype)
    attention_runs = run_attention_layers(ckpt, report, selection.attention, folder, options, out_dtype)
    bytes_read = sum(run.bytes_read for run in (*runs, *moe_runs)) + sum(run.bytes_read for run in attention_runs)
    return with_load_warnings(LoadReport(
        report, str(options.device), device_platform(options.device).label, options.tokens, options.seed,
        options.layers, tuple(runs), bytes_read, time.perf_counter() - started,
        notes + _selection_notes(report, selection, options), tuple(moe_runs),
        against=options.against.label if options.against is not None else None,
        attention_runs=tuple(attention_runs)))


def run_attention_layers(ckpt: Checkpoint, report: InspectReport, chosen: list[AttentionReport], folder: str,
                         options: LoadOptions, out_dtype: torch.dtype) -> list[AttentionRun]:
    """Every selected attention layer's KV cache written and read back through its checkpoint scales (attention.py), on
    options.device; the scales are read whole (a scalar, or one per head), one layer at a time."""
    files = CheckpointFiles(folder)
    runs = []
    for attention in chosen:
        scales = {name: files.read(TensorRead(ckpt.tensors[name])) for name in attention.scales
                  if name in ckpt.tensors}
        runs.append(run_attention(attention, scales, report.platform, options.device, options.tokens, options.seed,
                                  model_dtype=out_dtype, tp=options.inspect.tp))
        files.release()
    return runs


def run_linears(report: InspectReport, selection: Selection, folder: str, options: LoadOptions, out_dtype: torch.dtype,
                progress: ProgressCallback | None) -> list[LayerRun]:
    """Every selected linear module: on one device, one module at a time, or on --tp ranks."""
    layers = {layer.name: layer for layer in report.layers}
    chosen = selection.linears
    platform_kind = options.inspect.platform.kind
    ctx = RoutingContext.of(options.inspect)
    if options.inspect.tp > 1:
        if report.errors:  # inspect's TP validation refuses before any rank starts
            return [not_run(m, layers[m.name], options)._replace(errors=tuple(f"not run: {e}" for e in report.errors))
                    for m in chosen]
        recipes = {m.name: layer_recipe(layers[m.name], ctx) for m in chosen}
        return run_layers_parallel(folder, chosen, layers, recipes, platform_kind, options, out_dtype) if chosen else []
    files = CheckpointFiles(folder)
    runs = []
    for done, module in enumerate(chosen):
        if progress:
            progress(module.name, done, len(chosen), files.bytes_read)
        if done + 1 < len(chosen):  # the next module's pages fault in while this one runs
            files.prefetch(module_reads(chosen[done + 1]))
        layer = layers[module.name]
        runs.append(run_layer(module, layer, layer_recipe(layer, ctx), files, options, platform_kind,
                              out_dtype))
        files.release()
    if progress:
        progress("", len(chosen), len(chosen), files.bytes_read)
    return runs


def _numerics_notes(report: InspectReport, selection: Selection, options: LoadOptions) -> tuple[str, ...]:
    """What block numerics run as on this device; Triton is imported here, not inside the first layer's timing."""
    layers = {layer.name: layer for layer in report.layers}
    if not any(layer_numerics(layers[m.name]) == numerics.BLOCK for m in selection.linears):
        return ()
    reason = numerics.triton_unavailable(options.device)
    return (f"block numerics on {options.device}: "
            + ("fp8check's Triton port of vLLM's w8a8_triton_block_scaled_mm" if reason is None else
               f"fp32 emulation, because Triton cannot run here: {reason}"),)


def _selection_notes(report: InspectReport, selection: Selection, options: LoadOptions) -> tuple[str, ...]:
    notes: tuple[str, ...] = ()
    if options.layers is not None:
        notes += (f"--layers '{printable(options.layers)}': {len(selection.linears)} of {len(report.layers)} "
                  "modules run"
                  + (f", {len(selection.moes)} of {len(report.moes)} FusedMoE layers" if report.moes else ""),)
    if options.against is not None:
        notes += (options.against.summary(),)
    return notes
