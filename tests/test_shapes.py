"""Weights against the model vLLM builds from config.json (fp8check.core.model.shapes): a checkpoint whose tensors
do not have the shapes vLLM creates fails in its weight loader, whatever the kernel; fp8check says so, naming the
tensor, both shapes and the config key."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.checkpoint.local import open_local
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import LATEST
from fp8check.synth import Spec, tensor_specs, write_checkpoint, write_safetensors

LOADER = "its weight loader fails (assert param_data.shape == loaded_weight.shape)"


def inspect(folder: str):
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), LATEST))


def errors_of(report) -> list[str]:
    return [e for row in report.layers + report.moes for e in row.errors] + list(report.errors)


def test_config_that_is_not_the_weights_model_fails_naming_the_key(make_checkpoint):
    """The bundled example's shapes (hidden 256, intermediate 512) under a config.json saying 384 / 1024."""
    folder = make_checkpoint(data="sparse")
    with open(f"{folder}/config.json") as fh:
        config = json.load(fh)
    config.update(hidden_size=384, intermediate_size=1024)
    with open(f"{folder}/config.json", "w") as fh:
        json.dump(config, fh)
    report = inspect(folder)
    assert not report.ok
    down = next(e for e in errors_of(report) if e.startswith("model.layers.0.mlp.down_proj.weight "))
    assert down == ("model.layers.0.mlp.down_proj.weight (model.safetensors) has shape [256, 512], but vLLM creates "
                    "it with 384 rows from config.json's hidden_size and 1024 columns from config.json's "
                    f"intermediate_size: {LOADER}")
    assert any(e.startswith("model.embed_tokens.weight") and "hidden_size" in e for e in report.errors)
    result = CliRunner().invoke(app, ["inspect", folder, "-p", "h100"])
    assert result.exit_code == 1 and "config.json's hidden_size disagrees with" in result.output


@pytest.mark.parametrize("transposed", [("weight", "weight_scale"), ("weight",)])
def test_a_transposed_tensor_is_named_as_the_model_sees_it(tmp_path, transposed):
    """Layer 0's down_proj transposed (with its scale, or alone): the weight's shape is vLLM's first failure."""
    spec = Spec(quant="ct-fp8-block", data="sparse")
    entries = tensor_specs(spec)
    for suffix in transposed:
        dtype, shape = entries[f"model.layers.0.mlp.down_proj.{suffix}"]
        entries[f"model.layers.0.mlp.down_proj.{suffix}"] = (dtype, shape[::-1])
    folder = write_checkpoint(str(tmp_path / "ckpt"), spec)
    write_safetensors(f"{folder}/model.safetensors", entries, None)
    report = inspect(folder)
    down = next(layer for layer in report.layers if layer.name == "model.layers.0.mlp.down_proj")
    assert down.errors[0].startswith("model.layers.0.mlp.down_proj.weight (model.safetensors) has shape [512, 256], "
                                     "but vLLM creates it with 256 rows from config.json's hidden_size")
    assert down.errors[0].endswith("(the tensor looks transposed)")
    assert next(layer for layer in report.layers if layer.name == "model.layers.1.mlp.down_proj").ok


@pytest.mark.parametrize("wrong", [(0, 1, 2, 3), (2,)])
def test_an_expert_with_another_hidden_size_fails(tmp_path, wrong):
    """Every expert's up_proj wider than hidden_size: the shape check names expert 0 (it stands for all); one expert
    alone: expert_shapes names it against expert 0's shape. Either way the FusedMoE fails."""
    spec = Spec(quant="ct-fp8-block", data="sparse", architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe",
                experts=4, moe_intermediate=256, head_dim=128)
    entries = tensor_specs(spec)
    for expert in wrong:
        name = f"model.layers.1.mlp.experts.{expert}.up_proj.weight"
        entries[name] = (entries[name][0], (256, 384))
    folder = write_checkpoint(str(tmp_path / "ckpt"), spec)
    write_safetensors(f"{folder}/model.safetensors", entries, None)
    moe = next(m for m in inspect(folder).moes if m.name == "model.layers.1.mlp.experts")
    name = f"model.layers.1.mlp.experts.{wrong[0]}.up_proj.weight"
    expected = (f"{name} (model.safetensors) has shape [256, 384], but vLLM creates it with 256 columns" if wrong[0] == 0
                else f"{name} (model.safetensors) has shape [256, 384], but the other experts' up_proj weights are "
                     "[256, 256]")
    assert any(e.startswith(expected) for e in moe.errors), moe.errors


def test_a_model_as_exported_has_no_shape_error(make_checkpoint):
    assert inspect(make_checkpoint(data="sparse")).ok


def test_a_config_intermediate_size_the_mlp_does_not_have_fails(make_checkpoint):
    folder = make_checkpoint(data="sparse", extra_config={"intermediate_size": 1024})  # the weights stay 512
    errors = errors_of(inspect(folder))
    assert ("model.layers.0.mlp.gate_proj.weight (model.safetensors) has shape [512, 256], but vLLM creates it with "
            f"1024 rows from config.json's intermediate_size: {LOADER}") in errors
    assert any(e.startswith("model.layers.1.mlp.down_proj.weight") and "1024 columns" in e for e in errors)
