"""load: inspect first, then every routed module streamed, checked, run through its kernel's numerics and judged.

inspect -> (per module) read its tensors -> value checks -> vLLM's weight processing -> the routed kernel's
numerics on the device -> an fp32 reference of the same processed weights and the *same* quantized activations
(and, beside it, the checkpoint's own weights and the unquantized activations, for information) -> verdict. One
module is held at a time. torch is imported here, so only `load` imports this module; --tp is load_tp.py.
"""

from __future__ import annotations

import re
import time
import zlib
from typing import Callable, NamedTuple

import torch

from fp8check.core.checkpoint.local import Checkpoint
from fp8check.core.errors import InputError, printable
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.checkpoint.local import activation_dtype
from fp8check.core.formats.matching import assign
from fp8check.core.records import InspectReport, LayerReport
from fp8check.core.formats.matching import Assignment
from fp8check.core.model.modules import LinearModule, build_layout
from fp8check.core.routing.platforms import Assumptions, Platform, _host_has_amx, parse_platform
from fp8check.core.routing.linear import FP8_METHOD, UNQUANTIZED, UNQUANTIZED_EMBEDDING, kernel_request
from fp8check.core.load.weights import CheckpointFiles, ShardTensors, read_shards, value_errors
from fp8check.kernels.numerics import gemm as numerics
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.numerics.gemm import LinearWeights
from fp8check.kernels.quant_keys import QuantKey
from fp8check.core.records import LayerRun, LoadOptions, LoadReport

_CHUNK_ROWS = 8192
OUT_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}



class Plan(NamedTuple):
    """How one module runs: its numerics class and what the routed kernel's scheme quantizes how."""

    numerics: str
    strategy: str | None               # weight strategy: "tensor" | "channel" | "block" | None (unquantized)
    block: tuple[int, int] | None
    activation: QuantKey | None        # None: activations stay in the model dtype (weight-only, unquantized)



# --------------------------------------------------------------------------------------------------- devices

def resolve_device(text: str) -> torch.device:
    """--device: auto (xpu, then cuda, then cpu), cpu, cuda[:i], xpu[:i]; refused when torch cannot see it."""
    text = text.strip().lower()
    if text == "auto":
        if torch.xpu.is_available():
            return torch.device("xpu", 0)
        if torch.cuda.is_available():
            return torch.device("cuda", 0)
        return torch.device("cpu")
    match = re.fullmatch(r"(cpu|cuda|xpu)(?::(\d+))?", text)
    if not match:
        raise InputError(f"--device {text!r}: expected auto, cpu, cuda[:i] or xpu[:i]")
    kind, index = match.group(1), int(match.group(2) or 0)
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


def _device_kind(device: torch.device) -> str:
    if device.type == "cuda":
        return "rocm" if torch.version.hip else "cuda"
    return device.type


# ------------------------------------------------------------------------------------------------ planning

def plan_module(layer: LayerReport, assignment: Assignment, ctx: RoutingContext, e8m0: bool) -> Plan | None:
    """The numerics of the kernel inspect routed this module to; None when vLLM would not build it."""
    if layer.errors:
        return None
    if layer.scheme in (UNQUANTIZED, UNQUANTIZED_EMBEDDING):
        return Plan(numerics.UNQUANTIZED, None, None, None)
    if layer.kernel is None:
        return None
    _, _, activation_key = kernel_request(layer.scheme, assignment, ctx, e8m0)
    kind = numerics.KERNEL_NUMERICS[layer.kernel]
    if layer.scheme == FP8_METHOD:
        strategy, block = ("block", assignment.block) if assignment.block else ("tensor", None)
    else:
        strategy = assignment.weights.strategy
        block = assignment.weights.block_structure if strategy == "block" else None
    return Plan(kind, strategy, block, activation_key if kind in (numerics.SCALED_MM, numerics.BLOCK) else None)


# --------------------------------------------------------------------------------------- weight processing

class Fused(NamedTuple):
    weights: LinearWeights             # what the kernel holds after vLLM's processing
    checkpoint: LinearWeights | None   # the checkpoint's own codes and per-row scales, when processing changed them
    notes: tuple[str, ...]
    bias: torch.Tensor | None = None   # in the model dtype, as vLLM's weight loader stores it


def fuse(shards: tuple[ShardTensors, ...], plan: Plan) -> Fused:
    """Shards concatenated as vLLM's weight loaders do, then processed as its process_weights_after_loading does.

    Per-tensor FP8 shards with different scales are requantized to the largest (requantize_with_max_scale,
    quantization/utils/w8a8_utils.py): that changes the numbers, so the checkpoint's own codes are kept beside the
    processed ones (each shard's scale spread over its rows) and the difference is reported. Static input scales
    of fused shards reduce to their max (`input_scale.max()`). Block and channel scales are concatenated as stored.
    """
    fused = _fuse_weights(shards, plan)
    biases = [s.bias for s in shards if s.bias is not None]
    return fused._replace(bias=_cat(biases) if biases else None)


def _fuse_weights(shards: tuple[ShardTensors, ...], plan: Plan) -> Fused:
    weight = _cat([s.weight for s in shards])
    if plan.strategy is None:
        return Fused(LinearWeights(weight, None, None, None), None, ())
    input_scales = [s.input_scale.float().reshape(()) for s in shards if s.input_scale is not None]
    input_scale = torch.stack(input_scales).max() if input_scales else None
    if plan.strategy != "tensor":
        return Fused(LinearWeights(weight, _cat([s.scale.float() for s in shards]), plan.block, input_scale),
                     None, ())
    scales = [s.scale.float().reshape(()) for s in shards]
    top = torch.stack(scales).max()
    if all(bool(scale == top) for scale in scales):
        return Fused(LinearWeights(weight, top, None, input_scale), None, ())
    rows = torch.cat([scale.expand(s.weight.shape[0]) for s, scale in zip(shards, scales)]).reshape(-1, 1)
    parts, notes = [], []
    for shard, scale in zip(shards, scales):
        requantized = _requantize(shard.weight, scale, top) if bool(scale != top) else shard.weight
        if requantized is not shard.weight:
            notes.append(_requantize_note(shard, scale, top, requantized))
        parts.append(requantized)
    return Fused(LinearWeights(torch.cat(parts), top, None, input_scale), LinearWeights(weight, rows, None, None),
                 tuple(notes))


def _cat(tensors: list[torch.Tensor]) -> torch.Tensor:
    """torch.cat without the copy of a single tensor (most modules are one shard; the LM head is the largest)."""
    return tensors[0] if len(tensors) == 1 else torch.cat(tensors)


def _requantize(weight: torch.Tensor, scale: torch.Tensor, top: torch.Tensor) -> torch.Tensor:
    """per_tensor_dequantize then scaled_fp8_quant(weight_dq, max_w_scale), as requantize_with_max_scale does."""
    finfo = torch.finfo(weight.dtype)
    return (weight.float() * scale / top).clamp(finfo.min, finfo.max).to(weight.dtype)


def _requantize_note(shard: ShardTensors, scale: torch.Tensor, top: torch.Tensor, requantized: torch.Tensor) -> str:
    changed = int((requantized.view(torch.uint8) != shard.weight.view(torch.uint8)).sum())
    before = shard.weight.float() * scale
    worst = float((requantized.float() * top - before).abs().max())
    peak = float(before.abs().max()) or 1.0
    return (f"{shard.name}: requantize_with_max_scale (scale {float(scale):.4g} -> {float(top):.4g}, "
            f"{float(top / scale):.2f}x) changed {changed} of {shard.weight.numel()} FP8 codes; worst element change "
            f"{worst:.3g} ({100 * worst / peak:.2f}% of the shard's largest weight)")


# --------------------------------------------------------------------------------------------- execution

class Outcome(NamedTuple):
    output: torch.Tensor               # [M, N] in the activation dtype
    reference: torch.Tensor            # fp32: the same quantized activations x the processed weight
    checkpoint: torch.Tensor           # fp32: the same quantized activations x the checkpoint's own weight
    unquantized: torch.Tensor          # fp32: model-dtype activations x the checkpoint's own weight
    execution: numerics.Execution
    ms: float


class Prepared(NamedTuple):
    """One module's operands on the device: weights, activations (quantized as the scheme says) and fp32 codes."""

    weights: LinearWeights
    x: torch.Tensor
    x_q: torch.Tensor | None
    x_s: torch.Tensor | None
    x_ref: torch.Tensor                # fp32 activations as the kernel sees them (dequantized when quantized)
    codes: torch.Tensor | None         # the FP8 weight in fp32 (None when unquantized)


def activations(name: str, k: int, tokens: int, seed: int, dtype: torch.dtype) -> torch.Tensor:
    """The same M x K activations for a module on every run and every rank (seeded by --seed and the name)."""
    generator = torch.Generator().manual_seed(seed * 1_000_003 + zlib.crc32(name.encode()))
    return torch.randn(tokens, k, generator=generator).to(dtype)


def prepare(plan: Plan, fused: Fused, x: torch.Tensor, device: torch.device,
            input_splits: tuple[tuple[int, int], ...] | None = None) -> Prepared:
    """Operands on `device`. `input_splits`: the input columns each TP rank of a row-parallel layer quantizes on
    its own (vLLM quantizes a rank's activation slice, so its dynamic scales are the slice's), for the reference."""
    x = x.to(device)
    w = LinearWeights(*(t.to(device) if isinstance(t, torch.Tensor) else t for t in fused.weights))
    x_q = x_s = None
    x_ref = x.float()
    if plan.activation is not None:
        x_q, x_s = numerics.quantize_activation(x, plan.activation, w.input_scale)
        if input_splits:
            x_ref = torch.cat([numerics.dequantize_activation(*numerics.quantize_activation(
                x[:, a:b], plan.activation, w.input_scale)) for a, b in input_splits], dim=1)
        else:
            x_ref = numerics.dequantize_activation(x_q, x_s)
    codes = None if plan.numerics == numerics.UNQUANTIZED else numerics.to_float(w.weight)
    return Prepared(w, x, x_q, x_s, x_ref, codes)


def run_kernel(plan: Plan, fused: Fused, p: Prepared, add_bias: bool = True, with_references: bool = False
               ) -> tuple[numerics.Execution, float]:
    """The routed kernel's numerics, timed; the bias joins the output in the model dtype, as the GEMM adds it.
    `with_references`: let an fp32 emulation carry the reference rows in its own pass (see references())."""
    device = p.x.device
    also = _reference_rows(plan, p) if with_references and fused.checkpoint is None else None
    _sync(device)
    start = time.perf_counter()
    execution = numerics.run(plan.numerics, p.weights, p.x, p.x_q, p.x_s, p.codes, also)
    if add_bias and fused.bias is not None:
        execution = execution._replace(output=execution.output + fused.bias.to(execution.output))
    _sync(device)
    return execution, (time.perf_counter() - start) * 1000


def _reference_rows(plan: Plan, p: Prepared) -> torch.Tensor:
    """The fp32 activations of the reference products, stacked: the quantized ones, then (when activations are
    quantized) the model-dtype ones for the quantization error."""
    return p.x_ref if plan.activation is None else torch.cat([p.x_ref, p.x.float()])


def references(plan: Plan, fused: Fused, p: Prepared, execution: numerics.Execution | None = None
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(reference, checkpoint, unquantized) fp32 products: scaled products of the fp32 codes, the activations
    stacked so that one pass over each weight serves every product (the weight is what costs). When the kernel's
    own fp32 emulation already carried those rows (run_kernel(with_references=True)), they are taken from it."""
    m = p.x.shape[0]
    bias = 0.0 if fused.bias is None else fused.bias.to(p.x.device).float()
    if p.codes is None:  # in row chunks: an fp32 copy of a whole LM head would be the run's peak memory
        weight = p.weights.weight
        reference = torch.cat([p.x_ref @ weight[i:i + _CHUNK_ROWS].float().t()
                               for i in range(0, weight.shape[0], _CHUNK_ROWS)], dim=1) + bias
        return reference, reference, reference
    w = p.weights
    if fused.checkpoint is None:
        shared = execution.also if execution is not None else None
        products = (shared if shared is not None else
                    numerics.scaled_product(_reference_rows(plan, p), p.codes, w.scale, w.block)) + bias
        return products[:m], products[:m], products[-m:]
    reference = numerics.scaled_product(p.x_ref, p.codes, w.scale, w.block) + bias
    original = fused.checkpoint
    products = numerics.scaled_product(torch.cat([p.x_ref, p.x.float()]),
                                       numerics.to_float(original.weight.to(p.x.device)),
                                       original.scale.to(p.x.device), None) + bias
    return reference, products[:m], products[m:]


def execute(plan: Plan, fused: Fused, x: torch.Tensor, device: torch.device) -> Outcome:
    """Run the numerics on `device`, then the fp32 references from the same operands."""
    p = prepare(plan, fused, x, device)
    execution, ms = run_kernel(plan, fused, p, with_references=True)
    reference, checkpoint, unquantized = references(plan, fused, p, execution)
    return Outcome(execution.output, reference, checkpoint, unquantized, execution, ms)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "xpu":
        torch.xpu.synchronize(device)


def relative_error(output: torch.Tensor, reference: torch.Tensor) -> float:
    """||out - ref||_F / ||ref||_F in fp64 (0 when both are zero)."""
    diff = torch.linalg.vector_norm((output.double() - reference.double()))
    norm = torch.linalg.vector_norm(reference.double())
    return float(diff / norm) if float(norm) else float(diff)


class Verdict(NamedTuple):
    status: str                        # ok | warn | FAIL
    errors: tuple[str, ...]
    warnings: tuple[str, ...]
    rel_error: float                   # kernel vs the fp32 reference over the same (processed) operands
    bound: float
    processing_error: float | None     # what vLLM's weight processing moved the output by, when it changed weights
    quant_error: float                 # vs model-dtype activations and the checkpoint's weights (information)


def judge(name: str, plan: Plan, outcome: Outcome, out_dtype: torch.dtype) -> Verdict:
    errors, warnings = [], []
    nonfinite = int((~torch.isfinite(outcome.output)).sum())
    if nonfinite:
        errors.append(f"{name}: {nonfinite} of {outcome.output.numel()} outputs are NaN or infinite")
    rel = relative_error(outcome.output, outcome.reference)
    limit = numerics.bound(plan.numerics, out_dtype)
    if not rel <= limit:
        errors.append(f"{name}: output differs from the fp32 reference by {rel:.3g} (relative Frobenius), above the "
                      f"{limit:.3g} bound of {plan.numerics} numerics with {str(out_dtype)[6:]} output")
    processing = None
    if outcome.checkpoint is not outcome.reference:
        processing = relative_error(outcome.reference, outcome.checkpoint)
        if processing > limit:
            warnings.append(f"{name}: vLLM requantizes this fused per-tensor layer to its largest shard scale "
                            f"(requantize_with_max_scale), which moves the output by {processing:.3g} against the "
                            f"checkpoint's own scales; export the fused shards with one shared scale to avoid it")
    quant = relative_error(outcome.output, outcome.unquantized)
    status = "FAIL" if errors else "warn" if warnings else "ok"
    return Verdict(status, tuple(errors), tuple(warnings), rel, limit, processing, quant)


def execution_label(plan: Plan, execution: numerics.Execution, device: torch.device, platform_kind: str
                    ) -> tuple[str, bool]:
    """'torch._scaled_mm rowwise on cpu', or 'emulated on cpu (block numerics: fp32 per-K-block GEMM)' when the
    arithmetic stood in for a device GEMM or ran on a different platform than the one routed for."""
    where = str(device)
    emulated = execution.emulation or _device_kind(device) != platform_kind
    if emulated:
        return f"emulated on {where} ({plan.numerics} numerics: {execution.how})", True
    return f"{execution.how} on {where}", False


# -------------------------------------------------------------------------------------------------- driver

ProgressCallback = Callable[[str, int, int, int], None]   # (module name, modules done, total, bytes read so far)


def plan_kind(layer: LayerReport) -> str | None:
    return numerics.KERNEL_NUMERICS.get(layer.kernel) if layer.kernel else None


def selected_modules(report: InspectReport, modules: dict[str, LinearModule], layers: str | None) -> list[LinearModule]:
    if layers is None:
        return [modules[layer.name] for layer in report.layers]
    try:
        pattern = re.compile(layers)
    except re.error as exc:
        raise InputError(f"--layers {printable(layers)!r} is not a valid regular expression: {exc}") from None
    chosen = [modules[layer.name] for layer in report.layers if pattern.search(layer.name)]
    if not chosen and not any(pattern.search(moe.name) for moe in report.moes):
        raise InputError(f"--layers {printable(layers)!r} matches none of the {len(report.layers)} modules vLLM builds "
                         f"(e.g. {report.layers[0].name if report.layers else 'none'})")
    return chosen


def load_checkpoint(ckpt: Checkpoint, fetch: Callable[[set[str]], str], options: LoadOptions,
                    progress: ProgressCallback | None = None) -> LoadReport:
    """inspect, then every selected module through its numerics on options.device. `fetch` maps the tensor names
    the selected modules need to the folder holding their shards (a Hub repo downloads only those)."""
    started = time.perf_counter()
    report = inspect_checkpoint(ckpt, options.inspect)
    layout = build_layout(ckpt.tensors, ckpt.config)
    modules = {m.name: m for m in layout.linears}
    chosen = selected_modules(report, modules, options.layers)
    from fp8check.core.load import experts as load_moe

    moes = [m for m in layout.moes if options.layers is None or re.search(options.layers, m.name)]
    moe_jobs, moe_refused = load_moe.moe_jobs(tuple(moes), {m.name: m for m in report.moes},
                                              ckpt.config.quantization_config, options.inspect.profile.moe_rules,
                                              options.all_experts)
    if options.against is not None:  # --against BASE: a BASE that cannot be the source is refused before any run
        experts = tuple(shards for job in moe_jobs for _, shards in job.experts)
        options = options._replace(against=options.against.bind(ckpt, chosen, options.inspect.tp, experts))
    folder = fetch({t.name for m in chosen for s in m.shards for t in (s.weight, *s.side.values())}
                   | {name for job in moe_jobs for name in load_moe.tensor_names(job)})
    layer_reports = {layer.name: layer for layer in report.layers}
    ctx = RoutingContext(options.inspect.platform, options.inspect.profile, frozenset(options.inspect.disabled_kernels))
    out_dtype = OUT_DTYPES[activation_dtype(ckpt.config)]
    files = CheckpointFiles(folder)
    notes = []
    if any(plan_kind(layer_reports[m.name]) == numerics.BLOCK for m in chosen):
        from fp8check.kernels.numerics import triton_fp8  # imported here, not inside the first layer's timing

        reason = triton_fp8.unavailable_reason(options.device)
        notes.append(f"block numerics on {options.device}: "
                     + ("fp8check's Triton port of vLLM's w8a8_triton_block_scaled_mm" if reason is None else
                        f"fp32 emulation, because Triton cannot run here: {reason}"))
    if options.inspect.tp > 1:
        from fp8check.core.load.parallel import load_tensor_parallel

        if report.errors:  # inspect's TP validation refuses before any rank starts
            runs = [not_run(m, layer_reports[m.name], options)._replace(
                errors=tuple(f"not run: {e}" for e in report.errors)) for m in chosen]
        else:
            runs = load_tensor_parallel(ckpt, folder, chosen, layer_reports, ctx, options, out_dtype) if chosen else []
        bytes_read = sum(run.bytes_read for run in runs)
    else:
        runs = []
        for done, module in enumerate(chosen):
            if progress:
                progress(module.name, done, len(chosen), files.bytes_read)
            runs.append(run_layer(module, layer_reports[module.name], ckpt, ctx, files, options, out_dtype))
            files.release()
        if progress:
            progress("", len(chosen), len(chosen), files.bytes_read)
        bytes_read = files.bytes_read
    moe_runs = load_moe.load_moes([m.name for m in moes], moe_jobs, moe_refused, report.errors, folder, options,
                                  ctx.platform.kind, out_dtype)
    bytes_read += sum(run.bytes_read for run in moe_runs)
    if options.layers is not None:
        notes.append(f"--layers {options.layers!r}: {len(chosen)} of {len(report.layers)} modules run"
                     + (f", {len(moes)} of {len(report.moes)} FusedMoE layers" if report.moes else ""))
    if options.against is not None:
        notes.append(options.against.summary())
    from fp8check.core.routing.warnings import with_load_warnings

    return with_load_warnings(LoadReport(
        report, str(options.device), device_platform(options.device).label, options.tokens, options.seed,
        options.layers, tuple(runs), bytes_read, time.perf_counter() - started, tuple(notes), tuple(moe_runs),
        against=options.against.label if options.against is not None else None))


def plan_for(module: LinearModule, layer: LayerReport, ckpt: Checkpoint, ctx: RoutingContext) -> Plan | None:
    from fp8check.core.routing.integrity import uses_e8m0_scales

    return plan_module(layer, assign(module, ckpt.config.quantization_config), ctx, uses_e8m0_scales(module))


def not_run(module: LinearModule, layer: LayerReport, options: LoadOptions) -> LayerRun:
    reason = layer.errors[0] if layer.errors else f"{layer.scheme} is not an FP8 scheme fp8check runs"
    return LayerRun(name=module.name, kernel=layer.kernel, numerics=None, execution=None, emulated=False,
                    tokens=options.tokens, status="not run",
                    errors=(f"not run: vLLM would not build this layer: {reason}",))


def run_layer(module: LinearModule, layer: LayerReport, ckpt: Checkpoint, ctx: RoutingContext,
              files: CheckpointFiles, options: LoadOptions, out_dtype: torch.dtype) -> LayerRun:
    """One module end to end on one device; every failure becomes the layer's status, never an exception."""
    plan = plan_for(module, layer, ckpt, ctx)
    if plan is None:
        return not_run(module, layer, options)
    base = dict(name=module.name, kernel=layer.kernel, tokens=options.tokens, numerics=plan.numerics)
    before = files.bytes_read
    shards = read_shards(module, files)
    read = files.bytes_read - before
    problems = value_errors(shards)
    if problems:
        return LayerRun(**base, execution=None, emulated=False, status="FAIL", bytes_read=read, errors=tuple(problems))
    fused = fuse(shards, plan)
    stored = shards if options.against is not None else ()  # --against compares the codes as stored
    del shards
    x = activations(module.name, module.input_size, options.tokens, options.seed, out_dtype)
    outcome = execute(plan, fused, x, options.device)
    verdict = judge(module.name, plan, outcome, out_dtype)
    label, emulated = execution_label(plan, outcome.execution, options.device, ctx.platform.kind)
    run = LayerRun(**base, execution=label, emulated=emulated, status=verdict.status, bytes_read=read,
                   rel_error=verdict.rel_error, bound=verdict.bound, processing_error=verdict.processing_error,
                   quant_error=verdict.quant_error, ms=outcome.ms, errors=verdict.errors, warnings=verdict.warnings,
                   notes=fused.notes)
    if options.against is None:
        return run
    against = options.against.compare(module, stored, plan.block, x, outcome.output, verdict.bound)
    return run._replace(against=against, status="FAIL" if against.errors else run.status,
                        errors=run.errors + against.errors)
