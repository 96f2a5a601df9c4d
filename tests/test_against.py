"""load --against BASE: checkpoints compressed-tensors quantizes from a tiny BASE in the test run pass; a transposed
block scale, two nearly equal scales swapped, and a layer's weight and scale copied from another are each caught
and named; a BASE that cannot be the source is refused (exit 2). Table and JSON."""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil

import pytest
from typer.testing import CliRunner

torch = pytest.importorskip("torch")
pytest.importorskip("compressed_tensors")

from fp8check.cli.app import app  # noqa: E402
from fp8check.core.load import against  # noqa: E402
from fp8check.core.records import OUTPUT_LIMIT, WEIGHT_LIMIT  # noqa: E402
from fp8check.synth import write_checkpoint  # noqa: E402

runner = CliRunner()
ARGS = ["-p", "h100", "-d", "cpu", "--tokens", "8"]


def ct_quantize(base: str, out: str, preset: str) -> str:
    """BASE quantized by compressed-tensors itself (tests/ct_checkpoints.quantize), saved by transformers."""
    from ct_checkpoints import quantize
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.bfloat16)
    compressor = quantize(model, {preset: ["Linear"]})
    model.save_pretrained(out)
    compressor.update_config(out)
    return out


def rewrite(src: str, dst: str, change) -> str:
    """A copy of checkpoint `src` whose tensors `change(tensors)` edits in place."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(src, dst)
    tensors = load_file(os.path.join(src, "model.safetensors"))
    change(tensors)
    save_file(tensors, os.path.join(dst, "model.safetensors"), metadata={"format": "pt"})
    return dst


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """{name: folder}: BASE (random and heavy-tailed bf16) and compressed-tensors' FP8 checkpoints of each."""
    root = tmp_path_factory.mktemp("against")
    out = {}
    for distribution in ("normal", "heavy"):
        out[f"base-{distribution}"] = write_checkpoint(str(root / f"base-{distribution}"), quant=None,
                                                       distribution=distribution)
    for preset in ("FP8", "FP8_DYNAMIC", "FP8_BLOCK"):
        out[preset] = ct_quantize(out["base-normal"], str(root / preset), preset)
    out["FP8_DYNAMIC-heavy"] = ct_quantize(out["base-heavy"], str(root / "FP8_DYNAMIC-heavy"), "FP8_DYNAMIC")
    return out


SCHEMA = os.path.join(os.path.dirname(__file__), "..", "fp8check", "schema", "report.schema.json")


def run(*args):
    """load --format json; the document is checked against the published schema."""
    result = runner.invoke(app, ["load", *args, *ARGS, "--format", "json"])
    doc = json.loads(result.stdout) if result.stdout.strip() else None
    jsonschema = pytest.importorskip("jsonschema")
    with open(SCHEMA) as fh:
        jsonschema.Draft202012Validator(json.load(fh)).validate(doc)
    return result, doc


def against_of(doc):
    return {layer["name"]: layer["against"] for layer in doc["layers"]}


@pytest.mark.parametrize("preset, base", [("FP8", "base-normal"), ("FP8_DYNAMIC", "base-normal"),
                                          ("FP8_BLOCK", "base-normal"), ("FP8_DYNAMIC-heavy", "base-heavy")])
def test_a_checkpoint_compressed_tensors_made_from_base_passes(made, preset, base):
    result, doc = run(made[preset], "--against", made[base])
    assert result.exit_code == 0, result.output
    assert doc["against"] == made[base] and doc["ok"] is True
    compared = against_of(doc)
    assert set(compared) == {layer["name"] for layer in doc["layers"]} and all(compared.values())
    for name, figures in compared.items():
        assert figures["verdict"] == "ok" and figures["reason"] is None, (name, figures)
        if name == "lm_head":  # unquantized: BASE's own weight
            assert figures["weight_rel_error"] == 0 and figures["codes_total"] is None
            continue
        # round-to-nearest from BASE: every code given back, weight off by FP8 rounding only
        assert figures["codes_mismatched"] == 0 and figures["codes_drift"] == 0 and figures["codes_total"] > 0
        assert 0.015 < figures["weight_rel_error"] < 0.03 and figures["cosine"] > 0.999
        assert 0.015 < figures["output_rel_error"] < figures["output_limit"]


def _closest_pair(scales: dict[str, torch.Tensor], shapes: dict[str, tuple]) -> tuple[str, str, float]:
    pairs = [(float(max(a, b) / min(a, b)), x, y) for (x, a), (y, b) in itertools.combinations(scales.items(), 2)
             if shapes[x] == shapes[y]]
    ratio, x, y = min(pairs)
    return x, y, ratio


def test_two_nearly_equal_per_tensor_scales_swapped_are_caught_though_the_weight_error_is_small(made, tmp_path):
    """The closest pair of same-shape per-tensor scales in the model, swapped: aggregate errors stay inside FP8
    rounding; the codes drift one way, which round-to-nearest never does."""
    from safetensors.torch import load_file

    tensors = load_file(os.path.join(made["FP8"], "model.safetensors"))
    scales = {k: v.float().reshape(()) for k, v in tensors.items() if k.endswith(".weight_scale")}
    x, y, ratio = _closest_pair(scales, {k: tuple(tensors[k.removesuffix("_scale")].shape) for k in scales})
    assert ratio < 1.01  # nearly equal

    def swap(t):
        t[x], t[y] = t[y].clone(), t[x].clone()

    result, doc = run(rewrite(made["FP8"], str(tmp_path / "swapped"), swap), "--against", made["base-normal"])
    assert result.exit_code == 1
    failed = {name: figures for name, figures in against_of(doc).items() if figures["verdict"] == "FAIL"}
    expected = {_module_of(x), _module_of(y)}
    assert set(failed) == expected
    for tensor in (x, y):
        figures = failed[_module_of(tensor)]
        assert f"codes of {tensor.removesuffix('_scale')} (" in figures["reason"] and "one step" in figures["reason"]
        assert figures["weight_rel_error"] < WEIGHT_LIMIT and figures["codes_mismatched"] == 0
        assert figures["codes_drift"] != 0


def _module_of(tensor: str) -> str:
    """The vLLM module a checkpoint tensor loads into (q/k/v -> qkv_proj, gate/up -> gate_up_proj)."""
    name = tensor.removesuffix("_scale").removesuffix(".weight")
    for leaves, fused in ((("q_proj", "k_proj", "v_proj"), "qkv_proj"), (("gate_proj", "up_proj"), "gate_up_proj")):
        for leaf in leaves:
            if name.endswith("." + leaf):
                return name[: -len(leaf)] + fused
    return name


def test_a_transposed_square_block_scale_is_caught_and_the_block_named(made, tmp_path):
    """Of the square block scales, the one whose off-diagonal blocks are the closest (the hardest to see)."""
    from safetensors.torch import load_file

    tensors = load_file(os.path.join(made["FP8_BLOCK"], "model.safetensors"))
    square = {k: v for k, v in tensors.items() if k.endswith(".weight_scale") and v.shape[0] == v.shape[1] > 1}
    name = min(square, key=lambda k: float(square[k][0, 1].float() / square[k][1, 0].float() - 1).__abs__())

    def transpose(t):
        t[name] = t[name].t().contiguous()

    result, doc = run(rewrite(made["FP8_BLOCK"], str(tmp_path / "transposed"), transpose),
                      "--against", made["base-normal"])
    assert result.exit_code == 1
    failed = {n: f for n, f in against_of(doc).items() if f["verdict"] == "FAIL"}
    assert list(failed) == [_module_of(name)]
    worst = failed[_module_of(name)]["worst"]
    assert worst["kind"] == "block" and worst["tensor"] == name.removesuffix("_scale")
    assert tuple(worst["index"]) in ((0, 1), (1, 0))  # the diagonal blocks keep their own scales


def test_a_layer_with_another_layers_weight_and_scale_is_caught(made, tmp_path):
    source, target = "model.layers.1.self_attn.o_proj", "model.layers.0.self_attn.o_proj"

    def copy(t):
        for suffix in (".weight", ".weight_scale"):
            t[target + suffix] = t[source + suffix].clone()

    result, doc = run(rewrite(made["FP8_DYNAMIC"], str(tmp_path / "copied"), copy), "--against", made["base-normal"])
    assert result.exit_code == 1
    failed = {n: f for n, f in against_of(doc).items() if f["verdict"] == "FAIL"}
    assert list(failed) == [target]
    figures = failed[target]
    assert figures["codes_mismatched"] > 0.5 * figures["codes_total"]   # unrelated values
    assert figures["weight_rel_error"] > 1 and figures["cosine"] < 0.1
    assert "more than one step" in figures["reason"]


def test_an_unquantized_layer_that_is_not_bases_fails(made, tmp_path):
    """lm_head is kept in BF16: it must be BASE's own, here replaced by the input embedding (an untied export)."""
    def untie(t):
        t["lm_head.weight"] = t["model.embed_tokens.weight"].clone()

    result, doc = run(rewrite(made["FP8_BLOCK"], str(tmp_path / "untied"), untie), "--against", made["base-normal"])
    assert result.exit_code == 1
    failed = {n: f for n, f in against_of(doc).items() if f["verdict"] == "FAIL"}
    assert list(failed) == ["lm_head"] and failed["lm_head"]["codes_total"] is None
    assert "one rounding into bf16 allows" in failed["lm_head"]["reason"]


def test_the_table_gains_weight_and_output_error_columns_and_names_the_failing_layer(made, tmp_path):
    source, target = "model.layers.1.mlp.down_proj", "model.layers.0.mlp.down_proj"

    def copy(t):
        for suffix in (".weight", ".weight_scale"):
            t[target + suffix] = t[source + suffix].clone()

    folder = rewrite(made["FP8_BLOCK"], str(tmp_path / "copied"), copy)
    result = runner.invoke(app, ["load", folder, *ARGS, "--against", made["base-normal"]])
    assert result.exit_code == 1
    text = " ".join(result.stdout.split())
    assert "weight err" in text and "output err" in text
    assert f"{target}: " in text and "differ from BASE requantized with the stored scale" in text
    clean = runner.invoke(app, ["load", made["FP8_BLOCK"], *ARGS, "--against", made["base-normal"]])
    assert clean.exit_code == 0 and "weight err" in clean.stdout
    plain = runner.invoke(app, ["load", made["FP8_BLOCK"], *ARGS])
    assert plain.exit_code == 0 and "weight err" not in plain.stdout


def test_layers_limits_the_comparison(made):
    result, doc = run(made["FP8_BLOCK"], "--against", made["base-normal"], "--layers", r"layers\.1\.self_attn")
    assert result.exit_code == 0, result.output
    compared = {name for name, figures in against_of(doc).items() if figures}
    assert compared == {"model.layers.1.self_attn.qkv_proj", "model.layers.1.self_attn.o_proj"}


@pytest.mark.parametrize("fmt", ["table", "json"])
@pytest.mark.parametrize("base_spec, message", [
    (dict(architecture="Qwen3ForCausalLM", model_type="qwen3"), "BASE is a different model (architectures"),
    (dict(hidden=512), "BASE is a different model (hidden_size 512, here 256)"),
    (dict(layers=3), "BASE is a different model (num_hidden_layers 3"),
    (dict(quant="ct-fp8-block"), "BASE is quantized (compressed-tensors)"),
])
def test_a_base_that_cannot_be_the_source_is_refused_with_one_line(made, tmp_path, fmt, base_spec, message):
    base = write_checkpoint(str(tmp_path / "other"), **{"quant": None, "data": "zeros", **base_spec})
    result = runner.invoke(app, ["load", made["FP8_BLOCK"], *ARGS, "--against", base, "--format", fmt])
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output
    if fmt == "json":
        assert json.loads(result.stdout)["ok"] is False


def test_tp_with_against_is_refused(made):
    result = runner.invoke(app, ["load", made["FP8_BLOCK"], *ARGS, "--tp", "2", "--against", made["base-normal"]])
    assert result.exit_code == 2 and "run it without --tp 2" in result.stderr


@pytest.mark.parametrize("change, failing, message", [
    (lambda t: t.pop("model.layers.1.mlp.up_proj.weight"), "model.layers.1.mlp.gate_up_proj",
     "BASE has no tensor model.layers.1.mlp.up_proj.weight"),
    (lambda t: t.update({"model.layers.0.self_attn.o_proj.weight": t["model.layers.0.self_attn.o_proj.weight"][:, :128]
                         .contiguous()}), "model.layers.0.self_attn.o_proj",
     "model.layers.0.self_attn.o_proj.weight is [256, 256] here but [256, 128] in BASE"),
])
def test_a_base_module_missing_or_of_another_shape_fails_that_layer_naming_the_tensor(made, tmp_path, change,
                                                                                    failing, message):
    base = rewrite(made["base-normal"], str(tmp_path / "base"), change)
    result, doc = run(made["FP8_BLOCK"], "--against", base)
    assert result.exit_code == 1
    failed = {n: f for n, f in against_of(doc).items() if f["verdict"] == "FAIL"}
    assert list(failed) == [failing] and message in failed[failing]["reason"]
    load = next(layer["load"] for layer in doc["layers"] if layer["name"] == failing)
    assert load["status"] == "FAIL" and message in load["errors"][-1]


@pytest.mark.parametrize("ratio", [1.0, 1.003, 1.01, 1.03, 0.97])
def test_drift_measures_a_wrong_scale_as_8_log2_ratio_codes(ratio):
    """The statistic itself: codes made with scale s and judged with s * ratio drift by up to 8*log2(ratio) per code
    (e4m3 has 8 codes per power of two; a larger stored scale requantizes BASE smaller, so the stored codes are
    the larger). The accepted arithmetics give some codes back by chance, so it reads a little low, never high;
    made with s and judged with s, it is exactly 0."""
    weight = torch.randn(256, 1024, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    scale = weight.float().abs().max() / 448
    codes = (weight.float() / scale).to(torch.float8_e4m3fn)
    far, drift = against.code_differences(codes, weight, (scale * ratio).reshape(1, 1))
    expected, measured = 8 * math.log2(ratio), drift.float().mean().item()
    assert int(far.sum()) == 0
    if ratio == 1.0:
        assert int(drift.abs().sum()) == 0
    else:
        assert 0.5 * abs(expected) < abs(measured) <= 1.02 * abs(expected) and measured * expected > 0


def test_a_hub_base_downloads_only_the_shards_of_the_selected_modules(made, monkeypatch, tmp_path):
    """BASE by repo id follows MODEL's rules: headers by range, then only the shards --layers needs."""
    from fakehub import FakeHub

    for name, value in (("HF_HOME", tmp_path / "hf"), ("HF_HUB_CACHE", tmp_path / "hf" / "hub"),
                        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"), ("HF_HUB_DISABLE_TELEMETRY", "1")):
        monkeypatch.setenv(name, str(value))
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    base = write_checkpoint(str(tmp_path / "base"), quant=None, shards=3)  # the same tensors as base-normal
    with open(os.path.join(base, "model.safetensors.index.json")) as fh:
        weight_map = json.load(fh)["weight_map"]
    with FakeHub() as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        server.add_repo("org/base", base)
        result, doc = run(made["FP8_BLOCK"], "--against", "org/base", "--layers", r"layers\.1\.self_attn\.o_proj")
        whole = {r.path.rsplit("/", 1)[1] for r in server.log if r.method == "GET" and "/resolve/" in r.path
                 and r.path.endswith(".safetensors") and r.range is None}
    assert result.exit_code == 0, result.output
    assert whole == {weight_map["model.layers.1.self_attn.o_proj.weight"]}  # the other shards: header ranges only
    assert doc["against"] == "org/base"
    assert against_of(doc)["model.layers.1.self_attn.o_proj"]["verdict"] == "ok"


# ----------------------------------------------------------------------------------------------- FusedMoE experts

QWEN3_MOE = dict(architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", hidden=512, heads=4, kv_heads=2,
                 head_dim=128, experts=4, moe_intermediate=256, layers=2, data="random")
EXPERTS = ["--layers", r"\.experts$"]
EXPERT = "model.layers.0.mlp.experts.{}.{}"


@pytest.fixture(scope="module")
def moe_made(tmp_path_factory):
    """A Qwen3-MoE BASE and compressed-tensors' FP8 checkpoints of it (every expert's Linear quantized by the preset;
    the router stays BF16 as llm-compressor's recipes ignore it)."""
    import ct_checkpoints

    root = tmp_path_factory.mktemp("against-moe")
    out = {"base": write_checkpoint(str(root / "base"), **{**QWEN3_MOE, "quant": None})}
    for preset in ("FP8", "FP8_DYNAMIC", "FP8_BLOCK"):
        out[preset] = ct_checkpoints.quantize_folder(out["base"], str(root / preset), preset,
                                                     ("lm_head", "re:.*mlp.gate$"))
    return out


def moe_loads(doc):
    return {moe["name"]: moe["load"] for moe in doc["moe"] if moe["load"] is not None}


@pytest.mark.parametrize("preset", ["FP8", "FP8_DYNAMIC", "FP8_BLOCK"])
def test_experts_compressed_tensors_made_from_base_pass_each_compared(moe_made, preset):
    result, doc = run(moe_made[preset], "--against", moe_made["base"], *EXPERTS, "--all-experts")
    assert result.exit_code == 0, result.output
    loads = moe_loads(doc)
    assert set(loads) == {"model.layers.0.mlp.experts", "model.layers.1.mlp.experts"}
    for load in loads.values():
        assert [e["expert"] for e in load["experts"]] == [0, 1, 2, 3]
        for figures in [load["against"]] + [e["against"] for e in load["experts"]]:
            assert figures["verdict"] == "ok" and figures["codes_mismatched"] == 0 and figures["codes_drift"] == 0
            assert 0 < figures["weight_rel_error"] < WEIGHT_LIMIT
            assert 0 < figures["output_rel_error"] < OUTPUT_LIMIT
        # every expert's three tensors: 3 x 256 x 512 codes each
        assert load["against"]["codes_total"] == 4 * 3 * 256 * 512
    assert "read 0.0 MB" not in " ".join(doc["load_notes"])


@pytest.mark.parametrize("preset, change, selection, failing", [
    # the gate scales of experts 1 and 2 swapped (per tensor): both fail, only with --all-experts they run
    ("FP8", lambda t: t.update({EXPERT.format(1, "gate_proj.weight_scale"): t[EXPERT.format(2, "gate_proj.weight_scale")],
                                EXPERT.format(2, "gate_proj.weight_scale"): t[EXPERT.format(1, "gate_proj.weight_scale")]}),
     ["--all-experts"], {1, 2}),
    # the last expert's down_proj (weight and block scales) copied from the first: runs by default
    ("FP8_BLOCK", lambda t: t.update({EXPERT.format(3, f"down_proj.{s}"): t[EXPERT.format(0, f"down_proj.{s}")].clone()
                                      for s in ("weight", "weight_scale")}), [], {3}),
])
def test_a_wrong_expert_is_caught_and_named(moe_made, tmp_path, preset, change, selection, failing):
    folder = rewrite(moe_made[preset], str(tmp_path / "changed"), change)
    result, doc = run(folder, "--against", moe_made["base"], *EXPERTS, *selection)
    assert result.exit_code == 1
    load = moe_loads(doc)["model.layers.0.mlp.experts"]
    bad = {e["expert"] for e in load["experts"] if e["against"]["verdict"] == "FAIL"}
    assert bad == failing and load["status"] == "FAIL"
    assert load["against"]["verdict"] == "FAIL" and load["against"]["expert"] in failing
    assert any(f"model.layers.0.mlp.experts expert {e}: " in err for e in failing for err in load["errors"])
    assert moe_loads(doc)["model.layers.1.mlp.experts"]["against"]["verdict"] == "ok"


def test_experts_get_against_columns_in_table_and_markdown(moe_made):
    args = ["load", moe_made["FP8_BLOCK"], *ARGS, "--against", moe_made["base"]]
    table = runner.invoke(app, [*args, *EXPERTS])
    assert table.exit_code == 0, table.output
    assert table.stdout.count("weight err") == 2  # the linear table's header (no rows here) and the MoE table's
    plain = runner.invoke(app, ["load", moe_made["FP8_BLOCK"], *ARGS, *EXPERTS])
    assert plain.exit_code == 0 and "weight err" not in plain.stdout
    markdown = runner.invoke(app, [*args, "--format", "markdown"])
    rows = [line for line in markdown.stdout.splitlines() if line.startswith("| ")]
    header, moe_rows = rows[0], [r for r in rows if "experts`" in r]
    assert moe_rows and {r.count(" | ") for r in moe_rows} == {header.count(" | ")}


@pytest.mark.parametrize("base_spec, message", [
    (dict(experts=8), "BASE is a different model (num_experts (n_routed_experts) 8, here 4)"),
    (dict(moe_intermediate=128), "BASE is a different model (moe_intermediate_size 128, here 256)"),
])
def test_a_base_with_other_experts_is_refused(moe_made, tmp_path, base_spec, message):
    base = write_checkpoint(str(tmp_path / "other"), **{**QWEN3_MOE, "quant": None, "data": "zeros", **base_spec})
    result = runner.invoke(app, ["load", moe_made["FP8"], *ARGS, *EXPERTS, "--against", base])
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_errors_reading_base_name_base(made):
    """A BASE whose weights cannot be fetched: the line says it is about BASE."""
    from fp8check.core.checkpoint.local import open_local
    from fp8check.core.errors import InputError
    from fp8check.core.model.modules import build_layout

    def fetch(names):
        raise InputError("model.safetensors: not found in the model folder")

    ckpt = open_local(made["FP8"])
    chosen = build_layout(ckpt.tensors, ckpt.config).linears[:1]
    base = against.Base("my-base", open_local(made["base-normal"]), fetch)
    with pytest.raises(InputError, match=r"^--against my-base: model\.safetensors: not found"):
        base.bind(ckpt, chosen, 1)


def test_a_base_that_cannot_be_opened_is_named(made, tmp_path):
    from fp8check.core.errors import InputError

    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"^--against .*empty: config\.json"):
        against.Base.open(str(tmp_path / "empty"))
    result = runner.invoke(app, ["load", made["FP8"], *ARGS, "--against", str(tmp_path / "empty"), "-f", "json"])
    assert result.exit_code == 2 and json.loads(result.stdout)["errors"][0].startswith("--against ")


def test_nothing_to_compare_is_refused(made):
    from fp8check.core.checkpoint.local import open_local
    from fp8check.core.errors import InputError

    base = against.Base("b", open_local(made["base-normal"]), lambda names: made["base-normal"])
    with pytest.raises(InputError, match="no module to compare"):
        base.bind(open_local(made["FP8"]), [], 1)
