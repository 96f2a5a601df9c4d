"""Benchmark: every numerics class of `fp8check load` on a GPU, against the fp32 reference and torch._scaled_mm.

For Llama-3-70B's four linear layers (TP=1) at a decode-sized and a prefill-sized M, each row runs one numerics
class of fp8check.kernels.numerics.gemm on synthetic weights quantized as checkpoints store them, compares it with the
fp32 reference `load` judges it by (same quantized activations, fully dequantized weight) and times the GEMM
alone (activations are quantized beforehand). Next to them, torch._scaled_mm on the same operands: tensorwise,
rowwise and blockwise (1x128 x 128x128, torch.nn.functional.scaled_mm) where the device accepts them.
Prints one Markdown table; exits 0 with a note when there is no CUDA/XPU device.

    python bench/gpu.py [--tokens 16 2048] [--layers qkv_proj o_proj ...] [--iters 20]
"""

from __future__ import annotations

import os
import sys

# bench/inspect.py shadows the stdlib's `inspect` (which torch imports) for scripts run from bench/.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import argparse
import time

# Llama-3-70B: hidden 8192, intermediate 28672, 64 heads and 8 KV heads of 128. name -> (N, K)
LLAMA_70B = {"qkv_proj": (10240, 8192), "o_proj": (8192, 8192), "gate_up_proj": (57344, 8192),
             "down_proj": (8192, 28672)}
BLOCK = (128, 128)


def gpu_device():
    """xpu, then cuda (load's `--device auto` order); None without either."""
    try:
        import torch
    except ImportError:
        return None
    if torch.xpu.is_available():
        return torch.device("xpu", 0)
    if torch.cuda.is_available():
        return torch.device("cuda", 0)
    return None


def timed_ms(fn, sync, iters: int) -> float:
    """Mean wall time of one call after a warm-up call (which also compiles Triton kernels)."""
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    sync()
    return (time.perf_counter() - start) / iters * 1e3


def rel_error(out, ref) -> float:
    return ((out.float() - ref).norm() / ref.norm()).item()


def quantized_weight(w, strategy: str):
    """(codes, fp32 scale, block) as a checkpoint stores them: synth's quantizer, on the CPU (callers move them)."""
    from fp8check.synth import quantize_fp8

    n, k = w.shape
    scale_shape = {"tensor": (), "channel": (n, 1), "block": (-(-n // BLOCK[0]), -(-k // BLOCK[1]))}[strategy]
    codes, scale = quantize_fp8(w, scale_shape, BLOCK)
    return codes, scale.float(), (BLOCK if strategy == "block" else None)


def scaled_mm_baseline(x_q, x_s, w_q, w_s, kind: str):
    """torch._scaled_mm as a user would call it directly on these operands (bf16 output)."""
    import torch
    import torch.nn.functional as F

    if kind == "tensorwise":
        return lambda: torch._scaled_mm(x_q, w_q.t(), scale_a=x_s.reshape(()), scale_b=w_s.reshape(()),
                                        out_dtype=torch.bfloat16)
    if kind == "rowwise":
        scale_a, scale_b = x_s.reshape(-1, 1).contiguous(), w_s.reshape(1, -1).contiguous()
        return lambda: torch._scaled_mm(x_q, w_q.t(), scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16)
    # 1x128 x 128x128, laid out as torch 2.13 checks it (_meta_registrations._check_scaled_mm_sizes_v2): scale_a
    # [M, K/128] with stride [1, M]; scale_b [L4, N/128] with stride [1, L4], L4 = K/128 rounded up to 4.
    k_blocks = x_s.shape[1]
    l4 = -(-k_blocks // 4) * 4
    scale_a = x_s.t().contiguous().t()
    padded = torch.zeros(w_s.shape[0], l4, dtype=torch.float32, device=w_s.device)
    padded[:, :k_blocks] = w_s
    scale_b = padded.t()
    return lambda: F.scaled_mm(x_q, w_q.t(), scale_a, F.ScalingType.BlockWise1x128, scale_b,
                               F.ScalingType.BlockWise128x128, output_dtype=torch.bfloat16)


def bench_layer(name: str, n: int, k: int, tokens: list[int], device, iters: int) -> list[tuple]:
    """Rows (layer, M, numerics, what ran, rel. error, bound, ms, TFLOP/s) for one layer; weights quantized once."""
    import torch

    from fp8check.kernels.numerics import gemm as numerics
    from fp8check.kernels.quant_keys import kFp8Dynamic128Sym, kFp8DynamicTokenSym, kFp8StaticTensorSym

    sync = torch.get_device_module(device).synchronize
    gen = torch.Generator().manual_seed(n * 31 + k)
    w = torch.randn(n, k, generator=gen) * 0.02
    xs = {m: torch.randn(m, k, generator=gen).to(device=device, dtype=torch.bfloat16) for m in tokens}
    rows = []

    def row(m: int, label: str, fn, ref, numerics_class: str, how: str = ""):
        bound = numerics.bound(numerics_class, torch.bfloat16)
        try:
            out = fn()
            sync()
        except (RuntimeError, NotImplementedError, ValueError) as exc:
            reason = (str(exc).splitlines() or [type(exc).__name__])[0][:90]
            rows.append((name, m, label, f"refused: {reason}", None, bound, None, None))
            return
        if isinstance(out, numerics.Execution):  # the numerics says what ran
            how = out.how + (" (emulated)" if out.emulation else "")
            out = out.output
        error = rel_error(out, ref)
        ms = timed_ms(fn, sync, iters)
        rows.append((name, m, label, how, error, bound, ms, 2 * m * n * k / (ms * 1e-3) / 1e12))

    # Unquantized: the activation-dtype linear.
    unquantized = numerics.LinearWeights(w.to(device=device, dtype=torch.bfloat16), None, None, None)
    for m, x in xs.items():
        row(m, "unquantized", lambda: numerics.run(numerics.UNQUANTIZED, unquantized, x, None, None),
            x.float() @ unquantized.weight.float().t(), numerics.UNQUANTIZED)
    del unquantized

    # Per-channel weights: weight-only (W8A16), and W8A8 with dynamic per-token activations next to
    # torch._scaled_mm rowwise on the same operands.
    codes, scale, _ = quantized_weight(w, "channel")
    channel = numerics.LinearWeights(codes.to(device), scale.to(device), None, None)
    w_ref = numerics.dequantize(channel.weight, channel.scale, None).t()
    for m, x in xs.items():
        row(m, "weight-only per-channel", lambda: numerics.run(numerics.WEIGHT_ONLY, channel, x, None, None),
            x.float() @ w_ref, numerics.WEIGHT_ONLY)
        x_q, x_s = numerics.quantize_activation(x, kFp8DynamicTokenSym, None)
        ref = numerics.dequantize_activation(x_q, x_s) @ w_ref
        row(m, "scaled-mm per-token x per-channel", lambda: numerics.run(numerics.SCALED_MM, channel, x, x_q, x_s),
            ref, numerics.SCALED_MM)
        row(m, "torch._scaled_mm rowwise", scaled_mm_baseline(x_q, x_s, channel.weight, channel.scale, "rowwise"),
            ref, numerics.SCALED_MM, "torch._scaled_mm rowwise")
    del channel, w_ref

    # Per-tensor weights x static per-tensor activations (input_scale calibrated on x), next to tensorwise.
    codes, scale, _ = quantized_weight(w, "tensor")
    tensor = numerics.LinearWeights(codes.to(device), scale.to(device), None, None)
    w_ref = numerics.dequantize(tensor.weight, tensor.scale, None).t()
    for m, x in xs.items():
        input_scale = (x.float().abs().amax() / 448.0).reshape(())
        x_q, x_s = numerics.quantize_activation(x, kFp8StaticTensorSym, input_scale)
        ref = numerics.dequantize_activation(x_q, x_s) @ w_ref
        static = tensor._replace(input_scale=input_scale)
        row(m, "scaled-mm static per-tensor", lambda: numerics.run(numerics.SCALED_MM, static, x, x_q, x_s), ref,
            numerics.SCALED_MM)
        row(m, "torch._scaled_mm tensorwise",
            scaled_mm_baseline(x_q, x_s, tensor.weight, tensor.scale, "tensorwise"), ref, numerics.SCALED_MM,
            "torch._scaled_mm tensorwise")
    del tensor, w_ref

    # Block W8A8: 128x128 weight blocks x 1x128 token groups, next to torch's blockwise scaled_mm.
    codes, scale, block = quantized_weight(w, "block")
    blocked = numerics.LinearWeights(codes.to(device), scale.to(device), block, None)
    w_ref = numerics.dequantize(blocked.weight, blocked.scale, block).t()
    for m, x in xs.items():
        x_q, x_s = numerics.quantize_activation(x, kFp8Dynamic128Sym, None)
        ref = numerics.dequantize_activation(x_q, x_s) @ w_ref
        row(m, "block 1x128 x 128x128", lambda: numerics.run(numerics.BLOCK, blocked, x, x_q, x_s), ref,
            numerics.BLOCK)
        row(m, "torch scaled_mm blockwise", scaled_mm_baseline(x_q, x_s, blocked.weight, blocked.scale, "blockwise"),
            ref, numerics.BLOCK, "F.scaled_mm BlockWise1x128 x BlockWise128x128")
    return sorted(rows, key=lambda r: r[1])  # by M, each M in the order above


def markdown(rows: list[tuple], device_name: str) -> str:
    lines = [f"GPU: {device_name}; bf16 activations and outputs; GEMM time only (activations quantized beforehand)",
             "", "| layer | M | numerics | what ran | rel. error | bound | ok | ms | TFLOP/s |",
             "|---|---:|---|---|---:|---:|---|---:|---:|"]
    for name, m, label, how, error, bound, ms, tflops in rows:
        if error is None:
            lines.append(f"| {name} | {m} | {label} | {how} | - | - | - | - | - |")
            continue
        ok = "yes" if error <= bound else "**NO**"
        lines.append(f"| {name} | {m} | {label} | {how} | {error:.2e} | {bound:.1e} | {ok} | {ms:.3f} | "
                     f"{tflops:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[16, 2048])
    parser.add_argument("--layers", nargs="+", default=list(LLAMA_70B), choices=list(LLAMA_70B))
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args(argv)

    device = gpu_device()
    if device is None:
        print("no CUDA/XPU device: nothing to measure (bench/gpu.py needs a GPU; tests/gpu holds the checks)")
        return 0
    import torch

    from fp8check.kernels.numerics import triton_fp8

    torch.set_float32_matmul_precision("highest")  # the fp32 reference must not run in TF32
    props = torch.get_device_module(device).get_device_properties(device)
    triton_note = triton_fp8.unavailable_reason(device) or "Triton block GEMM available"
    rows = []
    for name in args.layers:
        n, k = LLAMA_70B[name]
        rows += bench_layer(name, n, k, args.tokens, device, args.iters)
        torch.get_device_module(device).empty_cache()
    print(markdown(rows, f"{props.name} (torch {torch.__version__}; {triton_note})"))
    return 0 if all(r[4] is None or r[4] <= r[5] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
