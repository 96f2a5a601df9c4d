"""The checkpoint-format protocol: what fp8check asks of one vLLM `quant_method`, and the records it answers with.

A format mirrors one vLLM QuantizationConfig class (quantization/compressed_tensors/compressed_tensors.py,
quantization/fp8.py): it parses `quantization_config` (from_config and its checks), names its global capability
gate (get_min_capability), decides each module's quantization (get_quant_method: ignore / target matching), the
linear method or scheme it builds, the keys that scheme hands vLLM's kernel selector, the tensors the scheme's
create_weights expects (for the integrity checks), and the FusedMoE method. Formats are registered in
fp8check.core.formats.registry.FORMATS; nothing else names a format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, NamedTuple, Protocol

from fp8check.core.formats.shared import QuantArgs

if TYPE_CHECKING:  # annotations only
    from fp8check.kernels.base import RoutingContext
    from fp8check.kernels.quant_keys import QuantKey

UNQUANTIZED = "UnquantizedLinearMethod"
UNQUANTIZED_MOE = "UnquantizedFusedMoEMethod"
# Stands for the module's name in messages computed once per module shape (inspect fills it in per module).
LAYER = "\x00layer\x00"


class QuantConfig(Protocol):
    """A parsed `quantization_config`: each format's typed config, or OutOfScopeConfig."""

    method: str                            # its quant_method


class Module(Protocol):
    """What a format reads of a module to assign it quantization (fp8check.core.model.modules.LinearModule)."""

    name: str
    layer_type: str                        # vLLM class: QKVParallelLinear, ParallelLMHead, ...
    shards: tuple                          # the Shards of a fused module (their .name is read)
    fused: bool
    unquantized: str | None                # why vLLM builds it without a quant method, if it does


class Assignment(NamedTuple):
    """The quantization vLLM gives one module: `method` None means UnquantizedLinearMethod.

    `strategy`, `block` and `static_input` say the same thing for every format (load's numerics read them);
    `weights` / `input_activations` / `output_activations` / `format` are compressed-tensors' own words."""

    method: str | None                     # the format's name (quant_method), None when unquantized
    weights: QuantArgs | None = None
    input_activations: QuantArgs | None = None
    output_activations: QuantArgs | None = None
    format: str | None = None
    strategy: str | None = None            # weight strategy: "tensor" | "channel" | "block" | ...
    block: tuple[int, int] | None = None   # block-quantized weights: the block
    static_input: bool = False             # activations quantized with a static (checkpoint) input_scale
    reason: str = ""                       # why unquantized (ignored, no target, lm_head)
    error: str | None = None               # vLLM raises while matching (mixed shards)


UNQUANTIZED_LM_HEAD = Assignment(None, reason="lm_head stays unquantized (ParallelLMHead is not a quantized linear)")


class WeightScale(NamedTuple):
    """The scale an FP8 weight needs: its tensor suffix and the strategy that fixes its shape."""

    suffix: str                            # "weight_scale" | "weight_scale_inv"
    strategy: str
    block: tuple[int, int] | None = None
    group_size: int | None = None
    stray: str | None = None               # a scale suffix this format's scheme has no parameter for
    stray_note: str = ""                   # what to tell when it is there
    partial_blocks: bool = False           # warn when the weight is not a whole number of blocks


class ExpectedTensors(NamedTuple):
    """What a quantized module's create_weights expects besides the weight."""

    weight_scale: WeightScale | None       # None: the weight is not FP8 (only the input scale is checked)
    static_input: bool                     # a per-tensor input_scale is needed (else one is ignored)


class MoEMethod(NamedTuple):
    """What the FusedMoE quant method's constructor decides: its class, the keys it hands the oracle, the block."""

    method: str
    weight_key: QuantKey | None = None
    activation_key: QuantKey | None = None
    block: tuple[int, int] | None = None
    strategy: str | None = None
    activation: str | None = None
    allow_vllm_cutlass: bool = False
    assignment: Assignment | None = None
    error: str | None = None
    note: str | None = None
    refines_block: bool = False            # vLLM 0.33 refines the block to the TP shard (refine_fp8_moe_block_shape)


def no_config_errors(config: QuantConfig) -> list[str]:
    return []


@dataclass(frozen=True)
class Format:
    """One vLLM quant_method. Register it in fp8check.core.formats.registry.FORMATS under `name`."""

    name: str                              # quantization_config.quant_method, lower case
    min_capability: int                    # the config class's get_min_capability(): a model-wide gate
    parse: Callable[[dict, str], QuantConfig]                 # (raw quantization_config, where) -> typed config
    assign: Callable[[Module, QuantConfig], Assignment]       # get_quant_method for one linear module
    describe: Callable[[Assignment], tuple[str | None, str | None]]  # (strategy, activation) as reports show them
    # (assignment, ctx, --linear-backend) -> (the linear method / scheme class vLLM builds, or the error it raises)
    linear_scheme: Callable[[Assignment, RoutingContext, str], tuple[str | None, str | None]]
    fp8_schemes: frozenset[str]            # the schemes fp8check routes to a kernel; the others are only named
    # (scheme, assignment, ctx, e8m0 scales) -> (quantization, weight key, activation key) for the kernel
    # selector, or the error the scheme's constructor raises
    kernel_request: Callable[[str, Assignment, RoutingContext, bool], tuple[str, QuantKey, QuantKey] | str]
    expected_tensors: Callable[[Assignment], ExpectedTensors | None]  # None: nothing to check
    # (FusedMoE name, its checkpoint's gate / up / down leaf names, config, the profile's moe_rules) -> method
    moe_method: Callable[[str, tuple[str, str, str], QuantConfig, str], MoEMethod]
    config_errors: Callable[[QuantConfig], list[str]] = no_config_errors  # model-wide refusals of the config
    scheme_min_capability: Mapping[str, int] = field(default_factory=dict)  # per-scheme get_min_capability()
    block_mismatch_escape: bool = False    # allow_fp8_block_shape_mismatch applies (configs with weight_block_size)
