"""The quick paths that make inspect fast on giant checkpoints find exactly what the careful paths find.

Each quick path (bench/giants.py) is compared with the careful one it short-cuts, on generated and hand-made
input: the safetensors header reader (one regex split proves the text plain, then columns checked in bulk, one
validation per (dtype, shape)), the index checks
(one dictionary comparison), the expert grouping (one regex per distinct tail) and FusedMoE layers checked once
per structure (a clean layer vouches for the next identical one).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fp8check.core.checkpoint import safetensors_header
from fp8check.core.checkpoint.local import (
    CheckpointFileError, cross_check_index, merge_headers, open_local, parse_index, parse_model_config, paused_gc,
)
from fp8check.core.checkpoint.safetensors_header import SafetensorsHeader, TensorInfo, parse_header
from fp8check.core.errors import InputError
from fp8check.core.model.memory import stored_bytes, weight_footprint
from fp8check.core.model.modules import build_layout
from fp8check.core.records import InspectOptions
from fp8check.core.routing import moe as moe_module
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets.platforms import parse_platform
from fp8check.core.targets.profiles import select_profile
from fp8check.synth import Spec, encode_header, model_config, tensor_specs, write_checkpoint, write_safetensors

PROPERTY = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])

# --- safetensors headers: quick path vs careful path ---------------------------------------------------------


def careful(header: bytes, file_size: int | None) -> SafetensorsHeader:
    """The careful path alone, as parse_header runs it when the quick path gives up."""
    data_len = None if file_size is None else file_size - 8 - len(header)
    return safetensors_header._parse_careful(header.decode("utf-8"), len(header), "f.safetensors", data_len)


def outcome(fn, *args):
    try:
        return "ok", fn(*args)
    except InputError as exc:
        return "error", str(exc)


def entry(dtype, shape, start, end) -> str:
    return json.dumps({"dtype": dtype, "shape": shape, "data_offsets": [start, end]})


# Entries written as text, so duplicate keys, key orders, bools, floats and '-0' can all appear.
ENTRY_TEXTS = [
    entry("F8_E4M3", [4, 4], 0, 16), entry("F32", [1], 16, 20), entry("F32", [], 16, 20), entry("BF16", [2, 4], 16, 32),
    '{"dtype":"F32","shape":[true],"data_offsets":[16,20]}', '{"dtype":"F32","shape":[1],"data_offsets":[16,20.0]}',
    '{"dtype":"F32","shape":[1],"data_offsets":[-0,4]}', '{"dtype":"F32","shape":{},"data_offsets":[16,20]}',
    '{"shape":[1],"dtype":"F32","data_offsets":[16,20]}',
    '{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[16,20]}',
    '[["dtype","F32"],["shape",[1]],["data_offsets",[16,20]]]',
    '{"dtype":"F32","shape":[1],"data_offsets":[16,20],"x":1}',
    '{"dtype":"F32","shape":[1],"data_offsets":"ab"}', '{"dtype":"F32","shape":[0],"data_offsets":[16,16]}',
    '{"dtype":"F4","shape":[3],"data_offsets":[16,18]}', '{"dtype":"F32","shape":[1],"data_offsets":[false,true]}',
    '{"dtype":"F32","shape":[1],"data_offsets":[16,20,24]}', '{"dtype":"F32","shape":[NaN],"data_offsets":[16,20]}',
    '{"dtype":"F32","shape":[[1]],"data_offsets":[16,20]}', '{"dtype":["F32"],"shape":[1],"data_offsets":[16,20]}',
    '{"dtype":"F32","shape":[1],"data_offsets":{"a":16,"b":20}}', '{"dtype":"F32","shape":[1],"data_offsets":[20,24]}',
    # Valid JSON that is not plain as serde writes it, and near misses: spaces around ':', a duplicate key written
    # differently, an escaped duplicate key, a string shape, a float dimension.
    '{"dtype" : "F32", "shape" : [1], "data_offsets" : [16, 20]}',
    '{"dtype":"F32","shape":[1],"data_offsets":[16,20],"dtype" :"F32"}',
    '{"dtype":"F32","shape":[1],"data_offsets":[16,20],"d\\u0074ype":"F32"}',
    '{"dtype":"F32","shape":"","data_offsets":[16,20]}', '{"dtype":"F32","shape":[1.0],"data_offsets":[16,20]}',
    '{"dtype":"F32","shape":[1],"data_offsets":[016,20]}', '{"dtype":"F32","shape":[1],"data_offsets":[16,2e1]}',
    '{"dtype":"F32","shape":[01],"data_offsets":[16,20]}', '{"dtype":"f32","shape":[1],"data_offsets":[16,20]}',
]
METADATA_TEXTS = ['{"format":"pt"}', "null", "{}", '{"format":"pt","format":"np"}', '{"format":1}', '"pt"',
                  '{"f":"\\u00e9"}', '{"f":"\\ud800"}', '{"f":{"g":"h"}}', '{"f":"a:b"}', '{"f":"},"}',
                  '{"dtype":"F32","shape":[1],"data_offsets":[16,20]}']
# Escapes, a raw DEL and raw non-ASCII (the printable-names shortcut), a ':' and a '-0' inside a name.
NAMES = ["a.weight", "b.weight_scale", "a.weight", "__metadata__", "c\\u001b[31m", "layer-0.w", "true.w", "d.weight",
         "e\x7f", "é.weight", "f:g.weight"]


@st.composite
def header_texts(draw):
    """A header's JSON text: 0-4 entries (names may repeat), metadata anywhere or nowhere, or twice."""
    parts = [f'"{draw(st.sampled_from(NAMES))}":{draw(st.sampled_from(ENTRY_TEXTS))}'
             for _ in range(draw(st.integers(0, 4)))]
    for _ in range(draw(st.integers(0, 2))):
        parts.insert(draw(st.integers(0, len(parts))), f'"__metadata__":{draw(st.sampled_from(METADATA_TEXTS))}')
    return "{" + ",".join(parts) + "}"


@PROPERTY
@given(header_texts(), st.sampled_from([None, 0, 16, 20, 32, 36]))
def test_quick_and_careful_paths_agree_on_hand_made_entries(text, data_len):
    header = text.encode("utf-8", "surrogatepass")
    file_size = None if data_len is None else 8 + len(header) + data_len
    assert outcome(parse_header, header, "f.safetensors", file_size) == outcome(careful, header, file_size)


@PROPERTY
@given(st.lists(st.tuples(st.sampled_from(["F8_E4M3", "BF16", "F32"]),
                          st.lists(st.integers(1, 5), max_size=3)), min_size=1, max_size=6),
       st.permutations(range(6)), st.integers(-2, 2))
def test_quick_and_careful_paths_agree_on_tilings(tensors, order, slack):
    """Valid headers in any offset order, and off-by-a-few data regions: agree, and the quick path takes the
    valid ones (so the agreement is not the careful path agreeing with itself)."""
    entries = {f"t{i}": spec for i, spec in enumerate(tensors)}
    header_bytes, data_len = encode_header(entries)
    doc = json.loads(header_bytes[8:])
    names = [f"t{i}" for i in order if i < len(tensors)]
    shuffled = {"__metadata__": doc.pop("__metadata__"), **{n: doc[n] for n in reversed(names)}}
    header = json.dumps(shuffled, separators=(",", ":")).encode()
    file_size = 8 + len(header) + data_len + slack
    got = outcome(parse_header, header, "f.safetensors", file_size)
    assert got == outcome(careful, header, file_size)
    quick = safetensors_header._parse_plain(header.decode(), len(header), "f.safetensors", file_size - 8 - len(header))
    assert (quick is not None) == (got[0] == "ok")


@pytest.mark.parametrize("spec", [Spec(), Spec(quant="fp8-static"), Spec(quant="ct-fp8-dynamic", experts=4,
                                                                             architecture="Qwen3MoeForCausalLM")])
def test_real_headers_take_the_quick_path_and_read_the_same(spec):
    header_bytes, data_len = encode_header(tensor_specs(spec))
    header = header_bytes[8:]
    file_size = len(header_bytes) + data_len
    quick = safetensors_header._parse_plain(header.decode(), len(header), "f.safetensors", data_len)
    assert quick is not None and quick == careful(header, file_size) == parse_header(header, "f.safetensors", file_size)


@pytest.mark.parametrize("text, data_len, message", [
    # A bool equals 1 in Python: a validated [1] must not vouch for [true].
    ('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[true],"data_offsets":[4,8]}}',
     8, "tensor 'b': shape must be a list"),
    ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[false,true]}}', 1,
     "tensor 'a': data_offsets must be two integers"),
    # -0 reads as 0 in Python, but safetensors (serde) reads it as a float.
    ('{"a":{"dtype":"F32","shape":[1],"data_offsets":[-0,4]}}', 4, "tensor 'a': data_offsets must be two integers"),
    # The duplicate's first value is dropped by a dict: a quick path reading dicts would not see it.
    ('{"a":5,"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', 4, "duplicate key 'a'"),
    ('{"__metadata__":{"x":"1","x":"2"},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', 4, "duplicate key 'x'"),
    ('{"a":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}}', 4, "duplicate key 'dtype'"),
    # {} iterates as no dimensions, like []: a scalar's signature must not vouch for an object shape.
    ('{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":{},"data_offsets":[4,8]}}',
     8, "tensor 'b': shape must be a list"),
    ('{"a":[["dtype","F32"],["shape",[1]],["data_offsets",[0,4]]]}', 4, "tensor 'a': entry must be an object"),
    ('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}',
     12, "data_offsets are not contiguous"),
    ('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}',
     6, "data_offsets overlap"),
    # A dict keeps one of each key: a duplicate must be refused however the key is written.
    ('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"d\\u0074ype":"F32"}}', 4, "duplicate key 'dtype'"),
    ('{"a" :{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}',
     4, "duplicate key 'a'"),
    ('{"__metadata__":{"x":{"y":"z"}},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', 4,
     "__metadata__ must be an object of string to string"),
    # '' iterates as no dimensions, like [].
    ('{"a":{"dtype":"F32","shape":"","data_offsets":[0,4]}}', 4, "tensor 'a': shape must be a list"),
    # A raw DEL is valid JSON in an ASCII text without escapes: the printable-names shortcut must not pass it.
    ('{"a\x7f":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', 4, "control or invisible characters"),
    # Raw non-ASCII, invisible: JSON allows it, the regex admits it, the printable check must refuse it.
    ('{"a\u200b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', 4, "control or invisible characters"),
    ('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1.0],"data_offsets":[4,8]}}',
     8, "tensor 'b': shape must be a list"),
    # Metadata written like an entry matches the entry pattern: it is still metadata, and not string to string.
    ('{"__metadata__":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],'
     '"data_offsets":[4,8]}}', 8, "__metadata__ must be an object of string to string"),
    # Plain entries, but: a name twice (offsets that tile once the dict keeps one), something between entries,
    # something after the closing brace, a leading zero, more than MAX_RANK dimensions.
    ('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}',
     8, "duplicate key 'a'"),
    ('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"x":1,"b":{"dtype":"F32","shape":[1],'
     '"data_offsets":[4,8]}}', 8, "tensor 'x': entry must be an object"),
    ('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}x', 4, "header is not valid JSON"),
    ('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,04]}}', 4, "header is not valid JSON"),
    ('{"a":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,4]}}', 4, "list of at most 8 integers"),
])
def test_headers_the_quick_path_must_refuse(text, data_len, message):
    header = text.encode()
    with pytest.raises(CheckpointFileError, match=re.escape(message)):
        parse_header(header, "f.safetensors", 8 + len(header) + data_len)
    assert safetensors_header._parse_plain(text, len(header), "f.safetensors", data_len) is None


def test_a_tensor_past_2_to_the_64_bits_is_refused_without_a_file_size():
    """With the file size unknown (a Hub header fetched alone) only the 2^64-bit bound stops a 2^63-byte tensor."""
    text = '{"a":{"dtype":"F32","shape":[2305843009213693952],"data_offsets":[0,9223372036854775808]}}'
    with pytest.raises(CheckpointFileError, match=re.escape("needs more than 2^64 bits")):
        parse_header(text.encode(), "f.safetensors", None)
    assert safetensors_header._parse_plain(text, len(text), "f.safetensors", None) is None


# --- the index against the shards ----------------------------------------------------------------------------


def reference_cross_check(weight_map, headers, index_name):
    """cross_check_index as it was before its quick path: every tensor looked up both ways."""
    errors = []
    by_file = {h.file: h for h in headers}
    for tensor, shard in weight_map.items():
        if tensor not in by_file[shard].tensors:
            errors.append(f"{index_name} lists tensor {tensor!r} in {shard}, but {shard} does not contain it")
    for header in headers:
        for tensor in header.tensors:
            listed = weight_map.get(tensor)
            if listed != header.file:
                where = f"lists it in {listed}" if listed else "does not list it"
                errors.append(f"{header.file} holds tensor {tensor!r} but {index_name} {where}")
    return errors


def headers_of(shards: dict[str, list[str]]) -> list[SafetensorsHeader]:
    return [SafetensorsHeader(f, 0, {}, {n: TensorInfo(n, "F32", (1,), 0, 4, f) for n in names})
            for f, names in shards.items()]


FILES = ["s1", "s2", "s3"]


@PROPERTY
@given(st.dictionaries(st.sampled_from(FILES), st.lists(st.sampled_from("abcdefg"), unique=True, max_size=4),
                       min_size=3, max_size=3),
       st.dictionaries(st.sampled_from("abcdefgh"), st.sampled_from(FILES), max_size=8))
def test_index_cross_check_matches_the_tensor_by_tensor_check(shards, extra):
    headers = headers_of(shards)
    true_map = {n: f for f, names in shards.items() for n in names}
    for weight_map in (true_map, {**true_map, **extra}, {k: v for k, v in true_map.items() if k not in extra}):
        assert cross_check_index(weight_map, headers, "index.json") == reference_cross_check(weight_map, headers,
                                                                                             "index.json")


def test_an_index_entry_pointing_at_the_wrong_shard_is_named(make_checkpoint):
    folder = make_checkpoint(quant="fp8-block", shards=4, data="sparse", experts=8,
                             architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe")
    path = os.path.join(folder, "model.safetensors.index.json")
    with open(path) as fh:
        index = json.load(fh)
    tensor = "model.layers.1.mlp.experts.5.down_proj.weight_scale_inv"
    right = index["weight_map"][tensor]
    wrong = next(f for f in sorted(set(index["weight_map"].values())) if f != right)
    index["weight_map"][tensor] = wrong
    with open(path, "w") as fh:
        json.dump(index, fh)
    errors = open_local(folder).integrity_errors
    assert errors == (
        f"model.safetensors.index.json lists tensor {tensor!r} in {wrong}, but {wrong} does not contain it",
        f"{right} holds tensor {tensor!r} but model.safetensors.index.json lists it in {wrong}",
    )


def test_a_tensor_in_two_shards_is_refused_naming_the_first_repeat():
    headers = headers_of({"s1": ["a", "b"], "s2": ["c", "b"], "s3": ["a"]})
    with pytest.raises(CheckpointFileError, match=r"s2: tensor 'b' also appears in s1"):
        merge_headers(headers)
    assert list(merge_headers(headers_of({"s1": ["a", "b"], "s2": ["c"]}))) == ["a", "b", "c"]


@pytest.mark.parametrize("weight_map, message", [
    ({"x": "ok.safetensors", "y": "../up.safetensors", "z": "../up.safetensors"},
     "a weight_map entry (y) = '../up.safetensors' points outside the model folder"),
    ({"x": "ok.safetensors", "y": ""}, 'weight_map[\'y\'] must be a file name, got ""'),
    ({"x": "ok.safetensors", "y": 3}, "weight_map['y'] must be a file name, got 3"),
])
def test_index_paths_are_still_refused_naming_a_tensor(weight_map, message):
    with pytest.raises(CheckpointFileError, match=re.escape(message)):
        parse_index({"weight_map": weight_map}, "model.safetensors.index.json")


# --- expert grouping: one regex per distinct tail ------------------------------------------------------------

EXPERT_NAME = re.compile(r"^(?P<moe>.+\.experts)\.(?:\d+\.)?[^.]+(?:\.[^.]+)?$")  # the definition being kept
SEGMENTS = ["model", "layers", "0", "3", "4", "mlp", "experts", "gate_proj", "w2", "weight", "weight_scale_inv", "",
            "\n", "٣"]


def reference_groups(names: list[str], skip_prefixes: tuple[str, ...]) -> tuple[dict, list]:
    """Which names are experts of which FusedMoE, and how many experts each has, by the regex on every name."""
    experts: dict[str, set] = {}
    skipped = []
    for name in names:
        if name.startswith(skip_prefixes):
            skipped.append(name)
        elif match := EXPERT_NAME.match(name):
            head = name[len(match.group("moe")) + 1:].split(".", 1)[0]
            experts.setdefault(match.group("moe"), set()).add(head if head.isdigit() else "fused")
            experts.setdefault(("tensors", match.group("moe")), set()).add(name)
    return experts, skipped


@PROPERTY
@given(st.lists(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=7).map(".".join), max_size=12, unique=True))
def test_expert_grouping_matches_the_regex_on_every_name(names):
    config = parse_model_config({"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
                                 "num_hidden_layers": 3, "num_nextn_predict_layers": 1})
    tensors = {n: TensorInfo(n, "BF16", (2, 2), 0, 8, "f") for n in names}
    layout = build_layout(tensors, config)
    want, skipped = reference_groups(names, ("model.layers.3.", "layers.3.", "model.language_model.layers.3."))
    got = {}
    for moe in layout.moes:
        got[moe.name] = moe.num_experts
        got[("tensors", moe.name)] = {t.name for t in moe.tensors}
    assert got == {k: (len(v) if isinstance(k, str) else v) for k, v in want.items()}
    assert all(moe.tails == tuple(t.name[len(moe.name) + 1:] for t in moe.tensors) for moe in layout.moes)
    in_moes = {t.name for moe in layout.moes for t in moe.tensors}
    assert layout.non_expert_names == tuple(n for n in names if n not in in_moes)
    assert sorted(t.name for s in layout.skipped for t in s.tensors) == sorted(skipped)


# --- FusedMoE layers checked once per structure --------------------------------------------------------------

DEEPSEEK = Spec(quant="fp8-block", architecture="DeepseekV3ForCausalLM", model_type="deepseek_v3",
                moe_style="deepseek", experts=256, shared_experts=1, first_k_dense=3, mla=True, q_lora_rank=256,
                kv_lora_rank=128, qk_rope_head_dim=64, hidden=512, heads=4, kv_heads=4, head_dim=128,
                intermediate=1024, moe_intermediate=256, layers=9, data="sparse")
QWEN3_MOE_CT = Spec(quant="ct-fp8-dynamic", architecture="Qwen3MoeForCausalLM", model_type="qwen3_moe", experts=8,
                    moe_intermediate=256, layers=4, data="sparse")


def inspect(folder, platform="h100"):
    return inspect_checkpoint(open_local(folder), InspectOptions(parse_platform(platform), select_profile("0.33")))


def inspect_both_ways(folder, monkeypatch):
    """(report with structural twins, report with every FusedMoE checked on its own)."""
    with_twins = inspect(folder)
    with monkeypatch.context() as patch:
        patch.setattr(moe_module, "_structure", lambda moe: [moe.name])  # no two FusedMoEs look alike
        alone = inspect(folder)
    return with_twins, alone


def write_broken(folder, spec: Spec, change) -> str:
    entries = tensor_specs(spec)
    change(entries)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as fh:
        json.dump(model_config(spec), fh)
    write_safetensors(os.path.join(folder, "model.safetensors"), entries, None)
    return folder


MISSING = "model.layers.7.mlp.experts.113.down_proj.weight_scale_inv"


@pytest.mark.parametrize("change, layer, error", [
    (lambda e: e.pop(MISSING), "model.layers.7.mlp.experts", f"{MISSING} is missing"),
    (lambda e: e.update({"model.layers.8.mlp.experts.200.gate_proj.weight": ("F8_E4M3", (384, 512))}),
     "model.layers.8.mlp.experts", "model.layers.8.mlp.experts.200.gate_proj.weight (model.safetensors) has shape"),
    (lambda e: e.update({"model.layers.5.mlp.experts.255.up_proj.weight": ("BF16", (256, 512))}),
     "model.layers.5.mlp.experts", "model.layers.5.mlp.experts.255.up_proj.weight (model.safetensors) is BF16"),
    (lambda e: e.update({"model.layers.6.mlp.experts.9.up_proj.weight_scale_inv": ("F32", (2, 3))}),
     "model.layers.6.mlp.experts", "model.layers.6.mlp.experts.9.up_proj.weight_scale_inv (model.safetensors) has "
                                   "shape [2, 3]"),
])
def test_one_bad_expert_among_256_in_a_later_layer_is_named(tmp_path, monkeypatch, change, layer, error):
    folder = write_broken(str(tmp_path / "ckpt"), DEEPSEEK, change)
    with_twins, alone = inspect_both_ways(folder, monkeypatch)
    assert with_twins == alone
    bad = [m for m in with_twins.moes if m.errors]
    assert [m.name for m in bad] == [layer] and bad[0].errors[0].startswith(error)
    assert [m.name for m in with_twins.moes] == [f"model.layers.{i}.mlp.experts" for i in range(3, 9)]


def test_a_layer_quantized_differently_is_checked_on_its_own(make_checkpoint, monkeypatch):
    """Same tensors in every layer, but the config ignores layer 2's experts: their FP8 weights would load unscaled,
    so layer 2 cannot lean on layer 1 having passed."""
    folder = make_checkpoint(QWEN3_MOE_CT)
    path = os.path.join(folder, "config.json")
    with open(path) as fh:
        config = json.load(fh)
    config["quantization_config"]["ignore"].append("re:model.layers.2.mlp.experts.*")
    with open(path, "w") as fh:
        json.dump(config, fh)
    with_twins, alone = inspect_both_ways(folder, monkeypatch)
    assert with_twins == alone
    (bad,) = [m for m in with_twins.moes if m.errors]
    assert bad.name == "model.layers.2.mlp.experts" and bad.scheme == moe_module.UNQUANTIZED_MOE
    assert len(bad.errors) == 8 * 3 and "model.layers.2.mlp.experts.7.down_proj.weight" in bad.errors[-1]


def test_clean_giant_shaped_layers_agree_with_and_without_twins(tmp_path, monkeypatch):
    folder = write_checkpoint(str(tmp_path / "ckpt"), DEEPSEEK, shards=5)
    with_twins, alone = inspect_both_ways(folder, monkeypatch)
    assert with_twins == alone and with_twins.ok and len(with_twins.moes) == 6


# --- memory: expert 0 picked by its tails, in C ----------------------------------------------------------------


@pytest.mark.parametrize("extra, distinct", [
    ({}, 1),
    ({"model.layers.4.mlp.experts.0.down_proj.bias": ("BF16", (512,))}, 2),
    ({"model.layers.4.mlp.experts.10.down_proj.bias": ("BF16", (512,))}, 1),  # '10.' is not expert 0
])
def test_memory_counts_expert_zero_as_its_names_say(tmp_path, extra, distinct):
    """footprint.experts against the definition it short-cuts: expert 0 is every tensor named '<FusedMoE>.0.*'."""
    folder = write_broken(str(tmp_path / "ckpt"), DEEPSEEK, lambda e: e.update(extra))
    ckpt = open_local(folder)
    layout = build_layout(ckpt.tensors, ckpt.config)
    footprint = weight_footprint(ckpt.tensors, ckpt.config, layout)
    want = []
    for moe in layout.moes:
        one = sum(stored_bytes(t, 2) for t in moe.tensors if t.name.startswith(f"{moe.name}.0."))
        want.append((moe.num_experts, one, one * moe.num_experts))
    assert [tuple(e) for e in footprint.experts] == want and len(set(want)) == distinct


# --- the paused collector ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fails", [False, True])
def test_paused_gc_restores_the_collector(fails):
    assert gc.isenabled()
    with pytest.raises(RuntimeError) if fails else contextlib.nullcontext():
        with paused_gc():
            assert not gc.isenabled()
            if fails:
                raise RuntimeError
    assert gc.isenabled()
