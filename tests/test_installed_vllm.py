"""--vllm auto (the default) and installed: the vLLM installed here chooses the rules; one newer than every profile
answers `inspect` with its own code (crosscheck) where it can be imported, else a one-line refusal."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fp8check.cli import load as cli_load
from fp8check.cli.app import app
from fp8check.core.errors import InputError
from fp8check.core.routing.crosscheck import LayerAgreement
from fp8check.core.targets import profiles
from fp8check.core.targets.profiles import LATEST, NewerRelease, select_profile

runner = CliRunner()


@pytest.fixture
def installed(monkeypatch):
    """installed("0.33.1"): vLLM's distribution metadata says that release (vLLM itself is never imported)."""
    def install(version: str | None):
        monkeypatch.setattr(profiles, "installed_vllm_version", lambda: version)
    return install


def test_auto_without_vllm_is_latest(installed):
    installed(None)
    assert select_profile("auto") == LATEST and select_profile(None) == LATEST
    with pytest.raises(InputError, match="vLLM is not installed"):
        select_profile("installed")


@pytest.mark.parametrize("asked", ["auto", "installed", None])
def test_the_installed_release_chooses_the_rules_and_is_named(installed, asked):
    installed("0.33.1")
    profile = select_profile(asked)
    assert (profile.name, profile.vllm) == ("0.33", "0.33.1")
    assert select_profile("latest") == LATEST and select_profile("0.27").vllm == "0.27"  # named releases win


def test_the_header_says_the_installed_release(installed, make_checkpoint):
    installed("0.33.1")
    result = runner.invoke(app, ["inspect", make_checkpoint(), "-p", "h100"], terminal_width=200)
    assert result.exit_code == 0 and "vLLM 0.33.1 installed (rules 0.33)" in result.stdout
    doc = json.loads(runner.invoke(app, ["inspect", make_checkpoint(), "-p", "h100", "-f", "json"]).stdout)
    assert (doc["vllm"], doc["vllm_versions"]) == ("0.33", "0.33.1")


def test_a_newer_installed_release_is_named_not_guessed(installed):
    installed(f"0.{int(LATEST.name.split('.')[1]) + 1}.0")
    with pytest.raises(NewerRelease) as caught:
        select_profile("auto")
    assert caught.value.version.endswith(".0") and f"newest rule profile {LATEST.name}" in str(caught.value)
    with pytest.raises(InputError) as explicit:  # a release named on the command line stays a plain refusal
        select_profile(caught.value.version)
    assert not isinstance(explicit.value, NewerRelease)


def test_newer_installed_vllm_that_cannot_be_imported_is_one_line(installed, make_checkpoint, monkeypatch):
    installed("9.1.0")
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None if name == "vllm" else object())
    result = runner.invoke(app, ["inspect", make_checkpoint(), "-p", "h100"])
    assert result.exit_code == 2 and "vLLM 9.1.0 is installed" in result.stderr
    assert "newer than fp8check's newest rule profile" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("vllm_error, code", [(None, 0), ("Failed to find a kernel ...", 1)])
def test_newer_installed_vllm_answers_inspect_with_its_own_code(installed, make_checkpoint, monkeypatch, vllm_error,
                                                                 code):
    """The wiring: inspect -> crosscheck with the newest profile standing in; the exit code is vLLM's answer."""
    installed("9.1.0")
    folder = make_checkpoint()
    seen = {}

    def fake_crosscheck(model, platform, **options):
        seen.update(options, model=model, platform=platform)
        report = __import__("fp8check.api", fromlist=["inspect"]).inspect(model, platform="h100", vllm="latest")
        row = LayerAgreement("model.layers.0.mlp.down_proj", vllm_error is None, ("error",) if vllm_error else (),
                             "CompressedTensorsW8A8Fp8", "CutlassFp8BlockScaledMMKernel", vllm_error)
        return cli_load.CrosscheckResult(report, {"platform": "mocked"}, [row], "9.1.0")

    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: object())
    monkeypatch.setattr(cli_load, "run_crosscheck", fake_crosscheck)
    result = runner.invoke(app, ["inspect", folder, "-p", "h100", "--tp", "2"], terminal_width=200)
    assert result.exit_code == code, result.output
    assert "answering with vLLM 9.1.0's own routing code" in result.stderr
    assert "the vLLM column is vLLM 9.1.0's own answer" in result.stdout
    assert (seen["model"], seen["platform"], seen["tp"]) == (folder, "h100", 2)
    doc = json.loads(runner.invoke(app, ["inspect", folder, "-p", "h100", "-f", "json"]).stdout)
    assert doc["stand_in"] == "9.1.0" and doc["rules"] == LATEST.name and doc["vllm_ok"] is (vllm_error is None)
