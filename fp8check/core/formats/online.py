"""Online FP8: `vllm serve <bf16 model> --quantization fp8 | fp8_per_tensor | fp8_per_block | fp8_per_channel |
mxfp8`.

The checkpoint has no quantization_config; vLLM creates each linear weight in the model dtype and quantizes it to
FP8 at load. One Format, named `online` (OnlineQuantizationConfig.get_name()), answers all five values: its config
records the user's value, the shorthand it resolves to and the config class the release builds. Under 0.25-0.30
`--quantization fp8` builds Fp8Config() (is_checkpoint_fp8_serialized=False, get_name() "fp8"), whose
get_quant_method hands out the same online per-tensor classes plus Fp8KVCacheMethod for Attention; from 0.31 it
builds OnlineQuantizationConfig(fp8_per_tensor) with a deprecation warning (profile "online-fp8-redirect"). The
registry key "fp8" stays the native checkpoint format (fp8check.core.formats.fp8).

vLLM sources (0.25.0-0.33.0): config/quantization.py (_ONLINE_SHORTHANDS: the three fp8 shorthands in every
release), quantization/__init__.py (the shorthands map to OnlineQuantizationConfig), model_loader/weight_utils.py
get_quant_config (Fp8Config() when get_config_filenames() is empty; 0.31's redirect and warning),
quantization/fp8.py (Fp8Config.get_quant_method with is_checkpoint_fp8_serialized=False; 0.31's refusal),
quantization/online/base.py (OnlineQuantizationConfig: from_config, get_min_capability, get_quant_method: every
LinearBase and RoutedExperts not in `ignore`, which the shorthands leave empty), quantization/online/fp8.py (the
linear and MoE methods, their kernel keys, PTPC's Marlin and MoE backend refusals, per-block MoE size round-up),
quantization/online/mxfp8.py (Mxfp8OnlineLinearMethod: init_mxfp8_linear_kernel, its K % 32 check; in every release
0.25-0.33 `mxfp8` on a checkpoint without a quantization config is this online method, a deferred shorthand).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from fp8check.core.errors import ConfigError
from fp8check.core.formats import fp8, mxfp8
from fp8check.core.formats.kv_cache import FP8_METHOD as FP8_KV_METHOD
from fp8check.core.formats.kv_cache import KVConfig
from fp8check.core.formats.base import (
    UNQUANTIZED_LM_HEAD, Assignment, ExpectedTensors, Format, KernelRequest, Module, MoEMethod,
)
from fp8check.core.vocabulary import Strategy
from fp8check.kernels.base import FP8, FP8_BLOCK, RoutingContext
from fp8check.kernels.quant_keys import (
    kFp8Dynamic128Sym, kFp8DynamicTensorSym, kFp8DynamicTokenSym, kFp8Static128BlockSym, kFp8StaticChannelSym,
    kFp8StaticTensorSym,
)

if TYPE_CHECKING:  # annotations only
    from fp8check.core.formats.base import RankShape
    from fp8check.core.targets.profiles import RuleProfile

NAME = "online"
LEGACY_FP8 = "fp8"
PER_TENSOR, PER_BLOCK, PER_CHANNEL, PER_MX_GROUP = "fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "mxfp8"
ONLINE_METHODS = (LEGACY_FP8, PER_TENSOR, PER_BLOCK, PER_CHANNEL, PER_MX_GROUP)
ONLINE_CONFIG = "OnlineQuantizationConfig"
FP8_CONFIG = "Fp8Config"
REDIRECT = "online-fp8-redirect"
BLOCK = (128, 128)

# The shorthand's weight strategy (its _ONLINE_SHORTHANDS weight key), linear method and MoE method.
STRATEGY = {PER_TENSOR: Strategy.TENSOR, PER_BLOCK: Strategy.BLOCK, PER_CHANNEL: Strategy.CHANNEL,
            PER_MX_GROUP: Strategy.GROUP}
LINEAR_METHOD = {"tensor": "Fp8PerTensorOnlineLinearMethod", "block": "Fp8PerBlockOnlineLinearMethod",
                 "channel": "Fp8PtpcOnlineLinearMethod", "group": mxfp8.ONLINE_LINEAR}
MOE_METHOD = {"tensor": "Fp8PerTensorOnlineMoEMethod", "block": "Fp8PerBlockOnlineMoEMethod",
              "channel": "Fp8PtpcOnlineMoEMethod", "group": "Mxfp8OnlineMoEMethod"}

FROM_CHECKPOINT = ("OnlineQuantizationConfig does not support loading from a checkpoint config. Use "
                   "quantization_config or quantization='fp8_per_tensor'/'fp8_per_block' instead.")
FP8_DEPRECATED = "--quantization fp8 is deprecated for online quantization; use --quantization fp8_per_tensor instead."
MARLIN = "MarlinFP8ScaledMMLinearKernel"
HUMMING = "HummingFP8ScaledMMLinearKernel"
PTPC_MARLIN = ("FP8 PTPC online quant requires a kernel that honors per-token activation quantization; MarlinFP8 is "
               "W8A16 weight-only. Requires SM89+ for Cutlass FP8 or ROCm MI3xx for rowwise scaled_mm.")
# 0.34 (profile PTPC_W8A16_REFUSED): Marlin and Humming refused, the message naming type(self.fp8_linear).__name__.
PTPC_W8A16_REFUSED = "ptpc-w8a16-refused"
PTPC_W8A16 = ("FP8 PTPC online quant requires a kernel that honors per-token activation quantization; {kernel} is "
              "W8A16 weight-only. Requires SM89+ for Cutlass FP8 or ROCm MI3xx for rowwise scaled_mm.")
# Fp8PtpcOnlineMoEMethod.__init__: backends whose quant config drops per-token / per-channel scales (CPU_W8A8 joined
# the list with the backend itself, 0.31).
PTPC_MOE_REFUSED = ("MARLIN", "CPU", "CPU_W8A8", "FLASHINFER_CUTLASS", "FLASHINFER_TRTLLM")


class OnlineFp8Config(NamedTuple):
    """`--quantization <value>` on an unquantized checkpoint, as the release builds it."""

    requested: str                         # the user's --quantization value (model_config.quantization)
    shorthand: str                         # the _ONLINE_SHORTHANDS entry it resolves to
    config_class: str = ONLINE_CONFIG      # Fp8Config for `fp8` before 0.31 (see for_release)
    method: str = NAME


def parse(raw: dict, where: str) -> OnlineFp8Config:
    """The front door's {"quant_method": value} for an online value; a checkpoint config naming `online` is
    refused as OnlineQuantizationConfig.from_config refuses it."""
    value = raw.get("quant_method")
    if value not in ONLINE_METHODS:
        raise ConfigError(f"{where}: {FROM_CHECKPOINT}")
    return OnlineFp8Config(requested=value, shorthand=PER_TENSOR if value == LEGACY_FP8 else value)


def for_release(config: OnlineFp8Config, profile: RuleProfile) -> OnlineFp8Config:
    """get_quant_config: `fp8` builds Fp8Config() (which quantizes Attention's KV cache too) until 0.31."""
    if config.requested == LEGACY_FP8 and not profile.has(REDIRECT):
        return config._replace(config_class=FP8_CONFIG)
    return config._replace(config_class=ONLINE_CONFIG)


def config_warnings(config: OnlineFp8Config, ctx: RoutingContext) -> list[str]:
    if config.requested == LEGACY_FP8 and ctx.profile.has(REDIRECT):
        return [FP8_DEPRECATED]
    return []


def _quantized(config: OnlineFp8Config) -> Assignment:
    strategy = STRATEGY[config.shorthand]
    return Assignment(NAME, strategy=strategy, block=BLOCK if strategy == Strategy.BLOCK else None, online=True)


def assign(module: Module, config: OnlineFp8Config) -> Assignment:
    """get_quant_method: every LinearBase (the shorthands' `ignore` and Fp8Config()'s ignored_layers are empty);
    ParallelLMHead is no LinearBase, and layers vLLM builds with quant_config=None (routers, towers) never ask."""
    if module.layer_type == "ParallelLMHead":
        return UNQUANTIZED_LM_HEAD
    if module.unquantized:
        return Assignment(None, reason=module.unquantized)
    return _quantized(config)


def describe(assignment: Assignment) -> tuple[str | None, str]:
    strategy = assignment.strategy
    if strategy == Strategy.GROUP:
        return mxfp8.describe(assignment)
    if assignment.block:
        return f"block {list(assignment.block)}", f"dynamic group {assignment.block[0]}"
    # Per-tensor activation granularity is vLLM's choice (per token where CUTLASS FP8 runs and, from 0.34, on XPU:
    # see kernel_request).
    return strategy, "dynamic token" if strategy == Strategy.CHANNEL else "dynamic"


def linear_scheme(assignment: Assignment, ctx: RoutingContext, linear_backend: str) -> tuple[str, None]:
    return LINEAR_METHOD[str(assignment.strategy)], None


def kernel_request(scheme: str, assignment: Assignment, ctx: RoutingContext, e8m0: bool
                   ) -> KernelRequest:
    """The keys each online linear method hands init_fp8_linear_kernel. The bf16 weight has no checkpoint
    scales, so e8m0 never applies; per-block weights are padded by per_block_cast_to_fp8 and never validated
    against the TP shard (validates_block_shape=False): only the block kernels' own N / K checks apply."""
    strategy = assignment.strategy
    if strategy == Strategy.GROUP:
        return mxfp8.kernel_request(scheme, assignment, ctx, e8m0)
    if strategy == Strategy.BLOCK:
        return KernelRequest(FP8_BLOCK, kFp8Static128BlockSym, kFp8Dynamic128Sym)
    if strategy == Strategy.CHANNEL:
        return KernelRequest(FP8, kFp8StaticChannelSym, kFp8DynamicTokenSym)
    # Fp8PerTensorOnlineLinearMethod.activation_quant_key: Fp8LinearMethod's rule (per token on XPU from 0.34).
    act = kFp8DynamicTokenSym if fp8.dynamic_per_token(ctx) else kFp8DynamicTensorSym
    return KernelRequest(FP8, kFp8StaticTensorSym, act)


def kernel_error(scheme: str, kernel: str, ctx: RoutingContext) -> str | None:
    """Fp8PtpcOnlineLinearMethod.create_weights refuses the weight-only Marlin kernel; from 0.34 the weight-only
    Humming kernel too, naming the class it got (XPU's weight-only XPUW8A16FP8LinearKernel is not checked in any
    release: PTPC silently runs W8A16 there)."""
    if scheme != LINEAR_METHOD["channel"]:
        return None
    if ctx.profile.has(PTPC_W8A16_REFUSED):
        return PTPC_W8A16.format(kernel=kernel) if kernel in (MARLIN, HUMMING) else None
    return PTPC_MARLIN if kernel == MARLIN else None


def shape_error(assignment: Assignment, layout: RankShape, ctx: RoutingContext) -> str | None:
    """Mxfp8OnlineLinearMethod.create_weights: the rank's input width must be whole 1 x 32 groups."""
    if assignment.strategy == Strategy.GROUP:
        return mxfp8.online_input_error(layout.input_size_per_partition)
    return None


def expected_tensors(assignment: Assignment) -> ExpectedTensors:
    """No FP8 weight and no scale: the weight is the checkpoint's bf16 / fp16 / f32 tensor; activations are
    dynamic, so a stray input_scale is reported as ignored."""
    return ExpectedTensors(None, static_input=False)


def moe_method(name: str, leaves: tuple[str, str, str], config: OnlineFp8Config, profile: RuleProfile) -> MoEMethod:
    """get_quant_method for RoutedExperts (Fp8Config() gives the same per-tensor method), then the method's
    constructor: the keys it hands select_fp8_moe_backend. Per-block rounds hidden and intermediate sizes up to
    128 (maybe_roundup_sizes) instead of checking the shard, so no block is handed to the create_weights check."""
    assignment = _quantized(config)
    strategy = assignment.strategy
    method = MOE_METHOD[str(strategy)]
    if strategy == Strategy.GROUP:  # select_mxfp8_moe_backend is not modelled: the experts are named, not judged
        return MoEMethod(method, assignment=assignment,
                         note="not an FP8 e4m3 scheme; fp8check routes FP8 experts only")
    if strategy == Strategy.BLOCK:
        return MoEMethod(method, kFp8Static128BlockSym, kFp8Dynamic128Sym, None, f"block {list(BLOCK)}",
                         f"dynamic group {BLOCK[0]}", assignment=assignment,
                         note="online per-block experts pad hidden / intermediate sizes to multiples of 128")
    if strategy == Strategy.CHANNEL:
        refusals = tuple((backend, f"FP8 PTPC online MoE quant is not supported with the {backend} backend, which "
                                   "does not implement per-output-channel weight scales.")
                         for backend in PTPC_MOE_REFUSED)
        return MoEMethod(method, kFp8StaticChannelSym, kFp8DynamicTokenSym, None, "channel", "dynamic token",
                         allow_vllm_cutlass=True, assignment=assignment, backend_errors=refusals)
    # VLLM_BATCH_INVARIANT (0.33) would make the activations per token; fp8check assumes it unset.
    return MoEMethod(method, kFp8StaticTensorSym, kFp8DynamicTensorSym, None, "tensor", "dynamic",
                     assignment=assignment)


def config_name(config: OnlineFp8Config) -> str:
    """get_name() of the config class the release builds: Fp8Config's "fp8", or OnlineQuantizationConfig's."""
    return LEGACY_FP8 if config.config_class == FP8_CONFIG else NAME


def kv_cache(config: OnlineFp8Config, raw: dict) -> KVConfig:
    """get_quant_method for attention: OnlineQuantizationConfig gives none; the Fp8Config `fp8` builds before 0.31
    (for_release) gives an Attention Fp8KVCacheMethod."""
    return KVConfig(FP8_KV_METHOD) if config.config_class == FP8_CONFIG else KVConfig()


FORMAT = Format(
    name=NAME, min_capability=75, parse=parse, assign=assign, describe=describe, linear_scheme=linear_scheme,
    fp8_schemes=frozenset(LINEAR_METHOD.values()), kernel_request=kernel_request, expected_tensors=expected_tensors,
    moe_method=moe_method, config_warnings=config_warnings, validates_block_shape=False, kernel_error=kernel_error,
    for_release=for_release, online_methods=ONLINE_METHODS, shape_error=shape_error, config_name=config_name,
    kv_cache=kv_cache,
)
