"""quant_method `modelopt`: NVIDIA ModelOpt FP8 (ModelOptFp8Config, quant_algo FP8 / FP8_PER_CHANNEL_PER_TOKEN /
FP8_PB_WO) and what vLLM 0.25-0.33 builds from it. MXFP8 (modelopt_mxfp8) is fp8check.core.formats.mxfp8's; the
NVFP4 and MIXED_PRECISION configs are out of scope (the override names them as vLLM does).

vLLM sources (quantization/modelopt.py of every release 0.25.0 ... 0.33.0):
- ModelOptQuantConfigBase.from_config (the legacy `quantization` branch, even inside config.json; its checks and
  messages), is_layer_excluded (is_layer_skipped with shard expansion, substring, fnmatch), get_quant_method (the
  vision-tower rule, ParallelLMHead quantized unless excluded), apply_vllm_mapper (`module_path*` rewrite),
  _extract_modelopt_quant_algo and every ModelOpt config's override_quantization_method;
- ModelOptFp8Config.__init__ (the algo check, the <= 0.29 "Detected ModelOpt fp8 checkpoint" log),
  get_min_capability (89 until 0.26, 80 from 0.27.1);
- <= 0.29: ModelOptFp8LinearMethod / ModelOptFp8PcPtLinearMethod / ModelOptFp8PbWoLinearMethod (their
  init_fp8_linear_kernel keys, parameters and FP8_PB_WO divisibility checks; 0.25-0.28 never run the block
  kernel's post-load: `hasattr(self, "fp8_linear")` while the kernel is `self.w8a8_block_fp8_linear`);
  >= 0.30 (vllm#49381): ModelOptLinearMethod with resolve()'s QuantSpec pairs and the KFp8StaticTensor /
  KFp8StaticChannel / KFp8Block128 key schemes;
- ModelOptFp8MoEMethod (static per-tensor keys for every algo) and fused_moe/routed_experts.py
  _load_per_tensor_weight_scale (`_to_scalar`: loaded_weight.reshape(())), quantization/utils/quant_utils.py
  is_layer_skipped, model_executor/parameter.py (the v2 loaders assert the scale's shape).
"""

from __future__ import annotations

from fnmatch import fnmatch
from typing import TYPE_CHECKING, Callable, NamedTuple

from fp8check.core.errors import ConfigError, shown
from fp8check.core.formats.base import (
    UNQUANTIZED_MOE, Assignment, ExpectedTensors, Format, KernelRequest, Module, MoEMethod, WeightScale,
)
from fp8check.core.formats.kv_cache import MODELOPT_METHOD, attention_method
from fp8check.core.formats.shared import layer_skipped
from fp8check.core.vocabulary import Strategy
from fp8check.kernels.base import FP8, FP8_BLOCK, RoutingContext
from fp8check.kernels.quant_keys import (
    kFp8Dynamic128Sym, kFp8DynamicTokenSym, kFp8Static128BlockSym, kFp8StaticTensorSym, kFp8StaticTokenSym,
)

if TYPE_CHECKING:  # annotations only
    from fp8check.core.formats.base import RankShape
    from fp8check.core.targets.profiles import RuleProfile

NAME = "modelopt"
PER_TENSOR, PER_CHANNEL_PER_TOKEN, PER_BLOCK = "FP8", "FP8_PER_CHANNEL_PER_TOKEN", "FP8_PB_WO"
FP8_ALGOS = (PER_TENSOR, PER_CHANNEL_PER_TOKEN, PER_BLOCK)
# vLLM's QUANT_ALGOS: a literal list in 0.25-0.29, [*LINEAR_ALGOS, "MIXED_PRECISION"] from 0.30 (the same names in
# the same order); printed as a list in its refusal.
QUANT_ALGOS = [*FP8_ALGOS, "NVFP4", "W4A16_NVFP4", "MXFP8", "MIXED_PRECISION"]
BLOCK = (128, 128)  # ModelOptFp8PbWoLinearMethod._WEIGHT_BLOCK_SIZE / KFp8Block128
GENERIC_METHOD = "ModelOptLinearMethod"
METHOD_UNTIL_029 = {PER_TENSOR: "ModelOptFp8LinearMethod", PER_CHANNEL_PER_TOKEN: "ModelOptFp8PcPtLinearMethod",
                    PER_BLOCK: "ModelOptFp8PbWoLinearMethod"}
MOE_METHOD = "ModelOptFp8MoEMethod"
ALGO_OF_STRATEGY = {"tensor": PER_TENSOR, "channel": PER_CHANNEL_PER_TOKEN, "block": PER_BLOCK}
VISION_MARKERS = ("vision_tower", "vision_model", "vit_large_projector")
EXCLUDED = "listed in the ModelOpt exclusion list (exact, substring or wildcard match)"
VISION = ("ModelOpt keeps vision towers unquantized (the hard-coded vision_tower / vision_model / vit_large_projector "
          "rule)")


class ModelOptConfig(NamedTuple):
    """A ModelOpt config class (ModelOptFp8Config, ModelOptMxFp8Config) as ModelOptQuantConfigBase.from_config
    reads it; `method` is the class's get_name()."""

    quant_algo: str                        # upper-cased
    kv_cache_quant_algo: str | None        # parsed and checked; the KV cache is not this module's
    group_size: int | None
    exclude_modules: tuple[str, ...]       # what is_layer_excluded matches, after apply_vllm_mapper's rewrite
    # config.json branch without an `ignore` key: its `exclude_modules`, which only 0.33 reads (for_release), or
    # the error 0.33 raises for it
    exclude_fallback: tuple[str, ...] | None = None
    exclude_fallback_error: str | None = None
    method: str = NAME


def _type_text(value: object) -> str:
    """How vLLM's f-strings print type(value)."""
    return f"<class '{type(value).__name__}'>"


def _exclusions(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: exclude_modules must be a list, got {_type_text(value)}")
    if not all(isinstance(v, str) for v in value):  # vLLM would raise a TypeError matching the first layer
        raise ConfigError(f"{where}: exclude_modules must be a list of strings, got {shown(value)}")
    return _vllm_mapper_rewrite(value)


def _vllm_mapper_rewrite(patterns: list[str]) -> tuple[str, ...]:
    """apply_vllm_mapper: `module_path*` (a `*` not after a `.`) becomes `module_path` and `module_path.*`
    (vllm#28072). Every model class fp8check lays out has an hf_to_vllm_mapper, so vLLM always runs it; its renames
    are maps_lists'."""
    rewritten: list[str] = []
    for pattern in patterns:
        if len(pattern) >= 2 and pattern[-1] == "*" and pattern[-2] != ".":
            rewritten += [pattern[:-1], pattern[:-1] + ".*"]
        else:
            rewritten.append(pattern)
    return tuple(rewritten)


def parse(raw: dict, where: str) -> ModelOptConfig:
    """ModelOptQuantConfigBase.from_config and ModelOptFp8Config.__init__ (same checks, same order, same words)."""
    config = parse_base(raw, where)
    if config.quant_algo not in FP8_ALGOS:
        raise ConfigError(f"{where}: Unsupported ModelOpt FP8 quant_algo for vLLM: {config.quant_algo}. Supported: "
                          f"{' / '.join(FP8_ALGOS)}.")
    return config


def parse_base(raw: dict, where: str) -> ModelOptConfig:
    """ModelOptQuantConfigBase.from_config, which every ModelOpt config class shares (ModelOptMxFp8Config too)."""
    fallback = fallback_error = None
    if "quantization" in raw:
        nested = raw["quantization"]
        if not isinstance(nested, dict):
            raise ConfigError(f"{where}: Expected 'quantization' to be a dictionary in config")
        algo = nested.get("quant_algo")
        kv_cache = nested.get("kv_cache_quant_algo")
        group_size = nested.get("group_size")
        exclude = nested.get("exclude_modules", [])
    else:
        algo = raw.get("quant_algo")
        scheme = raw.get("kv_cache_scheme")
        kv_cache = "FP8" if isinstance(scheme, dict) and scheme.get("type") == "float" and scheme.get(
            "num_bits") == 8 else None
        exclude = raw.get("ignore", [])
        group_size = raw.get("group_size")
        if "ignore" not in raw and "exclude_modules" in raw:
            try:
                fallback = _exclusions(raw["exclude_modules"], where)
            except ConfigError as exc:
                fallback_error = str(exc)
    if not algo:
        raise ConfigError(f"{where}: Missing 'quant_algo' in quantization config")
    algo = str(algo).upper()
    if kv_cache is not None:
        if not isinstance(kv_cache, str):
            raise ConfigError(f"{where}: kv_cache_quant_algo must be a string, got {_type_text(kv_cache)}")
        kv_cache = kv_cache.upper()
    exclude_modules = _exclusions(exclude, where)
    if group_size is not None and not isinstance(group_size, int):
        try:
            group_size = int(group_size)
        except (ValueError, TypeError):
            raise ConfigError(f"{where}: group_size must be an integer, got {_type_text(group_size)}") from None
    if algo not in QUANT_ALGOS:
        raise ConfigError(f"{where}: ModelOpt currently only supports: {QUANT_ALGOS} quantizations in vLLM. Please "
                          "check the `hf_quant_config.json` file for your model's quant configuration.")
    return ModelOptConfig(algo, kv_cache, group_size, exclude_modules, fallback, fallback_error)


def override(raw: dict, user_quantization: str | None) -> str | None:
    """ModelOptFp8Config.override_quantization_method ("modelopt" for algo FP8 only: FP8_PER_CHANNEL_PER_TOKEN and
    FP8_PB_WO keep their quant_method), standing in too for the configs fp8check does not register that follow it
    in the override order: ModelOptNvFp4Config ("modelopt_fp4") and ModelOptMixedPrecisionConfig
    ("modelopt_mixed"). An MXFP8 algo is left to ModelOptMxFp8Config (fp8check.core.formats.mxfp8)."""
    algo = modelopt_quant_algo(raw)
    if algo is None:
        return None
    if algo == PER_TENSOR:
        return NAME
    if "NVFP4" in algo or "FP4" in algo:
        return "modelopt_fp4"
    if algo == "MIXED_PRECISION":
        return "modelopt_mixed"
    return None


def modelopt_quant_algo(raw: dict) -> str | None:
    """_extract_modelopt_quant_algo: the upper-cased quant_algo of a modelopt* config, else None."""
    method = raw.get("quant_method", "")
    if not isinstance(method, str) or not method.lower().startswith("modelopt"):
        return None
    if "quantization" in raw:
        nested = raw["quantization"]
        return str(nested.get("quant_algo", "")).upper() if isinstance(nested, dict) else None
    return str(raw.get("quant_algo", "")).upper()


def for_release(config: ModelOptConfig, profile: RuleProfile) -> ModelOptConfig:
    """0.33 reads config.json's `exclude_modules` when `ignore` is absent; earlier releases read `ignore` only."""
    if profile.has("modelopt-exclude-modules") and config.exclude_fallback is not None:
        return config._replace(exclude_modules=config.exclude_fallback)
    return config


def config_errors(config: ModelOptConfig, ctx: RoutingContext) -> list[str]:
    if ctx.profile.has("modelopt-exclude-modules") and config.exclude_fallback_error:
        return [config.exclude_fallback_error]
    return []


def config_warnings(config: ModelOptConfig, ctx: RoutingContext) -> list[str]:
    warnings = []
    if not ctx.profile.has(49381):  # ModelOptFp8Config.__init__ logs it until the 0.30 redesign
        warnings.append(f"Detected ModelOpt fp8 checkpoint (quant_algo={config.quant_algo}). Please note that the "
                        "format is experimental and could change.")
    if config.quant_algo == PER_BLOCK and not ctx.profile.has("pbwo-padding"):
        warnings.append("ModelOptFp8PbWoLinearMethod.process_weights_after_loading never runs the block kernel's "
                        "post-load (it tests hasattr(self, 'fp8_linear'); the kernel is self.w8a8_block_fp8_linear): "
                        "kernels that prepare weights or scales there (XPU's scale transpose, DeepGEMM, CUTLASS) get "
                        "them unprepared, so their outputs are likely wrong (fixed in vLLM 0.29)")
    return warnings


def capability(profile: RuleProfile) -> int:
    return 80 if profile.has("modelopt-min-80") else 89


# ------------------------------------------------------------------------------------------------ layers

def excluded(name: str, patterns: tuple[str, ...]) -> bool:
    """is_layer_excluded after is_layer_skipped: a substring of the name (or of it without `language_model.`), or
    an fnmatch wildcard."""
    for pattern in patterns:
        if pattern != name and (pattern in name or (name.startswith("language_model.")
                                                    and pattern in name.removeprefix("language_model."))):
            return True
    return any(fnmatch(name, pattern) for pattern in patterns)


def assign(module: Module, config: ModelOptConfig) -> Assignment:
    """get_quant_method for a LinearBase or ParallelLMHead: excluded -> UnquantizedLinearMethod, then the vision
    rule, else quantized (ParallelLMHead included)."""
    return unquantized(module, config, NAME) or quantized(config)


def unquantized(module: Module, config: ModelOptConfig, name: str) -> Assignment | None:
    """What every ModelOpt config class's get_quant_method does before quantizing a layer (is_layer_excluded, then
    the hard-coded vision rule): the unquantized or refused Assignment, or None when the layer is quantized."""
    if module.unquantized:
        return Assignment(None, reason=module.unquantized)
    patterns = config.exclude_modules
    if patterns:
        skipped, error = layer_skipped(module, patterns)
        if error:
            return Assignment(name, error=error)
        if skipped or excluded(module.name, patterns):  # UnquantizedLinearMethod, for a ParallelLMHead too
            return Assignment(None, reason=EXCLUDED, lm_head_linear_method=True)
    if any(marker in module.name for marker in VISION_MARKERS):
        return Assignment(None, reason=VISION)
    return None


def quantized(config: ModelOptConfig) -> Assignment:
    if config.quant_algo == PER_BLOCK:
        return Assignment(NAME, strategy=Strategy.BLOCK, block=BLOCK)
    if config.quant_algo == PER_CHANNEL_PER_TOKEN:
        return Assignment(NAME, strategy=Strategy.CHANNEL)
    return Assignment(NAME, strategy=Strategy.TENSOR, static_input=True)


def describe(assignment: Assignment) -> tuple[str, str]:
    if assignment.block:
        return f"block {list(assignment.block)}", f"dynamic group {assignment.block[1]}"
    if assignment.strategy == Strategy.CHANNEL:
        return "channel", "dynamic token"
    return "tensor", "static tensor"


def linear_scheme(assignment: Assignment, ctx: RoutingContext, linear_backend: str) -> tuple[str, None]:
    if ctx.profile.has(49381):
        return GENERIC_METHOD, None
    return METHOD_UNTIL_029[ALGO_OF_STRATEGY[str(assignment.strategy)]], None


def kernel_request(scheme: str, assignment: Assignment, ctx: RoutingContext, e8m0: bool
                   ) -> KernelRequest:
    """The init_fp8_linear_kernel keys (quantization, weight, activation) of each algo, the same in every release:
    FP8 static tensor / static tensor; FP8_PER_CHANNEL_PER_TOKEN static *token* (GroupShape(1, -1), not the
    channel key) / dynamic token; FP8_PB_WO static 128 x 128 blocks / dynamic 1 x 128 groups (W8A8: the block
    table)."""
    if assignment.strategy == Strategy.BLOCK:
        return KernelRequest(FP8_BLOCK, kFp8Static128BlockSym, kFp8Dynamic128Sym)
    if assignment.strategy == Strategy.CHANNEL:
        return KernelRequest(FP8, kFp8StaticTokenSym, kFp8DynamicTokenSym)
    return KernelRequest(FP8, kFp8StaticTensorSym, kFp8StaticTensorSym)


def shape_error(assignment: Assignment, layout: RankShape, ctx: RoutingContext) -> str | None:
    """FP8_PB_WO's create_weights checks on the rank's sizes (ModelOpt never calls validate_fp8_block_shape):
    0.25-0.28 refuse an output width (the sum of the shards) or input width not divisible by 128; 0.29 pads the
    output and checks the input only; 0.30+ (KFp8Block128) likewise, in new words."""
    if assignment.block is None:
        return None
    block_n, block_k = assignment.block
    n, k = sum(layout.output_partition_sizes), layout.input_size_per_partition
    if ctx.profile.has(49381):
        return f"FP8_PB_WO requires in divisible by {block_k}, got {k}" if k % block_k else None
    if not ctx.profile.has("pbwo-padding") and n % block_n:
        return f"ModelOpt FP8_PB_WO requires out_features divisible by {block_n}, got {n}."
    if k % block_k:
        return f"ModelOpt FP8_PB_WO requires in_features divisible by {block_k}, got {k}."
    return None


def _pbwo_scale_shape(n: int, k: int) -> tuple[int, int, int, int]:
    """[ceil(N/128), 1, K/128, 1]; a K that is not a multiple of 128 is refused first (shape_error)."""
    return (-(-n // BLOCK[0]), 1, -(-k // BLOCK[1]), 1)


def expected_tensors(assignment: Assignment) -> ExpectedTensors:
    """FP8: a scalar weight_scale per shard (PerTensorScaleParameter) and an input_scale. FP8_PER_CHANNEL_PER_TOKEN:
    a 1-D [N] weight_scale (ChannelQuantScaleParameter) and no input_scale; an [N, 1] scale does not load (the v2
    loaders assert the narrowed shapes are equal). FP8_PB_WO: the 4-D [ceil(N/128), 1, K/128, 1] weight_scale
    (BlockQuantScaleParameter), no input_scale."""
    if assignment.strategy == Strategy.BLOCK:
        scale = WeightScale("weight_scale", Strategy.BLOCK, assignment.block, stray="weight_scale_inv",
                            stray_note="ModelOpt FP8_PB_WO has no weight_scale_inv parameter: this tensor will not "
                            "load (vLLM expects a 4-D weight_scale; vllm#54126)", shape=_pbwo_scale_shape,
                            dtypes=("F32",))
    elif assignment.strategy == Strategy.CHANNEL:
        scale = WeightScale("weight_scale", Strategy.CHANNEL, shape=lambda n, k: (n,), dtypes=("F32",))
    else:
        scale = WeightScale("weight_scale", Strategy.TENSOR)
    return ExpectedTensors(scale, assignment.static_input)


def moe_unquantized(name: str, config: ModelOptConfig) -> MoEMethod | None:
    """Every ModelOpt config class's FusedMoE exclusion (is_layer_skipped's `experts` rule, substring, wildcard,
    the vision rule): the unquantized method, or None when the experts are quantized."""
    patterns = config.exclude_modules
    experts_rule = "experts" in name and any(name in p for p in patterns if "experts" in p)  # is_layer_skipped
    if patterns and (experts_rule or excluded(name, patterns)):
        return MoEMethod(UNQUANTIZED_MOE, note=EXCLUDED)
    if any(marker in name for marker in VISION_MARKERS):
        return MoEMethod(UNQUANTIZED_MOE, note=VISION)
    return None


def moe_method(name: str, leaves: tuple[str, str, str], config: ModelOptConfig, profile: RuleProfile) -> MoEMethod:
    """get_quant_method for a FusedMoE: excluded (is_layer_skipped's `experts` rule, substring, wildcard) -> no
    method; else ModelOptFp8MoEMethod whatever the algo, handing the oracle static per-tensor keys and registering
    per-tensor w13/w2 weight and input scales."""
    skipped = moe_unquantized(name, config)
    if skipped:
        return skipped
    note = None
    if config.quant_algo != PER_TENSOR:
        shape = "[N]" if config.quant_algo == PER_CHANNEL_PER_TOKEN else "4-D block"
        note = (f"ModelOptFp8MoEMethod serves {config.quant_algo} experts with per-tensor scale parameters: vLLM "
                f"loads each expert's weight_scale with _to_scalar (reshape(())), so a {shape} expert scale fails to "
                "load with \"RuntimeError: shape '[]' is invalid for input of size <its element count>\"")
    assignment = Assignment(NAME, strategy=Strategy.TENSOR, static_input=True)
    return MoEMethod(MOE_METHOD, kFp8StaticTensorSym, kFp8StaticTensorSym, None, "tensor", "static tensor",
                     assignment=assignment, note=note)


def maps_lists(config: ModelOptConfig, mapper: Callable[[str], str]) -> ModelOptConfig:
    """ModelOptQuantConfigBase.apply_vllm_mapper (0.25-0.34; ModelOptMxFp8Config inherits it): exclude_modules, after
    the `module_path*` rewrite (parse's _vllm_mapper_rewrite), through the mapper. The hard-coded vision markers
    are not a list: get_quant_method matches them against vLLM's module name as they are. Runs after for_release
    (the model is built after the config), so 0.33's exclude_modules fallback is already in exclude_modules."""
    return config._replace(exclude_modules=tuple(map(mapper, config.exclude_modules)))


FORMAT = Format(
    name=NAME, min_capability=89, parse=parse, assign=assign, describe=describe, linear_scheme=linear_scheme,
    fp8_schemes=frozenset({GENERIC_METHOD, *METHOD_UNTIL_029.values()}), kernel_request=kernel_request,
    expected_tensors=expected_tensors, moe_method=moe_method, config_errors=config_errors,
    config_warnings=config_warnings, validates_block_shape=False, shape_error=shape_error, override=override,
    for_release=for_release, capability=capability, maps_lists=maps_lists,
    kv_cache=attention_method(MODELOPT_METHOD, MODELOPT_METHOD),
)
