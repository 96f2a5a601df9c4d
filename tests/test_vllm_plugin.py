"""The vLLM plugin (fp8check/vllm_plugin.py): the VllmConfig -> fp8check mapping, the modes, import lightness and
never raising, on a fake vLLM (modules in sys.modules, a VllmConfig as a SimpleNamespace); and, opt-in
(FP8CHECK_WHOLE_MODEL set), the real 0.33 / 0.34 wheels building their engine config with the plugin loaded
through vLLM's own entry-point discovery."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import types

import pytest

from fp8check import vllm_plugin
from fp8check.synth import Spec, write_checkpoint

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "examples", "tiny-qwen3-fp8-block")
# The example with an MLP that no TP-2 split keeps block-aligned: 384 / 2 = 192 is not a multiple of 128.
MISALIGNED = Spec(quant="ct-fp8-block", architecture="Qwen3ForCausalLM", model_type="qwen3", hidden=256,
                  intermediate=384, layers=2, heads=4, kv_heads=2, head_dim=128, vocab=512)


class FakePlatform:
    """vLLM's current_platform, as the plugin asks it."""

    def __init__(self, kind: str, capability: tuple[int, int] | None = None):
        self.kind, self.capability = kind, capability

    def is_cuda(self):
        return self.kind == "cuda"

    def is_rocm(self):
        return self.kind == "rocm"

    def is_xpu(self):
        return self.kind == "xpu"

    def is_cpu(self):
        return self.kind == "cpu"

    def get_device_capability(self, device_id=0):
        return types.SimpleNamespace(major=self.capability[0], minor=self.capability[1])


class FakeEngineArgs:
    """EngineArgs as vLLM 0.27 - 0.34 define the method the plugin wraps."""

    built = 0

    def __init__(self, config, quantization=None):
        self.config, self.quantization = config, quantization

    def create_engine_config(self, usage_context=None, headless=False):
        FakeEngineArgs.built += 1
        return self.config


@pytest.fixture
def fake_vllm(monkeypatch):
    """A `vllm` whose current_platform is an H100 and whose EngineArgs is FakeEngineArgs (fresh per test)."""
    engine_args = type("EngineArgs", (FakeEngineArgs,), {})
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = FakePlatform("cuda", (9, 0))
    arg_utils = types.ModuleType(vllm_plugin.ARG_UTILS)
    arg_utils.EngineArgs = engine_args
    for name, module in (("vllm", types.ModuleType("vllm")), ("vllm.engine", types.ModuleType("vllm.engine")),
                         ("vllm.platforms", platforms), (vllm_plugin.ARG_UTILS, arg_utils)):
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delenv(vllm_plugin.MODE_ENV, raising=False)
    monkeypatch.delenv(vllm_plugin.FORMAT_ENV, raising=False)
    monkeypatch.setattr("fp8check.core.targets.profiles.installed_vllm_version", lambda: "0.33.0")
    return types.SimpleNamespace(engine_args=engine_args, platforms=platforms)


def vllm_config(model: str = EXAMPLE, tp: int = 1, **parts) -> types.SimpleNamespace:
    """A VllmConfig with the fields the plugin reads (each part replaceable)."""
    config = types.SimpleNamespace(
        model_config=types.SimpleNamespace(model=model, revision=None, hf_token=None,
                                           allow_deprecated_quantization=False, quantization="compressed-tensors"),
        parallel_config=types.SimpleNamespace(tensor_parallel_size=tp, enable_expert_parallel=False),
        cache_config=types.SimpleNamespace(cache_dtype="auto", kv_cache_dtype_skip_layers=[]),
        kernel_config=types.SimpleNamespace(linear_backend="auto", linear_backend_per_quant=None, moe_backend="auto"),
        attention_config=types.SimpleNamespace(backend=None))
    for name, value in parts.items():
        setattr(config, name, value)
    return config


def records(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "vllm.fp8check"]


def test_pyproject_registers_the_plugin_and_an_extra_that_pins_nothing_of_vllms():
    import tomllib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        project = tomllib.load(fh)["project"]
    assert project["entry-points"]["vllm.general_plugins"] == {"fp8check": "fp8check.vllm_plugin:register"}
    assert project["optional-dependencies"]["vllm"] == ["vllm>=0.25"]


def test_the_config_maps_to_inspects_options(fake_vllm):
    enum = types.SimpleNamespace(name="FLASHINFER")
    config = vllm_config(
        tp=4, parallel_config=types.SimpleNamespace(tensor_parallel_size=4, enable_expert_parallel=True),
        cache_config=types.SimpleNamespace(cache_dtype="fp8_e4m3", kv_cache_dtype_skip_layers=["sliding_window"]),
        kernel_config=types.SimpleNamespace(linear_backend="triton", linear_backend_per_quant={"fp8_block": "cutlass"},
                                            moe_backend="marlin"),
        attention_config=types.SimpleNamespace(backend=enum))
    config.model_config.revision, config.model_config.hf_token = "main", "hf_secret"
    options = vllm_plugin.inputs(config, FakeEngineArgs(config, quantization="fp8"))
    assert options == {
        "model": EXAMPLE, "revision": "main", "token": "hf_secret", "platform": "cuda:90", "assume": {}, "tp": 4,
        "ep": True, "vllm": "auto", "quantization": "fp8", "allow_deprecated_quantization": False,
        "kv_cache_dtype": "fp8_e4m3",
        "kv_cache_dtype_skip_layers": ["sliding_window"], "linear_backend": "triton",
        "kernel_config": {"linear_backend_per_quant": {"fp8_block": "cutlass"}}, "attention_backend": "FLASHINFER",
        "moe_backend": "marlin"}
    config.model_config.hf_token = True  # vLLM's "use the saved login": fp8check's default
    assert vllm_plugin.inputs(config)["token"] is None


@pytest.mark.parametrize("platform,expected", [
    (FakePlatform("cuda", (10, 0)), ("cuda:100", {})), (FakePlatform("xpu"), ("xpu", {})),
    (FakePlatform("rocm"), ("rocm:gfx942", {})), (FakePlatform("cpu"), ("cpu", {"cpu_amx": False})),
])
def test_the_platform_is_vllms_current_platform(fake_vllm, monkeypatch, platform, expected):
    import torch

    fake_vllm.platforms.current_platform = platform
    fake_vllm.platforms.rocm = types.SimpleNamespace(_GCN_ARCH="gfx942:sramecc+:xnack-")
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False, raising=False)
    assert vllm_plugin.vllm_platform() == expected


def test_warn_logs_the_table_and_returns_the_config(fake_vllm, caplog):
    vllm_plugin.register()
    config = vllm_config()
    with caplog.at_level(logging.INFO, logger="vllm"):
        assert fake_vllm.engine_args(config).create_engine_config() is config
    [record] = records(caplog)
    assert record.levelno == logging.INFO
    text = record.getMessage()
    assert "CompressedTensorsW8A8Fp8" in text and "OK: 9 linear modules route on cuda:90" in text
    assert "\x1b[" not in text  # plain text: no terminal codes in vLLM's log


def test_a_failing_layer_warns_and_vllm_goes_on(fake_vllm, caplog, tmp_path):
    folder = write_checkpoint(str(tmp_path / "misaligned"), MISALIGNED, data="zeros")
    vllm_plugin.register()
    config = vllm_config(folder, tp=2)
    with caplog.at_level(logging.INFO, logger="vllm"):
        assert fake_vllm.engine_args(config).create_engine_config() is config
    [record] = records(caplog)
    assert record.levelno == logging.WARNING
    assert "not divisible by weight quantization block_k = 128" in record.getMessage()
    assert "FAIL:" in record.getMessage()


def test_strict_exits_1_with_the_table_before_the_engine_starts(fake_vllm, caplog, tmp_path, monkeypatch):
    folder = write_checkpoint(str(tmp_path / "misaligned"), MISALIGNED, data="zeros")
    monkeypatch.setenv(vllm_plugin.MODE_ENV, "strict")
    vllm_plugin.register()
    with caplog.at_level(logging.INFO, logger="vllm"), pytest.raises(SystemExit) as exited:
        fake_vllm.engine_args(vllm_config(folder, tp=2)).create_engine_config()
    assert exited.value.code == 1
    [record] = records(caplog)
    assert record.levelno == logging.ERROR and "stopping before the engine starts" in record.getMessage()
    # a checkpoint that loads passes strict mode
    config = vllm_config()
    assert fake_vllm.engine_args(config).create_engine_config() is config


def test_json_format_logs_the_report_document(fake_vllm, caplog, monkeypatch):
    monkeypatch.setenv(vllm_plugin.FORMAT_ENV, "json")
    vllm_plugin.register()
    with caplog.at_level(logging.INFO, logger="vllm"):
        fake_vllm.engine_args(vllm_config(tp=2)).create_engine_config()
    [record] = records(caplog)
    document = json.loads(record.getMessage().split("\n", 1)[1])
    assert document["ok"] is True and document["tp"] == 2


def test_off_does_not_wrap(fake_vllm, monkeypatch):
    monkeypatch.setenv(vllm_plugin.MODE_ENV, "off")
    original = fake_vllm.engine_args.create_engine_config
    vllm_plugin.register()
    assert fake_vllm.engine_args.create_engine_config is original


def test_register_is_idempotent_and_signature_tolerant(fake_vllm, caplog):
    vllm_plugin.register()
    wrapped = fake_vllm.engine_args.create_engine_config
    vllm_plugin.register()
    assert fake_vllm.engine_args.create_engine_config is wrapped
    config = vllm_config()
    with caplog.at_level(logging.INFO, logger="vllm"):
        # positional and keyword arguments reach the original as given
        assert fake_vllm.engine_args(config).create_engine_config(None, headless=True) is config
    assert len(records(caplog)) == 1  # one check per config, however often register ran


def test_engine_core_and_worker_processes_do_nothing(fake_vllm, monkeypatch):
    import multiprocessing

    original = fake_vllm.engine_args.create_engine_config
    for name in ("EngineCore_DP0", "VllmWorker-1"):
        monkeypatch.setattr(multiprocessing, "current_process", lambda name=name: types.SimpleNamespace(name=name))
        vllm_plugin.register()
        assert fake_vllm.engine_args.create_engine_config is original


def test_a_broken_config_is_one_log_line_and_vllm_goes_on(fake_vllm, caplog):
    vllm_plugin.register()
    config = types.SimpleNamespace(model_config=None)  # a field vLLM renamed or dropped
    with caplog.at_level(logging.INFO, logger="vllm"):
        assert fake_vllm.engine_args(config).create_engine_config() is config
    [record] = records(caplog)
    assert record.levelno == logging.WARNING and "\n" not in record.getMessage()
    assert record.getMessage().startswith("fp8check: no verdict (AttributeError:")


def test_an_unreadable_checkpoint_does_not_block_even_in_strict(fake_vllm, caplog, monkeypatch, tmp_path):
    monkeypatch.setenv(vllm_plugin.MODE_ENV, "strict")
    vllm_plugin.register()
    config = vllm_config(str(tmp_path / "nothing-here"))
    with caplog.at_level(logging.INFO, logger="vllm"):
        assert fake_vllm.engine_args(config).create_engine_config() is config
    [record] = records(caplog)
    assert "no verdict (InputError:" in record.getMessage()


def test_a_release_newer_than_every_profile_is_answered_by_crosscheck(fake_vllm, caplog, monkeypatch):
    from fp8check.cli import load
    from fp8check.core.routing.crosscheck import LayerAgreement

    monkeypatch.setattr("fp8check.core.targets.profiles.installed_vllm_version", lambda: "9.1.0")
    asked = {}

    def fake_crosscheck(model, platform, **options):
        asked.update(options, model=model, platform=platform)
        import fp8check.api as api

        report = api.inspect(model, platform="h100", vllm="latest")
        rows = [LayerAgreement("model.layers.0.mlp.down_proj", True, (), "CompressedTensorsW8A8Fp8", "K", "refused")]
        return load.CrosscheckResult(report, {}, rows, "9.1.0")

    monkeypatch.setattr(load, "run_crosscheck", fake_crosscheck)
    monkeypatch.setenv(vllm_plugin.MODE_ENV, "strict")
    vllm_plugin.register()
    with caplog.at_level(logging.INFO, logger="vllm"), pytest.raises(SystemExit):
        fake_vllm.engine_args(vllm_config(tp=2)).create_engine_config()
    assert asked["platform"] == "auto" and asked["tp"] == 2 and asked["model"] == EXAMPLE
    [record] = records(caplog)
    assert "answered with vLLM 9.1.0's own routing code" in record.getMessage()


def test_register_without_vllm_and_the_import_are_light():
    """In a fresh interpreter with no vLLM: register() logs one line, and nothing heavy is imported."""
    code = textwrap.dedent("""
        import logging, sys
        logging.basicConfig(level=logging.INFO, format="%(name)s %(levelname)s %(message)s")
        import fp8check.vllm_plugin as plugin
        plugin.register()
        plugin.register()
        print(sorted(m for m in ("typer", "rich", "torch", "vllm") if m in sys.modules))
    """)
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
    lines = [line for line in proc.stderr.splitlines() if line.startswith("vllm.fp8check")]
    assert len(lines) == 2 and all("plugin not registered (ModuleNotFoundError" in line for line in lines)


# ------------------------------------------------------------------------- the real wheels (opt-in)

# One vLLM front process: the platform mocked as the differential suite mocks it (crosscheck.prepare), the
# plugin found by vLLM's own entry-point discovery, the engine config built from a command line.
HARNESS = """
import logging, sys
from fp8check.core.routing.crosscheck import prepare
prepare("cpu", True, False)  # a CPU platform, compiled parts stubbed
logging.disable(logging.NOTSET)  # prepare() silences warnings; the plugin's must show
import vllm.model_executor.models.registry as registry
registry._run_in_subprocess = lambda fn: fn()  # inspect the model class here, where the mocks are
from vllm.engine.arg_utils import EngineArgs
from vllm.utils.argparse_utils import FlexibleArgumentParser
args = EngineArgs.add_cli_args(FlexibleArgumentParser()).parse_args(sys.argv[1:])
config = EngineArgs.from_cli_args(args).create_engine_config()
print("ENGINE WOULD START: TP", config.parallel_config.tensor_parallel_size, flush=True)
"""


def wheel_run(tmp_path, release: str, model: str, tp: int, mode: str) -> subprocess.CompletedProcess:
    sys.path.insert(0, os.path.join(ROOT, "tests", "differential"))
    try:
        from run import release_env
    finally:
        sys.path.pop(0)
    # fp8check's entry point, as `pip install 'fp8check[vllm]'` writes it, where importlib.metadata finds it
    dist = tmp_path / "fp8check_vllm_plugin-0.1.0.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fp8check-vllm-plugin\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text("[vllm.general_plugins]\nfp8check = fp8check.vllm_plugin:register\n")
    script = tmp_path / "front.py"
    script.write_text(HARNESS)
    env = release_env(release)
    env.update(PYTHONPATH=f"{tmp_path}:{ROOT}:{env['PYTHONPATH']}", VLLM_LOGGING_LEVEL="INFO",
               FP8CHECK_VLLM=mode, VLLM_PLUGINS="fp8check")
    argv = ["--model", model, "--tensor-parallel-size", str(tp), "--distributed-executor-backend", "mp",
            "--enforce-eager"]
    # vLLM logs on stdout: one stream, in order
    return subprocess.run([sys.executable, str(script), *argv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, env=env, timeout=900, cwd=str(tmp_path))


@pytest.mark.skipif(not os.environ.get("FP8CHECK_WHOLE_MODEL"), reason="needs the unzipped vLLM wheels")
@pytest.mark.parametrize("release", ["0.33.0", "0.34.0"])
def test_the_wheels_build_their_engine_config_with_the_plugins_verdict(tmp_path, release):
    ok = wheel_run(tmp_path, release, EXAMPLE, 2, "warn")
    assert ok.returncode == 0, ok.stdout[-4000:]
    assert "ENGINE WOULD START: TP 2" in ok.stdout
    assert "OK: 9 linear modules route on cpu, TP=2, vLLM " + release[:4] in ok.stdout, ok.stdout[-4000:]
    folder = write_checkpoint(str(tmp_path / "misaligned"), MISALIGNED, data="zeros")
    strict = wheel_run(tmp_path, release, folder, 2, "strict")
    assert strict.returncode == 1, strict.stdout[-4000:]
    assert "ENGINE WOULD START" not in strict.stdout
    assert "stopping before the engine starts" in strict.stdout
    assert "not divisible by weight quantization block_k = 128" in strict.stdout
