"""Turning CLI strings into core option objects (each failure is an InputError: exit 2, one line)."""

from __future__ import annotations

import json

from fp8check.core.errors import InputError
from fp8check.core.platforms import Platform, apply_assumptions, detect_host, disabled_kernels_from_env, parse_platform
from fp8check.core.routing import Backend
from fp8check.kernels.registry import FP8, FP8_BLOCK, LINEAR_BACKENDS, W8A16_FP8, normalize_backend

QUANTIZATION_KEYS = (FP8, FP8_BLOCK, W8A16_FP8, "int8_w8a8", "mixed_precision", "mxfp8", "mxfp4", "mxfp6",
                     "nvfp4_w4a4", "nvfp4_w4a16")


def platform_option(text: str, assumptions: list[str]) -> Platform:
    platform = detect_host() if text.strip().lower() == "auto" else parse_platform(text)
    return apply_assumptions(platform, assumptions)


def _backend_name(value: object, where: str) -> str:
    if not isinstance(value, str) or normalize_backend(value) not in LINEAR_BACKENDS:
        raise InputError(f"{where}: unknown linear backend {value!r} (one of {', '.join(LINEAR_BACKENDS)})")
    return normalize_backend(value)


def backend_option(linear_backend: str, kernel_config: str | None) -> Backend:
    """--linear-backend plus vLLM's --kernel-config JSON ({"linear_backend_per_quant": {...}})."""
    default = _backend_name(linear_backend, "--linear-backend")
    per_quant: dict[str, str] = {}
    if kernel_config:
        try:
            doc = json.loads(kernel_config)
        except ValueError as exc:
            raise InputError(f"--kernel-config is not valid JSON: {exc}") from None
        if not isinstance(doc, dict) or set(doc) - {"linear_backend", "linear_backend_per_quant"}:
            raise InputError("--kernel-config takes a JSON object with linear_backend and/or linear_backend_per_quant")
        if "linear_backend" in doc:
            default = _backend_name(doc["linear_backend"], "--kernel-config linear_backend")
        mapping = doc.get("linear_backend_per_quant") or {}
        if not isinstance(mapping, dict):
            raise InputError("--kernel-config linear_backend_per_quant must be an object")
        for key, value in mapping.items():
            if key not in QUANTIZATION_KEYS:
                raise InputError(f"--kernel-config: unknown quantization key {key!r} (one of {', '.join(QUANTIZATION_KEYS)})")
            per_quant[key] = _backend_name(value, f"--kernel-config linear_backend_per_quant.{key}")
    return Backend(default=default, per_quant=tuple(sorted(per_quant.items())))


def disabled_option(names: list[str]) -> tuple[str, ...]:
    return tuple(names) + disabled_kernels_from_env()
