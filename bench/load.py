"""Benchmark: `fp8check load` against reading the weights and against compressed-tensors' dequantize practice,
its scaling with the model's size, and its per-rank figures under --tp.

1. Peers, on a ~0.75 GB FP8-block checkpoint written by compressed-tensors (Llama-shaped, 8 layers):
   (a) the floor: a script that reads every tensor once with safetensors (what any loader must do; safetensors only
       maps the file, so the script copies each tensor out of the mapping, which is what reading costs; torch is
       imported, as fp8check's load imports it);
   (b) what users do today: compressed-tensors' own `dequantize` of every FP8 weight, then `F.linear` on 16 tokens.
   Targets: fp8check <= 2x (a), (b) >= 3x fp8check, fp8check's peak RSS <= 1 GiB. (a) and (b) also run ending as
   fp8check's console script ends (atexit's handlers, then os._exit: no interpreter teardown of torch), so that
   the ratios can be read with that saving left out.
2. Scaling: the same family at two sizes (fp8check.synth, random FP8-block weights: 6 and 36 layers, 0.63 and
   2.45 GB): time per GB and peak RSS at each, the fitted cost per GB, and a projection for Qwen3-32B (34 GB).
3. --tp 2 on the checkpoint of (1): wall, CPU and the peak RSS of every rank process, bytes read per rank (from
   the JSON report), against TP 1.

Every command runs as a fresh process (import time included, as a user pays it), interleaved with its peers in
each round; wall time and CPU time (user + system, the process and its children) are medians; peak RSS is the
process's own (os.wait4), and for --tp every rank's VmHWM, polled from /proc. The page cache is warmed first, so
all read from memory. fp8check's bytecode is compiled first, as an installed package's is.

    python bench/load.py [--runs 3] [--profile]   # writes the checkpoints once into bench/out/ (~2 minutes)

--profile adds an in-process cProfile of one `fp8check load` of (1), its time grouped by what it does.
"""

from __future__ import annotations

import os
import sys

# bench/inspect.py shadows the stdlib's `inspect` for scripts run from bench/ (torch imports it).
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import argparse
import json
import re
import resource
import statistics
import subprocess
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT = os.path.join(HERE, "out", "llama-fp8-block-1gb")
# Llama-shaped, 8 layers: 0.49 GB of FP8 linear weights + 0.26 GB of BF16 embedding and LM head.
SIZES = dict(hidden_size=2048, intermediate_size=8192, num_hidden_layers=8, num_attention_heads=16,
             num_key_value_heads=4, vocab_size=32000, head_dim=128)
# The scaling pair: the same widths, 6 and 36 decoder layers (fp8check.synth's one factory, random weights).
SCALING = {layers: os.path.join(HERE, "out", f"llama-fp8-block-{layers}l") for layers in (6, 36)}
SCALING_SPEC = ("Spec(quant='ct-fp8-block', architecture='LlamaForCausalLM', model_type='llama', hidden=2048, "
                "intermediate=8192, heads=16, kv_heads=4, head_dim=128, vocab=32000, layers={layers}, data='random')")
QWEN3_32B_GB = 34.4  # RedHatAI/Qwen3-32B-FP8-block: 32.0 GB of FP8 linear weights + 2.4 GB BF16 embedding / head

READ_ALL = """
import sys
from safetensors import safe_open
total = 0
with safe_open(sys.argv[1] + "/model.safetensors", framework="pt") as f:
    for name in f.keys():  # get_tensor only maps the file: clone() reads every byte, once
        total += f.get_tensor(name).clone().nbytes
print(total)
"""

CT_DEQUANTIZE = """
import json, sys
import torch, torch.nn.functional as F
from compressed_tensors.quantization import QuantizationConfig
from compressed_tensors.quantization.lifecycle.forward import dequantize
from safetensors import safe_open
cfg = json.load(open(sys.argv[1] + "/config.json"))["quantization_config"]
args = QuantizationConfig.model_validate(cfg).config_groups["group_0"].weights
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
print(layers)
"""


# The peers ending as fp8check's console script ends (fp8check.cli.app.run_process): atexit's handlers, then
# os._exit, without the interpreter's teardown of torch (~0.4 s). A ratio against these leaves that saving out.
HARD_EXIT = "\nimport atexit, os\natexit._run_exitfuncs()\nsys.stdout.flush()\nos._exit(0)\n"


def build() -> None:
    """Each checkpoint is written in a child process: a parent that grew to GBs would pass its peak RSS on to every
    process it forks (ru_maxrss survives exec), and spoil the peers' figures."""
    if not os.path.exists(os.path.join(OUT, "model.safetensors")):
        os.makedirs(OUT, exist_ok=True)
        code = (f"import sys; sys.path.insert(0, {os.path.join(ROOT, 'tests')!r}); import ct_checkpoints; "
                f"ct_checkpoints.build({OUT!r}, 'FP8_BLOCK', **{SIZES!r})")
        subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for layers, folder in SCALING.items():
        if not os.path.exists(os.path.join(folder, "model.safetensors")):
            code = (f"from fp8check.synth import Spec, write_checkpoint; "
                    f"write_checkpoint({folder!r}, {SCALING_SPEC.format(layers=layers)})")
            subprocess.run([sys.executable, "-c", code], check=True)


def checkpoint_bytes(folder: str) -> int:
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder) if f.endswith(".safetensors"))


class Run:
    """One fresh process: wall and CPU seconds (its own and its reaped children's), stdout, and (when polled) the
    peak RSS of every descendant."""

    def __init__(self, cmd: list[str], poll_children: bool = False):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.children: dict[int, float] = {}
        stop = threading.Event()
        poller = threading.Thread(target=self._poll, args=(proc.pid, stop), daemon=True) if poll_children else None
        if poller:
            poller.start()
        out, err = proc.communicate()
        self.wall = time.perf_counter() - start
        stop.set()
        if poller:
            poller.join()
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {err[-2000:]}")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        self.out = out

    def _poll(self, pid: int, stop: threading.Event) -> None:
        """VmHWM of every descendant while it lives (a high-water mark: the last reading is its peak)."""
        while not stop.is_set():
            for child in _descendants(pid):
                try:
                    with open(f"/proc/{child}/status") as fh:
                        hwm = re.search(r"VmHWM:\s+(\d+) kB", fh.read())
                except OSError:
                    continue
                if hwm:
                    self.children[child] = max(self.children.get(child, 0.0), int(hwm.group(1)) / 1024)
            time.sleep(0.02)


def _descendants(pid: int) -> list[int]:
    children, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        try:
            with open(f"/proc/{parent}/task/{parent}/children") as fh:
                found = [int(p) for p in fh.read().split()]
        except OSError:
            found = []
        children += found
        frontier += found
    return children


def peak_rss(cmd: list[str]) -> float:
    """A process's own peak RSS (os.wait4: RUSAGE_CHILDREN keeps the largest child ever reaped, not this one)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return usage.ru_maxrss / 1024


def fp8check_cmd(folder: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "fp8check", "load", folder, "--platform", "xpu", "--device", "cpu", "--format",
            "json", *extra]


def median(values: list[float]) -> float:
    return statistics.median(values)


def peers(runs: int) -> tuple[dict, dict]:
    python = sys.executable
    cmds = {"fp8check load": fp8check_cmd(OUT), "(a) safetensors read": [python, "-c", READ_ALL, OUT],
            "(b) compressed-tensors dequantize + F.linear": [python, "-c", CT_DEQUANTIZE, OUT],
            "(a), ending as fp8check does": [python, "-c", READ_ALL + HARD_EXIT, OUT],
            "(b), ending as fp8check does": [python, "-c", CT_DEQUANTIZE + HARD_EXIT, OUT]}
    walls: dict[str, list[float]] = {name: [] for name in cmds}
    cpus: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            run = Run(cmd)
            walls[name].append(run.wall)
            cpus[name].append(run.cpu)
            if name == "fp8check load":
                assert json.loads(run.out)["ok"], "fp8check load failed on the benchmark checkpoint"
    rss = {name: peak_rss(cmd) for name, cmd in cmds.items()}
    return {name: (median(walls[name]), median(cpus[name]), rss[name]) for name in cmds}, walls


def scaling(runs: int) -> dict[int, tuple[float, float, float, float]]:
    """layers -> (GB, median wall, median CPU, peak RSS MB)."""
    figures = {}
    walls: dict[int, list[float]] = {layers: [] for layers in SCALING}
    cpus: dict[int, list[float]] = {layers: [] for layers in SCALING}
    for _ in range(runs):
        for layers, folder in SCALING.items():
            run = Run(fp8check_cmd(folder))
            assert json.loads(run.out)["ok"], f"fp8check load failed on {folder}"
            walls[layers].append(run.wall)
            cpus[layers].append(run.cpu)
    for layers, folder in SCALING.items():
        figures[layers] = (checkpoint_bytes(folder) / 1e9, median(walls[layers]), median(cpus[layers]),
                           peak_rss(fp8check_cmd(folder)))
    return figures


def tensor_parallel(runs: int) -> dict[int, dict]:
    """tp -> wall, CPU, the parent's and each rank's peak RSS, bytes read per rank, numerics ms per rank."""
    result = {}
    for tp in (1, 2):
        walls, cpus, ranks_rss, parent_rss, doc = [], [], [], [], None
        for _ in range(runs):
            run = Run(fp8check_cmd(OUT, "--tp", str(tp)), poll_children=tp > 1)
            doc = json.loads(run.out)
            assert doc["ok"], f"fp8check load --tp {tp} failed"
            walls.append(run.wall)
            cpus.append(run.cpu)
            ranks_rss.append(sorted(run.children.values(), reverse=True)[:tp])
        parent_rss.append(peak_rss(fp8check_cmd(OUT, "--tp", str(tp))))
        per_rank_bytes, per_rank_ms = [0] * tp, [0.0] * tp
        for layer in doc["layers"]:
            run = layer["load"]
            for r in run["ranks"] or [{"rank": 0, "bytes_read": run["bytes_read"], "ms": run["ms"]}]:
                per_rank_bytes[r["rank"]] += r["bytes_read"]
                per_rank_ms[r["rank"]] += r["ms"] or 0.0
        result[tp] = dict(wall=median(walls), cpu=median(cpus), parent_rss=parent_rss[0],
                          rank_rss=[max(r[i] for r in ranks_rss) for i in range(tp)] if tp > 1 else [],
                          rank_bytes=per_rank_bytes, rank_ms=per_rank_ms, bytes_read=doc["bytes_read"])
    return result


# What a cProfile'd function's own time is spent on, first match wins (--profile).
PHASES = (
    ("FP8 -> fp32 conversion and block scales (float16 route)", r"bitwise_|\bto\b|copy_|_values|mul_|scale_codes_"),
    ("GEMMs (reference, emulated kernel, model-dtype rows)", r"\bmm\b|bmm|matmul|_nn\.linear|fp32_products"),
    ("value checks (maxima over the bytes, aminmax)", r"amax|aminmax|fp8_code_problems|float_problems"),
    ("fusing shards (torch.cat of q/k/v, gate/up)", r"\bcat\b"),
    ("reading (safetensors maps, handles)", r"safe_open|get_tensor|get_slice|storage|clear"),
    ("activations: quantization and verdicts", r"per_token_group|dequantize_groups|relative_error|vector_norm|"
                                                r"isfinite|randn|double|judge|quantize"),
    ("importing and compiling fp8check's modules", r"marshal|compile|_find_and_load|exec_module|_imp"),
)


def profile() -> list[tuple[str, float]]:
    """One in-process `fp8check load` of OUT under cProfile, its own time grouped by PHASES (torch's import timed
    apart, before the profile)."""
    code = f"""
import cProfile, json, pstats, re, sys, time
start = time.perf_counter()
import torch
imported = time.perf_counter() - start
from fp8check import api
profiler = cProfile.Profile()
profiler.enable()
report = api.load({OUT!r}, platform="xpu", device="cpu")
profiler.disable()
phases = {[(name, pattern) for name, pattern in PHASES]!r}
totals = {{name: 0.0 for name, _ in phases}}
totals["other (inspect, Python glue)"] = 0.0
for (path, line, func), (cc, nc, own, cum, callers) in pstats.Stats(profiler).stats.items():
    name = next((n for n, p in phases if re.search(p, func)), "other (inspect, Python glue)")
    totals[name] += own
print(json.dumps({{"import torch": imported, **totals, "ok": report.ok}}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    figures = json.loads(proc.stdout)
    assert figures.pop("ok"), "fp8check load failed under the profiler"
    return list(figures.items())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    build()
    import compileall

    import fp8check

    compileall.compile_dir(os.path.dirname(fp8check.__file__), quiet=1)
    Run([sys.executable, "-c", READ_ALL, OUT])  # warm the page cache
    for folder in SCALING.values():
        Run([sys.executable, "-c", READ_ALL, folder])
    size = checkpoint_bytes(OUT)
    print(f"checkpoint (1): {size / 1e9:.2f} GB, runs={args.runs}, load average "
          f"{os.getloadavg()[0]:.1f}\n\n| | median wall | median CPU | peak RSS |\n|---|---|---|---|")
    figures, walls = peers(args.runs)
    for name, (wall, cpu, rss) in figures.items():
        print(f"| {name} | {wall:.2f} s | {cpu:.2f} s | {rss:.0f} MB |")
    ours, floor, today, floor_hard, today_hard = (figures[n] for n in figures)
    targets = [("fp8check / (a), wall", ours[0] / floor[0], "<= 2.0x", ours[0] / floor[0] <= 2.0),
               ("(b) / fp8check, wall", today[0] / ours[0], ">= 3.0x", today[0] / ours[0] >= 3.0),
               ("fp8check / (a), CPU", ours[1] / floor[1], "(CPU time, for a busy machine)", True),
               ("(b) / fp8check, CPU", today[1] / ours[1], "(CPU time, for a busy machine)", True),
               ("fp8check / (a) ending as fp8check does, wall", ours[0] / floor_hard[0], "(the exit left out)", True),
               ("(b) ending as fp8check does / fp8check, wall", today_hard[0] / ours[0], "(the exit left out)", True)]
    print()
    for label, ratio, target, met in targets:
        print(f"- {label}: {ratio:.2f}x {target}{'' if met else '  MISSED'}")
    # Each round runs the peers back to back, so one round's ratio is a paired figure: the spread over the rounds
    # says how much of a median's miss or margin is the VM's minute.
    names = list(figures)
    for label, top, bottom in (("fp8check / (a)", names[0], names[1]), ("(b) / fp8check", names[2], names[0])):
        rounds = [t / b for t, b in zip(walls[top], walls[bottom])]
        print(f"- {label}, wall, per round: " + ", ".join(f"{r:.2f}x" for r in rounds))
    rss_met = ours[2] <= 1024
    print(f"- fp8check peak RSS: {ours[2]:.0f} MB <= 1024 MB{'' if rss_met else '  MISSED'}")

    print("\nScaling (same family, fp8check.synth):\n\n| layers | GB | median wall | s per GB | median CPU "
          "| peak RSS |\n|---|---|---|---|---|---|")
    scaled = scaling(args.runs)
    for layers, (gb, wall, cpu, rss) in scaled.items():
        print(f"| {layers} | {gb:.2f} | {wall:.2f} s | {wall / gb:.2f} | {cpu:.2f} s | {rss:.0f} MB |")
    (gb0, wall0, _, rss0), (gb1, wall1, _, rss1) = scaled.values()
    per_gb = (wall1 - wall0) / (gb1 - gb0)
    fixed = wall0 - per_gb * gb0
    print(f"\nfit: {fixed:.2f} s + {per_gb:.2f} s per GB ({1 / per_gb:.2f} GB/s); peak RSS {rss0:.0f} -> {rss1:.0f} MB "
          f"for {gb1 / gb0:.1f}x the bytes; Qwen3-32B-FP8-block ({QWEN3_32B_GB} GB) on this machine: "
          f"~{fixed + per_gb * QWEN3_32B_GB:.0f} s")

    print("\n--tp (checkpoint (1)):\n\n| | median wall | median CPU (all processes) | peak RSS | bytes read per "
          "rank | numerics per rank |\n|---|---|---|---|---|---|")
    tp = tensor_parallel(args.runs)
    for n, f in tp.items():
        # wait4's peak is the largest of the process and the children it reaped; the ranks' own are polled
        rss = ("ranks " + ", ".join(f"{r:.0f}" for r in f["rank_rss"]) + f" MB (largest process "
               f"{f['parent_rss']:.0f} MB)" if f["rank_rss"] else f"{f['parent_rss']:.0f} MB")
        print(f"| TP {n} | {f['wall']:.2f} s | {f['cpu']:.2f} s | {rss} | "
              + ", ".join(f"{b / 1e6:.0f} MB" for b in f["rank_bytes"]) + " | "
              + ", ".join(f"{ms / 1000:.2f} s" for ms in f["rank_ms"]) + " |")
    print(f"\nTP 2 / TP 1: wall {tp[2]['wall'] / tp[1]['wall']:.2f}x, CPU {tp[2]['cpu'] / tp[1]['cpu']:.2f}x "
          f"(the ranks each import torch and rank 0 also reads the whole module for the unsharded reference)")
    if args.profile:
        print("\nProfile of one fp8check load of (1) (in-process cProfile, own time per function, grouped):\n")
        for name, seconds in profile():
            print(f"- {name}: {seconds:.2f} s")
    missed = not (all(met for *_, met in targets) and rss_met)
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
