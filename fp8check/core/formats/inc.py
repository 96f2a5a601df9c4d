"""quant_method `auto-round` -> `inc`: Intel AutoRound block-wise FP8 and what vLLM's INCConfig does with it.

vLLM sources: quantization/inc/inc.py (override_quantization_method, from_config, __init__ and its
_validate_* checks, get_quant_method), inc/config_parser.py (INCConfigParser.resolve: extra_config, suffix
keys, block_name_to_quantize, fused shards), inc/schemes/inc_scheme.py (the MoE refusal), factory.py
(resolve_scheme's order), inc_fp8_scheme.py and inc_fp8_linear.py: INCFp8LinearScheme wraps
Fp8LinearMethod(Fp8Config(is_checkpoint_fp8_serialized=True, activation_scheme="dynamic",
weight_block_size=group_size)), so its keys, tensors and kernels are native fp8 block's (fp8check.core.formats.fp8).
Block FP8 arrived in 0.29 (#47434); 0.25-0.28's INCConfig refuses data_type "fp" when it is constructed.

What fp8check reports as the scheme is INCFp8LinearScheme: vLLM's layer.quant_method is the generic
INCLinearMethod, and its `.scheme` is the INCFp8LinearScheme, as compressed-tensors reports its scheme rather than
CompressedTensorsLinearMethod. INCFp8LinearScheme.get_min_capability() (Fp8Config's 75) is never called by vLLM:
only INCConfig's 60 gates. The layer's quant_config is INCConfig, which has no `weight_block_size`, so
ColumnParallelLinear's allow_fp8_block_shape_mismatch escape never applies; validate_fp8_block_shape does.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, NamedTuple

from fp8check.core.errors import ConfigError, shown
from fp8check.core.formats import fp8
from fp8check.core.formats.base import (
    UNQUANTIZED_MOE, Assignment, ExpectedTensors, Format, KernelRequest, Module, MoEMethod,
)
from fp8check.core.formats.shared import pattern_list, shard_names
from fp8check.core.vocabulary import Strategy
from fp8check.kernels.base import RoutingContext

if TYPE_CHECKING:  # annotations only
    from fp8check.core.targets.profiles import RuleProfile

NAME = "inc"
AUTO_ROUND = "auto-round"
INC_FP8 = "INCFp8LinearScheme"
FP8_BLOCK_PACKING = "auto_round:fp8"
FP8_BLOCK_CHANGE = 47434  # 0.29: data_type "fp", 2-D group_size, INCFp8Scheme
# Release changes of INCConfig (RuleProfile.has keys):
INC_MXFP_CHANGE = "inc-mx-fp"             # 0.27: INCConfig accepts data_type mx_fp; its data_type error reworded
INC_BITS_CHANGE = "inc-bits-5-7"          # 0.30: INCConfig.SUPPORTED_BITS gains 5, 6 and 7
# The characters that make an extra_config key a regex (config_parser.py REGEX_SPECIAL_CHARS).
REGEX_CHARS = frozenset(r"*+?^$()[]{}|\\")
# _validate_raw_config's expected values for block FP8; act_group_size is group_size[0].
FP8_BLOCK_FIELDS = (("act_bits", 8), ("act_group_size", None), ("act_data_type", "fp"), ("act_sym", True),
                    ("act_dynamic", True), ("activation_scheme", "dynamic"), ("fmt", "e4m3"))
# What an INC scheme class other than INCFp8Scheme is called (resolve_scheme's order); fp8check names them only.
OTHER_SCHEMES = ("INCMxfp8LinearScheme", "INCWNA16LinearScheme", "INCMxfp4LinearMethod")


class IncConfig(NamedTuple):
    """The checkpoint's AutoRound keys as INCConfig.from_config reads them (defaults applied per release later)."""

    bits: object
    group_size: object
    sym: object                            # None when the key is absent (0.28 requires it, 0.29 defaults True)
    data_type: object
    packing_format: object                 # None when absent (defaulted by release)
    backend: object
    block_names: tuple[str, ...] | None    # block_name_to_quantize / to_quant_block_names
    extra_config: dict                     # layer name or regex -> {"bits", "group_size", "sym"}
    raw: dict                              # the whole config: _validate_raw_config reads the act_* keys from it
    method: str = NAME


def override(raw_cfg: dict, user_quantization: str | None) -> str | None:
    """INCConfig.override_quantization_method: quant_method "auto-round" becomes "inc"."""
    return NAME if raw_cfg.get("quant_method") == AUTO_ROUND else None


def parse(raw: dict, where: str) -> IncConfig:
    """from_config's required keys (bits, then group_size: every release) and the shapes fp8check must be able to
    read; everything INCConfig checks differently per release is config_errors'."""
    for key in ("bits", "group_size"):
        if key not in raw:
            raise ConfigError(f"{where}: Cannot find any of [{key!r}] in the model's quantization config.")
    blocks = _first(raw, ("block_name_to_quantize", "to_quant_block_names"))
    if isinstance(blocks, str):
        blocks = blocks.split(",")
    if blocks is not None and (not isinstance(blocks, list) or not all(isinstance(b, str) for b in blocks)):
        raise ConfigError(f"{where}.block_name_to_quantize must be a string or a list of strings, got {shown(blocks)}")
    extra = raw.get("extra_config") or {}
    if not isinstance(extra, dict) or not all(isinstance(v, dict) for v in extra.values()):
        raise ConfigError(f"{where}.extra_config must be an object of per-layer objects, got {shown(extra)}")
    # vLLM re.search-es every key holding a regex character against layer names: vet them as patterns.
    pattern_list([f"re:{key}" for key in extra if REGEX_CHARS & set(key)], f"{where}.extra_config")
    return IncConfig(bits=raw["bits"], group_size=raw["group_size"], sym=raw.get("sym"),
                     data_type=raw.get("data_type", "int"), packing_format=raw.get("packing_format"),
                     backend=_first(raw, ("backend", "vllm_backend"), "auto"),
                     block_names=tuple(blocks) if blocks is not None else None, extra_config=extra, raw=raw)


def _first(raw: dict, keys: tuple[str, ...], default: object = None) -> object:
    """get_from_keys_or: the first key present, its value even when null."""
    return next((raw[k] for k in keys if k in raw), default)


# --- construction (model-wide errors) --------------------------------------------------------------------


def config_errors(config: IncConfig, ctx: RoutingContext) -> list[str]:
    """What INCConfig.from_config / __init__ raises for this release, before any layer is built."""
    error = _construction_error(config, ctx) if ctx.profile.has(FP8_BLOCK_CHANGE) else _legacy_error(config, ctx)
    return [error] if error else []


def _set(items: tuple) -> str:
    """A Python set as vLLM prints it (its order is the source's; CPython's may differ run to run for strings)."""
    return "{" + ", ".join(repr(i) for i in items) + "}"


def _legacy_error(config: IncConfig, ctx: RoutingContext) -> str | None:
    """0.25-0.28: sym required, data_type int (0.27+: or mx_fp), no auto_round:fp8 packing."""
    if config.sym is None and "sym" not in config.raw:
        return "Cannot find any of ['sym'] in the model's quantization config."
    if config.bits not in (2, 3, 4, 8):
        return f"Unsupported weight_bits: {config.bits}, currently only support {{2, 3, 4, 8}}."
    mxfp = ctx.profile.has(INC_MXFP_CHANGE)
    data_type = config.data_type
    if data_type != "int" and not (mxfp and isinstance(data_type, str) and "mx_fp" in data_type):
        if mxfp:
            return f"Unsupported data_type: {data_type}, currently only support {_set(('int', 'mx_fp'))}."
        return f"Unsupported data_type: {data_type}, currently only support  {_set(('int',))}."
    formats = ("auto_round:auto_gptq", "auto_round:auto_awq") + (("auto_round:llm_compressor",) if mxfp else ())
    packing = config.packing_format if config.packing_format is not None else "auto_round:auto_gptq"
    if packing not in formats:
        return f"Unsupported packing_format: {packing}, currently only support {_set(formats)}."
    return _backend_error(config.backend, ",  " if not mxfp else ", ")


def _backend_error(backend: object, separator: str = ", ") -> str | None:
    backends = ("auto", "gptq", "gptq:marlin", "awq", "awq:marlin", "marlin")
    if backend not in backends:
        return f"Unsupported backend: {backend}{separator}currently only support {_set(backends)}."
    return None


def normalize_group_size(group_size: object) -> int | tuple[int, int] | str:
    """INCConfigParser._normalize_group_size: an int or a 2-tuple of ints, else the ValueError's text."""
    if isinstance(group_size, (list, tuple)):
        if len(group_size) != 2 or not all(isinstance(v, int) for v in group_size):
            return f"INC block-wise FP8 requires group_size to be a 2-D integer sequence, but found {group_size!r}."
        return (group_size[0], group_size[1])
    if not isinstance(group_size, int):
        return f"INC group_size must be an int or a 2-D integer sequence, but found {type(group_size).__name__}."
    return group_size


def _data_type(config: IncConfig) -> object:
    return "fp" if config.data_type == "fp8" else config.data_type


def _packing_format(config: IncConfig, group_size: object) -> object:
    """from_config's default packing_format (0.29+)."""
    if config.packing_format is not None:
        return config.packing_format
    data_type = _data_type(config)
    if data_type == "fp" and config.bits == 8 and isinstance(group_size, tuple):
        return FP8_BLOCK_PACKING
    if isinstance(data_type, str) and "mx_fp" in data_type:
        return "auto_round:llm_compressor"
    return "auto_round:auto_gptq"


def _construction_error(config: IncConfig, ctx: RoutingContext) -> str | None:
    """0.29+: from_config, __init__'s ValueErrors, _validate_supported_quantization, then _validate_raw_config."""
    group_size = normalize_group_size(config.group_size)
    if isinstance(group_size, str):
        return group_size
    data_type, packing = _data_type(config), _packing_format(config, group_size)
    sym = True if "sym" not in config.raw else config.sym
    bits = (2, 3, 4, 5, 6, 7, 8) if ctx.profile.has(INC_BITS_CHANGE) else (2, 3, 4, 8)
    if config.bits not in bits:
        return f"Unsupported weight_bits: {config.bits}, currently only support {_set(bits)}."
    if data_type not in ("int", "mx_fp", "fp") and not (isinstance(data_type, str) and "mx_fp" in data_type):
        return f"Unsupported data_type: {data_type}, currently only support {_set(('int', 'mx_fp', 'fp'))}."
    formats = ("auto_round:auto_gptq", "auto_round:auto_awq", FP8_BLOCK_PACKING, "auto_round:llm_compressor")
    if packing not in formats:
        return f"Unsupported packing_format: {packing}, currently only support {_set(formats)}."
    error = _backend_error(config.backend)
    if error:
        return error
    if data_type == "int":
        return _int_error(group_size, packing)
    if data_type != "fp":
        return None  # MXFP: not an FP8 e4m3 format fp8check routes
    checks = (
        (config.bits == 8, f"INC block-wise FP8 only supports bits=8, but found bits={config.bits}."),
        (isinstance(group_size, tuple),
         f"INC block-wise FP8 requires a 2-D group_size, but found group_size={group_size!r}."),
        (bool(sym), "INC block-wise FP8 only supports symmetric weights."),
        (packing == FP8_BLOCK_PACKING,
         f"INC block-wise FP8 only supports packing_format={FP8_BLOCK_PACKING!r}, but found {packing!r}."),
        (config.backend == "auto", f"INC block-wise FP8 only supports backend='auto', but found "
                                   f"backend={config.backend!r}."),
    )
    failed = next((message for ok, message in checks if not ok), None)
    if failed:
        return f"AssertionError: {failed}"
    assert isinstance(group_size, tuple)  # the 2-D group size check above
    for field, expected in FP8_BLOCK_FIELDS:
        expected = group_size[0] if field == "act_group_size" else expected
        actual = config.raw.get(field, expected)
        if actual != expected:
            return (f"AssertionError: INC block-wise FP8 only supports {field}={expected!r}, but found "
                    f"{field}={actual!r}.")
    return None


def _int_error(group_size: int | tuple[int, int], packing: object) -> str | None:
    """_validate_int_quantization."""
    if not isinstance(group_size, int):
        return f"AssertionError: INC int quantization requires scalar group_size, but found group_size={group_size!r}."
    formats = ["auto_round:auto_awq", "auto_round:auto_gptq"]
    if packing not in formats:
        return (f"AssertionError: INC int quantization only supports packing_format in {formats!r}, but found "
                f"packing_format={packing!r}.")
    return None


# --- layers ----------------------------------------------------------------------------------------------


class LayerConfig(NamedTuple):
    """INCLayerConfig: what INCConfigParser.resolve gives one layer."""

    bits: object
    group_size: object
    sym: object
    packing_format: object
    backend: object
    data_type: object
    quantized: bool

    def __repr__(self) -> str:  # the dataclass's repr, as vLLM's messages print it
        return (f"INCLayerConfig(bits={self.bits!r}, group_size={self.group_size!r}, sym={self.sym!r}, "
                f"packing_format={self.packing_format!r}, backend={self.backend!r}, data_type={self.data_type!r}, "
                f"quantized={self.quantized!r})")

    @property
    def fp8_block(self) -> tuple[int, int] | None:
        """The block (the 2-D group size) of an FP8 block-wise layer; None for any other layer."""
        if (self.data_type == "fp" and self.bits == 8 and bool(self.sym) and self.quantized
                and self.packing_format == FP8_BLOCK_PACKING and isinstance(self.group_size, tuple)):
            return self.group_size[0], self.group_size[1]
        return None


def _regex_keys(config: IncConfig) -> list[str]:
    return [key for key in config.extra_config if REGEX_CHARS & set(key)]


def _searches(pattern: str, name: str) -> bool:
    try:
        return re.search(pattern, name) is not None
    except re.error:
        return False


def _explicitly_configured(name: str, config: IncConfig) -> bool:
    return name in config.extra_config or any(_searches(p, name) for p in _regex_keys(config))


def _layer_values(name: str, config: IncConfig, quantized: bool = True) -> tuple:
    """get_config: (bits, group_size, sym) of one name, an exact extra_config key first, then a regex key."""
    defaults = (config.bits if quantized else 16, normalize_group_size(config.group_size) if quantized else -1,
                (True if "sym" not in config.raw else config.sym) if quantized else True)
    entry = config.extra_config.get(name)
    if entry is None:
        entry = next((config.extra_config[p] for p in _regex_keys(config) if _searches(p, name)), None)
    if entry is None:
        return defaults
    group_size = normalize_group_size(entry.get("group_size", defaults[1]))
    return entry.get("bits", defaults[0]), group_size, entry.get("sym", defaults[2])


def _resolve(name: str, shards: list[str] | None, is_lm_head: bool, config: IncConfig) -> tuple | str:
    """INCConfigParser._resolve_raw: (bits, group_size, sym), or the ValueError a fused module raises."""
    extra = config.extra_config
    if name in extra:
        return _layer_values(name, config)
    suffix = next((key for key in extra if name.endswith(f".{key}")), None)
    if suffix is not None:
        return _layer_values(suffix, config)
    quantized = not is_lm_head
    if config.block_names:
        quantized = any(name.startswith(block) for block in config.block_names)
    if extra and shards and any(_explicitly_configured(s, config) for s in shards):
        values = {_layer_values(s, config, quantized) for s in shards}
        if len(values) > 1:
            return f"Fused module '{name}' requires consistent quant config for {shards}"
        return values.pop()
    return _layer_values(name, config, quantized)


def _skipped_by_extra_config(name: str, config: IncConfig) -> bool:
    """get_quant_method's first check: an extra_config entry for this prefix whose bits (default 16) are >= 16."""
    for key in (name, f"model.{name}"):
        entry = config.extra_config.get(key)
        if entry is not None and _at_least_16(entry.get("bits", 16)):
            return True
    return False


def _at_least_16(bits: object) -> bool:
    return isinstance(bits, (int, float)) and bits >= 16


def layer_config(name: str, shards: list[str] | None, is_lm_head: bool, config: IncConfig) -> LayerConfig | str:
    resolved = _resolve(name, shards, is_lm_head, config)
    if isinstance(resolved, str):
        return resolved
    bits, group_size, sym = resolved
    if isinstance(group_size, str):
        return group_size
    quantized = not (isinstance(bits, (int, float)) and bits >= 16)
    return LayerConfig(bits, group_size, sym, _packing_format(config, normalize_group_size(config.group_size)),
                       config.backend, _data_type(config), quantized)


def assign(module: Module, config: IncConfig) -> Assignment:
    """INCConfig.get_quant_method for a LinearBase or ParallelLMHead (an lm_head is quantized only when
    extra_config or block_name_to_quantize says so)."""
    if module.unquantized:
        return Assignment(None, reason=module.unquantized)
    head = module.layer_type == "ParallelLMHead"  # skipped: UnquantizedLinearMethod, as for a LinearBase
    if _skipped_by_extra_config(module.name, config):
        return Assignment(None, reason="extra_config gives it bits >= 16", lm_head_linear_method=head)
    shards = shard_names(module) if module.fused else None
    resolved = layer_config(module.name, shards, head, config)
    if isinstance(resolved, str):
        return Assignment(NAME, error=resolved)
    if not resolved.quantized:
        reason = ("lm_head stays unquantized unless extra_config quantizes it" if head
                  else "outside block_name_to_quantize, or extra_config gives it bits >= 16")
        return Assignment(None, reason=reason, lm_head_linear_method=head)
    if resolved.fp8_block:
        return Assignment(NAME, strategy=Strategy.BLOCK, block=resolved.fp8_block)
    scheme = _other_scheme(resolved)  # the non-FP8 scheme resolve_scheme picks; none: vLLM's NotImplementedError
    if scheme is None:
        return Assignment(NAME, error=f"No INC scheme found for layer config: {resolved!r}")
    return Assignment(NAME, scheme=scheme)


def describe(assignment: Assignment) -> tuple[str | None, str | None]:
    if assignment.block is None:
        return None, None
    return fp8.describe(assignment)


def linear_scheme(assignment: Assignment, ctx: RoutingContext, linear_backend: str) -> tuple[str | None, str | None]:
    """resolve_scheme: INCFp8Scheme for block FP8, the other INC schemes named, else NotImplementedError."""
    if assignment.block is not None:
        return INC_FP8, None
    return assignment.scheme, None


def _other_scheme(resolved: LayerConfig) -> str | None:
    """The non-FP8 scheme resolve_scheme picks after INCFp8Scheme: INCMxfp8Scheme, INCWna16Scheme, INCMxfp4Scheme."""
    mxfp = isinstance(resolved.data_type, str) and "mx_fp" in resolved.data_type
    if mxfp and resolved.bits == 8:
        return OTHER_SCHEMES[0]
    if resolved.data_type == "int":
        return OTHER_SCHEMES[1]
    if mxfp and resolved.bits == 4:
        return OTHER_SCHEMES[2]
    return None


def kernel_request(scheme: str, assignment: Assignment, ctx: RoutingContext, e8m0: bool
                   ) -> KernelRequest:
    """Fp8LinearMethod's block keys (INCFp8LinearScheme delegates to it)."""
    return fp8.kernel_request(fp8.FP8_METHOD, assignment, ctx, e8m0)


def expected_tensors(assignment: Assignment) -> ExpectedTensors | None:
    """Fp8LinearMethod.create_weights for a block config: weight + weight_scale_inv."""
    return fp8.expected_tensors(assignment) if assignment.block is not None else None


def moe_method(name: str, leaves: tuple[str, str, str], config: IncConfig, profile: RuleProfile) -> MoEMethod:
    """get_quant_method for RoutedExperts: unquantized when extra_config / block_name_to_quantize leave it at 16
    bits, else the scheme's get_moe_method, which INCFp8Scheme does not override (NotImplementedError)."""
    if _skipped_by_extra_config(name, config):
        return MoEMethod(UNQUANTIZED_MOE, note="extra_config gives it bits >= 16")
    resolved = layer_config(name, None, False, config)
    if isinstance(resolved, str):
        return MoEMethod("?", error=resolved)
    if not resolved.quantized:
        return MoEMethod(UNQUANTIZED_MOE, note="outside block_name_to_quantize, or extra_config gives it bits >= 16")
    if resolved.fp8_block:
        return MoEMethod("?", error=f"INCFp8Scheme does not support MoE layers. Layer config: {resolved!r}")
    return MoEMethod("(INC non-FP8 MoE method)", note="not an FP8 e4m3 scheme; fp8check routes FP8 experts only")


def maps_lists(config: IncConfig, mapper: Callable[[str], str]) -> IncConfig:
    """INCConfig.apply_vllm_mapper (0.25-0.34): block_name_to_quantize (apply_list) and extra_config's keys
    (apply_dict: a later key mapped onto an earlier one's name replaces its value) through the mapper."""
    blocks = tuple(map(mapper, config.block_names)) if config.block_names is not None else None
    return config._replace(block_names=blocks, extra_config={mapper(k): v for k, v in config.extra_config.items()})


FORMAT = Format(
    name=NAME, min_capability=60, parse=parse, assign=assign, describe=describe, linear_scheme=linear_scheme,
    fp8_schemes=frozenset({INC_FP8}), kernel_request=kernel_request, expected_tensors=expected_tensors,
    moe_method=moe_method, config_errors=config_errors, override=override, act_dtypes=("float16", "bfloat16"),
    maps_lists=maps_lists,
)
