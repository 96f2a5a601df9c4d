"""A fake Hugging Face Hub on 127.0.0.1 for tests and bench/remote_inspect.py (stdlib only).

It serves local folders (written with fp8check.synth.write_checkpoint) as model repos, with the endpoints and
headers huggingface_hub 2.4.0 relies on (shared/formats.md §6):

    GET       /api/models/{repo}[/revision/{rev}]              sha + siblings
    GET       /api/models/{repo}/tree/{rev}[/{path}]           recursive listing with sizes and LFS oids
    HEAD/GET  /{repo}/resolve/{rev}/{path}                     X-Repo-Commit, ETag, Content-Length,
                                                               Accept-Ranges; Range -> 206 + Content-Range
    404 + X-Error-Code RepoNotFound / RevisionNotFound / EntryNotFound; HEAD errors carry no body.

Private repos answer 401/404 RepoNotFound without the right token; gated repos list freely but resolve
answers 401 (no token) or 403 (wrong token) with X-Error-Code GatedRepo. Ranges are served by seek + read
of just that range, so sparse 30 GB files cost nothing. Every request and every body byte is counted, and
faults can be injected: an HTTP status (500, 401, 404, ...), a connection dropped mid-body, or a Range
header ignored, N times.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".pkl")
HASH_LIMIT = 64 << 20  # real sha256 etags up to 64 MB; bigger (sparse) files get a stable stand-in
CHUNK = 1 << 16


@dataclass
class FakeRepo:
    repo_id: str
    refs: dict[str, str] = field(default_factory=dict)                 # branch/tag -> commit
    commits: dict[str, dict[str, str]] = field(default_factory=dict)   # commit -> {path in repo: local file}
    private: bool = False
    gated: bool = False
    token: str | None = None


@dataclass
class Fault:
    kind: str                  # "status", "drop" or "ignore_range"
    path_contains: str
    method: str | None
    times: int
    status: int = 500
    headers: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    range: str | None
    status: int
    body_bytes: int
    authorized: bool


class FakeHub:
    """with FakeHub() as hub: commit = hub.add_repo("org/x", folder); os.environ["HF_ENDPOINT"] = hub.url"""

    def __init__(self) -> None:
        self.repos: dict[str, FakeRepo] = {}
        self.faults: list[Fault] = []
        self._log: list[Request] = []
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._in_flight = 0
        self._etags: dict[tuple, str] = {}
        self._counter = itertools.count()
        self.delay_s = 0.0  # added to every answer, to model a network round trip
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- setup

    def start(self) -> FakeHub:
        handler = type("Handler", (_Handler,), {"hub": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the hub first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add_repo(self, repo_id: str, folder: str, *, revision: str = "main", private: bool = False,
                 gated: bool = False, token: str | None = None) -> str:
        """Publish every file under `folder` as a new commit of `repo_id`, pointed to by `revision`."""
        repo = self.repos.setdefault(repo_id, FakeRepo(repo_id))
        repo.private, repo.gated, repo.token = private or repo.private, gated or repo.gated, token or repo.token
        files = {}
        for root, _, names in os.walk(folder):
            for name in names:
                full = os.path.join(root, name)
                files[os.path.relpath(full, folder).replace(os.sep, "/")] = full
        seed = f"{repo_id}:{revision}:{next(self._counter)}:{sorted(files)}"
        commit = hashlib.sha1(seed.encode()).hexdigest()
        repo.commits[commit] = files
        repo.refs[revision] = commit
        return commit

    def add_ref(self, repo_id: str, name: str, commit: str) -> None:
        self.repos[repo_id].refs[name] = commit

    def fail(self, kind: str, path_contains: str = "", *, method: str | None = "GET", times: int = 1,
             status: int = 500, headers: dict | None = None) -> None:
        """Inject a fault for the next `times` matching requests: kind "status" (answer `status`), "drop"
        (send the headers and half the body, then close the connection) or "ignore_range" (answer 200 with the
        whole file, as a server without range support would)."""
        assert kind in ("status", "drop", "ignore_range")
        self.faults.append(Fault(kind, path_contains, method, times, status, dict(headers or {})))

    # ---- counters

    @property
    def log(self) -> list[Request]:
        """Every request answered so far (waits for answers still being written: a client can see the last
        byte before the server thread has logged it)."""
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=5)
            return list(self._log)

    @property
    def requests(self) -> int:
        return len(self.log)

    @property
    def bytes_served(self) -> int:
        return sum(r.body_bytes for r in self.log)

    def reset_stats(self) -> None:
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=5)
            self._log.clear()

    def _begin(self) -> None:
        with self._lock:
            self._in_flight += 1

    def _record(self, request: Request) -> None:
        with self._idle:
            self._log.append(request)
            self._in_flight -= 1
            self._idle.notify_all()

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times > 0 and fault.path_contains in path and fault.method in (None, method):
                    fault.times -= 1
                    return fault
        return None

    def etag(self, path: str) -> str:
        st = os.stat(path)
        key = (path, st.st_size, st.st_mtime_ns)
        with self._lock:
            if key in self._etags:
                return self._etags[key]
        if path.endswith(LFS_SUFFIXES):  # LFS files: sha256 of the content
            digest = hashlib.sha256()
            if st.st_size <= HASH_LIMIT:
                with open(path, "rb") as fh:
                    for chunk in iter(lambda: fh.read(CHUNK), b""):
                        digest.update(chunk)
            else:
                digest.update(repr(key).encode())
        else:  # git files: git blob sha1
            digest = hashlib.sha1(b"blob %d\0" % st.st_size)
            with open(path, "rb") as fh:
                digest.update(fh.read())
        etag = digest.hexdigest()
        with self._lock:
            self._etags[key] = etag
        return etag


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes; no 40 ms delayed-ACK stalls
    hub: FakeHub

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_GET(self) -> None:
        self._dispatch("GET")

    # ---- plumbing

    def _dispatch(self, method: str) -> None:
        self._method = method
        self._sent = 0
        self._status = 0
        split = urlsplit(self.path)
        self._query = parse_qs(split.query)
        raw = split.path
        self.hub._begin()
        try:
            if self.hub.delay_s:
                time.sleep(self.hub.delay_s)
            fault = self.hub._take_fault(method, raw)
            if fault is not None and fault.kind == "status":
                self._error(fault.status, fault.headers.get("X-Error-Code"), "injected fault", fault.headers)
            else:
                self._route(raw, fault.kind if fault else None)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            self.hub._record(Request(method, raw, self.headers.get("Range"), self._status, self._sent,
                                     self.headers.get("Authorization") is not None))

    def _route(self, raw: str, fault: str | None) -> None:
        parts = raw.split("/")[1:]
        if len(parts) >= 4 and parts[:2] == ["api", "models"]:
            repo_id = f"{unquote(parts[2])}/{unquote(parts[3])}"
            rest = parts[4:]
            if rest[:1] == ["tree"] and len(rest) >= 2 and self._method == "GET":
                return self._tree(repo_id, unquote(rest[1]), unquote("/".join(rest[2:])))
            if not rest or (rest[0] == "revision" and len(rest) == 2):
                return self._info(repo_id, unquote(rest[1]) if rest else "main")
        if len(parts) >= 5 and parts[2] == "resolve":
            repo_id = f"{unquote(parts[0])}/{unquote(parts[1])}"
            return self._resolve(repo_id, unquote(parts[3]), unquote("/".join(parts[4:])), fault)
        self._error(404, None, "Not Found")

    def _error(self, status: int, code: str | None, message: str, extra: dict | None = None) -> None:
        body = b"" if self._method == "HEAD" else json.dumps({"error": message}).encode()
        headers = {"Content-Type": "application/json"}
        if code:
            headers["X-Error-Code"] = code
        headers["X-Error-Message"] = message
        headers.update({k: v for k, v in (extra or {}).items() if k != "X-Error-Code"})
        self._send(status, headers, body)

    def _send(self, status: int, headers: dict, body: bytes = b"", length: int | None = None) -> None:
        self._status = status
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, str(value))
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        if self._method != "HEAD" and body:
            self.wfile.write(body)
            self._sent += len(body)

    def _json(self, doc: object) -> None:
        self._send(200, {"Content-Type": "application/json"}, json.dumps(doc).encode())

    # ---- access control

    def _token(self) -> str | None:
        auth = self.headers.get("Authorization") or ""
        return auth[7:] if auth.startswith("Bearer ") else None

    def _repo(self, repo_id: str, file_access: bool) -> FakeRepo | None:
        repo = self.hub.repos.get(repo_id)
        token = self._token()
        if repo is None or (repo.private and token != repo.token):
            unauthenticated_private = repo is not None and token is None
            self._error(401 if unauthenticated_private else 404, "RepoNotFound", "Repository not found")
            return None
        if file_access and repo.gated and token != repo.token:
            if token is None:
                self._error(401, "GatedRepo", f"Access to model {repo_id} is restricted. You must have access to it "
                            "and be authenticated to access it. Please log in.")
            else:
                self._error(403, "GatedRepo", f"Access to model {repo_id} is restricted and you are not in the "
                            "authorized list.")
            return None
        return repo

    def _commit(self, repo: FakeRepo, revision: str) -> str | None:
        commit = repo.refs.get(revision) or (revision if revision in repo.commits else None)
        if commit is None:
            self._error(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        return commit

    # ---- endpoints

    def _info(self, repo_id: str, revision: str) -> None:
        repo = self._repo(repo_id, file_access=False)
        commit = repo and self._commit(repo, revision)
        if not commit:
            return
        files = repo.commits[commit]
        self._json({
            "_id": hashlib.sha1(repo_id.encode()).hexdigest()[:24], "id": repo_id, "modelId": repo_id,
            "author": repo_id.split("/")[0], "sha": commit, "lastModified": "2026-01-01T00:00:00.000Z",
            "private": repo.private, "gated": "manual" if repo.gated else False, "disabled": False,
            "downloads": 0, "likes": 0, "library_name": "transformers", "tags": ["safetensors"],
            "siblings": [{"rfilename": path} for path in sorted(files)],
        })

    def _tree(self, repo_id: str, revision: str, folder: str) -> None:
        repo = self._repo(repo_id, file_access=False)
        commit = repo and self._commit(repo, revision)
        if not commit:
            return
        recursive = self._query.get("recursive", ["false"])[0].lower() == "true"
        prefix = folder.strip("/") + "/" if folder.strip("/") else ""
        entries, folders = [], set()
        for path, full in sorted(repo.commits[commit].items()):
            if not path.startswith(prefix):
                continue
            rest = path[len(prefix):]
            if "/" in rest and not recursive:
                folders.add(prefix + rest.split("/")[0])
                continue
            size = os.path.getsize(full)
            entry = {"type": "file", "oid": hashlib.sha1(path.encode()).hexdigest(), "size": size, "path": path}
            if path.endswith(LFS_SUFFIXES):
                entry["lfs"] = {"oid": self.hub.etag(full), "size": size, "pointerSize": 134}
            else:
                entry["oid"] = self.hub.etag(full)
            entries.append(entry)
        entries += [{"type": "directory", "oid": hashlib.sha1(f.encode()).hexdigest(), "size": 0, "path": f}
                    for f in sorted(folders)]
        self._json(entries)

    def _resolve(self, repo_id: str, revision: str, path: str, fault: str | None) -> None:
        repo = self._repo(repo_id, file_access=True)
        commit = repo and self._commit(repo, revision)
        if not commit:
            return
        full = repo.commits[commit].get(path)
        if full is None:
            return self._error(404, "EntryNotFound", f"{path} does not exist on {revision}")
        size = os.path.getsize(full)
        headers = {"X-Repo-Commit": commit, "ETag": f'"{self.hub.etag(full)}"', "Accept-Ranges": "bytes",
                   "Content-Type": "application/octet-stream"}
        start, end = 0, size - 1
        status = 200
        wanted = self.headers.get("Range") if fault != "ignore_range" else None
        drop = fault == "drop"
        if wanted and self._method == "GET":
            match = re.fullmatch(r"bytes=(\d*)-(\d*)", wanted.strip())
            if not match or match.groups() == ("", ""):
                return self._error(416, None, "bad range", {"Content-Range": f"bytes */{size}"})
            first, last = match.groups()
            if first == "":  # suffix range: the last N bytes
                start, end = max(0, size - int(last)), size - 1
            else:
                start, end = int(first), min(int(last), size - 1) if last else size - 1
            if start >= size or start > end:
                return self._error(416, None, "range not satisfiable", {"Content-Range": f"bytes */{size}"})
            status = 206
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        length = end - start + 1
        self._send(status, headers, length=length)
        if self._method == "HEAD":
            return
        send = length // 2 if drop else length
        with open(full, "rb") as fh:
            fh.seek(start)
            remaining = send
            while remaining > 0:
                chunk = fh.read(min(CHUNK, remaining))
                if not chunk:
                    break
                self.wfile.write(chunk)
                self._sent += len(chunk)
                remaining -= len(chunk)
        if drop:  # promised `length` bytes, sent half: the client sees the connection close mid-body
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
