"""An unmodelled architecture is never a silent OK (issue 33): modules laid out by guess (layout "generic") count as
not judged, as modules with a method fp8check names but does not model do; the verdict says how many and why,
every JSON row says `judged` and its reason, JUnit skips them, and --fail-on not-judged (or warning) exits 1."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import pytest
from typer.testing import CliRunner

import fp8check
from fp8check.cli.app import app
from fp8check.core.report.verdicts import inspect_verdict, not_judged, not_judged_reason

runner = CliRunner()
# An architecture vLLM registers (llama.py, as a pooling model) that fp8check's table does not lay out.
GUESS = "laid out by guess: architecture LlamaModel is not in fp8check's table"
UNKNOWN = dict(architecture="LlamaModel", model_type="llama")
QWEN3_MOE = dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=4, moe_intermediate=256,
                 hidden=256)


def inspect(folder: str, *args: str):
    return runner.invoke(app, ["inspect", folder, *args])


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def unknown(tmp_path_factory):
    from fp8check.synth import Spec, write_checkpoint

    return write_checkpoint(str(tmp_path_factory.mktemp("foo")), Spec(data="random", **UNKNOWN))


def test_the_verdict_names_the_guess_and_the_default_exit_stays_0(unknown):
    result = inspect(unknown, "-p", "xpu")
    assert result.exit_code == 0
    verdict = flat(result.stdout)[flat(result.stdout).index("OK: "):]
    assert verdict.startswith("OK: 9 linear modules route on xpu")
    assert verdict.endswith(f"; 9 of 9 modules not judged ({GUESS})")


@pytest.mark.parametrize("fail_on, code", [("error", 0), ("not-judged", 1), ("warning", 1)])
def test_fail_on_gates_on_modules_not_judged(unknown, fail_on, code):
    result = inspect(unknown, "-p", "xpu", "--fail-on", fail_on, "-f", "json")
    assert result.exit_code == code
    doc = json.loads(result.stdout)
    assert doc["ok"] is True                                  # no error: `ok` never changes with --fail-on
    assert {(row["judged"], row["not_judged"]) for row in doc["layers"]} == {(False, GUESS)}
    assert ("fp8check: failing on 9 modules not judged (--fail-on " + fail_on + ")" in result.stderr) is (code == 1)
    markdown = flat(inspect(unknown, "-p", "xpu", "--fail-on", fail_on, "-f", "markdown").stdout)
    failing = f"**FAIL: 9 modules not judged (--fail-on {fail_on}); otherwise OK: 9 linear modules route"
    assert (failing in markdown) is (code == 1) and ("**OK: 9 linear modules" in markdown) is (code == 0)


def test_a_failing_report_still_says_its_layout_was_guessed(unknown):
    result = inspect(unknown, "-p", "xpu", "--vllm", "0.27")
    assert result.exit_code == 1
    assert f"; 9 of 9 modules not judged ({GUESS})" in flat(result.stdout)
    assert flat(result.stdout)[flat(result.stdout).index("FAIL: "):].startswith("FAIL: 8 of 9 linear modules fail")


@pytest.mark.parametrize("fail_on", ["error", "not-judged"])
def test_junit_skips_them_or_fails_them_as_the_exit_code_does(unknown, fail_on):
    result = inspect(unknown, "-p", "xpu", "-f", "junit", "--fail-on", fail_on)
    suite = ElementTree.fromstring(result.stdout).find("testsuite")
    modules = [c for c in suite.findall("testcase") if c.get("name").startswith(("model.layers.0.mlp", "lm_head"))]
    assert modules
    if fail_on == "error":
        assert result.exit_code == 0 and suite.get("failures") == "0" and suite.get("skipped") == "9"
        assert {c.find("skipped").get("message") for c in modules} == {f"not judged: {GUESS}"}
    else:
        assert result.exit_code == 1 and suite.get("failures") == "9" and suite.get("skipped") == "0"
        assert {c.find("failure").get("message") for c in modules} == {f"not judged: {GUESS}"}


def test_a_fused_moe_laid_out_by_guess_is_not_judged_either(make_checkpoint):
    folder = make_checkpoint(**{**QWEN3_MOE, "architecture": "FooMoeForCausalLM", "model_type": "foo_moe"})
    doc = json.loads(inspect(folder, "-p", "h100", "-f", "json").stdout)
    assert doc["moe"] and all(m["layout"] == "generic" and m["judged"] is False for m in doc["moe"])
    # An architecture no release registers: the reason is vLLM's refusal (or its Transformers backend).
    assert doc["moe"][0]["not_judged"].startswith("laid out by guess: vLLM 0.34 registers no FooMoeForCausalLM: ")


def test_a_modelled_architecture_is_judged_and_passes_fail_on_not_judged(make_checkpoint):
    folder = make_checkpoint(architecture="LlamaForCausalLM", model_type="llama")
    result = inspect(folder, "-p", "xpu", "--fail-on", "not-judged", "-f", "json")
    assert result.exit_code == 0 and result.stderr == ""
    doc = json.loads(result.stdout)
    assert {(row["judged"], row["not_judged"]) for row in doc["layers"]} == {(True, None)}
    assert "not judged" not in inspect(folder, "-p", "xpu").stdout


@pytest.mark.parametrize("spec, args, method", [
    # bf16 experts vLLM quantizes online to MXFP8: select_mxfp8_moe_backend is named, not modelled
    (dict(quant=None, **QWEN3_MOE), ("-p", "cuda:100", "--vllm", "0.33", "-q", "mxfp8"), "Mxfp8OnlineMoEMethod"),
    # INT4 experts of a w4afp8 checkpoint: the W4A8 backend oracle is not modelled
    (dict(quant="w4afp8", **QWEN3_MOE), ("-p", "h100", "--vllm", "0.34"), "CompressedTensorsW4A8Fp8MoEMethod"),
])
def test_experts_of_a_method_fp8check_does_not_model_are_not_judged(make_checkpoint, spec, args, method):
    folder = make_checkpoint(**spec)
    result = inspect(folder, *args, "-f", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["moe"] and {(m["judged"], m["not_judged"]) for m in doc["moe"]} == {
        (False, f"method {method} is named, not modelled")}
    assert all(row["judged"] for row in doc["layers"])        # the layout is vLLM's: only the experts are not judged
    assert inspect(folder, *args, "--fail-on", "not-judged").exit_code == 1


def test_the_python_api_returns_the_same_reasons(unknown):
    report = fp8check.inspect(unknown, platform="xpu")
    assert report.ok and report.architectures == ("LlamaModel",)
    assert {not_judged_reason(row, report) for row in not_judged(report)} == {GUESS}
    assert len(not_judged(report)) == len(report.layers) and f"({GUESS})" in inspect_verdict(report)
    assert {row["not_judged"] for row in report.to_dict()["layers"]} == {GUESS}
    unnamed = report._replace(architectures=())
    assert not_judged_reason(unnamed.layers[0], unnamed) == (
        "laid out by guess: config.json names no architecture of fp8check's table")


@pytest.mark.parametrize("fail_on, code", [("error", 0), ("not-judged", 1)])
def test_load_still_runs_them_and_its_verdict_says_how_many_were_guessed(unknown, fail_on, code):
    pytest.importorskip("torch")
    result = runner.invoke(app, ["load", unknown, "-p", "xpu", "-d", "cpu", "--fail-on", fail_on])
    assert result.exit_code == code
    verdict = flat(result.stdout)
    assert "9 modules ran and agree with their fp32 reference" in verdict
    assert verdict.endswith(f"; 9 of 9 modules not judged ({GUESS})")
    assert ("FAIL: 9 modules not judged (--fail-on not-judged); otherwise OK:" in verdict) is (code == 1)
