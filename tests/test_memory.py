"""Memory fit per rank: weight bytes from the headers as vLLM splits them, the KV cache, the device budget."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import os

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import InputError
from fp8check.core.model.memory import (kv_bytes_per_token, no_cache_memory, summary, utilization_of,
                                       weight_bytes_per_rank, weight_footprint)
from fp8check.core.model.modules import build_layout
from fp8check.core.planning.matrix import matrix
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import apply_assumptions, parse_platform
from fp8check.core.targets.profiles import LATEST, select_profile
from fp8check.synth import Spec, write_checkpoint

runner = CliRunner()
GIB = 1 << 30
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def footprint_of(folder):
    ckpt = open_local(folder)
    return weight_footprint(ckpt.tensors, ckpt.config, build_layout(ckpt.tensors, ckpt.config))


def tiny_llama_bytes(tp: int) -> int:
    """Spec()'s Llama (hidden 256, intermediate 512, 4 heads / 2 KV heads of 64, vocab 1000, 2 layers) with
    per-channel FP8, counted by hand: FP8 weights 1 byte, channel scales float32, the rest bf16."""
    kv_rows = 64 * max(1, 2 // tp) * 2                       # k and v: KV heads replicated once tp > 2
    qkv = (256 // tp + kv_rows) * (256 + 4)                  # q + k + v rows, each 256 fp8 + one f32 scale
    o = 256 * 256 // tp + 256 * 4                            # row-parallel: K split, channel scale whole
    gate_up = 2 * 512 // tp * (256 + 4)
    down = 256 * 512 // tp + 256 * 4
    norms = 2 * 256 * 2
    vocab_rows = 1024 // tp                                  # VocabParallelEmbedding pads 1000 to 64s first
    return 2 * (qkv + o + gate_up + down + norms) + 256 * 2 + 2 * vocab_rows * 256 * 2


@pytest.mark.parametrize("tp", [1, 2, 4])
def test_weight_bytes_per_rank_match_a_hand_count(make_checkpoint, tp):
    footprint = footprint_of(make_checkpoint(quant="ct-fp8-dynamic"))
    assert weight_bytes_per_rank(footprint, tp, ep=False) == tiny_llama_bytes(tp)


@pytest.mark.parametrize("tp, heads_per_rank", [(1, 2), (2, 1), (4, 1)])
def test_kv_cache_per_token_replicates_kv_heads_beyond_their_number(make_checkpoint, tp, heads_per_rank):
    footprint = footprint_of(make_checkpoint())
    assert kv_bytes_per_token(footprint, tp) == 2 * 2 * heads_per_rank * 64 * 2  # layers x (K, V) x heads x dim x bf16


@pytest.mark.parametrize("tp", [1, 4])
def test_mla_caches_one_latent_per_token_on_every_rank(make_checkpoint, tp):
    folder = make_checkpoint(quant="fp8-block", architecture="DeepseekV3ForCausalLM", model_type="deepseek_v3",
                             mla=True, q_lora_rank=128, kv_lora_rank=128, qk_rope_head_dim=32, data="sparse")
    assert kv_bytes_per_token(footprint_of(folder), tp) == 2 * (128 + 32) * 2  # layers x latent x bf16


def test_experts_under_ep_are_held_whole_by_their_rank(make_checkpoint):
    folder = make_checkpoint(quant="fp8-block", architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe",
                             hidden=256, heads=4, kv_heads=4, head_dim=64, experts=6, moe_intermediate=256,
                             data="sparse")
    ckpt = open_local(folder)
    expert_bytes = sum(info.numel * (1 if info.dtype.startswith("F8") else 4)
                       for name, info in ckpt.tensors.items() if ".experts." in name)
    footprint = footprint_of(folder)
    # TP 4 slices every expert into quarters; EP 4 gives rank 0 two of the six experts whole (2, 2, 1, 1).
    extra = weight_bytes_per_rank(footprint, 4, ep=True) - weight_bytes_per_rank(footprint, 4, ep=False)
    assert extra == expert_bytes * 2 // 6 - expert_bytes // 4


@pytest.mark.parametrize("value, expected", [("80GiB", 80 * GIB), ("80", 80 * GIB), ("141GB", 141 * 10**9),
                                             ("0.5 TiB", GIB * 512), ("24576MiB", 24 * GIB)])
def test_assume_device_memory_units(value, expected):
    platform = apply_assumptions(parse_platform("cuda:90"), [f"device_memory={value}"])
    assert platform.assumptions.device_memory == expected


@pytest.mark.parametrize("item", ["device_memory=lots", "device_memory=-3GB", "device_memory=80XB",
                                  "gpu_memory_utilization=0", "gpu_memory_utilization=1.5",
                                  "gpu_memory_utilization=90%"])
def test_bad_memory_assumptions_are_input_errors(item):
    with pytest.raises(InputError, match=item.split("=")[0]):
        apply_assumptions(parse_platform("h100"), [item])


def test_alias_memory():
    h100, a100_40 = parse_platform("h100").assumptions, parse_platform("a100-40gb").assumptions
    assert (h100.device_memory, a100_40.device_memory) == (80 * GIB, 40 * GIB)
    assert parse_platform("cuda:90").assumptions.device_memory is None
    assert h100.gpu_memory_utilization is None  # vLLM's default, which depends on the release and platform


@pytest.mark.parametrize("platform, vllm, utilization", [
    ("h100", "0.33", 0.92), ("mi300x", "0.33", 0.92),       # config/cache.py: Field(default=0.92), 0.25-0.33
    ("h100", "0.34", 1.0), ("mi300x", "0.34", 1.0),         # 0.34: the extensible KV cache, on CUDA and ROCm
    ("xpu", "0.34", 0.92), ("cpu", "0.34", 0.92),           # ... only there ("only supported on CUDA and ROCm")
])
def test_default_utilization_per_release_and_platform(platform, vllm, utilization):
    assert utilization_of(parse_platform(platform), select_profile(vllm)) == utilization
    given = apply_assumptions(parse_platform(platform), ["gpu_memory_utilization=0.5"])
    assert utilization_of(given, select_profile(vllm)) == 0.5  # --assume always wins


@pytest.mark.parametrize("platform, vllm, assume, hint", [
    ("h100", "0.33", [], "Try increasing `gpu_memory_utilization` when initializing the engine (this flag also "
                         "controls CPU memory reservation on the CPU backend, despite its name)."),
    ("xpu", "0.34", [], "Try increasing `gpu_memory_utilization`"),
    ("h100", "0.34", [], "The extensible KV cache already takes all device memory left after the model and its "
                         "activations; decrease `max_model_len` or `max_num_seqs`, or the model needs a device "
                         "with more memory."),
    ("h100", "0.34", ["gpu_memory_utilization=0.9"],
     "The KV cache gets what is left after the model and its activations within `gpu_memory_utilization`=0.9; "
     "increase it (with the extensible KV cache it defaults to 1.0) or decrease `max_model_len` or `max_num_seqs`."),
])
def test_no_cache_memory_hint_is_the_releases(platform, vllm, assume, hint):
    text = no_cache_memory(apply_assumptions(parse_platform(platform), assume), select_profile(vllm))
    assert text.startswith("No available memory for the cache blocks. " + hint)
    assert text.endswith(" See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.")


@pytest.mark.parametrize("vllm, utilization", [("0.33", 0.92), ("0.34", 1.0)])
def test_not_fitting_is_a_failure_with_the_numbers(make_checkpoint, vllm, utilization):
    folder = make_checkpoint()
    result = runner.invoke(app, ["inspect", folder, "-p", "h100", "--assume", "device_memory=1MiB", "-f", "json",
                                 "--vllm", vllm])
    doc = json.loads(result.stdout)
    assert result.exit_code == 1 and doc["ok"] is False
    memory = doc["memory"]
    assert memory["fits"] is False and memory["device_memory"] == 1 << 20
    assert memory["gpu_memory_utilization"] == utilization
    assert memory["budget_bytes"] == math.ceil((1 << 20) * utilization) < memory["weight_bytes_per_rank"]
    assert any("No available memory for the cache blocks" in e and f"{utilization} x 1.0 MiB" in e
               for e in doc["errors"])
    assert doc["tp_sizes_ok"] == []  # no TP size fits in 1 MiB either


def test_fitting_reports_kv_tokens_and_utilization_changes_the_budget(make_checkpoint):
    folder = make_checkpoint()
    docs = [json.loads(runner.invoke(app, ["inspect", folder, "-p", "h100", "-f", "json", *extra]).stdout)["memory"]
            for extra in ([], ["--assume", "gpu_memory_utilization=0.5"])]
    assert [d["fits"] for d in docs] == [True, True]
    assert docs[1]["budget_bytes"] == 40 * GIB
    for d in docs:
        assert d["kv_cache_tokens"] == (d["budget_bytes"] - d["weight_bytes_per_rank"]) // d["kv_bytes_per_token"]


def test_unknown_device_memory_is_said_not_failed(make_checkpoint):
    result = runner.invoke(app, ["inspect", make_checkpoint(), "-p", "cuda:90", "-f", "json"])
    memory = json.loads(result.stdout)["memory"]
    assert result.exit_code == 0 and memory["fits"] is None and "--assume device_memory=" in memory["note"]


def _deepseek_v3() -> Spec:
    """bench/giants.py's DeepSeek-V3 shape (config.json of deepseek-ai/DeepSeek-V3), in 8 shards here."""
    spec = importlib.util.spec_from_file_location("giants", os.path.join(ROOT, "bench", "giants.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dataclasses.replace(module.DEEPSEEK_V3, shards=8)


@pytest.fixture(scope="module")
def deepseek_v3(tmp_path_factory):
    return open_local(write_checkpoint(str(tmp_path_factory.mktemp("deepseek-v3")), _deepseek_v3()))


@pytest.mark.parametrize("platform, fits", [("h100", False), ("h200", True)])
def test_deepseek_v3_on_8_gpus_fits_h200_not_h100(deepseek_v3, platform, fits):
    v033 = select_profile("0.33")  # utilization 0.92 (0.34 gives the extensible KV cache all 80 GiB, below)
    report = inspect_checkpoint(deepseek_v3, InspectOptions(parse_platform(platform), v033, tp=8))
    # 671B parameters, ~1 byte each, over 8 ranks: between 80 x 0.92 and 141 x 0.92 GiB per rank.
    assert 74 * GIB < report.memory.weight_bytes < 129 * GIB
    assert report.memory.fits is fits and report.ok is fits
    assert (8 in report.tp_sizes_ok) is fits and 4 not in report.tp_sizes_ok and 16 in report.tp_sizes_ok
    grid = matrix(deepseek_v3, InspectOptions(parse_platform(platform), v033), [parse_platform(platform)], [8])
    assert grid.cells[0].ok is fits and (grid.cells[0].reason is None) is fits


def test_deepseek_v3_on_8_h100_with_034s_extensible_kv_cache(deepseek_v3):
    """0.34's default budget is the whole 80 GiB on an H100: the weights (~79.3 GiB per rank) leave under 1 GiB."""
    report = inspect_checkpoint(deepseek_v3, InspectOptions(parse_platform("h100"), select_profile("0.34"), tp=8))
    assert report.memory.budget == 80 * GIB and report.memory.utilization == 1.0
    assert 0 < report.memory.kv_bytes < GIB


def _memory(folder: str, **options):
    platform = apply_assumptions(parse_platform("cuda:90"), ["device_memory=1GiB"])
    return inspect_checkpoint(open_local(folder), InspectOptions(platform, LATEST, **options)).memory


@pytest.mark.parametrize("spec, options", [
    ({}, {"kv_cache_dtype": "fp8"}), ({}, {"kv_cache_dtype": "fp8_e4m3"}), ({"kv_cache": "tensor"}, {}),
    ({"kv_cache": "tensor", "quant": "modelopt-fp8"}, {}),
])
def test_an_fp8_kv_cache_holds_twice_the_tokens(make_checkpoint, spec, options):
    spec = {"quant": "ct-fp8", **spec}
    bf16, fp8 = _memory(make_checkpoint(**spec), kv_cache_dtype="bfloat16"), _memory(make_checkpoint(**spec), **options)
    assert bf16.kv_bytes_per_token == 2 * 2 * 2 * 64 * 2  # layers x (K, V) x KV heads x head_dim x bf16
    assert fp8.kv_bytes_per_token == bf16.kv_bytes_per_token // 2
    assert fp8.kv_tokens == fp8.kv_bytes // fp8.kv_bytes_per_token >= 2 * bf16.kv_tokens


@pytest.mark.parametrize("tp", [1, 4])
def test_an_fp8_mla_cache_holds_one_byte_per_latent_element(make_checkpoint, tp):
    folder = make_checkpoint(quant="fp8-block", architecture="DeepseekV3ForCausalLM", model_type="deepseek_v3",
                             mla=True, q_lora_rank=128, kv_lora_rank=128, qk_rope_head_dim=32, data="sparse")
    assert _memory(folder, tp=tp, kv_cache_dtype="fp8").kv_bytes_per_token == 2 * (128 + 32)


def test_skipped_layers_keep_their_model_dtype_bytes(make_checkpoint):
    memory = _memory(make_checkpoint(quant="ct-fp8", kv_cache="tensor"), kv_cache_dtype_skip_layers=("0",))
    assert memory.kv_bytes_per_token == 2 * 2 * 64 * 2 + 2 * 2 * 64 * 1  # layer 0 in bf16, layer 1 in fp8


def test_online_quantization_counts_the_fp8_weights_vllm_holds(make_checkpoint):
    """A bf16 Llama-3-70B-shaped checkpoint: 131 GiB in bf16 does not fit one H100, but under --quantization
    fp8_per_tensor vLLM quantizes each layer as it loads (layerwise online processing) and holds ~66 GiB of FP8
    weights; the figures say so, with the load-time peak of one bf16 layer."""
    folder = make_checkpoint(quant=None, hidden=8192, intermediate=28672, heads=64, kv_heads=8, head_dim=128,
                             layers=80, vocab=128256, data="sparse")
    options = InspectOptions(parse_platform("h100"), LATEST)
    stored = inspect_checkpoint(open_local(folder), options).memory
    online = inspect_checkpoint(open_local(folder), options._replace(quantization="fp8_per_tensor")).memory
    assert stored.error is not None and stored.weight_bytes > 130 * GIB
    assert online.error is None and 64 * GIB < online.weight_bytes < 68 * GIB
    assert online.online_peak == 2 * 28672 * 8192 * 2  # the gate_up_proj of one layer, in bf16
    assert "loading adds at most 896.0 MiB, one bf16 layer" in summary(online)
    assert not stored.online_peak
