"""Header-level integrity: each FP8 weight has its scales, with the shape and dtype its strategy needs."""

from __future__ import annotations

import json
import os

from fp8check.core.checkpoint.local import open_local
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import LATEST
from fp8check.synth import Spec, tensor_specs, write_safetensors


def rewrite(folder, quant, change):
    """Rewrite model.safetensors with its header entries changed by `change(entries)` (data becomes a hole)."""
    entries = tensor_specs(Spec(quant=quant))
    change(entries)
    write_safetensors(os.path.join(folder, "model.safetensors"), entries, None)
    return folder


def report_of(folder, platform="xpu"):
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), LATEST))


def layer(report, name):
    return next(layer for layer in report.layers if layer.name == name)


def test_missing_block_scale_is_an_error_naming_the_tensor(make_checkpoint):
    folder = rewrite(make_checkpoint(quant="ct-fp8-block"), "ct-fp8-block",
                     lambda e: e.pop("model.layers.1.mlp.down_proj.weight_scale"))
    report = report_of(folder)
    errors = layer(report, "model.layers.1.mlp.down_proj").errors
    assert errors[0].startswith("model.layers.1.mlp.down_proj.weight_scale is missing: the block FP8 weight")
    assert "[2, 4]" in errors[0] and not report.ok
    assert layer(report, "model.layers.0.mlp.down_proj").errors == ()


def test_wrong_scale_shape_and_dtype(make_checkpoint):
    def change(e):
        e["model.layers.0.mlp.down_proj.weight_scale"] = ("BF16", (2, 2))
        e["model.layers.0.self_attn.o_proj.weight_scale"] = ("I32", (2, 2))
    report = report_of(rewrite(make_checkpoint(quant="ct-fp8-block"), "ct-fp8-block", change))
    assert ("has shape [2, 2], but a block scale for weight [256, 512] must be [2, 4]"
            in layer(report, "model.layers.0.mlp.down_proj").errors[0])
    assert "has dtype I32" in layer(report, "model.layers.0.self_attn.o_proj").errors[0]


def test_bf16_weight_in_a_quantized_layer_and_fp8_weight_in_an_ignored_one(make_checkpoint):
    def change(e):
        e["model.layers.0.mlp.down_proj.weight"] = ("BF16", (256, 512))
        e["lm_head.weight"] = ("F8_E4M3", (1000, 256))
    report = report_of(rewrite(make_checkpoint(quant="ct-fp8-block"), "ct-fp8-block", change))
    assert "is BF16, but the quantization config makes it an FP8 layer" in layer(report, "model.layers.0.mlp.down_proj").errors[0]
    assert "loaded unscaled" in layer(report, "lm_head").errors[0]


def test_static_input_scale_required(make_checkpoint):
    folder = rewrite(make_checkpoint(quant="ct-fp8"), "ct-fp8",
                     lambda e: e.pop("model.layers.0.self_attn.k_proj.input_scale"))
    report = report_of(folder, "h100")
    assert layer(report, "model.layers.0.self_attn.qkv_proj").errors == (
        "model.layers.0.self_attn.k_proj.input_scale is missing: static FP8 activations need a per-tensor input scale",)


def test_stale_index_is_caught_both_ways(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-block", shards=2)
    index_path = os.path.join(folder, "model.safetensors.index.json")
    index = json.load(open(index_path))
    moved = "model.layers.0.mlp.down_proj.weight_scale"
    index["weight_map"]["attn.wo_a.scale"] = index["weight_map"][moved]  # listed, but in no shard (vllm#57108)
    json.dump(index, open(index_path, "w"))
    report = report_of(folder)
    assert any("lists tensor 'attn.wo_a.scale'" in e and "does not contain it" in e for e in report.errors)
    assert not report.ok


def test_native_fp8_block_uses_weight_scale_inv(make_checkpoint):
    report = report_of(make_checkpoint(quant="fp8-block"))
    assert report.ok
    name = "model.layers.0.mlp.down_proj"
    folder = rewrite(make_checkpoint(quant="fp8-block"), "fp8-block",
                     lambda e: e.update({f"{name}.weight_scale": e.pop(f"{name}.weight_scale_inv")}))
    errors = layer(report_of(folder), "model.layers.0.mlp.down_proj").errors
    assert errors[0].startswith("model.layers.0.mlp.down_proj.weight_scale_inv is missing")


def test_shard_tensor_missing_from_the_index(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-block", shards=2)
    index_path = os.path.join(folder, "model.safetensors.index.json")
    index = json.load(open(index_path))
    del index["weight_map"]["model.layers.1.mlp.down_proj.weight_scale"]
    json.dump(index, open(index_path, "w"))
    errors = report_of(folder).errors
    assert any("holds tensor 'model.layers.1.mlp.down_proj.weight_scale'" in e and "does not list it" in e
               for e in errors)
