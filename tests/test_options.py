"""The command line's options as a user meets them: shared options defined once and meaning the same on every
command, --help that reads right, -V and shell completion, arguments refused (exit 2, one line) before anything
heavy runs, and a closed pipe that does not change the exit code."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from fp8check import __version__
from fp8check.cli.app import app
from fp8check.core.routing.warnings import RULES

runner = CliRunner()
EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "examples", "tiny-qwen3-fp8-block")
COMMANDS = typer.main.get_command(app).commands
# Options whose values differ by command on purpose: matrix takes lists (--platform xpu,h100 --tp 1,2,4) and each
# command has its own formats.
PER_COMMAND = {"--platform", "--tp", "--format"}


def test_shared_options_mean_the_same_on_every_command():
    helps: dict[str, set[str]] = {}
    for command in COMMANDS.values():
        for param in command.params:
            if param.param_type_name == "option":
                helps.setdefault(param.opts[0], set()).add(param.help)
    assert {name for name, texts in helps.items() if len(texts) > 1} == PER_COMMAND


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_shows_flags_without_a_value_and_the_argument_by_name(name):
    result = runner.invoke(app, [name, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "<bool>" not in result.stdout
    usage = re.search(rf"Usage: \S+ {name} (.*)", result.stdout).group(1).strip()
    takes_model = any(p.param_type_name == "argument" for p in COMMANDS[name].params)
    assert usage == ("[OPTIONS] MODEL" if takes_model else "[OPTIONS]")
    summary = COMMANDS[name].help.split("\n\n")[0]
    assert "\n" not in summary and len(summary) <= 130, "the command list would show a line break or a paragraph"
    at_100 = runner.invoke(app, [name, "--help"], env={"COLUMNS": "100"}).stdout
    assert "\u2026" not in at_100, "--help cuts a flag or its help at 100 columns"


def test_fail_on_names_every_warning_code():
    fail_on = next(p for p in COMMANDS["inspect"].params if p.name == "fail_on")
    assert [rule.code for rule in RULES if rule.code not in fail_on.help] == [] and "README" not in fail_on.help


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(flag):
    result = runner.invoke(app, [flag])
    assert result.exit_code == 0 and result.stdout == f"fp8check {__version__}\n"


def test_shell_completion():
    result = runner.invoke(app, ["--help"])
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout
    asking = {"_FP8CHECK_COMPLETE": "complete_bash", "COMP_WORDS": "fp8check inspect x -f ", "COMP_CWORD": "4"}
    proc = subprocess.run([sys.executable, "-m", "fp8check"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **asking})
    assert proc.stdout.split() == ["table", "json", "markdown", "junit"]


@pytest.mark.parametrize("spelling", [["-p", "xpu,h100"], ["--platform", "xpu,h100"], ["--platforms", "xpu,h100"]])
def test_matrix_takes_platform_like_the_other_commands(spelling):
    result = runner.invoke(app, ["matrix", EXAMPLE, *spelling, "--tp", "2", "-f", "json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["platforms"] == ["xpu", "h100 (cuda:90)"]


@pytest.mark.parametrize("args, message", [
    (["inspect", EXAMPLE, "--vllm", "0.35"], "--vllm 0.35: newer than fp8check's newest rule profile 0.34"),
    (["inspect", EXAMPLE, "--vllm", "9.9"], "fp8check knows latest, 0.34, 0.33"),
    (["kernels", "--vllm", "0.35.1"], "--vllm 0.35.1: newer than"),
    (["inspect", EXAMPLE, "--quantization", ""], "--quantization '': expected a method such as fp8"),
    (["inspect", EXAMPLE, "--disable-kernel", "Nope"], "--disable-kernel 'Nope': not one of fp8check's linear"),
    (["matrix", EXAMPLE, "-p", ","], "--platform and --tp each need at least one value"),
    (["matrix", EXAMPLE, "--tp", "0"], "--tp '0': expected comma-separated sizes"),
    # typer's own usage errors, one line too (not its framed panel), naming the command's --help
    (["inspect", EXAMPLE, "--tp", "0"], "Invalid value for '--tp'"),
    (["inspect", EXAMPLE, "--no-such-flag"], "No such option: --no-such-flag"),
    (["load", EXAMPLE, "--rank-timeout", "0"], " load --help)"),
])
def test_bad_values_are_exit_2_with_one_line(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and message in result.stderr, result.output


@pytest.mark.parametrize("args, message", [
    (["/no/such/folder"], "no such folder"),
    ([EXAMPLE, "--device", "tpu"], "--device 'tpu': expected auto, cpu, cuda[:i] or xpu[:i]"),
    ([EXAMPLE, "--layers", "("], "--layers '(' is not a valid regular expression"),
    ([EXAMPLE, "--vllm", "0.35"], "--vllm 0.35: newer than"),
])
def test_load_refuses_bad_arguments_before_importing_torch(args, message):
    code = ("import sys\nfrom fp8check.cli.app import main\n"
            f"sys.argv = ['fp8check', 'load', *{args!r}]\n"
            "try:\n    main()\nexcept SystemExit as exc:\n"
            "    print('EXIT', exc.code, 'torch' in sys.modules, file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "EXIT 2 False" in proc.stderr and message in proc.stderr, proc.stderr


@pytest.mark.parametrize("args, verdict", [
    (["-f", "json"], 0),
    (["-f", "json", "--vllm", "0.27"], 1),       # XPU block FP8 has no kernel before 0.28: the verdict stays 1
    (["-f", "table"], 0),
])
def test_a_closed_pipe_leaves_the_exit_code_to_the_verdict(make_checkpoint, args, verdict):
    """`| head` closes stdout long before an 80 kB report is written: under pipefail the pipeline's status is
    fp8check's verdict, with nothing on stderr."""
    folder = make_checkpoint(layers=40, data="sparse")
    command = " ".join([f'"{sys.executable}" -m fp8check inspect "{folder}" -p xpu', *args])
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {command} | head -c 10"], capture_output=True,
                          timeout=120)
    assert (proc.returncode, len(proc.stdout), proc.stderr) == (verdict, 10, b"")
