"""Rule profiles: one per vLLM minor release 0.25 ... 0.34, each the set of routing changes it contains.

Each rule that changed asks `profile.has(CHANGE)`, the one way fp8check says that releases differ (no rule compares
release numbers: tests/test_structure.py checks it). A change is an upstream PR number where the PR is known
(#43958 -> v0.24.0, #43645 -> v0.25.0, #47516 -> v0.26.0, #49664 / #49932 / #50787 / #50826 -> v0.28.0), or a
short name where the change was read from the release wheels (`pip download vllm==X --no-deps`, unzipped, diffed
with the previous release's) without pinning the PR. Patch releases (0.25.1, 0.27.1) have the same routing files as
their .0 and map to their minor. Releases before 0.25 used other XPU kernel classes (XPUFP8ScaledMMLinearKernel)
whose tables were not read, so no profile claims them; releases after the newest profile were not read either, so
none claims them (`select_profile` refuses both).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from fp8check.core.errors import InputError

# What each change did, for `fp8check rules` and docs/routing.md: upstream PRs ...
PULL_REQUESTS: dict[int, str] = {
    43958: "XPU reports no compute capability; _check_scheme_supported returns True for it (W8A8 FP8 allowed off CUDA)",
    43645: "XPU defaults FP8 to CompressedTensorsW8A16Fp8; --linear-backend xpu|torch opts into W8A8",
    47516: "a platform missing from a kernel table gives 'Failed to find a kernel' instead of KeyError "
           "(every FP8 table has all four platforms, so FP8 routing is unchanged)",
    49664: "Torch _scaled_mm kernels accept XPU ('requires ROCm, CUDA, CPU or XPU.') and join the XPU FP8 table",
    49932: "BlockWiseTorchFP8ScaledMMLinearKernel (torch block-scaled mm) added",
    50787: "XPU: block-quantized weights always use CompressedTensorsW8A8Fp8 (XPUFp8BlockScaledMMKernel)",
    50826: "BlockWiseTorchFP8ScaledMMLinearKernel enabled on XPU",
    47434: "AutoRound / INC block-wise FP8 (quant_method auto-round -> inc, INCFp8LinearScheme)",
    49381: "ModelOpt linear layers use the generic QuantKey-driven ModelOptLinearMethod",
}
# ... and changes read from the release wheels whose PR was not pinned.
WHEEL_CHANGES: dict[str, str] = {
    "cpu-router": "0.30 wheel: on CPU every FusedMoE routes through CPURouter (router_factory.py), whose routing "
                  "method is get_routing_method_type's even for a custom_routing_function (Llama-4: Default)",
    "glm4-moe-gate-linear": "0.31 wheel: glm4_moe.py builds its router as GateLinear (a ReplicatedLinear, "
                            "quant_config=None); a torch nn.Linear before",
    "mimo-v2-kv-chunks": "0.33 wheel: mimo_v2.py builds MiMo-V2-Pro's fused qkv_proj as a MergedColumnParallelLinear "
                         "[Q | chunks x (K V pad)] below TP num_key_value_heads under a weight_block_size quant config "
                         "(_fused_qkv_kv_chunk_rows); a QKVParallelLinear before",
    "bailing-v3-replicated-gate": "0.33 wheel: bailing_moe_v3.py replicates a head-wise MLA g_proj that a block-FP8 "
                                  "Fp8Config quantizes (disable_tp), its rows within one block row",
    "plamo3-head-quant": "0.34 wheel: plamo3.py builds its ParallelLMHead with the quant config (prefix lm_head); "
                         "without it before",
    "bailing-v3-swiglustep": "0.34 wheel: bailing_moe_v3.py hands a clamped layer's FusedMoE activation 'swiglustep' "
                             "(0.33: 'silu' with the swiglu_limit)",
    "bailing-gate-linear": "0.31 wheel: bailing_moe.py and bailing_moe_v3.py build their router as GateLinear (a "
                           "ReplicatedLinear, quant_config=None); before, a torch nn.Linear and BailingMoeV3Gate (a "
                           "module with no quant method)",
    "b12x": "0.28 wheel: B12x block / tensor FP8 kernels join the CUDA tables (SM12x, the vllm[b12x] extra)",
    "rocm-cdna3-wording": "0.27 wheel: ROCmFP8ScaledMMLinearKernel's refusal reads 'requires CDNA3+ (gfx942/gfx950) "
                          "or RDNA4 (gfx12x)' (was 'requires MI3xx or gfx12x')",
    "humming-installed": "0.28 wheel: HummingFP8ScaledMMLinearKernel checks has_humming() ('Humming is not installed')",
    "marlin-late": "0.29 wheel: Marlin's 'VLLM_TEST_FORCE_FP8_MARLIN' gate on cc >= 89 removed; the CUDA FP8 table "
                   "puts Marlin after the Torch kernels and the block table Humming before Triton",
    "torch-fp8-support": "0.29 wheel: the Torch kernels check _supports_torch_fp8_scaled_mm() instead of cc >= 89",
    "cutlass-fp8-check": "0.31 wheel: CutlassFP8ScaledMMLinearKernel checks cutlass_fp8_supported() (sm89+ with "
                         "CUDA >= 12.4); before, any CUDA device passed",
    "cpu-fp8": "0.31 wheel: CPU tables gain CPUFP8W8A8ScaledMMLinearKernel, CPUFp8PerTensorScaledMMLinearKernel "
               "and CPUFp8W8A8BlockScaledMMKernel (the W8A8 ones need native AMX-FP8)",
    "humming-priority": "0.32 wheel: prioritize_humming moves Humming ahead of Marlin on sm90",
    "cpu-fp8-channel": "0.33 wheel: CPUFp8ChannelWiseScaledMMLinearKernel joins the CPU FP8 table",
    # The front door (fp8check.core.formats.frontdoor) and the formats of fp8check.core.formats.
    "xpu-quant-allowlist": "0.27 wheel: XPU gains a supported_quantization list (quark, fbgemm_fp8, modelopt_mxfp8, "
                           "... refused: '<method> quantization is currently not supported in xpu.')",
    "modelopt-min-80": "0.27 wheel: ModelOptFp8Config.get_min_capability() is 80 (was 89)",
    "rocm-inc": "0.28 wheel: ROCm's list gains inc and drops bitsandbytes",
    "xpu-moe-wna16": "0.30 wheel: XPU's list gains moe_wna16",
    "xpu-fp8-per-channel": "0.32 wheel: XPU's list gains fp8_per_channel",
    "quark-per-block": "0.28 wheel: Quark per-block FP8 weights (QuarkW8A8Fp8PerBlock)",
    "pbwo-padding": "0.29 wheel: ModelOpt FP8_PB_WO pads output widths to 128 and runs the kernel's post-load",
    "quark-fp8-keys": "0.30 wheel: Quark's _is_fp8_w8a8 returns the keys (dynamic per-tensor activations keep a "
                      "dynamic key), init_scheme raises RuntimeError below capability 89, and an excluded lm_head "
                      "gets no method (UnquantizedEmbeddingMethod; UnquantizedLinearMethod before)",
    "online-fp8-redirect": "0.31 wheel: --quantization fp8 on an unquantized checkpoint becomes "
                           "OnlineQuantizationConfig(fp8_per_tensor), with a deprecation warning",
    "online-tp-amax": "0.28 wheel: online FP8 reduces each weight's amax over the TP ranks "
                      "(amax_for_tp_weight_quant), so a shard's scale is the unsharded weight's",
    "mxfp8-backend-fallback": "0.28 wheel: a --linear-backend with no MXFP8 kernel falls back to automatic "
                              "selection (0.25-0.27 raise)",
    "mxfp8-trtllm": "0.29 wheel: FlashInferTrtllmMxfp8LinearKernel joins the CUDA MXFP8 table",
    "mxfp8-shape": "0.31 wheel: the MXFP8 FlashInfer / Marlin kernels check the weight shape; FlashInfer CUTLASS "
                   "checks has_flashinfer()",
    "mxfp8-torch": "0.33 wheel: TorchMxFp8LinearKernel joins the CUDA and XPU MXFP8 tables",
    "quark-moe-exclude": "0.26 wheel: an excluded Quark RoutedExperts gets UnquantizedFusedMoEMethod, and an "
                         "excluded child excludes its parent (check_children)",
    "inc-mx-fp": "0.27 wheel: INCConfig accepts data_type mx_fp (its data_type error lists {'int', 'mx_fp'})",
    "inc-bits-5-7": "0.30 wheel: INCConfig.SUPPORTED_BITS gains 5, 6 and 7",
    "nvfp4-per-token": "0.26 wheel: QuantizationMethods gains nvfp4_per_token (online NVFP4 experts)",
    "bitsandbytes-removed": "0.28 wheel: bitsandbytes leaves QuantizationMethods",
    "modelopt-exclude-modules": "0.33 wheel: ModelOpt's config.json branch falls back to exclude_modules when "
                                "ignore is absent",
    # Attention backends and the KV cache (fp8check.kernels.attention, fp8check.core.formats.kv_cache): read from
    # vllm/v1/attention/, platforms/*.py get_attn_backend_cls and config/cache.py's CacheDType.
    "attn-sliding-window": "0.26 wheel: AttentionSelectorConfig gains has_sliding_window (Attention passes its "
                           "window); validate_configuration refuses a backend without supports_sliding_window "
                           "('sliding window not supported')",
    "attn-selector-pcp": "0.26 wheel: AttentionSelectorConfig gains use_pcp (shown in the selector's errors)",
    "xpu-mm-prefix-flash-attn": "0.26 wheel: XPU gives an mm-prefix model FLASH_ATTN when --attention-backend asks for "
                                "it, warning that the prefix-LM mask cannot be applied (TRITON_ATTN otherwise)",
    "fa-fp8-kv": "0.27 wheel: FLASH_ATTN lists fp8 / fp8_e4m3 and refuses them in supports_combination unless FA3 on "
                 "SM90 or FA4 on SM100 ('FP8 KV cache requires FA3 on SM90 or FA4 on SM100'); FlashAttentionImpl "
                 "raises 'FlashAttention does not support {dtype} kv-cache on this device.' (before, "
                 "supports_kv_cache_dtype took them on XPU and FA3 on SM90 only)",
    "attention-backends-027": "0.27 wheel: AttentionBackendEnum gains CUTLASS_MSA and TRITON_MSA",
    "cpu-mla": "0.28 wheel: CPU serves MLA with CPU_MLA (AttentionBackendEnum gains it), refusing sparse attention "
               "first; before, 'MLA is not supported on CPU.' after any requested backend's 'Cannot use ...' log",
    "attn-adaptive-verification": "0.28 wheel: AttentionSelectorConfig gains use_adaptive_verification",
    "nvfp4-4over6-kv": "0.28 wheel: CacheDType gains nvfp4_4over6",
    "fa4-hd256": "0.29 wheel: get_flash_attn_version keeps FA4's SM10x/SM11x head-256 kernel (supports_fa4_hd256) "
                 "except for sinks, a quantized KV cache, a block size not a multiple of 128 or an mm-prefix model "
                 "(FA2 then); before, head_size 256 on SM10x always fell back to FA2",
    "attn-selector-dcp": "0.29 wheel: AttentionSelectorConfig gains use_dcp",
    "attn-import-error-text": "0.29 wheel: the CUDA selector words a backend its ImportError rules out as "
                              "'{type}: {message}' (\"ModuleNotFoundError: No module named 'flashinfer'\"; "
                              "'ImportError' before)",
    "cpu-amx-mla": "0.29 wheel: CPU picks AMX_MLA (AttentionBackendEnum gains it) for MLA on an AMX host unless "
                   "CPU_MLA is asked for, and logs 'Using CPU_MLA backend.' / 'Using AMX_MLA backend.'",
    "attn-selector-rswa": "0.30 wheel: AttentionSelectorConfig gains use_rswa",
    "attn-composite": "0.30 wheel: the TRITON_FLASH_ATTN and TRITON_FLASHINFER composites (backends/composite.py; "
                      "AttentionBackendEnum gains them) head CUDA's list for an mm-prefix layer on SM9x / SM10x",
    "flashinfer-mla-sparse-sm90": "0.30 wheel: FLASHINFER_MLA_SPARSE_SM90 (AttentionBackendEnum) joins SM90's MLA "
                                  "list: ahead of the sparse tail for head_size 512, after it otherwise",
    "flashinfer-mla-sparse-nope": "0.30 wheel: FLASHINFER_MLA_SPARSE takes a no-rope MLA (qk_rope_head_dim 0) of "
                                  "qk_nope_head_dim 256 and kv_lora_rank 512 (FlashInfer's one NoPE shape), not the "
                                  "[128, 192] check",
    "mla-d512": "0.30 wheel: MLACommonBackend's head sizes gain 512 (320, 512, 576)",
    "flashinfer-sm90-sinks": "0.30 wheel: FLASHINFER supports attention sinks on SM90 (TRT-LLM XQA decode)",
    "nvfp4-ds-mla": "0.30 wheel: CacheDType gains nvfp4_ds_mla; FLASHMLA_SPARSE lists it on SM100 only "
                    "('FLASHMLA_SPARSE only supports the nvfp4_ds_mla kv-cache dtype on SM100 (Blackwell)')",
    "rocm-kv-dtype-hint": "0.30 wheel: ROCm's 'No valid attention backend found' ends with ' Supported "
                          "kv_cache_dtype values: ...' when a backend refused the KV cache dtype",
    "attention-backends-030": "0.30 wheel: AttentionBackendEnum gains FLASHMLA_SPARSE_DSV41, "
                              "FLASHINFER_MLA_SPARSE_DSV41 and B12X",
    "fa4-sm90-d512-fp8-kv": "0.31 wheel: flash_attn_supports_kv_cache_dtype takes FA4 on SM90 with head_size 512 "
                            "(or none given); FLASH_ATTN's refusal reads 'FP8 KV cache requires FA3 on SM90, FA4 with "
                            "head_size=512 on SM90, or FA4 on SM100'",
    "sm90-fp8-kv-mm-prefix": "0.31 wheel: FLASH_ATTN refuses an FP8 KV cache with mm_prefix on SM90 ('SM90 FP8 KV "
                             "with mm_prefix requires Triton')",
    "xpu-batch-invariant": "0.31 wheel: under VLLM_BATCH_INVARIANT XPU picks TRITON_ATTN (FLASH_ATTN only when asked "
                           "for, with a warning)",
    "triton-flash-attn-fa3": "0.31 wheel: TRITON_FLASH_ATTN's causal route (_FABackend) takes FA3 or FA4 ('causal "
                             "route requires FlashAttention v3 or v4'; FA4 only before)",
    "flashmla-sparse-d512": "0.31 wheel: FLASHMLA_SPARSE takes head_size 512 (rope-free GLM5Next) with a bf16 cache "
                            "on SM90 ('FLASHMLA_SPARSE supports head_size 512 only with bf16 kv-cache on SM90 (NoPE), "
                            "...')",
    "attention-backends-031": "0.31 wheel: AttentionBackendEnum gains FLASHMLA_MEGA_ATTN_DSV41",
    "xpu-flash-attn-mla": "0.32 wheel: XPU tries FLASH_ATTN_MLA (XPUFlashAttnMLABackend) for MLA, falling back to "
                          "TRITON_MLA (TRITON_MLA always before)",
    "rocm-attn-no-mm-prefix": "0.32 wheel: ROCM_ATTN and ROCM_AITER_UNIFIED_ATTN stop supporting mm_prefix "
                              "('# Not implemented')",
    "ultraquant": "0.32 wheel: the ULTRAQUANT backend: CacheDType gains ultraquant_4bit, AttentionBackendEnum "
                  "ULTRAQUANT, last in ROCm's list",
    "flashmla-sparse-d512-fp8": "0.32 wheel: FLASHMLA_SPARSE's head_size 512 takes fp8_ds_mla too ('... only with "
                                "bf16 or fp8_ds_mla kv-cache on SM90 (NoPE), ...')",
    "attention-backends-032": "0.32 wheel: AttentionBackendEnum gains ROCM_SEGMENTED_ATTN",
    "kv-quant-mode": "0.33 wheel: every backend's is_quantized_kv_cache is v1/kv_cache_interface.py's "
                     "(get_kv_quant_mode), which also counts turboquant_*, octave_* and ultraquant_* caches "
                     "(utils/torch_utils.py's before: fp8*, nvfp4*, *per_token_head)",
    "xpu-fa-d512": "0.33 wheel: FLASH_ATTN on XPU takes head sizes up to 512 ('The XPU SYCL kernels support head "
                   "sizes up to 512')",
    "xpu-triton-flash-attn": "0.33 wheel: XPU's mm-prefix branch picks the TRITON_FLASH_ATTN composite for the head "
                             "sizes it takes; its FlashAttention route runs on any XPU",
    "cpu-attn-kv-check": "0.33 wheel: CPU's selector refuses a quantized KV cache for MLA ('--kv-cache-dtype X is "
                         "not supported by MLA attention on CPU.') and one CPU_ATTN cannot take ('... by the CPU "
                         "attention backend on this host.'); CPU_ATTN's FP8 caches need AVX-512 or AMX",
    "rocm-octave": "0.33 wheel: the ROCM_OCTAVE backend: CacheDType gains octave_k3v4, octave_k3v3 and "
                   "octave_k3v3_compact, AttentionBackendEnum ROCM_OCTAVE, in ROCm's list after TURBOQUANT",
    "flash-attn-mla-sparse-fa4": "0.33 wheel: FLASH_ATTN_MLA_SPARSE_FA4 (AttentionBackendEnum) heads SM100's sparse "
                                 "MLA tail for a bf16 cache at <= 16 heads",
    "attention-backends-033": "0.33 wheel: AttentionBackendEnum gains ROCM_FLASHMLA_SPARSE_DSV41 and STEP5_DSA",
    # FusedMoE (fp8check.kernels.moe, fp8check.core.routing.moe and the formats' moe_method): read from
    # fused_moe/oracle/fp8.py, experts/*.py and the quant configs' MoE methods.
    "trtllm-swiglu-clamp": "0.29 wheel: TrtLlmFp8ExpertsBase.is_supported_config refuses a FusedMoE whose model file "
                           "hands it a SwiGLU clamp (swiglu_limit) unless its weights are MXFP8",
    "trtllm-swiglu-block": "0.30 wheel: ... or 128-block FP8 weights with dynamic 1x128 activations, under SiLU or "
                           "SwiGLU-OAI (uninterleaved)",
    "moe-block-refine": "0.29 wheel: refine_fp8_moe_block_shape refines a weight block the TP shard does not divide "
                        "to gcd(block, shard, hidden) >= 32; Fp8MoEMethod hands the oracle its block's own key "
                        "(kFp8Static128BlockSym before, whatever weight_block_size said), and TritonExperts takes any "
                        "static float32 block with 1x128 activations",
    "ct-wna16-moe-wording": "0.29 wheel: compressed-tensors' WNA16 MoE format error is one string ('For Fused MoE "
                            "layers, only format: pack-quantized and bits: [4, 8] is supported but got ...'; the "
                            "ValueError printed a tuple of pieces before)",
    "glm5next": "0.30 wheel: vllm.models.glm5next serves Glm5NextForCausalLM / ForConditionalGeneration; importing it "
                "on XPU raises 'GLM-5.3-Flash does not currently support XPU.'",
    "qwen4exp": "0.29 wheel: vllm.models.qwen4_exp serves Qwen4ExpForCausalLM / ForConditionalGeneration; importing "
                "it on XPU or TPU raises 'Qwen4Exp currently supports CUDA and ROCm only'",
    "qwen4exp-indexer-alike": "0.34 wheel: Qwen4-Exp's QSA loads the indexer's index_qk_proj into qkv_proj only when "
                              "its quant method is q / k / v's (models/qwen4_exp/nvidia/qsa.py; always before)",
    "kimi-xpu-amd-linear": "0.33 wheel: vllm.models.kimi_k3 resolves KimiLinearForCausalLM (Kimi-K3's text model too) "
                           "to amd/linear.py on XPU (nvidia/model.py before): its padded MoE and Kimi-K3's KDA layers "
                           "fail there as on ROCm",
    "rocm-aiter-mla-sparse-sinks": "0.30 wheel: ROCMAiterMLASparseBackend.supports_sink answers on_mi3xx() (gfx942, "
                                   "gfx950): HY-V4's sparse MLA layers keep it and their learnable sink on MI300 / "
                                   "MI350 (attention.py _resolve_sink_backend)",
    "kimi-k3-rocm": "0.33 wheel: Kimi-K3's ROCm text model (models/kimi_k3/amd/linear.py) fuses q_a_proj / "
                    "kv_a_proj_with_mqa / g_proj into fused_qkv_a_proj (KimiK3MergedQKVGateLinear) and builds the "
                    "latent MoE's routed_expert_down_proj / up_proj unquantized; fp8check lays it out from this "
                    "release on",
    "dots3-note": "0.28 wheel: vllm.models.dots3_note serves Dots3NoteForCausalLM; importing it on CPU raises an "
                  "ImportError (its attention imports MLA's FlashAttention prefill, which CPU's fa_utils.py lacks)",
    "muse-spark-rename": "0.34 wheel: vllm.models.muse_spark's text classes and messages say 'Muse Spark' "
                         "(MuseSparkForCausalLM; 'MuseSpark1x' in 0.33): its quant-config and MoE-backend refusals",
    "hy-v4": "0.29 wheel: vllm.models.hy_v4 serves HYV4ForCausalLM; importing it on XPU raises 'hy_v4 does not yet "
             "support XPU.'",
    "cpu-moe-deepseek-routing": "0.30 wheel: CPUExpertsFp8 also routes DeepSeekV3 and DeepseekV4",
    "cpu-moe-w8a8": "0.31 wheel: Fp8MoeBackend.CPU_W8A8 (CPUExpertsFp8W8A8, native AMX-FP8) goes ahead of CPU on "
                    "CPU hosts",
    "glm5-sm100-fp8-kv": "0.32 wheel: GlmMoeDsaForCausalLM.verify_and_update_config turns --kv-cache-dtype auto into "
                         "fp8_e4m3 on SM10x (model_executor/models/config.py)",
    "glm5next-sm100-fp8-kv": "0.33 wheel: Glm5NextModelConfig.verify_and_update_config turns --kv-cache-dtype auto "
                             "into fp8 on SM10x for a sparse-indexer config (index_topk set; model_executor/models/"
                             "config.py)",
    "glm5next-fused-conv": "0.34 wheel: GLM-5-Next's KDA loads q_conv1d / k_conv1d / v_conv1d into one conv1d "
                           "ColumnParallelLinear (models/glm5next/common/kda.py _fused_qkv_conv1d; three before)",
    "ct-moe-ckpt-leaves": "0.32 wheel: compressed-tensors' get_moe_method asks for expert 0's projections by the "
                          "checkpoint's names (ckpt_gate/up/down_proj_name; gate_proj / up_proj / down_proj before)",
    "deepgemm-moe-exclusion": "0.33 wheel: the FP8 MoE oracle drops DEEPGEMM and BATCHED_DEEPGEMM for a model type "
                              "should_auto_disable_deep_gemm names (Qwen3.5 on SM100 / SM120; the linear kernel refused "
                              "DeepGEMM for them since 0.25), whose table gains kolibri1 on SM120",
    "aiter-moe-split": "0.33 wheel: the AITER backend's AiterExperts splits into AiterFp8BlockExperts, "
                       "AiterFp8TensorExperts and AiterFp8ChannelExperts",
    # 0.34.0 (../docs/fidelity.md, "vLLM 0.34"): read from the wheel against 0.33.0's.
    "xpu-fp8-per-token": "0.34 wheel: Fp8LinearMethod and Fp8PerTensorOnlineLinearMethod quantize dynamic "
                         "activations per token on XPU (`cutlass_fp8_supported() or current_platform.is_xpu()`; "
                         "per tensor before)",
    "w4afp8": "0.34 wheel: quant_method w4afp8 (W4AFP8Config(Fp8Config), w4afp8.py): FP8 block-128 dense layers on "
              "Fp8LinearMethod, INT4 group-128 routed experts on CompressedTensorsW4A8Fp8MoEMethod; "
              "QuantizationMethods gains w4afp8 after fp8 (not on the XPU or ROCm lists)",
    "fp-quant-removed": "0.34 wheel: fp_quant leaves QuantizationMethods and DEPRECATED_QUANTIZATION_METHODS; "
                        "lut_b_moe and mxfp4_hadamard32 join QuantizationMethods (mxfp4_hadamard32 ROCm's list too)",
    "ptpc-w8a16-refused": "0.34 wheel: online FP8 PTPC refuses every W8A16 kernel it is given (Marlin and Humming), "
                          "naming its class ('{type(self.fp8_linear).__name__} is W8A16 weight-only')",
    "cutlass-block-wording": "0.34 wheel: CutlassFp8BlockScaledMMKernel's capability refusal gains its missing space "
                             "('compute capability of 89 is not supported.')",
    "fa-fp8-kv-wording": "0.34 wheel: FlashAttention's FP8-KV refusal reads 'FP8 KV requires FA3 (SM90), equal-d512 "
                         "FA4 (SM90), or FA4 (SM100).'; on SM90 an FP8 KV cache at head_size 512 refuses a block "
                         "size not divisible by 64 and block sparsity",
    "attention-type-strenum": "0.34 wheel: AttentionType is a StrEnum, so vLLM's messages print AttentionType.DECODER "
                              "as 'decoder' (AttentionSelectorConfig's repr, ROCm's 'Found incompatible backend(s)')",
    "attention-backends-034": "0.34 wheel: AttentionBackendEnum gains FLASHINFER_TS (FlashInfer's task-scheduled "
                              "decode, SM100/103/107) and KIMI_K3_KV_BALANCED_MLA (FP8 MLA decode, SM10x), in no "
                              "automatic priority list",
    "diffkv-head-size-v": "0.34 wheel: mimo_v2.py keeps an explicitly requested backend for its V-narrower layers "
                          "when the backend's supports_head_size_v (FLASH_ATTN_DIFFKV, TRITON_ATTN_DIFFKV, "
                          "ROCM_AITER_UNIFIED_ATTN; before: a name ending _DIFFKV); FlashAttentionDiffKVImpl refuses "
                          "an FP8 KV cache FlashAttention cannot serve at V's head size ('Unsupported FP8 Diff-KV "
                          "configuration; use an unquantized KV cache.')",
    "mla-sliding-window-kv": "0.34 wheel: MLAAttention refuses fp8_ds_mla and nvfp4_ds_mla with a sliding window "
                             "('Sliding-window MLA does not support kv_cache_dtype=...') and hands the selector "
                             "has_sliding_window; TRITON_MLA supports a sliding window (mla_attention.py)",
    "moe-backend-batched-triton": "0.27 wheel: --moe-backend takes batched_triton (config/kernel.py MoEBackend)",
    "moe-backend-029": "0.29 wheel: --moe-backend takes b12x, flashinfer_moe_ep_mega_deep_gemm and "
                       "flashinfer_moe_ep_mega_cutedsl (config/kernel.py MoEBackend)",
    "moe-backend-030": "0.30 wheel: --moe-backend takes aiter_triton_mxfp4_bf16 and rdna3 "
                       "(config/kernel.py MoEBackend)",
    "moe-backend-032": "0.32 wheel: --moe-backend takes flashinfer_moe_ep_cutedsl and aiter_mega_moe, no longer "
                       "flashinfer_moe_ep_mega_cutedsl (config/kernel.py MoEBackend)",
    "moe-backend-033": "0.33 wheel: --moe-backend takes aiter_triton_mxfp4_mxfp4 (config/kernel.py MoEBackend)",
    "moe-block-pad": "0.31 wheel: with an explicit --moe-backend whose experts classes refuse the refined block, "
                     "native fp8 pads the TP shard to whole checkpoint blocks (oracle/fp8.py "
                     "resolve_fp8_moe_weight_block_shape, pad_tp_shard_to_weight_blocks)",
    "glm5next-mega-moe": "0.34 wheel: models/glm5next's MoE builds DeepGEMM's FP8 MegaMoE under --moe-backend "
                         "deep_gemm_mega_moe (NATIVE_MEGA_MOE_BACKENDS), with refusals of its own; 0.33's FP8 experts "
                         "meet map_fp8_backend's",
    "moe-oracle-wording": "0.34 wheel: MoEKernelOracle.make_log_unsupported words a refused backend \"Fp8 MoE backend "
                          "'X' does not support the deployment configuration since ...\" (oracle/base.py)",
    "cpu-requires-triton": "0.34 wheel: CpuPlatform.check_and_update_config raises 'vLLM on x86 CPUs requires Triton "
                           "(triton-cpu).' (a warning before; fp8check assumes triton_cpu=yes)",
    "extensible-kv-cache": "0.34 wheel: gpu_memory_utilization defaults to 1.0 on CUDA and ROCm (the extensible KV "
                           "cache), 0.92 elsewhere; 'No available memory for the cache blocks.' gains a hint per case",
    "transformers-backend-026": "0.26 wheel: OlmoForCausalLM and Olmo2ForCausalLM move to the Transformers backend",
    "transformers-backend-029": "0.29 wheel: Olmo3ForCausalLM and FlexOlmoForCausalLM move to the Transformers backend",
    "transformers-backend-032": "0.32 wheel: Arcee, Cwm, Glm, GPTNeoX, Jais2, Mellum, Phi and SeedOss (...ForCausalLM) "
                                "move to the Transformers backend",
    "transformers-backend-034": "0.34 wheel: GemmaForCausalLM, OlmoeForCausalLM, StableLmForCausalLM and "
                                "AriaForConditionalGeneration move to the Transformers backend (their model files "
                                "are deleted); Keye and KeyeVL1_5 leave the registry",
    "step5-rocm": "0.34 wheel: vllm.models.step5 resolves Step5ForCausalLM on ROCm to amd/model.py (q / k / v -> "
                  "qkv_proj and g_proj apart on every layer, the sparse indexer unquantized under self_attn.indexer, "
                  "Attention with the quant config; 0.33 builds nvidia/model.py everywhere)",
    "mistral-large-4": "0.34 wheel: vllm.models.mistral.mistral_large4 serves MistralLarge4ForCausalLM, which the "
                       "Mistral-format reader (transformers_utils/configs/mistral.py) builds from a params.json with "
                       "`dsa` (a MistralLarge3ForCausalLM before); the reader takes BLOCK FP8 (refused before); "
                       "importing the model on XPU / CPU raises",
    "pixtral-mistral-regex": "0.34 wheel: pixtral.py's hf_to_vllm_mapper gains regexes renaming the vision "
                             "encoder's consolidated leaves (wq / wk / wv / wo, w1 / w2 / w3) as its load_weights "
                             "does in every release",
    "radio-transformers-tree": "0.34 wheel: radio.py's RadioModel mirrors transformers' RadioModel (vision_model."
                               "encoder.layer.N.attention.qkv / proj, embeddings.patch_projection; its "
                               "hf_to_vllm_mapper renames NVIDIA's remote-code names onto it); 0.33 builds "
                               "RadioInternVisionModel (vision_model.model.encoder.layers.N.attn.qkv, "
                               "model.patch_generator.embedder)",
    "dsv4-grouped-wo-a": "0.34 wheel: DeepSeek-V4's attention builds wo_a as DeepseekV4GroupedWoA (a "
                         "ColumnParallelLinear, models/deepseek_v4/common/grouped_wo_a.py), whose class name a "
                         "compressed-tensors 'Linear' target does not match",
}


class RuleProfile(NamedTuple):
    name: str
    vllm: str
    includes: frozenset[int]          # PULL_REQUESTS keys
    summary: str
    changes: frozenset[str] = frozenset()  # WHEEL_CHANGES keys

    def has(self, change: int | str) -> bool:
        return change in (self.changes if isinstance(change, str) else self.includes)


def _release(name: str, base: RuleProfile | None, adds: tuple[int | str, ...], summary: str) -> RuleProfile:
    """A profile is its predecessor plus what the release added."""
    prs = (base.includes if base else frozenset()) | {c for c in adds if isinstance(c, int)}
    changes = (base.changes if base else frozenset()) | {c for c in adds if isinstance(c, str)}
    return RuleProfile(name, name, prs, summary, changes)


_V025 = _release("0.25", None, (43958, 43645), "XPU W8A16 default (#43645); Marlin first in the CUDA FP8 table")
_V026 = _release("0.26", _V025, (47516, "quark-moe-exclude", "nvfp4-per-token", "attn-sliding-window",
                                 "attn-selector-pcp", "xpu-mm-prefix-flash-attn",
                                 "transformers-backend-026"),
                 "before #50787: XPU block FP8 goes to W8A16 and fails to find a kernel")
_V027 = _release("0.27", _V026, ("rocm-cdna3-wording", "xpu-quant-allowlist", "modelopt-min-80", "inc-mx-fp",
                                 "fa-fp8-kv", "attention-backends-027", "moe-backend-batched-triton"),
                 "as 0.26 but for one ROCm message; XPU's quantization allow-list; FlashAttention's FP8 KV checks")
_V028 = _release("0.28", _V027, (49664, 49932, 50787, 50826, "b12x", "humming-installed", "rocm-inc",
                                 "quark-per-block", "online-tp-amax", "mxfp8-backend-fallback",
                                 "bitsandbytes-removed", "cpu-mla", "attn-adaptive-verification", "nvfp4-4over6-kv",
                                 "dots3-note"),
                 "XPU block FP8 routes to W8A8 / XPUFp8BlockScaledMMKernel; Torch kernels on XPU")
_V029 = _release("0.29", _V028, ("marlin-late", "torch-fp8-support", 47434, "pbwo-padding", "mxfp8-trtllm",
                                 "fa4-hd256", "attn-selector-dcp", "attn-import-error-text", "cpu-amx-mla",
                                 "moe-block-refine", "ct-wna16-moe-wording", "transformers-backend-029",
                                 "trtllm-swiglu-clamp", "qwen4exp", "hy-v4", "moe-backend-029"),
                 "Marlin's cc >= 89 gate removed: sm89 block FP8 routes to Marlin; AutoRound block FP8; FusedMoE "
                 "block refinement")
_V030 = _release("0.30", _V029, (49381, "xpu-moe-wna16", "quark-fp8-keys", "inc-bits-5-7", "cpu-router",
                                 "attn-selector-rswa", "attn-composite", "flashinfer-mla-sparse-sm90", "mla-d512",
                                 "flashinfer-mla-sparse-nope",
                                 "flashinfer-sm90-sinks", "nvfp4-ds-mla", "rocm-kv-dtype-hint",
                                 "rocm-aiter-mla-sparse-sinks",
                                 "attention-backends-030", "cpu-moe-deepseek-routing", "glm5next",
                                 "trtllm-swiglu-block", "moe-backend-030"),
                 "as 0.29 for FP8 linear layers; ModelOpt's generic method; the mm-prefix composite backends")
_V031 = _release("0.31", _V030, ("cpu-fp8", "cutlass-fp8-check", "online-fp8-redirect", "mxfp8-shape",
                                 "glm4-moe-gate-linear", "bailing-gate-linear", "fa4-sm90-d512-fp8-kv",
                                 "sm90-fp8-kv-mm-prefix",
                                 "xpu-batch-invariant", "triton-flash-attn-fa3", "flashmla-sparse-d512",
                                 "attention-backends-031", "cpu-moe-w8a8", "moe-block-pad"),
                 "CPU FP8 kernels (AMX-FP8 W8A8, per-tensor, block); Cutlass FP8 refuses below sm89")
_V032 = _release("0.32", _V031, ("humming-priority", "xpu-fp8-per-channel", "xpu-flash-attn-mla",
                                 "rocm-attn-no-mm-prefix", "ultraquant", "flashmla-sparse-d512-fp8",
                                 "attention-backends-032", "ct-moe-ckpt-leaves", "glm5-sm100-fp8-kv",
                                 "transformers-backend-032", "moe-backend-032"),
                 "Humming ahead of Marlin on sm90")
_V033 = _release("0.33", _V032, ("cpu-fp8-channel", "modelopt-exclude-modules", "mxfp8-torch", "kv-quant-mode",
                                 "xpu-fa-d512", "xpu-triton-flash-attn", "cpu-attn-kv-check", "rocm-octave",
                                 "flash-attn-mla-sparse-fa4", "attention-backends-033", "aiter-moe-split",
                                 "deepgemm-moe-exclusion", "glm5next-sm100-fp8-kv", "mimo-v2-kv-chunks",
                                 "kimi-xpu-amd-linear", "bailing-v3-replicated-gate", "kimi-k3-rocm",
                                 "moe-backend-033"),
                 "CPU channel-wise FP8 kernel; AITER's FusedMoE classes split")

_V034 = _release("0.34", _V033, ("xpu-fp8-per-token", "w4afp8", "fp-quant-removed", "ptpc-w8a16-refused",
                                 "cutlass-block-wording", "fa-fp8-kv-wording", "attention-backends-034",
                                 "attention-type-strenum", "mla-sliding-window-kv", "moe-oracle-wording",
                                 "cpu-requires-triton", "extensible-kv-cache", "transformers-backend-034",
                                 "glm5next-fused-conv", "dsv4-grouped-wo-a",
                                 "qwen4exp-indexer-alike", "step5-rocm", "mistral-large-4",
                                 "diffkv-head-size-v", "bailing-v3-swiglustep", "plamo3-head-quant",
                                 "muse-spark-rename", "radio-transformers-tree", "pixtral-mistral-regex",
                                 "glm5next-mega-moe"),
                 "XPU per-token FP8 activations; w4afp8; the extensible KV cache (utilization 1.0 on CUDA/ROCm); "
                 "x86 CPUs require triton-cpu")
PROFILES: tuple[RuleProfile, ...] = (_V034, _V033, _V032, _V031, _V030, _V029, _V028, _V027, _V026, _V025)
LATEST = PROFILES[0]
# The profiles whose every attention backend class was read (fp8check.kernels.attention_backends); the others follow
# them through the changes above, and their attention rejections are marked as fp8check's inference.
ATTENTION_READ = frozenset({"0.28", "0.33", "0.34"})


def installed_vllm_version() -> str | None:
    """The vLLM installed in this environment, from its distribution metadata (vLLM itself is not imported)."""
    from importlib import metadata  # noqa: PLC0415

    try:
        return metadata.version("vllm")
    except metadata.PackageNotFoundError:
        return None


# A release as vLLM versions it: major.minor, an optional patch, then pre-release, dev, post and local parts
# (0.27.1, v0.26, 0.33.1rc1, 0.34.0.dev12+g0123abc).
_RELEASE = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[._-]?(?:a|b|rc|dev|post)\d*)*(?:\+[a-z0-9._]+)?")
LATEST_NAMES = ("latest", "newest", "main")
AUTO = "auto"            # --vllm's default: the installed vLLM where there is one, else latest
INSTALLED = "installed"


class NewerRelease(InputError):
    """The installed vLLM is newer than every profile: no rule profile can speak for it. The CLI answers with
    vLLM's own code instead (`crosscheck`) where vLLM is importable, and shows this one line where it is not."""

    def __init__(self, message: str, version: str):
        super().__init__(message)
        self.version = version


def known_releases() -> str:
    """What --vllm accepts, for error messages: latest and every profile, newest first."""
    return ", ".join(("latest",) + tuple(p.name for p in PROFILES))


def select_profile(version: str | None, option: str = "--vllm") -> RuleProfile:
    """`--vllm` accepts 'latest', 'installed' (the vLLM in this environment), 'auto' (installed where vLLM is,
    else latest; the default), a profile name, or a release such as 0.27.1 / v0.26 (patches map to the minor).
    The installed release is kept in the profile's `vllm` ("0.34.1") so every header says which one answered.
    A release fp8check has no profile for, older than the oldest or newer than the newest, is an InputError naming
    the known ones (a NewerRelease for an installed vLLM newer than the newest). `option`: the flag the errors name
    (diff's --from and --to)."""
    asked = AUTO if version is None else version.strip().lower()
    if asked in LATEST_NAMES:
        return LATEST
    flag = option
    if asked in (AUTO, INSTALLED):
        installed = installed_vllm_version()
        if installed is None:
            if asked == AUTO:
                return LATEST
            raise InputError(f"{option} installed: vLLM is not installed in this environment (pip show vllm); "
                             f"name a release instead ({known_releases()})")
        flag, version = f"{option} {asked} (vLLM {installed} is installed)", installed
    assert version is not None  # None asks for AUTO, answered above
    match = _RELEASE.fullmatch(version.strip().lower())
    if match is None:
        raise InputError(f"{flag} {version!r}: expected latest or a vLLM release such as 0.27.1; fp8check knows "
                         f"{known_releases()} (patch releases map to their minor)")
    release, newest = (int(match[1]), int(match[2])), PROFILES[0]
    if release > _release_of(newest):
        if flag != option:
            raise NewerRelease(f"{flag}: newer than fp8check's newest rule profile {newest.name}; pass --vllm "
                               f"{newest.name} to check with {newest.name}'s rules, or upgrade fp8check", version)
        raise InputError(f"{flag} {version}: newer than fp8check's newest rule profile {newest.name}, and a new "
                         f"release may route differently; fp8check knows {known_releases()} (upgrade fp8check, or "
                         f"pass latest to check against {newest.name}'s rules)")
    for profile in PROFILES:
        if release >= _release_of(profile):
            return profile._replace(vllm=version.strip().lstrip("v")) if flag != option else profile
    raise InputError(f"{flag} {version}: fp8check has no rule profile older than {PROFILES[-1].name}; it knows "
                     f"{known_releases()} (`fp8check rules`)")


def _release_of(profile: RuleProfile) -> tuple[int, int]:
    major, minor = profile.name.split(".")
    return int(major), int(minor)


_VERSION = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


def in_range(profile: RuleProfile, introduced: str | None, fixed: str | None) -> bool:
    """Whether the release `profile` speaks for has a failure that `introduced` (its first release, such as
    "0.29.0"; None: before every profile) brought and `fixed` (the first release with the fix; None: none yet)
    removed: introduced <= release < fixed. The release is the profile's `vllm` (an installed "0.29.1", or the
    profile's name, read as its .0). fp8check.core.routing.known_issues states its ranges this way."""
    def release(version: str) -> tuple[int, int, int]:
        match = _VERSION.match(version.strip())
        if match is None:
            raise ValueError(f"not a vLLM release: {version!r}")
        return int(match[1]), int(match[2]), int(match[3] or 0)

    have = release(profile.vllm)
    return (introduced is None or have >= release(introduced)) and (fixed is None or have < release(fixed))
