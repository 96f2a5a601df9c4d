"""A small typed model of `quantization_config`, parsed without compressed-tensors or pydantic.

compressed-tensors costs ~5 s to import, so the inspect path mirrors the parts of its `QuantizationArgs` /
`QuantizationScheme` / `QuantizationConfig` validation that decide routing (strategy inference, block, group,
token and dynamic rules, extra keys forbidden). `tests/test_quant_config.py` proves both parsers agree.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from fp8check.core.errors import ConfigError, printable, shown

try:
    from re import _parser as _sre  # Python 3.11+
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre

STRATEGIES = ("tensor", "channel", "group", "block", "token", "tensor_group", "attn_head")
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
# Quantization methods fp8check recognises but does not route (out of scope: not FP8 linear layers).
OTHER_METHODS = (
    "gptq", "gptq_marlin", "awq", "awq_marlin", "bitsandbytes", "modelopt", "modelopt_fp4", "gguf", "hqq",
    "marlin", "fbgemm_fp8", "mxfp4", "quark", "torchao", "auto-round", "inc", "experts_int8", "tpu_int8",
    "moe_wna16", "ptpc_fp8", "fp_quant", "petit_nvfp4", "bitblas", "aqlm", "eetq", "compressed_tensors",
)


class QuantArgs(NamedTuple):
    """compressed-tensors QuantizationArgs, with the strategy already inferred as compressed-tensors does."""

    num_bits: int = 8
    type: str = "int"
    symmetric: bool = True
    strategy: str = "tensor"
    group_size: int | None = None
    block_structure: tuple[int, int] | None = None
    dynamic: bool | str = False
    actorder: str | None = None
    scale_dtype: str | None = None

    @property
    def is_float8(self) -> bool:
        return self.type == "float" and self.num_bits == 8

    def pydantic_str(self) -> str:
        """Roughly how vLLM prints compressed-tensors' QuantizationArgs (pydantic's str) in its errors."""
        return (f"num_bits={self.num_bits} type='{self.type}' symmetric={self.symmetric} group_size={self.group_size} "
                f"strategy='{self.strategy}' block_structure={list(self.block_structure) if self.block_structure else None} "
                f"dynamic={self.dynamic!r} actorder={self.actorder!r} scale_dtype={self.scale_dtype}")


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
    method: str = "compressed-tensors"


class NativeFp8Config(NamedTuple):
    """vLLM's / HF's `quant_method: fp8` (Fp8Config)."""

    activation_scheme: str
    ignored_layers: tuple[str, ...]
    weight_block_size: tuple[int, int] | None
    method: str = "fp8"


class OutOfScopeConfig(NamedTuple):
    """A quantization method fp8check recognises but does not route."""

    method: str


QuantConfig = CompressedTensorsConfig | NativeFp8Config | OutOfScopeConfig


def parse_quant_config(raw: object, where: str = "config.json: quantization_config") -> QuantConfig | None:
    """Parse a `quantization_config` object; None means the model is not quantized."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be an object, got {type(raw).__name__}")
    method = raw.get("quant_method")
    if not isinstance(method, str):
        raise ConfigError(f"{where}.quant_method must be a string, got {shown(method)}")
    method = method.lower()
    if method == "compressed-tensors":
        return _parse_compressed_tensors(raw, where)
    if method == "fp8":
        return _parse_native_fp8(raw, where)
    return OutOfScopeConfig(method=method)


# --- compressed-tensors ----------------------------------------------------------------------------------


def parse_quant_args(raw: object, where: str) -> QuantArgs:
    """Mirror of compressed-tensors' QuantizationArgs validators (field validators + validate_model_after)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be an object, got {shown(raw)}")
    extra = set(raw) - _ARGS_KEYS
    if extra:
        raise ConfigError(f"{where}: unknown key(s) {shown(sorted(extra))} (compressed-tensors forbids extra keys)")
    num_bits = raw.get("num_bits", 8)
    if not _is_int(num_bits) or num_bits <= 0:
        raise ConfigError(f"{where}.num_bits must be a positive integer, got {shown(num_bits)}")
    qtype = _enum(raw.get("type", "int"), ("int", "float"), f"{where}.type")
    symmetric = raw.get("symmetric", True)
    if not isinstance(symmetric, bool):
        raise ConfigError(f"{where}.symmetric must be true or false, got {shown(symmetric)}")
    group_size = raw.get("group_size")
    if group_size is not None and (not _is_int(group_size) or group_size < -1):
        raise ConfigError(f"{where}.group_size: invalid group size {shown(group_size)}. Use group_size > 0 for strategy='group' and group_size = -1 for 'channel'")
    strategy = raw.get("strategy")
    if strategy is not None:
        strategy = _enum(strategy, STRATEGIES, f"{where}.strategy")
    block = _block_structure(raw.get("block_structure"), f"{where}.block_structure")
    dynamic = raw.get("dynamic", False)
    if isinstance(dynamic, str):
        dynamic = _enum(dynamic, ("local",), f"{where}.dynamic")
    elif not isinstance(dynamic, bool):
        raise ConfigError(f"{where}.dynamic must be true, false or 'local', got {shown(dynamic)}")
    actorder = _actorder(raw.get("actorder"), f"{where}.actorder")
    scale_dtype = raw.get("scale_dtype")
    if scale_dtype is not None and not isinstance(scale_dtype, str):
        raise ConfigError(f"{where}.scale_dtype must be a dtype name, got {shown(scale_dtype)}")

    if strategy is None:
        if group_size is None:
            strategy = "tensor"
        elif group_size > 0:
            strategy = "group"
        elif group_size == -1:
            strategy = "channel"
        else:
            raise ConfigError(f"{where}: invalid group size {group_size}. Use group_size > 0 for strategy='group' and group_size = -1 for 'channel'")
    if strategy == "token" and not dynamic:
        raise ConfigError(f"{where}: cannot perform static token quantization, please use dynamic=true")
    if strategy in ("group", "tensor_group") and (group_size is None or group_size <= 0):
        raise ConfigError(f"{where}: strategy {strategy} requires group_size to be set to a positive value")
    if group_size is not None and group_size > 0 and strategy not in ("group", "tensor_group"):
        raise ConfigError(f"{where}: group_size requires strategy to be set to 'group'")
    if strategy == "block" and block is None:
        raise ConfigError(f"{where}: block strategy requires block_structure (e.g. [128, 128])")
    if block is not None and strategy != "block":
        raise ConfigError(f"{where}: block_structure requires strategy 'block', got {strategy!r}")
    if dynamic:
        if strategy not in DYNAMIC_STRATEGIES:
            raise ConfigError(f"{where}: one of {', '.join(DYNAMIC_STRATEGIES)} must be used for dynamic quant, got {strategy!r}")
        if dynamic == "local" and strategy != "tensor_group":
            raise ConfigError(f"{where}: dynamic 'local' is only supported for strategy tensor_group")
    return QuantArgs(
        num_bits=num_bits, type=qtype, symmetric=symmetric, strategy=strategy, group_size=group_size,
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
    if not isinstance(value, list | tuple) or len(value) != 2 or not all(_is_int(v) and v > 0 for v in value):
        raise error
    return (value[0], value[1])


def _actorder(value: object, where: str) -> str | None:
    if value is None or value is False:
        return None
    if value is True or (isinstance(value, str) and value.lower() in ("group", "dynamic")):
        raise ConfigError(f"{where}: actorder={shown(value)} (group activation ordering) has been removed; use 'weight' or null")
    return _enum(value, ("weight", "static"), where)


def _parse_scheme(name: str, raw: object, where: str) -> CTScheme:
    if isinstance(raw, list):  # {"FP8_DYNAMIC": ["Linear"]}: a preset keyed by its name
        return _preset_scheme(name, raw, where)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be an object (a scheme) or a list of targets (a preset), got {shown(raw)}")
    extra = set(raw) - _SCHEME_KEYS
    if extra:
        raise ConfigError(f"{where}: unknown key(s) {shown(sorted(extra))} (compressed-tensors forbids extra keys)")
    targets = _pattern_list(raw.get("targets"), f"{where}.targets", required=True)
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
        fmt = _enum(fmt, COMPRESSION_FORMATS, f"{where}.format")
        if fmt == "mixed-precision":
            raise ConfigError(f"{where}.format: mixed-precision cannot be set as a format for a QuantizationScheme")
    return CTScheme(name=name, targets=targets, format=fmt, **args)


def _preset_scheme(name: str, targets: list, where: str) -> CTScheme:
    preset = PRESETS.get(name.upper())
    if preset is None:
        raise ConfigError(f"{where}: unknown preset scheme name {shown(name)} (known: {', '.join(PRESETS)})")
    weights, inputs = preset
    return CTScheme(
        name=name, targets=_pattern_list(targets, where, required=True), weights=weights, input_activations=inputs,
        output_activations=None, format=None,
    )


def _parse_compressed_tensors(raw: dict, where: str) -> CompressedTensorsConfig:
    groups_raw = raw.get("config_groups")
    if not isinstance(groups_raw, dict):
        raise ConfigError(f"{where}.config_groups must be an object of config groups, got {shown(groups_raw)}")
    groups = tuple(_parse_scheme(str(k), v, f"{where}.config_groups.{printable(str(k), 80)}") for k, v in groups_raw.items())
    fmt = raw.get("format")
    if fmt is not None and not isinstance(fmt, str):
        raise ConfigError(f"{where}.format must be a string, got {shown(fmt)}")
    ignore = _pattern_list(raw.get("ignore") or [], f"{where}.ignore")
    sparsity = raw.get("sparsity_config") or {}
    if not isinstance(sparsity, dict):
        raise ConfigError(f"{where}.sparsity_config must be an object, got {shown(sparsity)}")
    sparse_targets = _pattern_list(sparsity.get("targets") or [], f"{where}.sparsity_config.targets")
    return CompressedTensorsConfig(groups=groups, ignore=ignore, format=fmt, sparsity_targets=sparse_targets)


def _q(num_bits, qtype, strategy, dynamic, group_size=None, block=None, scale_dtype=None) -> QuantArgs:
    return QuantArgs(num_bits=num_bits, type=qtype, strategy=strategy, dynamic=dynamic, group_size=group_size,
                     block_structure=block, scale_dtype=scale_dtype)


def _int_wnam(weight_bits: int, act_bits: int = 16):
    inputs = _q(act_bits, "int", "token", True) if act_bits < 16 else None
    return (_q(weight_bits, "int", "group", False, group_size=128), inputs)


# compressed-tensors' PRESET_SCHEMES (quant_scheme.py), as (weights, input_activations).
PRESETS: dict[str, tuple[QuantArgs | None, QuantArgs | None]] = {
    **{f"W{w}A{a}": _int_wnam(w, a) for w in range(2, 9) for a in (4, 8, 16) if w <= a and (w, a) != (8, 8)},
    "UNQUANTIZED": (None, None),
    "W4A16_ASYM": (QuantArgs(num_bits=4, type="int", strategy="group", group_size=128, symmetric=False), None),
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


# --- native fp8 ------------------------------------------------------------------------------------------


def _parse_native_fp8(raw: dict, where: str) -> NativeFp8Config:
    """Mirror of vLLM's Fp8Config.from_config and its __init__ checks (same messages)."""
    if "activation_scheme" not in raw:
        raise ConfigError(f"{where}: Cannot find any of ['activation_scheme'] in the model's quantization config.")
    scheme = raw["activation_scheme"]
    if scheme not in ("static", "dynamic"):
        raise ConfigError(f"{where}: Unsupported activation scheme {shown(scheme)}")
    ignored = _pattern_list(raw.get("ignored_layers") or raw.get("modules_to_not_convert") or [], f"{where}.ignored_layers")
    block = raw.get("weight_block_size")
    if block is not None:
        if not isinstance(block, list) or not all(_is_int(v) and v > 0 for v in block):
            raise ConfigError(f"{where}.weight_block_size must be a list of positive integers, got {shown(block)}")
        if len(block) != 2:
            raise ConfigError(f"{where}: The quantization block size of weight must have 2 dimensions, but got {len(block)} dimensions")
        if scheme != "dynamic":
            raise ConfigError(f"{where}: The block-wise quantization only supports dynamic activation scheme for now, but got {scheme} activation scheme.")
        block = (block[0], block[1])
    return NativeFp8Config(activation_scheme=scheme, ignored_layers=ignored, weight_block_size=block)


# --- helpers ---------------------------------------------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _enum(value: object, allowed: tuple[str, ...], where: str) -> str:
    if not isinstance(value, str) or value.lower() not in allowed:
        raise ConfigError(f"{where}: unknown value {shown(value)} (expected one of: {', '.join(allowed)})")
    return value.lower()


def _str_list(value: object, where: str, required: bool = False) -> tuple[str, ...]:
    if value is None and not required:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings, got {shown(value)}")
    return tuple(value)


def _pattern_list(value: object, where: str, required: bool = False) -> tuple[str, ...]:
    """Module names or 're:' regexes (targets, ignore). vLLM matches each against every layer name with re.match,
    so a regex that backtracks exponentially hangs it, and fp8check with it: such a config is refused here."""
    patterns = _str_list(value, where, required)
    for pattern in patterns:
        if pattern.startswith("re:"):
            try:
                re.compile(pattern[3:])
                tree = _sre.parse(pattern[3:])
            except (re.error, OverflowError, RecursionError, ValueError) as exc:
                raise ConfigError(f"{where}: invalid regular expression {shown(pattern)} ({printable(str(exc), 80)}); "
                                  "vLLM's re.match would raise on it") from None
            if _exponential(tree, False):
                raise ConfigError(f"{where}: regular expression {shown(pattern)} repeats a group that itself repeats or "
                                  "alternates; matching it can take exponential time (vLLM would hang), so fp8check refuses it")
    return patterns


_REPEATS = (_sre.MAX_REPEAT, _sre.MIN_REPEAT)


def _exponential(items, in_repeat: bool) -> bool:
    """A variable repeat or an alternation inside a repeat ('(a+)+', '(a|aa)*', '(a+){99}'): the shapes that
    backtrack exponentially. Fixed counts ('(?:a{2}){3}') offer no choice; possessive repeats and atomic groups
    never backtrack and are not descended into.
    """
    for op, av in items:
        if op in _REPEATS:
            low, high, body = av
            if (in_repeat and low != high) or _exponential(body, in_repeat or high > 1):
                return True
        elif op is _sre.BRANCH:
            if in_repeat or any(_exponential(branch, in_repeat) for branch in av[1]):
                return True
        elif op is _sre.SUBPATTERN:
            if _exponential(av[3], in_repeat):
                return True
        elif op in (_sre.ASSERT, _sre.ASSERT_NOT):
            if _exponential(av[1], in_repeat):
                return True
        elif op is _sre.GROUPREF_EXISTS:
            if any(branch is not None and _exponential(branch, in_repeat) for branch in av[1:]):
                return True
    return False

