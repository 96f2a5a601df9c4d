"""The differential harness's own logic (always), and the wheel run itself (opt-in: it needs the unzipped
wheels and takes minutes): FP8CHECK_DIFFERENTIAL=0.27.1,0.28.0,0.33.0 python -m pytest tests/differential."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import pytest

from fp8check.core.formats import frontdoor
from fp8check.core.records import LayerReport
from fp8check.core.routing.crosscheck import _hf_config, _kernel_of, compare, layer_case, vllm_error
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import PROFILES, select_profile
from fp8check.kernels.base import RoutingContext

sys.path.insert(0, os.path.dirname(__file__))
from run import FORMAT_QUANTS, PROFILE_WHEELS, QUANTS, format_of, grid, tps_of  # noqa: E402

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
    config = {"hidden_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 128}
    door = {"folder": "/ckpt", "quantization": None, "allow_deprecated": False}
    qkv = layer_case(_layer("a.qkv_proj", "QKVParallelLinear", (1024, 512), ("q", "k", "v")), config, 2, door)
    assert (qkv["layer"], qkv["hidden"], qkv["head_dim"], qkv["heads"], qkv["kv_heads"], qkv["tp"]) == (
        "QKVParallelLinear", 512, 128, 4, 2, 2)
    merged = layer_case(_layer("a.gate_up_proj", "MergedColumnParallelLinear", (2048, 512), ("g", "u")), config, 1,
                        door)
    assert merged["output_sizes"] == [1024, 1024] and merged["checkpoint"] is door
    row = layer_case(_layer("a.down_proj", "RowParallelLinear", (512, 1024), ("d",)), config, 1, door)
    assert (row["input"], row["output"]) == (1024, 512)


class TritonFp8BlockScaledMMKernel:  # named as vLLM's kernel classes are
    pass


class _Fp8LinearMethod:  # a vLLM method held by another (INC's wrapper, ModelOpt's generic method)
    __module__ = "vllm.model_executor.layers.quantization.fp8"

    def __init__(self):
        self.fp8_linear = TritonFp8BlockScaledMMKernel()


@pytest.mark.parametrize("holder,kernel", [
    (types.SimpleNamespace(kernel=TritonFp8BlockScaledMMKernel()), "TritonFp8BlockScaledMMKernel"),
    (types.SimpleNamespace(scheme=types.SimpleNamespace(fp8_linear=TritonFp8BlockScaledMMKernel())),
     "TritonFp8BlockScaledMMKernel"),
    (types.SimpleNamespace(inner=_Fp8LinearMethod()), "TritonFp8BlockScaledMMKernel"),
    (types.SimpleNamespace(inner=types.SimpleNamespace(k=TritonFp8BlockScaledMMKernel())), None),  # not vLLM's
    (types.SimpleNamespace(size=3), None),
])
def test_kernel_of_looks_one_vllm_object_deep(holder, kernel):
    assert _kernel_of(holder) == kernel


def test_hf_config_reads_hf_quant_config_only_without_a_quantization_config(tmp_path):
    side = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8"}}
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(side))
    (tmp_path / "config.json").write_text(json.dumps({"num_attention_heads": 4}))
    assert _hf_config(str(tmp_path)).quantization_config == side
    (tmp_path / "config.json").write_text(json.dumps({"quantization_config": {"quant_method": "fp8"}}))
    assert _hf_config(str(tmp_path)).quantization_config == {"quant_method": "fp8"}


@pytest.mark.parametrize("quant,family", [("ct-fp8-block", "compressed-tensors"), ("fp8-static", "fp8"),
                                          ("modelopt-pbwo", "modelopt"), ("modelopt-mxfp8", "mxfp8"),
                                          ("ct-mxfp8", "mxfp8"), ("inc-fp8-block", "inc"),
                                          ("bf16+fp8_per_block", "online")])
def test_format_column(quant, family):
    assert format_of(quant) == family


def test_new_formats_run_on_their_own_grid_and_the_old_grid_is_unchanged():
    everywhere = ["xpu", "cuda:75", "cuda:90", "rocm:gfx90a"]
    assert grid("0.28.0", everywhere, "aligned", QUANTS[0]) == everywhere
    assert grid("0.28.0", everywhere, "aligned", FORMAT_QUANTS[0]) == ["xpu", "cuda:90"]
    assert grid("0.27.1", everywhere, "aligned", "bf16+fp8") == ["xpu"]
    assert tps_of(QUANTS[0]) == (1, 2, 4) and tps_of("bf16+fp8") == (1, 2)


@pytest.mark.skipif(not os.environ.get("FP8CHECK_DIFFERENTIAL"), reason="needs the unzipped vLLM wheels")
def test_agreement_with_vllm_wheels():
    script = os.path.join(os.path.dirname(__file__), "run.py")
    proc = subprocess.run([sys.executable, script, "--releases", os.environ["FP8CHECK_DIFFERENTIAL"]],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]


def test_printed_sets_of_strings_compare_in_any_order():
    """vLLM prints INC's supported data types as a Python set, whose order depends on PYTHONHASHSEED."""
    theirs = {"scheme": None, "kernel": None,
              "error": "ValueError: Unsupported data_type: fp, currently only support {'mx_fp', 'int'}."}
    assert compare("x", None, "Unsupported data_type: fp, currently only support {'int', 'mx_fp'}.", theirs) == ()
    assert compare("x", None, "Unsupported data_type: fp, currently only support {'int'}.", theirs) == ("error text",)




@pytest.mark.parametrize("profile", [p.name for p in PROFILES])
def test_the_front_door_tables_are_each_releases_own(profile):
    """QuantizationMethods (in order: the unknown-method error prints it), DEPRECATED_QUANTIZATION_METHODS and the
    XPU / ROCm supported_quantization lists, read from the release's wheel."""
    import re

    root = os.path.join(os.environ.get("FP8CHECK_VLLM_SRC", "/tmp/vllm-src"), PROFILE_WHEELS[profile], "vllm")
    if not os.path.isdir(root):
        pytest.skip(f"vLLM {PROFILE_WHEELS[profile]}'s Python is not unzipped under {root}")
    release = select_profile(profile)
    with open(os.path.join(root, "model_executor/layers/quantization/__init__.py"), encoding="utf-8") as fh:
        source = fh.read()
    methods = re.search(r"QuantizationMethods = Literal\[(.*?)\]", source, re.S).group(1)
    deprecated = re.search(r"DEPRECATED_QUANTIZATION_METHODS = \[(.*?)\]", source, re.S).group(1)
    ctx = RoutingContext(parse_platform("cpu"), release)
    assert frontdoor.quantization_methods(ctx) == tuple(re.findall(r'"([^"]+)"', methods))
    assert frontdoor.deprecated(ctx) == tuple(re.findall(r'"([^"]+)"', deprecated))
    for platform, source in (("xpu", "xpu.py"), ("rocm:gfx942", "rocm.py")):
        with open(os.path.join(root, "platforms", source), encoding="utf-8") as fh:
            listed = re.search(r"supported_quantization: list\[str\] = \[(.*?)\]", fh.read(), re.S)
        ours = frontdoor.allow_list(RoutingContext(parse_platform(platform), release))
        assert (ours is None) if listed is None else set(ours) == set(re.findall(r'"([^"]+)"', listed.group(1)))
