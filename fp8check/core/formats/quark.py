"""quant_method `quark`: AMD Quark's JSON export config (QuarkConfig) and the FP8 schemes vLLM builds from it.

vLLM sources, read in every release 0.25.0 ... 0.33.0: quantization/quark/quark.py (from_config and its
kv_cache_group checks, get_quant_method / get_quant_method_target, _find_matched_config and
get_layer_quant_config_from_name, _is_fp8_w8a8, _get_scheme_from_config / _get_scheme_cls_from_config,
_check_scheme_supported, init_scheme), quark/utils.py (should_ignore_layer, deep_compare),
quark/schemes/quark_w8a8_fp8.py (QuarkW8A8Fp8, QuarkW8A8Fp8PerBlock: keys, parameters), quark/quark_moe.py
(get_moe_method / get_moe_method_target, QuarkW8A8Fp8MoEMethod). Only the FP8 e4m3 schemes are modelled; the
INT8 / INT4 / OCP-MX / NVFP4 ones are named, not routed.
"""

from __future__ import annotations

import copy
import fnmatch
from typing import TYPE_CHECKING, Callable, NamedTuple

from fp8check.core.errors import ConfigError, shown
from fp8check.core.formats.base import (
    UNQUANTIZED_LM_HEAD, UNQUANTIZED_MOE, Assignment, ExpectedTensors, Format, KernelRequest, Module, MoEMethod,
    WeightScale,
)
from fp8check.core.formats.kv_cache import QUARK_METHOD, KVConfig
from fp8check.core.formats.shared import ExpertsProbe, ignored, matches, pattern_list
from fp8check.core.vocabulary import Strategy
from fp8check.kernels.base import FP8, FP8_BLOCK, RoutingContext
from fp8check.kernels.quant_keys import (
    QuantKey, kFp8Dynamic128Sym, kFp8DynamicTensorSym, kFp8DynamicTokenSym, kFp8Static128BlockE8M0Sym,
    kFp8Static128BlockSym, kFp8StaticChannelSym, kFp8StaticTensorSym,
)

if TYPE_CHECKING:  # annotations only
    from fp8check.core.targets.profiles import RuleProfile

NAME = "quark"
W8A8_FP8 = "QuarkW8A8Fp8"
W8A8_FP8_PER_BLOCK = "QuarkW8A8Fp8PerBlock"
FP8_MOE = "QuarkW8A8Fp8MoEMethod"
NON_FP8_SCHEME = "(a non-FP8 Quark scheme: INT8 / INT4 / OCP-MX / NVFP4)"
MIN_CAPABILITY = 89  # QuarkW8A8Fp8.get_min_capability(); the per-block scheme returns the same
BLOCK = (128, 128)   # the only block _is_fp8_w8a8 accepts
OUTPUT_OR_BIAS = "Currently, Quark models with output_tensors and bias quantized are not supported"
UNSUPPORTED_MOE = "Unsupported FusedMoe scheme"
# vLLM's str(kFp8Static128BlockE8M0Sym) (quant_utils.QuantKey.__str__, FP8_DTYPE float8_e4m3fn).
E8M0_KEY_TEXT = "QuantKey(f8e4m3fn,scale(f8e8m0fnu,static,GroupShape(row=128, col=128)),symmetric)"


class QuarkTensor(NamedTuple):
    """One `weight` / `input_tensors` entry of a Quark layer config, the fields vLLM's matchers read."""

    text: str                      # str() of the config dict, as vLLM's messages print it
    dtype: object = None
    qscheme: object = None
    is_dynamic: object = None
    symmetric: object = None
    group_size: object = None
    block_size: tuple | None = None
    scale_type: object = None
    is_dict: bool = True           # False: a list (multi-entry config) or another non-dict value


def _tensor(raw: object) -> QuarkTensor | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        return QuarkTensor(str(raw), is_dict=False)
    block = raw.get("block_size")
    return QuarkTensor(str(raw), raw.get("dtype"), raw.get("qscheme"), raw.get("is_dynamic"), raw.get("symmetric"),
                       raw.get("group_size"), tuple(block) if isinstance(block, list) else block,
                       raw.get("scale_type"))


class QuarkConfig(NamedTuple):
    """vLLM's QuarkConfig: the export config as from_config leaves it, read under one release's rules."""

    global_config: dict
    layer_configs: dict            # layer_quant_config (output_tensors of the kv_cache layers cleared)
    exclude: tuple[str, ...]
    kv_cache_group: tuple[str, ...]
    kv_cache_config: dict | None
    per_block: bool = True         # QuarkW8A8Fp8PerBlock exists (0.28+)
    keys: bool = True              # _is_fp8_w8a8 returns the keys; init_scheme raises below capability 89 (0.30+)
    moe_children: bool = True      # an excluded RoutedExperts child excludes the parent (check_children, 0.26+)
    # Before 0.30's rewrite get_quant_method gives any excluded non-LinearBase layer UnquantizedLinearMethod (an
    # excluded lm_head too); from 0.30 none, and ParallelLMHead keeps UnquantizedEmbeddingMethod.
    excluded_head_linear: bool = False
    method: str = NAME


# --- parse -----------------------------------------------------------------------------------------------


def deep_compare(a: object, b: object) -> bool:
    """quark/utils.py deep_compare: equal with the same types all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(deep_compare(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return all(deep_compare(x, y) for x, y in zip(a, b))
    return a == b


def _object(value: object, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{where} must be an object, got {shown(value)}")
    return value


def parse(raw: dict, where: str) -> QuarkConfig:
    """QuarkConfig.from_config with its messages, then what _find_matched_config reads."""
    export = raw.get("export")
    if export is None:
        raise ConfigError(f"{where}: The export key should be included in the configurations of Quark quantized model")
    export = _object(export, f"{where}.export")
    group = export.get("kv_cache_group")
    if group is None:
        raise ConfigError(f"{where}.export: TypeError: object of type 'NoneType' has no len() (kv_cache_group is "
                          "missing; vLLM's from_config takes len() of it)")
    group = tuple(pattern_list(group, f"{where}.export.kv_cache_group"))
    layer_configs = copy.deepcopy(_object(raw.get("layer_quant_config"), f"{where}.layer_quant_config"))
    for key, value in layer_configs.items():
        _object(value, f"{where}.layer_quant_config.{key}")
    kv_cache_config = None
    if group:
        names = set(layer_configs)
        if not (set(group) <= names or any(fnmatch.fnmatchcase(n, p) for n in names for p in group)):
            raise ConfigError(f"{where}: The Quark quantized model has the kv_cache_group parameter setting, but no "
                              "kv_cache quantization settings were found in the quantization configuration.")
        kv_configs = [cfg for name, cfg in layer_configs.items() if any(fnmatch.fnmatchcase(name, p) for p in group)]
        if not all(deep_compare(c.get("output_tensors"), kv_configs[0].get("output_tensors")) for c in kv_configs):
            raise ConfigError(f"{where}: The quantization method used for kv_cache should be the same, but the "
                              "quantization method for the kv_cache layer in the config is different.")
        kv_cache_config = kv_configs[0].get("output_tensors")
        if kv_cache_config is None:
            raise ConfigError(f"{where}: The kv_cache quantization configuration is empty.")
        for cfg in kv_configs + ([layer_configs["*q_proj"]] if "*q_proj" in layer_configs else []):
            cfg["output_tensors"] = None
    return QuarkConfig(global_config=_object(raw.get("global_quant_config"), f"{where}.global_quant_config"),
                       layer_configs=layer_configs, exclude=pattern_list(raw.get("exclude") or [], f"{where}.exclude"),
                       kv_cache_group=group, kv_cache_config=kv_cache_config)


def for_release(config: QuarkConfig, profile: RuleProfile) -> QuarkConfig:
    return config._replace(per_block=profile.has("quark-per-block"), keys=profile.has("quark-fp8-keys"),
                           moe_children=profile.has("quark-moe-exclude"),
                           excluded_head_linear=not profile.has("quark-fp8-keys"))


# --- assign ----------------------------------------------------------------------------------------------


def _layer_config(name: str, config: QuarkConfig) -> dict | None:
    """get_layer_quant_config_from_name for one unfused name: fnmatch for keys with '*', else the key must
    contain the name (`layer_name in key`, a substring test). layer_type_quant_config never matches: vLLM looks it
    up by the module's class object, and the config's keys are strings."""
    for pattern, cfg in config.layer_configs.items():
        if (fnmatch.fnmatch(name, pattern) if "*" in pattern else name in pattern):
            return cfg
    return None


def find_matched_config(module: Module, config: QuarkConfig) -> tuple[dict, str | None]:
    """_find_matched_config: layer_quant_config, else global_quant_config; a fused layer's shards must agree."""
    if not module.fused:
        return _layer_config(module.name, config) or config.global_config, None
    shard_configs = [config.global_config if s.name == module.name
                     else _layer_config(s.name, config) or config.global_config for s in module.shards]
    if not all(deep_compare(c, shard_configs[0]) for c in shard_configs):
        shard_names = [s.name.rsplit(".", 1)[-1] for s in module.shards]
        return shard_configs[0], (f"Found a different quantization configuration for {shard_names} in "
                                  f"{module.name}. vLLM requires all to use the same scheme.")
    return shard_configs[0], None


def _excluded(module: Module, config: QuarkConfig) -> tuple[bool, str | None]:
    """should_ignore_layer: exact names or anchored 're:' patterns. From 0.30 (find_matching_patterns) a pattern
    naming the fused layer wins over its shards; before, only the shards were judged, with another message."""
    if config.keys:
        message = (f"Found different quantization schemes for the shards of {module.name}. vLLM requires all to "
                   "use the same scheme.")
    else:
        message = (f"Found a different quantization schemes for {[s.name.rsplit('.', 1)[-1] for s in module.shards]} "
                   f"in {module.name}. vLLM requires all to use the same scheme.")
    return ignored(module, config.exclude, message, matches, fused_name_wins=config.keys)


def _no_scheme(weight: object, inputs: object) -> str:
    return f"No quark compatible scheme was found. Weight config: {weight}, Input config: {inputs}"


def _fp8_keys(w: QuarkTensor | None, a: QuarkTensor | None, config: QuarkConfig) -> tuple[QuantKey, QuantKey] | None:
    """_is_fp8_w8a8: (weight key, activation key) when the pair is an FP8 W8A8 scheme of this release, else None.
    Before 0.30 it returned a bool and the schemes derived their own keys (kernel_request for linear layers, the
    qschemes in moe_method for experts): for those releases only whether this is None counts."""
    if w is None or a is None or not w.is_dict or not a.is_dict:
        return None
    if w.dtype != "fp8_e4m3" or a.dtype != "fp8_e4m3" or w.is_dynamic:
        return None
    if config.per_block and w.qscheme == "per_block" and list(w.block_size or []) == list(BLOCK) \
            and w.symmetric is True:
        if not a.is_dynamic or not (a.qscheme == "per_group" and a.group_size == BLOCK[1] and a.symmetric is True):
            return None
        return (kFp8Static128BlockE8M0Sym if config.keys and w.scale_type == "float8_e8m0fnu"
                else kFp8Static128BlockSym), kFp8Dynamic128Sym
    if w.qscheme not in ("per_tensor", "per_channel"):
        return None
    weight = kFp8StaticChannelSym if w.qscheme == "per_channel" else kFp8StaticTensorSym
    if a.is_dynamic:
        return weight, (kFp8DynamicTokenSym if a.qscheme == "per_channel" else kFp8DynamicTensorSym)
    return (weight, kFp8StaticTensorSym) if a.qscheme == "per_tensor" else None


def _is_fp8_family(w: QuarkTensor | None) -> bool:
    """An FP8 e4m3 weight that is not OCP-MX (per_group 32): the configs whose refusal fp8check reports."""
    return w is not None and w.is_dict and w.dtype == "fp8_e4m3" and not (w.qscheme == "per_group"
                                                                          and w.group_size == 32)


def _scheme_assignment(matched: dict, config: QuarkConfig) -> Assignment:
    """_get_scheme_from_config (0.25-0.29) / _get_scheme_cls_from_config (0.30+), capability aside."""
    if matched.get("output_tensors") or matched.get("bias"):
        return Assignment(NAME, error=OUTPUT_OR_BIAS)
    raw_w, raw_a = matched.get("weight"), matched.get("input_tensors")
    if config.keys:  # one-entry lists are unwrapped; longer ones are NVFP4 or refused
        if isinstance(raw_w, list) and len(raw_w) > 1 or isinstance(raw_a, list) and len(raw_a) > 1:
            return Assignment(NAME, scheme=NON_FP8_SCHEME)
        raw_w = raw_w[0] if isinstance(raw_w, list) else raw_w
        raw_a = raw_a[0] if isinstance(raw_a, list) else raw_a
        if isinstance(raw_w, dict) and raw_w.get("qscheme") == "per_block" and not raw_w.get("block_size"):
            return Assignment(NAME, error="Quark W8A8 FP8 per-block weight quantization requires `block_size` in "
                                          "the weight quantization config.")
    w, a = _tensor(raw_w), _tensor(raw_a)
    keys = _fp8_keys(w, a, config)
    if keys is None:
        if _is_fp8_family(w):
            return Assignment(NAME, error=_no_scheme(raw_w, raw_a))
        return Assignment(NAME, weights=w, input_activations=a, scheme=NON_FP8_SCHEME)
    assert w is not None and a is not None  # _fp8_keys answers for a pair of tensor configs only
    block = w.qscheme == "per_block"
    strategy = Strategy.BLOCK if block else Strategy.CHANNEL if w.qscheme == "per_channel" else Strategy.TENSOR
    return Assignment(NAME, weights=w, input_activations=a, scheme=W8A8_FP8_PER_BLOCK if block else W8A8_FP8,
                      strategy=strategy, block=BLOCK if block else None, static_input=not a.is_dynamic,
                      # 0.28 / 0.29 register the block scale as weight_scale_inv, 0.30+ as weight_scale
                      scale_suffix="weight_scale" if config.keys or not block else "weight_scale_inv")


def assign(module: Module, config: QuarkConfig) -> Assignment:
    """get_quant_method: ParallelLMHead is not a LinearBase (get_quant_method returns None for it), exclude,
    then the matched config's scheme."""
    if module.unquantized:
        return Assignment(None, reason=module.unquantized)
    if module.layer_type == "ParallelLMHead":
        if config.excluded_head_linear and _excluded(module, config)[0]:
            return Assignment(None, reason="listed in quantization_config.exclude", lm_head_linear_method=True)
        return UNQUANTIZED_LM_HEAD
    is_excluded, error = _excluded(module, config)
    if error:
        return Assignment(NAME, error=error)
    if is_excluded:
        return Assignment(None, reason="listed in quantization_config.exclude")
    matched, error = find_matched_config(module, config)
    if error:
        return Assignment(NAME, error=error)
    return _scheme_assignment(matched, config)


def describe(assignment: Assignment) -> tuple[str | None, str | None]:
    if assignment.strategy is None:
        return None, None
    a = assignment.input_activations
    strategy = f"block {list(assignment.block)}" if assignment.block else assignment.strategy
    if not a.is_dynamic:
        return strategy, "static tensor"
    kind = {"per_channel": "token", "per_group": f"group {a.group_size}"}.get(a.qscheme, "tensor")
    return strategy, f"dynamic {kind}"


# --- linear scheme and kernel keys -----------------------------------------------------------------------


def linear_scheme(assignment: Assignment, ctx: RoutingContext, linear_backend: str) -> tuple[str | None, str | None]:
    """Before 0.30 the FP8 branch checks capability 89 with error=False and, unsupported (cc < 89, or no
    capability at all: CPU, XPU), falls through to 'No quark compatible scheme'. From 0.30 init_scheme's
    _check_scheme_supported raises below 89 (linear.py's scheme gate, scheme_min_capability) and passes where no
    capability is reported."""
    scheme = assignment.scheme
    if scheme in (W8A8_FP8, W8A8_FP8_PER_BLOCK) and not ctx.profile.has("quark-fp8-keys") and \
            (ctx.cc is None or ctx.cc < MIN_CAPABILITY):
        return None, _no_scheme(_dict_text(assignment.weights), _dict_text(assignment.input_activations))
    return scheme, None


def _dict_text(tensor: QuarkTensor | None) -> str:
    return "None" if tensor is None else tensor.text


def kernel_request(scheme: str, assignment: Assignment, ctx: RoutingContext, e8m0: bool
                   ) -> KernelRequest:
    """The keys the scheme hands init_fp8_linear_kernel. Per-block: always kFp8Static128BlockSym (0.28/0.29
    hard-code it; 0.30+ replace the E8M0 key before the selector). Per-tensor / per-channel before 0.30: every
    activation but dynamic per-token gets kFp8StaticTensorSym, dynamic per-tensor included."""
    if scheme == W8A8_FP8_PER_BLOCK:
        return KernelRequest(FP8_BLOCK, kFp8Static128BlockSym, kFp8Dynamic128Sym)
    weight = kFp8StaticChannelSym if assignment.strategy == Strategy.CHANNEL else kFp8StaticTensorSym
    a = assignment.input_activations
    if not a.is_dynamic:
        act = kFp8StaticTensorSym
    elif a.qscheme == "per_channel":
        act = kFp8DynamicTokenSym
    else:
        act = kFp8DynamicTensorSym if ctx.profile.has("quark-fp8-keys") else kFp8StaticTensorSym
    return KernelRequest(FP8, weight, act)


# --- integrity -------------------------------------------------------------------------------------------


def expected_tensors(assignment: Assignment) -> ExpectedTensors | None:
    """create_weights: per-tensor a scalar per shard, per-channel 1-D [N] (ChannelQuantScaleParameter; [N, 1]
    loads too), per-block [ceil(N/128), ceil(K/128)] named weight_scale (0.30+) or weight_scale_inv (0.28/0.29)."""
    if assignment.strategy is None:
        return None
    if assignment.strategy == Strategy.BLOCK:
        suffix = assignment.scale_suffix or "weight_scale"  # set on every block assignment (_scheme_assignment)
        stray = "weight_scale_inv" if suffix == "weight_scale" else "weight_scale"
        scale = WeightScale(suffix, Strategy.BLOCK, assignment.block, stray=stray,
                            stray_note=f"this release's QuarkW8A8Fp8PerBlock registers {suffix}; this tensor has no "
                                       "vLLM parameter", partial_blocks=True)
    else:
        scale = WeightScale("weight_scale", assignment.strategy)
    return ExpectedTensors(scale, assignment.static_input)


# --- FusedMoE --------------------------------------------------------------------------------------------


def moe_method(name: str, leaves: tuple[str, str, str], config: QuarkConfig, profile: RuleProfile) -> MoEMethod:
    """get_quant_method for a RoutedExperts: exclude (a listed child ignores the parent, check_children), the
    matched config, then QuarkW8A8Fp8MoEMethod's constructor for this release."""
    probe = ExpertsProbe(name)
    children = config.moe_children and any(p.startswith(name + ".") for p in config.exclude
                                           if not p.startswith("re:"))
    if children or any(matches(name, p) for p in config.exclude):
        # 0.25 returns UnquantizedLinearMethod for an excluded RoutedExperts and has no check_children
        return MoEMethod(UNQUANTIZED_MOE if config.moe_children else "UnquantizedLinearMethod",
                         note="listed in quantization_config.exclude")
    matched, _ = find_matched_config(probe, config)
    if matched.get("output_tensors") or matched.get("bias"):
        return MoEMethod("?", error=OUTPUT_OR_BIAS)
    assignment = _scheme_assignment(matched, config)
    w, a = assignment.weights, assignment.input_activations
    keys = _fp8_keys(w, a, config)
    if keys is None:
        if _is_fp8_family(w) or assignment.error:
            return MoEMethod("?", error=UNSUPPORTED_MOE)
        return MoEMethod(NON_FP8_SCHEME, note="not an FP8 e4m3 scheme; fp8check routes FP8 experts only")
    strategy, activation = describe(assignment)
    base = MoEMethod(FP8_MOE, strategy_text=strategy, activation=activation, assignment=assignment)
    if config.keys:
        return _moe_from_keys(base, *keys)
    # 0.25-0.29: the qschemes of the config, per-tensor or per-channel only.
    if not ((w.qscheme, a.qscheme) in (("per_tensor", "per_tensor"), ("per_channel", "per_channel"))):
        return base._replace(error=f"For FP8 Fused MoE layers, only per-tensor and per-channel scales for weights "
                                   f"and activations are supported. Found {w.qscheme}, {a.qscheme}")
    if w.qscheme == "per_channel":
        return base._replace(weight_key=kFp8StaticChannelSym, activation_key=kFp8DynamicTokenSym)
    return base._replace(weight_key=kFp8StaticTensorSym,
                         activation_key=kFp8DynamicTensorSym if a.is_dynamic else kFp8StaticTensorSym)


def _moe_from_keys(base: MoEMethod, weight: QuantKey, act: QuantKey) -> MoEMethod:
    """0.30+: QuarkMoEMethod.__init__'s supported keys, then the qschemes read back from the keys."""
    if weight == kFp8Static128BlockE8M0Sym:
        return base._replace(error=f"Unsupported weight quant key: {E8M0_KEY_TEXT}")
    weight_qscheme = {kFp8StaticChannelSym: "per_channel", kFp8Static128BlockSym: "per_block"}.get(weight, "per_tensor")
    input_qscheme = {kFp8DynamicTokenSym: "per_channel", kFp8Dynamic128Sym: "per_group"}.get(act, "per_tensor")
    if (weight_qscheme, input_qscheme) not in (("per_tensor", "per_tensor"), ("per_channel", "per_channel"),
                                               ("per_block", "per_group")):
        return base._replace(error=f"For FP8 Fused MoE layers, only per-tensor, per-channel and per-block scales for "
                                   f"weights and activations are supported. Found {weight_qscheme}, {input_qscheme}")
    block = BLOCK if weight_qscheme == "per_block" else None
    return base._replace(weight_key=weight, activation_key=act, block=block)


def maps_lists(config: QuarkConfig, mapper: Callable[[str], str]) -> QuarkConfig:
    """QuarkConfig.apply_vllm_mapper (0.25-0.34): each top-level entry of the export config through the mapper, a
    list of strings by apply_list (exclude), a dict by apply_dict (layer_quant_config's keys); kv_cache_group,
    nested under export, is kept."""
    return config._replace(exclude=tuple(map(mapper, config.exclude)),
                           layer_configs={mapper(k): v for k, v in config.layer_configs.items()})


def kv_cache(config: QuarkConfig, raw: dict) -> KVConfig:
    """get_quant_method for attention: an Attention gets QuarkKVCacheMethod (an MLAAttention none), unless `exclude`
    names it; its kv_cache_group's output_tensors checked; the q/k/v_proj output scales renamed as
    get_cache_scale_mapper does."""
    return KVConfig(QUARK_METHOD, errors=kv_config_errors(config.kv_cache_config), quark_names=True,
                    exclude=tuple(config.exclude))


def kv_config_errors(kv_cache_config: dict | None) -> tuple[str, ...]:
    """QuarkKVCacheMethod.validate_kv_cache_config."""
    if kv_cache_config is None:
        return ()
    if kv_cache_config.get("dtype") != "fp8_e4m3":
        return (f"Currently supported kv cache quantization is dtype=fp8_e4m3, however received "
                f"{kv_cache_config.get('dtype')}",)
    if kv_cache_config.get("qscheme") != "per_tensor":
        return ("Only support per-tensor scaling factor for quark KV cache. Expected qscheme: per_tensor, found "
                f"qscheme: {kv_cache_config.get('qscheme')}",)
    return ()


FORMAT = Format(
    name=NAME, min_capability=70, parse=parse, assign=assign, describe=describe, linear_scheme=linear_scheme,
    fp8_schemes=frozenset({W8A8_FP8, W8A8_FP8_PER_BLOCK}), kernel_request=kernel_request,
    expected_tensors=expected_tensors, moe_method=moe_method, for_release=for_release,
    scheme_min_capability={W8A8_FP8: MIN_CAPABILITY, W8A8_FP8_PER_BLOCK: MIN_CAPABILITY},
    act_dtypes=("float16", "bfloat16"), maps_lists=maps_lists, kv_cache=kv_cache,
)
