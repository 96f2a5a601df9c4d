"""What a new user met (issue 36): a vLLM error printed as a Python tuple, piped output at 200 columns, and the
smaller items (verbose reasons, `rules`, expert timings, JUnit, --kv-cache-dtype-skip-layers, unknown options, the
memory and Triton hints, shell completion)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from types import SimpleNamespace
from xml.etree import ElementTree as ET

import pytest
import typer
from typer.testing import CliRunner

from fp8check.cli import output
from fp8check.cli.render import load as render_load
from fp8check.cli.app import app, build_app
from fp8check.cli.options import complete_kv_cache_dtype, complete_platform, complete_quantization, complete_vllm
from fp8check.core.formats.frontdoor import readable
from fp8check.core.model.memory import host_memory_gib
from fp8check.core.records import RankFigures
from fp8check.core.targets.profiles import PROFILES, PULL_REQUESTS
from fp8check.kernels.numerics import triton_reason

runner = CliRunner()
ROOT = os.path.join(os.path.dirname(__file__), "..")
EXAMPLE = os.path.join(ROOT, "examples", "tiny-qwen3-fp8-block")
DEPRECATED = str(("The quantization method %s is deprecated and will be removed in future versions of vLLM. To bypass, "
                  "set `--allow-deprecated-quantization`.", "fbgemm_fp8"))
READS = ("(vLLM prints this tuple; it reads: The quantization method fbgemm_fp8 is deprecated and will be removed in "
         "future versions of vLLM. To bypass, set `--allow-deprecated-quantization`.)")


def flat(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------------------------------ a printed tuple

def test_a_printed_tuple_is_read_out_and_other_messages_are_left_alone():
    assert readable(DEPRECATED) == f"{DEPRECATED} {READS}"
    assert readable(f"ValueError: {DEPRECATED}") == f"ValueError: {DEPRECATED} {READS}"  # as crosscheck shows vLLM's
    for message in ("(a, b)", "('%d', 'x')", "('abc')", "fbgemm_fp8 quantization is currently not supported in xpu."):
        assert readable(message) == message


def test_every_format_for_people_reads_the_tuple_out_and_json_keeps_vllms_text(make_checkpoint):
    folder = make_checkpoint(quant="fbgemm-fp8", data="sparse")
    args = ["inspect", folder, "-p", "a100"]
    doc = json.loads(runner.invoke(app, [*args, "-f", "json"]).stdout)
    assert doc["errors"] == [DEPRECATED]
    assert READS in flat(runner.invoke(app, args).stdout)
    assert READS in runner.invoke(app, [*args, "-f", "markdown"]).stdout
    suite = ET.fromstring(runner.invoke(app, [*args, "-f", "junit"]).stdout).find("testsuite")
    model = next(case for case in suite if case.get("name") == "model")
    assert model.find("failure").get("message") == f"{DEPRECATED} {READS}"


# ------------------------------------------------------------------------------------------ piped output

ptys = pytest.mark.skipif(sys.platform == "win32", reason="POSIX terminals")


def _rules_width(**popen) -> int:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run([sys.executable, "-m", "fp8check", "rules"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          text=True, check=True, **popen)
    return max(len(line) for line in proc.stdout.splitlines())


def _terminal(columns: int) -> tuple[int, int]:
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    return leader, follower


@ptys
def test_piped_output_takes_the_width_of_stderrs_terminal():
    leader, follower = _terminal(70)
    try:
        assert _rules_width(stderr=follower, start_new_session=True) <= 70
    finally:
        os.close(leader)
        os.close(follower)


@ptys
def test_piped_output_takes_the_width_of_the_controlling_terminal():
    """`fp8check rules 2>log | less`: stderr is no terminal either, the controlling terminal (/dev/tty) is."""
    leader, follower = _terminal(70)
    name = os.ttyname(follower)

    def controlled():
        os.setsid()
        os.close(os.open(name, os.O_RDWR))  # a session leader's first terminal becomes its controlling one

    try:
        assert _rules_width(stderr=subprocess.DEVNULL, preexec_fn=controlled) <= 70
    finally:
        os.close(leader)
        os.close(follower)


@ptys
def test_output_with_no_terminal_at_all_keeps_200_columns():
    assert 100 < _rules_width(stderr=subprocess.DEVNULL, start_new_session=True) <= 200


# ------------------------------------------------------------------------------------------ -v reasons

def _rejected_lines(*args) -> list[str]:
    result = runner.invoke(app, ["inspect", EXAMPLE, *args, "-v"])
    return [line for line in result.stdout.splitlines() if "rejected" in line]


def test_verbose_reasons_fold_vllms_continuation_spaces_and_tag_an_inference_once():
    aiter = next(line for line in _rejected_lines("-p", "mi300x") if "Aiter" in line)
    assert "Only supported on ROCm platform with aiter package installed." in aiter
    b12x = [line for line in _rejected_lines("-p", "cuda:89") if "B12x" in line]  # its reason carries the tag
    assert b12x and all(line.count("fp8check inference") == 1 for line in b12x)
    assert not [line for line in _rejected_lines("-p", "mi300x") if re.search(r"\S {2,}\S", line.strip())]


# ------------------------------------------------------------------------------------------ rules

def test_rules_show_what_each_release_added():
    text = runner.invoke(app, ["rules"]).stdout
    for pr in PULL_REQUESTS:  # the row of the release that added it, its line under the table, and summaries
        summaries = sum(1 for profile in PROFILES if re.search(rf"#{pr}\b", profile.summary))
        assert len(re.findall(rf"#{pr}\b", text)) == 2 + summaries, pr
    assert "upstream PRs added" in text and "cpu-fp8-channel" in text
    assert sum(1 for profile in PROFILES if profile.has("cpu-fp8-channel")) > 1


# ------------------------------------------------------------------------------------------ load's ms

def test_a_runs_time_is_its_slowest_ranks():
    """--tp 2 --ep: rank 0 may hold none of an expert's work; the row shows what the ranks took, not 0.0."""
    experts = SimpleNamespace(status="ok", ms=0, ranks=(RankFigures(0, 10, 3.0), RankFigures(1, 10, 5.25)))
    alone = SimpleNamespace(status="ok", ms=1.5, ranks=())
    assert render_load._milliseconds([experts]) == "5.2"
    assert render_load._milliseconds([alone]) == "1.5"


def test_a_merged_runs_json_time_is_its_slowest_ranks():
    """The JSON's `ms` of a --tp run (the FusedMoE's under --ep was 0): the slowest rank's, as the table shows."""
    from fp8check.core.load.parallel import RankResult, merged

    run = SimpleNamespace(status="ok", errors=(), ms=0.0,
                          _replace=lambda **changes: SimpleNamespace(**{"status": "ok", "errors": (), **changes}))
    result = merged([RankResult(RankFigures(0, 10, None), (), run), RankResult(RankFigures(1, 10, 5.25), (), None)])
    assert result.ms == 5.25 and result.bytes_read == 20


# ------------------------------------------------------------------------------------------ JUnit

def test_junit_names_the_target_and_an_unquantized_layer_reads_as_a_pass():
    suite = ET.fromstring(runner.invoke(app, ["inspect", EXAMPLE, "-p", "xpu", "-f", "junit"]).stdout)[0]
    lm_head = next(case for case in suite if case.get("name") == "lm_head")
    assert lm_head.find("system-out").text == "UnquantizedEmbeddingMethod (unquantized: no FP8 kernel)"
    result = runner.invoke(app, ["load", EXAMPLE, "-p", "xpu", "-d", "cpu", "--layers", "lm_head", "-f", "junit"])
    suite = ET.fromstring(result.stdout)[0]
    assert re.fullmatch(r"fp8check load .* on xpu, TP=1, vLLM [\d.]+, run on cpu", suite.get("name"))
    lm_head = next(case for case in suite if case.get("name") == "lm_head")
    assert lm_head.find("system-out").text.startswith("emulated on cpu (unquantized numerics")


# ------------------------------------------------------------------------------------------ skip layers

def test_skip_layers_that_name_no_layer_are_said_to_change_nothing():
    args = ["inspect", EXAMPLE, "-p", "h100", "--kv-cache-dtype", "fp8", "-f", "json"]
    result = runner.invoke(app, [*args, "--kv-cache-dtype-skip-layers", "99,1", "--kv-cache-dtype-skip-layers",
                                 "sliding_window"])
    assert result.exit_code == 0 and json.loads(result.stdout)["ok"]
    assert result.stderr.splitlines() == [
        "warning: --kv-cache-dtype-skip-layers 99 names no layer of this model (its attention layers are 0..1): it "
        "changes nothing",
        "warning: --kv-cache-dtype-skip-layers sliding_window names no layer of this model (this model has no "
        "sliding-window attention layer): it changes nothing"]
    assert runner.invoke(app, [*args, "--kv-cache-dtype-skip-layers", "1"]).stderr == ""


# ------------------------------------------------------------------------------------------ unknown options

@pytest.mark.parametrize("typed, said", [
    ("--bogus", "No such option: --bogus"),
    ("--platfrom", "No such option: --platfrom (did you mean --platform?)"),
    ("--kv-cache-type", "No such option: --kv-cache-type (did you mean --kv-cache-dtype?)"),
    ("--quant", "No such option: --quant (did you mean --quantization?)"),
    ("--kv-cache", "No such option: --kv-cache (did you mean --kv-cache-dtype or --kv-cache-dtype-skip-layers?)"),
])
def test_an_unknown_option_names_the_real_one_it_is_near_or_none(typed, said):
    command = typer.main.get_command(build_app(("inspect",)))
    with pytest.raises(typer.TyperException) as raised:
        command.main(["inspect", EXAMPLE, typed], standalone_mode=False)
    assert output.usage_message(raised.value) == said


# ------------------------------------------------------------------------------------------ hints

@pytest.mark.parametrize("platform, hint", [
    ("cpu", f"--assume device_memory={host_memory_gib()}GiB (this host's RAM"),
    ("v100", "--assume device_memory=16GiB or 32GiB"),
    ("a100", "--assume device_memory=40GiB or 80GiB"),
])
def test_the_memory_hint_offers_a_size_the_platform_comes_in(platform, hint):
    doc = json.loads(runner.invoke(app, ["inspect", EXAMPLE, "-p", platform, "-f", "json"]).stdout)
    assert hint in doc["memory"]["note"] and "80GiB" not in doc["memory"]["note"].replace("40GiB or 80GiB", "")


def test_the_triton_install_hint_on_a_cpu_says_it_needs_the_slow_interpreter(monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    monkeypatch.delitem(sys.modules, "triton", raising=False)
    monkeypatch.setattr(triton_reason.importlib.util, "find_spec", lambda name: None)
    reason = triton_reason.quick_reason("cpu")
    assert "fp8check[triton]" in reason and "TRITON_INTERPRET=1" in reason and "slower" in reason


# ------------------------------------------------------------------------------------------ completion

def test_completion_offers_fp8checks_own_values():
    assert "h100" in complete_platform("h1") and "cuda:90" in complete_platform("cuda:")
    assert complete_platform("xpu,mi30") == ["xpu,mi300a", "xpu,mi300x"]  # matrix: the last of the list
    assert complete_vllm("") == ["auto", "installed", "latest", *(p.name for p in PROFILES)]
    assert complete_kv_cache_dtype("fp8_e") == ["fp8_e4m3", "fp8_e5m2"]
    assert complete_quantization("fp8_per") == ["fp8_per_tensor", "fp8_per_block", "fp8_per_channel"]


@pytest.mark.parametrize("words, expected", [
    ("fp8check inspect m -p h10", "h100"), ("fp8check matrix m --vllm 0.3", "0.34"),
    ("fp8check load m --kv-cache-dtype fp8_e5", "fp8_e5m2"), ("fp8check diff m -q fbgemm", "fbgemm_fp8"),
])
def test_the_shell_gets_the_values(words, expected):
    env = dict(os.environ, _FP8CHECK_COMPLETE="complete_bash", COMP_WORDS=words,
               COMP_CWORD=str(len(words.split()) - 1))
    proc = subprocess.run([sys.executable, "-m", "fp8check"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert expected in proc.stdout.split(), proc.stdout + proc.stderr
