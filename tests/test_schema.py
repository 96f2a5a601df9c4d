"""The JSON Schema of inspect and load reports: it is valid draft 2020-12, `fp8check schema` prints the shipped
file, real reports of passing and failing checkpoints validate against it, and drift (an unknown or missing field)
does not."""

from __future__ import annotations

import copy
import json

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.report.documents import SCHEMA_VERSION
from fp8check.schema import schema_text
from fp8check.synth import TP2_BLOCK_SHAPE

jsonschema = pytest.importorskip("jsonschema")
runner = CliRunner()
SCHEMA = json.loads(schema_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
MOE = dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=4, layers=1)
TP_SHAPE = {**TP2_BLOCK_SHAPE, "layers": 1}


def report(*args) -> tuple[int, dict]:
    result = runner.invoke(app, [*args, "--format", "json"])
    return result.exit_code, json.loads(result.stdout)


def errors(doc: dict) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in VALIDATOR.iter_errors(doc)]


def test_schema_is_valid_draft_2020_12_and_printed_by_the_cli():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert SCHEMA["properties"]["schema_version"] == {"const": SCHEMA_VERSION}
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0 and json.loads(result.stdout) == SCHEMA


@pytest.mark.parametrize("spec, args, exit_code", [
    (dict(quant="ct-fp8-block"), ("-p", "xpu"), 0),
    (dict(quant="ct-fp8-block", **TP_SHAPE), ("-p", "xpu", "--tp", "2"), 0),
    (dict(quant="ct-fp8-block"), ("-p", "xpu", "--vllm", "0.27"), 1),               # no kernel: vLLM's crash
    (dict(quant="ct-fp8-block", **{**TP_SHAPE, "kv_heads": 1}), ("-p", "h100", "--tp", "4"), 0),  # kv-replicated
    (dict(quant="ct-fp8-block"), ("-p", "h100", "--linear-backend", "triton"), 0),  # slow-fallback warning
    (dict(quant="fp8-static"), ("-p", "v100"), 1),                                  # capability gate
    (dict(quant="ct-fp8-block", **MOE), ("-p", "h100"), 0),
    (dict(quant="ct-fp8-block", **{**MOE, **TP_SHAPE}), ("-p", "h100", "--tp", "2", "--ep"), 0),
    (dict(quant="ct-fp8-block", heads=3, kv_heads=3), ("-p", "xpu", "--tp", "2"), 1),  # heads % TP
    (dict(quant=None), ("-p", "h100", "-q", "ptpc_fp8"), 1),             # vLLM's front door; --quantization hints
    (dict(quant="modelopt-fp8-legacy"), ("-p", "xpu"), 0),               # hf_quant_config.json
    (dict(quant="modelopt-mxfp8"), ("-p", "cpu"), 1),                    # the MXFP8 table's CPU row is empty
    (dict(quant="ct-fp8-block", architecture="FooForCausalLM", model_type="foo"), ("-p", "xpu"), 0),  # not judged
    (dict(quant="w4afp8", moe_intermediate=256, hidden=256, **MOE), ("-p", "h100"), 0),  # experts not modelled
])
def test_inspect_reports_validate(make_checkpoint, spec, args, exit_code):
    code, doc = report("inspect", make_checkpoint(**spec), *args)
    assert code == exit_code, doc["errors"] + [e for layer in doc["layers"] + doc["moe"] for e in layer["errors"]]
    assert doc["command"] == "inspect" and errors(doc) == []


def test_input_error_document_validates(tmp_path):
    code, doc = report("inspect", str(tmp_path / "missing"))
    assert code == 2 and doc["ok"] is False and errors(doc) == []


@pytest.mark.parametrize("spec, args, exit_code", [
    (dict(quant="ct-fp8-block", **TP_SHAPE), ("-p", "xpu"), 0),
    (dict(quant="ct-fp8-block", **TP_SHAPE), ("-p", "xpu", "--tp", "2"), 0),
    (dict(quant="ct-fp8-block", **TP_SHAPE), ("-p", "xpu", "--vllm", "0.27"), 1),   # layers not run
    (dict(quant="ct-fp8", input_scale=1 / 448, **TP_SHAPE), ("-p", "h100"), 0),      # quant-error warnings
    (dict(quant="ct-fp8-block", **MOE), ("-p", "h100"), 0),
])
def test_load_reports_validate(make_checkpoint, spec, args, exit_code):
    pytest.importorskip("torch")
    code, doc = report("load", make_checkpoint(**{**spec, "data": "random"}), "-d", "cpu", *args)
    assert code == exit_code
    assert doc["command"] == "load" and errors(doc) == []
    assert all("load" in layer for layer in doc["layers"])


def _mutations(doc: dict):
    """Drift the schema must catch: a field nobody declared, a declared field gone, a type changed."""
    yield "unknown top-level field", lambda d: d.update(surprise=1)
    yield "unknown layer field", lambda d: d["layers"][1].update(surprise=1)
    yield "missing layer field", lambda d: d["layers"][1].pop("kernel")
    yield "missing top-level field", lambda d: d.pop("tp_sizes_ok")
    yield "wrong type", lambda d: d.update(tp="2")
    yield "judged with a reason", lambda d: d["layers"][1].update(judged=True, not_judged="a guess")
    yield "not judged without one", lambda d: d["layers"][1].update(judged=False, not_judged=None)
    yield "unknown rejection field", lambda d: d["layers"][1]["rejected"].append(
        {"kernel": "K", "reason": "r", "verified": True, "extra": 0})
    if doc["moe"]:
        yield "unknown FusedMoE field", lambda d: d["moe"][0].update(surprise=1)
        yield "FusedMoE field on a linear layer", lambda d: d["layers"][1].update(num_experts=4)
    if doc["command"] == "load":
        yield "unknown load field", lambda d: d["layers"][1]["load"].update(surprise=1)
        yield "load field in an inspect report", lambda d: d.update(command="inspect")


@pytest.mark.parametrize("command", ["inspect", "load"])
def test_drift_is_caught(make_checkpoint, command):
    if command == "load":
        pytest.importorskip("torch")
    folder = make_checkpoint(quant="ct-fp8-block", data="random", **MOE)
    _, doc = report(command, folder, "-p", "h100", *(("-d", "cpu") if command == "load" else ()))
    assert errors(doc) == []
    for what, mutate in _mutations(doc):
        drifted = copy.deepcopy(doc)
        mutate(drifted)
        assert errors(drifted), what
