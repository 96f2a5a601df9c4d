"""The checkpoint-format protocol: what fp8check asks of one vLLM `quant_method`, and the records it answers with.

A format mirrors one vLLM QuantizationConfig class (quantization/compressed_tensors/compressed_tensors.py,
quantization/fp8.py): it parses `quantization_config` (from_config and its checks), names its global capability
gate (get_min_capability), decides each module's quantization (get_quant_method: ignore / target matching), the
linear method or scheme it builds, the keys that scheme hands vLLM's kernel selector, the tensors the scheme's
create_weights expects (for the integrity checks), the FusedMoE method and the KV cache method attention gets
(Format.kv_cache). Formats are registered in
fp8check.core.formats.registry.FORMATS; nothing else names a format. What every format shares before any layer is
built (where the config comes from, override_quantization_method, the platform allow-lists, the deprecation and
capability gates) is fp8check.core.formats.frontdoor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Generic, Mapping, NamedTuple, Protocol, TypeVar


if TYPE_CHECKING:  # annotations only
    from fp8check.core.formats.kv_cache import KVConfig
    from fp8check.core.vocabulary import Strategy
    from fp8check.core.targets.profiles import RuleProfile
    from fp8check.kernels.base import RoutingContext
    from fp8check.kernels.quant_keys import QuantKey

UNQUANTIZED = "UnquantizedLinearMethod"
UNQUANTIZED_MOE = "UnquantizedFusedMoEMethod"
# Stands for the module's name in messages computed once per module shape (inspect fills it in per module).
LAYER = "\x00layer\x00"


class QuantConfig(Protocol):
    """A parsed `quantization_config`: each format's typed config, or OutOfScopeConfig."""

    @property
    def method(self) -> str: ...           # its quant_method


Config = TypeVar("Config", bound=QuantConfig)  # a Format's own typed config


class Module(Protocol):
    """What a format reads of a module to assign it quantization (fp8check.core.model.modules.LinearModule, or
    formats.shared.ExpertsProbe for a FusedMoE's experts)."""

    @property
    def name(self) -> str: ...
    @property
    def layer_type(self) -> str: ...       # vLLM class: QKVParallelLinear, ParallelLMHead, ...
    @property
    def shards(self) -> tuple: ...         # the Shards of a fused module (their .name is read)
    @property
    def fused(self) -> bool: ...
    @property
    def unquantized(self) -> str | None: ...  # why vLLM builds it without a quant method, if it does
    @property  # (its, its shards') names in vLLM's model, where they differ
    def vllm_names(self) -> tuple[str, tuple[str, ...]] | None: ...
    def _replace(self, *, name: str = ..., shards: tuple = ...) -> Module: ...  # renamed as vLLM names it


class RankShape(Protocol):
    """What a format's shape checks read of one module at one TP size (fp8check.core.model.tp.TPLayout)."""

    @property
    def tp(self) -> int: ...
    @property
    def input_size_per_partition(self) -> int: ...
    @property
    def output_partition_sizes(self) -> tuple[int, ...]: ...
    @property
    def parallel(self) -> str: ...         # "column" | "row" | "replicated"


class Assignment(NamedTuple):
    """The quantization vLLM gives one module: `method` None means UnquantizedLinearMethod.

    `strategy`, `block` and `static_input` say the same thing for every format (load's numerics read them);
    `weights` / `input_activations` / `output_activations` are the format's own quantization arguments
    (compressed-tensors' QuantArgs, Quark's tensor configs) and `format` compressed-tensors' compression format."""

    method: str | None                     # the format's name (quant_method), None when unquantized
    # the format's own argument records: read by that format only
    weights: Any = None
    input_activations: Any = None
    output_activations: Any = None
    format: str | None = None
    strategy: Strategy | None = None       # the weight's quantization granularity
    block: tuple[int, int] | None = None   # block-quantized weights: the block
    static_input: bool = False             # activations quantized with a static (checkpoint) input_scale
    online: bool = False                   # the checkpoint stores the weight unquantized; vLLM quantizes it at load
    # An excluded ParallelLMHead the format hands UnquantizedLinearMethod (ModelOpt) rather than no method (then
    # vLLM builds UnquantizedEmbeddingMethod).
    lm_head_linear_method: bool = False
    scheme: str | None = None              # the scheme class, where the format settles it while matching (Quark)
    scale_suffix: str | None = None        # the weight scale's tensor name where it depends on the release (Quark)
    reason: str = ""                       # why unquantized (ignored, no target, lm_head)
    error: str | None = None               # vLLM raises while matching (mixed shards)


UNQUANTIZED_LM_HEAD = Assignment(None, reason="lm_head stays unquantized (ParallelLMHead is not a quantized linear)")


class WeightScale(NamedTuple):
    """The scale an FP8 weight needs: its tensor suffix and the strategy that fixes its shape."""

    suffix: str                            # "weight_scale" | "weight_scale_inv"
    strategy: Strategy
    block: tuple[int, int] | None = None
    group_size: int | None = None
    stray: str | None = None               # a scale suffix this format's scheme has no parameter for
    stray_note: str = ""                   # what to tell when it is there
    partial_blocks: bool = False           # warn when the weight is not a whole number of blocks
    # The parameter's shape when it is not the strategy's usual one ([n, 1] channel, [ceil(n/bn), ceil(k/bk)]
    # block): (n, k) -> shape, e.g. ModelOpt FP8_PB_WO's 4-D [n/128, 1, k/128, 1].
    shape: Callable[[int, int], tuple[int, ...]] | None = None
    dtypes: tuple[str, ...] | None = None  # the safetensors dtypes the scale may have, when not F32/BF16/F16 (+E8M0)


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
    strategy_text: str | None = None       # as reports show it: "block [128, 128]", "int4 group 128"
    activation: str | None = None
    allow_vllm_cutlass: bool = False
    assignment: Assignment | None = None
    error: str | None = None
    note: str | None = None
    refines_block: bool = False            # vLLM 0.29+ refines the block to the TP shard (refine_fp8_moe_block_shape)
    # (backend, vLLM's error) pairs: the constructor raises when the oracle picks one of these backends (online
    # PTPC refuses the backends that drop per-channel weight scales). moe.place() applies them to the choice.
    backend_errors: tuple[tuple[str, str], ...] = ()
    # A method with its own experts oracle and create_weights checks (W4A8): (hidden, intermediate per rank, ctx,
    # model dtype) -> (vLLM's error or None, a note naming the experts class it picks). moe.place() runs it.
    own_checks: Callable[[int, int, RoutingContext, str], tuple[str | None, str | None]] | None = None
    packed: int = 1                        # checkpoint values per stored element along K (W4A8: two int4 per int8)


def nothing(config: object, ctx: RoutingContext) -> list[str]:
    return []


def same_config(config: Config, profile: RuleProfile) -> Config:
    return config


class KernelRequest(NamedTuple):
    """What a linear scheme hands vLLM's kernel selector (init_fp8_linear_kernel / init_mxfp8_linear_kernel): the
    quantization and the weight / activation keys."""

    quantization: str
    weight_key: QuantKey
    activation_key: QuantKey


class KernelRefusal(NamedTuple):
    """Instead of a KernelRequest: the error the scheme's constructor raises before it asks for a kernel."""

    error: str


@dataclass(frozen=True)
class Format(Generic[Config]):
    """One vLLM quant_method. Register it in fp8check.core.formats.registry.FORMATS under `name`. Its hooks take the
    typed config its own `parse` returns (`Config`)."""

    name: str                              # vLLM's get_name() of the config class (the settled quant method)
    min_capability: int                    # the config class's get_min_capability(): a model-wide gate
    parse: Callable[[dict, str], Config]                 # (raw quantization_config, where) -> typed config
    assign: Callable[[Module, Config], Assignment]       # get_quant_method for one linear module
    describe: Callable[[Assignment], tuple[str | None, str | None]]  # (strategy_text, activation) as reports show them
    # (assignment, ctx, --linear-backend) -> (the linear method / scheme class vLLM builds, or the error it raises)
    linear_scheme: Callable[[Assignment, RoutingContext, str], tuple[str | None, str | None]]
    fp8_schemes: frozenset[str]            # the schemes fp8check routes to a kernel; the others are only named
    # (scheme, assignment, ctx, e8m0 scales) -> what the scheme hands the kernel selector, or its constructor's error
    kernel_request: Callable[[str, Assignment, RoutingContext, bool], KernelRequest | KernelRefusal]
    expected_tensors: Callable[[Assignment], ExpectedTensors | None]  # None: nothing to check
    # (FusedMoE name, its checkpoint's gate / up / down leaf names, config, the rule profile) -> method
    moe_method: Callable[[str, tuple[str, str, str], Config, RuleProfile], MoEMethod]
    # (config, ctx) -> model-wide refusals of the config, vLLM's messages (raised before any layer is built)
    config_errors: Callable[[Config, RoutingContext], list[str]] = nothing
    config_warnings: Callable[[Config, RoutingContext], list[str]] = nothing  # what vLLM logs about it
    scheme_min_capability: Mapping[str, int] = field(default_factory=dict)  # per-scheme get_min_capability()
    block_mismatch_escape: bool = False    # allow_fp8_block_shape_mismatch applies (configs with weight_block_size)
    validates_block_shape: bool = True     # block weights go through validate_fp8_block_shape (TP shard rules)
    # The scheme's own shape checks in create_weights: (assignment, the rank's shape, ctx) -> vLLM's error or
    # None (e.g. ModelOpt FP8_PB_WO's divisibility messages). Runs after the block-shape check, for every
    # quantized layer.
    shape_error: Callable[[Assignment, RankShape, RoutingContext], str | None] | None = None
    # What the method does with the kernel init_fp8_linear_kernel chose, up to its process_weights_after_loading:
    # (scheme, chosen kernel's name, ctx) -> vLLM's error or None (online PTPC refuses MarlinFP8ScaledMMLinearKernel;
    # FBGEMM's use_marlin repack fails after loading). linear.route() applies it to the choice.
    kernel_error: Callable[[str, str, RoutingContext], str | None] | None = None
    # override_quantization_method(raw config, the user's --quantization or None) -> this format's name when it
    # claims the config (vLLM tries the overriding formats in frontdoor.OVERRIDE_ORDER); None: no override.
    override: Callable[[dict, str | None], str | None] | None = None
    # What a parse cannot know: the release. (config, profile) -> the config as that release reads it (e.g.
    # ModelOpt's `exclude_modules` fallback arrived in 0.33).
    for_release: Callable[[Config, RuleProfile], Config] = same_config
    # get_min_capability() where it changed across releases (profile -> capability); else min_capability.
    capability: Callable[[RuleProfile], int] | None = None
    act_dtypes: tuple[str, ...] = ("bfloat16", "float16")  # get_supported_act_dtypes()
    # get_quant_method for an attention layer: (config, the stored quantization_config) -> the KV cache method an
    # Attention / MLAAttention gets and that method's own checks (formats.kv_cache.KVConfig); None: none (FBGEMM, INC).
    kv_cache: Callable[[Config, dict], KVConfig] | None = None
    # The --quantization values this format answers on an unquantized checkpoint (it quantizes at load); the
    # format's parse gets {"quant_method": value}.
    online_methods: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()          # other settled method names vLLM maps to the same config class
    # get_name() of the config class the parsed config stands for, where one Format serves several classes
    # (online: Fp8Config for `fp8` until 0.31); else the format's name.
    config_name: Callable[[Config], str] | None = None
    # The config class's apply_vllm_mapper: (config, the model's hf_to_vllm_mapper as a name -> name function) -> the
    # config with its layer lists mapped. None: the class keeps QuantizationConfig's no-op, so vLLM matches its
    # lists as the checkpoint wrote them against its own (renamed) module names (registry.map_layer_lists).
    maps_lists: Callable[[Config, Callable[[str], str]], Config] | None = None
    # The profile change that added the method to vLLM (QuantizationMethods); before it, vLLM refuses the name as an
    # unknown method and builds nothing. None: in every release fp8check has a profile for.
    added_by: str | None = None

    def min_capability_at(self, profile: RuleProfile) -> int:
        return self.capability(profile) if self.capability else self.min_capability

    def known_at(self, profile: RuleProfile) -> bool:
        """Whether the release has this config class at all."""
        return self.added_by is None or profile.has(self.added_by)
