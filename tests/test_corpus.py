"""The malformed-input corpus (tests/corpus/build_corpus.py): every case gets a clean answer.

For each case, through the CLI: the expected exit code (2 unreadable input, 1 a verdict about the model), one
line of error naming the file and tensor (escaped), no traceback, no raw ESC byte, bounded time; with
--format json exactly one JSON object on stdout. Cases marked `memory` also run in a real subprocess whose
peak memory is measured, and their header reads are traced with tracemalloc.
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.checkpoint import safetensors_header
from fp8check.core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("build_corpus", ROOT / "tests" / "corpus" / "build_corpus.py")
build_corpus = sys.modules["build_corpus"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build_corpus)
CASES = {c.name: c for c in build_corpus.CASES}
MEMORY_CASES = [name for name, c in CASES.items() if c.memory]
SECONDS = 5.0          # per case, in-process (they take ~10 ms; the bound catches hangs and blow-ups)
PEAK_RSS_MB = 150      # a subprocess inspecting a hostile file (python + typer + rich is ~40 MB)
runner = CliRunner()


def params(names=None):
    return [pytest.param(name, marks=pytest.mark.xfail(reason=CASES[name].xfail, strict=True))
            if CASES[name].xfail else name for name in (names or CASES)]


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    build_corpus.build(out)
    return out


def flat(text: str) -> str:
    """Whitespace-normalised, so that a console's line wrapping cannot split a fragment."""
    return " ".join(text.split())


def named(name: str, text: str) -> bool:
    """`name` as printed; error messages quote escaped names with repr, which doubles the backslashes."""
    return flat(name) in flat(text) or flat(name.replace("\\", "\\\\")) in flat(text)


def invoke(corpus: Path, name: str, *extra: str):
    start = time.perf_counter()
    result = runner.invoke(app, ["inspect", str(corpus / name), "--platform", "h100", *extra])
    return result, time.perf_counter() - start


def assert_clean(result, seconds: float) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert "\x1b" not in result.stdout and "\x1b" not in result.stderr, "raw ESC byte in the output"
    assert seconds < SECONDS


@pytest.mark.parametrize("name", params())
def test_case_table(corpus, name):
    case = CASES[name]
    result, seconds = invoke(corpus, name)
    assert_clean(result, seconds)
    assert result.exit_code == case.exit, result.output
    if case.exit == 2:
        line = result.stderr.strip()
        assert line.startswith("error:") and "\n" not in line and len(line) < 2000, line
        assert case.fragment in line
        assert all(named(n, line) for n in case.names), line
    else:
        assert case.fragment in flat(result.stdout)
        assert all(named(n, result.stdout) for n in case.names), result.stdout
    if case.exit == 0:
        assert "OK:" in result.stdout and "nan" not in result.stdout.lower().split()


@pytest.mark.parametrize("name", params())
def test_case_json(corpus, name):
    case = CASES[name]
    result, seconds = invoke(corpus, name, "--format", "json")
    assert_clean(result, seconds)
    assert result.exit_code == case.exit
    doc = json.loads(result.stdout)  # raises on anything but exactly one JSON document
    assert isinstance(doc, dict) and doc["schema_version"] == 1 and doc["ok"] is (case.exit == 0)
    errors = list(doc["errors"]) + [e for layer in doc["layers"] for e in layer["errors"]]
    if case.exit:
        assert any(case.fragment in e for e in errors), errors
        assert all(any(named(n, e) for e in errors) for n in case.names), errors
    else:
        assert errors == []
    if case.exit == 2:
        assert len(doc["errors"]) == 1 and "\n" not in doc["errors"][0]


def test_every_case_is_distinct_and_documented():
    assert len(CASES) == len(build_corpus.CASES) >= 70
    assert {c.exit for c in CASES.values()} == {0, 1, 2}
    assert all(c.exit == 0 or c.fragment for c in CASES.values())


def test_corpus_is_small_and_reproducible(corpus, tmp_path):
    """The build is deterministic (no randomness, no torch), and all of it stays well under 1 MB."""
    again = tmp_path / "again"
    build_corpus.build(again)

    def snapshot(root: Path) -> dict[str, object]:
        out = {}
        for path in sorted(root.rglob("*")):
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_fifo():
                out[rel] = ("fifo",)
            elif path.is_file():
                out[rel] = path.read_bytes()
        return out

    first, second = snapshot(corpus), snapshot(again)
    assert first == second
    assert sum(len(v) for v in first.values() if isinstance(v, bytes)) < 600_000
    manifest = json.loads((corpus / "cases.json").read_text())["cases"]
    assert [c["name"] for c in manifest] == list(CASES)


# --- memory and real subprocesses ----------------------------------------------------------------------


def run_cli(args: list[str], cwd: Path, env: dict | None = None, limit_as: int | None = 2 << 30):
    """`python -m fp8check ...` in a subprocess: (exit code, stdout, stderr, peak RSS in MB, seconds)."""
    def limit():
        if limit_as:
            resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))

    full_env = {**os.environ, "PYTHONPATH": str(ROOT), "FP8CHECK_DEBUG": "", **(env or {})}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "fp8check", *args], cwd=cwd, env=full_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit)
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return proc.returncode, stdout, stderr, time.perf_counter() - start


# Runs the CLI and records the process's own peak RSS (VmHWM) at exit. ru_maxrss would not do: a child forked from
# a big pytest process inherits the parent's resident pages in that figure.
HWM_WRAPPER = """
import atexit, os, runpy, sys
def _hwm():
    with open("/proc/self/status") as fh:
        kb = next(line for line in fh if line.startswith("VmHWM:")).split()[1]
    with open(os.environ["FP8CHECK_TEST_HWM"], "w") as out:
        out.write(kb)
atexit.register(_hwm)
sys.argv = ["fp8check", *sys.argv[1:]]
runpy.run_module("fp8check", run_name="__main__")
"""


def peak_rss_mb(args: list[str], cwd: Path) -> tuple[int, float]:
    """Exit code and peak RSS (MB) of the CLI on ARGS, under a 2 GiB address-space cap."""
    if not os.path.exists("/proc/self/status"):
        pytest.skip("needs Linux /proc")
    hwm = cwd / "hwm"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FP8CHECK_TEST_HWM": str(hwm)}
    proc = subprocess.run([sys.executable, "-c", HWM_WRAPPER, *args], cwd=cwd, env=env, capture_output=True,
                          timeout=60, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)))
    assert b"Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, int(hwm.read_text()) / 1024


@pytest.mark.parametrize("name", MEMORY_CASES)
def test_hostile_sizes_stay_bounded_in_a_subprocess(corpus, name, tmp_path):
    """2^63-byte headers, 10^12-element shapes, recursion bombs: refused without allocating (under a 2 GiB cap)."""
    code, rss = peak_rss_mb(["inspect", str(corpus / name), "--platform", "h100", "--format", "json"], tmp_path)
    assert code == CASES[name].exit
    assert rss < PEAK_RSS_MB, f"peak RSS {rss:.0f} MB"


@pytest.mark.parametrize("name", MEMORY_CASES)
def test_hostile_sizes_header_read_allocates_little(corpus, name):
    path = corpus / name / "model.safetensors"
    if not path.exists():
        pytest.skip("not a safetensors case")
    tracemalloc.start()
    try:
        with pytest.raises(InputError):
            safetensors_header.read_header(str(path), "model.safetensors")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20, f"read_header peaked at {peak} bytes"


@pytest.mark.parametrize("name", ["header_length_2_63", "tensor_name_ansi", "index_dotdot", "config_is_fifo",
                                  "scale_missing", "pytorch_model_bin_only", "scale_value_nan"])
def test_cases_through_a_real_subprocess(corpus, name, tmp_path):
    case = CASES[name]
    for fmt in ("table", "json"):
        code, stdout, stderr, seconds = run_cli(
            ["inspect", str(corpus / name), "--platform", "h100", "--format", fmt], tmp_path)
        assert code == case.exit, stderr
        assert b"Traceback" not in stdout + stderr and b"\x1b" not in stdout + stderr
        assert seconds < 30
        if fmt == "json":
            doc = json.loads(stdout)
            assert doc["ok"] is (case.exit == 0)
        if case.exit == 2:
            assert stderr.decode().count("\n") == 1 and case.fragment in stderr.decode()
    assert not (tmp_path / "PWNED").exists(), "a pickle was unpickled"


# --- scale values: a job for `load`, not for `inspect` ---------------------------------------------------


VALUE_CASES = [name for name, c in CASES.items() if c.data]


@pytest.mark.parametrize("name", VALUE_CASES)
def test_scale_values_are_really_in_the_files(corpus, name):
    """The bytes hold what the case says (so `load` can be tested on them later); inspect passed them (above)."""
    torch = pytest.importorskip("torch")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    tensors = safetensors_torch.load_file(str(corpus / name / "model.safetensors"))
    value = tensors[build_corpus.SCALE].float().item()
    kind = name.removeprefix("scale_value_")
    checks = {"nan": torch.isnan, "inf": torch.isinf, "zero": lambda t: t == 0, "negative": lambda t: t < 0}
    assert bool(checks[kind](torch.tensor(value)))
    others = [t for n, t in tensors.items() if n.endswith("_scale") and n != build_corpus.SCALE]
    assert others and all(t.float().item() == 1.0 for t in others)


def test_inspect_reads_only_the_header_bytes(corpus, monkeypatch):
    """read_header reads 8 + header-length bytes, never the data region (where NaN scales live)."""
    reads = []
    real_open = safetensors_header.open_regular

    def spying_open(path, name):
        fh, size = real_open(path, name)

        class Spy:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                fh.close()

            def read(self, n=-1):
                data = fh.read(n)
                reads.append(len(data))
                return data

        return Spy(), size

    monkeypatch.setattr(safetensors_header, "open_regular", spying_open)
    path = corpus / "scale_value_nan" / "model.safetensors"
    header = safetensors_header.read_header(str(path), "model.safetensors")
    assert sum(reads) == header.data_start < path.stat().st_size
