"""The route travels (issue 38): what a command decides about a module is decided once and carried. A spy counts
the format's hooks and the front door per command: inspect and load each settle the quantization config once
(front door), give each module its quantization once (Format.assign) and each FusedMoE its method once
(Format.moe_method); load's recipes read the Assignment, KernelRequest and MoEMethod the report carries."""

from __future__ import annotations

import collections
import dataclasses
from unittest import mock

import pytest

from fp8check import api
from fp8check.core.formats import registry
from fp8check.core.routing import inspect as inspect_stage
from fp8check.synth import Spec, write_checkpoint

pytest.importorskip("torch")


@pytest.fixture
def spied():
    """(calls, run): `calls` counts front-door runs and each hook per module name while `run(command)` runs."""
    calls: collections.Counter = collections.Counter()
    front_door = inspect_stage.front_door

    def counted_door(*args, **kwargs):
        calls["front door"] += 1
        return front_door(*args, **kwargs)

    def spy(fmt):
        def assign(module, quant):
            calls["assign", module.name] += 1
            return fmt.assign(module, quant)

        def moe_method(name, leaves, quant, profile):
            calls["moe_method", name] += 1
            return fmt.moe_method(name, leaves, quant, profile)
        return dataclasses.replace(fmt, assign=assign, moe_method=moe_method)

    def run(command):
        calls.clear()
        with mock.patch.dict(registry.FORMATS, {name: spy(fmt) for name, fmt in registry.FORMATS.items()}), \
                mock.patch.object(inspect_stage, "front_door", counted_door):
            return command()
    return calls, run


@pytest.mark.parametrize("quant", ["ct-fp8-block", "fp8-block", "ct-fp8-dynamic"])
def test_each_command_routes_each_module_once(tmp_path, spied, quant):
    calls, run = spied
    write_checkpoint(str(tmp_path), Spec(quant=quant, architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe",
                                         experts=4, layers=2))
    report = run(lambda: api.inspect(str(tmp_path), platform="xpu"))
    assert report.ok and report.moes
    linears = {layer.name for layer in report.layers}
    assert calls["front door"] == 1
    assert {name for (hook, *name) in calls if hook == "assign" for name in name} == linears
    assert {calls["assign", name] for name in linears} == {1}
    assert {calls["moe_method", moe.name] for moe in report.moes} == {1}

    loaded = run(lambda: api.load(str(tmp_path), platform="xpu", device="cpu"))
    assert loaded.ok and all(run.status == "ok" for run in loaded.runs)
    assert calls["front door"] == 1, "load settles the quant config once (inspect's), not again for its recipes"
    assert {calls["assign", name] for name in linears} == {1}, "load's recipes read the report's Assignment"
    assert {calls["moe_method", moe.name] for moe in report.moes} == {1}, "the experts' recipe reads the MoEMethod"
    assert all(layer.assignment is not None and layer.request is not None for layer in loaded.inspect.layers
               if layer.kernel is not None)
    assert all(moe.quant_method is not None for moe in loaded.inspect.moes)
