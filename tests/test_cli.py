"""The command line: JSON contract, exit codes, the original XPU crash both ways, no heavy imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.synth import Spec, write_checkpoint

runner = CliRunner()
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "tiny-qwen3-fp8-block")
# RedHatAI/Qwen3-32B-FP8-block's shapes; data is a sparse hole, so 64 layers cost no disk.
QWEN3_32B = Spec(quant="ct-fp8-block", architecture="Qwen3ForCausalLM", model_type="qwen3", hidden=5120,
                 intermediate=25600, layers=64, heads=64, kv_heads=8, head_dim=128, vocab=151936, shards=7,
                 data="sparse")
# 64 attention heads, 8 KV heads: vLLM loads it at TP 32 (4 replicas of each KV head), past the 1..16 sweep.
WIDE_ATTENTION = dict(heads=64, kv_heads=8, head_dim=128, hidden=1024, intermediate=4096, data="sparse")


@pytest.fixture(scope="module")
def qwen3_32b(tmp_path_factory):
    return write_checkpoint(str(tmp_path_factory.mktemp("qwen3-32b-fp8-block")), QWEN3_32B)


def run(*args):
    return runner.invoke(app, list(args))


def test_qwen3_32b_fp8_block_on_xpu_tp2_routes_to_w8a8(qwen3_32b):
    result = run("inspect", qwen3_32b, "--platform", "xpu", "--tp", "2", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["ok"] is True and doc["tp"] == 2 and doc["platform"] == "xpu" and doc["vllm"] == "0.34"
    quantized = [layer for layer in doc["layers"] if layer["kernel"]]
    assert len(doc["layers"]) == 1 + 64 * 4 and len(quantized) == 64 * 4
    assert {(layer["scheme"], layer["kernel"]) for layer in quantized} == {
        ("CompressedTensorsW8A8Fp8", "XPUFp8BlockScaledMMKernel")}
    assert doc["tp_sizes_ok"] == [1, 2, 4, 8]
    table = run("inspect", qwen3_32b, "--platform", "xpu", "--tp", "2")
    assert "model.layers.{0..63}.mlp.down_proj" in table.stdout and "XPUFp8BlockScaledMMKernel" in table.stdout


def test_qwen3_32b_before_50787_reproduces_the_original_crash(qwen3_32b):
    result = run("inspect", qwen3_32b, "--platform", "xpu", "--tp", "2", "--vllm", "0.27.1", "--format", "json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    layer = next(layer for layer in doc["layers"] if layer["name"] == "model.layers.0.self_attn.qkv_proj")
    assert layer["scheme"] == "CompressedTensorsW8A16Fp8" and layer["kernel"] is None
    assert layer["errors"] == ["Failed to find a kernel that can implement the ScaledMM linear layer. Reasons: \n"
                               "XPUW8A16FP8LinearKernel XPUW8A16FP8Linear only support per-channel and per-tensor "
                               "quantization."]
    assert layer["rejected"] == [{"kernel": "XPUW8A16FP8LinearKernel", "verified": True, "reason":
                                  "XPUW8A16FP8LinearKernel XPUW8A16FP8Linear only support per-channel and per-tensor "
                                  "quantization."}]
    fixed = run("inspect", qwen3_32b, "--platform", "xpu", "--tp", "2", "--vllm", "0.27", "--linear-backend", "xpu")
    assert fixed.exit_code == 0


def test_tp16_fails_with_vllms_message(qwen3_32b):
    result = run("inspect", qwen3_32b, "--platform", "h100", "--tp", "16")
    assert result.exit_code == 1
    assert "Weight output_partition_size = 1600 is not divisible by weight quantization block_n = 128." in result.stdout


def test_json_contract_per_layer(qwen3_32b):
    doc = json.loads(run("inspect", EXAMPLE, "-p", "xpu", "--tp", "2", "-f", "json").stdout)
    assert {"schema_version", "ok", "model", "platform", "tp", "vllm", "errors", "layers"} <= set(doc)
    assert doc["schema_version"] == 1
    layer = next(layer for layer in doc["layers"] if layer["name"] == "model.layers.0.self_attn.qkv_proj")
    assert layer["shards"] == [f"model.layers.0.self_attn.{p}_proj" for p in "qkv"]
    assert layer["strategy"] == "block [128, 128]" and layer["activation"] == "dynamic group 128"
    assert layer["shape"] == [1024, 256]  # the table prints 1024×256 and block 128×128; the JSON keeps the lists
    assert {"name", "shards", "strategy", "scheme", "kernel", "rejected", "errors"} <= set(layer)


def test_rules_json_lists_profiles_with_prs():
    doc = json.loads(run("rules", "--format", "json").stdout)
    names = {p["name"]: p for p in doc["profiles"]}
    assert 50787 in names["0.28"]["includes"] and 50787 not in names["0.26"]["includes"]
    assert 43645 in names["0.26"]["includes"] and names["0.34"]["latest"] is True  # one profile per release


def test_verbose_table_shows_reasons_and_assumptions():
    result = run("inspect", EXAMPLE, "-p", "l40s", "-v")
    assert result.exit_code == 0
    assert "CutlassFp8BlockScaledMMKernel The device compute capability of 89 is not supported." in result.stdout
    assert "supported.." not in result.stdout  # vLLM's doubled period is one for people (the JSON keeps it)
    assert "deep_gemm=yes" in result.stdout  # every CUDA wheel vendors DeepGEMM (vllm/third_party/deep_gemm)


def test_markdown_and_output_file(tmp_path):
    out = tmp_path / "report.md"
    result = run("inspect", EXAMPLE, "-p", "xpu", "-f", "markdown", "-o", str(out))
    assert result.exit_code == 0
    assert "| `model.layers.{0..1}.mlp.down_proj` |" in out.read_text()
    assert out.read_text().strip() == result.stdout.strip()


@pytest.mark.parametrize("args,message", [
    (["inspect", "/no/such/folder"], "no such folder"),
    (["inspect", EXAMPLE, "--platform", "tpu"], "--platform 'tpu'"),
    (["inspect", EXAMPLE, "--vllm", "banana"], "--vllm 'banana'"),
    (["inspect", EXAMPLE, "--vllm", "0.20"], "no rule profile older than 0.25"),
    (["inspect", EXAMPLE, "--linear-backend", "fastest"], "unknown linear backend 'fastest'"),
    (["inspect", EXAMPLE, "--kernel-config", "{"], "--kernel-config is not valid JSON"),
    (["inspect", EXAMPLE, "--assume", "warp_drive=yes"], "--assume 'warp_drive=yes'"),
])
def test_bad_usage_exits_2_with_one_line(args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.stderr and "Traceback" not in result.output


def test_bad_input_in_json_mode_still_prints_one_json_object(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"\xff" * 4)
    result = run("inspect", str(tmp_path), "-f", "json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and "model.safetensors" in doc["errors"][0]


def test_out_of_scope_quantization_is_reported_not_crashed(make_checkpoint):
    folder = make_checkpoint(quant=None, extra_config={"quantization_config": {"quant_method": "gptq", "bits": 4}})
    result = run("inspect", folder)
    assert result.exit_code == 2 and "'gptq' is out of fp8check's scope" in result.stderr


def test_unquantized_model_is_fine(make_checkpoint):
    result = run("inspect", make_checkpoint(quant=None), "-p", "xpu", "-f", "json")
    assert result.exit_code == 0
    schemes = {layer["name"]: layer["scheme"] for layer in json.loads(result.stdout)["layers"]}
    assert schemes.pop("lm_head") == "UnquantizedEmbeddingMethod"
    assert set(schemes.values()) == {"UnquantizedLinearMethod"}


def test_help_teaches():
    result = run("inspect", "--help")
    for word in ("--platform", "--tp", "--vllm", "--linear-backend", "--assume", "--format", "Exit codes"):
        assert word in result.stdout


@pytest.mark.parametrize("command", [
    ["inspect", EXAMPLE, "-p", "xpu", "-f", "json"],
    ["matrix", EXAMPLE, "-f", "json"],
    ["diff", EXAMPLE, "--from", "0.27", "-p", "xpu", "-f", "json"],
    ["kernels", "-p", "h100", "-f", "json"],
    ["schema"],
])
def test_header_only_commands_import_no_heavy_modules(command):
    """inspect and everything built on headers alone answer in well under a second: no torch, numpy, safetensors.
    (typer 0.29 itself imports pydantic to coerce options: that is the CLI framework's floor, not ours.)"""
    code = (
        "import sys\nfrom fp8check.cli.app import main\n"
        f"sys.argv = ['fp8check', *{command!r}]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\nelse:\n    code = 0\n"
        "heavy = [m for m in ('torch', 'transformers', 'compressed_tensors', 'safetensors', 'numpy', 'jsonschema')"
        " if m in sys.modules]\n"
        "print('HEAVY', heavy, code, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "HEAVY [] 0" in proc.stderr, proc.stderr
    json.loads(proc.stdout)


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "fp8check", "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("fp8check ")


@pytest.mark.parametrize("argv, code", [(["inspect", EXAMPLE, "-p", "xpu", "-f", "json"], 0),
                                        (["inspect", "/no/such/folder"], 2), (["inspect", EXAMPLE, "--tp", "0"], 2)])
def test_the_console_entry_ends_with_mains_code_after_atexit_and_flushed_output(tmp_path, argv, code):
    """run() skips only the interpreter's teardown: the exit code is main's, atexit's handlers run, and everything
    written (stdout through a pipe, a report file) is there."""
    report = tmp_path / "report.json"
    args = argv + (["-o", str(report)] if code == 0 else [])
    script = ("import atexit, sys\nfrom fp8check.cli.entry import run\n"
              "atexit.register(lambda: print('ATEXIT', file=sys.stderr))\n"
              f"sys.argv = ['fp8check', *{args!r}]\nrun()\n"
              "print('NOT REACHED', file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == code, proc.stderr
    assert "ATEXIT" in proc.stderr and "NOT REACHED" not in proc.stderr
    if code == 0:
        assert json.loads(proc.stdout)["ok"] and json.loads(report.read_text())["ok"]
    else:
        assert proc.stderr.startswith("error:")


def test_each_family_registers_the_commands_the_app_expects_of_it():
    """app_for picks a family by the names in FAMILIES without importing the others: they must be what each
    module's register() adds, and all of them together the full app, in --help's order."""
    from fp8check.cli.app import FAMILIES, build_app

    def names(app):
        return [command.name or command.callback.__name__.replace("_", "-") for command in app.registered_commands]

    for family, commands in FAMILIES.items():
        assert names(build_app((family,))) == list(commands), family
    assert names(app) == [name for commands in FAMILIES.values() for name in commands]


@pytest.mark.parametrize("argv, imported", [
    (["inspect", EXAMPLE, "-p", "xpu", "-f", "json"], ["fp8check.cli.inspect"]),
    (["kernels", "-p", "h100", "-f", "json"], ["fp8check.cli.reference"]),
    (["--version"], ["fp8check.cli.inspect", "fp8check.cli.load", "fp8check.cli.planning", "fp8check.cli.reference"]),
])
def test_a_command_line_builds_only_its_commands_family(argv, imported):
    code = ("import sys\nfrom fp8check.cli.app import main\n"
            f"sys.argv = ['fp8check', *{argv!r}]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('FAMILIES', sorted(m for m in sys.modules if m in ('fp8check.cli.inspect', 'fp8check.cli.load', "
            "'fp8check.cli.planning', 'fp8check.cli.reference')), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and f"FAMILIES {imported}" in proc.stderr, proc.stderr


@pytest.mark.parametrize("argv", [["inspect", "--help"], ["inspect", "/no/such/folder"],
                                  ["inspect", EXAMPLE, "--tp", "0"], ["load", "--help"], ["load", EXAMPLE, "--tokens", "0"], ["matrix", "--help"],
                                  ["diff", EXAMPLE], ["kernels", "--help"], ["rules", "extra"]])
def test_a_familys_own_app_answers_as_the_full_app(argv):
    """What users run (app_for: one family) and what the other tests run (app: every family) print the same help,
    the same errors and exit the same way."""
    from fp8check.cli.app import app_for

    alone, full = runner.invoke(app_for(argv), argv), runner.invoke(app, argv)
    assert (alone.exit_code, alone.stdout, alone.stderr) == (full.exit_code, full.stdout, full.stderr)


def test_the_entry_pauses_the_collector_until_the_command_starts_and_freezes_what_startup_built():
    """Startup runs without the cycle collector; the command's work with it, and without startup's objects to walk.
    Importing the app (as tests and the API do) leaves the interpreter's collector alone."""
    code = ("import gc, sys\nimport fp8check, fp8check.api, fp8check.cli.app, fp8check.cli.entry\n"
            "assert gc.isenabled() and gc.get_freeze_count() == 0\n"
            "startup = []\nimport fp8check.cli.app as app\nbuild = app.build_app\n"
            "app.build_app = lambda *args: startup.append(gc.isenabled()) or build(*args)\n"
            "seen = []\ninspect = fp8check.api.inspect_with_checkpoint\n"
            "def spy(*args, **kwargs):\n    seen.append((gc.isenabled(), gc.get_freeze_count() > 10000))\n"
            "    return inspect(*args, **kwargs)\n"
            "fp8check.api.inspect_with_checkpoint = spy\n"
            "import atexit\natexit.register(lambda: print('GC', startup, seen, file=sys.stderr))\n"
            f"sys.argv = ['fp8check', 'inspect', {EXAMPLE!r}, '-p', 'xpu', '-f', 'json']\n"
            "fp8check.cli.entry.run()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "GC [False] [(True, True)]" in proc.stderr, proc.stderr


def test_a_process_that_re_runs_the_console_script_keeps_its_collector(tmp_path):
    """multiprocessing's spawn re-runs the parent's script (pip's console script imports the entry at its top) in
    every child, as `load --tp` starts its ranks: importing the entry must not pause the child's collector."""
    script = tmp_path / "fp8check-script.py"
    script.write_text("import gc, multiprocessing, sys\nfrom fp8check.cli.entry import run\n\n"
                      "def child(queue):\n    queue.put(gc.isenabled())\n\n"
                      "if __name__ == '__main__':\n    context = multiprocessing.get_context('spawn')\n"
                      "    queue = context.Queue()\n    process = context.Process(target=child, args=(queue,))\n"
                      "    process.start()\n    print('CHILD', queue.get(timeout=60))\n    process.join()\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert "CHILD True" in proc.stdout, proc.stdout + proc.stderr


def test_junit_xml_has_one_testcase_per_module_and_fails_like_the_exit_code(tmp_path):
    from xml.etree import ElementTree as ET

    result = run("inspect", EXAMPLE, "-p", "xpu", "--tp", "2", "--vllm", "0.27", "-f", "junit", "-o",
                 str(tmp_path / "fp8check.xml"))
    assert result.exit_code == 1
    suite = ET.fromstring((tmp_path / "fp8check.xml").read_text()).find("testsuite")
    cases = suite.findall("testcase")
    assert len(cases) == 1 + 9 + 1 and suite.get("failures") == "8"  # the model, 9 modules, the attention layers
    failed = {c.get("name"): c.find("failure") for c in cases if c.find("failure") is not None}
    assert "model.layers.0.mlp.down_proj" in failed and "lm_head" not in failed
    assert "Failed to find a kernel" in failed["model.layers.0.mlp.down_proj"].get("message")
    ok = ET.fromstring(run("inspect", EXAMPLE, "-p", "xpu", "-f", "junit").stdout).find("testsuite")
    assert ok.get("failures") == "0"


def test_crosscheck_without_vllm_says_what_to_install():
    import importlib.util

    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here")
    result = run("crosscheck", EXAMPLE, "--tp", "2")
    assert result.exit_code == 2 and "vLLM is not installed in this environment" in result.stderr
    assert "Traceback" not in result.output


def test_rules_list_the_changes_read_from_each_wheel():
    doc = json.loads(run("rules", "-f", "json").stdout)
    profiles = {p["name"]: p for p in doc["profiles"]}
    assert "cpu-fp8-channel" in profiles["0.33"]["changes"] and "cpu-fp8-channel" not in profiles["0.32"]["changes"]
    assert set(profiles["0.33"]["changes"]) <= set(doc["wheel_changes"])
    assert "cpu-fp8-channel" in run("rules").stdout


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_fail_on_warning_keeps_a_warning_a_warning_and_says_why_it_fails(fmt):
    """Issue 20 item 2: the kv-replicated warning at TP 4 (2 KV heads) is printed once, as a warning, and the
    verdict says --fail-on warning fails on it; the JSON still reads ok with no error."""
    args = ["inspect", EXAMPLE, "-p", "h100", "--tp", "4", "--fail-on", "warning"]
    result = run(*args, "-f", fmt)
    assert result.exit_code == 1
    assert result.stdout.count("kv-replicated:") == 1 and "error: kv-replicated" not in result.stdout
    assert "FAIL: 1 warning (--fail-on warning); otherwise OK: 9 linear modules route" in flat(result.stdout)
    assert "model-level error" not in result.stdout
    doc = json.loads(run(*args, "-f", "json").stdout)
    assert doc["ok"] is True and doc["errors"] == [] and doc["warnings"][0].startswith("kv-replicated:")


@pytest.mark.parametrize("tp,warned", [(3, False), (4, True)])
def test_kv_replication_is_warned_only_at_a_tp_that_loads(tp, warned):
    """Issue 20 item 3: vLLM refuses TP 3 for 4 attention heads, so no replica count is built from it."""
    doc = json.loads(run("inspect", EXAMPLE, "-p", "xpu", "--tp", str(tp), "-f", "json").stdout)
    kv = [w for w in doc["warnings"] if w.startswith("kv-replicated:")]
    assert bool(kv) is warned
    if warned:
        assert "replicated on 2 ranks" in kv[0] and "stored 2 times" in kv[0]


@pytest.mark.parametrize("tp,replicas", [(8, None), (16, 2), (32, 4), (64, None)])
def test_kv_replication_is_warned_at_every_tp_that_loads_even_past_the_sweep(make_checkpoint, tp, replicas):
    """The warning follows the report's own verdict at this TP, not the 1..16 sweep: TP 8 replicates nothing, TP 32
    loads with 4 replicas, and TP 64 (8 replicas) is refused, its MLP shards (4096 / 64) narrower than a block."""
    doc = json.loads(run("inspect", make_checkpoint(**WIDE_ATTENTION), "-p", "h100", "--tp", str(tp), "-f",
                         "json").stdout)
    kv = [w for w in doc["warnings"] if w.startswith("kv-replicated:")]
    assert doc["ok"] is (tp != 64) and len(kv) == (replicas is not None)
    if replicas:
        assert f"TP is {tp}:" in kv[0] and f"stored {replicas} times" in kv[0] and kv[0].endswith("1, 2, 4, 8")


@pytest.mark.parametrize("command", [
    ["inspect", EXAMPLE, "-p", "h100", "--tp", "4", "-v"],
    ["inspect", EXAMPLE, "-p", "xpu", "--wide"],
    ["matrix", EXAMPLE],
    ["diff", EXAMPLE, "--from", "0.27", "-p", "xpu"],
    ["kernels", "-p", "h100"],
    ["rules"],
    ["env"],
])
def test_no_output_line_ends_in_a_space(command):
    """Piped, stdout is 200 columns wide: rich's padding of every message and cell to it must not reach the log."""
    result = run(*command)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() and [line for line in result.stdout.splitlines() if line.endswith(" ")] == []


@pytest.mark.parametrize("columns,widest", [("80", 80), ("120", 120), (None, 200), ("wide", 200)])
def test_piped_output_honours_columns(columns, widest):
    """$COLUMNS sets the width of piped output (rich reads it); unset or not a number, 200 columns for CI logs."""
    result = runner.invoke(app, ["inspect", EXAMPLE, "-p", "h100", "--tp", "4", "-v"], env={"COLUMNS": columns})
    assert result.exit_code == 0, result.output
    lengths = [len(line) for line in result.stdout.splitlines()]
    assert max(lengths) <= widest and max(lengths) > widest - 30  # the warning and memory lines fill the width


def test_load_names_a_refused_layer_by_its_scheme_and_prints_a_model_refusal_once():
    """Issue 20 items 1 and 9: `load -p xpu --vllm 0.27` says what the refused FP8 block layers are; at TP 3
    the heads refusal is printed once, not once per module."""
    refused = flat(run("load", EXAMPLE, "-p", "xpu", "--tp", "2", "--vllm", "0.27").stdout)
    assert "CompressedTensorsW8A16Fp8 → not run: vLLM refuses it" in refused and "unquantized → -" not in refused
    assert "device: cpu" not in refused and "(0.27)" not in refused
    at_tp3 = run("load", EXAMPLE, "-p", "xpu", "--tp", "3")
    assert at_tp3.exit_code == 1
    assert flat(at_tp3.stdout).count("must be divisible by tensor parallel size (3)") == 1


def test_a_missing_config_names_the_folder(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(open(os.path.join(EXAMPLE, "model.safetensors"), "rb").read())
    result = run("inspect", str(tmp_path))
    assert result.exit_code == 2
    assert f"config.json: not found in the model folder {tmp_path}" in flat(result.stderr)
