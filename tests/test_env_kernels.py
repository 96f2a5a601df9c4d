"""`fp8check kernels` (the registry as a matrix, agreeing with the selection loop) and `fp8check env` (never
crashes, whatever is missing); neither `kernels` nor `schema` imports torch."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.planning.kernel_matrix import COLUMNS, REPRESENTATIVE_K, REPRESENTATIVE_N, kernel_matrix
from fp8check.core.report.documents import environment_document
from fp8check.core.targets import envinfo
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.quant_keys import KernelConfig
from fp8check.kernels.registry import check_kernel, choose_kernel

runner = CliRunner()
PLATFORMS = ["xpu", "cpu", "h100", "b200", "a100", "l40s", "mi300x", "rx9070xt", "rtx5090"]


def kernels_json(*args) -> dict:
    result = runner.invoke(app, ["kernels", *args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("vllm", ["0.27", "0.28", "latest"])
@pytest.mark.parametrize("platform", PLATFORMS)
def test_matrix_agrees_with_the_selection_loop(platform, vllm):
    """'yes (auto)' is what choose_kernel picks for that column; every cell is check_kernel's answer."""
    ctx = RoutingContext(parse_platform(platform), select_profile(vllm))
    for table in kernel_matrix(ctx):
        for index, column in enumerate(table.columns):
            cfg = KernelConfig(column.weight_key, column.activation_key, "bfloat16", "float8_e4m3fn",
                               REPRESENTATIVE_N, REPRESENTATIVE_K)
            chosen = [row.kernel for row in table.rows if row.cells[index].chosen]
            picked = choose_kernel(table.quantization, cfg, ctx).kernel
            assert chosen == ([picked] if picked else [])
            for row in table.rows:
                cell = row.cells[index]
                assert cell.ok is (cell.reason is None)
                if not cell.ok:
                    kernel = next(k for k in _candidates(table.quantization, ctx) if k.name == row.kernel)
                    assert cell.reason.rstrip(".") in check_kernel(kernel, cfg, ctx)


def _candidates(quantization, ctx):
    from fp8check.kernels.registry import candidates

    return candidates(quantization, ctx)


def test_xpu_before_50787_shows_the_original_crash():
    """vLLM 0.27 on XPU gives block checkpoints the W8A16 scheme, whose only kernel refuses blocks."""
    doc = kernels_json("-p", "xpu", "--vllm", "0.27")
    w8a16 = next(t for t in doc["tables"] if t["quantization"] == "w8a16_fp8")
    block = next(i for i, c in enumerate(w8a16["columns"]) if c["weight"].startswith("block"))
    cells = [row["cells"][block] for row in w8a16["kernels"]]
    assert not any(cell["ok"] for cell in cells)
    assert cells[0]["reason"] == "XPUW8A16FP8Linear only support per-channel and per-tensor quantization."


def test_disabled_kernel_moves_the_choice():
    before = kernels_json("-p", "h100")
    after = kernels_json("-p", "h100", "--disable-kernel", "CutlassFP8ScaledMMLinearKernel")

    def auto(doc):
        table = doc["tables"][0]
        return [next(row["kernel"] for row in table["kernels"] if row["cells"][i]["chosen"])
                for i in range(len(table["columns"]))]

    assert set(auto(before)) == {"CutlassFP8ScaledMMLinearKernel"}
    assert "CutlassFP8ScaledMMLinearKernel" not in auto(after)
    cutlass = next(row for row in after["tables"][0]["kernels"] if row["kernel"] == "CutlassFP8ScaledMMLinearKernel")
    assert all(cell["reason"] == "is disabled by environment variable" for cell in cutlass["cells"])


def test_kernels_table_lists_each_reason_once():
    result = runner.invoke(app, ["kernels", "-p", "h100"])
    assert result.exit_code == 0
    assert "yes (auto)" in result.stdout and result.stdout.count("requires compute capability 100 and above.") == 1
    assert len(COLUMNS) == sum(len(t["columns"]) for t in kernels_json("-p", "h100")["tables"])


@pytest.mark.parametrize("args", [["-p", "h1000"], ["--vllm", "0.20"], ["--assume", "deep_gemm=maybe"]])
def test_kernels_bad_options_are_exit_2_on_stderr(args):
    proc = subprocess.run([sys.executable, "-m", "fp8check", "kernels", *args, "-f", "json"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    error = json.loads(proc.stdout)                     # --format json: still exactly one JSON object
    assert error["ok"] is False and error["errors"] == [proc.stderr.strip().removeprefix("error: ")]


def test_untrusted_names_are_escaped_in_the_kernels_table():
    """VLLM_DISABLED_KERNELS is taken as vLLM takes it (it also names kernels fp8check does not model), so its
    names reach the table: escaped."""
    result = runner.invoke(app, ["kernels", "-p", "h100"], env={"VLLM_DISABLED_KERNELS": "[red]x\x1b[2J"})
    assert result.exit_code == 0 and "\x1b" not in result.stdout and "disabled=[red]x\\x1b[2J" in result.stdout
    result = runner.invoke(app, ["kernels", "-p", "h100", "-f", "json"], env={"VLLM_DISABLED_KERNELS": "[red]x"})
    assert json.loads(result.stdout)["disabled_kernels"] == ["[red]x"]


@pytest.mark.parametrize("name, hint", [
    ("Nope", ""),
    ("TritonFp8BlockScaledMMKernl", " (did you mean TritonFp8BlockScaledMMKernel?)"),
    ("[red]x\x1b[2J", ""),
])
def test_an_unknown_disable_kernel_is_exit_2_saying_where_the_known_ones_are(name, hint):
    result = runner.invoke(app, ["kernels", "-p", "h100", "--disable-kernel", name])
    assert result.exit_code == 2 and "\x1b" not in result.stderr and result.stderr.count("\n") == 1
    assert f"not one of fp8check's linear kernels{hint} (`fp8check kernels -p PLATFORM` lists them)" in result.stderr


def test_disable_kernel_takes_known_names_repeated_or_comma_separated():
    doc = kernels_json("-p", "h100", "--disable-kernel", "CutlassFp8BlockScaledMMKernel,MarlinFP8ScaledMMLinearKernel",
                       "--disable-kernel", "TritonFp8BlockScaledMMKernel")
    assert doc["disabled_kernels"] == ["CutlassFp8BlockScaledMMKernel", "MarlinFP8ScaledMMLinearKernel",
                                       "TritonFp8BlockScaledMMKernel"]


# ----------------------------------------------------------------------------------------------------- env

def test_env_json_and_table():
    result = runner.invoke(app, ["env", "--format", "json"])
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert set(doc) == {"fp8check", "python", "platform", "torch", "triton", "ipex", "vllm"}
    assert doc["platform"]["label"].startswith("auto: ")
    if doc["torch"]["found"]:
        import torch

        assert doc["torch"]["version"] == torch.__version__ and isinstance(doc["torch"]["devices"], list)
    table = runner.invoke(app, ["env"])
    assert table.exit_code == 0 and "torch" in table.stdout and "vllm" in table.stdout


def test_env_names_the_rule_profile_of_an_installed_vllm(monkeypatch):
    versions = {"vllm": "0.27.1", "intel-extension-for-pytorch": "2.8.10+xpu"}
    monkeypatch.setattr(envinfo, "_version", lambda name: versions.get(name))
    doc = environment_document(envinfo.environment())
    assert doc["vllm"] == {"found": True, "version": "0.27.1", "profile": "0.27", "profile_vllm": "0.27",
                           "error": None}
    assert doc["ipex"]["version"] == "2.8.10+xpu" and doc["triton"]["found"] is False
    assert doc["torch"]["found"] is False and "not installed" in doc["torch"]["error"]
    versions["vllm"] = "0.20.0"                          # older than every profile: said, not raised
    assert "no rule profile older than" in envinfo.probe_vllm().error
    versions["vllm"] = "0.35.0.dev12+g0123abc"           # newer than every profile: said too
    assert "newer than fp8check's newest rule profile 0.34" in envinfo.probe_vllm().error


def test_env_survives_a_broken_torch_and_an_unknown_gpu(monkeypatch):
    code = ("import sys; sys.modules['torch'] = None\n"
            "import fp8check.core.targets.platforms as p\n"
            "def boom():\n    raise p.InputError('ROCm GPU gfx999 is not in fp8check\\'s table')\n"
            "p.detect_host = boom\n"
            "from fp8check.cli.app import main\nsys.argv = ['fp8check', 'env', '-f', 'json']\nmain()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["torch"]["found"] is False and doc["torch"]["error"].startswith("import failed")
    assert doc["platform"]["found"] is False and "gfx999" in doc["platform"]["error"]
