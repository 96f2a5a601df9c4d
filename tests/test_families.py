"""Every model family of fp8check.core.model.layouts, as a tiny checkpoint: the layers vLLM builds, their parallel
styles, which are unquantized or skipped, and the vLLM model file each layout came from."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.checkpoint.local import open_local
from fp8check.core.model.layouts import ARCHITECTURES, TP_PLANS, model_arch
from fp8check.core.model.modules import build_layout
from fp8check.core.model.sharding import rank_reads
from fp8check.core.model.tp import tp_layout
from fp8check.core.records import InspectOptions
from fp8check.core.report.verdicts import inspect_verdict
from fp8check.core.routing.attention import attention_layers
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import apply_assumptions, parse_platform
from fp8check.core.targets.profiles import LATEST, select_profile
from fp8check.synth import (Spec, alice_ai_tensors, bailing_tensors, bailing_v3_vision_tensors, deepseek_ocr_tensors,
                            deepseek_v4_vision_tensors, deepseek_v41_tensors, deepseek_vl2_tensors,
                            gemma3n_tower_tensors, inkling_tensors, intern_vit_tensors, internlm2_tensors,
                            k2_horizon_tensors, kimi_k3_tensors, minicpmo_audio_tensors, minicpmv_vision_tensors,
                            moonvit_tensors, nemotron_vl_tensors, ovis2_5_vision_tensors, ovis_aimv2_tensors,
                            phi3v_vision_tensors, phi4mm_tensors, phi4v_vision_tensors, tensor_specs,
                            write_safetensors)

QWEN_MOE = dict(experts=4, head_dim=128)
# Qwen3-Next / Qwen3.5, written by transformers' own classes: one gated-delta-net layer, one full-attention layer;
# in_proj_b / in_proj_a (4 rows) left out as Qwen's FP8 exports leave them (no 128-block fits).
GDN = dict(linear_num_key_heads=2, linear_num_value_heads=4, linear_key_head_dim=128, linear_value_head_dim=128,
           layer_types=["linear_attention", "full_attention"])
GDN_MOE = dict(GDN, num_experts=4, moe_intermediate_size=256, shared_expert_intermediate_size=256,
               num_experts_per_tok=2)
HF = dict(transformers=True, head_dim=128, ignore=("lm_head", "re:.*in_proj_(b|a|ba)$"))
# Qwen4-Exp: a gated-delta-net layer with a PLE block (ple_layer_ids are 1-based), a QSA layer (the indexer's 4 heads
# of 128), 4 hyper-connection streams; the hyper-connections (vLLM builds them with quant_config=None) and the PLE
# n-gram tables left BF16.
QWEN4_EXP = dict(GDN_MOE, hc_count=4, hc_lowrank=64, ple_layer_ids=[1], ngram_vocab_size_base=1000, split_ngram_parts=1,
                 indexer_n_heads=4, indexer_kv_heads=1, indexer_head_dim=128, indexer_budget=64,
                 indexer_compress_ratio=4, output_gate_type="silu", pad_token_id=0, bos_token_id=1, eos_token_id=2)
QWEN4_EXP_SPEC = dict(architecture="Qwen4ExpForCausalLM", model_type="qwen4_exp_text", extra_config=QWEN4_EXP,
                      **dict(HF, ignore=("lm_head", "re:.*in_proj_(b|a)$", "re:.*hyper_connection",
                                         "re:.*ngram_embedding")))
# Command-R with QK-norm (per-head LayerNorms) and a stored lm_head; Command-A / R7B: 3 sliding layers : 1 global, tied.
COHERE_SPEC = dict(architecture="CohereForCausalLM", model_type="cohere", extra_config={"use_qk_norm": True}, **HF)
COHERE2_SPEC = dict(architecture="Cohere2ForCausalLM", model_type="cohere2", layers=4, tie_embeddings=True,
                    extra_config={"sliding_window": 512}, **HF)
# Command-A+ (Cohere2-MoE): a dense-prefix layer of its own width, then MoE layers (sigmoid routing, a shared expert);
# Cohere2MoeConfig fills layer_types: three sliding layers, one global.
COHERE2_MOE = dict(intermediate_size=256, prefix_dense_intermediate_size=1024, num_experts=4, num_experts_per_tok=2,
                   num_shared_experts=1, expert_selection_fn="sigmoid", sliding_window=512,
                   mlp_layer_types=["dense", "sparse", "sparse", "sparse"], bos_token_id=1, eos_token_id=2)
COHERE2_MOE_SPEC = dict(architecture="Cohere2MoeForCausalLM", model_type="cohere2_moe", layers=4, tie_embeddings=True,
                        extra_config=COHERE2_MOE, **HF)
# Command-A-Vision: a SigLIP tower (its pooling head saved), the SwiGLU projector stored BF16, Cohere2's text model.
# Tied embeddings (the config class's default): a stored top-level lm_head is a name vLLM's loader refuses.
COHERE2_VISION = dict(architecture="Cohere2VisionForConditionalGeneration", model_type="cohere2_vision", **dict(
    HF, ignore=("lm_head", r"re:^model\.multi_modal_projector\.")), tie_embeddings=True, extra_config={
    "text_config": dict(model_type="cohere2", hidden_size=256, intermediate_size=512, num_hidden_layers=4,
                        num_attention_heads=4, num_key_value_heads=2, head_dim=128, vocab_size=1000, sliding_window=512,
                        pad_token_id=0, bos_token_id=1, eos_token_id=2),
    "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 256, "intermediate_size": 1024,
                      "num_hidden_layers": 1, "num_attention_heads": 4, "image_size": 224, "patch_size": 14},
    "downsample_factor": 2, "alignment_intermediate_size": 1024, "image_token_id": 5})
# Nemotron-NAS (remote code; Llama's names per block_configs): 2 KV heads and ffn_mult 2.625 (448 -> 512 wide), a
# no-op attention with ffn_mult 1.3125 (256), 1 KV head with a no-op FFN, 4 KV heads with intermediate_size 768.
NEMOTRON_NAS_BLOCKS = [
    {"attention": {"no_op": False, "n_heads_in_group": 2}, "ffn": {"no_op": False, "ffn_mult": 2.625}},
    {"attention": {"no_op": True, "n_heads_in_group": None}, "ffn": {"no_op": False, "ffn_mult": 1.3125}},
    {"attention": {"no_op": False, "n_heads_in_group": 4}, "ffn": {"no_op": True}},
    {"attention": {"no_op": False, "n_heads_in_group": 1}, "ffn": {"no_op": False, "intermediate_size": 768}}]
NEMOTRON_NAS_SPEC = dict(architecture="DeciLMForCausalLM", model_type="nemotron-nas", names="decilm", layers=4,
                         head_dim=128, extra_config={"block_configs": NEMOTRON_NAS_BLOCKS})
# The eighth round's text families. Phi-3.5-MoE (transformers' PhimoeForCausalLM): w1 / w3 / w2 experts.
PHIMOE_SPEC = dict(architecture="PhiMoEForCausalLM", model_type="phimoe", transformers=True, head_dim=128,
                   extra_config=dict(pad_token_id=0, bos_token_id=1, eos_token_id=2, num_local_experts=4,
                                     num_experts_per_tok=2, intermediate_size=256))
# DeepSeek-MoE v1 (remote code, model_type deepseek): MHA, a dense layer 0, softmax-routed experts, a shared expert.
DEEPSEEK_MOE_SPEC = dict(architecture="DeepseekForCausalLM", model_type="deepseek", head_dim=128, moe_style="deepseek",
                         experts=4, shared_experts=1, first_k_dense=1,
                         extra_config=dict(num_experts_per_tok=2, norm_topk_prob=False))
# ChatGLM / GLM-4-9B (vLLM's ChatGLMConfig; synth's names="chatglm"): 2 multi-query groups of 128.
CHATGLM = dict(num_layers=2, padded_vocab_size=1000, ffn_hidden_size=512, kv_channels=128, multi_query_attention=True,
               multi_query_group_num=2, add_qkv_bias=True, seq_length=4096, original_rope=True)
CHATGLM_SPEC = dict(architecture="ChatGLMModel", model_type="chatglm", names="chatglm", text_prefix="transformer",
                    embedding="embedding.word_embeddings", head="transformer.output_layer", head_dim=128,
                    ignore=("transformer.output_layer",), extra_config=CHATGLM)
# Solar Pro (remote code): Llama's names, bskcn skip connections (no linears).
SOLAR_SPEC = dict(architecture="SolarForCausalLM", model_type="solar", head_dim=128,
                  extra_config=dict(bskcn_1=[0], bskcn_2=[0], bskcn_3=[1], bskcn_4=[1], bskcn_tv=[0.9, 0.8]))
# PLaMo-3 (remote code; synth's names="plamo3"): three layers, every second one full attention, a 64-token window.
PLAMO3_SPEC = dict(architecture="Plamo3ForCausalLM", model_type="plamo3", names="plamo3", layers=3, head_dim=128,
                   extra_config={"window_size": 64, "sliding_window_pattern": 2})
# DeepSeek-V3.2 / GLM-5: MLA + MoE + the sparse-attention indexer (weights_proj BF16 as released).
DSA = dict(num_hidden_layers=2, hidden_size=512, intermediate_size=1024, moe_intermediate_size=256,
           first_k_dense_replace=1, num_attention_heads=4, num_key_value_heads=4, q_lora_rank=256, kv_lora_rank=512,
           qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=4, n_shared_experts=1,
           num_experts_per_tok=2, n_group=1, topk_group=1, norm_topk_prob=True, scoring_func="sigmoid",
           topk_method="noaux_tc", index_topk=2048, index_n_heads=4, index_head_dim=128, vocab_size=1000)
DSA_SPEC = dict(transformers=True, hidden=512, quant="fp8-block", ignore=(
    "lm_head", "model.layers.0.self_attn.indexer.weights_proj", "model.layers.1.self_attn.indexer.weights_proj"))
# DeepSeek-V4 (DeepSeek's own tensor names, FP8 experts): a sliding, a compressed-sparse (indexer) and a heavily
# compressed layer, hash-routed then top-k MoE; the head, routers, indexer weights_proj and compressors BF16.
DSV4 = dict(num_hidden_layers=3, hidden_size=512, moe_intermediate_size=256, num_attention_heads=4,
            num_key_value_heads=1, head_dim=512, q_lora_rank=256, o_groups=2, o_lora_rank=256, index_n_heads=4,
            index_head_dim=128, index_topk=64, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2,
            topk_method="noaux_tc", sliding_window=128, num_nextn_predict_layers=1, expert_dtype="fp8",
            layer_types=["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"],
            mlp_layer_types=["hash_moe", "moe", "moe"], vocab_size=1000)
DSV4_SPEC = dict(transformers=True, hidden=512, ignore=("head", r"re:.*\.ffn\.gate$", r"re:.*\.indexer\.weights_proj$",
                                                         r"re:.*\.compressor\.w(kv|gate)$"))
# DeepSeek-V4 with a vision tower (Flash-Vision-Exp's flat vision_* keys): the tower and aligner BF16.
DSV4_VISION = dict(vision_n_layers=1, vision_dim=256, vision_n_heads=4, vision_inter_dim=512, vision_patch_size=14,
                   vision_downsample_ratio=2)
DSV4_VL_SPEC = dict(DSV4_SPEC, ignore=(*DSV4_SPEC["ignore"], r"re:(vision|aligner)\."),
                    extra_tensors=deepseek_v4_vision_tensors(512, DSV4_VISION))
# DeepSeek-V4.1 (text_config and vision_config nested): a sliding layer, a ratio-2 KV source with an indexer owning
# wk and an Engram, a ratio-2 consumer with its own indexer (no wk), a ratio-1 KV source (a compressor without
# wgate) with an indexer owning wk.
DSV41_TEXT = dict({k: v for k, v in DSV4.items() if k not in ("layer_types", "mlp_layer_types")},
                  model_type="deepseek_v41", num_hidden_layers=4, compress_ratios=[0, 2, 2, 1],
                  kv_source_layer_ids=[1, 3], index_source_layer_ids=[1, 2, 3], qk_rope_head_dim=64, hc_mult=4,
                  engram_layer_ids=[1], engram_num_embeddings=[8192], engram_max_ngram_size=3, engram_n_heads=2,
                  engram_head_dim=64, engram_compressed_vocab_size=1024, engram_pad_token_id=0,
                  engram_vocab_size=1024)
DSV41 = dict(hidden_size=512, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=1, head_dim=512,
             vocab_size=1000, text_config=DSV41_TEXT,
             vision_config=dict(num_hidden_layers=1, hidden_size=256, num_attention_heads=4, intermediate_size=512,
                                patch_size=14, downsample_ratio=2))
DSV41_SPEC = dict(DSV4_SPEC, layers=4, ignore=(*DSV4_VL_SPEC["ignore"], r"re:.*\.indexer\.wk$"),
                  extra_tensors={**deepseek_v41_tensors(DSV41_TEXT),
                                 **deepseek_v4_vision_tensors(512, DSV4_VISION, ("start", "end", "newline"))})
# HY-V3: a dense layer, then a MoE layer (router stored as mlp.router.gate, shared expert mlp.shared_mlp); the keys
# vLLM's hy_v3.py reads beside transformers' (expert_hidden_dim, first_k_dense_replace, route_norm).
HYV3 = dict(num_hidden_layers=2, num_experts=4, num_experts_per_tok=2, num_shared_experts=1, moe_intermediate_size=256,
            expert_hidden_dim=256, first_k_dense_replace=1, mlp_layer_types=["dense", "sparse"], route_norm=True,
            qk_norm=True)
# Arcee Trinity: a dense layer, then a MoE layer (router stored as mlp.router.gate, one shared expert), a gated
# attention (self_attn.gate_proj) on each; the routing keys afmoe.py reads bare (score_func, route_norm, n_group).
AFMOE = dict(num_hidden_layers=2, num_dense_layers=1, num_experts=4, num_experts_per_tok=2, num_shared_experts=1,
             moe_intermediate_size=256, layer_types=["sliding_attention", "full_attention"], sliding_window=512,
             score_func="sigmoid", route_norm=True, n_group=1, topk_group=1)
# LFM2 (head size hidden_size // heads = 128): a short-convolution layer, then an attention layer; intermediate_size
# 768 is auto-adjusted to a 512-wide MLP (2 / 3, rounded up to block_multiple_of). LFM2-MoE: a dense layer, then a
# MoE layer; LFM3: a convolution layer and a full-attention layer with the per-head output gate.
LFM2 = dict(transformers=True, hidden=512, heads=4, kv_heads=2, tie_embeddings=True)
LFM2_LAYERS = dict(layer_types=["conv", "full_attention"], conv_L_cache=3, block_dim=512, conv_dim=512)
LFM2_MOE = dict(LFM2_LAYERS, intermediate_size=512, num_dense_layers=1, num_experts=4, num_experts_per_tok=2,
                moe_intermediate_size=256)
LFM3 = dict(layer_types=["conv", "full_attention"], conv_L_cache=3, sliding_window=512, pad_token_id=0,
            bos_token_id=1, eos_token_id=2)
# HY-V4: a dense-MLA layer with a dense MLP, a sparse-MLA (indexer) layer with a MoE; gated MLA, learnable sinks and
# hyper-connections (vLLM's HYV4Config defaults); the indexer's weights_proj BF16 (fp32 in transformers' class).
HYV4 = dict(num_hidden_layers=2, hidden_size=512, intermediate_size=1024, moe_intermediate_size=256,
            num_attention_heads=4, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2, q_lora_rank=256,
            kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, index_topk=2048,
            index_n_heads=4, index_head_dim=128, mlp_layer_types=["dense", "sparse"],
            layer_types=["full_attention", "indexed_attention"], indexer_types=["full", "full"], hc_mult=4,
            vocab_size=1000, pad_token_id=0, bos_token_id=1, eos_token_id=2)
HYV4_SPEC = dict(architecture="HYV4ForCausalLM", model_type="hy_v4", transformers=True, hidden=512, extra_config=HYV4,
                 ignore=("lm_head", r"re:.*\.indexer\.weights_proj$"))
# dots3-note (its released, flat config.json): a DSA layer with a dense MLP, then a sliding (SWA) layer with a MoE;
# head-wise gates (g_proj: one row per head), the SWA's own MLA sizes (swa_*); indexer wk / weights_proj stored FP8.
DOTS3 = dict(num_hidden_layers=2, hidden_size=512, intermediate_size=1024, moe_intermediate_size=256,
             moe_shared_expert_intermediate_size=256, first_k_dense_replace=1, num_attention_heads=4,
             num_key_value_heads=4, q_lora_rank=256, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64,
             v_head_dim=128, n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2, n_group=1, topk_group=1,
             norm_topk_prob=True, scoring_func="sigmoid", topk_method="noaux_tc", index_topk=2048, index_n_heads=4,
             index_head_dim=128, layer_types=["full_attention", "sliding_attention"], swa_num_attention_heads=4,
             swa_num_key_value_heads=4, swa_q_lora_rank=256, swa_kv_lora_rank=1024, swa_head_dim=256,
             swa_qk_nope_head_dim=192, swa_qk_rope_head_dim=64, swa_v_head_dim=128, sliding_window_size=512,
             swa_rope_theta=50000.0, attention_gate_type="headwise", swa_attention_gate_type="headwise",
             apply_mla_qkv_lora_rescale=True, vocab_size=1000, pad_token_id=0, bos_token_id=1, eos_token_id=2)
DOTS3_SPEC = dict(architecture="Dots3NoteForCausalLM", model_type="dots3_note", transformers=True, hidden=512,
                  extra_config=DOTS3, quant="fp8-block")
# ZAYA1: a full ("hybrid") and a sliding ("hybrid_sliding") CCA layer, each with a top-1 MoE and its MLP router
# (router_hidden_size wide, num_experts + 1 classes), the routers left BF16 as a quantizer's ignore list leaves them.
ZAYA = dict(num_hidden_layers=2, hidden_size=512, num_attention_heads=4, num_key_value_heads=2, head_dim=128,
            moe_intermediate_size=256, num_experts=4, num_experts_per_tok=1, router_hidden_size=128,
            layer_types=["hybrid", "hybrid_sliding"], sliding_window=512, vocab_size=1000)
ZAYA_SPEC = dict(architecture="ZayaForCausalLM", model_type="zaya", transformers=True, hidden=512, extra_config=ZAYA,
                 quant="fp8-block", ignore=("lm_head", r"re:.*\.mlp\.gate\..*"))
# MiMo-V2-Flash: a full-attention layer with a dense MLP, a sliding layer (twice the KV heads, sinks) and a full one
# with MoE; K's head size 192, V's 128; the hub config's keys mimo_v2.py reads beside transformers'; MTP tensors.
MIMO_V2 = dict(num_hidden_layers=3, hidden_size=512, intermediate_size=1024, moe_intermediate_size=256,
               num_attention_heads=4, num_key_value_heads=2, head_dim=192, v_head_dim=128, swa_num_attention_heads=4,
               swa_num_key_value_heads=4, swa_head_dim=192, swa_v_head_dim=128,
               layer_types=["full_attention", "sliding_attention", "full_attention"], hybrid_layer_pattern=[0, 1, 0],
               mlp_layer_types=["dense", "sparse", "sparse"], moe_layer_freq=[0, 1, 1], sliding_window=128,
               sliding_window_size=128, add_swa_attention_sink_bias=True, layernorm_epsilon=1e-5, n_routed_experts=4,
               num_experts_per_tok=2, n_group=1, topk_group=1, norm_topk_prob=True, vocab_size=1000)
MIMO_V2_SPEC = dict(architecture="MiMoV2FlashForCausalLM", model_type="mimo_v2_flash", transformers=True, hidden=512,
                    extra_config=MIMO_V2, extra_tensors={"model.mtp.layers.0.eh_proj.weight": (512, 1024),
                                                         "model.mtp.layers.0.mlp.gate_proj.weight": (1024, 512)})
# MiMo-V2-Pro: MiMo-V2-Flash's layers, q / k / v saved fused as qkv_proj in num_key_value_heads (2) chunks
# (attention_projection_layout "fused_qkv"), native block FP8: the full layers' 2 x (2 x 192 Q, 192 K, 128 V) rows.
MIMO_V2_PRO_SPEC = dict(MIMO_V2_SPEC, architecture="MiMoV2ForCausalLM", quant="fp8-block",
                        extra_config=dict(MIMO_V2, attention_projection_layout="fused_qkv"))
# MiMo-V2-Omni: MiMo-V2-Flash's text model written by transformers' class, a vision_config and an audio_config, and
# both towers BF16 under the names the model loads (the ignore list names them): a vision block (4 heads, 2 KV heads
# of 64) and the merger; the audio encoder's Qwen2 layer, a speech embedding table and its projection.
MIMO_V2_OMNI_TOWERS = {"visual.blocks.0.attn.qkv.weight": (512, 256), "visual.blocks.0.attn.proj.weight": (256, 256),
                       "visual.blocks.0.mlp.gate_proj.weight": (512, 256),
                       "visual.blocks.0.mlp.up_proj.weight": (512, 256),
                       "visual.blocks.0.mlp.down_proj.weight": (256, 512),
                       "visual.merger.mlp.0.weight": (1024, 1024), "visual.merger.mlp.2.weight": (512, 1024),
                       **{f"audio_encoder.input_local_transformer.layers.0.self_attn.{leaf}.weight": (256, 256)
                          for leaf in ("q_proj", "k_proj", "v_proj", "o_proj")},
                       "audio_encoder.input_local_transformer.layers.0.mlp.gate_proj.weight": (512, 256),
                       "speech_embeddings.0.weight": (1025, 256), "audio_encoder.projection.weight": (512, 1024)}
MIMO_V2_OMNI_SPEC = dict(MIMO_V2_SPEC, architecture="MiMoV2OmniForCausalLM",
                         extra_config=dict(MIMO_V2, vision_config=dict(depth=1, hidden_size=256, num_heads=4,
                                                                       num_key_value_heads=2, qk_channels=64,
                                                                       kv_channels=64, out_hidden_size=512),
                                           audio_config=dict(input_local_dim=256, input_local_layers=1,
                                                             input_local_attn_heads=4, audio_channels=1)),
                         extra_tensors={**MIMO_V2_SPEC["extra_tensors"], **MIMO_V2_OMNI_TOWERS},
                         ignore=("lm_head", r"re:visual\..*", r"re:audio_encoder\..*", r"re:speech_embeddings\..*"))
# LongCat-Flash, written by transformers' class: per decoder layer two MLA attentions, two dense MLPs and a MoE of 4
# experts plus 2 zero-computation experts (a router 6 wide); the keys only vLLM's longcat_flash.py reads beside.
LONGCAT = dict(num_layers=2, hidden_size=512, ffn_hidden_size=1024, expert_ffn_hidden_size=256, num_attention_heads=4,
               q_lora_rank=256, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
               n_routed_experts=4, zero_expert_num=2, zero_expert_type="identity", moe_topk=2, vocab_size=1000,
               mla_scale_q_lora=True, mla_scale_kv_lora=True)
# layers: transformers' num_hidden_layers, two per decoder layer.
LONGCAT_SPEC = dict(architecture="LongcatFlashForCausalLM", model_type="longcat_flash", transformers=True, hidden=512,
                    layers=4, extra_config=LONGCAT)
# LongCat-Flash-Lite: LongCat-Flash with NgramEmbedding's tables (2 splits x 2 neighbours: 4 embedders of 128 columns).
LONGCAT_NGRAM = {name: shape for i in range(4) for name, shape in (
    (f"model.ngram_embeddings.embedders.{i}.weight", (2000 + 2 * i + 1, 128)),
    (f"model.ngram_embeddings.post_projs.{i}.weight", (512, 128)))}
LONGCAT_LITE_SPEC = dict(LONGCAT_SPEC, architecture="LongcatFlashNgramForCausalLM", extra_tensors=LONGCAT_NGRAM,
                         extra_config=dict(LONGCAT, ngram_vocab_size_ratio=2, emb_split_num=2, emb_neighbor_num=3))
# Mistral-Large-4 (Mistral's format): layer 2 shares layer 1's KV cache (both NoPE), indexers on layers 0, 1, 3; the
# layers vLLM builds with quant_config=None stored BF16.
MISTRAL_LARGE_4 = dict(mla=True, head_dim=128, kv_lora_rank=512, qk_rope_head_dim=64, moe_style="deepseek", experts=4,
                       shared_experts=1, first_k_dense=1, hidden=512, heads=4, kv_heads=4, layers=4,
                       ignore=("lm_head", r"re:.*\.kv_a_proj_with_mqa$", r"re:.*\.kv_b_proj$",
                               r"re:.*\.indexer\.(wk|weights_proj)$"),
                       extra_config={"nope": "rope,nope,nope,rope", "kv_sharing": {"source_layers_str": "0,1,1,3"},
                                     "dsa": {"topk": 2048, "n_heads": 4, "head_dim": 128, "norm_eps": 1e-6,
                                             "ssmax_scaling": False, "sharing": "full,full,shared,full"}})
# Pixtral in Mistral's format (params.json's vision_encoder, Mistral-Small-3.1's keys over the test's vision widths:
# 256 wide, 4 heads) and Voxtral (multimodal.whisper_model_args: one bidirectional Whisper encoder block).
PIXTRAL_ENCODER = dict(hidden_size=256, num_channels=3, image_size=1540, patch_size=14, intermediate_size=512,
                       num_hidden_layers=1, num_attention_heads=4, rope_theta=10000.0, image_token_id=10,
                       adapter_bias=False, spatial_merge_size=2, add_pre_mm_projector_layer_norm=True,
                       mm_projector_id="patch_merge")
WHISPER_ARGS = {"encoder_args": {"audio_encoding_args": {"num_mel_bins": 128, "hop_length": 160, "window_size": 400,
                                                         "sampling_rate": 16000},
                                 "dim": 256, "n_layers": 1, "head_dim": 64, "hidden_dim": 1024, "n_heads": 4,
                                 "vocab_size": 51866},
                "downsample_args": {"downsample_factor": 4}}
# Mamba2Config's keys (Codestral Mamba's, 512 wide: 16 heads of 64, 2 groups of 128 states).
MAMBA2 = dict(num_heads=16, head_dim=64, n_groups=2, state_size=128, expand=2, conv_kernel=4, use_conv_bias=True,
              use_bias=False, layer_norm_epsilon=1e-5, hidden_act="silu", rms_norm=True, tie_word_embeddings=False)
# Nemotron-H: one mixer a layer (Mamba2, attention, relu2 MLP, MoE), per-channel FP8 as NVIDIA's exports.
NEMOTRON_H = dict(hybrid_override_pattern="M*-E", mamba_num_heads=8, mamba_head_dim=64, n_groups=2,
                  ssm_state_size=128, conv_kernel=4, expand=1, use_conv_bias=True, mlp_hidden_act="relu2",
                  n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=256,
                  moe_shared_expert_intermediate_size=256, n_shared_experts=1, n_group=1, topk_group=1,
                  norm_topk_prob=True, num_hidden_layers=4)
# NVIDIA's Nemotron VL (nano_nemotron_vl.py; remote-code config): NEMOTRON_H as llm_config under language_model., a
# ViT-S RADIO tower (vision_config.args.model) and mlp1, both stored BF16 and ignored; the Omni adds two-frame video
# tubelets, an MTP layer (language_model.mtp.) and a Parakeet sound encoder.
NEMOTRON_VL_IGNORE = ("language_model.lm_head", r"re:vision_model\..*", r"re:mlp1\..*",
                      r"re:sound_(encoder|projection)\..*")


def nemotron_vl_spec(architecture: str = "NemotronH_Nano_VL_V2", omni: bool = False) -> dict:
    text = dict(NEMOTRON_H, model_type="nemotron_h", architectures=["NemotronHForCausalLM"], hidden_size=512,
                intermediate_size=512, num_attention_heads=4, num_key_value_heads=2, head_dim=128, vocab_size=1000,
                max_position_embeddings=512, tie_word_embeddings=False, torch_dtype="bfloat16")
    vision = {"model_type": "radio", "patch_size": 16, "preferred_resolution": [512, 512],
              "args": {"model": "vit_small_patch16_224", "cpe_max_size": 2048, "register_multiple": 8,
                       "cls_token_per_teacher": True, "teachers": [{"name": "siglip2-g"}]}}
    config = dict(llm_config=text, vision_config=vision, force_image_size=512, patch_size=16, downsample_ratio=0.5,
                  ps_version="v2", projector_hidden_size=512, vit_hidden_size=384)
    extra = {}
    if omni:
        config.update(llm_config=dict(text, num_nextn_predict_layers=1),
                      vision_config=dict(vision, video_temporal_patch_size=2),
                      sound_config={"hidden_size": 256, "num_attention_heads": 4, "num_hidden_layers": 1,
                                    "intermediate_size": 512, "subsampling_conv_channels": 64, "num_mel_bins": 128,
                                    "projection_hidden_size": 512})
        extra = {"language_model.mtp.layers.0.eh_proj.weight": (512, 1024)}
    return dict(architecture=architecture, model_type=architecture, transformers=True, layers=4,
                sizes_in_text_config=True, hidden=512, experts=4, ignore=NEMOTRON_VL_IGNORE, extra_config=config,
                extra_tensors={**nemotron_vl_tensors(config), **extra})


def llama_nemotron_vl_spec() -> dict:
    """Llama-3.1-Nemotron-Nano-VL (nemotron_vl.py): Llama as llm_config under language_model., the same towers."""
    spec = nemotron_vl_spec("Llama_Nemotron_Nano_VL")
    text = dict(model_type="llama", architectures=["LlamaForCausalLM"], hidden_size=512, intermediate_size=512,
                num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=128, vocab_size=1000,
                max_position_embeddings=512, tie_word_embeddings=False, torch_dtype="bfloat16")
    config = dict(spec["extra_config"], llm_config=text)
    return dict(spec, layers=2, experts=0, extra_config=config, extra_tensors=nemotron_vl_tensors(config))


# Granite (hidden_size // heads = 128, as granite*.py size the heads): Granite-4.0-H with a Mamba layer and an attention
# layer (one Mamba group, 8 heads of 128), 4 experts and a shared MLP on each.
GRANITE = dict(transformers=True, hidden=512, head_dim=128, extra_config=dict(attention_multiplier=0.0078125,
                                                                              embedding_multiplier=12.0))
GRANITE_MOE = dict(intermediate_size=256, num_local_experts=4, num_experts_per_tok=2)
GRANITE_H = dict(GRANITE_MOE, shared_intermediate_size=256, layer_types=["linear_attention", "full_attention"],
                 mamba_n_heads=8, mamba_d_head=128, mamba_n_groups=1, mamba_d_state=128, mamba_expand=2,
                 position_embedding_type="nope", attention_multiplier=0.0078125)
# Jamba: a Mamba-1 layer with the MoE (4 experts), an attention layer with a dense MLP; the mixers' linears left BF16
# (MambaMixer takes no quant config).
JAMBA = dict(num_experts=4, num_experts_per_tok=2, expert_layer_period=2, expert_layer_offset=0, attn_layer_period=2,
             attn_layer_offset=1, mamba_d_state=16, mamba_d_conv=4, mamba_expand=2, mamba_dt_rank=32)
JAMBA_SPEC = dict(GRANITE, architecture="JambaForCausalLM", model_type="jamba", extra_config=JAMBA,
                  ignore=("lm_head", "re:.*\\.mamba\\."))
# Falcon-H1: attention and a Mamba2 mixer (one group, 8 heads of 128) in both layers.
FALCON_H1 = dict(mamba_d_ssm=1024, mamba_n_heads=8, mamba_d_head=128, mamba_n_groups=1, mamba_d_state=128,
                 mamba_d_conv=4, mamba_expand=2)
FALCON_H1_SPEC = dict(GRANITE, architecture="FalconH1ForCausalLM", model_type="falcon_h1", extra_config=FALCON_H1)
# Granite's sliding-window classes: a sliding layer, then a full one (a sink on each).
GRANITE_SWA = dict(sliding_window=512, layer_types=["sliding_attention", "full_attention"], pad_token_id=0,
                   bos_token_id=1, eos_token_id=2)
# OLMo Hybrid: a gated-delta-net layer (4 key / value heads of 128; b_proj / a_proj, a row per head, left BF16) and a
# full-attention layer.
OLMO_HYBRID_SPEC = dict(GRANITE, architecture="OlmoHybridForCausalLM", model_type="olmo_hybrid",
                        ignore=("lm_head", "re:.*linear_attn\\.(b|a)_proj$"),
                        extra_config=dict(linear_num_key_heads=4, linear_num_value_heads=4, linear_key_head_dim=128,
                                          linear_value_head_dim=128, layer_types=["linear_attention", "full_attention"],
                                          pad_token_id=0, eos_token_id=2))
# Mamba / Falcon-Mamba: Mamba-1 mixers only (tied head), left BF16 (vLLM quantizes none of them); Mamba-2: one group,
# 8 heads of 128.
MAMBA = dict(state_size=16, expand=2, conv_kernel=4, time_step_rank=32, intermediate_size=1024)
MAMBA_SPEC = dict(GRANITE, architecture="MambaForCausalLM", model_type="mamba", extra_config=MAMBA,
                  tie_embeddings=True, ignore=("lm_head", "re:.*\\.mixer\\."))
MAMBA2_SPEC = dict(GRANITE, architecture="Mamba2ForCausalLM", model_type="mamba2",
                   extra_config=dict(num_heads=8, head_dim=128, n_groups=1, state_size=128, expand=2, conv_kernel=4,
                                     pad_token_id=0, bos_token_id=1, eos_token_id=2))
ERNIE_MOE = dict(use_bias=False, moe_intermediate_size=256, moe_k=2, moe_num_experts=4, moe_num_shared_experts=1,
                 moe_layer_start_index=1, moe_layer_end_index=-1, moe_layer_interval=1)
GEMMA4 = dict(num_hidden_layers=4, global_head_dim=256, num_global_key_value_heads=1, attention_k_eq_v=True,
              layer_types=["sliding_attention", "full_attention"] * 2, sliding_window=512, hidden_size_per_layer_input=0,
              num_kv_shared_layers=0, enable_moe_block=True, num_experts=4, top_k_experts=2, moe_intermediate_size=256,
              head_dim=128, tie_word_embeddings=True)
# Gemma-3n at test widths: four layers, the last two KV-shared (a sliding one reading layer 0, a full one layer 1).
GEMMA3N_TEXT = dict(hidden_size=256, intermediate_size=[512] * 4, num_hidden_layers=4, num_attention_heads=2,
                    num_key_value_heads=1, head_dim=128, vocab_size=256, vocab_size_per_layer_input=256,
                    hidden_size_per_layer_input=64, altup_num_inputs=4, laurel_rank=32, num_kv_shared_layers=2,
                    activation_sparsity_pattern=[0.95, 0.0, 0.0, 0.0], sliding_window=512,
                    layer_types=["sliding_attention", "full_attention"] * 2, tie_word_embeddings=True,
                    hidden_activation="gelu_pytorch_tanh")
GEMMA3N_VL = {"text_config": {"model_type": "gemma3n_text", **GEMMA3N_TEXT},
              "vision_config": {"model_type": "gemma3n_vision", "architecture": "mobilenetv5_300m_enc",
                                "hidden_size": 256, "vocab_size": 128},
              "audio_config": {"model_type": "gemma3n_audio", "hidden_size": 256, "vocab_size": 128,
                               "conf_num_hidden_layers": 1, "conf_num_attention_heads": 2},
              "tie_word_embeddings": True}
# Phi-3-vision's remote-code config (phi3_v): Phi-3's keys with the image embedding's.
PHI3V = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
             vocab_size=256, pad_token_id=0, bos_token_id=1, eos_token_id=2,
             img_processor={"image_dim_out": 1024, "num_img_tokens": 144},
             embd_layer={"use_hd_transform": True, "with_learnable_separator": True})
LAGUNA = dict(num_hidden_layers=3, num_attention_heads_per_layer=[4, 8, 4], head_dim=128,
              layer_types=["full_attention", "sliding_attention", "full_attention"], sliding_window=512,
              mlp_layer_types=["dense", "sparse", "sparse"], gating=True, num_experts=4, num_experts_per_tok=2,
              moe_intermediate_size=256, shared_expert_intermediate_size=256)
# EXAONE-4.0: three sliding layers and a global one, as LG's configs write them (layer_types beside the letter
# pattern); EXAONE-MoE: a dense layer 0, MoE layers 1-3, layer 2 with a SwiGLU clamp (swiglu_limits).
EXAONE4 = dict(num_hidden_layers=4, sliding_window=512, sliding_window_pattern="LLLG",
               layer_types=["sliding_attention"] * 3 + ["full_attention"])
EXAONE_MOE = dict(EXAONE4, mlp_layer_types=["dense", "sparse", "sparse", "sparse"], num_experts=4,
                  num_experts_per_tok=2, moe_intermediate_size=256, num_shared_experts=1, n_group=1, topk_group=1,
                  swiglu_limits=[0, 0, 7.0, 0])
EXAONE_MTP = {"mtp.fc.weight": (256, 512), "mtp.layers.0.self_attn.q_proj.weight": (512, 256)}
# Beam: three sliding layers and a full (NoPE) one, a dense layer 0 and MoE layers 1-3 with grouped sigmoid routing.
BEAM = dict(num_hidden_layers=4, sliding_window=512, layer_types=["sliding_attention"] * 3 + ["full_attention"],
            mlp_layer_types=["dense", "sparse", "sparse", "sparse"], num_experts=4, num_experts_per_tok=2,
            moe_intermediate_size=256, n_group=2, topk_group=1, final_logit_softcapping=30.0)
BEAM_SPEC = dict(architecture="BeamForCausalLM", model_type="beam", layers=4, extra_config=BEAM, **HF)
# Flint: full (NoPE) layers 0 and 3, sliding layers 1-2, a dense layer 0 and MoE layers 1-3 with a shared expert.
FLINT = dict(num_hidden_layers=4, sliding_window=513, no_rope_layer_indices=[0, 3], mlp_only_layers=[0],
             layer_types=["full_attention", "sliding_attention", "sliding_attention", "full_attention"], num_experts=4,
             num_experts_per_tok=2, moe_intermediate_size=256, shared_expert_intermediate_size=256)
FLINT_SPEC = dict(architecture="FlintForCausalLM", model_type="flint", layers=4, extra_config=FLINT, **HF)
# Step-3.5: a sliding layer with its own head count; layer 0 dense, 1-2 MoE (layer 2's experts swiglustep).
STEP35 = dict(num_hidden_layers=3, head_dim=128, layer_types=["full_attention", "sliding_attention", "full_attention"],
              sliding_window=512, num_sliding_attention_heads=8, mlp_layer_types=["dense", "sparse", "sparse"],
              moe_num_experts=4, moe_top_k=2, moe_intermediate_size=256, share_expert_dim=256,
              use_moe_router_bias=True, need_fp32_gate=True, norm_expert_weight=True, moe_router_activation="sigmoid",
              swiglu_limits=[0, 0, 7], swiglu_limits_shared=[0, 0, 0], use_head_wise_attn_gate=True)
# Step-3.7: Step-3.5's text model (homogeneous heads) under a one-block PerceptionEncoder (OpenCLIP names) and projector.
STEP37 = {"text_config": dict(STEP35, num_sliding_attention_heads=4, architectures=["Step3p5ForCausalLM"],
                              hidden_size=256, intermediate_size=512, num_attention_heads=4, num_key_value_heads=2,
                              vocab_size=1000, max_position_embeddings=512),
          "vision_config": {"width": 256, "layers": 1, "heads": 2, "mlp_ratio": 2.0, "image_size": 56, "patch_size": 14}}
STEP37_IGNORE = ("lm_head", "re:.*g_proj$", "re:.*attn.qkv_proj$")  # the tower's in_proj_weight is stored BF16
# StepVL (Step3-VL-10B): a Qwen3 text model (text_config's class) under the same tower, OpenCLIP's in_proj_weight BF16.
STEP_VL = dict(architecture="StepVLForConditionalGeneration", model_type="step_vl", vision="perception_encoder",
               head_dim=128, ignore=("lm_head", "re:.*attn.qkv_proj$"),
               extra_tensors={"vision_model.transformer.resblocks.0.attn.in_proj_weight": (768, 256),
                              "vision_model.transformer.resblocks.0.attn.in_proj_bias": (768,)},
               extra_config={"text_config": {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"],
                                             "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 2,
                                             "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 128,
                                             "vocab_size": 1000},
                             "vision_config": {"width": 256, "layers": 1, "heads": 2, "mlp_ratio": 2.0}})
# Step-3 (Step's own names): one KV head of 256, q_proj 256 wide then wq to 4 x 256; layer 0 dense, 1 MoE.
STEP3_TEXT = dict(num_attention_groups=1, share_q_dim=256, head_dim=256, moe_num_experts=4, moe_top_k=2,
                  moe_intermediate_size=256, share_expert_dim=256, moe_layers_enum="1", max_position_embedding=512)
STEP3 = dict(names="step3", kv_heads=1, head_dim=256, experts=4, moe_intermediate=256, first_k_dense=1,
             extra_config=STEP3_TEXT)
STEP3_VL = dict(STEP3, architecture="Step3VLForConditionalGeneration", model_type="step3_vl", vision="step3", extra_config={
    "text_config": dict(STEP3_TEXT, architectures=["Step3TextForCausalLM"], model_type="step3_text", hidden_size=256,
                        intermediate_size=512, num_hidden_layers=2, num_attention_heads=4, vocab_size=1000),
    "vision_config": {"hidden_size": 256, "intermediate_size": 512, "output_hidden_size": 512, "num_hidden_layers": 1,
                      "num_attention_heads": 2, "image_size": 56, "patch_size": 14}})
# Step-5: Step-3.5's layers plus the sparse (DSA) layer 1 ("full_attention" with sparse_config): its indexer tensors
# (sparse_indexer_q: 4 heads x proxy_dim 256, k / z one head, w a row per head; ssmax_s; 8 query heads, 4 a KV group,
# as the DSA kernels take) and, as vLLM only builds it
# unquantized, the layer's q / k / v / g and indexer kept BF16; the per-head gates BF16 everywhere.
STEP5 = dict(STEP35, head_dim=192, num_attention_groups=2, num_sliding_attention_heads=16, swa_num_attention_heads=16,
             max_seq_len=4096,
             layer_types=["sliding_attention", "full_attention", "sliding_attention"],
             sparse_config=dict(enabled=True, sparse_indexer_num_heads=4, index_tp_size=2, topk=512))
_STEP5_INDEXER = {"sparse_indexer_q": (1024, 256), "sparse_indexer_k": (256, 256), "sparse_indexer_z": (256, 256),
                  "sparse_indexer_w": (4, 256)}
STEP5_SPEC = dict(HF, architecture="Step5ForCausalLM", model_type="step5", heads=8, head_dim=192, extra_config=STEP5,
                  ignore=("lm_head", "re:.*g_proj$", "re:.*layers[.]1[.]self_attn[.](q|k|v)_proj$",
                          "re:.*sparse_indexer_.*"),
                  extra_tensors={**{f"model.layers.1.self_attn.{n}.weight": s for n, s in _STEP5_INDEXER.items()},
                                 "model.layers.1.self_attn.ssmax_s": (8,)})
# Step-5's vision-language class (vLLM's Step5VLConfig, model_type step5_vl): Step-5's text model as text_config under
# Step-3.7's one-block tower and projector (written by transformers' Step3p7ForConditionalGeneration).
STEP5_VL = dict(STEP5_SPEC, architecture="Step5ForConditionalGeneration", model_type="step5_vl", layers=3,
                ignore=(*STEP5_SPEC["ignore"], "re:.*attn.qkv_proj$"),
                extra_config={"text_config": dict(STEP5, architectures=["Step5ForCausalLM"], model_type="step5",
                                                  hidden_size=256, intermediate_size=512, num_attention_heads=8,
                                                  num_key_value_heads=2, vocab_size=1000),
                              "vision_config": STEP37["vision_config"]})
VISION = dict(depth=1, hidden_size=256, intermediate_size=512, num_heads=2, out_hidden_size=256)
# The Transformers backend's architectures, written by transformers' classes (token ids inside the tiny vocabulary).
TF = dict(transformers=True, head_dim=128, extra_config=dict(pad_token_id=0, bos_token_id=1, eos_token_id=2))
# The registry's older dense families (the eighth round), written by transformers' own classes at 128-head widths.
CLASSIC = dict(transformers=True, layers=1, hidden=256, heads=2, kv_heads=2, head_dim=None, intermediate=512,
               vocab=1000, extra_config=dict(pad_token_id=0, bos_token_id=1, eos_token_id=2))
OLMOE = dict(TF, extra_config=dict(TF["extra_config"], num_experts=4, num_experts_per_tok=2, intermediate_size=256))
# Mellum: layer 0 dense and sliding, layer 1 MoE with full attention; Kolibri-1: every layer MoE with a shared expert.
MELLUM = dict(TF, extra_config=dict(TF["extra_config"], num_experts=4, num_experts_per_tok=2, moe_intermediate_size=256,
                                    layer_types=["sliding_attention", "full_attention"], sliding_window=512,
                                    mlp_layer_types=["dense", "sparse"]))
KOLIBRI1 = dict(TF, extra_config=dict(TF["extra_config"], num_experts=4, num_experts_per_tok=2,
                                      moe_intermediate_size=256, shared_expert_intermediate_size=256,
                                      layer_types=["sliding_attention", "full_attention"], sliding_window=513))
# GLM-4.1V / GLM-4.5V (glm4v / glm4v_moe): the GLM-4 / GLM-4.5 text model under language_model, the GLM-4V tower.
GLM4V_TEXT = dict(num_hidden_layers=2, hidden_size=512, intermediate_size=1024, num_attention_heads=4,
                  num_key_value_heads=2, head_dim=128, vocab_size=1000, partial_rotary_factor=0.5)
GLM4V_MOE_TEXT = dict(GLM4V_TEXT, model_type="glm4v_moe_text", moe_intermediate_size=256, n_routed_experts=4,
                      n_shared_experts=1, num_experts_per_tok=2, first_k_dense_replace=1, n_group=1, topk_group=1,
                      norm_topk_prob=True, use_qk_norm=False)
GLM4V_VISION = dict(VISION, out_hidden_size=512, intermediate_size=1024, patch_size=14, spatial_merge_size=2,
                    temporal_patch_size=2, in_channels=3, image_size=336)
# GLM-5-Next (GLM-5.3-Flash): a KDA layer and a sparse-MLA layer (NoPE, 256-wide heads), dense then MoE, one MTP
# layer; the KDA projections, kv_b_proj and the indexer's wq_b / weights_proj stored BF16 as the FP8 release does.
GLM5_NEXT = dict(num_hidden_layers=2, hidden_size=512, intermediate_size=1024, moe_intermediate_size=256,
                 num_attention_heads=4, num_key_value_heads=4, q_lora_rank=256, kv_lora_rank=512,
                 qk_nope_head_dim=256, qk_rope_head_dim=0, v_head_dim=256, head_dim=0, n_routed_experts=4,
                 n_shared_experts=1, num_experts_per_tok=2, n_group=1, topk_group=1, norm_topk_prob=True,
                 scoring_func="sigmoid", topk_method="noaux_tc", index_topk=2048, index_n_heads=4, index_head_dim=128,
                 linear_num_heads=4, linear_head_dim=128, layer_types=["linear_attention", "indexed_attention"],
                 mlp_layer_types=["dense", "sparse"], mla_use_nope=True, num_nextn_predict_layers=1, vocab_size=1000,
                 pad_token_id=0)
GLM5_NEXT_BF16 = ("lm_head", "re:.*self_attn\\.(q|k|v|b|f_a|f_b|g_a|g_b)_proj$", "re:.*kv_b_proj$",
                  "re:.*indexer\\.(wq_b|weights_proj)$")
GLM5_NEXT_SPEC = dict(architecture="Glm5NextForCausalLM", model_type="glm5_next_text", transformers=True,
                      hidden=512, quant="fp8-block",
                      extra_config=GLM5_NEXT, ignore=GLM5_NEXT_BF16,
                      extra_tensors={"model.layers.2.eh_proj.weight": (512, 1024),
                                     "model.layers.2.self_attn.q_a_proj.weight": (256, 512)})
# GLM-4.7-Flash: DeepSeek MLA with q-LoRA, a dense layer 0, GLM-4.5's sigmoid-routed MoE on layer 1, one MTP layer.
GLM47_FLASH = dict(num_hidden_layers=2, hidden_size=512, intermediate_size=1024, moe_intermediate_size=256,
                   first_k_dense_replace=1, mlp_layer_types=["dense", "sparse"], num_attention_heads=4,
                   num_key_value_heads=4, q_lora_rank=256, kv_lora_rank=512, qk_nope_head_dim=128,
                   qk_rope_head_dim=64, head_dim=64, v_head_dim=128, n_routed_experts=4, n_shared_experts=1,
                   num_experts_per_tok=2, n_group=1, topk_group=1, norm_topk_prob=True, topk_method="noaux_tc",
                   num_nextn_predict_layers=1, vocab_size=1000)
GLM47_FLASH_SPEC = dict(architecture="Glm4MoeLiteForCausalLM", model_type="glm4_moe_lite", transformers=True,
                        hidden=512, extra_config=GLM47_FLASH,
                        extra_tensors={"model.layers.2.eh_proj.weight": (512, 1024),
                                       "model.layers.2.self_attn.q_a_proj.weight": (256, 512)})
# Qwen3-Omni: the thinker (audio tower, vision tower, Qwen3-MoE text model) beside the talker and code2wav, all under
# transformers' Qwen3OmniMoeForConditionalGeneration; the audio tower, talker and code2wav stored BF16.
QWEN3_OMNI = dict(
    thinker_config=dict(
        text_config=dict(model_type="qwen3_omni_moe_text", hidden_size=512, intermediate_size=1024,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=128,
                         vocab_size=1000, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=256,
                         tie_word_embeddings=False),
        vision_config=dict(VISION, model_type="qwen3_omni_moe_vision_encoder", out_hidden_size=512,
                           deepstack_visual_indexes=[0], image_size=768, apply_vit_abs_pos_embed=True),
        audio_config=dict(model_type="qwen3_omni_moe_audio_encoder", d_model=256, encoder_attention_heads=4,
                          encoder_ffn_dim=512, encoder_layers=1, output_dim=512, downsample_hidden_size=32)),
    talker_config=dict(text_config=dict(hidden_size=256, intermediate_size=512, num_hidden_layers=1,
                                        num_attention_heads=2, num_key_value_heads=1, head_dim=128, num_experts=4,
                                        num_experts_per_tok=2, moe_intermediate_size=256,
                                        shared_expert_intermediate_size=256, vocab_size=1000),
                       code_predictor_config=dict(hidden_size=256, intermediate_size=512, num_hidden_layers=1,
                                                  num_attention_heads=2, num_key_value_heads=1, head_dim=128,
                                                  num_code_groups=2),
                       num_code_groups=2, thinker_hidden_size=512, accept_hidden_layer=1, spatial_merge_size=2),
    code2wav_config=dict(hidden_size=256, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2,
                         intermediate_size=512, decoder_dim=128, num_quantizers=2))
QWEN3_OMNI_SPEC = dict(architecture="Qwen3OmniMoeForConditionalGeneration", model_type="qwen3_omni_moe",
                       transformers=True, sizes_in_text_config=True, extra_config=QWEN3_OMNI,
                       ignore=("thinker.lm_head", "re:.*audio_tower.*", "re:talker.*", "re:code2wav.*"))
# Qwen2.5-Omni: the thinker (transformers' audio encoder, a Qwen2.5-VL tower with q / k / v apart, a Qwen2 text model)
# beside the talker and token2wav, all under transformers' Qwen2_5OmniForConditionalGeneration; the audio tower,
# talker and token2wav stored BF16.
QWEN25_OMNI = dict(
    thinker_config=dict(
        text_config=dict(model_type="qwen2_5_omni_text", hidden_size=512, intermediate_size=1024,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, vocab_size=1000,
                         tie_word_embeddings=False),
        vision_config=dict(model_type="qwen2_5_omni_vision_encoder", depth=1, hidden_size=256, intermediate_size=512,
                           num_heads=2, out_hidden_size=512, fullatt_block_indexes=[0]),
        audio_config=dict(model_type="qwen2_5_omni_audio_encoder", d_model=256, encoder_attention_heads=4,
                          encoder_ffn_dim=512, encoder_layers=1, output_dim=512)),
    talker_config=dict(hidden_size=256, intermediate_size=512, num_hidden_layers=1, num_attention_heads=2,
                       num_key_value_heads=1, head_dim=128, vocab_size=1000, embedding_size=512),
    token2wav_config=dict(dit_config=dict(hidden_size=128, num_hidden_layers=1, num_attention_heads=2, head_dim=64,
                                          look_ahead_layers=[0], look_backward_layers=[0])))
QWEN25_OMNI_SPEC = dict(architecture="Qwen2_5OmniForConditionalGeneration", model_type="qwen2_5_omni",
                        transformers=True, sizes_in_text_config=True, extra_config=QWEN25_OMNI,
                        ignore=("thinker.lm_head", "re:.*audio_tower.*", "re:talker.*", "re:token2wav.*"))
# Qwen2-Audio: transformers' audio encoder (one layer) and projector, stored BF16, over a Qwen2 text model.
QWEN2_AUDIO_SPEC = dict(architecture="Qwen2AudioForConditionalGeneration", model_type="qwen2_audio", transformers=True,
                        sizes_in_text_config=True,
                        ignore=("language_model.lm_head", "re:.*audio_tower.*", "re:.*multi_modal_projector.*"),
                        extra_config=dict(
                            text_config=dict(model_type="qwen2", hidden_size=512, intermediate_size=1024,
                                             num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                             vocab_size=1000),
                            audio_config=dict(model_type="qwen2_audio_encoder", d_model=256, encoder_attention_heads=4,
                                              encoder_ffn_dim=512, encoder_layers=1, max_source_positions=64)))
# Qwen2-VL: a flat config (Qwen2's text keys at the top level, as Qwen/Qwen2-VL-* and RedHatAI's FP8 exports write it)
# and a one-block tower (embed_dim 256, 2 heads, the non-gated QuickGELU MLP 4 x wide), saved by transformers under
# the released checkpoints' names (model.layers.N, visual.blocks.N).
QWEN2_VL_SPEC = dict(architecture="Qwen2VLForConditionalGeneration", model_type="qwen2_vl", transformers=True,
                     hidden=512, head_dim=128, extra_config=dict(vision_config=dict(
                         depth=1, embed_dim=256, hidden_size=512, mlp_ratio=4, num_heads=2)))
# Kimi-K2.5: a DeepSeek-V3 text model (MLA with q-LoRA, dense layer 0, sigmoid-routed MoE) and a MoonViT tower.
KIMI_K2_TEXT = dict(model_type="deepseek_v3", num_hidden_layers=2, hidden_size=512, intermediate_size=1024,
                    moe_intermediate_size=256, first_k_dense_replace=1, num_attention_heads=4, num_key_value_heads=4,
                    q_lora_rank=256, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
                    n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2, n_group=1, topk_group=1,
                    norm_topk_prob=True, scoring_func="sigmoid", topk_method="noaux_tc", vocab_size=1000)
KIMI_K25 = dict(architecture="KimiK25ForConditionalGeneration", model_type="kimi_k25", transformers=True, hidden=512,
                extra_config={"text_config": KIMI_K2_TEXT, "projection_hidden_size": 256,
                              "vision_config": {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 1,
                                                "num_attention_heads": 2}})
# Kimi-VL: DeepSeek-V3's text model without q-LoRA (Moonshot's config) and a one-block MoonViT with its projector,
# stored BF16 (moonvit_tensors).
KIMI_VL = dict(text_config=dict(KIMI_K2_TEXT, q_lora_rank=None),
               vision_config=dict(model_type="moonvit", patch_size=14, init_pos_emb_height=8, init_pos_emb_width=8,
                                  num_attention_heads=2, num_hidden_layers=1, hidden_size=256, intermediate_size=512,
                                  merge_kernel_size=[2, 2]))
KIMI_VL_SPEC = dict(architecture="KimiVLForConditionalGeneration", model_type="kimi_vl", transformers=True,
                    sizes_in_text_config=True, extra_config=KIMI_VL, extra_tensors=moonvit_tensors(KIMI_VL),
                    ignore=("language_model.lm_head", "re:.*vision_tower.*", "re:.*multi_modal_projector.*"))
# Kimi-Linear: KDA layers 1 and 2, NoPE MLA layer 3 (1-based, as the checkpoints list them), MoE from layer 1.
KIMI_LINEAR = dict(num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=4, kv_lora_rank=512,
                   qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, mla_use_nope=True, num_experts=4,
                   num_experts_per_token=2, num_shared_experts=1, moe_intermediate_size=256, first_k_dense_replace=1,
                   pad_token_id=0, bos_token_id=1, eos_token_id=2,
                   linear_attn_config={"kda_layers": [1, 2], "full_attn_layers": [3], "head_dim": 128,
                                       "num_heads": 4, "short_conv_kernel_size": 4})
# Kimi-K3 (transformers has no class for it: synth.kimi_k3_tensors writes Moonshot's names by hand): KDA layers 1-2
# with the full-rank gate, a q-LoRA MLA layer 3 with the output gate, a dense layer 0, latent MoE (256 wide) from
# layer 1, attention residuals, one MTP layer, a MoonViT tower (BF16: compressed-tensors). Stored BF16: the KDA
# in_proj shards (b_proj: 4 rows), the residual projections and indexer wk / weights_proj (quant_config=None), and
# K3's fused_qkv_a_g_proj shards (its kv_a part, 576 rows, fits no 128-block).
KIMI_K3_TEXT = dict(model_type="kimi_linear", hidden_size=512, intermediate_size=1024, num_hidden_layers=3,
                    num_attention_heads=4, num_key_value_heads=4, vocab_size=1000, hidden_act="silu", q_lora_rank=256,
                    kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, mla_use_nope=True,
                    mla_use_output_gate=True, num_experts=4, num_experts_per_token=2, num_shared_experts=1,
                    moe_intermediate_size=256, routed_expert_hidden_size=256, first_k_dense_replace=1,
                    num_nextn_predict_layers=1, attn_res_block_size=2,
                    linear_attn_config={"kda_layers": [1, 2], "full_attn_layers": [3], "head_dim": 128, "num_heads": 4,
                                        "short_conv_kernel_size": 4, "use_full_rank_gate": True})
KIMI_K3_VISION = {"vt_hidden_size": 256, "vt_intermediate_size": 512, "vt_num_hidden_layers": 1,
                  "vt_num_attention_heads": 2, "qkv_hidden_size": 256, "patch_size": 14, "merge_kernel_size": [2, 2],
                  "text_hidden_size": 512}


def kimi_k3_spec(dsa: bool = False, **fields) -> dict:
    text = dict(KIMI_K3_TEXT, dsa_config={"dsa_layers": [3], "index_topk": 2048, "index_head_dim": 128,
                                          "index_num_heads": 4}) if dsa else KIMI_K3_TEXT
    config = {"text_config": text, "vision_config": KIMI_K3_VISION}
    ignore = ("language_model.lm_head", r"re:.*_res_proj$", r"re:.*layers\.[01]\.self_attn\.(q|k|v|g|b|f_a)_proj$",
              r"re:.*indexer\.(wk|weights_proj)$", "re:vision_tower.*", "re:mm_projector.*",
              *(() if dsa else (r"re:.*layers\.2\.self_attn\.(q_a_proj|kv_a_proj_with_mqa|g_proj)$",)))
    return {"architecture": "KimiK31ForConditionalGeneration" if dsa else "KimiK3ForConditionalGeneration",
            "model_type": "kimi_k31" if dsa else "kimi_k3", "layers": 0, "text_prefix": "language_model.model",
            "sizes_in_text_config": True, "extra_config": config, "extra_tensors": kimi_k3_tensors(config),
            "hidden": 512, "vocab": 1000, "quant": "ct-fp8-block", "ignore": ignore, **fields}


# K2-Horizon (no transformers or vLLM config class: synth.k2_horizon_tensors writes the names k2_horizon.py loads by
# hand): a dense layer 0 (mlp_only_layers: qkv_proj, an MLP), a MoE layer 1 with MoVA attention (qk_proj, v_router,
# four value experts), the attention output gate on both. The routers and value experts are stored BF16 and ignored.
K2_HORIZON = dict(hidden_size=512, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=128,
                  rope_head_dim=64, vocab_size=1000, max_position_embeddings=512, rms_norm_eps=1e-6, hidden_act="silu",
                  rope_parameters={"rope_type": "default", "rope_theta": 1e6}, query_key_norm=True,
                  attention_bias=False, attention_gate_func="silu", layernorm_num_groups=1, intermediate_size=1024,
                  num_experts=4, num_experts_per_tok=2, moe_intermediate_size=256, num_shared_experts=1,
                  decoder_sparse_step=1, mlp_only_layers=[0], norm_topk_prob=True, moe_gate_bias=True,
                  router_score_func="sigmoid", router_scaling_factor=2.5, mova_num_experts=4,
                  mova_num_experts_per_tok=2, tie_word_embeddings=False)
K2_HORIZON_SPEC = {"architecture": "K2HorizonForCausalLM", "model_type": "k2_horizon", "layers": 0, "hidden": 512,
                   "vocab": 1000, "extra_config": K2_HORIZON, "extra_tensors": k2_horizon_tensors(K2_HORIZON),
                   "ignore": ("lm_head", r"re:.*mlp\.gate$", r"re:.*v_router$", r"re:.*v_experts\.\d+$")}


# AliceAI (transformers has no class for it: synth.alice_ai_tensors writes the names alice_ai.py loads by hand): a KDA
# layer 0 and a gated full-attention layer 1, Qwen-style MoE with a shared expert on both, attention residuals. Stored
# BF16: the residual projections (quant_config=None) and the KDA in_proj shards (b_proj: 4 rows).
ALICE_AI = dict(hidden_size=512, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=128,
                vocab_size=1000, max_position_embeddings=512, rms_norm_eps=1e-6, hidden_act="silu",
                layer_types=["linear_attention", "full_attention"], linear_num_key_heads=4, linear_num_value_heads=4,
                linear_key_head_dim=128, linear_value_head_dim=128, linear_conv_kernel_dim=4, num_experts=4,
                num_experts_per_tok=2, moe_intermediate_size=256, shared_expert_intermediate_size=256,
                block_attn_res_block_size=2, kda_allow_negative_eigenvalues=False, router_score_function="sigmoid",
                router_bias_correction=True)
ALICE_AI_SPEC = {"architecture": "AliceAIForCausalLM", "model_type": "alice_ai", "layers": 0, "hidden": 512,
                 "vocab": 1000, "extra_config": ALICE_AI, "extra_tensors": alice_ai_tensors(ALICE_AI),
                 "ignore": ("lm_head", "re:.*res_proj$", r"re:.*linear_attn\.(q|k|v|b|f_a)_proj$")}

# InternLM2 (remote code only: synth.internlm2_tensors writes the hub's names): attention.wqkv stored fused, wo,
# feed_forward.w1 / w3 / w2, model.tok_embeddings and the head `output`.
INTERNLM2 = dict(architectures=["InternLM2ForCausalLM"], model_type="internlm2", hidden_size=256, intermediate_size=512,
                 num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2, vocab_size=1000,
                 max_position_embeddings=512, rms_norm_eps=1e-5, rope_theta=1000000, tie_word_embeddings=False)
INTERNLM2_NAMES = dict(layers=0, embedding="tok_embeddings", head="output")
INTERNLM2_SPEC = dict(architecture="InternLM2ForCausalLM", model_type="internlm2", sizes_in_text_config=True,
                      extra_config=INTERNLM2, extra_tensors=internlm2_tensors(INTERNLM2), ignore=("output",),
                      **INTERNLM2_NAMES)
# InternVL's remote-code format (config.json's llm_config and vision_config): a one-layer InternViT of 2 heads of 128
# (3 heads in the replication test) and mlp1 (torch nn.Linears in InternVL / H2OVL: stored BF16, listed).
INTERN_VIT = dict(hidden_size=256, intermediate_size=512, num_attention_heads=2, num_hidden_layers=1, image_size=28,
                  patch_size=14, qkv_bias=True, qk_normalization=False, norm_type="layer_norm")


def internvl_chat_spec(architecture: str, llm: dict, vision: dict = INTERN_VIT, ignore=("mlp1.1", "mlp1.3")) -> dict:
    config = {"llm_config": llm, "vision_config": vision, "downsample_ratio": 0.5, "select_layer": -1,
              "force_image_size": 28, "ps_version": "v2"}
    internlm2 = llm["model_type"] == "internlm2"
    return dict(architecture=architecture, model_type="internvl_chat", text_prefix="language_model.model",
                sizes_in_text_config=True, extra_config=config,
                extra_tensors={**(internlm2_tensors(llm, "language_model.model") if internlm2 else {}),
                               **intern_vit_tensors(config)},
                ignore=("language_model.output" if internlm2 else "language_model.lm_head", *ignore),
                **(INTERNLM2_NAMES if internlm2 else dict(head_dim=128, heads=2, kv_heads=2)))


QWEN2_LLM = dict(architectures=["Qwen2ForCausalLM"], model_type="qwen2", hidden_size=256, intermediate_size=512,
                 num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2, head_dim=128, vocab_size=1000)

# Ling / Ring (transformers has no class for bailing_moe / bailing_moe_v2: synth.bailing_tensors writes inclusionAI's
# names by hand). 2.0: a dense layer 0, then MoE with sigmoid grouped routing, the expert bias and a shared expert.
# v1: softmax routing, every layer MoE. 2.5: linear-attention layers 0-2 and an MLA layer 3, one MTP layer.
LING_V2 = dict(model_type="bailing_moe_v2", hidden_size=512, intermediate_size=1024, num_hidden_layers=2,
               num_attention_heads=4, num_key_value_heads=2, head_dim=128, vocab_size=1000, max_position_embeddings=512,
               hidden_act="silu", use_bias=False, use_qkv_bias=False, use_qk_norm=True, rms_norm_eps=1e-6,
               embedding_dropout=0.0, rope_theta=600000.0, partial_rotary_factor=0.5, num_experts=4,
               num_experts_per_tok=2, num_shared_experts=1, moe_intermediate_size=256,
               moe_shared_expert_intermediate_size=256, first_k_dense_replace=1, norm_topk_prob=True,
               score_function="sigmoid", moe_router_enable_expert_bias=True, n_group=2, topk_group=1,
               num_nextn_predict_layers=0)
LING_V1 = {**{k: v for k, v in LING_V2.items() if k not in ("use_qk_norm", "score_function", "n_group", "topk_group",
                                                            "moe_router_enable_expert_bias")},
           "model_type": "bailing_moe", "first_k_dense_replace": 0}
LING_V25 = {**LING_V2, "model_type": "bailing_hybrid", "num_hidden_layers": 4, "num_key_value_heads": 4,
            "layer_group_size": 4, "group_norm_size": 4, "q_lora_rank": None, "kv_lora_rank": 512,
            "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "num_nextn_predict_layers": 1}


# Ling / Ring 3.0 (bailing_moe_v3.py), written by transformers' BailingHybridForCausalLM: Kimi delta attention layers
# 0-2, an MLA layer 3 (layer_group_size 4) with its head-wise output gate, a dense layer 0, MoE with a shared expert.
LING_3 = dict(hidden_size=512, intermediate_size=1024, moe_intermediate_size=256, num_hidden_layers=4,
              num_attention_heads=4, num_key_value_heads=4, head_dim=128, kv_lora_rank=512, qk_nope_head_dim=128,
              qk_rope_head_dim=64, v_head_dim=128, num_experts=4, num_experts_per_tok=2, n_group=1, topk_group=1,
              first_k_dense_replace=1, num_shared_experts=1, moe_shared_expert_intermediate_size=256,
              layer_group_size=4, vocab_size=1000, pad_token_id=0, eos_token_id=1, use_bias=False,
              gated_attention_proj_granularity_type="head_wise", no_kda_lora=True)
LING_3_SPEC = dict(architecture="BailingMoeV3ForCausalLM", model_type="bailing_hybrid", transformers=True, layers=4,
                   hidden=512, heads=4, kv_heads=4, head_dim=128, intermediate=1024, experts=4, extra_config=LING_3)

# Ling-3.0 VL (bailing_moe_v3_vl.py; vLLM's own config class): LING_3 as text_config, a one-block Qwen3 vision tower
# (two heads of 128) and its projector.
LING_3_VISION = dict(depth=1, hidden_size=256, intermediate_size=512, num_heads=2, spatial_merge_size=2,
                     patch_size=16, temporal_patch_size=2, num_position_embeddings=2304, deepstack_visual_indexes=[])
LING_3_VL_SPEC = dict(architecture="BailingMoeV3VLForConditionalGeneration", model_type="bailing_moe_v3_vl",
                      transformers=True, layers=4, sizes_in_text_config=True, hidden=512, experts=4,
                      extra_config={"text_config": dict(LING_3, model_type="bailing_hybrid"),
                                    "vision_config": LING_3_VISION},
                      extra_tensors=bailing_v3_vision_tensors(LING_3_VISION, 512))


def ling_spec(config: dict, architecture: str, **fields) -> dict:
    return {"architecture": architecture, "model_type": config["model_type"], "layers": 0, "hidden": 512,
            "vocab": 1000, "experts": 4, "extra_config": config, "extra_tensors": bailing_tensors(config), **fields}

# Sarvam (sarvam.py), written by transformers 5.24's classes with the keys of the hub's remote-code configs: a dense
# layer 0, then MoE with sigmoid routing, the expert bias and a shared expert. Sarvam-30B (sarvam_moe) is Ling's
# bailing_moe.py under inclusionAI's names; Sarvam-105B (sarvam_mla) DeepSeek-V3's names, MLA without q-LoRA.
SARVAM = dict(hidden_size=512, intermediate_size=1024, num_hidden_layers=2, vocab_size=1000,
              max_position_embeddings=512, hidden_act="silu", rms_norm_eps=1e-6, num_experts=4, num_experts_per_tok=2,
              num_shared_experts=1, moe_intermediate_size=256, first_k_dense_replace=1, n_group=1, topk_group=1,
              norm_topk_prob=True, score_function="sigmoid", moe_router_enable_expert_bias=True,
              num_nextn_predict_layers=0)
SARVAM_MOE = dict(SARVAM, num_attention_heads=4, num_key_value_heads=2, head_dim=128,
                  moe_shared_expert_intermediate_size=256, use_bias=False, use_qkv_bias=False, use_qk_norm=True,
                  embedding_dropout=0.0, partial_rotary_factor=1.0)
SARVAM_MLA = dict(SARVAM, num_attention_heads=4, num_key_value_heads=4, q_lora_rank=None, kv_lora_rank=512,
                  qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128)


def sarvam_spec(config: dict, mla: bool = False, **fields) -> dict:
    return {"architecture": "SarvamMLAForCausalLM" if mla else "SarvamMoEForCausalLM",
            "model_type": "sarvam_mla" if mla else "sarvam_moe", "transformers": True, "layers": 2, "hidden": 512,
            "extra_config": config, **fields}

# Ricursive (ricursive.py, 0.34; no transformers class): Llama's names by hand plus each layer's output gate g_proj; a
# sliding layer and a full one.
RICURSIVE = dict(layer_types=["sliding_attention", "full_attention"], sliding_window=512, use_gated_attention=True,
                 rms_norm_eps=1e-6)


def ricursive_spec(gated: bool = True, **fields) -> dict:
    return {"architecture": "RicursiveForCausalLM", "model_type": "ricursive", "head_dim": 128, "hidden": 512,
            "extra_config": dict(RICURSIVE, use_gated_attention=gated),
            "extra_tensors": {f"model.layers.{i}.self_attn.g_proj.weight": (512, 512) for i in range(2) if gated},
            **fields}


# Inkling (vLLM reads its own config classes, not transformers': synth.inkling_tensors writes Thinking Machines'
# names, model.llm.*): sliding layers 0-1 with their own KV heads, a dense layer 0, then MoE with one shared sink
# expert.
INKLING_TEXT = dict(model_type="inkling_model", hidden_size=512, intermediate_size=256, dense_intermediate_size=1024,
                    num_hidden_layers=3, num_attention_heads=16, num_key_value_heads=2, head_dim=128,
                    swa_num_attention_heads=16, swa_num_key_value_heads=4, swa_head_dim=128, d_rel=16,
                    local_layer_ids=[0, 1], sliding_window_size=512, sconv_kernel_size=4, dense_mlp_idx=1,
                    n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2, use_gate_bias=True,
                    use_global_scale=True, shared_expert_sink=True, vocab_size=1000, max_position_embeddings=512)


def inkling_spec(architecture: str = "InklingForConditionalGeneration") -> dict:
    nested = architecture == "InklingForConditionalGeneration"
    return {"architecture": architecture, "model_type": "inkling_mm_model" if nested else "inkling_model",
            "layers": 0, "hidden": 512, "vocab": 1000, "experts": 4, "sizes_in_text_config": nested,
            "extra_tensors": inkling_tensors(INKLING_TEXT, "model.llm." if nested else "model."),
            "extra_config": {"text_config": INKLING_TEXT, "vision_config": {}, "audio_config": {}} if nested
            else INKLING_TEXT}


def _inkling_layers(root: str) -> dict[str, tuple[str, str]]:
    return {f"{root}layers.0.attn.qkvr": ("MergedColumnParallelLinear", "vllm:models/inkling"),
            f"{root}layers.0.attn.wo_ud": ("RowParallelLinear", "vllm:models/inkling"),
            f"{root}layers.0.mlp.w13_dn": ("ColumnParallelLinear", "vllm:models/inkling"),
            f"{root}layers.0.mlp.w2_md": ("RowParallelLinear", "vllm:models/inkling"),
            "lm_head": ("ParallelLMHead", "vllm:models/inkling")}

# MuseGlimmer (transformers' MuseGlimmerForConditionalGeneration; vLLM serves both registry names with one class):
# a sliding and a full layer, a one-block vision tower and its adapter, left BF16 as vLLM builds them.
MUSE_GLIMMER = {"text_config": {"hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 2,
                                "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 1000,
                                "sliding_window": 512, "layer_types": ["sliding_attention", "full_attention"],
                                "layer_rope_theta": [10000, 0], "max_position_embeddings": 512},
                "vision_config": {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 1,
                                  "num_attention_heads": 4},
                "out_hidden_size": 1024, "projector_hidden_size": 512}


def muse_glimmer_spec(architecture: str = "MuseGlimmerForConditionalGeneration") -> dict:
    return {"architecture": architecture, "model_type": "muse_glimmer", "transformers": True,
            "sizes_in_text_config": True, "extra_config": MUSE_GLIMMER,
            "ignore": ("lm_head", "re:model\\.vision_.*")}


_MUSE_GLIMMER_LAYERS = {
    "model.language_model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:muse_glimmer.py"),
    "model.language_model.layers.0.self_attn.gate_proj": ("ColumnParallelLinear", "vllm:muse_glimmer.py"),
    "model.language_model.layers.0.self_attn.o_proj": ("RowParallelLinear", "vllm:muse_glimmer.py"),
    "model.language_model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:muse_glimmer.py"),
    "model.vision_tower.layers.0.attn.qkv_proj": ("QKVParallelLinear", "vllm:muse_glimmer.py"),
    "model.vision_tower.layers.0.attn.proj": ("RowParallelLinear", "vllm:muse_glimmer.py"),
    "model.vision_tower.layers.0.mlp.fc1": ("nn.Linear", "vllm:muse_glimmer.py"),
    "model.vision_adapter.fc2": ("nn.Linear", "vllm:muse_glimmer.py"),
    "model.vision_projection": ("nn.Linear", "vllm:muse_glimmer.py")}

# Muse-Spark (transformers' MuseSparkForConditionalGeneration): a dense and a MoE layer (experts at moe_hidden_size
# between the pooling linears), a one-block vision tower and a four-stage audio tower, and the text keys vLLM's own
# config class reads bare. vLLM builds it under Quark on ROCm only, and there only with BF16 experts (FP8 experts want
# --moe-backend triton): the experts, the pooling linears and the towers left BF16.
MUSE_SPARK = {"text_config": {"hidden_size": 512, "intermediate_size": 1024, "num_hidden_layers": 2,
                              "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 1000,
                              "sliding_window": 512, "layer_types": ["sliding_attention", "full_attention"],
                              "layer_rope_theta": [500000.0, 0], "mlp_layer_types": ["dense", "sparse"],
                              "num_local_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 256,
                              "moe_hidden_size": 256, "num_shared_experts": 0, "max_position_embeddings": 512},
              "vision_config": {"hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 1,
                                "num_attention_heads": 4},
              "audio_config": {"out_hidden_size": 512, "hidden_sizes": [64, 128, 256, 512], "depths": [1, 1, 1, 1]},
              "out_hidden_size": 1024, "projector_hidden_size": 512}
_MUSE_SPARK_BF16 = ("lm_head", "re:model\\.vision_.*", "re:model\\.audio_.*", "re:.*_expert_proj$",
                    "re:.*\\.experts(\\..*)?$")


def muse_spark_spec(ignore: tuple[str, ...] = _MUSE_SPARK_BF16, **fields) -> dict:
    return {"architecture": "MuseSparkForConditionalGeneration", "model_type": "muse_spark", "transformers": True,
            "sizes_in_text_config": True, "extra_config": MUSE_SPARK, "ignore": ignore, "quant": "quark-fp8",
            **fields}


_MUSE_SPARK = "vllm:models/muse_spark/amd/model.py"
_MUSE_SPARK_LAYERS = {
    "model.language_model.layers.0.self_attn.qkv_proj": ("ColumnParallelLinear", _MUSE_SPARK),
    "model.language_model.layers.0.self_attn.o_proj": ("RowParallelLinear", _MUSE_SPARK),
    "model.language_model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", _MUSE_SPARK),
    "model.language_model.layers.1.mlp.gate": ("ReplicatedLinear", _MUSE_SPARK),
    "model.language_model.layers.1.mlp.pre_expert_proj": ("ReplicatedLinear", _MUSE_SPARK),
    "model.vision_tower.layers.0.attn.qkv_proj": ("QKVParallelLinear", "vllm:models/muse_spark/common/vision.py"),
    "model.vision_tower.patch_embedder.patch_embedding": ("ColumnParallelLinear",
                                                          "vllm:models/muse_spark/common/vision.py"),
    "model.vision_projection": ("RowParallelLinear", "vllm:models/muse_spark/common/omni.py"),
    "model.audio_tower.proj": ("ColumnParallelLinear", "vllm:models/muse_spark/common/audio.py")}

# (id, Spec fields, TP, {layer name: (vLLM class, layout)}) — each family at a TP size it is deployed with.
# MiniMax-M3 as the Hub's config.json writes it: layer 0 dense with full attention, layer 1 MoE with sparse attention
# (the indexer's 2 heads, as many as the KV heads, which MinimaxM3QKVParallelLinearWithIndexer asserts).
MINIMAX_M3 = {
    "text_config": dict(model_type="minimax_m3_vl_text", hidden_size=256, intermediate_size=256,
                        dense_intermediate_size=512, shared_intermediate_size=256, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=2, head_dim=128, vocab_size=1000,
                        num_local_experts=4, num_experts_per_tok=2, hidden_act="swigluoai", moe_layer_freq=[0, 1],
                        sparse_attention_config={"sparse_index_dim": 128, "sparse_num_index_heads": 2,
                                                 "sparse_topk_blocks": 16, "sparse_block_size": 128,
                                                 "sparse_attention_freq": [0, 1]}),
    "vision_config": dict(hidden_size=256, intermediate_size=512, num_hidden_layers=1, num_attention_heads=4,
                          patch_size=14, num_channels=3, layer_norm_eps=1e-5,
                          img_token_compression_config={"spatial_merge_size": 2, "temporal_patch_size": 2}),
    "projector_hidden_size": 256}
# Intern-S1 (a Qwen3-MoE text model) and InternVL3-hf (Qwen2), written by transformers' InternVL: the InternViT tower
# and projector BF16 (interns1.py builds them without a quant method).
INTERN_VISION = {"hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 1, "num_attention_heads": 4,
                 "image_size": [448, 448], "patch_size": [14, 14]}
INTERN_TEXT = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                   num_key_value_heads=2, head_dim=128, vocab_size=1000)
INTERN_S1 = dict(architecture="InternS1ForConditionalGeneration", model_type="internvl", **dict(
    HF, ignore=("lm_head", r"re:^model\.(vision_tower|multi_modal_projector)\.")), extra_config={
    "text_config": dict(INTERN_TEXT, model_type="qwen3_moe", architectures=["Qwen3MoeForCausalLM"], num_experts=4,
                        moe_intermediate_size=256, num_experts_per_tok=2, norm_topk_prob=True),
    "vision_config": dict(INTERN_VISION, use_qk_norm=True, norm_type="rms_norm"), "downsample_ratio": 0.5})
INTERNVL_HF = dict(architecture="InternVLForConditionalGeneration", model_type="internvl", **dict(
    HF, ignore=("language_model.lm_head", r"re:^(vision_tower|multi_modal_projector)\.")), extra_config={
    "text_config": dict(INTERN_TEXT, model_type="qwen2"), "vision_config": INTERN_VISION, "downsample_ratio": 0.5})
# ERNIE-4.5-VL in Baidu's format (remote-code config ernie4_5_moe_vl): 4 text (512 wide) and 4 vision experts (256) as
# mlp.experts.0-7, the routers mlp.gate.weight / weight_1 BF16 and ignored under vLLM's names (text_experts_gate,
# vision_experts_gate), the resampler and patch embedding BF16.
ERNIE_VL_CONFIG = dict(hidden_act="silu", head_dim=128, moe_num_experts=[4, 4], moe_intermediate_size=[512, 256],
                       moe_k=2, moe_num_shared_experts=1, moe_layer_start_index=[1, 1], moe_layer_end_index=[1, 1],
                       pixel_hidden_size=256, spatial_conv_size=2, temporal_conv_size=2, use_temporal_conv=True,
                       vision_config={"depth": 1, "embed_dim": 256, "hidden_size": 256, "num_heads": 4,
                                      "mlp_ratio": 4, "patch_size": 14, "spatial_merge_size": 2, "in_channels": 3})
ERNIE_VL = dict(architecture="Ernie4_5_VLMoeForConditionalGeneration", model_type="ernie4_5_moe_vl", transformers=True,
                ignore_routers=False, extra_config=ERNIE_VL_CONFIG,
                ignore=("lm_head", r"re:.*mlp\.gate$", r"re:.*experts_gate$", "vision_model.patch_embed.proj",
                        r"re:^model\.resampler_model\."))


# LLaVA (llava.py and its NeXT / NeXT-Video / OneVision siblings), written by transformers' own classes: a tower of two
# layers (CLIP, SigLIP without its pooling head, or Pixtral-HF), the text model text_config's (Llama, Mistral, Qwen2).
_LLAVA_TEXT = dict(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=2,
                   num_key_value_heads=1, head_dim=128, vocab_size=1000)
_LLAVA_VISION = dict(hidden_size=256, intermediate_size=1024, num_hidden_layers=2, num_attention_heads=4)
LLAVA_CLIP = {"model_type": "clip_vision_model", "image_size": 336, "patch_size": 14, **_LLAVA_VISION}


def llava_spec(arch="LlavaForConditionalGeneration", model_type="llava", text="llama", vision=None, ignore=(),
               **keys):
    """A LLaVA-family checkpoint (CLIP at vision_feature_layer -2 unless `vision` / `keys` say otherwise)."""
    return dict(architecture=arch, model_type=model_type, **dict(HF, ignore=("language_model.lm_head", *ignore)),
                extra_config={"text_config": dict(_LLAVA_TEXT, model_type=text), "vision_config": vision or LLAVA_CLIP,
                              "image_token_index": 900, "video_token_index": 901, "projector_hidden_act": "gelu",
                              **keys})


LLAVA_PIXTRAL = {"model_type": "pixtral", "head_dim": 64, "patch_size": 16, "image_size": 1024, **_LLAVA_VISION}
LLAVA_SIGLIP = {"model_type": "siglip_vision_model", "image_size": 384, "patch_size": 14, "vision_use_head": False,
                **_LLAVA_VISION}
# Idefics3 / SmolVLM (no weights mapper: model.vision_model, model.connector, model.text_model, lm_head) and
# PaliGemma-2 (a SigLIP tower whose pooling head is saved, the projector an nn.Linear stored BF16, Gemma-2 tied).
_IDEFICS3_VISION = dict(image_size=364, patch_size=14, **_LLAVA_VISION)


def idefics3_spec(arch="Idefics3ForConditionalGeneration", model_type="idefics3", vision_type="idefics3_vision"):
    return dict(architecture=arch, model_type=model_type, **HF, extra_config={
        "text_config": dict(_LLAVA_TEXT, model_type="llama"), "scale_factor": 2, "image_token_id": 900,
        "vision_config": dict(_IDEFICS3_VISION, model_type=vision_type)})


_IDEFICS3_LAYERS = {"model.vision_model.encoder.layers.1.self_attn.qkv_proj": ("QKVParallelLinear",
                                                                              "vllm:idefics2_vision_model.py"),
                    "model.vision_model.encoder.layers.1.mlp.fc2": ("RowParallelLinear", "vllm:idefics2_vision_model.py"),
                    "model.connector.modality_projection.proj": ("ReplicatedLinear", "vllm:idefics3.py")}
PALIGEMMA2 = dict(architecture="PaliGemmaForConditionalGeneration", model_type="paligemma", tie_embeddings=True,
                  **dict(HF, ignore=("re:.*multi_modal_projector.*",)), extra_config={
                      "text_config": dict(_LLAVA_TEXT, model_type="gemma2", tie_word_embeddings=True),
                      "image_token_index": 900, "vision_config": {
                          "model_type": "siglip_vision_model", "image_size": 224, "patch_size": 14,
                          "projection_dim": 256, **_LLAVA_VISION}})
_LLAVA_CLIP_LAYERS = {
    "vision_tower.vision_model.encoder.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:clip.py"),
    "vision_tower.vision_model.encoder.layers.0.self_attn.out_proj": ("RowParallelLinear", "vllm:clip.py"),
    "vision_tower.vision_model.encoder.layers.0.mlp.fc1": ("ColumnParallelLinear", "vllm:clip.py")}


# ninth round (fam-texta): the families' specs (their FAMILIES entries below, their own tests at the end).
# DBRX as transformers' DbrxForCausalLM saves it: attn_config / ffn_config nested, experts flattened
# (ffn.experts.mlp.w1 / v1 / w2, [E x I, H] each, FP8 with their scales beside them).
DBRX_SPEC = dict(architecture="DbrxForCausalLM", model_type="dbrx", transformers=True, layers=2, hidden=256, heads=2,
                 kv_heads=1, head_dim=None, vocab=1000, extra_config=dict(
                     pad_token_id=0, bos_token_id=1, eos_token_id=2, d_model=256, n_heads=2, n_layers=2,
                     attn_config={"kv_n_heads": 1, "clip_qkv": 8.0, "rope_theta": 500000.0},
                     ffn_config={"ffn_hidden_size": 256, "moe_num_experts": 4, "moe_top_k": 2}))
# MiniCPM3 as transformers' MiniCPM3ForCausalLM saves it: q_lora_rank set, 4 heads of 64 + 64 (V 64).
MINICPM3_SPEC = dict(architecture="MiniCPM3ForCausalLM", model_type="minicpm3", transformers=True, layers=2,
                     hidden=512, heads=4, kv_heads=4, head_dim=None, vocab=1000, extra_config=dict(
                         pad_token_id=0, bos_token_id=1, eos_token_id=2, qk_nope_head_dim=64, qk_rope_head_dim=64,
                         v_head_dim=64, q_lora_rank=256, kv_lora_rank=192, tie_word_embeddings=False))
# TeleChat2 as Tele-AI saves it (remote code, model_type telechat): transformer.h.N, query and the head-interleaved
# key_value, multi-head attention (2 heads of 128).
TELECHAT2_SPEC = dict(architecture="TeleChat2ForCausalLM", model_type="telechat", names="telechat2",
                      text_prefix="transformer", embedding="word_embeddings", hidden=256, heads=2, kv_heads=2,
                      extra_config=dict(n_layer=2, n_head=2, ffn_hidden_size=512, layer_norm_epsilon=1e-5))
# A.X K1 as transformers' AXK1ForCausalLM saves it: q-LoRA MLA, a dense layer, then a MoE layer with a shared expert.
AXK1_SPEC = dict(architecture="AXK1ForCausalLM", model_type="axk1", transformers=True, layers=2, hidden=512, heads=4,
                 kv_heads=4, head_dim=None, vocab=1000, extra_config=dict(
                     pad_token_id=0, bos_token_id=1, eos_token_id=2, q_lora_rank=256, kv_lora_rank=256,
                     qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=4,
                     num_experts_per_tok=2, n_group=1, topk_group=1, moe_intermediate_size=256, n_shared_experts=1,
                     mlp_layer_types=["dense", "sparse"]))

# ninth round (fam-audio): the audio families' specs (their layout rows end FAMILIES; their tests end the file)
from fp8check.synth import (  # noqa: E402  (this round's block, kept apart for the merge)
    qwen3_asr_audio_tensors, whisper_encoder_tensors,
)

# Whisper: transformers' own class at tiny widths (d_model 256, 4 heads of 64, one encoder and one decoder layer), the
# head tied to the decoder's embed_tokens.
WHISPER_SPEC = dict(architecture="WhisperForConditionalGeneration", model_type="whisper", transformers=True,
                    sizes_in_text_config=True, tie_embeddings=True, ignore=("proj_out",), extra_config=dict(
                        d_model=256, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
                        decoder_attention_heads=4, encoder_ffn_dim=512, decoder_ffn_dim=512, vocab_size=1000,
                        num_mel_bins=80, max_source_positions=64, max_target_positions=64, tie_word_embeddings=True,
                        pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1))

# Ultravox (vLLM's UltravoxConfig): a Llama text model, a one-layer Whisper encoder (d_model 256, 4 heads) under
# audio_tower., the feed-forward projector (stack_factor 2, swiglu).
_ULTRAVOX_AUDIO = dict(model_type="whisper", d_model=256, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
                       decoder_attention_heads=4, encoder_ffn_dim=512, decoder_ffn_dim=512, num_mel_bins=80,
                       max_source_positions=64)
ULTRAVOX_SPEC = dict(architecture="UltravoxModel", model_type="ultravox", text_prefix="language_model.model",
                     hidden=512, ignore=("language_model.lm_head",), extra_tensors={
                         **whisper_encoder_tensors("audio_tower", _ULTRAVOX_AUDIO),
                         "multi_modal_projector.linear_1.weight": (1024, 512),
                         "multi_modal_projector.linear_2.weight": (512, 512)},
                     extra_config={"text_config": {"model_type": "llama", "hidden_size": 512, "intermediate_size": 512,
                                                   "num_hidden_layers": 2, "num_attention_heads": 4,
                                                   "num_key_value_heads": 2, "vocab_size": 1000},
                                   "audio_config": _ULTRAVOX_AUDIO, "hidden_size": 1024, "stack_factor": 2})

# GLM-ASR and Audio Flamingo 3: transformers' own classes at tiny widths (a one-layer encoder of 256, 4 heads), over
# a text model of transformers' default class for them (Llama, Qwen2).
_AUDIO_TEXT = dict(hidden_size=512, intermediate_size=512, num_hidden_layers=1, num_attention_heads=4,
                   num_key_value_heads=2, head_dim=128, vocab_size=1000, tie_word_embeddings=False)
GLM_ASR_SPEC = dict(architecture="GlmAsrForConditionalGeneration", model_type="glmasr", transformers=True,
                    sizes_in_text_config=True, ignore=("language_model.lm_head",), extra_config=dict(
                        text_config=dict(_AUDIO_TEXT, model_type="llama"), tie_word_embeddings=False,
                        audio_config=dict(model_type="glmasr_encoder", hidden_size=256, intermediate_size=512,
                                          num_hidden_layers=1, num_attention_heads=4)))
AUDIO_FLAMINGO_3_SPEC = dict(architecture="AudioFlamingo3ForConditionalGeneration", model_type="audioflamingo3",
                             transformers=True, sizes_in_text_config=True,
                             ignore=("language_model.lm_head", "re:.*audio_tower.*", "re:.*multi_modal_projector.*"),
                             extra_config=dict(text_config=dict(_AUDIO_TEXT, model_type="qwen2"), audio_config=dict(
                                 model_type="audioflamingo3_encoder", d_model=256, encoder_ffn_dim=512,
                                 encoder_layers=1, encoder_attention_heads=4, max_source_positions=64)))

# Granite Speech: transformers' own class at tiny widths (a two-block conformer of 256, 4 heads of 64, CTC out 128, a
# one-layer Q-Former), over a Granite text model; the conformer blocks, input_linear and projector stored BF16.
GRANITE_SPEECH_SPEC = dict(
    architecture="GraniteSpeechForConditionalGeneration", model_type="granite_speech", transformers=True,
    sizes_in_text_config=True,
    ignore=("language_model.lm_head", r"re:encoder\.layers\..*", "encoder.input_linear", r"re:projector\..*"),
    extra_config=dict(
        text_config=dict(_AUDIO_TEXT, model_type="granite"), tie_word_embeddings=False, audio_token_index=7,
        encoder_config=dict(model_type="granite_speech_encoder", hidden_dim=256, num_layers=2, num_heads=4,
                            dim_head=64, input_dim=160, output_dim=128),
        projector_config=dict(model_type="blip_2_qformer", hidden_size=256, num_hidden_layers=1,
                              num_attention_heads=4, intermediate_size=512, encoder_hidden_size=256)))

# Qwen3-ASR in Qwen's own format (thinker_config, thinker.* names): a Qwen3 text model, a one-layer audio encoder of 256
# (4 heads), stored BF16.
_QWEN3_ASR_AUDIO = dict(model_type="qwen3_asr_audio_encoder", d_model=256, encoder_layers=1, encoder_attention_heads=4,
                        encoder_ffn_dim=512, output_dim=512, downsample_hidden_size=64, num_mel_bins=128)
QWEN3_ASR_SPEC = dict(architecture="Qwen3ASRForConditionalGeneration", model_type="qwen3_asr",
                      text_prefix="thinker.model", head="thinker.lm_head", sizes_in_text_config=True, hidden=512,
                      heads=4, kv_heads=2, head_dim=128, intermediate=512,
                      ignore=("thinker.lm_head", "re:.*audio_tower.*"),
                      extra_tensors=qwen3_asr_audio_tensors("thinker.audio_tower", _QWEN3_ASR_AUDIO),
                      extra_config={"thinker_config": {"audio_config": _QWEN3_ASR_AUDIO, "text_config": dict(
                          _AUDIO_TEXT, model_type="qwen3", num_hidden_layers=2)}})

# MiDashengLM (vLLM's MiDashengLMConfig): a one-block Dasheng encoder of 256 (4 heads), the subsampling projector (2
# frames), a Qwen2 text model under decoder., under the names the model loads.
_DASHENG_BLOCK = "audio_encoder.blocks.0"
MIDASHENGLM_SPEC = dict(
    architecture="MiDashengLMModel", model_type="midashenglm", text_prefix="decoder.model", head="decoder.lm_head",
    sizes_in_text_config=True, hidden=512, heads=4, kv_heads=2, head_dim=128, intermediate=512, layers=1,
    ignore=("decoder.lm_head",), extra_tensors={
        f"{_DASHENG_BLOCK}.attn.qkv.weight": (768, 256), f"{_DASHENG_BLOCK}.attn.proj.weight": (256, 256),
        f"{_DASHENG_BLOCK}.mlp.fc1.weight": (1024, 256), f"{_DASHENG_BLOCK}.mlp.fc2.weight": (256, 1024),
        "audio_projector.net.0.weight": (512, 512), "audio_projector.net.2.weight": (512, 512)},
    extra_config={"audio_encoder_config": {"embed_dim": 256, "depth": 1, "num_heads": 4},
                  "text_config": dict(_AUDIO_TEXT, model_type="qwen2"), "subsample_factor": 2})

# Fun-Audio-Chat (vLLM's FunAudioChatConfig): a one-layer continuous encoder of 256 (4 heads), the discrete encoder's
# matching linears, a Qwen3 text model, under the names the model loads; the towers BF16.
_FUN_ENCODER = "continuous_audio_tower.layers.0"
FUN_AUDIO_CHAT_SPEC = dict(
    architecture="FunAudioChatForConditionalGeneration", model_type="funaudiochat", text_prefix="language_model.model",
    sizes_in_text_config=True, hidden=512, heads=4, kv_heads=2, head_dim=128, intermediate=512, layers=1,
    ignore=("language_model.lm_head", "re:.*audio_tower.*"), extra_tensors={
        **{f"{_FUN_ENCODER}.self_attn.{leaf}.weight": (256, 256)
           for leaf in ("q_proj", "k_proj", "v_proj", "out_proj")},
        f"{_FUN_ENCODER}.fc1.weight": (512, 256), f"{_FUN_ENCODER}.fc2.weight": (256, 512),
        "continuous_audio_tower.proj.weight": (512, 256), "continuous_audio_tower.audio_bos_eos_token.weight": (2, 512),
        "audio_tower.embed_tokens.weight": (64, 512), "audio_tower.output_matching.weight": (512, 512),
        "audio_tower.continual_output_matching.weight": (512, 512)},
    extra_config={"audio_config": {"d_model": 256, "encoder_layers": 1, "encoder_attention_heads": 4,
                                   "encoder_ffn_dim": 512, "output_dim": 512, "codebook_size": 64, "pad_token_id": 0},
                  "text_config": dict(_AUDIO_TEXT, model_type="qwen3")})

FAMILIES = [
    ("llama-2-mha", dict(architecture="LlamaForCausalLM", kv_heads=4, head_dim=128), 4,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:llama.py")}),
    ("llama-3.x-gqa", dict(architecture="LlamaForCausalLM", head_dim=128), 2,
     {"model.layers.1.mlp.down_proj": ("RowParallelLinear", "vllm:llama.py")}),
    ("mistral", dict(architecture="MistralForCausalLM", head_dim=128), 2,
     {"model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:mistral.py")}),
    ("ministral-3", dict(architecture="Ministral3ForCausalLM", model_type="ministral3", **HF), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:mistral.py")}),
    ("mixtral", dict(architecture="MixtralForCausalLM", moe_style="mixtral", experts=4, head_dim=128), 2,
     {"model.layers.0.block_sparse_moe.gate": ("ReplicatedLinear", "vllm:mixtral.py")}),
    ("qwen2", dict(architecture="Qwen2ForCausalLM", head_dim=128), 2,
     {"model.layers.0.self_attn.o_proj": ("RowParallelLinear", "vllm:qwen2.py")}),
    ("qwen3", dict(architecture="Qwen3ForCausalLM", head_dim=128), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen3.py")}),
    ("qwen2-moe", dict(architecture="Qwen2MoeForCausalLM", shared_experts=1, **QWEN_MOE), 2,
     {"model.layers.0.mlp.shared_expert_gate": ("ReplicatedLinear", "vllm:qwen2_moe.py"),
      "model.layers.0.mlp.shared_expert.gate_up_proj": ("MergedColumnParallelLinear", "vllm:qwen2_moe.py")}),
    ("qwen3-moe", dict(architecture="Qwen3MoeForCausalLM", **QWEN_MOE), 2,
     {"model.layers.0.mlp.gate": ("ReplicatedLinear", "vllm:qwen3_moe.py")}),
    ("glm-4.5", dict(architecture="Glm4MoeForCausalLM", moe_style="deepseek", shared_experts=1, first_k_dense=1,
                     mtp_layers=1, **QWEN_MOE), 2,
     {"model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:glm4_moe.py"),
      "model.layers.1.mlp.shared_experts.down_proj": ("RowParallelLinear", "vllm:glm4_moe.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:glm4_moe.py")}),
    ("minimax-m2", dict(architecture="MiniMaxM2ForCausalLM", moe_style="mixtral", mtp_layers=1,
                        mtp_key="num_mtp_modules", **QWEN_MOE), 2,
     {"model.layers.1.block_sparse_moe.gate": ("ReplicatedLinear", "vllm:minimax_m2.py")}),
    ("gemma", dict(architecture="GemmaForCausalLM", head_dim=128), 2,
     {"model.layers.0.mlp.down_proj": ("RowParallelLinear", "vllm:transformers/causal.py")}),  # 0.34: the backend
    *((family, dict(architecture=arch, model_type=model_type, **{**TF, **fields}), 2,
       {f"model.layers.0.{name}": (cls, "vllm:transformers/causal.py") for name, cls in expected.items()})
      for family, arch, model_type, fields, expected in (
          ("arcee", "ArceeForCausalLM", "arcee", {}, {"mlp.up_proj": "ColumnParallelLinear"}),
          ("cwm", "CwmForCausalLM", "cwm", {}, {"self_attn.qkv_proj": "QKVParallelLinear"}),
          ("glm-4", "GlmForCausalLM", "glm", {}, {"mlp.gate_up_proj": "ColumnParallelLinear"}),  # colwise_gather_output
          ("jais-2", "Jais2ForCausalLM", "jais2", {}, {"mlp.down_proj": "RowParallelLinear"}),
          ("olmo", "OlmoForCausalLM", "olmo", {}, {"self_attn.o_proj": "RowParallelLinear"}),
          ("olmo-2", "Olmo2ForCausalLM", "olmo2", {}, {"self_attn.qkv_proj": "QKVParallelLinear"}),
          ("olmo-3", "Olmo3ForCausalLM", "olmo3", {}, {"mlp.down_proj": "RowParallelLinear"}),
          ("phi-2", "PhiForCausalLM", "phi", {}, {"self_attn.dense": "RowParallelLinear",
                                               "mlp.fc1": "ColumnParallelLinear"}),
          ("seed-oss", "SeedOssForCausalLM", "seed_oss", {}, {"self_attn.qkv_proj": "QKVParallelLinear"}),
          ("smollm-3", "SmolLM3ForCausalLM", "smollm3", {}, {"mlp.gate_up_proj": "MergedColumnParallelLinear"}),
          ("stablelm", "StableLmForCausalLM", "stablelm", dict(hidden=512, head_dim=None),  # no head_dim key,
           {"self_attn.o_proj": "RowParallelLinear"}),                                 # no tp_plan
          ("starcoder-2", "Starcoder2ForCausalLM", "starcoder2", {}, {"mlp.c_fc": "ColumnParallelLinear",
                                                                  "mlp.c_proj": "RowParallelLinear"}),
          ("vaultgemma", "VaultGemmaForCausalLM", "vaultgemma", {},
           {"mlp.gate_up_proj": "MergedColumnParallelLinear"}),
      )),
    *((family, dict(architecture=arch, model_type=model_type, **OLMOE), 2,
       {"model.layers.0.mlp.gate": ("ReplicatedLinear", "vllm:transformers/moe.py"),
        "model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:transformers/moe.py")})
      for family, arch, model_type in (("olmoe", "OlmoeForCausalLM", "olmoe"),
                                       ("flex-olmo", "FlexOlmoForCausalLM", "flex_olmo"))),
    ("telechat-3", dict(architecture="TeleChat3ForCausalLM", model_type="llama", **TF), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:llama.py"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:llama.py")}),
    ("hyperclovax", dict(architecture="HyperCLOVAXForCausalLM", model_type="hyperclovax", **TF), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:hyperclovax.py"),
      "model.layers.0.mlp.down_proj": ("RowParallelLinear", "vllm:hyperclovax.py")}),
    ("mellum", dict(architecture="MellumForCausalLM", model_type="mellum", layers=2, **MELLUM), 2,
     {"model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:transformers/moe.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:transformers/moe.py"),
      "model.layers.1.self_attn.o_proj": ("RowParallelLinear", "vllm:transformers/moe.py")}),
    ("kolibri-1", dict(architecture="Kolibri1ForCausalLM", model_type="kolibri1", layers=2, **KOLIBRI1), 2,
     {"model.layers.0.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:transformers/moe.py"),
      "model.layers.0.mlp.shared_experts.down_proj": ("RowParallelLinear", "vllm:transformers/moe.py"),
      "model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:transformers/moe.py")}),
    ("gemma-2", dict(architecture="Gemma2ForCausalLM", head_dim=128), 2,
     {"model.layers.0.mlp.down_proj": ("RowParallelLinear", "vllm:gemma2.py")}),
    ("gemma-3", dict(architecture="Gemma3ForCausalLM", head_dim=128), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:gemma3.py")}),
    ("gemma-3-vision", dict(architecture="Gemma3ForConditionalGeneration", head_dim=128, vision="siglip",
                            text_prefix="language_model.model", ignore=("language_model.lm_head",)), 2,
     {"vision_tower.vision_model.encoder.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:siglip.py"),
      "vision_tower.vision_model.encoder.layers.0.self_attn.out_proj": ("RowParallelLinear", "vllm:siglip.py"),
      "vision_tower.vision_model.encoder.layers.0.mlp.fc1": ("ColumnParallelLinear", "vllm:siglip.py")}),
    ("phi-3", dict(architecture="Phi3ForCausalLM", head_dim=128, fused_on_disk=True), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:phi3.py"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:phi3.py")}),
    ("gpt-oss", dict(architecture="GptOssForCausalLM", moe_style="gpt_oss", attention_sinks=True, **QWEN_MOE), 2,
     {"model.layers.0.mlp.router": ("ReplicatedLinear", "vllm:gpt_oss.py")}),
    ("llama-4-text", dict(architecture="Llama4ForCausalLM", moe_style="llama4", shared_experts=1, **QWEN_MOE), 2,
     {"model.layers.0.feed_forward.router": ("ReplicatedLinear", "vllm:llama4.py"),
      "model.layers.0.feed_forward.shared_expert.down_proj": ("RowParallelLinear", "vllm:llama4.py")}),
    ("llama-4-vision", dict(architecture="Llama4ForConditionalGeneration", moe_style="llama4", shared_experts=1,
                            text_prefix="language_model.model", vision="llama4", ignore=("language_model.lm_head",),
                            **QWEN_MOE), 2,
     {"vision_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:mllama4.py"),
      "vision_model.model.layers.0.mlp.fc2": ("RowParallelLinear", "vllm:mllama4.py"),
      "multi_modal_projector.linear_1": ("ColumnParallelLinear", "vllm:mllama4.py")}),
    ("mistral-3", dict(architecture="Mistral3ForConditionalGeneration", head_dim=128, vision="pixtral",
                       text_prefix="language_model.model",
                       ignore=("language_model.lm_head", "multi_modal_projector.patch_merger.merging_layer")), 2,
     {"vision_tower.transformer.layers.0.attention.qkv_proj": ("QKVParallelLinear", "vllm:pixtral.py"),
      "vision_tower.transformer.layers.0.feed_forward.gate_up_proj": ("MergedColumnParallelLinear", "vllm:pixtral.py"),
      "multi_modal_projector.linear_1": ("ColumnParallelLinear", "vllm:mistral3.py"),
      "multi_modal_projector.linear_2": ("RowParallelLinear", "vllm:mistral3.py"),
      "multi_modal_projector.patch_merger.merging_layer": ("nn.Linear", "vllm:mistral3.py")}),
    ("qwen2.5-vl", dict(architecture="Qwen2_5_VLForConditionalGeneration", head_dim=128, vision="qwen2_5_vl"), 2,
     {"visual.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:qwen2_5_vl.py"),
      "visual.blocks.0.attn.proj": ("RowParallelLinear", "vllm:qwen2_5_vl.py"),
      "visual.blocks.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:qwen2_5_vl.py"),
      "visual.merger.mlp.0": ("ColumnParallelLinear", "vllm:qwen2_5_vl.py"),
      "visual.merger.mlp.2": ("RowParallelLinear", "vllm:qwen2_5_vl.py"),
      "model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen2.py")}),
    ("qwen3-vl", dict(architecture="Qwen3VLForConditionalGeneration", head_dim=128, vision="qwen3_vl"), 2,
     {"visual.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:qwen3_vl.py"),
      "visual.blocks.0.mlp.linear_fc1": ("ColumnParallelLinear", "vllm:qwen3_vl.py"),
      "visual.deepstack_merger_list.0.linear_fc2": ("RowParallelLinear", "vllm:qwen3_vl.py")}),
    ("qwen3-vl-moe", dict(architecture="Qwen3VLMoeForConditionalGeneration", vision="qwen3_vl", **QWEN_MOE), 2,
     {"visual.blocks.0.attn.proj": ("RowParallelLinear", "vllm:qwen3_vl.py"),
      "model.layers.0.mlp.gate": ("ReplicatedLinear", "vllm:qwen3_vl_moe.py")}),
    ("deepseek-v2-lite", dict(architecture="DeepseekV2ForCausalLM", quant="fp8-block", mla=True, head_dim=128,
                              qk_rope_head_dim=64, moe_style="deepseek", experts=4, shared_experts=2,
                              first_k_dense=1), 2,
     {"model.layers.0.self_attn.kv_a_proj_with_mqa": ("ReplicatedLinear", "vllm:deepseek_v2.py"),
      "model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:deepseek_v2.py")}),
    ("deepseek-v3", dict(architecture="DeepseekV3ForCausalLM", quant="fp8-block", mla=True, head_dim=128,
                         qk_rope_head_dim=64, q_lora_rank=256, moe_style="deepseek", experts=4, shared_experts=1,
                         first_k_dense=1, mtp_layers=1), 2,
     {"model.layers.0.self_attn.fused_qkv_a_proj": ("DeepSeekV2FusedQkvAProjLinear", "vllm:deepseek_v2.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:deepseek_v2.py")}),
    # Mistral-Large-3 under vLLM's Mistral-format name: DeepSeek-V3's modules (mistral_large_3.py).
    ("mistral-large-3", dict(architecture="MistralLarge3ForCausalLM", model_type="deepseek_v3", quant="fp8-block",
                             mla=True, head_dim=128, qk_rope_head_dim=64, q_lora_rank=256, moe_style="deepseek",
                             experts=4, shared_experts=1, first_k_dense=1, mtp_layers=1), 2,
     {"model.layers.0.self_attn.fused_qkv_a_proj": ("DeepSeekV2FusedQkvAProjLinear", "vllm:mistral_large_3.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:mistral_large_3.py")}),
    # Mistral-Large-4, built from Mistral's own format only (params.json's `dsa`; the consolidated names renamed as
    # its loader does): MLA without q-LoRA, KV sharing / NoPE layers, indexers on the "full" layers, MoE.
    ("mistral-large-4", dict(architecture="MistralLarge4ForCausalLM", mistral_format=True, quant="fp8-block",
                             **MISTRAL_LARGE_4), 2,
     {"model.layers.0.self_attn.q_proj": ("ColumnParallelLinear", "vllm:models/mistral/mistral_large4"),
      "model.layers.0.self_attn.kv_a_proj_with_mqa": ("ReplicatedLinear", "vllm:models/mistral/mistral_large4"),
      "model.layers.1.self_attn.indexer.wk_weights_proj": ("MergedColumnParallelLinear",
                                                           "vllm:models/mistral/mistral_large4"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:models/mistral/mistral_large4")}),
    # Pixtral in Mistral's format: mistral.py's text model under language_model, the vision encoder, patch merger and
    # adapter built without quant_config (stored BF16).
    ("pixtral-mistral-format", dict(architecture="PixtralForConditionalGeneration", mistral_format=True,
                                    quant="fp8-static", vision="pixtral-mistral", head_dim=128,
                                    extra_config={"vision_encoder": PIXTRAL_ENCODER}), 2,
     {"language_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:mistral.py"),
      "vision_encoder.transformer.layers.0.attention.qkv_proj": ("QKVParallelLinear", "vllm:pixtral.py"),
      "vision_encoder.transformer.layers.0.feed_forward.gate_up_proj": ("MergedColumnParallelLinear",
                                                                        "vllm:pixtral.py"),
      "patch_merger.merging_layer": ("ReplicatedLinear", "vllm:pixtral.py"),
      "vision_language_adapter.w_out": ("ReplicatedLinear", "vllm:pixtral.py")}),
    # Voxtral in Mistral's format (BF16 here: an FP8 one's encoder is test_a_mistral_format_voxtral_*'s): the Whisper
    # encoder's qkv_proj over audio_config's heads, fc1 / fc2, the adapter's torch nn.Linears.
    ("voxtral-mistral-format", dict(architecture="VoxtralForConditionalGeneration", mistral_format=True, quant=None,
                                    vision="voxtral-mistral", head_dim=128,
                                    extra_config={"multimodal": {"whisper_model_args": WHISPER_ARGS}}), 2,
     {"language_model.model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:mistral.py"),
      "whisper_encoder.whisper_encoder.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:voxtral.py"),
      "whisper_encoder.whisper_encoder.layers.0.mlp.fc2": ("RowParallelLinear", "vllm:voxtral.py"),
      "audio_language_adapter.w_in": ("nn.Linear", "vllm:voxtral.py")}),
    ("deepseek-v3.2", dict(architecture="DeepseekV32ForCausalLM", model_type="deepseek_v32", extra_config=DSA,
                           **DSA_SPEC), 2,
     {"model.layers.0.self_attn.indexer.wq_b": ("ReplicatedLinear", "vllm:models/deepseek_v32"),
      "model.layers.0.self_attn.indexer.wk_weights_proj": ("MergedColumnParallelLinear", "vllm:models/deepseek_v32"),
      "model.layers.0.self_attn.fused_qkv_a_proj": ("DeepSeekV2FusedQkvAProjLinear", "vllm:models/deepseek_v32")}),
    ("glm-5", dict(architecture="GlmMoeDsaForCausalLM", model_type="glm_moe_dsa", extra_config=DSA, **DSA_SPEC), 2,
     {"model.layers.1.self_attn.indexer.wq_b": ("ReplicatedLinear", "vllm:models/deepseek_v32"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:models/deepseek_v32")}),
    ("deepseek-v4", dict(architecture="DeepseekV4ForCausalLM", model_type="deepseek_v4", quant="fp8-block",
                         extra_config=DSV4, **DSV4_SPEC), 2,
     {"model.layers.1.attn.fused_wqa_wkv": ("MergedColumnParallelLinear", "vllm:models/deepseek_v4"),
      "model.layers.1.attn.wo_b": ("RowParallelLinear", "vllm:models/deepseek_v4"),
      "model.layers.1.attn.indexer.wq_b": ("ReplicatedLinear", "vllm:models/deepseek_v4"),
      "model.layers.1.attn.compressor.fused_wkv_wgate": ("MergedColumnParallelLinear", "vllm:models/deepseek_v4"),
      "model.layers.1.ffn.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:models/deepseek_v4")}),
    ("deepseek-v4-vl", dict(architecture="DeepseekV4ForConditionalGeneration", model_type="deepseek_v4",
                            quant="fp8-block", extra_config=dict(DSV4, **DSV4_VISION), **DSV4_VL_SPEC), 2,
     {"layers.1.attn.fused_wqa_wkv": ("MergedColumnParallelLinear", "vllm:models/deepseek_v4"),
      "vision.blocks.0.attn.wqkv": ("QKVParallelLinear", "vllm:models/deepseek_v4"),
      "vision.blocks.0.mlp.w1": ("MergedColumnParallelLinear", "vllm:models/deepseek_v4"),
      "aligner.w2": ("RowParallelLinear", "vllm:models/deepseek_v4")}),
    ("deepseek-v4.1", dict(architecture="DeepseekV41ForCausalLM", model_type="deepseek_v41", quant="fp8-block",
                           extra_config=DSV41, **DSV41_SPEC), 2,
     {"layers.1.attn.fused_wqa_wkv": ("MergedColumnParallelLinear", "vllm:models/deepseek_v41"),
      "layers.1.attn.indexer.wk": ("ReplicatedLinear", "vllm:models/deepseek_v41"),
      "layers.3.attn.compressor.fused_wkv_wgate": ("MergedColumnParallelLinear", "vllm:models/deepseek_v41"),
      "layers.1.engram.wkv": ("ColumnParallelLinear", "vllm:models/deepseek_v41"),
      "vision.blocks.0.attn.wo": ("RowParallelLinear", "vllm:models/deepseek_v4")}),
    ("nemotron-h", dict(architecture="NemotronHForCausalLM", model_type="nemotron_h", quant="ct-fp8-dynamic",
                        extra_config=NEMOTRON_H, **HF), 2,
     {"backbone.layers.0.mixer.in_proj": ("MergedColumnParallelLinear", "vllm:nemotron_h.py"),
      "backbone.layers.0.mixer.conv1d": ("ColumnParallelLinear", "vllm:nemotron_h.py"),
      "backbone.layers.1.mixer.qkv_proj": ("QKVParallelLinear", "vllm:nemotron_h.py"),
      "backbone.layers.2.mixer.up_proj": ("ColumnParallelLinear", "vllm:nemotron_h.py"),
      "backbone.layers.3.mixer.gate": ("ReplicatedLinear", "vllm:nemotron_h.py")}),
    ("granite-4.0-h", dict(GRANITE, architecture="GraniteMoeHybridForCausalLM", model_type="granitemoehybrid",
                           extra_config=GRANITE_H), 1,
     {"model.layers.0.mamba.in_proj": ("MergedColumnParallelLinear", "vllm:granitemoehybrid.py"),
      "model.layers.0.mamba.conv1d": ("ColumnParallelLinear", "vllm:granitemoehybrid.py"),
      "model.layers.0.shared_mlp.input_linear": ("MergedColumnParallelLinear", "vllm:granitemoehybrid.py"),
      "model.layers.0.shared_mlp.output_linear": ("RowParallelLinear", "vllm:granitemoehybrid.py"),
      "model.layers.1.block_sparse_moe.router.layer": ("ReplicatedLinear", "vllm:granitemoehybrid.py"),
      "model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:granitemoehybrid.py")}),
    ("jamba", JAMBA_SPEC, 2,
     {"model.layers.0.mamba.in_proj": ("MergedColumnParallelLinear", "vllm:jamba.py"),
      "model.layers.0.mamba.x_proj": ("RowParallelLinear", "vllm:jamba.py"),
      "model.layers.0.mamba.dt_proj": ("ColumnParallelLinear", "vllm:jamba.py"),
      "model.layers.0.mamba.conv1d": ("ColumnParallelLinear", "vllm:jamba.py"),
      "model.layers.0.feed_forward.router": ("ReplicatedLinear", "vllm:jamba.py"),
      "model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:jamba.py"),
      "model.layers.1.feed_forward.gate_up_proj": ("MergedColumnParallelLinear", "vllm:jamba.py")}),
    ("falcon-h1", FALCON_H1_SPEC, 1,
     {"model.layers.0.mamba.in_proj": ("MergedColumnParallelLinear", "vllm:falcon_h1.py"),
      "model.layers.0.mamba.conv1d": ("ColumnParallelLinear", "vllm:falcon_h1.py"),
      "model.layers.0.mamba.out_proj": ("RowParallelLinear", "vllm:falcon_h1.py"),
      "model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:falcon_h1.py"),
      "model.layers.1.feed_forward.gate_up_proj": ("MergedColumnParallelLinear", "vllm:falcon_h1.py")}),
    ("granite-3", dict(GRANITE, architecture="GraniteForCausalLM", model_type="granite"), 2,
     {"model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:granite.py")}),
    ("granite-moe", dict(GRANITE, architecture="GraniteMoeForCausalLM", model_type="granitemoe",
                         extra_config=GRANITE_MOE), 2,
     {"model.layers.0.block_sparse_moe.router.layer": ("ReplicatedLinear", "vllm:granitemoe.py")}),
    ("granite-moe-shared", dict(GRANITE, architecture="GraniteMoeSharedForCausalLM", model_type="granitemoeshared",
                                extra_config=dict(GRANITE_MOE, shared_intermediate_size=256)), 2,
     {"model.layers.0.shared_mlp.input_linear": ("MergedColumnParallelLinear", "vllm:granitemoeshared.py")}),
    ("granite-swa", dict(GRANITE, architecture="GraniteSWAForCausalLM", model_type="granite_swa",
                         extra_config=dict(GRANITE["extra_config"], **GRANITE_SWA)), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:granite.py"),
      "model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:granite.py")}),
    ("granite-moe-swa", dict(GRANITE, architecture="GraniteMoeSWAForCausalLM", model_type="granitemoe_swa",
                             extra_config=dict(GRANITE_MOE, shared_intermediate_size=256, **GRANITE_SWA)), 2,
     {"model.layers.0.block_sparse_moe.router": ("ReplicatedLinear", "vllm:granitemoeshared.py"),
      "model.layers.0.shared_mlp.input_linear": ("MergedColumnParallelLinear", "vllm:granitemoeshared.py")}),
    ("olmo-hybrid", OLMO_HYBRID_SPEC, 2,
     {"model.layers.0.linear_attn.in_proj_qkvg": ("MergedColumnParallelLinear", "vllm:olmo_hybrid.py"),
      "model.layers.0.linear_attn.b_proj": ("ColumnParallelLinear", "vllm:olmo_hybrid.py"),
      "model.layers.0.linear_attn.conv1d": ("ColumnParallelLinear", "vllm:olmo_hybrid.py"),
      "model.layers.0.linear_attn.o_proj": ("RowParallelLinear", "vllm:olmo_hybrid.py"),
      "model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:olmo_hybrid.py")}),
    ("mamba", MAMBA_SPEC, 2,
     {"backbone.layers.0.mixer.in_proj": ("MergedColumnParallelLinear", "vllm:mamba.py"),
      "backbone.layers.0.mixer.x_proj": ("RowParallelLinear", "vllm:mamba.py"),
      "backbone.layers.1.mixer.conv1d": ("ColumnParallelLinear", "vllm:mamba.py")}),
    ("falcon-mamba", dict(MAMBA_SPEC, architecture="FalconMambaForCausalLM", model_type="falcon_mamba"), 2,
     {"backbone.layers.0.mixer.dt_proj": ("ColumnParallelLinear", "vllm:mamba.py")}),
    ("mamba2", MAMBA2_SPEC, 1,
     {"backbone.layers.0.mixer.in_proj": ("MergedColumnParallelLinear", "vllm:mamba2.py"),
      "backbone.layers.0.mixer.conv1d": ("ColumnParallelLinear", "vllm:mamba2.py"),
      "backbone.layers.1.mixer.out_proj": ("RowParallelLinear", "vllm:mamba2.py")}),
    ("ernie-4.5", dict(architecture="Ernie4_5ForCausalLM", model_type="ernie4_5", extra_config={"use_bias": False},
                       **HF), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:ernie45.py")}),
    ("ernie-4.5-moe", dict(architecture="Ernie4_5_MoeForCausalLM", model_type="ernie4_5_moe", extra_config=ERNIE_MOE,
                           extra_tensors={"model.mtp_linear_proj.0.weight": (256, 512)}, **HF), 2,
     {"model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:ernie45_moe.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:ernie45_moe.py"),
      "model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:ernie45_moe.py")}),
    ("gemma-4", dict(architecture="Gemma4ForCausalLM", model_type="gemma4_text", tie_embeddings=True,
                     extra_config=GEMMA4, **HF), 2,
     {"model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:gemma4.py"),
      "model.layers.0.router.proj": ("ReplicatedLinear", "vllm:gemma4.py")}),
    ("gemma-4-vl", dict(architecture="Gemma4ForConditionalGeneration", model_type="gemma4", tie_embeddings=True,
                        extra_config={"text_config": dict(GEMMA4, model_type="gemma4_text", hidden_size=256,
                                                          intermediate_size=512, num_attention_heads=4,
                                                          num_key_value_heads=2, vocab_size=1000),
                                      "vision_config": {"model_type": "gemma4_vision", "hidden_size": 256,
                                                        "intermediate_size": 512, "num_hidden_layers": 1,
                                                        "num_attention_heads": 2, "num_key_value_heads": 2,
                                                        "head_dim": 128, "patch_size": 16},
                                      "audio_config": None}, **HF), 2,
     {"model.vision_tower.encoder.layers.0.self_attn.q_proj.linear": ("ReplicatedLinear", "vllm:gemma4_mm.py"),
      "model.embed_vision.embedding_projection": ("ReplicatedLinear", "vllm:gemma4_mm.py"),
      "model.language_model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:gemma4_mm.py")}),
    # Gemma-3n at TP 1: Laurel's rank (32) splits into no 128-block at TP 2 (vLLM's own block error)
    ("gemma-3n", dict(architecture="Gemma3nForCausalLM", model_type="gemma3n_text", tie_embeddings=True,
                      transformers=True, extra_config=GEMMA3N_TEXT), 1,
     {"model.layers.0.altup.modality_router": ("ReplicatedLinear", "vllm:gemma3n.py"),
      "model.layers.0.laurel.linear_right": ("RowParallelLinear", "vllm:gemma3n.py")}),
    ("gemma-3n-vl", dict(architecture="Gemma3nForConditionalGeneration", model_type="gemma3n", tie_embeddings=True,
                         transformers=True, sizes_in_text_config=True, extra_config=GEMMA3N_VL,
                         extra_tensors=gemma3n_tower_tensors(GEMMA3N_VL),
                         ignore=("re:.*vision_tower.*", "re:.*audio_tower.*", "re:.*embed_vision.*",
                                 "re:.*embed_audio.*")), 1,
     {"model.audio_tower.conformer.0.attention.post": ("nn.Linear", "vllm:gemma3n_mm.py"),
      "model.embed_audio.embedding_projection": ("RowParallelLinear", "vllm:gemma3n_mm.py"),
      "model.language_model.per_layer_model_projection": ("ColumnParallelLinear", "vllm:gemma3n_mm.py")}),
    ("phi-3-vision", dict(architecture="Phi3VForCausalLM", model_type="phi3_v", transformers=True,
                          extra_config=PHI3V, extra_tensors=phi3v_vision_tensors(256),
                          ignore=("lm_head", "re:.*img_projection.*")), 2,
     {"model.vision_embed_tokens.img_processor.vision_model.encoder.layers.0.self_attn.qkv_proj": (
         "QKVParallelLinear", "vllm:clip.py"),
      "model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:phi3v.py")}),
    ("laguna", dict(architecture="LagunaForCausalLM", model_type="laguna", extra_config=LAGUNA,
                    **dict(HF, ignore=("lm_head", "re:.*g_proj$"))), 2,  # per-head gates: a row per head
     {"model.layers.0.mlp.gate_proj": ("ColumnParallelLinear", "vllm:laguna.py"),
      "model.layers.1.mlp.shared_expert.up_proj": ("ColumnParallelLinear", "vllm:laguna.py"),
      "model.layers.1.self_attn.g_proj": ("ColumnParallelLinear", "vllm:laguna.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:laguna.py")}),
    ("exaone-3", dict(architecture="ExaoneForCausalLM", model_type="exaone", **HF), 2,
     {"transformer.h.0.attn.attention.qkv_proj": ("QKVParallelLinear", "vllm:exaone.py"),
      "transformer.h.0.attn.attention.out_proj": ("RowParallelLinear", "vllm:exaone.py"),
      "transformer.h.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:exaone.py"),
      "transformer.h.1.mlp.c_proj": ("RowParallelLinear", "vllm:exaone.py")}),
    ("exaone-4", dict(architecture="Exaone4ForCausalLM", model_type="exaone4", extra_config=EXAONE4, **HF), 2,
     {"model.layers.3.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:exaone4.py"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:exaone4.py")}),
    ("exaone-moe", dict(architecture="ExaoneMoEForCausalLM", model_type="exaone_moe", extra_config=EXAONE_MOE,
                        extra_tensors=EXAONE_MTP, **HF), 2,
     {"model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:exaone_moe.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:exaone_moe.py"),
      "model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:exaone_moe.py")}),
    ("exaone-moe-spelling", dict(architecture="ExaoneMoeForCausalLM", model_type="exaone_moe", extra_config=EXAONE_MOE,
                             **HF), 2,
     {"model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:exaone_moe.py")}),
    ("exaone-4.5", dict(architecture="Exaone4_5_ForConditionalGeneration", model_type="exaone4_5",
                        extra_config={"text_config": dict(EXAONE4, model_type="exaone4_5_text", hidden_size=256,
                                                          intermediate_size=512, num_attention_heads=4,
                                                          num_key_value_heads=2, head_dim=128, vocab_size=1000),
                                      "vision_config": dict(VISION, model_type="exaone4_5_vision", hidden_size=512,
                                                            num_heads=4, num_key_value_heads=2, intermediate_size=512,
                                                            out_hidden_size=256, fullatt_block_indexes=[0])},
                        extra_tensors=EXAONE_MTP, **HF), 2,
     {"model.language_model.layers.3.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:exaone4_5.py"),
      "model.visual.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:exaone4_5.py"),
      "model.visual.blocks.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:exaone4_5.py"),
      "model.visual.merger.mlp.2": ("RowParallelLinear", "vllm:exaone4_5.py")}),
    ("step-3.5", dict(architecture="Step3p5ForCausalLM", model_type="step3p5", extra_config=STEP35,
                      **dict(HF, ignore=("lm_head", "re:.*g_proj$"))), 2,  # per-head gates: a row per head
     {"model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:step3p5.py"),
      "model.layers.1.share_expert.gate_up_proj": ("MergedColumnParallelLinear", "vllm:step3p5.py"),
      "model.layers.1.self_attn.g_proj": ("ColumnParallelLinear", "vllm:step3p5.py"),
      "model.layers.1.moe.gate": ("ReplicatedLinear", "vllm:step3p5.py")}),
    ("step-3.7", dict(architecture="Step3p7ForConditionalGeneration", model_type="step3p7", extra_config=STEP37,
                      **dict(HF, ignore=STEP37_IGNORE)), 2,
     {"model.layers.1.share_expert.gate_up_proj": ("MergedColumnParallelLinear", "vllm:step3p5.py"),
      "vision_model.transformer.resblocks.0.attn.qkv_proj": ("QKVParallelLinear", "vllm:step_vl.py"),
      "vision_model.transformer.resblocks.0.mlp.fc2": ("RowParallelLinear", "vllm:step_vl.py"),
      "vit_large_projector": ("ColumnParallelLinear", "vllm:step3p7.py")}),
    ("step-vl", STEP_VL, 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen3.py"),
      "vision_model.transformer.resblocks.0.attn.qkv_proj": ("QKVParallelLinear", "vllm:step_vl.py"),
      "vision_model.transformer.resblocks.0.mlp.fc1": ("ColumnParallelLinear", "vllm:step_vl.py"),
      "vit_large_projector": ("ColumnParallelLinear", "vllm:step_vl.py")}),
    ("step-3", dict(architecture="Step3TextForCausalLM", model_type="step3_text", **STEP3), 2,
     {"model.layers.0.self_attn.qkv_proj": ("ReplicatedLinear", "vllm:step3_text.py"),
      "model.layers.0.self_attn.wq": ("ColumnParallelLinear", "vllm:step3_text.py"),
      "model.layers.1.share_expert.gate_up_proj": ("MergedColumnParallelLinear", "vllm:step3_text.py"),
      "model.layers.1.moe.gate": ("ReplicatedLinear", "vllm:step3_text.py")}),
    ("step-3-vl", STEP3_VL, 2,
     {"model.layers.0.self_attn.qkv_proj": ("ReplicatedLinear", "vllm:step3_text.py"),
      "vision_model.transformer.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:step3_vl.py"),
      "vit_large_projector": ("nn.Linear", "vllm:step3_vl.py")}),
    ("step-5", STEP5_SPEC, 1,  # one 192-wide KV head a rank at TP 2: not a whole 128-block
     {"model.layers.1.self_attn.qkv_indexer_proj": ("QKVParallelLinear", "vllm:models/step5"),
      "model.layers.1.self_attn.sparse_indexer_w": ("ColumnParallelLinear", "vllm:models/step5"),
      "model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:models/step5"),
      "model.layers.1.share_expert.gate_up_proj": ("MergedColumnParallelLinear", "vllm:models/step5")}),
    ("step-5-vl", STEP5_VL, 1,
     {"model.layers.1.self_attn.qkv_indexer_proj": ("QKVParallelLinear", "vllm:models/step5"),
      "model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:models/step5"),
      "vision_model.transformer.resblocks.0.attn.qkv_proj": ("QKVParallelLinear", "vllm:step_vl.py"),
      "vit_large_projector": ("ColumnParallelLinear", "vllm:step3p7.py")}),
    ("hunyuan-dense", dict(architecture="HunYuanDenseV1ForCausalLM", model_type="hunyuan_v1_dense", head_dim=128,
                           transformers=True), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:transformers/causal.py")}),
    ("hunyuan-moe", dict(architecture="HunYuanMoEV1ForCausalLM", model_type="hunyuan_v1_moe", head_dim=128,
                         transformers=True, extra_config=dict(num_experts=4, moe_topk=2, moe_intermediate_size=256,
                                                              num_shared_expert=1)), 2,
     {"model.layers.0.mlp.gate.wg": ("ReplicatedLinear", "vllm:transformers/moe.py"),
      "model.layers.0.mlp.shared_mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:transformers/moe.py")}),
    ("hy-v3", dict(architecture="HYV3ForCausalLM", model_type="hy_v3", extra_config=HYV3, **HF), 2,
     {"model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:hy_v3.py"),
      "model.layers.1.mlp.shared_mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:hy_v3.py"),
      "model.layers.1.mlp.router.gate": ("ReplicatedLinear", "vllm:hy_v3.py")}),
    ("afmoe", dict(architecture="AfmoeForCausalLM", model_type="afmoe", extra_config=AFMOE, **HF), 2,
     {"model.layers.0.self_attn.gate_proj": ("ColumnParallelLinear", "vllm:afmoe.py"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:afmoe.py"),
      "model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:afmoe.py"),
      "model.layers.1.mlp.router.gate": ("ReplicatedLinear", "vllm:afmoe.py")}),
    ("lfm2", dict(LFM2, architecture="Lfm2ForCausalLM", model_type="lfm2",
                  extra_config=dict(LFM2_LAYERS, intermediate_size=768)), 2,
     {"model.layers.0.conv.conv": ("ColumnParallelLinear", "vllm:lfm2.py"),
      "model.layers.0.conv.in_proj": ("MergedColumnParallelLinear", "vllm:lfm2.py"),
      "model.layers.0.conv.out_proj": ("RowParallelLinear", "vllm:lfm2.py"),
      "model.layers.0.feed_forward.w13": ("MergedColumnParallelLinear", "vllm:lfm2.py"),
      "model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:lfm2.py"),
      "model.layers.1.self_attn.out_proj": ("RowParallelLinear", "vllm:lfm2.py")}),
    ("lfm2-moe", dict(LFM2, architecture="Lfm2MoeForCausalLM", model_type="lfm2_moe", extra_config=LFM2_MOE), 2,
     {"model.layers.0.conv.in_proj": ("MergedColumnParallelLinear", "vllm:lfm2_moe.py"),
      "model.layers.0.feed_forward.w13": ("MergedColumnParallelLinear", "vllm:lfm2_moe.py"),
      "model.layers.1.feed_forward.gate": ("ReplicatedLinear", "vllm:lfm2_moe.py")}),
    ("lfm3", dict(LFM2, architecture="Lfm3ForCausalLM", model_type="lfm3", extra_config=LFM3), 1,
     {"model.layers.0.conv.in_proj": ("MergedColumnParallelLinear", "vllm:lfm3.py"),
      "model.layers.1.self_attn.gate_proj": ("ColumnParallelLinear", "vllm:lfm3.py"),
      "model.layers.1.self_attn.o_proj": ("RowParallelLinear", "vllm:lfm3.py")}),
    ("mimo-v2-flash", MIMO_V2_SPEC, 1,
     {"model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:mimo_v2.py"),
      "model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:mimo_v2.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:mimo_v2.py")}),
    ("mimo-v2-pro", MIMO_V2_PRO_SPEC, 1,
     {"model.layers.0.self_attn.qkv_proj": ("MergedColumnParallelLinear", "vllm:mimo_v2.py"),
      "model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:mimo_v2.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:mimo_v2.py")}),
    ("mimo-v2-omni", MIMO_V2_OMNI_SPEC, 1,
     {"model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:mimo_v2_omni.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:mimo_v2_omni.py"),
      "visual.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:mimo_v2_omni.py"),
      "visual.blocks.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:mimo_v2_omni.py"),
      "visual.merger.mlp.2": ("RowParallelLinear", "vllm:mimo_v2_omni.py"),
      "audio_encoder.input_local_transformer.layers.0.self_attn.q_proj": ("nn.Linear", "vllm:mimo_audio.py"),
      "audio_encoder.projection": ("nn.Linear", "vllm:mimo_audio.py")}),
    ("mimo-7b", dict(architecture="MiMoForCausalLM", model_type="qwen2", extra_config=dict(num_nextn_predict_layers=1),
                     extra_tensors={"model.mtp_layers.0.input_proj.weight": (256, 512)}, **HF), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:mimo.py"),
      "model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:mimo.py")}),
    ("longcat-flash", LONGCAT_SPEC, 2,
     {"model.layers.0.self_attn.1.fused_qkv_a_proj": ("DeepSeekV2FusedQkvAProjLinear", "vllm:longcat_flash.py"),
      "model.layers.0.self_attn.1.kv_b_proj": ("ColumnParallelLinear", "vllm:longcat_flash.py"),
      "model.layers.1.mlps.0.gate_up_proj": ("MergedColumnParallelLinear", "vllm:longcat_flash.py"),
      "model.layers.1.mlp.router.classifier": ("ReplicatedLinear", "vllm:longcat_flash.py")}),
    ("longcat-flash-lite", LONGCAT_LITE_SPEC, 2,
     {"model.layers.1.self_attn.0.fused_qkv_a_proj": ("DeepSeekV2FusedQkvAProjLinear", "vllm:longcat_flash_ngram.py"),
      "model.layers.1.mlp.router.classifier": ("ReplicatedLinear", "vllm:longcat_flash_ngram.py")}),
    ("hy-v4", HYV4_SPEC, 2,
     {"model.layers.0.self_attn.fused_qkv_a_proj": ("MergedColumnParallelLinear", "vllm:models/hy_v4"),
      "model.layers.1.self_attn.linear_gate": ("ColumnParallelLinear", "vllm:models/hy_v4"),
      "model.layers.1.self_attn.indexer.wk_weights_proj": ("MergedColumnParallelLinear", "vllm:models/hy_v4"),
      "model.layers.1.hc_attn_layer.hc_pre.hc_fn": ("ReplicatedLinear", "vllm:models/hy_v4"),
      "model.hc_head.hc_head_fn": ("ReplicatedLinear", "vllm:models/hy_v4")}),
    ("dots3-note", DOTS3_SPEC, 2,
     {"model.layers.0.self_attn.g_proj": ("ReplicatedLinear", "vllm:models/dots3_note"),
      "model.layers.0.self_attn.indexer.wk_weights_proj": ("MergedColumnParallelLinear", "vllm:models/dots3_note"),
      "model.layers.1.self_attn.fused_qkv_a_proj": ("DeepSeekV2FusedQkvAProjLinear", "vllm:models/dots3_note"),
      "model.layers.1.self_attn.g_proj": ("ReplicatedLinear", "vllm:models/dots3_note")}),
    ("zaya", ZAYA_SPEC, 2,
     {"model.layers.0.self_attn.qkv_proj.v_proj_delayed": ("ReplicatedLinear", "vllm:zaya.py"),
      "model.layers.0.self_attn.o_proj": ("ReplicatedLinear", "vllm:zaya.py"),
      "model.layers.1.mlp.gate.router_mlp.out_proj": ("ReplicatedLinear", "vllm:zaya.py")}),
    ("qwen3-next", dict(architecture="Qwen3NextForCausalLM", model_type="qwen3_next", extra_config=GDN_MOE, **HF), 2,
     {"model.layers.0.linear_attn.in_proj_qkvz": ("MergedColumnParallelLinear", "vllm:qwen3_next.py"),
      "model.layers.0.linear_attn.conv1d": ("ColumnParallelLinear", "vllm:qwen3_next.py"),
      "model.layers.0.linear_attn.out_proj": ("RowParallelLinear", "vllm:qwen3_next.py"),
      "model.layers.1.mlp.shared_expert_gate": ("ReplicatedLinear", "vllm:qwen3_next.py")}),
    ("qwen3.5", dict(architecture="Qwen3_5ForCausalLM", model_type="qwen3_5_text", extra_config=GDN, **HF), 2,
     {"model.layers.0.linear_attn.in_proj_qkvz": ("MergedColumnParallelLinear", "vllm:qwen3_5.py"),
      "model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen3_5.py"),
      "model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:qwen3_5.py")}),
    ("qwen3.5-moe", dict(architecture="Qwen3_5MoeForCausalLM", model_type="qwen3_5_moe_text", extra_config=GDN_MOE,
                         **HF), 2,
     {"model.layers.0.linear_attn.in_proj_qkvz": ("MergedColumnParallelLinear", "vllm:qwen3_5.py"),
      "model.layers.0.mlp.gate": ("ReplicatedLinear", "vllm:qwen3_5.py")}),
    ("qwen3.5-vl", dict(architecture="Qwen3_5ForConditionalGeneration", model_type="qwen3_5",
                        extra_config={"text_config": dict(GDN, model_type="qwen3_5_text", hidden_size=256,
                                                          intermediate_size=512, num_hidden_layers=2,
                                                          num_attention_heads=4, num_key_value_heads=2, head_dim=128,
                                                          vocab_size=1000),
                                      "vision_config": VISION}, **HF), 2,
     {"model.language_model.layers.0.linear_attn.in_proj_qkvz": ("MergedColumnParallelLinear", "vllm:qwen3_5.py"),
      "model.visual.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:qwen3_vl.py"),
      "model.visual.merger.linear_fc2": ("RowParallelLinear", "vllm:qwen3_vl.py")}),
    ("qwen3.5-moe-vl", dict(architecture="Qwen3_5MoeForConditionalGeneration", model_type="qwen3_5_moe",
                            extra_config={"text_config": dict(GDN_MOE, model_type="qwen3_5_moe_text", hidden_size=256,
                                                              num_hidden_layers=2, num_attention_heads=4,
                                                              num_key_value_heads=2, head_dim=128, vocab_size=1000),
                                          "vision_config": VISION}, **HF), 2,
     {"model.language_model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen3_5.py"),
      "model.visual.blocks.0.mlp.linear_fc1": ("ColumnParallelLinear", "vllm:qwen3_vl.py")}),
    ("qwen4-exp", QWEN4_EXP_SPEC, 2,
     {"model.layers.0.linear_attn.in_proj_qkvz": ("MergedColumnParallelLinear", "vllm:models/qwen4_exp"),
      "model.layers.0.ple.kv_proj": ("MergedColumnParallelLinear", "vllm:models/qwen4_exp"),
      "model.layers.0.attn_hyper_connection.input_mix_weight_down_block_inject": ("MergedColumnParallelLinear",
                                                                               "vllm:models/qwen4_exp"),
      "model.layers.0.mlp_hyper_connection.input_mix_weight_up": ("ReplicatedLinear", "vllm:models/qwen4_exp"),
      "model.hyper_connection_mixer.input_mix_weight_down": ("ReplicatedLinear", "vllm:models/qwen4_exp"),
      "model.layers.1.self_attn.qkv_proj": ("Qwen4ExpQSAQKVIndexerLinear", "vllm:models/qwen4_exp"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:models/qwen4_exp")}),
    ("qwen4-exp-vl", dict(QWEN4_EXP_SPEC, architecture="Qwen4ExpForConditionalGeneration", model_type="qwen4_exp",
                          extra_config={"text_config": dict(QWEN4_EXP, model_type="qwen4_exp_text", hidden_size=256,
                                                            intermediate_size=512, num_hidden_layers=2,
                                                            num_attention_heads=4, num_key_value_heads=2,
                                                            head_dim=128, vocab_size=1000),
                                        "vision_config": dict(VISION, deepstack_visual_indexes=[])}), 2,
     {"model.language_model.layers.1.self_attn.qkv_proj": ("Qwen4ExpQSAQKVIndexerLinear", "vllm:models/qwen4_exp"),
      "model.visual.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:qwen3_vl.py")}),
    ("minimax-m3-text", dict(architecture="MiniMaxM3SparseForCausalLM", model_type="minimax_m3_vl_text",
                             moe_style="mixtral", experts=4, head_dim=128), 2,
     {"model.layers.0.block_sparse_moe.gate": ("ReplicatedLinear", "vllm:models/minimax_m3"),
      "model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:models/minimax_m3")}),
    ("minimax-m3", dict(architecture="MiniMaxM3SparseForConditionalGeneration", model_type="minimax_m3_vl",
                        extra_config=MINIMAX_M3, **dict(HF, ignore=("language_model.lm_head",))), 2,
     {"language_model.model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:models/minimax_m3"),
      "language_model.model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:models/minimax_m3"),
      "language_model.model.layers.1.block_sparse_moe.gate": ("ReplicatedLinear", "vllm:models/minimax_m3"),
      "vision_tower.vision_model.encoder.layers.0.self_attn.qkv_proj": ("QKVParallelLinear",
                                                                       "vllm:models/minimax_m3"),
      "patch_merge_mlp.linear_2": ("RowParallelLinear", "vllm:models/minimax_m3")}),
    ("intern-s1", INTERN_S1, 2,
     {"model.vision_tower.encoder.layer.0.attention.q_proj": ("nn.Linear", "vllm:interns1_vit.py"),
      "model.vision_tower.encoder.layer.0.mlp.fc1": ("ColumnParallelLinear", "vllm:interns1_vit.py"),
      "model.multi_modal_projector.linear_1": ("nn.Linear", "vllm:interns1.py"),
      "model.language_model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen3_moe.py"),
      "model.language_model.layers.0.mlp.gate": ("ReplicatedLinear", "vllm:qwen3_moe.py")}),
    ("internvl-hf", INTERNVL_HF, 2,
     {"vision_tower.encoder.layer.0.attention.projection_layer": ("nn.Linear", "vllm:interns1_vit.py"),
      "vision_tower.encoder.layer.0.mlp.fc2": ("RowParallelLinear", "vllm:interns1_vit.py"),
      "language_model.model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:qwen2.py")}),
    ("ernie-4.5-vl", ERNIE_VL, 2,
     {"model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:ernie45_vl.py"),
      "model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:ernie45_vl.py"),
      "model.layers.1.mlp.text_experts_gate": ("ReplicatedLinear", "vllm:ernie45_vl.py"),
      "model.layers.1.mlp.vision_experts_gate": ("ReplicatedLinear", "vllm:ernie45_vl.py"),
      "vision_model.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:ernie45_vl.py"),
      "vision_model.patch_embed.proj": ("nn.Linear", "vllm:ernie45_vl.py"),
      "model.resampler_model.spatial_linear.0": ("ColumnParallelLinear", "vllm:ernie45_vl.py")}),
    ("glm-4-0414", dict(architecture="Glm4ForCausalLM", model_type="glm4", **HF, extra_config={
        "partial_rotary_factor": 0.5, "pad_token_id": 0}), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:glm4.py"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:glm4.py")}),
    *((family, dict(architecture=arch, model_type=model_type, **dict(HF, ignore=("lm_head",)), extra_config={
        "text_config": text, "vision_config": dict(GLM4V_VISION, model_type=f"{model_type}_vision")}), 2,
       {"model.visual.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:glm4_1v.py"),
        "model.visual.blocks.0.attn.proj": ("RowParallelLinear", "vllm:glm4_1v.py"),
        "model.visual.merger.proj": ("ColumnParallelLinear", "vllm:glm4_1v.py"),
        "model.visual.merger.gate_up_proj": ("MergedColumnParallelLinear", "vllm:glm4_1v.py"),
        "model.language_model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:glm4_1v.py"),
        **extra})
      for family, arch, model_type, text, extra in (
          ("glm-4.1v", "Glm4vForConditionalGeneration", "glm4v", dict(GLM4V_TEXT, model_type="glm4v_text"), {}),
          ("glm-4.5v", "Glm4vMoeForConditionalGeneration", "glm4v_moe", GLM4V_MOE_TEXT,
           {"model.language_model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:glm4_1v.py")}))),
    ("glm-5-next", GLM5_NEXT_SPEC, 2,
     {"model.layers.0.self_attn.in_proj_qkvbfg_a": ("MergedColumnParallelLinear", "vllm:models/glm5next"),
      "model.layers.0.self_attn.conv1d": ("ColumnParallelLinear", "vllm:models/glm5next"),
      "model.layers.0.self_attn.o_proj": ("RowParallelLinear", "vllm:models/glm5next"),
      "model.layers.1.self_attn.fused_qkv_a_proj": ("DeepSeekV2FusedQkvAProjLinear", "vllm:models/glm5next"),
      "model.layers.1.self_attn.indexer.wk_weights_proj": ("MergedColumnParallelLinear", "vllm:models/glm5next"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:models/glm5next")}),
    ("glm-5-next-vl", dict(GLM5_NEXT_SPEC, architecture="Glm5NextForConditionalGeneration", model_type="glm5_next",
                           ignore=(*GLM5_NEXT_BF16, "re:^model\\.visual\\."),
                           extra_tensors={"model.language_model.layers.2.eh_proj.weight": (512, 1024)},
                           extra_config={"text_config": dict(GLM5_NEXT, model_type="glm5_next_text"),
                                         "vision_config": dict(VISION, projection_intermediate_size=512)}), 2,
     {"model.visual.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:models/glm5next"),
      "model.visual.merger.proj": ("ColumnParallelLinear", "vllm:models/glm5next"),
      "model.language_model.layers.0.self_attn.in_proj_qkvbfg_a": ("MergedColumnParallelLinear",
                                                                   "vllm:models/glm5next")}),
    # Stored as Moonshot's INT4 releases keep it: the tower and projector BF16 (vLLM builds them with
    # quant_config=None under compressed-tensors).
    ("kimi-k2.5", dict(KIMI_K25, ignore=("language_model.lm_head", "re:vision_tower.*", "re:mm_projector.*")), 2,
     {"language_model.model.layers.0.self_attn.fused_qkv_a_proj": ("DeepSeekV2FusedQkvAProjLinear",
                                                                   "vllm:kimi_k25.py"),
      "language_model.model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:kimi_k25.py"),
      "vision_tower.encoder.blocks.0.wqkv": ("QKVParallelLinear", "vllm:kimi_k25_vit.py"),
      "mm_projector.proj.0": ("ReplicatedLinear", "vllm:kimi_k25_vit.py")}),
    # The KDA layers' fused in_proj left BF16: its b_proj shard (num_heads rows) fits no 128-block.
    ("kimi-linear", dict(architecture="KimiLinearForCausalLM", model_type="kimi_linear", hidden=512, vocab=1000,
                         transformers=True, extra_config=KIMI_LINEAR,
                         ignore=("lm_head", r"re:.*layers\.[01]\.self_attn\.(q|k|v|b|f_a)_proj$")), 2,
     {"model.layers.0.self_attn.in_proj_qkvgfab": ("MergedColumnParallelLinear", "vllm:models/kimi_k3"),
      "model.layers.0.self_attn.conv1d": ("ColumnParallelLinear", "vllm:models/kimi_k3"),
      "model.layers.0.self_attn.g_a_proj": ("ReplicatedLinear", "vllm:models/kimi_k3"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:models/kimi_k3"),
      "model.layers.1.block_sparse_moe.gate": ("ReplicatedLinear", "vllm:models/kimi_k3"),
      "model.layers.2.self_attn.kv_a_proj_with_mqa": ("ReplicatedLinear", "vllm:models/kimi_k3")}),
    ("glm-4.7-flash", GLM47_FLASH_SPEC, 2,
     {"model.layers.0.self_attn.fused_qkv_a_proj": ("DeepSeekV2FusedQkvAProjLinear", "vllm:glm4_moe_lite.py"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:glm4_moe_lite.py"),
      "model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:glm4_moe_lite.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:glm4_moe_lite.py")}),
    ("qwen3-omni", QWEN3_OMNI_SPEC, 2,
     {"thinker.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen3_omni_moe_thinker.py"),
      "thinker.model.layers.0.mlp.gate": ("ReplicatedLinear", "vllm:qwen3_omni_moe_thinker.py"),
      "thinker.visual.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:qwen3_omni_moe_thinker.py"),
      "thinker.visual.merger.mlp.2": ("RowParallelLinear", "vllm:qwen3_omni_moe_thinker.py"),
      "thinker.visual.merger_list.0.mlp.0": ("ColumnParallelLinear", "vllm:qwen3_omni_moe_thinker.py"),
      "thinker.audio_tower.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen3_omni_moe_thinker.py"),
      "thinker.audio_tower.layers.0.fc2": ("RowParallelLinear", "vllm:qwen3_omni_moe_thinker.py"),
      "thinker.audio_tower.proj2": ("ReplicatedLinear", "vllm:qwen3_omni_moe_thinker.py")}),
    *((family, spec, 2,
       {"thinker.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen2_5_omni_thinker.py"),
        "thinker.model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:qwen2_5_omni_thinker.py"),
        "thinker.lm_head": ("ParallelLMHead", "vllm:qwen2_5_omni_thinker.py"),
        "thinker.visual.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:qwen2_5_omni_thinker.py"),
        "thinker.visual.blocks.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:qwen2_5_omni_thinker.py"),
        "thinker.visual.merger.mlp.2": ("RowParallelLinear", "vllm:qwen2_5_omni_thinker.py"),
        "thinker.audio_tower.layers.0.self_attn.q_proj": ("nn.Linear", "vllm:qwen2_5_omni_thinker.py"),
        "thinker.audio_tower.layers.0.fc1": ("nn.Linear", "vllm:qwen2_5_omni_thinker.py"),
        "thinker.audio_tower.proj": ("nn.Linear", "vllm:qwen2_5_omni_thinker.py")})
      for family, spec in (("qwen2.5-omni", QWEN25_OMNI_SPEC),
                           ("qwen2.5-omni-model", dict(QWEN25_OMNI_SPEC, architecture="Qwen2_5OmniModel")))),
    ("qwen2-audio", QWEN2_AUDIO_SPEC, 2,
     {"language_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen2_audio.py"),
      "language_model.model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:qwen2_audio.py"),
      "language_model.lm_head": ("ParallelLMHead", "vllm:qwen2_audio.py"),
      "audio_tower.layers.0.self_attn.k_proj": ("nn.Linear", "vllm:qwen2_audio.py"),
      "audio_tower.layers.0.fc2": ("nn.Linear", "vllm:qwen2_audio.py"),
      "multi_modal_projector.linear": ("nn.Linear", "vllm:qwen2_audio.py")}),
    ("kimi-vl", KIMI_VL_SPEC, 2,
     {"language_model.model.layers.0.self_attn.kv_a_proj_with_mqa": ("ReplicatedLinear", "vllm:kimi_vl.py"),
      "language_model.model.layers.0.self_attn.q_proj": ("ColumnParallelLinear", "vllm:kimi_vl.py"),
      "language_model.model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear",
                                                                        "vllm:kimi_vl.py"),
      "language_model.model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:kimi_vl.py"),
      "vision_tower.encoder.blocks.0.wqkv": ("QKVParallelLinear", "vllm:moonvit.py"),
      "vision_tower.encoder.blocks.0.mlp.fc1": ("RowParallelLinear", "vllm:moonvit.py"),
      "multi_modal_projector.linear_2": ("ReplicatedLinear", "vllm:kimi_vl.py")}),
    ("qwen2-vl", QWEN2_VL_SPEC, 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen2_vl.py"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:qwen2_vl.py"),
      "visual.blocks.0.attn.qkv": ("ColumnParallelLinear", "vllm:qwen2_vl.py"),
      "visual.blocks.0.attn.proj": ("RowParallelLinear", "vllm:qwen2_vl.py"),
      "visual.blocks.0.mlp.fc1": ("ColumnParallelLinear", "vllm:qwen2_vl.py"),
      "visual.blocks.0.mlp.fc2": ("RowParallelLinear", "vllm:qwen2_vl.py"),
      "visual.merger.mlp.0": ("ColumnParallelLinear", "vllm:qwen2_vl.py"),
      "visual.merger.mlp.2": ("RowParallelLinear", "vllm:qwen2_vl.py")}),
    ("kimi-k3", kimi_k3_spec(), 2,
     {"language_model.layers.0.self_attn.in_proj_qkvgfab": ("MergedColumnParallelLinear", "vllm:models/kimi_k3"),
      "language_model.layers.1.self_attn.f_b_proj": ("ColumnParallelLinear", "vllm:models/kimi_k3"),
      "language_model.layers.2.self_attn.fused_qkv_a_g_proj": ("KimiK3MergedQKVGateLinear", "vllm:models/kimi_k3"),
      "language_model.layers.2.block_sparse_moe.routed_expert_up_proj": ("ReplicatedLinear", "vllm:models/kimi_k3"),
      "language_model.layers.1.mlp_res_proj": ("ReplicatedLinear", "vllm:models/kimi_k3"),
      "vision_tower.encoder.blocks.0.wqkv": ("QKVParallelLinear", "vllm:kimi_k25_vit.py")}),
    ("internlm2", INTERNLM2_SPEC, 2,
     {"model.layers.0.attention.wqkv": ("QKVParallelLinear", "vllm:internlm2.py"),
      "model.layers.0.attention.wo": ("RowParallelLinear", "vllm:internlm2.py"),
      "model.layers.0.feed_forward.gate_up_proj": ("MergedColumnParallelLinear", "vllm:internlm2.py"),
      "model.layers.0.feed_forward.w2": ("RowParallelLinear", "vllm:internlm2.py"),
      "output": ("ParallelLMHead", "vllm:internlm2.py")}),
    ("internvl-chat", internvl_chat_spec("InternVLChatModel", QWEN2_LLM), 2,
     {"vision_model.encoder.layers.0.attn.qkv": ("QKVParallelLinear", "vllm:intern_vit.py"),
      "vision_model.encoder.layers.0.attn.proj": ("RowParallelLinear", "vllm:intern_vit.py"),
      "vision_model.encoder.layers.0.mlp.fc1": ("ColumnParallelLinear", "vllm:intern_vit.py"),
      "vision_model.encoder.layers.0.mlp.fc2": ("RowParallelLinear", "vllm:intern_vit.py"),
      "mlp1.1": ("nn.Linear", "vllm:internvl.py"), "mlp1.3": ("nn.Linear", "vllm:internvl.py"),
      "language_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen2.py")}),
    ("h2ovl", internvl_chat_spec("H2OVLChatModel", dict(QWEN2_LLM, architectures=["LlamaForCausalLM"],
                                                        model_type="llama")), 2,
     {"mlp1.1": ("nn.Linear", "vllm:internvl.py"),
      "language_model.model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:llama.py")}),
    ("skywork-r1v", internvl_chat_spec("SkyworkR1VChatModel", QWEN2_LLM, ignore=()), 2,
     {"mlp1.1": ("ReplicatedLinear", "vllm:skyworkr1v.py"), "mlp1.3": ("ReplicatedLinear", "vllm:skyworkr1v.py"),
      "vision_model.encoder.layers.0.attn.qkv": ("QKVParallelLinear", "vllm:intern_vit.py")}),
    ("alice-ai", ALICE_AI_SPEC, 2,
     {"model.layers.0.linear_attn.in_proj_qkvgfab": ("MergedColumnParallelLinear", "vllm:alice_ai.py"),
      "model.layers.0.linear_attn.g_a_proj": ("ReplicatedLinear", "vllm:alice_ai.py"),
      "model.layers.0.linear_attn.f_b_proj": ("ColumnParallelLinear", "vllm:alice_ai.py"),
      "model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:alice_ai.py"),
      "model.layers.1.mlp.shared_expert.gate_up_proj": ("MergedColumnParallelLinear", "vllm:alice_ai.py"),
      "model.layers.1.attn_res_proj": ("ReplicatedLinear", "vllm:alice_ai.py"),
      "model.attnres_final.res_proj": ("ReplicatedLinear", "vllm:alice_ai.py")}),
    ("k2-horizon", K2_HORIZON_SPEC, 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:k2_horizon.py"),
      "model.layers.0.self_attn.gate_proj": ("ColumnParallelLinear", "vllm:k2_horizon.py"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:k2_horizon.py"),
      "model.layers.1.self_attn.qk_proj": ("MergedColumnParallelLinear", "vllm:k2_horizon.py"),
      "model.layers.1.self_attn.v_router": ("ReplicatedLinear", "vllm:k2_horizon.py"),
      "model.layers.1.self_attn.v_experts.0": ("ColumnParallelLinear", "vllm:k2_horizon.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:k2_horizon.py"),
      "model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:k2_horizon.py")}),
    ("ling-v1", ling_spec(LING_V1, "BailingMoeForCausalLM"), 2,
     {"model.layers.0.attention.query_key_value": ("QKVParallelLinear", "vllm:bailing_moe.py"),
      "model.layers.0.mlp.gate": ("ReplicatedLinear", "vllm:bailing_moe.py")}),
    ("ling-v2", ling_spec(LING_V2, "BailingMoeV2ForCausalLM"), 2,
     {"model.layers.0.attention.query_key_value": ("QKVParallelLinear", "vllm:bailing_moe.py"),
      "model.layers.0.attention.dense": ("RowParallelLinear", "vllm:bailing_moe.py"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:bailing_moe.py"),
      "model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:bailing_moe.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:bailing_moe.py")}),
    ("ling-v2.5", ling_spec(LING_V25, "BailingMoeV2_5ForCausalLM"), 2,
     {"model.layers.0.attention.query_key_value": ("QKVParallelLinear", "vllm:bailing_moe_linear.py"),
      "model.layers.0.attention.g_proj": ("ColumnParallelLinear", "vllm:bailing_moe_linear.py"),
      "model.layers.0.attention.dense": ("RowParallelLinear", "vllm:bailing_moe_linear.py"),
      "model.layers.3.attention.q_proj": ("ColumnParallelLinear", "vllm:bailing_moe_linear.py"),
      "model.layers.3.attention.kv_a_proj_with_mqa": ("ReplicatedLinear", "vllm:bailing_moe_linear.py"),
      "model.layers.3.attention.dense": ("RowParallelLinear", "vllm:bailing_moe_linear.py")}),
    ("ling-3", LING_3_SPEC, 1,
     {"model.layers.0.attention.qkvb_proj": ("MergedColumnParallelLinear", "vllm:bailing_moe_v3.py"),
      "model.layers.0.attention.f_proj": ("ColumnParallelLinear", "vllm:bailing_moe_v3.py"),
      "model.layers.0.attention.q_conv1d": ("ColumnParallelLinear", "vllm:bailing_moe_v3.py"),
      "model.layers.0.attention.o_proj": ("RowParallelLinear", "vllm:bailing_moe_v3.py"),
      "model.layers.3.attention.kv_a_proj_with_mqa": ("ReplicatedLinear", "vllm:bailing_moe_v3.py"),
      "model.layers.3.attention.g_proj": ("ColumnParallelLinear", "vllm:bailing_moe_v3.py"),
      "model.layers.3.attention.dense": ("RowParallelLinear", "vllm:bailing_moe_v3.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:bailing_moe_v3.py")}),
    ("sarvam-moe", sarvam_spec(SARVAM_MOE), 2,
     {"model.layers.0.attention.query_key_value": ("QKVParallelLinear", "vllm:sarvam.py"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:sarvam.py"),
      "model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:sarvam.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:sarvam.py")}),
    ("sarvam-mla", sarvam_spec(SARVAM_MLA, mla=True), 2,
     {"model.layers.0.self_attn.q_proj": ("ColumnParallelLinear", "vllm:sarvam.py"),
      "model.layers.0.self_attn.kv_a_proj_with_mqa": ("ReplicatedLinear", "vllm:sarvam.py"),
      "model.layers.0.self_attn.kv_b_proj": ("ColumnParallelLinear", "vllm:sarvam.py"),
      "model.layers.0.self_attn.o_proj": ("RowParallelLinear", "vllm:sarvam.py"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:sarvam.py"),
      "model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:sarvam.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:sarvam.py")}),
    ("ricursive", ricursive_spec(), 2,
     {"model.layers.0.self_attn.qkg_proj": ("MergedColumnParallelLinear", "vllm:ricursive.py"),
      "model.layers.0.self_attn.v_proj": ("ColumnParallelLinear", "vllm:ricursive.py"),
      "model.layers.1.self_attn.o_proj": ("RowParallelLinear", "vllm:ricursive.py"),
      "model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:ricursive.py")}),
    ("cohere", COHERE_SPEC, 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:commandr.py"),
      "model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:commandr.py"),
      "model.layers.1.mlp.down_proj": ("RowParallelLinear", "vllm:commandr.py")}),
    ("cohere2", COHERE2_SPEC, 2,
     {"model.layers.3.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:commandr.py"),
      "model.layers.0.self_attn.o_proj": ("RowParallelLinear", "vllm:commandr.py")}),
    ("cohere2-moe", COHERE2_MOE_SPEC, 2,
     {"model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:cohere2_moe.py"),
      "model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:cohere2_moe.py"),
      "model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:cohere2_moe.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:cohere2_moe.py")}),
    ("cohere2-vision", COHERE2_VISION, 2,
     {"model.language_model.layers.3.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:commandr.py"),
      "model.vision_tower.vision_model.encoder.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:siglip.py"),
      "model.multi_modal_projector.linear_1": ("MergedColumnParallelLinear", "vllm:cohere2_vision.py")}),
    ("nemotron-nas", NEMOTRON_NAS_SPEC, 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:nemotron_nas.py"),
      "model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:nemotron_nas.py"),
      "model.layers.3.mlp.down_proj": ("RowParallelLinear", "vllm:nemotron_nas.py"),
      "lm_head": ("ParallelLMHead", "vllm:nemotron_nas.py")}),
    ("phi-moe", PHIMOE_SPEC, 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:phimoe.py"),
      "model.layers.0.block_sparse_moe.gate": ("ReplicatedLinear", "vllm:phimoe.py"),
      "lm_head": ("ParallelLMHead", "vllm:phimoe.py")}),
    ("nemotron", dict(architecture="NemotronForCausalLM", model_type="nemotron",
                      **dict(TF, extra_config=dict(TF["extra_config"], hidden_act="relu2"))), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:nemotron.py"),
      "model.layers.0.mlp.up_proj": ("ColumnParallelLinear", "vllm:nemotron.py"),
      "model.layers.0.mlp.down_proj": ("RowParallelLinear", "vllm:nemotron.py")}),
    ("apertus", dict(architecture="ApertusForCausalLM", model_type="apertus",
                     **dict(TF, extra_config=dict(TF["extra_config"], hidden_act="xielu",
                                                  max_position_embeddings=65536))), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:apertus.py"),
      "model.layers.0.mlp.up_proj": ("ColumnParallelLinear", "vllm:apertus.py"),
      "model.layers.1.mlp.down_proj": ("RowParallelLinear", "vllm:apertus.py")}),
    ("deepseek-moe", DEEPSEEK_MOE_SPEC, 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:deepseek_v2.py"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:deepseek_v2.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:deepseek_v2.py"),
      "model.layers.1.mlp.shared_experts.down_proj": ("RowParallelLinear", "vllm:deepseek_v2.py")}),
    *((family, dict(CHATGLM_SPEC, architecture=arch), 2,
       {"transformer.encoder.layers.0.self_attention.query_key_value": ("QKVParallelLinear", "vllm:chatglm.py"),
        "transformer.encoder.layers.0.self_attention.dense": ("RowParallelLinear", "vllm:chatglm.py"),
        "transformer.encoder.layers.1.mlp.dense_h_to_4h": ("MergedColumnParallelLinear", "vllm:chatglm.py"),
        "transformer.encoder.layers.1.mlp.dense_4h_to_h": ("RowParallelLinear", "vllm:chatglm.py"),
        "transformer.output_layer": ("ParallelLMHead", "vllm:chatglm.py")})
      for family, arch in (("chatglm", "ChatGLMModel"), ("chatglm-cg", "ChatGLMForConditionalGeneration"))),
    *((family, dict(architecture=arch, model_type=model_type, **TF), 2,
       {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:llama.py"),
        "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:llama.py")})
      for family, arch, model_type in (("internlm3", "InternLM3ForCausalLM", "internlm3"),
                                       ("iquest-coder", "IQuestCoderForCausalLM", "llama"),
                                       ("llama-legacy", "LLaMAForCausalLM", "llama"))),
    *((family, spec, 2,
       {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", source),
        "model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", source),
        "lm_head": ("ParallelLMHead", source)})
      for family, spec, source in (
          ("minicpm", dict(architecture="MiniCPMForCausalLM", model_type="minicpm", head_dim=128), "vllm:minicpm.py"),
          ("solar", SOLAR_SPEC, "vllm:solar.py"),
          ("orion", dict(architecture="OrionForCausalLM", model_type="orion", head_dim=128), "vllm:orion.py"))),
    ("plamo-3", PLAMO3_SPEC, 2,
     {"model.layers.layers.0.mixer.qkv_proj": ("QKVParallelLinear", "vllm:plamo3.py"),
      "model.layers.layers.0.mixer.o_proj": ("RowParallelLinear", "vllm:plamo3.py"),
      "model.layers.layers.2.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:plamo3.py"),
      "model.layers.layers.2.mlp.down_proj": ("RowParallelLinear", "vllm:plamo3.py"),
      "lm_head": ("ParallelLMHead", "vllm:plamo3.py")}),
    ("beam", BEAM_SPEC, 2,
     {"model.layers.0.self_attn.qkv_gate_proj": ("MergedColumnParallelLinear", "vllm:models/beam"),
      "model.layers.0.self_attn.o_proj": ("RowParallelLinear", "vllm:models/beam"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:models/beam"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:models/beam")}),
    # FlintAttention asserts FlashInfer: B200's pick for its sink layers (H100's is FLASH_ATTN)
    ("flint", dict(FLINT_SPEC, platform="b200"), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:models/flint"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:models/flint"),
      "model.layers.1.mlp.shared_expert.gate_up_proj": ("MergedColumnParallelLinear", "vllm:models/flint"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:models/flint")}),
    ("kimi-k3.1", kimi_k3_spec(dsa=True), 2,
     {"language_model.layers.2.self_attn.fused_qkv_a_proj": ("MergedColumnParallelLinear", "vllm:models/kimi_k3"),
      "language_model.layers.2.self_attn.g_proj": ("ColumnParallelLinear", "vllm:models/kimi_k3"),
      "language_model.layers.2.self_attn.indexer.wq_b": ("ReplicatedLinear", "vllm:models/kimi_k3"),
      "language_model.layers.2.self_attn.indexer.wkv_index": ("MergedColumnParallelLinear", "vllm:models/kimi_k3")}),
    ("ling-3-vl", LING_3_VL_SPEC, 1,
     {"model.layers.0.attention.qkvb_proj": ("MergedColumnParallelLinear", "vllm:bailing_moe_v3.py"),
      "model.layers.3.attention.dense": ("RowParallelLinear", "vllm:bailing_moe_v3.py"),
      "model.visual.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:qwen3_vl.py"),
      "model.visual.blocks.0.attn.proj": ("RowParallelLinear", "vllm:qwen3_vl.py"),
      "model.visual.blocks.0.mlp.linear_fc1": ("ColumnParallelLinear", "vllm:qwen3_vl.py"),
      "model.linear_proj.0": ("ColumnParallelLinear", "vllm:bailing_moe_v3_vl.py"),
      "model.linear_proj.2": ("RowParallelLinear", "vllm:bailing_moe_v3_vl.py")}),
    *((arch.lower(), nemotron_vl_spec(arch), 1,
       {"language_model.backbone.layers.0.mixer.in_proj": ("MergedColumnParallelLinear", "vllm:nemotron_h.py"),
        "language_model.backbone.layers.1.mixer.qkv_proj": ("QKVParallelLinear", "vllm:nemotron_h.py"),
        "language_model.backbone.layers.3.mixer.gate": ("ReplicatedLinear", "vllm:nemotron_h.py"),
        "vision_model.encoder.layer.0.attention.qkv": ("QKVParallelLinear", "vllm:radio.py"),
        "vision_model.encoder.layer.11.mlp.fc2": ("RowParallelLinear", "vllm:radio.py"),
        "vision_model.embeddings.patch_projection": ("nn.Linear", "vllm:radio.py"),
        "mlp1.1": ("nn.Linear", "vllm:nano_nemotron_vl.py")})
      for arch in ("NemotronH_Nano_VL_V2", "NemotronH_Nano_Omni_Reasoning_V3", "NemotronH_Super_Omni_Reasoning_V3",
                   "NemotronH_Omni_Reasoning_V3")),
    ("llama-nemotron-vl", llama_nemotron_vl_spec(), 2,
     {"language_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:llama.py"),
      "language_model.model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:llama.py"),
      "vision_model.radio_model.model.blocks.0.attn.qkv": ("nn.Linear", "vllm:nemotron_vl.py"),
      "vision_model.radio_model.model.patch_generator.embedder": ("nn.Linear", "vllm:nemotron_vl.py"),
      "mlp1.3": ("nn.Linear", "vllm:nemotron_vl.py")}),
    ("inkling", inkling_spec(), 2, _inkling_layers("model.llm.")),
    ("inkling-text", inkling_spec("InklingForCausalLM"), 2, _inkling_layers("model.")),
    ("muse-glimmer", muse_glimmer_spec(), 2, _MUSE_GLIMMER_LAYERS),
    ("muse-glimmer-causal", muse_glimmer_spec("MuseGlimmerForCausalLM"), 2, _MUSE_GLIMMER_LAYERS),
    ("muse-spark", muse_spark_spec(platform="mi300x"), 2, _MUSE_SPARK_LAYERS),
    *((family, dict(CLASSIC, architecture=arch, model_type=model_type,
                    extra_config=dict(CLASSIC["extra_config"], **extra), **{"tie_embeddings": True, **fields}), 2,
       {name: (cls, source) for name, cls in expected.items()})
      for family, arch, model_type, source, fields, extra, expected in (
          ("opt", "OPTForCausalLM", "opt", "vllm:opt.py", {}, dict(ffn_dim=512, word_embed_proj_dim=256),
           {"model.decoder.layers.0.self_attn.qkv_proj": "QKVParallelLinear",
            "model.decoder.layers.0.fc2": "RowParallelLinear"}),
          ("gpt-2", "GPT2LMHeadModel", "gpt2", "vllm:gpt2.py", dict(quant="modelopt-fp8"), dict(n_inner=512),
           {"transformer.h.0.attn.c_attn": "QKVParallelLinear", "transformer.h.0.mlp.c_fc": "ColumnParallelLinear"}),
          ("gpt-bigcode", "GPTBigCodeForCausalLM", "gpt_bigcode", "vllm:transformers/causal.py", {},
           dict(n_inner=512), {"transformer.h.0.attn.c_attn": "QKVParallelLinear",
                               "transformer.h.0.mlp.c_fc": "ReplicatedLinear"}),
          ("gpt-neox", "GPTNeoXForCausalLM", "gpt_neox", "vllm:transformers/causal.py",
           dict(tie_embeddings=False, ignore=("embed_out",)),
           {}, {"gpt_neox.layers.0.attention.query_key_value": "ColumnParallelLinear",
                "gpt_neox.layers.0.attention.dense": "RowParallelLinear"}),
          ("gpt-j", "GPTJForCausalLM", "gptj", "vllm:gpt_j.py", dict(tie_embeddings=False),
           dict(n_inner=512, rotary_dim=64), {"transformer.h.0.attn.qkv_proj": "QKVParallelLinear",
                                              "transformer.h.0.mlp.fc_out": "RowParallelLinear"}),
          ("bloom", "BloomForCausalLM", "bloom", "vllm:bloom.py", {}, {},
           {"transformer.h.0.self_attention.query_key_value": "QKVParallelLinear",
            "transformer.h.0.self_attention.dense": "RowParallelLinear"}),
          ("falcon", "FalconForCausalLM", "falcon", "vllm:falcon.py", {}, dict(bias=False),
           {"transformer.h.0.self_attention.query_key_value": "QKVParallelLinear",
            "transformer.h.0.mlp.dense_h_to_4h": "ColumnParallelLinear"}),
      )),
    ("llava", llava_spec(), 2,
     {**_LLAVA_CLIP_LAYERS, "multi_modal_projector.linear_1": ("ColumnParallelLinear", "vllm:llava.py"),
      "multi_modal_projector.linear_2": ("RowParallelLinear", "vllm:llava.py"),
      "language_model.model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:llama.py")}),
    ("llava-pixtral", llava_spec(text="mistral", vision=LLAVA_PIXTRAL, vision_feature_layer=-1), 2,
     {"vision_tower.transformer.layers.1.attention.qkv_proj": ("QKVParallelLinear", "vllm:pixtral.py"),
      "vision_tower.transformer.layers.1.feed_forward.gate_up_proj": ("MergedColumnParallelLinear",
                                                                      "vllm:pixtral.py"),
      "multi_modal_projector.linear_2": ("RowParallelLinear", "vllm:llava.py"),
      "language_model.model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:mistral.py")}),
    ("llava-next", llava_spec("LlavaNextForConditionalGeneration", "llava_next", "mistral"), 2,
     {**_LLAVA_CLIP_LAYERS, "multi_modal_projector.linear_1": ("ColumnParallelLinear", "vllm:llava.py"),
      "language_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:mistral.py")}),
    ("llava-next-video", llava_spec("LlavaNextVideoForConditionalGeneration", "llava_next_video",
                                    ignore=("re:.*multi_modal_projector.*",)), 2,
     {**_LLAVA_CLIP_LAYERS, "multi_modal_projector.linear_1": ("nn.Linear", "vllm:llava_next_video.py"),
      "language_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:llama.py")}),
    ("llava-onevision", llava_spec("LlavaOnevisionForConditionalGeneration", "llava_onevision", "qwen2",
                                   LLAVA_SIGLIP, ignore=("re:.*multi_modal_projector.*",), vision_feature_layer=-1), 2,
     {"vision_tower.vision_model.encoder.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:siglip.py"),
      "vision_tower.vision_model.encoder.layers.1.mlp.fc2": ("RowParallelLinear", "vllm:siglip.py"),
      "multi_modal_projector.linear_2": ("nn.Linear", "vllm:llava_onevision.py"),
      "language_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen2.py")}),
    ("idefics3", idefics3_spec(), 2,
     {**_IDEFICS3_LAYERS, "model.text_model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:idefics3.py")}),
    ("smolvlm", idefics3_spec("SmolVLMForConditionalGeneration", "smolvlm", "smolvlm_vision"), 2,
     {**_IDEFICS3_LAYERS, "model.text_model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear",
                                                                        "vllm:smolvlm.py")}),
    ("paligemma-2", PALIGEMMA2, 2,
     {"vision_tower.vision_model.encoder.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:siglip.py"),
      "multi_modal_projector.linear": ("nn.Linear", "vllm:paligemma.py"),
      "language_model.model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:gemma2.py")}),
    # ninth round (fam-texta)
    ("dbrx", dict(DBRX_SPEC, quant="fp8-block"), 2,
     {"transformer.blocks.0.norm_attn_norm.attn.Wqkv": ("QKVParallelLinear", "vllm:dbrx.py"),
      "transformer.blocks.0.norm_attn_norm.attn.out_proj": ("RowParallelLinear", "vllm:dbrx.py"),
      "transformer.blocks.1.ffn.router.layer": ("ReplicatedLinear", "vllm:dbrx.py")}),
    ("minicpm3", MINICPM3_SPEC, 2,
     {"model.layers.0.self_attn.q_a_proj": ("ReplicatedLinear", "vllm:minicpm3.py"),
      "model.layers.0.self_attn.kv_b_proj": ("ColumnParallelLinear", "vllm:minicpm3.py"),
      "model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:minicpm3.py")}),
    ("telechat2", dict(TELECHAT2_SPEC, ignore=("lm_head", "re:.*key_value$", "re:.*query$")), 2,
     {"transformer.h.0.self_attention.qkv_proj": ("QKVParallelLinear", "vllm:telechat2.py"),
      "transformer.h.0.self_attention.dense": ("RowParallelLinear", "vllm:telechat2.py"),
      "transformer.h.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:telechat2.py")}),
    *((family, dict(spec, head_dim=128), 2,
       {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", source),
        "model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", source)})
      for family, spec, source in (
          ("step1", dict(architecture="Step1ForCausalLM", model_type="step1", attention_backend="TRITON_ATTN",
                         extra_config=dict(num_attention_groups=2)), "vllm:step1.py"),
          ("rnj1", dict(architecture="Rnj1ForCausalLM", model_type="gemma3_text", attention_backend="TRITON_ATTN",
                        extra_config=dict(layer_types=["chunked_attention", "full_attention"], sliding_window=512,
                                          hidden_activation="gelu_pytorch_tanh", query_pre_attn_scalar=128)),
           "vllm:rnj1.py"),
          ("teleflm", dict(architecture="TeleFLMForCausalLM", model_type="TeleFLM"), "vllm:teleflm.py"))),
    ("axk1", dict(AXK1_SPEC, quant="fp8-block"), 2,
     {"model.layers.0.self_attn.fused_qkv_a_proj": ("MergedColumnParallelLinear", "vllm:AXK1.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:AXK1.py")}),
    ("domyn-edge", dict(architecture="DomynEdgeForCausalLM", model_type="domyn_edge", names="domyn_edge", head_dim=128,
                        extra_config=dict(per_layer_config={"1": {"head_dim": 256}}, window_sizes=[[511, 0], [0, 0]],
                                          position_layers=["rope", "nope"])), 2,
     {"model.layers.1.attention.qkv_proj": ("QKVParallelLinear", "vllm:domyn_edge.py"),
      "model.layers.1.feedforward.down_proj": ("RowParallelLinear", "vllm:domyn_edge.py")}),
    # ninth round (fam-audio)
    ("whisper", WHISPER_SPEC, 2,
     {"model.encoder.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:whisper.py"),
      "model.decoder.layers.0.encoder_attn.q_proj": ("ColumnParallelLinear", "vllm:whisper.py"),
      "model.decoder.layers.0.encoder_attn.kv_proj": ("MergedColumnParallelLinear", "vllm:whisper.py"),
      "model.decoder.layers.0.fc2": ("RowParallelLinear", "vllm:whisper.py")}),
    ("ultravox", ULTRAVOX_SPEC, 2,
     {"audio_tower.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:ultravox.py"),
      "audio_tower.layers.0.mlp.fc1": ("ColumnParallelLinear", "vllm:ultravox.py"),
      "multi_modal_projector.linear_1": ("ReplicatedLinear", "vllm:ultravox.py"),
      "language_model.model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:llama.py")}),
    ("glm-asr", GLM_ASR_SPEC, 2,
     {"audio_tower.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:glmasr.py"),
      "multi_modal_projector.linear_2": ("RowParallelLinear", "vllm:glmasr.py"),
      "language_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:glmasr.py")}),
    ("audio-flamingo-3", AUDIO_FLAMINGO_3_SPEC, 2,
     {"audio_tower.layers.0.self_attn.q_proj": ("nn.Linear", "vllm:audioflamingo3.py"),
      "multi_modal_projector.linear_1": ("nn.Linear", "vllm:audioflamingo3.py"),
      "language_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:audioflamingo3.py")}),
    *((family, dict(GRANITE_SPEECH_SPEC, architecture=arch), 1,  # the CTC out's 128 rows: one block
       {"encoder.layers.0.ff1.up_proj": ("ColumnParallelLinear", "vllm:granite_speech.py"),
        "encoder.out_mid": ("RowParallelLinear", "vllm:granite_speech.py"),
        "projector.qformer.encoder.layer.0.attention.attention.query": ("nn.Linear", "vllm:granite_speech.py"),
        "language_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:granite.py")})
      for family, arch in (("granite-speech", "GraniteSpeechForConditionalGeneration"),
                           ("granite-speech-plus", "GraniteSpeechPlusForConditionalGeneration"))),
    *((family, dict(QWEN3_ASR_SPEC, architecture=arch), 2,
       {"thinker.audio_tower.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen3_asr.py"),
        "thinker.audio_tower.proj2": ("ReplicatedLinear", "vllm:qwen3_asr.py"),
        "thinker.model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:qwen3_asr.py")})
      for family, arch in (("qwen3-asr", "Qwen3ASRForConditionalGeneration"),
                           ("qwen3-asr-realtime", "Qwen3ASRRealtimeGeneration"))),
    ("midashenglm", MIDASHENGLM_SPEC, 2,
     {"audio_encoder.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:midashenglm.py"),
      "audio_projector.net.2": ("RowParallelLinear", "vllm:midashenglm.py"),
      "decoder.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:midashenglm.py")}),
    ("fun-audio-chat", FUN_AUDIO_CHAT_SPEC, 2,
     {"continuous_audio_tower.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:funaudiochat.py"),
      "audio_tower.output_matching": ("nn.Linear", "vllm:funaudiochat.py"),
      "language_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:funaudiochat.py")}),
]


def inspect(folder, platform="h100", tp=1, attention_backend=None):
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), LATEST, tp=tp,
                                                                 attention_backend=attention_backend))


@pytest.mark.parametrize("spec,tp,expected", [f[1:] for f in FAMILIES], ids=[f[0] for f in FAMILIES])
def test_family_layout(make_checkpoint, spec, tp, expected):
    spec = dict(spec)
    platform = spec.pop("platform", "h100")  # a family vLLM builds on some platforms only (Flint: FlashInfer's)
    backend = spec.pop("attention_backend", None)  # or with one --attention-backend only (Step-1, Rnj1: TRITON_ATTN)
    # Widths that split into 128-blocks at the family's TP size (real models are far wider).
    folder = make_checkpoint(**{"quant": "ct-fp8-block", "data": "sparse", "moe_intermediate": 256,
                                "vision_hidden": 256, **spec})
    rep = inspect(folder, platform=platform, tp=tp, attention_backend=backend)
    by_name = {layer.name: layer for layer in rep.layers}
    assert {name: (by_name[name].layer_type, by_name[name].layout) for name in expected} == expected
    assert "generic" not in {layer.layout for layer in rep.layers} and not rep.notes
    # the entry's layout, or its text model's (Arch.registered_text_model)
    assert all(m.layout == model_arch(open_local(folder).config, LATEST).source for m in rep.moes)
    assert rep.ok, [e for layer in rep.layers for e in layer.errors] + list(rep.errors)
    assert tp in rep.tp_sizes_ok


def test_every_table_entry_has_a_family_test():
    tested = {f[1]["architecture"] for f in FAMILIES}
    assert set(ARCHITECTURES) == tested


@pytest.mark.parametrize("arch,key", [("Glm4MoeForCausalLM", "num_nextn_predict_layers"),
                                      ("MiniMaxM2ForCausalLM", "num_mtp_modules"),
                                      ("DeepseekV3ForCausalLM", "num_nextn_predict_layers")])
def test_mtp_layers_are_skipped_by_the_key_each_loader_reads(make_checkpoint, arch, key):
    folder = make_checkpoint(architecture=arch, layers=2, mtp_layers=1, mtp_key=key, head_dim=128, data="sparse")
    rep = inspect(folder)
    assert [s.prefix for s in rep.skipped] == ["model.layers.2."] and key in rep.skipped[0].reason
    assert rep.ok and not any(layer.name.startswith("model.layers.2.") for layer in rep.layers)
    # Another family's key is not this loader's: MiniMax-M2 does not read num_nextn_predict_layers.
    other = "num_mtp_modules" if key == "num_nextn_predict_layers" else "num_nextn_predict_layers"
    rep = inspect(make_checkpoint(architecture=arch, layers=2, mtp_layers=1, mtp_key=other, head_dim=128,
                                  data="sparse"))
    assert not rep.skipped and not rep.ok  # the BF16 eh_proj is then a main-model layer that is not ignored


def test_internvl_chat_reads_llm_config_and_lays_out_an_internlm2_text_model(make_checkpoint):
    """internvl.py: the language model is llm_config's class (vLLM renames it text_config), here internlm2.py's, under
    language_model: the fused wqkv a QKVParallelLinear whose Attention is attention.attn, the head `output`; the
    tower quantized, mlp1 torch nn.Linears (BF16, no quant method)."""
    folder = make_checkpoint(quant="ct-fp8-block", data="sparse", **internvl_chat_spec("InternVLChatModel", INTERNLM2))
    rep = inspect(folder, tp=2)
    by_name = {layer.name: layer for layer in rep.layers}
    assert rep.ok and not rep.notes, [e for layer in rep.layers for e in layer.errors]
    assert by_name["language_model.model.layers.0.attention.wqkv"].layout == "vllm:internlm2.py"
    assert by_name["language_model.output"].layer_type == "ParallelLMHead"
    assert by_name["vision_model.encoder.layers.0.attn.qkv"].scheme == "CompressedTensorsW8A8Fp8"
    assert by_name["mlp1.1"].scheme == "UnquantizedLinearMethod"
    assert [a.name for a in rep.attention] == [f"language_model.model.layers.{i}.attention.attn" for i in (0, 1)]
    assert all(a.kv_method == "CompressedTensorsKVCacheMethod" for a in rep.attention)


def test_intern_vit_attention_is_replicated_where_tp_does_not_divide_the_vision_heads(make_checkpoint):
    """intern_vit.py InternParallelAttention builds qkv and proj with disable_tp where TP does not divide the heads
    (InternViT-6B's 25); the MLP stays split."""
    vision = dict(INTERN_VIT, hidden_size=384, num_attention_heads=3)
    folder = make_checkpoint(quant="ct-fp8-block", data="sparse",
                             **internvl_chat_spec("InternVLChatModel", QWEN2_LLM, vision))
    ckpt = open_local(folder)
    split = {m.name.rsplit(".", 2)[-2] + "." + m.leaf: (m.tp_size(2), m.tp_size(3))
             for m in build_layout(ckpt.tensors, ckpt.config).linears if m.name.startswith("vision_model.")}
    assert split == {"attn.qkv": (1, 3), "attn.proj": (1, 3), "mlp.fc1": (2, 3), "mlp.fc2": (2, 3)}
    assert inspect(folder, tp=2).ok


def test_llama4_router_outside_ignore_loads(make_checkpoint):
    # Meta's checkpoints leave the router BF16 and do not list it in `ignore`; vLLM builds it without a quant
    # config (GateLinear), so the quantization config never applies to it.
    folder = make_checkpoint(architecture="Llama4ForCausalLM", moe_style="llama4", experts=4, head_dim=128,
                             ignore=("lm_head",), ignore_routers=False, data="sparse")
    assert json.loads(open(f"{folder}/config.json").read())["quantization_config"]["ignore"] == ["lm_head"]
    router = next(layer for layer in inspect(folder).layers if layer.name.endswith("feed_forward.router"))
    assert router.weight_dtype == "BF16" and router.scheme == "UnquantizedLinearMethod" and router.ok


def test_llama4_vision_tower_is_unquantized_whatever_the_config_says(make_checkpoint):
    # mllama4.py passes quant_config=None to the vision model and projector: an FP8 tower there is an error.
    folder = make_checkpoint(architecture="Llama4ForConditionalGeneration", text_prefix="language_model.model",
                             vision="llama4", head_dim=128, ignore=("language_model.lm_head",), data="sparse")
    vision = [layer for layer in inspect(folder).layers if layer.name.startswith("vision_model.")]
    assert vision and all(layer.scheme == "UnquantizedLinearMethod" and layer.ok for layer in vision)


def test_mistral3_projector_linear_2_splits_its_input(make_checkpoint):
    # A row-parallel linear_2 splits K (the text hidden size, 256): at TP 4 each rank holds 64 columns, which
    # validate_fp8_block_shape refuses with the input message; a column-parallel one would name the output.
    folder = make_checkpoint(architecture="Mistral3ForConditionalGeneration", head_dim=128, vision="pixtral",
                             text_prefix="language_model.model", quant="ct-fp8-block", data="sparse",
                             ignore=("language_model.lm_head", "multi_modal_projector.patch_merger.merging_layer"))
    linear_2 = "multi_modal_projector.linear_2"
    assert next(layer for layer in inspect(folder, tp=2).layers if layer.name == linear_2).ok
    at_4 = next(layer for layer in inspect(folder, tp=4).layers if layer.name == linear_2)
    assert at_4.errors == ("Weight input_size_per_partition = 64 is not divisible by weight quantization "
                           "block_k = 128.",)


@pytest.mark.parametrize("vision,heads", [("pixtral", 2), ("qwen2_5_vl", 2), ("siglip", 8)])
def test_vision_qkv_splits_by_the_vision_heads(make_checkpoint, vision, heads):
    arch = {"pixtral": "Mistral3ForConditionalGeneration", "qwen2_5_vl": "Qwen2_5_VLForConditionalGeneration",
            "siglip": "Gemma3ForConditionalGeneration"}[vision]
    folder = make_checkpoint(architecture=arch, vision=vision, vision_heads=heads, vision_hidden=256, quant=None,
                             head_dim=64, data="sparse")
    ckpt = open_local(folder)
    qkv = next(m for m in build_layout(ckpt.tensors, ckpt.config).linears
               if m.layer_type == "QKVParallelLinear" and not m.name.startswith(("model.", "language_model.")))
    assert qkv.heads == (heads, heads, 256 // heads) and qkv.output_sizes == (256, 256, 256)
    # The text model has 4 heads: TP 4 splits it, but not a 2-head vision tower.
    assert (4 in inspect(folder).tp_sizes_ok) is (heads % 4 == 0)


def test_unknown_architecture_is_generic_and_says_so(make_checkpoint):
    rep = inspect(make_checkpoint(architecture="FancyNewForCausalLM", mtp_layers=1, head_dim=128, data="sparse"))
    assert "vLLM 0.34 registers no FancyNewForCausalLM: transformers 5.22.2, the newest vLLM 0.34 allows, has no " \
           "causal-LM or image-text-to-text class" in rep.notes[0]
    assert {layer.layout for layer in rep.layers} == {"generic"}
    assert rep.skipped and "inferred" in rep.skipped[0].reason and rep.ok


def test_json_shows_layout_and_skipped(make_checkpoint):
    folder = make_checkpoint(architecture="Glm4MoeForCausalLM", mtp_layers=1, head_dim=128, data="sparse")
    doc = json.loads(CliRunner().invoke(app, ["inspect", folder, "-p", "h100", "-f", "json"]).stdout)
    assert {layer["layout"] for layer in doc["layers"]} == {"vllm:glm4_moe.py"}
    assert doc["skipped"][0]["prefix"] == "model.layers.2." and doc["skipped"][0]["weight_dtypes"] == ["BF16", "F8_E4M3"]


@pytest.mark.parametrize("platform,shown,hidden", [
    ("mi300x", {"aiter", "rocm_skinny_gemm", "rocm_hip_w8a8"}, {"cuda_version", "flashinfer", "cpu_amx"}),
    ("h100", {"cuda_version", "flashinfer", "deep_gemm"}, {"aiter", "cpu_amx"}),
    ("cpu", {"cpu_amx"}, {"cuda_version", "aiter"}),
])
def test_assumptions_only_for_the_target_platform_kind(make_checkpoint, platform, shown, hidden):
    folder = make_checkpoint(head_dim=128, data="sparse")
    table = CliRunner().invoke(app, ["inspect", folder, "-p", platform, "-v"]).stdout
    doc = json.loads(CliRunner().invoke(app, ["inspect", folder, "-p", platform, "-f", "json"]).stdout)
    assert all(f"{key}=" in table for key in shown) and not any(f"{key}=" in table for key in hidden)
    assert set(doc["assumptions"]) >= shown and not set(doc["assumptions"]) & hidden


# ------------------------------------------------ what only the model file decides (the whole-model comparison)

@pytest.mark.parametrize("vllm,layer_type", [("0.30", "nn.Linear"), ("0.31", "ReplicatedLinear"),
                                             ("0.33", "ReplicatedLinear")])
def test_glm_router_class_follows_the_release(make_checkpoint, vllm, layer_type):
    """glm4_moe.py builds mlp.gate as a torch nn.Linear until 0.30 and as GateLinear from 0.31; unquantized both."""
    folder = make_checkpoint(architecture="Glm4MoeForCausalLM", experts=4, moe_style="deepseek", head_dim=128,
                             data="sparse")
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm)))
    gate = next(layer for layer in rep.layers if layer.name == "model.layers.0.mlp.gate")
    assert (gate.layer_type, gate.scheme) == (layer_type, "UnquantizedLinearMethod") and rep.ok


@pytest.mark.parametrize("vllm,layer_type", [("0.30", "nn.Linear"), ("0.31", "ReplicatedLinear")])
def test_ling_fused_attention_router_and_an_attention_without_kv_method(make_checkpoint, vllm, layer_type):
    """bailing_moe.py: q / k / v stored fused (attention.query_key_value), attention.dense row, mlp.gate a torch
    nn.Linear until 0.30 and GateLinear from 0.31 (unquantized both); its Attention (attention.attn) is built without
    the quant config, so an FP8 checkpoint gives it no KV cache method; sigmoid grouped routing with the expert bias."""
    folder = make_checkpoint(**ling_spec(LING_V2, "BailingMoeV2ForCausalLM", quant="fp8-block", data="sparse"))
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm)))
    gate = next(layer for layer in rep.layers if layer.name == "model.layers.1.mlp.gate")
    assert (gate.layer_type, gate.scheme) == (layer_type, "UnquantizedLinearMethod") and rep.ok
    assert [(a.name, a.kv_method) for a in rep.attention] == [("model.layers.0.attention.attn", None),
                                                              ("model.layers.1.attention.attn", None)]
    assert "routing method DeepSeekV3" in " ".join(rep.moes[0].notes + (rep.moes[0].kernel or "",))


def test_ling_25_linear_layers_are_mixers_mla_layers_attend_and_tp_is_bounded_by_group_norm_size(make_checkpoint):
    """bailing_moe_linear.py: the linear-attention layers (attention.g_proj beside query_key_value) build no
    Attention; the MLA layer's MLAAttention is self_attn.mla_attn.mla_attn (fp8check: attention.mla_attn.mla_attn);
    the MTP layer past num_hidden_layers is skipped; BailingMoELinearAttention asserts TP <= group_norm_size (4)."""
    folder = make_checkpoint(**ling_spec(LING_V25, "BailingMoeV2_5ForCausalLM", quant="fp8-block", data="sparse"))
    rep = inspect(folder, tp=2)
    assert [a.name for a in rep.attention] == ["model.layers.3.attention.mla_attn.mla_attn"] and rep.ok
    assert [s.prefix for s in rep.skipped] == ["model.layers.4."]
    assert "AssertionError: tp_size must be <= group_norm_size for local rms norm" in inspect(folder, tp=8).errors
    assert 2 in rep.tp_sizes_ok and 8 not in rep.tp_sizes_ok
    # With q-LoRA: q_a_proj + kv_a_proj_with_mqa -> fused_qkv_a_proj, a MergedColumnParallelLinear with disable_tp.
    config = dict(LING_V25, q_lora_rank=256)
    rep = inspect(make_checkpoint(**ling_spec(config, "BailingMoeV2_5ForCausalLM", quant="fp8-block", data="sparse")),
                  tp=2)
    fused = next(layer for layer in rep.layers if layer.name == "model.layers.3.attention.fused_qkv_a_proj")
    assert fused.layer_type == "MergedColumnParallelLinear" and fused.scheme == "Fp8LinearMethod" and rep.ok

def _ling_3_block_fp8(make_checkpoint, ignored: list[str], **config) -> str:
    """A block-FP8 (quant_method fp8) Ling-3.0 checkpoint with the KDA b_proj stored BF16, its config's
    ignored_layers rewritten to `ignored` (Ling's exports abbreviate them)."""
    spec = dict(LING_3_SPEC, extra_config={**LING_3, **config}, quant="fp8-block", data="sparse",
                ignore=("lm_head", *(f"model.layers.{i}.attention.b_proj" for i in range(3))))
    folder = make_checkpoint(**spec)
    with open(f"{folder}/config.json") as fh:
        doc = json.load(fh)
    doc["quantization_config"]["ignored_layers"] = ignored
    with open(f"{folder}/config.json", "w") as fh:
        json.dump(doc, fh)
    return folder


@pytest.mark.parametrize("ignored", [["lm_head", "b_proj"],
                                     ["lm_head", *(f"model.layers.{i}.attention.b_proj" for i in range(3))]])
def test_ling_3_kda_b_proj_skipped_by_block_fp8_is_built_apart_and_suffix_matched(make_checkpoint, ignored):
    """bailing_moe_v3.py: a KDA layer (no Attention: only MLA layer 3 attends) fuses q / k / v / b_proj into
    qkvb_proj unless a block-FP8 Fp8Config skips b_proj, matched in the suffix mode the file sets (Ling's abbreviated
    "b_proj" too; not q_b_proj): then qkv_proj and a BF16 b_proj of its own. The MTP layer is skipped."""
    rep = inspect(_ling_3_block_fp8(make_checkpoint, ignored, num_nextn_predict_layers=0), tp=2)
    by_name = {layer.name: layer for layer in rep.layers}
    assert (by_name["model.layers.0.attention.qkv_proj"].layer_type,
            by_name["model.layers.0.attention.qkv_proj"].scheme) == ("MergedColumnParallelLinear", "Fp8LinearMethod")
    assert by_name["model.layers.0.attention.b_proj"].scheme == "UnquantizedLinearMethod"
    assert "model.layers.0.attention.qkvb_proj" not in by_name and rep.ok
    assert [a.name for a in rep.attention] == ["model.layers.3.attention.mla_attn.mla_attn"]
    # other formats always fuse qkvb_proj; an MTP layer past num_hidden_layers is skipped
    mtp = {"model.layers.4.eh_proj.weight": (512, 1024), "model.layers.4.attention.dense.weight": (512, 512)}
    fused = inspect(make_checkpoint(**dict(LING_3_SPEC, extra_config={**LING_3, "num_nextn_predict_layers": 1}),
                                    extra_tensors=mtp, data="sparse"))
    assert "model.layers.0.attention.qkvb_proj" in {layer.name for layer in fused.layers}
    assert [s.prefix for s in fused.skipped] == ["model.layers.4."]


@pytest.mark.parametrize("quant", ["fp8-block", "fp8-dynamic"])
def test_ling_3_vl_fp8_config_listing_the_tower_whole_builds_it_unquantized(make_checkpoint, quant):
    """bailing_moe_v3_vl.py: BailingMoeV3VisionTransformer and BailingMoeV3VLProjector pass quant_config=None under
    an Fp8Config whose ignored_layers holds their own prefix (model.visual -> visual, model.linear_proj ->
    linear_proj by the mapper); is_layer_skipped alone matches none of their layers by it (nor a re: entry, which
    leaves their tensors BF16 here). Without those entries vLLM builds them FP8, where BF16 tensors do not load."""
    bf16 = r"re:model\.(visual|linear_proj)\."
    whole = inspect(make_checkpoint(**dict(LING_3_VL_SPEC, quant=quant, data="sparse",
                                           ignore=("lm_head", "model.visual", "model.linear_proj", bf16))))
    tower = [layer for layer in whole.layers if layer.name.startswith(("model.visual.", "model.linear_proj."))]
    assert len(tower) == 6 and all(layer.scheme == "UnquantizedLinearMethod" and layer.ok for layer in tower)
    assert whole.ok
    listed = inspect(make_checkpoint(**dict(LING_3_VL_SPEC, quant=quant, data="sparse", ignore=("lm_head", bf16))))
    tower = [layer for layer in listed.layers if layer.name.startswith(("model.visual.", "model.linear_proj."))]
    assert len(tower) == 6 and all(layer.scheme == "Fp8LinearMethod" and not layer.ok for layer in tower)


@pytest.mark.parametrize("vllm,error", [("0.32", True), ("0.33", False)])
def test_ling_3_block_fp8_head_wise_gate_is_replicated_from_033(make_checkpoint, vllm, error):
    """bailing_moe_v3.py (0.33+) builds the MLA's head-wise g_proj (4 rows) with disable_tp under a block-FP8 Fp8Config
    that quantizes it: its rows fill no block row on any rank. 0.32 splits it (2 rows per rank at TP 2: vLLM's block
    shape refusal)."""
    rep = inspect_checkpoint(open_local(_ling_3_block_fp8(make_checkpoint, ["lm_head", "b_proj"])),
                             InspectOptions(parse_platform("h100"), select_profile(vllm), tp=2))
    gate = next(layer for layer in rep.layers if layer.name == "model.layers.3.attention.g_proj")
    assert gate.scheme == "Fp8LinearMethod" and bool(gate.errors) is error


@pytest.mark.parametrize("vllm,judged", [("0.33", True), ("0.34", False)])
def test_ling_3_clamped_moe_layers_take_swiglustep_from_034(make_checkpoint, vllm, judged):
    """bailing_moe_v3.py hands the FusedMoE of a layer expert_swiglu_limit_list clamps activation "swiglustep" from
    0.34 (experts named, not judged), "silu" with the swiglu_limit in 0.33; the other MoE layers stay SiLU."""
    spec = dict(LING_3_SPEC, extra_config={**LING_3, "expert_swiglu_limit_list": [0, 0, 7.0, 0]}, data="sparse")
    rep = inspect_checkpoint(open_local(make_checkpoint(**spec)),
                             InspectOptions(parse_platform("h100"), select_profile(vllm)))
    kernels = {moe.name: moe.kernel for moe in rep.moes}
    assert (kernels["model.layers.2.mlp.experts"] is not None) is judged
    assert kernels["model.layers.1.mlp.experts"] is not None and kernels["model.layers.3.mlp.experts"] is not None
def test_sarvam_moe_is_lings_model_under_inclusionais_names(make_checkpoint):
    """sarvam.py SarvamMoEForCausalLM is bailing_moe.py's BailingMoeForCausalLM: q / k / v stored fused, the router an
    unquantized GateLinear, an Attention without the quant config (no KV cache method), sigmoid routing with the
    expert bias (DeepSeekV3)."""
    rep = inspect(make_checkpoint(**sarvam_spec(SARVAM_MOE, quant="fp8-block", data="sparse")), tp=2)
    gate = next(layer for layer in rep.layers if layer.name == "model.layers.1.mlp.gate")
    assert (gate.layer_type, gate.scheme) == ("ReplicatedLinear", "UnquantizedLinearMethod") and rep.ok
    assert [(a.name, a.kv_method) for a in rep.attention] == [("model.layers.0.attention.attn", None),
                                                              ("model.layers.1.attention.attn", None)]
    assert "routing method DeepSeekV3" in " ".join(rep.moes[0].notes + (rep.moes[0].kernel or "",))


@pytest.mark.parametrize("keys,method", [
    ({}, "DeepSeekV3"), ({"moe_router_enable_expert_bias": False}, "SigmoidRenorm"),
    ({"score_function": "softmax", "moe_router_enable_expert_bias": False}, "RenormalizeNaive")])
def test_sarvam_mla_never_fuses_q_a_proj_and_routes_with_the_bias_unless_disabled(make_checkpoint, keys, method):
    """sarvam.py SarvamMLAAttention hands MultiHeadLatentAttentionWrapper no fused_qkv_a_proj: with q-LoRA, q_a_proj
    and kv_a_proj_with_mqa stay two quantized ReplicatedLinears (DeepSeek-V3 fuses them). SarvamMLAMoE: sigmoid scoring
    and the e_score_correction_bias unless config.json says otherwise (getattr defaults), renormalized."""
    config = {k: v for k, v in dict(SARVAM_MLA, q_lora_rank=256, **keys).items()
              if k not in ("score_function", "moe_router_enable_expert_bias") or k in keys}
    rep = inspect(make_checkpoint(**sarvam_spec(config, mla=True, quant="fp8-block", data="sparse")), tp=2)
    layers = {layer.name: layer for layer in rep.layers}
    assert not any(name.endswith("fused_qkv_a_proj") for name in layers) and rep.ok
    for leaf in ("q_a_proj", "kv_a_proj_with_mqa"):
        assert (layers[f"model.layers.0.self_attn.{leaf}"].layer_type,
                layers[f"model.layers.0.self_attn.{leaf}"].scheme) == ("ReplicatedLinear", "Fp8LinearMethod")
    assert f"routing method {method}" in " ".join(rep.moes[0].notes + (rep.moes[0].kernel or "",))


@pytest.mark.parametrize("gated,shards", [(True, ("q_proj", "k_proj", "g_proj")), (False, ("q_proj", "k_proj"))])
def test_ricursive_fuses_q_k_and_the_gate_and_refuses_a_tp_that_splits_kv_heads(make_checkpoint, gated, shards):
    """ricursive.py RicursiveAttention: q / k / g -> qkg_proj (a MergedColumnParallelLinear, g only where
    use_gated_attention), v_proj a ColumnParallelLinear; the Attention self_attn.attn takes config.json's heads and
    the sliding window on layer_types' sliding layers; TP must divide num_key_value_heads (no KV head replicated)."""
    folder = make_checkpoint(**ricursive_spec(gated, quant="fp8-block", data="sparse"))
    rep = inspect(folder, tp=2)
    qkg = next(layer for layer in rep.layers if layer.name == "model.layers.0.self_attn.qkg_proj")
    assert (qkg.layer_type, qkg.scheme) == ("MergedColumnParallelLinear", "Fp8LinearMethod")
    assert tuple(shard.rsplit(".", 1)[-1] for shard in qkg.shards) == shards
    assert [(a.name, a.num_kv_heads, a.sliding_window) for a in rep.attention] == [
        ("model.layers.0.self_attn.attn", 1, 512), ("model.layers.1.self_attn.attn", 1, None)] and rep.ok
    assert ("Ricursive requires num_attention_heads (4) and num_key_value_heads (2) to be divisible by the "
            "tensor parallel size (4).") in inspect(folder, tp=4).errors


def test_expert_parallelism_on_a_model_without_experts_is_vllms_refusal(make_checkpoint):
    rep = inspect_checkpoint(open_local(make_checkpoint(head_dim=128, data="sparse")),
                             InspectOptions(parse_platform("h100"), LATEST, tp=2, ep=True))
    assert rep.errors == ("Number of experts in the model must be greater than 0 when expert parallelism is "
                          "enabled.",)


@pytest.mark.parametrize("tp,fails", [(4, False), (8, True)])
def test_gpt_oss_does_not_replicate_kv_heads(make_checkpoint, tp, fails):
    """gpt_oss.py gives each rank num_key_value_heads // tp KV heads: 0 above the KV head count."""
    folder = make_checkpoint(architecture="GptOssForCausalLM", moe_style="gpt_oss", attention_sinks=True, heads=16,
                             kv_heads=4, head_dim=64, experts=4, data="sparse")
    rep = inspect(folder, tp=tp)
    assert any(e.startswith("integer modulo by zero (gpt_oss.py") for e in rep.errors) is fails
    # Llama replicates KV heads instead: 4 KV heads at TP 8 load.
    assert not inspect(make_checkpoint(heads=16, kv_heads=4, head_dim=64, data="sparse"), tp=tp).errors


def test_tied_embeddings_have_no_head_to_list(make_checkpoint):
    folder = make_checkpoint(architecture="Gemma2ForCausalLM", head_dim=128, tie_embeddings=True, data="sparse")
    rep = inspect(folder)
    assert rep.ok and not any(layer.name == "lm_head" for layer in rep.layers)


def test_gpt_oss_head_is_never_quantized_and_its_experts_are_not_judged(make_checkpoint):
    """gpt_oss.py builds ParallelLMHead without quant_config and its experts with activation swigluoai."""
    folder = make_checkpoint(architecture="GptOssForCausalLM", moe_style="gpt_oss", attention_sinks=True,
                             quant="modelopt-fp8", head_dim=128, experts=4, data="sparse")
    rep = inspect(folder, tp=2)
    head = next(layer for layer in rep.layers if layer.name == "lm_head")
    assert head.scheme == "UnquantizedEmbeddingMethod" and not head.kernel
    assert all(m.kernel is None and "activation swigluoai" in m.notes[0] for m in rep.moes)
    assert "not judged" in inspect_verdict(rep)


def test_qwen35_gated_query_keeps_the_configured_head_size_and_its_mtp_block_is_skipped(make_checkpoint):
    # q_proj holds q and the output gate (2 x heads x head_dim rows): the attention has 4 heads of 128, not 256.
    folder = make_checkpoint(architecture="Qwen3_5MoeForCausalLM", model_type="qwen3_5_moe_text", data="sparse",
                             extra_config=GDN_MOE, extra_tensors={"mtp.fc.weight": (256, 512),
                                                                  "mtp.layers.0.mlp.gate.weight": (4, 256)}, **HF)
    rep = inspect(folder, tp=2)
    assert [(a.name, a.head_size, a.num_heads) for a in rep.attention] == [("model.layers.1.self_attn.attn", 128, 2)]
    assert [s.prefix for s in rep.skipped] == ["mtp."] and "hf_to_vllm_mapper drops 'mtp....'" in rep.skipped[0].reason
    assert not any(layer.name.startswith("mtp.") for layer in rep.layers)
    conv = next(layer for layer in rep.layers if layer.name.endswith("conv1d"))
    assert conv.scheme.startswith("Unquantized") and rep.ok


@pytest.mark.parametrize("vllm,platform,linear_refused,moe_backend_refused", [
    ("0.34", "b200", True, True), ("0.33", "b200", True, True), ("0.32", "b200", True, False),
    ("0.34", "h100", False, None)])  # Hopper: Triton heads the block-FP8 MoE list, DEEPGEMM is never asked
def test_deep_gemm_is_off_for_qwen35_on_blackwell(make_checkpoint, vllm, platform, linear_refused,
                                                  moe_backend_refused):
    """utils/deep_gemm.py should_auto_disable_deep_gemm: the DeepGEMM linear kernel refuses Qwen3.5 on SM100 / SM120
    in every release; the MoE oracle drops DEEPGEMM for it from 0.33."""
    folder = make_checkpoint(architecture="Qwen3_5MoeForCausalLM", model_type="qwen3_5_moe_text", data="sparse",
                             quant="fp8-block", extra_config=GDN_MOE, **HF)
    target = apply_assumptions(parse_platform(platform), ["flashinfer=no"])  # the MoE reaches DEEPGEMM's turn
    rep = inspect_checkpoint(open_local(folder), InspectOptions(target, select_profile(vllm)))
    reasons = {r.reason for layer in rep.layers for r in layer.rejected}
    assert any("Should not use deepgemm for model qwen3_5_moe_text" in r for r in reasons) is linear_refused
    assert "DeepGemmFp8BlockScaledMMKernel" not in {layer.kernel for layer in rep.layers} or not linear_refused
    offered = {r.kernel for moe in rep.moes for r in moe.rejected} | {moe.kernel for moe in rep.moes}
    if moe_backend_refused is not None:
        assert ("TritonOrDeepGemmExperts" not in offered) is moe_backend_refused


def test_weights_that_are_no_linear_are_never_fp8_layers_or_orphans(make_checkpoint):
    """A norm's or convolution's bias belongs to its own weight (vision LayerNorms, Mamba conv1d.bias, an indexer's
    k_norm.bias); DeepSeek-V4 names its token embedding `embed`."""
    folder = make_checkpoint(data="sparse")
    entries = tensor_specs(Spec(quant="ct-fp8-block"))
    entries.update({"model.layers.0.self_attn.indexer.k_norm.weight": ("BF16", (128,)),
                    "model.layers.0.self_attn.indexer.k_norm.bias": ("BF16", (128,)),
                    "model.layers.0.mixer.conv1d.weight": ("BF16", (512, 1, 4)),
                    "model.layers.0.mixer.conv1d.bias": ("BF16", (512,)),
                    "embed.weight": ("BF16", (1000, 256))})
    write_safetensors(f"{folder}/model.safetensors", entries, None)
    rep = inspect(folder)
    assert rep.ok, list(rep.errors)
    assert "embed" not in {layer.name for layer in rep.layers}


def test_a_head_dim_of_zero_reads_as_none(make_checkpoint):
    """GLM-5-Next's MLA config writes head_dim 0: transformers and vLLM take it as unset."""
    rep = inspect(make_checkpoint(data="sparse", extra_config={"head_dim": 0}))
    assert rep.ok and rep.attention[0].head_size == 64


@pytest.mark.parametrize("platform,backend,kv,error", [
    ("h100", "FLASH_ATTN_MLA_SPARSE", "bfloat16", None), ("b200", "FLASHINFER_MLA_SPARSE", "fp8_e4m3", None),
    ("mi300x", "ROCM_AITER_MLA_SPARSE", "bfloat16", None),
    ("cpu", None, "bfloat16", "Sparse Attention is not supported on CPU.")])
def test_dsa_attention_is_sparse_mla_and_the_indexer_is_laid_out(make_checkpoint, platform, backend, kv, error):
    """GLM-5 (GlmMoeDsa): every MLA layer asks for a sparse backend (CPU refuses it, vLLM's NotImplementedError);
    the CUDA / ROCm model class's attention is self_attn itself; SM10x turns --kv-cache-dtype auto into fp8_e4m3
    (GlmMoeDsaForCausalLM.verify_and_update_config); the indexer's wk_weights_proj is an unquantized, replicated
    fusion whose FP8 wk vLLM dequantizes, so the FP8 wk is no error."""
    folder = make_checkpoint(architecture="GlmMoeDsaForCausalLM", model_type="glm_moe_dsa", data="sparse",
                             extra_config=DSA, **DSA_SPEC)
    rep = inspect(folder, platform)
    attention = rep.attention[0]
    assert (attention.backend, attention.kv_cache_dtype, attention.errors[:1]) == (backend, kv, (error,) if error else ())
    assert attention.name == ("model.layers.0.self_attn" if platform in ("h100", "b200", "mi300x")
                              else "model.layers.0.self_attn.mla_attn.mla_attn")
    wk = next(layer for layer in rep.layers if layer.name.endswith("indexer.wk_weights_proj"))
    assert wk.scheme.startswith("Unquantized") and wk.weight_dtype == "BF16/F8_E4M3" and wk.ok
    assert "dequantized to BF16 at load" in " ".join(wk.notes)


@pytest.mark.parametrize("platform,backend", [("h100", "FLASHMLA_SPARSE_DSV4"), ("b200", "FLASHMLA_SPARSE_DSV4"),
                                              ("mi300x", "ROCM_FLASHMLA_SPARSE_DSV4"), ("cpu", "CPU_V4_MLA_SPARSE")])
def test_deepseek_v4_fusions_unquantized_layers_and_own_attention(make_checkpoint, platform, backend):
    """DeepSeek-V4 (models/deepseek_v4): wq_a + wkv fused into a replicated fused_wqa_wkv, each compressor's wkv +
    wgate into an unquantized, replicated fused_wkv_wgate (the same wkv name, another fusion), wo_b a row-parallel
    linear; the routers, the indexer's weights_proj and the head built without the quant config; `embed` is the
    embedding, no linear. Each layer's `attn` is the model's own attention layer: its platform class's backend (no
    selector) and DeepSeek's fp8_ds_mla KV cache, whose layout refuses a BF16 cache."""
    folder = make_checkpoint(architecture="DeepseekV4ForCausalLM", model_type="deepseek_v4", data="sparse",
                             quant="fp8-block", extra_config=DSV4, **DSV4_SPEC)
    rep = inspect(folder, platform, tp=2)
    layers = {layer.name: layer for layer in rep.layers}
    assert not {name.rsplit(".", 1)[-1] for name in layers} & {"wq_a", "wkv", "wgate", "w1", "w3", "embed_tokens"}
    ckpt = open_local(folder)
    split = {m.name: m.tp_split for m in build_layout(ckpt.tensors, ckpt.config).linears}
    assert [split[f"model.layers.1.attn.{leaf}"] for leaf in ("fused_wqa_wkv", "compressor.fused_wkv_wgate",
                                                               "wq_b")] == [False, False, True]
    unquantized = {name for name, layer in layers.items() if layer.scheme.startswith("Unquantized")}
    assert unquantized == {"head", "model.layers.1.attn.indexer.weights_proj",
                           *(f"model.layers.{i}.ffn.gate" for i in range(3)),
                           *(f"model.layers.{i}.attn.compressor.fused_wkv_wgate" for i in (1, 2)),
                           "model.layers.1.attn.indexer.compressor.fused_wkv_wgate"}
    routers = {name for name, layer in layers.items() if any("MoE router" in note for note in layer.notes)}
    assert routers == {f"model.layers.{i}.ffn.gate" for i in range(3)}  # weights_proj and compressors are no router
    assert rep.ok, [e for layer in rep.layers for e in layer.errors] + list(rep.errors)
    assert [(a.name, a.backend, a.kv_cache_dtype, a.kv_method) for a in rep.attention] == [
        (f"model.layers.{i}.attn", backend, "fp8_ds_mla", None) for i in range(3)]
    refused = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), LATEST,
                                                                    kv_cache_dtype="bfloat16"))
    assert "fp8_ds_mla layout only supports fp8 kv-cache, got bfloat16" in refused.attention[0].errors[0]


@pytest.mark.parametrize("release,scheme", [("0.33", "CompressedTensorsW8A8Fp8"), ("0.34", "UnquantizedLinearMethod")])
def test_deepseek_v4_grouped_wo_a_escapes_a_compressed_tensors_linear_target(make_checkpoint, release, scheme):
    """0.34 builds wo_a as DeepseekV4GroupedWoA, whose class name holds no "Linear": compressed-tensors' "Linear"
    target (find_matched_target's class-name match) misses it, so vLLM builds it unquantized and its FP8 weight
    would load unscaled; 0.33's plain ColumnParallelLinear is matched."""
    folder = make_checkpoint(architecture="DeepseekV4ForCausalLM", model_type="deepseek_v4", data="sparse",
                             quant="ct-fp8-block", extra_config=DSV4, **DSV4_SPEC)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(release)))
    wo_a = next(layer for layer in rep.layers if layer.name == "model.layers.0.attn.wo_a")
    assert wo_a.scheme == scheme and bool(wo_a.errors) == (release == "0.34")


def test_deepseek_v4_takes_the_megakernel_moe_backends_itself(make_checkpoint):
    """models/deepseek_v4 reads NATIVE_MEGA_MOE_BACKENDS / MEGA_MOE_BACKENDS (Arch.native_mega_moe): under
    --moe-backend deep_gemm_mega_moe its FP8 experts are not judged, where other models' are map_fp8_backend's
    refusal (test_moe)."""
    folder = make_checkpoint(architecture="DeepseekV4ForCausalLM", model_type="deepseek_v4", data="sparse",
                             quant="fp8-block", extra_config=DSV4, **DSV4_SPEC)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile("0.34"),
                                                                moe_backend="deep_gemm_mega_moe"))
    fp8 = [m for m in rep.moes if m.scheme == "Fp8MoEMethod"]
    assert fp8 and all(m.unjudged and m.unjudged.startswith("--moe-backend deep_gemm_mega_moe is not modelled")
                       and not m.errors for m in fp8)


@pytest.mark.parametrize("expert_dtype,scheme", [("fp8", "Fp8MoEMethod"), (None, "Mxfp4MoEMethod"),
                                                 ("fp4", "Mxfp4MoEMethod")])
def test_deepseek_v4_fp8_config_makes_mxfp4_experts_unless_expert_dtype_is_fp8(make_checkpoint, expert_dtype, scheme):
    """DeepseekV4FP8Config (an "fp8" quantization_config of a deepseek_v4 model): the experts are Mxfp4MoEMethod
    unless config.json's expert_dtype is "fp8", so FP8-stored experts would not load."""
    config = {k: v for k, v in DSV4.items() if k != "expert_dtype"} | ({"expert_dtype": expert_dtype} if expert_dtype
                                                                         else {})
    rep = inspect(make_checkpoint(architecture="DeepseekV4ForCausalLM", model_type="deepseek_v4", data="sparse",
                                  quant="fp8-block", extra_config=config, **DSV4_SPEC))
    assert {m.scheme for m in rep.moes} == {scheme}
    errors = [e for m in rep.moes for e in m.errors]
    assert bool(errors) == (scheme != "Fp8MoEMethod") and all('"expert_dtype": "fp8"' in e for e in errors)


def test_deepseek_v4_mtp_block_is_skipped_by_the_mapper():
    """_make_deepseek_v4_weights_mapper maps "mtp." to None: the main model never loads the MTP block."""
    from fp8check.core.checkpoint.local import parse_model_config
    from fp8check.core.checkpoint.safetensors_header import TensorInfo

    names = {"layers.0.attn.wo_b.weight": (512, 512), "mtp.0.attn.wo_b.weight": (512, 512),
             "mtp.0.ffn.experts.0.w1.weight": (256, 512)}
    tensors = {name: TensorInfo(name, "BF16", shape, 0, 0, "model.safetensors") for name, shape in names.items()}
    config = parse_model_config({"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4",
                                    "num_hidden_layers": 1, "num_nextn_predict_layers": 1})
    layout = build_layout(tensors, config)
    assert [m.name for m in layout.linears] == ["layers.0.attn.wo_b"] and not layout.moes
    assert [s.prefix for s in layout.skipped] == ["mtp."] and "hf_to_vllm_mapper" in layout.skipped[0].reason


@pytest.mark.parametrize("architecture", ["DeepseekV4ForConditionalGeneration", "DeepseekV4ForCausalLM"])
def test_deepseek_v4_vision_tower_is_unquantized_and_refused_on_cpu(make_checkpoint, architecture):
    """DeepSeek-V4-Flash-Vision-Exp names the text class; vLLM's DeepseekV4ModelArchConfigConvertor builds
    DeepseekV4ForConditionalGeneration when vision_n_layers > 0 (common/vl_model.py): the tower and aligner with
    quant_config=None (wqkv over vision_n_heads, stored fused), the text model V4's; on CPU and XPU the class is
    vl_stub.py, which raises while building."""
    folder = make_checkpoint(architecture=architecture, model_type="deepseek_v4", data="sparse", quant="fp8-block",
                             extra_config=dict(DSV4, **DSV4_VISION), **DSV4_VL_SPEC)
    rep = inspect(folder, tp=2)
    assert rep.architectures == ("DeepseekV4ForConditionalGeneration",)
    tower = {layer.name: (layer.layer_type, layer.scheme) for layer in rep.layers
             if layer.name.startswith(("vision.", "aligner."))}
    assert tower == {"vision.patch_embed.proj": ("ReplicatedLinear", "UnquantizedLinearMethod"),
                     "vision.blocks.0.attn.wqkv": ("QKVParallelLinear", "UnquantizedLinearMethod"),
                     "vision.blocks.0.attn.wo": ("RowParallelLinear", "UnquantizedLinearMethod"),
                     "vision.blocks.0.mlp.w1": ("MergedColumnParallelLinear", "UnquantizedLinearMethod"),
                     "vision.blocks.0.mlp.w2": ("RowParallelLinear", "UnquantizedLinearMethod"),
                     "aligner.w1": ("ColumnParallelLinear", "UnquantizedLinearMethod"),
                     "aligner.w2": ("RowParallelLinear", "UnquantizedLinearMethod")}
    assert rep.ok, [e for layer in rep.layers for e in layer.errors] + list(rep.errors)
    for platform in ("cpu", "xpu"):
        assert "DeepSeek-V4 vision (DeepseekV4ForConditionalGeneration) is not supported on the current platform" \
            in inspect(folder, platform).errors[0]


@pytest.mark.parametrize("platform,backend", [("h100", "FLASHMLA_SPARSE_DSV41"),
                                              ("mi300x", "ROCM_FLASHMLA_SPARSE_DSV41")])
def test_deepseek_v41_sparse_topology_indexer_wk_and_engram(make_checkpoint, platform, backend):
    """DeepSeek-V4.1 (models/deepseek_v41): compressors only on kv_source_layer_ids (a ratio-1 one fuses wkv alone
    into fused_wkv_wgate), indexers only on index_source_layer_ids, their wk built with quant_config=None on the KV
    sources; an Engram's wkv a quantized ColumnParallelLinear, its n-gram table (engram.embed) no token embedding;
    the attention V4.1's own backend with the fp8_ds_mla cache; CPU and XPU build the CUDA attention, which asserts."""
    folder = make_checkpoint(architecture="DeepseekV41ForCausalLM", model_type="deepseek_v41", data="sparse",
                             quant="fp8-block", extra_config=DSV41, **DSV41_SPEC)
    rep = inspect(folder, platform)
    layers = {layer.name: layer for layer in rep.layers}
    assert {name for name, layer in layers.items() if name.endswith("indexer.wk")} == {
        "layers.1.attn.indexer.wk", "layers.3.attn.indexer.wk"}
    assert all(layers[f"layers.{i}.attn.indexer.wk"].scheme == "UnquantizedLinearMethod" for i in (1, 3))
    assert layers["layers.3.attn.compressor.fused_wkv_wgate"].shards == ("layers.3.attn.compressor.wkv",)
    assert layers["layers.1.engram.wkv"].scheme == "Fp8LinearMethod"
    assert rep.ok, [e for layer in rep.layers for e in layer.errors] + list(rep.errors)
    assert {(a.backend, a.kv_cache_dtype) for a in rep.attention} == {(backend, "fp8_ds_mla")}
    assert "DeepseekV4 attention requires a CUDA device" in inspect(folder, "cpu").errors[0]


def test_deepseek_v41_engram_refuses_tp_that_leaves_a_rank_without_hash_heads(make_checkpoint):
    """ParallelEngramEmbedding shards (engram_max_ngram_size - 1) x engram_n_heads = 4 hash heads over TP in
    ceil(4 / TP) columns and asserts every rank gets one: TP 8 (7 x 1 >= 4) is refused, TP 4 is not."""
    folder = make_checkpoint(architecture="DeepseekV41ForCausalLM", model_type="deepseek_v41", data="sparse",
                             quant="fp8-block", extra_config=DSV41, **DSV41_SPEC)
    refused = "AssertionError: Engram sharding leaves ranks without hash heads: 4 heads over 8 shards"
    assert refused in inspect(folder, tp=8).errors
    rep = inspect(folder, tp=4)
    assert not any("Engram" in e for e in rep.errors) and 8 not in rep.tp_sizes_ok


def test_deepseek_v41_expert_dtype_may_come_from_the_quantization_config():
    """configs/deepseek_v41.py DeepseekV41Config copies quantization_config's expert_dtype when the config has
    none (DeepSeek-V4's config class does not)."""
    from fp8check.core.checkpoint.local import parse_model_config

    quant = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128],
             "expert_dtype": "fp8"}
    for model_type, expected in (("deepseek_v41", "fp8"), ("deepseek_v4", None)):
        config = parse_model_config({"architectures": ["DeepseekV41ForCausalLM"], "model_type": model_type,
                                     "text_config": {"hidden_size": 512}, "quantization_config": quant})
        assert config.expert_dtype == expected


@pytest.mark.parametrize("platform,error", [("h100", None), ("cpu", "is_act_and_mul=False")])
def test_nemotron_h_experts_are_non_gated_and_its_attention_is_the_mixers(make_checkpoint, platform, error):
    """Experts with up / down only (relu2_no_mul): a one-shard w13, named and not judged (which experts classes
    take the activation is not modelled); CPU refuses non-gated experts (FusedMoEConfig). The attention layer is
    `mixer.attn`; in_proj splits [I, I, GN, GN, H] as MambaMixer2 builds it."""
    rep = inspect(make_checkpoint(architecture="NemotronHForCausalLM", model_type="nemotron_h", quant="ct-fp8-dynamic",
                                  data="sparse", extra_config=NEMOTRON_H, **HF), platform)
    moe = rep.moes[0]
    assert moe.shape == (4, 256, 256) and moe.kernel is None and "relu2_no_mul" in " ".join(moe.notes)
    assert moe.errors[:1] == ((error + " is supported only for CUDA, XPU and ROCm for now",) if error else ())
    assert [a.name for a in rep.attention] == ["backbone.layers.1.mixer.attn"]
    in_proj = next(layer for layer in rep.layers if layer.name.endswith("in_proj"))
    assert in_proj.shape == (512 + 512 + 256 + 256 + 8, 256)


def test_nemotron_h_mamba_heads_must_split_under_tp(make_checkpoint):
    rep = inspect(make_checkpoint(architecture="NemotronHForCausalLM", model_type="nemotron_h", quant="ct-fp8-dynamic",
                                  data="sparse", extra_config=dict(NEMOTRON_H, mamba_num_heads=6, n_groups=3), **HF),
                  tp=4)
    assert "AssertionError: Tensor parallel world size must divide num heads." in rep.errors
    assert any("num_groups must equal 1" in e for e in rep.errors)


def test_gemma4_full_layers_read_v_from_k_with_their_own_geometry(make_checkpoint):
    """attention_k_eq_v: the full-attention layers store q_proj and k_proj only; vLLM's QKVParallelLinear loads q, k, k
    with global_head_dim and num_global_key_value_heads (here 256 and 1), the sliding layers keep 128 and 2."""
    rep = inspect(make_checkpoint(architecture="Gemma4ForCausalLM", model_type="gemma4_text", tie_embeddings=True,
                                  data="sparse", extra_config=GEMMA4, **HF))
    qkv = {layer.name: layer for layer in rep.layers if layer.name.endswith("qkv_proj")}
    assert qkv["model.layers.1.self_attn.qkv_proj"].shards == ("model.layers.1.self_attn.q_proj",
                                                               "model.layers.1.self_attn.k_proj")
    assert [(a.kind, a.head_size, a.num_kv_heads) for a in rep.attention] == [
        ("sliding window 512", 128, 2), ("full", 256, 1), ("sliding window 512", 128, 2), ("full", 256, 1)]
    assert all("gelu_tanh" in " ".join(moe.notes) and moe.kernel is None for moe in rep.moes)


@pytest.mark.parametrize("quant,hidden,quantized", [("fp8-block", 256, True), ("fp8-block", 200, False),
                                                    ("ct-fp8-dynamic", 200, True)])
def test_gemma4_vision_tower_is_quantized_only_at_sizes_its_kernels_take(make_checkpoint, quant, hidden, quantized):
    """gemma4_mm.py _get_tower_quant_config: compressed-tensors quantizes the tower at any size, fp8 only when its
    hidden and intermediate sizes are multiples of 64 — an FP8 tower of other sizes is loaded unscaled (an error)."""
    vision = {"model_type": "gemma4_vision", "hidden_size": hidden, "intermediate_size": 512, "num_hidden_layers": 1,
              "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 100, "patch_size": 16}
    text = dict(GEMMA4, model_type="gemma4_text", hidden_size=256, intermediate_size=512, num_attention_heads=4,
                num_key_value_heads=2, vocab_size=1000)
    folder = make_checkpoint(architecture="Gemma4ForConditionalGeneration", model_type="gemma4", data="sparse",
                             quant=quant, tie_embeddings=True, transformers=True, head_dim=128,
                             extra_config={"text_config": text, "vision_config": vision, "audio_config": None})
    rep = inspect(folder)
    tower = [layer for layer in rep.layers if "vision_tower.encoder" in layer.name]
    assert tower and all(layer.scheme.startswith("Unquantized") != quantized for layer in tower)
    assert all(layer.ok for layer in tower) is quantized
    if not quantized:
        assert all("not all multiples of 64" in layer.errors[0] for layer in tower)


def test_laguna_heads_per_layer_and_the_router_bias_under_experts(make_checkpoint):
    """num_attention_heads_per_layer gives layer 1 eight heads; experts.e_score_correction_bias is the router's, so
    the FusedMoE is read expert by expert (not as fused experts)."""
    rep = inspect(make_checkpoint(architecture="LagunaForCausalLM", model_type="laguna", data="sparse",
                                  extra_config=LAGUNA, **HF))
    assert [a.num_heads for a in rep.attention] == [4, 8, 4]
    assert [(m.num_experts, m.scheme) for m in rep.moes] == [(4, "CompressedTensorsW8A8Fp8MoEMethod")] * 2


def test_hy_v3_router_loads_from_router_gate_unquantized_and_mtp_layers_are_skipped(make_checkpoint):
    """hy_v3.py: the GateLinear mlp.gate (no quant_config) loads the checkpoint's mlp.router.gate; MTP layers past
    num_hidden_layers are skipped; sigmoid routing with the bias over one expert group is DeepSeekV3's."""
    mtp = {"model.layers.2.mlp.experts.0.gate_proj.weight": (256, 256), "model.layers.2.eh_proj.weight": (256, 512)}
    rep = inspect(make_checkpoint(architecture="HYV3ForCausalLM", model_type="hy_v3", data="sparse",
                                  extra_config=dict(HYV3, num_nextn_predict_layers=1), extra_tensors=mtp, **HF))
    router = next(layer for layer in rep.layers if layer.name == "model.layers.1.mlp.router.gate")
    assert router.scheme == "UnquantizedLinearMethod" and rep.ok
    assert [s.prefix for s in rep.skipped] == ["model.layers.2."]
    assert any("routing method DeepSeekV3" in note for moe in rep.moes for note in moe.notes)


def test_longcat_flash_two_mla_layers_per_decoder_layer_zero_experts_and_mtp_skipped(make_checkpoint):
    """longcat_flash.py: each decoder layer's self_attn.0 / self_attn.1 is an MLAAttention of its own; the router
    mlp.router.classifier (n_routed_experts + zero_expert_num wide) a GateLinear without quant_config; the FusedMoE
    over the real experts only, routed by ZeroExpertRouter (Unspecified); the MTP block (model.mtp.*) skipped."""
    mtp = {"model.mtp.layers.0.eh_proj.weight": (512, 1024), "model.mtp.layers.0.self_attn.q_a_proj.weight": (256, 512)}
    rep = inspect(make_checkpoint(data="sparse", quant="fp8-block", extra_tensors=mtp, **LONGCAT_SPEC))
    assert [a.name for a in rep.attention] == [f"model.layers.{i}.self_attn.{j}.mla_attn.mla_attn"
                                               for i in range(2) for j in range(2)]
    router = next(layer for layer in rep.layers if layer.name == "model.layers.0.mlp.router.classifier")
    assert router.scheme == "UnquantizedLinearMethod" and router.shape == (6, 512)
    assert [(moe.name, moe.num_experts) for moe in rep.moes][:1] == [("model.layers.0.mlp.experts", 4)]
    assert any("routing method Unspecified" in note for moe in rep.moes for note in moe.notes)
    assert [s.prefix for s in rep.skipped] == ["model.mtp."] and rep.ok


def test_longcat_flash_ignore_list_naming_the_mla_shards_leaves_fused_qkv_a_proj_quantized(make_checkpoint):
    """longcat_flash.py's packed_modules_mapping has no fused_qkv_a_proj (its loader fuses it): is_layer_skipped
    matches the fused name alone, so q_a_proj / kv_a_proj_with_mqa on the ignore list (stored BF16) still build an
    FP8 layer, which cannot load them; DeepSeek's mapping has the entry and skips the layer."""
    shards = ("model.layers.0.self_attn.0.q_a_proj", "model.layers.0.self_attn.0.kv_a_proj_with_mqa")
    rep = inspect(make_checkpoint(data="sparse", quant="fp8-block", ignore=("lm_head", *shards), **LONGCAT_SPEC))
    fused = next(layer for layer in rep.layers if layer.name == "model.layers.0.self_attn.0.fused_qkv_a_proj")
    assert fused.scheme == "Fp8LinearMethod" and fused.errors and not rep.ok


def test_longcat_flash_lite_ngram_tables_and_projections_are_no_linears(make_checkpoint):
    """longcat_flash_ngram.py NgramEmbedding: the embedders' tables load into one VocabParallelEmbedding and the
    post_projs into a plain nn.Parameter (oe_projection): neither is a linear vLLM builds, so none is quantized."""
    rep = inspect(make_checkpoint(data="sparse", quant="fp8-block", **LONGCAT_LITE_SPEC))
    assert not any("ngram_embeddings" in layer.name for layer in rep.layers) and rep.ok


def test_hy_v4_sparse_layers_take_the_sink_capable_flashmla_sparse(make_checkpoint):
    """hy_v4 attention.py: only layer_types' sparse layers are sparse MLA (the dense layer's indexer tensors are
    skipped); their learnable sink makes the model bind FLASHMLA_SPARSE where the selector's choice cannot apply it
    (H100: FLASH_ATTN_MLA_SPARSE); the hyper-connection hc_fn linears are BF16 ReplicatedLinears."""
    rep = inspect(make_checkpoint(data="sparse", **HYV4_SPEC))
    assert [(a.name, a.backend) for a in rep.attention] == [("model.layers.0.self_attn.mla_attn", "FLASH_ATTN_MLA"),
                                                            ("model.layers.1.self_attn.mla_attn", "FLASHMLA_SPARSE")]
    assert [s.prefix for s in rep.skipped] == ["model.layers.0.self_attn.indexer."]
    hc = [layer for layer in rep.layers if layer.name.endswith(("hc_fn", "hc_head_fn"))]
    assert len(hc) == 5 and all(layer.scheme == "UnquantizedLinearMethod" for layer in hc) and rep.ok


@pytest.mark.parametrize("platform,vllm,backend", [("mi300x", "0.34", "ROCM_AITER_MLA_SPARSE"),
                                                   ("mi355x", "0.30", "ROCM_AITER_MLA_SPARSE")])
def test_hy_v4_keeps_rocm_aiter_mla_sparse_on_mi300_and_mi350(make_checkpoint, platform, vllm, backend):
    """rocm_aiter_mla_sparse.py (0.30+): supports_sink answers on_mi3xx() (gfx942, gfx950), so hy_v4's
    _resolve_sink_backend keeps the selector's ROCM_AITER_MLA_SPARSE and its sink there."""
    rep = inspect_checkpoint(open_local(make_checkpoint(data="sparse", **HYV4_SPEC)),
                             InspectOptions(parse_platform(platform), select_profile(vllm)))
    assert [a.backend for a in rep.attention if a.name == "model.layers.1.self_attn.mla_attn"] == [backend]


@pytest.mark.parametrize("platform,expected", [
    ("cpu", "HYV4 sparse attention was requested, but no valid sparse MLA backend is available for current "
            "runtime/config. Refusing to fall back to dense attention."),
    ("xpu", "Model architectures ['HYV4ForCausalLM'] failed to be inspected. Please check the logs for more details. "
            "(logged before it: NotImplementedError: hy_v4 does not yet support XPU.)")])
def test_hy_v4_refusals(make_checkpoint, platform, expected):
    """hy_v4 refuses to fall back to dense attention where no sparse MLA backend is valid (CPU), and its package
    refuses XPU on import."""
    rep = inspect(make_checkpoint(data="sparse", **HYV4_SPEC), platform)
    assert expected in rep.errors + tuple(e for a in rep.attention for e in a.errors)


@pytest.mark.parametrize("platform,sparse_backend", [("h100", "DOTS3_NOTE_PADDED_MLA_SPARSE"),
                                                     ("b200", "DOTS3_NOTE_PADDED_MLA_SPARSE"), ("a100", None)])
def test_dots3_note_attention_backends_gates_and_dequantized_indexer(make_checkpoint, platform, sparse_backend):
    """models/dots3_note: the DSA layer's MLAAttention (self_attn.mla_attn.mla_attn) is rebuilt on the model's padded
    sparse backend after the selector's pick, whose refusal (no sparse MLA backend on SM80) stands; the sliding
    layer's (self_attn.mla_attn) is handed Dots3NoteTritonMLABackend (TRITON_MLA) with sliding_window_size, never
    asking the selector; head-wise g_proj is a quantized ReplicatedLinear at any TP; the loader dequantizes an FP8
    indexer wk and weights_proj."""
    rep = inspect(make_checkpoint(data="sparse", **DOTS3_SPEC), platform, tp=2)
    assert [(a.name, a.backend, a.sliding_window, bool(a.errors)) for a in rep.attention] == [
        ("model.layers.0.self_attn.mla_attn.mla_attn", sparse_backend, None, sparse_backend is None),
        ("model.layers.1.self_attn.mla_attn", "TRITON_MLA", 512, False)]
    layers = {layer.name: layer for layer in rep.layers}
    assert all(layers[f"model.layers.{i}.self_attn.g_proj"].scheme == "Fp8LinearMethod" for i in (0, 1))
    wk = layers["model.layers.0.self_attn.indexer.wk_weights_proj"]
    assert wk.scheme.startswith("Unquantized") and wk.weight_dtype == "F8_E4M3" and wk.ok
    assert all(layer.ok for layer in rep.layers) and not rep.errors


def test_dots3_note_package_refuses_cpu_on_import(make_checkpoint):
    """models/dots3_note/nvidia/attention.py imports MLA's FlashAttention prefill, whose fa_utils name CPU lacks."""
    rep = inspect(make_checkpoint(data="sparse", **DOTS3_SPEC), "cpu")
    assert any(e.startswith("Model architectures ['Dots3NoteForCausalLM'] failed to be inspected") and
               "compile_flash_attn_varlen_func_from_specs" in e for e in rep.errors)


def test_zaya_replicates_every_linear_and_keeps_its_routers_unquantized(make_checkpoint):
    """zaya.py: ZayaCCA's q / k / v_proj_current / v_proj_delayed and o_proj are quantized ReplicatedLinears at any TP,
    ZayaRouter's down_proj / router_mlp linears ReplicatedLinears without quant_config whose widths are
    router_hidden_size and num_experts + 1 (no hidden_size shape error); ZayaAttention's Attention takes config.json's
    heads and the sliding window on "hybrid_sliding" layers only."""
    rep = inspect(make_checkpoint(data="sparse", **ZAYA_SPEC), tp=2)
    layers = {layer.name: layer for layer in rep.layers}
    for leaf in ("qkv_proj.q_proj", "qkv_proj.k_proj", "qkv_proj.v_proj_current", "qkv_proj.v_proj_delayed",
                 "o_proj"):
        layer = layers[f"model.layers.1.self_attn.{leaf}"]
        assert (layer.layer_type, layer.scheme) == ("ReplicatedLinear", "Fp8LinearMethod")
    for leaf in ("down_proj", "router_mlp.fc1", "router_mlp.fc2", "router_mlp.out_proj"):
        layer = layers[f"model.layers.0.mlp.gate.{leaf}"]
        assert layer.layer_type == "ReplicatedLinear" and layer.scheme.startswith("Unquantized") and layer.ok
    assert [(a.name, a.num_heads, a.num_kv_heads, a.sliding_window) for a in rep.attention] == [
        ("model.layers.0.self_attn.attn", 4, 2, None), ("model.layers.1.self_attn.attn", 4, 2, 512)]
    assert rep.ok


@pytest.mark.parametrize("platform,backend", [("h100", "FLASH_ATTN_DIFFKV"), ("b200", "FLASH_ATTN_DIFFKV"),
                                              ("a100", "TRITON_ATTN_DIFFKV"), ("mi300x", "TRITON_ATTN_DIFFKV"),
                                              ("cpu", "TRITON_ATTN_DIFFKV")])
def test_mimo_v2_layers_take_the_models_diff_kv_backend(make_checkpoint, platform, backend):
    """mimo_v2.py MiMoV2Attention: V's head size (128) differing from K's (192), the model hands every layer
    FLASH_ATTN_DIFFKV where FA3 / FA4 serves it, else TRITON_ATTN_DIFFKV, on every platform; the hybrid_layer_pattern's
    sliding layer has its own KV heads, sliding_window_size and sinks; the MTP layer's tensors are skipped."""
    rep = inspect(make_checkpoint(data="sparse", **MIMO_V2_SPEC), platform)
    assert [(a.backend, a.num_kv_heads, a.sliding_window) for a in rep.attention] == [
        (backend, 2, None), (backend, 4, 128), (backend, 2, None)]
    assert [s.prefix for s in rep.skipped] == ["mtp"] and rep.ok


@pytest.mark.parametrize("vllm,errors", [("0.33", ((), ())), ("0.34", (
    (), ("Unsupported FP8 Diff-KV configuration; use an unquantized KV cache.",)))])
def test_mimo_v2_fp8_kv_cache_on_h100(make_checkpoint, vllm, errors):
    """0.34's FlashAttentionDiffKVImpl asks FlashAttention for an FP8 cache at V's head size: on H100 the sliding
    layer's sinks upgrade FA3 to FA4 (get_flash_attn_version's "Diff-KV with sinks"), which serves FP8 there only at
    head size 512; the full layer keeps FA3. 0.33 has no such check."""
    folder = make_checkpoint(data="sparse", **MIMO_V2_SPEC)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm),
                                                                kv_cache_dtype="fp8"))
    assert tuple(a.errors for a in rep.attention[:2]) == errors


@pytest.mark.parametrize("quant,vllm,tp,full_layer", [
    ("fp8-block", "0.34", 1, ("MergedColumnParallelLinear", 768 + 2 * 384)),
    ("fp8-block", "0.33", 1, ("MergedColumnParallelLinear", 768 + 2 * 384)),
    ("fp8-block", "0.34", 2, ("QKVParallelLinear", 768 + 384 + 256)),    # a chunk a rank: [Q | K | V]
    ("fp8-block", "0.32", 1, ("QKVParallelLinear", 768 + 384 + 256)),    # before _fused_qkv_kv_chunk_rows
    ("ct-fp8-block", "0.34", 1, ("QKVParallelLinear", 768 + 384 + 256))])  # no weight_block_size
def test_mimo_v2_pro_fused_qkv_by_tp(make_checkpoint, quant, vllm, tp, full_layer):
    """mimo_v2.py MiMoV2Attention: the fused qkv_proj of a full layer (per chunk 2 x 192 Q rows, 192 K, 128 V: K and
    V not whole 128-blocks) is a MergedColumnParallelLinear [Q | chunks x 384] below TP num_key_value_heads under a
    weight_block_size config from 0.33; the sliding layer's (two KV heads a chunk: whole blocks) a QKVParallelLinear.
    Its attention is read from the fused rows: V's head size 128, so the DiffKV backend."""
    folder = make_checkpoint(**dict(MIMO_V2_PRO_SPEC, quant=quant, data="sparse"))
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm), tp=tp))
    layers = {layer.name: layer for layer in rep.layers}
    full = layers["model.layers.0.self_attn.qkv_proj"]
    assert (full.layer_type, full.shape[0]) == full_layer
    assert layers["model.layers.1.self_attn.qkv_proj"].layer_type == "QKVParallelLinear"
    assert {a.backend for a in rep.attention} == {"FLASH_ATTN_DIFFKV"}


def test_mimo_v2_pro_per_chunk_block_scales(make_checkpoint):
    """_shard_fp8_qkv_proj reads the fused qkv_proj's block scales as one grid (11 rows for 1408) or tiled per chunk
    (2 x ceil(704 / 128) = 12, as MiMo's exporter writes them); any other row count is refused."""
    ckpt = open_local(make_checkpoint(**dict(MIMO_V2_PRO_SPEC, data="sparse")))
    scale = ckpt.tensors["model.layers.0.self_attn.qkv_proj.weight_scale_inv"]
    options = InspectOptions(parse_platform("h100"), LATEST)
    for rows, ok in ((11, True), (12, True), (13, False)):
        ckpt.tensors[scale.name] = scale._replace(shape=(rows, scale.shape[1]))
        layer = next(layer for layer in inspect_checkpoint(ckpt, options).layers if layer.name ==
                     "model.layers.0.self_attn.qkv_proj")
        assert not layer.errors if ok else "must be [11, 4]" in layer.errors[0]


@pytest.mark.parametrize("quant", ["ct-fp8-block", "modelopt-fp8"])
def test_mimo_v2_pro_fused_fp8_qkv_needs_weight_scale_inv(make_checkpoint, quant):
    """MiMoV2Model._try_load_fp8_qkv_proj holds a fused float8_e4m3fn qkv_proj.weight until its weight_scale_inv
    arrives: under a format whose scale is weight_scale the weight is never loaded (no error in vLLM)."""
    rep = inspect(make_checkpoint(**dict(MIMO_V2_PRO_SPEC, quant=quant, data="sparse")))
    held = [layer.name for layer in rep.layers if any("is never loaded" in e for e in layer.errors)]
    assert held == [f"model.layers.{i}.self_attn.qkv_proj" for i in range(3)]


def test_dsa_indexer_needs_deep_gemm_on_cuda(make_checkpoint):
    """SparseAttnIndexer.__init__ refuses a CUDA host without DeepGEMM (--assume deep_gemm=no): vLLM's RuntimeError."""
    folder = make_checkpoint(architecture="DeepseekV32ForCausalLM", model_type="deepseek_v32", data="sparse",
                             extra_config=DSA, **DSA_SPEC)
    without = apply_assumptions(parse_platform("h100"), ["deep_gemm=no"])
    rep = inspect_checkpoint(open_local(folder), InspectOptions(without, LATEST))
    assert "Sparse Attention Indexer CUDA op requires DeepGEMM support in the current vLLM environment." in rep.errors
    assert inspect(folder, "h100").ok


@pytest.mark.parametrize("platform,vllm,refused", [("xpu", "0.34", True), ("xpu", "0.29", False),
                                                   ("h100", "0.34", False)])
def test_glm5_next_package_refuses_xpu_on_import(make_checkpoint, platform, vllm, refused):
    """vllm/models/glm5next/__init__.py raises on XPU; the registry turns it into its 'failed to be inspected'."""
    folder = make_checkpoint(architecture="Glm5NextForCausalLM", model_type="glm5_next", data="sparse")
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), select_profile(vllm)))
    expected = ("Model architectures ['Glm5NextForCausalLM'] failed to be inspected. Please check the logs for more "
                "details. (logged before it: NotImplementedError: GLM-5.3-Flash does not currently support XPU.)")
    assert (expected in rep.errors) is refused


def _glm5_next(make_checkpoint, **overrides):
    return make_checkpoint(**{**GLM5_NEXT_SPEC, "data": "sparse", **overrides})


def test_glm5_next_mla_and_kda_are_bf16_but_for_what_the_loader_dequantizes(make_checkpoint):
    """models/glm5next builds the MLA, the indexer and KDA with quant_config=None: an FP8 q_a / kv_a / q_b / o_proj
    or indexer wk is dequantized at load (_try_load_fp8_attn_proj, _try_load_fp8_indexer_wk); any other FP8 weight
    there (a KDA q_proj, kv_b_proj) fails vLLM's load, as fp8check says."""
    rep = inspect(_glm5_next(make_checkpoint, ignore=("lm_head",)))
    by_name = {layer.name: layer for layer in rep.layers}
    attention = [layer for name, layer in by_name.items() if ".self_attn." in name]
    assert attention and all(layer.scheme == "UnquantizedLinearMethod" for layer in attention)
    dequantized = ("model.layers.1.self_attn.fused_qkv_a_proj", "model.layers.1.self_attn.q_b_proj",
                   "model.layers.1.self_attn.o_proj", "model.layers.0.self_attn.o_proj")
    assert all(by_name[name].ok for name in dequantized)
    refused = {name for name, layer in by_name.items() if not layer.ok}
    assert refused == {"model.layers.0.self_attn.in_proj_qkvbfg_a", "model.layers.0.self_attn.f_b_proj",
                       "model.layers.0.self_attn.g_b_proj", "model.layers.1.self_attn.kv_b_proj",
                       "model.layers.1.self_attn.indexer.wq_b", "model.layers.1.self_attn.indexer.wk_weights_proj"}
    assert by_name["model.layers.0.mlp.gate_up_proj"].scheme == "Fp8LinearMethod"


@pytest.mark.parametrize("vllm,convs", [("0.34", ["conv1d"]), ("0.33", ["q_conv1d", "k_conv1d", "v_conv1d"])])
def test_glm5_next_kda_convolutions_fuse_from_034(make_checkpoint, vllm, convs):
    """0.34's kda.py loads q / k / v_conv1d into one conv1d (_fused_qkv_conv1d); 0.33 builds three."""
    folder = _glm5_next(make_checkpoint)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm)))
    names = [layer.name.rsplit(".", 1)[1] for layer in rep.layers if "conv1d" in layer.name]
    assert sorted(names) == sorted(convs) and rep.ok


@pytest.mark.parametrize("vllm,cache,backend", [("0.34", "fp8", "FLASHINFER_MLA_SPARSE"),
                                                ("0.32", "bfloat16", "FLASHINFER_MLA_SPARSE")])
def test_glm5_next_on_blackwell_takes_an_fp8_cache_and_flashinfer_nope_sparse_mla(make_checkpoint, vllm, cache,
                                                                                   backend):
    """Glm5NextModelConfig turns --kv-cache-dtype auto into fp8 on SM10x from 0.33; FLASHINFER_MLA_SPARSE takes its
    NoPE shape (qk_nope_head_dim 256, kv_lora_rank 512) from 0.30. The KDA layer has no attention; the MTP layer
    is skipped."""
    folder = _glm5_next(make_checkpoint)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("b200"), select_profile(vllm)))
    assert [(a.name, a.kv_cache_dtype, a.backend) for a in rep.attention] == [
        ("model.layers.1.self_attn.mla_attn.mla_attn", cache, backend)]
    assert [s.prefix for s in rep.skipped] == ["model.layers.2."] and rep.ok


def test_gemma4_kv_shared_layers_reuse_a_cache_and_drop_their_k_v(make_checkpoint):
    """num_kv_shared_layers 2 (the E-models): layers 2 and 3 have q_proj alone (a ColumnParallelLinear), k / v
    shipped for them are dropped as gemma4.py's mapper drops them, and their attention layers read layers 0 / 1's
    caches (their geometry, no cache of their own)."""
    config = dict(GEMMA4, num_kv_shared_layers=2)
    folder = make_checkpoint(architecture="Gemma4ForCausalLM", model_type="gemma4_text", tie_embeddings=True,
                             data="sparse", extra_config=config, **HF,
                             extra_tensors={"model.layers.3.self_attn.k_proj.weight": (256, 256),
                                            "model.layers.3.self_attn.v_proj.weight": (256, 256)})
    rep = inspect(folder)
    assert rep.ok, list(rep.errors)
    by_name = {layer.name: layer for layer in rep.layers}
    assert by_name["model.layers.3.self_attn.q_proj"].layer_type == "ColumnParallelLinear"
    assert "model.layers.3.self_attn.qkv_proj" not in by_name
    assert {s.prefix for s in rep.skipped} == {"model.layers.3.self_attn.k_proj.", "model.layers.3.self_attn.v_proj."}
    shared = {a.name: a for a in rep.attention}
    assert [(a.kind, a.head_size, a.num_kv_heads, a.cache_bytes_per_token)
            for a in (shared["model.layers.2.self_attn.attn"], shared["model.layers.3.self_attn.attn"])] == [
        ("sliding window 512", 128, 2, 0), ("full", 256, 1, 0)]


def test_transformers_backend_plans_are_transformers_own():
    """layouts.TP_PLANS is a copy of each config class's base_model_tp_plan (its nn.Linear entries: a shared
    expert's, not the routed experts' 3-D parameters)."""
    transformers = pytest.importorskip("transformers")
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    model_type = {arch: mt for mt, arch in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.items()}
    for arch, plan in TP_PLANS.items():
        theirs = transformers.CONFIG_MAPPING[model_type[arch]].base_model_tp_plan or {}
        linears = {key.removeprefix("layers.*."): style for key, style in theirs.items()
                   if key.startswith("layers.*.") and "mlp.experts" not in key and not key.endswith("_norm")}
        assert plan == linears, arch


@pytest.mark.parametrize("vllm,source", [("0.25", "vllm:phi.py"),                   # phi.py until 0.32 moved it
                                         ("0.33", "vllm:transformers/causal.py")])
def test_an_architecture_moved_to_the_transformers_backend_follows_the_release(make_checkpoint, vllm, source):
    # Both build Phi's attention output `dense` as a RowParallelLinear (phi.py; the backend: Phi's tp_plan).
    folder = make_checkpoint(architecture="PhiForCausalLM", model_type="phi", layers=1, **TF)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm), tp=2))
    dense = next(layer for layer in rep.layers if layer.name == "model.layers.0.self_attn.dense")
    assert (dense.layout, dense.layer_type) == (source, "RowParallelLinear") and rep.ok


@pytest.mark.parametrize("vllm,layout", [("0.28", "generic"), ("0.29", "vllm:transformers/moe.py")])
def test_flex_olmo_is_judged_only_where_the_backend_builds_it(make_checkpoint, vllm, layout):
    # flex_olmo.py (0.25-0.28) builds its FusedMoE with quant_config=None, which fp8check does not model.
    folder = make_checkpoint(architecture="FlexOlmoForCausalLM", model_type="flex_olmo", layers=1, **OLMOE)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm)))
    assert {m.layout for m in rep.moes} == {layout}
    assert bool(rep.notes) is (layout == "generic")


def test_olmoe_router_outside_the_ignore_list_stays_unquantized_through_the_backend(make_checkpoint):
    # The backend's MoE fuser rebuilds transformers' gate as a GateLinear (no quant_config), as olmoe.py did.
    folder = make_checkpoint(architecture="OlmoeForCausalLM", model_type="olmoe", layers=1, ignore_routers=False,
                             **OLMOE)
    rep = inspect(folder)
    router = next(layer for layer in rep.layers if layer.name == "model.layers.0.mlp.gate")
    assert router.scheme == "UnquantizedLinearMethod" and router.layout == "vllm:transformers/moe.py" and rep.ok


@pytest.mark.parametrize("vllm,layout,router,routing", [
    ("0.31", "vllm:mellum.py", "CompressedTensorsW8A8Fp8", "Default"),  # Qwen3-MoE's GateLinear
    ("0.33", "vllm:transformers/moe.py", "UnquantizedLinearMethod", "RenormalizeNaive")])  # the MoE fuser's
def test_mellum_router_and_routing_follow_the_release(make_checkpoint, vllm, layout, router, routing):
    # mellum.py (0.29-0.31) reads vLLM's MellumConfig, a Qwen3MoeConfig (norm_topk_prob false unless set); the
    # backend transformers' MellumConfig (true). The window on the sliding layer only; the backend drops the MTP
    # block.
    backend = layout.endswith("moe.py")
    mtp = {"extra_tensors": {"mtp.layers.0.self_attn.q_proj.weight": (4096, 2048)}} if backend else {}
    folder = make_checkpoint(architecture="MellumForCausalLM", model_type="mellum", layers=2, ignore_routers=False,
                             **mtp, **MELLUM)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm)))
    gate = next(layer for layer in rep.layers if layer.name == "model.layers.1.mlp.gate")
    # The BF16 router outside the ignore list: an error where vLLM quantizes it.
    assert (gate.layout, gate.scheme, rep.ok) == (layout, router, backend)
    assert rep.moes[0].notes[0].startswith(f"routing method {routing} (")
    assert [a.kind for a in rep.attention] == ["sliding window 512", "full"]
    assert [s.prefix for s in rep.skipped] == (["mtp."] if backend else [])


def test_kolibri1_router_is_no_linear_and_routes_outside_the_fused_moe(make_checkpoint):
    # The MoE fuser cannot trace Kolibri1TopKRouter: it stays transformers' module (a plain nn.Parameter weight).
    rep = inspect(make_checkpoint(architecture="Kolibri1ForCausalLM", model_type="kolibri1", layers=2, **KOLIBRI1))
    assert not any(layer.name.endswith("mlp.gate") for layer in rep.layers) and rep.ok
    assert rep.moes[0].notes[0].startswith("routing method Custom (")


def test_qwen35_in_proj_qkvz_splits_into_q_k_v_z_under_tp(make_checkpoint):
    # create_qkvz_proj: output sizes [key_dim, key_dim, value_dim, value_dim]. At TP 4 q and k (2 x 128 = 256) give
    # 64 rows a rank: no 128-block fits, though the stored in_proj_qkv (1024 / 4 = 256) would split.
    folder = make_checkpoint(architecture="Qwen3_5ForCausalLM", model_type="qwen3_5_text", extra_config=GDN, **HF)
    rep = inspect(folder, tp=4)
    qkvz = next(layer for layer in rep.layers if layer.name == "model.layers.0.linear_attn.in_proj_qkvz")
    assert qkvz.errors and "output_partition_size = 64" in qkvz.errors[0]
    assert inspect(folder, tp=2).ok


def test_step35_sliding_heads_router_and_swiglustep_experts(make_checkpoint):
    """step3p5.py: sliding layers take num_sliding_attention_heads; moe.gate is a GateLinear without quant_config;
    experts saved stacked (moe.gate_proj [E, I, H]) are read per expert as llm-compressor writes them; the FusedMoE
    whose swiglu_limits entry is set runs swiglustep (named, not judged), the other silu (judged, MiniMax2 routing:
    sigmoid with router_bias, renormalized)."""
    rep = inspect(make_checkpoint(architecture="Step3p5ForCausalLM", model_type="step3p5", data="sparse",
                                  extra_config=STEP35, **dict(HF, ignore=("lm_head", "re:.*g_proj$"))))
    assert rep.ok, list(rep.errors)
    assert [(a.num_heads, a.num_kv_heads, a.kind) for a in rep.attention] == [
        (4, 2, "full"), (8, 2, "sliding window 512"), (4, 2, "full")]
    router = next(layer for layer in rep.layers if layer.name == "model.layers.1.moe.gate")
    assert router.scheme == "UnquantizedLinearMethod"
    silu, limited = rep.moes
    assert (silu.name, silu.num_experts, silu.kernel is not None) == ("model.layers.1.moe.experts", 4, True)
    assert any("MiniMax2" in note for note in silu.notes)
    assert limited.kernel is None and "activation swiglustep" in limited.notes[0]


def test_step35_remote_code_config_names_kv_heads_and_sliding_heads_its_own_way(make_checkpoint):
    """Step's own config.json (remote code) names the KV heads num_attention_groups and gives the sliding layers'
    heads in attention_other_setting, both of which step3p5.py reads."""
    folder = make_checkpoint(architecture="Step3p5ForCausalLM", model_type="step3p5", data="sparse", kv_heads=2,
                             extra_config=STEP35, **dict(HF, ignore=("lm_head", "re:.*g_proj$")))
    with open(f"{folder}/config.json") as fh:
        doc = json.load(fh)
    doc["num_attention_groups"] = doc.pop("num_key_value_heads")
    doc["attention_other_setting"] = {"attention_type": "sliding_attention",
                                      "num_attention_heads": doc.pop("num_sliding_attention_heads")}
    with open(f"{folder}/config.json", "w") as fh:
        json.dump(doc, fh)
    assert [(a.num_heads, a.num_kv_heads) for a in inspect(folder).attention] == [(4, 2), (8, 2), (4, 2)]


def test_step5_sparse_layer_fuses_the_indexer_into_one_plain_gemm_with_its_own_backend(make_checkpoint):
    """models/step5 (nvidia/model.py): the sparse layer's q / k / v, sparse_indexer_q / k / z and g_proj load into one
    unquantized Step5FusedQKVIndexerLinear, sparse_indexer_w is a ColumnParallelLinear without quant_config; the
    model hands Attention its backend (STEP5_DSA there, FLASH_ATTN on the sliding layers, their g_proj separate) and
    builds it without the quant config (no KV cache method)."""
    rep = inspect(make_checkpoint(data="sparse", **STEP5_SPEC))
    assert rep.ok, list(rep.errors)
    by_name = {layer.name: layer for layer in rep.layers}
    fused = by_name["model.layers.1.self_attn.qkv_indexer_proj"]
    assert [s.rsplit(".", 1)[1] for s in fused.shards] == [
        "q_proj", "k_proj", "v_proj", "sparse_indexer_q", "sparse_indexer_k", "sparse_indexer_z", "g_proj"]
    assert fused.scheme == by_name["model.layers.1.self_attn.sparse_indexer_w"].scheme == "UnquantizedLinearMethod"
    assert "model.layers.0.self_attn.g_proj" in by_name and "model.layers.1.self_attn.g_proj" not in by_name
    assert [(a.name, a.backend, a.kv_method, a.num_heads) for a in rep.attention] == [
        ("model.layers.0.self_attn.attn", "FLASH_ATTN", None, 16),
        ("model.layers.1.self_attn.attn", "STEP5_DSA", None, 8),
        ("model.layers.2.self_attn.attn", "FLASH_ATTN", None, 16)]


def test_step5_sparse_layer_refuses_a_quantized_fused_gemm(make_checkpoint):
    """Step5FusedQKVIndexerLinear raises unless its quant method is UnquantizedLinearMethod: an FP8 sparse layer (its
    q / k / v / g / indexer not in the ignore list) is vLLM's refusal of the model, naming the method's class."""
    ignore = ("lm_head", "re:.*layers[.][02][.]self_attn[.]g_proj$", "re:.*sparse_indexer_w$")
    rep = inspect(make_checkpoint(data="sparse", **dict(STEP5_SPEC, quant="fp8-block", ignore=ignore)))
    fused = next(layer for layer in rep.layers if layer.name.endswith("qkv_indexer_proj"))
    assert fused.errors[0] == ("Step5 DSA layers fuse qkv with the sparse indexer into one plain GEMM and cannot be "
                               "quantized, but model.layers.1.self_attn.qkv_indexer_proj.weight resolved to "
                               "Fp8LinearMethod.")


def test_step5_vl_keeps_its_towers_over_the_text_models_rocm_implementation(make_checkpoint):
    """models/step5 vl.py: Step3p7ForConditionalGeneration's tower and projector (quantized) over the text model of
    text_config's class, which 0.34 resolves on ROCm to amd/model.py (q / k / v -> qkv_proj on the sparse layer too,
    the indexer unquantized apart) and elsewhere to nvidia/model.py (the fused, unquantized qkv_indexer_proj)."""
    folder = make_checkpoint(data="sparse", **STEP5_VL)
    for platform, sparse_qkv in (("h100", "qkv_indexer_proj"), ("mi300x", "qkv_proj")):
        by_name = {layer.name: layer for layer in inspect(folder, platform).layers}
        assert f"model.layers.1.self_attn.{sparse_qkv}" in by_name
        assert by_name["vit_large_projector"].scheme.startswith("CompressedTensors")
        assert by_name["vision_model.transformer.resblocks.0.mlp.fc1"].layout == "vllm:step_vl.py"
    assert by_name["model.layers.1.self_attn.sparse_indexer_k"].scheme == "UnquantizedLinearMethod"


def test_step5_vl_maps_a_shared_expert_ignore_entry_by_the_text_models_mapper_too(make_checkpoint):
    """initialize_model's configure_quant_config (model_loader/utils.py) maps the quant config's lists by the VL
    class's mapper, then by the text class's: an ignore entry under the checkpoint's share_expert name reaches
    moe.share_expert on ROCm too, where amd/vl.py's own mapper (step3p7.py's) does not move it."""
    ignore = (*STEP5_VL["ignore"], *(f"model.layers.1.share_expert.{p}" for p in ("gate_proj", "up_proj", "down_proj")))
    folder = make_checkpoint(data="sparse", **dict(STEP5_VL, ignore=ignore))
    for platform in ("h100", "mi300x"):
        by_name = {layer.name: layer for layer in inspect(folder, platform).layers}
        shared = by_name["model.layers.1.share_expert.gate_up_proj"]
        assert shared.scheme == "UnquantizedLinearMethod" and not shared.errors


def test_nemotron_vl_reads_llm_config_and_lays_out_its_towers_per_release(make_checkpoint):
    """nano_nemotron_vl.py: llm_config is the text config (vLLM's _CONFIG_ATTRS_MAPPING), Nemotron-H under
    language_model (laid out, not guessed); the RADIO tower is built without the quant config, under radio.py's 0.33
    tree (vision_model.model.encoder.layers.N.attn) or 0.34's transformers-like one (encoder.layer.N.attention); mlp1
    and the patch embedder are torch nn.Linears; its heads come from vision_config.args.model."""
    folder = make_checkpoint(data="sparse", **nemotron_vl_spec())
    config = open_local(folder).config
    assert config.text_architectures == ("NemotronHForCausalLM",) and config.mamba is not None
    assert config.vision_heads == 6 and config.vision_hidden_size == 384
    for vllm, qkv, embedder in (("0.33", "vision_model.model.encoder.layers.0.attn.qkv",
                                 "vision_model.model.patch_generator.embedder"),
                                ("0.34", "vision_model.encoder.layer.0.attention.qkv",
                                 "vision_model.embeddings.patch_projection")):
        rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm)))
        by_name = {layer.name: layer for layer in rep.layers}
        assert by_name[qkv].scheme == "UnquantizedLinearMethod" and by_name[qkv].layout == "vllm:radio.py"
        assert by_name[embedder].layer_type == "nn.Linear"
        assert "generic" not in {layer.layout for layer in rep.layers} and not rep.notes and rep.ok
        assert by_name["language_model.backbone.layers.2.mixer.up_proj"].scheme.startswith("CompressedTensors")


def test_nemotron_omni_drops_its_mtp_layer_and_lists_the_sound_encoder(make_checkpoint):
    """The Omni checkpoints (the same class): nemotron_h.py's mapper drops language_model.mtp. after load_weights strips
    language_model.; parakeet.py's ProjectedParakeet (sound_encoder.encoder, sound_projection -> sound_encoder.
    projection) and the video embedder are torch nn.Linears."""
    rep = inspect(make_checkpoint(data="sparse", **nemotron_vl_spec("NemotronH_Nano_Omni_Reasoning_V3", omni=True)))
    by_name = {layer.name: layer for layer in rep.layers}
    assert [s.prefix for s in rep.skipped] == ["language_model.mtp"]
    for name in ("sound_encoder.encoder.layers.0.self_attn.q_proj", "sound_encoder.projection.linear1",
                 "vision_model.embeddings.video_patch_projection"):
        assert by_name[name].layer_type == "nn.Linear" and by_name[name].scheme == "UnquantizedLinearMethod"
    assert rep.ok


def test_step5_sliding_heads_come_from_swa_num_attention_heads(make_checkpoint):
    """vLLM's Step5Config names the sliding layers' heads swa_num_attention_heads, which Step5Attention reads (over
    attention_other_setting); a config.json without Step-3.5's num_sliding_attention_heads keeps them."""
    folder = make_checkpoint(data="sparse", **STEP5_SPEC)
    with open(f"{folder}/config.json") as fh:
        doc = json.load(fh)
    del doc["num_sliding_attention_heads"]
    with open(f"{folder}/config.json", "w") as fh:
        json.dump(doc, fh)
    assert [a.num_heads for a in inspect(folder).attention] == [16, 8, 16]


def test_step5_sparse_layers_build_on_sm90_sm100_sm103_only(make_checkpoint):
    """Step5Attention refuses a sparse layer off SM90 / SM100 / SM103 (Step5DSAAttentionBackend), naming the device's
    capability (None on CPU), and a TP whose rank holds other than 4, 8 or 16 query heads per KV group
    (_validate_step5_dsa_parallel_geometry: 8 heads over 2 replicated KV groups at TP 4 leave 2)."""
    folder = make_checkpoint(data="sparse", **STEP5_SPEC)
    assert inspect(folder, "b200").ok
    assert "got DeviceCapability(major=8, minor=0)." in inspect(folder, "a100").errors[0]
    assert inspect(folder, "cpu").errors[-1].endswith("SM103; got None.")
    assert "got 2 (num_heads=8, tp_size=4)." in " ".join(inspect(folder, "b200", tp=4).errors)


def test_step35_stacked_experts_read_as_the_per_expert_ones(make_checkpoint, tmp_path):
    """step3p5.py also loads its original stacked experts (moe.gate_proj.weight [E, I, H], ModelOpt's weight_scale /
    input_scale [E]) by slicing loaded_weight[expert_id]: the same FusedMoE as the per-expert checkpoint."""
    gates = tuple(f"model.layers.{i}.self_attn.g_proj" for i in range(3))
    spec = dict(architecture="Step3p5ForCausalLM", model_type="step3p5", data="sparse", quant="modelopt-fp8",
                extra_config=STEP35, **dict(HF, ignore=("lm_head", *gates)))
    per_expert = make_checkpoint(**spec)
    stacked = make_checkpoint(**spec)
    entries: dict[str, tuple[str, tuple[int, ...]]] = {}
    for name, (dtype, shape) in tensor_specs(Spec(**{**spec, "data": "sparse"})).items():
        head, experts, tail = name.partition(".moe.experts.")
        expert, _, rest = tail.partition(".")
        if not experts:
            entries[name] = (dtype, shape)
        elif expert == "0":
            entries[f"{head}.moe.{rest}"] = (dtype, (4, *shape))
    write_safetensors(f"{stacked}/model.safetensors", entries, None)
    assert "model.layers.1.moe.gate_proj.weight" in entries
    ours, theirs = inspect(stacked, tp=2), inspect(per_expert, tp=2)
    assert ours.ok, list(ours.errors)
    assert [(m.name, m.num_experts, m.scheme, m.kernel, m.shape) for m in ours.moes] == [
        (m.name, m.num_experts, m.scheme, m.kernel, m.shape) for m in theirs.moes]


def test_step37_tower_reads_openclip_names_as_vllms(make_checkpoint):
    """step3p7.py's mapper renames the PerceptionEncoder's attn.in_proj_weight / mlp.c_fc / mlp.c_proj to qkv_proj /
    fc1 / fc2, which the ignore list is matched against; the tower carries the quant config (step_vl.py), and the text
    model is Step-3.5's (text_config's class)."""
    rep = inspect(make_checkpoint(architecture="Step3p7ForConditionalGeneration", model_type="step3p7",
                                  data="sparse", extra_config=STEP37, **dict(HF, ignore=STEP37_IGNORE)))
    assert rep.ok, list(rep.errors)
    tower = {layer.name: layer for layer in rep.layers if layer.name.startswith("vision_model.")}
    prefix = "vision_model.transformer.resblocks.0."
    assert sorted(tower) == [f"{prefix}attn.out_proj", f"{prefix}attn.qkv_proj", f"{prefix}mlp.fc1", f"{prefix}mlp.fc2"]
    assert tower[f"{prefix}attn.qkv_proj"].scheme == "UnquantizedLinearMethod"
    assert tower[f"{prefix}mlp.fc1"].scheme == "CompressedTensorsW8A8Fp8"
    assert {m.name for m in rep.moes} == {"model.layers.1.moe.experts", "model.layers.2.moe.experts"}


def test_step3_narrowed_qkv_unquantized_attention_and_head_and_stacked_experts(make_checkpoint, tmp_path):
    """step3_text.py: q_proj (share_q_dim rows) / k_proj / v_proj (one head) load into a ReplicatedLinear qkv_proj
    (no head-count shape check), the Attention has num_attention_heads and one KV head and no quant_config (no KV
    cache method), the LM head has none either; experts stored stacked (moe.gate_proj [E, I, H]) read per expert."""
    spec = dict(architecture="Step3TextForCausalLM", model_type="step3_text", data="sparse", quant="fp8-block",
                **STEP3)
    per_expert = make_checkpoint(**spec)
    rep = inspect(per_expert, tp=2)
    assert rep.ok, list(rep.errors)
    (attn0, attn1) = rep.attention
    assert (attn0.num_heads, attn0.num_kv_heads, attn0.kv_method) == (2, 1, None)
    assert next(layer for layer in rep.layers if layer.name == "lm_head").scheme == "UnquantizedEmbeddingMethod"
    stacked = make_checkpoint(**spec)
    entries: dict[str, tuple[str, tuple[int, ...]]] = {}
    for name, (dtype, shape) in tensor_specs(Spec(**spec)).items():
        head, experts, tail = name.partition(".moe.experts.")
        expert, _, rest = tail.partition(".")
        if not experts:
            entries[name] = (dtype, shape)
        elif expert == "0":
            entries[f"{head}.moe.{rest}"] = (dtype, (4, *shape))
    write_safetensors(f"{stacked}/model.safetensors", entries, None)
    ours = inspect(stacked, tp=2)
    assert ours.ok, list(ours.errors)
    assert [(m.name, m.num_experts, m.scheme, m.kernel) for m in ours.moes] == [
        (m.name, m.num_experts, m.scheme, m.kernel) for m in rep.moes]


def test_step3_vl_tower_is_bf16_and_its_projector_a_torch_linear(make_checkpoint):
    """step3_vl.py builds Step3VisionTransformer with quant_config=None and vit_large_projector as nn.Linear."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **STEP3_VL), tp=2)
    assert rep.ok, list(rep.errors)
    tower = [layer for layer in rep.layers if layer.name.startswith(("vision_model.", "vit_large_projector"))]
    assert len(tower) == 5 and all(layer.scheme == "UnquantizedLinearMethod" for layer in tower)


def test_minimax_m3_sparse_layers_fold_the_indexer_into_qkv_and_are_their_own_attention(make_checkpoint):
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", model_type="minimax_m3_vl",
                                  architecture="MiniMaxM3SparseForConditionalGeneration", extra_config=MINIMAX_M3,
                                  **dict(HF, ignore=("language_model.lm_head",))), tp=2)
    qkv = {layer.name: layer for layer in rep.layers}["language_model.model.layers.1.self_attn.qkv_proj"]
    assert [s.rsplit(".", 1)[1] for s in qkv.shards] == ["q_proj", "k_proj", "v_proj", "index_q_proj", "index_k_proj"]
    attention = {a.name: a for a in rep.attention}
    sparse = attention["language_model.model.layers.1.self_attn"]
    assert sparse.backend == "MINIMAX_M3_SPARSE" and sparse.kv_method is None
    # the model's cache, as the plain layers' (DeepSeek-V4's fp8_ds_mla is its own attention's only)
    assert sparse.kv_cache_dtype == attention["language_model.model.layers.0.self_attn.attn"].kv_cache_dtype
    assert "language_model.model.layers.0.self_attn.attn" in attention
    assert not any(name.startswith("vision_tower.") for name in attention)
    assert all(moe.scheme and moe.backend is None for moe in rep.moes)  # SwiGLU-OAI experts: not judged
    assert rep.ok, [e for layer in rep.layers for e in layer.errors] + list(rep.errors)


PIXTRAL = {"model_type": "pixtral", "hidden_size": 256, "intermediate_size": 512, "num_hidden_layers": 1,
           "num_attention_heads": 2, "head_dim": 128, "patch_size": 14, "image_size": 1540}
DEEPSEEK_V3_TEXT = dict(model_type="deepseek_v3", hidden_size=512, intermediate_size=512, num_hidden_layers=2,
                        num_attention_heads=4, num_key_value_heads=4, q_lora_rank=256, kv_lora_rank=128,
                        qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, n_routed_experts=4,
                        n_shared_experts=1, moe_intermediate_size=256, num_experts_per_tok=2, first_k_dense_replace=1,
                        n_group=1, topk_group=1, vocab_size=1000)
MINISTRAL3_TEXT = dict(model_type="ministral3", hidden_size=512, intermediate_size=512, num_hidden_layers=2,
                       num_attention_heads=4, num_key_value_heads=2, head_dim=128, vocab_size=1000)


@pytest.mark.parametrize("text,expected", [
    (DEEPSEEK_V3_TEXT, {"language_model.model.layers.0.self_attn.fused_qkv_a_proj":
                        ("DeepSeekV2FusedQkvAProjLinear", "vllm:deepseek_v2.py"),
                        "language_model.model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:deepseek_v2.py")}),
    (MINISTRAL3_TEXT, {"language_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:mistral.py")}),
], ids=["mistral-large-3-hf", "ministral-3-vl"])
def test_mistral3_builds_the_text_model_its_text_config_names(make_checkpoint, text, expected):
    """mistral3.py builds its language model with init_vllm_registered_model(hf_config=config.text_config): a
    deepseek_v3 text_config (Mistral-Large-3 in HF format) is DeepSeek-V3's MLA + MoE, a ministral3 one mistral.py's."""
    folder = make_checkpoint(architecture="Mistral3ForConditionalGeneration", model_type="mistral3", quant="fp8-block",
                             data="sparse", transformers=True,
                             ignore=("language_model.lm_head", "multi_modal_projector.patch_merger.merging_layer"),
                             extra_config={"text_config": text, "vision_config": PIXTRAL, "spatial_merge_size": 2,
                                           "multimodal_projector_bias": False, "vision_feature_layer": -1})
    rep = inspect(folder, tp=2)
    assert rep.ok, [e for layer in rep.layers for e in layer.errors] + list(rep.errors)
    by_name = {layer.name: layer for layer in rep.layers}
    assert {name: (by_name[name].layer_type, by_name[name].layout) for name in expected} == expected
    assert by_name["vision_tower.transformer.layers.0.attention.qkv_proj"].layout == "vllm:pixtral.py"


def test_a_mistral_format_checkpoint_is_read_not_refused(tmp_path):
    """params.json + consolidated.safetensors (what vLLM reads by default): its config and vLLM's names
    (tests/test_mistral_format.py has the rest)."""
    (tmp_path / "params.json").write_text('{"dim": 512, "n_layers": 1, "n_heads": 4, "head_dim": 128}')
    header = b'{"layers.0.attention.wq.weight":{"dtype":"BF16","shape":[512,512],"data_offsets":[0,524288]}}'
    (tmp_path / "consolidated.safetensors").write_bytes(len(header).to_bytes(8, "little") + header
                                                         + bytes(524288))
    checkpoint = open_local(str(tmp_path))
    assert checkpoint.config.architectures == ("MistralForCausalLM",)
    assert list(checkpoint.tensors) == ["model.layers.0.self_attn.q_proj.weight"]


def test_a_mistral_format_voxtral_quantizes_its_encoder(make_checkpoint):
    """voxtral.py builds the Whisper encoder with the model's quant config: under params.json's FP8 `quantization`
    (no ignore list) a BF16 encoder is an FP8 layer that vLLM loads unscaled; the adapter has no quant method."""
    folder = make_checkpoint(architecture="VoxtralForConditionalGeneration", mistral_format=True, quant="fp8-static",
                             vision="voxtral-mistral", vision_hidden=256, head_dim=128, data="sparse",
                             extra_config={"multimodal": {"whisper_model_args": WHISPER_ARGS}})
    rep = inspect(folder)
    by_name = {layer.name: layer for layer in rep.layers}
    encoder = by_name["whisper_encoder.whisper_encoder.layers.0.self_attn.qkv_proj"]
    assert encoder.scheme == "Fp8LinearMethod" and any("is BF16" in e for e in encoder.errors)
    assert by_name["audio_language_adapter.w_in"].scheme == "UnquantizedLinearMethod"
    assert by_name["language_model.model.layers.0.self_attn.qkv_proj"].errors == ()


def test_codestral_mamba_in_mistral_format_is_mamba2(make_checkpoint):
    """params.json's model_type mamba: Mamba2ForCausalLM over mamba_ssm's names (not renamed); Mistral's scale names
    (qscale_weight), which its loader has no parameter for, leave the FP8 mixers without their scales."""
    folder = make_checkpoint(architecture="Mamba2ForCausalLM", model_type="mamba2", transformers=True,
                             mistral_format=True, quant="fp8-dynamic", hidden=512, heads=8, data="sparse",
                             ignore=("lm_head", "re:.*conv1d$"), extra_config=MAMBA2)
    rep = inspect(folder)
    by_name = {layer.name: layer for layer in rep.layers}
    assert rep.architectures == ("Mamba2ForCausalLM",) and not rep.attention
    in_proj = by_name["backbone.layers.0.mixer.in_proj"]
    assert (in_proj.layer_type, in_proj.layout, in_proj.scheme) == ("MergedColumnParallelLinear", "vllm:mamba2.py",
                                                                     "Fp8LinearMethod")
    assert any("weight_scale is missing" in e for e in in_proj.errors)
    with open(f"{folder}/params.json") as fh:  # without the Mamba2Config keys a config.json gives: vLLM's build fails
        params = {k: v for k, v in json.load(fh).items() if k not in MAMBA2 or k == "n_groups"}
    with open(f"{folder}/params.json", "w") as fh:
        json.dump(params, fh)
    assert inspect(folder).errors == ("'PreTrainedConfig' object has no attribute 'state_size'",)


def test_a_mistral_format_mixtral_is_vllms_refusal(make_checkpoint):
    """A `moe` block without shared experts: vLLM builds MixtralForCausalLM from a config without num_local_experts
    (the build fails; --enable-expert-parallel counts 0 experts) and, given config.json's, fails to load the
    consolidated names."""
    from fp8check.core.checkpoint.mistral import MIXTRAL_NAMES, MIXTRAL_NO_EXPERTS

    folder = make_checkpoint(architecture="MixtralForCausalLM", mistral_format=True, quant="fp8-static",
                             moe_style="mistral", experts=4, head_dim=128, data="sparse",
                             extra_config={"moe": {"num_experts_per_tok": 2, "num_experts": 4}})
    rep = inspect(folder)
    assert rep.architectures == ("MixtralForCausalLM",) and MIXTRAL_NO_EXPERTS in rep.errors and not rep.ok
    ep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), LATEST, tp=2, ep=True))
    assert "Number of experts in the model must be greater than 0 when expert parallelism is enabled." in ep.errors
    with open(f"{folder}/config.json", "w") as fh:
        json.dump({"num_local_experts": 4}, fh)
    assert MIXTRAL_NAMES in inspect(folder).errors


@pytest.mark.parametrize("vllm,platform,error", [
    ("0.34", "h100", "AssertionError: 4 is not divisible by 8"),           # DeepseekV4GroupedWoA: divide()
    ("0.33", "cpu", "integer division or modulo by zero"),                  # cpu_sparse.py divides while building
    ("0.33", "h100", None),                                                 # builds with 0 groups a rank
])
def test_deepseek_v4_output_groups_split_over_tp(make_checkpoint, vllm, platform, error):
    folder = make_checkpoint(architecture="DeepseekV4ForCausalLM", model_type="deepseek_v4", quant="fp8-block",
                             extra_config=dict(DSV4, o_groups=4), **DSV4_SPEC)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), select_profile(vllm), tp=8))
    raised = [e for e in rep.errors if "output groups" in e or "is not divisible by 8" in e]
    if error is None:
        assert raised == []
    else:
        assert len(raised) == 1 and raised[0].startswith(error), raised


@pytest.mark.parametrize("quant,quantized", [("fp8-block", True), ("ct-fp8-block", False)])
def test_kimi_k25_tower_takes_the_quant_config_unless_compressed_tensors(make_checkpoint, quant, quantized):
    """kimi_k25.py _maybe_ignore_quant_config: the MoonViT tower and projector are built with the model's quant config,
    but with None for a compressed-tensors one — an FP8 tower there would load unscaled (an error)."""
    rep = inspect(make_checkpoint(**dict(KIMI_K25, quant=quant, data="sparse", moe_intermediate=256)))
    tower = [layer for layer in rep.layers if layer.name.startswith(("vision_tower.", "mm_projector."))]
    assert len(tower) == 6 and all(layer.scheme.startswith("Unquantized") != quantized for layer in tower)
    assert all(layer.ok for layer in tower) is quantized
    if not quantized:
        assert all("quant_config=None for a compressed-tensors checkpoint" in layer.errors[0] for layer in tower)


@pytest.mark.parametrize("platform,attention", [("h100", "model.layers.2.self_attn"),
                                                ("mi300x", "model.layers.2.self_attn.mla_attn.mla_attn")])
def test_kimi_linear_kda_projections_fuse_and_the_mla_layer_is_its_attention(make_checkpoint, platform, attention):
    """Kimi-Linear's KDA layers: q / k / v / b / f_a_proj load into one in_proj_qkvgfab and q / k / v_conv1d into an
    unquantized conv1d; its MLA layer is the attention module itself on CUDA (nvidia/model.py), amd/linear.py's
    wrapper holds it on ROCm."""
    rep = inspect(make_checkpoint(architecture="KimiLinearForCausalLM", model_type="kimi_linear", hidden=512,
                                  vocab=1000, transformers=True, extra_config=KIMI_LINEAR, quant="fp8-block",
                                  data="sparse", moe_intermediate=256), platform=platform)
    layers = {layer.name: layer for layer in rep.layers}
    in_proj = layers["model.layers.0.self_attn.in_proj_qkvgfab"]
    assert [s.rsplit(".", 1)[-1] for s in in_proj.shards] == ["q_proj", "k_proj", "v_proj", "b_proj", "f_a_proj"]
    conv = layers["model.layers.1.self_attn.conv1d"]
    assert conv.scheme.startswith("Unquantized") and len(conv.shards) == 3
    assert [a.name for a in rep.attention] == [attention]


@pytest.mark.parametrize("platform,method", [("h100", None), ("mi300x", "ModelOptKVCacheMethod")])
def test_kimi_linear_mla_attention_of_its_own_gets_no_modelopt_kv_method(make_checkpoint, platform, method):
    """On CUDA nvidia/mla.py's MultiHeadLatentAttention is the attention itself, an AttentionLayerBase that is neither
    Attention nor MLAAttention: ModelOpt's get_quant_method (isinstance (Attention, MLAAttention)) gives it no KV cache
    method; amd/linear.py's wrapper holds an MLAAttention, which gets ModelOpt's."""
    rep = inspect(make_checkpoint(architecture="KimiLinearForCausalLM", model_type="kimi_linear", hidden=512,
                                  vocab=1000, transformers=True, extra_config=KIMI_LINEAR, quant="modelopt-fp8",
                                  kv_cache="tensor", data="sparse", moe_intermediate=256), platform=platform)
    assert [a.kv_method for a in rep.attention] == [method]


@pytest.mark.parametrize("platform,release,tp,runner", [
    ("mi300x", "0.34", 2, "MoERunner"), ("mi300x", "0.34", 1, None), ("xpu", "0.34", 2, "MoERunner"),
    ("xpu", "0.32", 2, None), ("h100", "0.34", 2, None)])
def test_kimi_linear_amd_moe_padded_below_256_a_rank_fails_to_build(make_checkpoint, platform, release, tp, runner):
    """amd/linear.py KimiMoE (ROCm; XPU from 0.33) pads a rank's intermediate columns below
    min_moe_intermediate_per_partition (256) and reads the padded w13 off FusedMoE's MoERunner, which keeps it on
    routed_experts: AttributeError. 256 columns at TP 2 are 128 a rank."""
    folder = make_checkpoint(architecture="KimiLinearForCausalLM", model_type="kimi_linear", hidden=512, vocab=1000,
                             transformers=True, extra_config=KIMI_LINEAR, quant="fp8-block", data="sparse",
                             moe_intermediate=256)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), select_profile(release),
                                                                tp=tp))
    expected = f"'{runner}' object has no attribute 'w13_weight_packed'"
    assert [m.errors[0].startswith(expected) if m.errors else None for m in rep.moes] == \
        [True if runner else None] * len(rep.moes)


@pytest.mark.parametrize("release,refused", [("0.34", True), ("0.33", True), ("0.32", False)])
def test_kimi_k3_on_xpu_is_refused_where_its_text_model_is_amd_linear(make_checkpoint, release, refused):
    """models/kimi_k3/__init__.py (0.33+) builds the text model on XPU with amd/linear.py, whose KDA layers import
    vllm.platforms.rocm, which queries torch.cuda: an XPU build of torch asserts. Before, nvidia/model.py built it."""
    folder = make_checkpoint(**kimi_k3_spec(quant="fp8-block", data="sparse"))
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("xpu"), select_profile(release)))
    assert any(e.startswith("AssertionError: Torch not compiled with CUDA enabled") for e in rep.errors) == refused


def test_kimi_k25_mtp_layer_under_language_model_is_skipped(make_checkpoint):
    """The text model's MTP layer (text_config.num_nextn_predict_layers) is named language_model.model.layers.N;
    kimi_k25.py's loader hands it to DeepseekV2ForCausalLM as model.layers.N, which skips it."""
    text = dict(KIMI_K2_TEXT, num_nextn_predict_layers=1)
    spec = dict(KIMI_K25, extra_config={**KIMI_K25["extra_config"], "text_config": text},
                extra_tensors={"language_model.model.layers.2.eh_proj.weight": (512, 1024)})
    rep = inspect(make_checkpoint(**dict(spec, quant="fp8-block", data="sparse", moe_intermediate=256)))
    assert not any(layer.name.startswith("language_model.model.layers.2.") for layer in rep.layers)
    assert [s.prefix for s in rep.skipped] == ["language_model.model.layers.2."]


def _kimi_k3_modules(folder):
    checkpoint = open_local(folder)
    return {m.name: m for m in build_layout(checkpoint.tensors, checkpoint.config).linears}


def test_kimi_k3_qkv_gate_and_kda_in_proj_hold_their_latents_whole_on_every_rank(make_checkpoint):
    """mla.py (mla_use_output_gate): q_a_proj / kv_a_proj_with_mqa / g_proj load into one fused_qkv_a_g_proj, a
    KimiK3MergedQKVGateLinear (layers/linear.py: output_sizes [q_a x tp, kv_a x tp, gate], the latents loaded from
    tp_rank 0's slice on every rank); kda.py KimiK3DeltaAttention's in_proj_qkvgfab takes the full-rank g_proj as
    shard 3 and b_proj as 5, its f_a shard replicated the same way."""
    modules = _kimi_k3_modules(make_checkpoint(**kimi_k3_spec(quant="fp8-block", ignore=("language_model.lm_head",))))
    gate = modules["language_model.layers.2.self_attn.fused_qkv_a_g_proj"]
    assert tp_layout(gate, 2).output_partition_sizes == (256, 576, 256)
    reads = rank_reads(gate, tp_layout(gate, 2), 1, (128, 128))
    assert [read.weight.rows for read in reads.shards] == [(0, 256), (0, 576), (256, 512)]
    in_proj = modules["language_model.layers.0.self_attn.in_proj_qkvgfab"]
    assert [s.name.rsplit(".", 1)[-1] for s in in_proj.shards] == ["q_proj", "k_proj", "v_proj", "g_proj", "f_a_proj",
                                                                   "b_proj"]
    assert tp_layout(in_proj, 2).output_partition_sizes == (256, 256, 256, 256, 128, 2)


def test_kimi_k31_dsa_layer_builds_its_own_gate_and_a_sparse_attention(make_checkpoint):
    """dsa.py KimiK3DSAAttention (Kimi-K3.1's dsa_config layers): fused_qkv_a_proj (disable_tp) and a g_proj column of
    its own instead of fused_qkv_a_g_proj; the indexer's wk + weights_proj load into dsa_indexer.wkv_index
    (quant_config=None, replicated); its MLAAttention, wrapped, is sparse. The MTP layer past num_hidden_layers,
    under language_model.layers., is skipped (get_spec_layer_idx_from_weight_name)."""
    rep = inspect(make_checkpoint(**kimi_k3_spec(dsa=True, data="sparse")), platform="b200", tp=2)
    layers = {layer.name: layer for layer in rep.layers}
    assert "language_model.layers.2.self_attn.fused_qkv_a_g_proj" not in layers
    assert layers["language_model.layers.2.self_attn.g_proj"].scheme.startswith("CompressedTensors")
    assert layers["language_model.layers.2.self_attn.indexer.wkv_index"].scheme.startswith("Unquantized")
    assert [(a.name, a.backend) for a in rep.attention] == [
        ("language_model.layers.2.self_attn.mla_attn.mla_attn", "FLASHINFER_MLA_SPARSE")]
    assert [s.prefix for s in rep.skipped] == ["language_model.layers.3."] and rep.ok


def test_alice_ai_residual_projections_and_routers_are_unquantized_and_kda_f_a_is_replicated(make_checkpoint):
    """alice_ai.py: attn_res_proj (layers from 1), mlp_res_proj and attnres_final.res_proj are ReplicatedLinears
    built without quant_config (as the GateLinear router and shared_expert_gate), so an FP8 checkpoint that quantizes
    them fails to load; KimiGatedDeltaNetAttention's in_proj_qkvgfab (q, k, v, b, f_a: replicated_shard_id=4) holds
    f_a whole on every rank."""
    rep = inspect(make_checkpoint(**dict(ALICE_AI_SPEC, quant="fp8-block", data="sparse", ignore=("lm_head",))), tp=2)
    layers = {layer.name: layer for layer in rep.layers}
    assert "model.layers.0.attn_res_proj" not in layers
    for name in ("model.layers.1.attn_res_proj", "model.layers.0.mlp_res_proj", "model.attnres_final.res_proj"):
        assert layers[name].scheme.startswith("Unquantized") and "quant_config=None" in layers[name].errors[0], name
    assert all(layers[f"model.layers.1.mlp.{router}"].scheme.startswith("Unquantized")
               for router in ("gate", "shared_expert_gate"))
    modules = _kimi_k3_modules(make_checkpoint(**dict(ALICE_AI_SPEC, quant="fp8-block", ignore=("lm_head",))))
    in_proj = modules["model.layers.0.linear_attn.in_proj_qkvgfab"]
    assert [s.name.rsplit(".", 1)[-1] for s in in_proj.shards] == ["q_proj", "k_proj", "v_proj", "b_proj", "f_a_proj"]
    assert tp_layout(in_proj, 2).output_partition_sizes == (256, 256, 256, 2, 128)

@pytest.mark.parametrize("act,judged", [("silu", True), ("situ", False)])
def test_kimi_k3_latent_experts_take_the_latent_width_and_the_config_activation(make_checkpoint, act, judged):
    """nvidia/model.py KimiMoE: routed_expert_down_proj / routed_expert_up_proj (quantized ReplicatedLinears) around
    a FusedMoE of routed_expert_hidden_size, activation config.hidden_act (SITU experts: named, not judged)."""
    spec = kimi_k3_spec(data="sparse")
    spec["extra_config"] = dict(spec["extra_config"], text_config=dict(KIMI_K3_TEXT, hidden_act=act))
    rep = inspect(make_checkpoint(**spec), tp=2)
    layers = {layer.name: layer for layer in rep.layers}
    down = layers["language_model.layers.1.block_sparse_moe.routed_expert_down_proj"]
    assert down.layer_type == "ReplicatedLinear" and down.scheme.startswith("CompressedTensors")
    moe = rep.moes[0]
    assert not moe.errors and (moe.kernel is not None) is judged
    assert judged or "activation situ" in moe.notes[0]
    wide = dict(spec, extra_config=dict(spec["extra_config"], text_config=dict(KIMI_K3_TEXT,
                                                                               routed_expert_hidden_size=512)))
    assert "routed_expert_hidden_size" in inspect(make_checkpoint(**wide), tp=2).moes[0].errors[0]

def test_a_moved_architecture_routes_its_experts_as_the_releases_layout(make_checkpoint):
    # FlexOlmo from 0.29: the backend's MoE fuser routes OLMoE's softmax top-k without renormalizing (Default), so
    # TRT-LLM's monolithic experts refuse it on SM100; before 0.29 FlexOlmo is not laid out (generic routing).
    folder = make_checkpoint(architecture="FlexOlmoForCausalLM", model_type="flex_olmo", layers=1, **OLMOE)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("b200"), select_profile("0.34")))
    (moe,) = rep.moes
    assert "routing method Default (transformers/moe.py" in moe.notes[0]
    assert moe.kernel == "TrtLlmFp8ExpertsModular"


@pytest.mark.parametrize("quant,limit,vllm,kernel", [
    ("modelopt-fp8", None, "0.34", "FlashInferExperts"),         # transformers' default clamp, 10.0
    ("fp8-block", 10.0, "0.34", "TrtLlmFp8ExpertsMonolithic"),   # 128-block with SiLU: TRT-LLM applies the clamp
])
def test_glm5_next_swiglu_clamp_keeps_per_tensor_experts_off_trtllm(make_checkpoint, quant, limit, vllm, kernel):
    """common/model.py hands FusedMoE config.swiglu_limit; TrtLlmFp8ExpertsBase.is_supported_config refuses a clamp
    on per-tensor keys (0.30 on), so SM100 falls to FlashInfer's CUTLASS experts, as vLLM picks."""
    extra = {**GLM5_NEXT_SPEC.get("extra_config", {}), **({"swiglu_limit": limit} if limit else {})}
    folder = make_checkpoint(**dict(GLM5_NEXT_SPEC, quant=quant, data="sparse", extra_config=extra))
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("b200"), select_profile(vllm)))
    assert rep.moes and {m.kernel for m in rep.moes} == {kernel}
    if kernel == "FlashInferExperts":
        assert any("SwiGLU alpha/beta/clamp parameters only for block-scaled weights" in rejection.reason
                   for moe in rep.moes for rejection in moe.rejected)


def test_glm5_next_attention_built_without_quant_config_has_no_kv_method(make_checkpoint):
    # common/attention.py builds Glm5NextMLAAttention with quant_config=None: ModelOpt's FP8 KV cache config gives its
    # MLAAttention no KV cache method (a Llama's attention gets ModelOpt's).
    rep = inspect(make_checkpoint(**dict(GLM5_NEXT_SPEC, quant="modelopt-fp8", data="sparse")))
    assert rep.attention and {a.kv_method for a in rep.attention} == {None}
    llama = inspect(make_checkpoint(quant="modelopt-fp8", head_dim=128, data="sparse"))
    assert {a.kv_method for a in llama.attention} == {"ModelOptKVCacheMethod"}


def _qwen4_exp(make_checkpoint, **overrides):
    return make_checkpoint(**{**QWEN4_EXP_SPEC, "data": "sparse", "moe_intermediate": 256, **overrides})


def test_qwen4_exp_hyper_connections_are_bf16_and_the_qsa_layer_is_its_own_attention(make_checkpoint):
    """nvidia/hyperconnection.py builds the hyper-connections with quant_config=None: BF16 ones load, an FP8 one
    fails vLLM's load. nvidia/qsa.py's Qwen4ExpQSAAttention is the attention layer itself (QWEN4_EXP_QSA_TRITON, no
    KV method); ple_layer.py's kv_proj carries the quant config; model.py's head has none."""
    rep = inspect(_qwen4_exp(make_checkpoint), tp=2)
    by_name = {layer.name: layer for layer in rep.layers}
    hyper = [layer for name, layer in by_name.items() if "hyper_connection" in name]
    assert len(hyper) == 10 and all(layer.scheme == "UnquantizedLinearMethod" and layer.ok for layer in hyper)
    assert by_name["model.layers.0.ple.kv_proj"].scheme == "CompressedTensorsW8A8Fp8"
    assert by_name["lm_head"].scheme == "UnquantizedEmbeddingMethod"
    assert {a.name: (a.backend, a.kv_method) for a in rep.attention} == {
        "model.layers.1.self_attn": ("QWEN4_EXP_QSA_TRITON", None)}
    fp8_hyper = inspect(_qwen4_exp(make_checkpoint, ignore=("lm_head", "re:.*in_proj_(b|a)$", "re:.*ngram_embedding")))
    failed = {layer.name for layer in fp8_hyper.layers if not layer.ok}
    assert failed == {name for name in by_name if "hyper_connection" in name}


@pytest.mark.parametrize("vllm,platform,indexer_bf16,fused", [
    ("0.34", "h100", False, True), ("0.34", "h100", True, False), ("0.33", "h100", True, True),
    ("0.34", "mi300x", False, False)])
def test_qwen4_exp_indexer_folds_into_qkv_where_vllm_fuses_it(make_checkpoint, vllm, platform, indexer_bf16, fused):
    """nvidia/qsa.py loads indexer.index_qk_proj into qkv_proj (0.33 always, 0.34 only when its quant method is
    q / k / v's); ROCm's amd/qsa.py keeps it a ReplicatedLinear. The layer is QSA's attention either way."""
    ignore = ("lm_head", "re:.*in_proj_(b|a)$", "re:.*hyper_connection", "re:.*ngram_embedding",
              *(("re:.*index_qk_proj",) if indexer_bf16 else ()))
    folder = _qwen4_exp(make_checkpoint, ignore=ignore)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), select_profile(vllm)))
    names = {layer.name: layer.layer_type for layer in rep.layers}
    assert ("model.layers.1.self_attn.indexer.index_qk_proj" not in names) is fused
    assert names["model.layers.1.self_attn.qkv_proj"] == ("Qwen4ExpQSAQKVIndexerLinear" if fused
                                                          else "QKVParallelLinear")
    assert [a.backend for a in rep.attention] == ["QWEN4_EXP_QSA_TRITON"]


@pytest.mark.parametrize("platform,refused", [("xpu", True), ("h100", False), ("cpu", False)])
def test_qwen4_exp_package_refuses_xpu_on_import(make_checkpoint, platform, refused):
    """vllm/models/qwen4_exp/__init__.py raises on XPU (and TPU); CPU imports nvidia/model.py (which then refuses
    while building, below)."""
    rep = inspect_checkpoint(open_local(_qwen4_exp(make_checkpoint)),
                             InspectOptions(parse_platform(platform), select_profile("0.34")))
    expected = ("Model architectures ['Qwen4ExpForCausalLM'] failed to be inspected. Please check the logs for more "
                "details. (logged before it: NotImplementedError: Qwen4Exp currently supports CUDA and ROCm only)")
    assert (expected in rep.errors) is refused


@pytest.mark.parametrize("platform,refused", [("cpu", True), ("h100", False), ("mi300x", False)])
def test_qwen4_exp_ple_table_needs_an_accelerator_view_off_cpu(make_checkpoint, platform, refused):
    """The PLE table lives in pinned host memory (EngramConfig's default cpu_offload) and is read through a UVA view,
    which get_accelerator_view_from_cpu_tensor refuses on CPU while the model is built."""
    rep = inspect_checkpoint(open_local(_qwen4_exp(make_checkpoint)),
                             InspectOptions(parse_platform(platform), select_profile("0.33")))
    refusal = "`get_accelerator_view_from_cpu_tensor` is currently not supported in: cpu"
    assert (refusal in rep.errors) is refused


def test_qwen4_exp_mtp_and_rebuilt_ple_state_are_dropped_by_the_mapper(make_checkpoint):
    """model.py's load_weights maps names holding "mtp." (the Qwen4ExpMTP draft), "hashstats_", "token_lookup" and
    "hyper_connection_mixer.block_inject_weight" to None: never layers of the main model."""
    extra = {"mtp.layers.0.mlp.gate_proj.weight": (256, 256), "mtp.fc.weight": (256, 512),
             "model.hyper_connection_mixer.block_inject_weight.weight": (4, 1024)}
    rep = inspect(_qwen4_exp(make_checkpoint, extra_tensors=extra))
    assert not [layer.name for layer in rep.layers if "mtp." in layer.name or "block_inject_weight" in layer.name
                and "mixer" in layer.name]
    assert rep.ok


def test_exaone4_windows_from_the_pattern_and_its_refusals(make_checkpoint):
    """EXAONE-4's configs write sliding_window_pattern as letters ("LLLG") beside layer_types: read, not refused. An
    integer pattern without layer_types gives layers 0-2 the window and layer 3 full attention ((i + 1) % pattern);
    without layer_types, letters or a null window make Exaone4Config's modulo raise as vLLM reads the config."""
    def attention(**config):  # Llama's names, which exaone4.py's are (transformers' class refuses the last two)
        return inspect(make_checkpoint(architecture="Exaone4ForCausalLM", model_type="exaone4", data="sparse",
                                       layers=4, head_dim=128, extra_config=config))

    rep = attention(**EXAONE4)
    assert rep.ok and [a.sliding_window for a in rep.attention] == [512, 512, 512, None]
    assert [a.sliding_window for a in attention(sliding_window=512, sliding_window_pattern=4).attention] == \
        [512, 512, 512, None]
    for config, error in (({"sliding_window": 512, "sliding_window_pattern": "LLLG"}, "TypeError"),
                          ({"sliding_window": None}, "ZeroDivisionError")):
        checkpoint = attention(**config)
        assert not checkpoint.ok and any(error in e for a in checkpoint.attention for e in a.errors)


def test_exaone_moe_router_mtp_clamp_and_the_unprefixed_head(make_checkpoint):
    """exaone_moe.py: the GateLinear router is BF16, the mapper drops mtp.*, the layer whose swiglu_limits entry is
    set hands FusedMoE a clamp (B200's TRT-LLM FP8 experts refuse it), and the ParallelLMHead has no prefix, so a
    ModelOpt config quantizes it though its exclude list names lm_head."""
    rep = inspect(make_checkpoint(architecture="ExaoneMoEForCausalLM", model_type="exaone_moe", data="sparse",
                                  extra_config=EXAONE_MOE, extra_tensors=EXAONE_MTP, **HF), platform="b200")
    router = next(layer for layer in rep.layers if layer.name == "model.layers.1.mlp.gate")
    assert router.scheme == "UnquantizedLinearMethod" and rep.ok
    assert [s.prefix for s in rep.skipped] == ["mtp."]
    assert any("routing method DeepSeekV3" in note for moe in rep.moes for note in moe.notes)
    modelopt = inspect(make_checkpoint(architecture="ExaoneMoEForCausalLM", model_type="exaone_moe", data="sparse",
                                       extra_config=EXAONE_MOE, **dict(HF, quant="modelopt-fp8")), platform="b200")
    experts = {moe.name: moe.kernel for moe in modelopt.moes}
    assert experts["model.layers.2.mlp.experts"] != experts["model.layers.1.mlp.experts"]
    head = next(layer for layer in modelopt.layers if layer.name == "lm_head")
    assert head.scheme == "ModelOptLinearMethod" and not head.ok
    assert "no ignore / exclude entry can name it" in head.errors[0]  # the advice that could not work is not given


def test_exaone3_names_layer_count_and_the_model_prefix(make_checkpoint):
    """exaone.py: num_layers is the layer count, the attention is transformer.h.N.attn.attention.attn, and the layers
    are built under the prefix model.h.N: an ignore list naming transformer.h.0's q / k / v keeps nothing BF16."""
    ignore = ("lm_head", *(f"transformer.h.0.attn.attention.{leaf}_proj" for leaf in "qkv"))
    folder = make_checkpoint(architecture="ExaoneForCausalLM", model_type="exaone", data="sparse",
                             **dict(HF, ignore=ignore))
    with open(f"{folder}/config.json") as fh:
        config = json.load(fh)
    config["num_layers"] = config.pop("num_hidden_layers")
    with open(f"{folder}/config.json", "w") as fh:
        json.dump(config, fh)
    rep = inspect(folder)
    assert [a.name for a in rep.attention] == [f"transformer.h.{i}.attn.attention.attn" for i in range(2)]
    qkv = next(layer for layer in rep.layers if layer.name == "transformer.h.0.attn.attention.qkv_proj")
    assert qkv.scheme.startswith("CompressedTensors") and not qkv.ok


def test_exaone45_tower_kv_heads_and_the_skipped_mtp_block(make_checkpoint):
    """exaone4_5.py: the tower's stored attn.qkv is a QKVParallelLinear over vision_config's num_heads and its fewer
    num_key_value_heads (q 4 x 128 rows, k and v 2 x 128 each), and the mapper drops the MTP block (mtp.*)."""
    spec = next(f[1] for f in FAMILIES if f[0] == "exaone-4.5")
    folder = make_checkpoint(**{"data": "sparse", **spec})
    ckpt = open_local(folder)
    qkv = next(m for m in build_layout(ckpt.tensors, ckpt.config).linears if m.name == "model.visual.blocks.0.attn.qkv")
    assert qkv.heads == (4, 2, 128) and qkv.output_sizes == (512, 256, 256)
    rep = inspect(folder)
    assert rep.ok and [s.prefix for s in rep.skipped] == ["mtp."]


def test_intern_s1_tower_and_projector_have_no_quant_method(make_checkpoint):
    """interns1_vit.py's InternS1VisionModel never hands its quant config to the encoder (q / k / v / projection_layer
    torch nn.Linears, mlp fc1 / fc2 with quant_config=None), and the projector is two nn.Linears: FP8 there is an
    error, whatever the ignore list says."""
    rep = inspect(make_checkpoint(**dict(INTERN_S1, ignore=("lm_head",))), tp=2)
    tower = {layer.name: layer for layer in rep.layers if ".vision_tower." in layer.name or "projector" in layer.name}
    assert len(tower) == 8 and all(layer.errors for layer in tower.values())
    assert tower["model.vision_tower.encoder.layer.0.mlp.fc2"].layer_type == "RowParallelLinear"
    assert not rep.ok


def test_ernie_vl_experts_split_into_text_and_vision_fused_moes(make_checkpoint):
    """ernie45_vl_moe.py load_weights: the stored mlp.experts.N go to text_experts (N below moe_num_experts[0]) and
    vision_experts (the rest, from 0), each a FusedMoE of its own width."""
    rep = inspect(make_checkpoint(**ERNIE_VL), tp=2)
    moes = {moe.name: moe for moe in rep.moes}
    assert set(moes) == {"model.layers.1.mlp.text_experts", "model.layers.1.mlp.vision_experts"}
    assert [moes[n].num_experts for n in sorted(moes)] == [4, 4] and rep.ok


def test_ernie_vl_routers_keep_the_quant_config_under_vllms_names(make_checkpoint):
    """The routers are ReplicatedLinears WITH the quant config, named text_experts_gate / vision_experts_gate: an ignore
    list naming the stored mlp.gate leaves them FP8 layers over BF16 weights (vLLM computes garbage), and the loader
    transposes the stored [hidden, experts] weight."""
    rep = inspect(make_checkpoint(**dict(ERNIE_VL, ignore_routers=True,
                                         ignore=("lm_head", "vision_model.patch_embed.proj",
                                                 r"re:^model\.resampler_model\."))), tp=2)
    routers = {layer.name: layer for layer in rep.layers if layer.name.endswith("experts_gate")}
    assert set(routers) == {"model.layers.1.mlp.text_experts_gate", "model.layers.1.mlp.vision_experts_gate"}
    assert all(layer.errors and "is BF16" in layer.errors[0] for layer in routers.values())
    assert routers["model.layers.1.mlp.text_experts_gate"].shape == (4, 256)


def test_cpu_moe_block_check_comes_before_the_missing_backend(make_checkpoint):
    """On CPU / XPU select_fp8_moe_backend returns Fp8MoeBackend.NONE without raising (the method asserts after
    loading), so create_weights' validate_fp8_block_shape_moe refuses a shard of no whole block first: ERNIE-4.5-VL's
    256-wide vision experts at TP 4 (64 rows a rank), beside text experts that split into blocks."""
    rep = inspect(make_checkpoint(**dict(ERNIE_VL, data="sparse")), platform="cpu", tp=4)
    errors = {moe.name.rsplit(".", 1)[-1]: moe.errors[0] for moe in rep.moes if moe.name.startswith("model.layers.1.")}
    assert errors["vision_experts"].startswith("The output_size of gate's and up's weight = 64 is not divisible")
    assert "Fp8MoeBackend.NONE" in errors["text_experts"]


@pytest.mark.parametrize("vllm,router", [("0.30", "nn.Linear"), ("0.34", "ReplicatedLinear")])
def test_glm47_flash_is_deepseek_mla_over_glm45_moe_and_its_mtp_layer_is_skipped(make_checkpoint, vllm, router):
    """glm4_moe_lite.py: DeepseekV2MLAAttention (q_a_proj + kv_a_proj_with_mqa fused) and glm4_moe.py's Glm4MoE,
    whose router follows that file (nn.Linear until 0.30, GateLinear from 0.31); MTP layers skipped."""
    folder = make_checkpoint(quant="ct-fp8-block", data="sparse", **GLM47_FLASH_SPEC)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm)))
    by_name = {layer.name: layer for layer in rep.layers}
    assert by_name["model.layers.0.self_attn.fused_qkv_a_proj"].layer_type == "DeepSeekV2FusedQkvAProjLinear"
    assert (by_name["model.layers.1.mlp.gate"].layer_type, by_name["model.layers.1.mlp.gate"].scheme) == (
        router, "UnquantizedLinearMethod")
    assert [s.prefix for s in rep.skipped] == ["model.layers.2."]
    assert "num_nextn_predict_layers" in rep.skipped[0].reason
    assert rep.ok, [e for layer in rep.layers for e in layer.errors] + list(rep.errors)


def test_qwen3_omni_builds_the_thinker_only_with_a_bf16_audio_tower(make_checkpoint):
    """qwen3_omni_moe_thinker.py: the mapper drops talker. and code2wav.; the audio tower is built with
    quant_config=None (an FP8 one would load unscaled), its attention split by encoder_attention_heads."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **QWEN3_OMNI_SPEC), tp=2)
    assert rep.ok, [e for layer in rep.layers for e in layer.errors] + list(rep.errors)
    assert sorted(s.prefix for s in rep.skipped) == ["code2wav.", "talker."]
    assert not [layer.name for layer in rep.layers if layer.name.startswith(("talker.", "code2wav."))]
    audio = [layer for layer in rep.layers if layer.name.startswith("thinker.audio_tower.")]
    assert len(audio) == 7 and all(layer.scheme == "UnquantizedLinearMethod" for layer in audio)
    checkpoint = open_local(make_checkpoint(data="sparse", **QWEN3_OMNI_SPEC))
    linears = {m.name: m for m in build_layout(checkpoint.tensors, checkpoint.config).linears}
    audio_qkv = linears["thinker.audio_tower.layers.0.self_attn.qkv_proj"]
    assert audio_qkv.heads == (4, 4, 64)
    assert (audio_qkv.tp_size(2), audio_qkv.tp_size(8)) == (2, 1)  # disable_tp where TP does not divide the heads
    assert linears["thinker.model.layers.0.self_attn.qkv_proj"].vllm_names[0] == (
        "language_model.model.layers.0.self_attn.qkv_proj")
    fp8_audio = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(
        QWEN3_OMNI_SPEC, ignore=("thinker.lm_head", "re:talker.*", "re:code2wav.*"))), tp=2)
    assert {layer.name for layer in fp8_audio.layers if not layer.ok} == {layer.name for layer in audio}


def test_qwen25_omni_builds_the_thinker_and_matches_the_vision_qkv_by_its_own_name(make_checkpoint):
    """qwen2_5_omni_thinker.py: the mapper drops talker. and token2wav.; the audio tower is transformers' own (torch
    nn.Linears, no quant method); the tower's attn.q / k / v stack into attn.qkv, whose packed entry is the dotted
    "attn.qkv": an ignore list naming the shards leaves the fused layer FP8 in vLLM, over BF16 weights."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **QWEN25_OMNI_SPEC), tp=2)
    assert rep.ok, [e for layer in rep.layers for e in layer.errors] + list(rep.errors)
    assert sorted(s.prefix for s in rep.skipped) == ["talker.", "token2wav."]
    audio = [layer for layer in rep.layers if layer.name.startswith("thinker.audio_tower.")]
    assert len(audio) == 7 and all(layer.layer_type == "nn.Linear" for layer in audio)
    assert "thinker.audio_tower.audio_bos_eos_token" not in {layer.name for layer in rep.layers}
    listed = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(
        QWEN25_OMNI_SPEC, ignore=(*QWEN25_OMNI_SPEC["ignore"], "thinker.visual.blocks.0.attn.q",
                                  "thinker.visual.blocks.0.attn.k", "thinker.visual.blocks.0.attn.v"))), tp=2)
    assert [layer.name for layer in listed.layers if not layer.ok] == ["thinker.visual.blocks.0.attn.qkv"]
    gate_up = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(
        QWEN25_OMNI_SPEC, ignore=(*QWEN25_OMNI_SPEC["ignore"], "thinker.visual.blocks.0.mlp.gate_proj",
                                  "thinker.visual.blocks.0.mlp.up_proj"))), tp=2)
    assert gate_up.ok  # gate_up_proj, an undotted entry, is matched by its shards


def test_qwen2_audio_encoder_is_transformers_own_and_never_quantized(make_checkpoint):
    """qwen2_audio.py builds transformers' Qwen2AudioEncoder and an nn.Linear projector: no quant method, so an FP8
    audio tower is an error; embed_positions is an embedding, no linear."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **QWEN2_AUDIO_SPEC), tp=2)
    assert rep.ok, [e for layer in rep.layers for e in layer.errors] + list(rep.errors)
    assert "audio_tower.embed_positions" not in {layer.name for layer in rep.layers}
    fp8 = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(
        QWEN2_AUDIO_SPEC, ignore=("language_model.lm_head",))), tp=2)
    assert {layer.name for layer in fp8.layers if not layer.ok} == {
        layer.name for layer in fp8.layers if layer.name.startswith(("audio_tower.", "multi_modal_projector."))}


def test_kimi_vl_tower_is_unquantized_and_lists_match_fused_layers_by_their_own_names(make_checkpoint):
    """kimi_vl.py builds MoonViT and its projector without a quant config (an FP8 one is an error), and no packed
    mapping reaches the quant config: an ignore list naming gate_proj / up_proj leaves gate_up_proj quantized in vLLM,
    over BF16 weights."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(
        KIMI_VL_SPEC, ignore=("language_model.lm_head",))), tp=2)
    assert {layer.name for layer in rep.layers if not layer.ok} == {
        layer.name for layer in rep.layers if layer.name.startswith(("vision_tower.", "multi_modal_projector."))}
    shared = "language_model.model.layers.1.mlp.shared_experts"
    listed = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(
        KIMI_VL_SPEC, ignore=(*KIMI_VL_SPEC["ignore"], f"{shared}.gate_proj", f"{shared}.up_proj"))), tp=2)
    assert [layer.name for layer in listed.layers if not layer.ok] == [f"{shared}.gate_up_proj"]


def test_qwen3_omni_head_has_no_prefix_so_modelopt_quantizes_it_whatever_it_excludes(make_checkpoint):
    """qwen3_omni_moe_thinker.py's Qwen3MoeLLMForCausalLM builds its ParallelLMHead without a prefix: ModelOpt's
    exclude_modules (here naming thinker.lm_head) never match "", so its BF16 head is built as an FP8 layer."""
    rep = inspect(make_checkpoint(quant="modelopt-fp8", data="sparse", **QWEN3_OMNI_SPEC), tp=2)
    head = next(layer for layer in rep.layers if layer.name == "thinker.lm_head")
    assert head.scheme == "ModelOptLinearMethod" and not head.ok
    assert "no ignore / exclude entry can name it" in head.errors[0]  # the advice that could not work is not given
    assert all(layer.ok for layer in rep.layers if layer is not head)


def test_cohere_qk_norms_are_no_linears_and_a_stored_lm_head_is_dropped(make_checkpoint):
    """commandr.py: use_qk_norm's q_norm / k_norm are LayerNorms of shape [heads, head_dim], no linears; the logits
    are embed_tokens' and hf_to_vllm_mapper maps the "lm_head" prefix to None, so a stored head is never loaded."""
    rep = inspect(make_checkpoint(data="sparse", **COHERE_SPEC))
    assert not [layer.name for layer in rep.layers if layer.name.endswith(("norm", "lm_head"))]
    assert [s.prefix for s in rep.skipped] == ["lm_head"] and "commandr.py" in rep.skipped[0].reason
    assert rep.ok


def test_cohere2_sliding_layers_take_the_window_plus_one(make_checkpoint):
    """Cohere2Config fills layer_types from sliding_window_pattern (4: three sliding, then a global layer); commandr.py
    CohereAttention hands those layers config.sliding_window + 1."""
    rep = inspect(make_checkpoint(data="sparse", **COHERE2_SPEC))
    assert [a.sliding_window for a in rep.attention] == [513, 513, 513, None] and rep.ok


@pytest.mark.parametrize("keys,method", [({}, "SigmoidRenorm"), ({"norm_topk_prob": False}, "Sigmoid"),
                                         ({"expert_selection_fn": "softmax"}, "RenormalizeNaive")])
def test_cohere2_moe_routing_follows_expert_selection_fn(make_checkpoint, keys, method):
    """cohere2_moe.py Cohere2Moe: expert_selection_fn "sigmoid" hands FusedMoE token_choice_with_bias, whose
    RoutingMethodType is SigmoidRenorm, or Sigmoid without norm_topk_prob (custom_routing_router.py); otherwise
    FusedMoE's softmax, renormalized by norm_topk_prob (default true). The router mlp.gate is a GateLinear without
    quant_config: held unquantized."""
    spec = dict(COHERE2_MOE_SPEC, extra_config={**COHERE2_MOE, **keys})
    rep = inspect(make_checkpoint(data="sparse", **spec))
    assert all(f"routing method {method} " in " ".join(moe.notes) for moe in rep.moes) and len(rep.moes) == 3
    router = next(layer for layer in rep.layers if layer.name == "model.layers.1.mlp.gate")
    assert router.layer_type == "ReplicatedLinear" and router.ok and rep.ok


def test_cohere2_moe_sigmoid_routing_reads_as_softmax_under_the_cpu_router(make_checkpoint):
    """cohere2_moe.py hands FusedMoE token_choice_with_bias but no scoring_func: on CPU (0.30+) CPURouter's
    RoutingMethodType is get_routing_method_type's for softmax, RenormalizeNaive (router/cpu_router.py), which
    CPUExpertsFp8 routes (experts/cpu_moe.py); on CUDA the custom function's SigmoidRenorm."""
    folder = make_checkpoint(data="sparse", **dict(COHERE2_MOE_SPEC, quant="fp8-block"))
    cpu, cuda = inspect(folder, "cpu"), inspect(folder)
    assert all("routing method RenormalizeNaive " in " ".join(moe.notes) for moe in cpu.moes)
    assert all(moe.kernel == "CPUExpertsFp8" for moe in cpu.moes) and len(cpu.moes) == 3 and cpu.ok
    assert all("routing method SigmoidRenorm " in " ".join(moe.notes) for moe in cuda.moes)


def test_cohere2_moe_drops_a_stored_lm_head(make_checkpoint):
    """cohere2_moe.py Cohere2MoeForCausalLM builds no ParallelLMHead and its hf_to_vllm_mapper maps the "lm_head."
    prefix to None: an untied checkpoint's head is never loaded."""
    config = {**COHERE2_MOE, "tie_word_embeddings": False}
    rep = inspect(make_checkpoint(data="sparse", **dict(COHERE2_MOE_SPEC, tie_embeddings=False, extra_config=config)))
    assert [s.prefix for s in rep.skipped] == ["lm_head."] and "cohere2_moe.py" in rep.skipped[0].reason
    assert not [layer.name for layer in rep.layers if "lm_head" in layer.name] and rep.ok


@pytest.mark.parametrize("keys,windows", [({}, [513, 513, 513, None]),
                                          ({"first_k_dense_replace": 1, "mlp_layer_types": None},
                                           [None, 513, 513, 513])])
def test_cohere2_moe_sliding_layers_take_the_window_plus_one(make_checkpoint, keys, windows):
    """Cohere2MoeConfig fills layer_types from sliding_window_pattern (4), counting after the first_k_dense_replace
    dense-prefix layers, which take prefix_dense_sliding_window_pattern (1: full attention); cohere2_moe.py
    Cohere2MoeAttention hands the sliding layers config.sliding_window + 1."""
    config = {key: value for key, value in {**COHERE2_MOE, **keys}.items() if value is not None}
    folder = make_checkpoint(data="sparse", **dict(COHERE2_MOE_SPEC, extra_config=config))
    raw = json.loads(open(f"{folder}/config.json").read())
    raw.pop("layer_types", None)
    open(f"{folder}/config.json", "w").write(json.dumps(raw))
    rep = inspect(folder)
    assert [a.sliding_window for a in rep.attention] == windows and rep.ok


def test_cohere2_vision_drops_the_pooling_head_and_keeps_the_projector_unquantized(make_checkpoint):
    """cohere2_vision.py: SiglipVisionModel is built with use_head False, its mapper dropping vision_model.head.*
    (which transformers saves); Cohere2VisionMultiModalProjector's linear_1 / linear_2 take no quant_config; the text
    model is text_config's class (Cohere2ForCausalLM, commandr.py: the window + 1 on its sliding layers)."""
    rep = inspect(make_checkpoint(data="sparse", **COHERE2_VISION))
    assert [s.prefix for s in rep.skipped] == ["vision_tower.vision_model.head."]
    assert not any(".head." in layer.name for layer in rep.layers)
    projector = [layer for layer in rep.layers if "multi_modal_projector" in layer.name]
    assert [(layer.layer_type, layer.scheme) for layer in projector] == [
        ("MergedColumnParallelLinear", "UnquantizedLinearMethod"), ("RowParallelLinear", "UnquantizedLinearMethod")]
    assert [a.sliding_window for a in rep.attention if "language_model" in a.name] == [513, 513, 513, None]
    assert rep.ok


def test_llava_builds_its_tower_up_to_the_deepest_vision_feature_layer(make_checkpoint):
    """llava.py init_vision_tower_for_llava builds the tower up to the deepest vision_feature_layer (LlavaConfig's -2
    where config.json has none: llava-1.5's last CLIP layer) and clip.py's load_weights drops the layers beyond: listed
    as skipped, never laid out; a list of feature layers (Granite-Vision) builds up to its deepest."""
    rep = inspect(make_checkpoint(data="sparse", **llava_spec()))
    assert [s.prefix for s in rep.skipped] == ["vision_tower.vision_model.encoder.layers.1."]
    assert "vision_feature_layer ([-2] of 2)" in rep.skipped[0].reason
    assert not any(layer.name.startswith("vision_tower.vision_model.encoder.layers.1.") for layer in rep.layers)
    assert rep.ok and not rep.notes
    rep = inspect(make_checkpoint(data="sparse", **llava_spec("LlavaNextForConditionalGeneration", "llava_next",
                                                              vision_feature_layer=[-2, 0, -1])))
    assert not rep.skipped and rep.ok
    assert "vision_tower.vision_model.encoder.layers.1.mlp.fc2" in {layer.name for layer in rep.layers}


def test_llava_tower_is_the_class_of_its_vision_config(make_checkpoint):
    """init_vision_tower_for_llava picks CLIPVisionModel, SiglipVisionModel (use_head False: its mapper drops the
    attention-pooling head.* transformers saves) or PixtralHFVisionModel by vision_config's class; vision_config's model
    type decides the layout of everything under vision_tower."""
    siglip = dict(LLAVA_SIGLIP, vision_use_head=True)
    rep = inspect(make_checkpoint(data="sparse", **llava_spec("LlavaOnevisionForConditionalGeneration",
                                                              "llava_onevision", "qwen2", siglip,
                                                              ignore=("re:.*multi_modal_projector.*",))))
    assert [s.prefix for s in rep.skipped] == ["vision_tower.vision_model.head."]
    assert {layer.layout for layer in rep.layers if layer.name.startswith("vision_tower.")} == {"vllm:siglip.py"}
    assert rep.ok
    rep = inspect(make_checkpoint(data="sparse", **llava_spec(vision=LLAVA_PIXTRAL, vision_feature_layer=-1)))
    assert {layer.layout for layer in rep.layers if layer.name.startswith("vision_tower.")} == {"vllm:pixtral.py"}
    assert not rep.skipped and rep.ok


def test_paligemma_builds_gemma_through_the_release_that_serves_it(make_checkpoint):
    """paligemma.py builds GemmaForCausalLM for a gemma text config: gemma.py until 0.33, the Transformers backend
    from 0.34 (Arch.moved), with the SigLIP tower (its pooling head dropped) and the nn.Linear projector either way."""
    spec = dict(PALIGEMMA2, extra_config=dict(PALIGEMMA2["extra_config"],
                                              text_config=dict(_LLAVA_TEXT, model_type="gemma")))
    folder = make_checkpoint(data="sparse", **spec)
    for vllm, text in (("0.33", "vllm:gemma.py"), ("0.34", "vllm:transformers/causal.py")):
        rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm)))
        layouts = {layer.name.split(".")[0]: layer.layout for layer in rep.layers}
        assert layouts == {"language_model": text, "vision_tower": "vllm:siglip.py",
                           "multi_modal_projector": "vllm:paligemma.py"}
        assert [s.prefix for s in rep.skipped] == ["vision_tower.vision_model.head."] and rep.ok


def test_nemotron_nas_blocks_drop_attention_or_ffn_and_keep_their_own_kv_heads_and_widths(make_checkpoint):
    """nemotron_nas.py DeciLMDecoderLayer: no attention (nor KV cache) where attention.no_op, num_attention_heads //
    n_heads_in_group KV heads elsewhere; the MLP's width from ffn_mult (rounded up to 256) or intermediate_size."""
    rep = inspect(make_checkpoint(data="sparse", **NEMOTRON_NAS_SPEC))
    assert [(a.name, a.num_kv_heads) for a in rep.attention] == [
        ("model.layers.0.self_attn.attn", 2), ("model.layers.2.self_attn.attn", 1),
        ("model.layers.3.self_attn.attn", 4)]
    widths = {layer.name: layer.shape[0] for layer in rep.layers if layer.name.endswith("down_proj")}
    assert widths == {"model.layers.0.mlp.down_proj": 256, "model.layers.1.mlp.down_proj": 256,
                      "model.layers.3.mlp.down_proj": 256}
    gate_up = {layer.name: layer.shape for layer in rep.layers if layer.name.endswith("gate_up_proj")}
    assert gate_up == {"model.layers.0.mlp.gate_up_proj": (1024, 256), "model.layers.1.mlp.gate_up_proj": (512, 256),
                       "model.layers.3.mlp.gate_up_proj": (1536, 256)}
    assert rep.ok


def test_phimoe_routes_its_sparsemixer_as_a_custom_function_and_keeps_its_head_unquantized(make_checkpoint):
    """phimoe.py: FusedMoE with phimoe_routing_function (CustomRoutingRouter: routing method Custom, not the softmax
    renormalization the generic rules read), the w1 / w3 / w2 experts, a ParallelLMHead built with quant_config=None
    (ModelOpt, which quantizes heads, leaves it BF16)."""
    rep = inspect(make_checkpoint(quant="modelopt-fp8", data="sparse", moe_intermediate=256, ignore=(), **PHIMOE_SPEC),
                  platform="b200")
    assert {m.notes for m in rep.moes} == {("routing method Custom (phimoe.py's custom_routing_function)",)}
    assert all(m.shards == ("w1", "w3", "w2") for m in rep.moes)
    head = next(layer for layer in rep.layers if layer.name == "lm_head")
    assert head.scheme == "UnquantizedEmbeddingMethod" and "quant_config=None" in " ".join(head.notes)


def test_deepseek_v1_attention_is_built_without_a_prefix_so_no_ignore_entry_reaches_it(make_checkpoint):
    """deepseek_v2.py DeepseekAttention (use_mha: model_type deepseek) builds qkv_proj and o_proj without a prefix:
    an ignore list naming layer 0's attention leaves them FP8 layers over the BF16 weights (vLLM's build, measured by
    the whole-model suite's deepseek-moe-attn-bf16); the MLP the same list names stays BF16."""
    attention = tuple(f"model.layers.0.self_attn.{leaf}" for leaf in ("q_proj", "k_proj", "v_proj", "o_proj"))
    rep = inspect(make_checkpoint(quant="fp8-block", data="sparse", moe_intermediate=256,
                                  ignore=("lm_head", *attention, "model.layers.0.mlp.down_proj"), **DEEPSEEK_MOE_SPEC))
    failing = {layer.name for layer in rep.layers if layer.errors}
    assert failing == {"model.layers.0.self_attn.qkv_proj", "model.layers.0.self_attn.o_proj"}
    down = next(layer for layer in rep.layers if layer.name == "model.layers.0.mlp.down_proj")
    assert down.scheme == "UnquantizedLinearMethod"


def test_chatglm_reads_its_config_keys_and_splits_the_fused_mlp_in_two(make_checkpoint):
    """vLLM's ChatGLMConfig: num_layers, padded_vocab_size, multi_query_group_num KV heads (chatglm.py GLMAttention);
    dense_h_to_4h a MergedColumnParallelLinear over [ffn_hidden_size] x 2; the Attention self_attention.attn."""
    ckpt = open_local(make_checkpoint(data="sparse", **CHATGLM_SPEC))
    assert (ckpt.config.num_hidden_layers, ckpt.config.num_key_value_heads, ckpt.config.vocab_size) == (2, 2, 1000)
    fused = {m.name.rsplit(".", 1)[-1]: m for m in build_layout(ckpt.tensors, ckpt.config, LATEST).linears
             if ".layers.0." in m.name}
    assert fused["dense_h_to_4h"].output_sizes == (512, 512)
    assert fused["query_key_value"].heads == (4, 2, 128)
    rep = inspect_checkpoint(ckpt, InspectOptions(parse_platform("h100"), LATEST))
    assert [(a.name, a.num_kv_heads) for a in rep.attention] == [
        (f"transformer.encoder.layers.{i}.self_attention.attn", 2) for i in range(2)]


@pytest.mark.parametrize("vllm, head_quant_config", [("0.33", False), ("0.34", True)])
def test_plamo3_windows_no_kv_cache_method_and_the_heads_quant_config(make_checkpoint, vllm, head_quant_config):
    """plamo3.py: per_layer_sliding_window from the remote Plamo3Config's window_size, every
    sliding_window_pattern-th layer full; Attention built without quant_config (no KV cache method under an Fp8Config
    that would give one); the ParallelLMHead takes the quant config from 0.34 only (FP8 methods leave it
    unquantized either way)."""
    profile = select_profile(vllm)
    rep = inspect_checkpoint(open_local(make_checkpoint(quant="fp8-block", **PLAMO3_SPEC)),
                             InspectOptions(parse_platform("h100"), profile))
    assert [(a.name, a.sliding_window, a.kv_method) for a in rep.attention] == [
        ("model.layers.layers.0.mixer.attn", 64, None), ("model.layers.layers.1.mixer.attn", None, None),
        ("model.layers.layers.2.mixer.attn", 64, None)]
    assert ARCHITECTURES["Plamo3ForCausalLM"].for_release(profile).head_quant_config is head_quant_config
    assert rep.ok


@pytest.mark.parametrize("keys, window", [({"window_size": 64}, 64), ({}, 128),
                                          ({"window_size": 128, "sliding_window": 32}, 32),
                                          ({"window_size": 128, "sliding_window": [32, None, 32]}, 32)])
def test_plamo3_window_is_window_size_unless_a_legacy_sliding_window_overrides_it(make_checkpoint, keys, window):
    """The remote Plamo3Config (configuration_plamo3.py): window_size (128 by default), which a legacy
    sliding_window overrides (an integer, or a list whose windows are one); every second layer full here."""
    rep = inspect(make_checkpoint(**dict(PLAMO3_SPEC, extra_config={"sliding_window_pattern": 2, **keys})))
    assert [a.sliding_window for a in rep.attention] == [window, None, window]


def test_granite_h_one_mamba_group_is_replicated_above_tp_1(make_checkpoint):
    """mamba_mixer2.py MambaMixer2: with one group and TP 2 in_proj is a ColumnParallelLinear over
    [I, I, N x 2, N x 2, H] (the group on every rank), one output partition per rank that the 128-block check sees
    whole: (2 x 1024 + 4 x 128 + 8) / 2 = 1284. At TP 1 it is merged over [I, I, N, N, H]; experts load per expert
    into one FusedMoE per layer."""
    spec = dict(GRANITE, architecture="GraniteMoeHybridForCausalLM", model_type="granitemoehybrid",
                extra_config=GRANITE_H, data="sparse")
    folder = make_checkpoint(quant="fp8-block", **spec)
    rep = inspect(folder)
    in_proj = next(layer for layer in rep.layers if layer.name == "model.layers.0.mamba.in_proj")
    assert rep.ok and in_proj.shape == (2 * 1024 + 2 * 128 + 8, 512)
    assert [moe.name for moe in rep.moes] == [f"model.layers.{i}.block_sparse_moe.experts" for i in (0, 1)]
    rep = inspect(folder, tp=2)
    in_proj = next(layer for layer in rep.layers if layer.name == "model.layers.0.mamba.in_proj")
    assert in_proj.layer_type == "ColumnParallelLinear"
    assert any("output_partition_size = 1284 is not divisible" in e for e in in_proj.errors)


def test_granite_h_quant_lists_see_the_mamba_mixer_as_mixer(make_checkpoint):
    """granitemoehybrid.py builds `mamba` with prefix `.mixer`: a list entry naming the checkpoint's `mamba.in_proj`
    never reaches vLLM's layer, which is then quantized over a BF16 weight."""
    spec = dict(GRANITE, architecture="GraniteMoeHybridForCausalLM", model_type="granitemoehybrid",
                extra_config=GRANITE_H, data="sparse")
    rep = inspect(make_checkpoint(quant="ct-fp8-dynamic", **dict(spec, ignore=("lm_head", "re:.*mamba.in_proj"))))
    in_proj = next(layer for layer in rep.layers if layer.name == "model.layers.0.mamba.in_proj")
    assert not rep.ok and in_proj.scheme != "UnquantizedLinearMethod"


def test_granite_h_fused_stacked_experts_read_as_the_per_expert_ones(make_checkpoint):
    """llm-compressor <= 0.11 saved Granite-4.0-H's quantized experts back as block_sparse_moe.input_linear [E, 2I, H] /
    output_linear [E, H, I] with [E, rows, 1] channel scales; granitemoehybrid.py's load_weights chunks each expert's
    input_linear into w1 / w3: the same FusedMoE as the per-expert checkpoint."""
    spec = dict(GRANITE, architecture="GraniteMoeHybridForCausalLM", model_type="granitemoehybrid",
                extra_config=GRANITE_H, data="sparse", quant="ct-fp8-dynamic")
    per_expert = make_checkpoint(**spec)
    stacked = make_checkpoint(**spec)
    entries: dict[str, tuple[str, tuple[int, ...]]] = {}
    fused = {"gate_proj": "input_linear", "up_proj": "input_linear", "down_proj": "output_linear"}
    for name, (dtype, shape) in tensor_specs(Spec(**spec)).items():
        head, experts, tail = name.partition(".block_sparse_moe.experts.")
        expert, _, rest = tail.partition(".")
        leaf, _, suffix = rest.partition(".")
        if not experts:
            entries[name] = (dtype, shape)
        elif expert == "0" and leaf != "up_proj":
            rows = shape[0] * (2 if leaf == "gate_proj" else 1)
            entries[f"{head}.block_sparse_moe.{fused[leaf]}.{suffix}"] = (dtype, (4, rows, *shape[1:]))
    write_safetensors(f"{stacked}/model.safetensors", entries, None)
    assert entries["model.layers.1.block_sparse_moe.input_linear.weight_scale"][1] == (4, 512, 1)
    ours, theirs = inspect(stacked, tp=2), inspect(per_expert, tp=2)
    assert ours.ok, list(ours.errors)
    assert [(m.name, m.num_experts, m.scheme, m.kernel, m.shape) for m in ours.moes] == [
        (m.name, m.num_experts, m.scheme, m.kernel, m.shape) for m in theirs.moes] and len(ours.moes) == 2


def test_beam_fuses_the_output_gate_into_qkv_and_names_it_as_vllm(make_checkpoint):
    """models/beam: q / k / v and the attention's output gate (stored self_attn.gate_proj, which the mapper renames
    output_gate_proj) are one qkv_gate_proj feeding the Attention of the layer's heads; an ignore list naming the gate
    alone splits the fusion's quantization, which vLLM refuses; the GateLinear router is BF16 and routing is grouped
    sigmoid with the correction bias (DeepSeekV3)."""
    folder = make_checkpoint(**{"quant": "ct-fp8-block", "data": "sparse", **BEAM_SPEC})
    ckpt = open_local(folder)
    qkv_gate = next(m for m in build_layout(ckpt.tensors, ckpt.config).linears
                    if m.name == "model.layers.0.self_attn.qkv_gate_proj")
    assert qkv_gate.output_sizes == (512, 256, 256, 512) and qkv_gate.heads == (4, 2, 128)
    assert qkv_gate.vllm_names[1][3] == "model.layers.0.self_attn.output_gate_proj"
    rep = inspect(folder)
    assert rep.ok and [(a.name, a.sliding_window) for a in rep.attention] == [
        (f"model.layers.{i}.self_attn.attn", 512 if i < 3 else None) for i in range(4)]
    assert next(layer for layer in rep.layers if layer.name == "model.layers.1.mlp.gate").scheme == \
        "UnquantizedLinearMethod"
    assert any("routing method DeepSeekV3" in note for moe in rep.moes for note in moe.notes)
    gate_ignored = dict(BEAM_SPEC, ignore=("lm_head", "model.layers.0.self_attn.gate_proj"))
    gate_kept = inspect(make_checkpoint(**{"quant": "ct-fp8-block", "data": "sparse", **gate_ignored}))
    assert not gate_kept.ok


def test_flint_builds_only_on_flashinfer_with_a_bf16_cache(make_checkpoint):
    """models/flint: FlintAttention imports the FlashInfer backend (no module on a CPU / ROCm install) and asserts
    its Attention's impl is FlashInfer's (H100 picks FLASH_ATTN for the sink layers) and a BF16 KV cache; the
    GateLinear router is BF16, routing sigmoid renormalized without a bias, windows from layer_types."""
    folder = make_checkpoint(**{"quant": "ct-fp8-block", "data": "sparse", **FLINT_SPEC})
    rep = inspect(folder, platform="b200")
    assert rep.ok and [(a.backend, a.sliding_window) for a in rep.attention] == [
        ("FLASHINFER", None), ("FLASHINFER", 513), ("FLASHINFER", 513), ("FLASHINFER", None)]
    assert next(layer for layer in rep.layers if layer.name == "model.layers.1.mlp.gate").scheme == \
        "UnquantizedLinearMethod"
    assert any("routing method SigmoidRenorm" in note for moe in rep.moes for note in moe.notes)
    assert any("Flint requires FlashInfer attention" in e for a in inspect(folder).attention for e in a.errors)
    # sinks on every layer though the checkpoint holds none: SM120's FA2 has none (FLASHINFER's XQA serves them),
    # A100's FlashInfer neither (TRITON_ATTN)
    assert {(a.backend, a.errors) for a in inspect(folder, platform="cuda:120").attention} == {("FLASHINFER", ())}
    assert {a.backend for a in inspect(folder, platform="a100").attention} == {"TRITON_ATTN"}
    assert any("No module named 'flashinfer'" in e for a in inspect(folder, platform="cpu").attention
               for e in a.errors)
    fp8_cache = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("b200"), LATEST,
                                                                      kv_cache_dtype="fp8"))
    assert not fp8_cache.ok and any("KV cache dtype" in e for a in fp8_cache.attention for e in a.errors)


def test_afmoe_attention_gate_is_its_own_column_and_the_router_loads_as_gate(make_checkpoint):
    """afmoe.py: self_attn.gate_proj is a quantized ColumnParallelLinear of its own (the packed gate_up_proj needs an
    up_proj beside it); the stored mlp.router.gate is vLLM's mlp.gate, a GateLinear without quant_config; sigmoid
    grouped routing with the expert bias (score_func, route_norm, n_group as config.json gives them)."""
    rep = inspect(make_checkpoint(architecture="AfmoeForCausalLM", model_type="afmoe", extra_config=AFMOE,
                                  data="sparse", **HF))
    by_name = {layer.name: layer for layer in rep.layers}
    gate = by_name["model.layers.0.self_attn.gate_proj"]
    assert (gate.layer_type, gate.scheme != "UnquantizedLinearMethod") == ("ColumnParallelLinear", True)
    assert by_name["model.layers.1.mlp.router.gate"].scheme == "UnquantizedLinearMethod" and rep.ok
    assert "routing method DeepSeekV3" in " ".join(rep.moes[0].notes + (rep.moes[0].kernel or "",))
    softmax = inspect(make_checkpoint(architecture="AfmoeForCausalLM", model_type="afmoe", data="sparse",
                                      extra_config=dict(AFMOE, score_func="softmax"), **HF))
    assert "routing method Unspecified" in " ".join(softmax.moes[0].notes + (softmax.moes[0].kernel or "",))


def test_lfm2_short_conv_layers_and_an_attention_without_kv_method(make_checkpoint):
    """lfm2.py / short_conv.py: the stored conv.conv [dim, 1, L] is a ColumnParallelLinear without quant_config,
    conv.in_proj one MergedColumnParallelLinear over [dim] * 3; Lfm2Attention's Attention takes no quant config, so an
    FP8 checkpoint gives it no KV cache method."""
    spec = dict(LFM2, architecture="Lfm2ForCausalLM", model_type="lfm2",
                extra_config=dict(LFM2_LAYERS, intermediate_size=768), quant="fp8-block", data="sparse")
    folder = make_checkpoint(**spec)
    rep = inspect(folder, tp=2)
    by_name = {layer.name: layer for layer in rep.layers}
    assert by_name["model.layers.0.conv.conv"].scheme == "UnquantizedLinearMethod" and rep.ok
    assert [(a.name, a.kv_method) for a in rep.attention] == [("model.layers.1.self_attn.attn", None)]
    layout = build_layout(open_local(folder).tensors, open_local(folder).config, LATEST)
    in_proj = next(m for m in layout.linears if m.name == "model.layers.0.conv.in_proj")
    assert in_proj.output_sizes == (512, 512, 512) and in_proj.vllm_names[0] == "model.layers.0.short_conv.in_proj"


def test_lfm2_moe_router_takes_the_quant_config(make_checkpoint):
    """lfm2_moe.py builds feed_forward.gate (GateLinear) WITH the quant config: a BF16 router left out of the ignore
    list is an FP8 layer over a BF16 weight; sigmoid routing over one group with the expert bias, none without
    use_expert_bias."""
    spec = dict(LFM2, architecture="Lfm2MoeForCausalLM", model_type="lfm2_moe", data="sparse", ignore=("lm_head",),
                quant="ct-fp8-dynamic")
    rep = inspect(make_checkpoint(**spec, extra_config=LFM2_MOE, ignore_routers=False))
    router = next(layer for layer in rep.layers if layer.name == "model.layers.1.feed_forward.gate")
    assert router.scheme == "CompressedTensorsW8A8Fp8" and not rep.ok
    assert "BF16, but the quantization config makes it an FP8 layer" in router.errors[0]
    assert "routing method DeepSeekV3" in " ".join(rep.moes[0].notes + (rep.moes[0].kernel or "",))
    rep = inspect(make_checkpoint(**spec, extra_config=dict(LFM2_MOE, use_expert_bias=False)))
    assert "routing method SigmoidRenorm" in " ".join(rep.moes[0].notes + (rep.moes[0].kernel or "",))


def test_lfm3_attention_gate_is_a_quantized_column_of_one_row_per_head(make_checkpoint):
    """lfm3.py: self_attn.gate_proj (use_attention_gate) is a ColumnParallelLinear of num_attention_heads rows with
    the quant config; LFM3's Attention takes the quant config (a KV cache method), unlike LFM2's."""
    rep = inspect(make_checkpoint(**dict(LFM2, architecture="Lfm3ForCausalLM", model_type="lfm3", extra_config=LFM3,
                                         quant="fp8-dynamic", data="sparse")))
    gate = next(layer for layer in rep.layers if layer.name == "model.layers.1.self_attn.gate_proj")
    assert (gate.layer_type, gate.shape, gate.scheme != "UnquantizedLinearMethod") == (
        "ColumnParallelLinear", (4, 512), True)
    assert [a.kv_method is not None for a in rep.attention] == [True] and rep.ok


def test_inkling_attention_router_and_sink_experts(make_checkpoint):
    """models/inkling: InklingAttention is an AttentionLayerBase of its own (FlashAttentionBackend, no quant method:
    no KV cache method); InklingGate's weight and the shared sink experts are bare parameters, no linears; qkvr is
    [q, k, v, r] under vLLM's name model.layers.N.attn.qkvr (the mapper's model.llm. prefix)."""
    folder = make_checkpoint(quant="ct-fp8-block", data="sparse", **inkling_spec())
    rep = inspect(folder, tp=2)
    assert rep.ok and [(a.name, a.backend, a.kv_method) for a in rep.attention] == [
        (f"model.llm.layers.{i}.attn", "FLASH_ATTN", None) for i in range(3)]
    assert [(a.num_heads, a.num_kv_heads) for a in rep.attention] == [(8, 2), (8, 2), (8, 1)]
    names = {layer.name for layer in rep.layers}
    assert not any(".mlp.gate" in name or "shared_experts" in name for name in names)
    qkvr = next(layer for layer in rep.layers if layer.name == "model.llm.layers.2.attn.qkvr")
    assert qkvr.shards == tuple(f"model.llm.layers.2.attn.{leaf}" for leaf in ("wq_du", "wk_dv", "wv_dv", "wr_du"))
    assert qkvr.shape == (2048 + 256 + 256 + 256, 512)
    assert [m.name for m in rep.moes] == ["model.llm.layers.1.mlp.experts", "model.llm.layers.2.mlp.experts"]


def test_muse_glimmer_output_gate_and_unquantized_tower(make_checkpoint):
    """muse_glimmer.py: the attention's output gate self_attn.gate_proj (no up_proj beside it: not Llama's gate_up)
    is a quantized ColumnParallelLinear vLLM names output_gate_proj (its mapper); the vision tower's qkv_proj / o_proj
    are built without the quant config, so an FP8 tower weight is refused while the BF16 one is plain."""
    folder = make_checkpoint(quant="ct-fp8-block", data="sparse", **muse_glimmer_spec())
    rep = inspect(folder, tp=2)
    by_name = {layer.name: layer for layer in rep.layers}
    gate = by_name["model.language_model.layers.0.self_attn.gate_proj"]
    assert rep.ok and gate.weight_dtype == "F8_E4M3" and gate.scheme != "UnquantizedLinearMethod"
    assert by_name["model.vision_tower.layers.0.attn.qkv_proj"].scheme == "UnquantizedLinearMethod"
    assert [a.name for a in rep.attention] == [f"model.language_model.layers.{i}.self_attn.attn" for i in range(2)]
    assert [a.sliding_window for a in rep.attention] == [512, None]
    fp8_tower = make_checkpoint(quant="ct-fp8-block", data="sparse", **{**muse_glimmer_spec(), "ignore": ("lm_head",)})
    failing = {layer.name for layer in inspect(fp8_tower, tp=2).layers if layer.errors}
    assert "model.vision_tower.layers.0.attn.qkv_proj" in failing


def test_muse_spark_on_rocm_fuses_the_output_gate_and_names_its_own_unquantized_methods(make_checkpoint):
    """models/muse_spark/amd/model.py: q / k / v and the output gate are one ColumnParallelLinear qkv_proj (its
    heads the attention's), the pooling linears get MuseSparkTorchLinearMethod, BF16 experts MuseSparkUnquantizedFusedMoE
    on Triton experts; the towers are built without the quant config. Laid out from the table, not guessed."""
    rep = inspect(make_checkpoint(data="sparse", **muse_spark_spec()), platform="mi300x", tp=2)
    layers = {layer.name: layer for layer in rep.layers}
    qkv = layers["model.language_model.layers.0.self_attn.qkv_proj"]
    assert rep.ok and qkv.shards[-1].endswith("self_attn.gate_proj") and qkv.scheme == "QuarkW8A8Fp8"
    assert qkv.shape == (2 * (4 + 2) * 128, 512) and "generic" not in {layer.layout for layer in rep.layers}
    assert layers["model.language_model.layers.1.mlp.post_expert_proj"].scheme == "MuseSparkTorchLinearMethod"
    assert not inspect_verdict(rep).endswith("see the notes)")  # the own unquantized methods are judged
    assert [(m.scheme, m.kernel, m.backend, m.num_experts) for m in rep.moes] == [
        ("MuseSparkUnquantizedFusedMoE", "MuseSparkTritonExperts", "TRITON", 4)]
    assert [(a.num_heads, a.num_kv_heads, a.sliding_window) for a in rep.attention] == [(2, 1, 512), (2, 1, None)]
    assert layers["model.audio_tower.layers.0.conv_blocks.0.mlp.fc1"].scheme == "UnquantizedLinearMethod"


@pytest.mark.parametrize("platform,quant,ignore,vllm,error", [
    ("h100", "quark-fp8", _MUSE_SPARK_BF16, "0.34", "Muse Spark only supports NVFP4 (modelopt_fp4) quantized "
                                                    "checkpoints; got quantization 'quark'."),
    ("h100", "fp8-block", _MUSE_SPARK_BF16, "0.33", "MuseSpark1x only supports NVFP4 (modelopt_fp4) quantized "
                                                    "checkpoints; got quantization 'fp8'."),
    ("cpu", "ct-fp8-block", _MUSE_SPARK_BF16, "0.34", "Muse Spark only supports NVFP4 (modelopt_fp4) quantized "
                                                      "checkpoints; got quantization 'compressed-tensors'."),
    ("mi300x", "modelopt-fp8", _MUSE_SPARK_BF16, "0.34", "Muse Spark on ROCm only supports Quark W8A8 FP8 or "
                                                         "OCP-MXFP4 W4A4 quantized checkpoints; got quantization "
                                                         "'modelopt'."),
    ("mi300x", "quark-fp8", _MUSE_SPARK_BF16[:-1], "0.34", "Muse Spark FP8 on ROCm requires the Triton MoE backend; "
                                                           "got 'auto'."),
    ("mi300x", "quark-fp8", _MUSE_SPARK_BF16[:-1], "0.33", "MuseSpark1x FP8 on ROCm requires the Triton MoE "
                                                           "backend; got 'auto'."),
])
def test_muse_spark_refuses_every_fp8_build_but_rocm_quark_with_bf16_experts(make_checkpoint, platform, quant, ignore,
                                                                             vllm, error):
    """nvidia/model.py / amd/model.py MuseSparkForCausalLM.__init__: only ModelOptNvFp4Config off ROCm, QuarkConfig
    on ROCm (QUANT_CONFIG_REFUSALS); amd/muse_moe_runner.py: Quark FP8 experts need --moe-backend triton, so the
    default refuses them (Arch.moe_backend_required) at every TP; 0.33 says MuseSpark1x (muse-spark-rename)."""
    folder = make_checkpoint(data="sparse", **muse_spark_spec(ignore=ignore, quant=quant))
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), select_profile(vllm)))
    assert error in rep.errors and not rep.tp_sizes_ok


@pytest.mark.parametrize("ignore, moe_backend, scheme, unjudged", [
    # FP8 experts behind the Triton backend: the runner's own method on its Triton experts subclass
    (_MUSE_SPARK_BF16[:-1], "triton", "MuseSparkQuarkW8A8Fp8FusedMoE", False),
    (_MUSE_SPARK_BF16, "triton", "MuseSparkUnquantizedFusedMoE", False),
    # BF16 experts under another backend vLLM's unquantized oracle maps: it answers first (not modelled: not judged)
    (_MUSE_SPARK_BF16, "flashinfer_cutlass", "UnquantizedFusedMoEMethod", True),
])
def test_muse_spark_takes_the_triton_moe_backend(make_checkpoint, ignore, moe_backend, scheme, unjudged):
    """amd/muse_moe_runner.py: MuseSparkQuarkW8A8Fp8FusedMoE's validate_fp8_deployment takes --moe-backend triton
    only, and builds MuseSparkTritonExperts (a TritonExperts); BF16 experts keep MuseSparkUnquantizedFusedMoE under
    auto / triton."""
    folder = make_checkpoint(data="sparse", **muse_spark_spec(ignore=ignore, quant="quark-fp8"))
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("mi300x"), select_profile("0.34"),
                                                                moe_backend=moe_backend))
    assert not rep.errors and rep.moes
    assert {(moe.scheme, bool(moe.unjudged)) for moe in rep.moes} == {(scheme, unjudged)}
    if not unjudged:
        assert {(moe.kernel, moe.backend) for moe in rep.moes} == {("MuseSparkTritonExperts", "TRITON")}
    # one it does not map: its refusal (map_unquantized_backend), before Muse-Spark's own check
    folder = make_checkpoint(data="sparse", **muse_spark_spec(ignore=_MUSE_SPARK_BF16, quant="quark-fp8"))
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("mi300x"), select_profile("0.34"),
                                                                moe_backend="deep_gemm"))
    assert {moe.errors for moe in rep.moes} == {(
        "moe_backend='deep_gemm' is not supported for unquantized MoE. Expected one of ['triton', 'batched_triton', "
        "'flashinfer_trtllm', 'flashinfer_cutlass', 'aiter'].",)}


def test_muse_spark_refuses_a_tp_that_does_not_divide_the_kv_heads(make_checkpoint):
    """common/layers.py MuseSparkQKVOGateParallelLinear asserts that TP divides the KV heads (no replication)."""
    rep = inspect(make_checkpoint(data="sparse", **muse_spark_spec()), platform="mi300x", tp=4)
    assert ("AssertionError: KV-head padding is not supported for the fused QKV+O-gate projection: "
            "total_num_kv_heads=2, tp_size=4.") in rep.errors and rep.tp_sizes_ok == (1, 2)


def test_mimo_v2_flash_with_a_vision_config_is_built_as_mimo_v2_omni_with_bf16_towers(make_checkpoint):
    """MimoV2ModelArchConfigConvertor (model_arch_config_convertor.py) builds MiMoV2OmniForCausalLM for any mimo_v2 /
    mimo_v2_flash config with a vision_config, whatever config.json lists; mimo_v2_omni.py builds the vision tower
    with quant_config=None and mimo_audio.py's encoder of torch nn.Linears (transformers' Qwen2Model)."""
    ckpt = open_local(make_checkpoint(**dict(MIMO_V2_OMNI_SPEC, architecture="MiMoV2FlashForCausalLM",
                                             data="sparse")))
    assert ckpt.config.architectures == ("MiMoV2OmniForCausalLM",)
    rep = inspect_checkpoint(ckpt, InspectOptions(parse_platform("h100"), LATEST))
    layers = {layer.name: layer for layer in rep.layers}
    assert layers["model.layers.0.self_attn.qkv_proj"].layout == "vllm:mimo_v2_omni.py"
    assert any("quant_config=None" in note for note in layers["visual.blocks.0.attn.qkv"].notes)
    assert any("torch nn.Linear" in note for note in layers["audio_encoder.projection"].notes)
    assert {layers[name].scheme for name in ("visual.blocks.0.attn.qkv", "audio_encoder.projection")} == {
        "UnquantizedLinearMethod"}
    assert {a.backend for a in rep.attention} == {"FLASH_ATTN_DIFFKV"} and rep.ok


@pytest.mark.parametrize("arch,qkv_ignored", [("MiMoV2OmniForCausalLM", False), ("MiMoV2FlashForCausalLM", True)])
def test_mimo_v2_omni_lists_ask_the_fused_qkv_proj_by_its_own_name(make_checkpoint, arch, qkv_ignored):
    """MiMoV2OmniForCausalLM is SupportsQuant without a packed_modules_mapping and its MiMoV2FlashForCausalLM no
    SupportsQuant: the quant config's packed_modules_mapping stays empty, so is_layer_skipped asks for qkv_proj itself
    and an ignore list naming layer 0's q / k / v leaves it FP8 (its BF16 shards then fail); MiMo-V2-Flash skips it."""
    qkv = tuple(f"model.layers.0.self_attn.{leaf}" for leaf in ("q_proj", "k_proj", "v_proj"))
    extra = MIMO_V2_OMNI_SPEC["extra_config"] if arch == "MiMoV2OmniForCausalLM" else MIMO_V2
    rep = inspect(make_checkpoint(**dict(MIMO_V2_OMNI_SPEC, architecture=arch, extra_config=extra, quant="fp8-block",
                                         ignore=(*MIMO_V2_OMNI_SPEC["ignore"], *qkv), data="sparse")))
    layer = next(layer for layer in rep.layers if layer.name == "model.layers.0.self_attn.qkv_proj")
    assert (layer.scheme == "UnquantizedLinearMethod") is qkv_ignored
    assert bool(layer.errors) is not qkv_ignored


def test_k2_horizon_mova_splits_its_kv_parts_as_kv_heads_and_reads_value_experts_raw(make_checkpoint):
    """k2_horizon.py K2HorizonMoVAAttention: qk_proj is a MergedColumnParallelLinear over [heads x head_dim,
    kv_size x TP] and each v_experts.<i> a ColumnParallelLinear of kv_size x TP (kv_size: one KV head a rank above
    the KV head count, load_weights repeating k_proj's heads), so at TP 4 over 2 KV heads each rank holds 128 rows
    of K and of each value expert, a whole 128-block; the router mlp.gate and v_router get the quant config; a
    quantized value expert is built, but compute_mova_v_sparse reads its weight unscaled (an error)."""
    folder = make_checkpoint(**dict(K2_HORIZON_SPEC, quant="ct-fp8-block", data="sparse",
                                    ignore=("lm_head", r"re:.*mlp\.gate$", r"re:.*v_router$")))
    modules = {m.name: m for m in build_layout(open_local(folder).tensors, open_local(folder).config).linears}
    qk, expert = modules["model.layers.1.self_attn.qk_proj"], modules["model.layers.1.self_attn.v_experts.0"]
    assert tp_layout(qk, 4).output_partition_sizes == (128, 128) and tp_layout(qk, 4).output_size == 1024
    assert tp_layout(expert, 4).output_partition_sizes == (128,)
    assert tp_layout(qk, 2).output_partition_sizes == (256, 128)
    # rank 3 of 4 loads KV head 3 // 2 = 1 (load_weights repeats each of k_proj's heads over its 2 replicas)
    assert [read.weight.rows for read in rank_reads(qk, tp_layout(qk, 4), 3, (128, 128)).shards] == \
        [(384, 512), (128, 256)]
    assert [read.weight.rows for read in rank_reads(expert, tp_layout(expert, 4), 1, None).shards] == [(0, 128)]
    rep = inspect(folder, tp=4)
    layers = {layer.name: layer for layer in rep.layers}
    assert not layers["model.layers.1.self_attn.qk_proj"].errors
    assert "compute unscaled" in layers["model.layers.1.self_attn.v_experts.0"].errors[0]
    assert {a.name for a in rep.attention} >= {"model.layers.0.self_attn.attn", "model.layers.1.self_attn.attn"}
    for router in ("model.layers.1.mlp.gate", "model.layers.1.self_attn.v_router"):  # quant config, ignored here
        assert layers[router].layer_type == "ReplicatedLinear" and not layers[router].errors


def test_kimi_k3_on_rocm_is_amd_linear_py(make_checkpoint):
    """models/kimi_k3/amd (0.33, 0.34): fused_qkv_a_proj is the KimiK3MergedQKVGateLinear over q_a_proj /
    kv_a_proj_with_mqa / g_proj, the latent MoE's routed_expert_down_proj / up_proj are built unquantized (an FP8 one
    fails the load), and Kimi-K3.1's DSA indexer has no module (its tensors fail the load); the layout is laid out,
    not guessed."""
    folder = make_checkpoint(**kimi_k3_spec(quant="fp8-block", ignore=("language_model.lm_head", r"re:.*_res_proj$")))
    rep = inspect(folder, platform="mi300x")
    layers = {layer.name: layer for layer in rep.layers}
    fused = layers["language_model.layers.2.self_attn.fused_qkv_a_proj"]
    assert (fused.layer_type, fused.layout) == ("KimiK3MergedQKVGateLinear", "vllm:models/kimi_k3/amd")
    assert "language_model.layers.2.self_attn.fused_qkv_a_g_proj" not in layers
    for leaf in ("routed_expert_down_proj", "routed_expert_up_proj"):
        layer = layers[f"language_model.layers.1.block_sparse_moe.{leaf}"]
        assert layer.scheme.startswith("Unquantized") and layer.errors, leaf
    assert "generic" not in {layer.layout for layer in rep.layers}
    cuda = {layer.name: layer for layer in inspect(folder).layers}
    assert cuda["language_model.layers.1.block_sparse_moe.routed_expert_up_proj"].scheme == "Fp8LinearMethod"
    rep = inspect(make_checkpoint(**kimi_k3_spec(dsa=True, quant="fp8-block")), platform="mi300x")
    assert not any(".indexer." in layer.name for layer in rep.layers)
    assert any(s.prefix == ".self_attn.indexer." for s in rep.skipped)
    assert any(e.startswith("KeyError: language_model.layers.2.self_attn.indexer.") for e in rep.errors)
    older = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("mi300x"), select_profile("0.32")))
    assert "language_model.layers.2.self_attn.fused_qkv_a_g_proj" in {layer.name for layer in older.layers}


@pytest.mark.parametrize("spec,refusal", [
    (dict(architecture="Qwen3MoeForCausalLM", **QWEN_MOE), "Tensor parallel size 8 is greater than the number of "
                                                           "experts 4."),
    (ERNIE_VL, "Tensor parallel size 8 is greater than the number of experts [4, 4]."),  # the list, as printed
    (dict(architecture="MixtralForCausalLM", moe_style="mixtral", **QWEN_MOE), None),  # mixtral.py: no such check
], ids=["qwen3-moe", "ernie-4.5-vl", "mixtral"])
def test_moe_block_refuses_a_tp_above_its_experts_where_its_model_file_does(make_checkpoint, spec, refusal):
    folder = make_checkpoint(**{"quant": "ct-fp8-block", "moe_intermediate": 256, "vision_hidden": 256, **spec})
    over, within = inspect(folder, tp=8), inspect(folder, tp=4)
    assert [e for e in over.errors if "greater than the number of experts" in e] == ([refusal] if refusal else [])
    assert not [e for e in within.errors if "greater than the number of experts" in e]


def _classic(arch: str, model_type: str, quant: str = "fp8-block", **fields) -> dict:
    extra = dict(CLASSIC["extra_config"], **fields.pop("extra_config", {}))
    return dict(CLASSIC, architecture=arch, model_type=model_type, quant=quant, extra_config=extra, **fields)


def _layers(rep) -> dict:
    return {layer.name: (layer.layer_type, layer.scheme) for layer in rep.layers}


def test_opt_is_opt_py_with_its_projections_and_unquantized_head(make_checkpoint):
    """opt.py: q / k / v -> qkv_proj, out_proj / fc2 row, fc1 column; OPT-350M's project_in / project_out (where
    word_embed_proj_dim differs from hidden_size) ReplicatedLinears with the quant config; embed_positions a position
    table (no linear; its shape is not vocab x hidden, nor is embed_tokens' hidden wide); the head without
    quant_config. Laid out, not guessed."""
    spec = _classic("OPTForCausalLM", "opt", tie_embeddings=False, ignore=("lm_head", "model.decoder.project_in",
                                                                           "model.decoder.project_out"),
                    extra_config=dict(ffn_dim=512, word_embed_proj_dim=128, do_layer_norm_before=False))
    rep = inspect(make_checkpoint(**spec), tp=2)
    layers = _layers(rep)
    assert layers["model.decoder.layers.0.self_attn.qkv_proj"][0] == "QKVParallelLinear"
    assert layers["model.decoder.layers.0.self_attn.out_proj"][0] == layers["model.decoder.layers.0.fc2"][0] == \
        "RowParallelLinear"
    assert layers["model.decoder.layers.0.fc1"] == ("ColumnParallelLinear", "Fp8LinearMethod")
    assert layers["model.decoder.project_in"][0] == layers["model.decoder.project_out"][0] == "ReplicatedLinear"
    head = next(layer for layer in rep.layers if layer.name == "lm_head")
    assert head.scheme.startswith("Unquantized") and not ARCHITECTURES["OPTForCausalLM"].head_quant_config
    assert not any("embed_positions" in name for name in layers)
    assert [a.name for a in rep.attention] == ["model.decoder.layers.0.self_attn.attn"]
    assert "generic" not in {layer.layout for layer in rep.layers} and rep.ok


def test_gpt_j_bloom_and_falcon_lay_out_their_fused_attention(make_checkpoint):
    """gpt_j.py (q / k / v -> qkv_proj without a packed mapping: the lists match qkv_proj itself), bloom.py and
    falcon.py (query_key_value stored fused, a QKVParallelLinear: BLOOM's every head a KV head, Falcon-7B's one under
    multi_query, Falcon-40B's num_kv_heads with new_decoder_architecture), each layer's Attention beside it."""
    cases = (
        (_classic("GPTJForCausalLM", "gptj", extra_config=dict(n_inner=512, rotary_dim=64)), "transformer.h.0.attn",
         "qkv_proj", (2, 2)),
        (_classic("BloomForCausalLM", "bloom", tie_embeddings=True), "transformer.h.0.self_attention",
         "query_key_value", (2, 2)),
        (_classic("FalconForCausalLM", "falcon", tie_embeddings=True,
                  extra_config=dict(multi_query=True, new_decoder_architecture=False, parallel_attn=True, bias=False)),
         "transformer.h.0.self_attention", "query_key_value", (2, 1)),
        (_classic("FalconForCausalLM", "falcon", tie_embeddings=True,
                  extra_config=dict(new_decoder_architecture=True, num_kv_heads=2, bias=False)),
         "transformer.h.0.self_attention", "query_key_value", (2, 2)),
    )
    for spec, attention, qkv, (heads, kv_heads) in cases:
        rep = inspect(make_checkpoint(**spec))
        layer = next(layer for layer in rep.layers if layer.name == f"{attention}.{qkv}")
        assert layer.layer_type == "QKVParallelLinear" and layer.scheme == "Fp8LinearMethod", spec["architecture"]
        assert [(a.name, a.num_heads, a.num_kv_heads) for a in rep.attention] == [
            (f"{attention}.attn", heads, kv_heads)], spec["architecture"]
        assert "generic" not in {layer.layout for layer in rep.layers} and rep.ok, spec["architecture"]


def test_gpt2_conv1d_weights_are_transposed_and_their_block_scales_fail_the_load(make_checkpoint):
    """gpt2.py: c_attn / c_proj / c_fc are HF Conv1D weights stored [in, out] that GPT2Model._transpose_conv1d
    transposes on load, the weight alone: laid out as vLLM's [out, in] (c_attn a QKVParallelLinear of 3 x hidden);
    a block scale written in the stored orientation does not fit (a per-tensor one does)."""
    spec = _classic("GPT2LMHeadModel", "gpt2", tie_embeddings=True, extra_config=dict(n_inner=512))
    rep = inspect(make_checkpoint(**spec))
    c_attn = next(layer for layer in rep.layers if layer.name == "transformer.h.0.attn.c_attn")
    assert (c_attn.layer_type, c_attn.shape) == ("QKVParallelLinear", (768, 256))
    assert "vLLM's loader transposes the weight alone" in c_attn.errors[0]
    assert [a.name for a in rep.attention] == ["transformer.h.0.attn.attn"]
    rep = inspect(make_checkpoint(**dict(spec, quant="modelopt-fp8")))
    assert rep.ok and "generic" not in {layer.layout for layer in rep.layers}


@pytest.mark.parametrize("vllm,layout,qkv", [("0.31", "vllm:gpt_neox.py", "QKVParallelLinear"),
                                             ("0.33", "vllm:transformers/causal.py", "ColumnParallelLinear")])
def test_gpt_neox_moved_to_the_transformers_backend(make_checkpoint, vllm, layout, qkv):
    """gpt_neox.py until 0.32 moved GPT-NeoX to the Transformers backend, which builds query_key_value as its plan's
    ColumnParallelLinear (the Attention attention.attn of config.json's heads) and renames embed_out. to lm_head.: a
    ModelOpt exclude list naming embed_out (no dot) no longer leaves the head unquantized."""
    spec = _classic("GPTNeoXForCausalLM", "gpt_neox", quant="modelopt-fp8", ignore=("embed_out",),
                    extra_config=dict(rotary_pct=0.25))
    rep = inspect_checkpoint(open_local(make_checkpoint(**spec)),
                             InspectOptions(parse_platform("h100"), select_profile(vllm)))
    layers = {layer.name: layer for layer in rep.layers}
    assert (layers["gpt_neox.layers.0.attention.query_key_value"].layer_type,
            layers["gpt_neox.layers.0.attention.query_key_value"].layout) == (qkv, layout)
    assert [a.name for a in rep.attention] == ["gpt_neox.layers.0.attention.attn"]
    head = layers["embed_out"]
    assert head.layer_type == "ParallelLMHead"
    assert (head.scheme == "ModelOptLinearMethod") is (vllm == "0.33") and (bool(head.errors) is (vllm == "0.33"))


def test_gpt_bigcode_packed_qkv_is_fused_by_the_backend(make_checkpoint):
    """The Transformers backend's PackedQKVFuser builds multi-query attention's c_attn as a QKVParallelLinear (one
    KV head: GPTBigCodeConfig under multi_query) and c_proj rowwise; the MLP replicated (no tp_plan); wpe a position
    table."""
    spec = _classic("GPTBigCodeForCausalLM", "gpt_bigcode", tie_embeddings=True,
                    extra_config=dict(n_inner=512, multi_query=True))
    rep = inspect(make_checkpoint(**spec))
    layers = _layers(rep)
    assert layers["transformer.h.0.attn.c_attn"][0] == "QKVParallelLinear"
    assert layers["transformer.h.0.attn.c_proj"][0] == "RowParallelLinear"
    assert layers["transformer.h.0.mlp.c_fc"][0] == layers["transformer.h.0.mlp.c_proj"][0] == "ReplicatedLinear"
    assert [(a.name, a.num_kv_heads) for a in rep.attention] == [("transformer.h.0.attn.attn", 1)]
    assert "generic" not in {layer.layout for layer in rep.layers} and rep.ok


def test_jamba_mamba_mixer_takes_no_quant_config(make_checkpoint):
    """jamba.py builds MambaMixer (layers/mamba/mamba_mixer.py) without a quant config: its linears are unquantized
    whatever the format says, an FP8 one there fails the load; the attention layer's Attention has no KV cache
    method (built without quant_config either)."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(JAMBA_SPEC, ignore=("lm_head",))))
    by_name = {layer.name: layer for layer in rep.layers}
    assert by_name["model.layers.0.mamba.in_proj"].scheme == "UnquantizedLinearMethod"
    assert not rep.ok and by_name["model.layers.0.mamba.out_proj"].errors
    ok = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **JAMBA_SPEC))
    assert ok.ok and [a.name for a in ok.attention] == ["model.layers.1.self_attn.attn"]
    assert ok.attention[0].kv_method is None


@pytest.mark.parametrize("listed,quantized", [(("model.layers.0.mamba.in_proj",), True),
                                              (("model.layers.0.mamba.in_proj", "model.2.mixer.in_proj"), False)])
def test_falcon_h1_quant_lists_see_the_ssm_branch_under_its_offset_prefix(make_checkpoint, listed, quantized):
    """falcon_h1.py builds layer i's MambaMixer2 under the prefix model.{L + i}.mixer: an ignore list naming the
    checkpoint's model.layers.i.mamba.in_proj never reaches it (vLLM quantizes it over the BF16 weight), vLLM's own
    prefix does."""
    spec = dict(FALCON_H1_SPEC, data="sparse", quant="fp8-block", ignore=("lm_head", *listed))
    rep = inspect(make_checkpoint(**spec))
    in_proj = next(layer for layer in rep.layers if layer.name == "model.layers.0.mamba.in_proj")
    assert (in_proj.scheme != "UnquantizedLinearMethod") == quantized and rep.ok != quantized


def test_granite_swa_layers_take_the_window_and_a_sink(make_checkpoint):
    """granite.py granite_layer_attn_params: the sliding layer gets config.sliding_window, and with layer_types set
    every layer holds a per-head sink (the checkpoint's self_attn.sinks)."""
    spec = dict(GRANITE, architecture="GraniteSWAForCausalLM", model_type="granite_swa", data="sparse",
                extra_config=dict(GRANITE["extra_config"], **GRANITE_SWA))
    rep = inspect(make_checkpoint(**spec))
    assert rep.ok and [a.sliding_window for a in rep.attention] == [512, None]


def test_olmo_hybrid_linear_layers_have_no_attention(make_checkpoint):
    """olmo_hybrid.py: the gated-delta-net layer fuses q / k / v / g into in_proj_qkvg (not the attention's qkv_proj)
    and its three convolutions into one unquantized conv1d; only the full-attention layer builds an Attention."""
    rep = inspect(make_checkpoint(data="sparse", **OLMO_HYBRID_SPEC))
    conv = next(layer for layer in rep.layers if layer.name == "model.layers.0.linear_attn.conv1d")
    assert rep.ok and conv.scheme == "UnquantizedLinearMethod"
    assert [a.name for a in rep.attention] == ["model.layers.1.self_attn.attn"]


def test_mamba_fp8_mixers_load_unscaled_and_mamba2_reads_its_sizes(make_checkpoint):
    """mamba.py's MambaMixer takes no quant config: an FP8 checkpoint of it has every mixer linear loaded unscaled
    (nothing of the model is quantized); mamba2.py's MambaMixer2 does, its in_proj [I, I, GN, GN, H] sized from
    Mamba2Config's num_heads / head_dim / n_groups / state_size."""
    rep = inspect(make_checkpoint(data="sparse", **dict(MAMBA_SPEC, ignore=("lm_head",))))
    assert not rep.ok and all(layer.scheme == "UnquantizedLinearMethod" for layer in rep.layers)
    rep = inspect(make_checkpoint(data="sparse", **MAMBA2_SPEC))
    in_proj = next(layer for layer in rep.layers if layer.name == "backbone.layers.0.mixer.in_proj")
    assert rep.ok and in_proj.shape == (2 * 1024 + 2 * 128 + 8, 512) and in_proj.scheme != "UnquantizedLinearMethod"


def test_gemma3n_text_model_is_laid_out_as_gemma3n_py_builds_it(make_checkpoint):
    """gemma3n.py: AltUp's coefficients and router, the per-layer input gate / projection ReplicatedLinear with the
    quant config, Laurel column / row, the self-decoder's per_layer_model_projection and altup_projections and the
    text model's altup_unembed_projections ColumnParallelLinear; the KV-shared layers' q_proj alone; every layer
    laid out (not guessed)."""
    folder = make_checkpoint(architecture="Gemma3nForCausalLM", model_type="gemma3n_text", tie_embeddings=True,
                             data="sparse", transformers=True, extra_config=GEMMA3N_TEXT)
    rep = inspect(folder)
    assert rep.ok, list(rep.errors)
    assert {layer.layout for layer in rep.layers} == {"vllm:gemma3n.py"} and not rep.notes
    types = {layer.name: layer.layer_type for layer in rep.layers}
    assert {name.removeprefix("model.layers.0."): kind for name, kind in types.items()
            if name.startswith("model.layers.0.")} == {
        "altup.correction_coefs": "ReplicatedLinear", "altup.prediction_coefs": "ReplicatedLinear",
        "altup.modality_router": "ReplicatedLinear", "laurel.linear_left": "ColumnParallelLinear",
        "laurel.linear_right": "RowParallelLinear", "per_layer_input_gate": "ReplicatedLinear",
        "per_layer_projection": "ReplicatedLinear", "self_attn.qkv_proj": "QKVParallelLinear",
        "self_attn.o_proj": "RowParallelLinear", "mlp.gate_up_proj": "MergedColumnParallelLinear",
        "mlp.down_proj": "RowParallelLinear"}
    assert types["model.layers.3.self_attn.q_proj"] == "ColumnParallelLinear"
    assert "model.layers.3.self_attn.qkv_proj" not in types
    for name in ("model.per_layer_model_projection", "model.altup_projections.2", "model.altup_unembed_projections.0"):
        assert types[name] == "ColumnParallelLinear"
    assert all(layer.scheme.startswith("CompressedTensors") for layer in rep.layers)
    shared = {a.name: a for a in rep.attention}
    assert [(shared[f"model.layers.{i}.self_attn.attn"].kind, shared[f"model.layers.{i}.self_attn.attn"]
             .cache_bytes_per_token) for i in (2, 3)] == [("sliding window 512", 0), ("full", 0)]


def test_gemma3n_lists_match_the_self_decoder_prefix(make_checkpoint):
    """get_quant_method is asked with the self-decoder's prefix (model.self_decoder.per_layer_model_projection);
    the quant config's lists are mapped by the class mappers' renames only, whose self_decoder. prefixes never apply
    to a name under model.: an ignore entry naming the checkpoint's model.per_layer_model_projection leaves vLLM's
    layer quantized, and its BF16 weight is an error. A regex matching both names skips it."""
    def layer(ignore):
        folder = make_checkpoint(architecture="Gemma3nForCausalLM", model_type="gemma3n_text", tie_embeddings=True,
                                 data="sparse", transformers=True, extra_config=GEMMA3N_TEXT, ignore=ignore)
        rep = inspect(folder)
        return {layer.name: layer for layer in rep.layers}["model.per_layer_model_projection"]
    named = layer(("lm_head", "model.per_layer_model_projection"))
    assert named.scheme.startswith("CompressedTensors") and named.errors
    matched = layer(("lm_head", "re:.*per_layer_model_projection$"))
    assert matched.scheme == "UnquantizedLinearMethod" and not matched.errors


def test_gemma3n_towers_are_built_without_the_quant_config(make_checkpoint):
    """gemma3n_mm.py: the text model under language_model (laid out as Gemma3nForCausalLM); the USM audio encoder's
    linears torch nn.Linears, the embedders' embedding_projection a RowParallelLinear without the quant config, their
    tables embeddings; the MobileNetV5 tower holds no linear."""
    folder = make_checkpoint(architecture="Gemma3nForConditionalGeneration", model_type="gemma3n",
                             tie_embeddings=True, data="sparse", transformers=True, sizes_in_text_config=True,
                             extra_config=GEMMA3N_VL, extra_tensors=gemma3n_tower_tensors(GEMMA3N_VL),
                             ignore=("re:.*vision_tower.*", "re:.*audio_tower.*", "re:.*embed_vision.*",
                                     "re:.*embed_audio.*"))
    rep = inspect(folder)
    assert rep.ok, list(rep.errors)
    assert "generic" not in {layer.layout for layer in rep.layers} and not rep.notes
    by_name = {layer.name: layer for layer in rep.layers}
    for name in ("model.audio_tower.conformer.0.attention.attn.q_proj",
                 "model.audio_tower.conformer.0.lconv1d.linear_start",
                 "model.audio_tower.subsample_conv_projection.input_proj_linear"):
        assert by_name[name].layer_type == "nn.Linear" and by_name[name].scheme == "UnquantizedLinearMethod"
    for tower in ("vision", "audio"):
        projection = by_name[f"model.embed_{tower}.embedding_projection"]
        assert projection.layer_type == "RowParallelLinear" and projection.scheme == "UnquantizedLinearMethod"
        assert f"model.embed_{tower}.embedding" not in by_name
    assert not [name for name in by_name if "vision_tower" in name]
    assert by_name["model.language_model.layers.0.altup.modality_router"].scheme.startswith("CompressedTensors")
    assert by_name["model.language_model.layers.3.self_attn.q_proj"].layer_type == "ColumnParallelLinear"


def test_phi3_vision_builds_the_fixed_clip_tower_over_llama(make_checkpoint):
    """phi3v.py: Phi-3's text model (qkv_proj / gate_up_proj stored fused) built by llama.py, the CLIP tower of its
    fixed config (16 heads, whatever config.json holds) with the quant config up to layer_idx -2 (layer 23 dropped by
    clip.py's loader), img_projection torch nn.Linears."""
    folder = make_checkpoint(architecture="Phi3VForCausalLM", model_type="phi3_v", data="sparse", transformers=True,
                             extra_tensors=phi3v_vision_tensors(256), ignore=("lm_head", "re:.*img_projection.*"),
                             extra_config=PHI3V)
    rep = inspect(folder, tp=2)
    assert rep.ok, list(rep.errors)
    assert "generic" not in {layer.layout for layer in rep.layers} and not rep.notes
    by_name = {layer.name: layer for layer in rep.layers}
    vit = "model.vision_embed_tokens.img_processor.vision_model.encoder.layers"
    qkv = by_name[f"{vit}.22.self_attn.qkv_proj"]
    assert qkv.layer_type == "QKVParallelLinear" and qkv.scheme.startswith("CompressedTensors")
    assert f"{vit}.23.self_attn.qkv_proj" not in by_name
    assert [s.prefix for s in rep.skipped] == ["img_processor.vision_model.encoder.layers.23."]
    assert by_name["model.vision_embed_tokens.img_projection.0"].layer_type == "nn.Linear"
    assert by_name["model.layers.0.self_attn.qkv_proj"].layer_type == "QKVParallelLinear"


# Architectures no release registers, built by the Transformers backend from transformers' own class
# (layouts.transformers_backend, from fp8check.core.model.transformers_classes).
@pytest.mark.parametrize("arch,model_type,mlp", [
    ("HeliumForCausalLM", "helium", {"mlp.gate_up_proj": "MergedColumnParallelLinear",
                                     "mlp.down_proj": "RowParallelLinear"}),
    ("MinistralForCausalLM", "ministral", {"mlp.gate_up_proj": "MergedColumnParallelLinear",
                                           "mlp.down_proj": "RowParallelLinear"}),
    ("NanoChatForCausalLM", "nanochat", {"mlp.fc1": "ColumnParallelLinear", "mlp.fc2": "RowParallelLinear"})])
@pytest.mark.parametrize("vllm", ["0.33", "0.34"])
def test_an_unregistered_dense_transformers_class_is_laid_out_from_its_generated_plan(make_checkpoint, arch,
                                                                                     model_type, mlp, vllm):
    # q / k / v fused (QKVFuser), gate / up too where there are both (GLUFuser), the rest as the config class's
    # base_model_tp_plan says (NanoChat's fc1 colwise, fc2 rowwise).
    # 64-wide heads (HeliumConfig's, hidden / heads), TP 1: at TP 2 a rank's 64 KV rows fit no 128-block
    folder = make_checkpoint(architecture=arch, model_type=model_type, layers=2, **dict(TF, head_dim=64))
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm), tp=1))
    assert rep.ok, list(rep.errors)
    by_name = {layer.name: layer for layer in rep.layers}
    assert {layer.layout for layer in rep.layers if not layer.name.startswith("lm_head")} == {
        "vllm:transformers/causal.py"}
    assert {leaf: by_name[f"model.layers.0.{leaf}"].layer_type for leaf in ("self_attn.qkv_proj", "self_attn.o_proj",
                                                                             *mlp)} == {
        "self_attn.qkv_proj": "QKVParallelLinear", "self_attn.o_proj": "RowParallelLinear", **mlp}
    assert len(rep.attention) == 2
    verdict = inspect_verdict(rep)
    assert "not judged" not in verdict and "guess" not in verdict
    version = {"0.33": "5.20.2", "0.34": "5.22.2"}[vllm]
    assert any(f"builds {arch} of transformers {version} (the newest vLLM {vllm} allows) as TransformersForCausalLM"
               in note for note in rep.notes)


def test_an_unregistered_transformers_class_before_033_stays_guessed(make_checkpoint):
    # No transformers data for 0.32's pin (< 5.20): laid out by guess, "not modelled".
    folder = make_checkpoint(architecture="HeliumForCausalLM", model_type="helium", layers=1, **TF)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile("0.32")))
    assert {layer.layout for layer in rep.layers} == {"generic"}
    assert "unless its Transformers backend builds it, which is not modelled" in inspect_verdict(rep)


@pytest.mark.parametrize("arch,model_type,extra,error", [
    # GPTNeoForCausalLM: neither is_backend_compatible() nor _can_set_attn_implementation()
    ("GPTNeoForCausalLM", "gpt_neo", {"attention_types": [[["global", "local"], 1]]},
     "Model architectures ['GPTNeoForCausalLM'] are not supported for now (vLLM 0.34 registers none of them, and "
     "GPTNeoForCausalLM of transformers 5.22.2"),
    # DiffLlama's attention does not call the attention interface: base.py _create_attention_instances refuses it
    ("DiffLlamaForCausalLM", "diffllama", {},
     "Layer 0 does not dispatch through the Transformers attention interface and vLLM has no other way to handle it.")])
def test_an_unregistered_transformers_class_vllm_cannot_build_is_refused(make_checkpoint, arch, model_type, extra,
                                                                        error):
    folder = make_checkpoint(architecture=arch, model_type=model_type, layers=2,
                             **dict(TF, extra_config=dict(TF["extra_config"], **extra)))
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile("0.34")))
    assert any(e.startswith(error) for e in rep.errors), list(rep.errors)


def test_an_unregistered_moe_or_multimodal_transformers_class_is_named_not_laid_out(make_checkpoint):
    # JetMoeForCausalLM (num_local_experts 8 by default): TransformersMoEForCausalLM, whose experts (JetMoeMoE's
    # input_linear / output_linear) no module named experts holds, so moe.py finds no MoE block: not judged. PhimoeForCausalLM
    # (num_local_experts 16 by default): config.json's own expert count decides (num_local_experts 0: a dense
    # TransformersForCausalLM). A name transformers' causal-LM and image-text-to-text classes lack: nothing found.
    folder = make_checkpoint(architecture="JetMoeForCausalLM", model_type="jetmoe", layers=1)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile("0.34")))
    assert "its Transformers backend builds JetMoeForCausalLM of transformers 5.22.2, the newest vLLM 0.34 allows, " \
           "as TransformersMoEForCausalLM, which is not laid out" in inspect_verdict(rep)
    from fp8check.core.model.layouts import transformers_backend
    profile = select_profile("0.34")
    assert transformers_backend(("PhimoeForCausalLM",), profile, (("num_local_experts", 0),)).built == \
        "TransformersForCausalLM"
    assert transformers_backend(("AyaVisionForConditionalGeneration",), profile).built == \
        "TransformersMultiModalForCausalLM"
    assert transformers_backend(("FooBarForCausalLM",), profile).found is None


# ninth round (fam-textb)
# Zamba2 (transformers' Zamba2ForCausalLM): Mamba-2 layers and hybrid layers 0, 2, 4 over two shared transformer blocks
# (block 0 at layers 0 and 4, saved once under layer 0; block 1 at layer 2), each with its per-use LoRA adapters.
ZAMBA2 = dict(layers_block_type=["hybrid", "mamba", "hybrid", "mamba", "hybrid"], num_mem_blocks=2,
              use_shared_attention_adapter=True, adapter_rank=128, n_mamba_heads=8, mamba_ngroups=1, mamba_d_state=128,
              use_mem_rope=True, hidden_act="gelu", pad_token_id=0, bos_token_id=1, eos_token_id=2)
ZAMBA2_SPEC = dict(architecture="Zamba2ForCausalLM", model_type="zamba2", transformers=True, layers=5, head_dim=128,
                   tie_embeddings=True, extra_config=ZAMBA2)
# Nemotron-H Puzzle (NVIDIA's remote-code config): NEMOTRON_H's layers "M*-E" given by block_configs, whose MLP block is
# 1024 wide (the top-level intermediate_size another) and whose MoE block alone holds the expert keys.
PUZZLE = dict({k: v for k, v in NEMOTRON_H.items() if k not in ("hybrid_override_pattern", "n_routed_experts",
                                                                 "num_experts_per_tok", "moe_intermediate_size",
                                                                 "moe_shared_expert_intermediate_size")},
              block_configs=[{"block_type": "mamba"}, {"block_type": "attention"},
                             {"block_type": "mlp", "intermediate_size": 1024},
                             {"block_type": "moe", "n_routed_experts": 4, "num_experts_per_tok": 2,
                              "moe_intermediate_size": 256, "moe_shared_expert_intermediate_size": 256}])
PUZZLE_SPEC = dict(architecture="NemotronHPuzzleForCausalLM", model_type="nemotron_h_puzzle", extra_config=PUZZLE,
                   **HF)
# openPangu (remote-code configs): Embedded (dense, Llama's names), Ultra-MoE (DeepSeek-V3's MLA with q-LoRA, sigmoid
# routing with the expert bias, one MTP layer) and Pro-MoE-V2 (GQA, the same MoE).
PANGU = dict(hidden_act="silu", rms_norm_eps=1e-5, rope_theta=16000000.0)
PANGU_MOE = dict(PANGU, num_experts_per_tok=2, norm_topk_prob=True, router_enable_expert_bias=True,
                 routed_scaling_factor=2.5)
# Param2-MoE (remote-code config): Ling-2.0's names and keys (fused query_key_value, a dense layer 0, sigmoid grouped
# routing, a shared expert).
PARAM2 = dict(LING_V2, model_type="param2moe", rope_scaling=None)
# IQuest-Coder-V1-Loop (remote-code config): Llama's names, two loops, each layer's loop gate (gate_projections.i, a
# [heads, head_dim] weight and bias), stored BF16 and listed under vLLM's prefix and the stored name.
IQUEST_GATES = {name: shape for i in range(2) for name, shape in ((f"model.gate_projections.{i}.weight", (4, 128)),
                                                                   (f"model.gate_projections.{i}.bias", (4,)))}
IQUEST_SPEC = dict(architecture="IQuestLoopCoderForCausalLM", model_type="iquest_loopcoder", head_dim=128,
                   extra_tensors=IQUEST_GATES, extra_config=dict(loop_num=2, loop_window_size=64),
                   ignore=("lm_head", *(f"model.gate_projections.{i}{part}" for i in range(2)
                                        for part in ("", ".gate_proj"))))
# Unlimited-OCR-2's text model (a deepseek_v2 config with the keys vLLM's OCR config sets): DeepSeek-MoE's MHA layers
# and MoE under DASH attention, each layer's DASH router (head_dim-wide q / k projections, norms) stored BF16.
DASH_ROUTER = {name: shape for i in range(2) for name, shape in (
    (f"model.layers.{i}.self_attn.dash_router.q_proj.weight", (128, 256)),
    (f"model.layers.{i}.self_attn.dash_router.k_proj.weight", (128, 256)),
    (f"model.layers.{i}.self_attn.dash_router.q_norm.weight", (128,)),
    (f"model.layers.{i}.self_attn.dash_router.k_norm.weight", (128,)))}
UNLIMITED_OCR2_SPEC = dict(
    DEEPSEEK_MOE_SPEC, architecture="UnlimitedOCR2TextForCausalLM", model_type="deepseek_v2", heads=2, kv_heads=2,
    extra_tensors=DASH_ROUTER, ignore=("lm_head", r"re:.*\.dash_router\..*"),
    extra_config=dict(DEEPSEEK_MOE_SPEC["extra_config"], qk_nope_head_dim=0, qk_rope_head_dim=0, v_head_dim=128,
                      unlimited_ocr2=True, unlimited_ocr2_attention_backend="FLASH_ATTN",
                      sparse_attention_config={"sparse_index_dim": 128}))
TEXTB_FAMILIES = [
    ("unlimited-ocr2-text", dict(UNLIMITED_OCR2_SPEC, quant="fp8-block"), 1,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:unlimited_ocr.py"),
      "model.layers.0.self_attn.dash_router.q_proj": ("nn.Linear", "vllm:unlimited_ocr.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:unlimited_ocr.py")}),
    ("iquest-loopcoder", IQUEST_SPEC, 1,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:iquest_loopcoder.py"),
      "model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:iquest_loopcoder.py"),
      "model.gate_projections.0": ("ColumnParallelLinear", "vllm:iquest_loopcoder.py")}),
    ("param2-moe", ling_spec(PARAM2, "Param2MoEForCausalLM"), 2,
     {"model.layers.0.attention.qkv_proj": ("QKVParallelLinear", "vllm:param2moe.py"),
      "model.layers.0.attention.dense": ("RowParallelLinear", "vllm:param2moe.py"),
      "model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:param2moe.py"),
      "model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:param2moe.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:param2moe.py")}),
    ("pangu-embedded", dict(architecture="PanguEmbeddedForCausalLM", model_type="PanguEmbedded", head_dim=128,
                            extra_config=PANGU), 2,
     {"model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:openpangu.py"),
      "model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:openpangu.py")}),
    ("pangu-ultra-moe", dict(architecture="PanguUltraMoEForCausalLM", model_type="pangu_ultra_moe", quant="fp8-block",
                             mla=True, head_dim=128, qk_rope_head_dim=64, q_lora_rank=256, moe_style="deepseek",
                             experts=4, shared_experts=1, first_k_dense=1, mtp_layers=1, extra_config=PANGU_MOE), 2,
     {"model.layers.0.self_attn.fused_qkv_a_proj": ("MergedColumnParallelLinear", "vllm:openpangu.py"),
      "model.layers.0.self_attn.kv_b_proj": ("ColumnParallelLinear", "vllm:openpangu.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:openpangu.py"),
      "model.layers.1.mlp.shared_experts.gate_up_proj": ("MergedColumnParallelLinear", "vllm:openpangu.py")}),
    ("pangu-pro-moe-v2", dict(architecture="PanguProMoEV2ForCausalLM", model_type="pangu_pro_moe_v2", head_dim=128,
                              moe_style="deepseek", experts=4, shared_experts=1, first_k_dense=1,
                              extra_config=PANGU_MOE), 2,
     {"model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:openpangu.py"),
      "model.layers.1.mlp.gate": ("ReplicatedLinear", "vllm:openpangu.py")}),
    ("nemotron-h-puzzle", PUZZLE_SPEC, 1,
     {"backbone.layers.0.mixer.in_proj": ("MergedColumnParallelLinear", "vllm:nemotron_h.py"),
      "backbone.layers.1.mixer.qkv_proj": ("QKVParallelLinear", "vllm:nemotron_h.py"),
      "backbone.layers.2.mixer.up_proj": ("ColumnParallelLinear", "vllm:nemotron_h.py"),
      "backbone.layers.3.mixer.gate": ("ReplicatedLinear", "vllm:nemotron_h.py"),
      "backbone.layers.3.mixer.shared_experts.down_proj": ("RowParallelLinear", "vllm:nemotron_h.py")}),
    ("zamba2", ZAMBA2_SPEC, 1,
     {"model.layers.0.shared_transformer.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:zamba2.py"),
      "model.layers.0.shared_transformer.self_attn.linear_q_adapter_list.2.0": ("ColumnParallelLinear",
                                                                                "vllm:zamba2.py"),
      "model.layers.2.shared_transformer.feed_forward.gate_up_proj": ("MergedColumnParallelLinear", "vllm:zamba2.py"),
      "model.layers.0.linear": ("ReplicatedLinear", "vllm:zamba2.py"),
      "model.layers.0.mamba_decoder.mamba.in_proj": ("MergedColumnParallelLinear", "vllm:zamba2.py"),
      "model.layers.1.mamba.conv1d": ("ColumnParallelLinear", "vllm:zamba2.py"),
      "model.layers.1.mamba.out_proj": ("RowParallelLinear", "vllm:zamba2.py")}),
]
FAMILIES += TEXTB_FAMILIES


@pytest.mark.parametrize("spec,tp,expected", [f[1:] for f in TEXTB_FAMILIES], ids=[f[0] for f in TEXTB_FAMILIES])
def test_ninth_round_textb_family_layout(make_checkpoint, spec, tp, expected):
    test_family_layout(make_checkpoint, spec, tp, expected)


def test_nemotron_h_puzzle_reads_each_layers_block_widths_off_its_tensors(make_checkpoint):
    """nemotron_h.py builds each MLP / MoE layer from get_nemotron_h_config_for_layer (the block's keys): the MLP is
    its block's 1024 wide (config.json's top-level intermediate_size is 512), the MoE its block's 4 experts."""
    folder = make_checkpoint(quant="ct-fp8-block", data="sparse", **PUZZLE_SPEC)
    layout = build_layout(open_local(folder).tensors, open_local(folder).config, LATEST)
    up = next(m for m in layout.linears if m.name == "backbone.layers.2.mixer.up_proj")
    assert up.output_sizes == (1024,) and [m.num_experts for m in layout.moes] == [4]


def test_pangu_ultra_moe_fuses_qkv_a_replicated_and_skips_its_mtp_layer(make_checkpoint):
    """openpangu.py: fused_qkv_a_proj a MergedColumnParallelLinear with disable_tp (whole on every rank), the MLA layer
    self_attn.mla_attn.mla_attn, and _filter_spec_layers skips the num_nextn_predict_layers layer after the last."""
    spec = next(f[1] for f in TEXTB_FAMILIES if f[0] == "pangu-ultra-moe")
    folder = make_checkpoint(data="sparse", moe_intermediate=256, **spec)
    fused = next(m for m in build_layout(open_local(folder).tensors, open_local(folder).config, LATEST).linears
                 if m.name == "model.layers.0.self_attn.fused_qkv_a_proj")
    assert fused.layer_type == "MergedColumnParallelLinear" and not fused.tp_split
    rep = inspect(folder, tp=2)
    assert [a.name for a in rep.attention] == [f"model.layers.{i}.self_attn.mla_attn.mla_attn" for i in (0, 1)]
    assert [s.prefix for s in rep.skipped] == ["model.layers.2."] and rep.ok


def test_param2_moe_quant_lists_are_not_renamed_by_its_inner_models_mapper(make_checkpoint):
    """param2moe.py's hf_to_vllm_mapper is Param2MoEModel's, which configure_quant_config never sees: a list entry
    under the stored name never reaches vLLM's self_attn.qkv_proj, which quantizes the BF16 weight."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(
        ling_spec(PARAM2, "Param2MoEForCausalLM"), ignore=("lm_head", "model.layers.0.attention.query_key_value"))))
    qkv = next(layer for layer in rep.layers if layer.name == "model.layers.0.attention.qkv_proj")
    assert qkv.scheme == "CompressedTensorsW8A8Fp8" and not rep.ok


def test_param2_moe_refuses_a_tp_size_that_does_not_divide_the_kv_heads(make_checkpoint):
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **ling_spec(PARAM2, "Param2MoEForCausalLM")),
                  tp=4)
    assert "AssertionError: num_key_value_heads (2) must be divisible by tensor-parallel world size (4)." in rep.errors


def test_iquest_loopcoder_builds_an_attention_per_loop_and_lists_reach_its_gates_as_gate_proj(make_checkpoint):
    """iquest_loopcoder.py: layer i's Attention k is self_attn.attn.k under the prefix of layer k x L + i, loops past
    the first over loop_window_size; the loop gate is built under gate_projections.i.gate_proj, which a list entry of
    the stored name alone never reaches (vLLM makes an FP8 layer of the BF16 weight)."""
    from fp8check.core.routing.attention import attention_layers
    ckpt = open_local(make_checkpoint(quant="ct-fp8-block", data="sparse", **IQUEST_SPEC))
    layers = attention_layers(ckpt, build_layout(ckpt.tensors, ckpt.config, LATEST), "cuda", 90, LATEST)
    assert [(a.name, a.layer_index, a.sliding_window) for a in layers] == [
        ("model.layers.0.self_attn.attn.0", 0, None), ("model.layers.1.self_attn.attn.0", 1, None),
        ("model.layers.0.self_attn.attn.1", 2, 64), ("model.layers.1.self_attn.attn.1", 3, 64)]
    assert inspect_checkpoint(ckpt, InspectOptions(parse_platform("h100"), LATEST)).ok
    stored_only = dict(IQUEST_SPEC, ignore=("lm_head", "model.gate_projections.0", "model.gate_projections.1"))
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **stored_only))
    gate = next(layer for layer in rep.layers if layer.name == "model.gate_projections.0")
    assert gate.scheme == "CompressedTensorsW8A8Fp8" and not rep.ok


def test_unlimited_ocr2_dash_attention_takes_its_own_backend_and_no_prefix(make_checkpoint):
    """dash_attention.py DASHAttention: its Attention has no quant config and DASHAttentionBackend (TRITON_ATTN, the
    selector not asked); qkv_proj / o_proj are built without a prefix, so a list naming layer 0's attention never
    reaches them (vLLM makes FP8 layers of the BF16 weights)."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **UNLIMITED_OCR2_SPEC))
    assert [(a.name, a.backend, a.kv_method) for a in rep.attention] == [
        (f"model.layers.{i}.self_attn.attn", "TRITON_ATTN", None) for i in (0, 1)] and rep.ok
    listed = dict(UNLIMITED_OCR2_SPEC, ignore=(*UNLIMITED_OCR2_SPEC["ignore"], *(
        f"model.layers.0.self_attn.{leaf}" for leaf in ("q_proj", "k_proj", "v_proj", "o_proj"))))
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **listed))
    qkv = next(layer for layer in rep.layers if layer.name == "model.layers.0.self_attn.qkv_proj")
    assert qkv.scheme == "CompressedTensorsW8A8Fp8" and not rep.ok


def test_zamba2_shared_blocks_build_one_attention_per_use_without_a_kv_method(make_checkpoint):
    """zamba2.py Zamba2Attention: one Attention per use k of a shared block (dpa_list.k, built under model.attn.j
    without the quant config), all over the block's one qkv_proj (heads over attention_head_dim, 2 x hidden / heads)."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **ZAMBA2_SPEC))
    assert [(a.name, a.num_heads, a.head_size, a.kv_method) for a in rep.attention] == [
        (f"model.layers.{layer}.shared_transformer.self_attn.dpa_list.{use}", 4, 128, None)
        for layer, use in ((0, 0), (0, 2), (2, 1))]


@pytest.mark.parametrize("listed,quantized", [(("model.layers.0.mamba_decoder.mamba.in_proj",), True),
                                              (("model.layers.0.mamba_decoder.mamba.in_proj", "3.mixer.in_proj"),
                                               False)])
def test_zamba2_quant_lists_see_the_mixers_under_their_hybrid_offset_prefix(make_checkpoint, listed, quantized):
    """zamba2.py builds layer i's mixer under the prefix str(H + i).mixer (H = 3 hybrid layers), no root: an ignore
    list naming the checkpoint's name never reaches it (vLLM quantizes it over the BF16 weight), vLLM's prefix does."""
    rep = inspect(make_checkpoint(quant="fp8-block", data="sparse", **dict(ZAMBA2_SPEC, ignore=("lm_head", *listed))))
    in_proj = next(layer for layer in rep.layers if layer.name == "model.layers.0.mamba_decoder.mamba.in_proj")
    assert (in_proj.scheme != "UnquantizedLinearMethod") == quantized and rep.ok != quantized


# ninth round (fam-texta)
def test_dbrx_fused_attention_and_flattened_experts(make_checkpoint):
    folder = make_checkpoint(**DBRX_SPEC)
    ckpt = open_local(folder)
    layout = build_layout(ckpt.tensors, ckpt.config, select_profile("0.34"))
    by_name = {m.name: m for m in layout.linears}
    qkv = by_name["transformer.blocks.0.norm_attn_norm.attn.Wqkv"]
    assert (qkv.layer_type, qkv.heads, qkv.fused, qkv.layout) == ("QKVParallelLinear", (2, 1, 128), False,
                                                                   "vllm:dbrx.py")
    assert by_name["transformer.blocks.1.norm_attn_norm.attn.out_proj"].layer_type == "RowParallelLinear"
    assert by_name["transformer.blocks.0.ffn.router.layer"].unquantized
    (moe, _) = layout.moes
    assert (moe.name, moe.num_experts) == ("transformer.blocks.0.ffn.experts", 4)
    shapes = {tail: info.shape for info, tail in zip(moe.tensors, moe.tails)}
    assert shapes["3.gate_proj.weight"] == shapes["3.up_proj.weight"] == (256, 256)
    assert shapes["0.down_proj.weight_scale"] == (2, 2)  # ct-fp8-block: one expert's [I / 128, H / 128]
    assert not layout.orphans
    # compressed-tensors meets the experts by class name: DbrxExperts escapes its 'Linear' target (unquantized
    # experts, so the FP8 ones stored are an error)
    rep = inspect_checkpoint(ckpt, InspectOptions(parse_platform("h100"), select_profile("0.34"), tp=2))
    assert {moe.scheme for moe in rep.moes} == {"UnquantizedFusedMoEMethod"}
    assert all(moe.errors for moe in rep.moes)
    ckpt = open_local(make_checkpoint(**dict(DBRX_SPEC, quant="fp8-block")))
    rep = inspect_checkpoint(ckpt, InspectOptions(parse_platform("h100"), select_profile("0.34"), tp=2))
    assert rep.ok, list(rep.errors)
    assert {moe.scheme for moe in rep.moes} == {"Fp8MoEMethod"}
    assert [a.name for a in rep.attention] == [f"transformer.blocks.{i}.norm_attn_norm.attn.attn" for i in (0, 1)]
    # the expert count is nested in ffn_config, which vLLM's get_num_experts does not read: EP is refused
    rep = inspect_checkpoint(ckpt, InspectOptions(parse_platform("h100"), select_profile("0.34"), tp=2, ep=True))
    assert "Number of experts in the model must be greater than 0 when expert parallelism is enabled." in rep.errors
    # load does not emulate DbrxExperts' own weight loader (flattened experts, w2 transposed): not run, never a
    # comparison over misread bytes
    pytest.importorskip("torch")
    from fp8check.core.load.experts import moe_jobs

    rep = inspect_checkpoint(ckpt, InspectOptions(parse_platform("h100"), select_profile("0.34")))
    layout = build_layout(ckpt.tensors, ckpt.config, select_profile("0.34"))
    jobs, refused = moe_jobs(layout.moes, {m.name: m for m in rep.moes}, select_profile("0.34"), False)
    assert not jobs and {run.errors for run in refused.values()} == {(
        "not run: DbrxExperts's own weight loader (experts stored flattened, the down projection transposed) is not "
        "emulated",)}




def test_minicpm3_mla_projections_feed_a_plain_attention(make_checkpoint):
    ckpt = open_local(make_checkpoint(**dict(MINICPM3_SPEC, quant="fp8-block")))
    rep = inspect_checkpoint(ckpt, InspectOptions(parse_platform("h100"), select_profile("0.34"), tp=2))
    assert rep.ok, list(rep.errors)
    by_name = {layer.name: layer for layer in rep.layers}
    assert {leaf: by_name[f"model.layers.0.self_attn.{leaf}"].layer_type for leaf in (
        "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj")} == {
        "q_a_proj": "ReplicatedLinear", "q_b_proj": "ColumnParallelLinear", "kv_a_proj_with_mqa": "ReplicatedLinear",
        "kv_b_proj": "ColumnParallelLinear", "o_proj": "RowParallelLinear"}
    assert by_name["model.layers.1.mlp.gate_up_proj"].layer_type == "MergedColumnParallelLinear"
    assert {layer.layout for layer in rep.layers} == {"vllm:minicpm3.py"}
    # a plain Attention of 4 heads of 128 (qk_nope + qk_rope), as many KV heads: no MLA backend
    layers = attention_layers(ckpt, build_layout(ckpt.tensors, ckpt.config, select_profile("0.34")))
    assert [(a.name, a.head_size, a.num_heads, a.num_kv_heads, a.mla) for a in layers] == [
        (f"model.layers.{i}.self_attn.attn", 128, 4, 4, False) for i in (0, 1)]
    assert {a.backend for a in rep.attention} == {"FLASH_ATTN"}




def test_telechat2_query_and_key_value_fuse_into_qkv_proj(make_checkpoint):
    ckpt = open_local(make_checkpoint(**dict(TELECHAT2_SPEC, ignore=("lm_head", "re:.*key_value$"))))
    layout = build_layout(ckpt.tensors, ckpt.config, select_profile("0.34"))
    by_name = {m.name: m for m in layout.linears}
    qkv = by_name["transformer.h.0.self_attention.qkv_proj"]
    assert (qkv.layer_type, qkv.output_sizes, qkv.heads) == ("QKVParallelLinear", (256, 256, 256), (2, 2, 128))
    assert [s.name for s in qkv.shards] == ["transformer.h.0.self_attention.query",
                                            "transformer.h.0.self_attention.key_value"]
    assert qkv.vllm_names[0] == "model.layers.0.self_attn.qkv_proj"
    assert by_name["transformer.h.1.self_attention.dense"].vllm_names[0] == "model.layers.1.self_attn.o_proj"
    assert by_name["transformer.h.1.mlp.gate_up_proj"].layer_type == "MergedColumnParallelLinear"
    attention = attention_layers(ckpt, layout)
    assert [(a.name, a.num_heads, a.num_kv_heads, a.head_size) for a in attention] == [
        (f"transformer.h.{i}.self_attention.attn", 2, 2, 128) for i in (0, 1)]
    # an FP8 key_value's scale is sliced like its weight by the loader's K / V split: the load fails
    ckpt = open_local(make_checkpoint(**dict(TELECHAT2_SPEC, quant="fp8-block")))
    rep = inspect_checkpoint(ckpt, InspectOptions(parse_platform("h100"), select_profile("0.34"), tp=1))
    errors = {layer.name: layer.errors for layer in rep.layers}
    assert any("key_value split" in e for e in errors["transformer.h.0.self_attention.qkv_proj"])
    assert not errors["transformer.h.0.mlp.gate_up_proj"]


def test_teleflm_is_llama_with_mup(make_checkpoint):
    # Tele-FLM (remote code, model_type TeleFLM): teleflm.py's LlamaForCausalLM, muP scales only
    ckpt = open_local(make_checkpoint(architecture="TeleFLMForCausalLM", model_type="TeleFLM", head_dim=128,
                                      extra_config=dict(use_mup=True, mup_scale_factor=4.0, output_mult=3.0)))
    rep = inspect_checkpoint(ckpt, InspectOptions(parse_platform("h100"), select_profile("0.34"), tp=1))
    assert rep.ok, list(rep.errors)
    by_name = {layer.name: layer for layer in rep.layers}
    assert [by_name[name].layer_type for name in (
        "model.layers.0.self_attn.qkv_proj", "model.layers.0.self_attn.o_proj", "model.layers.1.mlp.gate_up_proj",
        "model.layers.1.mlp.down_proj")] == ["QKVParallelLinear", "RowParallelLinear", "MergedColumnParallelLinear",
                                             "RowParallelLinear"]
    assert {layer.layout for layer in rep.layers} == {"vllm:teleflm.py"}


@pytest.mark.parametrize("spec,refusal,windowed", [
    # Step-1 (remote code): Llama's names, ALiBi with use_alibi_sqrt on every layer, which TRITON_ATTN alone supports
    (dict(architecture="Step1ForCausalLM", model_type="step1", extra_config=dict(num_attention_groups=2)),
     "use_alibi_sqrt is not supported by backend FLASH_ATTN.", (None, None)),
    # Rnj1 (Gemma-3's text config): its chunked-attention layer (a window, chunk_lookback 1) asserts TRITON_ATTN
    (dict(architecture="Rnj1ForCausalLM", model_type="gemma3_text", extra_config=dict(
        layer_types=["chunked_attention", "full_attention"], sliding_window=512, hidden_activation="gelu_pytorch_tanh",
        query_pre_attn_scalar=128)),
     "AssertionError: Chunked attention with lookback requires the Triton backend, but got FLASH_ATTN.", (512, None))])
def test_step1_and_rnj1_attention_takes_triton_only(make_checkpoint, spec, refusal, windowed):
    ckpt = open_local(make_checkpoint(head_dim=128, **spec))
    source = f"vllm:{spec['architecture'][:-len('ForCausalLM')].lower()}.py"
    h100 = InspectOptions(parse_platform("h100"), select_profile("0.34"), tp=2)
    rep = inspect_checkpoint(ckpt, h100)
    by_name = {layer.name: layer for layer in rep.layers}
    assert {layer.layout for layer in rep.layers if layer.name != "lm_head"} == {source}
    assert [by_name[name].layer_type for name in ("model.layers.0.self_attn.qkv_proj",
                                                  "model.layers.1.mlp.gate_up_proj")] == [
        "QKVParallelLinear", "MergedColumnParallelLinear"]
    assert tuple(a.sliding_window for a in rep.attention) == windowed
    # the selector's FLASH_ATTN is refused (on every layer, or the windowed one); TRITON_ATTN builds
    assert [refusal in a.errors for a in rep.attention] == [w is not None or windowed == (None, None)
                                                            for w in windowed]
    assert not rep.ok
    rep = inspect_checkpoint(ckpt, h100._replace(attention_backend="TRITON_ATTN"))
    assert rep.ok, list(rep.errors) + [e for a in rep.attention for e in a.errors]




def test_axk1_is_deepseek_v3_with_a_plain_fused_qkv_a(make_checkpoint):
    ckpt = open_local(make_checkpoint(**dict(AXK1_SPEC, quant="fp8-block")))
    rep = inspect_checkpoint(ckpt, InspectOptions(parse_platform("h100"), select_profile("0.34"), tp=2))
    assert rep.ok, list(rep.errors)
    by_name = {layer.name: layer for layer in rep.layers}
    fused = by_name["model.layers.0.self_attn.fused_qkv_a_proj"]
    assert (fused.layer_type, fused.layout) == ("MergedColumnParallelLinear", "vllm:AXK1.py")
    layout = build_layout(ckpt.tensors, ckpt.config, select_profile("0.34"))
    assert not next(m for m in layout.linears if m.name.endswith("0.self_attn.fused_qkv_a_proj")).tp_split
    assert by_name["model.layers.1.mlp.gate"].layer_type == "ReplicatedLinear"
    assert by_name["model.layers.1.mlp.shared_experts.gate_up_proj"].layer_type == "MergedColumnParallelLinear"
    assert [moe.name for moe in rep.moes] == ["model.layers.1.mlp.experts"]
    assert [(a.name, a.kind) for a in rep.attention] == [(f"model.layers.{i}.self_attn.mla_attn.mla_attn", "MLA")
                                                         for i in (0, 1)]


def test_domyn_edge_per_layer_heads_and_windows(make_checkpoint):
    # Domyn-Edge (remote code): transformers' heterogeneous per_layer_config gives layer 1 heads of 256 (128 elsewhere);
    # window_sizes' (511, 0) is a 512-key window on layer 0, (0, 0) full attention on layer 1
    ckpt = open_local(make_checkpoint(architecture="DomynEdgeForCausalLM", model_type="domyn_edge",
                                      names="domyn_edge", head_dim=128, quant="fp8-block", extra_config=dict(
                                          per_layer_config={"1": {"head_dim": 256}}, window_sizes=[[511, 0], [0, 0]],
                                          position_layers=["rope", "nope"])))
    rep = inspect_checkpoint(ckpt, InspectOptions(parse_platform("h100"), select_profile("0.34"), tp=2))
    assert rep.ok, list(rep.errors)
    layout = build_layout(ckpt.tensors, ckpt.config, select_profile("0.34"))
    by_name = {m.name: m for m in layout.linears}
    assert [by_name[f"model.layers.{i}.attention.qkv_proj"].heads for i in (0, 1)] == [(4, 2, 128), (4, 2, 256)]
    assert by_name["model.layers.1.feedforward.gate_up_proj"].layer_type == "MergedColumnParallelLinear"
    assert {m.layout for m in layout.linears} == {"vllm:domyn_edge.py"}
    assert [(a.name, a.head_size, a.sliding_window) for a in rep.attention] == [
        ("model.layers.0.attention.attn", 128, 512), ("model.layers.1.attention.attn", 256, None)]

# ninth round (fam-audio): the audio families' tests
def test_whisper_encoder_decoder_layout_and_cross_attention(make_checkpoint):
    """whisper.py: the encoder's self-attention q / k / v fused into qkv_proj (no KV cache), the decoder's too (an
    Attention), its cross-attention q_proj a column and k / v fused into kv_proj (a CrossAttention that asks the
    selector for encoder_decoder attention); fc1 / fc2 column / row; every linear quantized."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **WHISPER_SPEC))
    assert rep.ok, list(rep.errors) + [e for layer in rep.layers for e in layer.errors]
    by_name = {layer.name: layer for layer in rep.layers}
    assert {name: (layer.layer_type, layer.layout) for name, layer in by_name.items()} == {
        **{f"model.{part}.layers.0.{leaf}": (style, "vllm:whisper.py") for part in ("encoder", "decoder")
           for leaf, style in (("self_attn.qkv_proj", "QKVParallelLinear"), ("self_attn.out_proj", "RowParallelLinear"),
                               ("fc1", "ColumnParallelLinear"), ("fc2", "RowParallelLinear"))},
        "model.decoder.layers.0.encoder_attn.q_proj": ("ColumnParallelLinear", "vllm:whisper.py"),
        "model.decoder.layers.0.encoder_attn.kv_proj": ("MergedColumnParallelLinear", "vllm:whisper.py"),
        "model.decoder.layers.0.encoder_attn.out_proj": ("RowParallelLinear", "vllm:whisper.py")}
    assert all(layer.scheme == "CompressedTensorsW8A8Fp8" for layer in rep.layers)
    assert {(a.name, a.kind, a.num_heads, a.head_size, a.backend) for a in rep.attention} == {
        ("model.decoder.layers.0.self_attn.attn", "full", 4, 64, "FLASH_ATTN"),
        ("model.decoder.layers.0.encoder_attn.attn", "cross-attention", 4, 64, "FLASH_ATTN")}
    # ROCm: ROCM_ATTN leaves every layer's row for an encoder-decoder model (TRITON_ATTN for both); with AITER on,
    # ROCM_AITER_FA takes the self-attention and refuses the cross-attention
    folder = make_checkpoint(quant="ct-fp8-block", data="sparse", **WHISPER_SPEC)
    rocm = inspect(folder, platform="mi300x")
    assert {a.kind: (a.backend, a.rejected) for a in rocm.attention} == {"full": ("TRITON_ATTN", ()),
                                                                        "cross-attention": ("TRITON_ATTN", ())}
    aiter = inspect_checkpoint(open_local(folder), InspectOptions(
        apply_assumptions(parse_platform("mi300x"), ["aiter=yes"]), LATEST))
    assert {a.kind: (a.backend, [(r.kernel, r.reason) for r in a.rejected]) for a in aiter.attention} == {
        "full": ("ROCM_AITER_FA", []),
        "cross-attention": ("ROCM_AITER_UNIFIED_ATTN",
                            [("ROCM_AITER_FA", "attention type encoder_decoder not supported")])}


def test_whisper_quant_prefix_is_its_own_so_an_ignore_list_by_name_misses(make_checkpoint):
    """WhisperEncoder / WhisperDecoder build each layer under `<layer>.layers` below a model prefix of "": an ignore
    entry naming the encoder's q_proj as the checkpoint (or the mapper) names it never matches, so vLLM builds that
    qkv_proj FP8 over a BF16 weight."""
    listed = "model.encoder.layers.0.self_attn.q_proj"
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(
        WHISPER_SPEC, ignore=("proj_out", listed))))
    assert [layer.name for layer in rep.layers if not layer.ok] == ["model.encoder.layers.0.self_attn.qkv_proj"]


def test_ultravox_whisper_tower_and_projector_are_quantized_under_vllm_names(make_checkpoint):
    """ultravox.py: the text model of text_config's class (llama.py), the Whisper encoder with the quant config (q / k /
    v fused, fc1 / fc2 renamed mlp.fc1 / mlp.fc2 by the tower's loader), the projector's ReplicatedLinears; the tower's
    attention has no KV cache."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **ULTRAVOX_SPEC))
    assert rep.ok, list(rep.errors) + [e for layer in rep.layers for e in layer.errors]
    by_name = {layer.name: (layer.layer_type, layer.layout) for layer in rep.layers}
    assert {name: style for name, style in by_name.items() if not name.startswith("language_model.")} == {
        "audio_tower.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:ultravox.py"),
        "audio_tower.layers.0.self_attn.out_proj": ("RowParallelLinear", "vllm:ultravox.py"),
        "audio_tower.layers.0.mlp.fc1": ("ColumnParallelLinear", "vllm:ultravox.py"),
        "audio_tower.layers.0.mlp.fc2": ("RowParallelLinear", "vllm:ultravox.py"),
        "multi_modal_projector.linear_1": ("ReplicatedLinear", "vllm:ultravox.py"),
        "multi_modal_projector.linear_2": ("ReplicatedLinear", "vllm:ultravox.py")}
    assert by_name["language_model.model.layers.0.self_attn.qkv_proj"] == ("QKVParallelLinear", "vllm:llama.py")
    assert all(layer.scheme == "CompressedTensorsW8A8Fp8" for layer in rep.layers
               if layer.name != "language_model.lm_head")
    assert [a.name for a in rep.attention] == [f"language_model.model.layers.{i}.self_attn.attn" for i in (0, 1)]


def test_glm_asr_encoder_and_projector_are_quantized_parallel_linears(make_checkpoint):
    """glmasr.py: GlmAsrEncoder's q / k / v fused over audio_config's num_attention_heads, o_proj row, mlp.fc1 / fc2
    column / row, the projector's linear_1 / linear_2 column / row, all with the quant config; the text model built as
    LlamaForCausalLM; embed_positions (when stored) dropped by the mapper."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **GLM_ASR_SPEC), tp=2)
    assert rep.ok, list(rep.errors) + [e for layer in rep.layers for e in layer.errors]
    towers = {layer.name: (layer.layer_type, layer.layout, layer.scheme) for layer in rep.layers
              if not layer.name.startswith("language_model.")}
    fp8 = "CompressedTensorsW8A8Fp8"
    assert towers == {
        "audio_tower.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:glmasr.py", fp8),
        "audio_tower.layers.0.self_attn.o_proj": ("RowParallelLinear", "vllm:glmasr.py", fp8),
        "audio_tower.layers.0.mlp.fc1": ("ColumnParallelLinear", "vllm:glmasr.py", fp8),
        "audio_tower.layers.0.mlp.fc2": ("RowParallelLinear", "vllm:glmasr.py", fp8),
        "multi_modal_projector.linear_1": ("ColumnParallelLinear", "vllm:glmasr.py", fp8),
        "multi_modal_projector.linear_2": ("RowParallelLinear", "vllm:glmasr.py", fp8)}
    qkv = next(layer for layer in rep.layers if layer.name == "audio_tower.layers.0.self_attn.qkv_proj")
    assert qkv.shards == tuple(f"audio_tower.layers.0.self_attn.{x}_proj" for x in "qkv")
    assert {layer.layout for layer in rep.layers if layer.name.startswith("language_model.")} == {"vllm:glmasr.py"}
    assert [a.name for a in rep.attention] == ["language_model.model.layers.0.self_attn.attn"]


def test_audio_flamingo_3_towers_are_torch_linears_over_qwen2(make_checkpoint):
    """audioflamingo3.py: transformers' Qwen2AudioEncoder and an nn.Linear projector (no quant method: an FP8 one is an
    error), the text model built as Qwen2ForCausalLM."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **AUDIO_FLAMINGO_3_SPEC))
    assert rep.ok, list(rep.errors) + [e for layer in rep.layers for e in layer.errors]
    towers = [layer for layer in rep.layers if not layer.name.startswith("language_model.")]
    assert {(layer.layer_type, layer.layout, layer.scheme) for layer in towers} == {
        ("nn.Linear", "vllm:audioflamingo3.py", "UnquantizedLinearMethod")}
    assert len(towers) == 8  # q, k, v, out_proj, fc1, fc2 and the projector's two
    assert {layer.layout for layer in rep.layers if layer.name.startswith("language_model.")} == {
        "vllm:audioflamingo3.py"}
    fp8 = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(
        AUDIO_FLAMINGO_3_SPEC, ignore=("language_model.lm_head",))))
    assert {layer.name for layer in fp8.layers if not layer.ok} == {layer.name for layer in towers}


@pytest.mark.parametrize("arch", ["GraniteSpeechForConditionalGeneration", "GraniteSpeechPlusForConditionalGeneration"])
def test_granite_speech_conformer_is_unquantized_and_ctc_heads_quantized(make_checkpoint, arch):
    """granite_speech.py: the conformer blocks take no quant config (ff up / down column / row, attention torch
    nn.Linears), input_linear and the Q-Former projector are torch nn.Linears, the CTC out / out_mid column / row
    with the quant config; rel_pos_emb is an embedding. An FP8 conformer layer is an error."""
    spec = dict(GRANITE_SPEECH_SPEC, architecture=arch)
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **spec))
    assert rep.ok, list(rep.errors) + [e for layer in rep.layers for e in layer.errors]
    by_name = {layer.name: (layer.layer_type, layer.scheme) for layer in rep.layers}
    block, unquantized = "encoder.layers.0", "UnquantizedLinearMethod"
    assert {name: by_name[name] for name in (f"{block}.ff1.up_proj", f"{block}.ff2.down_proj", f"{block}.attn.to_kv",
                                             "encoder.input_linear", "encoder.out", "encoder.out_mid",
                                             "projector.linear")} == {
        f"{block}.ff1.up_proj": ("ColumnParallelLinear", unquantized),
        f"{block}.ff2.down_proj": ("RowParallelLinear", unquantized),
        f"{block}.attn.to_kv": ("nn.Linear", unquantized), "encoder.input_linear": ("nn.Linear", unquantized),
        "encoder.out": ("ColumnParallelLinear", "CompressedTensorsW8A8Fp8"),
        "encoder.out_mid": ("RowParallelLinear", "CompressedTensorsW8A8Fp8"),
        "projector.linear": ("nn.Linear", unquantized)}
    assert not any(name.endswith("rel_pos_emb") for name in by_name)
    assert {by_name[name] for name in by_name if name.startswith("projector.")} == {("nn.Linear", unquantized)}
    fp8 = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(
        spec, ignore=("language_model.lm_head", "encoder.input_linear", r"re:projector\..*"))))
    assert {layer.name for layer in fp8.layers if not layer.ok} == {
        name for name in by_name if name.startswith("encoder.layers.")}


@pytest.mark.parametrize("arch", ["Qwen3ASRForConditionalGeneration", "Qwen3ASRRealtimeGeneration"])
def test_qwen3_asr_audio_encoder_is_unquantized_over_qwen3(make_checkpoint, arch):
    """qwen3_asr.py (and its realtime subclass): Qwen3-Omni's audio encoder without a quant config (q / k / v fused,
    out_proj / fc1 / fc2 row / column / row, conv_out / proj1 / proj2 replicated), the text model Qwen3ForCausalLM
    under the mapper's language_model. names; an FP8 encoder layer is an error."""
    spec = dict(QWEN3_ASR_SPEC, architecture=arch)
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **spec), tp=2)
    assert rep.ok, list(rep.errors) + [e for layer in rep.layers for e in layer.errors]
    tower = {layer.name.removeprefix("thinker.audio_tower."): (layer.layer_type, layer.scheme) for layer in rep.layers
             if layer.name.startswith("thinker.audio_tower.")}
    unquantized = "UnquantizedLinearMethod"
    assert tower == {"layers.0.self_attn.qkv_proj": ("QKVParallelLinear", unquantized),
                     "layers.0.self_attn.out_proj": ("RowParallelLinear", unquantized),
                     "layers.0.fc1": ("ColumnParallelLinear", unquantized),
                     "layers.0.fc2": ("RowParallelLinear", unquantized),
                     **{leaf: ("ReplicatedLinear", unquantized) for leaf in ("conv_out", "proj1", "proj2")}}
    assert {layer.layout for layer in rep.layers if layer.name.startswith("thinker.model.")} == {"vllm:qwen3_asr.py"}
    assert [a.name for a in rep.attention] == [f"thinker.model.layers.{i}.self_attn.attn" for i in (0, 1)]
    fp8 = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(spec, ignore=("thinker.lm_head",))), tp=2)
    assert {layer.name for layer in fp8.layers if not layer.ok} == {f"thinker.audio_tower.{leaf}" for leaf in tower}


def test_midashenglm_encoder_qkv_is_stored_fused_and_quantized(make_checkpoint):
    """midashenglm.py: the Dasheng encoder's attn.qkv a QKVParallelLinear over audio_encoder_config's num_heads
    (stored fused, no packed entry), attn.proj row, mlp fc1 / fc2 column / row, the projector's net.0 / net.2 column /
    row, all with the quant config; the text model built as Qwen2ForCausalLM under decoder."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **MIDASHENGLM_SPEC), tp=2)
    assert rep.ok, list(rep.errors) + [e for layer in rep.layers for e in layer.errors]
    by_name = {layer.name: layer for layer in rep.layers}
    assert {name: (layer.layer_type, layer.scheme) for name, layer in by_name.items()
            if not name.startswith("decoder.")} == {
        f"{_DASHENG_BLOCK}.attn.qkv": ("QKVParallelLinear", "CompressedTensorsW8A8Fp8"),
        f"{_DASHENG_BLOCK}.attn.proj": ("RowParallelLinear", "CompressedTensorsW8A8Fp8"),
        f"{_DASHENG_BLOCK}.mlp.fc1": ("ColumnParallelLinear", "CompressedTensorsW8A8Fp8"),
        f"{_DASHENG_BLOCK}.mlp.fc2": ("RowParallelLinear", "CompressedTensorsW8A8Fp8"),
        "audio_projector.net.0": ("ColumnParallelLinear", "CompressedTensorsW8A8Fp8"),
        "audio_projector.net.2": ("RowParallelLinear", "CompressedTensorsW8A8Fp8")}
    assert {layer.layout for name, layer in by_name.items() if name.startswith("decoder.")} == {"vllm:midashenglm.py"}
    assert [a.name for a in rep.attention] == ["decoder.model.layers.0.self_attn.attn"]


def test_fun_audio_chat_towers_are_unquantized(make_checkpoint):
    """funaudiochat.py: the continuous encoder's attention a QKVParallelLinear / RowParallelLinear without a quant
    config, its fc1 / fc2 / proj and the discrete encoder's matching linears torch nn.Linears, audio_bos_eos_token an
    embedding; the text model built as Qwen3ForCausalLM. An FP8 tower layer is an error; the quant config has no
    packed mapping (neither class declares one for it)."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **FUN_AUDIO_CHAT_SPEC), tp=2)
    assert rep.ok, list(rep.errors) + [e for layer in rep.layers for e in layer.errors]
    towers = {layer.name: (layer.layer_type, layer.scheme) for layer in rep.layers
              if not layer.name.startswith("language_model.")}
    unquantized = "UnquantizedLinearMethod"
    assert towers == {f"{_FUN_ENCODER}.self_attn.qkv_proj": ("QKVParallelLinear", unquantized),
                      f"{_FUN_ENCODER}.self_attn.out_proj": ("RowParallelLinear", unquantized),
                      f"{_FUN_ENCODER}.fc1": ("nn.Linear", unquantized),
                      f"{_FUN_ENCODER}.fc2": ("nn.Linear", unquantized),
                      "continuous_audio_tower.proj": ("nn.Linear", unquantized),
                      "audio_tower.output_matching": ("nn.Linear", unquantized),
                      "audio_tower.continual_output_matching": ("nn.Linear", unquantized)}
    assert {layer.layout for layer in rep.layers if layer.name.startswith("language_model.")} == {
        "vllm:funaudiochat.py"}
    fp8 = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(
        FUN_AUDIO_CHAT_SPEC, ignore=("language_model.lm_head",))), tp=2)
    assert {layer.name for layer in fp8.layers if not layer.ok} == set(towers)
    # no packed mapping reaches the quant config: a list naming q / k / v leaves qkv_proj quantized over BF16 weights
    attn = "language_model.model.layers.0.self_attn"
    listed = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(
        FUN_AUDIO_CHAT_SPEC, ignore=(*FUN_AUDIO_CHAT_SPEC["ignore"], *(f"{attn}.{x}_proj" for x in "qkv")))), tp=2)
    assert [layer.name for layer in listed.layers if not layer.ok] == [f"{attn}.qkv_proj"]
# ninth round (fam-mma): (id, spec, TP, expected layers) as FAMILIES', run through test_family_layout's checks and
# counted by test_every_table_entry_has_a_family_test.
# MiniCPM-V (remote-code config minicpmv, the text keys flat; 2.6: Qwen2 under llm., the Idefics2 tower vpm. and the
# resampler, both with the quant config; its attn.out_proj, a torch nn.Linear, stored BF16 and listed).
def minicpmv_spec(version="2.6", drop_last=True, **text):
    config = dict(architectures=["MiniCPMV"], model_type="minicpmv", version=float(version), query_num=64,
                  drop_vision_last_layer=drop_last, hidden_size=512, intermediate_size=1024, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, vocab_size=1000, max_position_embeddings=512,
                  rms_norm_eps=1e-6, tie_word_embeddings=False, vision_config={
                      "model_type": "siglip", "hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 2,
                      "num_attention_heads": 2, "image_size": 448, "patch_size": 14}, **text)
    return dict(architecture="MiniCPMV", model_type="minicpmv", hidden=512, intermediate=1024, heads=4, kv_heads=2,
                text_prefix="llm.model", head="llm.lm_head", sizes_in_text_config=True, extra_config=config,
                extra_tensors=minicpmv_vision_tensors(config), ignore=("llm.lm_head", "resampler.attn.out_proj"))


# MiniCPM-o: the same plus the Whisper audio tower apm. and its projection (torch nn.Linears, stored BF16) and the
# speech generator's tts.* tensors, which the model's mapper drops.
def minicpmo_spec(version="2.6"):
    spec = minicpmv_spec(version, drop_last=False)
    config = dict(spec["extra_config"], architectures=["MiniCPMO"], model_type="minicpmo", audio_pool_step=2,
                  audio_config={"d_model": 256, "encoder_attention_heads": 4, "encoder_ffn_dim": 1024,
                                "encoder_layers": 1, "num_mel_bins": 80, "max_source_positions": 1500})
    tts = {"tts.projector.linear1.weight": (256, 512)}
    return dict(spec, architecture="MiniCPMO", model_type="minicpmo", extra_config=config,
                extra_tensors={**spec["extra_tensors"], **minicpmo_audio_tensors(config), **tts},
                ignore=(*spec["ignore"], r"re:^(apm|audio_projection_layer|tts)\."))


# MiniCPM-V 4.6 / 4.7 / MiniCPM-OCR (transformers' classes and names): Qwen3.5's text model under model.language_model,
# the Idefics2 tower, its window-attention vit_merger (q / k / v fused) and the downsampling MLPs (torch nn.Linears,
# stored BF16).
def minicpmv46_spec(arch="MiniCPMV4_6ForConditionalGeneration", model_type="minicpmv4_6", **keys):
    text = dict(GDN, model_type="qwen3_5_text", hidden_size=512, intermediate_size=1024, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, head_dim=128, vocab_size=1000)
    return dict(architecture=arch, model_type=model_type, **dict(HF, ignore=(
        "lm_head", "re:.*in_proj_(b|a)$", r"re:.*vit_merger\.linear_", r"re:^model\.merger\.")), extra_config=dict(
        text_config=text, vision_config={"hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 2,
                                         "num_attention_heads": 2, "image_size": 448, "patch_size": 14,
                                         "insert_layer_id": 0}, **keys))


_MINICPMV46_LAYERS = {
    "model.vision_tower.encoder.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:idefics2_vision_model.py"),
    "model.vision_tower.vit_merger.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:minicpmv4_6.py"),
    "model.vision_tower.vit_merger.self_attn.out_proj": ("RowParallelLinear", "vllm:minicpmv4_6.py"),
    "model.vision_tower.vit_merger.linear_1": ("nn.Linear", "vllm:minicpmv4_6.py"),
    "model.merger.mlp.0.linear_2": ("nn.Linear", "vllm:minicpmv4_6.py")}
# Ovis2.5 (remote-code config ovis2_5: llm_config, vit_config): Qwen3 under llm., the SigLIP-2 NaViT tower quantized,
# the visual tokenizer's head.0 (built without quant config) and the vte table stored BF16.
def ovis2_5_spec(arch="Ovis2_5", num_patches=-1):
    config = {"llm_config": dict(_LLAVA_TEXT, model_type="qwen3", architectures=["Qwen3ForCausalLM"]),
              "vit_config": {"model_type": "siglip2_navit", "hidden_size": 256, "intermediate_size": 1024,
                             "num_hidden_layers": 2, "num_attention_heads": 2, "patch_size": 16, "image_size": 512,
                             "num_patches": num_patches, "hidden_stride": 2, "temporal_patch_size": 1},
              "visual_vocab_size": 4096, "hidden_size": _LLAVA_TEXT["hidden_size"]}
    return dict(architecture=arch, model_type="ovis2_5", hidden=_LLAVA_TEXT["hidden_size"],
                intermediate=_LLAVA_TEXT["intermediate_size"], heads=_LLAVA_TEXT["num_attention_heads"],
                kv_heads=_LLAVA_TEXT["num_key_value_heads"], head_dim=_LLAVA_TEXT.get("head_dim"),
                vocab=_LLAVA_TEXT["vocab_size"], layers=_LLAVA_TEXT["num_hidden_layers"], text_prefix="llm.model",
                head="llm.lm_head", sizes_in_text_config=True, extra_config=config,
                extra_tensors=ovis2_5_vision_tensors(config),
                ignore=("llm.lm_head", "vte", r"re:^visual_tokenizer\.head\.", r"re:.*patch_embedding$"))


# Ovis2 (vLLM's OvisConfig: llm_config, visual_tokenizer_config.backbone_config): Qwen2 under llm., the AIMv2 backbone
# quantized (attn.qkv stored fused, fc1 / fc3 -> fc13), the head and vte stored BF16.
def ovis2_spec():
    config = {"llm_config": dict(_LLAVA_TEXT, model_type="qwen2", architectures=["Qwen2ForCausalLM"]),
              "hidden_size": _LLAVA_TEXT["hidden_size"], "visual_tokenizer_config": {
                  "model_type": "aimv2_visual_tokenizer", "vocab_size": 4096, "hidden_stride": 2,
                  "backbone_config": {"model_type": "aimv2", "hidden_size": 256, "intermediate_size": 1024,
                                      "num_attention_heads": 2, "num_hidden_layers": 2, "patch_size": 14,
                                      "image_size": 448}}}
    return dict(ovis2_5_spec(), architecture="Ovis", model_type="ovis", extra_config=config,
                extra_tensors=ovis_aimv2_tensors(config),
                ignore=("llm.lm_head", "vte", r"re:^visual_tokenizer\.head\."))


# Phi-4-multimodal (remote-code config phi4mm; written wholly by hand): LoRA-wrapped text linears (`<linear>.base_layer`
# quantized, the adapters BF16), the fixed SigLIP NaViT image encoder and the conformer audio encoder (no quant config,
# stored BF16).
PHI4MM_AUDIO = {"attention_dim": 256, "attention_heads": 4, "linear_units": 512, "input_size": 80, "time_reduction": 8,
                "num_blocks": 1, "nemo_conv_settings": {"conv_channels": 256}}


def phi4mm_spec(**keys):
    config = dict(_LLAVA_TEXT, model_type="phi4mm", num_key_value_heads=2, tie_word_embeddings=True,
                  audio_processor={"name": "cascades", "config": PHI4MM_AUDIO}, **keys)
    return dict(architecture="Phi4MMForCausalLM", model_type="phi4mm", hidden=256, heads=2, kv_heads=2, layers=0,
                vocab=1000, tie_embeddings=True, extra_config=config, extra_tensors=phi4mm_tensors(config),
                ignore=(r"re:.*\.lora_[AB]\.", r"re:^model\.embed_tokens_extend\."))


# Phi-4 vision (Phi4ForCausalLMV: a Phi-3 config with a vision_config): Phi-3's stored-fused text model, the SigLIP-2
# tower built up to layer -2 (its last layer and pooling head dropped) and the projector, quantized; the linear patch
# embedding (no quant config) stored BF16.
def phi4v_spec():
    config = {"vision_config": {"hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 3,
                                "num_attention_heads": 2, "patch_size": 16, "num_patches": 256},
              "mm_hidden_size": 256}
    return dict(architecture="Phi4ForCausalLMV", model_type="phi3", fused_on_disk=True, hidden=256, heads=2,
                kv_heads=2, head_dim=128, extra_config=config,
                extra_tensors=phi4v_vision_tensors({**config, "hidden_size": 256}),
                ignore=("lm_head", r"re:.*patch_embedding$"))


MMA_FAMILIES = [
    ("minicpm-v-2.6", minicpmv_spec(sliding_window=131072, use_sliding_window=False), 2, {
        "llm.model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:minicpmv.py"),
        "llm.model.layers.1.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:minicpmv.py"),
        "vpm.encoder.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:idefics2_vision_model.py"),
        "vpm.encoder.layers.0.self_attn.out_proj": ("RowParallelLinear", "vllm:idefics2_vision_model.py"),
        "vpm.encoder.layers.0.mlp.fc1": ("ColumnParallelLinear", "vllm:idefics2_vision_model.py"),
        "resampler.kv_proj": ("ReplicatedLinear", "vllm:minicpmv.py"),
        "resampler.attn.out_proj": ("nn.Linear", "vllm:minicpmv.py")}),
    ("minicpm-o-4.5", minicpmo_spec("4.5"), 2, {
        "llm.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:minicpmo.py"),
        "vpm.encoder.layers.1.mlp.fc2": ("RowParallelLinear", "vllm:idefics2_vision_model.py"),
        "resampler.kv_proj": ("ReplicatedLinear", "vllm:minicpmv.py"),
        "apm.layers.0.self_attn.q_proj": ("nn.Linear", "vllm:minicpmo.py"),
        "apm.layers.0.fc1": ("nn.Linear", "vllm:minicpmo.py"),
        "audio_projection_layer.linear2": ("nn.Linear", "vllm:minicpmo.py")}),
    *((family, minicpmv46_spec(arch, model_type), 2, {
        **_MINICPMV46_LAYERS,
        "model.language_model.layers.0.linear_attn.in_proj_qkvz": ("MergedColumnParallelLinear", f"vllm:{file}"),
        "model.language_model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", f"vllm:{file}")})
      for family, arch, model_type, file in (
          ("minicpm-v-4.6", "MiniCPMV4_6ForConditionalGeneration", "minicpmv4_6", "minicpmv4_6.py"),
          ("minicpm-v-4.7", "MiniCPMV4_7ForConditionalGeneration", "minicpmv4_7", "minicpmv4_7.py"),
          ("minicpm-ocr", "MiniCPMOcrForConditionalGeneration", "minicpm_ocr", "minicpm_ocr.py"))),
    *((family, ovis2_5_spec(arch), 2, {
        "llm.model.layers.1.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen3.py"),
        "visual_tokenizer.vit.vision_model.encoder.layers.0.self_attn.qkv_proj": ("QKVParallelLinear",
                                                                                  "vllm:siglip2navit.py"),
        "visual_tokenizer.vit.vision_model.encoder.layers.1.mlp.fc2": ("RowParallelLinear", "vllm:siglip2navit.py"),
        "visual_tokenizer.head.0": ("ReplicatedLinear", "vllm:ovis2_5.py")})
      for family, arch in (("ovis2.5", "Ovis2_5"), ("ovis2.6", "Ovis2_6ForCausalLM"),
                           ("ovis2.6-moe", "Ovis2_6_MoeForCausalLM"))),
    ("ovis2", ovis2_spec(), 2, {
        "llm.model.layers.0.mlp.gate_up_proj": ("MergedColumnParallelLinear", "vllm:qwen2.py"),
        "visual_tokenizer.backbone.trunk.blocks.1.attn.qkv": ("QKVParallelLinear", "vllm:aimv2.py"),
        "visual_tokenizer.backbone.trunk.blocks.1.attn.proj": ("RowParallelLinear", "vllm:aimv2.py"),
        "visual_tokenizer.backbone.trunk.blocks.0.mlp.fc13": ("MergedColumnParallelLinear", "vllm:aimv2.py"),
        "visual_tokenizer.backbone.trunk.blocks.0.mlp.fc2": ("RowParallelLinear", "vllm:aimv2.py"),
        "visual_tokenizer.head.0": ("ReplicatedLinear", "vllm:ovis.py")}),
    ("phi-4-multimodal", phi4mm_spec(), 2, {
        "model.layers.1.self_attn.qkv_proj.base_layer": ("QKVParallelLinear", "vllm:phi4mm.py"),
        "model.layers.1.self_attn.o_proj.base_layer": ("RowParallelLinear", "vllm:phi4mm.py"),
        "model.layers.1.mlp.gate_up_proj.base_layer": ("MergedColumnParallelLinear", "vllm:phi4mm.py"),
        "model.embed_tokens_extend.image_embed.img_processor.encoder.layers.25.self_attn.qkv_proj": (
            "QKVParallelLinear", "vllm:idefics2_vision_model.py"),
        "model.embed_tokens_extend.image_embed.img_projection.2": ("nn.Linear", "vllm:phi4mm.py"),
        "model.embed_tokens_extend.audio_embed.encoder.encoders.0.self_attn.linear_q": ("nn.Linear",
                                                                                       "vllm:phi4mm_audio.py"),
        "model.embed_tokens_extend.audio_embed.audio_projection.vision.0": ("nn.Linear", "vllm:phi4mm_audio.py")}),
    ("phi-4-vision", phi4v_spec(), 2, {
        "model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:phi4siglip.py"),
        "model.vision_tower.vision_tower.vision_model.encoder.layers.1.self_attn.qkv_proj": ("QKVParallelLinear",
                                                                                             "vllm:lfm2_siglip2.py"),
        "model.vision_tower.vision_tower.vision_model.embeddings.patch_embedding": ("ReplicatedLinear",
                                                                                   "vllm:lfm2_siglip2.py"),
        "model.mm_projector.0": ("ColumnParallelLinear", "vllm:phi4siglip.py"),
        "model.mm_projector.2": ("RowParallelLinear", "vllm:phi4siglip.py")}),
]
FAMILIES.extend(MMA_FAMILIES)


@pytest.mark.parametrize("spec,tp,expected", [f[1:] for f in MMA_FAMILIES], ids=[f[0] for f in MMA_FAMILIES])
def test_mma_family_layout(make_checkpoint, spec, tp, expected):
    test_family_layout(make_checkpoint, spec, tp, expected)


def test_minicpmv_drops_the_last_vision_layer_and_builds_the_resampler_in_float16(make_checkpoint):
    # drop_vision_last_layer (the remote class's default true): vpm's layer 1 is never built, its tensors dropped by
    # the tower's loader; the resampler is built under float16 as the default dtype, so its FP8 kv_proj's kernel is
    # chosen for a float16 output (no DeepGEMM), where the bfloat16 text model's is not. 2.6's window keys are
    # Qwen2Config's (the remote class's base): off, every layer full attention.
    rep = inspect(make_checkpoint(**{"data": "sparse", **minicpmv_spec(sliding_window=131072,
                                                                        use_sliding_window=False)}), tp=2)
    assert rep.ok, list(rep.errors)
    assert [a.kind for a in rep.attention] == ["full"] * 2
    by_name = {layer.name: layer for layer in rep.layers}
    assert [s.prefix for s in rep.skipped] == ["vpm.encoder.layers.1."]
    assert "vpm.encoder.layers.1.self_attn.qkv_proj" not in by_name
    assert by_name["resampler.kv_proj"].kernel != by_name["llm.model.layers.0.mlp.down_proj"].kernel
    assert "DeepGEMM" in by_name["llm.model.layers.0.mlp.down_proj"].kernel
    assert "DeepGEMM" not in by_name["resampler.kv_proj"].kernel
    assert by_name["resampler.attn.out_proj"].scheme == "UnquantizedLinearMethod"
    # without it every vision layer is built
    kept = inspect(make_checkpoint(**{"data": "sparse", **minicpmv_spec(drop_last=False)}), tp=2)
    assert not kept.skipped and "vpm.encoder.layers.1.mlp.fc2" in {layer.name for layer in kept.layers}


def test_minicpmo_drops_the_speech_generator(make_checkpoint):
    # minicpmo.py's hf_to_vllm_mapper maps every name starting "tts" to None; the Whisper embed_positions is an
    # nn.Embedding, no linear
    rep = inspect(make_checkpoint(**{"data": "sparse", **minicpmo_spec()}), tp=2)
    assert rep.ok, list(rep.errors)
    assert [s.prefix for s in rep.skipped] == ["tts"] and "hf_to_vllm_mapper drops 'tts...'" in rep.skipped[0].reason
    assert not any(layer.name.startswith(("tts", "apm.embed_positions")) for layer in rep.layers)


def test_minicpmv46_drops_its_last_vision_layer_only_where_the_config_says(make_checkpoint):
    # MiniCPMV4_6Config.drop_vision_last_layer (false by default): vpm's last layer is never built and the tower's
    # loader drops its tensors; 4.7 and OCR never drop it (their config classes have no such key)
    dropped = inspect(make_checkpoint(**{"data": "sparse", **minicpmv46_spec(drop_vision_last_layer=True)}), tp=2)
    assert dropped.ok, list(dropped.errors)
    assert [s.prefix for s in dropped.skipped] == ["model.vision_tower.encoder.layers.1."]
    for spec in (minicpmv46_spec(), minicpmv46_spec("MiniCPMV4_7ForConditionalGeneration", "minicpmv4_7",
                                                    drop_vision_last_layer=True)):
        kept = inspect(make_checkpoint(**{"data": "sparse", **spec}), tp=2)
        assert not kept.skipped and "model.vision_tower.encoder.layers.1.mlp.fc1" in {l.name for l in kept.layers}


def test_ovis2_5_keeps_the_visual_tokenizer_head_and_table_unquantized(make_checkpoint):
    # head.0 is a ReplicatedLinear built without quant config; vte an nn.Embedding (no linear); a naflex patch
    # embedding (vit_config.num_patches > 0) a table-named ReplicatedLinear without quant config
    for num_patches in (-1, 1024):
        rep = inspect(make_checkpoint(**{"data": "sparse", **ovis2_5_spec(num_patches=num_patches)}), tp=2)
        assert rep.ok, list(rep.errors)
        by_name = {layer.name: layer for layer in rep.layers}
        assert by_name["visual_tokenizer.head.0"].scheme == "UnquantizedLinearMethod"
        assert any("vLLM builds this tower with quant_config=None" in note
                   for note in by_name["visual_tokenizer.head.0"].notes), by_name["visual_tokenizer.head.0"].notes
        assert "vte" not in by_name
        patch = by_name.get("visual_tokenizer.vit.vision_model.embeddings.patch_embedding")
        assert (patch is None) if num_patches < 0 else (
            patch.layer_type == "ReplicatedLinear" and patch.scheme == "UnquantizedLinearMethod")


def test_phi4mm_reads_the_lora_wrapped_linears_under_vllm_names(make_checkpoint):
    # the mapper removes "base_layer." and drops the adapters: vLLM's module is `<linear>`, its attention found there;
    # gate_up_proj splits in two halves, the image encoder's layer 26 (past layer_idx -2) is dropped, its heads fixed
    folder = make_checkpoint(**{"data": "sparse", **phi4mm_spec()})
    rep = inspect(folder, tp=2)
    assert rep.ok, list(rep.errors)
    assert sorted(s.prefix for s in rep.skipped) == ["img_processor.encoder.layers.26.", "lora"]
    assert [a.name for a in rep.attention] == [f"model.layers.{i}.self_attn.attn" for i in range(2)]
    assert not any(".lora_" in layer.name for layer in rep.layers)
    checkpoint = open_local(folder)
    modules = {m.name: m for m in build_layout(checkpoint.tensors, checkpoint.config, LATEST).linears}
    gate_up = modules["model.layers.0.mlp.gate_up_proj.base_layer"]
    assert gate_up.output_sizes == (512, 512) and gate_up.vllm_names[0] == "model.layers.0.mlp.gate_up_proj"
    qkv = modules["model.embed_tokens_extend.image_embed.img_processor.encoder.layers.0.self_attn.qkv_proj"]
    assert qkv.heads == (16, 16, 72) and qkv.vllm_names[0].startswith("vision_encoder.img_processor.")


def test_phi4v_builds_its_tower_up_to_the_next_to_last_layer(make_checkpoint):
    # phi4siglip.py: num_hidden_layers_override at layer -2, whatever the config says; the pooling head dropped
    rep = inspect(make_checkpoint(**{"data": "sparse", **phi4v_spec()}), tp=2)
    assert rep.ok, list(rep.errors)
    tower = "model.vision_tower.vision_tower.vision_model"
    assert [s.prefix for s in rep.skipped] == [f"{tower}.encoder.layers.2.", "vision_model.head."]
    assert "[-2] of 3" in rep.skipped[0].reason
    assert f"{tower}.encoder.layers.2.mlp.fc1" not in {layer.name for layer in rep.layers}


@pytest.mark.parametrize("arch,version,error", [
    ("MiniCPMV", 3.0, "Currently, MiniCPMV only supports versions 2.0, 2.5, 2.6, 4.0, 4.5. Got version: (3, 0)"),
    ("MiniCPMV", "4.5.1", "Currently, MiniCPMV only supports versions 2.0, 2.5, 2.6, 4.0, 4.5. Got version: (4, 5, 1)"),
    ("MiniCPMV", "4.x", "invalid literal for int() with base 10: 'x'"),
    ("MiniCPMO", 4.0, "Currently, MiniCPMO only supports versions 2.6, 4.5. Got version: (4, 0)"),
    ("MiniCPMO", "4.x", "Invalid model version format in config: 4.x. Expected a dot-separated version string like "
                        "'4.5'."),
    ("MiniCPMO", "4.5.1", None),  # MiniCPMO reads the first two parts only
])
def test_minicpm_refuses_a_version_it_builds_no_class_for(make_checkpoint, arch, version, error):
    spec = minicpmv_spec(drop_last=False) if arch == "MiniCPMV" else minicpmo_spec()
    spec = dict(spec, extra_config=dict(spec["extra_config"], version=version))
    rep = inspect(make_checkpoint(**{"data": "sparse", **spec}), tp=2)
    assert [e for e in rep.errors if "version" in e or "int()" in e] == ([error] if error else [])


@pytest.mark.parametrize("version", [2.0, None])
def test_minicpmv_2_0_is_not_laid_out(make_checkpoint, version):
    """minicpmv.py get_version_by_config: version 2.0, or none with hidden_size 2304 and query_num 64, builds
    MiniCPMV2_0 (timm's tower, MiniCPM's text model), which fp8check does not lay out: every module not judged."""
    from fp8check.core.report.verdicts import not_judged, not_judged_reason

    spec = minicpmv_spec(drop_last=False)
    config = {k: v for k, v in spec["extra_config"].items() if k != "version" or version is not None}
    if version is not None:
        config["version"] = version
    else:
        config["hidden_size"] = 2304
    spec = dict(spec, hidden=config["hidden_size"], extra_config=config)
    rep = inspect(make_checkpoint(**{"data": "sparse", **spec}), tp=1)
    assert rep.layers and not_judged(rep) == list(rep.layers + rep.moes)
    assert not_judged_reason(rep.layers[0], rep).startswith("laid out by guess: MiniCPM-V 2.0 is MiniCPMV2_0")
    # 2.6 stays laid out
    rep = inspect(make_checkpoint(**{"data": "sparse", **minicpmv_spec(drop_last=False)}), tp=1)
    assert not not_judged(rep)
# ninth round (fam-tfmm)
# Aya Vision (no release registers it): the Transformers backend's TransformersMultiModalForCausalLM, laid out from the
# generated MultiModal of AyaVisionForConditionalGeneration (transformers' class writes the checkpoint: legacy names
# vision_tower.vision_model. / multi_modal_projector. / language_model.model.). SigLIP without its pooling head,
# Cohere-2.
AYA_VISION = dict(TF, architecture="AyaVisionForConditionalGeneration", model_type="aya_vision", layers=2,
                  ignore=("language_model.lm_head",),
                  extra_config=dict(TF["extra_config"], image_token_index=900, downsample_factor=2,
                                    text_config=dict(_LLAVA_TEXT, model_type="cohere2"), vision_config=LLAVA_SIGLIP))


@pytest.mark.parametrize("vllm", ["0.33", "0.34"])
def test_an_unregistered_multimodal_transformers_class_is_laid_out_from_its_generated_build(make_checkpoint, vllm):
    # The tower's q / k / v fused by the QKVFuser over its own 64-wide heads (the tower's attention is no vLLM Attention),
    # its output rowwise; every other tower and projector nn.Linear a ReplicatedLinear with the quant config; the text
    # model as its tp_plan says, one Attention per decoder layer.
    folder = make_checkpoint(**AYA_VISION)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm), tp=1))
    assert rep.ok, list(rep.errors)
    by_name = {layer.name: layer for layer in rep.layers}
    tower = "vision_tower.vision_model.encoder.layers.0"
    assert {name: (by_name[name].layer_type, by_name[name].layout) for name in (
        f"{tower}.self_attn.qkv_proj", f"{tower}.self_attn.out_proj", f"{tower}.mlp.fc1", f"{tower}.mlp.fc2",
        "multi_modal_projector.linear_1", "multi_modal_projector.linear_2")} == {
        f"{tower}.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:transformers/multimodal.py"),
        f"{tower}.self_attn.out_proj": ("RowParallelLinear", "vllm:transformers/multimodal.py"),
        f"{tower}.mlp.fc1": ("ReplicatedLinear", "vllm:transformers/multimodal.py"),
        f"{tower}.mlp.fc2": ("ReplicatedLinear", "vllm:transformers/multimodal.py"),
        "multi_modal_projector.linear_1": ("ReplicatedLinear", "vllm:transformers/multimodal.py"),
        "multi_modal_projector.linear_2": ("ReplicatedLinear", "vllm:transformers/multimodal.py")}
    assert all(layer.scheme != "UnquantizedLinearMethod" for layer in rep.layers
               if layer.name.startswith(("vision_tower.", "multi_modal_projector.")))
    text = "language_model.model.layers.1"
    assert {leaf: by_name[f"{text}.{leaf}"].layer_type for leaf in ("self_attn.qkv_proj", "self_attn.o_proj",
                                                                     "mlp.gate_up_proj", "mlp.down_proj")} == {
        "self_attn.qkv_proj": "QKVParallelLinear", "self_attn.o_proj": "RowParallelLinear",
        "mlp.gate_up_proj": "MergedColumnParallelLinear", "mlp.down_proj": "RowParallelLinear"}
    # one Attention per text decoder layer (checkpoint names), none in the tower
    assert [a.name for a in rep.attention] == [f"{text[:-2]}.{i}.self_attn.attn" for i in range(2)]
    verdict = inspect_verdict(rep)
    assert "not judged" not in verdict and "guess" not in verdict


def test_a_multimodal_backend_ignore_regex_over_legacy_names_misses_the_renamed_tower(make_checkpoint):
    # The quant config's lists pass through the backend's hf_to_vllm_mapper, which leaves "re:vision_tower.*" as it is
    # and renames the tower's modules model.vision_tower.*: the regex matches none, so vLLM makes FP8 layers of the
    # BF16 tower and projector (compressed-tensors), each an error here.
    folder = make_checkpoint(**dict(AYA_VISION, quant="ct-fp8-block", ignore=(
        "language_model.lm_head", "re:vision_tower.*", "re:multi_modal_projector.*")))
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile("0.34"), tp=1))
    tower = [layer for layer in rep.layers if layer.name.startswith(("vision_tower.", "multi_modal_projector."))]
    assert tower and all(layer.scheme == "CompressedTensorsW8A8Fp8" and layer.errors for layer in tower)
    assert all("BF16" in layer.errors[0] for layer in tower)
# ninth round (fam-tfmoe)
# Unregistered transformers MoE classes, built by the Transformers backend's TransformersMoEForCausalLM: laid out from
# the generated tp_plan and MoE block (layouts.transformers_moe_arch, transformers_classes.MOE: vLLM's own
# MoEBlockFuser run on transformers' class).
SOLAR_OPEN = dict(TF, extra_config=dict(TF["extra_config"], n_routed_experts=4, num_experts_per_tok=2,
                                        moe_intermediate_size=256, n_shared_experts=1, n_group=1, topk_group=1))
PHIMOE = dict(TF, extra_config=dict(TF["extra_config"], num_local_experts=4, num_experts_per_tok=2,
                                    intermediate_size=256))


@pytest.mark.parametrize("vllm", ["0.33", "0.34"])
def test_an_unregistered_moe_transformers_class_routes_inside_the_fused_moe(make_checkpoint, vllm):
    # Solar-Open: the MoE fuser matches SolarOpenTopkRouter (sigmoid, grouped, e_score_correction_bias), rebuilt as
    # a GateLinear without quant_config; the shared expert's gate / up fused (GLUFuser), planned colwise / rowwise.
    folder = make_checkpoint(architecture="SolarOpenForCausalLM", model_type="solar_open", layers=2,
                             ignore_routers=False, **SOLAR_OPEN)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm)))
    assert rep.ok, list(rep.errors)
    by_name = {layer.name: layer for layer in rep.layers}
    assert {layer.layout for layer in rep.layers + rep.moes if not layer.name.startswith("lm_head")} == {
        "vllm:transformers/moe.py"}
    # the BF16 router outside the ignore list: vLLM builds it without quant_config all the same
    assert by_name["model.layers.0.mlp.gate"].scheme == "UnquantizedLinearMethod"
    assert {leaf: by_name[f"model.layers.0.mlp.shared_experts.{leaf}"].layer_type for leaf in ("gate_up_proj",
                                                                                                "down_proj")} == {
        "gate_up_proj": "MergedColumnParallelLinear", "down_proj": "RowParallelLinear"}
    assert [moe.name for moe in rep.moes] == ["model.layers.0.mlp.experts", "model.layers.1.mlp.experts"]
    assert rep.moes[0].notes[0].startswith("routing method DeepSeekV3 (transformers/moe.py: scoring_func sigmoid, "
                                           "renormalize True, num_expert_group 1, e_score_correction_bias yes)")
    assert "not judged" not in inspect_verdict(rep)


@pytest.mark.parametrize("vllm", ["0.33", "0.34"])
def test_an_unregistered_moe_transformers_class_keeps_an_unmatched_router(make_checkpoint, vllm):
    # Phi-3.5-MoE under transformers' spelling: the fuser cannot match PhimoeTopKRouter (sparsemixer) and there is
    # no shared expert, so routing stays transformers' (Custom) and the router, an nn.Linear, is the backend's
    # ReplicatedLinear with the quant config; transformers' WeightRenamings name it mlp.router (block_sparse_moe ->
    # mlp, gate.weight -> router.weight), which the ignore list's block_sparse_moe.gate no longer names: vLLM makes
    # an FP8 layer of the BF16 router.
    folder = make_checkpoint(architecture="PhimoeForCausalLM", model_type="phimoe", layers=2, quant="fp8-block",
                             **PHIMOE)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile(vllm)))
    router = next(layer for layer in rep.layers if layer.name == "model.layers.0.block_sparse_moe.gate")
    assert (router.layer_type, router.scheme, router.layout) == ("ReplicatedLinear", "Fp8LinearMethod",
                                                                 "vllm:transformers/moe.py")
    assert any("is BF16, but the quantization config makes it an FP8 layer" in e for e in router.errors)
    assert rep.moes[0].notes[0].startswith("routing method Custom (transformers/moe.py's custom_routing_function)")


def test_the_generated_moe_blocks_agree_with_the_hand_listed_backend_families():
    # Kolibri-1 and Mellum as their hand-written entries lay them out; OLMoE / FlexOlmo's routers renormalize
    # where config.json sets norm_topk_prob (their routers read it: transformers' default false), which the
    # hand-written Router(renormalize=False) does not follow.
    from fp8check.core.model.layouts import _moe_block_fields
    from fp8check.core.model.transformers_classes import MOE, TRANSFORMERS
    for version in set(TRANSFORMERS.values()):
        kolibri = _moe_block_fields("Kolibri1ForCausalLM", MOE[version]["Kolibri1ForCausalLM"])
        assert (kolibri["router"], kolibri["parameter_weights"]) == (ARCHITECTURES["Kolibri1ForCausalLM"].router,
                                                                     ("mlp.gate",))
        mellum = _moe_block_fields("MellumForCausalLM", MOE[version]["MellumForCausalLM"])
        backend = ARCHITECTURES["MellumForCausalLM"].moved[1]
        assert (mellum["router"], mellum["unquantized"]) == (backend.router, backend.unquantized)
        for arch in ("OlmoeForCausalLM", "FlexOlmoForCausalLM"):
            olmoe = _moe_block_fields(arch, MOE[version][arch])
            assert olmoe["router"].renormalize == ("norm_topk_prob", False)
            assert olmoe["unquantized"] == ARCHITECTURES[arch].for_release(select_profile("0.34")).unquantized


def test_an_unregistered_moe_transformers_class_vllm_cannot_lay_out(make_checkpoint):
    # MiniMax: its linear_attention layers dispatch no attention through the interface (base.py
    # _create_attention_instances' refusal of the first).
    folder = make_checkpoint(architecture="MiniMaxForCausalLM", model_type="minimax", layers=2, **dict(
        TF, extra_config=dict(TF["extra_config"], num_local_experts=4, num_experts_per_tok=2, intermediate_size=256,
                              layer_types=["full_attention", "linear_attention"])))
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile("0.34")))
    assert "Layer 1 (linear_attention) does not dispatch through the Transformers attention interface and vLLM has no " \
           "other way to handle it." in rep.errors


def test_an_unregistered_mla_moe_transformers_class_takes_the_mla_fusers_projections(make_checkpoint):
    # Mistral-4 (kv_lora_rank: an MLA model): fusers/mla.py MLAFuser's fused_qkv_a_proj (a MergedColumnParallelLinear
    # with disable_tp), q_b_proj / kv_b_proj column, o_proj row, and base.py's MLAAttention self_attn.attn.
    folder = make_checkpoint(architecture="Mistral4ForCausalLM", model_type="mistral4", layers=2, **dict(
        TF, extra_config=dict(TF["extra_config"], n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=256,
                              n_shared_experts=1, kv_lora_rank=512, q_lora_rank=1024, qk_rope_head_dim=64,
                              qk_nope_head_dim=128, v_head_dim=128)))
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("h100"), select_profile("0.34"), tp=2))
    assert rep.ok, list(rep.errors)
    by_name = {layer.name: layer.layer_type for layer in rep.layers}
    assert {leaf: by_name[f"model.layers.0.self_attn.{leaf}"] for leaf in (
        "fused_qkv_a_proj", "q_b_proj", "kv_b_proj", "o_proj")} == {
        "fused_qkv_a_proj": "MergedColumnParallelLinear", "q_b_proj": "ColumnParallelLinear",
        "kv_b_proj": "ColumnParallelLinear", "o_proj": "RowParallelLinear"}
    assert [a.name for a in rep.attention] == ["model.layers.0.self_attn.attn", "model.layers.1.self_attn.attn"]
# ninth round (fam-mmb)
# DeepSeek-VL2: a DeepSeek-V2 language_config (MLA without q-LoRA, a dense layer 0, 4 experts and a shared one)
# under language., timm's SigLIP-SO400M tower and the projector (synth.deepseek_vl2_tensors), both stored BF16.
DEEPSEEK_VL2 = {
    "language_config": {"architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "hidden_size": 256,
                        "intermediate_size": 512, "moe_intermediate_size": 256, "num_hidden_layers": 2,
                        "num_attention_heads": 4, "num_key_value_heads": 4, "n_routed_experts": 4,
                        "n_shared_experts": 1, "num_experts_per_tok": 2, "first_k_dense_replace": 1,
                        "q_lora_rank": None, "kv_lora_rank": 128, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32,
                        "v_head_dim": 64, "topk_method": "greedy", "vocab_size": 1000},
    "vision_config": {"width": 1152, "layers": 27, "heads": 16, "mlp_ratio": 3.7362, "patch_size": 14},
    "projector_config": {"projector_type": "downsample_mlp_gelu", "input_dim": 1152, "n_embed": 256, "depth": 2,
                         "mlp_ratio": 1, "downsample_ratio": 2},
    "tile_tag": "2D"}
DEEPSEEK_VL2_SPEC = dict(architecture="DeepseekVLV2ForCausalLM", model_type="deepseek_vl_v2", hidden=256, heads=4,
                         intermediate=512, experts=4, moe_intermediate=256, mla=True, kv_lora_rank=128,
                         qk_rope_head_dim=32, head_dim=64, moe_style="deepseek", shared_experts=1, first_k_dense=1,
                         text_prefix="language.model", head="language.lm_head", sizes_in_text_config=True,
                         extra_config=DEEPSEEK_VL2, extra_tensors=deepseek_vl2_tensors(DEEPSEEK_VL2),
                         ignore=("language.lm_head", r"re:vision\..*", r"re:projector\..*"))
# DeepSeek-OCR: the released language_config's MHA text model (qk dims 0), the fixed SAM ViT-B and CLIP-L towers.
DEEPSEEK_OCR = {
    "language_config": dict(DEEPSEEK_VL2["language_config"], kv_lora_rank=None, qk_nope_head_dim=0,
                            qk_rope_head_dim=0, v_head_dim=0, use_mla=False),
    "vision_config": {"image_size": 1024, "model_name": "deeplip_b_l", "width": {"clip-l-14-224": {"heads": 16}}},
    "projector_config": {"input_dim": 2048, "n_embed": 256, "projector_type": "linear"}, "tile_tag": "2D"}
DEEPSEEK_OCR_SPEC = dict(architecture="DeepseekOCRForCausalLM", model_type="deepseek_vl_v2", hidden=256, heads=4,
                         kv_heads=4, intermediate=512, experts=4, moe_intermediate=256, moe_style="deepseek",
                         shared_experts=1, first_k_dense=1, sizes_in_text_config=True, extra_config=DEEPSEEK_OCR,
                         extra_tensors=deepseek_ocr_tensors(DEEPSEEK_OCR),
                         ignore=("lm_head", r"re:model\.sam_model\..*", r"re:model\.projector\..*"))
GLM_OCR_SPEC = dict(architecture="GlmOcrForConditionalGeneration", model_type="glm_ocr",
                    **dict(HF, ignore=("lm_head",)),
                    extra_config={"text_config": dict(GLM4V_TEXT, model_type="glm_ocr_text"),
                                  "vision_config": dict(GLM4V_VISION, model_type="glm_ocr_vision")})
LIGHTONOCR_SPEC = dict(
    architecture="LightOnOCRForConditionalGeneration", model_type="lighton_ocr", transformers=True,
    tie_embeddings=True, sizes_in_text_config=True, ignore=("model.vision_projection.patch_merger.merging_layer",),
    extra_config=dict(
        text_config=dict(model_type="qwen3", hidden_size=256, intermediate_size=512, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, head_dim=128, vocab_size=1000,
                         tie_word_embeddings=True),
        vision_config=dict(model_type="pixtral", hidden_size=256, intermediate_size=512, num_hidden_layers=1,
                           num_attention_heads=2, head_dim=128, patch_size=14, image_size=56),
        spatial_merge_size=2, vision_feature_layer=-1, projector_hidden_act="gelu", multimodal_projector_bias=False))
LFM2_VL_SPEC = dict(
    LFM2, architecture="Lfm2VlForConditionalGeneration", model_type="lfm2_vl", sizes_in_text_config=True,
    ignore=("model.vision_tower.vision_model.embeddings.patch_embedding", r"re:model\.multi_modal_projector\..*"),
    extra_config=dict(text_config=dict(LFM2_LAYERS, model_type="lfm2", hidden_size=512, intermediate_size=1024,
                                       num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                       vocab_size=1000, tie_word_embeddings=True),
                      vision_config=dict(model_type="siglip2_vision_model", hidden_size=256, intermediate_size=512,
                                         num_hidden_layers=1, num_attention_heads=2, patch_size=16, num_patches=256,
                                         num_channels=3, vision_use_head=False),
                      projector_hidden_size=512, downsample_factor=2, tie_word_embeddings=True))
QIANFAN_OCR_SPEC = dict(internvl_chat_spec("QianfanOCRForConditionalGeneration", dict(
    QWEN2_LLM, model_type="qwen3", architectures=["Qwen3ForCausalLM"])), model_type="qianfan_ocr")
# The table entries of the ninth round, laid out as test_family_layout checks the others: (id, spec, TP, layers).
NINTH_ROUND_FAMILIES = [
    ("deepseek-vl2", DEEPSEEK_VL2_SPEC, 1,
     {"vision.blocks.0.mlp.fc1": ("nn.Linear", "vllm:deepseek_vl2.py"),
      "vision.attn_pool.kv": ("nn.Linear", "vllm:deepseek_vl2.py"),
      "projector.layers.2": ("nn.Linear", "vllm:deepseek_vl2.py"),
      "language.model.layers.0.self_attn.kv_a_proj_with_mqa": ("ReplicatedLinear", "vllm:deepseek_vl2.py")}),
    ("deepseek-ocr", DEEPSEEK_OCR_SPEC, 2,
     {"model.sam_model.blocks.0.attn.qkv": ("nn.Linear", "vllm:deepencoder.py"),
      "model.vision_model.transformer.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:deepencoder.py"),
      "model.projector.layers": ("nn.Linear", "vllm:deepseek_ocr.py"),
      "model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:deepseek_ocr.py")}),
    ("qianfan-ocr", QIANFAN_OCR_SPEC, 2,
     {"vision_model.encoder.layers.0.attn.qkv": ("QKVParallelLinear", "vllm:intern_vit.py"),
      "mlp1.1": ("nn.Linear", "vllm:internvl.py"),
      "language_model.model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:qwen3.py")}),
    ("lightonocr", LIGHTONOCR_SPEC, 2,
     {"model.vision_encoder.transformer.layers.0.attention.qkv_proj": ("QKVParallelLinear", "vllm:pixtral.py"),
      "model.vision_projection.linear_2": ("RowParallelLinear", "vllm:mistral3.py")}),
    ("glm-ocr", GLM_OCR_SPEC, 2,
     {"model.visual.blocks.0.attn.qkv": ("QKVParallelLinear", "vllm:glm_ocr.py"),
      "model.language_model.layers.0.self_attn.qkv_proj": ("QKVParallelLinear", "vllm:glm_ocr.py")}),
    ("lfm2-vl", LFM2_VL_SPEC, 2,
     {"model.vision_tower.vision_model.embeddings.patch_embedding": ("ReplicatedLinear", "vllm:lfm2_siglip2.py"),
      "model.multi_modal_projector.linear_1": ("ReplicatedLinear", "vllm:lfm2_vl.py"),
      "model.language_model.layers.0.conv.in_proj": ("MergedColumnParallelLinear", "vllm:lfm2.py")}),
]
FAMILIES.extend(NINTH_ROUND_FAMILIES)


@pytest.mark.parametrize("spec,tp,expected", [f[1:] for f in NINTH_ROUND_FAMILIES],
                         ids=[f[0] for f in NINTH_ROUND_FAMILIES])
def test_ninth_round_family_layout(make_checkpoint, spec, tp, expected):
    test_family_layout(make_checkpoint, spec, tp, expected)


def test_deepseek_vl2_tower_mlps_are_torch_linears_at_tp1_and_quantized_under_their_timm_prefix(make_checkpoint):
    """deepseek_vl2.py: timm's SigLIP tower (27 blocks whatever vision_config says) and MlpProjector are torch
    nn.Linears; above TP 1 patch_vit_for_tp swaps each timm Mlp's fc1 / fc2 for a column / row linear with the quant
    config and the prefix blocks.N.mlp.fcN, which no list entry under vision. names: FP8 layers over the BF16 tower.
    The text model is DeepSeek-V2's (language_config) under language., its lists matched by fused names only."""
    folder = make_checkpoint(quant="ct-fp8-block", data="sparse", **DEEPSEEK_VL2_SPEC)
    one, two = inspect(folder, tp=1), inspect(folder, tp=2)
    tower = {layer.name: layer for layer in one.layers if layer.name.startswith(("vision.", "projector."))}
    assert len(tower) == 27 * 4 + 5 + 2
    assert all(layer.layer_type == "nn.Linear" and layer.ok for layer in tower.values())
    assert one.ok
    split = {layer.name: layer for layer in two.layers if layer.name.startswith(("vision.", "projector."))}
    broken = {name for name, layer in split.items() if not layer.ok}
    assert broken == {f"vision.{block}.mlp.{fc}" for block in [*(f"blocks.{i}" for i in range(27)), "attn_pool"]
                      for fc in ("fc1", "fc2")}
    assert split["vision.blocks.0.mlp.fc1"].layer_type == "ColumnParallelLinear"
    assert split["vision.attn_pool.mlp.fc2"].layer_type == "RowParallelLinear"
    assert split["vision.blocks.0.attn.qkv"].layer_type == "nn.Linear"
    text = {layer.name: layer.layer_type for layer in two.layers if layer.name.startswith("language.")}
    assert text["language.model.layers.0.self_attn.kv_a_proj_with_mqa"] == "ReplicatedLinear"
    assert text["language.model.layers.0.mlp.gate_up_proj"] == "MergedColumnParallelLinear"
    assert [moe.name for moe in two.moes] == ["language.model.layers.1.mlp.experts"]
def test_deepseek_ocr_reads_its_mha_config_and_asks_for_clip_under_the_encoder_prefix(make_checkpoint):
    """deepseek_ocr.py: a language_config with qk_nope_head_dim = qk_rope_head_dim = 0 is no MLA (deepseek_v2.py
    use_mha: q / k / v fused into qkv_proj); SAM and the projector are torch nn.Linears; the CLIP encoder's layers sit
    at vision_model.transformer but take the prefix vision_model.encoder, so an ignore entry naming the stored
    model.vision_model.transformer.* leaves them FP8 layers over BF16 weights."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **DEEPSEEK_OCR_SPEC), tp=2)
    by_name = {layer.name: layer for layer in rep.layers}
    assert by_name["model.layers.0.self_attn.qkv_proj"].layer_type == "QKVParallelLinear"
    assert by_name["model.vision_model.transformer.layers.0.self_attn.qkv_proj"].shards and rep.ok
    towers = [layer for name, layer in by_name.items() if name.startswith(("model.sam_model.", "model.projector."))]
    assert len(towers) == 12 * 4 + 1 and {layer.layer_type for layer in towers} == {"nn.Linear"}
    clip = [name for name in by_name if name.startswith("model.vision_model.")]
    assert len(clip) == 24 * 4 and all(by_name[name].scheme.startswith("CompressedTensors") for name in clip)
    listed = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **dict(
        DEEPSEEK_OCR_SPEC, ignore=(*DEEPSEEK_OCR_SPEC["ignore"], "model.vision_model.transformer.layers.0.mlp.fc1"))),
        tp=2)
    fc1 = "model.vision_model.transformer.layers.0.mlp.fc1"
    assert [layer.name for layer in listed.layers if not layer.ok] == [fc1]


def test_qianfan_ocr_tower_and_head_are_unquantized_under_fp8_config_only(make_checkpoint):
    """qianfan_ocr.py _patch_quant_config appends every InternViT layer's qkv / proj / fc1 / fc2,
    language_model.lm_head and mlp1 to an Fp8Config's ignored_layers: a BF16 tower is right there and an FP8 one an
    error; compressed-tensors, which it leaves alone, quantizes the FP8 tower."""
    spec = QIANFAN_OCR_SPEC
    fp8 = inspect(make_checkpoint(quant="fp8-block", data="sparse", **dict(
        spec, ignore=(*spec["ignore"], r"re:vision_model\..*"))), tp=2)
    tower = [layer for layer in fp8.layers if layer.name.startswith("vision_model.")]
    assert len(tower) == 4 and all(layer.scheme == "UnquantizedLinearMethod" for layer in tower) and fp8.ok
    quantized = inspect(make_checkpoint(quant="fp8-block", data="sparse", **spec), tp=2)
    assert {layer.name for layer in quantized.layers if not layer.ok} == {layer.name for layer in tower}
    ct = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **spec), tp=2)
    assert ct.ok and all(layer.scheme == "CompressedTensorsW8A8Fp8" for layer in ct.layers
                         if layer.name.startswith("vision_model."))


def test_lightonocr_lays_out_mistral3_tower_and_projector_under_transformers_names(make_checkpoint):
    """lightonocr.py: mistral3.py's Pixtral tower and projector with the quant config, stored (by transformers'
    LightOnOcrForConditionalGeneration) under model.vision_encoder / model.vision_projection, which its mapper moves to
    vision_tower / multi_modal_projector, the ignore list with them (compressed-tensors' apply_vllm_mapper)."""
    spec = dict(LIGHTONOCR_SPEC, ignore=("model.vision_projection.patch_merger.merging_layer",
                                         "model.vision_projection.linear_2"))
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **spec), tp=2)
    by_name = {layer.name: layer for layer in rep.layers}
    assert by_name["model.vision_encoder.transformer.layers.0.attention.qkv_proj"].layer_type == "QKVParallelLinear"
    assert by_name["model.vision_projection.linear_1"].layer_type == "ColumnParallelLinear"
    assert by_name["model.vision_projection.patch_merger.merging_layer"].layer_type == "nn.Linear"
    assert by_name["model.vision_projection.linear_2"].scheme == "UnquantizedLinearMethod"
    assert by_name["model.language_model.layers.0.self_attn.qkv_proj"].layout == "vllm:qwen3.py" and rep.ok


def test_glm_ocr_lays_out_glm4v_tower_and_text_model_from_its_own_file(make_checkpoint):
    """glm_ocr.py: a Glm4vForConditionalGeneration whose GlmOcrVisionTransformer keeps GLM-4V's linears, with the
    quant config (attn.qkv over the vision heads, merger.proj column, gate / up fused); GLM-4's text model."""
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **GLM_OCR_SPEC), tp=2)
    by_name = {layer.name: (layer.layer_type, layer.layout) for layer in rep.layers}
    assert by_name["model.visual.blocks.0.attn.qkv"] == ("QKVParallelLinear", "vllm:glm_ocr.py")
    assert by_name["model.visual.merger.proj"] == ("ColumnParallelLinear", "vllm:glm_ocr.py")
    assert by_name["model.visual.merger.gate_up_proj"] == ("MergedColumnParallelLinear", "vllm:glm_ocr.py")
    assert by_name["model.language_model.layers.0.mlp.gate_up_proj"][0] == "MergedColumnParallelLinear" and rep.ok


def test_lfm2_vl_text_model_is_asked_under_the_language_prefix_no_list_entry_reaches(make_checkpoint):
    """lfm2_vl.py builds the language model with the prefix language while the mapper moves its tensors to
    language_model: an ignore entry naming a text layer (mapped to language_model.*) never matches, so a BF16 layer it
    lists is an FP8 layer in vLLM; the SigLIP-2 patch embedding and the projector are ReplicatedLinears without the
    quant config, the encoder quantized."""
    listed = "model.language_model.layers.0.feed_forward.w2"
    spec = dict(LFM2_VL_SPEC, ignore=(listed, *LFM2_VL_SPEC["ignore"]))
    rep = inspect(make_checkpoint(quant="ct-fp8-block", data="sparse", **spec), tp=2)
    by_name = {layer.name: layer for layer in rep.layers}
    assert [name for name, layer in by_name.items() if not layer.ok] == [listed]
    assert by_name["model.language_model.layers.0.feed_forward.w13"].layout == "vllm:lfm2.py"
    for name in ("model.vision_tower.vision_model.embeddings.patch_embedding", "model.multi_modal_projector.linear_1"):
        assert (by_name[name].layer_type, by_name[name].scheme) == ("ReplicatedLinear", "UnquantizedLinearMethod")
    qkv = by_name["model.vision_tower.vision_model.encoder.layers.0.self_attn.qkv_proj"]
    assert (qkv.layer_type, qkv.scheme) == ("QKVParallelLinear", "CompressedTensorsW8A8Fp8")


def test_openpangu_routes_with_its_expert_bias(make_checkpoint):
    """openpangu.py hands FusedMoE an e_score_correction_bias where config.router_enable_expert_bias (sigmoid over one
    group: DeepSeekV3 routing), which the CPU experts take (SigmoidRenorm they refuse): CPUExpertsFp8 on 0.34's CPU."""
    folder = make_checkpoint(architecture="PanguProMoEV2ForCausalLM", model_type="pangu_pro_moe_v2", head_dim=128,
                             moe_style="deepseek", experts=4, shared_experts=1, first_k_dense=1, quant="ct-fp8-block",
                             data="sparse", extra_config=PANGU_MOE)
    rep = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform("cpu"), select_profile("0.34")))
    assert {(m.kernel, m.backend) for m in rep.moes} == {("CPUExpertsFp8", "CPU")}
    assert any("routing method DeepSeekV3" in note for m in rep.moes for note in m.notes)


def test_whisper_loads_with_the_k_projection_zero_biased(make_checkpoint):
    """whisper.py's k_proj has no bias (_create_fake_bias_for_k_proj: zeros), so load fuses zeros into qkv_proj's /
    kv_proj's bias where a shard stores none, as the model's loader does."""
    torch = pytest.importorskip("torch")
    from fp8check.core.load.driver import load_checkpoint
    from fp8check.core.records import LoadOptions

    folder = make_checkpoint(**dict(WHISPER_SPEC, data="random"))
    options = LoadOptions(InspectOptions(parse_platform("h100"), select_profile("0.34")), torch.device("cpu"),
                          layers=r"(self_attn\.qkv_proj|encoder_attn\.kv_proj)$", rank_timeout_s=120)
    report = load_checkpoint(open_local(folder), lambda names: folder, options)
    assert report.runs and report.ok, [run.errors for run in report.runs]


def test_a_short_convolution_loads_as_the_linear_vllm_builds(make_checkpoint):
    """LFM2's conv.conv (and a Mamba mixer's conv1d): the checkpoint's [C, 1, K] kernel is the [C, K] weight of the
    ColumnParallelLinear vLLM builds (short_conv.py), which load runs as one."""
    torch = pytest.importorskip("torch")
    from fp8check.core.load.driver import load_checkpoint
    from fp8check.core.records import LoadOptions

    folder = make_checkpoint(**dict(LFM2_VL_SPEC, data="random"))
    options = LoadOptions(InspectOptions(parse_platform("h100"), select_profile("0.34")), torch.device("cpu"),
                          layers=r"\.conv\.conv$", rank_timeout_s=120)
    report = load_checkpoint(open_local(folder), lambda names: folder, options)
    assert report.runs and report.ok, [run.errors for run in report.runs]
