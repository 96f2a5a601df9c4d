"""The arithmetic behind each vLLM FP8 kernel, runnable on any torch device, and the fp32 reference it is judged by.

vLLM's kernels fall into four numerics classes. Each class here does what its kernels do to the numbers: which
weights they hold after `process_weights_after_loading`, how activations are quantized, in which precision the
product accumulates and rounds. fp8check never runs vLLM's kernels themselves; every result says what ran
(`Execution.how`) and whether that is an emulation of the routed kernel.

torch is imported by `load` only (the inspect path never imports this module).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

# The numerics class names are torch-free (kernels/base.py: each kernel class names its own); load reads them
# here as numerics.BLOCK etc.
from fp8check.kernels.base import BLOCK, SCALED_MM, UNQUANTIZED, WEIGHT_ONLY
from fp8check.kernels.moe import MOE_EXPERTS_NUMERICS
from fp8check.kernels.mxfp8 import MX_W8A8, MX_WEIGHT_ONLY
from fp8check.kernels.numerics.fp8_math import dequantize_groups, per_token_group_quant_fp8, scaled_fp8_quant
from fp8check.kernels.numerics.triton_reason import quick_reason
from fp8check.kernels.quant_keys import QuantKey


def moe_numerics(experts: str, block: tuple[int, int] | None) -> str:
    """The numerics class an experts class runs FP8 weights with (block weights: BLOCK, else SCALED_MM)."""
    if MOE_EXPERTS_NUMERICS[experts] == WEIGHT_ONLY:
        return WEIGHT_ONLY
    return BLOCK if block else SCALED_MM


# Relative Frobenius error allowed between a numerics class and the fp32 reference computed from the same
# quantized operands, in units of the output dtype's unit roundoff u (bf16 2^-8, fp16 2^-11, fp32 2^-24).
# Accumulation is fp32 in every class, so what remains is rounding: the output's (<= u per element) and, for
# weight-only, the dequantized weight's own rounding into the activation dtype (another u). Measured on random
# and compressed-tensors checkpoints: block / scaled-mm ~0.6 u, weight-only ~1.1 u (see docs/commands.md, "`fp8check load MODEL`").
BOUND_IN_ROUNDOFFS = {BLOCK: 2.0, SCALED_MM: 2.0, WEIGHT_ONLY: 4.0, UNQUANTIZED: 4.0, MX_W8A8: 2.0, MX_WEIGHT_ONLY: 4.0}
_THREADS = 2  # the table lookup is memory-bound: two threads gain ~1.6x, more gain nothing on a 2-core host
UNIT_ROUNDOFF = {torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11, torch.float32: 2.0 ** -24}


class LinearWeights(NamedTuple):
    """One module's weights as the routed kernel holds them after vLLM's process_weights_after_loading."""

    weight: torch.Tensor                 # [N, K]: FP8, or the activation dtype when unquantized
    scale: torch.Tensor | None           # fp32: [] per tensor, [N, 1] per channel, [ceil(N/bn), ceil(K/bk)] block
    block: tuple[int, int] | None
    input_scale: torch.Tensor | None     # fp32 [] for static activations


class Execution(NamedTuple):
    output: torch.Tensor
    how: str                             # what actually ran: "torch._scaled_mm rowwise", "fp32 per-K-block GEMM", ...
    emulation: bool                      # True when an fp32 emulation stood in for a device GEMM
    also: torch.Tensor | None = None     # run(also=rows): rows @ dequantized weight^T, from the same pass
    exact: torch.Tensor | None = None    # an fp32 emulation's output before rounding (the product of its operands)


def bound(numerics: str, out_dtype: torch.dtype) -> float:
    return BOUND_IN_ROUNDOFFS[numerics] * UNIT_ROUNDOFF[out_dtype]


def to_float(weight: torch.Tensor) -> torch.Tensor:
    """An FP8 tensor's values in fp32 through a 256-entry table: the same numbers as `.float()` (every code maps to
    its value, NaN codes to NaN), ~4x faster on the CPU; numpy's table lookup releases the GIL, so the halves run
    on two threads. For the dtypes and paths fp32_products' float16 route does not cover (fnuz, e5m2, MXFP8,
    weight-only dequantization)."""
    if weight.device.type != "cpu" or weight.element_size() != 1:
        return weight.float()
    table = torch.arange(256, dtype=torch.uint8).view(weight.dtype).float().numpy()
    codes = weight.contiguous().view(torch.uint8).numpy().reshape(-1)
    out = np.empty(codes.shape, dtype=np.float32)
    parts = [slice(i * len(codes) // _THREADS, (i + 1) * len(codes) // _THREADS) for i in range(_THREADS)]
    list(_pool().map(lambda part: np.take(table, codes[part], out=out[part]), parts))
    return torch.from_numpy(out).reshape(weight.shape)


@lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(_THREADS, thread_name_prefix="fp8check-lut")


# fp32 rows of the weight converted at a time by fp32_products: small enough to stay in the CPU's cache between the
# conversion and the product, large enough that a chunk's few calls cost little next to its arithmetic.
_CHUNK_BYTES = 4 << 20
# e4m3fn's sign-extended byte shifted left by 7, with bit 14 (the sign's copy) cleared, is a float16 of the same
# code: exponent and mantissa fields fall into place (subnormals too), and the value is 2^-8 of the code's.
_E4M3_AS_FP16_MASK = -16385  # 0xBFFF as int16
_E4M3_AS_FP16_FACTOR = 256.0


def _values(codes: torch.Tensor, out: torch.Tensor, bits: torch.Tensor | None) -> None:
    """Rows of a weight (FP8 codes or float) as fp32 into `out`. With `bits` (int16 scratch, at least out's size):
    e4m3fn on the CPU through float16 (two integer ops and a hardware conversion, ~4x the table's speed), values
    2^-8 of the codes' (_E4M3_AS_FP16_FACTOR); NaN codes land on 480 there, so value checks must not rely on this.
    Other FP8 dtypes go through the table."""
    if bits is not None:
        bits = bits[:codes.numel()].view(codes.shape)
        bits.copy_(codes.view(torch.int8))  # sign-extended
        bits.bitwise_left_shift_(7).bitwise_and_(_E4M3_AS_FP16_MASK)
        out.copy_(bits.view(torch.float16))
    else:
        out.copy_(to_float(codes) if codes.element_size() == 1 else codes)


def fp32_products(rows: torch.Tensor, weight: torch.Tensor, scale: torch.Tensor | None,
                  block: tuple[int, int] | None) -> torch.Tensor:
    """rows [R, K] (fp32) @ (weight x scale)^T in fp32, the weight converted a cache-sized chunk of rows at a time:
    no fp32 copy of the weight is ever made, and each FP8 byte is read and converted once for every row. The
    chunk's scratch tensors are allocated once per call, not per chunk (a fresh block of a few MB is mapped and
    page-faulted anew by the allocator every time).

    A block scale dequantizes the chunk where it lies in the cache (code x scale, the fp32 values dequantize()
    gives, 2^-8 of them on the float16 route); a channel or tensor scale multiplies the products. Each chunk's
    product is taken as chunk @ rows^T, the weight as the tall operand: the CPU's GEMM runs these few-row products
    ~2x faster that way round than as rows @ chunk^T into a column slice. Exact arithmetic is that of dequantize()
    then one GEMM; fp32 rounding differs only by reassociation."""
    n, k = weight.shape
    products = torch.empty(n, rows.shape[0], dtype=torch.float32, device=rows.device)  # transposed: [N, R]
    bn = block[0] if block is not None else 1
    step = max(bn, _CHUNK_BYTES // (4 * max(k, 1)) // bn * bn)  # a chunk starts on a block row's boundary
    buffer = torch.empty(min(step, n) * k, dtype=torch.float32, device=rows.device)
    bits = (torch.empty(buffer.numel(), dtype=torch.int16) if weight.dtype == torch.float8_e4m3fn
            and weight.device.type == "cpu" else None)
    factor = 1.0 if bits is None else _E4M3_AS_FP16_FACTOR  # what the converted values must be multiplied by
    columns = rows.t()
    for start in range(0, n, step):
        stop = min(n, start + step)
        values = buffer[:(stop - start) * k].view(stop - start, k)
        _values(weight[start:stop], values, bits)
        if block is not None and scale is not None:
            scale_codes_(values, scale[start // bn:-(-stop // bn)], block)
        torch.mm(values, columns, out=products[start:stop])
    if factor != 1.0:  # the float16 route's 2^-8 undone on the products, not on the scales (an E8M0 scale of 2^120
        products.mul_(factor)  # or more times 256 overflows fp32)
    if block is None:  # a channel or tensor scale: one per weight row, the products' rows
        scale_codes_(products, scale, None)
    return products.t().contiguous()


def dequantize(weight: torch.Tensor, scale: torch.Tensor | None, block: tuple[int, int] | None) -> torch.Tensor:
    """fp32 weight = FP8 code x scale, as compressed-tensors and vLLM define it (weight_scale_inv included).
    Scales: [] or [1] per tensor, [N, 1] per channel, [ceil(N/bn), ceil(K/bk)] per block (ragged edges cut)."""
    return scale_codes_(to_float(weight), scale, block)


def scale_codes_(codes: torch.Tensor, scale: torch.Tensor | None, block: tuple[int, int] | None) -> torch.Tensor:
    """Multiply fp32 codes by their scales in place (one fp32 copy of the weight at most, ragged blocks too). A
    block scale may cover more than the weight (an MoE's scales upsampled to a smaller block): the rest is unused."""
    if scale is None:
        return codes
    if block is None:
        return codes.mul_(scale.float().reshape(-1, 1) if scale.numel() > 1 else scale.float().reshape(()))
    bn, bk = block
    n, k = codes.shape
    scale = scale[:-(-n // bn), :-(-k // bk)]
    if n % bn == 0 and k % bk == 0:  # one broadcast multiply over [N/bn, bn, K/bk, bk]
        codes.view(n // bn, bn, k // bk, bk).mul_(scale.float()[:, None, :, None])
        return codes
    for i in range(scale.shape[0]):  # ragged: one [bn, K] slab at a time
        codes[i * bn:(i + 1) * bn].mul_(scale[i].float().repeat_interleave(bk)[:k])
    return codes


def quantize_activation(x: torch.Tensor, key: QuantKey, input_scale: torch.Tensor | None
                        ) -> tuple[torch.Tensor, torch.Tensor]:
    """Activations quantized as the scheme's activation key says (vLLM's QuantFP8 / per_token_group_quant_fp8)."""
    if key.scale_dtype == "uint8":  # MXFP8: 1 x 32 groups, power-of-two scales (their fp32 values returned)
        from fp8check.kernels.numerics.mxfp8 import decode_e8m0, mx_quantize

        values, exponents = mx_quantize(x)
        return values, decode_e8m0(exponents)
    if key.static:
        return scaled_fp8_quant(x, scale=input_scale)
    if key.is_per_group and key.group_shape[1] > 1:
        return per_token_group_quant_fp8(x, key.group_shape[1])
    return scaled_fp8_quant(x, per_token=not key.is_per_tensor)


def dequantize_activation(x_q: torch.Tensor, x_s: torch.Tensor) -> torch.Tensor:
    """fp32 activations from codes and scales ([1] per tensor, [M, 1] per token, [M, K/g] per token group)."""
    m, k = x_q.shape
    rows, groups = (1, 1) if x_s.numel() == 1 else (m, x_s.shape[-1])
    return dequantize_groups(x_q, x_s.reshape(rows, groups), (-(-m // rows), -(-k // groups)))


def run(numerics: str, w: LinearWeights, x: torch.Tensor, x_q: torch.Tensor | None, x_s: torch.Tensor | None,
        also: torch.Tensor | None = None) -> Execution:
    """The routed kernel's arithmetic on x's device; output in x's dtype (vLLM's output dtype is the model's).
    `also` (fp32 rows): when the arithmetic is an fp32 pass over the weight anyway (block emulation), those rows
    ride along in the same pass and come back in Execution.also, fp32 and unrounded (the reference products cost
    no second pass); elsewhere Execution.also is None."""
    if numerics == UNQUANTIZED:
        return Execution(F.linear(x, w.weight.to(x.dtype)), f"{_name(x.dtype)} matmul", False)
    if numerics in (WEIGHT_ONLY, MX_WEIGHT_ONLY):
        dequantized = dequantize(w.weight, w.scale, w.block).to(x.dtype)
        return Execution(F.linear(x, dequantized), f"dequantize to {_name(x.dtype)} + {_name(x.dtype)} matmul", False)
    if x_q is None or x_s is None or w.scale is None:
        raise ValueError(f"{numerics} multiplies quantized activations (x_q, x_s) by a scaled FP8 weight")
    if numerics == MX_W8A8:  # no device MXFP8 GEMM is run: both operands' 1 x 32 groups, products in fp32
        out = fp32_products(dequantize_activation(x_q, x_s), w.weight, w.scale, w.block)
        return Execution(out.to(x.dtype), "fp32 GEMM of MX-quantized operands (1 x 32 E8M0 groups)", True)
    if numerics == SCALED_MM:
        return _scaled_mm(w.weight, w.scale, x_q, x_s, x.dtype)
    if w.block is None:
        raise ValueError(f"{numerics} multiplies by a block-scaled weight; this one has no block")
    return _block_scaled_mm(w.weight, w.scale, w.block, x_q, x_s, x.dtype, also)


def _scaled_mm(weight: torch.Tensor, scale: torch.Tensor, x_q: torch.Tensor, x_s: torch.Tensor,
               out_dtype: torch.dtype) -> Execution:
    """torch._scaled_mm, tensorwise when both scales are scalars, else rowwise ([M, 1] x [1, N]), as vLLM's
    torch kernels call it; an fp32 emulation (said so) where the device refuses it."""
    m, n = x_q.shape[0], weight.shape[0]
    tensorwise = x_s.numel() == 1 and scale.numel() == 1
    scale_a = x_s.float().reshape(()) if tensorwise else x_s.float().reshape(-1, 1).expand(m, 1).contiguous()
    scale_b = scale.float().reshape(()) if tensorwise else scale.float().reshape(1, -1).expand(1, n).contiguous()
    recipe = "tensorwise" if tensorwise else "rowwise"
    try:
        out = torch._scaled_mm(x_q, weight.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=out_dtype)
        return Execution(out, f"torch._scaled_mm {recipe}", False)
    except (RuntimeError, NotImplementedError, ValueError) as exc:
        out = (fp32_products(x_q.float(), weight, scale, None) * scale_a).to(out_dtype)
        reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        return Execution(out, f"fp32 scaled GEMM ({recipe}; torch._scaled_mm refused: {reason})", True)


def _block_scaled_mm(weight: torch.Tensor, scale: torch.Tensor, block: tuple[int, int], x_q: torch.Tensor,
                     x_s: torch.Tensor, out_dtype: torch.dtype, also: torch.Tensor | None) -> Execution:
    """vLLM's w8a8_triton_block_scaled_mm through fp8check's Triton port where Triton runs on this device, else its
    arithmetic in fp32 torch: the activations dequantized with their group scales, the weight with its block scales
    (a cache-sized chunk at a time), products accumulated in fp32, rounded once to the output dtype. The unrounded
    fp32 output comes back as Execution.exact: the fp32 product of the kernel's own quantized operands."""
    if triton_unavailable(x_q.device) is None:
        from fp8check.kernels.numerics import triton_fp8

        out = triton_fp8.w8a8_block_matmul(x_q, x_s, weight, scale, block, out_dtype)
        interpreted = ", interpreted (TRITON_INTERPRET=1)" if triton_fp8.interpreted() else ""
        return Execution(out, f"Triton block GEMM{interpreted}, vLLM's w8a8_triton_block_scaled_mm", False)
    m = x_q.shape[0]
    rows = dequantize_activation(x_q, x_s)
    out = fp32_products(rows if also is None else torch.cat([rows, also]), weight, scale, block)
    return Execution(out[:m].to(out_dtype), "fp32 per-K-block GEMM", True, out[m:] if also is not None else None,
                     out[:m])


def triton_unavailable(device: torch.device) -> str | None:
    """triton_fp8.unavailable_reason, without importing triton where the answer does not need it (triton_reason)."""
    reason = quick_reason(device.type)
    if reason is not None:
        return reason
    from fp8check.kernels.numerics import triton_fp8

    return triton_fp8.unavailable_reason(device)


def _name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")
