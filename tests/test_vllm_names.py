"""A format's layer lists matched as vLLM matches them on a model whose hf_to_vllm_mapper renames its modules.

vLLM's get_quant_method is always asked with vLLM's own module prefix (the checkpoint's name through the model's
hf_to_vllm_mapper: Qwen3-VL-MoE's model.language_model.* is language_model.model.*, MiniMax-M3's
multi_modal_projector.* is vision_tower.multi_modal_projector.*). The list it matches is the checkpoint's, mapped
with the same renames where the config class implements apply_vllm_mapper (Fp8Config, compressed-tensors, ModelOpt,
Quark, INC) and as written where it does not (FBGEMM); ModelOpt's hard-coded vision patterns are never mapped.
"""

from __future__ import annotations

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.formats.registry import map_layer_lists
from fp8check.core.model.layouts import ARCHITECTURES, map_vllm_name, vllm_module_name
from fp8check.core.model.modules import build_layout
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import LATEST
from tests.test_families import HF, MINIMAX_M3

QWEN3_VL_MOE = ARCHITECTURES["Qwen3VLMoeForConditionalGeneration"].hf_to_vllm
ROUTER = "model.language_model.layers.0.mlp.gate"
UNQUANTIZED = "UnquantizedLinearMethod"


def inspect(folder: str, tp: int = 1):
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), LATEST, tp=tp))


def test_module_names_map_as_the_loader_maps_their_weights():
    # lm_head.weight meets the "lm_head." prefix rule; a bare "lm_head" list entry does not (apply_list).
    assert vllm_module_name("lm_head", QWEN3_VL_MOE) == "language_model.lm_head"
    assert map_vllm_name("lm_head", QWEN3_VL_MOE) == "lm_head"
    assert vllm_module_name(ROUTER, QWEN3_VL_MOE) == "language_model.model.layers.0.mlp.gate"
    assert vllm_module_name("model.visual.blocks.0.attn.qkv", QWEN3_VL_MOE) == "visual.blocks.0.attn.qkv"
    assert vllm_module_name("model.layers.0.mlp.gate", ()) == "model.layers.0.mlp.gate"


# (quant, router's method): qwen3_moe.py builds mlp.gate with the quant config, so only the list keeps it BF16.
@pytest.mark.parametrize("quant,router", [
    ("fp8-block", UNQUANTIZED),               # Fp8Config.apply_vllm_mapper maps ignored_layers
    ("ct-fp8-block", UNQUANTIZED),            # CompressedTensorsConfig.apply_vllm_mapper maps ignore
    ("modelopt-fp8", UNQUANTIZED),            # ModelOptQuantConfigBase.apply_vllm_mapper maps exclude_modules
    ("quark-fp8", UNQUANTIZED),               # QuarkConfig.apply_vllm_mapper maps exclude (apply_list)
    ("fbgemm-fp8", "FBGEMMFp8LinearMethod"),  # no apply_vllm_mapper: modules_to_not_convert as written
])
def test_a_renamed_router_is_excluded_only_where_the_config_maps_its_list(make_checkpoint, quant, router):
    folder = make_checkpoint(architecture="Qwen3VLMoeForConditionalGeneration", vision="qwen3_vl", experts=4,
                             head_dim=128, text_prefix="model.language_model", quant=quant, data="sparse",
                             ignore=("lm_head",))
    ckpt = open_local(folder)
    raw = ckpt.config.raw_quantization_config
    listed = raw.get("ignore") or raw.get("modules_to_not_convert") or raw.get("exclude") or \
        raw.get("ignored_layers") or []
    assert ROUTER in listed  # the checkpoint lists its router under its own name
    layers = {layer.name: layer for layer in inspect(folder).layers}  # reported under the checkpoint's names
    assert layers[ROUTER].scheme == router
    if router == UNQUANTIZED:
        assert layers[ROUTER].ok
    else:  # vLLM quantizes the BF16 router: its FP8 parameters do not take the stored weight
        assert not layers[ROUTER].ok
    # ModelOpt quantizes a ParallelLMHead unless excluded: "lm_head" stays "lm_head" through the mapper and is a
    # substring of vLLM's language_model.lm_head; the other formats never quantize the head.
    assert layers["lm_head"].scheme in (UNQUANTIZED, "UnquantizedEmbeddingMethod")


def test_only_mapping_formats_see_their_list_renamed(make_checkpoint):
    folder = make_checkpoint(architecture="Qwen3VLMoeForConditionalGeneration", vision="qwen3_vl", experts=4,
                             head_dim=128, text_prefix="model.language_model", quant="fbgemm-fp8", data="sparse")
    quant = open_local(folder).config.quantization_config
    assert map_layer_lists(quant, lambda name: map_vllm_name(name, QWEN3_VL_MOE)) == quant
    fp8 = open_local(make_checkpoint(architecture="Qwen3VLMoeForConditionalGeneration", vision="qwen3_vl", experts=4,
                                     head_dim=128, text_prefix="model.language_model", quant="fp8-block",
                                     data="sparse")).config.quantization_config
    mapped = map_layer_lists(fp8, lambda name: map_vllm_name(name, QWEN3_VL_MOE))
    assert "language_model.model.layers.0.mlp.gate" in mapped.ignored_layers


@pytest.mark.parametrize("quant,projector", [("modelopt-fp8", UNQUANTIZED),
                                             ("ct-fp8-block", "CompressedTensorsW8A8Fp8")])
def test_minimax_m3_projectors_meet_modelopts_vision_rule_under_vllms_names(make_checkpoint, quant, projector):
    # minimax_m3's hf_to_vllm_mapper moves multi_modal_projector. and patch_merge_mlp. under vision_tower.: ModelOpt's
    # hard-coded "vision_tower" substring then keeps them unquantized; compressed-tensors has no such rule.
    folder = make_checkpoint(quant=quant, data="sparse", model_type="minimax_m3_vl",
                             architecture="MiniMaxM3SparseForConditionalGeneration", extra_config=MINIMAX_M3,
                             **dict(HF, ignore=("language_model.lm_head",)))
    ckpt = open_local(folder)
    renamed = {m.name: m.vllm_names[0] for m in build_layout(ckpt.tensors, ckpt.config).linears if m.vllm_names}
    assert renamed["patch_merge_mlp.linear_2"] == "vision_tower.patch_merge_mlp.linear_2"
    layers = {layer.name: layer for layer in inspect(folder, tp=2).layers}
    projectors = [n for n in layers if n.startswith(("multi_modal_projector.", "patch_merge_mlp."))]
    assert projectors and {layers[n].scheme for n in projectors} == {projector}
    assert layers["language_model.model.layers.0.mlp.gate_up_proj"].scheme != UNQUANTIZED
