"""Benchmark: `fp8check inspect --format json` on a Qwen3-32B-shaped checkpoint vs the CLI framework's floor.

The checkpoint's headers are real (RedHatAI/Qwen3-32B-FP8-block's shapes, 7 shards, ~450 modules) and its data
region is a sparse hole, so it costs no disk. Both commands run as fresh processes, interleaved, in one run;
the floor is bench/floor_app.py, a typer app with the same commands and options that does nothing.

    python bench/inspect.py [--runs 15]
"""

from __future__ import annotations

import os
import sys

# This file sits next to bench/inspect.py, whose name shadows the stdlib's `inspect` for scripts run from bench/.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import argparse
import statistics
import subprocess
import tempfile
import time

from fp8check.synth import Spec, write_checkpoint

QWEN3_32B = Spec(quant="ct-fp8-block", architecture="Qwen3ForCausalLM", model_type="qwen3", hidden=5120,
                 intermediate=25600, layers=64, heads=64, kv_heads=8, head_dim=128, vocab=151936, shards=7,
                 data="sparse")
HERE = os.path.dirname(os.path.abspath(__file__))


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed: {proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    # An installed package has its bytecode compiled (pip does it); an editable checkout under
    # PYTHONDONTWRITEBYTECODE=1 would recompile fp8check on every run, which no user pays.
    import compileall

    import fp8check

    compileall.compile_dir(os.path.dirname(fp8check.__file__), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_checkpoint(os.path.join(tmp, "qwen3-32b"), QWEN3_32B)
        apparent = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        on_disk = sum(os.stat(os.path.join(folder, f)).st_blocks * 512 for f in os.listdir(folder))
        argv = ["inspect", folder, "--platform", "xpu", "--tp", "2", "--format", "json"]
        ours_cmd = [sys.executable, "-m", "fp8check", *argv]
        floor_cmd = [sys.executable, os.path.join(HERE, "floor_app.py"), *argv]
        timed(ours_cmd), timed(floor_cmd)  # warm the page cache and .pyc files
        ours, floor = [], []
        for _ in range(args.runs):
            ours.append(timed(ours_cmd))
            floor.append(timed(floor_cmd))
    o, f = statistics.median(ours), statistics.median(floor)
    print(f"checkpoint: {apparent / 1e9:.1f} GB apparent, {on_disk / 1e6:.1f} MB on disk, 7 shards, 64 layers")
    print(f"fp8check inspect --format json: median {o * 1000:.0f} ms (min {min(ours) * 1000:.0f}) over {args.runs} runs")
    print(f"typer floor (same options):     median {f * 1000:.0f} ms (min {min(floor) * 1000:.0f})")
    print(f"ratio: {o / f:.2f}x  (fp8check's own work: {(o - f) * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
