"""fp8check's hand-kept layout table checked against the model classes of each vLLM release (issue 33).

    python tests/differential/packed_check.py [--releases 0.33.0,0.34.0] [--platforms cuda:90,rocm:gfx942,cpu]

For every architecture of fp8check.core.model.layouts (ARCHITECTURES, and RETIRED), the release's registry resolves
the class on each platform (tests/differential/crosscheck_layouts.py, one subprocess per release and platform,
the unzipped wheels of run.py) and the class is compared with `ARCHITECTURES[a].for_release(profile)`:
- `packed`: every fused name and its shards against the class's `packed_modules_mapping` (and each tower's entries
  that the text model's do not already cover), in both directions;
- `spec_prefix`: against every name dropped by the `hf_to_vllm_mapper` of the class or of another class its file
  defines (mapped to None), in both directions;
- `hf_to_vllm`: against the renames of the class's `hf_to_vllm_mapper` (what vLLM names its modules and maps the
  quant config's layer lists with), in order;
- `source`: the class's file, a base class's, or the module the registry names; a class vLLM resolves in another
  file per platform is a note, never a failure;
- the registry: an architecture it no longer has is a difference unless RETIRED retires it in this release (and
  one RETIRED retires must be gone, last supported in the release RETIRED names).
A difference with a known reason is listed in EXPECTED and shown as such; any other one exits 1. A Markdown table
per release: architecture | vLLM class (file) | packed agrees? | differences. Needs the unzipped wheels like run.py.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
from typing import NamedTuple

from fp8check.core.model.layouts import ARCHITECTURES, RETIRED, Arch
from fp8check.core.targets.profiles import select_profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import release_env  # noqa: E402  # isort: skip  (the linear-by-linear run, beside this file)

PLATFORMS = ("cuda:90", "rocm:gfx942", "cpu")
# InternVL's remote-code classes and the prefixes their hf_to_vllm_mapper drops (internvl.py, skyworkr1v.py).
_INTERNVL_CHAT = ("InternVLChatModel", "H2OVLChatModel", "SkyworkR1VChatModel")
# Qwen2.5-Omni's two registry names (qwen2_5_omni_thinker.py, one class).
_QWEN25_OMNI = ("Qwen2_5OmniForConditionalGeneration", "Qwen2_5OmniModel")
_INTERNVL_TRAINING_ONLY = ("action_embed", "box_token", "cg_criterion", "cg_model", "loc_decoder", "loc_encoder", "sam",
                           "temporal_embed", "temporal_token", "track_embed", "track_embed_decoder", "track_token")
# MistralLarge3ForCausalLM is DeepseekV3ForCausalLM (mistral_large_3.py): the same __init__.
_DEEPSEEK = ("DeepseekForCausalLM", "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM",
             "MistralLarge3ForCausalLM")
_DSA = ("DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM")
# The entries served through the Transformers backend in the newest release (older ones may build their own file).
_TRANSFORMERS_BACKEND = tuple(a for a, arch in ARCHITECTURES.items()
                              if arch.for_release(None).source.startswith("vllm:transformers/"))
_TEXT_MODEL_FILE = ("fp8check's source names the file of the text model the class builds, where the layout of its "
                    "linears was read: ")
# Known differences, each with its reason: (architecture, what) -> why; `what` as Finding.what.
_MINIMAX_M3 = ("MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration")
_QWEN4_EXP = ("Qwen4ExpForCausalLM", "Qwen4ExpForConditionalGeneration")
EXPECTED: dict[tuple[str, str], str] = {
    ("MistralLarge3ForCausalLM", "renames"): "mistral_large_3.py's mapper renames the Mistral-format names "
                                             "(\\Alayers.N.attention.wq_a, ...), which fp8check refuses by name "
                                             "(params.json + consolidated.*); an HF-named checkpoint matches none",
    ("DeepseekV4ForCausalLM", "renames"): "models/deepseek_v4's amd / cpu classes rename scale tensors otherwise "
                                          "(no `.base_layer.scale` rule, `.input_scale` -> `.input_scale_2`; cpu "
                                          "also `.weight_scale` -> `.weight_scale_inv`): no module name or layer "
                                          "list entry ends in them; fp8check keeps nvidia's",
    ("MiniMaxM3SparseForConditionalGeneration", "renames"): "models/minimax_m3/amd/model.py's substrings lack "
                                                            "the trailing dot (\".mlp.fc1\": \".fc1\"), "
                                                            "nvidia's have it: the same weights are renamed; "
                                                            "fp8check keeps nvidia's",
    **{(a, "packed:qkv_proj"): "deepseek_v2.py's __init__ adds qkv_proj only when use_mha (DeepSeek-V1's MHA: "
                               "model_type deepseek, or no qk_nope / qk_rope head dims); fp8check keeps "
                               "LLAMA_PACKED's entry, which an MLA checkpoint (no k_proj / v_proj) never meets"
       for a in _DEEPSEEK},
    **{("Qwen3OmniMoeForConditionalGeneration", f"dropped:{kind}:{part}."): (
        "qwen3_omni_moe_thinker.py's mapper drops the prefixes talker. and code2wav. (the speech generator, never "
        "built); fp8check drops the names holding them (Arch.spec_substrings; spec_prefix holds one prefix): the "
        "same names, as no thinker tensor holds either")
       for kind in ("prefix", "substr") for part in ("talker", "code2wav")},
    **{(a, "packed:fused_qkv_a_proj"): "deepseek_v2.py's __init__ adds fused_qkv_a_proj (q_a_proj + "
                                       "kv_a_proj_with_mqa) when config.q_lora_rank is set; fp8check builds it from "
                                       "Arch.mla"
       for a in _DEEPSEEK},
    **{(a, "packed:wk_weights_proj"): "the DSA indexer's wk + weights_proj are fused by load_weights' "
                                      "stacked_params_mapping (deepseek_v2.py), without a packed_modules_mapping "
                                      "entry"
       for a in _DSA},
    ("DeepseekV4ForCausalLM", "packed:fused_wkv_wgate"): "models/deepseek_v4's amd / cpu model classes leave "
                                                         "fused_wkv_wgate out of packed_modules_mapping (nvidia / "
                                                         "xpu list it); compressor.py builds it with "
                                                         "quant_config=None everywhere, so no ignore list is matched "
                                                         "against it",
    ("BailingMoeV2_5ForCausalLM", "dropped:prefix:model.mtp"): "bailing_moe_linear.py has no hf_to_vllm_mapper: its "
                                                               "load_weights (normalize_name) skips every name "
                                                               "starting with model.mtp",
    ("MellumForCausalLM", "dropped:prefix:mtp."): "the Transformers backend (transformers/base.py) has no "
                                                   "hf_to_vllm_mapper rule for it: its loader maps transformers' "
                                                   "MellumPreTrainedModel._keys_to_ignore_on_load_unexpected "
                                                   "(^mtp\\.) to None",
    ("Qwen2MoeForCausalLM", "packed:gate_up_proj"): "qwen2_moe.py's __init__ adds gate_up_proj when mlp_only_layers "
                                                    "or shared_expert_intermediate_size > 0 (a shared expert: every "
                                                    "released Qwen2-MoE)",
    ("Qwen3MoeForCausalLM", "packed:gate_up_proj"): "qwen3_moe.py's __init__ adds gate_up_proj when mlp_only_layers "
                                                    "(dense layers); without them every MLP is a FusedMoE and no "
                                                    "gate_proj / up_proj linear exists to fuse",
    ("K2HorizonForCausalLM", "packed:gate_up_proj"): "k2_horizon.py's __init__ adds gate_up_proj when "
                                                     "mlp_only_layers; without them the shared experts' and the "
                                                     "decoder_sparse_step dense layers' gate_proj / up_proj still load "
                                                     "fused (load_weights' stacked_params_mapping), but an ignore list "
                                                     "naming only those shards leaves gate_up_proj quantized in vLLM, "
                                                     "which fp8check expands (not modelled)",
    ("Qwen3VLMoeForConditionalGeneration", "packed:gate_up_proj"): "qwen3_vl_moe.py's __init__ merges the language "
                                                                   "model's mapping (Qwen3MoeForCausalLM: gate_up_proj "
                                                                   "when mlp_only_layers)",
    **{(a, f"packed:{name}"): "served through the Transformers backend (layouts.TP_PLANS' architectures, Hunyuan), "
                              "whose __init__ fills packed_modules_mapping from its fusers (transformers/base.py: "
                              "QKVFuser qkv_proj, GLUFuser gate_up_proj); the class attribute is empty"
       for a in _TRANSFORMERS_BACKEND for name in ("qkv_proj", "gate_up_proj")},
    **{(a, f"packed:{name}"): "models/glm5next/common/model.py fuses it in load_weights' stacked_params_mapping "
                              "(KDA's in_proj_qkvbfg_a and, from 0.34, conv1d; the indexer's wk_weights_proj) "
                              "without a packed_modules_mapping entry; Glm5NextForCausalLM declares none at all "
                              "(ForConditionalGeneration only gate_up_proj)"
       for a in ("Glm5NextForCausalLM", "Glm5NextForConditionalGeneration")
       for name in ("in_proj_qkvbfg_a", "wk_weights_proj", "conv1d")},
    ("Glm5NextForCausalLM", "packed:gate_up_proj"): "models/glm5next/common/model.py fuses gate_proj / up_proj in "
                                                    "load_weights' stacked_params_mapping; the class declares no "
                                                    "packed_modules_mapping",
    **{("KimiK25ForConditionalGeneration", f"packed:{name}"): (
        "kimi_k25.py's class (SupportsQuant) has no packed_modules_mapping, and its language model "
        "(deepseek_v2.py's DeepseekV2ForCausalLM, not SupportsQuant, built by init_vllm_registered_model) never hands "
        "its own to the quant config: the shards load fused (load_weights' stacked_params_mapping), but vLLM's "
        "ignore-list matching does not expand a fused name into its shards; fp8check expands it (not modelled: an "
        "ignore list naming only gate_proj / up_proj differs)") for name in ("gate_up_proj", "qkv_proj")},
    **{(a, f"packed:{name}"): (
        f"{a}'s class (a Step3VLForConditionalGeneration, not SupportsQuant) has no packed_modules_mapping, and its "
        f"language model ({text}, not SupportsQuant, built by init_vllm_registered_model) never hands its own to the "
        "quant config: the shards load fused, but vLLM's ignore-list matching does not expand a fused name into its "
        "shards; fp8check expands it (not modelled: an ignore list naming only some shards differs)")
       for a, text in (("Step3p7ForConditionalGeneration", "step3p5.py's Step3p5ForCausalLM"),
                       ("StepVLForConditionalGeneration", "qwen3.py's Qwen3ForCausalLM"))
       for name in ("gate_up_proj", "qkv_proj")},
    **{(a, f"packed:{name}"): (
        "step3_text.py fuses q / k / v (qkv_params_mapping, narrowed into a ReplicatedLinear) and gate / up "
        "(stacked_params_mapping) in load_weights; neither class declares a packed_modules_mapping, so vLLM's "
        "ignore-list matching does not expand a fused name into its shards; fp8check expands it (not modelled: an "
        "ignore list naming only some shards differs)")
       for a in ("Step3TextForCausalLM", "Step3VLForConditionalGeneration") for name in ("gate_up_proj", "qkv_proj")},
    ("KimiK25ForConditionalGeneration", "tower packed:wqkv"): "MoonViT's wqkv is stored fused under the name vLLM "
                                                               "builds (kimi_k25_vit.py QKVParallelLinear): matched "
                                                               "by its own name, the same answer",
    **{("KimiLinearForCausalLM", f"packed:{name}"): (
        "the mapping is on the inner KimiLinearModel (models/kimi_k3/nvidia/model.py, SupportsQuant: its __new__ "
        "adds it to the quant config on CUDA and CPU), not on KimiLinearForCausalLM; ROCm / XPU's amd/linear.py "
        "carries none, so there vLLM's ignore-list matching does not expand a fused name into its shards "
        "(not modelled)") for name in ("conv1d", "gate_up_proj", "in_proj_qkvgfab")},
    **{(a, f"packed:{name}"): (
        "KimiK3ForConditionalGeneration (models/kimi_k3/nvidia/model.py, amd/model.py) declares no "
        "packed_modules_mapping; its text model, KimiLinearModel (SupportsQuant: __new__ hands its mapping to the "
        "quant config on CUDA and CPU), lists conv1d, gate_up_proj, in_proj_qkvgfab (without the full-rank gate's "
        "g_proj, which load_weights' stacked_params_mapping folds in as shard 3), fused_qkv_a_proj and "
        "fused_qkv_a_g_proj; the DSA indexer's wkv_index is fused by load_weights only (_DSA_STACKED_PARAMS_MAPPING)")
       for a in ("KimiK3ForConditionalGeneration", "KimiK31ForConditionalGeneration")
       for name in ("conv1d", "gate_up_proj", "in_proj_qkvgfab", "fused_qkv_a_g_proj", "wkv_index")},
    **{(a, "tower packed:wqkv"): "MoonViT's wqkv is stored fused under the name vLLM builds (kimi_k25_vit.py "
                                 "QKVParallelLinear): matched by its own name, the same answer"
       for a in ("KimiK3ForConditionalGeneration", "KimiK31ForConditionalGeneration")},
    ("KimiK31ForConditionalGeneration", "registry"): "registry.py registers KimiK31ForConditionalGeneration (to "
                                                     "KimiK3ForConditionalGeneration) from 0.34; 0.33 refuses it "
                                                     "(whole_model.py OPEN)",
    ("Lfm3ForCausalLM", "registry"): "registry.py registers Lfm3ForCausalLM (lfm3.py) from 0.34; 0.33's registry has "
                                    "no such architecture, and fp8check lays it out only on releases that register "
                                    "it (vllm_registry.py)",
    ("MistralLarge4ForCausalLM", "registry"): "0.34 brings it (registry.py: vllm.models.mistral.mistral_large4); "
                                             "0.33's registry has no such architecture (its Mistral-format reader "
                                             "builds MistralLarge3ForCausalLM from the params.json, which fp8check "
                                             "reports as 0.33's refusal: ModelConfig.errors_before_034)",
    ("MistralLarge4ForCausalLM", "load"): "models/mistral/mistral_large4/__init__.py raises NotImplementedError off "
                                         "CUDA / ROCm (layouts.IMPORT_REFUSALS: XPU, CPU)",
    **{("MistralLarge4ForCausalLM", f"packed:{name}"): (
        "models/mistral/mistral_large4/nvidia/model.py declares no packed_modules_mapping: load_weights' "
        "_STACKED_PARAMS fuses w1 + w3 and wk + weights_proj, and _map_quant_config_layers adds them (and down_proj: "
        "w2) to the quant config's packed_modules_mapping") for name in ("gate_up_proj", "wk_weights_proj")},
    ("RicursiveForCausalLM", "registry"): "registry.py registers RicursiveForCausalLM (ricursive.py) from 0.34; "
                                         "0.33's registry has no such architecture, and fp8check lays it out only on "
                                         "releases that register it (vllm_registry.py)",
    ("ZayaForCausalLM", "registry"): "registry.py registers ZayaForCausalLM (zaya.py) from 0.34; 0.33's registry has "
                                    "no such architecture (its Transformers backend may build it: whole_model.py "
                                    "OPEN), and fp8check lays it out only on releases that register it",
    ("Qwen2_5_VLForConditionalGeneration", "source"): _TEXT_MODEL_FILE + "qwen2_5_vl.py builds Qwen2ForCausalLM "
                                                                         "(qwen2.py)",
    ("Mistral3ForConditionalGeneration", "source"): _TEXT_MODEL_FILE + "mistral3.py builds text_config's "
                                                                       "architecture (MistralForCausalLM, mistral.py)",
    ("Gemma3ForConditionalGeneration", "source"): _TEXT_MODEL_FILE + "gemma3_mm.py builds Gemma3ForCausalLM "
                                                                     "(gemma3.py)",
    ("Llama4ForConditionalGeneration", "source"): _TEXT_MODEL_FILE + "mllama4.py builds Llama4ForCausalLM "
                                                                     "(llama4.py)",
    ("BailingMoeV3VLForConditionalGeneration", "source"): _TEXT_MODEL_FILE + "bailing_moe_v3_vl.py builds "
                                                                             "BailingMoeV3ForCausalLM "
                                                                             "(bailing_moe_v3.py)",
    **{(a, "packed:qkvg_proj"): (
        "models/step5/nvidia/model.py builds qkvg_proj (q / k / v / g_proj, prefix qkv_proj) only on a layer whose "
        "q / k / v and g_proj are all unquantized with KV heads >= TP (Step5Attention.fuse_qkv_gate); not modelled: "
        "fp8check lists qkv_proj + g_proj there") for a in ("Step5ForCausalLM", "Step5ForConditionalGeneration")},
    **{(a, "packed:qkv_indexer_proj"): (
        "ROCm from 0.34 resolves amd/model.py (amd/vl.py takes its mapping: Llama's; the indexer unfused): "
        "fp8check's rocm_layout there, while this check reads the CUDA entry")
       for a in ("Step5ForCausalLM", "Step5ForConditionalGeneration")},
    ("Step5ForConditionalGeneration", "renames"): (
        "ROCm from 0.34 resolves models/step5/amd/vl.py, whose mapper is step3p7.py's alone; its text model's "
        "(amd/model.py) moves share_expert under moe, and initialize_model's configure_quant_config maps the quant "
        "config's lists by it after the VL class's: the names fp8check's CUDA renames give (its rocm_layout keeps "
        "them), while this check reads the class's own mapper"),
    **{("Step5ForCausalLM", f"dropped:{what}"): (
        "models/step5/amd/model.py's mapper (ROCm, 0.34) drops the vision tower, the projector and ssmax_s, names a "
        "Step5ForCausalLM checkpoint does not hold (ssmax_s is no linear's)")
       for what in ("prefix:vision_model.", "prefix:vit_large_projector.", "substr:.self_attn.ssmax_s")},
    **{(a, "dropped:substr:mtp."): "models/minimax_m3 (nvidia/model.py, amd/model.py) MiniMaxM3Model.load_weights "
                                   "skips every name holding \"mtp.\" itself (`if \"mtp.\" in name: continue`), "
                                   "no hf_to_vllm_mapper"
       for a in _MINIMAX_M3},
    **{(a, "load"): "harness: 0.34's models/minimax_m3/nvidia/model.py imports ops that import the CuTe DSL package "
                    "`cutlass` at module level (nvidia-cutlass-dsl, a requirement of the CUDA wheel), absent here; "
                    "the CPU and ROCm classes of the same release are read"
       for a in _MINIMAX_M3},
    **{(a, "packed:input_mix_weight_down_block_inject"): "its third shard, _input_mix_padding, is the zero padding "
                                                         "GatedResidual adds up to 16 rows (hyperconnection.py "
                                                         "pad_size), which no checkpoint stores; fp8check fuses the "
                                                         "two stored shards (the layer is built with quant_config=None)"
       for a in _QWEN4_EXP},
    **{(a, "packed:qkv_proj"): "0.33's mapping lists indexer.index_qk_proj, which nvidia/qsa.py loads into qkv_proj; "
                               "fp8check folds it in as Arch.indexer_shards (and from 0.34, which drops it from the "
                               "mapping, only when stored like q / k / v: Arch.indexer_alike)"
       for a in _QWEN4_EXP},
    **{(a, f"dropped:substr:{part}"): "models/qwen4_exp nvidia/model.py builds these mappers inside load_weights "
                                      "(Qwen4ExpForCausalLM / ForConditionalGeneration: \"mtp.\"; Qwen4ExpModel: "
                                      "\"hashstats_\", \"token_lookup\", \"hyper_connection_mixer.block_inject_"
                                      "weight\"), not as the class's hf_to_vllm_mapper"
       for a in _QWEN4_EXP for part in ("mtp.", "hashstats_", "token_lookup",
                                        "hyper_connection_mixer.block_inject_weight")},
    ("Qwen4ExpForConditionalGeneration", "dropped:prefix:mtp."): "Qwen3_5ForConditionalGeneration's mapper (which the "
                                                                 "class reuses) drops the prefix `mtp.`; fp8check "
                                                                 "drops every name holding it, as load_weights' own "
                                                                 "mapper does",
    **{(a, f"packed:{name}"): (
        "interns1.py's class declares no packed_modules_mapping, but its language model (init_vllm_registered_model: "
        "Qwen3MoeForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, each SupportsQuant) adds its own to the quant config "
        "(SupportsQuant.__new__): the fusions fp8check expands are vLLM's")
       for a in ("InternS1ForConditionalGeneration", "InternVLForConditionalGeneration")
       for name in ("gate_up_proj", "qkv_proj")},
    **{(a, f"packed:{name}"): (
        "internvl.py / h2ovl.py / skyworkr1v.py: the class is no SupportsQuant, so configure_quant_config hands the "
        "quant config its packed_modules_mapping, SupportsLoRA's empty one (InternVisionModel's own is never read), "
        "and the language model (init_vllm_registered_model of llm_config's class: InternLM2, Qwen2 / Qwen3, Llama, "
        "each SupportsQuant) adds its own (SupportsQuant.__new__): fp8check lays the text model out by that class's "
        "entry; the entry's LLAMA_PACKED serves only a text class the table lacks")
       for a in _INTERNVL_CHAT for name in ("gate_up_proj", "qkv_proj")},
    **{("Qwen2VLForConditionalGeneration", f"packed:{name}"): (
        "qwen2_vl.py's class is no SupportsQuant, so configure_quant_config hands the quant config its "
        "packed_modules_mapping, SupportsLoRA's empty one, and the language model (init_vllm_registered_model of "
        "Qwen2ForCausalLM, SupportsQuant) adds its own q / k / v and gate / up entries (SupportsQuant.__new__): the "
        "entry's packed is that one") for name in ("gate_up_proj", "qkv_proj")},
    **{("Qwen2AudioForConditionalGeneration", f"packed:{name}"): (
        "qwen2_audio.py's class declares no packed_modules_mapping (nor SupportsLoRA / SupportsQuant); its language "
        "model (Qwen2ForCausalLM, SupportsQuant) adds its own q / k / v and gate / up entries to the quant config: the "
        "entry's packed is that one") for name in ("gate_up_proj", "qkv_proj")},
    **{("LlavaOnevisionForConditionalGeneration", f"packed:{name}"): (
        "llava_onevision.py's class declares no packed_modules_mapping (nor SupportsQuant); its language model "
        "(init_vllm_registered_model of Qwen2ForCausalLM, SupportsQuant) adds its own q / k / v and gate / up entries "
        "to the quant config (SupportsQuant.__new__): the entry's packed is that one") for name in ("gate_up_proj",
                                                                                             "qkv_proj")},
    **{("Phi3VForCausalLM", f"packed:{name}"): (
        "phi3v.py's Phi3VForCausalLM (SupportsQuant) declares no packed_modules_mapping; its language model "
        "(init_vllm_registered_model of LlamaForCausalLM, SupportsQuant) adds Llama's q / k / v and gate / up entries "
        "to the quant config, so Phi-3's stored-fused qkv_proj / gate_up_proj are matched by their shards' names too; "
        "fp8check's self-mapped entries (Phi-3's) match the fused names alike") for name in ("gate_up_proj",
                                                                                          "qkv_proj")},
    **{("Phi3VForCausalLM", f"tower packed:{name}"): (
        "the CLIP tower (clip.py CLIPVisionModel, built inside Phi3HDImageEmbedding) declares q / k / v -> qkv_proj, "
        "and the language model's Llama entries (q / k / v, gate / up) reach the quant config: the tower's fused "
        "names are matched by their shards as fp8check's tower entry does") for name in ("gate_up_proj",
                                                                                      "qkv_proj")},
    **{("KimiVLForConditionalGeneration", f"packed:{name}"): (
        "kimi_vl.py's class declares no packed_modules_mapping and its language model (DeepseekV2ForCausalLM) is no "
        "SupportsQuant: the quant config's stays empty, which the entry models with Arch.quant_packed=False (lists "
        "matched by the fused names); the fusions themselves are load_weights' stacked_params_mapping")
       for name in ("gate_up_proj", "qkv_proj")},
    ("KimiVLForConditionalGeneration", "tower packed:wqkv"): "MoonViT's wqkv is stored fused (Kimi-K2.5's tower "
                                                             "entry maps it to itself); no quant config reaches the "
                                                             "tower (moonvit.py), so no list is matched against it",
    **{(a, f"dropped:{kind}:{part}."): (
        "qwen2_5_omni_thinker.py's mapper drops the prefixes talker. and token2wav. (the speech generator, never "
        "built); fp8check drops the names holding them (Arch.spec_substrings; spec_prefix holds one prefix): the "
        "same names, as no thinker tensor holds either")
       for a in _QWEN25_OMNI for kind in ("prefix", "substr") for part in ("talker", "token2wav")},
    **{(a, what): (
        "qwen2_5_omni_thinker.py's packed_modules_mapping keys the vision tower's stacked q / k / v as \"attn.qkv\": "
        "[\"attn.q\", \"attn.k\", \"attn.v\"]; fp8check fuses the tower's q / k / v leaves into qkv (the module "
        "vLLM builds) and, as quant_utils.py is_layer_skipped never meets a dotted key (it looks up a layer's last "
        "name part), matches the quant config's lists against qkv by its own name (Tower.unexpanded)")
       for a in _QWEN25_OMNI for what in ("packed:attn.qkv", "tower packed:qkv")},
    **{(a, f"dropped:prefix:{part}"): (
        "InternVL's mapper drops the prefixes of training-only modules (SAM, tracking, grounding heads) that the "
        "released InternVL / H2OVL / Skywork-R1V checkpoints do not hold; not modelled (Arch.spec_prefix holds one "
        "prefix): fp8check would list such tensors where vLLM skips them")
       for a in _INTERNVL_CHAT for part in _INTERNVL_TRAINING_ONLY},
    ("Ernie4_5_VLMoeForConditionalGeneration", "dropped:substr:mtp"): (
        "ernie45_vl_moe.py Ernie4_5_VLMoeForCausalLM.load_weights skips every name holding \"mtp\" itself (`if "
        "\"mtp\" in name ...: continue`), not the class's hf_to_vllm_mapper"),
    ("HYV4ForCausalLM", "dropped:prefix:model.mtp_layers."): "models/hy_v4 HYV4ForCausalLM.load_weights drops "
                                                             "model.mtp_layers.* with a WeightsMapper of its own "
                                                             "(drop_mapper), not its hf_to_vllm_mapper",
    **{(a, f"packed:{name}"): (
        "models/deepseek_v41/nvidia/vl_model.py's DeepseekV41ForCausalLM declares no packed_modules_mapping in 0.33 "
        "(0.34 and amd/vl_model.py: V4's three) and its text model (DeepseekV41LLMForCausalLM, not SupportsQuant) "
        "never hands its own to the quant config; deepseek_v4/vl_stub.py's CPU class (0.33 / 0.34) declares none and "
        "raises in __init__ (fp8check's CONSTRUCTION_REFUSALS): fp8check expands the fused names as 0.34 / ROCm do "
        "(not modelled: 0.33's CUDA ignore-list matching of a list naming only w1 / w3 or wq_a / wkv)")
       for a in ("DeepseekV41ForCausalLM", "DeepseekV4ForConditionalGeneration")
       for name in ("gate_up_proj", "fused_wqa_wkv", "fused_wkv_wgate")},
    **{(a, "tower packed:wqkv"): "the V4 ViT's wqkv is stored fused under the name vLLM builds (deepseek_v4/common/"
                                 "vision.py QKVParallelLinear, quant_config=None): matched by its own name, the same "
                                 "answer; deepseek_v41's classes and the CPU stub list no entry"
       for a in ("DeepseekV41ForCausalLM", "DeepseekV4ForConditionalGeneration")},
    **{("DeepseekV4ForConditionalGeneration", f"packed:{name}"): (
        "deepseek_v4/common/vl_model.py lists the vision encoder's wqkv and w1 as one-shard entries (stored fused, "
        "built with quant_config=None): fp8check's tower fuses wqkv alike and keeps mlp.w1 under its own name, the "
        "same answer; an entry `w1` beside the text model's gate_up_proj = (w1, w3) would make fp8check fuse the "
        "shared experts' w1 alone") for name in ("w1", "wqkv")},
    **{(a, "dropped:substr:mtp."): (
        "the VL classes build their hf_to_vllm_mapper in __init__ (deepseek_v4/common/vl_model.py, deepseek_v41 "
        "nvidia/ amd/vl_model.py _make_deepseek_v4_vl_weights_mapper: the text mapper re-rooted under "
        "language_model., \"mtp.\" mapped to None); this check reads the class attribute")
       for a in ("DeepseekV41ForCausalLM", "DeepseekV4ForConditionalGeneration")},
    **{(a, "renames"): (
        "the VL classes build their hf_to_vllm_mapper in __init__ (the text mapper re-rooted under language_model.); "
        "the class attribute this check reads is absent (CUDA, CPU) or amd/vl_model.py's prefixes only. fp8check "
        "keeps the text model's renames (model.*), which name modules and map lists alike (not modelled: "
        "configure_quant_config maps the lists with the class attribute only, so on CUDA vLLM leaves them unmapped)")
       for a in ("DeepseekV41ForCausalLM", "DeepseekV4ForConditionalGeneration")},
    ("Glm4vForConditionalGeneration", "packed:gate_up_proj"): (
        "glm4_1v.py Glm4vForConditionalGeneration maps gate_up_proj to itself (the text MLP's gate_up_proj is stored "
        "fused: matched by its own name either way); the tower's gate_proj / up_proj, which Glm4vVisionTransformer's "
        "orig_to_new_stacked fuses, are then not expanded by vLLM's ignore-list matching, which fp8check does (not "
        "modelled: a list naming only the tower's gate_proj / up_proj differs)"),
    **{(a, "tower packed:qkv"): "Glm4vVisionAttention's qkv is stored fused under the name vLLM builds (glm4_1v.py "
                                "QKVParallelLinear): matched by its own name, the same answer"
       for a in ("Glm4vForConditionalGeneration", "Glm4vMoeForConditionalGeneration")},
    **{("SarvamMLAForCausalLM", f"packed:{name}"): (
        "sarvam.py SarvamMLAForCausalLM maps each MLA projection to itself (none is fused: MLAModules gets "
        "fused_qkv_a_proj=None); a layer stored under its own name is matched by that name, the same answer")
       for name in ("q_proj", "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj")},
    ("Step5ForCausalLM", "dropped:regex:^vit_large_projector\\.weight$"): (
        "models/step5/nvidia/model.py's mapper drops a stray vit_large_projector.weight (and load_weights the prefix "
        "vision_model.), names of the VL export a Step5ForCausalLM checkpoint does not hold; Arch has no regex drop"),
    ("Step5ForCausalLM", "renames"): (
        "ROCm from 0.34 resolves models/step5/amd/model.py, whose mapper also moves .self_attn.sparse_indexer_ under "
        "self_attn.indexer: fp8check's rocm_layout (those layers built with quant_config=None, no list applies) "
        "keeps Step3p5's share_expert substring, while this check reads the CUDA entry"),
    **{(a, "dropped:prefix:model.mtp."): "models/inkling (nvidia/model.py, amd/model.py) _load_inkling_weights drops "
                                         "model.mtp. with a WeightsMapper of its own, not the class's "
                                         "hf_to_vllm_mapper"
       for a in ("InklingForCausalLM", "InklingForConditionalGeneration")},
    ("MuseSparkForConditionalGeneration", "packed:qkv_proj"): (
        "models/muse_spark's packed_modules_mapping fuses q / k / v; its hf_to_vllm_mapper's orig_to_new_stacked "
        "(common/omni.py OMNI_WEIGHTS_MAPPER) loads the output gate .self_attn.gate_proj into qkv_proj as well (shard "
        "o_gate of common/layers.py MuseSparkQKVOGateParallelLinear), which fp8check fuses with them; the quant "
        "config's lists are asked for q / k / v only, so an exclude naming the gate alone is not modelled"),
    ("BeamForCausalLM", "packed:qkv_gate_proj"): (
        "models/beam (nvidia/model.py, amd/model.py) names the output gate shard output_gate_proj, the name its "
        "hf_to_vllm_mapper gives the checkpoint's .self_attn.gate_proj; fp8check fuses under the checkpoint's names "
        "(gate_proj) and renames the shards with Arch.hf_to_vllm afterwards (the same modules, whole_model 100 %)"),
    **{(a, "renames"): (
        "ROCm (0.27-0.34) resolves models/inkling/amd/model.py, whose mapper lacks nvidia/model.py's compressed-"
        "tensors suffixes (.w13_weight.weight_packed, .weight_global_scale, .input_global_scale, .weight_scale "
        "-> .w13_*): the stacked experts' NVFP4 tensors only (an FP8 stack's weight, .w13_weight.weight, is "
        "renamed by neither), a format fp8check names but does not route, and amd/moe.py serves Quark MXFP4 "
        "experts; fp8check keeps nvidia's")
       for a in ("InklingForCausalLM", "InklingForConditionalGeneration")},
    ("MiMoV2FlashForCausalLM", "dropped:substr:mtp"): "mimo_v2.py MiMoV2Model.load_weights skips every name holding "
                                                      "\"mtp\" itself (`if \"mtp\" in name: continue`), no "
                                                      "hf_to_vllm_mapper",
    **{(a, "dropped:prefix:language_model.mtp"): (
        "nano_nemotron_vl.py's load_weights strips language_model. and hands the text model its names, whose loader "
        "applies nemotron_h.py's mapper (mtp. -> None): the Omni checkpoints' language_model.mtp.* never load; "
        "fp8check drops them under the class's prefix (Arch.spec_prefix), no mapper of the class's file")
       for a in ("NemotronH_Nano_VL_V2", "NemotronH_Nano_Omni_Reasoning_V3", "NemotronH_Super_Omni_Reasoning_V3",
                 "NemotronH_Omni_Reasoning_V3")},
    **{("Llama_Nemotron_Nano_VL", f"dropped:substr:{name}"): (
        "nemotron_vl.py's mapper drops the remote RADIO tower's input-conditioner buffers (input_conditioner."
        f"{name}), no linear's: fp8check lists them with the other non-linear weights")
       for name in ("norm_mean", "norm_std")},
    **{("Llama_Nemotron_Nano_VL", f"packed:{name}"): (
        "nemotron_vl.py's LlamaNemotronVLChatModel (not SupportsQuant) has no packed_modules_mapping of its own, and "
        "its language model (llama.py's LlamaForCausalLM, built by init_vllm_registered_model) never hands its own to "
        "the quant config: the shards load fused, but vLLM's ignore-list matching does not expand a fused name into "
        "its shards; fp8check expands it (not modelled: an ignore list naming only some shards differs)")
       for name in ("gate_up_proj", "qkv_proj")},
    ("MiMoV2ForCausalLM", "dropped:substr:mtp"): "mimo_v2.py MiMoV2Model.load_weights (MiMo-V2-Flash's, which "
                                                 "MiMoV2ForCausalLM inherits) skips every name holding \"mtp\" "
                                                 "itself, no hf_to_vllm_mapper",
    ("MiMoV2OmniForCausalLM", "dropped:substr:mtp"): "mimo_v2.py MiMoV2Model.load_weights (the language model "
                                                     "mimo_v2_omni.py builds) skips every name holding \"mtp\" "
                                                     "itself, no hf_to_vllm_mapper",
    **{("MiMoV2OmniForCausalLM", f"packed:{name}"): (
        "mimo_v2_omni.py MiMoV2OmniForCausalLM (SupportsQuant) declares no packed_modules_mapping and its language "
        "model MiMoV2FlashForCausalLM (which does) is no SupportsQuant, so the quant config's mapping stays empty: the "
        "shards load fused (MiMoV2Model.load_weights' stacked_params_mapping) and the lists are matched against the "
        "fused name, as fp8check does (Arch.quant_packed)") for name in ("gate_up_proj", "qkv_proj")},
    **{("Dots3NoteForCausalLM", f"packed:{name}"): (
        "models/dots3_note nvidia/multimodal.py Dots3NoteForCausalLM (no SupportsQuant) declares no "
        "packed_modules_mapping, so configure_quant_config leaves the quant config's empty (its language model, "
        "DeepseekV32ForCausalLM's, is built inside it): the shards load fused and the lists are matched against the "
        "fused name, as fp8check does (Arch.quant_packed)")
       for name in ("gate_up_proj", "qkv_proj", "wk_weights_proj")},
    **{("OrionForCausalLM", f"packed:{name}"): (
        "orion.py OrionForCausalLM (no SupportsQuant) declares no packed_modules_mapping, so configure_quant_config "
        "leaves the quant config's empty: the shards load fused (the hf_to_vllm_mapper's orig_to_new_stacked) and the "
        "lists are matched against the fused name, as fp8check does (Arch.quant_packed)")
       for name in ("gate_up_proj", "qkv_proj")},
    ("Dots3NoteForCausalLM", "load"): "models/dots3_note/nvidia/attention.py imports mla/prefill/flash_attn.py, which "
                                      "imports a name fa_utils.py defines only on CUDA, XPU and ROCm: CPU refuses the "
                                      "package on import, as fp8check reports (IMPORT_REFUSALS)",
    ("GPTJForCausalLM", "packed:qkv_proj"): (
        "gpt_j.py GPTJForCausalLM (no SupportsQuant) declares no packed_modules_mapping: its mapper's orig_to_new_stacked "
        "loads q / k / v into qkv_proj, and the quant config's mapping stays empty, so the lists are matched against "
        "qkv_proj itself, as fp8check does (Arch.quant_packed)"),
    **{(a, "renames"): (
        "the Transformers backend builds its hf_to_vllm_mapper in __init__ (transformers/base.py "
        "_create_hf_to_vllm_mapper: transformers' WeightRenaming, GPT-NeoX's embed_out. -> lm_head., and the base "
        "model prefix gpt_neox / transformer -> model); the class attribute this check reads is unset")
       for a in ("GPTNeoXForCausalLM", "GPTBigCodeForCausalLM")},
    ("MiMoV2OmniForCausalLM", "tower packed:qkv"): "MiMoVisionAttention's qkv is stored fused under the name vLLM "
                                                   "builds (mimo_v2_omni.py QKVParallelLinear), in a tower built "
                                                   "with quant_config=None: matched by its own name, the same answer",
    ("OlmoHybridForCausalLM", "packed:conv1d"): "olmo_hybrid.py's OlmoHybridModel mapper stacks q_conv1d / k_conv1d / "
                                                "v_conv1d into one conv1d (orig_to_new_stacked), outside "
                                                "packed_modules_mapping; built with quant_config=None, no list "
                                                "reaches it either way",
    ("LongcatFlashForCausalLM", "dropped:prefix:model.mtp."): "longcat_flash.py has no hf_to_vllm_mapper: "
                                                              "FlashModel.load_weights skips every name starting "
                                                              "with mtp. (model.mtp. once AutoWeightsLoader strips "
                                                              "model.)",
    # ninth round (fam-audio)
    **{("UltravoxModel", f"dropped:prefix:{part}"): (
        "ultravox.py's mapper moves a whole Whisper's audio_tower.model.encoder. to audio_tower. and drops the rest of "
        "it (audio_tower.model.: its decoder; audio_tower.proj_out.); fp8check drops those as the tower's "
        "(Tower.dropped: audio_tower.model.decoder., audio_tower.proj_out.): spec_prefix holds one prefix, and "
        "audio_tower.model. would drop the encoder before its rename") for part in ("audio_tower.model.",
                                                                                     "audio_tower.proj_out.")},
    ("GlmAsrForConditionalGeneration", "dropped:prefix:audio_tower.embed_positions"): (
        "glmasr.py's mapper drops the encoder's embed_positions (GlmAsrEncoder builds rotary positions, no table); "
        "fp8check drops it as the tower's (Tower.dropped)"),
    **{(a, f"dropped:{kind}:{part}."): (
        "qwen3_asr.py's mapper drops the prefixes talker. and code2wav. (never built); fp8check drops the names "
        "holding them (Arch.spec_substrings, as Qwen3-Omni's): the same names, as no thinker tensor holds either")
       for a in ("Qwen3ASRForConditionalGeneration", "Qwen3ASRRealtimeGeneration") for kind in ("prefix", "substr")
       for part in ("talker", "code2wav")},
    **{("FunAudioChatForConditionalGeneration", f"packed:{name}"): (
        "funaudiochat.py's class (no SupportsQuant) declares no packed_modules_mapping and its language model "
        "(Qwen3ForCausalLM, no SupportsQuant either) never hands its own to the quant config, which stays empty: the "
        "shards load fused (Qwen3's stacked_params_mapping) and the lists are matched against the fused name, as "
        "fp8check does (Arch.quant_packed)") for name in ("gate_up_proj", "qkv_proj")},
}
# ninth round (fam-textb)
EXPECTED.update({
    **{(a, "packed:qkv_proj"): (
        f"{a} (no SupportsQuant) declares no packed_modules_mapping, so configure_quant_config leaves the quant "
        "config's empty: the shards load fused (the mapper's orig_to_new_stacked, load_weights' "
        "stacked_params_mapping) and the lists are matched against the fused name, as fp8check does "
        "(Arch.quant_packed)")
       for a in ("Zamba2ForCausalLM", "IQuestLoopCoderForCausalLM")},
    ("IQuestLoopCoderForCausalLM", "packed:gate_up_proj"): (
        "iquest_loopcoder.py's IQuestLoopCoderForCausalLM declares no packed_modules_mapping: load_weights' "
        "stacked_params_mapping fuses gate / up, and the lists are matched against gate_up_proj itself, as fp8check "
        "does (Arch.quant_packed)"),
    ("Param2MoEForCausalLM", "renames"): (
        "param2moe.py keeps its hf_to_vllm_mapper on the inner Param2MoEModel, whose load_weights applies it: the "
        "loader renames the tensors as fp8check's hf_to_vllm does, and configure_quant_config, reading the class "
        "attribute, leaves the quant config's lists unmapped (Arch.mapper_on_inner_model)"),
    ("UnlimitedOCR2TextForCausalLM", "packed:qkv_proj"): (
        "deepseek_v2.py's __init__ adds qkv_proj only when use_mha (qk_nope / qk_rope head dims 0: Unlimited-OCR-2's "
        "text config), as the class's packed entry fp8check keeps"),
    ("UnlimitedOCR2TextForCausalLM", "registry"): (
        "registry.py registers UnlimitedOCR2TextForCausalLM (unlimited_ocr.py) from 0.34; 0.33's registry has no such "
        "architecture, and fp8check lays it out only on releases that register it"),
    # ninth round (fam-texta)
    ("AXK1ForCausalLM", "packed:qkv_proj"): "AXK1.py's __init__ adds qkv_proj only when use_mha (no qk_nope / qk_rope "
                                            "head dims), as deepseek_v2.py's; fp8check keeps DeepSeek-V3's entry, "
                                            "which an MLA checkpoint (no k_proj / v_proj) never meets",
    ("TeleChat2ForCausalLM", "packed:qkv_proj"): "telechat2.py keeps Llama's (q_proj, k_proj, v_proj), which its "
                                                 "loader makes of the stored query and key_value (the mapper's "
                                                 "orig_to_new_stacked after _split_key_value); fp8check fuses the "
                                                 "stored shards (not modelled: a list naming query / key_value, "
                                                 "which vLLM's ignore matching never expands to)",
    # ninth round (fam-mma)
    **{("MiniCPMV", f"packed:{name}"): (
        "minicpmv.py MiniCPMV.__new__ copies the version's class's packed_modules_mapping (q / k / v, gate / up: every "
        "version alike) into the class attribute before building it, which this check reads empty")
       for name in ("gate_up_proj", "qkv_proj")},
    **{("MiniCPMV", f"dropped:prefix:{part}"): (
        "MiniCPM-V 2.6 / 4.0 / 4.5's mapper drops a MiniCPM-o checkpoint's audio tower and speech generator (2.5's "
        "class has none); a vision checkpoint holds none of them (MiniCPM-o's, architecture MiniCPMO, drops tts)")
       for part in ("apm.", "audio", "tts")},
    **{(a, f"packed:{name}"): (
        "ovis.py's / ovis2_5.py's class declares no packed_modules_mapping (nor SupportsQuant); its language model "
        "(init_vllm_registered_model of text_config's class: Qwen2, Qwen3, Qwen3-MoE, each SupportsQuant) adds its "
        "own q / k / v and gate / up entries to the quant config (SupportsQuant.__new__): the entry's packed is that "
        "one") for a in ("Ovis", "Ovis2_5", "Ovis2_6ForCausalLM", "Ovis2_6_MoeForCausalLM")
       for name in ("gate_up_proj", "qkv_proj")},
    ("Ovis", "tower packed:qkv"): "AIMv2's attn.qkv is stored fused under the name vLLM builds (aimv2.py "
                                  "QKVParallelLinear): matched by its own name, the same answer",
    ("Ovis", "tower packed:fc13"): "aimv2.py's mapper stacks mlp fc1 / fc3 into fc13 (orig_to_new_stacked), which no "
                                   "packed mapping keys: the lists are matched against fc13 by its own name, as "
                                   "fp8check does (Tower.unexpanded)",
    **{("Phi4ForCausalLMV", f"packed:{name}"): (
        "phi4siglip.py's class declares no packed_modules_mapping; its language model (init_vllm_registered_model of "
        "Phi3ForCausalLM, SupportsQuant) adds Phi-3's self-mapped qkv_proj / gate_up_proj to the quant config: the "
        "entry's packed is that one") for name in ("gate_up_proj", "qkv_proj")},
    ("Phi4ForCausalLMV", "tower packed:qkv_proj"): (
        "lfm2_siglip2.py's mapper stacks the tower's q / k / v into qkv_proj, which Phi-3's entry (the only one "
        "reaching the quant config) maps to itself: the lists are matched against qkv_proj by its own name, as "
        "fp8check does (Tower.unexpanded)"),
    ("Phi4ForCausalLMV", "tower packed:gate_up_proj"): "the SigLIP-2 tower's MLP is fc1 / fc2: no gate / up leaves",
    ("Phi4ForCausalLMV", "dropped:prefix:model.vision_tower.vision_tower.vision_model.head."): (
        "the mapper drops the tower's attention-pooling head; fp8check drops every name holding vision_model.head. "
        "(Tower.dropped), the same tensors"),
    **{("Phi4MMForCausalLM", f"tower packed:{name}"): (
        "phi4mm.py builds its image encoder (Idefics2VisionTransformer) with quant_config=None: no list is matched "
        "against it") for name in ("gate_up_proj", "qkv_proj")},
})

# ninth round (fam-mmb)
EXPECTED.update({
    **{(a, f"packed:{name}"): (
        f"{source}'s class declares no packed_modules_mapping (none of its own, or SupportsLoRA's empty one) and its "
        "language model (DeepseekV2ForCausalLM) is no SupportsQuant: the quant config's stays empty, which the entry "
        "models with Arch.quant_packed=False (lists matched by the fused names); the fusions themselves are "
        "load_weights' stacked_params_mapping")
       for a, source in (("DeepseekVLV2ForCausalLM", "deepseek_vl2.py"), ("DeepseekOCRForCausalLM", "deepseek_ocr.py"))
       for name in ("gate_up_proj", "qkv_proj")},
    ("DeepseekOCRForCausalLM", "tower packed:qkv_proj"): (
        "deepencoder.py's CLIP encoder (clip.py CLIPAttention) stores qkv_proj fused under the name vLLM builds: "
        "matched by its own name, the same answer; no quant config packed mapping reaches it"),
    ("GlmOcrForConditionalGeneration", "packed:gate_up_proj"): (
        "glm_ocr.py's class is glm4_1v.py's Glm4vForConditionalGeneration, which maps gate_up_proj to itself (see "
        "Glm4vForConditionalGeneration's entry)"),
    ("GlmOcrForConditionalGeneration", "tower packed:qkv"): (
        "GlmOcrVisionAttention's qkv is stored fused under the name vLLM builds (glm_ocr.py QKVParallelLinear): "
        "matched by its own name, the same answer"),
    **{("QianfanOCRForConditionalGeneration", f"packed:{name}"): (
        "qianfan_ocr.py's class is internvl.py's InternVLChatModel: no SupportsQuant, so the quant config gets "
        "SupportsLoRA's empty mapping and the language model's own (Qwen3ForCausalLM, SupportsQuant): fp8check lays "
        "the text model out by that class's entry") for name in ("gate_up_proj", "qkv_proj")},
    **{("QianfanOCRForConditionalGeneration", f"dropped:prefix:{part}"): (
        "InternVL's mapper (InternVLChatModel's, which qianfan_ocr.py inherits) drops the prefixes of training-only "
        "modules the released Qianfan-OCR checkpoint does not hold; not modelled (Arch.spec_prefix holds one prefix)")
       for part in _INTERNVL_TRAINING_ONLY},
    **{("Lfm2VlForConditionalGeneration", f"packed:{name}"): (
        "lfm2_vl.py's class declares no q / k / v or gate / up entries; its language model (init_vllm_registered_model "
        "of Lfm2ForCausalLM, SupportsQuant) adds its own to the quant config: fp8check lays the text model out by "
        "that class's entry; the entry's LLAMA_PACKED serves only a text class the table lacks")
       for name in ("gate_up_proj", "qkv_proj")},
    ("Lfm2VlForConditionalGeneration", "renames"): (
        "the class's mapper moves model.language_model. / model.vision_tower. / model.multi_modal_projector. and "
        "lm_head.; lfm2.py's own mapper, which the text model's load_weights applies after it, renames .conv. to "
        ".short_conv.: fp8check applies both to name the modules (the lists, which vLLM maps with the class's alone, "
        "reach no text layer either way: its prefix is language.*)"),
})


class Finding(NamedTuple):
    """One way fp8check's entry and vLLM's class disagree."""

    what: str                           # registry | load | packed:NAME | tower packed:NAME | dropped:KIND:PATTERN
    #                                     | source
    text: str
    platforms: tuple[str, ...] = ()     # the platforms it was seen on; (): every platform read
    listed: str | None = None           # EXPECTED's reason
    note: bool = False                  # reported, never a failure (a class resolved per platform)

    @property
    def fails(self) -> bool:
        return self.listed is None and not self.note


def _shards(shards) -> str:
    return "(" + ", ".join(shards) + ")"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _init_hint(name: str, init: dict) -> str:
    """What vLLM's __init__ does to the entry that its class attribute lacks, read from the source."""
    added = init.get("added", {}).get(name)
    if added:
        when = f"when `{_one_line(added['when'])}`" if added["when"] else "always"
        return f"; {added['owner']}.__init__ adds `{name}` = {_shards(added['shards'])} {when}"
    return "".join(f"; {r['owner']}.__init__ reassigns the mapping: `{_one_line(r['expr'])}`"
                   for r in init.get("reassigned", ()))


def packed_findings(ours: Arch, facts: dict) -> list[tuple[str, str]]:
    """fp8check's fused names (the text model's, then each tower's not already covered) against the class's
    packed_modules_mapping."""
    theirs = {name: tuple(shards) for name, shards in (facts["packed"] or {}).items()}
    init = facts.get("init", {})
    out = []
    for name in sorted(set(ours.packed) | set(theirs)):
        mine, their = ours.packed.get(name), theirs.get(name)
        if mine == their:
            continue
        if their is None:
            text = f"`{name}` = {_shards(mine)} only in fp8check{_init_hint(name, init)}"
        elif mine is None:
            text = f"`{name}` = {_shards(their)} only in vLLM's class"
        else:
            text = f"`{name}`: fp8check {_shards(mine)}, vLLM {_shards(their)}"
        out.append((f"packed:{name}", text))
    for tower in ours.towers:
        for name, shards in tower.packed.items():
            if ours.packed.get(name) != shards and theirs.get(name) != shards:
                their = _shards(theirs[name]) if name in theirs else "no entry"
                out.append((f"tower packed:{name}", f"tower {tower.source}: `{name}` = {_shards(shards)}; vLLM's "
                                                    f"class: {their}{_init_hint(name, init)}"))
    return out


def dropped_findings(ours: Arch, facts: dict) -> list[tuple[str, str]]:
    """fp8check's spec_prefix and spec_substrings against every name vLLM's mappers drop."""
    theirs: dict[tuple[str, str], list[str]] = {}
    for kind, pattern, owner in facts["dropped"]:
        theirs.setdefault((kind, pattern), []).append(owner)
    mine = {("prefix", ours.spec_prefix)} if ours.spec_prefix else set()
    mine |= {("substr", dropped) for dropped in ours.spec_substrings}
    out = [(f"dropped:{kind}:{pattern}", f"vLLM drops {kind} `{pattern}` ({', '.join(sorted(set(owners)))} "
                                         f"hf_to_vllm_mapper); fp8check's spec_prefix: {ours.spec_prefix!r}")
           for (kind, pattern), owners in sorted(theirs.items()) if (kind, pattern) not in mine]
    out += [(f"dropped:{kind}:{pattern}", f"fp8check's spec_prefix `{pattern}`: no hf_to_vllm_mapper of the class's "
                                          "file drops it")
            for kind, pattern in sorted(mine - set(theirs))]
    return out


def platform_findings(ours: Arch | None, retired: tuple[str, str] | None, facts: dict) -> list[tuple[str, str]]:
    """(what, text) of one platform's class: its registry entry, then packed and dropped names."""
    last = facts.get("previously_supported")
    if not facts["registered"]:
        if retired is not None and last == retired[0]:
            return []
        if retired is not None:
            said = f"last supported in {last}" if last else "absent, not in _PREVIOUSLY_SUPPORTED_MODELS"
            return [("registry", f"RETIRED says served until {retired[0]}; vLLM's registry: {said}")]
        return [("registry", "not in vLLM's registry" + (f" (retired: last supported in {last})" if last else ""))]
    if retired is not None:
        return [("registry", f"RETIRED says served until {retired[0]}; this release's registry still has it")]
    if facts["error"]:
        return [("load", f"vLLM could not load the class: {facts['error'][:200]}")]
    if ours is None:  # RETIRED in a later release: served here, laid out by fp8check's generic rules
        return []
    return packed_findings(ours, facts) + dropped_findings(ours, facts) + rename_findings(ours, facts)


def rename_findings(ours: Arch, facts: dict) -> list[tuple[str, str]]:
    """fp8check's hf_to_vllm (the renames it names vLLM's modules with and maps layer lists with) against the
    class's hf_to_vllm_mapper renames, entry by entry in map_name's order."""
    theirs = [tuple(rename) for rename in facts.get("renames") or ()]
    if list(ours.hf_to_vllm) == theirs:
        return []
    return [("renames", f"vLLM's hf_to_vllm_mapper renames {theirs or 'nothing'}; fp8check's hf_to_vllm: "
                        f"{list(ours.hf_to_vllm) or 'nothing'}")]


def source_findings(ours: Arch, theirs: dict[str, dict]) -> list[Finding]:
    """fp8check's `source` against the class's file (or a base's, or the registry's module) on every platform."""
    mine = ours.source.removeprefix("vllm:")
    loaded = {pl: f for pl, f in theirs.items() if f["registered"] and not f["error"]}
    if not loaded or all(mine in (f["source"], f["registry_source"], *f["bases"]) for f in loaded.values()):
        return []
    files = {pl: f["source"] for pl, f in loaded.items()}
    if len(set(files.values())) > 1:
        per = "; ".join(f"{pl}: {file}" for pl, file in files.items())
        return [Finding("source", f"vLLM resolves the class per platform ({per}); fp8check names {mine}", note=True)]
    return [Finding("source", f"fp8check names {mine}; vLLM's class is in {next(iter(files.values()))}")]


def compare(architecture: str, ours: Arch | None, retired: tuple[str, str] | None,
            theirs: dict[str, dict]) -> list[Finding]:
    """Every difference between fp8check's entry for `architecture` (None: not in ARCHITECTURES) and vLLM's class
    facts per platform (crosscheck_layouts.class_facts); `retired`: the RETIRED entry when it applies to this
    release. A difference seen on some platforms only names them; EXPECTED's reason is attached where listed."""
    seen: dict[tuple[str, str], list[str]] = {}
    for platform, facts in theirs.items():
        for key in platform_findings(ours, retired, facts):
            seen.setdefault(key, []).append(platform)
    findings = [Finding(what, text, () if len(pls) == len(theirs) else tuple(pls))
                for (what, text), pls in seen.items()]
    if ours is not None:
        findings += source_findings(ours, theirs)
    return [f._replace(listed=EXPECTED.get((architecture, f.what))) for f in findings]


def read_release(release: str, platform: str, architectures: list[str]) -> dict[str, dict]:
    """crosscheck_layouts' facts of every architecture, from the release's wheel on `platform`."""
    argv = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "crosscheck_layouts.py"), platform,
            "--stub"]
    proc = subprocess.run(argv, input=json.dumps(architectures), capture_output=True, text=True,
                          env=release_env(release), timeout=1800)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"vLLM {release} on {platform} produced no result:\n{proc.stderr[-3000:]}")
    return json.loads(lines[-1])


def _class_cell(theirs: dict[str, dict]) -> str:
    cells: dict[str, list[str]] = {}
    for pl, f in theirs.items():
        if not f["registered"]:
            cell = "not registered" + (f" (last {f['previously_supported']})" if f.get("previously_supported") else "")
        else:
            cell = f"{f['cls']} ({f.get('source') or f['registry_source']})"
        cells.setdefault(cell, []).append(pl)
    if len(cells) == 1:
        return next(iter(cells))
    return "; ".join(f"{', '.join(pls)}: {cell}" for cell, pls in cells.items())


def _packed_cell(ours: Arch | None, findings: list[Finding]) -> str:
    packed = [f for f in findings if "packed:" in f.what]
    if ours is None or any(f.what in ("registry", "load") for f in findings):
        return "-"
    if any(f.fails for f in packed):
        return "no"
    return "yes (listed)" if packed else "yes"


def _finding_cell(f: Finding) -> str:
    label = "note" if f.note else "listed" if f.listed else "**differs**"
    where = f" [{', '.join(f.platforms)}]" if f.platforms else ""
    return f"{label}: {f.text}{where}".replace("|", "\\|")


def release_table(release: str, results: dict[str, tuple[Arch | None, list[Finding], dict]]) -> str:
    """The Markdown table of one release, then the EXPECTED entries it met and those it did not."""
    lines = [f"### vLLM {release}", "", "| architecture | vLLM class (file) | packed agrees? | differences |",
             "|---|---|---|---|"]
    met = set()
    for arch, (ours, findings, theirs) in sorted(results.items()):
        met |= {(arch, f.what) for f in findings if f.listed}
        lines.append(f"| {arch} | {_class_cell(theirs)} | {_packed_cell(ours, findings)} | "
                     f"{'<br>'.join(_finding_cell(f) for f in findings) or '-'} |")
    lines += ["", "Listed differences met (EXPECTED):"]
    lines += [f"- {arch} `{what}`: {EXPECTED[(arch, what)]}" for arch, what in sorted(met)] or ["- none"]
    unmet = sorted(key for key in EXPECTED if key not in met and key[0] in results)
    lines += ["", "EXPECTED entries this release does not meet (fp8check carries no such entry, or it agrees):"]
    lines += [f"- {arch} `{what}`" for arch, what in unmet] or ["- none"]
    return "\n".join(lines)


def check(releases: list[str], platforms: list[str], jobs: int = 3) -> tuple[str, bool]:
    """The tables of every release, and whether every difference is listed."""
    architectures = sorted({*ARCHITECTURES, *RETIRED})
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = {(r, pl): pool.submit(read_release, r, pl, architectures) for r in releases for pl in platforms}
    out, passed = [], True
    for release in releases:
        profile = select_profile(release)
        facts: dict[str, dict[str, dict]] = {a: {} for a in architectures}
        try:
            for pl in platforms:
                for arch, one in futures[(release, pl)].result().items():
                    facts[arch][pl] = one
        except RuntimeError as exc:  # vLLM could not be imported under the stubs: a harness gap, a failure
            out.append(f"### vLLM {release}\n\nharness: {exc}")
            passed = False
            continue
        results = {}
        for arch in architectures:
            ours = ARCHITECTURES[arch].for_release(profile) if arch in ARCHITECTURES else None
            retired = RETIRED[arch] if arch in RETIRED and profile.has(RETIRED[arch][1]) else None
            findings = compare(arch, ours, retired, facts[arch])
            passed &= not any(f.fails for f in findings)
            results[arch] = (ours, findings, facts[arch])
        out.append(release_table(release, results))
    return "\n\n".join(out), passed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--releases", default="0.33.0,0.34.0")
    parser.add_argument("--platforms", default=",".join(PLATFORMS))
    parser.add_argument("--jobs", type=int, default=3)
    args = parser.parse_args()
    tables, passed = check(args.releases.split(","), args.platforms.split(","), args.jobs)
    print(tables)
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
