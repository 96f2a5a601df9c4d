"""Checkpoint tensors -> vLLM modules (fused shards, parallel styles, MoE) and compressed-tensors matching."""

from __future__ import annotations

import json
import os

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.formats.compressed_tensors import assign as assign_compressed_tensors
from fp8check.core.formats.registry import parse_quant_config
from fp8check.core.formats.shared import matches
from fp8check.core.model.modules import build_layout
from fp8check.core.planning.rows import collapse, ranges
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import LATEST, select_profile
from fp8check.core.vocabulary import layer_template
from fp8check.synth import write_safetensors


def layout_of(folder):
    ckpt = open_local(folder)
    return ckpt, build_layout(ckpt.tensors, ckpt.config)


def test_llama_modules_are_fused_like_vllm(make_checkpoint):
    _, layout = layout_of(make_checkpoint(quant="ct-fp8-dynamic"))
    by_name = {m.name: m for m in layout.linears}
    assert sorted(by_name) == ["lm_head"] + [f"model.layers.{i}.{leaf}" for i in (0, 1) for leaf in
                                              ("mlp.down_proj", "mlp.gate_up_proj", "self_attn.o_proj",
                                               "self_attn.qkv_proj")]
    qkv = by_name["model.layers.0.self_attn.qkv_proj"]
    assert qkv.layer_type == "QKVParallelLinear" and qkv.output_sizes == (256, 128, 128) and qkv.heads == (4, 2, 64)
    assert [s.name.rsplit(".", 1)[-1] for s in qkv.shards] == ["q_proj", "k_proj", "v_proj"]
    assert by_name["model.layers.0.mlp.gate_up_proj"].layer_type == "MergedColumnParallelLinear"
    assert by_name["model.layers.0.mlp.down_proj"].layer_type == "RowParallelLinear"
    assert by_name["lm_head"].layer_type == "ParallelLMHead"
    assert set(qkv.shards[0].side) == {"weight_scale"}
    assert layout.orphans == () and layout.moes == ()


def test_moe_experts_become_one_fused_moe_per_layer(make_checkpoint):
    report = inspect_checkpoint(open_local(make_checkpoint(quant="ct-fp8-block", experts=8, head_dim=128,
                                                           architecture="Qwen3MoeForCausalLM")),
                                InspectOptions(parse_platform("xpu"), LATEST))
    assert [m.name for m in report.moes] == ["model.layers.0.mlp.experts", "model.layers.1.mlp.experts"]
    assert all(m.num_experts == 8 for m in report.moes)
    assert not any(".experts." in layer.name for layer in report.layers)
    router = next(layer for layer in report.layers if layer.name == "model.layers.0.mlp.gate")
    assert router.layer_type == "ReplicatedLinear"
    assert report.ok


def test_checkpoint_fused_qkv_is_split_by_config(make_checkpoint):
    # Phi-3 style: qkv_proj and gate_up_proj are already fused on disk (packed_modules_mapping maps them to
    # themselves), split into q/k/v and gate/up widths by config.json.
    _, layout = layout_of(make_checkpoint(quant=None, architecture="Phi3ForCausalLM", fused_on_disk=True))
    by_name = {m.name: m for m in layout.linears}
    qkv, gate_up = by_name["model.layers.0.self_attn.qkv_proj"], by_name["model.layers.0.mlp.gate_up_proj"]
    assert qkv.output_sizes == (256, 128, 128) and qkv.heads == (4, 2, 64) and gate_up.output_sizes == (512, 512)
    assert qkv.fused and qkv.layout == "vllm:phi3.py"


def test_orphan_scale_is_reported(make_checkpoint, tmp_path):
    entries = {"model.layers.0.mlp.down_proj.weight": ("F8_E4M3", (256, 512)),
               "model.layers.0.mlp.down_proj.weight_scale": ("BF16", (256, 1)),
               "model.layers.0.mlp.up_proj.weight_scale": ("BF16", (512, 1))}
    write_safetensors(str(tmp_path / "model.safetensors"), entries, None)
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "quantization_config":
        {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"group_0": {
            "targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}}}))
    report = inspect_checkpoint(open_local(str(tmp_path)), InspectOptions(parse_platform("h100"), LATEST))
    assert any("model.layers.0.mlp.up_proj.weight_scale" in e and "orphan" in e for e in report.errors)
    assert not report.ok


@pytest.mark.parametrize("pattern,name,expected", [
    ("re:.*down_proj", "model.layers.0.mlp.down_proj", True),
    ("down_proj", "model.layers.0.mlp.down_proj", False),                     # plain strings match full names only
    ("re:mlp", "model.layers.0.mlp.down_proj", False),                        # re.match: anchored at the start
    ("re:model.layers.1.*", "model.layers.10.mlp.down_proj", True),
    ("model.layers.0.mlp.down_proj", "model.layers.0.mlp.down_proj", True),
])
def test_ignore_and_target_patterns(pattern, name, expected):
    assert matches(name, pattern) is expected


def _ct_config(**over):
    raw = {"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": [],
           "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float",
                                                                             "strategy": "channel"}}}}
    raw.update(over)
    return parse_quant_config(raw)


def test_fused_shards_must_agree_on_ignore(make_checkpoint):
    _, layout = layout_of(make_checkpoint(quant="ct-fp8-dynamic"))
    qkv = next(m for m in layout.linears if m.leaf == "qkv_proj")
    mixed = assign_compressed_tensors(qkv, _ct_config(ignore=["model.layers.0.self_attn.q_proj"]))
    assert mixed.error.startswith("Found different quantization schemes for the shards of model.layers.0.self_attn.qkv_proj")
    all_ignored = assign_compressed_tensors(qkv, _ct_config(ignore=["re:.*self_attn.[qkv]_proj"]))
    assert all_ignored.method is None and "ignore" in all_ignored.reason


def test_targets_by_name_then_fused_components_then_class(make_checkpoint):
    _, layout = layout_of(make_checkpoint(quant="ct-fp8-dynamic"))
    qkv = next(m for m in layout.linears if m.leaf == "qkv_proj")
    down = next(m for m in layout.linears if m.leaf == "down_proj")
    groups = {"attn": {"targets": ["re:.*q_proj", "re:.*k_proj", "re:.*v_proj"],
                       "weights": {"num_bits": 8, "type": "float", "strategy": "tensor"}},
              "rest": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}
    config = _ct_config(config_groups=groups)
    assert assign_compressed_tensors(qkv, config).weights.strategy == "tensor"   # via its q/k/v components
    assert assign_compressed_tensors(down, config).weights.strategy == "channel"  # via class name "Linear"
    untargeted = _ct_config(config_groups={"g": {"targets": ["re:.*mlp.*"], "weights": groups["rest"]["weights"]}})
    assert assign_compressed_tensors(qkv, untargeted).method is None


def test_unknown_architecture_gets_a_note(make_checkpoint):
    _, layout = layout_of(make_checkpoint(quant="ct-fp8-dynamic", architecture="FancyNewForCausalLM"))
    assert "FancyNewForCausalLM is not in fp8check's table" in layout.notes[0]


def test_collapsed_rows_and_ranges(make_checkpoint):
    report = inspect_checkpoint(open_local(make_checkpoint(quant="ct-fp8-block", layers=5, head_dim=128)),
                                InspectOptions(parse_platform("xpu"), LATEST))
    rows = collapse(report.layers)
    assert [(r.name, r.count) for r in rows][1] == ("model.layers.{0..4}.mlp.down_proj", 5)
    assert len(report.layers) == 1 + 5 * 4
    assert ranges([0, 1, 2, 3, 5, 7, 8]) == "0..3,5,7..8"
    assert layer_template("model.layers.17.mlp.down_proj") == ("model.layers.{i}.mlp.down_proj", 17)


def test_sharded_checkpoint_with_index(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-block", shards=3, head_dim=128)
    assert os.path.exists(os.path.join(folder, "model.safetensors.index.json"))
    ckpt = open_local(folder)
    assert len(ckpt.files) == 3 and ckpt.integrity_errors == ()


@pytest.mark.parametrize("vllm, source", [("0.33", "vllm:gemma.py"), ("0.34", "vllm:transformers/causal.py")])
def test_gemma_moves_to_the_transformers_backend_in_034(make_checkpoint, vllm, source):
    ckpt = open_local(make_checkpoint(architecture="GemmaForCausalLM", model_type="gemma"))
    layout = build_layout(ckpt.tensors, ckpt.config, select_profile(vllm))
    qkv = next(m for m in layout.linears if m.name.endswith("self_attn.qkv_proj"))
    assert qkv.layout == source and qkv.layer_type == "QKVParallelLinear"  # the backend's QKVFuser fuses the same


@pytest.mark.parametrize("vllm, architectures, error", [
    ("0.34", ["KeyeForConditionalGeneration"], "Model architecture KeyeForConditionalGeneration was supported in "
     "vLLM until v0.33.0, and is not supported anymore. Please use an older version of vLLM if you want to use this "
     "model architecture."),
    ("0.33", ["KeyeForConditionalGeneration"], None),
    ("0.34", ["KeyeVL1_5ForConditionalGeneration", "LlamaForCausalLM"], None),  # one listed architecture is served
])
def test_an_architecture_the_release_retired_is_refused(make_checkpoint, vllm, architectures, error):
    folder = make_checkpoint()
    config_path = os.path.join(folder, "config.json")
    with open(config_path, encoding="utf-8") as fh:
        config = json.load(fh)
    with open(config_path, "w", encoding="utf-8") as fh:
        json.dump(dict(config, architectures=architectures), fh)
    report = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm)))
    assert (error in report.errors and not report.ok) if error else not any("not supported anymore" in e
                                                                           for e in report.errors)
