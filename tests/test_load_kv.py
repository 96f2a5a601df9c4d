"""load's KV cache check (fp8check.core.load.attention): vLLM's scale processing per KV method, the scale value checks
naming the tensor, and the FP8 cache write round trip against its bound. Records are built directly (tiny data)."""

from __future__ import annotations

import glob
import os

import pytest
import torch

from fp8check.core.checkpoint.local import open_local
from fp8check.core.load.attention import BASE_ONE_WARNING, run_attention, scale_role
from fp8check.core.records import AttentionReport, InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets import profiles
from fp8check.core.targets.platforms import parse_platform
from fp8check.kernels.numerics.kv_cache import unit_roundoff, write_and_read

LAYER = "model.layers.1.self_attn"
K, V, Q = f"{LAYER}.k_scale", f"{LAYER}.v_scale", f"{LAYER}.q_scale"
CT = "CompressedTensorsKVCacheMethod"
BASE_METHODS = ("Fp8KVCacheMethod", "ModelOptKVCacheMethod", "QuarkKVCacheMethod")
HEADS = 2
# (platform, --kv-cache-dtype as resolved, what the cache holds)
CACHES = {
    "e4m3": ("cuda:90", "fp8_e4m3", "float8_e4m3fn"),
    "e5m2": ("cuda:90", "fp8_e5m2", "float8_e5m2"),
    "fnuz": ("rocm:gfx942", "fp8", "float8_e4m3fnuz"),
}
CPU = torch.device("cpu")


def report(method: str | None = "Fp8KVCacheMethod", cache: str = "e4m3", strategy: str | None = "tensor",
           backend: str = "FLASH_ATTN", kind: str = "full", heads: int = HEADS, errors: tuple[str, ...] = (),
           kv_cache_dtype: str | None = None, scales: tuple[str, ...] = (K, V, Q)) -> AttentionReport:
    _, dtype, cache_dtype = CACHES[cache]
    return AttentionReport(name=f"{LAYER}.attn", kind=kind, head_size=32, num_heads=4 * heads, num_kv_heads=heads,
                           kv_cache_dtype=kv_cache_dtype or dtype, cache_dtype=cache_dtype, kv_method=method,
                           scale_strategy=strategy, scales=scales, backend=backend, rejected=(), errors=errors,
                           warnings=(), notes=())


def run(rep: AttentionReport, scales: dict, cache: str = "e4m3", tokens: int = 8, seed: int = 0, **kw):
    return run_attention(rep, scales, parse_platform(CACHES[cache][0]), CPU, tokens, seed, **kw)


def good_scales(strategy: str | None) -> dict[str, torch.Tensor]:
    if strategy == "attn_head":  # llm-compressor's [heads, 1, 1]
        return {K: torch.tensor([0.05, 0.08]).reshape(HEADS, 1, 1), V: torch.tensor([0.01, 0.02]).reshape(HEADS, 1, 1)}
    return {K: torch.tensor(0.05), V: torch.tensor(0.01)}


def _combos():
    for cache in CACHES:
        for method in BASE_METHODS + (CT,):
            for strategy in ("tensor", "attn_head") if method == CT else ("tensor",):
                if method != CT and cache == "e5m2":
                    continue  # vLLM refuses e5m2 with these methods (inspect's error): test_a_refused_layer_...
                if method == CT and cache == "fnuz":
                    continue  # CT on fnuz saturates: test_the_fnuz_doubling_rule
                yield cache, method, strategy


@pytest.mark.parametrize("cache,method,strategy", list(_combos()))
def test_good_scales_round_trip_within_one_unit_roundoff(cache, method, strategy):
    result = run(report(method, cache, strategy), good_scales(strategy), cache)
    assert result.status == "ok", result.errors + result.warnings
    assert result.bound == unit_roundoff(getattr(torch, CACHES[cache][2]))
    assert result.bound == {"e4m3": 2 ** -4, "fnuz": 2 ** -4, "e5m2": 2 ** -3}[cache]
    assert 0 < result.k_error <= result.bound and 0 < result.v_error <= result.bound
    doubled = 2 if cache == "fnuz" else 1
    expected_k = [0.05, 0.08] if strategy == "attn_head" else [0.05 * doubled]
    assert result.k_scale == pytest.approx(expected_k)
    assert result.bytes_read == sum(t.numel() * 4 for t in good_scales(strategy).values())


def test_the_fnuz_doubling_rule():
    """BaseKVCacheMethod doubles the scales on float8_e4m3fnuz, so the calibrated range (scale x 448) fits in ±240;
    CompressedTensorsKVCacheMethod does not, and the top of that range saturates."""
    scales = good_scales("tensor")
    base = run(report("Fp8KVCacheMethod", "fnuz"), scales, "fnuz")
    ct = run(report(CT, "fnuz"), scales, "fnuz")
    on_cuda = run(report(CT, "e4m3"), scales, "e4m3")
    assert base.status == "ok" and base.k_scale == pytest.approx([0.1]) and base.v_scale == pytest.approx([0.02])
    assert any("doubles the checkpoint's scales" in n for n in base.notes)
    assert ct.k_scale == pytest.approx([0.05]) and ct.status == "FAIL"
    assert ct.k_error > ct.bound > on_cuda.k_error
    assert any("saturated at ±240" in e and e.startswith(f"{LAYER}.attn: K read back") for e in ct.errors)


# (method family, scales, status, the tensor each error / warning names, a phrase of it)
SCALE_CASES = {
    "both absent": ("base", {}, "warn", f"{LAYER}.attn", BASE_ONE_WARNING),
    "v absent": ("base", {K: torch.tensor(0.05)}, "warn", V, "writes V with k_scale 0.05"),
    "k absent": ("base", {V: torch.tensor(0.05)}, "FAIL", f"{LAYER}.attn", "asserts k_scale > 0"),
    "v zero": ("base", {K: torch.tensor(0.05), V: torch.tensor(0.0)}, "FAIL", V, "ignores it and writes V with"),
    "k zero": ("base", {K: torch.tensor(0.0), V: torch.tensor(0.05)}, "FAIL", f"{LAYER}.attn", "AssertionError"),
    "both negative": ("base", {K: torch.tensor(-0.5), V: torch.tensor(-0.5)}, "FAIL", K,
                      "-0.5 (a KV cache scale must be finite and > 0; vLLM takes a negative value for 'not in the "
                      "checkpoint'"),
    "v negative": ("base", {K: torch.tensor(0.05), V: torch.tensor(-0.5)}, "FAIL", V, "-0.5 (a KV cache scale must"),
    "v nan": ("base", {K: torch.tensor(0.05), V: torch.tensor(float("nan"))}, "FAIL", V, "nan (a KV cache scale"),
    "k inf": ("base", {K: torch.tensor(float("inf")), V: torch.tensor(0.05)}, "FAIL", K, "every cached value is 0"),
    "q negative": ("base", {K: torch.tensor(0.05), V: torch.tensor(0.01), Q: torch.tensor(-1.0)}, "FAIL", Q,
                   "uses 1.0 for the q scale"),
    "wrong shape": ("base", {K: torch.ones(HEADS, 1, 1), V: torch.tensor(0.05)}, "FAIL", K,
                    "KV-cache scale expects a scalar weight, got shape (2, 1, 1)"),
    "ct absent": ("ct", {K: torch.tensor(0.05)}, "warn", V, "keeps its 1.0 placeholder"),
    "ct zero": ("ct", {K: torch.tensor(0.0), V: torch.tensor(0.05)}, "FAIL", K, "x / 0 saturates every code"),
    "ct negative": ("ct", {K: torch.tensor(0.05), V: torch.tensor(-0.5)}, "FAIL", V, "negated codes"),
    "ct nan": ("ct", {K: torch.tensor(float("nan")), V: torch.tensor(0.05)}, "FAIL", K, "every cached value of that"),
    "ct wrong shape": ("ct", {K: torch.ones(HEADS, 1, 1), V: torch.tensor(0.05)}, "FAIL", K,
                       "Attempted to load weight (torch.Size([2, 1, 1])) into parameter (torch.Size([1]))"),
}


@pytest.mark.parametrize("method", BASE_METHODS)
@pytest.mark.parametrize("case", SCALE_CASES)
def test_bad_and_missing_scales_are_named_with_what_vllm_does(case, method):
    family, scales, status, tensor, phrase = SCALE_CASES[case]
    result = run(report(CT if family == "ct" else method), scales)
    assert result.status == status
    messages = result.errors if status == "FAIL" else result.warnings
    assert any(m.startswith(f"{tensor}: ") or m.startswith(f"{tensor}, ") for m in messages), messages
    assert any(phrase in m for m in messages), messages


@pytest.mark.parametrize("case,count,status,phrase", [
    ("one", 1, "warn", "copies it to every KV head"),
    ("fewer", 3, "FAIL", "vLLM fails loading it: 3 scales"),
    ("more", 6, "FAIL", "silently keeps the first 4"),
])
def test_per_head_scales_of_the_wrong_count(case, count, status, phrase):
    rep = report(CT, strategy="attn_head", heads=4)
    result = run(rep, {K: torch.full((count, 1, 1), 0.05), V: torch.full((4, 1, 1), 0.01)})
    assert result.status == status
    assert any(m.startswith(f"{K}: ") and phrase in m for m in result.errors + result.warnings)


@pytest.mark.parametrize("count,status,phrase", [
    (16, "ok", None),
    (4, "warn", "4 where kv_cache_scheme strategy attn_head expects 16 (one per query head); vLLM's loader copies "
                "their max to every KV head"),
    (1, "FAIL", "vLLM fails loading it: 1 q scales cannot be grouped by 4"),
    (6, "FAIL", "vLLM fails loading it: 6 q scales cannot be grouped by 4"),
])
def test_per_head_q_scales_are_grouped_per_kv_head(count, status, phrase):
    """_tp_aware_loader views q_scale as [-1, query heads per KV head] (4 here) and takes each group's max."""
    scales = {K: torch.full((4, 1, 1), 0.05), V: torch.full((4, 1, 1), 0.01), Q: torch.full((count, 1, 1), 0.1)}
    result = run(report(CT, strategy="attn_head", heads=4), scales)
    assert result.status == status
    about_q = [m for m in result.errors + result.warnings if m.startswith(f"{Q}: ")]
    assert about_q == [] if phrase is None else len(about_q) == 1 and phrase in about_q[0]


def test_per_head_scales_are_checked_against_the_checkpoints_heads_under_tp():
    """Under --tp 2 a rank holds 2 of the checkpoint's 4 KV heads: 4 scales are right, and rank 0 takes its own."""
    scales = {K: torch.tensor([0.05, 0.06, 0.5, 0.6]).reshape(4, 1, 1), V: torch.full((4, 1, 1), 0.01)}
    result = run(report(CT, strategy="attn_head", heads=2), scales, tp=2)
    assert result.status == "ok" and result.k_scale == pytest.approx([0.05, 0.06])
    assert run(report(CT, strategy="attn_head", heads=2), scales).status == "FAIL"  # tp=1: 4 scales for 2 heads


@pytest.mark.parametrize("backend,platform,written", [
    ("FLASH_ATTN", "e4m3", [0.05, 0.5]),  # reshape_and_cache_flash's per-head path
    ("CPU_ATTN", "e4m3", [0.5]),          # the scalar _k_scale_float: CT's max over heads
    ("TRITON_ATTN", "e4m3", [0.05]),      # tl.load(k_scale): head 0
])
def test_per_head_scales_as_each_backend_writes_them(backend, platform, written):
    scales = {K: torch.tensor([0.05, 0.5]).reshape(2, 1, 1), V: torch.tensor([0.01, 0.01]).reshape(2, 1, 1)}
    result = run(report(CT, strategy="attn_head", backend=backend), scales, platform)
    assert result.k_scale == pytest.approx(written)
    if backend == "TRITON_ATTN":  # head 1 (calibrated for 0.5 x 448) written with head 0's 0.05 saturates
        assert result.status == "FAIL" and result.k_error > 10 * result.bound
    else:
        assert result.status == "ok"


def test_a_wrong_scale_gives_a_larger_error():
    """V without its own scale is written with k_scale (max(k_scale, v_scale)); a k_scale far too small for V
    saturates it, while the same V with its own scale round-trips within the bound."""
    good = run(report(), {K: torch.tensor(0.05), V: torch.tensor(0.01)})
    wrong = run(report(), {K: torch.tensor(1e-4)})
    assert good.v_error <= good.bound < wrong.v_error
    assert wrong.status == "FAIL"
    assert any("V read back" in e and "saturated at ±448" in e and "covers |x| <= 0.0448" in e for e in wrong.errors)


@pytest.mark.parametrize("dtype,cache_dtype", [("bfloat16", "bfloat16"), ("auto", "float16")])
def test_an_unquantized_cache_has_nothing_to_round_trip(dtype, cache_dtype):
    rep = report(kv_cache_dtype=dtype)._replace(cache_dtype=cache_dtype)
    result = run(rep, {K: torch.tensor(0.05), V: torch.tensor(0.01)})
    assert result.status == "ok" and result.k_error is None and result.ok
    assert any(f"the KV cache holds {cache_dtype}" in n for n in result.notes)
    ignored = run(rep, {K: torch.tensor(-1.0), V: torch.tensor(0.01)})
    assert ignored.status == "warn" and "ignores it: the KV cache is not quantized" in ignored.warnings[0]
    misshaped = run(rep, {K: torch.ones(3), V: torch.tensor(0.01)})  # vLLM loads the scales all the same
    assert misshaped.status == "FAIL" and misshaped.errors[0].startswith(f"{K}: vLLM fails loading it")


@pytest.mark.parametrize("rep,reason", [
    (report(errors=("fp8_e5m2 kv-cache is not supported with fp8 checkpoints.",), cache="e5m2"),
     "not run: vLLM would not build this layer: fp8_e5m2 kv-cache is not supported with fp8 checkpoints."),
    (report(kv_cache_dtype="int8_per_token_head"), "not run: fp8check does not emulate vLLM's int8_per_token_head"),
    (report(kv_cache_dtype="nvfp4"), "not run: fp8check does not emulate vLLM's nvfp4"),
    (report(kv_cache_dtype="fp8_ds_mla", kind="MLA"), "not run: fp8check does not emulate vLLM's fp8_ds_mla"),
], ids=["refused", "per-token-head", "nvfp4", "ds-mla"])
def test_a_refused_layer_or_an_unemulated_cache_is_not_run(rep, reason):
    result = run(rep, good_scales("tensor"))
    assert result.status == "not run" and not result.ok
    assert result.errors[0].startswith(reason)


def test_no_kv_method_writes_with_one():
    result = run(report(method=None, cache="e5m2", strategy=None, scales=()), {}, "e5m2")
    assert result.status == "ok" and result.k_scale == (1.0,) and result.k_error <= result.bound == 0.125
    assert any("set_default_quant_scales" in n for n in result.notes)


def test_mla_caches_one_latent_written_with_k_scale():
    rep = report(kind="MLA", heads=1)._replace(head_size=576)
    result = run(rep, {K: torch.tensor(0.05), V: torch.tensor(0.05)})
    assert result.status == "ok" and result.v_error is None and result.v_scale == ()
    assert result.k_error <= result.bound
    assert any("concat_and_cache_mla" in n for n in result.notes)


def test_the_deprecated_fused_kv_scale_writes_both():
    fused = f"{LAYER}.kv_scale"
    result = run(report(scales=(fused,)), {fused: torch.tensor(0.02)})
    assert result.status == "ok" and result.k_scale == result.v_scale == pytest.approx((0.02,))
    assert any(n.startswith(f"{fused}: the deprecated fused kv_scale") for n in result.notes)


@pytest.mark.parametrize("method,k_name,v_name", [
    ("ModelOptKVCacheMethod", f"{LAYER}.k_proj.k_scale", f"{LAYER}.v_proj.v_scale"),
    ("QuarkKVCacheMethod", f"{LAYER}.k_proj.output_scale", f"{LAYER}.v_proj.output_scale"),
])
def test_the_parameter_each_tensor_loads_into_decides_its_role(method, k_name, v_name):
    """inspect's scale_params pair vLLM's parameter with the checkpoint's tensor, whatever the format names it."""
    rep = report(method, scales=(k_name, v_name))._replace(
        scale_params=((f"{LAYER}.attn.k_scale", k_name), (f"{LAYER}.attn.v_scale", v_name)))
    result = run(rep, {k_name: torch.tensor(0.05), v_name: torch.tensor(-0.01)})
    assert result.k_scale == result.v_scale == pytest.approx((0.05,))
    assert result.errors[0].startswith(f"{v_name}: -0.01 (a KV cache scale must be finite and > 0")


def test_the_round_trip_is_seeded():
    scales = good_scales("tensor")
    first, again, other = (run(report(), scales, seed=s) for s in (0, 0, 1))
    assert first.k_error == again.k_error != other.k_error


@pytest.mark.parametrize("name,role", [
    (f"{LAYER}.k_scale", "k"), (f"{LAYER}.attn.v_scale", "v"), (f"{LAYER}.q_scale", "q"), (f"{LAYER}.kv_scale", "k"),
    (f"{LAYER}.k_proj.output_scale", "k"), (f"{LAYER}.prob_output_scale", "prob"), (f"{LAYER}.v_cache.scale", "v"),
    (f"{LAYER}.k_zero_point", None), (f"{LAYER}.o_proj.output_scale", None),
])
def test_every_formats_scale_names_have_their_role(name, role):
    assert scale_role(name) == role


@pytest.mark.parametrize("dtype,top", [(torch.float8_e4m3fn, 448.0), (torch.float8_e4m3fnuz, 240.0),
                                       (torch.float8_e5m2, 57344.0)])
def test_the_cache_write_saturates_and_divides_per_head(dtype, top):
    x = torch.tensor([[[1e6, -1e6], [3.0, 0.5]]])  # [1 token, 2 heads, 2]
    written = write_and_read(x, torch.tensor([1.0, 0.5]), dtype)
    assert written.read_back[0, 0].tolist() == [top, -top]  # saturated, never NaN (torch's fnuz cast gives NaN)
    assert written.read_back[0, 1].tolist() == [3.0, 0.5] and written.saturated == 2 and written.nonfinite == 0
    reciprocal = write_and_read(x, torch.tensor([1.0, 0.5]), dtype, reciprocal=True)
    assert reciprocal.read_back[0, 1].tolist() == [3.0, 0.5]


@pytest.mark.parametrize("quant", ["ct-fp8", "fp8-static", "modelopt-fp8", "quark-fp8"])
@pytest.mark.parametrize("platform", ["cuda:90", "rocm:gfx942"])
def test_inspects_attention_reports_run_end_to_end(make_checkpoint, quant, platform):
    """A checkpoint whose layer 1 lacks its v_scale: inspect's records, the scale tensors as the checkpoint stores
    them, and the run names the missing tensor; a compressed-tensors cache on float8_e4m3fnuz saturates."""
    from safetensors import safe_open

    folder = make_checkpoint(quant=quant, kv_cache="tensor", kv_missing=((1, "v"),), data="random")
    target = parse_platform(platform)
    inspected = inspect_checkpoint(open_local(folder), InspectOptions(target, profiles.LATEST, kv_cache_dtype="fp8"))
    tensors = {}
    for path in glob.glob(os.path.join(folder, "*.safetensors")):
        with safe_open(path, "pt") as handle:
            tensors.update({name: handle.get_tensor(name) for name in handle.keys()})
    first, second = (run_attention(a, {n: tensors[n] for n in a.scales}, target, CPU, 8, 0)
                     for a in inspected.attention[:2])
    saturates = quant == "ct-fp8" and target.fp8_fnuz
    assert first.status == ("FAIL" if saturates else "ok")
    assert second.status == ("FAIL" if saturates else "warn")
    assert any(w.startswith("model.layers.1.self_attn.attn.v_scale: not in the checkpoint") for w in second.warnings)
    assert first.bytes_read > 0 and first.k_error is not None
