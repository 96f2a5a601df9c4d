"""quant_method `fp8`: vLLM's / HF's native FP8 config (Fp8Config) and what vLLM builds from it.

vLLM sources: quantization/fp8.py (Fp8Config.from_config and __init__ checks, get_min_capability,
get_quant_method with is_layer_skipped, Fp8LinearMethod's kernel keys, Fp8MoEMethod.__init__ and
create_weights), quantization/utils/quant_utils.py (is_layer_skipped), fused_moe/oracle/fp8.py (the keys the
MoE oracle is handed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, NamedTuple

from fp8check.core.errors import ConfigError, shown
from fp8check.core.formats.base import (
    UNQUANTIZED_LM_HEAD, UNQUANTIZED_MOE, Assignment, ExpectedTensors, Format, KernelRequest, Module, MoEMethod,
    WeightScale,
)
from fp8check.core.formats.kv_cache import FP8_METHOD as KV_METHOD
from fp8check.core.formats.kv_cache import attention_method
from fp8check.core.formats.shared import block_weight_key, exact, is_int, layer_skipped, pattern_list, suffix
from fp8check.core.vocabulary import Strategy
from fp8check.kernels.base import FP8, FP8_BLOCK, RoutingContext
from fp8check.kernels.cuda import cutlass_fp8_supported
from fp8check.kernels.quant_keys import (
    QuantKey, kFp8Dynamic128Sym, kFp8DynamicTensorSym, kFp8DynamicTokenSym, kFp8Static128BlockSym, kFp8StaticTensorSym,
)

if TYPE_CHECKING:  # annotations only
    from fp8check.core.targets.profiles import RuleProfile

NAME = "fp8"
FP8_METHOD = "Fp8LinearMethod"
FP8_MOE = "Fp8MoEMethod"
XPU_PER_TOKEN = "xpu-fp8-per-token"  # 0.34: dynamic activations per token on XPU too


class NativeFp8Config(NamedTuple):
    """vLLM's / HF's `quant_method: fp8` (Fp8Config), or a subclass's config (`method` its name)."""

    activation_scheme: str
    ignored_layers: tuple[str, ...]
    weight_block_size: tuple[int, int] | None
    method: str = NAME
    # is_layer_skipped's match mode: "exact", or "suffix" where the model file sets ignored_layers_match_mode
    # (Arch.block_fp8_suffix_ignores)
    ignore_match: str = "exact"
    # A subclass's (w4afp8's W4AFP8Config, method "w4afp8"): its routed experts' INT4 group size
    group_size: int | None = None


# Format.kv_cache: Fp8Config.get_quant_method gives Attention and MLAAttention Fp8KVCacheMethod.
KV_CACHE = attention_method(KV_METHOD)


def parse(raw: dict, where: str) -> NativeFp8Config:
    """Mirror of vLLM's Fp8Config.from_config and its __init__ checks (same messages)."""
    if "activation_scheme" not in raw:
        raise ConfigError(f"{where}: Cannot find any of ['activation_scheme'] in the model's quantization config.")
    scheme = raw["activation_scheme"]
    if scheme not in ("static", "dynamic"):
        raise ConfigError(f"{where}: Unsupported activation scheme {shown(scheme)}")
    ignored_layers = pattern_list(raw.get("ignored_layers") or raw.get("modules_to_not_convert") or [],
                                  f"{where}.ignored_layers")
    block = raw.get("weight_block_size")
    if block is not None:
        if not isinstance(block, list) or not all(is_int(v) and v > 0 for v in block):
            raise ConfigError(f"{where}.weight_block_size must be a list of positive integers, got {shown(block)}")
        if len(block) != 2:
            raise ConfigError(f"{where}: The quantization block size of weight must have 2 dimensions, but got {len(block)} dimensions")
        if scheme != "dynamic":
            raise ConfigError(f"{where}: The block-wise quantization only supports dynamic activation scheme for now, but got {scheme} activation scheme.")
        block = (block[0], block[1])
    return NativeFp8Config(activation_scheme=scheme, ignored_layers=ignored_layers, weight_block_size=block)


# Quant methods whose vLLM config is an Fp8Config: fp8's own and w4afp8.py's W4AFP8Config(Fp8Config) (0.34).
FP8_CONFIG_METHODS = (NAME, "w4afp8")


def block_fp8_config(quant) -> NativeFp8Config | None:
    """`quant` where it is a block-FP8 Fp8Config (an Fp8Config, subclasses included, with weight_block_size: what
    bailing_moe_v3.py's _is_block_fp8_config tests), else None."""
    is_fp8_config = getattr(quant, "method", None) in FP8_CONFIG_METHODS
    return quant if is_fp8_config and getattr(quant, "weight_block_size", None) else None


def block_fp8_skips(quant: NativeFp8Config, name: str) -> bool:
    """bailing_moe_v3.py _is_fp8_module_excluded: is_layer_skipped in suffix mode, `name` a module the model file
    builds unfused (vLLM's name, the lists as the model's mapper left them)."""
    return any(suffix(name, pattern) for pattern in quant.ignored_layers)


def assign(module: Module, config: NativeFp8Config) -> Assignment:
    if module.layer_type == "ParallelLMHead":
        return UNQUANTIZED_LM_HEAD
    if module.unquantized:
        return Assignment(None, reason=module.unquantized)
    match = suffix if config.ignore_match == "suffix" else exact
    is_ignored, error = layer_skipped(module, config.ignored_layers, match)
    if error:
        return Assignment(config.method, error=error)
    if is_ignored:
        return Assignment(None, reason="listed in ignored_layers / modules_to_not_convert")
    return _quantized(config)


def _quantized(config: NativeFp8Config) -> Assignment:
    """Fp8LinearMethod's assignment, under the config's own method name (an Fp8Config subclass such as w4afp8's
    W4AFP8Config keeps its name: the registry routes the assignment back to that format)."""
    block = config.weight_block_size
    return Assignment(config.method, strategy=Strategy.BLOCK if block else Strategy.TENSOR, block=block,
                      static_input=config.activation_scheme == "static")


def describe(assignment: Assignment) -> tuple[str, str]:
    block = assignment.block
    strategy = f"block {list(block)}" if block else "tensor"
    # The granularity of dynamic activations is vLLM's choice (see kernel_request), not the config's.
    activation = "static tensor" if assignment.static_input else "dynamic"
    if block:
        activation += f" group {block[0]}"
    return strategy, activation


def linear_scheme(assignment: Assignment, ctx: RoutingContext, linear_backend: str) -> tuple[str, None]:
    return FP8_METHOD, None


def kernel_request(scheme: str, assignment: Assignment, ctx: RoutingContext, e8m0: bool
                   ) -> KernelRequest:
    """Fp8LinearMethod: 1 x block[0] activation groups for block weights; dynamic activations per token where
    CUTLASS FP8 runs (cutlass_fp8_supported) and, from 0.34, on XPU (`or current_platform.is_xpu()`), else per
    tensor."""
    block = assignment.block
    if block:
        return KernelRequest(FP8_BLOCK, block_weight_key(block, e8m0), QuantKey(False, (1, block[0])))
    if assignment.static_input:
        act = kFp8StaticTensorSym
    elif dynamic_per_token(ctx):
        act = kFp8DynamicTokenSym
    else:
        act = kFp8DynamicTensorSym
    return KernelRequest(FP8, kFp8StaticTensorSym, act)


def dynamic_per_token(ctx: RoutingContext) -> bool:
    """`cutlass_fp8_supported()` (CUDA only), `or current_platform.is_xpu()` from 0.34 (profile XPU_PER_TOKEN): where
    Fp8LinearMethod and Fp8PerTensorOnlineLinearMethod quantize dynamic activations per token."""
    if ctx.kind == "xpu":
        return ctx.profile.has(XPU_PER_TOKEN)
    return ctx.kind == "cuda" and cutlass_fp8_supported(ctx)


def expected_tensors(assignment: Assignment) -> ExpectedTensors:
    if assignment.block:
        scale = WeightScale("weight_scale_inv", Strategy.BLOCK, assignment.block, stray="weight_scale",
                            stray_note="block fp8 checkpoints use weight_scale_inv; this tensor has no vLLM parameter")
    else:
        scale = WeightScale("weight_scale", Strategy.TENSOR)
    return ExpectedTensors(scale, assignment.static_input)


def moe_method(name: str, leaves: tuple[str, str, str], config: NativeFp8Config,
               profile: RuleProfile) -> MoEMethod:
    """Fp8Config.get_quant_method for a FusedMoE, then Fp8MoEMethod.__init__: 0.25-0.28 hand the oracle the
    128x128 key whatever weight_block_size says; 0.29 on build it from the (possibly refined) block, see moe.place()."""
    if name in config.ignored_layers or config.ignore_match == "suffix" and block_fp8_skips(
            config, name):
        return MoEMethod(UNQUANTIZED_MOE, note="listed in ignored_layers / modules_to_not_convert")
    assignment = _quantized(config)
    static = assignment.static_input
    if config.weight_block_size:
        block = config.weight_block_size
        weight = QuantKey(True, block) if profile.has("moe-block-refine") else kFp8Static128BlockSym
        error = None
        if static:  # create_weights: `assert not self.block_quant` under static activations
            error = "AssertionError in Fp8MoEMethod.create_weights: static activation scales with block weights"
        return MoEMethod(FP8_MOE, weight, kFp8Dynamic128Sym, block, f"block {list(block)}",
                         f"dynamic group {block[0]}", assignment=assignment, error=error, refines_block=True)
    act = kFp8StaticTensorSym if static else kFp8DynamicTensorSym
    return MoEMethod(FP8_MOE, kFp8StaticTensorSym, act, None, "tensor", "static tensor" if static else "dynamic",
                     assignment=assignment)


def maps_lists(config: NativeFp8Config, mapper: Callable[[str], str]) -> NativeFp8Config:
    """Fp8Config.apply_vllm_mapper (0.25-0.34; W4AFP8Config inherits it): ignored_layers through the mapper."""
    return config._replace(ignored_layers=tuple(map(mapper, config.ignored_layers)))


FORMAT = Format(
    name=NAME, min_capability=75, parse=parse, assign=assign, describe=describe, linear_scheme=linear_scheme,
    fp8_schemes=frozenset({FP8_METHOD}), kernel_request=kernel_request, expected_tensors=expected_tensors,
    moe_method=moe_method, block_mismatch_escape=True, maps_lists=maps_lists,
    kv_cache=KV_CACHE,
)
