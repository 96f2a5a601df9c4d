"""load --tp / --ep keeps CheckpointFiles' one-module contract on every rank: while a FusedMoE expert is read, no
file holding another expert's tensors is still open (mapped) in the same CheckpointFiles.

Each tensor of the checkpoint is its own safetensors file, so a file left open names the expert it belongs to.
The ranks are real (spawned); each records, before every read, which files its CheckpointFiles hold open."""

from __future__ import annotations

import json
import os
import re

import pytest

torch = pytest.importorskip("torch")

from test_load_moe import EXPERTS, QWEN3_MOE, load  # noqa: E402

from fp8check.core.checkpoint.safetensors_header import read_header  # noqa: E402
from fp8check.core.load import ranks  # noqa: E402

NAN_E4M3 = b"\x7f"


def _recording(ctx, args):
    """A rank's target, wrapped: log (CheckpointFiles instance, tensor read, files then open) to `log_dir`."""
    target, payload, log_dir = args
    from fp8check.core.load import weights

    log = []
    original = weights.CheckpointFiles.read

    def read(self, request):
        log.append((id(self), request.tensor.name, sorted(self._handles)))
        return original(self, request)

    weights.CheckpointFiles.read = read
    try:
        return target(ctx, payload)
    finally:
        weights.CheckpointFiles.read = original
        with open(os.path.join(log_dir, f"rank{ctx.rank}.json"), "w") as fh:
            json.dump(log, fh)


def _expert(tensor: str) -> tuple[str, int] | None:
    match = re.search(r"^(.*\.experts)\.(\d+)\.", tensor)
    return (match.group(1), int(match.group(2))) if match else None


def _one_file_per_tensor(make_checkpoint, **spec) -> tuple[str, dict[str, str]]:
    count = len(read_header(os.path.join(make_checkpoint(**spec), "model.safetensors")).tensors)
    folder = make_checkpoint(**spec, shards=count)
    with open(os.path.join(folder, "model.safetensors.index.json")) as fh:
        weight_map = json.load(fh)["weight_map"]
    assert len(set(weight_map.values())) == len(weight_map)
    return folder, weight_map


def _spoil(folder: str, weight_map: dict[str, str], tensor: str) -> None:
    """One NaN byte at the start of `tensor` (the rows TP rank 0 reads)."""
    path = os.path.join(folder, weight_map[tensor])
    header = read_header(path)
    with open(path, "r+b") as fh:
        fh.seek(header.data_start + header.tensors[tensor].start)
        fh.write(NAN_E4M3)


@pytest.mark.parametrize("ep, all_experts, spoiled", [
    (False, False, "model.layers.0.mlp.experts.0.gate_proj.weight"),  # rank 1; rank 0 after a failed expert
    (True, True, None),                                                # each rank owns two experts of four
], ids=["tp-failed-expert", "ep"])
def test_no_rank_keeps_an_earlier_experts_files_open(make_checkpoint, monkeypatch, tmp_path, ep, all_experts,
                                                     spoiled):
    folder, weight_map = _one_file_per_tensor(make_checkpoint, **{**QWEN3_MOE, "quant": "fp8-block"})
    if spoiled:
        _spoil(folder, weight_map, spoiled)
    owners = {}
    for tensor, file in weight_map.items():
        owners[file] = _expert(tensor)
    real = ranks.run_ranks
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    monkeypatch.setattr(ranks, "run_ranks", lambda world_size, target, payload, **kw: real(
        world_size, _recording, (target, payload, str(log_dir)), **kw))
    report = load(folder, "mi300x", tp=2, ep=ep, layers=EXPERTS, all_experts=all_experts)
    assert len(report.moe_runs) == 2 and (report.ok if not spoiled else not report.ok)
    for rank in (0, 1):
        with open(log_dir / f"rank{rank}.json") as fh:
            log = json.load(fh)
        assert any(_expert(tensor) for _, tensor, _ in log)
        left_open = sorted({(rank, tensor, file) for _, tensor, files in log if _expert(tensor)
                            for file in files if owners[file] and owners[file] != _expert(tensor)})
        assert not left_open, f"rank {rank} read an expert while another's file was open: {left_open[:3]}"
