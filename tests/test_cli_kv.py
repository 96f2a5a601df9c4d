"""The FP8 KV cache as a user meets it (issue 19): --kv-cache-dtype and --attention-backend on inspect, matrix,
diff and load (and the Python API), refused in one line with exit 2 when vLLM would refuse them; one row per kind
of attention layer in the inspect table, collapsed as linear rows are; the JSON's `attention` and
`attention_runs`, valid against the schema; JUnit's attention testcases; load's KV cache round trips rendered."""

from __future__ import annotations

import functools
import io
import json
import os
import subprocess
import sys

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

import fp8check
from fp8check.api import routing_options, target
from fp8check.cli import render
from fp8check.cli.app import app
from fp8check.core import records, vocabulary
from fp8check.core.model.memory import MemoryFit
from fp8check.core.report import documents, junit
from fp8check.kernels.registry import Rejection
from fp8check.schema import schema_text

runner = CliRunner()
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "tiny-qwen3-fp8-block")
COMMANDS = typer.main.get_command(app).commands
KV_COMMANDS = ("inspect", "matrix", "diff", "load")
CT = "CompressedTensorsKVCacheMethod"


def command_line(command: str, *options: str) -> list[str]:
    """`command` on the bundled example with `options` (diff needs its --from)."""
    return [command, EXAMPLE, *(("--from", "0.28") if command == "diff" else ()), *options]


def attention(index: int, **changes) -> records.AttentionReport:
    """Layer `index`'s attention as vLLM builds it on an A100 with --kv-cache-dtype fp8: FlashAttention refuses
    the FP8 cache, FlashInfer takes it."""
    fields = dict(name=f"model.layers.{index}.self_attn.attn", kind="full", head_size=128, num_heads=32,
                  num_kv_heads=8, kv_cache_dtype="fp8_e4m3", cache_dtype="float8_e4m3fn", kv_method=CT,
                  scale_strategy="tensor", scales=(f"model.layers.{index}.self_attn.k_scale",
                                                   f"model.layers.{index}.self_attn.v_scale"),
                  backend="FLASHINFER", rejected=(Rejection("FLASH_ATTN", "kv_cache_dtype not supported"),),
                  errors=(), warnings=(), notes=())
    return records.AttentionReport(**{**fields, **changes})


MISSING_V = ("model.layers.3.self_attn.v_scale is missing: Using KV cache scaling factor 1.0 for fp8_e4m3. If this "
             "is unintended, verify that k/v_scale scaling factors are properly set in the checkpoint.")
E5M2 = "fp8_e5m2 kv-cache is not supported with fp8 checkpoints."
SLIDING = dict(kind="sliding window 4096")


def with_attention(layers) -> records.InspectReport:
    """The example's inspect report (A100) carrying these attention layers: the producers' records, built here."""
    return fp8check.inspect(EXAMPLE, platform="a100")._replace(attention=tuple(layers))


def drawn(draw, width: int = 100) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, highlight=False, force_terminal=False)
    draw(console)
    return console.export_text()


def table_of(report, verbose: bool = False, wide: bool = False, width: int = 100) -> str:
    return drawn(lambda console: render.table(report, console, verbose, None, wide), width)


def lines_starting(text: str, prefix: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(prefix)]


# ----------------------------------------------------------------------------------------------------- options

@pytest.mark.parametrize("command", KV_COMMANDS)
def test_every_checking_command_takes_the_kv_options_with_vllms_defaults(command):
    params = {p.opts[0]: p for p in COMMANDS[command].params if p.param_type_name == "option"}
    assert params["--kv-cache-dtype"].default == "auto" and params["--attention-backend"].default == "auto"
    assert not params["--kv-cache-dtype-skip-layers"].default


@pytest.mark.parametrize("command", KV_COMMANDS)
@pytest.mark.parametrize("options, message", [
    (("--kv-cache-dtype", "fp9"), "--kv-cache-dtype 'fp9' is not a vLLM 0.34 cache dtype; choose from auto, "),
    (("--kv-cache-dtype", "FP8"), "--kv-cache-dtype 'FP8' is not a vLLM"),           # vLLM's choices are exact
    (("--kv-cache-dtype", "octave_k3v4", "--vllm", "0.28"), "is not a vLLM 0.28 cache dtype"),  # added in 0.33
    (("--attention-backend", "flash_attention"), "Unknown attention backend: 'FLASH_ATTENTION'. Valid options are: "),
])
def test_a_value_vllm_refuses_is_one_line_and_exit_2(command, options, message):
    if command == "diff" and "--vllm" in options:
        options = ("--kv-cache-dtype", "octave_k3v4", "--to", "0.28")  # diff's release is --to
    result = runner.invoke(app, command_line(command, *options))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and message in result.stderr, result.output


@pytest.mark.parametrize("given, taken", [("auto", None), (None, None), ("flashinfer", "FLASHINFER"),
                                          ("FLASH_ATTN", "FLASH_ATTN"), (" triton_attn ", "TRITON_ATTN")])
def test_the_attention_backend_is_read_as_vllm_reads_it_in_any_case(given, taken):
    options = routing_options(target("h100"), attention_backend=given, kv_cache_dtype="fp8")
    assert (options.attention_backend, options.kv_cache_dtype) == (taken, "fp8")


@pytest.mark.parametrize("keywords, message", [
    (dict(kv_cache_dtype="fp9"), "--kv-cache-dtype 'fp9' is not a vLLM 0.34 cache dtype"),
    (dict(kv_cache_dtype=8), "--kv-cache-dtype 8 is not a vLLM"),
    (dict(attention_backend="nope"), "Unknown attention backend: 'NOPE'"),
    (dict(attention_backend=3), "--attention-backend 3: expected a backend name such as FLASH_ATTN, or auto"),
    (dict(attention_backend="b12x", vllm="0.28"), "Unknown attention backend: 'B12X'"),  # 0.33's enum has it
])
def test_the_python_api_refuses_them_with_the_same_line(keywords, message):
    with pytest.raises(fp8check.InputError) as caught:
        fp8check.inspect(EXAMPLE, platform="xpu", **keywords)
    assert message in str(caught.value)


def test_load_refuses_them_before_importing_torch():
    code = ("import sys, fp8check\n"
            "for keywords in ({'kv_cache_dtype': 'fp9'}, {'attention_backend': 'nope'}):\n"
            "    try:\n"
            f"        fp8check.load({EXAMPLE!r}, **keywords)\n"
            "    except fp8check.InputError:\n"
            "        pass\n"
            "print('torch' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr


# ----------------------------------------------------------------------------------------------------- inspect

def test_alike_attention_layers_are_one_row_and_a_route_like_the_linear_ones():
    report = with_attention([attention(0), attention(1), attention(2), attention(3, **SLIDING)])
    text = table_of(report)
    assert [line.split()[:2] for line in lines_starting(text, "model.layers.")[-2:]] == [
        ["model.layers.{0..2}.self_attn.attn", "full"], ["model.layers.3.self_attn.attn", "sliding"]]
    route = next(line for line in text.splitlines() if "attention" in line and "→" in line)
    assert route.split()[1:] == ["4", "attention", CT, "→", "FLASHINFER"]  # both rows take one route
    row = lines_starting(text, "model.layers.{0..2}.self_attn.attn")[0].split()
    assert row[2:] == ["32/8×128", "fp8_e4m3", "→", "float8_e4m3fn", "tensor", route.split()[0], "ok"]
    assert max(len(line) for line in text.splitlines()) <= 100


@pytest.mark.parametrize("verbose", [False, True])
def test_rejected_backends_and_scale_names_show_under_the_row_with_verbose(verbose):
    text = " ".join(table_of(with_attention([attention(0), attention(1)]), verbose=verbose).split())
    shown = ("rejected FLASH_ATTN: kv_cache_dtype not supported" in text,
             "scales: model.layers.{i}.self_attn.k_scale, model.layers.{i}.self_attn.v_scale" in text)
    assert shown == (verbose, verbose)


def test_wide_names_the_kv_method_and_the_backend_in_columns():
    text = table_of(with_attention([attention(0), attention(1)]), wide=True, width=200)
    row = lines_starting(text, "model.layers.{0..1}.self_attn.attn")[0].split()
    assert row[-3:] == [CT, "FLASHINFER", "ok"]
    assert not any("attention" in line and "→" in line for line in text.splitlines())  # no numbered route


def test_errors_and_warnings_are_listed_under_their_rows_and_counted_in_the_verdict():
    refused = attention(2, backend=None, rejected=(), errors=(E5M2,))
    report = with_attention([attention(0), attention(1), refused, attention(3, warnings=(MISSING_V,))])
    text = table_of(report)
    flat = " ".join(text.split())
    assert f"model.layers.2.self_attn.attn error: {E5M2}" in flat
    assert f"model.layers.3.self_attn.attn warning: {MISSING_V}" in flat
    assert lines_starting(text, "model.layers.3.self_attn.attn")[0].split()[-1] == "warn"
    assert "refused (errors below)" in flat
    assert flat.endswith("FAIL: 1 of 4 attention layers fail on a100 (cuda:80), TP=1, vLLM 0.34")
    assert not report.ok


def test_the_verdict_counts_attention_layers_and_their_backends_and_cache():
    text = " ".join(table_of(with_attention([attention(0), attention(1, backend="FLASH_ATTN")])).split())
    assert text.endswith("; 2 attention layers via FLASHINFER, FLASH_ATTN, KV cache fp8_e4m3 (float8_e4m3fn)")


def test_a_report_without_attention_layers_renders_as_before():
    plain = fp8check.inspect(EXAMPLE, platform="a100")._replace(attention=())
    text = table_of(plain)
    assert "attention" not in text and "KV cache" not in text
    assert "attention" not in render.markdown(plain)
    assert "self_attn.attn" not in junit.inspect_junit(plain)


def test_the_memory_line_names_the_kv_dtype_its_tokens_are_counted_in():
    memory = MemoryFit(device_memory=80 * 2**30, utilization=0.9, weight_bytes=2**30, budget=72 * 2**30,
                       kv_bytes_per_token=2048, kv_tokens=35_651_584)
    report = with_attention([attention(0), attention(1)])._replace(memory=memory)
    flat = " ".join(table_of(report).split())
    assert "KV cache 71.0 GiB = 35,651,584 tokens at most, cached as float8_e4m3fn" in flat
    assert "tokens at most, cached as float8_e4m3fn" in render.markdown(report)


def test_markdown_has_a_table_of_attention_rows():
    report = with_attention([attention(0), attention(1), attention(2, warnings=(MISSING_V,))])
    text = render.markdown(report)
    cells = f"| full | 32/8×128 | fp8_e4m3 → float8_e4m3fn | {CT} | tensor | FLASHINFER"
    assert f"| `model.layers.{{0..1}}.self_attn.attn` {cells} | ok |" in text
    assert f"| `model.layers.2.self_attn.attn` {cells} | warn: {MISSING_V} |" in text


def test_junit_has_one_testcase_per_kind_of_attention_layer():
    from xml.etree import ElementTree as ET

    report = with_attention([attention(0), attention(1), attention(2, backend=None, rejected=(), errors=(E5M2,))])
    cases = {case.get("name"): case for case in ET.fromstring(junit.inspect_junit(report)).iter("testcase")}
    assert {name for name in cases if "self_attn.attn" in name} == {"model.layers.{0..1}.self_attn.attn",
                                                                     "model.layers.2.self_attn.attn"}
    assert cases["model.layers.{0..1}.self_attn.attn"].find("failure") is None
    assert cases["model.layers.2.self_attn.attn"].find("failure").get("message") == E5M2
    assert cases["model.layers.{0..1}.self_attn.attn"].find("system-out").text == (
        f"2 layer(s): KV cache fp8_e4m3 (float8_e4m3fn), {CT} -> FLASHINFER")


# ----------------------------------------------------------------------------------------------------- JSON

@functools.cache
def validator():
    jsonschema = pytest.importorskip("jsonschema")
    return jsonschema.Draft202012Validator(json.loads(schema_text()))


def schema_errors(doc: dict) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator().iter_errors(doc)]


def test_inspect_json_has_every_attention_layer_uncollapsed_and_valid():
    report = with_attention([attention(0), attention(1, warnings=(MISSING_V,))])
    doc = documents.inspect_document(report)
    assert schema_errors(doc) == []
    assert [entry["name"] for entry in doc["attention"]] == ["model.layers.0.self_attn.attn",
                                                             "model.layers.1.self_attn.attn"]
    assert doc["attention"][0] == {
        "name": "model.layers.0.self_attn.attn", "kind": "full", "head_size": 128, "num_heads": 32,
        "num_kv_heads": 8, "kv_cache_dtype": "fp8_e4m3", "cache_dtype": "float8_e4m3fn", "kv_method": CT,
        "scale_strategy": "tensor", "scales": ["model.layers.0.self_attn.k_scale", "model.layers.0.self_attn.v_scale"],
        "backend": "FLASHINFER",
        "rejected": [{"backend": "FLASH_ATTN", "reason": "kv_cache_dtype not supported", "verified": True}],
        "errors": [], "warnings": [], "notes": []}


def _drifted(doc: dict):
    yield "unknown attention field", lambda d: d["attention"][0].update(surprise=1)
    yield "missing attention field", lambda d: d["attention"][0].pop("backend")
    yield "unknown scale strategy", lambda d: d["attention"][0].update(scale_strategy="channel")
    yield "unknown rejection field", lambda d: d["attention"][0]["rejected"][0].update(kernel="K")
    yield "no attention list", lambda d: d.pop("attention")
    if doc["command"] == "load":
        yield "unknown KV run field", lambda d: d["attention_runs"][0].update(surprise=1)
        yield "KV status", lambda d: d["attention_runs"][0].update(status="fine")
        yield "KV runs in an inspect report", lambda d: d.update(command="inspect")
    else:
        yield "KV runs in an inspect report", lambda d: d.update(attention_runs=[])


def kv_run(index: int, **changes) -> records.AttentionRun:
    fields = dict(name=f"model.layers.{index}.self_attn.attn", kv_cache_dtype="fp8_e4m3",
                  cache_dtype="float8_e4m3fn", status=vocabulary.Status.OK, k_scale=(0.01 * (index + 1),), v_scale=(0.02,),
                  k_error=0.021 + index / 1000, v_error=0.022, bound=0.0625, bytes_read=8)
    return records.AttentionRun(**{**fields, **changes})


ZERO_V = "model.layers.3.self_attn.v_scale is 0: a KV cache scale must be finite and > 0"


def loaded(attention_runs, layers=None) -> records.LoadReport:
    """A load report of the example with these KV cache runs (every linear module ran and agrees)."""
    inspected = with_attention(layers if layers is not None else [attention(run_index) for run_index in range(4)])
    runs = tuple(records.LayerRun(layer.name, layer.kernel, "scaled_mm", "on cpu", False, 16, vocabulary.Status.OK, 1000,
                                  1e-3, 1e-2, ms=1.0) for layer in inspected.layers)
    return records.LoadReport(inspected, "cpu", "cpu", 16, 0, None, runs, 9000, 0.5,
                              attention_runs=tuple(attention_runs))


@pytest.mark.parametrize("command", ["inspect", "load"])
def test_the_schema_catches_attention_drift(command):
    report = loaded([kv_run(0), kv_run(1)])
    doc = documents.load_document(report) if command == "load" else documents.inspect_document(report.inspect)
    assert schema_errors(doc) == []
    for what, mutate in _drifted(doc):
        changed = json.loads(json.dumps(doc))
        mutate(changed)
        assert schema_errors(changed), what


def test_load_json_has_every_kv_cache_run():
    doc = documents.load_document(loaded([kv_run(0), kv_run(3, status=vocabulary.Status.FAIL, v_scale=(0.0,), v_error=None,
                                                         errors=(ZERO_V,))]))
    assert schema_errors(doc) == [] and doc["ok"] is False
    assert doc["attention_runs"][1] == {
        "name": "model.layers.3.self_attn.attn", "kv_cache_dtype": "fp8_e4m3", "cache_dtype": "float8_e4m3fn",
        "status": "FAIL", "k_scale": [0.04], "v_scale": [0.0], "k_error": 0.024, "v_error": None, "bound": 0.0625,
        "bytes_read": 8, "errors": [ZERO_V], "warnings": [], "notes": []}


# ----------------------------------------------------------------------------------------------------- load

def test_load_shows_one_row_per_kind_of_kv_round_trip_with_the_worst_errors_and_the_scales():
    report = loaded([kv_run(0), kv_run(1), kv_run(2),
                     kv_run(3, status=vocabulary.Status.FAIL, v_scale=(0.0,), v_error=None, errors=(ZERO_V,))])
    text = table_of(report)
    ok_row = lines_starting(text, "model.layers.{0..2}.self_attn.attn")[0].split()
    assert ok_row[1:] == ["fp8_e4m3", "→", "k", "0.01..0.03", "2.30e-02", "2.20e-02", "6.2e-02", "ok"]
    failed = lines_starting(text, "model.layers.3.self_attn.attn")
    assert failed[0].split()[-4:] == ["2.40e-02", "-", "6.2e-02", "FAIL"]
    flat = " ".join(text.split())
    assert f"model.layers.3.self_attn.attn error: {ZERO_V}" in flat
    assert flat.endswith("FAIL: 1 of 4 attention KV caches failed (a100 (cuda:80), TP=1, vLLM 0.34, arithmetic on "
                         "cpu)")
    assert max(len(line) for line in text.splitlines()) <= 100


def test_a_load_that_passes_says_its_kv_caches_round_trip():
    report = loaded([kv_run(0), kv_run(1)], layers=[attention(0), attention(1)])
    assert report.ok
    assert " ".join(table_of(report).split()).endswith(
        "ran and agree with their fp32 reference; 2 attention KV caches round-trip within their bound (a100 "
        "(cuda:80), TP=1, vLLM 0.34, arithmetic on cpu)")


def test_load_names_an_attention_layer_vllm_refuses_when_none_of_it_ran():
    refused = attention(1, backend=None, rejected=(), errors=(E5M2,))
    report = loaded([kv_run(0)], layers=[attention(0), refused])
    flat = " ".join(table_of(report).split())
    assert f"error: attention model.layers.1.self_attn.attn: {E5M2}" in flat
    assert flat.endswith("FAIL: 1 attention layer(s) vLLM would refuse (a100 (cuda:80), TP=1, vLLM 0.34, "
                         "arithmetic on cpu)")


def test_load_markdown_and_junit_carry_the_kv_round_trips():
    from xml.etree import ElementTree as ET

    report = loaded([kv_run(0), kv_run(1),
                     kv_run(3, status=vocabulary.Status.FAIL, v_scale=(0.0,), v_error=None, errors=(ZERO_V,))])
    text = render.markdown(report)
    assert "| `model.layers.{0..1}.self_attn.attn` | fp8_e4m3 → float8_e4m3fn | 0.01..0.02 | 0.02 | 2.20e-02 | " \
           "2.20e-02 | 6.2e-02 | ok |" in text
    assert f"| FAIL: {ZERO_V} |" in text
    cases = {case.get("name"): case for case in ET.fromstring(junit.load_junit(report)).iter("testcase")}
    assert cases["model.layers.3.self_attn.attn"].find("failure").get("message") == ZERO_V
    assert cases["model.layers.{0..1}.self_attn.attn"].find("system-out").text == (
        "2 layer(s): KV cache fp8_e4m3 (float8_e4m3fn) -> ok k_error=0.022 v_error=0.022 bound=0.0625")


def test_load_markdown_names_a_refused_attention_layer_that_did_not_run():
    refused = attention(1, backend=None, rejected=(), errors=(E5M2,))
    text = render.markdown(loaded([kv_run(0)], layers=[attention(0), refused]))
    assert f"- error: attention `model.layers.1.self_attn.attn`: {E5M2}" in text
    assert "**FAIL: 1 attention layer(s) vLLM would refuse" in text


def test_a_kv_cache_in_the_model_dtype_claims_no_round_trip():
    unquantized = kv_run(0, kv_cache_dtype="bfloat16", cache_dtype="bfloat16", k_scale=(), v_scale=(), k_error=None,
                         v_error=None, bound=None)
    report = loaded([unquantized], layers=[attention(0, kv_cache_dtype="bfloat16", cache_dtype="bfloat16")])
    text = table_of(report)
    assert lines_starting(text, "model.layers.0.self_attn.attn")[0].split()[1:] == ["bfloat16", "-", "-", "-", "-",
                                                                                    "ok"]
    assert " ".join(text.split()).endswith("ran and agree with their fp32 reference (a100 (cuda:80), TP=1, vLLM "
                                           "0.34, arithmetic on cpu)")

# ------------------------------------------------------------------------------------ end to end, synthetic

KV_CT = dict(quant="ct-fp8", kv_cache="tensor")


def inspected_json(folder: str, *options: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["inspect", folder, *options, "--format", "json"])
    return result.exit_code, json.loads(result.stdout)


@pytest.mark.parametrize("platform, kv_cache_dtype, cache_dtype, backend", [
    ("a100", "auto", "float8_e4m3fn", "FLASHINFER"),   # the kv_cache_scheme switches auto to fp8; FA refuses it
    ("h100", "auto", "float8_e4m3fn", "FLASH_ATTN"),   # FA3 takes it
    ("mi300x", "fp8", "float8_e4m3fnuz", "ROCM_ATTN"),
    ("h100", "bfloat16", "bfloat16", "FLASH_ATTN"),
])
def test_inspect_reports_each_attention_layer_as_vllm_builds_it(make_checkpoint, platform, kv_cache_dtype,
                                                                cache_dtype, backend):
    code, doc = inspected_json(make_checkpoint(**KV_CT), "-p", platform, "--kv-cache-dtype", kv_cache_dtype)
    assert code == 0 and schema_errors(doc) == []
    assert [(a["name"], a["cache_dtype"], a["kv_method"], a["backend"]) for a in doc["attention"]] == [
        (f"model.layers.{i}.self_attn.attn", cache_dtype, CT, backend) for i in (0, 1)]
    assert doc["attention"][0]["scales"] == ["model.layers.0.self_attn.k_scale", "model.layers.0.self_attn.v_scale"]


def test_a_missing_v_scale_is_named_and_its_layer_gets_a_row_of_its_own(make_checkpoint):
    folder = make_checkpoint(**KV_CT, layers=3, kv_missing=((1, "v"),))
    result = runner.invoke(app, ["inspect", folder, "-p", "h100"], env={"COLUMNS": "100"})
    assert result.exit_code == 0
    rows = [line.split()[0] for line in result.stdout.splitlines() if "self_attn.attn " in line]
    assert rows == ["model.layers.{0,2}.self_attn.attn", "model.layers.1.self_attn.attn"]
    assert "model.layers.1.self_attn.v_scale" in " ".join(result.stdout.split())


@pytest.mark.parametrize("options, message", [
    (("-p", "h100", "--kv-cache-dtype", "fp8_e5m2"), E5M2),
    (("-p", "a100", "--kv-cache-dtype", "fp8", "--attention-backend", "triton_attn"),
     "FP8 KV cache is not supported by the Triton attention backend on a100"),
])
def test_what_vllm_refuses_fails_the_layer_with_its_message(make_checkpoint, options, message):
    code, doc = inspected_json(make_checkpoint(**KV_CT), *options)
    assert code == 1 and doc["ok"] is False and schema_errors(doc) == []
    assert all(any(message in error for error in a["errors"]) for a in doc["attention"])


def test_skipped_layers_keep_the_model_dtype_and_the_memory_line_says_what_is_cached(make_checkpoint):
    folder = make_checkpoint(**KV_CT)
    result = runner.invoke(app, ["inspect", folder, "-p", "h100", "--kv-cache-dtype-skip-layers", "0"],
                           env={"COLUMNS": "100"})
    assert result.exit_code == 0
    flat = " ".join(result.stdout.split())
    assert "model.layers.0.self_attn.attn full 4/2×64 bfloat16 tensor" in flat
    assert "model.layers.1.self_attn.attn full 4/2×64 fp8 → float8_e4m3fn tensor" in flat
    assert "tokens at most, cached as bfloat16, float8_e4m3fn" in flat


@pytest.mark.parametrize("value", ["sliding-window", "-1", "layer0"])
def test_a_skip_layer_vllm_would_match_nothing_with_is_exit_2(value):
    result = runner.invoke(app, ["inspect", EXAMPLE, "-p", "h100", "--kv-cache-dtype-skip-layers", value])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert f"--kv-cache-dtype-skip-layers '{value}': expected decoder-layer indices" in result.stderr


def test_load_reports_the_kv_round_trips_in_its_table_and_json(make_checkpoint):
    pytest.importorskip("torch")
    folder = make_checkpoint(**KV_CT, data="random")
    result = runner.invoke(app, ["load", folder, "-p", "h100", "-d", "cpu", "--format", "json"])
    doc = json.loads(result.stdout)
    assert result.exit_code == 0 and schema_errors(doc) == []
    assert [(run["name"], run["status"]) for run in doc["attention_runs"]] == [
        (f"model.layers.{i}.self_attn.attn", "ok") for i in (0, 1)]
    table = runner.invoke(app, ["load", folder, "-p", "h100", "-d", "cpu"], env={"COLUMNS": "100"})
    assert "2 attention KV caches round-trip within their bound" in " ".join(table.stdout.split())

