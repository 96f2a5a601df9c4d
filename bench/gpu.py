"""Benchmark on a GPU: every numerics class of `load` against fp32 and torch._scaled_mm; `load` against the disk.

For Llama-3-70B's four linear layers (TP=1) at a decode-sized and a prefill-sized M, each row runs one numerics
class of fp8check.kernels.numerics.gemm on synthetic weights quantized as checkpoints store them, compares it with the
fp32 reference `load` judges it by (same quantized activations, fully dequantized weight) and times the GEMM
alone (activations are quantized beforehand). Next to them, torch._scaled_mm on the same operands: tensorwise,
rowwise and blockwise (1x128 x 128x128, torch.nn.functional.scaled_mm) where the device accepts them.

Then `fp8check load --device <gpu>` of bench/load.py's checkpoints (its 0.75 GB peer checkpoint and its 0.63 /
2.45 GB scaling pair, written by bench/load.py's build()), each a fresh process: cold (the files' pages dropped
from the page cache first, posix_fadvise DONTNEED, and how much stayed resident said, from mincore) and warm
(median of --runs). Beside them the disk's own cold read speed of the same files (16 MB reads): load's GB/s is
bytes read over load's own seconds (the report's `seconds`: inspect and every module, not Python's start or
torch's import), and the pair's fit projects Qwen3-32B-FP8-block (34.4 GB) on this host.

Prints two Markdown tables; exits 0 with a note when there is no CUDA/XPU device. `--load-device cpu --load-platform
xpu` dry-runs the load table on the CPU (the figures are then the CPU's: `load`'s numerics emulated there).

    python bench/gpu.py [--tokens 16 2048] [--layers qkv_proj o_proj ...] [--iters 20] [--runs 3]
                        [--part numerics|load|all] [--load-device cuda] [--load-platform P]
"""

from __future__ import annotations

import os
import sys

# bench/inspect.py shadows the stdlib's `inspect` (which torch imports) for scripts run from bench/.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import argparse
import ctypes
import ctypes.util
import importlib.util
import json
import mmap
import statistics
import subprocess
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


# ------------------------------------------------------------------------------ load --device <gpu> on checkpoints

READ_CHUNK = 16 << 20
_PAGE = mmap.PAGESIZE


def bench_load_module():
    """bench/load.py (its checkpoints and their builder), loaded by path: bench/ is not a package, and it must not
    be put on sys.path (bench/inspect.py shadows the stdlib's)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "load.py")
    spec = importlib.util.spec_from_file_location("bench_load", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shard_files(folder: str) -> list[str]:
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".safetensors"))


def evict(path: str) -> None:
    """Drop a file's clean pages from the page cache (no root needed; pages another process maps stay)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def resident_fraction(path: str) -> float:
    """The share of a file's pages in the page cache (mincore over a private map of it; nothing is read)."""
    size = os.path.getsize(path)
    if size == 0:
        return 1.0
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    pages = -(-size // _PAGE)
    vector = (ctypes.c_ubyte * pages)()
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), size, access=mmap.ACCESS_COPY) as mapped:
        anchor = ctypes.c_char.from_buffer(mapped)  # a private map is writable, so ctypes can take its address
        try:
            if libc.mincore(ctypes.c_void_p(ctypes.addressof(anchor)), ctypes.c_size_t(size), vector) != 0:
                raise OSError(ctypes.get_errno(), f"mincore({path})")
        finally:
            del anchor
    return sum(b & 1 for b in vector) / pages


def cached_share(files: list[str]) -> float:
    """The share of the files' bytes in the page cache."""
    return sum(resident_fraction(p) * os.path.getsize(p) for p in files) / sum(os.path.getsize(p) for p in files)


def cold_read_gbps(files: list[str]) -> tuple[float, float]:
    """(GB/s of reading the files from disk, the share of their pages still cached when the read began)."""
    for path in files:
        evict(path)
    cached = cached_share(files)
    buffer = bytearray(READ_CHUNK)
    total, start = 0, time.perf_counter()
    for path in files:
        with open(path, "rb", buffering=0) as fh:
            while (got := fh.readinto(buffer)):
                total += got
    return total / (time.perf_counter() - start) / 1e9, cached


def load_run(folder: str, device: str, platform: str | None, cold: bool) -> dict:
    """One fresh `fp8check load FOLDER --device DEVICE` (--platform: the device's own unless given): wall, load's
    own seconds, bytes read, its verdict (exit 1, a layer that fails, is a figure too); cold: the files dropped from
    the page cache first."""
    files = shard_files(folder)
    if cold:
        for path in files:
            evict(path)
    cached = cached_share(files)
    cmd = [sys.executable, "-m", "fp8check", "load", folder, "--device", device, "--format", "json",
           *(["--platform", platform] if platform else [])]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    report = json.loads(proc.stdout)
    return dict(wall=wall, seconds=report["seconds"], bytes=report["bytes_read"], ok=report["ok"],
                summary=report["load_summary"], cached=cached, execution=_executions(report))


def _executions(report: dict) -> str:
    """What ran, most common first: the rows' `execution` labels."""
    counts: dict[str, int] = {}
    for layer in report["layers"]:
        label = (layer.get("load") or {}).get("execution")
        if label:
            counts[label] = counts.get(label, 0) + 1
    return "; ".join(f"{n} x {label}" for label, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def load_figures(folders: dict[str, str], device: str, platform: str | None, runs: int) -> list[dict]:
    """Per checkpoint: its size, the disk's cold read speed, load cold once and warm (median of `runs`)."""
    rows = []
    for label, folder in folders.items():
        files = shard_files(folder)
        disk, disk_cached = cold_read_gbps(files)
        cold = load_run(folder, device, platform, cold=True)
        warm = [load_run(folder, device, platform, cold=False) for _ in range(runs)]
        rows.append(dict(label=label, gb=sum(os.path.getsize(p) for p in files) / 1e9, disk=disk,
                         disk_cached=disk_cached, cold=cold,
                         warm_wall=statistics.median(r["wall"] for r in warm),
                         warm_seconds=statistics.median(r["seconds"] for r in warm),
                         warm_ok=all(r["ok"] for r in warm)))
    return rows


def projection(rows: list[dict], scaling: tuple[str, str], gb: float) -> tuple[float, float] | None:
    """(fixed s, s per GB) of load's own cold seconds fitted over the scaling pair, or None without both."""
    pair = [r for r in rows if r["label"] in scaling]
    if len(pair) != 2 or pair[0]["gb"] == pair[1]["gb"]:
        return None
    (g0, s0), (g1, s1) = ((r["gb"], r["cold"]["seconds"]) for r in pair)
    per_gb = (s1 - s0) / (g1 - g0)
    return s0 - per_gb * g0, per_gb


def load_markdown(rows: list[dict], device: str, fit: tuple[float, float] | None, target_gb: float) -> str:
    lines = [f"`fp8check load --device {device}` (fresh processes; GB/s: bytes read / load's own seconds)", "",
             "| checkpoint | GB | disk, cold | load cold: wall, own | GB/s | cached at start | load warm: wall, own "
             "| GB/s | verdict |", "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        cold = r["cold"]
        verdict = "ok" if cold["ok"] and r["warm_ok"] else "**FAIL** " + json.dumps(cold["summary"])
        lines.append(f"| {r['label']} | {r['gb']:.2f} | {r['disk']:.2f} GB/s ({r['disk_cached']:.0%} cached) | "
                     f"{cold['wall']:.2f} s, {cold['seconds']:.2f} s | {cold['bytes'] / cold['seconds'] / 1e9:.2f} | "
                     f"{cold['cached']:.0%} | {r['warm_wall']:.2f} s, {r['warm_seconds']:.2f} s | "
                     f"{cold['bytes'] / r['warm_seconds'] / 1e9:.2f} | {verdict} |")
    lines += ["", "What ran: " + (rows[0]["cold"]["execution"] if rows else "nothing")]
    if fit is not None:
        fixed, per_gb = fit
        lines.append(f"Fit over the scaling pair (cold): {fixed:.2f} s + {per_gb:.2f} s per GB; Qwen3-32B-FP8-block "
                     f"({target_gb} GB) on this host: ~{fixed + per_gb * target_gb:.0f} s of load's own time, plus "
                     f"Python's start and torch's import")
    return "\n".join(lines)


def run_load_part(device: str, platform: str | None, runs: int) -> tuple[str, bool]:
    bench = bench_load_module()
    bench.build()
    folders = {"(1) the peers' checkpoint": bench.OUT,
               **{f"scaling, {n} layers": folder for n, folder in bench.SCALING.items()}}
    rows = load_figures(folders, device, platform, runs)
    fit = projection(rows, tuple(f"scaling, {n} layers" for n in bench.SCALING), bench.QWEN3_32B_GB)
    ok = all(r["cold"]["ok"] and r["warm_ok"] for r in rows)
    return load_markdown(rows, device + (f" --platform {platform}" if platform else ""), fit, bench.QWEN3_32B_GB), ok


def numerics_part(device, args) -> bool:
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
    print(markdown(rows, f"{props.name} (torch {torch.__version__}; {triton_note})") + "\n")
    return all(r[4] is None or r[4] <= r[5] for r in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, nargs="+", default=[16, 2048])
    parser.add_argument("--layers", nargs="+", default=list(LLAMA_70B), choices=list(LLAMA_70B))
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--part", choices=["numerics", "load", "all"], default="all")
    parser.add_argument("--runs", type=int, default=3, help="warm `load` runs per checkpoint (their median)")
    parser.add_argument("--load-device", help="the load table's --device (default: the GPU; cpu: a dry run)")
    parser.add_argument("--load-platform", help="the load table's --platform (default: the device's own; a CPU dry "
                        "run needs one whose FP8 block kernel exists, e.g. xpu: vLLM's CPU one needs AMX)")
    args = parser.parse_args(argv)

    device = gpu_device()
    if device is None and args.load_device != "cpu":
        print("no CUDA/XPU device: nothing to measure (bench/gpu.py needs a GPU; tests/gpu holds the checks; "
              "--part load --load-device cpu --load-platform xpu dry-runs the load table)")
        return 0
    ok = True
    if args.part in ("numerics", "all"):
        if device is None:
            print("numerics table: no CUDA/XPU device, not run\n")
        else:
            ok = numerics_part(device, args)
    if args.part in ("load", "all"):
        table, load_ok = run_load_part(args.load_device or f"{device.type}:{device.index or 0}",
                                        args.load_platform, args.runs)
        print(table)
        ok = ok and load_ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
