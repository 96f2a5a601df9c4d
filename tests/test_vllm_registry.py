"""Which architectures each release registers (fp8check.core.model.vllm_registry): a checkpoint whose release
registers none of its architectures is laid out by guess (not judged, the verdict says why), never by the table
entry of a later release's model file; and the committed data agrees with the releases' registry.py."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.checkpoint.local import open_local
from fp8check.core.model.layouts import ARCHITECTURES, GENERIC, model_arch
from fp8check.core.model.vllm_registry import SERVED_BY, serves
from fp8check.core.records import InspectOptions
from fp8check.core.report.verdicts import inspect_verdict, not_judged
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import PROFILES, select_profile

HERE = os.path.dirname(__file__)
STEP5 = dict(architecture="Step5ForCausalLM", model_type="step5", layers=2, head_dim=128, data="sparse")


def inspect(folder, vllm):
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm)))


def test_a_release_that_does_not_register_the_architecture_lays_it_out_by_guess(make_checkpoint):
    # Step-5 is registered from 0.33 on (models/step5): 0.32 would refuse it or try its Transformers backend, so
    # fp8check does not lay it out as 0.33's model file builds it, and every module is not judged.
    folder = make_checkpoint(**STEP5)
    assert SERVED_BY["Step5ForCausalLM"] == ("0.33", "0.34")
    on_033, on_032 = inspect(folder, "0.33"), inspect(folder, "0.32")
    assert GENERIC not in {layer.layout for layer in on_033.layers} and not not_judged(on_033)
    assert {layer.layout for layer in on_032.layers} == {GENERIC}
    assert len(not_judged(on_032)) == len(on_032.layers) + len(on_032.moes)
    verdict = inspect_verdict(on_032)
    assert "vLLM 0.32 registers no Step5ForCausalLM (registered by vLLM 0.33, 0.34)" in verdict
    assert "Model architectures ['Step5ForCausalLM'] are not supported for now" in verdict


def test_a_later_listed_architecture_the_release_registers_is_the_one_laid_out(make_checkpoint):
    # registry.py picks the first listed architecture its tables have: on 0.32 that is the second one.
    folder = make_checkpoint(**STEP5)
    config = open_local(folder).config._replace(architectures=("Step5ForCausalLM", "LlamaForCausalLM"))
    assert model_arch(config, select_profile("0.32")).source == ARCHITECTURES["LlamaForCausalLM"].source
    assert model_arch(config, select_profile("0.33")).source == ARCHITECTURES["Step5ForCausalLM"].source


def test_an_architecture_no_release_registers_says_so_and_fails_under_fail_on_not_judged(make_checkpoint):
    folder = make_checkpoint(architecture="NotARealModelForCausalLM", model_type="llama", layers=1)
    rep = inspect(folder, "0.34")
    assert rep.ok and "vLLM 0.34 registers no NotARealModelForCausalLM:" in inspect_verdict(rep)
    result = CliRunner().invoke(app, ["inspect", folder, "--fail-on", "not-judged", "--vllm", "0.34"])
    assert result.exit_code == 1, result.output


def test_every_table_entry_is_registered_by_the_newest_release():
    # A table entry the newest release does not register could never be laid out: a stale or misspelt key.
    assert [arch for arch in ARCHITECTURES if not serves(arch, PROFILES[0])] == []


@pytest.mark.skipif(not all(os.path.isdir(os.path.join(os.environ.get("FP8CHECK_VLLM_SRC", "/tmp/vllm-src"), v))
                            for v in ("0.25.0", "0.27.1", "0.34.0")),
                    reason="the releases' wheels are not unzipped here (tests/differential/run.py)")
def test_the_committed_registry_agrees_with_the_wheels():
    check = subprocess.run([sys.executable, os.path.join(HERE, "differential", "vllm_registry.py")],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout[-3000:] + check.stderr[-3000:]
