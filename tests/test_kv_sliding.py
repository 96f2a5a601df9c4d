"""Sliding-window attention layers as vLLM 0.28 / 0.33 builds them: which layers slide and with what window (the
model file's per_layer_sliding_window over transformers' config-class defaults, else CacheConfig's model-wide
window), the window handed to the backend selector, `--kv-cache-dtype-skip-layers sliding_window`, and the
memory fit's reading of the sliding layers' share of the KV cache."""

from __future__ import annotations

import json

import pytest
from test_cli_kv import schema_errors
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.checkpoint.local import open_local, parse_model_config
from fp8check.core.errors import ConfigError
from fp8check.core.model.layouts import MIXED_WINDOWS, AttentionWindows
from fp8check.core.model.memory import SlidingShare, fit, summary, weight_footprint
from fp8check.core.model.modules import build_layout
from fp8check.core.records import InspectOptions
from fp8check.core.routing import attention as routing_attention
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import apply_assumptions, parse_platform
from fp8check.core.targets.profiles import PROFILES

PROFILE = {p.vllm: p for p in PROFILES}
RELEASES = ("0.28", "0.33")
S, F = "sliding window {}", "full"
GEMMA2 = dict(architecture="Gemma2ForCausalLM", model_type="gemma2", head_dim=128)
GEMMA3 = dict(architecture="Gemma3ForCausalLM", model_type="gemma3_text", head_dim=128)
QWEN2 = dict(architecture="Qwen2ForCausalLM", model_type="qwen2", head_dim=128)
GPT_OSS = dict(architecture="GptOssForCausalLM", model_type="gpt_oss", moe_style="gpt_oss", attention_sinks=True,
               experts=4, heads=8, kv_heads=8, head_dim=64, hidden=512, quant="fp8-block")
MLA = dict(architecture="DeepseekV3ForCausalLM", model_type="deepseek_v3", mla=True, q_lora_rank=128)
runner = CliRunner()


def inspect(folder: str, release: str = "0.33", platform: str = "cuda:9.0", **options):
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), PROFILE[release], **options))


def kinds(report) -> list[str]:
    return [a.kind for a in report.attention]


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("spec, expected", [
    # gemma2.py: config.layer_types; Gemma2Config fills it with the even layers sliding.
    (dict(GEMMA2, layers=4, sliding_window=4096), [S.format(4096), F] * 2),
    (dict(GEMMA2, layers=2), [S.format(4096), F]),  # Gemma2Config's default window, 4096
    # gemma3.py: Gemma3TextConfig's pattern, five sliding layers then one full (sliding_window_pattern, default 6).
    (dict(GEMMA3, layers=7, sliding_window=512), [S.format(512)] * 5 + [F, S.format(512)]),
    (dict(GEMMA3, layers=4, sliding_window=512, extra_config={"sliding_window_pattern": 2}), [S.format(512), F] * 2),
    (dict(GEMMA3, layers=2, extra_config={"layer_types": ["full_attention", "sliding_attention"]}),
     [F, S.format(4096)]),
    # Mistral-7B-v0.1: no layer_types, so CacheConfig.sliding_window reaches every layer; v0.2+ write null.
    (dict(architecture="MistralForCausalLM", model_type="mistral", sliding_window=4096), [S.format(4096)] * 2),
    (dict(architecture="MistralForCausalLM", model_type="mistral", extra_config={"sliding_window": None}), [F] * 2),
    (dict(architecture="MistralForCausalLM", model_type="mistral"), [S.format(4096)] * 2),  # MistralConfig's default
    # Qwen2: the window only with use_sliding_window, and layer_types slide from max_window_layers (default 28).
    (dict(QWEN2, layers=4, extra_config={"sliding_window": 4096}), [F] * 4),
    (dict(QWEN2, layers=4, sliding_window=4096), [F] * 4),
    (dict(QWEN2, layers=4, sliding_window=4096, extra_config={"max_window_layers": 0}), [S.format(4096)] * 4),
    # qwen2.py passes no per-layer window: a mix of layer types leaves every layer full.
    (dict(QWEN2, layers=2, sliding_window=4096,
          extra_config={"max_window_layers": 2, "layer_types": ["sliding_attention", "full_attention"]}), [F] * 2),
    (dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=4, head_dim=128, sliding_window=1024),
     [S.format(1024)] * 2),
    # gpt_oss.py: the even layers slide (GptOssConfig's window, 128), all with sinks.
    (dict(GPT_OSS, layers=4), [S.format(128) + ", sinks", "full, sinks"] * 2),
    # llama.py: per layer from config.layer_types; a window of 0 is none (config/model.py).
    (dict(layers=2, sliding_window=1024, extra_config={"layer_types": ["sliding_attention", "full_attention"]}),
     [S.format(1024), F]),
    (dict(sliding_window=0), [F] * 2),
    (dict(architecture="Phi3ForCausalLM", model_type="phi3", fused_on_disk=True, head_dim=128, sliding_window=2047),
     [S.format(2047)] * 2),
    (dict(MLA, sliding_window=4096), ["MLA"] * 2),  # MLAAttention takes no window
], ids=["gemma2", "gemma2-default", "gemma3", "gemma3-pattern", "gemma3-layer-types", "mistral-v0.1",
        "mistral-null", "mistral-default", "qwen2-off", "qwen2-from-28", "qwen2-all", "qwen2-mixed-given",
        "qwen3-moe", "gpt-oss", "llama-layer-types", "window-0", "phi3", "mla"])
def test_each_layer_slides_as_the_model_file_decides(make_checkpoint, spec, expected, release):
    report = inspect(make_checkpoint(**spec), release)
    assert kinds(report) == expected
    assert all(a.ok for a in report.attention)


@pytest.mark.parametrize("release", RELEASES)
def test_qwen2_refuses_a_mix_of_sliding_and_full_layers(make_checkpoint, release):
    report = inspect(make_checkpoint(**QWEN2, layers=4, sliding_window=4096, extra_config={"max_window_layers": 2}),
                     release)
    message = MIXED_WINDOWS.format(2, 4)
    assert message.startswith("Sliding window for some but all layers is not supported.")
    assert all(a.errors == (message,) for a in report.attention) and not report.ok


def test_the_window_reaches_the_backend_selector(make_checkpoint, monkeypatch):
    specs = []
    real = routing_attention.select_attention_backend
    monkeypatch.setattr(routing_attention, "select_attention_backend", lambda spec, *a: specs.append(spec) or real(spec, *a))
    inspect(make_checkpoint(**GPT_OSS, layers=2))
    assert {(s.sliding_window, s.has_sink) for s in specs} == {(None, True), (128, True)}


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("platform", ["cuda:9.0", "cuda:8.0", "rocm:gfx942"])
def test_a_backend_without_sliding_window_refuses_only_the_sliding_layers(make_checkpoint, release, platform):
    # TurboQuant's backend has no sliding window support; layer 2 of 6 is past its boundary skip layers.
    folder = make_checkpoint(**GEMMA2, layers=6, sliding_window=4096)
    report = inspect(folder, release, platform, kv_cache_dtype="turboquant_k8v4", attention_backend="TURBOQUANT")
    sliding, full = report.attention[2], report.attention[3]
    assert sliding.backend is None and full.backend == "TURBOQUANT" and full.ok
    assert sliding.errors == ("Selected backend AttentionBackendEnum.TURBOQUANT is not valid for this "
                              "configuration. Reason: ['sliding window not supported']",)


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("skip, expected", [
    (("sliding_window",), ["bfloat16", "fp8", "bfloat16", "fp8"]),
    (("3",), ["fp8", "fp8", "fp8", "bfloat16"]),
    (("sliding_window", "3"), ["bfloat16", "fp8", "bfloat16", "bfloat16"]),
    ((), ["fp8"] * 4),
])
def test_skip_layers_keep_the_sliding_layers_in_the_model_dtype(make_checkpoint, release, skip, expected):
    report = inspect(make_checkpoint(**GEMMA2, layers=4, sliding_window=4096), release, kv_cache_dtype="fp8",
                     kv_cache_dtype_skip_layers=skip)
    assert [a.kv_cache_dtype for a in report.attention] == expected
    # K and V of 2 KV heads x 128: two bytes per element in bfloat16, one in fp8.
    assert [a.cache_bytes_per_token for a in report.attention] == [1024 if d == "bfloat16" else 512 for d in expected]


def test_skip_sliding_window_leaves_mla_and_full_models_alone(make_checkpoint):
    for spec in (dict(MLA, sliding_window=4096), dict(sliding_window=None)):
        report = inspect(make_checkpoint(**spec), kv_cache_dtype="fp8", kv_cache_dtype_skip_layers=("sliding_window",))
        assert {a.kv_cache_dtype for a in report.attention} == {"fp8"}


def memory_of(folder: str, report, memory: str = "80GiB"):
    ckpt = open_local(folder)
    footprint = weight_footprint(ckpt.tensors, ckpt.config, build_layout(ckpt.tensors, ckpt.config))
    platform = apply_assumptions(parse_platform("cuda:9.0"), [f"device_memory={memory}"])
    per_token = sum(a.cache_bytes_per_token for a in report.attention)
    return fit(footprint, platform, report.profile, 1, False, per_token, routing_attention.sliding_share(report.attention))


@pytest.mark.parametrize("spec, sliding_layers, long_factor", [
    (dict(GEMMA3, layers=6, sliding_window=1024), 5, 6),   # one full layer in six holds every token
    (dict(GEMMA2, layers=4, sliding_window=4096), 2, 2),
    (dict(architecture="MistralForCausalLM", model_type="mistral", sliding_window=4096), 2, None),
])
def test_memory_counts_sliding_layers_at_every_token_and_says_what_long_requests_get(make_checkpoint, spec,
                                                                                      sliding_layers, long_factor):
    folder = make_checkpoint(**spec)
    report = inspect(folder)
    share = routing_attention.sliding_share(report.attention)
    per_layer = report.attention[0].cache_bytes_per_token  # K and V of 2 KV heads in bfloat16
    assert share == SlidingShare(sliding_layers, len(report.attention), (spec["sliding_window"],),
                                 sliding_layers * per_layer)
    memory = memory_of(folder, report)
    assert memory.kv_tokens == memory.kv_bytes // (per_layer * len(report.attention))
    assert f"{sliding_layers} of {len(report.attention)} attention layers use a sliding window" in memory.note
    assert "SlidingWindowSpec" in memory.note
    if long_factor is None:  # every layer slides
        assert memory.long_request_tokens is None and "stops growing at its window" in memory.note
        assert "past their window" not in summary(memory)
        return
    assert memory.long_request_tokens == memory.kv_bytes // (per_layer * (len(report.attention) - sliding_layers))
    assert memory.long_request_tokens // memory.kv_tokens in (long_factor, long_factor - 1)
    assert f"up to {memory.long_request_tokens:,} past their window" in summary(memory)


def test_models_without_sliding_windows_keep_their_report(make_checkpoint):
    folder = make_checkpoint()
    report = inspect(folder)
    assert kinds(report) == [F, F] and routing_attention.sliding_share(report.attention) is None
    memory = memory_of(folder, report)
    assert memory.note is None and memory.long_request_tokens is None and "window" not in summary(memory)
    doc = json.loads(runner.invoke(app, ["inspect", folder, "-p", "h100", "-f", "json"]).stdout)
    assert doc["memory"]["note"] is None and {a["kind"] for a in doc["attention"]} == {F}


def test_inspect_shows_the_sliding_rows_and_json(make_checkpoint):
    folder = make_checkpoint(**GEMMA3, layers=6, sliding_window=1024)
    args = ["inspect", folder, "-p", "h100", "--kv-cache-dtype", "fp8", "--kv-cache-dtype-skip-layers", "sliding_window"]
    doc = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)
    assert schema_errors(doc) == []
    assert [(a["kind"], a["kv_cache_dtype"]) for a in doc["attention"]] == [(S.format(1024), "bfloat16")] * 5 + [
        (F, "fp8")]
    flat = " ".join(runner.invoke(app, args, env={"COLUMNS": "150"}).stdout.split())
    assert "model.layers.{0..4}.self_attn.attn sliding window 1024 4/2×128 bfloat16" in flat
    assert "model.layers.5.self_attn.attn full 4/2×128 fp8 → float8_e4m3fn" in flat


@pytest.mark.parametrize("spec", [
    dict(QWEN2, extra_config={"sliding_window": 131072, "use_sliding_window": False, "max_window_layers": 28}),
    dict(architecture="Qwen3ForCausalLM", model_type="qwen3", extra_config={"sliding_window": None}),
    dict(architecture="MixtralForCausalLM", model_type="mixtral", moe_style="mixtral", experts=4,
         extra_config={"sliding_window": None}),
    dict(architecture="MistralForCausalLM", model_type="mistral", extra_config={"sliding_window": None}),
    dict(MLA), dict(),
], ids=["qwen2.5", "qwen3", "mixtral", "mistral-v0.3", "deepseek-v3", "llama"])
def test_released_configs_without_a_window_inspect_as_before(make_checkpoint, monkeypatch, spec):
    """What these configs write (a window switched off or null) reports exactly what no window at all does."""
    folder = make_checkpoint(**spec)
    options = dict(kv_cache_dtype="fp8", kv_cache_dtype_skip_layers=("sliding_window",))
    report = inspect(folder, **options)
    monkeypatch.setattr(routing_attention, "attention_windows", lambda config, arch: AttentionWindows((None,) * 64))
    assert report == inspect(folder, **options)


@pytest.mark.parametrize("keys, message", [
    ({"layer_types": "sliding_attention"}, 'layer_types must be a list of printable strings, got "sliding_attention"'),
    ({"layer_types": ["sliding_attention"]}, "layer_types lists 1 layers, fewer than num_hidden_layers (2)"),
    ({"use_sliding_window": "yes"}, 'use_sliding_window must be true or false, got "yes"'),
    ({"sliding_window": -1}, "sliding_window must be a non-negative integer, got -1"),
    ({"max_window_layers": 1.5}, "max_window_layers must be a non-negative integer, got 1.5"),
])
def test_malformed_sliding_window_keys_are_one_line_and_exit_2(make_checkpoint, keys, message):
    config = {"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "hidden_size": 256,
              "num_attention_heads": 4, "num_hidden_layers": 2, **keys}
    with pytest.raises(ConfigError) as err:
        parse_model_config(config)
    assert str(err.value) == f"config.json: {message}"
    result = runner.invoke(app, ["inspect", make_checkpoint(**GEMMA2, extra_config=keys), "-p", "h100"])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
