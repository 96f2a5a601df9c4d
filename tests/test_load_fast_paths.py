"""load's fast paths give the answers of the plain computations they replace: the chunked fp32 products (no fp32
copy of the weight, e4m3fn through float16, each chunk dequantized in the cache), the value checks' maxima, the
mapped reads of CheckpointFiles, and the Triton reason known without importing triton."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import CheckpointFileError
from fp8check.core.load.weights import CheckpointFiles, float_problems, fp8_code_problems
from fp8check.core.model.sharding import TensorRead
from fp8check.kernels.numerics import gemm as numerics

FP8 = (torch.float8_e4m3fn, torch.float8_e5m2, torch.float8_e4m3fnuz)


def _weights(shape, dtype, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=generator) * 0.3).to(dtype)


@pytest.mark.parametrize("dtype", FP8)
@pytest.mark.parametrize("n,k,block", [(300, 260, (128, 128)), (256, 256, (128, 128)), (1100, 640, (128, 128)),
                                       (70, 96, (1, 32)), (130, 200, (64, 64)), (100, 64, None)])
@pytest.mark.parametrize("chunk", [1 << 12, 1 << 22])
def test_fp32_products_match_a_dequantized_gemm(monkeypatch, dtype, n, k, block, chunk):
    """Ragged N and K blocks, block rows crossing chunk boundaries (a small chunk), channel scales, MX groups."""
    monkeypatch.setattr(numerics, "_CHUNK_BYTES", chunk)
    w = _weights((n, k), dtype)
    if block is None:
        scale = torch.rand(n, 1, generator=torch.Generator().manual_seed(1)) + 0.5
    else:
        scale = torch.rand(-(-n // block[0]), -(-k // block[1]), generator=torch.Generator().manual_seed(1)) + 0.5
    rows = torch.randn(9, k, generator=torch.Generator().manual_seed(2))
    expected = rows.double() @ numerics.dequantize(w, scale, block).double().t()
    got = numerics.fp32_products(rows, w, scale, block)
    assert got.dtype == torch.float32 and got.shape == (9, n)
    assert float((got.double() - expected).norm() / expected.norm()) < 1e-6


@pytest.mark.parametrize("chunk", [1 << 12, 1 << 22])
def test_fp32_products_ignore_scale_blocks_past_the_weight(monkeypatch, chunk):
    """An MoE's w2 scales upsampled to 64 x 64 blocks keep the padded intermediate's last block column (K 192: 3
    blocks used of 4): the extra scales are not the weight's and must not be applied (nor refuse the product)."""
    monkeypatch.setattr(numerics, "_CHUNK_BYTES", chunk)
    w = _weights((512, 192), torch.float8_e4m3fn)
    scale = torch.rand(8, 4, generator=torch.Generator().manual_seed(4)) + 0.5
    rows = torch.randn(6, 192, generator=torch.Generator().manual_seed(5))
    spread = scale.repeat_interleave(64, 0).repeat_interleave(64, 1)[:, :192]
    expected = rows.double() @ (w.double() * spread.double()).t()
    got = numerics.fp32_products(rows, w, scale, (64, 64))
    assert float((got.double() - expected).norm() / expected.norm()) < 1e-6
    assert torch.equal(numerics.dequantize(w, scale, (64, 64)), w.float() * spread)


@pytest.mark.parametrize("block", [(1, 32), (128, 128)])
def test_fp32_products_take_the_largest_e8m0_scales(block):
    """E8M0 scales up to 2^127 are valid (only 0xFF is NaN): the float16 route's factor of 256 must not meet them
    before the product (2^127 x 256 is inf in fp32, and a zero code times inf is NaN)."""
    w = torch.zeros(128, 128, dtype=torch.float8_e4m3fn)
    w[0, 0], w[1, 1], w[2, 40] = 1.0, 0.5, -0.25
    scale = torch.full((128 // block[0], 128 // block[1]), 2.0 ** 127)
    rows = torch.zeros(2, 128)
    rows[0, 0], rows[0, 1], rows[1, 40] = 2.0 ** -120, 2.0 ** -121, 2.0 ** -122
    got = numerics.fp32_products(rows, w, scale, block)
    expected = rows.double() @ numerics.dequantize(w, scale, block).double().t()
    assert torch.isfinite(got).all()
    assert torch.equal(got.double(), expected)


@pytest.mark.parametrize("dtype", (*FP8, torch.bfloat16, torch.float16))
def test_fp32_products_per_tensor_and_unscaled(dtype):
    w = _weights((257, 130), dtype)
    rows = torch.randn(5, 130, generator=torch.Generator().manual_seed(3))
    scale = None if dtype in (torch.bfloat16, torch.float16) else torch.tensor(0.37)
    expected = rows.double() @ (w.double() * (1.0 if scale is None else 0.37)).t()
    got = numerics.fp32_products(rows, w, scale, None)
    assert float((got.double() - expected).norm() / expected.norm()) < 1e-6


def test_every_e4m3fn_code_converts_exactly():
    """The float16 route: each finite code's value x 2^-8 (NaN codes land on 480, which the value checks catch)."""
    codes = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn).reshape(1, 256)
    out = torch.empty(1, 256)
    numerics._values(codes, out, torch.empty(256, dtype=torch.int16))
    finite = torch.isfinite(codes.float())
    assert torch.equal((out * numerics._E4M3_AS_FP16_FACTOR)[finite], codes.float()[finite])


def _slow_code_problems(weight: torch.Tensor) -> tuple[int, bool]:
    raw = weight.view(torch.uint8).numpy().reshape(-1)
    special = (raw & 0x7F) >= 0x7C if weight.dtype == torch.float8_e5m2 else (raw & 0x7F) == 0x7F
    return int(np.count_nonzero(special)), bool(np.all((raw & 0x7F) == 0))


@pytest.mark.parametrize("dtype", (torch.float8_e4m3fn, torch.float8_e5m2))
def test_code_maxima_agree_with_counting_for_every_byte_pair(dtype):
    for a in range(256):
        for b in (0x00, 0x80, 0x01, 0x81, 0x7B, 0x7C, 0x7E, 0x7F, 0xFB, 0xFC, 0xFE, 0xFF, a):
            weight = torch.tensor([a, b, 0x00], dtype=torch.uint8).view(dtype)
            assert fp8_code_problems(weight) == _slow_code_problems(weight), (hex(a), hex(b))


@pytest.mark.parametrize("values,expected", [([0.0, -0.0], (0, True)), ([1.0, 0.0], (0, False)),
                                             ([float("inf"), 1.0], (1, False)), ([float("nan"), 0.0], (1, False)),
                                             ([-float("inf"), float("nan"), 2.0], (2, False))])
@pytest.mark.parametrize("dtype", (torch.bfloat16, torch.float16, torch.float32))
def test_float_problems(values, expected, dtype):
    assert float_problems(torch.tensor(values, dtype=dtype)) == expected


def test_mapped_reads_equal_safetensors(make_checkpoint):
    from safetensors import safe_open

    folder = make_checkpoint(quant="ct-fp8-block", data="random")
    ckpt = open_local(folder)
    files = CheckpointFiles(folder)
    with safe_open(os.path.join(folder, "model.safetensors"), framework="pt") as handle:
        for name, info in ckpt.tensors.items():
            expected = handle.get_tensor(name)
            whole = files.read(TensorRead(info))
            assert whole.dtype == expected.dtype and whole.shape == expected.shape
            assert torch.equal(whole.view(torch.uint8), expected.view(torch.uint8)), name
            if len(info.shape) == 2 and info.shape[0] > 2:
                rows = files.read(TensorRead(info, rows=(1, info.shape[0] - 1)))
                assert torch.equal(rows.view(torch.uint8), expected[1:-1].view(torch.uint8)), name
                cols = files.read(TensorRead(info, cols=(0, 1)))  # a column slice: safetensors' get_slice
                assert torch.equal(cols.view(torch.uint8), expected[:, :1].view(torch.uint8)), name
    files.release()  # the pages go; a view read before still reads the file's bytes
    info = next(i for i in ckpt.tensors.values() if len(i.shape) == 2)
    again = files.read(TensorRead(info))
    with safe_open(os.path.join(folder, "model.safetensors"), framework="pt") as handle:
        assert torch.equal(again.view(torch.uint8), handle.get_tensor(info.name).view(torch.uint8))


def test_a_file_cut_after_inspect_is_named_not_a_crash(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-block", data="random")
    ckpt = open_local(folder)
    last = max(ckpt.tensors.values(), key=lambda info: info.end)
    path = os.path.join(folder, "model.safetensors")
    os.truncate(path, os.path.getsize(path) - 4)
    with pytest.raises(CheckpointFileError, match="past the end of the file"):
        CheckpointFiles(folder).read(TensorRead(last))


def test_prefetch_then_read(make_checkpoint):
    folder = make_checkpoint(quant="ct-fp8-block", data="random")
    ckpt = open_local(folder)
    files = CheckpointFiles(folder)
    reads = [TensorRead(info) for info in ckpt.tensors.values()]
    pending = files.prefetch(reads)
    if pending is not None:  # None where the kernel lacks MADV_POPULATE_READ
        pending.result()
    assert sum(files.read(r).numel() for r in reads) == sum(info.numel for info in ckpt.tensors.values())


def test_quick_triton_reason_is_the_full_one():
    """On the CPU without TRITON_INTERPRET, the reason given without importing triton is triton_fp8's own."""
    code = ("import sys, torch; from fp8check.kernels.numerics import gemm; quick = gemm.triton_unavailable("
            "torch.device('cpu')); assert 'triton' not in sys.modules; from fp8check.kernels.numerics import "
            "triton_fp8; print(quick == triton_fp8.unavailable_reason(torch.device('cpu')), quick)")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.startswith("True "), out
