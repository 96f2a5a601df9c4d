"""quant_method `compressed-tensors`: its typed config, parsed without compressed-tensors or pydantic, and what
vLLM's CompressedTensorsConfig does with it.

compressed-tensors costs ~5 s to import, so the inspect path mirrors the parts of its `QuantizationArgs` /
`QuantizationScheme` / `QuantizationConfig` validation that decide routing (strategy inference, block, group,
token and dynamic rules, extra keys forbidden). `tests/test_quant_config.py` proves both parsers agree.
vLLM sources: quantization/compressed_tensors/compressed_tensors.py (get_min_capability, get_scheme,
_get_scheme_from_parts, _check_scheme_supported), compressed_tensors/utils.py (should_ignore_layer,
find_matched_target, is_activation_quantization_format), schemes/compressed_tensors_w8a8_fp8.py and
compressed_tensors_w8a16_fp8.py (their kernel keys), compressed_tensors_moe/*.py (get_moe_method,
CompressedTensorsW8A8Fp8MoEMethod).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, NamedTuple

from fp8check.core.errors import ConfigError, printable, shown
from fp8check.core.formats import mxfp8
from fp8check.core.formats.kv_cache import CT_METHOD, KVConfig
from fp8check.core.formats.base import (
    LAYER, UNQUANTIZED, UNQUANTIZED_MOE, Assignment, ExpectedTensors, Format, KernelRefusal, KernelRequest, Module,
    MoEMethod, WeightScale,
)
from fp8check.core.formats.shared import (
    ROUTED_EXPERTS, ExpertsProbe, QuantArgs, block_weight_key, enum_value, ignored, is_int, matches, pattern_list,
    shard_names, torch_dtype,
)
from fp8check.core.vocabulary import STRATEGY_VALUES, Strategy
from fp8check.kernels.base import FP8, FP8_BLOCK, W8A16_FP8, RoutingContext
from fp8check.kernels.quant_keys import (
    QuantKey, kFp8Dynamic128Sym, kFp8DynamicTensorSym, kFp8DynamicTokenSym, kFp8Static128BlockSym, kFp8StaticChannelSym,
    kFp8StaticTensorSym,
)

if TYPE_CHECKING:  # annotations only
    from fp8check.core.targets.profiles import RuleProfile

NAME = "compressed-tensors"
DYNAMIC_STRATEGIES = ("token", "tensor", "tensor_group", "group")
ACTIVATION_STRATEGIES = ("token", "tensor", "group", "tensor_group", "attn_head")
COMPRESSION_FORMATS = (
    "dense", "sparse-bitmask", "sparse-24-bitmask", "int-quantized", "float-quantized", "naive-quantized",
    "pack-quantized", "marlin-24", "mixed-precision", "nvfp4-pack-quantized", "mxfp4-pack-quantized",
    "mxfp6-pack-quantized", "mxfp8-quantized",
)
# vLLM's is_activation_quantization_format (compressed_tensors/utils.py).
ACTIVATION_FORMATS = ("naive-quantized", "int-quantized", "float-quantized", "nvfp4-pack-quantized")
_ARGS_KEYS = frozenset({
    "num_bits", "type", "symmetric", "group_size", "strategy", "block_structure", "dynamic", "actorder",
    "scale_dtype", "zp_dtype", "observer", "observer_kwargs",
})
_SCHEME_KEYS = frozenset({"targets", "weights", "input_activations", "output_activations", "format"})

W8A8_FP8 = "CompressedTensorsW8A8Fp8"
W8A16_FP8_SCHEME = "CompressedTensorsW8A16Fp8"
W8A8_MXFP8 = "CompressedTensorsW8A8Mxfp8"
SCHEME_MIN_CAPABILITY = {
    "CompressedTensorsWNA16": 75, W8A8_FP8: 89, W8A16_FP8_SCHEME: 75, "CompressedTensorsW8A8Int8": 75,
    "CompressedTensorsW4A8Fp8": 90, "CompressedTensorsW4A4Fp4": 75, "CompressedTensorsW4A4Mxfp4": 80,
    W8A8_MXFP8: 75,
}
# Weight strategies vLLM's FP8 schemes know (STRATEGY_TO_WEIGHT_QUANT_KEY).
FP8_WEIGHT_STRATEGIES = ("tensor", "channel", "block")
CT_FP8_MOE = "CompressedTensorsW8A8Fp8MoEMethod"
# The expert projections 0.28's get_moe_method asks for, whatever the checkpoint calls them.
VLLM_028_EXPERT_LEAVES = ("gate_proj", "up_proj", "down_proj")


class CTScheme(NamedTuple):
    """One config group: which modules it targets and how their weights / activations are quantized."""

    name: str
    targets: tuple[str, ...]
    weights: QuantArgs | None
    input_activations: QuantArgs | None
    output_activations: QuantArgs | None
    format: str | None


class CompressedTensorsConfig(NamedTuple):
    groups: tuple[CTScheme, ...]
    ignore: tuple[str, ...]
    format: str | None
    sparsity_targets: tuple[str, ...] = ()
    method: str = NAME


# --- parse -----------------------------------------------------------------------------------------------


def parse_quant_args(raw: object, where: str) -> QuantArgs:
    """Mirror of compressed-tensors' QuantizationArgs validators (field validators + validate_model_after)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be an object, got {shown(raw)}")
    extra = set(raw) - _ARGS_KEYS
    if extra:
        raise ConfigError(f"{where}: unknown key(s) {shown(sorted(extra))} (compressed-tensors forbids extra keys)")
    num_bits = raw.get("num_bits", 8)
    if not is_int(num_bits) or num_bits <= 0:
        raise ConfigError(f"{where}.num_bits must be a positive integer, got {shown(num_bits)}")
    qtype = enum_value(raw.get("type", "int"), ("int", "float"), f"{where}.type")
    symmetric = raw.get("symmetric", True)
    if not isinstance(symmetric, bool):
        raise ConfigError(f"{where}.symmetric must be true or false, got {shown(symmetric)}")
    group_size = raw.get("group_size")
    if group_size is not None and (not is_int(group_size) or group_size < -1):
        raise ConfigError(f"{where}.group_size: invalid group size {shown(group_size)}. Use group_size > 0 for strategy='group' and group_size = -1 for 'channel'")
    strategy = raw.get("strategy")
    if strategy is not None:
        strategy = enum_value(strategy, STRATEGY_VALUES, f"{where}.strategy")
    block = _block_structure(raw.get("block_structure"), f"{where}.block_structure")
    dynamic = raw.get("dynamic", False)
    if isinstance(dynamic, str):
        dynamic = enum_value(dynamic, ("local",), f"{where}.dynamic")
    elif not isinstance(dynamic, bool):
        raise ConfigError(f"{where}.dynamic must be true, false or 'local', got {shown(dynamic)}")
    actorder = _actorder(raw.get("actorder"), f"{where}.actorder")
    scale_dtype = torch_dtype(raw.get("scale_dtype"), f"{where}.scale_dtype")  # "uint8" is "torch.uint8"

    if strategy is None:
        if group_size is None:
            strategy = "tensor"
        elif group_size > 0:
            strategy = "group"
        elif group_size == -1:
            strategy = "channel"
        else:
            raise ConfigError(f"{where}: invalid group size {group_size}. Use group_size > 0 for strategy='group' and group_size = -1 for 'channel'")
    if strategy == Strategy.TOKEN and not dynamic:
        raise ConfigError(f"{where}: cannot perform static token quantization, please use dynamic=true")
    if strategy in (Strategy.GROUP, Strategy.TENSOR_GROUP) and (group_size is None or group_size <= 0):
        raise ConfigError(f"{where}: strategy {strategy} requires group_size to be set to a positive value")
    if group_size is not None and group_size > 0 and strategy not in (Strategy.GROUP, Strategy.TENSOR_GROUP):
        raise ConfigError(f"{where}: group_size requires strategy to be set to 'group'")
    if strategy == Strategy.BLOCK and block is None:
        raise ConfigError(f"{where}: block strategy requires block_structure (e.g. [128, 128])")
    if block is not None and strategy != Strategy.BLOCK:
        raise ConfigError(f"{where}: block_structure requires strategy 'block', got {strategy!r}")
    if dynamic:
        if strategy not in DYNAMIC_STRATEGIES:
            raise ConfigError(f"{where}: one of {', '.join(DYNAMIC_STRATEGIES)} must be used for dynamic quant, got {strategy!r}")
        if dynamic == "local" and strategy != Strategy.TENSOR_GROUP:
            raise ConfigError(f"{where}: dynamic 'local' is only supported for strategy tensor_group")
    return QuantArgs(
        num_bits=num_bits, type=qtype, symmetric=symmetric, strategy=Strategy(strategy), group_size=group_size,
        block_structure=block, dynamic=dynamic, actorder=actorder, scale_dtype=scale_dtype,
    )


def _block_structure(value: object, where: str) -> tuple[int, int] | None:
    if value is None:
        return None
    error = ConfigError(f"{where}: invalid block_structure {shown(value)}. Must be a list of two positive ints (rows, cols)")
    if isinstance(value, str):  # compressed-tensors still accepts the legacy "128x128" form
        try:
            value = [int(x) for x in value.split("x")]
        except ValueError:
            raise error from None
    if not isinstance(value, list | tuple) or len(value) != 2 or not all(is_int(v) and v > 0 for v in value):
        raise error
    return (value[0], value[1])


def _actorder(value: object, where: str) -> str | None:
    if value is None or value is False:
        return None
    if value is True or (isinstance(value, str) and value.lower() in ("group", "dynamic")):
        raise ConfigError(f"{where}: actorder={shown(value)} (group activation ordering) has been removed; use 'weight' or null")
    return enum_value(value, ("weight", "static"), where)


def _parse_scheme(name: str, raw: object, where: str) -> CTScheme:
    if isinstance(raw, list):  # {"FP8_DYNAMIC": ["Linear"]}: a preset keyed by its name
        return _preset_scheme(name, raw, where)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be an object (a scheme) or a list of targets (a preset), got {shown(raw)}")
    extra = set(raw) - _SCHEME_KEYS
    if extra:
        raise ConfigError(f"{where}: unknown key(s) {shown(sorted(extra))} (compressed-tensors forbids extra keys)")
    targets = pattern_list(raw.get("targets"), f"{where}.targets", required=True)
    args = {
        key: parse_quant_args(raw[key], f"{where}.{key}") if raw.get(key) is not None else None
        for key in ("weights", "input_activations", "output_activations")
    }
    inputs = args["input_activations"]
    if inputs is not None:
        if inputs.strategy not in ACTIVATION_STRATEGIES:
            raise ConfigError(f"{where}.input_activations: using {inputs.strategy} strategy is not supported for activation quantization")
        if inputs.actorder is not None:
            raise ConfigError(f"{where}.input_activations: cannot apply actorder to input activations")
    fmt = raw.get("format")
    if fmt is not None:
        fmt = enum_value(fmt, COMPRESSION_FORMATS, f"{where}.format")
        if fmt == "mixed-precision":
            raise ConfigError(f"{where}.format: mixed-precision cannot be set as a format for a QuantizationScheme")
    return CTScheme(name=name, targets=targets, format=fmt, **args)


def _preset_scheme(name: str, targets: list, where: str) -> CTScheme:
    preset = PRESETS.get(name.upper())
    if preset is None:
        raise ConfigError(f"{where}: unknown preset scheme name {shown(name)} (known: {', '.join(PRESETS)})")
    weights, inputs = preset
    return CTScheme(
        name=name, targets=pattern_list(targets, where, required=True), weights=weights, input_activations=inputs,
        output_activations=None, format=None,
    )


def parse(raw: dict, where: str) -> CompressedTensorsConfig:
    groups_raw = raw.get("config_groups")
    if not isinstance(groups_raw, dict):
        raise ConfigError(f"{where}.config_groups must be an object of config groups, got {shown(groups_raw)}")
    groups = tuple(_parse_scheme(str(k), v, f"{where}.config_groups.{printable(str(k), 80)}") for k, v in groups_raw.items())
    fmt = raw.get("format")
    if fmt is not None and not isinstance(fmt, str):
        raise ConfigError(f"{where}.format must be a string, got {shown(fmt)}")
    ignore = pattern_list(raw.get("ignore") or [], f"{where}.ignore")
    sparsity = raw.get("sparsity_config") or {}
    if not isinstance(sparsity, dict):
        raise ConfigError(f"{where}.sparsity_config must be an object, got {shown(sparsity)}")
    sparse_targets = pattern_list(sparsity.get("targets") or [], f"{where}.sparsity_config.targets")
    return CompressedTensorsConfig(groups=groups, ignore=ignore, format=fmt, sparsity_targets=sparse_targets)


def _q(num_bits, qtype, strategy, dynamic, group_size=None, block=None, scale_dtype=None) -> QuantArgs:
    return QuantArgs(num_bits=num_bits, type=qtype, strategy=Strategy(strategy), dynamic=dynamic, group_size=group_size,
                     block_structure=block, scale_dtype=scale_dtype)


def _int_wnam(weight_bits: int, act_bits: int = 16):
    inputs = _q(act_bits, "int", "token", True) if act_bits < 16 else None
    return (_q(weight_bits, "int", "group", False, group_size=128), inputs)


# compressed-tensors' PRESET_SCHEMES (quant_scheme.py), as (weights, input_activations).
PRESETS: dict[str, tuple[QuantArgs | None, QuantArgs | None]] = {
    **{f"W{w}A{a}": _int_wnam(w, a) for w in range(2, 9) for a in (4, 8, 16) if w <= a and (w, a) != (8, 8)},
    "UNQUANTIZED": (None, None),
    "W4A16_ASYM": (QuantArgs(num_bits=4, type="int", strategy=Strategy.GROUP, group_size=128, symmetric=False), None),
    "W8A8": (_q(8, "int", "channel", False), _q(8, "int", "token", True)),
    "INT8": (_q(8, "int", "channel", False), _q(8, "int", "token", True)),
    "W4AFP8": (_q(4, "int", "group", False, group_size=128), _q(8, "float", "token", True)),
    "FP8": (_q(8, "float", "tensor", False), _q(8, "float", "tensor", False)),
    "FP8_DYNAMIC": (_q(8, "float", "channel", False), _q(8, "float", "token", True)),
    "FP8_BLOCK": (_q(8, "float", "block", False, block=(128, 128)), _q(8, "float", "group", True, group_size=128)),
    "NVFP4A16": (_q(4, "float", "tensor_group", False, group_size=16, scale_dtype="torch.float8_e4m3fn"), None),
    "NVFP4": (_q(4, "float", "tensor_group", False, group_size=16, scale_dtype="torch.float8_e4m3fn"), _q(4, "float", "tensor_group", "local", group_size=16, scale_dtype="torch.float8_e4m3fn")),
    "MXFP4A16": (_q(4, "float", "group", False, group_size=32, scale_dtype="torch.uint8"), None),
    "MXFP4": (_q(4, "float", "group", False, group_size=32, scale_dtype="torch.uint8"), _q(4, "float", "group", True, group_size=32, scale_dtype="torch.uint8")),
    "MXFP4XFP8": (_q(4, "float", "group", False, group_size=32, scale_dtype="torch.uint8"), _q(8, "float", "group", True, group_size=128)),
    "MXFP6A16": (_q(6, "float", "group", False, group_size=32, scale_dtype="torch.uint8"), None),
    "MXFP6A8": (_q(6, "float", "group", False, group_size=32, scale_dtype="torch.uint8"), _q(8, "float", "group", True, group_size=32, scale_dtype="torch.uint8")),
    "MXFP8A16": (_q(8, "float", "group", False, group_size=32, scale_dtype="torch.uint8"), None),
    "MXFP8": (_q(8, "float", "group", False, group_size=32, scale_dtype="torch.uint8"), _q(8, "float", "group", True, group_size=32, scale_dtype="torch.uint8")),
}


def config_errors(config: CompressedTensorsConfig, ctx: RoutingContext) -> list[str]:
    if config.sparsity_targets:
        return ["Sparsity support has been removed from compressed-tensors. Please use a model without "
                "sparsity configuration."]
    return []


# --- assign ----------------------------------------------------------------------------------------------


def assign(module: Module, config: CompressedTensorsConfig) -> Assignment:
    if module.unquantized:
        return Assignment(None, reason=module.unquantized)
    is_ignored, error = ignored(module, config.ignore, f"Found different quantization schemes for the shards of "
                                f"{module.name}. vLLM requires all to use the same scheme.", matches,
                                fused_name_wins=True)
    if error:
        return Assignment(NAME, error=error)
    if is_ignored:
        return Assignment(None, reason="listed in quantization_config.ignore")
    scheme = _find_target(module, config.groups)
    if scheme is None:
        return Assignment(None, reason="no config group targets it")
    return _scheme_assignment(scheme, config)


def _scheme_assignment(scheme: CTScheme, config: CompressedTensorsConfig) -> Assignment:
    w, inp = scheme.weights, scheme.input_activations
    strategy = w.strategy if w else None
    return Assignment(NAME, weights=w, input_activations=inp, output_activations=scheme.output_activations,
                      format=scheme.format or config.format, strategy=strategy,
                      block=w.block_structure if w and strategy == Strategy.BLOCK else None,
                      static_input=inp is not None and not inp.dynamic)


def _find_target(module: Module, groups: tuple[CTScheme, ...]) -> CTScheme | None:
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
        hits = [next((t for t in by_target if matches(s, t)), None) for s in shard_names(module)]
        matched = [hit for hit in hits if hit]
        if len(matched) == len(hits):
            return by_target[matched[0]]
    for target, group in by_target.items():
        if target.lower() in module.layer_type.lower():
            return group
    return None


def describe(assignment: Assignment) -> tuple[str | None, str | None]:
    w, a = assignment.weights, assignment.input_activations
    if w is None:
        return None, None
    strategy = w.strategy + (f" {list(w.block_structure)}" if w.block_structure else "")
    strategy += f" {w.group_size}" if w.strategy == Strategy.GROUP else ""
    activation = None if a is None else (f"{'dynamic' if a.dynamic else 'static'} {a.strategy}"
                                         + (f" {a.group_size}" if a.group_size else ""))
    return strategy, activation


# --- linear scheme and kernel keys -----------------------------------------------------------------------


def capability_ok(ctx: RoutingContext, minimum: int) -> bool:
    """_check_scheme_supported(error=False): a platform without a capability passes only after PR #43958."""
    if ctx.cc is None:
        return ctx.profile.has(43958)
    return ctx.cc >= minimum


def is_fp8_w8a8(w: QuantArgs | None, a: QuantArgs | None) -> bool:
    if w is None or a is None or w.type != "float" or a.type != "float":
        return False
    if not (w.symmetric and not w.dynamic and w.strategy in FP8_WEIGHT_STRATEGIES):
        return False
    return bool(a.dynamic) or (a.symmetric and a.strategy == Strategy.TENSOR)


def is_fp8_w8a16(w: QuantArgs | None) -> bool:
    return (w is not None and w.type == "float" and w.symmetric and not w.dynamic
            and w.strategy in FP8_WEIGHT_STRATEGIES)


def _is_mxfp8(w: QuantArgs) -> bool:
    """_is_mxfp8: 8-bit float, symmetric, group 32, uint8 scales (checked ahead of every FP8 row)."""
    return (w.is_float8 and w.symmetric and w.strategy == Strategy.GROUP and w.group_size == 32
            and w.scale_dtype == "torch.uint8")


def linear_scheme(assignment: Assignment, ctx: RoutingContext, linear_backend: str) -> tuple[str | None, str | None]:
    """_get_scheme_from_parts, FP8 rows exact, other rows named: (scheme, error)."""
    w, a, fmt = assignment.weights, assignment.input_activations, assignment.format
    if w is None:
        return UNQUANTIZED, None
    if w.type == "float" and w.num_bits == 4:
        if w.strategy == Strategy.TENSOR_GROUP and w.group_size == 16:
            if a is not None and not (a.type == "float" and a.num_bits == 4 and a.strategy == Strategy.TENSOR_GROUP):
                return None, "For NVFP4 weights, input quantization must also be NVFP4 format, None for NVFP4A16"
            return "CompressedTensorsW4A4Fp4", None
        if w.strategy == Strategy.GROUP and w.group_size == 32:
            return "CompressedTensorsW4A4Mxfp4", None
    if _is_mxfp8(w):
        return W8A8_MXFP8, None
    if w.type == "int" and a is None and w.strategy in (Strategy.CHANNEL, Strategy.GROUP) and fmt == "pack-quantized":
        return "CompressedTensorsWNA16", None
    if fmt in ACTIVATION_FORMATS:  # vLLM keys every FP8 scheme on is_activation_quantization_format(format)
        if is_fp8_w8a8(w, a):
            if ctx.kind == "xpu" and ctx.profile.has(43645):
                # Only the global backend decides the scheme; "torch" opts in from 0.28 (0.27.1's
                # compressed_tensors.py tests linear_backend == "xpu", 0.28.0's in ("xpu", "torch")).
                supported = linear_backend in (("xpu", "torch") if ctx.profile.has(49664) else ("xpu",))
                if ctx.profile.has(50787) and w.strategy == Strategy.BLOCK and not supported:
                    supported = True  # "On XPU, block quantized weights always use the W8A8 kernel"
            else:
                supported = capability_ok(ctx, SCHEME_MIN_CAPABILITY[W8A8_FP8])
            return (W8A8_FP8 if supported else W8A16_FP8_SCHEME), None
        if is_fp8_w8a16(w):
            return W8A16_FP8_SCHEME, None
        if w.type == "int" and w.num_bits == 8 and a is not None and a.type == "int":
            return "CompressedTensorsW8A8Int8", None
    out = assignment.output_activations
    return None, (f"No compressed-tensors compatible scheme was found for layer_name={LAYER}, "
                  f"weight_quant={w.pydantic_str()}, input_quant={a.pydantic_str() if a else None}, "
                  f"output_quant={out.pydantic_str() if out else None}, format={fmt}")


def kernel_request(scheme: str, assignment: Assignment, ctx: RoutingContext, e8m0: bool
                   ) -> KernelRequest | KernelRefusal:
    """The keys CompressedTensorsW8A8Fp8 / CompressedTensorsW8A16Fp8 hand the kernel selector;
    CompressedTensorsW8A8Mxfp8 calls init_mxfp8_linear_kernel (fp8check.kernels.mxfp8)."""
    w, static_input = assignment.weights, assignment.static_input
    if scheme == W8A8_MXFP8:
        return mxfp8.kernel_request(scheme, assignment, ctx, e8m0)
    if scheme == W8A8_FP8:
        if w.strategy == Strategy.BLOCK:
            if static_input:
                return KernelRefusal("AssertionError in CompressedTensorsW8A8Fp8: block-quantized weights need "
                                     "dynamic activations (is_static_input_scheme is True)")
            block = w.block_structure
            return KernelRequest(FP8_BLOCK, block_weight_key(block, e8m0), QuantKey(False, (1, block[0])))
        weight = kFp8StaticChannelSym if w.strategy == Strategy.CHANNEL else kFp8StaticTensorSym
        return KernelRequest(FP8, weight, (kFp8StaticTensorSym if static_input else kFp8DynamicTokenSym))
    # CompressedTensorsW8A16Fp8: BLOCK maps to a hard-coded 128x128 key whatever block_structure says.
    weight = {"block": kFp8Static128BlockSym, "channel": kFp8StaticChannelSym}.get(w.strategy, kFp8StaticTensorSym)
    return KernelRequest(W8A16_FP8, weight, (kFp8StaticTensorSym if static_input else kFp8DynamicTensorSym))


# --- integrity -------------------------------------------------------------------------------------------


def expected_tensors(assignment: Assignment) -> ExpectedTensors | None:
    w = assignment.weights
    if w is None:
        return None
    scale = None
    if _is_mxfp8(w):
        scale = mxfp8.MXFP8_WEIGHT_SCALE
    elif w.is_float8:
        scale = WeightScale("weight_scale", w.strategy, w.block_structure, w.group_size, stray="weight_scale_inv",
                            stray_note="compressed-tensors checkpoints store 'weight_scale'; this tensor is not what "
                                       "vLLM's compressed-tensors schemes read", partial_blocks=True)
    return ExpectedTensors(scale, assignment.static_input)


# --- FusedMoE --------------------------------------------------------------------------------------------


def moe_method(name: str, leaves: tuple[str, str, str], config: CompressedTensorsConfig,
               profile: RuleProfile, layer_class: str = ROUTED_EXPERTS) -> MoEMethod:
    """get_moe_method: expert 0's gate/up/down must share one scheme (0.25-0.31 ask for the names gate_proj /
    up_proj / down_proj whatever the checkpoint calls them; 0.32 on ask for the checkpoint's names). A 'Linear'
    target also targets RoutedExperts (_add_fused_moe_to_target_scheme_map), which find_matched_target meets in the
    layer's class name (`layer_class`: a model's own RoutedExperts subclass, DBRX's DbrxExperts, escapes it)."""
    projections = leaves if profile.has("ct-moe-ckpt-leaves") else VLLM_028_EXPERT_LEAVES
    assignments = {_expert_assignment(f"{name}.0.{leaf}", config, layer_class) for leaf in projections}
    if len(assignments) > 1:
        return MoEMethod("?", error="All MoE projections need to have same quantization scheme but found multiple")
    a = assignments.pop()
    if a.error:
        return MoEMethod("?", error=a.error)
    if a.method is None:
        return MoEMethod(UNQUANTIZED_MOE, note=a.reason, assignment=a)
    w, inp, fmt = a.weights, a.input_activations, a.format
    if w.type == "float" and w.num_bits in (4, 8) and w.strategy in (Strategy.GROUP, Strategy.TENSOR_GROUP) and \
            w.group_size in (16, 32):
        mxfp8 = w.num_bits == 8 and w.group_size == 32  # compressed_tensors_moe_w8a8_mxfp8.py (0.28, 0.33)
        return MoEMethod("CompressedTensorsW8A8Mxfp8MoEMethod" if mxfp8 else "(MXFP4/NVFP4 MoE method)", assignment=a,
                         note="MXFP8 experts (select_mxfp8_moe_backend) are not modelled: not judged" if mxfp8
                         else "not an FP8 e4m3 scheme; fp8check routes FP8 experts only")
    if w.strategy in (Strategy.CHANNEL, Strategy.GROUP) and inp is None and not w.dynamic:  # _is_wNa16_group_channel
        if fmt != "pack-quantized" or w.num_bits not in (4, 8):
            return MoEMethod("?", assignment=a, error=_wna16_format_error(w.num_bits, profile))
        return MoEMethod("CompressedTensorsWNA16MoEMethod", assignment=a, note="not an FP8 scheme")
    if is_fp8_w8a8(w, inp):
        return _fp8_moe(w, inp, a)
    return MoEMethod("?", assignment=a,
                     error=f"Unsupported FusedMoe scheme: {w.pydantic_str()}, {inp.pydantic_str() if inp else None}")


def _expert_assignment(name: str, config: CompressedTensorsConfig, layer_class: str) -> Assignment:
    a = assign(ExpertsProbe(name, layer_type=layer_class), config)
    if a.method is None and a.reason == "no config group targets it" and ROUTED_EXPERTS in layer_class:
        linear = next((g for g in reversed(config.groups) if "Linear" in g.targets), None)
        if linear is not None:
            return _scheme_assignment(linear, config)
    return a


def _wna16_format_error(bits: int, profile: RuleProfile) -> str:
    """vLLM 0.28 passes the message pieces as separate ValueError arguments (a tuple prints); ct-wna16-moe-wording
    joins them."""
    if not profile.has("ct-wna16-moe-wording"):
        return str(("For Fused MoE layers, only format: ", "pack-quantized ", " and bits: [4, 8] is supported ",
                    f"but got format: pack-quantized  and bits: {bits}"))
    return f"For Fused MoE layers, only format: pack-quantized and bits: [4, 8] is supported but got format: " \
           f"pack-quantized and bits: {bits}"


def _fp8_moe(w: QuantArgs, inp: QuantArgs, a: Assignment) -> MoEMethod:
    """CompressedTensorsW8A8Fp8MoEMethod.__init__: ct2vllm_weight / ct2vllm_act exactly (a dynamic per-tensor
    activation maps to the 1x128 group key there)."""
    per_tensor = w.strategy == Strategy.TENSOR and inp.strategy == Strategy.TENSOR
    per_channel = w.strategy == Strategy.CHANNEL and inp.strategy == Strategy.TOKEN
    strategy, activation = describe(a)
    base = MoEMethod(CT_FP8_MOE, strategy_text=strategy, activation=activation, allow_vllm_cutlass=True, assignment=a)
    if not (per_tensor or per_channel) and w.strategy != Strategy.BLOCK:
        return base._replace(error=f"AssertionError in {CT_FP8_MOE}.__init__: weight strategy {w.strategy} with "
                                   f"{inp.strategy} activations is neither per-tensor, per-channel/per-token nor block")
    static = not inp.dynamic
    if static and per_channel:
        return base._replace(error="For FP8 Fused MoE layer, we require either per tensor or channelwise, dynamic "
                                   "per token quantization.")
    weight = {"channel": kFp8StaticChannelSym, "tensor": kFp8StaticTensorSym, "block": kFp8Static128BlockSym}[w.strategy]
    if weight == kFp8Static128BlockSym:
        act = kFp8Dynamic128Sym
    elif inp.strategy == Strategy.TOKEN:
        act = kFp8DynamicTokenSym
    elif inp.strategy == Strategy.TENSOR:
        act = kFp8StaticTensorSym if static else kFp8Dynamic128Sym
    else:
        return base._replace(error=f"KeyError: <QuantizationStrategy.{inp.strategy.upper()}: '{inp.strategy}'> "
                                   f"(ct2vllm_act in {CT_FP8_MOE}.__init__)")
    block = w.block_structure if w.strategy == Strategy.BLOCK else None
    return base._replace(weight_key=weight, activation_key=act, block=block)


def maps_lists(config: CompressedTensorsConfig, mapper: Callable[[str], str]) -> CompressedTensorsConfig:
    """CompressedTensorsConfig.apply_vllm_mapper (0.25-0.34): the targets and the ignore list through the mapper,
    layer paths only (a "." in it and no "re:": class names and regexes are kept)."""
    def mapped(patterns: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(mapper(p) if "." in p and not p.startswith("re:") else p for p in patterns)

    return config._replace(ignore=mapped(config.ignore),
                           groups=tuple(g._replace(targets=mapped(g.targets)) for g in config.groups))


# CompressedTensorsKVCacheMethod.validate_kv_cache_scheme's strategies, as it prints them, and every
# QuantizationStrategy value (records.STRATEGY_VALUES; another raises in QuantizationStrategy(value) first).
KV_STRATEGIES = "(<QuantizationStrategy.TENSOR: 'tensor'>, <QuantizationStrategy.ATTN_HEAD: 'attn_head'>)"


def kv_cache(config: CompressedTensorsConfig, raw: dict) -> KVConfig:
    """get_quant_method for attention: every Attention gets CompressedTensorsKVCacheMethod (an MLAAttention none),
    checked against the stored kv_cache_scheme, which also switches `auto` to fp8 per Attention."""
    scheme = raw.get("kv_cache_scheme")
    return KVConfig(CT_METHOD, scheme=scheme, errors=kv_scheme_errors(scheme))


def kv_scheme_errors(scheme: dict | None) -> tuple[str, ...]:
    """CompressedTensorsKVCacheMethod.validate_kv_cache_scheme, raised as each Attention layer is built."""
    if scheme is None:
        return ()
    if not isinstance(scheme, dict):
        return (f"kv_cache_scheme must be an object, got {scheme!r}",)
    type_, num_bits = scheme.get("type"), scheme.get("num_bits")
    if type_ != "float" or num_bits != 8:
        return ("Currently supported kv cache quantization is num_bits=8, type=float, however received "
                f"num_bits={num_bits}, type={type_}",)
    strategy = scheme.get("strategy")
    if strategy not in STRATEGY_VALUES:  # QuantizationStrategy(value) raises before the check
        return (f"{strategy!r} is not a valid QuantizationStrategy",)
    if strategy not in (Strategy.TENSOR, Strategy.ATTN_HEAD):
        return (f"Invalid strategy for compressed-tensors KV cache. Expected strategies: {KV_STRATEGIES}, found "
                f"strategy: {strategy}",)
    if not scheme.get("symmetric"):
        return (f"Only support symmetric scaling factor for compressed-tensors KV cache. However found symmetric: "
                f"{scheme.get('symmetric')}",)
    return ()


FORMAT = Format(
    name=NAME, min_capability=70, parse=parse, assign=assign, describe=describe, linear_scheme=linear_scheme,
    fp8_schemes=frozenset({W8A8_FP8, W8A16_FP8_SCHEME, W8A8_MXFP8}), kernel_request=kernel_request,
    expected_tensors=expected_tensors, moe_method=moe_method, config_errors=config_errors,
    scheme_min_capability=SCHEME_MIN_CAPABILITY, maps_lists=maps_lists, kv_cache=kv_cache,
)
