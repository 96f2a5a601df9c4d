"""`fp8check inspect org/name`: header-only reads from a fake Hub (tests/fakehub.py), the cache, and the errors."""

from __future__ import annotations

import json
import os
import socket
import time

import pytest
from fakehub import FakeHub
from typer.testing import CliRunner

from fp8check.cli.app import app
from fp8check.core.checkpoint import hub as hubmod
from fp8check.core.checkpoint.local import INDEX_FILE, open_local
from fp8check.core.checkpoint.source import open_checkpoint
from fp8check.core.errors import InputError
from fp8check.synth import write_checkpoint

SECRET = "hf_SeCrEt_token_0123456789"
runner = CliRunner()
# Big enough that one speculative 100 KB read per shard is a small fraction; sparse files cost no disk.
SHAPE = dict(hidden=1024, intermediate=2048, layers=2, heads=8, kv_heads=4, vocab=2000, data="sparse")


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """A running fake Hub; huggingface_hub pointed at it, with a private cache and no token."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for name in ("HF_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(tmp_path / "hf" / "token"))  # no saved login
    monkeypatch.setattr(hubmod, "BACKOFF_S", 0.01)
    with FakeHub() as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        yield server


@pytest.fixture
def repos(fake, make_checkpoint):
    """org/single (one file) and org/sharded (2 shards + index): name -> (folder, commit)."""
    single = make_checkpoint(**SHAPE)
    sharded = make_checkpoint(shards=2, **SHAPE)
    return {"org/single": (single, fake.add_repo("org/single", single)),
            "org/sharded": (sharded, fake.add_repo("org/sharded", sharded))}


def inspect_json(*args: str):
    result = runner.invoke(app, ["inspect", *args, "-p", "h100", "--format", "json"])
    doc = json.loads(result.stdout) if result.stdout.strip() else None
    return result, doc


def same_report(doc: dict, local_doc: dict) -> bool:
    strip = lambda d: {k: v for k, v in d.items() if k != "model"}  # noqa: E731
    return strip(doc) == strip(local_doc)


def folder_size(folder: str) -> int:
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))


def safetensors_gets(fake: FakeHub) -> list:
    return [r for r in fake.log if r.method == "GET" and r.path.endswith(".safetensors")]


# ------------------------------------------------------------------------------------------ header-only inspect


@pytest.mark.parametrize("repo", ["org/single", "org/sharded"])
def test_inspect_repo_reads_headers_only_and_matches_local(repos, fake, repo):
    folder, commit = repos[repo]
    local, local_doc = inspect_json(folder)
    result, doc = inspect_json(repo)
    assert result.exit_code == local.exit_code, result.output
    assert doc["model"] == repo
    assert same_report(doc, local_doc)
    shards = [f for f in os.listdir(folder) if f.endswith(".safetensors")]
    # every safetensors read is a ranged read at the resolved commit; nothing else is fetched twice
    assert all(r.range == f"bytes=0-{hubmod.FIRST_READ - 1}" and commit in r.path for r in safetensors_gets(fake))
    assert fake.requests <= 2 * len(shards) + 3
    assert fake.bytes_served < 0.03 * folder_size(folder)


def test_checkpoint_equals_local_and_counts_requests(repos, fake):
    folder, commit = repos["org/sharded"]
    remote, local = open_checkpoint("org/sharded"), open_local(folder)
    assert (remote.tensors, remote.files, remote.config) == (local.tensors, local.files, local.config)
    stats = remote.fetch
    assert (stats.commit, stats.revision, stats.requests, stats.stages) == (commit, "main", fake.requests, 2)
    assert stats.bytes_read == fake.bytes_served
    assert stats.file_bytes == sum(os.path.getsize(os.path.join(folder, f)) for f in local.files)
    assert 0 < stats.header_bytes < stats.bytes_read < 0.03 * stats.file_bytes


def test_verbose_prints_requests_and_bytes(repos):
    result = runner.invoke(app, ["inspect", "org/sharded", "-p", "h100", "-v"])
    assert result.exit_code in (0, 1), result.output
    assert "5 requests" in result.stdout and "2 round-trip stages" in result.stdout


def test_long_header_takes_a_second_range_read(repos, fake, monkeypatch):
    monkeypatch.setattr(hubmod, "FIRST_READ", 1000)
    folder, _ = repos["org/sharded"]
    ckpt = open_checkpoint("org/sharded")
    assert ckpt.tensors == open_local(folder).tensors
    reads = safetensors_gets(fake)
    assert len(reads) == 4 and sorted(r.range.split("-")[0] for r in reads) == ["bytes=0", "bytes=0", "bytes=1000",
                                                                                "bytes=1000"]
    assert ckpt.fetch.stages == 3


def test_server_ignoring_range_is_read_only_as_far_as_needed(repos, fake):
    fake.fail("ignore_range", "model.safetensors")
    folder, _ = repos["org/single"]
    ckpt = open_checkpoint("org/single")
    assert ckpt.tensors == open_local(folder).tensors
    assert ckpt.fetch.bytes_read < 2 * hubmod.FIRST_READ + 100_000


def test_stale_index_is_reported_as_for_a_local_folder(fake, make_checkpoint):
    folder = make_checkpoint(shards=2, **SHAPE)
    path = os.path.join(folder, INDEX_FILE)
    with open(path) as fh:
        index = json.load(fh)
    index["weight_map"]["model.layers.0.self_attn.q_proj.weight_scale_extra"] = "model-00001-of-00002.safetensors"
    with open(path, "w") as fh:
        json.dump(index, fh)
    fake.add_repo("org/stale", folder)
    remote = open_checkpoint("org/stale")
    assert remote.integrity_errors == open_local(folder).integrity_errors != ()


# ------------------------------------------------------------------------------------------ revisions


@pytest.fixture
def two_commits(fake, make_checkpoint):
    """org/rev: tag v1 = a block-FP8 commit; main = a later per-channel dynamic commit."""
    old = make_checkpoint(**SHAPE)
    new = make_checkpoint(quant="ct-fp8-dynamic", **SHAPE)
    first = fake.add_repo("org/rev", old, revision="v1")
    second = fake.add_repo("org/rev", new, revision="main")
    return old, first, new, second


def strategies(doc: dict) -> set:
    return {layer["strategy"] for layer in doc["layers"] if layer["strategy"]}


@pytest.mark.parametrize("args", [["org/rev@v1"], ["org/rev", "--revision", "v1"], ["org/rev@COMMIT"]])
def test_revision_pinning(two_commits, fake, args):
    old, first, _, second = two_commits
    args = [a.replace("COMMIT", first) for a in args]
    _, local_doc = inspect_json(old)
    result, doc = inspect_json(*args)
    assert result.exit_code in (0, 1), result.output
    assert same_report(doc, local_doc) and any("block" in s for s in strategies(doc))
    assert all(first in r.path for r in fake.log if "/resolve/" in r.path)
    assert not any(second in r.path for r in fake.log)


def test_default_revision_is_main(two_commits):
    _, _, new, _ = two_commits
    _, local_doc = inspect_json(new)
    _, doc = inspect_json("org/rev")
    assert same_report(doc, local_doc) and strategies(doc) == {"channel"}


def test_revision_given_twice_must_agree(two_commits):
    result, _ = inspect_json("org/rev@v1", "--revision", "main")
    assert result.exit_code == 2 and "revision is given twice" in result.stderr


def test_revision_on_a_local_folder_is_refused(repos):
    folder, _ = repos["org/single"]
    result, _ = inspect_json(folder, "--revision", "v1")
    assert result.exit_code == 2 and "--revision applies to Hugging Face repo ids" in result.stderr


# ------------------------------------------------------------------------------------------ errors


def test_repo_not_found(repos):
    result, doc = inspect_json("org/nope")
    assert result.exit_code == 2
    assert "no repository org/nope" in result.stderr and "HF_TOKEN" in result.stderr
    assert doc["ok"] is False and "Traceback" not in result.output


def test_revision_not_found(repos):
    result, _ = inspect_json("org/single@nope")
    assert result.exit_code == 2 and "no revision 'nope'" in result.stderr


def test_gated_repo_needs_a_token_that_is_never_printed(fake, make_checkpoint, monkeypatch):
    folder = make_checkpoint(**SHAPE)
    fake.add_repo("org/gated", folder, gated=True, token=SECRET)
    result, _ = inspect_json("org/gated")
    assert result.exit_code == 2
    assert "gated" in result.stderr and "HF_TOKEN" in result.stderr and "licence" in result.stderr
    wrong = "hf_wrong_token_987654321"
    result, _ = inspect_json("org/gated", "--token", wrong)
    assert result.exit_code == 2 and "not been granted access" in result.stderr
    assert wrong not in result.output and wrong not in result.stderr
    _, local_doc = inspect_json(folder)
    result, doc = inspect_json("org/gated", "--token", SECRET)
    assert result.exit_code in (0, 1) and same_report(doc, local_doc)
    assert SECRET not in result.output
    monkeypatch.setenv("HF_TOKEN", SECRET)  # the environment works as well as --token
    result, doc = inspect_json("org/gated", "-v")
    assert result.exit_code in (0, 1) and SECRET not in result.output


def test_private_repo_without_token(fake, make_checkpoint, tmp_path):
    fake.add_repo("org/private", make_checkpoint(**SHAPE), private=True, token=SECRET)
    result, _ = inspect_json("org/private")
    assert result.exit_code == 2 and "private" in result.stderr and "HF_TOKEN" in result.stderr
    from huggingface_hub import constants

    os.makedirs(os.path.dirname(constants.HF_TOKEN_PATH), exist_ok=True)
    with open(constants.HF_TOKEN_PATH, "w") as fh:  # the saved login (`hf auth login`) is used too
        fh.write(SECRET)
    result, _ = inspect_json("org/private")
    assert result.exit_code in (0, 1), result.stderr


def test_401_on_a_file_says_the_token_was_rejected(repos, fake):
    fake.fail("status", "config.json", status=401,
              headers={"X-Error-Message": "Invalid credentials in Authorization header"})
    result, _ = inspect_json("org/single", "--token", SECRET)
    assert result.exit_code == 2 and "rejected the token" in result.stderr and "HF_TOKEN" in result.stderr
    assert SECRET not in result.output and SECRET not in result.stderr


def test_entry_missing_on_the_server(repos, fake):
    fake.fail("status", "model-00002", status=404, headers={"X-Error-Code": "EntryNotFound"})
    result, _ = inspect_json("org/sharded")
    assert result.exit_code == 2 and "missing" in result.stderr


def test_bin_only_repo_is_refused_without_fetching_the_pickle(fake, tmp_path):
    folder = tmp_path / "binonly"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}))
    (folder / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle")
    fake.add_repo("org/binonly", str(folder))
    result, _ = inspect_json("org/binonly")
    assert result.exit_code == 2
    assert "safetensors only" in result.stderr and "never unpickles" in result.stderr
    assert not any("/resolve/" in r.path for r in fake.log)


def test_connection_dropped_mid_body_once_is_retried(repos, fake):
    fake.fail("drop", "model-00001")
    folder, _ = repos["org/sharded"]
    ckpt = open_checkpoint("org/sharded")
    assert ckpt.tensors == open_local(folder).tensors
    assert len(safetensors_gets(fake)) == 3 and ckpt.fetch.requests == fake.requests == 6
    assert ckpt.fetch.bytes_read == fake.bytes_served


def test_500_then_success(repos, fake):
    fake.fail("status", "/api/models/", status=500)
    fake.fail("status", "model.safetensors", status=503)
    result, doc = inspect_json("org/single")
    assert result.exit_code in (0, 1) and doc["layers"]
    assert [r.status for r in fake.log].count(500) == 1 and [r.status for r in fake.log].count(503) == 1


def test_persistent_500_gives_up_after_bounded_retries(repos, fake):
    fake.fail("status", "/api/models/", status=502, times=100)
    result, _ = inspect_json("org/single")
    assert result.exit_code == 2 and "HTTP 502" in result.stderr and f"{hubmod.ATTEMPTS} attempts" in result.stderr
    assert fake.requests == hubmod.ATTEMPTS


def test_network_down_exits_2_quickly(monkeypatch, fake):
    monkeypatch.setattr(hubmod, "BACKOFF_S", 0.5)  # the real backoff: bounded, so still quick
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    started = time.monotonic()
    result, doc = inspect_json("org/single")
    assert time.monotonic() - started < 5
    assert result.exit_code == 2
    assert "cannot read repository info" in result.stderr and "HF_HUB_OFFLINE" in result.stderr
    assert doc["ok"] is False


# ------------------------------------------------------------------------------------------ cache, offline, downloads


def test_download_then_inspect_offline(repos, fake, monkeypatch, capsys):
    folder, commit = repos["org/sharded"]
    snapshot = hubmod.download_shards("org/sharded", quiet=False)  # not a TTY: no bars, and never stdout
    assert capsys.readouterr().out == ""
    assert os.path.basename(snapshot) == commit
    for name in os.listdir(folder):
        with open(os.path.join(folder, name), "rb") as a, open(os.path.join(snapshot, name), "rb") as b:
            assert a.read() == b.read(), name
    _, local_doc = inspect_json(folder)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    before = fake.requests
    for args in (["org/sharded"], ["org/sharded@main"], [f"org/sharded@{commit}"]):
        result, doc = inspect_json(*args)
        assert result.exit_code in (0, 1), result.stderr
        assert same_report(doc, local_doc)
    result = runner.invoke(app, ["inspect", "org/sharded", "-p", "h100", "-v"])
    assert "from the cache" in result.stdout and "no network" in result.stdout
    assert fake.requests == before  # nothing was fetched offline
    assert hubmod.download_shards("org/sharded") == snapshot  # offline download: the cached snapshot


def test_download_only_the_shards_holding_the_requested_layers(repos, fake, monkeypatch):
    folder, _ = repos["org/sharded"]
    with open(os.path.join(folder, INDEX_FILE)) as fh:
        weight_map = json.load(fh)["weight_map"]
    wanted = {weight_map["model.layers.1.mlp.down_proj.weight"]}
    snapshot = hubmod.download_shards("org/sharded", layers_regex=r"layers\.1\.mlp\.down_proj\.weight$", quiet=True)
    assert {f for f in os.listdir(snapshot) if f.endswith(".safetensors")} == wanted
    fetched = {r.path.rsplit("/", 1)[1] for r in fake.log if r.method == "GET" and "/resolve/" in r.path}
    assert fetched == wanted | {"config.json", INDEX_FILE}
    with pytest.raises(InputError, match="matches no tensor"):
        hubmod.download_shards("org/sharded", layers_regex="no_such_tensor")
    with pytest.raises(InputError, match="not a valid regular expression"):
        hubmod.download_shards("org/sharded", layers_regex="(")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a partial snapshot cannot be inspected offline
    result, _ = inspect_json("org/sharded")
    assert result.exit_code == 2 and "only some files were downloaded" in result.stderr


def test_download_survives_a_dropped_connection(repos, fake):
    folder, _ = repos["org/single"]
    fake.fail("drop", "model.safetensors")
    snapshot = hubmod.download_shards("org/single", quiet=True)
    with open(os.path.join(folder, "model.safetensors"), "rb") as a, \
            open(os.path.join(snapshot, "model.safetensors"), "rb") as b:
        assert a.read() == b.read()


def test_offline_with_nothing_cached(repos, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result, _ = inspect_json("org/single")
    assert result.exit_code == 2 and "HF_HUB_OFFLINE is set" in result.stderr and "not in the cache" in result.stderr
    with pytest.raises(InputError, match="not in the cache"):
        hubmod.download_shards("org/single")


# ------------------------------------------------------------------------------------------ MODEL resolution


@pytest.mark.parametrize("text, expected", [
    ("org/name", ("org/name", None)),
    ("Qwen/Qwen3-32B-FP8@main", ("Qwen/Qwen3-32B-FP8", "main")),
    ("org/x.y_z@refs/pr/1", ("org/x.y_z", "refs/pr/1")),
    ("./relative", None), ("/abs/path", None), ("a/b/c", None), ("org/-bad", None), ("org/a--b", None),
    ("org/a..b", None), ("org/x.git", None), ("name-only", None),
])
def test_parse_repo_ref(text, expected):
    ref = hubmod.parse_repo_ref(text)
    assert (ref and (ref.repo_id, ref.revision)) == expected or (ref is None and expected is None)


def test_existing_folder_wins_over_repo_id(fake, monkeypatch, tmp_path):
    from fp8check.synth import write_checkpoint

    write_checkpoint(str(tmp_path / "org" / "single"), data="zeros")
    monkeypatch.chdir(tmp_path)
    ckpt = open_checkpoint("org/single")
    assert ckpt.fetch is None and ckpt.source == "org/single" and fake.requests == 0


def test_progress_bars_draw_on_stderr_only(capsys):
    from fp8check.core.progress import RichTqdm, stop_progress

    bar_class = type("Loud", (RichTqdm,), {"silent": False})
    files = bar_class(total=2, desc="Fetching 2 files", name="huggingface_hub.snapshot_download")
    data = bar_class(total=3_000_000, unit="B", unit_scale=True, desc="Downloading bytes")
    data.update(3_000_000)
    files.update(2)
    data.close()
    files.close()
    stop_progress()
    out, err = capsys.readouterr()
    assert out == "" and "Fetching 2 files" in err and "3.0/3.0 MB" in err


def test_file_names_from_the_server_cannot_carry_terminal_escapes(fake, make_checkpoint):
    folder = make_checkpoint(**SHAPE)
    os.rename(os.path.join(folder, "model.safetensors"), os.path.join(folder, "model\x1b[2J.safetensors"))
    fake.add_repo("org/escape", folder)
    result, _ = inspect_json("org/escape")
    assert result.exit_code == 2 and "control or invisible characters" in result.stderr
    assert "\x1b" not in result.output


def test_a_legacy_modelopt_repo_is_read_with_its_hf_quant_config_json(fake, make_checkpoint):
    """ModelOpt <= 0.29 keeps its quantization config in hf_quant_config.json: fetched in the same stage as
    config.json, and the report equals the local folder's."""
    folder = make_checkpoint(quant="modelopt-fp8-legacy", **SHAPE)
    assert "hf_quant_config.json" in os.listdir(folder)
    fake.add_repo("nvidia/legacy", folder)
    remote, local = open_checkpoint("nvidia/legacy"), open_local(folder)
    assert remote.config == local.config and remote.config.quantization_config.method == "modelopt"
    assert remote.fetch.stages == 2
    local_result, local_doc = inspect_json(folder)
    result, doc = inspect_json("nvidia/legacy")
    assert result.exit_code == local_result.exit_code == 0 and same_report(doc, local_doc)
    assert doc["quant_method"] == "modelopt"


def test_a_legacy_modelopt_download_keeps_hf_quant_config_json_for_offline_use(fake, make_checkpoint, monkeypatch):
    folder = make_checkpoint(quant="modelopt-fp8-legacy", **SHAPE)
    fake.add_repo("nvidia/legacy", folder)
    snapshot = hubmod.download_shards("nvidia/legacy", quiet=True)
    assert "hf_quant_config.json" in os.listdir(snapshot)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert open_checkpoint("nvidia/legacy").config.quantization_config.method == "modelopt"


def test_download_json_fetches_the_json_files_and_no_weight(repos, fake):
    """crosscheck on a repo id: vLLM's config code reads config.json (and the index, hf_quant_config.json) only."""
    snapshot = hubmod.download_json("org/sharded", quiet=True)
    fetched = {r.path.rsplit("/", 1)[1] for r in fake.log if r.method == "GET" and "/resolve/" in r.path}
    assert fetched == {"config.json", INDEX_FILE}
    assert sorted(os.listdir(snapshot)) == sorted(fetched)
    with pytest.raises(InputError, match="not a Hugging Face repo id"):
        hubmod.download_json("no/such/thing")


def test_a_mistral_format_repo_is_read_as_vllm_reads_it(fake, make_checkpoint):
    """params.json + consolidated.safetensors (what vLLM reads by default, config.json or not): params.json is the
    config, the consolidated headers are read by range and their names come out as vLLM's model class names them."""
    folder = make_checkpoint(**SHAPE, mistral_format=True, quant="fp8-static")
    fake.add_repo("mistralai/small", folder)
    checkpoint = open_checkpoint("mistralai/small")
    assert checkpoint.config.architectures == ("MistralForCausalLM",)
    assert checkpoint.files == ("consolidated.safetensors",)
    assert "model.layers.0.self_attn.q_proj.weight_scale" in checkpoint.tensors


def test_a_mistral_format_streaming_audio_repo_is_read_through_its_hf_files(fake, make_checkpoint):
    """A Mistral-format model fp8check does not lay out (a causal Whisper encoder: Voxtral Realtime) beside
    config.json: the HF-format files are read, as open_local reads such a folder."""
    folder = make_checkpoint(**SHAPE, mistral_format=True, quant="fp8-static",
                             extra_config={"multimodal": {"whisper_model_args": {"encoder_args": {"causal": True}}}})
    write_checkpoint(folder, **SHAPE, quant="fp8-static")
    fake.add_repo("mistralai/voxtral-realtime", folder)
    checkpoint = open_checkpoint("mistralai/voxtral-realtime")
    assert checkpoint.config.architectures == ("LlamaForCausalLM",) and checkpoint.files == ("model.safetensors",)
