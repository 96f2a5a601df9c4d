"""The one-line answer of every command that judges a checkpoint: inspect, load (with its status counts), matrix
and diff. Tables, Markdown and the JSON documents all print these same lines."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fp8check.core.records import InspectReport, LoadReport
from fp8check.core.routing.warnings import all_warnings

if TYPE_CHECKING:  # annotations only
    from fp8check.core.planning.diff import DiffReport
    from fp8check.core.planning.matrix import Matrix


def not_judged(report: InspectReport) -> list:
    """Layers and FusedMoE layers vLLM quantizes with a method fp8check does not model (no kernel, no error)."""
    return [row for row in report.layers + report.moes
            if row.ok and row.kernel is None and not row.scheme.startswith("Unquantized")]


def detected(platform) -> tuple[str, str] | None:
    """A platform detected rather than named, read from its label ('auto: cpu', 'device: cuda:0'): where it came
    from ('auto': --platform auto, this host; 'device': load's default, its --device) and what it is; None for a
    platform named by --platform. The one reader of those labels."""
    source, _, kind = platform.label.partition(": ")
    return (source, kind) if kind and source in ("auto", "device") else None


def platform_text(platform) -> str:
    """A platform as people read it: 'h100 (cuda:90)', or for `--platform auto` and load's default (its --device)
    what it is and where it came from: 'cpu (this host, --platform auto)', 'cpu (from --device)'."""
    found = detected(platform)
    if found is None:
        return platform.label
    source, kind = found
    return f"{kind} (this host, --platform auto)" if source == "auto" else f"{kind} (from --device)"


def _warnings_fail(ok_text: str, warned: int) -> str:
    """--fail-on warning on a report with no error: FAIL, and why."""
    return f"FAIL: {warned} warning{'' if warned == 1 else 's'} (--fail-on warning); otherwise {ok_text}"


def inspect_verdict(report: InspectReport, fail_on_warning: bool = False) -> str:
    """`fail_on_warning`: --fail-on warning, under which a report with warnings and no error fails."""
    bad = [layer for layer in report.layers if not layer.ok]
    where = f"{platform_text(report.platform)}, TP={report.tp}, vLLM {report.profile.vllm}"
    if report.ok:
        quantized = sum(1 for layer in report.layers if layer.kernel)
        kernels = sorted({layer.kernel for layer in report.layers if layer.kernel})
        text = f"OK: {len(report.layers)} linear modules route on {where}"
        if kernels:
            text += f" ({quantized} FP8 via {', '.join(kernels)})"
        if report.moes:
            backends = sorted({m.kernel for m in report.moes if m.kernel})
            text += f"; {len(report.moes)} FusedMoE" + (f" via {', '.join(backends)}" if backends else "")
        if report.attention:
            text += f"; {attention_summary(report.attention)}"
        unjudged = not_judged(report)
        if unjudged:
            text += (f"; {len(unjudged)} not judged ({', '.join(sorted({r.scheme for r in unjudged}))}: a method "
                     "fp8check names but does not model, see the notes)")
        warned = len(all_warnings(report))
        if warned and fail_on_warning:
            return _warnings_fail(text, warned)
        return text + (f"; {warned} warning(s) (--fail-on warning fails on them)" if warned else "")
    parts = []
    if bad:
        parts.append(f"{len(bad)} of {len(report.layers)} linear modules fail")
    bad_moes = [m for m in report.moes if not m.ok]
    if bad_moes:
        parts.append(f"{len(bad_moes)} of {len(report.moes)} FusedMoE fail")
    bad_attention = [a for a in report.attention if not a.ok]
    if bad_attention:
        parts.append(f"{len(bad_attention)} of {len(report.attention)} attention layers fail")
    if report.errors:
        parts.append(f"{len(report.errors)} model-level error(s)")
    return f"FAIL: {' and '.join(parts)} on {where}"


def attention_summary(layers) -> str:
    """'64 attention layers via FLASH_ATTN, KV cache fp8_e4m3 (float8_e4m3fn)': backends and cache dtypes."""
    backends = sorted({a.backend for a in layers if a.backend})
    caches = sorted({a.kv_cache_dtype if a.kv_cache_dtype == a.cache_dtype else f"{a.kv_cache_dtype} "
                     f"({a.cache_dtype})" for a in layers})
    return (f"{len(layers)} attention layer{'' if len(layers) == 1 else 's'}"
            + (f" via {', '.join(backends)}" if backends else "") + f", KV cache {', '.join(caches)}")


def load_summary(report: LoadReport) -> dict[str, int]:
    """Statuses of every linear module and FusedMoE layer load selected."""
    counts = {"ok": 0, "warn": 0, "FAIL": 0, "not run": 0}
    for run in report.runs + report.moe_runs:
        counts[run.status] += 1
    return counts


def load_verdict(report: LoadReport, fail_on_warning: bool = False) -> str:
    counts = load_summary(report)
    where = (f"{platform_text(report.inspect.platform)}, TP={report.inspect.tp}, vLLM {report.inspect.profile.vllm}, "
             f"arithmetic on {report.device}")
    emulated = sum(1 for run in report.runs + report.moe_runs if run.emulated)
    said = f"; {emulated} emulated" if emulated else ""
    experts = sum(len(run.experts_run) for run in report.moe_runs)
    moes = f" (of them {len(report.moe_runs)} FusedMoE layers, {experts} experts)" if report.moe_runs else ""
    judged = [run for run in report.attention_runs if run.k_error is not None or run.v_error is not None]
    kv = (f"; {len(judged)} attention KV cache{'' if len(judged) == 1 else 's'} round-trip within their bound"
          if judged else "")  # a cache in the model dtype quantizes nothing: nothing to say
    if report.ok:
        warned = f", {counts['warn']} with warnings" if counts["warn"] else ""
        text = (f"OK: {counts['ok'] + counts['warn']} modules{moes} ran and agree with their fp32 reference{warned}"
                f"{kv} ({where}{said})")
        failing = len(all_warnings(report)) if fail_on_warning else 0
        return _warnings_fail(text, failing) if failing else text
    ran = {run.name for run in report.moe_runs}
    bad_moes = sum(1 for moe in report.inspect.moes if not moe.ok and moe.name not in ran)
    parts = [f"{counts['FAIL']} failed" if counts["FAIL"] else "",
             f"{counts['not run']} not run" if counts["not run"] else "",
             f"{len(report.inspect.errors)} model-level error(s)" if report.inspect.errors else "",
             f"{bad_moes} FusedMoE layer(s) vLLM would refuse" if bad_moes else ""]
    modules = ", ".join(p for p in parts if p)
    total = len(report.runs) + len(report.moe_runs)
    run_kv = {run.name for run in report.attention_runs}
    kv_failed = sum(1 for run in report.attention_runs if not run.ok)
    refused = sum(1 for layer in report.inspect.attention if not layer.ok and layer.name not in run_kv)
    found = [f"{modules} of {total} modules{moes}" if modules else "",
             f"{kv_failed} of {len(report.attention_runs)} attention KV caches failed" if kv_failed else "",
             f"{refused} attention layer(s) vLLM would refuse" if refused else ""]
    return f"FAIL: {'; '.join(p for p in found if p)} ({where}{said})"


def matrix_verdict(result: Matrix) -> str:
    """How many cells load, and where: platforms that load at the same TP sizes named together."""
    loads = [c for c in result.cells if c.ok]
    sizes: dict[str, list[int]] = {}
    for cell in loads:
        sizes.setdefault(cell.platform, []).append(cell.tp)
    alike: dict[tuple[int, ...], list[str]] = {}
    for platform, tps in sizes.items():
        alike.setdefault(tuple(tps), []).append(platform)
    where = "; ".join(f"TP {', '.join(map(str, tps))} on {', '.join(platforms)}" for tps, platforms in alike.items())
    if loads:
        return f"OK: {len(loads)} of {len(result.cells)} platform x TP cells load (vLLM {result.vllm}): {where}"
    return f"FAIL: none of {len(result.cells)} platform x TP cells loads (vLLM {result.vllm})"


def diff_verdict(report: DiffReport) -> str:
    stops = sum(c.count for c in report.changes if c.stops_loading)
    starts = sum(c.count for c in report.changes if not c.before.loads and c.after.loads)
    moved = sum(c.count for c in report.changes)
    where = f"{report.platform}, TP={report.tp}" + (" --ep" if report.ep else "")
    text = (f"vLLM {report.old.name} -> {report.new.name} on {where}: {moved} module(s) change, "
            f"{report.unchanged} unchanged; {starts} start loading, {stops} stop loading")
    before, after = report.model_errors
    if after and not before:
        text += f"; the model stops loading ({after[0]})"
    elif before and not after:
        text += "; the model starts loading"
    return ("OK: " if report.ok else "FAIL: ") + text
