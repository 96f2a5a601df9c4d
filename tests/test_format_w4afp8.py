"""vLLM 0.34's `w4afp8` (fp8check.core.formats.w4afp8): W4AFP8Config.from_config as parsed, dense layers routed as
native block fp8 would route them, routed experts named (CompressedTensorsW4A8Fp8MoEMethod) and not judged, the
front door per release and platform, and `inspect` / `load` end to end on synth's w4afp8 checkpoint."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from fp8check import api
from fp8check.cli.app import app
from fp8check.core.errors import ConfigError
from fp8check.core.formats import fp8, frontdoor, w4afp8
from fp8check.core.formats.registry import FORMATS, parse_quant_config
from fp8check.core.report.verdicts import inspect_verdict, not_judged
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import PROFILES, WHEEL_CHANGES, select_profile
from fp8check.kernels.base import RoutingContext
from fp8check.synth import QUANTS, ROUTED_EXPERT, Spec, quantization_config, tensor_specs

MOE = dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=4, moe_intermediate=256, hidden=256)
MIXTRAL = dict(architecture="MixtralForCausalLM", model_type="mixtral", moe_style="mixtral", experts=4,
               moe_intermediate=256, hidden=256)
runner = CliRunner()


def _inspect(folder: str, platform: str = "h100", vllm: str = "0.34", **options):
    return api.inspect(folder, platform=platform, vllm=vllm, **options)


def _dense(report) -> list:
    return [layer for layer in report.layers if layer.scheme == "Fp8LinearMethod"]


def _known_releases() -> list[str]:
    return [p.name for p in PROFILES]


# --- the profile change -------------------------------------------------------------------------------------


def test_the_change_is_a_0_34_wheel_change():
    assert w4afp8.ADDED_BY in WHEEL_CHANGES and w4afp8.FORMAT.added_by == w4afp8.ADDED_BY
    assert select_profile("0.34").has(w4afp8.ADDED_BY) and not select_profile("0.33").has(w4afp8.ADDED_BY)
    assert FORMATS["w4afp8"] is w4afp8.FORMAT


@pytest.mark.parametrize("release", ["0.33", "0.34"])
def test_quantization_methods_list_w4afp8_right_after_fp8_from_0_34(release):
    methods = frontdoor.quantization_methods(RoutingContext(parse_platform("cpu"), select_profile(release)))
    if release == "0.34":
        assert methods[methods.index("fp8") + 1] == "w4afp8"
    else:
        assert "w4afp8" not in methods


# --- parse (W4AFP8Config.from_config) -----------------------------------------------------------------------


def test_from_config_defaults():
    config = parse_quant_config({"quant_method": "w4afp8"})
    assert config == fp8.NativeFp8Config("dynamic", (), (128, 128), method="w4afp8", group_size=128)


def test_from_config_ignores_activation_scheme_and_falls_back_to_modules_to_not_convert():
    config = parse_quant_config({"quant_method": "w4afp8", "activation_scheme": "static",
                                 "modules_to_not_convert": ["lm_head"], "weight_block_size": [64, 64]})
    assert config.activation_scheme == "dynamic"  # from_config passes "dynamic" whatever the config says
    assert config.ignored_layers == ("lm_head",) and config.weight_block_size == (64, 64)


def test_an_explicit_null_block_keeps_per_tensor_dense_weights():
    """config.get("weight_block_size", [128, 128]) returns an explicit null: Fp8LinearMethod without blocks."""
    config = parse_quant_config({"quant_method": "w4afp8", "weight_block_size": None})
    assert config.weight_block_size is None


@pytest.mark.parametrize(("raw", "message"), [
    ({"weight_block_size": [128]},
     "The quantization block size of weight must have 2 dimensions, but got 1 dimensions"),
    ({"group_size": "128"}, "group_size must be a positive integer"),
    ({"group_size": 0}, "group_size must be a positive integer"),
])
def test_bad_configs_are_one_line_errors(raw, message):
    with pytest.raises(ConfigError) as caught:
        parse_quant_config({"quant_method": "w4afp8", **raw})
    assert message in str(caught.value) and "\n" not in str(caught.value)


# --- synth ----------------------------------------------------------------------------------------------------


def test_synth_writes_what_w4afp8_reads():
    spec = Spec(quant="w4afp8", **MOE)
    config = quantization_config(spec)
    assert config["quant_method"] == "w4afp8" and "activation_scheme" not in config  # from_config never reads it
    tensors = tensor_specs(spec)
    experts = {name: t for name, t in tensors.items() if ROUTED_EXPERT.search(name.rsplit(".", 1)[0])}
    weights = {n: t for n, t in experts.items() if n.endswith(".weight")}
    assert weights and all(dtype == "I8" for dtype, _ in weights.values())
    for name, (_, (n, half_k)) in weights.items():
        assert tensors[name + "_scale_inv"] == ("BF16", (n, math.ceil(2 * half_k / 128)))
    dense = [n for n, (d, _) in tensors.items() if d == "F8_E4M3"]
    assert dense and not any(ROUTED_EXPERT.search(n.rsplit(".", 1)[0]) for n in dense)


def test_synth_int4_packing_round_trips():
    torch = pytest.importorskip("torch")
    from fp8check.synth import quantize_int4

    weight = torch.randn(8, 300, generator=torch.Generator().manual_seed(1)) * 0.02
    packed, scale = quantize_int4(weight)
    assert packed.dtype == torch.int8 and tuple(packed.shape) == (8, 150) and tuple(scale.shape) == (8, 3)
    raw = packed.view(torch.uint8).to(torch.int16)
    low, high = raw & 0xF, raw >> 4
    nibbles = torch.stack([low, high], dim=2).reshape(8, 300)
    q = torch.where(nibbles >= 8, nibbles - 16, nibbles)  # signed INT4
    assert int(q.min()) >= -8 and int(q.max()) <= 7
    restored = q * scale.repeat_interleave(128, 1)[:, :300]
    assert float((restored - weight).abs().max()) <= float(scale.max()) / 2 + 1e-7


# --- inspect ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    from fp8check.synth import write_checkpoint

    root = tmp_path_factory.mktemp("w4afp8")
    return {name: write_checkpoint(str(root / name), Spec(quant=quant, data="sparse", **shape))
            for name, quant, shape in (("w4afp8", "w4afp8", MOE), ("fp8-block", "fp8-block", MOE),
                                       ("mixtral", "w4afp8", MIXTRAL), ("dense", "w4afp8", {}))}


@pytest.mark.parametrize("platform", ["h100", "cuda:80", "cuda:89", "b200", "cpu"])
@pytest.mark.parametrize("linear_backend", ["auto", "triton", "marlin"])
def test_dense_layers_route_as_native_block_fp8(checkpoints, platform, linear_backend):
    """Every dense layer gets what an fp8 block checkpoint of the same model gets: Fp8LinearMethod, the same keys,
    kernel and errors (the same code, under w4afp8's name)."""
    ours = _inspect(checkpoints["w4afp8"], platform, linear_backend=linear_backend)
    native = _inspect(checkpoints["fp8-block"], platform, linear_backend=linear_backend)
    assert ours.quant_method == "w4afp8" and native.quant_method == "fp8"
    assert _dense(ours)
    assert [(layer.name, layer.scheme, layer.kernel, layer.weight_key, layer.activation_key, layer.strategy_text,
             layer.activation, layer.errors, layer.warnings) for layer in ours.layers] == \
           [(layer.name, layer.scheme, layer.kernel, layer.weight_key, layer.activation_key, layer.strategy_text,
             layer.activation, layer.errors, layer.warnings) for layer in native.layers]


def test_routed_experts_are_named_not_judged(checkpoints):
    report = _inspect(checkpoints["w4afp8"])
    assert report.ok, report.errors
    assert report.moes and all(moe.scheme == w4afp8.W4A8_MOE and moe.kernel is None and moe.weight_key is None
                               and not moe.errors for moe in report.moes)
    assert all(any("not judged" in note for note in moe.notes) for moe in report.moes)
    assert {row.name for row in not_judged(report)} == {moe.name for moe in report.moes}
    assert f"{len(report.moes)} not judged ({w4afp8.W4A8_MOE}" in inspect_verdict(report)


def test_mixtral_expert_names_are_routed_experts_too(checkpoints):
    """_EXPERT matches w1 / w2 / w3 as well as gate_proj / up_proj / down_proj."""
    report = _inspect(checkpoints["mixtral"])
    assert report.moes and {moe.scheme for moe in report.moes} == {w4afp8.W4A8_MOE}
    assert report.ok, report.errors


def test_ignored_experts_are_unquantized(make_checkpoint):
    experts = "model.layers.0.mlp.experts"
    folder = make_checkpoint(quant="w4afp8", data="sparse", **MOE)
    with open(f"{folder}/config.json", encoding="utf-8") as fh:
        config = json.load(fh)
    config["quantization_config"]["ignored_layers"].append(experts)
    with open(f"{folder}/config.json", "w", encoding="utf-8") as fh:
        json.dump(config, fh)
    schemes = {moe.name: moe.scheme for moe in _inspect(folder).moes}
    assert schemes[experts] == "UnquantizedFusedMoEMethod"
    assert schemes["model.layers.1.mlp.experts"] == w4afp8.W4A8_MOE


def test_a_group_size_other_than_128_fails_the_experts_not_the_dense_layers(make_checkpoint):
    group64 = {"quantization_config": {**quantization_config(Spec(quant="w4afp8", **MOE)), "group_size": 64}}
    report = _inspect(make_checkpoint(quant="w4afp8", data="sparse", extra_config=group64, **MOE))
    assert {moe.errors for moe in report.moes} == {(
        "AssertionError in CompressedTensorsW4A8Fp8MoEMethod.__init__: Only group size 128 supported for W4A8 MoE",)}
    assert _dense(report) and all(layer.ok for layer in report.layers)
    dense = {"quantization_config": {**quantization_config(Spec(quant="w4afp8")), "group_size": 64}}
    assert _inspect(make_checkpoint(quant="w4afp8", data="sparse", extra_config=dense)).ok  # no experts to assert


@pytest.mark.parametrize("release", [r for r in _known_releases() if not select_profile(r).has(w4afp8.ADDED_BY)])
def test_before_0_34_it_is_vllms_unknown_method(checkpoints, release):
    report = _inspect(checkpoints["w4afp8"], vllm=release)
    methods = frontdoor.quantization_methods(RoutingContext(parse_platform("h100"), select_profile(release)))
    assert report.errors[:1] == (f"Unknown quantization method: w4afp8. Must be one of {list(methods)}.",)
    assert report.quant_method is None and not _dense(report)  # no layer is built with a config class it lacks
    assert {moe.scheme for moe in report.moes} == {"UnquantizedFusedMoEMethod"}


@pytest.mark.parametrize("platform", ["xpu", "rocm:gfx942", "mi300x"])
def test_xpu_and_rocm_refuse_it_by_their_allow_lists(checkpoints, platform):
    report = _inspect(checkpoints["w4afp8"], platform)
    kind = parse_platform(platform).kind
    assert report.errors == (f"w4afp8 quantization is currently not supported in {kind}.",)


def test_capability_gate_is_fp8configs(checkpoints):
    report = _inspect(checkpoints["dense"], "cuda:70")
    assert ("The quantization method w4afp8 is not supported for the current GPU. Minimum capability: 75. "
            "Current capability: 70.") in report.errors


def test_quantization_flag_must_match(checkpoints):
    report = _inspect(checkpoints["dense"], quantization="fp8")
    assert report.errors == ("Quantization method specified in the model config (w4afp8) does not match the "
                             "quantization method specified in the `quantization` argument (fp8).",)
    assert _inspect(checkpoints["dense"], quantization="w4afp8").ok


def test_a_missing_dense_block_scale_is_named(make_checkpoint, tmp_path):
    """The integrity checks are Fp8LinearMethod's (weight_scale_inv blocks)."""
    from fp8check.synth import write_safetensors

    spec = Spec(quant="w4afp8", data="sparse")
    folder = make_checkpoint(spec)
    entries = tensor_specs(spec)
    del entries["model.layers.0.self_attn.q_proj.weight_scale_inv"]
    write_safetensors(f"{folder}/model.safetensors", entries, None)
    report = _inspect(folder)
    qkv = next(layer for layer in report.layers if layer.name == "model.layers.0.self_attn.qkv_proj")
    assert any(e.startswith("model.layers.0.self_attn.q_proj.weight_scale_inv is missing") for e in qkv.errors)


# --- the command line, end to end ---------------------------------------------------------------------------


def test_cli_inspect(checkpoints):
    result = runner.invoke(app, ["inspect", checkpoints["w4afp8"], "-p", "h100", "--vllm", "0.34", "-f", "json"])
    assert result.exit_code == 0, result.stdout
    doc = json.loads(result.stdout)
    assert doc["quant_method"] == "w4afp8"
    assert {moe["scheme"] for moe in doc["moe"]} == {w4afp8.W4A8_MOE}
    old = runner.invoke(app, ["inspect", checkpoints["w4afp8"], "-p", "h100", "--vllm", "0.33"])
    assert old.exit_code == 1 and "Unknown quantization method: w4afp8." in old.stdout


def test_cli_load_runs_the_dense_layers_and_names_the_experts(tmp_path):
    pytest.importorskip("torch")
    from fp8check.synth import write_checkpoint

    folder = write_checkpoint(str(tmp_path / "w4afp8"), Spec(quant="w4afp8", layers=1, **MOE))
    result = runner.invoke(app, ["load", folder, "-p", "h100", "--vllm", "0.34", "-d", "cpu", "--tokens", "4",
                                 "-f", "json"])
    doc = json.loads(result.stdout)
    dense = [layer for layer in doc["layers"] if layer["scheme"] == "Fp8LinearMethod"]
    assert dense and all(layer["load"]["status"] == "ok" and layer["load"]["numerics"] == "block" and
                         0 < layer["load"]["rel_error"] <= layer["load"]["bound"] for layer in dense)
    assert doc["moe"] and all(moe["scheme"] == w4afp8.W4A8_MOE and w4afp8.W4A8_MOE in " ".join(moe["load"]["errors"])
                              for moe in doc["moe"])
    assert QUANTS["w4afp8"].experts == "int4"


@pytest.mark.parametrize("kv_cache_dtype", ["auto", "fp8", "fp8_e5m2"])
def test_attention_gets_fp8configs_kv_cache_method(checkpoints, kv_cache_dtype):
    """W4AFP8Config inherits Fp8Config.get_quant_method for Attention: Fp8KVCacheMethod, its scale loading, and
    its refusal of fp8_e5m2 ('fp8_e5m2 kv-cache is not supported with fp8 checkpoints.')."""
    ours = _inspect(checkpoints["w4afp8"], kv_cache_dtype=kv_cache_dtype).attention
    native = _inspect(checkpoints["fp8-block"], kv_cache_dtype=kv_cache_dtype).attention
    assert ours and {a.kv_method for a in ours} == {"Fp8KVCacheMethod"}
    assert [(a.kv_method, a.kv_cache_dtype, a.backend, a.errors) for a in ours] == \
           [(a.kv_method, a.kv_cache_dtype, a.backend, a.errors) for a in native]
    assert any("fp8_e5m2 kv-cache is not supported" in e for a in ours for e in a.errors) is \
           (kv_cache_dtype == "fp8_e5m2")


# --- select_w4a8_moe_backend and create_weights (fused_moe/oracle/w4a8.py, compressed_tensors_moe_w4a8_fp8.py) ----

NO_W4A8_BACKEND = ("No W4A8 MoE backend supports the deployment configuration: CutlassExpertsW4A8Fp8: kernel does not "
                   "support current device {d}; BatchedHummingGroupedExperts: kernel does not support current device "
                   "{d}; HummingGroupedExperts: kernel does not support current device {d}; HummingIndexedExperts: "
                   "kernel does not support current device {d}")


@pytest.mark.parametrize("platform, assume, error, chosen", [
    ("h100", (), None, "CutlassExpertsW4A8Fp8 (sm90)"),           # is_device_capability(90): CUTLASS W4A8
    ("b200", (), None, "HummingGroupedExperts or HummingIndexedExperts"),
    ("cuda:80", (), None, "HummingGroupedExperts or HummingIndexedExperts"),
    ("cuda:80", ("humming=no",), NO_W4A8_BACKEND.format(d="cuda"), None),
    ("cpu", (), NO_W4A8_BACKEND.format(d="cpu"), None),           # no W4A8 experts class runs on a CPU
])
def test_the_w4a8_experts_oracle(checkpoints, platform, assume, error, chosen):
    report = _inspect(checkpoints["w4afp8"], platform, assume=list(assume))
    assert report.moes
    for moe in report.moes:
        assert moe.errors == ((error,) if error else ())
        picked = [note for note in moe.notes if note.startswith("vLLM's W4A8 experts: ")]
        assert (picked[0].startswith(f"vLLM's W4A8 experts: {chosen}") and len(picked) == 1) if chosen else not picked
    assert report.ok is (error is None)


@pytest.mark.parametrize("tp, error", [
    (1, None),                                                            # intermediate 256 per rank
    (2, "intermediate_size_per_partition=128 must be divisible by 256"),  # create_weights' CUTLASS reorder assert
])
def test_create_weights_needs_256_aligned_shards(checkpoints, tp, error):
    report = _inspect(checkpoints["w4afp8"], "h100", tp=tp)
    errors = [e for moe in report.moes for e in moe.errors]
    assert (error is None and not errors) or (errors and all(error in e and e.startswith("AssertionError in")
                                                             for e in errors))


def test_the_hidden_size_is_read_through_the_int4_packing(make_checkpoint):
    """Expert weights store two INT4 per int8 byte: the FusedMoE's hidden size is twice the stored width, and
    create_weights asserts it is a multiple of 256 (hidden 384 is not)."""
    ok = _inspect(make_checkpoint(quant="w4afp8", data="sparse", **MOE), "h100")
    assert not [e for moe in ok.moes for e in moe.errors]
    bad = _inspect(make_checkpoint(quant="w4afp8", data="sparse", **dict(MOE, hidden=384)), "h100")
    assert all(any("hidden_size=384 must be divisible by 256" in e for e in moe.errors) for moe in bad.moes)
