"""Attention backend selection for an mm-prefix model (Gemma-3 vision-language) against vLLM 0.28.0 / 0.33.0 (and
0.30, where the composites arrive) as read from their source: Attention passes use_mm_prefix =
model_config.is_mm_prefix_lm (layers/attention/attention.py; model_type in MM_PREFIX_LM_MODELS,
transformers_utils/model_arch_config_convertor.py); validate_configuration rejects a backend without
supports_mm_prefix (v1/attention/backend.py); FlashAttention needs FA4 for it (backends/flash_attn.py, 0.31+ also
"SM90 FP8 KV with mm_prefix requires Triton"); ROCM_ATTN supports it until 0.31; CUDA 0.30+ ranks
TRITON_FLASHINFER first on sm10x and TRITON_FLASH_ATTN first on sm9x (platforms/cuda.py), composites of
backends/composite.py that take head sizes 256 and 512; XPU falls back to Triton (0.33: the Triton/FlashAttention
composite) in platforms/xpu.py.
"""

from __future__ import annotations

import pytest

from fp8check.core.checkpoint.local import open_local
from fp8check.core.records import InspectOptions
from fp8check.core.routing import attention as routing_attention
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import apply_assumptions, parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.kernels.attention import select_attention_backend
from fp8check.kernels.attention_backends import AttentionSpec, config_repr, selector_config
from fp8check.kernels.base import RoutingContext

NO_MM = "partial multimodal token full attention not supported"
FA_V4 = ("mm_prefix (PrefixLM bidirectional attention) requires FlashAttention v4, which does not resolve for this "
         "head_size")
FP8_FA_033 = "FP8 KV cache requires FA3 on SM90, FA4 with head_size=512 on SM90, or FA4 on SM100"
FP8_FA_028 = "FP8 KV cache requires FA3 on SM90 or FA4 on SM100"
HEAD = "head_size not supported"
XPU_FALLBACK = ("Flash Attention on XPU does not support multimodal prefix-LM attention. Falling back to Triton "
                "Attention backend.")
XPU_FA_ASKED = ("Using Flash Attention on XPU for a multimodal prefix-LM model because it was explicitly requested. "
                "The prefix-LM bidirectional mask cannot be applied, so image/video inputs will produce incorrect "
                "results; only use this for text-only workloads.")
XPU_COMPOSITE = ("Using the Triton/FlashAttention composite backend on XPU: batches with multimodal prefix masks run "
                 "Triton Attention, causal batches run Flash Attention.")
E5M2_FA = "FlashAttention does not support fp8_e5m2 kv-cache on this device."
GEMMA3_VL = dict(architecture="Gemma3ForConditionalGeneration", model_type="gemma3", vision="siglip",
                 text_prefix="language_model.model", ignore=("language_model.lm_head",), tie_embeddings=True,
                 hidden=512, heads=4, kv_heads=2, vision_hidden=256, vision_heads=4, layers=2)


def context(platform: str, release: str) -> RoutingContext:
    return RoutingContext(apply_assumptions(parse_platform(platform), []), select_profile(release))


def choose(platform: str, release: str, head_size: int, kv: str = "auto", requested: str | None = None,
           use_mm_prefix: bool = True, sliding_window: int | None = 512):
    spec = AttentionSpec(head_size=head_size, num_heads=8, num_kv_heads=4, kv_cache_dtype=kv,
                         sliding_window=sliding_window, use_mm_prefix=use_mm_prefix)
    return select_attention_backend(spec, context(platform, release), requested)


@pytest.mark.parametrize("release, platform, head_size, kv, backend, rejected", [
    # 0.28 CUDA: one list for every model; FLASH_ATTN below FA4 and FLASHINFER fall to TRITON_ATTN.
    ("0.28", "cuda:80", 256, "auto", "TRITON_ATTN", {"FLASH_ATTN": [NO_MM, FA_V4], "FLASHINFER": [NO_MM]}),
    ("0.28", "cuda:89", 128, "fp8", "TRITON_ATTN",
     {"FLASH_ATTN": ["kv_cache_dtype not supported", NO_MM, FP8_FA_028], "FLASHINFER": [NO_MM]}),
    ("0.28", "cuda:90", 256, "auto", "TRITON_ATTN", {"FLASH_ATTN": [FA_V4], "FLASHINFER": [NO_MM]}),
    ("0.28", "cuda:100", 256, "auto", "TRITON_ATTN", {"FLASHINFER": [NO_MM], "FLASH_ATTN": [FA_V4]}),
    ("0.28", "cuda:100", 128, "auto", "FLASH_ATTN", {"FLASHINFER": [NO_MM]}),   # FA4 resolves at 128 on sm100
    ("0.28", "rocm:gfx942", 256, "auto", "ROCM_ATTN", {}),                    # ROCM_ATTN still supports it
    # 0.30: the composites join; their causal FlashAttention needs FA4 until 0.31.
    ("0.30", "cuda:90", 256, "auto", "TRITON_ATTN",
     {"TRITON_FLASH_ATTN": ["FLASH_ATTN: causal route requires FlashAttention v4"], "FLASH_ATTN": [FA_V4],
      "FLASHINFER": [NO_MM]}),
    ("0.30", "cuda:100", 256, "fp8", "TRITON_FLASHINFER", {}),
    # 0.33 CUDA: TRITON_FLASH_ATTN heads sm9x, TRITON_FLASHINFER sm10x, both only at head sizes 256 / 512.
    ("0.33", "cuda:90", 256, "auto", "TRITON_FLASH_ATTN", {}),
    ("0.33", "cuda:90", 256, "fp8", "TRITON_FLASH_ATTN", {}),
    ("0.33", "cuda:90", 128, "auto", "TRITON_ATTN",
     {"TRITON_FLASH_ATTN": [HEAD], "FLASH_ATTN": [FA_V4], "FLASHINFER": [NO_MM]}),
    ("0.33", "cuda:90", 128, "fp8", "TRITON_ATTN",
     {"TRITON_FLASH_ATTN": [HEAD], "FLASH_ATTN": ["SM90 FP8 KV with mm_prefix requires Triton"],
      "FLASHINFER": [NO_MM]}),
    ("0.33", "cuda:100", 256, "auto", "TRITON_FLASHINFER", {}),
    ("0.33", "cuda:100", 128, "auto", "FLASH_ATTN", {"TRITON_FLASHINFER": [HEAD], "FLASHINFER": [NO_MM]}),
    ("0.33", "cuda:80", 256, "auto", "TRITON_ATTN", {"FLASH_ATTN": [NO_MM, FA_V4], "FLASHINFER": [NO_MM]}),
    ("0.33", "cuda:89", 256, "fp8", "TRITON_ATTN",
     {"FLASH_ATTN": ["kv_cache_dtype not supported", NO_MM, FP8_FA_033], "FLASHINFER": [NO_MM]}),
    ("0.33", "rocm:gfx942", 256, "auto", "TRITON_ATTN", {"ROCM_ATTN": [NO_MM]}),  # "# Not implemented" from 0.32
    # The CPU selector never looks at mm-prefix.
    ("0.28", "cpu", 256, "auto", "CPU_ATTN", {}),
    ("0.33", "cpu", 256, "fp8", "CPU_ATTN", {}),
])
def test_mm_prefix_backend_and_rejections(release, platform, head_size, kv, backend, rejected):
    choice = select_attention_backend(
        AttentionSpec(head_size=head_size, num_heads=8, num_kv_heads=4, kv_cache_dtype=kv, sliding_window=512,
                      use_mm_prefix=True), context(platform, release))
    assert (choice.backend, choice.error) == (backend, None)
    assert {r.kernel: r.reason for r in choice.rejected} == {name: ", ".join(r) for name, r in rejected.items()}


@pytest.mark.parametrize("release, platform, head_size", [
    ("0.28", "cuda:90", 256), ("0.33", "cuda:90", 256), ("0.33", "cuda:100", 256), ("0.33", "xpu", 256),
    ("0.33", "rocm:gfx942", 128),
])
def test_text_model_keeps_its_backend(release, platform, head_size):
    """The same layer without mm-prefix (Gemma3ForCausalLM): no composite, nothing rejected for mm-prefix."""
    choice = choose(platform, release, head_size, use_mm_prefix=False)
    assert choice.backend in ("FLASH_ATTN", "FLASHINFER", "ROCM_ATTN")
    assert not any(NO_MM in r.reason for r in choice.rejected)


@pytest.mark.parametrize("release, requested, head_size, kv, backend, error, note", [
    ("0.28", None, 256, "auto", "TRITON_ATTN", None, XPU_FALLBACK),
    ("0.28", "FLASH_ATTN", 256, "auto", "FLASH_ATTN", None, XPU_FA_ASKED),
    ("0.28", "FLASHINFER", 256, "auto", "TRITON_ATTN", None, XPU_FALLBACK),  # any other request: Triton too
    ("0.25", "FLASH_ATTN", 256, "auto", "TRITON_ATTN", None, XPU_FALLBACK),  # 0.25 does not honour the request
    ("0.33", None, 256, "auto", "TRITON_FLASH_ATTN", None, XPU_COMPOSITE),
    ("0.33", None, 512, "auto", "TRITON_FLASH_ATTN", None, XPU_COMPOSITE),   # XPU's FlashAttention takes 512
    ("0.33", None, 256, "fp8_e5m2", "TRITON_FLASH_ATTN", E5M2_FA, XPU_COMPOSITE),  # its FA impl refuses e5m2
    ("0.33", None, 128, "auto", "TRITON_ATTN", None, XPU_FALLBACK),
    ("0.33", "TRITON_FLASH_ATTN", 128, "auto", None,
     "TRITON_FLASH_ATTN on XPU supports head sizes [256, 512], got 128.", None),
])
def test_xpu_mm_prefix(release, requested, head_size, kv, backend, error, note):
    choice = choose("xpu", release, head_size, kv, requested)
    assert (choice.backend, choice.error) == (backend, error)
    assert choice.notes == ((note,) if note else ())


@pytest.mark.parametrize("release, platform, requested, error", [
    ("0.33", "cuda:90", "FLASHINFER", f"Selected backend AttentionBackendEnum.FLASHINFER is not valid for this "
                                      f"configuration. Reason: ['{NO_MM}']"),
    ("0.33", "cuda:80", "TRITON_FLASH_ATTN", "Selected backend AttentionBackendEnum.TRITON_FLASH_ATTN is not valid "
                                             "for this configuration. Reason: ['compute capability not supported', "
                                             "'FLASH_ATTN: causal route requires FlashAttention v3 or v4']"),
    ("0.33", "rocm:gfx942", "ROCM_ATTN", f"Selected backend AttentionBackendEnum.ROCM_ATTN is not valid for this "
                                         f"configuration. Reason: ['{NO_MM}']"),
])
def test_requested_backend_without_mm_prefix(release, platform, requested, error):
    choice = choose(platform, release, 256, requested=requested)
    assert (choice.backend, choice.error) == (None, error)


@pytest.mark.parametrize("release", ("0.28", "0.33"))
def test_no_valid_backend_repr_carries_use_mm_prefix(release):
    """Head size 16 with fp8_e5m2 on sm80: nothing is valid, and the config in vLLM's error says use_mm_prefix."""
    choice = choose("cuda:80", release, 16, "fp8_e5m2")
    assert choice.backend is None
    assert choice.error.startswith("No valid attention backend found for cuda with AttentionSelectorConfig(")
    assert "use_sparse=False, use_mm_prefix=True, use_per_head_quant_scales=False" in choice.error
    assert f"FLASHINFER: [{HEAD}, kv_cache_dtype not supported" not in choice.error
    assert f"FLASHINFER: [{HEAD}, {NO_MM}]" in choice.error


@pytest.mark.parametrize("use_mla, expected", [(False, True), (True, False)])
def test_mla_layer_never_asks_for_mm_prefix(use_mla, expected):
    """MLAAttention passes no use_mm_prefix to get_attn_backend (mla_attention.py); Attention does."""
    ctx = context("cuda:90", "0.33")
    spec = AttentionSpec(head_size=576 if use_mla else 256, num_heads=16, num_kv_heads=1, kv_cache_dtype="auto",
                         use_mla=use_mla, use_mm_prefix=True)
    cfg = selector_config(spec, ctx)
    assert cfg.use_mm_prefix is expected
    assert f"use_mm_prefix={expected}" in config_repr(cfg, ctx)


@pytest.mark.parametrize("spec, expected", [
    (GEMMA3_VL, True),                                                        # model_type gemma3, vision tower
    (dict(GEMMA3_VL, head_dim=256), True),
    (dict(architecture="Gemma3ForCausalLM", model_type="gemma3_text"), False),
    (dict(architecture="Gemma3ForCausalLM", model_type="gemma3"), False),     # gemma3 type, text-only class
    (dict(architecture="Qwen2_5_VLForConditionalGeneration", model_type="qwen2_5_vl", vision="qwen2_5_vl"), False),
    (dict(architecture="LlamaForCausalLM", model_type="llama"), False),
])
def test_mm_prefix_lm(make_checkpoint, spec, expected):
    assert routing_attention.mm_prefix_lm(open_local(make_checkpoint(**spec))) is expected


@pytest.mark.parametrize("release, platform, head_dim, backend", [
    ("0.28", "cuda:90", 256, "TRITON_ATTN"),
    ("0.33", "cuda:90", 256, "TRITON_FLASH_ATTN"),
    ("0.33", "cuda:100", 256, "TRITON_FLASHINFER"),
    ("0.33", "cuda:100", 128, "FLASH_ATTN"),
    ("0.33", "rocm:gfx942", 128, "TRITON_ATTN"),
    ("0.33", "xpu", 256, "TRITON_FLASH_ATTN"),
])
def test_inspect_gemma3_vision_layers(make_checkpoint, release, platform, head_dim, backend):
    """Every text-model attention layer of a Gemma-3 VLM asks for mm-prefix; the SigLIP tower builds none."""
    folder = make_checkpoint(**dict(GEMMA3_VL, head_dim=head_dim))
    report = inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), select_profile(release)))
    assert [a.name for a in report.attention] == [f"language_model.model.layers.{i}.self_attn.attn" for i in (0, 1)]
    assert {a.backend for a in report.attention} == {backend}
    assert not any(a.errors for a in report.attention)
