"""Header-level integrity: every FP8 weight has the scales its strategy needs, with the right shape and dtype.

A missing block scale loads silently in vLLM and only the outputs are wrong (vllm#57108), so each problem
is an error naming the tensor.
"""

from __future__ import annotations

import math

from fp8check.core.errors import printable
from fp8check.core.formats.matching import Assignment
from fp8check.core.model.modules import LinearModule, Shard
from fp8check.core.checkpoint.safetensors_header import FP8_DTYPES, TensorInfo

SCALE_DTYPES = ("F32", "BF16", "F16")
E8M0 = "F8_E8M0"


def check_module(module: LinearModule, assignment: Assignment) -> tuple[list[str], list[str]]:
    """(errors, warnings) for one module's tensors under the quantization vLLM will give it."""
    errors: list[str] = []
    warnings: list[str] = []
    for shard in module.shards:
        weight = shard.weight
        if assignment.method is None or assignment.error:
            if weight.dtype in FP8_DTYPES and not assignment.error:
                errors.append(f"{_t(weight)} is {weight.dtype} but vLLM treats this layer as unquantized "
                              f"({assignment.reason}): the raw FP8 values would be loaded unscaled")
            continue
        if assignment.method == "compressed-tensors":
            _check_ct(shard, assignment, errors, warnings)
        else:
            _check_native(shard, assignment, errors, warnings)
    return errors, warnings


def uses_e8m0_scales(module: LinearModule) -> bool:
    return any(info.dtype == E8M0 for shard in module.shards for info in shard.side.values())


def _check_ct(shard: Shard, a: Assignment, errors: list[str], warnings: list[str]) -> None:
    w, inp = a.weights, a.input_activations
    if w is None:
        return
    if w.is_float8:
        _fp8_weight(shard.weight, errors, warnings)
        n, k = shard.weight.shape
        block = w.block_structure
        _scale(shard, "weight_scale", w.strategy, block, w.group_size, errors)
        if "weight_scale_inv" in shard.side:
            warnings.append(f"{_t(shard.side['weight_scale_inv'])}: compressed-tensors checkpoints store "
                            "'weight_scale'; this tensor is not what vLLM's compressed-tensors schemes read")
        if w.strategy == "block" and (n % block[0] or k % block[1]):
            warnings.append(f"{_t(shard.weight)} {list(shard.weight.shape)} is not a multiple of block "
                            f"{list(block)}: the last block row/column is partial (padded scales)")
    static_input = inp is not None and not inp.dynamic
    _input_scale(shard, static_input, errors, warnings)


def _check_native(shard: Shard, a: Assignment, errors: list[str], warnings: list[str]) -> None:
    _fp8_weight(shard.weight, errors, warnings)
    if a.block:
        _scale(shard, "weight_scale_inv", "block", a.block, None, errors)
        if "weight_scale" in shard.side:
            warnings.append(f"{_t(shard.side['weight_scale'])}: block fp8 checkpoints use weight_scale_inv; "
                            "this tensor has no vLLM parameter")
    else:
        _scale(shard, "weight_scale", "tensor", None, None, errors)
    _input_scale(shard, a.static_input, errors, warnings)


def _fp8_weight(weight: TensorInfo, errors: list[str], warnings: list[str]) -> None:
    if weight.dtype not in FP8_DTYPES:
        errors.append(f"{_t(weight)} is {weight.dtype}, but the quantization config makes it an FP8 layer: vLLM "
                      "would cast it into a float8_e4m3fn parameter and read scales that do not belong to it")
    elif weight.dtype != "F8_E4M3":
        warnings.append(f"{_t(weight)} is {weight.dtype}: vLLM creates float8_e4m3fn parameters and casts on load "
                        "(values beyond ±448 saturate)")


def _scale(shard: Shard, suffix: str, strategy: str, block, group_size, errors: list[str]) -> None:
    scale = shard.side.get(suffix)
    n, k = shard.weight.shape
    want = _expected_shape(strategy, n, k, block, group_size)
    if scale is None:
        shape = "a single element" if want is None else str(list(want))
        errors.append(f"{shard.name}.{suffix} is missing: the {strategy} FP8 weight {_t(shard.weight)} needs a "
                      f"scale of shape {shape}; without it vLLM loads the layer silently and computes garbage")
        return
    allowed = SCALE_DTYPES + ((E8M0,) if strategy == "block" else ())
    if scale.dtype not in allowed:
        errors.append(f"{_t(scale)} has dtype {scale.dtype}; a {strategy} scale must be one of {', '.join(allowed)}")
    if want is None:
        if scale.numel != 1:
            errors.append(f"{_t(scale)} has shape {list(scale.shape)}, but a per-tensor scale holds one element")
    elif scale.shape != want and not (strategy == "channel" and scale.shape == (n,)):
        errors.append(f"{_t(scale)} has shape {list(scale.shape)}, but a {strategy} scale for weight "
                      f"{list(shard.weight.shape)} must be {list(want)}")


def _input_scale(shard: Shard, static_input: bool, errors: list[str], warnings: list[str]) -> None:
    scale = shard.side.get("input_scale")
    if static_input:
        if scale is None:
            errors.append(f"{shard.name}.input_scale is missing: static FP8 activations need a per-tensor input scale")
        elif scale.numel != 1:
            errors.append(f"{_t(scale)} has shape {list(scale.shape)}, but a static input scale holds one element")
    elif scale is not None:
        warnings.append(f"{_t(scale)} is present but activations are dynamic: vLLM ignores it")


def _expected_shape(strategy: str, n: int, k: int, block, group_size) -> tuple[int, ...] | None:
    if strategy == "tensor":
        return None
    if strategy == "channel":
        return (n, 1)
    if strategy == "block":
        return (math.ceil(n / block[0]), math.ceil(k / block[1]))
    if strategy == "group" and group_size:
        return (n, math.ceil(k / group_size))
    return None


def _t(info: TensorInfo) -> str:
    return f"{printable(info.name)} ({info.file})"
