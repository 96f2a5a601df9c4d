"""Benchmark: `fp8check inspect --format json` on a DeepSeek-V3-shaped checkpoint vs a floor that reads every header.

The checkpoint is DeepSeek-V3's shape (config.json of deepseek-ai/DeepSeek-V3: 61 layers, first_k_dense_replace 3,
256 routed experts + 1 shared, MLA with q_lora_rank 1536 / kv_lora_rank 512 / rope 64 / nope and v 128, hidden
7168, moe_intermediate 2048, native fp8 128x128 blocks with weight_scale_inv, one MTP layer) in 163 shards with an
index, written by the one factory (fp8check.synth) with sparse data: ~92,000 tensors, ~690 GB apparent, a few MB
on disk. Both commands run as fresh processes, interleaved, in one run; the floor is bench/floor_app.py with
FLOOR_READ_HEADERS=1: the same typer app, which then reads and json-parses config.json, the index and every shard
header and does nothing else. It runs twice per round: as is, and ending as fp8check's console script ends
(FLOOR_HARD_EXIT=1: atexit's handlers, then os._exit), so that the ratio against the second leaves out what
skipping the interpreter's teardown saves.

    python bench/giants.py [--runs 9] [--keep DIR] [--previous CHECKOUT]

--previous runs another checkout's fp8check (e.g. `mkdir /tmp/prev && git archive HEAD | tar -x -C /tmp/prev`) in the
same interleaved rounds, so a change is measured against what it replaces on the same machine at the same moment.
"""

from __future__ import annotations

import os
import sys

# This file sits next to bench/inspect.py, whose name shadows the stdlib's `inspect` for scripts run from bench/.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import argparse
import json
import resource
import statistics
import subprocess
import tempfile
import time

from fp8check.synth import Spec, write_checkpoint

DEEPSEEK_V3 = Spec(quant="fp8-block", architecture="DeepseekV3ForCausalLM", model_type="deepseek_v3", hidden=7168,
                   intermediate=18432, layers=61, heads=128, kv_heads=128, head_dim=128, vocab=129280,
                   experts=256, moe_intermediate=2048, moe_style="deepseek", shared_experts=1, first_k_dense=3,
                   mla=True, q_lora_rank=1536, kv_lora_rank=512, qk_rope_head_dim=64, mtp_layers=1,
                   shards=163, data="sparse")
HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stdout) of one fresh process; exit 1 (a verdict) is fine, anything else stops.

    CPU time (user + system, from RUSAGE_CHILDREN) is reported beside wall time: on a shared 2-core machine other
    processes stretch the wall clock of both commands, while each one's own CPU time stays put.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return elapsed, cpu, proc.stdout


def sanity(report: dict) -> str:
    """One line per platform: the expert rows' method / backend and the verdict (a sanity check, not a test)."""
    moes = report["moe"]
    methods = sorted({(m["scheme"], m["backend"] or m["kernel"] or "-") for m in moes})
    linears = sorted({(layer["scheme"], layer["kernel"] or "-") for layer in report["layers"]})
    return (f"{report['platform']} TP {report['tp']}: ok={report['ok']} "
            f"{len(report['layers'])} linear modules {linears}; "
            f"{len(moes)} FusedMoE x {moes[0]['num_experts'] if moes else 0} experts {methods}; "
            f"skipped {len(report['skipped'])}; errors {[e[:110] for e in report['errors']]}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--keep", help="write the checkpoint here and keep it (default: a temporary folder)")
    parser.add_argument("--previous", help="a checkout whose fp8check also runs, interleaved (an A/B)")
    args = parser.parse_args()
    # An installed package has its bytecode compiled (pip does it); see bench/inspect.py.
    import compileall

    import fp8check

    compileall.compile_dir(os.path.dirname(fp8check.__file__), quiet=1)
    if args.previous:
        compileall.compile_dir(os.path.join(args.previous, "fp8check"), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or os.path.join(tmp, "deepseek-v3")
        if not os.path.exists(os.path.join(folder, "config.json")):
            write_checkpoint(folder, DEEPSEEK_V3)
        files = os.listdir(folder)
        apparent = sum(os.path.getsize(os.path.join(folder, f)) for f in files)
        on_disk = sum(os.stat(os.path.join(folder, f)).st_blocks * 512 for f in files)
        with open(os.path.join(folder, "model.safetensors.index.json")) as fh:
            weight_map = json.load(fh)["weight_map"]
        shards = len(set(weight_map.values()))
        argv = ["inspect", folder, "--platform", "xpu", "--format", "json"]
        ours_cmd = [sys.executable, "-m", "fp8check", *argv]
        floor_cmd = [sys.executable, os.path.join(HERE, "floor_app.py"), *argv]
        plain = dict(os.environ)
        floor_env = {**plain, "FLOOR_READ_HEADERS": "1"}
        hard_env = {**floor_env, "FLOOR_HARD_EXIT": "1"}  # the floor ending as fp8check's console script ends
        for platform in ("xpu", "h100", "mi300x"):  # TP 8, as DeepSeek-V3 is served
            out = run([sys.executable, "-m", "fp8check", "inspect", folder, "-p", platform, "--tp", "8", "-f", "json"],
                      plain)[2]
            print(sanity(json.loads(out)))
        floor_out = run(floor_cmd, floor_env)[2]  # also warms the page cache and .pyc files
        previous_cmd = ([sys.executable, "-c", _RUN_FROM, os.path.abspath(args.previous), *argv] if args.previous
                        else None)
        ours, floor, hard, previous = [], [], [], []
        for _ in range(args.runs):
            ours.append(run(ours_cmd, plain)[:2])
            floor.append(run(floor_cmd, floor_env)[:2])
            hard.append(run(floor_cmd, hard_env)[:2])
            if previous_cmd:
                previous.append(run(previous_cmd, plain)[:2])
        # RUSAGE_CHILDREN's maximum is over all children so far: measure each peak in its own child process.
        peaks = {}
        for label, cmd, env in (("floor", floor_cmd, floor_env), ("fp8check", ours_cmd, plain)):
            probe = subprocess.run([sys.executable, "-c", _PEAK, *cmd], capture_output=True, text=True, env=env)
            peaks[label] = int(probe.stdout.strip() or 0)
    (o, o_cpu), (f, f_cpu) = (map(statistics.median, zip(*runs)) for runs in (ours, floor))
    print(f"checkpoint: {len(weight_map)} tensors in {shards} shards, {apparent / 1e9:.0f} GB apparent, "
          f"{on_disk / 1e6:.1f} MB on disk; floor read {floor_out.strip()}")
    for label, (wall, cpu), runs, peak in (("fp8check inspect --format json", (o, o_cpu), ours, peaks["fp8check"]),
                                           ("floor (typer + json.loads of every header)", (f, f_cpu), floor,
                                            peaks["floor"])):
        print(f"{label}: wall median {wall * 1000:.0f} ms (min {min(w for w, _ in runs) * 1000:.0f}), CPU median "
              f"{cpu * 1000:.0f} ms over {args.runs} runs, peak RSS {peak / 1024:.0f} MB")
    print(f"ratio: {o / f:.2f}x wall, {o_cpu / f_cpu:.2f}x CPU  (fp8check's own work: {(o - f) * 1000:.0f} ms wall)")
    h, h_cpu = map(statistics.median, zip(*hard))
    print(f"floor ending as fp8check's console script does (os._exit after atexit): wall median {h * 1000:.0f} ms, "
          f"CPU median {h_cpu * 1000:.0f} ms; ratio {o / h:.2f}x wall, {o_cpu / h_cpu:.2f}x CPU")
    if previous:
        p, p_cpu = map(statistics.median, zip(*previous))
        print(f"previous checkout ({args.previous}): wall median {p * 1000:.0f} ms, CPU median {p_cpu * 1000:.0f} ms; "
              f"ratio {p / f:.2f}x wall, {p_cpu / f_cpu:.2f}x CPU")


# `python -m fp8check` from another checkout: its folder first on sys.path, ahead of this one's installed package.
_RUN_FROM = ("import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'fp8check'; "
             "runpy.run_module('fp8check', run_name='__main__', alter_sys=True)")
# Runs argv as the only child of a fresh interpreter and prints its peak RSS (KB): RUSAGE_CHILDREN of that process.
_PEAK = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


if __name__ == "__main__":
    main()
