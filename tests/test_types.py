"""The package type-checks: `python -m mypy` under pyproject.toml's [tool.mypy] (issue 38), run here so that CI's
test command runs it. A second check shows the settings are strict enough to refuse what issue 38 found: a record
passed where another is wanted, a field that may be None used as if set."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("mypy", reason="mypy is in the [test] extra: pip install -e '.[test]'")


def _mypy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)


def test_the_package_type_checks():
    proc = _mypy()
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "Success: no issues found" in proc.stdout


def test_the_settings_refuse_a_wrong_record_and_an_unchecked_none(tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "from fp8check.core.model.modules import LinearModule\n"
        "from fp8check.core.model.tp import TPLayout, tp_layout\n"
        "from fp8check.core.records import LayerReport\n"
        "def rank_shape(module: LinearModule, layer: LayerReport) -> int:\n"
        "    layout: TPLayout = tp_layout(layer, 2)\n"           # a LayerReport where a LinearModule is wanted
        "    return layer.kernel.count('x') + layout.tp\n"       # kernel is str | None
    )
    proc = _mypy("--config-file", str(ROOT / "pyproject.toml"), str(wrong))
    assert proc.returncode == 1, proc.stdout
    assert 'Argument 1 to "tp_layout" has incompatible type "LayerReport"; expected "LinearModule"' in proc.stdout
    assert 'Item "None" of "str | None" has no attribute "count"' in proc.stdout
