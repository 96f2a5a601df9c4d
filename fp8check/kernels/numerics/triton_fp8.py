"""vLLM's Triton block-scaled FP8 GEMM, ported: the arithmetic of TritonFp8BlockScaledMMKernel.

Source: vllm/model_executor/layers/quantization/utils/fp8_utils.py, vLLM 0.28.0: the kernel
`_w8a8_triton_block_scaled_mm` and its launcher `w8a8_triton_block_scaled_mm` (called `w8a8_block_fp8_matmul` in
older releases); scaled_mm/triton.py's TritonFp8BlockScaledMMKernel calls it on CUDA, ROCm and XPU.

triton is an optional extra (`pip install 'fp8check[triton]'`). This is the one module that imports it, and only
`load` imports this module. Whether kernels run compiled or in Triton's CPU interpreter is fixed when the kernel is
decorated, i.e. when this module is first imported: TRITON_INTERPRET=1 must be set before that. The interpreter
upcasts and multiplies FP8 correctly but downcasts to FP8 wrongly (../shared/formats.md §4), so activations are
quantized with torch (fp8_math) and only the GEMM is Triton.
"""

from __future__ import annotations

import torch

try:
    import triton
    import triton.language as tl
except ImportError:
    triton = None

from fp8check.kernels.numerics.triton_reason import CPU_NEEDS_INTERPRETER, INSTALL_HINT

# Triton's backend for each torch device kind (the folder names under triton/backends; Intel's XPU backend ships
# in the pytorch-triton-xpu wheel).
_BACKEND_FOR_DEVICE = {"cuda": "nvidia", "rocm": "amd", "xpu": "intel"}


def _jit(fn):
    """triton.jit when triton is installed; without it the kernel stays a plain function nobody calls."""
    return triton.jit(fn) if triton is not None else fn


@_jit
def _w8a8_triton_block_scaled_mm(
    A, B, C, As, Bs,
    M, N, K,
    group_n, group_k,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    stride_As_m, stride_As_k, stride_Bs_k, stride_Bs_n,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
):
    """C = A @ B^T with A [M, K] scaled per 1 x group_k group (As [M, ceil(K/group_k)]) and B [N, K] scaled per
    group_n x group_k block (Bs [ceil(N/group_n), ceil(K/group_k)]), line for line as vLLM's kernel.

    Each K step multiplies the FP8 tiles in fp32 (tl.dot) and applies both scales to that partial product before
    accumulating, so every BLOCK_SIZE_K slice must lie in one scale group: the launcher sets BLOCK_SIZE_K = group_k.
    Ragged edges: rows/columns past M/N wrap (`% M`, `% N`) and are never stored; K past the end loads as 0.
    """
    # Grouped ordering of output tiles (GROUP_SIZE_M tile rows share B tiles in cache).
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (pid % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = A + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = B + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    As_ptrs = As + offs_am * stride_As_m
    offs_bsn = offs_bn // group_n
    Bs_ptrs = Bs + offs_bsn * stride_Bs_n

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)

        k_start = k * BLOCK_SIZE_K
        offs_ks = k_start // group_k
        a_s = tl.load(As_ptrs + offs_ks * stride_As_k)
        b_s = tl.load(Bs_ptrs + offs_ks * stride_Bs_k)

        accumulator += tl.dot(a, b) * a_s[:, None] * b_s[None, :]
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk

    if C.dtype.element_ty == tl.bfloat16:
        c = accumulator.to(tl.bfloat16)
    elif C.dtype.element_ty == tl.float16:
        c = accumulator.to(tl.float16)
    else:
        c = accumulator.to(tl.float32)

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = C + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def _interpreted_parts() -> tuple[bool, bool]:
    """(this kernel, Triton's own library such as tl.cdiv) decorated under TRITON_INTERPRET=1: each is fixed when
    its module is imported, so setting the variable after `import triton` interprets only the first."""
    from triton.runtime.interpreter import InterpretedFunction

    return isinstance(_w8a8_triton_block_scaled_mm, InterpretedFunction), isinstance(tl.cdiv, InterpretedFunction)


def interpreted() -> bool:
    """True when the GEMM runs in Triton's CPU interpreter (slowly: tests only)."""
    return triton is not None and all(_interpreted_parts())


def unavailable_reason(device: torch.device) -> str | None:
    """None when this GEMM can run on `device`; otherwise one line saying why not (shown in load's rows)."""
    if triton is None:
        return INSTALL_HINT
    if len(set(_interpreted_parts())) == 2:
        return "TRITON_INTERPRET=1 was set after triton was imported: set it before, or not at all"
    if device.type == "cpu":
        if interpreted():
            return None
        return CPU_NEEDS_INTERPRETER
    if interpreted():
        return f"TRITON_INTERPRET=1 is set: Triton would interpret on the CPU, not run on {device}"
    kind = "rocm" if device.type == "cuda" and torch.version.hip else device.type
    backend = _BACKEND_FOR_DEVICE.get(kind)
    if backend is None:
        return f"Triton has no backend for {device.type} devices"
    from triton.backends import backends

    if backend not in backends:
        return f"this triton ({triton.__version__}) has no {backend} backend for {kind} devices"
    if kind == "cuda":
        major, minor = torch.cuda.get_device_capability(device)
        if (major, minor) < (8, 9):
            # vLLM selects this kernel below sm89 and then fails in Triton's compiler (vllm#39610).
            return f"Triton's fp8e4nv needs compute capability 8.9+, this GPU is sm{major}{minor}"
    return None


def _upcast_e8m0_to_fp32(scale: torch.Tensor) -> torch.Tensor:
    """fp8_utils._upcast_e8m0_to_fp32: an E8M0 byte is a float32 exponent field (bias 127, no mantissa)."""
    return (scale.view(torch.uint8).to(torch.int32) << 23).view(torch.float32)


def w8a8_block_matmul(
    a_q: torch.Tensor,
    a_s: torch.Tensor,
    b_q: torch.Tensor,
    b_s: torch.Tensor,
    block_size: tuple[int, int],
    out_dtype: torch.dtype,
) -> torch.Tensor:
    """a_q [M, K] fp8 x b_q [N, K] fp8 -> [M, N] out_dtype, as vLLM's w8a8_triton_block_scaled_mm (default config).

    a_s [M, ceil(K/bk)] fp32 (1 x bk token groups), b_s [ceil(N/bn), ceil(K/bk)] fp32 or E8M0 weight blocks,
    block_size = (bn, bk). vLLM upcasts E8M0 scales on ROCm and XPU only (Triton cannot bind them); CUDA never
    routes E8M0 here. vLLM's tuned per-GPU configs (utils/configs/*.json, which fp8check does not ship) change the
    tiling; ~100 of 0.28's ~3,500 tuned entries also set BLOCK_SIZE_K = 64 for 128-wide groups, which sums each
    group in two fp32-promoted halves: the same math, rounded slightly differently. vLLM's gfx1250 detour (an fp32
    torch matmul instead of Triton) is not taken.
    """
    if triton is None:
        raise RuntimeError(INSTALL_HINT)
    block_n, block_k = block_size
    if a_s.dtype == torch.float8_e8m0fnu:
        a_s = _upcast_e8m0_to_fp32(a_s)
    if b_s.dtype == torch.float8_e8m0fnu:
        b_s = _upcast_e8m0_to_fp32(b_s)

    # vLLM's launcher asserts these; a failure here is a bug in the caller, not in the checkpoint.
    assert a_q.ndim == 2 and b_q.ndim == 2 and a_q.shape[-1] == b_q.shape[-1]
    assert a_q.is_contiguous() and a_s.shape == (a_q.shape[0], triton.cdiv(a_q.shape[-1], block_k))
    m, k = a_q.shape
    n = b_q.shape[0]
    assert b_s.shape == (triton.cdiv(n, block_n), triton.cdiv(k, block_k))

    # Compiled Triton rounds the fp32 accumulator to bf16/fp16 to nearest even; the interpreter truncates fp32 ->
    # bf16 (triton 3.9 interpreter.cast_impl passes no rounding mode). Interpreted, store fp32 and let torch round.
    kernel_dtype = torch.float32 if interpreted() else out_dtype
    c = a_q.new_empty((m, n), dtype=kernel_dtype)
    # vLLM's default config when no tuned file exists for the GPU (fp8_utils.w8a8_triton_block_scaled_mm).
    config = {
        "BLOCK_SIZE_M": 64,
        "BLOCK_SIZE_N": block_n,
        "BLOCK_SIZE_K": block_k,
        "GROUP_SIZE_M": 32,
        "num_warps": 4,
        "num_stages": 2,
    }

    def grid(meta):
        return (triton.cdiv(m, meta["BLOCK_SIZE_M"]) * triton.cdiv(n, meta["BLOCK_SIZE_N"]),)

    _w8a8_triton_block_scaled_mm[grid](
        a_q, b_q, c, a_s, b_s,
        m, n, k,
        block_n, block_k,
        a_q.stride(-2), a_q.stride(-1),
        b_q.stride(1), b_q.stride(0),
        c.stride(-2), c.stride(-1),
        a_s.stride(-2), a_s.stride(-1),
        b_s.stride(1), b_s.stride(0),
        **config,
    )
    return c.to(out_dtype)
