"""The checkpoint formats fp8check routes, by vLLM quant config name, and the dispatch every stage goes through.

A new format is one module beside compressed_tensors.py and fp8.py (a `Format`, see base.py) and one row in
FORMATS. What a checkpoint's config resolves to, and the gates vLLM runs before any layer is built, are the
front door's (frontdoor.py); this module applies them to FORMATS. quantization_config objects of any other
method parse to OutOfScopeConfig, which inspect refuses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from fp8check.core.errors import ConfigError
from fp8check.core.formats import (
    compressed_tensors, fbgemm, fp8, frontdoor, inc, modelopt, mxfp8, online, quark, w4afp8,
)
from fp8check.core.formats.base import Assignment, Format, Module, QuantConfig
from fp8check.core.formats.frontdoor import FrontDoor

if TYPE_CHECKING:  # annotations only
    from fp8check.kernels.base import RoutingContext

ALL_FORMATS: tuple[Format[Any], ...] = (compressed_tensors.FORMAT, fp8.FORMAT, modelopt.FORMAT, quark.FORMAT, inc.FORMAT,
                                   fbgemm.FORMAT, mxfp8.FORMAT, online.FORMAT, w4afp8.FORMAT)
# Each format under vLLM's name for it and its aliases (the settled method names vLLM maps to the same class).
FORMATS: dict[str, Format[Any]] = {name: f for f in ALL_FORMATS for name in (f.name, *f.aliases)}


class OutOfScopeConfig(NamedTuple):
    """A quantization method fp8check recognises but does not route."""

    method: str


def parse_quant_config(raw: object, where: str = "config.json: quantization_config") -> QuantConfig | None:
    """Parse a checkpoint's `quantization_config` (or hf_quant_config.json) as the config class vLLM picks for it
    when --quantization is not given; None means the model is not quantized."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be an object, got {type(raw).__name__}")
    cfg = frontdoor.normalize(raw, where)
    method = frontdoor.detect(cfg, None, FORMATS)
    found = FORMATS.get(method)
    return found.parse(cfg, where) if found else OutOfScopeConfig(method=method)


def front_door(raw: dict | None, parsed: QuantConfig | None, ctx: RoutingContext, quantization: str | None = None,
               allow_deprecated: bool = False, dtype: str = "bfloat16") -> FrontDoor:
    """The quant config vLLM builds under `--quantization` (None: not given) and the release and platform in
    `ctx`, with every model-wide error it raises before building a layer (_verify_quantization, then
    _get_quantization_config, then the config's own refusals). `raw` / `parsed`: the checkpoint's config."""
    if raw is None:
        if quantization is None:
            return FrontDoor(None)
        method = quantization
        claimed = next((f for f in ALL_FORMATS if quantization in f.online_methods), None)
        quant = claimed.parse({"quant_method": quantization}, "--quantization") if claimed else None
        if quant is None and quantization in frontdoor.quantization_methods(ctx):
            quant = OutOfScopeConfig(quantization)
    else:
        method = frontdoor.detect(frontdoor.normalize(raw, "quantization_config"), quantization, FORMATS)
        quant = parsed
        if quantization is not None and method != quantization:
            return FrontDoor(quant, (
                f"Quantization method specified in the model config ({method or None}) does not match the "
                f"quantization method specified in the `quantization` argument ({quantization}).",),
                config_name=getattr(quant, "method", None))
    errors = frontdoor.method_errors(method, ctx, allow_deprecated, FORMATS)
    if not (quant is None or isinstance(quant, OutOfScopeConfig) or FORMATS[quant.method].known_at(ctx.profile)):
        quant = OutOfScopeConfig(quant.method)  # a release without the config class builds no layer with it
    if quant is None or isinstance(quant, OutOfScopeConfig) or errors:
        return FrontDoor(quant, tuple(errors), config_name=getattr(quant, "method", None))
    quant_format = FORMATS[quant.method]
    quant = quant_format.for_release(quant, ctx.profile)
    name = quant_format.config_name(quant) if quant_format.config_name else quant.method
    errors = frontdoor.config_gate_errors(method, quant_format, ctx, dtype) + quant_format.config_errors(quant, ctx)
    warnings = quant_format.config_warnings(quant, ctx)
    if method in frontdoor.deprecated(ctx):
        warnings = [f"The quantization method {method} is deprecated and will be removed in future versions of "
                    "vLLM."] + warnings
    return FrontDoor(quant, tuple(errors), tuple(warnings), name)


def as_vllm_names(module: Module) -> Module:
    """The module under the names vLLM's model gives it and its shards (LinearModule.vllm_names): what a format's
    get_quant_method matches its lists (ignore, exclude, targets, its hard-coded patterns) against."""
    if module.vllm_names is None:
        return module
    name, shard_names = module.vllm_names
    return module._replace(name=name, shards=tuple(s._replace(name=n) for s, n in zip(module.shards, shard_names)))


def assign(module: Module, quant: QuantConfig | None) -> Assignment:
    """The quantization vLLM gives one linear module under the model's config: get_quant_method is asked with vLLM's
    own module name (as_vllm_names), against the config's lists as the model mapped them (map_layer_lists)."""
    if quant is None:
        return Assignment(None, reason="the model has no quantization_config")
    return FORMATS[quant.method].assign(as_vllm_names(module), quant)


def map_layer_lists(quant: QuantConfig | None, mapper: Callable[[str], str]) -> QuantConfig | None:
    """The config after the model's hf_to_vllm_mapper (`mapper`: its renames, layouts.map_vllm_name over
    Arch.hf_to_vllm): vLLM hands the renames to quant_config.apply_vllm_mapper (model_loader/utils.py
    configure_quant_config, models/interfaces.py SupportsQuant, 0.25-0.34), which maps the layer lists of the config
    classes that implement it (Format.maps_lists) and leaves the others' (QuantizationConfig's no-op: FBGEMM) as the
    checkpoint wrote them; either way get_quant_method then matches vLLM's module names."""
    if quant is None or isinstance(quant, OutOfScopeConfig):
        return quant
    maps_lists = FORMATS[quant.method].maps_lists
    return maps_lists(quant, mapper) if maps_lists else quant


def describe(assignment: Assignment) -> tuple[str | None, str | None]:
    """(weight strategy, activation) of an assignment as reports show them; None, None when unquantized."""
    if assignment.method is None:
        return None, None
    return FORMATS[assignment.method].describe(assignment)
