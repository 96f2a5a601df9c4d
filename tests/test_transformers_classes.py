"""The transformers classes each profile assumes (fp8check.core.model.transformers_classes): the committed data
agrees with the transformers it was read from, names a transformers for the releases the suite measures, and agrees
with the hand-kept plans of the registry's _TRANSFORMERS_SUPPORTED_MODELS (layouts.TP_PLANS)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from fp8check.core.model.layouts import TP_PLANS
from fp8check.core.model.transformers_classes import CLASSES, TRANSFORMERS

HERE = os.path.dirname(__file__)
SRC = os.environ.get("FP8CHECK_TRANSFORMERS_SRC", "/tmp/transformers-src")
VLLM_SRC = os.environ.get("FP8CHECK_VLLM_SRC", "/tmp/vllm-src")  # each profile's release runs its MoE fuser


def test_each_profile_with_data_names_a_transformers_the_data_has():
    assert set(TRANSFORMERS.values()) == set(CLASSES)
    assert {"0.33", "0.34"} <= set(TRANSFORMERS)


@pytest.mark.parametrize("version", sorted(CLASSES))
def test_the_hand_kept_plans_agree_with_the_generated_ones(version):
    # TP_PLANS (copied from transformers 5.24) holds a decoder layer's nn.Linear entries; the generated plan every
    # entry: those of a layer's linears by tail agree, in each transformers the profiles assume.
    for arch, plan in TP_PLANS.items():
        theirs = CLASSES[version][arch].tp_plan or {}
        linears = {key.removeprefix("layers.*."): style for key, style in theirs.items()
                   if key.startswith("layers.*.") and "mlp.experts" not in key and not key.endswith("_norm")}
        assert plan == linears, (arch, version)


def test_a_text_class_whose_attention_is_its_own_dispatches_none():
    # DiffLlama's attention computes its own (differential) attention: no module calls the interface.
    for classes in CLASSES.values():
        assert classes["DiffLlamaForCausalLM"].attention == ()
        assert classes["LlamaForCausalLM"].attention == ("self_attn",)


@pytest.mark.skipif(not all(os.path.isdir(os.path.join(SRC, v)) for v in set(TRANSFORMERS.values()))
                    or not all(os.path.isdir(os.path.join(VLLM_SRC, f"{p}.0")) for p in TRANSFORMERS),
                    reason="the profiles' transformers or vLLM wheels are not unzipped here "
                           "(tests/differential/transformers_classes.py)")
def test_the_committed_classes_agree_with_transformers():
    check = subprocess.run([sys.executable, os.path.join(HERE, "differential", "transformers_classes.py")],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-3000:]
