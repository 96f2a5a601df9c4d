"""Which quantization applies to a module: vLLM's ignore / target matching for both config formats."""

from __future__ import annotations

import re
from typing import NamedTuple
from functools import lru_cache

from fp8check.core.model.modules import LinearModule
from fp8check.core.formats.config import CompressedTensorsConfig, CTScheme, NativeFp8Config, QuantArgs


class Assignment(NamedTuple):
    """The quantization vLLM gives one module: `method` None means UnquantizedLinearMethod."""

    method: str | None                  # "compressed-tensors" | "fp8" | None
    weights: QuantArgs | None = None
    input_activations: QuantArgs | None = None
    output_activations: QuantArgs | None = None
    format: str | None = None
    block: tuple[int, int] | None = None  # native fp8 weight_block_size
    static_input: bool = False            # native fp8 activation_scheme == static
    reason: str = ""                      # why unquantized (ignored, no target, lm_head)
    error: str | None = None              # vLLM raises while matching (mixed shards)


UNQUANTIZED_LM_HEAD = Assignment(None, reason="lm_head stays unquantized (ParallelLMHead is not a quantized linear)")


@lru_cache(maxsize=4096)
def _regex(pattern: str) -> re.Pattern:
    return re.compile(pattern)


def matches(name: str, pattern: str) -> bool:
    """check_equal_or_regex_match: exact, or 're:' + regex anchored at the start only (re.match)."""
    if pattern.startswith("re:"):
        try:
            return _regex(pattern[3:]).match(name) is not None
        except re.error:
            return False
    return pattern == name


def _shard_names(module: LinearModule) -> list[str]:
    """The packed_modules_mapping components: q/k/v for Llama, the fused name itself where the checkpoint
    stores it fused (Phi-3 maps qkv_proj -> [qkv_proj])."""
    return [shard.name for shard in module.shards] if module.fused else [module.name]


def _exact(name: str, pattern: str) -> bool:
    return name == pattern


def _ignored(module: LinearModule, patterns: tuple[str, ...], mixed_message: str, *, compressed_tensors: bool
             ) -> tuple[bool, str | None]:
    """should_ignore_layer (compressed-tensors: exact or re:, an exact hit on the fused name wins) and
    is_layer_skipped (fp8: exact names only, fused layers judged by their shards alone). Shards must agree."""
    match = matches if compressed_tensors else _exact
    fused_hit = compressed_tensors and module.name in patterns
    if module.fused and not fused_hit:
        verdicts = {any(match(s, p) for p in patterns) for s in _shard_names(module)}
        if len(verdicts) > 1:
            return False, mixed_message
        return verdicts.pop(), None
    return any(match(module.name, p) for p in patterns), None


def assign_compressed_tensors(module: LinearModule, config: CompressedTensorsConfig) -> Assignment:
    ignored, error = _ignored(module, config.ignore, f"Found different quantization schemes for the shards of "
                              f"{module.name}. vLLM requires all to use the same scheme.", compressed_tensors=True)
    if error:
        return Assignment("compressed-tensors", error=error)
    if ignored:
        return Assignment(None, reason="listed in quantization_config.ignore")
    scheme = _find_target(module, config.groups)
    if scheme is None:
        return Assignment(None, reason="no config group targets it")
    return Assignment("compressed-tensors", weights=scheme.weights, input_activations=scheme.input_activations,
                      output_activations=scheme.output_activations, format=scheme.format or config.format)


def _find_target(module: LinearModule, groups: tuple[CTScheme, ...]) -> CTScheme | None:
    """find_matched_target: name (exact / re:), then fused components, then class name contains the target.

    This is the newest order read (fused before class, after a 2026-05 fix for mixed MXFP4/MXFP8 checkpoints);
    earlier releases tried the class name before the fused components. They differ only when a class target
    ("Linear") and per-shard targets name different groups.
    """
    # target_scheme_map: later groups overwrite a target named by an earlier one, insertion order kept.
    by_target: dict[str, CTScheme] = {}
    for group in groups:
        for target in group.targets:
            by_target[target] = group
    for target, group in by_target.items():
        if matches(module.name, target):
            return group
    if module.fused:
        hits = [next((t for t in by_target if matches(s, t)), None) for s in _shard_names(module)]
        if all(hits):
            return by_target[hits[0]]
    for target, group in by_target.items():
        if target.lower() in module.layer_type.lower():
            return group
    return None


def assign_native_fp8(module: LinearModule, config: NativeFp8Config) -> Assignment:
    if module.layer_type == "ParallelLMHead":
        return UNQUANTIZED_LM_HEAD
    ignored, error = _ignored(module, config.ignored_layers, f"Detected some but not all shards of {module.name} are "
                              "quantized. All shards of fused layers to have the same precision.",
                              compressed_tensors=False)
    if error:
        return Assignment("fp8", error=error)
    if ignored:
        return Assignment(None, reason="listed in ignored_layers / modules_to_not_convert")
    return Assignment("fp8", block=config.weight_block_size, static_input=config.activation_scheme == "static")


def assign(module: LinearModule, quant) -> Assignment:
    if quant is None:
        return Assignment(None, reason="the model has no quantization_config")
    if module.layer_type == "ParallelLMHead" and isinstance(quant, NativeFp8Config):
        return UNQUANTIZED_LM_HEAD
    if module.unquantized:
        return Assignment(None, reason=module.unquantized)
    if isinstance(quant, CompressedTensorsConfig):
        return assign_compressed_tensors(module, quant)
    return assign_native_fp8(module, quant)
