"""`fp8check diff`: layers whose scheme, kernel or verdict change between two rule profiles, and the changes why."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.planning.diff import profile_changes, toggled
from fp8check.core.targets.profiles import PROFILES, select_profile

runner = CliRunner()
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "tiny-qwen3-fp8-block")


def diff_json(*args):
    result = runner.invoke(app, ["diff", *args, "-f", "json"])
    return result.exit_code, json.loads(result.stdout)


def test_seed_case_upgrade_names_pr_50787():
    code, doc = diff_json(EXAMPLE, "--from", "0.27", "--to", "latest", "-p", "xpu", "--tp", "2")
    assert code == 0 and doc["ok"] is True and (doc["from"], doc["to"]) == ("0.27", "0.34")
    assert sum(row["count"] for row in doc["layers"]) == 8 and doc["unchanged"] == 1  # lm_head stays unquantized
    for row in doc["layers"]:
        assert row["what"] == ["scheme", "kernel", "verdict"] and not row["stops_loading"]
        assert (row["from"]["scheme"], row["from"]["loads"]) == ("CompressedTensorsW8A16Fp8", False)
        assert (row["to"]["kernel"], row["to"]["loads"]) == ("XPUFp8BlockScaledMMKernel", True)
        assert [r["pr"] for r in row["responsible"]] == [50787]
    assert doc["tp_sizes_ok"] == {"from": [], "to": [1, 2, 4]}


def test_downgrade_that_stops_loading_exits_1():
    code, doc = diff_json(EXAMPLE, "--from", "0.28", "--to", "0.27", "-p", "xpu", "--tp", "2")
    assert code == 1 and all(row["stops_loading"] for row in doc["layers"])
    assert {r["pr"] for row in doc["layers"] for r in row["responsible"]} == {50787}


def test_a_kernel_change_is_attributed_to_the_wheel_change_that_made_it(make_checkpoint):
    """sm89 native fp8 block: Triton in 0.28, Marlin from 0.29 (its cc >= 89 gate removed): among 0.29's
    changes the ablation keeps the one that moves Marlin, not the Torch kernels' support check nor the format and
    MXFP8 changes of the same release."""
    folder = make_checkpoint(quant="fp8-block", data="sparse")
    code, doc = diff_json(folder, "--from", "0.28", "--to", "0.29", "-p", "l40s")
    assert code == 0 and doc["layers"]
    for row in doc["layers"]:
        assert row["what"] == ["kernel"]
        assert (row["from"]["kernel"], row["to"]["kernel"]) == ("TritonFp8BlockScaledMMKernel",
                                                                "MarlinFP8ScaledMMLinearKernel")
        assert [r["change"] for r in row["responsible"]] == ["marlin-late"]
    assert {c["change"] for c in doc["profile_changes"]} == {"marlin-late", "torch-fp8-support", "#47434",
                                                              "pbwo-padding", "mxfp8-trtllm", "fa4-hd256",
                                                              "attn-selector-dcp", "attn-import-error-text",
                                                              "cpu-amx-mla", "moe-block-refine",
                                                              "ct-wna16-moe-wording", "transformers-backend-029",
                                                              "trtllm-swiglu-clamp", "qwen4exp", "hy-v4",
                                                              "moe-backend-029"}


@pytest.mark.parametrize("old", ["0.34", "0.34.0", "v0.34.2"])   # a patch release is its minor's profile
def test_two_names_of_one_profile_are_refused(old):
    code, doc = diff_json(EXAMPLE, "--from", old, "--to", "latest", "-p", "h100", "--tp", "2")
    assert code == 2 and doc["ok"] is False
    assert doc["errors"] == ["--from and --to both select the rule profile 0.34 (vLLM 0.34): nothing to compare; "
                             "`fp8check rules` lists the profiles"]


@pytest.mark.parametrize("old, new", [(PROFILES[-1], PROFILES[0]), (PROFILES[3], PROFILES[5])])
def test_toggling_every_change_turns_one_profile_into_the_other(old, new):
    ablated = new
    for change in profile_changes(old, new):
        ablated = toggled(ablated, change)
    assert (ablated.includes, ablated.changes) == (old.includes, old.changes)


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_human_formats_name_the_pr(fmt):
    result = runner.invoke(app, ["diff", EXAMPLE, "--from", "0.27", "-p", "xpu", "--tp", "2", "-f", fmt])
    assert result.exit_code == 0 and "#50787" in result.stdout and "8 start loading" in result.stdout


@pytest.mark.parametrize("flag, release, says", [
    ("--from", "0.12", "--from 0.12: fp8check has no rule profile older than 0.25"),
    ("--from", "9.9", "--from 9.9: newer than fp8check's newest rule profile 0.34"),
    ("--to", "0.35", "--to 0.35: newer than fp8check's newest rule profile 0.34"),
    ("--to", "0.3x", "--to '0.3x': expected latest or a vLLM release"),
])
def test_a_release_without_a_profile_is_exit_2_naming_the_known_ones(flag, release, says):
    args = ["--from", "0.27", "--to", release] if flag == "--to" else ["--from", release]
    result = runner.invoke(app, ["diff", EXAMPLE, *args, "-p", "xpu", "-f", "json"])
    doc = json.loads(result.stdout)
    assert result.exit_code == 2 and doc["ok"] is False and doc["errors"][0].startswith(says)
    assert ", ".join(["latest", *(p.name for p in PROFILES)]) in doc["errors"][0]
    assert select_profile("0.27.1").name == "0.27"


def test_a_method_refused_at_vllms_front_door_is_a_model_level_change(make_checkpoint):
    """--quantization fp8_per_channel on XPU: refused by 0.31's allow-list, accepted from 0.32 — no layer changes,
    the model does; going back down is a failure (exit 1)."""
    folder = make_checkpoint(quant=None, data="sparse")
    code, doc = diff_json(folder, "-q", "fp8_per_channel", "--from", "0.31", "--to", "0.32", "-p", "xpu")
    assert code == 0 and doc["model_errors"] == {
        "from": ["fp8_per_channel quantization is currently not supported in xpu."], "to": []}
    code, doc = diff_json(folder, "-q", "fp8_per_channel", "--from", "0.32", "--to", "0.31", "-p", "xpu")
    assert code == 1 and not doc["ok"] and doc["model_errors"]["to"]
