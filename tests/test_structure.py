"""The package's shape, as docs/architecture.md states it: no import cycle, small folders, a docstring per
module, stages that import only upstream, and the recipes (add a model family, add a vLLM release) needing
one table row each."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import fp8check
from fp8check.core.checkpoint.local import open_local
from fp8check.core.errors import InputError
from fp8check.core.model import layouts
from fp8check.core.records import InspectOptions
from fp8check.core.routing.inspect import inspect_checkpoint
from fp8check.core.targets import profiles
from fp8check.core.targets.platforms import parse_platform
from fp8check.synth import write_checkpoint

PACKAGE = Path(fp8check.__file__).resolve().parent
MAX_MODULES_PER_FOLDER = 15
# Packages of fp8check/core in the one direction of flow (docs/architecture.md): each may import the ones before
# it, never one after it. records, errors and progress (modules directly in core/) are shared by all.
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
    """One ARCHITECTURES row: a new architecture's layers are built as its entry says and name its file."""
    folder = write_checkpoint(str(tmp_path / "ckpt"), architecture="NewForCausalLM", data="sparse")
    options = InspectOptions(parse_platform("xpu"), profiles.LATEST)
    before = inspect_checkpoint(open_local(folder), options)
    assert {layer.layout for layer in before.layers} == {"generic"}
    monkeypatch.setitem(layouts.ARCHITECTURES, "NewForCausalLM",
                        layouts.Arch("vllm:new.py", styles={"mlp.down_proj": layouts.REPLICATED}))
    after = inspect_checkpoint(open_local(folder), options)
    assert {layer.layout for layer in after.layers} == {"vllm:new.py"}
    down = [layer for layer in after.layers if layer.name.endswith("mlp.down_proj")]
    assert down and {layer.layer_type for layer in down} == {"ReplicatedLinear"}
    assert {layer.layer_type for layer in before.layers if layer.name.endswith("mlp.down_proj")} == {"RowParallelLinear"}


def test_recipe_add_a_vllm_release(monkeypatch):
    """One `_release(...)` row at the head of PROFILES: `--vllm 0.34` selects it, with 0.33's changes and its own."""
    with pytest.raises(InputError, match="newer than"):  # today 0.34 is unknown: a newer vLLM may route differently
        profiles.select_profile("0.34")
    v034 = profiles._release("0.34", profiles.PROFILES[0], ("new-change",), "a test release")
    monkeypatch.setattr(profiles, "PROFILES", (v034,) + profiles.PROFILES)
    chosen = profiles.select_profile("0.34.1")
    assert chosen.name == "0.34" and chosen.has("new-change") and chosen.has(50787)
    assert not profiles.select_profile("0.33").has("new-change")
