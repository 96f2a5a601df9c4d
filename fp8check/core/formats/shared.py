"""What every checkpoint format shares: compressed-tensors' QuantizationArgs, the config validators' small
checks, vLLM's module-name matching (ignore lists, targets) and the block weight key.

Name matching mirrors vLLM's check_equal_or_regex_match and should_ignore_layer
(quantization/compressed_tensors/utils.py) and is_layer_skipped (quantization/utils/quant_utils.py). Patterns are
vetted when the config is parsed: vLLM runs re.match of every 're:' pattern against every layer name, so a
pattern that backtracks exponentially would hang it, and fp8check with it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, NamedTuple

from fp8check.core.errors import ConfigError, printable, shown
from fp8check.core.vocabulary import Strategy
from fp8check.kernels.quant_keys import QuantKey

try:
    from re import _parser as _sre  # type: ignore[attr-defined]  # Python 3.11+ (not in typeshed)
except ImportError:  # pragma: no cover - Python 3.10
    import sre_parse as _sre


class QuantArgs(NamedTuple):
    """compressed-tensors QuantizationArgs, with the strategy already inferred as compressed-tensors does."""

    num_bits: int = 8
    type: str = "int"
    symmetric: bool = True
    strategy: Strategy = Strategy.TENSOR
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


# --- config validators -----------------------------------------------------------------------------------


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def enum_value(value: object, allowed: tuple[str, ...], where: str) -> str:
    if not isinstance(value, str) or value.lower() not in allowed:
        raise ConfigError(f"{where}: unknown value {shown(value)} (expected one of: {', '.join(allowed)})")
    return value.lower()


# torch's dtypes by attribute name (torch 2.13): the canonical name each is printed with (str(dtype)), for the
# aliases whose name differs.
TORCH_DTYPES = ("bfloat16", "bits16", "bits1x8", "bits2x4", "bits4x2", "bits8", "bool", "complex128", "complex32",
                "complex64", "float16", "float32", "float4_e2m1fn_x2", "float64", "float8_e4m3fn", "float8_e4m3fnuz",
                "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "int1", "int16", "int2", "int3", "int32", "int4",
                "int5", "int6", "int64", "int7", "int8", "qint32", "qint8", "quint2x4", "quint4x2", "quint8", "uint1",
                "uint16", "uint2", "uint3", "uint32", "uint4", "uint5", "uint6", "uint64", "uint7", "uint8")
TORCH_DTYPE_ALIASES = {"bit": "uint1", "cdouble": "complex128", "cfloat": "complex64", "chalf": "complex32",
                       "double": "float64", "float": "float32", "half": "float16", "int": "int32", "long": "int64",
                       "short": "int16"}


def torch_dtype(value: object, where: str) -> str | None:
    """compressed-tensors' TorchDtype (utils/type.py, the same in 0.17.0, which every vLLM release 0.25-0.34 pins,
    and 0.20): a string naming a torch dtype with or without the "torch." prefix (`name.removeprefix("torch.")`,
    then getattr(torch, name)), so "uint8" is torch.uint8 as "torch.uint8" is. Returned as str(dtype), the one
    spelling fp8check compares: "torch.uint8"."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a dtype name, got {shown(value)}")
    name = value.removeprefix("torch.")
    if name not in TORCH_DTYPES and name not in TORCH_DTYPE_ALIASES:
        raise ConfigError(f"{where}: No such torch dtype `torch.{printable(name, 80)}`")
    return f"torch.{TORCH_DTYPE_ALIASES.get(name, name)}"


def _str_list(value: object, where: str, required: bool = False) -> tuple[str, ...]:
    if value is None and not required:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings, got {shown(value)}")
    return tuple(value)


def pattern_list(value: object, where: str, required: bool = False) -> tuple[str, ...]:
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


# --- module-name matching --------------------------------------------------------------------------------


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


def exact(name: str, pattern: str) -> bool:
    return name == pattern


def suffix(name: str, pattern: str) -> bool:
    """is_layer_skipped's suffix mode (quant_utils.py suffix_match, 0.28-0.34): the name, or its tail after a dot."""
    return name == pattern or name.endswith(f".{pattern}")


def shard_names(module) -> list[str]:
    """The packed_modules_mapping components: q/k/v for Llama, the fused name itself where the checkpoint
    stores it fused (Phi-3 maps qkv_proj -> [qkv_proj])."""
    return [shard.name for shard in module.shards] if module.fused else [module.name]


def ignored(module, patterns: tuple[str, ...], mixed_message: str, match: Callable[[str, str], bool],
            fused_name_wins: bool) -> tuple[bool, str | None]:
    """(ignored, error): whether a module is on an ignore list, its fused layer's shards judged together.

    should_ignore_layer (compressed-tensors, Quark 0.30+: `matches`) and is_layer_skipped (layer_skipped: `exact`
    names); with `fused_name_wins` an exact hit on the fused name decides, else the shards are judged together
    (Quark until 0.29). Shards must agree, else vLLM raises `mixed_message`."""
    if match is exact:  # one C-level membership test instead of a call per pattern (ignore lists run to hundreds)
        def hit(name: str) -> bool:
            return name in patterns
    else:
        def hit(name: str) -> bool:
            return any(match(name, p) for p in patterns)
    fused_hit = fused_name_wins and module.name in patterns
    if module.fused and not fused_hit:
        verdicts = {hit(s) for s in shard_names(module)}
        if len(verdicts) > 1:
            return False, mixed_message
        return verdicts.pop(), None
    return hit(module.name), None


def layer_skipped(module, patterns: tuple[str, ...], match: Callable[[str, str], bool] = exact
                  ) -> tuple[bool, str | None]:
    """is_layer_skipped (quantization/utils/quant_utils.py, the same 0.25-0.33) in its default exact mode (or
    `match`: Fp8Config's suffix mode), as fp8, fbgemm_fp8 and ModelOpt call it: a fused name listed as such wins,
    else the fused layer's shards decide together (vLLM's message when they disagree)."""
    return ignored(module, patterns, f"Detected some but not all shards of {module.name} are quantized. All shards "
                   "of fused layers to have the same precision.", match, fused_name_wins=True)


# The class vLLM builds a FusedMoE's experts as (fused_moe's RoutedExperts), unless the model file names its own.
ROUTED_EXPERTS = "RoutedExperts"


class ExpertsProbe(NamedTuple):
    """A RoutedExperts layer (never fused) as get_quant_method sees it: what a format matches an expert name with."""

    name: str
    layer_type: str = ROUTED_EXPERTS
    shards: tuple = ()
    fused: bool = False
    unquantized: str | None = None
    vllm_names: None = None  # the probe is named as vLLM names the layer


# --- kernel keys -----------------------------------------------------------------------------------------


def block_weight_key(block: tuple[int, int], e8m0: bool) -> QuantKey:
    """The weight key of block-scaled FP8 weights; e8m0 scales (DeepSeek-V3.2 style) change its scale dtype."""
    return QuantKey(True, block, "float8_e8m0fnu" if e8m0 else "float32")
