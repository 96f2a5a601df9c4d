"""ModelOpt FP8 (fp8check.core.formats.modelopt) end to end through inspect on synth checkpoints: the three algos x
platforms x releases (scheme, kernel, vLLM's errors), parsing and its messages, the override, exclusion, the LM head
and FusedMoE experts."""

from __future__ import annotations

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import ConfigError, InputError
from fp8check.core.formats import modelopt
from fp8check.core.formats.frontdoor import normalize
from fp8check.core.formats.registry import OutOfScopeConfig, parse_quant_config
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.kernels.quant_keys import kFp8StaticTensorSym
from fp8check.synth import Spec, write_checkpoint

ALGOS = {"modelopt-fp8": "FP8", "modelopt-pcpt": "FP8_PER_CHANNEL_PER_TOKEN", "modelopt-pbwo": "FP8_PB_WO"}
PLATFORMS = ("xpu", "cpu", "cuda:80", "cuda:89", "cuda:90", "cuda:100", "rocm:gfx942")
RELEASES = ("0.25", "0.28", "0.30", "0.33")
QKV = "model.layers.0.self_attn.qkv_proj"
OLD_SCHEME = {"modelopt-fp8": "ModelOptFp8LinearMethod", "modelopt-pcpt": "ModelOptFp8PcPtLinearMethod",
              "modelopt-pbwo": "ModelOptFp8PbWoLinearMethod"}
XPU_REFUSAL = ("Failed to find a kernel that can implement the ScaledMM linear layer. Reasons: \n"
               "XPUW8A16FP8LinearKernel XPUW8A16FP8Linear only support per-channel and per-tensor quantization.\n"
               "XPUW8A8FP8LinearKernel XPUW8A8FP8Linear only support per-channel and per-tensor quantization.")
MOE = dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=4, moe_intermediate=128)


def _inspect(tmp_path, platform: str = "cuda:90", release: str = "0.33", **spec):
    folder = write_checkpoint(str(tmp_path / "ckpt"), Spec(**spec))
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), select_profile(release)))


def _layer(report, name: str = QKV):
    return next(layer for layer in report.layers if layer.name == name)


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("quant", ALGOS)
def test_algo_platform_release(tmp_path, quant, platform, release):
    report = _inspect(tmp_path, platform, release, quant=quant)
    layer = _layer(report)
    assert report.quant_method == "modelopt"
    assert layer.scheme == ("ModelOptLinearMethod" if release in ("0.30", "0.33") else OLD_SCHEME[quant])
    gate = [e for e in report.errors if "Minimum capability" in e]
    minimum = 89 if release == "0.25" else 80
    cc = int(platform.split(":")[1]) if platform.startswith("cuda") else None
    assert bool(gate) == (cc is not None and cc < minimum)
    if gate:
        assert gate == [f"The quantization method modelopt is not supported for the current GPU. Minimum capability: "
                        f"{minimum}. Current capability: {cc}."]
    detected = f"Detected ModelOpt fp8 checkpoint (quant_algo={ALGOS[quant]}). Please note that the format"
    assert any(w.startswith(detected) for w in report.warnings) == (release in ("0.25", "0.28"))
    keys = {"modelopt-fp8": ("kFp8StaticTensorSym", "kFp8StaticTensorSym"),
            "modelopt-pcpt": ("kFp8StaticTokenSym", "kFp8DynamicTokenSym"),
            "modelopt-pbwo": ("kFp8Static128BlockSym", "kFp8Dynamic128Sym")}[quant]
    if layer.kernel or not layer.errors:
        assert (layer.weight_key, layer.activation_key) == keys


# §2.4's predictions, where the kernel tables agree with them.
@pytest.mark.parametrize("quant, platform, release, kernel", [
    ("modelopt-fp8", "cuda:90", "0.33", "CutlassFP8ScaledMMLinearKernel"),
    ("modelopt-fp8", "cuda:80", "0.33", "MarlinFP8ScaledMMLinearKernel"),
    ("modelopt-fp8", "xpu", "0.33", "XPUW8A16FP8LinearKernel"),
    ("modelopt-fp8", "xpu", "0.25", "XPUW8A16FP8LinearKernel"),
    ("modelopt-pcpt", "cuda:90", "0.33", "CutlassFP8ScaledMMLinearKernel"),
    ("modelopt-pcpt", "cuda:100", "0.33", "CutlassFP8ScaledMMLinearKernel"),
    ("modelopt-pcpt", "cuda:80", "0.33", "MarlinFP8ScaledMMLinearKernel"),
    ("modelopt-pcpt", "rocm:gfx942", "0.33", "RowWiseTorchFP8ScaledMMLinearKernel"),
    ("modelopt-pcpt", "xpu", "0.33", "ChannelWiseTorchFP8ScaledMMLinearKernel"),
    ("modelopt-pbwo", "xpu", "0.33", "XPUFp8BlockScaledMMKernel"),
])
def test_predicted_kernels(tmp_path, quant, platform, release, kernel):
    layer = _layer(_inspect(tmp_path, platform, release, quant=quant))
    assert layer.kernel == kernel and not layer.errors


def test_pcpt_static_token_weight_key_has_no_xpu_kernel_before_028(tmp_path):
    layer = _layer(_inspect(tmp_path, "xpu", "0.25", quant="modelopt-pcpt"))
    assert layer.kernel is None and layer.errors == (XPU_REFUSAL,)


@pytest.mark.parametrize("release, error", [
    ("0.25", "ModelOpt FP8_PB_WO requires in_features divisible by 128, got 192."),
    ("0.28", "ModelOpt FP8_PB_WO requires in_features divisible by 128, got 192."),
    ("0.29", "ModelOpt FP8_PB_WO requires in_features divisible by 128, got 192."),
    ("0.30", "FP8_PB_WO requires in divisible by 128, got 192"),
    ("0.33", "FP8_PB_WO requires in divisible by 128, got 192"),
])
def test_pbwo_input_divisibility(tmp_path, release, error):
    # o_proj's input is heads * head_dim = 4 * 48 = 192; ModelOpt never runs validate_fp8_block_shape.
    report = _inspect(tmp_path, "cuda:90", release, quant="modelopt-pbwo", hidden=256, head_dim=48)
    assert _layer(report, "model.layers.0.self_attn.o_proj").errors == (error,)


@pytest.mark.parametrize("release, error", [
    ("0.25", "ModelOpt FP8_PB_WO requires out_features divisible by 128, got 320."),
    ("0.28", "ModelOpt FP8_PB_WO requires out_features divisible by 128, got 320."),
    ("0.29", None), ("0.33", None),
])
def test_pbwo_output_padding_arrives_in_029(tmp_path, release, error):
    # gate_up_proj of intermediate 160: 2 x 160 = 320 rows, not a multiple of 128; 0.29+ pad the output.
    report = _inspect(tmp_path, "cuda:90", release, quant="modelopt-pbwo", intermediate=160)
    layer = _layer(report, "model.layers.0.mlp.gate_up_proj")
    assert layer.errors == ((error,) if error else ())
    skipped = any("never runs the block kernel's post-load" in w for w in report.warnings)
    assert skipped == (release in ("0.25", "0.28"))


def test_pbwo_stray_weight_scale_inv_and_scale_shapes(tmp_path):
    report = _inspect(tmp_path, quant="modelopt-pbwo")
    assert not _layer(report).errors
    cfg = modelopt.quantized(modelopt.parse({"quant_method": "modelopt", "quant_algo": "fp8_pb_wo"}, "cfg"))
    scale = modelopt.expected_tensors(cfg).weight_scale
    assert (scale.suffix, scale.stray, scale.shape(200, 256)) == ("weight_scale", "weight_scale_inv", (2, 1, 2, 1))
    assert "will not load" in scale.stray_note and "vllm#54126" in scale.stray_note
    pcpt = modelopt.expected_tensors(modelopt.quantized(modelopt.parse(
        {"quant_method": "modelopt", "quant_algo": "FP8_PER_CHANNEL_PER_TOKEN"}, "cfg")))
    assert pcpt.weight_scale.shape(96, 64) == (96,) and not pcpt.static_input
    fp8 = modelopt.expected_tensors(modelopt.quantized(modelopt.parse(
        {"quant_method": "modelopt", "quant_algo": "FP8"}, "cfg")))
    assert fp8.weight_scale.strategy == "tensor" and fp8.static_input


@pytest.mark.parametrize("quant", ALGOS)
@pytest.mark.parametrize("release", RELEASES)
def test_lm_head_quantized_unless_excluded(tmp_path, quant, release):
    report = _inspect(tmp_path, "cuda:90", release, quant=quant, ignore=(), vocab=1024)
    head = _layer(report, "lm_head")
    assert head.layer_type == "ParallelLMHead" and head.scheme != "UnquantizedEmbeddingMethod"
    assert head.kernel and not head.errors
    excluded = _layer(_inspect(tmp_path / "x", "cuda:90", release, quant=quant, ignore=("lm_head",)), "lm_head")
    assert excluded.kernel is None and excluded.strategy_text is None


@pytest.mark.parametrize("tp", [1, 2])
def test_a_quantized_lm_head_is_built_on_the_padded_vocabulary(tmp_path, tp):
    """VocabParallelEmbedding hands create_weights [pad_vocab_size(1000) / tp] = [1024 / tp] rows: 0.28's PB_WO
    out_features check passes on the padded width (1000 would fail it), and the kernel sees the padded N."""
    folder = write_checkpoint(str(tmp_path / "ckpt"), Spec(quant="modelopt-pbwo", ignore=(), vocab=1000))
    report = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("cuda:90"), select_profile("0.28"),
                                                                   tp=tp))
    head = _layer(report, "lm_head")
    assert head.kernel and not head.errors


def test_legacy_hf_quant_config(tmp_path):
    report = _inspect(tmp_path, quant="modelopt-fp8-legacy", ignore=("model.layers.1.*",))
    assert report.quant_method == "modelopt"
    assert _layer(report).kernel and _layer(report, "model.layers.1.self_attn.qkv_proj").strategy_text is None


class _Module:
    def __init__(self, name, shards=(), layer_type="QKVParallelLinear"):
        self.name, self.layer_type, self.unquantized = name, layer_type, None
        self.shards = tuple(type("S", (), {"name": s})() for s in shards)
        self.fused = bool(shards)


def _cfg(**raw):
    return modelopt.parse({"quant_method": "modelopt", "quant_algo": "FP8", **raw}, "cfg")


@pytest.mark.parametrize("ignore, name, is_excluded", [
    (["model.layers.0.self_attn.o_proj"], "model.layers.0.self_attn.o_proj", True),       # exact
    (["self_attn"], "model.layers.0.self_attn.o_proj", True),                             # substring
    (["model.layers.0.self_attn.o_proj"], "language_model.model.layers.0.self_attn.o_proj", True),
    (["model.layers.1.*"], "model.layers.1.mlp.down_proj", True),                         # fnmatch
    (["model.layers.1.*"], "model.layers.0.mlp.down_proj", False),
    (["*.mlp.gate*"], "model.layers.0.mlp.gate_up_proj", False),  # rewritten to *.mlp.gate / *.mlp.gate.*
    (["*mlp.down*"], "model.layers.0.mlp.down_proj", False),
    (["lm_head"], "model.layers.0.mlp.down_proj", False),
])
def test_exclusion(ignore, name, is_excluded):
    assignment = modelopt.assign(_Module(name, layer_type="RowParallelLinear"), _cfg(ignore=ignore))
    assert (assignment.method is None) == is_excluded


def test_fused_shards():
    qkv = _Module(QKV, ("model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.k_proj",
                        "model.layers.0.self_attn.v_proj"))
    mixed = modelopt.assign(qkv, _cfg(ignore=["model.layers.0.self_attn.q_proj"]))
    assert mixed.error == (f"Detected some but not all shards of {QKV} are quantized. All shards of fused layers to "
                           "have the same precision.")
    whole = ["model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.k_proj", "model.layers.0.self_attn.v_proj"]
    assert modelopt.assign(qkv, _cfg(ignore=whole)).method is None
    assert modelopt.assign(qkv, _cfg(ignore=[QKV])).method is None
    assert modelopt.assign(qkv, _cfg(ignore=["model.layers.0.self_attn.q*"])).method is None  # fnmatch on qkv_proj


def test_vision_tower_stays_unquantized():
    for name in ("vision_tower.transformer.layers.0.attention.q_proj", "vision_model.layers.0.mlp.fc1"):
        assert modelopt.assign(_Module(name, layer_type="ColumnParallelLinear"), _cfg()).method is None
    assert modelopt.assign(_Module("multi_modal_projector.linear_1", layer_type="ColumnParallelLinear"),
                           _cfg()).method == "modelopt"


@pytest.mark.parametrize("release, excluded", [("0.30", False), ("0.33", True)])
def test_exclude_modules_fallback_in_033(tmp_path, release, excluded):
    cfg = {"quant_method": "modelopt", "quant_algo": "FP8", "exclude_modules": ["model.layers.0.self_attn*"]}
    report = _inspect(tmp_path, "cuda:90", release, quant="modelopt-fp8", ignore=(),
                      extra_config={"quantization_config": cfg})
    assert (_layer(report).strategy_text is None) == excluded
    # An explicit `ignore` wins, even an empty one.
    config = modelopt.for_release(_cfg(ignore=[], exclude_modules=["x"]), select_profile("0.33"))
    assert config.exclude_modules == ()


def test_exclude_modules_fallback_error_only_in_033(tmp_path):
    cfg = {"quant_method": "modelopt", "quant_algo": "FP8", "exclude_modules": "lm_head"}
    for release, refused in (("0.32", False), ("0.33", True)):
        report = _inspect(tmp_path / release, "cuda:90", release, quant="modelopt-fp8",
                          extra_config={"quantization_config": cfg})
        error = "config.json: quantization_config: exclude_modules must be a list, got <class 'str'>"
        assert (error in report.errors) == refused


@pytest.mark.parametrize("raw, message", [
    ({"quantization": "FP8"}, "Expected 'quantization' to be a dictionary in config"),
    ({"quant_algo": None}, "Missing 'quant_algo' in quantization config"),
    ({"quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": 8}},
     "kv_cache_quant_algo must be a string, got <class 'int'>"),
    ({"quant_algo": "FP8", "ignore": "lm_head"}, "exclude_modules must be a list, got <class 'str'>"),
    ({"quantization": {"quant_algo": "FP8", "exclude_modules": None}},
     "exclude_modules must be a list, got <class 'NoneType'>"),
    ({"quant_algo": "FP8", "group_size": "x"}, "group_size must be an integer, got <class 'str'>"),
    ({"quant_algo": "INT8"}, "ModelOpt currently only supports: ['FP8', 'FP8_PER_CHANNEL_PER_TOKEN', 'FP8_PB_WO', "
     "'NVFP4', 'W4A16_NVFP4', 'MXFP8', 'MIXED_PRECISION'] quantizations in vLLM. Please check the "
     "`hf_quant_config.json` file for your model's quant configuration."),
    ({"quant_algo": "MXFP8", "quant_method": "other"},
     "Unsupported ModelOpt FP8 quant_algo for vLLM: MXFP8. Supported: FP8 / FP8_PER_CHANNEL_PER_TOKEN / FP8_PB_WO."),
])
def test_parse_errors(raw, message):
    with pytest.raises(ConfigError) as caught:
        modelopt.parse({"quant_method": "modelopt", **raw}, "where")
    assert str(caught.value) == f"where: {message}"


def test_parse_fields():
    legacy = modelopt.parse({"quant_method": "modelopt", "quant_algo": "NVFP4", "ignore": ["a"], "quantization": {
        "quant_algo": "fp8_pb_wo", "kv_cache_quant_algo": "fp8", "group_size": "128", "exclude_modules": ["b*"]}},
        "cfg")
    assert (legacy.quant_algo, legacy.kv_cache_quant_algo, legacy.group_size) == ("FP8_PB_WO", "FP8", 128)
    assert legacy.exclude_modules == ("b", "b.*")
    top = modelopt.parse({"quant_method": "modelopt", "quant_algo": "fp8",
                          "kv_cache_scheme": {"type": "float", "num_bits": 8}}, "cfg")
    assert (top.quant_algo, top.kv_cache_quant_algo, top.exclude_modules) == ("FP8", "FP8", ())


@pytest.mark.parametrize("raw, method", [
    ({"quant_method": "modelopt", "quant_algo": "fp8"}, "modelopt"),
    ({"quant_method": "modelopt_fp4", "quant_algo": "FP8"}, "modelopt"),
    ({"quant_method": "modelopt", "quant_algo": "FP8_PB_WO"}, None),
    ({"quant_method": "modelopt", "quant_algo": "FP8_PER_CHANNEL_PER_TOKEN"}, None),
    ({"quant_method": "modelopt", "quant_algo": "NVFP4"}, "modelopt_fp4"),
    ({"quant_method": "modelopt", "quant_algo": "W4A16_NVFP4"}, "modelopt_fp4"),
    ({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION"}, "modelopt_mixed"),
    ({"quant_method": "modelopt", "quant_algo": "MXFP8"}, None),
    ({"quant_method": "fp8", "quant_algo": "FP8"}, None),
    ({"quant_method": "modelopt", "quantization": "FP8"}, None),
])
def test_override(raw, method):
    assert modelopt.override(raw, None) == method


@pytest.mark.parametrize("algo, method", [("NVFP4", "modelopt_fp4"), ("MIXED_PRECISION", "modelopt_mixed")])
def test_other_modelopt_algos_are_out_of_scope(algo, method):
    parsed = parse_quant_config({"quant_method": "modelopt", "quant_algo": algo})
    assert parsed == OutOfScopeConfig(method)


def test_legacy_normalization_reaches_parse():
    raw = normalize({"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8_PB_WO"}}, "f")
    assert parse_quant_config(raw).quant_algo == "FP8_PB_WO"


@pytest.mark.parametrize("quant", ALGOS)
def test_moe_experts(tmp_path, quant):
    report = _inspect(tmp_path, "cuda:90", "0.33", quant=quant, **MOE)
    moe = report.moes[0]
    assert moe.scheme == "ModelOptFp8MoEMethod" and moe.strategy_text == "tensor"
    if quant == "modelopt-fp8":
        assert not moe.errors
    else:  # [N] / 4-D expert scales meet per-tensor slots: vLLM's _to_scalar refuses them at load
        assert any("per-tensor scale holds one element" in e for e in moe.errors)
        assert any("shape '[]' is invalid for input of size" in n for n in moe.notes)


def test_moe_excluded(tmp_path):
    method = modelopt.moe_method("model.layers.0.mlp.experts", ("gate_proj", "up_proj", "down_proj"),
                                 _cfg(ignore=["model.layers.0.mlp.experts.0.gate_proj"]), "0.33")
    assert method.method == "UnquantizedFusedMoEMethod"
    kept = modelopt.moe_method("model.layers.1.mlp.experts", ("gate_proj", "up_proj", "down_proj"),
                               _cfg(ignore=["model.layers.0.mlp.experts.0.gate_proj"]), "0.33")
    assert kept.method == "ModelOptFp8MoEMethod"
    assert (kept.weight_key, kept.activation_key) == (kFp8StaticTensorSym, kFp8StaticTensorSym)


def test_mxfp8_is_not_this_format(tmp_path):
    parsed = parse_quant_config({"quant_method": "modelopt", "quant_algo": "MXFP8"})
    assert parsed.method == "modelopt_mxfp8"


def test_out_of_scope_nvfp4_checkpoint_is_refused(tmp_path):
    with pytest.raises(InputError, match="modelopt_fp4"):
        _inspect(tmp_path, quant="modelopt-fp8",
                 extra_config={"quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4"}})
