"""Cross-check the fixture factory against checkpoints compressed-tensors itself writes (offline, ~5 s)."""

from __future__ import annotations

import json
import os

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.checkpoint.safetensors_header import read_header
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import LATEST, select_profile

pytest.importorskip("compressed_tensors")
ct_checkpoints = pytest.importorskip("ct_checkpoints")

PAIRS = {"FP8": "ct-fp8", "FP8_DYNAMIC": "ct-fp8-dynamic", "FP8_BLOCK": "ct-fp8-block", "W8A16_FP8": "ct-w8a16-fp8"}


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    root = tmp_path_factory.mktemp("compressed-tensors")
    return {preset: ct_checkpoints.build(str(root / preset), preset) for preset in PAIRS}


def listing(folder):
    header = read_header(os.path.join(folder, "model.safetensors"))
    return {name: (t.dtype, t.shape) for name, t in header.tensors.items()}


@pytest.mark.parametrize("preset", PAIRS)
def test_writer_matches_compressed_tensors_tensor_for_tensor(real, make_checkpoint, preset):
    ours = make_checkpoint(quant=PAIRS[preset])
    assert listing(ours) == listing(real[preset])
    ours_cfg = open_local(ours).config.quantization_config
    real_cfg = open_local(real[preset]).config.quantization_config
    assert [g.weights for g in ours_cfg.groups] == [g.weights for g in real_cfg.groups]
    assert [g.input_activations for g in ours_cfg.groups] == [g.input_activations for g in real_cfg.groups]
    assert (ours_cfg.ignore, ours_cfg.format) == (real_cfg.ignore, real_cfg.format)
    assert json.load(open(os.path.join(real[preset], "config.json")))["quantization_config"]["format"] == ours_cfg.format


@pytest.mark.parametrize("platform", ["xpu", "h100", "a100", "l40s", "b200", "mi300x", "cpu"])
@pytest.mark.parametrize("vllm", ["latest", "0.27"])
def test_real_checkpoints_route_like_the_writers(real, make_checkpoint, platform, vllm):
    options = InspectOptions(parse_platform(platform), select_profile(vllm) if vllm != "latest" else LATEST)
    for preset, quant in PAIRS.items():
        a = inspect_checkpoint(open_local(real[preset]), options)
        b = inspect_checkpoint(open_local(make_checkpoint(quant=quant)), options)
        assert [(x.name, x.scheme, x.kernel, x.errors) for x in a.layers] == \
               [(x.name, x.scheme, x.kernel, x.errors) for x in b.layers], preset


def test_compressed_tensors_dequantizes_our_block_weights(make_checkpoint):
    """Our writer's scales follow compressed-tensors' convention: w = fp8 * scale, broadcast per block."""
    import torch
    from compressed_tensors.quantization import QuantizationArgs
    from compressed_tensors.quantization.lifecycle.forward import dequantize
    from safetensors.torch import load_file

    tensors = load_file(os.path.join(make_checkpoint(quant="ct-fp8-block", data="random"), "model.safetensors"))
    q = tensors["model.layers.0.mlp.down_proj.weight"]
    scale = tensors["model.layers.0.mlp.down_proj.weight_scale"].float()
    args = QuantizationArgs(num_bits=8, type="float", strategy="block", block_structure=[128, 128], symmetric=True)
    theirs = dequantize(q, scale, args=args, dtype=torch.float32)
    ours = q.float() * scale.repeat_interleave(128, 0).repeat_interleave(128, 1)
    torch.testing.assert_close(theirs, ours)
    assert ours.abs().max() > 0.01  # real data, not zeros
