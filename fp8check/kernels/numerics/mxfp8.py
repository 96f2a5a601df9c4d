"""MXFP8 numerics in torch (load only): E8M0 decoding, vLLM's MX quantization of activations, and the GEMM of
each MXFP8 numerics class (fp8check.kernels.mxfp8: MX_WEIGHT_ONLY, MX_W8A8), as fp32 emulation that runs on CPU.

Mirrors vllm/model_executor/layers/quantization/utils/mxfp8_utils.py: _mxfp8_e4m3_quantize_torch (and the ROCm
Triton kernel, which copies it): per 1 x 32 block, scale = clamp(ceil(log2(amax / 448)) + 127, 0, 254) with amax
clamped to float32 tiny, values x / 2**(scale - 127) cast to float8_e4m3fn; dequant_mxfp8_to_bf16: 2**(e - 127).

Signatures:
- decode_e8m0(scale_u8 [..., G] uint8) -> float32 2**(e - 127)
- mx_quantize(x [M, K]) -> (values float8_e4m3fn [M, K], scales uint8 [M, K/32])
- mx_dequantize(values [N, K], scales uint8 [N, K/32]) -> float32 [N, K]
- mx_linear(x [M, K], weight F8_E4M3 [N, K], weight_scale uint8 [N, K/32], numerics) -> x.dtype [M, N]
"""

from __future__ import annotations

import torch

from fp8check.kernels.mxfp8 import MX_W8A8, MX_WEIGHT_ONLY, MXFP8_BLOCK_SIZE

E4M3_MAX = 448.0


def decode_e8m0(scale: torch.Tensor) -> torch.Tensor:
    return torch.exp2(scale.to(torch.float32) - 127.0)


def mx_quantize(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m, k = x.shape
    blocks = x.to(torch.float32).view(m, k // MXFP8_BLOCK_SIZE, MXFP8_BLOCK_SIZE)
    amax = blocks.abs().amax(dim=-1).clamp(min=torch.finfo(torch.float32).tiny)
    biased = (torch.ceil(torch.log2(amax / E4M3_MAX)) + 127.0).clamp(0, 254)
    values = (blocks / torch.exp2(biased - 127.0).unsqueeze(-1)).view(m, k).to(torch.float8_e4m3fn)
    return values, biased.to(torch.uint8)


def mx_dequantize(values: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    n, k = values.shape
    blocks = values.to(torch.float32).view(n, k // MXFP8_BLOCK_SIZE, MXFP8_BLOCK_SIZE)
    return (blocks * decode_e8m0(scales).unsqueeze(-1)).view(n, k)


def mx_linear(x: torch.Tensor, weight: torch.Tensor, weight_scale: torch.Tensor, numerics: str) -> torch.Tensor:
    """MX_WEIGHT_ONLY: Emulation / Marlin (the weight dequantized to bf16, x unquantized); MX_W8A8: both operands
    MX-quantized, fp32 accumulation."""
    if numerics == MX_WEIGHT_ONLY:
        w = mx_dequantize(weight, weight_scale).to(torch.bfloat16).to(x.dtype)
        return torch.nn.functional.linear(x, w)
    if numerics != MX_W8A8:
        raise ValueError(f"not an MXFP8 numerics class: {numerics}")
    xq, xs = mx_quantize(x)
    out = mx_dequantize(xq, xs) @ mx_dequantize(weight, weight_scale).T
    return out.to(x.dtype)
