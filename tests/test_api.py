"""The Python API (fp8check.api, re-exported by `import fp8check`): the command line's checks as functions that
return typed reports whose `.to_dict()` is the command's JSON document, InputError for bad arguments, no torch on
the inspect path."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

import fp8check
from fp8check.cli.app import app
from fp8check.core import records
from fp8check.core.planning import matrix as planning_matrix

runner = CliRunner()
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "tiny-qwen3-fp8-block")


def cli_json(*args) -> tuple[int, dict]:
    result = runner.invoke(app, [*args, "-f", "json"])
    return result.exit_code, json.loads(result.stdout)


def test_the_package_exports_the_api():
    assert set(fp8check.__all__) == {"InputError", "InspectReport", "LoadReport", "Matrix", "__version__", "inspect",
                                     "load", "matrix"}
    assert fp8check.inspect is fp8check.api.inspect and fp8check.InputError is fp8check.core.errors.InputError
    assert set(fp8check.__all__) <= set(dir(fp8check))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        fp8check.nope  # noqa: B018 - the attribute access is the test


@pytest.mark.parametrize("platform, tp, vllm, ok", [("xpu", 2, "latest", True), ("xpu", 2, "0.27", False),
                                                     ("h100", 1, "0.28.1", True)])
def test_inspect_is_the_cli_report(platform, tp, vllm, ok):
    report = fp8check.inspect(EXAMPLE, platform=platform, tp=tp, vllm=vllm)
    assert isinstance(report, records.InspectReport) and report.ok is ok
    assert len(report.layers) == 9 and report.layers[0].name == "lm_head"
    assert bool(report.suggestions) is not ok          # a failing report says what would work instead
    code, doc = cli_json("inspect", EXAMPLE, "-p", platform, "--tp", str(tp), "--vllm", vllm)
    assert report.to_dict() == doc and code == (0 if ok else 1)


def test_routing_options_take_the_cli_values_and_python_ones():
    from_cli = fp8check.inspect(EXAMPLE, platform="h100", linear_backend="triton", assume=["deep_gemm=no"],
                                kernel_config='{"linear_backend_per_quant": {"fp8_block_w8a8": "torch"}}',
                                disable_kernel=["CutlassFp8BlockScaledMMKernel"])
    from_python = fp8check.inspect(EXAMPLE, platform="h100", linear_backend="triton", assume={"deep_gemm": False},
                                   kernel_config={"linear_backend_per_quant": {"fp8_block_w8a8": "torch"}},
                                   disable_kernel="CutlassFp8BlockScaledMMKernel")
    assert from_cli.to_dict() == from_python.to_dict()
    assert {layer.kernel for layer in from_cli.layers if layer.kernel} == {"BlockWiseTorchFP8ScaledMMLinearKernel"}
    assert from_cli.platform.assumptions.deep_gemm is False


def test_matrix_is_the_cli_grid():
    result = fp8check.matrix(EXAMPLE, platforms=["xpu", "h100"], tp="1,2", vllm="0.27")
    assert isinstance(result, planning_matrix.Matrix) and result.ok
    assert [(cell.platform, cell.tp, cell.ok) for cell in result.cells] == [
        ("xpu", 1, False), ("xpu", 2, False), ("h100 (cuda:90)", 1, True), ("h100 (cuda:90)", 2, True)]
    code, doc = cli_json("matrix", EXAMPLE, "-p", "xpu,h100", "--tp", "1,2", "--vllm", "0.27")
    assert result.to_dict() == doc and code == 0


def test_load_runs_the_cli_driver():
    pytest.importorskip("torch")
    report = fp8check.load(EXAMPLE, platform="xpu", device="cpu", layers="layers\\.0\\.")
    assert isinstance(report, records.LoadReport) and report.ok
    assert report.layers == report.inspect.layers and {run.name for run in report.runs} == {
        f"model.layers.0.{name}" for name in ("self_attn.qkv_proj", "self_attn.o_proj", "mlp.gate_up_proj",
                                              "mlp.down_proj")}
    code, doc = cli_json("load", EXAMPLE, "-p", "xpu", "-d", "cpu", "--layers", "layers\\.0\\.")
    mine = report.to_dict()
    assert code == 0 and mine.pop("seconds") >= 0 and doc.pop("seconds") >= 0
    for layer in mine["layers"] + doc["layers"]:             # timings differ from run to run, nothing else does
        if layer["load"]:
            layer["load"]["ms"] = None
    assert mine == doc


@pytest.mark.parametrize("call, message", [
    (lambda: fp8check.inspect("/no/such/folder"), "no such folder"),
    (lambda: fp8check.inspect(EXAMPLE, platform="tpu"), "--platform 'tpu'"),
    (lambda: fp8check.inspect(EXAMPLE, platform="xpu", vllm="0.35"), "newer than fp8check's newest rule profile"),
    (lambda: fp8check.inspect(EXAMPLE, platform="xpu", tp=0), "--tp 0: expected a whole number from 1 to 1024"),
    (lambda: fp8check.inspect(EXAMPLE, platform="xpu", quantization=""), "--quantization ''"),
    (lambda: fp8check.inspect(EXAMPLE, platform="xpu", disable_kernel=["Nope"]), "--disable-kernel 'Nope'"),
    (lambda: fp8check.inspect(EXAMPLE, platform="xpu", assume={"warp_drive": True}), "--assume 'warp_drive=yes'"),
    (lambda: fp8check.inspect(EXAMPLE, platform="xpu", kernel_config=["triton"]), "--kernel-config takes a JSON"),
    (lambda: fp8check.matrix(EXAMPLE, platforms=[]), "--platform and --tp each need at least one value"),
    (lambda: fp8check.matrix(EXAMPLE, tp=[1, 2048]), "--tp '2048'"),
    (lambda: fp8check.load(EXAMPLE, device="tpu"), "--device 'tpu'"),
    (lambda: fp8check.load(EXAMPLE, layers="("), "--layers '(' is not a valid regular expression"),
    (lambda: fp8check.load(EXAMPLE, tokens=0), "--tokens 0"),
    (lambda: fp8check.load(EXAMPLE, seed=2**64), "--seed 18446744073709551616: expected a whole number from 0"),
    (lambda: fp8check.load(EXAMPLE, rank_timeout="5"), "--rank-timeout '5'"),
    (lambda: fp8check.load(EXAMPLE, against="/base", tp=2), "run it without --tp 2"),
    (lambda: fp8check.matrix(EXAMPLE, tp="\u00b2"), "--tp '\u00b2'"),          # str.isdigit() takes a superscript
    (lambda: fp8check.inspect(EXAMPLE, platform="xpu", vllm=0.27), "--vllm 0.27: name the release as a string"),
    (lambda: fp8check.inspect(EXAMPLE, platform="xpu", ep="no"), "--ep 'no': expected True or False"),
])
def test_bad_arguments_raise_input_error(call, message):
    with pytest.raises(fp8check.InputError) as caught:
        call()
    assert message in str(caught.value)


def test_matrix_takes_platform_as_the_command_line_does():
    assert [c.platform for c in fp8check.matrix(EXAMPLE, platform="xpu", tp=2).cells] == \
        [c.platform for c in fp8check.matrix(EXAMPLE, platforms=["xpu"], tp=2).cells]


def test_an_unknown_keyword_is_a_type_error_naming_the_known_ones():
    with pytest.raises(TypeError, match="unexpected keyword argument 'eps'; the routing options are ep, "):
        fp8check.inspect(EXAMPLE, eps=True)


def test_inspect_and_matrix_import_no_torch():
    """`import fp8check; fp8check.inspect(...)` in a fresh interpreter: no torch, numpy or safetensors."""
    code = ("import sys, fp8check\n"
            f"assert fp8check.inspect({EXAMPLE!r}, platform='xpu', tp=2).ok\n"
            f"assert fp8check.matrix({EXAMPLE!r}, platforms='xpu', tp=2).ok\n"
            "print([m for m in ('torch', 'numpy', 'safetensors', 'typer') if m in sys.modules])\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stderr


def test_bad_load_arguments_are_refused_before_torch_is_imported():
    code = ("import sys, fp8check\n"
            "for kwargs in ({'device': 'tpu'}, {'layers': '('}, {'vllm': '9.9'}, {'against': '/b', 'tp': 2},\n"
            "               {'seed': -1}):\n"
            "    try:\n"
            f"        fp8check.load({EXAMPLE!r}, **kwargs)\n"
            "    except fp8check.InputError:\n"
            "        pass\n"
            "try:\n    fp8check.load('/no/such/folder')\nexcept fp8check.InputError:\n    pass\n"
            "print('torch' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr
