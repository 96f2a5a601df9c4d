"""Suggestions under a failing verdict: each is computed, and applying its argv makes the failure go away."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.checkpoint.local import open_local
from fp8check.core.planning.suggest import platform_backends, suggest
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.synth import Spec, tensor_specs, write_safetensors

runner = CliRunner()
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "tiny-qwen3-fp8-block")
QWEN3_MOE = dict(quant="fp8-block", architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", hidden=1024,
                 heads=8, kv_heads=8, head_dim=128, experts=8, moe_intermediate=768, layers=2, data="sparse")


def inspect_json(*args):
    result = runner.invoke(app, ["inspect", *args, "-f", "json"])
    return result.exit_code, json.loads(result.stdout)


def applied(args: list[str], argv: list[str]) -> list[str]:
    """The command line with a suggestion's options replacing (or adding to) the original ones."""
    out = list(args)
    if argv and argv[0] in out and len(argv) == 2:
        out[out.index(argv[0]) + 1] = argv[1]
    else:
        out += argv
    return out


def test_seed_case_names_the_release_and_pr_and_the_backend():
    args = [EXAMPLE, "-p", "xpu", "--tp", "2", "--vllm", "0.27"]
    code, doc = inspect_json(*args)
    assert code == 1
    by_kind = {s["kind"]: s for s in doc["suggestions"]}
    assert "routes from vLLM 0.28 (PR #50787)" in by_kind["vllm"]["text"]
    assert by_kind["vllm"]["argv"] == ["--vllm", "0.28"]
    assert by_kind["linear_backend"]["argv"] == ["--linear-backend", "xpu"]  # 0.27 opts into W8A8 with it
    for suggestion in doc["suggestions"]:
        assert inspect_json(*applied(args, suggestion["argv"]))[0] == 0, suggestion


@pytest.mark.parametrize("platform, vllm, disabled", [("xpu", "0.27", ()),
                                                      ("mi300x", "latest", ("TritonFp8BlockScaledMMKernel",))])
def test_backend_suggestions_are_exactly_the_backends_that_route(platform, vllm, disabled):
    """Every --linear-backend of the platform's tables is tried by hand: it loads iff it was suggested. (On XPU
    before 0.28 the backend picks the scheme; elsewhere filtering the table cannot rescue a failure.)"""
    args = [EXAMPLE, "-p", platform, "--tp", "2", "--vllm", vllm]
    args += [arg for name in disabled for arg in ("--disable-kernel", name)]
    code, doc = inspect_json(*args)
    assert code == 1
    suggested = {s["argv"][1] for s in doc["suggestions"] if s["kind"] == "linear_backend"}
    options = InspectOptions(parse_platform(platform), select_profile(vllm), disabled_kernels=disabled)
    backends = platform_backends(options)
    assert len(backends) >= 2
    for backend in backends:
        loads = inspect_json(*args, "--linear-backend", backend)[0] == 0
        assert loads == (backend in suggested), backend


def test_tp_suggestion_is_the_nearest_size_that_loads():
    args = [EXAMPLE, "-p", "xpu", "--tp", "3"]
    code, doc = inspect_json(*args)
    tp = next(s for s in doc["suggestions"] if s["kind"] == "tp")
    assert code == 1 and tp["argv"] == ["--tp", "2"] and "1, 2, 4" in tp["text"]
    assert inspect_json(*applied(args, tp["argv"]))[0] == 0


def test_ep_is_suggested_when_experts_split_whole_would_load(make_checkpoint):
    folder = make_checkpoint(**QWEN3_MOE)
    args = [folder, "-p", "h100", "--tp", "8", "--vllm", "0.28"]
    code, doc = inspect_json(*args)
    kinds = [s["kind"] for s in doc["suggestions"]]
    assert code == 1 and "ep" in kinds
    assert inspect_json(*args, "--ep")[0] == 0


def test_integrity_error_names_the_tensor_to_reexport(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-block")
    entries = tensor_specs(Spec(quant="ct-fp8-block"))
    entries.pop("model.layers.1.mlp.down_proj.weight_scale")
    write_safetensors(os.path.join(folder, "model.safetensors"), entries, None)
    code, doc = inspect_json(folder, "-p", "xpu")
    assert code == 1
    assert [s for s in doc["suggestions"] if s["kind"] != "reexport"] == []  # no backend re-creates a scale
    (reexport,) = [s for s in doc["suggestions"] if s["kind"] == "reexport"]
    assert reexport["text"] == "re-export model.layers.1.mlp.down_proj.weight_scale"  # its error is printed above
    assert reexport["argv"] == []


@pytest.mark.parametrize("config", [{}, {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}])
def test_fp8_weights_without_quantization_config_are_one_suggestion(tmp_path, config):
    """Every FP8 tensor under a config.json without quantization_config fails alike: the config is named once, in
    one line that does not repeat the tensors' errors; the TP line does not read as if the model loaded."""
    (tmp_path / "config.json").write_text(json.dumps(config))
    write_safetensors(str(tmp_path / "model.safetensors"), tensor_specs(Spec(quant="ct-fp8-block")), None)
    code, doc = inspect_json(str(tmp_path), "-p", "xpu")
    missing = "no quantization_config" if config else "neither quantization_config nor architectures"
    assert code == 1 and [s["text"] for s in doc["suggestions"]] == [
        f"config.json has {missing}, so vLLM would load the FP8 weights unscaled: export the checkpoint again with "
        "its quantizer's config.json"]
    table = runner.invoke(app, ["inspect", str(tmp_path), "-p", "xpu"]).stdout
    assert table.count("suggestion:") == 1 and "TP sizes 1..16 that would load once the errors above are fixed" in table


def test_passing_report_has_no_suggestions():
    code, doc = inspect_json(EXAMPLE, "-p", "xpu", "--tp", "2")
    assert code == 0 and doc["suggestions"] == []


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_suggestions_are_shown_under_the_verdict(fmt):
    result = runner.invoke(app, ["inspect", EXAMPLE, "-p", "xpu", "--tp", "2", "--vllm", "0.27", "-f", fmt])
    verdict = result.stdout.index("FAIL: 8 of 9 linear modules fail")
    assert result.stdout.index("routes from vLLM 0.28 (PR #50787)") > verdict


def test_suggest_is_empty_for_an_ok_report():
    ckpt = open_local(EXAMPLE)
    options = InspectOptions(parse_platform("xpu"), select_profile("0.28"), tp=2)
    assert suggest(inspect_checkpoint(ckpt, options), ckpt, options) == ()


def test_load_carries_the_same_suggestions():
    result = runner.invoke(app, ["load", EXAMPLE, "-p", "xpu", "--vllm", "0.27", "-f", "json"])
    doc = json.loads(result.stdout)
    assert result.exit_code == 1 and doc["command"] == "load"
    assert inspect_json(EXAMPLE, "-p", "xpu", "--vllm", "0.27")[1]["suggestions"] == doc["suggestions"] != []


def _front_door_suggestions(folder: str, platform: str, release: str, quantization: str | None = None):
    ckpt = open_local(folder)
    options = InspectOptions(parse_platform(platform), select_profile(release), quantization=quantization)
    report = inspect_checkpoint(ckpt, options)
    assert not report.ok and report.errors
    return [(s.kind, s.options) for s in suggest(report, ckpt, options)], suggest(report, ckpt, options)


def test_a_refused_quantization_method_gets_the_flags_that_pass_vllms_front_door(make_checkpoint):
    """Each suggestion is an inspect that passes: ptpc_fp8 (removed) -> its replacement fp8_per_channel first;
    fp8_per_channel refused by XPU's 0.31 list -> the other online methods, and the release that accepts it; a
    deprecated fbgemm_fp8 -> --allow-deprecated-quantization."""
    bf16 = make_checkpoint(quant=None, data="sparse")
    kinds, found = _front_door_suggestions(bf16, "h100", "0.33", "ptpc_fp8")
    assert kinds[0] == ("quantization", ("--quantization", "fp8_per_channel"))
    assert "vLLM's replacement for the removed ptpc_fp8 (PR #44132)" in found[0].text
    kinds, _ = _front_door_suggestions(bf16, "xpu", "0.31", "fp8_per_channel")
    assert ("quantization", ("--quantization", "fp8_per_channel")) not in kinds
    assert ("quantization", ("--quantization", "fp8_per_block")) in kinds and ("vllm", ("--vllm", "0.32")) in kinds
    kinds, _ = _front_door_suggestions(make_checkpoint(quant="fbgemm-fp8", data="sparse"), "h100", "0.33")
    assert kinds == [("quantization", ("--allow-deprecated-quantization",))]


def test_a_tensor_named_inside_vllms_quoted_message_is_not_reexported(make_checkpoint):
    """FBGEMM on A100: vLLM's `assert layer.weight.shape == ...` names its own variable, not a checkpoint tensor."""
    folder = make_checkpoint(quant="fbgemm-fp8", data="sparse")
    code, doc = inspect_json(folder, "-p", "a100")
    assert code == 1 and any("layer.weight.shape" in e for layer in doc["layers"] for e in layer["errors"])
    assert [s for s in doc["suggestions"] if s["kind"] == "reexport"] == []


@pytest.mark.parametrize("platform", ["xpu", "h100"])
def test_a_refused_kv_cache_dtype_gets_the_values_that_route(make_checkpoint, platform):
    """vLLM's fp8 method refuses an fp8_e5m2 cache (and XPU's FlashAttention too): fp8 and auto route, in that order
    (an FP8 cache, as asked, first); each applied loads."""
    args = [make_checkpoint(quant="fp8-block"), "-p", platform, "--kv-cache-dtype", "fp8_e5m2"]
    code, doc = inspect_json(*args)
    assert code == 1 and any(a["errors"] for a in doc["attention"])
    kv = [s["argv"] for s in doc["suggestions"] if s["kind"] == "kv_cache_dtype"]
    assert kv == [["--kv-cache-dtype", "fp8"], ["--kv-cache-dtype", "auto"]]
    for argv in kv:
        assert inspect_json(*applied(args, argv))[0] == 0, argv
