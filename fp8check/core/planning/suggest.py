"""Suggestions under a failing verdict, each computed by routing the failing layers again, never canned.

- TP: the TP sizes the report's own sweep found loading (with and without --ep).
- --linear-backend / --kernel-config: every backend vLLM accepts that names a kernel of this platform's tables is
  tried, globally and per quantization key; those that route every failing layer are kept.
- --vllm: every other rule profile is tried; the nearest in which the failing layers route is named, with the
  change that makes the difference found by ablation (fp8check.core.planning.diff.responsible), e.g. "routes from vLLM
  0.28 (PR #50787)".
- a refusal at vLLM's front door (unknown or deprecated method, a platform's allow-list, a --quantization that
  does not match the checkpoint): the --quantization / --allow-deprecated-quantization / --vllm choices that get
  the whole model past it, each confirmed by inspecting again (ptpc_fp8's replacement fp8_per_channel, vLLM
  PR #44132, is one of the online methods tried).
- an attention layer that fails (a --kv-cache-dtype the checkpoint or the platform's backends refuse): the
  --kv-cache-dtype values (fp8, fp8_e5m2, auto) with which every attention layer routes, each by inspecting again.
- an integrity error: the tensor to re-export, as the error names it (FP8 weights under a config.json without
  quantization_config: the config, once). Only a tensor of the checkpoint, or a missing one of a module it has,
  is re-exported: `layer.weight` in vLLM's quoted `assert layer.weight.shape == ...` is neither.
Failing layers are re-routed on the checkpoint cut down to their own tensors (diff.restricted), so a suggestion
costs a fraction of an inspect of the whole model.
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple

from fp8check.core.checkpoint.local import Checkpoint
from fp8check.core.formats.kv_cache import AUTO, FP8_E4M3_VALUES, FP8_E5M2
from fp8check.core.planning.diff import RouteOutcome, checkpoint_prefixes, describe, outcomes, responsible, restricted
from fp8check.core.planning.rows import collapse
from fp8check.core.records import InspectOptions, InspectReport, LinearBackendOption
from fp8check.core.routing.inspect import front_door_of, inspect_checkpoint
from fp8check.core.routing.known_issues import matching
from fp8check.core.targets.profiles import PROFILES, RuleProfile
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.registry import BACKEND_KERNELS, FP8, FP8_BLOCK, W8A16_FP8, candidates

# The online methods a refused --quantization may be swapped for, in the order they are tried, and the removed
# methods whose replacement vLLM names (ROCm's ptpc_fp8 became fp8_per_channel, PR #44132).
ONLINE_ALTERNATIVES = ("fp8_per_channel", "fp8_per_block", "fp8_per_tensor")
REPLACED = {"ptpc_fp8": ("fp8_per_channel", "vLLM's replacement for the removed ptpc_fp8 (PR #44132)")}
# A tensor name as integrity errors spell it (fp8check.core.routing.integrity, moe.integrity): what to re-export,
# when the checkpoint has it or its module (a missing scale) -- not a name inside vLLM's quoted message.
TENSOR = re.compile(r"[\w.\-]+\.(?:weight_scale_inv|weight_scale|input_scale|weight)\b")
# The --kv-cache-dtype values tried when an attention layer fails, in the order they are suggested: an FP8 cache
# (what a failing fp8_* asked for) before the model dtype.
KV_CACHE_ALTERNATIVES = (FP8_E4M3_VALUES[0], FP8_E5M2, AUTO)
# The config.json key a shape error names (fp8check.core.model.shapes): "... from config.json's hidden_size".
CONFIG_KEY = re.compile(r"config\.json's (\w+)")


class Suggestion(NamedTuple):
    kind: str                         # "tp" | "ep" | "linear_backend" | "kernel_config" | "vllm" | "quantization"
    #                                   | "kv_cache_dtype" | "known_issue" | "reexport"
    text: str
    options: tuple[str, ...] = ()     # the command-line arguments that apply it (none for a re-export)


def suggest(report: InspectReport, ckpt: Checkpoint, options: InspectOptions) -> tuple[Suggestion, ...]:
    if report.ok:
        return ()
    out = _tp(report)
    failing = routing_failures(report, ckpt)
    if failing:
        subset = restricted(ckpt, checkpoint_prefixes(report, failing))

        def reroute(**changes) -> dict[str, RouteOutcome]:
            return outcomes(inspect_checkpoint(subset, options._replace(**changes)))

        out += _backends(report, options, failing, reroute)
        out += _profiles(report, failing, reroute)
    out += _front_door(report, ckpt, options)
    out += _kv_cache(report, ckpt, options)
    out += [Suggestion("known_issue", f"{issue.id}: {issue.suggestion}" + (f" (fixed by {issue.fix_pr})"
                                                                            if issue.fix_pr else ""))
            for issue, _ in matching(report) if issue.severity == "fail"]
    return tuple(out + _reexports(report, ckpt))


def routing_failures(report: InspectReport, ckpt: Checkpoint) -> set[str]:
    """Modules with an error other than a tensor to re-export (what another backend, TP or release might fix),
    one per collapsed row: its siblings across decoder blocks have the same shapes and route the same way."""
    named = tensor_namer(ckpt)
    return {row.layer.name for row in collapse(report.layers + report.moes)
            if any(named(error) is None for error in row.layer.errors)}


def tensor_namer(ckpt: Checkpoint):
    """error -> the checkpoint tensor it names for re-export, or None: the first TENSOR in it that the checkpoint
    holds, or that a module of the checkpoint lacks (a missing scale). vLLM's messages quoted in an error name
    their own variables (`layer.weight`), never the checkpoint's tensors."""
    modules = {name.rpartition(".")[0] for name in ckpt.tensors}

    def named(error: str) -> str | None:
        return next((name for name in TENSOR.findall(error)
                     if name in ckpt.tensors or name.rpartition(".")[0] in modules), None)

    return named


def _fixed(result: dict[str, RouteOutcome], failing: set[str]) -> bool:
    return all(name in result and result[name].loads for name in failing)


def _tp(report: InspectReport) -> list[Suggestion]:
    out = []
    if report.tp_sizes_ok and report.tp not in report.tp_sizes_ok:
        nearest = min(report.tp_sizes_ok, key=lambda tp: (abs(tp - report.tp), tp))
        sizes = ", ".join(map(str, report.tp_sizes_ok))
        out.append(Suggestion("tp", f"loads at TP {sizes} (not at TP {report.tp}): --tp {nearest}",
                              ("--tp", str(nearest))))
    if report.moes and not report.ep and report.tp in report.tp_sizes_ok_ep:
        out.append(Suggestion("ep", f"loads at TP {report.tp} with --ep (expert parallel: experts split whole "
                                    "across the ranks)", ("--ep",)))
    return out


def platform_backends(options: InspectOptions,
                      quantizations: tuple[str, ...] = (FP8, FP8_BLOCK, W8A16_FP8)) -> list[str]:
    """--linear-backend values that name at least one kernel of this platform's tables under this profile; any
    other value falls back to automatic selection and routes as 'auto'."""
    ctx = RoutingContext.of(options)
    kernels = {k.name for q in quantizations for k in candidates(q, ctx)}
    return [name for name, named in BACKEND_KERNELS.items() if named & kernels]


def _backends(report: InspectReport, options: InspectOptions, failing: set[str], reroute) -> list[Suggestion]:
    out = []
    current = options.backend
    global_fixes = set()
    for name in platform_backends(options):
        if name == current.default:
            continue
        result = reroute(backend=current._replace(default=name))
        if _fixed(result, failing):
            global_fixes.add(name)
            kernels = sorted({result[n].kernel for n in failing if result[n].kernel})
            out.append(Suggestion("linear_backend", f"--linear-backend {name} routes the failing modules "
                                  f"({', '.join(kernels) or 'unquantized'})", ("--linear-backend", name)))
    for quantization in (FP8, FP8_BLOCK, W8A16_FP8):
        for name in platform_backends(options, (quantization,)):
            if name in global_fixes or dict(current.per_quant).get(quantization) == name:
                continue
            per_quant = dict(current.per_quant) | {quantization: name}
            result = reroute(backend=LinearBackendOption(current.default, tuple(sorted(per_quant.items()))))
            if _fixed(result, failing):
                config = json.dumps({"linear_backend_per_quant": per_quant})
                kernels = sorted({result[n].kernel for n in failing if result[n].kernel})
                out.append(Suggestion("kernel_config", f"--kernel-config '{config}' routes the failing modules "
                                      f"({', '.join(kernels)})", ("--kernel-config", config)))
    return out


def _profiles(report: InspectReport, failing: set[str], reroute) -> list[Suggestion]:
    """The nearest newer release in which the failing layers route, and the nearest older one."""
    here = PROFILES.index(report.profile) if report.profile in PROFILES else None
    if here is None:
        return []
    out = []
    newer = list(reversed(PROFILES[:here]))   # nearest first
    older = list(PROFILES[here + 1:])
    for direction, profiles in (("from", newer), ("up to", older)):
        previous = report.profile
        for profile in profiles:
            result = reroute(profile=profile)
            if _fixed(result, failing):
                changes = _why(previous, profile, failing, reroute)
                text = (f"routes {direction} vLLM {profile.name}" + (f" ({changes})" if changes else "")
                        + f": --vllm {profile.name}")
                out.append(Suggestion("vllm", text, ("--vllm", profile.name)))
                break
            previous = profile
    return out


def _why(before: RuleProfile, fixed: RuleProfile, failing: set[str], reroute) -> str:
    """The changes between the last failing profile and the first routing one that make the difference."""
    found = responsible(lambda p: reroute(profile=p), before, fixed, failing)
    changes = sorted({c for name in failing for c in found[name]}, key=str)
    return ", ".join(describe(c) for c in changes)


def _front_door(report: InspectReport, ckpt: Checkpoint, options: InspectOptions) -> list[Suggestion]:
    """When vLLM refuses the method before building a layer: the flags that get past it, each checked by a
    whole inspect (the front door's errors are model-wide; a candidate must also leave every layer routing)."""
    if not report.front_door_errors:
        return []
    candidates: list[tuple[str, tuple[str, ...], dict]] = []
    if any("deprecated" in error for error in report.front_door_errors):
        candidates.append(("--allow-deprecated-quantization lets it past vLLM's deprecation gate",
                           ("--allow-deprecated-quantization",), {"allow_deprecated_quantization": True}))
    if options.quantization is not None:
        if ckpt.config.raw_quantization_config is not None:
            candidates.append(("drop --quantization: vLLM detects the checkpoint's own method", (),
                               {"quantization": None}))
        else:
            replacement, why = REPLACED.get(options.quantization, (None, ""))
            for method in ONLINE_ALTERNATIVES:
                if method != options.quantization:
                    what = f"{why}: it" if method == replacement else "it"
                    candidates.append((f"--quantization {method}: {what} quantizes this unquantized checkpoint at "
                                       "load", ("--quantization", method), {"quantization": method}))
    out = []
    for text, flags, changes in candidates:
        if inspect_checkpoint(ckpt, options._replace(**changes)).ok:
            out.append(Suggestion("quantization", text, flags))
    here = PROFILES.index(options.profile) if options.profile in PROFILES else 0
    for profile in sorted(PROFILES, key=lambda p: abs(PROFILES.index(p) - here)):  # the nearest release first
        if profile != options.profile and not front_door_of(ckpt, options._replace(profile=profile)).errors:
            if inspect_checkpoint(ckpt, options._replace(profile=profile)).ok:
                out.append(Suggestion("vllm", f"vLLM {profile.name} accepts the quantization method here: "
                                      f"--vllm {profile.name}", ("--vllm", profile.name)))
                break
    return out


def _kv_cache(report: InspectReport, ckpt: Checkpoint, options: InspectOptions) -> list[Suggestion]:
    """When an attention layer fails: each --kv-cache-dtype of KV_CACHE_ALTERNATIVES (not the one given, nor its
    alias) with which every attention layer routes and no model-level error is added, checked by a whole inspect."""
    if all(layer.ok for layer in report.attention):
        return []
    given = FP8_E4M3_VALUES[0] if options.kv_cache_dtype in FP8_E4M3_VALUES else options.kv_cache_dtype
    out = []
    for value in KV_CACHE_ALTERNATIVES:
        if value == given:
            continue
        again = inspect_checkpoint(ckpt, options._replace(kv_cache_dtype=value))
        if all(layer.ok for layer in again.attention) and set(again.errors) <= set(report.errors):
            cached = ", ".join(sorted({layer.cache_dtype for layer in again.attention}))
            out.append(Suggestion("kv_cache_dtype", f"--kv-cache-dtype {value} routes every attention layer (cached "
                                  f"as {cached})", ("--kv-cache-dtype", value)))
    return out


def _reexports(report: InspectReport, ckpt: Checkpoint) -> list[Suggestion]:
    """One line per tensor an integrity error names (missing, mis-shaped, wrong dtype, index mismatch), its
    error being printed above it; FP8 weights under a config.json without quantization_config are one line for the
    whole checkpoint, since every such tensor has the same cause."""
    layers = report.layers + report.moes
    if report.quant_method is None and any(layer.weight_dtype.startswith("F8") for layer in layers):
        missing = ("no quantization_config" if ckpt.config.architectures
                   else "neither quantization_config nor architectures")
        return [Suggestion("reexport", f"config.json has {missing}, so vLLM would load the FP8 weights "
                                       "unscaled: export the checkpoint again with its quantizer's config.json")]
    seen: list[str] = []
    keys: dict[str, list[str]] = {}  # config.json key -> tensors whose shape disagrees with it (fp8check...shapes)
    named = tensor_namer(ckpt)
    for error in [e for layer in layers for e in layer.errors] + list(report.errors):
        name = named(error)
        disagrees = CONFIG_KEY.findall(error) if "but vLLM creates" in error else []
        for key in disagrees:
            keys.setdefault(key, []).append(name or "")
        if name and name not in seen and not disagrees:
            seen.append(name)
    out = [Suggestion("reexport", f"config.json's {key} disagrees with {len(names)} tensor(s) (first: {names[0]}): "
                                  "make config.json the exported model's, or export the checkpoint again")
           for key, names in keys.items()]
    return out + [Suggestion("reexport", f"re-export {name}") for name in seen]
