"""Benchmark: header-only `inspect` of a Hub repo, against a fake Hub on loopback (tests/fakehub.py).

The repo is a Qwen3-32B-shaped block-FP8 checkpoint (7 shards, 64 layers, ~33 GB apparent) whose data
regions are sparse holes: no disk, and the fake hub serves ranges by seek + read, never whole files.
fp8check.core.checkpoint.hub.open_remote reads config.json, the index and every shard header; the script prints the
requests, bytes and sequential round-trip stages it took, against the sum of the header sizes and the total
file size, and the same figures for huggingface_hub's own get_safetensors_metadata (headers only, no config)
as a reference. With --rtt-ms each answer is delayed, to show what the stages cost on a real network.

    python bench/remote_inspect.py [--runs 5] [--rtt-ms 50]
"""

from __future__ import annotations

import os
import sys

# bench/inspect.py would shadow the stdlib's `inspect` for scripts run from bench/.
HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0]) == HERE:
    sys.path.pop(0)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests"))  # tests/fakehub.py

import argparse
import statistics
import tempfile
import time

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")  # read by huggingface_hub at import

from fakehub import FakeHub  # noqa: E402

from fp8check.core.checkpoint import hub  # noqa: E402
from fp8check.core.checkpoint.local import INDEX_FILE  # noqa: E402
from fp8check.synth import Spec, write_checkpoint  # noqa: E402

QWEN3_32B = Spec(quant="ct-fp8-block", architecture="Qwen3ForCausalLM", model_type="qwen3", hidden=5120,
                 intermediate=25600, layers=64, heads=64, kv_heads=8, head_dim=128, vocab=151936, shards=7,
                 data="sparse")
REPO = "bench-org/Qwen3-32B-FP8-block"


def header_bytes(path: str) -> int:
    with open(path, "rb") as fh:
        return 8 + int.from_bytes(fh.read(8), "little")


def run_ours(server: FakeHub) -> tuple[float, object]:
    server.reset_stats()
    start = time.perf_counter()
    ckpt = hub.open_remote(hub.RepoRef(REPO))
    return time.perf_counter() - start, ckpt


def run_hf(server: FakeHub) -> tuple[float, object]:
    from huggingface_hub import HfApi
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()
    server.reset_stats()
    start = time.perf_counter()
    meta = HfApi(endpoint=server.url).get_safetensors_metadata(REPO)
    return time.perf_counter() - start, meta


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rtt-ms", type=float, default=50.0, help="delay per answer for the timed runs")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HF_HOME"] = os.path.join(tmp, "hf")
        os.environ["HF_HUB_CACHE"] = os.path.join(tmp, "hf", "hub")
        folder = write_checkpoint(os.path.join(tmp, "qwen3-32b"), QWEN3_32B)
        shards = sorted(f for f in os.listdir(folder) if f.endswith(".safetensors"))
        total = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        headers = sum(header_bytes(os.path.join(folder, f)) for f in shards)
        metadata = sum(os.path.getsize(os.path.join(folder, f)) for f in ("config.json", INDEX_FILE))
        with FakeHub() as server:
            os.environ["HF_ENDPOINT"] = server.url
            server.add_repo(REPO, folder)
            _, ckpt = run_ours(server)  # warm-up, and the counted run
            stats = ckpt.fetch
            assert stats.requests == server.requests and stats.bytes_read == server.bytes_served
            ranged = sum(1 for r in server.log if r.range)
            whole = [r.path for r in server.log if r.path.endswith(".safetensors") and not r.range]
            assert not whole, whole
            _, _ = run_hf(server)
            hf_requests, hf_bytes = server.requests, server.bytes_served
            server.delay_s = args.rtt_ms / 1000
            ours = [run_ours(server)[0] for _ in range(args.runs)]
            theirs = [run_hf(server)[0] for _ in range(args.runs)]

    n = len(shards)
    print(f"repo: Qwen3-32B-shaped block FP8, {n} shards, {len(ckpt.tensors)} tensors, {total / 1e9:.1f} GB of files")
    print(f"shard headers: {headers:,} bytes in all ({headers / n / 1e3:.1f} KB per shard); "
          f"config.json + index: {metadata:,} bytes")
    print(f"fp8check hub.open_remote: {stats.requests} requests ({ranged} ranged), {stats.bytes_read:,} bytes read, "
          f"{stats.stages} sequential round-trip stages")
    print(f"  = {stats.bytes_read / headers:.2f}x the header bytes, {stats.bytes_read / total * 100:.4f}% of the "
          f"files; budget: <= {2 * n + 6} requests, < 1,000,000 bytes, headers in one parallel stage")
    print(f"huggingface_hub get_safetensors_metadata (reference, no config.json): {hf_requests} requests, "
          f"{hf_bytes:,} bytes")
    print(f"with {args.rtt_ms:.0f} ms per answer, median of {args.runs}: fp8check "
          f"{statistics.median(ours) * 1000:.0f} ms, get_safetensors_metadata {statistics.median(theirs) * 1000:.0f} ms")
    ok = stats.requests <= 2 * n + 6 and stats.bytes_read < 1_000_000 and stats.stages == 2
    print("targets met" if ok else "TARGETS MISSED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
