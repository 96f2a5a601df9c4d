"""load for every stored FP8 format and every online method: each runs through its routed kernel's numerics and
agrees with the fp32 reference at TP 1 and 2; a corrupted scale fails naming the tensor; --against the bf16 BASE the
checkpoint was quantized from passes. The checkpoints are fp8check.synth's (one writer per format)."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from typer.testing import CliRunner

torch = pytest.importorskip("torch")

from fp8check.cli.app import app  # noqa: E402
from fp8check.synth import QUANTS, Spec, write_checkpoint  # noqa: E402

runner = CliRunner()
SHAPE = dict(hidden=256, intermediate=512, heads=2, kv_heads=1, head_dim=128, vocab=1024, layers=1)
# A platform whose tables route each format (MXFP8 has no CPU kernel; fbgemm is refused on XPU from 0.27).
PLATFORM = {"modelopt-mxfp8": "cuda:100", "ct-mxfp8": "cuda:100", "quark-fp8": "rocm:gfx942",
            "quark-ptpc": "rocm:gfx942", "quark-fp8-block": "rocm:gfx942"}
NEW_FORMATS = tuple(q for q in QUANTS if not q.startswith(("ct-fp8", "ct-w8a16", "fp8-")))
ONLINE = ("fp8", "fp8_per_tensor", "fp8_per_block", "fp8_per_channel")


def _load(folder: str, *args: str) -> tuple[int, dict]:
    result = runner.invoke(app, ["load", folder, "-d", "cpu", "--tokens", "8", "-f", "json",
                                 "--allow-deprecated-quantization", *args])
    return result.exit_code, json.loads(result.stdout)


def _quantized(doc: dict) -> list[dict]:
    return [layer for layer in doc["layers"] if layer["weight_key"]]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("formats")
    out = {q: write_checkpoint(str(root / q), Spec(quant=q, **SHAPE)) for q in NEW_FORMATS}
    out["bf16"] = write_checkpoint(str(root / "bf16"), Spec(quant=None, **SHAPE))
    return out


@pytest.mark.parametrize("tp", ["1", "2"])
@pytest.mark.parametrize("quant", NEW_FORMATS)
def test_every_stored_format_loads_and_agrees(folders, quant, tp):
    code, doc = _load(folders[quant], "-p", PLATFORM.get(quant, "h100"), "--tp", tp)
    assert code == 0, doc["errors"] + [e for layer in doc["layers"] for e in layer["errors"] + layer["load"]["errors"]]
    quantized = _quantized(doc)
    assert quantized and all(layer["load"]["status"] in ("ok", "warn") for layer in quantized)
    assert all(0 < layer["load"]["rel_error"] <= layer["load"]["bound"] for layer in quantized)
    assert all(layer["load"]["numerics"] != "unquantized" for layer in quantized)


@pytest.mark.parametrize("tp", ["1", "2"])
@pytest.mark.parametrize("method", ONLINE)
def test_every_online_method_quantizes_the_bf16_weights_and_agrees(folders, method, tp):
    code, doc = _load(folders["bf16"], "-p", "h100", "-q", method, "--tp", tp)
    assert code == 0, doc["errors"]
    quantized = _quantized(doc)
    assert quantized and {layer["weight_dtype"] for layer in quantized} == {"BF16"}
    for layer in quantized:  # FP8 numerics ran on weights quantized at load: a quantization error shows
        run = layer["load"]
        assert run["numerics"] in ("scaled-mm", "block") and run["rel_error"] <= run["bound"]
        assert run["quant_error"] > 1e-3


def _corrupt(src: str, dst: str, quant: str, value: float) -> str:
    """A copy of `src` whose first q_proj weight scale is `value` everywhere (E8M0 bytes: 0xFF, NaN)."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(src, dst)
    path = os.path.join(dst, "model.safetensors")
    tensors = load_file(path)
    name = f"model.layers.0.self_attn.q_proj.{QUANTS[quant].scale}"
    tensors[name] = torch.full_like(tensors[name], 255) if tensors[name].dtype == torch.uint8 else \
        torch.full_like(tensors[name], value)
    save_file(tensors, path, metadata={"format": "pt"})
    return name


@pytest.mark.parametrize("quant", NEW_FORMATS)
def test_a_corrupted_scale_fails_naming_the_tensor(folders, quant, tmp_path):
    value = 0.0 if quant.startswith("quark") else float("nan")
    name = _corrupt(folders[quant], str(tmp_path / "bad"), quant, value)
    code, doc = _load(str(tmp_path / "bad"), "-p", PLATFORM.get(quant, "h100"))
    assert code == 1
    qkv = next(layer for layer in doc["layers"] if layer["name"] == "model.layers.0.self_attn.qkv_proj")
    assert qkv["load"]["status"] == "FAIL" and any(e.startswith(name + ":") for e in qkv["load"]["errors"])


@pytest.mark.parametrize("quant", ("modelopt-fp8", "modelopt-pcpt", "modelopt-pbwo", "quark-ptpc", "quark-fp8-block",
                                   "inc-fp8-block", "fbgemm-fp8", "ct-mxfp8"))
def test_against_the_bf16_base_it_was_quantized_from(folders, quant):
    code, doc = _load(folders[quant], "-p", PLATFORM.get(quant, "h100"), "--against", folders["bf16"])
    assert code == 0, [e for layer in doc["layers"] for e in layer["load"]["errors"]]
    assert all(layer["against"] and not layer["against"]["errors"] for layer in _quantized(doc))


MOE = dict(SHAPE, architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=4, moe_intermediate=128)


@pytest.fixture(scope="module")
def moe_folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("moe-formats")
    return {q: write_checkpoint(str(root / str(q)), Spec(quant=q, **MOE)) for q in ("modelopt-fp8", "quark-ptpc", None)}


@pytest.mark.parametrize("tp", ["1", "2"])
@pytest.mark.parametrize("quant, method", [("modelopt-fp8", None), ("quark-ptpc", None), (None, "fp8_per_tensor"),
                                           (None, "fp8_per_block"), (None, "fp8_per_channel")])
def test_experts_of_stored_and_online_formats_run_and_agree(moe_folders, quant, method, tp):
    """ModelOpt's per-tensor experts (ModelOptFp8MoEMethod), Quark's per-channel [N] expert scales (each TP rank
    narrows w13's), and the online MoE methods' quantization at load (one w13 scale over w1 and w3 per expert)."""
    args = ["-p", "rocm:gfx942" if quant == "quark-ptpc" else "h100", "--tp", tp] + (["-q", method] if method else [])
    code, doc = _load(moe_folders[quant], *args)
    assert code == 0, [e for m in doc["moe"] for e in m["errors"] + (m["load"] or {}).get("errors", [])]
    assert doc["moe"] and all(m["load"]["status"] in ("ok", "warn") and m["load"]["experts"] for m in doc["moe"])


@pytest.mark.parametrize("quant, kv_scales", [("quark-fp8", ("k_proj.output_scale", "v_proj.output_scale")),
                                              ("modelopt-fp8", ("k_proj.k_scale", "v_proj.v_scale"))])
def test_fp8_kv_checkpoints_load_with_their_kv_cache_scales_at_tp_2(tmp_path, quant, kv_scales):
    """amd/*-FP8-KV and nvidia/*-FP8 store KV-cache scales beside k_proj / v_proj (Quark's output_scale, ModelOpt's
    k_scale / v_scale): vLLM remaps them to the attention layer, so the linear's TP split never cuts them."""
    import struct

    from fp8check.synth import tensor_data, tensor_specs, write_safetensors

    spec = Spec(quant=quant, **SHAPE)
    folder = write_checkpoint(str(tmp_path / quant), spec)
    entries = tensor_specs(spec)
    data = tensor_data(spec, entries)
    for i in range(spec.layers):
        for leaf in kv_scales:
            entries[f"model.layers.{i}.self_attn.{leaf}"] = ("F32", ())
            data[f"model.layers.{i}.self_attn.{leaf}"] = struct.pack("<f", 0.05)
    write_safetensors(os.path.join(folder, "model.safetensors"), dict(sorted(entries.items())), data)
    code, doc = _load(folder, "-p", "rocm:gfx942" if quant == "quark-fp8" else "h100", "--tp", "2")
    assert code == 0, [e for layer in doc["layers"] for e in layer["errors"] + layer["load"]["errors"]]
