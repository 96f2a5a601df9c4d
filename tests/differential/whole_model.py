"""Whole-model differential check: vLLM's real model class against `fp8check inspect`, every module.

    python tests/differential/whole_model.py --releases 0.28.0,0.33.0 [--markdown FILE] [--families a,b]
        [--quants q,r] [--platforms p,s] [--kv-cache-dtypes auto,fp8] [--stand-in PROFILE]

For every architecture of fp8check.core.model.layouts (FAMILIES: a generated checkpoint with real-looking widths
and a config.json as the family's exporters write it, keys transformers' config class reads), each stored format
of QUANTS and each parallel setting of PARALLEL (--kv-cache-dtype auto), and the KV cache axis (KV_FAMILIES x
KV_QUANTS x KV_CACHE_DTYPES x KV_PARALLEL: checkpoints with each format's KV scales), the release's model class is
built whole on the meta device (tests/differential/crosscheck_model.py, one subprocess per release and
platform) and every module holding a quant method is compared with fp8check's report of the same checkpoint:
linear method / scheme and kernel, FusedMoE method, experts class and backend, each attention layer's KV cache
dtype, KV cache method and attention backend (or vLLM's refusal), and what only one side builds. Exit 0 when every
difference is listed (EXPLAINED, OPEN). Needs the unzipped wheels like run.py. whole_model_suite() is the run as a
function (new_release.py runs it on a new release); --stand-in as in run.py.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import InputError
from fp8check.core.records import InspectOptions
from fp8check.core.routing.crosscheck import vllm_error
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.synth import (Spec, alice_ai_tensors, bailing_tensors, bailing_v3_vision_tensors, deepseek_ocr_tensors,
                            deepseek_v4_vision_tensors, deepseek_v41_tensors, deepseek_vl2_tensors,
                            gemma3n_tower_tensors, inkling_tensors, intern_vit_tensors, internlm2_tensors,
                            k2_horizon_tensors, kimi_k3_tensors, minicpmo_audio_tensors, minicpmv_vision_tensors,
                            moonvit_tensors, nemotron_vl_tensors, ovis2_5_vision_tensors, ovis_aimv2_tensors,
                            phi3v_vision_tensors, phi4mm_tensors, phi4v_vision_tensors, qwen3_asr_audio_tensors,
                            whisper_encoder_tensors, write_checkpoint)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crosscheck_model import compare_model, our_modules  # noqa: E402  # isort: skip  (vLLM's side, beside this file)
from run import (  # noqa: E402  # isort: skip  (the linear-by-linear run, beside this file)
    DEPRECATED_QUANTS, Difference, Suite, add_stand_in, did_not_start, difference_table, divergence, profile_for,
    publish, release_env,
)


# Step-5's sparse-indexer tensors ([out, in]: 16 heads x proxy_dim 256, one K and one Z head, a weight row per head).
_STEP5_INDEXER = {"sparse_indexer_q": (4096, 2048), "sparse_indexer_k": (256, 2048), "sparse_indexer_z": (256, 2048),
                  "sparse_indexer_w": (16, 2048)}
# Real-looking widths (Qwen3-30B-A3B / GLM-4.5-Air scaled in depth, not in width): 16 heads, 4 KV heads of 128,
# every MLP and expert shard a whole number of 128-blocks at TP 8; two decoder layers (sparse data: headers only).
BASE = dict(hidden=2048, heads=16, kv_heads=4, head_dim=128, intermediate=4096, vocab=4096, layers=2, data="sparse",
            moe_intermediate=1024, vision_hidden=1024, vision_heads=16)
_MOE = dict(experts=8)
_MLA = dict(mla=True, kv_lora_rank=512, qk_rope_head_dim=64, moe_style="deepseek", shared_experts=1,
            first_k_dense=1, **_MOE)
# id -> (Spec fields, config.json keys beyond synth's: what the family's own config class reads).
FAMILIES: dict[str, tuple[dict, dict]] = {
    "llama": (dict(architecture="LlamaForCausalLM", model_type="llama"), {}),
    "mistral": (dict(architecture="MistralForCausalLM", model_type="mistral"), {}),
    "qwen2": (dict(architecture="Qwen2ForCausalLM", model_type="qwen2"), {}),
    "qwen3": (dict(architecture="Qwen3ForCausalLM", model_type="qwen3"), {}),
    "gemma": (dict(architecture="GemmaForCausalLM", model_type="gemma", tie_embeddings=True), {}),
    "gemma-2": (dict(architecture="Gemma2ForCausalLM", model_type="gemma2", tie_embeddings=True), {}),
    "gemma-3": (dict(architecture="Gemma3ForCausalLM", model_type="gemma3_text", tie_embeddings=True), {}),
    "phi-3": (dict(architecture="Phi3ForCausalLM", model_type="phi3", fused_on_disk=True), {}),
    "mixtral": (dict(architecture="MixtralForCausalLM", model_type="mixtral", moe_style="mixtral", **_MOE),
                {"num_local_experts": 8, "intermediate_size": 1024, "num_experts_per_tok": 2}),
    "qwen2-moe": (dict(architecture="Qwen2MoeForCausalLM", model_type="qwen2_moe", shared_experts=1, **_MOE),
                  {"shared_expert_intermediate_size": 1024, "num_experts_per_tok": 2, "decoder_sparse_step": 1,
                   "mlp_only_layers": []}),
    "qwen3-moe": (dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", **_MOE),
                  {"num_experts_per_tok": 2, "decoder_sparse_step": 1, "mlp_only_layers": []}),
    # The same with routers left out of the ignore list: qwen3_moe.py builds mlp.gate with the quant config, so
    # vLLM makes an FP8 method of the BF16 router (fp8check: an integrity error naming the tensor).
    "qwen3-moe-router-unlisted": (dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe",
                                       ignore_routers=False, **_MOE),
                                  {"num_experts_per_tok": 2, "decoder_sparse_step": 1, "mlp_only_layers": []}),
    # Fewer experts than TP 8: qwen3_moe.py's MoE block refuses the build (layouts.TP_ABOVE_EXPERTS).
    "qwen3-moe-4-experts": (dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=4),
                            {"num_experts_per_tok": 2, "decoder_sparse_step": 1, "mlp_only_layers": []}),
    # Qwen3-30B-A3B's expert width (768): at TP 8 a 96-row shard no 128-block divides, which native fp8 refines to
    # 32-blocks (moe-block-refine) or, under a --moe-backend whose classes refuse that, pads (moe-block-pad).
    "qwen3-moe-768": (dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", moe_intermediate=768, **_MOE),
                      {"num_experts_per_tok": 2, "decoder_sparse_step": 1, "mlp_only_layers": []}),
    "deepseek-v2-lite": (dict(architecture="DeepseekV2ForCausalLM", model_type="deepseek_v2", **_MLA),
                         {"num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "topk_method": "greedy"}),
    "deepseek-v3": (dict(architecture="DeepseekV3ForCausalLM", model_type="deepseek_v3", q_lora_rank=1536,
                         mtp_layers=1, **_MLA),
                    {"num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "topk_method": "noaux_tc"}),
    "glm-4.5": (dict(architecture="Glm4MoeForCausalLM", model_type="glm4_moe", moe_style="deepseek", shared_experts=1,
                     first_k_dense=1, mtp_layers=1, **_MOE),
                {"num_experts_per_tok": 2, "n_group": 1, "topk_group": 1, "partial_rotary_factor": 0.5}),
    "minimax-m2": (dict(architecture="MiniMaxM2ForCausalLM", model_type="minimax_m2", moe_style="mixtral", **_MOE),
                   {"num_local_experts": 8, "intermediate_size": 1024, "num_experts_per_tok": 2,
                    "rotary_dim": 64, "scoring_func": "sigmoid", "use_routing_bias": True}),
    "gpt-oss": (dict(architecture="GptOssForCausalLM", model_type="gpt_oss", moe_style="gpt_oss",
                     attention_sinks=True, **_MOE),
                {"num_local_experts": 8, "intermediate_size": 1024, "num_experts_per_tok": 2}),
    "llama-4-text": (dict(architecture="Llama4ForCausalLM", model_type="llama4_text", moe_style="llama4",
                          shared_experts=1, **_MOE),
                     {"num_local_experts": 8, "intermediate_size": 1024, "intermediate_size_mlp": 4096,
                      "num_experts_per_tok": 1, "interleave_moe_layer_step": 1}),
}


def _text_config(model_type: str, **extra) -> dict:
    """A vision-language config's text_config: BASE's text widths under the text model's own model_type."""
    return {"model_type": model_type, "hidden_size": BASE["hidden"], "intermediate_size": BASE["intermediate"],
            "num_hidden_layers": BASE["layers"], "num_attention_heads": BASE["heads"],
            "num_key_value_heads": BASE["kv_heads"], "head_dim": BASE["head_dim"], "vocab_size": BASE["vocab"],
            "max_position_embeddings": 512, **extra}


_V = BASE["vision_hidden"]
# One vision block, its widths as synth writes them (MLP 2 x hidden, 2 x 2 patch merger), 16 heads.
_QWEN_VISION = {"depth": 1, "hidden_size": _V, "intermediate_size": 2 * _V, "num_heads": 16,
                "out_hidden_size": BASE["hidden"], "spatial_merge_size": 2, "patch_size": 14, "temporal_patch_size": 2,
                "in_chans": 3, "in_channels": 3}
_VLM = dict(text_prefix="language_model.model", ignore=("language_model.lm_head",))
FAMILIES.update({
    "qwen2.5-vl": (dict(architecture="Qwen2_5_VLForConditionalGeneration", model_type="qwen2_5_vl",
                        vision="qwen2_5_vl"),
                   {"vision_config": {**_QWEN_VISION, "fullatt_block_indexes": [0], "window_size": 112}}),
    "qwen3-vl": (dict(architecture="Qwen3VLForConditionalGeneration", model_type="qwen3_vl", vision="qwen3_vl",
                      text_prefix="model.language_model"),
                 {"text_config": _text_config("qwen3_vl_text"),
                  "vision_config": {**_QWEN_VISION, "deepstack_visual_indexes": [0], "patch_size": 16,
                                    "num_position_embeddings": 2304}}),
    "qwen3-vl-moe": (dict(architecture="Qwen3VLMoeForConditionalGeneration", model_type="qwen3_vl_moe",
                          vision="qwen3_vl", text_prefix="model.language_model", **_MOE),
                     {"text_config": _text_config("qwen3_vl_moe_text", num_experts=8, moe_intermediate_size=1024,
                                                  num_experts_per_tok=2, decoder_sparse_step=1, mlp_only_layers=[],
                                                  norm_topk_prob=True),
                      "vision_config": {**_QWEN_VISION, "deepstack_visual_indexes": [0], "patch_size": 16,
                                        "num_position_embeddings": 2304}}),
    "gemma-3-vision": (dict(architecture="Gemma3ForConditionalGeneration", model_type="gemma3", vision="siglip",
                            tie_embeddings=True, **_VLM),
                       {"text_config": _text_config("gemma3_text", tie_word_embeddings=True),
                        "vision_config": {"model_type": "siglip_vision_model", "hidden_size": _V,
                                          "intermediate_size": 2 * _V, "num_hidden_layers": 1,
                                          "num_attention_heads": 16, "image_size": 896, "patch_size": 14},
                        "mm_tokens_per_image": 256}),
    # The same with Gemma-3-4B / 12B's head_dim 256 (27B's is 128, as above): the head size vLLM 0.30+'s
    # TRITON_FLASH_ATTN (sm90, XPU in 0.33) and TRITON_FLASHINFER (sm100) composites take for an mm-prefix model.
    "gemma-3-vision-256": (dict(architecture="Gemma3ForConditionalGeneration", model_type="gemma3", vision="siglip",
                                tie_embeddings=True, head_dim=256, **_VLM),
                           {"text_config": _text_config("gemma3_text", tie_word_embeddings=True, head_dim=256),
                            "vision_config": {"model_type": "siglip_vision_model", "hidden_size": _V,
                                              "intermediate_size": 2 * _V, "num_hidden_layers": 1,
                                              "num_attention_heads": 16, "image_size": 896, "patch_size": 14},
                            "mm_tokens_per_image": 256}),
    "mistral-3": (dict(architecture="Mistral3ForConditionalGeneration", model_type="mistral3", vision="pixtral",
                       text_prefix="language_model.model",
                       ignore=("language_model.lm_head", "multi_modal_projector.patch_merger.merging_layer")),
                  {"text_config": _text_config("mistral"),
                   "vision_config": {"model_type": "pixtral", "hidden_size": _V, "intermediate_size": 2 * _V,
                                     "num_hidden_layers": 1, "num_attention_heads": 16, "head_dim": _V // 16,
                                     "patch_size": 14, "image_size": 1540},
                   "spatial_merge_size": 2, "multimodal_projector_bias": False, "vision_feature_layer": -1}),
    "llama-4-vision": (dict(architecture="Llama4ForConditionalGeneration", model_type="llama4", moe_style="llama4",
                            shared_experts=1, vision="llama4", **_VLM, **_MOE),
                       {"text_config": _text_config("llama4_text", num_local_experts=8, intermediate_size=1024,
                                                    intermediate_size_mlp=4096, num_experts_per_tok=1,
                                                    interleave_moe_layer_step=1),
                        "vision_config": {"hidden_size": _V, "intermediate_size": 2 * _V, "num_hidden_layers": 1,
                                          "num_attention_heads": 16, "image_size": 336, "patch_size": 14,
                                          "pixel_shuffle_ratio": 0.5, "projector_input_dim": 4 * _V,
                                          "projector_output_dim": _V, "vision_output_dim": _V}}),
})
# MiMo-V2-Flash's keys (its hub config.json's, which mimo_v2.py reads, and transformers' MiMoV2FlashConfig's).
_MIMO_V2_FLASH = dict(num_hidden_layers=4, moe_intermediate_size=1024, head_dim=192, v_head_dim=128,
                      swa_num_attention_heads=16, swa_num_key_value_heads=8, swa_head_dim=192, swa_v_head_dim=128,
                      layer_types=["full_attention", "sliding_attention", "sliding_attention", "full_attention"],
                      hybrid_layer_pattern=[0, 1, 1, 0], mlp_layer_types=["dense", "sparse", "sparse", "sparse"],
                      moe_layer_freq=[0, 1, 1, 1], sliding_window=128, sliding_window_size=128,
                      add_swa_attention_sink_bias=True, add_full_attention_sink_bias=False, layernorm_epsilon=1e-5,
                      n_routed_experts=8, num_experts_per_tok=2, n_group=1, topk_group=1, norm_topk_prob=True,
                      scoring_func="sigmoid", topk_method="noaux_tc", partial_rotary_factor=0.334,
                      rope_theta=5000000, swa_rope_theta=10000, attention_value_scale=0.707)
_MIMO_V2_MTP = {"model.mtp.layers.0.eh_proj.weight": (2048, 4096), "model.mtp.layers.0.self_attn.q_proj.weight":
                (16 * 192, 2048), "model.mtp.layers.0.mlp.gate_proj.weight": (4096, 2048)}
# MiMo-V2-Omni's towers (mimo_v2_omni.py MiMoVisionTransformer, mimo_audio.py MimoAudioEncoder), BF16 under the
# names the model loads: two vision blocks (32 heads, 8 KV heads of 64; the first a window block with sinks, the
# second full attention) and the merger; the audio encoder's two Qwen2 layers (heads 16 x 64), speech embeddings and
# projection.
_MIMO_OMNI_VISION = dict(depth=2, hidden_size=1024, intermediate_size=2048, num_heads=32, num_key_value_heads=8,
                         qk_channels=64, kv_channels=64, out_hidden_size=2048, spatial_merge_size=2, patch_size=16,
                         temporal_patch_size=2, in_channels=3, fullatt_block_indexes=[1], use_sink=True,
                         vit_window_attn_types=[1, -1], visual_token_window_size=64, hidden_act="silu")
_MIMO_OMNI_AUDIO = dict(speech_vocab_size="1025-1025-129-129", speech_zeroemb_idx="1024-1024-128-128", group_size=4,
                        audio_channels=4, input_local_layers=2, input_local_dim=1024, input_local_attn_heads=16,
                        input_local_head_dim=64, input_local_intermediate_size=4096, out_hidden_size=2048,
                        projection_layers=1)


def _mimo_omni_towers() -> dict[str, tuple[int, ...]]:
    """The towers' tensors (BF16 in the checkpoint: the ignore list names them) and the MTP layer's."""
    tensors: dict[str, tuple[int, ...]] = dict(_MIMO_V2_MTP)
    for i in range(2):
        block = f"visual.blocks.{i}"
        tensors.update({f"{block}.attn.qkv.weight": ((32 + 2 * 8) * 64, 1024), f"{block}.attn.qkv.bias": (48 * 64,),
                        f"{block}.attn.proj.weight": (1024, 32 * 64), f"{block}.attn.proj.bias": (1024,),
                        f"{block}.mlp.gate_proj.weight": (2048, 1024), f"{block}.mlp.up_proj.weight": (2048, 1024),
                        f"{block}.mlp.down_proj.weight": (1024, 2048), f"{block}.norm1.weight": (1024,),
                        f"{block}.norm2.weight": (1024,)})
    tensors.update({"visual.blocks.0.attn.sinks": (32,), "visual.patch_embed.proj.weight": (1024, 3, 2, 16, 16),
                    "visual.merger.ln_q.weight": (1024,), "visual.merger.mlp.0.weight": (4096, 4096),
                    "visual.merger.mlp.2.weight": (2048, 4096), "audio_encoder.projection.weight": (2048, 4096)})
    for i in range(2):
        layer = f"audio_encoder.input_local_transformer.layers.{i}"
        tensors.update({f"{layer}.self_attn.{leaf}.weight": (1024, 1024) for leaf in ("q_proj", "k_proj", "v_proj",
                                                                                       "o_proj")})
        tensors.update({f"{layer}.mlp.gate_proj.weight": (4096, 1024), f"{layer}.mlp.up_proj.weight": (4096, 1024),
                        f"{layer}.mlp.down_proj.weight": (1024, 4096)})
    tensors.update({f"speech_embeddings.{i}.weight": (size, 1024) for i, size in enumerate((1025, 1025, 129, 129))})
    return tensors


# Families written by transformers' own model class (synth's Spec.transformers): the names its exporters save.
_GDN = dict(linear_num_key_heads=8, linear_num_value_heads=16, linear_key_head_dim=128, linear_value_head_dim=128,
            linear_conv_kernel_dim=4, layer_types=["linear_attention", "full_attention"] * 2)
_QWEN35_MOE = dict(num_experts=8, moe_intermediate_size=1024, shared_expert_intermediate_size=1024,
                   num_experts_per_tok=2, **_GDN)
_HF = dict(transformers=True, layers=4)
# LFM2's layer kinds: short convolutions and full attention.
_LFM_LAYERS = dict(layer_types=["conv", "full_attention", "conv", "full_attention"])
# Granite's sliding-window classes: three sliding layers, then a full one.
_SWA_LAYERS = ["sliding_attention"] * 3 + ["full_attention"]
_SWA_TOKENS = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2)  # the config class's defaults lie past the vocab
# Granite's multipliers (granite.py, granitemoe*.py: scales, no linears).
_GRANITE = dict(attention_multiplier=0.0078125, embedding_multiplier=12.0, residual_multiplier=0.22, logits_scaling=8.0)
# GLM-4V's tower (glm4_1v.py Glm4vVisionTransformer): one block, its MLP as wide as out_hidden_size.
_GLM4V_VISION = {"model_type": "glm4v_vision", "depth": 1, "hidden_size": _V, "num_heads": 16,
                 "out_hidden_size": BASE["hidden"], "intermediate_size": BASE["intermediate"], "patch_size": 14,
                 "spatial_merge_size": 2, "temporal_patch_size": 2, "in_channels": 3, "image_size": 336}
# Gemma-4: sliding / full layers alternating (full: global_head_dim 256, 2 KV heads, V read from K), a MoE of 8
# gelu_tanh experts beside every dense MLP, no per-layer embeddings.
_GEMMA4 = dict(num_hidden_layers=4, global_head_dim=256, num_global_key_value_heads=2, attention_k_eq_v=True,
               layer_types=["sliding_attention", "full_attention"] * 2, sliding_window=512,
               hidden_size_per_layer_input=0, num_kv_shared_layers=0, enable_moe_block=True, num_experts=8,
               top_k_experts=2, moe_intermediate_size=1024, tie_word_embeddings=True)
# Gemma-3n's text config (gemma3n_text) as the released E2B writes it, at six layers.
_GEMMA3N_TEXT = dict(hidden_size=2048, intermediate_size=[8192] * 6, num_hidden_layers=6, num_attention_heads=8,
                     num_key_value_heads=2, head_dim=256, vocab_size=4096, vocab_size_per_layer_input=4096,
                     hidden_size_per_layer_input=256, altup_num_inputs=4, altup_active_idx=0, altup_correct_scale=True,
                     laurel_rank=64, num_kv_shared_layers=2,
                     activation_sparsity_pattern=[0.95, 0.95, 0.0, 0.0, 0.0, 0.0],
                     layer_types=["sliding_attention"] * 3 + ["full_attention", "sliding_attention", "full_attention"],
                     sliding_window=512, hidden_activation="gelu_pytorch_tanh", final_logit_softcapping=30.0,
                     tie_word_embeddings=True, max_position_embeddings=512)
_GEMMA3N_VL = {"text_config": {"model_type": "gemma3n_text", **_GEMMA3N_TEXT},
               "vision_config": {"model_type": "gemma3n_vision", "architecture": "mobilenetv5_300m_enc",
                                 "hidden_size": 2048, "vocab_size": 128, "vocab_offset": 262144,
                                 "rms_norm_eps": 1e-06, "do_pooling": False},
               "audio_config": {"model_type": "gemma3n_audio", "hidden_size": 1536, "vocab_size": 128,
                                "vocab_offset": 262272, "conf_num_hidden_layers": 1, "conf_num_attention_heads": 8,
                                "input_feat_size": 128},
               "tie_word_embeddings": True, "audio_soft_tokens_per_image": 188, "vision_soft_tokens_per_image": 256,
               "boi_token_id": 255999, "eoi_token_id": 262144, "boa_token_id": 256000, "eoa_token_id": 262272,
               "image_token_id": 262145, "audio_token_id": 262273}
_GEMMA3N_IGNORE = ("lm_head", "re:.*vision_tower.*", "re:.*audio_tower.*", "re:.*embed_vision.*",
                   "re:.*embed_audio.*")
# DeepSeek-V3.2 / GLM-5: DeepSeek-V3's MLA and MoE with the sparse-attention indexer (index_topk as released).
_DSA = dict(num_hidden_layers=2, moe_intermediate_size=1024, first_k_dense_replace=1, moe_layer_freq=1,
            num_key_value_heads=16, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
            v_head_dim=128, n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2, n_group=1, topk_group=1,
            norm_topk_prob=True, scoring_func="sigmoid", topk_method="noaux_tc", index_topk=2048, index_n_heads=16,
            index_head_dim=128, num_nextn_predict_layers=1)
# The indexer's weights_proj stays BF16 in the released checkpoints; wk is FP8 (vLLM dequantizes it at load).
_DSA_IGNORE = dict(ignore=("lm_head", "model.layers.0.self_attn.indexer.weights_proj",
                           "model.layers.1.self_attn.indexer.weights_proj"))

# DeepSeek-V4 (Flash-Base layout: FP8 experts, expert_dtype "fp8"): one layer of each attention kind (sliding,
# compressed-sparse with the indexer, heavily compressed) and both MoE kinds (hash-routed, top-k).
_DSV4 = dict(num_hidden_layers=4, moe_intermediate_size=1024, num_key_value_heads=1, head_dim=512, q_lora_rank=1024,
             o_groups=4, o_lora_rank=512, index_n_heads=16, index_head_dim=128, index_topk=64, n_routed_experts=8,
             n_shared_experts=1, num_experts_per_tok=2, norm_topk_prob=True, routed_scaling_factor=1.5,
             scoring_func="sqrtsoftplus", topk_method="noaux_tc", swiglu_limit=10.0, sliding_window=128, hc_mult=4,
             layer_types=["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention",
                          "compressed_sparse_attention"], mlp_layer_types=["hash_moe", "hash_moe", "moe", "moe"],
             num_nextn_predict_layers=1, expert_dtype="fp8")
# What the released checkpoints keep in BF16 (DeepSeek's own names): the head, the routers, the indexer's
# weights_proj and the compressors' wkv / wgate (vLLM builds them all with quant_config=None).
_DSV4_IGNORE = dict(ignore=("head", r"re:.*\.ffn\.gate$", r"re:.*\.indexer\.weights_proj$",
                            r"re:.*\.compressor\.w(kv|gate)$"))

# DeepSeek-V4-Flash-Vision-Exp's flat vision_* keys; the tower and aligner stay BF16 (vLLM builds them unquantized).
_DSV4_VISION = dict(vision_n_layers=1, vision_dim=1024, vision_n_heads=16, vision_inter_dim=2816, vision_patch_size=14,
                    vision_downsample_ratio=3, vision_rope_theta=10000.0)
_DSV4_VL_IGNORE = (*_DSV4_IGNORE["ignore"], r"re:(vision|aligner)\.")
# DeepSeek-V4.1 (text_config / vision_config nested): a sliding layer, a ratio-2 KV source (compressor, indexer
# owning wk, an Engram), a ratio-2 consumer (indexer without wk), a ratio-1 KV source (compressor without wgate);
# no hash-routed layers. The keys transformers' V4 config class defaults are spelled out (V4.1's own has none).
_DSV41_TEXT = dict({k: v for k, v in _DSV4.items() if k not in ("layer_types", "mlp_layer_types")},
                   model_type="deepseek_v41", hidden_size=2048, num_attention_heads=16, vocab_size=4096,
                   max_position_embeddings=4096, compress_ratios=[0, 2, 2, 1], kv_source_layer_ids=[1, 3],
                   index_source_layer_ids=[1, 2, 3], qk_rope_head_dim=64, hc_sinkhorn_iters=20, hc_eps=1e-06,
                   rms_norm_eps=1e-06, rope_theta=10000.0, compress_rope_theta=160000.0, hidden_act="silu",
                   engram_layer_ids=[1], engram_num_embeddings=[8192], engram_max_ngram_size=3, engram_n_heads=2,
                   engram_head_dim=64, engram_compressed_vocab_size=1024, engram_pad_token_id=0,
                   engram_vocab_size=1024)
_DSV41 = dict({k: _DSV41_TEXT[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                           "num_key_value_heads", "head_dim", "vocab_size")},
              text_config=_DSV41_TEXT,
              vision_config=dict(num_hidden_layers=1, hidden_size=1024, num_attention_heads=16, intermediate_size=2816,
                                 patch_size=14, downsample_ratio=3))
_DSV41_SPEC = dict(ignore=(*_DSV4_VL_IGNORE, r"re:.*\.indexer\.wk$"),
                   extra_tensors={**deepseek_v41_tensors(_DSV41_TEXT),
                                  **deepseek_v4_vision_tensors(2048, _DSV4_VISION, ("start", "end", "newline"))})


def _gdn_ignore(root: str, leaves: tuple[str, ...] = ("in_proj_b", "in_proj_a"), head: str = "lm_head") -> dict:
    """Qwen's FP8 exports leave the gated-delta-net's b / a projections (num_v_heads rows, no 128-block fits) and
    the head unquantized: the ignore list of layers 0 and 2 (the linear-attention ones)."""
    return dict(ignore=(head, *(f"{root}.layers.{i}.linear_attn.{leaf}" for i in (0, 2) for leaf in leaves)))


def _mamba1_ignore(root: str, layers: tuple[int, ...], leaf: str = "mamba") -> tuple[str, ...]:
    """The Mamba-1 mixers' linears (layers/mamba/mamba_mixer.py MambaMixer: no quant config), left BF16 by the
    exporter: the ignore list of those layers."""
    return tuple(f"{root}.layers.{i}.{leaf}.{p}" for i in layers for p in ("in_proj", "x_proj", "dt_proj", "out_proj"))


# GLM-5-Next (GLM-5.3-Flash): KDA and sparse-MLA layers alternating (real widths: NoPE MLA of 256-wide heads, a
# 512 latent, the kpool indexer), dense then MoE MLPs, one MTP layer (get_spec_layer_idx_from_weight_name skips it).
# The FP8 release quantizes the MLPs and experts (and the MLA's q_a / kv_a / q_b / o and the indexer's wk, which
# vLLM dequantizes at load); KDA projections, kv_b_proj, the indexer's wq_b / weights_proj, the vision tower and the
# head stay BF16, as its loader expects (models/glm5next/common/kda.py: "fp8 checkpoints omit their scales").
_GLM5_NEXT = dict(num_hidden_layers=4, moe_intermediate_size=1024, num_key_value_heads=16, q_lora_rank=1536,
                  kv_lora_rank=512, qk_nope_head_dim=256, qk_rope_head_dim=0, v_head_dim=256, head_dim=0,
                  n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2, n_group=1, topk_group=1,
                  norm_topk_prob=True, scoring_func="sigmoid", topk_method="noaux_tc", index_topk=2048,
                  index_n_heads=16, index_head_dim=128, index_kpool=16, linear_num_heads=16, linear_head_dim=128,
                  layer_types=["linear_attention", "indexed_attention"] * 2,
                  mlp_layer_types=["dense", "sparse", "sparse", "sparse"], mla_use_nope=True, mhc=True, hc_mult=4,
                  indexer_rope_interleave=False, num_nextn_predict_layers=1, pad_token_id=0)
_GLM5_NEXT_BF16 = ("re:.*self_attn\\.(q|k|v|b|f_a|f_b|g_a|g_b|o)_proj$", "re:.*kv_b_proj$",
                   "re:.*indexer\\.(wq_b|weights_proj)$")


# LongCat-Flash's config keys (transformers' LongcatFlashConfig names: num_layers, ffn_hidden_size,
# expert_ffn_hidden_size, moe_topk) and the ones only vLLM's longcat_flash.py reads (zero_expert_type, mla_scale_*).
_LONGCAT_FLASH = dict(num_layers=2, ffn_hidden_size=BASE["intermediate"], expert_ffn_hidden_size=1024,
                      num_attention_heads=16, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                      qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=8, zero_expert_num=4,
                      zero_expert_type="identity", moe_topk=2, routed_scaling_factor=6.0, mla_scale_q_lora=True,
                      mla_scale_kv_lora=True)
# A few of the MTP block's tensors, as LongCat's checkpoints name them (longcat_flash_mtp.py's mapping table).
_LONGCAT_MTP = {"model.mtp.layers.0.eh_proj.weight": (BASE["hidden"], 2 * BASE["hidden"]),
                "model.mtp.layers.0.self_attn.q_a_proj.weight": (1536, BASE["hidden"]),
                "model.mtp.layers.0.transformer_layer.mlp.gate_proj.weight": (BASE["intermediate"], BASE["hidden"])}
# LongCat-Flash-Lite's n-gram tables (longcat_flash_ngram.py NgramEmbedding, ratio 2, 2 splits, 3 neighbours): table i
# has ratio x vocab + 2i + 1 rows of hidden / 4 columns, post_projs[i] hidden x hidden / 4.
_LONGCAT_NGRAM = {name: shape for i in range(4) for name, shape in (
    (f"model.ngram_embeddings.embedders.{i}.weight", (2 * BASE["vocab"] + 2 * i + 1, BASE["hidden"] // 4)),
    (f"model.ngram_embeddings.post_projs.{i}.weight", (BASE["hidden"], BASE["hidden"] // 4)))}


def _glm5_next_mtp(root: str) -> dict:
    """The MTP layer after the 4 decoder layers (transformers' class builds none): a few of its tensors."""
    layer = f"{root}.layers.4."
    return {f"{layer}eh_proj.weight": (BASE["hidden"], 2 * BASE["hidden"]),
            f"{layer}self_attn.q_a_proj.weight": (1536, BASE["hidden"]),
            **{f"{layer}mlp.experts.0.{leaf}.weight": (1024, BASE["hidden"]) for leaf in ("gate_proj", "up_proj")},
            f"{layer}mlp.experts.0.down_proj.weight": (BASE["hidden"], 1024)}



# Step-3.5's text config (step3p5.py): a sliding layer with its own head count, dense layer 0, MoE layers 1-2 (layer 2
# swiglustep experts), per-head attention gates.
_STEP35 = dict(num_hidden_layers=3, layer_types=["full_attention", "sliding_attention", "full_attention"],
               sliding_window=512, num_sliding_attention_heads=32, mlp_layer_types=["dense", "sparse", "sparse"],
               moe_num_experts=8, moe_top_k=2, moe_intermediate_size=1024, share_expert_dim=1024,
               use_moe_router_bias=True, need_fp32_gate=True, norm_expert_weight=True, moe_router_activation="sigmoid",
               moe_router_scaling_factor=1.0, swiglu_limits=[0, 0, 7], swiglu_limits_shared=[0, 0, 0],
               use_head_wise_attn_gate=True)
_STEP3 = dict(names="step3", layers=4, kv_heads=1, head_dim=256, heads=8, first_k_dense=1, **_MOE)
_STEP3_TEXT = dict(num_attention_groups=1, share_q_dim=1024, head_dim=256, moe_num_experts=8, moe_top_k=2,
                   moe_intermediate_size=1024, share_expert_dim=1024, moe_layers_enum="1,2,3", norm_expert_weight=True,
                   max_position_embedding=4096)
# Mistral3ForConditionalGeneration's Pixtral tower and projector (as "mistral-3"), transformers' legacy names.
_PIXTRAL_VLM = {k: v for k, v in FAMILIES["mistral-3"][1].items() if k != "text_config"}
_MISTRAL3_IGNORE = dict(ignore=("language_model.lm_head", "multi_modal_projector.patch_merger.merging_layer"))
_DEEPSEEK_V3_TEXT = {k: v for k, v in _DSA.items() if not k.startswith(("index_", "num_nextn"))}
_LLAMA_4_SCALING = {"original_max_position_embeddings": 8192, "beta": 0.1}
# params.json's vision_encoder as Mistral-Small-3.1 writes it (pixtral.py VisionEncoderArgs), BASE's vision widths.
_PIXTRAL_ENCODER_ARGS = dict(hidden_size=BASE["vision_hidden"], num_channels=3, image_size=1540, patch_size=14,
                             intermediate_size=2 * BASE["vision_hidden"], num_hidden_layers=1,
                             num_attention_heads=BASE["vision_heads"], rope_theta=10000.0, image_token_id=10,
                             image_break_token_id=12, image_end_token_id=13, adapter_bias=False,
                             spatial_merge_size=2, add_pre_mm_projector_layer_norm=True,
                             mm_projector_id="patch_merge")
# params.json's multimodal.whisper_model_args as Voxtral writes it (voxtral-small: Whisper-large-v3's encoder, 4x
# downsampled), BASE's vision widths.
_WHISPER_ARGS = {"encoder_args": {"audio_encoding_args": {"sampling_rate": 16000, "frame_rate": 12.5,
                                                          "num_mel_bins": 128, "hop_length": 160, "window_size": 400},
                                  "dim": BASE["vision_hidden"], "n_layers": 1, "head_dim": 64,
                                  "hidden_dim": 4 * BASE["vision_hidden"], "n_heads": BASE["vision_heads"],
                                  "vocab_size": 51866, "max_source_positions": 1500},
                 "downsample_args": {"downsample_factor": 4}}
# Mamba2Config's keys (Mamba-Codestral-7B's config.json over BASE's width: 64 heads of 64, 8 groups of 128 states).
_MAMBA2 = dict(num_heads=64, head_dim=64, n_groups=8, state_size=128, expand=2, conv_kernel=4, use_conv_bias=True,
               use_bias=False, layer_norm_epsilon=1e-5, hidden_act="silu", residual_in_fp32=True, chunk_size=256,
               rms_norm=True, norm_before_gate=False, tie_word_embeddings=False)
_MAMBA2_SPEC = dict(transformers=True, heads=32, kv_heads=32, ignore=("lm_head", "re:.*conv1d$"))
_MISTRAL_LARGE4_TEXT = dict(num_hidden_layers=4, moe_intermediate_size=1024, first_k_dense_replace=1,
                            num_key_value_heads=16, kv_lora_rank=512, qk_nope_head_dim=64, qk_rope_head_dim=64,
                            v_head_dim=128, n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2,
                            index_topk=64, index_head_dim=128, index_n_heads=16, kv_source_layers=[0, 1, 1, 3],
                            indexer_types=["full", "full", "shared", "full"])
_QWEN35_VISION = {"depth": 1, "hidden_size": _V, "intermediate_size": 2 * _V, "num_heads": 16,
                  "out_hidden_size": BASE["hidden"]}
FAMILIES.update({
    "qwen3.5": (dict(architecture="Qwen3_5ForCausalLM", model_type="qwen3_5_text", **_HF, **_gdn_ignore("model")),
                _GDN),
    "qwen3.5-moe": (dict(architecture="Qwen3_5MoeForCausalLM", model_type="qwen3_5_moe_text", **_HF,
                         **_gdn_ignore("model")), _QWEN35_MOE),
    "qwen3-next": (dict(architecture="Qwen3NextForCausalLM", model_type="qwen3_next", **_HF,
                        **_gdn_ignore("model", ("in_proj_ba",))),
                   dict(_QWEN35_MOE, decoder_sparse_step=1, mlp_only_layers=[])),
    "deepseek-v3.2": (dict(architecture="DeepseekV32ForCausalLM", model_type="deepseek_v32", **_HF, **_DSA_IGNORE),
                      _DSA),
    "glm-5": (dict(architecture="GlmMoeDsaForCausalLM", model_type="glm_moe_dsa", **_HF, **_DSA_IGNORE), _DSA),
    "deepseek-v4": (dict(architecture="DeepseekV4ForCausalLM", model_type="deepseek_v4", **_HF, **_DSV4_IGNORE),
                    _DSV4),
    "deepseek-v4-vl": (dict(architecture="DeepseekV4ForConditionalGeneration", model_type="deepseek_v4", **_HF,
                            ignore=_DSV4_VL_IGNORE, extra_tensors=deepseek_v4_vision_tensors(2048, _DSV4_VISION)),
                       dict(_DSV4, **_DSV4_VISION)),
    "deepseek-v4.1": (dict(architecture="DeepseekV41ForCausalLM", model_type="deepseek_v41", **_HF, **_DSV41_SPEC),
                      _DSV41),
    "nemotron-h": (dict(architecture="NemotronHForCausalLM", model_type="nemotron_h", **_HF),
                   dict(hybrid_override_pattern="M*-E", mamba_num_heads=32, mamba_head_dim=64, n_groups=8,
                        ssm_state_size=128, conv_kernel=4, expand=1, use_conv_bias=True, mlp_hidden_act="relu2",
                        n_routed_experts=8, num_experts_per_tok=2, moe_intermediate_size=1024,
                        moe_shared_expert_intermediate_size=1024, n_shared_experts=1, n_group=1, topk_group=1,
                        norm_topk_prob=True, num_hidden_layers=4)),
    # Nemotron-H with one Mamba group: above TP 1 MambaMixer2 replicates it on every rank (in_proj a column over
    # [I, I, N, N, H] widened by the duplicated groups, mamba_mixer2.py extra_groups_for_head_shards).
    "nemotron-h-one-group": (dict(architecture="NemotronHForCausalLM", model_type="nemotron_h", **_HF),
                             dict(hybrid_override_pattern="M*-E", mamba_num_heads=32, mamba_head_dim=64, n_groups=1,
                                  ssm_state_size=128, conv_kernel=4, expand=1, use_conv_bias=True,
                                  mlp_hidden_act="relu2", n_routed_experts=8, num_experts_per_tok=2,
                                  moe_intermediate_size=1024, moe_shared_expert_intermediate_size=1024,
                                  n_shared_experts=1, n_group=1, topk_group=1, norm_topk_prob=True,
                                  num_hidden_layers=4)),
    # Granite-4.0-H: Mamba2 / attention layers, one Mamba group (replicated above TP 1), MoE and shared MLP on each.
    "granite-4.0-h": (dict(architecture="GraniteMoeHybridForCausalLM", model_type="granitemoehybrid", **_HF),
                      dict(_GRANITE, intermediate_size=1024, shared_intermediate_size=4096,
                           layer_types=["linear_attention", "full_attention", "linear_attention", "linear_attention"],
                           num_local_experts=8, num_experts_per_tok=2, mamba_n_heads=64, mamba_d_head=64,
                           mamba_n_groups=1, mamba_d_state=128, mamba_expand=2, position_embedding_type="nope",
                           num_hidden_layers=4)),
    "granite-3": (dict(architecture="GraniteForCausalLM", model_type="granite", **_HF), dict(_GRANITE)),
    "granite-moe": (dict(architecture="GraniteMoeForCausalLM", model_type="granitemoe", **_HF),
                    dict(_GRANITE, intermediate_size=1024, num_local_experts=8, num_experts_per_tok=2)),
    "granite-moe-shared": (dict(architecture="GraniteMoeSharedForCausalLM", model_type="granitemoeshared", **_HF),
                           dict(_GRANITE, intermediate_size=1024, shared_intermediate_size=2048,
                                num_local_experts=8, num_experts_per_tok=2)),
    # Granite's sliding-window classes: sliding / full layers (a sink on every one), the MoE with a shared MLP.
    "granite-swa": (dict(architecture="GraniteSWAForCausalLM", model_type="granite_swa", **_HF),
                    dict(_GRANITE, **_SWA_TOKENS, sliding_window=512, layer_types=_SWA_LAYERS)),
    "granite-moe-swa": (dict(architecture="GraniteMoeSWAForCausalLM", model_type="granitemoe_swa", **_HF),
                        dict(_GRANITE, **_SWA_TOKENS, intermediate_size=1024, shared_intermediate_size=2048,
                             num_local_experts=8, num_experts_per_tok=2, sliding_window=512,
                             layer_types=_SWA_LAYERS)),
    # Arcee Trinity: a dense layer, then MoE layers with a shared expert; sliding and full gated attention; the
    # routing keys afmoe.py reads bare.
    "afmoe": (dict(architecture="AfmoeForCausalLM", model_type="afmoe", **_HF),
              dict(num_dense_layers=1, num_experts=8, num_experts_per_tok=2, num_shared_experts=1,
                   moe_intermediate_size=1024, sliding_window=512, score_func="sigmoid", route_norm=True, n_group=1,
                   topk_group=1, route_scale=2.5, mup_enabled=True,
                   layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"])),
    # LFM2 / LFM2-MoE / LFM3: short-convolution and attention layers (the keys lfm2*.py read beside transformers').
    "lfm2": (dict(architecture="Lfm2ForCausalLM", model_type="lfm2", tie_embeddings=True, **_HF),
             dict(_LFM_LAYERS, intermediate_size=6144, block_dim=2048, conv_dim=2048, conv_L_cache=3)),
    "lfm2-moe": (dict(architecture="Lfm2MoeForCausalLM", model_type="lfm2_moe", tie_embeddings=True, **_HF),
                 dict(_LFM_LAYERS, num_dense_layers=1, num_experts=8, num_experts_per_tok=2,
                      moe_intermediate_size=1024, conv_L_cache=3, use_expert_bias=True, norm_topk_prob=True)),
    "lfm3": (dict(architecture="Lfm3ForCausalLM", model_type="lfm3", tie_embeddings=True, **_HF),
             dict(conv_L_cache=7, sliding_window=512, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                  layer_types=["conv", "full_attention", "sliding_attention", "conv"])),
    # Jamba: Mamba-1 layers (0, 2) with the MoE, attention layers (1, 3) with a dense MLP; the exporter leaves the
    # mixers' linears BF16, as vLLM builds them (MambaMixer takes no quant config).
    "jamba": (dict(architecture="JambaForCausalLM", model_type="jamba", **_HF,
                   ignore=("lm_head", *_mamba1_ignore("model", (0, 2)))),
              dict(num_experts=8, num_experts_per_tok=2, expert_layer_period=2, expert_layer_offset=0,
                   attn_layer_period=2, attn_layer_offset=1, mamba_d_state=16, mamba_d_conv=4, mamba_expand=2,
                   mamba_dt_rank=128, mamba_conv_bias=True, mamba_proj_bias=False)),
    # Falcon-H1: attention and a Mamba2 mixer (one group) in every layer, a dense MLP. The exporter lists the mixers'
    # in_proj ([I, I, GN, GN, H]: H rows no whole block) by their checkpoint names, which vLLM's prefix for them
    # (model.{L + i}.mixer.in_proj) never matches: vLLM quantizes them over BF16 weights.
    "falcon-h1": (dict(architecture="FalconH1ForCausalLM", model_type="falcon_h1", **_HF,
                       ignore=("lm_head", *(f"model.layers.{i}.mamba.in_proj" for i in range(4)))),
                  dict(mamba_d_ssm=4096, mamba_n_heads=64, mamba_d_head=64, mamba_n_groups=1, mamba_d_state=128,
                       mamba_d_conv=4, mamba_expand=2, mamba_chunk_size=256, mamba_rms_norm=True)),
    # The same with the list naming them also as vLLM's prefix does: in_proj skipped, every TP size built.
    "falcon-h1-listed": (dict(architecture="FalconH1ForCausalLM", model_type="falcon_h1", **_HF,
                              ignore=("lm_head", *(f"model.layers.{i}.mamba.in_proj" for i in range(4)),
                                      *(f"model.{4 + i}.mixer.in_proj" for i in range(4)))),
                         dict(mamba_d_ssm=4096, mamba_n_heads=64, mamba_d_head=64, mamba_n_groups=1,
                              mamba_d_state=128, mamba_d_conv=4, mamba_expand=2, mamba_chunk_size=256,
                              mamba_rms_norm=True)),
    # OLMo Hybrid: gated-delta-net and full-attention layers alternating; b_proj / a_proj (a row per value head, no
    # whole block) left BF16 as the exporter leaves them.
    "olmo-hybrid": (dict(architecture="OlmoHybridForCausalLM", model_type="olmo_hybrid", **_HF,
                         **_gdn_ignore("model", ("b_proj", "a_proj"))),
                    dict(linear_num_key_heads=16, linear_num_value_heads=16, linear_key_head_dim=128,
                         linear_value_head_dim=128, linear_conv_kernel_dim=4, pad_token_id=0, eos_token_id=2,
                         layer_types=["linear_attention", "full_attention"] * 2)),
    # Mamba / Falcon-Mamba: Mamba-1 mixers only, which vLLM never quantizes (the exporter's FP8 weights load
    # unscaled); the same with the mixers left BF16 (nothing FP8 at all).
    "mamba": (dict(architecture="MambaForCausalLM", model_type="mamba", tie_embeddings=True, **_HF),
              dict(state_size=16, expand=2, conv_kernel=4, time_step_rank=128, intermediate_size=4096)),
    "falcon-mamba": (dict(architecture="FalconMambaForCausalLM", model_type="falcon_mamba", tie_embeddings=True,
                          **_HF, ignore=("lm_head", *_mamba1_ignore("backbone", (0, 1, 2, 3), "mixer"))),
                     dict(state_size=16, expand=2, conv_kernel=4, time_step_rank=128, intermediate_size=4096)),
    # Mamba-2: MambaMixer2 layers (8 groups of 128 states, 64 heads of 64).
    "mamba2": (dict(architecture="Mamba2ForCausalLM", model_type="mamba2", **_HF),
               dict(num_heads=64, head_dim=64, n_groups=8, state_size=128, expand=2, conv_kernel=4,
                    pad_token_id=0, bos_token_id=1, eos_token_id=2)),
    "ernie-4.5": (dict(architecture="Ernie4_5ForCausalLM", model_type="ernie4_5", **_HF), {"use_bias": False}),
    "ernie-4.5-moe": (dict(architecture="Ernie4_5_MoeForCausalLM", model_type="ernie4_5_moe", **_HF),
                      dict(use_bias=False, num_hidden_layers=3, moe_intermediate_size=1024, moe_k=2,
                           moe_num_experts=8, moe_num_shared_experts=1, moe_layer_start_index=1,
                           moe_layer_end_index=-1, moe_layer_interval=1)),
    "gemma-4": (dict(architecture="Gemma4ForCausalLM", model_type="gemma4_text", tie_embeddings=True, **_HF),
                _GEMMA4),
    "gemma-4-kv-shared": (dict(architecture="Gemma4ForCausalLM", model_type="gemma4_text", tie_embeddings=True,
                               **_HF), dict(_GEMMA4, num_kv_shared_layers=2)),
    "gemma-4-vl": (dict(architecture="Gemma4ForConditionalGeneration", model_type="gemma4", tie_embeddings=True,
                        **_HF),
                   {"text_config": _text_config("gemma4_text", **_GEMMA4),
                    "vision_config": {"model_type": "gemma4_vision", "hidden_size": _V, "intermediate_size": 2 * _V,
                                      "num_hidden_layers": 1, "num_attention_heads": 16, "num_key_value_heads": 16,
                                      "head_dim": 64, "patch_size": 16, "pooling_kernel_size": 3},
                    "audio_config": None}),
    # Gemma-3n (E2B's geometry: 8 heads, 2 KV heads of 256, per-layer inputs of 256, four AltUp inputs, Laurel rank
    # 64): six layers, the last two KV-shared (one sliding, one full, as the released 30 / 35-layer configs end).
    "gemma-3n": (dict(architecture="Gemma3nForCausalLM", model_type="gemma3n_text", tie_embeddings=True, **_HF),
                 _GEMMA3N_TEXT),
    # An ignore list naming the self-decoder's projection by its checkpoint name and AltUp by a pattern: vLLM asks with
    # model.self_decoder.per_layer_model_projection, which the exact entry does not name (its BF16 weight behind FP8).
    "gemma-3n-listed": (dict(architecture="Gemma3nForCausalLM", model_type="gemma3n_text", tie_embeddings=True,
                             ignore=("lm_head", "model.per_layer_model_projection", "re:.*altup.*"), **_HF),
                        _GEMMA3N_TEXT),
    # The vision-language / audio class as RedHatAI's FP8-dynamic checkpoints are exported: the towers and embedders
    # left BF16 by the ignore list; one conformer block.
    "gemma-3n-vl": (dict(architecture="Gemma3nForConditionalGeneration", model_type="gemma3n", tie_embeddings=True,
                         sizes_in_text_config=True, ignore=_GEMMA3N_IGNORE, extra_tensors=gemma3n_tower_tensors(
                             _GEMMA3N_VL), **_HF), _GEMMA3N_VL),
    # Phi-3.5-vision (remote-code config phi3_v): Phi-3's text model at BASE's widths, the fixed CLIP tower (24 layers
    # of 1024: phi3v.py builds 23) quantized, its img_projection (torch nn.Linears) left BF16 by the ignore list.
    "phi-3-vision": (dict(architecture="Phi3VForCausalLM", model_type="phi3_v",
                          extra_tensors=phi3v_vision_tensors(BASE["hidden"]), **_HF,
                          ignore=("lm_head", "re:.*img_projection.*")),
                     {"img_processor": {"image_dim_out": 1024, "model_name": "openai/clip-vit-large-patch14-336",
                                        "name": "clip_vision_model", "num_img_tokens": 144},
                      "embd_layer": {"embedding_cls": "image", "hd_transform_order": "sub_glb", "projection_cls": "mlp",
                                     "use_hd_transform": True, "with_learnable_separator": True},
                      "rms_norm_eps": 1e-05, "hidden_act": "silu", "tie_word_embeddings": False, "pad_token_id": 0,
                      "bos_token_id": 1, "eos_token_id": 2}),
    "laguna": (dict(architecture="LagunaForCausalLM", model_type="laguna", **_HF,  # per-head gates: one row a head
                    ignore=("lm_head", *(f"model.layers.{i}.self_attn.g_proj" for i in range(3)))),
               dict(num_hidden_layers=3, num_attention_heads_per_layer=[16, 32, 16],
                    layer_types=["full_attention", "sliding_attention", "full_attention"], sliding_window=512,
                    mlp_layer_types=["dense", "sparse", "sparse"], gating=True, num_experts=8, num_experts_per_tok=2,
                    moe_intermediate_size=1024, shared_expert_intermediate_size=1024)),
    # Step-3.5: a sliding layer with its own head count, dense layer 0, MoE layers 1-2 (layer 2 swiglustep experts);
    # per-head gates (one row a head) left BF16, as Laguna's.
    "step-3.5": (dict(architecture="Step3p5ForCausalLM", model_type="step3p5", **_HF,
                      ignore=("lm_head", *(f"model.layers.{i}.self_attn.g_proj" for i in range(3)))),
                 _STEP35),
    # GLM-4-0414 (glm4.py) and GLM-4.1V / GLM-4.5V (glm4_1v.py: the GLM-4 / GLM-4.5 text model, the GLM-4V tower).
    "glm-4-0414": (dict(architecture="Glm4ForCausalLM", model_type="glm4", **_HF),
                   {"partial_rotary_factor": 0.5, "pad_token_id": 0}),
    "glm-4.1v": (dict(architecture="Glm4vForConditionalGeneration", model_type="glm4v", **_HF),
                 {"text_config": _text_config("glm4v_text", partial_rotary_factor=0.5), "vision_config": _GLM4V_VISION}),
    "glm-4.5v": (dict(architecture="Glm4vMoeForConditionalGeneration", model_type="glm4v_moe", **_HF),
                 {"text_config": _text_config("glm4v_moe_text", partial_rotary_factor=0.5, moe_intermediate_size=1024,
                                              n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2,
                                              first_k_dense_replace=1, norm_topk_prob=True, n_group=1, topk_group=1,
                                              use_qk_norm=False),
                  "vision_config": dict(_GLM4V_VISION, model_type="glm4v_moe_vision")}),
    # Step-3.7: Step-3.5's text model (text_config, model_type step3p5) under a PerceptionEncoder tower (OpenCLIP names:
    # attn.in_proj_weight, stored BF16 and ignored under vLLM's name qkv_proj) and vit_large_projector. Its sliding
    # layers keep the full layers' head count: transformers' Step3p7TextConfig turns a different one into a
    # per_layer_config, whose global num_attention_heads vLLM's get_hf_text_config reads (hasattr) and transformers
    # refuses (AmbiguousGlobalPerLayerAttributeError); served, the hub's remote-code config has no per_layer_config.
    "step-3.7": (dict(architecture="Step3p7ForConditionalGeneration", model_type="step3p7", **_HF,
                      ignore=("lm_head", *(f"model.layers.{i}.self_attn.g_proj" for i in range(3)),
                              "vision_model.transformer.resblocks.0.attn.qkv_proj")),
                 {"text_config": _text_config("step3p5", architectures=["Step3p5ForCausalLM"],
                                              **dict(_STEP35, num_sliding_attention_heads=16)),
                  "vision_config": {"width": _V, "layers": 1, "heads": 16, "mlp_ratio": 4.0, "image_size": 728,
                                    "patch_size": 14}}),
    # StepVL (Step3-VL-10B): a Qwen3 text model (text_config's class) under step-3.7's tower; OpenCLIP's in_proj_weight
    # stored BF16 and ignored under vLLM's name. Its config is remote code only: vLLM's answer is the front door's.
    "step-vl": (dict(architecture="StepVLForConditionalGeneration", model_type="step_vl", vision="perception_encoder",
                     ignore=("lm_head", "vision_model.transformer.resblocks.0.attn.qkv_proj"),
                     extra_tensors={"vision_model.transformer.resblocks.0.attn.in_proj_weight": (3 * _V, _V),
                                    "vision_model.transformer.resblocks.0.attn.in_proj_bias": (3 * _V,)}),
                {"text_config": _text_config("qwen3", architectures=["Qwen3ForCausalLM"]),
                 "vision_config": {"width": _V, "layers": 1, "heads": 16, "mlp_ratio": 2.0, "image_size": 728,
                                   "patch_size": 14}}),
    # Step-3 (Step's own names, synth's names="step3"): one KV head of 256, q_proj share_q_dim wide then wq, dense
    # layer 0, MoE layers 1-3 (stacked experts read per expert) with the layer's share_expert; the VL class adds the
    # BF16 vision tower (quant_config=None) and its nn.Linear projector.
    "step-3": (dict(architecture="Step3TextForCausalLM", model_type="step3_text", **_STEP3), _STEP3_TEXT),
    "step-3-vl": (dict(architecture="Step3VLForConditionalGeneration", model_type="step3_vl", **_STEP3,
                       vision="step3"),
                  {"text_config": dict(_STEP3_TEXT, architectures=["Step3TextForCausalLM"], model_type="step3_text",
                                       hidden_size=BASE["hidden"], intermediate_size=BASE["intermediate"],
                                       num_hidden_layers=4, num_attention_heads=8, vocab_size=BASE["vocab"]),
                   "vision_config": {"hidden_size": _V, "intermediate_size": 2 * _V, "output_hidden_size": 2 * _V,
                                     "num_hidden_layers": 1, "num_attention_heads": 16, "image_size": 728,
                                     "patch_size": 14}}),
    # HY-V3: a dense layer and two MoE layers (router stored as mlp.router.gate, shared expert mlp.shared_mlp), with
    # the keys hy_v3.py reads beside transformers' (expert_hidden_dim, first_k_dense_replace, route_norm, qk_norm).
    "hy-v3": (dict(architecture="HYV3ForCausalLM", model_type="hy_v3", **_HF),
              dict(num_hidden_layers=3, num_experts=8, num_experts_per_tok=2, num_shared_experts=1,
                   moe_intermediate_size=1024, expert_hidden_dim=1024, first_k_dense_replace=1,
                   mlp_layer_types=["dense", "sparse", "sparse"], route_norm=True, qk_norm=True,
                   router_scaling_factor=2.8)),
    # LongCat-Flash: two decoder layers (layers: transformers' num_hidden_layers, two per decoder layer) of two MLA
    # attentions, two dense MLPs and a MoE of 8 experts plus 4 zero (identity) experts (the router 12 wide); a few
    # tensors of the MTP block (model.mtp.*), which vLLM skips.
    "longcat-flash": (dict(architecture="LongcatFlashForCausalLM", model_type="longcat_flash", transformers=True,
                           layers=4, extra_tensors=_LONGCAT_MTP), _LONGCAT_FLASH),
    # LongCat-Flash-Lite: the same with NgramEmbedding's tables (2 x 2 embedders of 512 columns, BF16).
    "longcat-flash-lite": (dict(architecture="LongcatFlashNgramForCausalLM", model_type="longcat_flash",
                                transformers=True, layers=4, extra_tensors={**_LONGCAT_MTP, **_LONGCAT_NGRAM}),
                           dict(_LONGCAT_FLASH, ngram_vocab_size_ratio=2, emb_split_num=2, emb_neighbor_num=3,
                                pad_token_id=0, eos_token_id=2)),
    # HY-V4: a dense-MLA layer with a dense MLP, then two sparse-MLA layers (an indexer each) with MoE; gated MLA,
    # learnable sinks and hyper-connections as vLLM's HYV4Config defaults them; the indexer's weights_proj BF16
    # (fp32 in transformers' class).
    "hy-v4": (dict(architecture="HYV4ForCausalLM", model_type="hy_v4", **_HF,
                   ignore=("lm_head", r"re:.*\.indexer\.weights_proj$")),
              dict(num_hidden_layers=3, moe_intermediate_size=1024, n_routed_experts=8, n_shared_experts=1,
                   num_experts_per_tok=2, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
                   qk_rope_head_dim=64, v_head_dim=128, index_topk=2048, index_n_heads=16, index_head_dim=128,
                   mlp_layer_types=["dense", "sparse", "sparse"],
                   layer_types=["full_attention", "indexed_attention", "indexed_attention"],
                   indexer_types=["full", "full", "full"], hc_mult=4, pad_token_id=0, bos_token_id=1,
                   eos_token_id=2)),
    # MiMo-V2-Flash: a full-attention layer with a dense MLP, then two sliding layers (twice the KV heads, sinks) and a
    # full one with MoE; K's head size 192, V's 128 (the model's DiffKV backends); the hub config's keys mimo_v2.py
    # reads beside transformers' (hybrid_layer_pattern, swa_*, moe_layer_freq, sliding_window_size,
    # layernorm_epsilon); an MTP layer under model.mtp.layers (skipped).
    "mimo-v2-flash": (dict(architecture="MiMoV2FlashForCausalLM", model_type="mimo_v2_flash", **_HF,
                           extra_tensors=_MIMO_V2_MTP), _MIMO_V2_FLASH),
    # MiMo-V2-Pro: MiMo-V2-Flash's layers with q / k / v saved fused as qkv_proj (its remote code's module;
    # attention_projection_layout "fused_qkv"), pre-sharded in num_key_value_heads (4) chunks: under fp8-block the full
    # layers' qkv_proj a MergedColumnParallelLinear at TP 1 and 2 (a chunk's 192 K + 128 V rows padded to 384), the
    # sliding ones (two KV heads a chunk, whole blocks) a QKVParallelLinear; written as mimo_v2_flash (its config
    # class, which vLLM reads without remote code; the hub's mimo_v2 takes the same convertor).
    "mimo-v2-pro": (dict(architecture="MiMoV2ForCausalLM", model_type="mimo_v2_flash", **_HF,
                         extra_tensors=_MIMO_V2_MTP), dict(_MIMO_V2_FLASH, attention_projection_layout="fused_qkv")),
    # MiMo-V2-Omni: MiMo-V2-Flash's text model (written by transformers' MiMoV2FlashForCausalLM: vLLM maps model. and
    # lm_head. under language_model.) with a vision_config and an audio_config, and both towers BF16 (ignored).
    "mimo-v2-omni": (dict(architecture="MiMoV2OmniForCausalLM", model_type="mimo_v2_flash", **_HF,
                          extra_tensors=_mimo_omni_towers(),
                          ignore=("lm_head", r"re:visual\..*", r"re:audio_encoder\..*",
                                  r"re:speech_embeddings\..*")),
                     dict(_MIMO_V2_FLASH, vision_config=_MIMO_OMNI_VISION, audio_config=_MIMO_OMNI_AUDIO)),
    # MiMo-7B: Qwen2's layers (its remote MiMoConfig is Qwen2Config's; written as qwen2, which vLLM reads without
    # remote code) and an MTP layer under model.mtp_layers (dropped by the mapper).
    "mimo-7b": (dict(architecture="MiMoForCausalLM", model_type="qwen2", **_HF,
                     extra_tensors={"model.mtp_layers.0.input_proj.weight": (2048, 4096),
                                    "model.mtp_layers.0.mtp_block.mlp.gate_proj.weight": (4096, 2048)}),
                dict(num_nextn_predict_layers=1)),
    # Step-5: Step-3.5's layers (vLLM's own Step5Config keys: num_attention_groups, swa_num_attention_heads) with a
    # sparse (DSA) layer 1: sparse_config's indexer (16 heads of proxy_dim 256 over 4 provider groups = the KV heads),
    # head_dim 192; that layer's q / k / v / g and indexer BF16 (vLLM builds their fused GEMM unquantized only), the
    # per-head gates BF16 everywhere.
    "step-5": (dict(architecture="Step5ForCausalLM", model_type="step5", **dict(_HF, layers=3), head_dim=192,
                    ignore=("lm_head", *(f"model.layers.{i}.self_attn.g_proj" for i in range(3)),
                            *(f"model.layers.1.self_attn.{p}" for p in ("q_proj", "k_proj", "v_proj",
                                                                         *_STEP5_INDEXER))),
                    extra_tensors={**{f"model.layers.1.self_attn.{n}.weight": s for n, s in _STEP5_INDEXER.items()},
                                   "model.layers.1.self_attn.ssmax_s": (16,)}),
               dict(num_hidden_layers=3, layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                    sliding_window=512, num_sliding_attention_heads=32, swa_num_attention_heads=32,
                    num_attention_groups=4, mlp_layer_types=["dense", "sparse", "sparse"], moe_num_experts=8,
                    moe_top_k=2, moe_intermediate_size=1024, share_expert_dim=1024, use_moe_router_bias=True,
                    need_fp32_gate=True, norm_expert_weight=True, moe_router_activation="sigmoid",
                    moe_router_scaling_factor=1.0, swiglu_limits=[0, 0, 7], swiglu_limits_shared=[0, 0, 0],
                    use_head_wise_attn_gate=True, max_seq_len=4096,
                    sparse_config=dict(enabled=True, sparse_indexer_num_heads=16, index_tp_size=4, topk=512))),
    "hunyuan-dense": (dict(architecture="HunYuanDenseV1ForCausalLM", model_type="hunyuan_v1_dense", **_HF), {}),
    "hunyuan-moe": (dict(architecture="HunYuanMoEV1ForCausalLM", model_type="hunyuan_v1_moe", **_HF),
                    dict(num_experts=8, moe_topk=2, moe_intermediate_size=1024, num_shared_expert=1)),
    # Ministral-3's text model (registry.py: mistral.py's MistralForCausalLM) and Mistral-Large-3 under vLLM's
    # Mistral-format name (mistral_large_3.py: DeepSeek-V3's model) with DeepSeek-V3's HF names.
    "ministral-3": (dict(architecture="Ministral3ForCausalLM", model_type="ministral3", **_HF), {}),
    "mistral-large-3": (dict(FAMILIES["deepseek-v3"][0], architecture="MistralLarge3ForCausalLM"),
                        FAMILIES["deepseek-v3"][1]),
    # Mistral3ForConditionalGeneration (mistral3.py) builds the text model text_config names: Ministral-3 (ministral3)
    # and Mistral-Large-3 in HF format (deepseek_v3: MLA + MoE under language_model.model).
    "ministral-3-vl": (dict(architecture="Mistral3ForConditionalGeneration", model_type="mistral3", **_HF,
                            **_MISTRAL3_IGNORE), {"text_config": _text_config("ministral3"), **_PIXTRAL_VLM}),
    "mistral-large-3-hf": (dict(architecture="Mistral3ForConditionalGeneration", model_type="mistral3", **_HF,
                                **_MISTRAL3_IGNORE),
                           {"text_config": _text_config("deepseek_v3", **_DEEPSEEK_V3_TEXT), **_PIXTRAL_VLM}),
    # Mistral-Large-4 in transformers' HF format (mistral_large4: MLA without q-LoRA, KV-sharing and NoPE layers, a
    # DSA indexer on "full" layers, MoE; saved under Mistral's names): no release registers its class (OPEN).
    "mistral-large-4-hf": (dict(architecture="MistralLarge4ForConditionalGeneration", model_type="mistral_large4",
                                **_HF, ignore=("output", "patch_merger.merging_layer")),
                           {"text_config": _text_config("mistral_large4_text", **_MISTRAL_LARGE4_TEXT),
                            **_PIXTRAL_VLM}),
    # Mistral's own format (params.json + consolidated.safetensors, Mistral's names; vLLM reads it by default,
    # transformers_utils/configs/mistral.py adapt_config_dict): Ministral / Mistral (MistralForCausalLM, mistral.py's
    # maybe_remap_mistral) and Mistral-Large-3 (MistralLarge3ForCausalLM, DeepSeek-V3's MLA + MoE, its
    # hf_to_vllm_mapper). Run in the quants Mistral's exporter writes (MISTRAL_FORMAT_QUANTS).
    "mistral-fmt": (dict(architecture="MistralForCausalLM", mistral_format=True), {}),
    "mistral-large-3-fmt": (dict(architecture="MistralLarge3ForCausalLM", q_lora_rank=1536, kv_heads=16,
                                 mistral_format=True, **_MLA), {"llama_4_scaling": _LLAMA_4_SCALING}),
    # Mistral-Large-4 (0.34's MistralLarge4ForCausalLM, params.json's `dsa`): MLA without q-LoRA, layer 2 sharing
    # layer 1's KV (both NoPE), an indexer on the "full" layers 0, 1, 3, MoE after the dense layer 0; the layers vLLM
    # builds with quant_config=None stored in BF16.
    "mistral-large-4-fmt": (dict(architecture="MistralLarge4ForCausalLM", layers=4, kv_heads=16, mistral_format=True,
                                 ignore=("lm_head", r"re:.*\.kv_a_proj_with_mqa$", r"re:.*\.kv_b_proj$",
                                         r"re:.*\.indexer\.(wk|weights_proj)$"), **_MLA),
                            {"nope": "rope,nope,nope,rope", "kv_sharing": {"source_layers_str": "0,1,1,3"},
                             "dsa": {"topk": 2048, "n_heads": 16, "head_dim": 128, "norm_eps": 1e-6,
                                     "ssmax_scaling": False, "sharing": "full,full,shared,full"}}),
    # Pixtral in Mistral's format (Mistral-Small-3.1 / Magistral: params.json's vision_encoder; pixtral.py
    # PixtralForConditionalGeneration over mistral.py's text model): the vision encoder, patch merger and adapter
    # built without quant_config, stored in BF16.
    "pixtral-fmt": (dict(architecture="PixtralForConditionalGeneration", vision="pixtral-mistral",
                         mistral_format=True), {"vision_encoder": _PIXTRAL_ENCODER_ARGS}),
    # Voxtral in Mistral's format (Voxtral-Small / -Mini: params.json's multimodal.whisper_model_args; voxtral.py
    # VoxtralForConditionalGeneration over mistral.py's text model): the Whisper encoder, which the model quantizes,
    # and the adapter stored in BF16.
    "voxtral-fmt": (dict(architecture="VoxtralForConditionalGeneration", vision="voxtral-mistral",
                         mistral_format=True), {"multimodal": {"whisper_model_args": _WHISPER_ARGS}}),
    # Codestral Mamba in Mistral's format (mamba2.py Mamba2ForCausalLM from params.json's model_type mamba with the
    # Mamba2Config keys a config.json beside it gives; mamba_ssm's names, Mistral's scales; "mamba2": the HF format).
    "mamba-fmt": (dict(architecture="Mamba2ForCausalLM", model_type="mamba2", mistral_format=True, **_MAMBA2_SPEC),
                  _MAMBA2),
    # Mixtral in Mistral's format (params.json's `moe` without shared experts, consolidated names under
    # mistral-inference's MoeLayer: feed_forward.gate, feed_forward.experts.E.w1): MixtralForCausalLM, which reads
    # num_local_experts, a key the reader never writes (errors_every_release).
    "mixtral-fmt": (dict(architecture="MixtralForCausalLM", moe_style="mistral", mistral_format=True, **_MOE),
                    {"moe": {"num_experts_per_tok": 2, "num_experts": 8}}),
    # The official Qwen3.5 releases: vision-language, text under model.language_model, a Qwen3-VL tower.
    "qwen3.5-vl": (dict(architecture="Qwen3_5ForConditionalGeneration", model_type="qwen3_5", **_HF,
                        **_gdn_ignore("model.language_model")),
                   {"text_config": _text_config("qwen3_5_text", num_hidden_layers=4, **_GDN),
                    "vision_config": _QWEN35_VISION}),
    "glm-5-next": (dict(architecture="Glm5NextForCausalLM", model_type="glm5_next_text", **_HF,
                        ignore=("lm_head", *_GLM5_NEXT_BF16),
                        extra_tensors=_glm5_next_mtp("model")), _GLM5_NEXT),
    "glm-5-next-vl": (dict(architecture="Glm5NextForConditionalGeneration", model_type="glm5_next", **_HF,
                           ignore=("lm_head", *_GLM5_NEXT_BF16, "re:^model\\.visual\\."),
                           extra_tensors=_glm5_next_mtp("model.language_model")),
                      {"text_config": _text_config("glm5_next_text", **_GLM5_NEXT),
                       "vision_config": {"depth": 1, "hidden_size": _V, "intermediate_size": 2 * _V, "num_heads": 16,
                                         "out_hidden_size": BASE["hidden"], "projection_intermediate_size": 4096}}),
    "qwen3.5-moe-vl": (dict(architecture="Qwen3_5MoeForConditionalGeneration", model_type="qwen3_5_moe", **_HF,
                            **_gdn_ignore("model.language_model")),
                       {"text_config": _text_config("qwen3_5_moe_text", num_hidden_layers=4, **_QWEN35_MOE),
                        "vision_config": _QWEN35_VISION}),
    # Intern-S1 (interns1.py): a Qwen3-MoE text model (text_config's class) under model.language_model, the InternViT
    # tower (q / k / v / projection_layer torch nn.Linears, mlp fc1 / fc2 built with quant_config=None) and its
    # nn.Linear projector, all stored BF16; the config as transformers' InternVL writes it (Intern-S1's own is remote
    # code, the same keys).
    "intern-s1": (dict(architecture="InternS1ForConditionalGeneration", model_type="internvl", **_HF,
                       ignore=("lm_head", *(f"model.vision_tower.encoder.layer.0.{leaf}" for leaf in (
                           "attention.q_proj", "attention.k_proj", "attention.v_proj", "attention.projection_layer",
                           "mlp.fc1", "mlp.fc2")), "model.multi_modal_projector.linear_1",
                               "model.multi_modal_projector.linear_2")),
                  {"text_config": _text_config("qwen3_moe", architectures=["Qwen3MoeForCausalLM"], num_experts=8,
                                               moe_intermediate_size=1024, num_experts_per_tok=2,
                                               decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=True),
                   "vision_config": {"hidden_size": _V, "intermediate_size": 4 * _V, "num_hidden_layers": 1,
                                     "num_attention_heads": 16, "use_qk_norm": True, "norm_type": "rms_norm",
                                     "image_size": [448, 448], "patch_size": [14, 14]},
                   "downsample_ratio": 0.5, "projector_hidden_act": "gelu"}),
    # InternVL3 in transformers' format (InternVLForConditionalGeneration, served by interns1.py): a Qwen2 text model
    # (text_config's model_type), saved under transformers 5.24's legacy names (language_model.model., vision_tower.).
    "internvl-hf": (dict(architecture="InternVLForConditionalGeneration", model_type="internvl", **_HF,
                         ignore=("language_model.lm_head", *(f"vision_tower.encoder.layer.0.{leaf}" for leaf in (
                             "attention.q_proj", "attention.k_proj", "attention.v_proj", "attention.projection_layer",
                             "mlp.fc1", "mlp.fc2")), "multi_modal_projector.linear_1",
                                 "multi_modal_projector.linear_2")),
                    {"text_config": _text_config("qwen2"),
                     "vision_config": {"hidden_size": _V, "intermediate_size": 4 * _V, "num_hidden_layers": 1,
                                       "num_attention_heads": 16, "image_size": [448, 448], "patch_size": [14, 14]},
                     "downsample_ratio": 0.5, "projector_hidden_act": "gelu"}),
    # ERNIE-4.5-VL in Baidu's format (remote-code config ernie4_5_moe_vl, flat; names as transformers' conversion
    # reverts them): a dense layer 0, then MoE layers of 8 text experts (1024 wide) and 8 vision experts (512) stored as
    # one list (mlp.experts.0-15), a shared expert, the routers mlp.gate.weight / weight_1 ([hidden, experts]) BF16 and
    # listed under their stored name mlp.gate, which vLLM's text_experts_gate / vision_experts_gate never match (their
    # rows: post-load predictions); the vision tower quantized, the resampler BF16 (built with quant_config=None).
    "ernie-4.5-vl": (dict(architecture="Ernie4_5_VLMoeForConditionalGeneration", model_type="ernie4_5_moe_vl",
                          **dict(_HF, layers=3),
                          ignore=("lm_head", "vision_model.patch_embed.proj", r"re:^model\.resampler_model\.")),
                     dict(hidden_act="silu", use_bias=False, moe_num_experts=[8, 8],
                          moe_intermediate_size=[1024, 512], moe_k=2,
                          moe_num_shared_experts=1, moe_layer_start_index=[1, 1], moe_layer_end_index=[2, 2],
                          moe_layer_interval=1, rope_theta=500000, freq_allocation=20, rms_norm_eps=1e-5,
                          pixel_hidden_size=_V, spatial_conv_size=2, temporal_conv_size=2, use_temporal_conv=True,
                          im_patch_id=4000, max_position_embeddings=4096,
                          vision_config={"depth": 1, "embed_dim": _V, "hidden_size": _V, "num_heads": 16,
                                         "mlp_ratio": 4, "patch_size": 14, "spatial_merge_size": 2, "in_channels": 3,
                                         "hidden_act": "quick_gelu"})),
})
# Step-5's vision-language class (vLLM's own Step5VLConfig, model_type step5_vl; written by transformers'
# Step3p7ForConditionalGeneration): step-5's text model as text_config (its class Step5ForCausalLM) under step-3.7's
# tower and projector (OpenCLIP names: in_proj_weight stored BF16, ignored under vLLM's name qkv_proj).
_STEP5_SPEC, _STEP5_TEXT = FAMILIES["step-5"]
FAMILIES["step-5-vl"] = (
    dict(_STEP5_SPEC, architecture="Step5ForConditionalGeneration", model_type="step5_vl",
         ignore=(*_STEP5_SPEC["ignore"], "vision_model.transformer.resblocks.0.attn.qkv_proj")),
    {"text_config": _text_config("step5", architectures=["Step5ForCausalLM"], head_dim=192, **_STEP5_TEXT),
     "vision_config": FAMILIES["step-3.7"][1]["vision_config"]})
# The Transformers backend's architectures (layouts.TP_PLANS; their own model files in older releases), written by
# transformers' classes with token ids inside the small vocabulary.
_TOKENS = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2)
_OLMOE = dict(_TOKENS, num_experts=8, num_experts_per_tok=2, intermediate_size=1024)
FAMILIES.update({
    family: (dict(architecture=arch, model_type=model_type, transformers=True, layers=2, **fields),
             dict(_TOKENS, **extra))
    for family, arch, model_type, fields, extra in (
        ("arcee", "ArceeForCausalLM", "arcee", {}, {}),
        ("cwm", "CwmForCausalLM", "cwm", {}, {}),
        ("glm-4", "GlmForCausalLM", "glm", {}, {}),
        ("jais-2", "Jais2ForCausalLM", "jais2", {}, {}),
        ("olmo", "OlmoForCausalLM", "olmo", {}, {}),
        ("olmo-2", "Olmo2ForCausalLM", "olmo2", {}, {}),
        ("olmo-3", "Olmo3ForCausalLM", "olmo3", {}, {}),
        ("phi-2", "PhiForCausalLM", "phi", {}, {}),
        ("seed-oss", "SeedOssForCausalLM", "seed_oss", {}, {}),
        ("smollm-3", "SmolLM3ForCausalLM", "smollm3", {}, {}),
        ("stablelm", "StableLmForCausalLM", "stablelm", {}, {}),
        ("starcoder-2", "Starcoder2ForCausalLM", "starcoder2", {}, {}),
        ("vaultgemma", "VaultGemmaForCausalLM", "vaultgemma", {}, {}),
        ("olmoe", "OlmoeForCausalLM", "olmoe", {}, _OLMOE),
        # The router outside the ignore list: the backend's MoE fuser still builds it without quant_config.
        ("olmoe-router-unlisted", "OlmoeForCausalLM", "olmoe", {"ignore_routers": False}, _OLMOE),
        ("flex-olmo", "FlexOlmoForCausalLM", "flex_olmo", {}, _OLMOE),
    )
})
# Architectures no release registers, which the Transformers backend builds from transformers' own class
# (layouts.transformers_backend, from the generated fp8check.core.model.transformers_classes): dense text models of
# the transformers the harness runs (5.20.2), written by transformers' classes; GPT-Neo's class is not
# backend-compatible (vLLM's refusal).
FAMILIES.update({
    family: (dict(architecture=arch, model_type=model_type, transformers=True, layers=2), dict(_TOKENS, **extra))
    for family, arch, model_type, extra in (
        ("helium", "HeliumForCausalLM", "helium", {}),
        ("ministral-hf", "MinistralForCausalLM", "ministral", {}),
        ("nanochat", "NanoChatForCausalLM", "nanochat", {}),
        ("diffllama", "DiffLlamaForCausalLM", "diffllama", {}),
        ("persimmon", "PersimmonForCausalLM", "persimmon", {}),
        ("gpt-neo", "GPTNeoForCausalLM", "gpt_neo", {"attention_types": [[["global", "local"], 1]]}),
    )
})
# TeleChat3 (dense): llama.py's LlamaForCausalLM under its own architecture name (Llama's config, as synth writes it).
FAMILIES["telechat-3"] = (dict(architecture="TeleChat3ForCausalLM", model_type="llama", transformers=True, layers=2),
                          dict(_TOKENS))
FAMILIES["hyperclovax"] = (dict(architecture="HyperCLOVAXForCausalLM", model_type="hyperclovax", transformers=True,
                                layers=2), dict(_TOKENS))
# Mellum (sliding layers 0 and 2, layer 0 dense) and Kolibri-1 (every layer MoE with a shared expert), through the
# Transformers backend's TransformersMoEForCausalLM.
_SLIDING_FULL = dict(layer_types=["sliding_attention", "full_attention", "sliding_attention"], sliding_window=512)
FAMILIES.update({
    "mellum": (dict(architecture="MellumForCausalLM", model_type="mellum", transformers=True, layers=3),
               dict(_TOKENS, **_SLIDING_FULL, mlp_layer_types=["dense", "sparse", "sparse"], num_experts=8,
                    num_experts_per_tok=2, moe_intermediate_size=1024)),
    "kolibri-1": (dict(architecture="Kolibri1ForCausalLM", model_type="kolibri1", transformers=True, layers=3),
                  dict(_TOKENS, **_SLIDING_FULL, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=1024,
                       shared_expert_intermediate_size=1024)),
})
# MiniMax-M3 as the Hub's config.json writes it (vLLM 0.33's own config class reads these keys, 0.34's transformers
# MiniMaxM3VLTextConfig turns them into layer_types / mlp_layer_types): layer 0 dense, layers 1-3 MoE; layers 1 and
# 3 sparse attention with the indexer (4 index heads, as many as the KV heads); one vision block.
_MINIMAX_M3_TEXT = dict(
    model_type="minimax_m3_vl_text", hidden_size=2048, intermediate_size=1024, dense_intermediate_size=4096,
    shared_intermediate_size=1024, num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4, head_dim=128,
    vocab_size=4096, max_position_embeddings=4096, num_local_experts=8, num_experts_per_tok=2,
    hidden_act="swigluoai", rotary_dim=64, partial_rotary_factor=0.5, rope_theta=5000000, scoring_func="sigmoid",
    use_routing_bias=True, n_shared_experts=1, num_mtp_modules=1, moe_layer_freq=[0, 1, 1, 1],
    sparse_attention_config={"use_sparse_attention": True, "sparse_index_dim": 128, "sparse_num_index_heads": 4,
                             "sparse_topk_blocks": 16, "sparse_block_size": 128,
                             "sparse_disable_index_value": [0, 1, 1, 1], "sparse_score_type": "max",
                             "sparse_init_block": 0, "sparse_local_block": 1, "sparse_attention_freq": [0, 1, 0, 1]})
FAMILIES["minimax-m3"] = (
    dict(architecture="MiniMaxM3SparseForConditionalGeneration", model_type="minimax_m3_vl", **_HF,
         text_prefix="language_model.model", ignore=("language_model.lm_head",)),
    {"hidden_size": 2048, "text_config": _MINIMAX_M3_TEXT, "projector_hidden_size": 2048,
     "vision_config": {"hidden_size": _V, "intermediate_size": 2 * _V, "num_hidden_layers": 1,
                       "num_attention_heads": 16, "patch_size": 14, "num_channels": 3, "layer_norm_eps": 1e-5,
                       "img_token_compression_config": {"spatial_merge_size": 2, "temporal_patch_size": 2}}})
# A standalone text checkpoint (the released ones are the VL architecture), written by hand: transformers has no
# class of that name.
FAMILIES["minimax-m3-text"] = (
    dict(architecture="MiniMaxM3SparseForCausalLM", model_type="minimax_m3_vl_text", moe_style="mixtral", **_MOE),
    {"num_local_experts": 8, "intermediate_size": 1024, "num_experts_per_tok": 2, "hidden_act": "swigluoai",
     "rotary_dim": 64, "scoring_func": "sigmoid", "use_routing_bias": True})
# Families of architectures fp8check does not lay out (not judged): run to show what vLLM does with them.
NOT_LAID_OUT = ("mistral-large-4-hf",)
# Kimi-K2.5: a DeepSeek-V3 text model (Kimi-K2's routing: sigmoid, noaux_tc, one shared expert, dense layer 0) under
# language_model.model, a one-block MoonViT tower and its projector (projection_hidden_size: the tower's width).
_KIMI_K2_TEXT = dict(num_hidden_layers=2, num_key_value_heads=16, moe_intermediate_size=1024, first_k_dense_replace=1,
                     moe_layer_freq=1, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
                     v_head_dim=128, n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2, n_group=1,
                     topk_group=1, norm_topk_prob=True, scoring_func="sigmoid", topk_method="noaux_tc",
                     routed_scaling_factor=2.827, num_nextn_predict_layers=0)
FAMILIES["kimi-k2.5"] = (
    dict(architecture="KimiK25ForConditionalGeneration", model_type="kimi_k25", **_HF,
         ignore=("language_model.lm_head",)),
    {"text_config": _text_config("deepseek_v3", **_KIMI_K2_TEXT),
     "vision_config": {"hidden_size": _V, "intermediate_size": 2 * _V, "num_hidden_layers": 1,
                       "num_attention_heads": 16, "patch_size": 14, "merge_kernel_size": [2, 2]},
     "projection_hidden_size": _V})
# Kimi-Linear: KDA layers 1-3, a NoPE MLA layer 4 (linear_attn_config's 1-based lists, as the checkpoints write them),
# a dense layer 0, then sigmoid-routed MoE with a shared expert.
_KIMI_LINEAR = dict(num_hidden_layers=4, num_key_value_heads=16, kv_lora_rank=512, qk_nope_head_dim=128,
                    qk_rope_head_dim=64, v_head_dim=128, mla_use_nope=True, num_experts=8, num_experts_per_token=2,
                    num_shared_experts=1, moe_intermediate_size=1024, first_k_dense_replace=1,
                    moe_router_activation_func="sigmoid", moe_renormalize=True, use_grouped_topk=True,
                    num_expert_group=1, topk_group=1, routed_scaling_factor=2.446, pad_token_id=0, bos_token_id=1,
                    eos_token_id=2,
                    linear_attn_config={"kda_layers": [1, 2, 3], "full_attn_layers": [4], "head_dim": 128,
                                        "num_heads": 16, "short_conv_kernel_size": 4})
FAMILIES["kimi-linear"] = (dict(architecture="KimiLinearForCausalLM", model_type="kimi_linear", **_HF),
                           _KIMI_LINEAR)
# Kimi-K3: transformers 5.24 has no class for it, so synth.kimi_k3_tensors writes the checkpoint by hand under
# Moonshot's names: KDA layers 1-3 with the full-rank gate, an MLA layer 4 (q-LoRA, output gate; Kimi-K3.1: a DSA
# layer, its indexer's wk / weights_proj BF16), a dense layer 0, latent MoE (experts 1024 wide) with a shared expert,
# attention residuals, one MTP layer, a one-block MoonViT tower and its projector.
def _kimi_k3_config(dsa: bool) -> dict:
    text = dict(model_type="kimi_linear", hidden_size=BASE["hidden"], intermediate_size=4096, num_hidden_layers=4,
                num_attention_heads=16, num_key_value_heads=16, vocab_size=BASE["vocab"], hidden_act="silu",
                q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
                mla_use_nope=True, mla_use_output_gate=True, num_experts=8, num_experts_per_token=2,
                num_shared_experts=1, moe_intermediate_size=1024, routed_expert_hidden_size=1024,
                first_k_dense_replace=1, moe_router_activation_func="sigmoid", moe_renormalize=True,
                use_grouped_topk=True, num_expert_group=1, topk_group=1, routed_scaling_factor=2.5,
                num_nextn_predict_layers=1, attn_res_block_size=2,
                linear_attn_config={"kda_layers": [1, 2, 3], "full_attn_layers": [4], "head_dim": 128,
                                    "num_heads": 16, "short_conv_kernel_size": 4, "use_full_rank_gate": True})
    if dsa:
        text["dsa_config"] = {"dsa_layers": [4], "index_topk": 2048, "index_head_dim": 64, "index_num_heads": 16}
    v = BASE["vision_hidden"]
    return {"text_config": text, "media_placeholder_token_id": 163605,
            "vision_config": {"vt_hidden_size": v, "vt_intermediate_size": 2 * v, "vt_num_hidden_layers": 1,
                              "vt_num_attention_heads": 16, "qkv_hidden_size": v, "patch_size": 14,
                              "merge_kernel_size": [2, 2],
                              "text_hidden_size": BASE["hidden"]}}


_K3_SPEC = dict(layers=0, text_prefix="language_model.model", sizes_in_text_config=True,
                ignore=("language_model.lm_head", "re:.*_res_proj$", "re:.*indexer\\.(wk|weights_proj)$"))
FAMILIES["kimi-k3"] = (dict(architecture="KimiK3ForConditionalGeneration", model_type="kimi_k3",
                            extra_tensors=kimi_k3_tensors(_kimi_k3_config(False)), **_K3_SPEC),
                       _kimi_k3_config(False))
FAMILIES["kimi-k3.1"] = (dict(architecture="KimiK31ForConditionalGeneration", model_type="kimi_k31",
                              extra_tensors=kimi_k3_tensors(_kimi_k3_config(True)), **_K3_SPEC),
                         _kimi_k3_config(True))

# AliceAI: transformers 5.24 has no class for it, so synth.alice_ai_tensors writes the checkpoint by hand under the
# names alice_ai.py loads: KDA layers 0, 1 and 3, a gated full-attention layer 2, Qwen-style MoE with a shared
# expert on every layer, attention-residual projections (BF16, as vLLM builds them without quant_config).
_ALICE_AI = dict(hidden_size=BASE["hidden"], num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4,
                 head_dim=128, vocab_size=BASE["vocab"], max_position_embeddings=4096, rms_norm_eps=1e-6,
                 hidden_act="silu", rope_parameters={"rope_type": "default", "rope_theta": 1e7,
                                                     "partial_rotary_factor": 0.5},
                 layer_types=["linear_attention", "linear_attention", "full_attention", "linear_attention"],
                 linear_num_key_heads=16, linear_num_value_heads=16, linear_key_head_dim=128,
                 linear_value_head_dim=128, linear_conv_kernel_dim=4, num_experts=8, num_experts_per_tok=2,
                 moe_intermediate_size=1024, shared_expert_intermediate_size=1024, norm_topk_prob=True,
                 block_attn_res_block_size=2, kda_allow_negative_eigenvalues=False, router_score_function="sigmoid",
                 router_bias_correction=True)
FAMILIES["alice-ai"] = (dict(architecture="AliceAIForCausalLM", model_type="alice_ai", layers=0,
                             extra_tensors=alice_ai_tensors(_ALICE_AI),
                             ignore=("lm_head", "re:.*res_proj$")), _ALICE_AI)


# K2-Horizon: no transformers or vLLM config class, so synth.k2_horizon_tensors writes the checkpoint by hand under the
# names k2_horizon.py loads: a dense layer 0 (mlp_only_layers: qkv_proj, an MLP), then MoE layers with MoVA attention
# (qk_proj, v_router, 8 value experts), the attention output gate (gate_proj) on every layer, a router with a bias, a
# shared expert. The routers (v_router, mlp.gate: built with the quant config) and the value experts (whose weights
# compute_mova_v_sparse reads itself) stored BF16 and named in the ignore list.
_K2_HORIZON = dict(hidden_size=BASE["hidden"], num_hidden_layers=4, num_attention_heads=16, num_key_value_heads=4,
                   head_dim=128, rope_head_dim=64, vocab_size=BASE["vocab"], max_position_embeddings=4096,
                   rms_norm_eps=1e-6, hidden_act="silu", rope_parameters={"rope_type": "default", "rope_theta": 1e6},
                   query_key_norm=True, attention_bias=False, attention_gate_func="silu", layernorm_num_groups=1,
                   intermediate_size=4096, num_experts=8, num_experts_per_tok=2, moe_intermediate_size=1024,
                   num_shared_experts=1, decoder_sparse_step=1, mlp_only_layers=[0], norm_topk_prob=True,
                   moe_gate_bias=True, router_score_func="sigmoid", router_scaling_factor=2.5, mova_num_experts=8,
                   mova_num_experts_per_tok=2, tie_word_embeddings=False)
FAMILIES["k2-horizon"] = (dict(architecture="K2HorizonForCausalLM", model_type="k2_horizon", layers=0,
                               extra_tensors=k2_horizon_tensors(_K2_HORIZON),
                               ignore=("lm_head", *(name.removesuffix(".weight") for name in
                                                    k2_horizon_tensors(_K2_HORIZON)
                                                    if name.endswith((".mlp.gate.weight", ".v_router.weight"))
                                                    or ".v_experts." in name))), _K2_HORIZON)
# InternLM2 (internlm2.py): remote code only (configuration_internlm2.py, model_type internlm2; transformers has no
# class), so synth.internlm2_tensors writes the hub's names: attention.wqkv (stored fused) / wo, feed_forward.w1 / w3 /
# w2, model.tok_embeddings and the head `output` (InternLM2.5-7B's config, scaled in depth).
_INTERNLM2 = dict(architectures=["InternLM2ForCausalLM"], model_type="internlm2", hidden_size=BASE["hidden"],
                  intermediate_size=BASE["intermediate"], num_hidden_layers=BASE["layers"],
                  num_attention_heads=BASE["heads"], num_key_value_heads=BASE["kv_heads"], vocab_size=BASE["vocab"],
                  max_position_embeddings=512, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=1000000, bias=False,
                  tie_word_embeddings=False)
_INTERNLM2_NAMES = dict(layers=0, embedding="tok_embeddings", head="output")
FAMILIES["internlm2"] = (dict(architecture="InternLM2ForCausalLM", model_type="internlm2", **_INTERNLM2_NAMES,
                              sizes_in_text_config=True, extra_tensors=internlm2_tensors(_INTERNLM2), ignore=("output",)), _INTERNLM2)
# InternVL in its remote-code format (internvl.py InternVLChatModel, h2ovl.py, skyworkr1v.py): config.json's llm_config
# and vision_config (InternVisionConfig's keys), synth.intern_vit_tensors the tower and mlp1 under the hub's names.
# InternViT-300M (16 heads) over Qwen2 (InternVL3-8B) and Llama (H2OVL-Mississippi); InternViT-6B (25 heads, which TP
# 2 / 8 do not divide: qkv / proj replicated) over InternLM2 (InternVL2.5-26B) and Qwen2 (Skywork-R1V-38B). The tower
# is quantized (vLLM hands it the quant config); InternVL's mlp1 is torch nn.Linears, stored BF16 and listed.
_VIT_300M = dict(architectures=["InternVisionModel"], model_type="intern_vit_6b", hidden_size=_V,
                 intermediate_size=4 * _V, num_attention_heads=16, num_hidden_layers=1, image_size=448, patch_size=14,
                 qkv_bias=True, qk_normalization=False, norm_type="layer_norm", layer_norm_eps=1e-6,
                 hidden_act="gelu", initializer_factor=1.0, num_channels=3)
_VIT_6B = dict(_VIT_300M, hidden_size=3200, intermediate_size=12800, num_attention_heads=25, qkv_bias=False,
               qk_normalization=True, norm_type="rms_norm", initializer_factor=0.1)


def _internvl_chat(architecture: str, model_type: str, llm: dict, vision: dict,
                   ignore: tuple[str, ...] = ("mlp1.1", "mlp1.3")) -> tuple[dict, dict]:
    """An InternVL-format family: its Spec fields and config.json (the text model as llm_config)."""
    config = {"llm_config": llm, "vision_config": vision, "downsample_ratio": 0.5, "select_layer": -1,
              "force_image_size": 448, "ps_version": "v2", "template": "internvl2_5", "dynamic_image_size": True,
              "use_thumbnail": True, "min_dynamic_patch": 1, "max_dynamic_patch": 12, "use_backbone_lora": 0,
              "use_llm_lora": 0}
    internlm2 = llm["model_type"] == "internlm2"
    text = internlm2_tensors(llm, "language_model.model") if internlm2 else {}
    head = "language_model.output" if internlm2 else "language_model.lm_head"
    spec = dict(architecture=architecture, model_type=model_type, text_prefix="language_model.model",
                sizes_in_text_config=True, extra_tensors={**text, **intern_vit_tensors(config)},
                ignore=(head, *ignore), **(_INTERNLM2_NAMES if internlm2 else {}))
    return spec, config


_QWEN2_LLM = _text_config("qwen2", architectures=["Qwen2ForCausalLM"], rope_theta=1000000.0, rms_norm_eps=1e-6)
FAMILIES.update({
    "internvl-chat": _internvl_chat("InternVLChatModel", "internvl_chat", _QWEN2_LLM, _VIT_300M),
    "internvl-chat-internlm2": _internvl_chat("InternVLChatModel", "internvl_chat", _INTERNLM2, _VIT_6B),
    "h2ovl": _internvl_chat("H2OVLChatModel", "h2ovl_chat",
                            _text_config("llama", architectures=["LlamaForCausalLM"], rms_norm_eps=1e-5), _VIT_300M),
    # Skywork-R1V's mlp1 is ReplicatedLinears with the quant config: quantized here.
    "skywork-r1v": _internvl_chat("SkyworkR1VChatModel", "skywork_chat", _QWEN2_LLM, _VIT_6B, ignore=()),
})


# Ling / Ring (vLLM's bailing_moe.py): transformers has no class for bailing_moe / bailing_moe_v2, so
# synth.bailing_tensors writes the checkpoint by hand under inclusionAI's names, with the keys the released config.json
# files hold. Ling-2.0 (Ling-mini-2.0's config, scaled): a dense layer 0, then MoE with sigmoid grouped routing, the
# expert bias and a shared expert; per-head q / k norms. Ling v1 (Ling-lite-1.5's): softmax routing, no groups.
_LING_V2 = dict(model_type="bailing_moe_v2", hidden_size=BASE["hidden"], intermediate_size=4096, num_hidden_layers=3,
                num_attention_heads=16, num_key_value_heads=4, head_dim=128, vocab_size=BASE["vocab"],
                max_position_embeddings=4096, hidden_act="silu", use_bias=False, use_qkv_bias=False, use_qk_norm=True,
                use_rmsnorm=True, rms_norm_eps=1e-6, embedding_dropout=0.0, rope_theta=600000.0,
                partial_rotary_factor=0.5, num_experts=8, num_experts_per_tok=2, num_shared_experts=1,
                moe_intermediate_size=1024, moe_shared_expert_intermediate_size=1024, first_k_dense_replace=1,
                norm_topk_prob=True, score_function="sigmoid", moe_router_enable_expert_bias=True, n_group=4,
                topk_group=2, routed_scaling_factor=2.5, router_dtype="fp32", num_nextn_predict_layers=0,
                tie_word_embeddings=False)
_LING_V1 = {**{k: v for k, v in _LING_V2.items() if k not in (
    "use_qk_norm", "use_rmsnorm", "partial_rotary_factor", "score_function", "moe_router_enable_expert_bias",
    "n_group", "topk_group", "routed_scaling_factor", "router_dtype", "num_nextn_predict_layers",
    "moe_shared_expert_intermediate_size")}, "model_type": "bailing_moe", "first_k_dense_replace": 0,
            "num_hidden_layers": 2}
# Ling / Ring 2.5 (bailing_moe_linear.py; model_type bailing_hybrid, which transformers 5.24's BailingHybridConfig
# reads): linear-attention layers 0-2 and an MLA layer 3 (layer_group_size 4, no q-LoRA), a dense layer 0, one MTP
# layer; group_norm_size 8 (TP 8 builds).
_LING_V25 = {**_LING_V2, "model_type": "bailing_hybrid", "num_hidden_layers": 4, "num_key_value_heads": 16,
             "layer_group_size": 4, "group_norm_size": 8, "linear_silu": False, "q_lora_rank": None,
             "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
             "num_nextn_predict_layers": 1, "routed_scaling_factor": 1.0}
_LING_SPEC = dict(layers=0, experts=8, moe_intermediate=1024, intermediate=4096)
FAMILIES.update({
    "ling-v2": (dict(architecture="BailingMoeV2ForCausalLM", model_type="bailing_moe_v2",
                     extra_tensors=bailing_tensors(_LING_V2), **_LING_SPEC), _LING_V2),
    "ling-v1": (dict(architecture="BailingMoeForCausalLM", model_type="bailing_moe",
                     extra_tensors=bailing_tensors(_LING_V1), **_LING_SPEC), _LING_V1),
    "ling-v2.5": (dict(architecture="BailingMoeV2_5ForCausalLM", model_type="bailing_hybrid",
                       extra_tensors=bailing_tensors(_LING_V25), **_LING_SPEC), _LING_V25),
})
# Ling / Ring 3.0 (bailing_moe_v3.py; model_type bailing_hybrid, written by transformers' BailingHybridForCausalLM
# under inclusionAI's names, the keys its config.json holds beside the config class's): Kimi delta attention layers
# 0-2 and an MLA layer 3 with its head-wise output gate (layer_group_size 4), a dense layer 0, MoE with grouped
# sigmoid routing and a shared expert, layer 3's experts clamped (expert_swiglu_limit_list), one MTP layer (skipped).
# ling-3-qlora-b-bf16: q-LoRA MLA (fused_qkv_a_proj) and the KDA b_proj left BF16 by full name, as a block-FP8 export
# must for TP above 1 (its num_heads rows fill no block row): bailing_moe_v3.py then builds qkv_proj and b_proj apart.
_LING_3 = dict(hidden_size=BASE["hidden"], intermediate_size=4096, moe_intermediate_size=1024, num_hidden_layers=4,
               num_attention_heads=16, num_key_value_heads=16, head_dim=128, q_lora_rank=None, kv_lora_rank=512,
               qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, num_experts=8, num_experts_per_tok=2,
               n_group=1, topk_group=1, first_k_dense_replace=1, num_shared_experts=1,
               moe_shared_expert_intermediate_size=1024, layer_group_size=4, short_conv_kernel_size=4,
               vocab_size=BASE["vocab"], max_position_embeddings=4096, num_nextn_predict_layers=1, pad_token_id=0,
               eos_token_id=1, gated_attention_proj_granularity_type="head_wise", no_kda_lora=True,
               routed_scaling_factor=2.5, use_bias=False, rms_norm_eps=1e-6,
               expert_swiglu_limit_list=[0, 0, 0, 7.0], share_expert_swiglu_limit_list=[0, 0, 0, 7.0])
_LING_3_MTP = {"model.layers.4.eh_proj.weight": (2048, 4096), "model.layers.4.attention.q_proj.weight": (3072, 2048),
               "model.layers.4.attention.dense.weight": (2048, 2048),
               "model.layers.4.mlp.shared_experts.gate_proj.weight": (1024, 2048)}
FAMILIES.update({
    "ling-3": (dict(architecture="BailingMoeV3ForCausalLM", model_type="bailing_hybrid", **_HF,
                    extra_tensors=_LING_3_MTP), _LING_3),
    "ling-3-qlora-b-bf16": (dict(architecture="BailingMoeV3ForCausalLM", model_type="bailing_hybrid", **_HF,
                                 ignore=("lm_head", *(f"model.layers.{i}.attention.b_proj" for i in range(3)))),
                            {**_LING_3, "q_lora_rank": 1536}),
})
# Ling-3.0 VL (bailing_moe_v3_vl.py; vLLM's own config class, model_type bailing_moe_v3_vl): ling-3's text model
# (written by transformers' BailingHybridForCausalLM, synth.TRANSFORMERS_HOSTS) as text_config, and a two-block Qwen3
# vision tower with its projector (synth.bailing_v3_vision_tensors), both quantized as vLLM builds them.
# ling-3-vl-tower-bf16: the tower and projector listed whole in the ignore list, which an Fp8Config then builds with
# quant_config=None (their tensors left BF16 by a re: entry, which Fp8Config's is_layer_skipped never matches); a
# compressed-tensors config has no such rule: vLLM builds them FP8, the BF16 tensors a post-load error both predict.
_LING_3_VISION = dict(depth=2, hidden_size=BASE["vision_hidden"], intermediate_size=4096, num_heads=16,
                      spatial_merge_size=2, patch_size=16, temporal_patch_size=2, num_position_embeddings=2304,
                      deepstack_visual_indexes=[])
_LING_3_VL_TOWER = bailing_v3_vision_tensors(_LING_3_VISION, BASE["hidden"])
_LING_3_VL = dict(architecture="BailingMoeV3VLForConditionalGeneration", model_type="bailing_moe_v3_vl",
                  sizes_in_text_config=True, **_HF)
FAMILIES.update({
    "ling-3-vl": (dict(_LING_3_VL, extra_tensors={**_LING_3_VL_TOWER, **_LING_3_MTP}),
                  {"text_config": dict(_LING_3, model_type="bailing_hybrid"), "vision_config": _LING_3_VISION}),
    "ling-3-vl-tower-bf16": (dict(_LING_3_VL, extra_tensors=_LING_3_VL_TOWER, ignore=(
        "lm_head", "model.visual", "model.linear_proj", r"re:model\.(visual|linear_proj)\.")),
        {"text_config": dict(_LING_3, model_type="bailing_hybrid"), "vision_config": _LING_3_VISION}),
})

# Sarvam (vLLM's sarvam.py), written by transformers 5.24's classes (sarvam_moe: GLM-4-MoE's, whose conversion reverts
# to inclusionAI's names; sarvam_mla: DeepSeek-V3's) with the keys of the hub's remote-code config.json files, which
# the harness reads as such (the transformers vLLM 0.33 / 0.34 pin has no class for either): a dense layer 0, then MoE
# with sigmoid routing, the expert bias and a shared expert. Sarvam-30B: GQA with per-head q / k norms; Sarvam-105B:
# MLA without q-LoRA, as released, and sarvam-mla-q with it (q_a_proj and kv_a_proj_with_mqa never fused).
_SARVAM = dict(hidden_size=BASE["hidden"], intermediate_size=4096, num_hidden_layers=3, vocab_size=BASE["vocab"],
               max_position_embeddings=4096, hidden_act="silu", rms_norm_eps=1e-6, tie_word_embeddings=False,
               num_experts=8, num_experts_per_tok=2, num_shared_experts=1, moe_intermediate_size=1024,
               first_k_dense_replace=1, n_group=1, topk_group=1, routed_scaling_factor=2.5, norm_topk_prob=True,
               score_function="sigmoid", moe_router_enable_expert_bias=True, router_dtype="fp32",
               num_nextn_predict_layers=0)
_SARVAM_MOE = dict(_SARVAM, num_attention_heads=16, num_key_value_heads=4, head_dim=128,
                   moe_shared_expert_intermediate_size=1024, use_bias=False, use_qkv_bias=False, use_qk_norm=True,
                   use_rmsnorm=True, embedding_dropout=0.0, rope_theta=8000000.0, partial_rotary_factor=1.0)
_SARVAM_MLA = dict(_SARVAM, num_attention_heads=16, num_key_value_heads=16, q_lora_rank=None, kv_lora_rank=512,
                   qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
                   rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
_SARVAM_SPEC = dict(transformers=True, layers=3)
FAMILIES.update({
    "sarvam-moe": (dict(architecture="SarvamMoEForCausalLM", model_type="sarvam_moe", **_SARVAM_SPEC), _SARVAM_MOE),
    "sarvam-mla": (dict(architecture="SarvamMLAForCausalLM", model_type="sarvam_mla", **_SARVAM_SPEC), _SARVAM_MLA),
    "sarvam-mla-q": (dict(architecture="SarvamMLAForCausalLM", model_type="sarvam_mla", **_SARVAM_SPEC),
                     dict(_SARVAM_MLA, q_lora_rank=1536)),
})

# Ricursive (ricursive.py, 0.34; vLLM's own RicursiveConfig, no transformers class): Llama's names written by hand plus
# each layer's output gate g_proj (q, k and g fused into qkg_proj); two sliding layers with RoPE, a full NoPE layer.
_RICURSIVE = dict(num_hidden_layers=3, rms_norm_eps=1e-6, rope_theta=10000.0, sliding_window=512,
                  layer_types=["sliding_attention", "sliding_attention", "full_attention"], use_gated_attention=True,
                  gate_full_precision=True, use_valres=False, tie_word_embeddings=False)
FAMILIES["ricursive"] = (dict(architecture="RicursiveForCausalLM", model_type="ricursive", layers=3, extra_tensors={
    f"model.layers.{i}.self_attn.g_proj.weight": (BASE["heads"] * BASE["head_dim"], BASE["hidden"]) for i in range(3)}),
    _RICURSIVE)

# Inkling (vllm/models/inkling): transformers 5.24 has InklingForConditionalGeneration, but its config class is not
# the one vLLM reads (vLLM registers its own inkling_mm_model / inkling_model configs, configs.py), so
# synth.inkling_tensors writes the decoder layers under the names that class saves (model.llm.layers.N; the text
# checkpoint model.layers.N), towers left out, and config.json holds vLLM's keys: sliding layers 0-2 with their own
# KV heads, a dense layer 0, then MoE with the sigmoid router's bias and global scale and one shared sink expert (64
# heads of 128 and 16 relative dims a head, so q, k, v and r are whole 128-blocks at TP 8, as the released model's).
_INKLING_TEXT = dict(model_type="inkling_model", hidden_size=BASE["hidden"], intermediate_size=1024,
                     dense_intermediate_size=4096, num_hidden_layers=4, num_attention_heads=64, num_key_value_heads=8,
                     head_dim=128, swa_num_attention_heads=64, swa_num_key_value_heads=16, swa_head_dim=128, d_rel=16,
                     rel_extent=1024, local_layer_ids=[0, 1, 2], sliding_window_size=512, use_sconv=True,
                     sconv_kernel_size=4, use_embed_norm=True, dense_mlp_idx=1, n_routed_experts=8,
                     n_shared_experts=1, num_experts_per_tok=2, route_scale=8.0, use_gate_bias=True,
                     use_global_scale=True, gate_activation="sigmoid", norm_after_topk=True, shared_expert_sink=True,
                     vocab_size=BASE["vocab"], max_position_embeddings=4096, logits_mup_width_multiplier=24.0)
_INKLING_SPEC = dict(layers=0, experts=8, moe_intermediate=1024, intermediate=4096)
FAMILIES.update({
    "inkling-text": (dict(architecture="InklingForCausalLM", model_type="inkling_model",
                          extra_tensors=inkling_tensors(_INKLING_TEXT, "model."), **_INKLING_SPEC), _INKLING_TEXT),
    "inkling": (dict(architecture="InklingForConditionalGeneration", model_type="inkling_mm_model",
                     sizes_in_text_config=True, extra_tensors=inkling_tensors(_INKLING_TEXT), **_INKLING_SPEC),
                {"text_config": _INKLING_TEXT, "vision_config": {}, "audio_config": {}}),
})

# MuseGlimmer (muse_glimmer.py): transformers' MuseGlimmerForConditionalGeneration, sliding and full (NoPE) layers
# alternating, a one-block vision tower (16 heads) with its adapter; the tower and adapter left BF16 (vLLM builds them
# without the quant config).
_MUSE_GLIMMER = {"text_config": {"hidden_size": BASE["hidden"], "intermediate_size": 4096, "num_hidden_layers": 4,
                                 "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
                                 "vocab_size": BASE["vocab"], "sliding_window": 512,
                                 "layer_types": ["sliding_attention", "full_attention"] * 2,
                                 "layer_rope_theta": [10000, 0, 10000, 0], "max_position_embeddings": 4096},
                 "vision_config": {"hidden_size": 1024, "intermediate_size": 2048, "num_hidden_layers": 1,
                                   "num_attention_heads": 16},
                 "out_hidden_size": 4096, "projector_hidden_size": 2048}
_MUSE_GLIMMER_SPEC = dict(model_type="muse_glimmer", sizes_in_text_config=True, **_HF,
                          ignore=("lm_head", "re:model\\.vision_.*", "re:vision_.*"))
FAMILIES.update({
    "muse-glimmer": (dict(architecture="MuseGlimmerForConditionalGeneration", **_MUSE_GLIMMER_SPEC), _MUSE_GLIMMER),
    "muse-glimmer-causal": (dict(architecture="MuseGlimmerForCausalLM", **_MUSE_GLIMMER_SPEC), _MUSE_GLIMMER),
})

# Muse-Spark (vllm/models/muse_spark, 0.33 / 0.34): transformers' MuseSparkForConditionalGeneration, three sliding
# layers and a full (NoPE) one, a dense layer 0 then MoE layers whose experts run at moe_hidden_size between the
# pre_expert_proj / post_expert_proj pooling linears (vLLM builds those without the quant config, so they are left
# BF16 here), a one-block vision tower and a four-stage audio tower (both built without the quant config), and the
# text config's keys vLLM's own MuseSparkTextConfig reads bare (it has no defaults). vLLM refuses every FP8
# quant config but Quark on ROCm, where FP8 experts ask for the Triton MoE backend: muse-spark-bf16-experts leaves
# the experts BF16 (Quark's exclude), which ROCm builds.
_MUSE_SPARK_TEXT = {"hidden_size": BASE["hidden"], "intermediate_size": 4096, "num_hidden_layers": 4,
                    "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": BASE["vocab"],
                    "sliding_window": 512, "max_position_embeddings": 4096, "hidden_act": "silu",
                    "tie_word_embeddings": False,
                    "attention_bias": False, "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0},
                    "layer_types": ["sliding_attention"] * 3 + ["full_attention"],
                    "layer_rope_theta": [500000.0] * 3 + [0], "mlp_layer_types": ["dense"] + ["sparse"] * 3,
                    "num_shared_experts": 0, "num_local_experts": 8, "num_experts_per_tok": 2,
                    "moe_intermediate_size": 1024, "moe_hidden_size": 1024, "routed_scaling_factor": 1.0,
                    "rms_norm_eps": 1e-5, "post_norm_eps": 1e-8, "output_multiplier": 0.25,
                    "final_logit_softcapping": 20.0, "qk_scale_factor": 5.4730064863875,
                    "residual_gate_temperature": 0.3}
_MUSE_SPARK = {"text_config": _MUSE_SPARK_TEXT,
               "vision_config": {"hidden_size": 1024, "intermediate_size": 2048, "num_hidden_layers": 1,
                                 "num_attention_heads": 16, "hidden_act": "gelu", "patch_size": 14, "merge_size": 2,
                                 "patch_temporal": 2, "pos_emb_height": 32, "pos_emb_width": 32,
                                 "rope_parameters": {"rope_type": "axial", "rope_theta": 10000.0},
                                 "layer_types": ["full_attention"], "layer_norm_eps": 1e-5},
               "audio_config": {"out_hidden_size": BASE["hidden"], "hidden_sizes": [64, 128, 256, 512],
                                "depths": [1, 1, 1, 1], "patch_sizes": [16, 6, 5, 4], "num_hidden_layers": 4,
                                "mlp_ratio": 4.0, "conv_kernel_size": 7, "hidden_act": "gelu", "rms_norm_eps": 1e-6},
               "out_hidden_size": 4096, "projector_hidden_size": 2048, "projector_hidden_act": "gelu"}
_MUSE_SPARK_IGNORE = ("lm_head", "re:model\\.vision_.*", "re:model\\.audio_.*", "re:.*\\.mlp\\.(pre|post)_expert_proj$")
_MUSE_SPARK_SPEC = dict(architecture="MuseSparkForConditionalGeneration", model_type="muse_spark",
                        sizes_in_text_config=True, **_HF)
FAMILIES.update({
    "muse-spark": (dict(ignore=_MUSE_SPARK_IGNORE, **_MUSE_SPARK_SPEC), _MUSE_SPARK),
    "muse-spark-bf16-experts": (dict(ignore=_MUSE_SPARK_IGNORE + ("re:.*\\.experts(\\..*)?$",),
                                     **_MUSE_SPARK_SPEC), _MUSE_SPARK),
})

# Qwen4-Exp: three gated-delta-net layers (layer 1 with a PLE block; ple_layer_ids are 1-based), a QSA layer (the
# indexer's 16 heads of 128, one key head), 4 hyper-connection streams, MoE with a shared expert; its MTP block under
# mtp. (the Qwen4ExpMTP draft's). Left BF16 as vLLM builds them: the gated-delta-net b / a projections (no 128-block
# fits), the hyper-connections (quant_config=None) and the PLE n-gram tables (an FP8 config not ignoring them builds
# Qwen4ExpPLEFp8EmbeddingMethod, which expects FP8 tables).
_QWEN4_EXP = dict(num_hidden_layers=4, layer_types=["linear_attention"] * 3 + ["full_attention"],
                  linear_num_key_heads=8, linear_num_value_heads=16, linear_key_head_dim=128,
                  linear_value_head_dim=128, linear_conv_kernel_dim=4, num_experts=8, num_experts_per_tok=2,
                  moe_intermediate_size=1024, shared_expert_intermediate_size=1024, hc_count=4, hc_lowrank=320,
                  ple_layer_ids=[2], ple_embed_dim=BASE["hidden"], ngram_vocab_size_base=1000, split_ngram_parts=1,
                  indexer_n_heads=16, indexer_kv_heads=1, indexer_head_dim=128, indexer_budget=64,
                  indexer_compress_ratio=4, output_gate_type="silu", pad_token_id=0, bos_token_id=1, eos_token_id=2)


def _qwen4_exp_bf16(root: str) -> tuple[str, ...]:
    """What a Qwen4-Exp FP8 export leaves BF16 under `root` (model / model.language_model), by exact name."""
    return (*(f"{root}.layers.{i}.linear_attn.in_proj_{leaf}" for i in range(3) for leaf in ("b", "a")),
            *(f"{root}.layers.{i}.{branch}_hyper_connection.{leaf}" for i in range(4) for branch in ("attn", "mlp")
              for leaf in ("input_mix_weight_down", "block_inject_weight", "input_mix_weight_up")),
            *(f"{root}.hyper_connection_mixer.{leaf}" for leaf in ("input_mix_weight_down", "input_mix_weight_up")),
            f"{root}.layers.1.ple.ple_embedding.ngram_embedding")


_QWEN4_EXP_MTP = {"mtp.fc.weight": (BASE["hidden"], 2 * BASE["hidden"]),
                  "mtp.layers.0.mlp.shared_expert.gate_proj.weight": (1024, BASE["hidden"])}
FAMILIES.update({
    "qwen4-exp": (dict(architecture="Qwen4ExpForCausalLM", model_type="qwen4_exp_text", **_HF,
                       ignore=("lm_head", *_qwen4_exp_bf16("model")), extra_tensors=_QWEN4_EXP_MTP), _QWEN4_EXP),
    "qwen4-exp-vl": (dict(architecture="Qwen4ExpForConditionalGeneration", model_type="qwen4_exp", **_HF,
                          ignore=("lm_head", *_qwen4_exp_bf16("model.language_model")),
                          extra_tensors=_QWEN4_EXP_MTP),
                     {"text_config": _text_config("qwen4_exp_text", **_QWEN4_EXP),
                      # nvidia/model.py reads vision_config.deepstack_visual_indexes, which transformers' class lacks
                      "vision_config": dict(_QWEN35_VISION, deepstack_visual_indexes=[])}),
})
# EXAONE: EXAONE-4.0 with its 3:1 sliding / global layers written as LG's configs write them (layer_types beside the
# letter pattern); EXAONE-MoE (K-EXAONE's spelling ExaoneMoEForCausalLM) with a dense layer 0, MoE layers 1-3 (layer 2
# with a SwiGLU clamp, swiglu_limits) and its MTP block under mtp. (the ExaoneMoeMTP draft's); EXAONE-3 under its own
# names (transformer.h.N.attn.attention.*), its remote-code config read by the harness's stand-in
# (crosscheck_model._remote_code_exaone_config).
_EXAONE_WINDOWS = dict(sliding_window=512, sliding_window_pattern="LLLG",
                       layer_types=["sliding_attention"] * 3 + ["full_attention"])
_EXAONE_MTP = {"mtp.fc.weight": (BASE["hidden"], 2 * BASE["hidden"]),
               "mtp.layers.0.self_attn.q_proj.weight": (BASE["hidden"], BASE["hidden"]),
               "mtp.layers.0.mlp.gate_proj.weight": (BASE["intermediate"], BASE["hidden"])}
FAMILIES.update({
    "exaone-3": (dict(architecture="ExaoneForCausalLM", model_type="exaone", **_HF), {}),
    "exaone-4": (dict(architecture="Exaone4ForCausalLM", model_type="exaone4", **_HF), _EXAONE_WINDOWS),
    # K-EXAONE under both spellings registry.py maps to exaone_moe.py (ExaoneMoE: 0.25-0.26 and from 0.32;
    # ExaoneMoe: from 0.27).
    **{family: (dict(architecture=arch, model_type="exaone_moe", **_HF, extra_tensors=_EXAONE_MTP),
                dict(_EXAONE_WINDOWS, mlp_layer_types=["dense", "sparse", "sparse", "sparse"], num_experts=8,
                     num_experts_per_tok=2, moe_intermediate_size=1024, num_shared_experts=1, n_group=1, topk_group=1,
                     routed_scaling_factor=2.5, swiglu_limits=[0, 0, 7.0, 0]))
       for family, arch in (("exaone-moe", "ExaoneMoEForCausalLM"), ("exaone-moe-alt", "ExaoneMoeForCausalLM"))},
    # EXAONE-4.5: EXAONE-4.0's text model under Qwen2.5-VL's names, a tower with 4 KV heads of its 16, its MTP block.
    "exaone-4.5": (dict(architecture="Exaone4_5_ForConditionalGeneration", model_type="exaone4_5", **_HF,
                        extra_tensors=_EXAONE_MTP),
                   {"text_config": _text_config("exaone4_5_text", **_EXAONE_WINDOWS, num_hidden_layers=4),
                    "vision_config": {**_QWEN_VISION, "model_type": "exaone4_5_vision", "num_key_value_heads": 4,
                                      "fullatt_block_indexes": [0], "window_size": 112}}),
})
# GLM-4.7-Flash: GLM-4.7-Flash's MLA widths (q-LoRA 768, 192 + 64 query / key heads, 256-wide values; transformers'
# Glm4MoeLiteConfig aliases head_dim to qk_rope_head_dim), a dense layer 0, GLM-4.5's sigmoid-routed MoE with a shared
# expert on layers 1-2, one MTP layer after them (a few of its tensors; transformers' class builds none).
_GLM47_FLASH = dict(num_hidden_layers=3, moe_intermediate_size=1024, first_k_dense_replace=1,
                    mlp_layer_types=["dense", "sparse", "sparse"], num_key_value_heads=16, q_lora_rank=768,
                    kv_lora_rank=512, qk_nope_head_dim=192, qk_rope_head_dim=64, head_dim=64, v_head_dim=256,
                    n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2, n_group=1, topk_group=1,
                    norm_topk_prob=True, routed_scaling_factor=1.8, topk_method="noaux_tc", num_nextn_predict_layers=1)
_GLM47_FLASH_MTP = {"model.layers.3.eh_proj.weight": (BASE["hidden"], 2 * BASE["hidden"]),
                    "model.layers.3.self_attn.q_a_proj.weight": (768, BASE["hidden"]),
                    **{f"model.layers.3.mlp.experts.0.{leaf}.weight": (1024, BASE["hidden"])
                       for leaf in ("gate_proj", "up_proj")},
                    "model.layers.3.mlp.experts.0.down_proj.weight": (BASE["hidden"], 1024)}
# Qwen3-Omni-30B-A3B (transformers' Qwen3OmniMoeForConditionalGeneration: thinker, talker, code2wav): the thinker's
# Qwen3-MoE text model, a two-block vision tower with one deepstack merger, a two-layer audio tower of the release's
# widths (20 heads of 64: not a divisor of TP 8), a one-layer talker and code2wav. The audio tower, talker and
# code2wav stay BF16 (llm-compressor's Qwen3-Omni recipes ignore them; vLLM builds the audio tower unquantized).
_QWEN3_OMNI_TEXT = _text_config("qwen3_omni_moe_text", num_experts=8, num_experts_per_tok=2, moe_intermediate_size=1024,
                                decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=True,
                                tie_word_embeddings=False)
_QWEN3_OMNI = dict(
    thinker_config=dict(
        text_config=_QWEN3_OMNI_TEXT,
        vision_config=dict(_QWEN_VISION, model_type="qwen3_omni_moe_vision_encoder", depth=2,
                           deepstack_visual_indexes=[0], patch_size=16, num_position_embeddings=2304, image_size=768,
                           apply_vit_abs_pos_embed=True),
        audio_config=dict(model_type="qwen3_omni_moe_audio_encoder", d_model=1280, encoder_attention_heads=20,
                          encoder_ffn_dim=5120, encoder_layers=2, output_dim=BASE["hidden"], num_mel_bins=128,
                          downsample_hidden_size=480, max_source_positions=1500)),
    talker_config=dict(text_config=dict(hidden_size=1024, intermediate_size=2048, num_hidden_layers=1,
                                        num_attention_heads=16, num_key_value_heads=2, head_dim=64, num_experts=8,
                                        num_experts_per_tok=2, moe_intermediate_size=384,
                                        shared_expert_intermediate_size=768, vocab_size=3072),
                       code_predictor_config=dict(hidden_size=1024, intermediate_size=3072, num_hidden_layers=1,
                                                  num_attention_heads=16, num_key_value_heads=8, head_dim=128,
                                                  num_code_groups=4),
                       num_code_groups=4, thinker_hidden_size=BASE["hidden"], accept_hidden_layer=1,
                       spatial_merge_size=2),
    code2wav_config=dict(hidden_size=1024, num_hidden_layers=1, num_attention_heads=16, num_key_value_heads=16,
                         intermediate_size=3072, decoder_dim=256, num_quantizers=4),
    enable_audio_output=True)
FAMILIES.update({
    "glm-4.7-flash": (dict(architecture="Glm4MoeLiteForCausalLM", model_type="glm4_moe_lite", **_HF,
                           extra_tensors=_GLM47_FLASH_MTP), _GLM47_FLASH),
    "qwen3-omni": (dict(architecture="Qwen3OmniMoeForConditionalGeneration", model_type="qwen3_omni_moe", **_HF,
                        sizes_in_text_config=True,
                        ignore=("thinker.lm_head", "re:.*audio_tower.*", "re:talker.*", "re:code2wav.*")),
                   _QWEN3_OMNI),
})
# Qwen2-VL (transformers' Qwen2VLForConditionalGeneration, flat config.json as Qwen/Qwen2-VL-*-Instruct and
# RedHatAI's FP8 exports write it): two vision blocks of embed_dim 1024 (16 heads, mlp_ratio 4, QuickGELU) and the
# 2 x 2 patch merger into the text model's width.
_QWEN2_VL_VISION = {"depth": 2, "embed_dim": _V, "hidden_size": BASE["hidden"],
                    "mlp_ratio": 4, "num_heads": 16, "in_chans": 3, "spatial_merge_size": 2, "patch_size": 14,
                    "temporal_patch_size": 2}
FAMILIES["qwen2-vl"] = (dict(architecture="Qwen2VLForConditionalGeneration", model_type="qwen2_vl", **_HF),
                        {"vision_config": _QWEN2_VL_VISION, "rope_scaling": {"type": "mrope",
                                                                            "mrope_section": [16, 24, 24]}})
# Qwen2.5-Omni-7B (transformers' Qwen2_5OmniForConditionalGeneration: thinker, talker, token2wav): the thinker's Qwen2
# text model, a two-block Qwen2.5-VL vision tower (q / k / v stored apart, one full-attention block), a two-layer
# audio tower of the release's widths, a one-layer talker and token2wav. The audio tower, talker and token2wav stay
# BF16 (vLLM builds the audio tower from transformers' torch nn.Linears and never builds the other two).
_QWEN25_OMNI = dict(
    thinker_config=dict(
        text_config=_text_config("qwen2_5_omni_text", tie_word_embeddings=False),
        vision_config=dict(model_type="qwen2_5_omni_vision_encoder", depth=2, hidden_size=_V,
                           intermediate_size=2 * _V, num_heads=16, out_hidden_size=BASE["hidden"],
                           fullatt_block_indexes=[1], window_size=112, patch_size=14, spatial_merge_size=2,
                           temporal_patch_size=2, in_channels=3),
        audio_config=dict(model_type="qwen2_5_omni_audio_encoder", d_model=1280, encoder_attention_heads=20,
                          encoder_ffn_dim=5120, encoder_layers=2, output_dim=BASE["hidden"], num_mel_bins=128,
                          max_source_positions=1500, n_window=100)),
    talker_config=dict(hidden_size=1024, intermediate_size=2048, num_hidden_layers=1, num_attention_heads=16,
                       num_key_value_heads=2, head_dim=64, vocab_size=8448, embedding_size=BASE["hidden"]),
    token2wav_config=dict(dit_config=dict(hidden_size=256, num_hidden_layers=1, num_attention_heads=4, head_dim=64,
                                          look_ahead_layers=[0], look_backward_layers=[0])),
    enable_audio_output=True)
FAMILIES["qwen2.5-omni"] = (dict(architecture="Qwen2_5OmniForConditionalGeneration", model_type="qwen2_5_omni", **_HF,
                                 sizes_in_text_config=True,
                                 ignore=("thinker.lm_head", "re:.*audio_tower.*", "re:talker.*", "re:token2wav.*")),
                            _QWEN25_OMNI)
# The name Qwen2.5-Omni's first configs carried (registry.py: the same thinker class).
FAMILIES["qwen2.5-omni-model"] = (dict(FAMILIES["qwen2.5-omni"][0], architecture="Qwen2_5OmniModel"), _QWEN25_OMNI)
# The same with the vision attention's q / k / v listed by name (kept BF16): vLLM matches the stacked attn.qkv by its
# own name (the class's packed entry is the dotted "attn.qkv"), so it builds an FP8 method over BF16 weights.
FAMILIES["qwen2.5-omni-vision-qkv-listed"] = (
    dict(FAMILIES["qwen2.5-omni"][0], ignore=(*FAMILIES["qwen2.5-omni"][0]["ignore"],
                                              *(f"thinker.visual.blocks.{i}.attn.{x}" for i in (0, 1) for x in "qkv"))),
    _QWEN25_OMNI)
# Qwen2-Audio-7B (transformers' Qwen2AudioForConditionalGeneration): Whisper-like audio encoder of the release's widths
# (two layers, 20 heads of 64), the projector, a Qwen2 text model; the audio encoder and projector stay BF16 (vLLM
# builds them from transformers' torch nn.Linears).
FAMILIES["qwen2-audio"] = (
    dict(architecture="Qwen2AudioForConditionalGeneration", model_type="qwen2_audio", **_HF, sizes_in_text_config=True,
         ignore=("language_model.lm_head", "re:.*audio_tower.*", "re:.*multi_modal_projector.*")),
    {"text_config": _text_config("qwen2"),
     "audio_config": dict(model_type="qwen2_audio_encoder", d_model=1280, encoder_attention_heads=20,
                          encoder_ffn_dim=5120, encoder_layers=2, num_mel_bins=128, max_source_positions=1500)})
# Kimi-VL-A3B (vLLM's KimiVLConfig; transformers has no class for it): DeepSeek-V3's text model as Moonshot's config
# writes it (MLA without q-LoRA, a dense layer 0, sigmoid-routed MoE with two shared experts, norm_topk_prob set), a
# two-block MoonViT tower of the release's widths (1152, 16 heads, MLP 4304) and the projector, stored BF16 (vLLM
# builds both without a quant config).
_KIMI_VL = dict(
    text_config=_text_config("deepseek_v3", num_hidden_layers=3, first_k_dense_replace=1, q_lora_rank=None,
                             kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
                             moe_intermediate_size=1024, n_routed_experts=8, n_shared_experts=2,
                             num_experts_per_tok=2, n_group=1, topk_group=1, norm_topk_prob=True,
                             scoring_func="sigmoid", topk_method="noaux_tc", routed_scaling_factor=2.446,
                             num_key_value_heads=16, tie_word_embeddings=False),
    vision_config=dict(model_type="moonvit", patch_size=14, init_pos_emb_height=64, init_pos_emb_width=64,
                       num_attention_heads=16, num_hidden_layers=2, hidden_size=1152, intermediate_size=4304,
                       merge_kernel_size=[2, 2]),
    media_placeholder_token_id=163605)
FAMILIES["kimi-vl"] = (dict(architecture="KimiVLForConditionalGeneration", model_type="kimi_vl", **_HF,
                            sizes_in_text_config=True, extra_tensors=moonvit_tensors(_KIMI_VL),
                            ignore=("language_model.lm_head", "re:.*vision_tower.*", "re:.*multi_modal_projector.*")),
                       _KIMI_VL)
# Nemotron-NAS's block_configs (nemotron_nas.py): GQA 4 KV heads with ffn_mult 2.625 (3584 wide), a no-op attention
# (ffn_mult 1.3125: 1792, not a whole number of 128-blocks at TP 8), 2 KV heads with a no-op FFN, 8 KV heads with
# ffn_mult 5.25 (7168).
_NAS_BLOCKS = [{"attention": {"no_op": no_op, "replace_with_linear": False, "n_heads_in_group": group},
                "ffn": {"no_op": ffn_mult is None, "replace_with_linear": False, "ffn_mult": ffn_mult}}
               for no_op, group, ffn_mult in ((False, 4, 2.625), (True, None, 1.3125), (False, 8, None),
                                              (False, 2, 5.25))]
FAMILIES.update({
    # Command-R (+ QK-norm, a stored lm_head vLLM drops) and Command-A / R7B (3 sliding : 1 global, tied embeddings).
    "cohere": (dict(architecture="CohereForCausalLM", model_type="cohere", **_HF), {"use_qk_norm": True}),
    "cohere2": (dict(architecture="Cohere2ForCausalLM", model_type="cohere2", tie_embeddings=True, **_HF),
                {"sliding_window": 512}),
    # Command-A+ (cohere2_moe.py): a dense-prefix layer (its own width), then MoE layers (sigmoid routing, a shared
    # expert); three sliding layers and a global one.
    "cohere2-moe": (dict(architecture="Cohere2MoeForCausalLM", model_type="cohere2_moe", tie_embeddings=True, **_HF),
                    dict(intermediate_size=1024, prefix_dense_intermediate_size=4096, num_experts=8,
                         num_experts_per_tok=2, num_shared_experts=1, expert_selection_fn="sigmoid",
                         shared_expert_combination_strategy="sum", sliding_window=512,
                         mlp_layer_types=["dense", "sparse", "sparse", "sparse"], bos_token_id=1, eos_token_id=2)),
    # Command-A-Vision (cohere2_vision.py): a SigLIP tower (its attention-pooling head saved, which vLLM drops), the
    # SwiGLU projector (built without quant_config: stored BF16 and ignored), Cohere2's text model (3 sliding : 1).
    "cohere2-vision": (dict(architecture="Cohere2VisionForConditionalGeneration", model_type="cohere2_vision",
                            tie_embeddings=True, **_HF, ignore=("lm_head", r"re:^model\.multi_modal_projector\.")),
                       {"text_config": _text_config("cohere2", num_hidden_layers=4, sliding_window=512, pad_token_id=0,
                                                    bos_token_id=1, eos_token_id=2),
                        "vision_config": {"model_type": "siglip_vision_model", "hidden_size": _V,
                                          "intermediate_size": 4 * _V, "num_hidden_layers": 1,
                                          "num_attention_heads": 16, "image_size": 224, "patch_size": 14},
                        "downsample_factor": 2, "alignment_intermediate_size": 4096, "image_token_id": 5}),
    # Llama-3.x-Nemotron-Super / Ultra (remote code: synth's names="decilm", Llama's names per block_configs).
    "nemotron-nas": (dict(architecture="DeciLMForCausalLM", model_type="nemotron-nas", names="decilm", layers=4),
                     {"block_configs": _NAS_BLOCKS, "hidden_act": "silu", "rms_norm_eps": 1e-5}),
    # PLaMo-3 (remote code: synth's names="plamo3", model.layers.layers.N.mixer / .mlp, qkv and gate_up stored
    # fused; the harness's stand-in of the remote Plamo3Config): layers 2 and 4 full attention, 1 and 3 a
    # 512-token window; the LM head untied, quantized by the method from 0.34 (plamo3.py).
    "plamo-3": (dict(architecture="Plamo3ForCausalLM", model_type="plamo3", names="plamo3", layers=4),
                {"window_size": 512, "sliding_window_pattern": 2, "rope_theta": 1_000_000, "rope_local_theta": 10_000,
                 "rms_norm_eps": 1e-6}),
})
# Beam (vllm/models/beam, 0.33+): three sliding layers and a full (NoPE) one, a dense layer 0 and MoE layers 1-3,
# grouped sigmoid routing; 8 KV heads as Beam-1.0's config, so q / k / v and the output gate fuse into qkv_gate_proj
# at every TP of the grid (use_merged_qkv_gate: KV heads >= TP).
FAMILIES["beam"] = (dict(architecture="BeamForCausalLM", model_type="beam", **dict(_HF, kv_heads=8)),
                    dict(sliding_window=512, layer_types=["sliding_attention"] * 3 + ["full_attention"],
                         mlp_layer_types=["dense", "sparse", "sparse", "sparse"], num_experts=8, num_experts_per_tok=2,
                         moe_intermediate_size=1024, n_group=2, topk_group=1, routed_scaling_factor=2.5,
                         final_logit_softcapping=30.0))
# Flint (vllm/models/flint, 0.33+): full (NoPE) layers 0 and 3, sliding layers 1-2, every layer with attention sinks,
# a dense layer 0 (mlp_only_layers) and MoE layers 1-3 with a shared expert. vLLM builds it only where the selector
# picks FlashInfer (FlintAttention's assertion), from a CUDA install (the backend's module imports FlashInfer).
FAMILIES["flint"] = (dict(architecture="FlintForCausalLM", model_type="flint", **_HF),
                     dict(sliding_window=513, layer_types=["full_attention", "sliding_attention", "sliding_attention",
                                                           "full_attention"],
                          no_rope_layer_indices=[0, 3], mlp_only_layers=[0], num_experts=8, num_experts_per_tok=2,
                          moe_intermediate_size=1024, shared_expert_intermediate_size=1024))
# dots3-note (vllm/models/dots3_note, released config.json format): layer 0 a dense DSA layer, 1 a dense sliding (SWA)
# one, 2 and 3 MoE layers of each kind; both gates head-wise (g_proj: one row per head), the SWA latent 1024 + 64 wide
# (Dots3NoteTritonMLABackend's one head size, 1088). Text only: no vision_config / audio_config, so vLLM builds no
# tower. Its indexer's wk and weights_proj are stored FP8 (the loader dequantizes both).
FAMILIES["dots3-note"] = (
    dict(architecture="Dots3NoteForCausalLM", model_type="dots3_note", **_HF),
    dict(num_key_value_heads=16, moe_intermediate_size=1024, moe_shared_expert_intermediate_size=1024,
         first_k_dense_replace=2, moe_layer_freq=1, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128,
         qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2,
         n_group=1, topk_group=1, norm_topk_prob=True, scoring_func="sigmoid", topk_method="noaux_tc",
         index_topk=2048, index_n_heads=16, index_head_dim=128, num_nextn_predict_layers=1,
         layer_types=["full_attention", "sliding_attention", "full_attention", "sliding_attention"],
         swa_num_attention_heads=16, swa_num_key_value_heads=16, swa_q_lora_rank=1024, swa_kv_lora_rank=1024,
         swa_head_dim=256, swa_qk_nope_head_dim=192, swa_qk_rope_head_dim=64, swa_v_head_dim=128,
         sliding_window_size=512, swa_rope_theta=50000.0, rope_theta=80000000.0, attention_gate_type="headwise",
         swa_attention_gate_type="headwise", apply_mla_qkv_lora_rescale=True, pad_token_id=0, bos_token_id=1,
         eos_token_id=2))
# ZAYA1 (zaya.py): CCA attention (four replicated q / k / v projections) on full and sliding ("hybrid_sliding") layers,
# a top-1 MoE on each with its MLP router (router_hidden_size wide, one "skip" class; built unquantized, so the ignore
# list leaves it BF16).
FAMILIES["zaya"] = (dict(architecture="ZayaForCausalLM", model_type="zaya", **_HF,
                         ignore=("lm_head", r"re:.*\.mlp\.gate\..*")),
                    dict(num_experts=8, num_experts_per_tok=1, moe_intermediate_size=1024, router_hidden_size=256,
                         sliding_window=512, layer_types=["hybrid", "hybrid_sliding"] * 2))
# NVIDIA's Nemotron VL (nano_nemotron_vl.py; remote-code config, model_type NemotronH_Nano_VL_V2, as released):
# nemotron-h's text model as llm_config (written by transformers' NemotronHForCausalLM under language_model.), a
# ViT-L RADIO tower named by vision_config.args.model and the mlp1 projector (synth.nemotron_vl_tensors), both stored
# BF16 and ignored (vLLM builds the tower without the quant config, mlp1 of torch nn.Linears).
_NEMOTRON_VL = dict(
    llm_config=_text_config("nemotron_h", architectures=["NemotronHForCausalLM"], tie_word_embeddings=False,
                            torch_dtype="bfloat16",
                            **FAMILIES["nemotron-h"][1]),
    vision_config={"model_type": "radio", "architectures": ["RADIOModel"], "patch_size": 16, "max_resolution": 2048,
                   "preferred_resolution": [512, 512], "version": "radio_v2.5-h",
                   "args": {"model": "vit_large_patch16_224", "cpe_max_size": 2048, "register_multiple": 8,
                            "cls_token_per_teacher": True, "teachers": [{"name": "siglip2-g"}, {"name": "dfn_clip"}],
                            "qkv_bias": True}},
    force_image_size=512, patch_size=16, downsample_ratio=0.5, template="nemotron-h-5p5", ps_version="v2",
    image_tag_type="internvl", projector_hidden_size=4096, vit_hidden_size=1024,
    norm_mean=[0.48145466, 0.4578275, 0.40821073], norm_std=[0.26862954, 0.26130258, 0.27577711])
FAMILIES["nemotron-nano-vl"] = (
    dict(architecture="NemotronH_Nano_VL_V2", model_type="NemotronH_Nano_VL_V2", sizes_in_text_config=True, **_HF,
         extra_tensors=nemotron_vl_tensors(_NEMOTRON_VL),
         ignore=("language_model.lm_head", r"re:vision_model\..*", r"re:mlp1\..*")),
    _NEMOTRON_VL)
# Nemotron-3 Omni (the same class; model_type NemotronH_Nano_Omni_Reasoning_V3): its RADIO tower packs video in
# two-frame tubelets (video_embedder), its text model has an MTP layer (stored under language_model.mtp., which
# nemotron_h.py's mapper drops; the class then builds vision_final_layernorm) and a Parakeet sound encoder with its
# projection (sound_config), stored BF16 and ignored like the tower.
_NEMOTRON_OMNI_TEXT = dict(_NEMOTRON_VL["llm_config"], num_nextn_predict_layers=1)
_NEMOTRON_OMNI = dict(
    _NEMOTRON_VL, llm_config=_NEMOTRON_OMNI_TEXT,
    vision_config=dict(_NEMOTRON_VL["vision_config"], video_temporal_patch_size=2, separate_video_embedder=True),
    sound_config={"model_type": "parakeet", "hidden_size": 1024, "num_attention_heads": 8, "num_hidden_layers": 2,
                  "intermediate_size": 4096, "conv_kernel_size": 9, "subsampling_factor": 8,
                  "subsampling_conv_channels": 256, "subsampling_conv_kernel_size": 3, "subsampling_conv_stride": 2,
                  "num_mel_bins": 128, "projection_hidden_size": 4096, "projection_bias": False,
                  "sampling_rate": 16000})
_H = BASE["hidden"]
FAMILIES["nemotron-omni"] = (
    dict(FAMILIES["nemotron-nano-vl"][0], architecture="NemotronH_Nano_Omni_Reasoning_V3",
         model_type="NemotronH_Nano_Omni_Reasoning_V3",
         extra_tensors={**nemotron_vl_tensors(_NEMOTRON_OMNI),
                        "language_model.mtp.layers.0.eh_proj.weight": (_H, 2 * _H),
                        "language_model.mtp.layers.0.mixer.up_proj.weight": (4096, _H),
                        "language_model.mtp.layers.0.mixer.down_proj.weight": (_H, 4096)},
         ignore=("language_model.lm_head", r"re:vision_model\..*", r"re:mlp1\..*",
                 r"re:sound_(encoder|projection)\..*")),
    _NEMOTRON_OMNI)
# The registry's other two names of the class, with the Omni's checkpoint.
FAMILIES.update({family: (dict(FAMILIES["nemotron-omni"][0], architecture=arch), _NEMOTRON_OMNI) for family, arch in (
    ("nemotron-super-omni", "NemotronH_Super_Omni_Reasoning_V3"), ("nemotron-omni-v3", "NemotronH_Omni_Reasoning_V3"))})
# Llama-3.1-Nemotron-Nano-VL (nemotron_vl.py; remote-code config, model_type Llama_Nemotron_Nano_VL): Llama as
# llm_config (written by transformers' LlamaForCausalLM under language_model.), the same ViT-L RADIO tower and mlp1,
# stored BF16 and ignored (torch nn.Linears in vLLM: the remote RADIOModel, the harness's stand-in of it).
_LLAMA_NEMOTRON_VL = dict(
    {k: v for k, v in _NEMOTRON_VL.items() if k != "llm_config"},
    llm_config=_text_config("llama", architectures=["LlamaForCausalLM"], tie_word_embeddings=False,
                            torch_dtype="bfloat16"), vit_hidden_size=1024)
FAMILIES["llama-nemotron-vl"] = (
    dict(FAMILIES["nemotron-nano-vl"][0], architecture="Llama_Nemotron_Nano_VL", model_type="Llama_Nemotron_Nano_VL",
         layers=2, extra_tensors=nemotron_vl_tensors(_LLAMA_NEMOTRON_VL)),
    _LLAMA_NEMOTRON_VL)
# The registry's older dense families (issue 33, the eighth round), written by transformers' classes under the names
# their exporters save, with config.json's own keys (no num_key_value_heads: vLLM reads the KV heads from
# multi_query / num_kv_heads where the family has them). OPT-6.7B-like (word_embed_proj_dim = hidden) and OPT-350M-like
# (word_embed_proj_dim below hidden: project_in / project_out, post-layer norms); GPT-2 (Conv1D weights stored
# [in, out]); StarCoder / SantaCoder's GPTBigCode (multi-query c_attn); Pythia's GPT-NeoX; GPT-J-6B; BLOOM; Falcon-7B
# (multi-query, parallel attention), Falcon-40B / 180B (new_decoder_architecture, num_kv_heads) and Falcon-RW
# (sequential attention and MLP, ALiBi).
_CLASSIC = dict(transformers=True, layers=2, head_dim=None, kv_heads=BASE["heads"])
FAMILIES.update({
    "opt": (dict(architecture="OPTForCausalLM", model_type="opt", tie_embeddings=True, **_CLASSIC),
            dict(_TOKENS, ffn_dim=4096, word_embed_proj_dim=BASE["hidden"], do_layer_norm_before=True)),
    "opt-350m": (dict(architecture="OPTForCausalLM", model_type="opt", tie_embeddings=True, **_CLASSIC),
                 dict(_TOKENS, ffn_dim=4096, word_embed_proj_dim=1024, do_layer_norm_before=False)),
    "gpt2": (dict(architecture="GPT2LMHeadModel", model_type="gpt2", tie_embeddings=True, **_CLASSIC),
             dict(_TOKENS, n_inner=4096, activation_function="gelu_new")),
    "gpt-bigcode": (dict(architecture="GPTBigCodeForCausalLM", model_type="gpt_bigcode", tie_embeddings=True,
                         **_CLASSIC), dict(_TOKENS, n_inner=4096, multi_query=True)),
    "gpt-neox": (dict(architecture="GPTNeoXForCausalLM", model_type="gpt_neox", ignore=("embed_out",), **_CLASSIC),
                 dict(_TOKENS, rotary_pct=0.25, use_parallel_residual=True)),
    "gpt-j": (dict(architecture="GPTJForCausalLM", model_type="gptj", **_CLASSIC),
              dict(_TOKENS, n_inner=4096, rotary_dim=64)),
    "bloom": (dict(architecture="BloomForCausalLM", model_type="bloom", tie_embeddings=True, **_CLASSIC), dict(_TOKENS)),
    "falcon-7b": (dict(architecture="FalconForCausalLM", model_type="falcon", **_CLASSIC),
                  dict(_TOKENS, multi_query=True, parallel_attn=True, new_decoder_architecture=False, alibi=False,
                       bias=False)),
    "falcon-40b": (dict(architecture="FalconForCausalLM", model_type="falcon", **dict(_CLASSIC, kv_heads=4)),
                   dict(_TOKENS, new_decoder_architecture=True, num_kv_heads=4, parallel_attn=True, alibi=False,
                        bias=False)),
    "falcon-rw": (dict(architecture="FalconForCausalLM", model_type="falcon", **_CLASSIC),
                  dict(_TOKENS, multi_query=False, parallel_attn=False, new_decoder_architecture=False, alibi=True,
                       bias=True)),
})
# LLaVA (llava.py, llava_next.py, llava_next_video.py, llava_onevision.py), written by transformers' own classes (the
# CLIP / SigLIP towers under vision_tower.vision_model.): llava-1.5 (a CLIP tower of two layers at its
# vision_feature_layer -2, so vLLM builds one and drops the other's tensors; Llama), HF-format Pixtral-12B (a Pixtral-HF
# tower; a mistral text_config without architectures; tower and projector ignored, as RedHatAI/pixtral-12b-FP8-dynamic
# writes it), LLaVA-NeXT (CLIP at -2, Mistral, image_newline), LLaVA-NeXT-Video (its projector nn.Linears stored BF16
# and ignored) and LLaVA-OneVision (SigLIP without the pooling head at -1, Qwen2, the projector ignored); the towers and
# LLaVA's projector quantized otherwise.
_CLIP_VISION = {"model_type": "clip_vision_model", "hidden_size": _V, "intermediate_size": 4 * _V,
                "num_hidden_layers": 2, "num_attention_heads": 16, "image_size": 336, "patch_size": 14}
_LLAVA_KEYS = dict(vision_feature_layer=-2, vision_feature_select_strategy="default", image_token_index=4000,
                   projector_hidden_act="gelu")
_LLAVA_VLM = dict(transformers=True, ignore=("language_model.lm_head",))
_UNQUANTIZED_PROJECTOR = ("language_model.lm_head", r"re:.*multi_modal_projector.*")
FAMILIES.update({
    "llava": (dict(architecture="LlavaForConditionalGeneration", model_type="llava", **_LLAVA_VLM),
              dict(_LLAVA_KEYS, text_config=_text_config("llama"), vision_config=_CLIP_VISION)),
    "llava-pixtral": (dict(architecture="LlavaForConditionalGeneration", model_type="llava", transformers=True,
                           ignore=("language_model.lm_head", r"re:vision_tower.*", r"re:multi_modal_projector.*")),
                      dict(_LLAVA_KEYS, vision_feature_layer=-1, vision_feature_select_strategy="full",
                           image_token_index=10, text_config=_text_config("mistral"),
                           vision_config={"model_type": "pixtral", "hidden_size": _V, "intermediate_size": 4 * _V,
                                          "num_hidden_layers": 2, "num_attention_heads": 16, "head_dim": _V // 16,
                                          "patch_size": 16, "image_size": 1024, "hidden_act": "gelu"})),
    "llava-next": (dict(architecture="LlavaNextForConditionalGeneration", model_type="llava_next", **_LLAVA_VLM),
                   dict(_LLAVA_KEYS, text_config=_text_config("mistral"), vision_config=_CLIP_VISION)),
    "llava-next-video": (dict(architecture="LlavaNextVideoForConditionalGeneration", model_type="llava_next_video",
                              transformers=True, ignore=_UNQUANTIZED_PROJECTOR),
                         dict(_LLAVA_KEYS, video_token_index=4001, text_config=_text_config("llama"),
                              vision_config=_CLIP_VISION)),
    "llava-onevision": (dict(architecture="LlavaOnevisionForConditionalGeneration", model_type="llava_onevision",
                             transformers=True, ignore=_UNQUANTIZED_PROJECTOR),
                        dict(vision_feature_layer=-1, vision_feature_select_strategy="full", image_token_index=4000,
                             video_token_index=4001, text_config=_text_config("qwen2"),
                             vision_config={"model_type": "siglip_vision_model", "hidden_size": _V,
                                            "intermediate_size": 4 * _V, "num_hidden_layers": 2,
                                            "num_attention_heads": 16, "image_size": 384, "patch_size": 14,
                                            "vision_use_head": False})),
})
# Idefics3 / SmolVLM (idefics3.py, smolvlm.py: the Idefics2 tower, the connector's ReplicatedLinear, llama.py's
# LlamaModel at model.text_model, all quantized but the head) and PaliGemma-2 / PaliGemma (paligemma.py: the whole
# SigLIP tower quantized, its pooling head saved and dropped, the projector an nn.Linear stored BF16; Gemma-2's / Gemma's
# text model with tied embeddings), written by transformers' classes.
_IDEFICS3_KEYS = dict(scale_factor=2, image_token_id=4000, text_config=_text_config("llama"),
                      vision_config={"model_type": "idefics3_vision", "hidden_size": _V, "intermediate_size": 4 * _V,
                                     "num_hidden_layers": 2, "num_attention_heads": 16, "image_size": 364,
                                     "patch_size": 14})
_PALIGEMMA_VISION = {"model_type": "siglip_vision_model", "hidden_size": _V, "intermediate_size": 4 * _V,
                     "num_hidden_layers": 2, "num_attention_heads": 16, "image_size": 224, "patch_size": 14,
                     "projection_dim": BASE["hidden"]}
FAMILIES.update({
    "idefics3": (dict(architecture="Idefics3ForConditionalGeneration", model_type="idefics3", transformers=True),
                 _IDEFICS3_KEYS),
    "smolvlm": (dict(architecture="SmolVLMForConditionalGeneration", model_type="smolvlm", transformers=True),
                dict(_IDEFICS3_KEYS, vision_config=dict(_IDEFICS3_KEYS["vision_config"], model_type="smolvlm_vision"))),
    "paligemma-2": (dict(architecture="PaliGemmaForConditionalGeneration", model_type="paligemma", transformers=True,
                         tie_embeddings=True, ignore=_UNQUANTIZED_PROJECTOR),
                    dict(image_token_index=4000, text_config=_text_config("gemma2", tie_word_embeddings=True),
                         vision_config=_PALIGEMMA_VISION)),
    "paligemma": (dict(architecture="PaliGemmaForConditionalGeneration", model_type="paligemma", transformers=True,
                       tie_embeddings=True, ignore=_UNQUANTIZED_PROJECTOR),
                  dict(image_token_index=4000, text_config=_text_config("gemma", tie_word_embeddings=True),
                       vision_config=_PALIGEMMA_VISION)),
})
# The registry's text classes laid out in the eighth round, written by transformers' classes where it has one.
# Phi-3.5-MoE (phimoe.py): every layer a MoE of w1 / w3 / w2 experts under block_sparse_moe, sparsemixer top-2.
FAMILIES["phi-moe"] = (dict(architecture="PhiMoEForCausalLM", model_type="phimoe", transformers=True, layers=2),
                       dict(_TOKENS, num_local_experts=8, num_experts_per_tok=2, intermediate_size=1024))
# Minitron / Nemotron-4 (nemotron.py) and Apertus (apertus.py): non-gated MLPs (up_proj, down_proj), squared ReLU and
# xIELU; Apertus' layer 0 sliding (its config class defaults no window: the released configs set none).
FAMILIES["nemotron"] = (dict(architecture="NemotronForCausalLM", model_type="nemotron", transformers=True, layers=2),
                        dict(_TOKENS, hidden_act="relu2", partial_rotary_factor=0.5, norm_eps=1e-5))
FAMILIES["apertus"] = (dict(architecture="ApertusForCausalLM", model_type="apertus", transformers=True, layers=2),
                       dict(_TOKENS, hidden_act="xielu", max_position_embeddings=65536,
                            layer_types=["sliding_attention", "full_attention"], sliding_window=512))
# DeepSeek-MoE v1 (deepseek_v2.py's DeepseekForCausalLM; remote-code config, model_type deepseek): MHA (16 KV heads),
# a dense layer 0, then 8 softmax-routed experts with two shared ones, as deepseek-moe-16b's config.json writes it.
FAMILIES["deepseek-moe"] = (
    dict(architecture="DeepseekForCausalLM", model_type="deepseek", kv_heads=16, moe_style="deepseek", shared_experts=2,
         first_k_dense=1, **_MOE),
    dict(num_experts_per_tok=2, moe_layer_freq=1, norm_topk_prob=False, scoring_func="softmax", hidden_act="silu",
         rms_norm_eps=1e-6, rope_theta=10000.0, bos_token_id=1, eos_token_id=2))
# The same with layer 0's attention listed BF16: DeepseekAttention builds qkv_proj / o_proj without a prefix, so no
# ignore entry reaches them and vLLM makes FP8 layers of the BF16 weights (fp8check: an integrity error on each).
FAMILIES["deepseek-moe-attn-bf16"] = (
    dict(FAMILIES["deepseek-moe"][0], ignore=("lm_head", *(f"model.layers.0.self_attn.{leaf}"
                                                          for leaf in ("q_proj", "k_proj", "v_proj", "o_proj")))),
    FAMILIES["deepseek-moe"][1])
# ChatGLM / GLM-4-9B (chatglm.py; vLLM's own ChatGLMConfig): synth's names="chatglm", fused query_key_value (4
# multi-query groups) and dense_h_to_4h, the head transformer.output_layer; the registry's two names of the class.
_CHATGLM = dict(num_layers=2, padded_vocab_size=BASE["vocab"], ffn_hidden_size=BASE["intermediate"], kv_channels=128,
                multi_query_attention=True, multi_query_group_num=4, add_qkv_bias=True, add_bias_linear=False,
                seq_length=4096, original_rope=True, rmsnorm=True, layernorm_epsilon=1.5625e-07)
FAMILIES.update({family: (dict(architecture=arch, model_type="chatglm", names="chatglm", text_prefix="transformer",
                               embedding="embedding.word_embeddings", head="transformer.output_layer",
                               ignore=("transformer.output_layer",)), _CHATGLM)
                 for family, arch in (("chatglm", "ChatGLMModel"), ("chatglm-cg", "ChatGLMForConditionalGeneration"))})
# llama.py's other registry names (InternLM3 written by transformers' InternLM3ForCausalLM; IQuest-Coder and the legacy
# LLaMAForCausalLM by LlamaForCausalLM, their checkpoints' names), and the Llama-named remote-code families: MiniCPM
# (muP scales), Solar Pro (its bskcn skip connections over layers 0 / 1), Orion.
FAMILIES.update({
    "internlm3": (dict(architecture="InternLM3ForCausalLM", model_type="internlm3", transformers=True, layers=2),
                  dict(_TOKENS, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=50000000, bias=False, qkv_bias=False)),
    "iquest-coder": (dict(architecture="IQuestCoderForCausalLM", model_type="llama", transformers=True, layers=2),
                     dict(_TOKENS)),
    "llama-legacy": (dict(architecture="LLaMAForCausalLM", model_type="llama", transformers=True, layers=2),
                     dict(_TOKENS)),
    "minicpm": (dict(architecture="MiniCPMForCausalLM", model_type="minicpm"),
                dict(_TOKENS, hidden_act="silu", rms_norm_eps=1e-5, scale_emb=12, scale_depth=1.4, dim_model_base=256,
                     rope_theta=10000.0)),
    "solar": (dict(architecture="SolarForCausalLM", model_type="solar"),
              dict(_TOKENS, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=10000.0, bskcn_1=[0], bskcn_2=[0],
                   bskcn_3=[1], bskcn_4=[1], bskcn_tv=[0.9, 0.8])),
    "orion": (dict(architecture="OrionForCausalLM", model_type="orion"),
              dict(_TOKENS, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=10000.0)),
})
# Orion with layer 0's q / k / v listed BF16: orion.py declares no packed_modules_mapping, so the list is matched
# against the fused qkv_proj, which it does not name: vLLM makes an FP8 layer of the BF16 shards (fp8check: an error).
FAMILIES["orion-qkv-bf16"] = (dict(FAMILIES["orion"][0], ignore=("lm_head", *(f"model.layers.0.self_attn.{leaf}"
                                                                              for leaf in ("q_proj", "k_proj",
                                                                                           "v_proj")))),
                              FAMILIES["orion"][1])
# ninth round (fam-textb)
FAMILIES.update({
    # Zamba2 (zamba2.py; transformers' Zamba2ForCausalLM, Zamba2-2.7B's / 7B's two shared blocks at 1.2B's widths):
    # Mamba-2 layers and hybrid layers whose shared transformer block (attention over 2 x hidden, LoRA adapters per
    # use, a gated GELU MLP) alternates between the two blocks: block 0 at layers 0 and 4, block 1 at layer 2.
    "zamba2": (dict(architecture="Zamba2ForCausalLM", model_type="zamba2", transformers=True, layers=5,
                    kv_heads=16, head_dim=256, tie_embeddings=True),
               dict(_TOKENS, layers_block_type=["hybrid", "mamba", "hybrid", "mamba", "hybrid"], num_mem_blocks=2,
                    use_shared_attention_adapter=True, adapter_rank=128, n_mamba_heads=64, mamba_ngroups=1,
                    mamba_d_state=128, mamba_d_conv=4, mamba_expand=2, use_mem_rope=True, hidden_act="gelu")),
})
# The same with what splits into no whole block a rank above TP 1 listed BF16: the Mamba in_proj ([I, I, GN, GN, H])
# under its checkpoint names and under the prefix zamba2.py builds it with (str(H + i).mixer, H = 3 hybrid layers),
# which alone reaches it; the adapters' A (adapter_rank 128 rows), the checkpoint's `0` and vLLM's `A` (its prefixes
# model.linear_q_adapter.A, model.feed_forward.gate_up_proj_adapter_list.k.A): every TP size built.
FAMILIES["zamba2-listed"] = (
    dict(FAMILIES["zamba2"][0], ignore=(
        "lm_head", *(f"model.layers.{i}.{'mamba_decoder.mamba' if i % 2 == 0 else 'mamba'}.in_proj" for i in range(5)),
        *(f"{3 + i}.mixer.in_proj" for i in range(5)),
        *(f"model.layers.{layer}.shared_transformer.self_attn.linear_{part}_adapter_list.{use}.0"
          for layer, use in ((0, 0), (2, 1), (0, 2)) for part in "qkv"),
        *(f"model.layers.{layer}.shared_transformer.feed_forward.gate_up_proj_adapter_list.{use}.0"
          for layer, use in ((0, 0), (2, 1), (0, 2))),
        *(f"model.linear_{part}_adapter.A" for part in "qkv"),
        *(f"model.feed_forward.gate_up_proj_adapter_list.{use}.A" for use in range(3)))),
    FAMILIES["zamba2"][1])
# Nemotron-H Puzzle (nemotron_h.py; NVIDIA's remote-code config, model_type nemotron_h_puzzle): nemotron-h's layers
# "M*-E" given per layer by block_configs, whose MLP and MoE keys are each layer's own and no top-level key (the MoE's
# expert count only there: vLLM's front door counts no experts, so --ep is refused).
_PUZZLE_BLOCKS = [{"block_type": "mamba"}, {"block_type": "attention"},
                  {"block_type": "mlp", "intermediate_size": 4096},
                  {"block_type": "moe", "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 1024,
                   "moe_shared_expert_intermediate_size": 1024}]
FAMILIES["nemotron-h-puzzle"] = (
    dict(architecture="NemotronHPuzzleForCausalLM", model_type="nemotron_h_puzzle", **_HF),
    dict({k: v for k, v in FAMILIES["nemotron-h"][1].items()
          if k not in ("hybrid_override_pattern", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
                       "moe_shared_expert_intermediate_size")},
         block_configs=_PUZZLE_BLOCKS, mtp_block_configs=[]))
# openPangu (openpangu.py; remote-code configs, each key the model file reads written): Embedded (dense, Llama's
# names), Ultra-MoE (deepseek-v3's MLA with q-LoRA, a dense layer 0, sigmoid-routed experts with the expert bias, one
# MTP layer; model_type pangu_ultra_moe, which vLLM's convertor reads as DeepSeek MLA) and Pro-MoE-V2 (GQA attention
# without sinks, the same MoE).
_PANGU = dict(_TOKENS, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=16000000.0)
_PANGU_MOE = dict(_PANGU, num_experts_per_tok=2, norm_topk_prob=True, router_enable_expert_bias=True,
                  routed_scaling_factor=2.5, n_group=1, topk_group=1)
FAMILIES.update({
    "pangu-embedded": (dict(architecture="PanguEmbeddedForCausalLM", model_type="PanguEmbedded"), _PANGU),
    "pangu-ultra-moe": (dict(FAMILIES["deepseek-v3"][0], architecture="PanguUltraMoEForCausalLM",
                             model_type="pangu_ultra_moe"), dict(_PANGU_MOE, sandwich_norm=True)),
    "pangu-pro-moe-v2": (dict(architecture="PanguProMoEV2ForCausalLM", model_type="pangu_pro_moe_v2",
                              moe_style="deepseek", shared_experts=1, first_k_dense=1, **_MOE), _PANGU_MOE),
})
# Param2-MoE (param2moe.py; remote-code config, model_type param2moe): Ling-2.0's names and keys (synth.bailing_tensors:
# fused query_key_value, dense, mlp.gate with its expert_bias), a dense layer 0, sigmoid grouped routing, a shared
# expert, 8 KV heads (its attention refuses a TP size that does not divide them: TP 8 builds).
_PARAM2 = dict(_LING_V2, model_type="param2moe", num_key_value_heads=8, rope_scaling=None)
FAMILIES["param2-moe"] = (dict(architecture="Param2MoEForCausalLM", model_type="param2moe",
                               extra_tensors=bailing_tensors(_PARAM2), **_LING_SPEC), _PARAM2)
# The same with layer 1's attention listed BF16 by its stored name: the mapper is the inner model's, so the quant
# config's list is never renamed to self_attn.qkv_proj and vLLM makes an FP8 layer of the BF16 weight.
FAMILIES["param2-moe-attn-listed"] = (
    dict(FAMILIES["param2-moe"][0], ignore=("lm_head", "model.layers.1.attention.query_key_value")), _PARAM2)
# IQuest-Coder-V1-Loop (iquest_loopcoder.py; remote-code config): Llama's names, two loops (a second Attention per
# layer over a 64-token window) and each layer's loop gate (gate_projections.i: [heads, head_dim] and a bias), stored
# BF16 and listed under both its stored name and vLLM's prefix (gate_projections.i.gate_proj, which alone reaches it).
FAMILIES["iquest-loopcoder"] = (
    dict(architecture="IQuestLoopCoderForCausalLM", model_type="iquest_loopcoder",
         extra_tensors={name: shape for i in range(2) for name, shape in (
             (f"model.gate_projections.{i}.weight", (BASE["heads"], BASE["head_dim"])),
             (f"model.gate_projections.{i}.bias", (BASE["heads"],)))},
         ignore=("lm_head", *(f"model.gate_projections.{i}{part}" for i in range(2) for part in ("", ".gate_proj")))),
    dict(_TOKENS, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=500000.0, loop_num=2, loop_window_size=64))
# Unlimited-OCR-2's text model (unlimited_ocr.py, 0.34; a deepseek_v2 config with the keys _configure_v2 sets on the OCR
# model's text_config): deepseek-moe's MHA layers and MoE under DASH attention, each layer's DASH router (q / k
# projections of head_dim, two norms and a class vector) stored BF16.
_H, _HD = BASE["hidden"], BASE["head_dim"]
FAMILIES["unlimited-ocr2-text"] = (
    dict(FAMILIES["deepseek-moe"][0], architecture="UnlimitedOCR2TextForCausalLM", model_type="deepseek_v2",
         extra_tensors={name: shape for i in range(2) for name, shape in (
             (f"model.layers.{i}.self_attn.dash_router.q_proj.weight", (_HD, _H)),
             (f"model.layers.{i}.self_attn.dash_router.k_proj.weight", (_HD, _H)),
             (f"model.layers.{i}.self_attn.dash_router.q_norm.weight", (_HD,)),
             (f"model.layers.{i}.self_attn.dash_router.k_norm.weight", (_HD,)),
             (f"model.layers.{i}.self_attn.dash_router.head_cls", (_HD,)))},
         ignore=("lm_head", r"re:.*\.dash_router\..*")),
    dict(FAMILIES["deepseek-moe"][1], qk_nope_head_dim=0, qk_rope_head_dim=0, v_head_dim=_HD,
         topk_method="greedy", n_group=1, topk_group=1, unlimited_ocr2=True,
         unlimited_ocr2_attention_backend="FLASH_ATTN", architectures=["UnlimitedOCR2TextForCausalLM"],
         sparse_attention_config={"sparse_index_dim": _HD, "sparse_local_block": 4, "sparse_block_size": 64,
                                  "dash_sigma": 1.0, "dash_topk_blocks": 8, "image_token_id": 5, "page_token_id": 6}))
# The same with layer 0's attention listed BF16: DASHAttention builds qkv_proj / o_proj without a prefix, so no ignore
# entry reaches them and vLLM makes FP8 layers of the BF16 weights (fp8check: an error on each).
FAMILIES["unlimited-ocr2-text-attn-bf16"] = (
    dict(FAMILIES["unlimited-ocr2-text"][0], ignore=(*FAMILIES["unlimited-ocr2-text"][0]["ignore"], *(
        f"model.layers.0.self_attn.{leaf}" for leaf in ("q_proj", "k_proj", "v_proj", "o_proj")))),
    FAMILIES["unlimited-ocr2-text"][1])
# ninth round (fam-texta)
# DBRX as transformers' DbrxForCausalLM saves it (d_model / n_heads / n_layers, attn_config / ffn_config; the experts
# flattened ffn.experts.mlp.w1 / v1 / w2, FP8 here with their scales beside them as dbrx.py's loader maps them).
FAMILIES.update({
    "dbrx": (dict(architecture="DbrxForCausalLM", model_type="dbrx", transformers=True, layers=2),
             dict(_TOKENS, d_model=2048, n_heads=16, n_layers=2, max_seq_len=4096,
                  attn_config={"kv_n_heads": 4, "clip_qkv": 8.0, "rope_theta": 500000.0},
                  ffn_config={"ffn_hidden_size": 1024, "moe_num_experts": 8, "moe_top_k": 2,
                              "ffn_act_fn": {"name": "silu"}})),
    # MiniCPM3-4B's attention (40 heads of 64 + 32, q_lora_rank 768, kv_lora_rank 256) at BASE's 16 heads
    "minicpm3": (dict(architecture="MiniCPM3ForCausalLM", model_type="minicpm3", transformers=True, layers=2),
                 dict(_TOKENS, num_key_value_heads=16, qk_nope_head_dim=64, qk_rope_head_dim=32, v_head_dim=64,
                      q_lora_rank=768, kv_lora_rank=256, scale_emb=12, scale_depth=1.4, dim_model_base=256,
                      rms_norm_eps=1e-5, tie_word_embeddings=False)),
    # TeleChat2 as Tele-AI saves it (remote code): multi-head attention, query and the head-interleaved key_value
    "telechat2": (dict(architecture="TeleChat2ForCausalLM", model_type="telechat", names="telechat2",
                       text_prefix="transformer", kv_heads=16, embedding="word_embeddings"),
                  dict(_TOKENS, n_layer=2, n_head=16, ffn_hidden_size=4096, layer_norm_epsilon=1e-5,
                       tie_word_embeddings=False)),
    # Tele-FLM: Llama's names with its muP keys
    "teleflm": (dict(architecture="TeleFLMForCausalLM", model_type="TeleFLM"),
                dict(_TOKENS, hidden_act="silu", rms_norm_eps=1e-5, rope_theta=10000.0, use_mup=True,
                     mup_scale_factor=4.0, output_mult=3.0, input_mult=1.0)),
    # A.X K1 as transformers' AXK1ForCausalLM saves it: q-LoRA MLA, a dense first layer, then MoE with a shared expert
    "axk1": (dict(architecture="AXK1ForCausalLM", model_type="axk1", transformers=True, layers=2),
             dict(_TOKENS, q_lora_rank=1536, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
                  v_head_dim=128, n_routed_experts=8, num_experts_per_tok=2, n_group=1, topk_group=1,
                  moe_intermediate_size=1024, n_shared_experts=1, mlp_layer_types=["dense", "sparse"],
                  num_key_value_heads=16)),
    # Domyn-Edge (remote code): a sliding layer of 128-wide heads (window (511, 0)), a full NoPE layer of 256-wide ones
    "domyn-edge": (dict(architecture="DomynEdgeForCausalLM", model_type="domyn_edge", names="domyn_edge", head_dim=128),
                   dict(_TOKENS, per_layer_config={"1": {"head_dim": 256}}, window_sizes=[[511, 0], [0, 0]],
                        position_layers=["rope", "nope"], rms_norm_eps=1e-6, hidden_act="silu",
                        rope_parameters={"rope_type": "default", "rope_theta": 10000.0})),
    # Step-1: Llama's names, ALiBi attention with num_attention_groups KV heads
    "step1": (dict(architecture="Step1ForCausalLM", model_type="step1"),
              dict(_TOKENS, num_attention_groups=4, rms_norm_eps=1e-5, hidden_act="silu")),
    # Rnj1 (Gemma-3's text config): a chunked-attention layer (window 512) and a full one, GELU-tanh MLPs
    "rnj1": (dict(architecture="Rnj1ForCausalLM", model_type="gemma3_text"),
             dict(_TOKENS, layer_types=["chunked_attention", "full_attention"], sliding_window=512,
                  hidden_activation="gelu_pytorch_tanh", hidden_act="gelu_pytorch_tanh", query_pre_attn_scalar=128,
                  final_logit_softcapping=None, rope_parameters={
                      "chunked_attention": {"rope_type": "default", "rope_theta": 10000.0},
                      "full_attention": {"rope_type": "default", "rope_theta": 1000000.0}})),
})
# ninth round (fam-audio)
# Whisper (transformers' WhisperForConditionalGeneration, whisper-medium's widths: d_model 1024, 16 heads of 64, FFN
# 4096; two encoder and two decoder layers): the encoder, the decoder's self- and cross-attention and MLPs all with the
# quant config (whisper.py); proj_out is tied to the decoder's embed_tokens (not saved).
_WHISPER = dict(d_model=1024, encoder_layers=2, decoder_layers=2, encoder_attention_heads=16,
                decoder_attention_heads=16, encoder_ffn_dim=4096, decoder_ffn_dim=4096, vocab_size=BASE["vocab"],
                num_mel_bins=128, max_source_positions=1500, max_target_positions=448, tie_word_embeddings=True,
                pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
FAMILIES.update({
    "whisper": (dict(architecture="WhisperForConditionalGeneration", model_type="whisper", transformers=True,
                     sizes_in_text_config=True, tie_embeddings=True, ignore=("proj_out",)), _WHISPER),
})
# Ultravox (vLLM's UltravoxConfig, a whole export: no audio_model_id / text_model_id): a Llama text model, a two-layer
# Whisper encoder of whisper-medium's widths (transformers' names under audio_tower.) and the feed-forward projector
# (stack_factor 8, swiglu: linear_1 8 x 1024 -> 4096, linear_2 2048 -> the text width), all quantized.
_ULTRAVOX_AUDIO = dict(model_type="whisper", d_model=1024, encoder_layers=2, decoder_layers=2,
                       encoder_attention_heads=16, decoder_attention_heads=16, encoder_ffn_dim=4096,
                       decoder_ffn_dim=4096, num_mel_bins=128, max_source_positions=1500)
FAMILIES["ultravox"] = (
    dict(architecture="UltravoxModel", model_type="ultravox", text_prefix="language_model.model",
         ignore=("language_model.lm_head",), extra_tensors={
             **whisper_encoder_tensors("audio_tower", _ULTRAVOX_AUDIO),
             "multi_modal_projector.ln_pre.weight": (8 * 1024,), "multi_modal_projector.linear_1.weight": (4096, 8192),
             "multi_modal_projector.linear_2.weight": (BASE["hidden"], 2048),
             "multi_modal_projector.ln_post.weight": (BASE["hidden"],)}),
    {"text_config": _text_config("llama"), "audio_config": _ULTRAVOX_AUDIO, "hidden_size": 4096, "stack_factor": 8,
     "projector_act": "swiglu", "audio_token_index": 7, "vocab_size": BASE["vocab"]})
# GLM-ASR-Nano (transformers' GlmAsrForConditionalGeneration): its Llama text model at BASE's widths, a two-layer
# encoder of 1024 wide, 16 heads (the release's 1280 / 20 heads do not split over TP 8), FFN 4096, the projector;
# all quantized.
FAMILIES["glm-asr"] = (
    dict(architecture="GlmAsrForConditionalGeneration", model_type="glmasr", transformers=True,
         sizes_in_text_config=True, ignore=("language_model.lm_head",)),
    {"text_config": _text_config("llama", tie_word_embeddings=False),
     "audio_config": dict(model_type="glmasr_encoder", hidden_size=1024, intermediate_size=4096, num_hidden_layers=2,
                          num_attention_heads=16, num_mel_bins=128),
     "tie_word_embeddings": False, "audio_token_id": 7})
# Audio Flamingo 3 (transformers' AudioFlamingo3ForConditionalGeneration): Qwen2-Audio's encoder of the release's widths
# (two layers, 20 heads of 64) and projector, stored BF16 (vLLM builds them from torch nn.Linears), over a Qwen2 text
# model at BASE's widths.
FAMILIES["audio-flamingo-3"] = (
    dict(architecture="AudioFlamingo3ForConditionalGeneration", model_type="audioflamingo3", transformers=True,
         sizes_in_text_config=True,
         ignore=("language_model.lm_head", "re:.*audio_tower.*", "re:.*multi_modal_projector.*")),
    {"text_config": _text_config("qwen2"),
     "audio_config": dict(model_type="audioflamingo3_encoder", d_model=1280, encoder_attention_heads=20,
                          encoder_ffn_dim=5120, encoder_layers=2, num_mel_bins=128, max_source_positions=1500),
     "audio_token_id": 7})
# Granite Speech 3.3 (transformers' GraniteSpeechForConditionalGeneration): a Granite text model at BASE's widths, a
# two-block conformer encoder of 1024 (8 heads of 128, FFN 4 x), its CTC out / out_mid of 256, the one-layer Q-Former
# projector. The conformer blocks, input_linear and the projector stay BF16 (vLLM builds them without a quant method);
# out / out_mid are quantized. The Plus class (granite_speech_plus) builds the same modules.
_GRANITE_SPEECH_CONFIG = {
    "text_config": _text_config("granite", tie_word_embeddings=False),
    "encoder_config": {"model_type": "granite_speech_encoder", "hidden_dim": 1024, "num_layers": 2, "num_heads": 8,
                       "dim_head": 128, "input_dim": 160, "output_dim": 256, "feedforward_mult": 4},
    "projector_config": {"model_type": "blip_2_qformer", "hidden_size": 1024, "num_hidden_layers": 1,
                         "num_attention_heads": 16, "intermediate_size": 4096, "encoder_hidden_size": 1024},
    "audio_token_index": 7, "downsample_rate": 5, "window_size": 15, "tie_word_embeddings": False}
_GRANITE_SPEECH_IGNORE = ("language_model.lm_head", r"re:encoder\.layers\..*", "encoder.input_linear",
                          r"re:projector\..*")
FAMILIES.update({
    "granite-speech": (dict(architecture="GraniteSpeechForConditionalGeneration", model_type="granite_speech",
                            transformers=True, sizes_in_text_config=True, ignore=_GRANITE_SPEECH_IGNORE),
                       _GRANITE_SPEECH_CONFIG),
    "granite-speech-plus": (dict(architecture="GraniteSpeechPlusForConditionalGeneration",
                                 model_type="granite_speech_plus", transformers=True, sizes_in_text_config=True,
                                 ignore=_GRANITE_SPEECH_IGNORE), _GRANITE_SPEECH_CONFIG),
})
# Qwen3-ASR-1.7B in Qwen's own format (config.json's thinker_config; thinker.* tensors): a Qwen3 text model at BASE's
# widths, a two-layer audio encoder of the release's widths (1024, 16 heads, FFN 4096), stored BF16 (vLLM builds it
# without a quant config). The text config's model_type is qwen3: Qwen's own config class writes qwen3_asr_text, which
# 0.34 hands transformers' Qwen3ASRConfig (transformers_utils/config.py), whose sub-config lookup knows no such type
# in transformers 5.20-5.22 (qwen3-asr-text-type, OPEN).
_QWEN3_ASR_AUDIO = dict(model_type="qwen3_asr_audio_encoder", d_model=1024, encoder_layers=2,
                        encoder_attention_heads=16, encoder_ffn_dim=4096, output_dim=BASE["hidden"],
                        downsample_hidden_size=480, num_mel_bins=128, n_window=50, n_window_infer=800,
                        conv_chunksize=500, max_source_positions=1500)
FAMILIES["qwen3-asr"] = (
    dict(architecture="Qwen3ASRForConditionalGeneration", model_type="qwen3_asr", text_prefix="thinker.model",
         head="thinker.lm_head", sizes_in_text_config=True, ignore=("thinker.lm_head", r"re:.*audio_tower.*"),
         extra_tensors=qwen3_asr_audio_tensors("thinker.audio_tower", _QWEN3_ASR_AUDIO)),
    {"thinker_config": {"model_type": "qwen3_asr_thinker", "audio_config": _QWEN3_ASR_AUDIO,
                        "text_config": _text_config("qwen3", tie_word_embeddings=False),
                        "audio_token_id": 7, "audio_start_token_id": 8, "audio_end_token_id": 9}})
# The streaming class over the same checkpoint (qwen3_asr_realtime.py).
FAMILIES["qwen3-asr-realtime"] = (dict(FAMILIES["qwen3-asr"][0], architecture="Qwen3ASRRealtimeGeneration"),
                                  FAMILIES["qwen3-asr"][1])
FAMILIES["qwen3-asr-text-type"] = (FAMILIES["qwen3-asr"][0], {"thinker_config": {
    **FAMILIES["qwen3-asr"][1]["thinker_config"], "text_config": _text_config("qwen3_asr_text",
                                                                             tie_word_embeddings=False)}})
# MiDashengLM-7B (vLLM's MiDashengLMConfig; transformers has no class for it): a Qwen2 text model at BASE's widths under
# decoder., a two-block Dasheng encoder of 1024 (16 heads; the release's 1280 / 20 do not split over TP 8) and the
# subsampling projector (5 frames), all quantized, under the names the model loads.
_DASHENG = dict(embed_dim=1024, depth=2, num_heads=16, mlp_ratio=4.0, qkv_bias=True, patch_size=[64, 4],
                patch_stride=[64, 4], target_length=1008, n_mels=64, input_channels=1)


def _dasheng_tensors() -> dict[str, tuple[int, ...]]:
    width, hidden = _DASHENG["embed_dim"], BASE["hidden"]
    tensors: dict[str, tuple[int, ...]] = {
        "audio_encoder.patch_embed.proj.weight": (width, 1, 64, 4), "audio_encoder.patch_embed.proj.bias": (width,),
        "audio_encoder.time_pos_embed": (1, width, 1, 252), "audio_encoder.freq_pos_embed": (1, width, 1, 1),
        "audio_encoder.norm.weight": (width,), "audio_encoder.norm.bias": (width,),
        "audio_projector.net.0.weight": (hidden, 5 * width), "audio_projector.net.0.bias": (hidden,),
        "audio_projector.net.2.weight": (hidden, hidden), "audio_projector.net.2.bias": (hidden,)}
    for i in range(_DASHENG["depth"]):
        block = f"audio_encoder.blocks.{i}"
        tensors.update({f"{block}.attn.qkv.weight": (3 * width, width), f"{block}.attn.qkv.bias": (3 * width,),
                        f"{block}.attn.proj.weight": (width, width), f"{block}.attn.proj.bias": (width,),
                        f"{block}.mlp.fc1.weight": (4 * width, width), f"{block}.mlp.fc1.bias": (4 * width,),
                        f"{block}.mlp.fc2.weight": (width, 4 * width), f"{block}.mlp.fc2.bias": (width,),
                        **{f"{block}.{norm}.{p}": (width,) for norm in ("norm1", "norm2") for p in ("weight", "bias")}})
    return tensors


FAMILIES["midashenglm"] = (
    dict(architecture="MiDashengLMModel", model_type="midashenglm", text_prefix="decoder.model", head="decoder.lm_head",
         sizes_in_text_config=True, ignore=("decoder.lm_head",), extra_tensors=_dasheng_tensors()),
    {"audio_encoder_config": _DASHENG, "text_config": _text_config("qwen2_5_omni_text", tie_word_embeddings=False),
     "subsample_factor": 5, "audio_token_id": 7})
# Fun-Audio-Chat (vLLM's FunAudioChatConfig; transformers has no class for it): a Qwen3 text model at BASE's widths, a
# two-layer continuous encoder of 1024 (16 heads, FFN 4096) and the discrete encoder's tables and matching linears,
# BF16 (vLLM builds them without a quant method), under the names the model loads.
_FUN_AUDIO = dict(model_type="funaudiochat_audio_encoder", d_model=1024, encoder_layers=2, encoder_attention_heads=16,
                  encoder_ffn_dim=4096, num_mel_bins=128, max_source_positions=1500, n_window=100,
                  output_dim=BASE["hidden"], codebook_size=512, group_size=5, pad_token_id=0, bos_token_id=1,
                  eos_token_id=2)


def _fun_audio_tensors() -> dict[str, tuple[int, ...]]:
    width, ffn, out = _FUN_AUDIO["d_model"], _FUN_AUDIO["encoder_ffn_dim"], _FUN_AUDIO["output_dim"]
    root = "continuous_audio_tower"
    tensors: dict[str, tuple[int, ...]] = {
        f"{root}.conv1.weight": (width, 128, 3), f"{root}.conv2.weight": (width, width, 3),
        f"{root}.ln_post.weight": (width,), f"{root}.proj.weight": (out, width), f"{root}.proj.bias": (out,),
        f"{root}.audio_bos_eos_token.weight": (2, out), "audio_tower.embed_tokens.weight": (512, out),
        "audio_tower.output_matching.weight": (out, out), "audio_tower.continual_output_matching.weight": (out, out)}
    for i in range(_FUN_AUDIO["encoder_layers"]):
        layer = f"{root}.layers.{i}"
        tensors.update({f"{layer}.self_attn.{leaf}.weight": (width, width)
                        for leaf in ("q_proj", "k_proj", "v_proj", "out_proj")})
        tensors.update({f"{layer}.self_attn.{leaf}.bias": (width,) for leaf in ("q_proj", "v_proj", "out_proj")})
        tensors.update({f"{layer}.fc1.weight": (ffn, width), f"{layer}.fc2.weight": (width, ffn),
                        f"{layer}.self_attn_layer_norm.weight": (width,), f"{layer}.final_layer_norm.weight": (width,)})
    return tensors


FAMILIES["fun-audio-chat"] = (
    dict(architecture="FunAudioChatForConditionalGeneration", model_type="funaudiochat",
         text_prefix="language_model.model", sizes_in_text_config=True, extra_tensors=_fun_audio_tensors(),
         ignore=("language_model.lm_head", r"re:.*audio_tower.*")),
    {"audio_config": _FUN_AUDIO, "text_config": _text_config("qwen3", tie_word_embeddings=False),
     "audio_token_index": 7})
# ninth round (fam-mma)
# MiniCPM-V (minicpmv.py; the hub's remote-code MiniCPMVConfig, model_type minicpmv: the text model's keys flat, at
# BASE's widths): 2.6 (Qwen2, Qwen2-7B's window keys, off), 4.5 (Qwen3) and 4.0 (Llama), synth.minicpmv_vision_tensors
# the tower (two SigLIP layers of 1024, 16 heads) and the resampler under openbmb's names. The tower and the
# resampler's kv_proj quantized (vLLM hands both the quant config); the resampler's nn.MultiheadAttention out_proj, a
# torch nn.Linear, stored BF16 and listed. 2.6 built without the tower's last layer (drop_vision_last_layer true: its
# tensors are dropped by the tower's loader).
_MINICPMV_TEXT = dict(hidden_size=BASE["hidden"], intermediate_size=BASE["intermediate"],
                      num_hidden_layers=BASE["layers"], num_attention_heads=BASE["heads"],
                      num_key_value_heads=BASE["kv_heads"], vocab_size=BASE["vocab"], max_position_embeddings=512,
                      hidden_act="silu", rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=False)
_MINICPMV_VISION = {"model_type": "siglip", "hidden_size": _V, "intermediate_size": 4 * _V, "num_hidden_layers": 2,
                    "num_attention_heads": 16, "image_size": 980, "patch_size": 14}


def _minicpmv(version: str, drop_last: bool = False, **text) -> tuple[dict, dict]:
    """A MiniCPM-V family of config.json's `version`: its Spec fields and config.json."""
    config = dict(_MINICPMV_TEXT, architectures=["MiniCPMV"], model_type="minicpmv", version=float(version),
                  query_num=64, image_size=448, drop_vision_last_layer=drop_last, vision_config=_MINICPMV_VISION,
                  slice_config={"max_slice_nums": 9, "patch_size": 14, "scale_resolution": 448}, use_image_id=True,
                  batch_vision_input=True, **text)
    spec = dict(architecture="MiniCPMV", model_type="minicpmv", text_prefix="llm.model", head="llm.lm_head",
                sizes_in_text_config=True, extra_tensors=minicpmv_vision_tensors(config),
                ignore=("llm.lm_head", "resampler.attn.out_proj"))
    return spec, config


FAMILIES.update({
    "minicpm-v-2.6": _minicpmv("2.6", drop_last=True, sliding_window=131072, use_sliding_window=False,
                               max_window_layers=28),
    "minicpm-v-4.5": _minicpmv("4.5", head_dim=BASE["head_dim"]),
    "minicpm-v-4.0": _minicpmv("4.0"),
    # a version MiniCPMV.__new__ builds no class for: vLLM's ValueError before any layer is built
    "minicpm-v-3.0": _minicpmv("3.0"),
})
# MiniCPM-o (minicpmo.py; remote-code MiniCPMOConfig, model_type minicpmo): MiniCPM-V 2.6 / 4.5's model plus the
# Whisper audio tower (two layers of 1024, 16 heads; torch nn.Linears) and its projection, stored BF16 and listed; the
# speech generator's tts.* tensors (BF16) dropped by the model's mapper.
_MINICPMO_AUDIO = {"d_model": _V, "encoder_attention_heads": 16, "encoder_ffn_dim": 4 * _V, "encoder_layers": 2,
                   "num_mel_bins": 80, "max_source_positions": 1500, "activation_function": "gelu"}
_MINICPMO_TTS = {"tts.projector.linear1.weight": (768, BASE["hidden"]),
                 "tts.model.layers.0.self_attn.q_proj.weight": (768, 768)}


def _minicpmo(version: str, **text) -> tuple[dict, dict]:
    """A MiniCPM-o family of config.json's `version`: its Spec fields and config.json."""
    spec, config = _minicpmv(version, **text)
    config = dict(config, architectures=["MiniCPMO"], model_type="minicpmo", audio_config=_MINICPMO_AUDIO,
                  audio_pool_step=2, audio_chunk_length=1.0, init_vision=True, init_audio=True, init_tts=True,
                  tts_config={"llm_dim": BASE["hidden"], "hidden_size": 768})
    spec = dict(spec, architecture="MiniCPMO", model_type="minicpmo",
                extra_tensors={**spec["extra_tensors"], **minicpmo_audio_tensors(config), **_MINICPMO_TTS},
                ignore=(*spec["ignore"], r"re:^apm\.", r"re:^audio_projection_layer\.", r"re:^tts\."))
    return spec, config


# MiniCPM-V 4.6 / 4.7 (minicpmv4_6.py, minicpmv4_7.py; transformers' own classes and names): Qwen3.5's text model
# (gated-delta-net and gated-attention layers) under model.language_model, the Idefics2 tower model.vision_tower (two
# layers of 1024, 16 heads; 4.6 built without its last one: drop_vision_last_layer) and its window-attention vit_merger,
# quantized; the downsampling MLPs (vit_merger.linear_1 / 2, merger.mlp.0.linear_1 / 2: torch nn.Linears) stored BF16
# and listed.
_MINICPMV46_VISION = {"hidden_size": _V, "intermediate_size": 4 * _V, "num_hidden_layers": 2, "num_attention_heads": 16,
                      "image_size": 448, "patch_size": 14, "insert_layer_id": 0}
_MINICPMV46_LINEAR = ("model.vision_tower.vit_merger.linear_1", "model.vision_tower.vit_merger.linear_2",
                      "model.merger.mlp.0.linear_1", "model.merger.mlp.0.linear_2")


def _minicpmv46(architecture: str, model_type: str, **keys) -> tuple[dict, dict]:
    """A MiniCPM-V 4.6-format family: its Spec fields and config.json."""
    ignore = _gdn_ignore("model.language_model")["ignore"] + _MINICPMV46_LINEAR
    return (dict(architecture=architecture, model_type=model_type, **_HF, ignore=ignore),
            dict(text_config=_text_config("qwen3_5_text", num_hidden_layers=4, **_GDN),
                 vision_config=_MINICPMV46_VISION, **keys))


FAMILIES.update({
    "minicpm-v-4.6": _minicpmv46("MiniCPMV4_6ForConditionalGeneration", "minicpmv4_6", drop_vision_last_layer=True),
    "minicpm-v-4.7": _minicpmv46("MiniCPMV4_7ForConditionalGeneration", "minicpmv4_7"),
    # written by transformers 5.25's MiniCPMOcrForConditionalGeneration; the harness's transformers (5.20.2) has no
    # minicpm_ocr config class (EXPLAINED)
    "minicpm-ocr": _minicpmv46("MiniCPMOcrForConditionalGeneration", "minicpm_ocr"),
})
FAMILIES.update({
    "minicpm-o-2.6": _minicpmo("2.6", sliding_window=131072, use_sliding_window=False, max_window_layers=28),
    "minicpm-o-4.5": _minicpmo("4.5", head_dim=BASE["head_dim"]),
})
# Ovis2.5 / Ovis2.6 (ovis2_5.py; the hub's remote-code Ovis2_5Config, model_type ovis2_5: llm_config, vit_config):
# Qwen3's text model (Ovis2.5-9B's) under llm., synth.ovis2_5_vision_tensors the visual tokenizer (a SigLIP-2 NaViT of
# two layers of 1024, 16 heads, quantized; the head.0 ReplicatedLinear, built without quant config, and the vte table
# stored BF16 and listed), with a convolution patch embedding (num_patches -1) and a naflex linear one (256 patches,
# a ReplicatedLinear without quant config); Ovis2.6-MoE's Qwen3-MoE text model.
_OVIS25_VIT = {"model_type": "siglip2_navit", "hidden_size": _V, "intermediate_size": 4 * _V, "num_hidden_layers": 2,
               "num_attention_heads": 16, "patch_size": 16, "image_size": 512, "num_patches": -1, "hidden_stride": 2,
               "temporal_patch_size": 1, "num_channels": 3, "hidden_act": "gelu_pytorch_tanh", "layer_norm_eps": 1e-6,
               "attention_dropout": 0.0, "preserve_original_pe": False, "use_rope": True, "window_size": 112,
               "fullatt_block_indexes": None}


def _ovis2_5(architecture: str, llm: dict, **vit) -> tuple[dict, dict]:
    """An Ovis2.5-format family: its Spec fields and config.json."""
    config = {"llm_config": llm, "vit_config": dict(_OVIS25_VIT, **vit), "visual_vocab_size": 65536,
              "hidden_size": BASE["hidden"], "conversation_formatter_class": "Qwen3ConversationFormatter"}
    moe = bool(llm.get("num_experts"))
    spec = dict(architecture=architecture, model_type="ovis2_5", text_prefix="llm.model", head="llm.lm_head",
                sizes_in_text_config=True, extra_tensors=ovis2_5_vision_tensors(config),
                ignore=("llm.lm_head", "vte", r"re:^visual_tokenizer\.head\.", r"re:.*patch_embedding$"),
                **(_MOE if moe else {}))
    return spec, config


_OVIS25_QWEN3 = _text_config("qwen3", architectures=["Qwen3ForCausalLM"], rms_norm_eps=1e-6, rope_theta=1000000.0)
FAMILIES.update({
    "ovis2.5": _ovis2_5("Ovis2_5", _OVIS25_QWEN3),
    "ovis2.5-naflex": _ovis2_5("Ovis2_5", _OVIS25_QWEN3, num_patches=256),
    "ovis2.6": _ovis2_5("Ovis2_6ForCausalLM", _OVIS25_QWEN3),
    "ovis2.6-moe": _ovis2_5("Ovis2_6_MoeForCausalLM", _text_config(
        "qwen3_moe", architectures=["Qwen3MoeForCausalLM"], num_experts=8, moe_intermediate_size=1024,
        num_experts_per_tok=2, decoder_sparse_step=1, mlp_only_layers=[], norm_topk_prob=True, rms_norm_eps=1e-6)),
})
# Ovis2 (ovis.py; vLLM's own OvisConfig, model_type ovis): Qwen2 (Ovis2-8B's text model) under llm.,
# synth.ovis_aimv2_tensors the AIMv2 visual tokenizer (two blocks of 1024, 16 heads, quantized: attn.qkv fused,
# fc1 / fc3 stacked into fc13) and the head / vte stored BF16 and listed.
_OVIS2_CONFIG = {"llm_config": _QWEN2_LLM, "hidden_size": BASE["hidden"], "multimodal_max_length": 32768,
                 "conversation_formatter_class": "QwenConversationFormatter",
                 "visual_tokenizer_config": {
                     "model_type": "aimv2_visual_tokenizer", "vocab_size": 65536, "hidden_stride": 2,
                     "tokenize_function": "softmax", "drop_cls_token": False,
                     "backbone_config": {"model_type": "aimv2", "hidden_size": _V, "intermediate_size": 4 * _V,
                                         "num_attention_heads": 16, "num_hidden_layers": 2, "patch_size": 14,
                                         "image_size": 448, "num_channels": 3, "qkv_bias": False, "mlp_bias": False,
                                         "rms_norm_eps": 1e-5}}}
FAMILIES["ovis2"] = (dict(architecture="Ovis", model_type="ovis", text_prefix="llm.model", head="llm.lm_head",
                          sizes_in_text_config=True, extra_tensors=ovis_aimv2_tensors(_OVIS2_CONFIG),
                          ignore=("llm.lm_head", "vte", r"re:^visual_tokenizer\.head\.")), _OVIS2_CONFIG)
# Phi-4-multimodal (phi4mm.py; the hub's remote-code Phi4MMConfig, model_type phi4mm, read as a plain config): written
# wholly by synth.phi4mm_tensors under microsoft's names at BASE's widths (tied embeddings): the LoRA-wrapped text
# linears (`<linear>.base_layer`, quantized; the lora_A / lora_B adapters stored BF16 and dropped by the mapper), the
# fixed SigLIP NaViT image encoder and the conformer audio encoder (one block of Phi-4-MM's 1024 width) with their
# projections, all built without quant config and stored BF16; the window of Phi-4-mini's config (no layer_types).
_PHI4MM_AUDIO = {"activation": "swish", "attention_dim": 1024, "attention_heads": 16, "batch_norm": False,
                 "bias_in_glu": True, "causal": True, "chunk_size": -1, "cnn_layer_norm": True,
                 "conv_activation": "swish", "conv_glu_type": "swish", "depthwise_multiplier": 1,
                 "depthwise_seperable_out_channel": 1024, "dropout_rate": 0.0,
                 "encoder_embedding_config": {"input_size": 80}, "ext_pw_kernel_size": 1, "ext_pw_out_channel": 1024,
                 "input_layer": "nemo_conv", "input_size": 80, "kernel_size": 3, "left_chunk": 18,
                 "linear_units": 1536, "nemo_conv_settings": {"conv_channels": 1024}, "num_blocks": 1,
                 "relative_attention_bias_args": {"t5_bias_max_distance": 500, "type": "t5"}, "time_reduction": 8}
_PHI4MM = dict(_text_config("phi4mm"), tie_word_embeddings=True, hidden_act="silu", rms_norm_eps=1e-5,
               rope_theta=10000.0, partial_rotary_factor=0.75, sliding_window=262144, pad_token_id=0,
               bos_token_id=1, eos_token_id=2, img_processor=None, audio_processor={"config": _PHI4MM_AUDIO,
                                                                                     "name": "cascades"},
               embd_layer={"embedding_cls": "image_audio",
                           "audio_embd_layer": {"compression_rate": 8, "downsample_rate": 1, "embedding_cls": "audio",
                                                "projection_cls": "mlp", "use_conv_downsample": False,
                                                "use_qformer": False},
                           "image_embd_layer": {"crop_size": 448, "embedding_cls": "tune_image",
                                                "hd_transform_order": "sub_glb",
                                                "image_token_compression_cls": "avg_pool_2d", "projection_cls": "mlp",
                                                "use_hd_transform": True, "with_learnable_separator": True}})
FAMILIES["phi-4-multimodal"] = (
    dict(architecture="Phi4MMForCausalLM", model_type="phi4mm", layers=0, tie_embeddings=True,
         extra_tensors=phi4mm_tensors(_PHI4MM),
         ignore=(r"re:.*\.lora_[AB]\.", r"re:^model\.embed_tokens_extend\.")), _PHI4MM)
# The same with layer 0's attention listed under its checkpoint names (`qkv_proj.base_layer`, `o_proj.base_layer`,
# stored BF16): vLLM maps the list with its mapper, whose "base_layer." (with its dot) a list entry does not hold, so
# no entry names vLLM's `qkv_proj` / `o_proj` and it builds FP8 layers over the BF16 weights.
FAMILIES["phi-4-multimodal-listed"] = (
    dict(FAMILIES["phi-4-multimodal"][0], ignore=(*FAMILIES["phi-4-multimodal"][0]["ignore"], *(
        f"model.layers.0.self_attn.{leaf}.base_layer" for leaf in ("qkv_proj", "o_proj")))), _PHI4MM)
# Phi-4 vision (phi4siglip.py Phi4ForCausalLMV; a Phi-3 config with a vision_config dict and mm_hidden_size): Phi-3's
# stored-fused text model at BASE's widths, synth.phi4v_vision_tensors the SigLIP-2 tower (three layers of 1024, 16
# heads: the last one past layer -2, dropped, its pooling head dropped by the mapper) and the projector, quantized; the
# linear patch embedding (built without quant config) stored BF16 and listed.
_PHI4V = {"vision_config": {"hidden_size": _V, "intermediate_size": 4 * _V, "num_hidden_layers": 3,
                            "num_attention_heads": 16, "patch_size": 16, "num_patches": 256, "num_channels": 3},
          "mm_hidden_size": _V, "rms_norm_eps": 1e-05, "hidden_act": "silu", "tie_word_embeddings": False,
          "pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}
FAMILIES["phi-4-vision"] = (dict(architecture="Phi4ForCausalLMV", model_type="phi3", fused_on_disk=True,
                                 extra_tensors=phi4v_vision_tensors({**_PHI4V, "hidden_size": BASE["hidden"]}),
                                 ignore=("lm_head", r"re:.*patch_embedding$")), _PHI4V)
# ninth round (fam-tfmm)
# Vision-language architectures no release registers, which the Transformers backend builds as
# TransformersMultiModalForCausalLM from transformers' own class, written by it.
_SIGLIP_VISION = {"model_type": "siglip_vision_model", "hidden_size": _V, "intermediate_size": 4 * _V,
                  "num_hidden_layers": 2, "num_attention_heads": 16, "image_size": 364, "patch_size": 14}
FAMILIES.update({
    "aya-vision": (dict(architecture="AyaVisionForConditionalGeneration", model_type="aya_vision", transformers=True,
                        ignore=("language_model.lm_head",)),
                   dict(_TOKENS, image_token_index=4000, downsample_factor=2, text_config=_text_config("cohere2"),
                        vision_config=dict(_SIGLIP_VISION, vision_use_head=False))),
    # The same with the tower and projector left BF16, listed by regular expressions over the checkpoint's names
    # (transformers' legacy vision_tower. / multi_modal_projector.), as llm-compressor's VLM recipes write them.
    "aya-vision-tower-bf16": (dict(architecture="AyaVisionForConditionalGeneration", model_type="aya_vision",
                                   transformers=True, ignore=("language_model.lm_head", r"re:vision_tower.*",
                                                              r"re:multi_modal_projector.*")),
                              dict(_TOKENS, image_token_index=4000, downsample_factor=2,
                                   text_config=_text_config("cohere2"),
                                   vision_config=dict(_SIGLIP_VISION, vision_use_head=False))),
    # VIP-LLaVA: CLIP's tower, the projector over two of its layers, Llama.
    "vip-llava": (dict(architecture="VipLlavaForConditionalGeneration", model_type="vipllava", transformers=True,
                       ignore=("language_model.lm_head",)),
                  dict(_TOKENS, image_token_index=4000, vision_feature_layers=[-2, -1],
                       text_config=_text_config("llama"), vision_config=_CLIP_VISION)),
    # LightOnOCR-2: Pixtral's tower (its gate / up MLP fused by the GLUFuser), the patch merger and projector, Qwen3.
    # (transformers' spelling, LightOnOcr: no release registers it; vLLM's own LightOnOCR is "lightonocr" below)
    "lightonocr-hf": (dict(architecture="LightOnOcrForConditionalGeneration", model_type="lighton_ocr",
                           transformers=True, ignore=("lm_head",)),
                      dict(_TOKENS, image_token_id=10, spatial_merge_size=2, text_config=_text_config("qwen3"),
                           vision_config={"model_type": "pixtral", "hidden_size": _V, "intermediate_size": 4 * _V,
                                          "num_hidden_layers": 2, "num_attention_heads": 16, "head_dim": _V // 16,
                                          "patch_size": 14, "image_size": 1540, "hidden_act": "silu"})),
})
# The transformers processor (class, image processor class) each Transformers-backend family above ships
# (write_processor).
TRANSFORMERS_PROCESSORS = {"aya-vision": ("AyaVisionProcessor", "GotOcr2ImageProcessor"),
                           "aya-vision-tower-bf16": ("AyaVisionProcessor", "GotOcr2ImageProcessor"),
                           "vip-llava": ("LlavaProcessor", "CLIPImageProcessor"),
                           "lightonocr-hf": ("LightOnOcrProcessor", "PixtralImageProcessor",
                                             {"image_token": "t10", "image_break_token": "t11",
                                              "image_end_token": "t12"})}
# ninth round (fam-tfmoe)
# Unregistered transformers MoE classes, built by the Transformers backend's TransformersMoEForCausalLM
# (layouts.transformers_backend_arch, from the generated TransformersClass.moe): Phi-3.5-MoE under transformers'
# spelling (PhimoeForCausalLM; the registry's phimoe.py is PhiMoEForCausalLM), its router a Linear the MoE fuser cannot
# match (sparsemixer), no shared expert; Solar-Open (DeepSeek-V3's grouped sigmoid router with a correction bias,
# one shared expert), every layer MoE; Mistral-4 (an MLA model: the backend's MLAFuser); MiniMax, whose
# linear_attention layer 0 vLLM refuses (no attention dispatched through the interface).
FAMILIES.update({
    "phimoe-hf": (dict(architecture="PhimoeForCausalLM", model_type="phimoe", transformers=True, layers=2),
                  dict(_TOKENS, num_local_experts=8, num_experts_per_tok=2, intermediate_size=1024)),
    "solar-open": (dict(architecture="SolarOpenForCausalLM", model_type="solar_open", transformers=True, layers=2),
                   dict(_TOKENS, n_routed_experts=8, num_experts_per_tok=2, moe_intermediate_size=1024,
                        n_shared_experts=1, n_group=1, topk_group=1)),
    "mistral4-hf": (dict(architecture="Mistral4ForCausalLM", model_type="mistral4", transformers=True, layers=2),
                    dict(_TOKENS, n_routed_experts=8, num_experts_per_tok=2, moe_intermediate_size=1024,
                         n_shared_experts=1, kv_lora_rank=512, q_lora_rank=1024, qk_rope_head_dim=64,
                         qk_nope_head_dim=128, v_head_dim=128)),
    "minimax-hf": (dict(architecture="MiniMaxForCausalLM", model_type="minimax", transformers=True, layers=2),
                   dict(_TOKENS, num_local_experts=8, num_experts_per_tok=2, intermediate_size=1024,
                        layer_types=["linear_attention", "full_attention"])),
})

# ninth round (fam-mmb)
# DeepSeek-VL2 (deepseek_vl2.py; vLLM's own DeepseekVLV2Config, model_type deepseek_vl_v2): DeepSeek-VL2-Small's
# language_config scaled in depth and experts (MLA without q-LoRA, a dense layer 0, greedy softmax routing, two shared
# experts) under language., synth.deepseek_vl2_tensors the timm SigLIP-SO400M tower (27 blocks, whatever
# vision_config says) and the projector, both stored BF16 as the released exports keep them: at TP 1 vLLM builds
# them as torch nn.Linears; above it the MLPs' fc1 / fc2 become FP8 layers over those BF16 weights (their prefix
# blocks.N.mlp.fcN is what the lists are matched against: no entry under vision. names them).
_DEEPSEEK_VL2 = {
    "language_config": _text_config("deepseek_v2", architectures=["DeepseekV2ForCausalLM"], num_key_value_heads=16,
                                    first_k_dense_replace=1, q_lora_rank=None, kv_lora_rank=512, qk_nope_head_dim=128,
                                    qk_rope_head_dim=64, v_head_dim=128, moe_intermediate_size=1024,
                                    n_routed_experts=8, n_shared_experts=1, num_experts_per_tok=2, n_group=1,
                                    topk_group=1, topk_method="greedy", use_mla=True, tie_word_embeddings=False),
    "vision_config": {"model_name": "siglip_so400m_patch14_384", "image_size": 384, "patch_size": 14, "width": 1152,
                      "layers": 27, "heads": 16, "mlp_ratio": 3.7362, "global_pool": "map", "ignore_head": True,
                      "class_token": False, "num_classes": 0, "use_checkpoint": False},
    "projector_config": {"projector_type": "downsample_mlp_gelu", "input_dim": 1152, "n_embed": BASE["hidden"],
                         "depth": 2, "mlp_ratio": 1, "downsample_ratio": 2, "token_pooling": False},
    "tile_tag": "2D", "global_view_pos": "head", "candidate_resolutions": [[384, 384]]}
FAMILIES.update({
    "deepseek-vl2": (dict(architecture="DeepseekVLV2ForCausalLM", model_type="deepseek_vl_v2", **_MLA,
                          text_prefix="language.model", head="language.lm_head", sizes_in_text_config=True,
                          extra_tensors=deepseek_vl2_tensors(_DEEPSEEK_VL2),
                          ignore=("language.lm_head", r"re:vision\..*", r"re:projector\..*")), _DEEPSEEK_VL2),
})
# DeepSeek-OCR (deepseek_ocr.py; DeepseekVLV2Config as DeepSeek-VL2's): the released language_config's MHA text model
# (qk_nope_head_dim = qk_rope_head_dim = 0, kv_lora_rank null) scaled in depth and experts, under model.;
# synth.deepseek_ocr_tensors the released SAM ViT-B and CLIP-L towers and the linear projector (config.json's vision
# section as released: the towers' sizes nested under width, which vLLM never reads). SAM and the projector stored
# BF16 (torch nn.Linears in vLLM), the CLIP encoder FP8 (vLLM quantizes it, asking with vision_model.encoder.*).
_DEEPSEEK_OCR = {
    "language_config": _text_config("deepseek_v2", architectures=["DeepseekV2ForCausalLM"], num_key_value_heads=16,
                                    first_k_dense_replace=1, q_lora_rank=None, kv_lora_rank=None, qk_nope_head_dim=0,
                                    qk_rope_head_dim=0, v_head_dim=0, moe_intermediate_size=1024, n_routed_experts=8,
                                    n_shared_experts=1, num_experts_per_tok=2, n_group=1, topk_group=1,
                                    topk_method="greedy", use_mla=False, tie_word_embeddings=False),
    "vision_config": {"image_size": 1024, "mlp_ratio": 3.7362, "model_name": "deeplip_b_l", "model_type": "vision",
                      "width": {"clip-l-14-224": {"heads": 16, "image_size": 224, "layers": 24, "patch_size": 14,
                                                  "width": 1024},
                                "sam_vit_b": {"downsample_channels": [512, 1024], "global_attn_indexes": [2, 5, 8, 11],
                                              "heads": 12, "layers": 12, "width": 768}}},
    "projector_config": {"input_dim": 2048, "model_type": "mlp_projector", "n_embed": BASE["hidden"],
                         "projector_type": "linear"},
    "tile_tag": "2D", "global_view_pos": "head", "candidate_resolutions": [[1024, 1024]]}
FAMILIES["deepseek-ocr"] = (
    dict(architecture="DeepseekOCRForCausalLM", model_type="deepseek_vl_v2", experts=8, moe_style="deepseek",
         shared_experts=1, first_k_dense=1, kv_heads=BASE["heads"], sizes_in_text_config=True,
         extra_tensors=deepseek_ocr_tensors(_DEEPSEEK_OCR),
         ignore=("lm_head", r"re:model\.sam_model\..*", r"re:model\.projector\..*")), _DEEPSEEK_OCR)
# Qianfan-OCR (qianfan_ocr.py, an InternVLChatModel): transformers' QianfanOCRConfig (model_type qianfan_ocr, its
# vision_config under transformers' field names, text_config Qwen3) with the InternVL keys the model file reads
# (select_layer, force_image_size, ps_version, ...), over InternVL's checkpoint names (synth.intern_vit_tensors:
# InternViT-300M's widths, one layer). The tower, the head and mlp1 stored BF16 and listed (the tower by a re: entry,
# which Fp8Config does not match: the model file's own ignored_layers leave it unquantized there).
_QIANFAN_TEXT = _text_config("qwen3", architectures=["Qwen3ForCausalLM"], rope_theta=1000000.0, rms_norm_eps=1e-6,
                             tie_word_embeddings=False)
_QIANFAN_OCR = {"text_config": _QIANFAN_TEXT,
                "vision_config": {"model_type": "qianfan_ocr_vision", "hidden_size": _V, "intermediate_size": 4 * _V,
                                  "num_attention_heads": 16, "num_hidden_layers": 1, "attention_bias": True,
                                  "use_qk_norm": False, "norm_type": "layer_norm", "layer_norm_eps": 1e-6,
                                  "hidden_act": "gelu", "image_size": [448, 448], "patch_size": [14, 14],
                                  "layer_scale_init_value": 0.1},
                "downsample_ratio": 0.5, "select_layer": -1, "force_image_size": 448, "ps_version": "v2",
                "template": "qianfan_ocr", "dynamic_image_size": True, "use_thumbnail": True, "min_dynamic_patch": 1,
                "max_dynamic_patch": 12, "image_token_id": BASE["vocab"] - 1}
FAMILIES["qianfan-ocr"] = (
    dict(architecture="QianfanOCRForConditionalGeneration", model_type="qianfan_ocr",
         text_prefix="language_model.model", sizes_in_text_config=True, extra_tensors=intern_vit_tensors(
             {"vision_config": _VIT_300M, "llm_config": _QIANFAN_TEXT, "downsample_ratio": 0.5}),
         ignore=("language_model.lm_head", "mlp1.1", "mlp1.3", r"re:vision_model\..*")), _QIANFAN_OCR)
# LightOnOCR (lightonocr.py, a Mistral3ForConditionalGeneration): written by transformers'
# LightOnOcrForConditionalGeneration (model.vision_encoder / model.vision_projection / model.language_model, the head
# tied as released), a one-layer Pixtral tower of BASE's vision widths, a Qwen3 text model; config.json's keys
# mistral3.py reads beside LightOnOcrConfig's (vision_feature_layer, projector_hidden_act, multimodal_projector_bias).
FAMILIES["lightonocr"] = (
    dict(architecture="LightOnOCRForConditionalGeneration", model_type="lighton_ocr", transformers=True,
         tie_embeddings=True, sizes_in_text_config=True,
         ignore=("model.vision_projection.patch_merger.merging_layer",)),
    {"text_config": _text_config("qwen3", rope_theta=1000000.0, rms_norm_eps=1e-6, tie_word_embeddings=True),
     "vision_config": {"model_type": "pixtral", "hidden_size": _V, "intermediate_size": 2 * _V, "num_hidden_layers": 1,
                       "num_attention_heads": 16, "head_dim": _V // 16, "patch_size": 14, "image_size": 1540},
     "spatial_merge_size": 2, "image_token_id": BASE["vocab"] - 1, "tie_word_embeddings": True,
     "vision_feature_layer": -1, "projector_hidden_act": "gelu", "multimodal_projector_bias": False})
# GLM-OCR (glm_ocr.py, a Glm4vForConditionalGeneration): written by transformers' GlmOcrForConditionalGeneration, the
# GLM-4V tower of "glm-4.1v" under glm_ocr_vision, a GLM-4 text model (glm_ocr_text).
FAMILIES["glm-ocr"] = (dict(architecture="GlmOcrForConditionalGeneration", model_type="glm_ocr", **_HF),
                       {"text_config": _text_config("glm_ocr_text", partial_rotary_factor=0.5),
                        "vision_config": dict(_GLM4V_VISION, model_type="glm_ocr_vision")})
# LFM2-VL (lfm2_vl.py): written by transformers' Lfm2VlForConditionalGeneration, "lfm2"'s text model (tied head) and a
# one-layer SigLIP-2 NaViT tower of BASE's vision widths; the patch embedding and the projector (vLLM builds them
# without the quant config) stored BF16 and listed.
FAMILIES["lfm2-vl"] = (
    dict(architecture="Lfm2VlForConditionalGeneration", model_type="lfm2_vl", tie_embeddings=True,
         sizes_in_text_config=True, **dict(_HF, ignore=("model.vision_tower.vision_model.embeddings.patch_embedding",
                                                        r"re:model\.multi_modal_projector\..*"))),
    {"text_config": _text_config("lfm2", **FAMILIES["lfm2"][1], num_hidden_layers=4, tie_word_embeddings=True),
     "vision_config": {"model_type": "siglip2_vision_model", "hidden_size": _V, "intermediate_size": 4 * _V,
                       "num_hidden_layers": 1, "num_attention_heads": 16, "patch_size": 16, "num_patches": 256,
                       "num_channels": 3, "vision_use_head": False},
     "projector_hidden_size": BASE["hidden"], "downsample_factor": 2, "projector_bias": True,
     "projector_use_layernorm": True, "tie_word_embeddings": True, "image_token_id": BASE["vocab"] - 1})

# Tokens a family's model class reads from the checkpoint's added_tokens.json while it is built (models/dots3_note
# nvidia/multimodal.py Dots3NoteForCausalLM: the image padding token, or a ValueError).
ADDED_TOKENS = {"dots3-note": {"<|imgpad|>": 5}, "deepseek-vl2": {"<image>": BASE["vocab"]},
                "deepseek-ocr": {"<image>": BASE["vocab"]}}
# Families whose front door asks the tokenizer (built from the checkpoint's, not skipped: crosscheck_model's
# case["tokenizer"]): internvl.py's InternVLProcessingInfo reads the tokenizer's vocabulary for a Qwen2 / Qwen3 text
# model's video token while vLLM sizes the multimodal limits (get_supported_mm_limits). A word-level one of the
# vocabulary's size (no <|video_pad|>: images only, as a tokenizer without it serves).
TOKENIZER_FAMILIES = ("internvl-chat", "ovis2.5", "ovis2.5-naflex", "ovis2.6", "ovis2.6-moe", "deepseek-vl2",
                      "deepseek-ocr")
# Families whose front door builds the checkpoint's HF processor (preprocessor_config.json's processor_class over
# QWEN_PREPROCESSOR's image processor): ovis2_5.py's Ovis2_5ProcessingInfo builds vLLM's Ovis2_5Processor, with the
# checkpoint's tokenizer, when constructed.
PROCESSOR_FAMILIES = {family: "Ovis2_5Processor" for family in ("ovis2.5", "ovis2.5-naflex", "ovis2.6", "ovis2.6-moe")}
QUANTS = ("ct-fp8-block", "fp8-block", "ct-fp8-dynamic", "modelopt-fp8")
# The other formats of the format issue: stored ones, and a bf16 checkpoint under each online --quantization.
FORMAT_QUANTS = ("modelopt-pcpt", "modelopt-pbwo", "quark-fp8", "quark-ptpc", "quark-fp8-block", "inc-fp8-block",
                 "fbgemm-fp8", "modelopt-mxfp8", "ct-mxfp8", "w4afp8", "bf16+fp8", "bf16+fp8_per_block",
                 "bf16+fp8_per_channel", "bf16+mxfp8")
PLATFORMS = ("xpu", "cpu", "cuda:80", "cuda:89", "cuda:90", "cuda:100", "rocm:gfx942")
PARALLEL = ((1, False), (2, False), (8, False), (8, True))   # (TP, --ep)
# The KV cache axis: --kv-cache-dtype on a subset (dense, sliding-window, mm-prefix, sinks, DiffKV and MLA families) in
# checkpoints with KV scales of each stored format that writes them ("QUANT:kv-STRATEGY": synth's Spec.kv_cache),
# and the same format without (auto turns into an FP8 cache only where the config declares it). Every other case
# is auto.
KV_CACHE_DTYPES = ("auto", "fp8", "fp8_e5m2", "bfloat16")
KV_FAMILIES = ("llama", "qwen3", "gemma-2", "gemma-3", "gemma-3-vision-256", "gpt-oss", "deepseek-v2-lite",
               "deepseek-v3", "mimo-v2-flash")
KV_QUANTS = ("ct-fp8-block", "ct-fp8-block:kv-tensor", "ct-fp8-dynamic:kv-attn_head", "fp8-block:kv-tensor",
             "modelopt-fp8:kv-tensor", "quark-fp8:kv-tensor")
KV_PARALLEL = ((1, False), (8, False))
# The quants a Mistral-format family (Spec.mistral_format) runs in, whatever --quants says: the FP8 params.json
# `quantization` Mistral's exporter writes (synth.MISTRAL_QUANTIZATION: per-tensor static, dynamic, 0.34's blocks).
MISTRAL_FORMAT_QUANTS = ("fp8-static", "fp8-dynamic", "fp8-block")
# A release from 0.33.0 on: a difference found on 0.33 holds for the releases after it until their code (or
# fp8check) changes, and a new release is run against the same lists.
SINCE_033 = r"0\.(3[3-9]|[4-9]\d)\.\d+"
# Differences with a known reason, each listed in the output: a regular expression searched in
# "release|platform|architecture|module|vLLM's error|kv=--kv-cache-dtype" and why: vLLM's MLA prefill code, which
# fp8check does not model (it models the decode backend the selector picks), a 0.28 CPU config bug, and harness
# limits. ROCm's MLA prefill backend, which this host lacks, is a stand-in (crosscheck_model._rocm_mla_prefill).
EXPLAINED = (
    (r"^[^|]*\|[^|]*\|gpt-neo\|\(model\)\|ValueError: Model architectures \['GPTNeoForCausalLM'\] are not supported "
     r"for now\. Supported architectures: dict_keys",
     "vLLM's refusal of an architecture neither its registry nor its Transformers backend serves "
     "(registry.py _raise_for_unsupported) lists every architecture the registry holds after 'Supported "
     "architectures:' (thousands of characters, in registration order); fp8check quotes the sentence before that "
     "list and says why (layouts.transformers_refusal: GPT-Neo's transformers class is not backend-compatible)"),
    (r"^[^|]*\|[^|]*\|step-vl\|\(model\)\|.*has model type `step_vl` but Transformers does not recognize",
     "harness: StepVL's config (model_type step_vl, Step3-VL-10B) is remote code only, neither transformers 5.24 nor "
     "vLLM has a class for it, and vLLM serves it with --trust-remote-code; an offline build stops at the front "
     "door. Its tower and projector are Step-3.7's (step_vl.py PerceptionEncoder, measured on step-3.7), its text "
     "model Qwen3's (measured on qwen3)"),
    (r"^0\.28\.0\|cpu\|.*cannot import name 'compile_flash_attn_varlen_func_from_specs'",
     "vLLM 0.28 on CPU cannot build MLA attention: mla/prefill/flash_attn.py imports a name fa_utils.py defines only "
     "on CUDA, XPU and ROCm (an ImportError at construction, every MLA model, its text naming the install path); "
     "fp8check reports the decode backend CPU's selector picks and does not model MLA prefill backends"),
    (r"^0\.28\.0\|cpu\|.*IndexError: list index out of range",
     "vLLM 0.28's CPU platform check (CpuPlatform.check_and_update_config -> ModelConfig.use_mla -> "
     "_get_transformers_backend_cls) indexes an empty architectures list for a nested (vision-language) config"),
    (r"^0\.28\.0\|(xpu\|gemma-3-vision(-256)?\|(language_model\.model\.layers\.\d+\.self_attn\.attn\||\(model\)\|"
     r".*FlashAttention does not support fp8_e5m2)|rocm:gfx942\|gemma-3-vision(-256)?\|\(model\)\|"
     r".*use_mm_prefix=False)",
     "harness: vLLM <= 0.32 keeps Gemma-3's mm-prefix flag for the language model only through the cached "
     "ModelConfig.is_mm_prefix_lm (a cached_property, copied by VllmConfig.with_hf_config; the copy's own "
     "hf_config is gemma3_text, not in MM_PREFIX_LM_MODELS). `vllm serve` reads it first in "
     "EngineArgs._set_default_max_num_seqs_and_batched_tokens_args (engine/arg_utils.py, whenever "
     "--max-num-batched-tokens is not given), CUDA again in check_and_update_config; this harness builds "
     "ModelConfig / VllmConfig without EngineArgs, so on 0.28's XPU and ROCm (whose check_and_update_config do "
     "not read it) the text layers ask with use_mm_prefix=False. fp8check reports the served engine: "
     "use_mm_prefix=True (0.33's gemma3_mm.py sets text_config.is_mm_prefix_lm itself)"),
    (r"^[^|]*\|cuda:(80|89)\|gemma-3-vision(-256)?\|\(model\)\|.*No valid attention backend found for cuda with "
     r".*use_mm_prefix=True",
     "harness: vllm.vllm_flash_attn is an inert module here, so is_fa_version_supported(4) answers truthy on "
     "sm80 / sm89 and vLLM's FlashAttention omits \"partial multimodal token full attention not supported\" from "
     "the reasons; the wheel's flash_attn_interface._is_fa4_supported refuses FA4 below compute capability 9.x, so "
     "a real device lists it, as fp8check does (the selection is the same)"),
    (rf"^{SINCE_033}\|cuda:100\|gemma-3-vision(-256)?\|\(model\)\|ValueError: Causal attention backend FLASHINFER "
     r"does not accept the attention arguments required by the general backend TRITON_ATTN: '<' not supported "
     r"between instances of 'int' and 'MagicMock'",
     "harness: vLLM selected TRITON_FLASHINFER (as fp8check does) and built its CompositeAttentionImpl, whose "
     "FlashInfer impl compares a mocked FlashInfer constant; the composite re-raises that TypeError as a "
     "ValueError, which the impl stand-in (crosscheck_model._guard_attention_impls) does not replace"),
    (r"^[^|]*\|rocm:[^|]*\|(deepseek-v3\.2|glm-5)\|\(model\)\|AssertionError: WorkspaceManager not initialized",
     "harness: the ROCm sparse-MLA model class (models/deepseek_v32/amd) reserves its workspace on the device while "
     "building (init_workspace_manager is called by the GPU worker, which this harness does not start); fp8check "
     "reports ROCm's sparse backend, ROCM_AITER_MLA_SPARSE"),
    (r"^0\.34\.0\|cuda:[^|]*\|minimax-m3(-text)?\|\(model\)\|(ModuleNotFoundError: No module named '(cutlass|quack)'|"
     r"ValueError: Model architectures \['MiniMaxM3Sparse\w+'\] failed to be inspected)",
     "harness: 0.34's MiniMaxM3MLP.__init__ (models/minimax_m3/nvidia/model.py) imports nvidia/ops, whose "
     "index_decode_score.py imports the CuTe DSL packages `cutlass` and `quack`; the CUDA wheel requires them "
     "(nvidia-cutlass-dsl, quack-kernels), this environment lacks them (`cutlass` is an inert stand-in, `quack` "
     "absent), so 0.34 cannot build MiniMax-M3 on CUDA here (0.33, the same modules, is compared)"),
    (r"^0\.33\.0\|cuda:100\|minimax-m3(-text)?\|\(model\)\|ModuleNotFoundError: No module named '(cutlass|quack)'",
     "harness: on SM100 MiniMax-M3's sparse layers take the MSA attend (common/sparse_attention.py "
     "select_main_backend_and_impl_cls), whose nvidia/sparse_attention_msa.py imports the CuTe DSL package `cutlass` "
     "(nvidia-cutlass-dsl, required by the CUDA wheel, absent here); MiniMaxM3SparseMSABackend keeps the name "
     "MINIMAX_M3_SPARSE, which fp8check reports"),
    (r"^0\.33\.0\|rocm:[^|]*\|qwen4-exp(-vl)?\|\(model\)\|NotImplementedError: Qwen4Exp QSA requires FlashAttention",
     "harness: 0.33's ROCm QSA impl (models/qwen4_exp/amd/qsa.py Qwen4ExpQSAFlashAttentionImpl) needs "
     "flash_attn_varlen_func from AITER or the ROCm flash-attn package (fa_utils.py "
     "is_flash_attn_varlen_func_available), which this host lacks (as ROCm's MLA prefill, which the harness stands in "
     "for); fp8check reports the "
     "QSA layer's backend (QWEN4_EXP_QSA_TRITON), which 0.34 builds here"),
    (r"^0\.33\.0\|[^|]*\|kimi-k3\.1\|\(model\)\|ValueError: The checkpoint you are trying to load has model "
     r"type `kimi_k31`",
     "vLLM 0.33 knows neither model_type kimi_k31 (transformers_utils/config.py maps it to KimiK3Config from 0.34) nor "
     "KimiK31ForConditionalGeneration (registry.py from 0.34) and refuses the checkpoint; fp8check, reading 0.33's "
     "registry (vllm_registry.py), lays it out by guess, every module not judged and the verdict quoting that "
     "refusal (or the Transformers backend the remote code could reach, not modelled)"),
    (r"^0\.33\.0\|[^|]*\|unlimited-ocr2-text(-attn-bf16)?\|\(model\)\|ValueError: Model architectures "
     r"\['UnlimitedOCR2TextForCausalLM'\] are not supported for now",
     "registry.py registers UnlimitedOCR2TextForCausalLM from 0.34: vLLM 0.33 refuses the checkpoint; fp8check, "
     "reading 0.33's registry (vllm_registry.py), lays it out by guess, every module not judged and the verdict "
     "quoting that refusal"),
    (r"^0\.34\.0\|rocm:[^|]*\|kimi-k3\.1\|\(model\)\|\|",
     "vLLM builds Kimi-K3.1 on ROCm with Kimi-K3's amd/linear.py, which has no DSA layer: the DSA layer is a dense MLA "
     "layer with no indexer, and load_weights then looks the indexer's tensors up in params_dict unguarded (KeyError), "
     "a failure after construction that a meta-device build does not reach; fp8check predicts it for the model "
     "(Arch.unloadable) and lists those tensors as skipped"),
    (r"^0\.28\.0\|[^|]*\|(mistral-3|ministral-3-vl|mistral-large-3-hf)\|.*failed to be inspected",
     "harness: vLLM 0.28's pixtral.py imports transformers' PixtralRotaryEmbedding, which the transformers of this "
     "environment (5.x) no longer has (0.28 pins an older one): Mistral-3 is compared on 0.33 only"),
)


# Differences fp8check still has, found by this run and not fixed yet: listed (the "open" column), never hidden.
# Matched like EXPLAINED, on "release|platform|architecture|format|module|vLLM's error".
OPEN = (
    (r"^[^|]*\|[^|]*\|persimmon\|[^|]*\|model\.layers\.\d+\.self_attn\.attn\|",
     "Persimmon through the Transformers backend (no release registers PersimmonForCausalLM): its one "
     "query_key_value linear is no q / k / v triple the backend's QKVFuser fuses, so it stays a ReplicatedLinear (as "
     "fp8check lays it out) and the backend still builds an Attention at self_attn.attn from the config's geometry; "
     "fp8check's KV-cache routing finds attention layers by their QKV linear and lists none there (not yet read)"),
    (r"\|kimi-linear\|modelopt-pbwo\|[^|]*in_proj_qkvgfab\|",
     "ModelOpt PB_WO pads N up to the block (pbwo-padding): in_proj_qkvgfab's b_proj shard (one row a head) is padded "
     "in vLLM, which then picks FlashInfer-DeepGEMM / DeepGEMM; fp8check hands the unpadded N to the kernel choice"),
    (r"^0\.34\.0\|cuda:[^|]*\|kimi-linear\|w4afp8\|[^|]*block_sparse_moe\.experts\|",
     "W4AFP8 experts at TP 8 (128 intermediate columns a rank): fp8check raises CompressedTensorsW4A8Fp8MoEMethod's "
     "divisible-by-256 assertion, which 0.34 builds past (its Humming / Cutlass W4A8 experts); not yet read"),
    (r"^0\.34\.0\|rocm:[^|]*\|minimax-m3-text\|[^|]*\|[^|]*block_sparse_moe\.shared_experts\.",
     "the hand-written text checkpoint has no shared expert (synth's mixtral style) and 0.34 builds "
     "block_sparse_moe.shared_experts unconditionally (0.33: when n_shared_experts); fp8check lists what the "
     "checkpoint holds and does not report the missing weights"),
    (r"^0\.34\.0\|[^|]*\|qwen3-asr-text-type\|[^|]*\|\(model\)\|ValueError: Unrecognized model type for "
     r"subconfig: qwen3_asr_text",
     "Qwen3-ASR's thinker_config as Qwen's own config class writes it (text_config model_type qwen3_asr_text): 0.34 "
     "reads it with transformers' Qwen3ASRConfig (transformers_utils/config.py moves thinker_config's fields up and "
     "renames the audio config's type only), whose sub-config lookup refuses the text type in transformers 5.20-5.22; "
     "fp8check does not model config-class refusals and lays the checkpoint out as 0.33 builds it"),
    (r"^0\.33\.0\|[^|]*\|minimax-m3-text\|[^|]*\|\(model\)\|AttributeError: 'MiniMaxM3VLTextConfig' object has "
     r"no attribute 'rope_theta'",
     "a standalone MiniMaxM3SparseForCausalLM checkpoint on 0.33: vLLM registers config classes for minimax_m3_vl "
     "and minimax_m3_mtp only (transformers_utils/config.py), so its text model_type is read by transformers' "
     "MiniMaxM3VLTextConfig, which nvidia/model.py (written for 0.33's own MiniMaxM3TextConfig) fails on; fp8check "
     "does not model config-class refusals (the released checkpoints are the VL architecture, which agrees)"),
    (r"^0\.34\.0\|(xpu|cpu)\|minimax-m3(-text)?\|[^|]*\|\(model\)\|ModuleNotFoundError: No module named "
     r"'(cutlass|quack)'",
     "0.34's MiniMaxM3MLP.__init__ imports models/minimax_m3/nvidia/ops (which imports the CuTe DSL packages "
     "`cutlass` and `quack`) on every platform but ROCm; whether vLLM's XPU / CPU installs carry nvidia-cutlass-dsl "
     "and quack-kernels (requirements of the CUDA wheel) is not read, so fp8check predicts the build vLLM 0.33 "
     "makes there"),
    (r"^0\.33\.0\|[^|]*\|zaya\|",
     "ZAYA1 on 0.33: the release has no zaya.py and registers no ZayaForCausalLM; with a transformers that knows the "
     "zaya model type (the harness's) registry.py _try_resolve_transformers builds it through the Transformers "
     "backend's TransformersMoEForCausalLM (every nn.Linear a ReplicatedLinear with the quant config: ZayaConfig has "
     "no base_model_tp_plan), which fp8check lays out (transformers_moe_arch) but for CCA's attention: no QKVFuser "
     "fuses its qkv_proj.{q_proj, k_proj, v_proj_*}, so self_attn.o_proj stays replicated where fp8check's backend "
     "rule makes it row, and the Attention base.py builds at self_attn.attn is not found from a fused QKV"),
    (r"\|mistral-large-4-hf\|",
     "Mistral-Large-4 in HF format (transformers' mistral_large4, which 5.22.2 has and 5.21.0 lacks; tensors under "
     "Mistral's names): no release registers MistralLarge4ForConditionalGeneration (0.34's MistralLarge4ForCausalLM "
     "is built from the Mistral-format params.json only: the mistral-large-4-fmt family). vLLM refuses the config "
     "when its transformers does not know the model type (the harness's 5.20.2; always on 0.31-0.33, whose pins end below 5.21) and with 5.22 "
     "resolves it to the Transformers backend (registry.py _try_resolve_transformers); fp8check models neither and "
     "lays the checkpoint out by guess (not judged)"),
    (r"\|step-(3\.7|5)\|modelopt-(pcpt|pbwo)\|(language_model\.)?model\.layers\.2\.moe\.experts\|",
     "Step-3.5's / Step-5's swiglustep experts (the layer whose swiglu_limits entry is set) with ModelOpt per-channel "
     "/ PB_WO scales: fp8check reports the per-tensor expert scale ModelOptFp8MoEMethod loads, a post-load prediction "
     "it makes for the SiLU experts beside them too (counted so there); these experts' backend is not judged "
     "(activation swiglustep), so the row cannot be a post-load prediction and is listed"),
    (r"^[^|]*\|cpu\|step-3\.7\|fbgemm-fp8\|\(model\)\|NotImplementedError: No Unquantized MoE backend",
     "FBGEMM leaves the experts unquantized, and on CPU no unquantized MoE backend runs Step-3.5's swiglustep "
     "experts; fp8check names non-SiLU experts without judging their backend, so it reports the linears' post-load "
     "Marlin failure instead of this refusal"),
    (r"^0\.33\.0\|cpu\|minimax-m3\|fbgemm-fp8\|\(model\)\|NotImplementedError: No Unquantized MoE backend "
     r"supports the deployment configuration",
     "FBGEMM has no MoE method, so MiniMax-M3's SwiGLU-OAI experts are unquantized, and 0.33's CPU unquantized MoE "
     "oracle finds no backend for them while building; fp8check does not judge those experts (activation "
     "swigluoai_uninterleave) and reports FBGEMM's post-load Marlin repack failure instead (not yet read)"),
    (r"\|gpt-oss\|modelopt-(pcpt|pbwo)\|.*\.experts\|",
     "gpt-oss's ModelOpt per-channel / PB_WO experts: fp8check's expert-scale shape check raises an error on them "
     "(their backend is not judged, activation swigluoai); whether gpt_oss.py's weight loader accepts those scales "
     "is not yet read"),
    (r"\|(nemotron-h|nemotron-nano-vl|nemotron-omni)\|modelopt-(pcpt|pbwo)\|[^|]*\.mixer\.experts\|",
     "Nemotron-H's non-gated experts (up / down only, relu2_no_mul) with ModelOpt per-channel / PB_WO scales: "
     "fp8check's expert-scale shape check raises an error on them (their backend is not judged), where vLLM's "
     "ModelOptFp8MoEMethod builds FlashInfer CUTLASS experts; whether its weight loader accepts those scales on a "
     "one-shard w13 is not yet read"),
    (rf"^{SINCE_033}\|cuda:(90|100)\|(nemotron-h|nemotron-nano-vl|nemotron-omni)\|modelopt-pbwo\|"
     r"[^|]*\.mixer\.in_proj\|",
     "ModelOpt PB_WO pads a weight's N up to the block from 0.29 (pbwo-padding): Nemotron-H's Mamba in_proj ([I, I, "
     "GN, GN, H] rows, H not a whole block) is padded, and vLLM picks FlashInfer-DeepGEMM where fp8check hands the "
     "unpadded N to the kernel choice (Cutlass)"),
    (rf"^{SINCE_033}\|cuda:(90|100)\|[^|]*\|modelopt-pbwo\|.*\.gate\|",
     "ModelOpt PB_WO pads a weight's N up to the block from 0.29 (pbwo-padding); fp8check does not hand the padded "
     "N to the kernel choice, so a layer narrower than 128 (an 8-expert router left out of the ignore list) gets "
     "Cutlass where vLLM picks FlashInfer-DeepGEMM / DeepGEMM"),
)

# ninth round (fam-mma)
EXPLAINED += (
    (r"^0\.34\.0\|[^|]*\|minicpm-ocr\|\(model\)\|.*has model type `minicpm_ocr` but Transformers does not "
     r"recognize",
     "harness: MiniCPM-OCR's config class (transformers' MiniCPMOcrConfig, model_type minicpm_ocr) is in transformers "
     "5.22, which vLLM 0.34 allows (< 5.23), not in the harness's 5.20.2, so the build stops at the front door; its "
     "modules are MiniCPM-V 4.6's (minicpm_ocr.py subclasses minicpmv4_6.py's class, only its drop_vision_last_layer "
     "fixed false), measured on minicpm-v-4.6 / -4.7"),
)
OPEN += (
    (r"^0\.33\.0\|[^|]*\|minicpm-ocr\|[^|]*\|\(model\)\|.*has model type `minicpm_ocr` but Transformers does not "
     r"recognize",
     "vLLM 0.33's transformers pin (< 5.21) has no minicpm_ocr config class: it refuses a MiniCPM-OCR checkpoint at "
     "the front door though its registry lists MiniCPMOcrForConditionalGeneration; fp8check does not model "
     "config-class refusals and lays it out as 0.34 builds it"),
)


def explained(release: str, platform: str, family: str, row, kv_cache_dtype: str = "auto") -> str | None:
    where = f"{release}|{platform}|{family}|{row.name}|{row.theirs.get('error') or ''}|kv={kv_cache_dtype}"
    return next((why for pattern, why in EXPLAINED if re.search(pattern, where)), None)


def still_open(release: str, platform: str, family: str, quant: str, row, kv_cache_dtype: str = "auto"
               ) -> str | None:
    where = f"{release}|{platform}|{family}|{quant}|{row.name}|{row.theirs.get('error') or ''}|kv={kv_cache_dtype}"
    return next((why for pattern, why in OPEN if re.search(pattern, where)), None)


# Qwen-VL checkpoints ship their image preprocessing; 0.28's qwen2_5_vl.py reads it while building (vision.py).
QWEN_PREPROCESSOR = {"image_processor_type": "Qwen2VLImageProcessor", "do_rescale": True, "do_normalize": True,
                     "rescale_factor": 1 / 255, "image_mean": [0.48145466, 0.4578275, 0.40821073],
                     "image_std": [0.26862954, 0.26130258, 0.27577711], "patch_size": 14, "merge_size": 2,
                     "temporal_patch_size": 2}


def write_word_tokenizer(folder: str, size: int) -> None:
    """A word-level tokenizer of `size` distinct tokens (t0, t1, ...): DeepSeek-V4.1's Engram builds its n-gram hash
    from the checkpoint's tokenizer while the model is built (models/deepseek_v41/common/engram.py NgramHashState:
    build_compressed_token_map must give engram_compressed_vocab_size ids, which distinct lowercase words do)."""
    vocab = {f"t{i}": i for i in range(size)}
    tokenizer = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
                 "pre_tokenizer": {"type": "Whitespace"}, "post_processor": None, "decoder": None,
                 "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "t0"}}
    for name, doc in (("tokenizer.json", tokenizer), ("tokenizer_config.json",
                                                      {"tokenizer_class": "PreTrainedTokenizerFast"})):
        with open(os.path.join(folder, name), "w", encoding="utf-8") as fh:
            json.dump(doc, fh)


def write_processor(folder: str, size: int, processor: str, image_processor: str,
                    special: dict[str, str] | None = None) -> None:
    """transformers' processor of a vision-language class the Transformers backend serves, with its image processor's
    defaults and a word-level tokenizer of `size` tokens (`special`: the named tokens its processor reads off the
    tokenizer): vLLM's front door asks it which modalities the model takes (transformers/multimodal.py
    MultiModalProcessingInfo.get_supported_mm_limits, from ModelConfig's _supports_multimodal_inputs)."""
    write_word_tokenizer(folder, size)
    if special:
        with open(os.path.join(folder, "tokenizer_config.json"), "w", encoding="utf-8") as fh:
            json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "extra_special_tokens": special}, fh)
    with open(os.path.join(folder, "processor_config.json"), "w", encoding="utf-8") as fh:
        json.dump({"processor_class": processor, "image_processor": {"image_processor_type": image_processor}}, fh)


def served(quant: str) -> tuple[str | None, bool]:
    """(--quantization, --allow-deprecated-quantization) a synth quant name is served with on both sides."""
    return quant.partition("+")[2] or None, quant.partition(":")[0] in DEPRECATED_QUANTS


def write(tmp: str, family: str, quant: str) -> str:
    """The family's checkpoint in `quant` ("QUANT:kv-STRATEGY": with that format's KV cache scales)."""
    spec_fields, extra = FAMILIES[family]
    stored, _, kv = quant.partition(":")
    spec = Spec(**{**BASE, **spec_fields, "quant": None if stored.startswith("bf16+") else stored,
                   "kv_cache": kv.removeprefix("kv-") or None, "extra_config": extra})
    folder = write_checkpoint(os.path.join(tmp, f"{family}-{quant.replace(':', '-')}"), spec)
    engram_vocab = (extra.get("text_config") or extra).get("engram_compressed_vocab_size")
    if engram_vocab:
        write_word_tokenizer(folder, engram_vocab)
    if family in TOKENIZER_FAMILIES:
        write_word_tokenizer(folder, spec.vocab)
    if family in ADDED_TOKENS:
        with open(os.path.join(folder, "added_tokens.json"), "w", encoding="utf-8") as fh:
            json.dump(ADDED_TOKENS[family], fh)
    processor = {"qwen2_5_vl": "Qwen2_5_VLProcessor", "qwen3_vl": "Qwen3VLProcessor"}.get(spec.vision or "") \
        or PROCESSOR_FAMILIES.get(family)
    if family in TRANSFORMERS_PROCESSORS:
        write_processor(folder, spec.vocab, *TRANSFORMERS_PROCESSORS[family])
    if processor:
        with open(os.path.join(folder, "preprocessor_config.json"), "w", encoding="utf-8") as fh:
            json.dump({**QWEN_PREPROCESSOR, "processor_class": processor}, fh)
    return folder


def fp8check_side(folder: str, profile, platform: str, tp: int, ep: bool, quant: str,
                  kv_cache_dtype: str = "auto", moe_backend: str = "auto") -> tuple[dict, tuple[str, ...]]:
    quantization, deprecated = served(quant)
    options = InspectOptions(platform=parse_platform(platform), profile=profile, tp=tp, ep=ep,
                             quantization=quantization, allow_deprecated_quantization=deprecated,
                             kv_cache_dtype=kv_cache_dtype, moe_backend=moe_backend)
    checkpoint = open_local(folder)
    try:  # a refused front door is in the report's errors, with the model-level ones (--ep on a dense model)
        report = inspect_checkpoint(checkpoint, options)
    except InputError as exc:
        return {}, (str(exc),)
    return our_modules(report), tuple(report.errors)


def run_release(release: str, platform: str, cases: list[dict]) -> tuple[dict, dict[str, dict]]:
    argv = [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "crosscheck_model.py"), platform,
            "--stub"]
    proc = subprocess.run(argv, input=json.dumps(cases), capture_output=True, text=True, env=release_env(release),
                          timeout=3600)
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"vLLM {release} on {platform} produced no result:\n{proc.stderr[-3000:]}")
    return lines[0]["stubs"], {r["id"]: r for r in lines[1:]}


def grid(families: list[str], quants: list[str], kv_cache_dtypes: list[str]) -> list[tuple]:
    """(family, quant, --kv-cache-dtype, TP, --ep) of every case: PARALLEL x auto on every family and format,
    KV_PARALLEL x each KV cache dtype on the KV axis (KV_FAMILIES x KV_QUANTS)."""
    cases = {(f, q, "auto", tp, ep) for f in families for q in _family_quants(f, quants) for tp, ep in PARALLEL}
    cases |= {(f, q, kv, tp, ep) for f in families if f in KV_FAMILIES for q in KV_QUANTS
              for kv in kv_cache_dtypes for tp, ep in KV_PARALLEL}
    return sorted(cases)


def _family_quants(family: str, quants: list[str]) -> tuple[str, ...] | list[str]:
    return MISTRAL_FORMAT_QUANTS if FAMILIES[family][0].get("mistral_format") else quants


def whole_model_suite(releases: list[str], platforms: list[str], families: list[str], quants: list[str],
                      kv_cache_dtypes: list[str], jobs: int = 2, stand_in: str | None = None,
                      moe_backend: str = "auto") -> Suite:
    """Every case of the grid on every release and platform (both sides under `moe_backend`, vLLM's
    --moe-backend); passes when every difference is listed (EXPLAINED, OPEN) or a known one (post-load prediction,
    not judged, not compared)."""
    tmp = tempfile.mkdtemp(prefix="fp8check-whole-")
    cells = grid(families, quants, kv_cache_dtypes)
    folders = {(f, q): write(tmp, f, q) for f, q in {cell[:2] for cell in cells}}
    ours: dict[tuple, tuple] = {}
    jobs_ = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for release in releases:
            profile = profile_for(release, stand_in)
            for pl in platforms:
                cases = []
                for family, quant, kv, tp, ep in cells:
                    key = (release, pl, family, quant, kv, tp, ep)
                    ours[key] = fp8check_side(folders[(family, quant)], profile, pl, tp, ep, quant, kv, moe_backend)
                    quantization, deprecated = served(quant)
                    cases.append({"id": "|".join(map(str, key)), "folder": folders[(family, quant)], "tp": tp,
                                  "ep": ep, "quantization": quantization, "allow_deprecated": deprecated,
                                  "kv_cache_dtype": kv, "moe_backend": moe_backend, "names": sorted(ours[key][0]),
                                  "attention_names": sorted(name for name, row in ours[key][0].items()
                                                            if row["kind"] == "attention"),
                                  "tokenizer": family in TOKENIZER_FAMILIES or family in TRANSFORMERS_PROCESSORS})
                jobs_[(release, pl)] = pool.submit(run_release, release, pl, cases)
    table: dict[tuple[str, str], Counter] = defaultdict(Counter)
    attention: dict[tuple[str, str, str], Counter] = defaultdict(Counter)  # (release, platform, kv) -> verdicts
    differences: list[Difference] = []
    dump, stubs = [], {}
    stand_ins: Counter = Counter()  # attention impls built as stand-ins, by the reason their constructor gave
    for (release, pl), job in jobs_.items():
        try:
            stubs, theirs = job.result()
        except RuntimeError as exc:
            differences.append(did_not_start("whole model", release, pl, exc))
            continue
        for key, (modules, errors) in ours.items():
            if key[:2] != (release, pl):
                continue
            _, _, family, quant, kv, tp, ep = key
            answer = theirs["|".join(map(str, key))]
            stand_ins.update(answer.get("stand_in_impls", ()))
            rows = compare_model(modules, errors, answer)
            counts = table[(family, release)]
            for row in rows:
                why = explained(release, pl, family, row, kv) if row.verdict == "differs" else None
                if why:
                    row = row._replace(verdict="explained", reason=why)
                unfixed = still_open(release, pl, family, quant, row, kv) if row.verdict == "differs" else None
                if unfixed:
                    row = row._replace(verdict="open", reason=unfixed)
                counts["modules"] += 1
                counts[row.verdict] += 1
                if row.kind == "attention" or (row.kind == "model" and _attention_error(row)):
                    attention[(release, pl, kv)]["layers"] += 1
                    attention[(release, pl, kv)][row.verdict] += 1
                dump.append({"case": list(key), **row._asdict()})
                if row.verdict == "differs":
                    differences.append(Difference("whole model", release, pl,
                                                  f"{family} {quant} kv={kv} TP{tp}{' EP' if ep else ''}", row.name,
                                                  row.kind, row.differs, _cell(row.ours), _cell(row.theirs),
                                                  detail=_error_detail(row)))
    lines = ["| architecture | release | modules | agree | post-load prediction | not judged | explained | open "
             "| not compared | differs | % agree |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (family, release), c in sorted(table.items()):
        compared = c["modules"] - c["not compared"] - c["explained"] - c["not judged"]
        agreed = 100 * (c["agree"] + c["post-load prediction"]) / max(compared, 1)
        lines.append(f"| {family} | {release} | {c['modules']} | {c['agree']} | {c['post-load prediction']} | "
                     f"{c['not judged']} | {c['explained']} | {c['open']} | {c['not compared']} | {c['differs']} | "
                     f"{agreed:.1f} |")
    lines += ["", "Attention layers (KV cache dtype, KV method, backend; a build vLLM refused in attention is one "
              "row):",
              "", "| release | platform | --kv-cache-dtype | layers | agree | post-load prediction | explained | open "
              "| differs |", "|---|---|---|---|---|---|---|---|---|"]
    for (release, pl, kv), c in sorted(attention.items()):
        lines.append(f"| {release} | {pl} | {kv} | {c['layers']} | {c['agree']} | {c['post-load prediction']} | "
                     f"{c['explained']} | {c['open']} | {c['differs']} |")
    out = ("\n".join(lines) + "\n\nExplained differences:\n" + "\n".join(f"- {why}" for _, why in EXPLAINED)
           + "\n\nOpen differences (fp8check, listed until fixed):\n" + "\n".join(f"- {why}" for _, why in OPEN)
           + "\n\nAttention impls built as stand-ins (their constructor needs a stub), cases by reason:\n"
           + ("\n".join(f"- {n} cases: {why}" for why, n in stand_ins.most_common()) or "- none")
           + difference_table(differences, "scheme / kernel / backend"))
    return Suite(out, differences, stubs, dump, not differences)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--releases", default="0.28.0,0.33.0")
    parser.add_argument("--platforms", default=",".join(PLATFORMS))
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--quants", default=",".join(QUANTS + FORMAT_QUANTS), help="synth quant names; bf16+M: "
                        "a bf16 checkpoint under --quantization M")
    parser.add_argument("--kv-cache-dtypes", default=",".join(KV_CACHE_DTYPES),
                        help="--kv-cache-dtype values of the KV axis (KV_FAMILIES x KV_QUANTS); others run auto")
    parser.add_argument("--moe-backend", default="auto", help="vLLM's --moe-backend on both sides (every case)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--markdown", help="append the tables to this file")
    parser.add_argument("--dump", help="write every compared row to this JSON file")
    add_stand_in(parser)
    args = parser.parse_args()
    suite = whole_model_suite(args.releases.split(","), args.platforms.split(","), args.families.split(","),
                              args.quants.split(","), args.kv_cache_dtypes.split(","), args.jobs, args.stand_in,
                              args.moe_backend)
    publish(suite.tables, suite.stubs, suite.dump, args.dump, args.markdown)
    return 0 if suite.passed else 1


# vLLM's refusals raised while building an attention layer: its backend selection, the fp8_e5m2 check of
# attention.py, an impl's constructor (the XPU / Triton / CPU messages).
_ATTENTION_ERRORS = re.compile(r"attention backend|kv-cache|kv_cache|KV cache|Attention|MLA|fp8_e5m2|head size",
                               re.IGNORECASE)


def _attention_error(row) -> bool:
    return bool(_ATTENTION_ERRORS.search(row.theirs.get("error") or ""))


def _error_detail(row) -> str:
    """For a model both sides refuse in other words: where fp8check's closest error parts from vLLM's."""
    if "error text" not in row.differs:
        return ""
    theirs = vllm_error(row.theirs["error"])
    return divergence(max(row.ours["errors"], key=lambda e: len(os.path.commonprefix([e, theirs]))), theirs)


def _cell(row: dict) -> str:
    if row.get("kind") == "attention":
        return " / ".join(str(row.get(k) or "-") for k in ("kv_cache_dtype", "scheme", "backend")) + (
            f" / {row['error'][:120]}" if row.get("error") else "")
    if "error" in row and row.get("error") and "scheme" not in row:
        return row["error"][:160]
    if "errors" in row:
        return "; ".join(e[:100] for e in row["errors"]) or "-"
    return " / ".join(str(row.get(k) or "-") for k in ("scheme", "kernel", "backend")) + (
        f" / {row['error'][:120]}" if row.get("error") else "")


if __name__ == "__main__":
    raise SystemExit(main())
