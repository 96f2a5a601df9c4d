"""A bounded, validating reader of safetensors headers (8-byte little-endian length + JSON).

We parse the header ourselves instead of using `safetensors` so that inspect needs no torch and so that
every way a header can lie becomes a clear error naming the file and tensor, never a crash.
"""

from __future__ import annotations

import itertools
import json
import math
import operator
import os
import re
import stat
import struct
from typing import NamedTuple, Sequence, TypeGuard

from fp8check.core.errors import CheckpointFileError, is_printable, printable, shown

# huggingface_hub's get_safetensors_metadata refuses headers above 25 MB (safetensors itself: 100 MB). A real
# 600-tensor header is ~60 KB; parsing costs up to ~50x the header in memory, so the lower cap bounds us at ~1.3 GB.
MAX_HEADER_BYTES = 25_000_000
MAX_RANK = 8
U64_MAX = 2**64 - 1    # safetensors parses shapes and offsets as u64 and multiplies them with overflow checks
MAX_JSON_DEPTH = 127   # serde_json's nesting limit, which safetensors inherits

# Bits per element of every dtype string safetensors writes.
DTYPE_BITS: dict[str, int] = {
    "BOOL": 8, "U8": 8, "I8": 8, "U16": 16, "I16": 16, "U32": 32, "I32": 32, "U64": 64, "I64": 64,
    "F16": 16, "BF16": 16, "F32": 32, "F64": 64,
    "F8_E4M3": 8, "F8_E5M2": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "F8_E8M0": 8,
    "F6_E2M3": 6, "F6_E3M2": 6, "F4": 4, "C64": 64,
}
FP8_DTYPES = frozenset({"F8_E4M3", "F8_E5M2", "F8_E4M3FNUZ", "F8_E5M2FNUZ"})


class TensorInfo(NamedTuple):
    """One tensor as its header describes it; `file` is the shard's name inside the checkpoint."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    start: int
    end: int
    file: str

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


class SafetensorsHeader(NamedTuple):
    file: str
    header_len: int
    metadata: dict[str, str]
    tensors: dict[str, TensorInfo]

    @property
    def data_start(self) -> int:
        """Absolute file offset of the data region (tensor offsets are relative to it)."""
        return 8 + self.header_len


def header_length(prefix: bytes, file: str, file_size: int | None) -> int:
    """Decode and bound the 8-byte length prefix."""
    if len(prefix) < 8:
        raise CheckpointFileError(file, f"truncated safetensors file: {len(prefix)} bytes, the 8-byte header length is missing")
    (n,) = struct.unpack("<Q", prefix[:8])
    if n > MAX_HEADER_BYTES:
        raise CheckpointFileError(file, f"header length {n} exceeds the {MAX_HEADER_BYTES}-byte limit; not a valid safetensors file")
    if file_size is not None and 8 + n > file_size:
        raise CheckpointFileError(file, f"header length {n} is larger than the file ({file_size} bytes): truncated or not a safetensors file")
    return n


def _reject_duplicates(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"duplicate key {printable(key)!r}")
        obj[key] = value
    return obj


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")  # Python's json accepts NaN / Infinity; safetensors does not


def _parse_int(text: str):
    return -0.0 if text == "-0" else int(text)  # serde reads -0 as a float, which no shape or offset may be


def _check_values(container: dict | list, file: str, depth: int) -> None:
    """What serde_json refuses and Python's json accepts: nesting past its limit, lone surrogates (\\ud800).

    Only __metadata__ and entries off the fast path need it: a fast-path entry is 3 levels deep, its name
    printable (no lone surrogate is) and its dtype a known one.
    """
    stack = [(container, depth)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            raise CheckpointFileError(file, f"header nests deeper than {MAX_JSON_DEPTH} levels; not a valid safetensors header")
        for item in (*value.keys(), *value.values()) if isinstance(value, dict) else value:
            if isinstance(item, dict | list):
                stack.append((item, depth + 1))
            elif isinstance(item, str) and not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    raise CheckpointFileError(file, f"header holds a lone surrogate escape in {printable(item, 40)!r}; "
                                              "not valid UTF-8 JSON") from None


def parse_header(header: bytes, file: str, file_size: int | None) -> SafetensorsHeader:
    """Validate a header's JSON (`header` excludes the 8-byte prefix).

    With `file_size` known, offsets are checked against the data region; every check safetensors makes
    (known dtype, size = shape x dtype, contiguous offsets covering the data) is made here too. A plain header
    (what every real writer produces) passes the quick path, which makes the same checks in bulk; any other, and
    any the quick path cannot prove valid, takes the careful path, which names the first problem. Both accept
    exactly the same headers (tests/test_fast_paths.py compares them).
    """
    try:
        text = header.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CheckpointFileError(file, f"header is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    data_len = None if file_size is None else file_size - 8 - len(header)
    return _parse_plain(text, len(header), file, data_len) or _parse_careful(text, len(header), file, data_len)


class _NotPlain(Exception):
    """The quick path gives up: the careful path decides (and names the problem, if there is one)."""


# One plain entry as serde_json writes it: a name without escapes or control characters, then dtype, shape (positive
# dimensions) and data_offsets, in that order, compact; numbers as JSON writes them (no '-', '+', leading zero,
# fraction or exponent). Splitting a header on it leaves only the text between entries, which must be "," but
# for the opening (with __metadata__ first, as serde writes it) and the closing (padded with spaces). Groups: the
# name, the dtype and shape as one text (a checkpoint has a few dozen distinct ones), the two offsets.
_INT = r"(0|[1-9][0-9]*)"
_PLAIN_ENTRY = re.compile(r'"([^"\\\x00-\x1f\x7f]*)":\{"dtype":"([A-Z0-9_]+","shape":\[(?:[1-9][0-9]*(?:,[1-9][0-9]*)*)?)\],'
                          r'"data_offsets":\[' + _INT + "," + _INT + r"\]\}")
_KIND_SEPARATOR = '","shape":['  # between the dtype and the dimensions in a kind's text
_PLAIN_OPENING = re.compile(r'\{(?:"__metadata__":(null|\{[^{}]*\}),)?')
_PLAIN_CLOSING = re.compile(r"\} *")


def _parse_plain(text: str, header_len: int, file: str, data_len: int | None) -> SafetensorsHeader | None:
    """The quick path, or None when the header is not plain enough to prove valid here.

    One regex split (in C, faster than json.loads here) proves the text is exactly `{`, optional string-to-string
    __metadata__, then plain entries separated by ",", then `}`: that text is a JSON object whose values are
    what the groups say, with no bool, float, '-0', escape or control character anywhere but in the metadata
    (parsed on its own). Then, column by column: no name twice, each distinct dtype and shape ("kind") known and
    under 2^64 bits in whole bytes, every tensor's byte span that of its kind, and the tiling of the data region.
    """
    parts = _PLAIN_ENTRY.split(text)
    between = parts[0::5]
    opening = _PLAIN_OPENING.fullmatch(between[0])
    if opening is None or _PLAIN_CLOSING.fullmatch(between[-1]) is None \
            or between.count(",") != len(between) - 2:
        return None
    names, kinds = parts[1::5], parts[2::5]
    try:
        metadata = _plain_metadata(opening[1])
    except _NotPlain:
        return None
    if "__metadata__" in names or not (text.isascii() or all(map(str.isprintable, names))):
        return None  # an ASCII name here is printable: the regex admits no control character
    dtype_of, dims_of, bytes_of = {}, {}, {}
    for kind in set(kinds):
        dtype, _, dims_text = kind.partition(_KIND_SEPARATOR)
        dims = tuple(map(int, dims_text.split(","))) if dims_text else ()
        if dtype not in DTYPE_BITS or len(dims) > MAX_RANK:
            return None
        bits = math.prod(dims) * DTYPE_BITS[dtype]
        if bits > U64_MAX or bits % 8:
            return None
        dtype_of[kind], dims_of[kind], bytes_of[kind] = dtype, dims, bits // 8
    starts_text, ends_text = parts[3::5], parts[4::5]
    ends = list(map(int, ends_text))
    if starts_text[0] == "0" and starts_text[1:] == ends_text[:-1]:  # in offset order, each where the last ended
        starts = [0, *ends[:-1]]  # (numbers compare as their text: the regex admits one spelling per number)
    else:
        starts = list(map(int, starts_text))
    if list(map(bytes_of.__getitem__, kinds)) != list(map(operator.sub, ends, starts)) \
            or not _plain_tiling(starts, ends, data_len):
        return None
    tensors = dict(zip(names, map(tuple.__new__, itertools.repeat(TensorInfo),
                                  zip(names, map(dtype_of.__getitem__, kinds), map(dims_of.__getitem__, kinds),
                                      starts, ends, itertools.repeat(file)))))
    if len(tensors) != len(names):
        return None
    return SafetensorsHeader(file=file, header_len=header_len, metadata=metadata, tensors=tensors)


def _plain_metadata(text: str | None) -> dict[str, str]:
    """__metadata__ as the quick path accepts it: absent, null, or distinct ASCII string keys to ASCII strings."""
    if text is None or text == "null":
        return {}
    try:
        pairs = json.loads(text, object_pairs_hook=list)
    except ValueError:
        raise _NotPlain from None
    metadata = dict(pairs)
    if len(metadata) != len(pairs) or not all(type(k) is str and type(v) is str and k.isascii() and v.isascii()
                                              for k, v in pairs):
        raise _NotPlain
    return metadata


def _plain_tiling(starts: Sequence[int], ends: Sequence[int], data_len: int | None) -> bool:
    """_check_layout's rule in bulk: in offset order each tensor starts where the previous one ends, from 0 to
    the end of the data (within [0, 2^64) when the file size is unknown). Every tensor here is non-empty, so
    a header already in offset order (what writers produce) needs no sort."""
    if data_len is None:
        return min(starts) >= 0 and max(ends) <= U64_MAX
    if not (starts[0] == 0 and ends[-1] == data_len and starts[1:] == ends[:-1]):
        starts, ends = zip(*sorted(zip(starts, ends)))
    return starts[0] == 0 and ends[-1] == data_len and starts[1:] == ends[:-1]


def _parse_careful(text: str, header_len: int, file: str, data_len: int | None) -> SafetensorsHeader:
    """Every check, one entry at a time, raising on the first problem with a message naming it."""
    try:
        doc = json.loads(text, object_pairs_hook=_reject_duplicates, parse_constant=_reject_constant,
                         parse_int=_parse_int if "-0" in text else None)  # the hook costs; "-0" is rare
    except (ValueError, RecursionError) as exc:
        raise CheckpointFileError(file, f"header is not valid JSON: {printable(str(exc), 160)}") from None
    if not isinstance(doc, dict):
        raise CheckpointFileError(file, f"header must be a JSON object, got {type(doc).__name__}")

    metadata = doc.pop("__metadata__", None)
    metadata = {} if metadata is None else metadata
    if isinstance(metadata, dict):
        _check_values(metadata, file, 2)
    if not isinstance(metadata, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise CheckpointFileError(file, "__metadata__ must be an object of string to string")

    tensors: dict[str, TensorInfo] = {}
    for name, entry in doc.items():
        tensors[name] = _tensor_info(name, entry, file)

    if data_len is not None:
        _check_layout(tensors, file, data_len)
    return SafetensorsHeader(file=file, header_len=header_len, metadata=metadata, tensors=tensors)


def _tensor_info(name: str, entry: object, file: str) -> TensorInfo:
    if isinstance(entry, dict) and len(entry) == 3:  # the common, valid case: no messages built
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        # numel > 0 and bits < 2^64 bound every dimension and partial product; zero-size tensors take the long way
        if (isinstance(dtype, str) and dtype in DTYPE_BITS and name.isprintable() and _is_int_list(shape)
                and len(shape) <= MAX_RANK and min(shape, default=1) > 0 and _is_int_list(offsets) and len(offsets) == 2
                and 0 <= offsets[0] <= offsets[1] <= U64_MAX
                and (bits := math.prod(shape) * DTYPE_BITS[dtype]) <= U64_MAX and bits % 8 == 0
                and offsets[1] - offsets[0] == bits // 8):
            return TensorInfo(name=name, dtype=dtype, shape=tuple(shape), start=offsets[0], end=offsets[1], file=file)
    where = f"tensor {printable(name)!r}"
    if not is_printable(name):
        raise CheckpointFileError(file, f"{where}: the name holds control or invisible characters (shown escaped); "
                                  "refusing a name that could rewrite the terminal or hide what it is")
    if not isinstance(entry, dict):
        raise CheckpointFileError(file, f"{where}: entry must be an object with dtype, shape, data_offsets")
    _check_values(entry, file, 2)
    missing = {"dtype", "shape", "data_offsets"} - entry.keys()
    if missing:
        raise CheckpointFileError(file, f"{where}: entry lacks {', '.join(sorted(missing))}")
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if not isinstance(dtype, str) or dtype not in DTYPE_BITS:
        raise CheckpointFileError(file, f"{where}: unknown dtype {shown(dtype, 40)} (known: {', '.join(DTYPE_BITS)})")
    if not _is_int_list(shape) or len(shape) > MAX_RANK or any(d < 0 or d > U64_MAX for d in shape):
        raise CheckpointFileError(file, f"{where}: shape must be a list of at most {MAX_RANK} integers in [0, 2^64), got {shown(shape)}")
    if not _is_int_list(offsets) or len(offsets) != 2 or offsets[0] < 0 or offsets[1] < offsets[0] or offsets[1] > U64_MAX:
        raise CheckpointFileError(file, f"{where}: data_offsets must be two integers begin, end with 0 <= begin <= end < 2^64, got {shown(offsets)}")
    numel = 1
    for dim in shape:  # left to right, as safetensors' checked multiplication: [0, 2^40, 2^40] is fine
        numel *= dim
        if numel > U64_MAX:
            raise CheckpointFileError(file, f"{where}: shape {shown(shape)} has more than 2^64 elements")
    bits = numel * DTYPE_BITS[dtype]
    if bits > U64_MAX:
        raise CheckpointFileError(file, f"{where}: {dtype} {shown(shape)} needs more than 2^64 bits")
    if bits % 8:
        raise CheckpointFileError(file, f"{where}: {dtype} {list(shape)} is {bits} bits, not a whole number of bytes")
    nbytes = offsets[1] - offsets[0]
    expected = bits // 8
    if nbytes != expected:
        raise CheckpointFileError(
            file, f"{where}: {dtype} {list(shape)} needs {expected} bytes but data_offsets span {nbytes}"
        )
    return TensorInfo(name=name, dtype=dtype, shape=tuple(shape), start=offsets[0], end=offsets[1], file=file)


def _is_int_list(value: object) -> TypeGuard[list[int]]:
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def _check_layout(tensors: dict[str, TensorInfo], file: str, data_len: int) -> None:
    """Offsets must tile the data region exactly, as safetensors requires: no gap, no overlap, nothing past the end."""
    position = 0
    for info in sorted(tensors.values(), key=lambda t: (t.start, t.end)):
        if info.end > data_len:
            raise CheckpointFileError(
                file, f"tensor {printable(info.name)!r}: data_offsets end {info.end} past the data region ({data_len} bytes): file truncated?"
            )
        if info.start < position:
            raise CheckpointFileError(file, f"tensor {printable(info.name)!r}: data_offsets overlap the previous tensor (begin {info.start} < {position})")
        if info.start > position:
            raise CheckpointFileError(file, f"tensor {printable(info.name)!r}: data_offsets are not contiguous (gap of {info.start - position} bytes before it)")
        position = info.end
    if position != data_len:
        raise CheckpointFileError(file, f"data region is {data_len} bytes but the tensors cover {position}: trailing bytes or a lying header")


def open_regular(path: str, name: str):
    """(binary file object, size) of a regular file; folders, FIFOs and devices are refused, never read.

    O_NONBLOCK makes opening a FIFO return at once instead of waiting forever for a writer.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CheckpointFileError(name, "not a regular file (a folder, FIFO or device); refusing to read it")
        return os.fdopen(fd, "rb"), info.st_size
    except BaseException:
        os.close(fd)
        raise


def read_header(path: str, display_name: str | None = None) -> SafetensorsHeader:
    """Read and validate the header of a local safetensors file, reading only the header bytes."""
    name = display_name or path
    try:
        fh, size = open_regular(path, name)
        with fh:
            n = header_length(fh.read(8), name, size)
            header = fh.read(n)
    except OSError as exc:
        raise CheckpointFileError(name, f"cannot read: {exc.strerror or exc}") from None
    if len(header) != n:
        raise CheckpointFileError(name, f"truncated: header needs {n} bytes, only {len(header)} present")
    return parse_header(header, name, size)
