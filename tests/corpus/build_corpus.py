"""Build the malformed-input corpus: one tiny checkpoint folder per way a stranger's checkpoint can be broken.

    python tests/corpus/build_corpus.py OUT_DIR

writes OUT_DIR/<case>/ for every case plus OUT_DIR/cases.json, the manifest the tests read: for each case the
exit code `fp8check inspect` must give (2: unreadable input, 1: a verdict about the model, 0: fine as far as
headers go), a fragment of the one-line error, and the names (file, tensor; shown escaped) the output must
carry. Symlinks point into OUT_DIR/_outside/, a sibling folder that no case may read. Nothing is random and
nothing needs torch, so two builds are byte-identical. The tests build it into a temporary folder once per
session (tests/test_corpus.py); bench/fuzz.py seeds its fuzzer with it.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fp8check.synth import ITEMSIZE, Spec, encode_header, model_config, tensor_specs  # noqa: E402

# 1 decoder layer of width 16: every file stays a few KB.
TINY = Spec(quant="ct-fp8", hidden=16, intermediate=16, layers=1, heads=2, kv_heads=2, vocab=4)
TINY_BLOCK = replace(TINY, quant="ct-fp8-block", block=(8, 8))
DOWN = "model.layers.0.mlp.down_proj"
WEIGHT = f"{DOWN}.weight"
SCALE = f"{DOWN}.weight_scale"
ST = "model.safetensors"
INDEX = "model.safetensors.index.json"
SHARD1, SHARD2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
BF16 = {"one": b"\x80\x3f", "nan": b"\xc0\x7f", "inf": b"\x80\x7f", "zero": b"\x00\x00", "negative": b"\x80\xbf"}


@dataclass
class Case:
    name: str
    exit: int                       # expected exit code of `fp8check inspect`
    fragment: str                   # in the one-line error (exit 2) or in some reported error (exit 1)
    names: tuple[str, ...] = ()     # file / tensor names the output must carry, as printed (escaped)
    doc: str = ""
    memory: bool = False            # also run in a subprocess and bound its peak memory
    data: bool = False              # the file holds real tensor bytes that matter (scale values)
    xfail: str | None = None        # a known bug outside the parsers, with the fix it needs
    build: Callable[[Path], None] | None = field(default=None, repr=False)


CASES: list[Case] = []


def case(name: str, exit: int, fragment: str, names: tuple[str, ...] = (), **extra):
    def register(build: Callable[[Path], None]) -> Callable[[Path], None]:
        CASES.append(Case(name, exit, fragment, names, doc=(build.__doc__ or "").strip(), build=build, **extra))
        return build

    return register


# --- writers -------------------------------------------------------------------------------------------


def write_config(folder: Path, spec: Spec = TINY, **changes) -> None:
    cfg = model_config(spec)
    cfg.update(changes)
    (folder / "config.json").write_text(json.dumps(cfg, separators=(",", ":")))


def edit_quant(folder: Path, edit: Callable[[dict], None], spec: Spec = TINY) -> None:
    cfg = model_config(spec)
    edit(cfg["quantization_config"])
    (folder / "config.json").write_text(json.dumps(cfg, separators=(",", ":")))


def raw_file(folder: Path, header: bytes, data: bytes = b"", length: int | None = None, name: str = ST) -> None:
    """A safetensors file with exactly these header bytes (and a length prefix that may lie)."""
    prefix = struct.pack("<Q", len(header) if length is None else length)
    (folder / name).write_bytes(prefix + header + data)


def entries_file(folder: Path, entries: dict, data_len: int, name: str = ST) -> None:
    """A file whose header holds these raw entry objects (offsets as given), over `data_len` zero bytes."""
    raw_file(folder, json.dumps(entries).encode(), bytes(data_len), name=name)


def tensors_file(folder: Path, entries: dict[str, tuple[str, tuple[int, ...]]], name: str = ST,
                 values: dict[str, bytes] | None = None) -> None:
    """A valid file of these tensors: exact offsets, zero bytes except `values` (name -> bytes)."""
    head, size = encode_header(entries)
    data = b"".join((values or {}).get(n) or bytes(_nbytes(d, s)) for n, (d, s) in entries.items())
    assert len(data) == size
    (folder / name).write_bytes(head + data)


def _nbytes(dtype: str, shape: tuple[int, ...]) -> int:
    n = ITEMSIZE[dtype]
    for d in shape:
        n *= d
    return n


def model(folder: Path, spec: Spec = TINY, drop: tuple[str, ...] = (), change: dict | None = None,
          values: dict[str, bytes] | None = None) -> None:
    """config.json + model.safetensors of `spec`, minus `drop`, with `change` (name -> (dtype, shape)) applied."""
    write_config(folder, spec)
    entries = {n: v for n, v in tensor_specs(spec).items() if n not in drop}
    entries.update(change or {})
    tensors_file(folder, dict(sorted(entries.items())), values=values)


def sharded(folder: Path, spec: Spec = TINY, weight_map_edit: Callable[[dict], None] | None = None,
            shard_edit: Callable[[dict, dict], None] | None = None) -> None:
    """config.json + two shards + index; the edits see (weight_map) and (shard1 entries, shard2 entries)."""
    write_config(folder, spec)
    entries = tensor_specs(spec)
    names = list(entries)
    parts = ({n: entries[n] for n in names[: len(names) // 2]}, {n: entries[n] for n in names[len(names) // 2:]})
    weight_map = {n: SHARD1 for n in parts[0]} | {n: SHARD2 for n in parts[1]}
    if shard_edit:
        shard_edit(*parts)
    if weight_map_edit:
        weight_map_edit(weight_map)
    tensors_file(folder, parts[0], SHARD1)
    tensors_file(folder, parts[1], SHARD2)
    (folder / INDEX).write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))


def header_case(folder: Path, header: bytes, data: bytes = b"", length: int | None = None) -> None:
    write_config(folder)
    raw_file(folder, header, data, length)


def one_tensor(name: str = WEIGHT, dtype: str = "F8_E4M3", shape=(4, 4), offsets=(0, 16)) -> dict:
    return {name: {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}}


def outside(folder: Path) -> Path:
    """The sibling folder symlinks point into: holds a perfectly valid model nobody may read through a case."""
    out = folder.parent / "_outside"
    if not out.exists():
        out.mkdir()
        model(out)
        (out / "sub").mkdir()
        model(out / "sub")
    return out


# --- safetensors file: length prefix ------------------------------------------------------------------


@case("empty_file", 2, "truncated safetensors file", (ST,))
def _(folder):
    """model.safetensors has 0 bytes."""
    header_case(folder, b"")
    (folder / ST).write_bytes(b"")


@case("truncated_file", 2, "truncated safetensors file", (ST,))
def _(folder):
    """3 bytes: the 8-byte header length itself is cut."""
    write_config(folder)
    (folder / ST).write_bytes(b"\x10\x00\x00")


@case("header_longer_than_file", 2, "is larger than the file", (ST,))
def _(folder):
    """The length prefix says 4096 header bytes; the file has 40."""
    header_case(folder, b'{"a": 1}' + bytes(24), length=4096)


@case("header_length_2_63", 2, "exceeds the 25000000-byte limit", (ST,), memory=True)
def _(folder):
    """Header length 2^63: must be refused before any allocation."""
    header_case(folder, b"{}", length=2**63)


@case("header_length_u64_max", 2, "exceeds the 25000000-byte limit", (ST,), memory=True)
def _(folder):
    """Header length 2^64 - 1."""
    header_case(folder, b"{}", length=2**64 - 1)


# --- safetensors file: header JSON --------------------------------------------------------------------


@case("header_not_utf8", 2, "header is not UTF-8", (ST,))
def _(folder):
    header_case(folder, b'{"\xff\xfe": 1}')


@case("header_not_json", 2, "header is not valid JSON", (ST,))
def _(folder):
    header_case(folder, b"{this is not json")


@case("header_not_object", 2, "header must be a JSON object, got list", (ST,))
def _(folder):
    header_case(folder, b"[1, 2, 3]")


@case("header_duplicate_keys", 2, f"duplicate key '{WEIGHT}'", (ST, WEIGHT))
def _(folder):
    """The same tensor twice: which one would a loader use?"""
    entry = json.dumps(one_tensor()[WEIGHT])
    header_case(folder, f'{{"{WEIGHT}": {entry}, "{WEIGHT}": {entry}}}'.encode(), bytes(16))


@case("header_deeply_nested", 2, "header is not valid JSON", (ST,), memory=True)
def _(folder):
    """20 000 nested arrays: a recursion bomb for recursive JSON parsers."""
    header_case(folder, b"[" * 20_000 + b"]" * 20_000)


@case("header_nested_past_serde_limit", 2, "nests deeper than 127 levels", (ST,))
def _(folder):
    """A valid tensor with an extra field nested 200 deep: Python's json reads it, safetensors (serde) refuses it."""
    entry = one_tensor()[WEIGHT]
    text = json.dumps({WEIGHT: entry})[:-2] + ', "x": ' + "[" * 200 + "]" * 200 + "}}"
    header_case(folder, text.encode(), bytes(16))


@case("header_nan", 2, "NaN is not JSON", (ST,))
def _(folder):
    """NaN is not JSON; Python's json accepts it unless told not to."""
    header_case(folder, f'{{"{WEIGHT}": {{"dtype": "F8_E4M3", "shape": [NaN], "data_offsets": [0, 16]}}}}'.encode(),
                bytes(16))


@case("metadata_not_object", 2, "__metadata__ must be an object of string to string", (ST,))
def _(folder):
    header_case(folder, json.dumps({"__metadata__": ["pt"], **one_tensor()}).encode(), bytes(16))


@case("metadata_lone_surrogate", 2, "lone surrogate", (ST,))
def _(folder):
    """A \\udc00 escape: valid for Python's json, invalid UTF-8 for safetensors."""
    header_case(folder, b'{"__metadata__": {"format": "\\udc00"}, ' + json.dumps(one_tensor()).encode()[1:], bytes(16))


@case("no_tensors", 2, "holds no tensors at all", (ST,))
def _(folder):
    """A valid, empty safetensors file: nothing to check must not read as 'OK: 0 linear modules'."""
    header_case(folder, b'{"__metadata__": {"format": "pt"}}')


@case("entry_not_object", 2, "entry must be an object", (ST, WEIGHT))
def _(folder):
    header_case(folder, json.dumps({WEIGHT: [0, 16]}).encode(), bytes(16))


@case("entry_missing_fields", 2, "entry lacks data_offsets, shape", (ST, WEIGHT))
def _(folder):
    header_case(folder, json.dumps({WEIGHT: {"dtype": "F8_E4M3"}}).encode())


# --- safetensors file: tensor entries -----------------------------------------------------------------


@case("unknown_dtype", 2, 'unknown dtype "F7_E3M3"', (ST, WEIGHT))
def _(folder):
    header_case(folder, json.dumps(one_tensor(dtype="F7_E3M3")).encode(), bytes(16))


@case("negative_offsets", 2, "data_offsets must be two integers begin, end", (ST, WEIGHT))
def _(folder):
    header_case(folder, json.dumps(one_tensor(offsets=(-16, 0))).encode(), bytes(16))


@case("reversed_offsets", 2, "data_offsets must be two integers begin, end", (ST, WEIGHT))
def _(folder):
    header_case(folder, json.dumps(one_tensor(offsets=(16, 0))).encode(), bytes(16))


@case("overlapping_offsets", 2, "data_offsets overlap the previous tensor", (ST, f"{DOWN}.weight_scale"))
def _(folder):
    """Two tensors sharing bytes: writing one would corrupt the other."""
    entries = one_tensor() | one_tensor(f"{DOWN}.weight_scale", "BF16", (1,), (14, 16))
    header_case(folder, json.dumps(entries).encode(), bytes(16))


@case("offsets_out_of_range", 2, "past the data region", (ST, WEIGHT))
def _(folder):
    """Offsets claim 1 MB of data; the file holds 16 bytes."""
    header_case(folder, json.dumps(one_tensor(shape=(1024, 1024), offsets=(0, 1 << 20))).encode(), bytes(16))


@case("offsets_not_contiguous", 2, "data_offsets are not contiguous (gap of 8 bytes", (ST, WEIGHT))
def _(folder):
    header_case(folder, json.dumps(one_tensor(offsets=(8, 24))).encode(), bytes(24))


@case("trailing_bytes", 2, "trailing bytes or a lying header", (ST,))
def _(folder):
    """16 bytes of tensor, 4096 bytes of data region: something is hidden after the tensors."""
    header_case(folder, json.dumps(one_tensor()).encode(), bytes(4096))


@case("shape_dtype_mismatch", 2, "F32 [4, 4] needs 64 bytes but data_offsets span 16", (ST, WEIGHT))
def _(folder):
    header_case(folder, json.dumps(one_tensor(dtype="F32")).encode(), bytes(16))


@case("shape_1e12_elements", 2, "past the data region", (ST, WEIGHT), memory=True)
def _(folder):
    """A 10^6 x 10^6 FP8 weight (a terabyte) whose offsets agree with its shape, in a 1 KB file."""
    header_case(folder, json.dumps(one_tensor(shape=(10**6, 10**6), offsets=(0, 10**12))).encode())


@case("shape_1e12_elements_short_span", 2, "needs 1000000000000 bytes but data_offsets span 16", (ST, WEIGHT),
      memory=True)
def _(folder):
    header_case(folder, json.dumps(one_tensor(shape=(10**6, 10**6))).encode(), bytes(16))


@case("shape_2_64_elements", 2, "has more than 2^64 elements", (ST, WEIGHT), memory=True)
def _(folder):
    """[2^40, 2^40, 0]: zero elements, but safetensors' checked multiplication overflows on the way."""
    header_case(folder, json.dumps(one_tensor(shape=(2**40, 2**40, 0), offsets=(0, 0))).encode())


@case("shape_dim_past_u64", 2, "integers in [0, 2^64)", (ST, WEIGHT))
def _(folder):
    """[0, 10^30]: no u64 holds 10^30, so safetensors refuses to parse it."""
    header_case(folder, json.dumps(one_tensor(shape=(0, 10**30), offsets=(0, 0))).encode())


@case("shape_rank_9", 2, "shape must be a list of at most 8 integers", (ST, WEIGHT))
def _(folder):
    header_case(folder, json.dumps(one_tensor(shape=(1,) * 9, offsets=(0, 1))).encode(), bytes(1))


@case("shape_sub_byte", 2, "is 12 bits, not a whole number of bytes", (ST, WEIGHT))
def _(folder):
    """Three F4 values are 12 bits: safetensors refuses a tensor that does not end on a byte."""
    header_case(folder, json.dumps(one_tensor(dtype="F4", shape=(3,), offsets=(0, 2))).encode(), bytes(2))


# --- names that try to talk to the terminal -----------------------------------------------------------

ANSI = "model.layers.0.\x1b[31mevil\x1b[0m.weight"
CONTROL = "model.layers.0.\x07\x08\r\nfake line.weight"
BIDI = f"{DOWN}\u202e.weight"


@case("tensor_name_ansi", 2, "holds control or invisible characters", (ST, "\\x1b[31mevil\\x1b[0m"))
def _(folder):
    """An ANSI colour escape in a tensor name: printed raw it would recolour (or clear, or retitle) the terminal."""
    write_config(folder)
    tensors_file(folder, {ANSI: ("BF16", (4,))} | {WEIGHT: ("F8_E4M3", (4, 4))})


@case("tensor_name_control", 2, "holds control or invisible characters", (ST, "\\x07\\x08\\x0d\\x0afake line"))
def _(folder):
    """BEL, backspace, CR and LF: a fake second line in a one-line error."""
    write_config(folder)
    tensors_file(folder, {CONTROL: ("BF16", (4,))})


@case("tensor_name_bidi", 2, "holds control or invisible characters", (ST, "down_proj\\u202e.weight"))
def _(folder):
    """A right-to-left override hides what a name really says."""
    write_config(folder)
    tensors_file(folder, {BIDI: ("F8_E4M3", (4, 4))})


@case("tensor_name_lone_surrogate", 2, "holds control or invisible characters", (ST, "\\udc80"))
def _(folder):
    """A lone surrogate cannot be printed to a UTF-8 terminal at all."""
    write_config(folder)
    raw_file(folder, b'{"bad.\\udc80.weight": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}', bytes(4))


@case("tensor_name_rich_markup", 2, "unknown dtype", (ST, "[/red][link=https://evil.example]x"))
def _(folder):
    """Rich console markup in a name: a bad closing tag crashed rich (MarkupError, twice: in the error and in the
    internal-error fallback), [link=...] would plant a terminal hyperlink. Printed literally since the fix."""
    header_case(folder, json.dumps(one_tensor(name="model.[/red][link=https://evil.example]x.weight",
                                              dtype="F7")).encode(), bytes(16))


@case("tensor_name_10k_chars", 2, "unknown dtype", (ST, "model.aaaaaaaa"))
def _(folder):
    """A 10 000-character name: the error stays one bounded line."""
    header_case(folder, json.dumps(one_tensor(name="model." + "a" * 10_000, dtype="F7")).encode(), bytes(16))


# --- files that are not files -------------------------------------------------------------------------


@case("shard_is_fifo", 2, "not a regular file", (ST,))
def _(folder):
    """A named pipe called model.safetensors: a plain open() would wait for a writer forever."""
    write_config(folder)
    os.mkfifo(folder / ST)


@case("config_is_fifo", 2, "not a regular file", ("config.json",))
def _(folder):
    model(folder)
    (folder / "config.json").unlink()
    os.mkfifo(folder / "config.json")


@case("shard_is_folder", 2, "not a regular file", (ST,))
def _(folder):
    write_config(folder)
    (folder / ST).mkdir()


# --- the index ------------------------------------------------------------------------------------------


@case("index_dotdot", 2, "points outside the model folder", (INDEX, "../../etc/passwd"))
def _(folder):
    sharded(folder, weight_map_edit=lambda wm: wm.update({WEIGHT: "../../etc/passwd"}))


@case("index_absolute_path", 2, "points outside the model folder", (INDEX, "/etc/passwd"))
def _(folder):
    sharded(folder, weight_map_edit=lambda wm: wm.update({WEIGHT: "/etc/passwd"}))


@case("index_windows_path", 2, "points outside the model folder", (INDEX, "C:\\\\Windows"))
def _(folder):
    sharded(folder, weight_map_edit=lambda wm: wm.update({WEIGHT: "C:\\Windows\\system.ini"}))


@case("index_missing_shard", 2, "not found in the model folder", ("model-00003-of-00003.safetensors",))
def _(folder):
    sharded(folder, weight_map_edit=lambda wm: wm.update({WEIGHT: "model-00003-of-00003.safetensors"}))


@case("index_symlink_outside", 2, "outside the model folder; refusing to read it", (SHARD2,))
def _(folder):
    """A shard that is a symlink to a (valid) file outside the model folder."""
    outside(folder)
    sharded(folder)
    (folder / SHARD2).unlink()
    (folder / SHARD2).symlink_to(Path("..", "_outside", ST))


@case("index_symlinked_subfolder", 2, "outside the model folder; refusing to read it", ("sub/model.safetensors",))
def _(folder):
    """weight_map names sub/model.safetensors, and sub/ is a symlink to a folder elsewhere."""
    outside(folder)
    sharded(folder, weight_map_edit=lambda wm: wm.update({WEIGHT: "sub/model.safetensors"}))
    (folder / "sub").symlink_to(Path("..", "_outside", "sub"), target_is_directory=True)


@case("config_symlink_outside", 2, "outside the model folder; refusing to read it", ("config.json",))
def _(folder):
    outside(folder)
    model(folder)
    (folder / "config.json").unlink()
    (folder / "config.json").symlink_to(Path("..", "_outside", "config.json"))


@case("index_not_json", 2, "not valid JSON", (INDEX,))
def _(folder):
    sharded(folder)
    (folder / INDEX).write_text('{"weight_map": {')


@case("index_without_weight_map", 2, "must be a JSON object with a 'weight_map' object", (INDEX,))
def _(folder):
    sharded(folder)
    (folder / INDEX).write_text('{"metadata": {}}')


@case("index_empty_weight_map", 2, "weight_map is empty", (INDEX,))
def _(folder):
    """An index that lists nothing would make an 'OK: 0 linear modules' report."""
    sharded(folder)
    (folder / INDEX).write_text('{"metadata": {}, "weight_map": {}}')


@case("index_shard_not_a_string", 2, "must be a file name, got 5", (INDEX, WEIGHT))
def _(folder):
    sharded(folder, weight_map_edit=lambda wm: wm.update({WEIGHT: 5}))


@case("index_shard_control_chars", 2, "holds control or invisible characters", (INDEX, "model\\x1b[2J.safetensors"))
def _(folder):
    """ESC [2J clears the screen."""
    sharded(folder, weight_map_edit=lambda wm: wm.update({WEIGHT: "model\x1b[2J.safetensors"}))


@case("index_lists_tensor_shard_lacks", 1, "does not contain it", (INDEX, WEIGHT, SHARD1))
def _(folder):
    """A stale index: it lists down_proj.weight in shard 1, which does not hold it (nor does any other)."""
    def edit(first, second):
        first.pop(WEIGHT, None)
        second.pop(WEIGHT, None)
    sharded(folder, shard_edit=edit, weight_map_edit=lambda wm: wm.update({WEIGHT: SHARD1}))


@case("shard_holds_unlisted_tensor", 1, "does not list it", (INDEX, f"{DOWN}.extra_scale"))
def _(folder):
    sharded(folder, shard_edit=lambda first, second: second.update({f"{DOWN}.extra_scale": ("F32", (1,))}))


@case("tensor_in_two_shards", 2, "also appears in", (WEIGHT, SHARD1, SHARD2))
def _(folder):
    def edit(first, second):
        first[WEIGHT] = second[WEIGHT] = ("F8_E4M3", (16, 16))
    sharded(folder, shard_edit=edit)


# --- pickles --------------------------------------------------------------------------------------------

# pickle protocol 0 for os.system("touch PWNED"): unpickling it would run the command.
EVIL_PICKLE = b"cos\nsystem\n(S'touch PWNED'\ntR."


@case("pytorch_model_bin_only", 2, "never unpickles", ("pytorch_model.bin",))
def _(folder):
    """Only a pickle checkpoint, and a malicious one: unpickling it runs `touch PWNED`."""
    write_config(folder)
    (folder / "pytorch_model.bin").write_bytes(EVIL_PICKLE)


@case("pt_only", 2, "never unpickles", ("model.pt",))
def _(folder):
    write_config(folder)
    (folder / "model.pt").write_bytes(EVIL_PICKLE)


# --- config.json ----------------------------------------------------------------------------------------


@case("config_missing", 2, "not found", ("config.json",))
def _(folder):
    model(folder)
    (folder / "config.json").unlink()


@case("config_not_json", 2, "not valid JSON", ("config.json",))
def _(folder):
    model(folder)
    (folder / "config.json").write_text('{"architectures": ["LlamaForCausalLM"],')


@case("config_not_object", 2, "config.json must be a JSON object, got list", ("config.json",))
def _(folder):
    model(folder)
    (folder / "config.json").write_text("[]")


@case("config_deeply_nested", 2, "not valid JSON", ("config.json",))
def _(folder):
    model(folder)
    (folder / "config.json").write_text("[" * 20_000 + "]" * 20_000)


@case("config_int_of_5000_digits", 2, "not valid JSON", ("config.json",))
def _(folder):
    """Python refuses to parse integers of more than 4300 digits (quadratic int() time)."""
    model(folder)
    (folder / "config.json").write_text('{"hidden_size": ' + "9" * 5000 + "}")


@case("config_hidden_size_string", 2, 'hidden_size must be a positive integer, got "32"', ("config.json",))
def _(folder):
    model(folder)
    write_config(folder, hidden_size="32")


@case("config_architecture_ansi", 2, "architectures must be a list of printable strings", ("config.json",))
def _(folder):
    model(folder)
    write_config(folder, architectures=["Llama\x1b]0;pwned\x07ForCausalLM"])


@case("quantization_config_not_object", 2, "quantization_config must be an object, got str", ("config.json",))
def _(folder):
    model(folder)
    write_config(folder, quantization_config="fp8")


@case("quant_method_not_string", 2, "quant_method must be a string, got 5", ("config.json",))
def _(folder):
    model(folder)
    edit_quant(folder, lambda q: q.update(quant_method=5))


@case("config_groups_wrong_type", 2, "config_groups must be an object", ("config.json",))
def _(folder):
    model(folder)
    edit_quant(folder, lambda q: q.update(config_groups=[]))


@case("num_bits_string", 2, 'num_bits must be a positive integer, got "8"', ("config.json", "group_0"))
def _(folder):
    model(folder)
    edit_quant(folder, lambda q: q["config_groups"]["group_0"]["weights"].update(num_bits="8"))


@case("unknown_strategy", 2, 'unknown value "diagonal"', ("config.json", "group_0.weights.strategy"))
def _(folder):
    model(folder)
    edit_quant(folder, lambda q: q["config_groups"]["group_0"]["weights"].update(strategy="diagonal"))


@case("block_structure_length_3", 2, "invalid block_structure [128, 128, 128]", ("config.json", "group_0"))
def _(folder):
    model(folder, TINY_BLOCK)
    edit_quant(folder, lambda q: q["config_groups"]["group_0"]["weights"].update(block_structure=[128] * 3),
               TINY_BLOCK)


@case("block_structure_zeros", 2, "invalid block_structure [0, 0]", ("config.json", "group_0"))
def _(folder):
    model(folder, TINY_BLOCK)
    edit_quant(folder, lambda q: q["config_groups"]["group_0"]["weights"].update(block_structure=[0, 0]), TINY_BLOCK)


@case("fp8_weight_block_size_length_3", 2, "must have 2 dimensions, but got 3", ("config.json",))
def _(folder):
    spec = replace(TINY, quant="fp8-block", block=(8, 8))
    model(folder, spec)
    edit_quant(folder, lambda q: q.update(weight_block_size=[16, 16, 16]), spec)


@case("fp8_weight_block_size_zeros", 2, "weight_block_size must be a list of positive integers", ("config.json",))
def _(folder):
    spec = replace(TINY, quant="fp8-block", block=(8, 8))
    model(folder, spec)
    edit_quant(folder, lambda q: q.update(weight_block_size=[0, 0]), spec)


@case("unknown_quant_method", 1, "Unknown quantization method: evil-quant. Must be one of", ())
def _(folder):
    """vLLM's _verify_quantization refuses a method it does not know before building any layer."""
    model(folder)
    write_config(folder, quantization_config={"quant_method": "evil-quant"})


@case("out_of_scope_quant_method", 2, "out of fp8check's scope", ("gptq",))
def _(folder):
    """A method vLLM knows but fp8check does not model (not FP8)."""
    model(folder)
    write_config(folder, quantization_config={"quant_method": "gptq", "bits": 4, "group_size": 128})


@case("ignore_regex_invalid", 2, "invalid regular expression", ("config.json", "re:(unclosed"))
def _(folder):
    """vLLM's re.match raises on it at load time."""
    model(folder)
    edit_quant(folder, lambda q: q.update(ignore=["lm_head", "re:(unclosed"]))


@case("ignore_regex_catastrophic", 2, "exponential time", ("config.json", "re:(a+)+$"))
def _(folder):
    """ReDoS: '(a+)+$' against a layer named 'aaa...a!' backtracks 2^40 times; vLLM and fp8check would hang."""
    edit_quant(folder, lambda q: q.update(ignore=["lm_head", "re:(a+)+$"]))
    tensors_file(folder, {"a" * 40 + "!.weight": ("F8_E4M3", (16, 16)), "a" * 40 + "!.weight_scale": ("BF16", (1,))})


# --- verdicts about the model (exit 1) -----------------------------------------------------------------


@case("scale_wrong_shape", 1, f"{SCALE} ({ST}) has shape [3, 3]", (ST, SCALE))
def _(folder):
    """A block scale of shape [3, 3] for a [16, 16] weight with 8x8 blocks (needs [2, 2])."""
    model(folder, TINY_BLOCK, change={SCALE: ("BF16", (3, 3))})


@case("scale_missing", 1, f"{SCALE} is missing", (SCALE, WEIGHT))
def _(folder):
    """vLLM loads a layer with no scale silently and computes garbage (vllm#57108)."""
    model(folder, drop=(SCALE,))


@case("linear_weight_zero_dim", 1, "has an empty dimension", (DOWN,))
def _(folder):
    """A [16, 0] block-FP8 weight: valid safetensors, but no linear layer vLLM builds from config.json has a zero
    dimension (its weight loader would refuse the shape). Found by bench/fuzz.py: a ZeroDivisionError in
    tp.linear_block_shape_error before the fix."""
    model(folder, replace(TINY, quant="fp8-block", block=(8, 8)), change={WEIGHT: ("F8_E4M3", (16, 0))})


# --- scale VALUES: only `load` (which reads tensor data) can judge them; inspect must not read them ------


def _scale_values(folder: Path, value: bytes) -> None:
    values = {n: BF16["one"] for n in tensor_specs(TINY) if n.endswith(("weight_scale", "input_scale"))}
    values[SCALE] = value
    model(folder, values=values)


for _value in ("nan", "inf", "zero", "negative"):
    case(f"scale_value_{_value}", 0, "", (), data=True)(
        lambda folder, v=_value: _scale_values(folder, BF16[v]))
    CASES[-1].doc = (f"{SCALE} holds a {_value} BF16 value in real tensor bytes. inspect reads headers only and "
                     "must pass it; the future `load` must refuse it.")


# --- build ------------------------------------------------------------------------------------------------


def build(out: Path) -> list[dict]:
    """Write every case under `out` and out/cases.json; returns the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for c in CASES:
        folder = out / c.name
        folder.mkdir()
        c.build(folder)
        manifest.append({k: v for k, v in asdict(c).items() if k != "build"})
    (out / "cases.json").write_text(json.dumps({"cases": manifest}, indent=1) + "\n")
    return manifest


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    target = Path(sys.argv[1])
    if target.exists() and any(target.iterdir()):
        sys.exit(f"{target}: not empty")
    cases = build(target)
    print(f"{len(cases)} cases written to {target}")
