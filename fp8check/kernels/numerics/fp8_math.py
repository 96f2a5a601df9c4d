"""FP8 activation quantization in plain torch, as vLLM quantizes activations before an FP8 GEMM.

Each function names the vLLM function it mirrors (vLLM 0.28.0). torch is imported here at module level, so only
`load` imports this module; the `inspect` path never does.
"""

from __future__ import annotations

import torch

# vLLM's `per_token_group_quant_fp8(eps=1e-10)`: the floor of a group's absmax, so an all-zero group gets a
# finite scale instead of a division by zero.
GROUP_QUANT_EPS = 1e-10


def fp8_min_max(dtype: torch.dtype = torch.float8_e4m3fn) -> tuple[float, float]:
    """The clamp range vLLM quantizes into (quant_utils.get_fp8_min_max).

    vLLM uses ±224, not torch's ±240, for e4m3fnuz (ROCm MI300): 240 "will cause accuracy issue on dynamic
    quantization models". vLLM decides by platform (`is_fp8_fnuz()`); the platforms that say yes are the ones that
    quantize to e4m3fnuz, so the dtype decides here.
    """
    if dtype == torch.float8_e4m3fnuz:
        return -224.0, 224.0
    finfo = torch.finfo(dtype)
    return finfo.min, finfo.max


def min_scaling_factor(dtype: torch.dtype = torch.float8_e4m3fn) -> float:
    """input_quant_fp8._FP8_MIN_SCALING_FACTOR: the smallest dynamic scale, 1 / (fp8_max * 512)."""
    return 1.0 / (fp8_min_max(dtype)[1] * 512.0)


def per_token_group_quant_fp8(
    x: torch.Tensor, group_size: int, dtype: torch.dtype = torch.float8_e4m3fn, eps: float = GROUP_QUANT_EPS
) -> tuple[torch.Tensor, torch.Tensor]:
    """Dynamic 1 x group_size quantization of activations [..., K] -> (x_q [..., K], x_s [..., ceil(K/group)] fp32).

    Mirrors fp8_utils.per_token_group_quant_fp8 with row-major scales and use_ue8m0=False, which is what the block
    kernels' `QuantFP8(static=False, group_shape=(1, 128), use_ue8m0=False)` runs: vLLM enables `+quant_fp8` for
    every model with block weights (config/vllm.py), so the fused kernel runs, not the torch-native fallback.
    Per group: absmax = max(|x|, eps); scale = absmax / fp8_max; x_q = clamp(x / scale, fp8_min, fp8_max) as fp8.
    The CUDA kernel (csrc/quantization/w8a8/fp8/per_token_group_quant.cu) divides exactly like this; vLLM's
    Triton fallback multiplies by 1/fp8_max instead, which can differ in the last bit of a scale.

    vLLM asserts K % group_size == 0; a ragged last group is quantized over its own columns here, as
    QuantFP8._quantize_group_native does by zero-padding (zeros never raise an absmax).
    """
    fp8_min, fp8_max = fp8_min_max(dtype)
    k = x.shape[-1]
    groups = -(-k // group_size)
    padded = torch.nn.functional.pad(x.float(), (0, groups * group_size - k))
    grouped = padded.reshape(*x.shape[:-1], groups, group_size)
    absmax = grouped.abs().amax(dim=-1, keepdim=True).clamp(min=eps)
    scale = absmax / fp8_max
    x_q = (grouped / scale).clamp(fp8_min, fp8_max).to(dtype)
    return x_q.reshape(padded.shape)[..., :k].contiguous(), scale.squeeze(-1)


def scaled_fp8_quant(
    x: torch.Tensor,
    scale: torch.Tensor | None = None,
    per_token: bool = False,
    dtype: torch.dtype = torch.float8_e4m3fn,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-tensor or per-token FP8 quantization of activations [M, K] -> (x_q, scale fp32).

    `scale` given: static quantization with the checkpoint's `input_scale` (0-d or [1]). Else dynamic: per tensor
    (scale [1]) or, with per_token, per row (scale [M, 1]); scale = max(amax / fp8_max, 1 / (fp8_max * 512)).
    Mirrors QuantFP8.forward_native (input_quant_fp8.py), which is what vLLM runs for the per-tensor and per-token
    W8A8 kernels: the default Inductor compilation turns custom ops off (`custom_ops=["none"]`) and only block
    models re-enable `quant_fp8`. Its CUDA twin, _custom_ops.scaled_fp8_quant (what --enforce-eager runs),
    computes the same scales except that dynamic per-tensor has no 1/(fp8_max*512) floor (common.cu) and
    per-token divides instead of multiplying by the reciprocal (one rounding apart).
    """
    fp8_min, fp8_max = fp8_min_max(dtype)
    x32 = x.float()
    if scale is None:
        amax = x32.abs().amax(dim=-1, keepdim=True) if per_token else x32.abs().amax().reshape(1)
        scale = (amax / fp8_max).clamp(min=min_scaling_factor(dtype))
    else:
        scale = scale.float().reshape(1)
    x_q = (x32 * scale.reciprocal()).clamp(fp8_min, fp8_max).to(dtype)
    return x_q, scale


def dequantize_groups(x_q: torch.Tensor, scale: torch.Tensor, group_shape: tuple[int, int]) -> torch.Tensor:
    """fp32 values of a [R, C] FP8 tensor whose scale covers group_shape tiles: [ceil(R/gr), ceil(C/gc)].

    One helper for 1 x 128 activation groups and 128 x 128 weight blocks alike; ragged edge tiles are cut to the
    tensor, as the fp32 upcast reference inside vLLM's w8a8_triton_block_scaled_mm (`repeat_interleave(...)[:N, :K]`)
    does.
    """
    rows, cols = x_q.shape
    gr, gc = group_shape
    expanded = scale.float().repeat_interleave(gr, dim=0)[:rows].repeat_interleave(gc, dim=1)[:, :cols]
    return x_q.float() * expanded
