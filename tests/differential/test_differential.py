"""The differential harness's own logic (always), and the wheel run itself (opt-in: it needs the unzipped
wheels and takes minutes): FP8CHECK_DIFFERENTIAL=0.27.1,0.28.0,0.33.0 python -m pytest tests/differential."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from fp8check.core.records import LayerReport
from fp8check.core.routing.crosscheck import compare, layer_case, vllm_error

OK = {"scheme": "CompressedTensorsW8A8Fp8", "kernel": "TritonFp8BlockScaledMMKernel", "error": None}


@pytest.mark.parametrize("ours,theirs,differs", [
    (("CompressedTensorsW8A8Fp8", "TritonFp8BlockScaledMMKernel", None), OK, ()),
    (("CompressedTensorsW8A8Fp8", "MarlinFP8ScaledMMLinearKernel", None), OK, ("kernel",)),
    (("CompressedTensorsW8A16Fp8", "TritonFp8BlockScaledMMKernel", None), OK, ("scheme",)),
    (("CompressedTensorsW8A8Fp8", None, "Failed to find a kernel"), OK, ("error", "kernel")),
    (("CompressedTensorsW8A8Fp8", None, "msg"), dict(OK, error="ValueError: msg"), ()),
    (("CompressedTensorsW8A8Fp8", None, "other"), dict(OK, error="ValueError: msg"), ("error text",)),
    # vLLM's bare `assert` carries no text; fp8check names it in its own words, so only presence counts.
    (("CompressedTensorsW8A8Fp8", None, "AssertionError in X"), dict(OK, error="AssertionError: "), ()),
])
def test_compare(ours, theirs, differs):
    assert compare(*ours, theirs) == differs


def test_vllm_error_keeps_the_message_only():
    assert vllm_error("ValueError: Failed: a: b") == "Failed: a: b"
    assert vllm_error(None) is None


def _layer(name, layer_type, shape, shards):
    return LayerReport(name, layer_type, shards, "F8_E4M3", shape, None, None, "s", None, (), (), (), ())


def test_layer_case_rebuilds_vllms_constructor_arguments():
    config = {"hidden_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 128,
              "quantization_config": {"quant_method": "fp8"}}
    qkv = layer_case(_layer("a.qkv_proj", "QKVParallelLinear", (1024, 512), ("q", "k", "v")), config, 2)
    assert (qkv["layer"], qkv["hidden"], qkv["head_dim"], qkv["heads"], qkv["kv_heads"], qkv["tp"]) == (
        "QKVParallelLinear", 512, 128, 4, 2, 2)
    merged = layer_case(_layer("a.gate_up_proj", "MergedColumnParallelLinear", (2048, 512), ("g", "u")), config, 1)
    assert merged["output_sizes"] == [1024, 1024] and merged["method"] == "fp8"
    row = layer_case(_layer("a.down_proj", "RowParallelLinear", (512, 1024), ("d",)), config, 1)
    assert (row["input"], row["output"]) == (1024, 512)


@pytest.mark.skipif(not os.environ.get("FP8CHECK_DIFFERENTIAL"), reason="needs the unzipped vLLM wheels")
def test_agreement_with_vllm_wheels():
    script = os.path.join(os.path.dirname(__file__), "run.py")
    proc = subprocess.run([sys.executable, script, "--releases", os.environ["FP8CHECK_DIFFERENTIAL"]],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
