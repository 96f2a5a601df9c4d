"""Measure `load --against`'s statistics on checkpoints compressed-tensors writes, and set its thresholds by them.

For random (normal) and trained-like (heavy: Student-t(3) with outlier columns) BASE weights, every FP8 weight
strategy (FP8: tensor, FP8_DYNAMIC: channel, FP8_BLOCK: 128x128 block; static and dynamic activations do not change
the weights), compressed-tensors quantizes BASE (tests/test_against.ct_quantize) and fp8check compares:

- codes more than one step from BASE requantized with the stored scale ("far"), and the net one-step drift, per
  checkpoint tensor (the largest |drift| fraction of any tensor is what the threshold judges);
- off-by-one codes if only fp32 division were accepted (why three arithmetics are accepted, not one);
- weight and output errors against BASE (the full `load --against` run).

Then the sensitivity: codes made with a scale s, judged with s x ratio (what a swapped or transposed scale is), and
a simulated tool that quantizes with an fp32 scale and stores it in bf16 (what the drift allowance must admit).

    python bench/against.py [--hidden 1024]     # ~6 minutes on 2 cores; prints docs/commands.md's tables
"""

from __future__ import annotations

import os
import sys

# bench/inspect.py shadows the stdlib's `inspect` for scripts run from bench/ (torch imports it).
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import argparse
import math
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, ROOT)


def measure(base: str, quantized: str) -> dict:
    import torch
    from safetensors.torch import load_file

    from fp8check.core.checkpoint.local import open_local
    from fp8check.core.load import against
    from fp8check.core.load.driver import load_checkpoint
    from fp8check.core.records import InspectOptions, LoadOptions
    from fp8check.core.targets.platforms import parse_platform
    from fp8check.core.targets.profiles import select_profile

    stored, reference = load_file(os.path.join(quantized, "model.safetensors")), load_file(
        os.path.join(base, "model.safetensors"))
    codes = far = fp32_off = 0
    drift = 0.0
    for name, weight in stored.items():
        if weight.dtype != torch.float8_e4m3fn:
            continue
        scale = stored[name + "_scale"]
        block = (128, 128) if scale.dim() == 2 and scale.shape[1] > 1 else None
        n, k = weight.shape
        expanded = against._expand(scale, slice(0, n), n, k, n, block)
        far_t, drift_t = against.code_differences(weight, reference[name], expanded)
        by_fp32_division = against.requantized(reference[name], expanded, weight.dtype)[0]
        fp32 = against.ordinals(weight) - against.ordinals(by_fp32_division)
        codes += weight.numel()
        far += int(far_t.sum())
        fp32_off += int((fp32.abs() == 1).sum())
        drift = max(drift, abs(int(drift_t.sum())) / weight.numel())
    options = LoadOptions(InspectOptions(platform=parse_platform("h100"), profile=select_profile("latest")),
                          torch.device("cpu"), tokens=16, against=against.Base(base, open_local(base), lambda _: base))
    report = load_checkpoint(open_local(quantized), lambda _: quantized, options)
    figures = [run.against for run in report.runs if run.against is not None and run.against.codes_total]
    return dict(codes=codes, far=far, drift=drift, fp32_off=fp32_off / codes,
                weight=(min(f.weight_rel_error for f in figures), max(f.weight_rel_error for f in figures)),
                output=(min(f.output_rel_error for f in figures), max(f.output_rel_error for f in figures)),
                ok=report.ok)


def sensitivity() -> list[tuple[str, float, float]]:
    """(case, 8*log2(ratio) expected, drift measured) on one 1024x4096 bf16 tensor."""
    import torch

    from fp8check.core.load import against

    weight = torch.randn(1024, 4096, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16)
    scale = weight.float().abs().max() / 448
    codes = (weight.float() / scale).to(torch.float8_e4m3fn)
    rows = []
    for ratio in (1.002, 1.003, 1.004, 1.005, 1.01, 1.02, 1.05):
        _, drift = against.code_differences(codes, weight, (scale * ratio).reshape(1, 1))
        rows.append((f"scale x {ratio}", 8 * math.log2(ratio), float(drift.float().mean())))
    worst = 0.0  # fp32 scale, stored in bf16: the scale's own rounding, over 64 random scales
    for i in range(64):
        s = scale * (1 + (i + 0.5) / 64 * 2 ** -8)
        bf16 = s.to(torch.bfloat16).float()
        made = (weight.float() / s).clamp(-448, 448).to(torch.float8_e4m3fn)
        _, drift = against.code_differences(made, weight, bf16.reshape(1, 1))
        worst = max(worst, abs(float(drift.float().mean())))
    rows.append(("fp32 scale stored in bf16 (worst of 64)", 8 * math.log2(1 + 2 ** -9), worst))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=1024)
    args = parser.parse_args()
    from test_against import ct_quantize

    from fp8check.synth import write_checkpoint

    h = args.hidden
    print("| BASE weights | preset (strategy) | codes | far (> 1 step) | max net drift of a tensor | off by one if only "
          "fp32 division | weight err | output err | verdict |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for distribution in ("normal", "heavy"):
            base = write_checkpoint(os.path.join(tmp, distribution), quant=None, distribution=distribution, hidden=h,
                                    intermediate=2 * h, heads=h // 64, kv_heads=h // 128, vocab=1000)
            for preset, strategy in (("FP8", "tensor"), ("FP8_DYNAMIC", "channel"), ("FP8_BLOCK", "block")):
                m = measure(base, ct_quantize(base, os.path.join(tmp, f"{distribution}-{preset}"), preset))
                print(f"| {distribution} | {preset} ({strategy}) | {m['codes'] / 1e6:.1f} M | {m['far']} | "
                      f"{m['drift']:.2%} | {m['fp32_off']:.2%} | {m['weight'][0]:.2%}-{m['weight'][1]:.2%} | "
                      f"{m['output'][0]:.2%}-{m['output'][1]:.2%} | {'ok' if m['ok'] else 'FAIL'} |")
    print()
    print("| stored scale | drift expected (8 log2 ratio) | drift measured |")
    print("|---|---|---|")
    for case, expected, measured in sensitivity():
        print(f"| {case} | {expected:.2%} | {measured:.2%} |")


if __name__ == "__main__":
    main()
