"""bench/gpu.py's load table, up to the GPU: page-cache residency and eviction, one `fp8check load` run measured
(here on the CPU, as the script's dry run does), the Qwen3-32B fit and the rendered verdicts."""

from __future__ import annotations

import importlib.util
import os

import pytest

from fp8check.core.checkpoint.safetensors_header import read_header

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def gpu_bench():
    spec = importlib.util.spec_from_file_location("bench_gpu", os.path.join(ROOT, "bench", "gpu.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _filesystem(path: str) -> str:
    """The type of the filesystem holding `path` (the longest mount point above it)."""
    best, kind = "", ""
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields = line.split()
            mount, fstype = fields[4], fields[fields.index("-") + 1]
            if os.path.realpath(path).startswith(mount.rstrip("/") + "/") and len(mount) > len(best):
                best, kind = mount, fstype
    return kind


def test_a_read_file_is_resident_and_eviction_drops_it(gpu_bench, tmp_path):
    path = tmp_path / "blob.safetensors"
    path.write_bytes(os.urandom(4 << 20))
    os.sync()  # dirty pages cannot be dropped
    with open(path, "rb") as fh:
        fh.read()
    assert gpu_bench.resident_fraction(str(path)) == 1.0
    gpu_bench.evict(str(path))
    after = gpu_bench.resident_fraction(str(path))
    if _filesystem(str(tmp_path)) in ("tmpfs", "ramfs"):
        pytest.skip("a tmpfs file lives in the page cache: nothing to evict")
    assert after < 0.5
    gbps, cached = gpu_bench.cold_read_gbps([str(path)])
    assert gbps > 0 and cached < 0.5


def test_one_load_run_reports_bytes_seconds_and_what_ran(gpu_bench, make_checkpoint):
    folder = make_checkpoint(data="random")
    run = gpu_bench.load_run(folder, "cpu", "xpu", cold=True)
    assert run["ok"] and run["summary"]["FAIL"] == 0
    assert run["bytes"] > 0 and 0 < run["seconds"] < run["wall"]
    assert "emulated on cpu (block numerics" in run["execution"]


def test_a_failing_load_is_a_row_not_a_crash(gpu_bench, make_checkpoint):
    """A checkpoint whose scale is zero: `load` exits 1, and the table says FAIL with the summary, not a traceback."""
    folder = make_checkpoint(quant="ct-fp8-dynamic", data="random")
    path = os.path.join(folder, "model.safetensors")
    header = read_header(path)
    info = header.tensors["model.layers.0.mlp.down_proj.weight_scale"]
    with open(path, "r+b") as fh:
        fh.seek(header.data_start + info.start)
        fh.write(b"\x00\x00")  # the first bf16 scale: 0
    run = gpu_bench.load_run(folder, "cpu", "h100", cold=False)
    assert not run["ok"] and run["summary"]["FAIL"] >= 1
    rows = [dict(label="zero scale", gb=0.1, disk=1.0, disk_cached=0.0, cold=run, warm_wall=run["wall"],
                 warm_seconds=run["seconds"], warm_ok=run["ok"])]
    table = gpu_bench.load_markdown(rows, "cpu", None, 34.4)
    assert "| zero scale |" in table and "**FAIL** {" in table and '"FAIL": ' in table


def test_the_fit_over_the_scaling_pair(gpu_bench):
    def row(label, gb, seconds):
        return dict(label=label, gb=gb, cold=dict(seconds=seconds))

    rows = [row("(1)", 0.75, 9.0), row("small", 0.5, 2.0), row("large", 2.5, 6.0)]
    fixed, per_gb = gpu_bench.projection(rows, ("small", "large"), 34.4)
    assert (fixed, per_gb) == pytest.approx((1.0, 2.0))
    assert gpu_bench.projection(rows[:2], ("small", "large"), 34.4) is None
