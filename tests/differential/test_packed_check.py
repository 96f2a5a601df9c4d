"""packed_check's comparison of fp8check's layout table with vLLM's class facts (always, on hand-made facts), and
the run against the wheels (opt-in: FP8CHECK_WHOLE_MODEL=0.33.0,0.34.0)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from fp8check.core.model.layouts import ARCHITECTURES, RETIRED

sys.path.insert(0, os.path.dirname(__file__))
from packed_check import EXPECTED, compare  # noqa: E402

LLAMA = ARCHITECTURES["LlamaForCausalLM"]
QWEN3_NEXT = ARCHITECTURES["Qwen3NextForCausalLM"]


def facts(source: str = "llama.py", packed=None, dropped=(), **extra) -> dict:
    """One platform's answer of crosscheck_layouts.class_facts for a class that loaded."""
    packed = {"qkv_proj": ["q_proj", "k_proj", "v_proj"], "gate_up_proj": ["gate_proj", "up_proj"]} \
        if packed is None else packed
    return {"registered": True, "registry_source": source, "cls": "LlamaForCausalLM", "error": None,
            "source": source, "bases": [], "packed": packed, "init": {"added": {}, "reassigned": []},
            "dropped": [list(d) for d in dropped], **extra}


def failing(findings) -> list[str]:
    return [f.what for f in findings if f.fails]


def test_a_class_that_agrees_has_no_finding():
    assert compare("LlamaForCausalLM", LLAMA, None, {"cuda:90": facts(), "cpu": facts()}) == []
    assert compare("Qwen3NextForCausalLM", QWEN3_NEXT, None, {"cuda:90": facts(
        "qwen3_next.py", packed={k: list(v) for k, v in QWEN3_NEXT.packed.items()},
        dropped=[("prefix", "mtp.", "Qwen3NextForCausalLM")])}) == []


def test_a_changed_shard_list_differs():
    theirs = facts(packed={"qkv_proj": ["q_proj", "k_proj", "v_proj"], "gate_up_proj": ["up_proj", "gate_proj"]})
    findings = compare("LlamaForCausalLM", LLAMA, None, {"cuda:90": theirs})
    assert failing(findings) == ["packed:gate_up_proj"]
    assert "fp8check (gate_proj, up_proj), vLLM (up_proj, gate_proj)" in findings[0].text


def test_a_fused_entry_missing_on_either_side_differs():
    only_ours = compare("LlamaForCausalLM", LLAMA, None,
                        {"cuda:90": facts(packed={"qkv_proj": ["q_proj", "k_proj", "v_proj"]})})
    assert failing(only_ours) == ["packed:gate_up_proj"] and "only in fp8check" in only_ours[0].text
    new_in_vllm = facts(packed={**facts()["packed"], "qkv": ["qkv"]})
    only_theirs = compare("LlamaForCausalLM", LLAMA, None, {"cuda:90": new_in_vllm})
    assert failing(only_theirs) == ["packed:qkv"] and "only in vLLM's class" in only_theirs[0].text
    absent = compare("LlamaForCausalLM", LLAMA, None, {"cuda:90": dict(facts(), packed=None)})
    assert sorted(failing(absent)) == ["packed:gate_up_proj", "packed:qkv_proj"]


def test_a_tower_entry_the_class_lacks_differs():
    arch = ARCHITECTURES["Qwen2_5_VLForConditionalGeneration"]
    theirs = facts("qwen2_5_vl.py", packed={k: list(v) for k, v in arch.packed.items()},
                   renames=[list(r) for r in arch.hf_to_vllm])
    assert failing(compare("Qwen2_5_VLForConditionalGeneration", arch, None, {"cuda:90": theirs})) == []
    tower = arch.towers[0]._replace(packed={"qkv": ("q", "k", "v")})
    findings = compare("Qwen2_5_VLForConditionalGeneration", arch._replace(towers=(tower,)), None,
                       {"cuda:90": theirs})
    assert failing(findings) == ["tower packed:qkv"] and "vLLM's class: (qkv)" in findings[0].text


def test_a_new_dropped_name_differs_and_so_does_a_spec_prefix_vllm_no_longer_drops():
    new = compare("LlamaForCausalLM", LLAMA, None,
                  {"cuda:90": facts(dropped=[("prefix", "mtp.", "LlamaForCausalLM")])})
    assert failing(new) == ["dropped:prefix:mtp."] and "fp8check's spec_prefix: None" in new[0].text
    theirs = facts("qwen3_next.py", packed={k: list(v) for k, v in QWEN3_NEXT.packed.items()})
    gone = compare("Qwen3NextForCausalLM", QWEN3_NEXT, None, {"cuda:90": theirs})
    assert failing(gone) == ["dropped:prefix:mtp."] and "no hf_to_vllm_mapper" in gone[0].text
    other_kind = compare("Qwen3NextForCausalLM", QWEN3_NEXT, None,
                         {"cuda:90": dict(theirs, dropped=[["substr", "mtp", "Qwen3NextModel"]])})
    assert sorted(failing(other_kind)) == ["dropped:prefix:mtp.", "dropped:substr:mtp"]


def test_a_changed_rename_differs():
    # The renames name vLLM's modules and map the quant config's lists: any change in order, kind or target differs.
    arch = ARCHITECTURES["Qwen2_5_VLForConditionalGeneration"]
    packed = {k: list(v) for k, v in arch.packed.items()}
    renames = [list(r) for r in arch.hf_to_vllm]
    assert failing(compare("Qwen2_5_VLForConditionalGeneration", arch, None,
                           {"cuda:90": facts("qwen2_5_vl.py", packed=packed, renames=renames)})) == []
    for changed in (renames[::-1], renames[:-1], [[*renames[0][:2], "text_model."], *renames[1:]]):
        findings = compare("Qwen2_5_VLForConditionalGeneration", arch, None,
                           {"cuda:90": facts("qwen2_5_vl.py", packed=packed, renames=changed)})
        assert failing(findings) == ["renames"] and "fp8check's hf_to_vllm" in findings[0].text
    assert failing(compare("LlamaForCausalLM", LLAMA, None,
                           {"cuda:90": facts(renames=[["prefix", "model.", "text."]])})) == ["renames"]


def test_expected_exceptions_are_listed_not_failed():
    deepseek = ARCHITECTURES["DeepseekV32ForCausalLM"]
    theirs = facts("models/deepseek_v32", packed={"gate_up_proj": ["gate_proj", "up_proj"]},
                   init={"added": {"qkv_proj": {"shards": ["q_proj", "k_proj", "v_proj"], "when": "self.use_mha",
                                                "owner": "DeepseekV2ForCausalLM"}}, "reassigned": []})
    findings = compare("DeepseekV32ForCausalLM", deepseek, None, {"cuda:90": theirs})
    assert failing(findings) == []
    assert {f.what: f.listed for f in findings} == {
        "packed:qkv_proj": EXPECTED[("DeepseekV32ForCausalLM", "packed:qkv_proj")],
        "packed:wk_weights_proj": EXPECTED[("DeepseekV32ForCausalLM", "packed:wk_weights_proj")]}
    assert "__init__ adds `qkv_proj` = (q_proj, k_proj, v_proj) when `self.use_mha`" in findings[0].text
    # The same difference on an architecture EXPECTED does not list fails.
    assert failing(compare("LlamaForCausalLM", LLAMA, None, {"cuda:90": facts(packed={})})) == \
        ["packed:gate_up_proj", "packed:qkv_proj"]


def test_a_difference_on_some_platforms_names_them():
    findings = compare("LlamaForCausalLM", LLAMA, None, {"cuda:90": facts(packed={"qkv_proj": ["q_proj", "k_proj",
                                                                                              "v_proj"]}),
                                                         "cpu": facts()})
    assert [(f.what, f.platforms) for f in findings] == [("packed:gate_up_proj", ("cuda:90",))]


def test_a_source_file_per_platform_is_a_note_one_other_file_a_difference():
    per_platform = compare("LlamaForCausalLM", LLAMA, None, {"cuda:90": facts("models/llama/nvidia/model.py"),
                                                             "cpu": facts("llama.py")})
    assert failing(per_platform) == [] and [f.what for f in per_platform if f.note] == ["source"]
    moved = compare("LlamaForCausalLM", LLAMA, None, {"cuda:90": facts("llama3.py")})
    assert failing(moved) == ["source"] and "fp8check names llama.py; vLLM's class is in llama3.py" in moved[0].text
    base = compare("LlamaForCausalLM", LLAMA, None, {"cuda:90": facts("llama3.py", bases=["llama.py"])})
    assert base == []


def test_an_architecture_gone_from_the_registry_differs_unless_retired():
    gone = {"cuda:90": {"registered": False, "previously_supported": "0.33.0"}}
    findings = compare("LlamaForCausalLM", LLAMA, None, gone)
    assert failing(findings) == ["registry"] and "last supported in 0.33.0" in findings[0].text
    keye = "KeyeForConditionalGeneration"
    assert compare(keye, None, RETIRED[keye], gone) == []
    assert failing(compare(keye, None, RETIRED[keye], {"cuda:90": facts("keye.py")})) == ["registry"]
    assert failing(compare(keye, None, RETIRED[keye],
                           {"cuda:90": {"registered": False, "previously_supported": "0.32.0"}})) == ["registry"]
    assert compare(keye, None, None, {"cuda:90": facts("keye.py")}) == []  # served: not yet retired


def test_a_class_vllm_cannot_load_differs():
    broken = dict(facts(), error="ImportError: cannot import name 'X'")
    assert failing(compare("LlamaForCausalLM", LLAMA, None, {"cuda:90": broken})) == ["load"]


@pytest.mark.skipif(not os.environ.get("FP8CHECK_WHOLE_MODEL"), reason="needs the unzipped vLLM wheels")
def test_layout_table_agrees_with_vllm_model_classes():
    script = os.path.join(os.path.dirname(__file__), "packed_check.py")
    proc = subprocess.run([sys.executable, script, "--releases", os.environ["FP8CHECK_WHOLE_MODEL"]],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
