"""fp8_math's activation quantization against vLLM's formulas, and the Triton block GEMM port under Triton's CPU
interpreter against an fp32 dequantize + matmul reference.

Triton decides between compiling and interpreting when a function is decorated, its own library (tl.cdiv, ...)
included, i.e. when triton is first imported; another test may already have imported it compiled. So the GEMMs
run in one child process started with TRITON_INTERPRET=1 (all cases in one go, ~3 s), and the tests that only ask
`unavailable_reason` load private copies of triton_fp8, leaving sys.modules and os.environ as they were.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
from unittest import mock

import pytest

torch = pytest.importorskip("torch")

from fp8check.kernels.numerics import fp8_math  # noqa: E402  (needs torch)
from fp8check.synth import quantize_fp8  # noqa: E402

HAVE_TRITON = importlib.util.find_spec("triton") is not None
requires_triton = pytest.mark.skipif(not HAVE_TRITON, reason="triton is not installed (pip install 'fp8check[triton]')")
E4M3_MAX = 448.0


def load_triton_fp8(interpret: bool, hide_triton: bool = False):
    """A private copy of fp8check.kernels.numerics.triton_fp8 for questions that launch nothing."""
    if HAVE_TRITON:
        import triton  # noqa: F401  (imported once for real, so the patches below never unload it)
    path = os.path.join(os.path.dirname(fp8_math.__file__), "triton_fp8.py")
    spec = importlib.util.spec_from_file_location(f"_triton_fp8_copy_{interpret}_{hide_triton}", path)
    module = importlib.util.module_from_spec(spec)
    # Hiding triton patches sys.modules; otherwise it is left alone (restoring it would unload what triton imports
    # while the kernel is decorated, e.g. the interpreter module whose class `interpreted()` checks).
    hidden = {"triton": None, "triton.language": None} if hide_triton else {}
    with mock.patch.dict(os.environ, {"TRITON_INTERPRET": "1" if interpret else "0"}), \
            (mock.patch.dict(sys.modules, hidden) if hidden else contextlib.nullcontext()):
        spec.loader.exec_module(module)
    return module


def block_quantize(w: torch.Tensor, block: tuple[int, int]) -> tuple[torch.Tensor, torch.Tensor]:
    """A weight quantized per bn x bk block as checkpoints store it (synth's quantizer): codes, fp32 scales."""
    codes, scale = quantize_fp8(w, (-(-w.shape[0] // block[0]), -(-w.shape[1] // block[1])), block)
    return codes, scale.float()


def reference(a_q, a_s, b_q, b_s, block):
    """fp32 dequantize + matmul, tile by tile with explicit loops (independent of fp8_math's helpers)."""
    bn, bk = block
    a = a_q.float()
    b = b_q.float()
    for j in range(a_s.shape[1]):
        a[:, j * bk:(j + 1) * bk] *= a_s[:, j:j + 1]
        for i in range(b_s.shape[0]):
            b[i * bn:(i + 1) * bn, j * bk:(j + 1) * bk] *= b_s[i, j]
    return a @ b.t()


# ---------------------------------------------------------------------------------------------- fp8_math


def vllm_group_formula(x: torch.Tensor, group: int, fp8_max: float, dtype=torch.float8_e4m3fn):
    """per_token_group_quant_fp8 written out one group at a time: absmax = max(|x|, eps), s = absmax / max."""
    codes = torch.empty(x.shape, dtype=dtype)
    scales = torch.empty(x.shape[0], -(-x.shape[1] // group))
    for r in range(x.shape[0]):
        for g in range(scales.shape[1]):
            cols = slice(g * group, (g + 1) * group)
            s = torch.clamp(x[r, cols].float().abs().max(), min=1e-10) / fp8_max
            scales[r, g] = s
            codes[r, cols] = torch.clamp(x[r, cols].float() / s, -fp8_max, fp8_max).to(dtype)
    return codes, scales


@pytest.mark.parametrize("m,k,group", [(4, 256, 128), (3, 200, 128), (2, 96, 32), (5, 64, 128)])
@pytest.mark.parametrize("dtype,fp8_max", [(torch.float8_e4m3fn, 448.0), (torch.float8_e4m3fnuz, 224.0)])
def test_per_token_group_quant_matches_vllm_formula(m, k, group, dtype, fp8_max):
    torch.manual_seed(m * k)
    x = (torch.randn(m, k) * torch.logspace(-3, 3, k)).to(torch.bfloat16)
    x_q, x_s = fp8_math.per_token_group_quant_fp8(x, group, dtype=dtype)
    codes, scales = vllm_group_formula(x, group, fp8_max, dtype)
    assert x_q.dtype == dtype and x_q.shape == x.shape and x_q.is_contiguous()
    assert x_s.dtype == torch.float32 and x_s.shape == (m, -(-k // group))
    assert torch.equal(x_s, scales)
    assert torch.equal(x_q.view(torch.uint8), codes.view(torch.uint8))
    # Each group's largest element lands on the top code; the round trip is within e4m3's half-ulp (2^-4 relative
    # for normal codes, half the smallest subnormal times the scale below them).
    groups = x_q.float().abs().reshape(m, -1)
    assert torch.equal(torch.stack([groups[:, g * group:(g + 1) * group].amax(1) for g in range(x_s.shape[1])], 1),
                       torch.full_like(x_s, fp8_max))
    dequantized = x_q.float() * x_s.repeat_interleave(group, 1)[:, :k]
    step = torch.maximum(x.float().abs() * 2 ** -4, x_s.repeat_interleave(group, 1)[:, :k] * 2 ** -10)
    assert bool(((dequantized - x.float()).abs() <= step).all())


def test_per_token_group_quant_zero_group_uses_eps():
    x = torch.zeros(2, 256)
    x[1, 128:] = 1.0
    x_q, x_s = fp8_math.per_token_group_quant_fp8(x, 128)
    assert x_s[0, 0].item() == pytest.approx(1e-10 / E4M3_MAX) and x_s[1, 1].item() == pytest.approx(1 / E4M3_MAX)
    assert not x_q.float().isnan().any() and x_q.float()[0].abs().sum() == 0


def test_dynamic_per_tensor():
    torch.manual_seed(1)
    x = torch.randn(8, 64, dtype=torch.bfloat16) * 3
    x_q, scale = fp8_math.scaled_fp8_quant(x)
    assert scale.shape == (1,) and scale.item() == pytest.approx(x.float().abs().max().item() / E4M3_MAX, rel=1e-7)
    assert x_q.float().abs().max() == E4M3_MAX
    expected = (x.float() * (1 / scale)).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
    assert torch.equal(x_q.view(torch.uint8), expected.view(torch.uint8))
    zero_q, zero_scale = fp8_math.scaled_fp8_quant(torch.zeros(2, 16))
    assert zero_scale.item() == pytest.approx(1 / (E4M3_MAX * 512)) and zero_q.float().abs().sum() == 0


def test_static_per_tensor_uses_the_checkpoint_scale_and_saturates():
    x = torch.tensor([[0.5, -1.0, 2.0, 1000.0, -1e6]])
    input_scale = torch.tensor(0.25, dtype=torch.bfloat16)
    x_q, scale = fp8_math.scaled_fp8_quant(x, scale=input_scale)
    assert scale.dtype == torch.float32 and scale.tolist() == [0.25]
    assert x_q.float().tolist() == [[2.0, -4.0, 8.0, E4M3_MAX, -E4M3_MAX]]


def test_dynamic_per_token_rows_are_independent():
    torch.manual_seed(2)
    x = torch.randn(4, 96)
    x_q, scale = fp8_math.scaled_fp8_quant(x, per_token=True)
    assert scale.shape == (4, 1)
    assert torch.equal(scale, (x.abs().amax(1, keepdim=True) / E4M3_MAX))
    assert torch.equal(x_q.float().abs().amax(1), torch.full((4,), E4M3_MAX))
    x[0] *= 1000  # one row's range never changes another row's codes
    x_q2, scale2 = fp8_math.scaled_fp8_quant(x, per_token=True)
    assert torch.equal(x_q2[1:].view(torch.uint8), x_q[1:].view(torch.uint8)) and torch.equal(scale2[1:], scale[1:])


# ---------------------------------------------------------------------------------------------- Triton GEMM

SHAPES = [  # M, N, K, (bn, bk)
    (16, 256, 256, (128, 128)),
    (5, 200, 300, (128, 128)),    # ragged M, N and K
    (16, 96, 200, (64, 128)),     # non-square block, ragged K
    (16, 160, 192, (128, 64)),    # non-square block, ragged N
]
OUT_DTYPES = {"float32": (torch.float32, 1e-5), "bfloat16": (torch.bfloat16, 2 ** -8)}


def random_case(m, n, k, block, out_dtype):
    torch.manual_seed(m + n + k)
    x = torch.randn(m, k, dtype=torch.bfloat16)
    w = torch.randn(n, k) * torch.rand(n, 1) * 4  # rows of different range: block scales differ
    b_q, b_s = block_quantize(w, block)
    a_q, a_s = fp8_math.per_token_group_quant_fp8(x, block[1])
    return {"a_q": a_q, "a_s": a_s, "b_q": b_q, "b_s": b_s}, block, out_dtype


def ones_case():
    """All-ones codes: out[r, c] = bk * sum over K blocks of a_s[r, kb] * b_s[c // bn, kb], so a transposed or
    shifted scale index shows up exactly."""
    m, n, k = 3, 128, 256
    operands = {"a_q": torch.ones(m, k, dtype=torch.float8_e4m3fn), "b_q": torch.ones(n, k, dtype=torch.float8_e4m3fn),
                "a_s": torch.tensor([[1.0, 2.0], [3.0, 5.0], [7.0, 11.0]]),
                "b_s": torch.tensor([[1.0, 10.0], [100.0, 1000.0]])}
    return operands, (64, 128), "float32"


def e8m0_case():
    torch.manual_seed(3)
    b_q, _ = block_quantize(torch.randn(128, 256), (128, 128))
    a_q, a_s = fp8_math.per_token_group_quant_fp8(torch.randn(4, 256), 128)
    return {"a_q": a_q, "a_s": a_s, "b_q": b_q, "b_s": torch.tensor([[0.25, 2.0]]).to(torch.float8_e8m0fnu)}, \
        (128, 128), "float32"


CASES = {f"{m}x{n}x{k}-{block[0]}x{block[1]}-{dtype}": random_case(m, n, k, block, dtype)
         for m, n, k, block in SHAPES for dtype in OUT_DTYPES}
CASES["ones"] = ones_case()
CASES["e8m0"] = e8m0_case()

CHILD = """
import json, sys
import torch
from safetensors.torch import load_file, save_file
from fp8check.kernels.numerics import triton_fp8
tensors = load_file(sys.argv[1])
outputs = {}
for name, (block, out_dtype) in json.loads(sys.argv[2]).items():
    t = {key: tensors[f"{name}/{key}"] for key in ("a_q", "a_s", "b_q", "b_s")}
    outputs[name] = triton_fp8.w8a8_block_matmul(t["a_q"], t["a_s"], t["b_q"], t["b_s"], tuple(block),
                                                 getattr(torch, out_dtype))
save_file(outputs, sys.argv[3])
print(json.dumps({"interpreted": triton_fp8.interpreted(),
                  "cpu": triton_fp8.unavailable_reason(torch.device("cpu")),
                  "cuda": triton_fp8.unavailable_reason(torch.device("cuda", 0))}))
"""


@pytest.fixture(scope="module")
def interpreted_run(tmp_path_factory):
    """Every case's output from the Triton port, run by one child process under TRITON_INTERPRET=1."""
    from safetensors.torch import load_file, save_file

    folder = tmp_path_factory.mktemp("triton")
    save_file({f"{name}/{key}": t for name, (ops, _, _) in CASES.items() for key, t in ops.items()},
              str(folder / "in.safetensors"))
    specs = json.dumps({name: (block, dtype) for name, (_, block, dtype) in CASES.items()})
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    child = subprocess.run([sys.executable, "-c", CHILD, str(folder / "in.safetensors"), specs,
                            str(folder / "out.safetensors")], env=env, capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    return json.loads(child.stdout.splitlines()[-1]), load_file(str(folder / "out.safetensors"))


@requires_triton
@pytest.mark.parametrize("name", [name for name in CASES if name not in ("ones", "e8m0")])
def test_triton_block_gemm_equals_fp32_reference(interpreted_run, name):
    operands, block, dtype = CASES[name]
    out_dtype, rtol = OUT_DTYPES[dtype]
    out = interpreted_run[1][name]
    expected = reference(operands["a_q"], operands["a_s"], operands["b_q"], operands["b_s"], block)
    assert out.dtype == out_dtype and out.shape == expected.shape
    torch.testing.assert_close(out.float(), expected, rtol=rtol, atol=rtol * expected.abs().max().item())


@requires_triton
def test_triton_block_gemm_reads_the_scale_of_each_block(interpreted_run):
    operands, (bn, bk), _ = CASES["ones"]
    expected = (operands["a_s"] @ operands["b_s"].t()).repeat_interleave(bn, 1) * bk
    assert torch.equal(interpreted_run[1]["ones"], expected)


@requires_triton
def test_triton_block_gemm_upcasts_e8m0_scales(interpreted_run):
    operands, block, _ = CASES["e8m0"]
    powers = operands["b_s"].float()
    assert powers.tolist() == [[0.25, 2.0]]
    expected = reference(operands["a_q"], operands["a_s"], operands["b_q"], powers, block)
    torch.testing.assert_close(interpreted_run[1]["e8m0"], expected, rtol=1e-5, atol=1e-5 * expected.abs().max().item())


@requires_triton
def test_child_ran_interpreted(interpreted_run):
    assert interpreted_run[0] == {"interpreted": True, "cpu": None, "cuda": "TRITON_INTERPRET=1 is set: Triton would "
                                  "interpret on the CPU, not run on cuda:0"}


@requires_triton
def test_unavailable_reason_when_only_the_kernel_is_interpreted():
    """This process imported triton compiled; TRITON_INTERPRET=1 set afterwards reaches our kernel only, and
    launching it would fail on tl.cdiv (compiled): refused up front."""
    import triton.language as tl

    if type(tl.cdiv).__name__ == "InterpretedFunction":
        pytest.skip("triton was imported under TRITON_INTERPRET=1 in this process")
    late = load_triton_fp8(interpret=True)
    assert not late.interpreted()
    for device in (torch.device("cpu"), torch.device("cuda", 0)):
        assert late.unavailable_reason(device) == (
            "TRITON_INTERPRET=1 was set after triton was imported: set it before, or not at all")


@requires_triton
def test_unavailable_reason_compiled(monkeypatch):
    compiled = load_triton_fp8(interpret=False)
    assert not compiled.interpreted()
    assert "interpreter" in compiled.unavailable_reason(torch.device("cpu"))
    monkeypatch.setattr("triton.backends.backends", {"nvidia": object(), "amd": object()})
    monkeypatch.setattr(torch.version, "hip", None)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (8, 0))
    assert compiled.unavailable_reason(torch.device("cuda", 0)) == (
        "Triton's fp8e4nv needs compute capability 8.9+, this GPU is sm80")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    assert compiled.unavailable_reason(torch.device("cuda", 0)) is None
    assert "no intel backend" in compiled.unavailable_reason(torch.device("xpu", 0))
    assert "Triton has no backend for mps" in compiled.unavailable_reason(torch.device("mps"))
    monkeypatch.setattr(torch.version, "hip", "6.4")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 4))
    assert compiled.unavailable_reason(torch.device("cuda", 0)) is None
    monkeypatch.setattr("triton.backends.backends", {"intel": object()})
    assert compiled.unavailable_reason(torch.device("xpu", 0)) is None
    assert "no amd backend for rocm" in compiled.unavailable_reason(torch.device("cuda", 0))


def test_unavailable_reason_without_triton():
    missing = load_triton_fp8(interpret=True, hide_triton=True)
    assert missing.unavailable_reason(torch.device("cpu")) == "triton is not installed (pip install 'fp8check[triton]')"
    assert missing.unavailable_reason(torch.device("cuda", 0)) == missing.INSTALL_HINT
    with pytest.raises(RuntimeError, match="triton is not installed"):
        missing.w8a8_block_matmul(None, None, None, None, (128, 128), torch.float32)
