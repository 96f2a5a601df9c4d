"""quant_method `modelopt_mxfp8` (and MiniMax-style `mxfp8` checkpoints): vLLM's ModelOptMxFp8Config and what it
builds.

vLLM sources: quantization/modelopt.py (ModelOptQuantConfigBase.from_config / is_layer_excluded /
get_quant_method / _extract_modelopt_quant_algo; ModelOptMxFp8Config: override_quantization_method, the MiniMax
`quant_method: "mxfp8"` rewrite in from_config, _from_config's required hf_quant_config.json fields,
get_min_capability, get_supported_act_dtypes; ModelOptMxFp8LinearMethod (0.25-0.29) and the generic
ModelOptLinearMethod with KMxfp8Static (0.30+); ModelOptMxFp8FusedMoE), quantization/__init__.py ("mxfp8" maps to
ModelOptMxFp8Config). Kernels: fp8check.kernels.mxfp8 (init_mxfp8_linear_kernel).

`--quantization mxfp8` on an unquantized checkpoint is not this class: get_quant_config finds no
hf_quant_config.json and builds OnlineQuantizationConfig (get_name "online", min capability 75, bf16 and fp16)
with Mxfp8OnlineLinearMethod; ONLINE_LINEAR / online_input_error / kernel_request serve that format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fp8check.core.errors import ConfigError
from fp8check.core.formats import modelopt
from fp8check.core.formats.base import (
    Assignment, ExpectedTensors, Format, KernelRequest, Module, MoEMethod, WeightScale,
)
from fp8check.core.vocabulary import Strategy
from fp8check.kernels.base import RoutingContext
from fp8check.kernels.mxfp8 import MXFP8, MXFP8_BLOCK_SIZE
from fp8check.kernels.quant_keys import KernelConfig, kMxfp8Dynamic, kMxfp8Static
from fp8check.kernels.registry import choose_kernel

if TYPE_CHECKING:  # annotations only
    from fp8check.core.targets.profiles import RuleProfile
    from fp8check.core.formats.base import RankShape

NAME = "modelopt_mxfp8"
LEGACY_LINEAR = "ModelOptMxFp8LinearMethod"   # 0.25-0.29
GENERIC_LINEAR = "ModelOptLinearMethod"       # 0.30+ (#49381)
ONLINE_LINEAR = "Mxfp8OnlineLinearMethod"     # online/mxfp8.py, under OnlineQuantizationConfig
MXFP8_MOE = "ModelOptMxFp8FusedMoE"


# --- detection and parse ---------------------------------------------------------------------------------


def override(cfg: dict, user: str | None) -> str | None:
    """override_quantization_method: a ModelOpt config whose algo contains MXFP8. A MiniMax `quant_method: mxfp8`
    needs no override: "mxfp8" itself maps to ModelOptMxFp8Config (the format's alias)."""
    algo = modelopt.modelopt_quant_algo(cfg)
    return NAME if algo is not None and "MXFP8" in algo else None


def parse(raw: dict, where: str) -> modelopt.ModelOptConfig:
    """ModelOptMxFp8Config.from_config (the MiniMax rewrite: no quant_algo means MXFP8 with `ignored_layers`
    excluded), then ModelOptQuantConfigBase.from_config and _from_config's checks."""
    cfg = raw
    if "quantization" not in cfg and not cfg.get("quant_algo"):
        cfg = {"quant_method": "modelopt", "quantization": {
            "quant_algo": "MXFP8", "kv_cache_quant_algo": raw.get("kv_cache_quant_algo"),
            "exclude_modules": raw.get("ignored_layers", []) or []}}
    config = modelopt.parse_base(cfg, where)._replace(method=NAME)
    if "MXFP8" not in config.quant_algo:
        raise ConfigError(f"{where}: MXFP8 quantization requires a serialized checkpoint. Dynamic quantization is "
                          "not supported.")
    if "quantization" in cfg:
        missing = [f for f in ("kv_cache_quant_algo", "exclude_modules") if f not in cfg["quantization"]]
        if missing:
            raise ConfigError(f"{where}: MXFP8 quantization requires the following fields in hf_quant_config.json: "
                              f"{missing}")
    return config


# --- assign ----------------------------------------------------------------------------------------------


def assign(module: Module, config: modelopt.ModelOptConfig) -> Assignment:
    """get_quant_method for a LinearBase or ParallelLMHead: ModelOpt's exclusion and vision rules, else MXFP8
    (lm_head quantized unless excluded)."""
    return modelopt.unquantized(module, config, NAME) or Assignment(NAME, strategy=Strategy.GROUP)


def describe(assignment: Assignment) -> tuple[str, str]:
    return f"mxfp8 group {MXFP8_BLOCK_SIZE}", f"dynamic mxfp8 group {MXFP8_BLOCK_SIZE}"


def linear_scheme(assignment: Assignment, ctx: RoutingContext, linear_backend: str) -> tuple[str, None]:
    return (GENERIC_LINEAR if ctx.profile.has(49381) else LEGACY_LINEAR), None


def kernel_request(scheme: str, assignment: Assignment, ctx: RoutingContext, e8m0: bool
                   ) -> KernelRequest:
    """Every MXFP8 linear method (ModelOpt, compressed-tensors, online) calls init_mxfp8_linear_kernel; its kernels
    read only the weight shape, the keys are QuantSpec(weight=kMxfp8Static, activation=kMxfp8Dynamic)."""
    return KernelRequest(MXFP8, kMxfp8Static, kMxfp8Dynamic)


def shape_error(assignment: Assignment, layout: RankShape, ctx: RoutingContext) -> str | None:
    """create_weights' divisibility check. 0.25-0.29's method selected its kernel in __init__, before it."""
    k = layout.input_size_per_partition
    if k % MXFP8_BLOCK_SIZE == 0:
        return None
    if ctx.profile.has(49381):
        return f"MXFP8 requires input size divisible by {MXFP8_BLOCK_SIZE}, got {k}"
    cfg = KernelConfig(kMxfp8Static, kMxfp8Dynamic, "bfloat16", "float8_e4m3fn",
                       sum(layout.output_partition_sizes), k)
    earlier = choose_kernel(MXFP8, cfg, ctx).error
    return earlier or f"MXFP8 requires input dimension to be divisible by {MXFP8_BLOCK_SIZE}, got {k}"


def online_input_error(k: int) -> str | None:
    """Mxfp8OnlineLinearMethod.create_weights (every release 0.25-0.33), before its kernel is chosen."""
    if k % MXFP8_BLOCK_SIZE:
        return f"MXFP8 requires input_size_per_partition ({k}) to be divisible by {MXFP8_BLOCK_SIZE}."
    return None


# --- integrity -------------------------------------------------------------------------------------------

MXFP8_WEIGHT_SCALE = WeightScale("weight_scale", Strategy.GROUP, group_size=MXFP8_BLOCK_SIZE, dtypes=("U8",))


def expected_tensors(assignment: Assignment) -> ExpectedTensors:
    """weight F8_E4M3 [N, K], weight_scale U8 (E8M0 bits) [N, K/32]; no input scale."""
    return ExpectedTensors(MXFP8_WEIGHT_SCALE, False)


# --- FusedMoE --------------------------------------------------------------------------------------------


def moe_method(name: str, leaves: tuple[str, str, str], config: modelopt.ModelOptConfig,
               profile: RuleProfile) -> MoEMethod:
    """get_quant_method for RoutedExperts: ModelOptMxFp8FusedMoE (select_mxfp8_moe_backend), unless excluded."""
    skipped = modelopt.moe_unquantized(name, config)
    if skipped:
        return skipped
    # No keys for the FP8 oracle: vLLM picks MXFP8 experts with select_mxfp8_moe_backend, which is not modelled.
    return MoEMethod(MXFP8_MOE, strategy_text=f"mxfp8 group {MXFP8_BLOCK_SIZE}",
                     activation=f"dynamic mxfp8 group {MXFP8_BLOCK_SIZE}",
                     assignment=Assignment(NAME, strategy=Strategy.GROUP),
                     note="MXFP8 experts (select_mxfp8_moe_backend) are not modelled: not judged")


FORMAT = Format(
    name=NAME, min_capability=80, parse=parse, assign=assign, describe=describe, linear_scheme=linear_scheme,
    fp8_schemes=frozenset({LEGACY_LINEAR, GENERIC_LINEAR}), kernel_request=kernel_request,
    expected_tensors=expected_tensors, moe_method=moe_method, validates_block_shape=False, shape_error=shape_error,
    override=override, for_release=modelopt.for_release, config_errors=modelopt.config_errors,
    act_dtypes=("bfloat16",), aliases=("mxfp8",), maps_lists=modelopt.maps_lists,
    kv_cache=modelopt.FORMAT.kv_cache,
)
