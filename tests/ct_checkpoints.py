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
    from compressed_tensors.compressors import ModelCompressor
    from compressed_tensors.quantization import (
        QuantizationArgs, QuantizationConfig, QuantizationScheme, QuantizationStatus, apply_quantization_config,
    )
    from compressed_tensors.quantization.utils import calculate_qparams
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
    qconfig = QuantizationConfig(config_groups=groups, ignore=["lm_head"],
                                 quantization_status=QuantizationStatus.INITIALIZED)
    apply_quantization_config(model, qconfig)
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
    model.save_pretrained(folder)
    compressor.update_config(folder)
    return folder
