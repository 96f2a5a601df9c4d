"""quant_method `w4afp8` (vLLM 0.34+): INT4 group-128 routed experts with FP8 activations, FP8 block-128 everywhere
else (W4AFP8Config, a subclass of Fp8Config).

vLLM sources (0.34.0): quantization/w4afp8.py (W4AFP8Config: from_config, get_name, get_quant_method,
get_checkpoint_weight_mapper, _repack_signed_int4_to_uint4b8), quantization/fp8.py (what it inherits:
Fp8Config.__init__'s checks, get_min_capability 75, get_supported_act_dtypes, Fp8LinearMethod for every LinearBase
not in ignored_layers, Fp8KVCacheMethod for Attention), quantization/compressed_tensors/compressed_tensors_moe/
compressed_tensors_moe_w4a8_fp8.py (CompressedTensorsW4A8Fp8MoEMethod: __init__'s asserts, create_weights'
int32-packed weights and [N, K/128] scales), fused_moe/oracle/w4a8.py (select_w4a8_moe_backend: CUTLASS
CutlassExpertsW4A8Fp8, then the Humming experts), quantization/__init__.py (QuantizationMethods gains w4afp8 right
after fp8), platforms/xpu.py and platforms/rocm.py (w4afp8 is on neither allow-list).

Dense layers are native fp8's (fp8check.core.formats.fp8: parse checks, ignored-layer matching, Fp8LinearMethod's
keys and tensors, run by the same code under this format's name); only the defaults differ: activations are always
dynamic (from_config passes activation_scheme="dynamic" whatever the config says) and `weight_block_size` defaults
to [128, 128] (an explicit null keeps per-tensor weights). Routed experts (`.experts.N.gate_proj|up_proj|down_proj|
w1|w2|w3`) are INT4 symmetric groups on CompressedTensorsW4A8Fp8MoEMethod: the checkpoint's int8 tensors (two
signed nibbles a byte) are renamed `weight_packed`, `weight_scale_inv` becomes `weight_scale`, expert input scales
are dropped, and the bytes are repacked to uint4b8 in int32. fp8check names that method, runs what decides whether
vLLM builds it (select_w4a8_moe_backend's device checks: CutlassExpertsW4A8Fp8 on sm90 alone, the Humming experts on
CUDA sm75+ with humming installed, nothing on CPU; create_weights' `hidden_size % 256` /
`intermediate_size_per_partition % 256` asserts), and does not judge the INT4 numerics, nor which Humming class
takes the layer (their GEMM-type checks are not modelled), as it does MXFP8 experts. Before 0.34 the name is vLLM's
unknown quantization method (Format.added_by).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fp8check.core.errors import ConfigError, shown
from fp8check.core.formats import fp8
from fp8check.core.formats.fp8 import NativeFp8Config
from fp8check.core.formats.base import UNQUANTIZED_MOE, Assignment, Format, Module, MoEMethod
from fp8check.core.formats.shared import is_int
from fp8check.kernels.base import RoutingContext

if TYPE_CHECKING:  # annotations only
    from fp8check.core.targets.profiles import RuleProfile

NAME = "w4afp8"
ADDED_BY = "w4afp8"                    # the 0.34 profile change
DEFAULT_BLOCK = [128, 128]             # from_config: config.get("weight_block_size", [128, 128])
GROUP_SIZE = 128                       # the only group size CompressedTensorsW4A8Fp8MoEMethod accepts
W4A8_MOE = "CompressedTensorsW4A8Fp8MoEMethod"
NOT_JUDGED = "INT4 W4A8 experts: their numerics are not modelled, so they are named, not judged"
# fused_moe/oracle/w4a8.py select_w4a8_moe_backend: CUTLASS, then HUMMING's three classes, in this order.
CUTLASS_W4A8 = "CutlassExpertsW4A8Fp8"
HUMMING_W4A8 = ("BatchedHummingGroupedExperts", "HummingGroupedExperts", "HummingIndexedExperts")
NO_BACKEND = "No W4A8 MoE backend supports the deployment configuration: "


def w4a8_experts(hidden: int, ispp: int, ctx: RoutingContext, in_dtype: str) -> tuple[str | None, str | None]:
    """CompressedTensorsW4A8Fp8MoEMethod past its group-size assert: select_w4a8_moe_backend (each class's
    is_supported_config, which tests the device first: `kernel does not support current device cuda`), then
    create_weights' CUTLASS reorder asserts. Returns (vLLM's error, the experts class it picks)."""
    device = ctx.kind  # current_platform.device_name: cuda / cpu (ROCm and XPU stop at their allow-lists)
    reasons = []
    if ctx.kind != "cuda" or ctx.cc != 90:  # _supports_current_device: is_device_capability(90) and grouped GEMM
        reasons.append(f"{CUTLASS_W4A8}: kernel does not support current device {device}")
    elif in_dtype != "bfloat16":
        reasons.append(f"{CUTLASS_W4A8}: kernel does not support {in_dtype} input/output dtype")
    chosen = None if reasons else f"{CUTLASS_W4A8} (sm90)"
    humming = ctx.kind == "cuda" and ctx.platform.assumptions.humming and (ctx.cc or 0) >= 75
    if chosen is None and not humming:
        reasons += [f"{name}: kernel does not support current device {device}" for name in HUMMING_W4A8]
        return NO_BACKEND + "; ".join(reasons), None
    if chosen is None:  # BatchedHummingGroupedExperts refuses the standard activation format of TP / EP
        chosen = "HummingGroupedExperts or HummingIndexedExperts (which one: their GEMM-type checks, not modelled)"
    for name, size in (("hidden_size", hidden), ("intermediate_size_per_partition", ispp)):
        if size % 256:
            return f"AssertionError in {W4A8_MOE}.create_weights: {name}={size} must be divisible by 256", None
    return None, f"vLLM's W4A8 experts: {chosen}"


def parse(raw: dict, where: str) -> NativeFp8Config:
    """W4AFP8Config(Fp8Config): an Fp8Config named w4afp8 with the experts' INT4 group size. from_config, then
    Fp8Config.__init__'s checks (fp8.parse, with the activation scheme and the
    block default from_config passes); `group_size` must be a positive integer for QuantizationArgs to accept it."""
    group_size = raw.get("group_size", GROUP_SIZE)
    if not is_int(group_size) or group_size <= 0:
        raise ConfigError(f"{where}.group_size must be a positive integer (the experts' INT4 group size), got "
                          f"{shown(group_size)}")
    native = fp8.parse({**raw, "activation_scheme": "dynamic",
                        "weight_block_size": raw.get("weight_block_size", DEFAULT_BLOCK)}, where)
    return native._replace(method=NAME, group_size=group_size)


def moe_method(name: str, leaves: tuple[str, str, str], config: NativeFp8Config, profile: RuleProfile
               ) -> MoEMethod:
    """W4AFP8Config.get_quant_method for RoutedExperts: CompressedTensorsW4A8Fp8MoEMethod unless the layer is
    skipped (then Fp8Config.get_quant_method skips it too: UnquantizedFusedMoEMethod); its __init__ asserts the
    group size. No keys for the FP8 oracle: the experts are named, not judged."""
    if name in config.ignored_layers:
        return MoEMethod(UNQUANTIZED_MOE, note="listed in ignored_layers / modules_to_not_convert")
    error = None
    if config.group_size != GROUP_SIZE:
        error = f"AssertionError in {W4A8_MOE}.__init__: Only group size 128 supported for W4A8 MoE"
    return MoEMethod(W4A8_MOE, strategy_text=f"int4 group {config.group_size}", activation="dynamic token",
                     error=error, note=NOT_JUDGED, own_checks=w4a8_experts, packed=2)


def assign(module: Module, config: NativeFp8Config) -> Assignment:
    """get_quant_method for a LinearBase: Fp8Config's (Fp8LinearMethod unless in ignored_layers)."""
    return fp8.assign(module, config)


FORMAT = Format(
    name=NAME, min_capability=75, parse=parse, assign=assign, describe=fp8.describe, linear_scheme=fp8.linear_scheme,
    fp8_schemes=frozenset({fp8.FP8_METHOD}), kernel_request=fp8.kernel_request, expected_tensors=fp8.expected_tensors,
    moe_method=moe_method, block_mismatch_escape=True, added_by=ADDED_BY, maps_lists=fp8.maps_lists,
    kv_cache=fp8.KV_CACHE,
)
