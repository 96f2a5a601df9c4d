"""The release procedure's own logic (always): fetching and unzipping a wheel, the definition-level diff of two
vLLM trees, the registry diff, the grouping of disagreements and the report. The run against real wheels is
`python tests/differential/new_release.py X` (it needs the network or the unzipped wheels, and takes long)."""

from __future__ import annotations

import os
import sys
import zipfile

import pytest

from fp8check.core.errors import InputError
from fp8check.core.targets.profiles import LATEST, select_profile

sys.path.insert(0, os.path.dirname(__file__))
import new_release  # noqa: E402
from new_release import (  # noqa: E402
    FILE, IMPORTS, Area, definitions, diff_area, diff_registry, diff_sources, disagreements_markdown,
    ensure_release, group, kind_of, previous_release, unzip_without_compiled,
)
from run import Difference, Suite, difference_table, divergence, profile_for  # noqa: E402


def _wheel(path, files: dict[str, str]) -> str:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return str(path)


WHEEL_FILES = {"vllm/__init__.py": "", "vllm/_C.abi3.so": "ELF", "vllm/libs/libcuda_stub.so.12": "ELF",
               "vllm/platforms/cpu.py": "X = 1\n", "vllm-0.99.0.dist-info/METADATA": "Name: vllm\n"}


def test_a_wheel_is_unzipped_without_its_compiled_libraries(tmp_path):
    unzip_without_compiled(_wheel(tmp_path / "w.whl", WHEEL_FILES), str(tmp_path / "0.99.0"))
    found = {os.path.relpath(os.path.join(d, f), tmp_path / "0.99.0") for d, _, fs in os.walk(tmp_path / "0.99.0")
             for f in fs}
    assert found == {"vllm/__init__.py", "vllm/platforms/cpu.py", "vllm-0.99.0.dist-info/METADATA"}
    assert [p for p in os.listdir(tmp_path) if p.startswith(".unzip-")] == []  # staged, then renamed whole


def test_an_unzipped_release_is_used_as_it_is(tmp_path, monkeypatch):
    (tmp_path / "src" / "0.99.0" / "vllm").mkdir(parents=True)
    monkeypatch.setattr(new_release.subprocess, "run", lambda *a, **k: pytest.fail("downloaded again"))
    assert ensure_release("0.99.0", str(tmp_path / "src"), str(tmp_path / "wheels")) == str(tmp_path / "src/0.99.0")


def test_a_missing_release_is_downloaded_with_pip_and_unzipped(tmp_path, monkeypatch):
    calls = []

    def pip(argv, check):
        calls.append(argv)
        folder = argv[argv.index("-d") + 1]
        os.makedirs(folder)
        _wheel(os.path.join(folder, "vllm-0.99.0-cp38-abi3-manylinux_2_28_x86_64.whl"), WHEEL_FILES)

    monkeypatch.setattr(new_release.subprocess, "run", pip)
    root = ensure_release("0.99.0", str(tmp_path / "src"), str(tmp_path / "wheels"))
    assert calls == [[sys.executable, "-m", "pip", "download", "vllm==0.99.0", "--no-deps", "-d",
                      str(tmp_path / "wheels" / "0.99.0")]]
    assert os.path.isfile(os.path.join(root, "vllm/platforms/cpu.py"))
    assert not os.path.exists(os.path.join(root, "vllm/_C.abi3.so"))


def test_the_base_release_is_the_newest_older_one_unzipped(tmp_path):
    for name in ("0.9.0", "0.33.0", "0.34.0", "0.36.0", "notes"):
        (tmp_path / name).mkdir()
    assert previous_release("0.35.0", str(tmp_path)) == "0.34.0"
    assert previous_release("0.10.0", str(tmp_path)) == "0.9.0"      # by version, not by name
    assert previous_release("0.9.0", str(tmp_path)) is None


def test_a_release_without_a_profile_runs_with_the_stand_in_and_one_with_a_profile_with_its_own():
    with pytest.raises(InputError):
        profile_for("9.99.0")
    assert profile_for("9.99.0", "latest") == LATEST
    assert profile_for("0.33.0", "latest") == select_profile("0.33.0")


# --- the definition-level diff ---------------------------------------------------------------------------------

OLD = '''"""Quantization."""
from typing import Literal
import os

QuantizationMethods = Literal["fp8", "fp_quant", "modelopt"]
DEPRECATED_QUANTIZATION_METHODS = ["fbgemm_fp8", "fp_quant"]


class Fp8Config:
    """The config."""

    @classmethod
    def get_min_capability(cls) -> int:
        return 75

    def check(self, cc):
        if cc < 89:
            raise ValueError(f"The device compute capability of{cc} is not supported.")
'''
NEW = '''"""Quantization, reworded."""
from typing import Literal
import os, re

QuantizationMethods = Literal["fp8", "w4afp8", "modelopt"]
DEPRECATED_QUANTIZATION_METHODS = ["fbgemm_fp8"]


class Fp8Config:
    """The config, reworded."""

    @classmethod
    def get_min_capability(cls) -> int:
        return 80

    def check(self, cc):
        if cc < 89:
            raise ValueError(
                f"The device compute capability of {cc} is not supported.")


def new_gate():
    raise NotImplementedError("w4afp8 experts need sm90")
'''


def _changes(old, new, **kw):
    return {c.name: c for c in diff_sources(old, new, **kw)}


def test_members_of_a_literal_and_a_list_are_diffed_element_by_element():
    changes = _changes(OLD, NEW)
    assert changes["QuantizationMethods"].details == ("members: +'w4afp8', -'fp_quant'",)
    assert changes["DEPRECATED_QUANTIZATION_METHODS"].details == ("members: -'fp_quant'",)


def test_a_changed_error_text_is_named_per_function_with_its_fstring_fields():
    check = _changes(OLD, NEW)["Fp8Config.check"]
    assert check.how == "changed"
    assert "text removed: `The device compute capability of{cc} is not supported.`" in check.details
    assert "text added: `The device compute capability of {cc} is not supported.`" in check.details


def test_a_changed_return_value_shows_the_lines_that_differ():
    assert _changes(OLD, NEW)["Fp8Config.get_min_capability"].details == ("code: `- return 75`",
                                                                           "code: `+ return 80`")


def test_added_definitions_carry_their_texts_and_docstrings_and_formatting_do_not_count():
    changes = _changes(OLD, NEW)
    assert changes["new_gate"].how == "added"
    assert "text added: `w4afp8 experts need sm90`" in changes["new_gate"].details
    assert changes[IMPORTS].how == "changed"
    # Docstrings changed and the raise was re-wrapped: neither is a change of the class header or the method.
    assert "Fp8Config" not in changes
    rewrapped = OLD.replace('"""The config."""', '"""Other words."""\n    # a comment')
    assert diff_sources(OLD, rewrapped) == []


def test_class_members_and_enum_members_are_definitions_of_their_own():
    found = definitions('class AttentionBackendEnum(Enum):\n    FLASH_ATTN = "fa"\n    """attribute doc"""\n'
                        '    TRITON_ATTN = "triton"\n')
    assert set(found) == {"AttentionBackendEnum", "AttentionBackendEnum.FLASH_ATTN",
                          "AttentionBackendEnum.TRITON_ATTN"}
    added = _changes('class E:\n    A = "a"\n', 'class E:\n    A = "a"\n    B = "b"\n')
    assert [(c.name, c.how) for c in added.values()] == [("E.B", "added")]


def test_a_member_filter_keeps_only_the_matching_definitions():
    old = "class B:\n    def supports_sink(cls):\n        return False\n    def forward(self):\n        return 1\n"
    new = "class B:\n    def supports_sink(cls):\n        return True\n    def forward(self):\n        return 2\n"
    assert list(_changes(old, new, members=r"\.supports_\w*$")) == ["B.supports_sink"]
    assert _changes(old, new, detail=False)["B.forward"].details == ()


def _tree(root, files: dict[str, str]) -> str:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(root)


def test_an_area_diff_covers_its_files_recursively_and_names_files_added_and_removed(tmp_path):
    old = _tree(tmp_path / "old", {"q/a.py": OLD, "q/sub/gone.py": "X = 1\n", "q/same.py": "Y = 2\n",
                                   "other/b.py": "Z = 1\n"})
    new = _tree(tmp_path / "new", {"q/a.py": NEW, "q/sub/new.py": "X = 1\n", "q/same.py": "Y = 2  # same\n",
                                   "other/b.py": "Z = 2\n"})
    files = diff_area(old, new, Area("q", ("q/**/*.py",)))
    assert set(files) == {"q/a.py", "q/sub/gone.py", "q/sub/new.py"}    # formatting only: q/same.py unchanged
    assert [(c.name, c.how) for c in files["q/sub/gone.py"]] == [(FILE, "removed"), ("X", "removed")]
    assert files["q/sub/new.py"][0] == (FILE, "added", ())


def test_the_registry_diff_names_architectures_added_removed_and_moved():
    old = ('_TEXT_GENERATION_MODELS = {"GemmaForCausalLM": ("gemma", "GemmaForCausalLM"), '
           '"LlamaForCausalLM": ("llama", "LlamaForCausalLM"), "KeyeForCausalLM": ("keye", "Keye")}\n'
           '_TRANSFORMERS_SUPPORTED_MODELS = {}\n_VLLM_MODELS = {**_TEXT_GENERATION_MODELS}\n')
    new = ('_TEXT_GENERATION_MODELS = {"LlamaForCausalLM": ("llama", "LlamaForCausalLM"), '
           '"ZayaForCausalLM": ("zaya", "ZayaForCausalLM")}\n'
           '_TRANSFORMERS_SUPPORTED_MODELS = {"GemmaForCausalLM": ("transformers", "TransformersForCausalLM")}\n'
           '_VLLM_MODELS = {**_TEXT_GENERATION_MODELS}\n')
    assert diff_registry(old, new) == [
        "`GemmaForCausalLM` moved: _TEXT_GENERATION_MODELS ('gemma', 'GemmaForCausalLM') → "
        "_TRANSFORMERS_SUPPORTED_MODELS ('transformers', 'TransformersForCausalLM')",
        "`KeyeForCausalLM` removed (was _TEXT_GENERATION_MODELS ('keye', 'Keye'))",
        "`ZayaForCausalLM` added: _TEXT_GENERATION_MODELS ('zaya', 'ZayaForCausalLM')"]


# --- the disagreements by kind ---------------------------------------------------------------------------------

def _d(kind, differs, module="model.layers.0.mlp.down_proj", ours="a", theirs="b", platform="cuda:90",
       case="llama ct-fp8-block kv=auto TP1", verdict="differs", suite="whole model", detail=""):
    return Difference(suite, "0.35.0", platform, case, module, kind, tuple(differs), ours, theirs, verdict, detail)


@pytest.mark.parametrize("difference,kind", [
    (_d("harness", ("harness",), module="-"), "harness"),
    (_d("front door", ("error text",), module="front door"), "front door"),
    (_d("model", ("error text",), module="(model)"), "model build"),
    (_d("linear", ("only in vLLM",)), "module set"),
    (_d("attention", ("only in fp8check",)), "module set"),
    (_d("linear", ("scheme", "kernel")), "scheme"),
    (_d("linear", ("kernel",)), "kernel"),
    (_d("linear", ("class",)), "layer class"),
    (_d("linear", ("error",)), "error (one side only)"),
    (_d("linear", ("error text",)), "error text"),
    (_d("moe", ("backend",)), "MoE"),
    (_d("attention", ("backend",)), "attention"),
    (_d("attention", ("kv method", "backend")), "KV cache"),
    (_d("attention", ("kv cache dtype",)), "KV cache"),
    (_d("embedding", ("quantized",)), "other"),
])
def test_each_disagreement_has_its_kind(difference, kind):
    assert kind_of(difference) == kind


def test_identical_disagreements_are_counted_together_with_where_they_occur():
    rows = [_d("linear", ("kernel",), module=f"model.layers.{i}.mlp.down_proj", platform=p)
            for i in range(2) for p in ("cuda:90", "cuda:100")]
    rows += [_d("linear", ("kernel",), theirs="c"), _d("attention", ("backend",)),
             _d("linear", ("kernel",), verdict="post-load prediction")]
    groups = group(rows)
    assert list(groups) == ["kernel", "attention"]                   # KIND_ORDER; listed differences left out
    first, second = groups["kernel"]
    assert (first.rows, first.platforms, first.modules) == (4, ("cuda:100", "cuda:90"), ("model.layers.N.mlp.down_proj",))
    assert (second.rows, second.theirs) == (1, "c")


SELECTOR = ("No valid attention backend found for cuda with AttentionSelectorConfig(head_size={h}, "
            "use_per_head_quant_scales={s}, attn_type={t}, has_sliding_window={s}). Reasons: {{...}}.")


def test_where_two_error_texts_part_is_the_span_between_their_common_start_and_end():
    ours = SELECTOR.format(h=128, s=True, t="AttentionType.DECODER")
    theirs = SELECTOR.format(h=128, s=True, t="decoder")
    assert divergence(ours, theirs) == "after `attn_type=`: fp8check `AttentionType.DECODER`, vLLM `decoder`"
    assert divergence("Marlin is W8A16", "MarlinFP8ScaledMMLinearKernel is W8A16") == (
        "after `Marlin`: fp8check ``, vLLM `FP8ScaledMMLinearKernel`")


def test_the_suites_print_each_difference_with_where_its_texts_part_and_nothing_without_one():
    row = _d("model", ("error text",), module="(model)", ours="x", theirs="ValueError: y", detail="after ``: ...")
    assert difference_table([row], "error").splitlines()[-1] == (
        "| 0.35.0 | cuda:90 | llama ct-fp8-block kv=auto TP1 | (model) | error text | x | ValueError: y | "
        "after ``: ... |")
    assert difference_table([], "error") == ""


def test_error_texts_that_part_the_same_way_are_one_group_whatever_else_they_say():
    rows = [_d("model", ("error text",), module="(model)", ours=SELECTOR.format(h=h, s=s, t="AttentionType.DECODER"),
               theirs=SELECTOR.format(h=h, s=s, t="decoder"),
               detail=divergence(SELECTOR.format(h=h, s=s, t="AttentionType.DECODER"),
                                 SELECTOR.format(h=h, s=s, t="decoder")))
            for h in (128, 576) for s in (True, False)]
    [only] = group(rows)["model build"]
    assert (only.rows, only.detail) == (4, "after `attn_type=`: fp8check `AttentionType.DECODER`, vLLM `decoder`")


def test_the_disagreement_tables_escape_pipes_and_say_when_there_are_none():
    table = disagreements_markdown(group([_d("linear", ("error text",), ours="x | y")]))
    assert "### error text (1 rows, 1 distinct)" in table and "x \\| y" in table
    assert disagreements_markdown({}).startswith("None")


@pytest.mark.parametrize("passed", [True, False])
def test_the_procedure_runs_both_suites_on_the_release_with_the_stand_in_and_exits_on_their_verdict(
        tmp_path, monkeypatch, capsys, passed):
    old = _tree(tmp_path / "0.98.0", {"vllm/platforms/cpu.py": "def check():\n    raise ValueError('old')\n"})
    new = _tree(tmp_path / "0.99.0", {"vllm/platforms/cpu.py": "def check():\n    raise ValueError('new')\n"})
    asked = []

    def suite(name):
        def run_suite(releases, *args):
            asked.append((name, releases, args[-1]))
            rows = [] if passed else [_d("linear", ("kernel",), suite=name)]
            return Suite(f"{name} tables", rows, {}, [], passed)
        return run_suite

    monkeypatch.setattr(new_release, "ensure_release", lambda version: {"0.98.0": old, "0.99.0": new}[version])
    monkeypatch.setattr(new_release.run, "linear_suite", suite("linear"))
    monkeypatch.setattr(new_release.whole_model, "whole_model_suite", suite("whole model"))
    markdown = tmp_path / "report.md"
    monkeypatch.setattr(sys, "argv", ["new_release.py", "0.99.0", "--base", "0.98.0", "--markdown", str(markdown)])
    assert new_release.main() == (0 if passed else 1)
    assert asked == [("linear", ["0.99.0"], LATEST.name), ("whole model", ["0.99.0"], LATEST.name)]
    text = markdown.read_text()
    assert capsys.readouterr().out == text + "\n"
    assert f"{LATEST.name}, standing in" in text and "text added: `new`" in text
    assert ("### kernel (2 rows" in text) is not passed


# --- what vLLM 0.34 needed from the harness (crosscheck.py, crosscheck_model.py), on a stand-in vllm package -----

@pytest.fixture
def fake_vllm(tmp_path, monkeypatch):
    """Puts a vllm package of the given files on sys.path; forgotten afterwards."""
    def make(files: dict[str, str]) -> None:
        _tree(tmp_path / "site", {"vllm/__init__.py": "", **files})
        monkeypatch.syspath_prepend(str(tmp_path / "site"))

    yield make
    for name in [n for n in sys.modules if n == "vllm" or n.startswith("vllm.")]:
        del sys.modules[name]


CPU_PROBES = "_supports_cpu_fp8_w8a16 = False\n\ndef cpu_has_amx_fp8():\n    return True\n"


@pytest.mark.parametrize("layout", ["0.33: the probes on _custom_ops", "0.34: on _cpu_ops too"])
def test_the_cpu_probes_are_patched_on_every_module_that_holds_them(fake_vllm, monkeypatch, layout):
    import importlib

    import torch

    from fp8check.core.routing.crosscheck import _patch_ops

    fake_vllm({"vllm/_custom_ops.py": CPU_PROBES, **({"vllm/_cpu_ops.py": CPU_PROBES} if "0.34" in layout else {})})
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", torch.cpu._is_amx_tile_supported)  # restored after
    _patch_ops()
    for name in ("vllm._custom_ops", "vllm._cpu_ops") if "0.34" in layout else ("vllm._custom_ops",):
        module = importlib.import_module(name)
        assert (module._supports_cpu_fp8_w8a16, module.cpu_has_amx_fp8()) == (True, False)


CPU_PLATFORM = '''class CpuPlatform:
    @classmethod
    def check_and_update_config(cls, vllm_config):
        from vllm.triton_utils import HAS_TRITON
        if not HAS_TRITON:
            raise RuntimeError("vLLM on x86 CPUs requires Triton (triton-cpu).")
        return "checked"
'''


def test_the_cpu_platform_check_sees_triton_and_nothing_else_does(fake_vllm):
    from fp8check.core.routing.crosscheck import _install_platform

    fake_vllm({"vllm/platforms/__init__.py": "_current_platform = None\n",
               "vllm/platforms/interface.py": "class DeviceCapability:\n    pass\n",
               "vllm/platforms/cpu.py": CPU_PLATFORM, "vllm/triton_utils/__init__.py": "HAS_TRITON = False\n"})
    _install_platform("cpu", None, None)
    import vllm.platforms
    import vllm.triton_utils
    from vllm.platforms.cpu import CpuPlatform

    assert vllm.platforms._current_platform.check_and_update_config(None) == "checked"
    assert vllm.triton_utils.HAS_TRITON is False
    with pytest.raises(RuntimeError, match="requires Triton"):
        CpuPlatform.check_and_update_config(None)


GATE_034 = '''class GateLinear:
    def _register_sm90_bf16x3_warmup(self):
        raise ImportError("No module named 'cutlass'")
'''


@pytest.mark.parametrize("source", [GATE_034, "class GateLinear:\n    pass\n", None])
def test_the_router_warmup_is_a_no_op_where_the_release_has_one(fake_vllm, source):
    from crosscheck_model import _no_router_warmup

    path = "vllm/model_executor/layers/fused_moe/router/gate_linear.py"
    fake_vllm({path: source} if source else {})
    _no_router_warmup()
    if source is None:  # before 0.31: no GateLinear, nothing to do
        return
    from vllm.model_executor.layers.fused_moe.router.gate_linear import GateLinear

    if source is GATE_034:
        assert GateLinear()._register_sm90_bf16x3_warmup() is None
    else:  # 0.31-0.33: nothing added
        assert not hasattr(GateLinear, "_register_sm90_bf16x3_warmup")
