"""Differential check: fp8check's prediction vs vLLM's own routing code, per release, per layer.

    python tests/differential/run.py --releases 0.27.1,0.28.0,0.33.0 [--markdown docs/fidelity.md]

Each release is the Python of its PyPI wheel, unzipped to $FP8CHECK_VLLM_SRC/<version> (default
/tmp/vllm-src; `pip download vllm==X --no-deps` then unzip), with vLLM's pure-Python dependencies in
$FP8CHECK_VLLM_DEPS (default /tmp/vllm-deps). vLLM runs in a subprocess per (release, platform)
(fp8check/core/routing/crosscheck.py --stub, which documents every stub); fp8check runs here on the same synthetic
checkpoints (fp8check.synth.write_checkpoint). Not part of the default pytest run: it needs the wheels.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import tempfile
from collections import Counter, defaultdict

from fp8check.core.checkpoint.local import open_local
from fp8check.core.records import InspectOptions
from fp8check.core.routing.crosscheck import compare, run_vllm
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.synth import Spec, write_checkpoint

SRC = os.environ.get("FP8CHECK_VLLM_SRC", "/tmp/vllm-src")
DEPS = os.environ.get("FP8CHECK_VLLM_DEPS", "/tmp/vllm-deps")
QUANTS = ("ct-fp8", "ct-fp8-dynamic", "ct-fp8-block", "ct-w8a16-fp8", "ct-w8a16-fp8-tensor", "ct-w8a16-fp8-block",
          "fp8-block", "fp8-static", "fp8-dynamic")
PLATFORMS = ("xpu", "cpu", "cuda:75", "cuda:80", "cuda:89", "cuda:90", "cuda:100", "cuda:120", "rocm:gfx942",
             "rocm:gfx90a")
TPS = (1, 2, 4)
SPECS = {
    # hidden 512 / intermediate 1024 / head_dim 128: every TP shard a whole number of 128-blocks, N % 64 == 0 and
    # K % 128 == 0 (DeepGEMM, FlashInfer).
    "aligned": Spec(hidden=512, intermediate=1024, heads=4, kv_heads=2, head_dim=128, layers=1, data="zeros"),
    # head_dim 64 / intermediate 320: KV shards and MLP shards that break 128-blocks at TP 2 and 4 (vLLM's
    # validate_fp8_block_shape messages) and widths DeepGEMM refuses.
    "ragged": Spec(hidden=256, intermediate=320, heads=4, kv_heads=2, head_dim=64, layers=1, data="zeros"),
}
LAYERS = ("self_attn.qkv_proj", "self_attn.o_proj", "mlp.gate_up_proj", "mlp.down_proj")


def vllm_cases(config: dict, tp: int, case_id: str) -> list[dict]:
    """The four decoder linears as vLLM builds them for this config."""
    hidden, inter = config["hidden_size"], config["intermediate_size"]
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    hd = config.get("head_dim") or hidden // heads
    quant, method = config["quantization_config"], config["quantization_config"]["quant_method"]
    base = {"tp": tp, "method": method, "quant_config": quant}
    p = "model.layers.0."
    return [
        dict(base, id=f"{case_id}|{p}self_attn.qkv_proj", prefix=p + "self_attn.qkv_proj", layer="QKVParallelLinear",
             hidden=hidden, head_dim=hd, heads=heads, kv_heads=kv),
        dict(base, id=f"{case_id}|{p}self_attn.o_proj", prefix=p + "self_attn.o_proj", layer="RowParallelLinear",
             input=heads * hd, output=hidden),
        dict(base, id=f"{case_id}|{p}mlp.gate_up_proj", prefix=p + "mlp.gate_up_proj",
             layer="MergedColumnParallelLinear", hidden=hidden, output_sizes=[inter, inter]),
        dict(base, id=f"{case_id}|{p}mlp.down_proj", prefix=p + "mlp.down_proj", layer="RowParallelLinear",
             input=inter, output=hidden),
    ]


def run_release(release: str, platform: str, cases: list[dict]) -> tuple[dict, dict[str, dict]]:
    env = dict(os.environ, PYTHONPATH=f"{SRC}/{release}:{DEPS}", VLLM_LOGGING_LEVEL="ERROR")
    env.pop("VLLM_DISABLED_KERNELS", None)
    return run_vllm(platform, cases, env=env, stub=True)


def fp8check_side(folder: str, release: str, platform: str, tp: int) -> dict[str, dict]:
    profile = select_profile(release)
    options = InspectOptions(platform=parse_platform(platform), profile=profile, tp=tp)  # stock-install defaults
    report = inspect_checkpoint(open_local(folder), options)
    return {layer.name: {"scheme": layer.scheme, "kernel": layer.kernel,
                         "error": layer.errors[0] if layer.errors else None} for layer in report.layers}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--releases", default="0.27.1,0.28.0,0.33.0")
    parser.add_argument("--platforms", default=",".join(PLATFORMS))
    parser.add_argument("--markdown", help="append the agreement table to this file")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    releases, platforms = args.releases.split(","), args.platforms.split(",")
    tmp = tempfile.mkdtemp(prefix="fp8check-diff-")
    checkpoints = [(name, q) for name in SPECS for q in QUANTS]
    folders = {(name, q): write_checkpoint(os.path.join(tmp, f"{name}-{q}"), SPECS[name], quant=q)
               for name, q in checkpoints}
    configs = {key: json.load(open(os.path.join(f, "config.json"), encoding="utf-8")) for key, f in folders.items()}
    cases = [c for key in checkpoints for tp in TPS for c in vllm_cases(configs[key], tp, f"{key[0]}-{key[1]}|tp{tp}")]
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for release in releases:
            for pl in platforms:
                jobs[(release, pl)] = pool.submit(run_release, release, pl, cases)
    table: dict[tuple[str, str], Counter] = defaultdict(Counter)
    disagreements: list[str] = []
    stubs = {}
    for (release, pl), job in jobs.items():
        try:
            stubs, theirs = job.result()
        except RuntimeError as exc:  # vLLM could not be imported under the stubs: a harness gap, reported
            disagreements.append(f"| {release} | {pl} | - | - | - | harness | vLLM did not start: "
                                 f"{str(exc).splitlines()[-1][:150]} | |")
            continue
        for key in checkpoints:
            q = f"{key[0]}-{key[1]}"
            for tp in TPS:
                ours = fp8check_side(folders[key], release, pl, tp)
                for layer in LAYERS:
                    name = f"model.layers.0.{layer}"
                    result = theirs[f"{q}|tp{tp}|{name}"]
                    diffs = compare(ours[name]["scheme"], ours[name]["kernel"], ours[name]["error"], result)
                    table[(release, pl)]["cases"] += 1
                    table[(release, pl)]["agree"] += not diffs
                    if diffs == ("error",) and ours[name]["kernel"] == result["kernel"]:
                        # Same scheme and kernel, and fp8check adds the kernel's predicted post-load failure
                        # (Kernel.runtime_error), which vLLM only raises after construction: explained, listed.
                        table[(release, pl)]["post-load"] += 1
                        diffs = ("post-load prediction",)
                    if diffs:
                        disagreements.append(
                            f"| {release} | {pl} | {q} | {tp} | {layer} | {', '.join(diffs)} | "
                            f"{ours[name]['scheme']} / {ours[name]['kernel']} / {(ours[name]['error'] or '')[:90]} | "
                            f"{result['scheme']} / {result['kernel']} / {(result['error'] or '')[:90]} |")
    lines = ["| release | platform | layers | agree | post-load prediction | % agree |", "|---|---|---|---|---|---|"]
    for (release, pl), counts in sorted(table.items()):
        lines.append(f"| {release} | {pl} | {counts['cases']} | {counts['agree']} | {counts['post-load']} | "
                     f"{100 * counts['agree'] / counts['cases']:.1f} |")
    out = "\n".join(lines)
    if disagreements:
        out += ("\n\n| release | platform | checkpoint | TP | layer | differs | fp8check scheme / kernel / error | "
                "vLLM scheme / kernel / error |\n|---|---|---|---|---|---|---|---|\n" + "\n".join(disagreements))
    out += "\n\nStubs (vLLM side) and their risk:\n" + "\n".join(f"- `{k}`: {v}" for k, v in stubs.items())
    print(out)
    if args.markdown:
        with open(args.markdown, "a", encoding="utf-8") as fh:
            fh.write(out + "\n")
    unexplained = [row for row in disagreements if "post-load prediction" not in row]
    return 0 if not unexplained else 1


if __name__ == "__main__":
    raise SystemExit(main())
