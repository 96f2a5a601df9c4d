"""Attention backend selection (fp8check.kernels.attention) against vLLM 0.28.0 / 0.33.0 / 0.34.0 as read from their
source (and the releases between for the profile change that moved a rule):
vllm/platforms/{cuda,rocm,xpu,cpu}.py get_attn_backend_cls, vllm/v1/attention/backend.py validate_configuration,
each backend class under vllm/v1/attention/backends/, and fa_utils.py for the FlashAttention version.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from fp8check.core.targets.platforms import apply_assumptions, parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.kernels import attention_backends as backends
from fp8check.kernels.attention import select_attention_backend
from fp8check.kernels.attention_backends import ATTENTION_BACKEND_NAMES, BACKENDS, AttentionSpec, flash_attn_version
from fp8check.kernels.base import RoutingContext

RELEASES = ("0.28", "0.33", "0.34")
KV_DTYPES = ("auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2")
DENSE = dict(head_size=128, num_heads=32, num_kv_heads=8)          # Llama-3-8B per rank
MLA = dict(head_size=576, num_heads=16, num_kv_heads=1, use_mla=True)  # DeepSeek-V3: kv_lora_rank 512 + rope 64
NO_BACKEND = "No valid attention backend found for "
TRITON_SM89 = ("FP8 KV cache is not supported by the Triton MLA backend on {label} (compute capability {cap}); "
               "native FP8 (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype bfloat16.")
E5M2_FA = "FlashAttention does not support fp8_e5m2 kv-cache on this device."
# FlashAttentionBackend.supports_combination's FP8-KV refusal, per release (flash_attn.py).
_FA_D512 = "FP8 KV cache requires FA3 on SM90, FA4 with head_size=512 on SM90, or FA4 on SM100"  # fa4-sm90-d512-fp8-kv
FA_FP8_KV = {"0.27": "FP8 KV cache requires FA3 on SM90 or FA4 on SM100",
             "0.28": "FP8 KV cache requires FA3 on SM90 or FA4 on SM100", "0.31": _FA_D512, "0.33": _FA_D512,
             "0.34": "FP8 KV requires FA3 (SM90), equal-d512 FA4 (SM90), or FA4 (SM100)."}  # fa-fp8-kv-wording


def context(platform: str, release: str, *assume: str) -> RoutingContext:
    return RoutingContext(apply_assumptions(parse_platform(platform), list(assume)), select_profile(release))


def choose(platform: str, release: str, requested: str | None = None, *assume: str,
           **spec) -> backends.AttentionChoice:
    return select_attention_backend(AttentionSpec(**spec), context(platform, release, *assume), requested)


def dense_expected(platform: str, kv: str) -> tuple[str, str | None]:
    """The dense outcome (backend, error) the sources give; the same in 0.28 and 0.33."""
    quantized = kv.startswith("fp8")
    if platform == "xpu":   # no validation loop; FlashAttentionImpl.__init__ refuses e5m2
        return "FLASH_ATTN", E5M2_FA if kv == "fp8_e5m2" else None
    if platform == "cpu":   # AMX assumed
        return "CPU_ATTN", None
    if platform == "rocm:gfx942":  # ROCM_ATTN heads the list and takes every fp8 flavour
        return "ROCM_ATTN", None
    if platform == "cuda:100":     # FLASHINFER first on sm100
        return "FLASHINFER", None
    if platform == "cuda:90":      # FA3 takes fp8 / fp8_e4m3, never e5m2
        return ("FLASHINFER" if kv == "fp8_e5m2" else "FLASH_ATTN"), None
    return ("FLASHINFER" if quantized else "FLASH_ATTN"), None  # FA2 (sm80/86/89) refuses any FP8 cache


def mla_expected(platform: str, kv: str, release: str) -> tuple[str | None, str | None]:
    quantized = kv.startswith("fp8")
    if platform == "xpu":
        if release == "0.28":      # MLA goes straight to TRITON_MLA
            return "TRITON_MLA", None
        return ("TRITON_MLA" if quantized else "FLASH_ATTN_MLA"), None  # XPUFlashAttnMLABackend lists no fp8
    if platform == "cpu":
        if release == "0.28":
            return "CPU_MLA", None
        if quantized:
            return None, f"--kv-cache-dtype {kv} is not supported by MLA attention on CPU."
        return "AMX_MLA", None     # AMX host: AMX_MLA ahead of CPU_MLA
    if kv == "fp8_e5m2":           # no CUDA or ROCm MLA backend lists e5m2 (ROCM_AITER_MLA needs AITER on)
        return None, NO_BACKEND
    if platform == "rocm:gfx942":
        return "TRITON_MLA", None
    if platform == "cuda:100":
        return "FLASHINFER_MLA", None
    if platform == "cuda:90":
        return ("FLASHMLA" if quantized else "FLASH_ATTN_MLA"), None
    if quantized and platform in ("cuda:80", "cuda:86"):
        cap = f"{platform[5]}.{platform[6]}"
        return "TRITON_MLA", TRITON_SM89.format(label=platform, cap=cap)
    return "TRITON_MLA", None


PLATFORMS = ("xpu", "cpu", "cuda:80", "cuda:86", "cuda:89", "cuda:90", "cuda:100", "rocm:gfx942")


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("kv", KV_DTYPES)
def test_dense_backend_per_platform_and_kv_dtype(release, platform, kv):
    choice = choose(platform, release, kv_cache_dtype=kv, **DENSE)
    assert (choice.backend, choice.error) == dense_expected(platform, kv)


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("kv", KV_DTYPES)
def test_mla_backend_per_platform_and_kv_dtype(release, platform, kv):
    choice = choose(platform, release, kv_cache_dtype=kv, **MLA)
    backend, error = mla_expected(platform, kv, release)
    assert choice.backend == backend
    if error == NO_BACKEND:
        assert choice.error.startswith(NO_BACKEND + platform.split(":")[0] + " with AttentionSelectorConfig(")
        assert all("kv_cache_dtype not supported" in r.reason for r in choice.rejected if "MLA" in r.kernel)
    else:
        assert choice.error == error


def test_cuda_error_is_vllms_verbatim_with_every_rejection_in_priority_order():
    choice = choose("cuda:90", "0.28", kv_cache_dtype="fp8_e5m2", **MLA)
    assert choice.error == (
        "No valid attention backend found for cuda with AttentionSelectorConfig(head_size=576, dtype=torch.bfloat16, "
        "kv_cache_dtype=fp8_e5m2, block_size=None, use_mla=True, has_sink=False, use_sparse=False, "
        "use_mm_prefix=False, use_per_head_quant_scales=False, attn_type=AttentionType.DECODER, "
        "has_sliding_window=False, use_non_causal=False, use_batch_invariant=False, use_kv_connector=False, "
        "use_adaptive_verification=False, use_pcp=False). Reasons: {FLASH_ATTN_MLA: [kv_cache_dtype not supported], "
        "FLASHMLA: [kv_cache_dtype not supported], FLASHINFER_MLA: [kv_cache_dtype not supported, compute capability "
        "not supported], TRITON_MLA: [kv_cache_dtype not supported], FLASH_ATTN_MLA_SPARSE: [kv_cache_dtype not "
        "supported, non-sparse not supported, FlashAttention MLA Sparse currently supports only FP16/BF16 KV cache], "
        "FLASHMLA_SPARSE: [kv_cache_dtype not supported, non-sparse not supported]}.")
    assert [r.kernel for r in choice.rejected] == ["FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA",
                                                   "FLASH_ATTN_MLA_SPARSE", "FLASHMLA_SPARSE"]
    # 0.33 adds use_dcp / use_rswa to the repr and FLASHINFER_MLA_SPARSE_SM90 to the sm90 MLA list.
    later = choose("cuda:90", "0.33", kv_cache_dtype="fp8_e5m2", **MLA).error
    assert "use_pcp=False, use_dcp=False, use_rswa=False). Reasons: {" in later
    assert later.endswith("FLASHINFER_MLA_SPARSE_SM90: [kv_cache_dtype not supported, non-sparse not supported, "
                          "FLASHINFER_MLA_SPARSE_SM90 requires sparse MLA]}.")


@pytest.mark.parametrize("release, hint", [
    ("0.28", ""),
    ("0.33", " Supported kv_cache_dtype values: auto, bfloat16, float16, fp8, fp8_e4m3."),
])
def test_rocm_error_appends_the_dtypes_the_rejecting_backends_accept(release, hint):
    error = choose("mi300x", release, kv_cache_dtype="fp8_e5m2", **MLA).error
    assert error.startswith("No valid attention backend found for rocm with AttentionSelectorConfig(head_size=576")
    assert error.endswith("Reasons: {TRITON_MLA: [kv_cache_dtype not supported]}." + hint)


@pytest.mark.parametrize("release, decoder", [("0.33", "AttentionType.DECODER"), ("0.34", "decoder")])
def test_rocm_aiter_puts_its_mla_backend_first_which_takes_e5m2(release, decoder):
    """0.34's AttentionType is a StrEnum: its messages print the member's value (attention-type-strenum)."""
    choice = choose("mi300x", release, None, "aiter=yes", kv_cache_dtype="fp8_e5m2", **MLA)
    assert (choice.backend, choice.error) == ("ROCM_AITER_MLA", None)
    assert choice.notes == (f"Found incompatible backend(s) [TRITON_MLA] with {decoder}. Overriding with "
                            "ROCM_AITER_MLA out of potential backends: ['ROCM_AITER_MLA', 'ROCM_AITER_TRITON_MLA'].",)
    error = choose("cuda:90", release, kv_cache_dtype="fp8_e5m2", **MLA).error
    assert f"use_per_head_quant_scales=False, attn_type={decoder}, has_sliding_window=False" in error


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("platform, assume, backend, error", [
    # Without FlashInfer the FP8 cache falls to Triton: fine on sm89, the SM89 ValueError below it.
    ("l40s", ("flashinfer=no",), "TRITON_ATTN", None),
    ("a100", ("flashinfer=no",), "TRITON_ATTN",
     "FP8 KV cache is not supported by the Triton attention backend on a100 (cuda:80) (compute capability 8.0); "
     "native FP8 (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype bfloat16."),
    ("t4", (), "TRITON_ATTN",   # FLASH_ATTN and FLASHINFER both need sm80
     "FP8 KV cache is not supported by the Triton attention backend on t4 (cuda:75) (compute capability 7.5); "
     "native FP8 (fp8e4nv) requires SM89+. Re-run with --kv-cache-dtype float16."),
])
def test_without_flashinfer_fp8_falls_to_triton(release, platform, assume, backend, error):
    choice = choose(platform, release, None, *assume, kv_cache_dtype="fp8", **DENSE)
    assert (choice.backend, choice.error) == (backend, error)
    assert choice.rejected[0].kernel == "FLASH_ATTN"


@pytest.mark.parametrize("release, reason", [("0.28", "ImportError"),
                                             ("0.33", "ModuleNotFoundError: No module named 'flashinfer'")])
def test_an_uninstalled_backend_is_rejected_as_the_release_words_it(release, reason):
    choice = choose("a100", release, None, "flashinfer=no", kv_cache_dtype="fp8", **DENSE)
    assert [(r.kernel, r.reason) for r in choice.rejected][1] == ("FLASHINFER", reason)


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("platform, requested, kv, backend, error", [
    ("h100", "FLASHINFER", "fp8", "FLASHINFER", None),
    ("h100", "flashinfer", "fp8", "FLASHINFER", None),           # vLLM upper-cases the flag
    ("h100", "auto", "fp8", "FLASH_ATTN", None),                 # auto: no selection
    ("a100", "FLASH_ATTN", "fp8", None,
     "Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration. Reason: "
     "['kv_cache_dtype not supported', '{fa_fp8}']"),
    ("h100", "TRITON_ATTN", "fp8_e5m2", "TRITON_ATTN", None),
    ("mi300x", "TRITON_ATTN", "fp8", "TRITON_ATTN", None),
    ("mi300x", "FLEX_ATTENTION", "fp8", None,
     "Selected backend AttentionBackendEnum.FLEX_ATTENTION is not valid for this configuration. Reason: "
     "['kv_cache_dtype not supported']"),
    ("xpu", "TRITON_ATTN", "fp8_e5m2", "TRITON_ATTN", None),     # Triton on XPU has no e5m2 guard
    ("xpu", "FLASHINFER", "auto", None, "Invalid attention backend for xpu, with use_mla: False"),
    ("cpu", "FLASH_ATTN", "auto", "CPU_ATTN", None),             # CPU logs and ignores it
])
def test_explicit_attention_backend(release, platform, requested, kv, backend, error):
    choice = choose(platform, release, requested, kv_cache_dtype=kv, **DENSE)
    assert (choice.backend, choice.error) == (backend, error and error.format(fa_fp8=FA_FP8_KV[release]))


def test_explicit_backend_notes_are_vllms_logs():
    assert choose("h100", "0.33", "FLASHINFER", kv_cache_dtype="fp8", **DENSE).notes == (
        "Using AttentionBackendEnum.FLASHINFER backend.",)
    assert choose("mi300x", "0.33", "TRITON_ATTN", kv_cache_dtype="fp8", **DENSE).notes == (
        "Using TRITON_ATTN backend (selected via --attention-backend).",)
    assert choose("cpu", "0.33", "FLASH_ATTN", kv_cache_dtype="auto", **DENSE).notes == (
        "Cannot use AttentionBackendEnum.FLASH_ATTN backend on CPU.",)


def test_unknown_attention_backend_is_the_enums_error():
    error = choose("h100", "0.33", "flash", kv_cache_dtype="auto", **DENSE).error
    assert error.startswith("Unknown attention backend: 'FLASH'. Valid options are: FLASH_ATTN, FLASH_ATTN_DIFFKV, ")
    assert error.endswith(", ULTRAQUANT, CUSTOM")
    # FLASHINFER_MLA_SPARSE_SM90 joined the enum in 0.30: 0.28 refuses the name itself.
    assert choose("h100", "0.28", "FLASHINFER_MLA_SPARSE_SM90", kv_cache_dtype="auto", **MLA).error.startswith(
        "Unknown attention backend: 'FLASHINFER_MLA_SPARSE_SM90'. Valid options are: FLASH_ATTN, ")
    assert choose("h100", "0.33", "FLASHINFER_MLA_SPARSE_SM90", kv_cache_dtype="auto", **MLA).error.startswith(
        "Selected backend AttentionBackendEnum.FLASHINFER_MLA_SPARSE_SM90 is not valid for this configuration.")


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("platform, requested, backend, error", [
    ("xpu", "FLASH_ATTN_MLA", "FLASH_ATTN_MLA", None),
    ("xpu", "TRITON_MLA", "TRITON_MLA", None),
    ("xpu", "FLASHMLA", None, "Invalid attention backend for xpu, with use_mla: True"),
])
def test_explicit_backend_on_xpu_mla(release, platform, requested, backend, error):
    choice = choose(platform, release, requested, kv_cache_dtype="auto", **MLA)
    if release == "0.28":   # 0.28 ignores the flag for MLA: always TRITON_MLA
        backend, error = "TRITON_MLA", None
    assert (choice.backend, choice.error) == (backend, error)


def test_xpu_flash_attn_mla_refuses_fp8_loudly_when_asked_and_falls_back_otherwise():
    asked = choose("xpu", "0.33", "FLASH_ATTN_MLA", kv_cache_dtype="fp8", **MLA)
    assert asked.error == "FlashAttnMLA on XPU is not valid for this configuration: ['kv_cache_dtype not supported']"
    fallback = choose("xpu", "0.33", kv_cache_dtype="fp8", **MLA)
    assert fallback.notes == ("FlashAttnMLA on XPU is not valid for this configuration (('kv_cache_dtype not "
                              "supported',)); falling back to Triton MLA backend.",)


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("platform, backend, error, refusal", [
    ("h100", "FLASH_ATTN", None, None),                          # FA3
    ("b200", "FLASH_ATTN", None, "per-head quant scales not supported"),  # FA4 also has them; FLASHINFER refuses
    ("l40s", None, NO_BACKEND, "per-head quant scales not supported"),    # FA2 has none, nor has anything else
    ("mi300x", None, NO_BACKEND, "per-head quant scales not supported"),
])
def test_per_head_kv_scales_need_flash_attention_3_or_later(release, platform, backend, error, refusal):
    choice = choose(platform, release, kv_cache_dtype="fp8", per_head_scales=True, **DENSE)
    assert choice.backend == backend
    assert (choice.error or "").startswith(error or "")
    if refusal:
        assert refusal in choice.rejected[0].reason
    if error:
        assert "use_per_head_quant_scales=True" in choice.error


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("platform, backend, fa_reason", [
    ("a100", "TRITON_ATTN", "attention sinks not supported, sink not supported on compute capability < 9.0"),
    ("h100", "FLASH_ATTN", None),                                # FA3 serves sinks
    ("b200", "FLASHINFER", None),                                # TRT-LLM attention serves sinks on sm100
    ("mi300x", "TRITON_ATTN", None),                             # ROCM_ATTN has no sinks
])
def test_attention_sinks(release, platform, backend, fa_reason):
    choice = choose(platform, release, kv_cache_dtype="auto", has_sink=True, sliding_window=128, **DENSE)
    assert (choice.backend, choice.error) == (backend, None)
    if fa_reason:
        assert choice.rejected[0] == backends.Rejection("FLASH_ATTN", fa_reason)
    if platform == "mi300x":
        assert choice.rejected[0] == backends.Rejection("ROCM_ATTN", "attention sinks not supported")


@pytest.mark.parametrize("release, field", [("0.25", ""), ("0.28", "has_sliding_window=True, "),
                                            ("0.33", "has_sliding_window=True, "),
                                            ("0.34", "has_sliding_window=True, ")])
def test_sliding_window_reaches_the_selector_of_dense_layers_and_from_034_of_mla(release, field):
    ctx = context("l40s", release)
    dense = backends.selector_config(AttentionSpec(kv_cache_dtype="auto", sliding_window=4096, **DENSE), ctx)
    decoder = "decoder" if release == "0.34" else "AttentionType.DECODER"  # 0.34's StrEnum (attention-type-strenum)
    assert f"attn_type={decoder}, {field}use_non_causal=False" in backends.config_repr(dense, ctx)
    mla = backends.selector_config(AttentionSpec(kv_cache_dtype="auto", sliding_window=4096, has_sink=True,
                                                  per_head_scales=True, **MLA), ctx)
    assert not (mla.has_sink or mla.use_per_head_quant_scales)  # MLAAttention passes neither
    assert mla.has_sliding_window is (release == "0.34")         # mla-sliding-window-kv


def test_sliding_window_refusal_is_listed():
    choice = choose("l40s", "0.33", kv_cache_dtype="fp8_e5m2", sliding_window=4096, per_head_scales=True, **DENSE)
    assert dict((r.kernel, r.reason) for r in choice.rejected)["TURBOQUANT"] == (
        "kv_cache_dtype not supported, per-head quant scales not supported, sliding window not supported")


@pytest.mark.parametrize("platform, release, head_size, kv, version", [
    ("a100", "0.33", 128, "auto", 2),
    ("l40s", "0.28", 128, "auto", 2),
    ("h100", "0.28", 128, "auto", 3),
    ("h100", "0.33", 512, "auto", 4),      # "FA3 does not support head_size=512 on SM90: upgrading ... 3 -> 4"
    ("b200", "0.33", 128, "auto", 4),
    ("b200", "0.28", 256, "auto", 2),      # 0.28: FA4 disabled for head 256 on Blackwell
    ("b200", "0.33", 256, "auto", 4),      # 0.33: the hd256 kernel ...
    ("b200", "0.33", 256, "fp8", 2),       # ... but not with a quantized cache
    ("b200", "0.33", 192, "auto", 2),      # TMEM limit
    ("rtx5090", "0.33", 128, "auto", 2),
    ("t4", "0.33", 128, "auto", None),     # no FA below sm80
    ("xpu", "0.33", 128, "auto", 2),
    ("mi300x", "0.33", 128, "auto", None),
])
def test_flash_attention_version(platform, release, head_size, kv, version):
    assert flash_attn_version(context(platform, release), head_size, head_size, fa4_hd256=True,
                              kv_cache_dtype=kv) == version


@pytest.mark.parametrize("release, backend", [("0.28", "FLASHINFER"), ("0.33", "FLASH_ATTN")])
def test_fa4_on_sm90_takes_fp8_at_head_size_512_from_0_31(release, backend):
    spec = dict(DENSE, head_size=512)
    assert choose("h100", release, kv_cache_dtype="fp8", **spec).backend == backend


@pytest.mark.parametrize("release, backend, error", [
    ("0.28", "CPU_ATTN", "FP8 KV cache on CPU requires x86 with AVX-512 or AMX."),   # after selection
    ("0.33", None, "--kv-cache-dtype fp8 is not supported by the CPU attention backend on this host."),
])
def test_cpu_host_without_fp8_isa(monkeypatch, release, backend, error):
    monkeypatch.setattr(backends, "CPU_AVX512", False)
    choice = choose("cpu", release, None, "cpu_amx=no", kv_cache_dtype="fp8", **DENSE)
    assert (choice.backend, choice.error) == (backend, error)


@pytest.mark.parametrize("release", RELEASES)
def test_cpu_fp8_needs_head_size_divisible_by_32(release):
    choice = choose("cpu", release, kv_cache_dtype="fp8", head_size=80, num_heads=32, num_kv_heads=8)
    assert (choice.backend, choice.error) == ("CPU_ATTN", "FP8 KV cache requires head_size divisible by 32 on CPU.")
    assert choose("cpu", release, kv_cache_dtype="auto", head_size=80, num_heads=32, num_kv_heads=8).error is None


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("platform, kv, backend, error", [
    ("cpu", "auto", None, "Sparse Attention is not supported on CPU."),
    ("xpu", "auto", "XPU_MLA_SPARSE", None),
    ("h100", "auto", "FLASH_ATTN_MLA_SPARSE", None),
    ("h100", "fp8", "FLASHMLA_SPARSE", None),      # fp8 is FlashMLA sparse's alias for fp8_ds_mla
    ("b200", "fp8", "FLASHINFER_MLA_SPARSE", None),
])
def test_sparse_mla(release, platform, kv, backend, error):
    choice = choose(platform, release, kv_cache_dtype=kv, use_sparse=True, **MLA)
    assert (choice.backend, choice.error) == (backend, error)


def test_a_release_between_the_read_ones_marks_its_rejections_unverified():
    assert all(r.verified for r in choose("a100", "0.28", kv_cache_dtype="fp8", **DENSE).rejected)
    assert not any(r.verified for r in choose("a100", "0.30", kv_cache_dtype="fp8", **DENSE).rejected)


@pytest.mark.parametrize("platform, backend, fa_reason", [
    ("h100", "FLASH_ATTN", None),
    ("a100", "FLASHINFER", "kv_cache_dtype not supported"),   # no "FP8 KV cache requires FA3 ..." before 0.27
])
def test_flash_attention_fp8_in_0_25(platform, backend, fa_reason):
    choice = choose(platform, "0.25", kv_cache_dtype="fp8", **DENSE)
    assert choice.backend == backend
    assert [r.reason for r in choice.rejected] == ([fa_reason] if fa_reason else [])


def test_every_backend_class_is_an_enum_member_and_cites_its_file():
    assert set(BACKENDS) <= set(ATTENTION_BACKEND_NAMES)
    assert all(cls.source.startswith("vllm/") for cls in BACKENDS.values())


# ----------------------------------------------------------------- what each release changed (profile changes)

def reasons_of(choice: backends.AttentionChoice) -> dict[str, str]:
    return {r.kernel: r.reason for r in choice.rejected}


@pytest.mark.parametrize("release", sorted(FA_FP8_KV))
def test_flash_attention_fp8_kv_refusal_in_each_releases_words(release):
    # a100: FA2 takes no FP8 cache. FLASH_ATTN is refused in its release's words, then FLASHINFER takes the layer.
    choice = choose("a100", release, kv_cache_dtype="fp8", **DENSE)
    assert choice.backend == "FLASHINFER"
    assert reasons_of(choice)["FLASH_ATTN"] == f"kv_cache_dtype not supported, {FA_FP8_KV[release]}"


def test_flash_attention_fp8_kv_refusal_reaches_inspect(make_checkpoint):
    from fp8check.core.checkpoint.local import open_local
    from fp8check.core.records import InspectOptions
    from fp8check.core.routing.inspect import inspect_checkpoint

    folder = make_checkpoint(quant="fp8-block", data="sparse")
    for release in ("0.33", "0.34"):
        options = InspectOptions(parse_platform("a100"), select_profile(release), kv_cache_dtype="fp8",
                                 attention_backend="FLASH_ATTN")
        layers = inspect_checkpoint(open_local(folder), options).attention
        assert layers and all(layer.errors[0].endswith(f"'{FA_FP8_KV[release]}']") for layer in layers)


@pytest.mark.parametrize("release", ["0.33", "0.34"])
def test_sm90_head_512_fp8_kv_refusals_from_034(release):
    """fa-fp8-kv-wording: on SM90 an FP8 cache at head_size 512 (FA4's dequantizing path) refuses a block size not
    divisible by 64 and block sparsity (flash_attn.py supports_combination, before every other check)."""
    new = release == "0.34"
    d512 = dict(DENSE, head_size=512)
    paged = choose("h100", release, "FLASH_ATTN", kv_cache_dtype="fp8", block_size=16, **d512)
    # (vLLM's get_supported_kernel_block_sizes also asks for 64 here, "block_size not supported": not modelled.)
    assert ("SM90 d512 FP8 KV requires a block size divisible by 64" in (paged.error or "")) is new
    assert choose("h100", release, "FLASH_ATTN", kv_cache_dtype="fp8", block_size=64, **d512).error is None
    assert choose("h100", release, "FLASH_ATTN", kv_cache_dtype="auto", block_size=16, **d512).error is None
    sparse = choose("h100", release, "FLASH_ATTN", kv_cache_dtype="fp8", use_sparse=True, **dict(MLA, head_size=512))
    assert sparse.error == ("Selected backend AttentionBackendEnum.FLASH_ATTN is not valid for this configuration. "
                            "Reason: ['MLA not supported', 'sparse not supported'"
                            + (", 'SM90 d512 FP8 KV does not support block sparsity']" if new else "]"))


@pytest.mark.parametrize("release", ["0.33", "0.34"])
def test_the_034_backends_are_in_the_enum_of_034_only(release):
    names = backends.attention_backend_names(context("b200", release))
    new = ("FLASHINFER_TS", "KIMI_K3_KV_BALANCED_MLA")
    assert all((name in names) is (release == "0.34") for name in new)
    error = choose("b200", release, "nope", kv_cache_dtype="auto", **DENSE).error
    assert error == f"Unknown attention backend: 'NOPE'. Valid options are: {', '.join(names)}"
    if release == "0.34":   # registry.py's order: after FLASHINFER, after STEP5_DSA
        assert "FLASHINFER, FLASHINFER_TS, TRITON_FLASHINFER" in error and len(names) == 52
        assert "STEP5_DSA, KIMI_K3_KV_BALANCED_MLA, NO_ATTENTION" in error
    else:
        assert len(names) == 50
        assert choose("b200", release, "FLASHINFER_TS", kv_cache_dtype="auto", **DENSE).error.startswith(
            "Unknown attention backend: 'FLASHINFER_TS'. Valid options are: FLASH_ATTN, ")


NOT_VALID = "Selected backend AttentionBackendEnum.{} is not valid for this configuration. Reason: {}"


@pytest.mark.parametrize("platform, assume, spec, backend, error", [
    ("b200", (), DENSE, "FLASHINFER_TS", None),
    ("b200", (), dict(DENSE, kv_cache_dtype="fp8"), "FLASHINFER_TS", None),
    ("b200", (), dict(DENSE, has_sink=True), None,
     NOT_VALID.format("FLASHINFER_TS", "['attention sinks not supported', 'FLASHINFER_TS does not support attention "
                                       "sinks']")),
    ("b200", (), dict(MLA), None,
     NOT_VALID.format("FLASHINFER_TS", "['head_size not supported', 'MLA not supported', 'FLASHINFER_TS supports "
                                       "dense non-MLA attention only']")),
    ("b200", (), dict(DENSE, block_size=8), None, NOT_VALID.format("FLASHINFER_TS", "['block_size not supported']")),
    ("h100", (), DENSE, None, NOT_VALID.format("FLASHINFER_TS", "['compute capability not supported']")),
    ("mi300x", (), DENSE, None, NOT_VALID.format("FLASHINFER_TS", "['compute capability not supported']")),
    ("b200", ("flashinfer=no",), DENSE, "FLASHINFER_TS",   # imported when the builder plans its first batch
     "FLASHINFER_TS needs flashinfer-python>=0.7.1 (flashinfer.attention.prims_ts is missing)."),
    ("xpu", (), DENSE, None, "Invalid attention backend for xpu, with use_mla: False"),
    ("cpu", (), DENSE, "CPU_ATTN", None),
])
def test_flashinfer_ts_when_forced(platform, assume, spec, backend, error):
    spec = {"kv_cache_dtype": "auto", **spec}
    choice = choose(platform, "0.34", "FLASHINFER_TS", *assume, **spec)
    assert (choice.backend, choice.error) == (backend, error)
    if platform == "b200" and backend:
        assert choice.notes == ("Using AttentionBackendEnum.FLASHINFER_TS backend.", backends.FlashInferTS.caveat)


KIMI = "KIMI_K3_KV_BALANCED_MLA"


@pytest.mark.parametrize("platform, spec, backend, error", [
    ("b200", dict(MLA, kv_cache_dtype="fp8"), KIMI, None),
    ("b200", dict(MLA, kv_cache_dtype="fp8_e4m3", block_size=64), KIMI, None),
    ("b200", dict(MLA, kv_cache_dtype="auto"), None, NOT_VALID.format(KIMI, "['kv_cache_dtype not supported']")),
    ("b200", dict(MLA, kv_cache_dtype="fp8", block_size=16), None,
     NOT_VALID.format(KIMI, "['block_size not supported']")),
    ("h100", dict(MLA, kv_cache_dtype="fp8"), None, NOT_VALID.format(KIMI, "['compute capability not supported']")),
    ("b200", dict(MLA, kv_cache_dtype="fp8", head_size=512), None, NOT_VALID.format(
        KIMI, "['needs MLA dimensions (qk_nope_head_dim, qk_rope_head_dim, v_head_dim, kv_lora_rank) = "
              "(128, 64, 128, 512), got (128, 64, 128, 448)']")),
    ("b200", dict(DENSE, kv_cache_dtype="fp8"), None, NOT_VALID.format(
        KIMI, "['head_size not supported', 'non-MLA not supported', 'needs MLA dimensions (qk_nope_head_dim, "
              "qk_rope_head_dim, v_head_dim, kv_lora_rank) = (128, 64, 128, 512), got (128, 64, 128, 64)']")),
    ("xpu", dict(MLA, kv_cache_dtype="fp8"), None, "Invalid attention backend for xpu, with use_mla: True"),
])
def test_kimi_k3_kv_balanced_mla_when_forced(platform, spec, backend, error):
    choice = choose(platform, "0.34", KIMI, **spec)
    assert (choice.backend, choice.error) == (backend, error)
    if backend:
        assert choice.notes == (f"Using AttentionBackendEnum.{KIMI} backend.",)


@pytest.mark.parametrize("release", ["0.33", "0.34"])
@pytest.mark.parametrize("platform, kv", [("h100", "fp8_ds_mla"), ("b200", "nvfp4_ds_mla"), ("h100", "auto")])
def test_a_sliding_window_mla_layer_from_034(release, platform, kv):
    """mla-sliding-window-kv: MLAAttention refuses the DS-MLA caches with a sliding window before it asks for a
    backend, and otherwise hands the window to the selector, where only TRITON_MLA takes it."""
    choice = choose(platform, release, kv_cache_dtype=kv, sliding_window=4096, **MLA)
    if release == "0.33":   # the window never reaches the selector: as without one
        assert choice == choose(platform, release, kv_cache_dtype=kv, **MLA)
    elif kv != "auto":
        assert choice == backends.AttentionChoice(
            None, (), f"Sliding-window MLA does not support kv_cache_dtype={kv}.")
    else:
        assert choice.backend == "TRITON_MLA"
        assert reasons_of(choice) == {
            "FLASH_ATTN_MLA": "sliding window not supported", "FLASHMLA": "sliding window not supported",
            "FLASHINFER_MLA": "compute capability not supported, sliding window not supported"}


# The releases between the ones read whole: each change where its wheel has it.

@pytest.mark.parametrize("release, backend, reason", [
    ("0.30", None, "causal route requires FlashAttention v4"),   # _FA4Backend
    ("0.31", "TRITON_FLASH_ATTN", None),                         # triton-flash-attn-fa3: _FABackend
])
def test_the_composites_causal_route_takes_fa3_from_031(release, backend, reason):
    choice = choose("h100", release, "TRITON_FLASH_ATTN", kv_cache_dtype="auto", use_mm_prefix=True,
                    **dict(DENSE, head_size=256))
    assert choice.backend == backend
    assert (reason in choice.error) if reason else choice.error is None


@pytest.mark.parametrize("release, head_size, kv, reason", [
    ("0.29", 576, "nvfp4_ds_mla", "kv_cache_dtype not supported"),
    ("0.30", 576, "nvfp4_ds_mla", "FLASHMLA_SPARSE only supports the nvfp4_ds_mla kv-cache dtype on SM100 "
                                  "(Blackwell)"),                                     # nvfp4-ds-mla
    ("0.30", 512, "fp8_ds_mla", "head_size not supported"),
    ("0.31", 512, "fp8_ds_mla", "FLASHMLA_SPARSE supports head_size 512 only with bf16 kv-cache on SM90 (NoPE), "
                                "got kv_cache_dtype=fp8_ds_mla, capability=DeviceCapability(major=9, minor=0)"),
    ("0.32", 512, "fp8_ds_mla", "FLASHMLA_SPARSE supports head_size 512 only for rope-free (NoPE) models"),
    ("0.32", 512, "fp8", "FLASHMLA_SPARSE supports head_size 512 only with bf16 or fp8_ds_mla kv-cache on SM90 "
                         "(NoPE), got kv_cache_dtype=fp8, capability=DeviceCapability(major=9, minor=0)"),
])
def test_flashmla_sparse_gained_nvfp4_in_030_and_head_512_in_031(release, head_size, kv, reason):
    choice = choose("h100", release, "FLASHMLA_SPARSE", kv_cache_dtype=kv, use_sparse=True,
                    **dict(MLA, head_size=head_size))
    assert reason in choice.error.split("Reason: ")[1]


@pytest.mark.parametrize("release, requested, backend, error, notes", [
    ("0.27", None, None, "MLA is not supported on CPU.", ()),
    ("0.27", "FLASHMLA", None, "MLA is not supported on CPU.", ("Cannot use AttentionBackendEnum.FLASHMLA backend on "
                                                                "CPU.",)),
    ("0.28", None, "CPU_MLA", None, ()),                         # cpu-mla
    ("0.29", None, "AMX_MLA", None, ("Using AMX_MLA backend.",)),  # cpu-amx-mla (AMX assumed)
])
def test_cpu_serves_mla_from_028(release, requested, backend, error, notes):
    choice = choose("cpu", release, requested, kv_cache_dtype="auto", **MLA)
    assert (choice.backend, choice.error, choice.notes) == (backend, error, notes)
    sparse = choose("cpu", release, kv_cache_dtype="auto", use_sparse=True, **MLA).error
    assert sparse == ("MLA is not supported on CPU." if release == "0.27" else "Sparse Attention is not supported "
                                                                                "on CPU.")


def test_the_module_imports_no_torch():
    code = "import sys, fp8check.kernels.attention; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
