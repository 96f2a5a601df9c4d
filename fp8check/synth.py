"""Write synthetic FP8 checkpoints: the one fixture factory of the tests, the benchmark and the bundled example.

Headers are always exact. Tensor data is either real (random bf16 weights quantized with torch per strategy,
scales computed as compressed-tensors / vLLM do) or a sparse hole (`data="sparse"`: a 34 GB-shaped file that
costs no disk, for header-only benchmarks).
"""

from __future__ import annotations

import json
import math
import os
import struct
from dataclasses import dataclass, field, replace

ITEMSIZE = {"F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "BF16": 2, "F16": 2, "F32": 4, "I32": 4, "I64": 8, "U8": 1}

# quant name -> (quant_method, weight strategy, activation: None | (strategy, dynamic))
QUANTS = {
    "ct-fp8": ("compressed-tensors", "tensor", ("tensor", False)),
    "ct-fp8-dynamic": ("compressed-tensors", "channel", ("token", True)),
    "ct-fp8-block": ("compressed-tensors", "block", ("group", True)),
    "ct-w8a16-fp8": ("compressed-tensors", "channel", None),
    "ct-w8a16-fp8-tensor": ("compressed-tensors", "tensor", None),
    "ct-w8a16-fp8-block": ("compressed-tensors", "block", None),
    "fp8-block": ("fp8", "block", ("group", True)),
    "fp8-static": ("fp8", "tensor", ("tensor", False)),
    "fp8-dynamic": ("fp8", "tensor", ("tensor", True)),
}


@dataclass
class Spec:
    """A decoder-only model. Defaults are the tiny Llama of shared/formats.md §5."""

    quant: str | None = "ct-fp8-block"
    architecture: str = "LlamaForCausalLM"
    model_type: str = "llama"
    hidden: int = 256
    intermediate: int = 512
    layers: int = 2
    heads: int = 4
    kv_heads: int = 2
    head_dim: int | None = None
    vocab: int = 1000
    block: tuple[int, int] = (128, 128)
    experts: int = 0
    moe_intermediate: int = 128
    ignore: tuple[str, ...] = ("lm_head",)
    dtype: str = "bfloat16"
    shards: int = 1
    data: str = "random"             # "random" | "zeros" | "sparse"
    seed: int = 0
    extra_config: dict = field(default_factory=dict)

    @property
    def hd(self) -> int:
        return self.head_dim or self.hidden // self.heads


def linear_shapes(spec: Spec) -> dict[str, tuple[int, int]]:
    """Checkpoint linear names -> [out, in], in the order HF models save them."""
    shapes: dict[str, tuple[int, int]] = {}
    for i in range(spec.layers):
        p = f"model.layers.{i}"
        shapes[f"{p}.self_attn.q_proj"] = (spec.heads * spec.hd, spec.hidden)
        shapes[f"{p}.self_attn.k_proj"] = (spec.kv_heads * spec.hd, spec.hidden)
        shapes[f"{p}.self_attn.v_proj"] = (spec.kv_heads * spec.hd, spec.hidden)
        shapes[f"{p}.self_attn.o_proj"] = (spec.hidden, spec.heads * spec.hd)
        if spec.experts:
            shapes[f"{p}.mlp.gate"] = (spec.experts, spec.hidden)
            for e in range(spec.experts):
                shapes[f"{p}.mlp.experts.{e}.gate_proj"] = (spec.moe_intermediate, spec.hidden)
                shapes[f"{p}.mlp.experts.{e}.up_proj"] = (spec.moe_intermediate, spec.hidden)
                shapes[f"{p}.mlp.experts.{e}.down_proj"] = (spec.hidden, spec.moe_intermediate)
        else:
            shapes[f"{p}.mlp.gate_proj"] = (spec.intermediate, spec.hidden)
            shapes[f"{p}.mlp.up_proj"] = (spec.intermediate, spec.hidden)
            shapes[f"{p}.mlp.down_proj"] = (spec.hidden, spec.intermediate)
    shapes["lm_head"] = (spec.vocab, spec.hidden)
    return shapes


def quantization_config(spec: Spec) -> dict | None:
    if spec.quant is None:
        return None
    method, strategy, act = QUANTS[spec.quant]
    if method == "fp8":
        cfg = {"quant_method": "fp8", "activation_scheme": "dynamic" if act[1] else "static",
               "ignored_layers": list(spec.ignore)}
        if strategy == "block":
            cfg["weight_block_size"] = list(spec.block)
        return cfg
    weights = {"num_bits": 8, "type": "float", "symmetric": True, "dynamic": False, "strategy": strategy,
               "group_size": None}
    if strategy == "block":
        weights["block_structure"] = list(spec.block)
    inputs = None
    if act:
        inputs = {"num_bits": 8, "type": "float", "symmetric": True, "dynamic": act[1], "strategy": act[0]}
        if act[0] == "group":
            inputs["group_size"] = spec.block[0]
    fmt = "float-quantized" if inputs else "naive-quantized"
    return {
        "config_groups": {"group_0": {"format": fmt, "input_activations": inputs, "output_activations": None,
                                      "targets": ["Linear"], "weights": weights}},
        "format": fmt, "ignore": list(spec.ignore), "kv_cache_scheme": None, "quant_method": "compressed-tensors",
        "quantization_status": "compressed", "sparsity_config": {}, "transform_config": {}, "version": "0.20.1",
    }


def model_config(spec: Spec) -> dict:
    cfg = {
        "architectures": [spec.architecture], "model_type": spec.model_type, "hidden_size": spec.hidden,
        "intermediate_size": spec.intermediate, "num_hidden_layers": spec.layers,
        "num_attention_heads": spec.heads, "num_key_value_heads": spec.kv_heads, "vocab_size": spec.vocab,
        "max_position_embeddings": 512, "tie_word_embeddings": False, "dtype": spec.dtype,
    }
    if spec.head_dim:
        cfg["head_dim"] = spec.head_dim
    if spec.experts:
        cfg.update(num_experts=spec.experts, moe_intermediate_size=spec.moe_intermediate)
    quant = quantization_config(spec)
    if quant:
        cfg["quantization_config"] = quant
    cfg.update(spec.extra_config)
    return cfg


def tensor_specs(spec: Spec) -> dict[str, tuple[str, tuple[int, ...]]]:
    """Every tensor name -> (dtype, shape) the checkpoint holds."""
    method, strategy, act = QUANTS[spec.quant] if spec.quant else (None, None, None)
    out: dict[str, tuple[str, tuple[int, ...]]] = {"model.embed_tokens.weight": ("BF16", (spec.vocab, spec.hidden))}
    for name, (n, k) in linear_shapes(spec).items():
        ignored = name in spec.ignore or name.endswith(".mlp.gate") or method is None
        if ignored:
            out[f"{name}.weight"] = ("BF16", (n, k))
            continue
        out[f"{name}.weight"] = ("F8_E4M3", (n, k))
        scale_dtype = "F32" if method == "fp8" else "BF16"
        if strategy == "block":
            scale_shape = (math.ceil(n / spec.block[0]), math.ceil(k / spec.block[1]))
        elif strategy == "channel":
            scale_shape = (n, 1)
        else:
            scale_shape = () if method == "fp8" else (1,)
        out[f"{name}.weight_scale_inv" if method == "fp8" and strategy == "block" else f"{name}.weight_scale"] = (
            scale_dtype, scale_shape)
        if act and not act[1]:
            out[f"{name}.input_scale"] = (scale_dtype, () if method == "fp8" else (1,))
    for i in range(spec.layers):
        out[f"model.layers.{i}.input_layernorm.weight"] = ("BF16", (spec.hidden,))
        out[f"model.layers.{i}.post_attention_layernorm.weight"] = ("BF16", (spec.hidden,))
    out["model.norm.weight"] = ("BF16", (spec.hidden,))
    return dict(sorted(out.items()))


def encode_header(entries: dict[str, tuple[str, tuple[int, ...]]], metadata: dict | None = None) -> tuple[bytes, int]:
    """The safetensors header bytes (length prefix included) and the data region's size."""
    header: dict = {"__metadata__": metadata or {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in entries.items():
        nbytes = math.prod(shape) * ITEMSIZE[dtype]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # safetensors pads the header to 8 bytes
    return struct.pack("<Q", len(raw)) + raw, offset


def write_safetensors(path: str, entries: dict[str, tuple[str, tuple[int, ...]]], data: dict[str, bytes] | None,
                      metadata: dict | None = None) -> None:
    """Write a file; with `data=None` the data region is a sparse hole of the right size."""
    head, size = encode_header(entries, metadata)
    with open(path, "wb") as fh:
        fh.write(head)
        if data is None:
            fh.truncate(len(head) + size)
            return
        for name in entries:
            fh.write(data[name])


def write_checkpoint(folder: str, spec: Spec | None = None, **overrides) -> str:
    """Write config.json and the safetensors file(s) (+ index when sharded) of `spec` into `folder`."""
    spec = replace(spec or Spec(), **overrides)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as fh:
        json.dump(model_config(spec), fh, indent=2)
    entries = tensor_specs(spec)
    data = None if spec.data == "sparse" else tensor_data(spec, entries)
    names = list(entries)
    if spec.shards == 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), entries, data)
        return folder
    per = math.ceil(len(names) / spec.shards)
    weight_map = {}
    for s in range(spec.shards):
        file = f"model-{s + 1:05d}-of-{spec.shards:05d}.safetensors"
        part = {n: entries[n] for n in names[s * per:(s + 1) * per]}
        write_safetensors(os.path.join(folder, file), part, data and {n: data[n] for n in part})
        weight_map.update({n: file for n in part})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as fh:
        json.dump({"metadata": {"total_size": 0}, "weight_map": weight_map}, fh, indent=2)
    return folder


def tensor_data(spec: Spec, entries: dict[str, tuple[str, tuple[int, ...]]]) -> dict[str, bytes]:
    """Real bytes: zeros, or random weights quantized per the spec's strategy (needs torch)."""
    if spec.data == "zeros":
        return {n: bytes(math.prod(s) * ITEMSIZE[d]) for n, (d, s) in entries.items()}
    import torch  # noqa: PLC0415 - only real data needs torch

    gen = torch.Generator().manual_seed(spec.seed)
    dtypes = {"BF16": torch.bfloat16, "F32": torch.float32, "F16": torch.float16, "F8_E4M3": torch.float8_e4m3fn}
    out: dict[str, bytes] = {}
    for name, (dtype, shape) in entries.items():
        if dtype != "F8_E4M3":
            if name.endswith("norm.weight"):
                tensor = torch.ones(shape)
            elif name.rsplit(".", 1)[-1] in ("weight_scale", "weight_scale_inv", "input_scale"):
                continue  # written with their weight below
            else:
                tensor = torch.randn(shape, generator=gen) * 0.02
            out[name] = _bytes(tensor.to(dtypes[dtype]))
            continue
        prefix = name[: -len(".weight")]
        weight = torch.randn(shape, generator=gen) * 0.02
        scale_name = next(f"{prefix}.{s}" for s in ("weight_scale", "weight_scale_inv") if f"{prefix}.{s}" in entries)
        scale_dtype, scale_shape = entries[scale_name]
        q, scale = quantize_fp8(weight, scale_shape, spec.block)
        out[name] = _bytes(q)
        out[scale_name] = _bytes(scale.reshape(scale_shape).to(dtypes[scale_dtype]))
        if f"{prefix}.input_scale" in entries:
            in_dtype, in_shape = entries[f"{prefix}.input_scale"]
            out[f"{prefix}.input_scale"] = _bytes(torch.full(in_shape, 4.0 / 448).to(dtypes[in_dtype]))
    return out


def quantize_fp8(weight, scale_shape: tuple[int, ...], block: tuple[int, int]):
    """Symmetric e4m3 quantization: per-tensor, per-channel ([n, 1]) or per-block (ceil-div, padded)."""
    import torch  # noqa: PLC0415

    n, k = weight.shape
    fmax = torch.finfo(torch.float8_e4m3fn).max
    if len(scale_shape) == 2 and scale_shape[1] == 1 and scale_shape[0] == n:
        scale = weight.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / fmax
        expanded = scale
    elif len(scale_shape) == 2:
        bn, bk = block
        padded = torch.zeros(scale_shape[0] * bn, scale_shape[1] * bk)
        padded[:n, :k] = weight
        blocks = padded.reshape(scale_shape[0], bn, scale_shape[1], bk).abs().amax(dim=(1, 3))
        scale = blocks.clamp(min=1e-12) / fmax
        expanded = scale.repeat_interleave(bn, 0).repeat_interleave(bk, 1)[:n, :k]
    else:
        scale = (weight.abs().amax().clamp(min=1e-12) / fmax).reshape(())
        expanded = scale
    q = (weight / expanded).clamp(-fmax, fmax).to(torch.float8_e4m3fn)
    return q, scale


def _bytes(tensor) -> bytes:
    import torch  # noqa: PLC0415

    return tensor.contiguous().view(torch.uint8).numpy().tobytes()
