"""Our quantization_config parser agrees with compressed-tensors' own pydantic models.

compressed-tensors is imported here only (it costs ~5 s); the inspect path never imports it.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fp8check.core.errors import ConfigError
from fp8check.core.formats.compressed_tensors import PRESETS, CompressedTensorsConfig, parse_quant_args
from fp8check.core.formats.fp8 import NativeFp8Config
from fp8check.core.formats.registry import OutOfScopeConfig, parse_quant_config
from fp8check.synth import QUANTS, Spec, quantization_config

ct = pytest.importorskip("compressed_tensors.quantization")


def _value(x):
    return getattr(x, "value", x)


def _ct_fields(args) -> dict:
    return {
        "num_bits": args.num_bits, "type": _value(args.type), "symmetric": args.symmetric,
        "strategy": _value(args.strategy),
        "group_size": args.group_size,
        "block_structure": tuple(args.block_structure) if args.block_structure else None,
        "dynamic": _value(args.dynamic),
        "scale_dtype": str(args.scale_dtype) if args.scale_dtype is not None else None,
    }


def _our_fields(args) -> dict:
    return {"num_bits": args.num_bits, "type": args.type, "symmetric": args.symmetric, "strategy": args.strategy,
            "group_size": args.group_size, "block_structure": args.block_structure, "dynamic": args.dynamic,
            "scale_dtype": args.scale_dtype}


@pytest.mark.parametrize("name", sorted(ct.quant_scheme.PRESET_SCHEMES))
def test_every_preset_matches_compressed_tensors(name):
    theirs = ct.quant_scheme.PRESET_SCHEMES[name]
    ours_weights, ours_inputs = PRESETS[name]
    for key, ours in (("weights", ours_weights), ("input_activations", ours_inputs)):
        if key not in theirs:
            assert ours is None
        else:
            assert _our_fields(ours) == _ct_fields(theirs[key]), f"{name}.{key}"


@pytest.mark.parametrize("name", ["FP8", "FP8_DYNAMIC", "FP8_BLOCK", "W8A16", "NVFP4"])
def test_preset_keyed_config_groups(name):
    raw = {"quant_method": "compressed-tensors", "config_groups": {name: ["Linear"]}, "format": "float-quantized"}
    theirs = ct.QuantizationConfig.model_validate(raw).config_groups[name]
    ours = parse_quant_config(raw).groups[0]
    assert ours.targets == ("Linear",)
    assert _our_fields(ours.weights) == _ct_fields(theirs.weights)
    if theirs.input_activations is None:
        assert ours.input_activations is None
    else:
        assert _our_fields(ours.input_activations) == _ct_fields(theirs.input_activations)


ARG_VALUES = st.fixed_dictionaries(
    {},
    optional={
        "num_bits": st.sampled_from([4, 8]),
        "type": st.sampled_from(["int", "float", "FLOAT", "bogus"]),
        "symmetric": st.booleans(),
        "strategy": st.sampled_from(["tensor", "channel", "group", "block", "token", "tensor_group", "attn_head",
                                     "Block", "rows", None]),
        "group_size": st.sampled_from([None, -2, -1, 0, 16, 32, 128]),
        "block_structure": st.sampled_from([None, [128, 128], [64, 32], [128, 128, 1], [0, 128], "128x128",
                                            "axb", [128]]),
        "dynamic": st.sampled_from([True, False, "local", "LOCAL"]),
        "actorder": st.sampled_from([None, "weight", "static", "group", "dynamic", True, False]),
        "observer": st.sampled_from([None, "minmax", "static_minmax"]),
        "observer_kwargs": st.just({}),
        "unexpected_key": st.just(1),
    },
)


def _ct_parse(raw):
    try:
        return ct.QuantizationArgs.model_validate(raw)
    except Exception:  # noqa: BLE001 - pydantic ValidationError, NotImplementedError, ...: all mean "rejected"
        return None


def _our_parse(raw):
    try:
        return parse_quant_args(raw, "args")
    except ConfigError:
        return None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ARG_VALUES)
def test_quant_args_agree_with_compressed_tensors(raw):
    theirs, ours = _ct_parse(raw), _our_parse(raw)
    assert (theirs is None) == (ours is None), f"compressed-tensors {'rejects' if theirs is None else 'accepts'} {raw}"
    if ours is not None:
        assert _our_fields(ours) == _ct_fields(theirs)


HAND_WRITTEN = [
    # FP8_BLOCK exactly as llm-compressor 0.14 writes it (shared/formats.md §5.2), nulls included.
    {"config_groups": {"group_0": {"format": "float-quantized",
        "input_activations": {"actorder": None, "block_structure": None, "dynamic": True, "group_size": 128,
                              "num_bits": 8, "observer": None, "observer_kwargs": {}, "scale_dtype": None,
                              "strategy": "group", "symmetric": True, "type": "float", "zp_dtype": None},
        "output_activations": None, "targets": ["Linear"],
        "weights": {"actorder": None, "block_structure": [128, 128], "dynamic": False, "group_size": None,
                    "num_bits": 8, "observer": "memoryless_minmax", "observer_kwargs": {}, "scale_dtype": None,
                    "strategy": "block", "symmetric": True, "type": "float", "zp_dtype": None}}},
     "format": "float-quantized", "global_compression_ratio": None, "ignore": ["lm_head"], "kv_cache_scheme": None,
     "quant_method": "compressed-tensors", "quantization_status": "compressed", "sparsity_config": {},
     "transform_config": {}, "version": "0.19.0"},
    # Two groups, regex targets, strategy inferred from group_size = -1 (channel).
    {"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["re:.*lm_head"],
     "config_groups": {
         "attn": {"targets": ["re:.*self_attn.*"], "weights": {"num_bits": 8, "type": "float", "group_size": -1}},
         "mlp": {"targets": ["re:.*mlp.*"], "weights": {"num_bits": 8, "type": "float", "strategy": "block",
                                                         "block_structure": "128x128"},
                 "input_activations": {"num_bits": 8, "type": "float", "dynamic": True, "strategy": "group",
                                       "group_size": 128}}}},
    # Invalid: an activation strategy compressed-tensors refuses for inputs.
    {"quant_method": "compressed-tensors", "config_groups": {"g": {"targets": ["Linear"],
     "weights": {"num_bits": 8, "type": "float"}, "input_activations": {"num_bits": 8, "type": "float",
                                                                         "strategy": "channel"}}}},
    # Invalid: an unknown key inside a scheme.
    {"quant_method": "compressed-tensors", "config_groups": {"g": {"targets": ["Linear"], "wieghts": {}}}},
    # Invalid: block strategy without block_structure.
    {"quant_method": "compressed-tensors", "config_groups": {"g": {"targets": ["Linear"],
     "weights": {"num_bits": 8, "type": "float", "strategy": "block"}}}},
]


@pytest.mark.parametrize("raw", HAND_WRITTEN + [quantization_config(Spec(quant=q)) for q in QUANTS
                                                if QUANTS[q].method == "compressed-tensors"])
def test_hand_written_configs_agree(raw):
    try:
        theirs = ct.QuantizationConfig.model_validate(raw)
    except Exception:  # noqa: BLE001
        theirs = None
    try:
        ours = parse_quant_config(raw)
    except ConfigError:
        ours = None
    assert (theirs is None) == (ours is None)
    if ours is None:
        return
    assert [g.name for g in ours.groups] == list(theirs.config_groups)
    for group in ours.groups:
        scheme = theirs.config_groups[group.name]
        assert list(group.targets) == scheme.targets
        assert _our_fields(group.weights) == _ct_fields(scheme.weights)
        if scheme.input_activations is not None:
            assert _our_fields(group.input_activations) == _ct_fields(scheme.input_activations)
    assert list(ours.ignore) == (theirs.ignore or [])


def test_native_fp8_mirrors_vllm_checks():
    cfg = parse_quant_config({"quant_method": "fp8", "activation_scheme": "dynamic", "fmt": "e4m3",
                              "weight_block_size": [128, 128], "modules_to_not_convert": ["lm_head"]})
    assert cfg == NativeFp8Config(activation_scheme="dynamic", ignored_layers=("lm_head",), weight_block_size=(128, 128))
    with pytest.raises(ConfigError, match="must have 2 dimensions, but got 3 dimensions"):
        parse_quant_config({"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [1, 2, 3]})
    with pytest.raises(ConfigError, match="only supports dynamic activation scheme for now, but got static"):
        parse_quant_config({"quant_method": "fp8", "activation_scheme": "static", "weight_block_size": [128, 128]})
    with pytest.raises(ConfigError, match="Unsupported activation scheme"):
        parse_quant_config({"quant_method": "fp8", "activation_scheme": "sometimes"})
    with pytest.raises(ConfigError, match="activation_scheme"):
        parse_quant_config({"quant_method": "fp8"})


@pytest.mark.parametrize("method", ["gptq", "awq", "bitsandbytes", "torchao"])
def test_other_methods_are_recognised_not_parsed(method):
    assert parse_quant_config({"quant_method": method, "bits": 4}) == OutOfScopeConfig(method)


def test_a_modelopt_nvfp4_config_is_out_of_scope_under_vllms_name():
    assert parse_quant_config({"quant_method": "modelopt", "quant_algo": "NVFP4"}) == OutOfScopeConfig("modelopt_fp4")


def test_no_quantization_config_means_unquantized():
    assert parse_quant_config(None) is None
    assert isinstance(parse_quant_config(quantization_config(Spec(quant="ct-fp8-block"))), CompressedTensorsConfig)
