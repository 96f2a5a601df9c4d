"""The documentation runs as shown: every command line of README.md and docs/*.md, every link, the Python API example.

A command is every line of a ```bash block and every `$ ` line of any block. Each `fp8check ...` command runs through
typer's CliRunner against the bundled example or a synthetic checkpoint written by fp8check.synth at the shape the
doc names (DOC_CHECKPOINTS: every `./name` a doc shows must be there), with Hub repo ids served by the fake Hub of
tests/fakehub.py, in a 100-column terminal (COLUMNS=100, as the samples were made). It must exit with the code the
doc says: 0, or the `# exit N` its trailing comment gives; a shown `OK:` / `FAIL:` verdict must agree with that code;
and every output line a sample shows under it, other than `...` (lines left out), must be in what it prints
(`shown_in`), so a stale sample fails. The set-up commands (venv, pinned pip installs) are not run here: they are
checked to be the exact strings `.ci/run` runs and the README's main job, whose fp8check steps do run.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.synth import write_checkpoint

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLE = "examples/tiny-qwen3-fp8-block"
runner = CliRunner()

# The README's two set-up commands, verbatim. The test command is the one `.ci/run` runs.
MAIN_JOB = ("python3 -m venv .venv && . .venv/bin/activate && pip install torch==2.13.0 && pip install -e '.[load]' && "
            "fp8check inspect examples/tiny-qwen3-fp8-block --platform xpu --tp 2 && "
            "fp8check load examples/tiny-qwen3-fp8-block --platform xpu --tp 2")
TEST_COMMAND = ("python3 -m venv .venv && . .venv/bin/activate && pip install -q torch==2.13.0 && "
                "pip install -q -e '.[test]' && python -m pytest")
SETUP_COMMANDS = {MAIN_JOB, TEST_COMMAND}
# docs/fidelity.md's commands download vLLM's wheels (~330 MB each) and install vLLM's dependencies: the
# differential suite, run by hand. Its fp8check commands, if it ever shows one, still run.
WHEEL_DOWNLOAD_DOCS = {"docs/fidelity.md"}

# Every `./name` a doc shows -> the Spec fields of the synthetic checkpoint it stands for.
QWEN3_32B = dict(quant="ct-fp8-block", architecture="Qwen3ForCausalLM", model_type="qwen3", hidden=5120,
                 intermediate=25600, layers=64, heads=64, kv_heads=8, head_dim=128, vocab=151936, shards=7,
                 data="sparse")
QWEN3_30B_A3B = dict(quant="fp8-block", architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", hidden=2048,
                     intermediate=6144, layers=48, heads=32, kv_heads=4, head_dim=128, vocab=151936, experts=128,
                     moe_intermediate=768, shards=16, data="sparse")
DOC_CHECKPOINTS = {
    "./Qwen3-32B-FP8-block": QWEN3_32B,
    "./Qwen3-30B-A3B-FP8": QWEN3_30B_A3B,
    "./Llama-tiny": dict(quant=None),
    "./Llama-tiny-FP8": dict(quant="ct-fp8"),   # two nearly equal per-tensor scales swapped: see swap_closest_scales
    "./Llama-tiny-FP8-dynamic": dict(quant="ct-fp8-dynamic"),
    "./Llama-tiny-FBGEMM": dict(quant="fbgemm-fp8"),
    "./Llama-tiny-FP8-KV": dict(quant="ct-fp8", kv_cache="tensor"),  # llm-compressor's FP8 KV cache recipe
    "./NewArch-FP8": dict(quant="ct-fp8-block", architecture="NewArchForCausalLM", model_type="new_arch"),  # unmodelled
    "./not-a-checkpoint": None,                  # a path that does not exist
}
# Hub repo ids the docs show -> {revision: the checkpoint served there}; "3f2a9c..." stands for main's commit.
HUB_REPOS = {
    "RedHatAI/Qwen3-32B-FP8-block": {"main": "./Qwen3-32B-FP8-block"},
    "org/name": {"main": EXAMPLE, "v1.1": EXAMPLE},
}
COMMIT_PLACEHOLDER = "3f2a9c..."

EXIT_COMMENT = re.compile(r"#.*\bexit (\d)\b")
COLUMNS = "100"  # the terminal width the samples were made at
ELIDED = "..."   # a sample's line standing for output lines left out
VARYING = "…"    # a word of a sample's line standing for a figure that varies from run to run (milliseconds)
RULE = re.compile("─{2,}")
FENCE = re.compile(r"^( *)```(\w*)\n(.*?)^\1```", re.M | re.S)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@dataclass(frozen=True)
class Shown:
    """One command line a doc shows, with the output lines printed under it (a `$ ` block) and its place."""

    doc: str
    line: int
    command: str
    output: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {self.command}"


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def shown_commands(path: Path) -> list[Shown]:
    """Every command line of a doc: each line of a bash block, each `$ ` line of any block (output under it)."""
    text = path.read_text(encoding="utf-8")
    shown = []
    for fence in FENCE.finditer(text):
        indent, lang, body = fence.groups()
        first = text.count("\n", 0, fence.start(3)) + 1
        lines = [line[len(indent):] for line in body.splitlines()]
        prompts = [i for i, line in enumerate(lines) if line.startswith("$ ")]
        if lang in ("bash", "sh", "shell") and not prompts:
            command, start = "", 0
            for i, line in enumerate(lines):
                start = start if command else i
                command += line.rstrip().removesuffix("\\")
                if line.rstrip().endswith("\\"):
                    continue  # a continued line: one command with the next
                if command.strip() and not command.lstrip().startswith("#"):
                    shown.append(Shown(_rel(path), first + start, command.strip(), ()))
                command = ""
            continue
        for i, end in zip(prompts, [*prompts[1:], len(lines)]):
            shown.append(Shown(_rel(path), first + i, lines[i][2:].strip(), tuple(lines[i + 1:end])))
    return shown


ALL_SHOWN = [shown for path in DOCS for shown in shown_commands(path)]


def fp8check_steps(shown: Shown) -> list[str]:
    """The fp8check command lines of one shown command (a set-up command's fp8check steps, split on `&&`)."""
    return [step.strip() for step in shown.command.split("&&") if step.strip().startswith("fp8check ")]


def is_setup(shown: Shown) -> bool:
    return shown.command in SETUP_COMMANDS


def is_wheel_download(shown: Shown) -> bool:
    return shown.doc in WHEEL_DOWNLOAD_DOCS and not shown.command.startswith("fp8check ")


RUNS = [(shown, step) for shown in ALL_SHOWN for step in fp8check_steps(shown)]


def shown_exit(step: str) -> int:
    """0, or the `# exit N` of the line's trailing comment."""
    found = EXIT_COMMENT.search(step)
    return int(found.group(1)) if found else 0


def expected_exit(step: str) -> int:
    """The exit code the doc shows; crosscheck exits 2 where vLLM is not installed."""
    if shlex.split(step, comments=True)[1] == "crosscheck" and importlib.util.find_spec("vllm") is None:
        return 2  # docs/commands.md: "2 when vLLM is not installed"
    return shown_exit(step)


def _normalised(text: str) -> str:
    """Every run of whitespace one space, every horizontal rule `──`: where lines wrap and how wide the columns are
    (a path's length, a figure's digits) do not count; the words and their order do."""
    return " ".join(RULE.sub("──", text).split())


def shown_in(line: str, output: str) -> bool:
    """Whether a sample's output line is in the real output: its words, in order and whole, with each `…` word
    standing for any one word, somewhere in the output (both whitespace-normalised)."""
    words = [r"\S+" if word == VARYING else re.escape(word) for word in _normalised(line).split(" ")]
    return re.search(r"(?<!\S)" + " ".join(words) + r"(?!\S)", _normalised(output)) is not None


def runs_as_the_samples_did(step: str) -> bool:
    """Whether this host prints what the samples show: they were made on a CPU-only host with vLLM installed, while
    crosscheck without vLLM prints only why it cannot run, and `load` without --device runs on any accelerator."""
    argv = shlex.split(step, comments=True)[1:]
    if expected_exit(step) != shown_exit(step):
        return False
    if argv[0] == "load" and not {"--device", "-d"} & set(argv):
        from fp8check.core.load.driver import resolve_device

        return resolve_device("auto").type == "cpu"
    return True


# ------------------------------------------------------------------------------------------------ checkpoints


def swap_closest_scales(folder: str) -> None:
    """The two nearest-equal per-tensor weight scales of same-shape weights swapped in place (`load --against`)."""
    from safetensors.torch import load_file, save_file

    file = os.path.join(folder, "model.safetensors")
    tensors = load_file(file)
    scales = {k: float(v.float().reshape(())) for k, v in tensors.items() if k.endswith(".weight_scale")}
    pairs = [(max(a, b) / min(a, b), x, y) for (x, a), (y, b) in itertools.combinations(scales.items(), 2)
             if tensors[x.removesuffix("_scale")].shape == tensors[y.removesuffix("_scale")].shape]
    _, x, y = min(pairs)
    tensors[x], tensors[y] = tensors[y].clone(), tensors[x].clone()
    save_file(tensors, file, metadata={"format": "pt"})


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """checkpoints(name) -> the folder standing for a doc's `./name`, written on first use."""
    root = tmp_path_factory.mktemp("doc-checkpoints")
    made: dict[str, str] = {EXAMPLE: str(ROOT / EXAMPLE)}

    def folder(name: str) -> str:
        if name not in made:
            assert name in DOC_CHECKPOINTS, f"{name}: a doc shows this checkpoint; add it to DOC_CHECKPOINTS"
            target = str(root / name.removeprefix("./"))
            if DOC_CHECKPOINTS[name] is not None:
                write_checkpoint(target, **DOC_CHECKPOINTS[name])
                if name == "./Llama-tiny-FP8":
                    swap_closest_scales(target)
            made[name] = target
        return made[name]

    return folder


@pytest.fixture
def hub(monkeypatch, tmp_path, checkpoints):
    """The fake Hub serving HUB_REPOS; huggingface_hub pointed at it with a private cache and no token."""
    from fakehub import FakeHub
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "hf" / "token"))
    with FakeHub() as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        commits = {repo: {rev: server.add_repo(repo, checkpoints(name), revision=rev) for rev, name in revs.items()}
                   for repo, revs in HUB_REPOS.items()}
        yield commits


def argv_of(step: str, checkpoints, request) -> list[str]:
    """The command's arguments with each shown checkpoint replaced by the folder or fake Hub repo standing for it
    (the same length and order as the shown arguments up to any `> FILE`)."""
    argv = shlex.split(step, comments=True)[1:]
    if ">" in argv:
        argv = argv[:argv.index(">")]  # `> FILE`: stdout is what the runner captures
    repos = [arg for arg in argv if arg.split("@")[0] in HUB_REPOS]
    commits = request.getfixturevalue("hub") if repos else {}
    out = []
    for arg in argv:
        if arg == COMMIT_PLACEHOLDER:
            repo = next(r.split("@")[0] for r in repos)
            arg = commits[repo]["main"]
        elif arg.startswith("./") or arg == EXAMPLE:
            arg = checkpoints(arg)
        out.append(arg)
    return out


# ------------------------------------------------------------------------------------------------------ tests


def test_the_docs_show_commands_and_every_one_is_run_or_a_marked_setup_command():
    assert len(RUNS) >= 20
    unknown = [str(s) for s in ALL_SHOWN if not (s.command.startswith("fp8check ") or is_setup(s)
                                                  or is_wheel_download(s))]
    assert unknown == [], "shown commands that are neither fp8check, a set-up command nor a wheel download"
    assert {s.command for s in ALL_SHOWN if is_setup(s) and s.doc == "README.md"} == SETUP_COMMANDS


def test_the_setup_commands_are_the_ones_ci_runs():
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert TEST_COMMAND in ci_lines, "README's test command is not the line .ci/run runs"
    pins = {re.search(r"torch==\S+", command).group(0) for command in SETUP_COMMANDS}
    assert pins == {"torch==2.13.0"}, "both set-up commands pin the same torch"
    assert MAIN_JOB.split(" && ")[:2] == TEST_COMMAND.split(" && ")[:2]  # the same venv, created the same way


@pytest.mark.parametrize("shown,step", RUNS, ids=[f"{s.doc}:{s.line}:{step}"[:120] for s, step in RUNS])
def test_every_shown_command_runs_with_the_exit_code_and_output_the_doc_shows(shown, step, checkpoints, request,
                                                                             monkeypatch, tmp_path):
    expected = expected_exit(step)
    verdicts = {line.split(":")[0] for line in shown.output if line.startswith(("OK:", "FAIL:"))}
    shown_verdict = "OK" if shown_exit(step) == 0 else "FAIL"
    assert verdicts <= {shown_verdict}, f"{shown}: the verdict shown disagrees with its exit code"
    argv = argv_of(step, checkpoints, request)
    monkeypatch.chdir(tmp_path)  # files a command writes (--output, > redirections are not run) land here
    monkeypatch.setenv("COLUMNS", COLUMNS)
    result = runner.invoke(app, argv)
    assert result.exit_code == expected, f"{shown}\n{result.output[-3000:]}"
    if not runs_as_the_samples_did(step):
        return
    output = result.output
    shown_argv = shlex.split(step, comments=True)[1:len(argv) + 1]
    for real, doc in sorted({(r, d) for r, d in zip(argv, shown_argv) if r != d}, key=lambda pair: -len(pair[0])):
        output = output.replace(real, doc)  # the longest first: a folder's name may begin another's
    stale = [line for line in shown.output if line.strip() not in ("", ELIDED) and not shown_in(line, output)]
    assert stale == [], f"{shown}: shown lines it does not print:\n" + "\n".join(stale) + f"\n--- it prints:\n{output}"


def _headings(path: Path) -> set[str]:
    """GitHub's anchors of a Markdown file's headings (lower-case, punctuation dropped, spaces to -, -N for repeats)."""
    seen: dict[str, int] = {}
    anchors = set()
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    for heading in re.findall(r"^#{1,6} +(.+?) *$", text, re.M):
        anchor = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return anchors


def _links(path: Path) -> list[str]:
    text = re.sub(r"`[^`\n]*`", "", FENCE.sub("", path.read_text(encoding="utf-8")))
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


LINKS = list(dict.fromkeys((path, target) for path in DOCS for target in _links(path)))


@pytest.mark.parametrize("path,target", LINKS, ids=[f"{_rel(p)}->{t}" for p, t in LINKS])
def test_every_link_points_to_an_existing_file_and_anchor(path, target):
    file, _, anchor = target.partition("#")
    linked = (path.parent / file).resolve() if file else path
    assert linked.exists(), f"{_rel(path)}: {target}: no such file"
    if anchor:
        assert anchor in _headings(linked), f"{_rel(path)}: {target}: no such heading in {linked.name}"


@pytest.mark.parametrize("page", sorted((ROOT / "docs").glob("*.md")), ids=lambda p: p.name)
def test_every_docs_page_is_linked_from_the_readme(page):
    assert f"docs/{page.name}" in {target.partition("#")[0] for target in _links(README)}


# ---------------------------------------------------------------------------------------------- the Python API


def readme_python_blocks() -> list[str]:
    return [body for _, lang, body in FENCE.findall(README.read_text(encoding="utf-8")) if lang == "python"]


def test_the_readme_inspect_example_runs_as_shown_without_importing_torch(tmp_path, monkeypatch):
    """The first Python block, in a fresh interpreter: it prints what its comments say, `doc` is the CLI's JSON."""
    example = readme_python_blocks()[0]
    out = tmp_path / "doc.json"
    epilogue = ("\nimport json, sys\n"
                f"json.dump({{'torch': 'torch' in sys.modules, 'doc': doc}}, open({str(out)!r}, 'w'))\n")
    proc = subprocess.run([sys.executable, "-c", example + epilogue], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    printed = proc.stdout.splitlines()
    assert printed[0] == "True"  # print(report.ok)  # True
    got = json.loads(out.read_text())
    assert got["torch"] is False, "importing fp8check and calling inspect imported torch"
    monkeypatch.chdir(ROOT)
    cli = runner.invoke(app, ["inspect", EXAMPLE, "--platform", "xpu", "--tp", "2", "--format", "json"])
    assert got["doc"] == json.loads(cli.stdout)  # the same document as `fp8check inspect --format json`
    assert printed[1:] == [f"{layer['name']} {layer['scheme']} {layer['kernel']}" for layer in got["doc"]["layers"]]


def test_the_readme_load_and_matrix_example_runs_as_shown(monkeypatch, capsys):
    """The second Python block: load prints True, the grid has a line per platform x TP and is the CLI's JSON."""
    example = readme_python_blocks()[1]
    monkeypatch.chdir(ROOT)
    names: dict = {}
    exec(compile(example, "README.md", "exec"), names)  # noqa: S102 - the README's own example
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "True" and names["run"].to_dict()["ok"] is True
    cells = names["grid"].cells
    assert printed[1:] == [f"{cell.platform} {cell.tp} {cell.ok} {cell.kernels}" for cell in cells]
    assert [(cell.platform.split()[0], cell.tp, cell.ok) for cell in cells] == [
        ("xpu", 1, False), ("xpu", 2, False), ("h100", 1, True), ("h100", 2, True)]  # vLLM 0.27: the XPU crash
    cli = runner.invoke(app, ["matrix", EXAMPLE, "--platforms", "xpu,h100", "--tp", "1,2", "--vllm", "0.27",
                              "--format", "json"])
    assert names["grid"].to_dict() == json.loads(cli.stdout)
