"""fp8check as a user's own process runs it: the README's Python blocks saved as a script (`python demo.py`, no
`if __name__ == "__main__":`) and fed on stdin (`python - <<EOF`), `load --tp 2` included, whose ranks must never
re-import the caller's main module; and a Ctrl-C while `load --tp 2`'s ranks start or run ends it with exit 130,
no traceback from any process and no rank left behind."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fp8check.synth import write_checkpoint

psutil = pytest.importorskip("psutil")
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "examples/tiny-qwen3-fp8-block"
BLOCKS = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(encoding="utf-8"), re.M | re.S)


def test_the_readme_has_the_inspect_and_the_load_example():
    assert len(BLOCKS) == 2 and "fp8check.load(" in BLOCKS[1] and "tp=2" in BLOCKS[1]


@pytest.mark.parametrize("how", ["script", "stdin"])
@pytest.mark.parametrize("block", range(len(BLOCKS)), ids=["inspect", "load-and-matrix"])
def test_a_readme_block_runs_as_a_script_and_from_stdin(tmp_path, block, how):
    """Run from the repository's root, as the README's relative paths assume. The block is preceded by a line
    that counts its runs: the ranks of `load` run fp8check's entry point, never this main module again."""
    runs = tmp_path / "runs"
    code = f"open({str(runs)!r}, 'a').write('run\\n')\n" + BLOCKS[block]
    if how == "script":
        script = tmp_path / "demo.py"
        script.write_text(code)
        proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    else:
        proc = subprocess.run([sys.executable, "-"], input=code, cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.stdout.splitlines()[0] == "True"  # print(report.ok) / print(run.ok)
    assert runs.read_text() == "run\n"


def _ranks_of(cli: psutil.Process) -> list[psutil.Process]:
    ranks = []
    for child in cli.children(recursive=True):
        try:
            if "fp8check.core.load.ranks" in child.cmdline():
                ranks.append(child)
        except psutil.Error:
            pass  # gone meanwhile
    return ranks


@pytest.mark.parametrize("after_s", [0.0, 1.0], ids=["ranks-starting", "ranks-running"])
def test_ctrl_c_during_load_tp_2_exits_130_quietly_and_leaves_no_rank(tmp_path, after_s):
    """SIGINT to the command's process group, as a terminal's Ctrl-C sends it: once the two ranks exist (they are
    importing torch), or a second later (joining the group, running layers). Twelve 1024-wide layers keep the ranks
    running for seconds after that (the bundled checkpoint can finish first on an idle machine)."""
    folder = write_checkpoint(str(tmp_path / "ckpt"), None, layers=12, hidden=1024, intermediate=2048, head_dim=128,
                              data="random")
    cli = subprocess.Popen([sys.executable, "-m", "fp8check", "load", folder, "--tp", "2", "--platform", "xpu"],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    ranks = []
    try:
        deadline = time.monotonic() + 60
        while len(ranks) < 2 and time.monotonic() < deadline and cli.poll() is None:
            ranks = _ranks_of(psutil.Process(cli.pid))
            time.sleep(0.02)
        assert len(ranks) == 2, "the ranks did not start"
        time.sleep(after_s)
        os.killpg(cli.pid, signal.SIGINT)
        _, stderr = cli.communicate(timeout=60)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    assert cli.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr[-3000:]
    gone, alive = psutil.wait_procs(ranks, timeout=10)
    assert alive == []
