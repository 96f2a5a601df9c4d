"""Long fuzz run of everything `fp8check inspect` reads from a stranger: coverage-guided with atheris
(libFuzzer) when it is installed, else a plain seeded mutator. Results are recorded in bench/RESULTS.md.

    .venv/bin/pip install atheris                                   # optional; x86-64 wheels exist
    .venv/bin/python bench/fuzz.py -runs=100000 -seed=1             # atheris: libFuzzer flags pass through
    .venv/bin/python bench/fuzz.py --plain --runs 100000 --seed 1   # no atheris

Each input is one of five targets (its first byte chooses):
  length    safetensors_header.header_length on 8 bytes and a file size
  header    safetensors_header.parse_header on raw header bytes
  file      a whole .safetensors file (prefix + header + data) through header_length + parse_header, and
            through the safetensors library: a file that library refuses must be refused by fp8check too
  json      checkpoint.parse_model_config / parse_index, quant_config.parse_quant_config on any JSON
  pipeline  config.json + one .safetensors file through the whole inspect: parse, layout, routing on a
            platform / TP / vLLM profile the input picks, then JSON, Markdown and table rendering
Seeds are the malformed-input corpus (tests/corpus/build_corpus.py) and tiny valid checkpoints of every
synthetic quantization. A mutator that edits the JSON structurally (and re-fixes the length prefix half the
time) complements libFuzzer's byte mutations. InputError is a clean refusal; any other exception is a crash,
recorded (signature, count, first input saved) and the run goes on; so is an input slower than 1 s and raw
ESC in a rendered report. Stats go to --stats (JSON) every 2000 inputs and at the end.
"""

from __future__ import annotations

import os
import sys

# bench/inspect.py shadows the stdlib's `inspect` for scripts run from bench/.
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import argparse  # noqa: E402
import contextlib  # noqa: E402
import hashlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import struct  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from pathlib import Path  # noqa: E402

try:
    import atheris
except ImportError:  # the plain mutator needs nothing
    atheris = None

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("length", "header", "file", "json", "pipeline")
PLATFORMS = ("h100", "xpu", "cpu", "mi300x", "a100", "b200", "l40s", "rocm:gfx90a", "cuda:120", "t4")
PROFILES = ("latest", "0.27", "0.25")
INTERESTING = [0, -1, 1, 2, 3, 7, 8, 16, 128, 129, 2**31, 2**63, 2**64 - 1, 2**64, 10**12, -(2**63), None, True,
               False, 1.5, -0.0, "", "F4", "F8_E4M3", "F8_E8M0", "BF16", "F32", "C64", "\x1b[31m", "\ud800", [],
               {}, [128, 128], [128, 128, 128], [0, 0], [1], [10**6, 10**6], "re:(a+)+$", "re:.*", "re:(",
               "block", "group", "channel", "tensor", "token", "tensor_group", "fp8", "compressed-tensors",
               "static", "dynamic", "local", "float", "int", "Linear", "lm_head", "weight", "../x", "/etc/passwd",
               "model.layers.0.mlp.down_proj.weight_scale", "model.layers.0.mlp.down_proj.weight"]
ST = "model.safetensors"

with atheris.instrument_imports(include=["fp8check"]) if atheris else contextlib.nullcontext():
    from fp8check.core.checkpoint import local as checkpoint
    from fp8check.core.formats import registry as quant_config
    from fp8check.core.checkpoint import safetensors_header
    from fp8check.core.errors import InputError
    from fp8check.core.routing.inspect import inspect_checkpoint
    from fp8check.core.records import InspectOptions
    from fp8check.core.targets.platforms import parse_platform
    from fp8check.core.targets.profiles import select_profile
    from fp8check.cli import render
    from fp8check.core.report.documents import inspect_document
from rich.console import Console  # noqa: E402

from fp8check.synth import QUANTS, Spec, encode_header, model_config, tensor_specs  # noqa: E402


class Stats:
    def __init__(self, path: Path, artifacts: Path, runs: int | None, engine: str):
        self.path, self.artifacts, self.runs, self.engine = path, artifacts, runs, engine
        self.inputs = 0
        self.per_target = {t: {"inputs": 0, "refused": 0, "accepted": 0} for t in TARGETS}
        self.crashes: dict[str, dict] = {}
        self.findings: dict[str, dict] = {}   # disagreements with safetensors, slow inputs, raw ESC in reports
        self.start = time.time()
        self.slowest = 0.0

    def record(self, kind: dict, signature: str, data: bytes, detail: str) -> None:
        entry = kind.setdefault(signature, {"count": 0, "detail": detail[:500], "input": None})
        entry["count"] += 1
        if entry["input"] is None:
            self.artifacts.mkdir(parents=True, exist_ok=True)
            path = self.artifacts / (hashlib.sha1(data).hexdigest()[:16] + ".bin")
            path.write_bytes(data)
            entry["input"] = str(path)
            print(f"\n#{self.inputs} NEW {'CRASH' if kind is self.crashes else 'FINDING'} {signature}: "
                  f"{detail[:300]} -> {path}", flush=True)

    def dump(self, final: bool = False) -> None:
        doc = {"inputs": self.inputs, "seconds": round(time.time() - self.start, 1), "final": final,
               "engine": self.engine,
               "per_target": self.per_target, "crashes": self.crashes, "findings": self.findings,
               "slowest_input_s": round(self.slowest, 3)}
        self.path.write_text(json.dumps(doc, indent=1) + "\n")
        if final:
            print(json.dumps({k: v for k, v in doc.items() if k != "per_target"}, indent=1))
            print(json.dumps(doc["per_target"]))


STATS: Stats


# --- the targets ------------------------------------------------------------------------------------------


def target_length(payload: bytes) -> bool:
    size = int.from_bytes(payload[8:17], "little") if len(payload) > 8 else None
    safetensors_header.header_length(payload[:8], ST, size)
    return True


def target_header(payload: bytes) -> bool:
    parsed = safetensors_header.parse_header(payload, ST, None)
    safetensors_header.parse_header(payload, ST, 8 + len(payload) + max((t.end for t in parsed.tensors.values()),
                                                                       default=0))
    return True


def parse_file(blob: bytes) -> safetensors_header.SafetensorsHeader:
    n = safetensors_header.header_length(blob[:8], ST, len(blob))
    return safetensors_header.parse_header(blob[8:8 + n], ST, len(blob))


def target_file(payload: bytes) -> bool:
    try:
        parse_file(payload)
    except InputError:
        return False
    from safetensors import deserialize

    try:
        deserialize(payload)
    except Exception as exc:  # noqa: BLE001 - the library refused: fp8check accepted it, a disagreement
        STATS.record(STATS.findings, f"accepted-but-safetensors-refuses: {str(exc)[:80]}", b"\x02" + payload,
                     str(exc))
    return True


def target_json(payload: bytes) -> bool:
    try:
        doc = json.loads(payload)
    except (ValueError, RecursionError):
        return False
    accepted = False
    for parse in (checkpoint.parse_model_config, checkpoint.parse_index, quant_config.parse_quant_config):
        try:
            parse(doc)
            accepted = True
        except InputError:
            pass
    if isinstance(doc, dict):
        quant_config.parse_quant_config(doc.get("quantization_config"))
    return accepted


def target_pipeline(payload: bytes) -> bool:
    if len(payload) < 5:
        return False
    choice, cfg_len = payload[:3], int.from_bytes(payload[3:5], "little")
    config_bytes, blob = payload[5:5 + cfg_len], payload[5 + cfg_len:]
    config = checkpoint.parse_model_config(checkpoint.parse_json(config_bytes, "config.json"))
    header = parse_file(blob)
    if hasattr(checkpoint, "assemble_checkpoint"):
        ckpt = checkpoint.assemble_checkpoint("fuzz", config, [header])
    else:
        ckpt = checkpoint.Checkpoint(source="fuzz", config=config, tensors=checkpoint.merge_headers([header]),
                                     files=(ST,))
    options = InspectOptions(platform=parse_platform(PLATFORMS[choice[0] % len(PLATFORMS)]),
                             profile=select_profile(PROFILES[choice[1] % len(PROFILES)]), tp=1 + choice[2] % 16)
    report = inspect_checkpoint(ckpt, options)
    text = json.dumps(inspect_document(report))
    markdown = render.markdown(report)
    out = io.StringIO()
    render.table(report, Console(file=out, width=200, force_terminal=False), True)
    for kind, rendered in (("markdown", markdown), ("table", out.getvalue()), ("json", text)):
        if "\x1b" in rendered:
            STATS.record(STATS.findings, f"raw ESC in the {kind} report", b"\x04" + payload, rendered[:300])
    return True


TARGET_FUNCS = {"length": target_length, "header": target_header, "file": target_file, "json": target_json,
                "pipeline": target_pipeline}


def one_input(data: bytes) -> bool:
    """Run one input; True when its target accepted it (the plain mutator keeps those to go deeper)."""
    STATS.inputs += 1
    accepted = False
    if data:
        target = TARGETS[data[0] % len(TARGETS)]
        counts = STATS.per_target[target]
        counts["inputs"] += 1
        start = time.perf_counter()
        try:
            accepted = TARGET_FUNCS[target](data[1:])
            counts["accepted" if accepted else "refused"] += 1
        except InputError as exc:
            counts["refused"] += 1
            message = str(exc)
            if "\n" in message or "\x1b" in message:
                STATS.record(STATS.findings, "error message not one clean line", data, message)
        except Exception as exc:  # noqa: BLE001 - this is what the fuzzer is looking for
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if "fp8check" in f.filename]
            where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
            STATS.record(STATS.crashes, f"{type(exc).__name__} at {where} ({target})", data,
                         f"{type(exc).__name__}: {exc}")
        elapsed = time.perf_counter() - start
        STATS.slowest = max(STATS.slowest, elapsed)
        if elapsed > 1.0:
            STATS.record(STATS.findings, f"slow input ({target})", data, f"{elapsed:.1f} s")
    if STATS.inputs % 2000 == 0:
        STATS.dump()
    if STATS.runs and STATS.inputs >= STATS.runs:
        STATS.dump(final=True)
    return accepted


# --- seeds and mutation -------------------------------------------------------------------------------------


def pipeline_input(config: bytes, blob: bytes, choice: bytes = b"\x00\x00\x00") -> bytes:
    return bytes([TARGETS.index("pipeline")]) + choice + struct.pack("<H", len(config)) + config + blob


def seeds() -> list[bytes]:
    """The corpus cases and tiny valid checkpoints, as inputs of every target they fit."""
    sys.path.insert(0, str(ROOT / "tests" / "corpus"))
    import build_corpus

    out: list[bytes] = []
    tag = {t: bytes([i]) for i, t in enumerate(TARGETS)}
    with tempfile.TemporaryDirectory() as tmp:
        build_corpus.build(Path(tmp) / "corpus")
        for folder in sorted((Path(tmp) / "corpus").iterdir()):
            files = {p.name: p.read_bytes() for p in folder.glob("*")
                     if p.is_file() and not p.is_symlink() and p.stat().st_size < 65536}
            for name, data in files.items():
                if name.endswith(".json"):
                    out.append(tag["json"] + data)
                if name.endswith(".safetensors"):
                    out += [tag["file"] + data, tag["header"] + data[8:], tag["length"] + data[:8] + bytes(8)]
            if "config.json" in files and ST in files:
                out.append(pipeline_input(files["config.json"], files[ST]))
    for i, quant in enumerate(QUANTS):
        for spec in (Spec(quant=quant, hidden=16, intermediate=16, layers=1, heads=2, kv_heads=2, vocab=4,
                          block=(8, 8)), Spec(quant=quant, hidden=32, intermediate=64, layers=2, heads=4,
                                              kv_heads=2, vocab=8, block=(16, 16), experts=2 * (i % 2))):
            head, size = encode_header(tensor_specs(spec))
            blob = head + bytes(size)
            config = json.dumps(model_config(spec), separators=(",", ":")).encode()
            out += [pipeline_input(config, blob, bytes([i, i, i])), tag["json"] + config, tag["file"] + blob,
                    tag["header"] + head[8:], tag["length"] + head[:8] + struct.pack("<Q", len(blob))]
    return out


def _mutate_json(doc, rng: random.Random, depth: int = 0):
    if isinstance(doc, dict) and doc and depth < 8 and rng.random() < 0.7:
        key = rng.choice(list(doc))
        action = rng.random()
        if action < 0.15:
            return {k: v for k, v in doc.items() if k != key}
        if action < 0.3:
            return {**doc, rng.choice(INTERESTING[40:]) if rng.random() < 0.5 else key + "x": rng.choice(INTERESTING)}
        return {**doc, key: _mutate_json(doc[key], rng, depth + 1)}
    if isinstance(doc, list) and doc and depth < 8 and rng.random() < 0.7:
        i = rng.randrange(len(doc))
        if rng.random() < 0.2:
            return doc[:i] + doc[i + 1:]
        if rng.random() < 0.2:
            return doc + [rng.choice(INTERESTING)]
        return doc[:i] + [_mutate_json(doc[i], rng, depth + 1)] + doc[i + 1:]
    if isinstance(doc, int) and not isinstance(doc, bool) and rng.random() < 0.5:
        return rng.choice([doc + 1, doc - 1, doc * 2, -doc, doc * 10**6, 0])
    return rng.choice(INTERESTING)


def _json_edit(raw: bytes, rng: random.Random) -> bytes | None:
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return json.dumps(_mutate_json(doc, rng)).encode()


SUFFIXES = ("weight", "weight_scale", "weight_scale_inv", "input_scale", "bias", "weight_zero_point")
DIMS = (0, 1, 2, 3, 7, 8, 16, 17, 32, 64, 128, 129, 256)


def relayout(blob: bytes, rng: random.Random) -> bytes | None:
    """Edit a file's tensors (shape, dtype, name, add, drop), then lay the offsets out validly again: valid
    files with odd shapes, which reach layout, integrity and routing instead of stopping at the header."""
    try:
        n = int.from_bytes(blob[:8], "little")
        doc = json.loads(blob[8:8 + n])
        tensors = {k: v for k, v in doc.items() if k != "__metadata__" and isinstance(v, dict)}
    except (ValueError, RecursionError, AttributeError):
        return None
    if not tensors:
        return None
    name = rng.choice(sorted(tensors))
    entry = dict(tensors[name])
    action = rng.randrange(6)
    if action == 0:
        entry["shape"] = [rng.choice(DIMS) for _ in range(rng.choice((0, 1, 2, 2, 2, 3)))]
    elif action == 1 and isinstance(entry.get("shape"), list) and entry["shape"]:
        shape = list(entry["shape"])
        shape[rng.randrange(len(shape))] = rng.choice(DIMS)
        entry["shape"] = shape
    elif action == 2:
        entry["dtype"] = rng.choice(sorted(safetensors_header.DTYPE_BITS))
    elif action == 3:
        del tensors[name]
        name = name.rsplit(".", 1)[0] + "." + rng.choice(SUFFIXES)
    elif action == 4:
        del tensors[name]
    else:
        name = name.replace("layers.0", f"layers.{rng.randrange(3)}").replace("mlp.", rng.choice(
            ("mlp.", "mlp.experts.0.", "mlp.experts.1.", "self_attn.", "mlp.shared_expert.")), 1)
    if action != 4:
        tensors[name] = entry
    out, offset = {}, 0
    for key, info in tensors.items():
        shape, dtype = info.get("shape"), info.get("dtype")
        if (not isinstance(shape, list) or not all(type(d) is int and 0 <= d < 1 << 20 for d in shape)
                or not isinstance(dtype, str) or dtype not in safetensors_header.DTYPE_BITS):
            return None
        nbits = safetensors_header.DTYPE_BITS[dtype]
        for d in shape:
            nbits *= d
        if nbits % 8 or nbits > 8 << 20:
            return None
        out[key] = {**info, "data_offsets": [offset, offset + nbits // 8]}
        offset += nbits // 8
    header = json.dumps(out).encode()
    return struct.pack("<Q", len(header)) + header + bytes(offset)


def structural_mutate(data: bytes, rng: random.Random) -> bytes | None:
    """Edit the JSON inside an input (config, index, header), keeping its framing valid most of the time."""
    if not data:
        return None
    target, payload = TARGETS[data[0] % len(TARGETS)], data[1:]
    if target in ("json", "header"):
        edited = _json_edit(payload, rng)
        return None if edited is None else data[:1] + edited
    if target == "file" and len(payload) >= 8 and rng.random() < 0.5:
        blob = relayout(payload, rng)
        return None if blob is None else data[:1] + blob
    if target == "file" and len(payload) >= 8:
        n = int.from_bytes(payload[:8], "little")
        edited = _json_edit(payload[8:8 + n], rng)
        if edited is None:
            return None
        length = len(edited) if rng.random() < 0.8 else n
        return data[:1] + struct.pack("<Q", length) + edited + payload[8 + n:]
    if target == "pipeline" and len(payload) >= 5:
        cfg_len = int.from_bytes(payload[3:5], "little")
        config, blob = payload[5:5 + cfg_len], payload[5 + cfg_len:]
        choice = bytes(rng.randrange(256) for _ in range(3)) if rng.random() < 0.2 else payload[:3]
        action = rng.random()
        if action < 0.4:
            config = _json_edit(config, rng) or config
        elif action < 0.8:
            blob = relayout(blob, rng) or blob
        elif len(blob) >= 8:
            n = int.from_bytes(blob[:8], "little")
            header = _json_edit(blob[8:8 + n], rng)
            if header is not None:
                blob = struct.pack("<Q", len(header)) + header + blob[8 + n:]
        return data[:1] + choice + struct.pack("<H", min(len(config), 65535)) + config + blob
    return None


def byte_mutate(data: bytes, rng: random.Random) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randrange(len(buf) + 1)
        kind = rng.randrange(5)
        if kind == 0 and buf:
            buf[min(pos, len(buf) - 1)] ^= 1 << rng.randrange(8)
        elif kind == 1 and buf:
            buf[min(pos, len(buf) - 1)] = rng.choice(b'{}[]",:-0123456789eE. \x00\x1b\xff')
        elif kind == 2:
            buf[pos:pos] = rng.choice([b'"', b",", b"9" * 20, b"-", b"[", b"NaN", b"\\ud800", b"{}"])
        elif kind == 3:
            del buf[pos:pos + rng.randint(1, 16)]
        else:
            buf += bytes(rng.randint(1, 32))
    return bytes(buf)


def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
    rng = random.Random(seed)
    if rng.random() < 0.5:
        mutated = structural_mutate(data, rng)
        if mutated is not None and len(mutated) <= max_size:
            return mutated
    return atheris.Mutate(data, max_size)


# --- main ---------------------------------------------------------------------------------------------------


def main() -> None:
    global STATS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plain", action="store_true", help="the seeded mutator without atheris")
    parser.add_argument("--runs", type=int, default=100_000, help="inputs (plain mode; atheris takes -runs=N)")
    parser.add_argument("--seed", type=int, default=1, help="plain mode's seed (atheris takes -seed=N)")
    parser.add_argument("--stats", default=os.path.join(tempfile.gettempdir(), "fp8check-fuzz", "stats.json"))
    parser.add_argument("--artifacts", default=os.path.join(tempfile.gettempdir(), "fp8check-fuzz", "inputs"))
    args, libfuzzer_args = parser.parse_known_args()
    runs = next((int(a.split("=", 1)[1]) for a in libfuzzer_args if a.startswith("-runs=")), None)
    stats_path = Path(args.stats)
    stats_path.parent.mkdir(parents=True, exist_ok=True)
    plain = args.plain or atheris is None
    STATS = Stats(stats_path, Path(args.artifacts), args.runs if plain else runs,
                  "plain" if plain else f"atheris (libFuzzer) {' '.join(libfuzzer_args)}")
    seed_inputs = seeds()
    print(f"{len(seed_inputs)} seed inputs; engine: {STATS.engine}", flush=True)
    if plain:
        rng = random.Random(args.seed)
        pools: dict[int, list[bytes]] = {}
        for data in seed_inputs:
            pools.setdefault(data[0] % len(TARGETS), []).append(data)
        seeded = {t: len(pool) for t, pool in pools.items()}
        for _ in range(args.runs):
            target = rng.randrange(len(TARGETS))  # every target gets a fair share, however cheap its inputs
            pool = pools[target]
            data = rng.choice(pool)
            for _ in range(rng.randint(1, 2)):
                data = (structural_mutate(data, rng) if rng.random() < 0.7 else None) or byte_mutate(data, rng)
            data = bytes([target]) + data[1:]
            if one_input(data) or rng.random() < 0.02:  # keep accepted mutants (and a few others): go deeper
                if len(pool) < 5000:
                    pool.append(data)
                else:
                    pool[rng.randrange(seeded[target], len(pool))] = data
        return
    corpus_dir = Path(tempfile.mkdtemp(prefix="fp8check-fuzz-corpus-"))
    for data in seed_inputs:
        (corpus_dir / hashlib.sha1(data).hexdigest()).write_bytes(data)
    atheris.Setup([sys.argv[0], *libfuzzer_args, str(corpus_dir)], lambda data: None if one_input(data) else None,
                  custom_mutator=custom_mutator)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
