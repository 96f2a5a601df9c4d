"""Property fuzzing of the parsers that read strangers' files: whatever the bytes, only InputError comes out.

Random and mutated input for safetensors_header.header_length / parse_header / read_header, and random or
mutated JSON for checkpoint.parse_model_config / parse_index and quant_config.parse_quant_config. Mutated real
headers are also read by the safetensors library: whatever it refuses, fp8check must refuse too (fp8check may
be stricter, never more lenient). Example counts are bounded so the whole file runs in a few seconds; the long
run is bench/fuzz.py.
"""

from __future__ import annotations

import json
import os
import struct
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fp8check.core.checkpoint import local as checkpoint
from fp8check.core.checkpoint import safetensors_header
from fp8check.core.errors import InputError
from fp8check.core.formats import registry as quant_config
from fp8check.synth import QUANTS, Spec, encode_header, model_config, tensor_specs

FUZZ = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
SPEC = Spec(quant="ct-fp8-block", hidden=16, intermediate=16, layers=1, heads=2, kv_heads=2, vocab=4, block=(8, 8))
REAL_HEADER, REAL_DATA_LEN = encode_header(tensor_specs(SPEC))
DTYPES = sorted(safetensors_header.DTYPE_BITS)

# JSON values, with the awkward corners: huge and negative ints, bools where ints go, NaN, lone surrogates.
scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.sampled_from([0, -1, 1, 2**63, 2**64])
           | st.floats(allow_nan=True) | st.text(max_size=12)
           | st.sampled_from(["F8_E4M3", "BF16", "F4", "\ud800", "\x1b[31m", "re:(a+)+$", "re:(", "block"]))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=5), max_leaves=25)


def call(fn, *args):
    """Run a parser: InputError (any subclass) is a clean refusal; every other exception fails the test."""
    try:
        return fn(*args)
    except InputError as exc:
        message = str(exc)
        assert message and "\n" not in message and "\x1b" not in message
        return None


# --- the 8-byte length prefix and the header JSON ---------------------------------------------------------


@FUZZ
@given(st.binary(max_size=16), st.none() | st.integers(0, 2**65))
def test_header_length(prefix, file_size):
    n = call(safetensors_header.header_length, prefix, "f.safetensors", file_size)
    if n is not None:
        assert 0 <= n <= safetensors_header.MAX_HEADER_BYTES
        assert file_size is None or 8 + n <= file_size


@FUZZ
@given(st.binary(max_size=300), st.none() | st.integers(0, 4096))
def test_parse_header_random_bytes(header, file_size):
    call(safetensors_header.parse_header, header, "f.safetensors", file_size)


entries = st.fixed_dictionaries(
    {"dtype": st.sampled_from(DTYPES) | json_values,
     "shape": st.lists(st.integers(-2, 2**65) | st.sampled_from([0, 1, 16, True, 1.0]), max_size=9) | json_values,
     "data_offsets": st.lists(st.integers(-4, 2**65) | st.sampled_from([0, 16]), max_size=3) | json_values},
    optional={"extra": json_values})
header_docs = st.dictionaries(st.text(max_size=10) | st.sampled_from(["__metadata__", "a.weight", "\x1b"]),
                              entries | json_values, max_size=6)


@FUZZ
@given(header_docs, st.none() | st.integers(0, 4096), st.booleans())
def test_parse_header_structured(doc, file_size, ascii_only):
    text = json.dumps(doc, ensure_ascii=ascii_only)
    header = text.encode("utf-8", "surrogatepass")
    parsed = call(safetensors_header.parse_header, header, "f.safetensors", file_size)
    if parsed is not None:
        for info in parsed.tensors.values():
            assert 0 <= info.start <= info.end <= 2**64 - 1
            assert info.name.isprintable() or not any(ord(c) < 32 for c in info.name)
            if file_size is not None:
                assert info.end <= file_size - 8 - len(header)


# --- mutated real files through read_header, checked against the safetensors library ---------------------


def mutate(data: bytes, draw) -> bytes:
    """Flip, overwrite, insert, delete or truncate bytes, or rewrite the length prefix."""
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "byte", "insert", "delete", "truncate", "prefix", "splice"]))
        pos = draw(st.integers(0, max(len(buf) - 1, 0)))
        if kind == "flip" and buf:
            buf[pos] ^= 1 << draw(st.integers(0, 7))
        elif kind == "byte" and buf:
            buf[pos] = draw(st.sampled_from(b'{}[]",:-0123456789eE. \x00\x1b\xff'))
        elif kind == "insert":
            buf[pos:pos] = draw(st.sampled_from([b'"', b",", b"9" * 20, b"-", b"[", b'"F4"', b"NaN", b'\\ud800']))
        elif kind == "delete":
            del buf[pos:pos + draw(st.integers(1, 8))]
        elif kind == "truncate":
            del buf[pos:]
        elif kind == "prefix":
            buf[:8] = struct.pack("<Q", draw(st.integers(0, 2**64 - 1) | st.integers(0, len(buf) + 16)))
        elif kind == "splice":
            buf += bytes(draw(st.integers(1, 64)))
    return bytes(buf)


@pytest.fixture(scope="module")
def scratch():
    with tempfile.TemporaryDirectory() as folder:
        yield os.path.join(folder, "model.safetensors")


def safetensors_refuses(path: str) -> bool:
    from safetensors import safe_open

    try:
        with safe_open(path, "np"):
            return False
    except Exception:  # noqa: BLE001 - any refusal (SafetensorError, OSError, ...) counts
        return True


@FUZZ
@given(st.data())
def test_read_header_mutated_real_files(scratch, data):
    pytest.importorskip("safetensors")
    blob = mutate(REAL_HEADER + bytes(REAL_DATA_LEN), data.draw)
    with open(scratch, "wb") as fh:
        fh.write(blob)
    parsed = call(safetensors_header.read_header, scratch, "model.safetensors")
    if parsed is not None:
        assert not safetensors_refuses(scratch), "fp8check accepted a file the safetensors library refuses"


def test_the_unmutated_file_is_accepted_by_both(scratch):
    with open(scratch, "wb") as fh:
        fh.write(REAL_HEADER + bytes(REAL_DATA_LEN))
    assert len(safetensors_header.read_header(scratch, "model.safetensors").tensors) == len(tensor_specs(SPEC))
    pytest.importorskip("safetensors")
    assert not safetensors_refuses(scratch)


# --- config.json, the index and quantization_config ------------------------------------------------------


@FUZZ
@given(json_values)
def test_parse_model_config_random_json(doc):
    call(checkpoint.parse_model_config, doc)


@FUZZ
@given(json_values)
def test_parse_index_random_json(doc):
    weight_map = call(checkpoint.parse_index, doc)
    if weight_map is not None:
        for shard in weight_map.values():
            assert isinstance(shard, str) and not os.path.isabs(shard) and ".." not in shard.split("/")


@FUZZ
@given(st.dictionaries(st.text(max_size=12) | st.sampled_from(["model.layers.0.mlp.down_proj.weight"]),
                       st.text(max_size=20) | st.sampled_from(["../x", "/etc/passwd", "C:\\x", "a\x1b", "", "sub/ok"])
                       | scalars, max_size=5))
def test_parse_index_weight_maps(weight_map):
    call(checkpoint.parse_index, {"weight_map": weight_map})


@FUZZ
@given(json_values)
def test_parse_json_bytes(doc):
    call(checkpoint.parse_json, json.dumps(doc).encode("utf-8", "surrogatepass"), "config.json")


@FUZZ
@given(json_values)
def test_parse_quant_config_random_json(doc):
    call(quant_config.parse_quant_config, doc)


def mutate_json(doc, draw, depth: int = 0):
    """Replace, delete or add one value somewhere in a JSON document (a real config)."""
    if isinstance(doc, dict) and doc and depth < 6 and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(doc)))
        return {**doc, key: mutate_json(doc[key], draw, depth + 1)}
    if isinstance(doc, list) and doc and depth < 6 and draw(st.booleans()):
        i = draw(st.integers(0, len(doc) - 1))
        return doc[:i] + [mutate_json(doc[i], draw, depth + 1)] + doc[i + 1:]
    action = draw(st.sampled_from(["replace", "delete", "add"]))
    if action == "delete" and isinstance(doc, dict) and doc:
        key = draw(st.sampled_from(sorted(doc)))
        return {k: v for k, v in doc.items() if k != key}
    if action == "add" and isinstance(doc, dict):
        return {**doc, draw(st.sampled_from(["strategy", "group_size", "block_structure", "dynamic", "targets",
                                             "ignore", "weight_block_size", "extra", "num_bits"])): draw(json_values)}
    return draw(json_values)


REAL_CONFIGS = [model_config(Spec(quant=q)) for q in QUANTS]


@FUZZ
@given(st.sampled_from(REAL_CONFIGS), st.data())
def test_mutated_real_configs(config, data):
    mutated = mutate_json(config, data.draw)
    call(checkpoint.parse_model_config, mutated)
    if isinstance(mutated, dict):
        call(quant_config.parse_quant_config, mutated.get("quantization_config"))
