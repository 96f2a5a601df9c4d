"""Regenerate the bundled tiny checkpoint (deterministic; needs torch): python examples/build.py"""

import os
import shutil

from fp8check.synth import Spec, write_checkpoint

HERE = os.path.dirname(os.path.abspath(__file__))
# A Qwen3-shaped model small enough to commit (~2 MB): block-FP8 weights, dynamic group-128 activations,
# head_dim 128 so that every TP split up to 2 stays block-aligned (the RedHatAI/Qwen3-32B-FP8-block layout).
TINY = Spec(quant="ct-fp8-block", architecture="Qwen3ForCausalLM", model_type="qwen3", hidden=256,
            intermediate=512, layers=2, heads=4, kv_heads=2, head_dim=128, vocab=512)

if __name__ == "__main__":
    target = os.path.join(HERE, "tiny-qwen3-fp8-block")
    shutil.rmtree(target, ignore_errors=True)
    write_checkpoint(target, TINY)
    print(f"wrote {target}")
