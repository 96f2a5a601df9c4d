"""The checkpoint formats fp8check routes, by vLLM quant_method, and the dispatch every stage goes through.

A new format is one module beside compressed_tensors.py and fp8.py (a `Format`, see base.py) and one row in
FORMATS. quantization_config objects of any other quant_method parse to OutOfScopeConfig, which inspect refuses.
"""

from __future__ import annotations

from typing import NamedTuple

from fp8check.core.errors import ConfigError, shown
from fp8check.core.formats import compressed_tensors, fp8
from fp8check.core.formats.base import Assignment, Format, Module, QuantConfig

FORMATS: dict[str, Format] = {f.name: f for f in (compressed_tensors.FORMAT, fp8.FORMAT)}


class OutOfScopeConfig(NamedTuple):
    """A quantization method fp8check recognises but does not route."""

    method: str


def parse_quant_config(raw: object, where: str = "config.json: quantization_config") -> QuantConfig | None:
    """Parse a `quantization_config` object; None means the model is not quantized."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be an object, got {type(raw).__name__}")
    method = raw.get("quant_method")
    if not isinstance(method, str):
        raise ConfigError(f"{where}.quant_method must be a string, got {shown(method)}")
    method = method.lower()
    found = FORMATS.get(method)
    return found.parse(raw, where) if found else OutOfScopeConfig(method=method)


def assign(module: Module, quant: QuantConfig | None) -> Assignment:
    """The quantization vLLM gives one linear module under the model's config."""
    if quant is None:
        return Assignment(None, reason="the model has no quantization_config")
    return FORMATS[quant.method].assign(module, quant)


def describe(assignment: Assignment) -> tuple[str | None, str | None]:
    """(weight strategy, activation) of an assignment as reports show them; None, None when unquantized."""
    if assignment.method is None:
        return None, None
    return FORMATS[assignment.method].describe(assignment)
