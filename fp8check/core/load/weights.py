"""Streaming one vLLM module's tensors out of the safetensors files, and checking their values (torch: `load` only).

Every tensor is a view of the file's memory map (a column slice: safetensors' `get_slice`), so a rank under `--tp`
reads only its slice and a module costs only its own bytes, read once where the numerics first touch them; the next
module's pages are faulted in while the current one runs, and nothing is kept after a module is done. Value checks
scan the raw bytes, because casts hide what is wrong: e4m3fn casts saturate (+inf -> 448) and fp8 has no `amax` on
CPU.
"""

from __future__ import annotations

import ctypes
import errno
import math
import mmap
import os
import sys
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache
from typing import Any, NamedTuple

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


_PAGE = mmap.PAGESIZE
_POPULATE_READ = 22           # Linux's MADV_POPULATE_READ (5.14+): fault a range of a mapping in with one call
_PREFETCH_STEP = 16 << 20     # populate 16 MB per call


class _Mapping(NamedTuple):
    map: mmap.mmap
    data_start: int               # 8 + the header's length: where data_offsets count from
    size: int
    address: int                  # where the mapping starts in memory (for libc's madvise)


class CheckpointFiles:
    """The shard files of one checkpoint folder, each mapped once, read one module at a time.

    A whole tensor, or a range of its rows, is a view of the file's mapping at the offsets fp8check's own header
    parse found (no copy: the bytes are read where the kernels first touch them); any other slice (a TP rank's
    columns of a row-parallel layer) goes through safetensors' get_slice. The pages a module touched stay resident,
    and count in RSS, until `release()`, which drops them (MADV_DONTNEED: the file's clean pages are only unmapped;
    a later read maps them again), so the peak stays one module, not the file. `prefetch()` faults the next module's
    pages in on a background thread while the current one computes.
    """

    def __init__(self, folder: str):
        self.folder = folder
        self._handles: dict[str, Any] = {}  # safetensors' safe_open handles (untyped)
        self._maps: dict[str, _Mapping] = {}
        self._touched: list[tuple[mmap.mmap, int, int]] = []
        self.bytes_read = 0

    def release(self) -> None:
        for mapped, offset, count in self._touched:
            start = offset - offset % _PAGE
            mapped.madvise(mmap.MADV_DONTNEED, start, offset + count - start)
        self._touched.clear()
        self._handles.clear()

    def prefetch(self, requests: Iterable[TensorRead]) -> Future | None:
        """Fault in the pages `requests` will read, on one background thread (a hint: where the kernel does not
        have MADV_POPULATE_READ, the pages fault in when first touched, as without it); the thread's future."""
        if not _populate_works:
            return None
        ranges = []
        for request in requests:
            try:
                span = self._span(request)
            except CheckpointFileError:  # the module's own read reports it, in its place
                continue
            if span is not None:
                ranges.append(span)
        return _prefetcher().submit(_populate, [(self._maps[f].address, offset, count) for f, offset, count in ranges])

    def read(self, request: TensorRead) -> torch.Tensor:
        span = self._span(request)
        tensor = self._view(request, span) if span is not None else self._read_slice(request)
        self.bytes_read += tensor.numel() * tensor.element_size()
        return tensor

    def _span(self, request: TensorRead) -> tuple[str, int, int] | None:
        """(file, byte offset, byte count) of a whole tensor or a row range; None for a column slice, a dtype
        torch cannot view, or an empty range (those go through safetensors)."""
        info = request.tensor
        dtype = TORCH_DTYPES.get(info.dtype)
        if dtype is None or request.cols is not None:
            return None
        mapping = self._mapping(info.file)
        rows = request.rows or (0, info.shape[0] if info.shape else 1)
        row_bytes = math.prod(info.shape[1:]) * dtype.itemsize
        offset, count = mapping.data_start + info.start + rows[0] * row_bytes, (rows[1] - rows[0]) * row_bytes
        if not count:
            return None
        if offset + count > mapping.size:
            raise CheckpointFileError(info.file, f"tensor {printable(info.name)!r} lies past the end of the file "
                                                 f"({mapping.size:,} bytes): truncated or rewritten since it was "
                                                 "inspected")
        return info.file, offset, count

    def _view(self, request: TensorRead, span: tuple[str, int, int]) -> torch.Tensor:
        file, offset, count = span
        mapped = self._maps[file].map
        dtype = TORCH_DTYPES[request.tensor.dtype]
        self._touched.append((mapped, offset, count))
        return torch.frombuffer(mapped, dtype=dtype, count=count // dtype.itemsize, offset=offset).view(request.shape)

    def _mapping(self, file: str) -> _Mapping:
        mapping = self._maps.get(file)
        if mapping is None:
            try:
                with open(os.path.join(self.folder, file), "rb") as fh:
                    head, size = fh.read(8), os.fstat(fh.fileno()).st_size
                    mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY)
            except (OSError, ValueError) as exc:
                raise CheckpointFileError(file, f"cannot be mapped: {printable(str(exc), 300)}") from None
            if len(head) < 8:
                raise CheckpointFileError(file, "shorter than a safetensors header")
            address = ctypes.addressof(ctypes.c_char.from_buffer(mapped))  # the export ends with the c_char
            mapping = self._maps[file] = _Mapping(mapped, 8 + int.from_bytes(head, "little"), size, address)
        return mapping

    def _read_slice(self, request: TensorRead) -> torch.Tensor:
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
                return handle.get_tensor(info.name)
            return handle.get_slice(info.name)[request.slices]
        except Exception as exc:
            raise CheckpointFileError(info.file, f"tensor {printable(info.name)!r} cannot be read: "
                                                 f"{printable(str(exc), 300)}") from None


_populate_works = sys.platform.startswith("linux")


@lru_cache(maxsize=1)
def _prefetcher() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(1, thread_name_prefix="fp8check-prefetch")


@lru_cache(maxsize=1)
def _madvise():
    """libc's madvise through ctypes, which lets go of the GIL during the call (mmap.madvise holds it, so the
    prefetch thread would stall the thread doing the numerics)."""
    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes, madvise.restype = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int), ctypes.c_int
    return madvise


def _populate(ranges: list[tuple[int, int, int]]) -> None:
    """MADV_POPULATE_READ over each (mapping address, offset, byte count). EINVAL (a kernel before 5.14) turns
    prefetching off: the pages then fault in where they are first touched."""
    global _populate_works
    madvise = _madvise()
    for address, offset, count in ranges:
        for start in range(offset - offset % _PAGE, offset + count, _PREFETCH_STEP):
            if madvise(address + start, min(_PREFETCH_STEP, offset + count - start), _POPULATE_READ) != 0:
                _populate_works = ctypes.get_errno() != errno.EINVAL  # else: a mapping already gone (ENOMEM)
                return


def module_reads(module: LinearModule) -> list[TensorRead]:
    """Every tensor read_shards reads for `module`."""
    return [TensorRead(t) for shard in module.shards for t in (shard.weight, *shard.side.values())]


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


def _fp8_codes_plain(weight: torch.Tensor) -> bool:
    """True when an e4m3fn / e5m2 weight surely holds no NaN (or inf) code and is not all zero, from two maxima over
    its bytes (~20x faster than counting): as int8, codes 0x01..0x7F are the positive ones and 0x7F (e4m3fn NaN) or
    >= 0x7C (e5m2 NaN / inf) the largest; as uint8, 0x81..0xFF the negative ones and 0xFF / >= 0xFC the largest.
    Only 0x00 and 0x80 are neither positive nor above 0x80."""
    raw = weight.view(torch.uint8)
    positive, unsigned = int(raw.view(torch.int8).amax()), int(raw.amax())
    special = 0x7F if weight.dtype == torch.float8_e4m3fn else 0x7C
    return positive < special and unsigned < 0x80 + special and (positive > 0 or unsigned > 0x80)


def fp8_code_problems(weight: torch.Tensor) -> tuple[int, bool]:
    """(NaN codes, all zero) from the raw bytes: e4m3fn NaN is b & 0x7F == 0x7F, fnuz NaN is 0x80, e5m2 NaN (and
    inf, which a weight should never hold either) is b & 0x7F >= 0x7C; zero is 0x00 and 0x80 (-0)."""
    import numpy as np

    weight = weight.contiguous()
    if weight.dtype in (torch.float8_e4m3fn, torch.float8_e5m2) and weight.numel() and _fp8_codes_plain(weight):
        return 0, False
    raw = weight.view(torch.uint8).numpy().reshape(-1)
    if weight.dtype in (torch.float8_e4m3fnuz, torch.float8_e5m2fnuz):
        return int(np.count_nonzero(raw == 0x80)), not np.count_nonzero(raw)
    if weight.dtype == torch.float8_e5m2:
        nans = int(np.count_nonzero((raw & 0x7F) >= 0x7C))
    else:  # one comparison per NaN code: numpy's byte compares are ~4x faster than a histogram of the bytes
        nans = int(np.count_nonzero(raw == 0x7F) + np.count_nonzero(raw == 0xFF))
    zeros = int(np.count_nonzero(raw == 0x00) + np.count_nonzero(raw == 0x80))
    return nans, zeros == raw.size


def float_problems(weight: torch.Tensor) -> tuple[int, bool]:
    """(NaN or infinite values, all zero) of a float tensor. One aminmax pass answers both for a clean tensor (NaN
    propagates into it, an infinity is its min or max, all zero is min == max == 0; ~50x faster than isfinite on
    bf16); only a tensor it flags is counted."""
    if not weight.numel():
        return 0, True
    low, high = (float(v) for v in torch.aminmax(weight))
    if math.isfinite(low) and math.isfinite(high):
        return 0, low == high == 0.0
    return _count(~torch.isfinite(weight)), not bool(weight.any())


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
            nonfinite, all_zero = float_problems(weight)
            if nonfinite:
                errors.append(f"{shard.name}.weight: {nonfinite:,} of {weight.numel():,} values are NaN or infinite")
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
