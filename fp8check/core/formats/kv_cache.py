"""The KV cache as a checkpoint format declares it to vLLM: the `--kv-cache-dtype` values of each release and what
`auto` resolves to, the KV cache method a format's quant config gives an attention layer and that method's
checks, and the names the checkpoint stores its k / v / q / prob scales under, renamed as vLLM's loader renames
them. Torch-free: plain strings and dicts.

vLLM sources, read in 0.28.0 and 0.33.0 (identical where it matters here):
- config/cache.py: the `CacheDType` Literal (each value with the profile change that added it: CACHE_DTYPES; 0.34.0's
  is 0.33.0's);
- utils/torch_utils.py: get_kv_cache_quant_algo_string / resolve_kv_cache_dtype_string, which engine/arg_utils.py
  calls: a ModelOpt `kv_cache_scheme` / `kv_cache_quant_algo` turns `auto` into fp8_e4m3 (nvfp4 for 4-bit floats,
  a warning and `auto` for anything else); STR_DTYPE_TO_TORCH_DTYPE (every fp8 value is uint8, viewed as
  current_platform.fp8_dtype(): float8_e4m3fnuz on gfx94x, platforms/rocm.py);
- model_executor/layers/attention/attention.py: Attention.__init__ (a quant config's `kv_cache_scheme`, which only
  CompressedTensorsConfig has, turns `auto` into "fp8"; `attn_head` asks for per-head scales;
  kv_cache_dtype_skip_layers: "sliding_window" or a layer index puts the layer back on `auto`),
  _init_kv_cache_quant (the fp8_e5m2 refusal); attention/mla_attention.py (MLAAttention: skip layers by index
  only, no kv_cache_scheme switch);
- quantization/*: get_quant_method for Attention / MLAAttention (each format's Format.kv_cache hook, whose
  method names and KVConfig live here; CompressedTensorsKVCacheMethod.validate_kv_cache_scheme and
  QuarkKVCacheMethod.validate_kv_cache_config are their formats'), quantization/kv_cache.py (BaseKVCacheMethod,
  KVCacheScaleParameter);
- model_loader/weight_utils.py maybe_remap_kv_scale_name, QuarkConfig.get_cache_scale_mapper (remap).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, NamedTuple

from fp8check.core.errors import InputError
from fp8check.core.formats.shared import matches
from fp8check.core.vocabulary import STRATEGY_VALUES, Strategy

if TYPE_CHECKING:
    from fp8check.core.targets.profiles import RuleProfile

# CacheDType in 0.33.0's (and 0.34.0's) order, each with the profile change that added it (None: 0.25.0 has it).
CACHE_DTYPES: tuple[tuple[str, str | None], ...] = (
    ("auto", None), ("float16", None), ("bfloat16", None), ("fp8", None), ("fp8_e4m3", None), ("fp8_e5m2", None),
    ("fp8_inc", None), ("fp8_ds_mla", None), ("nvfp4_ds_mla", "nvfp4-ds-mla"), ("turboquant_k8v4", None),
    ("turboquant_4bit_nc", None), ("turboquant_k3v4_nc", None), ("turboquant_3bit_nc", None),
    ("octave_k3v4", "rocm-octave"), ("octave_k3v3", "rocm-octave"), ("octave_k3v3_compact", "rocm-octave"),
    ("ultraquant_4bit", "ultraquant"), ("int4_per_token_head", None), ("int8_per_token_head", None),
    ("fp8_per_token_head", None), ("nvfp4", None), ("nvfp4_4over6", "nvfp4-4over6-kv"),
)
AUTO = "auto"
FP8_E5M2 = "fp8_e5m2"
# What the cache tensor holds, per value (STR_DTYPE_TO_TORCH_DTYPE; fp8 / fp8_e4m3 are viewed as the platform's
# fp8_dtype()). Values not listed are packed uint8 caches fp8check does not model numerically.
FP8_E4M3_VALUES = ("fp8", "fp8_e4m3")
STORED = {"float16": "float16", "bfloat16": "bfloat16", "fp8_e5m2": "float8_e5m2", "fp8_inc": "float8_e4m3fn"}
ELEMENT_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}

# The KV cache methods get_quant_method gives an Attention layer / an MLAAttention layer: each format says which in
# its Format.kv_cache hook. CompressedTensorsConfig, Fp8Config and QuarkConfig test isinstance(layer, Attention),
# which MLAAttention is not; ModelOptQuantConfigBase tests (Attention, MLAAttention). FBGEMM, INC and
# OnlineQuantizationConfig return None for attention.
CT_METHOD, FP8_METHOD = "CompressedTensorsKVCacheMethod", "Fp8KVCacheMethod"
MODELOPT_METHOD, QUARK_METHOD = "ModelOptKVCacheMethod", "QuarkKVCacheMethod"
# Subclasses of BaseKVCacheMethod that keep its scale processing (CompressedTensorsKVCacheMethod overrides it).
BASE_PROCESSING = (FP8_METHOD, MODELOPT_METHOD, QUARK_METHOD)

# Messages, verbatim.
E5M2_REFUSED = "fp8_e5m2 kv-cache is not supported with fp8 checkpoints."
FALLBACK_ONE = ("Using KV cache scaling factor 1.0 for fp8_e4m3. If this is unintended, verify that k/v_scale "
                "scaling factors are properly set in the checkpoint.")
KV_SCALE_DEPRECATED = ("DEPRECATED. Found kv_scale in the checkpoint. This format is deprecated in favor of separate "
                       "k_scale and v_scale tensors and will be removed in a future release. Functionally, we will "
                       "remap kv_scale to k_scale and duplicate k_scale to v_scale")
NOT_LOADED = ("Found {kind} in the checkpoint (e.g. {name}), but not found the expected name in the model "
              "(e.g. {target}). {kind} is not loaded.")
NOT_SCALAR = "KV-cache scale expects a scalar weight, got shape {shape}"
NO_Q_SCALE = ("Checkpoint does not provide a q scaling factor. Setting it to k_scale. This only matters for FP8 "
              "Attention backends (flash-attn or flashinfer).")
MODELOPT_UNKNOWN = ("WARNING: Unknown kv_cache_quant_algo '{algo}' in model config. Supported values: "
                    "['fp8', 'nvfp4']. Falling back to 'auto'.")


class KVConfig(NamedTuple):
    """What a checkpoint's quant config says about attention, before any layer is built."""

    method: str | None = None         # the KV cache method get_quant_method gives an Attention layer
    mla_method: str | None = None     # ... and an MLAAttention layer
    auto: str = AUTO                  # what --kv-cache-dtype auto resolves to in arg_utils ("auto": not there)
    scheme: dict | None = None        # CompressedTensorsConfig.kv_cache_scheme (switches auto -> fp8 per Attention)
    errors: tuple[str, ...] = ()      # the method's own refusals of the config (raised building every layer)
    warnings: tuple[str, ...] = ()
    quark_names: bool = False         # QuarkConfig.get_cache_scale_mapper renames q/k/v_proj.output_scale
    exclude: tuple[str, ...] = ()     # Quark's `exclude`: should_ignore_layer on the attention layer's name leaves
                                      # it without a KV method (UnquantizedLinearMethod until 0.29, None from 0.30)

    def method_for(self, name: str, mla: bool) -> str | None:
        """The KV cache method of the attention layer `name` (vLLM's module name)."""
        if any(matches(name, pattern) for pattern in self.exclude):
            return None
        return self.mla_method if mla else self.method

    @property
    def strategy(self) -> Strategy | None:
        """The per-layer scale layout the config declares (TENSOR, ATTN_HEAD; another is the format's error), None
        when it declares none or a value that is no strategy."""
        value = (self.scheme or {}).get("strategy")
        return Strategy(value) if value in STRATEGY_VALUES else None


def cache_dtypes(profile: RuleProfile) -> tuple[str, ...]:
    """The --kv-cache-dtype values the profile's release accepts, in its order."""
    return tuple(value for value, added_by in CACHE_DTYPES if added_by is None or profile.has(added_by))


def check_cache_dtype(value: str, profile: RuleProfile) -> None:
    """An InputError (one line, exit 2) for a value the release's CacheDType does not have."""
    values = cache_dtypes(profile)
    if value not in values:
        raise InputError(f"--kv-cache-dtype {value!r} is not a vLLM {profile.vllm} cache dtype; choose from "
                         f"{', '.join(values)}")


def stored_dtype(kv_cache_dtype: str, model_dtype: str, fp8_dtype: str) -> str:
    """What the cache holds: the model dtype for auto, the platform's e4m3 for fp8 / fp8_e4m3, ..."""
    if kv_cache_dtype == AUTO:
        return model_dtype
    if kv_cache_dtype in FP8_E4M3_VALUES:
        return fp8_dtype
    return STORED.get(kv_cache_dtype, f"uint8 ({kv_cache_dtype})")


def element_bytes(stored: str) -> int:
    """Bytes per cached element (a packed uint8 cache is counted at one byte: an upper bound for 4-bit ones)."""
    return ELEMENT_BYTES.get(stored, 1)


def _modelopt_auto(raw: dict) -> tuple[str, tuple[str, ...]]:
    """get_kv_cache_quant_algo_string for a quant_method starting with "modelopt"."""
    inner = raw.get("quantization", raw)
    inner = inner if isinstance(inner, dict) else raw
    algo = (inner.get("kv_cache_scheme") or raw.get("kv_cache_scheme") or inner.get("kv_cache_quant_algo")
            or raw.get("kv_cache_quant_algo"))
    if isinstance(algo, dict):
        if algo.get("dynamic") is False and algo.get("num_bits") == 8 and algo.get("type") == "float":
            algo = "fp8"
        elif algo.get("num_bits") == 4 and algo.get("type") == "float":
            algo = "nvfp4"
        else:
            return AUTO, (MODELOPT_UNKNOWN.format(algo=algo),)
    if isinstance(algo, str):
        mapped = {"fp8": "fp8_e4m3", "nvfp4": "nvfp4"}.get(algo.lower())
        return (mapped, ()) if mapped else (AUTO, (MODELOPT_UNKNOWN.format(algo=algo),))
    return AUTO, ()


def attention_method(method: str, mla_method: str | None = None) -> Callable[[object, dict], KVConfig]:
    """A Format.kv_cache hook for a format whose get_quant_method gives Attention (and MLAAttention) a KV cache method
    with no checks of its own."""
    given = KVConfig(method, mla_method)
    return lambda quant, raw: given


def kv_config(hook: Callable[[object, dict], KVConfig] | None, quant: object, raw: dict | None) -> KVConfig:
    """The KV side of the quant config vLLM built: its format's Format.kv_cache hook (None: the format gives attention
    no method, as an unquantized model) over `quant`, the parsed config; `raw` is the checkpoint's
    quantization_config as stored (what arg_utils reads for `auto`)."""
    raw = raw if isinstance(raw, dict) else {}
    given = hook(quant, raw) if hook is not None else KVConfig()
    # get_kv_cache_quant_algo_string reads only ModelOpt configs; a legacy hf_quant_config.json gets its
    # quant_method "modelopt" written in by model_arch_config_convertor._normalize_quantization_config first.
    name = getattr(quant, "method", None)
    modelopt = str(raw.get("quant_method", "")).startswith("modelopt") or str(name).startswith("modelopt")
    auto, warnings = _modelopt_auto(raw) if modelopt else (AUTO, ())
    return given._replace(auto=auto, warnings=given.warnings + warnings)


def resolve(requested: str, config: KVConfig, mla: bool, skipped: bool) -> str:
    """The layer's kv_cache_dtype as vLLM sets it: arg_utils' `auto` resolution, then (Attention only) CT's
    kv_cache_scheme switch, then kv_cache_dtype_skip_layers."""
    value = config.auto if requested == AUTO else requested
    if not mla and config.scheme is not None and value == AUTO:
        value = "fp8"
    return AUTO if skipped else value


def e5m2_refused(kv_cache_dtype: str, method: str | None, config: KVConfig) -> bool:
    """_init_kv_cache_quant: any BaseKVCacheMethod refuses fp8_e5m2, CompressedTensorsKVCacheMethod only when the
    checkpoint declares a kv_cache_scheme."""
    if kv_cache_dtype != FP8_E5M2 or method is None:
        return False
    return method != CT_METHOD or config.scheme is not None


class ScaleName(NamedTuple):
    """One checkpoint tensor that vLLM's loader sends to an attention layer's scale parameter."""

    tensor: str                       # the checkpoint name
    target: str                       # the vLLM parameter name it is renamed to
    param: str                        # "k_scale" | "v_scale" | "q_scale" | "prob_scale"
    fused: bool = False               # the deprecated kv_scale: loads into k_scale, v duplicates it


SCALE_SUFFIXES = (".k_scale", ".v_scale", ".q_scale", ".q.scale", ".k_cache.scale", ".v_cache.scale")
QUARK_SUFFIXES = {".k_proj.output_scale": ".attn.k_scale", ".v_proj.output_scale": ".attn.v_scale",
                  ".q_proj.output_scale": ".attn.q_scale", ".self_attn.prob_output_scale": ".self_attn.attn.prob_scale"}
# maybe_remap_kv_scale_name's patterns in precedence order ({attn}: "attn", or "mla_attn.mla_attn" in MLA models);
# zero points are CT's and never read.
_PATTERNS = (
    (r"\.self_attn\.([kv])_proj\.([kv])_scale$", r".self_attn.{attn}.\2_scale"),
    (r"\.self_attn\.qkv_proj\.([kv])_scale$", r".self_attn.attn.\1_scale"),
    (r"\.self_attn\.qkqkv_proj\.([kv])_scale$", r".self_attn.attn.\1_scale"),
    (r"\.mixer\.[kv]_proj\.([kv])_scale$", r".mixer.attn.\1_scale"),
    (r"\.self_attn\.q\.scale$", r".self_attn.attn.q_scale"),
    (r"\.self_attn\.([kv])_cache\.scale$", r".self_attn.attn.\1_scale"),
    (r"\.([qkv])_scale$", r".attn.\1_scale"),
)
_COMPILED = tuple((re.compile(p), r) for p, r in _PATTERNS)


def scale_suffixes(quark_names: bool) -> tuple[str, ...]:
    """The name endings of the tensors the KV remapping looks at (Quark's output scales only under Quark)."""
    return SCALE_SUFFIXES + (".kv_scale",) + (tuple(QUARK_SUFFIXES) if quark_names else ())


def remap(name: str, quark_names: bool, mla: bool, params: frozenset[str]) -> ScaleName | None:
    """The vLLM parameter a checkpoint scale is loaded into (QuarkConfig's suffix mapper first, then
    maybe_remap_kv_scale_name, which keeps a name already among the model's `params`); None for a name neither
    renames."""
    if name in params:
        return ScaleName(name, name, name.rsplit(".", 1)[1])
    if quark_names:
        for suffix, new in QUARK_SUFFIXES.items():
            if name.endswith(suffix):
                target = name[: -len(suffix)] + new
                return ScaleName(name, target, target.rsplit(".", 1)[1])
    if name.endswith(".kv_scale"):
        return ScaleName(name, name.replace(".kv_scale", ".attn.k_scale"), "k_scale", fused=True)
    if not name.endswith(SCALE_SUFFIXES):
        return None
    attn = "mla_attn.mla_attn" if mla else "attn"
    for pattern, replacement in _COMPILED:
        if pattern.search(name):
            target = pattern.sub(replacement.replace("{attn}", attn), name)
            return ScaleName(name, target, target.rsplit(".", 1)[1])
    return None
