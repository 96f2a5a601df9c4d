"""The FP8 KV cache write and read in plain torch, as vLLM's cache kernels store K and V (torch: `load` only).

Write: `code = saturate(x / scale)` rounded to nearest even into the cache's FP8 format, per KV head when the scale
has one entry per head. This is `reshape_and_cache_flash` (csrc/libtorch_stable/cache_kernels.cu; csrc/cache_kernels.cu
before): `fp8::scaled_convert(x, scale)` is `__nv_cvt_float_to_fp8(float(x) / scale, __NV_SATFINITE, ...)` on CUDA
(csrc/quantization/fp8/nvidia/quant_utils.cuh) and `__hip_cvt_float_to_fp8(a / scale,
fp8_type::__default_saturation, ...)`, satfinite, on ROCm (csrc/quantization/fp8/amd/quant_utils.cuh). A value past
the format's largest finite number is stored as that number (±448 e4m3fn, ±240 e4m3fnuz, ±57344 e5m2), a NaN stays
NaN. With per-head scales the kernel takes its `kv_scale_stride` path: head h is divided by `k_scale[h]`. MLA's
`concat_and_cache_mla` writes the latent with the one `k_scale` the same way. vLLM's Triton writer
(v1/attention/ops/triton_reshape_and_cache_flash.py) divides by `tl.load(k_scale)` and lets `tl.store` cast; the
CPU backend's `cpu_attn_reshape_and_cache` multiplies by `1 / k_scale` (`reciprocal=True`), one rounding apart.
Saturation in those two is assumed, not read (the GPU C++ paths above are read).

Read: `code * scale` in fp32, as the attention kernels dequantize (FlashAttention's `k_descale`, the fp8 -> half ->
float conversions of quant_utils.cuh, which are exact).

The bound: rounding to nearest into a format with m mantissa bits moves each value in its normal range by at most
one unit roundoff u = 2**-(m+1) of itself (`torch.finfo(dtype).eps / 2`: e4m3 0.0625, e5m2 0.125), so the relative
Frobenius error of the whole cache is at most u. Only saturation (a scale too small for the data), values pushed
into the subnormals (a scale far too large) or a non-finite scale exceed it.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

FP8_CACHE_DTYPES = (torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.float8_e5m2)


class CacheWrite(NamedTuple):
    """One tensor written to the cache and read back: the fp32 values attention sees, and what the write lost."""

    read_back: torch.Tensor            # fp32, the shape of the input
    saturated: int                     # values whose x / scale was past the format's largest finite number
    subnormal: int                     # nonzero values whose x / scale fell below the smallest normal number
    nonfinite: int                     # NaN or infinite values read back


def unit_roundoff(dtype: torch.dtype) -> float:
    """Half the spacing of the format's numbers at 1: 2**-(mantissa bits + 1)."""
    return torch.finfo(dtype).eps / 2


def write_and_read(x: torch.Tensor, scale: torch.Tensor, dtype: torch.dtype, reciprocal: bool = False) -> CacheWrite:
    """x: [tokens, heads, head_size] in the model dtype; scale: fp32 [heads] or [1] as the write uses it."""
    per_head = scale.float().reshape(1, -1, 1)
    scaled = x.float() * (1.0 / per_head) if reciprocal else x.float() / per_head
    finfo = torch.finfo(dtype)
    magnitude = scaled.abs()
    saturated = int(torch.count_nonzero(magnitude > finfo.max))
    subnormal = int(torch.count_nonzero((magnitude < finfo.tiny) & (magnitude > 0)))
    codes = scaled.clamp(-finfo.max, finfo.max).to(dtype)
    read_back = codes.float() * per_head
    return CacheWrite(read_back, saturated, subnormal, int(torch.count_nonzero(~torch.isfinite(read_back))))
