"""What a release's model classes say about their own layout, read from the classes (issue 33: the hand-kept table
of fp8check.core.model.layouts is checked against them by tests/differential/packed_check.py).

    python tests/differential/crosscheck_layouts.py PLATFORM [--stub] < architectures.json

vLLM is imported as crosscheck_model imports it (the same mocked platform and stubs); no model is built. For each
architecture name, the class the release's registry loads on that platform (`ModelRegistry._try_load_model_cls`, the
lookup resolve_model_cls makes) and, from it:
- `packed_modules_mapping`, the class attribute (None: the class has none), and what the class's (or a base's)
  `__init__` does to it, read from the source (`init`: entries added under an `if`, the mapping reassigned);
- the names the `hf_to_vllm_mapper` of the class, or of another class its file defines, drops (mapped to None);
- the renames of the class's own `hf_to_vllm_mapper` (`renames`: [kind, old, new] in the order map_name applies
  them), what vLLM maps a quantization config's layer lists with (get_rename_mapper) and its module names load under;
- its file (`source`), its bases' files and the file the registry names (`registry_source`: a package that picks
  the class per platform, vllm/models/deepseek_v32), as fp8check's `source` names files.
An architecture the registry lacks is answered with the release it was last supported in
(`_PREVIOUSLY_SUPPORTED_MODELS`), if any. Prints one JSON object {architecture: facts}. Never imported on the
inspect path.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import sys
import textwrap

# The WeightsMapper fields whose None values drop a checkpoint name, and the kind each is reported as.
DROPPING_FIELDS = {"orig_to_new_prefix": "prefix", "orig_to_new_substr": "substr",
                   "orig_to_new_suffix": "suffix", "orig_to_new_regex": "regex"}
# The same fields in the order WeightsMapper.map_name applies them (models/utils.py).
RENAMING_FIELDS = {"orig_to_new_regex": "regex", "orig_to_new_substr": "substr", "orig_to_new_prefix": "prefix",
                   "orig_to_new_suffix": "suffix"}


def _prepare(platform: str, stubbed: bool) -> None:
    """crosscheck_model.main's setup, without the per-case parts: vLLM importable as on `platform`."""
    import crosscheck_model as model  # beside this file (a script: its folder is on sys.path)
    from fp8check.core.routing.crosscheck import _InertFinder, prepare

    if stubbed:
        sys.meta_path.insert(0, _InertFinder(model.MODEL_INERT))
        model._DevicesOnMeta().mode.__enter__()  # some modules allocate at import time
    prepare(platform, stubbed, host=False)
    model._no_registry_subprocess()
    if stubbed:
        sys.meta_path.insert(0, _InertFinder(model.LATE_INERT))
        model._stub_compiled_namespaces()
        model._stub_device_queries(platform)
        model._torchaudio_frontend()  # midashenglm.py imports torchaudio.functional at import time


def source_of(module_name: str) -> str:
    """A module's file as fp8check's `source` names it: relative to vllm/model_executor/models/ ("llama.py",
    "transformers/causal.py"), else to vllm/ ("models/deepseek_v32"); a package by its folder."""
    import vllm

    spec = importlib.util.find_spec(module_name)  # located, not imported (importing may fail: the class's error)
    path = spec.origin if spec is not None and spec.origin else module_name
    if os.path.basename(path) == "__init__.py":
        path = os.path.dirname(path)
    root = os.path.dirname(vllm.__file__)
    models = os.path.join(root, "model_executor", "models")
    return os.path.relpath(path, models if path.startswith(models + os.sep) else root).replace(os.sep, "/")


def dropped_names(mapper) -> list[list[str]]:
    """[kind, pattern] of every name a WeightsMapper drops (maps to None), sorted; [] for no mapper."""
    out = []
    for field, kind in DROPPING_FIELDS.items():
        for key, new in (getattr(mapper, field, None) or {}).items():
            if new is None:
                out.append([kind, getattr(key, "pattern", key)])
    return sorted(out)


def renamed_names(mapper) -> list[list[str]]:
    """[kind, old, new] of every rename of a WeightsMapper (mapped to a name, not None), in the order map_name
    applies them (RENAMING_FIELDS, each field in its dict's order); [] for no mapper."""
    return [[kind, getattr(key, "pattern", key), new] for field, kind in RENAMING_FIELDS.items()
            for key, new in (getattr(mapper, field, None) or {}).items() if new is not None]


def class_facts(architecture: str) -> dict:
    """One architecture as the registry resolves it on this process's platform (see the module docstring)."""
    from vllm.model_executor.models import registry

    entry = registry.ModelRegistry.models.get(architecture)
    if entry is None:
        return {"registered": False,
                "previously_supported": getattr(registry, "_PREVIOUSLY_SUPPORTED_MODELS", {}).get(architecture)}
    facts = {"registered": True, "registry_source": source_of(entry.module_name), "cls": entry.class_name,
             "error": None}
    try:  # the platform's verify_model_arch may refuse the architecture
        cls = registry.ModelRegistry._try_load_model_cls(architecture)
        if cls is None:  # the registry logged why: load again for the text
            cls = entry.load_model_cls()
    except Exception as exc:  # noqa: BLE001 - vLLM's refusal is the answer
        return dict(facts, error=f"{type(exc).__name__}: {exc}")
    packed = getattr(cls, "packed_modules_mapping", None)
    bases = {source_of(k.__module__) for k in cls.__mro__[1:] if (k.__module__ or "").startswith("vllm.")}
    return dict(facts, cls=cls.__name__, source=source_of(cls.__module__), bases=sorted(bases),
                packed={k: list(v) for k, v in packed.items()} if packed is not None else None,
                init=init_changes(cls), dropped=module_drops(cls),
                renames=renamed_names(getattr(cls, "hf_to_vllm_mapper", None)))


def module_drops(cls) -> list[list[str]]:
    """[kind, pattern, owner] of every name dropped by the class's hf_to_vllm_mapper or by that of another class
    its file defines (ERNIE-4.5-MoE's inner Ernie4_5_MoeModel drops "mtp", the loader it calls uses it)."""
    module = sys.modules[cls.__module__]
    owners = [cls, *(o for o in vars(module).values()
                     if inspect.isclass(o) and o.__module__ == module.__name__ and o is not cls)]
    out = []
    for owner in owners:
        mapper = getattr(owner, "hf_to_vllm_mapper", None) if owner is cls else owner.__dict__.get("hf_to_vllm_mapper")
        out += [[kind, pattern, owner.__name__] for kind, pattern in dropped_names(mapper)]
    return out


def init_changes(cls) -> dict:
    """What the class's (or a base's) __init__ does to packed_modules_mapping, read from its source:
    {"added": {name: {"shards", "when", "owner"}}} for `self.packed_modules_mapping["name"] = [...]`, and
    {"reassigned": [{"expr", "when", "owner"}]} for `self.packed_modules_mapping = ...`; `when` is the source of
    the `if` it sits under (None: unconditional)."""
    out: dict = {"added": {}, "reassigned": []}
    for klass in reversed(cls.__mro__):
        init = klass.__dict__.get("__init__")
        if init is None or not (klass.__module__ or "").startswith("vllm"):
            continue
        try:
            source = textwrap.dedent(inspect.getsource(init))
        except (OSError, TypeError):
            continue
        _visit(ast.parse(source), source, None, klass.__name__, out)
    return out


def _visit(node, source: str, condition: str | None, owner: str, out: dict) -> None:
    if isinstance(node, ast.If):
        test = ast.get_source_segment(source, node.test)
        for child in node.body:
            _visit(child, source, test, owner, out)
        for child in node.orelse:
            _visit(child, source, f"not ({test})", owner, out)
        return
    for target in node.targets if isinstance(node, ast.Assign) else ():
        if isinstance(target, ast.Attribute) and target.attr == "packed_modules_mapping":
            out["reassigned"].append({"expr": ast.get_source_segment(source, node.value), "when": condition,
                                      "owner": owner})
        elif (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute)
              and target.value.attr == "packed_modules_mapping" and isinstance(target.slice, ast.Constant)
              and isinstance(node.value, (ast.List, ast.Tuple))):
            shards = [e.value for e in node.value.elts if isinstance(e, ast.Constant)]
            out["added"][target.slice.value] = {"shards": shards, "when": condition, "owner": owner}
    for inner in ast.iter_child_nodes(node):
        _visit(inner, source, condition, owner, out)


def read_class_facts(architectures: list[str]) -> dict[str, dict]:
    """class_facts of each architecture (vLLM imported as on a platform first: _prepare)."""
    return {a: class_facts(a) for a in architectures}


def main() -> None:
    _prepare(sys.argv[1], "--stub" in sys.argv)
    print(json.dumps(read_class_facts(json.load(sys.stdin))), flush=True)


if __name__ == "__main__":
    main()
