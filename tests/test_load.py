"""load: every strategy runs through its routed kernel's numerics on the CPU and agrees with the fp32 reference;
corrupted copies are caught and named; the CLI's formats, exit codes, --layers and --device."""

from __future__ import annotations

import json
import os
import re
import struct
from xml.etree import ElementTree as ET

import pytest
from typer.testing import CliRunner

torch = pytest.importorskip("torch")

from fp8check.cli.app import app  # noqa: E402
from fp8check.core.checkpoint.local import open_local  # noqa: E402
from fp8check.core.checkpoint.safetensors_header import read_header  # noqa: E402
from fp8check.core.load import gemm as load_gemm  # noqa: E402
from fp8check.core.load.driver import load_checkpoint
from fp8check.core.records import InspectOptions, LoadOptions
from fp8check.core.targets.platforms import apply_assumptions, parse_platform  # noqa: E402
from fp8check.core.targets.profiles import select_profile  # noqa: E402
from fp8check.kernels.numerics import gemm as numerics  # noqa: E402
from fp8check.kernels.registry import KERNEL_NUMERICS, TABLES, kernel_numerics  # noqa: E402

runner = CliRunner()


def load(folder, platform="xpu", assume=(), vllm="latest", layers=None, tokens=16, tp=1):
    target = apply_assumptions(parse_platform(platform), list(assume))
    options = LoadOptions(InspectOptions(platform=target, profile=select_profile(vllm), tp=tp), torch.device("cpu"),
                          layers=layers, tokens=tokens, rank_timeout_s=120)
    return load_checkpoint(open_local(folder), lambda names: folder, options)


def by_name(report):
    return {run.name: run for run in report.runs}


# (quant, platform, assumptions, the numerics of the kernel quantized layers route to); which kernel that is,
# is test_routing's business.
STRATEGIES = [
    ("ct-fp8-block", "xpu", (), numerics.BLOCK),
    ("ct-fp8-block", "h100", ("deep_gemm=no",), numerics.BLOCK),
    ("ct-fp8-dynamic", "xpu", (), numerics.WEIGHT_ONLY),          # XPU's W8A16 kernel takes W8A8 checkpoints
    ("ct-fp8-dynamic", "h100", (), numerics.SCALED_MM),
    ("ct-fp8", "h100", (), numerics.SCALED_MM),
    ("ct-w8a16-fp8", "h100", (), numerics.WEIGHT_ONLY),
    ("ct-w8a16-fp8-tensor", "a100", (), numerics.WEIGHT_ONLY),
    ("fp8-block", "h100", ("deep_gemm=no",), numerics.BLOCK),
    ("fp8-static", "mi300x", (), numerics.SCALED_MM),
    ("fp8-dynamic", "a100", (), numerics.WEIGHT_ONLY),            # below sm89: Marlin, weight-only
]


@pytest.mark.parametrize("quant, platform, assume, kind", STRATEGIES)
def test_every_strategy_runs_its_kernels_numerics_within_the_bound(make_checkpoint, quant, platform, assume, kind):
    report = load(make_checkpoint(quant=quant, data="random"), platform, assume)
    assert report.ok, [run.errors for run in report.runs]
    quantized = [run for run in report.runs if run.name != "lm_head"]
    (kernel,) = {run.kernel for run in quantized}
    assert {run.numerics for run in quantized} == {KERNEL_NUMERICS[kernel]} == {kind}
    for run in report.runs:
        assert run.rel_error <= run.bound
        assert run.emulated and run.execution.startswith("emulated on cpu")  # routed for a GPU, ran on the CPU
        assert run.bytes_read > 0
    assert by_name(report)["lm_head"].numerics == numerics.UNQUANTIZED
    # The FP8 quantization error a user sees is ~2.6 % on random weights; the kernel error is only rounding.
    for run in quantized:
        assert run.rel_error < 0.5 * numerics.bound(kind, torch.bfloat16)
        assert 0.01 < run.quant_error < 0.06 or kind == numerics.WEIGHT_ONLY


def test_a_native_cpu_route_runs_torch_scaled_mm_and_is_not_called_emulated(make_checkpoint):
    report = load(make_checkpoint(quant="ct-fp8-dynamic", data="random"), "cpu", ("cpu_amx=yes",))
    run = by_name(report)["model.layers.0.mlp.down_proj"]
    assert run.kernel.startswith("CPU") and run.numerics == numerics.SCALED_MM
    assert run.execution == "torch._scaled_mm rowwise on cpu" and not run.emulated


def test_every_registry_kernel_has_numerics():
    kernels = {k.name for table in TABLES.values() for row in table.values() for k in row}
    assert kernels and all(kernel_numerics(kernel) for kernel in kernels)


def test_a_layer_vllm_would_refuse_is_reported_and_not_run(make_checkpoint):
    report = load(make_checkpoint(quant="ct-fp8-block", data="random"), "xpu", vllm="0.27")
    run = by_name(report)["model.layers.0.mlp.down_proj"]
    assert run.status == "not run" and run.bytes_read == 0 and run.execution is None
    assert "XPUW8A16FP8Linear only support per-channel and per-tensor quantization" in run.errors[0]
    assert by_name(report)["lm_head"].status == "ok"  # the rest still run
    assert not report.ok


# ------------------------------------------------------------------------------------------- corruptions

def patch(folder: str, tensor: str, new_bytes) -> None:
    """Overwrite a tensor's bytes in place: new_bytes(old: bytes) -> bytes of the same length."""
    path = os.path.join(folder, "model.safetensors")
    header = read_header(path)
    info = header.tensors[tensor]
    with open(path, "r+b") as fh:
        fh.seek(header.data_start + info.start)
        old = fh.read(info.end - info.start)
        fh.seek(header.data_start + info.start)
        fh.write(new_bytes(old))


BF16_ZERO, BF16_INF = b"\x00\x00", struct.pack("<H", 0x7F80)
CORRUPTIONS = {
    "nan byte": ("model.layers.1.self_attn.k_proj.weight", lambda old: old[:5] + b"\x7f" + old[6:],
                 "model.layers.1.self_attn.k_proj.weight: 1 of 32768 FP8 bytes encode NaN"),
    "zero scale": ("model.layers.0.mlp.down_proj.weight_scale", lambda old: BF16_ZERO + old[2:],
                   "model.layers.0.mlp.down_proj.weight_scale: 1 of 256 scales are zero or negative"),
    "inf scale": ("model.layers.0.mlp.up_proj.weight_scale", lambda old: old[:-2] + BF16_INF,
                  "model.layers.0.mlp.up_proj.weight_scale: 1 of 512 scales are NaN or infinite"),
}


@pytest.mark.parametrize("case", CORRUPTIONS)
def test_corrupted_values_fail_with_the_tensor_named(make_checkpoint, case):
    folder = make_checkpoint(quant="ct-fp8-dynamic", data="random")
    tensor, change, message = CORRUPTIONS[case]
    patch(folder, tensor, change)
    result = runner.invoke(app, ["load", folder, "-p", "h100", "--device", "cpu"])
    assert result.exit_code == 1, result.output
    assert message in " ".join(result.stdout.split())
    assert "Traceback" not in result.output


def test_a_native_fp8_scale_is_named_as_the_checkpoint_names_it(make_checkpoint):
    """Native fp8 stores `weight_scale_inv`: the error names that tensor, the one a user would re-export."""
    folder = make_checkpoint(quant="fp8-block", data="random")
    tensor = "model.layers.0.mlp.down_proj.weight_scale_inv"
    count = read_header(os.path.join(folder, "model.safetensors")).tensors[tensor].numel
    patch(folder, tensor, lambda old: b"\x00" * 4 + old[4:])
    result = runner.invoke(app, ["load", folder, "-p", "h100", "--device", "cpu", "--layers", "down_proj"])
    assert result.exit_code == 1, result.output
    assert f"{tensor}: 1 of {count} scales are zero or negative" in " ".join(result.stdout.split())


def test_an_all_zero_weight_fails(make_checkpoint):
    report = load(make_checkpoint(quant="ct-fp8-block", data="zeros"), "xpu", layers="o_proj")
    run = by_name(report)["model.layers.0.self_attn.o_proj"]
    assert run.status == "FAIL" and "all 65,536 elements are zero" in run.errors[0]


def test_fused_per_tensor_shards_with_scales_4x_apart_are_requantized_and_named(make_checkpoint):
    """vLLM's requantize_with_max_scale: shards are requantized to the largest scale. A ratio that is not a power
    of two rounds every code twice, which load measures against the checkpoint's own scales and names."""
    folder = make_checkpoint(quant="ct-fp8", data="random")
    scale = "model.layers.0.self_attn.k_proj.weight_scale"
    value = torch.frombuffer(bytearray(b"\x00\x00"), dtype=torch.bfloat16)

    def times_4_3(old: bytes) -> bytes:
        value.copy_(torch.frombuffer(bytearray(old), dtype=torch.bfloat16) * 4.3)
        return bytes(value.view(torch.uint8).numpy())

    patch(folder, scale, times_4_3)
    run = by_name(load(folder, "h100"))["model.layers.0.self_attn.qkv_proj"]
    assert run.status == "warn" and run.rel_error <= run.bound  # the kernel computes what it was given
    assert run.processing_error > run.bound
    assert "requantize_with_max_scale" in run.warnings[0]
    ratios = {n.split(":")[0]: float(re.search(r"([\d.]+)x\)", n).group(1)) for n in run.notes}
    assert set(ratios) == {"model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.v_proj"}
    assert all(3.5 < ratio < 6 for ratio in ratios.values()), run.notes
    assert not any("k_proj:" in n for n in run.notes)  # the largest scale is kept as is


# --------------------------------------------------------------------------------------- compressed-tensors

@pytest.fixture(scope="module")
def real(tmp_path_factory):
    pytest.importorskip("compressed_tensors")
    import ct_checkpoints

    root = tmp_path_factory.mktemp("ct-load")
    return {p: ct_checkpoints.build(str(root / p), p) for p in ("FP8", "FP8_DYNAMIC", "FP8_BLOCK", "W8A16_FP8")}


@pytest.mark.parametrize("preset, platform", [("FP8", "h100"), ("FP8_DYNAMIC", "xpu"), ("FP8_BLOCK", "xpu"),
                                              ("W8A16_FP8", "h100"), ("FP8_DYNAMIC", "mi300x")])
def test_checkpoints_written_by_compressed_tensors_pass(real, preset, platform):
    report = load(real[preset], platform)
    assert report.ok, [(run.name, run.errors) for run in report.runs if not run.ok]
    assert all(run.rel_error <= run.bound for run in report.runs)


@pytest.mark.parametrize("preset", ["FP8", "FP8_DYNAMIC", "FP8_BLOCK", "W8A16_FP8"])
def test_dequantization_equals_compressed_tensors_own(real, preset):
    from compressed_tensors.quantization import QuantizationConfig
    from compressed_tensors.quantization.lifecycle.forward import dequantize
    from safetensors.torch import load_file

    with open(os.path.join(real[preset], "config.json")) as fh:
        config = QuantizationConfig.model_validate(json.load(fh)["quantization_config"])
    scheme = next(iter(config.config_groups.values()))
    tensors = load_file(os.path.join(real[preset], "model.safetensors"))
    block = tuple(scheme.weights.block_structure) if scheme.weights.strategy == "block" else None
    checked = 0
    for name, weight in tensors.items():
        if weight.dtype != torch.float8_e4m3fn:
            continue
        scale = tensors[name.replace(".weight", ".weight_scale")].float()  # fp32, so both compute exactly
        theirs = dequantize(weight, scale, args=scheme.weights, dtype=torch.float32)
        ours = numerics.dequantize(weight, scale, block)
        torch.testing.assert_close(ours, theirs.float(), rtol=0, atol=0)
        checked += 1
    assert checked == 14  # 7 linear layers x 2 decoder blocks


# ---------------------------------------------------------------------------------------------------- CLI

def test_cli_json_extends_the_inspect_document(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-block", data="random")
    result = runner.invoke(app, ["load", folder, "-p", "xpu", "--device", "cpu", "--format", "json", "--tokens", "4"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    inspected = json.loads(runner.invoke(app, ["inspect", folder, "-p", "xpu", "--format", "json"]).stdout)
    assert doc["command"] == "load" and inspected["command"] == "inspect" and doc["ok"] is True
    assert [layer["name"] for layer in doc["layers"]] == [layer["name"] for layer in inspected["layers"]]
    down = next(layer for layer in doc["layers"] if layer["name"] == "model.layers.0.mlp.down_proj")
    assert down["kernel"] == "XPUFp8BlockScaledMMKernel"
    assert down["load"]["execution"] == "emulated on cpu (block numerics: fp32 per-K-block GEMM)"
    assert down["load"]["status"] == "ok" and down["load"]["tokens"] == 4
    assert doc["device"] == "cpu" and doc["load_summary"] == {"ok": 9, "warn": 0, "FAIL": 0, "not run": 0}


def test_cli_layers_subset_junit_and_markdown(make_checkpoint, tmp_path):
    folder = make_checkpoint(quant="ct-fp8-block", data="random")
    result = runner.invoke(app, ["load", folder, "-p", "xpu", "-d", "cpu", "--layers", r"layers\.1\..*proj$",
                                 "--format", "junit"])
    assert result.exit_code == 0, result.output
    suite = ET.fromstring(result.stdout).find("testsuite")
    # the attention layers --layers left out keep inspect's findings as their testcase, as FusedMoE layers do
    assert [case.get("name") for case in suite] == ["model"] + [
        f"model.layers.1.{m}" for m in ("mlp.down_proj", "mlp.gate_up_proj", "self_attn.qkv_proj", "self_attn.o_proj")
    ] + ["model.layers.{0..1}.self_attn.attn"]
    out = tmp_path / "summary.md"
    result = runner.invoke(app, ["load", folder, "-p", "xpu", "-d", "cpu", "--layers", "lm_head", "-o", str(out)])
    assert result.exit_code == 0 and "1 of 9 modules run" in result.stdout
    assert "| `lm_head` | unquantized |" in out.read_text()


def test_cli_table_names_every_failing_layer_and_exits_1(make_checkpoint):
    result = runner.invoke(app, ["load", make_checkpoint(quant="ct-fp8-block", data="random"), "-p", "xpu",
                                 "--vllm", "0.27", "-d", "cpu"])
    assert result.exit_code == 1
    assert "not run" in result.stdout and "FAIL: 8 not run of 9 modules" in " ".join(result.stdout.split())


@pytest.mark.parametrize("args, message", [
    (["--device", "cuda"], "sees no cuda device"),
    (["--device", "tpu"], "expected auto, cpu, cuda[:i] or xpu[:i]"),
    (["--layers", "("], "is not a valid regular expression"),
    (["--layers", "no_such_module"], "matches none of the 9 modules"),
])
def test_bad_options_are_one_line_errors(make_checkpoint, args, message):
    result = runner.invoke(app, ["load", make_checkpoint(quant="ct-fp8-block", data="random"), "-p", "xpu", *args])
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_platform_defaults_to_the_device(make_checkpoint):
    result = runner.invoke(app, ["load", make_checkpoint(quant="ct-fp8-dynamic", data="random"), "-d", "cpu",
                                 "--assume", "cpu_amx=yes", "--format", "json"])
    doc = json.loads(result.stdout)
    assert doc["platform"] == "device: cpu" and doc["device_platform"] == "device: cpu"
    assert {layer["load"]["emulated"] for layer in doc["layers"]} == {False}


def test_block_layers_run_the_triton_port_under_the_interpreter(make_checkpoint):
    """TRITON_INTERPRET=1 must be set before triton is imported, so this runs in a fresh process."""
    pytest.importorskip("triton")
    import subprocess
    import sys

    folder = make_checkpoint(quant="ct-fp8-block", data="random")
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run([sys.executable, "-m", "fp8check", "load", folder, "-p", "xpu", "-d", "cpu", "--layers",
                           r"layers\.0\.self_attn\.o_proj", "--format", "json", "--tokens", "4"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    run = next(layer["load"] for layer in json.loads(proc.stdout)["layers"] if layer["load"])
    assert run["execution"] == ("emulated on cpu (block numerics: Triton block GEMM, interpreted (TRITON_INTERPRET=1), "
                                "vLLM's w8a8_triton_block_scaled_mm)")
    assert run["rel_error"] <= run["bound"]


def test_a_hub_repo_downloads_only_the_shards_of_the_selected_layers(make_checkpoint, monkeypatch, tmp_path):
    from fakehub import FakeHub

    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    folder = make_checkpoint(quant="ct-fp8-block", data="random", shards=3)
    with open(os.path.join(folder, "model.safetensors.index.json")) as fh:
        weight_map = json.load(fh)["weight_map"]
    with FakeHub() as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        server.add_repo("org/tiny", folder)
        result = runner.invoke(app, ["load", "org/tiny", "-p", "xpu", "-d", "cpu", "--layers", "lm_head",
                                     "--format", "json"])
        assert result.exit_code == 0, result.output
        whole = {r.path.rsplit("/", 1)[1] for r in server.log if r.method == "GET" and "/resolve/" in r.path
                 and r.path.endswith(".safetensors") and r.range is None}
    assert whole == {weight_map["lm_head.weight"]}  # the other shards: header ranges only
    doc = json.loads(result.stdout)
    assert doc["load_summary"]["ok"] == 1 and doc["model"] == "org/tiny"


def test_without_torch_load_says_what_to_install_and_inspect_still_works(make_checkpoint):
    import subprocess
    import sys

    folder = make_checkpoint(quant="ct-fp8-block")
    code = ("import sys; sys.modules['torch'] = None; from fp8check.cli.app import main; "
            "sys.argv = ['fp8check'] + sys.argv[1:]; main()")
    load_proc = subprocess.run([sys.executable, "-c", code, "load", folder, "-p", "xpu"], capture_output=True, text=True)
    assert load_proc.returncode == 2 and "Traceback" not in load_proc.stderr
    assert "fp8check load needs torch, which is not installed: pip install 'fp8check[load]'" in load_proc.stderr
    inspect_proc = subprocess.run([sys.executable, "-c", code, "inspect", folder, "-p", "xpu"], capture_output=True)
    assert inspect_proc.returncode == 0


@pytest.mark.parametrize("dtype, codes, nans", [
    (torch.float8_e4m3fn, [0x00, 0x7F, 0xFF, 0x7E, 0xFE], 2),      # 0x7E / 0xFE are +-448, not NaN
    (torch.float8_e4m3fnuz, [0x00, 0x80, 0x7F, 0xFF], 1),          # fnuz: only 0x80
    (torch.float8_e5m2, [0x00, 0x7C, 0x7D, 0xFF, 0x7B], 3),        # e5m2: inf 0x7C and NaN 0x7D..0x7F
])
def test_nan_codes_are_counted_from_the_raw_bytes(dtype, codes, nans):
    from fp8check.core.load.weights import fp8_code_problems

    weight = torch.tensor(codes, dtype=torch.uint8).view(dtype)
    assert fp8_code_problems(weight) == (nans, False)
    assert fp8_code_problems(torch.zeros(4, dtype=torch.uint8).view(dtype)) == (0, True)


def test_e8m0_scale_byte_0xff_is_nan():
    from fp8check.core.load.weights import scale_errors

    scale = torch.tensor([127, 0xFF, 0xFF, 120], dtype=torch.uint8).view(torch.float8_e8m0fnu)
    assert scale_errors("m.weight_scale_inv", scale) == ["m.weight_scale_inv: 2 of 4 E8M0 scale bytes are 0xFF (NaN)"]


@pytest.mark.parametrize("n, k, block", [(512, 1024, (128, 128)), (200, 320, (128, 128)), (256, 512, (64, 128))])
@pytest.mark.parametrize("grouped", [False, True])
def test_fp32_products_equal_the_dequantized_product(n, k, block, grouped):
    """The block products (whole or ragged blocks) against dequantize-then-matmul, with and without activation groups
    (the MX and block emulations pass the rows dequantized per group)."""
    generator = torch.Generator().manual_seed(n + k)
    codes = torch.randn(n, k, generator=generator)
    scale = torch.rand(-(-n // block[0]), -(-k // block[1]), generator=generator) + 0.5
    x = torch.randn(8, k, generator=generator)
    groups = torch.rand(8, -(-k // block[1]), generator=generator) + 0.5 if grouped else None
    weight = codes * scale.repeat_interleave(block[0], 0)[:n].repeat_interleave(block[1], 1)[:, :k]
    rows = x * groups.repeat_interleave(block[1], 1)[:, :k] if grouped else x
    expected = rows.double() @ weight.double().t()
    got = numerics.fp32_products(rows, codes, scale, block)
    assert float((got.double() - expected).norm() / expected.norm()) < 1e-6


def test_a_moe_layer_vllm_refuses_fails_load_and_is_named(make_checkpoint):
    """Experts are routed from headers (not run): a refused FusedMoE still fails the run, in every format."""
    folder = make_checkpoint(quant="fp8-block", architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=4,
                             moe_intermediate=192, hidden=512, head_dim=128, data="random")
    result = runner.invoke(app, ["load", folder, "-p", "h100", "-d", "cpu", "--tp", "2", "--vllm", "0.28",
                                 "--layers", "lm_head"])
    assert result.exit_code == 1
    text = " ".join(result.stdout.split())
    assert "FusedMoE model.layers.0.mlp.experts: The output_size of gate's and up's weight = 96" in text
    assert "2 FusedMoE layer(s) vLLM would refuse" in text
    junit = runner.invoke(app, ["load", folder, "-p", "h100", "-d", "cpu", "--tp", "2", "--vllm", "0.28", "--layers",
                                "lm_head", "-f", "junit"])
    failed = [case.get("name") for case in ET.fromstring(junit.stdout).iter("testcase") if case.find("failure") is not None]
    assert failed == ["model.layers.0.mlp.experts", "model.layers.1.mlp.experts"]


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_judge_counts_outputs_that_are_not_finite(bad):
    """The verdict's finiteness check (one aminmax pass, a count only when it flags) counts every NaN and infinity."""
    recipe = load_gemm.Recipe(numerics.BLOCK, "block", (128, 128))
    reference = torch.randn(4, 300, generator=torch.Generator().manual_seed(6))
    output = reference.to(torch.bfloat16)
    clean = load_gemm.judge("m", recipe, torch.bfloat16, output, (("", output, reference),), None,
                            load_gemm.MAX_SCALE, 0.0)
    assert clean.status == "ok" and not clean.errors
    output[0, 0], output[3, 299], output[2, 7] = bad, bad, float("nan")
    verdict = load_gemm.judge("m", recipe, torch.bfloat16, output, (("", output, reference),), None,
                              load_gemm.MAX_SCALE, 0.0)
    assert verdict.status == "FAIL"
    assert "m: 3 of 1200 outputs are NaN or infinite" in verdict.errors
