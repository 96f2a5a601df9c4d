"""Hugging Face Hub repos (`org/name`, `org/name@revision`), read from headers only.

Everything network-related comes from huggingface_hub: the endpoint (HF_ENDPOINT), the token (--token,
HF_TOKEN or the saved login), the user agent, its shared HTTP session, URL building, error types, the cache
layout and the downloads. What fp8check adds is the plan that keeps inspect cheap:

    stage 1   GET /api/models/{repo}/revision/{rev}      commit sha + file listing; unknown repo or revision,
                                                           private repos and .bin-only repos stop here
    stage 2   in parallel, at that commit:               config.json, the index, and one ranged read
              (bytes 0-99999) of every shard the listing names (the Hub answers each with a redirect to
              its CDN, which counts as one more round trip)
    stage 3   only if needed: the rest of a header longer than the first read, or a shard the index names
              that the listing guess missed

so N shards cost N + 3 requests (plus redirects) and ~100 KB each, in 2 stages, never a weight byte. Each
header is validated by fp8check.core.checkpoint.safetensors_header (the file size comes from Content-Range) and the
index by checkpoint.parse_index / cross_check_index, then assembled exactly as a local folder is. Transient
failures (connection refused or dropped, timeouts, 408/429/5xx) are retried ATTEMPTS times with backoff;
everything else becomes a one-line InputError that says what to do, without ever showing the token.

With HF_HUB_OFFLINE=1 nothing is fetched: the cached snapshot is read as a local folder (its files are
symlinks into the repo's blobs/, which `allowed_root` admits). download_shards() fetches only the shards a
later `load` needs, into the same cache.
"""

from __future__ import annotations

import glob
import os
import re
import threading
import time
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, NamedTuple, Protocol
from urllib.parse import quote

from fp8check.core.checkpoint.local import (
    MAX_JSON_BYTES, Checkpoint, FetchStats, assemble_checkpoint, check_relative_path, index_shards, load_json,
    mistral_config, mistral_format_error, open_local, parse_index, parse_json, parse_model_config, safetensors_files,
    vllm_named,
)
from fp8check.core.checkpoint.mistral import (
    CONSOLIDATED_INDEX, MISTRAL_PARAMS, NotLaidOut, consolidated_files, is_mistral_format,
)
from fp8check.core.checkpoint.safetensors_header import SafetensorsHeader, header_length, parse_header
from fp8check.core.errors import CheckpointFileError, InputError, is_printable, printable
from fp8check.core.formats.frontdoor import HF_QUANT_CONFIG
from fp8check.version import __version__

DEFAULT_REVISION = "main"
CONFIG_FILE = "config.json"
FIRST_READ = 100_000          # bytes of the speculative first read per shard; real headers are ~10-80 KB
ATTEMPTS = 3                  # tries per request on connection errors, timeouts, 408/429/5xx
BACKOFF_S = 0.5               # wait before the 2nd try, doubled before each next one
CONNECT_TIMEOUT_S = 10.0
MAX_WORKERS = 32              # parallel requests in one stage
MAX_INFO_BYTES = 20_000_000   # the repo-info JSON; a 10k-file listing is ~1 MB
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
_NAME = r"[A-Za-z0-9_](?:[\w.-]{0,94}[A-Za-z0-9_])?"
_REPO_ID = re.compile(rf"{_NAME}/{_NAME}", re.ASCII)
_TRUE = {"1", "ON", "YES", "TRUE"}


@dataclass(frozen=True)
class RepoRef:
    """A Hub model repo and the revision asked for (None: the default branch, main)."""

    repo_id: str
    revision: str | None = None

    @property
    def rev(self) -> str:
        return self.revision or DEFAULT_REVISION

    @property
    def display(self) -> str:
        return f"{self.repo_id}@{self.revision}" if self.revision else self.repo_id


def parse_repo_ref(model: str, revision: str | None = None) -> RepoRef | None:
    """`org/name` or `org/name@rev` (plus --revision) -> RepoRef; None when `model` is not a repo id."""
    repo_id, at, at_revision = model.partition("@")
    if not _REPO_ID.fullmatch(repo_id) or "--" in repo_id or ".." in repo_id or repo_id.endswith(".git"):
        return None
    if at and not at_revision:
        raise InputError(f"{printable(model)}: empty revision after '@' (use org/name@main, a tag or a commit)")
    if at_revision and revision and at_revision != revision:
        raise InputError(f"{printable(model)}: the revision is given twice ({printable(at_revision)!r} and "
                         f"--revision {printable(revision)!r}); give one")
    rev = revision or at_revision or None
    if rev is not None and (len(rev) > 256 or not rev.isprintable() or rev.strip() != rev):
        raise InputError(f"{printable(rev)!r} is not a valid revision (a branch, tag or commit)")
    return RepoRef(repo_id, rev)


def hub_endpoint() -> str:
    """HF_ENDPOINT read now (huggingface_hub reads it once, at import), else huggingface_hub's default."""
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def hub_cache_dir() -> str:
    """The hub cache as huggingface_hub defines it (HF_HUB_CACHE, else $HF_HOME/hub), read now."""
    from huggingface_hub import constants

    path = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if not path and os.environ.get("HF_HOME"):
        path = os.path.join(os.environ["HF_HOME"], "hub")
    return os.path.expandvars(os.path.expanduser(path)) if path else constants.HF_HUB_CACHE


def offline_mode() -> bool:
    from huggingface_hub import constants

    flag = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return constants.is_offline_mode() or flag.strip().upper() in _TRUE


# --------------------------------------------------------------------------------------------- remote inspect


def open_remote(ref: RepoRef, token: str | None = None) -> Checkpoint:
    """config.json, the index and every shard header of a Hub repo, by ranged reads; no weight is fetched. A
    Mistral-format repo (params.json + consolidated*.safetensors) is read as vLLM reads it by default; one whose
    model fp8check does not lay out in that format, through its HF-format files when it has them (as local.open_local
    reads a folder)."""
    checkpoint = _open_remote(ref, token, mistral_first=True) or _open_remote(ref, token, mistral_first=False)
    assert checkpoint is not None  # only a Mistral-format read gives up (NotLaidOut)
    return checkpoint


def _open_remote(ref: RepoRef, token: str | None, mistral_first: bool) -> Checkpoint | None:
    """open_remote's read; None: a Mistral-format model fp8check does not lay out, beside config.json."""
    started = time.monotonic()
    fetcher = _Fetcher(ref, token)
    with _hub_errors(fetcher):
        info = fetcher.repo_info()
        stages = info.rounds
        mistral = mistral_first and is_mistral_format([f for f in info.files if "/" not in f])
        index_name, guessed = _files_to_read(ref, info, mistral)
        hf_quant = HF_QUANT_CONFIG if HF_QUANT_CONFIG in info.files and not mistral else None  # ModelOpt <= 0.29
        config_files = (MISTRAL_PARAMS, CONFIG_FILE if CONFIG_FILE in info.files else None) if mistral \
            else (CONFIG_FILE, hf_quant)
        jobs: dict[str, Callable[[], _Body | _Header]] = {
            name: partial(fetcher.get_json, name, info.commit) for name in (*config_files, index_name) if name}
        jobs.update({shard: partial(fetcher.get_header, shard, info.commit) for shard in guessed})
        results, rounds = _parallel(jobs)
        stages += rounds
        docs = {name: parse_json(_value(results, name).data, name) for name in config_files if name}
        try:
            config = mistral_config(docs[MISTRAL_PARAMS], docs.get(CONFIG_FILE)) if mistral else \
                parse_model_config(docs[CONFIG_FILE], hf_quant_config=docs.get(hf_quant) if hf_quant else None)
        except NotLaidOut:
            if CONFIG_FILE not in info.files:
                raise
            return None
        weight_map = None
        shards = guessed
        if index_name:
            weight_map = parse_index(parse_json(_value(results, index_name).data, index_name), index_name)
            shards = index_shards(weight_map)
            for shard in shards:
                if shard not in info.files:
                    raise CheckpointFileError(shard, f"{index_name} lists it, but {ref.display} has no such file "
                                                     f"at commit {info.commit[:12]}")
            if mistral:  # weight_utils.filter_duplicate_safetensors_files: the listed consolidated files only
                shards = [s for s in guessed if s in set(shards)]
            missing = {s: partial(fetcher.get_header, s, info.commit) for s in shards if s not in results}
            if missing:  # the listing guess missed some: one more parallel stage
                more, rounds = _parallel(missing)
                results.update(more)
                stages += rounds
        headers: list[_Header] = [_value(results, shard) for shard in shards]
    fetch = FetchStats(
        repo_id=ref.repo_id, revision=ref.rev, commit=info.commit, endpoint=fetcher.endpoint,
        requests=fetcher.requests, bytes_read=fetcher.bytes_read, stages=stages,
        seconds=round(time.monotonic() - started, 3),
        header_bytes=sum(8 + h.header.header_len for h in headers), file_bytes=sum(h.size or 0 for h in headers),
    )
    checkpoint = assemble_checkpoint(ref.display, config, [h.header for h in headers], weight_map, index_name, fetch)
    return vllm_named(checkpoint) if mistral else checkpoint


@dataclass(frozen=True)
class _RepoInfo:
    commit: str
    files: frozenset[str]
    rounds: int


@dataclass(frozen=True)
class _Body:
    data: bytes
    size: int | None     # the whole file's size (Content-Range total, or Content-Length of a 200)
    rounds: int          # sequential round trips it took (retries and redirects included)


@dataclass(frozen=True)
class _Header:
    header: SafetensorsHeader
    size: int | None
    rounds: int


class _Fetcher:
    """The requests of one command: huggingface_hub's session, headers and errors; counted, bounded, retried."""

    def __init__(self, ref: RepoRef, token: str | None):
        from huggingface_hub.utils import build_hf_headers

        self.ref = ref
        self.endpoint = hub_endpoint()
        self.headers = build_hf_headers(token=token, library_name="fp8check", library_version=__version__)
        self.token_sent = any(k.lower() == "authorization" for k in self.headers)
        self.requests = 0
        self.bytes_read = 0
        self._lock = threading.Lock()

    def url(self, filename: str, commit: str) -> str:
        from huggingface_hub import hf_hub_url

        return hf_hub_url(self.ref.repo_id, filename, revision=commit, endpoint=self.endpoint)

    def repo_info(self) -> _RepoInfo:
        """Stage 1: the revision's commit and file listing (what snapshot_download asks first, too)."""
        from huggingface_hub.errors import BadRequestError

        url = f"{self.endpoint}/api/models/{self.ref.repo_id}/revision/{quote(self.ref.rev, safe='')}"
        try:
            body = self.get(url, "repository info", limit=MAX_INFO_BYTES, params={"expand": ["sha", "siblings"]})
        except BadRequestError:  # a Hub-compatible server without ?expand: ask for the full document
            body = self.get(url, "repository info", limit=MAX_INFO_BYTES)
        doc = parse_json(body.data, "repository info")
        commit = doc.get("sha") if isinstance(doc, dict) else None
        siblings = doc.get("siblings") if isinstance(doc, dict) else None
        if not isinstance(commit, str) or not commit or not isinstance(siblings, list):
            raise InputError(f"{self.ref.display}: {self.endpoint} answered the repository info without a commit "
                             "sha or file listing; is HF_ENDPOINT a Hugging Face Hub?")
        files = frozenset(s["rfilename"] for s in siblings
                          if isinstance(s, dict) and isinstance(s.get("rfilename"), str))
        return _RepoInfo(commit=commit, files=files, rounds=body.rounds)

    def get_json(self, filename: str, commit: str) -> _Body:
        return self.get(self.url(filename, commit), filename, limit=MAX_JSON_BYTES)

    def get_header(self, filename: str, commit: str) -> _Header:
        """One speculative ranged read; a second one only for a header longer than FIRST_READ."""
        url = self.url(filename, commit)
        first = self.get(url, filename, first=0, last=FIRST_READ - 1)
        n = header_length(first.data[:8], filename, first.size)
        rounds = first.rounds
        data = first.data
        if 8 + n > len(data):
            rest = self.get(url, filename, first=len(data), last=8 + n - 1)
            data += rest.data
            rounds += rest.rounds
        if len(data) < 8 + n:
            raise CheckpointFileError(filename, f"truncated: header needs {n} bytes, only {len(data) - 8} present")
        return _Header(parse_header(data[8:8 + n], filename, first.size), first.size, rounds)

    def get(self, url: str, what: str, *, first: int | None = None, last: int | None = None,
            limit: int = MAX_JSON_BYTES, params: dict | None = None) -> _Body:
        """GET (a byte range of) `url`, retrying transient failures ATTEMPTS times with backoff."""
        import httpx2

        headers = dict(self.headers)
        if first is not None:
            headers["Range"] = f"bytes={first}-{last}"
            headers["Accept-Encoding"] = "identity"  # a compressing proxy may otherwise ignore the range
        wait, rounds = BACKOFF_S, 0
        for attempt in range(1, ATTEMPTS + 1):
            rounds += 1
            try:
                data, size, redirects = self._get_once(url, what, headers, first, last, limit, params)
                return _Body(data, size, rounds + redirects)
            except _Transient as exc:
                problem = str(exc)
            except httpx2.TransportError as exc:  # refused, reset, timed out, dropped mid-body
                problem = f"{type(exc).__name__}: {printable(str(exc), 200) or 'no detail'}"
            if attempt == ATTEMPTS:
                raise InputError(
                    f"{self.ref.display}: cannot read {what} from {self.endpoint} ({problem}; {ATTEMPTS} attempts). "
                    "Check the network, proxy or HF_ENDPOINT; with HF_HUB_OFFLINE=1 fp8check reads a cached "
                    "snapshot instead."
                ) from None
            time.sleep(wait)
            wait *= 2
        raise AssertionError("unreachable")

    def _get_once(self, url, what, headers, first, last, limit, params) -> tuple[bytes, int | None, int]:
        """One GET: (body, file size, redirects followed). The Hub redirects LFS files to its CDN."""
        import httpx2
        from huggingface_hub.utils import get_session, hf_raise_for_status

        timeout = httpx2.Timeout(_read_timeout(), connect=CONNECT_TIMEOUT_S)
        with get_session().stream("GET", url, headers=headers, params=params, timeout=timeout,
                                  follow_redirects=True) as response:
            redirects = len(response.history)
            with self._lock:
                self.requests += 1 + redirects
            status = response.status_code
            if status in RETRY_STATUS:
                self._read(response, 65_536)
                raise _Transient(f"HTTP {status}")
            if status == 416 and first is not None:  # range past the end: an empty (or tiny) file
                self._read(response, 65_536)
                return b"", _content_range(response.headers.get("Content-Range"))[2], redirects
            if status >= 400:  # a bounded copy of the error, for huggingface_hub's typed exceptions
                body = self._read(response, 1_000_000)
                kept = [(k, v) for k, v in response.headers.multi_items()
                        if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
                hf_raise_for_status(httpx2.Response(status, headers=kept, content=body, request=response.request))
            if first is None:
                data = self._read(response, limit + 1)
                if len(data) > limit:
                    raise CheckpointFileError(what, f"larger than {limit} bytes; refusing to read it")
                return data, None, redirects
            if status == 206:
                start, _, size = _content_range(response.headers.get("Content-Range"))
                if start != first:
                    got = printable(str(response.headers.get("Content-Range")), 80)
                    raise CheckpointFileError(what, f"asked for bytes {first}-{last}, the server answered 206 with "
                                                    f"Content-Range {got!r}")
                return self._read(response, last - first + 1), size, redirects
            # 200: the server ignored Range; read only as far as needed and drop the connection
            size = _int(response.headers.get("Content-Length"))
            return self._read(response, last + 1)[first:], size, redirects

    def _read(self, response, want: int) -> bytes:
        """Up to `want` body bytes; every byte received is counted, also when the connection drops midway."""
        chunks, got = [], 0
        try:
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                got += len(chunk)
                if got >= want:
                    break
        finally:
            with self._lock:
                self.bytes_read += got
        return b"".join(chunks)[:want]


class _Transient(Exception):
    """A retryable HTTP status (408, 429, 5xx)."""


def _read_timeout() -> float:
    from huggingface_hub import constants

    value = os.environ.get("HF_HUB_DOWNLOAD_TIMEOUT")
    try:
        return float(value) if value else float(constants.HF_HUB_DOWNLOAD_TIMEOUT)
    except ValueError:
        return float(constants.HF_HUB_DOWNLOAD_TIMEOUT)


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _content_range(text: str | None) -> tuple[int | None, int | None, int | None]:
    """'bytes 0-99/1234' -> (0, 99, 1234); 'bytes */1234' -> (None, None, 1234)."""
    match = re.fullmatch(r"\s*bytes\s+(?:(\d+)-(\d+)|\*)/(\d+|\*)\s*", text or "")
    if not match:
        return None, None, None
    start, end, total = match.groups()
    return _int(start), _int(end), _int(total) if total != "*" else None


def _files_to_read(ref: RepoRef, info: _RepoInfo, mistral: bool) -> tuple[str | None, list[str]]:
    """(index file or None, shards to read in stage 2) from the listing, as open_local chooses from a folder."""
    top = sorted(f for f in info.files if "/" not in f)
    if mistral:  # params.json + consolidated*.safetensors, as open_local reads them
        shards = consolidated_files(top)
        for shard in shards:  # names come from the server: no control characters in reports
            check_relative_path(shard, "repository listing", "file name")
        return (CONSOLIDATED_INDEX if CONSOLIDATED_INDEX in top else None), shards
    if refusal := mistral_format_error(ref.display, top):
        raise refusal
    index_name, shards = safetensors_files(ref.display, top)  # refuses .bin-only and safetensors-less repos
    if CONFIG_FILE not in info.files:
        raise InputError(f"{ref.display}: no config.json at commit {info.commit[:12]}; fp8check reads "
                         "transformers-style checkpoints (config.json + *.safetensors)")
    if not index_name:
        for shard in shards:  # names come from the server: no control characters in reports
            check_relative_path(shard, "repository listing", "file name")
        return None, shards
    # Guess the shards from the listing so they are read alongside the index; the index has the last word.
    try:
        guess = safetensors_files(ref.display, [f for f in top if f != index_name])[1]
    except InputError:
        guess = []
    return index_name, [f for f in guess if is_printable(f)]


def _parallel(jobs: Mapping[str, Callable[[], _Body | _Header]]) -> tuple[dict, int]:
    """One stage: run the jobs in threads -> ({name: result or the exception it raised}, round trips it took)."""
    def run(job):
        try:
            return job()
        except Exception as exc:  # noqa: BLE001 - kept: only a result that is used re-raises (see _value)
            return exc

    with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(jobs)), thread_name_prefix="fp8check-hub") as pool:
        results = dict(zip(jobs, pool.map(run, jobs.values())))
    return results, max(getattr(r, "rounds", 1) for r in results.values())


def _value(results: dict, name: str):
    value = results[name]
    if isinstance(value, BaseException):
        raise value
    return value


@contextmanager
def _hub_errors(fetcher: _Fetcher):
    """Turn huggingface_hub's and httpx's exceptions into one-line InputErrors (the token never shows)."""
    try:
        yield
    except InputError:
        raise
    except Exception as exc:
        error = _translate(exc, fetcher.ref, fetcher.endpoint, fetcher.token_sent)
        if error is None:
            raise
        raise error from None


def _translate(exc: BaseException, ref: RepoRef, endpoint: str, token_sent: bool) -> InputError | None:
    import httpx2
    from huggingface_hub.errors import (
        DisabledRepoError, GatedRepoError, HfHubHTTPError, LocalEntryNotFoundError, OfflineModeIsEnabled,
        RemoteEntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError,
    )

    page = f"{endpoint}/{ref.repo_id}"
    token_hint = ("check that the token in use (--token, HF_TOKEN or the saved login) can read it" if token_sent
                  else "set HF_TOKEN or pass --token")
    if isinstance(exc, GatedRepoError):
        detail = "the token in use has not been granted access" if token_sent else "no token was sent"
        return InputError(f"{ref.display} is a gated repo ({detail}): accept its licence on the model page {page} "
                          "while logged in, then set HF_TOKEN or pass --token with a read token of that account")
    if isinstance(exc, RevisionNotFoundError):
        return InputError(f"{ref.display}: no revision {ref.rev!r} in {ref.repo_id} (give a branch, tag or full "
                          "commit sha)")
    if isinstance(exc, RepositoryNotFoundError):
        return InputError(f"{ref.display}: no such local folder, and no repository {ref.repo_id} on {endpoint}. "
                          f"Check the id; if the repo is private, {token_hint}")
    if isinstance(exc, DisabledRepoError):
        return InputError(f"{ref.display}: access to this repository is disabled on {endpoint}")
    if isinstance(exc, RemoteEntryNotFoundError):
        return InputError(f"{ref.display}: a file the listing names is missing on {endpoint} "
                          f"({printable(str(exc).splitlines()[-1], 200)})")
    if isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else None
        server = printable(" ".join((exc.server_message or "").split()), 200)
        said = f"HTTP {status}" + (f": {server}" if server else "")
        if status == 401:
            return InputError(f"{ref.display}: {endpoint} rejected the token ({said}); it is invalid or expired: "
                              "check --token, HF_TOKEN or the saved login")
        if status == 403:
            return InputError(f"{ref.display}: access denied ({said}). If the repo is gated, accept its licence on "
                              f"{page}; {token_hint} (a token with read access)")
        return InputError(f"{ref.display}: {endpoint} answered {said}")
    if isinstance(exc, OfflineModeIsEnabled):
        return InputError(f"{ref.display}: HF_HUB_OFFLINE is set but the files are not in the cache {hub_cache_dir()}")
    if isinstance(exc, LocalEntryNotFoundError):
        return InputError(f"{ref.display}: cannot reach {endpoint} and the files are not cached: "
                          f"{printable(str(exc).splitlines()[-1], 200)}")
    if isinstance(exc, httpx2.TransportError):
        return InputError(f"{ref.display}: cannot reach {endpoint} ({type(exc).__name__}: "
                          f"{printable(str(exc), 200)}); check the network, proxy or HF_ENDPOINT")
    if isinstance(exc, OSError):
        return InputError(f"{ref.display}: {printable(str(exc), 300)}")
    return None


# --------------------------------------------------------------------------------------------- offline / cache


def repo_cache_folder(repo_id: str, cache_dir: str | None = None) -> str:
    from huggingface_hub.file_download import repo_folder_name

    return os.path.join(cache_dir or hub_cache_dir(), repo_folder_name(repo_id=repo_id, repo_type="model"))


def cached_snapshot(ref: RepoRef, cache_dir: str | None = None) -> str | None:
    """The cached snapshot folder of `ref` (branch/tag via refs/, or a commit), or None."""
    from huggingface_hub import try_to_load_from_cache

    path = try_to_load_from_cache(ref.repo_id, CONFIG_FILE, cache_dir=cache_dir or hub_cache_dir(), revision=ref.rev)
    return os.path.dirname(path) if isinstance(path, str) else None


def open_cached(ref: RepoRef) -> Checkpoint:
    """HF_HUB_OFFLINE=1: read config, index and headers from the cached snapshot, no network."""
    started = time.monotonic()
    cache = hub_cache_dir()
    snapshot = _require_snapshot(ref, cache)
    try:
        ckpt = open_local(snapshot, allowed_root=repo_cache_folder(ref.repo_id, cache), source=ref.display)
    except CheckpointFileError as exc:
        if not os.path.lexists(os.path.join(snapshot, exc.path)):
            raise InputError(_partial_snapshot(ref, snapshot, exc.path)) from None
        raise
    fetch = FetchStats(repo_id=ref.repo_id, revision=ref.rev, commit=os.path.basename(snapshot), endpoint=cache,
                       seconds=round(time.monotonic() - started, 3), offline=True,
                       file_bytes=sum(os.path.getsize(os.path.join(snapshot, f)) for f in ckpt.files))
    return replace(ckpt, fetch=fetch)


def _require_snapshot(ref: RepoRef, cache: str) -> str:
    snapshot = cached_snapshot(ref, cache)
    if snapshot is None:
        raise InputError(f"{ref.display}: HF_HUB_OFFLINE is set and revision {ref.rev!r} of {ref.repo_id} is not in "
                         f"the cache {cache}. Unset HF_HUB_OFFLINE to read the headers from the Hub, or download it "
                         "first while online")
    return snapshot


def _partial_snapshot(ref: RepoRef, snapshot: str, missing: str) -> str:
    return (f"{ref.display}: the cached snapshot {os.path.basename(snapshot)[:12]} lacks {missing} (only some "
            "files were downloaded); unset HF_HUB_OFFLINE to read the headers from the Hub")


# --------------------------------------------------------------------------------------------- downloads


def download_shards(model: str, revision: str | None = None, token: str | None = None,
                    layers_regex: str | None = None, quiet: bool = False,
                    tensor_names: Collection[str] | None = None) -> str:
    """Download config.json, the index and only the shards holding tensors that match `layers_regex`.

    `layers_regex` is searched (re.search) in every tensor name, `tensor_names` (what `load --layers` needs)
    names them exactly; with neither, every shard is downloaded. Files land in the
    Hugging Face cache (HF_HUB_CACHE), already-cached ones are not fetched again, and the local snapshot folder
    is returned (open it with open_local(folder, allowed_root=repo_cache_folder(repo_id))). Progress bars go to
    stderr, only on a terminal and unless `quiet`; nothing is printed to stdout. With HF_HUB_OFFLINE=1 the
    cached snapshot is returned if it holds those files.
    """
    ref = parse_repo_ref(model, revision)
    if ref is None:
        raise InputError(f"{printable(model)}: not a Hugging Face repo id (org/name or org/name@revision)")
    pattern: TensorFilter | None = None
    if layers_regex is not None:
        try:
            pattern = re.compile(layers_regex)
        except re.error as exc:
            raise InputError(f"layers regex '{printable(layers_regex)}' is not a valid regular expression: {exc}") \
                from None
    if tensor_names is not None:
        pattern = _ExactNames(frozenset(tensor_names))
    if offline_mode():
        return _cached_shards(ref, pattern)
    from huggingface_hub import hf_hub_download, snapshot_download

    from fp8check.core.progress import rich_tqdm_class, stop_progress

    cache = hub_cache_dir()
    fetcher = _Fetcher(ref, token)
    common: dict[str, Any] = dict(repo_id=ref.repo_id, cache_dir=cache, endpoint=fetcher.endpoint, token=token,
                  library_name="fp8check", library_version=__version__)
    with _hub_errors(fetcher):
        info = fetcher.repo_info()
        index_name, shards = _files_to_read(ref, info, mistral=False)
        # config.json at the revision asked for: this also records refs/<revision> -> commit in the cache, so the
        # same `org/name[@rev]` works offline afterwards.
        config_path = hf_hub_download(filename=CONFIG_FILE, revision=ref.rev, **common)
        commit = os.path.basename(os.path.dirname(config_path))
        if index_name:
            index_path = hf_hub_download(filename=index_name, revision=commit, **common)
            weight_map = parse_index(load_json(index_path, index_name), index_name)
        elif pattern is not None:  # no index: the headers say which file holds what
            results, _ = _parallel({s: partial(fetcher.get_header, s, commit) for s in shards})
            weight_map = {t: s for s in shards for t in _value(results, s).header.tensors}
        else:
            weight_map = None
        if pattern is not None and weight_map is not None:
            shards = sorted({shard for tensor, shard in weight_map.items() if pattern.search(tensor)})
            if not shards:
                raise InputError(f"{ref.display}: layers regex '{printable(pattern.pattern)}' matches no tensor")
        elif weight_map is not None:
            shards = index_shards(weight_map)
        extra = [f for f in (index_name, HF_QUANT_CONFIG) if f and f in info.files]
        wanted = [CONFIG_FILE, *extra, *shards]
        try:
            return snapshot_download(
                revision=commit, allow_patterns=[glob.escape(f) for f in wanted], max_workers=min(8, len(wanted)),
                tqdm_class=rich_tqdm_class(quiet), **common,
            )
        finally:
            stop_progress()


def download_json(model: str, revision: str | None = None, token: str | None = None, quiet: bool = False) -> str:
    """Download only the repo's `*.json` files (config.json, the index, hf_quant_config.json, ...) into the Hugging
    Face cache and return the snapshot folder: what vLLM's own config code reads (crosscheck), no weight at all."""
    ref = parse_repo_ref(model, revision)
    if ref is None:
        raise InputError(f"{printable(model)}: not a Hugging Face repo id (org/name or org/name@revision)")
    if offline_mode():
        return _require_snapshot(ref, hub_cache_dir())
    from huggingface_hub import snapshot_download

    from fp8check.core.progress import rich_tqdm_class, stop_progress

    fetcher = _Fetcher(ref, token)
    with _hub_errors(fetcher):
        info = fetcher.repo_info()
        _files_to_read(ref, info, mistral=False)  # a repo without config.json is refused here, as inspect refuses it
        try:
            return snapshot_download(
                repo_id=ref.repo_id, revision=info.commit, allow_patterns=["*.json"], cache_dir=hub_cache_dir(),
                endpoint=fetcher.endpoint, token=token, library_name="fp8check", library_version=__version__,
                tqdm_class=rich_tqdm_class(quiet))
        finally:
            stop_progress()


class TensorFilter(Protocol):
    """Which tensors a download needs: a compiled --layers regex, or _ExactNames."""

    @property
    def pattern(self) -> str: ...
    def search(self, name: str) -> object: ...


class _ExactNames(NamedTuple):
    """A stand-in for a compiled regex that matches exactly these tensor names."""

    names: frozenset[str]
    pattern: str = "the selected modules' tensors"

    def search(self, name: str) -> bool:
        return name in self.names


def _cached_shards(ref: RepoRef, pattern: TensorFilter | None) -> str:
    cache = hub_cache_dir()
    snapshot = _require_snapshot(ref, cache)
    names = os.listdir(snapshot)
    index_name, shards = safetensors_files(ref.display, names)
    if index_name:
        weight_map = parse_index(load_json(os.path.join(snapshot, index_name), index_name), index_name)
        shards = sorted({s for t, s in weight_map.items() if pattern is None or pattern.search(t)})
        if not shards and pattern is not None:
            raise InputError(f"{ref.display}: layers regex '{printable(pattern.pattern)}' matches no tensor")
    for shard in shards:
        if not os.path.exists(os.path.join(snapshot, shard)):
            raise InputError(_partial_snapshot(ref, snapshot, shard))
    return snapshot
