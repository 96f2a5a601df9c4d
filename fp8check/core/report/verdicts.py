"""The one-line answer of every command that judges a checkpoint: inspect, load (with its status counts), matrix
and diff. Tables, Markdown and the JSON documents all print these same lines. Also here, in one place: which
modules fp8check does not judge and why (not_judged_reason: laid out by guess, a --moe-backend not modelled, or a
method named but not modelled), and what --fail-on fails a report with no error on (failing)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fp8check.core.model.layouts import GENERIC, unserved_reason
from fp8check.core.records import InspectReport, LoadReport, MoEReport
from fp8check.core.routing.warnings import all_warnings
from fp8check.core.vocabulary import Status

if TYPE_CHECKING:  # annotations only
    from fp8check.core.planning.diff import DiffReport
    from fp8check.core.planning.matrix import Matrix

# --fail-on's values, each stricter than the one before: errors; also modules not judged; also any warning.
FAIL_ON = ("error", "not-judged", "warning")


def not_judged_reason(row, report: InspectReport) -> str | None:
    """Why fp8check does not judge a linear module or FusedMoE of `report` (None: it does). Its layout was guessed
    by the generic name rules: config.json's architectures are not in fp8check.core.model.layouts' table, or the
    release registers none of them (unserved_reason); or a FusedMoE takes a --moe-backend fp8check does not model
    for its method (MoEReport.unjudged); or vLLM quantizes it with a method fp8check names but does not model (no
    kernel, no error)."""
    if row.layout == GENERIC:
        if report.unlaid:
            return f"laid out by guess: {report.unlaid}"
        architectures = report.architectures
        unserved = unserved_reason(architectures, report.profile, report.expert_counts)
        if unserved:
            return f"laid out by guess: {unserved}"
        return (f"laid out by guess: architecture {'/'.join(architectures)} is not in fp8check's table"
                if architectures else "laid out by guess: config.json names no architecture of fp8check's table")
    if isinstance(row, MoEReport) and row.unjudged:
        return row.unjudged
    if row.ok and row.kernel is None and not row.scheme.startswith("Unquantized") and not _own_unquantized(row):
        return f"method {row.scheme} is named, not modelled"
    return None


def _own_unquantized(row) -> bool:
    """A linear module vLLM leaves unquantized under a model file's own UnquantizedLinearMethod subclass
    (Arch.own_linear_method: its assignment has no method)."""
    assignment = getattr(row, "assignment", None)
    return assignment is not None and assignment.method is None


def not_judged(report: InspectReport) -> list:
    """Linear modules and FusedMoE layers fp8check does not judge (not_judged_reason)."""
    return [row for row in report.layers + report.moes if not_judged_reason(row, report)]


def not_judged_text(report: InspectReport) -> str:
    """The verdict's clauses on modules not judged ('' when every module is judged): how many were laid out by
    guess and why, how many FusedMoE take a --moe-backend fp8check does not model, how many have a method
    fp8check names but does not model."""
    rows = not_judged(report)
    guessed = [row for row in rows if row.layout == GENERIC]
    forced = [row for row in rows if row.layout != GENERIC and isinstance(row, MoEReport) and row.unjudged]
    named = [row for row in rows if row.layout != GENERIC and not (isinstance(row, MoEReport) and row.unjudged)]
    text = (f"; {len(guessed)} of {len(report.layers) + len(report.moes)} modules not judged "
            f"({not_judged_reason(guessed[0], report)})" if guessed else "")
    if forced:
        text += f"; {len(forced)} FusedMoE not judged ({forced[0].unjudged})"
    if named:
        text += (f"; {len(named)} not judged ({', '.join(sorted({r.scheme for r in named}))}: a method "
                 "fp8check names but does not model, see the notes)")
    return text


def not_judged_as_failures(report):
    """The report as `--fail-on not-judged` judges it: each module not judged (and its load run) gets an error,
    'not judged: <why>', so that JUnit's testcases agree with the exit code."""
    inspected = report.inspect if isinstance(report, LoadReport) else report
    reasons = {row.name: not_judged_reason(row, inspected) for row in not_judged(inspected)}

    def fail(entry):
        reason = reasons.get(entry.name)
        return entry._replace(errors=entry.errors + (f"not judged: {reason}",)) if reason else entry

    failed = inspected._replace(layers=tuple(map(fail, inspected.layers)), moes=tuple(map(fail, inspected.moes)))
    if not isinstance(report, LoadReport):
        return failed
    return report._replace(inspect=failed, runs=tuple(map(fail, report.runs)),
                           moe_runs=tuple(map(fail, report.moe_runs)))


def failing(report, fail_on: str = "error") -> tuple[int, int]:
    """(warnings, modules not judged) that fail a report with no error under --fail-on `fail_on` (one of FAIL_ON),
    each 0 where it does not fail on them; (0, 0) for a report with an error, which fails anyway."""
    if not report.ok:
        return 0, 0
    strictness = FAIL_ON.index(fail_on)
    inspected = report.inspect if isinstance(report, LoadReport) else report
    return (len(all_warnings(report)) if strictness >= FAIL_ON.index("warning") else 0,
            len(not_judged(inspected)) if strictness >= FAIL_ON.index("not-judged") else 0)


def failing_text(warned: int, unjudged: int) -> str:
    """'1 warning and 8 modules not judged': what `failing` counted."""
    parts = [f"{warned} warning{'' if warned == 1 else 's'}" if warned else "",
             f"{unjudged} module{'' if unjudged == 1 else 's'} not judged" if unjudged else ""]
    return " and ".join(part for part in parts if part)


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


def _judged(report, ok_text: str, fail_on: str) -> str:
    """A report with no error as --fail-on `fail_on` judges it: its OK line, or FAIL and why."""
    counts = failing(report, fail_on)
    return f"FAIL: {failing_text(*counts)} (--fail-on {fail_on}); otherwise {ok_text}" if any(counts) else ok_text


def inspect_verdict(report: InspectReport, fail_on: str = "error") -> str:
    """`fail_on`: --fail-on (FAIL_ON), under which a report with no error fails on modules not judged (not-judged)
    and also on warnings (warning)."""
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
        text += not_judged_text(report)
        warned = len(all_warnings(report))
        return _judged(report, text + (f"; {warned} warning(s) (--fail-on warning fails on them)"
                                       if warned and fail_on != "warning" else ""), fail_on)
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
    return f"FAIL: {' and '.join(parts)} on {where}{not_judged_text(report)}"


def attention_summary(layers) -> str:
    """'64 attention layers via FLASH_ATTN, KV cache fp8_e4m3 (float8_e4m3fn)': backends and cache dtypes."""
    backends = sorted({a.backend for a in layers if a.backend})
    caches = sorted({a.kv_cache_dtype if a.kv_cache_dtype == a.cache_dtype else f"{a.kv_cache_dtype} "
                     f"({a.cache_dtype})" for a in layers})
    return (f"{len(layers)} attention layer{'' if len(layers) == 1 else 's'}"
            + (f" via {', '.join(backends)}" if backends else "") + f", KV cache {', '.join(caches)}")


def load_summary(report: LoadReport) -> dict[Status, int]:
    """Statuses of every linear module and FusedMoE layer load selected."""
    counts = dict.fromkeys(Status, 0)
    for run in report.runs + report.moe_runs:
        counts[run.status] += 1
    return counts


def load_verdict(report: LoadReport, fail_on: str = "error") -> str:
    """`fail_on` as inspect_verdict's. Modules laid out by guess still run; the verdict says how many there are."""
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
        warned = f", {counts[Status.WARN]} with warnings" if counts[Status.WARN] else ""
        agree = counts[Status.OK] + counts[Status.WARN]
        text = (f"OK: {agree} modules{moes} ran and agree with their fp32 reference{warned}"
                f"{kv} ({where}{said}){not_judged_text(report.inspect)}")
        return _judged(report, text, fail_on)
    ran = {run.name for run in report.moe_runs}
    bad_moes = sum(1 for moe in report.inspect.moes if not moe.ok and moe.name not in ran)
    parts = [f"{counts[Status.FAIL]} failed" if counts[Status.FAIL] else "",
             f"{counts[Status.NOT_RUN]} not run" if counts[Status.NOT_RUN] else "",
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
    return f"FAIL: {'; '.join(p for p in found if p)} ({where}{said}){not_judged_text(report.inspect)}"


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
    stops = sum(c.copies for c in report.changes if c.stops_loading)
    starts = sum(c.copies for c in report.changes if not c.before.loads and c.after.loads)
    moved = sum(c.copies for c in report.changes)
    where = f"{report.platform}, TP={report.tp}" + (" --ep" if report.ep else "")
    text = (f"vLLM {report.old.name} -> {report.new.name} on {where}: {moved} module(s) change, "
            f"{report.unchanged} unchanged; {starts} start loading, {stops} stop loading")
    before, after = report.model_errors
    if after and not before:
        text += f"; the model stops loading ({after[0]})"
    elif before and not after:
        text += "; the model starts loading"
    return ("OK: " if report.ok else "FAIL: ") + text
