"""Security properties of `fp8check inspect` on a stranger's checkpoint, each with a test.

No unpickling anywhere and no remote code; no network for a local folder; no writes except --output; tokens
never printed. The malformed-input corpus (test_corpus.py) covers crashes, hangs, memory and path escapes.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fp8check
from fp8check.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(fp8check.__file__).resolve().parent
runner = CliRunner()
TOKEN = "hf_secretFP8CHECKtestTOKEN0123456789"
# pickle protocol 0 for os.system("touch PWNED"): unpickling it runs the command in the current folder.
EVIL_PICKLE = b"cos\nsystem\n(S'touch PWNED'\ntR."
UNSAFE_MODULES = {"pickle", "cPickle", "_pickle", "dill", "cloudpickle", "joblib", "shelve", "marshal"}


def cli(*args: str, cwd: Path, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """`python -m fp8check ARGS` in a subprocess with a clean, explicit environment."""
    base = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1",
            "HOME": str(cwd), "LANG": "C.UTF-8"}
    return subprocess.run([sys.executable, "-m", "fp8check", *args], cwd=cwd, env={**base, **(env or {})},
                          capture_output=True, timeout=timeout)


# --- no pickle, no remote code -----------------------------------------------------------------------------


def code_tokens(path: Path) -> list[tokenize.TokenInfo]:
    """The file's tokens minus strings and comments: what the code does, not what its messages say."""
    with open(path, "rb") as fh:
        tokens = list(tokenize.tokenize(fh.readline))
    return [t for t in tokens if t.type not in (tokenize.STRING, tokenize.COMMENT, tokenize.ENCODING)
            and t.type != getattr(tokenize, "FSTRING_MIDDLE", -1)]


def package_files() -> list[Path]:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 20
    return files


# The one place that pickles: `load --tp`'s ranks (core/load/ranks.py) exchange the work and its results with the
# parent process that started them, over a socket pair only those two processes hold — never a checkpoint's bytes,
# a file or a network peer (multiprocessing did the same before ranks became fresh interpreters).
RANKS = "core/load/ranks.py"


def test_source_never_unpickles_nor_trusts_remote_code():
    """Grep of the package: no pickle-family module, no torch.load, no trust_remote_code=True, no eval/exec; the
    ranks' pickles come from their own parent's socket alone."""
    ranks = (PACKAGE / RANKS).read_text()
    assert ranks.count("pickle.loads(") == 2 and ranks.count("pickle.loads(conn.recv_bytes())") == 2
    for path in package_files():
        text = path.read_text()
        where = path.relative_to(ROOT)
        assert "torch.load" not in text, where
        assert "trust_remote_code=True" not in text.replace(" ", ""), where
        assert "allow_pickle=True" not in text.replace(" ", ""), where
        tokens = code_tokens(path)
        names = [t.string for t in tokens if t.type == tokenize.NAME]
        unsafe = UNSAFE_MODULES.intersection(names) - ({"pickle"} if where.as_posix().endswith(RANKS) else set())
        assert not unsafe, (where, unsafe)
        assert "trust_remote_code" not in names, where
        for before, name, after in zip(tokens, tokens[1:], tokens[2:], strict=False):
            if name.type == tokenize.NAME and name.string in ("eval", "exec", "__import__") and after.string == "(":
                assert before.string == ".", f"{where}:{name.start[0]}: {name.string}()"
            assert (before.string, name.string, after.string) != ("torch", ".", "load"), f"{where}: torch.load"


def test_only_platform_detection_runs_a_program():
    """Three subprocesses, fixed argv, no shell: nvidia-smi for --platform auto, and this interpreter running
    fp8check's own crosscheck module (never the inspect path) or its rank entry point (`load --tp`)."""
    runs = []
    for path in package_files():
        text = path.read_text()
        names = [t.string for t in code_tokens(path) if t.type == tokenize.NAME]
        assert "system" not in names and "popen" not in names and "spawnv" not in names, path
        assert "shell=True" not in text.replace(" ", ""), path
        if "subprocess" in names:
            runs.append(path.relative_to(PACKAGE).as_posix())
    assert runs == [RANKS, "core/routing/crosscheck.py", "core/targets/platforms.py"]
    ranks = (PACKAGE / runs[0]).read_text()
    assert '[sys.executable, "-m", RANK_MODULE, str(theirs.fileno()), str(os.getpid())]' in ranks
    assert 'RANK_MODULE = "fp8check.core.load.ranks"' in ranks
    assert '[sys.executable, "-m", "fp8check.core.routing.crosscheck", platform]' in (PACKAGE / runs[1]).read_text()
    assert '["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"]' in (PACKAGE / runs[2]).read_text()


@pytest.mark.parametrize("suffix", ["pytorch_model.bin", "model.pt", "model.pth", "model.ckpt", "weights.pkl"])
def test_pickle_checkpoints_are_refused_unopened(tmp_path, make_checkpoint, monkeypatch, suffix):
    folder = Path(make_checkpoint())
    for name in ("model.safetensors", "model.safetensors.index.json"):
        if (folder / name).exists():
            (folder / name).unlink()
    (folder / suffix).write_bytes(EVIL_PICKLE)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["inspect", str(folder), "--platform", "h100"])
    assert result.exit_code == 2
    assert "never unpickles" in result.stderr and suffix in result.stderr
    assert not (tmp_path / "PWNED").exists()


def test_safetensors_are_preferred_over_a_pickle_next_to_them(tmp_path, make_checkpoint, monkeypatch):
    folder = Path(make_checkpoint())
    (folder / "pytorch_model.bin").write_bytes(EVIL_PICKLE)
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(app, ["inspect", str(folder), "--platform", "h100"]).exit_code == 0
    assert not (tmp_path / "PWNED").exists()


def test_remote_code_in_the_model_folder_is_never_imported(tmp_path, make_checkpoint):
    """auto_map + modeling_*.py (what trust_remote_code would run), and modules that shadow fp8check's own
    imports, all planted in the folder and run from inside it: nothing of it executes."""
    folder = Path(make_checkpoint())
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"] = {"AutoConfig": "configuration_evil.EvilConfig", "AutoModelForCausalLM": "modeling_evil.Evil"}
    (folder / "config.json").write_text(json.dumps(config))
    payload = "import pathlib; pathlib.Path(__file__).with_name('PWNED').write_text('ran')\n"
    for module in ("configuration_evil", "modeling_evil", "__init__", "typer", "rich", "click", "safetensors",
                   "huggingface_hub", "torch", "sitecustomize"):
        (folder / f"{module}.py").write_text(payload)
    entry_point = Path(sys.executable).with_name("fp8check")
    if not entry_point.exists():
        pytest.skip("the fp8check console script is not installed")
    result = subprocess.run([str(entry_point), "inspect", ".", "--platform", "h100"], cwd=folder,
                            capture_output=True, timeout=60, env={**os.environ, "PYTHONPATH": ""})
    assert result.returncode == 0, result.stderr
    assert not (folder / "PWNED").exists()


def test_python_dash_m_inside_a_hostile_folder(tmp_path, make_checkpoint):
    """`python -m` puts the current folder first on sys.path: fp8check/__main__.py drops it before importing
    anything, so a typer.py planted in the model folder is not imported."""
    folder = Path(make_checkpoint())
    (folder / "typer.py").write_text("import pathlib; pathlib.Path(__file__).with_name('PWNED').write_text('ran')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-m", "fp8check", "inspect", ".", "--platform", "h100"], cwd=folder,
                            capture_output=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    assert not (folder / "PWNED").exists()


# --- no network ---------------------------------------------------------------------------------------------


def _no_network(*args, **kwargs):
    raise AssertionError(f"network access attempted: {args[:2]}")


@pytest.mark.parametrize("fmt", ["table", "json", "markdown"])
def test_no_network_in_process(make_checkpoint, monkeypatch, fmt):
    for name in ("connect", "connect_ex", "sendto"):
        monkeypatch.setattr(socket.socket, name, _no_network)
    monkeypatch.setattr(socket, "create_connection", _no_network)
    monkeypatch.setattr(socket, "getaddrinfo", _no_network)
    folder = make_checkpoint(shards=2)
    result = runner.invoke(app, ["inspect", folder, "--platform", "h100", "--format", fmt, "--verbose"])
    assert result.exit_code == 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


SITECUSTOMIZE = """
import os, pathlib, socket
_marks = pathlib.Path(os.environ["NETGUARD_DIR"])
(_marks / "loaded").write_text("1")
def _refuse(*args, **kwargs):
    (_marks / "attempted").write_text(repr(args[:2]))
    raise OSError("network disabled by the test")
socket.socket.connect = socket.socket.connect_ex = socket.socket.sendto = _refuse
socket.create_connection = socket.getaddrinfo = _refuse
"""


@pytest.mark.parametrize("platform", ["h100", "auto"])
def test_no_network_in_a_subprocess(tmp_path, make_checkpoint, platform):
    """A sitecustomize that forbids sockets: inspecting a local folder (default platform auto included) never
    tries to connect."""
    guard = tmp_path / "guard"
    guard.mkdir()
    (guard / "sitecustomize.py").write_text(SITECUSTOMIZE)
    work = tmp_path / "work"
    work.mkdir()
    folder = make_checkpoint()
    env = {"PYTHONPATH": f"{guard}{os.pathsep}{ROOT}", "NETGUARD_DIR": str(guard)}
    result = cli("inspect", folder, "--platform", platform, "--format", "json", cwd=work, env=env)
    assert (guard / "loaded").exists(), "the socket guard was not installed"
    assert result.returncode in (0, 1), result.stderr
    assert not (guard / "attempted").exists(), (guard / "attempted").read_text()


# --- no writes except --output -----------------------------------------------------------------------------


def snapshot(*roots: Path) -> dict[str, tuple]:
    out = {}
    for root in roots:
        for path in [root, *root.rglob("*")]:
            info = path.lstat()
            out[str(path)] = (info.st_size, info.st_mtime_ns, info.st_mode)
    return out


@pytest.mark.parametrize("fmt,output", [("json", "report.json"), ("table", "report.md"), ("markdown", None)])
def test_no_writes_outside_output(tmp_path, make_checkpoint, fmt, output):
    """cwd, HOME (so ~/.cache, ~/.config), TMPDIR and the model folder itself are unchanged, but for --output."""
    cwd, home, tmp = tmp_path / "cwd", tmp_path / "home", tmp_path / "tmp"
    for d in (cwd, home, tmp):
        d.mkdir()
    folder = Path(make_checkpoint(shards=2))
    before = snapshot(cwd, home, tmp, folder)
    args = ["inspect", str(folder), "--platform", "h100", "--format", fmt, "--verbose"]
    if output:
        args += ["--output", output]
    env = {"HOME": str(home), "TMPDIR": str(tmp), "XDG_CACHE_HOME": "", "XDG_CONFIG_HOME": ""}
    result = cli(*args, cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    after = snapshot(cwd, home, tmp, folder)
    new = {p for p in after if p not in before}
    changed = {p for p in before if after.get(p) != before[p] and p != str(cwd)}
    assert new == ({str(cwd / output)} if output else set()), new
    assert changed == set(), changed


def test_unreadable_input_writes_nothing(tmp_path):
    """An exit-2 run does not create --output (nor anything else)."""
    cwd, home = tmp_path / "cwd", tmp_path / "home"
    cwd.mkdir(), home.mkdir()
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text("{")
    (folder / "model.safetensors").write_bytes(b"\x00" * 4)
    before = snapshot(cwd, home, folder)
    result = cli("inspect", str(folder), "--platform", "h100", "--output", "report.md", cwd=cwd,
                 env={"HOME": str(home)})
    assert result.returncode == 2
    assert snapshot(cwd, home, folder) == before


# --- tokens -----------------------------------------------------------------------------------------------


def test_tokens_are_never_printed(tmp_path, make_checkpoint):
    """HF_TOKEN and its aliases in the environment never reach stdout, stderr or --output, whatever the outcome."""
    ok = make_checkpoint()
    failing = make_checkpoint()
    os.remove(os.path.join(failing, "config.json"))
    env = {"HF_TOKEN": TOKEN, "HUGGING_FACE_HUB_TOKEN": TOKEN, "HF_API_TOKEN": TOKEN,
           "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1", "FP8CHECK_DEBUG": ""}
    runs = [
        ("inspect", ok, "--platform", "h100", "--verbose"),
        ("inspect", ok, "--platform", "h100", "--format", "json", "--output", "out.json"),
        ("inspect", ok, "--platform", "h100", "--format", "markdown", "--output", "out.md"),
        ("inspect", ok, "--platform", "h100", "--tp", "3"),  # exit 1: 4 attention heads do not split in 3
        ("inspect", failing, "--platform", "h100"),       # exit 2: no config.json
        ("inspect", "some-org/some-model", "--platform", "h100"),  # a repo id, offline: not in the cache
        ("inspect", ok, "--platform", "nonsense"),
    ]
    codes = []
    for args in runs:
        result = cli(*args, cwd=tmp_path, env=env)
        codes.append(result.returncode)
        assert TOKEN.encode() not in result.stdout + result.stderr, args
        assert b"Traceback" not in result.stderr, result.stderr
    assert codes[:5] == [0, 0, 0, 1, 2] and codes[5] == 2 and codes[6] == 2
    for name in ("out.json", "out.md"):
        assert TOKEN not in (tmp_path / name).read_text()
    # and nothing under HOME (tmp_path) or the Hugging Face cache holds it either
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.stat().st_size < 5_000_000:
            assert TOKEN.encode() not in path.read_bytes(), path


def test_a_symlinked_model_folder_is_followed_but_nothing_leaves_it(tmp_path, make_checkpoint):
    """The folder argument itself may be a symlink (the Hugging Face cache is made of them); files inside it may
    not lead elsewhere (the corpus covers config.json, shards and sub-folders)."""
    folder = Path(make_checkpoint())
    link = tmp_path / "link"
    link.symlink_to(folder, target_is_directory=True)
    assert runner.invoke(app, ["inspect", str(link), "--platform", "h100"]).exit_code == 0
    shutil.copy(folder / "model.safetensors", tmp_path / "elsewhere.safetensors")
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors").symlink_to(tmp_path / "elsewhere.safetensors")
    result = runner.invoke(app, ["inspect", str(link), "--platform", "h100"])
    assert result.exit_code == 2 and "outside the model folder" in result.stderr
