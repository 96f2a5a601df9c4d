"""The GitHub Action (action.yml, fp8check/ci_action.py): its steps run as GitHub runs them — the `${{ }}`
expressions substituted, the step's env, bash — with fake $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY files."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from fp8check import ci_action

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "tiny-qwen3-fp8-block")


def action() -> dict:
    with open(os.path.join(ROOT, "action.yml"), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def substitute(text: str, inputs: dict, tmp_path) -> str:
    """GitHub's expressions of this action: inputs.*, runner.temp, github.action_path."""
    values = {"runner.temp": str(tmp_path), "github.action_path": ROOT}
    values.update({f"inputs.{key}": value for key, value in inputs.items()})
    return re.sub(r"\$\{\{\s*([\w.-]+)\s*\}\}", lambda m: values[m.group(1)], text)


def run_action(tmp_path, **given) -> tuple[int, str, dict, str]:
    """The inspect step under bash, as the runner runs it: (exit status, log, $GITHUB_OUTPUT, step summary)."""
    spec = action()
    inputs = {key: str(value.get("default", "")) for key, value in spec["inputs"].items()}
    inputs.update(given)
    step = next(s for s in spec["runs"]["steps"] if s.get("id") == "inspect")
    env = {key: substitute(str(value), inputs, tmp_path) for key, value in step["env"].items()}
    output, summary = tmp_path / "github_output", tmp_path / "step_summary"
    output.write_text(""), summary.write_text("")
    env = dict(os.environ, **env, GITHUB_OUTPUT=str(output), GITHUB_STEP_SUMMARY=str(summary), PYTHONPATH=ROOT)
    command = substitute(step["run"], inputs, tmp_path).replace("python ", f"{sys.executable} ", 1)
    proc = subprocess.run(["bash", "-e", "-c", command], capture_output=True, text=True, env=env, cwd=str(tmp_path),
                          timeout=300)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return proc.returncode, proc.stdout + proc.stderr, outputs, summary.read_text()


def test_the_action_is_composite_and_installs_from_its_own_checkout():
    spec = action()
    assert spec["runs"]["using"] == "composite"
    assert set(spec["inputs"]) == {"model", "platforms", "tp", "vllm", "format", "fail-on", "args", "annotations"}
    assert set(spec["outputs"]) == {"ok", "report"}
    install = spec["runs"]["steps"][0]["run"]
    assert '"${{ github.action_path }}"' in install and "pip install" in install
    assert all(step["shell"] == "bash" for step in spec["runs"]["steps"])


def test_a_checkpoint_that_loads_passes_with_its_reports_and_summary(tmp_path):
    code, log, outputs, summary = run_action(tmp_path, model=EXAMPLE, platforms="h100, xpu", tp="2")
    assert code == 0, log
    assert outputs == {"ok": "true", "report": str(tmp_path / "fp8check-report")}
    assert sorted(os.listdir(outputs["report"])) == ["h100.xml", "xpu.xml"]
    assert "::error" not in log
    assert summary.count("**OK: 9 linear modules route on ") == 2  # the command line's own step summary, per platform


def test_failing_layers_are_annotated_up_to_the_limit(tmp_path):
    code, log, outputs, summary = run_action(tmp_path, model=EXAMPLE, platforms="h100", tp="8", annotations="3")
    assert code == 1
    assert outputs["ok"] == "false"
    errors = [line for line in log.splitlines() if line.startswith("::error ")]
    config = ci_action.escape(os.path.join(EXAMPLE, "config.json"), True)
    assert len(errors) == 3 and all(line.startswith(f"::error file={config},title=fp8check h100%3A ")
                                    for line in errors)
    assert "model.layers.0.mlp.down_proj::Weight input_size_per_partition = 64 is not divisible" in log
    assert re.search(r"::notice title=fp8check::\d+ more failing module\(s\)", log)
    assert "**FAIL: 8 of 9 linear modules fail" in summary


def test_json_reports_and_extra_args(tmp_path):
    code, log, outputs, _ = run_action(tmp_path, model=EXAMPLE, platforms="a100", tp="8", format="json",
                                       args="--vllm 0.33 --kv-cache-dtype fp8", annotations="1")
    assert code == 1
    with open(os.path.join(outputs["report"], "a100.json"), encoding="utf-8") as fh:
        document = json.load(fh)
    assert document["vllm"].startswith("0.33") and document["ok"] is False
    assert len([line for line in log.splitlines() if line.startswith("::error ")]) == 1


def test_bad_inputs_are_one_error_and_exit_2(tmp_path):
    code, log, outputs, _ = run_action(tmp_path, model="", format="yaml")
    assert code == 2 and "::error title=fp8check::inputs" in log and outputs == {}
    code, log, outputs, _ = run_action(tmp_path, model=str(tmp_path / "missing"))
    assert code == 2 and outputs["ok"] == "false"


@pytest.mark.parametrize("text,expected", [("a:b,c%\n", "a%3Ab%2Cc%25%0A")])
def test_workflow_command_escaping(text, expected):
    assert ci_action.escape(text, True) == expected
    assert ci_action.escape(text) == "a:b,c%25%0A"
