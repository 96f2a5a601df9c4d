"""Warnings: a layer that loads, but not as well as it could, or on a condition fp8check could not check.

Errors decide `ok`; warnings never do. `--fail-on warning` turns any warning into exit 1, so each rule here must
name something a person can act on. Every rule's text starts with its code (`slow-fallback: ...`), and
docs/commands.md's warning table (section "Warnings and `--fail-on`") lists each code with when it fires and why.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from fp8check.core.checkpoint.local import Checkpoint, activation_dtype
from fp8check.core.formats.base import Assignment
from fp8check.core.model.layouts import QKV_CLASSES
from fp8check.core.model.modules import ModelLayout
from fp8check.core.model.tp import TPLayout, tp_layout
from fp8check.core.records import InspectOptions, InspectReport, LayerReport, LoadReport
from fp8check.core.routing.integrity import uses_e8m0_scales
from fp8check.core.routing.linear import route
from fp8check.core.vocabulary import Status
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.moe import BACKENDS
from fp8check.kernels.registry import BACKEND_KERNELS, SLOW_FALLBACKS, TABLES, candidates

# load: the relative error of a layer's output against its product with unquantized (model-dtype) activations and
# the checkpoint's own dequantized weight, i.e. what quantizing the activations costs. Measured (load on the CPU,
# N(0, 1) activations): ~2.6 % for every W8A8 strategy on random and compressed-tensors checkpoints (e4m3 keeps 3
# mantissa bits), 4-6 % for FusedMoE experts (two GEMMs); a static input_scale half the right one (activations
# clipped at 2 sigma) 10-12 %, a quarter 38 %. 10 % is ~4x the norm.
QUANT_ERROR_THRESHOLD = 0.10


class Rule(NamedTuple):
    code: str
    when: str
    why: str


RULES = (
    Rule("slow-fallback", "a layer routes to a portable fallback kernel (" + ", ".join(SLOW_FALLBACKS) + ") while "
         "another --linear-backend would route it to a native kernel on this platform",
         "the fallback is slower; the message names the backend and the kernel it would get"),
    Rule("kv-replicated", "TP is larger than the model's KV heads, at a TP the model loads at",
         "vLLM's QKVParallelLinear then gives each rank one KV head, replicated TP/KV times "
         "(num_kv_head_replicas): KV weights and KV cache are duplicated across ranks"),
    Rule("unverified-kernel", "the chosen kernel has conditions fp8check inferred rather than read from vLLM's "
         "source (`verified: false`), or a kernel refused before it was refused by such a condition on the layer "
         "(a refusal for the platform alone does not count)",
         "the route may differ from vLLM's; `fp8check crosscheck` against the installed vLLM settles it"),
    Rule("quant-error", f"load: a layer's quantization error is above {QUANT_ERROR_THRESHOLD:.0%}",
         "FP8 activations normally cost ~2.6 %; more means static input scales that clip or waste the FP8 range"),
)


def with_warnings(report: InspectReport, ckpt: Checkpoint, options: InspectOptions, layout: ModelLayout,
                  ctx: RoutingContext) -> InspectReport:
    """The report with every inspect rule's warnings added to its layers, FusedMoE layers and model (`ctx`: the
    routing context inspect routed with)."""
    alternatives = _faster_backends(report, ckpt, options, layout, ctx)
    layers = tuple(_add(layer, _slow_fallback(layer, alternatives.get(layer.name), report)
                        + _unverified(layer)) for layer in report.layers)
    moes = tuple(_add(moe, _unverified(moe)) for moe in report.moes)
    return report._replace(layers=layers, moes=moes,
                           warnings=report.warnings + tuple(kv_replicated(ckpt.config, report)))


def _add(layer, warnings: list[str]):
    return layer._replace(warnings=layer.warnings + tuple(warnings)) if warnings else layer


def kv_replicated(config, report: InspectReport) -> list[str]:
    """QKVParallelLinear (linear.py): tp_size >= total_num_kv_heads -> num_kv_head_replicas = tp / kv."""
    kv = config.num_key_value_heads or config.num_attention_heads
    if not kv or report.tp <= kv or not any(layer.layer_type in QKV_CLASSES for layer in report.layers):
        return []
    if not report.ok:  # decided by errors alone, before any warning: vLLM refuses the model here (it says why)
        return []
    without = [tp for tp in report.tp_sizes_ok if tp <= kv]
    return [f"kv-replicated: the model has {kv} KV heads and TP is {report.tp}: vLLM's QKVParallelLinear gives each "
            f"rank one KV head, replicated on {report.tp // kv} ranks (num_kv_head_replicas), so KV weights and the "
            f"KV cache are stored {report.tp // kv} times"
            + (f"; TP sizes that load without replication: {', '.join(map(str, without))}" if without else "")]


@lru_cache(maxsize=None)
def _kernel_verified() -> dict[str, bool]:
    """Every linear and FusedMoE kernel class by vLLM name -> whether fp8check read its conditions from vLLM."""

    flags = {k.name: k.verified for table in TABLES.values() for row in table.values() for k in row}
    flags.update((e.name, e.verified) for row in BACKENDS.values() for e in row)
    return flags


def _unverified(layer) -> list[str]:
    if not layer.kernel:
        return []
    # A refusal by platform gating (the hardware an unverified kernel is built for, its switch) is not counted:
    # only a layer condition fp8check inferred could have let that kernel take the layer instead.
    inferred = [r.kernel for r in layer.rejected if not r.verified and not r.by_platform]
    chosen = not _kernel_verified().get(layer.kernel, True)
    if not inferred and not chosen:
        return []
    parts = ([f"{layer.kernel} itself"] if chosen else []) + [f"{name} (refused before it)" for name in inferred]
    return [f"unverified-kernel: the choice of {layer.kernel} rests on conditions fp8check inferred rather than read "
            f"from vLLM's source: {', '.join(parts)}; `fp8check crosscheck` against an installed vLLM confirms it"]


def _slow_fallback(layer: LayerReport, alternative: tuple[str, str, str] | None, report: InspectReport) -> list[str]:
    if alternative is None or layer.kernel is None:
        return []
    backend, kernel, quantization = alternative
    return [f"slow-fallback: {layer.kernel} is {SLOW_FALLBACKS[layer.kernel]}; on {report.platform.label} "
            f"--linear-backend {backend} (or --kernel-config "
            f"'{{\"linear_backend_per_quant\": {{\"{quantization}\": \"{backend}\"}}}}') routes this layer to {kernel}"]


def _faster_backends(report: InspectReport, ckpt: Checkpoint, options: InspectOptions, model_layout: ModelLayout,
                     ctx: RoutingContext) -> dict[str, tuple[str, str, str]]:
    """For each layer on a slow fallback: the highest-priority kernel of the platform's table that is no fallback
    and that some --linear-backend selects for this layer at this TP, with that backend. Routing is re-run only for
    those layers, so the common case costs nothing."""
    slow = {layer.name: layer for layer in report.layers if layer.kernel in SLOW_FALLBACKS and not layer.errors}
    if not slow:
        return {}
    out_dtype = activation_dtype(ckpt.config)
    owner = {kernel: backend for backend, kernels in BACKEND_KERNELS.items() for kernel in kernels}

    def first_native(assignment: Assignment, quantization: str, layout: TPLayout, e8m0: bool, dtype: str
                     ) -> tuple[str, str, str] | None:
        for kernel in candidates(quantization, ctx):
            backend = owner.get(kernel.name)
            if kernel.name in SLOW_FALLBACKS or backend is None:
                continue
            result = route(assignment, layout, ctx, options.backend._replace(
                per_quant=options.backend.per_quant + ((quantization, backend),)), dtype, e8m0)
            if result.choice and result.choice.kernel == kernel.name and not result.errors:
                return backend, kernel.name, quantization
        return None

    answers: dict[tuple, tuple[str, str, str] | None] = {}   # identical layers across blocks route alike
    found = {}
    for module in model_layout.linears:
        layer = slow.get(module.name)
        if layer is None or layer.assignment is None or layer.request is None:  # routed to a kernel: both carried
            continue
        layout = tp_layout(module, module.tp_size(options.tp))
        key = (layer.assignment, layer.request.quantization, layout, uses_e8m0_scales(module),
               module.out_dtype or out_dtype)
        if key not in answers:
            answers[key] = first_native(*key)
        answer = answers[key]
        if answer:
            found[module.name] = answer
    return found


# ----------------------------------------------------------------------------------------------------- load

def with_load_warnings(report):
    """A load report whose linear and FusedMoE runs carry the quant-error rule ('ok' runs it fires on become
    'warn'; a FusedMoE run's quant_error is its worst expert's)."""
    return report._replace(runs=tuple(_quant_error(run) for run in report.runs),
                           moe_runs=tuple(_quant_error(run) for run in report.moe_runs))


def _quant_error(run):
    if run.quant_error is None or run.quant_error <= QUANT_ERROR_THRESHOLD or not run.status.ok:
        return run
    return run._replace(status=Status.WARN, warnings=run.warnings + (
        f"quant-error: {run.name}: quantization error {run.quant_error:.1%} is above {QUANT_ERROR_THRESHOLD:.0%} "
        "(FP8 activations usually cost ~2.6 %): its static input_scale clips or wastes the FP8 range; recalibrate it "
        "or export the layer with dynamic activations",))


def all_warnings(report) -> list[str]:
    """Every warning of an inspect or load report: model, linear, FusedMoE and attention layers, and load runs."""
    inspected = report.inspect if isinstance(report, LoadReport) else report
    found = list(inspected.warnings)
    found += [w for layer in inspected.layers + inspected.moes + inspected.attention for w in layer.warnings]
    if isinstance(report, LoadReport):
        found += [w for run in report.runs + report.moe_runs + report.attention_runs for w in run.warnings]
    return found


def warnings_as_failures(report):
    """The report as `--fail-on warning` judges it: every warning joins the errors of its testcase (the
    model's, a module's, a load run's, which also gets its inspect layer's), so the dashboard agrees with the exit
    code. JUnit renders it; the table and Markdown show warnings as warnings under a verdict that says --fail-on
    warning fails on them, and the JSON keeps errors and warnings apart."""
    inspected = report.inspect if isinstance(report, LoadReport) else report

    def fail(entry):
        return entry._replace(errors=entry.errors + entry.warnings)

    failed = inspected._replace(errors=inspected.errors + inspected.warnings,
                                layers=tuple(fail(layer) for layer in inspected.layers),
                                moes=tuple(fail(moe) for moe in inspected.moes),
                                attention=tuple(fail(a) for a in inspected.attention))
    if not isinstance(report, LoadReport):
        return failed
    found = {entry.name: entry.warnings for entry in inspected.layers + inspected.moes + inspected.attention}

    def fail_run(run):
        return run._replace(errors=run.errors + found.get(run.name, ()) + run.warnings)

    return report._replace(inspect=failed, runs=tuple(fail_run(run) for run in report.runs),
                           moe_runs=tuple(fail_run(run) for run in report.moe_runs),
                           attention_runs=tuple(fail_run(run) for run in report.attention_runs))
