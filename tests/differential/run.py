"""Differential check: fp8check's prediction vs vLLM's own routing code, per release, per layer.

    python tests/differential/run.py --releases 0.27.1,0.28.0,0.33.0 [--markdown docs/fidelity.md]
        [--stand-in PROFILE]   (fp8check's rules for a release newer than its newest profile, e.g. latest)

Two grids. The CT / native-fp8 grid (QUANTS x PLATFORMS x TPS) as recorded since issue 16; the grid of the other
formats and the online methods (FORMAT_QUANTS and ONLINE_METHODS on a bf16 checkpoint x FORMAT_PLATFORMS x
FORMAT_TPS; 0.27.1 only on xpu, where its allow-list first appears). Every checkpoint goes through vLLM's own front
door first (crosscheck.vllm_front_door: detection, allow-list, deprecation, capability and dtype gates,
get_quant_config), compared as one "front door" row per checkpoint and TP; its four linears are compared when both
sides pass it.

Each release is the Python of its PyPI wheel, unzipped to $FP8CHECK_VLLM_SRC/<version> (default
/tmp/vllm-src; `pip download vllm==X --no-deps` then unzip), with vLLM's pure-Python dependencies in
$FP8CHECK_VLLM_DEPS (default /tmp/vllm-deps). vLLM runs in a subprocess per (release, platform)
(fp8check/core/routing/crosscheck.py --stub, which documents every stub); fp8check runs here on the same synthetic
checkpoints (fp8check.synth.write_checkpoint). Not part of the default pytest run: it needs the wheels.
linear_suite() is the run as a function (new_release.py runs it on a new release); main() prints it.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import tempfile
from collections import Counter, defaultdict
from typing import NamedTuple

import fp8check
from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import InputError
from fp8check.core.records import InspectOptions
from fp8check.core.routing.crosscheck import compare, run_vllm, vllm_error
from fp8check.core.routing.inspect import front_door_of, inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.synth import Spec, write_checkpoint

SRC = os.environ.get("FP8CHECK_VLLM_SRC", "/tmp/vllm-src")
# The wheel each rule profile's release was read from (patch releases route as their .0; 0.27's wheel is 0.27.1).
PROFILE_WHEELS = {"0.25": "0.25.0", "0.26": "0.26.0", "0.27": "0.27.1", "0.28": "0.28.0", "0.29": "0.29.0",
                  "0.30": "0.30.0", "0.31": "0.31.0", "0.32": "0.32.0", "0.33": "0.33.0", "0.34": "0.34.0"}
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
FORMAT_QUANTS = ("modelopt-fp8", "modelopt-fp8-legacy", "modelopt-pcpt", "modelopt-pbwo", "quark-fp8", "quark-ptpc",
                 "quark-fp8-block", "inc-fp8-block", "fbgemm-fp8", "modelopt-mxfp8", "ct-mxfp8",
                 "w4afp8")  # 0.34's method (before 0.34: the unknown-method refusal on both sides)
# --quantization on an unquantized (bf16) checkpoint.
ONLINE_METHODS = ("fp8", "fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "mxfp8")
FORMAT_PLATFORMS = ("xpu", "cpu", "cuda:80", "cuda:89", "cuda:90", "cuda:100", "rocm:gfx942")
FORMAT_TPS = (1, 2)
FORMAT_RELEASE_PLATFORMS = {"0.27.1": ("xpu",)}  # releases run on fewer platforms than FORMAT_PLATFORMS
DEPRECATED_QUANTS = ("fbgemm-fp8",)  # run with --allow-deprecated-quantization on both sides
LAYERS = ("self_attn.qkv_proj", "self_attn.o_proj", "mlp.gate_up_proj", "mlp.down_proj")


class Checkpoint(NamedTuple):
    """One synthetic checkpoint as served: its folder and the flags both sides get."""

    label: str                  # shape-quant (quant "bf16+METHOD" for an online method)
    folder: str
    quantization: str | None    # --quantization
    allow_deprecated: bool      # --allow-deprecated-quantization


def vllm_cases(config: dict, tp: int, case_id: str, ckpt: Checkpoint) -> list[dict]:
    """The four decoder linears as vLLM builds them for this checkpoint, each behind vLLM's front door."""
    hidden, inter = config["hidden_size"], config["intermediate_size"]
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    hd = config.get("head_dim") or hidden // heads
    base = {"tp": tp, "checkpoint": {"folder": ckpt.folder, "quantization": ckpt.quantization,
                                     "allow_deprecated": ckpt.allow_deprecated}}
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


def release_env(release: str) -> dict[str, str]:
    """The environment of a vLLM-side subprocess: the release's unzipped wheel, then vLLM's pure-Python deps."""
    # fp8check's side of it is this process's fp8check (a worktree's, when run from one), not the installed one.
    here = os.path.dirname(os.path.dirname(os.path.abspath(fp8check.__file__)))
    env = dict(os.environ, PYTHONPATH=f"{SRC}/{release}:{DEPS}:{here}", VLLM_LOGGING_LEVEL="ERROR")
    env.pop("VLLM_DISABLED_KERNELS", None)
    return env


def run_release(release: str, platform: str, cases: list[dict]) -> tuple[dict, dict[str, dict]]:
    return run_vllm(platform, cases, env=release_env(release), stub=True)


def profile_for(release: str, stand_in: str | None = None):
    """fp8check's rule profile for `release`; for a release it has no profile for (newer than its newest), the
    profile `stand_in` names, when given (--stand-in: a new release checked with the newest rules)."""
    try:
        return select_profile(release)
    except InputError:
        if stand_in is None:
            raise
        return select_profile(stand_in)


def fp8check_side(ckpt: Checkpoint, profile, platform: str, tp: int) -> tuple[dict, dict[str, dict]]:
    """fp8check's front door ({"scheme": its config's method, "error"}) and its layers, for one checkpoint."""
    options = InspectOptions(platform=parse_platform(platform), profile=profile, tp=tp,
                             quantization=ckpt.quantization, allow_deprecated_quantization=ckpt.allow_deprecated)
    checkpoint = open_local(ckpt.folder)
    door = front_door_of(checkpoint, options)
    ours = {"scheme": door.config_name, "kernel": None,
            "error": door.errors[0] if door.errors else None}
    if door.errors:
        return ours, {}
    try:
        report = inspect_checkpoint(checkpoint, options)
    except InputError as exc:  # a method outside fp8check's scope: its refusal stands for the front door's
        return dict(ours, error=str(exc)), {}
    return ours, {layer.name: {"scheme": layer.scheme, "kernel": layer.kernel,
                               "error": layer.errors[0] if layer.errors else None} for layer in report.layers}


def grid(release: str, platforms: list[str], shape: str, quant: str) -> list[str]:
    """The platforms a checkpoint is compared on in `release`."""
    if quant in QUANTS:
        return platforms
    allowed = FORMAT_RELEASE_PLATFORMS.get(release, FORMAT_PLATFORMS)
    return [pl for pl in platforms if pl in allowed]


def tps_of(quant: str) -> tuple[int, ...]:
    return TPS if quant in QUANTS else FORMAT_TPS


def write_checkpoints(tmp: str, quants: list[str], online: list[str]) -> dict[tuple[str, str], Checkpoint]:
    """Every (shape, quant) checkpoint; online methods share one bf16 checkpoint per shape."""
    out = {}
    for shape, spec in SPECS.items():
        for q in quants:
            folder = write_checkpoint(os.path.join(tmp, f"{shape}-{q}"), spec, quant=q)
            out[(shape, q)] = Checkpoint(f"{shape}-{q}", folder, None, q in DEPRECATED_QUANTS)
        if online:
            folder = write_checkpoint(os.path.join(tmp, f"{shape}-bf16"), spec, quant=None)
            for method in online:
                out[(shape, f"bf16+{method}")] = Checkpoint(f"{shape}-bf16+{method}", folder, method, False)
    return out


def format_of(quant: str) -> str:
    """The table's format column: the format family of a synth quant name."""
    if quant.startswith("bf16+"):
        return "online"
    if quant.endswith("mxfp8"):
        return "mxfp8"
    family = quant.split("-")[0]
    return {"ct": "compressed-tensors"}.get(family, family)


class Difference(NamedTuple):
    """One compared row that is not agreement, of either suite (run.py's linears, whole_model.py's modules)."""

    suite: str                  # "linear" or "whole model"
    release: str
    platform: str
    case: str                   # the checkpoint and how it is served (TP, format, --kv-cache-dtype)
    module: str                 # a layer or module name, FRONT_DOOR_ROW, "(model)", or HARNESS_ROW
    kind: str                   # what the module is: front door, linear, moe, attention, embedding, model, harness
    differs: tuple[str, ...]    # scheme, kernel, error, error text, backend, class, only in vLLM, ...
    ours: str                   # fp8check's answer, as the tables print it
    theirs: str                 # vLLM's
    verdict: str = "differs"    # or a known difference: "post-load prediction", "explained", "open"
    detail: str = ""            # for an error text both sides give in other words: where they part (divergence)


class Suite(NamedTuple):
    """A suite's run: its Markdown tables, every row that is not agreement, and whether it passes."""

    tables: str
    differences: list[Difference]
    stubs: dict
    dump: object                # what --dump writes
    passed: bool


FRONT_DOOR_ROW = "front door"
HARNESS_ROW = "-"  # vLLM did not start under the stubs


def divergence(ours: str, theirs: str) -> str:
    """Where two texts part: the word just before, and each side's text between their common start and their
    common end (the cells of the tables show only the start of a long message)."""
    start = len(os.path.commonprefix([ours, theirs]))
    end = len(os.path.commonprefix([ours[start:][::-1], theirs[start:][::-1]]))
    word = re.split(r"[\s,(\[{]", ours[:start])[-1][-30:]
    return (f"after `{word}`: fp8check `{ours[start:len(ours) - end][:100]}`, "
            f"vLLM `{theirs[start:len(theirs) - end][:100]}`")


def _error_detail(diffs: tuple[str, ...], ours: dict, theirs: dict) -> str:
    return divergence(ours["error"], vllm_error(theirs["error"])) if "error text" in diffs else ""


def did_not_start(suite: str, release: str, platform: str, exc: RuntimeError) -> Difference:
    """The row of a vLLM-side subprocess that answered nothing (an import under the stubs failed)."""
    return Difference(suite, release, platform, "-", HARNESS_ROW, "harness", ("harness",), "-",
                      f"vLLM did not start: {str(exc).splitlines()[-1][:150]}")


def linear_suite(releases: list[str], platforms: list[str], quants: list[str], online: list[str], jobs: int = 2,
                 stand_in: str | None = None) -> Suite:
    """Both grids on every release and platform; passes when every row agrees or is a post-load prediction."""
    checkpoints = write_checkpoints(tempfile.mkdtemp(prefix="fp8check-diff-"), quants, online)
    configs = {key: json.load(open(os.path.join(c.folder, "config.json"), encoding="utf-8"))
               for key, c in checkpoints.items()}
    jobs_ = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for release in releases:
            for pl in platforms:
                keys = [key for key in checkpoints if pl in grid(release, platforms, *key)]
                cases = [c for key in keys for tp in tps_of(key[1])
                         for c in vllm_cases(configs[key], tp, f"{checkpoints[key].label}|tp{tp}", checkpoints[key])]
                if cases:
                    jobs_[(release, pl)] = (keys, pool.submit(run_release, release, pl, cases))
    table: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    differences: list[Difference] = []
    stubs, answers = {}, {}
    for (release, pl), (keys, job) in jobs_.items():
        profile = profile_for(release, stand_in)
        try:
            stubs, theirs = job.result()
            answers[f"{release}|{pl}"] = theirs
        except RuntimeError as exc:  # vLLM could not be imported under the stubs: a harness gap, reported
            differences.append(did_not_start("linear", release, pl, exc))
            continue
        for key in keys:
            ckpt = checkpoints[key]
            counts = table[(release, pl, format_of(key[1]))]
            for tp in tps_of(key[1]):
                door, ours = fp8check_side(ckpt, profile, pl, tp)
                first = theirs[f"{ckpt.label}|tp{tp}|model.layers.0.{LAYERS[0]}"]
                their_door = ({"scheme": None, "kernel": None, "error": first["error"]} if first.get("stage")
                              else {"scheme": first.get("config"), "kernel": None, "error": None})
                diffs = compare(door["scheme"], None, door["error"], their_door)
                counts["front doors"] += 1
                counts["front doors agree"] += not diffs
                if diffs:
                    differences.append(Difference("linear", release, pl, f"{ckpt.label} TP{tp}", FRONT_DOOR_ROW,
                                                  FRONT_DOOR_ROW, diffs, _answer(door), _answer(their_door),
                                                  detail=_error_detail(diffs, door, their_door)))
                if first.get("stage") or door["error"]:
                    continue
                for layer in LAYERS:
                    name = f"model.layers.0.{layer}"
                    result = theirs[f"{ckpt.label}|tp{tp}|{name}"]
                    diffs = compare(ours[name]["scheme"], ours[name]["kernel"], ours[name]["error"], result)
                    counts["cases"] += 1
                    counts["agree"] += not diffs
                    verdict = "differs"
                    if diffs == ("error",) and ours[name]["kernel"] == result["kernel"]:
                        # Same scheme and kernel, and fp8check adds the kernel's predicted post-load failure
                        # (Kernel.runtime_error), which vLLM only raises after construction: explained, listed.
                        counts["post-load"] += 1
                        diffs, verdict = ("post-load prediction",), "post-load prediction"
                    if diffs:
                        differences.append(Difference("linear", release, pl, f"{ckpt.label} TP{tp}", layer, "linear",
                                                      diffs, _answer(ours[name]), _answer(result), verdict,
                                                      _error_detail(diffs, ours[name], result)))
    lines = ["| release | platform | format | front doors | agree | layers | agree | post-load prediction | % agree |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (release, pl, fmt), counts in sorted(table.items()):
        rows, agree = counts["front doors"] + counts["cases"], counts["front doors agree"] + counts["agree"]
        lines.append(f"| {release} | {pl} | {fmt} | {counts['front doors']} | {counts['front doors agree']} | "
                     f"{counts['cases']} | {counts['agree']} | {counts['post-load']} | {100 * agree / rows:.1f} |")
    out = "\n".join(lines) + difference_table(differences, "scheme / kernel / error")
    return Suite(out, differences, stubs, answers, all(d.verdict != "differs" for d in differences))


def difference_table(differences: list[Difference], answer: str) -> str:
    """The rows that are not agreement, one per line ("" when there are none); `answer` names the answer cells."""
    if not differences:
        return ""
    return (f"\n\n| release | platform | case | module | differs | fp8check {answer} | vLLM {answer} | "
            "where the error texts part |\n|---|---|---|---|---|---|---|---|\n"
            + "\n".join(f"| {d.release} | {d.platform} | {d.case} | {d.module} | {', '.join(d.differs)} | "
                        f"{d.ours} | {d.theirs} | {d.detail} |" for d in differences))


def _answer(side: dict) -> str:
    """A scheme / kernel / error cell of the tables."""
    return f"{side['scheme']} / {side['kernel'] or '-'} / {(side['error'] or '')[:160]}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--releases", default="0.27.1,0.28.0,0.33.0")
    parser.add_argument("--platforms", default=",".join(dict.fromkeys(PLATFORMS + FORMAT_PLATFORMS)))
    parser.add_argument("--quants", default=",".join(QUANTS + FORMAT_QUANTS), help="synth quant names")
    parser.add_argument("--online", default=",".join(ONLINE_METHODS), help="--quantization values on bf16")
    parser.add_argument("--markdown", help="append the agreement table to this file")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--dump", help="write vLLM's answer for every case to this JSON file (for format owners)")
    add_stand_in(parser)
    args = parser.parse_args()
    suite = linear_suite(args.releases.split(","), args.platforms.split(","), [q for q in args.quants.split(",") if q],
                         [m for m in args.online.split(",") if m], args.jobs, args.stand_in)
    publish(suite.tables, suite.stubs, suite.dump, args.dump, args.markdown)
    return 0 if suite.passed else 1


def add_stand_in(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stand-in", metavar="PROFILE",
                        help="fp8check's rule profile for a release it has no profile for (newer than its newest), "
                             "e.g. latest: a new release checked with the newest rules")


def publish(out: str, stubs: dict, answers, dump: str | None, markdown: str | None) -> None:
    """Print a run's tables and the stubs it relied on; --dump writes `answers` as JSON, --markdown appends."""
    out += "\n\nStubs (vLLM side) and their risk:\n" + "\n".join(f"- `{k}`: {v}" for k, v in stubs.items())
    print(out)
    if dump:
        with open(dump, "w", encoding="utf-8") as fh:
            json.dump(answers, fh, indent=1)
    if markdown:
        with open(markdown, "a", encoding="utf-8") as fh:
            fh.write(out + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
