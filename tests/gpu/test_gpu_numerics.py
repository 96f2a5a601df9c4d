"""On a GPU: every numerics class of `load`, and the Triton block GEMM port compiled for the device, against the
fp32 reference. Skipped without a CUDA or XPU device (bench/gpu.py times the same classes at Llama-70B sizes).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fp8check.kernels.numerics import gemm as numerics  # noqa: E402  (needs torch)
from fp8check.kernels.numerics.fp8_math import dequantize_groups, per_token_group_quant_fp8  # noqa: E402
from fp8check.kernels.quant_keys import kFp8Dynamic128Sym, kFp8DynamicTokenSym, kFp8StaticTensorSym  # noqa: E402
from fp8check.synth import quantize_fp8  # noqa: E402


def gpu_device():
    """xpu, then cuda: load's `--device auto` order."""
    if torch.xpu.is_available():
        return torch.device("xpu", 0)
    if torch.cuda.is_available():
        return torch.device("cuda", 0)
    return None


DEVICE = gpu_device()
pytestmark = pytest.mark.skipif(DEVICE is None, reason="no CUDA/XPU device")

# Hopper's FP8 MMA keeps ~14 bits while it sums inside one K block (DeepSeek-V3 report, §3.3.2); vLLM's kernel
# promotes to fp32 after every block of 128, so an fp32 output is within ~1e-4 of the reference, not 1e-7.
FP32_OUTPUT_BOUND = 2.0 ** -10


@pytest.fixture(autouse=True, scope="module")
def exact_fp32_reference():
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")  # the reference must not run in TF32
    yield
    torch.set_float32_matmul_precision(previous)


def rel_error(out, ref) -> float:
    return ((out.float() - ref).norm() / ref.norm()).item()


def quantized(w, scale_shape, block=(128, 128)):
    """Codes and fp32 scale as a checkpoint stores them (synth's quantizer, on the CPU), moved to the device."""
    codes, scale = quantize_fp8(w, scale_shape, block)
    return codes.to(DEVICE), scale.float().to(DEVICE)


def device_has_scaled_mm() -> bool:
    """torch._scaled_mm runs on CUDA from sm89; on XPU it depends on the torch build (load says when it emulates)."""
    return DEVICE.type == "cuda" and torch.cuda.get_device_capability(DEVICE) >= (8, 9)


@pytest.fixture(scope="module")
def triton_fp8():
    """The port, compiled for the device; skipped (with Triton's own reason) where it cannot run there."""
    from fp8check.kernels.numerics import triton_fp8

    reason = triton_fp8.unavailable_reason(DEVICE)
    if reason is not None:
        pytest.skip(reason)
    return triton_fp8


@pytest.mark.parametrize("m,n,k,block", [(16, 512, 1024, (128, 128)), (33, 704, 1000, (128, 128)),
                                         (64, 384, 1024, (64, 128)), (7, 640, 512, (128, 64))])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
def test_triton_block_gemm_on_device(triton_fp8, m, n, k, block, out_dtype):
    gen = torch.Generator().manual_seed(m * n + k)
    w = torch.randn(n, k, generator=gen) * 0.02
    b_q, b_s = quantized(w, (-(-n // block[0]), -(-k // block[1])), block)
    x = torch.randn(m, k, generator=gen).to(DEVICE, torch.bfloat16)
    a_q, a_s = per_token_group_quant_fp8(x, block[1])
    out = triton_fp8.w8a8_block_matmul(a_q, a_s, b_q, b_s, block, out_dtype)
    ref = dequantize_groups(a_q, a_s, (1, block[1])) @ numerics.dequantize(b_q, b_s, block).t()
    assert out.dtype == out_dtype and out.device == DEVICE and not triton_fp8.interpreted()
    limit = FP32_OUTPUT_BOUND if out_dtype == torch.float32 else numerics.bound(numerics.BLOCK, out_dtype)
    assert rel_error(out, ref) <= limit


CLASSES = ["unquantized", "weight-only", "scaled-mm per-token", "scaled-mm static per-tensor", "block"]


@pytest.mark.parametrize("case", CLASSES)
def test_every_numerics_class_passes_on_device(case):
    m, n, k = 33, 704, 1024
    gen = torch.Generator().manual_seed(7)
    w = torch.randn(n, k, generator=gen) * 0.02
    x = torch.randn(m, k, generator=gen).to(DEVICE, torch.bfloat16)
    x_q = x_s = None
    if case == "unquantized":
        cls, weights = numerics.UNQUANTIZED, numerics.LinearWeights(w.to(DEVICE, torch.bfloat16), None, None, None)
        ref = x.float() @ weights.weight.float().t()
    elif case == "weight-only":
        cls, weights = numerics.WEIGHT_ONLY, numerics.LinearWeights(*quantized(w, (n, 1)), None, None)
        ref = x.float() @ numerics.dequantize(weights.weight, weights.scale, None).t()
    else:
        if case == "block":
            block, scale_shape, key, input_scale = (128, 128), (-(-n // 128), k // 128), kFp8Dynamic128Sym, None
        elif case == "scaled-mm per-token":
            block, scale_shape, key, input_scale = None, (n, 1), kFp8DynamicTokenSym, None
        else:
            block, scale_shape, key = None, (), kFp8StaticTensorSym
            input_scale = (x.float().abs().amax() / 448.0).reshape(())
        cls = numerics.BLOCK if block else numerics.SCALED_MM
        weights = numerics.LinearWeights(*quantized(w, scale_shape), block, input_scale)
        x_q, x_s = numerics.quantize_activation(x, key, input_scale)
        ref = numerics.dequantize_activation(x_q, x_s) @ numerics.dequantize(weights.weight, weights.scale, block).t()
    execution = numerics.run(cls, weights, x, x_q, x_s)
    assert execution.output.device == DEVICE and execution.output.dtype == torch.bfloat16
    assert rel_error(execution.output, ref) <= numerics.bound(cls, torch.bfloat16), execution.how
    if cls == numerics.SCALED_MM and device_has_scaled_mm():
        assert not execution.emulation, execution.how
    if cls == numerics.BLOCK:
        from fp8check.kernels.numerics import triton_fp8

        assert execution.emulation == (triton_fp8.unavailable_reason(DEVICE) is not None), execution.how
