"""vLLM's known FP8 failures after selection (fp8check.core.routing.known_issues): each entry found on a synthetic
checkpoint routed under its platform and release, and not found on a neighbouring case (the release with the fix,
another capability, the workaround applied); every kernel named is one fp8check routes; `fp8check known-issues`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.checkpoint.local import open_local
from fp8check.core.records import InspectOptions, LinearBackendOption
from fp8check.core.routing import known_issues as ki
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets import profiles
from fp8check.core.targets.platforms import apply_assumptions, parse_platform
from fp8check.kernels import attention_backends, moe, registry
from test_families import DSA, DSA_SPEC

runner = CliRunner()
MOE = dict(quant="fp8-block", experts=4, architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe")
MINIMAX = dict(quant="fp8-block", experts=4, architecture="MiniMaxM2ForCausalLM", model_type="minimax_m2")
DSV32 = dict(architecture="DeepseekV32ForCausalLM", model_type="deepseek_v32", extra_config=DSA, **DSA_SPEC)
TRITON = LinearBackendOption("triton")


def found(folder: str, platform: str, vllm: str, assume: tuple[str, ...] = (), **options) -> dict[str, tuple]:
    """The known issues `inspect` routing meets: id -> the layer names."""
    target = apply_assumptions(parse_platform(platform), list(assume))
    report = inspect_checkpoint(open_local(folder), InspectOptions(target, profiles.select_profile(vllm), **options))
    return {issue.id: names for issue, names in ki.matching(report)}


# id -> (checkpoint, the case that meets it, the neighbouring cases that do not): (platform, --vllm, options).
CASES = {
    "deepgemm-sm120-sf-layout": (dict(quant="ct-fp8-block"), ("cuda:120", "0.34", {}), [
        ("cuda:100", "0.34", {}),                                 # Blackwell datacenter: DeepGEMM works there
        ("cuda:120", "0.34", {"assume": ("deep_gemm=no",)}),      # VLLM_USE_DEEP_GEMM=0: another kernel
    ]),
    "cutlass-fp8-sm80": (dict(quant="modelopt-fp8"), ("a100", "0.29", {}), [
        ("a100", "0.31", {}),                                     # the fix: Cutlass refuses, Marlin serves
        ("a100", "0.28", {}),                                     # before 0.29 Marlin came first
        ("a100", "0.30", {"backend": LinearBackendOption("marlin")}),  # the workaround
        ("h100", "0.29", {}),                                     # sm90: CUTLASS FP8 is native
    ]),
    "triton-fp8e4nv-pre-ada": (dict(quant="fp8-block"), ("cuda:86", "0.34", {"backend": TRITON}), [
        ("cuda:86", "0.34", {}),                                  # vLLM's own choice: Marlin
        ("cuda:89", "0.34", {"backend": TRITON}),                 # Ada has fp8e4nv
    ]),
    "deepgemm-minimax-m2-sm90": (MINIMAX, ("h100", "0.25", {}), [
        ("h100", "0.25", {"assume": ("deep_gemm=no",)}),
        ("cuda:100", "0.25", {}),
    ]),
    "mla-sparse-sm90-uint8-kv": (DSV32, ("h100", "0.30", dict(kv_cache_dtype="fp8",
                                                              attention_backend="FLASHINFER_MLA_SPARSE_SM90")), [
        ("h100", "0.32", dict(kv_cache_dtype="fp8", attention_backend="FLASHINFER_MLA_SPARSE_SM90")),  # the fix
        ("h100", "0.31", dict(kv_cache_dtype="auto", attention_backend="FLASHINFER_MLA_SPARSE_SM90")),  # bf16
        ("h100", "0.31", dict(kv_cache_dtype="fp8")),                                 # FLASHMLA_SPARSE at 576
    ]),
}


def test_every_entry_has_a_case():
    assert set(CASES) == set(ki.BY_ID) and len(ki.BY_ID) == len(ki.KNOWN_ISSUES)


@pytest.mark.parametrize("issue_id", sorted(CASES))
def test_each_entry_is_found_where_it_fails_and_not_beside_it(issue_id, make_checkpoint):
    spec, (platform, vllm, options), neighbours = CASES[issue_id]
    folder = make_checkpoint(data="sparse", **spec)
    hits = found(folder, platform, vllm, **options)
    assert hits.get(issue_id), (issue_id, hits)
    for platform, vllm, options in neighbours:
        assert issue_id not in found(folder, platform, vllm, **options), (platform, vllm, options)


def test_the_minimax_entry_needs_minimax(make_checkpoint):
    """The same routing (block FP8 on DeepGEMM's sm90 path) for another architecture is not that report."""
    folder = make_checkpoint(data="sparse", **MOE)
    assert "deepgemm-minimax-m2-sm90" not in found(folder, "h100", "0.25")


def test_the_triton_entry_covers_fused_moe_experts(make_checkpoint):
    """A FusedMoE layer on a Triton experts class below sm89 is named, as the linear ones are."""
    folder = make_checkpoint(data="sparse", **MOE)
    report = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("a100"),
                                                                   profiles.select_profile("0.34")))
    moe_layer = report.moes[0]._replace(kernel="TritonExperts")
    names = dict((i.id, n) for i, n in ki.matching(report._replace(moes=(moe_layer,))))
    assert names["triton-fp8e4nv-pre-ada"] == (moe_layer.name,)


def test_every_kernel_named_is_one_fp8check_routes():
    linear = {k.name for table in registry.TABLES.values() for row in table.values() for k in row}
    experts = {e.name for row in moe.BACKENDS.values() for e in row}
    known = linear | experts | set(attention_backends.BACKENDS)
    assert {k for issue in ki.KNOWN_ISSUES for k in issue.kernels} - known == set()


def test_every_entry_is_complete_and_linked():
    for issue in ki.KNOWN_ISSUES:
        assert issue.severity in ("fail", "warn") and issue.symptom and issue.workaround and issue.suggestion
        assert issue.issue.startswith("https://github.com/") and "/issues/" in issue.issue
        assert issue.fix_pr is None or "/pull/" in issue.fix_pr
        assert issue.fixed is not None or issue.fix_pr is None, "a fix PR names the release that has it"


def test_the_range_is_introduced_up_to_fixed():
    select = profiles.select_profile
    assert [profiles.in_range(select(v), "0.29.0", "0.31.0") for v in ("0.28", "0.29", "0.30", "0.31")] == \
        [False, True, True, False]
    assert profiles.in_range(select("0.25"), None, None) and not profiles.in_range(select("0.34"), None, "0.34.0")
    assert profiles.in_range(select("0.30")._replace(vllm="0.30.2"), None, "0.30.3")  # an installed patch release
    assert not profiles.in_range(select("0.30")._replace(vllm="0.30.3"), None, "0.30.3")


def test_the_message_names_the_symptom_and_the_link():
    issue = ki.BY_ID["cutlass-fp8-sm80"]
    text = ki.message(issue, ("model.layers.0.mlp.down_proj", "model.layers.1.mlp.down_proj"))
    assert issue.symptom in text and issue.issue in text and "2 layers" in text


def test_the_command_lists_every_entry():
    result = runner.invoke(app, ["known-issues"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    for issue in ki.KNOWN_ISSUES:
        assert issue.id in result.output and issue.issue in result.output


def test_the_json_carries_the_links():
    result = runner.invoke(app, ["known-issues", "--format", "json"])
    assert result.exit_code == 0, result.output
    entries = json.loads(result.output)["known_issues"]
    assert [e["id"] for e in entries] == [i.id for i in ki.KNOWN_ISSUES]
    cutlass = next(e for e in entries if e["id"] == "cutlass-fp8-sm80")
    assert cutlass["issue"] == "https://github.com/vllm-project/vllm/issues/55008"
    assert cutlass["fix_pr"] == "https://github.com/vllm-project/vllm/pull/55884"
    assert (cutlass["introduced"], cutlass["fixed"], cutlass["releases"]) == ("0.29.0", "0.31.0", "0.29.0 until 0.31.0")


def test_inspect_reports_a_known_failure_as_an_error_with_its_workaround(make_checkpoint):
    """Wired into inspect: block FP8 on an RTX 50xx (sm120) routes to DeepGEMM, which vLLM's own choice fails on
    ('Unknown SF transformation'); the report fails, the CLI exits 1 and suggests the workaround."""
    folder = make_checkpoint(quant="fp8-block", data="sparse")
    result = CliRunner().invoke(app, ["inspect", folder, "-p", "cuda:120"])
    assert result.exit_code == 1, result.output
    assert "known vLLM failure deepgemm-sm120-sf-layout" in result.output
    assert "suggestion: deepgemm-sm120-sf-layout: --assume deep_gemm=no" in result.output
    clean = CliRunner().invoke(app, ["inspect", folder, "-p", "cuda:120", "--assume", "deep_gemm=no"])
    assert "deepgemm-sm120-sf-layout" not in clean.output
