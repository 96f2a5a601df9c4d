"""`fp8check matrix`: one read of the headers, a platform x TP grid, exit 0 when some cell loads."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.checkpoint import local as checkpoint

runner = CliRunner()
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "tiny-qwen3-fp8-block")


def matrix_json(*args):
    result = runner.invoke(app, ["matrix", *args, "-f", "json"])
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("vllm, loads", [("0.26", False), ("0.27", False), ("0.28", True), ("latest", True)])
def test_seed_case_xpu_tp2_loads_from_0_28(vllm, loads):
    code, doc = matrix_json(EXAMPLE, "--platforms", "xpu,h100", "--tp", "2", "--vllm", vllm)
    xpu = next(c for c in doc["cells"] if c["platform"] == "xpu")
    assert xpu["loads"] is loads and code == 0  # h100 loads either way
    if loads:
        assert xpu["kernels"] == ["XPUFp8BlockScaledMMKernel"] and xpu["reason"] is None
    else:
        assert xpu["kernels"] == [] and "Failed to find a kernel" in xpu["reason"]


def test_grid_agrees_with_inspect_cell_by_cell():
    code, doc = matrix_json(EXAMPLE, "--platforms", "xpu,a100,mi300x", "--tp", "1,3,4", "--vllm", "0.27")
    assert len(doc["cells"]) == 9 and [c["tp"] for c in doc["cells"][:3]] == [1, 3, 4]
    for cell in doc["cells"]:
        platform = cell["platform"].split(" ")[0]
        alone = runner.invoke(app, ["inspect", EXAMPLE, "-p", platform, "--tp", str(cell["tp"]), "--vllm", "0.27",
                                    "-f", "json"])
        inspected = json.loads(alone.stdout)
        assert cell["loads"] is inspected["ok"], cell
        assert cell["kernels"] == sorted({m["kernel"] for m in inspected["layers"] if m["kernel"]})
        assert cell["memory"] == inspected["memory"]
    assert code == 0


def test_exit_1_when_no_cell_loads():
    code, doc = matrix_json(EXAMPLE, "--platforms", "xpu", "--tp", "1,2", "--vllm", "0.27")
    assert code == 1 and doc["ok"] is False and all(not c["loads"] for c in doc["cells"])


def test_reads_every_header_once(make_checkpoint, monkeypatch):
    folder = make_checkpoint(shards=3)
    reads = []
    real = checkpoint.read_header
    monkeypatch.setattr(checkpoint, "read_header", lambda *a, **k: reads.append(a[1]) or real(*a, **k))
    result = runner.invoke(app, ["matrix", folder, "--platforms", "xpu,h100,a100,l40s,mi300x", "--tp", "1,2,4,8"])
    assert result.exit_code == 0, result.output
    assert sorted(reads) == sorted(f"model-0000{i}-of-00003.safetensors" for i in (1, 2, 3))


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_human_formats_show_every_cell(fmt):
    result = runner.invoke(app, ["matrix", EXAMPLE, "--platforms", "xpu,h100", "--tp", "1,8", "-f", fmt])
    assert result.exit_code == 0
    assert "must be divisible by tensor parallel size (8)" in result.stdout  # 4 heads at TP 8
    assert result.stdout.count("XPUFp8BlockScaledMMKernel") >= 1 and "2 of 4" in result.stdout


@pytest.mark.parametrize("args", [["--tp", "0"], ["--tp", "two"], ["--platforms", "h1000"], ["--platforms", ","]])
def test_bad_options_are_exit_2_with_one_json_object(args):
    result = runner.invoke(app, ["matrix", EXAMPLE, *args, "-f", "json"])
    assert result.exit_code == 2 and json.loads(result.stdout)["ok"] is False
