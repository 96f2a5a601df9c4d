"""Tiny real checkpoints written by compressed-tensors itself (shared/formats.md §5.5), offline, for cross-checks.

Import only inside tests that need it: compressed-tensors + transformers cost ~5 s to import.
"""

from __future__ import annotations

import math

FP8_WEIGHT_ONLY = "W8A16_FP8"  # no preset exists: FP8 channel weights, no activation quantization


def build(folder: str, preset: str, head_dim: int | None = None, **sizes) -> str:
    """Write a tiny Llama quantized with `preset`; `sizes` override LlamaConfig fields (the load benchmark writes
    a ~1 GB one)."""
    import torch
    from compressed_tensors.quantization import QuantizationArgs, QuantizationScheme
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    shape = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=1000, head_dim=head_dim or 64) | sizes
    config = LlamaConfig(max_position_embeddings=512, tie_word_embeddings=False, **shape)
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    if preset == FP8_WEIGHT_ONLY:
        weights = QuantizationArgs(num_bits=8, type="float", strategy="channel", symmetric=True, dynamic=False)
        groups = {"group_0": QuantizationScheme(targets=["Linear"], weights=weights)}
    else:
        groups = {preset: ["Linear"]}
    compressor = quantize(model, groups)
    model.save_pretrained(folder)
    compressor.update_config(folder)
    return folder


def quantize(model, groups: dict, ignore: tuple[str, ...] = ("lm_head",)):
    """Quantize `model`'s Linear modules in place as llm-compressor's QuantizationModifier does for FP8: min-max
    weight scales (calculate_qparams), static input scales 4/448, then ModelCompressor.compress_model. Returns the
    compressor, whose update_config(folder) writes quantization_config into the saved config.json."""
    from compressed_tensors.compressors import ModelCompressor
    from compressed_tensors.quantization import QuantizationConfig, QuantizationStatus, apply_quantization_config
    from compressed_tensors.quantization.utils import calculate_qparams

    apply_quantization_config(model, QuantizationConfig(config_groups=groups, ignore=list(ignore),
                                                        quantization_status=QuantizationStatus.INITIALIZED))
    for module in model.modules():
        scheme = getattr(module, "quantization_scheme", None)
        if scheme is None:
            continue
        args = scheme.weights
        w = module.weight.detach().float()
        if args.strategy == "tensor":
            lo, hi = w.min().reshape(1), w.max().reshape(1)
        elif args.strategy == "channel":
            lo, hi = w.amin(dim=1, keepdim=True), w.amax(dim=1, keepdim=True)
        else:
            bn, bk = args.block_structure
            n, k = w.shape
            blocks = w.reshape(math.ceil(n / bn), bn, math.ceil(k / bk), bk)
            lo, hi = blocks.amin(dim=(1, 3)), blocks.amax(dim=(1, 3))
        scale, _ = calculate_qparams(lo, hi, args)
        module.weight_scale.data.copy_(scale.to(module.weight_scale.dtype).reshape(module.weight_scale.shape))
        if scheme.input_activations is not None and not scheme.input_activations.dynamic:
            module.input_scale.data.fill_(4.0 / 448)
        module.quantization_status = QuantizationStatus.FROZEN
    compressor = ModelCompressor.from_pretrained_model(model)
    compressor.compress_model(model)
    return compressor


def quantize_folder(base: str, out: str, preset: str, ignore: tuple[str, ...]) -> str:
    """A safetensors BASE folder (any architecture, e.g. a Qwen3-MoE whose experts transformers would fuse) quantized
    by `quantize`: every 2-D `.weight` but the embeddings becomes an nn.Linear at its own path, so CT's presets reach
    each expert's gate/up/down as they reach a dense model's Linear modules."""
    import os
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    tensors = load_file(os.path.join(base, "model.safetensors"))
    root, rest = torch.nn.Module(), {}
    for name, value in tensors.items():
        if not name.endswith(".weight") or value.dim() != 2 or "embed_tokens" in name:
            rest[name] = value
            continue
        parent = root
        *path, leaf = name[:-len(".weight")].split(".")
        for part in path:
            if not hasattr(parent, part):
                parent.add_module(part, torch.nn.Module())
            parent = getattr(parent, part)
        linear = torch.nn.Linear(value.shape[1], value.shape[0], bias=False, dtype=value.dtype)
        linear.weight.data.copy_(value)
        parent.add_module(leaf, linear)
    compressor = quantize(root, {preset: ["Linear"]}, ignore)
    os.makedirs(out)
    shutil.copy(os.path.join(base, "config.json"), out)
    state = {k: v.contiguous() for k, v in root.state_dict().items()} | rest
    save_file(state, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    compressor.update_config(out)
    return out
