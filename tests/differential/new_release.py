"""The release procedure as code: a new vLLM release against fp8check's newest rules, and what changed in vLLM.

    python tests/differential/new_release.py 0.35.0 [--base 0.34.0] [--markdown FILE] [--platforms p,q]
        [--families a,b] [--jobs 2]

1. Fetches the release's wheel (`pip download vllm==X --no-deps` into $FP8CHECK_VLLM_WHEELS/X, default
   /tmp/vllm-wheels) and unzips it without its compiled `.so` files into $FP8CHECK_VLLM_SRC/X, unless it is there
   (the base release too).
2. Runs every differential suite on it: the linear layers and front door (run.py's linear_suite) and the whole
   model with attention and the KV cache (whole_model.py's whole_model_suite), fp8check's side with the release's
   own rule profile or, for a release newer than fp8check's newest, the newest standing in.
3. Lists every disagreement, grouped by kind (front door, scheme, kernel, error text, MoE, attention, KV cache,
   module set, ...), identical ones counted together with where they occur.
4. Beside that, a definition-level diff of the FP8-relevant parts of the two wheels (AREAS): for every top-level
   and class-level definition (function, class, constant, enum member) that was added, removed or changed, how:
   its string literals (error texts included, the f-string's fields as {expr}), its members (a list, a Literal,
   an enum), or its code; the model registry's architectures added, removed or moved; model files changed.
5. Prints one Markdown report (--markdown FILE writes it too) and exits 0 only when both suites pass (every row
   agrees or is a difference the suites list: post-load predictions, EXPLAINED, OPEN).
Once the release has its rule profile, `vllm_registry.py --write` (beside this file) records its registry.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import glob
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import defaultdict
from typing import NamedTuple

from packaging.version import Version

from fp8check.core.errors import InputError
from fp8check.core.targets.profiles import LATEST

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  # isort: skip  (the suites, beside this file)
import whole_model  # noqa: E402  # isort: skip

WHEELS = os.environ.get("FP8CHECK_VLLM_WHEELS", "/tmp/vllm-wheels")


# ---------------------------------------------------------------------------------------------------------------
# 1. The wheels

def unzip_without_compiled(wheel: str, dest: str) -> None:
    """The wheel's files but its compiled libraries (name.so, name.so.1) into `dest`, which appears whole or not
    at all (extracted beside it, then renamed)."""
    staging = tempfile.mkdtemp(prefix=".unzip-", dir=os.path.dirname(os.path.abspath(dest)))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(staging, [name for name in archive.namelist()
                                     if not re.search(r"\.so(\.\d+)*$", name)])
    os.rename(staging, dest)


def ensure_release(version: str, src: str = run.SRC, wheels: str = WHEELS) -> str:
    """$src/<version>, unzipped from its PyPI wheel (downloaded into $wheels/<version>) if it is not there yet."""
    root = os.path.join(src, version)
    if os.path.isdir(os.path.join(root, "vllm")):
        return root
    folder = os.path.join(wheels, version)
    found = glob.glob(os.path.join(folder, "vllm-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", f"vllm=={version}", "--no-deps", "-d", folder],
                       check=True)
        found = glob.glob(os.path.join(folder, "vllm-*.whl"))
    os.makedirs(src, exist_ok=True)
    unzip_without_compiled(found[0], root)
    return root


def previous_release(version: str, src: str = run.SRC) -> str | None:
    """The newest release unzipped under `src` that is older than `version` (--base's default)."""
    older = [name for name in os.listdir(src) if re.fullmatch(r"\d+\.\d+\.\d+", name) and
             Version(name) < Version(version)] if os.path.isdir(src) else []
    return max(older, key=Version, default=None)


# ---------------------------------------------------------------------------------------------------------------
# 3. The disagreements, by kind

class Group(NamedTuple):
    """Identical disagreements (same kind and parts, and the same answers on both sides or, for error texts, the
    same words where the texts part) and where they occur."""

    kind: str
    differs: tuple[str, ...]
    detail: str                  # where the error texts part (run.divergence), or ""
    ours: str                    # the first row's answers
    theirs: str
    rows: int
    platforms: tuple[str, ...]
    cases: tuple[str, ...]
    modules: tuple[str, ...]


# A disagreement's kind by the first part that differs (the order of the report): the module's own parts.
PART_KINDS = (("scheme", "scheme"), ("kernel", "kernel"), ("class", "layer class"),
              ("error", "error (one side only)"), ("error text", "error text"))
KIND_ORDER = ("harness", "front door", "model build", "module set", "scheme", "kernel", "layer class",
              "error (one side only)", "error text", "MoE", "attention", "KV cache", "other")


def kind_of(difference: run.Difference) -> str:
    """What a disagreement is about: the harness (vLLM did not start), the front door, the model build (one side
    refuses the model), the module set (a module only one side builds), MoE (an experts layer's method, experts
    class or backend), the KV cache (an attention layer's KV cache dtype or KV method), attention (its backend),
    or a linear layer's scheme / kernel / class / error (other: a part this list does not name yet)."""
    if difference.kind in ("harness", run.FRONT_DOOR_ROW):
        return difference.kind
    if difference.kind == "model":
        return "model build"
    if {"only in vLLM", "only in fp8check"} & set(difference.differs):
        return "module set"
    if difference.kind == "moe":
        return "MoE"
    if difference.kind == "attention":
        return "KV cache" if {"kv cache dtype", "kv method"} & set(difference.differs) else "attention"
    return next((kind for part, kind in PART_KINDS if part in difference.differs), "other")


def _module_pattern(name: str) -> str:
    """A module name with its layer and expert indices as N: layers 0 and 1 disagree the same way."""
    return re.sub(r"\.\d+(?=\.|$)", ".N", name)


def group(differences: list[run.Difference]) -> dict[str, list[Group]]:
    """The disagreements (verdict "differs") by kind, in KIND_ORDER, identical ones together, most rows first."""
    rows: dict[tuple, list[run.Difference]] = defaultdict(list)
    for d in differences:
        if d.verdict == "differs":
            rows[(kind_of(d), d.differs, d.detail) + (() if d.detail else (d.ours, d.theirs))].append(d)
    out: dict[str, list[Group]] = {}
    for (kind, differs, detail, *_), same in rows.items():
        out.setdefault(kind, []).append(Group(
            kind, differs, detail, same[0].ours, same[0].theirs, len(same),
            tuple(sorted({d.platform for d in same})), tuple(sorted({d.case for d in same})),
            tuple(sorted({_module_pattern(d.module) for d in same}))))
    return {kind: sorted(out[kind], key=lambda g: (-g.rows, g.ours, g.theirs))
            for kind in sorted(out, key=KIND_ORDER.index)}


# ---------------------------------------------------------------------------------------------------------------
# 4. What changed in vLLM: definitions, compared by their syntax trees

class Area(NamedTuple):
    """An FP8-relevant part of vLLM's tree: files (glob patterns under vllm/), and which definitions count."""

    name: str
    patterns: tuple[str, ...]
    members: str | None = None     # a regular expression a definition's name must match (None: every one)
    detail: bool = True            # False: name the changed definitions only (model files)


AREAS = (
    Area("linear kernels", ("model_executor/kernels/linear/__init__.py", "model_executor/kernels/linear/scaled_mm/*.py")),
    Area("quantization configs", ("model_executor/layers/quantization/*.py",
                                  "model_executor/layers/quantization/online/*.py",
                                  "model_executor/layers/quantization/compressed_tensors/**/*.py",
                                  "model_executor/layers/quantization/quark/**/*.py",
                                  "model_executor/layers/quantization/utils/*fp8*.py", "config/quantization.py")),
    Area("MoE oracle", ("model_executor/layers/fused_moe/oracle/*.py",)),
    Area("platforms", ("platforms/*.py",)),
    Area("attention backend registry", ("v1/attention/backends/registry.py", "v1/attention/selector.py",
                                        "v1/attention/backend.py")),
    # Each backend's capability answers (supports_*, validate_configuration, ...) and name, not its kernels.
    Area("attention backends", ("v1/attention/backends/*.py", "v1/attention/backends/mla/*.py"),
         members=r"(^|\.)(supports_\w*|get_supported_\w*|validate_configuration|get_name|get_preferred_block_size|"
                 r"is_\w*|get_min\w*)$"),
    Area("attention layers", ("model_executor/layers/attention/attention.py",
                              "model_executor/layers/attention/mla_attention.py")),
    Area("cache config (CacheDType)", ("config/cache.py",)),
    Area("model files", ("model_executor/models/*.py", "models/**/*.py"), detail=False),
)
REGISTRY = "model_executor/models/registry.py"
IMPORTS = "(imports)"
MODULE_BODY = "(module body)"
FILE = "(file)"  # the first change of a file added or removed


class Definition(NamedTuple):
    code: str                      # ast.unparse without docstrings: formatting and comments do not count
    literals: tuple[str, ...]      # string literals in order, f-strings with their fields as {expr}
    members: tuple[str, ...] | None  # a constant's elements: a list / tuple / set / Literal[...] of constants


class Change(NamedTuple):
    name: str                      # Class.method, CONSTANT, function, (imports), (module body)
    how: str                       # added | removed | changed
    details: tuple[str, ...] = ()


class _NoDocstrings(ast.NodeTransformer):
    """Drops every bare string statement: docstrings, and the attribute docstrings under a config's fields."""

    def visit_body_owner(self, node):
        self.generic_visit(node)
        node.body = [n for n in node.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
                                                  and isinstance(n.value.value, str))] or [ast.Pass()]
        return node

    visit_Module = visit_ClassDef = visit_FunctionDef = visit_AsyncFunctionDef = visit_body_owner


def _text(node: ast.JoinedStr) -> str:
    return "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}" for v in node.values)


def literals(node: ast.AST) -> tuple[str, ...]:
    """Every string literal under `node`, in source order; an f-string as one text with {expr} for its fields."""
    out: list[str] = []

    def walk(n: ast.AST) -> None:
        if isinstance(n, ast.JoinedStr):
            out.append(_text(n))
            return
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.append(n.value)
        for child in ast.iter_child_nodes(n):
            walk(child)

    walk(node)
    return tuple(out)


def _members(value: ast.AST | None) -> tuple[str, ...] | None:
    """The elements of a collection of constants (["a", "b"], Literal["a", "b"]), or None."""
    if isinstance(value, ast.Subscript):
        value = value.slice
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)) and value.elts and \
            all(isinstance(e, ast.Constant) for e in value.elts):
        return tuple(repr(e.value) for e in value.elts)
    return None


def _definition(nodes: list[ast.AST], value: ast.AST | None = None) -> Definition:
    return Definition("\n".join(ast.unparse(n) for n in nodes), tuple(lit for n in nodes for lit in literals(n)),
                      _members(value))


def _targets(node: ast.AST) -> list[str] | None:
    """The names an assignment binds, or None for another statement."""
    if isinstance(node, ast.Assign):
        names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        return names if all(isinstance(t, (ast.Name, ast.Tuple)) for t in node.targets) else None
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
        return [node.target.id]
    return None


def definitions(source: str) -> dict[str, Definition]:
    """The top-level and class-level definitions of a module: functions, classes (their header and body outside
    their members), methods, constants and class attributes (enum members), the imports, and the rest of the
    module body, each by name."""
    tree = _NoDocstrings().visit(ast.parse(source))
    found: dict[str, list[ast.AST]] = defaultdict(list)
    values: dict[str, ast.AST | None] = {}

    def collect(body: list[ast.AST], prefix: str, rest: str) -> None:
        for node in body:
            names = _targets(node)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[prefix + node.name].append(node)
            elif isinstance(node, ast.ClassDef) and not prefix:
                header = ast.ClassDef(node.name, node.bases, node.keywords, [ast.Pass()], node.decorator_list,
                                      **({"type_params": node.type_params} if hasattr(node, "type_params") else {}))
                found[node.name].append(header)
                collect(node.body, node.name + ".", node.name)
            elif isinstance(node, ast.ClassDef):
                found[prefix + node.name].append(node)
            elif names:
                for name in names:
                    found[prefix + name].append(node)
                    values[prefix + name] = node.value
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and not prefix:
                found[IMPORTS].append(node)
            elif not (isinstance(node, ast.Pass) and prefix):
                found[rest].append(node)

    collect(tree.body, "", MODULE_BODY)
    return {name: _definition(nodes, values.get(name) if len(nodes) == 1 else None) for name, nodes in found.items()}


def _quote(text: str, limit: int = 240) -> str:
    text = text if len(text) <= limit else text[:limit] + "…"
    return "`" + text.replace("`", "'").replace("\n", "\\n") + "`"


CODE_LINES = 12  # at most this many changed lines of code per definition


def describe(old: Definition, new: Definition) -> tuple[str, ...]:
    """How a definition changed: its members, its string literals, and its code (the lines that differ)."""
    if old.members is not None and new.members is not None:  # a list / Literal of constants: its elements say it
        gone = [m for m in old.members if m not in new.members]
        came = [m for m in new.members if m not in old.members]
        return ("members: " + ", ".join([f"+{m}" for m in came] + [f"-{m}" for m in gone])
                if gone or came else "members: the same, reordered",)
    details = []
    gone = [lit for lit in dict.fromkeys(old.literals) if lit not in new.literals]
    came = [lit for lit in dict.fromkeys(new.literals) if lit not in old.literals]
    details += [f"text removed: {_quote(lit)}" for lit in gone] + [f"text added: {_quote(lit)}" for lit in came]
    old_lines, new_lines = old.code.splitlines(), new.code.splitlines()
    if len(old_lines) == len(new_lines) == 1:
        details.append(f"{_quote(old.code)} → {_quote(new.code)}")
    else:
        changed = [line for line in difflib.unified_diff(old_lines, new_lines, lineterm="", n=0)
                   if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        shown = [f"code: {_quote(line.strip()[:1] + ' ' + line[1:].strip(), 160)}" for line in changed[:CODE_LINES]]
        details += shown + ([f"code: … {len(changed) - CODE_LINES} more changed lines"]
                            if len(changed) > CODE_LINES else [])
    return tuple(details)


def diff_sources(old: str | None, new: str | None, members: str | None = None, detail: bool = True
                 ) -> list[Change]:
    """The definitions added, removed or changed between two versions of a module (None: the file is absent),
    those whose name matches `members` only; with `detail`, how each changed."""
    before = definitions(old) if old is not None else {}
    after = definitions(new) if new is not None else {}
    changes = []
    for name in dict.fromkeys([*before, *after]):
        if members is not None and not re.search(members, name):
            continue
        if name not in after:
            changes.append(Change(name, "removed"))
        elif name not in before:
            changes.append(Change(name, "added", describe(Definition("", (), None), after[name])[:CODE_LINES]
                                  if detail and name not in (IMPORTS, MODULE_BODY) else ()))
        elif before[name] != after[name]:
            changes.append(Change(name, "changed", describe(before[name], after[name]) if detail else ()))
    return changes


def _read(root: str, relative: str) -> str | None:
    path = os.path.join(root, relative)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as fh:
        return fh.read()


def diff_area(old_root: str, new_root: str, area: Area) -> dict[str, list[Change]]:
    """Per file of the area (paths under vllm/), its changed definitions; a file added or removed says so."""
    files = sorted({os.path.relpath(path, root) for root in (old_root, new_root) for pattern in area.patterns
                    for path in glob.glob(os.path.join(root, pattern), recursive=True)})
    out = {}
    for relative in files:
        old, new = _read(old_root, relative), _read(new_root, relative)
        if old == new:
            continue
        changes = diff_sources(old, new, area.members, area.detail)
        if old is None or new is None:
            changes.insert(0, Change(FILE, "added" if old is None else "removed"))
        if changes:
            out[relative] = changes
    return out


def registry_entries(source: str) -> dict[str, set[tuple[str, str]]]:
    """model_executor/models/registry.py's architectures: name -> {(table, its (module, class) entry)}, over
    every module-level dict literal of the file (_TEXT_GENERATION_MODELS, _TRANSFORMERS_SUPPORTED_MODELS,
    _PREVIOUSLY_SUPPORTED_MODELS, ...; `**other` merges are not entries)."""
    entries: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for node in ast.parse(source).body:
        names = _targets(node)
        if names and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    entries[key.value].add((names[0], ast.unparse(value)))
    return entries


def diff_registry(old: str, new: str) -> list[str]:
    """Architectures added, removed or moved (another table or another module / class)."""
    before, after = registry_entries(old), registry_entries(new)

    def show(entries: set[tuple[str, str]]) -> str:
        return "; ".join(f"{table} {value}" for table, value in sorted(entries))

    out = []
    for name in sorted(set(before) | set(after)):
        if name not in after:
            out.append(f"`{name}` removed (was {show(before[name])})")
        elif name not in before:
            out.append(f"`{name}` added: {show(after[name])}")
        elif before[name] != after[name]:
            out.append(f"`{name}` moved: {show(before[name])} → {show(after[name])}")
    return out


def vllm_diff(old_root: str, new_root: str) -> tuple[list[tuple[Area, dict[str, list[Change]]]], list[str]]:
    """(each area with its files' changes; the registry's architectures added / removed / moved), between two
    unzipped releases' vllm/ trees."""
    areas = [(area, diff_area(old_root, new_root, area)) for area in AREAS]
    return areas, diff_registry(_read(old_root, REGISTRY) or "", _read(new_root, REGISTRY) or "")


# ---------------------------------------------------------------------------------------------------------------
# 5. The report

def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _some(items: tuple[str, ...], limit: int = 4) -> str:
    return ", ".join(items[:limit]) + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def disagreements_markdown(groups: dict[str, list[Group]]) -> str:
    if not groups:
        return "None: every compared row agrees or is a difference the suites list.\n"
    out = []
    for kind, items in groups.items():
        out += [f"### {kind} ({sum(g.rows for g in items)} rows, {len(items)} distinct)", "",
                "| rows | differs | where the error texts part | fp8check | vLLM | platforms | cases | modules |",
                "|---|---|---|---|---|---|---|---|"]
        out += [f"| {g.rows} | {', '.join(g.differs)} | {_cell(g.detail)} | {_cell(g.ours)} | {_cell(g.theirs)} | "
                f"{', '.join(g.platforms)} | {_cell(_some(g.cases))} | {_cell(_some(g.modules))} |" for g in items]
        out.append("")
    return "\n".join(out)


def changes_markdown(areas: list[tuple[Area, dict[str, list[Change]]]], registry: list[str]) -> str:
    out = []
    for area, files in areas:
        out += [f"### {area.name}", ""]
        if not files:
            out += ["No definition changed.", ""]
        for relative, changes in files.items():
            if not area.detail and changes[0].name == FILE:
                out.append(f"- `{relative}`: file {changes[0].how} ({len(changes) - 1} definitions)")
                continue
            if not area.detail:  # one line per file: which definitions
                out.append(f"- `{relative}`: " + "; ".join(
                    f"{how} " + _some(tuple(c.name for c in changes if c.how == how), 8)
                    for how in ("added", "removed", "changed") if any(c.how == how for c in changes)))
                continue
            out.append(f"- `{relative}`")
            for change in changes:
                out.append(f"  - `{change.name}` {change.how}")
                out += [f"    - {line}" for line in change.details]
        out.append("")
    out += ["### model registry (model_executor/models/registry.py)", ""]
    out += [f"- {line}" for line in registry] or ["No architecture added, removed or moved."]
    return "\n".join(out) + "\n"


def report(version: str, base: str, stand_in: str, suites: dict[str, run.Suite], areas, registry: list[str],
           timings: dict[str, float]) -> str:
    passed = all(s.passed for s in suites.values())
    differences = [d for s in suites.values() for d in s.differences]
    lines = [f"# vLLM {version} against fp8check (base {base})", "",
             f"- fp8check's rule profile: {stand_in}",
             "- suites: " + "; ".join(f"{name} {'passes' if s.passed else 'DISAGREES'}" for name, s in suites.items()),
             f"- verdict: {'every suite agrees' if passed else 'disagreements below'}",
             "- time: " + ", ".join(f"{step} {seconds / 60:.1f} min" for step, seconds in timings.items()), "",
             "## Disagreements by kind", "", disagreements_markdown(group(differences)),
             f"## What changed from {base} to {version} (FP8-relevant definitions)", "", changes_markdown(areas, registry),
             "## Suite tables", ""]
    for name, suite in suites.items():
        lines += [f"### {name}", "", suite.tables, ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("version", help="the new vLLM release, e.g. 0.35.0")
    parser.add_argument("--base", help="the release to diff against (default: the newest older one unzipped)")
    parser.add_argument("--platforms", help="narrow both suites to these platforms")
    parser.add_argument("--families", help="narrow the whole-model suite to these architectures")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--markdown", help="write the report to this file")
    args = parser.parse_args()
    timings: dict[str, float] = {}
    began = start = time.monotonic()
    new_root = ensure_release(args.version)
    base = args.base or previous_release(args.version)
    if base is None:
        parser.error(f"no release older than {args.version} under {run.SRC}: pass --base")
    old_root = ensure_release(base)
    timings["wheels"] = time.monotonic() - start
    try:
        label = f"{run.profile_for(args.version).name} (the release's own)"
    except InputError:  # newer than fp8check's newest profile
        label = f"{LATEST.name}, standing in (fp8check has no profile for {args.version})"
    linear_platforms = tuple(dict.fromkeys(run.PLATFORMS + run.FORMAT_PLATFORMS))
    wanted = args.platforms.split(",") if args.platforms else None
    suites = {}
    start = time.monotonic()
    suites["linear layers and front door (run.py)"] = run.linear_suite(
        [args.version], [p for p in linear_platforms if wanted is None or p in wanted],
        list(run.QUANTS + run.FORMAT_QUANTS), list(run.ONLINE_METHODS), args.jobs, LATEST.name)
    timings["linear suite"] = time.monotonic() - start
    start = time.monotonic()
    suites["whole model, attention and KV cache (whole_model.py)"] = whole_model.whole_model_suite(
        [args.version], [p for p in whole_model.PLATFORMS if wanted is None or p in wanted],
        args.families.split(",") if args.families else list(whole_model.FAMILIES),
        list(whole_model.QUANTS + whole_model.FORMAT_QUANTS), list(whole_model.KV_CACHE_DTYPES), args.jobs,
        LATEST.name)
    timings["whole-model suite"] = time.monotonic() - start
    start = time.monotonic()
    areas, registry = vllm_diff(os.path.join(old_root, "vllm"), os.path.join(new_root, "vllm"))
    timings["definition diff"] = time.monotonic() - start
    timings["end to end"] = time.monotonic() - began
    out = report(args.version, base, label, suites, areas, registry, timings)
    print(out)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as fh:
            fh.write(out)
    return 0 if all(s.passed for s in suites.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
