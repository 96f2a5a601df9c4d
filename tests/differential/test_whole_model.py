"""The whole-model harness's own logic (always): reading a built model's modules and comparing them with
fp8check's report. The run against the wheels is opt-in: FP8CHECK_WHOLE_MODEL=0.28.0,0.33.0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from enum import Enum

import pytest
import torch

from fp8check.core.checkpoint.local import open_local
from fp8check.core.model.layouts import ARCHITECTURES
from fp8check.core.model.transformers_classes import CLASSES as TRANSFORMERS_CLASSES
from fp8check.core.model.vllm_registry import serves
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import select_profile

sys.path.insert(0, os.path.dirname(__file__))
from crosscheck_model import (  # noqa: E402
    MODEL, STAND_IN_IMPLS, _guard_attention_impls, compare_model, our_modules, read_modules,
)
from whole_model import (  # noqa: E402
    FAMILIES, KV_CACHE_DTYPES, KV_FAMILIES, KV_QUANTS, NOT_LAID_OUT, PARALLEL, explained, fp8check_side, grid, served,
    still_open, write,
)


# Stand-ins named as vLLM's classes are: read_modules goes by class names, as it must across releases.
class LinearBase(torch.nn.Module):
    pass


class QKVParallelLinear(LinearBase):
    pass


class ReplicatedLinear(LinearBase):
    pass


class GateLinear(ReplicatedLinear):
    pass


class FusedMoEMethodBase:
    pass


class Fp8MoEBackend(Enum):
    TRITON = "triton"


class TritonExperts:
    pass


class Fp8MoEMethod(FusedMoEMethodBase):
    def __init__(self):
        self.fp8_backend, self.experts_cls, self.block_quant = Fp8MoEBackend.TRITON, TritonExperts, True


class TritonFp8BlockScaledMMKernel:
    pass


class Fp8LinearMethod:
    def __init__(self):
        self.fp8_linear = TritonFp8BlockScaledMMKernel()


class UnquantizedLinearMethod:
    pass


class AttentionLayerBase:
    pass


class Attention(torch.nn.Module, AttentionLayerBase):
    def __init__(self, kv_cache_dtype, backend):
        super().__init__()
        self.kv_cache_dtype, self.attn_backend = kv_cache_dtype, backend


class FlashAttentionBackend:
    @staticmethod
    def get_name():
        return "FLASH_ATTN"


class Fp8KVCacheMethod:
    pass


def _module(cls, method):
    module = cls()
    module.quant_method = method
    return module


def _model():
    model = torch.nn.Module()
    model.qkv_proj = _module(QKVParallelLinear, Fp8LinearMethod())
    model.gate = _module(GateLinear, UnquantizedLinearMethod())
    model.plain = torch.nn.Linear(2, 2, device="meta")
    runner = _module(torch.nn.Module, Fp8MoEMethod())  # 0.33: MoERunner holds the method, and so does its child
    runner.routed_experts = torch.nn.Module()
    runner.routed_experts.quant_method = runner.quant_method
    model.experts = runner
    return model


def test_read_modules_reads_every_method_once_with_its_kernel_backend_and_classes():
    modules = read_modules(_model())
    assert set(modules) == {"qkv_proj", "gate", "plain", "experts"}
    assert modules["qkv_proj"]["scheme"] == "Fp8LinearMethod"
    assert modules["qkv_proj"]["kernel"] == "TritonFp8BlockScaledMMKernel"
    assert "ReplicatedLinear" in modules["gate"]["types"] and modules["gate"]["type"] == "GateLinear"
    assert modules["plain"] == {"kind": "linear", "type": "nn.Linear", "types": ["nn.Linear"],
                                "scheme": "UnquantizedLinearMethod", "kernel": None, "backend": None}
    assert (modules["experts"]["kind"], modules["experts"]["kernel"], modules["experts"]["backend"]) == (
        "moe", "TritonExperts", "TRITON")


def test_read_modules_reads_each_attention_layer_with_or_without_a_kv_cache_method():
    model = torch.nn.Module()
    model.quantized = Attention("fp8", FlashAttentionBackend)
    model.quantized.quant_method = Fp8KVCacheMethod()
    model.plain = Attention("auto", FlashAttentionBackend)
    modules = read_modules(model)
    assert {name: (row["kind"], row["kv_cache_dtype"], row["scheme"], row["backend"])
            for name, row in modules.items()} == {"quantized": ("attention", "fp8", "Fp8KVCacheMethod", "FLASH_ATTN"),
                                                  "plain": ("attention", "auto", None, "FLASH_ATTN")}


def _theirs(modules, error=None, names=None, tied=False):
    return {"error": error, "stage": "model" if error else None, "modules": modules, "names": names or {},
            "tied": tied}


LINEAR = {"kind": "linear", "type": "QKVParallelLinear", "types": ["QKVParallelLinear", "LinearBase"],
          "scheme": "Fp8LinearMethod", "kernel": "TritonFp8BlockScaledMMKernel", "backend": None}
OURS = {"kind": "linear", "type": "QKVParallelLinear", "scheme": "Fp8LinearMethod",
        "kernel": "TritonFp8BlockScaledMMKernel", "backend": None, "error": None}


@pytest.mark.parametrize("ours,theirs,verdict,differs", [
    (OURS, LINEAR, "agree", ()),
    (dict(OURS, kernel="CutlassFP8ScaledMMLinearKernel"), LINEAR, "differs", ("kernel",)),
    (dict(OURS, scheme="UnquantizedLinearMethod", kernel=None), LINEAR, "differs", ("scheme", "kernel")),
    (dict(OURS, type="RowParallelLinear"), LINEAR, "differs", ("class",)),
    (dict(OURS, error="K (320) is not a multiple of 128"), LINEAR, "post-load prediction", ("error",)),
])
def test_compare_model_judges_each_module(ours, theirs, verdict, differs):
    rows = compare_model({"m.qkv_proj": ours}, (), _theirs({"m.qkv_proj": theirs}))
    assert [(r.name, r.verdict, r.differs) for r in rows] == [("m.qkv_proj", verdict, differs)]


THEIR_ATTENTION = {"kind": "attention", "type": "Attention", "types": ["Attention", "AttentionLayerBase"],
                   "scheme": "Fp8KVCacheMethod", "kernel": None, "kv_cache_dtype": "fp8", "backend": "FLASH_ATTN"}
OUR_ATTENTION = {"kind": "attention", "scheme": "Fp8KVCacheMethod", "kernel": None, "backend": "FLASH_ATTN",
                 "kv_cache_dtype": "fp8", "error": None, "errors": []}


@pytest.mark.parametrize("ours,theirs,verdict,differs", [
    (OUR_ATTENTION, THEIR_ATTENTION, "agree", ()),
    # vLLM keeps "auto" on the layer; fp8check shows it as the model dtype
    (dict(OUR_ATTENTION, kv_cache_dtype="bfloat16"), dict(THEIR_ATTENTION, kv_cache_dtype="auto"), "agree", ()),
    (dict(OUR_ATTENTION, kv_cache_dtype="bfloat16"), THEIR_ATTENTION, "differs", ("kv cache dtype",)),
    (dict(OUR_ATTENTION, scheme=None), THEIR_ATTENTION, "differs", ("kv method",)),
    (dict(OUR_ATTENTION, scheme=None), dict(THEIR_ATTENTION, scheme=None), "agree", ()),
    (dict(OUR_ATTENTION, backend="FLASHINFER"), THEIR_ATTENTION, "differs", ("backend",)),
    (dict(OUR_ATTENTION, backend=None, error="No valid attention backend found for cuda with ..."), THEIR_ATTENTION,
     "differs", ("backend",)),
    (dict(OUR_ATTENTION, error="model.layers.0.self_attn.attn: no v_scale ..."), THEIR_ATTENTION,
     "post-load prediction", ()),
])
def test_compare_model_judges_each_attention_layer_on_kv_dtype_method_and_backend(ours, theirs, verdict, differs):
    rows = compare_model({"m.attn": ours}, (), _theirs({"m.attn": theirs}))
    assert [(r.name, r.kind, r.verdict, r.differs) for r in rows] == [("m.attn", "attention", verdict, differs)]


@pytest.mark.parametrize("errors,verdict", [
    (["FlashAttention does not support fp8_e5m2 kv-cache on this device.",
      "fp8_e5m2 kv-cache is not supported with fp8 checkpoints."], "agree"),
    (["FlashAttention does not support fp8_e5m2 kv-cache on this device."], "differs"),
])
def test_a_refused_attention_layer_agrees_when_any_of_its_errors_is_vllms(errors, verdict):
    theirs = _theirs({}, error="ValueError: fp8_e5m2 kv-cache is not supported with fp8 checkpoints.")
    rows = compare_model({"m.attn": dict(OUR_ATTENTION, error=errors[0], errors=errors)}, (), theirs)
    assert [(r.name, r.verdict) for r in rows] == [(MODEL, verdict)]


def _fake_selector(monkeypatch, impl_cls):
    """vllm.v1.attention.selector with a get_attn_backend answering a backend whose impl is impl_cls."""
    backend = type("FlashAttentionBackend", (), {"get_impl_cls": staticmethod(lambda: impl_cls)})
    selector = types.ModuleType("vllm.v1.attention.selector")
    selector.get_attn_backend = lambda *args, **kwargs: backend
    parents = {name: types.ModuleType(name) for name in ("vllm", "vllm.v1", "vllm.v1.attention")}
    parents["vllm"].v1, parents["vllm.v1"].attention = parents["vllm.v1"], parents["vllm.v1.attention"]
    parents["vllm.v1.attention"].selector = selector
    for name, module in {**parents, "vllm.v1.attention.selector": selector}.items():
        monkeypatch.setitem(sys.modules, name, module)
    return selector


class RefusingImpl:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("FlashAttention does not support fp8_e5m2 kv-cache on this device.")


class StubbedImpl:
    def __init__(self, *args, **kwargs):
        raise TypeError("'<' not supported between instances of 'int' and 'MagicMock'")


def test_an_impl_refusing_its_configuration_raises_as_in_vllm_one_failing_on_a_stub_is_stood_in(monkeypatch):
    STAND_IN_IMPLS.clear()
    selector = _fake_selector(monkeypatch, RefusingImpl)
    _guard_attention_impls()
    with pytest.raises(NotImplementedError, match="fp8_e5m2"):
        selector.get_attn_backend().get_impl_cls()()
    assert STAND_IN_IMPLS == []
    selector = _fake_selector(monkeypatch, StubbedImpl)
    _guard_attention_impls()
    impl = selector.get_attn_backend().get_impl_cls()()
    assert type(impl).__name__ == "_StandInImpl"
    assert isinstance(impl, StubbedImpl)  # as the real impl: Flint's FlintAttention asserts FlashInferImpl's class
    assert STAND_IN_IMPLS == ["StubbedImpl: TypeError: '<' not supported between instances of 'int' and 'MagicMock'"]


def test_compare_model_names_what_only_one_side_builds_and_why_a_row_is_not_compared():
    attention = dict(THEIR_ATTENTION)
    embedding = {"kind": "embedding", "type": "VocabParallelEmbedding", "types": ["VocabParallelEmbedding"],
                 "scheme": "UnquantizedEmbeddingMethod", "kernel": None, "backend": None}
    head = dict(embedding, kind="linear", type="ParallelLMHead")
    theirs = _theirs({"a.attn": attention, "embed_tokens": embedding, "lm_head": head, "b.qkv_proj": LINEAR},
                     tied=True)
    rows = {r.name: r for r in compare_model({"c.o_proj": OURS}, (), theirs)}
    assert rows["embed_tokens"].verdict == rows["lm_head"].verdict == "not compared"
    assert rows["a.attn"].differs == ("only in vLLM",)
    assert "tie_word_embeddings" in rows["lm_head"].reason
    assert rows["b.qkv_proj"].differs == ("only in vLLM",) and rows["c.o_proj"].differs == ("only in fp8check",)
    untied = {r.name: r for r in compare_model({}, (), dict(theirs, tied=False))}
    assert untied["lm_head"].differs == ("only in vLLM",)


def test_experts_fp8check_does_not_judge_are_counted_as_such_not_as_agreement():
    theirs = {"kind": "moe", "type": "RoutedExperts", "types": ["RoutedExperts"], "scheme": "Fp8MoEMethod",
              "kernel": "TritonExperts", "backend": "TRITON"}
    unjudged = {"kind": "moe", "scheme": "Fp8MoEMethod", "kernel": None, "backend": None, "error": None}
    rows = compare_model({"m.experts": unjudged}, (), _theirs({"m.experts": theirs}))
    assert [(r.verdict, r.differs) for r in rows] == [("not judged", ())]
    wrong = compare_model({"m.experts": dict(unjudged, scheme="CompressedTensorsW8A8Fp8MoEMethod")}, (),
                          _theirs({"m.experts": theirs}))
    assert wrong[0].verdict == "differs"


def test_compare_model_maps_checkpoint_names_as_vllms_loader_renames_them():
    theirs = _theirs({"language_model.model.layers.0.qkv_proj": LINEAR},
                     names={"model.language_model.layers.0.qkv_proj": "language_model.model.layers.0.qkv_proj"})
    rows = compare_model({"model.language_model.layers.0.qkv_proj": OURS}, (), theirs)
    assert [r.verdict for r in rows] == ["agree"]


@pytest.mark.parametrize("ours_errors,layer_error,verdict", [
    (("Number of experts in the model must be greater than 0 when expert parallelism is enabled.",), None, "agree"),
    ((), "Number of experts in the model must be greater than 0 when expert parallelism is enabled. (more)", "agree"),
    (("something else",), None, "differs"),
    ((), None, "differs"),
])
def test_a_build_vllm_refuses_is_one_row_matched_against_every_error_of_fp8check(ours_errors, layer_error, verdict):
    theirs = _theirs({}, error="ValueError: Number of experts in the model must be greater than 0 when expert "
                               "parallelism is enabled.")
    rows = compare_model({"x": dict(OURS, error=layer_error)}, ours_errors, theirs)
    assert [(r.name, r.verdict) for r in rows] == [(MODEL, verdict)]


def test_an_error_only_fp8check_reports_on_a_model_vllm_builds_is_a_difference():
    rows = compare_model({"m.qkv_proj": OURS}, ("TP 3 splits nothing",), _theirs({"m.qkv_proj": LINEAR}))
    assert [(r.name, r.differs) for r in rows] == [(MODEL, ("error",)), ("m.qkv_proj", ())]


@pytest.mark.parametrize("quant,flags,stored", [("bf16+fp8_per_block", ("fp8_per_block", False), False),
                                                ("fbgemm-fp8", (None, True), True), ("ct-fp8-block", (None, False), True)])
def test_each_format_is_served_with_its_flags_on_both_sides(tmp_path, quant, flags, stored):
    assert served(quant) == flags
    with open(os.path.join(write(str(tmp_path), "qwen3-moe", quant), "config.json"), encoding="utf-8") as fh:
        assert ("quantization_config" in json.load(fh)) is stored


@pytest.mark.parametrize("family,quant,name,listed", [
    # renamed modules: the layer lists are matched under vLLM's names (test_vllm_names.py), so these agree
    ("qwen3-vl-moe", "fbgemm-fp8", "language_model.model.layers.0.mlp.gate", False),
    ("qwen2.5-vl", "quark-fp8", "language_model.lm_head", False),
    ("qwen3-moe", "fbgemm-fp8", "model.layers.0.mlp.gate", False),       # no renaming: must agree
    ("gpt-oss", "modelopt-pcpt", "model.layers.0.mlp.experts", True),
    ("gpt-oss", "modelopt-fp8", "model.layers.0.mlp.experts", False),
])
def test_open_differences_are_listed_for_their_cases_only(family, quant, name, listed):
    row = types.SimpleNamespace(name=name, theirs={})
    assert (still_open("0.33.0", "cuda:90", family, quant, row) is not None) is listed


@pytest.mark.parametrize("release,listed", [("0.28.0", False), ("0.33.0", True), ("0.34.0", True), ("0.41.2", True),
                                            ("0.3.0", False)])
def test_a_difference_found_on_0_33_stays_listed_for_the_releases_after_it(release, listed):
    row = types.SimpleNamespace(name="model.layers.0.mlp.gate", theirs={})
    assert (still_open(release, "cuda:90", "qwen3-moe-router-unlisted", "modelopt-pbwo", row) is not None) is listed


def test_every_architecture_of_the_layout_table_has_a_whole_model_family():
    laid_out = {family: fields for family, (fields, _) in FAMILIES.items() if family not in NOT_LAID_OUT}
    architectures = {fields["architecture"] for fields in laid_out.values()}
    assert set(ARCHITECTURES) <= architectures
    # the others are judged through the Transformers backend from transformers' own classes (transformers_classes)
    assert architectures - set(ARCHITECTURES) <= {arch for classes in TRANSFORMERS_CLASSES.values() for arch in classes}
    assert not {FAMILIES[family][0]["architecture"] for family in NOT_LAID_OUT} & set(ARCHITECTURES)


MLA_IMPORT = "ImportError: cannot import name 'compile_flash_attn_varlen_func_from_specs'"


@pytest.mark.parametrize("where,listed", [
    (f"0.28.0|cpu|deepseek-v3|(model)|{MLA_IMPORT}", True),
    (f"0.33.0|cpu|deepseek-v3|(model)|{MLA_IMPORT}", False),
    ("0.34.0|rocm:gfx942|kimi-k3.1|(model)|", True),
    ("0.34.0|cuda:90|kimi-k3.1|(model)|", False),
    ("0.28.0|xpu|mistral-3|(model)|ValueError: Model architectures ['M'] failed to be inspected.", True),
    ("0.33.0|xpu|mistral-3|(model)|ValueError: Model architectures ['M'] failed to be inspected.", False),
])
def test_explained_differences_match_only_their_release_and_platform(where, listed):
    release, platform, family, name, error = where.split("|")
    row = types.SimpleNamespace(name=name, theirs={"error": error})
    assert (explained(release, platform, family, row) is not None) is listed


KIMI_TOWER = {"mm_projector.proj.0", "mm_projector.proj.2", "vision_tower.encoder.blocks.0.wqkv",
              "vision_tower.encoder.blocks.0.wo", "vision_tower.encoder.blocks.0.mlp.fc0",
              "vision_tower.encoder.blocks.0.mlp.fc1"}

LING_3_VL_TOWER = {*(f"model.visual.blocks.{i}.{leaf}" for i in (0, 1)
                     for leaf in ("attn.qkv", "attn.proj", "mlp.linear_fc1", "mlp.linear_fc2")),
                   "model.linear_proj.0", "model.linear_proj.2"}


# Families vLLM builds in FP8 on one platform and format only: (platform, quant). Muse-Spark: Quark on ROCm
# (models/muse_spark's QUANT_CONFIG_REFUSALS), with BF16 experts; its FP8 experts are refused there (0.33's text).
BUILT_ON = {"muse-spark": ("mi300x", "quark-fp8"), "muse-spark-bf16-experts": ("mi300x", "quark-fp8")}
REFUSED = {"muse-spark": ("MuseSpark1x FP8 on ROCm requires the Triton MoE backend; got 'auto'.",),
           # a Mistral-format Mixtral: mixtral.py reads num_local_experts, which the reader never writes
           "mixtral-fmt": ("'PreTrainedConfig' object has no attribute 'num_local_experts'",),
           # ninth round (fam-mma): a version MiniCPMV.__new__ builds no class for (minicpmv.py's ValueError)
           "minicpm-v-3.0": ("Currently, MiniCPMV only supports versions 2.0, 2.5, 2.6, 4.0, 4.5. Got version: "
                             "(3, 0)",)}


# Families judged through the Transformers backend from transformers' own classes (not the table: their report notes
# the backend class and the transformers assumed; tests/test_families.py checks them).
BACKEND_FAMILIES = {family for family, (fields, _) in FAMILIES.items() if fields["architecture"] not in ARCHITECTURES}


@pytest.mark.parametrize("family", sorted(set(FAMILIES) - set(NOT_LAID_OUT) - BACKEND_FAMILIES))
def test_each_family_checkpoint_is_judged_by_fp8check_without_notes(tmp_path, family):
    """The generated checkpoints are ones fp8check models (no 'not in fp8check's table' note) and route at TP 2;
    the one whose ignore list leaves the BF16 routers out fails on exactly those, Nemotron-H's block-FP8 in_proj on
    vLLM's block check, Kimi-K2.5's FP8 tower on compressed-tensors (built unquantized)."""
    # Mistral's own format, read from 0.34 (Mistral-Large-4's dsa): the FP8 its releases use (the other scale names a
    # consolidated checkpoint can hold load as vLLM's loader renames them, which fp8check reports post-load); a family
    # 0.33 does not register (Kimi-K3.1) on 0.34
    registered = serves(FAMILIES[family][0]["architecture"], select_profile("0.33"))
    quant, release = ("ct-fp8-block", "0.33" if registered else "0.34") if not FAMILIES[family][0].get(
        "mistral_format") else ("fp8-block" if family == "mistral-large-4-fmt" else "fp8-dynamic", "0.34")
    platform, quant = BUILT_ON.get(family, ("h100", quant))
    report = inspect_checkpoint(open_local(write(str(tmp_path), family, quant)),
                                InspectOptions(parse_platform(platform), select_profile(release), tp=2))
    failing = {layer.name for layer in report.layers if layer.errors}
    assert not report.notes and report.errors == REFUSED.get(family, ()) and our_modules(report)
    expected = {"qwen3-moe-router-unlisted": {"model.layers.0.mlp.gate", "model.layers.1.mlp.gate"},
                # ERNIE-4.5-VL's routers, stored BF16 as mlp.gate.weight(_1) and ignored under that name, are built
                # as text_experts_gate / vision_experts_gate WITH the quant config (ernie45_vl_moe.py): FP8 layers
                # over BF16 weights, which vLLM loads without an error and computes garbage with.
                "ernie-4.5-vl": {f"model.layers.{i}.mlp.{kind}_experts_gate" for i in (1, 2)
                                 for kind in ("text", "vision")},
                # Granite-4.0-H's one Mamba group: at TP > 1 mamba_mixer2.py builds in_proj as a plain
                # ColumnParallelLinear with the group replicated, 4384 rows a rank at TP 2 (vLLM's own block error).
                "granite-4.0-h": {f"model.layers.{i}.mamba.in_proj" for i in (0, 2, 3)},
                # DeepSeek-MoE v1's attention is built without a prefix (deepseek_v2.py DeepseekAttention): the
                # ignore list does not reach it, so the BF16 q / k / v / o become FP8 layers (vLLM's own build)
                "deepseek-moe-attn-bf16": {"model.layers.0.self_attn.qkv_proj", "model.layers.0.self_attn.o_proj"},
                # orion.py declares no packed_modules_mapping: the list naming q / k / v misses the fused qkv_proj
                "orion-qkv-bf16": {"model.layers.0.self_attn.qkv_proj"},
                # MambaMixer2's in_proj ends in one column per Mamba head (32 / TP 2 = 16): no 128-block fits it
                # (validate_fp8_block_shape, vLLM's own error; NVIDIA's FP8 exports are per tensor).
                "nemotron-h": {"backbone.layers.0.mixer.in_proj"},
                # with one group the same in_proj is one column over the group replicated a rank (2320 rows at TP 2)
                "nemotron-h-one-group": {"backbone.layers.0.mixer.in_proj"},
                # Falcon-H1's mixers listed BF16 under the checkpoint's names, which vLLM's prefix (model.{L + i}.mixer)
                # never matches: FP8 layers over BF16 weights (falcon-h1-listed names vLLM's prefix too)
                "falcon-h1": {f"model.layers.{i}.mamba.in_proj" for i in range(4)},
                # mamba.py's MambaMixer takes no quant config: every FP8 mixer weight is loaded unscaled
                "mamba": {f"backbone.layers.{i}.mixer.{leaf}" for i in range(4)
                          for leaf in ("in_proj", "x_proj", "dt_proj", "out_proj")},
                # Mamba-2's in_proj ends in one column per head (64 / TP 2 = 32): no 128-block fits it
                "mamba2": {f"backbone.layers.{i}.mixer.in_proj" for i in range(4)},
                # Codestral Mamba in Mistral's format also stores Mistral's scale names, which mamba2.py's loader
                # finds no parameter for (both mixers)
                "mamba-fmt": {f"backbone.layers.{i}.mixer.{leaf}" for i in (0, 1) for leaf in ("in_proj", "out_proj")},
                # a Mistral-format Mixtral, which vLLM refuses (REFUSED): its tensors keep their stored names, which
                # name no router (feed_forward.gate) and no head (output) of mixtral.py's: BF16 under the FP8 config
                "mixtral-fmt": {"layers.0.feed_forward.gate", "layers.1.feed_forward.gate", "output"},
                # Voxtral's Whisper encoder, built with the model's FP8 config: Mistral's exports keep it BF16
                # (synth too), loaded unscaled into FP8 parameters
                "voxtral-fmt": {f"whisper_encoder.whisper_encoder.layers.0.{leaf}"
                                for leaf in ("self_attn.qkv_proj", "self_attn.out_proj", "mlp.fc1", "mlp.fc2")},
                # the same text model under nano_nemotron_vl.py's language_model
                **{family: {"language_model.backbone.layers.0.mixer.in_proj"}
                   for family in ("nemotron-nano-vl", "nemotron-omni", "nemotron-super-omni", "nemotron-omni-v3")},
                # MiMo-V2-Pro's fused FP8 qkv_proj under compressed-tensors: mimo_v2.py _try_load_fp8_qkv_proj holds
                # the weight until a weight_scale_inv that this format never writes arrives (never loaded, no error).
                "mimo-v2-pro": {f"model.layers.{i}.self_attn.qkv_proj" for i in range(4)},
                # kimi_k25.py builds the tower and projector with quant_config=None for compressed-tensors: synth's
                # FP8 tower would load unscaled (Moonshot's compressed-tensors exports leave them BF16).
                "kimi-k2.5": KIMI_TOWER,
                # GPT-2's Conv1D weights are stored [in, out] and gpt2.py transposes the weight alone: block scales
                # written in the stored orientation do not fit (the square attn.c_proj's do: a warning only)
                "gpt2": {f"transformer.h.{i}.{leaf}" for i in (0, 1) for leaf in ("attn.c_attn", "mlp.c_fc",
                                                                                     "mlp.c_proj")},
                # in_proj_qkvgfab's b_proj shard has one row a head (16 / TP 2 = 8): no 128-block fits it
                # (validate_fp8_block_shape, vLLM's own error, as the whole-model run shows)
                "kimi-linear": {f"model.layers.{i}.self_attn.in_proj_qkvgfab" for i in range(3)},
                # AliceAI's KDA layers (0, 1, 3) build the same in_proj_qkvgfab under linear_attn (alice_ai.py)
                "alice-ai": {f"model.layers.{i}.linear_attn.in_proj_qkvgfab" for i in (0, 1, 3)},
                # Ling-3.0 under compressed-tensors: the KDA qkvb_proj's b_proj shard (one row a head) and the MLA's
                # head-wise g_proj, 16 / TP 2 = 8 rows, fit no 128-block (validate_fp8_block_shape, vLLM's own error;
                # bailing_moe_v3.py builds b_proj apart and replicates g_proj under block-FP8 Fp8Config only); with
                # b_proj listed BF16, qkvb_proj's shards mix schemes (vLLM's refusal too)
                **{family: {*(f"model.layers.{i}.attention.qkvb_proj" for i in range(3)),
                            "model.layers.3.attention.g_proj", *extra}
                   for family, extra in (("ling-3", ()), ("ling-3-qlora-b-bf16", ()), ("ling-3-vl", ()),
                                         ("ling-3-vl-tower-bf16", LING_3_VL_TOWER))},
                # (ling-3-vl-tower-bf16: bailing_moe_v3_vl.py builds a tower listed whole unquantized under an
                # Fp8Config only; compressed-tensors builds it FP8, over the BF16 tensors)
                # Qwen2.5-Omni with the vision q / k / v listed BF16: vLLM matches attn.qkv by its own name (the
                # dotted packed key "attn.qkv"), so it is an FP8 layer over BF16 weights (Tower.unexpanded)
                "qwen2.5-omni-vision-qkv-listed": {f"thinker.visual.blocks.{i}.attn.qkv" for i in (0, 1)},
                # LFM3's per-head output gate self_attn.gate_proj: one row a head (16 / TP 2 = 8), no 128-block fits
                # it (validate_fp8_block_shape, vLLM's own error)
                "lfm3": {f"model.layers.{i}.self_attn.gate_proj" for i in (1, 2)},
                # Gemma-3n's Laurel block (laurel_rank 64): linear_left's 64 rows and linear_right's 64 columns split to
                # 32 a rank, no 128-block (validate_fp8_block_shape, vLLM's own error); gemma-3n-listed's ignore entry
                # under the checkpoint's name misses model.self_decoder.per_layer_model_projection (BF16 behind FP8)
                **{family: {f"{root}.layers.{i}.laurel.{leaf}" for i in range(6) for leaf in ("linear_left",
                                                                                               "linear_right")}
                   | extra for family, root, extra in (
                       ("gemma-3n", "model", set()), ("gemma-3n-vl", "model.language_model", set()),
                       ("gemma-3n-listed", "model", {"model.per_layer_model_projection"}))},
                # Kimi-K3 / K3.1: the same KDA in_proj and MoonViT tower as Kimi-Linear and Kimi-K2.5; on 0.33 (no
                # DSA layers) K3's layer 3 is an MLA whose fused_qkv_a_g_proj shard (the replicated q_a / kv_a latents
                # and 1/2 of g_proj: 576 rows) fits no 128-block either.
                **{family: {*(f"language_model.layers.{i}.self_attn.in_proj_qkvgfab" for i in range(3)),
                            *KIMI_TOWER, *extra}
                   for family, extra in (("kimi-k3", {"language_model.layers.3.self_attn.fused_qkv_a_g_proj"}),
                                         ("kimi-k3.1", set()))},
                # ninth round (fam-textb): Zamba2's Mamba in_proj (64 heads / TP 2 rows: no 128-block) and the LoRA
                # adapters' A (adapter_rank 128 / TP 2), vLLM's own errors (zamba2-listed lists them: none);
                # Nemotron-H Puzzle as Nemotron-H; Param2-MoE's and Unlimited-OCR-2's attention listed BF16 under
                # names vLLM's lists never meet (param2moe.py's inner-model mapper, DASHAttention's empty prefix)
                "zamba2": {*(f"model.layers.{i}.{'mamba_decoder.mamba' if i % 2 == 0 else 'mamba'}.in_proj"
                             for i in range(5)),
                           *(f"model.layers.{layer}.shared_transformer.{part}_adapter_list.{use}.0"
                             for layer, use in ((0, 0), (0, 2), (2, 1))
                             for part in ("feed_forward.gate_up_proj", "self_attn.linear_q", "self_attn.linear_k",
                                          "self_attn.linear_v"))},
                "nemotron-h-puzzle": {"backbone.layers.0.mixer.in_proj"},
                "param2-moe-attn-listed": {"model.layers.1.attention.qkv_proj"},
                "unlimited-ocr2-text-attn-bf16": {"model.layers.0.self_attn.qkv_proj",
                                                  "model.layers.0.self_attn.o_proj"},
                # ninth round (fam-texta): TeleChat2's loader slices an FP8 key_value's scales like its weight
                # (telechat2.py _split_key_value): a post-load failure of every qkv_proj
                "telechat2": {f"transformer.h.{i}.self_attention.qkv_proj" for i in range(2)},
                # ninth round (fam-mma): Phi-4-multimodal's list names layer 0's LoRA-wrapped attention under its
                # checkpoint names (`<linear>.base_layer`), which vLLM's mapper does not map onto qkv_proj / o_proj:
                # FP8 layers over the BF16 weights
                "phi-4-multimodal-listed": {f"model.layers.0.self_attn.{leaf}.base_layer"
                                            for leaf in ("qkv_proj", "o_proj")},
                # ninth round (fam-mmb): DeepSeek-VL2's timm MLPs above TP 1, quantized column / row linears asked
                # under blocks.N.mlp.fcN (no list entry reaches them): 4304 / 2 rows fit no 128-block (vLLM's own
                # block error), over the BF16 tower
                "deepseek-vl2": {f"vision.{block}.mlp.{fc}" for block in (*(f"blocks.{i}" for i in range(27)),
                                                                            "attn_pool") for fc in ("fc1", "fc2")}}
    assert failing == expected.get(family, set())


@pytest.mark.parametrize("family", NOT_LAID_OUT)
def test_a_family_not_laid_out_is_said_so_and_judges_no_module(tmp_path, family):
    report = inspect_checkpoint(open_local(write(str(tmp_path), family, "ct-fp8-block")),
                                InspectOptions(parse_platform("h100"), select_profile("0.34")))
    # Mistral-Large-4's HF class: no release registers it (vLLM refuses it or tries its Transformers backend).
    assert "is not in fp8check's table" in report.notes[0] or "vLLM 0.34 registers no" in report.notes[0]
    assert report.layers and {layer.layout for layer in report.layers} == {"generic"}


@pytest.mark.skipif(not os.environ.get("FP8CHECK_WHOLE_MODEL"), reason="needs the unzipped vLLM wheels")
def test_whole_model_agreement_with_vllm_wheels():
    script = os.path.join(os.path.dirname(__file__), "whole_model.py")
    proc = subprocess.run([sys.executable, script, "--releases", os.environ["FP8CHECK_WHOLE_MODEL"]],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]


def test_the_kv_cache_axis_runs_on_its_families_only_and_auto_everywhere():
    cells = grid(["llama", "mixtral"], ["ct-fp8-block"], list(KV_CACHE_DTYPES))
    assert {cell[2] for cell in cells if cell[0] == "mixtral"} == {"auto"}
    assert {cell[2] for cell in cells if cell[0] == "llama"} == set(KV_CACHE_DTYPES)
    assert {cell[1] for cell in cells if cell[0] == "llama"} == {"ct-fp8-block", *KV_QUANTS}
    assert {(f, tp, ep) for f, _, kv, tp, ep in cells if kv == "auto"} >= {(f, tp, ep) for f in ("llama", "mixtral")
                                                                           for tp, ep in PARALLEL}
    assert "deepseek-v3" in KV_FAMILIES and "gemma-2" in KV_FAMILIES


@pytest.mark.parametrize("quant,kv_cache_dtype,dtype,method", [
    ("ct-fp8-block:kv-tensor", "auto", "fp8", "CompressedTensorsKVCacheMethod"),   # kv_cache_scheme turns auto to fp8
    ("ct-fp8-block", "auto", "bfloat16", "CompressedTensorsKVCacheMethod"),
    ("fp8-block:kv-tensor", "fp8_e5m2", "fp8_e5m2", "Fp8KVCacheMethod"),
    ("modelopt-fp8:kv-tensor", "auto", "fp8_e4m3", "ModelOptKVCacheMethod"),
    ("quark-fp8:kv-tensor", "bfloat16", "bfloat16", "QuarkKVCacheMethod"),
])
def test_each_kv_checkpoint_is_written_and_inspected_with_its_kv_cache_dtype(tmp_path, quant, kv_cache_dtype, dtype,
                                                                              method):
    folder = write(str(tmp_path), "llama", quant)
    scales = [n for n in open_local(folder).tensors if n.endswith(("k_scale", "v_scale", "output_scale"))
              and ".self_attn." in n]
    assert bool(scales) is (":kv-" in quant)
    modules, _ = fp8check_side(folder, select_profile("0.33.0"), "cuda:90", 1, False, quant, kv_cache_dtype)
    attention = {name: (row["kv_cache_dtype"], row["scheme"]) for name, row in modules.items()
                 if row["kind"] == "attention"}
    assert attention == {f"model.layers.{i}.self_attn.attn": (dtype, method) for i in range(2)}


@pytest.mark.parametrize("quant,served_as", [("ct-fp8-block:kv-tensor", (None, False)),
                                             ("fbgemm-fp8:kv-tensor", (None, True))])
def test_a_kv_quant_name_is_served_as_its_format(quant, served_as):
    assert served(quant) == served_as


@pytest.mark.parametrize("scheme", ["Fp8KVCacheMethod", None])
def test_an_attention_layer_only_vllm_builds_is_a_difference_with_or_without_a_kv_method(scheme):
    rows = compare_model({}, (), _theirs({"a.attn": dict(THEIR_ATTENTION, scheme=scheme)}))
    assert [(r.name, r.verdict, r.differs) for r in rows] == [("a.attn", "differs", ("only in vLLM",))]


GEMMA_ATTN = "language_model.model.layers.0.self_attn.attn"
NO_VALID_MM = ("ValueError: No valid attention backend found for cuda with AttentionSelectorConfig(head_size=256, "
               "use_mm_prefix=True, ...)")
COMPOSITE_STUB = ("ValueError: Causal attention backend FLASHINFER does not accept the attention arguments required by "
                  "the general backend TRITON_ATTN: '<' not supported between instances of 'int' and 'MagicMock'")


@pytest.mark.parametrize("where,listed", [
    # 0.28's XPU / ROCm lose the mm-prefix flag without EngineArgs (the harness); CUDA and 0.33 keep it.
    ("0.28.0|xpu|gemma-3-vision|language_model.model.layers.0.self_attn.attn|", True),
    ("0.28.0|xpu|gemma-3-vision-256|(model)|NotImplementedError: FlashAttention does not support fp8_e5m2 kv-cache "
     "on this device.", True),
    ("0.28.0|rocm:gfx942|gemma-3-vision-256|(model)|ValueError: No valid attention backend found for rocm with "
     "AttentionSelectorConfig(head_size=256, use_mm_prefix=False, ...)", True),
    ("0.33.0|xpu|gemma-3-vision|language_model.model.layers.0.self_attn.attn|", False),
    ("0.28.0|cuda:90|gemma-3-vision|language_model.model.layers.0.self_attn.attn|", False),
    ("0.28.0|xpu|gemma-3|model.layers.0.self_attn.attn|", False),      # the text model: no mm prefix, must agree
    # The inert vllm_flash_attn's FA4 answer on sm80 / sm89 changes only the reasons of the refusal.
    (f"0.33.0|cuda:80|gemma-3-vision-256|(model)|{NO_VALID_MM}", True),
    (f"0.28.0|cuda:89|gemma-3-vision|(model)|{NO_VALID_MM}", True),
    (f"0.33.0|cuda:90|gemma-3-vision-256|(model)|{NO_VALID_MM}", False),
    # TRITON_FLASHINFER's FlashInfer impl on a stubbed constant (sm100, 0.33 only).
    (f"0.33.0|cuda:100|gemma-3-vision-256|(model)|{COMPOSITE_STUB}", True),
    (f"0.34.0|cuda:100|gemma-3-vision|(model)|{COMPOSITE_STUB}", True),
    (f"0.28.0|cuda:100|gemma-3-vision|(model)|{COMPOSITE_STUB}", False),
    (f"0.33.0|cuda:100|gemma-3-vision-256|{GEMMA_ATTN}|", False),
])
def test_the_mm_prefix_harness_limits_are_explained_for_their_cases_only(where, listed):
    release, platform, family, name, error = where.split("|")
    row = types.SimpleNamespace(name=name, theirs={"error": error})
    assert (explained(release, platform, family, row) is not None) is listed


@pytest.mark.parametrize("family", ["gemma-3-vision", "gemma-3-vision-256"])
def test_gemma_3_vision_attention_is_no_longer_listed_open(family):
    row = types.SimpleNamespace(name=GEMMA_ATTN, theirs={"error": ""})
    assert still_open("0.33.0", "cuda:90", family, "ct-fp8-block", row, "fp8") is None
