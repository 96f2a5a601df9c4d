"""The package's shape, as docs/architecture.md states it: no import cycle, small folders, a docstring per
module, stages that import only upstream, and the recipes (add a model family, add a vLLM release) needing
one table row each."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import fp8check
from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import InputError
from fp8check.core.model import layouts, vllm_registry
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets import profiles
from fp8check.core.targets.platforms import parse_platform
from fp8check.synth import write_checkpoint

PACKAGE = Path(fp8check.__file__).resolve().parent
MAX_MODULES_PER_FOLDER = 15
# Packages of fp8check/core in the one direction of flow (docs/architecture.md): each may import the ones before
# it, never one after it. records, vocabulary, errors and progress (modules directly in core/) are shared by all.
STAGES = ("targets", "formats", "checkpoint", "model", "routing", "load", "planning", "report")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str) -> set[str]:
    """Every fp8check module `name` imports, at module level, inside functions or under TYPE_CHECKING."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: imports_of(name) for name in MODULES}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle():
    assert cycles(GRAPH) == []


def test_the_cycle_finder_finds_cycles():
    """The check above can fail: a graph with the two cycles issue 17 found is reported as two components."""
    graph = {"inspect": {"warnings"}, "warnings": {"inspect", "records"}, "records": set(),
             "load": {"load_moe"}, "load_moe": {"load_tp"}, "load_tp": {"load"}}
    assert cycles(graph) == [["inspect", "warnings"], ["load", "load_moe", "load_tp"]]


def test_stages_import_only_upstream():
    def stage(module: str) -> int | None:
        parts = module.split(".")
        return STAGES.index(parts[2]) if len(parts) > 3 and parts[1] == "core" and parts[2] in STAGES else None

    backwards = [(name, dep) for name, deps in GRAPH.items() for dep in deps
                 if stage(name) is not None and stage(dep) is not None and stage(dep) > stage(name)]
    assert backwards == []
    assert not [name for name, deps in GRAPH.items() if name.startswith("fp8check.core")
                and any(d.startswith("fp8check.cli") for d in deps)], "core never imports the CLI"
    # The kernel classes describe vLLM's kernels against a target; they know nothing of checkpoints or routing.
    assert {d for name, deps in GRAPH.items() if name.startswith("fp8check.kernels") for d in deps
            if not d.startswith("fp8check.kernels")} <= {"fp8check.core.targets.platforms", "fp8check.core.targets.profiles"}


# ------------------------------------------------------------------- one way to say that releases differ

# profiles.py defines the releases: its rows, and select_profile mapping a --vllm value to one of them. Every other
# module says a release difference one way, `profile.has(change)` (docs/architecture.md, "Add a vLLM release").
# The modules that define releases: the profiles, and each profile release's registry as generated from its wheel
# (fp8check.core.model.vllm_registry, keyed by profile name like profiles.ATTENTION_READ).
RELEASE_DEFINITIONS = (PACKAGE / "core" / "targets" / "profiles.py", PACKAGE / "core" / "model" / "vllm_registry.py",
                       PACKAGE / "core" / "model" / "transformers_classes.py")


def _release_literal(node: ast.AST) -> bool:
    """A vLLM release as a rule would write it: the tuple (0, 33) or a profile's name "0.33" (a full version such as
    "0.33.0" is what messages quote, and other packages' versions look alike)."""
    if isinstance(node, ast.Tuple) and len(node.elts) == 2 and all(
            isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts):
        return node.elts[0].value == 0 and 20 <= node.elts[1].value < 100
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and \
        re.fullmatch(r"0\.[2-9]\d", node.value) is not None


def release_comparisons(source: str) -> list[tuple[int, str]]:
    """Where `source` tells releases apart by number: a release literal anywhere in its code (a comparison such as
    `_release(ctx) >= (0, 33)` or `rules == "0.28"`, a table keyed or valued by releases, a "first release" column),
    or a profile's release parsed into numbers (`profile.name.split(".")`, `.vllm.split`). Docstrings are prose."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if _release_literal(node) and id(node) not in docstrings:
            found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "split" \
                and isinstance(node.func.value, ast.Attribute) and node.func.value.attr in ("name", "vllm"):
            found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def test_no_rule_compares_release_numbers():
    """Every rule that differs between releases asks `profile.has(change)`; none compares release numbers."""
    found = {str(path.relative_to(PACKAGE.parent)): hits for path in sorted(PACKAGE.rglob("*.py"))
             if path not in RELEASE_DEFINITIONS and (hits := release_comparisons(path.read_text()))}
    assert found == {}


OLD_WAYS = '''
def _release(ctx):
    major, minor = ctx.profile.name.split(".")[:2]
    return int(major), int(minor)
if _release(ctx) >= (0, 33): pass
if rules == "0.28": pass
if release in ((0, 28), (0, 33)): pass
BACKENDS = {"0.28": (), "0.33": ()}
CACHE_DTYPES = (("nvfp4_ds_mla", "0.30"),)
SINCE = {"CPU_MLA": (0, 28)}
moe_rules: str = "0.28"
'''
ONE_WAY = '''
"""Docstrings may say 0.33: (0, 33) "0.28"."""
if ctx.profile.has("moe-block-refine") and amax(dim=(0, 2)).clamp(0, 254) and shape == (0, 0): pass
have = tuple(int(p) for p in ctx.platform.assumptions.cuda_version.split("."))
notes.append(f"vLLM {ctx.profile.name} refines the block scales"); version = "0.20.1"
RETIRED = {"KeyeForConditionalGeneration": ("0.33.0", "transformers-backend-034")}
'''


def test_the_release_comparison_finder_finds_the_old_ways():
    """The check above can fail: each way fp8check used to say a release difference is found, and the one way is
    not (nor tuples and version strings that are no vLLM release)."""
    assert [line for line, _ in release_comparisons(OLD_WAYS)] == [3, 5, 6, 7, 7, 8, 8, 9, 10, 11]
    assert release_comparisons(ONE_WAY) == []


def test_no_folder_over_fifteen_modules():
    folders: dict[Path, int] = {}
    for path in MODULES.values():
        if path.name != "__init__.py":
            folders[path.parent] = folders.get(path.parent, 0) + 1
    assert {str(f.relative_to(PACKAGE)): n for f, n in folders.items() if n > MAX_MODULES_PER_FOLDER} == {}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_says_what_it_owns(name):
    docstring = ast.get_docstring(ast.parse(MODULES[name].read_text()))
    assert docstring and len(docstring) > 30, f"{name} has no module docstring"


def test_layout_matches_the_tree():
    """Every package of the tree has its line in docs/architecture.md's layout section, naming each of its modules."""
    layout = (PACKAGE.parent / "docs" / "architecture.md").read_text().split("## Layout", 1)[1].split("```")[1]
    lines: dict[str, str] = {}
    current = None
    for line in layout.splitlines():
        if line.startswith("fp8check/"):
            current = line.split()[0].rstrip("/")
            lines[current] = line
        elif current:
            lines[current] += " " + line
    for folder in sorted({p.parent for p in MODULES.values()} - {PACKAGE}):
        key = folder.relative_to(PACKAGE.parent).as_posix()
        assert key in lines, f"{key}/ is not in docs/architecture.md's layout"
        named = {w.strip("(),;:").removesuffix(".py") for w in lines[key].replace("/", " ").split()}
        stems = {p.stem for p in folder.glob("*.py")} - {"__init__"}
        assert stems <= named, f"{key}/: {sorted(stems - named)} not named in docs/architecture.md's layout"


# ------------------------------------------------------------------------------------- recipes (architecture.md)

def test_recipe_add_a_model_family(tmp_path, monkeypatch):
    """One ARCHITECTURES row of an architecture the release registers: its layers are built as its entry says and
    name its file."""
    folder = write_checkpoint(str(tmp_path / "ckpt"), architecture="NewForCausalLM", data="sparse")
    options = InspectOptions(parse_platform("xpu"), profiles.LATEST)
    before = inspect_checkpoint(open_local(folder), options)
    assert {layer.layout for layer in before.layers} == {"generic"}
    monkeypatch.setitem(layouts.ARCHITECTURES, "NewForCausalLM",
                        layouts.Arch("vllm:new.py", styles={"mlp.down_proj": layouts.REPLICATED}))
    assert {layer.layout for layer in inspect_checkpoint(open_local(folder), options).layers} == {"generic"}
    # ... laid out once the release registers it (tests/differential/vllm_registry.py --write, from its wheel).
    monkeypatch.setitem(vllm_registry.SERVED_BY, "NewForCausalLM", (profiles.LATEST.name,))
    after = inspect_checkpoint(open_local(folder), options)
    assert {layer.layout for layer in after.layers} == {"vllm:new.py"}
    down = [layer for layer in after.layers if layer.name.endswith("mlp.down_proj")]
    assert down and {layer.layer_type for layer in down} == {"ReplicatedLinear"}
    assert {layer.layer_type for layer in before.layers if layer.name.endswith("mlp.down_proj")} == {"RowParallelLinear"}


def test_recipe_add_a_vllm_release(monkeypatch):
    """One `_release(...)` row at the head of PROFILES: `--vllm 0.35` selects it, with 0.34's changes and its own."""
    with pytest.raises(InputError, match="newer than"):  # today 0.35 is unknown: a newer vLLM may route differently
        profiles.select_profile("0.35")
    v035 = profiles._release("0.35", profiles.PROFILES[0], ("new-change",), "a test release")
    monkeypatch.setattr(profiles, "PROFILES", (v035,) + profiles.PROFILES)
    chosen = profiles.select_profile("0.35.1")
    assert chosen.name == "0.35" and chosen.has("new-change") and chosen.has(50787) and chosen.has("w4afp8")
    assert not profiles.select_profile("0.34").has("new-change")
