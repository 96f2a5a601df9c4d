"""The front door every format shares: which vLLM quant config class a checkpoint (and `--quantization`) ends in,
and the model-wide gates vLLM runs before it builds a single layer.

vLLM sources (read in 0.25 / 0.28 / 0.33 unless a release is named):
- transformers_utils/config.py: `hf_quant_config.json` is read as the quantization_config only when config.json
  has none (ModelOpt 0.29 and before);
- transformers_utils/model_arch_config_convertor.py::_normalize_quantization_config: the legacy ModelOpt branch
  (producer.name == "modelopt", or quantization.modelopt_quant_config) sets quant_method from quant_algo, then
  quant_method is lower-cased and compressed_tensors becomes compressed-tensors;
- config/model.py::_verify_quantization: methods that do not override are tried first, then OVERRIDE_ORDER; the
  first override_quantization_method that answers wins; the user's --quantization must equal the result; unknown
  names, the platform allow-list (platforms/*.py supported_quantization) and DEPRECATED_QUANTIZATION_METHODS;
- config/vllm.py::_get_quantization_config: the global capability gate (CUDA and ROCm only: XPU and CPU report no
  capability) and get_supported_act_dtypes.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Mapping, NamedTuple

from fp8check.core.errors import ConfigError, shown

if TYPE_CHECKING:  # annotations only
    from fp8check.core.formats.base import Format, QuantConfig
    from fp8check.kernels.base import RoutingContext

HF_QUANT_CONFIG = "hf_quant_config.json"
# A message vLLM raises with a (format, args...) tuple, as Python prints it, after an optional "ValueError: ".
PRINTED_TUPLE = re.compile(r"(?:\w+: )?(\('.*\))", re.DOTALL)

# _verify_quantization's `overrides`, in vLLM 0.33's order (0.25 and 0.28 are the same list less names they lack).
OVERRIDE_ORDER = ("auto_gptq", "gptq", "gptq_marlin", "auto_awq", "awq", "awq_marlin", "inc", "moe_wna16", "modelopt",
                  "modelopt_fp4", "modelopt_mxfp8", "mxfp8", "modelopt_mixed", "mxfp4", "gpt_oss_mxfp4",
                  "deepseek_v4_fp8", "humming")

# QuantizationMethods (quantization/__init__.py) of 0.28-0.33; 0.26-0.27 also have bitsandbytes, 0.25 has
# bitsandbytes but not nvfp4_per_token.
_METHODS_028 = ("awq", "auto_awq", "fp8", "fbgemm_fp8", "fp_quant", "modelopt", "modelopt_fp4", "modelopt_mxfp8",
                "modelopt_mixed", "auto_gptq", "gptq", "gptq_marlin", "awq_marlin", "humming", "compressed-tensors",
                "experts_int8", "quark", "moe_wna16", "torchao", "inc", "mxfp4", "gpt_oss_mxfp4", "deepseek_v4_fp8",
                "online", "fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "int8_per_channel_weight_only",
                "nvfp4_per_token", "mxfp8")
_METHODS_026 = _METHODS_028[:15] + ("bitsandbytes",) + _METHODS_028[15:]
_METHODS_025 = tuple(m for m in _METHODS_026 if m != "nvfp4_per_token")
# 0.34: w4afp8 right after fp8 (profile "w4afp8"); fp_quant leaves, lut_b_moe and mxfp4_hadamard32 are appended
# (profile "fp-quant-removed").
W4AFP8 = "w4afp8"
FP_QUANT_REMOVED = "fp-quant-removed"
_ADDED_034 = ("lut_b_moe", "mxfp4_hadamard32")
# DEPRECATED_QUANTIZATION_METHODS: 0.25-0.33, then 0.34 (fp_quant removed).
DEPRECATED = ("fbgemm_fp8", "fp_quant")
_DEPRECATED_034 = ("fbgemm_fp8",)

# supported_quantization of platforms/xpu.py and platforms/rocm.py (CUDA and CPU have none: everything passes).
_XPU_027 = ("awq", "gptq", "auto_awq", "auto_gptq", "inc", "fp8", "deepseek_v4_fp8", "mxfp4", "mxfp8", "fp8_per_tensor",
            "fp8_per_block", "online", "gpt_oss_mxfp4", "modelopt", "compressed-tensors")
_XPU_030 = _XPU_027 + ("moe_wna16",)
_XPU_032 = _XPU_030 + ("fp8_per_channel",)
_ROCM_025 = ("awq", "auto_awq", "awq_marlin", "gptq", "auto_gptq", "fp8", "deepseek_v4_fp8", "compressed-tensors",
             "fbgemm_fp8", "quark", "mxfp4", "mxfp8", "torchao", "bitsandbytes", "modelopt", "modelopt_fp4",
             "modelopt_mxfp8", "modelopt_mixed", "fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "online",
             "gpt_oss_mxfp4")
_ROCM_028 = tuple(m for m in _ROCM_025 if m != "bitsandbytes") + ("inc",)
_ROCM_034 = _ROCM_028 + ("mxfp4_hadamard32",)  # a set: vLLM lists it before "online"


def quantization_methods(ctx: RoutingContext) -> tuple[str, ...]:
    """QUANTIZATION_METHODS of the profile's release, in vLLM's order (the unknown-method error prints it)."""
    methods: tuple[str, ...]
    if ctx.profile.has("bitsandbytes-removed"):
        methods = _METHODS_028
    else:
        methods = _METHODS_026 if ctx.profile.has("nvfp4-per-token") else _METHODS_025
    if ctx.profile.has(W4AFP8):
        at = methods.index("fp8") + 1
        methods = methods[:at] + (W4AFP8,) + methods[at:]
    if ctx.profile.has(FP_QUANT_REMOVED):
        methods = tuple(m for m in methods if m != "fp_quant") + _ADDED_034
    return methods


def deprecated(ctx: RoutingContext) -> tuple[str, ...]:
    """DEPRECATED_QUANTIZATION_METHODS of the profile's release."""
    return _DEPRECATED_034 if ctx.profile.has(FP_QUANT_REMOVED) else DEPRECATED


def allow_list(ctx: RoutingContext) -> tuple[str, ...] | None:
    """The platform's supported_quantization under the profile, None where every method passes."""
    if ctx.kind == "xpu":
        if not ctx.profile.has("xpu-quant-allowlist"):
            return None
        if ctx.profile.has("xpu-fp8-per-channel"):
            return _XPU_032
        return _XPU_030 if ctx.profile.has("xpu-moe-wna16") else _XPU_027
    if ctx.kind == "rocm":
        if ctx.profile.has(FP_QUANT_REMOVED):
            return _ROCM_034
        return _ROCM_028 if ctx.profile.has("rocm-inc") else _ROCM_025
    return None


# ------------------------------------------------------------------------------------------------ detection

def normalize(raw: dict, where: str) -> dict:
    """_normalize_quantization_config, on a copy: the legacy ModelOpt branch, then quant_method lower-cased."""
    cfg = dict(raw)
    producer = cfg.get("producer")
    nested = cfg.get("quantization", {})
    legacy = isinstance(nested, dict) and "modelopt_quant_config" in nested
    if (isinstance(producer, dict) and producer.get("name") == "modelopt") or legacy:
        algo = nested.get("quant_algo") if isinstance(nested, dict) else None
        if algo is not None:
            upper = str(algo).upper()
            if upper in ("FP8", "FP8_PER_CHANNEL_PER_TOKEN", "FP8_PB_WO"):
                cfg["quant_method"] = "modelopt"
            elif upper == "NVFP4":
                cfg["quant_method"] = "modelopt_fp4"
            elif upper == "MIXED_PRECISION":
                cfg["quant_method"] = "modelopt_mixed"
            else:
                raise ConfigError(f"{where}: Unknown ModelOpt quant algo: {algo}")
    method = cfg.get("quant_method", "")
    if not isinstance(method, str):
        raise ConfigError(f"{where}.quant_method must be a string, got {shown(method)}")
    cfg["quant_method"] = method.lower().replace("compressed_tensors", "compressed-tensors")
    return cfg


def detect(cfg: dict, user: str | None, formats: Mapping[str, Format]) -> str:
    """The method _verify_quantization settles on for a normalized config: the first override that answers, in
    OVERRIDE_ORDER (no format fp8check models overrides outside that list), else the config's quant_method."""
    for name in OVERRIDE_ORDER:
        found = formats.get(name)
        if found is not None and found.override is not None:
            claimed = found.override(cfg, user)
            if claimed is not None:
                return claimed
    return cfg["quant_method"]


# ------------------------------------------------------------------------------------------------ gates

class FrontDoor(NamedTuple):
    """The quant config vLLM builds for a model, and what it raises before building any layer."""

    quant: QuantConfig | None
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    config_name: str | None = None         # get_name() of the config class vLLM builds (None: not quantized)


def method_errors(method: str, ctx: RoutingContext, allow_deprecated: bool, registered: Mapping[str, Format]
                  ) -> list[str]:
    """_verify_quantization for a settled method: unknown name, platform allow-list, then the deprecation gate.
    A format registered with fp8check counts as known (vLLM registers custom ones the same way) in the releases
    that have it (Format.added_by)."""
    known = quantization_methods(ctx)
    found = registered.get(method)
    if method not in known and (found is None or not found.known_at(ctx.profile)):
        return [f"Unknown quantization method: {method}. Must be one of {list(known)}."]
    allowed = allow_list(ctx)
    if allowed is not None and method not in allowed:
        return [f"{method} quantization is currently not supported in {ctx.kind}."]
    if method in deprecated(ctx) and not allow_deprecated:
        return [str(("The quantization method %s is deprecated and will be removed in future versions of vLLM. "
                     "To bypass, set `--allow-deprecated-quantization`.", method))]
    return []


def readable(message: str) -> str:
    """A message as fp8check shows it to people: one vLLM raises with a (format, args) tuple (its deprecation gate:
    `raise ValueError("... %s ...", method)`) is printed as the tuple, so the sentence it reads is added beside it.
    Reports keep vLLM's text as it is (crosscheck compares it with the installed vLLM's)."""
    found = PRINTED_TUPLE.fullmatch(message)
    try:
        value = ast.literal_eval(found.group(1)) if found else None
        if not (isinstance(value, tuple) and len(value) > 1 and isinstance(value[0], str)):
            return message
        text = value[0] % value[1:]
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return message
    return f"{message} (vLLM prints this tuple; it reads: {text})"


def config_gate_errors(method: str, quant_format: Format, ctx: RoutingContext, dtype: str) -> list[str]:
    """_get_quantization_config: the config class's minimum capability (where the platform reports one) and its
    activation dtypes (vLLM prints torch dtypes)."""
    errors = []
    minimum = quant_format.min_capability_at(ctx.profile)
    if ctx.cc is not None and ctx.cc < minimum:
        errors.append(f"The quantization method {method} is not supported for the current GPU. Minimum "
                      f"capability: {minimum}. Current capability: {ctx.cc}.")
    if dtype not in quant_format.act_dtypes:
        supported = ", ".join(f"torch.{d}" for d in quant_format.act_dtypes)
        errors.append(f"torch.{dtype} is not supported for quantization method {method}. Supported dtypes: "
                      f"[{supported}]")
    return errors
