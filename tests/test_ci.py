"""The CI contract: docs/ci.md's fp8check steps run as written (exit codes, JUnit, schema-valid JSON, the GitHub step
summary) on passing, warning and failing checkpoints; --fail-on; and each warning rule of fp8check.core.routing.warnings."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import NamedTuple
from xml.etree import ElementTree

import pytest
import yaml
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.planning.rows import collapsed_name
from fp8check.core.routing.warnings import QUANT_ERROR_THRESHOLD, RULES
from fp8check.core.vocabulary import layer_template
from fp8check.synth import TP2_BLOCK_SHAPE

DOCS = os.path.join(os.path.dirname(__file__), "..", "docs", "ci.md")
COMMANDS_DOC = os.path.join(os.path.dirname(__file__), "..", "docs", "commands.md")
TP_SHAPE = {**TP2_BLOCK_SHAPE, "layers": 1, "data": "random"}
runner = CliRunner()


def workflow_steps() -> list[dict]:
    """The fp8check steps of docs/ci.md's workflow, parsed as GitHub parses the YAML."""
    with open(DOCS, encoding="utf-8") as fh:
        block = re.search(r"```yaml\n(.*?)```", fh.read(), re.S).group(1)
    steps = yaml.safe_load(block)["jobs"]["quantize-and-check"]["steps"]
    return [step for step in steps if step.get("name", "").startswith("fp8check:")]


def run_step(step: dict, model: str, cwd, summary: str) -> subprocess.CompletedProcess:
    """As GitHub runs a `run:` step (bash -eo pipefail), with this interpreter's fp8check and python first on PATH."""
    env = {**os.environ, "MODEL": model, "GITHUB_STEP_SUMMARY": summary,
           "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def run_workflow(model: str, cwd, summary: str) -> list[subprocess.CompletedProcess | None]:
    """The steps in order, as GitHub decides: after a failure only a step whose `if:` asks for it runs (None:
    skipped)."""
    results, failed = [], False
    for step in workflow_steps():
        if failed and "!cancelled()" not in step.get("if", ""):
            results.append(None)
            continue
        results.append(run_step(step, model, cwd, summary))
        failed = failed or results[-1].returncode != 0
    return results


def test_documented_workflow_has_the_three_fp8check_steps():
    names = [step["name"] for step in workflow_steps()]
    assert names == ["fp8check: inspect", "fp8check: load", "fp8check: validate the JSON report"]


@pytest.mark.parametrize("case, spec, exit_codes", [
    ("passing", TP_SHAPE, (0, 0, 0)),
    # 1 KV head at TP 2: replicated; inspect runs with --fail-on warning, load with the default
    ("warning", {**TP_SHAPE, "kv_heads": 1}, (1, 0, 0)),
    # head_dim 64: a rank's 64 K/V rows are not a multiple of the 128 block, vLLM refuses qkv_proj at TP 2
    ("failing", {**TP_SHAPE, "hidden": 256, "head_dim": 64}, (1, 1, 0)),
])
def test_documented_workflow_runs(make_checkpoint, tmp_path, case, spec, exit_codes):
    pytest.importorskip("torch")
    jsonschema = pytest.importorskip("jsonschema")
    model = make_checkpoint(quant="ct-fp8-block", **spec)
    summary = str(tmp_path / "summary.md")
    results = run_workflow(model, tmp_path, summary)
    assert None not in results, "a step the failing case needs was skipped: check the workflow's if: conditions"
    assert tuple(r.returncode for r in results) == exit_codes, [r.stderr[-2000:] for r in results]

    inspected = json.loads((tmp_path / "fp8check-inspect.json").read_text())
    assert json.loads(results[0].stdout) == inspected                         # stdout: exactly the one object
    jsonschema.Draft202012Validator(json.loads((tmp_path / "report.schema.json").read_text())).validate(inspected)
    assert inspected["ok"] is (case != "failing")
    if case == "warning":
        assert "--fail-on warning" in results[0].stderr
        assert [w.split(":")[0] for w in inspected["warnings"]] == ["kv-replicated"]

    suites = ElementTree.parse(tmp_path / "fp8check-load.xml").getroot()
    cases = suites.findall("./testsuite/testcase")
    expected = {"model"} | {layer["name"] for layer in inspected["layers"] + inspected["moe"]}
    # one testcase per kind of attention layer, named as the table collapses them ('model.layers.{0..1}.self_attn.attn')
    groups: dict[str, list] = {}
    for attention in inspected["attention"]:
        template, index = layer_template(attention["name"])
        groups.setdefault(template, []).append((index, attention["name"]))
    expected |= {collapsed_name(template, members) for template, members in groups.items()}
    assert {c.get("name") for c in cases} == expected and len(cases) == len(expected)
    failed = {c.get("name") for c in cases if c.find("failure") is not None}
    assert int(suites.get("failures")) == len(failed)
    assert failed == {layer["name"] for layer in inspected["layers"] if layer["errors"]}
    assert bool(failed) is (case == "failing")

    written = open(summary, encoding="utf-8").read()
    assert written.count("### fp8check: ") == 1 and written.count("### fp8check load: ") == 1
    inspect_summary, load_summary = written.split("### fp8check load: ")
    # --fail-on warning (the inspect step) turns the warning into a failure in the summary too, as in the exit code
    assert ("**OK: " in inspect_summary) is (case == "passing") and ("**FAIL: " in inspect_summary) is (case != "passing")
    assert ("**OK: " in load_summary) is (case != "failing")


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "junit"])
def test_step_summary_is_appended_for_every_format(example_copy, tmp_path, monkeypatch, fmt):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = runner.invoke(app, ["inspect", example_copy, "-p", "xpu", "--format", fmt])
    assert result.exit_code == 0
    text = summary.read_text()
    assert text.startswith("earlier step\n### fp8check: ") and "| `model.layers.{0..1}.mlp.down_proj` |" in text
    if fmt == "json":
        json.loads(result.stdout)                       # the summary never lands on stdout


def test_unwritable_step_summary_warns_once_and_keeps_the_exit_code(example_copy, tmp_path):
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(tmp_path / "missing-dir" / "summary.md")}
    for args, code in (((), 0), (("--vllm", "0.27"), 1)):
        proc = subprocess.run([sys.executable, "-m", "fp8check", "inspect", example_copy, "-p", "xpu", "-f", "json",
                               *args], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == code
        assert json.loads(proc.stdout)["ok"] is (code == 0)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("warning: cannot append the step summary")


@pytest.fixture
def example_copy(make_checkpoint):
    return make_checkpoint(quant="ct-fp8-block", architecture="Qwen3ForCausalLM", model_type="qwen3")


# ------------------------------------------------------------------------------------------------ --fail-on

def inspect_json(folder, *args):
    result = runner.invoke(app, ["inspect", folder, "--format", "json", *args])
    return result.exit_code, json.loads(result.stdout)


def layer_warnings(doc, code: str) -> list[str]:
    return [w for layer in doc["layers"] + doc["moe"] for w in layer["warnings"] if w.startswith(code + ":")]


@pytest.mark.parametrize("args, default_code, warning_code", [
    (("-p", "xpu"), 0, 0),                                      # no warning: --fail-on warning changes nothing
    (("-p", "h100", "--linear-backend", "triton"), 0, 1),       # slow-fallback
    (("-p", "xpu", "--vllm", "0.27"), 1, 1),                    # an error fails either way
])
def test_fail_on(make_checkpoint, args, default_code, warning_code):
    folder = make_checkpoint()
    assert inspect_json(folder, *args)[0] == default_code
    assert inspect_json(folder, *args, "--fail-on", "error")[0] == default_code
    code, doc = inspect_json(folder, *args, "--fail-on", "warning")
    assert code == warning_code and doc["ok"] is (default_code == 0)   # ok means "no error", whatever --fail-on


@pytest.mark.parametrize("fail_on", ["error", "warning"])
def test_junit_agrees_with_the_exit_code(make_checkpoint, fail_on):
    folder = make_checkpoint(**{**TP_SHAPE, "kv_heads": 1})     # kv-replicated at TP 2, slow-fallback with triton
    args = ("-p", "h100", "--tp", "2", "--linear-backend", "triton", "--fail-on", fail_on)
    code, doc = inspect_json(folder, *args)
    result = runner.invoke(app, ["inspect", folder, *args, "--format", "junit"])
    assert result.exit_code == code == (1 if fail_on == "warning" else 0)
    cases = ElementTree.fromstring(result.stdout).findall("./testsuite/testcase")
    failed = {c.get("name"): c.find("failure").get("message") for c in cases if c.find("failure") is not None}
    warned = {layer["name"]: layer["warnings"][0] for layer in doc["layers"] if layer["warnings"]}
    if fail_on == "error":
        assert failed == {}
    else:
        assert warned and failed == {**warned, "model": doc["warnings"][0]}


def test_fail_on_rejects_unknown_values(make_checkpoint):
    assert runner.invoke(app, ["inspect", make_checkpoint(), "--fail-on", "notice"]).exit_code == 2


# ------------------------------------------------------------------------------------------------ warning rules

def test_slow_fallback_names_a_backend_that_really_routes_natively(make_checkpoint):
    folder = make_checkpoint()
    _, doc = inspect_json(folder, "-p", "h100", "--linear-backend", "triton")
    warnings = layer_warnings(doc, "slow-fallback")
    assert len(warnings) == sum(1 for layer in doc["layers"] if layer["kernel"] == "TritonFp8BlockScaledMMKernel") > 0
    config = re.search(r"--kernel-config '([^']+)'", warnings[0]).group(1)
    kernel = warnings[0].rsplit(" ", 1)[-1]
    code, fixed = inspect_json(folder, "-p", "h100", "--linear-backend", "triton", "--kernel-config", config,
                               "--fail-on", "warning")
    assert code == 0 and not layer_warnings(fixed, "slow-fallback")
    assert {layer["kernel"] for layer in fixed["layers"] if layer["kernel"]} == {kernel}


@pytest.mark.parametrize("args, backend", [
    (("-p", "mi300x"), None),                                   # Triton, but AITER is off: nothing faster to pick
    (("-p", "mi300x", "--assume", "aiter=yes", "--linear-backend", "triton"), "aiter"),
    (("-p", "h100"), None),                                     # auto already picks the native kernel
    (("-p", "xpu", "--linear-backend", "triton"), "xpu"),
])
def test_slow_fallback_only_when_another_backend_serves(make_checkpoint, args, backend):
    _, doc = inspect_json(make_checkpoint(), *args)
    warnings = layer_warnings(doc, "slow-fallback")
    if backend is None:
        assert warnings == []
    else:
        assert warnings and all(f"--linear-backend {backend} " in w for w in warnings)


@pytest.mark.parametrize("kv_heads, tp, replicas", [(2, 1, None), (2, 2, None), (2, 4, 2), (1, 4, 4)])
def test_kv_replicated(make_checkpoint, kv_heads, tp, replicas):
    _, doc = inspect_json(make_checkpoint(**{**TP_SHAPE, "kv_heads": kv_heads}), "-p", "h100", "--tp", str(tp))
    found = [w for w in doc["warnings"] if w.startswith("kv-replicated:")]
    if replicas is None:
        assert found == []
    else:
        assert len(found) == 1 and f"replicated on {replicas} ranks" in found[0]


@pytest.mark.parametrize("args, warned", [
    # RDNA4's block kernel (verified: false) is refused before Triton for the platform alone: no warning
    (("-p", "mi300x"), False),
    # ... and chosen on gfx1201 with its switch on: its inferred conditions decide the route
    (("-p", "rx9070xt", "--assume", "rocm_hip_w8a8=yes"), True),
    (("-p", "xpu"), False),
    (("-p", "h100"), False),
])
def test_unverified_kernel(make_checkpoint, args, warned):
    _, doc = inspect_json(make_checkpoint(), *args)
    warnings = layer_warnings(doc, "unverified-kernel")
    assert bool(warnings) is warned
    if warned:
        assert all("RDNA4W8A8Fp8BlockScaledMMKernel itself" in w for w in warnings)
    if args[1] == "mi300x":   # the refusal still says it rests on an inferred kernel
        assert {(r["kernel"], r["verified"]) for layer in doc["layers"] for r in layer["rejected"]} >= {
            ("RDNA4W8A8Fp8BlockScaledMMKernel", False)}


@pytest.mark.parametrize("by_platform, warned", [(True, False), (False, True)])
def test_an_inferred_refusal_warns_only_when_it_judged_the_layer(by_platform, warned):
    from fp8check.core.routing.warnings import _unverified
    from fp8check.kernels.registry import Rejection

    class Layer(NamedTuple):
        kernel: str
        rejected: tuple

    refused = Rejection("RDNA4W8A8Fp8BlockScaledMMKernel", "RDNA4W8A8Fp8BlockScaledMMKernel no.", False, by_platform)
    found = _unverified(Layer("TritonFp8BlockScaledMMKernel", (refused,)))
    assert bool(found) is warned
    if warned:
        assert "RDNA4W8A8Fp8BlockScaledMMKernel (refused before it)" in found[0]


@pytest.mark.parametrize("input_scale, warned", [(4 / 448, False), (1 / 448, True)])
def test_quant_error(make_checkpoint, input_scale, warned):
    pytest.importorskip("torch")
    folder = make_checkpoint(quant="ct-fp8", input_scale=input_scale, **TP_SHAPE)
    result = runner.invoke(app, ["load", folder, "-p", "h100", "-d", "cpu", "-f", "json"])
    doc = json.loads(result.stdout)
    runs = [layer["load"] for layer in doc["layers"] if layer["kernel"]]
    flagged = [run for run in runs if any(w.startswith("quant-error:") for w in run["warnings"])]
    assert [run["quant_error"] > QUANT_ERROR_THRESHOLD for run in runs] == [run in flagged for run in runs]
    assert bool(flagged) is warned and all(run["status"] == "warn" for run in flagged)
    assert result.exit_code == 0
    failing = runner.invoke(app, ["load", folder, "-p", "h100", "-d", "cpu", "-f", "json", "--fail-on", "warning"])
    assert failing.exit_code == (1 if warned or doc["load_summary"]["warn"] else 0)


def test_every_warning_code_is_documented_in_the_commands_reference():
    doc = open(COMMANDS_DOC, encoding="utf-8").read()
    section = doc[doc.index("## Warnings and `--fail-on`"):]
    for rule in RULES:
        assert f"`{rule.code}`" in section
