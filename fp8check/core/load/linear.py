"""Linear layers in `load`: the recipe of the kernel inspect routed each module to, and one module through read ->
value checks -> fuse -> run -> judge, on one device (run_layer) or on --tp ranks (run_layers_parallel: each rank
reads and runs only its slice, the ranks' outputs are combined as the model combines them, and rank 0 judges the
result against the unsharded fp32 reference; those reference bytes are counted apart from the rank's own slice).
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from fp8check.core.formats.base import UNQUANTIZED
from fp8check.core.load import gemm
from fp8check.core.load.gemm import MAX_SCALE, Fused, Recipe
from fp8check.core.load.parallel import RankResult, any_rank_failed, combine, merged, run_parallel
from fp8check.core.load.ranks import RankContext
from fp8check.core.load.weights import CheckpointFiles, read_rank_shards, read_shards, value_errors
from fp8check.core.model.modules import LinearModule
from fp8check.core.model.sharding import RankReads, ShardingError, rank_reads
from fp8check.core.model.tp import tp_layout
from fp8check.core.progress import module_progress
from fp8check.core.records import LayerReport, LayerRun, LoadOptions, RankFigures
from fp8check.core.routing.linear import UNQUANTIZED_EMBEDDING
from fp8check.core.vocabulary import Status, Strategy
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.mxfp8 import MX_W8A8, MXFP8, MXFP8_BLOCK_SIZE
from fp8check.kernels.numerics import gemm as numerics
from fp8check.kernels.numerics.gemm import LinearWeights
from fp8check.kernels.registry import kernel_numerics

# ------------------------------------------------------------------------------------------------- recipes

def layer_recipe(layer: LayerReport, ctx: RoutingContext) -> Recipe | None:
    """The recipe of the kernel inspect routed this module to, from the assignment and kernel request the report
    carries; None when vLLM would not build it."""
    if layer.errors:
        return None
    if layer.scheme in (UNQUANTIZED, UNQUANTIZED_EMBEDDING):
        return Recipe(numerics.UNQUANTIZED, None, None)
    assignment, request = layer.assignment, layer.request
    if layer.kernel is None or assignment is None or request is None:
        return None
    quantization, activation_key = request.quantization, request.activation_key
    kind = kernel_numerics(layer.kernel)
    if kind is None:  # every kernel of the tables has its numerics class (test_kernel_registry)
        return None
    online = gemm.online_mode(ctx.profile) if assignment.online else None
    if quantization == MXFP8:  # 1 x 32 groups of the weight, each with its E8M0 scale
        return Recipe(kind, Strategy.GROUP, (1, MXFP8_BLOCK_SIZE),
                      activation=activation_key if kind == MX_W8A8 else None, online=online)
    return Recipe(kind, assignment.strategy, assignment.block,
                  activation=activation_key if kind in (numerics.SCALED_MM, numerics.BLOCK) else None, online=online)


def layer_numerics(layer: LayerReport) -> str | None:
    return kernel_numerics(layer.kernel) if layer.kernel else None


# A module whose weight is stored [in, out] (LinearModule.transposed): its reads are not vLLM's rows.
TRANSPOSED_NOT_RUN = ("not run: its weight is stored [in, out] and vLLM's loader transposes it (gpt2.py "
                      "_transpose_conv1d), which fp8check's reader does not")


def not_run(module: LinearModule, layer: LayerReport, options: LoadOptions) -> LayerRun:
    reason = layer.errors[0] if layer.errors else f"{layer.scheme} is not an FP8 scheme fp8check runs"
    return LayerRun(name=module.name, kernel=layer.kernel, numerics=None, execution=None, emulated=False,
                    tokens=options.tokens, status=Status.NOT_RUN,
                    errors=(f"not run: vLLM would not build this layer: {reason}",))


# ----------------------------------------------------------------------------------------------- operands

class Prepared(NamedTuple):
    """One module's operands on the device: weights and activations (quantized as the scheme says)."""

    weights: LinearWeights
    x: torch.Tensor
    x_q: torch.Tensor | None
    x_s: torch.Tensor | None
    x_ref: torch.Tensor                # fp32 activations as the kernel sees them (dequantized when quantized)


class References(NamedTuple):
    """The fp32 products a module's output is judged against."""

    reference: torch.Tensor            # the same quantized activations x the processed weight
    checkpoint: torch.Tensor | None    # ... x the checkpoint's own weight (None: unquantized, nothing processed)
    unquantized: torch.Tensor          # model-dtype activations x the checkpoint's own weight


def fuse_linear(shards, recipe: Recipe, reduce_amax=None) -> Fused:
    """gemm.fuse with vLLM's rules for linear layers: requantize_with_max_scale, static input scales' max."""
    return gemm.fuse(shards, recipe, gemm.shards_input_scale(shards), MAX_SCALE, reduce_amax)


def _online_amax_reduction(recipe: Recipe, reads: RankReads, group):
    """amax_for_tp_weight_quant on a rank: an all-reduce (max) where the rank's slice is sharded along a dimension
    the amax reduces over (row-parallel; column-parallel too for a per-tensor amax), from vLLM 0.28 on."""
    if recipe.online != "global" or reads.combine == "none":
        return None
    if recipe.strategy == Strategy.CHANNEL and reads.combine != "all_reduce":
        return None
    return gemm.max_all_reduce(group)


def prepare(recipe: Recipe, fused: Fused, x: torch.Tensor, device: torch.device,
            input_splits: tuple[tuple[int, int], ...] | None = None) -> Prepared:
    """Operands on `device`. `input_splits`: the input columns each TP rank of a row-parallel layer quantizes on
    its own (vLLM quantizes a rank's activation slice, so its dynamic scales are the slice's), for the reference."""
    x = x.to(device)
    w = gemm.on_device(fused.weights, device)
    x_q, x_s, x_ref = gemm.quantize(x, recipe, w.input_scale)
    if recipe.activation is not None and input_splits:
        x_ref = torch.cat([gemm.quantize(x[:, a:b], recipe, w.input_scale)[2] for a, b in input_splits], dim=1)
    return Prepared(w, x, x_q, x_s, x_ref)


def run_kernel(recipe: Recipe, fused: Fused, p: Prepared, add_bias: bool = True, with_references: bool = False
               ) -> tuple[numerics.Execution, float]:
    """The routed kernel's numerics, timed; the bias joins the output in the model dtype, as the GEMM adds it.
    `with_references`: let an fp32 emulation carry the model-dtype activations in its own pass (see references())."""
    device = p.x.device
    also = p.x.float() if with_references and fused.checkpoint is None and recipe.activation is not None else None
    start = gemm.clock(device)
    execution = gemm.run_recipe(recipe, p.weights, p.x, p.x_q, p.x_s, also)
    if add_bias and fused.bias is not None:
        execution = execution._replace(output=execution.output + fused.bias.to(execution.output))
    return execution, (gemm.clock(device) - start) * 1000


def _reference_rows(recipe: Recipe, p: Prepared) -> torch.Tensor:
    """The fp32 activations of the reference products, stacked: the quantized ones, then (when activations are
    quantized) the model-dtype ones for the quantization error."""
    return p.x_ref if recipe.activation is None else torch.cat([p.x_ref, p.x.float()])


def references(recipe: Recipe, fused: Fused, p: Prepared, execution: numerics.Execution | None = None) -> References:
    """The fp32 products (numerics.fp32_products: the weight converted a cache-sized chunk at a time), the
    activations stacked so that one pass over each weight serves every product (the weight is what costs).

    An fp32 emulation of the kernel (run_kernel(with_references=True)) has already computed both: its unrounded
    output is the fp32 product of the same quantized operands, i.e. the reference, and the model-dtype rows rode
    along in its pass. What is judged there is then the kernel's rounding into the output dtype (and that nothing
    overflows it); on a device kernel, everything the kernel does."""
    m = p.x.shape[0]
    bias = 0.0 if fused.bias is None else fused.bias.to(p.x.device).float()
    w = p.weights
    if recipe.numerics == numerics.UNQUANTIZED:
        reference = numerics.fp32_products(p.x_ref, w.weight, None, None) + bias
        return References(reference, None, reference)
    if fused.checkpoint is None:
        if execution is not None and execution.exact is not None and (
                execution.also is not None or recipe.activation is None):
            reference = execution.exact + bias
            unquantized = reference if execution.also is None else execution.also + bias
            return References(reference, reference, unquantized)
        products = numerics.fp32_products(_reference_rows(recipe, p), w.weight, w.scale, w.block) + bias
        return References(products[:m], products[:m], products[-m:])
    reference = numerics.fp32_products(p.x_ref, w.weight, w.scale, w.block) + bias
    original = fused.checkpoint
    products = numerics.fp32_products(torch.cat([p.x_ref, p.x.float()]), original.weight.to(p.x.device),
                                      None if original.scale is None else original.scale.to(p.x.device), None) + bias
    return References(reference, products[:m], products[m:])


def verdict(name: str, recipe: Recipe, output: torch.Tensor, refs: References, out_dtype: torch.dtype
            ) -> gemm.Verdict:
    processing = None if refs.checkpoint is None else gemm.relative_error(refs.reference, refs.checkpoint)
    return gemm.judge(name, recipe, out_dtype, output, (("", output, refs.reference),), processing, MAX_SCALE,
                      gemm.relative_error(output, refs.unquantized))


def _layer_run(module: LinearModule, kernel: str | None, recipe: Recipe, v: gemm.Verdict, execution, ms, device,
               platform_kind: str, tokens: int, notes: tuple[str, ...], bytes_read: int = 0) -> LayerRun:
    label, emulated = gemm.execution_label(recipe, execution, device, platform_kind)
    return LayerRun(name=module.name, kernel=kernel, numerics=recipe.numerics, execution=label, emulated=emulated,
                    tokens=tokens, status=v.status, bytes_read=bytes_read, rel_error=v.rel_error, bound=v.bound,
                    processing_error=v.processing_error, quant_error=v.quant_error, ms=ms, errors=v.errors,
                    warnings=v.warnings, notes=notes)


# ---------------------------------------------------------------------------------------------- one device

def run_layer(module: LinearModule, layer: LayerReport, recipe: Recipe | None, files: CheckpointFiles,
              options: LoadOptions, platform_kind: str, out_dtype: torch.dtype) -> LayerRun:
    """One module end to end on one device; every failure becomes the layer's status, never an exception."""
    if recipe is None:
        return not_run(module, layer, options)
    if module.transposed:
        return not_run(module, layer, options)._replace(errors=(TRANSPOSED_NOT_RUN,))
    before = files.bytes_read
    shards = read_shards(module, files)
    read = files.bytes_read - before
    problems = value_errors(shards)
    if problems:
        return LayerRun(name=module.name, kernel=layer.kernel, numerics=recipe.numerics, execution=None,
                        emulated=False, tokens=options.tokens, status=Status.FAIL, bytes_read=read,
                        errors=tuple(problems))
    fused = fuse_linear(shards, recipe)
    stored = shards if options.against is not None else ()  # --against compares the codes as stored
    del shards
    x = gemm.activations(module.name, module.input_size, options.tokens, options.seed, out_dtype)
    p = prepare(recipe, fused, x, options.device)
    execution, ms = run_kernel(recipe, fused, p, with_references=True)
    output = execution.output
    v = verdict(module.name, recipe, output, references(recipe, fused, p, execution), out_dtype)
    run = _layer_run(module, layer.kernel, recipe, v, execution, ms, options.device, platform_kind, options.tokens,
                     fused.notes, read)
    if options.against is None:
        return run
    against = options.against.compare(module, stored, recipe.block, x, output, v.bound)
    return run._replace(against=against, status=Status.FAIL if against.errors else run.status,
                        errors=run.errors + against.errors)


# ---------------------------------------------------------------------------------------------- --tp ranks

class RankJob(NamedTuple):
    """What every rank gets (pickled once, sent to each rank's fresh interpreter: fp8check.core.load.ranks)."""

    folder: str
    modules: tuple[LinearModule, ...]
    kernels: tuple[str | None, ...]
    recipes: tuple[Recipe | None, ...]
    reads: tuple[tuple[RankReads, ...] | None, ...]   # per module, every rank's reads
    platform_kind: str
    tokens: int
    seed: int
    out_dtype: torch.dtype
    quiet: bool


def run_layers_parallel(folder: str, modules: list[LinearModule], layers: dict[str, LayerReport],
                        recipes: dict[str, Recipe | None], platform_kind: str, options: LoadOptions,
                        out_dtype: torch.dtype) -> list[LayerRun]:
    """Run the modules on options.inspect.tp ranks; a rank that fails, dies or hangs is a one-line input error."""
    tp = options.inspect.tp
    kept, reads, refused = [], [], {}
    for module in modules:  # every rank's reads are found before any process starts
        recipe = recipes[module.name]
        try:
            if recipe and module.transposed:
                recipe, refused[module.name] = None, TRANSPOSED_NOT_RUN
            every = recipe and tuple(rank_reads(module, tp_layout(module, tp), r, recipe.block) for r in range(tp))
        except ShardingError as exc:
            recipe, every, refused[module.name] = None, None, f"not run: vLLM would fail loading it: {exc}"
        kept.append(recipe)
        reads.append(every)
    job = RankJob(folder, tuple(modules), tuple(layers[m.name].kernel for m in modules), tuple(kept), tuple(reads),
                  platform_kind, options.tokens, options.seed, out_dtype, options.quiet)
    results = run_parallel(run_rank, job, options)
    runs = []
    for i, module in enumerate(modules):
        if kept[i] is None:
            run = not_run(module, layers[module.name], options)
            runs.append(run._replace(errors=(refused[module.name],)) if module.name in refused else run)
        else:
            runs.append(merged([result[i] for result in results]))
    return runs


def run_rank(rank: RankContext, job: RankJob) -> list[RankResult | None]:
    """One rank: every module in order, in step with the others (every rank joins every collective)."""
    device = torch.device(rank.device)
    files = CheckpointFiles(job.folder)
    reference_files = CheckpointFiles(job.folder)
    results: list[RankResult | None] = []
    show = rank.rank == 0 and not job.quiet
    with module_progress(not show) as progress:
        for i, (module, recipe, every) in enumerate(zip(job.modules, job.recipes, job.reads)):
            if progress:
                progress(module.name, i, len(job.modules), files.bytes_read)
            results.append(None if recipe is None or every is None else
                           _run_module(rank, i, recipe, every, job, device, files, reference_files))
            files.release()
            reference_files.release()
    return results


def _run_module(rank: RankContext, i: int, recipe: Recipe, every: tuple[RankReads, ...], job: RankJob,
                device: torch.device, files: CheckpointFiles, reference_files: CheckpointFiles) -> RankResult:
    module, kernel = job.modules[i], job.kernels[i]
    reads = every[rank.rank]
    before = files.bytes_read
    shards = read_rank_shards(reads, files)
    bytes_read = files.bytes_read - before
    errors = tuple(f"rank {rank.rank}: {e}" for e in value_errors(shards))
    x = gemm.activations(module.name, module.input_size, job.tokens, job.seed, job.out_dtype)
    execution, ms = None, None
    if errors:  # every rank must join the same collectives: a rank with bad values joins with zeros
        partial = torch.zeros(x.shape[0], reads.output_width, dtype=job.out_dtype, device=device)
    else:
        fused = fuse_linear(shards, recipe, _online_amax_reduction(recipe, reads, rank.group))
        operands = prepare(recipe, fused, x[:, reads.input_cols[0]:reads.input_cols[1]], device)
        # vLLM adds a row-parallel layer's bias on rank 0 only, before the all-reduce.
        execution, ms = run_kernel(recipe, fused, operands, add_bias=reads.combine != "all_reduce" or reads.adds_bias)
        partial = execution.output
        del fused, operands
    del shards
    joined = combine(reads.combine, partial, rank.group, every, sum(module.output_sizes))
    failed = any_rank_failed(errors, device, rank.group)
    figures = RankFigures(rank.rank, bytes_read, ms)
    if rank.rank != 0:
        return RankResult(figures, errors)
    if failed:
        return RankResult(figures, errors, LayerRun(name=module.name, kernel=kernel, numerics=recipe.numerics,
                                                    execution=None, emulated=False, tokens=job.tokens,
                                                    status=Status.FAIL, errors=errors))
    whole = fuse_linear(read_shards(module, reference_files), recipe)
    splits = tuple(r.input_cols for r in every) if reads.combine == "all_reduce" else None
    v = verdict(module.name, recipe, joined, references(recipe, whole, prepare(recipe, whole, x, device, splits)),
                job.out_dtype)
    return RankResult(figures, errors, _layer_run(module, kernel, recipe, v, execution, ms, device,
                                                  job.platform_kind, job.tokens, whole.notes + reads.notes))
