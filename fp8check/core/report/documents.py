"""The JSON document of every command, built here and nowhere else: inspect and load (schema_version 1, the
published schema: fp8check/schema), the input-error document, matrix, diff, kernels, env, rules and crosscheck.

Each builder returns plain dicts and lists in the key order the documents have always had; the CLI serializes
them. Names are exactly as vLLM names its classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fp8check.core.planning.diff import profile_changes
from fp8check.core.planning.kernel_matrix import REPRESENTATIVE_K, REPRESENTATIVE_N
from fp8check.core.records import AttentionReport, AttentionRun, InspectReport, LayerReport, LoadReport, MoEReport
from fp8check.core.report.verdicts import load_summary, not_judged_reason
from fp8check.core.targets.profiles import PROFILES, PULL_REQUESTS, WHEEL_CHANGES

if TYPE_CHECKING:  # annotations only
    from fp8check.core.model.memory import MemoryFit
    from fp8check.core.planning.diff import DiffReport
    from fp8check.core.planning.kernel_matrix import KernelTable
    from fp8check.core.planning.matrix import Matrix
    from fp8check.core.targets.envinfo import Probe
    from fp8check.kernels.base import RoutingContext

SCHEMA_VERSION = 1


def inspect_document(report: InspectReport) -> dict:
    """One entry per module, never collapsed."""
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "inspect",
        "ok": report.ok,
        "model": report.model,
        "platform": report.platform.label,
        "platform_kind": report.platform.kind,
        "capability": report.platform.capability,
        "tp": report.tp,
        "vllm": report.profile.name,
        "vllm_versions": report.profile.vllm,
        "includes": sorted(report.profile.includes),
        "linear_backend": report.backend.default,
        "linear_backend_per_quant": dict(report.backend.per_quant),
        "moe_backend": report.moe_backend,
        "assumptions": report.platform.assumptions.relevant(report.platform.kind),
        "quant_method": report.quant_method,
        "errors": list(report.errors),
        "warnings": list(report.warnings),
        "notes": list(report.notes),
        "tp_sizes_ok": list(report.tp_sizes_ok),
        "ep": report.ep,
        "tp_sizes_ok_ep": list(report.tp_sizes_ok_ep),
        "layers": [_layer(layer, report) for layer in report.layers],
        "skipped": [{"prefix": s.prefix, "tensors": len(s.tensors), "weight_dtypes": sorted({t.dtype for t in s.tensors}),
                     "reason": s.reason} for s in report.skipped],
        "moe": [_moe(m, report) for m in report.moes],
        "attention": [_attention(a) for a in report.attention],
        "memory": memory_document(report.memory) if report.memory else None,
        "suggestions": [{"kind": s.kind, "text": s.text, "argv": list(s.options)} for s in report.suggestions],
    }


def _layer(layer: LayerReport | MoEReport, report: InspectReport) -> dict:
    """A linear module's entry of `report` (whose architectures and release say why a guessed layout is
    `not_judged`)."""
    reason = not_judged_reason(layer, report)
    return {
        "name": layer.name,
        "type": layer.layer_type,
        "layout": layer.layout,
        "judged": reason is None,
        "not_judged": reason,
        "shards": list(layer.shards),
        "weight_dtype": layer.weight_dtype,
        "shape": list(layer.shape),
        "strategy": layer.strategy_text,
        "activation": layer.activation,
        "scheme": layer.scheme,
        "kernel": layer.kernel,
        "weight_key": layer.weight_key,
        "activation_key": layer.activation_key,
        "rejected": [{"kernel": r.kernel, "reason": r.reason, "verified": r.verified} for r in layer.rejected],
        "errors": list(layer.errors),
        "warnings": list(layer.warnings),
        "notes": list(layer.notes),
    }


def _moe(moe: MoEReport, report: InspectReport) -> dict:
    """A FusedMoE: the linear fields, plus the experts and how ranks hold them."""
    return {**_layer(moe, report), "backend": moe.backend, "num_experts": moe.num_experts,
            "experts_per_rank": moe.experts_per_rank, "ep": moe.ep, "moe_tp": moe.moe_tp,
            "intermediate_per_rank": moe.intermediate_per_rank, "block": list(moe.block) if moe.block else None}


def _attention(layer: AttentionReport) -> dict:
    """An attention layer: its shape per rank, KV cache (dtype, method, the checkpoint's scales) and backend."""
    return {
        "name": layer.name, "kind": layer.kind, "head_size": layer.head_size, "num_heads": layer.num_heads,
        "num_kv_heads": layer.num_kv_heads, "kv_cache_dtype": layer.kv_cache_dtype, "cache_dtype": layer.cache_dtype,
        "kv_method": layer.kv_method, "scale_strategy": layer.scale_strategy, "scales": list(layer.scales),
        "backend": layer.backend,
        "rejected": [{"backend": r.kernel, "reason": r.reason, "verified": r.verified} for r in layer.rejected],
        "errors": list(layer.errors), "warnings": list(layer.warnings), "notes": list(layer.notes),
    }


def memory_document(memory: MemoryFit) -> dict:
    return {"device_memory": memory.device_memory, "gpu_memory_utilization": memory.utilization,
            "weight_bytes_per_rank": memory.weight_bytes, "budget_bytes": memory.budget,
            "kv_cache_bytes": memory.kv_bytes, "kv_bytes_per_token": memory.kv_bytes_per_token,
            "kv_cache_tokens": memory.kv_tokens, "fits": memory.fits, "error": memory.error, "note": memory.note}


def load_document(report: LoadReport) -> dict:
    """inspect's document (same fields, same meaning) plus what `load` ran: a `load` object per layer, null for
    layers --layers did not select, and the run's device, tokens and totals at the top."""
    doc = inspect_document(report.inspect)
    runs = {run.name: run for run in report.runs}
    for layer in doc["layers"]:
        run = runs.get(layer["name"])
        layer["load"] = None if run is None else _run(run)
        layer["against"] = None if run is None or run.against is None else run.against.as_json()
    moe_runs = {run.name: run for run in report.moe_runs}
    for entry in doc["moe"]:
        entry["load"] = _moe_run(moe_runs[entry["name"]]) if entry["name"] in moe_runs else None
    doc.update(command="load", ok=report.ok, device=report.device, device_platform=report.device_platform,
               tokens=report.tokens, seed=report.seed, layers_regex=report.layers_regex,
               bytes_read=report.bytes_read, seconds=round(report.seconds, 3), load_notes=list(report.notes),
               load_summary=load_summary(report), against=report.against,
               attention_runs=[_attention_run(run) for run in report.attention_runs])
    return doc


def _run(run) -> dict:
    """A linear module's load object (a LayerRun); a FusedMoE's starts with the same fields."""
    return {
        "status": run.status, "numerics": run.numerics, "execution": run.execution, "emulated": run.emulated,
        "tokens": run.tokens, "rel_error": run.rel_error, "bound": run.bound, "processing_error": run.processing_error,
        "quant_error": run.quant_error, "ms": run.ms, "bytes_read": run.bytes_read, "errors": list(run.errors),
        "warnings": list(run.warnings), "notes": list(run.notes),
        "ranks": [{"rank": r.rank, "bytes_read": r.bytes_read, "ms": r.ms} for r in run.ranks],
    }


def _moe_run(run) -> dict:
    """A FusedMoE's load object: a linear layer's fields (the worst expert's figures) plus every expert run."""
    return {
        **_run(run),
        "num_experts": run.num_experts, "experts_run": list(run.experts_run), "worst_expert": run.worst_expert,
        "experts": [{"expert": e.expert, "status": e.status, "rank": e.rank, "rel_error": e.rel_error,
                     "w13_error": e.w13_error, "w2_error": e.w2_error, "quant_error": e.quant_error,
                     "processing_error": e.processing_error, "bytes_read": e.bytes_read, "ms": e.ms,
                     "errors": list(e.errors), "warnings": list(e.warnings),
                     "against": None if e.against is None else e.against.as_json()} for e in run.experts],
        "against": None if run.against is None else run.against.as_json(),
    }


def _attention_run(run: AttentionRun) -> dict:
    """One attention layer's KV cache round trip: the scales vLLM uses and K's and V's errors against fp32."""
    return {
        "name": run.name, "kv_cache_dtype": run.kv_cache_dtype, "cache_dtype": run.cache_dtype, "status": run.status,
        "k_scale": list(run.k_scale), "v_scale": list(run.v_scale), "k_error": run.k_error, "v_error": run.v_error,
        "bound": run.bound, "bytes_read": run.bytes_read, "errors": list(run.errors), "warnings": list(run.warnings),
        "notes": list(run.notes),
    }


def input_error_document(model: str, message: str) -> dict:
    """What --format json prints for bad input (exit 2): still exactly one object, valid against the schema."""
    return {"schema_version": SCHEMA_VERSION, "ok": False, "model": model, "errors": [message], "layers": []}


def matrix_document(result: Matrix) -> dict:
    return {"command": "matrix", "ok": result.ok, "model": result.model, "vllm": result.vllm,
            "platforms": list(result.platforms), "tp": list(result.tps),
            "cells": [{"platform": c.platform, "tp": c.tp, "loads": c.ok, "kernels": list(c.kernels),
                       "reason": c.reason, "memory": memory_document(c.memory) if c.memory else None}
                      for c in result.cells]}


def diff_document(report: DiffReport) -> dict:
    return {
        "command": "diff", "ok": report.ok, "model": report.model, "platform": report.platform, "tp": report.tp,
        "ep": report.ep, "from": report.old.name, "to": report.new.name,
        "profile_changes": [change_document(c) for c in profile_changes(report.old, report.new)],
        "tp_sizes_ok": {"from": list(report.tp_sizes_ok[0]), "to": list(report.tp_sizes_ok[1])},
        "model_errors": {"from": list(report.model_errors[0]), "to": list(report.model_errors[1])},
        "unchanged": report.unchanged,
        "layers": [{"name": c.name, "count": c.copies, "what": list(c.what), "stops_loading": c.stops_loading,
                    "from": c.before._asdict() | {"loads": c.before.loads},
                    "to": c.after._asdict() | {"loads": c.after.loads},
                    "responsible": [change_document(x) for x in c.changes]} for c in report.changes],
    }


def change_document(change: int | str) -> dict:
    """One profile change (a PR number or a change read from the wheels) and what it is."""
    if isinstance(change, int):
        return {"change": f"#{change}", "pr": change, "what": PULL_REQUESTS[change]}
    return {"change": change, "pr": None, "what": WHEEL_CHANGES[change]}


def kernels_document(ctx: RoutingContext, tables: list[KernelTable]) -> dict:
    return {
        "platform": ctx.platform.label, "platform_kind": ctx.kind, "capability": ctx.cc,
        "vllm": ctx.profile.name, "vllm_versions": ctx.profile.vllm,
        "assumptions": ctx.platform.assumptions.relevant(ctx.kind), "disabled_kernels": sorted(ctx.disabled),
        "layer": {"n": REPRESENTATIVE_N, "k": REPRESENTATIVE_K, "out_dtype": "bfloat16"},
        "tables": [{
            "quantization": table.quantization,
            "columns": [{"weight": c.weight, "activation": c.activation, "weight_key": c.weight_key.name,
                         "activation_key": c.activation_key.name} for c in table.columns],
            "kernels": [{"kernel": row.kernel, "verified": row.verified, "cells": [cell._asdict() for cell in row.cells]}
                        for row in table.rows],
        } for table in tables],
    }


def environment_document(probes: list[Probe]) -> dict:
    return {probe.name: {"found": probe.found, "version": probe.version, **probe.details, "error": probe.error}
            for probe in probes}


def rules_document() -> dict:
    return {"profiles": [
        {"name": p.name, "vllm": p.vllm, "includes": sorted(p.includes), "changes": sorted(p.changes),
         "summary": p.summary, "latest": p is PROFILES[0]}
        for p in PROFILES], "pull_requests": {str(k): v for k, v in PULL_REQUESTS.items()},
        "wheel_changes": WHEEL_CHANGES}


def crosscheck_document(model: str, report: InspectReport, mocks: dict, rows: list, stand_in: str | None) -> dict:
    """fp8check's routing next to the installed vLLM's (fp8check.core.routing.crosscheck), layer by layer.
    `vllm_ok`: vLLM's own answer (no layer refused); `stand_in`: the installed release no profile speaks for."""
    return {"ok": all(row.agrees for row in rows), "vllm_ok": not any(row.vllm_error for row in rows),
            "model": model, "platform": report.platform.label, "tp": report.tp, "rules": report.profile.name,
            "stand_in": stand_in, "mocks": mocks, "layers": [row._asdict() for row in rows]}
