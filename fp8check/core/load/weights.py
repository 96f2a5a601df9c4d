"""Streaming one vLLM module's tensors out of safetensors, and checking their values (torch: `load` only).

Every tensor is read through `safe_open(...).get_slice` (memory-mapped), so a rank under `--tp` reads only its
slice and a module costs only its own bytes; nothing is kept after the module is done. Value checks scan the raw
bytes, because casts hide what is wrong: e4m3fn casts saturate (+inf -> 448) and fp8 has no `amax` on CPU.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import torch

from fp8check.core.errors import CheckpointFileError, printable
from fp8check.core.model.modules import LinearModule
from fp8check.core.model.sharding import WEIGHT_SCALES, RankReads, TensorRead

TORCH_DTYPES = {
    "F8_E4M3": torch.float8_e4m3fn, "F8_E5M2": torch.float8_e5m2, "F8_E4M3FNUZ": torch.float8_e4m3fnuz,
    "F8_E5M2FNUZ": torch.float8_e5m2fnuz, "F8_E8M0": torch.float8_e8m0fnu, "BF16": torch.bfloat16,
    "F16": torch.float16, "F32": torch.float32, "F64": torch.float64, "U8": torch.uint8,
}


class ShardTensors(NamedTuple):
    """One checkpoint linear as read: its weight, weight scale, static input scale and bias (None when absent)."""

    name: str
    weight: torch.Tensor
    scale: torch.Tensor | None
    input_scale: torch.Tensor | None
    bias: torch.Tensor | None = None
    scale_suffix: str = "weight_scale"  # as the checkpoint names it: native fp8 stores `weight_scale_inv`


class CheckpointFiles:
    """Open safetensors handles of one checkpoint folder, one per shard file, for one module at a time.

    safetensors maps the file and hands out tensors over the mapping: the pages a module touches stay resident
    (and count in RSS) for as long as the mapping lives. `release()` between modules drops the handles, so the
    mapping goes with the module's last tensor and the peak stays one module, not the whole file.
    """

    def __init__(self, folder: str):
        self.folder = folder
        self._handles: dict[str, object] = {}
        self.bytes_read = 0

    def release(self) -> None:
        self._handles.clear()

    def read(self, request: TensorRead) -> torch.Tensor:
        from safetensors import safe_open

        info = request.tensor
        handle = self._handles.get(info.file)
        if handle is None:
            path = os.path.join(self.folder, info.file)
            try:
                handle = self._handles[info.file] = safe_open(path, framework="pt", device="cpu")
            except Exception as exc:  # safetensors raises its own error types for truncated or foreign files
                raise CheckpointFileError(info.file, f"cannot open with safetensors: {printable(str(exc), 300)}") from None
        try:
            if request.rows is None and request.cols is None:
                tensor = handle.get_tensor(info.name)
            else:
                tensor = handle.get_slice(info.name)[request.index]
        except Exception as exc:
            raise CheckpointFileError(info.file, f"tensor {printable(info.name)!r} cannot be read: "
                                                 f"{printable(str(exc), 300)}") from None
        self.bytes_read += tensor.numel() * tensor.element_size()
        return tensor


def read_shards(module: LinearModule, files: CheckpointFiles) -> tuple[ShardTensors, ...]:
    """The module's checkpoint shards, whole, in vLLM's fusion order (q, k, v / gate, up)."""
    return tuple(_shard_tensors(shard.name, files, TensorRead(shard.weight),
                                {suffix: TensorRead(info) for suffix, info in shard.side.items()})
                 for shard in module.shards)


def read_rank_shards(reads: RankReads, files: CheckpointFiles) -> tuple[ShardTensors, ...]:
    """One TP rank's parts, each cut as vLLM's weight loader cuts it (a tensor fused on disk, such as Phi-3's
    qkv_proj, gives one part per logical shard, each its own row range)."""
    return tuple(_shard_tensors(part.weight.tensor.name.removesuffix(".weight"), files, part.weight, part.side)
                 for part in reads.shards)


def _shard_tensors(name: str, files: CheckpointFiles, weight: TensorRead, side: dict[str, TensorRead]) -> ShardTensors:
    def get(suffix: str) -> torch.Tensor | None:
        return files.read(side[suffix]) if suffix in side else None

    scale = next((s for s in WEIGHT_SCALES if s in side), None)
    return ShardTensors(name, files.read(weight), get(scale) if scale else None, get("input_scale"), get("bias"),
                        scale or "weight_scale")


# ----------------------------------------------------------------------------------------------- value checks

def _count(mask: torch.Tensor) -> int:
    return int(torch.count_nonzero(mask))


def fp8_code_problems(weight: torch.Tensor) -> tuple[int, bool]:
    """(NaN codes, all zero) from the raw bytes: e4m3fn NaN is b & 0x7F == 0x7F, fnuz NaN is 0x80, e5m2 NaN (and
    inf, which a weight should never hold either) is b & 0x7F >= 0x7C; zero is 0x00 and 0x80 (-0)."""
    import numpy as np

    raw = weight.contiguous().view(torch.uint8).numpy().reshape(-1)
    if weight.dtype in (torch.float8_e4m3fnuz, torch.float8_e5m2fnuz):
        return int(np.count_nonzero(raw == 0x80)), not np.count_nonzero(raw)
    if weight.dtype == torch.float8_e5m2:
        nans = int(np.count_nonzero((raw & 0x7F) >= 0x7C))
    else:  # one comparison per NaN code: numpy's byte compares are ~4x faster than a histogram of the bytes
        nans = int(np.count_nonzero(raw == 0x7F) + np.count_nonzero(raw == 0xFF))
    zeros = int(np.count_nonzero(raw == 0x00) + np.count_nonzero(raw == 0x80))
    return nans, zeros == raw.size


def value_errors(shards: tuple[ShardTensors, ...]) -> list[str]:
    """Every problem a module's values have, each naming the tensor and how many elements are affected."""
    errors = []
    for shard in shards:
        weight = shard.weight
        if weight.dtype in (torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.float8_e5m2, torch.float8_e5m2fnuz):
            nans, all_zero = fp8_code_problems(weight)
            if nans:
                errors.append(f"{shard.name}.weight: {nans} of {weight.numel()} FP8 bytes encode NaN "
                              f"({weight.dtype}); re-export this tensor")
        else:
            nonfinite = _count(~torch.isfinite(weight))
            if nonfinite:
                errors.append(f"{shard.name}.weight: {nonfinite:,} of {weight.numel():,} values are NaN or infinite")
            all_zero = not bool(weight.any())
        if all_zero:
            errors.append(f"{shard.name}.weight: all {weight.numel():,} elements are zero (an empty export?)")
        for suffix, scale in ((shard.scale_suffix, shard.scale), ("input_scale", shard.input_scale)):
            if scale is not None:
                errors += scale_errors(f"{shard.name}.{suffix}", scale)
        if shard.bias is not None:
            nonfinite = _count(~torch.isfinite(shard.bias.float()))
            if nonfinite:
                errors.append(f"{shard.name}.bias: {nonfinite} of {shard.bias.numel()} values are NaN or infinite")
    return errors


def scale_errors(name: str, scale: torch.Tensor) -> list[str]:
    """Scales must be finite and > 0: a zero scale zeroes its block, an infinite or NaN one poisons the output."""
    if scale.dtype in (torch.float8_e8m0fnu, torch.uint8):  # E8M0 (MXFP8 stores it as uint8): 0xFF is NaN
        nans = _count(scale.view(torch.uint8) == 0xFF)
        return [f"{name}: {nans} of {scale.numel()} E8M0 scale bytes are 0xFF (NaN)"] if nans else []
    values = scale.float()
    errors = []
    nonfinite = _count(~torch.isfinite(values))
    if nonfinite:
        errors.append(f"{name}: {nonfinite} of {values.numel()} scales are NaN or infinite")
    nonpositive = _count(values <= 0)
    if nonpositive:
        errors.append(f"{name}: {nonpositive} of {values.numel()} scales are zero or negative (must be > 0)")
    return errors
