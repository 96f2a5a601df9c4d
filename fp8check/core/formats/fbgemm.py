"""quant_method `fbgemm_fp8`: Meta's FBGEMM FP8 (Llama-3.1-405B-Instruct-FP8) and what vLLM's FBGEMMFp8Config
builds from it.

vLLM sources (the same keys and checks 0.25-0.33; 0.33 only swaps Parameter for replace_parameter):
quantization/fbgemm_fp8.py (from_config's two required keys, get_min_capability 80, get_quant_method with
is_layer_skipped, FBGEMMFp8LinearMethod.create_weights: weight_scale [N, 1] F32, no input_scale, input_scale_ub,
and its init_fp8_linear_kernel(kFp8DynamicTokenSym, kFp8StaticTokenSym) keys), quantization/utils/quant_utils.py
(is_layer_skipped), utils/marlin_utils_fp8.py (prepare_fp8_layer_for_marlin). The method is in
DEPRECATED_QUANTIZATION_METHODS in every release (frontdoor.py gates it).

use_marlin (`not current_platform.has_device_capability(89)`: CUDA below sm89, and every platform that reports no
capability, XPU and CPU) does not change the kernel choice: create_weights picks the kernel from the keys as
always. It changes the post-load: FBGEMM repacks the weight for Marlin (prepare_fp8_layer_for_marlin, which logs
the warning config_warnings reports) before the chosen kernel's own process_weights_after_loading runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from fp8check.core.errors import ConfigError, shown
from fp8check.core.formats.base import (
    UNQUANTIZED_LM_HEAD, UNQUANTIZED_MOE, Assignment, ExpectedTensors, Format, KernelRequest, Module, MoEMethod,
    WeightScale,
)
from fp8check.core.formats.shared import layer_skipped, pattern_list
from fp8check.core.vocabulary import Strategy
from fp8check.kernels.base import FP8, RoutingContext
from fp8check.kernels.quant_keys import kFp8DynamicTokenSym, kFp8StaticTokenSym

if TYPE_CHECKING:  # annotations only
    from fp8check.core.targets.profiles import RuleProfile

NAME = "fbgemm_fp8"
FBGEMM_METHOD = "FBGEMMFp8LinearMethod"
NATIVE_FP8_CAPABILITY = 89
MARLIN_WARNING = ("Your GPU does not have native support for FP8 computation but FP8 quantization is being used. "
                  "Weight-only FP8 compression will be used leveraging the Marlin kernel. This may degrade "
                  "performance for compute-heavy workloads.")


class FbgemmFp8Config(NamedTuple):
    ignore_list: tuple[str, ...]           # modules_to_not_convert
    input_scale_ub: float                  # activation_scale_ub
    method: str = NAME


def parse(raw: dict, where: str) -> FbgemmFp8Config:
    """FBGEMMFp8Config.from_config: both keys required (get_from_keys), modules_to_not_convert first."""
    for key in ("modules_to_not_convert", "activation_scale_ub"):
        if key not in raw:
            raise ConfigError(f"{where}: Cannot find any of [{key!r}] in the model's quantization config.")
    ignore_list = pattern_list(raw["modules_to_not_convert"] or [], f"{where}.modules_to_not_convert")
    bound = raw["activation_scale_ub"]
    # create_weights builds torch.tensor(input_scale_ub, dtype=float32): anything but a number fails there.
    if isinstance(bound, bool) or not isinstance(bound, (int, float)):
        raise ConfigError(f"{where}.activation_scale_ub must be a number, got {shown(bound)}")
    return FbgemmFp8Config(ignore_list=ignore_list, input_scale_ub=float(bound))


def assign(module: Module, config: FbgemmFp8Config) -> Assignment:
    """get_quant_method: LinearBase layers only (ParallelLMHead is not one), is_layer_skipped by exact name."""
    if module.layer_type == "ParallelLMHead":
        return UNQUANTIZED_LM_HEAD
    if module.unquantized:
        return Assignment(None, reason=module.unquantized)
    is_ignored, error = layer_skipped(module, config.ignore_list)
    if error:
        return Assignment(NAME, error=error)
    if is_ignored:
        return Assignment(None, reason="listed in modules_to_not_convert")
    return Assignment(NAME, strategy=Strategy.CHANNEL)


def describe(assignment: Assignment) -> tuple[str, str]:
    return "channel", "dynamic token"


def linear_scheme(assignment: Assignment, ctx: RoutingContext, linear_backend: str) -> tuple[str, None]:
    return FBGEMM_METHOD, None


def kernel_request(scheme: str, assignment: Assignment, ctx: RoutingContext, e8m0: bool
                   ) -> KernelRequest:
    """init_fp8_linear_kernel(activation kFp8DynamicTokenSym, weight kFp8StaticTokenSym): the weight key is
    static per-token (1, -1), not per-channel, on every platform."""
    return KernelRequest(FP8, kFp8StaticTokenSym, kFp8DynamicTokenSym)


def expected_tensors(assignment: Assignment) -> ExpectedTensors:
    """weight F8_E4M3 [N, K] and weight_scale F32 [N, 1] (ChannelQuantScaleParameter); no input_scale parameter."""
    return ExpectedTensors(WeightScale("weight_scale", Strategy.CHANNEL, stray="weight_scale_inv",
                                       stray_note="FBGEMM FP8 checkpoints store 'weight_scale'; this tensor has no "
                                                  "vLLM parameter"), static_input=False)


def moe_method(name: str, leaves: tuple[str, str, str], config: FbgemmFp8Config, profile: RuleProfile) -> MoEMethod:
    """get_quant_method returns None for a FusedMoE, so vLLM builds UnquantizedFusedMoEMethod."""
    reason = "FBGEMMFp8Config has no MoE method: vLLM builds the experts unquantized (bf16 parameters)"
    # The assignment makes the expert integrity check name every FP8 expert weight loaded into bf16 unscaled.
    return MoEMethod(UNQUANTIZED_MOE, assignment=Assignment(None, reason=reason), note=reason)


def uses_marlin(ctx: RoutingContext) -> bool:
    """FBGEMMFp8Config.use_marlin: not has_device_capability(89), which is False without a capability."""
    return ctx.cc is None or ctx.cc < NATIVE_FP8_CAPABILITY


def config_warnings(config: FbgemmFp8Config, ctx: RoutingContext) -> list[str]:
    """prepare_fp8_layer_for_marlin's warning_once, logged at post-load wherever use_marlin holds."""
    return [MARLIN_WARNING] if uses_marlin(ctx) else []


def kernel_error(scheme: str, kernel: str, ctx: RoutingContext) -> str | None:
    """What use_marlin does after loading, whatever kernel was chosen: FBGEMMFp8LinearMethod's
    process_weights_after_loading repacks the weight for Marlin (prepare_fp8_layer_for_marlin), then calls the
    chosen kernel's own post-load on the repacked int32 weight. Read from the 0.25-0.33 source, not run."""
    if not uses_marlin(ctx):
        return None
    first = ("FBGEMMFp8LinearMethod.process_weights_after_loading repacks the weight for Marlin (use_marlin: "
             f"{'no compute capability' if ctx.cc is None else f'sm{ctx.cc} is below sm89'})")
    if ctx.kind != "cuda":
        return (f"{first} with ops.gptq_marlin_repack, a CUDA kernel the {ctx.kind} build does not have: the "
                "model fails after loading (predicted from vLLM's source)")
    if kernel == "MarlinFP8ScaledMMLinearKernel":
        return (f"AssertionError after loading: {first}, then MarlinFP8ScaledMMLinearKernel repacks it again and "
                "prepare_fp8_layer_for_marlin's `assert layer.weight.shape == (part_size_k, part_size_n)` fails on "
                "the already packed weight (predicted from vLLM's source)")
    return (f"{first}, then {kernel}.process_weights_after_loading receives the Marlin-packed int32 weight instead "
            "of the FP8 one: the layer fails or computes garbage after loading (predicted from vLLM's source)")


FORMAT = Format(
    name=NAME, min_capability=80, parse=parse, assign=assign, describe=describe, linear_scheme=linear_scheme,
    fp8_schemes=frozenset({FBGEMM_METHOD}), kernel_request=kernel_request, expected_tensors=expected_tensors,
    moe_method=moe_method, config_warnings=config_warnings, kernel_error=kernel_error,
)
