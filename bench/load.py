"""Benchmark: `fp8check load` on a ~1 GB FP8-block checkpoint written by compressed-tensors, against two peers.

(a) the floor: a script that reads every tensor once with safetensors (what any loader must do; safetensors only
    maps the file, so the script copies each tensor out of the mapping, which is what reading costs);
(b) what users do today: compressed-tensors' own `dequantize` of every FP8 weight, then `F.linear` on 16 tokens.
Each runs as a fresh process (import time included, as a user pays it), in one run, interleaved; wall time is the
median, peak RSS is the process's own ru_maxrss. The page cache is warmed first, so all three read from memory.

    python bench/load.py [--runs 3]          # writes the checkpoint once into bench/out/ (~1 minute)
"""

from __future__ import annotations

import os
import sys

# bench/inspect.py shadows the stdlib's `inspect` for scripts run from bench/ (torch imports it).
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import argparse
import json
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out", "llama-fp8-block-1gb")
# Llama-shaped, 8 layers: 0.54 GB of FP8 linear weights + 0.26 GB of BF16 embedding and LM head.
SIZES = dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=8, num_attention_heads=16,
             num_key_value_heads=4, vocab_size=32000, head_dim=128)

READ_ALL = """
import json, resource, sys, time
t = time.perf_counter()
from safetensors import safe_open
total = 0
with safe_open(sys.argv[1] + "/model.safetensors", framework="pt") as f:
    for name in f.keys():  # get_tensor only maps the file: clone() reads every byte, once
        total += f.get_tensor(name).clone().nbytes
print(json.dumps({"bytes": total, "s": time.perf_counter() - t,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

CT_DEQUANTIZE = """
import json, resource, sys, time
t = time.perf_counter()
import torch, torch.nn.functional as F
from compressed_tensors.quantization import QuantizationConfig
from compressed_tensors.quantization.lifecycle.forward import dequantize
from safetensors import safe_open
cfg = json.load(open(sys.argv[1] + "/config.json"))["quantization_config"]
args = QuantizationConfig.model_validate(cfg).config_groups["group_0"].weights
x = torch.randn(16, 2048).to(torch.bfloat16)
layers = 0
with safe_open(sys.argv[1] + "/model.safetensors", framework="pt") as f:
    for name in f.keys():
        if not name.endswith(".weight") or "norm" in name or "embed" in name:
            continue
        w = f.get_tensor(name)
        if w.dtype == torch.float8_e4m3fn:
            w = dequantize(w, f.get_tensor(name + "_scale"), args=args)
        y = F.linear(torch.randn(16, w.shape[1]).to(torch.bfloat16), w.to(torch.bfloat16))
        layers += 1
print(json.dumps({"layers": layers, "s": time.perf_counter() - t,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def build() -> None:
    """Written by compressed-tensors in a child process: a parent that grew to GBs would pass its peak RSS on to
    every process it forks (ru_maxrss survives exec), and spoil the peers' figures."""
    if os.path.exists(os.path.join(OUT, "model.safetensors")):
        return
    os.makedirs(OUT, exist_ok=True)
    code = (f"import sys; sys.path.insert(0, {os.path.join(ROOT, 'tests')!r}); import ct_checkpoints; "
            f"ct_checkpoints.build({OUT!r}, 'FP8_BLOCK', **{SIZES!r})")
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run(cmd: list[str]) -> dict:
    start = time.perf_counter()
    proc = subprocess.run(cmd if OUT in cmd else cmd + [OUT], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return {"wall": wall, "out": proc.stdout}


def rss_of(cmd: list[str]) -> float:
    """Peak RSS of a command that does not report its own: GNU time's %M is not on every machine, so wait4."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    build()
    python = sys.executable
    fp8check = [python, "-m", "fp8check", "load", OUT, "--platform", "xpu", "--device", "cpu", "--format", "json"]
    peers = {"fp8check load": fp8check, "(a) safetensors read": [python, "-c", READ_ALL],
             "(b) compressed-tensors dequantize + F.linear": [python, "-c", CT_DEQUANTIZE]}
    run(peers["(a) safetensors read"])  # warm the page cache
    walls: dict[str, list[float]] = {name: [] for name in peers}
    for _ in range(args.runs):
        for name, cmd in peers.items():
            result = run(cmd)
            walls[name].append(result["wall"])
            if name == "fp8check load":
                doc = json.loads(result["out"])
                assert doc["ok"], "fp8check load failed on the benchmark checkpoint"
    rss = {name: rss_of(cmd if OUT in cmd else cmd + [OUT]) for name, cmd in peers.items()}
    size = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT) if f.endswith(".safetensors"))
    largest_fp32 = 4 * SIZES["vocab_size"] * SIZES["hidden_size"]  # the LM head is the largest layer here
    ours = statistics.median(walls["fp8check load"])
    print(f"checkpoint: {size / 1e9:.2f} GB, largest layer in fp32 {largest_fp32 / 1e6:.0f} MB, runs={args.runs}\n")
    print("| | median wall | peak RSS |\n|---|---|---|")
    for name in peers:
        print(f"| {name} | {statistics.median(walls[name]):.2f} s | {rss[name]:.0f} MB |")
    floor, today = statistics.median(walls["(a) safetensors read"]), statistics.median(
        walls["(b) compressed-tensors dequantize + F.linear"])
    budget = 3 * largest_fp32 / 1e6 + 600
    print(f"\nfp8check / (a) = {ours / floor:.2f}x (target <= 2.5x); (b) / fp8check = {today / ours:.2f}x (target >= 2x); "
          f"peak RSS {rss['fp8check load']:.0f} MB vs budget {budget:.0f} MB (3 x largest fp32 layer + 600 MB)")


if __name__ == "__main__":
    main()
